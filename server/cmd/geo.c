/* server/cmd/geo.c - the GEO commands: GEOADD GEODIST GEOHASH GEOPOS GEORADIUS GEORADIUS_RO
 * GEORADIUSBYMEMBER GEORADIUSBYMEMBER_RO GEOSEARCH GEOSEARCHSTORE.
 *
 * A geo index is a sorted set whose scores are 52-bit geohashes (storage/geohash.h), so the
 * commands are sorted-set commands underneath: GEOADD is ZADD with computed scores (it reuses
 * zsetcmd_add and logs itself as that ZADD in the AOF, as Redis propagates it), and the store
 * variants store their result as ZRANGESTORE does (zsetcmd_store_result). Replies, errors, the
 * order in which arguments are checked, keyspace events ("zadd", "georadiusstore",
 * "geosearchstore", "del") and the order of results are Redis 7.0's (geo.c): distances are
 * bulk strings with four decimals, coordinates "%.17Lf" with trailing zeros cut (a bulk string
 * in RESP2, a double in RESP3).
 *
 * A search reads the score ranges of nine cells (the centre cell and its neighbours, chosen by
 * geo_search_cells), keeps the points inside the shape in the order it met them, then sorts
 * them by distance if asked (COUNT without ANY implies ASC): all of them with the C library's
 * qsort, or, when COUNT cuts the result short, only the first COUNT with psort, Redis's
 * partial quicksort, so that points at the same distance come in Redis's order either way.
 *
 * Points hold views of the source set's members: nothing changes the set until a stored result
 * (which copies them) replaces the destination. Runs on the loop thread. */
#include "common/alloc.h"
#include "common/psort.h"
#include "common/util.h"
#include "server/cmd/zset.h"
#include "server/command.h"
#include "server/persist/aof.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/geohash.h"
#include "storage/t_zset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_NO_MEMBER "ERR could not decode requested zset member"

/* ---- arguments ---- */

/* Two arguments, longitude then latitude, within the limits a score can hold. */
static int lonlat_or_reply(client_t *c, const resp_arg_t *a, double xy[2])
{
    for (int i = 0; i < 2; i++)
        if (arg_double_or_reply(c, &a[i], &xy[i], NULL) < 0) return -1;
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN ||
        xy[1] > GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return -1;
    }
    return 0;
}

