/* shm.c - the shared-memory transport: RESP through two rings in a segment of the client's own.
 *
 * A client connected on the Unix socket sends CTE.SHM.ATTACH [ring-size]. The server checks
 * the peer's uid (SO_PEERCRED: only the server's own uid may attach), creates a memfd (mode
 * 0600, sealed against shrinking and growing so the client cannot make the server fault),
 * maps it, and answers on the socket with one message, "+SHM <version> <ring-size>\r\n",
 * carrying three descriptors (SCM_RIGHTS): the memfd, the request eventfd (client -> server)
 * and the reply eventfd (server -> client). From then on requests and replies are the same
 * RESP the socket carries, through the rings, so the one parser and dispatcher serve every
 * transport. The socket stays open, silent, as the liveness signal: its end (or any byte on
 * it) closes the client and reclaims the segment. docs/shm.md is the protocol for clients.
 *
 * The segment (all integers little-endian, as the host; indices are byte counts that only
 * grow, position = index & (ring-size - 1), ring-size a power of two):
 *
 *   offset  size  field          written by
 *   0       4     magic          server   0x4d485343 ("CSHM")
 *   4       4     version        server   2
 *   8       8     ring_size      server   bytes of each ring (R)
 *   16      8     req_off        server   offset of the request ring (4096)
 *   24      8     rep_off        server   offset of the reply ring (4096 + R)
 *   32      8     data_off       server   the request data area (4096 + 2R; 0: no areas)
 *   40      8     data_size      server   bytes of each data area (D, 0: none)
 *   48      8     total          server   bytes of the segment
 *   64      8     req_head       client   request bytes written so far
 *   128     8     req_tail       server   request bytes consumed so far
 *   192     4     srv_sleeping   server   1: the server does not poll; kick the request eventfd
 *   256     8     rep_head       server   reply bytes written so far
 *   320     8     rep_tail       client   reply bytes consumed so far
 *   384     4     cli_sleeping   client   1: the client sleeps; kick the reply eventfd
 *   448     8     rd_tail        client   reply data area bytes released so far
 *   4096    R     request ring
 *   4096+R  R     reply ring
 *   +2R     D     request data area (the client's: "&<len>,<offset>" arguments)
 *   +2R+D   D     reply data area (the server's: "&<len>,<index>" bulks, shm_area_take)
 *
 * Each index sits on its own 64-byte line. A writer publishes its index with a release store
 * after the bytes, a reader loads it with acquire. Wake-ups: after publishing, a side issues a
 * full fence and kicks the other's eventfd only when the other's sleeping flag is set; a side
 * going to sleep sets its flag, fences, and looks at the indices once more (no lost wake-up).
 * The server spins (polls its hot segments every loop turn, yielding the core when nothing
 * happened) for SPIN_NS after a segment's last activity, then sleeps on the eventfd.
 *
 * Hostile memory: the server keeps its own req_tail, rep_head and rd_head and never reads them
 * back; it reads only req_head, rep_tail and rd_tail, and drops the client when one is
 * impossible (more bytes than the ring holds, a tail going backwards or past its head).
 * Request bytes are copied into the client's query buffer before they are parsed, and
 * data-area arguments into c->refcopy before the command runs (server/client.c settle_refs),
 * but for the one value a command stores, which it copies once by length; the parser checks
 * every reference against the area's fixed size. So a client changing its segment under the
 * server only changes its own requests and values. Loop thread only. */
#define _GNU_SOURCE
#include "server/net/shm.h"

#include "common/alloc.h"
#include "common/log.h"
#include "common/shm_layout.h"
#include "common/util.h"
#include "server/client.h"
#include "server/hooks.h"
#include "server/net/net.h"
#include "server/net/spin.h"
#include "server/reply.h"
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#define SPIN_NS (50 * 1000)   /* a hot segment is polled this long after its last activity */
#define FEED_MAX (256 * 1024) /* request bytes taken from one ring per service */
#define RING_MAX (1ULL << 30)
#define SEGMENT_MAX (2ULL << 30) /* rings and data areas of one client together */


