/* test_tag.c - storage/t_tag.c: blobs as extent lists on tiers, placement, demotion, OOM, and the
 * concurrency rules between in-flight plans and new operations.
 *
 * Every test opens its own tier set (small RAM and file tiers in a fresh directory under /tmp)
 * and runs plans inline with tag_plan_run + tag_plan_finish, as the server does without a loop.
 * The model tests drive random TPUT / TGET / TTRUNCATE / TDEL / REORG against byte arrays and
 * check every byte read and the tier accounting after every step. */
#define _GNU_SOURCE
#include "storage/t_tag.h"

#include "common/alloc.h"
#include "storage/object.h"
#include "tiers/tier.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Module-private in tier.c: NULL when tier i's bookkeeping is consistent, else what is wrong. */
const char *tier__check(const tier_set_t *set, int i);

#define KB 1024ull
/* A RAM tier's block, and the bytes of it that n bytes use */
#define RAM_BLOCK ((uint64_t)TIER_RAM_BLOCK)
#define RAM_BYTES(n) (((n) + RAM_BLOCK - 1) / RAM_BLOCK * RAM_BLOCK)
#define S(lit) lit, sizeof(lit) - 1

static char dir[64];
static char small_dir[96]; /* a tmpfs mounted under dir by the tests that need one, or "" */
static tier_set_t set;
static int set_open;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(p);
}

static void setup(void)
{
    strcpy(dir, "/tmp/cte-tag-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    srand(1234);
}

static void unmount_small(void);

static void teardown(void)
{
    unmount_small(); /* a test that mounted a small file system and failed half way */
    if (set_open) tier_set_close(&set);
    set_open = 0;
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(tag_store, .init = setup, .fini = teardown, .timeout = 20);
TestSuite(tag_model, .init = setup, .fini = teardown, .timeout = 20);
TestSuite(tag_place, .init = setup, .fini = teardown, .timeout = 20);
TestSuite(tag_busy, .init = setup, .fini = teardown, .timeout = 20);

/* Opens n tiers from "name:kind:capacity:score" like specs (kind r or f; score < 0: unset). */
typedef struct tspec {
    const char *name;
    int kind;
    uint64_t cap;
    double score;
} tspec_t;

static void open_tiers(const tspec_t *ts, int n, uint64_t max_blob)
{
    tier_spec_t specs[TIER_MAX];
    for (int i = 0; i < n; i++)
        specs[i] = (tier_spec_t){ts[i].name, ts[i].kind, ts[i].cap, dir, ts[i].score};
    char err[256] = "";
    int rc = tier_set_open(&set, specs, n, err, sizeof(err));
    cr_assert_eq(rc, 0, "tier_set_open: %s", err);
    set_open = 1;
    tag_store.tiers = &set;
    tag_store.max_blob_size = max_blob;
    tag_store.on_blob_change = NULL;
    tag_store.ud = NULL;
}

static int tier_index(const char *name)
{
    for (int i = 0; i < set.n; i++)
        if (strcmp(tier_name(set.t[i]), name) == 0) return i;
    cr_assert_fail("no tier %s", name);
    return -1;
}

/* ---- running plans inline ---- */

static void run_plan(tag_plan_t *p)
{
    int st = tag_plan_run(p);
    cr_assert_eq(st, 0, "tag_plan_run: %d", st);
    tag_plan_finish(p, st, NULL, NULL);
}

static int demotions; /* plans drained by put() since the counter was reset */

static int drain_pending(void)
{
    int n = 0;
    for (tag_plan_t *p; (p = tag_pending_pop()); n++) run_plan(p);
    return n;
}

/* TPUT to completion: retries after NOSPACE (running the demotions), runs the write plan.
 * Returns ST_OK, ST_OOM or ST_TOO_BIG. */
static int put(tag_obj_t *t, const char *name, uint64_t off, const char *data, size_t len,
               int has_score, double score, uint64_t *size)
{
    uint64_t sz = 0;
    for (int tries = 0; tries < 50; tries++) {
        tag_plan_t *p = NULL;
        int rc = tag_put(
            t, &(tag_write_t){name, strlen(name), off, data, len, has_score, score, 1000 + tries},
            &sz, &p);
        if (rc == ST_NOSPACE) {
            cr_assert_null(p);
            int n = drain_pending();
            cr_assert_gt(n, 0, "NOSPACE but no demotion plan queued");
            demotions += n;
            continue;
        }
        cr_assert_neq(rc, ST_BUSY, "nothing is in flight, yet the blob is busy");
        if (rc == ST_PENDING) {
            cr_assert_not_null(p);
            run_plan(p);
            rc = ST_OK;
        } else {
            cr_assert_null(p);
        }
        drain_pending(); /* a TPUT with a score may move the blob afterwards */
        if (size) *size = sz;
        return rc;
    }
    cr_assert_fail("TPUT %s kept answering NOSPACE", name);
    return -99;
}

static int put_s(tag_obj_t *t, const char *name, uint64_t off, const char *s)
{
    return put(t, name, off, s, strlen(s), 0, 0, NULL);
}

/* TGET to completion: returns ST_OK / ST_MISSING; *out (xfree) and *len. */
static int get(tag_obj_t *t, const char *name, uint64_t off, uint64_t count, char **out,
               uint64_t *len)
{
    tag_plan_t *p = NULL;
    int rc = tag_get(t, name, strlen(name), off, count, 2000, out, len, &p);
    if (rc == ST_PENDING) {
        cr_assert_not_null(p);
        run_plan(p);
        rc = ST_OK;
    }
    return rc;
}

/* The whole blob as a NUL-terminated malloc'd string (tests with text contents). */
static char *get_all(tag_obj_t *t, const char *name)
{
    char *buf;
    uint64_t len;
    int rc = get(t, name, 0, UINT64_MAX, &buf, &len);
    cr_assert_eq(rc, ST_OK, "TGET %s: %d", name, rc);
    char *s = malloc(len + 1);
    memcpy(s, buf, len);
    s[len] = '\0';
    xfree(buf);
    return s;
}

static int truncate_to(tag_obj_t *t, const char *name, uint64_t size)
{
    for (int tries = 0; tries < 50; tries++) {
        tag_plan_t *p = NULL;
        int rc = tag_truncate(t, name, strlen(name), size, 3000, &p);
        if (rc == ST_NOSPACE) {
            cr_assert_gt(drain_pending(), 0);
            continue;
        }
        if (rc == ST_PENDING) {
            run_plan(p);
            rc = ST_OK;
        }
        return rc;
    }
    cr_assert_fail("TTRUNCATE kept answering NOSPACE");
    return -99;
}

static int reorg(tag_obj_t *t, const char *name, double score)
{
    tag_plan_t *p = NULL;
    int rc = tag_reorg(t, name, strlen(name), score, &p);
    if (rc == ST_PENDING) {
        cr_assert_not_null(p);
        run_plan(p);
        rc = ST_OK;
    }
    return rc;
}

static blob_info_t info_of(tag_obj_t *t, const char *name)
{
    blob_info_t in;
    blob_t *b = tag_blob(t, name, strlen(name));
    cr_assert_not_null(b, "blob %s missing", name);
    blob_get_info(b, &in);
    return in;
}

static const char *tier_of(tag_obj_t *t, const char *name)
{
    blob_info_t in = info_of(t, name);
    return in.tier < 0 ? "(none)" : tier_name(set.t[in.tier]);
}

static uint64_t used(const char *tier)
{
    return tier_used(set.t[tier_index(tier)]);
}

static void fill(char *buf, size_t len, int seed)
{
    for (size_t i = 0; i < len; i++) buf[i] = (char)(seed * 31 + i * 7 + (i >> 8));
}

static void check_tiers_consistent(void)
{
    for (int i = 0; i < set.n; i++) {
        const char *why = tier__check(&set, i);
        cr_assert_null(why, "tier %s: %s", tier_name(set.t[i]), why ? why : "");
    }
}

/* ---- basic operations ---- */

Test(tag_store, put_get_size_and_gap_reads_as_zeros)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 64 * KB, -1}, {"disk", TIER_FILE, 256 * KB, -1}};
    open_tiers(ts, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    uint64_t size;
    cr_assert_eq(put(t, "b", 0, S("hello"), 0, 0, &size), ST_OK);
    cr_assert_eq(size, 5);
    cr_assert_eq(put(t, "b", 10, S("xy"), 0, 0, &size), ST_OK);
    cr_assert_eq(size, 12);
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert_eq(len, 12);
    cr_assert(memcmp(buf, "hello\0\0\0\0\0xy", 12) == 0);
    xfree(buf);
    /* partial read, read past the end, zero count */
    cr_assert_eq(get(t, "b", 3, 4, &buf, &len), ST_OK);
    cr_assert_eq(len, 4);
    cr_assert(memcmp(buf, "lo\0\0", 4) == 0);
    xfree(buf);
    cr_assert_eq(get(t, "b", 100, 4, &buf, &len), ST_OK);
    cr_assert_eq(len, 0);
    xfree(buf);
    cr_assert_eq(get(t, "b", 2, 0, &buf, &len), ST_OK);
    cr_assert_eq(len, 0);
    xfree(buf);
    cr_assert_eq(get(t, "nope", 0, UINT64_MAX, &buf, &len), ST_MISSING);
    /* an empty write creates the blob and writes nothing */
    cr_assert_eq(put(t, "empty", 0, "", 0, 0, 0, &size), ST_OK);
    cr_assert_eq(size, 0);
    cr_assert_eq(tag_len(t), 2);
    cr_assert_eq(info_of(t, "empty").size, 0);
    cr_assert_eq(info_of(t, "empty").tier, -1);
    /* an empty write past the end does not grow the blob */
    cr_assert_eq(put(t, "b", 100, "", 0, 0, 0, &size), ST_OK);
    cr_assert_eq(size, 12, "an empty TPUT at offset 100 grew the blob to %llu",
                 (unsigned long long)size);
    obj_free((obj_t *)t);
    cr_assert_eq(used("ram"), 0);
    cr_assert_eq(used("disk"), 0);
}

Test(tag_store, new_blob_gets_score_one_and_metadata)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 64 * KB, -1}, {"disk", TIER_FILE, 256 * KB, -1}};
    open_tiers(ts, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    tag_plan_t *p;
    uint64_t size;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("abc"), 0, 0, 111}, &size, &p), ST_OK);
    blob_info_t in = info_of(t, "b");
    cr_assert_eq(in.score, 1.0);
    cr_assert_eq(in.ctime, 111);
    cr_assert_eq(in.mtime, 111);
    cr_assert_eq(in.writes, 1);
    cr_assert_eq(in.reads, 0);
    cr_assert_str_eq(tier_name(set.t[in.tier]), "ram");
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 1, S("z"), 0, 0, 222}, &size, &p), ST_OK);
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 333, &buf, &len, &p), ST_OK);
    xfree(buf);
    in = info_of(t, "b");
    cr_assert_eq(in.ctime, 111);
    cr_assert_eq(in.mtime, 222);
    cr_assert_eq(in.atime, 333);
    cr_assert_eq(in.writes, 2);
    cr_assert_eq(in.reads, 1);
    obj_free((obj_t *)t);
}

