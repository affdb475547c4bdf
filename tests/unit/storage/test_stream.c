/* test_stream.c - storage/t_stream.c: node bytes equal to a redis-server 7.0.15 DUMP of the same
 * stream, id parsing and arithmetic, iteration both ways over tombstones and node boundaries,
 * trimming (exact, approximate, MINID), groups, consumers and PELs, dup, the radix-tree node
 * count, and the builder refusing every corrupted byte of a node. */
#include "storage/t_stream.h"

#include "common/alloc.h"
#include "common/listpack.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static storage_params_t saved;

static void setup(void)
{
    saved = storage_params;
}

static void teardown(void)
{
    storage_params = saved;
}

TestSuite(stream, .init = setup, .fini = teardown);

static stream_id_t ID(uint64_t ms, uint64_t seq)
{
    return (stream_id_t){ms, seq};
}

/* Appends an entry of NUL-terminated strings (field, value, ..., NULL) with an explicit id. */
static int add(stream_t *s, stream_id_t id, ...)
{
    stream_str_t fv[16];
    size_t n = 0;
    va_list ap;
    va_start(ap, id);
    const char *p;
    while ((p = va_arg(ap, const char *)) != NULL) fv[n++] = (stream_str_t){p, strlen(p)};
    va_end(ap);
    return stream_append(s, fv, n / 2, &id, 1, 0, NULL);
}

static size_t unhex(const char *hex, unsigned char *out)
{
    size_t n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        sscanf(hex, "%2x", &v);
        out[n++] = (unsigned char)v;
    }
    return n;
}

/* XADD s 1-1 a 1 b 2; XADD s 1-2 a 300 b hello; XADD s 2-0 c 5; XADD s 3-5 a -7 b 2;
 * XADD s 1000000000000-1 a 1 b 2; XDEL s 1-2; XDEL s 3-5 with stream-node-max-entries 3, as
 * redis-server 7.0.15 DUMPs them (rdbcompression no). */
static const char *redis_node1 =
    "4300000019000201010102018161028162020001020100010001010102010501030100010101c12c028568656c"
    "6c6f06050100010101dfff02010181630205010601ff";
static const char *redis_node2 = "3700000012000101010102018161028162020001030100010001dff902020105"
                                 "010201f4fd0fa5d4e800000009dffc02010102010501ff";

static stream_t *redis_example(void)
{
    storage_params.stream_node_max_entries = 3;
    storage_params.stream_node_max_bytes = 4096;
    stream_t *s = stream_new();
    cr_assert_eq(add(s, ID(1, 1), "a", "1", "b", "2", NULL), 0);
    cr_assert_eq(add(s, ID(1, 2), "a", "300", "b", "hello", NULL), 0);
    cr_assert_eq(add(s, ID(2, 0), "c", "5", NULL), 0);
    cr_assert_eq(add(s, ID(3, 5), "a", "-7", "b", "2", NULL), 0);
    cr_assert_eq(add(s, ID(1000000000000ull, 1), "a", "1", "b", "2", NULL), 0);
    cr_assert(stream_delete(s, &(stream_id_t){1, 2}));
    cr_assert(stream_delete(s, &(stream_id_t){3, 5}));
    return s;
}

Test(stream, node_bytes_equal_redis_dump)
{
    stream_t *s = redis_example();
    unsigned char want[256];
    stream_idx_node_t *n = stream_idx_first(&s->nodes);
    cr_assert_eq(stream_idx_size(&s->nodes), 2);
    size_t len = unhex(redis_node1, want);
    cr_assert_eq(n->id.ms, 1);
    cr_assert_eq(n->id.seq, 1);
    cr_assert_eq(lp_bytes(n->val), len);
    cr_assert_eq(memcmp(n->val, want, len), 0);
    n = stream_idx_next(n);
    len = unhex(redis_node2, want);
    cr_assert_eq(n->id.ms, 3);
    cr_assert_eq(n->id.seq, 5);
    cr_assert_eq(lp_bytes(n->val), len);
    cr_assert_eq(memcmp(n->val, want, len), 0);
    cr_assert_eq(s->length, 3);
    cr_assert_eq(s->entries_added, 5);
    stream_free(s);
}

