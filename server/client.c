/* client.c - client state, input processing and the list of clients (see client.h).
 *
 * Input: the transport appends bytes to qbuf; client_process_input parses every complete
 * request, runs it, and drops the consumed prefix once (not per request). Output: replies are
 * appended to out; the client is linked once into srv.pending_write and the transport sends
 * it at the end of the loop turn. Runs on the loop thread. */
#include "server/client.h"

#include "common/alloc.h"
#include "common/util.h"
#include "server/acl.h"
#include "server/block.h"
#include "server/command.h"
#include "server/introspect.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/tracking.h"

#include <stdio.h>
#include <string.h>

/* Pending output past which the replies so far are sent before the next command of a pipeline
 * runs (the client starts reading sooner). Large enough that several 64 KiB replies leave in
 * one write: one write per 64 KiB reply cost a wake-up of the client each, and 64 KiB TGETs
 * (4 connections, 8 deep) were 0.86x Redis's GET. A 1 MiB reply still leaves at once. */
#define CLIENT_EARLY_FLUSH (256 * 1024)

client_t *client_new(const transport_ops_t *ops, void *conn, int fd)
{
    client_t *c = xcalloc(1, sizeof(*c));
    c->id = ++srv.next_client_id;
    c->resp = 2;
    c->db = &srv.db[0];
    c->dbid = 0;
    c->ops = ops;
    c->conn = conn;
    c->fd = fd;
    c->ctime_ms = c->last_cmd_ms = time_ms();
    buf_init(&c->qbuf);
    buf_init(&c->refcopy);
    buf_init(&c->out);
    c->rbuf = &c->out;
    resp_parser_init(&c->parser);
    c->parser.max_bulk = (size_t)srv.cfg.proto_max_bulk_len;
    acl_client_reset(c); /* the default user, authenticated if it needs no password */
    c->next = srv.clients;
    if (srv.clients) srv.clients->prev = c;
    srv.clients = c;
    srv.nclients++;
    return c;
}

static void unlink_pending(client_t *c)
{
    if (!(c->flags & CLIENT_PENDING_WRITE)) return;
    for (client_t **pp = &srv.pending_write; *pp; pp = &(*pp)->pw_next) {
        if (*pp == c) {
            *pp = c->pw_next;
            break;
        }
    }
    c->flags &= ~(uint32_t)CLIENT_PENDING_WRITE;
}

void client_unlist(client_t *c)
{
    if (c->flags & CLIENT_UNLISTED) return;
    if (c->prev) c->prev->next = c->next;
    else srv.clients = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
    srv.nclients--;
    c->flags |= CLIENT_UNLISTED;
}

void client_free(client_t *c)
{
    unlink_pending(c);
    multi_reset(c);
    pubsub_client_reset(c);
    block_client_reset(c);
    introspect_forget_monitor(c);
    tracking_client_free(c);
    client_unlist(c);
    client_reply_drop(c);
    buf_deinit(&c->qbuf);
    buf_deinit(&c->refcopy);
    buf_deinit(&c->out);
    resp_parser_deinit(&c->parser);
    xfree(c->name);
    xfree(c->lib_name);
    xfree(c->lib_ver);
    xfree(c);
}

void client_close(client_t *c)
{
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    c->flags |= CLIENT_CLOSE_ASAP;
    if (c->ops && c->ops->close) c->ops->close(c);
}

void client_want_write(client_t *c)
{
    if ((c->flags & CLIENT_PENDING_WRITE) || !c->ops) return;
    c->flags |= CLIENT_PENDING_WRITE;
    c->pw_next = srv.pending_write;
    srv.pending_write = c;
}

int client_select(client_t *c, int id)
{
    if (id < 0 || id >= srv.ndb) return -1;
    c->db = &srv.db[id];
    c->dbid = id;
    return 0;
}

