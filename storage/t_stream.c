/* t_stream.c - streams (see t_stream.h).
 *
 * A node is one listpack laid out exactly as Redis 7.0's stream nodes, so that its bytes can go
 * into DUMP payloads and RDB files unchanged. All numbers are listpack integers:
 *
 *   master entry:  count | deleted | master-field-count | field_1 ... field_N | 0
 *   each entry:    flags | ms-diff | seq-diff | [num-fields | field_1 ...] value_1 ... | lp-count
 *
 * count and deleted are the live and deleted (flagged) entries of the node; an entry's id is the
 * node's master id (the key in the index) plus its diffs; flags bit 0 marks it deleted, bit 1
 * says its fields are the master fields (then only the values are stored); lp-count is the
 * number of listpack elements of the entry before it (3 + values, plus 1 + fields without the
 * same-fields flag), so entries can be walked backwards. A node is never empty of live entries:
 * the last deletion frees it.
 *
 * The index (stream_idx_t) is a skip list from 128-bit ids to pointers, with a backward link at
 * level 0: appends go to the tail, trims remove from the head, PEL updates land anywhere. It is
 * used for the nodes and for every PEL. Loop thread only. */
#include "storage/t_stream.h"

#include "common/alloc.h"
#include "common/listpack.h"
#include "common/util.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FLAG_DELETED 1
#define FLAG_SAMEFIELDS 2
#define LP_MAX_SIZE (1u << 30) /* Redis's STREAM_LISTPACK_MAX_SIZE */
#define LP_PREALLOC 4096       /* Redis's STREAM_LISTPACK_MAX_PRE_ALLOCATE */
#define IDX_MAX_LEVEL 32

/* ---- ids ---- */

int stream_id_cmp(const stream_id_t *a, const stream_id_t *b)
{
    if (a->ms != b->ms) return a->ms > b->ms ? 1 : -1;
    if (a->seq != b->seq) return a->seq > b->seq ? 1 : -1;
    return 0;
}

int stream_id_incr(stream_id_t *id)
{
    if (id->seq != UINT64_MAX) {
        id->seq++;
        return 0;
    }
    if (id->ms == UINT64_MAX) {
        id->ms = id->seq = 0;
        return -1;
    }
    id->ms++;
    id->seq = 0;
    return 0;
}

int stream_id_decr(stream_id_t *id)
{
    if (id->seq != 0) {
        id->seq--;
        return 0;
    }
    if (id->ms == 0) {
        id->ms = id->seq = UINT64_MAX;
        return -1;
    }
    id->ms--;
    id->seq = UINT64_MAX;
    return 0;
}

size_t stream_id_fmt(char *buf, const stream_id_t *id)
{
    size_t n = ull_to_str(buf, id->ms);
    buf[n++] = '-';
    n += ull_to_str(buf + n, id->seq);
    return n;
}

/* Redis's string2ull: a canonical int64 that is not negative, or else whatever strtoull takes
 * whole (leading space, '+', leading zeros). s is NUL-terminated. */
static int parse_ull(const char *s, unsigned long long *out)
{
    long long ll;
    if (str_to_ll(s, strlen(s), &ll)) {
        if (ll < 0) return 0;
        *out = (unsigned long long)ll;
        return 1;
    }
    errno = 0;
    char *end = NULL;
    *out = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0')) return 0;
    return 1;
}

int stream_id_parse(const char *s, size_t len, stream_id_t *id, uint64_t missing_seq,
                    int strict, int *seq_given)
{
    char buf[128];
    if (len > sizeof(buf) - 1) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') return -1;
    if (seq_given) *seq_given = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        id->ms = id->seq = 0;
        return 0;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        id->ms = id->seq = UINT64_MAX;
        return 0;
    }
    unsigned long long ms, seq;
    char *dash = strchr(buf, '-');
    if (dash) *dash = '\0';
    if (!parse_ull(buf, &ms)) return -1;
    if (dash) {
        if (seq_given && dash[1] == '*' && dash[2] == '\0') {
            seq = 0;
            *seq_given = 0;
        } else if (!parse_ull(dash + 1, &seq)) {
            return -1;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
}

/* ---- the index ---- */

static uint32_t rng_state = 0x9e3779b9u;

static int random_level(void)
{
    int level = 1;
    for (;;) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 17;
        rng_state ^= rng_state << 5;
        if ((rng_state & 3) != 0 || level == IDX_MAX_LEVEL) break;
        level++;
    }
    return level;
}

static stream_idx_node_t *idx_node_new(int level, const stream_id_t *id, void *val)
{
    stream_idx_node_t *n = xmalloc(sizeof(*n) + sizeof(n->next[0]) * (size_t)level);
    n->id = id ? *id : (stream_id_t){0, 0};
    n->val = val;
    n->prev = NULL;
    n->level = level;
    for (int i = 0; i < level; i++) n->next[i] = NULL;
    return n;
}

static void idx_init(stream_idx_t *x)
{
    x->head = idx_node_new(IDX_MAX_LEVEL, NULL, NULL);
    x->tail = NULL;
    x->n = 0;
    x->level = 1;
}

static void idx_deinit(stream_idx_t *x, void (*free_val)(void *))
{
    stream_idx_node_t *n = x->head->next[0];
    while (n) {
        stream_idx_node_t *next = n->next[0];
        if (free_val) free_val(n->val);
        xfree(n);
        n = next;
    }
    xfree(x->head);
    x->head = x->tail = NULL;
    x->n = 0;
}

stream_idx_node_t *stream_idx_first(const stream_idx_t *x)
{
    return x->head->next[0];
}

/* The last node < id at each level, into update (may be NULL). Returns the level-0 one. */
static stream_idx_node_t *idx_before(const stream_idx_t *x, const stream_id_t *id,
                                     stream_idx_node_t **update)
{
    stream_idx_node_t *p = x->head;
    for (int i = x->level - 1; i >= 0; i--) {
        while (p->next[i] && stream_id_cmp(&p->next[i]->id, id) < 0) p = p->next[i];
        if (update) update[i] = p;
    }
    return p;
}