Test(stream, ids_parse_as_redis)
{
    stream_id_t id;
    int seq_given;
    cr_assert_eq(stream_id_parse("5", 1, &id, 7, 0, NULL), 0);
    cr_assert(id.ms == 5 && id.seq == 7);
    cr_assert_eq(stream_id_parse("5-*", 3, &id, 0, 1, &seq_given), 0);
    cr_assert(id.ms == 5 && seq_given == 0);
    cr_assert_eq(stream_id_parse("5-*", 3, &id, 0, 1, NULL), -1);
    cr_assert_eq(stream_id_parse("-", 1, &id, 0, 1, NULL), -1);
    cr_assert_eq(stream_id_parse("+", 1, &id, 0, 0, NULL), 0);
    cr_assert(id.ms == UINT64_MAX && id.seq == UINT64_MAX);
    cr_assert_eq(stream_id_parse("18446744073709551615-18446744073709551615", 41, &id, 0, 1,
                                 NULL),
                 0);
    cr_assert_eq(stream_id_parse("18446744073709551616", 20, &id, 0, 1, NULL), -1);
    cr_assert_eq(stream_id_parse("-1", 2, &id, 0, 0, NULL), -1);
    cr_assert_eq(stream_id_parse("1-", 2, &id, 0, 0, NULL), -1);
    cr_assert_eq(stream_id_parse("abc", 3, &id, 0, 0, NULL), -1);
    char buf[STREAM_ID_STR];
    id = ID(UINT64_MAX, 3);
    buf[stream_id_fmt(buf, &id)] = '\0';
    cr_assert_str_eq(buf, "18446744073709551615-3");
    id = ID(UINT64_MAX, UINT64_MAX);
    cr_assert_eq(stream_id_incr(&id), -1);
    id = ID(1, UINT64_MAX);
    cr_assert_eq(stream_id_incr(&id), 0);
    cr_assert(id.ms == 2 && id.seq == 0);
    cr_assert_eq(stream_id_decr(&id), 0);
    cr_assert(id.ms == 1 && id.seq == UINT64_MAX);
}

Test(stream, generated_ids_never_go_back)
{
    stream_t *s = stream_new();
    stream_str_t fv[2] = {{"f", 1}, {"v", 1}};
    stream_id_t id;
    cr_assert_eq(stream_append(s, fv, 1, NULL, 0, 1000, &id), 0);
    cr_assert(id.ms == 1000 && id.seq == 0);
    cr_assert_eq(stream_append(s, fv, 1, NULL, 0, 999, &id), 0); /* clock went back */
    cr_assert(id.ms == 1000 && id.seq == 1);
    stream_id_t use = ID(1000, 0);
    cr_assert_eq(stream_append(s, fv, 1, &use, 0, 0, &id), 0); /* 1000-* */
    cr_assert(id.ms == 1000 && id.seq == 2);
    cr_assert_eq(stream_append(s, fv, 1, &use, 1, 0, &id), STREAM_ERR_ID);
    cr_assert_eq(s->length, 3);
    stream_free(s);
}

static int collect(const stream_t *s, int rev, stream_id_t *out)
{
    stream_iter_t it;
    stream_id_t id;
    int64_t nf;
    int n = 0;
    stream_iter_start(&it, s, NULL, NULL, rev);
    while (stream_iter_next(&it, &id, &nf)) {
        for (int64_t i = 0; i < nf; i++) {
            const char *f, *v;
            size_t fl, vl;
            stream_iter_field(&it, &f, &fl, &v, &vl);
        }
        out[n++] = id;
    }
    return n;
}

