/* tier.c - tier sets: RAM and file tiers, exact accounting, extents and their I/O (see tier.h).
 *
 * Both kinds hand out space in blocks with one free-extent allocator: a RAM tier over a region
 * of address space in 16-byte blocks, a file tier over its data file in 4 KiB blocks.
 *
 * RAM tier. One anonymous private mapping of the capacity (rounded down to whole blocks), made
 * at open with MAP_NORESERVE: it costs no memory until pages are touched, so a capacity above
 * the machine's RAM is fine (one the address space refuses is halved until it maps). An
 * extent's at.mem is base + offset. Bytes are counted as whole blocks, and every block in use
 * is added to used_memory (alloc_count_add), since no allocator sees them. Freed pages go back
 * to the OS (madvise MADV_DONTNEED) in batches: each free run keeps a dirty span, the blocks
 * that may lie on touched pages (a freed range widens its run's span; carving clips it), and
 * once the spans add up to DIRTY_MAX the whole pages inside them are purged. Small frees thus
 * cost no system call, a run freed and taken again at once (an overwrite) keeps its pages,
 * and at most DIRTY_MAX of free pages stays resident. Closing unmaps the region, extents
 * still allocated with it.
 *
 * File tier. One data file <path>/<name>.data, locked (flock, LOCK_EX | LOCK_NB: a file another
 * process holds is refused, naming that process, and left untouched), then truncated and sized
 * (sparse) to the capacity rounded down to whole 4 KiB blocks; tier_capacity() reports that
 * rounded value.
 *
 * Allocator. Every maximal run of free blocks is one run_t held in two AVL trees,
 *
 *   by_off  ordered by start block    neighbours for coalescing, the run after an extent
 *   by_len  ordered by (nblk, start)  best fit, largest run, the k largest runs
 *
 * so each operation costs O(log R) for R free runs and memory is proportional to the
 * fragmentation, never to the capacity. Invariants (checked by tier__check): runs are
 * non-empty, inside the tier, disjoint and never adjacent (frees coalesce at once); the blocks
 * in runs sum to nfree; used == (nblocks - nfree) * block; dirty spans lie inside their runs,
 * are on the dirty list and sum to ndirty (none on a file tier).
 *
 * Allocation of n blocks takes the best fit (smallest run >= n, lowest address on ties) and
 * carves from its start. When no run is large enough it takes the largest runs whole until
 * the rest fits one run, then best-fits the rest: the fewest runs possible. Whether that
 * needs more than `max` runs is decided before anything is taken (sum of the `max` largest
 * runs), so -ENOSPC and -E2BIG leave the tier untouched. An extent's len is what the caller
 * asked for; it owns ceil(len / block) blocks from its start, so growing within the last
 * block costs nothing, growing past it takes the free blocks right after (or fails), and
 * shrinking returns only whole trailing blocks. Blocks are not zeroed: reused ones hold a freed
 * extent's old bytes (or zeros, for purged RAM pages).
 *
 * Reservation (file tiers). A tier's capacity may exceed the free space of the file system under
 * it, so blocks are reserved (fallocate) when they are handed out and given back (a punched hole)
 * when they are freed: a full disk shows up as -ENOSPC from tier_alloc or tier_grow_extent,
 * on the loop thread, before any byte changed, and a later pwrite into an extent never needs
 * new space. tier_room() is the free space a tier can really hand out now (its own free blocks,
 * bounded by the file system's). On a file system without fallocate nothing is reserved and
 * pwrite may still fail with ENOSPC.
 *
 * Threads: everything but the I/O functions belongs to the loop thread. tier_pread,
 * tier_pwrite and tier_zero read only fields fixed at open (kind, fd, size) and the atomic
 * delay, and use positioned I/O, so worker threads may run them concurrently on any extents
 * (on distinct bytes). */
#define _GNU_SOURCE
#include "tiers/tier.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/flock.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define BLOCK ((uint64_t)TIER_FILE_BLOCK)
#define RAM_BLOCK ((uint64_t)TIER_RAM_BLOCK)
#define DIRTY_MAX (1ull << 20)  /* bytes of dirty free spans a RAM tier keeps before purging */
#define IO_CHUNK (1ull << 30)   /* largest single pread/pwrite */
#define ZERO_CHUNK (64u * 1024) /* zeros written per pwrite */
#define PUNCH_MIN (16 * BLOCK)  /* tier_zero punches holes from this size on */

/* ---- AVL tree (intrusive, recursive; height <= 1.44 log2 n, so recursion is shallow) ---- */

typedef struct avl {
    struct avl *l, *r;
    int h;
} avl_t;

typedef int avl_cmp_fn(const avl_t *a, const avl_t *b);

static int height(const avl_t *n)
{
    return n ? n->h : 0;
}

static void fix_height(avl_t *n)
{
    int hl = height(n->l), hr = height(n->r);
    n->h = 1 + (hl > hr ? hl : hr);
}

static avl_t *rotate_right(avl_t *n)
{
    avl_t *l = n->l;
    n->l = l->r;
    l->r = n;
    fix_height(n);
    fix_height(l);
    return l;
}

static avl_t *rotate_left(avl_t *n)
{
    avl_t *r = n->r;
    n->r = r->l;
    r->l = n;
    fix_height(n);
    fix_height(r);
    return r;
}

