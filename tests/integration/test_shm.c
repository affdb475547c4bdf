/* test_shm.c - the shared-memory transport (server/net/shm.c, client/shm.c) against the real
 * cte-server binary: pub/sub, blocking pops, MULTI and MONITOR through the rings, a reply
 * larger than the ring (backpressure both ways), INFO and CLIENT LIST, a client SIGKILLed in the
 * middle of a request (the server reclaims its segment: its descriptors are counted in
 * /proc/PID/fd), garbage written into the rings, the indices and the header by a client that
 * attaches by hand, and a peer with another uid refused.
 *
 * A "raw" client here attaches without libcte, from docs/shm.md alone: it sends
 * CTE.SHM.ATTACH on the Unix socket, takes the three descriptors and speaks RESP into the
 * rings itself, never sleeping (it polls), so it also checks the documented layout.
 * Each test fork/execs its own server (CTE_SERVER, a free loopback port, a temp dir). */
#define _GNU_SOURCE
#include <cte/cte.h>

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/itest_server.h"

/* ---- the server under test (itest_server.h) ---- */

static void exec_server(void)
{
    const char *extra[] = {"--unixsocketperm", "777", "--appendonly", "no", NULL};
    itest_exec(NULL, extra);
}

static cte_conn_t *open_or_fail(const char *kind)
{
    char addr[160];
    cte_conn_t *c = cte_conn_new();
    if (!strcmp(kind, "tcp"))
        snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", S.port);
    else
        snprintf(addr, sizeof addr, "%s:%s", kind, S.sock);
    int rc = cte_conn_open(c, addr, 0);
    cr_assert_eq(rc, 0, "open %s: %s (%s)", addr, cte_strerror(rc), cte_conn_errmsg(c));
    return c;
}

static void setup(void)
{
    snprintf(S.dir, sizeof S.dir, "/tmp/cte-shm-XXXXXX");
    cr_assert_not_null(mkdtemp(S.dir));
    chmod(S.dir, 0755); /* the other-uid test connects as nobody */
    snprintf(S.sock, sizeof S.sock, "%s/s.sock", S.dir);
    snprintf(S.log, sizeof S.log, "%s/server.log", S.dir);
    S.port = free_port();
    S.pid = fork();
    if (S.pid == 0) exec_server();
    for (double end = now_s() + 15; now_s() < end; usleep(20000)) {
        cte_conn_t *c;
        char addr[64];
        snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", S.port);
        if (access(S.sock, F_OK) == 0 && cte_connect(addr, 0, &c) == 0) {
            cte_conn_free(c);
            return;
        }
    }
    cr_assert_fail("%s did not start", server_path());
}

static void teardown(void)
{
    itest_stop();
}

/* ---- a raw client of docs/shm.md ---- */

enum { HDR = 4096 };
typedef struct hdr {
    uint32_t magic, version;
    uint64_t ring_size, req_off, rep_off, data_off, data_size, total;
    _Alignas(64) uint64_t req_head;
    _Alignas(64) uint64_t req_tail;
    _Alignas(64) uint32_t srv_sleeping;
    _Alignas(64) uint64_t rep_head;
    _Alignas(64) uint64_t rep_tail;
    _Alignas(64) uint32_t cli_sleeping;
    _Alignas(64) uint64_t rd_tail;
} hdr_t;
_Static_assert(offsetof(hdr_t, rep_tail) == 320, "docs/shm.md's layout");
_Static_assert(offsetof(hdr_t, rd_tail) == 448, "docs/shm.md's layout");

typedef struct raw {
    int sock, req_efd, rep_efd;
    hdr_t *h;
    uint8_t *req, *rep, *reqd, *repd;
    uint64_t ring, data, head, tail;
    char in[1 << 16];
    size_t inlen;
} raw_t;

/* Attaches with CTE.SHM.ATTACH (args: "ring-size [data-size]" or NULL); the greeting line goes to
 * line. Returns 0, or -1 with line holding the error reply. */
