/* route.h - where the redis binding's commands go: one server, or (redis.cluster=true) the
 * Redis Cluster node that serves the key's hash slot, as Jedis's JedisCluster sends them.
 *
 * A route owns one synchronous libcte connection per node it has talked to. In cluster mode it
 * keeps the slot map read with CLUSTER SLOTS and, for each command, sends it to the owner of
 * the slot of argv[1] (common/keyslot.h). An -ASK reply makes it send ASKING and the command to
 * the node named (once, the map unchanged); -MOVED re-reads the map, as JedisCluster does, and
 * sends the command to the node named; at most ROUTE_REDIRECTS_MAX redirects per command.
 * -TRYAGAIN, -CLUSTERDOWN, -LOADING (a restarted node reading its AOF) and a node that
 * cannot be reached are retried after a pause that
 * doubles from 10 ms up to 500 ms, at most ROUTE_RETRIES_MAX times, the map re-read before each
 * retry. One route per thread, used from that thread only. */
#ifndef YCSB_ROUTE_H
#define YCSB_ROUTE_H

#include "util.h"

#include "cte/cte.h"

#include <stddef.h>
#include <stdint.h>

#define ROUTE_REDIRECTS_MAX 5 /* JedisCluster's default maxAttempts */
#define ROUTE_RETRIES_MAX 10
#define ROUTE_NODES_MAX 1024 /* nodes a CLUSTER SLOTS reply or a redirect may introduce */
#define ROUTE_HOST_MAX 255

typedef struct route route_t;

/* What a route counts: commands sent (redirected ones and ASKINGs included), -MOVED and -ASK
 * replies, retries after TRYAGAIN, CLUSTERDOWN or a lost connection, CLUSTER SLOTS reads. */
typedef struct route_stats {
    uint64_t sent, moved, ask, retries, refreshes;
} route_stats_t;

/* 1 when host[0..n) can be a host name or address (1..ROUTE_HOST_MAX bytes, none of
 * "/@?#[]", blanks or line ends), else 0. */
int route_host_ok(const char *host, size_t n);

/* Connects to host:port (AUTH password when not NULL; timeout_ms as cte_conn_set_timeout) and,
 * when cluster is set, reads the slot map from it. 0 with *out the caller's (route_free), or a
 * failure status with e saying why and *out NULL. */
int route_open(route_t **out, const char *host, int port, const char *password, int timeout_ms,
               int cluster, util_err_t *e);
/* Closes every connection and frees r; NULL is fine. */
void route_free(route_t *r);

/* Sends argv[0..argc) (argc >= 2 in cluster mode: argv[1] is the key) and waits, following
 * the cluster as described at the top. Returns as cte_command: 0 or CTE_E_SERVER with *reply
 * the caller's (the last reply, an ERROR for CTE_E_SERVER: a redirect beyond the limit, or
 * TRYAGAIN/CLUSTERDOWN after the last retry, is returned as such), or the failure of the last
 * connection tried with *reply NULL. */
int route_command(route_t *r, cte_reply_t **reply, int argc, const char *const *argv,
                  const size_t *lens);
/* The message of the last failure (the server's text after CTE_E_SERVER); owned by r, valid
 * until its next call. */
const char *route_errmsg(const route_t *r);
/* The counters since route_open. */
route_stats_t route_stats(const route_t *r);

#endif