typedef struct shm_conn {
    client_t *c;
    uv_poll_t sock_poll, efd_poll;
    int sock, req_efd, rep_efd;
    shm_hdr_t *hdr;
    uint8_t *req, *rep, *reqd, *repd; /* the rings, the request and reply data areas */
    size_t map_len;
    uint64_t ring, mask, data;                  /* data: bytes of each area (0: none) */
    uint64_t req_tail, rep_head, rep_tail_seen; /* the server's own truth */
    uint64_t rd_head, rd_tail_seen;             /* reply data area: given out, released */
    uint64_t last_ns;                           /* last activity while hot */
    /* the reply area is free up to rd_floor whatever rd_tail says (gaps passed); rd_gaps:
     * its bytes skipped by moves to its start (shm_area_at) */
    uint64_t rd_floor;
    shm_gaps_t rd_gaps;
    int hot, closing, nclosed;
    struct shm_conn *prev, *next;
} shm_conn_t;

static shm_conn_t *conns;
static uv_idle_t spin_idle;
static int spin_init, nhot;

static void shm_want_write(client_t *c);
static void shm_close(client_t *c);
static void shm_addr(client_t *c, char *peer, size_t peerlen, char *local, size_t locallen);
static char *shm_area_take(client_t *c, size_t len, char *hdr, size_t *hdrlen);

static const transport_ops_t shm_ops = {shm_want_write, shm_close, shm_addr, "shm",
                                        shm_area_take};

static uint64_t load_acq(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_rel(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void kick(int efd)
{
    uint64_t one = 1;
    ssize_t w = write(efd, &one, sizeof one); /* EAGAIN: the counter is already non-zero */
    (void)w;
}

/* Kicks the client when it sleeps (after a publish: the fence orders the index first). */
static void kick_client(shm_conn_t *sc)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sc->hdr->cli_sleeping, __ATOMIC_RELAXED)) kick(sc->rep_efd);
}

/* ---- teardown ---- */

static void on_poll_closed(uv_handle_t *h)
{
    shm_conn_t *sc = h->data;
    if (++sc->nclosed < 2) return;
    client_free(sc->c);
    munmap(sc->hdr, sc->map_len);
    close(sc->sock);
    close(sc->req_efd);
    close(sc->rep_efd);
    xfree(sc);
}

static void set_hot(shm_conn_t *sc, int hot);

static void shm_close(client_t *c)
{
    shm_conn_t *sc = c->conn;
    if (!sc || sc->closing) return;
    sc->closing = 1;
    c->flags |= CLIENT_CLOSE_ASAP;
    set_hot(sc, 0);
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        conns = sc->next;
    if (sc->next) sc->next->prev = sc->prev;
    srv.nshm_clients--;
    uv_close((uv_handle_t *)&sc->sock_poll, on_poll_closed);
    uv_close((uv_handle_t *)&sc->efd_poll, on_poll_closed);
}

/* A broken promise about the shared indices: the client goes, the server stays. */
static void hostile(shm_conn_t *sc, const char *what)
{
    log_notice("Closing shm client id=%llu: %s", (unsigned long long)sc->c->id, what);
    shm_close(sc->c);
}

static void shm_addr(client_t *c, char *peer, size_t peerlen, char *local, size_t locallen)
{
    const char *path = srv.cfg.unixsocket ? srv.cfg.unixsocket : "";
    snprintf(peer, peerlen, "%s:0", path);
    snprintf(local, locallen, "%s:0", path);
}

/* ---- replies: c->out -> the reply ring, large bulks -> the reply data area ---- */

/* A bulk of len bytes in the reply data area: contiguous (a bulk that would cross the area's
 * end starts at its beginning, the bytes skipped counting as given out), followed by one byte
 * the client may set to NUL. The stream carries "&<len>,<index>\r\n" instead of the bulk;
 * index counts bytes given out, ever, like the rings' indices, and the client releases them
 * in order by publishing rd_tail. No room: NULL, and the bulk goes inline. */
