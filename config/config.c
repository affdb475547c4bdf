/* config.c - the config module's core: defaults, copies, lookup, CONFIG SET / GET, the
 * Markdown reference and the change hook.
 *
 * Everything here walks the key table (table.c) and goes through each row's type, so there is
 * no per-key code in this file. Invariant kept by every entry point: a config_t that has been
 * through config_init holds a valid value for every key (strings never NULL, at least one
 * tier), and a failed call leaves it as it was. Loop thread (or startup). */
#include "config/config_int.h"

#include "common/alloc.h"
#include "common/glob.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void config__why_set(config__why_t *why, int generic, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why->msg, sizeof why->msg, fmt, ap);
    va_end(ap);
    why->generic = generic;
}

void config__err(char *err, size_t errlen, const char *msg)
{
    if (!errlen) return;
    snprintf(err, errlen, "%s", msg);
    /* one line: a value or key from a file or the command line may hold CR, LF or other
     * control bytes (a folded YAML scalar), which would split or forge log lines */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
}

const config__row_t *config__lookup(const char *name)
{
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        if (!strcasecmp(name, r->name) || (r->alias && !strcasecmp(name, r->alias))) return r;
    }
    return NULL;
}

int config__parse_row(config_t *c, const config__row_t *r, const char *v, int from_file,
                      config__why_t *why)
{
    return r->type->parse(c, r, v, from_file, why);
}

void config__bad_value(buf_t *out, const config__row_t *r, const char *shown_name, const char *v,
                       const config__why_t *why)
{
    buf_printf(out, "bad value for '%s': '%s' (", shown_name, v);
    if (why->generic) {
        buf_append_str(out, "expected ");
        r->type->describe(r, out, 0);
    } else {
        buf_append_str(out, why->msg);
    }
    buf_push(out, ')');
}

/* The field of each row must have the size its type works on. */
static int row_is_sound(const config__row_t *r)
{
    const config__type_t *t = r->type;
    if (t == &config__type_enum) return r->size == sizeof(int) && r->enums != NULL;
    if (t == &config__type_bool || t == &config__type_octal) return r->size == sizeof(int);
    if (t == &config__type_memory) return r->size == sizeof(long long);
    if (t == &config__type_int) return r->size == sizeof(int) || r->size == sizeof(long long);
    return 1;
}

void config_init(config_t *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        config__why_t why;
        int rc;

        assert(row_is_sound(r));
        rc = config__parse_row(c, r, r->def, 0, &why);
        assert(rc == 0 && "a default in the config table does not parse");
        (void)rc;
    }
}

void config_deinit(config_t *c)
{
    for (size_t i = 0; i < config__nrows; i++)
        if (config__rows[i].type->release) config__rows[i].type->release(c, &config__rows[i]);
    xfree(c->config_file);
    xfree(c->import_rdb);
    memset(c, 0, sizeof *c);
}

void config__clone(config_t *dst, const config_t *src)
{
    memcpy(dst, src, sizeof *dst);
    for (size_t i = 0; i < config__nrows; i++)
        if (config__rows[i].type->copy) config__rows[i].type->copy(dst, src, &config__rows[i]);
    dst->config_file = src->config_file ? xstrdup(src->config_file) : NULL;
    dst->import_rdb = src->import_rdb ? xstrdup(src->import_rdb) : NULL;
}

void config__replace(config_t *dst, config_t *src)
{
    config_deinit(dst);
    *dst = *src;
}

void config_on_change(config_t *c, config_apply_fn *fn, void *ud)
{
    c->on_change = fn;
    c->on_change_ud = ud;
}

/* ---- CONFIG SET ------------------------------------------------------------------------- */

/* 1 if value is what CONFIG GET shows for r in c. */
static int is_current(const config_t *c, const config__row_t *r, const char *value)
{
    buf_t v;
    buf_init(&v);
    buf_reserve(&v, 1);
    r->type->format(c, r, &v, 0);
    int same = strcmp(v.data, value) == 0;
    buf_deinit(&v);
    return same;
}

/* Looks up every name and refuses unknown, immutable and repeated keys, as Redis does before
 * it parses any value; same[i] is set for a CONFIG__SET_SAME key given its current value
 * (nothing to do). */
static int set_check_names(const config_t *c, int n, const char *const *names,
                           const char *const *values, const config__row_t **rows,
                           unsigned char *same, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        const char *why = NULL;

        rows[i] = config__lookup(names[i]);
        if (!rows[i]) {
            if (errlen)
                snprintf(err, errlen,
                         "ERR Unknown option or number of arguments for CONFIG SET - '%s'",
                         names[i]);
            return -1;
        }
        same[i] = (rows[i]->flags & CONFIG__SET_SAME) && is_current(c, rows[i], values[i]);
        if ((rows[i]->flags & CONFIG__IMMUTABLE) && !same[i]) why = "can't set immutable config";
        for (int j = 0; !why && j < i; j++)
            if (rows[j] == rows[i]) why = "duplicate parameter";
        if (why) {
            if (errlen)
                snprintf(err, errlen,
                         "ERR CONFIG SET failed (possibly related to argument '%s') - %s", names[i],
                         why);
            return -1;
        }
    }
    return 0;
}