/* Metres per unit (m, km, ft, mi, any case), or -1 after the error reply. */
static double unit_or_reply(client_t *c, const resp_arg_t *a)
{
    static const struct {
        const char *name;
        double metres;
    } units[] = {{"m", 1}, {"km", 1000}, {"ft", 0.3048}, {"mi", 1609.34}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (arg_is(a, units[i].name)) return units[i].metres;
    reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* <radius> <unit> */
static int radius_or_reply(client_t *c, const resp_arg_t *a, geo_shape_t *s)
{
    double r;
    if (arg_double_or_reply(c, &a[0], &r, "ERR need numeric radius") < 0) return -1;
    if (r < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return -1;
    }
    s->radius = r;
    return (s->conversion = unit_or_reply(c, &a[1])) < 0 ? -1 : 0;
}

/* <width> <height> <unit> */
static int box_or_reply(client_t *c, const resp_arg_t *a, geo_shape_t *s)
{
    double w, h;
    if (arg_double_or_reply(c, &a[0], &w, "ERR need numeric width") < 0 ||
        arg_double_or_reply(c, &a[1], &h, "ERR need numeric height") < 0)
        return -1;
    if (h < 0 || w < 0) {
        reply_error(c, "ERR height or width cannot be negative");
        return -1;
    }
    s->width = w;
    s->height = h;
    return (s->conversion = unit_or_reply(c, &a[2])) < 0 ? -1 : 0;
}

/* The position of member m of z into xy: 0, or -1 when m is not in z. */
static int member_xy(const zset_t *z, const resp_arg_t *m, double xy[2])
{
    double score;
    if (!zset_score(z, m->ptr, m->len, &score)) return -1;
    geo_score_decode(score, xy);
    return 0;
}

/* ---- replies ---- */

/* A distance as a bulk string with exactly four decimals ("0.0000", "166274.1516"). The value
 * is rounded with llrint as Redis does, including what x86-64 gives for a NaN. */
static void reply_distance(client_t *c, double d)
{
    char buf[48];
    int n;
    if (d == 0) {
        n = snprintf(buf, sizeof(buf), "0.0000");
    } else {
        long long sv = llrint(d * 10000.0);
        unsigned long long v = sv < 0 ? 0ULL - (unsigned long long)sv : (unsigned long long)sv;
        n = snprintf(buf, sizeof(buf), "%s%llu.%04llu", sv < 0 ? "-" : "", v / 10000, v % 10000);
    }
    reply_bulk(c, buf, (size_t)n);
}

/* A coordinate as Redis's human-readable long double: a bulk string in RESP2, a double in
 * RESP3 (",13.36138933897018433\r\n"). */
static void reply_coord(client_t *c, double v)
{
    char buf[160];
    size_t n = ld_to_str(buf + 1, sizeof(buf) - 3, (long double)v);
    if (c->resp == 2) {
        reply_bulk(c, buf + 1, n);
        return;
    }
    buf[0] = ',';
    memcpy(buf + 1 + n, "\r\n", 2);
    reply_proto(c, buf, n + 3);
}

/* ---- GEOADD ---- */

/* GEOADD key [NX|XX] [CH] lon lat member [lon lat member ...]: ZADD with the scores computed
 * from the coordinates. The AOF gets "zadd key [options] score member ...". */
static void geoadd_cmd(client_t *c)
{
    int idx = 2, flags = 0, ch = 0;
    for (; idx < c->argc; idx++) {
        const resp_arg_t *a = &c->argv[idx];
        if (arg_is(a, "nx"))
            flags |= ZSET_IN_NX;
        else if (arg_is(a, "xx"))
            flags |= ZSET_IN_XX;
        else if (arg_is(a, "ch"))
            ch = 1;
        else
            break;
    }
    int rest = c->argc - idx, n = rest / 3;
    if (rest % 3 || !n || ((flags & ZSET_IN_NX) && (flags & ZSET_IN_XX))) {
        reply_syntax_error(c);
        return;
    }
    /* one block: the scores, the ZADD argv and the scores' decimal texts */
    enum { TXT = 24 };
    size_t zargc = (size_t)idx + 2 * (size_t)n;
    char *mem =
        try_malloc((size_t)n * sizeof(double) + zargc * sizeof(resp_arg_t) + (size_t)n * TXT);
    if (!mem) {
        reply_error(c, ERR_OOM);
        return;
    }
    double *scores = (double *)mem;
    resp_arg_t *zargv = (resp_arg_t *)(scores + n);
    char *txt = (char *)(zargv + zargc);
    zargv[0] = (resp_arg_t){"zadd", 4};
    for (int i = 1; i < idx; i++) zargv[i] = c->argv[i];
    for (int i = 0; i < n; i++) {
        const resp_arg_t *a = &c->argv[idx + 3 * i];
        double xy[2];
        if (lonlat_or_reply(c, a, xy) < 0) goto done;
        uint64_t bits = geo_score_of(xy[0], xy[1]);
        scores[i] = (double)bits;
        zargv[idx + 2 * i] = (resp_arg_t){txt + TXT * i, ull_to_str(txt + TXT * i, bits)};
        zargv[idx + 2 * i + 1] = a[2];
    }
    aof_replace_argv(c, (int)zargc, zargv); /* dropped unless the ZADD changes something */
    zsetcmd_add(c, &c->argv[1], flags, ch, n, scores, &c->argv[idx + 2], 3);
done:
    xfree(mem);
}

/* ---- GEOHASH GEOPOS GEODIST ---- */

static void geohash_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_ZSET, &err);
    if (err) return;
    const zset_t *z = kv ? (const zset_t *)kv->val : NULL;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        char hash[11];
        if (!z || member_xy(z, &c->argv[j], xy) < 0) {
            reply_null(c);
            continue;
        }
        geo_hash_string(xy, hash);
        reply_bulk(c, hash, sizeof(hash));
    }
}

static void geopos_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_ZSET, &err);
    if (err) return;
    const zset_t *z = kv ? (const zset_t *)kv->val : NULL;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (!z || member_xy(z, &c->argv[j], xy) < 0) {
            reply_null_array(c);
            continue;
        }
        reply_array(c, 2);
        reply_coord(c, xy[0]);
        reply_coord(c, xy[1]);
    }
}

