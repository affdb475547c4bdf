/* Tests for tiers/tier.c: tier sets, accounting, the file-tier allocator and extent I/O.
 *
 * Every test gets a fresh directory under /tmp, removed afterwards. Capacities are small so the
 * suite stays fast; the model test drives the allocator with random operations and compares
 * it after each one with a plain array of blocks. */
#define _GNU_SOURCE
#include "common/alloc.h"
#include "tiers/tier.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Module-private in tier.c: NULL when tier i's bookkeeping is consistent, else what is wrong. */
const char *tier__check(const tier_set_t *set, int i);

#define BS 4096ull
#define RAM_BS ((uint64_t)TIER_RAM_BLOCK)
#define KB 1024ull

static char dir[64];
static char path_a[128], path_b[128];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(p);
}

static void setup(void)
{
    strcpy(dir, "/tmp/cte-tiers-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path_a, sizeof(path_a), "%s/a", dir);
    snprintf(path_b, sizeof(path_b), "%s/b/c", dir);
}

static int mounted; /* path_a is a small tmpfs (mount_small) */

static void teardown(void)
{
    char cmd[256];
    if (mounted) { /* also after a test that failed half way */
        snprintf(cmd, sizeof(cmd), "umount -l %s 2>/dev/null", path_a);
        (void)system(cmd);
        mounted = 0;
    }
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(tier_set, .init = setup, .fini = teardown);
TestSuite(tier_ram, .init = setup, .fini = teardown);
TestSuite(tier_file, .init = setup, .fini = teardown);

#define CHECK(set, i)                                                                              \
    do {                                                                                           \
        const char *why_ = tier__check((set), (i));                                                \
        cr_assert_null(why_, "tier %d: %s", (i), why_ ? why_ : "");                                \
    } while (0)

static void open_ok(tier_set_t *set, const tier_spec_t *specs, int n)
{
    char err[256] = "";
    int rc = tier_set_open(set, specs, n, err, sizeof(err));
    cr_assert_eq(rc, 0, "tier_set_open: %d %s", rc, err);
    cr_assert_eq(set->n, n);
}

/* One RAM tier of cap bytes. */
static void open_ram(tier_set_t *set, uint64_t cap)
{
    tier_spec_t s = {"mem", TIER_RAM, cap, NULL, -1};
    open_ok(set, &s, 1);
}

/* One file tier of cap bytes in path_a. */
static void open_file(tier_set_t *set, uint64_t cap)
{
    tier_spec_t s = {"ssd", TIER_FILE, cap, path_a, -1};
    open_ok(set, &s, 1);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* A small deterministic PRNG (xorshift64*). */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static void fill(char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (char)rng_next(&seed);
}

/* ---- sets ------------------------------------------------------------------------------- */

Test(tier_set, opens_and_closes_a_mixed_set)
{
    tier_set_t set;
    tier_spec_t specs[] = {
        {"mem", TIER_RAM, 1 << 20, NULL, -1},
        {"ssd", TIER_FILE, 1 << 20, path_a, -1},
        {"disk", TIER_FILE, 3 << 20, path_b, -1}, /* parents created as needed */
    };
    open_ok(&set, specs, 3);

    const char *names[] = {"mem", "ssd", "disk"};
    for (int i = 0; i < 3; i++) {
        cr_assert_str_eq(tier_name(set.t[i]), names[i]);
        cr_assert_eq(tier_kind(set.t[i]), specs[i].kind);
        cr_assert_eq(tier_capacity(set.t[i]), specs[i].capacity);
        cr_assert_eq(tier_used(set.t[i]), 0);
        cr_assert_eq(tier_free(set.t[i]), specs[i].capacity);
        cr_assert_eq(tier_stats(set.t[i])->reads, 0);
        CHECK(&set, i);
    }
    cr_assert_str_eq(tier_path(set.t[0]), "");
    cr_assert_str_eq(tier_path(set.t[1]), path_a);
    cr_assert_str_eq(tier_path(set.t[2]), path_b);

    char file[256];
    struct stat st;
    snprintf(file, sizeof(file), "%s/disk.data", path_b);
    cr_assert_eq(stat(file, &st), 0, "%s missing", file);
    cr_assert_eq(st.st_size, 3 << 20);
    cr_assert_lt((uint64_t)st.st_blocks * 512, (uint64_t)(1 << 20), "the data file is sparse");
    cr_assert_eq(st.st_mode & 0777, 0600);

    tier_set_close(&set);
    cr_assert_eq(set.n, 0);
    cr_assert_not(exists(file), "close removes the data file");
    snprintf(file, sizeof(file), "%s/ssd.data", path_a);
    cr_assert_not(exists(file));
}

Test(tier_set, truncates_a_data_file_left_from_before)
{
    char file[256];
    mkdir(path_a, 0755);
    snprintf(file, sizeof(file), "%s/ssd.data", path_a);
    FILE *f = fopen(file, "w");
    fputs("old bytes", f);
    fclose(f);

    tier_set_t set;
    open_file(&set, 64 * KB);
    tier_extent_t e;
    cr_assert_eq(tier_alloc(&set, 0, 9, &e, 1), 1);
    char buf[9];
    cr_assert_eq(tier_pread(&set, &e, 0, buf, 9), 0);
    cr_assert(memcmp(buf, "\0\0\0\0\0\0\0\0\0", 9) == 0, "the file starts empty");
    tier_free_extent(&set, &e);
    tier_set_close(&set);
}

Test(tier_set, refuses_a_data_file_another_set_holds_and_leaves_it_untouched)
{
    tier_set_t first, second;
    tier_extent_t e;
    char buf[5], err[256] = "", file[256];
    open_file(&first, 64 * KB);
    cr_assert_eq(tier_alloc(&first, 0, 5, &e, 1), 1);
    cr_assert_eq(tier_pwrite(&first, &e, 0, "first", 5), 0);

    tier_spec_t s = {"ssd", TIER_FILE, 64 * KB, path_a, -1};
    cr_assert_eq(tier_set_open(&second, &s, 1, err, sizeof(err)), -EWOULDBLOCK);
    snprintf(file, sizeof(file), "tier 'ssd': %s/ssd.data is in use by another process (pid %d)",
             path_a, (int)getpid());
    cr_assert_str_eq(err, file);
    cr_assert_eq(tier_pread(&first, &e, 0, buf, 5), 0);
    cr_assert(memcmp(buf, "first", 5) == 0, "the refused open truncated the file");
    snprintf(file, sizeof(file), "%s/ssd.data", path_a);
    cr_assert(exists(file), "the refused open removed the file");

    tier_free_extent(&first, &e);
    tier_set_close(&first);
    open_file(&second, 64 * KB); /* free again once the holder closed it */
    tier_set_close(&second);
}

static void scores_of(const double *given, int n, double *out)
{
    tier_spec_t specs[TIER_MAX];
    char names[TIER_MAX][8];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "t%d", i);
        specs[i] = (tier_spec_t){names[i], TIER_RAM, 4096, NULL, given[i]};
    }
    tier_set_t set;
    open_ok(&set, specs, n);
    for (int i = 0; i < n; i++) out[i] = tier_score(set.t[i]);
    tier_set_close(&set);
}

Test(tier_set, spreads_unset_scores_evenly_from_one_to_zero)
{
    double out[5];
    scores_of((double[]){-1, -1, -1}, 3, out);
    cr_assert_float_eq(out[0], 1.0, 1e-12);
    cr_assert_float_eq(out[1], 0.5, 1e-12);
    cr_assert_float_eq(out[2], 0.0, 1e-12);

    scores_of((double[]){-1, -1, -1, -1, -1}, 5, out);
    for (int i = 0; i < 5; i++) cr_assert_float_eq(out[i], 1.0 - i * 0.25, 1e-12);

    scores_of((double[]){-1, 0.9, -1}, 3, out);
    cr_assert_float_eq(out[0], 1.0, 1e-12);
    cr_assert_float_eq(out[1], 0.9, 1e-12, "a set score is kept");
    cr_assert_float_eq(out[2], 0.0, 1e-12);

    scores_of((double[]){-1}, 1, out);
    cr_assert_float_eq(out[0], 0.0, 1e-12, "a lone tier takes every score");
}

Test(tier_set, picks_the_fastest_tier_whose_score_is_at_most_s)
{
    tier_set_t set;
    tier_spec_t specs[] = {
        {"mem", TIER_RAM, 4096, NULL, -1},
        {"nvme", TIER_RAM, 4096, NULL, -1},
        {"disk", TIER_RAM, 4096, NULL, -1},
    };
    open_ok(&set, specs, 3); /* 1.0, 0.5, 0.0 */
    cr_assert_eq(tier_set_pick(&set, 1.0), 0);
    cr_assert_eq(tier_set_pick(&set, 0.99), 1);
    cr_assert_eq(tier_set_pick(&set, 0.5), 1);
    cr_assert_eq(tier_set_pick(&set, 0.49), 2);
    cr_assert_eq(tier_set_pick(&set, 0.0), 2);
    tier_set_close(&set);

    specs[0].score = 0.9;
    specs[1].score = 0.6;
    specs[2].score = 0.3;
    open_ok(&set, specs, 3);
    cr_assert_eq(tier_set_pick(&set, 0.95), 0);
    cr_assert_eq(tier_set_pick(&set, 0.6), 1);
    cr_assert_eq(tier_set_pick(&set, 0.1), 2, "the last tier when none matches");
    tier_set_close(&set);
}

Test(tier_set, names_an_unwritable_path_and_leaves_nothing_open)
{
    char plain[128], bad[160], err[256], expect[512];
    snprintf(plain, sizeof(plain), "%s/plain", dir);
    FILE *f = fopen(plain, "w");
    fclose(f);
    snprintf(bad, sizeof(bad), "%s/sub", plain);

    tier_set_t set;
    tier_spec_t specs[] = {
        {"ssd", TIER_FILE, 64 * KB, path_a, -1},
        {"disk", TIER_FILE, 64 * KB, bad, -1},
    };
    int rc = tier_set_open(&set, specs, 2, err, sizeof(err));
    cr_assert_eq(rc, -ENOTDIR);
    snprintf(expect, sizeof(expect), "tier 'disk': cannot create %s: Not a directory", bad);
    cr_assert_str_eq(err, expect);
    cr_assert_eq(set.n, 0);
    char file[256];
    snprintf(file, sizeof(file), "%s/ssd.data", path_a);
    cr_assert_not(exists(file), "the tier opened before the failure is closed and removed");

    /* The data file itself cannot be opened: a directory is in its place. */
    snprintf(file, sizeof(file), "%s/disk.data", path_a);
    cr_assert_eq(mkdir(path_a, 0755) == 0 || errno == EEXIST, 1);
    cr_assert_eq(mkdir(file, 0755), 0);
    specs[1].path = path_a;
    rc = tier_set_open(&set, specs, 2, err, sizeof(err));
    cr_assert_eq(rc, -EISDIR);
    snprintf(expect, sizeof(expect), "tier 'disk': cannot create %s: Is a directory", file);
    cr_assert_str_eq(err, expect);
    cr_assert(exists(file), "a file we could not open is not removed");
}

static void refuses(const tier_spec_t *specs, int n, const char *needle)
{
    tier_set_t set;
    char err[256] = "";
    cr_assert_eq(tier_set_open(&set, specs, n, err, sizeof(err)), -EINVAL, "%s", needle);
    cr_assert_not_null(strstr(err, needle), "'%s' not in '%s'", needle, err);
    cr_assert_eq(set.n, 0);
}

Test(tier_set, refuses_bad_specs_with_a_message)
{
    tier_spec_t ok = {"mem", TIER_RAM, 4096, NULL, -1};
    tier_spec_t s[2] = {ok, ok};
    refuses(s, 0, "need 1 to 16 tiers");
    s[0].score = 1.5;
    refuses(s, 1, "tier 'mem': score 1.5 is outside [0, 1]");
    s[0].score = NAN;
    refuses(s, 1, "outside [0, 1]");
    s[0] = ok;
    refuses(s, 2, "tier 'mem': name used twice");
    s[0].name = "a/b";
    refuses(s, 1, "without '/'");
    s[0] = (tier_spec_t){"disk", TIER_FILE, 4096, "", -1};
    refuses(s, 1, "tier 'disk': a file tier needs a path");
    s[0] = (tier_spec_t){"disk", 7, 4096, path_a, -1};
    refuses(s, 1, "unknown kind");
}

Test(tier_set, rounds_a_file_capacity_down_to_whole_blocks)
{
    tier_set_t set;
    open_file(&set, 3 * BS + 100);
    cr_assert_eq(tier_capacity(set.t[0]), 3 * BS);
    cr_assert_eq(tier_free(set.t[0]), 3 * BS);
    CHECK(&set, 0);
    tier_set_close(&set);
}

Test(tier_set, counts_io_for_the_caller)
{
    tier_set_t set;
    open_ram(&set, 4096);
    tier_count_io(&set, 0, 1, 100);
    tier_count_io(&set, 0, 0, 7);
    tier_count_io(&set, 0, 0, 3);
    tier_stats_t *st = tier_stats(set.t[0]);
    cr_assert_eq(st->writes, 1);
    cr_assert_eq(st->bytes_written, 100);
    cr_assert_eq(st->reads, 2);
    cr_assert_eq(st->bytes_read, 10);
    tier_set_close(&set);
}

/* ---- RAM tiers -------------------------------------------------------------------------- */

#define PAGE 4096ull

Test(tier_ram, counts_whole_16_byte_blocks_and_packs_extents_tightly)
{
    tier_set_t set;
    tier_extent_t e[3];
    open_ram(&set, 10000);
    cr_assert_eq(tier_capacity(set.t[0]), 10000 / RAM_BS * RAM_BS, "rounded down to blocks");
    cr_assert_eq(tier_alloc(&set, 0, 1, &e[0], 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, 100, &e[1], 4), 1);
    cr_assert_eq(tier_alloc(&set, 0, 4097, &e[2], 1), 1);
    cr_assert_eq(e[2].tier, 0);
    cr_assert_eq(e[2].len, 4097);
    cr_assert_eq(e[1].at.mem, e[0].at.mem + 16, "1 byte takes one block");
    cr_assert_eq(e[2].at.mem, e[1].at.mem + 112, "100 bytes take 7 blocks");
    cr_assert_eq((uintptr_t)e[0].at.mem % 16, 0, "blocks are 16-byte aligned");
    cr_assert_eq(tier_used(set.t[0]), 16 + 112 + 4112);
    cr_assert_eq(tier_free(set.t[0]), tier_capacity(set.t[0]) - tier_used(set.t[0]));
    CHECK(&set, 0);

    cr_assert_eq(tier_grow_extent(&set, &e[0], 15), 0, "inside its block");
    cr_assert_eq(tier_grow_extent(&set, &e[0], 1), -ENOSPC, "e[1] holds the next block");
    cr_assert_eq(e[0].len, 16);
    cr_assert_eq(tier_grow_extent(&set, &e[2], 50), 0, "into the free blocks after it");
    cr_assert_eq(e[2].len, 4147);
    cr_assert_eq(tier_used(set.t[0]), 16 + 112 + 4160);
    tier_shrink_extent(&set, &e[2], 4000);
    cr_assert_eq(e[2].len, 4000);
    cr_assert_eq(tier_used(set.t[0]), 16 + 112 + 4000);
    tier_shrink_extent(&set, &e[0], 0);
    cr_assert_eq(tier_used(set.t[0]), 112 + 4000);
    CHECK(&set, 0);

    for (int i = 0; i < 3; i++) tier_free_extent(&set, &e[i]);
    cr_assert_eq(tier_used(set.t[0]), 0);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 0, e, 1), 0, "zero bytes need no extent");
    tier_set_close(&set);
}