Test(tag_store, too_big_is_refused_and_changes_nothing)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 64 * KB, -1}, {"disk", TIER_FILE, 256 * KB, -1}};
    open_tiers(ts, 2, 1000);
    tag_obj_t *t = tag_new();
    tag_plan_t *p;
    uint64_t size;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 999, S("ab"), 0, 0, 1}, &size, &p), ST_TOO_BIG);
    cr_assert_eq(tag_len(t), 0);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 998, S("ab"), 0, 0, 1}, &size, &p), ST_OK);
    cr_assert_eq(size, 1000);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), UINT64_MAX - 1, S("ab"), 0, 0, 1}, &size, &p),
                 ST_TOO_BIG);
    cr_assert_eq(tag_truncate(t, S("b"), 1001, 1, &p), ST_TOO_BIG);
    cr_assert_eq(info_of(t, "b").size, 1000);
    obj_free((obj_t *)t);
}

Test(tag_store, truncate_shrinks_grows_with_zeros_and_creates)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 64 * KB, -1}, {"disk", TIER_FILE, 256 * KB, -1}};
    open_tiers(ts, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    for (int tier = 0; tier < 2; tier++) {
        const char *name = tier ? "f" : "r";
        double score = tier ? 0.0 : 1.0;
        char data[9000];
        fill(data, sizeof(data), 3);
        cr_assert_eq(put(t, name, 0, data, sizeof(data), 1, score, NULL), ST_OK);
        cr_assert_str_eq(tier_of(t, name), tier ? "disk" : "ram");
        cr_assert_eq(truncate_to(t, name, 5000), ST_OK);
        cr_assert_eq(truncate_to(t, name, 7000), ST_OK); /* the tail must read as zeros */
        char *buf;
        uint64_t len;
        cr_assert_eq(get(t, name, 0, UINT64_MAX, &buf, &len), ST_OK);
        cr_assert_eq(len, 7000);
        cr_assert(memcmp(buf, data, 5000) == 0);
        for (int i = 5000; i < 7000; i++)
            cr_assert_eq(buf[i], 0, "%s: byte %d after shrink+grow is %d, not 0", name, i, buf[i]);
        xfree(buf);
        cr_assert_eq(truncate_to(t, name, 0), ST_OK);
        cr_assert_eq(info_of(t, name).size, 0);
    }
    cr_assert_eq(used("ram"), 0);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(truncate_to(t, "new", 300), ST_OK);
    cr_assert_eq(info_of(t, "new").size, 300);
    char *s = get_all(t, "new");
    for (int i = 0; i < 300; i++) cr_assert_eq(s[i], 0);
    free(s);
    obj_free((obj_t *)t);
    check_tiers_consistent();
}

Test(tag_store, delete_frees_space_at_once_and_counts_blobs)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 64 * KB, -1}, {"disk", TIER_FILE, 256 * KB, -1}};
    open_tiers(ts, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char data[5000];
    fill(data, sizeof(data), 1);
    cr_assert_eq(put(t, "a", 0, data, sizeof(data), 0, 0, NULL), ST_OK);
    cr_assert_eq(put(t, "b", 0, data, sizeof(data), 1, 0.0, NULL), ST_OK);
    cr_assert_eq(used("ram"), RAM_BYTES(5000));
    cr_assert_eq(used("disk"), 8192);
    cr_assert_eq(tier_stats(set.t[0])->blobs, 1);
    cr_assert_eq(tier_stats(set.t[1])->blobs, 1);
    cr_assert_eq(tag_del(t, S("a")), 1);
    cr_assert_eq(tag_del(t, S("a")), 0);
    cr_assert_eq(used("ram"), 0);
    cr_assert_eq(tier_stats(set.t[0])->blobs, 0);
    cr_assert_eq(tag_del(t, S("b")), 1);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(tier_stats(set.t[1])->blobs, 0);
    cr_assert_eq(tag_len(t), 0);
    obj_free((obj_t *)t);
}

/* ---- the model ---- */

#define NB 6

typedef struct mblob {
    int exists;
    uint8_t *data;
    uint64_t size;
} mblob_t;

static const char *bname[NB] = {"b0", "b1", "b2", "b3", "b4", "b5"};

static void model_check_blob(tag_obj_t *t, mblob_t *m, int i, int step)
{
    blob_t *b = tag_blob(t, bname[i], 2);
    if (!m[i].exists) {
        cr_assert_null(b, "step %d: %s exists but the model says deleted", step, bname[i]);
        return;
    }
    cr_assert_not_null(b, "step %d: %s missing", step, bname[i]);
    blob_info_t in;
    blob_get_info(b, &in);
    cr_assert_eq(in.size, m[i].size, "step %d: %s size %llu, model %llu", step, bname[i],
                 (unsigned long long)in.size, (unsigned long long)m[i].size);
}

/* Tier accounting against the model: per tier, used lies between the bytes of blobs wholly on
 * it and the bytes of blobs touching it (rounded up to blocks for file tiers); blob counters
 * equal the blobs touching each tier; the sum of used covers every byte; exact when
 * exact_total (RAM-only sets). */
static void model_check_accounting(tag_obj_t *t, mblob_t *m, int step, int exact_total)
{
    uint64_t total = 0, sum_used = 0;
    uint64_t lo[TIER_MAX] = {0}, hi[TIER_MAX] = {0}, nblobs[TIER_MAX] = {0};
    for (int i = 0; i < NB; i++) {
        if (!m[i].exists) continue;
        total += m[i].size;
        blob_info_t in = info_of(t, bname[i]);
        if (in.size == 0) {
            cr_assert_eq(in.ntiers, 0, "step %d: empty %s holds extents on %d tiers", step,
                         bname[i], in.ntiers);
        }
        for (int k = 0; k < in.ntiers; k++) {
            int ti = in.tiers[k];
            uint64_t round = tier_kind(set.t[ti]) == TIER_FILE ? 4096 * 8 : RAM_BLOCK * 8;
            hi[ti] += in.size + round;
            nblobs[ti]++;
            if (in.ntiers == 1) lo[ti] += in.size;
        }
    }
    for (int i = 0; i < set.n; i++) {
        uint64_t u = tier_used(set.t[i]);
        sum_used += u;
        cr_assert_leq(u, tier_capacity(set.t[i]));
        cr_assert_geq(u, lo[i], "step %d: tier %s used %llu < %llu bytes of blobs on it", step,
                      tier_name(set.t[i]), (unsigned long long)u, (unsigned long long)lo[i]);
        cr_assert_leq(u, hi[i], "step %d: tier %s used %llu > %llu (leak?)", step,
                      tier_name(set.t[i]), (unsigned long long)u, (unsigned long long)hi[i]);
        cr_assert_eq(tier_stats(set.t[i])->blobs, nblobs[i],
                     "step %d: tier %s counts %llu blobs, %llu touch it", step, tier_name(set.t[i]),
                     (unsigned long long)tier_stats(set.t[i])->blobs,
                     (unsigned long long)nblobs[i]);
        const char *why = tier__check(&set, i);
        cr_assert_null(why, "step %d: tier %s: %s", step, tier_name(set.t[i]), why ? why : "");
    }
    cr_assert_geq(sum_used, total, "step %d: tiers hold %llu bytes for %llu blob bytes", step,
                  (unsigned long long)sum_used, (unsigned long long)total);
    if (exact_total) /* RAM: each extent's bytes rounded up to 16-byte blocks, nothing more */
        cr_assert_leq(sum_used, total + RAM_BLOCK * 8 * NB,
                      "step %d: RAM tiers hold %llu bytes for %llu blob bytes", step,
                      (unsigned long long)sum_used, (unsigned long long)total);
}

static void model_read(tag_obj_t *t, mblob_t *m, int i, uint64_t off, uint64_t count, int step)
{
    char *buf = NULL;
    uint64_t len = 0;
    int rc = get(t, bname[i], off, count, &buf, &len);
    if (!m[i].exists) {
        cr_assert_eq(rc, ST_MISSING, "step %d: TGET of deleted %s: %d", step, bname[i], rc);
        return;
    }
    cr_assert_eq(rc, ST_OK, "step %d: TGET %s: %d", step, bname[i], rc);
    uint64_t want = off >= m[i].size ? 0 : m[i].size - off;
    if (count < want) want = count;
    cr_assert_eq(len, want, "step %d: TGET %s %llu %llu: %llu bytes, want %llu", step, bname[i],
                 (unsigned long long)off, (unsigned long long)count, (unsigned long long)len,
                 (unsigned long long)want);
    for (uint64_t k = 0; k < len; k++) {
        if ((uint8_t)buf[k] != m[i].data[off + k])
            cr_assert_fail("step %d: TGET %s byte %llu is %u, model %u", step, bname[i],
                           (unsigned long long)(off + k), (uint8_t)buf[k], m[i].data[off + k]);
    }
    xfree(buf);
}

static void model_resize(mblob_t *mb, uint64_t size)
{
    mb->data = realloc(mb->data, size ? size : 1);
    if (size > mb->size) memset(mb->data + mb->size, 0, size - mb->size);
    mb->size = size;
}

/* TAG_MODEL_SEED=n in the environment replaces the fixed seeds (to explore more runs). */
static unsigned model_seed(unsigned seed)
{
    const char *e = getenv("TAG_MODEL_SEED");
    return e && *e ? (unsigned)strtoul(e, NULL, 10) * 7919u + seed : seed;
}

