/* cte.h - libcte, the C client library of cte-server: the whole public contract.
 *
 * Connections. A connection (cte_conn_t, opaque) talks to one server over one transport, named
 * by an address:
 *     tcp://[[user]:password@]host[:port][/db][?resp=3]     host may be [v6]; port 6379
 *     unix:PATH[?db=N&user=U&password=P&resp=3]            PATH is the server's Unix socket
 *     shm:PATH[?...]                                       shared memory (docs/shm.md)
 * User and password may be percent-encoded (%40 for '@'). On open the library sends, in this
 * order, AUTH (when a password is given), HELLO 3 (with ?resp=3 or the CTE_RESP3 flag) and
 * SELECT (when db is not 0); any of them failing fails the open with the server's message.
 *
 * Threads. A connection belongs to one thread at a time: never call two functions on the same
 * connection concurrently, and completion callbacks run on the thread that drives the
 * connection (inside cte_poll, cte_flush, cte_wait_all or any synchronous call). Use one
 * connection per thread. Different connections are independent; the library shares no
 * mutable state between threads (cte_strerror uses a per-thread buffer), so functions that
 * take no connection may be called from any thread.
 *
 * Status. Every function that can fail returns an int: 0 on success, a negative errno for a
 * system error (-ECONNREFUSED, -ENOMEM, ...), or a negative CTE_E_* code from the table below.
 * cte_strerror() names either kind. When the server answered with an error, the status is
 * CTE_E_SERVER and cte_conn_errmsg() holds its message (e.g. "WRONGTYPE Operation against ...").
 * After CTE_E_CLOSED, CTE_E_PROTOCOL, CTE_E_TIMEOUT, CTE_E_LIMIT, a system error on the
 * socket, or CTE_E_NOMEM while a reply was arriving, the connection is broken: every later
 * call returns that status again; free it (or cte_conn_open it again). CTE_E_NOMEM while
 * queueing a request queues nothing and leaves the connection usable. Nothing in the library
 * aborts or exits the caller's process.
 *
 * Synchronous and asynchronous calls. Synchronous calls send one request and wait for its
 * reply. Asynchronous calls (*_async) queue a request and return at once; its callback runs
 * when the reply arrives, in request order. At most `window` requests (cte_conn_set_window,
 * default 256) are in flight: a call that would exceed it first drives the connection until a
 * reply frees a slot. A synchronous call may follow queued asynchronous ones: it waits for
 * their replies too (running their callbacks), then for its own.
 *
 * Payloads. Arguments of 16 KiB or more are not copied: the library hands the caller's bytes
 * to the kernel beside the framing (one sendmsg with an iovec). For asynchronous calls, every
 * argument buffer must therefore stay valid and unchanged until the request's callback has run. Tag
 * and blob names are NUL-terminated.
 *
 * Replies. A reply tree (cte_reply_t, opaque) has one of the cte_reply_kind_t kinds and is
 * freed with one cte_reply_free() call on its root. RESP3 attributes are read and dropped;
 * push messages that arrive between replies go to the push callback (or are dropped).
 * The generic calls refuse SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, MONITOR,
 * SYNC and PSYNC with CTE_E_INVAL in this version: their replies do not pair with requests.
 */
#ifndef CTE_CTE_H
#define CTE_CTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTE_VERSION_MAJOR 0
#define CTE_VERSION_MINOR 1