/* used_memory counts the tier's blocks in use (tier_mem == tier_used); besides, only the
 * allocator's nodes for free runs (a few, here) */
#define NODES 512
Test(tier_ram, counts_its_blocks_in_used_memory)
{
    tier_set_t set;
    tier_extent_t e[2];
    size_t base = alloc_used_memory();
    open_ram(&set, 1 << 20);
    size_t before = alloc_used_memory();
    cr_assert_eq(tier_alloc(&set, 0, 17000, &e[0], 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, 100, &e[1], 1), 1);
    cr_assert_eq(tier_mem(set.t[0]), tier_used(set.t[0]));
    cr_assert_eq(alloc_used_memory() - before, 17008 + 112);
    cr_assert_eq(tier_grow_extent(&set, &e[1], 70000), 0);
    tier_shrink_extent(&set, &e[0], 10);
    cr_assert_eq(tier_mem(set.t[0]), 16 + 70112);
    cr_assert_geq(alloc_used_memory() - before, tier_mem(set.t[0]));
    cr_assert_leq(alloc_used_memory() - before, tier_mem(set.t[0]) + NODES);
    tier_free_extent(&set, &e[0]);
    cr_assert_geq(alloc_used_memory() - before, tier_mem(set.t[0]));
    cr_assert_leq(alloc_used_memory() - before, tier_mem(set.t[0]) + NODES);
    tier_set_close(&set); /* e[1] is still allocated: it goes with the region */
    cr_assert_eq(alloc_used_memory(), base);
}