static void run_model(int steps, uint64_t maxlen, int exact_total, unsigned seed)
{
    seed = model_seed(seed);
    cr_log_info("model seed %u", seed);
    srand(seed);
    tag_obj_t *t = tag_new();
    mblob_t m[NB] = {{0}};
    uint8_t *data = malloc(maxlen + 1);
    int ooms = 0, puts = 0, moves = 0;
    for (int step = 0; step < steps; step++) {
        int i = rand() % NB, op = rand() % 100;
        mblob_t *mb = &m[i];
        if (op < 35) { /* TPUT */
            uint64_t off = mb->exists ? (uint64_t)(rand() % (int)(mb->size + maxlen / 4 + 1))
                                      : (uint64_t)(rand() % (int)(maxlen / 4 + 1));
            uint64_t len = (uint64_t)(rand() % (int)maxlen);
            if (rand() % 8 == 0) len = 0;
            for (uint64_t k = 0; k < len; k++) data[k] = (uint8_t)rand();
            int has_score = rand() % 3 == 0;
            double score = (rand() % 11) / 10.0;
            uint64_t size = 0;
            uint64_t before[TIER_MAX];
            for (int k = 0; k < set.n; k++) before[k] = tier_used(set.t[k]);
            demotions = 0;
            int rc = put(t, bname[i], off, (char *)data, len, has_score, score, &size);
            if (rc == ST_OOM) {
                ooms++;
                /* nothing changed: the use of each tier, unless demotions ran first (with
                 * RAM tiers only they run at once, so compare the sum then) */
                uint64_t sb = 0, sa = 0;
                for (int k = 0; k < set.n; k++) {
                    sb += before[k];
                    sa += tier_used(set.t[k]);
                    if (!demotions && !exact_total)
                        cr_assert_eq(tier_used(set.t[k]), before[k],
                                     "step %d: OOM TPUT changed tier %s's use", step,
                                     tier_name(set.t[k]));
                }
                if (exact_total) cr_assert_eq(sa, sb, "step %d: OOM TPUT changed the use", step);
            } else {
                cr_assert_eq(rc, ST_OK, "step %d: TPUT: %d", step, rc);
                puts++;
                if (!mb->exists) {
                    mb->exists = 1;
                    mb->size = 0;
                }
                /* an empty data writes nothing: no growth to off */
                if (len && off + len > mb->size) model_resize(mb, off + len);
                if (len) memcpy(mb->data + off, data, len);
                cr_assert_eq(size, mb->size, "step %d: TPUT replied %llu, model %llu", step,
                             (unsigned long long)size, (unsigned long long)mb->size);
                if (has_score) cr_assert_eq(info_of(t, bname[i]).score, score);
            }
        } else if (op < 65) { /* TGET */
            uint64_t size = mb->exists ? mb->size : 0;
            uint64_t off = (uint64_t)(rand() % (int)(size + 64));
            uint64_t count = rand() % 4 == 0 ? UINT64_MAX : (uint64_t)(rand() % (int)(size + 64));
            model_read(t, m, i, off, count, step);
        } else if (op < 78) { /* TTRUNCATE */
            uint64_t size = (uint64_t)(rand() % (int)(mb->exists ? mb->size * 2 + 64 : maxlen));
            int rc = truncate_to(t, bname[i], size);
            if (rc == ST_OOM) {
                ooms++;
            } else {
                cr_assert_eq(rc, ST_OK, "step %d: TTRUNCATE: %d", step, rc);
                if (!mb->exists) {
                    mb->exists = 1;
                    mb->size = 0;
                }
                model_resize(mb, size);
            }
        } else if (op < 86) { /* TDEL */
            cr_assert_eq(tag_del(t, bname[i], 2), mb->exists, "step %d", step);
            mb->exists = 0;
            free(mb->data);
            mb->data = NULL;
            mb->size = 0;
        } else { /* REORG */
            double score = (rand() % 11) / 10.0;
            int rc = reorg(t, bname[i], score);
            if (!mb->exists) {
                cr_assert_eq(rc, ST_MISSING, "step %d", step);
            } else {
                cr_assert(rc == ST_OK || rc == ST_OOM, "step %d: REORG: %d", step, rc);
                cr_assert_eq(info_of(t, bname[i]).score, score, "step %d: REORG score", step);
                if (rc == ST_OK && mb->size) {
                    blob_info_t in = info_of(t, bname[i]);
                    int pick = tier_set_pick(&set, score);
                    if (tier_used(set.t[pick]) + mb->size <= tier_capacity(set.t[pick]) / 2 &&
                        in.ntiers == 1)
                        cr_assert_eq(in.tier, pick,
                                     "step %d: REORG %g left %s on %s with room on %s", step, score,
                                     bname[i], tier_name(set.t[in.tier]), tier_name(set.t[pick]));
                }
                moves++;
            }
        }
        cr_assert_null(tag_pending_pop(), "step %d: a plan was left queued", step);
        model_check_blob(t, m, i, step);
        model_check_accounting(t, m, step, exact_total);
        if (step % 16 == 0)
            for (int k = 0; k < NB; k++)
                if (m[k].exists) model_read(t, m, k, 0, UINT64_MAX, step);
    }
    for (int k = 0; k < NB; k++) {
        model_read(t, m, k, 0, UINT64_MAX, steps);
        free(m[k].data);
    }
    cr_log_info("model: %d puts, %d OOMs, %d reorgs", puts, ooms, moves);
    cr_assert_gt(puts, steps / 5);
    obj_free((obj_t *)t);
    for (int k = 0; k < set.n; k++) {
        cr_assert_eq(tier_used(set.t[k]), 0, "tier %s leaks %llu bytes", tier_name(set.t[k]),
                     (unsigned long long)tier_used(set.t[k]));
        cr_assert_eq(tier_stats(set.t[k])->blobs, 0);
    }
    free(data);
}

Test(tag_model, ram_and_file_tiers_random_ops)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 16 * KB, 0.6}, {"disk", TIER_FILE, 96 * KB, 0.0}};
    open_tiers(ts, 2, 1 << 20);
    run_model(1500, 6000, 0, 1);
}

Test(tag_model, three_tiers_with_tight_space_random_ops)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 8 * KB, 0.7},
                    {"ssd", TIER_FILE, 24 * KB, 0.4},
                    {"disk", TIER_FILE, 40 * KB, 0.0}};
    open_tiers(ts, 3, 1 << 20);
    run_model(1500, 9000, 0, 2);
}

Test(tag_model, two_ram_tiers_exact_accounting)
{
    tspec_t ts[] = {{"fast", TIER_RAM, 12 * KB, 0.5}, {"slow", TIER_RAM, 40 * KB, 0.0}};
    open_tiers(ts, 2, 1 << 20);
    run_model(1500, 5000, 1, 3);
}

Test(tag_model, file_only_random_ops)
{
    tspec_t ts[] = {{"disk", TIER_FILE, 64 * KB, -1}};
    open_tiers(ts, 1, 1 << 20);
    run_model(1000, 7000, 0, 4);
}

/* ---- the model with plans in flight ----
 *
 * Plans are kept in flight across steps and finished in random order, so that every operation
 * also meets blobs that are being read, written or moved, and blobs deleted under a plan. The
 * model knows what each blob has in flight and so which answers must be BUSY; a read returns
 * the bytes the blob held when it was issued. */

enum { F_READ, F_WRITE, F_MOVE };

typedef struct flight {
    tag_plan_t *p;
    int kind, blob, gen;
    char *buf; /* F_READ: the buffer being filled */
    uint64_t len;
    uint8_t *expect; /* F_READ: the model's bytes when the read was issued */
} flight_t;

typedef struct cblob {
    int exists, gen;
    uint8_t *data;
    uint64_t size;
    int writing, readers, moving;
} cblob_t;

#define MAXF 64

static void flight_finish(flight_t *f, cblob_t *m, int step)
{
    run_plan(f->p);
    cblob_t *mb = &m[f->blob];
    int same = mb->gen == f->gen;
    if (f->kind == F_READ) {
        for (uint64_t k = 0; k < f->len; k++)
            if ((uint8_t)f->buf[k] != f->expect[k])
                cr_assert_fail("step %d: in-flight TGET of %s: byte %llu is %u, want %u", step,
                               bname[f->blob], (unsigned long long)k, (uint8_t)f->buf[k],
                               f->expect[k]);
        xfree(f->buf);
        free(f->expect);
        if (same) mb->readers--;
    } else if (f->kind == F_WRITE) {
        if (same) mb->writing--;
    } else if (same) {
        mb->moving--;
    }
}

/* Plans storage queued after an operation on blob i (TPUT with a score moves the blob to its
 * tier once written): they are moves of blob i, kept in flight like the others. */
static void adopt_pending(flight_t *fl, int *nf, cblob_t *m, int i, int step)
{
    for (tag_plan_t *p; (p = tag_pending_pop());) {
        if (*nf == MAXF) {
            run_plan(p);
            continue;
        }
        fl[(*nf)++] = (flight_t){p, F_MOVE, i, m[i].gen, NULL, 0, NULL};
        m[i].moving++;
    }
    (void)step;
}

static void cmodel_resize(cblob_t *mb, uint64_t size)
{
    mb->data = realloc(mb->data, size ? size : 1);
    if (size > mb->size) memset(mb->data + mb->size, 0, size - mb->size);
    mb->size = size;
}

