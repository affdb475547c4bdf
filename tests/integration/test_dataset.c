/* test_dataset.c - libcte's datasets (client/dataset.c) against the real cte-server: round
 * trips of random hyperslabs (chunk edges, partial chunks, chunks clipped at the edge) for
 * ranks 1 to 4 over TCP, the Unix socket and shared memory, checked against an in-memory
 * model of the array; every element type; flow control under a tiny RAM tier in front of a
 * file tier (writes wait, demote, never fail); the metadata and chunks surviving a restart
 * through the append-only file; listing, deleting, attributes and the error messages.
 *
 * Each test starts its own server (itest_server.h). Run with --jobs 1 (ctest does). */
#define _GNU_SOURCE
#include <cte/cte.h>
#include <cte/dataset.h>

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/itest_server.h"
#include "tests/leak.h"

/* ---- the server under test ---- */

static int tiny_ram; /* a 1 MiB RAM tier over a 256 MiB file tier */
static int aof;      /* appendonly yes (the dir is kept across a restart) */

static void exec_server(void)
{
    char disk[256];
    snprintf(disk, sizeof disk, "disk:file:256mb:%s/tier", S.dir);
    const char *extra[] = {
        "--appendonly", aof ? "yes" : "no", "--tier", "ram:ram:1mb", "--tier", disk, NULL};
    if (!tiny_ram) extra[2] = NULL;
    itest_exec(NULL, extra);
}

static int wait_ready(void)
{
    char addr[64];
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", S.port);
    double deadline = now_s() + start_timeout();
    while (now_s() < deadline) {
        cte_conn_t *c;
        cte_reply_t *r = NULL;
        if (cte_connect(addr, 0, &c) == 0) {
            int rc = cte_call(c, &r, "PING", NULL);
            cte_reply_free(r);
            cte_conn_free(c);
            if (rc == 0 && access(S.sock, F_OK) == 0) return 0;
        }
        usleep(20000);
    }
    return -1;
}

static void setup(void)
{
    itest_start("cte-dataset-", exec_server, wait_ready);
}

static void setup_tiny(void)
{
    tiny_ram = 1;
    setup();
}

static void setup_aof(void)
{
    aof = 1;
    setup();
}

static void teardown(void)
{
    itest_stop();
    tiny_ram = aof = 0;
}

enum transport { TCP, UNIX, SHM };

static cte_conn_t *conn(enum transport t)
{
    char addr[200];
    cte_conn_t *c;
    if (t == TCP) snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", S.port);
    if (t == UNIX) snprintf(addr, sizeof addr, "unix:%s", S.sock);
    if (t == SHM) snprintf(addr, sizeof addr, "shm:%s", S.sock);
    int rc = cte_connect(addr, 0, &c);
    cr_assert_eq(rc, 0, "connect %s: %s", addr, cte_strerror(rc));
    return c;
}

#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        cr_assert_eq(rc_, 0, "%s: %s (%s)", #call, cte_strerror(rc_), cte_conn_errmsg(c));         \
    } while (0)

/* ---- a model of the array: the same hyperslab writes applied to memory ---- */

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

typedef struct model {
    int rank;
    uint64_t shape[CTE_DATASET_MAX_RANK];
    size_t esize;
    unsigned char *data;
} model_t;

/* Linear element index of point p in an array of extent ext. */
static uint64_t lin(const uint64_t *p, const uint64_t *ext, int rank)
{
    uint64_t i = 0;
    for (int k = 0; k < rank; k++) i = i * ext[k] + p[k];
    return i;
}

/* Visits every point of the box start+count: fn(point, index inside the box). */
static void each_point(int rank, const uint64_t *start, const uint64_t *count,
                       void (*fn)(void *, const uint64_t *, uint64_t), void *ud)
{
    uint64_t p[CTE_DATASET_MAX_RANK], n = 1;
    for (int k = 0; k < rank; k++) n *= count[k], p[k] = start[k];
    for (uint64_t i = 0; i < n; i++) {
        fn(ud, p, i);
        for (int k = rank - 1; k >= 0; k--) {
            if (++p[k] < start[k] + count[k]) break;
            p[k] = start[k];
        }
    }
}

typedef struct visit {
    model_t *m;
    unsigned char *buf;
    int to_model;
} visit_t;

static void move_point(void *ud, const uint64_t *p, uint64_t i)
{
    visit_t *v = ud;
    unsigned char *cell = v->m->data + lin(p, v->m->shape, v->m->rank) * v->m->esize;
    if (v->to_model)
        memcpy(cell, v->buf + i * v->m->esize, v->m->esize);
    else
        memcpy(v->buf + i * v->m->esize, cell, v->m->esize);
}

