/* args.c - the command line, as redis-server reads it:
 *
 *   cte-server [FILE] [--config FILE] [--KEY VALUE [VALUE...]]... [--tier SPEC]...
 *              [--import-rdb FILE] [FILE]
 *
 * The arguments are first collected into options (a name and its values joined with spaces,
 * so `--bind 127.0.0.1 ::1` and `--save ""` work as in redis-server; "--port 7000" given as one
 * argument works too). How many values an option takes:
 *
 *   - the list-valued keys (those the table marks CONFIG__MULTI: bind, save, ...), --tier and
 *     unknown names take every argument up to the next --option;
 *   - every other key takes exactly one: an argument after that one which is not an option is
 *     the config file (`cte-server --port 7000 /etc/cte.yaml`), as a first positional is.
 *
 * An option with no value at all is refused by name ("--port needs a value"), except --save,
 * which then means save "" as in redis-server; give "" for an empty value. Then, on a copy of the
 * config, the file or the embedded default is loaded and the options applied in order; only if
 * everything is good does the copy replace the config. Startup only. */
#include "config/config_int.h"

#include "common/alloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct opt {
    char *name;  /* without the leading "--" */
    char *value; /* the values joined with spaces, "" when none */
    int nvalues;
} opt_t;

static int is_option(const char *a)
{
    return a[0] == '-' && a[1] == '-';
}

/* 1 if the option takes every argument up to the next option (see the top comment). */
static int takes_many(const char *name)
{
    const config__row_t *r;
    if (!strcasecmp(name, "tier")) return 1;
    if (!strcasecmp(name, "import-rdb")) return 0;
    r = config__lookup(name);
    return !r || (r->flags & CONFIG__MULTI);
}

/* Reads the option at argv[*i] into o and moves *i past its values: for a one-value option,
 * past that one value only. */
static void read_option(int argc, char **argv, int *i, opt_t *o)
{
    const char *a = argv[*i] + 2, *sp = strchr(a, ' ');
    buf_t v;

    buf_init(&v);
    buf_reserve(&v, 1);
    o->name = sp ? xmemdup(a, sp - a) : xstrdup(a);
    o->nvalues = 0;
    if (sp) {
        buf_append_str(&v, sp + 1);
        o->nvalues = 1;
    }
    int many = takes_many(o->name);
    for ((*i)++; *i < argc && !is_option(argv[*i]); (*i)++) {
        if (o->nvalues && !many) break;
        if (o->nvalues++) buf_push(&v, ' ');
        buf_append_str(&v, argv[*i]);
    }
    o->value = v.data; /* owned by o now */
}

static void free_options(opt_t *opts, int n)
{
    for (int i = 0; i < n; i++) {
        xfree(opts[i].name);
        xfree(opts[i].value);
    }
    xfree(opts);
}

/* A positional argument at argv[i], after the option prev (NULL: none): the config file if
 * none was named yet. */
static int take_file(char **argv, int i, const opt_t *prev, const char **file, buf_t *msg)
{
    if (argv[i][0] == '-') {
        buf_printf(msg, "command line: unexpected argument '%s' (options start with --)", argv[i]);
        return -1;
    }
    if (*file) {
        buf_printf(msg, "command line: unexpected argument '%s'", argv[i]);
        if (prev) buf_printf(msg, " ('--%s' takes one value)", prev->name);
        buf_printf(msg, ": the config file is already '%s'", *file);
        return -1;
    }
    *file = argv[i];
    return 0;
}

/* An option given no value: --save means save "" (as redis-server), others are refused. */
static int check_has_value(opt_t *o, buf_t *msg)
{
    if (o->nvalues > 0 || !strcasecmp(o->name, "save")) return 0;
    if (!strcasecmp(o->name, "config") || !strcasecmp(o->name, "tier")) return 0; /* below */
    buf_printf(msg, "command line: '--%s' needs a value (give \"\" for an empty one)", o->name);
    return -1;
}

/* Splits argv into options and finds the config file (a positional, or --config). */
static int collect(int argc, char **argv, opt_t **opts, int *nopts, const char **file, buf_t *msg)
{
    int i = 1;

    *file = NULL;
    *opts = xmalloc((argc > 0 ? argc : 1) * sizeof **opts);
    *nopts = 0;
    while (i < argc) {
        opt_t *o = &(*opts)[*nopts];
        if (!is_option(argv[i]) || !argv[i][2]) {
            if (!argv[i][0] || !strcmp(argv[i], "--") ||
                take_file(argv, i, *nopts ? o - 1 : NULL, file, msg) < 0) {
                if (!msg->len)
                    buf_printf(msg,
                               "command line: unexpected argument '%s' (options start with --)",
                               argv[i]);
                return -1;
            }
            i++;
            continue;
        }
        read_option(argc, argv, &i, o);
        (*nopts)++;
        if (check_has_value(o, msg) < 0) return -1;
        if (strcasecmp(o->name, "config")) continue;
        if (o->nvalues != 1) {
            buf_printf(msg, "command line: --config takes one file name");
            return -1;
        }
        if (*file) {
            buf_printf(msg, "command line: two config files given ('%s' and '%s')", *file,
                       o->value);
            return -1;
        }
        *file = o->value;
    }
    return 0;
}