static char *shm_area_take(client_t *c, size_t len, char *hdr, size_t *hdrlen)
{
    shm_conn_t *sc = c->conn;
    if (!sc || sc->closing || len < SHM_AREA_MIN || len >= sc->data) return NULL;
    uint64_t tail = load_acq(&sc->hdr->rd_tail);
    if (tail - sc->rd_tail_seen > sc->rd_head - sc->rd_tail_seen) {
        hostile(sc, "reply data area tail out of range");
        return NULL;
    }
    sc->rd_tail_seen = tail;
    if (sc->rd_floor > tail) tail = sc->rd_floor; /* past gaps (see shm_area_at) */
    uint64_t at = shm_area_at(&sc->rd_gaps, sc->rd_head, &tail, sc->data, len + 1);
    sc->rd_floor = tail; /* gaps passed are forgotten by shm_area_at, room or not */
    if (at == UINT64_MAX) return NULL;
    sc->rd_head = at + len + 1;
    srv.stat.shm_data_out_bytes += len;
    size_t n = 0; /* "&<len>,<index>\r\n" */
    hdr[n++] = '&';
    n += ull_to_str(hdr + n, len);
    hdr[n++] = ',';
    n += ull_to_str(hdr + n, at);
    hdr[n++] = '\r';
    hdr[n++] = '\n';
    *hdrlen = n;
    return (char *)sc->repd + (at & (sc->data - 1));
}

/* Copies what fits of c->out into the reply ring; 1 if bytes moved, 0 if none, -1 if closed. */
static int flush_some(shm_conn_t *sc)
{
    client_t *c = sc->c;
    uint64_t tail = load_acq(&sc->hdr->rep_tail);
    if (tail - sc->rep_tail_seen > sc->rep_head - sc->rep_tail_seen) {
        hostile(sc, "reply ring tail out of range");
        return -1;
    }
    sc->rep_tail_seen = tail;
    size_t room = (size_t)(sc->ring - (sc->rep_head - tail));
    size_t n = c->out.len < room ? c->out.len : room;
    if (!n) return 0;
    size_t pos = (size_t)(sc->rep_head & sc->mask), first = sc->ring - pos;
    if (first > n) first = n;
    memcpy(sc->rep + pos, c->out.data, first);
    memcpy(sc->rep, c->out.data + first, n - first);
    sc->rep_head += n;
    store_rel(&sc->hdr->rep_head, sc->rep_head);
    kick_client(sc);
    srv.stat.net_output_bytes += n;
    if (n == c->out.len) {
        buf_clear(&c->out);
        client_output_drained(c); /* a streamed reply adds its next piece */
    } else {
        buf_consume(&c->out, n);
    }
    return 1;
}

/* Sends c->out as far as the ring takes it; the rest waits for the client to read (the
 * segment stays hot, or the client kicks a sleeping server when it consumes). */
static int shm_flush(shm_conn_t *sc)
{
    client_t *c = sc->c;
    int moved = 0, rc;
    if (sc->closing) return 0;
    server_log_flush();
    while (c->out.len && (rc = flush_some(sc)) > 0) moved = 1;
    if (sc->closing) return moved;
    if (c->out.len) {
        if (net__over_output_limit(c, c->out.len)) {
            srv.stat.client_outbuf_limit_disconnections++;
            hostile(sc, "output buffer limits");
            return moved;
        }
        set_hot(sc, 1);
    }
    if ((c->flags & CLIENT_CLOSE_ASAP) ||
        ((c->flags & CLIENT_CLOSE_AFTER_REPLY) && !c->seg_head && !c->out.len))
        shm_close(c);
    return moved;
}

static void shm_want_write(client_t *c)
{
    if (c->conn) shm_flush(c->conn);
}

/* ---- requests: the request ring -> c->qbuf ---- */

