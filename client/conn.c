/* conn.c - libcte's connection: request framing, the output queue, the pending-request ring,
 * the I/O driver, synchronous and asynchronous calls, the handshake, and the status table.
 *
 * Output: requests are framed into obuf; an argument of CTE_COPY_MAX bytes or more is not
 * copied but referenced by its own segment, so one sendmsg carries header and payload without
 * a copy. Segments are (ext pointer | obuf offset, length), turned into an iovec when sending;
 * obuf is reset once everything queued has left. Input: bytes read go straight into the
 * incremental parser; each complete reply pops the oldest pending request (replies come in
 * request order) and completes it: a synchronous one stores the reply, an asynchronous one
 * runs its callback. A failure of the socket or the stream breaks the connection: every
 * pending request completes with that status and later calls return it. Driving is a step:
 * send what the socket takes, wait (readable, or writable too while output is queued), read.
 * One thread at a time (see cte/cte.h). */
#include "alloc.h"
#include "conn_int.h"
#include "reply.h"
#include "transport.h"
#include "uri.h"

#include "common/shm_layout.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_CHUNK (64 * 1024)
#define IOV_BATCH 64
#define DIRECT_MIN (16 * 1024) /* a payload at least this big is read into its sink */

typedef struct pending {
    cte_done_fn *fn;
    void *ud;
    int sync;
    char *sink; /* a bulk reply's bytes go here (cte_get), or NULL */
    size_t sink_cap;
    uint64_t area_mark; /* shm: the request data area up to here is free once this is answered */
    int pinned;         /* it sends a cte_put_buffer buffer, which starts at pin */
    uint64_t pin;
} pending_t;

/* shm: at most this many arguments of one request go through the request data area */
#define AREA_ARGS 8

typedef struct area_ref {
    int arg;
    uint64_t off;
} area_ref_t;

typedef struct seg {
    const char *ext; /* NULL: bytes at obuf + off */
    size_t off, len;
} seg_t;

struct cte_conn {
    cte_transport_t t;
    cte_parser_t parser;
    int broken; /* sticky failure; 0 while usable */
    int proto;
    unsigned window;
    int timeout_ms;
    size_t max_bulk;
    char *obuf;
    size_t olen, ocap;
    seg_t *segs;
    size_t nseg, segcap, seg_head, seg_sent, unsent;
    pending_t *pend;
    size_t pcap, phead, pcount;
    char *ibuf;
    cte_reply_t *last;
    cte_reply_t *sync_reply;
    int sync_done, sync_status;
    int in_cb;
    cte_push_fn *push_fn;
    void *push_ud;
    char *resv; /* shm: the buffer cte_put_buffer gave out, not yet sent */
    size_t resv_len;
    uint64_t resv_off, resv_at; /* its offset in the area, its allocation index */
    unsigned npins;             /* pending requests that send such a buffer */
    uint64_t area_done;         /* reply data area: the end of the replies done with */
    int holding;                /* a synchronous reply (sync_reply, last) still borrows from */
    uint64_t hold_first;        /* index hold_first on: nothing from there may be released */
    char errmsg[512];
};

const char *cte_strerror(int status)
{
    switch (status) {
    case 0:
        return "success";
#define CTE_X_CASE(name, value, msg)                                                               \
    case value:                                                                                    \
        return msg;
        CTE_ERRORS(CTE_X_CASE)
#undef CTE_X_CASE
    default:
        break;
    }
    if (status < 0 && status > -1000) { /* strerror_r (XSI): strerror is not thread-safe */
        static _Thread_local char buf[128];
        if (strerror_r(-status, buf, sizeof buf) != 0)
            snprintf(buf, sizeof buf, "errno %d", -status);
        return buf;
    }
    return "unknown status";
}

int cte__set_error(cte_conn_t *c, int status, const char *msg)
{
    snprintf(c->errmsg, sizeof c->errmsg, "%s", msg ? msg : cte_strerror(status));
    return status;
}

int cte__broken(const cte_conn_t *c)
{
    return c->broken;
}

int cte__protocol(const cte_conn_t *c)
{
    return c->proto;
}

cte_conn_t *cte_conn_new(void)
{
    cte_conn_t *c = cte__calloc(1, sizeof *c);
    if (!c) return NULL;
    c->t.fd = -1;
    c->proto = 2;
    c->window = 256;
    c->max_bulk = 512u << 20;
    c->broken = CTE_E_CLOSED;
    cte__parser_init(&c->parser, NULL);
    return c;
}

