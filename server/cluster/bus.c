/* server/cluster/bus.c - the cluster bus: links, MEET/PING/PONG gossip, FAIL, UPDATE, PUBLISH.
 *
 * Behaves as Redis Cluster 7.0's bus (cluster.c: clusterProcessPacket, clusterCron,
 * clusterSendPing) on our own wire format (bus_msg.h, docs/cluster-bus.md):
 *   - a node met by CLUSTER MEET is a handshake node with a random id; the bus connects it,
 *     sends MEET, and renames it to the id of the first PONG. A node that gets a MEET from an
 *     unknown sender adds it as a handshake node too and connects back. Nodes learned from the
 *     gossip of a known node are added with their real id and connected, so one MEET joins a
 *     whole cluster. Unknown senders get a PONG to a PING, nothing else.
 *   - each node is pinged when its last PONG is older than node-timeout/2, and once a second
 *     the node with the oldest PONG among five random ones; a ping unanswered for node-timeout
 *     (and no other data from the node meanwhile) sets PFAIL. Gossip carries PFAIL/FAIL views
 *     as failure reports; when the reports of a majority of slot-serving masters (myself
 *     included) agree, the node is FAIL and a FAIL message goes to every node. A FAIL master
 *     with slots that answers again is cleared after 2 * node-timeout (there are no replicas
 *     to promote), a master without slots at once.
 *   - slot claims are applied by config epoch (cluster_apply_slots); a sender that claims slots
 *     we know a newer owner of gets an UPDATE; equal config epochs of two masters are resolved
 *     by cluster_handle_epoch_collision; current epochs propagate as a maximum.
 *   - a PUBLISH goes to every node (clusterPropagatePublish), which delivers it to its own
 *     subscribers only (pubsub_publish) and sends it nowhere else.
 * One departure from Redis: a node that this node newly flags PFAIL is told to every other
 * node at once (a PING each), so failure reports meet the quorum within about node-timeout
 * instead of waiting for the next periodic ping.
 *
 * A link is freed with uv_close; its memory lives until the close callback, so a message
 * handler may free the link it runs on (link->closing then stops the reading). Loop thread
 * only; this file, net.c and main.c are the ones that include uv.h. */
#include "server/cluster/bus.h"

#include "common/alloc.h"
#include "common/buf.h"
#include "common/dict.h"
#include "common/log.h"
#include "common/status.h"
#include "common/util.h"
#include "server/cluster/bus_msg.h"
#include "server/cluster/cluster.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

_Static_assert(BUS_ID_LEN == CLUSTER_NAMELEN && BUS_IP_LEN == CLUSTER_IPLEN, "field sizes");
_Static_assert(BUS_SLOT_BYTES == CLUSTER_SLOTS / 8, "slot bitmap");
_Static_assert(BUS_TYPE_COUNT <= CLUSTER_MSG_TYPES, "stats arrays");

#define READ_CHUNK (64 * 1024)

typedef struct cluster_link {
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_write_t wreq;
    cluster_node_t *node; /* NULL: an inbound link whose sender is not known (yet) */
    int inbound;
    int connected; /* the TCP connection is up (inbound links always) */
    int writing;   /* a uv_write of `inflight` is pending */
    int closing;
    long long ctime;                  /* created, Unix ms */
    long long rx_ms;                  /* the last byte received, or ctime */
    buf_t rbuf;                       /* the message being read */
    uint32_t want;                    /* its length once bus_msg_peek checked it, else 0 */
    buf_t sbuf;                       /* queued output */
    buf_t inflight;                   /* output handed to uv_write */
    struct cluster_link *prev, *next; /* every open link */
} cluster_link_t;

/* The reconnection backoff of a node, keyed by its pointer. */
typedef struct peer {
    dict_node_t dn;
    const cluster_node_t *node;
    long long next_connect_ms;
    long long backoff_ms;
} peer_t;

typedef struct listener {
    uv_tcp_t tcp;
    struct listener *next;
} listener_t;

static listener_t *listeners;
static cluster_link_t *links;
static dict_t peers;
static int started;
static long long last_random_ping_ms;
static char read_chunk[READ_CHUNK];

static void link_free(cluster_link_t *l);
static void send_ping(cluster_link_t *l, int type);

/* ---- small helpers ------------------------------------------------------------------------ */

static long long node_timeout(void)
{
    return cluster_node_timeout();
}

static long long handshake_timeout(void)
{
    long long t = node_timeout();
    return t < BUS_HANDSHAKE_MIN_MS ? BUS_HANDSHAKE_MIN_MS : t;
}

static int is_master(const cluster_node_t *n)
{
    return (n->flags & CLUSTER_NODE_MASTER) != 0;
}
static int in_handshake(const cluster_node_t *n)
{
    return (n->flags & CLUSTER_NODE_HANDSHAKE) != 0;
}

/* The address of a socket (peer or local side) as text into ip (CLUSTER_IPLEN). 0 or -1. */
static int sock_ip(const cluster_link_t *l, int peer, char *ip)
{
    struct sockaddr_storage ss;
    int n = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    int rc = peer ? uv_tcp_getpeername(&l->tcp, (struct sockaddr *)&ss, &n)
                  : uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&ss, &n);
    if (rc < 0) return -1;
    const void *a;
    if (ss.ss_family == AF_INET)
        a = &((struct sockaddr_in *)&ss)->sin_addr;
    else if (ss.ss_family == AF_INET6)
        a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
    else
        return -1;
    if (!inet_ntop(ss.ss_family, a, ip, CLUSTER_IPLEN)) return -1;
    if (ss.ss_family == AF_INET6 && strncmp(ip, "::ffff:", 7) == 0 && strchr(ip, '.'))
        memmove(ip, ip + 7, strlen(ip + 7) + 1); /* an IPv4 peer on a dual-stack socket */
    return 0;
}