Test(tier_ram, refuses_past_capacity_leaving_nothing_allocated)
{
    tier_set_t set;
    tier_extent_t a, b, c[2];
    open_ram(&set, 1024);
    cr_assert_eq(tier_alloc(&set, 0, 600, &a, 1), 1);
    size_t mem = alloc_used_memory();
    cr_assert_eq(tier_alloc(&set, 0, 417, &b, 1), -ENOSPC, "417 bytes need 432");
    cr_assert_eq(tier_used(set.t[0]), 608);
    cr_assert_eq(tier_alloc(&set, 0, 10, &b, 0), -E2BIG, "no room for an extent in out");
    cr_assert_eq(tier_used(set.t[0]), 608);
    cr_assert_eq(alloc_used_memory(), mem);

    tier_extent_t before = a;
    cr_assert_eq(tier_grow_extent(&set, &a, 425), -ENOSPC);
    cr_assert(memcmp(&a, &before, sizeof(a)) == 0, "a failed grow leaves the extent as it was");
    cr_assert_eq(tier_alloc(&set, 0, 416, &b, 1), 1);
    cr_assert_eq(tier_free(set.t[0]), 0);
    CHECK(&set, 0);
    /* free room in two runs: one extent cannot hold it, two can */
    tier_free_extent(&set, &a);
    cr_assert_eq(tier_alloc(&set, 0, 300, &a, 1), 1);
    tier_free_extent(&set, &b);
    cr_assert_eq(tier_alloc(&set, 0, 200, &b, 1), 1);
    cr_assert_eq(b.at.mem, a.at.mem + 304, "best fit: the run after a");
    uint64_t room = tier_free(set.t[0]);
    cr_assert_eq(room, 1024 - 304 - 208);
    tier_free_extent(&set, &a); /* free: [0, 304) and [512, 1024) */
    cr_assert_eq(tier_alloc(&set, 0, 600, c, 1), -E2BIG, "816 free, in two runs");
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 600, c, 2), 2);
    cr_assert_eq(c[0].len + c[1].len, 600);
    cr_assert_eq(tier_used(set.t[0]), 208 + 608);
    CHECK(&set, 0);
    tier_set_close(&set);
}

/* The region is address space: a capacity far above the machine's memory maps (untouched
 * pages cost nothing), and one the address space cannot hold is cut down until it maps. */
Test(tier_ram, maps_capacities_beyond_the_machine_and_cuts_impossible_ones)
{
    tier_set_t set;
    tier_extent_t a, b;
    open_ram(&set, 64ull << 30);
    cr_assert_eq(tier_capacity(set.t[0]), 64ull << 30);
    size_t rss = alloc_rss();
    cr_assert_eq(tier_alloc(&set, 0, 32ull << 30, &a, 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, 1000, &b, 1), 1);
    memset(a.at.mem + (16ull << 30), 1, 100); /* one page in the middle */
    memset(b.at.mem, 2, 1000);
    cr_assert_lt(alloc_rss(), rss + (16u << 20), "only touched pages are resident");
    tier_set_close(&set);

    open_ram(&set, 1ull << 62); /* beyond the 47-bit address space */
    uint64_t cap = tier_capacity(set.t[0]);
    cr_assert(cap > 0 && cap < 1ull << 62 && cap % RAM_BS == 0, "cut to %llu",
              (unsigned long long)cap);
    cr_assert_eq(tier_alloc(&set, 0, cap + 1, &a, 1), -ENOSPC);
    cr_assert_eq(tier_alloc(&set, 0, 10, &a, 1), 1);
    a.at.mem[9] = 'x';
    tier_set_close(&set);

    open_ram(&set, 0);
    cr_assert_eq(tier_capacity(set.t[0]), 0);
    cr_assert_eq(tier_alloc(&set, 0, 1, &a, 1), -ENOSPC);
    CHECK(&set, 0);
    tier_set_close(&set);
}

