/* slot_index.c - the keys of a db by hash slot (see slot_index.h).
 *
 * 16384 dicts, one per slot, of nodes {dict node, kv pointer}; a node's hash is the kv's own
 * (the same key bytes), so adding and deleting hash nothing but the slot's CRC16. Loop
 * thread only. */
#include "storage/slot_index.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/keyslot.h"
#include "storage/db.h"

#include <assert.h>

typedef struct si_node {
    dict_node_t node;
    kv_t *kv;
} si_node_t;

struct slot_index {
    dict_t slots[KEYSLOT_COUNT];
};

static const void *si_key(const dict_node_t *n, size_t *len)
{
    const kv_t *kv = ((const si_node_t *)n)->kv;
    *len = kv_keylen(kv);
    return kv_key(kv);
}

static void si_free_node(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t si_type = {si_key, si_free_node};

slot_index_t *slot_index_new(void)
{
    slot_index_t *si = xmalloc(sizeof(*si));
    for (int s = 0; s < KEYSLOT_COUNT; s++) dict_init(&si->slots[s], &si_type);
    return si;
}

void slot_index_free(slot_index_t *si)
{
    if (!si) return;
    slot_index_clear(si);
    xfree(si);
}

static dict_t *slot_of(slot_index_t *si, const kv_t *kv)
{
    return &si->slots[keyslot(kv_key(kv), kv_keylen(kv))];
}

void slot_index_add(slot_index_t *si, kv_t *kv)
{
    si_node_t *n = xmalloc(sizeof(*n));
    n->kv = kv;
    n->node.hash = kv->node.hash;
    n->node.aux = 0;
    dict_insert(slot_of(si, kv), &n->node);
}

void slot_index_del(slot_index_t *si, kv_t *kv)
{
    dict_node_t *n = dict_unlink(slot_of(si, kv), kv_key(kv), kv_keylen(kv), kv->node.hash);
    assert(n && ((si_node_t *)n)->kv == kv);
    xfree(n);
}

void slot_index_clear(slot_index_t *si)
{
    for (int s = 0; s < KEYSLOT_COUNT; s++)
        if (dict_size(&si->slots[s]) || dict_buckets(&si->slots[s]))
            dict_clear(&si->slots[s], NULL);
}

uint64_t slot_index_count(const slot_index_t *si, int slot)
{
    return dict_size(&si->slots[slot]);
}

size_t slot_index_keys(slot_index_t *si, int slot, kv_t **out, size_t max)
{
    size_t n = 0;
    dict_iter_t it;
    dict_iter_init(&it, &si->slots[slot], 0);
    for (dict_node_t *d; n < max && (d = dict_iter_next(&it));) out[n++] = ((si_node_t *)d)->kv;
    dict_iter_deinit(&it);
    return n;
}