static int raw_attach(raw_t *r, const char *ring, char *line, size_t cap)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char req[128], cbuf[CMSG_SPACE(3 * sizeof(int))];
    int fds[3];
    memset(r, 0, sizeof *r);
    r->sock = socket(AF_UNIX, SOCK_STREAM, 0);
    strcpy(sa.sun_path, S.sock);
    cr_assert_eq(connect(r->sock, (struct sockaddr *)&sa, sizeof sa), 0, "%s", strerror(errno));
    char w1[64] = "", w2[64] = "";
    int words = ring ? sscanf(ring, "%63s %63s", w1, w2) : 0, n;
    if (words == 2)
        n = snprintf(req, sizeof req, "*3\r\n$14\r\nCTE.SHM.ATTACH\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
                     strlen(w1), w1, strlen(w2), w2);
    else if (words == 1)
        n = snprintf(req, sizeof req, "*2\r\n$14\r\nCTE.SHM.ATTACH\r\n$%zu\r\n%s\r\n",
                     strlen(w1), w1);
    else
        n = snprintf(req, sizeof req, "*1\r\n$14\r\nCTE.SHM.ATTACH\r\n");
    cr_assert_eq(write(r->sock, req, (size_t)n), n);
    struct iovec iov = {line, cap - 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t got = recvmsg(r->sock, &m, 0);
    cr_assert_gt(got, 0);
    line[got] = '\0';
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    if (line[0] != '+') {
        cr_assert_null(cm, "an error reply carries no descriptors");
        close(r->sock);
        return -1;
    }
    cr_assert_not_null(cm);
    memcpy(fds, CMSG_DATA(cm), sizeof fds);
    unsigned long long rs, ds;
    cr_assert_eq(sscanf(line, "+SHM 2 %llu %llu", &rs, &ds), 2, "%s", line);
    struct stat st;
    cr_assert_eq(fstat(fds[0], &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "the segment is mode 0600");
    cr_assert_eq((uint64_t)st.st_size, HDR + 2 * rs + 2 * ds);
    r->h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    cr_assert_neq(r->h, MAP_FAILED);
    cr_assert_lt(ftruncate(fds[0], 4096), 0, "the segment is sealed against shrinking");
    close(fds[0]);
    r->req_efd = fds[1];
    r->rep_efd = fds[2];
    r->ring = rs;
    r->data = ds;
    cr_assert_eq(r->h->magic, 0x4d485343u);
    cr_assert_eq(r->h->version, 2);
    cr_assert_eq(r->h->ring_size, rs);
    cr_assert_eq(r->h->data_size, ds);
    cr_assert_eq(r->h->total, (uint64_t)st.st_size);
    r->req = (uint8_t *)r->h + r->h->req_off;
    r->rep = (uint8_t *)r->h + r->h->rep_off;
    r->reqd = ds ? (uint8_t *)r->h + r->h->data_off : NULL;
    r->repd = ds ? r->reqd + ds : NULL;
    return 0;
}

static void raw_kick(raw_t *r)
{
    uint64_t one = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&r->h->srv_sleeping, __ATOMIC_RELAXED))
        cr_assert_eq(write(r->req_efd, &one, 8), 8);
}

/* Writes bytes into the request ring (waiting for room) and publishes them. */
static void raw_send(raw_t *r, const void *p, size_t n)
{
    const uint8_t *b = p;
    double end = now_s() + 10;
    while (n) {
        uint64_t room = r->ring - (r->head - __atomic_load_n(&r->h->req_tail, __ATOMIC_ACQUIRE));
        size_t k = n < room ? n : (size_t)room;
        for (size_t i = 0; i < k; i++) r->req[(r->head + i) & (r->ring - 1)] = b[i];
        r->head += k;
        __atomic_store_n(&r->h->req_head, r->head, __ATOMIC_RELEASE);
        raw_kick(r);
        b += k;
        n -= k;
        cr_assert_lt(now_s(), end, "the request ring never drained");
        if (n) usleep(100);
    }
}

static void raw_cmd(raw_t *r, const char *resp)
{
    raw_send(r, resp, strlen(resp));
}

/* Reads replies until the input holds want (then drops everything up to it); 1 found, 0 when
 * the timeout passed, -1 when the server closed the socket. */
static int raw_expect(raw_t *r, const char *want, double timeout)
{
    double end = now_s() + timeout;
    for (;;) {
        uint64_t head = __atomic_load_n(&r->h->rep_head, __ATOMIC_ACQUIRE);
        while (r->tail < head && r->inlen < sizeof r->in - 1)
            r->in[r->inlen++] = (char)r->rep[r->tail++ & (r->ring - 1)];
        __atomic_store_n(&r->h->rep_tail, r->tail, __ATOMIC_RELEASE);
        raw_kick(r);
        r->in[r->inlen] = '\0';
        char *at = memmem(r->in, r->inlen, want, strlen(want));
        if (at) {
            size_t drop = (size_t)(at - r->in) + strlen(want);
            memmove(r->in, r->in + drop, r->inlen - drop);
            r->inlen -= drop;
            return 1;
        }
        char b;
        if (recv(r->sock, &b, 1, MSG_DONTWAIT) == 0) return -1;
        if (now_s() > end) return 0;
        usleep(200);
    }
}

static void raw_close(raw_t *r)
{
    munmap(r->h, HDR + 2 * r->ring + 2 * r->data);
    close(r->sock);
    close(r->req_efd);
    close(r->rep_efd);
}

static cte_reply_t *call_ok(cte_conn_t *c, const char *a0, const char *a1, const char *a2)
{
    cte_reply_t *r;
    int rc = cte_call(c, &r, a0, a1, a2, NULL);
    cr_assert(rc == 0 || rc == CTE_E_SERVER, "%s: %s", a0, cte_strerror(rc));
    return r;
}

