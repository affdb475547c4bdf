/* cluster.c - libcte's cluster client (cte_cluster_t, cte/cte.h): routes requests by hash slot
 * to the nodes of a Redis Cluster protocol cluster, follows its redirects, and runs TQUERY and
 * TSEARCH on every primary and merges their replies.
 *
 * Shape. A node table (host, port, primary flag, a connection opened on first use) and the
 * slot map, 16384 node indexes (NO_NODE: unknown). The map comes from CLUSTER SLOTS; -MOVED
 * patches one slot at once and marks the map stale, so the next routing reloads it. Synchronous
 * calls are loops around the single-node calls (cte_cluster_conn_for_key, the call,
 * cte_cluster_retry). Asynchronous requests own a copy of their small arguments so that a
 * redirected one can be re-sent: the completion callback, which runs inside some connection's
 * callback where nothing synchronous may happen, only patches the map and parks the request on
 * the retry list; cte_cluster_wait_all re-sends parked requests between rounds of waiting.
 *
 * Invariants: every slot is NO_NODE or < nnodes; node indexes never change (nodes are only
 * added; a node that failed keeps its entry without a connection); inflight counts the
 * asynchronous requests whose callback has not run. The thread that owns the handle. */
#include "alloc.h"
#include "common/keyslot.h"
#include "conn_int.h"
#include "reply.h"
#include "tag_int.h"
#include "uri.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_NODE 0xffffu
#define MAX_NODES 4096
#define MAX_ATTEMPTS 16
#define DEFAULT_SEARCH_LIMIT 10

typedef struct cnode {
    char host[256];
    int port;
    int primary;
    cte_conn_t *conn; /* NULL until first used, or after it broke */
} cnode_t;

typedef struct creq creq_t;
struct creq {
    creq_t *next;
    cte_cluster_t *cl;
    cte_cluster_done_fn *fn;
    void *ud;
    int slot;         /* -1: any node */
    int to;           /* node a redirect named (sent there next), or -1: the slot's owner */
    int asking;       /* send ASKING first (-ASK) */
    int attempt;      /* redirects followed so far */
    long long due_ms; /* monotonic: not re-sent before */
    int argc;
    const char **argv; /* small arguments point into this allocation, large ones to the caller's */
    size_t *lens;
};

struct cte_cluster {
    cte_addr_t tpl; /* the first seed: credentials, protocol; host and port replaced per node */
    unsigned flags;
    int timeout_ms;
    cnode_t *nodes;
    size_t nnodes, ncap;
    uint16_t slot[KEYSLOT_COUNT];
    int stale;
    creq_t *retry, **retry_tail;
    unsigned inflight;
    char errmsg[512];
};

enum redirect { R_NONE, R_MOVED, R_ASK, R_WAIT };

static int set_err(cte_cluster_t *cl, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cl->errmsg, sizeof cl->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long long ms)
{
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The wait before attempt n (1..): 10 ms, 20 ms, ... at most 100 ms. */
static long long backoff_ms(int attempt)
{
    return attempt * 10 < 100 ? attempt * 10 : 100;
}

/* ---- nodes ---- */

static int node_find(const cte_cluster_t *cl, const char *host, int port)
{
    for (size_t i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i].port == port && !strcmp(cl->nodes[i].host, host)) return (int)i;
    return -1;
}

/* The node's index, added when new; a negative status when out of memory, the host is too
 * long or the table is full. */
static int node_get(cte_cluster_t *cl, const char *host, size_t hlen, int port)
{
    char h[256];
    if (hlen >= sizeof h || port <= 0 || port > 65535)
        return set_err(cl, CTE_E_PROTOCOL, "bad node address from the cluster");
    memcpy(h, host, hlen);
    h[hlen] = '\0';
    int i = node_find(cl, h, port);
    if (i >= 0) return i;
    if (cl->nnodes == MAX_NODES) return set_err(cl, CTE_E_LIMIT, "more than %d nodes", MAX_NODES);
    if (cl->nnodes == cl->ncap) {
        size_t cap = cl->ncap ? cl->ncap * 2 : 8;
        cnode_t *n = cte__realloc(cl->nodes, cap * sizeof *n);
        if (!n) return set_err(cl, CTE_E_NOMEM, "out of memory");
        cl->nodes = n;
        cl->ncap = cap;
    }
    cnode_t *n = &cl->nodes[cl->nnodes];
    memset(n, 0, sizeof *n);
    memcpy(n->host, h, hlen + 1);
    n->port = port;
    return (int)cl->nnodes++;
}

static int node_of(const cte_cluster_t *cl, const cte_conn_t *c)
{
    for (size_t i = 0; i < cl->nnodes; i++)
        if (c && cl->nodes[i].conn == c) return (int)i;
    return -1;
}

static void node_drop(cte_cluster_t *cl, int i)
{
    cte_conn_t *c = cl->nodes[i].conn;
    cl->nodes[i].conn = NULL;
    cte_conn_free(c);
}

/* Records a failure on node i: a server's message as it is (its first word is its class:
 * WRONGTYPE, NOAUTH, ...), anything else after the node's address. Returns status. */
static int node_err(cte_cluster_t *cl, int i, int status, const char *msg)
{
    if (status == CTE_E_SERVER) return set_err(cl, status, "%s", msg);
    return set_err(cl, status, "%s:%d: %s", cl->nodes[i].host, cl->nodes[i].port, msg);
}

/* Node i's connection, opened now if needed. */
static int node_conn(cte_cluster_t *cl, int i, cte_conn_t **out)
{
    cnode_t *n = &cl->nodes[i];
    if (n->conn) {
        *out = n->conn;
        return 0;
    }
    cte_conn_t *c = cte_conn_new();
    if (!c) return set_err(cl, CTE_E_NOMEM, "out of memory");
    cte_conn_set_timeout(c, cl->timeout_ms);
    cte_addr_t a = cl->tpl;
    memcpy(a.host, n->host, sizeof a.host);
    a.port = n->port;
    a.db = 0;
    int rc = cte__conn_open_addr(c, &a, cl->flags);
    if (rc) {
        node_err(cl, i, rc, cte_conn_errmsg(c));
        cte_conn_free(c);
        return rc;
    }
    cl->nodes[i].conn = c;
    *out = c;
    return 0;
}

