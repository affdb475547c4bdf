/* server/cmd/search.h - TQUERY and TSEARCH, and the hooks that keep the search catalogue
 * (search/search.h) in step with the keyspace (server/cmd/search.c).
 *
 * The server calls searchcmd_init() after the tiers are open: it registers storage's
 * blob and tag observers. server_key_changed() passes every key event to
 * searchcmd_on_key_event(), SWAPDB calls searchcmd_on_swapdb(). Loop thread only. */
#ifndef CTE_SERVER_CMD_SEARCH_H
#define CTE_SERVER_CMD_SEARCH_H

#include "common/buf.h"
#include "storage/t_tag.h"
#include "server/client.h"
#include "storage/db.h"

#include <stddef.h>

/* Creates the (empty) catalogue and registers the storage observers. Call again after
 * searchcmd_deinit (unit tests). */
void searchcmd_init(void);
/* Frees the catalogue; call after every database was freed. */
void searchcmd_deinit(void);
/* A key event (server_key_changed): binds a tag key's object to its name after writes,
 * RENAME and MOVE. */
void searchcmd_on_key_event(db_t *db, const char *key, size_t len, int klass, const char *event);
/* SWAPDB a b (after db_swap). */
void searchcmd_on_swapdb(int a, int b);
/* The last write plan in flight finished (cmd_tag.c): TSEARCH may stop waiting. */
void searchcmd_on_writes_settled(void);
/* Periodic work (server cron): a bounded step of index compaction. */
void searchcmd_cron(void);
/* CONFIG SET search-enabled changed its value: every blob of every database is indexed again
 * from its first search-max-bytes-per-blob bytes (yes), or its contents leave the index (no).
 * RAM blobs at once, file-tier blobs through read plans as after a write. */
void searchcmd_reindex_all(void);
/* TLIST's ordered form: the names of tag object t's blobs from the first >= from[0..flen) on,
 * bytewise, at most count (search_tag_range; the catalogue files every blob's name whether or
 * not search-enabled indexes contents). Returns how many were emitted. */
uint64_t searchcmd_tag_range(const tag_obj_t *t, const char *from, size_t flen, uint64_t count,
                             void (*emit)(void *ud, const char *name, size_t len), void *ud);
/* INFO's "# Search" section. */
void searchcmd_info(buf_t *b);

/* The commands, rows of the tag command table (cmd_tag.c). */
void tquery_cmd(client_t *c);
void tsearch_cmd(client_t *c);

#endif
