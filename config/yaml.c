/* yaml.c - config files: loading YAML (libyaml's document API) and writing it for CONFIG
 * REWRITE.
 *
 * A file is a mapping of key: value. Values are scalars, or lists for keys that take several
 * words (bind, save, client-output-buffer-limit), which are joined with spaces and parsed like
 * a CONFIG SET value. A mapping under a name that is not a key but a prefix of keys is a
 * section: `search: {enabled: no}` sets search-enabled. `tiers:` is a list of mappings (or of
 * NAME:KIND:CAPACITY[:PATH[:SCORE]] strings). Every message names the source, the line and the
 * key. Loading works on a copy of the config, so a bad file changes nothing. Startup and the
 * loop thread (CONFIG REWRITE). */
#include "config/config_int.h"

#include "common/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

typedef struct load {
    config_t *c;
    yaml_document_t *doc;
    const char *source;
    buf_t *msg;
    int *seen; /* per row: the line that set it, 0 when not yet */
} load_t;

static int line_of(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

static int fail(load_t *L, const yaml_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(load_t *L, const yaml_node_t *at, const char *fmt, ...)
{
    va_list ap;
    buf_printf(L->msg, "%s:%d: ", L->source, line_of(at));
    va_start(ap, fmt);
    buf_vprintf(L->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static yaml_node_t *node(load_t *L, int id)
{
    return yaml_document_get_node(L->doc, id);
}

/* The text of a scalar, "" for a YAML null. Fails on NUL bytes inside. */
static int scalar_text(load_t *L, const yaml_node_t *n, buf_t *out)
{
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;

    if (memchr(s, '\0', len)) return fail(L, n, "a value holds a NUL byte");
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (!strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")))
        return 0;
    buf_append(out, s, len);
    return 0;
}

/* The value of key as one string: a scalar, or a list of scalars joined with spaces. */
static int value_text(load_t *L, const config__row_t *r, const char *key, yaml_node_t *v,
                      buf_t *out)
{
    buf_reserve(out, 1);
    if (v->type == YAML_SCALAR_NODE) return scalar_text(L, v, out);
    if (v->type == YAML_MAPPING_NODE) return fail(L, v, "'%s' takes a value, not a mapping", key);
    if (!(r->flags & CONFIG__MULTI)) return fail(L, v, "'%s' takes one value, not a list", key);
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *item = node(L, *it);
        if (item->type != YAML_SCALAR_NODE)
            return fail(L, item, "the list of '%s' may only hold plain values", key);
        if (it > v->data.sequence.items.start) buf_push(out, (r->flags & CONFIG__LINES) ? '\n' : ' ');
        if (scalar_text(L, item, out) < 0) return -1;
    }
    return 0;
}

/* ---- tiers ------------------------------------------------------------------------------ */

static int tier_field(load_t *L, config_tier_t *t, const char *k, yaml_node_t *kn, yaml_node_t *v)
{
    buf_t s;
    char *end;
    int rc = 0;

    if (v->type != YAML_SCALAR_NODE) return fail(L, v, "tier field '%s' takes one value", k);
    buf_init(&s);
    buf_reserve(&s, 1);
    if (scalar_text(L, v, &s) < 0)
        rc = -1;
    else if (!strcmp(k, "name") || !strcmp(k, "path")) {
        char **slot = k[0] == 'n' ? &t->name : &t->path;
        xfree(*slot);
        *slot = xstrdup(s.data);
    } else if (!strcmp(k, "kind")) {
        t->kind = !strcasecmp(s.data, "ram")    ? CONFIG_TIER_RAM
                  : !strcasecmp(s.data, "file") ? CONFIG_TIER_FILE
                                                : -1;
        if (t->kind < 0) rc = fail(L, v, "bad tier kind '%s' (expected ram or file)", s.data);
    } else if (!strcmp(k, "capacity")) {
        if (config__parse_memory(s.data, &t->capacity) < 0)
            rc = fail(L, v, "bad tier capacity '%s' (expected a size like 8gb)", s.data);
    } else if (!strcmp(k, "score")) {
        t->score = strtod(s.data, &end);
        if (!s.len || *end)
            rc = fail(L, v, "bad tier score '%s' (expected a number in [0, 1])", s.data);
    } else {
        rc = fail(L, kn, "unknown tier key '%s' (expected name, kind, capacity, path, score)", k);
    }
    buf_deinit(&s);
    return rc;
}

/* Fills t from a mapping {name, kind, capacity, path, score}; on failure t owns nothing. */
static int tier_from_map(load_t *L, yaml_node_t *m, config_tier_t *t)
{
    config__why_t why;

    *t = (config_tier_t){.kind = -1, .capacity = -1, .score = -1};
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key);
        if (k->type != YAML_SCALAR_NODE) {
            fail(L, k, "a tier key must be a plain name");
            goto fail;
        }
        if (tier_field(L, t, (const char *)k->data.scalar.value, k, node(L, p->value)) < 0)
            goto fail;
    }
    if (!t->name || t->kind < 0 || t->capacity < 0) {
        fail(L, m, "a tier needs a name, a kind and a capacity");
        goto fail;
    }
    if (!t->path) t->path = xstrdup("");
    if (config__tier_check(t, &why) == 0) return 0;
    fail(L, m, "%s", why.msg);
fail:
    config__tier_release(t);
    return -1;
}

static int load_tiers(load_t *L, yaml_node_t *seq)
{
    config_tier_t next[CONFIG_MAX_TIERS];
    config__why_t why;
    int n = 0, rc = 0;

    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         rc == 0 && it < seq->data.sequence.items.top; it++) {
        yaml_node_t *item = node(L, *it);
        if (n == CONFIG_MAX_TIERS) {
            rc = fail(L, item, "at most %d tiers", CONFIG_MAX_TIERS);
        } else if (item->type == YAML_MAPPING_NODE) {
            rc = tier_from_map(L, item, &next[n]);
        } else if (item->type == YAML_SCALAR_NODE) {
            rc = config__tier_parse_spec((const char *)item->data.scalar.value, &next[n], &why);
            if (rc < 0) fail(L, item, "%s", why.msg);
        } else {
            rc = fail(L, item, "a tier is a mapping of name, kind, capacity, path, score");
        }
        if (rc == 0) n++;
    }
    if (rc < 0) {
        for (int i = 0; i < n; i++) config__tier_release(&next[i]);
        return -1;
    }
    if (config__tiers_set(L->c, next, n, &why) < 0) return fail(L, seq, "%s", why.msg);
    return 0;
}

/* ---- keys and sections ------------------------------------------------------------------ */

static int load_key(load_t *L, const config__row_t *r, const char *key, yaml_node_t *k,
                    yaml_node_t *v)
{
    config__why_t why;
    size_t idx = r - config__rows;
    buf_t text;
    int rc;

    if (L->seen[idx]) return fail(L, k, "'%s' is set twice (first on line %d)", key, L->seen[idx]);
    L->seen[idx] = line_of(k);
    if (!strcmp(r->name, "tiers") && v->type == YAML_SEQUENCE_NODE) return load_tiers(L, v);
    buf_init(&text);
    rc = value_text(L, r, key, v, &text);
    if (rc == 0 && config__parse_row(L->c, r, text.data, 1, &why) < 0) {
        rc = fail(L, v, "%s", "");
        config__bad_value(L->msg, r, key, text.data, &why);
    }
    buf_deinit(&text);
    return rc;
}

/* A name is a section when keys start with "<name>-". */
static int is_section(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < config__nrows; i++)
        if (!strncasecmp(config__rows[i].name, name, len) && config__rows[i].name[len] == '-')
            return 1;
    return 0;
}