stream_idx_node_t *stream_idx_seek_ge(const stream_idx_t *x, const stream_id_t *id)
{
    if (x->tail && stream_id_cmp(&x->tail->id, id) < 0) return NULL;
    return idx_before(x, id, NULL)->next[0];
}

stream_idx_node_t *stream_idx_find(const stream_idx_t *x, const stream_id_t *id)
{
    stream_idx_node_t *n = stream_idx_seek_ge(x, id);
    return n && stream_id_cmp(&n->id, id) == 0 ? n : NULL;
}

stream_idx_node_t *stream_idx_seek_le(const stream_idx_t *x, const stream_id_t *id)
{
    if (x->tail && stream_id_cmp(&x->tail->id, id) <= 0) return x->tail;
    stream_idx_node_t *p = idx_before(x, id, NULL);
    stream_idx_node_t *n = p->next[0];
    if (n && stream_id_cmp(&n->id, id) == 0) return n;
    return p == x->head ? NULL : p;
}

/* Inserts id (which must not be present) -> val. */
static stream_idx_node_t *idx_insert(stream_idx_t *x, const stream_id_t *id, void *val)
{
    stream_idx_node_t *update[IDX_MAX_LEVEL];
    int level = random_level();
    if (x->tail && stream_id_cmp(&x->tail->id, id) < 0) {
        /* append: the common case (XADD, new deliveries) */
        stream_idx_node_t *p = x->head;
        for (int i = x->level - 1; i >= 0; i--) {
            while (p->next[i]) p = p->next[i];
            update[i] = p;
        }
    } else {
        idx_before(x, id, update);
    }
    if (level > x->level) {
        for (int i = x->level; i < level; i++) update[i] = x->head;
        x->level = level;
    }
    stream_idx_node_t *n = idx_node_new(level, id, val);
    for (int i = 0; i < level; i++) {
        n->next[i] = update[i]->next[i];
        update[i]->next[i] = n;
    }
    n->prev = update[0] == x->head ? NULL : update[0];
    if (n->next[0]) n->next[0]->prev = n;
    else x->tail = n;
    x->n++;
    return n;
}

/* Removes id; returns its value, or NULL when absent. */
static void *idx_remove(stream_idx_t *x, const stream_id_t *id)
{
    stream_idx_node_t *update[IDX_MAX_LEVEL];
    stream_idx_node_t *n = idx_before(x, id, update)->next[0];
    if (!n || stream_id_cmp(&n->id, id) != 0) return NULL;
    for (int i = 0; i < n->level; i++) update[i]->next[i] = n->next[i];
    if (n->next[0]) n->next[0]->prev = n->prev;
    else x->tail = n->prev;
    while (x->level > 1 && !x->head->next[x->level - 1]) x->level--;
    void *val = n->val;
    xfree(n);
    x->n--;
    return val;
}

/* ---- listpack helpers ---- */

static int64_t lp_int(const unsigned char *p)
{
    uint32_t len;
    long long v;
    const unsigned char *s = lp_get(p, &len, &v);
    if (s && !str_to_ll((const char *)s, len, &v)) v = 0;
    return (int64_t)v;
}

/* The master entry of lp: counts, master fields; returns the first entry (flags) or NULL. */
static unsigned char *node_open(unsigned char *lp, int64_t *count, int64_t *deleted,
                                int64_t *mcount, unsigned char **mfields)
{
    unsigned char *p = lp_first(lp);
    if (count) *count = lp_int(p);
    p = lp_next(lp, p);
    if (deleted) *deleted = lp_int(p);
    p = lp_next(lp, p);
    int64_t m = lp_int(p);
    if (mcount) *mcount = m;
    p = lp_next(lp, p);
    if (mfields) *mfields = p;
    for (int64_t i = 0; i < m; i++) p = lp_next(lp, p);
    return lp_next(lp, p); /* past the master terminator */
}

/* Reads the entry whose flags p points at; returns the element after its lp-count. */
static unsigned char *entry_read(unsigned char *lp, unsigned char *p, int64_t mcount,
                                 const stream_id_t *master, int64_t *flags, stream_id_t *id)
{
    *flags = lp_int(p);
    p = lp_next(lp, p);
    id->ms = master->ms + (uint64_t)lp_int(p);
    p = lp_next(lp, p);
    id->seq = master->seq + (uint64_t)lp_int(p);
    p = lp_next(lp, p);
    int64_t skip = mcount;
    if (!(*flags & FLAG_SAMEFIELDS)) {
        skip = lp_int(p) * 2;
        p = lp_next(lp, p);
    }
    for (int64_t i = 0; i < skip; i++) p = lp_next(lp, p);
    return lp_next(lp, p); /* past lp-count */
}

/* Adds d to the node's live count and -d to its deleted count. */
static unsigned char *node_count_move(unsigned char *lp, int64_t d)
{
    unsigned char *p = lp_first(lp);
    int64_t count = lp_int(p);
    lp = lp_replace_int(lp, p, count + d, &p);
    p = lp_next(lp, p);
    int64_t deleted = lp_int(p);
    return lp_replace_int(lp, p, deleted - d, NULL);
}

static void free_lp(void *lp)
{
    lp_free(lp);
}

/* ---- groups ---- */

static void nack_free(void *n)
{
    xfree(n);
}

static void consumer_free(stream_consumer_t *c)
{
    idx_deinit(&c->pel, NULL);
    xfree(c->name);
    xfree(c);
}

static void cg_free(stream_cg_t *cg)
{
    idx_deinit(&cg->pel, nack_free);
    for (size_t i = 0; i < cg->nconsumers; i++) consumer_free(cg->consumers[i]);
    xfree(cg->consumers);
    xfree(cg->name);
    xfree(cg);
}

/* Bytewise, shorter first on a common prefix (a radix tree's order). */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int r = n ? memcmp(a, b, n) : 0;
    if (r) return r;
    return alen < blen ? -1 : alen > blen;
}

/* Binary search over an array of structs that start with (char *name, size_t namelen):
 * returns the index of name or, with *found 0, where it would go. */