/* ---- status codes: X(name, value, message) ---- */
#define CTE_ERRORS(X)                                                                              \
    X(CTE_E_ADDRESS, -1000, "malformed address")                                                   \
    X(CTE_E_UNSUPPORTED, -1001, "transport not supported yet")                                     \
    X(CTE_E_SERVER, -1002, "the server replied with an error")                                     \
    X(CTE_E_PROTOCOL, -1003, "malformed reply from the server")                                    \
    X(CTE_E_LIMIT, -1004, "reply exceeds a configured limit")                                      \
    X(CTE_E_CLOSED, -1005, "connection closed (or never opened)")                                  \
    X(CTE_E_TIMEOUT, -1006, "timed out waiting for the server")                                    \
    X(CTE_E_TYPE, -1007, "unexpected reply type")                                                  \
    X(CTE_E_NOTFOUND, -1008, "no such blob")                                                       \
    X(CTE_E_TRUNCATED, -1009, "reply larger than the caller's buffer")                             \
    X(CTE_E_INVAL, -1010, "invalid argument")                                                      \
    X(CTE_E_BUSY, -1011, "not allowed inside a completion callback")                               \
    X(CTE_E_NOMEM, -1012, "out of memory")                                                         \
    X(CTE_E_EXISTS, -1013, "a dataset of that name exists with another layout")                    \
    X(CTE_E_FORMAT, -1014, "malformed dataset metadata or chunk")                                  \
    X(CTE_E_CLUSTER, -1015,                                                                        \
      "cluster routing failed (no node serves the slot, or too many redirects)")

enum {
    CTE_OK = 0,
#define CTE_X_ENUM(name, value, msg) name = value,
    CTE_ERRORS(CTE_X_ENUM)
#undef CTE_X_ENUM
};

/* A message for any status (0, -errno or CTE_E_*); never NULL; any thread. The text lives
 * until the calling thread's next cte_strerror (CTE_E_* texts: for ever). */
const char *cte_strerror(int status);

/* ---- replies ---- */
typedef enum cte_reply_kind {
    CTE_REPLY_STRING,   /* simple string (+OK) */
    CTE_REPLY_ERROR,    /* error (-ERR ..., RESP3 blob error !) */
    CTE_REPLY_INTEGER,  /* :n */
    CTE_REPLY_BULK,     /* $n bulk string */
    CTE_REPLY_NULL,     /* $-1, *-1, RESP3 _ */
    CTE_REPLY_ARRAY,    /* *n */
    CTE_REPLY_MAP,      /* %n: 2n elements, key, value, key, value ... */
    CTE_REPLY_SET,      /* ~n */
    CTE_REPLY_DOUBLE,   /* ,d (inf, -inf, nan accepted) */
    CTE_REPLY_BOOL,     /* #t / #f */
    CTE_REPLY_BIGNUM,   /* (digits: the text is kept */
    CTE_REPLY_VERBATIM, /* =n txt:...: the text after the 4-byte format prefix */
    CTE_REPLY_PUSH      /* >n */
} cte_reply_kind_t;

/* A reply tree. The accessors below take a non-NULL reply, never fail, allocate nothing and
 * may be called from any thread that owns the reply; what they return lives as long as r. */
typedef struct cte_reply cte_reply_t;

cte_reply_kind_t cte_reply_kind(const cte_reply_t *r);
/* The bytes of a string-like reply (STRING, ERROR, BULK, BIGNUM, VERBATIM; DOUBLE as sent),
 * NUL-terminated, owned by the reply; NULL for other kinds. *len (if not NULL) gets the length. */
const char *cte_reply_str(const cte_reply_t *r, size_t *len);
/* INTEGER's value, BOOL as 0/1; 0 for other kinds. */
long long cte_reply_int(const cte_reply_t *r);
/* DOUBLE's value (INTEGER converted); 0 for other kinds. */
double cte_reply_double(const cte_reply_t *r);
/* Number of elements of ARRAY, SET, PUSH, and 2 x pairs of a MAP; 0 for other kinds. */
size_t cte_reply_len(const cte_reply_t *r);
/* Element i (owned by r), or NULL when i is out of range or r is not an aggregate. */
const cte_reply_t *cte_reply_elem(const cte_reply_t *r, size_t i);
/* VERBATIM's 3-letter format ("txt", "mkd"); "" for other kinds. */
const char *cte_reply_format(const cte_reply_t *r);
/* A deep copy of r (any reply, also one lent to a callback), the caller's; NULL when out of
 * memory. */
