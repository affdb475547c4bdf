/* route.c - one server or a Redis Cluster behind the redis binding (see route.h).
 *
 * The node table grows as CLUSTER SLOTS replies and redirects name nodes (bounded by
 * ROUTE_NODES_MAX); a node is its host and port as the cluster names it, so a seed given as
 * "localhost" and listed as "127.0.0.1" is two entries, two connections. slot[] holds the
 * index of each slot's node or -1; a slot nobody is known to serve goes to the node that
 * answered last, whose -MOVED or -CLUSTERDOWN then tells. Connections are opened on first use
 * and dropped when they break. Runs on its binding's thread only. */
#include "route.h"

#include "common/keyslot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKOFF_FIRST_MS 10
#define BACKOFF_MAX_MS 500

typedef struct route_node {
    char host[ROUTE_HOST_MAX + 1];
    int port;
    cte_conn_t *conn; /* NULL until first used, or after it broke */
} route_node_t;

struct route {
    int cluster, timeout_ms;
    char *password;
    route_node_t *node;
    size_t n, cap;
    size_t last; /* the node that answered last: asked first for the map */
    int16_t slot[KEYSLOT_COUNT];
    char err[512];
    route_stats_t st;
};

int route_host_ok(const char *h, size_t n)
{
    return n > 0 && n <= ROUTE_HOST_MAX && strcspn(h, "/@?#[] \t\r\n") >= n;
}

/* The index of host[0..hlen):port, added when new; -1 when the host or port is not valid or
 * the table is full. */
static int node_index(route_t *r, const char *host, size_t hlen, long long port)
{
    if (!route_host_ok(host, hlen) || port < 1 || port > 65535) return -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->node[i].port == port && strlen(r->node[i].host) == hlen &&
            memcmp(r->node[i].host, host, hlen) == 0)
            return (int)i;
    if (r->n == ROUTE_NODES_MAX) return -1;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 8;
        r->node = util_xrealloc(r->node, r->cap * sizeof *r->node);
    }
    route_node_t *nd = &r->node[r->n];
    memcpy(nd->host, host, hlen);
    nd->host[hlen] = '\0';
    nd->port = (int)port;
    nd->conn = NULL;
    return (int)r->n++;
}

static void node_drop(route_t *r, size_t i)
{
    cte_conn_free(r->node[i].conn);
    r->node[i].conn = NULL;
}

/* Keeps the last connection failure's message (the connection may be dropped after). */
static int conn_failed(route_t *r, size_t i, int rc, const char *what)
{
    const route_node_t *nd = &r->node[i];
    snprintf(r->err, sizeof r->err, "%s %s:%d: %s (%s)", what, nd->host, nd->port, cte_strerror(rc),
             nd->conn ? cte_conn_errmsg(nd->conn) : "");
    return rc;
}

/* Node i's connection, opened (and authenticated) when it has none. 0 or a failure. */
static int node_conn(route_t *r, size_t i, cte_conn_t **out)
{
    route_node_t *nd = &r->node[i];
    if ((*out = nd->conn)) return 0;
    char addr[ROUTE_HOST_MAX + 32];
    snprintf(addr, sizeof addr, strchr(nd->host, ':') ? "tcp://[%s]:%d" : "tcp://%s:%d", nd->host,
             nd->port);
    if (!(nd->conn = cte_conn_new())) return -ENOMEM;
    cte_conn_set_timeout(nd->conn, r->timeout_ms);
    int rc = cte_conn_open(nd->conn, addr, 0);
    if (rc < 0) {
        conn_failed(r, i, rc, "cannot connect to");
        node_drop(r, i);
        return rc;
    }
    if (r->password) {
        cte_reply_t *rep = NULL;
        rc = cte_call(nd->conn, &rep, "AUTH", r->password, NULL);
        cte_reply_free(rep);
        if (rc < 0) {
            conn_failed(r, i, rc, "AUTH failed on");
            node_drop(r, i);
            return rc;
        }
    }
    *out = nd->conn;
    return 0;
}