typedef struct named {
    char *name;
    size_t namelen;
} named_t;

static size_t name_search(void *const *arr, size_t n, const char *name, size_t len, int *found)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const named_t *e = arr[mid];
        int r = name_cmp(e->name, e->namelen, name, len);
        if (r == 0) {
            *found = 1;
            return mid;
        }
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

static void arr_insert(void ***arr, size_t *n, size_t *cap, size_t at, void *e)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *arr = xrealloc(*arr, sizeof(void *) * *cap);
    }
    memmove(*arr + at + 1, *arr + at, sizeof(void *) * (*n - at));
    (*arr)[at] = e;
    (*n)++;
}

static void arr_remove(void **arr, size_t *n, size_t at)
{
    memmove(arr + at, arr + at + 1, sizeof(void *) * (*n - at - 1));
    (*n)--;
}

_Static_assert(offsetof(stream_cg_t, name) == 0 && offsetof(stream_cg_t, namelen) ==
                                                        offsetof(named_t, namelen),
               "groups are searched as named_t");
_Static_assert(offsetof(stream_consumer_t, name) == 0 &&
                   offsetof(stream_consumer_t, namelen) == offsetof(named_t, namelen),
               "consumers are searched as named_t");

stream_cg_t *stream_cg_find(const stream_t *s, const char *name, size_t len)
{
    int found;
    size_t i = name_search((void *const *)s->groups, s->ngroups, name, len, &found);
    return found ? s->groups[i] : NULL;
}

stream_cg_t *stream_cg_create(stream_t *s, const char *name, size_t len, const stream_id_t *id,
                              long long entries_read)
{
    int found;
    size_t at = name_search((void *const *)s->groups, s->ngroups, name, len, &found);
    if (found) return NULL;
    stream_cg_t *cg = xcalloc(1, sizeof(*cg));
    cg->name = xmemdup(name, len);
    cg->namelen = len;
    cg->last_id = *id;
    cg->entries_read = entries_read;
    idx_init(&cg->pel);
    arr_insert((void ***)&s->groups, &s->ngroups, &s->capgroups, at, cg);
    return cg;
}

void stream_cg_destroy(stream_t *s, stream_cg_t *cg)
{
    int found;
    size_t i = name_search((void *const *)s->groups, s->ngroups, cg->name, cg->namelen, &found);
    assert(found && s->groups[i] == cg);
    arr_remove((void **)s->groups, &s->ngroups, i);
    cg_free(cg);
}

stream_consumer_t *stream_consumer_find(const stream_cg_t *cg, const char *name, size_t len)
{
    int found;
    size_t i = name_search((void *const *)cg->consumers, cg->nconsumers, name, len, &found);
    return found ? cg->consumers[i] : NULL;
}

stream_consumer_t *stream_consumer_create(stream_cg_t *cg, const char *name, size_t len,
                                          long long now_ms)
{
    int found;
    size_t at = name_search((void *const *)cg->consumers, cg->nconsumers, name, len, &found);
    if (found) return NULL;
    stream_consumer_t *c = xcalloc(1, sizeof(*c));
    c->name = xmemdup(name, len);
    c->namelen = len;
    c->seen_time = now_ms;
    idx_init(&c->pel);
    arr_insert((void ***)&cg->consumers, &cg->nconsumers, &cg->capconsumers, at, c);
    return c;
}

void stream_consumer_delete(stream_cg_t *cg, stream_consumer_t *consumer)
{
    for (stream_idx_node_t *n = stream_idx_first(&consumer->pel); n; n = n->next[0])
        xfree(idx_remove(&cg->pel, &n->id));
    int found;
    size_t i = name_search((void *const *)cg->consumers, cg->nconsumers, consumer->name,
                           consumer->namelen, &found);
    assert(found);
    arr_remove((void **)cg->consumers, &cg->nconsumers, i);
    consumer_free(consumer);
}

stream_nack_t *stream_pel_find(const stream_cg_t *cg, const stream_id_t *id)
{
    stream_idx_node_t *n = stream_idx_find(&cg->pel, id);
    return n ? n->val : NULL;
}

stream_nack_t *stream_pel_deliver(stream_cg_t *cg, stream_consumer_t *consumer,
                                  const stream_id_t *id, long long now_ms)
{
    stream_nack_t *nack = stream_pel_find(cg, id);
    if (!nack) {
        nack = xmalloc(sizeof(*nack));
        nack->delivery_time = now_ms;
        nack->delivery_count = 1;
        nack->consumer = consumer;
        idx_insert(&cg->pel, id, nack);
        idx_insert(&consumer->pel, id, nack);
        return nack;
    }
    idx_remove(&nack->consumer->pel, id);
    nack->consumer = consumer;
    nack->delivery_time = now_ms;
    nack->delivery_count = 1;
    idx_insert(&consumer->pel, id, nack);
    return nack;
}

stream_nack_t *stream_pel_add_unowned(stream_cg_t *cg, const stream_id_t *id)
{
    stream_nack_t *nack = xmalloc(sizeof(*nack));
    nack->delivery_time = 0;
    nack->delivery_count = 1;
    nack->consumer = NULL;
    idx_insert(&cg->pel, id, nack);
    return nack;
}

void stream_nack_assign(stream_cg_t *cg, stream_nack_t *nack, const stream_id_t *id,
                        stream_consumer_t *consumer)
{
    (void)cg;
    if (nack->consumer == consumer) return;
    if (nack->consumer) idx_remove(&nack->consumer->pel, id);
    idx_insert(&consumer->pel, id, nack);
    nack->consumer = consumer;
}

int stream_pel_ack(stream_cg_t *cg, const stream_id_t *id)
{
    stream_nack_t *nack = idx_remove(&cg->pel, id);
    if (!nack) return 0;
    if (nack->consumer) idx_remove(&nack->consumer->pel, id);
    xfree(nack);
    return 1;
}

/* ---- lifecycle ---- */

stream_t *stream_new(void)
{
    stream_t *s = xcalloc(1, sizeof(*s));
    s->h.type = OBJ_STREAM;
    s->h.enc = ENC_STREAM;
    s->h.lru = obj_clock_new();
    idx_init(&s->nodes);
    return s;
}