static avl_t *rebalance(avl_t *n)
{
    fix_height(n);
    int bf = height(n->l) - height(n->r);
    if (bf > 1) {
        if (height(n->l->l) < height(n->l->r)) n->l = rotate_left(n->l);
        return rotate_right(n);
    }
    if (bf < -1) {
        if (height(n->r->r) < height(n->r->l)) n->r = rotate_right(n->r);
        return rotate_left(n);
    }
    return n;
}

/* After a child subtree of root changed: when its height is what it was before, root keeps
 * its height and balance (and so does everything above), else root is rebalanced. Returns
 * root's subtree. Stopping early saves most of the work of an update in a large tree. */
static avl_t *settle(avl_t *root, const avl_t *child, int before)
{
    return height(child) == before ? root : rebalance(root);
}

/* Inserts n (its key must not be present); returns the new root. */
static avl_t *avl_insert(avl_t *root, avl_t *n, avl_cmp_fn *cmp)
{
    if (!root) {
        n->l = n->r = NULL;
        n->h = 1;
        return n;
    }
    int c = cmp(n, root);
    assert(c != 0);
    avl_t **side = c < 0 ? &root->l : &root->r;
    int before = height(*side);
    *side = avl_insert(*side, n, cmp);
    return settle(root, *side, before);
}

static avl_t *avl_remove_min(avl_t *root, avl_t **min)
{
    if (!root->l) {
        *min = root;
        return root->r;
    }
    int before = height(root->l);
    root->l = avl_remove_min(root->l, min);
    return settle(root, root->l, before);
}

/* Removes n, which must be in the tree; returns the new root. */
static avl_t *avl_remove(avl_t *root, avl_t *n, avl_cmp_fn *cmp)
{
    assert(root != NULL);
    if (root != n) {
        avl_t **side = cmp(n, root) < 0 ? &root->l : &root->r;
        int before = height(*side);
        *side = avl_remove(*side, n, cmp);
        return settle(root, *side, before);
    }
    if (!n->l) return n->r;
    if (!n->r) return n->l;
    avl_t *m;
    avl_t *r = avl_remove_min(n->r, &m);
    m->l = n->l;
    m->r = r;
    return rebalance(m);
}

/* ---- file-tier free-extent allocator ---------------------------------------------------- */

typedef struct run {
    avl_t by_off;
    avl_t by_len;
    uint64_t start, nblk; /* blocks [start, start + nblk) are free */
    /* RAM: blocks [dlo, dhi) of the run may sit on touched pages (dlo == dhi: none); the run
     * is on the dirty list while the span is not empty */
    uint64_t dlo, dhi;
    struct run *dprev, *dnext;
} run_t;

#define RUN_OFF(p) ((run_t *)((char *)(p)-offsetof(run_t, by_off)))
#define RUN_LEN(p) ((run_t *)((char *)(p)-offsetof(run_t, by_len)))

typedef struct falloc {
    avl_t *by_off, *by_len;
    uint64_t nblocks; /* blocks of the tier */
    uint64_t nfree;   /* free blocks */
    uint64_t nruns;   /* free runs */
    int track_dirty;  /* RAM: freed blocks widen their run's dirty span */
    run_t *dirty;     /* runs with a dirty span */
    uint64_t ndirty;  /* blocks in those spans */
} falloc_t;

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_off(const avl_t *a, const avl_t *b)
{
    return cmp_u64(RUN_OFF(a)->start, RUN_OFF(b)->start);
}

static int cmp_len(const avl_t *a, const avl_t *b)
{
    const run_t *x = RUN_LEN(a), *y = RUN_LEN(b);
    int c = cmp_u64(x->nblk, y->nblk);
    return c ? c : cmp_u64(x->start, y->start);
}

/* Sets r's dirty span to [lo, hi) clipped to the run, keeping the list and ndirty. */
static void set_dirty(falloc_t *fa, run_t *r, uint64_t lo, uint64_t hi)
{
    if (lo < r->start) lo = r->start;
    if (hi > r->start + r->nblk) hi = r->start + r->nblk;
    if (lo >= hi) lo = hi = 0;
    int was = r->dlo < r->dhi, is = lo < hi;
    fa->ndirty = fa->ndirty - (r->dhi - r->dlo) + (hi - lo);
    r->dlo = lo;
    r->dhi = hi;
    if (was == is) return;
    if (is) {
        r->dprev = NULL;
        r->dnext = fa->dirty;
        if (fa->dirty) fa->dirty->dprev = r;
        fa->dirty = r;
        return;
    }
    if (r->dprev)
        r->dprev->dnext = r->dnext;
    else
        fa->dirty = r->dnext;
    if (r->dnext) r->dnext->dprev = r->dprev;
}

static run_t *run_add(falloc_t *fa, uint64_t start, uint64_t nblk)
{
    run_t *r = xmalloc(sizeof(*r));
    r->start = start;
    r->nblk = nblk;
    r->dlo = r->dhi = 0;
    fa->by_off = avl_insert(fa->by_off, &r->by_off, cmp_off);
    fa->by_len = avl_insert(fa->by_len, &r->by_len, cmp_len);
    fa->nruns++;
    return r;
}

static void run_del(falloc_t *fa, run_t *r)
{
    set_dirty(fa, r, 0, 0);
    fa->by_off = avl_remove(fa->by_off, &r->by_off, cmp_off);
    fa->by_len = avl_remove(fa->by_len, &r->by_len, cmp_len);
    fa->nruns--;
    xfree(r);
}