/* Copies what arrived into the query buffer and runs it; 1 if bytes moved, 0, -1 if closed. */
static int feed_some(shm_conn_t *sc)
{
    client_t *c = sc->c;
    uint64_t head = load_acq(&sc->hdr->req_head), avail = head - sc->req_tail;
    if (avail > sc->ring) {
        hostile(sc, "request ring head out of range");
        return -1;
    }
    if (!avail || (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP))) return 0;
    size_t limit = (size_t)srv.cfg.client_query_buffer_limit + 1;
    size_t n = avail < FEED_MAX ? (size_t)avail : FEED_MAX;
    if (c->qbuf.len >= limit) return 0; /* a blocked client: its queries wait in the ring */
    if (buf_try_reserve(&c->qbuf, n + 1) < 0) {
        log_warning("Closing client id=%llu: out of memory for its query buffer",
                    (unsigned long long)c->id);
        shm_close(c);
        return -1;
    }
    size_t pos = (size_t)(sc->req_tail & sc->mask), first = sc->ring - pos;
    if (first > n) first = n;
    memcpy(c->qbuf.data + c->qbuf.len, sc->req + pos, first);
    memcpy(c->qbuf.data + c->qbuf.len + first, sc->req, n - first);
    c->qbuf.len += n;
    c->qbuf.data[c->qbuf.len] = '\0';
    sc->req_tail += n;
    store_rel(&sc->hdr->req_tail, sc->req_tail);
    if (avail > sc->ring / 2) kick_client(sc); /* it may wait for room to write */
    srv.stat.net_input_bytes += n;
    if (client_process_input(c) < 0 && !(c->flags & CLIENT_CLOSE_AFTER_REPLY)) {
        log_notice("Closing client id=%llu that reached max query buffer length (qbuf %zu)",
                   (unsigned long long)c->id, c->qbuf.len);
        shm_close(c);
        return -1;
    }
    return 1;
}

/* One look at a segment: requests in, replies out. 1 if anything moved. */
static int service(shm_conn_t *sc)
{
    int moved = 0;
    for (int i = 0; i < 4 && !sc->closing; i++) {
        int rc = feed_some(sc);
        if (rc <= 0) break;
        moved = 1;
    }
    if (!sc->closing && sc->c->out.len && shm_flush(sc) > 0) moved = 1;
    return moved;
}

/* ---- the spin ---- */

static uint64_t now_ns(void)
{
    return uv_hrtime();
}

/* Whether the client did something the server has not seen (after the sleeping flag is set). */
static int changed(shm_conn_t *sc)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (load_acq(&sc->hdr->req_head) != sc->req_tail) return 1;
    return sc->c->out.len && load_acq(&sc->hdr->rep_tail) != sc->rep_tail_seen;
}

static void on_spin(uv_idle_t *h);

static void set_hot(shm_conn_t *sc, int hot)
{
    if (sc->hot == hot) {
        if (hot) sc->last_ns = now_ns();
        return;
    }
    sc->hot = hot;
    nhot += hot ? 1 : -1;
    if (hot) {
        sc->last_ns = now_ns();
        __atomic_store_n(&sc->hdr->srv_sleeping, 0, __ATOMIC_RELAXED);
        uv_idle_start(&spin_idle, on_spin);
    } else if (!nhot) {
        uv_idle_stop(&spin_idle);
    }
}

/* Every loop turn while a segment is hot: service the hot ones; a segment idle for SPIN_NS
 * goes to sleep (flag, fence, one more look). Yields the core when nothing moved, so a client
 * on the same core runs. */
static void on_spin(uv_idle_t *h)
{
    uint64_t now = now_ns();
    int moved = 0;
    for (shm_conn_t *sc = conns, *next; sc; sc = next) {
        next = sc->next;
        if (!sc->hot) continue;
        if (service(sc) > 0) {
            moved = 1;
            if (!sc->closing) sc->last_ns = now;
            continue;
        }
        if (sc->closing || (now - sc->last_ns < SPIN_NS && spin_allowed(now))) continue;
        __atomic_store_n(&sc->hdr->srv_sleeping, 1, __ATOMIC_RELAXED);
        if (changed(sc)) {
            __atomic_store_n(&sc->hdr->srv_sleeping, 0, __ATOMIC_RELAXED);
            continue;
        }
        set_hot(sc, 0);
    }
    if (!moved && nhot) spin_yield(); /* crowded: the idle segments sleep next turn */
}

void shm_serve_now(client_t *skip)
{
    for (shm_conn_t *sc = conns, *next; sc; sc = next) {
        next = sc->next; /* service may close sc */
        if (sc->closing || sc->c == skip || (sc->c->flags & (CLIENT_BLOCKED | CLIENT_IN_INPUT)))
            continue;
        service(sc);
    }
}

static void on_kick(uv_poll_t *h, int status, int events)
{
    shm_conn_t *sc = h->data;
    uint64_t v;
    while (read(sc->req_efd, &v, sizeof v) > 0) continue;
    if (sc->closing) return;
    set_hot(sc, 1);
    service(sc);
}