Test(tier_ram, refuses_an_extent_longer_than_tier_extent_max)
{
    tier_set_t set;
    tier_extent_t a;
    open_ram(&set, UINT64_MAX);
    cr_assert_eq(tier_alloc(&set, 0, TIER_EXTENT_MAX + 1, &a, 1), -ENOSPC);
    cr_assert_eq(tier_used(set.t[0]), 0);
    cr_assert_eq(tier_alloc(&set, 0, 10, &a, 1), 1);
    cr_assert_eq(tier_grow_extent(&set, &a, TIER_EXTENT_MAX - 9), -ENOSPC);
    cr_assert_eq(a.len, 10);
    tier_free_extent(&set, &a);
    tier_set_close(&set);
}

Test(tier_ram, keeps_the_bytes_through_grow_and_shrink)
{
    tier_set_t set;
    tier_extent_t e;
    char data[100000], back[100000];
    fill(data, sizeof(data), 42);
    open_ram(&set, 1 << 20);
    cr_assert_eq(tier_alloc(&set, 0, 1000, &e, 1), 1);
    char *at = e.at.mem;
    cr_assert_eq(tier_pwrite(&set, &e, 0, data, 1000), 0);
    cr_assert_eq(tier_grow_extent(&set, &e, 99000), 0);
    cr_assert_eq(e.at.mem, at, "grown in place");
    cr_assert_eq(tier_pwrite(&set, &e, 1000, data + 1000, 99000), 0);
    cr_assert_eq(tier_pread(&set, &e, 0, back, 100000), 0);
    cr_assert(memcmp(back, data, 100000) == 0);
    tier_shrink_extent(&set, &e, 333);
    cr_assert_eq(tier_pread(&set, &e, 0, back, 333), 0);
    cr_assert(memcmp(back, data, 333) == 0);
    cr_assert_eq(tier_zero(&set, &e, 10, 20), 0);
    cr_assert_eq(tier_pread(&set, &e, 7, back, 26), 0);
    cr_assert(memcmp(back, data + 7, 3) == 0 && back[3] == 0 && back[22] == 0);
    cr_assert(memcmp(back + 23, data + 30, 3) == 0);
    CHECK(&set, 0);
    tier_free_extent(&set, &e);
    tier_set_close(&set);
}

Test(tier_ram, coalesces_freed_neighbours_into_one_run)
{
    tier_set_t set;
    tier_extent_t e[64], big;
    open_ram(&set, 64 * 1008);
    for (int i = 0; i < 64; i++) cr_assert_eq(tier_alloc(&set, 0, 1000, &e[i], 1), 1);
    cr_assert_eq(tier_free(set.t[0]), 0, "1000 bytes take 1008");
    for (int i = 0; i < 64; i += 2) tier_free_extent(&set, &e[i]);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 2000, &big, 1), -E2BIG, "holes of 1008 bytes only");
    for (int i = 1; i < 64; i += 2) tier_free_extent(&set, &e[i]);
    CHECK(&set, 0);
    cr_assert_eq(tier_used(set.t[0]), 0);
    cr_assert_eq(tier_alloc(&set, 0, tier_capacity(set.t[0]), &big, 1), 1, "one run again");
    cr_assert_eq(big.at.mem, e[0].at.mem);
    tier_set_close(&set);
}

/* The pages [p, p + len) touches. */
static size_t pages(const char *p, size_t len)
{
    uintptr_t a = (uintptr_t)p / PAGE * PAGE;
    return ((uintptr_t)p + len - a + PAGE - 1) / PAGE;
}

/* How many of those pages are resident, from mincore. */
static size_t resident(const char *p, size_t len)
{
    static unsigned char vec[(64u << 20) / PAGE];
    uintptr_t a = (uintptr_t)p / PAGE * PAGE;
    size_t n = pages(p, len), count = 0;
    cr_assert_leq(n, sizeof(vec));
    cr_assert_eq(mincore((void *)a, n * PAGE, vec), 0);
    for (size_t i = 0; i < n; i++) count += vec[i] & 1;
    return count;
}

Test(tier_ram, gives_freed_pages_back_in_batches)
{
    if (sysconf(_SC_PAGESIZE) != (long)PAGE) cr_skip_test("pages are not 4 KiB");
    enum { N = 8192 };
    static tier_extent_t e[N];
    tier_set_t set;
    open_ram(&set, 64ull << 20);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(tier_alloc(&set, 0, 1000, &e[i], 1), 1);
        memset(e[i].at.mem, 'a', 1000);
    }
    char *start = e[0].at.mem;
    size_t span = (size_t)(e[N - 1].at.mem + 1000 - start);
    cr_assert_geq(resident(start, span), span / PAGE - 1, "touched pages are resident");

    /* a small free costs no system call: its page stays */
    tier_free_extent(&set, &e[100]);
    tier_free_extent(&set, &e[101]);
    tier_free_extent(&set, &e[102]);
    tier_free_extent(&set, &e[103]);
    tier_free_extent(&set, &e[104]);
    cr_assert_eq(resident(e[101].at.mem, 3000), pages(e[101].at.mem, 3000),
                 "below the batch: kept");
    CHECK(&set, 0);
    /* freed again at once, a run keeps its pages (an overwrite does not fault them in again) */
    tier_extent_t x;
    cr_assert_eq(tier_alloc(&set, 0, 5040, &x, 1), 1);
    cr_assert_eq(x.at.mem, e[100].at.mem, "the freed run is the best fit");
    tier_free_extent(&set, &x);

    /* frees in random order: the pages come back as the batches fill */
    srand(7);
    for (int i = N - 1; i > 0; i--) {
        int j = rand() % (i + 1);
        tier_extent_t t = e[i];
        e[i] = e[j];
        e[j] = t;
    }
    for (int i = 0; i < N; i++) {
        if (e[i].at.mem >= start + 100 * 1008 && e[i].at.mem < start + 105 * 1008) continue;
        tier_free_extent(&set, &e[i]);
        if (i % 1000 == 0) CHECK(&set, 0);
    }
    CHECK(&set, 0);
    cr_assert_eq(tier_used(set.t[0]), 0);
    cr_assert_leq(resident(start, span), (1u << 20) / PAGE + 1,
                  "at most a batch of free pages stays: %zu of %zu", resident(start, span),
                  span / PAGE);
    /* purged pages read as zeros and can be used again */
    cr_assert_eq(tier_alloc(&set, 0, span, &x, 1), 1);
    memset(x.at.mem, 'b', span);
    cr_assert_eq(x.at.mem[span - 1], 'b');
    tier_set_close(&set);
}

Test(tier_ram, close_unmaps_the_extents_still_allocated)
{
    size_t base = alloc_used_memory();
    tier_set_t set;
    tier_extent_t e;
    open_ram(&set, 1 << 20);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(tier_alloc(&set, 0, 1000 + i, &e, 1), 1);
        memset(e.at.mem, 1, e.len);
    }
    cr_assert_geq(alloc_used_memory(), base + tier_used(set.t[0]));
    CHECK(&set, 0);
    tier_set_close(&set);
    cr_assert_eq(alloc_used_memory(), base);
}

Test(tier_ram, a_free_of_memory_from_outside_the_tier_aborts, .signal = SIGABRT)
{
    tier_set_t set;
    tier_extent_t e, other;
    static char elsewhere[128];
    open_ram(&set, 1 << 20);
    cr_assert_eq(tier_alloc(&set, 0, 100, &e, 1), 1);
    other = e;
    other.at.mem = elsewhere;
    tier_free_extent(&set, &other);
}