/* Changes a run's bounds. The new start must keep the run between its neighbours, so by_off
 * stays ordered without moving the node; by_len is re-sorted. */
static void run_set(falloc_t *fa, run_t *r, uint64_t start, uint64_t nblk)
{
    fa->by_len = avl_remove(fa->by_len, &r->by_len, cmp_len);
    r->start = start;
    r->nblk = nblk;
    fa->by_len = avl_insert(fa->by_len, &r->by_len, cmp_len);
    set_dirty(fa, r, r->dlo, r->dhi); /* what left the run leaves the span */
}

static void falloc_init(falloc_t *fa, uint64_t nblocks, int track_dirty)
{
    memset(fa, 0, sizeof(*fa));
    fa->nblocks = fa->nfree = nblocks;
    fa->track_dirty = track_dirty;
    if (nblocks) run_add(fa, 0, nblocks);
}

static void free_runs(avl_t *n)
{
    if (!n) return;
    free_runs(n->l);
    free_runs(n->r);
    xfree(RUN_OFF(n));
}

static void falloc_deinit(falloc_t *fa)
{
    free_runs(fa->by_off);
    memset(fa, 0, sizeof(*fa));
}

/* The smallest run of at least nblk blocks (lowest start among equals), or NULL. */
static run_t *best_fit(const falloc_t *fa, uint64_t nblk)
{
    run_t *best = NULL;
    for (avl_t *n = fa->by_len; n;) {
        run_t *r = RUN_LEN(n);
        if (r->nblk >= nblk) {
            best = r;
            n = n->l;
        } else {
            n = n->r;
        }
    }
    return best;
}

static run_t *largest(const falloc_t *fa)
{
    avl_t *n = fa->by_len;
    while (n && n->r) n = n->r;
    return n ? RUN_LEN(n) : NULL;
}

/* The run that holds block b, or NULL. */
static run_t *run_holding(const falloc_t *fa, uint64_t b)
{
    run_t *floor = NULL;
    for (avl_t *n = fa->by_off; n;) {
        run_t *r = RUN_OFF(n);
        if (r->start <= b) {
            floor = r;
            n = n->r;
        } else {
            n = n->l;
        }
    }
    return floor && b < floor->start + floor->nblk ? floor : NULL;
}

/* Adds the largest runs, biggest first, to *sum until *sum >= want or *left runs are used. */
static void sum_largest(const avl_t *n, int *left, uint64_t *sum, uint64_t want)
{
    if (!n || *left == 0 || *sum >= want) return;
    sum_largest(n->r, left, sum, want);
    if (*left == 0 || *sum >= want) return;
    *sum += RUN_LEN(n)->nblk;
    (*left)--;
    sum_largest(n->l, left, sum, want);
}

/* 1 if nblk blocks (<= nfree) can be had in at most max runs. */
static int fits_in_runs(const falloc_t *fa, uint64_t nblk, int max)
{
    if (max < 1) return 0;
    if (best_fit(fa, nblk)) return 1;
    uint64_t sum = 0;
    sum_largest(fa->by_len, &max, &sum, nblk);
    return sum >= nblk;
}

/* Takes nblk blocks from the start of r; returns the first block. */
static uint64_t take(falloc_t *fa, run_t *r, uint64_t nblk)
{
    uint64_t start = r->start;
    assert(nblk > 0 && nblk <= r->nblk);
    if (nblk == r->nblk)
        run_del(fa, r);
    else
        run_set(fa, r, start + nblk, r->nblk - nblk);
    fa->nfree -= nblk;
    return start;
}

/* Takes blocks [start, start + nblk) out of r, which holds them (splitting r if they lie
 * inside it: only a zero-length extent grows from the middle of a run). */
static void take_range(falloc_t *fa, run_t *r, uint64_t start, uint64_t nblk)
{
    uint64_t end = start + nblk, r_end = r->start + r->nblk;
    assert(nblk > 0 && start >= r->start && end <= r_end);
    if (start == r->start) {
        take(fa, r, nblk);
        return;
    }
    uint64_t dlo = r->dlo, dhi = r->dhi;
    run_set(fa, r, r->start, start - r->start);
    if (end < r_end) set_dirty(fa, run_add(fa, end, r_end - end), dlo, dhi);
    fa->nfree -= nblk;
}

/* Widens [*lo, *hi) to cover r's dirty span, if it has one. */
static void widen(const run_t *r, uint64_t *lo, uint64_t *hi)
{
    if (r->dlo == r->dhi) return;
    if (r->dlo < *lo) *lo = r->dlo;
    if (r->dhi > *hi) *hi = r->dhi;
}

/* Returns blocks [start, start + nblk) to the free runs, merging with free neighbours (and,
 * when dirty pages are tracked, marking the range and the neighbours' spans dirty). The range
 * must be allocated: overlap with a free run (a double free) is an assert. */