static void on_sock(uv_poll_t *h, int status, int events)
{
    shm_conn_t *sc = h->data;
    char b;
    ssize_t r = recv(sc->sock, &b, 1, MSG_DONTWAIT | MSG_PEEK);
    if (r < 0 && (errno == EAGAIN || errno == EINTR) && status >= 0) return;
    /* the end of the socket (the client died or left), or bytes it must not send any more */
    shm_close(sc->c);
}

/* ---- attach ---- */

/* Creates the segment: 0 and the mapping in sc with *memfd open, or -errno. */
static int segment_new(shm_conn_t *sc, uint64_t ring, uint64_t data, int *memfd)
{
    size_t len = SHM_HDR_SIZE + 2 * (size_t)ring + 2 * (size_t)data;
    int fd = memfd_create("cte-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING), rc;
    if (fd < 0) return -errno;
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)len) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        goto fail;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) goto fail;
    sc->hdr = p;
    sc->map_len = len;
    sc->ring = ring;
    sc->mask = ring - 1;
    sc->req = (uint8_t *)p + SHM_HDR_SIZE;
    sc->rep = sc->req + ring;
    sc->data = data;
    sc->reqd = data ? sc->rep + ring : NULL;
    sc->repd = data ? sc->reqd + data : NULL;
    *sc->hdr = (shm_hdr_t){.magic = SHM_MAGIC,
                           .version = SHM_VERSION,
                           .ring_size = ring,
                           .req_off = SHM_HDR_SIZE,
                           .rep_off = SHM_HDR_SIZE + ring,
                           .data_off = data ? SHM_HDR_SIZE + 2 * ring : 0,
                           .data_size = data,
                           .total = len};
    *memfd = fd;
    return 0;
fail:
    rc = -errno;
    close(fd);
    return rc;
}

/* A size argument (or the default v) rounded down to a power of two: 0, or -1 after the error
 * reply. zero_ok: 0 is accepted and stays 0 (no data area). */
static int size_arg_or_reply(client_t *c, int i, long long v, int zero_ok, const char *err,
                             uint64_t *out)
{
    if (c->argc > i) {
        char *end;
        errno = 0;
        v = strtoll(c->argv[i].ptr, &end, 10);
        if (errno || end != c->argv[i].ptr + c->argv[i].len || (uint64_t)v > RING_MAX ||
            (v < 4096 && !(zero_ok && v == 0))) {
            reply_error(c, err);
            return -1;
        }
    }
    uint64_t r = 4096;
    while (r * 2 <= (uint64_t)v) r *= 2;
    *out = v ? r : 0;
    return 0;
}

/* The sizes asked for: [ring-size [data-size]], else shm-ring-size and shm-data-size. */
static int sizes_or_reply(client_t *c, uint64_t *ring, uint64_t *data)
{
    if (c->argc > 3) {
        reply_syntax_error(c);
        return -1;
    }
    if (size_arg_or_reply(c, 1, srv.cfg.shm_ring_size, 0,
                          "ERR ring size must be an integer from 4096 to 1073741824", ring) < 0)
        return -1;
    if (size_arg_or_reply(c, 2, srv.cfg.shm_data_size, 1,
                          "ERR data area size must be 0 or an integer from 4096 to 1073741824",
                          data) < 0)
        return -1;
    if (2 * *ring + 2 * *data > SEGMENT_MAX) {
        reply_error(c, "ERR the rings and data areas together would exceed 2147483648 bytes");
        return -1;
    }
    return 0;
}