Test(tier_ram, a_second_ram_tier_has_a_region_of_its_own)
{
    tier_set_t set;
    tier_spec_t specs[] = {{"a", TIER_RAM, 1 << 20, NULL, -1}, {"b", TIER_RAM, 1 << 20, NULL, -1}};
    char err[128];
    cr_assert_eq(tier_set_open(&set, specs, 2, err, sizeof(err)), 0, "%s", err);
    size_t base = alloc_used_memory();
    tier_extent_t a, b;
    cr_assert_eq(tier_alloc(&set, 0, 3000, &a, 1), 1);
    cr_assert_eq(tier_alloc(&set, 1, 5000, &b, 1), 1);
    cr_assert(b.at.mem >= a.at.mem + (1 << 20) || a.at.mem >= b.at.mem + (1 << 20));
    cr_assert_eq(tier_mem(set.t[0]), 3008);
    cr_assert_eq(tier_mem(set.t[1]), 5008);
    cr_assert_eq(alloc_used_memory(), base + 3008 + 5008);
    CHECK(&set, 0);
    CHECK(&set, 1);
    tier_free_extent(&set, &a);
    CHECK(&set, 0);
    CHECK(&set, 1);
    tier_free_extent(&set, &b);
    tier_set_close(&set);
}

/* ---- file tiers: accounting and the allocator -------------------------------------------- */

Test(tier_file, counts_whole_blocks)
{
    tier_set_t set;
    tier_extent_t a, b;
    open_file(&set, 16 * BS);
    cr_assert_eq(tier_alloc(&set, 0, 1, &a, 1), 1);
    cr_assert_eq(a.len, 1);
    cr_assert_eq(tier_used(set.t[0]), BS);
    cr_assert_eq(tier_alloc(&set, 0, BS + 1, &b, 1), 1);
    cr_assert_eq(b.len, BS + 1);
    cr_assert_eq(tier_used(set.t[0]), 3 * BS);
    cr_assert_eq(b.at.off, a.at.off + BS, "small blobs pack tightly");

    cr_assert_eq(tier_grow_extent(&set, &a, BS - 1), 0, "growing inside the last block");
    cr_assert_eq(tier_used(set.t[0]), 3 * BS);
    tier_extent_t before = a;
    cr_assert_eq(tier_grow_extent(&set, &a, 1), -ENOSPC, "b holds the next block");
    cr_assert(memcmp(&a, &before, sizeof(a)) == 0);

    cr_assert_eq(tier_grow_extent(&set, &b, BS - 1), 0);
    cr_assert_eq(tier_used(set.t[0]), 3 * BS);
    cr_assert_eq(tier_grow_extent(&set, &b, 1), 0);
    cr_assert_eq(b.len, 2 * BS + 1);
    cr_assert_eq(tier_used(set.t[0]), 4 * BS);
    CHECK(&set, 0);

    tier_shrink_extent(&set, &b, 1);
    cr_assert_eq(b.len, 1);
    cr_assert_eq(tier_used(set.t[0]), 2 * BS);
    tier_shrink_extent(&set, &a, 4000);
    cr_assert_eq(tier_used(set.t[0]), 2 * BS, "no whole block to return");
    CHECK(&set, 0);
    tier_free_extent(&set, &a);
    tier_free_extent(&set, &b);
    cr_assert_eq(tier_used(set.t[0]), 0);
    cr_assert_eq(tier_free(set.t[0]), 16 * BS);
    CHECK(&set, 0);
    tier_set_close(&set);
}

Test(tier_file, refuses_more_than_its_free_space_leaving_nothing_allocated)
{
    tier_set_t set;
    tier_extent_t e[4];
    open_file(&set, 16 * BS);
    cr_assert_eq(tier_alloc(&set, 0, 16 * BS + 1, e, 4), -ENOSPC);
    cr_assert_eq(tier_used(set.t[0]), 0);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 16 * BS, e, 1), 1);
    cr_assert_eq(e[0].at.off, 0);
    cr_assert_eq(tier_alloc(&set, 0, 1, e + 1, 1), -ENOSPC);
    cr_assert_eq(tier_free(set.t[0]), 0);
    CHECK(&set, 0);
    tier_free_extent(&set, e);
    tier_set_close(&set);
}

Test(tier_file, splits_into_runs_when_fragmented_and_coalesces_after_frees)
{
    tier_set_t set;
    tier_extent_t one[64], big[16];
    open_file(&set, 64 * BS);
    for (int i = 0; i < 64; i++) {
        cr_assert_eq(tier_alloc(&set, 0, BS, &one[i], 1), 1);
        cr_assert_eq(one[i].at.off, i * BS);
    }
    for (int i = 1; i < 64; i += 2) tier_free_extent(&set, &one[i]);
    cr_assert_eq(tier_used(set.t[0]), 32 * BS);
    CHECK(&set, 0);

    cr_assert_eq(tier_alloc(&set, 0, 8 * BS, big, 7), -E2BIG, "8 single blocks are needed");
    cr_assert_eq(tier_used(set.t[0]), 32 * BS, "nothing taken");
    CHECK(&set, 0);

    int n = tier_alloc(&set, 0, 8 * BS + 100, big, 16);
    cr_assert_eq(n, 9);
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(big[i].at.off % (2 * BS), BS, "only the freed odd blocks are handed out");
        cr_assert_eq(big[i].len, i < 8 ? BS : 100);
        total += big[i].len;
    }
    cr_assert_eq(total, 8 * BS + 100);
    cr_assert_eq(tier_used(set.t[0]), 41 * BS);
    CHECK(&set, 0);

    for (int i = 0; i < n; i++) tier_free_extent(&set, &big[i]);
    for (int i = 0; i < 64; i += 2) tier_free_extent(&set, &one[i]);
    cr_assert_eq(tier_used(set.t[0]), 0);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 64 * BS, big, 1), 1, "every free block merged back");
    cr_assert_eq(big[0].at.off, 0);
    tier_free_extent(&set, &big[0]);
    tier_set_close(&set);
}

Test(tier_file, merges_a_freed_run_with_both_neighbours)
{
    tier_set_t set;
    tier_extent_t a, b, c, d, e;
    open_file(&set, 8 * BS);
    cr_assert_eq(tier_alloc(&set, 0, 2 * BS, &a, 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, BS, &b, 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, 3 * BS, &c, 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, 2 * BS, &d, 1), 1);
    tier_free_extent(&set, &a);
    tier_free_extent(&set, &c);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 5 * BS, &e, 1), -E2BIG, "5 blocks free, in 2 runs");
    tier_free_extent(&set, &b);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 6 * BS, &e, 1), 1);
    cr_assert_eq(e.at.off, 0);
    tier_free_extent(&set, &e);
    tier_free_extent(&set, &d);
    tier_set_close(&set);
}