static int load_mapping(load_t *L, yaml_node_t *m, const char *section)
{
    buf_t key;
    int rc = 0;

    buf_init(&key);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         rc == 0 && p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(L, p->key), *v = node(L, p->value);
        const config__row_t *r;

        if (k->type != YAML_SCALAR_NODE) {
            rc = fail(L, k, "a key must be a plain name");
            break;
        }
        buf_clear(&key);
        if (section) buf_printf(&key, "%s-", section);
        buf_append_str(&key, (const char *)k->data.scalar.value);
        r = config__lookup(key.data);
        if (r)
            rc = load_key(L, r, key.data, k, v);
        else if (v->type == YAML_MAPPING_NODE && is_section(key.data))
            rc = load_mapping(L, v, key.data);
        else
            rc = fail(L, k, "unknown key '%s'", key.data);
    }
    buf_deinit(&key);
    return rc;
}

static int load_document(load_t *L)
{
    yaml_node_t *root = yaml_document_get_root_node(L->doc);

    if (!root) return 0; /* empty file */
    if (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0) return 0;
    if (root->type != YAML_MAPPING_NODE)
        return fail(L, root, "expected a mapping of keys (key: value) at the top level");
    return load_mapping(L, root, NULL);
}

int config_load_yaml(config_t *c, const char *text, size_t len, const char *source_name, char *err,
                     size_t errlen)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    config_t next;
    buf_t msg;
    load_t L = {&next, &doc, source_name, &msg, NULL};
    int rc = -1;

    buf_init(&msg);
    if (!yaml_parser_initialize(&parser)) {
        config__err(err, errlen, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        buf_printf(&msg, "%s:%zu: YAML syntax error: %s", source_name, parser.problem_mark.line + 1,
                   parser.problem ? parser.problem : "?");
        if (parser.context) buf_printf(&msg, " (%s)", parser.context);
        goto out;
    }
    config__clone(&next, c);
    L.seen = xcalloc(config__nrows, sizeof(int));
    rc = load_document(&L);
    xfree(L.seen);
    yaml_document_delete(&doc);
    if (rc == 0)
        config__replace(c, &next);
    else
        config_deinit(&next);
out:
    yaml_parser_delete(&parser);
    if (rc < 0) config__err(err, errlen, msg.data ? msg.data : "bad config");
    buf_deinit(&msg);
    return rc;
}