static const char *link_name(const cluster_link_t *l)
{
    return l->node ? l->node->id : "(unknown node)";
}

/* ---- per-node reconnection backoff ------------------------------------------------------ */

static const void *peer_key(const dict_node_t *n, size_t *len)
{
    *len = sizeof(((const peer_t *)n)->node);
    return &((const peer_t *)n)->node;
}

static void peer_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t peer_type = {peer_key, peer_free};

static peer_t *peer_get(const cluster_node_t *n)
{
    uint32_t h = dict_hash(&n, sizeof(n));
    peer_t *p = (peer_t *)dict_find(&peers, &n, sizeof(n), h);
    if (p) return p;
    p = xcalloc(1, sizeof(*p));
    p->node = n;
    p->dn.hash = h;
    dict_insert(&peers, &p->dn);
    return p;
}

static void peer_forget(const cluster_node_t *n)
{
    dict_node_t *d = dict_unlink(&peers, &n, sizeof(n), dict_hash(&n, sizeof(n)));
    if (d) xfree(d);
}

/* The connection to n failed or broke: the next attempt waits the backoff, which doubles. */
static void peer_backoff(const cluster_node_t *n, long long now)
{
    peer_t *p = peer_get(n);
    p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BUS_BACKOFF_MIN_MS;
    if (p->backoff_ms > BUS_BACKOFF_MAX_MS) p->backoff_ms = BUS_BACKOFF_MAX_MS;
    p->next_connect_ms = now + p->backoff_ms;
}

/* ---- links: life cycle and output ------------------------------------------------------- */

static cluster_link_t *link_new(cluster_node_t *n, int inbound)
{
    cluster_link_t *l = xcalloc(1, sizeof(*l));
    uv_tcp_init(srv.loop, &l->tcp);
    l->tcp.data = l;
    l->node = n;
    l->inbound = inbound;
    l->ctime = l->rx_ms = time_ms();
    buf_init(&l->rbuf);
    buf_init(&l->sbuf);
    buf_init(&l->inflight);
    l->next = links;
    if (links) links->prev = l;
    links = l;
    return l;
}

static void on_link_closed(uv_handle_t *h)
{
    cluster_link_t *l = h->data;
    buf_deinit(&l->rbuf);
    buf_deinit(&l->sbuf);
    buf_deinit(&l->inflight);
    xfree(l);
}

/* Closes l and detaches it from its node; an outbound link's node reconnects after its
 * backoff. Safe to call twice. */
static void link_free(cluster_link_t *l)
{
    if (l->closing) return;
    l->closing = 1;
    if (l->node) {
        if (l->node->link == l) {
            l->node->link = NULL;
            peer_backoff(l->node, time_ms());
        }
        if (l->node->inbound_link == l) l->node->inbound_link = NULL;
    }
    if (l->prev)
        l->prev->next = l->next;
    else
        links = l->next;
    if (l->next) l->next->prev = l->prev;
    uv_close((uv_handle_t *)&l->tcp, on_link_closed);
}

static void link_flush(cluster_link_t *l);

static void on_written(uv_write_t *req, int status)
{
    cluster_link_t *l = req->data;
    l->writing = 0;
    buf_clear(&l->inflight);
    buf_shrink(&l->inflight, READ_CHUNK);
    if (l->closing) return;
    if (status < 0) {
        log_verbose("Cluster bus: write to %s failed: %s", link_name(l), uv_strerror(status));
        link_free(l);
        return;
    }
    link_flush(l);
}

/* Hands the queued output to one uv_write (the next waits for its callback). */
static void link_flush(cluster_link_t *l)
{
    if (l->closing || !l->connected || l->writing || !l->sbuf.len) return;
    buf_t t = l->inflight;
    l->inflight = l->sbuf;
    l->sbuf = t;
    buf_clear(&l->sbuf);
    uv_buf_t b = uv_buf_init(l->inflight.data, (unsigned)l->inflight.len);
    l->wreq.data = l;
    int rc = uv_write(&l->wreq, (uv_stream_t *)&l->tcp, &b, 1, on_written);
    if (rc < 0) {
        log_verbose("Cluster bus: write to %s failed: %s", link_name(l), uv_strerror(rc));
        link_free(l);
        return;
    }
    l->writing = 1;
}

/* Queues message m on l (a no-op for NULL or a closing link) and counts it. */
static void link_send(cluster_link_t *l, const bus_msg_t *m)
{
    if (!l || l->closing) return;
    if (l->sbuf.len + l->inflight.len > BUS_SENDBUF_MAX) {
        log_warning("Cluster bus: freeing the link %s node %s: its send buffer is past %d bytes",
                    l->inbound ? "from" : "to", link_name(l), BUS_SENDBUF_MAX);
        link_free(l);
        return;
    }
    bus_msg_encode(m, &l->sbuf);
    cluster->stats_msg_sent[m->hdr.type]++;
    link_flush(l);
}

/* ---- building messages ------------------------------------------------------------------ */

static uint16_t wire_flags(uint32_t f)
{
    uint16_t w = 0;
    w |= (f & CLUSTER_NODE_SLAVE) ? BUS_F_REPLICA : BUS_F_PRIMARY;
    if (f & CLUSTER_NODE_PFAIL) w |= BUS_F_PFAIL;
    if (f & CLUSTER_NODE_FAIL) w |= BUS_F_FAIL;
    if (f & CLUSTER_NODE_NOADDR) w |= BUS_F_NOADDR;
    if (f & CLUSTER_NODE_NOFAILOVER) w |= BUS_F_NOFAILOVER;
    return w;
}

/* The header of every message this node sends: myself's id, epochs, address and slots (a
 * replica's are its primary's, as Redis). */