/* ---- completing requests ---- */

/* shm: gives the server back the reply data area of every reply done with, but never past
 * the first byte of a synchronous reply the caller still reads (later replies may be done
 * first: a callback's, a push). */
static void area_publish(cte_conn_t *c)
{
    uint64_t v = c->area_done;
    if (c->holding && c->hold_first < v) v = c->hold_first;
    if (c->t.ops && c->t.ops->rep_release) c->t.ops->rep_release(&c->t, v);
}

/* r is done with: its area bytes count as released. */
static void area_done(cte_conn_t *c, const cte_reply_t *r)
{
    if (!r || !r->area_refs) return;
    if (r->area_end > c->area_done) c->area_done = r->area_end;
    area_publish(c);
}

/* Frees a reply; on shm, the reply data area it borrowed from goes back to the server. */
static void reply_done(cte_conn_t *c, cte_reply_t *r)
{
    area_done(c, r);
    cte_reply_free(r);
}

/* The reply c kept for the last synchronous call (and any view into it) is done. */
static void drop_last(cte_conn_t *c)
{
    if (!c->last) return; /* (a sync_reply not yet handed out keeps its hold) */
    c->holding = 0;
    reply_done(c, c->last);
    c->last = NULL;
}

static pending_t pend_pop(cte_conn_t *c)
{
    pending_t p = c->pend[c->phead];
    c->phead = (c->phead + 1) % c->pcap;
    c->pcount--;
    if (p.pinned) c->npins--;
    if (p.area_mark && c->t.ops && c->t.ops->req_free) { /* the server is done with its bytes */
        uint64_t upto = p.area_mark; /* but not with a put buffer given out or still sent */
        if (c->resv && c->resv_at < upto) upto = c->resv_at;
        for (size_t i = 0, n = c->npins; n && i < c->pcount; i++) {
            const pending_t *q = &c->pend[(c->phead + i) % c->pcap];
            if (!q->pinned) continue;
            if (q->pin < upto) upto = q->pin;
            n--;
        }
        c->t.ops->req_free(&c->t, upto);
    }
    return p;
}

/* Gives the replies c keeps borrowed strings of their own, before the area goes away; one
 * that cannot get them is dropped (a synchronous call then fails with CTE_E_NOMEM). */
static int unborrow(cte_reply_t *r);
static void own_held(cte_conn_t *c)
{
    if (c->last && c->last->area_refs && unborrow(c->last) != 0) {
        cte_reply_free(c->last);
        c->last = NULL;
    }
    if (c->sync_reply && c->sync_reply->area_refs && unborrow(c->sync_reply) != 0) {
        cte_reply_free(c->sync_reply);
        c->sync_reply = NULL;
        c->sync_status = CTE_E_NOMEM;
    }
    c->holding = 0;
}

/* The transport goes once no callback runs (one may still read a reply borrowed from it). */
static void close_transport(cte_conn_t *c)
{
    if (c->in_cb || !c->t.ops) return;
    own_held(c);
    c->t.ops->close(&c->t);
    c->t.ops = NULL;
    c->resv = NULL;
    c->npins = 0;
    c->area_done = 0;
}

static void complete(cte_conn_t *c, pending_t p, int status, cte_reply_t *r)
{
    if (p.sync) {
        if (r && r->area_refs) { /* the caller reads it after this: hold its area bytes */
            c->holding = 1;
            c->hold_first = r->area_first;
        }
        c->sync_reply = r;
        c->sync_status = status;
        c->sync_done = 1;
        return;
    }
    if (p.fn) {
        c->in_cb++;
        p.fn(c, status, r, p.ud);
        c->in_cb--;
    }
    reply_done(c, r);
    if (c->broken) close_transport(c);
}

/* Breaks the connection with status: closes the socket, completes everything pending. */
static int conn_fail(cte_conn_t *c, int status, const char *msg)
{
    if (c->broken) return c->broken;
    c->broken = status;
    cte__set_error(c, status, msg);
    close_transport(c);
    c->olen = c->nseg = c->seg_head = c->seg_sent = c->unsent = 0;
    while (c->pcount) complete(c, pend_pop(c), status, NULL);
    return status;
}

