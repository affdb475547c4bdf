/* props.c - java.util.Properties parsing and typed property reads (see props.h).
 *
 * The set is a flat array of (name, value) pairs in first-set order: YCSB runs read a few dozen
 * properties, once, at start-up, so lookup is a linear scan. Parsing walks the text one logical
 * line at a time (natural lines joined by trailing backslashes), as Properties.load does. */
#include "props.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define PROPS_FILE_MAX (16u << 20)

typedef struct prop {
    char *name, *value;
} prop_t;

struct props {
    prop_t *v;
    size_t n, cap;
};

props_t *props_new(void)
{
    return util_xcalloc(1, sizeof(props_t));
}

void props_free(props_t *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].name);
        free(p->v[i].value);
    }
    free(p->v);
    free(p);
}

static prop_t *find(const props_t *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].name, name) == 0) return &p->v[i];
    return NULL;
}

void props_set(props_t *p, const char *name, const char *value)
{
    prop_t *it = find(p, name);
    if (it) {
        char *v = util_xstrdup(value);
        free(it->value);
        it->value = v;
        return;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->v = util_xrealloc(p->v, p->cap * sizeof *p->v);
    }
    p->v[p->n++] = (prop_t){util_xstrdup(name), util_xstrdup(value)};
}

const char *props_get(const props_t *p, const char *name)
{
    prop_t *it = find(p, name);
    return it ? it->value : NULL;
}

const char *props_get_or(const props_t *p, const char *name, const char *def)
{
    const char *v = props_get(p, name);
    return v ? v : def;
}

void props_merge(props_t *dst, const props_t *src)
{
    for (size_t i = 0; i < src->n; i++) props_set(dst, src->v[i].name, src->v[i].value);
}

size_t props_count(const props_t *p)
{
    return p->n;
}

void props_at(const props_t *p, size_t i, const char **name, const char **value)
{
    *name = p->v[i].name;
    *value = p->v[i].value;
}

/* ---- parsing ---- */

typedef struct buf {
    char *s;
    size_t n, cap;
} buf_t;

static void buf_put(buf_t *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = util_xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void buf_putc(buf_t *b, char c)
{
    buf_put(b, &c, 1);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

static int is_eol(char c)
{
    return c == '\n' || c == '\r';
}

/* Reads one logical line starting at *pos into line (continuations joined, the backslash and
 * the next line's leading blanks dropped). Returns 0 at the end of the text, else 1. Comment
 * and blank lines come back empty. */
static int read_line(const char *t, size_t len, size_t *pos, buf_t *line, int *lineno)
{
    line->n = 0;
    size_t i = *pos;
    if (i >= len) return 0;
    while (i < len && is_blank(t[i])) i++;
    int comment = i < len && (t[i] == '#' || t[i] == '!');
    for (;;) {
        size_t start = i;
        while (i < len && !is_eol(t[i])) i++;
        size_t end = i, slashes = 0;
        if (i < len) {
            (*lineno)++;
            i += (t[i] == '\r' && i + 1 < len && t[i + 1] == '\n') ? 2 : 1;
        }
        if (!comment) {
            while (slashes < end - start && t[end - 1 - slashes] == '\\') slashes++;
            buf_put(line, t + start, end - start - (slashes % 2));
        }
        if (comment || slashes % 2 == 0 || i >= len) break;
        while (i < len && is_blank(t[i])) i++; /* the continued line's leading blanks */
    }
    *pos = i;
    if (!line->s) buf_put(line, "", 0);
    return 1;
}

static void put_utf8(buf_t *b, uint32_t cp)
{
    char u[4];
    if (cp < 0x80) {
        buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        buf_put(b, u, 2);
    } else {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        buf_put(b, u, 3);
    }
}

/* Unescapes s[0..n) into out. -1 on a malformed \uXXXX. */
static int unescape(const char *s, size_t n, buf_t *out)
{
    out->n = 0;
    buf_put(out, "", 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            if (s[i] != '\\') buf_putc(out, s[i]);
            continue;
        }
        char c = s[++i];
        if (c == 'u') {
            uint32_t cp = 0;
            for (int k = 0; k < 4; k++) {
                char h = ++i < n ? s[i] : 0;
                int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
                if (d < 0) return -1;
                cp = cp * 16 + (uint32_t)d;
            }
            put_utf8(out, cp);
        } else {
            buf_putc(out, c == 't'   ? '\t'
                          : c == 'n' ? '\n'
                          : c == 'r' ? '\r'
                          : c == 'f' ? '\f'
                                     : c);
        }
    }
    return 0;
}

/* Splits a logical line into key and value (Properties.load's rules) and sets them. */
static int parse_pair(props_t *p, const char *s, size_t n, buf_t *k, buf_t *v)
{
    size_t i = 0;
    while (i < n && is_blank(s[i])) i++;
    size_t kstart = i;
    while (i < n && s[i] != '=' && s[i] != ':' && !is_blank(s[i])) i += (s[i] == '\\') ? 2 : 1;
    if (i > n) i = n;
    size_t kend = i;
    while (i < n && is_blank(s[i])) i++;
    if (i < n && (s[i] == '=' || s[i] == ':')) i++;
    while (i < n && is_blank(s[i])) i++;
    if (unescape(s + kstart, kend - kstart, k) < 0 || unescape(s + i, n - i, v) < 0) return -1;
    props_set(p, k->s, v->s);
    return 0;
}

int props_parse(props_t *p, const char *text, size_t len, util_err_t *e)
{
    buf_t line = {0}, k = {0}, v = {0};
    size_t pos = 0;
    int lineno = 1, rc = 0;
    for (;;) {
        int first = lineno;
        if (!read_line(text, len, &pos, &line, &lineno)) break;
        size_t i = 0;
        while (i < line.n && is_blank(line.s[i])) i++;
        if (i == line.n) continue;
        if (parse_pair(p, line.s, line.n, &k, &v) < 0) {
            rc = util_fail(e, "line %d: malformed \\uxxxx escape", first);
            break;
        }
    }
    free(line.s);
    free(k.s);
    free(v.s);
    return rc;
}

int props_load_file(props_t *p, const char *path, util_err_t *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int err = errno;
        util_fail(e, "cannot open the properties file %s: %s", path, strerror(err));
        return -err;
    }
    struct stat st;
    char *text = NULL;
    int rc = 0;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > PROPS_FILE_MAX) {
        rc = util_fail(e, "the properties file %s is not a regular file of at most %u bytes", path,
                       PROPS_FILE_MAX);
        goto done;
    }
    text = util_xmalloc((size_t)st.st_size + 1);
    size_t n = fread(text, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        rc = util_fail(e, "cannot read the properties file %s", path);
        goto done;
    }
    util_err_t pe;
    if (props_parse(p, text, n, &pe) < 0) rc = util_fail(e, "%s: %s", path, pe.msg);