static uint64_t box_elems(int rank, const uint64_t *count)
{
    uint64_t n = 1;
    for (int k = 0; k < rank; k++) n *= count[k];
    return n;
}

/* A random hyperslab; every few, one that starts or ends exactly on a chunk edge. */
static void random_slab(uint64_t *s, const uint64_t *shape, const uint64_t *chunk, int rank,
                        uint64_t *start, uint64_t *count)
{
    for (int k = 0; k < rank; k++) {
        uint64_t a = rng(s) % shape[k], b = rng(s) % shape[k];
        if (rng(s) % 3 == 0) a = (a / chunk[k]) * chunk[k];
        if (a > b) {
            uint64_t t = a;
            a = b, b = t;
        }
        if (rng(s) % 3 == 0) b = ((b / chunk[k]) + 1) * chunk[k] - 1;
        if (b >= shape[k]) b = shape[k] - 1;
        start[k] = a, count[k] = b - a + 1;
    }
}

/* Writes random hyperslabs to a new dataset and the model, then reads back the whole array and
 * random hyperslabs and compares them with the model. */
static void round_trip(cte_conn_t *c, const char *name, cte_dtype_t type, int rank,
                       const uint64_t *shape, const uint64_t *chunk, int writes, uint64_t seed)
{
    model_t m = {.rank = rank, .esize = cte_dtype_size(type)};
    memcpy(m.shape, shape, rank * sizeof *shape);
    uint64_t total = box_elems(rank, shape), start[8], count[8], zero[8] = {0};
    m.data = calloc(total, m.esize);
    unsigned char *buf = malloc(total * m.esize), *back = malloc(total * m.esize);
    cte_dataset_t *d;
    OK(cte_dataset_create(c, "dstest", name, type, rank, shape, chunk, &d));
    for (int w = 0; w < writes; w++) {
        random_slab(&seed, shape, chunk, rank, start, count);
        uint64_t n = box_elems(rank, count) * m.esize;
        for (uint64_t i = 0; i < n; i++) buf[i] = (unsigned char)rng(&seed);
        OK(cte_dataset_write(d, start, count, buf, w % 2 ? 0.5 : -1));
        visit_t v = {&m, buf, 1};
        each_point(rank, start, count, move_point, &v);
        memset(buf, 0xA5, n); /* the caller's buffer is free once the call returns */
    }
    OK(cte_dataset_wait(d));
    OK(cte_dataset_read(d, zero, shape, back));
    cr_assert(memcmp(back, m.data, total * m.esize) == 0, "%s: whole array differs", name);
    for (int r = 0; r < 20; r++) {
        random_slab(&seed, shape, chunk, rank, start, count);
        OK(cte_dataset_read(d, start, count, back));
        visit_t v = {&m, buf, 0};
        each_point(rank, start, count, move_point, &v);
        cr_assert(memcmp(back, buf, box_elems(rank, count) * m.esize) == 0,
                  "%s: hyperslab read %d differs", name, r);
    }
    OK(cte_dataset_close(d));
    free(m.data), free(buf), free(back);
}

static const struct {
    int rank;
    uint64_t shape[4], chunk[4];
} LAYOUTS[] = {
    {1, {1000}, {64}},             /* edge chunk of 40 */
    {1, {4096}, {4096}},           /* one chunk */
    {2, {37, 50}, {8, 16}},        /* edges in both dimensions */
    {2, {64, 64}, {64, 1}},        /* column chunks: many runs */
    {3, {20, 17, 30}, {7, 5, 30}}, /* whole rows per chunk */
    {3, {16, 16, 16}, {4, 4, 4}},
    {4, {6, 7, 5, 9}, {2, 3, 5, 4}},
    {4, {3, 4, 130, 33}, {3, 4, 64, 33}}, /* large contiguous runs */
};

static void every_layout(enum transport t)
{
    cte_conn_t *c = conn(t);
    char name[64];
    for (size_t i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++) {
        snprintf(name, sizeof name, "layout%zu", i);
        round_trip(c, name, i % 2 ? CTE_FLOAT64 : CTE_INT16, LAYOUTS[i].rank, LAYOUTS[i].shape,
                   LAYOUTS[i].chunk, 12, 0x9E3779B97F4A7C15ull + i);
    }
    cte_conn_free(c);
}