/* A whole reply arrived: a push goes aside, anything else completes the oldest request. */
static int deliver(cte_conn_t *c, cte_reply_t *r)
{
    if (r->kind == CTE_REPLY_PUSH) {
        if (c->push_fn) {
            c->in_cb++;
            c->push_fn(c, r, c->push_ud);
            c->in_cb--;
        }
        reply_done(c, r);
        if (c->broken) close_transport(c);
        return 0;
    }
    if (c->pcount == 0) {
        reply_done(c, r);
        return conn_fail(c, CTE_E_PROTOCOL, "a reply arrived for no request");
    }
    complete(c, pend_pop(c), r->kind == CTE_REPLY_ERROR ? CTE_E_SERVER : 0, r);
    return 1;
}

/* ---- output ---- */

static int obuf_reserve(cte_conn_t *c, size_t n)
{
    if (c->olen + n <= c->ocap) return 0;
    size_t cap = c->ocap ? c->ocap : 4096;
    while (cap < c->olen + n) cap *= 2;
    char *b = cte__realloc(c->obuf, cap);
    if (!b) return CTE_E_NOMEM;
    c->obuf = b;
    c->ocap = cap;
    return 0;
}

static int seg_add(cte_conn_t *c, const char *ext, size_t off, size_t len)
{
    seg_t *last = c->nseg > c->seg_head ? &c->segs[c->nseg - 1] : NULL;
    c->unsent += len;
    if (!ext && last && !last->ext && last->off + last->len == off) {
        last->len += len;
        return 0;
    }
    if (c->nseg == c->segcap) {
        size_t cap = c->segcap ? c->segcap * 2 : 64;
        seg_t *s = cte__realloc(c->segs, cap * sizeof *s);
        if (!s) {
            c->unsent -= len;
            return CTE_E_NOMEM;
        }
        c->segs = s;
        c->segcap = cap;
    }
    c->segs[c->nseg++] = (seg_t){ext, off, len};
    return 0;
}

/* Appends bytes to obuf as part of the queued output. */
static int out_copy(cte_conn_t *c, const void *p, size_t n)
{
    if (obuf_reserve(c, n) != 0) return CTE_E_NOMEM;
    memcpy(c->obuf + c->olen, p, n);
    c->olen += n;
    return seg_add(c, NULL, c->olen - n, n);
}

/* "<type><n>\r\n" without snprintf (this runs for every argument of every request). */
static int out_fmt(cte_conn_t *c, char type, size_t n)
{
    char tmp[32], *e = tmp + sizeof tmp, *p = e;
    *--p = '\n';
    *--p = '\r';
    do *--p = (char)('0' + n % 10);
    while (n /= 10);
    *--p = type;
    return out_copy(c, p, (size_t)(e - p));
}

/* An argument the request data area holds: "&<n>,<offset>\r\n" (docs/shm.md). */
static int out_ref(cte_conn_t *c, size_t n, uint64_t off)
{
    char tmp[64], *e = tmp + sizeof tmp, *p = e;
    *--p = '\n';
    *--p = '\r';
    do *--p = (char)('0' + off % 10);
    while (off /= 10);
    *--p = ',';
    do *--p = (char)('0' + n % 10);
    while (n /= 10);
    *--p = '&';
    return out_copy(c, p, (size_t)(e - p));
}

static int out_arg(cte_conn_t *c, const char *a, size_t n)
{
    if (out_fmt(c, '$', n) != 0) return CTE_E_NOMEM;
    if (n >= CTE_COPY_MAX) {
        if (seg_add(c, a, 0, n) != 0) return CTE_E_NOMEM;
    } else if (n && out_copy(c, a, n) != 0) {
        return CTE_E_NOMEM;
    }
    return out_copy(c, "\r\n", 2);
}

/* Sends what the socket takes now; 0 (also when it would block) or the failure. */
static int send_some(cte_conn_t *c)
{
    while (c->unsent) {
        struct iovec iov[IOV_BATCH];
        int n = 0;
        for (size_t i = c->seg_head; i < c->nseg && n < IOV_BATCH; i++, n++) {
            const seg_t *s = &c->segs[i];
            const char *base = s->ext ? s->ext : c->obuf + s->off;
            size_t skip = i == c->seg_head ? c->seg_sent : 0;
            iov[n] = (struct iovec){(void *)(base + skip), s->len - skip};
        }
        long w = c->t.ops->send(&c->t, iov, n);
        if (w == -EAGAIN) return 0;
        if (w < 0) return conn_fail(c, (int)w, NULL);
        c->unsent -= (size_t)w;
        while (w > 0) {
            size_t left = c->segs[c->seg_head].len - c->seg_sent;
            size_t take = (size_t)w < left ? (size_t)w : left;
            c->seg_sent += take;
            w -= (long)take;
            if (c->seg_sent == c->segs[c->seg_head].len) {
                c->seg_head++;
                c->seg_sent = 0;
            }
        }
    }
    c->olen = c->nseg = c->seg_head = c->seg_sent = 0;
    return 0;
}

