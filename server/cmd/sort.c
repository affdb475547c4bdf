/* server/cmd/sort.c - SORT and SORT_RO.
 *
 * SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
 * [STORE destination], as Redis 7.0's sortCommandGeneric (sort.c), step by step:
 *   1. options are parsed first (a bad LIMIT number or an unknown word wins over WRONGTYPE);
 *      SORT_RO does not know STORE. A BY pattern without '*' means "do not sort" (nosort);
 *      later options override earlier ones, but a nosort BY is never undone by a later BY.
 *   2. the key is looked up as a read (hits, misses, "keymiss"); a missing key sorts as an
 *      empty list; a sorted set is converted to a skiplist, as Redis does (OBJECT ENCODING
 *      shows it). A set with nosort and STORE is sorted ALPHA anyway (binary order), so the
 *      stored list does not depend on the hash order.
 *   3. LIMIT is clamped to the length; lists and sorted sets with nosort load only the range
 *      (walking backwards for DESC), everything else loads every element.
 *   4. unless nosort, each element gets its weight: itself, or the value its BY pattern
 *      names (missing: 0, or "before everything" with ALPHA). Numeric weights are strtod()
 *      over the bytes before any NUL, with errno cleared first (Redis 7.0 does not clear it,
 *      so there a stale ERANGE left by an earlier command can fail a SORT; we do not copy
 *      that). Equal numeric weights compare the elements bytewise. ALPHA compares with
 *      strcoll() in the C locale (bytes up to the first NUL) for replies, bytewise for
 *      STORE, as Redis does. The sort is the C library's qsort, as Redis's, so equal weights
 *      keep the load order where qsort is stable (glibc). Known difference: where Redis sorts
 *      only a LIMIT's slice (BY with a LIMIT) it uses its own partial quicksort, so elements
 *      whose ALPHA BY values are equal (or both missing) may come in another order than
 *      here; numeric ties never differ (they are broken by the element). Sets load in our
 *      hash order, sorted sets by rank (Redis: its dict order), which only shows in such ties.
 *   5. the reply: an array of the elements (or of each GET pattern's value, nil when
 *      missing), or with STORE a list under destination ("sortstore"), the destination
 *      deleted ("del") when the result is empty, and the count.
 *
 * Patterns (BY and GET): "#" is the element; otherwise the first '*' is replaced by the
 * element and the result names a string key, or with "->field" after the '*' a hash field.
 * Pattern lookups are reads too: they count hits and misses as Redis's lookupKeyRead.
 *
 * Memory: one vector of sort_item_t for the loaded elements. Elements and BY values are views
 * into the keyspace, except elements stored as integers (list entries, intset members), whose
 * digits are copied into a chunked arena whose blocks never move. The views stay valid for the
 * whole command: nothing here changes a key before the result is built, and pattern lookups
 * only ever delete a key that is expired, which (time being frozen during a command) was never
 * found alive before. Loop thread only: the comparator reads its options from a file static,
 * as Redis's reads them from the server struct. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/command.h"
#include "server/acl.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_hash.h"
#include "storage/t_list.h"
#include "storage/t_set.h"
#include "storage/t_zset.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ERR_SCORES "ERR One or more scores can't be converted into double"
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* ---- options ---- */

typedef struct sort_opts {
    int desc, alpha, dontsort;
    long long limit_start, limit_count;
    const resp_arg_t *by;    /* NULL: sort by the elements themselves */
    const resp_arg_t *store; /* NULL: reply with the result */
    const resp_arg_t **get;  /* the GET patterns, in order */
    int nget;
} sort_opts_t;

/* 1 if a is the option word lit (any case), compared as Redis's strcasecmp() compares its
 * NUL-terminated arguments: bytes after a NUL do not count. */
static int word_is(const resp_arg_t *a, const char *lit)
{
    return str_eq_nocase(a->ptr, strnlen(a->ptr, a->len), lit);
}

/* Parses argv[2..] as Redis does; replies and returns -1 on an error. o->get is allocated
 * (at most argc entries) whatever the result: the caller frees it. */
