/* reply.c - libcte's reply tree and its incremental RESP2/RESP3 parser.
 *
 * Shape: a feed loop over two states. Either a string payload is arriving (p->bulk set: copy
 * what is there, then expect CRLF), or a line is expected: a type byte, its text, CRLF. A line
 * split across feeds is gathered in p->line; a whole line is parsed where it lies. A scalar is
 * attached to the aggregate on top of the stack at once; an aggregate is pushed and attached
 * when its last element arrives, so every node not yet attached is owned by exactly one frame
 * (or by p->bulk) and deinit can free a half-built tree. Limits are checked on the announced
 * length before anything is allocated for it, and buffers grow as bytes really arrive, so a
 * hostile length costs nothing. Runs on the thread that owns the connection. */
#include "alloc.h"
#include "reply.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BULK_FIRST_CHUNK (64 * 1024)

cte_reply_t *cte__reply_new(cte_reply_kind_t kind)
{
    cte_reply_t *r = cte__calloc(1, sizeof *r);
    if (r) r->kind = kind;
    return r;
}

void cte_reply_free(cte_reply_t *r)
{
    if (!r) return;
    for (size_t i = 0; r->elem && i < r->len; i++) cte_reply_free(r->elem[i]);
    free(r->elem);
    if (!r->borrowed) free(r->str);
    free(r);
}

cte_reply_t *cte_reply_copy(const cte_reply_t *r)
{
    cte_reply_t *c = cte__reply_new(r->kind);
    if (!c) return NULL;
    c->len = r->len;
    c->ival = r->ival;
    c->dval = r->dval;
    memcpy(c->fmt, r->fmt, sizeof c->fmt);
    if (r->str && !(c->str = cte__malloc(r->len + 1))) goto fail;
    if (r->str) memcpy(c->str, r->str, r->len + 1);
    if (r->elem && r->len && !(c->elem = cte__calloc(r->len, sizeof *c->elem))) goto fail;
    for (size_t i = 0; r->elem && i < r->len; i++)
        if (!(c->elem[i] = cte_reply_copy(r->elem[i]))) goto fail;
    return c;
fail:
    if (!c->elem) c->len = 0;
    cte_reply_free(c);
    return NULL;
}

cte_reply_kind_t cte_reply_kind(const cte_reply_t *r)
{
    return r->kind;
}

const char *cte_reply_str(const cte_reply_t *r, size_t *len)
{
    if (!r->str) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = r->len;
    return r->str;
}

long long cte_reply_int(const cte_reply_t *r)
{
    return r->kind == CTE_REPLY_INTEGER || r->kind == CTE_REPLY_BOOL ? r->ival : 0;
}

double cte_reply_double(const cte_reply_t *r)
{
    if (r->kind == CTE_REPLY_DOUBLE) return r->dval;
    return r->kind == CTE_REPLY_INTEGER ? (double)r->ival : 0.0;
}

static int is_aggregate(cte_reply_kind_t k)
{
    return k == CTE_REPLY_ARRAY || k == CTE_REPLY_MAP || k == CTE_REPLY_SET || k == CTE_REPLY_PUSH;
}

size_t cte_reply_len(const cte_reply_t *r)
{
    return is_aggregate(r->kind) ? r->len : 0;
}

const cte_reply_t *cte_reply_elem(const cte_reply_t *r, size_t i)
{
    return is_aggregate(r->kind) && i < r->len ? r->elem[i] : NULL;
}

const char *cte_reply_format(const cte_reply_t *r)
{
    return r->kind == CTE_REPLY_VERBATIM ? r->fmt : "";
}

/* ---- parser ---- */

void cte__parser_init(cte_parser_t *p, const cte_parser_limits_t *lim)
{
    memset(p, 0, sizeof *p);
    p->lim.max_bulk = 512u << 20;
    p->lim.max_line = 64u << 10;
    p->lim.max_elems = 1u << 24;
    if (lim) p->lim = *lim;
}