/* ---- the slot map ---- */

static int is_int(const cte_reply_t *r, long long lo, long long hi)
{
    return r && r->kind == CTE_REPLY_INTEGER && r->ival >= lo && r->ival <= hi;
}

/* Fills map[] from a CLUSTER SLOTS reply that node `from` sent; an empty or "?" host means
 * from's own host. */
static int slots_parse(cte_cluster_t *cl, int from, const cte_reply_t *r, uint16_t *map)
{
    if (r->kind != CTE_REPLY_ARRAY) return set_err(cl, CTE_E_TYPE, "CLUSTER SLOTS: not an array");
    for (size_t s = 0; s < KEYSLOT_COUNT; s++) map[s] = NO_NODE;
    for (size_t i = 0; i < r->len; i++) {
        const cte_reply_t *e = r->elem[i], *who = cte_reply_elem(e, 2);
        if (e->kind != CTE_REPLY_ARRAY || e->len < 3 || !is_int(e->elem[0], 0, KEYSLOT_COUNT - 1) ||
            !is_int(e->elem[1], e->elem[0]->ival, KEYSLOT_COUNT - 1) ||
            who->kind != CTE_REPLY_ARRAY || who->len < 2 || !who->elem[0]->str ||
            !is_int(who->elem[1], 1, 65535))
            return set_err(cl, CTE_E_TYPE, "CLUSTER SLOTS: malformed range");
        const char *h = who->elem[0]->str;
        size_t hl = who->elem[0]->len;
        if (hl == 0 || (hl == 1 && h[0] == '?')) h = cl->nodes[from].host, hl = strlen(h);
        int n = node_get(cl, h, hl, (int)who->elem[1]->ival);
        if (n < 0) return n;
        for (long long s = e->elem[0]->ival; s <= e->elem[1]->ival; s++) map[s] = (uint16_t)n;
    }
    return 0;
}

static int load_from(cte_cluster_t *cl, int i)
{
    static const char *const argv[] = {"CLUSTER", "SLOTS"};
    cte_conn_t *c;
    cte_reply_t *r = NULL;
    int rc = node_conn(cl, i, &c);
    if (rc) return rc;
    rc = cte_command(c, &r, 2, argv, NULL);
    if (rc) {
        node_err(cl, i, rc, cte_conn_errmsg(c));
        if (cte__broken(c)) node_drop(cl, i);
        cte_reply_free(r);
        return rc;
    }
    uint16_t *map = cte__malloc(sizeof cl->slot);
    rc = map ? slots_parse(cl, i, r, map) : set_err(cl, CTE_E_NOMEM, "out of memory");
    if (rc == 0) {
        memcpy(cl->slot, map, sizeof cl->slot);
        for (size_t n = 0; n < cl->nnodes; n++) cl->nodes[n].primary = 0;
        for (size_t s = 0; s < KEYSLOT_COUNT; s++)
            if (cl->slot[s] != NO_NODE) cl->nodes[cl->slot[s]].primary = 1;
        cl->stale = 0;
    }
    free(map);
    cte_reply_free(r);
    return rc;
}

int cte_cluster_reload(cte_cluster_t *cl)
{
    int rc = set_err(cl, CTE_E_CLUSTER, "no node known");
    /* connected nodes first, then the others (the seeds among them) */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < cl->nnodes; i++)
            if ((cl->nodes[i].conn == NULL) == pass && (rc = load_from(cl, (int)i)) == 0) return 0;
    return rc;
}

/* The node serving slot s (the map reloaded first when stale or when s has none). */
static int owner(cte_cluster_t *cl, unsigned s, int *node)
{
    if (cl->stale || cl->slot[s] == NO_NODE) cte_cluster_reload(cl);
    if (cl->slot[s] == NO_NODE) {
        char why[sizeof cl->errmsg];
        memcpy(why, cl->errmsg, sizeof why);
        return set_err(cl, CTE_E_CLUSTER, "no node serves hash slot %u (%s)", s, why);
    }
    *node = cl->slot[s];
    return 0;
}

/* A connected node if any, else a primary, else the first node. */
static int any_node(cte_cluster_t *cl, int *node)
{
    if (cl->nnodes == 0) return set_err(cl, CTE_E_CLUSTER, "no node known");
    *node = 0;
    for (size_t i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i].conn || (cl->nodes[i].primary && !cl->nodes[*node].primary)) {
            *node = (int)i;
            if (cl->nodes[i].conn) break;
        }
    return 0;
}

/* ---- redirects ---- */

/* 1 for -TRYAGAIN and -CLUSTERDOWN: wait, and ask again. */
static int is_wait(const char *msg)
{
    return !strncmp(msg, "TRYAGAIN", 8) || !strncmp(msg, "CLUSTERDOWN", 11);
}

/* What an error message asks for; MOVED and ASK fill *slot, host[0..*hlen) and *port (an
 * empty host means the replying node's). */
static enum redirect redirect_parse(const char *msg, unsigned *slot, const char **host,
                                    size_t *hlen, int *port)
{
    if (!msg) return R_NONE;
    if (is_wait(msg)) return R_WAIT;
    enum redirect kind = !strncmp(msg, "MOVED ", 6) ? R_MOVED
                         : !strncmp(msg, "ASK ", 4) ? R_ASK
                                                    : R_NONE;
    if (kind == R_NONE) return R_NONE;
    char *end;
    const char *p = strchr(msg, ' ') + 1;
    unsigned long s = strtoul(p, &end, 10);
    if (end == p || *end != ' ' || s >= KEYSLOT_COUNT) return R_NONE;
    const char *addr = end + 1, *colon = strrchr(addr, ':');
    if (!colon) return R_NONE;
    long pt = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || (*end && *end != ' ') || pt <= 0 || pt > 65535) return R_NONE;
    *slot = (unsigned)s;
    *host = addr;
    *hlen = (size_t)(colon - addr);
    *port = (int)pt;
    return kind;
}

