/* server/net/net.c - the socket transport: TCP and Unix listeners on the libuv loop.
 *
 * Each connection is a conn_t that owns a libuv stream and points at its client_t. Reads go
 * straight into the client's query buffer (alloc_cb hands out its free tail), then the client
 * parses and runs what arrived. Replies wait in client->out until the end of the loop turn
 * (a uv_check handle, like Redis's beforeSleep), then leave with one uv_try_write (writev);
 * whatever the socket does not take moves to an in-flight buffer owned by a uv_write request,
 * and new replies keep going to client->out meanwhile, so replies stay in order.
 * Only this file and main.c include uv.h. Runs on the loop thread. */
#define _GNU_SOURCE /* accept4 */
#include "server/net/net.h"

#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"
#include "server/acl.h"
#include "server/block.h"
#include "server/cluster/cluster.h"
#include "server/hooks.h"
#include "server/net/spin.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/tracking.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#define READ_CHUNK (16 * 1024)
#define NET_ACCEPT_MAX 64 /* connections net_accept_now takes at once, as Redis's MAX_ACCEPTS */
/* Send buffer asked for on a Unix socket connection (the kernel caps it at net.core.wmem_max
 * and doubles it). Its default, net.core.wmem_default (208 KiB), is all a Unix stream socket
 * ever queues, where loopback TCP grows its own to tcp_wmem's 4 MiB: a 1 MiB reply then took
 * three writes and as many wake-ups of the client, and 1 MiB TGETs over the Unix socket were no
 * faster than over TCP. */
#define UNIX_SNDBUF (4 * 1024 * 1024)

typedef struct conn {
    union {
        uv_tcp_t tcp;
        uv_pipe_t pipe;
        uv_handle_t handle;
        uv_stream_t stream;
    } h;
    client_t *c;
    uv_write_t wreq;
    buf_t inflight;      /* bytes handed to uv_write, from inflight_off on */
    size_t inflight_off; /* what uv_try_write already sent of it (no memmove) */
    int writing;
    int closing;
} conn_t;

typedef struct listener {
    union {
        uv_tcp_t tcp;
        uv_pipe_t pipe;
        uv_handle_t handle;
        uv_stream_t stream;
    } h;
    int is_unix;
    struct listener *next;
} listener_t;

static listener_t *listeners;
static uv_check_t flush_check;
static uv_prepare_t flush_prepare;
static uv_timer_t block_timer; /* fires at the earliest deadline of a blocked client */
static char unix_path[512];

static void conn_want_write(client_t *c);
static void conn_close(client_t *c);
static void conn_addr(client_t *c, char *peer, size_t peerlen, char *local, size_t locallen);

static const transport_ops_t socket_ops = {conn_want_write, conn_close, conn_addr, NULL};

static void on_closed(uv_handle_t *h)
{
    conn_t *conn = h->data;
    if (conn->c) client_free(conn->c);
    buf_deinit(&conn->inflight);
    xfree(conn);
}

static void conn_close(client_t *c)
{
    conn_t *conn = c->conn;
    if (!conn || conn->closing) return;
    conn->closing = 1;
    c->flags |= CLIENT_CLOSE_ASAP;
    uv_read_stop(&conn->h.stream);
    uv_close(&conn->h.handle, on_closed);
}

int net__conn_release(client_t *c)
{
    conn_t *conn = c->conn;
    if (c->ops != &socket_ops || !conn || conn->closing) return -EINVAL;
    if (conn->writing || c->out.len || c->seg_head) return -EBUSY;
    int fd = dup(c->fd);
    if (fd < 0) return -errno;
    conn->closing = 1;
    conn->c = NULL; /* on_closed frees the connection only: c lives on */
    uv_read_stop(&conn->h.stream);
    uv_close(&conn->h.handle, on_closed);
    c->conn = NULL;
    c->ops = NULL;
    return fd;
}

static void format_addr(const struct sockaddr_storage *ss, char *out, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        port = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
    }
    snprintf(out, len, "%s:%d", ip, port);
}