static void run_model_in_flight(int steps, uint64_t maxlen, unsigned seed)
{
    seed = model_seed(seed);
    cr_log_info("in-flight model seed %u", seed);
    srand(seed);
    tag_obj_t *t = tag_new();
    cblob_t m[NB] = {{0}};
    flight_t fl[MAXF];
    int nf = 0, busy = 0, pend = 0, ok = 0;
    uint8_t *data = malloc(maxlen + 1);
    for (int step = 0; step < steps; step++) {
        int i = rand() % NB, op = rand() % 100;
        cblob_t *mb = &m[i];
        const char *nm = bname[i];
        int wbusy = mb->exists && (mb->writing || mb->readers || mb->moving);
        tag_plan_t *p = NULL;
        if (op < 25 || nf == MAXF) { /* a plan comes back */
            if (nf) {
                int k = rand() % nf;
                flight_t f = fl[k];
                fl[k] = fl[--nf];
                flight_finish(&f, m, step);
                if (f.kind == F_WRITE) adopt_pending(fl, &nf, m, f.blob, step);
            }
        } else if (op < 45) { /* TPUT */
            uint64_t off = (uint64_t)(rand() % (int)(mb->size + maxlen / 4 + 1));
            uint64_t len = 1 + (uint64_t)(rand() % (int)maxlen);
            for (uint64_t k = 0; k < len; k++) data[k] = (uint8_t)rand();
            int has_score = rand() % 3 == 0;
            double score = (rand() % 11) / 10.0;
            uint64_t size = 0;
            int rc;
            for (;;) {
                rc = tag_put(t,
                             &(tag_write_t){nm, 2, off, (char *)data, len, has_score, score, step},
                             &size, &p);
                if (rc != ST_NOSPACE) break;
                cr_assert(!wbusy);
                cr_assert_gt(drain_pending(), 0, "step %d: NOSPACE without a demotion", step);
            }
            if (wbusy) {
                cr_assert_eq(rc, ST_BUSY, "step %d: TPUT %s with w%d r%d m%d in flight: %d", step,
                             nm, mb->writing, mb->readers, mb->moving, rc);
                busy++;
            } else if (rc != ST_OOM) {
                cr_assert(rc == ST_OK || rc == ST_PENDING, "step %d: TPUT: %d", step, rc);
                if (!mb->exists) {
                    mb->exists = 1;
                    mb->size = 0;
                }
                if (off + len > mb->size) cmodel_resize(mb, off + len);
                memcpy(mb->data + off, data, len);
                cr_assert_eq(size, mb->size, "step %d", step);
                if (rc == ST_PENDING) {
                    fl[nf++] = (flight_t){p, F_WRITE, i, mb->gen, NULL, 0, NULL};
                    mb->writing++;
                    pend++;
                } else {
                    ok++;
                    adopt_pending(fl, &nf, m, i, step);
                }
            }
        } else if (op < 70) { /* TGET */
            uint64_t off = (uint64_t)(rand() % (int)(mb->size + 16));
            uint64_t count =
                rand() % 3 == 0 ? UINT64_MAX : (uint64_t)(rand() % (int)(mb->size + 16));
            char *buf = NULL;
            uint64_t len = 0;
            int rc = tag_get(t, nm, 2, off, count, step, &buf, &len, &p);
            if (!mb->exists) {
                cr_assert_eq(rc, ST_MISSING, "step %d", step);
            } else if (mb->writing) {
                cr_assert_eq(rc, ST_BUSY, "step %d: TGET during a write: %d", step, rc);
                busy++;
            } else {
                cr_assert(rc == ST_OK || rc == ST_PENDING, "step %d: TGET %s (r%d m%d): %d", step,
                          nm, mb->readers, mb->moving, rc);
                uint64_t want = off >= mb->size ? 0 : mb->size - off;
                if (count < want) want = count;
                cr_assert_eq(len, want, "step %d", step);
                uint8_t *expect = malloc(want + 1);
                memcpy(expect, mb->data + (off < mb->size ? off : 0), want);
                flight_t f = {p, F_READ, i, mb->gen, buf, len, expect};
                if (rc == ST_PENDING) {
                    fl[nf++] = f;
                    mb->readers++;
                    pend++;
                } else {
                    f.p = NULL;
                    for (uint64_t k = 0; k < len; k++)
                        if ((uint8_t)buf[k] != expect[k])
                            cr_assert_fail("step %d: TGET %s byte %llu is %u, want %u", step, nm,
                                           (unsigned long long)(off + k), (uint8_t)buf[k],
                                           expect[k]);
                    xfree(buf);
                    free(expect);
                    ok++;
                }
            }
        } else if (op < 80) { /* TTRUNCATE */
            uint64_t size = (uint64_t)(rand() % (int)(mb->size * 2 + 64));
            int rc;
            for (;;) {
                rc = tag_truncate(t, nm, 2, size, step, &p);
                if (rc != ST_NOSPACE) break;
                cr_assert_gt(drain_pending(), 0);
            }
            if (wbusy) {
                cr_assert_eq(rc, ST_BUSY, "step %d: TTRUNCATE %s busy: %d", step, nm, rc);
                busy++;
            } else if (rc != ST_OOM) {
                cr_assert(rc == ST_OK || rc == ST_PENDING, "step %d: TTRUNCATE: %d", step, rc);
                if (!mb->exists) {
                    mb->exists = 1;
                    mb->size = 0;
                }
                cmodel_resize(mb, size);
                if (rc == ST_PENDING) {
                    fl[nf++] = (flight_t){p, F_WRITE, i, mb->gen, NULL, 0, NULL};
                    mb->writing++;
                    pend++;
                }
            }
        } else if (op < 88) { /* TDEL */
            cr_assert_eq(tag_del(t, nm, 2), mb->exists, "step %d", step);
            free(mb->data);
            *mb = (cblob_t){.gen = mb->gen + 1};
        } else { /* REORG */
            double score = (rand() % 11) / 10.0;
            int rc = tag_reorg(t, nm, 2, score, &p);
            if (!mb->exists) {
                cr_assert_eq(rc, ST_MISSING, "step %d", step);
            } else if (wbusy) {
                cr_assert_eq(rc, ST_BUSY, "step %d: REORG %s busy: %d", step, nm, rc);
                busy++;
            } else {
                cr_assert(rc == ST_OK || rc == ST_OOM || rc == ST_PENDING, "step %d: %d", step, rc);
                if (rc == ST_PENDING) {
                    fl[nf++] = (flight_t){p, F_MOVE, i, mb->gen, NULL, 0, NULL};
                    mb->moving++;
                    pend++;
                }
            }
        }
        cr_assert_null(tag_pending_pop(), "step %d: a plan was left queued", step);
        for (int k = 0; k < set.n; k++) {
            const char *why = tier__check(&set, k);
            cr_assert_null(why, "step %d: tier %s: %s", step, tier_name(set.t[k]), why ? why : "");
            cr_assert_leq(tier_used(set.t[k]), tier_capacity(set.t[k]));
        }
        for (int k = 0; k < NB; k++) {
            blob_t *b = tag_blob(t, bname[k], 2);
            cr_assert_eq(b != NULL, m[k].exists, "step %d: %s", step, bname[k]);
            if (b) {
                blob_info_t in;
                blob_get_info(b, &in);
                cr_assert_eq(in.size, m[k].size, "step %d: %s size %llu, model %llu", step,
                             bname[k], (unsigned long long)in.size, (unsigned long long)m[k].size);
            }
        }
        if (nf == 0) { /* at rest: exact bounds */
            mblob_t mm[NB];
            for (int k = 0; k < NB; k++) mm[k] = (mblob_t){m[k].exists, m[k].data, m[k].size};
            model_check_accounting(t, mm, step, 0);
        }
    }
    while (nf) {
        flight_t f = fl[--nf];
        flight_finish(&f, m, steps);
        if (f.kind == F_WRITE) adopt_pending(fl, &nf, m, f.blob, steps);
    }
    cr_assert_null(tag_pending_pop());
    mblob_t mm[NB];
    for (int k = 0; k < NB; k++) {
        mm[k] = (mblob_t){m[k].exists, m[k].data, m[k].size};
        model_read(t, mm, k, 0, UINT64_MAX, steps);
    }
    model_check_accounting(t, mm, steps, 0);
    cr_log_info("in-flight model: %d pending plans, %d BUSY answers, %d done at once", pend, busy,
                ok);
    cr_assert_gt(pend, steps / 20);
    cr_assert_gt(busy, steps / 50);
    for (int k = 0; k < NB; k++) free(m[k].data);
    obj_free((obj_t *)t);
    for (int k = 0; k < set.n; k++)
        cr_assert_eq(tier_used(set.t[k]), 0, "tier %s leaks %llu bytes", tier_name(set.t[k]),
                     (unsigned long long)tier_used(set.t[k]));
    free(data);
}

Test(tag_model, plans_in_flight_ram_and_file)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 16 * KB, 0.5}, {"disk", TIER_FILE, 160 * KB, 0.0}};
    open_tiers(ts, 2, 1 << 20);
    run_model_in_flight(2000, 6000, 11);
}

Test(tag_model, plans_in_flight_three_tiers_tight)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 8 * KB, 0.7},
                    {"ssd", TIER_FILE, 32 * KB, 0.4},
                    {"disk", TIER_FILE, 64 * KB, 0.0}};
    open_tiers(ts, 3, 1 << 20);
    run_model_in_flight(2000, 8000, 12);
}

/* ---- placement ---- */

static tspec_t three[] = {{"fast", TIER_RAM, 16 * KB, 0.7},
                          {"mid", TIER_FILE, 32 * KB, 0.3},
                          {"slow", TIER_FILE, 32 * KB, 0.0}};

Test(tag_place, score_picks_the_fastest_tier_at_or_below_it)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[4096];
    fill(d, sizeof(d), 2);
    struct {
        const char *name;
        double score;
        const char *tier;
    } cases[] = {
        {"s1", 1.0, "fast"}, {"s07", 0.7, "fast"}, {"s069", 0.69, "mid"},
        {"s03", 0.3, "mid"}, {"s01", 0.1, "slow"}, {"s0", 0.0, "slow"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(put(t, cases[i].name, 0, d, sizeof(d), 1, cases[i].score, NULL), ST_OK);
        cr_assert_str_eq(tier_of(t, cases[i].name), cases[i].tier, "score %g", cases[i].score);
    }
    /* no score: 1.0 */
    cr_assert_eq(put_s(t, "plain", 0, "x"), ST_OK);
    cr_assert_str_eq(tier_of(t, "plain"), "fast");
    cr_assert_eq(info_of(t, "plain").score, 1.0);
    obj_free((obj_t *)t);
}

Test(tag_place, full_preferred_tier_goes_to_the_next_colder_one)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[8192];
    fill(d, sizeof(d), 4);
    /* fast full of hot blobs (nothing colder to demote) */
    cr_assert_eq(put(t, "h1", 0, d, 8192, 1, 0.9, NULL), ST_OK);
    cr_assert_eq(put(t, "h2", 0, d, 8192, 1, 0.9, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "h2"), "fast");
    cr_assert_eq(put(t, "h3", 0, d, 4096, 1, 0.9, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "h3"), "mid");
    obj_free((obj_t *)t);
}

Test(tag_place, full_cold_tier_goes_to_the_slowest_hotter_one)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[32 * KB];
    fill(d, sizeof(d), 5);
    cr_assert_eq(put(t, "c1", 0, d, 32 * KB, 1, 0.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "c1"), "slow");
    cr_assert_eq(used("slow"), 32 * KB);
    cr_assert_eq(put(t, "c2", 0, d, 4096, 1, 0.1, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "c2"), "mid", "the slowest hotter tier with room is mid");
    /* mid full too: fast */
    cr_assert_eq(put(t, "c3", 0, d, 28 * KB, 1, 0.1, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "c3"), "mid");
    cr_assert_eq(put(t, "c4", 0, d, 4096, 1, 0.1, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "c4"), "fast");
    obj_free((obj_t *)t);
}

Test(tag_place, a_blob_too_big_for_any_tier_is_split_and_reads_back)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    uint64_t n = 60 * KB; /* > any tier's 32 KiB, < 80 KiB in all */
    char *d = malloc(n);
    fill(d, n, 6);
    cr_assert_eq(put(t, "big", 0, d, n, 1, 0.5, NULL), ST_OK);
    blob_info_t in = info_of(t, "big");
    cr_assert_geq(in.ntiers, 2);
    cr_assert_str_eq(tier_name(set.t[in.tier]), "mid", "the split starts on the preferred tier");
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "big", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert_eq(len, n);
    cr_assert(memcmp(buf, d, n) == 0);
    xfree(buf);
    /* a read across the boundary between tiers */
    cr_assert_eq(get(t, "big", 32 * KB - 100, 200, &buf, &len), ST_OK);
    cr_assert(memcmp(buf, d + 32 * KB - 100, 200) == 0);
    xfree(buf);
    cr_assert_geq(used("mid") + used("slow") + used("fast"), n);
    cr_assert_eq(tag_del(t, S("big")), 1);
    cr_assert_eq(used("mid") + used("slow") + used("fast"), 0);
    free(d);
    obj_free((obj_t *)t);
}


Test(tag_place, oom_when_every_tier_is_full_changes_nothing)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    char *d = malloc(80 * KB);
    fill(d, 80 * KB, 7);
    cr_assert_eq(put(t, "a", 0, d, 16 * KB, 1, 1.0, NULL), ST_OK);
    cr_assert_eq(put(t, "b", 0, d, 32 * KB, 1, 0.5, NULL), ST_OK);
    cr_assert_eq(put(t, "c", 0, d, 32 * KB - 10, 1, 0.0, NULL), ST_OK);
    uint64_t u0 = used("fast"), u1 = used("mid"), u2 = used("slow");
    /* a new blob */
    cr_assert_eq(put(t, "x", 0, d, 100, 1, 0.5, NULL), ST_OOM);
    cr_assert_null(tag_blob(t, S("x")), "a refused TPUT left the blob behind");
    cr_assert_eq(tag_len(t), 3);
    /* growing an existing blob, with a score change */
    cr_assert_eq(put(t, "a", 16 * KB - 1, "zz", 2, 1, 0.2, NULL), ST_OOM);
    blob_info_t in = info_of(t, "a");
    cr_assert_eq(in.size, 16 * KB);
    cr_assert_eq(in.score, 1.0, "a refused TPUT changed the score to %g", in.score);
    char *s = get_all(t, "a");
    cr_assert(memcmp(s, d, 16 * KB) == 0, "a refused TPUT changed the bytes");
    free(s);
    /* growing by truncate; a gap write */
    cr_assert_eq(truncate_to(t, "c", 40 * KB), ST_OOM);
    cr_assert_eq(info_of(t, "c").size, 32 * KB - 10);
    cr_assert_eq(put(t, "b", 40 * KB, "q", 1, 0, 0, NULL), ST_OOM);
    cr_assert_eq(info_of(t, "b").size, 32 * KB);
    cr_assert_eq(used("fast"), u0);
    cr_assert_eq(used("mid"), u1);
    cr_assert_eq(used("slow"), u2);
    /* an overwrite inside the blob needs no room */
    cr_assert_eq(put(t, "b", 5, "hello", 5, 0, 0, NULL), ST_OK);
    /* writes within the last file block of c need no new block */
    cr_assert_eq(put(t, "c", 32 * KB - 10, "0123456789", 10, 0, 0, NULL), ST_OK);
    cr_assert_eq(info_of(t, "c").size, 32 * KB);
    check_tiers_consistent();
    free(d);
    obj_free((obj_t *)t);
}

