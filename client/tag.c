/* tag.c - libcte's calls for the tag commands (docs/commands.md): each frames its arguments,
 * makes one round trip (or queues one request) and turns the reply into typed results. Reply
 * shapes are checked, never assumed: anything unexpected is CTE_E_TYPE. Numbers are formatted
 * into stack buffers, which are copied into the request (they are far below CTE_COPY_MAX), so
 * only the payload is referenced. Runs on the connection's thread. */
#include "alloc.h"
#include "conn_int.h"
#include "reply.h"
#include "tag_int.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cte__num_t num_t;

static num_t u64(uint64_t v)
{
    num_t n;
    char tmp[24], *p = tmp + sizeof tmp;
    do *--p = (char)('0' + v % 10);
    while (v /= 10);
    size_t len = (size_t)(tmp + sizeof tmp - p);
    memcpy(n.s, p, len);
    n.s[len] = '\0';
    return n;
}

static num_t i64(int64_t v)
{
    num_t n;
    snprintf(n.s, sizeof n.s, "%" PRId64, v);
    return n;
}

static num_t dbl(double v)
{
    num_t n;
    snprintf(n.s, sizeof n.s, "%.17g", v);
    return n;
}

static int bad_type(cte_conn_t *c)
{
    return cte__set_error(c, CTE_E_TYPE, "unexpected reply type");
}

/* A round trip whose reply must be an integer (nil: CTE_E_NOTFOUND). */
static int call_int(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                    uint64_t *out)
{
    const cte_reply_t *r;
    int rc = cte__roundtrip(c, argc, argv, lens, &r);
    if (rc) return rc;
    if (r->kind == CTE_REPLY_NULL) return CTE_E_NOTFOUND;
    if (r->kind != CTE_REPLY_INTEGER || r->ival < 0) return bad_type(c);
    if (out) *out = (uint64_t)r->ival;
    return 0;
}

/* A round trip whose reply the caller takes. */
static int call_take(cte_conn_t *c, int argc, const char *const *argv, cte_reply_kind_t want,
                     cte_reply_t **out)
{
    const cte_reply_t *r;
    *out = NULL;
    int rc = cte__roundtrip(c, argc, argv, NULL, &r);
    if (rc) return rc;
    if (r->kind != want) return bad_type(c);
    *out = cte__take_last(c);
    return *out ? 0 : CTE_E_NOMEM;
}

static int names_ok(const char *tag, const char *blob)
{
    return tag && blob;
}

/* TPUT's arguments; returns argc. */
int cte__put_argv(const char **argv, size_t *lens, const char *tag, const char *blob, num_t *off,
                  const void *data, size_t len, double score, num_t *sc)
{
    argv[0] = "TPUT", argv[1] = tag, argv[2] = blob, argv[3] = off->s, argv[4] = data;
    lens[0] = 4, lens[1] = strlen(tag), lens[2] = strlen(blob), lens[3] = strlen(off->s);
    lens[4] = len;
    if (score < 0) return 5;
    *sc = dbl(score);
    argv[5] = sc->s, lens[5] = strlen(sc->s);
    return 6;
}

int cte_put(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, const void *data,
            size_t len, double score, uint64_t *size)
{
    const char *argv[6];
    size_t lens[6];
    num_t o = u64(off), sc;
    if (!names_ok(tag, blob) || (!data && len) || score > 1) return CTE_E_INVAL;
    int argc = cte__put_argv(argv, lens, tag, blob, &o, data ? data : "", len, score, &sc);
    return call_int(c, argc, argv, lens, size);
}

int cte_put_async(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, const void *data,
                  size_t len, double score, cte_done_fn *fn, void *ud)
{
    const char *argv[6];
    size_t lens[6];
    num_t o = u64(off), sc;
    if (!names_ok(tag, blob) || (!data && len) || score > 1) return CTE_E_INVAL;
    int argc = cte__put_argv(argv, lens, tag, blob, &o, data ? data : "", len, score, &sc);
    return cte_command_async(c, argc, argv, lens, fn, ud);
}

