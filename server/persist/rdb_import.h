/* rdb_import.h - loading a Redis RDB file (versions 1 to 10: Redis 2.6 to 7.0, tested with
 * the RDB 9 of Redis 5 and 6 and the RDB 10 of 7.0) into the keyspace: `cte-server
 * --import-rdb FILE`.
 *
 * Every standard type in every encoding those versions write (server/persist/rdb.h), the
 * databases (SELECTDB, RESIZEDB), expiry times in seconds or ms (keys already expired are left
 * out and counted, as a Redis master loading its RDB does), LRU idle times and LFU counters,
 * and aux fields (logged). Function libraries (RDB_OPCODE_FUNCTION2) are loaded as FUNCTION
 * LOAD REPLACE would load them. What cannot be loaded is reported by key name in the log and
 * counted, never dropped silently: module values (RDB_TYPE_MODULE_2, skipped by their
 * annotations), libraries our engine refuses. Streams load (both stream types). A module value of the old
 * format (type 6, not skippable), a function record of a 7.0 release candidate, a corrupt
 * value or a bad checksum stop the import. A key already present (an AOF loaded first) is
 * replaced. Loop thread, at start-up. */
#ifndef CTE_SERVER_PERSIST_RDB_IMPORT_H
#define CTE_SERVER_PERSIST_RDB_IMPORT_H

#include <stdint.h>

typedef struct rdb_import_stats {
    uint64_t keys;      /* loaded */
    uint64_t expired;   /* left out: their time had passed */
    uint64_t skipped;   /* could not be loaded (reported by name) */
    uint64_t replaced;  /* replaced a key already present */
    uint64_t functions; /* libraries loaded */
    int version;        /* the file's RDB version */
} rdb_import_stats_t;

/* Loads the RDB file at path into srv.db, logging a progress line about once a second and
 * calling events() (NULL: never) about every 10 ms so that clients get -LOADING meanwhile.
 * Returns 0, -1 with the reason logged (keys loaded before the error stay), or
 * RDB_IMPORT_STOPPED when a shutdown arrived during events(). st may be NULL. */
#define RDB_IMPORT_STOPPED 1
int rdb_import_file(const char *path, void (*events)(void), rdb_import_stats_t *st);

#endif
