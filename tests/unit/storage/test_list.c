/* test_list.c - storage/t_list.c: the entry encoding (every integer width, non-canonical
 * numbers kept as strings), node bounds for every fill, splits and merges, large elements in
 * nodes of their own, and a model test: random pushes, pops, drops, sets, inserts, removals,
 * range deletions and iterations checked against a plain array after every step, with
 * list_verify() checking the node invariants each time. */
#include "storage/t_list.h"

#include "common/alloc.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(lit) lit, sizeof(lit) - 1

static storage_params_t saved;

static void setup(void)
{
    saved = storage_params;
    srand(4242);
}

static void teardown(void)
{
    storage_params = saved;
}

TestSuite(list, .init = setup, .fini = teardown);

static list_t *new_list(int fill)
{
    storage_params.list_max_listpack_size = fill;
    return list_new();
}

static void push(list_t *l, int where, const char *s)
{
    cr_assert_eq(list_push(l, where, s, strlen(s)), 0);
}

static void assert_contents(list_t *l, const char **want, size_t n)
{
    cr_assert_eq(list_verify(l), 0, "verify: %d", list_verify(l));
    cr_assert_eq(list_len(l), n, "len %zu want %zu", list_len(l), n);
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, l, 0, LIST_TAIL);
    for (size_t i = 0; i < n; i++) {
        cr_assert(list_iter_next(&it, &e));
        cr_assert(e.len == strlen(want[i]) && memcmp(e.p, want[i], e.len) == 0,
                  "at %zu: '%.*s' want '%s'", i, (int)e.len, e.p, want[i]);
        cr_assert_eq(it.index, (long long)i);
    }
    cr_assert_not(list_iter_next(&it, &e));
}

/* ---- encoding ---- */

Test(list, integers_of_every_width_round_trip)
{
    const char *vals[] = {"0",
                          "1",
                          "127",
                          "128",
                          "-1",
                          "-4096",
                          "4095",
                          "-4097",
                          "4096",
                          "32767",
                          "-32768",
                          "32768",
                          "-32769",
                          "8388607",
                          "-8388608",
                          "8388608",
                          "2147483647",
                          "-2147483648",
                          "2147483648",
                          "-2147483649",
                          "9223372036854775807",
                          "-9223372036854775808",
                          "9223372036854775808",
                          "-9223372036854775809",
                          "01",
                          "-0",
                          "+1",
                          " 1",
                          "1 ",
                          "",
                          "00",
                          "1e3",
                          "0x10",
                          "12345678901234567890123"};
    size_t n = sizeof(vals) / sizeof(vals[0]);
    list_t *l = new_list(-2);
    for (size_t i = 0; i < n; i++) push(l, LIST_TAIL, vals[i]);
    assert_contents(l, vals, n);
    for (size_t i = 0; i < n; i++) {
        list_entry_t e;
        cr_assert(list_index(l, (long long)i, &e));
        cr_assert(e.len == strlen(vals[i]) && memcmp(e.p, vals[i], e.len) == 0);
        cr_assert(list_index(l, (long long)i - (long long)n, &e));
        cr_assert(e.len == strlen(vals[i]) && memcmp(e.p, vals[i], e.len) == 0);
    }
    /* a needle finds exactly its own element, never a numerically equal spelling */
    list_needle_t nd;
    list_needle_init(&nd, S("01"));
    cr_assert_eq(list_remove(l, &nd, 0), 1);
    list_needle_init(&nd, S("1"));
    cr_assert_eq(list_remove(l, &nd, 0), 1);
    list_needle_init(&nd, S("-9223372036854775808"));
    cr_assert_eq(list_remove(l, &nd, 0), 1);
    list_needle_init(&nd, S(""));
    cr_assert_eq(list_remove(l, &nd, 0), 1);
    cr_assert_eq(list_len(l), n - 4);
    cr_assert_eq(list_verify(l), 0);
    list_free(l);
}

