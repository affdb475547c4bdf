/* shm.c - libcte's shared-memory transport (shm:PATH): the client side of docs/shm.md.
 *
 * open connects to the Unix socket PATH, sends CTE.SHM.ATTACH and receives the greeting
 * "+SHM <version> <ring-size>\r\n" with three descriptors (the segment's memfd, the request
 * eventfd, the reply eventfd); from then on send() copies request bytes into the request ring
 * and recv() takes reply bytes from the reply ring. The socket stays open and silent: the
 * server's end of it (readable, EOF) is how a dead server shows. The layout below must match
 * server/net/shm.c's offset table (the _Static_asserts pin the offsets on both sides).
 *
 * Waiting: a short adaptive spin (pause, then sched_yield so a server on the same core runs),
 * from SPIN_MIN_NS to SPIN_MAX_NS: doubled when the spin caught the reply, halved when it had
 * to sleep), then the sleeping flag, a fence, one more look, and poll() on the reply eventfd
 * and the socket. After publishing an index the client kicks the request eventfd only when the
 * server's sleeping flag is set.
 *
 * Data areas (protocol 2): the request area is allocated in order (req_alloc; conn.c frees
 * up to a request's mark when its reply arrives, in order) and the reply area is released by
 * publishing rd_tail (rep_release, monotonic; conn.c calls it as replies are done). Both go
 * back to the area's start while what is in flight fits (shm_area_at). Runs on the
 * connection's thread. */
#define _GNU_SOURCE
#include "transport.h"

#include "common/shm_layout.h"

#include "cte/cte.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SPIN_MIN_NS (2 * 1000)
#define SPIN_MAX_NS (50 * 1000)
/* iterations of pause before each look starts yielding the core: few, since a pause costs
 * about 140 cycles here and the server often waits for this very core (64 of them made YCSB's
 * C over shm 25-30% slower, 4 KiB gets at depth 8 15-40%) */
#define SPIN_PAUSES 8


typedef struct shm_seg {
    shm_hdr_t *hdr;
    uint8_t *req, *rep, *reqd, *repd; /* the rings, the request and reply data areas */
    size_t map_len;
    uint64_t ring, mask, data;   /* data: bytes of each area (0: none) */
    uint64_t req_head, rep_tail; /* the client's own truth */
    uint64_t rq_head, rq_tail;   /* request data area: allocated, freed (indices, ever) */
    shm_gaps_t rq_gaps;          /* its bytes skipped by moves to its start */
    uint64_t rd_released;        /* reply data area: published rd_tail */
    int req_efd, rep_efd;
    int ended; /* the socket showed the server's end (set by wait) */
    uint64_t spin_ns;
} shm_seg_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void kick_server(shm_seg_t *s)
{
    uint64_t one = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&s->hdr->srv_sleeping, __ATOMIC_RELAXED)) {
        ssize_t w = write(s->req_efd, &one, sizeof one); /* EAGAIN: already kicked */
        (void)w;
    }
}

/* Reply bytes waiting, or -EPROTO when the server's index is impossible. */
static long rep_avail(shm_seg_t *s)
{
    uint64_t a = __atomic_load_n(&s->hdr->rep_head, __ATOMIC_ACQUIRE) - s->rep_tail;
    return a > s->ring ? -EPROTO : (long)a;
}

static long req_room(shm_seg_t *s)
{
    uint64_t used = s->req_head - __atomic_load_n(&s->hdr->req_tail, __ATOMIC_ACQUIRE);
    return used > s->ring ? -EPROTO : (long)(s->ring - used);
}