/* The node a MOVED or ASK names (from: the node that replied, or -1). */
static int redirect_node(cte_cluster_t *cl, int from, const char *host, size_t hlen, int port)
{
    if (hlen == 0 && from >= 0) host = cl->nodes[from].host, hlen = strlen(host);
    return node_get(cl, host, hlen, port);
}

int cte_cluster_conn_for_key(cte_cluster_t *cl, const void *key, size_t len, cte_conn_t **conn)
{
    int node, rc = key ? owner(cl, keyslot(key, len), &node) : any_node(cl, &node);
    return rc ? rc : node_conn(cl, node, conn);
}

static int final(cte_cluster_t *cl, cte_conn_t *c, int status)
{
    if (c) set_err(cl, status, "%s", cte_conn_errmsg(c));
    return 0;
}

int cte_cluster_retry(cte_cluster_t *cl, const void *key, size_t len, cte_conn_t **conn,
                      int *status, int *attempt)
{
    unsigned slot;
    const char *host;
    size_t hlen;
    int port, rc, from = node_of(cl, *conn);
    if (*status == 0) return 0;
    if (*status != CTE_E_SERVER) {
        final(cl, *conn, *status);
        if (from >= 0 && cte__broken(*conn)) {
            node_drop(cl, from);
            cl->stale = 1;
        }
        return 0;
    }
    enum redirect kind = redirect_parse(cte_conn_errmsg(*conn), &slot, &host, &hlen, &port);
    if (kind == R_NONE || ++*attempt >= MAX_ATTEMPTS) return final(cl, *conn, *status);
    final(cl, *conn, *status);
    if (kind == R_WAIT) { /* the same node again when the new map has no node for the key */
        sleep_ms(backoff_ms(*attempt));
        cl->stale = 1;
        cte_conn_t *c;
        if (cte_cluster_conn_for_key(cl, key, len, &c) == 0) *conn = c;
        return node_of(cl, *conn) >= 0;
    }
    int n = redirect_node(cl, from, host, hlen, port);
    if (n < 0 || (rc = node_conn(cl, n, conn)) != 0) { /* the node named cannot be reached */
        *status = n < 0 ? n : rc;
        return 0;
    }
    if (kind == R_MOVED) {
        cl->slot[slot] = (uint16_t)n;
        cl->stale = 1;
        return 1;
    }
    cte_reply_t *r = NULL;
    rc = cte_call(*conn, &r, "ASKING", NULL);
    cte_reply_free(r);
    if (rc) {
        *status = rc;
        return final(cl, *conn, rc);
    }
    return 1;
}

/* ---- lifecycle ---- */

cte_cluster_t *cte_cluster_new(void)
{
    cte_cluster_t *cl = cte__calloc(1, sizeof *cl);
    if (!cl) return NULL;
    for (size_t s = 0; s < KEYSLOT_COUNT; s++) cl->slot[s] = NO_NODE;
    cl->retry_tail = &cl->retry;
    return cl;
}

void cte_cluster_set_timeout(cte_cluster_t *cl, int ms)
{
    cl->timeout_ms = ms;
}

int cte_cluster_open(cte_cluster_t *cl, const char *const *seeds, size_t n, unsigned flags)
{
    char why[256];
    cl->flags = flags;
    if (n == 0) return set_err(cl, CTE_E_INVAL, "no seed address");
    for (size_t i = 0; i < n; i++) {
        cte_addr_t a;
        int rc = cte__addr_parse(seeds[i], &a, why, sizeof why);
        if (rc) return set_err(cl, rc, "%s: %s", seeds[i], why);
        if (a.kind != CTE_ADDR_TCP)
            return set_err(cl, CTE_E_ADDRESS, "%s: cluster seeds are tcp:// addresses", seeds[i]);
        if (i == 0) cl->tpl = a;
        if ((rc = node_get(cl, a.host, strlen(a.host), a.port)) < 0) return rc;
    }
    return cte_cluster_reload(cl);
}

int cte_cluster_connect(const char *const *seeds, size_t n, unsigned flags, cte_cluster_t **out)
{
    cte_cluster_t *cl = cte_cluster_new();
    *out = NULL;
    if (!cl) return CTE_E_NOMEM;
    int rc = cte_cluster_open(cl, seeds, n, flags);
    if (rc) {
        cte_cluster_free(cl);
        return rc;
    }
    *out = cl;
    return 0;
}

static void req_finish(creq_t *q, int status, const cte_reply_t *r)
{
    cte_cluster_t *cl = q->cl;
    cl->inflight--;
    if (q->fn) q->fn(cl, status, r, q->ud);
    free(q);
}

void cte_cluster_free(cte_cluster_t *cl)
{
    if (!cl) return;
    for (size_t i = 0; i < cl->nnodes; i++) node_drop(cl, (int)i);
    while (cl->retry) {
        creq_t *q = cl->retry;
        cl->retry = q->next;
        req_finish(q, CTE_E_CLOSED, NULL);
    }
    free(cl->nodes);
    free(cl);
}

const char *cte_cluster_errmsg(const cte_cluster_t *cl)
{
    return cl->errmsg;
}

size_t cte_cluster_primaries(const cte_cluster_t *cl)
{
    size_t n = 0;
    for (size_t i = 0; i < cl->nnodes; i++) n += cl->nodes[i].primary != 0;
    return n;
}

int cte_cluster_primary(const cte_cluster_t *cl, size_t i, const char **host, int *port)
{
    for (size_t n = 0; n < cl->nnodes; n++)
        if (cl->nodes[n].primary && i-- == 0) {
            if (host) *host = cl->nodes[n].host;
            if (port) *port = cl->nodes[n].port;
            return 0;
        }
    return CTE_E_INVAL;
}

/* ---- the generic command ---- */

