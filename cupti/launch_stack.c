/*
 * launch_stack.c - the call stacks of CUDA calls that CUPTI records
 * (MXPROF_STACKS), by correlation id.
 *
 * A CUDA runtime call that no hook shows (the runtime linked statically,
 * as nvcc does by default) reaches mxprof twice: CUPTI's callback as it
 * begins, on the calling thread, where the stack can be captured, and its
 * activity record later, in a buffer, on the drain thread. The stack waits
 * in between in a table indexed by the correlation id's low bits: one
 * atomic 64-bit word per slot, the id above the stack's. A slot reused
 * before its record came (LAUNCH_SLOTS calls later) loses that stack and
 * no other: the id tells. Lock-free; safe on any thread.
 */
#include "gpu.h"

#define LAUNCH_SLOTS (1u << 16)

static uint64_t slots[LAUNCH_SLOTS];

uint32_t (*stack_capture_fn)(void);

void cupti_set_stacks(uint32_t (*capture)(void))
{
	__atomic_store_n(&stack_capture_fn, capture, __ATOMIC_RELEASE);
}

void launch_stack_put(uint32_t corr, uint32_t stack)
{
	__atomic_store_n(&slots[corr & (LAUNCH_SLOTS - 1)],
			 (uint64_t)corr << 32 | stack, __ATOMIC_RELEASE);
}

uint32_t launch_stack_get(uint32_t corr)
{
	uint64_t v = __atomic_load_n(&slots[corr & (LAUNCH_SLOTS - 1)],
				     __ATOMIC_ACQUIRE);

	return corr && (uint32_t)(v >> 32) == corr ? (uint32_t)v : 0;
}
