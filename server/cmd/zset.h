/* server/cmd/zset.h - the sorted-set commands' building blocks that the GEO commands reuse.
 *
 * GEOADD is ZADD with scores computed from coordinates, and GEORADIUS ... STORE and
 * GEOSEARCHSTORE store their result as ZRANGESTORE does: these are those parts, with Redis
 * 7.0's replies and keyspace events. Loop thread, inside a command (c->db is the database). */
#ifndef CTE_SERVER_CMD_ZSET_H
#define CTE_SERVER_CMD_ZSET_H

#include "server/client.h"
#include "storage/t_zset.h"

/* ZADD's work once its arguments are parsed: adds n >= 1 members with scores (members[i *
 * stride] is the i-th member, a view into c->argv) to key under flags (ZSET_IN_*, already
 * checked for conflicts), creating the key unless XX. Replies as ZADD does (the count of added
 * members, or added + updated with ch; with ZSET_IN_INCR the new score or null), WRONGTYPE when
 * key holds another type, and sends "zadd" / "zincr" when something changed. */
void zsetcmd_add(client_t *c, const resp_arg_t *key, int flags, int ch, int n, const double *scores,
                 const resp_arg_t *members, int stride);

/* Stores a non-empty result z under key (the old value and its TTL go; the key takes z) and
 * sends event, or deletes key ("del") when z is NULL; replies with the stored length (0 for
 * NULL), as the *STORE commands do. */
void zsetcmd_store_result(client_t *c, const resp_arg_t *key, zset_t *z, const char *event);

/* qsort comparator of zset_entry_t by (score, member bytes): the order of a sorted set. */
int zsetcmd_entry_cmp(const void *a, const void *b);

#endif
