/* bus.h - the cluster bus: TCP links between cluster nodes, gossip, failure detection.
 *
 * The bus implements the cluster_bus_* hooks of server/cluster/cluster.h (start, stop, cron,
 * node freed, broadcast, CLUSTER LINKS, message names) on the server's libuv loop; messages
 * are those of bus_msg.h. It changes the cluster state only through cluster.h.
 *
 * Links: one outbound link per known node (the node's `link`, made by the cron, re-made with
 * a backoff of BUS_BACKOFF_MIN_MS doubling up to BUS_BACKOFF_MAX_MS while the node refuses),
 * and the inbound links other nodes open to us (a node's `inbound_link` once a message from
 * a known sender came on it). Every link reads at most one message at a time into a buffer
 * of at most its checked length (<= BUS_MSG_MAX) and queues at most BUS_SENDBUF_MAX bytes of
 * output; a link past that, one that sends anything malformed, an inbound link that stays
 * without a known sender for the handshake timeout, and one that stalls inside a message
 * for the node timeout are closed. Loop thread only. */
#ifndef CTE_SERVER_CLUSTER_BUS_H
#define CTE_SERVER_CLUSTER_BUS_H

#define BUS_BACKOFF_MIN_MS 100
#define BUS_BACKOFF_MAX_MS 1000
#define BUS_SENDBUF_MAX (16 * 1024 * 1024)
/* handshakes (and inbound links without a known sender) expire after
 * max(cluster-node-timeout, BUS_HANDSHAKE_MIN_MS), as Redis */
#define BUS_HANDSHAKE_MIN_MS 1000

#endif