int config_load_file(config_t *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    buf_t text;
    char chunk[8192];
    size_t n;
    int rc;

    if (!f) {
        if (errlen) snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    buf_init(&text);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&text, chunk, n);
    if (ferror(f)) {
        if (errlen) snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        rc = -1;
    } else {
        rc = config_load_yaml(c, text.data ? text.data : "", text.len, path, err, errlen);
    }
    fclose(f);
    buf_deinit(&text);
    return rc;
}

const char *config_default_yaml(void)
{
    return config__default_yaml_text;
}

int config_load_default(config_t *c, char *err, size_t errlen)
{
    return config_load_yaml(c, config__default_yaml_text, strlen(config__default_yaml_text),
                            "built-in cte-server.yaml", err, errlen);
}

/* ---- CONFIG REWRITE --------------------------------------------------------------------- */

static const char *const rewrite_sections[] = {"search", "shm"};
#define NSECTIONS (sizeof rewrite_sections / sizeof rewrite_sections[0])

static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        int n = *s < 0x80             ? 0
                : (*s & 0xe0) == 0xc0 ? 1
                : (*s & 0xf0) == 0xe0 ? 2
                : (*s & 0xf8) == 0xf0 ? 3
                                      : -1;
        if (n < 0) return 0;
        s++;
        while (n--)
            if ((*s++ & 0xc0) != 0x80) return 0;
    }
    return 1;
}

/* Appends s as a YAML double-quoted scalar. Returns -1 when s is not valid UTF-8. */
static int yaml_quote(buf_t *out, const char *s)
{
    if (!valid_utf8((const unsigned char *)s)) return -1;
    buf_push(out, '"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            buf_printf(out, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            buf_printf(out, "\\x%02x", ch);
        else
            buf_push(out, (char)ch);
    }
    buf_push(out, '"');
    return 0;
}

static int is_plain_type(const config__type_t *t)
{
    return t == &config__type_bool || t == &config__type_int || t == &config__type_memory ||
           t == &config__type_octal || t == &config__type_enum;
}

static void rewrite_tiers(const config_t *c, buf_t *out)
{
    buf_append_str(out, "tiers:\n");
    for (int i = 0; i < c->ntiers; i++) {
        const config_tier_t *t = &c->tiers[i];
        buf_printf(out, "  - name: %s\n    kind: %s\n    capacity: ", t->name,
                   t->kind == CONFIG_TIER_RAM ? "ram" : "file");
        config__format_memory(out, t->capacity, 1);
        buf_push(out, '\n');
        if (t->path[0]) {
            buf_append_str(out, "    path: ");
            yaml_quote(out, t->path);
            buf_push(out, '\n');
        }
        if (t->score != -1) {
            buf_append_str(out, "    score: ");
            config__format_double(out, t->score);
            buf_push(out, '\n');
        }
    }
}