Test(tier_file, prefers_the_smallest_run_that_fits)
{
    tier_set_t set;
    tier_extent_t e[6], x;
    open_file(&set, 32 * BS);
    uint64_t sizes[] = {4, 1, 2, 1, 3, 1}; /* then 20 blocks free at the end */
    for (int i = 0; i < 6; i++) cr_assert_eq(tier_alloc(&set, 0, sizes[i] * BS, &e[i], 1), 1);
    tier_free_extent(&set, &e[0]); /* 4 free at 0 */
    tier_free_extent(&set, &e[2]); /* 2 free at 5 */
    tier_free_extent(&set, &e[4]); /* 3 free at 8 */
    cr_assert_eq(tier_alloc(&set, 0, 3 * BS, &x, 1), 1);
    cr_assert_eq(x.at.off, 8 * BS);
    tier_free_extent(&set, &x);
    cr_assert_eq(tier_alloc(&set, 0, 2 * BS - 5, &x, 1), 1);
    cr_assert_eq(x.at.off, 5 * BS);
    CHECK(&set, 0);
    tier_set_close(&set);
}

Test(tier_file, grows_in_place_only_into_free_blocks)
{
    tier_set_t set;
    tier_extent_t a, b;
    open_file(&set, 4 * BS);
    cr_assert_eq(tier_alloc(&set, 0, BS, &a, 1), 1);
    cr_assert_eq(tier_alloc(&set, 0, BS, &b, 1), 1);
    cr_assert_eq(tier_grow_extent(&set, &a, BS), -ENOSPC);
    tier_free_extent(&set, &b);
    cr_assert_eq(tier_grow_extent(&set, &a, 2 * BS), 0);
    cr_assert_eq(a.len, 3 * BS);
    cr_assert_eq(a.at.off, 0);
    cr_assert_eq(tier_used(set.t[0]), 3 * BS);
    cr_assert_eq(tier_grow_extent(&set, &a, BS + 1), -ENOSPC, "past the end of the file");
    cr_assert_eq(tier_grow_extent(&set, &a, BS), 0);
    cr_assert_eq(tier_free(set.t[0]), 0);
    CHECK(&set, 0);
    cr_assert_eq(tier_grow_extent(&set, &a, 0), 0);
    tier_free_extent(&set, &a);
    tier_set_close(&set);
}

Test(tier_file, shrink_returns_whole_trailing_blocks_for_reuse)
{
    tier_set_t set;
    tier_extent_t a, b;
    open_file(&set, 32 * BS);
    cr_assert_eq(tier_alloc(&set, 0, 10 * BS, &a, 1), 1);
    tier_shrink_extent(&set, &a, 3 * BS + 1);
    cr_assert_eq(tier_used(set.t[0]), 4 * BS);
    CHECK(&set, 0);
    cr_assert_eq(tier_alloc(&set, 0, 6 * BS, &b, 1), 1);
    cr_assert_eq(b.at.off, 4 * BS, "the freed tail is the best fit");
    tier_free_extent(&set, &b);
    cr_assert_eq(tier_grow_extent(&set, &a, 7 * BS - 1), 0, "and can be grown into again");
    cr_assert_eq(tier_used(set.t[0]), 10 * BS);
    tier_shrink_extent(&set, &a, 0);
    cr_assert_eq(tier_used(set.t[0]), 0);
    CHECK(&set, 0);
    tier_free_extent(&set, &a);
    cr_assert_eq(tier_used(set.t[0]), 0);
    tier_set_close(&set);
}

/* ---- file tiers: data --------------------------------------------------------------------- */

/* A blob made of n extents, addressed by logical offset: splits one transfer over them. */
static void blob_io(tier_set_t *set, tier_extent_t *e, int n, uint64_t off, char *buf, uint64_t len,
                    int write)
{
    for (int i = 0; i < n && len; i++) {
        if (off >= e[i].len) {
            off -= e[i].len;
            continue;
        }
        uint64_t k = e[i].len - off < len ? e[i].len - off : len;
        int rc = write ? tier_pwrite(set, &e[i], off, buf, k) : tier_pread(set, &e[i], off, buf, k);
        cr_assert_eq(rc, 0, "extent %d: %s", i, strerror(-rc));
        buf += k;
        len -= k;
        off = 0;
    }
    cr_assert_eq(len, 0, "transfer past the blob");
}

static void round_trip(tier_set_t *set, tier_extent_t *e, int n, uint64_t size)
{
    char *shadow = calloc(1, size), *buf = malloc(size);
    uint64_t seed = 7;
    blob_io(set, e, n, 0, shadow, size, 1);
    for (int round = 0; round < 200; round++) {
        uint64_t off = rng_next(&seed) % size;
        uint64_t len = 1 + rng_next(&seed) % (size - off);
        if (round % 3 == 0 && len > 3 * BS) len = 1 + rng_next(&seed) % 700; /* some short */
        fill(buf, len, seed);
        memcpy(shadow + off, buf, len);
        blob_io(set, e, n, off, buf, len, 1);
        uint64_t roff = rng_next(&seed) % size, rlen = 1 + rng_next(&seed) % (size - roff);
        blob_io(set, e, n, roff, buf, rlen, 0);
        cr_assert(memcmp(buf, shadow + roff, rlen) == 0, "round %d: [%llu, +%llu)", round,
                  (unsigned long long)roff, (unsigned long long)rlen);
    }
    blob_io(set, e, n, 0, buf, size, 0);
    cr_assert(memcmp(buf, shadow, size) == 0);
    free(shadow);
    free(buf);
}

Test(tier_file, round_trips_data_at_odd_offsets_across_run_boundaries)
{
    tier_set_t set;
    tier_extent_t one[32], blob[8];
    char pat[BS], back[BS];
    open_file(&set, 32 * BS);
    for (int i = 0; i < 32; i++) cr_assert_eq(tier_alloc(&set, 0, BS, &one[i], 1), 1);
    for (int i = 1; i < 32; i += 2) tier_free_extent(&set, &one[i]);
    memset(pat, 0xEE, sizeof(pat));
    for (int i = 0; i < 32; i += 2) cr_assert_eq(tier_pwrite(&set, &one[i], 0, pat, BS), 0);

    uint64_t size = 5 * BS + 777;
    int n = tier_alloc(&set, 0, size, blob, 8);
    cr_assert_eq(n, 6);
    round_trip(&set, blob, n, size);
    for (int i = 0; i < 32; i += 2) {
        cr_assert_eq(tier_pread(&set, &one[i], 0, back, BS), 0);
        cr_assert(memcmp(back, pat, BS) == 0, "neighbour %d untouched", i);
    }
    tier_set_close(&set);
}

Test(tier_ram, round_trips_data_at_odd_offsets)
{
    tier_set_t set;
    tier_extent_t e;
    open_ram(&set, 1 << 20);
    cr_assert_eq(tier_alloc(&set, 0, 50001, &e, 1), 1);
    round_trip(&set, &e, 1, 50001);
    tier_free_extent(&set, &e);
    tier_set_close(&set);
}