cte_reply_t *cte_reply_copy(const cte_reply_t *r);
/* Frees r and everything under it; NULL is fine. */
void cte_reply_free(cte_reply_t *r);

/* ---- connections ---- */
typedef struct cte_conn cte_conn_t;

enum cte_open_flags {
    CTE_RESP3 = 1 << 0 /* send HELLO 3 on open (same as ?resp=3) */
};

/* A new, unopened connection (defaults: window 256, no timeout); NULL when out of memory.
 * The caller owns it and frees it with cte_conn_free. */
cte_conn_t *cte_conn_new(void);
/* Connects c to addr and runs the handshake (see top). On failure c is closed but may be
 * opened again; cte_conn_errmsg(c) says why. */
int cte_conn_open(cte_conn_t *c, const char *addr, unsigned flags);
/* cte_conn_new + cte_conn_open; on success *out is the caller's, on failure *out is NULL. */
int cte_connect(const char *addr, unsigned flags, cte_conn_t **out);
/* Closes the socket; requests still queued get their callbacks with CTE_E_CLOSED first.
 * Frees c; NULL is fine. Not from inside a callback of c. */
void cte_conn_free(cte_conn_t *c);
/* The last error's message: the server's text after CTE_E_SERVER, else a description of the
 * last failure. Owned by c, valid until the next call on c; "" when there is none. */
const char *cte_conn_errmsg(const cte_conn_t *c);
/* 2 or 3: the protocol the connection speaks. */
int cte_conn_protocol(const cte_conn_t *c);
/* At most n (>= 1) requests in flight; CTE_E_INVAL otherwise. */
int cte_conn_set_window(cte_conn_t *c, unsigned n);
/* Synchronous calls and cte_wait_all fail with CTE_E_TIMEOUT (breaking the connection) when
 * the server sends nothing for ms milliseconds; 0 (the default) waits for ever. Set before
 * cte_conn_open, it also bounds connecting and each step of the handshake. Name resolution
 * (getaddrinfo) is not bounded. */
void cte_conn_set_timeout(cte_conn_t *c, int ms);
/* Bulk strings larger than n bytes (default 512 MiB) fail with CTE_E_LIMIT. */
void cte_conn_set_max_bulk(cte_conn_t *c, size_t n);
/* Push messages arriving between replies go to fn (reply owned by the library, valid during
 * the call) instead of being dropped. */
typedef void cte_push_fn(cte_conn_t *c, const cte_reply_t *push, void *ud);
void cte_conn_set_push_cb(cte_conn_t *c, cte_push_fn *fn, void *ud);

/* ---- the generic command ---- */

/* Sends argv[0..argc) (lens[i] bytes each; lens NULL: NUL-terminated strings) and waits.
 * On 0 or CTE_E_SERVER *reply is the caller's (an ERROR reply for CTE_E_SERVER); on other
 * failures *reply is NULL. */
int cte_command(cte_conn_t *c, cte_reply_t **reply, int argc, const char *const *argv,
                const size_t *lens);
/* The same with NUL-terminated arguments ending in NULL: cte_call(c, &r, "GET", "k", NULL). */
int cte_call(cte_conn_t *c, cte_reply_t **reply, const char *arg0, ...);

/* Completion of an asynchronous request. status is 0, CTE_E_SERVER (reply is the ERROR), or
 * the connection's failure (reply NULL). The reply is the library's, valid during the call.
 * The callback may queue more asynchronous requests on c; synchronous calls and
 * cte_conn_free on c return CTE_E_BUSY / are not allowed there. */
typedef void cte_done_fn(cte_conn_t *c, int status, const cte_reply_t *reply, void *ud);

/* Queues a command (arguments as cte_command; see Payloads at top for their lifetime). Returns
 * 0 when queued (fn will run exactly once), or a failure (fn will not run). fn may be NULL. */