static void release(falloc_t *fa, uint64_t start, uint64_t nblk)
{
    run_t *prev = NULL, *next = NULL, *r;
    uint64_t lo = start, hi = start + nblk;
    assert(nblk > 0 && start + nblk <= fa->nblocks);
    for (avl_t *n = fa->by_off; n;) {
        r = RUN_OFF(n);
        assert(r->start != start);
        if (r->start < start) {
            prev = r;
            n = n->r;
        } else {
            next = r;
            n = n->l;
        }
    }
    assert(!prev || prev->start + prev->nblk <= start);
    assert(!next || start + nblk <= next->start);
    int join_prev = prev && prev->start + prev->nblk == start;
    int join_next = next && start + nblk == next->start;
    if (join_prev) widen(prev, &lo, &hi);
    if (join_next) widen(next, &lo, &hi);
    if (join_prev && join_next) {
        uint64_t total = prev->nblk + nblk + next->nblk;
        run_del(fa, next);
        run_set(fa, r = prev, prev->start, total);
    } else if (join_prev) {
        run_set(fa, r = prev, prev->start, prev->nblk + nblk);
    } else if (join_next) {
        run_set(fa, r = next, start, next->nblk + nblk);
    } else {
        r = run_add(fa, start, nblk);
    }
    if (fa->track_dirty) set_dirty(fa, r, lo, hi);
    fa->nfree += nblk;
}

/* ---- tiers ------------------------------------------------------------------------------ */

struct tier {
    char *name;
    char *path; /* directory of a file tier, "" for RAM */
    char *file; /* <path>/<name>.data, NULL for RAM */
    int kind;
    int fd;
    double score;
    uint64_t capacity;
    uint64_t used;
    uint64_t block; /* bytes a block: BLOCK or RAM_BLOCK */
    tier_stats_t stats;
    _Atomic uint64_t delay_us;
    falloc_t fa;
    char *base;  /* TIER_RAM: the region of capacity bytes (NULL when 0) */
    size_t page; /* TIER_RAM: the page size */
    /* TIER_FILE while frees are held (tier_set_hold_frees): runs freed but not yet reusable,
     * as (start, nblk) pairs; still counted in used */
    uint64_t *held;
    size_t nheld, held_cap;
    int hold;
    int no_reserve; /* TIER_FILE: the file system has no fallocate: nothing is reserved */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static tier_t *tier_at(const tier_set_t *set, int i)
{
    assert(i >= 0 && i < set->n && set->t[i]);
    return set->t[i];
}

static void tier_destroy(tier_t *t)
{
    if (!t) return;
    if (t->kind == TIER_FILE) {
        if (t->fd >= 0) close(t->fd);
        if (t->file) unlink(t->file);
        xfree(t->held);
    } else {
        if (t->base) munmap(t->base, (size_t)t->capacity);
        alloc_count_sub((size_t)t->used); /* the blocks still allocated go with the region */
    }
    falloc_deinit(&t->fa);
    xfree(t->name);
    xfree(t->path);
    xfree(t->file);
    xfree(t);
}

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(const char *name, const char *dir, char *err, size_t errlen)
{
    char *p = xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            rc = -errno;
            set_err(err, errlen, "tier '%s': cannot create %s: %s", name, p, strerror(errno));
            break;
        }
        *s = c;
        if (c == '\0') break;
        while (s[1] == '/') s++;
    }
    xfree(p);
    return rc;
}

/* Locks the open data file, so that a second process (or a second tier set) never truncates
 * or writes the blocks of one that runs. When it is taken, the file is left as it is. */
static int lock_file(tier_t *t, char *err, size_t errlen)
{
    int rc = flock_try(t->fd, FLOCK_WAIT_MS);
    if (rc == 0) return 0;
    if (rc == -EWOULDBLOCK) {
        long pid = flock_holder(t->fd);
        if (pid)
            set_err(err, errlen, "tier '%s': %s is in use by another process (pid %ld)", t->name,
                    t->file, pid);
        else
            set_err(err, errlen, "tier '%s': %s is in use by another process", t->name, t->file);
    } else {
        set_err(err, errlen, "tier '%s': cannot lock %s: %s", t->name, t->file, strerror(-rc));
    }
    close(t->fd);
    t->fd = -1;
    xfree(t->file);
    t->file = NULL; /* not ours: leave it */
    return rc;
}

static int open_file(tier_t *t, char *err, size_t errlen)
{
    int rc = make_dirs(t->name, t->path, err, errlen);
    if (rc < 0) return rc;
    size_t plen = strlen(t->path);
    const char *sep = plen && t->path[plen - 1] == '/' ? "" : "/";
    size_t n = plen + strlen(t->name) + 7;
    t->file = xmalloc(n);
    snprintf(t->file, n, "%s%s%s.data", t->path, sep, t->name);
    t->fd = open(t->file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (t->fd < 0) {
        rc = -errno;
        set_err(err, errlen, "tier '%s': cannot create %s: %s", t->name, t->file, strerror(errno));
        xfree(t->file);
        t->file = NULL; /* not ours: leave it */
        return rc;
    }
    if ((rc = lock_file(t, err, errlen)) < 0) return rc;
    /* ours alone now: what an earlier run left is dropped (blobs are placed again by score) */
    if (ftruncate(t->fd, 0) < 0 || ftruncate(t->fd, (off_t)t->capacity) < 0) {
        rc = -errno;
        set_err(err, errlen, "tier '%s': cannot size %s to %llu bytes: %s", t->name, t->file,
                (unsigned long long)t->capacity, strerror(errno));
        return rc;
    }
    falloc_init(&t->fa, t->capacity / BLOCK, 0);
    return 0;
}

/* Maps the RAM tier's region: capacity bytes of address space, pages populated on first
 * touch and not charged against the commit limit (MAP_NORESERVE). A capacity the address
 * space or the kernel's overcommit policy refuses is halved until it maps (tier_capacity()
 * then reports what was mapped); a capacity below one block maps nothing. */
static int open_ram(tier_t *t, uint64_t capacity, char *err, size_t errlen)
{
    uint64_t size = capacity / RAM_BLOCK * RAM_BLOCK;
    if (size > SIZE_MAX / 2) size = SIZE_MAX / 2 / RAM_BLOCK * RAM_BLOCK;
    t->block = RAM_BLOCK;
    t->page = (size_t)sysconf(_SC_PAGESIZE);
    while (size) {
        void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            t->base = p;
            break;
        }
        if (size <= t->page) {
            int rc = -errno;
            set_err(err, errlen, "tier '%s': cannot map %llu bytes: %s", t->name,
                    (unsigned long long)size, strerror(-rc));
            return rc;
        }
        size = size / 2 / RAM_BLOCK * RAM_BLOCK;
    }
    t->capacity = size;
    falloc_init(&t->fa, size / RAM_BLOCK, 1);
    return 0;
}