Test(tier_file, zeroes_small_and_large_ranges)
{
    tier_set_t set;
    tier_extent_t e[2];
    uint64_t size = 40 * BS + 123;
    char *shadow = malloc(size), *back = malloc(size);
    open_file(&set, 64 * BS);
    cr_assert_eq(tier_alloc(&set, 0, BS, &e[1], 1), 1); /* a neighbour before */
    cr_assert_eq(tier_alloc(&set, 0, size, &e[0], 1), 1);
    memset(shadow, 0xAB, size);
    cr_assert_eq(tier_pwrite(&set, &e[0], 0, shadow, size), 0);
    cr_assert_eq(tier_pwrite(&set, &e[1], 0, shadow, BS), 0);

    cr_assert_eq(tier_zero(&set, &e[0], 5, 100), 0);
    memset(shadow + 5, 0, 100);
    cr_assert_eq(tier_zero(&set, &e[0], 2 * BS + 3, 30 * BS), 0); /* whole blocks inside */
    memset(shadow + 2 * BS + 3, 0, 30 * BS);
    cr_assert_eq(tier_zero(&set, &e[0], size - 50, 50), 0);
    memset(shadow + size - 50, 0, 50);
    cr_assert_eq(tier_zero(&set, &e[0], 7, 0), 0);

    cr_assert_eq(tier_pread(&set, &e[0], 0, back, size), 0);
    cr_assert(memcmp(back, shadow, size) == 0);
    cr_assert_eq(tier_pread(&set, &e[1], 0, back, BS), 0);
    for (uint64_t i = 0; i < BS; i++) cr_assert_eq((unsigned char)back[i], 0xAB);
    free(shadow);
    free(back);
    tier_set_close(&set);
}

Test(tier_file, delays_io_when_asked)
{
    tier_set_t set;
    tier_extent_t e;
    char c = 'x';
    open_file(&set, 4 * BS);
    cr_assert_eq(tier_alloc(&set, 0, 1, &e, 1), 1);
    tier_set_delay(&set, 0, 30000);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(tier_pwrite(&set, &e, 0, &c, 1), 0);
    cr_assert_eq(tier_pread(&set, &e, 0, &c, 1), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    cr_assert_geq(ms, 60.0, "two delayed calls took %.1f ms", ms);
    cr_assert_eq(c, 'x');
    tier_set_delay(&set, 0, 0);
    tier_set_close(&set);
}

typedef struct worker {
    tier_set_t *set;
    tier_extent_t e;
    uint64_t seed;
    char *shadow;
    int failed;
} worker_t;

static void *worker_run(void *arg)
{
    worker_t *w = arg;
    uint64_t size = w->e.len;
    char *buf = malloc(size);
    for (int i = 0; i < 300 && !w->failed; i++) {
        uint64_t off = rng_next(&w->seed) % size, len = 1 + rng_next(&w->seed) % (size - off);
        fill(buf, len, w->seed);
        memcpy(w->shadow + off, buf, len);
        if (tier_pwrite(w->set, &w->e, off, buf, len) < 0) w->failed = 1;
        off = rng_next(&w->seed) % size;
        len = 1 + rng_next(&w->seed) % (size - off);
        if (tier_pread(w->set, &w->e, off, buf, len) < 0) w->failed = 1;
        if (memcmp(buf, w->shadow + off, len) != 0) w->failed = 2;
    }
    free(buf);
    return NULL;
}

Test(tier_file, serves_concurrent_reads_and_writes_from_four_threads)
{
    tier_set_t set;
    worker_t w[4];
    pthread_t th[4];
    open_file(&set, 256 * KB);
    for (int i = 0; i < 4; i++) {
        uint64_t size = 3 * BS * (i + 1) + 1111 * i + 1; /* odd sizes, back to back */
        w[i] = (worker_t){&set, {0}, 1000 + i, calloc(1, size), 0};
        cr_assert_eq(tier_alloc(&set, 0, size, &w[i].e, 1), 1);
        cr_assert_eq(tier_zero(&set, &w[i].e, 0, size), 0);
    }
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker_run, &w[i]);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(w[i].failed, 0, "worker %d", i);
        char *back = malloc(w[i].e.len);
        cr_assert_eq(tier_pread(&set, &w[i].e, 0, back, w[i].e.len), 0);
        cr_assert(memcmp(back, w[i].shadow, w[i].e.len) == 0, "extent %d intact", i);
        free(back);
        free(w[i].shadow);
    }
    tier_set_close(&set);
}

/* ---- the allocator against a model (file and RAM tiers) --------------------------------- */

#define MODEL_BLOCKS 192
#define MODEL_LIVE 512

typedef struct model {
    tier_set_t set;
    uint8_t taken[MODEL_BLOCKS];
    tier_extent_t live[MODEL_LIVE];
    int nlive;
    uint64_t rng;
    uint64_t bs; /* the tier's block: BS or RAM_BS */
    char *base;  /* RAM: the region (the first extent's address, when it starts at 0) */
} model_t;

static uint64_t bs_now = BS; /* the block of the model that runs */

static uint64_t blocks_of(uint64_t len)
{
    return (len + bs_now - 1) / bs_now;
}

/* The first block of e: its file offset, or its distance from the region's start. */
static uint64_t model_block(const model_t *m, const tier_extent_t *e)
{
    uint64_t off = m->base ? (uint64_t)(e->at.mem - m->base) : e->at.off;
    cr_assert_eq(off % m->bs, 0, "extent at %llu is not block aligned", (unsigned long long)off);
    return off / m->bs;
}

static uint64_t model_used(const model_t *m)
{
    uint64_t n = 0;
    for (int b = 0; b < MODEL_BLOCKS; b++) n += m->taken[b];
    return n;
}

static int desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

/* The free runs of the model, largest first; returns how many. */
static int model_runs(const model_t *m, uint64_t *runs)
{
    int n = 0;
    for (int b = 0; b < MODEL_BLOCKS;) {
        if (m->taken[b]) {
            b++;
            continue;
        }
        int s = b;
        while (b < MODEL_BLOCKS && !m->taken[b]) b++;
        runs[n++] = b - s;
    }
    qsort(runs, n, sizeof(*runs), desc);
    return n;
}

static void model_mark(model_t *m, uint64_t first, uint64_t n, int taken)
{
    for (uint64_t b = first; b < first + n; b++) {
        cr_assert_lt(b, MODEL_BLOCKS);
        cr_assert_eq(m->taken[b], !taken, "block %llu is %s", (unsigned long long)b,
                     taken ? "handed out twice" : "freed twice");
        m->taken[b] = (uint8_t)taken;
    }
}

static void model_alloc(model_t *m)
{
    uint64_t r = rng_next(&m->rng);
    uint64_t nblk = r % 100 < 80 ? 1 + r / 100 % 4 : 1 + r / 100 % 48;
    uint64_t len = (nblk - 1) * m->bs + 1 + rng_next(&m->rng) % m->bs;
    int max = 1 + (int)(rng_next(&m->rng) % 5);
    if (m->nlive + max > MODEL_LIVE) return;

    uint64_t runs[MODEL_BLOCKS], sum = 0;
    int nruns = model_runs(m, runs);
    for (int i = 0; i < nruns && i < max; i++) sum += runs[i];
    int expect = nblk > MODEL_BLOCKS - model_used(m) ? -ENOSPC : sum < nblk ? -E2BIG : 0;

    tier_extent_t *out = &m->live[m->nlive];
    int n = tier_alloc(&m->set, 0, len, out, max);
    if (expect < 0) {
        cr_assert_eq(n, expect, "alloc of %llu blocks in %d runs", (unsigned long long)nblk, max);
        return;
    }
    cr_assert(n >= 1 && n <= max, "alloc returned %d", n);
    if (runs[0] >= nblk) cr_assert_eq(n, 1, "one run fits, so one extent");
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_gt(out[i].len, 0);
        model_mark(m, model_block(m, &out[i]), blocks_of(out[i].len), 1);
        total += out[i].len;
    }
    cr_assert_eq(total, len);
    m->nlive += n;
}