/* Sends the command to node i (ASKING first when asking). As cte_command; a broken
 * connection is dropped. */
static int send_to(route_t *r, size_t i, cte_reply_t **reply, int argc, const char *const *argv,
                   const size_t *lens, int asking)
{
    cte_conn_t *c;
    int rc = node_conn(r, i, &c);
    if (rc < 0) return rc;
    if (asking) {
        r->st.sent++;
        rc = cte_call(c, reply, "ASKING", NULL);
        if (rc == 0) {
            cte_reply_free(*reply);
            *reply = NULL;
        }
    }
    if (rc == 0) {
        r->st.sent++;
        rc = cte_command(c, reply, argc, argv, lens);
    }
    if (rc == 0 || rc == CTE_E_SERVER) {
        r->last = i;
        if (rc == CTE_E_SERVER) snprintf(r->err, sizeof r->err, "%s", cte_conn_errmsg(c));
        return rc;
    }
    conn_failed(r, i, rc, "lost");
    node_drop(r, i);
    return rc;
}

/* One CLUSTER SLOTS entry: [start, end, [host, port, ...], replicas...]. 0, or -1 when it is
 * malformed. An empty host (or "?") is the host of the node that answered. */
static int slots_entry(route_t *r, size_t from, const cte_reply_t *e)
{
    if (cte_reply_kind(e) != CTE_REPLY_ARRAY || cte_reply_len(e) < 3) return -1;
    const cte_reply_t *m = cte_reply_elem(e, 2);
    long long lo = cte_reply_int(cte_reply_elem(e, 0)), hi = cte_reply_int(cte_reply_elem(e, 1));
    if (lo < 0 || hi < lo || hi >= KEYSLOT_COUNT || cte_reply_kind(m) != CTE_REPLY_ARRAY ||
        cte_reply_len(m) < 2)
        return -1;
    size_t hlen;
    const char *host = cte_reply_str(cte_reply_elem(m, 0), &hlen);
    if (!host) return -1;
    if (hlen == 0 || (hlen == 1 && host[0] == '?')) {
        host = r->node[from].host;
        hlen = strlen(host);
    }
    int idx = node_index(r, host, hlen, cte_reply_int(cte_reply_elem(m, 1)));
    if (idx < 0) return -1;
    for (long long s = lo; s <= hi; s++) r->slot[s] = (int16_t)idx;
    return 0;
}

/* Reads the slot map with CLUSTER SLOTS from the node that answered last, else from each
 * known node in turn. 0, or the last failure (r->err says why). */
static int refresh(route_t *r)
{
    int rc = CTE_E_CLOSED;
    r->st.refreshes++;
    for (size_t k = 0; k < r->n; k++) {
        size_t i = (r->last + k) % r->n;
        cte_reply_t *rep = NULL;
        const char *argv[] = {"CLUSTER", "SLOTS"};
        rc = send_to(r, i, &rep, 2, argv, NULL, 0);
        if (rc == 0 && cte_reply_kind(rep) != CTE_REPLY_ARRAY) rc = CTE_E_TYPE;
        if (rc == 0) {
            memset(r->slot, 0xff, sizeof r->slot);
            for (size_t j = 0; j < cte_reply_len(rep) && rc == 0; j++)
                if (slots_entry(r, i, cte_reply_elem(rep, j)) < 0) rc = CTE_E_PROTOCOL;
            if (rc)
                snprintf(r->err, sizeof r->err, "malformed CLUSTER SLOTS reply from %s:%d",
                         r->node[i].host, r->node[i].port);
        }
        cte_reply_free(rep);
        if (rc == 0) return 0;
    }
    return rc;
}

/* "MOVED <slot> <host>:<port>" or "ASK ...": the node named (added when new), or -1. An
 * empty host is the host of node from (Redis sends ":port" when it knows no endpoint). */