Test(tag_place, an_oom_write_moves_no_other_blob)
{
    /* "only when every tier is full does a write fail with -OOM, having changed nothing": a
     * write that cannot fit even after demotions must not leave a demoted blob behind. Two RAM
     * tiers, so a demotion completes at once. */
    tspec_t ts[] = {{"fast", TIER_RAM, 12 * KB, 0.5}, {"slow", TIER_RAM, 40 * KB, 0.0}};
    open_tiers(ts, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char *d = malloc(36 * KB);
    fill(d, 36 * KB, 13);
    cr_assert_eq(put(t, "c", 0, d, 4 * KB, 1, 0.6, NULL), ST_OK);
    cr_assert_eq(put(t, "h", 0, d, 8 * KB, 1, 0.9, NULL), ST_OK);
    cr_assert_eq(put(t, "z", 0, d, 36 * KB, 1, 0.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "c"), "fast");
    cr_assert_str_eq(tier_of(t, "h"), "fast");
    cr_assert_str_eq(tier_of(t, "z"), "slow");
    cr_assert_eq(put(t, "x", 0, d, 10 * KB, 1, 0.9, NULL), ST_OOM); /* 4 KiB free in all */
    cr_assert_null(tag_blob(t, S("x")));
    cr_assert_str_eq(tier_of(t, "c"), "fast", "the refused write demoted c to %s", tier_of(t, "c"));
    cr_assert_eq(used("fast"), 12 * KB);
    cr_assert_eq(used("slow"), 36 * KB);
    free(d);
    obj_free((obj_t *)t);
}

/* ---- demotion ---- */

static tspec_t ramdisk[] = {{"ram", TIER_RAM, 16 * KB, 0.1}, {"disk", TIER_FILE, 1 << 20, 0.0}};

Test(tag_place, demotion_moves_the_coldest_down_and_the_hot_write_lands_in_ram)
{
    open_tiers(ramdisk, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[4 * KB];
    const char *names[] = {"c20", "c50", "c30", "c40"};
    double scores[] = {0.2, 0.5, 0.3, 0.4};
    for (int i = 0; i < 4; i++) {
        fill(d, sizeof(d), 10 + i);
        cr_assert_eq(put(t, names[i], 0, d, sizeof(d), 1, scores[i], NULL), ST_OK);
        cr_assert_str_eq(tier_of(t, names[i]), "ram");
    }
    cr_assert_eq(used("ram"), 16 * KB);
    /* a hot write: the coldest (0.2) goes down, the new blob lands in RAM */
    tag_plan_t *p;
    uint64_t size;
    fill(d, sizeof(d), 99);
    int rc = tag_put(t, &(tag_write_t){S("hot"), 0, d, sizeof(d), 1, 0.9, 5}, &size, &p);
    cr_assert_eq(rc, ST_NOSPACE, "a full RAM tier with colder blobs should demote: %d", rc);
    cr_assert_null(tag_blob(t, S("hot")), "NOSPACE must change nothing");
    cr_assert_eq(drain_pending(), 1, "one 4 KiB demotion makes room for 4 KiB");
    cr_assert_eq(put(t, "hot", 0, d, sizeof(d), 1, 0.9, &size), ST_OK);
    cr_assert_str_eq(tier_of(t, "hot"), "ram");
    cr_assert_str_eq(tier_of(t, "c20"), "disk");
    for (int i = 1; i < 4; i++) cr_assert_str_eq(tier_of(t, names[i]), "ram");
    for (int i = 0; i < 4; i++) { /* the demoted one reads back intact */
        fill(d, sizeof(d), 10 + i);
        char *buf;
        uint64_t len;
        cr_assert_eq(get(t, names[i], 0, UINT64_MAX, &buf, &len), ST_OK);
        cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0, "%s", names[i]);
        xfree(buf);
    }
    cr_assert_eq(used("ram"), 16 * KB);
    cr_assert_eq(used("disk"), 4 * KB);
    obj_free((obj_t *)t);
}

Test(tag_place, demotion_for_two_blobs_takes_the_two_coldest)
{
    open_tiers(ramdisk, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[4 * KB];
    fill(d, sizeof(d), 1);
    /* this insertion order leaves the RAM heap array as [0.2, 0.4, 0.3, 0.5]: the two coldest
     * are not the first two entries of the array */
    const char *names[] = {"c20", "c50", "c30", "c40"};
    double scores[] = {0.2, 0.5, 0.3, 0.4};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(put(t, names[i], 0, d, sizeof(d), 1, scores[i], NULL), ST_OK);
    char big[8 * KB];
    fill(big, sizeof(big), 2);
    cr_assert_eq(put(t, "hot", 0, big, sizeof(big), 1, 0.9, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "hot"), "ram");
    cr_assert_str_eq(tier_of(t, "c20"), "disk");
    cr_assert_str_eq(tier_of(t, "c30"), "disk", "the second coldest (0.3) should go down");
    cr_assert_str_eq(tier_of(t, "c40"), "ram", "0.4 went down while 0.3 is colder");
    cr_assert_str_eq(tier_of(t, "c50"), "ram", "0.5 went down while 0.3 is colder");
    obj_free((obj_t *)t);
}

Test(tag_place, no_demotion_of_hotter_blobs)
{
    open_tiers(ramdisk, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[8 * KB];
    fill(d, sizeof(d), 1);
    cr_assert_eq(put(t, "a", 0, d, sizeof(d), 1, 0.8, NULL), ST_OK);
    cr_assert_eq(put(t, "b", 0, d, sizeof(d), 1, 0.8, NULL), ST_OK);
    cr_assert_eq(put(t, "c", 0, d, 4 * KB, 1, 0.5, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "c"), "disk", "colder than every RAM blob: spills to disk");
    cr_assert_str_eq(tier_of(t, "a"), "ram");
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    obj_free((obj_t *)t);
}

/* ---- TPUT with a score, REORG ---- */

Test(tag_place, tput_with_a_new_score_moves_the_blob)
{
    /* COMMANDS.md: "With score, sets the blob's score (moving it if the tier changes)." */
    open_tiers(ramdisk, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    cr_assert_eq(put(t, "b", 0, S("hello world"), 1, 1.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    cr_assert_eq(put(t, "b", 0, S("H"), 1, 0.0, NULL), ST_OK);
    drain_pending();
    cr_assert_eq(info_of(t, "b").score, 0.0);
    cr_assert_str_eq(tier_of(t, "b"), "disk",
                     "TPUT with score 0 left the blob on %s (placement picks disk)",
                     tier_of(t, "b"));
    char *s = get_all(t, "b");
    cr_assert_str_eq(s, "Hello world");
    free(s);
    obj_free((obj_t *)t);
}

Test(tag_place, tput_with_a_score_moves_a_file_blob_once_its_write_is_done)
{
    open_tiers(ramdisk, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[6000];
    fill(d, sizeof(d), 21);
    cr_assert_eq(put(t, "b", 0, d, sizeof(d), 1, 0.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "b"), "disk");
    tag_plan_t *p;
    uint64_t size;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 10, S("HOT"), 1, 1.0, 5}, &size, &p),
                 ST_PENDING);
    cr_assert_null(tag_pending_pop(), "the move must wait for the write");
    cr_assert_eq(info_of(t, "b").score, 1.0);
    run_plan(p);
    tag_plan_t *mv = tag_pending_pop();
    cr_assert_not_null(mv, "no move was queued after the write of a TPUT with a new score");
    run_plan(mv);
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    memcpy(d + 10, "HOT", 3);
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(used("ram"), RAM_BYTES(sizeof(d)));
    obj_free((obj_t *)t);
}

Test(tag_place, reorg_moves_between_tiers_and_back)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[10000];
    fill(d, sizeof(d), 8);
    cr_assert_eq(put(t, "b", 0, d, sizeof(d), 0, 0, NULL), ST_OK);
    double path[] = {0.0, 0.5, 1.0, 0.3, 0.0, 0.9};
    const char *want[] = {"slow", "mid", "fast", "mid", "slow", "fast"};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(reorg(t, "b", path[i]), ST_OK);
        cr_assert_str_eq(tier_of(t, "b"), want[i]);
        cr_assert_eq(info_of(t, "b").ntiers, 1);
        cr_assert_eq(info_of(t, "b").score, path[i]);
        char *buf;
        uint64_t len;
        cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
        cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0, "after REORG %g", path[i]);
        xfree(buf);
        uint64_t total = used("fast") + used("mid") + used("slow");
        cr_assert(total == sizeof(d) || total == 12288, "after REORG %g tiers hold %llu", path[i],
                  (unsigned long long)total);
    }
    cr_assert_eq(reorg(t, "nope", 0.5), ST_MISSING);
    obj_free((obj_t *)t);
    check_tiers_consistent();
}

Test(tag_place, reorg_without_room_keeps_the_blob_and_sets_the_score)
{
    open_tiers(ramdisk, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[16 * KB];
    fill(d, sizeof(d), 3);
    cr_assert_eq(put(t, "hot", 0, d, sizeof(d), 1, 1.0, NULL), ST_OK);
    cr_assert_eq(put(t, "cold", 0, d, 8 * KB, 1, 0.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "cold"), "disk");
    int rc = reorg(t, "cold", 1.0); /* RAM is full of a hotter blob: stays on disk */
    cr_assert(rc == ST_OK || rc == ST_OOM, "%d", rc);
    cr_assert_str_eq(tier_of(t, "cold"), "disk");
    cr_assert_eq(info_of(t, "cold").score, 1.0);
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "cold", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == 8 * KB && memcmp(buf, d, len) == 0);
    xfree(buf);
    obj_free((obj_t *)t);
}

Test(tag_place, reorg_gathers_a_split_blob_onto_one_tier)
{
    open_tiers(three, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    uint64_t n = 40 * KB;
    char *d = malloc(n);
    fill(d, n, 9);
    cr_assert_eq(put(t, "big", 0, d, n, 1, 0.0, NULL), ST_OK);
    cr_assert_geq(info_of(t, "big").ntiers, 2);
    /* 40 KiB fits on no single tier: REORG may answer OOM, but keeps every byte */
    int rc = reorg(t, "big", 0.5);
    cr_assert(rc == ST_OK || rc == ST_OOM);
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "big", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == n && memcmp(buf, d, n) == 0);
    xfree(buf);
    cr_assert_eq(info_of(t, "big").score, 0.5);
    free(d);
    obj_free((obj_t *)t);
    check_tiers_consistent();
    cr_assert_eq(used("fast") + used("mid") + used("slow"), 0);
}

Test(tag_place, reorg_to_a_tier_holding_part_of_the_blob_gathers_it_there)
{
    /* ram 8 KiB (0.7), ssd 24 KiB (0.4), disk 40 KiB (0). b = 8 KiB on ssd + 12 KiB grown onto
     * disk; with the other ssd blob gone, ssd has room for all 20 KiB once b's own 8 KiB there
     * are counted, so REORG 0.5 (which picks ssd) must gather b on ssd, not push it to disk. */
    tspec_t ts[] = {{"ram", TIER_RAM, 8 * KB, 0.7},
                    {"ssd", TIER_FILE, 24 * KB, 0.4},
                    {"disk", TIER_FILE, 40 * KB, 0.0}};
    open_tiers(ts, 3, 1 << 20);
    tag_obj_t *t = tag_new();
    char *d = malloc(20 * KB);
    fill(d, 20 * KB, 12);
    cr_assert_eq(put(t, "b", 0, d, 8 * KB, 1, 0.5, NULL), ST_OK);
    cr_assert_eq(put(t, "o", 0, d, 8 * KB, 1, 0.5, NULL), ST_OK);
    cr_assert_eq(put(t, "b", 8 * KB, d + 8 * KB, 12 * KB, 0, 0, NULL), ST_OK);
    blob_info_t in = info_of(t, "b");
    cr_assert_eq(in.ntiers, 2);
    cr_assert_str_eq(tier_name(set.t[in.tier]), "ssd");
    cr_assert_eq(tag_del(t, S("o")), 1);
    cr_assert_eq(used("ssd"), 8 * KB);
    cr_assert_eq(reorg(t, "b", 0.5), ST_OK);
    in = info_of(t, "b");
    cr_assert(in.ntiers == 1 && strcmp(tier_name(set.t[in.tier]), "ssd") == 0,
              "REORG 0.5 put b on %s (%d tiers) while ssd (24 KiB) can hold its 20 KiB",
              tier_name(set.t[in.tier]), in.ntiers);
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == 20 * KB && memcmp(buf, d, len) == 0);
    xfree(buf);
    free(d);
    obj_free((obj_t *)t);
}