Test(stream, iterates_both_ways_over_tombstones)
{
    stream_t *s = redis_example();
    stream_id_t ids[8];
    cr_assert_eq(collect(s, 0, ids), 3);
    cr_assert(ids[0].ms == 1 && ids[1].ms == 2 && ids[2].ms == 1000000000000ull);
    cr_assert_eq(collect(s, 1, ids), 3);
    cr_assert(ids[0].ms == 1000000000000ull && ids[2].ms == 1 && ids[2].seq == 1);
    stream_iter_t it;
    stream_id_t id;
    int64_t nf;
    stream_iter_start(&it, s, &(stream_id_t){2, 0}, &(stream_id_t){2, 0}, 0);
    cr_assert(stream_iter_next(&it, &id, &nf));
    cr_assert_eq(nf, 1);
    const char *f, *v;
    size_t fl, vl;
    stream_iter_field(&it, &f, &fl, &v, &vl);
    cr_assert(fl == 1 && f[0] == 'c' && vl == 1 && v[0] == '5');
    cr_assert_not(stream_iter_next(&it, &id, &nf));
    stream_edge_id(s, 1, 0, &id);
    cr_assert(id.ms == 1 && id.seq == 1);
    stream_edge_id(s, 0, 0, &id);
    cr_assert(id.ms == 1000000000000ull);
    cr_assert(stream_entry_exists(s, &(stream_id_t){2, 0}));
    cr_assert_not(stream_entry_exists(s, &(stream_id_t){3, 5}));
    stream_free(s);
}

Test(stream, deleting_a_node_last_entry_frees_it)
{
    stream_t *s = redis_example();
    cr_assert(stream_delete(s, &(stream_id_t){1000000000000ull, 1}));
    cr_assert_eq(stream_idx_size(&s->nodes), 1);
    cr_assert_not(stream_delete(s, &(stream_id_t){1000000000000ull, 1}));
    cr_assert_eq(s->length, 2);
    stream_free(s);
}

static stream_t *numbered(int n, int per_node)
{
    storage_params.stream_node_max_entries = (uint64_t)per_node;
    stream_t *s = stream_new();
    char v[16];
    for (int i = 1; i <= n; i++) {
        snprintf(v, sizeof(v), "%d", i);
        cr_assert_eq(add(s, ID((uint64_t)i, 0), "f", v, NULL), 0);
    }
    return s;
}

Test(stream, trims_exact_approximate_and_by_min_id)
{
    stream_t *s = numbered(25, 10);
    stream_trim_args_t a = {.strategy = STREAM_TRIM_MAXLEN, .approx = 1, .maxlen = 12};
    cr_assert_eq(stream_trim(s, &a), 10); /* only a whole node goes */
    cr_assert_eq(s->length, 15);
    a.approx = 0;
    cr_assert_eq(stream_trim(s, &a), 3);
    cr_assert_eq(s->length, 12);
    cr_assert(s->first_id.ms == 14);
    a = (stream_trim_args_t){.strategy = STREAM_TRIM_MINID, .minid = ID(20, 0)};
    cr_assert_eq(stream_trim(s, &a), 6);
    cr_assert(s->first_id.ms == 20);
    a = (stream_trim_args_t){.strategy = STREAM_TRIM_MAXLEN, .maxlen = 0, .limit = 3};
    cr_assert_eq(stream_trim(s, &a), 1); /* the next node has more than the limit */
    a.limit = 0;
    cr_assert_eq(stream_trim(s, &a), 5);
    cr_assert_eq(s->length, 0);
    cr_assert(s->first_id.ms == 0 && s->first_id.seq == 0);
    stream_free(s);
}

