/*
 * occupancy.c - a kernel's "est. achieved occupancy %", as Kineto
 * computes it.
 *
 * The CUDA toolkit's own occupancy calculator (cuda_occupancy.h, a header
 * of plain functions, the one Kineto calls) gives how many blocks of the
 * kernel's size, registers and shared memory one SM of the device can
 * hold at once. A launch of fewer blocks per SM than that fills less:
 * Kineto takes the smaller of the two, times the block's threads, over
 * the SM's thread limit, in percent rounded to the nearest integer. The
 * calculator is given what Kineto gives it: the kernel's registers and
 * static shared memory, its dynamic shared memory, the device's limits
 * (deviceProperties) and the default cache and carveout preferences.
 * Drain thread, while a dump writes the trace.
 */
#include <limits.h>

#include <cuda_occupancy.h>

#include "gpu.h"

int occupancy_percent(const struct gpu_rec *k, const struct gpu_device *d)
{
	cudaOccDeviceProp prop = {
		.computeMajor = d->cc_major,
		.computeMinor = d->cc_minor,
		.maxThreadsPerBlock = d->max_threads_per_block,
		.maxThreadsPerMultiprocessor = d->max_threads_per_sm,
		.regsPerBlock = d->regs_per_block,
		.regsPerMultiprocessor = d->regs_per_sm,
		.warpSize = d->warp_size,
		.sharedMemPerBlock = (size_t)d->max_shared_per_block,
		.sharedMemPerMultiprocessor = (size_t)d->shared_per_sm,
		.numSms = d->num_sms,
		.sharedMemPerBlockOptin = (size_t)d->shared_per_block_optin,
		.reservedSharedMemPerBlock =
			(size_t)d->reserved_shared_per_block,
	};
	cudaOccFuncAttributes func = {
		.maxThreadsPerBlock = INT_MAX,
		.numRegs = (int)k->regs,
		.sharedSizeBytes = (size_t)(k->shmem - k->dyn_shmem),
		.partitionedGCConfig = PARTITIONED_GC_OFF,
		.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT,
		.maxDynamicSharedSizeBytes = 0,
		.numBlockBarriers = 0,
		.virtualResourceCount = 0,
	};
	cudaOccDeviceState state = {
		.cacheConfig = CACHE_PREFER_NONE,
		.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT,
	};
	cudaOccResult res = {0};
	int64_t threads = (int64_t)k->block[0] * k->block[1] * k->block[2];

	if (d->num_sms <= 0 || d->max_threads_per_sm <= 0 || threads <= 0 ||
	    threads > INT_MAX) {
		return -1;
	}
	if (cudaOccMaxActiveBlocksPerMultiprocessor(
		    &res, &prop, &func, &state, (int)threads, k->dyn_shmem) !=
	    CUDA_OCC_SUCCESS) {
		return -1;
	}
	/* In float, as Kineto computes it, so that values on a rounding
	 * edge round alike. */
	float per_sm = (float)((int64_t)k->grid[0] * k->grid[1] * k->grid[2]) /
		       (float)d->num_sms;
	float blocks = (float)res.activeBlocksPerMultiprocessor < per_sm
			       ? (float)res.activeBlocksPerMultiprocessor
			       : per_sm;
	float occ = blocks * (float)threads / (float)d->max_threads_per_sm;
	/* lround() of a value that is never negative, without libm. */
	return (int)((double)occ * 100.0 + 0.5);
}