static void build_hdr(bus_hdr_t *h, int type)
{
    const cluster_node_t *me = cluster->myself;
    const cluster_node_t *primary =
        (me->flags & CLUSTER_NODE_SLAVE) && me->replicaof ? me->replicaof : me;
    memset(h, 0, sizeof(*h));
    h->type = type;
    h->flags = wire_flags(me->flags) & (BUS_F_PRIMARY | BUS_F_REPLICA | BUS_F_NOFAILOVER);
    memcpy(h->sender, me->id, BUS_ID_LEN);
    if (primary != me) memcpy(h->primary, primary->id, BUS_ID_LEN);
    h->current_epoch = cluster->current_epoch;
    h->config_epoch = primary->config_epoch;
    h->port = (uint16_t)me->port;
    h->bus_port = (uint16_t)me->bus_port;
    /* as Redis: the address only when announced, else peers take the connection's */
    const char *aip = srv.cfg.cluster_announce_ip;
    if (aip && aip[0] && bus_msg_valid_ip(aip)) snprintf(h->ip, sizeof(h->ip), "%s", aip);
    snprintf(h->hostname, sizeof(h->hostname), "%s", me->hostname);
    memcpy(h->slots, primary->slots, BUS_SLOT_BYTES);
}

static void gossip_entry(bus_gossip_t *g, const cluster_node_t *n)
{
    memset(g, 0, sizeof(*g));
    memcpy(g->id, n->id, BUS_ID_LEN);
    g->ping_sent = (uint32_t)(n->ping_sent / 1000);
    g->pong_received = (uint32_t)(n->pong_received / 1000);
    g->flags = wire_flags(n->flags);
    if (!n->ip[0] || !bus_msg_valid_ip(n->ip) || n->port <= 0 || n->port > 65535 ||
        n->bus_port <= 0 || n->bus_port > 65535) {
        g->flags |= BUS_F_NOADDR;
        return;
    }
    snprintf(g->ip, sizeof(g->ip), "%s", n->ip);
    g->port = (uint16_t)n->port;
    g->bus_port = (uint16_t)n->bus_port;
}

static int gossip_has(const bus_gossip_t *g, int count, const cluster_node_t *n)
{
    for (int i = 0; i < count; i++)
        if (memcmp(g[i].id, n->id, BUS_ID_LEN) == 0) return 1;
    return 0;
}

/* A PING, PONG or MEET on l, with gossip about a tenth of the nodes (at least three) picked
 * at random, and about every node in PFAIL (as Redis's clusterSendPing). */
static void send_ping(cluster_link_t *l, int type)
{
    if (!l || l->closing) return;
    int nnodes = cluster->num_nodes;
    int fresh = nnodes - 2;
    int wanted = nnodes / 10;
    if (wanted < 3) wanted = 3;
    if (wanted > fresh) wanted = fresh;
    if (wanted < 0) wanted = 0;
    int pfail = 0;
    for (int i = 0; i < nnodes; i++)
        if ((cluster->nodes[i]->flags & CLUSTER_NODE_PFAIL) &&
            !(cluster->nodes[i]->flags & (CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_NOADDR)))
            pfail++;
    int cap = wanted + pfail;
    if (cap > BUS_GOSSIP_MAX) cap = BUS_GOSSIP_MAX;
    bus_gossip_t *g = cap ? xmalloc(sizeof(*g) * cap) : NULL;
    int count = 0;
    for (int iter = wanted * 3; fresh > 0 && count < wanted && iter > 0; iter--) {
        const cluster_node_t *n = cluster->nodes[rand_u64() % nnodes];
        if (n == cluster->myself || (n->flags & CLUSTER_NODE_PFAIL)) continue;
        if ((n->flags & (CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_NOADDR)) ||
            (!n->link && n->num_slots == 0)) {
            fresh--;
            continue;
        }
        if (gossip_has(g, count, n)) continue;
        gossip_entry(&g[count++], n);
        fresh--;
    }
    for (int i = 0; i < nnodes && count < cap; i++) {
        const cluster_node_t *n = cluster->nodes[i];
        if (!(n->flags & CLUSTER_NODE_PFAIL) ||
            (n->flags & (CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_NOADDR)))
            continue;
        gossip_entry(&g[count++], n);
    }
    if (!l->inbound && type == BUS_PING) l->node->ping_sent = time_ms();
    bus_msg_t m = {0};
    build_hdr(&m.hdr, type);
    m.count = (uint16_t)count;
    m.gossip = g;
    link_send(l, &m);
    xfree(g);
}

/* Sends m on the outbound link of every node but myself and handshake nodes. */
static void broadcast(const bus_msg_t *m)
{
    for (int i = 0; i < cluster->num_nodes; i++) {
        cluster_node_t *n = cluster->nodes[i];
        if (n->flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE)) continue;
        link_send(n->link, m);
    }
}

static void broadcast_ping(int type)
{
    for (int i = 0; i < cluster->num_nodes; i++) {
        cluster_node_t *n = cluster->nodes[i];
        if (n->flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE)) continue;
        if (n->link && n->link->connected) send_ping(n->link, type);
    }
}

static void send_fail(const cluster_node_t *failing)
{
    bus_msg_t m = {0};
    build_hdr(&m.hdr, BUS_FAIL);
    memcpy(m.about, failing->id, BUS_ID_LEN + 1);
    broadcast(&m);
}

/* Tells the node on l that n owns slots with a newer config epoch. */
static void send_update(cluster_link_t *l, const cluster_node_t *n)
{
    bus_msg_t m = {0};
    build_hdr(&m.hdr, BUS_UPDATE);
    memcpy(m.about, n->id, BUS_ID_LEN + 1);
    m.about_config_epoch = n->config_epoch;
    memcpy(m.about_slots, n->slots, BUS_SLOT_BYTES);
    link_send(l, &m);
}

/* ---- failure detection ------------------------------------------------------------------ */

/* Redis's markNodeAsFailingIfNeeded: n is PFAIL here and the reports of slot-serving masters
 * (ours counted) reach the quorum: FAIL, told to every node. */