/* TGET's arguments; returns argc. */
int cte__get_argv(const char **argv, const char *tag, const char *blob, num_t *off, num_t *cnt,
                  uint64_t o, int64_t count)
{
    *off = u64(o);
    *cnt = i64(count);
    argv[0] = "TGET", argv[1] = tag, argv[2] = blob, argv[3] = off->s, argv[4] = cnt->s;
    return count < 0 ? 4 : 5;
}

int cte_get_view(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, int64_t count,
                 const void **data, size_t *len)
{
    const char *argv[5];
    num_t o, n;
    const cte_reply_t *r;
    *data = NULL;
    *len = 0;
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    int rc = cte__roundtrip(c, cte__get_argv(argv, tag, blob, &o, &n, off, count), argv, NULL, &r);
    if (rc) return rc;
    if (r->kind == CTE_REPLY_NULL) return CTE_E_NOTFOUND;
    if (r->kind != CTE_REPLY_BULK) return bad_type(c);
    *data = r->str;
    *len = r->len;
    return 0;
}

int cte_get(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, int64_t count,
            void *buf, size_t cap, size_t *len)
{
    const char *argv[5];
    num_t o, n;
    const cte_reply_t *r;
    *len = 0;
    if (!names_ok(tag, blob) || (!buf && cap)) return CTE_E_INVAL;
    int argc = cte__get_argv(argv, tag, blob, &o, &n, off, count);
    /* the payload is parsed straight into buf: no copy through the library */
    int rc = cte__roundtrip_into(c, argc, argv, NULL, cap ? buf : NULL, cap, &r);
    if (rc) return rc;
    if (r->kind == CTE_REPLY_NULL) return CTE_E_NOTFOUND;
    if (r->kind != CTE_REPLY_BULK) return bad_type(c);
    *len = r->len;
    if (r->str && r->len) memcpy(buf, r->str, r->len < cap ? r->len : cap); /* cap 0: none */
    return r->len > cap ? CTE_E_TRUNCATED : 0;
}

int cte_get_async(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, int64_t count,
                  cte_done_fn *fn, void *ud)
{
    const char *argv[5];
    num_t o, n;
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    return cte_command_async(c, cte__get_argv(argv, tag, blob, &o, &n, off, count), argv, NULL, fn,
                             ud);
}

int cte_size(cte_conn_t *c, const char *tag, const char *blob, uint64_t *size)
{
    const char *argv[] = {"TSIZE", tag, blob};
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    return call_int(c, 3, argv, NULL, size);
}

int cte_truncate(cte_conn_t *c, const char *tag, const char *blob, uint64_t size, uint64_t *newsize)
{
    num_t n = u64(size);
    const char *argv[] = {"TTRUNCATE", tag, blob, n.s};
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    return call_int(c, 4, argv, NULL, newsize);
}

int cte_len(cte_conn_t *c, const char *tag, uint64_t *n)
{
    const char *argv[] = {"TLEN", tag};
    if (!tag) return CTE_E_INVAL;
    return call_int(c, 2, argv, NULL, n);
}

int cte_delete(cte_conn_t *c, const char *tag, const char *const *blobs, size_t n,
               uint64_t *removed)
{
    if (!tag || n == 0 || !blobs || n > INT32_MAX - 2) return CTE_E_INVAL;
    const char **argv = cte__malloc((n + 2) * sizeof *argv);
    if (!argv) return CTE_E_NOMEM;
    argv[0] = "TDEL";
    argv[1] = tag;
    memcpy(argv + 2, blobs, n * sizeof *argv);
    int rc = call_int(c, (int)n + 2, argv, NULL, removed);
    free(argv);
    return rc;
}

/* A score as RESP3 sends it (double) or RESP2 (bulk text). */
static int reply_score(const cte_reply_t *r, double *out)
{
    char *end;
    if (r->kind == CTE_REPLY_DOUBLE || r->kind == CTE_REPLY_INTEGER) {
        *out = cte_reply_double(r);
        return 0;
    }
    if (r->kind != CTE_REPLY_BULK && r->kind != CTE_REPLY_STRING) return -1;
    if (r->len == 0) return -1;
    *out = strtod(r->str, &end);
    return *end ? -1 : 0;
}

