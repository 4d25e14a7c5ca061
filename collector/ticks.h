/*
 * ticks.h - the raw clock read on the hot path.
 *
 * On x86-64 with an invariant TSC a record costs one rdtsc (about 8 ns here)
 * instead of clock_gettime (about 25 ns). Ticks are converted to
 * CLOCK_MONOTONIC nanoseconds later, on the drain thread (see clock.c).
 * Elsewhere, or when the TSC is not invariant, ticks are CLOCK_MONOTONIC
 * nanoseconds already.
 *
 * These are static inline on purpose: a call through the PLT would cost
 * more than the read itself.
 */
#ifndef MXPROF_TICKS_H
#define MXPROF_TICKS_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TICKS_HAVE_TSC 1
#else
#define TICKS_HAVE_TSC 0
#endif

/*
 * A flag that every recorded call reads and that only set-up and state
 * changes write. It has 128 bytes to itself: a cache line, and the one the
 * prefetcher fetches with it. Beside data the drain thread writes at each
 * pass, the line would move to the drain's core and back under every call
 * (a thread flooding task start/stop pairs ran at 26 M/s instead of 43).
 */
struct hot_flag {
	int on;
} __attribute__((aligned(128)));

/* .on is non-zero when ticks are TSC cycles; set once by clock_init(). */
extern struct hot_flag ticks_use_tsc;

/* HOT, async-signal-safe. Returns CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t ticks_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* HOT, async-signal-safe. Returns the current raw tick count. */
static inline uint64_t ticks_now(void)
{
#if TICKS_HAVE_TSC
	if (__builtin_expect(ticks_use_tsc.on, 1)) {
		return __rdtsc();
	}
#endif
	return ticks_mono_ns();
}

#endif /* MXPROF_TICKS_H */