/* GEODIST key member1 member2 [unit]: the unit is checked before the key. */
static void geodist_cmd(client_t *c)
{
    double to_m = 1;
    if (c->argc == 5) {
        if ((to_m = unit_or_reply(c, &c->argv[4])) < 0) return;
    } else if (c->argc > 5) {
        reply_syntax_error(c);
        return;
    }
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_ZSET, &err);
    if (err) return;
    double a[2], b[2];
    const zset_t *z = kv ? (const zset_t *)kv->val : NULL;
    if (!z || member_xy(z, &c->argv[2], a) < 0 || member_xy(z, &c->argv[3], b) < 0) {
        reply_null(c);
        return;
    }
    reply_distance(c, geo_distance(a[0], a[1], b[0], b[1]) / to_m);
}

/* ---- GEORADIUS GEORADIUSBYMEMBER GEOSEARCH GEOSEARCHSTORE ---- */

enum {
    FROM_COORDS = 1 << 0, /* GEORADIUS: lon lat radius unit */
    FROM_MEMBER = 1 << 1, /* GEORADIUSBYMEMBER: member radius unit */
    NO_STORE = 1 << 2,    /* the _RO variants: no STORE / STOREDIST */
    SEARCH = 1 << 3,      /* GEOSEARCH's FROM... / BY... arguments */
    SEARCH_STORE = 1 << 4 /* GEOSEARCHSTORE: destination first, STOREDIST a flag */
};
enum { SORT_NONE, SORT_ASC, SORT_DESC };

typedef struct search {
    geo_shape_t shape;
    int withdist, withhash, withcoord, any, sort, storedist;
    int frommember, fromlonlat, byradius, bybox;
    long long count; /* 0: all */
    const resp_arg_t *store;
} search_t;

/* A match: a view of the member, its score, position and distance from the centre. */
typedef struct point {
    const char *member;
    size_t len;
    double score, dist, xy[2];
} point_t;

typedef struct points {
    point_t *v;
    size_t n, cap;
} points_t;

static void points_push(points_t *p, const zset_entry_t *e, const double xy[2], double dist)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
    }
    p->v[p->n++] = (point_t){e->member, e->len, e->score, dist, {xy[0], xy[1]}};
}

/* The options after the fixed arguments, from argv[base] on, as Redis 7.0 reads them: each
 * option that takes values needs all of them present, or it is a syntax error; FROM* and BY*
 * are parsed (and checked) where they stand. z may be NULL (missing key): then FROMMEMBER's
 * member is not looked up. 0, or -1 after the error reply. */
static int parse_search_options(client_t *c, int base, int flags, const zset_t *z, search_t *o)
{
    int can_store = !(flags & (NO_STORE | SEARCH)), search = (flags & SEARCH) != 0;
    for (int i = base; i < c->argc; i++) {
        const resp_arg_t *a = &c->argv[i];
        int left = c->argc - i - 1;
        if (arg_is(a, "withdist")) {
            o->withdist = 1;
        } else if (arg_is(a, "withhash")) {
            o->withhash = 1;
        } else if (arg_is(a, "withcoord")) {
            o->withcoord = 1;
        } else if (arg_is(a, "any")) {
            o->any = 1;
        } else if (arg_is(a, "asc")) {
            o->sort = SORT_ASC;
        } else if (arg_is(a, "desc")) {
            o->sort = SORT_DESC;
        } else if (arg_is(a, "count") && left >= 1) {
            if (arg_ll_or_reply(c, &c->argv[++i], &o->count, NULL) < 0) return -1;
            if (o->count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                return -1;
            }
        } else if ((arg_is(a, "store") || arg_is(a, "storedist")) && left >= 1 && can_store) {
            o->storedist = arg_is(a, "storedist");
            o->store = &c->argv[++i];
        } else if (arg_is(a, "storedist") && (flags & SEARCH_STORE)) {
            o->storedist = 1;
        } else if (arg_is(a, "frommember") && left >= 1 && search && !o->fromlonlat) {
            if (z && member_xy(z, &c->argv[i + 1], o->shape.xy) < 0) {
                reply_error(c, ERR_NO_MEMBER);
                return -1;
            }
            o->frommember = 1;
            i++;
        } else if (arg_is(a, "fromlonlat") && left >= 2 && search && !o->frommember) {
            if (lonlat_or_reply(c, &c->argv[i + 1], o->shape.xy) < 0) return -1;
            o->fromlonlat = 1;
            i += 2;
        } else if (arg_is(a, "byradius") && left >= 2 && search && !o->bybox) {
            if (radius_or_reply(c, &c->argv[i + 1], &o->shape) < 0) return -1;
            o->shape.type = GEO_SHAPE_RADIUS;
            o->byradius = 1;
            i += 2;
        } else if (arg_is(a, "bybox") && left >= 3 && search && !o->byradius) {
            if (box_or_reply(c, &c->argv[i + 1], &o->shape) < 0) return -1;
            o->shape.type = GEO_SHAPE_BOX;
            o->bybox = 1;
            i += 3;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    return 0;
}

/* The checks between options, in Redis's order. 0, or -1 after the error reply. */
static int check_search_options(client_t *c, int flags, const search_t *o)
{
    const resp_arg_t *name = &c->argv[0];
    if (o->store && (o->withdist || o->withhash || o->withcoord)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     flags & SEARCH_STORE ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return -1;
    }
    if ((flags & SEARCH) && !(o->frommember || o->fromlonlat)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                     (int)name->len, name->ptr);
        return -1;
    }
    if ((flags & SEARCH) && !(o->byradius || o->bybox)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s",
                     (int)name->len, name->ptr);
        return -1;
    }
    if (o->any && !o->count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        return -1;
    }
    return 0;
}