static void conn_addr(client_t *c, char *peer, size_t peerlen, char *local, size_t locallen)
{
    conn_t *conn = c->conn;
    if (c->flags & CLIENT_UNIX_SOCKET) {
        snprintf(peer, peerlen, "%s:0", unix_path);
        snprintf(local, locallen, "%s:0", unix_path);
        return;
    }
    struct sockaddr_storage ss;
    int n = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getpeername(&conn->h.tcp, (struct sockaddr *)&ss, &n) == 0)
        format_addr(&ss, peer, peerlen);
    n = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getsockname(&conn->h.tcp, (struct sockaddr *)&ss, &n) == 0)
        format_addr(&ss, local, locallen);
}

static size_t pending_bytes(conn_t *conn)
{
    return conn->c->out.len + conn->inflight.len - conn->inflight_off;
}

/* Client output buffer limits of c's class (pubsub while subscribed, else normal, as Redis's
 * getClientType): 1 if c must be dropped. */
int net__over_output_limit(client_t *c, size_t pending)
{
    int klass = (c->flags & CLIENT_PUBSUB) ? CONFIG_CLIENT_PUBSUB : CONFIG_CLIENT_NORMAL;
    const config_obuf_limit_t *lim = &srv.cfg.client_obuf_limits[klass];
    unsigned long long hard = (unsigned long long)lim->hard_bytes,
                       soft = (unsigned long long)lim->soft_bytes;
    if (hard && pending > hard) return 1;
    if (!soft || pending <= soft) {
        c->out_soft_since_ms = 0;
        return 0;
    }
    long long now = time_ms();
    if (!c->out_soft_since_ms) c->out_soft_since_ms = (uint64_t)now;
    return now - (long long)c->out_soft_since_ms > lim->soft_seconds * 1000;
}

/* Closes c when its pending output is past its limits; returns 1 then. */
static int enforce_output_limit(conn_t *conn)
{
    client_t *c = conn->c;
    if (!net__over_output_limit(c, pending_bytes(conn))) return 0;
    srv.stat.client_outbuf_limit_disconnections++;
    log_notice("Client id=%llu scheduled to be closed ASAP for overcoming of output buffer limits.",
               (unsigned long long)c->id);
    conn_close(c);
    return 1;
}

static void on_written(uv_write_t *req, int status);

static void conn_flush(conn_t *conn)
{
    client_t *c = conn->c;
    if (conn->closing) return;
    if (conn->writing) { /* replies pile up in out behind the write in flight */
        enforce_output_limit(conn);
        return;
    }
    if (c->out.len) {
        server_log_flush(); /* a write callback may flush replies before the loop's own flush */
        uv_buf_t b = uv_buf_init(c->out.data, (unsigned)c->out.len);
        int n = uv_try_write(&conn->h.stream, &b, 1);
        if (n == UV_EAGAIN) n = 0;
        if (n < 0) {
            conn_close(c);
            return;
        }
        srv.stat.net_output_bytes += (uint64_t)n;
        if ((size_t)n == c->out.len) {
            buf_clear(&c->out); /* capacity kept: server_cron frees idle clients' buffers */
            client_output_drained(c); /* a streamed reply adds its next piece */
        } else {
            /* the socket is full: hand the rest to libuv, keep appending to a fresh out */
            buf_t rest = c->out;
            c->out = conn->inflight;
            buf_clear(&c->out);
            conn->inflight = rest;
            conn->inflight_off = (size_t)n;
            if (enforce_output_limit(conn)) return;
            uv_buf_t wb = uv_buf_init(conn->inflight.data + conn->inflight_off,
                                      (unsigned)(conn->inflight.len - conn->inflight_off));
            conn->writing = 1;
            if (uv_write(&conn->wreq, &conn->h.stream, &wb, 1, on_written) < 0) {
                conn->writing = 0;
                conn_close(c);
                return;
            }
            client_output_drained(c);
            return;
        }
    }
    /* QUIT closes once every reply left, late ones (file-tier I/O) included */
    if ((c->flags & CLIENT_CLOSE_ASAP) ||
        ((c->flags & CLIENT_CLOSE_AFTER_REPLY) && !c->seg_head))
        conn_close(c);
}

