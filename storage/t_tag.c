/* t_tag.c - tags of blobs on tiers (see t_tag.h).
 *
 * Shapes:
 *  - tag_obj_t: obj_t header, a dict of blobs, and an id that names it in wait names (it
 *    survives RENAME, which moves the object between keys).
 *  - blob_t: one allocation with its name; refs counts the tag's reference plus every plan in
 *    flight, so a deleted blob lives on (detached, tag == NULL) until its last plan finishes.
 *  - bdata_t, in the blob: its size and its extents, which cover [0, size) in order. One
 *    extent (every RAM blob written once) is held inline; more, or extents a plan must keep
 *    alive, go to an extlist_t.
 *  - extlist_t: extents shared by the blob and by plans that read it. It is changed in place
 *    only when no plan holds it (refs == 1); a move builds a new list and swaps it in. Its
 *    extents go back to their tiers when the last reference drops. A plan that needs to hold
 *    an inline extent first moves it into a list of one ("spill"); once the blob is again the
 *    list's only holder, a list of one or none goes back inline (blob_compact).
 *  - Per tier, a binary min-heap of the blobs whose first extent is there, by score: demotion
 *    takes the coldest idle blobs from the top.
 * Runs on the loop thread, except tag_plan_run. */
#include "storage/t_tag.h"

#include "common/alloc.h"
#include "common/util.h"

#include <assert.h>
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MAX_ALLOC_EXTENTS 64

tag_store_t tag_store;

/* An extent entry that no longer owns its space (a move handed it to the new list). */
#define TIER_NONE 255

typedef struct extlist {
    uint32_t refs;
    uint32_t n, cap;
    tier_extent_t e[];
} extlist_t;

/* A blob's bytes in the 16 bytes of one extent. tier is
 *   a tier (< TIER_MAX): one extent, `one`, inline; its len is the blob's size;
 *   BLOB_LIST: `many.list` holds the extents, `many.size` is their total;
 *   BLOB_EMPTY: no extents, size 0.
 * The size is the same 56 bits in every form (bdata_size), so a blob is at most
 * TIER_EXTENT_MAX bytes. */
typedef union bdata {
    tier_extent_t one;
    struct {
        uint64_t tier : 8;
        uint64_t size : 56;
        extlist_t *list;
    } many;
} bdata_t;
_Static_assert(sizeof(bdata_t) == sizeof(tier_extent_t), "bdata_t is one extent's size");

#define BLOB_LIST 254
#define BLOB_EMPTY 253
_Static_assert(TIER_MAX < BLOB_EMPTY, "tier numbers and bdata_t's marks overlap");

struct blob {
    dict_node_t node; /* node.aux: name length */
    tag_obj_t *tag;   /* NULL once deleted */
    bdata_t d;        /* size and extents */
    double score;
    /* Three words: each time is within -2^47..TAG_TIME_MAX (TMETA and RESTORE take
     * 0..TAG_TIME_MAX, clock readings are kept within it: blob_time), so 48 bits hold it, and
     * the rest of each word holds small fields. */
    long long ctime : 48;
    int home : 8;          /* tier whose heap holds the blob, -1 for none */
    unsigned writing : 1;  /* a write plan is in flight */
    unsigned moving : 1;   /* a move plan is in flight */
    unsigned retarget : 1; /* TPUT set a score: move to its tier once the write is done */
    unsigned undone : 1;   /* the last write plan failed and was undone while b was in its tag */
    long long mtime : 48;
    unsigned refs : 16;    /* up to BLOB_REFS_MAX (blob_ref) */
    long long atime : 48;
    unsigned readers : 16; /* read plans and readers in flight, each also a reference */
    uint32_t reads, writes; /* saturating: they stay at UINT32_MAX (count_up) */
    uint32_t heap_idx;
    uint32_t observer; /* tag_store's observer's own (blob_observer); storage never reads it */
    char name[];
};
/* 88 bytes before the name: a name of up to 23 bytes and its NUL (YCSB's "user" and 19
 * digits) keep a blob in jemalloc's 112-byte class, up to 39 bytes in the 128-byte one. With
 * its one extent inline, a RAM blob costs that block and its data's, and no extent list. */
_Static_assert(sizeof(blob_t) <= 88, "blob_t grew past 88 bytes");
_Static_assert(offsetof(blob_t, reads) == 72, "blob_t's times and small fields take 3 words");

/* A blob's references: its tag's, and every plan, reader and holder's. A new read (TGET, a
 * reader) answers ST_BUSY once BLOB_REFS_READ are taken: an open reader may take one more for
 * its read plan, and the rest is left for the few references a blob's write, move, undo
 * record, search reads, MIGRATE jobs and persistence's peeks take. A peek answers ST_BUSY only
 * within BLOB_REFS_PEEK_ROOM of the bound (with the caller's hold, it takes 2). */
#define BLOB_REFS_MAX 65535u
#define BLOB_REFS_READ 32000u
#define BLOB_REFS_PEEK_ROOM 16u

static void blob_ref(blob_t *b)
{
    assert(b->refs < BLOB_REFS_MAX);
    b->refs++;
}

/* 1 if a new read of b must wait (ST_BUSY) for references to drop. */
static int blob_refs_full(const blob_t *b)
{
    return b->refs >= BLOB_REFS_READ;
}

/* A clock reading as a blob time: within what the 48-bit fields hold, -2^47..TAG_TIME_MAX (a
 * replayed file's "#MS:" annotation sets the clock to whatever it says). */
static long long blob_time(long long now)
{
    return now < -TAG_TIME_MAX - 1 ? -TAG_TIME_MAX - 1 : now > TAG_TIME_MAX ? TAG_TIME_MAX : now;
}

/* A saturating counter's increment. */
static void count_up(uint32_t *n)
{
    if (*n != UINT32_MAX) (*n)++;
}

static uint32_t counter32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

struct tag_obj {
    obj_t h;
    dict_t blobs;
    uint64_t id;
};

enum { PLAN_READ, PLAN_WRITE, PLAN_MOVE };

enum { SEG_READ, SEG_WRITE, SEG_COPY };

/* One step of a plan, run in order: SEG_READ reads the extent into buf, SEG_WRITE writes buf
 * (zeros when buf is NULL) to the extent, SEG_COPY copies buf into a RAM extent (a move from a
 * file tier to RAM, after the reads). */
typedef struct seg {
    tier_extent_t e;
    uint64_t off; /* within the extent */
    char *buf;
    uint64_t len;
    int op;
} seg_t;

struct tag_plan {
    struct tag_plan *next; /* in the background queue */
    int kind;
    int demote_from;       /* a demotion: the tier it makes room on (-1 otherwise) */
    uint64_t demote_bytes; /* the bytes it frees there */
    blob_t *blob;     /* a reference */
    extlist_t *hold;  /* a reference to the extents read (read, move source) */
    extlist_t *dest;  /* move: the new extents, swapped in on success */
    seg_t *seg;
    int n, cap;
    char *owned; /* bytes owned by the plan (data to write, move staging) */
    uint32_t *reuse; /* move: pairs (index in hold, index in dest) of extents both share */
    uint32_t nreuse;
    uint32_t tag_id; /* blob_waitname's: the tag's when the plan began (b->tag goes at a TDEL) */
    /* write: what a failed plan restores (tag_plan_finish with status < 0) */
    int undo_created;
    uint64_t undo_size, undo_writes;
    double undo_score;
    long long undo_mtime;
};

