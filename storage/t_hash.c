/* t_hash.c - hashes in two encodings (see t_hash.h).
 *
 * Listpack: one allocation, the object header followed by the entries, field and value
 * alternating, each a varint length (7 bits a byte, low bits first) and the bytes:
 *
 *   offset  size  what
 *   0       8     obj_t (enc = ENC_LISTPACK)
 *   8       4     count: number of fields
 *   12      4     used: bytes of entries in data
 *   16      used  varint flen, field, varint vlen, value, varint flen, field, ...
 *
 * The block is grown with realloc as entries are added (so the hash moves) and shrunk when a
 * delete leaves much of it unused. A write that makes the hash longer than
 * hash-max-listpack-entries converts it to a hashtable, as in Redis. Unlike Redis, a field or
 * value longer than hash-max-listpack-value does not convert: it only sets HASH_FLAG_HT
 * (object.h), so the hash is reported, dumped and saved as the hashtable Redis would have
 * made, while its bytes stay in one block. A YCSB record (10 fields of 100 bytes, about 1.1 KB
 * of entries) is therefore one allocation instead of eleven. Such a flagged listpack converts
 * when its entries would pass HASH_LP_MAX_BYTES, which bounds what a linear search and a
 * value rewrite (memmove of the tail) cost; one Redis reports as a listpack converts only past
 * LP_SAFE_MAX (1 GiB, Redis's listpack safety limit), so that a hashtable is never reported
 * where Redis has a listpack.
 *
 * Hashtable: the header (obj_t and an embedded dict_t, 80 bytes) and one allocation per field:
 *
 *   offset       size         what
 *   0            16           dict_node_t (node.aux = field length)
 *   16           flen         field bytes
 *   16+flen      1..5         varint value length
 *   ...          vlen         value bytes
 *
 * A YCSB record field (6-byte name, 100-byte value) is 123 bytes, one 128-byte block, where
 * Redis spends a dictEntry, two sds and a bucket slot (about 170 bytes). The bucket array is
 * the other per-field cost, so hash dicts run fuller than the keyspace's: dict.c's own growth
 * is switched off with no_resize (its 5x force ratio stays as a safety net) and reserve() grows
 * the table before an insert would pass 4 fields a bucket while the table has at most 64
 * buckets, 2 above (a 10-field record sits in 4 buckets, 32 bytes). Lookups compare the cached
 * 32-bit hash before touching a field, so the longer chains cost little. Deletes shrink a table
 * that falls below 1/8 full, as Redis's hashTypeDelete does.
 *
 * Invariants: a listpack's count and used describe exactly the entries in data; a hashtable's
 * dict has no_resize set and holds one node per field; no field appears twice.
 * Runs on the loop thread. */
#include "storage/t_hash.h"

#include "common/alloc.h"
#include "common/util.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#define LP_SAFE_MAX (1u << 30)
#define LP_NONE ((size_t)-1)

typedef struct lp_hash {
    obj_t h;
    uint32_t count;
    uint32_t used;
    unsigned char data[];
} lp_hash_t;
_Static_assert(sizeof(lp_hash_t) == 16, "listpack hash header is 16 bytes");
#define LP_HDR offsetof(lp_hash_t, data)

typedef struct ht_hash {
    obj_t h;
    dict_t d;
} ht_hash_t;

typedef struct hfield {
    dict_node_t node; /* node.aux = field length */
    unsigned char data[];
} hfield_t;

static inline lp_hash_t *as_lp(const hash_t *h)
{
    assert(h->h.enc == ENC_LISTPACK);
    return (lp_hash_t *)(void *)h;
}

static inline ht_hash_t *as_ht(const hash_t *h)
{
    assert(h->h.enc == ENC_HT);
    return (ht_hash_t *)(void *)h;
}

/* ---- varints ---- */

static inline size_t varint_len(size_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t varint_put(unsigned char *p, size_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline size_t varint_get(const unsigned char *p, size_t *v)
{
    size_t r = 0, n = 0;
    unsigned shift = 0;
    for (;;) {
        unsigned char b = p[n++];
        r |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
    }
    *v = r;
    return n;
}

/* Bytes one field/value pair takes in a listpack. */
static inline size_t lp_pair_size(size_t flen, size_t vlen)
{
    return varint_len(flen) + flen + varint_len(vlen) + vlen;
}

/* ---- hashtable fields ---- */

static const void *field_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const hfield_t *)n)->data;
}