/* Appends the points of cell h that lie within s, in score order; stops once limit points
 * were found (limit 0: no limit). */
static void collect_cell(const zset_t *z, geo_hash_t h, const geo_shape_t *s, size_t limit,
                         points_t *p)
{
    uint64_t min, max;
    geo_cell_scores(h, &min, &max);
    zset_range_t r = {(double)min, (double)max, 0, 1}; /* [min, max) */
    zset_iter_t it;
    zset_entry_t e;
    zset_iter_score(&it, z, &r, 0);
    while (zset_iter_next(&it, &e)) {
        double xy[2], dist = 0;
        if (geo_shape_contains(s, e.score, xy, &dist)) points_push(p, &e, xy, dist);
        if (limit && p->n >= limit) break;
    }
}

/* The points of z within s, cell by cell. A huge radius can make neighbouring cells equal:
 * a cell equal to the one read just before it is skipped (the centre cell never counts as
 * "read before", as in Redis). */
static void collect(const zset_t *z, const geo_shape_t *s, size_t limit, points_t *p)
{
    geo_search_cells_t cells;
    geo_search_cells(s, &cells);
    int last = 0;
    for (int i = 0; i < 9; i++) {
        geo_hash_t h = cells.cell[i];
        if (h.bits == 0 && h.step == 0) continue;
        if (last && h.bits == cells.cell[last].bits && h.step == cells.cell[last].step) continue;
        if (limit && p->n >= limit) break;
        collect_cell(z, h, s, limit, p);
        last = i;
    }
}

static int by_dist_asc(const void *pa, const void *pb)
{
    const point_t *a = pa, *b = pb;
    return a->dist > b->dist ? 1 : a->dist == b->dist ? 0 : -1;
}

static int by_dist_desc(const void *pa, const void *pb)
{
    return -by_dist_asc(pa, pb);
}

static void reply_points(client_t *c, const search_t *o, const point_t *v, size_t n)
{
    int extra = o->withdist + o->withhash + o->withcoord;
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n && !reply_stopped(c); i++) {
        if (extra) reply_array(c, extra + 1);
        reply_bulk(c, v[i].member, v[i].len);
        if (o->withdist) reply_distance(c, v[i].dist / o->shape.conversion);
        if (o->withhash) reply_int(c, (long long)v[i].score);
        if (o->withcoord) {
            reply_array(c, 2);
            reply_coord(c, v[i].xy[0]);
            reply_coord(c, v[i].xy[1]);
        }
    }
}

/* Stores the first n points as a sorted set under o->store, scored by geohash or (STOREDIST)
 * by distance in the query's unit; no points delete the destination. */
static void store_points(client_t *c, const search_t *o, int flags, const point_t *v, size_t n)
{
    zset_t *res = NULL;
    if (n) {
        zset_entry_t *e = xmalloc(n * sizeof(*e));
        for (size_t i = 0; i < n; i++)
            e[i] = (zset_entry_t){v[i].member, v[i].len,
                                  o->storedist ? v[i].dist / o->shape.conversion : v[i].score};
        qsort(e, n, sizeof(*e), zsetcmd_entry_cmp);
        size_t m = 1; /* a member met twice (cells that overlap) is stored once */
        for (size_t i = 1; i < n; i++)
            if (e[i].len != e[m - 1].len || memcmp(e[i].member, e[m - 1].member, e[i].len))
                e[m++] = e[i];
        res = zset_from_sorted(e, m);
        xfree(e);
    }
    zsetcmd_store_result(c, o->store, res, flags & SEARCH ? "geosearchstore" : "georadiusstore");
}