done:
    free(text);
    fclose(f);
    return rc;
}

/* ---- typed reads ---- */

/* s without surrounding blanks, into out (at most cap-1 bytes); -1 when longer. */
static int trimmed(const char *s, char *out, size_t cap)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1])) n--;
    if (n >= cap) return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

int props_parse_long(const char *s, int64_t *out)
{
    char t[64];
    if (trimmed(s, t, sizeof t) < 0 || !t[0]) return -EINVAL;
    const char *d = t + (t[0] == '+' || t[0] == '-');
    if (!*d) return -EINVAL;
    for (const char *c = d; *c; c++)
        if (*c < '0' || *c > '9') return -EINVAL;
    errno = 0;
    long long v = strtoll(t, NULL, 10);
    if (errno == ERANGE) return -EINVAL;
    *out = v;
    return 0;
}

int props_parse_double(const char *s, double *out)
{
    char t[128];
    if (trimmed(s, t, sizeof t) < 0 || !t[0]) return -EINVAL;
    size_t n = strlen(t);
    if (strchr("dDfF", t[n - 1]) && n > 1 && t[n - 2] != 'e' && t[n - 2] != 'E') t[--n] = '\0';
    /* Java reads "NaN" and "Infinity" but not hex floats without a p exponent or "inf". */
    if (strcasecmp(t, "inf") == 0 || strcasecmp(t, "-inf") == 0 || strcasecmp(t, "+inf") == 0)
        return -EINVAL;
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end) return -EINVAL;
    *out = v;
    return 0;
}

int props_long(const props_t *p, const char *name, int64_t def, int64_t min, int64_t max,
               int64_t *out, util_err_t *e)
{
    const char *s = props_get(p, name);
    int64_t v = def;
    if (s && props_parse_long(s, &v) < 0)
        return util_fail(e, "property %s: '%s' is not an integer", name, s);
    if (v < min || v > max)
        return util_fail(e, "property %s: %lld is out of range [%lld, %lld]", name, (long long)v,
                         (long long)min, (long long)max);
    *out = v;
    return 0;
}

int props_double(const props_t *p, const char *name, double def, double min, double max,
                 double *out, util_err_t *e)
{
    const char *s = props_get(p, name);
    double v = def;
    if (s && props_parse_double(s, &v) < 0)
        return util_fail(e, "property %s: '%s' is not a number", name, s);
    if (!(v >= min && v <= max))
        return util_fail(e, "property %s: %g is out of range [%g, %g]", name, v, min, max);
    *out = v;
    return 0;
}

bool props_bool(const props_t *p, const char *name, bool def)
{
    const char *s = props_get(p, name);
    char t[8];
    if (!s) return def;
    return trimmed(s, t, sizeof t) == 0 && strcasecmp(t, "true") == 0;
}
