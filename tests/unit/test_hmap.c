/*
 * test_hmap.c - the shared open-addressing table and FNV-1a
 * (collector/hmap.h, hmap.c).
 *
 * The tests keep a table of (key, value) pairs whose hash is chosen by the
 * test, so that collisions, probing and the slots after a grow are known
 * exactly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hmap.h"

struct pair {
	uint64_t key; /* 0: empty */
	uint64_t value;
};

/* The hash the tests give a key: the key itself, or all in one home. */
static int same_home;

static uint64_t key_hash(uint64_t key)
{
	return same_home ? 5 : key;
}

static int pair_empty(const void *slot)
{
	return ((const struct pair *)slot)->key == 0;
}

static uint64_t pair_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return key_hash(((const struct pair *)slot)->key);
}

static int pair_match(const void *slot, const void *key)
{
	return ((const struct pair *)slot)->key == *(const uint64_t *)key;
}

static const struct hmap_ops pair_ops = {
	.size = sizeof(struct pair),
	.empty = pair_empty,
	.hash = pair_hash,
};

/* Puts (key, value), growing at 3/4 from 4 slots. Returns 0 or -ENOMEM. */
static int put(struct hmap *m, uint64_t key, uint64_t value)
{
	if (hmap_reserve(m, &pair_ops, 4, 3, 4, NULL) < 0) {
		return -ENOMEM;
	}
	struct pair *p =
		hmap_find(m, &pair_ops, key_hash(key), pair_match, &key);
	if (p->key == 0) {
		p->key = key;
		m->used++;
	}
	p->value = value;
	return 0;
}

/* The value of key, or 0 when m does not hold it. */
static uint64_t get(const struct hmap *m, uint64_t key)
{
	if (!m->cap) {
		return 0;
	}
	const struct pair *p =
		hmap_find(m, &pair_ops, key_hash(key), pair_match, &key);
	return p->key ? p->value : 0;
}

static const struct pair *slot(const struct hmap *m, size_t i)
{
	return hmap_at(m, &pair_ops, i);
}

static void test_hmap_insert_then_find_and_replace(void **st)
{
	struct hmap m = {0};

	(void)st;
	same_home = 0;
	assert_int_equal(put(&m, 7, 70), 0);
	assert_int_equal(m.cap, 4);
	assert_int_equal(m.used, 1);
	assert_int_equal(get(&m, 7), 70);
	assert_int_equal(get(&m, 8), 0);
	/* Home of 7 in 4 slots: 7 & 3 = 3. */
	assert_int_equal(slot(&m, 3)->key, 7);
	/* A second put of the same key replaces its value, adds nothing. */
	assert_int_equal(put(&m, 7, 71), 0);
	assert_int_equal(m.used, 1);
	assert_int_equal(get(&m, 7), 71);
	hmap_free(&m);
	assert_null(m.slots);
	assert_int_equal(m.cap, 0);
	assert_int_equal(m.used, 0);
}

static void test_hmap_collisions_probe_to_the_next_slot_and_wrap(void **st)
{
	struct hmap m = {0};

	(void)st;
	same_home = 0;
	/* 3, 7 and 11 all have home 3 in 4 slots: 3, then wrap to 0, 1. */
	assert_int_equal(put(&m, 3, 30), 0);
	assert_int_equal(put(&m, 7, 70), 0);
	assert_int_equal(put(&m, 11, 110), 0);
	assert_int_equal(m.cap, 4);
	assert_int_equal(m.used, 3);
	assert_int_equal(slot(&m, 3)->key, 3);
	assert_int_equal(slot(&m, 0)->key, 7);
	assert_int_equal(slot(&m, 1)->key, 11);
	assert_int_equal(slot(&m, 2)->key, 0);
	assert_int_equal(get(&m, 3), 30);
	assert_int_equal(get(&m, 7), 70);
	assert_int_equal(get(&m, 11), 110);
	/* 15 has home 3 too and is absent: the walk stops at slot 2. */
	assert_int_equal(get(&m, 15), 0);
	hmap_free(&m);
}