/* ---- input ---- */

/* Reads what has arrived (with block, waits for the first bytes) and delivers complete
 * replies; the number delivered or a failure. The payload of a reply that cte_get sinks into
 * the caller's buffer is read there directly, past the read buffer. */
static int read_some(cte_conn_t *c, int block)
{
    int done = 0;
    for (;;) {
        char *dst;
        size_t room = cte__parser_sink_room(&c->parser, &dst);
        int direct = room >= DIRECT_MIN; /* a big payload: from the kernel to its buffer */
        long n = c->t.ops->recv(&c->t, direct ? dst : c->ibuf, direct ? room : READ_CHUNK, block);
        block = 0;
        if (n == -EAGAIN) return done;
        if (n < 0) return conn_fail(c, (int)n, NULL);
        if (n == 0) return conn_fail(c, CTE_E_CLOSED, NULL);
        if (direct) {
            cte__parser_sunk(&c->parser, (size_t)n);
            if ((size_t)n < room) return done; /* the socket is drained for now */
            continue;
        }
        size_t off = 0;
        while (off < (size_t)n) {
            size_t used;
            cte_reply_t *r;
            const pending_t *head = c->pcount ? &c->pend[c->phead] : NULL;
            c->parser.sink = head ? head->sink : NULL; /* the same until its reply is done */
            c->parser.sink_cap = head ? head->sink_cap : 0;
            int rc = cte__parser_feed(&c->parser, c->ibuf + off, (size_t)n - off, &used, &r);
            if (rc < 0) return conn_fail(c, rc, NULL);
            if (rc == 0) break;
            r->area_refs = c->parser.reply_refs; /* its area bytes: released once done */
            r->area_first = c->parser.reply_first;
            r->area_end = c->parser.area_end;
            c->parser.reply_refs = 0;
            off += used;
            if ((rc = deliver(c, r)) < 0) return rc;
            done += rc;
            if (c->broken) return c->broken; /* a callback's request failed to send */
        }
        if (n < READ_CHUNK) return done;
    }
}

/* One step of I/O waiting up to timeout_ms; the number of requests completed, or a failure.
 * *idle (may be NULL) tells whether the wait timed out with nothing to do. */
static int step(cte_conn_t *c, int timeout_ms, int *idle)
{
    int rc;
    if (idle) *idle = 0;
    if (c->broken) return c->broken;
    if (c->unsent && (rc = send_some(c)) < 0) return rc;
    if (!c->unsent && timeout_ms < 0) return read_some(c, 1); /* one call, no poll */
    int mask = c->t.ops->wait(&c->t, c->unsent > 0, timeout_ms);
    if (mask < 0) return conn_fail(c, mask, NULL);
    if (mask == 0 && idle) *idle = 1;
    if (mask & CTE_T_WRITABLE && c->unsent && (rc = send_some(c)) < 0) return rc;
    return mask & CTE_T_READABLE ? read_some(c, 0) : 0;
}

/* Steps until *flag is set or nothing is pending/unsent as asked; honours the timeout. */
static int drive_until(cte_conn_t *c, const int *flag, int need_flush_only)
{
    while (flag ? !*flag : (need_flush_only ? c->unsent > 0 : c->pcount > 0)) {
        /* a flush is done once the last byte is out: step would go on to wait for a reply */
        if (need_flush_only && (send_some(c) < 0 || !c->unsent)) return c->broken;
        int idle, rc = step(c, c->timeout_ms > 0 ? c->timeout_ms : -1, &idle);
        if (rc < 0) return rc;
        if (idle) return conn_fail(c, CTE_E_TIMEOUT, NULL); /* the server sent nothing */
    }
    return 0;
}

/* ---- queueing requests ---- */

