/* dict.c - intrusive chained hash table with incremental rehashing (see dict.h).
 *
 * Invariants: table[1] is non-NULL only while rehashing; buckets of table[0] below rehashidx
 * are empty while rehashing; used[i] counts the nodes in table[i]. The hash is a seeded
 * 64-bit multiply-mix over 16-byte blocks, folded to 32 bits; the bucket index is its low
 * bits. Runs on the loop thread only. */
#include "common/dict.h"

#include "common/alloc.h"

#include <ctype.h>
#include <string.h>
#include <time.h>

static uint64_t seed0 = 0x9e3779b97f4a7c15ull, seed1 = 0xc2b2ae3d27d4eb4full;

void dict_set_seed(const uint8_t seed[16])
{
    memcpy(&seed0, seed, 8);
    memcpy(&seed1, seed + 8, 8);
    seed0 |= 1;
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t rd_tail(const uint8_t *p, size_t n)
{
    /* n in 1..8 */
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        return ((uint64_t)a << 32) | b;
    }
    return ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
}

uint32_t dict_hash(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = seed0 ^ (len * 0xa0761d6478bd642full);
    size_t n = len;
    while (n > 16) {
        h = mix(rd64(p) ^ seed1, rd64(p + 8) ^ h);
        p += 16;
        n -= 16;
    }
    uint64_t a = 0, b = 0;
    if (n > 8) {
        a = rd64(p);
        b = rd_tail(p + 8, n - 8);
    } else if (n > 0) {
        a = rd_tail(p, n);
    }
    h = mix(a ^ seed1 ^ 0xe7037ed1a0b428dbull, b ^ h);
    h = mix(h ^ 0x8ebc6af09c88c6e3ull, len ^ seed0);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t dict_hash_nocase(const void *key, size_t len)
{
    char tmp[256];
    const char *s = key;
    if (len > sizeof(tmp)) len = sizeof(tmp);
    for (size_t i = 0; i < len; i++) tmp[i] = (char)tolower((unsigned char)s[i]);
    return dict_hash(tmp, len);
}

void dict_init(dict_t *d, const dict_type_t *type)
{
    memset(d, 0, sizeof(*d));
    d->type = type;
    d->rehashidx = -1;
}

void dict_clear(dict_t *d, void *ud)
{
    for (int t = 0; t < 2; t++) {
        for (uint64_t i = 0; i < d->size[t] && d->used[t]; i++) {
            dict_node_t *n = d->table[t][i];
            while (n) {
                dict_node_t *next = n->next;
                if (d->type->free_node) d->type->free_node(n, ud);
                d->used[t]--;
                n = next;
            }
        }
        xfree(d->table[t]);
    }
    const dict_type_t *type = d->type;
    dict_init(d, type);
}

size_t dict_buckets_bytes(const dict_t *d)
{
    return (d->size[0] + d->size[1]) * sizeof(dict_node_t *);
}

uint64_t dict_buckets(const dict_t *d)
{
    return d->size[0] + d->size[1];
}

static void resize_to(dict_t *d, uint64_t n)
{
    uint64_t size = 4;
    while (size < n) size <<= 1;
    if (size == d->size[0] || dict_is_rehashing(d)) return;
    dict_node_t **t = xcalloc(size, sizeof(*t));
    if (!d->table[0]) {
        d->table[0] = t;
        d->size[0] = size;
        return;
    }
    d->table[1] = t;
    d->size[1] = size;
    d->used[1] = 0;
    d->rehashidx = 0;
}

void dict_expand(dict_t *d, uint64_t n)
{
    if (n > dict_size(d) && n > d->size[0]) resize_to(d, n);
}

void dict_try_shrink(dict_t *d)
{
    if (dict_is_rehashing(d) || d->no_resize || d->size[0] <= 4) return;
    if (d->used[0] * 8 < d->size[0]) resize_to(d, d->used[0]);
}

int dict_rehash(dict_t *d, int n)
{
    int empty_visits = n * 10;
    if (!dict_is_rehashing(d)) return 0;
    while (n-- && d->used[0]) {
        while (!d->table[0][d->rehashidx]) {
            d->rehashidx++;
            if (--empty_visits == 0) return 1;
        }
        dict_node_t *e = d->table[0][d->rehashidx];
        uint64_t mask = d->size[1] - 1;
        while (e) {
            dict_node_t *next = e->next;
            uint64_t idx = e->hash & mask;
            e->next = d->table[1][idx];
            d->table[1][idx] = e;
            d->used[0]--;
            d->used[1]++;
            e = next;
        }
        d->table[0][d->rehashidx++] = NULL;
    }
    if (d->used[0] == 0) {
        xfree(d->table[0]);
        d->table[0] = d->table[1];
        d->size[0] = d->size[1];
        d->used[0] = d->used[1];
        d->table[1] = NULL;
        d->size[1] = d->used[1] = 0;
        d->rehashidx = -1;
        return 0;
    }
    return 1;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int dict_rehash_ms(dict_t *d, int ms)
{
    if (d->pause_rehash) return 0;
    uint64_t start = now_ms();
    int moved = 0;
    while (dict_rehash(d, 100)) {
        moved += 100;
        if (now_ms() - start > (uint64_t)ms) break;
    }
    return moved;
}

static inline void step(dict_t *d)
{
    if (d->pause_rehash == 0 && dict_is_rehashing(d)) dict_rehash(d, 1);
}

static inline int key_eq(const dict_t *d, const dict_node_t *n, const void *key, size_t len)
{
    size_t nlen;
    const void *nk = d->type->key(n, &nlen);
    return nlen == len && memcmp(nk, key, len) == 0;
}

dict_node_t *dict_find(dict_t *d, const void *key, size_t len, uint32_t h)
{
    if (dict_size(d) == 0) return NULL;
    step(d);
    for (int t = 0; t < 2; t++) {
        if (!d->size[t]) break;
        dict_node_t *n = d->table[t][h & (d->size[t] - 1)];
        for (; n; n = n->next)
            if (n->hash == h && key_eq(d, n, key, len)) return n;
        if (!dict_is_rehashing(d)) break;
    }
    return NULL;
}

void dict_insert(dict_t *d, dict_node_t *n)
{
    step(d);
    if (!d->table[0]) resize_to(d, 4);
    else if (!dict_is_rehashing(d) && d->used[0] >= d->size[0] && !d->no_resize)
        resize_to(d, d->used[0] * 2);
    else if (!dict_is_rehashing(d) && d->used[0] >= d->size[0] * 5)
        resize_to(d, d->used[0] * 2); /* even with no_resize, as Redis's force ratio */
    int t = dict_is_rehashing(d) ? 1 : 0;
    uint64_t idx = n->hash & (d->size[t] - 1);
    n->next = d->table[t][idx];
    d->table[t][idx] = n;
    d->used[t]++;
}

dict_node_t *dict_unlink(dict_t *d, const void *key, size_t len, uint32_t h)
{
    if (dict_size(d) == 0) return NULL;
    step(d);
    for (int t = 0; t < 2; t++) {
        if (!d->size[t]) break;
        dict_node_t **pp = &d->table[t][h & (d->size[t] - 1)];
        for (; *pp; pp = &(*pp)->next) {
            dict_node_t *n = *pp;
            if (n->hash == h && key_eq(d, n, key, len)) {
                *pp = n->next;
                d->used[t]--;
                return n;
            }
        }
        if (!dict_is_rehashing(d)) break;
    }
    return NULL;
}

void dict_replace(dict_t *d, dict_node_t *old, dict_node_t *repl)
{
    for (int t = 0; t < 2; t++) {
        if (!d->size[t]) break;
        dict_node_t **pp = &d->table[t][old->hash & (d->size[t] - 1)];
        for (; *pp; pp = &(*pp)->next) {
            if (*pp == old) {
                repl->hash = old->hash;
                repl->next = old->next;
                *pp = repl;
                return;
            }
        }
    }
}

static uint64_t rev(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    return __builtin_bswap64(v);
}

static void visit(dict_node_t *n, dict_scan_fn *fn, void *ud)
{
    while (n) {
        dict_node_t *next = n->next;
        fn(ud, n);
        n = next;
    }
}

uint64_t dict_scan(dict_t *d, uint64_t v, dict_scan_fn *fn, void *ud)
{
    if (dict_size(d) == 0) return 0;
    d->pause_rehash++;
    if (!dict_is_rehashing(d)) {
        uint64_t m0 = d->size[0] - 1;
        visit(d->table[0][v & m0], fn, ud);
        v |= ~m0;
        v = rev(rev(v) + 1);
    } else {
        int small = d->size[0] <= d->size[1] ? 0 : 1, big = 1 - small;
        uint64_t m0 = d->size[small] - 1, m1 = d->size[big] - 1;
        visit(d->table[small][v & m0], fn, ud);
        do {
            visit(d->table[big][v & m1], fn, ud);
            v |= ~m1;
            v = rev(rev(v) + 1);
        } while (v & (m0 ^ m1));
    }
    d->pause_rehash--;
    return v;
}

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

dict_node_t *dict_random(dict_t *d, uint64_t rnd)
{
    if (dict_size(d) == 0) return NULL;
    step(d);
    uint64_t s = rnd | 1;
    dict_node_t *n = NULL;
    while (!n) {
        if (dict_is_rehashing(d)) {
            uint64_t span = d->size[0] + d->size[1] - (uint64_t)d->rehashidx;
            uint64_t i = (uint64_t)d->rehashidx + xorshift(&s) % span;
            n = i >= d->size[0] ? d->table[1][i - d->size[0]] : d->table[0][i];
        } else {
            n = d->table[0][xorshift(&s) & (d->size[0] - 1)];
        }
    }
    uint64_t len = 0;
    for (dict_node_t *p = n; p; p = p->next) len++;
    for (uint64_t k = xorshift(&s) % len; k; k--) n = n->next;
    return n;
}

dict_node_t *dict_random_fair(dict_t *d, uint64_t rnd, uint64_t chain_bound)
{
    uint64_t len = dict_size(d), s = rnd | 1;
    if (len == 0) return NULL;
    if (len <= 64) {
        uint64_t k = xorshift(&s) % len;
        dict_iter_t it;
        dict_iter_init(&it, d, 0);
        dict_node_t *n = dict_iter_next(&it);
        while (k--) n = dict_iter_next(&it);
        dict_iter_deinit(&it);
        return n;
    }
    if (!dict_is_rehashing(d) && chain_bound) {
        uint64_t size = d->size[0];
        for (int tries = 0; tries < 256; tries++) {
            uint64_t r = xorshift(&s);
            dict_node_t *n = d->table[0][r & (size - 1)];
            for (uint64_t k = (r >> 40) % chain_bound; n && k; k--) n = n->next;
            if (n) return n;
        }
    }
    return dict_random(d, xorshift(&s));
}

void dict_iter_init(dict_iter_t *it, dict_t *d, int safe)
{
    it->d = d;
    it->table = 0;
    it->index = 0;
    it->next = NULL;
    it->safe = safe;
    if (safe) d->pause_rehash++;
    if (d->size[0]) it->next = d->table[0][0];
}

dict_node_t *dict_iter_next(dict_iter_t *it)
{
    dict_t *d = it->d;
    while (!it->next) {
        if (it->table > 1 || !d->size[it->table]) return NULL;
        if (++it->index >= d->size[it->table]) {
            if (it->table == 0 && dict_is_rehashing(d)) {
                it->table = 1;
                it->index = 0;
                it->next = d->table[1][0];
                continue;
            }
            it->table = 2;
            return NULL;
        }
        it->next = d->table[it->table][it->index];
    }
    dict_node_t *n = it->next;
    it->next = n->next;
    return n;
}

void dict_iter_deinit(dict_iter_t *it)
{
    if (it->safe) it->d->pause_rehash--;
}