static long long info_field(cte_conn_t *c, const char *field)
{
    cte_reply_t *r = call_ok(c, "INFO", "clients", NULL);
    const char *s = strstr(cte_reply_str(r, NULL), field);
    cr_assert_not_null(s, "INFO clients has %s", field);
    long long v = atoll(s + strlen(field) + 1);
    cte_reply_free(r);
    return v;
}

static int count_fds(pid_t pid)
{
    char path[64];
    int n = 0;
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

/* ---- the tests ---- */

Test(shm, pub_sub_blocking_multi_and_monitor_work_through_the_rings, .init = setup,
     .fini = teardown)
{
    raw_t sub, pop, mon;
    char line[256];
    cte_conn_t *c = open_or_fail("tcp");
    cr_assert_eq(raw_attach(&sub, NULL, line, sizeof line), 0, "%s", line);
    cr_assert_eq(raw_attach(&pop, NULL, line, sizeof line), 0, "%s", line);
    cr_assert_eq(raw_attach(&mon, "4096", line, sizeof line), 0, "%s", line);
    cr_assert_eq(mon.ring, 4096);

    raw_cmd(&sub, "*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n");
    cr_assert_eq(raw_expect(&sub, "subscribe\r\n$2\r\nch\r\n:1\r\n", 5), 1);
    raw_cmd(&pop, "*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    raw_cmd(&mon, "*1\r\n$7\r\nMONITOR\r\n");
    cr_assert_eq(raw_expect(&mon, "+OK\r\n", 5), 1);
    usleep(100000); /* BLPOP blocks, the server sleeps on the rings */
    cr_assert_eq(info_field(c, "blocked_clients"), 1);
    cr_assert_eq(info_field(c, "shm_clients"), 3);

    cte_reply_free(call_ok(c, "PUBLISH", "ch", "hello"));
    cr_assert_eq(raw_expect(&sub, "message\r\n$2\r\nch\r\n$5\r\nhello\r\n", 5), 1);
    cte_reply_free(call_ok(c, "RPUSH", "q", "x"));
    cr_assert_eq(raw_expect(&pop, "*2\r\n$1\r\nq\r\n$1\r\nx\r\n", 5), 1);
    cr_assert_eq(raw_expect(&mon, "\"PUBLISH\" \"ch\" \"hello\"", 5), 1);
    cr_assert_eq(raw_expect(&mon, "\"RPUSH\" \"q\" \"x\"", 5), 1);

    raw_cmd(&pop, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
                  "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*1\r\n$4\r\nEXEC\r\n");
    cr_assert_eq(raw_expect(&pop, "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:1\r\n", 5), 1);

    cte_reply_t *r = call_ok(c, "CLIENT", "LIST", NULL);
    const char *s = cte_reply_str(r, NULL), *p = s;
    int shm = 0;
    while ((p = strstr(p, "transport=shm"))) shm++, p++;
    cr_assert_eq(shm, 3, "%s", s);
    cr_assert(strstr(s, "transport=tcp"), "%s", s);
    cte_reply_free(r);
    raw_close(&sub);
    raw_close(&pop);
    raw_close(&mon);
    for (double end = now_s() + 5; info_field(c, "shm_clients") && now_s() < end;) usleep(10000);
    cr_assert_eq(info_field(c, "shm_clients"), 0, "closed segments are reclaimed");
    cte_conn_free(c);
}

Test(shm, replies_larger_than_the_ring_wait_for_the_reader, .init = setup, .fini = teardown)
{
    cte_conn_t *c = open_or_fail("tcp");
    cte_reply_t *r;
    cr_assert_eq(cte_call(c, &r, "CONFIG", "SET", "shm-ring-size", "4096", NULL), 0);
    cte_reply_free(r);
    cr_assert_eq(cte_call(c, &r, "CONFIG", "SET", "shm-data-size", "0", NULL), 0);
    cte_reply_free(r); /* no data areas: every byte goes through the rings */
    cte_conn_t *m = open_or_fail("shm");
    size_t big = 3 * 1024 * 1024 + 17;
    char *v = malloc(big), *back = malloc(big);
    for (size_t i = 0; i < big; i++) v[i] = (char)('a' + i % 23);
    uint64_t size;
    cr_assert_eq(cte_put(m, "t", "b", 0, v, big, -1, &size), 0, "%s", cte_conn_errmsg(m));
    cr_assert_eq(size, big);
    size_t len;
    cr_assert_eq(cte_get(m, "t", "b", 0, -1, back, big, &len), 0, "%s", cte_conn_errmsg(m));
    cr_assert_eq(len, big);
    cr_assert_eq(memcmp(v, back, big), 0, "the bytes came back intact through a 4 KiB ring");
    cr_assert_eq(info_field(c, "shm_data_in_bytes"), 0);
    cr_assert_eq(info_field(c, "shm_data_out_bytes"), 0);
    free(v);
    free(back);
    cte_conn_free(m);
    cte_conn_free(c);
}

/* ---- the data areas ---- */

static void healthy_still_served(cte_conn_t *ok, int i);

static void fill(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (char)((i * 131 + seed * 7919) >> 3);
}

typedef struct got {
    int done, bad;
    size_t want;
    unsigned seed;
} got_t;

static void check_get(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    got_t *g = ud;
    size_t len = 0;
    const char *p = r ? cte_reply_str(r, &len) : NULL;
    char *want = malloc(g->want);
    fill(want, g->want, g->seed);
    g->done = 1;
    g->bad = status != 0 || !p || len != g->want || memcmp(p, want, len) != 0;
    free(want);
}

static void count_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    int *n = ud;
    if (status == 0) (*n)++;
}

Test(shm, large_values_travel_through_the_data_areas, .init = setup, .fini = teardown)
{
    cte_conn_t *c = open_or_fail("tcp");
    cte_reply_t *r;
    cr_assert_eq(cte_call(c, &r, "CONFIG", "SET", "shm-data-size", "65536", NULL), 0);
    cte_reply_free(r); /* a small area: values wrap around its end and wait for room */
    cte_conn_t *m = open_or_fail("shm");
    enum { N = 200, SZ = 20000 };
    char *v = malloc(SZ);
    uint64_t size;
    /* many puts in flight, more than the area holds at once */
    cr_assert_eq(cte_conn_set_window(m, 32), 0);
    int ok = 0;
    char *vals = malloc((size_t)N * SZ); /* async: a value inline stays the caller's until done */
    for (unsigned i = 0; i < N; i++) {
        char blob[16];
        snprintf(blob, sizeof blob, "b%u", i);
        fill(vals + (size_t)i * SZ, SZ, i);
        cr_assert_eq(cte_put_async(m, "t", blob, 0, vals + (size_t)i * SZ, SZ, -1, count_done, &ok), 0);
    }
    cr_assert_eq(cte_wait_all(m), 0, "%s", cte_conn_errmsg(m));
    free(vals);
    cr_assert_eq(ok, N);
    long long in = info_field(c, "shm_data_in_bytes");
    cr_assert(in >= 3 * SZ && in % SZ == 0 && in <= (long long)N * SZ,
              "async puts: through the request area while it had room, inline when not: %lld", in);
    for (unsigned i = 0; i < 20; i++) { /* a synchronous put waits for room: always the area */
        char blob[16];
        snprintf(blob, sizeof blob, "b%u", i);
        fill(v, SZ, i);
        cr_assert_eq(cte_put(m, "t", blob, 0, v, SZ, -1, &size), 0);
    }
    cr_assert_eq(info_field(c, "shm_data_in_bytes") - in, 20LL * SZ);
    /* gets in flight, checked in their callbacks; views; into buffers */
    got_t g[N];
    for (unsigned i = 0; i < N; i++) {
        char blob[16];
        snprintf(blob, sizeof blob, "b%u", i);
        g[i] = (got_t){0, 0, SZ, i};
        cr_assert_eq(cte_get_async(m, "t", blob, 0, -1, check_get, &g[i]), 0);
    }
    cr_assert_eq(cte_wait_all(m), 0, "%s", cte_conn_errmsg(m));
    for (unsigned i = 0; i < N; i++) cr_assert(g[i].done && !g[i].bad, "get %u", i);
    long long out = info_field(c, "shm_data_out_bytes");
    cr_assert(out >= 3 * SZ && out % SZ == 0, "replies came through the reply area while it "
              "had room, inline when not: %lld", out);
    for (unsigned i = 0; i < 50; i++) {
        char blob[16], *back = malloc(SZ);
        const void *view;
        size_t len;
        snprintf(blob, sizeof blob, "b%u", i);
        fill(v, SZ, i);
        cr_assert_eq(cte_get_view(m, "t", blob, 0, -1, &view, &len), 0);
        cr_assert(len == SZ && memcmp(view, v, SZ) == 0, "view %u", i);
        cr_assert_eq(cte_get(m, "t", blob, 100, -1, back, SZ, &len), 0);
        cr_assert(len == SZ - 100 && memcmp(back, v + 100, len) == 0, "get %u", i);
        free(back);
    }
    /* strings, several values in one reply, and a put with no copy on the client */
    fill(v, SZ, 1);
    cr_assert_eq(cte_call(m, &r, "SET", "s1", "x", NULL), 0);
    cte_reply_free(r);
    const char *set[] = {"SET", "s2", v};
    size_t lens[] = {3, 2, SZ};
    cr_assert_eq(cte_command(m, &r, 3, set, lens), 0);
    cte_reply_free(r);
    cr_assert_eq(cte_call(m, &r, "MGET", "s2", "s1", "s2", NULL), 0);
    cr_assert_eq(cte_reply_len(r), 3);
    size_t l0, l1, l2;
    const char *e0 = cte_reply_str(cte_reply_elem(r, 0), &l0),
               *e1 = cte_reply_str(cte_reply_elem(r, 1), &l1),
               *e2 = cte_reply_str(cte_reply_elem(r, 2), &l2);
    cr_assert(l0 == SZ && !memcmp(e0, v, SZ) && l1 == 1 && e1[0] == 'x' && e1[1] == 0);
    cr_assert(l2 == SZ && !memcmp(e2, v, SZ) && e2[SZ] == '\0', "owned, terminated copies");
    cr_assert_eq(cte_call(m, &r, "PING", NULL), 0); /* r (taken) outlives the next calls */
    cte_reply_free(r);
    char *buf = cte_put_buffer(m, SZ);
    cr_assert_not_null(buf);
    fill(buf, SZ, 77);
    cr_assert_eq(cte_put(m, "t", "zero-copy", 0, buf, SZ, -1, &size), 0);
    cr_assert_eq(size, SZ);
    const void *view;
    size_t len;
    cr_assert_eq(cte_get_view(m, "t", "zero-copy", 0, -1, &view, &len), 0);
    fill(v, SZ, 77);
    cr_assert(len == SZ && memcmp(view, v, SZ) == 0);
    cr_assert_null(cte_put_buffer(m, 100), "too small for the area");
    /* requests answered between cte_put_buffer and the put leave the buffer alone, however
     * much the area is used meanwhile */
    for (int round = 0; round < 20; round++) {
        buf = cte_put_buffer(m, SZ);
        cr_assert_not_null(buf);
        got_t between = {0, 0, SZ, (unsigned)round % N};
        char blob[16];
        snprintf(blob, sizeof blob, "b%u", between.seed);
        cr_assert_eq(cte_get_async(m, "t", blob, 0, -1, check_get, &between), 0);
        cr_assert_eq(cte_wait_all(m), 0);
        cr_assert(between.done && !between.bad);
        for (unsigned i = 0; i < 3; i++) { /* fill the rest of the area, wrapping */
            fill(v, SZ, 500 + i);
            cr_assert_eq(cte_put(m, "t", "other", 0, v, SZ, -1, &size), 0);
        }
        fill(buf, SZ, 900 + (unsigned)round);
        int done = 0;
        cr_assert_eq(cte_put_async(m, "t", "pinned", 0, buf, SZ, -1, count_done, &done), 0);
        fill(v, SZ, 600);
        cr_assert_eq(cte_put_async(m, "t", "other2", 0, v, SZ, -1, count_done, &done), 0);
        cr_assert_eq(cte_wait_all(m), 0);
        cr_assert_eq(done, 2);
        cr_assert_eq(cte_get_view(m, "t", "pinned", 0, -1, &view, &len), 0);
        fill(v, SZ, 900 + (unsigned)round);
        cr_assert(len == SZ && memcmp(view, v, SZ) == 0, "round %d: the pinned buffer was sent "
                  "intact", round);
    }
    free(v);
    cte_conn_free(m);
    cte_conn_free(c);
}

Test(shm, hostile_data_area_references_hurt_only_their_writer, .init = setup, .fini = teardown)
{
    cte_conn_t *ok = open_or_fail("shm");
    raw_t r;
    char line[256], req[256];
    cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
    cr_assert_gt(r.data, 0);

    /* a value in the area; the offset argument a ref to digits that run to the area's end
     * (copied and terminated before TPUT parses them) */
    memcpy(r.reqd, "hello", 5);
    memset(r.reqd + r.data - 64, '7', 64);
    snprintf(req, sizeof req, "*5\r\n$4\r\nTPUT\r\n$1\r\nt\r\n$1\r\nb\r\n&1,%llu\r\n&5,0\r\n",
             (unsigned long long)(r.data - 1));
    raw_cmd(&r, req);
    cr_assert_eq(raw_expect(&r, ":12\r\n", 5), 1, "7 + 5 bytes");
    /* the command name itself a ref */
    memcpy(r.reqd + 100, "TGET", 4);
    raw_cmd(&r, "*4\r\n&4,100\r\n$1\r\nt\r\n$1\r\nb\r\n$1\r\n7\r\n");
    cr_assert_eq(raw_expect(&r, "$5\r\nhello\r\n", 5), 1);
    /* a large reply comes as a ref into the reply area */
    memset(r.reqd, 'z', 10000);
    raw_cmd(&r, "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n&10000,0\r\n$2\r\nPX\r\n");
    cr_assert_eq(raw_expect(&r, "-ERR syntax error", 5), 1, "arguments after the value parse");
    raw_cmd(&r, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n&10000,0\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    cr_assert_eq(raw_expect(&r, "+OK\r\n&10000,", 5), 1);
    cr_assert_eq(raw_expect(&r, "\r\n", 5), 1);
    healthy_still_served(ok, 1);
    /* the same bytes referenced a million times: bounded by client-query-buffer-limit */
    cte_reply_t *rep;
    cr_assert_eq(cte_call(ok, &rep, "CONFIG", "SET", "client-query-buffer-limit", "1mb", NULL), 0);
    cte_reply_free(rep);
    raw_cmd(&r, "*300\r\n$4\r\nMGET\r\n");
    for (int i = 0; i < 299; i++) raw_cmd(&r, "&10000,0\r\n");
    cr_assert_eq(raw_expect(&r, "-ERR Protocol error: data area references exceed", 5), 1);
    /* (1mb of query buffer limit: 299 x 10000 bytes is past it, though inside the area) */
    cr_assert_eq(raw_expect(&r, "never", 5), -1, "and the client is closed");
    raw_close(&r);
    healthy_still_served(ok, 2);

    /* refs out of the area, or malformed: a protocol error */
    const char *bad[] = {"&5,%llu", "&%llu,5", "&-1,0", "&1", "&1,x", "&18446744073709551615,0"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
        char ref[64];
        snprintf(ref, sizeof ref, bad[k], (unsigned long long)(r.data - 4));
        snprintf(req, sizeof req, "*3\r\n$3\r\nSET\r\n$1\r\nq\r\n%s\r\n", ref);
        raw_cmd(&r, req);
        cr_assert_eq(raw_expect(&r, "-ERR Protocol error: invalid data area reference", 5), 1,
                     "%s", ref);
        raw_close(&r);
        healthy_still_served(ok, 3 + (int)k);
    }

    /* a reply-area tail ahead of what the server gave out: the liar is dropped */
    cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
    __atomic_store_n(&r.h->rd_tail, 1ULL << 40, __ATOMIC_RELEASE);
    raw_cmd(&r, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    cr_assert_eq(raw_expect(&r, "never", 5), -1, "the server dropped the liar");
    raw_close(&r);
    /* scribbling over both areas while requests reference them changes only own values */
    cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
    for (int i = 0; i < 100; i++) {
        raw_cmd(&r, "*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n&4096,0\r\n*2\r\n$3\r\nGET\r\n$2\r\nk2\r\n");
        memset(r.reqd, i, 8192);
        memset(r.repd, 255 - i, 8192);
        __atomic_store_n(&r.h->rd_tail, __atomic_load_n(&r.h->rd_tail, __ATOMIC_RELAXED),
                         __ATOMIC_RELEASE);
    }
    raw_close(&r);
    healthy_still_served(ok, 99);
    cte_conn_free(ok);
}

Test(shm, a_client_killed_mid_request_is_reclaimed, .init = setup, .fini = teardown)
{
    cte_conn_t *c = open_or_fail("tcp");
    cte_conn_t *warm = open_or_fail("shm"); /* the server's first shm client sets up its spin */
    cte_conn_free(warm);
    for (double end = now_s() + 5; info_field(c, "shm_clients") && now_s() < end;) usleep(10000);
    int before = count_fds(S.pid);
    for (int round = 0; round < 10; round++) {
        int pfd[2];
        cr_assert_eq(pipe(pfd), 0);
        pid_t kid = fork();
        if (kid == 0) {
            raw_t r;
            char line[256];
            if (raw_attach(&r, NULL, line, sizeof line) != 0) _exit(1);
            raw_cmd(&r, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nhalf of it"); /* mid-request */
            if (write(pfd[1], "x", 1) != 1) _exit(1);
            pause();
            _exit(0);
        }
        char b;
        cr_assert_eq(read(pfd[0], &b, 1), 1);
        cr_assert_eq(info_field(c, "shm_clients"), 1);
        cr_assert_gt(count_fds(S.pid), before, "the segment holds descriptors");
        kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);
        close(pfd[0]);
        close(pfd[1]);
        for (double end = now_s() + 5; count_fds(S.pid) != before && now_s() < end;) usleep(10000);
        cr_assert_eq(count_fds(S.pid), before, "round %d: the server's descriptors came back",
                     round);
        cr_assert_eq(info_field(c, "shm_clients"), 0);
    }
    cte_reply_t *r = call_ok(c, "PING", NULL, NULL);
    cr_assert_str_eq(cte_reply_str(r, NULL), "PONG");
    cte_reply_free(r);
    cte_conn_free(c);
}

/* A healthy shm client that must keep its own data while another one misbehaves. */
static void healthy_still_served(cte_conn_t *ok, int i)
{
    char v[32];
    cte_reply_t *r;
    snprintf(v, sizeof v, "mine-%d", i);
    cr_assert_eq(cte_call(ok, &r, "SET", "own", v, NULL), 0, "%s", cte_conn_errmsg(ok));
    cte_reply_free(r);
    cr_assert_eq(cte_call(ok, &r, "GET", "own", NULL), 0, "%s", cte_conn_errmsg(ok));
    cr_assert_str_eq(cte_reply_str(r, NULL), v);
    cte_reply_free(r);
}

Test(shm, garbage_in_rings_indices_and_header_hurts_only_its_writer, .init = setup,
     .fini = teardown)
{
    cte_conn_t *ok = open_or_fail("shm");
    raw_t r;
    char line[256];
    uint8_t junk[8192];
    srand(7);
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)rand();

    /* garbage bytes as requests: an error reply (Redis's protocol error) or a disconnect */
    cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)('!' + junk[i] % 90); /* a line */
    junk[0] = '*';
    junk[1] = 'x'; /* not a count: the line is a protocol error */
    raw_send(&r, junk, sizeof junk);
    raw_cmd(&r, "\r\n");
    cr_assert_neq(raw_expect(&r, "-ERR Protocol error", 5), 0);
    raw_close(&r);
    healthy_still_served(ok, 1);

    /* a request head far past what the ring holds */
    cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
    __atomic_store_n(&r.h->req_head, r.ring * 5 + 3, __ATOMIC_RELEASE);
    uint64_t one = 1;
    cr_assert_eq(write(r.req_efd, &one, 8), 8);
    cr_assert_eq(raw_expect(&r, "never", 5), -1, "the server dropped the liar");
    raw_close(&r);
    healthy_still_served(ok, 2);

    /* a reply tail ahead of what the server wrote, then one going backwards */
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
        for (int i = 0; i < 2; i++) { /* the second reply shows the server the first's tail */
            raw_cmd(&r, "*1\r\n$4\r\nPING\r\n");
            cr_assert_eq(raw_expect(&r, "+PONG\r\n", 5), 1);
        }
        __atomic_store_n(&r.h->rep_tail, k ? 2 : r.tail + 1000, __ATOMIC_RELEASE);
        r.tail = k ? 2 : r.tail + 1000;
        r.head = __atomic_load_n(&r.h->req_tail, __ATOMIC_ACQUIRE);
        const char ping[] = "*1\r\n$4\r\nPING\r\n";
        for (size_t i = 0; i < sizeof ping - 1; i++)
            r.req[(r.head + i) & (r.ring - 1)] = (uint8_t)ping[i];
        r.head += sizeof ping - 1;
        __atomic_store_n(&r.h->req_head, r.head, __ATOMIC_RELEASE);
        cr_assert_eq(write(r.req_efd, &one, 8), 8);
        double end = now_s() + 5;
        char b;
        while (recv(r.sock, &b, 1, MSG_DONTWAIT) != 0 && now_s() < end) usleep(1000);
        cr_assert_lt(now_s(), end, "case %d: the server dropped the liar", k);
        raw_close(&r);
        healthy_still_served(ok, 3 + k);
    }

    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)rand();

    /* the whole header and both rings scribbled over, again and again */
    cr_assert_eq(raw_attach(&r, NULL, line, sizeof line), 0);
    for (int i = 0; i < 200; i++) {
        memcpy(r.h, junk + (i * 13) % 4096, 448);
        memcpy(r.req, junk, 4096);
        memcpy(r.rep, junk + 100, 4096);
        if (write(r.req_efd, &one, 8) < 0) break;
        if (i % 50 == 0) healthy_still_served(ok, 10 + i);
    }
    raw_close(&r);
    healthy_still_served(ok, 999);
    cte_reply_t *rep;
    cr_assert_eq(cte_call(ok, &rep, "INFO", "clients", NULL), 0);
    cte_reply_free(rep);
    cte_conn_free(ok);
}