static int pend_push(cte_conn_t *c, pending_t p)
{
    if (c->pcount == c->pcap) {
        size_t cap = c->pcap ? c->pcap * 2 : 64;
        pending_t *n = cte__malloc(cap * sizeof *n);
        if (!n) return CTE_E_NOMEM;
        for (size_t i = 0; i < c->pcount; i++) n[i] = c->pend[(c->phead + i) % c->pcap];
        free(c->pend);
        c->pend = n;
        c->pcap = cap;
        c->phead = 0;
    }
    c->pend[(c->phead + c->pcount) % c->pcap] = p;
    c->pcount++;
    return 0;
}

static int frame(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                 const area_ref_t *refs, int nref)
{
    if (out_fmt(c, '*', (size_t)argc) != 0) return CTE_E_NOMEM;
    for (int i = 0, r = 0; i < argc; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        int rc =
            r < nref && refs[r].arg == i ? out_ref(c, n, refs[r++].off) : out_arg(c, argv[i], n);
        if (rc != 0) return CTE_E_NOMEM;
    }
    return 0;
}

/* shm: moves the request's large arguments into the request data area (one copy, or none for
 * the cte_put_buffer buffer). A synchronous request first drives I/O while earlier requests
 * hold the room it needs (it waits for them anyway); an asynchronous one never waits (a
 * blocked command ahead of it could hold the room for ever). Arguments that do not fit go
 * inline. *mark gets the allocation point before this request's allocations (to undo them),
 * *pinned and *pin whether it sends the put buffer and where that starts. Returns how many
 * refs, or a failure. */
static int area_place(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                      int may_wait, area_ref_t *refs, uint64_t *mark, int *pinned, uint64_t *pin)
{
    const cte_transport_ops_t *ops = c->t.ops;
    size_t need = 0, most = 0;
    int nref = 0;
    *pinned = 0;
    if (!ops || !ops->req_alloc) return 0;
    for (int i = 1; i < argc; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        if (n < SHM_AREA_MIN || argv[i] == c->resv) continue;
        need += n;
        if (n > most) most = n;
    }
    /* wait for room for all of them, even if one has to skip the area's end (a probe) */
    size_t probe = need + most < c->t.req_area_size ? need + most : c->t.req_area_size;
    while (need && may_wait && c->pcount && !c->in_cb) {
        uint64_t m = ops->req_mark(&c->t), off;
        if (ops->req_alloc(&c->t, probe, &off)) {
            ops->req_rewind(&c->t, m);
            break;
        }
        int idle, rc = step(c, c->timeout_ms > 0 ? c->timeout_ms : -1, &idle);
        if (rc < 0) return rc;
        if (idle) return conn_fail(c, CTE_E_TIMEOUT, NULL);
        if (!c->t.ops) return c->broken ? c->broken : CTE_E_CLOSED;
    }
    *mark = ops->req_mark(&c->t);
    for (int i = 1; i < argc && nref < AREA_ARGS; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        if (n < SHM_AREA_MIN) continue;
        if (argv[i] == c->resv && n <= c->resv_len) { /* written there by the caller */
            refs[nref++] = (area_ref_t){i, c->resv_off};
            *pinned = 1;
            *pin = c->resv_at;
            c->resv = NULL;
            continue;
        }
        uint64_t off;
        char *dst = ops->req_alloc(&c->t, n, &off);
        if (!dst) continue;
        memcpy(dst, argv[i], n);
        refs[nref++] = (area_ref_t){i, off};
    }
    return nref;
}

/* Frames a request and records who waits for it; on failure nothing is queued. */
static int enqueue(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                   pending_t p)
{
    if (c->broken) return c->broken;
    if (argc < 1 || !argv) return CTE_E_INVAL;
    for (int i = 0; i < argc; i++)
        if (!argv[i]) return CTE_E_INVAL;
    drop_last(c); /* a view from the last call ends with this one */
    while (c->pcount >= c->window && !c->in_cb) {
        int idle, rc = step(c, c->timeout_ms > 0 ? c->timeout_ms : -1, &idle);
        if (rc < 0) return rc;
        if (idle) return conn_fail(c, CTE_E_TIMEOUT, NULL);
    }
    area_ref_t refs[AREA_ARGS];
    uint64_t mark = 0;
    char *resv = c->resv; /* to give back on a rollback */
    int nref = area_place(c, argc, argv, lens, p.sync, refs, &mark, &p.pinned, &p.pin);
    if (nref < 0) return nref;
    size_t olen = c->olen, nseg = c->nseg, unsent = c->unsent;
    seg_t last = nseg ? c->segs[nseg - 1] : (seg_t){0};
    if (c->t.ops && c->t.ops->req_mark) p.area_mark = c->t.ops->req_mark(&c->t);
    if (frame(c, argc, argv, lens, refs, nref) != 0 || pend_push(c, p) != 0) {
        c->olen = olen; /* roll back a half-framed request */
        c->nseg = nseg;
        c->unsent = unsent;
        if (nseg) c->segs[nseg - 1] = last;
        if (nref) c->t.ops->req_rewind(&c->t, mark);
        c->resv = resv;
        return cte__set_error(c, CTE_E_NOMEM, NULL);
    }
    if (p.pinned) c->npins++;
    if (c->unsent >= READ_CHUNK) send_some(c); /* a failure completes the request with it */
    return 0;
}