void stream_free(stream_t *s)
{
    idx_deinit(&s->nodes, free_lp);
    for (size_t i = 0; i < s->ngroups; i++) cg_free(s->groups[i]);
    xfree(s->groups);
    xfree(s);
}

stream_t *stream_dup(const stream_t *s)
{
    stream_t *d = stream_new();
    for (stream_idx_node_t *n = stream_idx_first(&s->nodes); n; n = n->next[0]) {
        size_t bytes = lp_bytes(n->val);
        unsigned char *lp = xmalloc(bytes);
        memcpy(lp, n->val, bytes);
        idx_insert(&d->nodes, &n->id, lp);
    }
    d->length = s->length;
    d->last_id = s->last_id;
    d->first_id = s->first_id;
    d->max_deleted_id = s->max_deleted_id;
    d->entries_added = s->entries_added;
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_cg_t *g = s->groups[i];
        stream_cg_t *ng = stream_cg_create(d, g->name, g->namelen, &g->last_id, g->entries_read);
        for (stream_idx_node_t *n = stream_idx_first(&g->pel); n; n = n->next[0]) {
            stream_nack_t *src = n->val, *nk = xmalloc(sizeof(*nk));
            *nk = *src;
            nk->consumer = NULL;
            idx_insert(&ng->pel, &n->id, nk);
        }
        for (size_t j = 0; j < g->nconsumers; j++) {
            const stream_consumer_t *c = g->consumers[j];
            stream_consumer_t *nc = stream_consumer_create(ng, c->name, c->namelen, c->seen_time);
            for (stream_idx_node_t *n = stream_idx_first(&c->pel); n; n = n->next[0]) {
                stream_nack_t *nk = stream_pel_find(ng, &n->id);
                assert(nk);
                nk->consumer = nc;
                idx_insert(&nc->pel, &n->id, nk);
            }
        }
    }
    return d;
}

size_t stream_memory(const stream_t *s)
{
    size_t idx_node = sizeof(stream_idx_node_t) + 2 * sizeof(void *);
    size_t m = alloc_size(s) + alloc_size(s->nodes.head);
    for (stream_idx_node_t *n = stream_idx_first(&s->nodes); n; n = n->next[0])
        m += alloc_size(n->val) + idx_node;
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_cg_t *g = s->groups[i];
        m += sizeof(*g) + g->namelen + 1 + alloc_size(g->pel.head);
        m += stream_idx_size(&g->pel) * (idx_node + sizeof(stream_nack_t));
        for (size_t j = 0; j < g->nconsumers; j++) {
            const stream_consumer_t *c = g->consumers[j];
            m += sizeof(*c) + c->namelen + 1 + alloc_size(c->pel.head);
            m += stream_idx_size(&c->pel) * idx_node;
        }
    }
    return m;
}

/* Nodes of the compressed radix tree below an entry point at depth d holding keys[lo..hi)
 * (16-byte big-endian ids sharing their first d bytes), as Redis's rax builds it: a
 * compressed node for a run of shared bytes, a branching node where keys part, an empty leaf
 * node for each key. */
static uint64_t rax_count(unsigned char (*keys)[16], size_t lo, size_t hi, int d);

static uint64_t rax_branch(unsigned char (*keys)[16], size_t lo, size_t hi, int at)
{
    uint64_t n = 1;
    size_t i = lo;
    while (i < hi) {
        size_t j = i + 1;
        while (j < hi && keys[j][at] == keys[i][at]) j++;
        n += rax_count(keys, i, j, at + 1);
        i = j;
    }
    return n;
}

static uint64_t rax_count(unsigned char (*keys)[16], size_t lo, size_t hi, int d)
{
    if (hi - lo == 1) return d == 16 ? 1 : 2;
    int l = d;
    while (l < 16 && keys[lo][l] == keys[hi - 1][l]) l++;
    assert(l < 16);
    return (l > d ? 1 : 0) + rax_branch(keys, lo, hi, l);
}

uint64_t stream_rax_nodes(const stream_t *s)
{
    size_t n = stream_idx_size(&s->nodes);
    if (n == 0) return 1;
    unsigned char(*keys)[16] = xmalloc(16 * n);
    size_t i = 0;
    for (stream_idx_node_t *x = stream_idx_first(&s->nodes); x; x = x->next[0], i++) {
        for (int b = 0; b < 8; b++) {
            keys[i][b] = (unsigned char)(x->id.ms >> (56 - 8 * b));
            keys[i][8 + b] = (unsigned char)(x->id.seq >> (56 - 8 * b));
        }
    }
    uint64_t r = rax_count(keys, 0, n, 0);
    xfree(keys);
    return r;
}

/* ---- append ---- */

static void next_id(const stream_id_t *last, long long now_ms, stream_id_t *out)
{
    uint64_t ms = (uint64_t)now_ms;
    if (ms > last->ms) {
        out->ms = ms;
        out->seq = 0;
    } else {
        *out = *last;
        stream_id_incr(out);
    }
}

/* 1 if the node's tail listpack cannot take an entry of totlen bytes more. */
static int node_full(unsigned char *lp, size_t totlen)
{
    size_t max_bytes = storage_params.stream_node_max_bytes;
    if (max_bytes == 0 || max_bytes > LP_MAX_SIZE) max_bytes = LP_MAX_SIZE;
    if (lp_bytes(lp) + totlen >= max_bytes) return 1;
    if (storage_params.stream_node_max_entries) {
        int64_t count, deleted;
        node_open(lp, &count, &deleted, NULL, NULL);
        if (count + deleted >= (int64_t)storage_params.stream_node_max_entries) return 1;
    }
    return 0;
}