static void field_free(dict_node_t *n, void *ud)
{
    (void)ud;
    xfree(n);
}

static const dict_type_t field_dict_type = {field_key, field_free};

static inline size_t field_size(size_t flen, size_t vlen)
{
    return sizeof(hfield_t) + flen + varint_len(vlen) + vlen;
}

/* Writes the value length and bytes after the field of f. */
static inline void field_put_value(hfield_t *f, const void *v, size_t vlen)
{
    unsigned char *p = f->data + f->node.aux;
    p += varint_put(p, vlen);
    if (vlen) memcpy(p, v, vlen);
}

static hfield_t *field_new(const void *fld, size_t flen, const void *v, size_t vlen, uint32_t hv)
{
    assert(flen <= UINT32_MAX);
    hfield_t *f = xmalloc(field_size(flen, vlen));
    f->node.next = NULL;
    f->node.hash = hv;
    f->node.aux = (uint32_t)flen;
    if (flen) memcpy(f->data, fld, flen);
    field_put_value(f, v, vlen);
    return f;
}

static inline void field_entry(const dict_node_t *n, hash_entry_t *e)
{
    const hfield_t *f = (const hfield_t *)n;
    e->field = (const char *)f->data;
    e->flen = n->aux;
    const unsigned char *p = f->data + n->aux;
    p += varint_get(p, &e->vlen);
    e->value = (const char *)p;
}

/* ---- hashtable sizing ---- */

/* Most fields per bucket a table of that many buckets may hold before it grows. */
static inline uint64_t max_fill(uint64_t buckets)
{
    return buckets <= 64 ? 4 : 2;
}

/* Grows the bucket array, if needed, so that n fields stay within max_fill. dict_expand()
 * only grows a table past its element count, so a table that already holds more fields than
 * the target's bucket count grows to the power of two above its count instead. */
static void reserve(dict_t *d, uint64_t n)
{
    if (dict_is_rehashing(d)) return;
    uint64_t size = d->size[0];
    if (size && n <= size * max_fill(size)) return;
    uint64_t want = 4;
    while (n > want * max_fill(want)) want <<= 1;
    if (want > dict_size(d))
        dict_expand(d, want);
    else
        dict_expand(d, dict_size(d) + 1);
}

static void shrink(dict_t *d)
{
    d->no_resize = 0;
    dict_try_shrink(d);
    d->no_resize = 1;
}

static ht_hash_t *ht_new(const obj_t *hdr, uint64_t n)
{
    ht_hash_t *ht = xmalloc(sizeof(*ht));
    ht->h = *hdr;
    ht->h.enc = ENC_HT;
    dict_init(&ht->d, &field_dict_type);
    ht->d.no_resize = 1;
    if (n) reserve(&ht->d, n);
    return ht;
}

/* Adds a field known to be absent. */
static void ht_add(ht_hash_t *ht, const void *fld, size_t flen, const void *v, size_t vlen)
{
    reserve(&ht->d, dict_size(&ht->d) + 1);
    hfield_t *f = field_new(fld, flen, v, vlen, dict_hash(fld, flen));
    dict_insert(&ht->d, &f->node);
}

static int ht_set(ht_hash_t *ht, const void *fld, size_t flen, const void *v, size_t vlen)
{
    uint32_t hv = dict_hash(fld, flen);
    hfield_t *old = (hfield_t *)dict_find(&ht->d, fld, flen, hv);
    if (!old) {
        reserve(&ht->d, dict_size(&ht->d) + 1);
        hfield_t *f = field_new(fld, flen, v, vlen, hv);
        dict_insert(&ht->d, &f->node);
        return 1;
    }
    /* Rewrite in place when the block fits and is not more than twice too large. */
    size_t need = field_size(flen, vlen), usable = alloc_size(old);
    if (need <= usable && need * 2 >= usable) {
        field_put_value(old, v, vlen);
        return 0;
    }
    hfield_t *f = field_new(fld, flen, v, vlen, hv);
    dict_replace(&ht->d, &old->node, &f->node);
    xfree(old);
    return 0;
}

/* ---- listpack ---- */