int cte_score(cte_conn_t *c, const char *tag, const char *blob, double *score)
{
    const char *argv[] = {"TSCORE", tag, blob};
    const cte_reply_t *r;
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    int rc = cte__roundtrip(c, 3, argv, NULL, &r);
    if (rc) return rc;
    if (r->kind == CTE_REPLY_NULL) return CTE_E_NOTFOUND;
    return reply_score(r, score) == 0 ? 0 : bad_type(c);
}

int cte_reorg(cte_conn_t *c, const char *tag, const char *blob, double score, const char **tier)
{
    num_t s = dbl(score);
    const char *argv[] = {"REORG", tag, blob, s.s};
    const cte_reply_t *r;
    *tier = NULL;
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    int rc = cte__roundtrip(c, 4, argv, NULL, &r);
    if (rc) return rc;
    if (r->kind == CTE_REPLY_NULL) return CTE_E_NOTFOUND;
    if (r->kind != CTE_REPLY_BULK && r->kind != CTE_REPLY_STRING) return bad_type(c);
    *tier = r->str;
    return 0;
}

/* One TINFO field into info; unknown fields are ignored (newer servers may add some). */
static int info_field(cte_blob_info_t *info, const cte_reply_t *k, const cte_reply_t *v)
{
    const char *name = k->str;
    if (!name) return -1;
    if (!strcmp(name, "score")) return reply_score(v, &info->score);
    if (!strcmp(name, "tier")) {
        if (!v->str) return -1;
        snprintf(info->tier, sizeof info->tier, "%s", v->str);
        return 0;
    }
    static const struct {
        const char *name;
        size_t off;
        int is_signed;
    } ints[] = {
        {"size", offsetof(cte_blob_info_t, size), 0},
        {"ctime", offsetof(cte_blob_info_t, ctime), 1},
        {"mtime", offsetof(cte_blob_info_t, mtime), 1},
        {"atime", offsetof(cte_blob_info_t, atime), 1},
        {"reads", offsetof(cte_blob_info_t, reads), 0},
        {"writes", offsetof(cte_blob_info_t, writes), 0},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (strcmp(name, ints[i].name)) continue;
        if (v->kind != CTE_REPLY_INTEGER) return -1;
        if (ints[i].is_signed)
            *(int64_t *)((char *)info + ints[i].off) = v->ival;
        else
            *(uint64_t *)((char *)info + ints[i].off) = (uint64_t)v->ival;
    }
    return 0;
}

int cte_info(cte_conn_t *c, const char *tag, const char *blob, cte_blob_info_t *info)
{
    const char *argv[] = {"TINFO", tag, blob};
    const cte_reply_t *r;
    memset(info, 0, sizeof *info);
    if (!names_ok(tag, blob)) return CTE_E_INVAL;
    int rc = cte__roundtrip(c, 3, argv, NULL, &r);
    if (rc) return rc;
    if (r->kind == CTE_REPLY_NULL) return CTE_E_NOTFOUND;
    if ((r->kind != CTE_REPLY_MAP && r->kind != CTE_REPLY_ARRAY) || r->len % 2) return bad_type(c);
    for (size_t i = 0; i < r->len; i += 2)
        if (info_field(info, r->elem[i], r->elem[i + 1]) != 0) return bad_type(c);
    return 0;
}

int cte_list(cte_conn_t *c, const char *tag, cte_reply_t **names)
{
    const char *argv[] = {"TLIST", tag};
    *names = NULL;
    if (!tag) return CTE_E_INVAL;
    return call_take(c, 2, argv, CTE_REPLY_ARRAY, names);
}

int cte_scan(cte_conn_t *c, const char *tag, uint64_t cursor, const char *match, unsigned count,
             uint64_t *next, cte_reply_t **names)
{
    const char *argv[7] = {"TSCAN", tag};
    num_t cur = u64(cursor), cnt = u64(count);
    const cte_reply_t *r;
    int argc = 3;
    char *end;

    *names = NULL;
    if (!tag) return CTE_E_INVAL;
    argv[2] = cur.s;
    if (match) argv[argc++] = "MATCH", argv[argc++] = match;
    if (count) argv[argc++] = "COUNT", argv[argc++] = cnt.s;
    int rc = cte__roundtrip(c, argc, argv, NULL, &r);
    if (rc) return rc;
    if (r->kind != CTE_REPLY_ARRAY || r->len != 2 || !r->elem[0]->str ||
        r->elem[1]->kind != CTE_REPLY_ARRAY)
        return bad_type(c);
    *next = strtoull(r->elem[0]->str, &end, 10);
    if (*end || !r->elem[0]->len) return bad_type(c);
    cte_reply_t *all = cte__take_last(c);
    if (!all) return CTE_E_NOMEM;
    *names = all->elem[1];
    all->elem[1] = NULL;
    all->len = 1;
    cte_reply_free(all);
    return 0;
}