int cte_command_async(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                      cte_done_fn *fn, void *ud);
/* Writes what the socket takes, reads what has arrived, and runs the callbacks of completed
 * requests, waiting up to timeout_ms (0: not at all, -1: until something completes). Returns
 * the number of requests completed (>= 0; 0 at once when nothing is pending) or the
 * connection's failure. Like cte_flush and cte_wait_all, CTE_E_BUSY inside a callback. */
int cte_poll(cte_conn_t *c, int timeout_ms);
/* Writes every queued request (reading replies meanwhile so the server never stalls). */
int cte_flush(cte_conn_t *c);
/* Waits until every queued request has completed. */
int cte_wait_all(cte_conn_t *c);
/* Requests queued or in flight whose callback has not run yet. */
unsigned cte_pending(const cte_conn_t *c);

/* ---- tags and blobs (docs/commands.md) ----
 * score < 0 means "no score argument"; count < 0 means "to the end of the blob". Calls that
 * read a blob return CTE_E_NOTFOUND when it does not exist. Views returned below point into
 * the connection's last reply: valid until the next call on c. */

/* TPUT: writes len bytes at off; *size (may be NULL) gets the blob's size after the write. */
int cte_put(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, const void *data,
            size_t len, double score, uint64_t *size);
/* TPUT queued; fn gets the INTEGER reply (the size). data must live until fn has run. */
int cte_put_async(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, const void *data,
                  size_t len, double score, cte_done_fn *fn, void *ud);
/* Shared-memory connections: a buffer of len bytes inside c's request data area, for the
 * caller to fill and then pass as the data of its next cte_put or cte_put_async on c, which
 * sends it without any copy (the put's bytes then reach the blob's tier with one copy in all:
 * the server's). Any other put copies its data into the area once. NULL when c is not on
 * shm, len is under 2 KiB or over the area, or no room comes free (then put from any buffer as
 * usual). It may wait for earlier requests to be answered to make room. The buffer is c's; it
 * stays valid until that put is answered, or until the next cte_put_buffer call or the
 * connection's end when unused. One at a time. The thread that owns c. */
void *cte_put_buffer(cte_conn_t *c, size_t len);
/* TGET into buf: the payload is parsed straight into buf as it arrives (no copy through the
 * library). *len gets the bytes the server sent; when that exceeds cap, only the first cap
 * bytes are stored and CTE_E_TRUNCATED is returned. On other failures buf's contents are
 * unspecified. */
int cte_get(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, int64_t count,
            void *buf, size_t cap, size_t *len);
/* TGET as a view: data and len point into the connection's reply (no copy), valid until the
 * next call on c. */
int cte_get_view(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, int64_t count,
                 const void **data, size_t *len);
/* TGET queued; fn gets the BULK (or NULL kind when missing). */
int cte_get_async(cte_conn_t *c, const char *tag, const char *blob, uint64_t off, int64_t count,
                  cte_done_fn *fn, void *ud);
/* TSIZE. */
int cte_size(cte_conn_t *c, const char *tag, const char *blob, uint64_t *size);
/* TTRUNCATE: *size (may be NULL) gets the new size. */
int cte_truncate(cte_conn_t *c, const char *tag, const char *blob, uint64_t size,
                 uint64_t *newsize);
/* TDEL of n blobs; *removed (may be NULL) gets how many existed. */
int cte_delete(cte_conn_t *c, const char *tag, const char *const *blobs, size_t n,
               uint64_t *removed);
/* TSCORE (RESP2 and RESP3). */
int cte_score(cte_conn_t *c, const char *tag, const char *blob, double *score);
/* REORG: sets the score and moves the blob; *tier gets a view of the tier's name. */
int cte_reorg(cte_conn_t *c, const char *tag, const char *blob, double score, const char **tier);
/* TLEN: number of blobs in the tag. */
int cte_len(cte_conn_t *c, const char *tag, uint64_t *n);