Test(stream, groups_consumers_and_pels)
{
    stream_t *s = numbered(5, 100);
    stream_cg_t *g = stream_cg_create(s, "g", 1, &(stream_id_t){0, 0}, -1);
    cr_assert_not_null(g);
    cr_assert_null(stream_cg_create(s, "g", 1, &(stream_id_t){0, 0}, -1));
    stream_cg_create(s, "a", 1, &(stream_id_t){0, 0}, -1);
    stream_cg_create(s, "gg", 2, &(stream_id_t){0, 0}, -1);
    cr_assert(s->groups[0]->name[0] == 'a' && s->groups[2]->namelen == 2); /* radix order */
    stream_consumer_t *c1 = stream_consumer_create(g, "c1", 2, 100);
    stream_consumer_t *c2 = stream_consumer_create(g, "c2", 2, 100);
    for (uint64_t i = 1; i <= 3; i++) {
        stream_id_t id = ID(i, 0);
        stream_cg_advance(s, g, &id);
        stream_pel_deliver(g, c1, &id, 200);
    }
    cr_assert_eq(g->entries_read, 3);
    long long lag;
    cr_assert(stream_cg_lag(s, g, &lag));
    cr_assert_eq(lag, 2);
    stream_nack_t *n = stream_pel_deliver(g, c2, &(stream_id_t){2, 0}, 300);
    cr_assert_eq(n->consumer, c2);
    cr_assert_eq(stream_idx_size(&c1->pel), 2);
    cr_assert_eq(stream_idx_size(&c2->pel), 1);
    cr_assert(stream_pel_ack(g, &(stream_id_t){1, 0}));
    cr_assert_not(stream_pel_ack(g, &(stream_id_t){1, 0}));
    stream_t *d = stream_dup(s);
    stream_consumer_delete(g, c1);
    cr_assert_eq(stream_idx_size(&g->pel), 1);
    stream_cg_t *dg = stream_cg_find(d, "g", 1);
    cr_assert_eq(stream_idx_size(&dg->pel), 2);
    cr_assert_eq(stream_idx_size(&stream_consumer_find(dg, "c1", 2)->pel), 1);
    stream_cg_destroy(s, g);
    cr_assert_null(stream_cg_find(s, "g", 1));
    stream_free(s);
    stream_free(d);
}

Test(stream, radix_tree_node_count)
{
    stream_t *s = stream_new();
    cr_assert_eq(stream_rax_nodes(s), 1);
    stream_free(s);
    s = numbered(1, 100);
    cr_assert_eq(stream_rax_nodes(s), 2);
    stream_free(s);
    s = numbered(2, 1); /* keys 1-0 and 2-0 part at byte 7 */
    cr_assert_eq(stream_rax_nodes(s), 1 + 1 + 2 * 2);
    stream_free(s);
}