/* A new node for id, holding the master entry with fv's fields. */
static unsigned char *node_new(const stream_str_t *fv, size_t npairs)
{
    size_t prealloc = LP_PREALLOC;
    if (storage_params.stream_node_max_bytes > 0 &&
        storage_params.stream_node_max_bytes < prealloc)
        prealloc = storage_params.stream_node_max_bytes;
    unsigned char *lp = lp_new(prealloc);
    lp = lp_append_int(lp, 1);
    lp = lp_append_int(lp, 0);
    lp = lp_append_int(lp, (long long)npairs);
    for (size_t i = 0; i < npairs; i++) lp = lp_append(lp, fv[2 * i].ptr, fv[2 * i].len);
    return lp_append_int(lp, 0);
}

/* Bumps the tail node's count; 1 if fv's fields are its master fields. */
static int node_add_one(unsigned char **lpp, const stream_str_t *fv, size_t npairs)
{
    unsigned char *lp = *lpp, *p = lp_first(lp);
    int64_t count = lp_int(p);
    lp = lp_replace_int(lp, p, count + 1, &p);
    *lpp = lp;
    p = lp_next(lp, p);
    p = lp_next(lp, p);
    int64_t mcount = lp_int(p);
    if ((size_t)mcount != npairs) return 0;
    p = lp_next(lp, p);
    for (size_t i = 0; i < npairs; i++, p = lp_next(lp, p))
        if (!lp_equals(p, fv[2 * i].ptr, fv[2 * i].len)) return 0;
    return 1;
}

int stream_append(stream_t *s, const stream_str_t *fv, size_t npairs, const stream_id_t *use_id,
                  int seq_given, long long now_ms, stream_id_t *added)
{
    stream_id_t id;
    if (use_id) {
        if (seq_given) {
            id = *use_id;
        } else if (s->last_id.ms == use_id->ms) {
            if (s->last_id.seq == UINT64_MAX) return STREAM_ERR_ID;
            id = s->last_id;
            id.seq++;
        } else {
            id = *use_id;
        }
    } else {
        next_id(&s->last_id, now_ms, &id);
    }
    if (stream_id_cmp(&id, &s->last_id) <= 0) return STREAM_ERR_ID;
    size_t totlen = 0;
    for (size_t i = 0; i < npairs * 2; i++) totlen += fv[i].len;
    if (totlen > LP_MAX_SIZE) return STREAM_ERR_RANGE;

    stream_idx_node_t *tail = stream_idx_last(&s->nodes);
    unsigned char *lp = tail ? tail->val : NULL;
    if (lp && node_full(lp, totlen)) {
        tail->val = xrealloc(lp, lp_bytes(lp)); /* a closed node gives back its spare room */
        lp = NULL;
    }
    stream_id_t master;
    int flags = 0;
    if (!lp) {
        master = id;
        lp = node_new(fv, npairs);
        tail = idx_insert(&s->nodes, &id, lp);
        flags = FLAG_SAMEFIELDS;
    } else {
        master = tail->id;
        if (node_add_one(&lp, fv, npairs)) flags = FLAG_SAMEFIELDS;
    }
    lp = lp_append_int(lp, flags);
    lp = lp_append_int(lp, (long long)(id.ms - master.ms));
    lp = lp_append_int(lp, (long long)(id.seq - master.seq));
    if (!(flags & FLAG_SAMEFIELDS)) lp = lp_append_int(lp, (long long)npairs);
    for (size_t i = 0; i < npairs; i++) {
        if (!(flags & FLAG_SAMEFIELDS)) lp = lp_append(lp, fv[2 * i].ptr, fv[2 * i].len);
        lp = lp_append(lp, fv[2 * i + 1].ptr, fv[2 * i + 1].len);
    }
    long long lp_count = (long long)npairs + 3;
    if (!(flags & FLAG_SAMEFIELDS)) lp_count += (long long)npairs + 1;
    lp = lp_append_int(lp, lp_count);
    tail->val = lp;
    s->length++;
    s->entries_added++;
    s->last_id = id;
    if (s->length == 1) s->first_id = id;
    if (added) *added = id;
    return 0;
}

/* ---- iteration ---- */

void stream_iter_start(stream_iter_t *it, const stream_t *s, const stream_id_t *start,
                       const stream_id_t *end, int rev)
{
    memset(it, 0, sizeof(*it));
    it->s = s;
    it->start = start ? *start : (stream_id_t){0, 0};
    it->end = end ? *end : (stream_id_t){UINT64_MAX, UINT64_MAX};
    it->rev = rev;
    it->skip_tombstones = 1;
    stream_idx_node_t *n = NULL;
    if (!rev) {
        if (start && (start->ms || start->seq)) n = stream_idx_seek_le(&s->nodes, start);
        if (!n) n = stream_idx_first(&s->nodes);
    } else {
        if (end && (end->ms || end->seq)) n = stream_idx_seek_le(&s->nodes, end);
        if (!n) n = stream_idx_last(&s->nodes);
    }
    it->node = n;
}

/* Loads it->node and moves it->node on; 0 when there is none. */
static int iter_load(stream_iter_t *it)
{
    stream_idx_node_t *n = it->node;
    if (!n) return 0;
    it->node = it->rev ? n->prev : n->next[0];
    it->master_id = n->id;
    it->lp = n->val;
    unsigned char *p = lp_first(it->lp);
    p = lp_next(it->lp, p);
    p = lp_next(it->lp, p);
    it->master_count = lp_int(p);
    p = lp_next(it->lp, p);
    it->master_fields = p;
    if (!it->rev) {
        for (int64_t i = 0; i < it->master_count; i++) p = lp_next(it->lp, p);
        it->ele = p; /* the master terminator: the loop steps past it */
    } else {
        it->ele = lp_last(it->lp); /* the last entry's lp-count */
    }
    return 1;
}