/* TINFO's fields (the tier of the blob's first piece). The caller owns the struct. */
typedef struct cte_blob_info {
    uint64_t size;
    double score;
    char tier[64];
    int64_t ctime, mtime, atime; /* Unix ms */
    uint64_t reads, writes;
} cte_blob_info_t;
int cte_info(cte_conn_t *c, const char *tag, const char *blob, cte_blob_info_t *info);

/* The calls below hand the caller the server's reply (*names; free with cte_reply_free). */

/* TLIST: *names is an ARRAY of BULK blob names. */
int cte_list(cte_conn_t *c, const char *tag, cte_reply_t **names);
/* TSCAN from cursor (0 starts); match (regex) may be NULL, count 0 means the default.
 * *next gets the next cursor (0: done); *names is an ARRAY of BULK names. */
int cte_scan(cte_conn_t *c, const char *tag, uint64_t cursor, const char *match, unsigned count,
             uint64_t *next, cte_reply_t **names);
/* TQUERY TAGS regex [LIMIT n] (limit 0: none). *total gets the number of matches; *out is
 * the whole reply: element 0 the total, then one BULK name each. */
int cte_query_tags(cte_conn_t *c, const char *regex, unsigned limit, uint64_t *total,
                   cte_reply_t **out);
/* TQUERY BLOBS; since/until < 0 mean unbounded. *out: element 0 the total, then one
 * [tag, blob] ARRAY each. */
int cte_query_blobs(cte_conn_t *c, const char *tagregex, const char *blobregex, int64_t since,
                    int64_t until, unsigned limit, uint64_t *total, cte_reply_t **out);
/* TSEARCH query [TAG t] [BLOB b] [LIMIT n] [WITHSCORES]; tagregex/blobregex may be NULL,
 * limit 0 means the server's default. *out: ARRAY of [tag, blob] or [tag, blob, score]. */
int cte_search(cte_conn_t *c, const char *query, const char *tagregex, const char *blobregex,
               unsigned limit, int withscores, cte_reply_t **out);

/* ---- cluster client ----
 * A cluster handle (cte_cluster_t, opaque) talks to a Redis Cluster protocol cluster of
 * cte-servers (or any Redis Cluster, for the generic calls). It is opened from one or more seed
 * addresses (tcp:// only; the first seed's user, password, protocol and db 0 are used for every
 * node), loads the slot map with CLUSTER SLOTS from the first seed that answers, and opens a
 * connection to a node the first time a call is routed to it.
 *
 * Routing. A call goes to the primary that owns the hash slot of its key (CRC16 with {hash
 * tags}, as Redis Cluster): the tag's name for the tag calls, the key the caller names for
 * cte_cluster_command_key, argv[1] for cte_cluster_command (right for GET, SET, HSET, TPUT, ...
 * and every command whose first argument is its first key; use cte_cluster_command_key for the
 * others, e.g. EVAL, XREAD, OBJECT ...), and any node for a command with no argument. Replies
 * -MOVED (the slot map is updated and reloaded), -ASK (ASKING, then the request on that node,
 * once per redirect), -TRYAGAIN and -CLUSTERDOWN (a 10..100 ms backoff and a reload) are
 * followed, at most 16 attempts in all (then the last error is returned). A request whose
 * connection breaks is not retried (it may have run): its status is returned, the node's
 * connection is dropped and the map reloaded before the next call.
 *
 * Status and memory as for connections: CTE_E_SERVER with the server's message in
 * cte_cluster_errmsg, CTE_E_CLUSTER when no node serves a slot. Views (cte_cluster_get_view,
 * cte_cluster_reorg's tier) are valid until the next call on the cluster handle. Threads: one
 * thread at a time per handle, as a connection. */
typedef struct cte_cluster cte_cluster_t;