/* ---- plans in flight ---- */

static tspec_t rf[] = {{"ram", TIER_RAM, 64 * KB, 0.5}, {"disk", TIER_FILE, 256 * KB, 0.0}};

/* A blob of n bytes on disk with contents fill(seed). */
static void put_on_disk(tag_obj_t *t, const char *name, char *d, size_t n, int seed)
{
    fill(d, n, seed);
    cr_assert_eq(put(t, name, 0, d, n, 1, 0.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, name), "disk");
}

Test(tag_busy, delete_during_a_read_returns_old_bytes_and_frees_after_finish)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[10000];
    put_on_disk(t, "b", d, sizeof(d), 1);
    cr_assert_eq(used("disk"), 12288);
    tag_plan_t *p;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &p), ST_PENDING);
    cr_assert_eq(tag_del(t, S("b")), 1);
    cr_assert_null(tag_blob(t, S("b")));
    cr_assert_eq(tier_stats(set.t[1])->blobs, 0);
    cr_assert_eq(used("disk"), 12288, "the extents must live until the read finished");
    /* a new blob of the same name meanwhile does not reuse the bytes being read */
    char e[10000];
    put_on_disk(t, "b", e, sizeof(e), 2);
    cr_assert_eq(used("disk"), 2 * 12288);
    run_plan(p);
    cr_assert_eq(len, sizeof(d));
    cr_assert(memcmp(buf, d, len) == 0, "the in-flight read must return the old bytes");
    xfree(buf);
    cr_assert_eq(used("disk"), 12288, "the old extents go back once the read finished");
    char *s;
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &s, &len), ST_OK);
    cr_assert(len == sizeof(e) && memcmp(s, e, len) == 0);
    xfree(s);
    obj_free((obj_t *)t);
    cr_assert_eq(used("disk"), 0);
    check_tiers_consistent();
}

Test(tag_busy, delete_of_the_tag_during_a_read)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[5000];
    put_on_disk(t, "b", d, sizeof(d), 3);
    tag_plan_t *p;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &p), ST_PENDING);
    obj_free((obj_t *)t); /* DEL / FLUSHALL */
    cr_assert_eq(used("disk"), 8192);
    run_plan(p);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    cr_assert_eq(used("disk"), 0);
}

Test(tag_busy, delete_during_a_write_or_a_move_frees_everything)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[9000];
    fill(d, sizeof(d), 4);
    tag_plan_t *p;
    uint64_t size;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("w"), 0, d, sizeof(d), 1, 0.0, 1}, &size, &p),
                 ST_PENDING);
    cr_assert_eq(tag_del(t, S("w")), 1);
    run_plan(p);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(used("ram"), 0);
    put_on_disk(t, "m", d, sizeof(d), 5);
    cr_assert_eq(tag_reorg(t, S("m"), 1.0, &p), ST_PENDING);
    cr_assert_eq(used("ram"), RAM_BYTES(sizeof(d)));
    cr_assert_eq(tag_del(t, S("m")), 1);
    run_plan(p);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(used("ram"), 0);
    cr_assert_eq(tier_stats(set.t[0])->blobs, 0);
    cr_assert_eq(tier_stats(set.t[1])->blobs, 0);
    obj_free((obj_t *)t);
    check_tiers_consistent();
}

Test(tag_busy, a_pending_write_makes_everything_else_busy)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[6000];
    put_on_disk(t, "b", d, sizeof(d), 6);
    tag_plan_t *p, *q;
    uint64_t size;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 100, S("NEW"), 0, 0, 1}, &size, &p), ST_PENDING);
    cr_assert_eq(size, sizeof(d));
    cr_assert_eq(tag_get(t, S("b"), 0, 10, 1, &buf, &len, &q), ST_BUSY);
    cr_assert_null(q);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, 1}, &size, &q), ST_BUSY);
    cr_assert_eq(tag_truncate(t, S("b"), 10, 1, &q), ST_BUSY);
    cr_assert_eq(tag_truncate(t, S("b"), 100000, 1, &q), ST_BUSY);
    cr_assert_eq(tag_reorg(t, S("b"), 1.0, &q), ST_BUSY);
    cr_assert_eq(info_of(t, "b").score, 0.0, "a BUSY REORG must not change the score");
    /* other blobs are not busy */
    cr_assert_eq(put_s(t, "other", 0, "fine"), ST_OK);
    run_plan(p);
    cr_assert_eq(get(t, "b", 98, 7, &buf, &len), ST_OK);
    memcpy(d + 100, "NEW", 3);
    cr_assert(len == 7 && memcmp(buf, d + 98, 7) == 0);
    xfree(buf);
    obj_free((obj_t *)t);
}

Test(tag_busy, pending_reads_make_writes_busy_but_not_other_reads)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[6000];
    put_on_disk(t, "b", d, sizeof(d), 7);
    tag_plan_t *r1, *r2, *q;
    char *b1, *b2;
    uint64_t l1, l2, size;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &b1, &l1, &r1), ST_PENDING);
    cr_assert_eq(tag_get(t, S("b"), 1000, 10, 1, &b2, &l2, &r2), ST_PENDING);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, 1}, &size, &q), ST_BUSY);
    cr_assert_eq(tag_truncate(t, S("b"), 10, 1, &q), ST_BUSY);
    cr_assert_eq(tag_reorg(t, S("b"), 1.0, &q), ST_BUSY);
    run_plan(r1);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, 1}, &size, &q), ST_BUSY,
                 "one read is still in flight");
    run_plan(r2);
    cr_assert(l1 == sizeof(d) && memcmp(b1, d, l1) == 0);
    cr_assert(l2 == 10 && memcmp(b2, d + 1000, 10) == 0);
    xfree(b1);
    xfree(b2);
    cr_assert_eq(put_s(t, "b", 0, "x"), ST_OK);
    obj_free((obj_t *)t);
}

Test(tag_busy, a_move_lets_reads_go_on_and_makes_writes_wait)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[9000];
    put_on_disk(t, "b", d, sizeof(d), 8);
    tag_plan_t *mv, *r, *q;
    char *buf;
    uint64_t len, size;
    cr_assert_eq(tag_reorg(t, S("b"), 1.0, &mv), ST_PENDING);
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &r), ST_PENDING,
                 "a read during a move reads the old (disk) extents");
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, 1}, &size, &q), ST_BUSY);
    cr_assert_eq(tag_truncate(t, S("b"), 1, 1, &q), ST_BUSY);
    cr_assert_eq(tag_reorg(t, S("b"), 0.0, &q), ST_BUSY);
    run_plan(mv);
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    cr_assert_eq(used("disk"), 12288, "the reader still holds the old extents");
    cr_assert_eq(tier_stats(set.t[1])->blobs, 0);
    cr_assert_eq(tier_stats(set.t[0])->blobs, 1);
    /* the move is done, but a read is still in flight: writes wait for it */
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, 1}, &size, &q), ST_BUSY);
    run_plan(r);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, 1}, &size, &q), ST_OK);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0, "read during move: torn bytes");
    xfree(buf);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(used("ram"), RAM_BYTES(sizeof(d)));
    char *s;
    cr_assert_eq(get(t, "b", 0, 3, &s, &len), ST_OK);
    cr_assert(memcmp(s, "x", 1) == 0 && memcmp(s + 1, d + 1, 2) == 0);
    xfree(s);
    obj_free((obj_t *)t);
}

Test(tag_busy, a_move_down_from_ram_during_reads)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[7000];
    fill(d, sizeof(d), 9);
    cr_assert_eq(put(t, "b", 0, d, sizeof(d), 1, 1.0, NULL), ST_OK);
    tag_plan_t *mv, *r;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_reorg(t, S("b"), 0.0, &mv), ST_PENDING);
    /* RAM extents are read at once during the move */
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &r), ST_OK);
    cr_assert_null(r);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    run_plan(mv);
    cr_assert_str_eq(tier_of(t, "b"), "disk");
    cr_assert_eq(used("ram"), 0);
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    obj_free((obj_t *)t);
}

Test(tag_busy, a_failed_move_keeps_the_blob_where_it_was)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[5000];
    put_on_disk(t, "b", d, sizeof(d), 10);
    tag_plan_t *mv;
    cr_assert_eq(tag_reorg(t, S("b"), 1.0, &mv), ST_PENDING);
    tag_plan_finish(mv, -5 /* EIO */, NULL, NULL);
    cr_assert_str_eq(tier_of(t, "b"), "disk");
    cr_assert_eq(used("ram"), 0);
    char *buf;
    uint64_t len;
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    cr_assert_eq(put_s(t, "b", 0, "ok"), ST_OK, "the blob is not left busy");
    obj_free((obj_t *)t);
}

Test(tag_busy, wait_names_tell_blobs_and_tags_apart)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new(), *u = tag_new();
    char a[64], b[64], c[64], s[64];
    size_t na = tag_blob_waitname(t, S("x"), a), nb = tag_blob_waitname(t, S("y"), b),
           nc = tag_blob_waitname(u, S("x"), c), ns = tag_space_waitname(s);
    cr_assert(na != nb || memcmp(a, b, na) != 0);
    cr_assert(na != nc || memcmp(a, c, na) != 0);
    cr_assert(na != ns || memcmp(a, s, na) != 0);
    char a2[64];
    cr_assert_eq(tag_blob_waitname(t, S("x"), a2), na);
    cr_assert(memcmp(a, a2, na) == 0);
    obj_free((obj_t *)t);
    obj_free((obj_t *)u);
}

struct woken {
    int blob, space;
};

static void on_wake(void *ud, const char *name, size_t len)
{
    struct woken *w = ud;
    if (len == 6 && memcmp(name,
                           "\xff"
                           "space",
                           6) == 0)
        w->space++;
    else
        w->blob++;
}

