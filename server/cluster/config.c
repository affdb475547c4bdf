/* config.c - the cluster config file (cluster-config-file, Redis's nodes.conf format) and the
 * CLUSTER NODES line it shares with the command.
 *
 * Layout, one line per node then one line of variables:
 *   <id> <ip>:<port>@<busport>[,<hostname>] <flags> <master id|-> <ping_sent> <pong_received>
 *        <config epoch> <connected|disconnected> [<slot>|<from>-<to>|[<slot>->-<id>]|
 *        [<slot>-<-<id>]]...
 *   vars currentEpoch <n> lastVoteEpoch <n>
 * Writing goes to <file>.tmp, renamed over the file, so a crash of the process leaves the old
 * or the new file, never half of one; when asked (CLUSTER_TODO_FSYNC_CONFIG: epochs, votes,
 * SAVECONFIG, shutdown) the file is fsynced before the rename and the directory after, so that
 * holds for a crash of the machine too. The server runs in dir, so a
 * relative path is inside it (Redis's rule). Loop thread only. */
#include "common/alloc.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/util.h"
#include "server/cluster/cluster.h"
#include "server/cluster/state_int.h"
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_ARGS (CLUSTER_SLOTS + 16)

/* Appends " a" or " a-b" for each run of n's slots. */
static void append_slot_ranges(buf_t *b, const cluster_node_t *n)
{
    if (!n->num_slots) return;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!cluster_node_has_slot(n, s)) continue;
        int e = s;
        while (e + 1 < CLUSTER_SLOTS && cluster_node_has_slot(n, e + 1)) e++;
        if (e == s)
            buf_printf(b, " %d", s);
        else
            buf_printf(b, " %d-%d", s, e);
        s = e;
    }
}

void cluster__node_line(buf_t *b, const cluster_node_t *n)
{
    char flags[128];
    buf_printf(b, "%.40s %s:%d@%d%s%s %s %s %lld %lld %llu %s", n->id, n->ip, n->port, n->bus_port,
               n->hostname[0] ? "," : "", n->hostname, cluster_node_flags_str(n->flags, flags),
               n->replicaof ? n->replicaof->id : "-", n->ping_sent, n->pong_received,
               (unsigned long long)(n->replicaof ? n->replicaof->config_epoch : n->config_epoch),
               (n->link || (n->flags & CLUSTER_NODE_MYSELF)) ? "connected" : "disconnected");
    append_slot_ranges(b, n);
    if (!(n->flags & CLUSTER_NODE_MYSELF)) return;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cluster->migrating_to[s])
            buf_printf(b, " [%d->-%.40s]", s, cluster->migrating_to[s]->id);
        else if (cluster->importing_from[s])
            buf_printf(b, " [%d-<-%.40s]", s, cluster->importing_from[s]->id);
    }
}

/* fsyncs the directory that holds path (a rename in it is durable then). */
static int fsync_dir(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    int rc = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int failing; /* the last save failed */

int cluster_save_config(int do_fsync)
{
    buf_t b;
    buf_init(&b);
    for (int i = 0; i < cluster->num_nodes; i++) {
        if (cluster->nodes[i]->flags & CLUSTER_NODE_HANDSHAKE) continue;
        cluster__node_line(&b, cluster->nodes[i]);
        buf_append_str(&b, "\n");
    }
    buf_printf(&b, "vars currentEpoch %llu lastVoteEpoch %llu\n",
               (unsigned long long)cluster->current_epoch,
               (unsigned long long)cluster->last_vote_epoch);
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", srv.cfg.cluster_config_file);
    int rc = 0, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(fd, b.data + off, b.len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            rc = -errno;
            break;
        }
        off += (size_t)w;
    }
    if (!rc && do_fsync && fsync(fd) < 0) rc = -errno;
    close(fd);
    if (!rc && rename(tmp, srv.cfg.cluster_config_file) < 0) rc = -errno;
    if (!rc && do_fsync) fsync_dir(srv.cfg.cluster_config_file);
    if (rc) unlink(tmp);
out:
    if (rc && !failing) /* once per failing streak: the cron retries every tick */
        log_warning("Can't save the cluster config file %s: %s", srv.cfg.cluster_config_file,
                    strerror(-rc));
    else if (!rc && failing)
        log_notice("The cluster config file %s is saved again", srv.cfg.cluster_config_file);
    failing = rc != 0;
    buf_deinit(&b);
    return rc;
}

/* ---- loading ---- */

/* Splits line (modified in place) on spaces into argv (at most max); returns the count. */
static int split(char *line, char **argv, int max)
{
    int argc = 0;
    for (char *p = strtok(line, " \r\n"); p && argc < max; p = strtok(NULL, " \r\n"))
        argv[argc++] = p;
    return argc;
}

/* The node named by id (an existing one, or a new one without address). NULL: bad id. */
static cluster_node_t *node_by_id(const char *id)
{
    if (!cluster_id_valid(id, strlen(id))) return NULL;
    cluster_node_t *n = cluster_node_lookup(id, CLUSTER_NAMELEN);
    return n ? n : cluster_node_add(id, 0);
}