/* a[0..n) is the upper-case name upper, in any case. */
static int name_is(const char *a, size_t n, const char *upper)
{
    size_t j = 0;
    if (strlen(upper) != n) return 0;
    while (j < n && (a[j] & ~0x20) == upper[j]) j++;
    return j == n;
}

/* Commands after which replies stop matching requests (pub/sub, MONITOR): refused, since a
 * synchronous call on them would wait for ever or the stream would go out of step. */
static int refused(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens)
{
    static const char *const names[] = {"SUBSCRIBE",   "PSUBSCRIBE",   "SSUBSCRIBE",
                                        "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE",
                                        "MONITOR",     "SYNC",         "PSYNC"};
    if (argc < 1 || !argv || !argv[0]) return 0;
    size_t n = lens ? lens[0] : strlen(argv[0]);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (name_is(argv[0], n, names[i]))
            return cte__set_error(c, CTE_E_INVAL,
                                  "pub/sub, MONITOR and replication commands "
                                  "are not supported by libcte yet");
    }
    return 0;
}

int cte_command_async(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                      cte_done_fn *fn, void *ud)
{
    int rc = refused(c, argc, argv, lens);
    return rc ? rc : enqueue(c, argc, argv, lens, (pending_t){fn, ud, 0, NULL, 0});
}

int cte__roundtrip(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                   const cte_reply_t **reply)
{
    return cte__roundtrip_into(c, argc, argv, lens, NULL, 0, reply);
}

int cte__roundtrip_into(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                        void *sink, size_t cap, const cte_reply_t **reply)
{
    *reply = NULL;
    if (c->in_cb) return CTE_E_BUSY;
    drop_last(c);
    c->errmsg[0] = '\0';
    c->sync_done = 0;
    c->sync_status = 0;
    c->sync_reply = NULL;
    int rc = enqueue(c, argc, argv, lens, (pending_t){NULL, NULL, 1, sink, cap});
    if (rc) return rc;
    drive_until(c, &c->sync_done, 0);
    if (!c->sync_done) return c->broken;       /* a failure completes every request: defensive */
    if (!c->sync_reply) return c->sync_status; /* the connection failed */
    c->last = c->sync_reply;
    c->sync_reply = NULL;
    *reply = c->last;
    if (c->last->kind == CTE_REPLY_ERROR) {
        cte__set_error(c, CTE_E_SERVER, c->last->str);
        return CTE_E_SERVER;
    }
    return 0;
}

/* Gives r's strings borrowed from a shm data area memory of their own: 0 or CTE_E_NOMEM. */
static int unborrow(cte_reply_t *r)
{
    for (size_t i = 0; r->elem && i < r->len; i++)
        if (unborrow(r->elem[i]) != 0) return CTE_E_NOMEM;
    if (!r->borrowed) return 0;
    char *own = cte__malloc(r->len + 1);
    if (!own) return CTE_E_NOMEM;
    memcpy(own, r->str, r->len + 1);
    r->str = own;
    r->borrowed = 0;
    return 0;
}

cte_reply_t *cte__take_last(cte_conn_t *c)
{
    cte_reply_t *r = c->last;
    if (r && r->area_refs && unborrow(r) != 0) {
        cte__set_error(c, CTE_E_NOMEM, NULL);
        return NULL; /* c keeps it until the next call */
    }
    c->last = NULL;
    c->holding = 0;
    area_done(c, r); /* its own copies now: the area bytes go back */
    if (r) r->area_refs = 0;
    return r;
}