static int tier_open(tier_t **out, const tier_spec_t *s, double score, char *err, size_t errlen)
{
    tier_t *t = xcalloc(1, sizeof(*t));
    t->name = xstrdup(s->name);
    t->kind = s->kind;
    t->fd = -1;
    t->score = score;
    atomic_init(&t->delay_us, 0);
    *out = t;
    if (s->kind == TIER_RAM) {
        t->path = xstrdup("");
        return open_ram(t, s->capacity, err, errlen);
    }
    t->path = xstrdup(s->path);
    t->block = BLOCK;
    t->capacity = s->capacity / BLOCK * BLOCK;
    return open_file(t, err, errlen);
}

static int check_spec(const tier_spec_t *specs, int i, char *err, size_t errlen)
{
    const tier_spec_t *s = &specs[i];
    if (!s->name || !s->name[0] || strchr(s->name, '/')) {
        set_err(err, errlen, "tier %d: name '%s' must be non-empty and without '/'", i,
                s->name ? s->name : "");
    } else if (s->kind != TIER_RAM && s->kind != TIER_FILE) {
        set_err(err, errlen, "tier '%s': unknown kind %d", s->name, s->kind);
    } else if (s->kind == TIER_FILE && (!s->path || !s->path[0])) {
        set_err(err, errlen, "tier '%s': a file tier needs a path", s->name);
    } else if (!(s->score < 0) && !(s->score <= 1)) {
        set_err(err, errlen, "tier '%s': score %g is outside [0, 1]", s->name, s->score);
    } else {
        for (int j = 0; j < i; j++) {
            if (strcmp(specs[j].name, s->name) == 0) {
                set_err(err, errlen, "tier '%s': name used twice", s->name);
                return -EINVAL;
            }
        }
        return 0;
    }
    return -EINVAL;
}

/* Unset scores spread evenly: tier i of n gets 1 - i/(n-1). The last tier gets 0.0 so that
 * every score places somewhere; a lone tier is the last one. */
static double spread_score(double score, int i, int n)
{
    if (score >= 0) return score;
    return n == 1 ? 0.0 : 1.0 - (double)i / (n - 1);
}

int tier_set_open(tier_set_t *set, const tier_spec_t *specs, int n, char *err, size_t errlen)
{
    memset(set, 0, sizeof(*set));
    if (n < 1 || n > TIER_MAX) {
        set_err(err, errlen, "need 1 to %d tiers, got %d", TIER_MAX, n);
        return -EINVAL;
    }
    for (int i = 0; i < n; i++) {
        int rc = check_spec(specs, i, err, errlen);
        if (rc < 0) return rc;
    }
    for (int i = 0; i < n; i++) {
        int rc = tier_open(&set->t[i], &specs[i], spread_score(specs[i].score, i, n), err, errlen);
        set->n = i + 1;
        if (rc < 0) {
            tier_set_close(set);
            return rc;
        }
    }
    return 0;
}

void tier_set_close(tier_set_t *set)
{
    for (int i = 0; i < set->n; i++) tier_destroy(set->t[i]);
    memset(set, 0, sizeof(*set));
}

const char *tier_name(const tier_t *t)
{
    return t->name;
}

int tier_kind(const tier_t *t)
{
    return t->kind;
}

const char *tier_path(const tier_t *t)
{
    return t->path;
}

double tier_score(const tier_t *t)
{
    return t->score;
}

uint64_t tier_capacity(const tier_t *t)
{
    return t->capacity;
}

uint64_t tier_used(const tier_t *t)
{
    return t->used;
}

uint64_t tier_mem(const tier_t *t)
{
    return t->kind == TIER_RAM ? t->used : 0;
}

uint64_t tier_free(const tier_t *t)
{
    return t->capacity - t->used;
}

tier_stats_t *tier_stats(tier_t *t)
{
    return &t->stats;
}

int tier_set_pick(const tier_set_t *set, double s)
{
    assert(set->n > 0);
    for (int i = 0; i < set->n; i++)
        if (set->t[i]->score <= s) return i;
    return set->n - 1;
}

/* ---- allocation ------------------------------------------------------------------------- */

static void release_now(tier_t *t, uint64_t start, uint64_t nblk);

static uint64_t blocks_of(const tier_t *t, uint64_t len)
{
    return len / t->block + (len % t->block != 0);
}

