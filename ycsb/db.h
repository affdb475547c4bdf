/* db.h - the interface between CoreWorkload and a binding (YCSB's site.ycsb.DB), and the
 * statuses an operation ends with (site.ycsb.Status).
 *
 * A binding is a table of functions. cte-ycsb opens one instance per client thread (YCSB's
 * DB.init, in that thread) and calls it from that thread only, one operation at a time, so a
 * binding needs no locking of its own. Records are fieldcount named fields; fields are named
 * by their index into the schema. Everything a binding hands back (db_result_t cells) is a
 * view into its own buffers, valid until its next call. */
#ifndef YCSB_DB_H
#define YCSB_DB_H

#include "props.h"
#include "util.h"

#include <stddef.h>

/* X(code, name, description): YCSB's Status constants (the description takes part in
 * Status.hashCode, which orders the report's Return= lines). */
#define DB_STATUSES(X)                                                                             \
    X(DB_OK, "OK", "The operation completed successfully.")                                        \
    X(DB_ERROR, "ERROR", "The operation failed.")                                                  \
    X(DB_NOT_FOUND, "NOT_FOUND", "The requested record was not found.")                            \
    X(DB_NOT_IMPLEMENTED, "NOT_IMPLEMENTED",                                                       \
      "The operation is not implemented for the current binding.")                                 \
    X(DB_UNEXPECTED_STATE, "UNEXPECTED_STATE",                                                     \
      "The operation reported success, but the result was not as expected.")                       \
    X(DB_BAD_REQUEST, "BAD_REQUEST", "The request was not valid.")                                 \
    X(DB_FORBIDDEN, "FORBIDDEN", "The operation is forbidden.")                                    \
    X(DB_SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE",                                               \
      "Dependant service for the current binding is not available.")                               \
    X(DB_BATCHED_OK, "BATCHED_OK",                                                                 \
      "The operation has been batched by the binding to be executed later.")

typedef enum db_status {
#define DB_X_ENUM(code, name, desc) code,
    DB_STATUSES(DB_X_ENUM)
#undef DB_X_ENUM
        DB_STATUS_COUNT
} db_status_t;

/* The status's YCSB name ("OK", "NOT_FOUND"), and description. */
const char *db_status_name(db_status_t s);
const char *db_status_desc(db_status_t s);
/* Status.isOk(): OK and BATCHED_OK. */
int db_status_ok(db_status_t s);

/* What a record is made of; owned by the workload, alive while any binding instance is. */
typedef struct db_schema {
    const char *table;        /* the "table" property (default usertable) */
    size_t fieldcount;        /* >= 1 */
    const char *const *field; /* field names, NUL-terminated */
    const size_t *field_len;
    size_t fieldlength_max; /* no field value is longer */
} db_schema_t;

/* One field to write. */
typedef struct db_value {
    size_t field; /* index into the schema */
    const char *data;
    size_t len;
} db_value_t;

/* One field read back: views valid until the binding's next call. data NULL: the server sent
 * nil for it (HMGET of a missing field). */
typedef struct db_cell {
    const char *name;
    size_t name_len;
    const char *data;
    size_t len;
} db_cell_t;

/* A read's result, filled by the binding (cells owned by the caller's result, reused). */
typedef struct db_result {
    db_cell_t *cell;
    size_t n, cap;
} db_result_t;

/* Appends a cell (grows the array; aborts only when memory runs out). */
void db_result_add(db_result_t *r, const char *name, size_t name_len, const char *data, size_t len);
void db_result_free(db_result_t *r);

typedef struct db_binding {
    const char *name;
    /* Checks the binding's properties before any thread starts: 0, or -EINVAL with e. */
    int (*check)(const props_t *p, util_err_t *e);
    /* DB.init for one thread: connects. 0, or a failure with e saying why. */
    int (*open)(void **db, const props_t *p, const db_schema_t *s, util_err_t *e);
    /* DB.cleanup: closes and frees. */
    void (*close)(void *db);
    /* fields NULL: every field. out->n is 0 on entry. */
    db_status_t (*read)(void *db, const char *key, size_t klen, const size_t *fields,
                        size_t nfields, db_result_t *out);
    /* Up to count records from startkey on; *nrecords gets how many were read. */
    db_status_t (*scan)(void *db, const char *startkey, size_t klen, int count,
                        const size_t *fields, size_t nfields, size_t *nrecords);
    db_status_t (*update)(void *db, const char *key, size_t klen, const db_value_t *v, size_t n);
    db_status_t (*insert)(void *db, const char *key, size_t klen, const db_value_t *v, size_t n);
    db_status_t (*remove)(void *db, const char *key, size_t klen);
    /* NULL while the connection works; once it broke, why (then every call fails). */
    const char *(*broken)(void *db);
} db_binding_t;

/* The binding called name ("redis", "cte", or YCSB's class name site.ycsb.db.RedisClient), or
 * NULL. */
const db_binding_t *db_find(const char *name);

extern const db_binding_t db_redis_binding;
extern const db_binding_t db_cte_binding;

#endif