/* Decodes the pair at off into e; returns the offset of the next pair. */
static inline size_t lp_decode(const lp_hash_t *lp, size_t off, hash_entry_t *e)
{
    const unsigned char *p = lp->data + off;
    p += varint_get(p, &e->flen);
    e->field = (const char *)p;
    p += e->flen;
    p += varint_get(p, &e->vlen);
    e->value = (const char *)p;
    p += e->vlen;
    return (size_t)(p - lp->data);
}

/* The offset of the pair whose field is fld (decoded into e), or LP_NONE. */
static size_t lp_find(const lp_hash_t *lp, const void *fld, size_t flen, hash_entry_t *e)
{
    size_t off = 0;
    while (off < lp->used) {
        size_t next = lp_decode(lp, off, e);
        if (e->flen == flen && memcmp(e->field, fld, flen) == 0) return off;
        off = next;
    }
    return LP_NONE;
}

/* Most bytes of entries lp may hold as a listpack. */
static inline size_t lp_max_bytes(const lp_hash_t *lp)
{
    return (lp->h.flags & HASH_FLAG_HT) ? HASH_LP_MAX_BYTES : LP_SAFE_MAX;
}

/* Makes room for used bytes of entries; may move lp. */
static lp_hash_t *lp_room(lp_hash_t *lp, size_t used)
{
    if (LP_HDR + used <= alloc_size(lp)) return lp;
    return xrealloc(lp, LP_HDR + used);
}

/* Gives back memory when the block is much larger than its entries; may move lp. */
static lp_hash_t *lp_fit(lp_hash_t *lp)
{
    size_t need = LP_HDR + lp->used;
    if (alloc_size(lp) > need + need / 4 + 16) lp = xrealloc(lp, need);
    return lp;
}

static void lp_append(lp_hash_t **lpp, const void *fld, size_t flen, const void *v, size_t vlen)
{
    size_t add = lp_pair_size(flen, vlen);
    lp_hash_t *lp = lp_room(*lpp, (*lpp)->used + add);
    unsigned char *p = lp->data + lp->used;
    p += varint_put(p, flen);
    if (flen) memcpy(p, fld, flen);
    p += flen;
    p += varint_put(p, vlen);
    if (vlen) memcpy(p, v, vlen);
    lp->used += (uint32_t)add;
    lp->count++;
    *lpp = lp;
}

/* Replaces the value of the pair decoded into e with v. */
static void lp_replace(lp_hash_t **lpp, const hash_entry_t *e, const void *v, size_t vlen)
{
    lp_hash_t *lp = *lpp;
    size_t oldsz = varint_len(e->vlen) + e->vlen, newsz = varint_len(vlen) + vlen;
    size_t start = (size_t)((const unsigned char *)e->value - lp->data) - varint_len(e->vlen);
    size_t tail = lp->used - (start + oldsz);
    if (newsz > oldsz) lp = lp_room(lp, lp->used + (newsz - oldsz));
    memmove(lp->data + start + newsz, lp->data + start + oldsz, tail);
    unsigned char *p = lp->data + start;
    p += varint_put(p, vlen);
    if (vlen) memcpy(p, v, vlen);
    lp->used = (uint32_t)(start + newsz + tail);
    if (newsz < oldsz) lp = lp_fit(lp);
    *lpp = lp;
}

static int lp_del(lp_hash_t **lpp, const void *fld, size_t flen)
{
    lp_hash_t *lp = *lpp;
    hash_entry_t e;
    size_t off = lp_find(lp, fld, flen, &e);
    if (off == LP_NONE) return 0;
    size_t end = (size_t)((const unsigned char *)e.value - lp->data) + e.vlen;
    memmove(lp->data + off, lp->data + end, lp->used - end);
    lp->used -= (uint32_t)(end - off);
    lp->count--;
    *lpp = lp_fit(lp);
    return 1;
}

/* Converts a listpack to a hashtable with room for reserve_n fields. */
static hash_t *lp_to_ht(lp_hash_t *lp, uint64_t reserve_n)
{
    if (reserve_n < lp->count) reserve_n = lp->count;
    ht_hash_t *ht = ht_new(&lp->h, reserve_n);
    hash_entry_t e;
    for (size_t off = 0; off < lp->used;) {
        off = lp_decode(lp, off, &e);
        ht_add(ht, e.field, e.flen, e.value, e.vlen);
    }
    xfree(lp);
    return (hash_t *)(void *)ht;
}

/* ---- lifecycle ---- */

