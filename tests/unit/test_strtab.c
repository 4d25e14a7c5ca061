/*
 * test_strtab.c - the string table (collector/strtab.c).
 *
 * The table is global and ids never change, so every test interns names
 * with a prefix of its own and reasons about ids relative to
 * strtab_count() before it starts.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"

static void test_strtab_same_string_gives_same_id(void **st)
{
	char copy[32];

	(void)st;
	uint32_t a = strtab_intern("same:MXImperativeInvoke");
	assert_int_not_equal(a, 0);
	assert_int_equal(strtab_intern("same:MXImperativeInvoke"), a);
	/* Equal contents in another buffer: still the same id. */
	snprintf(copy, sizeof(copy), "same:%s", "MXImperativeInvoke");
	assert_int_equal(strtab_intern(copy), a);
	assert_string_equal(strtab_get(a), "same:MXImperativeInvoke");
}

static void test_strtab_distinct_strings_get_increasing_ids(void **st)
{
	(void)st;
	uint32_t base = strtab_count();
	uint32_t a = strtab_intern("inc:alpha");
	uint32_t b = strtab_intern("inc:beta");
	uint32_t c = strtab_intern("inc:gamma");

	assert_int_equal(a, base);
	assert_int_equal(b, base + 1);
	assert_int_equal(c, base + 2);
	assert_int_equal(strtab_count(), base + 3);
	/* Re-interning adds nothing. */
	assert_int_equal(strtab_intern("inc:beta"), b);
	assert_int_equal(strtab_count(), base + 3);
	/* Prefixes and case are different names. */
	uint32_t d = strtab_intern("inc:alph");
	uint32_t e = strtab_intern("inc:Alpha");
	assert_int_equal(d, base + 3);
	assert_int_equal(e, base + 4);
}

static void test_strtab_null_and_empty_are_id_0(void **st)
{
	(void)st;
	uint32_t before = strtab_count();

	assert_int_equal(strtab_intern(NULL), 0);
	assert_int_equal(strtab_intern(""), 0);
	assert_string_equal(strtab_get(0), "");
	assert_int_equal(strtab_count(), before);
	assert_true(strtab_count() >= 1);
}

static void test_strtab_get_returns_the_interned_text(void **st)
{
	char buf[64];

	(void)st;
	snprintf(buf, sizeof(buf), "get:C API (libz.so.1) \"quoted\"\n");
	uint32_t id = strtab_intern(buf);
	/* The table keeps its own copy. */
	memset(buf, 'x', sizeof(buf) - 1);
	assert_string_equal(strtab_get(id),
			    "get:C API (libz.so.1) \"quoted\"\n");
	/* Stable: the same pointer every time. */
	assert_ptr_equal(strtab_get(id), strtab_get(id));
}

static void test_strtab_get_of_unknown_id_is_empty(void **st)
{
	(void)st;
	uint32_t n = strtab_count();

	assert_string_equal(strtab_get(n), "");
	assert_string_equal(strtab_get(n + 1000), "");
	assert_string_equal(strtab_get(UINT32_MAX), "");
}

#define NAMES	 1000
#define NTHREADS 4

struct interner {
	int k;
	uint32_t ids[NAMES];
	pthread_barrier_t *go;
};

static void *intern_main(void *arg)
{
	struct interner *in = arg;
	char name[32];

	pthread_barrier_wait(in->go);
	/* Every thread interns the same names, starting at a different
	 * place, so that they race to add the same names. */
	for (int i = 0; i < NAMES; i++) {
		int j = (i + in->k * (NAMES / NTHREADS)) % NAMES;
		snprintf(name, sizeof(name), "conc:%d", j);
		in->ids[j] = strtab_intern(name);
		/* Lock-free readers see what is published. */
		if (strcmp(strtab_get(in->ids[j]), name) != 0) {
			in->ids[j] = 0;
		}
	}
	return NULL;
}

static void test_strtab_concurrent_interning_gives_consistent_ids(void **st)
{
	struct interner in[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t go;
	char name[32];

	(void)st;
	uint32_t base = strtab_count();
	pthread_barrier_init(&go, NULL, NTHREADS);
	for (int k = 0; k < NTHREADS; k++) {
		in[k].k = k;
		in[k].go = &go;
		assert_int_equal(
			pthread_create(&th[k], NULL, intern_main, &in[k]), 0);
	}
	for (int k = 0; k < NTHREADS; k++) {
		pthread_join(th[k], NULL);
	}
	pthread_barrier_destroy(&go);

	assert_int_equal(strtab_count(), base + NAMES);
	char *used = calloc(NAMES, 1);
	assert_non_null(used);
	for (int j = 0; j < NAMES; j++) {
		uint32_t id = in[0].ids[j];
		for (int k = 1; k < NTHREADS; k++) {
			assert_int_equal(in[k].ids[j], id);
		}
		assert_in_range(id, base, base + NAMES - 1);
		assert_int_equal(used[id - base], 0);
		used[id - base] = 1;
		snprintf(name, sizeof(name), "conc:%d", j);
		assert_string_equal(strtab_get(id), name);
	}
	free(used);
}

static void test_strtab_grows_past_thousands_of_names(void **st)
{
	char name[32];
	const uint32_t n = 9000; /* past two 4096-name chunks */

	(void)st;
	uint32_t base = strtab_count();
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "grow:%u", i);
		assert_int_equal(strtab_intern(name), base + i);
	}
	assert_int_equal(strtab_count(), base + n);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "grow:%u", i);
		assert_string_equal(strtab_get(base + i), name);
		assert_int_equal(strtab_intern(name), base + i);
	}
	assert_int_equal(strtab_count(), base + n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strtab_same_string_gives_same_id),
		cmocka_unit_test(
			test_strtab_distinct_strings_get_increasing_ids),
		cmocka_unit_test(test_strtab_null_and_empty_are_id_0),
		cmocka_unit_test(test_strtab_get_returns_the_interned_text),
		cmocka_unit_test(test_strtab_get_of_unknown_id_is_empty),
		cmocka_unit_test(
			test_strtab_concurrent_interning_gives_consistent_ids),
		cmocka_unit_test(test_strtab_grows_past_thousands_of_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