int stream_iter_next(stream_iter_t *it, stream_id_t *id, int64_t *nfields)
{
    for (;;) {
        if (!it->lp || !it->ele) {
            if (!iter_load(it)) return 0;
        } else if (it->rev) {
            /* step back over the entry emitted last, to the lp-count before it */
            int64_t n = lp_int(it->ele);
            while (n--) it->ele = lp_prev(it->lp, it->ele);
            it->ele = lp_prev(it->lp, it->ele);
        }
        for (;;) {
            if (!it->rev) {
                it->ele = lp_next(it->lp, it->ele);
                if (!it->ele) break;
            } else {
                int64_t n = lp_int(it->ele);
                if (n == 0) { /* the master entry's terminator */
                    it->lp = it->ele = NULL;
                    break;
                }
                while (n--) it->ele = lp_prev(it->lp, it->ele);
            }
            it->flags_at = it->ele;
            int64_t flags = lp_int(it->ele);
            it->ele = lp_next(it->lp, it->ele);
            *id = it->master_id;
            id->ms += (uint64_t)lp_int(it->ele);
            it->ele = lp_next(it->lp, it->ele);
            id->seq += (uint64_t)lp_int(it->ele);
            it->ele = lp_next(it->lp, it->ele);
            if (flags & FLAG_SAMEFIELDS) {
                *nfields = it->master_count;
            } else {
                *nfields = lp_int(it->ele);
                it->ele = lp_next(it->lp, it->ele);
            }
            int live = !it->skip_tombstones || !(flags & FLAG_DELETED);
            if (!it->rev) {
                if (stream_id_cmp(id, &it->start) >= 0 && live) {
                    if (stream_id_cmp(id, &it->end) > 0) return 0;
                    it->entry_flags = (int)flags;
                    it->master_ptr = it->master_fields;
                    return 1;
                }
                int64_t skip = (flags & FLAG_SAMEFIELDS) ? *nfields : *nfields * 2;
                for (int64_t i = 0; i < skip; i++) it->ele = lp_next(it->lp, it->ele);
            } else {
                if (stream_id_cmp(id, &it->end) <= 0 && live) {
                    if (stream_id_cmp(id, &it->start) < 0) return 0;
                    it->entry_flags = (int)flags;
                    it->master_ptr = it->master_fields;
                    return 1;
                }
                int back = (flags & FLAG_SAMEFIELDS) ? 4 : 5;
                while (back--) it->ele = lp_prev(it->lp, it->ele);
            }
        }
    }
}

void stream_iter_field(stream_iter_t *it, const char **f, size_t *flen, const char **v,
                       size_t *vlen)
{
    uint32_t len;
    if (it->entry_flags & FLAG_SAMEFIELDS) {
        *f = (const char *)lp_get_text(it->master_ptr, &len, it->fbuf);
        it->master_ptr = lp_next(it->lp, it->master_ptr);
    } else {
        *f = (const char *)lp_get_text(it->ele, &len, it->fbuf);
        it->ele = lp_next(it->lp, it->ele);
    }
    *flen = len;
    *v = (const char *)lp_get_text(it->ele, &len, it->vbuf);
    *vlen = len;
    it->ele = lp_next(it->lp, it->ele);
}

void stream_edge_id(const stream_t *s, int first, int skip_tombstones, stream_id_t *out)
{
    stream_iter_t it;
    int64_t nf;
    stream_iter_start(&it, s, NULL, NULL, !first);
    it.skip_tombstones = skip_tombstones;
    if (!stream_iter_next(&it, out, &nf)) {
        if (first) *out = (stream_id_t){UINT64_MAX, UINT64_MAX};
        else *out = (stream_id_t){0, 0};
    }
}

int stream_entry_exists(const stream_t *s, const stream_id_t *id)
{
    stream_iter_t it;
    stream_id_t got;
    int64_t nf;
    stream_iter_start(&it, s, id, id, 0);
    return stream_iter_next(&it, &got, &nf);
}

/* ---- deletion and trimming ---- */

int stream_delete(stream_t *s, const stream_id_t *id)
{
    stream_idx_node_t *n = stream_idx_seek_le(&s->nodes, id);
    if (!n) return 0;
    unsigned char *lp = n->val;
    int64_t count, mcount;
    unsigned char *p = node_open(lp, &count, NULL, &mcount, NULL);
    while (p) {
        int64_t flags;
        stream_id_t cur;
        unsigned char *flags_at = p;
        p = entry_read(lp, p, mcount, &n->id, &flags, &cur);
        int c = stream_id_cmp(&cur, id);
        if (c > 0) return 0;
        if (c < 0 || (flags & FLAG_DELETED)) continue;
        s->length--;
        if (count == 1) {
            lp_free(idx_remove(&s->nodes, &n->id));
            return 1;
        }
        lp = lp_replace_int(lp, flags_at, flags | FLAG_DELETED, NULL);
        n->val = node_count_move(lp, -1);
        return 1;
    }
    return 0;
}

/* Marks entries of a node deleted from its start while the strategy asks; returns how many. */
static int64_t trim_inside(stream_t *s, stream_idx_node_t *n, const stream_trim_args_t *a)
{
    unsigned char *lp = n->val;
    int64_t mcount, done = 0;
    unsigned char *p = node_open(lp, NULL, NULL, &mcount, NULL);
    while (p) {
        int64_t flags;
        stream_id_t cur;
        size_t flags_off = (size_t)(p - lp);
        unsigned char *after = entry_read(lp, p, mcount, &n->id, &flags, &cur);
        int stop = a->strategy == STREAM_TRIM_MAXLEN ? s->length <= (uint64_t)a->maxlen
                                                     : stream_id_cmp(&cur, &a->minid) >= 0;
        if (stop) break;
        if (!(flags & FLAG_DELETED)) {
            size_t after_off = after ? (size_t)(after - lp) : 0;
            size_t before = lp_bytes(lp);
            lp = lp_replace_int(lp, lp + flags_off, flags | FLAG_DELETED, NULL);
            /* the flags integer may change size (never does for values < 128, kept general) */
            if (after) after = lp + after_off + (lp_bytes(lp) - before);
            done++;
            s->length--;
        }
        p = after;
    }
    n->val = node_count_move(lp, -done);
    return done;
}