hash_t *hash_new(void)
{
    lp_hash_t *lp = xmalloc(LP_HDR);
    lp->h.type = OBJ_HASH;
    lp->h.enc = ENC_LISTPACK;
    lp->h.flags = 0;
    lp->h.lru = obj_clock_new();
    lp->count = 0;
    lp->used = 0;
    return (hash_t *)(void *)lp;
}

void hash_free(hash_t *h)
{
    if (!h) return;
    if (h->h.enc == ENC_HT) dict_clear(&as_ht(h)->d, NULL);
    xfree(h);
}

hash_t *hash_dup(const hash_t *h)
{
    if (h->h.enc == ENC_LISTPACK) {
        const lp_hash_t *lp = as_lp(h);
        lp_hash_t *n = xmalloc(LP_HDR + lp->used);
        memcpy(n, lp, LP_HDR + lp->used);
        return (hash_t *)(void *)n;
    }
    ht_hash_t *src = as_ht(h);
    ht_hash_t *ht = ht_new(&src->h, dict_size(&src->d));
    dict_iter_t it;
    dict_iter_init(&it, &src->d, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) {
        hash_entry_t e;
        field_entry(n, &e);
        size_t sz = field_size(e.flen, e.vlen);
        hfield_t *f = xmalloc(sz);
        memcpy(f, n, sz);
        dict_insert(&ht->d, &f->node);
    }
    dict_iter_deinit(&it);
    return (hash_t *)(void *)ht;
}

size_t hash_len(const hash_t *h)
{
    if (h->h.enc == ENC_LISTPACK) return as_lp(h)->count;
    return dict_size(&as_ht(h)->d);
}

size_t hash_memory(const hash_t *h)
{
    size_t total = alloc_size(h);
    if (h->h.enc == ENC_LISTPACK) return total;
    ht_hash_t *ht = as_ht(h);
    total += dict_buckets_bytes(&ht->d);
    size_t len = dict_size(&ht->d), seen = 0, bytes = 0;
    dict_iter_t it;
    dict_iter_init(&it, &ht->d, 0);
    for (dict_node_t *n; seen < 128 && (n = dict_iter_next(&it)); seen++) bytes += alloc_size(n);
    dict_iter_deinit(&it);
    if (seen && seen < len) bytes = (size_t)((double)bytes / (double)seen * (double)len);
    return total + bytes;
}

void hash_convert(hash_t **hp)
{
    if ((*hp)->h.enc == ENC_LISTPACK) *hp = lp_to_ht(as_lp(*hp), 0);
}

void hash_report_listpack(hash_t **hp)
{
    hash_t *h = *hp;
    assert(hash_len(h) <= storage_params.hash_max_listpack_entries);
    h->h.flags &= (uint16_t)~HASH_FLAG_HT;
    if (h->h.enc == ENC_LISTPACK) return;
    hash_t *n = hash_new();
    n->h = h->h;
    n->h.enc = ENC_LISTPACK;
    lp_hash_t *lp = (lp_hash_t *)(void *)n;
    hash_iter_t it;
    hash_entry_t e;
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &e)) {
        assert(lp->used + lp_pair_size(e.flen, e.vlen) <= LP_SAFE_MAX);
        lp_append(&lp, e.field, e.flen, e.value, e.vlen);
    }
    hash_free(h);
    *hp = (hash_t *)(void *)lp;
}

static void ops_free(obj_t *o)
{
    hash_free((hash_t *)(void *)o);
}

static obj_t *ops_dup(const obj_t *o)
{
    return &hash_dup((const hash_t *)(const void *)o)->h;
}

static size_t ops_memory(const obj_t *o)
{
    return hash_memory((const hash_t *)(const void *)o);
}

static size_t ops_length(const obj_t *o)
{
    return hash_len((const hash_t *)(const void *)o);
}

static const obj_ops_t hash_ops = {ops_free, ops_dup, ops_memory, ops_length};

__attribute__((constructor)) static void reg(void)
{
    obj_types[OBJ_HASH] = &hash_ops;
}

/* ---- fields ---- */