static int parse_u64(const char *s, uint64_t *out)
{
    long long v;
    if (!str_to_ll(s, strlen(s), &v) || v < 0) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* "ip:port@busport[,hostname]" into n. */
static int parse_addr(cluster_node_t *n, char *addr)
{
    char *comma = strchr(addr, ',');
    if (comma) {
        *comma = '\0';
        cluster_node_set_hostname(n, comma + 1, strlen(comma + 1));
    }
    char *at = strchr(addr, '@'), *colon = at ? NULL : strrchr(addr, ':');
    if (at) {
        *at = '\0';
        colon = strrchr(addr, ':');
    }
    if (!colon || (size_t)(colon - addr) >= CLUSTER_IPLEN) return -1;
    *colon = '\0';
    long long port, bus = 0;
    if (!str_to_ll(colon + 1, strlen(colon + 1), &port) || port < 0 || port > 65535) return -1;
    if (at && (!str_to_ll(at + 1, strlen(at + 1), &bus) || bus < 0 || bus > 65535)) return -1;
    snprintf(n->ip, sizeof(n->ip), "%s", addr);
    n->port = (int)port;
    n->bus_port = (int)(at ? bus : port + 10000);
    return 0;
}

static int parse_flags(cluster_node_t *n, char *s)
{
    for (char *w = strtok(s, ","); w; w = strtok(NULL, ",")) {
        if (!strcmp(w, "noflags")) continue;
        uint32_t f = cluster__flag_by_name(w, strlen(w));
        if (!f) return -1;
        n->flags |= f;
    }
    return 0;
}

/* One slot word: "a", "a-b", "[a->-id]", "[a-<-id]". */
static int parse_slot_word(cluster_node_t *n, char *w)
{
    long long a, b;
    if (w[0] == '[') {
        char *dir = strstr(w, "->-"), *imp = strstr(w, "-<-");
        char *mark = dir ? dir : imp;
        size_t wl = strlen(w);
        if (!mark || w[wl - 1] != ']') return -1;
        if (!str_to_ll(w + 1, (size_t)(mark - w - 1), &a) || a < 0 || a >= CLUSTER_SLOTS) return -1;
        w[wl - 1] = '\0';
        cluster_node_t *peer = node_by_id(mark + 3);
        if (!peer) return -1;
        if (dir)
            cluster->migrating_to[a] = peer;
        else
            cluster->importing_from[a] = peer;
        return 0;
    }
    char *dash = strchr(w, '-');
    if (dash) {
        if (!str_to_ll(w, (size_t)(dash - w), &a) || !str_to_ll(dash + 1, strlen(dash + 1), &b))
            return -1;
    } else if (!str_to_ll(w, strlen(w), &a)) {
        return -1;
    } else {
        b = a;
    }
    if (a < 0 || b >= CLUSTER_SLOTS || a > b) return -1;
    for (long long s = a; s <= b; s++) cluster_slot_add(n, (int)s);
    return 0;
}

static int parse_vars(char **argv, int argc)
{
    for (int j = 1; j + 1 < argc; j += 2) {
        uint64_t v;
        if (parse_u64(argv[j + 1], &v) < 0) return -1;
        if (!strcmp(argv[j], "currentEpoch"))
            cluster->current_epoch = v;
        else if (!strcmp(argv[j], "lastVoteEpoch"))
            cluster->last_vote_epoch = v;
    }
    return 0;
}

static int parse_node_line(char **argv, int argc)
{
    if (argc < 8) return -1;
    cluster_node_t *n = node_by_id(argv[0]);
    if (!n) return -1;
    if (parse_addr(n, argv[1]) < 0 || parse_flags(n, argv[2]) < 0) return -1;
    if (n->flags & CLUSTER_NODE_MYSELF) {
        if (cluster->myself && cluster->myself != n) return -1;
        cluster->myself = n;
    }
    if (strcmp(argv[3], "-")) {
        cluster_node_t *m = node_by_id(argv[3]);
        if (!m) return -1;
        n->replicaof = m;
    }
    if (parse_u64(argv[6], &n->config_epoch) < 0) return -1;
    /* times are not trusted across a restart: a node answers afresh */
    n->ping_sent = 0;
    n->pong_received = strcmp(argv[4], "0") ? time_ms() : 0;
    for (int j = 8; j < argc; j++)
        if (parse_slot_word(n, argv[j]) < 0) return -1;
    return 0;
}

int cluster__load_config(char *err, size_t errlen)
{
    FILE *f = fopen(srv.cfg.cluster_config_file, "r");
    if (!f && errno == ENOENT) return 0;
    if (!f) {
        snprintf(err, errlen, "Can't open %s: %s", srv.cfg.cluster_config_file, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    char *line = NULL, **argv = xmalloc(sizeof(*argv) * LINE_MAX_ARGS);
    int lines = 0, rc = 0, lineno = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        int argc = split(line, argv, LINE_MAX_ARGS);
        if (argc == 0) continue;
        lines++;
        rc = !strcmp(argv[0], "vars") ? parse_vars(argv, argc) : parse_node_line(argv, argc);
        if (rc < 0) break;
    }
    if (!rc && ferror(f)) rc = -1;
    fclose(f);
    free(line);
    xfree(argv);
    if (!rc && lines && !cluster->myself) {
        snprintf(err, errlen,
                 "Unrecoverable error: the cluster config file %s has no myself "
                 "node",
                 srv.cfg.cluster_config_file);
        return -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file %s (line %d)",
                 srv.cfg.cluster_config_file, lineno);
        return -1;
    }
    if (!lines) return 0;
    cluster->myself->flags |= CLUSTER_NODE_MYSELF;
    /* a node this file names only as a peer of a migration, with no line of its own, keeps
     * no address: NOADDR */
    for (int i = 0; i < cluster->num_nodes; i++)
        if (!cluster->nodes[i]->ip[0] && cluster->nodes[i] != cluster->myself)
            cluster->nodes[i]->flags |= CLUSTER_NODE_NOADDR;
    cluster->todo = 0;
    log_notice("Cluster config loaded from %s: I'm %.40s, %d known node(s)",
               srv.cfg.cluster_config_file, cluster->myself->id, cluster->num_nodes);
    return 1;
}
