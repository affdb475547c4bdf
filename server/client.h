/* client.h - the state of one client connection, independent of its transport.
 *
 * A client owns a query buffer that its transport fills, a RESP parser, and an output buffer
 * that commands append replies to. The transport (server/net/net.c for TCP and Unix sockets, a
 * shared-memory ring later, nothing at all for the socketless test client) only moves bytes:
 * it calls client_process_input() after adding bytes to qbuf and sends what is in out.
 * Runs on the loop thread. */
#ifndef CTE_SERVER_CLIENT_H
#define CTE_SERVER_CLIENT_H

#include "common/buf.h"
#include "resp/resp.h"
#include "storage/db.h"

#include <stdint.h>

struct command;
struct client;

/* What a transport provides. All optional: a NULL table means a socketless client. */
typedef struct transport_ops {
    /* Asks the transport to send c->out soon (it may send at once). */
    void (*want_write)(struct client *c);
    /* Closes the connection; the transport frees c through client_free when done. */
    void (*close)(struct client *c);
    /* "127.0.0.1:6379"-style peer and local addresses for CLIENT LIST. */
    void (*addr)(struct client *c, char *peer, size_t peerlen, char *local, size_t locallen);
    /* CLIENT LIST's transport= ("shm"); NULL: "unix" or "tcp" from the flags */
    const char *name;
    /* Shared memory: room for a bulk string of len bytes in the client's reply data area,
     * for a reply appended at the end of its output stream. Returns where the bytes go, with
     * the line that stands for the bulk in the stream in hdr (64 bytes) and its length in
     * *hdrlen; NULL when the bulk goes inline (too small, no area, no room now). */
    char *(*area_take)(struct client *c, size_t len, char *hdr, size_t *hdrlen);
} transport_ops_t;

enum client_flag {
    CLIENT_CLOSE_AFTER_REPLY = 1 << 0, /* QUIT, protocol error: close once out is sent */
    CLIENT_CLOSE_ASAP = 1 << 1,        /* CLIENT KILL, limits: close without sending more */
    CLIENT_AUTHENTICATED = 1 << 2,
    CLIENT_MULTI = 1 << 3,
    CLIENT_DIRTY_CAS = 1 << 4,
    CLIENT_DIRTY_EXEC = 1 << 5,
    CLIENT_PUBSUB = 1 << 6,
    CLIENT_BLOCKED = 1 << 7,
    CLIENT_UNIX_SOCKET = 1 << 8,
    CLIENT_NO_EVICT = 1 << 9,
    CLIENT_REPLY_OFF = 1 << 10,
    CLIENT_REPLY_SKIP_NEXT = 1 << 11,
    CLIENT_REPLY_SKIP = 1 << 12,
    CLIENT_PENDING_WRITE = 1 << 13,
    CLIENT_MONITOR = 1 << 14,
    CLIENT_FAKE = 1 << 15, /* AOF loading: no replies kept */
    CLIENT_IN_CALL = 1 << 16,
    CLIENT_IN_INPUT = 1 << 17, /* client_process_input is running for this client */
    CLIENT_SHM = 1 << 18,      /* on the shared-memory transport (server/net/shm.c) */
    CLIENT_PUSHING = 1 << 19,  /* a pub/sub push is being written: CLIENT REPLY OFF/SKIP let it
                                  through, as Redis does */
    CLIENT_SCRIPT = 1 << 20,   /* the client scripts run their commands on (server/script) */
    CLIENT_NO_PROPAGATE = 1 << 21, /* its writes are not logged (redis.set_repl) */
    CLIENT_UNLISTED = 1 << 22, /* not in the list of clients (client_unlist) */
    CLIENT_ASKING = 1 << 23,   /* cluster: ASKING was sent, the next command may use an
                                  importing slot (one-shot) */
    CLIENT_READONLY = 1 << 24, /* cluster: READONLY (reads from replicas, later) */
};