int cte_cluster_command_key(cte_cluster_t *cl, const void *key, size_t klen, cte_reply_t **reply,
                            int argc, const char *const *argv, const size_t *lens)
{
    cte_conn_t *c;
    int at = 0, rc = cte_cluster_conn_for_key(cl, key, klen, &c);
    *reply = NULL;
    if (rc) return rc;
    for (;;) {
        rc = cte_command(c, reply, argc, argv, lens);
        if (!cte_cluster_retry(cl, key, klen, &c, &rc, &at)) return rc;
        cte_reply_free(*reply);
        *reply = NULL;
    }
}

int cte_cluster_command(cte_cluster_t *cl, cte_reply_t **reply, int argc, const char *const *argv,
                        const size_t *lens)
{
    if (argc < 2) return cte_cluster_command_key(cl, NULL, 0, reply, argc, argv, lens);
    size_t klen = lens ? lens[1] : strlen(argv[1]);
    return cte_cluster_command_key(cl, argv[1], klen, reply, argc, argv, lens);
}

int cte_cluster_call(cte_cluster_t *cl, cte_reply_t **reply, const char *arg0, ...)
{
    const char *argv[CTE_CALL_MAX_ARGS];
    va_list ap;

    *reply = NULL;
    va_start(ap, arg0);
    int argc = cte__call_args(arg0, ap, argv);
    va_end(ap);
    if (argc < 0) return set_err(cl, CTE_E_INVAL, "cte_cluster_call takes at most 64 arguments");
    return cte_cluster_command(cl, reply, argc, argv, NULL);
}

/* ---- asynchronous requests ---- */

static void req_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud);

/* Queues q on the node it goes to now; on failure q is untouched (the caller finishes it). */
static int req_send(cte_cluster_t *cl, creq_t *q)
{
    static const char *const asking[] = {"ASKING"};
    cte_conn_t *c;
    int node = q->to, rc = 0;
    if (node < 0) rc = q->slot < 0 ? any_node(cl, &node) : owner(cl, (unsigned)q->slot, &node);
    if (rc || (rc = node_conn(cl, node, &c)) != 0) return rc;
    if (q->asking && (rc = cte_command_async(c, 1, asking, NULL, NULL, NULL)) != 0)
        return set_err(cl, rc, "%s", cte_conn_errmsg(c));
    if ((rc = cte_command_async(c, q->argc, q->argv, q->lens, req_done, q)) != 0)
        return set_err(cl, rc, "%s", cte_conn_errmsg(c));
    return 0;
}

/* Puts q on the retry list, which cte_cluster_wait_all re-sends. */
static void park(cte_cluster_t *cl, creq_t *q)
{
    q->next = NULL;
    *cl->retry_tail = q;
    cl->retry_tail = &q->next;
}

/* A reply: a redirect parks the request for cte_cluster_wait_all, anything else is final. */
static void req_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    creq_t *q = ud;
    cte_cluster_t *cl = q->cl;
    unsigned slot;
    const char *host;
    size_t hlen;
    int port, n = -1;
    enum redirect kind = status == CTE_E_SERVER && q->attempt + 1 < MAX_ATTEMPTS
                             ? redirect_parse(r->str, &slot, &host, &hlen, &port)
                             : R_NONE;
    if (kind == R_MOVED || kind == R_ASK) n = redirect_node(cl, node_of(cl, c), host, hlen, port);
    if (kind == R_NONE || ((kind == R_MOVED || kind == R_ASK) && n < 0)) {
        req_finish(q, status, r);
        return;
    }
    q->attempt++;
    q->to = n; /* MOVED, ASK: that node; TRYAGAIN, CLUSTERDOWN: the owner after a reload */
    q->asking = kind == R_ASK;
    q->due_ms = kind == R_WAIT ? now_ms() + backoff_ms(q->attempt) : 0;
    if (kind == R_MOVED) cl->slot[slot] = (uint16_t)n;
    if (kind != R_ASK) cl->stale = 1;
    park(cl, q);
}

int cte_cluster_command_async(cte_cluster_t *cl, const void *key, size_t klen, int argc,
                              const char *const *argv, const size_t *lens, cte_cluster_done_fn *fn,
                              void *ud)
{
    if (argc < 1) return CTE_E_INVAL;
    size_t size = sizeof(creq_t) + (size_t)argc * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        if (l < CTE_COPY_MAX) size += l + 1;
    }
    creq_t *q = cte__malloc(size);
    if (!q) return set_err(cl, CTE_E_NOMEM, "out of memory");
    *q = (creq_t){.cl = cl,
                  .fn = fn,
                  .ud = ud,
                  .slot = key ? (int)keyslot(key, klen) : -1,
                  .to = -1,
                  .argc = argc};
    q->argv = (const char **)(q + 1);
    q->lens = (size_t *)(q->argv + argc);
    char *p = (char *)(q->lens + argc);
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        q->lens[i] = l;
        q->argv[i] = argv[i];
        if (l >= CTE_COPY_MAX) continue;
        memcpy(p, argv[i], l);
        p[l] = '\0';
        q->argv[i] = p;
        p += l + 1;
    }
    int rc = req_send(cl, q);
    if (rc) {
        free(q);
        return rc;
    }
    cl->inflight++;
    return 0;
}

int cte_cluster_put_async(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                          const void *data, size_t len, double score, cte_cluster_done_fn *fn,
                          void *ud)
{
    const char *argv[6];
    size_t lens[6];
    cte__num_t o, sc;
    if (!tag || !blob || (!data && len) || score > 1) return CTE_E_INVAL;
    snprintf(o.s, sizeof o.s, "%" PRIu64, off);
    int argc = cte__put_argv(argv, lens, tag, blob, &o, data ? data : "", len, score, &sc);
    return cte_cluster_command_async(cl, tag, strlen(tag), argc, argv, lens, fn, ud);
}

int cte_cluster_get_async(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                          int64_t count, cte_cluster_done_fn *fn, void *ud)
{
    const char *argv[5];
    cte__num_t o, n;
    if (!tag || !blob) return CTE_E_INVAL;
    int argc = cte__get_argv(argv, tag, blob, &o, &n, off, count);
    return cte_cluster_command_async(cl, tag, strlen(tag), argc, argv, NULL, fn, ud);
}