/* HELLO and RESET sent through the generic call change the protocol: follow them, so that
 * cte_conn_protocol stays true. */
static void track_protocol(cte_conn_t *c, const char *cmd, size_t n, const cte_reply_t *r)
{
    if (name_is(cmd, n, "RESET") && r->kind == CTE_REPLY_STRING) c->proto = 2;
    if (!name_is(cmd, n, "HELLO") || (r->kind != CTE_REPLY_MAP && r->kind != CTE_REPLY_ARRAY))
        return;
    for (size_t i = 0; i + 1 < r->len; i += 2) {
        const cte_reply_t *k = r->elem[i], *v = r->elem[i + 1];
        if (k->str && !strcmp(k->str, "proto") && v->kind == CTE_REPLY_INTEGER &&
            (v->ival == 2 || v->ival == 3))
            c->proto = (int)v->ival;
    }
}

int cte_command(cte_conn_t *c, cte_reply_t **reply, int argc, const char *const *argv,
                const size_t *lens)
{
    const cte_reply_t *r = NULL;
    int rc = refused(c, argc, argv, lens);
    if (!rc) rc = cte__roundtrip(c, argc, argv, lens, &r);
    if (rc == 0) track_protocol(c, argv[0], lens ? lens[0] : strlen(argv[0]), r);
    *reply = r ? cte__take_last(c) : NULL;
    return r && !*reply ? CTE_E_NOMEM : rc;
}

int cte__call_args(const char *arg0, va_list ap, const char **argv)
{
    int argc = 0;
    for (const char *a = arg0; a; a = va_arg(ap, const char *)) {
        if (argc == CTE_CALL_MAX_ARGS) return -1;
        argv[argc++] = a;
    }
    return argc;
}

int cte_call(cte_conn_t *c, cte_reply_t **reply, const char *arg0, ...)
{
    const char *argv[CTE_CALL_MAX_ARGS];
    va_list ap;

    *reply = NULL;
    va_start(ap, arg0);
    int argc = cte__call_args(arg0, ap, argv);
    va_end(ap);
    if (argc < 0) return cte__set_error(c, CTE_E_INVAL, "cte_call takes at most 64 arguments");
    return cte_command(c, reply, argc, argv, NULL);
}

int cte_poll(cte_conn_t *c, int timeout_ms)
{
    int rc, done;
    if (c->in_cb) return CTE_E_BUSY; /* the read buffer is in use further up */
    drop_last(c);
    if (c->broken) return c->broken;
    if (!c->pcount && !c->unsent) return 0; /* nothing could complete: never block */
    if (c->unsent && (rc = send_some(c)) < 0) return rc;
    if ((done = read_some(c, 0)) != 0 || timeout_ms == 0) return done;
    return step(c, timeout_ms, NULL);
}

int cte_flush(cte_conn_t *c)
{
    if (c->in_cb) return CTE_E_BUSY;
    drop_last(c);
    return drive_until(c, NULL, 1);
}

int cte_wait_all(cte_conn_t *c)
{
    if (c->in_cb) return CTE_E_BUSY;
    drop_last(c);
    return drive_until(c, NULL, 0);
}

void *cte_put_buffer(cte_conn_t *c, size_t len)
{
    const cte_transport_ops_t *ops = c->t.ops;
    if (c->broken || !ops || !ops->req_alloc || len < SHM_AREA_MIN || len > c->t.req_area_size)
        return NULL;
    drop_last(c);
    c->resv = NULL; /* a buffer given out before and not used is dropped */
    for (;;) {
        uint64_t off;
        char *p = ops->req_alloc(&c->t, len, &off);
        if (p) {
            c->resv = p;
            c->resv_len = len;
            c->resv_off = off;
            c->resv_at = ops->req_mark(&c->t) - len;
            return p;
        }
        if (!c->pcount || c->in_cb) return NULL;
        int idle, rc = step(c, c->timeout_ms > 0 ? c->timeout_ms : -1, &idle);
        if (rc < 0) return NULL;
        if (idle) {
            conn_fail(c, CTE_E_TIMEOUT, NULL);
            return NULL;
        }
    }
}

unsigned cte_pending(const cte_conn_t *c)
{
    return (unsigned)c->pcount;
}

/* ---- settings ---- */

const char *cte_conn_errmsg(const cte_conn_t *c)
{
    return c->errmsg;
}