void cte__parser_deinit(cte_parser_t *p)
{
    for (int i = 0; i < p->depth; i++) cte_reply_free(p->stack[i].node);
    cte_reply_free(p->bulk);
    free(p->line);
    p->depth = 0;
    p->bulk = NULL;
    p->line = NULL;
    p->line_len = p->line_cap = 0;
}

static int fail(cte_parser_t *p, int status)
{
    p->err = status;
    return status;
}

/* Strict decimal integer of n bytes: optional '-', digits, no overflow. */
static int parse_ll(const char *s, size_t n, long long *out)
{
    int neg = n > 0 && s[0] == '-';
    unsigned long long v = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
    size_t i = neg;

    if (i == n || n > 20) return -1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        if (v > (lim - (unsigned)(s[i] - '0')) / 10) return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = neg ? (long long)(0 - v) : (long long)v;
    return 0;
}

static int set_str(cte_reply_t *r, const char *s, size_t n)
{
    r->str = cte__malloc(n + 1);
    if (!r->str) return CTE_E_NOMEM;
    memcpy(r->str, s, n);
    r->str[n] = '\0';
    r->len = n;
    r->cap = n + 1;
    return 0;
}

static int append_elem(cte_reply_t *agg, cte_reply_t *child, size_t total)
{
    if (agg->len == agg->cap) {
        size_t cap = agg->cap ? agg->cap * 2 : 8;
        if (cap > total) cap = total;
        cte_reply_t **e = cte__realloc(agg->elem, cap * sizeof *e);
        if (!e) return CTE_E_NOMEM;
        agg->elem = e;
        agg->cap = cap;
    }
    agg->elem[agg->len++] = child;
    return 0;
}

/* Hands a complete node to its parent, completing parents in turn. Returns 1 with *out when
 * the root completed, 0 when more is needed, or a failure (node freed). */
static int attach(cte_parser_t *p, cte_reply_t *node, cte_reply_t **out)
{
    for (;;) {
        if (p->depth == 0) {
            *out = node;
            return 1;
        }
        cte_parser_frame_t *f = &p->stack[p->depth - 1];
        size_t total = f->node->len + f->want;
        if (append_elem(f->node, node, total) != 0) {
            cte_reply_free(node);
            return fail(p, CTE_E_NOMEM);
        }
        if (--f->want > 0) return 0;
        node = f->node;
        p->depth--;
        if (f->attr) {
            cte_reply_free(node); /* attributes are read and dropped */
            return 0;
        }
    }
}

static int start_bulk(cte_parser_t *p, cte_reply_kind_t kind, long long n)
{
    if (n < 0) return fail(p, CTE_E_PROTOCOL);
    if ((unsigned long long)n > p->lim.max_bulk) return fail(p, CTE_E_LIMIT);
    if (kind == CTE_REPLY_VERBATIM && n < 4) return fail(p, CTE_E_PROTOCOL);
    cte_reply_t *r = cte__reply_new(kind);
    size_t first = (size_t)n < BULK_FIRST_CHUNK ? (size_t)n : BULK_FIRST_CHUNK;
    p->sinking = p->sink && p->depth == 0 && kind == CTE_REPLY_BULK;
    if (r && p->sinking) { /* the bytes go to the caller's buffer: no str */
        p->bulk = r;
        p->bulk_left = (size_t)n;
        p->crlf_left = 2;
        p->verbatim = 0;
        return 0;
    }
    if (r) r->str = cte__malloc(first + 1);
    if (!r || !r->str) {
        cte_reply_free(r);
        return fail(p, CTE_E_NOMEM);
    }
    r->cap = first + 1;
    p->bulk = r;
    p->bulk_left = (size_t)n;
    p->crlf_left = 2;
    p->verbatim = kind == CTE_REPLY_VERBATIM;
    return 0;
}