static void model_free(model_t *m)
{
    if (!m->nlive) return;
    int i = (int)(rng_next(&m->rng) % m->nlive);
    tier_extent_t e = m->live[i];
    tier_free_extent(&m->set, &e);
    model_mark(m, model_block(m, &e), blocks_of(e.len), 0);
    m->live[i] = m->live[--m->nlive];
}

static void model_grow(model_t *m)
{
    if (!m->nlive) return;
    tier_extent_t *e = &m->live[rng_next(&m->rng) % m->nlive], before = *e;
    uint64_t r = rng_next(&m->rng);
    uint64_t extra = r % 3 == 0 ? 1 + r / 3 % (m->bs / 40 + 1) : 1 + r / 3 % (3 * m->bs);
    uint64_t first = model_block(m, e), have = blocks_of(e->len), need = blocks_of(e->len + extra);
    int fits = 1;
    for (uint64_t b = first + have; b < first + need; b++)
        if (b >= MODEL_BLOCKS || m->taken[b]) fits = 0;

    int rc = tier_grow_extent(&m->set, e, extra);
    if (!fits) {
        cr_assert_eq(rc, -ENOSPC);
        cr_assert(memcmp(e, &before, sizeof(*e)) == 0);
        return;
    }
    cr_assert_eq(rc, 0, "grow by %llu into free blocks", (unsigned long long)extra);
    cr_assert_eq(e->len, before.len + extra);
    cr_assert_eq(e->at.off, before.at.off, "grown in place");
    model_mark(m, first + have, need - have, 1);
}

static void model_shrink(model_t *m)
{
    if (!m->nlive) return;
    tier_extent_t *e = &m->live[rng_next(&m->rng) % m->nlive];
    if (e->len == 0) return;
    uint64_t r = rng_next(&m->rng);
    uint64_t new_len = r % 6 == 0 ? 0 : r / 6 % e->len; /* empty extents grow from anywhere */
    uint64_t first = model_block(m, e), have = blocks_of(e->len), keep = blocks_of(new_len);
    tier_shrink_extent(&m->set, e, new_len);
    cr_assert_eq(e->len, new_len);
    model_mark(m, first + keep, have - keep, 0);
}

/* Random allocs, frees, grows and shrinks on a tier of MODEL_BLOCKS blocks, each step checked
 * against the model (which blocks are taken, what alloc and grow must answer) and tier__check. */
static void run_model(model_t *m)
{
    bs_now = m->bs;
    for (int step = 0; step < 20000; step++) {
        uint64_t op = rng_next(&m->rng) % 100;
        if (op < 35)
            model_alloc(m);
        else if (op < 70)
            model_free(m);
        else if (op < 85)
            model_grow(m);
        else
            model_shrink(m);
        cr_assert_eq(tier_used(m->set.t[0]), model_used(m) * m->bs, "step %d", step);
        cr_assert_eq(tier_free(m->set.t[0]), (MODEL_BLOCKS - model_used(m)) * m->bs);
        CHECK(&m->set, 0);
    }
    while (m->nlive) model_free(m);
    cr_assert_eq(tier_used(m->set.t[0]), 0);
    tier_extent_t all;
    cr_assert_eq(tier_alloc(&m->set, 0, MODEL_BLOCKS * m->bs, &all, 1), 1, "all merged back");
    cr_assert_eq(model_block(m, &all), 0);
    tier_set_close(&m->set);
    bs_now = BS;
}

Test(tier_file, keeps_the_allocator_consistent_with_a_block_model)
{
    static model_t m;
    memset(&m, 0, sizeof(m));
    m.rng = 0x5eed;
    m.bs = BS;
    open_file(&m.set, MODEL_BLOCKS * BS);
    run_model(&m);
}

Test(tier_ram, keeps_the_allocator_consistent_with_a_block_model)
{
    static model_t m;
    memset(&m, 0, sizeof(m));
    m.rng = 0xbee5;
    m.bs = RAM_BS;
    open_ram(&m.set, MODEL_BLOCKS * RAM_BS);
    tier_extent_t first;
    cr_assert_eq(tier_alloc(&m.set, 0, 1, &first, 1), 1); /* an empty tier hands out its start */
    m.base = first.at.mem;
    tier_free_extent(&m.set, &first);
    run_model(&m);
}

/* ---- a file system smaller than the tier ------------------------------------------------ */

/* Mounts a tmpfs of size bytes on path_a (needs root: 0 when it could not, the test skips). */
static int mount_small(uint64_t size)
{
    char cmd[256];
    if (geteuid() != 0) return 0;
    mkdir(path_a, 0700);
    snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=%llu tmpfs %s 2>/dev/null",
             (unsigned long long)size, path_a);
    return mounted = system(cmd) == 0;
}

Test(tier_file, reserves_blocks_so_a_full_disk_fails_the_alloc_not_the_write)
{
    if (!mount_small(256 * KB)) cr_skip_test("mounting a tmpfs needs root");
    tier_set_t set;
    tier_extent_t e[4], f[4];
    open_file(&set, 4096 * KB); /* the tier claims 4 MiB on a 256 KiB file system */
    cr_assert_leq(tier_room(set.t[0]), 256 * KB);
    cr_assert_eq(tier_free(set.t[0]), 4096 * KB);
    cr_assert_eq(tier_alloc(&set, 0, 192 * KB, e, 4), 1);
    /* what is left on the disk is less than asked: refused, nothing allocated */
    cr_assert_eq(tier_alloc(&set, 0, 128 * KB, f, 4), -ENOSPC);
    cr_assert_eq(tier_used(set.t[0]), 192 * KB);
    CHECK(&set, 0);
    /* the extent that was handed out is reserved: writing all of it succeeds */
    char *buf = xmalloc(192 * KB);
    fill(buf, 192 * KB, 7);
    cr_assert_eq(tier_pwrite(&set, e, 0, buf, 192 * KB), 0);
    /* growing in place past the disk is refused too, leaving the extent as it was */
    cr_assert_eq(tier_grow_extent(&set, e, 128 * KB), -ENOSPC);
    cr_assert_eq(e[0].len, 192 * KB);
    cr_assert_eq(tier_used(set.t[0]), 192 * KB);
    CHECK(&set, 0);
    /* freeing gives the blocks back to the file system */
    uint64_t room = tier_room(set.t[0]);
    tier_free_extent(&set, e);
    cr_assert_geq(tier_room(set.t[0]), room + 192 * KB);
    cr_assert_eq(tier_alloc(&set, 0, 200 * KB, f, 4), 1);
    tier_free_extent(&set, f);
    xfree(buf);
    tier_set_close(&set); /* teardown unmounts */
}