int cte__query_tags_argv(const char **argv, cte__num_t *l, const char *regex, unsigned limit)
{
    *l = u64(limit);
    argv[0] = "TQUERY", argv[1] = "TAGS", argv[2] = regex, argv[3] = "LIMIT", argv[4] = l->s;
    return limit ? 5 : 3;
}

int cte__query_blobs_argv(const char **argv, cte__num_t *n, const char *tagregex,
                          const char *blobregex, int64_t since, int64_t until, unsigned limit)
{
    int argc = 4;
    n[0] = i64(since), n[1] = i64(until), n[2] = u64(limit);
    argv[0] = "TQUERY", argv[1] = "BLOBS", argv[2] = tagregex, argv[3] = blobregex;
    if (since >= 0) argv[argc++] = "SINCE", argv[argc++] = n[0].s;
    if (until >= 0) argv[argc++] = "UNTIL", argv[argc++] = n[1].s;
    if (limit) argv[argc++] = "LIMIT", argv[argc++] = n[2].s;
    return argc;
}

int cte__search_argv(const char **argv, cte__num_t *l, const char *query, const char *tagregex,
                     const char *blobregex, unsigned limit, int withscores)
{
    int argc = 2;
    *l = u64(limit);
    argv[0] = "TSEARCH", argv[1] = query;
    if (tagregex) argv[argc++] = "TAG", argv[argc++] = tagregex;
    if (blobregex) argv[argc++] = "BLOB", argv[argc++] = blobregex;
    if (limit) argv[argc++] = "LIMIT", argv[argc++] = l->s;
    if (withscores) argv[argc++] = "WITHSCORES";
    return argc;
}

static int query_total(cte_conn_t *c, cte_reply_t **out, uint64_t *total)
{
    const cte_reply_t *first = cte_reply_elem(*out, 0);
    if (!first || first->kind != CTE_REPLY_INTEGER || first->ival < 0) {
        cte_reply_free(*out);
        *out = NULL;
        return bad_type(c);
    }
    if (total) *total = (uint64_t)first->ival;
    return 0;
}

int cte_query_tags(cte_conn_t *c, const char *regex, unsigned limit, uint64_t *total,
                   cte_reply_t **out)
{
    num_t l;
    const char *argv[5];
    if (!regex) return CTE_E_INVAL;
    int rc = call_take(c, cte__query_tags_argv(argv, &l, regex, limit), argv, CTE_REPLY_ARRAY, out);
    return rc ? rc : query_total(c, out, total);
}

int cte_query_blobs(cte_conn_t *c, const char *tagregex, const char *blobregex, int64_t since,
                    int64_t until, unsigned limit, uint64_t *total, cte_reply_t **out)
{
    const char *argv[10];
    num_t n[3];
    *out = NULL;
    if (!tagregex || !blobregex) return CTE_E_INVAL;
    int argc = cte__query_blobs_argv(argv, n, tagregex, blobregex, since, until, limit);
    int rc = call_take(c, argc, argv, CTE_REPLY_ARRAY, out);
    return rc ? rc : query_total(c, out, total);
}

int cte_search(cte_conn_t *c, const char *query, const char *tagregex, const char *blobregex,
               unsigned limit, int withscores, cte_reply_t **out)
{
    const char *argv[9];
    num_t l;
    *out = NULL;
    if (!query) return CTE_E_INVAL;
    int argc = cte__search_argv(argv, &l, query, tagregex, blobregex, limit, withscores);
    return call_take(c, argc, argv, CTE_REPLY_ARRAY, out);
}
