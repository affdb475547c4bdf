/* harness.c - shared helpers of the command tests (see harness.h). No Test() here. */
#define _GNU_SOURCE /* nftw */
#include "tests/unit/server/harness.h"

#include "server/rooms.h"
#include "server/server.h"

#include "common/alloc.h"
#include "common/buf.h"

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_WORDS 4100

void harness_send(client_t *c, const char *line)
{
    static const char *argv[MAX_WORDS];
    static size_t lens[MAX_WORDS];
    int argc = 0;
    const char *p = line;
    while (*p) {
        if (*p == ' ') {
            p++;
            continue;
        }
        cr_assert(argc < MAX_WORDS);
        if (*p == '"') {
            const char *e = strchr(p + 1, '"');
            cr_assert(e, "unterminated quote in %s", line);
            argv[argc] = p + 1;
            lens[argc++] = (size_t)(e - p - 1);
            p = e + 1;
        } else {
            size_t n = strcspn(p, " ");
            argv[argc] = p;
            lens[argc++] = n;
            p += n;
        }
    }
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(&b, "$%zu\r\n", lens[i]);
        buf_append(&b, argv[i], lens[i]);
        buf_append(&b, "\r\n", 2);
    }
    client_feed(c, b.data, b.len);
    buf_deinit(&b);
}

void harness_expect_n(client_t *c, const char *line, const char *want, size_t n)
{
    buf_clear(&c->out);
    harness_send(c, line);
    cr_assert(c->out.len == n && memcmp(c->out.data, want, n) == 0, "%s: got '%s', want '%s'",
              line, harness_escaped(c->out.data ? c->out.data : "", c->out.len),
              harness_escaped(want, n));
    buf_clear(&c->out);
}

char *harness_escaped(const char *p, size_t n)
{
    static char out[4][8192];
    static int k;
    char *o = out[k++ & 3];
    size_t j = 0;
    for (size_t i = 0; i < n && j < sizeof(out[0]) - 8; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\r')
            j += (size_t)sprintf(o + j, "\\r");
        else if (ch == '\n')
            j += (size_t)sprintf(o + j, "\\n");
        else if (ch < 32 || ch > 126)
            j += (size_t)sprintf(o + j, "\\x%02x", ch);
        else
            o[j++] = (char)ch;
    }
    o[j] = '\0';
    return o;
}

static void fake_free(obj_t *o)
{
    xfree(o);
}

static obj_t *fake_dup(const obj_t *o)
{
    obj_t *n = xmalloc(sizeof(*n));
    *n = *o;
    return n;
}

static size_t fake_memory(const obj_t *o)
{
    return sizeof(*o);
}

static size_t fake_length(const obj_t *o)
{
    return 1;
}

static const obj_ops_t fake_ops = {fake_free, fake_dup, fake_memory, fake_length};

obj_t *harness_add_fake(db_t *db, const char *key)
{
    if (!obj_types[HARNESS_FAKE_TYPE]) obj_types[HARNESS_FAKE_TYPE] = &fake_ops;
    obj_t *o = xcalloc(1, sizeof(*o));
    o->type = HARNESS_FAKE_TYPE;
    db_add(db, key, strlen(key), o);
    return o;
}

void harness_expect(client_t *c, const char *line, const char *want)
{
    buf_clear(&c->out);
    harness_send(c, line);
    char *got = xmemdup(c->out.data ? c->out.data : "", c->out.len);
    buf_clear(&c->out);
    cr_assert(strcmp(got, want) == 0, "RESP%d %s: got '%s', want '%s'", c->resp, line,
              harness_escaped(got, strlen(got)), harness_escaped(want, strlen(want)));
    xfree(got);
}

void harness_run_steps(client_t *c, const harness_step_t *steps, size_t n,
                       const char *const *prelude)
{
    for (int resp = 2; resp <= 3; resp++) {
        db_flush(&srv.db[0]);
        c->resp = 2;
        for (const char *const *p = prelude; p && *p; p++) harness_expect(c, *p, "+OK\r\n");
        c->resp = resp;
        for (size_t i = 0; i < n; i++)
            harness_expect(c, steps[i].cmd,
                           resp == 3 && steps[i].resp3 ? steps[i].resp3 : steps[i].resp2);
    }
}

client_t *harness_server_start(int argc, char **argv)
{
    char err[512] = "";
    config_init(&srv.cfg);
    /* off unless asked for: a command's first call allocates its latency histogram, which the
     * eviction tests would count in the memory they measure to the byte */
    srv.cfg.latency_tracking = 0;
    if (argc) cr_assert_eq(config_apply_args(&srv.cfg, argc, argv, err, sizeof(err)), 0, "%s", err);
    server_rooms_register();
    server_init();
    cr_assert_str_empty(srv.init_error, "server_init: %s", srv.init_error);
    return client_new(NULL, NULL, -1);
}

void harness_server_stop(void)
{
    server_deinit();
    config_deinit(&srv.cfg);
}

static char tmpdir[64], oldcwd[4096];

const char *harness_tmpdir_make(const char *prefix)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s-XXXXXX", prefix);
    cr_assert_not_null(mkdtemp(tmpdir));
    cr_assert_not_null(getcwd(oldcwd, sizeof(oldcwd)));
    return tmpdir;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(p);
}

void harness_tmpdir_remove(void)
{
    cr_assert_eq(chdir(oldcwd), 0);
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