Test(list, binary_and_long_strings_round_trip)
{
    list_t *l = new_list(-2);
    char buf[5000];
    for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (char)(i * 7);
    size_t lens[] = {0, 1, 63, 64, 65, 4095, 4096, 4097, 5000};
    for (size_t i = 0; i < 9; i++) cr_assert_eq(list_push(l, LIST_HEAD, buf, lens[i]), 0);
    for (size_t i = 0; i < 9; i++) {
        list_entry_t e;
        cr_assert(list_index(l, -1 - (long long)i, &e));
        cr_assert_eq(e.len, lens[i]);
        cr_assert(memcmp(e.p, buf, e.len) == 0);
    }
    cr_assert_eq(list_verify(l), 0);
    list_free(l);
}

/* ---- node bounds ---- */

Test(list, count_fill_bounds_entries_per_node)
{
    list_t *l = new_list(4);
    char b[16];
    for (int i = 0; i < 100; i++) {
        snprintf(b, sizeof(b), "v%d", i);
        push(l, i % 2 ? LIST_HEAD : LIST_TAIL, b);
    }
    cr_assert_eq(list_verify(l), 0);
    cr_assert_eq(list_node_count(l), 25);
    list_free(l);

    l = new_list(0); /* Redis: fill 0 holds one entry per node */
    for (int i = 0; i < 10; i++) push(l, LIST_TAIL, "x");
    cr_assert_eq(list_node_count(l), 10);
    list_free(l);
}

Test(list, size_fill_bounds_bytes_per_node)
{
    int fills[] = {-1, -2, -3, -4, -5, -9};
    size_t limits[] = {4096, 8192, 16384, 32768, 65536, 65536};
    char v[100];
    memset(v, 'a', sizeof(v));
    for (int f = 0; f < 6; f++) {
        list_t *l = new_list(fills[f]);
        for (int i = 0; i < 5000; i++) cr_assert_eq(list_push(l, i & 1, v, 98), 0);
        cr_assert_eq(list_verify(l), 0);
        /* 98 bytes + 1 header + 1 backlen = 100 per entry */
        size_t per_node = (limits[f] - 32) / 100;
        size_t want = (5000 + per_node - 1) / per_node;
        cr_assert(list_node_count(l) >= want && list_node_count(l) <= want + 2,
                  "fill %d: %zu nodes, want about %zu", fills[f], list_node_count(l), want);
        list_free(l);
    }
}

Test(list, memory_per_element_is_close_to_its_length)
{
    list_t *l = new_list(-2);
    for (int i = 0; i < 100000; i++) cr_assert_eq(list_push(l, i & 1, "xxx", 3), 0);
    size_t mem = list_memory(l);
    /* 3 bytes + header + backlen = 5; allow node headers and some slack */
    cr_assert(mem < 100000 * 6, "memory %zu for 100000 3-byte elements", mem);
    list_drop(l, LIST_HEAD, 99990);
    cr_assert(list_memory(l) < 2048, "memory %zu after dropping", list_memory(l));
    cr_assert_eq(list_verify(l), 0);
    list_free(l);

    l = new_list(-2);
    char b[24];
    for (int i = 0; i < 100000; i++) {
        snprintf(b, sizeof(b), "%d", i * 3);
        push(l, LIST_TAIL, b);
    }
    /* integers up to 300000 take 1 + 3 bytes + backlen */
    cr_assert(list_memory(l) < 100000 * 6, "memory %zu for integers", list_memory(l));
    list_free(l);
}