/* A new handle with no node (timeout 0: none); NULL when out of memory. */
cte_cluster_t *cte_cluster_new(void);
/* Every node connection's timeout (cte_conn_set_timeout), for connections opened later. */
void cte_cluster_set_timeout(cte_cluster_t *cl, int ms);
/* Parses the n seeds (CTE_E_ADDRESS for a malformed or non-tcp one) and loads the slot map
 * from the first that answers; on failure cte_cluster_errmsg says why. flags as
 * cte_conn_open's, for every node connection. */
int cte_cluster_open(cte_cluster_t *cl, const char *const *seeds, size_t n, unsigned flags);
/* cte_cluster_new + cte_cluster_open; on failure *out is NULL. */
int cte_cluster_connect(const char *const *seeds, size_t n, unsigned flags, cte_cluster_t **out);
/* Closes every node connection (pending asynchronous requests get CTE_E_CLOSED) and frees cl;
 * NULL is fine. */
void cte_cluster_free(cte_cluster_t *cl);
/* The last failure's message (the server's text after CTE_E_SERVER); owned by cl, valid until
 * the next call on it. */
const char *cte_cluster_errmsg(const cte_cluster_t *cl);
/* Reloads the slot map now (CLUSTER SLOTS on a known node, else a seed). */
int cte_cluster_reload(cte_cluster_t *cl);
/* Number of primaries in the slot map; *host (may be NULL) gets a view of the i-th one's host
 * (valid until the next call on cl) and *port its port. CTE_E_INVAL when i is out of range. */
size_t cte_cluster_primaries(const cte_cluster_t *cl);
int cte_cluster_primary(const cte_cluster_t *cl, size_t i, const char **host, int *port);

/* Routing for calls the cluster API does not wrap (datasets, any cte_conn call): *conn gets the
 * connection of the node owning key's slot (key NULL: any node), owned by cl and valid until
 * the next call on cl. After the call made on it returned *status, cte_cluster_retry returns 1
 * when it should be made again on *conn (which it may change: MOVED/ASK/backoff handled, *attempt
 * counted; start it at 0), or 0 when *status is final, its message in cte_cluster_errmsg (*status
 * is replaced when the node a redirect names cannot be reached, or ASKING fails there):
 *     cte_conn_t *c; int at = 0, rc = cte_cluster_conn_for_key(cl, tag, strlen(tag), &c);
 *     if (rc == 0) do rc = cte_size(c, tag, blob, &n);
 *                  while (cte_cluster_retry(cl, tag, strlen(tag), &c, &rc, &at));
 * A call made of several requests gets ASKING before the first only. */
int cte_cluster_conn_for_key(cte_cluster_t *cl, const void *key, size_t len, cte_conn_t **conn);
int cte_cluster_retry(cte_cluster_t *cl, const void *key, size_t len, cte_conn_t **conn,
                      int *status, int *attempt);

/* The generic command, routed by argv[1] (see Routing); reply as cte_command's. */
int cte_cluster_command(cte_cluster_t *cl, cte_reply_t **reply, int argc, const char *const *argv,
                        const size_t *lens);
/* The same, routed by key[0..klen) (key NULL: any node). */
int cte_cluster_command_key(cte_cluster_t *cl, const void *key, size_t klen, cte_reply_t **reply,
                            int argc, const char *const *argv, const size_t *lens);
/* NUL-terminated arguments ending in NULL, routed by the first after the command name. */
int cte_cluster_call(cte_cluster_t *cl, cte_reply_t **reply, const char *arg0, ...);

/* Asynchronous requests: queued on the owning node's connection (each node's window applies,
 * so many requests are in flight per node and all nodes at once); redirects are re-sent by
 * cte_cluster_wait_all, so fn runs exactly once, from inside a cluster call (status and reply
 * as cte_done_fn's, the reply valid during the call). Arguments of CTE_COPY_MAX (16 KiB) or
 * more must stay valid until fn ran; smaller ones are copied. fn may queue more cluster
 * requests; no synchronous cluster call from inside it. */
