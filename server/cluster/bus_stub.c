/* bus_stub.c - the cluster bus's hooks (cluster.h) for a node without a bus: no links, no
 * gossip. server/cluster/bus.c replaces this file (it is deleted when the bus lands), so a
 * single-node cluster works before and every hook has one definition after. Loop thread. */
#include "server/cluster/cluster.h"
#include "server/reply.h"

int cluster_bus_start(char *err, size_t errlen)
{
    return 0;
}

void cluster_bus_stop(void) {}

void cluster_bus_cron(long long now_ms) {}

void cluster_bus_node_freed(cluster_node_t *n) {}

void cluster_bus_broadcast_pong(void) {}

void cluster_bus_links_reply(client_t *c)
{
    reply_array(c, 0);
}

const char *cluster_bus_msg_name(int t)
{
    return NULL;
}