Test(list, insert_splits_full_nodes_and_remove_merges_them)
{
    list_t *l = new_list(4);
    const char *init[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    for (int i = 0; i < 8; i++) push(l, LIST_TAIL, init[i]);
    cr_assert_eq(list_node_count(l), 2);
    list_needle_t nd;
    list_needle_init(&nd, S("b"));
    cr_assert_eq(list_insert(l, &nd, 1, S("X")), 1); /* inside a full node: split */
    const char *w1[] = {"a", "b", "X", "c", "d", "e", "f", "g", "h"};
    assert_contents(l, w1, 9);
    cr_assert_eq(list_node_count(l), 3);
    list_needle_init(&nd, S("a"));
    cr_assert_eq(list_insert(l, &nd, 0, S("Y")), 1); /* at the edge of a node with room */
    list_needle_init(&nd, S("h"));
    cr_assert_eq(list_insert(l, &nd, 1, S("Z")), 1); /* after the tail of a full node */
    const char *w2[] = {"Y", "a", "b", "X", "c", "d", "e", "f", "g", "h", "Z"};
    assert_contents(l, w2, 11);
    list_needle_init(&nd, S("nothere"));
    cr_assert_eq(list_insert(l, &nd, 1, S("Q")), 0);
    /* removing most entries merges the nodes again */
    const char *gone[] = {"a", "b", "c", "d", "e", "f", "g"};
    for (int i = 0; i < 7; i++) {
        list_needle_init(&nd, gone[i], 1);
        cr_assert_eq(list_remove(l, &nd, 0), 1);
    }
    const char *w3[] = {"Y", "X", "h", "Z"};
    assert_contents(l, w3, 4);
    cr_assert_leq(list_node_count(l), 2);
    list_free(l);
}

Test(list, del_range_inside_merges_neighbours)
{
    list_t *l = new_list(10);
    char b[16];
    for (int i = 0; i < 100; i++) {
        snprintf(b, sizeof(b), "e%d", i);
        push(l, LIST_TAIL, b);
    }
    cr_assert_eq(list_node_count(l), 10);
    list_del_range(l, 3, 94); /* leaves e0 e1 e2 e97 e98 e99 */
    const char *w[] = {"e0", "e1", "e2", "e97", "e98", "e99"};
    assert_contents(l, w, 6);
    cr_assert_eq(list_node_count(l), 1);
    list_free(l);
}

Test(list, large_elements_get_nodes_of_their_own)
{
    list_t *l = new_list(-2);
    size_t big = 100000;
    char *v = xmalloc(big);
    memset(v, 'z', big);
    push(l, LIST_TAIL, "a");
    cr_assert_eq(list_push(l, LIST_TAIL, v, big), 0);
    push(l, LIST_TAIL, "b");
    push(l, LIST_HEAD, "c");
    cr_assert_eq(list_verify(l), 0);
    cr_assert_eq(list_node_count(l), 3);
    list_entry_t e;
    cr_assert(list_index(l, 2, &e));
    cr_assert_eq(e.len, big);
    /* LSET a small element to a big one and back */
    cr_assert_eq(list_set(l, 1, v, big), 1);
    cr_assert_eq(list_verify(l), 0);
    cr_assert(list_index(l, 1, &e) && e.len == big);
    cr_assert(list_index(l, 2, &e) && e.len == big);
    cr_assert_eq(list_set(l, 2, S("small")), 1);
    cr_assert_eq(list_verify(l), 0);
    cr_assert(list_index(l, 2, &e) && e.len == 5 && memcmp(e.p, "small", 5) == 0);
    /* insert a big element inside a node */
    list_needle_t nd;
    list_needle_init(&nd, S("c"));
    push(l, LIST_HEAD, "d");
    cr_assert_eq(list_insert(l, &nd, 0, v, big), 1);
    cr_assert(list_index(l, 1, &e) && e.len == big);
    cr_assert(list_index(l, 0, &e) && e.len == 1 && e.p[0] == 'd');
    cr_assert(list_index(l, 2, &e) && e.len == 1 && e.p[0] == 'c');
    cr_assert_eq(list_verify(l), 0);
    list_needle_t bn;
    list_needle_init(&bn, v, big);
    cr_assert_eq(list_remove(l, &bn, -1), 1);
    cr_assert_eq(list_remove(l, &bn, 0), 1);
    cr_assert_eq(list_len(l), 4);
    cr_assert_eq(list_verify(l), 0);
    xfree(v);
    list_free(l);
}

Test(list, pop_peek_and_drop_at_both_ends)
{
    list_t *l = new_list(-2);
    list_entry_t e;
    size_t len;
    cr_assert_not(list_peek(l, LIST_HEAD, &e));
    cr_assert_null(list_pop(l, LIST_TAIL, &len));
    push(l, LIST_TAIL, "1");
    push(l, LIST_TAIL, "two");
    push(l, LIST_HEAD, "zero");
    cr_assert(list_peek(l, LIST_HEAD, &e) && e.len == 4);
    cr_assert(list_peek(l, LIST_TAIL, &e) && e.len == 3);
    char *p = list_pop(l, LIST_TAIL, &len);
    cr_assert(len == 3 && strcmp(p, "two") == 0);
    xfree(p);
    p = list_pop(l, LIST_TAIL, &len);
    cr_assert(len == 1 && strcmp(p, "1") == 0);
    xfree(p);
    list_drop(l, LIST_HEAD, 1);
    cr_assert_eq(list_len(l), 0);
    cr_assert_eq(list_verify(l), 0);
    list_free(l);
}

Test(list, dup_is_deep_and_equal)
{
    list_t *l = new_list(3);
    char b[16];
    for (int i = 0; i < 50; i++) {
        snprintf(b, sizeof(b), "%d", i * 1000);
        push(l, LIST_TAIL, b);
    }
    list_t *d = list_dup(l);
    cr_assert_eq(list_verify(d), 0);
    cr_assert_eq(list_len(d), 50);
    list_drop(l, LIST_HEAD, 50);
    list_entry_t e;
    cr_assert(list_index(d, 49, &e) && e.len == 5 && memcmp(e.p, "49000", 5) == 0);
    cr_assert_eq(list_obj(d)->type, OBJ_LIST);
    cr_assert_eq(list_obj(d)->enc, ENC_QUICKLIST);
    list_free(l);
    list_free(d);
}

Test(list, iterates_both_ways_from_any_index)
{
    list_t *l = new_list(3);
    const char *v[] = {"a", "b", "c", "d", "e", "f", "g"};
    for (int i = 0; i < 7; i++) push(l, LIST_TAIL, v[i]);
    for (int s = -9; s < 9; s++) {
        for (int dir = 0; dir < 2; dir++) {
            list_iter_t it;
            list_entry_t e;
            list_iter_init(&it, l, s, dir);
            int start = s < 0 ? s + 7 : s;
            if (start < 0 || start >= 7) {
                cr_assert_not(list_iter_next(&it, &e));
                continue;
            }
            int i = start;
            while (list_iter_next(&it, &e)) {
                cr_assert(e.len == 1 && e.p[0] == v[i][0]);
                cr_assert_eq(it.index, i);
                i += dir == LIST_TAIL ? 1 : -1;
            }
            cr_assert_eq(i, dir == LIST_TAIL ? 7 : -1);
        }
    }
    list_needle_t nd;
    list_needle_init(&nd, S("e"));
    list_iter_t it;
    list_iter_init(&it, l, -1, LIST_HEAD);
    int r;
    while ((r = list_iter_match(&it, &nd)) == 0) {
    }
    cr_assert_eq(r, 1);
    cr_assert_eq(it.index, 4);
    list_free(l);
}

/* ---- the model test ---- */

typedef struct melem {
    char *p;
    size_t len;
} melem_t;

typedef struct model {
    melem_t *v;
    size_t n, cap;
} model_t;

static void m_insert(model_t *m, size_t at, const char *p, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = xrealloc(m->v, m->cap * sizeof(melem_t));
    }
    memmove(m->v + at + 1, m->v + at, (m->n - at) * sizeof(melem_t));
    m->v[at].p = xmemdup(p, len);
    m->v[at].len = len;
    m->n++;
}