/* Write plans handed out and not finished yet (tag_writes_in_flight). */
static uint64_t writes_in_flight;

uint64_t tag_writes_in_flight(void)
{
    return writes_in_flight;
}

/* Plans storage started on its own (demotions): the server drains them with tag_pending_pop. */
static tag_plan_t *pending_head, *pending_tail;

static void pending_push(tag_plan_t *p)
{
    p->next = NULL;
    if (pending_tail) pending_tail->next = p;
    else pending_head = p;
    pending_tail = p;
}

tag_plan_t *tag_pending_pop(void)
{
    tag_plan_t *p = pending_head;
    if (!p) return NULL;
    pending_head = p->next;
    if (!pending_head) pending_tail = NULL;
    p->next = NULL;
    return p;
}

/* ---- per-tier heaps of blobs by score ---- */

typedef struct heap {
    blob_t **v;
    uint32_t n, cap;
} heap_t;

static heap_t heaps[TIER_MAX];

static void heap_set(heap_t *h, uint32_t i, blob_t *b)
{
    h->v[i] = b;
    b->heap_idx = i;
}

static void heap_up(heap_t *h, uint32_t i)
{
    blob_t *b = h->v[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->v[p]->score <= b->score) break;
        heap_set(h, i, h->v[p]);
        i = p;
    }
    heap_set(h, i, b);
}

static void heap_down(heap_t *h, uint32_t i)
{
    blob_t *b = h->v[i];
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        double ms = b->score;
        if (l < h->n && h->v[l]->score < ms) m = l, ms = h->v[l]->score;
        if (l + 1 < h->n && h->v[l + 1]->score < ms) m = l + 1;
        if (m == i) break;
        heap_set(h, i, h->v[m]);
        i = m;
    }
    heap_set(h, i, b);
}

static void heap_remove(blob_t *b)
{
    if (b->home < 0) return;
    heap_t *h = &heaps[b->home];
    uint32_t i = b->heap_idx;
    assert(i < h->n && h->v[i] == b);
    blob_t *last = h->v[--h->n];
    if (i < h->n) {
        heap_set(h, i, last);
        heap_down(h, i);
        heap_up(h, last->heap_idx);
    }
    b->home = -1;
}

static void heap_insert(blob_t *b, int tier)
{
    heap_t *h = &heaps[tier];
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->v = xrealloc(h->v, sizeof(blob_t *) * h->cap);
    }
    b->home = (int8_t)tier;
    h->v[h->n] = b;
    b->heap_idx = h->n++;
    heap_up(h, b->heap_idx);
}

static tier_extent_t *blob_extents(blob_t *b, uint32_t *n);

/* Puts b in the heap of the tier of its first extent (after extents or score changed). */
static void rehome(blob_t *b)
{
    uint32_t n;
    tier_extent_t *e = blob_extents(b, &n);
    int tier = n ? e[0].tier : -1;
    if (tier == b->home) {
        if (tier >= 0) {
            heap_down(&heaps[tier], b->heap_idx);
            heap_up(&heaps[tier], b->heap_idx);
        }
        return;
    }
    heap_remove(b);
    if (tier >= 0) heap_insert(b, tier);
}

/* ---- extent lists ---- */

static extlist_t *extlist_new(uint32_t cap)
{
    extlist_t *l = xmalloc(sizeof(*l) + sizeof(tier_extent_t) * cap);
    l->refs = 1;
    l->n = 0;
    l->cap = cap;
    return l;
}

/* Appends e, growing the list by doubling. */
static extlist_t *extlist_push(extlist_t *l, const tier_extent_t *e)
{
    if (l->n == l->cap) {
        l->cap *= 2;
        l = xrealloc(l, sizeof(*l) + sizeof(tier_extent_t) * l->cap);
    }
    l->e[l->n++] = *e;
    return l;
}

static void extlist_unref(extlist_t *l)
{
    if (!l || --l->refs > 0) return;
    for (uint32_t i = 0; i < l->n; i++)
        if (l->e[i].tier != TIER_NONE) tier_free_extent(tag_store.tiers, &l->e[i]);
    xfree(l);
}

/* ---- a blob's extents (bdata_t) ---- */

static uint64_t blob_size(const blob_t *b)
{
    return b->d.many.size;
}

/* b's extents in order (*n of them; NULL when none). The array is b's own: it changes with
 * b, and an inline one moves when b spills (blob_list). */
static tier_extent_t *blob_extents(blob_t *b, uint32_t *n)
{
    if (b->d.many.tier == BLOB_EMPTY) {
        *n = 0;
        return NULL;
    }
    if (b->d.many.tier == BLOB_LIST) {
        *n = b->d.many.list->n;
        return b->d.many.list->e;
    }
    *n = 1;
    return &b->d.one;
}

static void blob_set_list(blob_t *b, extlist_t *l, uint64_t size)
{
    b->d.many.tier = BLOB_LIST;
    b->d.many.size = size;
    b->d.many.list = l;
}

/* b's extents as a list a plan can hold (NULL for none): an inline extent moves into a new
 * list of one. */
static extlist_t *blob_list(blob_t *b)
{
    if (b->d.many.tier == BLOB_EMPTY) return NULL;
    if (b->d.many.tier != BLOB_LIST) {
        extlist_t *l = extlist_push(extlist_new(1), &b->d.one);
        blob_set_list(b, l, l->e[0].len);
    }
    return b->d.many.list;
}

/* Brings a list of one extent or none that only b holds back inline. */
static void blob_compact(blob_t *b)
{
    extlist_t *l = b->d.many.list;
    if (b->d.many.tier != BLOB_LIST || l->refs != 1 || l->n > 1) return;
    if (l->n == 1)
        b->d.one = l->e[0];
    else
        b->d = (bdata_t){.many = {.tier = BLOB_EMPTY}};
    xfree(l);
}

/* Appends e (the size grows by its length). */
static void blob_push(blob_t *b, const tier_extent_t *e)
{
    uint64_t size = blob_size(b) + e->len;
    if (b->d.many.tier == BLOB_EMPTY) {
        b->d.one = *e;
        return;
    }
    blob_set_list(b, extlist_push(blob_list(b), e), size);
}

/* Frees b's last extent (the size shrinks by its length). */
static void blob_pop(blob_t *b)
{
    uint32_t n;
    tier_extent_t *e = blob_extents(b, &n);
    assert(n > 0);
    uint64_t size = blob_size(b) - e[n - 1].len;
    tier_free_extent(tag_store.tiers, &e[n - 1]);
    if (b->d.many.tier == BLOB_LIST) {
        b->d.many.list->n--;
        b->d.many.size = size;
        blob_compact(b);
    } else {
        b->d = (bdata_t){.many = {.tier = BLOB_EMPTY}};
    }
}