LTest(dataset, round_trips_rank_1_to_4_over_tcp, .init = setup, .fini = teardown)
{
    every_layout(TCP);
}

LTest(dataset, round_trips_rank_1_to_4_over_the_unix_socket, .init = setup, .fini = teardown)
{
    every_layout(UNIX);
}

LTest(dataset, round_trips_rank_1_to_4_over_shared_memory, .init = setup, .fini = teardown)
{
    every_layout(SHM);
}

LTest(dataset, every_element_type_round_trips_and_reopens, .init = setup, .fini = teardown)
{
    cte_conn_t *c = conn(SHM);
    uint64_t shape[2] = {33, 21}, chunk[2] = {8, 8};
    for (int t = 0; t < CTE_DTYPE_COUNT; t++) {
        cte_dtype_t back;
        cr_assert_eq(cte_dtype_parse(cte_dtype_name(t), &back), 0);
        cr_assert_eq(back, t);
        round_trip(c, cte_dtype_name(t), t, 2, shape, chunk, 6, 77 + t);
        cte_dataset_t *d;
        OK(cte_dataset_open(c, "dstest", cte_dtype_name(t), &d));
        cr_assert_eq(cte_dataset_type(d), t);
        cr_assert_eq(cte_dataset_rank(d), 2);
        cr_assert_eq(cte_dataset_shape(d)[0], 33);
        cr_assert_eq(cte_dataset_chunk(d)[1], 8);
        cr_assert_eq(cte_dataset_bytes(d), 33 * 21 * cte_dtype_size(t));
        OK(cte_dataset_close(d));
    }
    cr_assert_eq(cte_dtype_parse("complex128", &(cte_dtype_t){0}), CTE_E_INVAL);
    cte_conn_free(c);
}

/* A partial write of a chunk that holds earlier data keeps the rest of the chunk, whichever
 * path it takes (one run, several runs, read-modify-write). */