static int parse_opts(client_t *c, int readonly, sort_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->limit_count = -1;
    o->get = xmalloc(sizeof(*o->get) * (size_t)c->argc);
    for (int j = 2; j < c->argc; j++) {
        const resp_arg_t *a = &c->argv[j];
        int left = c->argc - j - 1;
        if (word_is(a, "asc")) {
            o->desc = 0;
        } else if (word_is(a, "desc")) {
            o->desc = 1;
        } else if (word_is(a, "alpha")) {
            o->alpha = 1;
        } else if (word_is(a, "limit") && left >= 2) {
            if (arg_ll_or_reply(c, &c->argv[j + 1], &o->limit_start, NULL) ||
                arg_ll_or_reply(c, &c->argv[j + 2], &o->limit_count, NULL))
                return -1;
            j += 2;
        } else if (!readonly && word_is(a, "store") && left >= 1) {
            o->store = &c->argv[++j];
        } else if (word_is(a, "by") && left >= 1) {
            o->by = &c->argv[++j];
            /* Redis looks for the '*' with strchr: bytes after a NUL do not count. */
            size_t n = strnlen(o->by->ptr, o->by->len);
            if (!memchr(o->by->ptr, '*', n)) {
                o->dontsort = 1;
            } else if (srv.cfg.cluster_enabled) {
                /* the keys a pattern names may live on other nodes */
                reply_error(c, "ERR BY option of SORT denied in Cluster mode.");
                return -1;
            } else if (!acl_check_all_keys(c, ACL_KEYS_READ)) {
                reply_error(c, "ERR BY option of SORT denied due to insufficient ACL "
                               "permissions.");
                return -1;
            }
        } else if (word_is(a, "get") && left >= 1) {
            if (srv.cfg.cluster_enabled) {
                reply_error(c, "ERR GET option of SORT denied in Cluster mode.");
                return -1;
            }
            if (!acl_check_all_keys(c, ACL_KEYS_READ)) {
                reply_error(c, "ERR GET option of SORT denied due to insufficient ACL "
                               "permissions.");
                return -1;
            }
            o->get[o->nget++] = &c->argv[++j];
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    return 0;
}

/* ---- the elements ---- */

typedef struct sort_item {
    const char *p; /* the element */
    size_t len;
    union {
        double score;
        struct {
            const char *p; /* NULL: the BY key or field is missing (ALPHA) */
            size_t len;
        } by;
    } u;
} sort_item_t;

/* Blocks for the digits of elements stored as integers: never moved, freed together. */
#define CHUNK_BYTES 4000
typedef struct chunk {
    struct chunk *next;
    size_t used;
    char data[CHUNK_BYTES];
} chunk_t;

typedef struct sort_vec {
    sort_item_t *v;
    long n, cap;
    chunk_t *chunks;
} sort_vec_t;

static void vec_add(sort_vec_t *s, const char *p, size_t len)
{
    sort_item_t *it = &s->v[s->n++];
    it->p = p;
    it->len = len;
    memset(&it->u, 0, sizeof(it->u));
}

/* Adds an element whose bytes live in a caller's buffer (len <= 24): copies them. */
static void vec_add_copy(sort_vec_t *s, const char *p, size_t len)
{
    if (!s->chunks || s->chunks->used + len > CHUNK_BYTES) {
        chunk_t *ch = xmalloc(sizeof(*ch));
        ch->next = s->chunks;
        ch->used = 0;
        s->chunks = ch;
    }
    char *dst = s->chunks->data + s->chunks->used;
    memcpy(dst, p, len);
    s->chunks->used += len;
    vec_add(s, dst, len);
}

static void vec_free(sort_vec_t *s)
{
    while (s->chunks) {
        chunk_t *next = s->chunks->next;
        xfree(s->chunks);
        s->chunks = next;
    }
    xfree(s->v);
}

static void add_list_entry(sort_vec_t *s, const list_entry_t *e)
{
    if (e->p == e->buf)
        vec_add_copy(s, e->p, e->len);
    else
        vec_add(s, e->p, e->len);
}

/* Up to n list elements from index start towards dir. */
static void load_list(sort_vec_t *s, const list_t *l, long long start, int dir, long n)
{
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, l, start, dir);
    while (s->n < n && list_iter_next(&it, &e)) add_list_entry(s, &e);
}

static void load_set(sort_vec_t *s, const set_t *set)
{
    set_iter_t it;
    set_elem_t e;
    set_iter_init(&it, set);
    while (set_iter_next(&it, &e)) {
        if (e.isint)
            vec_add_copy(s, e.p, e.len);
        else
            vec_add(s, e.p, e.len);
    }
    set_iter_deinit(&it);
}

/* n members from rank start (from the highest score if reverse). */
static void load_zset(sort_vec_t *s, const zset_t *z, size_t start, int reverse, long n)
{
    zset_iter_t it;
    zset_entry_t e;
    zset_iter_rank(&it, z, start, reverse);
    while (s->n < n && zset_iter_next(&it, &e)) vec_add(s, e.member, e.len);
}

/* ---- patterns ---- */

/* The value pattern names for element e[0..elen), as Redis's lookupKeyByPattern: 1 with a
 * view in *v, *vlen, or 0 when there is none (no '*' in the pattern, a missing key, field or
 * a key of the wrong type). kb is scratch space for the key name. Like Redis, the pattern is
 * read as a C string where it matters ("#", the '*', the "->"). */
static int pattern_value(client_t *c, const resp_arg_t *pat, const char *e, size_t elen, buf_t *kb,
                         const char **v, size_t *vlen)
{
    const char *p = pat->ptr;
    size_t len = pat->len, clen = strnlen(p, len);
    if (clen == 1 && p[0] == '#') {
        *v = e;
        *vlen = elen;
        return 1;
    }
    const char *star = memchr(p, '*', clen);
    if (!star) return 0;
    size_t prefix = (size_t)(star - p), fieldlen = 0;
    const char *field = NULL;
    for (size_t i = prefix + 1; i + 2 < clen; i++) {
        if (p[i] == '-' && p[i + 1] == '>') {
            field = p + i + 2;
            fieldlen = len - i - 2;
            break;
        }
    }
    size_t postfix = len - prefix - 1 - (field ? fieldlen + 2 : 0);
    buf_clear(kb);
    buf_append(kb, p, prefix);
    buf_append(kb, e, elen);
    buf_append(kb, star + 1, postfix);
    resp_arg_t key = {kb->data, kb->len};
    kv_t *kv = lookup_read(c, &key);
    if (!kv) return 0;
    if (field) {
        if (kv->val->type != OBJ_HASH) return 0;
        return hash_get((hash_t *)(void *)kv->val, field, fieldlen, v, vlen);
    }
    if (kv->val->type != OBJ_STRING) return 0;
    const str_obj_t *s = (const str_obj_t *)(const void *)kv->val;
    *v = s->data;
    *vlen = s->len;
    return 1;
}

/* ---- weights and comparison ---- */

/* strtod() over the bytes before the first NUL, as Redis over its NUL-terminated string:
 * 0 if they are not all a number, if it overflows or underflows (ERANGE) or is NaN. */
static int parse_weight(const char *p, size_t len, double *out)
{
    long long ll;
    if (len <= 20 && str_to_ll(p, len, &ll)) { /* the common case, without strtod: both */
        *out = (double)ll;                     /* round to nearest, so the same double */
        return 1;
    }
    char small[128];
    const char *nul = memchr(p, '\0', len);
    size_t n = nul ? (size_t)(nul - p) : len;
    char *s = n < sizeof(small) ? small : xmalloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    int ok = *end == '\0' && errno != ERANGE && !isnan(*out);
    if (s != small) xfree(s);
    return ok;
}

static struct {
    int desc, alpha, bypattern, store;
} cmp_opts; /* read by compare_items (qsort has no context argument) */

static int cmp_binary(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int r = n ? memcmp(a, b, n) : 0;
    if (r) return r;
    return al < bl ? -1 : al > bl;
}

/* strcoll() in the C locale over NUL-terminated copies: strcmp up to the first NUL. */
static int cmp_coll(const char *a, size_t al, const char *b, size_t bl)
{
    for (size_t i = 0;; i++) {
        unsigned ca = i < al ? (unsigned char)a[i] : 0, cb = i < bl ? (unsigned char)b[i] : 0;
        if (ca != cb) return ca < cb ? -1 : 1;
        if (!ca) return 0;
    }
}

static int compare_items(const void *x, const void *y)
{
    const sort_item_t *a = x, *b = y;
    int cmp;
    if (!cmp_opts.alpha) {
        if (a->u.score > b->u.score)
            cmp = 1;
        else if (a->u.score < b->u.score)
            cmp = -1;
        else
            cmp = cmp_binary(a->p, a->len, b->p, b->len);
    } else if (cmp_opts.bypattern) {
        if (!a->u.by.p || !b->u.by.p)
            cmp = a->u.by.p == b->u.by.p ? 0 : (!a->u.by.p ? -1 : 1);
        else if (cmp_opts.store)
            cmp = cmp_binary(a->u.by.p, a->u.by.len, b->u.by.p, b->u.by.len);
        else
            cmp = cmp_coll(a->u.by.p, a->u.by.len, b->u.by.p, b->u.by.len);
    } else if (cmp_opts.store) {
        cmp = cmp_binary(a->p, a->len, b->p, b->len);
    } else {
        cmp = cmp_coll(a->p, a->len, b->p, b->len);
    }
    return cmp_opts.desc ? -cmp : cmp;
}

/* Gives every element its weight; 0, or -1 when a numeric weight is not a number. */
static int load_weights(client_t *c, const sort_opts_t *o, sort_vec_t *s, buf_t *kb)
{
    int err = 0;
    for (long j = 0; j < s->n; j++) {
        sort_item_t *it = &s->v[j];
        const char *v = it->p;
        size_t vlen = it->len;
        if (o->by && !pattern_value(c, o->by, it->p, it->len, kb, &v, &vlen)) continue;
        if (o->alpha) {
            if (o->by) {
                it->u.by.p = v;
                it->u.by.len = vlen;
            }
        } else if (!parse_weight(v, vlen, &it->u.score)) {
            err = 1; /* Redis goes on looking up the rest: so do we (keyspace hit counts) */
        }
    }
    return err ? -1 : 0;
}

/* ---- output ---- */

static void reply_result(client_t *c, const sort_opts_t *o, const sort_vec_t *s, long start,
                         long end, long outputlen, buf_t *kb)
{
    reply_array(c, outputlen);
    for (long j = start; j <= end; j++) {
        const sort_item_t *it = &s->v[j];
        if (!o->nget) reply_bulk(c, it->p, it->len);
        for (int g = 0; g < o->nget; g++) {
            const char *v;
            size_t vlen;
            if (pattern_value(c, o->get[g], it->p, it->len, kb, &v, &vlen))
                reply_bulk(c, v, vlen);
            else
                reply_null(c);
        }
    }
}

/* Builds the result list and stores it (or deletes the destination when it is empty). */
static void store_result(client_t *c, const sort_opts_t *o, const sort_vec_t *s, long start,
                         long end, long outputlen, buf_t *kb)
{
    const resp_arg_t *dst = o->store;
    list_t *l = list_new();
    int oom = 0;
    for (long j = start; j <= end && !oom; j++) {
        const sort_item_t *it = &s->v[j];
        if (!o->nget) oom |= list_push(l, LIST_TAIL, it->p, it->len) < 0;
        for (int g = 0; g < o->nget && !oom; g++) {
            const char *v = "";
            size_t vlen = 0;
            pattern_value(c, o->get[g], it->p, it->len, kb, &v, &vlen);
            oom |= list_push(l, LIST_TAIL, v, vlen) < 0;
        }
    }
    if (oom) {
        list_free(l);
        reply_error(c, ERR_OOM);
        return;
    }
    if (outputlen) {
        db_set(c->db, dst->ptr, dst->len, list_obj(l), 0);
        server_key_changed(c, c->db, dst->ptr, dst->len, NOTIFY_LIST, "sortstore");
        srv.dirty += outputlen - 1; /* Redis counts every stored element */
    } else {
        list_free(l);
        if (db_delete(c->db, dst->ptr, dst->len))
            server_key_changed(c, c->db, dst->ptr, dst->len, NOTIFY_GENERIC, "del");
    }
    reply_int(c, outputlen);
}

/* ---- SORT ---- */

static long sort_length(const obj_t *o)
{
    if (!o) return 0;
    switch (o->type) {
    case OBJ_LIST:
        return (long)list_len(list_of((obj_t *)o));
    case OBJ_SET:
        return (long)set_length((const set_t *)(const void *)o);
    default:
        return (long)zset_length((const zset_t *)(const void *)o);
    }
}

/* Loads the elements of val (NULL: a missing key) to sort into s (see step 3 above); adjusts
 * *start and *end when only the range was loaded. */
static void load_elements(const obj_t *val, const sort_opts_t *o, sort_vec_t *s, long *start,
                          long *end)
{
    if (!val) return;
    if (val->type == OBJ_LIST && o->dontsort) {
        const list_t *l = list_of((obj_t *)val);
        if (*end >= *start) { /* else nothing to load, and Redis leaves start and end as is */
            long long first = o->desc ? (long long)list_len(l) - *start - 1 : *start;
            load_list(s, l, first, o->desc ? LIST_HEAD : LIST_TAIL, s->cap);
            *end -= *start;
            *start = 0;
        }
    } else if (val->type == OBJ_LIST) {
        load_list(s, list_of((obj_t *)val), 0, LIST_TAIL, s->cap);
    } else if (val->type == OBJ_SET) {
        load_set(s, (const set_t *)(const void *)val);
    } else if (o->dontsort) {
        load_zset(s, (const zset_t *)(const void *)val, (size_t)*start, o->desc, s->cap);
        *end -= *start;
        *start = 0;
    } else {
        load_zset(s, (const zset_t *)(const void *)val, 0, 0, s->cap);
    }
}

static void sort_generic(client_t *c, int readonly)
{
    sort_opts_t o;
    if (parse_opts(c, readonly, &o)) {
        xfree(o.get);
        return;
    }
    kv_t *kv = lookup_read(c, &c->argv[1]);
    obj_t *val = kv ? kv->val : NULL;
    if (val && val->type != OBJ_LIST && val->type != OBJ_SET && val->type != OBJ_ZSET) {
        xfree(o.get);
        reply_wrongtype(c);
        return;
    }
    /* A set in hash order would make the stored list differ between replicas, or a script's
     * result depend on it: sort it (as Redis does for STORE and for scripts). */
    if (o.dontsort && val && val->type == OBJ_SET && (o.store || (c->flags & CLIENT_SCRIPT))) {
        o.dontsort = 0;
        o.alpha = 1;
        o.by = NULL;
    }
    if (val && val->type == OBJ_ZSET) zset_convert((zset_t *)(void *)val, ENC_SKIPLIST);

    /* LIMIT, clamped as Redis clamps it. */
    long vectorlen = sort_length(val);
    long start = o.limit_start < 0 ? 0 : o.limit_start > vectorlen ? vectorlen : o.limit_start;
    long count = o.limit_count < -1 ? -1 : o.limit_count > vectorlen ? vectorlen : o.limit_count;
    long end = count < 0 ? vectorlen - 1 : start + count - 1;
    if (start >= vectorlen) {
        start = vectorlen - 1;
        end = vectorlen - 2;
    }
    if (end >= vectorlen) end = vectorlen - 1;
    if (val && val->type != OBJ_SET && o.dontsort && (start != 0 || end != vectorlen - 1))
        vectorlen = end - start + 1;

    sort_vec_t s = {.v = vectorlen ? xmalloc(sizeof(sort_item_t) * (size_t)vectorlen) : NULL,
                    .cap = vectorlen};
    load_elements(val, &o, &s, &start, &end);

    buf_t kb;
    buf_init(&kb);
    int conv_err = 0;
    if (!o.dontsort) {
        conv_err = load_weights(c, &o, &s, &kb) < 0;
        cmp_opts.desc = o.desc;
        cmp_opts.alpha = o.alpha;
        cmp_opts.bypattern = o.by != NULL;
        cmp_opts.store = o.store != NULL;
        if (s.n > 1) qsort(s.v, (size_t)s.n, sizeof(sort_item_t), compare_items);
    }

    long outputlen = (o.nget ? o.nget : 1) * (end - start + 1);
    if (conv_err)
        reply_error(c, ERR_SCORES);
    else if (!o.store)
        reply_result(c, &o, &s, start, end, outputlen, &kb);
    else
        store_result(c, &o, &s, start, end, outputlen, &kb);
    buf_deinit(&kb);
    vec_free(&s);
    xfree(o.get);
}

static void sort_cmd(client_t *c)
{
    sort_generic(c, 0);
}

static void sort_ro_cmd(client_t *c)
{
    sort_generic(c, 1);
}

/* Key positions of SORT as Redis's sortGetKeys: the key, and the argument after the last
 * STORE, skipping the arguments of LIMIT, GET and BY. (After STORE the loop goes on at the
 * destination itself, as Redis's does.) */
static int sort_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    static const struct {
        const char *name;
        int skip;
    } skip[] = {{"limit", 2}, {"get", 1}, {"by", 1}};
    int n = 0, store = 0;
    if (max < 1) return 0;
    pos[n++] = 1;
    for (int i = 2; i < argc; i++) {
        int known = 0;
        for (size_t j = 0; j < sizeof(skip) / sizeof(skip[0]); j++) {
            if (word_is(&argv[i], skip[j].name)) {
                i += skip[j].skip;
                known = 1;
                break;
            }
        }
        if (!known && word_is(&argv[i], "store") && i + 1 < argc) store = i + 1;
    }
    if (store && n < max) pos[n++] = store;
    return n;
}