/* Sets the size after the extents changed in place (an inline extent carries it already). */
static void blob_sized(blob_t *b, uint64_t size)
{
    if (b->d.many.tier == BLOB_LIST) b->d.many.size = size;
    assert(blob_size(b) == size);
}

/* Drops b's extents (the last reference to b). */
static void blob_drop_data(blob_t *b)
{
    if (b->d.many.tier == BLOB_LIST)
        extlist_unref(b->d.many.list);
    else if (b->d.many.tier != BLOB_EMPTY)
        tier_free_extent(tag_store.tiers, &b->d.one);
    b->d = (bdata_t){.many = {.tier = BLOB_EMPTY}};
}

static uint64_t extents_bytes_on(const tier_extent_t *e, uint32_t n, int tier)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++)
        if (e[i].tier == tier) bytes += e[i].len;
    return bytes;
}

static uint64_t blob_bytes_on(blob_t *b, int tier)
{
    uint32_t n;
    tier_extent_t *e = blob_extents(b, &n);
    return extents_bytes_on(e, n, tier);
}

/* ---- blobs ---- */

static const void *blob_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const blob_t *)n)->name;
}

static void count_blob_tiers(const blob_t *b, int add);
static void shrink_to(blob_t *b, uint64_t size);

static void blob_unref(blob_t *b)
{
    if (--b->refs > 0) return;
    blob_drop_data(b);
    xfree(b);
}

/* Detaches b from its tag (already unlinked from the dict) and drops the tag's reference. */
static void blob_detach(blob_t *b)
{
    heap_remove(b);
    if (tag_store.on_blob_change) tag_store.on_blob_change(tag_store.ud, b->tag, b, 1);
    b->tag = NULL;
    count_blob_tiers(b, 0);
    blob_unref(b);
}

static void blob_free_node(dict_node_t *n, void *ud)
{
    blob_detach((blob_t *)n);
}

static const dict_type_t blob_dict_type = {blob_key, blob_free_node};

static uint64_t next_tag_id;
static uint64_t live_tags; /* made by tag_new (or dup), not yet freed */

tag_obj_t *tag_new(void)
{
    tag_obj_t *t = xcalloc(1, sizeof(*t));
    t->h.type = OBJ_TAG;
    t->h.enc = ENC_HT;
    t->h.lru = obj_clock_new();
    dict_init(&t->blobs, &blob_dict_type);
    t->id = ++next_tag_id;
    live_tags++;
    return t;
}

uint64_t tag_live(void)
{
    return live_tags;
}

uint64_t tag_len(const tag_obj_t *t)
{
    return dict_size(&t->blobs);
}

blob_t *tag_blob(tag_obj_t *t, const char *name, size_t len)
{
    return (blob_t *)dict_find(&t->blobs, name, len, dict_hash(name, len));
}

uint32_t blob_observer(const blob_t *b)
{
    return b->observer;
}

void blob_set_observer(const blob_t *b, uint32_t id)
{
    ((blob_t *)b)->observer = id;
}

const char *blob_name(const blob_t *b, size_t *len)
{
    *len = b->node.aux;
    return b->name;
}

blob_t *tag_blob_hold(tag_obj_t *t, const char *name, size_t nlen)
{
    blob_t *b = tag_blob(t, name, nlen);
    if (b) blob_hold(b);
    return b;
}

void blob_hold(blob_t *b)
{
    blob_ref(b);
}

void tag_blob_release(blob_t *b)
{
    if (b) blob_unref(b);
}

int tag_blob_undone(const blob_t *b)
{
    return b->undone;
}

void blob_get_info(const blob_t *b, blob_info_t *out)
{
    memset(out, 0, sizeof(*out));
    out->size = blob_size(b);
    out->score = b->score;
    out->ctime = b->ctime;
    out->mtime = b->mtime;
    out->atime = b->atime;
    out->reads = b->reads;
    out->writes = b->writes;
    out->tier = -1;
    uint32_t n;
    const tier_extent_t *e = blob_extents((blob_t *)b, &n);
    for (uint32_t i = 0; i < n; i++) {
        int t = e[i].tier, seen = 0;
        if (out->tier < 0) out->tier = t;
        for (int k = 0; k < out->ntiers; k++) seen |= out->tiers[k] == t;
        if (!seen) out->tiers[out->ntiers++] = t;
    }
}

/* Tier blob counters around a change of b's extents: call with add = 0 before the change to
 * remove b's contribution, and with add = 1 after it. */
static void count_blob_tiers(const blob_t *b, int add)
{
    uint32_t n;
    const tier_extent_t *e = blob_extents((blob_t *)b, &n);
    if (!n) return;
    for (int t = 0; t < tag_store.tiers->n; t++) {
        if (!extents_bytes_on(e, n, t)) continue;
        tier_stats_t *s = tier_stats(tag_store.tiers->t[t]);
        if (add) s->blobs++;
        else s->blobs--;
    }
}

static blob_t *blob_create(tag_obj_t *t, const char *name, size_t len, double score,
                           long long now)
{
    blob_t *b = xcalloc(1, sizeof(*b) + len + 1);
    memcpy(b->name, name, len);
    b->node.aux = (uint32_t)len;
    b->node.hash = dict_hash(name, len);
    b->tag = t;
    b->score = score;
    b->ctime = b->mtime = b->atime = blob_time(now);
    b->refs = 1;
    b->home = -1;
    b->d.many.tier = BLOB_EMPTY;
    dict_insert(&t->blobs, &b->node);
    return b;
}

static void blob_delete(tag_obj_t *t, blob_t *b)
{
    dict_node_t *n = dict_unlink(&t->blobs, b->name, b->node.aux, b->node.hash);
    assert(n == &b->node);
    blob_detach(b);
}

static int blob_idle(const blob_t *b)
{
    return !b->readers && !b->writing && !b->moving;
}

/* ---- placement ---- */

/* The order in which tiers are tried for a blob of score s: the fastest tier whose score is
 * <= s, then the slower ones, then the hotter ones from the slowest. Returns the count. */
static int tier_order(double s, int *order)
{
    int n = tag_store.tiers->n, pick = tier_set_pick(tag_store.tiers, s), k = 0;
    for (int i = pick; i < n; i++) order[k++] = i;
    for (int i = pick - 1; i >= 0; i--) order[k++] = i;
    return k;
}

/* Allocates len bytes by placement order and appends them to b's extents (its size grows by
 * len). Returns 0 or ST_OOM (nothing allocated). */