static void m_erase(model_t *m, size_t at, size_t k)
{
    for (size_t i = at; i < at + k; i++) xfree(m->v[i].p);
    memmove(m->v + at, m->v + at + k, (m->n - at - k) * sizeof(melem_t));
    m->n -= k;
}

static int m_eq(const melem_t *a, const char *p, size_t len)
{
    return a->len == len && memcmp(a->p, p, len) == 0;
}

/* A random element: small strings from a small alphabet (so values repeat), integers of every
 * width, near-integers, and now and then a long or very long string. */
static size_t rand_elem(char *buf, size_t cap)
{
    int k = rand() % 100;
    if (k < 35) {
        size_t len = (size_t)(rand() % 4);
        for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + rand() % 3);
        return len;
    }
    if (k < 70) {
        static const long long scales[] = {100,     5000,         40000,
                                           9000000, 3000000000LL, 9223372036854775807LL};
        long long s = scales[rand() % 6];
        long long v = (long long)(((unsigned long long)rand() << 32 | (unsigned)rand()) %
                                  (unsigned long long)s);
        if (rand() % 2) v = -v;
        return (size_t)snprintf(buf, cap, "%lld", rand() % 2 ? v : v % 7);
    }
    if (k < 80) return (size_t)snprintf(buf, cap, "0%d", rand() % 10);
    if (k < 97) {
        size_t len = 64 + (size_t)(rand() % 200);
        for (size_t i = 0; i < len; i++) buf[i] = (char)('A' + rand() % 26);
        return len;
    }
    if (cap < 4000) return 0;
    size_t len = 3000 + (size_t)(rand() % (int)(cap - 3000));
    memset(buf, 'L', len);
    buf[0] = (char)('a' + rand() % 3);
    return len;
}