static void mark_failing_if_needed(cluster_node_t *n, long long now)
{
    if (!(n->flags & CLUSTER_NODE_PFAIL) || (n->flags & CLUSTER_NODE_FAIL)) return;
    int quorum = cluster_masters_with_slots() / 2 + 1;
    int failures = cluster_node_failure_reports(n);
    if (is_master(cluster->myself)) failures++;
    if (failures < quorum) return;
    log_notice("Marking node %.40s as failing (quorum reached).", n->id);
    cluster_node_mark_fail(n, now);
    send_fail(n);
}

/* Redis's clearNodeFailureIfNeeded: n is FAIL and answered. */
static void clear_failure_if_needed(cluster_node_t *n, long long now)
{
    if ((n->flags & CLUSTER_NODE_SLAVE) || n->num_slots == 0) {
        log_notice("Clear FAIL state for node %.40s: %s is reachable again.", n->id,
                   (n->flags & CLUSTER_NODE_SLAVE) ? "replica" : "master without slots");
        cluster_node_clear_fail(n);
    } else if (now - n->fail_time > node_timeout() * CLUSTER_FAIL_UNDO_TIME_MULT) {
        log_notice("Clear FAIL state for node %.40s: is reachable again and nobody is serving "
                   "its slots after some time.",
                   n->id);
        cluster_node_clear_fail(n);
    }
}

/* ---- processing what arrives ------------------------------------------------------------ */

/* The address a sender is reached at: the one it announces, else its end of l. */
static int sender_ip(const cluster_link_t *l, const bus_hdr_t *h, char *ip)
{
    if (h->ip[0]) {
        snprintf(ip, CLUSTER_IPLEN, "%s", h->ip);
        return 0;
    }
    return sock_ip(l, 1, ip);
}

/* Redis's nodeUpdateAddressIfNeeded: a known node speaks from another address (on a link that
 * is not its outbound one): take the new address and reconnect. */
static void update_address_if_needed(cluster_node_t *n, cluster_link_t *l, const bus_hdr_t *h)
{
    char ip[CLUSTER_IPLEN];
    if (l == n->link || n == cluster->myself || sender_ip(l, h, ip) < 0) return;
    if (n->port == h->port && n->bus_port == h->bus_port && strcmp(ip, n->ip) == 0) return;
    cluster_node_set_addr(n, ip, h->port, h->bus_port);
    if (n->link) link_free(n->link);
    log_warning("Address updated for node %.40s, now %s:%d", n->id, n->ip, n->port);
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
}

static void attach_inbound(cluster_node_t *n, cluster_link_t *l)
{
    if (n->inbound_link && n->inbound_link != l) link_free(n->inbound_link);
    n->inbound_link = l;
    l->node = n;
}

/* Redis's clusterProcessGossipSection, for a known sender. */
static void process_gossip(cluster_node_t *sender, const bus_msg_t *m, long long now)
{
    for (int i = 0; i < m->count; i++) {
        bus_gossip_t g;
        bus_msg_gossip(m, i, &g);
        int down = (g.flags & (BUS_F_PFAIL | BUS_F_FAIL)) != 0;
        cluster_node_t *n = cluster_node_lookup(g.id, BUS_ID_LEN);
        if (!n) {
            if ((g.flags & BUS_F_NOADDR) || cluster_ban_contains(g.id)) continue;
            uint32_t f = (g.flags & BUS_F_REPLICA) ? CLUSTER_NODE_SLAVE : CLUSTER_NODE_MASTER;
            if (g.flags & BUS_F_NOFAILOVER) f |= CLUSTER_NODE_NOFAILOVER;
            n = cluster_node_add(g.id, f);
            cluster_node_set_addr(n, g.ip, g.port, g.bus_port);
            log_verbose("Cluster bus: node %.40s at %s:%d learned from %.40s", g.id, g.ip, g.port,
                        sender->id);
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
            continue;
        }
        if (is_master(sender) && n != cluster->myself) {
            if (down) {
                if (cluster_node_add_failure_report(n, sender))
                    log_verbose("Node %.40s reported node %.40s as not reachable.", sender->id,
                                n->id);
                mark_failing_if_needed(n, now);
            } else if (cluster_node_del_failure_report(n, sender)) {
                log_verbose("Node %.40s reported node %.40s is back online.", sender->id, n->id);
            }
        }
        if (!down && n->ping_sent == 0 && cluster_node_failure_reports(n) == 0) {
            long long pong = (long long)g.pong_received * 1000;
            if (pong <= now + 500 && pong > n->pong_received) n->pong_received = pong;
        }
        if ((n->flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL)) && !down &&
            !(g.flags & BUS_F_NOADDR) &&
            (strcmp(n->ip, g.ip) || n->port != g.port || n->bus_port != g.bus_port)) {
            if (n->link) link_free(n->link);
            cluster_node_set_addr(n, g.ip, g.port, g.bus_port);
        }
    }
}

/* The first PONG (or PING) on the outbound link of a handshake node: drop the node if the
 * sender is known already, else rename it. Returns the sender, or NULL when done. */
static cluster_node_t *finish_handshake(cluster_link_t *l, const bus_hdr_t *h)
{
    cluster_node_t *n = l->node;
    cluster_node_t *known = cluster_node_lookup(h->sender, BUS_ID_LEN);
    if (known) {
        log_verbose("Handshake: we already know node %.40s, updating the address if needed.",
                    known->id);
        update_address_if_needed(known, l, h);
        cluster_node_delete(n); /* frees l too */
        return NULL;
    }
    cluster_node_rename(n, h->sender);
    n->flags &= ~(CLUSTER_NODE_MASTER | CLUSTER_NODE_SLAVE);
    n->flags |= (h->flags & BUS_F_REPLICA) ? CLUSTER_NODE_SLAVE : CLUSTER_NODE_MASTER;
    log_verbose("Handshake with node %.40s completed.", n->id);
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    return n;
}