Test(shm, a_peer_with_another_uid_is_refused, .init = setup, .fini = teardown)
{
    if (geteuid() != 0) cr_skip_test("needs root to run a client as another uid");
    pid_t kid = fork();
    if (kid == 0) {
        char addr[160], plain[160];
        cte_conn_t *c = cte_conn_new();
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
        snprintf(addr, sizeof addr, "shm:%s", S.sock);
        snprintf(plain, sizeof plain, "unix:%s", S.sock);
        int rc = cte_conn_open(c, addr, 0);
        if (rc != CTE_E_SERVER || !strstr(cte_conn_errmsg(c), "refused")) _exit(3);
        if (cte_conn_open(c, plain, 0) != 0) _exit(4); /* the socket itself is open to it */
        cte_conn_free(c);
        _exit(0);
    }
    int status;
    waitpid(kid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exited with %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    cte_conn_t *c = open_or_fail("tcp");
    cr_assert_eq(info_field(c, "shm_clients"), 0);
    cte_conn_free(c);
}

Test(shm, attach_is_refused_where_it_cannot_work, .init = setup, .fini = teardown)
{
    cte_conn_t *c = open_or_fail("tcp");
    cte_reply_t *r;
    cr_assert_eq(cte_call(c, &r, "CTE.SHM.ATTACH", NULL), CTE_E_SERVER);
    cr_assert(strstr(cte_reply_str(r, NULL), "Unix socket"), "%s", cte_reply_str(r, NULL));
    cte_reply_free(r);
    raw_t raw;
    char line[256];
    cr_assert_eq(raw_attach(&raw, "12", line, sizeof line), -1);
    cr_assert(strstr(line, "ring size"), "%s", line);
    cr_assert_eq(raw_attach(&raw, "1073741824 1073741824", line, sizeof line), -1);
    cr_assert(strstr(line, "exceed 2147483648"), "%s", line);
    cr_assert_eq(raw_attach(&raw, "4096 100", line, sizeof line), -1);
    cr_assert(strstr(line, "data area size"), "%s", line);
    cr_assert_eq(raw_attach(&raw, "4096 0", line, sizeof line), 0, "%s", line);
    cr_assert_eq(raw.data, 0, "no data areas");
    raw_close(&raw);
    cr_assert_eq(cte_call(c, &r, "CONFIG", "SET", "shm-enabled", "no", NULL), 0);
    cte_reply_free(r);
    cr_assert_eq(raw_attach(&raw, NULL, line, sizeof line), -1);
    cr_assert(strstr(line, "disabled"), "%s", line);
    cte_conn_free(c);
}

/* ---- client-side caching over the rings (server/tracking.c) ---- */

/* Keeps the keys of each "invalidate" push (a null for a flush), one line each. */
static void note_invalidation(cte_conn_t *c, const cte_reply_t *push, void *ud)
{
    char *log = ud;
    const cte_reply_t *kind = cte_reply_elem(push, 0), *keys = cte_reply_elem(push, 1);
    if (cte_reply_len(push) != 2 || strcmp(cte_reply_str(kind, NULL), "invalidate")) return;
    if (cte_reply_kind(keys) == CTE_REPLY_NULL) strcat(log, "(null)");
    for (size_t i = 0; cte_reply_kind(keys) == CTE_REPLY_ARRAY && i < cte_reply_len(keys); i++) {
        strcat(log, i ? " " : "");
        strcat(log, cte_reply_str(cte_reply_elem(keys, i), NULL));
    }
    strcat(log, "\n");
}

Test(shm, tracking_pushes_and_redirected_messages_arrive_through_the_rings, .init = setup,
     .fini = teardown)
{
    char addr[160], log[1024] = "", line[256];
    cte_conn_t *c = open_or_fail("tcp"), *m = cte_conn_new();
    snprintf(addr, sizeof addr, "shm:%s", S.sock);
    cr_assert_eq(cte_conn_open(m, addr, CTE_RESP3), 0, "%s", cte_conn_errmsg(m));
    cte_conn_set_push_cb(m, note_invalidation, log);
    cte_reply_free(call_ok(m, "CLIENT", "TRACKING", "on"));
    cte_reply_free(call_ok(c, "SET", "k", "v1"));
    cte_reply_free(call_ok(m, "GET", "k", NULL));
    cte_reply_free(call_ok(c, "SET", "k", "v2"));
    cte_reply_t *r = call_ok(m, "PING", NULL, NULL);
    cr_assert_str_eq(cte_reply_str(r, NULL), "PONG", "the push did not take the reply's place");
    cte_reply_free(r);
    cr_assert_str_eq(log, "k\n");
    /* BCAST: sent before the server sleeps, so before the next reply */
    cte_reply_free(call_ok(m, "CLIENT", "TRACKING", "off"));
    cte_reply_t *b;
    cr_assert_eq(cte_call(m, &b, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:", NULL), 0);
    cte_reply_free(b);
    cte_reply_free(call_ok(c, "SET", "p:1", "x"));
    cte_reply_free(call_ok(c, "SET", "q:1", "x"));
    cte_reply_free(call_ok(m, "PING", NULL, NULL));
    cte_reply_free(call_ok(c, "FLUSHALL", NULL, NULL));
    cte_reply_free(call_ok(m, "PING", NULL, NULL));
    cr_assert_str_eq(log, "k\np:1\n(null)\n");

    /* RESP2: a shm client subscribed to __redis__:invalidate gets what c asked to redirect */
    raw_t sub;
    cr_assert_eq(raw_attach(&sub, NULL, line, sizeof line), 0, "%s", line);
    raw_cmd(&sub, "*2\r\n$9\r\nSUBSCRIBE\r\n$20\r\n__redis__:invalidate\r\n");
    cr_assert_eq(raw_expect(&sub, "__redis__:invalidate\r\n:1\r\n", 5), 1);
    r = call_ok(c, "CLIENT", "LIST", NULL);
    const char *s = strstr(cte_reply_str(r, NULL), "cmd=subscribe");
    cr_assert_not_null(s, "%s", cte_reply_str(r, NULL));
    while (s > cte_reply_str(r, NULL) && strncmp(s, "id=", 3)) s--;
    char id[32];
    snprintf(id, sizeof id, "%lld", atoll(s + 3));
    cte_reply_free(r);
    cr_assert_eq(cte_call(c, &b, "CLIENT", "TRACKING", "on", "REDIRECT", id, NULL), 0);
    cte_reply_free(b);
    cte_reply_free(call_ok(c, "GET", "rk", NULL));
    cte_reply_free(call_ok(m, "SET", "rk", "1"));
    const char *msg = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$2\r\nrk\r\n";
    cr_assert_eq(raw_expect(&sub, msg, 5), 1);
    raw_close(&sub);
    cte_conn_free(m);
    cte_conn_free(c);
}