/* One round: waits on every node with requests; returns the first failure. */
static int wait_round(cte_cluster_t *cl)
{
    int first = 0;
    for (size_t i = 0; i < cl->nnodes; i++) {
        cte_conn_t *c = cl->nodes[i].conn;
        if (!c || !cte_pending(c)) continue;
        int rc = cte_wait_all(c);
        if (rc < 0) {
            if (!first) first = set_err(cl, rc, "%s", cte_conn_errmsg(c));
            if (cte__broken(c)) {
                node_drop(cl, (int)i);
                cl->stale = 1;
            }
        }
    }
    return first;
}

int cte_cluster_wait_all(cte_cluster_t *cl)
{
    int first = 0;
    for (;;) {
        int rc = wait_round(cl);
        if (rc && !first) first = rc;
        if (!cl->retry) return first;
        if (cl->stale) cte_cluster_reload(cl); /* best effort: the map patched by MOVED stays */
        creq_t *list = cl->retry;
        cl->retry = NULL;
        cl->retry_tail = &cl->retry;
        while (list) {
            creq_t *q = list;
            list = q->next;
            q->next = NULL;
            sleep_ms(q->due_ms - now_ms());
            rc = req_send(cl, q);
            if (rc == CTE_E_CLUSTER && ++q->attempt < MAX_ATTEMPTS) { /* a slot uncovered */
                q->due_ms = now_ms() + backoff_ms(q->attempt);
                cl->stale = 1;
                park(cl, q);
            } else if (rc) {
                req_finish(q, rc, NULL);
            }
        }
    }
}

unsigned cte_cluster_pending(const cte_cluster_t *cl)
{
    return cl->inflight;
}

/* ---- the tag calls: each a loop of conn_for_key, the single-node call, retry ---- */

#define ROUTED(cl, tag, call)                                                                      \
    do {                                                                                           \
        cte_conn_t *conn;                                                                          \
        if (!(tag)) return CTE_E_INVAL;                                                            \
        size_t klen_ = strlen(tag);                                                                \
        int at_ = 0, rc_ = cte_cluster_conn_for_key((cl), (tag), klen_, &conn);                    \
        if (rc_) return rc_;                                                                       \
        do rc_ = (call);                                                                           \
        while (cte_cluster_retry((cl), (tag), klen_, &conn, &rc_, &at_));                          \
        return rc_;                                                                                \
    } while (0)

int cte_cluster_put(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                    const void *data, size_t len, double score, uint64_t *size)
{
    ROUTED(cl, tag, cte_put(conn, tag, blob, off, data, len, score, size));
}

int cte_cluster_get(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                    int64_t count, void *buf, size_t cap, size_t *len)
{
    ROUTED(cl, tag, cte_get(conn, tag, blob, off, count, buf, cap, len));
}

int cte_cluster_get_view(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t off,
                         int64_t count, const void **data, size_t *len)
{
    ROUTED(cl, tag, cte_get_view(conn, tag, blob, off, count, data, len));
}

int cte_cluster_size(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t *size)
{
    ROUTED(cl, tag, cte_size(conn, tag, blob, size));
}

int cte_cluster_truncate(cte_cluster_t *cl, const char *tag, const char *blob, uint64_t size,
                         uint64_t *newsize)
{
    ROUTED(cl, tag, cte_truncate(conn, tag, blob, size, newsize));
}

int cte_cluster_delete(cte_cluster_t *cl, const char *tag, const char *const *blobs, size_t n,
                       uint64_t *removed)
{
    ROUTED(cl, tag, cte_delete(conn, tag, blobs, n, removed));
}

int cte_cluster_score(cte_cluster_t *cl, const char *tag, const char *blob, double *score)
{
    ROUTED(cl, tag, cte_score(conn, tag, blob, score));
}

int cte_cluster_reorg(cte_cluster_t *cl, const char *tag, const char *blob, double score,
                      const char **tier)
{
    ROUTED(cl, tag, cte_reorg(conn, tag, blob, score, tier));
}

int cte_cluster_len(cte_cluster_t *cl, const char *tag, uint64_t *n)
{
    ROUTED(cl, tag, cte_len(conn, tag, n));
}

int cte_cluster_info(cte_cluster_t *cl, const char *tag, const char *blob, cte_blob_info_t *info)
{
    ROUTED(cl, tag, cte_info(conn, tag, blob, info));
}

int cte_cluster_list(cte_cluster_t *cl, const char *tag, cte_reply_t **names)
{
    ROUTED(cl, tag, cte_list(conn, tag, names));
}

int cte_cluster_scan(cte_cluster_t *cl, const char *tag, uint64_t cursor, const char *match,
                     unsigned count, uint64_t *next, cte_reply_t **names)
{
    ROUTED(cl, tag, cte_scan(conn, tag, cursor, match, count, next, names));
}

/* ---- whole-cluster queries ---- */

typedef struct fan {
    int node;
    int status;     /* 1 until answered */
    cte_reply_t *r; /* the reply (an ERROR when status is CTE_E_SERVER) */
    char msg[512];
} fan_t;

static void fan_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    fan_t *f = ud;
    f->status = status;
    if (status == 0 && !(f->r = cte_reply_copy(r))) f->status = CTE_E_NOMEM;
    snprintf(f->msg, sizeof f->msg, "%s",
             status == CTE_E_SERVER ? r->str
             : status               ? cte_conn_errmsg(c)
                                    : "");
}

static void fans_free(fan_t *f, size_t n)
{
    for (size_t i = 0; f && i < n; i++) cte_reply_free(f[i].r);
    free(f);
}

/* Sends argv to every primary at once and waits for all; on 0 *out[0..*n) holds one reply per
 * primary (the caller frees them with fans_free). Waits and retries on TRYAGAIN/CLUSTERDOWN. */