/* Pushes an aggregate of n announced elements; returns 0, or 2 with *done for an empty one. */
static int start_aggregate(cte_parser_t *p, cte_reply_kind_t kind, long long n, int attr,
                           cte_reply_t **done)
{
    int pairs = kind == CTE_REPLY_MAP;
    if (n < 0) return fail(p, CTE_E_PROTOCOL);
    if ((unsigned long long)n > p->lim.max_elems >> pairs) return fail(p, CTE_E_LIMIT);
    if (p->depth == CTE_PARSER_MAX_DEPTH) return fail(p, CTE_E_LIMIT);
    cte_reply_t *r = cte__reply_new(kind);
    if (!r) return fail(p, CTE_E_NOMEM);
    if (n == 0 && !attr) {
        *done = r;
        return 2;
    }
    if (n == 0) { /* an empty attribute: nothing to keep */
        cte_reply_free(r);
        return 0;
    }
    p->stack[p->depth++] = (cte_parser_frame_t){r, (size_t)n << pairs, attr};
    return 0;
}

static int parse_double(const char *s, size_t n, double *out)
{
    char tmp[512];
    char *end;

    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (isspace((unsigned char)tmp[0])) return -1;
    errno = 0;
    *out = strtod(tmp, &end);
    return *end == '\0' ? 0 : -1;
}

static int scalar(cte_parser_t *p, cte_reply_kind_t kind, const char *s, size_t n,
                  cte_reply_t **done)
{
    cte_reply_t *r = cte__reply_new(kind);
    if (!r || set_str(r, s, n) != 0) {
        cte_reply_free(r);
        return fail(p, CTE_E_NOMEM);
    }
    *done = r;
    return 2;
}