/* MEET, PING and PONG (Redis's clusterProcessPacket for those types). */
static void process_ping(cluster_link_t *l, cluster_node_t *sender, const bus_msg_t *m,
                         long long now)
{
    const bus_hdr_t *h = &m->hdr;
    int type = h->type;
    if (type == BUS_PING || type == BUS_MEET) {
        const char *aip = srv.cfg.cluster_announce_ip;
        char ip[CLUSTER_IPLEN];
        if ((type == BUS_MEET || !cluster->myself->ip[0]) && !(aip && aip[0]) &&
            sock_ip(l, 0, ip) == 0 && strcmp(ip, cluster->myself->ip) != 0) {
            const cluster_node_t *me = cluster->myself;
            cluster_node_set_addr(cluster->myself, ip, me->port, me->bus_port);
            log_warning("IP address for this node updated to %s", cluster->myself->ip);
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
        }
        if (!sender && type == BUS_MEET && sender_ip(l, h, ip) == 0) {
            cluster_node_t *n = cluster_node_add(NULL, CLUSTER_NODE_HANDSHAKE);
            cluster_node_set_addr(n, ip, h->port, h->bus_port);
            log_verbose("Cluster bus: MEET from %s:%d, handshake started", ip, h->port);
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
        }
        send_ping(l, BUS_PONG);
        if (l->closing) return;
    }
    if (!sender) return;
    uint32_t nofailover = (h->flags & BUS_F_NOFAILOVER) ? CLUSTER_NODE_NOFAILOVER : 0;
    sender->flags = (sender->flags & ~CLUSTER_NODE_NOFAILOVER) | nofailover;
    if (type == BUS_PING) update_address_if_needed(sender, l, h);
    if (cluster_node_set_hostname(sender, h->hostname, strlen(h->hostname)))
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    if (!l->inbound && type == BUS_PONG && l->node == sender) {
        sender->pong_received = now;
        sender->ping_sent = 0;
        peer_get(sender)->backoff_ms = 0;
        if (sender->flags & CLUSTER_NODE_PFAIL)
            cluster_node_clear_fail(sender);
        else if (sender->flags & CLUSTER_NODE_FAIL)
            clear_failure_if_needed(sender, now);
    }
    /* a sender that now says it is a primary (replicas come later) */
    if (!h->primary[0] && !is_master(sender)) {
        sender->flags = (sender->flags & ~CLUSTER_NODE_SLAVE) | CLUSTER_NODE_MASTER;
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    }
    int dirty = memcmp(sender->slots, h->slots, BUS_SLOT_BYTES) != 0;
    if (dirty && is_master(sender)) cluster_apply_slots(sender, h->config_epoch, h->slots);
    if (dirty) {
        /* the sender claims slots we know a newer owner of: tell it (one UPDATE, as Redis) */
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (!((h->slots[s >> 3] >> (s & 7)) & 1)) continue;
            const cluster_node_t *owner = cluster->slots[s];
            int unclaimed = !owner || ((cluster->owner_not_claiming[s >> 3] >> (s & 7)) & 1);
            if (unclaimed || owner == sender || owner->config_epoch <= h->config_epoch) continue;
            log_verbose("Node %.40s has old slots configuration, sending an UPDATE message "
                        "about %.40s",
                        sender->id, owner->id);
            send_update(sender->link ? sender->link : l, owner);
            break;
        }
    }
    if (is_master(cluster->myself) && is_master(sender) &&
        h->config_epoch == cluster->myself->config_epoch)
        cluster_handle_epoch_collision(sender);
    process_gossip(sender, m, now);
}

static void process_fail(cluster_node_t *sender, const bus_msg_t *m, long long now)
{
    if (!sender) {
        log_notice("Ignoring FAIL message from unknown node %.40s about %.40s", m->hdr.sender,
                   m->about);
        return;
    }
    cluster_node_t *failing = cluster_node_lookup(m->about, BUS_ID_LEN);
    if (!failing || (failing->flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_MYSELF))) return;
    log_notice("FAIL message received from %.40s about %.40s", sender->id, failing->id);
    cluster_node_mark_fail(failing, now);
}

static void process_update(cluster_node_t *sender, const bus_msg_t *m)
{
    if (!sender) return;
    cluster_node_t *n = cluster_node_lookup(m->about, BUS_ID_LEN);
    if (!n || n->config_epoch >= m->about_config_epoch) return;
    n->config_epoch = m->about_config_epoch;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    cluster_apply_slots(n, m->about_config_epoch, m->about_slots);
}

/* A PUBLISH from a known node: its channel's and patterns' subscribers here get it (Redis's
 * pubsubPublishMessage on a PUBLISH packet); it goes no further. */
static void process_publish(cluster_node_t *sender, const bus_msg_t *m)
{
    if (!sender) return;
    pubsub_publish((const char *)m->channel, m->channel_len, (const char *)m->message,
                   m->message_len);
}