static int fan_out(cte_cluster_t *cl, int argc, const char *const *argv, fan_t **out, size_t *n)
{
    for (int attempt = 1;; attempt++) {
        if (cl->stale || cte_cluster_primaries(cl) == 0) cte_cluster_reload(cl);
        size_t np = cte_cluster_primaries(cl), k = 0;
        if (np == 0) {
            char why[sizeof cl->errmsg];
            memcpy(why, cl->errmsg, sizeof why);
            return set_err(cl, CTE_E_CLUSTER, "no primary known (%s)", why);
        }
        fan_t *f = cte__calloc(np, sizeof *f);
        if (!f) return set_err(cl, CTE_E_NOMEM, "out of memory");
        for (size_t i = 0; i < cl->nnodes && k < np; i++) {
            if (!cl->nodes[i].primary) continue;
            cte_conn_t *c;
            fan_t *fk = &f[k++];
            fk->node = (int)i;
            fk->status = 1;
            int rc = node_conn(cl, (int)i, &c);
            if (rc == 0 && (rc = cte_command_async(c, argc, argv, NULL, fan_done, fk)) != 0)
                set_err(cl, rc, "%s", cte_conn_errmsg(c));
            if (rc) {
                fk->status = rc;
                snprintf(fk->msg, sizeof fk->msg, "%s", cl->errmsg);
            }
        }
        wait_round(cl);
        int rc = 0, wait = 0;
        for (size_t i = 0; i < np && !rc; i++) {
            wait |= is_wait(f[i].msg);
            if (f[i].status == 1) f[i].status = CTE_E_CLOSED; /* never answered */
            if (f[i].status) rc = node_err(cl, f[i].node, f[i].status, f[i].msg);
        }
        if (rc == 0) {
            *out = f;
            *n = np;
            return 0;
        }
        fans_free(f, np);
        if (!wait || attempt >= MAX_ATTEMPTS) return rc;
        sleep_ms(backoff_ms(attempt));
        cl->stale = 1;
    }
}

typedef struct entry {
    cte_reply_t **slot; /* where the element sits in its node's reply (moved out at the end) */
    const char *tag, *blob;
    size_t tlen, blen;
    double score;   /* TSEARCH */
    long long time; /* TQUERY with a window: the mtime */
    int from;       /* index of the node's fan */
} entry_t;

static int name_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int entry_cmp_names(const entry_t *a, const entry_t *b)
{
    int c = name_cmp(a->tag, a->tlen, b->tag, b->tlen);
    if (c || !a->blob || !b->blob) return c;
    return name_cmp(a->blob, a->blen, b->blob, b->blen);
}

static int by_name(const void *x, const void *y)
{
    return entry_cmp_names(x, y);
}

/* Best first; scores within a relative 1e-12 are equal (two nodes may add a document's term
 * contributions in another order, which moves the last bits), then by tag and blob. */
static int by_score(const void *x, const void *y)
{
    const entry_t *a = x, *b = y;
    double d = a->score - b->score,
           m = fabs(a->score) > fabs(b->score) ? fabs(a->score) : fabs(b->score);
    if (fabs(d) > 1e-12 * m) return d > 0 ? -1 : 1;
    return entry_cmp_names(a, b);
}

/* Reads element e (a BULK name, or an ARRAY [tag, blob] or [tag, blob, score]) into *en. */
static int entry_read(cte_cluster_t *cl, cte_reply_t **e, int from, entry_t *en)
{
    const cte_reply_t *r = *e;
    *en = (entry_t){.slot = e, .from = from};
    if (r->kind == CTE_REPLY_BULK && r->str) {
        en->tag = r->str, en->tlen = r->len;
        return 0;
    }
    if (r->kind != CTE_REPLY_ARRAY || r->len < 2 || !r->elem[0]->str || !r->elem[1]->str)
        return set_err(cl, CTE_E_TYPE, "unexpected reply type from a node");
    en->tag = r->elem[0]->str, en->tlen = r->elem[0]->len;
    en->blob = r->elem[1]->str, en->blen = r->elem[1]->len;
    if (r->len > 2) {
        const cte_reply_t *s = r->elem[2];
        en->score = s->kind == CTE_REPLY_DOUBLE ? s->dval : s->str ? strtod(s->str, NULL) : 0;
    }
    return 0;
}

/* Collects the elements of every node's reply from index `first` on. */
static int entries_collect(cte_cluster_t *cl, fan_t *f, size_t nf, size_t first, entry_t **out,
                           size_t *n)
{
    size_t total = 0, k = 0;
    for (size_t i = 0; i < nf; i++) {
        if (f[i].r->kind != CTE_REPLY_ARRAY || f[i].r->len < first)
            return set_err(cl, CTE_E_TYPE, "unexpected reply type from a node");
        total += f[i].r->len - first;
    }
    entry_t *e = cte__malloc((total ? total : 1) * sizeof *e);
    if (!e) return set_err(cl, CTE_E_NOMEM, "out of memory");
    for (size_t i = 0; i < nf; i++)
        for (size_t j = first; j < f[i].r->len; j++)
            if (entry_read(cl, &f[i].r->elem[j], (int)i, &e[k++]) != 0) {
                free(e);
                return CTE_E_TYPE;
            }
    *out = e;
    *n = total;
    return 0;
}

/* The merged reply: [total] when with_total, then the first keep entries' elements (moved out
 * of the nodes' replies). */
static int build(cte_cluster_t *cl, entry_t *e, size_t keep, int with_total, uint64_t total,
                 cte_reply_t **out)
{
    size_t first = with_total ? 1 : 0;
    cte_reply_t *r = cte__reply_new(CTE_REPLY_ARRAY);
    if (!r || !(r->elem = cte__calloc(keep + first ? keep + first : 1, sizeof *r->elem))) {
        cte_reply_free(r);
        return set_err(cl, CTE_E_NOMEM, "out of memory");
    }
    if (with_total) {
        if (!(r->elem[0] = cte__reply_new(CTE_REPLY_INTEGER))) {
            cte_reply_free(r);
            return set_err(cl, CTE_E_NOMEM, "out of memory");
        }
        r->elem[0]->ival = (long long)total;
    }
    for (size_t i = 0; i < keep; i++) {
        r->elem[first + i] = *e[i].slot;
        *e[i].slot = NULL;
    }
    r->len = keep + first;
    *out = r;
    return 0;
}