/* The whole search: the source key is argv[src]; flags say which command this is. */
static void search_generic(client_t *c, int src, int flags)
{
    search_t o = {0};
    int err, base;
    kv_t *kv = lookup_read_type(c, &c->argv[src], OBJ_ZSET, &err);
    if (err) return;
    const zset_t *z = kv ? (const zset_t *)kv->val : NULL;
    if (flags & FROM_COORDS) {
        base = 6;
        o.shape.type = GEO_SHAPE_RADIUS;
        if (lonlat_or_reply(c, &c->argv[2], o.shape.xy) < 0) return;
        if (radius_or_reply(c, &c->argv[4], &o.shape) < 0) return;
    } else if (flags & FROM_MEMBER) {
        base = 5;
        if (z) { /* without a key the arguments are still parsed, for the right reply */
            o.shape.type = GEO_SHAPE_RADIUS;
            if (member_xy(z, &c->argv[2], o.shape.xy) < 0) {
                reply_error(c, ERR_NO_MEMBER);
                return;
            }
            if (radius_or_reply(c, &c->argv[3], &o.shape) < 0) return;
        }
    } else {
        base = flags & SEARCH_STORE ? 3 : 2;
        if (flags & SEARCH_STORE) o.store = &c->argv[1];
    }
    if (parse_search_options(c, base, flags, z, &o) < 0 || check_search_options(c, flags, &o) < 0)
        return;
    if (!z) {
        if (o.store)
            zsetcmd_store_result(c, o.store, NULL, NULL);
        else
            reply_array(c, 0);
        return;
    }
    /* COUNT asks for the nearest ones, unless ANY takes the first found */
    if (o.count && o.sort == SORT_NONE && !o.any) o.sort = SORT_ASC;
    points_t p = {0};
    collect(z, &o.shape, o.any ? (size_t)o.count : 0, &p);
    size_t n = o.count && (unsigned long long)o.count < p.n ? (size_t)o.count : p.n;
    if (o.sort != SORT_NONE && p.n > 1) { /* a cut result is sorted only as far as needed */
        int (*cmp)(const void *, const void *) = o.sort == SORT_ASC ? by_dist_asc : by_dist_desc;
        if (n == p.n)
            qsort(p.v, p.n, sizeof(*p.v), cmp);
        else
            psort(p.v, p.n, sizeof(*p.v), cmp, 0, n - 1);
    }
    if (o.store)
        store_points(c, &o, flags, p.v, n);
    else
        reply_points(c, &o, p.v, n);
    xfree(p.v);
}

static void georadius_cmd(client_t *c)
{
    search_generic(c, 1, FROM_COORDS);
}

static void georadius_ro_cmd(client_t *c)
{
    search_generic(c, 1, FROM_COORDS | NO_STORE);
}

static void georadiusbymember_cmd(client_t *c)
{
    search_generic(c, 1, FROM_MEMBER);
}

static void georadiusbymember_ro_cmd(client_t *c)
{
    search_generic(c, 1, FROM_MEMBER | NO_STORE);
}

static void geosearch_cmd(client_t *c)
{
    search_generic(c, 1, SEARCH);
}

static void geosearchstore_cmd(client_t *c)
{
    search_generic(c, 2, SEARCH | SEARCH_STORE);
}

/* The index of the argument after the first `word` among argv[from .. argc-2], or -1: a
 * keyword key spec of Redis 7.0 (the last argument is never taken for the keyword). */
static int key_after(int argc, const resp_arg_t *argv, int from, const char *word)
{
    for (int i = from; i < argc - 1; i++)
        if (arg_is(&argv[i], word)) return i + 1;
    return -1;
}

/* GEORADIUS and GEORADIUSBYMEMBER's keys as their key specs find them: the source, then the
 * key after the first STORE and the key after the first STOREDIST, searched from argument
 * `from` (the first option's place). */
static int store_keys(int argc, const resp_arg_t *argv, int *pos, int max, int from)
{
    int n = 0, k;
    if (n < max) pos[n++] = 1;
    if ((k = key_after(argc, argv, from, "store")) > 0 && n < max) pos[n++] = k;
    if ((k = key_after(argc, argv, from, "storedist")) > 0 && n < max) pos[n++] = k;
    return n;
}