static void on_written(uv_write_t *req, int status)
{
    conn_t *conn = req->handle->data;
    conn->writing = 0;
    if (status < 0 || conn->closing) {
        if (!conn->closing) conn_close(conn->c);
        return;
    }
    srv.stat.net_output_bytes += conn->inflight.len - conn->inflight_off;
    buf_clear(&conn->inflight);
    conn->inflight_off = 0;
    /* kept for the next large reply (no page faults per reply); very large ones go back */
    if (conn->inflight.cap > 64 * 1024 * 1024) buf_deinit(&conn->inflight);
    conn_flush(conn);
}

static void conn_want_write(client_t *c)
{
    conn_t *conn = c->conn;
    if (conn) conn_flush(conn);
}

void net_flush_pending(void)
{
    if (cluster) cluster_before_sleep(); /* its config and state, as Redis's clusterBeforeSleep */
    tracking_before_sleep(); /* BCAST invalidations, as Redis's beforeSleep sends them */
    server_log_flush(); /* appendfsync always: replies leave only once their writes are on disk */
    while (srv.pending_write) {
        client_t *c = srv.pending_write;
        srv.pending_write = c->pw_next;
        c->pw_next = NULL;
        c->flags &= ~(uint32_t)CLIENT_PENDING_WRITE;
        if (c->ops && c->ops->want_write) c->ops->want_write(c);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    conn_t *conn = h->data;
    client_t *c = conn->c;
    size_t want = READ_CHUNK, need = resp_parser_need(&c->parser);
    /* a client past client-query-buffer-limit is dropped: reserve no more than that for it */
    size_t limit = (size_t)srv.cfg.client_query_buffer_limit + 1;
    if (need > limit) need = limit;
    if (need > c->qbuf.len && need - c->qbuf.len > want) want = need - c->qbuf.len;
    if (c->qbuf.cap - c->qbuf.len < want + 1 && buf_try_reserve(&c->qbuf, want) < 0) {
        *b = uv_buf_init(NULL, 0);
        return;
    }
    /* at most want bytes a read (as Redis's 16 KB): see on_read */
    size_t room = c->qbuf.cap - c->qbuf.len - 1;
    *b = uv_buf_init(c->qbuf.data + c->qbuf.len, (unsigned)(room < want ? room : want));
}

/* ---- the spin after a read ----
 *
 * A client that waits for each reply (YCSB, redis-benchmark -P 1, most application threads)
 * sends its next request a few microseconds after our reply reaches it. Sleeping in epoll_wait
 * in between costs a context switch and a wake-up on each side; polling the loop without
 * blocking (a libuv idle handle keeps the poll timeout at 0) for up to socket-spin-us after the
 * last read catches the request on the way in. Adaptive, as the shm transport's spin: a spin
 * that ended with no read halves the next window (down to a sixteenth), a read during a spin
 * restores it, so a lone slow client costs a few microseconds a request and a busy server
 * spins only between requests that follow each other closely. Between polls the core is
 * yielded, and a crowded core stops the spin for a while (spin.h). Loop thread only. */
static uv_idle_t spin_idle;
static uint64_t spin_last_ns; /* the last read */
static uint64_t spin_win_ns;  /* the window now: socket-spin-us / 16 .. socket-spin-us */
static int spin_hit;          /* a read came while this spin ran */

static void on_spin(uv_idle_t *h)
{
    uint64_t max = (uint64_t)srv.cfg.socket_spin_us * 1000;
    if (spin_win_ns > max) spin_win_ns = max;
    if (uv_hrtime() - spin_last_ns <= spin_win_ns && spin_yield() == 0) return;
    uv_idle_stop(h);
    if (!spin_hit && spin_win_ns > max / 16) spin_win_ns /= 2;
}

static void spin_after_read(void)
{
    if (!srv.cfg.socket_spin_us) return;
    spin_last_ns = uv_hrtime();
    if (!spin_allowed(spin_last_ns)) return;
    if (uv_is_active((uv_handle_t *)&spin_idle)) {
        spin_hit = 1;
        srv.stat.socket_spin_hits++;
        spin_win_ns = (uint64_t)srv.cfg.socket_spin_us * 1000;
        return;
    }
    if (!spin_win_ns) spin_win_ns = (uint64_t)srv.cfg.socket_spin_us * 1000;
    spin_hit = 0;
    srv.stat.socket_spins++;
    uv_idle_start(&spin_idle, on_spin);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
    conn_t *conn = s->data;
    client_t *c = conn->c;
    if (nread < 0) {
        /* EOF or reset by peer (Jedis closes with RST): clean up quietly */
        conn_close(c);
        return;
    }
    if (nread == 0) return;
    spin_after_read(); /* bytes came: the next request may follow closely */
    if (!b->base) {
        log_warning("Closing client id=%llu: out of memory for its query buffer",
                    (unsigned long long)c->id);
        conn_close(c);
        return;
    }
    c->qbuf.len += (size_t)nread;
    c->qbuf.data[c->qbuf.len] = '\0';
    srv.stat.net_input_bytes += (uint64_t)nread;
    if (client_process_input(c) < 0 && !(c->flags & CLIENT_CLOSE_AFTER_REPLY)) {
        log_notice("Closing client id=%llu that reached max query buffer length (qbuf %zu)",
                   (unsigned long long)c->id, c->qbuf.len);
        conn_close(c);
        return;
    }
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) uv_read_stop(&conn->h.stream);
    /* A full read means more of a pipeline is waiting, which libuv reads before this turn's
     * flush: send the replies that are ready now, so the client sends its next requests while
     * the rest is parsed (Redis gets the same effect by reading 16 KB per event). Not under
     * appendfsync always, whose replies wait for the turn's one fsync. */
    else if ((size_t)nread == b->len && c->out.len && srv.cfg.appendfsync != CONFIG_FSYNC_ALWAYS)
        conn_flush(conn);
}