static int place(uint64_t len, double s, blob_t *b)
{
    int order[TIER_MAX], n = tier_order(s, order);
    tier_extent_t ext[MAX_ALLOC_EXTENTS];
    if (len == 0) return 0;
    for (int k = 0; k < n; k++) { /* one tier that holds it all */
        if (tier_room(tag_store.tiers->t[order[k]]) < len) continue;
        int got = tier_alloc(tag_store.tiers, order[k], len, ext, MAX_ALLOC_EXTENTS);
        if (got <= 0) continue;
        for (int i = 0; i < got; i++) blob_push(b, &ext[i]);
        return 0;
    }
    uint64_t total = 0;
    for (int k = 0; k < n; k++) total += tier_room(tag_store.tiers->t[order[k]]);
    if (total < len) return ST_OOM;
    /* split across tiers, in placement order */
    uint64_t first = blob_size(b), left = len;
    for (int k = 0; k < n && left; k++) {
        uint64_t take = tier_room(tag_store.tiers->t[order[k]]);
        if (take > left) take = left;
        /* file tiers allocate whole blocks: ask for what fits in whole blocks; after that,
         * halve (the disk under a file tier may be filling up meanwhile) */
        for (int tries = 0; take; tries++) {
            int got = tier_alloc(tag_store.tiers, order[k], take, ext, MAX_ALLOC_EXTENTS);
            if (got > 0) {
                for (int i = 0; i < got; i++) blob_push(b, &ext[i]);
                left -= take;
                break;
            }
            if (tries) take /= 2;
            take = take > 4096 ? (take - 1) & ~(uint64_t)4095 : 0;
        }
    }
    if (left == 0) return 0;
    /* roll back */
    while (blob_size(b) > first) blob_pop(b);
    return ST_OOM;
}

/* Bytes that demotions in flight will free, per tier: writes waiting for room count on them
 * before starting more demotions. */
static uint64_t demoting[TIER_MAX];

static tag_plan_t *plan_new(int kind, blob_t *b)
{
    tag_plan_t *p = xcalloc(1, sizeof(*p));
    p->kind = kind;
    p->demote_from = -1;
    p->blob = b;
    p->tag_id = b->tag ? (uint32_t)b->tag->id : 0; /* 0: deleted, no one waits on it */
    blob_ref(b);
    return p;
}

static void plan_add(tag_plan_t *p, const tier_extent_t *e, uint64_t off, char *buf,
                     uint64_t len, int op)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->seg = xrealloc(p->seg, sizeof(seg_t) * (size_t)p->cap);
    }
    p->seg[p->n++] = (seg_t){*e, off, buf, len, op};
}

static void plan_free(tag_plan_t *p)
{
    xfree(p->reuse);
    xfree(p->seg);
    xfree(p->owned);
    xfree(p);
}

/* Starts moving b to tier dst: extents already there stay where they are (the new list
 * shares them), the others are copied to new extents on dst. Returns ST_OK when done at once
 * (nothing to copy, or RAM to RAM), ST_PENDING with *plan, or ST_OOM when dst lacks room for
 * the bytes that must move. b must be idle. */
static void finish_move(tag_plan_t *p, int status);

static int move_blob(blob_t *b, int dst, tag_plan_t **plan)
{
    if (blob_size(b) == 0) return ST_OK;
    uint64_t need = blob_size(b) - blob_bytes_on(b, dst), staged = 0;
    if (need == 0) return ST_OK;
    if (tier_room(tag_store.tiers->t[dst]) < need) return ST_OOM;
    uint32_t n;
    const tier_extent_t *e0 = blob_extents(b, &n);
    for (uint32_t i = 0; i < n; i++)
        if (e0[i].tier != dst && tier_kind(tag_store.tiers->t[e0[i].tier]) == TIER_FILE)
            staged += e0[i].len;
    char *stage = NULL;
    if (staged && !(stage = try_malloc(staged))) return ST_OOM;
    extlist_t *old = blob_list(b); /* the plan holds it (an inline extent spills) */
    tag_plan_t *p = plan_new(PLAN_MOVE, b);
    p->owned = stage;
    p->reuse = xmalloc(sizeof(uint32_t) * 2 * old->n);
    extlist_t *nl = extlist_new(old->n);
    int dst_file = tier_kind(tag_store.tiers->t[dst]) == TIER_FILE;
    uint64_t spos = 0;
    for (uint32_t i = 0; i < old->n; i++) {
        const tier_extent_t *e = &old->e[i];
        if (e->tier == dst) { /* stays: shared by both lists until the swap */
            p->reuse[2 * p->nreuse] = i;
            p->reuse[2 * p->nreuse + 1] = nl->n;
            p->nreuse++;
            nl = extlist_push(nl, e);
            continue;
        }
        tier_extent_t ext[MAX_ALLOC_EXTENTS];
        int got = tier_alloc(tag_store.tiers, dst, e->len, ext, MAX_ALLOC_EXTENTS);
        if (got <= 0) {
            p->dest = nl;
            finish_move(p, -ENOSPC); /* frees what was allocated, keeps the shared extents */
            blob_unref(b);
            plan_free(p);
            blob_compact(b);
            return ST_OOM;
        }
        int src_file = tier_kind(tag_store.tiers->t[e->tier]) == TIER_FILE;
        char *src = e->at.mem;
        if (src_file) { /* read first, then copy from the staging buffer */
            plan_add(p, e, 0, stage + spos, e->len, SEG_READ);
            src = stage + spos;
            spos += e->len;
        }
        uint64_t off = 0;
        for (int k = 0; k < got; k++) {
            tier_extent_t *d = &ext[k];
            if (dst_file) plan_add(p, d, 0, src + off, d->len, SEG_WRITE);
            else if (src_file) plan_add(p, d, 0, src + off, d->len, SEG_COPY);
            else memcpy(d->at.mem, src + off, d->len);
            off += d->len;
            nl = extlist_push(nl, d);
        }
    }
    p->hold = old;
    old->refs++;
    p->dest = nl;
    b->moving = 1;
    *plan = p;
    if (p->n == 0) { /* RAM to RAM: done */
        tag_plan_finish(p, 0, NULL, NULL);
        *plan = NULL;
        return ST_OK;
    }
    return ST_PENDING;
}

static int by_score(const void *x, const void *y)
{
    double a = (*(blob_t *const *)x)->score, b = (*(blob_t *const *)y)->score;
    return a < b ? -1 : a > b;
}

/* Makes room on tier t for len bytes by moving idle blobs colder than s one tier down, the
 * coldest first (taken among the coldest of the heap: its first five levels). Returns the
 * number of moves started; moves that complete at once (RAM to RAM) count too, with a NULL
 * plan. */
static int demote_for(int t, uint64_t len, double s, tag_plan_t **plans, int max)
{
    int started = 0, below = t + 1;
    if (below >= tag_store.tiers->n) return 0;
    heap_t *h = &heaps[t];
    blob_t *cand[31];
    int nc = 0;
    for (uint32_t i = 0; i < h->n && i < 31; i++)
        if (h->v[i]->score < s && blob_idle(h->v[i])) cand[nc++] = h->v[i];
    qsort(cand, (size_t)nc, sizeof(cand[0]), by_score);
    uint64_t have = tier_room(tag_store.tiers->t[t]), freed = 0;
    for (int i = 0; i < nc && have + freed < len && started < max; i++) {
        uint64_t bytes = blob_bytes_on(cand[i], t);
        tag_plan_t *p = NULL;
        if (move_blob(cand[i], below, &p) == ST_OOM) continue;
        freed += bytes;
        if (p) {
            p->demote_from = t;
            p->demote_bytes = bytes;
            demoting[t] += bytes;
        }
        plans[started++] = p;
    }
    return started;
}

