/*
 * test_gpu_memswitch.c - set_config(profile_memory=...) (cupti/
 * memswitch.c): device memory records count by whether the switch was on
 * at their own time, since CUPTI hands them over late; the store keeps
 * only those.
 */
#include "testutil.h"

#include "gpu.h"

static void test_memswitch_by_the_records_time(void **st)
{
	(void)st;
	memswitch_reset();
	assert_true(memswitch_on_at(5)); /* no change yet: on */
	memswitch_set_at(0, 1000);
	memswitch_set_at(1, 2000);
	memswitch_set_at(0, 3000);
	assert_true(memswitch_on_at(999));
	assert_false(memswitch_on_at(1000));
	assert_false(memswitch_on_at(1999));
	assert_true(memswitch_on_at(2000));
	assert_true(memswitch_on_at(2999));
	assert_false(memswitch_on_at(3000));
	assert_false(memswitch_on_at(UINT64_MAX));
	memswitch_reset();
}

/* More changes than are kept: the oldest go, and a time before those
 * left takes the state before the oldest one left. */
static void test_memswitch_keeps_the_latest_changes(void **st)
{
	(void)st;
	memswitch_reset();
	for (uint64_t i = 0; i < 1000; i++) {
		memswitch_set_at((int)(i % 2), 1000 + i); /* off at even */
	}
	assert_false(memswitch_on_at(1998));
	assert_true(memswitch_on_at(1999));
	assert_true(memswitch_on_at(1000)); /* before the 256 kept: on */
	memswitch_reset();
}

static struct gpu_rec mem(uint64_t t, uint64_t bytes)
{
	struct gpu_rec r = {
		.kind = GPU_MEMORY, .start = t, .end = t, .bytes = bytes};
	return r;
}

/* The store keeps memory records of times the switch was on; the
 * kernels are not the switch's. */
static void test_memswitch_store_leaves_records_out(void **st)
{
	(void)st;
	store_reset();
	memswitch_reset();
	memswitch_set_at(0, 1000);
	memswitch_set_at(1, 2000);
	struct gpu_rec r[] = {mem(500, 1),
			      mem(1500, 2),
			      {.kind = GPU_KERNEL, .start = 1500, .end = 1600},
			      mem(2500, 4)};
	assert_int_equal(store_push(r, 4), 0);
	assert_int_equal(store_count(), 3);
	assert_int_equal(store_at(0)->bytes, 1);
	assert_int_equal(store_at(1)->kind, GPU_KERNEL);
	assert_int_equal(store_at(2)->bytes, 4);
	memswitch_reset();
	store_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memswitch_by_the_records_time),
		cmocka_unit_test(test_memswitch_keeps_the_latest_changes),
		cmocka_unit_test(test_memswitch_store_leaves_records_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