static int totals(cte_cluster_t *cl, fan_t *f, size_t nf, uint64_t *total)
{
    *total = 0;
    for (size_t i = 0; i < nf; i++) {
        const cte_reply_t *t = cte_reply_elem(f[i].r, 0);
        if (!t || t->kind != CTE_REPLY_INTEGER || t->ival < 0)
            return set_err(cl, CTE_E_TYPE, "unexpected reply type from a node");
        *total += (uint64_t)t->ival;
    }
    return 0;
}

static void mtime_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    long long *t = ud;
    (void)c;
    for (size_t i = 0; status == 0 && i + 1 < cte_reply_len(r); i += 2) {
        const cte_reply_t *k = cte_reply_elem(r, i), *v = cte_reply_elem(r, i + 1);
        if (k->str && !strcmp(k->str, "mtime"))
            *t = v->kind == CTE_REPLY_INTEGER ? v->ival : v->str ? strtoll(v->str, NULL, 10) : -1;
    }
}

/* Asks each entry's node for its mtime (TINFO, pipelined per node); a blob gone meanwhile
 * keeps the time of the one before it on its node. */
static int mtimes(cte_cluster_t *cl, fan_t *f, entry_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cte_conn_t *c = cl->nodes[f[e[i].from].node].conn;
        const char *argv[] = {"TINFO", e[i].tag, e[i].blob};
        size_t lens[] = {5, e[i].tlen, e[i].blen};
        e[i].time = -1;
        int rc = c ? cte_command_async(c, 3, argv, lens, mtime_done, &e[i].time) : CTE_E_CLOSED;
        if (rc) {
            wait_round(cl);
            return set_err(cl, rc, "TINFO for the merge: %s", c ? cte_conn_errmsg(c) : "closed");
        }
    }
    int rc = wait_round(cl);
    if (rc) return rc;
    for (size_t i = 1; i < n; i++)
        if (e[i].time < 0 && e[i - 1].from == e[i].from) e[i].time = e[i - 1].time;
    return 0;
}

/* Merges the nodes' runs (each oldest first) by time, then tag and blob, keeping each node's
 * order; the result replaces e. */