/* One whole, decoded message from l. */
static void process(cluster_link_t *l, const bus_msg_t *m)
{
    const bus_hdr_t *h = &m->hdr;
    long long now = time_ms();
    cluster->stats_msg_received[h->type]++;
    cluster_node_t *sender = NULL;
    if (!l->inbound) {
        /* our outbound link: the node we connected to must answer with its own id */
        if (in_handshake(l->node)) {
            if (h->type != BUS_PING && h->type != BUS_PONG && h->type != BUS_MEET) return;
            if (!(sender = finish_handshake(l, h))) return;
        } else if (memcmp(l->node->id, h->sender, BUS_ID_LEN) != 0) {
            cluster_node_t *n = l->node;
            log_notice("Cluster bus: %s:%d answered as %.40s, not %.40s: address forgotten", n->ip,
                       n->bus_port, h->sender, n->id);
            link_free(l);
            cluster_node_set_addr(n, "", 0, 0);
            n->flags |= CLUSTER_NODE_NOADDR;
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
            return;
        } else {
            sender = l->node;
        }
    } else if (l->node) {
        if (memcmp(l->node->id, h->sender, BUS_ID_LEN) != 0) {
            log_notice("Cluster bus: a link from %.40s sent as %.40s: closed", l->node->id,
                       h->sender);
            link_free(l);
            return;
        }
        sender = l->node;
    } else {
        sender = cluster_node_lookup(h->sender, BUS_ID_LEN);
        if (sender && in_handshake(sender)) sender = NULL;
        if (sender == cluster->myself) {
            /* we connected to ourselves (a MEET of our own address): answer, learn nothing */
            if (h->type == BUS_PING || h->type == BUS_MEET) send_ping(l, BUS_PONG);
            return;
        }
        if (sender) attach_inbound(sender, l);
    }
    if (sender) {
        sender->data_received = now;
        if (h->current_epoch > cluster->current_epoch) {
            cluster->current_epoch = h->current_epoch;
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
        }
        if (h->config_epoch > sender->config_epoch) {
            sender->config_epoch = h->config_epoch;
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
        }
    }
    switch (h->type) {
    case BUS_MEET:
    case BUS_PING:
    case BUS_PONG:
        process_ping(l, sender, m, now);
        break;
    case BUS_FAIL:
        process_fail(sender, m, now);
        break;
    case BUS_UPDATE:
        process_update(sender, m);
        break;
    case BUS_PUBLISH:
        process_publish(sender, m);
        break;
    }
}

/* ---- reading ----------------------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    *b = uv_buf_init(read_chunk, sizeof(read_chunk));
}

/* Closes a link that sent something malformed, with a log line: at most one a second (the
 * next one says how many were not logged), so that a flood of garbage cannot flood the log. */
static void refuse(cluster_link_t *l, int err)
{
    static long long last_ms;
    static unsigned long quiet;
    long long now = time_ms();
    if (now - last_ms >= 1000) {
        char ip[CLUSTER_IPLEN] = "?", more[64] = "";
        sock_ip(l, 1, ip);
        if (quiet) snprintf(more, sizeof(more), " (%lu more not logged)", quiet);
        if (err == BUS_EVERSION)
            log_warning("Cluster bus: %s speaks another version of the bus (we speak %d): link "
                        "closed%s",
                        ip, BUS_VERSION, more);
        else
            log_notice("Cluster bus: malformed message from %s (%s): link closed%s", ip,
                       bus_msg_strerror(err), more);
        last_ms = now;
        quiet = 0;
    } else {
        quiet++;
    }
    link_free(l);
}

