/* fuzz_config.c - libFuzzer target for the config loader: config/yaml.c (YAML text) and
 * config/args.c (the command line), with the value parsers of config/types.c and table.c.
 *
 * Input layout: byte 0 even = the rest is a YAML document; odd = the rest is a command line,
 * one argument per '\n'-separated line (argv[0] is added). Command lines that would read a
 * file (a positional FILE, --config) are skipped: the target reads no files.
 *
 * Invariants checked:
 *  - all or nothing: a failed load leaves every value as it was and writes a one-line,
 *    NUL-terminated message;
 *  - a loaded config is sound: 1..16 tiers with names, no NULL string;
 *  - what CONFIG GET shows parses back: every key's value, given back as --KEY VALUE on a
 *    command line, is accepted and shows the same (CONFIG REWRITE relies on this).
 * ASan, UBSan and libFuzzer's leak check catch memory errors and leaks. */
#include "config/config.h"

#include "common/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) __builtin_trap();                                                             \
    } while (0)

#define MAX_ARGS 64

/* Every key and value as CONFIG GET * shows them, as "name\0value\0" pairs. */
static void emit(void *ud, const char *name, const char *value)
{
    buf_t *b = ud;
    buf_append(b, name, strlen(name) + 1);
    buf_append(b, value, strlen(value) + 1);
}

static void dump(const config_t *c, buf_t *out)
{
    buf_init(out);
    config_get(c, "*", emit, out);
}

static int same_dump(const buf_t *a, const buf_t *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

static void check_sound(const config_t *c)
{
    CHECK(c->ntiers >= 1 && c->ntiers <= CONFIG_MAX_TIERS);
    for (int i = 0; i < c->ntiers; i++) CHECK(c->tiers[i].name && c->tiers[i].path);
    CHECK(c->dir && c->unixsocket && c->requirepass && c->appendfilename && c->save);
}

static void check_error(const char *err, size_t errlen)
{
    size_t n = strnlen(err, errlen);
    CHECK(n > 0 && n < errlen);
    CHECK(!memchr(err, '\n', n));
}

/* Gives every key of dump d back to a fresh config as --KEY VALUE and checks that it shows the
 * same. An alias and its key both appear in d, with the same value. */
static void check_round_trip(const buf_t *d)
{
    size_t cap = 1;
    for (size_t i = 0; i < d->len; i++) cap += d->data[i] == '\0';
    char **argv = malloc(cap * sizeof *argv);
    char **names = malloc(cap * sizeof *names);
    CHECK(argv && names);
    int argc = 0, nnames = 0;
    argv[argc++] = "cte-server";
    for (size_t i = 0; i < d->len;) {
        const char *name = d->data + i, *value = name + strlen(name) + 1;
        i = (size_t)(value - d->data) + strlen(value) + 1;
        size_t n = strlen(name) + 3;
        char *opt = malloc(n + strlen(value) + 1);
        CHECK(opt);
        /* one argument "--name value": the value stays whole even if it starts with "--" */
        memcpy(opt, "--", 2);
        strcpy(opt + 2, name);
        strcat(opt, " ");
        strcat(opt, value);
        names[nnames++] = opt;
        argv[argc++] = opt;
    }
    config_t c;
    char err[512] = "";
    buf_t again;
    config_init(&c);
    int rc = config_apply_args(&c, argc, argv, err, sizeof err);
    CHECK(rc == 0);
    dump(&c, &again);
    CHECK(same_dump(d, &again));
    buf_deinit(&again);
    config_deinit(&c);
    for (int i = 0; i < nnames; i++) free(names[i]);
    free(names);
    free(argv);
}

/* Splits text at '\n' into argv[1..]; returns argc, or 0 when the line would read a file. */
static int split_args(char *text, char **argv)
{
    int argc = 0;
    argv[argc++] = "cte-server";
    for (char *s = text; s && argc < MAX_ARGS;) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        argv[argc++] = s;
        s = nl ? nl + 1 : NULL;
    }
    if (argc < 2 || argv[1][0] != '-') return 0; /* a positional config file */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] != '-') continue;
        size_t n = strcspn(a + 2, " ");
        if (n == 6 && !strncasecmp(a + 2, "config", 6)) return 0;
    }
    return argc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int yaml = (data[0] & 1) == 0;
    char *text = malloc(size); /* size - 1 bytes and a NUL */
    CHECK(text);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    config_t c;
    char err[256];
    buf_t before, after;
    int rc = 0;
    config_init(&c);
    dump(&c, &before);
    memset(err, 'x', sizeof err);
    if (yaml) {
        rc = config_load_yaml(&c, text, size - 1, "fuzz.yaml", err, sizeof err);
    } else {
        char *argv[MAX_ARGS + 1];
        int argc = split_args(text, argv);
        if (argc == 0) goto out;
        rc = config_apply_args(&c, argc, argv, err, sizeof err);
    }
    dump(&c, &after);
    if (rc < 0) {
        CHECK(rc == -1);
        check_error(err, sizeof err);
        CHECK(same_dump(&before, &after));
    } else {
        CHECK(rc == 0);
        check_sound(&c);
        check_round_trip(&after);
    }
    buf_deinit(&after);
out:
    buf_deinit(&before);
    config_deinit(&c);
    free(text);
    return 0;
}