LTest(dataset, partial_chunk_writes_keep_the_rest_of_the_chunk, .init = setup, .fini = teardown)
{
    cte_conn_t *c = conn(TCP);
    uint64_t shape[2] = {64, 64}, chunk[2] = {32, 32}, zero[2] = {0}, start[2], count[2];
    int32_t all[64 * 64], part[32 * 32], back[64 * 64];
    cte_dataset_t *d;
    for (int i = 0; i < 64 * 64; i++) all[i] = i;
    OK(cte_dataset_create(c, "dstest", "partial", CTE_INT32, 2, shape, chunk, &d));
    OK(cte_dataset_write(d, zero, shape, all, -1));
    const uint64_t cases[][4] = {{3, 0, 1, 64}, {5, 5, 20, 20}, {0, 31, 64, 2}, {40, 40, 2, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        start[0] = cases[k][0], start[1] = cases[k][1], count[0] = cases[k][2],
        count[1] = cases[k][3];
        for (uint64_t i = 0; i < count[0] * count[1]; i++) part[i] = -(int32_t)(k * 10000 + i);
        OK(cte_dataset_write(d, start, count, part, -1));
        for (uint64_t y = 0; y < count[0]; y++)
            for (uint64_t x = 0; x < count[1]; x++)
                all[(start[0] + y) * 64 + start[1] + x] = part[y * count[1] + x];
    }
    OK(cte_dataset_read(d, zero, shape, back));
    cr_assert(memcmp(back, all, sizeof all) == 0);
    OK(cte_dataset_close(d));
    cte_conn_free(c);
}

LTest(dataset, chunks_never_written_read_as_zeros, .init = setup, .fini = teardown)
{
    cte_conn_t *c = conn(UNIX);
    uint64_t shape[1] = {100}, chunk[1] = {10}, start[1] = {45}, count[1] = {3}, zero[1] = {0};
    uint8_t one[3] = {1, 2, 3}, back[100], want[100] = {0};
    cte_dataset_t *d;
    OK(cte_dataset_create(c, "dstest", "sparse", CTE_UINT8, 1, shape, chunk, &d));
    OK(cte_dataset_write(d, start, count, one, -1));
    memcpy(want + 45, one, 3);
    memset(back, 0xFF, sizeof back);
    OK(cte_dataset_read(d, zero, shape, back));
    cr_assert(memcmp(back, want, sizeof want) == 0);
    uint64_t blobs;
    OK(cte_len(c, "dstest", &blobs));
    cr_assert_eq(blobs, 2, "the metadata and one chunk, not %llu", (unsigned long long)blobs);
    OK(cte_dataset_close(d));
    cte_conn_free(c);
}

/* ---- flow control ---- */

typedef struct inflight_probe {
    cte_dataset_t *d;
    uint64_t max_seen;
} inflight_probe_t;

LTest(dataset, flow_control_under_a_tiny_ram_tier_waits_and_demotes, .init = setup_tiny,
      .fini = teardown)
{
    cte_conn_t *c = conn(SHM);
    const uint64_t n = 1024, limit = 1 << 20; /* 16 MiB of float64 rows through a 1 MiB tier */
    uint64_t shape[2] = {n, 2048}, chunk[2] = {16, 2048}, start[2] = {0, 0}, count[2] = {16, 2048};
    double *rows = malloc(16 * 2048 * sizeof *rows), *back = malloc(16 * 2048 * sizeof *back);
    cte_dataset_t *d;
    OK(cte_dataset_create(c, "dstest", "big", CTE_FLOAT64, 2, shape, chunk, &d));
    OK(cte_dataset_set_max_inflight(d, limit));
    cr_assert_eq(cte_dataset_set_max_inflight(d, 0), CTE_E_INVAL);
    uint64_t most = 0;
    for (uint64_t r = 0; r < n; r += 16) {
        for (int i = 0; i < 16 * 2048; i++) rows[i] = (double)(r * 2048 + i) / 3;
        start[0] = r;
        OK(cte_dataset_write(d, start, count, rows, 1.0));
        if (cte_dataset_inflight(d) > most) most = cte_dataset_inflight(d);
    }
    /* one 256 KiB chunk may be queued on top of what is in flight, never more */
    cr_assert_leq(most, limit, "in flight: %llu bytes", (unsigned long long)most);
    OK(cte_dataset_wait(d));
    cr_assert_eq(cte_dataset_inflight(d), 0);
    for (uint64_t r = 0; r < n; r += 16) {
        start[0] = r;
        OK(cte_dataset_read(d, start, count, back));
        for (int i = 0; i < 16 * 2048; i++)
            cr_assert_eq(back[i], (double)(r * 2048 + i) / 3, "row block %llu element %d",
                         (unsigned long long)r, i);
    }
    int on_disk = 0;
    for (uint64_t r = 0; r < n / 16; r++) {
        char blob[64];
        cte_blob_info_t info;
        snprintf(blob, sizeof blob, "big/c.%llu.0", (unsigned long long)r);
        OK(cte_info(c, "dstest", blob, &info));
        on_disk += !strcmp(info.tier, "disk");
    }
    cr_assert_geq(on_disk, 60, "%d of 64 chunks on the file tier", on_disk);
    OK(cte_dataset_close(d));
    free(rows), free(back);
    cte_conn_free(c);
}

/* ---- persistence ---- */

static void restart(void)
{
    cr_assert_eq(stop_server(), 0);
    S.pid = fork();
    cr_assert_geq(S.pid, 0);
    if (S.pid == 0) exec_server();
    cr_assert_eq(wait_ready(), 0, "the server did not come back");
}

LTest(dataset, metadata_and_chunks_survive_a_restart_through_the_aof, .init = setup_aof,
      .fini = teardown)
{
    cte_conn_t *c = conn(SHM);
    uint64_t shape[3] = {10, 20, 30}, chunk[3] = {4, 20, 7}, zero[3] = {0};
    float data[10 * 20 * 30], back[10 * 20 * 30];
    for (int i = 0; i < 6000; i++) data[i] = (float)i * 0.25f;
    cte_dataset_t *d;
    OK(cte_dataset_create(c, "dstest", "u", CTE_FLOAT32, 3, shape, chunk, &d));
    OK(cte_dataset_set_attr(d, "step", "1200"));
    OK(cte_dataset_set_attr(d, "model", "gray-scott F=0.04 k=0.06"));
    OK(cte_dataset_set_attr(d, "step", "1300")); /* replaced, the metadata shorter than before */
    OK(cte_dataset_write(d, zero, shape, data, 0.9));
    OK(cte_dataset_close(d));
    cte_conn_free(c);
    restart();
    c = conn(TCP);
    OK(cte_dataset_open(c, "dstest", "u", &d));
    cr_assert_eq(cte_dataset_type(d), CTE_FLOAT32);
    cr_assert_eq(cte_dataset_rank(d), 3);
    cr_assert_eq(cte_dataset_chunk(d)[2], 7);
    cr_assert_eq(cte_dataset_attr_count(d), 2);
    cr_assert_str_eq(cte_dataset_attr_key(d, 0), "step");
    cr_assert_str_eq(cte_dataset_attr(d, "step"), "1300");
    cr_assert_str_eq(cte_dataset_attr(d, "model"), "gray-scott F=0.04 k=0.06");
    cr_assert_null(cte_dataset_attr(d, "missing"));
    OK(cte_dataset_read(d, zero, shape, back));
    cr_assert(memcmp(back, data, sizeof data) == 0);
    OK(cte_dataset_set_attr(d, "model", NULL));
    cr_assert_eq(cte_dataset_attr_count(d), 1);
    OK(cte_dataset_close(d));
    cte_conn_free(c);
}

/* ---- listing, deleting, errors ---- */

/* A write's puts reach the server when cte_dataset_write returns, not at the writer's next call
 * (a simulation computes between its writes): another connection sees every chunk stored
 * while the writer's connection is left alone. Over shm a chunk's put is a small request
 * referring to the data area, which stayed batched in the connection before. */
static void writes_are_sent_at_once(enum transport t)
{
    cte_conn_t *c = conn(t), *other = conn(TCP);
    uint64_t shape[1] = {64 * 4096}, chunk[1] = {4096}, zero[1] = {0};
    uint8_t *data = malloc(shape[0]);
    memset(data, 7, shape[0]);
    cte_dataset_t *d;
    OK(cte_dataset_create(c, "sent", "x", CTE_UINT8, 1, shape, chunk, &d));
    OK(cte_dataset_write(d, zero, shape, data, -1));
    uint64_t blobs = 0;
    for (int i = 0; i < 500 && blobs < 65; i++) { /* the meta blob and 64 chunks */
        int rc = cte_len(other, "sent", &blobs);
        cr_assert(rc == 0 || rc == CTE_E_NOTFOUND, "TLEN: %s", cte_strerror(rc));
        if (blobs < 65) usleep(10000);
    }
    cr_assert_eq(blobs, 65, "only %llu of 65 blobs stored while the writer computed",
                 (unsigned long long)blobs);
    OK(cte_dataset_close(d));
    free(data);
    cte_conn_free(other);
    cte_conn_free(c);
}

LTest(dataset, writes_reach_the_server_before_the_next_call_over_tcp, .init = setup,
      .fini = teardown)
{
    writes_are_sent_at_once(TCP);
}

LTest(dataset, writes_reach_the_server_before_the_next_call_over_shared_memory, .init = setup,
      .fini = teardown)
{
    writes_are_sent_at_once(SHM);
}

LTest(dataset, list_and_delete, .init = setup, .fini = teardown)
{
    cte_conn_t *c = conn(TCP);
    uint64_t shape[1] = {100}, chunk[1] = {10}, zero[1] = {0};
    uint8_t data[100] = {1};
    const char *names[] = {"v", "u", "a.b/meta", "x(1)"};
    for (int i = 0; i < 4; i++) {
        cte_dataset_t *d;
        OK(cte_dataset_create(c, "dstest", names[i], CTE_UINT8, 1, shape, chunk, &d));
        OK(cte_dataset_write(d, zero, shape, data, -1));
        OK(cte_dataset_close(d));
    }
    char **list;
    size_t n;
    OK(cte_dataset_list(c, "dstest", &list, &n));
    cr_assert_eq(n, 4);
    cr_assert_str_eq(list[0], "a.b/meta");
    cr_assert_str_eq(list[1], "u");
    cr_assert_str_eq(list[2], "v");
    cr_assert_str_eq(list[3], "x(1)");
    cr_assert_null(list[4]);
    free(list);
    OK(cte_dataset_delete(c, "dstest", "x(1)"));
    OK(cte_dataset_delete(c, "dstest", "a.b/meta"));
    cr_assert_eq(cte_dataset_delete(c, "dstest", "x(1)"), CTE_E_NOTFOUND);
    uint64_t blobs;
    OK(cte_len(c, "dstest", &blobs));
    cr_assert_eq(blobs, 22, "u and v: 1 + 10 blobs each, not %llu", (unsigned long long)blobs);
    OK(cte_dataset_list(c, "nosuchtag", &list, &n));
    cr_assert_eq(n, 0);
    cr_assert_null(list[0]);
    free(list);
    cte_conn_free(c);
}

LTest(dataset, errors_name_what_is_wrong, .init = setup, .fini = teardown)
{
    cte_conn_t *c = conn(TCP);
    uint64_t shape[2] = {10, 10}, chunk[2] = {5, 5}, other[2] = {5, 10}, start[2] = {8, 0},
             count[2] = {3, 1}, zero[2] = {0};
    int16_t buf[100] = {0};
    cte_dataset_t *d;
    cr_assert_eq(cte_dataset_open(c, "dstest", "none", &d), CTE_E_NOTFOUND);
    cr_assert_null(d);
    cr_assert(strstr(cte_conn_errmsg(c), "'none': no such dataset"), "%s", cte_conn_errmsg(c));
    cr_assert_eq(cte_dataset_create(c, "dstest", "", CTE_INT16, 2, shape, chunk, &d), CTE_E_INVAL);
    cr_assert_eq(cte_dataset_create(c, "dstest", "e", CTE_INT16, 0, shape, chunk, &d), CTE_E_INVAL);
    cr_assert_eq(cte_dataset_create(c, "dstest", "e", CTE_INT16, 9, shape, chunk, &d), CTE_E_INVAL);
    cr_assert_eq(cte_dataset_create(c, "dstest", "e", CTE_DTYPE_COUNT, 2, shape, chunk, &d),
                 CTE_E_INVAL);
    uint64_t huge[2] = {1 << 20, 1 << 20};
    cr_assert_eq(cte_dataset_create(c, "dstest", "e", CTE_INT16, 2, huge, huge, &d), CTE_E_INVAL);
    cr_assert(strstr(cte_conn_errmsg(c), "1 GiB"), "%s", cte_conn_errmsg(c));
    OK(cte_dataset_create(c, "dstest", "e", CTE_INT16, 2, shape, chunk, &d));
    cr_assert_eq(cte_dataset_write(d, start, count, buf, -1), CTE_E_INVAL);
    cr_assert(strstr(cte_conn_errmsg(c), "exceeds dimension 0 of size 10"), "%s",
              cte_conn_errmsg(c));
    cr_assert_eq(cte_dataset_read(d, start, count, buf), CTE_E_INVAL);
    cr_assert_eq(cte_dataset_write(d, zero, shape, buf, 1.5), CTE_E_INVAL);
    cr_assert_eq(cte_dataset_set_attr(d, "", "x"), CTE_E_INVAL);
    count[0] = 0; /* an empty hyperslab writes nothing */
    OK(cte_dataset_write(d, zero, count, NULL, -1));
    OK(cte_dataset_close(d));
    cte_dataset_t *d2;
    cr_assert_eq(cte_dataset_create(c, "dstest", "e", CTE_INT16, 2, shape, other, &d2),
                 CTE_E_EXISTS);
    cr_assert(strstr(cte_conn_errmsg(c), "another type, shape or chunk shape"), "%s",
              cte_conn_errmsg(c));
    cr_assert_eq(cte_dataset_create(c, "dstest", "e", CTE_INT32, 2, shape, chunk, &d2),
                 CTE_E_EXISTS);
    /* a metadata blob that does not parse, and a chunk longer than its extent */
    OK(cte_put(c, "dstest", "bad/meta", 0, "cte-dataset 1\ntype float64\n", 27, -1, NULL));
    cr_assert_eq(cte_dataset_open(c, "dstest", "bad", &d2), CTE_E_FORMAT);
    cr_assert(strstr(cte_conn_errmsg(c), "does not parse"), "%s", cte_conn_errmsg(c));
    OK(cte_dataset_open(c, "dstest", "e", &d));
    OK(cte_put(c, "dstest", "e/c.1.1", 0, buf, 51 * sizeof *buf, -1, NULL));
    cr_assert_eq(cte_dataset_read(d, zero, shape, buf), CTE_E_FORMAT);
    OK(cte_dataset_close(d));
    /* a server error from an asynchronous put reaches cte_dataset_wait with its message */
    cte_reply_t *r;
    OK(cte_dataset_create(c, "dstest2", "w", CTE_INT16, 2, shape, chunk, &d));
    OK(cte_call(c, &r, "DEL", "dstest2", NULL));
    cte_reply_free(r);
    OK(cte_call(c, &r, "SET", "dstest2", "x", NULL));
    cte_reply_free(r);
    OK(cte_dataset_write(d, zero, shape, buf, -1));
    cr_assert_eq(cte_dataset_wait(d), CTE_E_SERVER);
    cr_assert(strstr(cte_conn_errmsg(c), "WRONGTYPE"), "%s", cte_conn_errmsg(c));
    OK(cte_dataset_wait(d)); /* reported once */
    OK(cte_dataset_close(d));
    cte_conn_free(c);
}