/* Parses the specs of one --tier option into tiers[*n..]. */
static int add_tiers(const opt_t *o, config_tier_t *tiers, int *n, buf_t *msg)
{
    config_strlist_t w;
    config__why_t why;
    int rc = 0;

    config__split(o->value, &w);
    if (w.count == 0) {
        buf_printf(msg, "command line: --tier takes NAME:KIND:CAPACITY[:PATH[:SCORE]]");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < w.count; i++) {
        if (*n == CONFIG_MAX_TIERS) {
            buf_printf(msg, "command line: at most %d tiers", CONFIG_MAX_TIERS);
            rc = -1;
        } else if (config__tier_parse_spec(w.items[i], &tiers[*n], &why) < 0) {
            buf_printf(msg, "command line: bad value for '--tier': '%s' (%s)", w.items[i], why.msg);
            rc = -1;
        } else {
            (*n)++;
        }
    }
    config__strlist_free(&w);
    return rc;
}

/* Parses opts[i] into its row. A CONFIG__LINES key given several times under one name (--user
 * a --user b, as redis-server takes them) gets every value so far, one per line; given under
 * its other name (--users), the later name's values replace the earlier ones, as any key's. */
static int parse_option(config_t *c, const config__row_t *r, const opt_t *opts, int i,
                        config__why_t *why)
{
    if (!(r->flags & CONFIG__LINES)) return config__parse_row(c, r, opts[i].value, 0, why);
    buf_t all;
    buf_init(&all);
    buf_reserve(&all, 1);
    for (int j = 0; j <= i; j++) {
        if (strcasecmp(opts[j].name, opts[i].name) != 0) continue;
        if (all.len) buf_push(&all, '\n');
        buf_append_str(&all, opts[j].value);
    }
    int rc = config__parse_row(c, r, all.data, 0, why);
    buf_deinit(&all);
    return rc;
}

/* path relative to the working directory made absolute (whether or not it exists yet: the
 * error is the importer's to report). */
static char *cwd_path(const char *path)
{
    char cwd[4096];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) return xstrdup(path);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "%s/%s", cwd, path);
    return b.data; /* owned by the caller now */
}

/* Applies the options to c in order. The --tier options together replace c's tiers. */
static int apply_options(config_t *c, const opt_t *opts, int nopts, buf_t *msg)
{
    config_tier_t tiers[CONFIG_MAX_TIERS];
    config__why_t why;
    int ntiers = 0, any_tier = 0, rc = 0;

    for (int i = 0; rc == 0 && i < nopts; i++) {
        const opt_t *o = &opts[i];
        const config__row_t *r;

        if (!strcasecmp(o->name, "config")) continue;
        if (!strcasecmp(o->name, "import-rdb")) {
            if (o->nvalues != 1 || !*o->value) {
                buf_printf(msg, "command line: --import-rdb takes one file name");
                rc = -1;
            } else {
                xfree(c->import_rdb);
                c->import_rdb = cwd_path(o->value); /* the server chdirs to dir */
            }
        } else if (!strcasecmp(o->name, "tier")) {
            any_tier = 1;
            rc = add_tiers(o, tiers, &ntiers, msg);
        } else if (!(r = config__lookup(o->name))) {
            buf_printf(msg, "command line: unknown option '--%s'", o->name);
            rc = -1;
        } else if (parse_option(c, r, opts, i, &why) < 0) {
            buf_append_str(msg, "command line: ");
            config__bad_value(msg, r, o->name, o->value, &why);
            rc = -1;
        }
    }
    if (rc < 0) {
        for (int i = 0; i < ntiers; i++) config__tier_release(&tiers[i]);
        return -1;
    }
    if (any_tier && config__tiers_set(c, tiers, ntiers, &why) < 0) {
        buf_printf(msg, "command line: bad --tier options: %s", why.msg);
        return -1;
    }
    return 0;
}

static char *absolute_path(const char *path)
{
    char *abs = realpath(path, NULL); /* malloc'ed by libc */
    char *copy = xstrdup(abs ? abs : path);
    free(abs);
    return copy;
}

int config_apply_args(config_t *c, int argc, char **argv, char *err, size_t errlen)
{
    opt_t *opts = NULL;
    int nopts = 0, rc;
    const char *file;
    config_t next;
    buf_t msg;

    buf_init(&msg);
    config__clone(&next, c);
    rc = collect(argc, argv, &opts, &nopts, &file, &msg);
    if (rc == 0) { /* these two write err themselves */
        rc = file ? config_load_file(&next, file, err, errlen)
                  : config_load_default(&next, err, errlen);
        if (rc == 0) rc = apply_options(&next, opts, nopts, &msg);
    }
    if (rc == 0 && file) {
        xfree(next.config_file);
        next.config_file = absolute_path(file);
    }
    if (rc == 0)
        config__replace(c, &next);
    else
        config_deinit(&next);
    if (rc < 0 && msg.len) config__err(err, errlen, msg.data);
    free_options(opts, nopts);
    buf_deinit(&msg);
    return rc;
}
