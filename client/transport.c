/* transport.c - libcte's transports: TCP and Unix stream sockets (a blocking descriptor used
 * with MSG_DONTWAIT except where the connection asks to block, so that a synchronous call is
 * sendmsg + recv, two system calls; MSG_NOSIGNAL so a closed peer is -EPIPE, never SIGPIPE). The
 * shared-memory transport is in shm.c. Runs on the connection's thread. */
#define _GNU_SOURCE
#include "transport.h"

#include "cte/cte.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static long sock_send(cte_transport_t *t, const struct iovec *iov, int n)
{
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
    for (;;) {
        ssize_t w = sendmsg(t->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0) return (long)w;
        if (errno == EINTR) continue;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

static long sock_recv(cte_transport_t *t, void *buf, size_t len, int block)
{
    for (;;) {
        ssize_t r = recv(t->fd, buf, len, block ? 0 : MSG_DONTWAIT);
        if (r >= 0) return (long)r;
        if (errno == EINTR) continue;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

static int sock_wait(cte_transport_t *t, int want_write, int timeout_ms)
{
    struct pollfd p = {.fd = t->fd, .events = POLLIN | (want_write ? POLLOUT : 0)};
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return 0;
        int mask = 0;
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) mask |= CTE_T_READABLE;
        if (p.revents & (POLLOUT | POLLERR)) mask |= CTE_T_WRITABLE;
        return mask;
    }
}

static void sock_close(cte_transport_t *t)
{
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* connect() that gives up after timeout_ms (<= 0: as long as the kernel tries): 0, -errno, or
 * CTE_E_TIMEOUT. The descriptor is left blocking, as the transports expect. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int fl = fcntl(fd, F_GETFL), err = 0, n;
    socklen_t elen = sizeof err;

    if (timeout_ms <= 0) return connect(fd, sa, len) == 0 ? 0 : -errno;
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -errno;
    if (connect(fd, sa, len) != 0) {
        if (errno != EINPROGRESS) return -errno;
        while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return CTE_E_TIMEOUT;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return -errno;
        if (err) return -err;
    }
    return fcntl(fd, F_SETFL, fl) == 0 ? 0 : -errno;
}

static int tcp_open(cte_transport_t *t, const cte_addr_t *a, int timeout_ms, char *why,
                    size_t whylen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    char port[8];
    int rc, err = -ECONNREFUSED, one = 1;

    snprintf(port, sizeof port, "%d", a->port);
    if ((rc = getaddrinfo(a->host, port, &hints, &res)) != 0) {
        snprintf(why, whylen, "cannot resolve %s: %s", a->host, gai_strerror(rc));
        return CTE_E_ADDRESS;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = -errno;
            continue;
        }
        if ((err = connect_within(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms)) == 0) {
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            t->fd = fd;
            break;
        }
        close(fd);
    }
    freeaddrinfo(res);
    if (t->fd < 0)
        snprintf(why, whylen, "connect to %s:%d: %s", a->host, a->port, cte_strerror(err));
    return t->fd < 0 ? err : 0;
}

int cte__unix_open(cte_transport_t *t, const cte_addr_t *a, int timeout_ms, char *why,
                   size_t whylen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

    if (fd < 0) return -errno;
    memcpy(sa.sun_path, a->path, strlen(a->path) + 1);
    if ((err = connect_within(fd, (struct sockaddr *)&sa, sizeof sa, timeout_ms)) != 0) {
        snprintf(why, whylen, "connect to %s: %s", a->path, cte_strerror(err));
        close(fd);
        return err;
    }
    t->fd = fd;
    return 0;
}

static const cte_transport_ops_t tcp_ops = {"tcp",     tcp_open,  sock_send,
                                            sock_recv, sock_wait, sock_close};
static const cte_transport_ops_t unix_ops = {"unix",    cte__unix_open, sock_send,
                                             sock_recv, sock_wait,      sock_close};

const cte_transport_ops_t *cte__transport_ops(cte_addr_kind_t kind)
{
    if (kind == CTE_ADDR_UNIX) return &unix_ops;
    if (kind == CTE_ADDR_SHM) return &cte__shm_ops;
    return &tcp_ops;
}