/* Moves b to the tier its score picks when it is not all there (TPUT with a score), in the
 * background: the plan goes to the pending queue. */
static void retarget(blob_t *b)
{
    b->retarget = 0;
    if (!blob_idle(b) || !blob_size(b) || !b->tag) return;
    int target = tier_set_pick(tag_store.tiers, b->score);
    if (blob_bytes_on(b, target) == blob_size(b)) return;
    tag_plan_t *p = NULL;
    if (move_blob(b, target, &p) == ST_PENDING) pending_push(p);
}

/* ---- writes ---- */

/* Appends a plan segment or writes RAM now for data[0..len) at blob offset off. data NULL:
 * zeros. */
static void write_range(blob_t *b, uint64_t off, const char *data, uint64_t len, tag_plan_t **p)
{
    uint64_t pos = 0;
    uint32_t ne;
    tier_extent_t *ext = blob_extents(b, &ne);
    for (uint32_t i = 0; i < ne && len; i++) {
        tier_extent_t *e = &ext[i];
        if (off >= pos + e->len) {
            pos += e->len;
            continue;
        }
        uint64_t eoff = off - pos, n = e->len - eoff < len ? e->len - eoff : len;
        if (tier_kind(tag_store.tiers->t[e->tier]) == TIER_RAM) {
            if (data) copy_stream(e->at.mem + eoff, data, n);
            else memset(e->at.mem + eoff, 0, n);
        } else {
            if (!*p) *p = plan_new(PLAN_WRITE, b);
            plan_add(*p, e, eoff, (char *)data, n, SEG_WRITE);
        }
        tier_count_io(tag_store.tiers, e->tier, 1, n);
        if (data) data += n;
        off += n;
        len -= n;
        pos += e->len;
    }
}

/* Grows b's last extent in place to hold size bytes (slack in its last block, or the free
 * blocks right after it, in a RAM or a file tier alike). 0 on success, -1 if it cannot. */
static int grow_in_place(blob_t *b, uint64_t size)
{
    uint32_t n;
    tier_extent_t *e = blob_extents(b, &n);
    if (!n || tier_grow_extent(tag_store.tiers, &e[n - 1], size - blob_size(b)) < 0) return -1;
    blob_sized(b, size);
    return 0;
}

/* Grows b to size bytes (new bytes not yet written). Returns 0, or ST_OOM when no tier has
 * the room (nothing allocated). */
static int grow(blob_t *b, uint64_t size)
{
    uint64_t delta = size - blob_size(b);
    if (!delta) return 0;
    count_blob_tiers(b, 0);
    int rc = place(delta, b->score, b);
    count_blob_tiers(b, 1);
    return rc;
}

/* When the preferred tier for score s cannot take len bytes, demotes colder blobs from it.
 * Returns 1 if moves are in flight and the caller should wait for room (space wait name);
 * 0 to go on (room was made at once, or nothing can be demoted: placement decides). */
static int make_room(double s, uint64_t len)
{
    int pick = tier_set_pick(tag_store.tiers, s);
    uint64_t free = tier_room(tag_store.tiers->t[pick]), total = 0;
    if (free >= len) return 0;
    /* moves only shift bytes between tiers: if all tiers together cannot take the write, it
     * fails with OOM and nothing may move */
    for (int i = 0; i < tag_store.tiers->n; i++) total += tier_room(tag_store.tiers->t[i]);
    if (total < len) return 0;
    /* demotions already in flight will free enough: wait for them rather than start more */
    if (demoting[pick] && free + demoting[pick] >= len) return 1;
    tag_plan_t *plans[8];
    int n = demote_for(pick, len - demoting[pick], s, plans, 8), pending = 0;
    for (int i = 0; i < n; i++) {
        if (!plans[i]) continue;
        pending = 1;
        pending_push(plans[i]);
    }
    return pending;
}

/* Writes data[0..len) at off and grows the blob to at least min_size (zeros). */
/* TPUT's and TTRUNCATE's growth: w, and at least min_size bytes. */
static int write_blob(tag_obj_t *t, const tag_write_t *w, uint64_t min_size, uint64_t *size_out,
                      tag_plan_t **plan)
{
    const char *name = w->name, *data = w->data;
    size_t nlen = w->nlen, len = w->len;
    uint64_t off = len ? w->off : 0; /* an empty write creates the blob, nothing more */
    int has_score = w->has_score;
    double score = w->score;
    long long now = w->now;
    *plan = NULL;
    blob_t *b = tag_blob(t, name, nlen);
    uint64_t max =
        tag_store.max_blob_size < TIER_EXTENT_MAX ? tag_store.max_blob_size : TIER_EXTENT_MAX;
    if (off > UINT64_MAX - len || off + len > max || min_size > max) return ST_TOO_BIG;
    if (b && !blob_idle(b)) return ST_BUSY;
    double s = has_score ? score : b ? b->score : 1.0;
    uint64_t old = b ? blob_size(b) : 0, end = off + len > old ? off + len : old;
    if (min_size > end) end = min_size;
    /* growth that fits where the blob ends needs no placement (nor room made elsewhere) */
    int grown = b && end > old && grow_in_place(b, end) == 0;
    if (end > old && !grown && make_room(s, end - old)) return ST_NOSPACE;
    int created = 0;
    if (!b) {
        b = blob_create(t, name, nlen, s, now);
        created = 1;
    }
    double old_score = b->score;
    long long old_mtime = b->mtime;
    b->score = s;
    if (end > old && !grown && grow(b, end) != 0) {
        b->score = old_score;
        if (created) blob_delete(t, b);
        return ST_OOM;
    }
    tag_plan_t *p = NULL;
    uint64_t gap_end = len ? off : end; /* zeros from the old end up to the data, or to end */
    if (gap_end > old) write_range(b, old, NULL, gap_end - old, &p);
    if (len) {
        /* file parts need the bytes after the command returns: copy them once */
        int needs_copy = 0;
        uint32_t n;
        const tier_extent_t *e = blob_extents(b, &n);
        for (uint32_t i = 0; i < n; i++)
            needs_copy |= tier_kind(tag_store.tiers->t[e[i].tier]) == TIER_FILE;
        const char *src = data;
        char *copy = NULL;
        if (needs_copy) {
            copy = try_malloc(len);
            if (!copy) { /* undo: nothing ran yet */
                if (p) {
                    blob_unref(b);
                    plan_free(p);
                }
                b->score = old_score;
                if (created) blob_delete(t, b);
                else if (blob_size(b) > old) shrink_to(b, old);
                return ST_OOM;
            }
            memcpy(copy, data, len);
            src = copy;
        }
        write_range(b, off, src, len, &p);
        if (p) p->owned = copy;
        else xfree(copy);
    }
    b->mtime = blob_time(now);
    uint32_t old_writes = b->writes;
    count_up(&b->writes);
    if (end > old || b->score != old_score) rehome(b); /* an overwrite in place keeps its heap slot */
    *size_out = blob_size(b);
    if (has_score && !created && b->score != old_score) b->retarget = 1;
    if (!p) {
        if (tag_store.on_blob_change) tag_store.on_blob_change(tag_store.ud, t, b, 0);
        if (b->retarget) retarget(b);
        return ST_OK;
    }
    p->undo_created = created;
    p->undo_size = old;
    p->undo_score = old_score;
    p->undo_mtime = old_mtime;
    p->undo_writes = old_writes;
    b->writing = 1;
    b->undone = 0;
    writes_in_flight++;
    *plan = p;
    return ST_PENDING;
}