static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
               (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127);
    }
    return 0; /* an address we cannot place is not loopback: protected mode refuses it */
}

int net_protected_refuses(int rc, const struct sockaddr_storage *ss)
{
    /* as Redis: protected mode holds while the default user needs no password */
    if (!srv.cfg.protected_mode || !acl_default_user() || !acl_user_nopass(acl_default_user()))
        return 0;
    return rc != 0 || !is_loopback(ss); /* fails closed, as Redis's connIsLocal */
}

static const char denied_msg[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from "
    "the loopback interface. If you want to connect from external computers to Redis you may "
    "adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the "
    "same host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Set up an authentication password for the default user. NOTE: You only need "
    "to do one of the above things in order for the server to start accepting connections "
    "from the outside.\r\n";

/* Writes msg and closes: for connections refused before they become clients. */
static void refuse(conn_t *conn, const char *msg)
{
    uv_buf_t b = uv_buf_init((char *)msg, (unsigned)strlen(msg));
    uv_try_write(&conn->h.stream, &b, 1);
    conn_close(conn->c);
}

static conn_t *conn_new(const listener_t *l)
{
    conn_t *conn = xcalloc(1, sizeof(*conn));
    buf_init(&conn->inflight);
    if (l->is_unix) uv_pipe_init(srv.loop, &conn->h.pipe, 0);
    else uv_tcp_init(srv.loop, &conn->h.tcp);
    conn->h.handle.data = conn;
    return conn;
}

static void conn_start(const listener_t *l, conn_t *conn);

static void on_connection(uv_stream_t *server, int status)
{
    listener_t *l = server->data;
    if (status < 0) return;
    conn_t *conn = conn_new(l);
    if (uv_accept(server, &conn->h.stream) < 0) {
        uv_close(&conn->h.handle, on_closed);
        return;
    }
    conn_start(l, conn);
}

/* The accepted connection becomes a client: limits, protected mode, reading. */
static void conn_start(const listener_t *l, conn_t *conn)
{
    uv_os_fd_t fd = -1;
    uv_fileno(&conn->h.handle, &fd);
    conn->c = client_new(&socket_ops, conn, fd);
    srv.stat.numconnections++;
    if (l->is_unix) conn->c->flags |= CLIENT_UNIX_SOCKET;
    if (srv.nclients > (uint64_t)srv.cfg.maxclients) {
        srv.stat.rejected_conn++;
        refuse(conn, "-ERR max number of clients reached\r\n");
        return;
    }
    if (l->is_unix) {
        int sndbuf = UNIX_SNDBUF;
        uv_send_buffer_size(&conn->h.handle, &sndbuf); /* best effort: the default still works */
    } else {
        uv_tcp_nodelay(&conn->h.tcp, 1);
        if (srv.cfg.tcp_keepalive > 0) uv_tcp_keepalive(&conn->h.tcp, 1, srv.cfg.tcp_keepalive);
        struct sockaddr_storage ss;
        int n = sizeof(ss);
        memset(&ss, 0, sizeof(ss));
        int rc = uv_tcp_getpeername(&conn->h.tcp, (struct sockaddr *)&ss, &n);
        if (net_protected_refuses(rc, &ss)) {
            srv.stat.rejected_conn++;
            refuse(conn, denied_msg);
            return;
        }
    }
    uv_read_start(&conn->h.stream, on_alloc, on_read);
}

int net_listen_fds(int *fds, int max)
{
    int n = 0;
    for (listener_t *l = listeners; l && n < max; l = l->next) {
        uv_os_fd_t fd;
        if (uv_fileno(&l->h.handle, &fd) == 0) fds[n++] = fd;
    }
    return n;
}

void net_accept_now(int fd)
{
    listener_t *l = listeners;
    uv_os_fd_t lfd = -1;
    while (l && !(uv_fileno(&l->h.handle, &lfd) == 0 && lfd == fd)) l = l->next;
    if (!l) return;
    for (int i = 0; i < NET_ACCEPT_MAX; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) return; /* EAGAIN: none left (errors: the loop's accept sees them) */
        conn_t *conn = conn_new(l);
        int rc = l->is_unix ? uv_pipe_open(&conn->h.pipe, cfd) : uv_tcp_open(&conn->h.tcp, cfd);
        if (rc < 0) {
            close(cfd);
            uv_close(&conn->h.handle, on_closed);
            continue;
        }
        conn_start(l, conn);
    }
}

