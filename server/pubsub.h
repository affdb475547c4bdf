/* pubsub.h - SUBSCRIBE/PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE/PUBLISH/PUBSUB and keyspace
 * notifications.
 *
 * Channels and patterns live in server-wide tables mapping a name to its subscribers; each
 * client keeps the names it subscribed to. Messages are pushes in RESP3 and arrays in RESP2,
 * where a subscribed client may only run the (P)SUBSCRIBE family, PING, QUIT and RESET.
 * Runs on the loop thread. */
#ifndef CTE_SERVER_PUBSUB_H
#define CTE_SERVER_PUBSUB_H

#include "server/client.h"
#include "server/command.h"

extern command_t cmds_pubsub[];

/* Delivers message to every subscriber of channel (and matching patterns); returns the
 * number of receivers. */
long long pubsub_publish(const char *channel, size_t clen, const char *msg, size_t mlen);
/* Calls fn with each channel (pattern 0) and pattern (pattern 1) c is subscribed to; fn must
 * not subscribe or unsubscribe (ACL checks use it). */
void pubsub_client_foreach(client_t *c, void (*fn)(void *ud, const char *name, size_t len,
                                                   int pattern),
                           void *ud);
/* Unsubscribes c from everything (RESET, disconnect), without replies. */
void pubsub_client_reset(client_t *c);
/* Number of channels plus patterns c is subscribed to. */
long long pubsub_client_count(const client_t *c);
/* 1 if c may not run cmd because it is in RESP2 subscribed mode (after replying the error). */
int pubsub_reject_or_reply(client_t *c, const command_t *cmd);
/* Totals for INFO: channels and patterns with at least one subscriber. */
void pubsub_counts(uint64_t *channels, uint64_t *patterns);
void pubsub_deinit(void);

/* Publishes a keyspace event as notify-keyspace-events asks (no-op when it is off). */
void notify_keyspace_event(int klass, const char *event, const char *key, size_t len, int dbid);

#endif
