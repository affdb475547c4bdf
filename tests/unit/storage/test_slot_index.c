/* Tests for storage/slot_index.c through db.c: the index follows every way a key enters or
 * leaves a db (add, set over, delete, take, expiry, flush, detach, swap), starts with the keys
 * a db already holds, and counts and lists per slot. */
#include "common/keyslot.h"
#include "storage/db.h"
#include "storage/object.h"
#include "storage/slot_index.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static db_t db;

static void setup(void)
{
    db_init(&db, 0);
    db_now_ms = 1000000;
}

static void teardown(void)
{
    db_deinit(&db);
    db_now_ms = 0;
}

TestSuite(slot_index, .init = setup, .fini = teardown);

static kv_t *put(db_t *d, const char *k)
{
    return db_set(d, k, strlen(k), &str_new("v", 1)->h, 0);
}

static unsigned slot_of(const char *k)
{
    return keyslot(k, strlen(k));
}

Test(slot_index, starts_with_existing_keys_and_follows_adds_and_deletes)
{
    put(&db, "{a}1");
    put(&db, "{a}2");
    cr_assert_null(db.slots);
    db_slot_index_enable(&db);
    db_slot_index_enable(&db); /* again: nothing more */
    unsigned s = slot_of("a");
    cr_assert_eq(slot_index_count(db.slots, s), 2);
    put(&db, "{a}3");
    put(&db, "{a}3"); /* set over: still one key */
    cr_assert_eq(slot_index_count(db.slots, s), 3);
    cr_assert_eq(db_delete(&db, "{a}1", 4), 1);
    obj_free(db_take_value(&db, db_find(&db, "{a}2", 4)));
    cr_assert_eq(slot_index_count(db.slots, s), 1);
    kv_t *out[4];
    cr_assert_eq(slot_index_keys(db.slots, s, out, 4), 1);
    cr_assert_str_eq(kv_key(out[0]), "{a}3");
    cr_assert_eq(slot_index_count(db.slots, slot_of("b")), 0);
}

Test(slot_index, lists_at_most_max_and_counts_many_slots)
{
    db_slot_index_enable(&db);
    char k[32];
    uint64_t per[KEYSLOT_COUNT] = {0};
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof(k), "key:%d", i);
        put(&db, k);
        per[slot_of(k)]++;
    }
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof(k), "{same}%d", i);
        put(&db, k);
    }
    per[slot_of("same")] += 100;
    for (int s = 0; s < KEYSLOT_COUNT; s++) cr_assert_eq(slot_index_count(db.slots, s), per[s]);
    kv_t *out[10];
    cr_assert_eq(slot_index_keys(db.slots, slot_of("same"), out, 10), 10);
    for (int i = 0; i < 10; i++) cr_assert_eq(slot_of(kv_key(out[i])), slot_of("same"));
}

Test(slot_index, expiry_flush_detach_and_swap)
{
    db_slot_index_enable(&db);
    kv_t *kv = put(&db, "{e}1");
    db_set_expire(&db, kv, db_now_ms - 1);
    cr_assert_null(db_lookup(&db, "{e}1", 4)); /* expired on access: deleted */
    cr_assert_eq(slot_index_count(db.slots, slot_of("e")), 0);
    put(&db, "{f}1");
    cr_assert_eq(db_flush(&db), 1);
    cr_assert_eq(slot_index_count(db.slots, slot_of("f")), 0);
    put(&db, "{f}1");
    dict_t keys, expires;
    cr_assert_eq(db_detach(&db, &keys, &expires), 1);
    cr_assert_eq(slot_index_count(db.slots, slot_of("f")), 0);
    dict_clear(&expires, NULL);
    dict_clear(&keys, NULL);
    /* SWAPDB moves the index with the keys */
    db_t other;
    db_init(&other, 1);
    put(&db, "{g}1");
    db_swap(&db, &other);
    cr_assert_null(db.slots);
    cr_assert_not_null(other.slots);
    cr_assert_eq(slot_index_count(other.slots, slot_of("g")), 1);
    db_swap(&db, &other);
    db_deinit(&other);
}
