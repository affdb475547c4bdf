/* busy.c - serving the other clients while a script runs long (see engine.h).
 *
 * The script runs inside a libuv callback, and uv_run is not reentrant, so the clients are
 * served here without the loop, as Redis's processEventsWhileBlocked does: one poll() over
 * the sockets of the socket clients, what arrived read straight into their query buffers and
 * run (the dispatcher answers -BUSY to all but the commands allowed while busy), their
 * replies handed to their transport, which writes them at once (uv_try_write); replies still
 * waiting from the loop turn the script started in are sent first. The script's
 * own client is left alone: what it pipelined after the script runs once the script is over.
 * New connections are accepted from the same poll (net_accept_now) and served from the next
 * call on, as Redis accepts them while a script is busy; shared-memory clients are served
 * through their rings (shm_serve_now). Left out until the script ends: clients blocked or
 * closing. A read that finds the end of the stream is left for the loop to see again.
 * Loop thread. */
#include "server/script/engine.h"

#include "server/cluster/bus.h"
#include "server/net/net.h"
#include "server/net/shm.h"
#include "server/server.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#define BUSY_POLL_MAX 1024
#define BUSY_LISTEN_MAX 16
#define BUSY_READ_CHUNK (16 * 1024)

static int servable(const client_t *c, const client_t *caller)
{
    return c != caller && c->fd >= 0 && c->ops && c->ops->want_write &&
           !(c->flags & (CLIENT_SHM | CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY |
                         CLIENT_IN_INPUT | CLIENT_BLOCKED | CLIENT_UNLISTED));
}

/* Reads what c sent and runs it; its replies leave at once. */
static void serve(client_t *c)
{
    if (buf_try_reserve(&c->qbuf, BUSY_READ_CHUNK) < 0) return;
    ssize_t n = read(c->fd, c->qbuf.data + c->qbuf.len, c->qbuf.cap - c->qbuf.len - 1);
    if (n <= 0) return; /* EOF, error or nothing: the loop sees it again later */
    c->qbuf.len += (size_t)n;
    c->qbuf.data[c->qbuf.len] = '\0';
    srv.stat.net_input_bytes += (uint64_t)n;
    if (client_process_input(c) < 0)
        client_close(c);
    else
        c->ops->want_write(c);
}

void engine_serve_while_busy(client_t *caller)
{
    /* replies made in the loop turn the script started in would otherwise wait for its end
     * (the loop sends them when the turn is over), and their clients wait for them */
    net_flush_pending();
    shm_serve_now(caller);
    cluster_bus_serve_now(); /* the other cluster nodes' pings: or they flag us failing */
    struct pollfd pfd[BUSY_LISTEN_MAX + BUSY_POLL_MAX];
    client_t *who[BUSY_POLL_MAX];
    int fds[BUSY_LISTEN_MAX];
    int nl = net_listen_fds(fds, BUSY_LISTEN_MAX), n = 0;
    for (int i = 0; i < nl; i++) pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    for (client_t *c = srv.clients; c && n < BUSY_POLL_MAX; c = c->next) {
        if (!servable(c, caller)) continue;
        pfd[nl + n] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        who[n++] = c;
    }
    if (poll(pfd, (nfds_t)(nl + n), 0) <= 0) return;
    for (int i = 0; i < n; i++)
        if (pfd[nl + i].revents & POLLIN) serve(who[i]);
    for (int i = 0; i < nl; i++) /* after: a client accepted now is in srv.clients' head */
        if (pfd[i].revents & POLLIN) net_accept_now(pfd[i].fd);
}