/* A write plan failed (its tier write met an I/O error or a full disk that could not be
 * reserved): the blob goes back to its size, score, mtime and counters from before the write,
 * and a blob the write created is deleted. Bytes it overwrote inside the old size may hold
 * part of the new data. */
static void undo_write(tag_plan_t *p)
{
    blob_t *b = p->blob;
    b->retarget = 0;
    if (!b->tag) return;
    b->undone = 1;
    if (p->undo_created) {
        blob_delete(b->tag, b);
        return;
    }
    if (blob_size(b) > p->undo_size) shrink_to(b, p->undo_size);
    b->score = p->undo_score;
    b->mtime = p->undo_mtime;
    b->writes = p->undo_writes;
    rehome(b);
}

/* Frees b's bytes past size (size < its size). b is idle: no plan holds its extents. */
static void shrink_to(blob_t *b, uint64_t size)
{
    count_blob_tiers(b, 0);
    uint64_t pos = 0;
    uint32_t keep = 0, n;
    tier_extent_t *ext = blob_extents(b, &n);
    for (uint32_t i = 0; i < n; i++) {
        tier_extent_t *e = &ext[i];
        uint64_t elen = e->len;
        if (pos >= size) {
            tier_free_extent(tag_store.tiers, e);
        } else {
            if (pos + elen > size) tier_shrink_extent(tag_store.tiers, e, size - pos);
            ext[keep++] = *e;
        }
        pos += elen;
    }
    if (b->d.many.tier == BLOB_LIST) {
        assert(b->d.many.list->refs == 1);
        b->d.many.list->n = keep;
        b->d.many.size = size;
        blob_compact(b);
    } else if (!keep) {
        b->d = (bdata_t){.many = {.tier = BLOB_EMPTY}};
    }
    assert(blob_size(b) == size);
    count_blob_tiers(b, 1);
    rehome(b);
}

int tag_put(tag_obj_t *t, const tag_write_t *w, uint64_t *size_out, tag_plan_t **plan)
{
    return write_blob(t, w, 0, size_out, plan);
}

int tag_truncate(tag_obj_t *t, const char *name, size_t nlen, uint64_t size, long long now,
                 tag_plan_t **plan)
{
    *plan = NULL;
    blob_t *b = tag_blob(t, name, nlen);
    if (!b || size >= blob_size(b)) { /* grows with zeros, or creates */
        uint64_t dummy;
        tag_write_t w = {.name = name, .nlen = nlen, .now = now};
        return write_blob(t, &w, size, &dummy, plan);
    }
    if (!blob_idle(b)) return ST_BUSY;
    shrink_to(b, size);
    b->mtime = blob_time(now);
    count_up(&b->writes);
    if (tag_store.on_blob_change) tag_store.on_blob_change(tag_store.ud, t, b, 0);
    return ST_OK;
}

int tag_set_meta(tag_obj_t *t, const char *name, size_t nlen, long long ctime, long long mtime,
                 long long atime, uint64_t reads, uint64_t writes)
{
    blob_t *b = tag_blob(t, name, nlen);
    if (!b) return ST_MISSING;
    assert(ctime >= 0 && ctime <= TAG_TIME_MAX && mtime >= 0 && mtime <= TAG_TIME_MAX);
    assert(atime >= 0 && atime <= TAG_TIME_MAX);
    b->ctime = ctime;
    b->mtime = mtime;
    b->atime = atime;
    b->reads = counter32(reads);
    b->writes = counter32(writes);
    if (tag_store.on_blob_change) tag_store.on_blob_change(tag_store.ud, t, b, 0);
    return ST_OK;
}

/* ---- reads ---- */

int tag_read_prepare(tag_obj_t *t, const char *name, size_t nlen, uint64_t off,
                     uint64_t count, uint64_t *len, int *needs_io, blob_t **blob)
{
    blob_t *b = *blob = tag_blob(t, name, nlen);
    *len = 0;
    *needs_io = 0;
    if (!b) return ST_MISSING;
    if (b->writing || blob_refs_full(b)) return ST_BUSY;
    uint64_t n = off >= blob_size(b) ? 0 : blob_size(b) - off;
    if (count < n) n = count;
    *len = n;
    uint64_t pos = 0;
    uint32_t ne;
    const tier_extent_t *ext = blob_extents(b, &ne);
    for (uint32_t i = 0; n && i < ne && pos < off + n; i++) {
        const tier_extent_t *e = &ext[i];
        if (pos + e->len > off && tier_kind(tag_store.tiers->t[e->tier]) == TIER_FILE)
            *needs_io = 1;
        pos += e->len;
    }
    return ST_OK;
}

/* Copies [off, off+len) of b's extents (within its size) into dst: RAM extents now, file
 * extents through a read plan (ST_PENDING, *plan set, holding the extents) or ST_OK when none
 * is needed. l: the extents as a reader holds them, or NULL for b's own. count_io: the bytes
 * count in the tiers' read statistics. */
static int read_list(blob_t *b, extlist_t *l, uint64_t off, uint64_t len, char *dst,
                     int count_io, tag_plan_t **plan)
{
    tag_plan_t *p = NULL;
    uint64_t pos = 0, done = 0;
    uint32_t ne = l ? l->n : 0;
    tier_extent_t *ext = l ? l->e : blob_extents(b, &ne);
    for (uint32_t i = 0; i < ne && done < len; i++) {
        tier_extent_t *e = &ext[i];
        uint64_t at = off + done;
        if (at >= pos + e->len) {
            pos += e->len;
            continue;
        }
        uint64_t eoff = at - pos, n = e->len - eoff < len - done ? e->len - eoff : len - done;
        if (tier_kind(tag_store.tiers->t[e->tier]) == TIER_RAM) {
            memcpy(dst + done, e->at.mem + eoff, n);
        } else {
            if (!p) p = plan_new(PLAN_READ, b);
            plan_add(p, e, eoff, dst + done, n, SEG_READ);
        }
        if (count_io) tier_count_io(tag_store.tiers, e->tier, 0, n);
        done += n;
        pos += e->len;
    }
    if (!p) return ST_OK;
    p->hold = l ? l : blob_list(b); /* the segments copied the extents: ext may move now */
    p->hold->refs++;
    b->readers++;
    *plan = p;
    return ST_PENDING;
}

static int read_range(blob_t *b, uint64_t off, uint64_t len, char *dst, int count_io,
                      tag_plan_t **plan)
{
    return read_list(b, NULL, off, len, dst, count_io, plan);
}

int tag_read_into(blob_t *b, uint64_t off, uint64_t len, long long now, char *dst,
                  tag_plan_t **plan)
{
    *plan = NULL;
    assert(b && !b->writing && off + len <= (off >= blob_size(b) ? off : blob_size(b)));
    b->atime = blob_time(now);
    count_up(&b->reads);
    return read_range(b, off, len, dst, 1, plan);
}