static void check_model(list_t *l, model_t *m, int full)
{
    cr_assert_eq(list_verify(l), 0, "verify %d", list_verify(l));
    cr_assert_eq(list_len(l), m->n);
    if (!full) return;
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, l, 0, LIST_TAIL);
    for (size_t i = 0; i < m->n; i++) {
        cr_assert(list_iter_next(&it, &e));
        cr_assert(m_eq(&m->v[i], e.p, e.len), "mismatch at %zu", i);
    }
    cr_assert_not(list_iter_next(&it, &e));
    list_iter_init(&it, l, -1, LIST_HEAD);
    for (size_t i = m->n; i-- > 0;) {
        cr_assert(list_iter_next(&it, &e));
        cr_assert(m_eq(&m->v[i], e.p, e.len), "backward mismatch at %zu", i);
    }
    cr_assert_not(list_iter_next(&it, &e));
}

static void run_model(int fill, int steps)
{
    list_t *l = new_list(fill);
    model_t m = {0};
    size_t bcap = 70000;
    char *buf = xmalloc(bcap), *buf2 = xmalloc(bcap);
    for (int step = 0; step < steps; step++) {
        int op = rand() % 100;
        size_t len = rand_elem(buf, bcap);
        if (op < 30 || m.n == 0) { /* push */
            int where = rand() % 2;
            cr_assert_eq(list_push(l, where, buf, len), 0);
            m_insert(&m, where == LIST_HEAD ? 0 : m.n, buf, len);
        } else if (op < 40) { /* pop or drop */
            int where = rand() % 2;
            if (rand() % 2) {
                size_t plen;
                char *p = list_pop(l, where, &plen);
                size_t at = where == LIST_HEAD ? 0 : m.n - 1;
                cr_assert(m_eq(&m.v[at], p, plen));
                xfree(p);
                m_erase(&m, at, 1);
            } else {
                size_t k = (size_t)rand() % (m.n < 40 ? m.n + 1 : 40);
                list_drop(l, where, k);
                m_erase(&m, where == LIST_HEAD ? 0 : m.n - k, k);
            }
        } else if (op < 50) { /* index and peek */
            long long i = (long long)(rand() % (int)(2 * m.n + 4)) - (long long)m.n - 2;
            list_entry_t e;
            int r = list_index(l, i, &e);
            long long norm = i < 0 ? i + (long long)m.n : i;
            if (norm < 0 || norm >= (long long)m.n) {
                cr_assert_eq(r, 0);
            } else {
                cr_assert_eq(r, 1);
                cr_assert(m_eq(&m.v[norm], e.p, e.len));
            }
            cr_assert(list_peek(l, LIST_HEAD, &e) && m_eq(&m.v[0], e.p, e.len));
            cr_assert(list_peek(l, LIST_TAIL, &e) && m_eq(&m.v[m.n - 1], e.p, e.len));
        } else if (op < 60) { /* set */
            long long i = (long long)(rand() % (int)(m.n + 2)) - 1;
            int r = list_set(l, i, buf, len);
            long long norm = i < 0 ? i + (long long)m.n : i;
            if (norm < 0 || norm >= (long long)m.n) {
                cr_assert_eq(r, 0);
            } else {
                cr_assert_eq(r, 1);
                xfree(m.v[norm].p);
                m.v[norm].p = xmemdup(buf, len);
                m.v[norm].len = len;
            }
        } else if (op < 70) { /* insert */
            size_t plen = rand_elem(buf2, 300);
            if (rand() % 3 == 0 && m.n) {
                melem_t *pick = &m.v[(size_t)rand() % m.n];
                plen = pick->len < 300 ? pick->len : 0;
                memcpy(buf2, pick->p, plen);
            }
            int after = rand() % 2;
            list_needle_t nd;
            list_needle_init(&nd, buf2, plen);
            int r = list_insert(l, &nd, after, buf, len);
            size_t at = 0;
            while (at < m.n && !m_eq(&m.v[at], buf2, plen)) at++;
            if (at == m.n) {
                cr_assert_eq(r, 0);
            } else {
                cr_assert_eq(r, 1);
                m_insert(&m, at + (size_t)after, buf, len);
            }
        } else if (op < 80) { /* remove */
            long long count = (long long)(rand() % 7) - 3;
            list_needle_t nd;
            list_needle_init(&nd, buf, len);
            long long r = list_remove(l, &nd, count);
            long long want = 0;
            if (count >= 0) {
                for (size_t i = 0; i < m.n;) {
                    if ((count == 0 || want < count) && m_eq(&m.v[i], buf, len)) {
                        m_erase(&m, i, 1);
                        want++;
                    } else {
                        i++;
                    }
                }
            } else {
                for (size_t i = m.n; i-- > 0;) {
                    if (want < -count && m_eq(&m.v[i], buf, len)) {
                        m_erase(&m, i, 1);
                        want++;
                    }
                }
            }
            cr_assert_eq(r, want);
        } else if (op < 88) { /* delete a range */
            size_t start = (size_t)rand() % m.n;
            size_t k = (size_t)rand() % (m.n - start + 1);
            list_del_range(l, start, k);
            m_erase(&m, start, k);
        } else if (op < 96) { /* partial iteration from a random index */
            long long s = (long long)(rand() % (int)m.n);
            int dir = rand() % 2;
            list_iter_t it;
            list_entry_t e;
            list_iter_init(&it, l, s, dir);
            for (int k = 0; k < 20 && list_iter_next(&it, &e); k++) {
                long long want = dir == LIST_TAIL ? s + k : s - k;
                cr_assert_eq(it.index, want);
                cr_assert(m_eq(&m.v[want], e.p, e.len));
            }
        } else { /* dup and compare */
            list_t *d = list_dup(l);
            check_model(d, &m, 1);
            list_free(d);
        }
        check_model(l, &m, step % 16 == 0);
    }
    check_model(l, &m, 1);
    m_erase(&m, 0, m.n);
    xfree(m.v);
    xfree(buf);
    xfree(buf2);
    list_free(l);
}

