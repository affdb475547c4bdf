/* clientmap.c - name -> ordered client list (see clientmap.h). */
#include "server/clientmap.h"

#include "common/alloc.h"

#include <string.h>

static const void *entry_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const clientmap_entry_t *)n)->name;
}

static void entry_free(dict_node_t *n, void *ud)
{
    xfree(((clientmap_entry_t *)n)->clients);
    xfree(n);
}

static const dict_type_t entry_type = {entry_key, entry_free};

void clientmap_init(clientmap_t *m)
{
    dict_init(&m->d, &entry_type);
}

void clientmap_clear(clientmap_t *m)
{
    dict_clear(&m->d, NULL);
}

clientmap_entry_t *clientmap_find(clientmap_t *m, const void *name, size_t len)
{
    if (dict_size(&m->d) == 0) return NULL;
    return (clientmap_entry_t *)dict_find(&m->d, name, len, dict_hash(name, len));
}

clientmap_entry_t *clientmap_add(clientmap_t *m, const void *name, size_t len, client_t *c)
{
    clientmap_entry_t *e = clientmap_find(m, name, len);
    if (!e) {
        e = xcalloc(1, sizeof(*e) + len + 1);
        memcpy(e->name, name, len);
        e->node.aux = (uint32_t)len;
        e->node.hash = dict_hash(name, len);
        dict_insert(&m->d, &e->node);
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 2;
        e->clients = xrealloc(e->clients, sizeof(client_t *) * (size_t)e->cap);
    }
    e->clients[e->n++] = c;
    return e;
}

int clientmap_remove(clientmap_t *m, const void *name, size_t len, client_t *c)
{
    clientmap_entry_t *e = clientmap_find(m, name, len);
    if (!e) return 0;
    for (int i = 0; i < e->n; i++) {
        if (e->clients[i] != c) continue;
        memmove(&e->clients[i], &e->clients[i + 1], sizeof(client_t *) * (size_t)(e->n - i - 1));
        if (--e->n == 0) entry_free(dict_unlink(&m->d, name, len, e->node.hash), NULL);
        return 1;
    }
    return 0;
}

char *clientmap_dbkey(int dbid, const char *key, size_t len, char *buf, size_t cap)
{
    char *k = len + 4 <= cap ? buf : xmalloc(len + 4);
    uint32_t id = (uint32_t)dbid;
    memcpy(k, &id, 4);
    memcpy(k + 4, key, len);
    return k;
}

void clientmap_dbkey_free(char *k, char *buf)
{
    if (k != buf) xfree(k);
}

int clientmap_entry_db(const clientmap_entry_t *e)
{
    uint32_t id;
    memcpy(&id, e->name, 4);
    return (int)id;
}

const char *clientmap_entry_key(const clientmap_entry_t *e, size_t *len)
{
    *len = e->node.aux - 4;
    return e->name + 4;
}