void hash_prepare(hash_t **hp, size_t npairs, size_t maxlen, size_t sumlen)
{
    hash_t *h = *hp;
    if (h->h.enc == ENC_LISTPACK) {
        lp_hash_t *lp = as_lp(h);
        /* Redis converts here on a long argument: remember it, keep the bytes. */
        if (maxlen > storage_params.hash_max_listpack_value) lp->h.flags |= HASH_FLAG_HT;
        if ((size_t)lp->used + sumlen > lp_max_bytes(lp)) {
            /* Past the budget (counting every pair as new, so a hash near it may convert one
             * write early): one conversion instead of growing first. */
            *hp = lp_to_ht(lp, lp->count ? 0 : npairs);
        } else if (!lp->count) {
            /* A new record: its one allocation sized for every pair at once. */
            size_t most = sumlen + 2 * npairs * varint_len(maxlen);
            if (most <= HASH_LP_MAX_BYTES) *hp = (hash_t *)(void *)lp_room(lp, most);
        }
        return;
    }
    ht_hash_t *ht = as_ht(h);
    if (dict_size(&ht->d) == 0) reserve(&ht->d, npairs);
}

int hash_set(hash_t **hp, const void *field, size_t flen, const void *value, size_t vlen)
{
    if ((*hp)->h.enc == ENC_LISTPACK) {
        lp_hash_t *lp = as_lp(*hp);
        size_t maxv = storage_params.hash_max_listpack_value;
        if (flen > maxv || vlen > maxv) lp->h.flags |= HASH_FLAG_HT; /* Redis converts here */
        hash_entry_t e;
        size_t off = lp_find(lp, field, flen, &e);
        size_t used = lp->used + varint_len(vlen) + vlen;
        used =
            off != LP_NONE ? used - (varint_len(e.vlen) + e.vlen) : used + varint_len(flen) + flen;
        if (used > lp_max_bytes(lp)) {
            *hp = lp_to_ht(lp, (size_t)lp->count + (off == LP_NONE));
        } else {
            int added = 0;
            if (off != LP_NONE) {
                lp_replace(&lp, &e, value, vlen);
            } else {
                lp_append(&lp, field, flen, value, vlen);
                added = 1;
            }
            *hp = (hash_t *)(void *)lp;
            if (lp->count > storage_params.hash_max_listpack_entries) *hp = lp_to_ht(lp, 0);
            return added;
        }
    }
    return ht_set(as_ht(*hp), field, flen, value, vlen);
}

int hash_get(hash_t *h, const void *field, size_t flen, const char **value, size_t *vlen)
{
    hash_entry_t e;
    if (h->h.enc == ENC_LISTPACK) {
        if (lp_find(as_lp(h), field, flen, &e) == LP_NONE) return 0;
    } else {
        ht_hash_t *ht = as_ht(h);
        dict_node_t *n = dict_find(&ht->d, field, flen, dict_hash(field, flen));
        if (!n) return 0;
        field_entry(n, &e);
    }
    if (value) *value = e.value;
    if (vlen) *vlen = e.vlen;
    return 1;
}

int hash_del(hash_t **hp, const void *field, size_t flen)
{
    if ((*hp)->h.enc == ENC_LISTPACK) {
        lp_hash_t *lp = as_lp(*hp);
        int r = lp_del(&lp, field, flen);
        *hp = (hash_t *)(void *)lp;
        return r;
    }
    ht_hash_t *ht = as_ht(*hp);
    dict_node_t *n = dict_unlink(&ht->d, field, flen, dict_hash(field, flen));
    if (!n) return 0;
    xfree(n);
    shrink(&ht->d);
    return 1;
}

/* ---- iteration ---- */

void hash_iter_init(hash_iter_t *it, hash_t *h)
{
    it->h = h;
    it->off = 0;
    if (h->h.enc == ENC_HT) dict_iter_init(&it->di, &as_ht(h)->d, 0);
}

int hash_iter_next(hash_iter_t *it, hash_entry_t *e)
{
    if (it->h->h.enc == ENC_LISTPACK) {
        const lp_hash_t *lp = as_lp(it->h);
        if (it->off >= lp->used) return 0;
        it->off = lp_decode(lp, it->off, e);
        return 1;
    }
    dict_node_t *n = dict_iter_next(&it->di);
    if (!n) return 0;
    field_entry(n, e);
    return 1;
}

/* ---- random fields ---- */

/* The pair at index i (< count) of a listpack, by walking. */
static void lp_at(const lp_hash_t *lp, size_t i, hash_entry_t *e)
{
    size_t off = lp_decode(lp, 0, e);
    while (i--) off = lp_decode(lp, off, e);
}

