/* server/net/outconn.c - outbound TCP connections on the libuv loop (contract in outconn.h).
 *
 * An outconn_t owns a getaddrinfo request, then a TCP handle and a timer. Each queued write is
 * one uv_write request with its own buffer, so writes leave in order and a buffer is freed in
 * its write callback. Closing cancels what is in flight: the structure lives until every
 * handle's close callback and the resolver's callback ran (refs counts them), and a closed
 * connection reports nothing. Loop thread only. */
#include "server/net/outconn.h"

#include "common/alloc.h"
#include "server/server.h"

#include <stdio.h>
#include <string.h>
#include <uv.h>

#define READ_CHUNK (64 * 1024)

struct outconn {
    uv_getaddrinfo_t resolve;
    uv_connect_t connect;
    uv_tcp_t *tcp; /* the handle of the current try (each try has its own), NULL before */
    struct addrinfo *addrs, *next_addr; /* what the resolver gave, the address to try next */
    uv_timer_t timer;
    const outconn_ops_t *ops;
    void *ud;
    int port;
    int refs;       /* libuv callbacks still to come (resolver, handle closes) */
    int ok, failed; /* connected; failed since */
    int closed;     /* outconn_close ran: report nothing */
    int early_err;  /* uv_getaddrinfo refused to start: reported from the timer */
    long long timeout_ms;
    size_t pending;
    char rbuf[READ_CHUNK];
};

typedef struct wreq {
    uv_write_t req;
    outconn_t *oc;
    size_t len;
    char *p;
} wreq_t;

static int nopen;

static void unref(outconn_t *oc)
{
    if (--oc->refs == 0) {
        nopen--;
        if (oc->addrs) uv_freeaddrinfo(oc->addrs);
        xfree(oc);
    }
}

static void on_close(uv_handle_t *h)
{
    unref(h->data);
}

static void on_tcp_close(uv_handle_t *h)
{
    outconn_t *oc = h->data;
    xfree(h);
    unref(oc);
}

static void close_tcp(outconn_t *oc)
{
    if (!oc->tcp) return;
    uv_close((uv_handle_t *)oc->tcp, on_tcp_close);
    oc->tcp = NULL;
}

static void fail(outconn_t *oc, int status)
{
    if (oc->failed || oc->closed) return;
    oc->failed = 1;
    oc->ok = 0;
    uv_timer_stop(&oc->timer);
    if (oc->tcp) uv_read_stop((uv_stream_t *)oc->tcp);
    if (oc->ops && oc->ops->failed) oc->ops->failed(oc->ud, status);
}

static void on_timer(uv_timer_t *t)
{
    outconn_t *oc = t->data;
    if (!oc->ok && !oc->failed && !oc->closed) {
        oc->failed = 1;
        if (oc->ops && oc->ops->connected)
            oc->ops->connected(oc->ud, oc->early_err ? oc->early_err : UV_ETIMEDOUT);
        return;
    }
    fail(oc, UV_ETIMEDOUT);
}

static void arm(outconn_t *oc)
{
    if (oc->closed || oc->failed) return;
    if (oc->timeout_ms > 0)
        uv_timer_start(&oc->timer, on_timer, (uint64_t)oc->timeout_ms, 0);
    else
        uv_timer_stop(&oc->timer);
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    outconn_t *oc = h->data;
    *buf = uv_buf_init(oc->rbuf, sizeof(oc->rbuf));
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    outconn_t *oc = s->data;
    if (oc->closed || oc->failed) return;
    if (n < 0) {
        fail(oc, (int)n);
        return;
    }
    if (n == 0) return;
    arm(oc);
    if (oc->ops && oc->ops->data) oc->ops->data(oc->ud, oc->rbuf, (size_t)n);
}

static int try_connect(outconn_t *oc);

static void connect_cb(uv_connect_t *req, int status)
{
    outconn_t *oc = req->data;
    if (oc->closed || oc->failed) return;
    if (status < 0 && oc->next_addr) {
        /* the next address of the host (a name may resolve to ::1 first, then 127.0.0.1) */
        close_tcp(oc);
        if (try_connect(oc) == 0) return;
    }
    if (status == 0) status = uv_read_start((uv_stream_t *)oc->tcp, alloc_cb, read_cb);
    if (status == 0) {
        oc->ok = 1;
        arm(oc);
    } else {
        oc->failed = 1;
        uv_timer_stop(&oc->timer);
    }
    if (oc->ops && oc->ops->connected) oc->ops->connected(oc->ud, status);
}