/* Counts nblk blocks taken (add) or given back: used, and for a RAM tier used_memory. */
static void count_used(tier_t *t, uint64_t nblk, int add)
{
    uint64_t bytes = nblk * t->block;
    if (add)
        t->used += bytes;
    else
        t->used -= bytes;
    if (t->kind != TIER_RAM) return;
    if (add)
        alloc_count_add((size_t)bytes);
    else
        alloc_count_sub((size_t)bytes);
}

/* Reserves file blocks [start, start + nblk) on the file system. Returns 0 or -errno
 * (-ENOSPC: the disk is full); 0 without reserving on a file system that cannot, and for RAM. */
static int reserve(tier_t *t, uint64_t start, uint64_t nblk)
{
    if (t->kind != TIER_FILE || t->no_reserve || !nblk) return 0;
    if (fallocate(t->fd, FALLOC_FL_KEEP_SIZE, (off_t)(start * BLOCK), (off_t)(nblk * BLOCK)) == 0)
        return 0;
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
        t->no_reserve = 1;
        return 0;
    }
    return -errno;
}

/* Gives file blocks back to the file system (their bytes read as zeros afterwards). */
static void unreserve(tier_t *t, uint64_t start, uint64_t nblk)
{
    if (t->no_reserve || !nblk) return;
    (void)fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(start * BLOCK),
                    (off_t)(nblk * BLOCK));
}

/* Gives a RAM tier's free pages back to the OS: for every run on the dirty list, the whole
 * pages of its dirty span that lie inside the run (madvise MADV_DONTNEED: they read as zeros
 * and cost no memory until touched again); the spans are then clean. */
static void purge(tier_t *t)
{
    falloc_t *fa = &t->fa;
    uint64_t pg = t->page;
    for (run_t *r; (r = fa->dirty);) {
        uint64_t lo = r->dlo * RAM_BLOCK / pg * pg, hi = (r->dhi * RAM_BLOCK + pg - 1) / pg * pg;
        uint64_t a = (r->start * RAM_BLOCK + pg - 1) / pg * pg;
        uint64_t b = (r->start + r->nblk) * RAM_BLOCK / pg * pg;
        if (lo < a) lo = a;
        if (hi > b) hi = b;
        if (lo < hi) (void)madvise(t->base + lo, (size_t)(hi - lo), MADV_DONTNEED);
        set_dirty(fa, r, 0, 0);
    }
}

uint64_t tier_room(const tier_t *t)
{
    uint64_t own = tier_free(t);
    struct statvfs vfs;
    if (t->kind != TIER_FILE || t->no_reserve || fstatvfs(t->fd, &vfs) < 0) return own;
    uint64_t fs = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize / BLOCK * BLOCK;
    return fs < own ? fs : own;
}

/* An extent starting at block start of t. */
static tier_extent_t extent_at(const tier_t *t, int i, uint64_t start, uint64_t len)
{
    tier_extent_t e = {.tier = (uint8_t)i, .len = len};
    if (t->kind == TIER_RAM)
        e.at.mem = t->base + start * RAM_BLOCK;
    else
        e.at.off = start * BLOCK;
    return e;
}

/* The first block of an extent, checked against the tier: an extent that is not one of t's
 * (outside its region or file, or misaligned) is an assert. */
static uint64_t first_block(const tier_t *t, const tier_extent_t *e)
{
    uint64_t off = e->at.off;
    if (t->kind == TIER_RAM) {
        assert(e->at.mem >= t->base && e->at.mem < t->base + t->capacity);
        off = (uint64_t)(e->at.mem - t->base);
    }
    assert(off % t->block == 0);
    assert(off / t->block + blocks_of(t, e->len) <= t->fa.nblocks);
    return off / t->block;
}

int tier_alloc(tier_set_t *set, int i, uint64_t len, tier_extent_t *out, int max)
{
    tier_t *t = tier_at(set, i);
    falloc_t *fa = &t->fa;
    if (len == 0) return 0;
    if (len > TIER_EXTENT_MAX) return -ENOSPC;
    uint64_t need = blocks_of(t, len);
    if (need > fa->nfree) return -ENOSPC;
    if (!fits_in_runs(fa, need, max)) return -E2BIG;
    int k = 0;
    for (uint64_t rest = need; rest; k++) {
        assert(k < max);
        run_t *r = best_fit(fa, rest);
        uint64_t nblk = r ? rest : (r = largest(fa))->nblk;
        uint64_t bytes = nblk == rest ? len : nblk * t->block;
        out[k] = extent_at(t, i, take(fa, r, nblk), bytes);
        len -= bytes;
        rest -= nblk;
    }
    count_used(t, need, 1);
    for (int j = 0; j < k; j++) {
        if (reserve(t, first_block(t, &out[j]), blocks_of(t, out[j].len)) == 0) continue;
        for (int m = 0; m < k; m++)
            release_now(t, first_block(t, &out[m]), blocks_of(t, out[m].len));
        return -ENOSPC; /* the file system is full: nothing stays allocated */
    }
    return k;
}

/* Frees a run of blocks now: back to the allocator, and to the file system (a file tier) or,
 * once enough freed pages gathered, to the OS (RAM). */
static void release_now(tier_t *t, uint64_t start, uint64_t nblk)
{
    if (t->kind == TIER_FILE) unreserve(t, start, nblk);
    release(&t->fa, start, nblk);
    count_used(t, nblk, 0);
    if (t->kind == TIER_RAM && t->fa.ndirty * RAM_BLOCK >= DIRTY_MAX) purge(t);
}