static int merge_by_time(cte_cluster_t *cl, entry_t *e, size_t n, size_t nf)
{
    size_t *head = cte__calloc(nf + 1, sizeof *head), k = 0;
    entry_t *m = cte__malloc((n ? n : 1) * sizeof *m);
    if (!head || !m) {
        free(head);
        free(m);
        return set_err(cl, CTE_E_NOMEM, "out of memory");
    }
    /* runs are contiguous in e, node by node: head[i] = start of run i, head[nf] = n */
    size_t *end = cte__calloc(nf + 1, sizeof *end);
    if (!end) {
        free(head);
        free(m);
        return set_err(cl, CTE_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) end[e[i].from]++;
    for (size_t i = 0, at = 0; i < nf; i++) {
        head[i] = at;
        at += end[i];
        end[i] = at;
    }
    while (k < n) {
        size_t best = nf;
        for (size_t i = 0; i < nf; i++) {
            if (head[i] == end[i]) continue;
            const entry_t *a = &e[head[i]];
            if (best == nf) {
                best = i;
                continue;
            }
            const entry_t *b = &e[head[best]];
            if (a->time < b->time || (a->time == b->time && entry_cmp_names(a, b) < 0)) best = i;
        }
        m[k++] = e[head[best]++];
    }
    memcpy(e, m, n * sizeof *e);
    free(m);
    free(head);
    free(end);
    return 0;
}

static int query_merge(cte_cluster_t *cl, int argc, const char *const *argv, unsigned limit,
                       int window, uint64_t *total_out, cte_reply_t **out)
{
    fan_t *f;
    size_t nf, n;
    entry_t *e = NULL;
    uint64_t total;
    *out = NULL;
    int rc = fan_out(cl, argc, argv, &f, &nf);
    if (rc) return rc;
    if ((rc = totals(cl, f, nf, &total)) || (rc = entries_collect(cl, f, nf, 1, &e, &n))) goto done;
    if (!window)
        qsort(e, n, sizeof *e, by_name);
    else if ((rc = mtimes(cl, f, e, n)) || (rc = merge_by_time(cl, e, n, nf)))
        goto done;
    rc = build(cl, e, limit && limit < n ? limit : n, 1, total, out);
    if (rc == 0 && total_out) *total_out = total;
done:
    free(e);
    fans_free(f, nf);
    return rc;
}

int cte_cluster_query_tags(cte_cluster_t *cl, const char *regex, unsigned limit, uint64_t *total,
                           cte_reply_t **out)
{
    const char *argv[5];
    cte__num_t l;
    *out = NULL;
    if (!regex) return CTE_E_INVAL;
    int argc = cte__query_tags_argv(argv, &l, regex, limit);
    return query_merge(cl, argc, argv, limit, 0, total, out);
}

int cte_cluster_query_blobs(cte_cluster_t *cl, const char *tagregex, const char *blobregex,
                            int64_t since, int64_t until, unsigned limit, uint64_t *total,
                            cte_reply_t **out)
{
    const char *argv[10];
    cte__num_t num[3];
    *out = NULL;
    if (!tagregex || !blobregex) return CTE_E_INVAL;
    int argc = cte__query_blobs_argv(argv, num, tagregex, blobregex, since, until, limit);
    return query_merge(cl, argc, argv, limit, since >= 0 || until >= 0, total, out);
}

/* ---- TSEARCH in two phases ----
 * Phase 1 asks every primary for its statistics of the query (TSEARCH q STATS: N, the token
 * sum and each known query term's df) and sums them; phase 2 runs the search on every primary
 * with those sums (GLOBALSTATS), so every node scores as one node holding all the blobs would,
 * and the merge of the nodes' best LIMIT is the global best LIMIT with the same scores. Nodes
 * that do not know STATS (an error reply) are searched with their own statistics. */

#define GLOBAL_TERMS_MAX 4096 /* as the server's bound */

typedef struct gterm {
    const char *s; /* in a phase-1 reply */
    size_t len;
    uint64_t df;
} gterm_t;

typedef struct gstats {
    uint64_t docs, tokens;
    gterm_t *t;
    size_t n;
} gstats_t;

static int gstats_add(cte_cluster_t *cl, gstats_t *g, const cte_reply_t *r)
{
    const cte_reply_t *terms = cte_reply_elem(r, 2);
    if (r->kind != CTE_REPLY_ARRAY || r->len != 3 || !is_int(r->elem[0], 0, LLONG_MAX) ||
        !is_int(r->elem[1], 0, LLONG_MAX) || terms->kind != CTE_REPLY_ARRAY || terms->len % 2)
        return set_err(cl, CTE_E_TYPE, "unexpected TSEARCH STATS reply from a node");
    g->docs += (uint64_t)r->elem[0]->ival;
    g->tokens += (uint64_t)r->elem[1]->ival;
    for (size_t i = 0; i < terms->len; i += 2) {
        const cte_reply_t *t = terms->elem[i], *df = terms->elem[i + 1];
        if (!t->str || !is_int(df, 0, LLONG_MAX))
            return set_err(cl, CTE_E_TYPE, "unexpected TSEARCH STATS reply from a node");
        size_t k = 0;
        while (k < g->n && (g->t[k].len != t->len || memcmp(g->t[k].s, t->str, t->len))) k++;
        if (k == g->n) {
            if (g->n == GLOBAL_TERMS_MAX)
                return set_err(cl, CTE_E_LIMIT, "more than %d query terms", GLOBAL_TERMS_MAX);
            g->t[g->n++] = (gterm_t){t->str, t->len, 0};
        }
        g->t[k].df += (uint64_t)df->ival;
    }
    return 0;
}

/* The argument list of phase 2: base[0..nbase) then GLOBALSTATS and g's sums (numbers are
 * formatted into nums, room for 3 + g->n). */
static const char **gstats_argv(const char *const *base, int nbase, const gstats_t *g,
                                cte__num_t *nums, int *argc)
{
    const char **argv = cte__malloc((size_t)(nbase + 4 + 2 * (int)g->n) * sizeof *argv);
    if (!argv) return NULL;
    memcpy(argv, base, (size_t)nbase * sizeof *argv);
    int n = nbase;
    argv[n++] = "GLOBALSTATS";
    snprintf(nums[0].s, sizeof nums[0].s, "%" PRIu64, g->docs);
    snprintf(nums[1].s, sizeof nums[1].s, "%" PRIu64, g->tokens);
    snprintf(nums[2].s, sizeof nums[2].s, "%zu", g->n);
    for (int i = 0; i < 3; i++) argv[n++] = nums[i].s;
    for (size_t i = 0; i < g->n; i++) {
        snprintf(nums[3 + i].s, sizeof nums[3 + i].s, "%" PRIu64, g->t[i].df);
        argv[n++] = g->t[i].s; /* tokens: NUL-free, NUL-terminated in their reply */
        argv[n++] = nums[3 + i].s;
    }
    *argc = n;
    return argv;
}

/* Phase 2 (or the only phase without statistics): fans argv out, merges into *out. */
static int search_merge(cte_cluster_t *cl, int argc, const char *const *argv, unsigned limit,
                        int withscores, cte_reply_t **out)
{
    fan_t *f;
    size_t nf, n;
    entry_t *e = NULL;
    int rc = fan_out(cl, argc, argv, &f, &nf);
    if (rc) return rc;
    if ((rc = entries_collect(cl, f, nf, 0, &e, &n)) != 0) goto done;
    qsort(e, n, sizeof *e, by_score);
    size_t keep = limit ? limit : DEFAULT_SEARCH_LIMIT;
    if (keep > n) keep = n;
    for (size_t i = 0; i < keep && !withscores; i++) {
        cte_reply_t *hit = *e[i].slot;
        for (size_t j = 2; j < hit->len; j++) cte_reply_free(hit->elem[j]);
        if (hit->len > 2) hit->len = 2;
    }
    rc = build(cl, e, keep, 0, 0, out);
done:
    free(e);
    fans_free(f, nf);
    return rc;
}

int cte_cluster_search(cte_cluster_t *cl, const char *query, const char *tagregex,
                       const char *blobregex, unsigned limit, int withscores, cte_reply_t **out)
{
    const char *base[9], *stats[] = {"TSEARCH", query, "STATS"}, **argv = NULL;
    cte__num_t l, *nums = NULL;
    gstats_t g = {0};
    fan_t *f = NULL;
    size_t nf = 0;
    *out = NULL;
    if (!query) return CTE_E_INVAL;
    int nbase = cte__search_argv(base, &l, query, tagregex, blobregex, limit, 1), argc;
    int rc = fan_out(cl, 3, stats, &f, &nf);
    if (rc == CTE_E_SERVER) /* a node without STATS: every node's own statistics */
        return search_merge(cl, nbase, base, limit, withscores, out);
    if (rc) return rc;
    if (!(g.t = cte__malloc(GLOBAL_TERMS_MAX * sizeof *g.t))) {
        rc = set_err(cl, CTE_E_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nf && !rc; i++) rc = gstats_add(cl, &g, f[i].r);
    if (rc) goto done;
    if (g.docs == 0) { /* nothing indexed anywhere: one node would find nothing */
        if (!(*out = cte__reply_new(CTE_REPLY_ARRAY)))
            rc = set_err(cl, CTE_E_NOMEM, "out of memory");
        goto done;
    }
    if (!(nums = cte__malloc((3 + g.n) * sizeof *nums)) ||
        !(argv = gstats_argv(base, nbase, &g, nums, &argc))) {
        rc = set_err(cl, CTE_E_NOMEM, "out of memory");
        goto done;
    }
    rc = search_merge(cl, argc, argv, limit, withscores, out);
done:
    free(argv);
    free(nums);
    free(g.t);
    fans_free(f, nf);
    return rc;
}