static int listen_tcp(const char *addr, int port, int optional)
{
    struct sockaddr_storage ss;
    if (uv_ip4_addr(addr, port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(addr, port, (struct sockaddr_in6 *)&ss) != 0) {
        log_warning("Invalid bind address '%s'", addr);
        return -EINVAL;
    }
    listener_t *l = xcalloc(1, sizeof(*l));
    uv_tcp_init(srv.loop, &l->h.tcp);
    l->h.handle.data = l;
    int rc = uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&ss,
                         ss.ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0);
    if (rc == 0) rc = uv_listen(&l->h.stream, srv.cfg.tcp_backlog, on_connection);
    if (rc < 0) {
        if (!optional)
            log_warning("Could not create server TCP listening socket %s:%d: %s", addr, port,
                        uv_strerror(rc));
        uv_close(&l->h.handle, (uv_close_cb)xfree);
        return optional ? 0 : rc;
    }
    if (port == 0) {
        int n = sizeof(ss);
        uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&ss, &n);
        srv.tcp_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                     : ((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    l->next = listeners;
    listeners = l;
    return 0;
}

/* Whether a server accepts connections on the Unix socket at path: 1 yes, 0 no (nothing
 * there, or a stale socket file whose server is gone: ECONNREFUSED), -errno when it cannot
 * tell. A blocking connect on a Unix socket returns at once: accepted, queued or refused. */
static int unix_socket_live(const char *path)
{
    struct sockaddr_un sa;
    int fd, rc = 0;
    if (strlen(path) >= sizeof(sa.sun_path)) return 0; /* the bind below reports it */
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path));
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN)
        rc = 1; /* EAGAIN: its backlog is full, still a live server */
    else if (errno != ECONNREFUSED && errno != ENOENT && errno != ENOTSOCK)
        rc = -errno;
    close(fd);
    return rc;
}

static int listen_unix(const char *path, int perm)
{
    int live = unix_socket_live(path);
    if (live != 0) {
        if (live > 0)
            log_warning("Unix socket %s is in use by another running server (it accepts "
                        "connections): not taking it over",
                        path);
        else
            log_warning("Can't tell whether Unix socket %s is in use: %s", path, strerror(-live));
        return live > 0 ? -EADDRINUSE : live;
    }
    listener_t *l = xcalloc(1, sizeof(*l));
    l->is_unix = 1;
    uv_pipe_init(srv.loop, &l->h.pipe, 0);
    l->h.handle.data = l;
    unlink(path); /* nothing, or a stale socket file */
    int rc = uv_pipe_bind(&l->h.pipe, path);
    if (rc == 0) rc = uv_listen(&l->h.stream, srv.cfg.tcp_backlog, on_connection);
    if (rc < 0) {
        log_warning("Failed opening Unix socket %s: %s", path, uv_strerror(rc));
        uv_close(&l->h.handle, (uv_close_cb)xfree);
        return rc;
    }
    if (perm) chmod(path, (mode_t)perm);
    snprintf(unix_path, sizeof(unix_path), "%s", path);
    l->next = listeners;
    listeners = l;
    return 0;
}