/* Frees a run of blocks, or keeps it aside while frees are held. */
static void release_blocks(tier_t *t, uint64_t start, uint64_t nblk)
{
    if (!nblk) return;
    if (t->hold) {
        if (t->nheld + 2 > t->held_cap) {
            t->held_cap = t->held_cap ? 2 * t->held_cap : 64;
            t->held = xrealloc(t->held, t->held_cap * sizeof(*t->held));
        }
        t->held[t->nheld++] = start;
        t->held[t->nheld++] = nblk;
        return;
    }
    release_now(t, start, nblk);
}

void tier_set_hold_frees(tier_set_t *set, int on)
{
    for (int i = 0; i < set->n; i++) {
        tier_t *t = set->t[i];
        if (t->kind != TIER_FILE) continue; /* a forked child sees RAM as it was (copy on write) */
        t->hold = on;
        if (on) continue;
        for (size_t j = 0; j < t->nheld; j += 2) release_blocks(t, t->held[j], t->held[j + 1]);
        t->nheld = 0;
    }
}

void tier_free_extent(tier_set_t *set, const tier_extent_t *e)
{
    tier_t *t = tier_at(set, e->tier);
    release_blocks(t, first_block(t, e), blocks_of(t, e->len));
}

void tier_shrink_extent(tier_set_t *set, tier_extent_t *e, uint64_t new_len)
{
    tier_t *t = tier_at(set, e->tier);
    assert(new_len < e->len);
    uint64_t have = blocks_of(t, e->len), keep = blocks_of(t, new_len);
    if (keep < have) release_blocks(t, first_block(t, e) + keep, have - keep);
    e->len = new_len;
}

int tier_grow_extent(tier_set_t *set, tier_extent_t *e, uint64_t extra)
{
    tier_t *t = tier_at(set, e->tier);
    if (extra == 0) return 0;
    if (extra > TIER_EXTENT_MAX - e->len) return -ENOSPC;
    uint64_t new_len = e->len + extra;
    uint64_t have = blocks_of(t, e->len), need = blocks_of(t, new_len);
    if (need > have) {
        uint64_t from = first_block(t, e) + have;
        run_t *r = run_holding(&t->fa, from);
        if (!r || r->start + r->nblk < from + (need - have)) return -ENOSPC;
        take_range(&t->fa, r, from, need - have);
        count_used(t, need - have, 1);
        if (reserve(t, from, need - have) < 0) {
            release_now(t, from, need - have);
            return -ENOSPC;
        }
    }
    e->len = new_len;
    return 0;
}

/* ---- data access (any thread for file tiers) -------------------------------------------- */

static char zeros[ZERO_CHUNK]; /* never written */

static void io_delay(const tier_t *t)
{
    uint64_t us = atomic_load_explicit(&((tier_t *)t)->delay_us, memory_order_relaxed);
    if (!us) return;
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) continue;
}

static int pread_all(int fd, char *dst, uint64_t len, uint64_t pos)
{
    while (len) {
        ssize_t n = pread(fd, dst, len > IO_CHUNK ? IO_CHUNK : len, (off_t)pos);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return -EIO; /* the file was cut short behind our back */
        dst += n;
        pos += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return 0;
}

static int pwrite_all(int fd, const char *src, uint64_t len, uint64_t pos)
{
    while (len) {
        ssize_t n = pwrite(fd, src, len > IO_CHUNK ? IO_CHUNK : len, (off_t)pos);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return -EIO;
        src += n;
        pos += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return 0;
}

/* The tier of e, with [off, off + len) checked against the extent and the extent against the
 * tier: a violation is a caller bug. */
static const tier_t *io_tier(const tier_set_t *set, const tier_extent_t *e, uint64_t off,
                             uint64_t len)
{
    const tier_t *t = tier_at(set, e->tier);
    assert(off <= e->len && len <= e->len - off);
    assert(t->kind == TIER_RAM || e->at.off + e->len <= t->capacity);
    return t;
}

int tier_pread(const tier_set_t *set, const tier_extent_t *e, uint64_t off, void *dst, uint64_t len)
{
    const tier_t *t = io_tier(set, e, off, len);
    if (t->kind == TIER_RAM) {
        if (len) memcpy(dst, e->at.mem + off, (size_t)len);
        return 0;
    }
    io_delay(t);
    return pread_all(t->fd, dst, len, e->at.off + off);
}

int tier_pwrite(const tier_set_t *set, const tier_extent_t *e, uint64_t off, const void *src,
                uint64_t len)
{
    const tier_t *t = io_tier(set, e, off, len);
    if (t->kind == TIER_RAM) {
        if (len) memcpy(e->at.mem + off, src, (size_t)len);
        return 0;
    }
    io_delay(t);
    return pwrite_all(t->fd, src, len, e->at.off + off);
}

static int write_zeros(int fd, uint64_t pos, uint64_t len)
{
    while (len) {
        uint64_t n = len > ZERO_CHUNK ? ZERO_CHUNK : len;
        int rc = pwrite_all(fd, zeros, n, pos);
        if (rc < 0) return rc;
        pos += n;
        len -= n;
    }
    return 0;
}

/* Zeroes file bytes [pos, pos + len): over the whole blocks of a large range the file system
 * zeroes in place (FALLOC_FL_ZERO_RANGE keeps the blocks reserved), or, where it cannot (tmpfs),
 * punches a hole and reserves the blocks again (if the disk filled up meanwhile the hole stays:
 * it reads as zeros, and a later write there may meet ENOSPC); the ragged ends, and file
 * systems with neither, get zeros written. The blocks belong to the extent, so nobody else's
 * bytes are touched. */
static int file_zero(int fd, uint64_t pos, uint64_t len)
{
    uint64_t a = (pos + BLOCK - 1) / BLOCK * BLOCK, b = (pos + len) / BLOCK * BLOCK;
    if (len < PUNCH_MIN || b < a + PUNCH_MIN) return write_zeros(fd, pos, len);
    if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)a, (off_t)(b - a)) < 0) {
        if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a, (off_t)(b - a)) < 0)
            return write_zeros(fd, pos, len);
        (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)a, (off_t)(b - a));
    }
    int rc = write_zeros(fd, pos, a - pos);
    return rc < 0 ? rc : write_zeros(fd, b, pos + len - b);
}