/* Takes n bytes: completes the prefix, checks it, then the message, one at a time. */
static void feed(cluster_link_t *l, const char *p, size_t n)
{
    while (n > 0 && !l->closing) {
        size_t need = l->want ? l->want - l->rbuf.len : BUS_PREFIX_LEN - l->rbuf.len;
        size_t take = n < need ? n : need;
        buf_append(&l->rbuf, p, take);
        p += take;
        n -= take;
        if (!l->want) {
            uint32_t len;
            int rc = bus_msg_peek((const uint8_t *)l->rbuf.data, l->rbuf.len, &len);
            if (rc < 0) return refuse(l, rc);
            if (rc == 0) l->want = len; /* the buffer grows only as the bytes come */
            continue;
        }
        if (l->rbuf.len < l->want) continue;
        bus_msg_t m;
        int rc = bus_msg_decode((const uint8_t *)l->rbuf.data, l->rbuf.len, &m);
        if (rc < 0) return refuse(l, rc);
        process(l, &m);
        buf_clear(&l->rbuf);
        buf_shrink(&l->rbuf, BUS_HDR_LEN + 16 * BUS_GOSSIP_LEN);
        l->want = 0;
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
    cluster_link_t *l = s->data;
    if (l->closing) return;
    if (nread < 0) {
        if (nread != UV_EOF)
            log_verbose("Cluster bus: read from %s failed: %s", link_name(l), uv_strerror(nread));
        link_free(l);
        return;
    }
    if (nread == 0) return;
    l->rx_ms = time_ms();
    feed(l, b->base, (size_t)nread);
}

void cluster_bus_serve_now(void)
{
    if (!started) return;
    struct pollfd pfd[BUS_SERVE_MAX];
    cluster_link_t *who[BUS_SERVE_MAX];
    int n = 0;
    for (cluster_link_t *l = links; l && n < BUS_SERVE_MAX; l = l->next) {
        uv_os_fd_t fd;
        if (!l->connected || uv_fileno((uv_handle_t *)&l->tcp, &fd) != 0) continue;
        pfd[n] = (struct pollfd){.fd = fd, .events = POLLIN};
        who[n++] = l;
    }
    if (n == 0 || poll(pfd, (nfds_t)n, 0) <= 0) return;
    for (int i = 0; i < n; i++) {
        cluster_link_t *l = who[i]; /* (a link freed meanwhile lives until the loop runs) */
        if (!(pfd[i].revents & POLLIN) || l->closing) continue;
        ssize_t r = read(pfd[i].fd, read_chunk, sizeof(read_chunk));
        if (r <= 0) continue; /* EOF, error or nothing: the loop sees it again later */
        l->rx_ms = time_ms();
        feed(l, read_chunk, (size_t)r);
    }
    /* a uv_write that completed waits for the loop to run its callback, and the next one
     * waits for that: send what the socket takes now (uv_try_write refuses while anything
     * is still queued, which keeps the order) */
    for (cluster_link_t *l = links; l; l = l->next) {
        if (!l->connected || !l->sbuf.len) continue;
        uv_buf_t b = uv_buf_init(l->sbuf.data, (unsigned)l->sbuf.len);
        int w = uv_try_write((uv_stream_t *)&l->tcp, &b, 1);
        if (w > 0) buf_consume(&l->sbuf, (size_t)w);
    }
}

/* ---- connecting and accepting ------------------------------------------------------------- */

static void on_connected(uv_connect_t *req, int status)
{
    cluster_link_t *l = req->data;
    if (l->closing) return;
    cluster_node_t *n = l->node;
    if (status < 0) {
        log_verbose("Connection with Node %.40s at %s:%d failed: %s", n->id, n->ip, n->bus_port,
                    uv_strerror(status));
        link_free(l);
        return;
    }
    l->connected = 1;
    l->rx_ms = time_ms();
    uv_tcp_nodelay(&l->tcp, 1);
    uv_read_start((uv_stream_t *)&l->tcp, on_alloc, on_read);
    /* keep the time of an unanswered ping: reconnecting must not hide a failure (Redis) */
    long long old_ping_sent = n->ping_sent;
    send_ping(l, (n->flags & CLUSTER_NODE_MEET) ? BUS_MEET : BUS_PING);
    if (old_ping_sent) n->ping_sent = old_ping_sent;
    n->flags &= ~CLUSTER_NODE_MEET;
    link_flush(l);
}

static void connect_node(cluster_node_t *n, long long now)
{
    peer_t *p = peer_get(n);
    if (now < p->next_connect_ms) return;
    /* failure detection needs a ping in flight: count one from now, as Redis */
    if (n->ping_sent == 0) n->ping_sent = now;
    struct sockaddr_storage ss;
    if (uv_ip4_addr(n->ip, n->bus_port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(n->ip, n->bus_port, (struct sockaddr_in6 *)&ss) != 0) {
        peer_backoff(n, now);
        return;
    }
    cluster_link_t *l = link_new(n, 0);
    n->link = l;
    l->creq.data = l;
    int rc = uv_tcp_connect(&l->creq, &l->tcp, (struct sockaddr *)&ss, on_connected);
    if (rc < 0) {
        log_verbose("Unable to connect to Cluster Node [%s]:%d -> %s", n->ip, n->bus_port,
                    uv_strerror(rc));
        link_free(l);
    }
}

static void on_accept(uv_stream_t *server, int status)
{
    if (status < 0) return;
    cluster_link_t *l = link_new(NULL, 1);
    if (uv_accept(server, (uv_stream_t *)&l->tcp) < 0) {
        link_free(l);
        return;
    }
    l->connected = 1;
    uv_tcp_nodelay(&l->tcp, 1);
    uv_read_start((uv_stream_t *)&l->tcp, on_alloc, on_read);
}

static int listen_on(const char *addr, int port, int optional, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    if (uv_ip4_addr(addr, port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(addr, port, (struct sockaddr_in6 *)&ss) != 0) {
        snprintf(err, errlen, "Invalid bind address '%s'", addr);
        return -1;
    }
    listener_t *ls = xcalloc(1, sizeof(*ls));
    uv_tcp_init(srv.loop, &ls->tcp);
    int rc = uv_tcp_bind(&ls->tcp, (struct sockaddr *)&ss,
                         ss.ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&ls->tcp, srv.cfg.tcp_backlog, on_accept);
    if (rc < 0) {
        uv_close((uv_handle_t *)&ls->tcp, (uv_close_cb)xfree);
        if (optional) return 0;
        snprintf(err, errlen, "Could not create the cluster bus listening socket %s:%d: %s", addr,
                 port, uv_strerror(rc));
        return -1;
    }
    ls->next = listeners;
    listeners = ls;
    return 1;
}

/* ---- the hooks of cluster.h --------------------------------------------------------------- */

int cluster_bus_start(char *err, size_t errlen)
{
    if (!srv.loop) return 0; /* no event loop (the unit tests' server): a node without a bus */
    if (srv.cfg.port <= 0) {
        snprintf(err, errlen, "Cluster mode needs a TCP port (port 0 listens on none)");
        return -1;
    }
    int port = cluster_bus_listen_port();
    if (port <= 0 || port > 65535) {
        snprintf(err, errlen,
                 "The cluster bus port %d is not valid (port + 10000, or "
                 "cluster-port, must be 1..65535)",
                 port);
        return -1;
    }
    dict_init(&peers, &peer_type);
    started = 1;
    int n = 0;
    const config_strlist_t *bind = &srv.cfg.bind;
    for (int i = 0; i < bind->count; i++) {
        const char *a = bind->items[i];
        int optional = a[0] == '-';
        int rc = listen_on(optional ? a + 1 : a, port, optional, err, errlen);
        if (rc < 0) {
            cluster_bus_stop();
            return -1;
        }
        n += rc;
    }
    if (n == 0) {
        snprintf(err, errlen, "The cluster bus could not listen on port %d", port);
        cluster_bus_stop();
        return -1;
    }
    log_notice("Cluster bus listening on port %d (wire version %d)", port, BUS_VERSION);
    return 0;
}

void cluster_bus_stop(void)
{
    if (!started) return;
    while (listeners) {
        listener_t *ls = listeners;
        listeners = ls->next;
        uv_close((uv_handle_t *)&ls->tcp, (uv_close_cb)xfree);
    }
    while (links) link_free(links);
    dict_clear(&peers, NULL);
    started = 0;
}

void cluster_bus_node_freed(cluster_node_t *n)
{
    if (!started) return;
    for (cluster_link_t *l = links, *next; l; l = next) {
        next = l->next;
        if (l->node == n) {
            l->node = NULL; /* no backoff entry for a node that goes */
            if (n->link == l) n->link = NULL;
            if (n->inbound_link == l) n->inbound_link = NULL;
            link_free(l);
        }
    }
    peer_forget(n);
}

/* Closes inbound links that never named a known sender within the handshake timeout, and
 * links stalled inside a message for the node timeout. */
static void expire_links(long long now)
{
    for (cluster_link_t *l = links, *next; l; l = next) {
        next = l->next;
        if (l->inbound && !l->node && now - l->ctime > handshake_timeout()) {
            log_verbose("Cluster bus: closing an inbound link that named no known node");
            link_free(l);
        } else if (l->rbuf.len && now - l->rx_ms > node_timeout()) {
            log_verbose("Cluster bus: closing the link %s %s: stalled inside a message",
                        l->inbound ? "from" : "to", link_name(l));
            link_free(l);
        }
    }
}

/* Connects the nodes that have no link, and forgets handshakes that timed out. */
static void cron_links(long long now)
{
    for (int i = cluster->num_nodes - 1; i >= 0; i--) {
        if (i >= cluster->num_nodes) continue;
        cluster_node_t *n = cluster->nodes[i];
        if (n->flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_NOADDR)) continue;
        if (in_handshake(n) && now - n->ctime > handshake_timeout()) {
            log_verbose("Cluster bus: handshake with %s:%d timed out", n->ip, n->port);
            cluster_node_delete(n);
            continue;
        }
        if (!n->link && n->ip[0] && n->bus_port > 0) connect_node(n, now);
    }
}

/* Once a second: the node with the oldest PONG of five random ones gets a PING. */
static void cron_random_ping(long long now)
{
    if (now - last_random_ping_ms < 1000 || cluster->num_nodes == 0) return;
    last_random_ping_ms = now;
    cluster_node_t *best = NULL;
    for (int j = 0; j < 5; j++) {
        cluster_node_t *n = cluster->nodes[rand_u64() % cluster->num_nodes];
        if (!n->link || !n->link->connected || n->ping_sent) continue;
        if (n->flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE)) continue;
        if (!best || n->pong_received < best->pong_received) best = n;
    }
    if (best) send_ping(best->link, BUS_PING);
}

/* Pings what is due and flags PFAIL (Redis's clusterCron). Returns 1 if a node became PFAIL. */
static int cron_pings(long long now)
{
    long long nt = node_timeout();
    int new_pfail = 0;
    for (int i = 0; i < cluster->num_nodes; i++) {
        cluster_node_t *n = cluster->nodes[i];
        if (n->flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_NOADDR | CLUSTER_NODE_HANDSHAKE))
            continue;
        long long ping_delay = now - n->ping_sent, data_delay = now - n->data_received;
        /* a link older than the timeout (connected or still connecting), a ping half a
         * timeout old, and silence: try a new link */
        if (n->link && now - n->link->ctime > nt && n->ping_sent && ping_delay > nt / 2 &&
            data_delay > nt / 2)
            link_free(n->link);
        if (n->link && n->link->connected && n->ping_sent == 0 && now - n->pong_received > nt / 2) {
            send_ping(n->link, BUS_PING);
            continue;
        }
        if (n->ping_sent == 0) continue;
        long long delay = ping_delay < data_delay ? ping_delay : data_delay;
        if (delay > nt && !(n->flags & (CLUSTER_NODE_PFAIL | CLUSTER_NODE_FAIL))) {
            log_notice("*** NODE %.40s possibly failing", n->id);
            cluster_node_mark_pfail(n);
            mark_failing_if_needed(n, now);
            new_pfail = 1;
        }
    }
    return new_pfail;
}

