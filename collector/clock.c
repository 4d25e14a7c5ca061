/*
 * clock.c - converting raw ticks to trace time.
 *
 * The hot path reads the TSC (ticks.h). This file maps ticks to
 * CLOCK_MONOTONIC nanoseconds without ever calibrating in the host program's
 * way: the drain thread takes an anchor (a simultaneous TSC and
 * CLOCK_MONOTONIC reading) at every pass, and a tick value is converted by
 * linear interpolation between the two anchors around it.
 *
 * Why interpolation and not one frequency: a frequency measured once drifts
 * against CLOCK_MONOTONIC (NTP slews it), and a frequency re-measured later
 * would convert the same tick differently before and after, breaking the
 * nesting of spans that straddle the change. Piecewise-linear conversion is
 * continuous and monotonic, and it tracks CLOCK_MONOTONIC exactly at every
 * anchor, so host and GPU timestamps (CUPTI reads CLOCK_MONOTONIC-based time)
 * stay aligned over hours.
 *
 * The drain thread snapshots the ring heads before it takes the anchor, so
 * every record it converts was stamped before the newest anchor: records are
 * interpolated, never extrapolated, except after a very long stall.
 *
 * Only the thread that drains calls clock_anchor() and clock_to_ns(); the
 * drain lock serialises them.
 */
#include <stdio.h>
#include <string.h>

#include "collector.h"

#if TICKS_HAVE_TSC
#include <cpuid.h>
#endif

int ticks_use_tsc;

#define NANCHORS 16

struct anchor {
	uint64_t tick;
	uint64_t ns; /* CLOCK_MONOTONIC */
	double rate; /* ns per tick from here to the next anchor */
};

static struct anchor anchors[NANCHORS];
static unsigned nanchors; /* total taken; newest is (nanchors - 1) */
static uint64_t base_mono_ns;
static int64_t base_utc_ns;

static int tsc_is_invariant(void)
{
#if TICKS_HAVE_TSC
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) {
		return 0;
	}
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1; /* invariant TSC */
#else
	return 0;
#endif
}

/* Reads a tick and CLOCK_MONOTONIC as close together as it can. */
static struct anchor read_anchor(void)
{
	struct anchor best = {0, 0, 0.0};
	uint64_t best_gap = UINT64_MAX;

	if (!ticks_use_tsc) {
		uint64_t ns = ticks_mono_ns();
		return (struct anchor){ns, ns, 1.0};
	}
	for (int i = 0; i < 5; i++) {
		uint64_t a = ticks_now();
		uint64_t ns = ticks_mono_ns();
		uint64_t b = ticks_now();
		if (b - a < best_gap) {
			best_gap = b - a;
			best.tick = a + (b - a) / 2;
			best.ns = ns;
		}
	}
	return best;
}

static struct anchor *anchor_at(unsigned i)
{
	return &anchors[i % NANCHORS];
}

/*
 * Chooses the clock and takes the first anchor, which becomes ts = 0 of
 * the trace. Call once, before any record is made. This function can't
 * fail.
 */
void clock_init(void)
{
	struct timespec rt;

	ticks_use_tsc = tsc_is_invariant();
	nanchors = 0;
	struct anchor a = read_anchor();
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t mono = ticks_mono_ns();
	anchors[0] = a;
	nanchors = 1;
	base_mono_ns = a.ns;
	base_utc_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec -
		      (int64_t)(mono - a.ns);
}

/*
 * Takes a new anchor. Call on the draining thread after snapshotting the
 * rings and before converting their records. This function can't fail.
 */
void clock_anchor(void)
{
	struct anchor a = read_anchor();
	struct anchor *last = anchor_at(nanchors - 1);

	if (a.tick <= last->tick || a.ns < last->ns) {
		return; /* no progress; keep the segment we have */
	}
	last->rate = (double)(a.ns - last->ns) / (double)(a.tick - last->tick);
	a.rate = last->rate; /* until the next anchor: extrapolate */
	*anchor_at(nanchors) = a;
	nanchors++;
}

/* Converts t on the segment that starts at a. The rate is a double: the
 * tick distance within a segment is small enough that the product is
 * exact to far below a nanosecond. */
static uint64_t lerp(const struct anchor *a, uint64_t t)
{
	if (t >= a->tick) {
		return a->ns + (uint64_t)((double)(t - a->tick) * a->rate);
	}
	return a->ns - (uint64_t)((double)(a->tick - t) * a->rate);
}

/*
 * Converts a tick value to nanoseconds since the trace origin. Values
 * before the origin give 0. This function can't fail.
 */
uint64_t clock_to_ns(uint64_t t)
{
	uint64_t ns;

	if (!ticks_use_tsc) {
		ns = t;
	} else if (nanchors < 2) {
		/* No segment yet: take one now so there is a rate. */
		clock_anchor();
		if (nanchors < 2) {
			return 0;
		}
		return clock_to_ns(t);
	} else {
		unsigned newest = nanchors - 1;
		unsigned oldest = nanchors > NANCHORS ? nanchors - NANCHORS : 0;
		unsigned i = newest;
		/* Find the segment [i-1, i] holding t, newest first. */
		while (i > oldest + 1 && t < anchor_at(i - 1)->tick) {
			i--;
		}
		ns = t >= anchor_at(newest)->tick ? lerp(anchor_at(newest), t)
						  : lerp(anchor_at(i - 1), t);
	}
	return ns > base_mono_ns ? ns - base_mono_ns : 0;
}

/* Returns the UTC time of the trace origin in ns since the epoch. */
int64_t clock_base_utc_ns(void)
{
	return base_utc_ns;
}

/* Returns CLOCK_MONOTONIC of the trace origin, in ns. */
uint64_t clock_base_mono_ns(void)
{
	return base_mono_ns;
}

/* Returns "tsc" or "monotonic": the clock records are stamped with. */
const char *clock_source(void)
{
	return ticks_use_tsc ? "tsc" : "monotonic";
}
