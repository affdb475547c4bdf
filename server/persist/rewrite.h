/* rewrite.h - the dataset written as commands (RESP): the compact form of an append-only-file
 * rewrite, SAVE and DEBUG RELOAD (server/persist/aof.c). Loop thread, or a forked child. */
#ifndef CTE_SERVER_REWRITE_H
#define CTE_SERVER_REWRITE_H

#include "common/buf.h"

#include <stddef.h>

/* Takes bytes of the stream; returns 0, or -1 to stop the rewrite. */
typedef int rewrite_sink_fn(void *ud, const char *p, size_t len);

/* Appends to out the commands that rebuild every database (SELECT, then per key SET / RPUSH /
 * SADD / HSET / ZADD / TPUT with the blob's score plus TMETA with its times, and PEXPIREAT).
 * Blob bytes on file tiers are read synchronously. With a sink, out is handed to it whenever
 * it holds a few MiB and at the end (out is then empty); without, everything stays in out.
 * Returns the number of blobs left out because a write to them was in flight (0 normally),
 * or -1 if the sink failed. */
long long rewrite_dataset(buf_t *out, rewrite_sink_fn *sink, void *ud);
/* Sets what rewrite_dataset writes before the databases: commands (RESP) that rebuild state
 * that is not keys, such as function libraries (server/rooms.c sets it). NULL: nothing. */
void rewrite_set_prelude(void (*fn)(buf_t *out));
#endif