static void protocol_error(client_t *c, const char *msg)
{
    char full[256];
    snprintf(full, sizeof(full), "ERR %s", msg);
    reply_error(c, full);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

int client_settle_refs(client_t *c)
{
    const char *lo = c->parser.area, *hi = lo + c->parser.area_size;
    /* the command name itself may be a reference: then nothing is kept */
    const command_t *cmd = c->argv[0].ptr >= lo && c->argv[0].ptr <= hi
                               ? NULL
                               : command_lookup(&c->argv[0]);
    int keep = -1;
    if (cmd && !cmd->subcommands && cmd->value_arg > 0 && !srv.cfg.appendonly &&
        !(c->flags & CLIENT_MULTI))
        keep = cmd->value_arg; /* the AOF would read it a second time: then copied too */
    unsigned long long bytes = 0, cap = (unsigned long long)c->parser.area_size;
    if (cap > (unsigned long long)srv.cfg.client_query_buffer_limit)
        cap = (unsigned long long)srv.cfg.client_query_buffer_limit;
    for (int i = 0; i < c->argc; i++) {
        if (c->argv[i].ptr < lo || c->argv[i].ptr > hi) continue;
        srv.stat.shm_data_in_bytes += c->argv[i].len;
        if (i != keep) bytes += c->argv[i].len + 1;
    }
    if (bytes > cap || c->multi_ref_bytes + bytes > cap) {
        if (c->flags & CLIENT_MULTI) multi_flag_error(c); /* EXEC aborts */
        protocol_error(c, "Protocol error: data area references exceed the data area's size or "
                          "client-query-buffer-limit");
        return -1;
    }
    if (c->flags & CLIENT_MULTI) c->multi_ref_bytes += bytes; /* queued copies stay */
    buf_clear(&c->refcopy);
    if (bytes && buf_try_reserve(&c->refcopy, (size_t)bytes) < 0) {
        reply_error(c, "OOM not enough memory to copy the request's data area arguments");
        return -1;
    }
    for (int i = 0; i < c->argc; i++) {
        resp_arg_t *a = &c->argv[i];
        if (i == keep || a->ptr < lo || a->ptr > hi) continue;
        char *dst = c->refcopy.data + c->refcopy.len;
        memcpy(dst, a->ptr, a->len);
        dst[a->len] = '\0';
        c->refcopy.len += a->len + 1;
        a->ptr = dst;
    }
    return 0;
}

int client_process_input(client_t *c)
{
    size_t pos = 0;
    int rc = 0;
    if (c->flags & CLIENT_IN_INPUT) return 0; /* woken from inside its own command: the outer
                                                 loop goes on by itself */
    c->flags |= CLIENT_IN_INPUT;
    if (c->qbuf.len > c->qbuf_peak) c->qbuf_peak = c->qbuf.len;
    while (pos < c->qbuf.len &&
           !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED))) {
        size_t used = 0;
        c->parser.unauthenticated = acl_auth_required(c); /* Redis's limits before AUTH */
        int r = resp_parse(&c->parser, c->qbuf.data + pos, c->qbuf.len - pos, &used);
        if (r == RESP_AGAIN) break;
        if (r == RESP_ERROR) {
            protocol_error(c, c->parser.error);
            resp_parser_reset(&c->parser);
            pos = c->qbuf.len;
            rc = -1;
            break;
        }
        pos += used;
        if (r == RESP_EMPTY) continue;
        c->argc = c->parser.argc;
        c->argv = c->parser.argv;
        if (c->parser.nrefs && client_settle_refs(c) < 0) {
            c->argc = 0;
            c->argv = NULL;
            if (c->flags & CLIENT_CLOSE_AFTER_REPLY) {
                pos = c->qbuf.len;
                rc = -1;
                break;
            }
            continue;
        }
        command_dispatch(c);
        if (c->refcopy.len) {
            buf_clear(&c->refcopy);
            buf_shrink(&c->refcopy, 1024 * 1024);
        }
        c->argc = 0;
        c->argv = NULL;
        /* a large reply leaves now rather than behind the rest of a pipeline (the client
         * starts reading it sooner); under appendfsync always replies wait for the fsync */
        if (c->out.len >= CLIENT_EARLY_FLUSH && c->ops && c->ops->want_write &&
            srv.cfg.appendfsync != CONFIG_FSYNC_ALWAYS) {
            c->ops->want_write(c);
            command_batch_end(); /* the write is not the next command's time */
        }
    }
    c->flags &= ~(uint32_t)CLIENT_IN_INPUT;
    command_batch_end();
    if (pos == c->qbuf.len) buf_clear(&c->qbuf);
    else if (pos) buf_consume(&c->qbuf, pos);
    if (c->qbuf.len > (size_t)srv.cfg.client_query_buffer_limit) {
        srv.stat.client_qbuf_limit_disconnections++;
        rc = -1;
    }
    return rc;
}