static long shm_send(cte_transport_t *t, const struct iovec *iov, int n)
{
    shm_seg_t *s = t->impl;
    long room = req_room(s), done = 0;
    if (room < 0) return room;
    if (room == 0) return -EAGAIN;
    for (int i = 0; i < n && done < room; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t len =
            iov[i].iov_len < (size_t)(room - done) ? iov[i].iov_len : (size_t)(room - done);
        size_t pos = (size_t)((s->req_head + (uint64_t)done) & s->mask), first = s->ring - pos;
        if (first > len) first = len;
        memcpy(s->req + pos, p, first);
        memcpy(s->req, p + first, len - first);
        done += (long)len;
    }
    s->req_head += (uint64_t)done;
    __atomic_store_n(&s->hdr->req_head, s->req_head, __ATOMIC_RELEASE);
    kick_server(s);
    return done;
}

/* A CTE_T_* mask of what can be done now, or -EPROTO. */
static int ready(shm_seg_t *s, int want_write)
{
    long a = rep_avail(s), r = want_write ? req_room(s) : 0;
    if (a < 0 || r < 0) return -EPROTO;
    return (a > 0 ? CTE_T_READABLE : 0) | (r > 0 ? CTE_T_WRITABLE : 0);
}

/* Spins up to s->spin_ns for a ready mask; 0 if none came. */
static int spin(shm_seg_t *s, int want_write)
{
    uint64_t t0 = now_ns();
    for (unsigned i = 0;; i++) {
        int m = ready(s, want_write);
        if (m) {
            if (s->spin_ns < SPIN_MAX_NS) s->spin_ns *= 2;
            if (s->spin_ns > SPIN_MAX_NS) s->spin_ns = SPIN_MAX_NS;
            return m;
        }
        /* the clock costs more than a look: read it every 8th pause, and at every yield */
        if ((i >= SPIN_PAUSES || (i & 7) == 7) && now_ns() - t0 >= s->spin_ns) break;
        if (i < SPIN_PAUSES)
            cpu_relax();
        else
            sched_yield();
    }
    if (s->spin_ns / 2 >= SPIN_MIN_NS) s->spin_ns /= 2;
    return 0;
}