int64_t stream_trim(stream_t *s, const stream_trim_args_t *a)
{
    if (a->strategy == STREAM_TRIM_NONE) return 0;
    int64_t deleted = 0;
    stream_idx_node_t *n;
    while ((n = stream_idx_first(&s->nodes)) != NULL) {
        if (a->strategy == STREAM_TRIM_MAXLEN && s->length <= (uint64_t)a->maxlen) break;
        int64_t entries;
        node_open(n->val, &entries, NULL, NULL, NULL);
        if (a->limit && deleted + entries > a->limit) break;
        int remove;
        if (a->strategy == STREAM_TRIM_MAXLEN) {
            remove = s->length - (uint64_t)entries >= (uint64_t)a->maxlen;
        } else {
            stream_id_t last;
            stream_iter_t it;
            int64_t nf;
            /* the node's last entry, tombstone or not (Redis's lpGetEdgeStreamID) */
            stream_iter_start(&it, s, NULL, NULL, 1);
            it.node = n;
            it.skip_tombstones = 0;
            stream_iter_next(&it, &last, &nf);
            remove = stream_id_cmp(&last, &a->minid) < 0;
        }
        if (remove) {
            lp_free(idx_remove(&s->nodes, &n->id));
            s->length -= (uint64_t)entries;
            deleted += entries;
            continue;
        }
        if (a->approx) break;
        deleted += trim_inside(s, n, a);
        break;
    }
    if (s->length == 0) s->first_id = (stream_id_t){0, 0};
    else if (deleted) stream_edge_id(s, 1, 1, &s->first_id);
    return deleted;
}

/* ---- group counters ---- */

int stream_range_has_tombstones(const stream_t *s, const stream_id_t *start,
                                const stream_id_t *end)
{
    const stream_id_t zero = {0, 0}, max = {UINT64_MAX, UINT64_MAX};
    if (!s->length || stream_id_cmp(&s->max_deleted_id, &zero) == 0) return 0;
    if (stream_id_cmp(&s->first_id, &s->max_deleted_id) > 0) return 0;
    const stream_id_t *a = start ? start : &zero, *b = end ? end : &max;
    return stream_id_cmp(a, &s->max_deleted_id) <= 0 && stream_id_cmp(&s->max_deleted_id, b) <= 0;
}