int client_feed(client_t *c, const void *p, size_t len)
{
    buf_append(&c->qbuf, p, len);
    return client_process_input(c);
}

/* A reserved place for a late reply, or for the replies queued behind one. */
typedef struct reply_seg {
    struct reply_seg *next;
    int done; /* its reply is complete: it may move to c->out once it is at the head */
    buf_t b;
    void (*detach)(void *job); /* the operation that will fill a late reply */
    void (*drain)(void *job);  /* streamed: told when it may take more bytes */
    void *job;
} reply_seg_t;

static reply_seg_t *seg_push(client_t *c, int done)
{
    reply_seg_t *s = xcalloc(1, sizeof(*s));
    buf_init(&s->b);
    s->done = done;
    if (c->seg_tail) c->seg_tail->next = s;
    else c->seg_head = s;
    c->seg_tail = s;
    c->nsegs++;
    return s;
}

/* c->rbuf moves to b: the segment it leaves counts in seg_bytes, the one it enters does not
 * (c->out is no segment). */
static void rbuf_switch(client_t *c, buf_t *b)
{
    if (c->rbuf != &c->out) c->seg_bytes += c->rbuf->len;
    if (b != &c->out) c->seg_bytes -= b->len;
    c->rbuf = b;
}

struct reply_seg *client_reply_later(client_t *c, void (*detach)(void *job), void *job)
{
    reply_seg_t *late = seg_push(c, 0);
    late->detach = detach;
    late->job = job;
    /* what later commands reply goes behind it */
    rbuf_switch(c, &seg_push(c, 1)->b);
    return late;
}

/* seg's reply is complete: moves every complete place at the head into c->out, then lets a
 * streamed reply that reached the head go on. */
static void seg_done(client_t *c, reply_seg_t *seg)
{
    seg->done = 1;
    while (c->seg_head && c->seg_head->done) {
        reply_seg_t *h = c->seg_head;
        /* the last segment is where replies go now: move it only once nothing waits before */
        if (h == c->seg_tail && c->rbuf == &h->b) {
            if (h->b.len) buf_append(&c->out, h->b.data, h->b.len);
            c->rbuf = &c->out;
        } else if (h->b.len) {
            buf_append(&c->out, h->b.data, h->b.len);
            c->seg_bytes -= h->b.len;
        }
        c->seg_head = h->next;
        if (!c->seg_head) c->seg_tail = NULL;
        c->nsegs--;
        buf_deinit(&h->b);
        xfree(h);
    }
    client_want_write(c);
    client_output_drained(c);
}

void client_reply_fill(client_t *c, struct reply_seg *seg, int begin)
{
    static buf_t *saved;
    if (begin) {
        saved = c->rbuf;
        rbuf_switch(c, &seg->b);
        return;
    }
    rbuf_switch(c, saved);
    seg_done(c, seg);
}

struct reply_seg *client_reply_stream_later(client_t *c, void (*detach)(void *job),
                                            void (*drain)(void *job), void *job)
{
    reply_seg_t *s = client_reply_later(c, detach, job);
    s->drain = drain;
    return s;
}

void client_reply_stream(client_t *c, struct reply_seg *seg, const void *p, size_t len)
{
    if (c->seg_head != seg) {
        buf_append(&seg->b, p, len);
        c->seg_bytes += len;
        return;
    }
    if (seg->b.len) { /* what it took before it reached the head goes first */
        buf_append(&c->out, seg->b.data, seg->b.len);
        c->seg_bytes -= seg->b.len;
        buf_deinit(&seg->b);
    }
    buf_append(&c->out, p, len);
    client_want_write(c);
}