Test(tag_busy, finishing_a_write_wakes_the_blob_waiters_even_after_a_delete)
{
    /* A client waiting (BUSY) on a blob whose write is in flight must be woken when the write
     * ends, also when the blob was deleted meanwhile, or it waits forever. */
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[5000];
    fill(d, sizeof(d), 11);
    tag_plan_t *p;
    uint64_t size;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, d, sizeof(d), 1, 0.0, 1}, &size, &p),
                 ST_PENDING);
    struct woken w = {0};
    cr_assert_eq(tag_plan_run(p), 0);
    tag_plan_finish(p, 0, on_wake, &w);
    cr_assert_eq(w.blob, 1);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("zz"), 0, 0, 1}, &size, &p), ST_PENDING);
    cr_assert_eq(tag_del(t, S("b")), 1);
    w = (struct woken){0};
    cr_assert_eq(tag_plan_run(p), 0);
    tag_plan_finish(p, 0, on_wake, &w);
    cr_assert_eq(w.blob, 1, "the waiters of a deleted blob were never woken");
    obj_free((obj_t *)t);
}

struct visit_ctx {
    tag_obj_t *t;
    int seen;
};

/* Reads the blob it is given, as the AOF rewrite does: a lookup may move the rehash on. */
static void visit_and_read(void *ud, blob_t *b)
{
    struct visit_ctx *x = ud;
    size_t nlen;
    const char *name = blob_name(b, &nlen);
    char *buf;
    uint64_t len;
    tag_plan_t *plan;
    cr_assert_eq(tag_get(x->t, name, nlen, 0, UINT64_MAX, 0, &buf, &len, &plan), ST_OK);
    xfree(buf);
    x->seen++;
}

Test(tag_store, foreach_that_reads_blobs_visits_each_once_while_rehashing)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 1024 * KB, -1}};
    open_tiers(ts, 1, 1 << 20);
    /* counts just past a power of two leave the blob table in the middle of a rehash */
    for (int n = 33; n <= 1100; n = n * 2 + 1) {
        tag_obj_t *t = tag_new();
        uint64_t size;
        char name[32];
        for (int i = 0; i < n; i++) {
            snprintf(name, sizeof(name), "b%d", i);
            cr_assert_eq(put(t, name, 0, name, strlen(name), 0, 0, &size), ST_OK);
        }
        struct visit_ctx x = {t, 0};
        tag_foreach(t, visit_and_read, &x);
        cr_assert_eq(x.seen, n, "visited %d of %d blobs", x.seen, n);
        obj_free((obj_t *)t);
    }
}

/* ---- a file system smaller than its tier ---- */

/* Mounts a tmpfs of size bytes under dir (root only: 0 when it could not). */
static int mount_small(uint64_t size)
{
    char cmd[256];
    if (geteuid() != 0) return 0;
    snprintf(small_dir, sizeof(small_dir), "%s/small", dir);
    mkdir(small_dir, 0700);
    snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=%llu tmpfs %s 2>/dev/null",
             (unsigned long long)size, small_dir);
    return system(cmd) == 0;
}

static void unmount_small(void)
{
    char cmd[256];
    if (!small_dir[0]) return;
    if (set_open) tier_set_close(&set);
    set_open = 0;
    snprintf(cmd, sizeof(cmd), "umount -l %s 2>/dev/null", small_dir);
    (void)system(cmd);
    small_dir[0] = '\0';
}

/* A file tier "disk" of 4 MiB on a 256 KiB tmpfs, after a 16 KiB RAM tier; with spare, a file
 * tier "spare" of 1 MiB in the test directory below it. */
static void open_small_disk(int spare)
{
    tier_spec_t specs[] = {{"ram", TIER_RAM, 16 * KB, NULL, 1.0},
                           {"disk", TIER_FILE, 4096 * KB, small_dir, 0.5},
                           {"spare", TIER_FILE, 1024 * KB, dir, 0.0}};
    char err[256] = "";
    cr_assert_eq(tier_set_open(&set, specs, spare ? 3 : 2, err, sizeof(err)), 0, "%s", err);
    set_open = 1;
    tag_store.tiers = &set;
    tag_store.max_blob_size = 64 * 1024 * KB;
    tag_store.on_blob_change = NULL;
}

Test(tag_place, a_write_the_disk_cannot_hold_changes_nothing)
{
    if (!mount_small(256 * KB)) cr_skip_test("mounting a tmpfs needs root");
    open_small_disk(0);
    tag_obj_t *t = tag_new();
    char *a = xmalloc(128 * KB), *b = xmalloc(256 * KB);
    fill(a, 128 * KB, 1);
    fill(b, 256 * KB, 2);
    cr_assert_eq(put(t, "a", 0, a, 128 * KB, 1, 0.5, NULL), ST_OK);
    uint64_t before = used("disk");
    /* a new blob: refused, absent */
    cr_assert_eq(put(t, "new", 0, b, 192 * KB, 1, 0.5, NULL), ST_OOM);
    cr_assert_null(tag_blob(t, S("new")));
    /* growing an existing blob past the disk: refused, size and bytes as they were */
    cr_assert_eq(put(t, "a", 64 * KB, b, 256 * KB, 0, 0, NULL), ST_OOM);
    cr_assert_eq(info_of(t, "a").size, 128 * KB);
    char *back = get_all(t, "a");
    cr_assert(memcmp(back, a, 128 * KB) == 0);
    xfree(back);
    cr_assert_eq(used("disk"), before);
    cr_assert_eq(tag_len(t), 1);
    check_tiers_consistent();
    obj_free((obj_t *)t);
    xfree(a);
    xfree(b);
    unmount_small();
}

Test(tag_place, a_full_disk_sends_the_blob_to_a_tier_with_room)
{
    if (!mount_small(256 * KB)) cr_skip_test("mounting a tmpfs needs root");
    open_small_disk(1);
    tag_obj_t *t = tag_new();
    char *b = xmalloc(512 * KB);
    fill(b, 512 * KB, 3);
    /* the disk's capacity says yes, its file system says no: the blob lands on spare */
    cr_assert_eq(put(t, "b", 0, b, 512 * KB, 1, 0.5, NULL), ST_OK);
    cr_assert_eq(info_of(t, "b").size, 512 * KB);
    char *back = get_all(t, "b");
    cr_assert(memcmp(back, b, 512 * KB) == 0);
    xfree(back);
    cr_assert_geq(used("spare"), 256 * KB);
    check_tiers_consistent();
    obj_free((obj_t *)t);
    xfree(b);
    unmount_small();
}

Test(tag_busy, a_failed_write_plan_is_undone)
{
    tspec_t ts[] = {{"disk", TIER_FILE, 1024 * KB, -1}};
    open_tiers(ts, 1, 1024 * KB);
    tag_obj_t *t = tag_new();
    char *a = xmalloc(64 * KB), *b = xmalloc(128 * KB);
    fill(a, 64 * KB, 4);
    fill(b, 128 * KB, 5);
    cr_assert_eq(put(t, "a", 0, a, 64 * KB, 0, 0, NULL), ST_OK);
    blob_info_t was = info_of(t, "a");
    uint64_t before = used("disk");
    /* a new blob whose tier write fails: gone */
    uint64_t sz;
    tag_plan_t *p = NULL;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("new"), 0, b, 128 * KB, 0, 0, 5000}, &sz, &p),
                 ST_PENDING);
    tag_plan_finish(p, -EIO, NULL, NULL);
    cr_assert_null(tag_blob(t, S("new")));
    /* an append to an existing one that fails: back to its size, score, mtime and counters */
    cr_assert_eq(tag_put(t, &(tag_write_t){S("a"), 64 * KB, b, 128 * KB, 1, 0.25, 6000}, &sz, &p),
                 ST_PENDING);
    cr_assert_eq(sz, 192 * KB);
    tag_plan_finish(p, -ENOSPC, NULL, NULL);
    blob_info_t now = info_of(t, "a");
    cr_assert_eq(now.size, was.size);
    cr_assert_eq(now.score, was.score);
    cr_assert_eq(now.mtime, was.mtime);
    cr_assert_eq(now.writes, was.writes);
    cr_assert_eq(used("disk"), before);
    char *back = get_all(t, "a");
    cr_assert(memcmp(back, a, 64 * KB) == 0);
    xfree(back);
    cr_assert_eq(tag_writes_in_flight(), 0);
    check_tiers_consistent();
    obj_free((obj_t *)t);
    xfree(a);
    xfree(b);
}

Test(tag_busy, a_reader_keeps_the_bytes_it_opened_on_and_holds_off_writes)
{
    tspec_t ts[] = {{"ram", TIER_RAM, 64 * KB, 1.0}, {"disk", TIER_FILE, 1024 * KB, 0.0}};
    open_tiers(ts, 2, 1024 * KB);
    tag_obj_t *t = tag_new();
    char *a = xmalloc(256 * KB), *piece = xmalloc(256 * KB);
    fill(a, 256 * KB, 6);
    cr_assert_eq(put(t, "a", 0, a, 256 * KB, 1, 0.0, NULL), ST_OK);
    tag_reader_t *r;
    uint64_t len;
    cr_assert_eq(tag_reader_open(t, S("a"), 1000, UINT64_MAX, 7000, &r, &len), ST_OK);
    cr_assert_eq(len, 256 * KB - 1000);
    cr_assert_eq(info_of(t, "a").reads, 1);
    /* writes wait while it is open; a delete goes through, the bytes stay readable */
    uint64_t sz;
    tag_plan_t *p = NULL;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("a"), 0, "x", 1, 0, 0, 8000}, &sz, &p), ST_BUSY);
    cr_assert(tag_blob_busy(t, S("a"), 1));
    cr_assert_eq(tag_del(t, S("a")), 1);
    for (uint64_t pos = 0; pos < len; pos += 64 * KB) {
        uint64_t n = len - pos < 64 * KB ? len - pos : 64 * KB;
        int rc = tag_reader_read(r, pos, n, piece, &p);
        if (rc == ST_PENDING)
            run_plan(p);
        else
            cr_assert_eq(rc, ST_OK);
        cr_assert(memcmp(piece, a + 1000 + pos, n) == 0, "piece at %llu", (unsigned long long)pos);
    }
    cr_assert_gt(used("disk"), 0); /* the deleted blob's extents live until the close */
    tag_reader_close(r, NULL, NULL);
    cr_assert_eq(used("disk"), 0);
    check_tiers_consistent();
    obj_free((obj_t *)t);
    xfree(a);
    xfree(piece);
}

/* ---- one extent inline, more in a list ---- */

static size_t tag_mem(const tag_obj_t *t)
{
    return obj_memory((const obj_t *)t);
}

Test(tag_busy, one_extent_is_inline_two_spill_to_a_list_and_a_shrink_brings_it_back)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[80 * KB];
    fill(d, sizeof(d), 11);
    cr_assert_eq(put(t, "b", 0, d, 40 * KB, 1, 1.0, NULL), ST_OK);
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    size_t inline_mem = tag_mem(t);
    /* RAM (64 KiB) cannot take the rest: a second extent on disk, so a list */
    cr_assert_eq(put(t, "b", 40 * KB, d + 40 * KB, 40 * KB, 0, 0, NULL), ST_OK);
    cr_assert_eq(info_of(t, "b").ntiers, 2);
    cr_assert_gt(tag_mem(t), inline_mem, "two extents need a list");
    /* a read in flight holds both extents: the shrink waits for it */
    tag_plan_t *r, *q;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &r), ST_PENDING);
    cr_assert_eq(tag_truncate(t, S("b"), 10 * KB, 1, &q), ST_BUSY);
    cr_assert_eq(used("disk"), 40 * KB);
    run_plan(r);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    cr_assert_eq(truncate_to(t, "b", 10 * KB), ST_OK);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(info_of(t, "b").size, 10 * KB);
    cr_assert_eq(tag_mem(t), inline_mem, "one extent again: inline");
    cr_assert_eq(get(t, "b", 0, UINT64_MAX, &buf, &len), ST_OK);
    cr_assert(len == 10 * KB && memcmp(buf, d, len) == 0);
    xfree(buf);
    cr_assert_eq(truncate_to(t, "b", 0), ST_OK);
    cr_assert_eq(used("ram"), 0);
    cr_assert_eq(info_of(t, "b").tier, -1);
    cr_assert_eq(truncate_to(t, "b", 100), ST_OK, "an empty blob grows again");
    cr_assert_eq(used("ram"), RAM_BYTES(100));
    obj_free((obj_t *)t);
    cr_assert_eq(used("ram"), 0);
    check_tiers_consistent();
}