static void on_check(uv_check_t *h)
{
    net_flush_pending();
}

static void on_block_timer(uv_timer_t *t)
{
    block_check_timeouts(time_ms());
    net_flush_pending();
}

static void on_prepare(uv_prepare_t *h)
{
    net_flush_pending();
    long long deadline = block_next_deadline();
    if (!deadline) {
        uv_timer_stop(&block_timer);
        return;
    }
    long long wait = deadline - time_ms();
    uv_timer_start(&block_timer, on_block_timer, wait > 0 ? (uint64_t)wait : 0, 0);
}

static int started;

/* Opens the TCP listeners of port on every address of bind (none for port 0, as Redis);
 * *ntcp counts them. Returns 0 or the first error (the listeners opened so far stay open). */
static int listen_all_tcp(int port, const config_strlist_t *bind, int *ntcp)
{
    srv.tcp_port = port;
    for (int i = 0; port > 0 && i < bind->count; i++) {
        const char *a = bind->items[i];
        int optional = a[0] == '-';
        int rc = listen_tcp(optional ? a + 1 : a, port, optional);
        if (rc < 0) return rc;
        (*ntcp)++;
    }
    return 0;
}

/* Closes the TCP listeners, keeping the Unix one. */
static void close_tcp_listeners(void)
{
    listener_t **pp = &listeners;
    while (*pp) {
        listener_t *l = *pp;
        if (l->is_unix) {
            pp = &l->next;
            continue;
        }
        *pp = l->next;
        uv_close(&l->h.handle, (uv_close_cb)xfree);
    }
}

int net_listen_again(void)
{
    int n = 0;
    if (!started) return 0;
    close_tcp_listeners(); /* the old ones first: the new set may share an address and port */
    int rc = listen_all_tcp(srv.cfg.port, &srv.cfg.bind, &n);
    if (rc < 0) close_tcp_listeners();
    return rc;
}

int net_start(void)
{
    const config_t *cfg = &srv.cfg;
    int ntcp = 0;
    int rc = listen_all_tcp(cfg->port, &cfg->bind, &ntcp);
    if (rc < 0) return rc;
    if (cfg->unixsocket && cfg->unixsocket[0]) {
        int rc = listen_unix(cfg->unixsocket, cfg->unixsocketperm);
        if (rc < 0) return rc;
    } else if (ntcp == 0) {
        log_warning("Configured to not listen anywhere, exiting.");
        return -EINVAL;
    }
    uv_timer_init(srv.loop, &block_timer);
    uv_unref((uv_handle_t *)&block_timer);
    uv_idle_init(srv.loop, &spin_idle);
    uv_unref((uv_handle_t *)&spin_idle);
    uv_check_init(srv.loop, &flush_check);
    uv_check_start(&flush_check, on_check);
    uv_prepare_init(srv.loop, &flush_prepare);
    uv_prepare_start(&flush_prepare, on_prepare);
    uv_unref((uv_handle_t *)&flush_check);
    uv_unref((uv_handle_t *)&flush_prepare);
    started = 1;
    return 0;
}

void net_stop(void)
{
    started = 0;
    while (listeners) {
        listener_t *l = listeners;
        listeners = l->next;
        uv_close(&l->h.handle, (uv_close_cb)xfree);
    }
    if (unix_path[0]) unlink(unix_path);
    net_flush_pending();
    for (client_t *c = srv.clients; c; c = c->next)
        if (c->ops == &socket_ops) conn_close(c);
    uv_timer_stop(&block_timer);
    uv_idle_stop(&spin_idle);
    uv_check_stop(&flush_check);
    uv_prepare_stop(&flush_prepare);
}
