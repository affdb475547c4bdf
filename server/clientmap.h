/* clientmap.h - a map from a byte-string name to an ordered list of clients.
 *
 * The one shape behind WATCH (db and key -> watching clients), blocking pops (db and key ->
 * blocked clients, first come first served) and pub/sub (channel or pattern -> subscribers).
 * Clients keep their order of arrival; removing one keeps the others' order. An entry exists
 * while it has at least one client. Runs on the loop thread. */
#ifndef CTE_SERVER_CLIENTMAP_H
#define CTE_SERVER_CLIENTMAP_H

#include "common/dict.h"
#include "server/client.h"

#include <stddef.h>

typedef struct clientmap_entry {
    dict_node_t node; /* node.aux: name length */
    client_t **clients;
    int n, cap;
    char name[];
} clientmap_entry_t;

typedef struct clientmap {
    dict_t d;
} clientmap_t;

void clientmap_init(clientmap_t *m);
/* Frees every entry (not the clients). */
void clientmap_clear(clientmap_t *m);
clientmap_entry_t *clientmap_find(clientmap_t *m, const void *name, size_t len);
/* Appends c to name's list, creating the entry. Returns the entry. */
clientmap_entry_t *clientmap_add(clientmap_t *m, const void *name, size_t len, client_t *c);
/* Removes c from name's list (dropping the entry when it empties); 1 if c was there. */
int clientmap_remove(clientmap_t *m, const void *name, size_t len, client_t *c);
static inline uint64_t clientmap_size(const clientmap_t *m)
{
    return dict_size(&m->d);
}

/* Names for (db, key) pairs: 4 bytes of db id then the key. Writes into buf when it fits
 * (cap bytes), else allocates; free with clientmap_dbkey_free(result, buf). */
char *clientmap_dbkey(int dbid, const char *key, size_t len, char *buf, size_t cap);
void clientmap_dbkey_free(char *k, char *buf);
/* The db id and key of an entry named by clientmap_dbkey. */
int clientmap_entry_db(const clientmap_entry_t *e);
const char *clientmap_entry_key(const clientmap_entry_t *e, size_t *len);

#endif