Test(list, random_ops_match_an_array_fill_minus_2)
{
    run_model(-2, 20000);
}

Test(list, random_ops_match_an_array_fill_minus_1)
{
    run_model(-1, 10000);
}

Test(list, random_ops_match_an_array_fill_minus_5)
{
    run_model(-5, 10000);
}

Test(list, random_ops_match_an_array_small_counts)
{
    run_model(1, 5000);
    run_model(2, 5000);
    run_model(5, 10000);
    run_model(0, 3000);
}

Test(list, random_ops_match_an_array_count_128)
{
    run_model(128, 10000);
}

Test(list, queue_and_stack_patterns_stay_compact)
{
    list_t *l = new_list(-2);
    char b[24];
    /* a queue: push at the tail, pop at the head, the list never longer than 1000 */
    for (int i = 0; i < 200000; i++) {
        snprintf(b, sizeof(b), "job:%d", i);
        push(l, LIST_TAIL, b);
        if (i >= 1000) list_drop(l, LIST_HEAD, 1);
    }
    cr_assert_eq(list_len(l), 1000);
    cr_assert_eq(list_verify(l), 0);
    cr_assert(list_memory(l) < 1000 * 12 + 10000, "queue memory %zu", list_memory(l));
    list_entry_t e;
    cr_assert(list_index(l, 0, &e) && e.len == 10 && memcmp(e.p, "job:199000", 10) == 0);
    /* a stack at the head */
    for (int i = 0; i < 50000; i++) {
        push(l, LIST_HEAD, "s");
        if (i % 3 == 0) list_drop(l, LIST_HEAD, 1);
    }
    cr_assert_eq(list_verify(l), 0);
    list_free(l);
}
