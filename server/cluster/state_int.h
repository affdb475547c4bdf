/* state_int.h - what the files of server/cluster/ share besides cluster.h: the config file's
 * reader and writer (config.c) and the state's internals (state.c). Loop thread only. */
#ifndef CTE_SERVER_CLUSTER_STATE_INT_H
#define CTE_SERVER_CLUSTER_STATE_INT_H

#include "common/buf.h"
#include "server/cluster/cluster.h"

#include <stddef.h>
#include <stdint.h>

/* Loads cluster-config-file into `cluster` (allocated, empty). 1 when loaded, 0 when there is
 * no file (or it is empty), -1 with a message in err when it is malformed or unreadable. */
int cluster__load_config(char *err, size_t errlen);
/* The flag a CLUSTER NODES word names (len bytes), or 0 ("noflags", unknown words). */
uint32_t cluster__flag_by_name(const char *p, size_t len);
/* Applies the cluster-announce-* settings and the ports to myself. */
void cluster__apply_announced(void);
/* Frees the state and drops the config lock (init's failure path, deinit). */
void cluster__free(void);
/* Appends n's CLUSTER NODES line (without the line end) to b; the config file holds the same
 * lines. */
void cluster__node_line(buf_t *b, const cluster_node_t *n);

#endif