Test(stream, builder_takes_redis_nodes_and_refuses_every_corruption)
{
    unsigned char n1[256], n2[256];
    size_t l1 = unhex(redis_node1, n1), l2 = unhex(redis_node2, n2);
    const char *err;
    stream_t *s = stream_new();
    cr_assert_eq(stream_build_node(s, &(stream_id_t){1, 1}, n1, l1, &err), 0);
    cr_assert_eq(stream_build_node(s, &(stream_id_t){3, 5}, n2, l2, &err), 0);
    cr_assert_eq(stream_build_meta(s, 3, &(stream_id_t){1000000000000ull, 1},
                                   &(stream_id_t){1, 1}, &(stream_id_t){3, 5}, 5, &err),
                 0);
    stream_cg_t *g;
    stream_consumer_t *c;
    cr_assert_eq(stream_build_group(s, "g", 1, &(stream_id_t){2, 0}, 2, &g, &err), 0);
    cr_assert_eq(stream_build_pel(g, &(stream_id_t){2, 0}, 5, 1, &err), 0);
    cr_assert_eq(stream_build_finish(s, &err), -1); /* pending entry without owner */
    cr_assert_eq(stream_build_consumer(g, "c", 1, 5, &c, &err), 0);
    cr_assert_eq(stream_build_claim(g, c, &(stream_id_t){2, 0}, &err), 0);
    cr_assert_eq(stream_build_claim(g, c, &(stream_id_t){2, 0}, &err), -1);
    cr_assert_eq(stream_build_finish(s, &err), 0);
    stream_id_t ids[8];
    cr_assert_eq(collect(s, 1, ids), 3);
    stream_free(s);
    /* meta that disagrees with the nodes */
    s = stream_new();
    cr_assert_eq(stream_build_node(s, &(stream_id_t){1, 1}, n1, l1, &err), 0);
    cr_assert_eq(stream_build_meta(s, 3, &(stream_id_t){9, 9}, &(stream_id_t){1, 1},
                                   &(stream_id_t){0, 0}, 5, &err),
                 -1);
    cr_assert_eq(stream_build_node(s, &(stream_id_t){1, 1}, n1, l1, &err), -1); /* order */
    stream_free(s);
    /* every byte flipped: refused, or accepted and then safe to walk */
    for (size_t i = 0; i < l1; i++) {
        for (int bit = 0; bit < 8; bit++) {
            unsigned char bad[256];
            memcpy(bad, n1, l1);
            bad[i] ^= (unsigned char)(1 << bit);
            s = stream_new();
            if (stream_build_node(s, &(stream_id_t){1, 1}, bad, l1, &err) == 0)
                collect(s, 0, ids), collect(s, 1, ids);
            stream_free(s);
        }
    }
}

/* A node of master fields ["f"] whose entries (same fields) sit at ms deltas d[0..n). */
static unsigned char *crafted_node(const int64_t *d, int n)
{
    unsigned char *lp = lp_new(0);
    lp = lp_append_int(lp, n);
    lp = lp_append_int(lp, 0);
    lp = lp_append_int(lp, 1);
    lp = lp_append(lp, "f", 1);
    lp = lp_append_int(lp, 0);
    for (int i = 0; i < n; i++) {
        lp = lp_append_int(lp, 2); /* same fields */
        lp = lp_append_int(lp, d[i]);
        lp = lp_append_int(lp, 0);
        lp = lp_append(lp, "v", 1);
        lp = lp_append_int(lp, 4);
    }
    return lp;
}

Test(stream, builder_refuses_overlapping_nodes)
{
    /* node A: master 1-0, entries 1-0 and 5-0; node B's entry 6-0 as master 3-0 + 3 lies
     * after A's entries but its master inside A: lookups by master id would miss 5-0 */
    const int64_t da[] = {0, 4}, db_overlap[] = {3}, db_ok[] = {0};
    unsigned char *a = crafted_node(da, 2), *bo = crafted_node(db_overlap, 1),
                  *bk = crafted_node(db_ok, 1);
    const char *err;
    stream_t *s = stream_new();
    cr_assert_eq(stream_build_node(s, &(stream_id_t){1, 0}, a, lp_bytes(a), &err), 0);
    cr_assert_eq(stream_build_node(s, &(stream_id_t){3, 0}, bo, lp_bytes(bo), &err), -1);
    cr_assert_eq(stream_build_node(s, &(stream_id_t){5, 0}, bk, lp_bytes(bk), &err), -1);
    cr_assert_eq(stream_build_node(s, &(stream_id_t){6, 0}, bk, lp_bytes(bk), &err), 0);
    cr_assert_eq(stream_build_meta(s, 3, &(stream_id_t){6, 0}, &(stream_id_t){1, 0},
                                   &(stream_id_t){0, 0}, 3, &err),
                 0);
    cr_assert_eq(stream_build_finish(s, &err), 0);
    cr_assert_eq(stream_delete(s, &(stream_id_t){5, 0}), 1);
    stream_id_t ids[8];
    cr_assert_eq(collect(s, 0, ids), 2);
    stream_free(s);
    lp_free(a);
    lp_free(bo);
    lp_free(bk);
}