long long stream_estimate_distance(const stream_t *s, const stream_id_t *id)
{
    const stream_id_t zero = {0, 0};
    if (!s->entries_added) return 0;
    if (!s->length && stream_id_cmp(id, &s->last_id) < 1) return (long long)s->entries_added;
    int cmp_last = stream_id_cmp(id, &s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return STREAM_ENTRIES_READ_INVALID;
    int cmp_first = stream_id_cmp(id, &s->first_id);
    if (stream_id_cmp(&s->max_deleted_id, &zero) == 0 ||
        stream_id_cmp(&s->max_deleted_id, &s->first_id) < 0) {
        if (cmp_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return STREAM_ENTRIES_READ_INVALID;
}

int stream_cg_lag(const stream_t *s, const stream_cg_t *cg, long long *lag)
{
    if (!s->entries_added) {
        *lag = 0;
        return 1;
    }
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID &&
        !stream_range_has_tombstones(s, &cg->last_id, NULL)) {
        *lag = (long long)s->entries_added - cg->entries_read;
        return 1;
    }
    long long read = stream_estimate_distance(s, &cg->last_id);
    if (read == STREAM_ENTRIES_READ_INVALID) return 0;
    *lag = (long long)s->entries_added - read;
    return 1;
}

int stream_cg_advance(const stream_t *s, stream_cg_t *cg, const stream_id_t *id)
{
    if (stream_id_cmp(id, &cg->last_id) <= 0) return 0;
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID &&
        !stream_range_has_tombstones(s, id, NULL))
        cg->entries_read++;
    else if (s->entries_added)
        cg->entries_read = stream_estimate_distance(s, id);
    cg->last_id = *id;
    return 1;
}

/* ---- the builder ---- */

/* An integer element at p (integers may come string-encoded from elsewhere). */
static int lp_int_checked(const unsigned char *p, int64_t *v)
{
    uint32_t len;
    long long x;
    const unsigned char *s = lp_get(p, &len, &x);
    if (s && !str_to_ll((const char *)s, len, &x)) return 0;
    *v = (int64_t)x;
    return 1;
}

#define NEXT_OR_FAIL(lp, p)                                                                        \
    do {                                                                                           \
        if (!(p)) goto bad;                                                                        \
        (p) = lp_next((lp), (p));                                                                  \
    } while (0)

/* Checks the stream layout of a well-formed listpack: Redis's deep validation plus counts that
 * agree with the flags and ids that increase from the master id, above after. Sets the last
 * entry id and the live count. */
static int check_node(unsigned char *lp, const stream_id_t *master, const stream_id_t *after,
                      int have_after, stream_id_t *last, int64_t *live)
{
    unsigned char *p = lp_first(lp);
    int64_t count, deleted, mcount, v;
    if (!p || !lp_int_checked(p, &count) || count < 0) goto bad;
    NEXT_OR_FAIL(lp, p);
    if (!p || !lp_int_checked(p, &deleted) || deleted < 0) goto bad;
    NEXT_OR_FAIL(lp, p);
    if (!p || !lp_int_checked(p, &mcount) || mcount < 0) goto bad;
    NEXT_OR_FAIL(lp, p);
    for (int64_t i = 0; i < mcount; i++) NEXT_OR_FAIL(lp, p);
    if (!p || !lp_int_checked(p, &v) || v != 0) goto bad;
    p = lp_next(lp, p);
    int64_t seen_live = 0, seen_del = 0;
    stream_id_t prev = *after;
    int have_prev = have_after;
    if (count + deleted > (int64_t)UINT32_MAX) goto bad;
    for (int64_t e = 0; e < count + deleted; e++) {
        int64_t flags, msd, seqd, nf = mcount, extra = 3;
        if (!p || !lp_int_checked(p, &flags)) goto bad;
        NEXT_OR_FAIL(lp, p);
        if (!p || !lp_int_checked(p, &msd)) goto bad;
        NEXT_OR_FAIL(lp, p);
        if (!p || !lp_int_checked(p, &seqd)) goto bad;
        NEXT_OR_FAIL(lp, p);
        if (!(flags & FLAG_SAMEFIELDS)) {
            if (!p || !lp_int_checked(p, &nf) || nf < 0 || nf > (int64_t)UINT32_MAX) goto bad;
            NEXT_OR_FAIL(lp, p);
            for (int64_t i = 0; i < nf; i++) NEXT_OR_FAIL(lp, p);
            extra += nf + 1;
        }
        for (int64_t i = 0; i < nf; i++) NEXT_OR_FAIL(lp, p);
        if (!p || !lp_int_checked(p, &v) || v != nf + extra) goto bad;
        p = lp_next(lp, p);
        stream_id_t id = {master->ms + (uint64_t)msd, master->seq + (uint64_t)seqd};
        if (stream_id_cmp(&id, master) < 0) goto bad;
        if (have_prev && stream_id_cmp(&id, &prev) <= 0) goto bad;
        prev = id;
        have_prev = 1;
        if (flags & FLAG_DELETED) seen_del++;
        else seen_live++;
    }
    if (p || seen_live != count || seen_del != deleted || count + deleted == 0) goto bad;
    *last = prev;
    *live = count;
    return 0;
bad:
    return -1;
}

int stream_build_node(stream_t *s, const stream_id_t *master, const unsigned char *lp,
                      size_t size, const char **err)
{
    uint32_t n;
    if (size < LP_HDR_SIZE + 1 || !lp_validate(lp, size, &n) || n == 0) {
        *err = "bad listpack in stream node";
        return -1;
    }
    stream_idx_node_t *tail = stream_idx_last(&s->nodes);
    /* a node holds the ids from its master on: it starts after the previous node's last entry
     * (s->last_id so far), or the two would overlap and lookups by master id miss entries */
    if (tail && stream_id_cmp(master, &s->last_id) <= 0) {
        *err = "stream node ids out of order";
        return -1;
    }
    unsigned char *copy = xmalloc(size);
    memcpy(copy, lp, size);
    stream_id_t last;
    int64_t live;
    if (check_node(copy, master, &s->last_id, tail != NULL, &last, &live) < 0) {
        xfree(copy);
        *err = "bad stream node";
        return -1;
    }
    idx_insert(&s->nodes, master, copy);
    s->last_id = last; /* the last entry so far; stream_build_meta sets the real one */
    s->length += (uint64_t)live;
    return 0;
}

int stream_build_meta(stream_t *s, uint64_t length, const stream_id_t *last_id,
                      const stream_id_t *first_id, const stream_id_t *max_deleted_id,
                      uint64_t entries_added, const char **err)
{
    if (length != s->length) {
        *err = "stream length does not match its entries";
        return -1;
    }
    if (stream_idx_size(&s->nodes) && stream_id_cmp(last_id, &s->last_id) < 0) {
        *err = "stream last id below its last entry";
        return -1;
    }
    if (entries_added < length) {
        *err = "stream entries added below its length";
        return -1;
    }
    s->last_id = *last_id;
    s->first_id = *first_id;
    s->max_deleted_id = *max_deleted_id;
    s->entries_added = entries_added;
    return 0;
}

int stream_build_group(stream_t *s, const char *name, size_t len, const stream_id_t *last_id,
                       long long entries_read, stream_cg_t **out, const char **err)
{
    if (entries_read < 0 && entries_read != STREAM_ENTRIES_READ_INVALID) {
        *err = "bad consumer group entries read";
        return -1;
    }
    *out = stream_cg_create(s, name, len, last_id, entries_read);
    if (!*out) {
        *err = "duplicate consumer group";
        return -1;
    }
    return 0;
}

int stream_build_pel(stream_cg_t *cg, const stream_id_t *id, long long delivery_time,
                     uint64_t delivery_count, const char **err)
{
    if (stream_idx_find(&cg->pel, id)) {
        *err = "duplicate pending entry";
        return -1;
    }
    stream_nack_t *nack = stream_pel_add_unowned(cg, id);
    nack->delivery_time = delivery_time;
    nack->delivery_count = delivery_count;
    return 0;
}

int stream_build_consumer(stream_cg_t *cg, const char *name, size_t len, long long seen_time,
                          stream_consumer_t **out, const char **err)
{
    *out = stream_consumer_create(cg, name, len, seen_time);
    if (!*out) {
        *err = "duplicate consumer";
        return -1;
    }
    return 0;
}

int stream_build_claim(stream_cg_t *cg, stream_consumer_t *consumer, const stream_id_t *id,
                       const char **err)
{
    stream_nack_t *nack = stream_pel_find(cg, id);
    if (!nack || nack->consumer) {
        *err = nack ? "pending entry owned twice" : "consumer pending entry not in group";
        return -1;
    }
    nack->consumer = consumer;
    idx_insert(&consumer->pel, id, nack);
    return 0;
}

int stream_build_finish(stream_t *s, const char **err)
{
    for (size_t i = 0; i < s->ngroups; i++) {
        for (stream_idx_node_t *n = stream_idx_first(&s->groups[i]->pel); n; n = n->next[0]) {
            if (!((stream_nack_t *)n->val)->consumer) {
                *err = "pending entry without consumer";
                return -1;
            }
        }
    }
    return 0;
}

/* ---- obj_types row ---- */

static void ops_free(obj_t *o)
{
    stream_free((stream_t *)(void *)o);
}

static obj_t *ops_dup(const obj_t *o)
{
    return &stream_dup((const stream_t *)(const void *)o)->h;
}

static size_t ops_memory(const obj_t *o)
{
    return stream_memory((const stream_t *)(const void *)o);
}

static size_t ops_length(const obj_t *o)
{
    /* lazy-free decisions (Redis's free effort): the nodes, plus each group and its PEL */
    const stream_t *s = (const stream_t *)(const void *)o;
    size_t n = stream_idx_size(&s->nodes);
    for (size_t i = 0; i < s->ngroups; i++) n += 1 + stream_idx_size(&s->groups[i]->pel);
    return n ? n : 1;
}

static const obj_ops_t stream_ops = {ops_free, ops_dup, ops_memory, ops_length};

__attribute__((constructor)) static void stream_register(void)
{
    obj_types[OBJ_STREAM] = &stream_ops;
}
