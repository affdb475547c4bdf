/* Tests for storage/db.c: keys, values, expiry (lazy and active), flush, swap, scan. */
#include "storage/db.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static db_t db;
static int deleted_events;
static int want_reason = DB_DEL_EXPIRED;

static void on_deleted(void *ud, db_t *d, kv_t *kv, int reason)
{
    cr_assert_eq(reason, want_reason);
    cr_assert_not_null(db_find(d, kv_key(kv), kv_keylen(kv)), "observer runs before deletion");
    deleted_events++;
}

static void setup(void)
{
    db_init(&db, 0);
    db_set_observer(on_deleted, NULL);
    deleted_events = 0;
    want_reason = DB_DEL_EXPIRED;
    db_now_ms = 1000000;
}

static void teardown(void)
{
    db_deinit(&db);
    db_now_ms = 0;
}

TestSuite(db, .init = setup, .fini = teardown);

static kv_t *put(const char *k, const char *v)
{
    return db_set(&db, k, strlen(k), &str_new(v, strlen(v))->h, 0);
}

static const char *get(const char *k)
{
    kv_t *kv = db_lookup(&db, k, strlen(k));
    return kv ? ((str_obj_t *)kv->val)->data : NULL;
}

Test(db, set_overwrites_and_delete_removes)
{
    put("a", "1");
    put("b", "2");
    put("a", "3");
    cr_assert_str_eq(get("a"), "3");
    cr_assert_eq(db_size(&db), 2);
    cr_assert_eq(db_delete(&db, "a", 1), 1);
    cr_assert_eq(db_delete(&db, "a", 1), 0);
    cr_assert_null(get("a"));
    cr_assert_str_eq(get("b"), "2");
}

Test(db, binary_keys_are_distinct)
{
    db_set(&db, "a\0b", 3, &str_new("x", 1)->h, 0);
    db_set(&db, "a\0c", 3, &str_new("y", 1)->h, 0);
    cr_assert_eq(db_size(&db), 2);
    cr_assert_str_eq(((str_obj_t *)db_lookup(&db, "a\0c", 3)->val)->data, "y");
}

Test(db, expired_key_is_hidden_and_deleted_lazily)
{
    kv_t *kv = put("k", "v");
    db_set_expire(&db, kv, db_now_ms + 100);
    cr_assert_eq(db_get_expire(&db, kv), db_now_ms + 100);
    cr_assert_str_eq(get("k"), "v");
    db_now_ms += 100;
    cr_assert_null(get("k"));
    cr_assert_eq(deleted_events, 1);
    cr_assert_eq(db_size(&db), 0);
    cr_assert_eq(db_expires_size(&db), 0);
}

Test(db, overwrite_drops_ttl_unless_kept)
{
    kv_t *kv = put("k", "v");
    db_set_expire(&db, kv, db_now_ms + 100);
    kv = db_set(&db, "k", 1, &str_new("w", 1)->h, 1);
    cr_assert_eq(db_get_expire(&db, kv), db_now_ms + 100);
    kv = put("k", "x");
    cr_assert_eq(db_get_expire(&db, kv), -1);
    cr_assert_eq(db_expires_size(&db), 0);
}

Test(db, paused_expiry_hides_but_keeps_keys)
{
    kv_t *kv = put("k", "v");
    db_set_expire(&db, kv, db_now_ms - 1);
    db_expire_paused = 1;
    cr_assert_null(get("k"));
    cr_assert_eq(db_size(&db), 1);
    db_expire_paused = 0;
    cr_assert_null(get("k"));
    cr_assert_eq(db_size(&db), 0);
}