static void test_hmap_grows_at_its_bound_and_keeps_every_entry(void **st)
{
	struct hmap m = {0};

	(void)st;
	same_home = 0;
	/* 3/4 of 4: the fourth put grows to 8 first. */
	for (uint64_t k = 1; k <= 3; k++) {
		assert_int_equal(put(&m, k, k * 10), 0);
	}
	assert_int_equal(m.cap, 4);
	assert_int_equal(put(&m, 4, 40), 0);
	assert_int_equal(m.cap, 8);
	assert_int_equal(m.used, 4);
	/* Moved to their homes in 8 slots: key k in slot k. */
	for (uint64_t k = 1; k <= 4; k++) {
		assert_int_equal(slot(&m, k)->key, k);
		assert_int_equal(get(&m, k), k * 10);
	}
	assert_int_equal(slot(&m, 0)->key, 0);
	assert_int_equal(slot(&m, 5)->key, 0);
	/* Keys 9 and 12 have the homes of 1 and 4: they probe on. */
	assert_int_equal(put(&m, 9, 90), 0);
	assert_int_equal(put(&m, 12, 120), 0);
	assert_int_equal(m.cap, 8);
	assert_int_equal(slot(&m, 5)->key, 9);
	assert_int_equal(slot(&m, 6)->key, 12);
	/* The seventh entry passes 3/4 of 8: 16 slots, entries at home. */
	assert_int_equal(put(&m, 13, 130), 0);
	assert_int_equal(m.cap, 16);
	assert_int_equal(slot(&m, 9)->key, 9);
	assert_int_equal(slot(&m, 12)->key, 12);
	assert_int_equal(slot(&m, 13)->key, 13);
	assert_int_equal(get(&m, 9), 90);
	assert_int_equal(get(&m, 12), 120);
	assert_int_equal(get(&m, 13), 130);
	hmap_free(&m);
}

static void test_hmap_grow_moves_entries_in_slot_order(void **st)
{
	struct hmap m = {0};

	(void)st;
	/* Every key has home 5: they sit in insertion order from slot 1 (5
	 * & 3) and, after a grow, in the old slot order from slot 5. */
	same_home = 1;
	assert_int_equal(put(&m, 100, 1), 0);
	assert_int_equal(put(&m, 200, 2), 0);
	assert_int_equal(put(&m, 300, 3), 0);
	assert_int_equal(slot(&m, 1)->key, 100);
	assert_int_equal(slot(&m, 2)->key, 200);
	assert_int_equal(slot(&m, 3)->key, 300);
	assert_int_equal(put(&m, 400, 4), 0);
	assert_int_equal(m.cap, 8);
	assert_int_equal(slot(&m, 5)->key, 100);
	assert_int_equal(slot(&m, 6)->key, 200);
	assert_int_equal(slot(&m, 7)->key, 300);
	assert_int_equal(slot(&m, 0)->key, 400); /* wrapped */
	for (uint64_t k = 1; k <= 4; k++) {
		assert_int_equal(get(&m, k * 100), k);
	}
	assert_int_equal(get(&m, 500), 0);
	same_home = 0;
	hmap_free(&m);
}

static void test_hmap_many_keys_all_found_none_invented(void **st)
{
	struct hmap m = {0};
	const uint64_t n = 100000;

	(void)st;
	same_home = 0;
	for (uint64_t k = 1; k <= n; k++) {
		/* Spread and clustered: every key times a large odd number,
		 * and runs of neighbours. */
		uint64_t key = k % 2 ? k * 0x9e3779b97f4a7c15ull : k;
		assert_int_equal(put(&m, key, k), 0);
	}
	assert_int_equal(m.used, n);
	/* 100000 entries under 3/4: 262144 slots (131072 * 3/4 < 100001). */
	assert_int_equal(m.cap, 262144);
	for (uint64_t k = 1; k <= n; k++) {
		uint64_t key = k % 2 ? k * 0x9e3779b97f4a7c15ull : k;
		assert_int_equal(get(&m, key), k);
	}
	size_t full = 0;
	for (size_t i = 0; i < m.cap; i++) {
		full += slot(&m, i)->key != 0;
	}
	assert_int_equal(full, n);
	assert_int_equal(get(&m, n + 2), 0);
	assert_int_equal(get(&m, 2 * 0x9e3779b97f4a7c15ull), 0);
	hmap_free(&m);
}

