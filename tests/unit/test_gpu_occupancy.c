/*
 * test_gpu_occupancy.c - a kernel's "est. achieved occupancy %"
 * (cupti/occupancy.c), on an H100's limits (compute capability 9.0, 132
 * SMs, 2048 threads, 64 Ki registers and 228 KiB of shared memory per SM,
 * 1 KiB reserved per block), each case worked out by hand from those
 * limits: blocks of 256 threads are 8 warps; at 32 registers a thread a
 * warp takes 1024 registers, so 8 such blocks fill an SM's registers as
 * they fill its 64 warps.
 */
#include "testutil.h"

#include "gpu.h"

static const struct gpu_device h100 = {
	.id = 0,
	.cc_major = 9,
	.cc_minor = 0,
	.num_sms = 132,
	.max_threads_per_block = 1024,
	.max_shared_per_block = 49152,
	.warp_size = 32,
	.regs_per_block = 65536,
	.max_threads_per_sm = 2048,
	.regs_per_sm = 65536,
	.shared_per_block_optin = 232448,
	.shared_per_sm = 233472,
	.reserved_shared_per_block = 1024,
};

static struct gpu_rec kernel(int grid, int block, unsigned regs,
			     unsigned static_shmem, unsigned dyn_shmem)
{
	struct gpu_rec k = {.kind = GPU_KERNEL,
			    .grid = {grid, 1, 1},
			    .block = {block, 1, 1},
			    .regs = regs,
			    .shmem = static_shmem + dyn_shmem,
			    .dyn_shmem = dyn_shmem};
	return k;
}

/* 8 blocks per SM launched, 8 fit (warps and registers alike): full. */
static void test_occupancy_full_sm(void **st)
{
	(void)st;
	struct gpu_rec k = kernel(132 * 8, 256, 32, 0, 0);
	assert_int_equal(occupancy_percent(&k, &h100), 100);
}

/* 64 registers a thread: 4 blocks fit, of the 8 launched per SM. */
static void test_occupancy_limited_by_registers(void **st)
{
	(void)st;
	struct gpu_rec k = kernel(132 * 8, 256, 64, 0, 0);
	assert_int_equal(occupancy_percent(&k, &h100), 50);
}

/* 2 blocks per SM launched where 8 fit: the launch is the limit. */
static void test_occupancy_limited_by_the_launch(void **st)
{
	(void)st;
	struct gpu_rec k = kernel(132 * 2, 256, 32, 0, 0);
	assert_int_equal(occupancy_percent(&k, &h100), 25);
	/* 10 blocks of 128 threads over 132 SMs: 0.47 %, shown as 0. */
	k = kernel(10, 128, 32, 1024, 0);
	assert_int_equal(occupancy_percent(&k, &h100), 0);
}

/* 48 KiB of shared memory a block (static or dynamic alike), plus the
 * 1 KiB the driver reserves: 4 blocks in 228 KiB, of 128 threads each. */
static void test_occupancy_limited_by_shared_memory(void **st)
{
	(void)st;
	struct gpu_rec k = kernel(132 * 100, 128, 16, 49152, 0);
	assert_int_equal(occupancy_percent(&k, &h100), 25);
	k = kernel(132 * 100, 128, 16, 0, 49152);
	assert_int_equal(occupancy_percent(&k, &h100), 25);
}

/* Without the device's limits there is no estimate. */
static void test_occupancy_unknown_device(void **st)
{
	(void)st;
	struct gpu_device none = {.id = 0};
	struct gpu_rec k = kernel(132, 256, 32, 0, 0);
	assert_int_equal(occupancy_percent(&k, &none), -1);
	k = kernel(132, 0, 32, 0, 0);
	assert_int_equal(occupancy_percent(&k, &h100), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_occupancy_full_sm),
		cmocka_unit_test(test_occupancy_limited_by_registers),
		cmocka_unit_test(test_occupancy_limited_by_the_launch),
		cmocka_unit_test(test_occupancy_limited_by_shared_memory),
		cmocka_unit_test(test_occupancy_unknown_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