Test(db, active_expiry_removes_expired_keys_in_bounded_passes)
{
    char k[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(k, sizeof(k), "k%d", i);
        kv_t *kv = put(k, "v");
        db_set_expire(&db, kv, db_now_ms + (i % 2 ? 10 : 100000));
    }
    db_now_ms += 20;
    for (int pass = 0; pass < 200 && db_size(&db) > 1000; pass++)
        db_active_expire(&db, 1, 100000);
    cr_assert_eq(db_size(&db), 1000);
    cr_assert_eq(deleted_events, 1000);
    for (int i = 0; i < 2000; i += 2) {
        snprintf(k, sizeof(k), "k%d", i);
        cr_assert_not_null(db_find(&db, k, strlen(k)));
    }
}

Test(db, take_value_keeps_the_object_alive)
{
    kv_t *kv = put("k", "v");
    db_set_expire(&db, kv, db_now_ms + 5);
    obj_t *o = db_take_value(&db, kv);
    cr_assert_eq(db_size(&db), 0);
    cr_assert_eq(db_expires_size(&db), 0);
    db_add(&db, "n", 1, o);
    cr_assert_str_eq(get("n"), "v");
}

Test(db, flush_and_swap)
{
    db_t other;
    db_init(&other, 1);
    put("a", "1");
    db_set(&other, "b", 1, &str_new("2", 1)->h, 0);
    db_swap(&db, &other);
    cr_assert_eq(db.id, 0);
    cr_assert_eq(other.id, 1);
    cr_assert_str_eq(get("b"), "2");
    cr_assert_eq(db_flush(&other), 1);
    cr_assert_eq(db_size(&other), 0);
    db_deinit(&other);
}

static void count_key(void *ud, kv_t *kv)
{
    (*(int *)ud)++;
}

Test(db, scan_visits_every_key_and_random_finds_one)
{
    char k[32];
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "k%d", i);
        put(k, "v");
    }
    int seen = 0;
    uint64_t cur = 0;
    do cur = db_scan(&db, cur, count_key, &seen);
    while (cur);
    cr_assert_geq(seen, 500);
    cr_assert_not_null(db_random(&db));
}

Test(db, random_skips_and_deletes_expired_keys)
{
    kv_t *kv = put("gone", "v");
    db_set_expire(&db, kv, db_now_ms - 1);
    put("live", "v");
    for (int i = 0; i < 20; i++) {
        kv_t *r = db_random(&db);
        cr_assert_str_eq(kv_key(r), "live");
    }
}

Test(db, sample_picks_live_entries_and_only_volatile_ones_when_asked)
{
    kv_t *out[64];
    long long when[64];
    cr_assert_eq(db_sample(&db, 0, out, when, 8), 0);
    char k[16];
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof(k), "k%d", i);
        kv_t *kv = put(k, "v");
        if (i % 10 == 0) db_set_expire(&db, kv, 2000000 + i);
    }
    cr_assert_eq(db_sample(&db, 0, out, NULL, 64), 64);
    int seen_persistent = 0;
    for (int i = 0; i < 64; i++) {
        cr_assert_eq(db_find(&db, kv_key(out[i]), kv_keylen(out[i])), out[i]);
        seen_persistent += !kv_has_expire(out[i]);
    }
    cr_assert_gt(seen_persistent, 0);
    cr_assert_eq(db_sample(&db, 1, out, when, 64), 64);
    for (int i = 0; i < 64; i++) {
        cr_assert(kv_has_expire(out[i]), "%s has no TTL", kv_key(out[i]));
        cr_assert_eq(when[i], db_get_expire(&db, out[i]));
    }
    cr_assert_eq(db_sample(&db, 0, out, when, 4), 4);
    for (int i = 0; i < 4; i++) cr_assert_eq(when[i], db_get_expire(&db, out[i]));
}

Test(db, evict_tells_the_observer_before_the_key_goes)
{
    kv_t *kv = put("k", "v");
    want_reason = DB_DEL_EVICTED;
    db_evict(&db, kv);
    cr_assert_eq(deleted_events, 1);
    cr_assert_null(db_find(&db, "k", 1));
    cr_assert_eq(db_size(&db), 0);
}
