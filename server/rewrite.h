/* rewrite.h - the dataset written as commands (RESP) and read back: DEBUG RELOAD today, the
 * compact form of an append-only-file rewrite later. Loop thread. */
#ifndef CTE_SERVER_REWRITE_H
#define CTE_SERVER_REWRITE_H

#include "common/buf.h"

#include <stddef.h>

/* Appends to out the commands that rebuild every database (SELECT, then per key SET / RPUSH /
 * SADD / HSET / ZADD / TPUT with the blob's score, and PEXPIREAT). Blob bytes on file tiers
 * are read synchronously. Returns the number of blobs left out because a write to them was in
 * flight (0 normally). */
long long rewrite_dataset(buf_t *out);
/* Runs the commands in p[0..len) as a socketless client with no replies, marking the server
 * as loading. Returns 0, or -1 if any command failed. */
int rewrite_replay(const char *p, size_t len);

#endif