typedef struct client {
    uint64_t id;
    uint32_t flags;
    int resp;   /* 2 or 3 */
    db_t *db;   /* selected database */
    int dbid;
    char *name; /* CLIENT SETNAME, NULL if none */
    char *lib_name, *lib_ver;
    long long ctime_ms;     /* connection time */
    long long last_cmd_ms;  /* last interaction */

    /* input */
    buf_t qbuf;
    size_t qbuf_peak; /* most bytes qbuf held since the last cron look (server.c) */
    resp_parser_t parser;
    int argc;
    resp_arg_t *argv; /* views into qbuf (or the parser), valid during one command */
    buf_t refcopy;    /* shm: copies of the current command's data-area arguments */
    unsigned long long multi_ref_bytes; /* shm: of them, copied for commands queued in MULTI */
    const struct command *cmd, *lastcmd;

    /* output */
    buf_t out;
    buf_t *rbuf; /* where replies go: &out, or the newest late-reply segment (below) */
    struct reply_seg *seg_head, *seg_tail; /* replies in order behind a reply still to come */
    int nsegs;
    size_t seg_bytes; /* bytes the segments hold, but for the one rbuf points at */
    uint64_t out_soft_since_ms; /* when the soft output limit was first passed, 0 if not */
    uint64_t rbuf_soft_since_ms; /* the same for the reply being built (server/reply.c) */

    /* transport */
    const transport_ops_t *ops;
    void *conn; /* transport's own state */
    int fd;     /* for CLIENT LIST, -1 if none */

    /* list of all clients */
    struct client *prev, *next;
    /* list of clients with output to send */
    struct client *pw_next;

    /* transactions (server/multi.c), pub/sub (server/pubsub.c), blocking (server/block.c):
     * allocated on first use, NULL otherwise */
    struct tx_state *tx;
    struct sub_state *sub;
    struct block_state *blk;
    struct acl_user *user; /* server/acl.h: whose permissions apply; NULL: none checked */
    struct track_state *trk; /* client-side caching (server/tracking.c) */
} client_t;

/* A new client on a transport (ops may be NULL for a socketless client). Registered in the
 * server's client list. Never fails. */
client_t *client_new(const transport_ops_t *ops, void *conn, int fd);
/* Takes c out of the list of clients (CLIENT LIST, INFO, the cron): for internal clients
 * such as the scripts'. client_free still frees it. */
void client_unlist(client_t *c);
/* Unregisters and frees a client. Transports call it once the connection is closed. */
void client_free(client_t *c);
/* Asks the transport to close c (at once, or after the pending replies with
 * CLIENT_CLOSE_AFTER_REPLY set). For a socketless client it only sets the flag. */
void client_close(client_t *c);
/* Parses and runs every complete command in c->qbuf and drops the consumed bytes. Returns -1
 * if the client must be closed (protocol error, limits), else 0. */
/* A shared-memory client's request referenced bytes of its data area (resp_parser_t.area),
 * which it can change at any time: every such argument is copied into c->refcopy
 * (NUL-terminated, as the query buffer's arguments are) so the command sees one stable view,
 * but the command's value_arg, which the command reads once by its length (not when the
 * append-only file or a queued transaction would read it again later). The copies of one
 * request, and of all requests queued in one MULTI, are bounded by the data area's size (and
 * client-query-buffer-limit): refs can name the same bytes many times. 0, or -1 after an error
 * reply (a protocol error closes the client). */
int client_settle_refs(client_t *c);
int client_process_input(client_t *c);
/* Appends bytes to qbuf and processes them: the socketless path used by unit tests. */
int client_feed(client_t *c, const void *p, size_t len);
/* Marks c as having output; the transport is asked to send it. */
void client_want_write(client_t *c);
/* Selects database id (0 <= id < databases). Returns 0, or -1 if out of range. */
int client_select(client_t *c, int id);
/* Late replies: a command whose reply comes later (file-tier I/O) reserves its place, and
 * the replies of the commands after it queue behind that place, so the client can go on
 * sending commands while the I/O runs and replies still leave in request order.
 * client_reply_later returns the place; client_reply_fill(c, seg, 1) directs replies into
 * it, client_reply_fill(c, seg, 0) closes it and moves every finished place at the head into
 * c->out. client_reply_drop frees the places of a client going away, calling detach(job) for
 * each late reply still to come so the operation forgets the client. */
struct reply_seg *client_reply_later(client_t *c, void (*detach)(void *job), void *job);
void client_reply_fill(client_t *c, struct reply_seg *seg, int begin);
/* Whether replies appended to b now come last in c's output stream (b is c->out or the
 * place behind the newest late reply, not a late reply being filled). */
int client_reply_at_end(const client_t *c, const buf_t *b);
void client_reply_drop(client_t *c);
/* Streamed late replies (a large TGET sent in pieces as the socket drains): a place like
 * client_reply_later's whose bytes arrive in pieces through client_reply_stream (straight
 * into c->out once every reply before it left, into the place until then) and that
 * client_reply_stream_end completes. client_reply_room says whether more of it may be added
 * now: it is at the head of the queue and fewer than ahead bytes wait to be sent; drain(job) is
 * called when that may have changed (the transport took c->out, or the place reached the head
 * of the queue). */
struct reply_seg *client_reply_stream_later(client_t *c, void (*detach)(void *job),
                                            void (*drain)(void *job), void *job);
void client_reply_stream(client_t *c, struct reply_seg *seg, const void *p, size_t len);
int client_reply_room(const client_t *c, const struct reply_seg *seg, size_t ahead);
void client_reply_stream_end(client_t *c, struct reply_seg *seg);
/* Transports call it after they took what c->out held (sent, or handed to the socket). */
void client_output_drained(client_t *c);

/* Formats one line of CLIENT LIST / CLIENT INFO into out. */
void client_info_line(client_t *c, buf_t *out);

#endif