static int shm_wait(cte_transport_t *t, int want_write, int timeout_ms)
{
    shm_seg_t *s = t->impl;
    int m = ready(s, want_write);
    if (m || timeout_ms == 0) return m;
    if ((m = spin(s, want_write)) != 0) return m;
    uint64_t deadline = timeout_ms > 0 ? now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
    for (;;) {
        __atomic_store_n(&s->hdr->cli_sleeping, 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        m = ready(s, want_write);
        int left = -1;
        if (deadline) {
            uint64_t now = now_ns();
            left = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
        }
        struct pollfd p[2] = {{.fd = s->rep_efd, .events = POLLIN},
                              {.fd = t->fd, .events = POLLIN}};
        int n = m ? 0 : poll(p, 2, left);
        __atomic_store_n(&s->hdr->cli_sleeping, 0, __ATOMIC_RELAXED);
        if (m) return m;
        if (n < 0 && errno != EINTR) return -errno;
        if (n > 0 && p[0].revents) {
            uint64_t v;
            ssize_t r = read(s->rep_efd, &v, sizeof v);
            (void)r;
        }
        if ((m = ready(s, want_write)) != 0) return m;
        if (n > 0 && p[1].revents) {
            s->ended = 1; /* the server's end (or a byte it must not send): recv says so */
            return CTE_T_READABLE;
        }
        if (n == 0 && left == 0) return 0;
    }
}

static long shm_recv(cte_transport_t *t, void *buf, size_t len, int block)
{
    shm_seg_t *s = t->impl;
    for (;;) {
        long a = rep_avail(s);
        if (a < 0) return a;
        if (a > 0) {
            size_t n = (size_t)a < len ? (size_t)a : len;
            size_t pos = (size_t)(s->rep_tail & s->mask), first = s->ring - pos;
            if (first > n) first = n;
            memcpy(buf, s->rep + pos, first);
            memcpy((uint8_t *)buf + first, s->rep, n - first);
            s->rep_tail += n;
            __atomic_store_n(&s->hdr->rep_tail, s->rep_tail, __ATOMIC_RELEASE);
            kick_server(s); /* it may wait for room for the rest of a reply */
            return (long)n;
        }
        if (s->ended) return 0;
        if (!block) return -EAGAIN;
        int m = shm_wait(t, 0, -1);
        if (m < 0) return m;
    }
}

/* ---- the data areas ---- */

static char *shm_req_alloc(cte_transport_t *t, size_t n, uint64_t *off)
{
    shm_seg_t *s = t->impl;
    if (!s || !s->data || n > s->data) return NULL;
    uint64_t at = shm_area_at(&s->rq_gaps, s->rq_head, &s->rq_tail, s->data, n); /* contiguous */
    if (at == UINT64_MAX) return NULL;
    s->rq_head = at + n;
    *off = at & (s->data - 1);
    return (char *)s->reqd + *off;
}

static uint64_t shm_req_mark(cte_transport_t *t)
{
    shm_seg_t *s = t->impl;
    return s ? s->rq_head : 0;
}

static void shm_req_rewind(cte_transport_t *t, uint64_t mark)
{
    shm_seg_t *s = t->impl;
    if (!s || mark > s->rq_head) return;
    while (s->rq_gaps.n) { /* the gaps those allocations made */
        unsigned last = (s->rq_gaps.first + s->rq_gaps.n - 1) % SHM_GAPS;
        if (s->rq_gaps.from[last] < mark) break;
        s->rq_gaps.n--;
    }
    /* below the tail only when an allocation found the area empty and moved both */
    s->rq_head = mark < s->rq_tail ? s->rq_tail : mark;
}

static void shm_req_free(cte_transport_t *t, uint64_t mark)
{
    shm_seg_t *s = t->impl;
    if (s && mark > s->rq_tail && mark <= s->rq_head) s->rq_tail = mark;
}

static void shm_rep_release(cte_transport_t *t, uint64_t end)
{
    shm_seg_t *s = t->impl;
    if (!s || end <= s->rd_released) return;
    s->rd_released = end;
    __atomic_store_n(&s->hdr->rd_tail, end, __ATOMIC_RELEASE);
}

static void seg_free(shm_seg_t *s)
{
    if (!s) return;
    if (s->hdr) munmap(s->hdr, s->map_len);
    if (s->req_efd >= 0) close(s->req_efd);
    if (s->rep_efd >= 0) close(s->rep_efd);
    free(s);
}

static void shm_close(cte_transport_t *t)
{
    seg_free(t->impl);
    t->impl = NULL;
    t->rep_area = NULL;
    t->rep_area_size = t->req_area_size = 0;
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* Reads the greeting line (up to "\r\n") and the descriptors that come with it. */
static int read_greeting(int fd, int timeout_ms, char *line, size_t cap, int fds[3], int *nfds)
{
    size_t len = 0;
    while (len + 1 < cap) {
        char cbuf[CMSG_SPACE(3 * sizeof(int))];
        struct iovec iov = {line + len, cap - 1 - len};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1);
        if (pr == 0) return CTE_E_TIMEOUT;
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) return -errno;
        ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -errno;
        if (r == 0) return CTE_E_CLOSED;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < k; i++) {
                int got;
                memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
                if (*nfds < 3)
                    fds[(*nfds)++] = got;
                else
                    close(got);
            }
        }
        len += (size_t)r;
        line[len] = '\0';
        if (len >= 2 && line[len - 2] == '\r' && line[len - 1] == '\n') return 0;
    }
    return CTE_E_PROTOCOL;
}