/* Appends "# doc\n<indent>key: value\n" for one key. */
static int rewrite_key(const config_t *c, const config__row_t *r, const char *key, int indent,
                       buf_t *out, char *err, size_t errlen)
{
    buf_t v;
    int rc = 0;

    buf_printf(out, "\n%*s# %s\n", indent, "", r->doc);
    if (!strcmp(r->name, "tiers")) {
        rewrite_tiers(c, out);
        return 0;
    }
    buf_init(&v);
    buf_reserve(&v, 1);
    r->type->format(c, r, &v, 1);
    buf_printf(out, "%*s%s: ", indent, "", key);
    if (is_plain_type(r->type))
        buf_append_str(out, v.data);
    else
        rc = yaml_quote(out, v.data);
    buf_push(out, '\n');
    if (rc < 0 && errlen)
        snprintf(err, errlen, "the value of '%s' is not UTF-8 text and cannot go into YAML",
                 r->name);
    buf_deinit(&v);
    return rc;
}

static int section_of(const config__row_t *r)
{
    for (size_t s = 0; s < NSECTIONS; s++) {
        size_t len = strlen(rewrite_sections[s]);
        if (!strncmp(r->name, rewrite_sections[s], len) && r->name[len] == '-') return (int)s;
    }
    return -1;
}

static int differs(const config_t *a, const config_t *b, const config__row_t *r)
{
    buf_t x, y;
    int d;

    buf_init(&x);
    buf_init(&y);
    buf_reserve(&x, 1);
    buf_reserve(&y, 1);
    r->type->format(a, r, &x, 0);
    r->type->format(b, r, &y, 0);
    d = strcmp(x.data, y.data) != 0;
    buf_deinit(&x);
    buf_deinit(&y);
    return d;
}

/* The YAML text of c: keys off their defaults, top-level ones first, then each section. */
static int rewrite_text(const config_t *c, buf_t *out, char *err, size_t errlen)
{
    config_t def;
    int rc = 0;

    config_init(&def);
    buf_append_str(out, "# cte-server configuration, written by CONFIG REWRITE.\n"
                        "# Keys not listed have their defaults: see `cte-server --config-doc`.\n");
    for (int s = -1; rc == 0 && s < (int)NSECTIONS; s++) {
        int opened = 0;
        for (size_t i = 0; rc == 0 && i < config__nrows; i++) {
            const config__row_t *r = &config__rows[i];
            if (section_of(r) != s || !differs(c, &def, r)) continue;
            if (s >= 0 && !opened) {
                buf_printf(out, "%s:\n", rewrite_sections[s]);
                opened = 1;
            }
            rc = rewrite_key(c, r, s < 0 ? r->name : r->name + strlen(rewrite_sections[s]) + 1,
                             s < 0 ? 0 : 2, out, err, errlen);
        }
    }
    config_deinit(&def);
    return rc;
}

/* Writes len bytes to a temporary file beside path, fsyncs it and renames it over path. The
 * new file keeps the old one's permissions (it may hold requirepass), else gets 0644. */
static int write_atomically(const char *path, const char *data, size_t len, char *err,
                            size_t errlen)
{
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 0777) : 0644;
    size_t tlen = strlen(path) + 5;
    char *tmp = xmalloc(tlen);
    int fd, saved = 0;
    const char *what = "open";

    snprintf(tmp, tlen, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) goto fail;
    what = "write";
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) goto fail;
        off += (size_t)n;
    }
    what = "fsync";
    if (fchmod(fd, mode) < 0 || fsync(fd) < 0) goto fail;
    what = "close";
    if (close(fd) < 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    what = "rename";
    if (rename(tmp, path) < 0) goto fail;
    xfree(tmp);
    return 0;
fail:
    saved = errno;
    if (fd >= 0) close(fd);
    unlink(tmp);
    if (errlen) snprintf(err, errlen, "cannot %s '%s': %s", what, tmp, strerror(saved));
    xfree(tmp);
    return -1;
}

int config_rewrite(const config_t *c, const char *path, char *err, size_t errlen)
{
    buf_t text;
    int rc;

    buf_init(&text);
    rc = rewrite_text(c, &text, err, errlen);
    if (rc == 0) rc = write_atomically(path, text.data, text.len, err, errlen);
    buf_deinit(&text);
    return rc;
}