/* Connects to the next address the resolver gave: 0, or a negative error. */
static int try_connect(outconn_t *oc)
{
    int rc = UV_EADDRNOTAVAIL;
    while (oc->next_addr) {
        struct addrinfo *a = oc->next_addr;
        oc->next_addr = a->ai_next;
        oc->tcp = xmalloc(sizeof(*oc->tcp));
        uv_tcp_init(srv.loop, oc->tcp);
        oc->tcp->data = oc;
        oc->refs++; /* the handle's close */
        uv_tcp_nodelay(oc->tcp, 1);
        oc->connect.data = oc;
        rc = uv_tcp_connect(&oc->connect, oc->tcp, a->ai_addr, connect_cb);
        if (rc == 0) return 0;
        close_tcp(oc);
    }
    return rc;
}

static void resolve_cb(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    outconn_t *oc = req->data;
    int rc = status;
    oc->addrs = oc->next_addr = res;
    if (!oc->closed && !oc->failed && rc == 0) rc = try_connect(oc);
    if (rc < 0 && !oc->closed && !oc->failed) {
        oc->failed = 1;
        uv_timer_stop(&oc->timer);
        if (oc->ops && oc->ops->connected) oc->ops->connected(oc->ud, rc);
    }
    unref(oc);
}

outconn_t *outconn_open(const char *host, int port, const outconn_ops_t *ops, void *ud)
{
    outconn_t *oc = xcalloc(1, sizeof(*oc));
    oc->ops = ops;
    oc->ud = ud;
    oc->port = port;
    oc->refs = 2; /* the resolver's callback, the timer's close */
    nopen++;
    uv_timer_init(srv.loop, &oc->timer);
    oc->timer.data = oc;
    char service[16];
    snprintf(service, sizeof(service), "%d", port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    oc->resolve.data = oc;
    int rc = uv_getaddrinfo(srv.loop, &oc->resolve, resolve_cb, host, service, &hints);
    if (rc < 0) {
        /* report from the loop, as every other outcome */
        oc->refs--;
        oc->early_err = rc;
        uv_timer_start(&oc->timer, on_timer, 0, 0);
    }
    return oc;
}

void outconn_set_owner(outconn_t *oc, const outconn_ops_t *ops, void *ud)
{
    oc->ops = ops;
    oc->ud = ud;
}

int outconn_ok(const outconn_t *oc)
{
    return oc->ok && !oc->failed && !oc->closed;
}

void outconn_set_timeout(outconn_t *oc, long long ms)
{
    oc->timeout_ms = ms;
    arm(oc);
}

static void write_cb(uv_write_t *req, int status)
{
    wreq_t *w = (wreq_t *)req;
    outconn_t *oc = w->oc;
    oc->pending -= w->len;
    xfree(w->p);
    xfree(w);
    if (oc->closed) {
        unref(oc);
        return;
    }
    unref(oc);
    if (status < 0) {
        fail(oc, status);
        return;
    }
    arm(oc);
    if (oc->ops && oc->ops->written) oc->ops->written(oc->ud);
}

void outconn_write_take(outconn_t *oc, void *p, size_t len)
{
    if (!outconn_ok(oc) || len == 0) {
        xfree(p);
        return;
    }
    wreq_t *w = xmalloc(sizeof(*w));
    w->oc = oc;
    w->len = len;
    w->p = p;
    uv_buf_t b = uv_buf_init(p, (unsigned)len);
    int rc = uv_write(&w->req, (uv_stream_t *)oc->tcp, &b, 1, write_cb);
    if (rc < 0) {
        xfree(p);
        xfree(w);
        fail(oc, rc);
        return;
    }
    oc->refs++;
    oc->pending += len;
}

void outconn_write(outconn_t *oc, const void *p, size_t len)
{
    if (!outconn_ok(oc) || len == 0) return;
    outconn_write_take(oc, xmemdup(p, len), len);
}

size_t outconn_pending(const outconn_t *oc)
{
    return oc->pending;
}

void outconn_close(outconn_t *oc)
{
    if (!oc) return;
    oc->closed = 1;
    oc->ops = NULL;
    uv_timer_stop(&oc->timer);
    uv_close((uv_handle_t *)&oc->timer, on_close);
    if (oc->tcp)
        close_tcp(oc);
    else
        uv_cancel((uv_req_t *)&oc->resolve); /* its callback still runs (UV_ECANCELED) */
}

int outconn_count(void)
{
    return nopen;
}