static int georadius_keys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return store_keys(argc, argv, pos, max, 6);
}

static int georadiusbymember_keys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return store_keys(argc, argv, pos, max, 5);
}

/* ---- the table ---- */

#define RO CMD_READONLY
#define RW CMD_WRITE
#define GROUP "geo"
#define SEARCH_CPLX                                                                                \
    "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "       \
    "area delimited by center and radius and M is the number of items inside the index."
#define GEOSEARCH_CPLX                                                                             \
    "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "         \
    "around the shape provided as the filter and M is the number of items inside the shape"

/* Redis 7.0's key specs: the source, then the keys after STORE and STOREDIST (searched from
 * the first option's place); GEOSEARCHSTORE's destination and source as two specs. */
static const cmd_key_spec_t georadius_specs[] = {
    {1, NULL, 0, 1}, {6, "STORE", 0, 1}, {6, "STOREDIST", 0, 1}, {0}};
static const cmd_key_spec_t georadiusbymember_specs[] = {
    {1, NULL, 0, 1}, {5, "STORE", 0, 1}, {5, "STOREDIST", 0, 1}, {0}};
static const cmd_key_spec_t geosearchstore_specs[] = {{1, NULL, 0, 1}, {2, NULL, 0, 1}, {0}};

command_t cmds_geo[] = {
    CMD_ROW("geoadd", geoadd_cmd, -5, RW | CMD_DENYOOM, 1, 1, 1, GROUP, "3.2.0",
            "Add one or more geospatial items in the geospatial index represented using a sorted "
            "set",
            "O(log(N)) for each item added, where N is the number of elements in the sorted set."),
    CMD_ROW("geodist", geodist_cmd, -4, RO, 1, 1, 1, GROUP, "3.2.0",
            "Returns the distance between two members of a geospatial index", "O(log(N))"),
    CMD_ROW("geohash", geohash_cmd, -2, RO, 1, 1, 1, GROUP, "3.2.0",
            "Returns members of a geospatial index as standard geohash strings",
            "O(log(N)) for each member requested, where N is the number of elements in the "
            "sorted set."),
    CMD_ROW("geopos", geopos_cmd, -2, RO, 1, 1, 1, GROUP, "3.2.0",
            "Returns longitude and latitude of members of a geospatial index",
            "O(N) where N is the number of members requested."),
    CMD_ROW("georadius", georadius_cmd, -6, RW | CMD_DENYOOM | CMD_MOVABLE_KEYS, 1, 1, 1, GROUP,
            "3.2.0",
            "Query a sorted set representing a geospatial index to fetch members matching a given "
            "maximum distance from a point",
            SEARCH_CPLX, .getkeys = georadius_keys, .key_flags = "RO access|OW update",
            .key_specs = georadius_specs),
    CMD_ROW("georadiusbymember", georadiusbymember_cmd, -5, RW | CMD_DENYOOM | CMD_MOVABLE_KEYS, 1,
            1, 1, GROUP, "3.2.0",
            "Query a sorted set representing a geospatial index to fetch members matching a given "
            "maximum distance from a member",
            SEARCH_CPLX, .getkeys = georadiusbymember_keys, .key_flags = "RO access|OW update",
            .key_specs = georadiusbymember_specs),
    CMD_ROW("georadiusbymember_ro", georadiusbymember_ro_cmd, -5, RO, 1, 1, 1, GROUP, "3.2.10",
            "A read-only variant for GEORADIUSBYMEMBER", SEARCH_CPLX),
    CMD_ROW("georadius_ro", georadius_ro_cmd, -6, RO, 1, 1, 1, GROUP, "3.2.10",
            "A read-only variant for GEORADIUS", SEARCH_CPLX),
    CMD_ROW("geosearch", geosearch_cmd, -7, RO, 1, 1, 1, GROUP, "6.2.0",
            "Query a sorted set representing a geospatial index to fetch members inside an area "
            "of a box or a circle.",
            GEOSEARCH_CPLX),
    CMD_ROW("geosearchstore", geosearchstore_cmd, -8, RW | CMD_DENYOOM, 1, 2, 1, GROUP, "6.2.0",
            "Query a sorted set representing a geospatial index to fetch members inside an area "
            "of a box or a circle, and store the result in another key.",
            GEOSEARCH_CPLX, .key_flags = "OW update|RO access", .key_specs = geosearchstore_specs),
    {NULL},
};