int client_reply_room(const client_t *c, const struct reply_seg *seg, size_t ahead)
{
    /* behind other replies it takes nothing yet: a client's waiting streams hold no data */
    return c->seg_head == seg && c->out.len + seg->b.len < ahead;
}

void client_reply_stream_end(client_t *c, struct reply_seg *seg)
{
    if (c->seg_head == seg && seg->b.len) {
        buf_append(&c->out, seg->b.data, seg->b.len);
        c->seg_bytes -= seg->b.len;
        buf_clear(&seg->b);
    }
    seg->drain = NULL;
    seg_done(c, seg);
}

void client_output_drained(client_t *c)
{
    reply_seg_t *h = c->seg_head;
    if (!h || h->done || !h->drain) return;
    if (h->b.len) { /* it reached the head: what it holds goes out first */
        buf_append(&c->out, h->b.data, h->b.len);
        c->seg_bytes -= h->b.len;
        buf_deinit(&h->b);
        client_want_write(c);
    }
    h->drain(h->job);
}

int client_reply_at_end(const client_t *c, const buf_t *b)
{
    return b == &c->out ? !c->seg_head : c->seg_tail && b == &c->seg_tail->b;
}

void client_reply_drop(client_t *c)
{
    while (c->seg_head) {
        reply_seg_t *h = c->seg_head;
        c->seg_head = h->next;
        if (!h->done && h->detach) h->detach(h->job);
        buf_deinit(&h->b);
        xfree(h);
    }
    c->seg_tail = NULL;
    c->nsegs = 0;
    c->seg_bytes = 0;
    c->rbuf = &c->out;
}

static const char *flag_letters(const client_t *c, char *buf)
{
    char *p = buf;
    if (c->flags & CLIENT_MULTI) *p++ = 'x';
    if (c->flags & CLIENT_BLOCKED) *p++ = 'b';
    p = tracking_flag_letters(c, p);
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) *p++ = 'c';
    if (c->flags & CLIENT_UNIX_SOCKET) *p++ = 'U';
    if (c->flags & CLIENT_PUBSUB) *p++ = 'P';
    if (c->flags & CLIENT_MONITOR) *p++ = 'O';
    if (c->flags & CLIENT_DIRTY_CAS) *p++ = 'd';
    if (c->flags & CLIENT_NO_EVICT) *p++ = 'e';
    if (p == buf) *p++ = 'N';
    *p = '\0';
    return buf;
}

static const char *transport_name(const client_t *c)
{
    if (c->ops && c->ops->name) return c->ops->name;
    if (!c->ops) return "none";
    return (c->flags & CLIENT_UNIX_SOCKET) ? "unix" : "tcp";
}

void client_info_line(client_t *c, buf_t *out)
{
    char peer[128] = "", local[128] = "", flags[16];
    if (c->ops && c->ops->addr) c->ops->addr(c, peer, sizeof(peer), local, sizeof(local));
    long long now = time_ms();
    buf_printf(out,
               "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=0 "
               "psub=0 ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 "
               "rbs=%zu rbp=0 obl=0 oll=0 omem=%zu tot-mem=%zu events=r cmd=%s user=%s "
               "redir=%lld resp=%d lib-name=%s lib-ver=%s transport=%s",
               (unsigned long long)c->id, peer, local, c->fd, c->name ? c->name : "",
               (now - c->ctime_ms) / 1000, (now - c->last_cmd_ms) / 1000, flag_letters(c, flags),
               c->dbid, c->qbuf.len, c->qbuf.cap > c->qbuf.len ? c->qbuf.cap - c->qbuf.len : 0,
               c->qbuf.cap, c->out.len + c->seg_bytes, sizeof(*c) + c->qbuf.cap + c->out.cap,
               c->lastcmd ? c->lastcmd->fullname : "NULL", acl_client_user_name(c),
               tracking_redir_field(c), c->resp, c->lib_name ? c->lib_name : "",
               c->lib_ver ? c->lib_ver : "", transport_name(c));
}