int cte_conn_protocol(const cte_conn_t *c)
{
    return c->proto;
}

int cte_conn_set_window(cte_conn_t *c, unsigned n)
{
    if (n < 1) return CTE_E_INVAL;
    c->window = n;
    return 0;
}

void cte_conn_set_timeout(cte_conn_t *c, int ms)
{
    c->timeout_ms = ms > 0 ? ms : 0;
}

void cte_conn_set_max_bulk(cte_conn_t *c, size_t n)
{
    c->max_bulk = n;
    c->parser.lim.max_bulk = n;
}

void cte_conn_set_push_cb(cte_conn_t *c, cte_push_fn *fn, void *ud)
{
    c->push_fn = fn;
    c->push_ud = ud;
}

/* ---- open and close ---- */

static void conn_close(cte_conn_t *c)
{
    drop_last(c);
    conn_fail(c, CTE_E_CLOSED, NULL);
    close_transport(c);
    cte__parser_deinit(&c->parser);
}

/* AUTH, HELLO 3, SELECT as the address asks. */
static int handshake(cte_conn_t *c, const cte_addr_t *a, unsigned flags)
{
    const cte_reply_t *r;
    char db[16];
    int rc;

    if (a->has_pass) {
        const char *argv[] = {"AUTH", a->user[0] ? a->user : a->pass, a->pass};
        if ((rc = cte__roundtrip(c, a->user[0] ? 3 : 2, argv, NULL, &r)) != 0) return rc;
    }
    if (a->resp == 3 || (flags & CTE_RESP3)) {
        const char *argv[] = {"HELLO", "3"};
        if ((rc = cte__roundtrip(c, 2, argv, NULL, &r)) != 0) return rc;
        c->proto = 3;
    }
    if (a->db) {
        snprintf(db, sizeof db, "%d", a->db);
        const char *argv[] = {"SELECT", db};
        if ((rc = cte__roundtrip(c, 2, argv, NULL, &r)) != 0) return rc;
    }
    drop_last(c);
    return 0;
}

int cte_conn_open(cte_conn_t *c, const char *addr, unsigned flags)
{
    cte_addr_t a;
    char why[256];
    int rc;

    if (c->in_cb) return CTE_E_BUSY;
    if ((rc = cte__addr_parse(addr, &a, why, sizeof why)) != 0) {
        conn_close(c);
        return cte__set_error(c, rc, why);
    }
    return cte__conn_open_addr(c, &a, flags);
}

int cte__conn_open_addr(cte_conn_t *c, const cte_addr_t *addr, unsigned flags)
{
    const cte_addr_t *a = addr;
    char why[256];
    int rc;

    if (c->in_cb) return CTE_E_BUSY;
    conn_close(c);
    c->errmsg[0] = '\0';
    c->proto = 2;
    cte__parser_init(&c->parser, NULL);
    c->parser.lim.max_bulk = c->max_bulk;
    if (!c->ibuf && !(c->ibuf = cte__malloc(READ_CHUNK)))
        return cte__set_error(c, CTE_E_NOMEM, NULL);
    const cte_transport_ops_t *ops = cte__transport_ops(a->kind);
    c->t.fd = -1;
    why[0] = '\0';
    if ((rc = ops->open(&c->t, a, c->timeout_ms, why, sizeof why)) != 0)
        return cte__set_error(c, rc, why);
    c->t.ops = ops;
    c->broken = 0;
    c->parser.area = c->t.rep_area; /* shm: bulks the server left in the reply data area */
    c->parser.area_size = c->t.rep_area_size;
    if ((rc = handshake(c, a, flags)) != 0) {
        char msg[sizeof c->errmsg];
        memcpy(msg, c->errmsg, sizeof msg);
        conn_close(c);
        memcpy(c->errmsg, msg, sizeof msg);
    }
    return rc;
}

int cte_connect(const char *addr, unsigned flags, cte_conn_t **out)
{
    cte_conn_t *c = cte_conn_new();
    *out = NULL;
    if (!c) return CTE_E_NOMEM;
    int rc = cte_conn_open(c, addr, flags);
    if (rc) {
        cte_conn_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void cte_conn_free(cte_conn_t *c)
{
    if (!c) return;
    conn_close(c);
    free(c->obuf);
    free(c->segs);
    free(c->pend);
    free(c->ibuf);
    free(c);
}
