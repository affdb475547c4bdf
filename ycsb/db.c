/* db.c - the status table and the list of bindings (see db.h). */
#include "db.h"

#include <stdlib.h>
#include <string.h>

static const char *const status_name[] = {
#define DB_X_NAME(code, name, desc) name,
    DB_STATUSES(DB_X_NAME)
#undef DB_X_NAME
};

static const char *const status_desc[] = {
#define DB_X_DESC(code, name, desc) desc,
    DB_STATUSES(DB_X_DESC)
#undef DB_X_DESC
};

const char *db_status_name(db_status_t s)
{
    return status_name[s];
}

const char *db_status_desc(db_status_t s)
{
    return status_desc[s];
}

int db_status_ok(db_status_t s)
{
    return s == DB_OK || s == DB_BATCHED_OK;
}

void db_result_add(db_result_t *r, const char *name, size_t name_len, const char *data, size_t len)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->cell = util_xrealloc(r->cell, r->cap * sizeof *r->cell);
    }
    r->cell[r->n++] = (db_cell_t){name, name_len, data, len};
}

void db_result_free(db_result_t *r)
{
    free(r->cell);
    *r = (db_result_t){0};
}

const db_binding_t *db_find(const char *name)
{
    if (strcmp(name, "redis") == 0 || strcmp(name, "site.ycsb.db.RedisClient") == 0)
        return &db_redis_binding;
    if (strcmp(name, "cte") == 0) return &db_cte_binding;
    return NULL;
}