static int redirect_target(route_t *r, size_t from, const char *msg, size_t skip)
{
    const char *p = msg + skip, *colon;
    char *end;
    long slot = strtol(p, &end, 10);
    if (end == p || *end != ' ' || slot < 0 || slot >= KEYSLOT_COUNT) return -1;
    p = end + 1;
    if (!(colon = strrchr(p, ':'))) return -1;
    long long port = strtoll(colon + 1, &end, 10);
    if (*end) return -1;
    if (colon == p) return node_index(r, r->node[from].host, strlen(r->node[from].host), port);
    return node_index(r, p, (size_t)(colon - p), port);
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void backoff(int attempt)
{
    int ms = BACKOFF_FIRST_MS << (attempt < 6 ? attempt : 6);
    if (ms > BACKOFF_MAX_MS) ms = BACKOFF_MAX_MS;
    util_sleep_until(util_now_ns() + (int64_t)ms * 1000000);
}

int route_command(route_t *r, cte_reply_t **reply, int argc, const char *const *argv,
                  const size_t *lens)
{
    *reply = NULL;
    if (!r->cluster) return send_to(r, 0, reply, argc, argv, lens, 0);
    unsigned slot = keyslot(argv[1], lens ? lens[1] : strlen(argv[1]));
    int redirects = 0, retries = 0, asking = 0;
    int target = r->slot[slot];
    for (;;) {
        size_t i = target >= 0 ? (size_t)target : r->last;
        int rc = send_to(r, i, reply, argc, argv, lens, asking);
        asking = 0;
        if (rc == 0) return 0;
        const char *msg = rc == CTE_E_SERVER ? cte_reply_str(*reply, NULL) : NULL;
        if (msg && (has_prefix(msg, "MOVED ") || has_prefix(msg, "ASK "))) {
            int moved = msg[0] == 'M';
            *(moved ? &r->st.moved : &r->st.ask) += 1;
            int to = redirect_target(r, i, msg, moved ? 6 : 4);
            if (to < 0 || ++redirects > ROUTE_REDIRECTS_MAX) return rc;
            if (moved) {
                refresh(r); /* as JedisCluster: the whole map; the redirect wins for this slot */
                r->slot[slot] = (int16_t)to;
            }
            asking = !moved;
            target = to;
        } else if (!msg || has_prefix(msg, "TRYAGAIN") || has_prefix(msg, "CLUSTERDOWN") ||
                   has_prefix(msg, "LOADING")) {
            if (retries >= ROUTE_RETRIES_MAX) return rc;
            r->st.retries++;
            backoff(retries++);
            refresh(r);
            target = r->slot[slot];
        } else {
            return rc;
        }
        cte_reply_free(*reply);
        *reply = NULL;
    }
}

int route_open(route_t **out, const char *host, int port, const char *password, int timeout_ms,
               int cluster, util_err_t *e)
{
    *out = NULL;
    route_t *r = util_xcalloc(1, sizeof *r);
    r->cluster = cluster;
    r->timeout_ms = timeout_ms;
    r->password = password ? util_xstrdup(password) : NULL;
    memset(r->slot, 0xff, sizeof r->slot);
    cte_conn_t *c;
    int rc;
    if (node_index(r, host, strlen(host), port) < 0)
        rc = util_fail(e, "redis: '%s' is not a host name or address", host);
    else if ((rc = node_conn(r, 0, &c)) < 0 || (cluster && (rc = refresh(r)) < 0))
        util_fail(e, "redis: %s%s", cluster ? "cluster: " : "", r->err);
    if (rc < 0) {
        route_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void route_free(route_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) node_drop(r, i);
    free(r->node);
    free(r->password);
    free(r);
}

const char *route_errmsg(const route_t *r)
{
    return r->err;
}

route_stats_t route_stats(const route_t *r)
{
    return r->st;
}