Test(tag_busy, a_read_holding_an_inline_file_extent_keeps_it_through_a_move)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[9000];
    put_on_disk(t, "b", d, sizeof(d), 12);
    size_t inline_mem = tag_mem(t);
    tag_plan_t *mv, *r;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_reorg(t, S("b"), 1.0, &mv), ST_PENDING);
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &r), ST_PENDING);
    cr_assert_gt(tag_mem(t), inline_mem, "plans hold the extent in a list meanwhile");
    run_plan(mv);
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    cr_assert_eq(used("disk"), 12288, "the read still holds the old extent");
    cr_assert_eq(tag_mem(t), inline_mem, "the blob's own extent is inline again");
    run_plan(r);
    cr_assert(len == sizeof(d) && memcmp(buf, d, len) == 0);
    xfree(buf);
    cr_assert_eq(used("disk"), 0);
    cr_assert_eq(tag_mem(t), inline_mem);
    /* a streamed reader holds its extent the same way */
    tag_reader_t *x;
    cr_assert_eq(tag_reader_open(t, S("b"), 0, UINT64_MAX, 1, &x, &len), ST_OK);
    cr_assert_gt(tag_mem(t), inline_mem);
    tag_reader_close(x, NULL, NULL);
    cr_assert_eq(tag_mem(t), inline_mem);
    obj_free((obj_t *)t);
    check_tiers_consistent();
}

/* ---- the packed blob: 48-bit times beside home, flags and 16-bit counters ---- */

Test(tag_store, times_at_0_and_the_max_round_trip_beside_the_other_fields)
{
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    char d[5000];
    put_on_disk(t, "b", d, sizeof(d), 5); /* home: the disk tier's heap */
    cr_assert_eq(put_s(t, "r", 0, "ram"), ST_OK);
    const long long M = TAG_TIME_MAX;
    const long long v[][3] = {{0, 0, 0}, {M, M, M}, {M, 0, M}, {0, M, 0}, {1, M - 1, 123456789}};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        for (int k = 0; k < 2; k++) {
            const char *name = k ? "r" : "b";
            cr_assert_eq(tag_set_meta(t, name, 1, v[i][0], v[i][1], v[i][2], UINT32_MAX, 7),
                         ST_OK);
            blob_info_t in = info_of(t, name);
            cr_assert(in.ctime == v[i][0] && in.mtime == v[i][1] && in.atime == v[i][2],
                      "%s: %lld %lld %lld came back as %lld %lld %lld", name, v[i][0], v[i][1],
                      v[i][2], in.ctime, in.mtime, in.atime);
            cr_assert(in.reads == UINT32_MAX && in.writes == 7);
            cr_assert_str_eq(tier_of(t, name), k ? "ram" : "disk");
        }
        /* a read sets atime alone and counts, a write sets mtime alone: the neighbours
         * (references, readers, home) are untouched, so the blob stays readable, idle and
         * demotable */
        char *s;
        uint64_t len;
        cr_assert_eq(get(t, "b", 0, UINT64_MAX, &s, &len), ST_OK);
        cr_assert(len == sizeof(d) && memcmp(s, d, len) == 0);
        xfree(s);
        blob_info_t in = info_of(t, "b");
        cr_assert(in.ctime == v[i][0] && in.mtime == v[i][1] && in.atime == 2000);
        cr_assert_eq(tag_blob_busy(t, S("b"), 1), 0);
        cr_assert_eq(put(t, "r", 3, "!", 1, 0, 0, NULL), ST_OK);
        in = info_of(t, "r");
        cr_assert(in.ctime == v[i][0] && in.mtime == 1000 && in.atime == v[i][2]);
        cr_assert_eq(in.writes, 8);
    }
    cr_assert_eq(reorg(t, "b", 1.0), ST_OK); /* the heap index and home still agree */
    cr_assert_str_eq(tier_of(t, "b"), "ram");
    obj_free((obj_t *)t);
    check_tiers_consistent();
}

Test(tag_store, clock_readings_out_of_range_are_kept_within_it)
{
    /* a replayed file's "#MS:" annotation sets the clock to what it says: times stay within
     * -2^47..TAG_TIME_MAX, the range of their 48-bit fields */
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    tag_plan_t *p;
    uint64_t size;
    const long long M = TAG_TIME_MAX;
    cr_assert_eq(tag_put(t, &(tag_write_t){S("a"), 0, S("x"), 0, 0, M + 1}, &size, &p), ST_OK);
    blob_info_t in = info_of(t, "a");
    cr_assert(in.ctime == M && in.mtime == M && in.atime == M);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 0, S("x"), 0, 0, -5}, &size, &p), ST_OK);
    in = info_of(t, "b");
    cr_assert(in.ctime == -5 && in.mtime == -5 && in.atime == -5);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("c"), 0, S("x"), 0, 0, LLONG_MIN}, &size, &p),
                 ST_OK);
    in = info_of(t, "c");
    cr_assert(in.ctime == -M - 1 && in.mtime == -M - 1 && in.atime == -M - 1);
    cr_assert_eq(tag_put(t, &(tag_write_t){S("b"), 1, S("y"), 0, 0, LLONG_MAX}, &size, &p),
                 ST_OK);
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, (1LL << 48) + 7, &buf, &len, &p), ST_OK);
    xfree(buf);
    in = info_of(t, "b");
    cr_assert(in.ctime == -5 && in.mtime == M && in.atime == M);
    obj_free((obj_t *)t);
}

struct wake_name {
    char name[64];
    size_t len;
    int n;
};

static void keep_wake_name(void *ud, const char *name, size_t len)
{
    struct wake_name *w = ud;
    if (len == 6 && memcmp(name, "\xff" "space", 6) == 0) return;
    memcpy(w->name, name, len);
    w->len = len;
    w->n++;
}

Test(tag_busy, plans_and_readers_wake_the_name_of_their_blob_after_deletes)
{
    /* The tag's id in a wait name is kept by the plan or reader (the blob forgets its tag at a
     * delete): waiters of the deleted blob and of a new blob of that name are woken. */
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new(), *u = tag_new();
    char want[64], other[64];
    size_t wlen = tag_blob_waitname(t, S("b"), want), olen = tag_blob_waitname(u, S("b"), other);
    char d[5000];
    put_on_disk(t, "b", d, sizeof(d), 3);
    cr_assert_eq(put_s(u, "b", 0, "u"), ST_OK);
    /* a read plan, then TDEL of the blob */
    tag_plan_t *p;
    char *buf;
    uint64_t len;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &p), ST_PENDING);
    cr_assert_eq(tag_del(t, S("b")), 1);
    struct wake_name w = {0};
    cr_assert_eq(tag_plan_run(p), 0);
    tag_plan_finish(p, 0, keep_wake_name, &w);
    xfree(buf);
    cr_assert(w.n == 1 && w.len == wlen && memcmp(w.name, want, wlen) == 0);
    cr_assert(olen != wlen || memcmp(other, want, wlen) != 0);
    /* a reader, then the tag itself freed */
    put_on_disk(t, "b", d, sizeof(d), 4);
    tag_reader_t *r;
    cr_assert_eq(tag_reader_open(t, S("b"), 0, UINT64_MAX, 1, &r, &len), ST_OK);
    obj_free((obj_t *)t);
    w = (struct wake_name){0};
    char piece[100];
    cr_assert_eq(tag_reader_read(r, 0, sizeof(piece), piece, &p), ST_PENDING);
    cr_assert_eq(tag_plan_run(p), 0);
    tag_plan_finish(p, 0, keep_wake_name, &w);
    cr_assert(memcmp(piece, d, sizeof(piece)) == 0);
    cr_assert(w.n == 1 && w.len == wlen && memcmp(w.name, want, wlen) == 0);
    w.n = 0;
    tag_reader_close(r, keep_wake_name, &w);
    cr_assert(w.n == 1 && w.len == wlen && memcmp(w.name, want, wlen) == 0);
    obj_free((obj_t *)u);
    cr_assert_eq(used("disk"), 0);
    check_tiers_consistent();
}

Test(tag_busy, reads_wait_at_32000_references_and_go_on_after_a_close)
{
    /* References are 16-bit: TGETs and readers answer BUSY (wait on the blob's name) once
     * 32000 are taken; a peek (search, persistence) still reads; a close wakes the waiters. */
    open_tiers(rf, 2, 1 << 20);
    tag_obj_t *t = tag_new();
    cr_assert_eq(put_s(t, "b", 0, "hello"), ST_OK);
    enum { N = 31999 }; /* with the tag's own */
    tag_reader_t **r = xmalloc(sizeof(*r) * N);
    uint64_t len;
    for (int i = 0; i < N; i++)
        cr_assert_eq(tag_reader_open(t, S("b"), 0, UINT64_MAX, 1, &r[i], &len), ST_OK, "%d", i);
    tag_reader_t *x = NULL;
    cr_assert_eq(tag_reader_open(t, S("b"), 0, UINT64_MAX, 1, &x, &len), ST_BUSY);
    cr_assert_null(x);
    char *buf;
    tag_plan_t *p;
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &p), ST_BUSY);
    int io;
    blob_t *b;
    cr_assert_eq(tag_read_prepare(t, S("b"), 0, UINT64_MAX, &len, &io, &b), ST_BUSY);
    cr_assert_eq(tag_blob_busy(t, S("b"), 0), 1);
    cr_assert_eq(info_of(t, "b").reads, N, "a refused read counts no access");
    char peek[5];
    cr_assert_eq(blob_peek(tag_blob(t, S("b")), 0, 5, peek, &p), ST_OK);
    cr_assert(memcmp(peek, "hello", 5) == 0);
    char piece[5];
    cr_assert_eq(tag_reader_read(r[0], 0, 5, piece, &p), ST_OK); /* open readers go on */
    cr_assert(memcmp(piece, "hello", 5) == 0);
    /* a delete is never busy; the readers keep the blob until the last close */
    struct wake_name w = {0};
    tag_reader_close(r[N - 1], keep_wake_name, &w);
    cr_assert_eq(w.n, 1);
    cr_assert_eq(tag_blob_busy(t, S("b"), 0), 0);
    cr_assert_eq(tag_get(t, S("b"), 0, UINT64_MAX, 1, &buf, &len, &p), ST_OK);
    cr_assert(len == 5 && memcmp(buf, "hello", 5) == 0);
    xfree(buf);
    cr_assert_eq(tag_del(t, S("b")), 1);
    for (int i = 0; i < N - 1; i++) tag_reader_close(r[i], NULL, NULL);
    xfree(r);
    obj_free((obj_t *)t);
    check_tiers_consistent();
}