static void test_hmap_clear_empties_and_keeps_the_slots(void **st)
{
	struct hmap m = {0};

	(void)st;
	same_home = 0;
	for (uint64_t k = 1; k <= 5; k++) {
		assert_int_equal(put(&m, k, k), 0);
	}
	assert_int_equal(m.cap, 8);
	hmap_clear(&m, &pair_ops);
	assert_int_equal(m.cap, 8);
	assert_int_equal(m.used, 0);
	assert_non_null(m.slots);
	for (uint64_t k = 1; k <= 5; k++) {
		assert_int_equal(get(&m, k), 0);
	}
	assert_int_equal(put(&m, 3, 33), 0);
	assert_int_equal(get(&m, 3), 33);
	assert_int_equal(m.used, 1);
	hmap_free(&m);
}

static void test_hmap_grow_refuses_a_first_size_not_a_power_of_two(void **st)
{
	struct hmap m = {0};

	(void)st;
	assert_int_equal(hmap_grow(&m, &pair_ops, 6, NULL), -ENOMEM);
	assert_int_equal(hmap_grow(&m, &pair_ops, 0, NULL), -ENOMEM);
	assert_null(m.slots);
	assert_int_equal(m.cap, 0);
	assert_int_equal(hmap_grow(&m, &pair_ops, 2, NULL), 0);
	assert_int_equal(m.cap, 2);
	hmap_free(&m);
}

static void test_hmap_fnv1a_gives_known_values(void **st)
{
	size_t len = 99;

	(void)st;
	/* FNV-1a 64 with mxprof's offset basis (hmap.h), values computed
	 * independently: h = (h ^ byte) * 1099511628211 mod 2^64. */
	assert_true(hmap_fnv1a("", 0) == 0x14650fb0739d0383ull);
	assert_true(hmap_fnv1a("a", 1) == 0x44bd8ad473cd9906ull);
	assert_true(hmap_fnv1a("foobar", 6) == 0x88fad7c0a8ff07f2ull);
	assert_true(hmap_fnv1a_str("foobar", &len) == 0x88fad7c0a8ff07f2ull);
	assert_int_equal(len, 6);
	assert_true(hmap_fnv1a_str("", NULL) == 0x14650fb0739d0383ull);
	/* Continuing a hash is hashing the concatenation. */
	assert_true(hmap_fnv1a_add(hmap_fnv1a("foo", 3), "bar", 3) ==
		    0x88fad7c0a8ff07f2ull);
	/* Bytes above 0x7f count as unsigned, NUL bytes count. */
	assert_true(hmap_fnv1a("\xff", 1) ==
		    ((HMAP_FNV_OFFSET ^ 0xffu) * HMAP_FNV_PRIME));
	assert_true(hmap_fnv1a("a\0b", 3) != hmap_fnv1a("ab", 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmap_insert_then_find_and_replace),
		cmocka_unit_test(
			test_hmap_collisions_probe_to_the_next_slot_and_wrap),
		cmocka_unit_test(
			test_hmap_grows_at_its_bound_and_keeps_every_entry),
		cmocka_unit_test(test_hmap_grow_moves_entries_in_slot_order),
		cmocka_unit_test(test_hmap_many_keys_all_found_none_invented),
		cmocka_unit_test(test_hmap_clear_empties_and_keeps_the_slots),
		cmocka_unit_test(
			test_hmap_grow_refuses_a_first_size_not_a_power_of_two),
		cmocka_unit_test(test_hmap_fnv1a_gives_known_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