int config_set_many(config_t *c, int n, const char *const *names, const char *const *values,
                    char *err, size_t errlen)
{
    const config__row_t **rows = xmalloc((n ? n : 1) * sizeof *rows);
    unsigned char *same = xmalloc(n ? (size_t)n : 1);
    config__why_t why;
    config_t trial;
    int rc = set_check_names(c, n, names, values, rows, same, err, errlen);

    if (rc == 0) { /* values are checked on a copy, so that nothing changes unless all are good */
        config__clone(&trial, c);
        for (int i = 0; rc == 0 && i < n; i++) {
            if (same[i]) continue;
            rc = config__parse_row(&trial, rows[i], values[i], 0, &why);
            if (rc < 0 && errlen)
                snprintf(err, errlen,
                         "ERR CONFIG SET failed (possibly related to argument '%s') - %s", names[i],
                         why.msg);
        }
        config_deinit(&trial);
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        if (same[i]) continue;
        int ok = config__parse_row(c, rows[i], values[i], 0, &why);
        assert(ok == 0 && "a value that parsed on the copy failed on the config");
        (void)ok;
    }
    for (int i = 0; rc == 0 && c->on_change && i < n; i++)
        if (!same[i]) c->on_change(rows[i]->name, c->on_change_ud);
    xfree(same);
    xfree(rows);
    return rc;
}

int config_set(config_t *c, const char *name, const char *value, char *err, size_t errlen)
{
    return config_set_many(c, 1, &name, &value, err, errlen);
}

/* ---- CONFIG GET ------------------------------------------------------------------------- */

/* 1 if one of the patterns matches name; a hidden row only by its exact name. */
static int any_match(int n, const char *const *pats, const char *name, unsigned flags)
{
    for (int i = 0; i < n; i++) {
        if (flags & CONFIG__HIDDEN) {
            if (!strcasecmp(pats[i], name)) return 1;
        } else if (strglob_match(pats[i], strlen(pats[i]), name, strlen(name), 1)) {
            return 1;
        }
    }
    return 0;
}

void config_get_many(const config_t *c, int npatterns, const char *const *patterns,
                     void (*emit)(void *ud, const char *name, const char *value), void *ud)
{
    buf_t v;

    buf_init(&v);
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        int by_name = any_match(npatterns, patterns, r->name, r->flags);
        int by_alias = r->alias && any_match(npatterns, patterns, r->alias, r->flags);

        if (!by_name && !by_alias) continue;
        buf_clear(&v);
        buf_reserve(&v, 1);
        r->type->format(c, r, &v, 0);
        if (by_name) emit(ud, r->name, v.data);
        if (by_alias) emit(ud, r->alias, v.data);
    }
    buf_deinit(&v);
}

void config_get(const config_t *c, const char *glob_pattern,
                void (*emit)(void *ud, const char *name, const char *value), void *ud)
{
    config_get_many(c, 1, &glob_pattern, emit, ud);
}

int config_get_value(const config_t *c, const char *name, buf_t *out)
{
    const config__row_t *r = config__lookup(name);
    if (!r) return -1;
    buf_reserve(out, 1);
    r->type->format(c, r, out, 0);
    return 0;
}

/* ---- the Markdown reference ------------------------------------------------------------- */

/* Appends s to a table cell, escaping what Markdown tables treat specially. */
static void md_cell(buf_t *out, const char *s, int code)
{
    if (code) buf_push(out, '`');
    for (; *s; s++) {
        if (*s == '|') buf_push(out, '\\');
        buf_push(out, *s);
    }
    if (code) buf_push(out, '`');
}

static void md_row(buf_t *out, const config__row_t *r)
{
    buf_t t;

    buf_init(&t);
    buf_append_str(out, "| ");
    md_cell(out, r->name, 1);
    buf_append_str(out, " | ");
    md_cell(out, r->type->name, 0);
    buf_append_str(out, " | ");
    md_cell(out, r->def[0] ? r->def : "\"\"", 1);
    buf_append_str(out, " | ");
    buf_reserve(&t, 1);
    r->type->describe(r, &t, 1);
    md_cell(out, t.data, 0);
    buf_append_str(out, r->flags & CONFIG__IMMUTABLE ? " | no | " : " | yes | ");
    md_cell(out, r->doc, 0);
    if (r->alias) {
        buf_append_str(out, " Alias: ");
        md_cell(out, r->alias, 1);
        buf_push(out, '.');
    }
    buf_append_str(out, " |\n");
    buf_deinit(&t);
}

/* Lists the keys that the embedded default file sets to something else than the table. */
static void md_default_file(buf_t *out)
{
    config_t table, file;
    buf_t a, b;
    char err[256];

    config_init(&table);
    config_init(&file);
    buf_init(&a);
    buf_init(&b);
    if (config_load_default(&file, err, sizeof err) < 0) assert(!"the embedded default is bad");
    buf_append_str(out, "\nWithout a config file, cte-server loads its built-in default "
                        "(installed as `etc/cte-server/cte-server.yaml` under the install "
                        "prefix), which differs from "
                        "the table above in:\n\n");
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        buf_clear(&a);
        buf_clear(&b);
        buf_reserve(&a, 1);
        buf_reserve(&b, 1);
        r->type->format(&table, r, &a, 1);
        r->type->format(&file, r, &b, 1);
        if (strcmp(a.data, b.data)) buf_printf(out, "- `%s`: `%s`\n", r->name, b.data);
    }
    buf_deinit(&a);
    buf_deinit(&b);
    config_deinit(&table);
    config_deinit(&file);
}

void config_doc_markdown(buf_t *out)
{
    buf_append_str(out, "| Key | Type | Default | Values | CONFIG SET | Description |\n"
                        "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < config__nrows; i++) md_row(out, &config__rows[i]);
    md_default_file(out);
}