/* Every field of h into a new array of hash_len(h) entries (the caller frees it). */
static hash_entry_t *collect(hash_t *h)
{
    size_t n = hash_len(h), i = 0;
    hash_entry_t *v = xmalloc((n ? n : 1) * sizeof(*v));
    hash_iter_t it;
    hash_iter_init(&it, h);
    while (i < n && hash_iter_next(&it, &v[i])) i++;
    assert(i == n);
    return v;
}

/* A random node of a hashtable, uniform (dict_random_fair, chain positions below 4x the fill
 * limit). */
static dict_node_t *ht_random_node(dict_t *d)
{
    return dict_random_fair(d, rand_u64(), 4 * max_fill(d->size[0]));
}

void hash_random(hash_t *h, hash_entry_t *e)
{
    assert(hash_len(h) > 0);
    if (h->h.enc == ENC_LISTPACK) {
        const lp_hash_t *lp = as_lp(h);
        lp_at(lp, rand_u64() % lp->count, e);
        return;
    }
    field_entry(ht_random_node(&as_ht(h)->d), e);
}

void hash_random_pairs(hash_t *h, size_t n, hash_entry_t *out)
{
    size_t len = hash_len(h);
    assert(len > 0);
    if (n == 1) {
        hash_random(h, out);
        return;
    }
    if (h->h.enc == ENC_LISTPACK || len <= 1024) {
        hash_entry_t *all = collect(h);
        for (size_t i = 0; i < n; i++) out[i] = all[rand_u64() % len];
        xfree(all);
        return;
    }
    dict_t *d = &as_ht(h)->d;
    for (size_t i = 0; i < n; i++) field_entry(ht_random_node(d), &out[i]);
}

/* Fills out with n distinct nodes of d drawn at random (n <= len / 3), deduplicated through
 * a small open-addressing set of node pointers. */
static void ht_sample_distinct(dict_t *d, size_t n, hash_entry_t *out)
{
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    dict_node_t **set = xcalloc(cap, sizeof(*set));
    size_t got = 0;
    while (got < n) {
        dict_node_t *node = ht_random_node(d);
        size_t i = (size_t)(((uintptr_t)node >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
        while (set[i] && set[i] != node) i = (i + 1) & (cap - 1);
        if (set[i]) continue;
        set[i] = node;
        field_entry(node, &out[got++]);
    }
    xfree(set);
}

void hash_random_unique(hash_t *h, size_t n, hash_entry_t *out)
{
    size_t len = hash_len(h);
    assert(n < len);
    if (h->h.enc == ENC_LISTPACK) {
        /* Selection sampling (Knuth's algorithm S): one pass, listpack order. */
        const lp_hash_t *lp = as_lp(h);
        size_t need = n, off = 0;
        for (size_t i = 0; need; i++) {
            hash_entry_t e;
            off = lp_decode(lp, off, &e);
            if (rand_u64() % (len - i) < need) out[n - need--] = e;
        }
        return;
    }
    if (n * 3 > len) {
        /* Most of the hash: a partial Fisher-Yates shuffle of every field. */
        hash_entry_t *all = collect(h);
        for (size_t i = 0; i < n; i++) {
            size_t j = i + rand_u64() % (len - i);
            hash_entry_t t = all[i];
            all[i] = all[j];
            all[j] = t;
            out[i] = all[i];
        }
        xfree(all);
        return;
    }
    ht_sample_distinct(&as_ht(h)->d, n, out);
}

/* ---- HSCAN ---- */

typedef struct scan_ctx {
    hash_scan_fn *fn;
    void *ud;
} scan_ctx_t;

static void scan_node(void *ud, dict_node_t *n)
{
    scan_ctx_t *ctx = ud;
    hash_entry_t e;
    field_entry(n, &e);
    ctx->fn(ctx->ud, &e);
}

uint64_t hash_scan(hash_t *h, uint64_t cursor, hash_scan_fn *fn, void *ud)
{
    if (h->h.enc == ENC_LISTPACK) {
        const lp_hash_t *lp = as_lp(h);
        hash_entry_t e;
        for (size_t off = 0; off < lp->used;) {
            off = lp_decode(lp, off, &e);
            fn(ud, &e);
        }
        return 0;
    }
    scan_ctx_t ctx = {fn, ud};
    return dict_scan(&as_ht(h)->d, cursor, scan_node, &ctx);
}