const char *blob_ram_view(const blob_t *b, uint64_t off, uint64_t len)
{
    if (b->writing) return NULL;
    uint64_t pos = 0;
    uint32_t n;
    const tier_extent_t *ext = blob_extents((blob_t *)b, &n);
    for (uint32_t i = 0; i < n; i++) {
        const tier_extent_t *e = &ext[i];
        if (off < pos + e->len) {
            if (off + len > pos + e->len || tier_kind(tag_store.tiers->t[e->tier]) != TIER_RAM)
                return NULL;
            return e->at.mem + (off - pos);
        }
        pos += e->len;
    }
    return NULL;
}

int blob_peek(blob_t *b, uint64_t off, uint64_t len, char *dst, tag_plan_t **plan)
{
    *plan = NULL;
    if (b->writing || b->refs > BLOB_REFS_MAX - BLOB_REFS_PEEK_ROOM) return ST_BUSY;
    assert(off <= blob_size(b) && len <= blob_size(b) - off);
    return read_range(b, off, len, dst, 0, plan);
}

int tag_get(tag_obj_t *t, const char *name, size_t nlen, uint64_t off, uint64_t count,
            long long now, char **out, uint64_t *outlen, tag_plan_t **plan)
{
    uint64_t len;
    int io;
    *plan = NULL;
    *out = NULL;
    *outlen = 0;
    blob_t *b;
    int rc = tag_read_prepare(t, name, nlen, off, count, &len, &io, &b);
    if (rc != ST_OK) return rc;
    char *buf = try_malloc(len ? len : 1);
    if (!buf) return ST_OOM;
    *out = buf;
    *outlen = len;
    return tag_read_into(b, off, len, now, buf, plan);
}

/* ---- readers (a TGET streamed in pieces) ---- */

static size_t blob_waitname(uint32_t tag_id, const char *name, size_t nlen, char *buf);

struct tag_reader {
    blob_t *b;     /* a reference */
    extlist_t *l;  /* a reference: the extents as they were at open */
    uint64_t off;  /* where the read starts in the blob */
    uint64_t len;
    uint32_t tag_id; /* blob_waitname's */
};

int tag_reader_open(tag_obj_t *t, const char *name, size_t nlen, uint64_t off, uint64_t count,
                    long long now, tag_reader_t **r, uint64_t *len)
{
    int io;
    *r = NULL;
    blob_t *b;
    int rc = tag_read_prepare(t, name, nlen, off, count, len, &io, &b);
    if (rc != ST_OK) return rc;
    /* A move's end hands the extents it shares to the new list and marks them gone in the
     * old one, which a reader (unlike one read plan, whose pieces are fixed when it starts)
     * would go on reading: it opens after the move. */
    if (b->moving) return ST_BUSY;
    tag_reader_t *x = xcalloc(1, sizeof(*x));
    x->b = b;
    x->tag_id = (uint32_t)t->id;
    blob_ref(b);
    b->readers++; /* writes and moves wait until the reader is closed */
    x->l = blob_list(b);
    if (x->l) x->l->refs++;
    x->off = off;
    x->len = *len;
    b->atime = blob_time(now);
    count_up(&b->reads);
    *r = x;
    return ST_OK;
}

int tag_reader_read(tag_reader_t *r, uint64_t pos, uint64_t n, char *dst, tag_plan_t **plan)
{
    *plan = NULL;
    assert(pos <= r->len && n <= r->len - pos);
    int rc = read_list(r->b, r->l, r->off + pos, n, dst, 1, plan);
    if (*plan) (*plan)->tag_id = r->tag_id; /* also after a delete */
    return rc;
}

void tag_reader_close(tag_reader_t *r, void (*wake)(void *ud, const char *name, size_t len),
                      void *ud)
{
    blob_t *b = r->b;
    b->readers--;
    extlist_unref(r->l);
    blob_compact(b);
    if (wake) {
        char name[64];
        wake(ud, name, blob_waitname(r->tag_id, b->name, b->node.aux, name));
    }
    blob_unref(b);
    xfree(r);
}

/* ---- delete, reorg ---- */

int tag_del(tag_obj_t *t, const char *name, size_t nlen)
{
    blob_t *b = tag_blob(t, name, nlen);
    if (!b) return 0;
    blob_delete(t, b);
    return 1;
}

int tag_reorg(tag_obj_t *t, const char *name, size_t nlen, double score, tag_plan_t **plan)
{
    *plan = NULL;
    blob_t *b = tag_blob(t, name, nlen);
    if (!b) return ST_MISSING;
    if (!blob_idle(b)) return ST_BUSY;
    b->score = score;
    rehome(b);
    if (blob_size(b) == 0) return ST_OK;
    int order[TIER_MAX], n = tier_order(score, order);
    /* already entirely on the tier placement picks: nothing to do */
    if (blob_bytes_on(b, order[0]) == blob_size(b)) return ST_OK;
    for (int k = 0; k < n; k++) {
        int target = order[k];
        if (blob_bytes_on(b, target) == blob_size(b)) return ST_OK;
        int rc = move_blob(b, target, plan);
        if (rc != ST_OOM) return rc;
    }
    return ST_OOM;
}

/* ---- plans ---- */

int tag_plan_dest_tier(const tag_plan_t *p)
{
    return p->dest && p->dest->n ? p->dest->e[0].tier : -1;
}

int tag_plan_run(tag_plan_t *p)
{
    for (int i = 0; i < p->n; i++) {
        seg_t *s = &p->seg[i];
        int rc = 0;
        if (s->op == SEG_READ) rc = tier_pread(tag_store.tiers, &s->e, s->off, s->buf, s->len);
        else if (s->op == SEG_COPY) memcpy(s->e.at.mem + s->off, s->buf, s->len);
        else if (s->buf) rc = tier_pwrite(tag_store.tiers, &s->e, s->off, s->buf, s->len);
        else rc = tier_zero(tag_store.tiers, &s->e, s->off, s->len);
        if (rc < 0) return rc;
    }
    return 0;
}

/* A move that succeeded read every extent it did not share off its tier and wrote the new
 * ones on the destination: TIERS counts them as any read and write. */
static void count_move_io(const tag_plan_t *p)
{
    const extlist_t *old = p->hold, *nl = p->dest;
    if (!nl || nl->n == 0) return;
    int dst = nl->e[0].tier;
    for (uint32_t i = 0; i < old->n; i++)
        if (old->e[i].tier != dst && old->e[i].tier != TIER_NONE)
            tier_count_io(tag_store.tiers, old->e[i].tier, 0, old->e[i].len);
    for (uint32_t i = 0, r = 0; i < nl->n; i++) {
        if (r < p->nreuse && p->reuse[2 * r + 1] == i) { /* shared: it did not move */
            r++;
            continue;
        }
        tier_count_io(tag_store.tiers, dst, 1, nl->e[i].len);
    }
}