/* Sends the greeting with the three descriptors on the socket: 0 or -errno. */
static int send_fds(int sock, uint64_t ring, uint64_t data, const int fds[3])
{
    char line[80], cbuf[CMSG_SPACE(3 * sizeof(int))];
    int n = snprintf(line, sizeof line, "+SHM %d %llu %llu\r\n", SHM_VERSION,
                     (unsigned long long)ring, (unsigned long long)data);
    struct iovec iov = {line, (size_t)n};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    memset(cbuf, 0, sizeof cbuf);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, 3 * sizeof(int));
    ssize_t w;
    while ((w = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    return w == n ? 0 : -EIO;
}

/* The checks before a segment is made: 0, or -1 after an error reply. */
static int attach_allowed_or_reply(client_t *c)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (!srv.cfg.shm_enabled) {
        reply_error(c, "ERR shared memory is disabled (shm-enabled is no)");
        return -1;
    }
    if (!(c->flags & CLIENT_UNIX_SOCKET) || (c->flags & CLIENT_SHM) || c->fd < 0) {
        reply_error(c, "ERR CTE.SHM.ATTACH works only on a Unix socket connection");
        return -1;
    }
    if (c->out.len || c->seg_head || (c->flags & (CLIENT_MULTI | CLIENT_PUBSUB | CLIENT_MONITOR))) {
        reply_error(c, "ERR CTE.SHM.ATTACH must be sent alone, with no reply pending and "
                       "outside MULTI, pub/sub and MONITOR");
        return -1;
    }
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) {
        reply_errorf(c, "ERR cannot read the peer's credentials: %s", strerror(errno));
        return -1;
    }
    if (cr.uid != geteuid()) {
        reply_errorf(c, "ERR shared memory refused: peer uid %u is not the server's uid %u",
                     (unsigned)cr.uid, (unsigned)geteuid());
        return -1;
    }
    return 0;
}

/* Moves c onto sc: the socket handle goes (its duplicate sock stays as the liveness signal),
 * the polls start. 0, or -errno with nothing changed but the descriptors closed by the caller. */
static int adopt(client_t *c, shm_conn_t *sc)
{
    int sock = net__conn_release(c);
    if (sock < 0) return sock;
    sc->sock = sock;
    sc->c = c;
    c->ops = &shm_ops;
    c->conn = sc;
    c->fd = sock;
    c->flags |= CLIENT_SHM;
    c->parser.area = (const char *)sc->reqd; /* requests may reference the request data area */
    c->parser.area_size = sc->data;
    if (!spin_init) {
        uv_idle_init(srv.loop, &spin_idle);
        uv_unref((uv_handle_t *)&spin_idle);
        spin_init = 1;
    }
    uv_poll_init(srv.loop, &sc->sock_poll, sock);
    uv_poll_init(srv.loop, &sc->efd_poll, sc->req_efd);
    sc->sock_poll.data = sc->efd_poll.data = sc;
    uv_poll_start(&sc->sock_poll, UV_READABLE | UV_DISCONNECT, on_sock);
    uv_poll_start(&sc->efd_poll, UV_READABLE, on_kick);
    sc->next = conns;
    if (conns) conns->prev = sc;
    conns = sc;
    srv.nshm_clients++;
    set_hot(sc, 1); /* requests may follow the greeting at once */
    return 0;
}

/* CTE.SHM.ATTACH [ring-size [data-size]]: the reply is the greeting with the descriptors (send_fds),
 * sent at once on the socket; errors are ordinary replies and leave c on the socket. */
static void shm_attach_cmd(client_t *c)
{
    uint64_t ring, data;
    int memfd = -1, rc;
    if (attach_allowed_or_reply(c) != 0 || sizes_or_reply(c, &ring, &data) != 0) return;
    shm_conn_t *sc = xcalloc(1, sizeof(*sc));
    sc->req_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    sc->rep_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (sc->req_efd < 0 || sc->rep_efd < 0) {
        rc = -errno;
        goto fail;
    }
    if ((rc = segment_new(sc, ring, data, &memfd)) != 0) goto fail;
    int fds[3] = {memfd, sc->req_efd, sc->rep_efd};
    if ((rc = send_fds(c->fd, ring, data, fds)) != 0 || (rc = adopt(c, sc)) != 0) goto fail;
    close(memfd); /* the mapping stays */
    return;
fail:
    if (memfd >= 0) close(memfd);
    if (sc->hdr) munmap(sc->hdr, sc->map_len);
    if (sc->req_efd >= 0) close(sc->req_efd);
    if (sc->rep_efd >= 0) close(sc->rep_efd);
    xfree(sc);
    reply_errorf(c, "ERR cannot attach shared memory: %s", strerror(-rc));
}

command_t cmds_shm[] = {
    {"cte.shm.attach", shm_attach_cmd, -1, CMD_NOSCRIPT | CMD_NO_AUTH | CMD_NO_MULTI | CMD_FAST, 0,
     0, 0, "connection", "0.1.0",
     "Moves this Unix socket connection onto a shared-memory segment of its own.", "O(1)"},
    {NULL},
};