static int bignum_ok(const char *s, size_t n)
{
    size_t i = n > 0 && s[0] == '-';
    if (i == n) return 0;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* "&<len>,<index>": a bulk whose bytes the server wrote in the reply data area at index (mod
 * its size), followed by a byte the client may set to NUL. The node borrows them (or, sunk,
 * they are copied to the sink); p->area_end moves past them. */
static int area_bulk(cte_parser_t *p, const char *s, size_t n, cte_reply_t **done)
{
    const char *comma = memchr(s, ',', n);
    long long len, idx;
    if (!p->area || !comma || parse_ll(s, (size_t)(comma - s), &len) != 0 ||
        parse_ll(comma + 1, (size_t)(s + n - comma - 1), &idx) != 0 || len < 0 || idx < 0)
        return fail(p, CTE_E_PROTOCOL);
    if ((unsigned long long)len > p->lim.max_bulk) return fail(p, CTE_E_LIMIT);
    uint64_t pos = (uint64_t)idx & (p->area_size - 1);
    if ((uint64_t)len >= p->area_size - pos) return fail(p, CTE_E_PROTOCOL);
    cte_reply_t *r = cte__reply_new(CTE_REPLY_BULK);
    if (!r) return fail(p, CTE_E_NOMEM);
    char *at = p->area + pos;
    r->len = (size_t)len;
    if (p->sink && p->depth == 0) {
        memcpy(p->sink, at, r->len < p->sink_cap ? r->len : p->sink_cap);
    } else {
        at[len] = '\0';
        r->str = at;
        r->borrowed = 1;
    }
    uint64_t end = (uint64_t)idx + (uint64_t)len + 1;
    if (end > p->area_end) p->area_end = end;
    if (!p->reply_refs++) p->reply_first = (uint64_t)idx;
    *done = r;
    return 2;
}

/* One line without its CRLF. Returns 0 (a payload or aggregate started), 2 with *done (a
 * complete node), or a failure. */
static int parse_line(cte_parser_t *p, const char *s, size_t n, cte_reply_t **done)
{
    const char *b = s + 1;
    size_t bn = n - 1;
    long long v;

    if (n == 0) return fail(p, CTE_E_PROTOCOL);
    switch (s[0]) {
    case '+':
        return scalar(p, CTE_REPLY_STRING, b, bn, done);
    case '-':
        return scalar(p, CTE_REPLY_ERROR, b, bn, done);
    case '(':
        if (!bignum_ok(b, bn)) return fail(p, CTE_E_PROTOCOL);
        return scalar(p, CTE_REPLY_BIGNUM, b, bn, done);
    case '&':
        return area_bulk(p, b, bn, done);
    case ':':
    case ',':
    case '#':
    case '_':
        break;
    case '$':
    case '=':
    case '!':
    case '*':
    case '%':
    case '~':
    case '>':
    case '|':
        if (parse_ll(b, bn, &v) != 0) return fail(p, CTE_E_PROTOCOL);
        if (v == -1 && (s[0] == '$' || s[0] == '*')) break;
        if (s[0] == '$') return start_bulk(p, CTE_REPLY_BULK, v);
        if (s[0] == '=') return start_bulk(p, CTE_REPLY_VERBATIM, v);
        if (s[0] == '!') return start_bulk(p, CTE_REPLY_ERROR, v);
        if (s[0] == '*') return start_aggregate(p, CTE_REPLY_ARRAY, v, 0, done);
        if (s[0] == '%') return start_aggregate(p, CTE_REPLY_MAP, v, 0, done);
        if (s[0] == '~') return start_aggregate(p, CTE_REPLY_SET, v, 0, done);
        if (s[0] == '>') return start_aggregate(p, CTE_REPLY_PUSH, v, 0, done);
        return start_aggregate(p, CTE_REPLY_MAP, v, 1, done);
    default:
        return fail(p, CTE_E_PROTOCOL);
    }
    cte_reply_t *r;
    if (s[0] == '$' || s[0] == '*' || s[0] == '_') {
        if (s[0] == '_' && bn != 0) return fail(p, CTE_E_PROTOCOL);
        r = cte__reply_new(CTE_REPLY_NULL);
    } else if (s[0] == ':') {
        if (parse_ll(b, bn, &v) != 0) return fail(p, CTE_E_PROTOCOL);
        if ((r = cte__reply_new(CTE_REPLY_INTEGER))) r->ival = v;
    } else if (s[0] == '#') {
        if (bn != 1 || (b[0] != 't' && b[0] != 'f')) return fail(p, CTE_E_PROTOCOL);
        if ((r = cte__reply_new(CTE_REPLY_BOOL))) r->ival = b[0] == 't';
    } else {
        double d;
        if (parse_double(b, bn, &d) != 0) return fail(p, CTE_E_PROTOCOL);
        if ((r = cte__reply_new(CTE_REPLY_DOUBLE)) && set_str(r, b, bn) != 0) {
            cte_reply_free(r);
            r = NULL;
        }
        if (r) r->dval = d;
    }
    if (!r) return fail(p, CTE_E_NOMEM);
    *done = r;
    return 2;
}

/* Copies payload bytes into p->bulk, growing it as they arrive. */
static int bulk_take(cte_parser_t *p, const char *buf, size_t n)
{
    cte_reply_t *r = p->bulk;
    if (p->sinking) {
        if (r->len < p->sink_cap) {
            size_t room = p->sink_cap - r->len;
            memcpy(p->sink + r->len, buf, n < room ? n : room);
        }
        r->len += n;
        p->bulk_left -= n;
        return 0;
    }
    if (r->len + n + 1 > r->cap) {
        size_t need = r->len + n + 1, cap = r->cap * 2;
        if (cap < need) cap = need;
        if (cap > r->len + p->bulk_left + 1) cap = r->len + p->bulk_left + 1;
        char *s = cte__realloc(r->str, cap);
        if (!s) return fail(p, CTE_E_NOMEM);
        r->str = s;
        r->cap = cap;
    }
    memcpy(r->str + r->len, buf, n);
    r->len += n;
    p->bulk_left -= n;
    return 0;
}

size_t cte__parser_sink_room(const cte_parser_t *p, char **dst)
{
    if (p->err || !p->bulk || !p->sinking || p->bulk->len >= p->sink_cap) return 0;
    size_t room = p->sink_cap - p->bulk->len;
    *dst = p->sink + p->bulk->len;
    return room < p->bulk_left ? room : p->bulk_left;
}

void cte__parser_sunk(cte_parser_t *p, size_t n)
{
    assert(p->sinking && n <= p->bulk_left && p->bulk->len + n <= p->sink_cap);
    p->bulk->len += n;
    p->bulk_left -= n;
}

/* The payload is complete: terminate it and split off a verbatim string's format. */
static void bulk_finish(cte_parser_t *p, cte_reply_t *r)
{
    if (p->sinking) {
        p->sinking = 0;
        return;
    }
    r->str[r->len] = '\0';
    if (!p->verbatim) return;
    memcpy(r->fmt, r->str, 3);
    r->fmt[3] = '\0';
    memmove(r->str, r->str + 4, r->len - 4 + 1);
    r->len -= 4;
}

static int line_keep(cte_parser_t *p, const char *buf, size_t n)
{
    if (p->line_len + n > p->lim.max_line + 2) return fail(p, CTE_E_LIMIT);
    if (p->line_len + n > p->line_cap) {
        size_t cap = p->line_cap ? p->line_cap * 2 : 128;
        while (cap < p->line_len + n) cap *= 2;
        char *l = cte__realloc(p->line, cap);
        if (!l) return fail(p, CTE_E_NOMEM);
        p->line = l;
        p->line_cap = cap;
    }
    memcpy(p->line + p->line_len, buf, n);
    p->line_len += n;
    return 0;
}

/* The payload state: returns 1 when the payload and its CRLF are complete. */
static int feed_bulk(cte_parser_t *p, const char *buf, size_t len, size_t *pos)
{
    size_t n = len - *pos < p->bulk_left ? len - *pos : p->bulk_left;
    if (n && bulk_take(p, buf + *pos, n) != 0) return p->err;
    *pos += n;
    if (p->bulk_left) return 0;
    while (p->crlf_left && *pos < len) {
        if (buf[*pos] != (p->crlf_left == 2 ? '\r' : '\n')) return fail(p, CTE_E_PROTOCOL);
        (*pos)++;
        p->crlf_left--;
    }
    return p->crlf_left == 0;
}

int cte__parser_feed(cte_parser_t *p, const char *buf, size_t len, size_t *used, cte_reply_t **out)
{
    size_t pos = 0;
    int rc;

    *out = NULL;
    if (p->err) return p->err;
    for (;;) {
        cte_reply_t *node = NULL;
        if (p->bulk) {
            if ((rc = feed_bulk(p, buf, len, &pos)) < 0) return rc;
            if (rc == 0) break;
            node = p->bulk;
            p->bulk = NULL;
            bulk_finish(p, node);
        } else {
            if (pos == len) break;
            const char *nl = memchr(buf + pos, '\n', len - pos);
            if (!nl) {
                if ((rc = line_keep(p, buf + pos, len - pos)) < 0) return rc;
                pos = len;
                break;
            }
            size_t n = (size_t)(nl - (buf + pos)) + 1;
            const char *line = buf + pos;
            if (p->line_len) {
                if ((rc = line_keep(p, buf + pos, n)) < 0) return rc;
                line = p->line;
                n = p->line_len;
            } else if (n > p->lim.max_line + 2) {
                return fail(p, CTE_E_LIMIT);
            }
            pos += (size_t)(nl - (buf + pos)) + 1;
            p->line_len = 0;
            if (n < 3 || line[n - 2] != '\r') return fail(p, CTE_E_PROTOCOL);
            if ((rc = parse_line(p, line, n - 2, &node)) < 0) return rc;
            if (rc == 0) continue;
        }
        if ((rc = attach(p, node, out)) < 0) return rc;
        if (rc == 1) {
            *used = pos;
            return 1;
        }
    }
    *used = len;
    return 0;
}