static void finish_move(tag_plan_t *p, int status)
{
    blob_t *b = p->blob;
    b->moving = 0;
    if (p->demote_from >= 0) demoting[p->demote_from] -= p->demote_bytes;
    if (status < 0 || !b->tag) { /* the shared extents stay with the blob's own list */
        for (uint32_t i = 0; i < p->nreuse; i++) p->dest->e[p->reuse[2 * i + 1]].tier = TIER_NONE;
        extlist_unref(p->dest);
        p->dest = NULL;
        return;
    }
    count_move_io(p);
    count_blob_tiers(b, 0);
    assert(b->d.many.tier == BLOB_LIST && b->d.many.list == p->hold);
    extlist_t *old = p->hold;
    /* the shared extents now belong to the new list */
    for (uint32_t i = 0; i < p->nreuse; i++) old->e[p->reuse[2 * i]].tier = TIER_NONE;
    blob_set_list(b, p->dest, blob_size(b));
    p->dest = NULL;
    extlist_unref(old); /* the plan's hold keeps it until below */
    count_blob_tiers(b, 1);
    rehome(b);
}

static size_t blob_waitname(uint32_t tag_id, const char *name, size_t nlen, char *buf);

void tag_plan_finish(tag_plan_t *p, int status,
                     void (*wake)(void *ud, const char *name, size_t len), void *ud)
{
    blob_t *b = p->blob;
    switch (p->kind) {
    case PLAN_READ: b->readers--; break;
    case PLAN_WRITE:
        b->writing = 0;
        writes_in_flight--;
        if (status < 0) undo_write(p);
        if (b->tag && tag_store.on_blob_change) tag_store.on_blob_change(tag_store.ud, b->tag, b, 0);
        if (b->retarget) retarget(b);
        break;
    case PLAN_MOVE: finish_move(p, status); break;
    }
    extlist_unref(p->hold);
    blob_compact(b);
    if (wake) {
        char name[64];
        wake(ud, name, blob_waitname(p->tag_id, b->name, b->node.aux, name));
        if (p->kind == PLAN_MOVE) wake(ud, name, tag_space_waitname(name));
    }
    blob_unref(b);
    plan_free(p);
}

/* "\xffblob" + tag id + 32-bit hash of the name: collisions only cause a spurious retry */
static size_t blob_waitname(uint32_t tag_id, const char *name, size_t nlen, char *buf)
{
    uint32_t h = dict_hash(name, nlen);
    memcpy(buf, "\xff" "blob", 5);
    memcpy(buf + 5, &tag_id, 4);
    memcpy(buf + 9, &h, 4);
    return 13;
}

size_t tag_blob_waitname(const tag_obj_t *t, const char *name, size_t nlen, char *buf)
{
    return blob_waitname((uint32_t)t->id, name, nlen, buf);
}

int tag_blob_busy(tag_obj_t *t, const char *name, size_t nlen, int for_write)
{
    blob_t *b = tag_blob(t, name, nlen);
    if (!b) return 0;
    return for_write ? !blob_idle(b) : b->writing || blob_refs_full(b);
}

size_t tag_space_waitname(char *buf)
{
    memcpy(buf, "\xff" "space", 6);
    return 6;
}

/* ---- the organizer ---- */

static int org_tier;
static uint32_t org_idx;

double tag_access_score(uint64_t accesses, long long idle_ms, double half_life_s)
{
    double age = idle_ms > 0 ? (double)idle_ms / 1000.0 : 0.0;
    return 0.5 * exp2(-age / half_life_s) + 0.5 * (double)accesses / ((double)accesses + 10.0);
}

int tag_organize_step(long long now, int budget, double half_life_s)
{
    int moves = 0, n = tag_store.tiers ? tag_store.tiers->n : 0;
    for (int visited = 0; visited < budget && n > 0; visited++) {
        heap_t *h = &heaps[org_tier];
        if (org_idx >= h->n) { /* next tier (an empty pass over every tier ends the step) */
            org_idx = 0;
            org_tier = (org_tier + 1) % n;
            if (org_tier == 0) break;
            continue;
        }
        blob_t *b = h->v[org_idx++];
        if (!blob_idle(b)) continue;
        uint64_t n = (uint64_t)b->reads + b->writes;
        double score = tag_access_score(n, now - b->atime, half_life_s);
        if (b->mtime > b->atime) score = tag_access_score(n,
                                                          now - b->mtime, half_life_s);
        b->score = score;
        rehome(b); /* may reorder the heap: the scan may see a blob twice or skip one */
        int target = tier_set_pick(tag_store.tiers, score);
        if (blob_bytes_on(b, target) == blob_size(b)) continue;
        tag_plan_t *p = NULL;
        int rc = move_blob(b, target, &p);
        if (rc == ST_PENDING) pending_push(p);
        if (rc != ST_OOM) moves++;
    }
    return moves;
}

/* ---- iteration ---- */

struct iter_ctx {
    tag_blob_fn *fn;
    void *ud;
};

static void iter_one(void *ud, dict_node_t *n)
{
    struct iter_ctx *x = ud;
    x->fn(x->ud, (blob_t *)n);
}

void tag_foreach(tag_obj_t *t, tag_blob_fn *fn, void *ud)
{
    dict_iter_t it;
    dict_iter_init(&it, &t->blobs, 1); /* safe: fn may look blobs up (a lookup rehashes) */
    for (dict_node_t *n; (n = dict_iter_next(&it));) fn(ud, (blob_t *)n);
    dict_iter_deinit(&it);
}

uint64_t tag_scan(tag_obj_t *t, uint64_t cursor, tag_blob_fn *fn, void *ud)
{
    struct iter_ctx x = {fn, ud};
    return dict_scan(&t->blobs, cursor, iter_one, &x);
}

/* ---- the object type ---- */

static void tag_free_obj(obj_t *o)
{
    tag_obj_t *t = (tag_obj_t *)o;
    dict_clear(&t->blobs, NULL);
    if (tag_store.on_tag_free) tag_store.on_tag_free(tag_store.ud, t);
    xfree(t);
    live_tags--;
}

static obj_t *tag_dup_obj(const obj_t *o)
{
    (void)o;
    return NULL; /* COPY of a tag is refused by the command (blob bytes may be on files) */
}

static size_t tag_memory(const obj_t *o)
{
    const tag_obj_t *t = (const tag_obj_t *)o;
    size_t n = alloc_size(t) + dict_buckets_bytes(&t->blobs);
    dict_iter_t it;
    dict_iter_init(&it, (dict_t *)&t->blobs, 0);
    for (dict_node_t *x; (x = dict_iter_next(&it));) {
        blob_t *b = (blob_t *)x;
        n += alloc_size(b) + (b->d.many.tier == BLOB_LIST ? alloc_size(b->d.many.list) : 0);
    }
    dict_iter_deinit(&it);
    return n;
}

static size_t tag_length(const obj_t *o)
{
    return tag_len((const tag_obj_t *)o);
}

static const obj_ops_t tag_ops = {tag_free_obj, tag_dup_obj, tag_memory, tag_length};

__attribute__((constructor)) static void register_tag_type(void)
{
    obj_types[OBJ_TAG] = &tag_ops;
}