/* ---- the table ---- */

/* As Redis's: the sorted key, then BY/GET keys and the STORE key, which no position finds
 * (their notes are in server/cmd_docs.c). */
static const cmd_key_spec_t sort_specs[] = {{1, NULL, 0, 1}, {.unknown = 1}, {.unknown = 1}, {0}};
static const cmd_key_spec_t sort_ro_specs[] = {{1, NULL, 0, 1}, {.unknown = 1}, {0}};

/* The keys sort_getkeys finds: the sorted key, read, then the STORE key, written. */
static void sort_keyflags(int argc, const resp_arg_t *argv, int i, char *out)
{
    (void)argc, (void)argv;
    strcpy(out, i == 0 ? "RO access" : "OW update");
}

#define SORT_CPLX                                                                                  \
    "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "       \
    "number of returned elements. When the elements are not sorted, complexity is O(N)."

command_t cmds_sort[] = {
    {.name = "sort",
     .proc = sort_cmd,
     .arity = -2,
     .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Sort the elements in a list, set or sorted set",
     .complexity = SORT_CPLX,
     .acl = "@set @sortedset @list @dangerous",
     .getkeys = sort_getkeys,
     .key_flags = "RO access|RO access|OW update",
     .key_specs = sort_specs,
     .keyflags = sort_keyflags},
    {.name = "sort_ro",
     .proc = sort_ro_cmd,
     .arity = -2,
     .flags = CMD_READONLY | CMD_MOVABLE_KEYS,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "generic",
     .since = "7.0.0",
     .summary = "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
     .complexity = SORT_CPLX,
     .acl = "@set @sortedset @list @dangerous",
     .key_flags = "RO access|RO access",
     .key_specs = sort_ro_specs},
    {NULL},
};