/* Maps the segment of memfd and checks its header against ring and data. 0 or a failure. */
static int seg_map(shm_seg_t *s, int memfd, uint64_t ring, uint64_t data)
{
    struct stat st;
    if (ring < 4096 || (ring & (ring - 1)) || ring > (1ULL << 30) || (data & (data - 1)) ||
        data > (1ULL << 30))
        return CTE_E_PROTOCOL;
    size_t len = SHM_HDR_SIZE + 2 * (size_t)ring + 2 * (size_t)data;
    if (fstat(memfd, &st) != 0 || (size_t)st.st_size < len) return CTE_E_PROTOCOL;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (p == MAP_FAILED) return -errno;
    s->hdr = p;
    s->map_len = len;
    s->ring = ring;
    s->mask = ring - 1;
    if (s->hdr->magic != SHM_MAGIC || s->hdr->version != SHM_VERSION || s->hdr->ring_size != ring ||
        s->hdr->req_off != SHM_HDR_SIZE || s->hdr->rep_off != SHM_HDR_SIZE + ring ||
        s->hdr->data_size != data || (data && s->hdr->data_off != SHM_HDR_SIZE + 2 * ring))
        return CTE_E_PROTOCOL;
    s->req = (uint8_t *)p + SHM_HDR_SIZE;
    s->rep = s->req + ring;
    s->data = data;
    s->reqd = data ? s->rep + ring : NULL;
    s->repd = data ? s->reqd + data : NULL;
    s->rd_released = __atomic_load_n(&s->hdr->rd_tail, __ATOMIC_ACQUIRE);
    s->req_head = __atomic_load_n(&s->hdr->req_head, __ATOMIC_ACQUIRE);
    s->rep_tail = __atomic_load_n(&s->hdr->rep_tail, __ATOMIC_ACQUIRE);
    s->spin_ns = SPIN_MAX_NS;
    return 0;
}

/* Connects to the Unix socket, attaches, maps. On failure everything is closed. */
static int shm_open_seg(cte_transport_t *t, const cte_addr_t *a, int timeout_ms, char *why,
                        size_t whylen)
{
    static const char attach[] = "*1\r\n$14\r\nCTE.SHM.ATTACH\r\n";
    char line[512];
    int fds[3] = {-1, -1, -1}, nfds = 0, rc;
    unsigned ver = 0;
    unsigned long long ring = 0, data = 0;
    shm_seg_t *s = NULL;

    if ((rc = cte__unix_open(t, a, timeout_ms, why, whylen)) != 0) return rc;
    if (send(t->fd, attach, sizeof attach - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof attach - 1)) {
        rc = -errno;
        goto fail;
    }
    if ((rc = read_greeting(t->fd, timeout_ms, line, sizeof line, fds, &nfds)) != 0) goto fail;
    if (line[0] == '-') {
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(why, whylen, "%s", line + 1);
        rc = CTE_E_SERVER;
        goto fail;
    }
    if (sscanf(line, "+SHM %u %llu %llu\r\n", &ver, &ring, &data) != 3 || ver != SHM_VERSION ||
        nfds != 3) {
        snprintf(why, whylen, "unexpected answer to CTE.SHM.ATTACH");
        rc = CTE_E_PROTOCOL;
        goto fail;
    }
    if (!(s = calloc(1, sizeof *s))) {
        rc = CTE_E_NOMEM;
        goto fail;
    }
    s->req_efd = fds[1];
    s->rep_efd = fds[2];
    fds[1] = fds[2] = -1;
    if ((rc = seg_map(s, fds[0], ring, data)) != 0) {
        snprintf(why, whylen, "cannot map the shared-memory segment: %s", cte_strerror(rc));
        goto fail;
    }
    close(fds[0]);
    t->impl = s;
    t->rep_area = (char *)s->repd;
    t->rep_area_size = s->data;
    t->req_area_size = s->data;
    return 0;
fail:
    for (int i = 0; i < nfds; i++)
        if (fds[i] >= 0) close(fds[i]);
    seg_free(s);
    close(t->fd);
    t->fd = -1;
    return rc;
}

const cte_transport_ops_t cte__shm_ops = {
    .name = "shm",
    .open = shm_open_seg,
    .send = shm_send,
    .recv = shm_recv,
    .wait = shm_wait,
    .close = shm_close,
    .req_alloc = shm_req_alloc,
    .req_mark = shm_req_mark,
    .req_rewind = shm_req_rewind,
    .req_free = shm_req_free,
    .rep_release = shm_rep_release,
};