void cluster_bus_cron(long long now_ms)
{
    if (!started) return;
    expire_links(now_ms);
    cron_links(now_ms);
    cron_random_ping(now_ms);
    if (cron_pings(now_ms)) broadcast_ping(BUS_PING);
}

void cluster_bus_broadcast_pong(void)
{
    if (started) broadcast_ping(BUS_PONG);
}

void cluster_bus_publish(const char *channel, size_t clen, const char *msg, size_t mlen)
{
    if (!started) return;
    if (clen + mlen > BUS_PUBLISH_DATA_MAX) {
        static long long last_ms;
        long long now = time_ms();
        if (now - last_ms >= 1000) {
            log_warning("Cluster bus: a PUBLISH of %zu bytes (channel and message) is past the "
                        "bus's %d: delivered on this node only",
                        clen + mlen, BUS_PUBLISH_DATA_MAX);
            last_ms = now;
        }
        return;
    }
    bus_msg_t m = {0};
    build_hdr(&m.hdr, BUS_PUBLISH);
    m.channel = (const uint8_t *)channel;
    m.channel_len = (uint32_t)clen;
    m.message = (const uint8_t *)msg;
    m.message_len = (uint32_t)mlen;
    broadcast(&m);
}

static void link_reply(client_t *c, const cluster_link_t *l)
{
    reply_map(c, 6);
    reply_bulk_cstr(c, "direction");
    reply_bulk_cstr(c, l->inbound ? "from" : "to");
    reply_bulk_cstr(c, "node");
    reply_bulk(c, l->node->id, CLUSTER_NAMELEN);
    reply_bulk_cstr(c, "create-time");
    reply_int(c, l->ctime);
    reply_bulk_cstr(c, "events");
    reply_bulk_cstr(c, !l->connected ? "" : l->writing ? "rw" : "r");
    reply_bulk_cstr(c, "send-buffer-allocated");
    reply_int(c, (long long)(l->sbuf.cap + l->inflight.cap));
    reply_bulk_cstr(c, "send-buffer-used");
    reply_int(c, (long long)(l->sbuf.len + l->inflight.len));
}

void cluster_bus_links_reply(client_t *c)
{
    long long n = 0;
    for (int i = 0; i < cluster->num_nodes; i++)
        n += (cluster->nodes[i]->link != NULL) + (cluster->nodes[i]->inbound_link != NULL);
    reply_array(c, n);
    for (int i = 0; i < cluster->num_nodes; i++) {
        const cluster_node_t *node = cluster->nodes[i];
        if (node->link) link_reply(c, node->link);
        if (node->inbound_link) link_reply(c, node->inbound_link);
    }
}

const char *cluster_bus_msg_name(int t)
{
    return t >= BUS_MEET && t <= BUS_TYPE_LAST ? bus_msg_type_name(t) : NULL;
}