typedef void cte_cluster_done_fn(cte_cluster_t *cl, int status, const cte_reply_t *reply, void *ud);
int cte_cluster_command_async(cte_cluster_t *cl, const void *key, size_t klen, int argc,
                              const char *const *argv, const size_t *lens, cte_cluster_done_fn *fn,
                              void *ud);
int cte_cluster_put_async(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                          const void *data, size_t len, double score, cte_cluster_done_fn *fn,
                          void *ud);
int cte_cluster_get_async(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                          int64_t count, cte_cluster_done_fn *fn, void *ud);
/* Waits until every queued request completed (redirected ones re-sent). Returns 0, or the
 * first node connection failure met (those requests got it as their status). */
int cte_cluster_wait_all(cte_cluster_t *cl);
/* Requests queued, in flight or waiting to be re-sent. */
unsigned cte_cluster_pending(const cte_cluster_t *cl);

/* The tag calls, routed by the tag's slot; arguments and results as the cte_conn calls. */
int cte_cluster_put(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                    const void *data, size_t len, double score, uint64_t *size);
int cte_cluster_get(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                    int64_t count, void *buf, size_t cap, size_t *len);
int cte_cluster_get_view(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                         int64_t count, const void **data, size_t *len);
int cte_cluster_size(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t *size);
int cte_cluster_truncate(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t size,
                         uint64_t *newsize);
int cte_cluster_delete(cte_cluster_t *cl, const char *tag, const char *const *blobs, size_t n,
                       uint64_t *removed);
int cte_cluster_score(cte_cluster_t *cl, const char *tag, const char *blob, double *score);
int cte_cluster_reorg(cte_cluster_t *cl, const char *tag, const char *blob, double score,
                      const char **tier);
int cte_cluster_len(cte_cluster_t *cl, const char *tag, uint64_t *n);
int cte_cluster_info(cte_cluster_t *cl, const char *tag, const char *blob, cte_blob_info_t *info);
int cte_cluster_list(cte_cluster_t *cl, const char *tag, cte_reply_t **names);
int cte_cluster_scan(cte_cluster_t *cl, const char *tag, uint64_t cursor, const char *match,
                     unsigned count, uint64_t *next, cte_reply_t **names);

/* Whole-cluster queries: the command runs on every primary at once and the replies are merged
 * into the reply one node holding all the data gives, same shape (*out, the caller's):
 *  - TQUERY TAGS / BLOBS: total = the sum of the nodes' totals (exact); names in byte order (tag,
 *    then blob), the first `limit` of the merge (each node sends at most limit);
 *  - TQUERY BLOBS with since/until: oldest first by each blob's mtime (TINFO, asked of the node
 *    that returned it); blobs of different nodes with the same mtime are ordered by tag, then
 *    blob (one node orders them by creation);
 *  - TSEARCH: two phases. Every primary's statistics of the query (TSEARCH q STATS) are
 *    summed, then every primary searches with the sums (GLOBALSTATS) for its best `limit`
 *    (0: 10) with scores, which are then the scores one node holding all the blobs gives; the
 *    merge keeps the global best `limit`, equal scores by tag then blob (docs/libcte.md).
 * An error reply from any node fails the call with CTE_E_SERVER and that node's message. */
int cte_cluster_query_tags(cte_cluster_t *cl, const char *regex, unsigned limit, uint64_t *total,
                           cte_reply_t **out);
int cte_cluster_query_blobs(cte_cluster_t *cl, const char *tagregex, const char *blobregex,
                            int64_t since, int64_t until, unsigned limit, uint64_t *total,
                            cte_reply_t **out);
int cte_cluster_search(cte_cluster_t *cl, const char *query, const char *tagregex,
                       const char *blobregex, unsigned limit, int withscores, cte_reply_t **out);

#ifdef __cplusplus
}
#endif
#endif