int tier_zero(const tier_set_t *set, const tier_extent_t *e, uint64_t off, uint64_t len)
{
    const tier_t *t = io_tier(set, e, off, len);
    if (t->kind == TIER_RAM) {
        if (len) memset(e->at.mem + off, 0, (size_t)len);
        return 0;
    }
    io_delay(t);
    return file_zero(t->fd, e->at.off + off, len);
}

void tier_count_io(tier_set_t *set, int i, int is_write, uint64_t bytes)
{
    tier_stats_t *s = &tier_at(set, i)->stats;
    if (is_write) {
        s->writes++;
        s->bytes_written += bytes;
    } else {
        s->reads++;
        s->bytes_read += bytes;
    }
}

void tier_set_delay(tier_set_t *set, int i, uint64_t delay_us)
{
    atomic_store_explicit(&tier_at(set, i)->delay_us, delay_us, memory_order_relaxed);
}

/* ---- consistency check (tests) ---------------------------------------------------------- */

typedef struct walk {
    uint64_t count, sum, end; /* runs seen, their blocks, end of the previous run */
    uint64_t spans;           /* runs with a dirty span */
    const avl_t *prev;        /* previous node in order */
    const char *bad;
} walk_t;

/* Checks AVL heights and balance and that in-order is strictly increasing by cmp; returns the
 * height. Under by_off it also checks each run's bounds and its distance from the last. */
static int check_tree(const avl_t *n, avl_cmp_fn *cmp, const falloc_t *fa, walk_t *w)
{
    if (!n || w->bad) return 0;
    int hl = check_tree(n->l, cmp, fa, w);
    if (w->prev && cmp(w->prev, n) >= 0) w->bad = "tree out of order";
    w->prev = n;
    w->count++;
    if (cmp == cmp_off) {
        const run_t *r = RUN_OFF(n);
        if (r->nblk == 0) w->bad = "empty free run";
        if (r->start + r->nblk > fa->nblocks) w->bad = "free run past the end of the tier";
        if (w->count > 1 && r->start <= w->end) w->bad = "free runs overlap or touch";
        w->end = r->start + r->nblk;
        w->sum += r->nblk;
        w->spans += r->dlo < r->dhi;
    }
    int hr = check_tree(n->r, cmp, fa, w);
    int h = 1 + (hl > hr ? hl : hr);
    if (n->h != h) w->bad = "stale AVL height";
    if (hl - hr > 1 || hr - hl > 1) w->bad = "AVL tree out of balance";
    return h;
}

/* The dirty list against the runs: every run with a span is on it once, spans lie inside
 * their runs (file tiers keep none) and sum to ndirty. */
static const char *check_dirty(const falloc_t *fa, uint64_t runs_with_span)
{
    uint64_t n = 0, sum = 0;
    for (const run_t *r = fa->dirty; r; r = r->dnext) {
        if (r->dlo >= r->dhi) return "a run on the dirty list has no span";
        if (r->dlo < r->start || r->dhi > r->start + r->nblk) return "a dirty span leaves its run";
        if (r->dnext && r->dnext->dprev != r) return "dirty list links broken";
        if (++n > fa->nruns) return "dirty list loops";
        sum += r->dhi - r->dlo;
    }
    if (n != runs_with_span) return "dirty list differs from the runs with a span";
    if (sum != fa->ndirty) return "ndirty differs from the sum of the spans";
    if (!fa->track_dirty && n) return "a file tier tracks dirty spans";
    return NULL;
}

static const char *check_tier(const tier_t *t)
{
    const falloc_t *fa = &t->fa;
    walk_t w = {0};
    check_tree(fa->by_off, cmp_off, fa, &w);
    if (w.bad) return w.bad;
    uint64_t count = w.count, spans = w.spans;
    if (count != fa->nruns) return "run count differs from the offset tree";
    if (w.sum != fa->nfree) return "free blocks differ from the sum of the runs";
    w = (walk_t){0};
    check_tree(fa->by_len, cmp_len, fa, &w);
    if (w.bad) return w.bad;
    if (w.count != count) return "the two trees hold different runs";
    if (t->capacity != fa->nblocks * t->block) return "capacity is not the tier's blocks";
    if (t->used != (fa->nblocks - fa->nfree) * t->block)
        return "used differs from the blocks taken";
    return check_dirty(fa, spans);
}

/* Module-private (tests): NULL when tier i's bookkeeping is consistent, else what is wrong. */
const char *tier__check(const tier_set_t *set, int i);
const char *tier__check(const tier_set_t *set, int i)
{
    tier_t *t = tier_at(set, i);
    return check_tier(t);
}
