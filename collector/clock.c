/*
 * clock.c - converting raw ticks to trace time.
 *
 * The hot path reads the TSC (ticks.h). This file maps ticks to
 * CLOCK_MONOTONIC nanoseconds, on the thread that drains, without ever
 * making the host program wait for a calibration.
 *
 * The mapping is a disciplined clock: a chain of linear segments, each
 * starting where the previous one ends. A new segment starts at an anchor
 * (a simultaneous TSC and CLOCK_MONOTONIC reading), but it is placed on the
 * line the previous segment was already extrapolating, not at the measured
 * CLOCK_MONOTONIC value; the difference is steered away through the new
 * segment's rate over the next second. So:
 *
 *  - a tick converts to the same nanoseconds whenever it is converted:
 *    before or after later anchors, in this dump or the next. Spans that
 *    nest in ticks nest in the trace, even when a long span's start is
 *    converted minutes after its children were. (Placing anchors at their
 *    measured values would move every tick converted by extrapolation by
 *    the anchor's jitter, tens of nanoseconds, enough to break nesting.)
 *  - the mapping is continuous and strictly increasing;
 *  - it follows CLOCK_MONOTONIC to within the jitter of an anchor after
 *    the first seconds, NTP slewing included, over runs of any length.
 *
 * The first rate is measured over at least 1 ms after clock_init(), on the
 * draining thread; later anchors come every 100 ms for the first 2 s, then
 * every second, and are all kept (24 bytes each: 2 MB a day).
 *
 * Only the thread that drains calls clock_anchor() and clock_to_ns(); the
 * owner lock serialises them. Any thread may call clock_now_ns(), which
 * reads the newest segment through a sequence count: sources that take
 * nanoseconds rather than ticks (GPU timestamps) then share the
 * mapping, so that their slices nest with ranges recorded in ticks even
 * in the first seconds, while the mapping may still be microseconds off
 * CLOCK_MONOTONIC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if TICKS_HAVE_TSC
#include <cpuid.h>
#endif

struct hot_flag ticks_use_tsc;

/* A segment: from tick on (until the next one), ns = ns0 + (t - tick) *
 * rate. */
struct segment {
	uint64_t tick;
	uint64_t ns;
	double rate; /* ns per tick */
};

static struct segment *segs;
static size_t nsegs, capsegs;
static struct segment first; /* the reading at clock_init, rate unknown */
static uint64_t last_anchor_ns;
static uint64_t base_mono_ns;
static int64_t base_utc_ns;

#define FIRST_RATE_NS 1000000ull /* measure the first rate over >= 1 ms */
#define MAX_STEER     5e-4	 /* steer at most 500 ppm off the rate */
#define STEER_NS      1e9	 /* correct an error over about 1 s   */

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

/* Reads a tick and CLOCK_MONOTONIC as close together as it can: the best
 * of five tries, the tick taken in the middle of the clock read. */
static struct segment read_pair(void)
{
	struct segment best = {0, 0, 0.0};
	uint64_t best_gap = UINT64_MAX;

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

/* The newest segment, for clock_now_ns(): seq is odd while it changes,
 * and 0 before the first segment. The rate travels as its bits. */
static struct {
	uint32_t seq;
	uint64_t tick, ns, rate_bits;
} pub;

static void publish(struct segment s)
{
	uint32_t seq = __atomic_load_n(&pub.seq, __ATOMIC_RELAXED);
	uint64_t bits;

	memcpy(&bits, &s.rate, sizeof(bits));
	/* Release stores (no fences: ThreadSanitizer does not model them):
	 * a reader that sees any new field also sees the odd count. */
	__atomic_store_n(&pub.seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pub.tick, s.tick, __ATOMIC_RELEASE);
	__atomic_store_n(&pub.ns, s.ns, __ATOMIC_RELEASE);
	__atomic_store_n(&pub.rate_bits, bits, __ATOMIC_RELEASE);
	__atomic_store_n(&pub.seq, seq + 2, __ATOMIC_RELEASE);
}

static int append(struct segment s)
{
	publish(s);
	if (nsegs == capsegs) {
		size_t n = capsegs ? capsegs * 2 : 256;
		struct segment *ns = realloc(segs, n * sizeof(*ns));
		if (!ns) {
			return -1; /* the last segment goes on being used */
		}
		segs = ns;
		capsegs = n;
	}
	segs[nsegs++] = s;
	return 0;
}

/*
 * Chooses the clock and reads the trace's origin (ts = 0). Call once,
 * before any record is made. This function can't fail and never waits.
 */
void clock_init(void)
{
	struct timespec rt;

	ticks_use_tsc.on = tsc_is_invariant();
	nsegs = 0;
	__atomic_store_n(&pub.seq, 0, __ATOMIC_RELEASE);
	first = ticks_use_tsc.on ? read_pair()
				 : (struct segment){ticks_mono_ns(), 0, 1.0};
	if (!ticks_use_tsc.on) {
		first.ns = first.tick;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t mono = ticks_mono_ns();
	base_mono_ns = first.ns;
	base_utc_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec -
		      (int64_t)(mono - first.ns);
}

/* The first segment: its rate measured from the origin over >= 1 ms
 * (waiting out the rest of that millisecond once, on the draining
 * thread). */
static void first_segment(void)
{
	struct segment now = read_pair();

	while (now.ns - first.ns < FIRST_RATE_NS || now.tick <= first.tick) {
		now = read_pair();
	}
	first.rate =
		(double)(now.ns - first.ns) / (double)(now.tick - first.tick);
	append(first);
	last_anchor_ns = now.ns;
}

/* The segment of the last conversion: a drain pass converts ticks of the
 * last few milliseconds, nearly all on the newest segment. */
static size_t seg_hint;

/* The segment that holds tick t (the first one for earlier ticks). */
static const struct segment *segment_for(uint64_t t)
{
	size_t lo = 0, hi = nsegs; /* segs[lo].tick <= t < segs[hi].tick */

	if (seg_hint < nsegs && segs[seg_hint].tick <= t &&
	    (seg_hint + 1 == nsegs || t < segs[seg_hint + 1].tick)) {
		return &segs[seg_hint];
	}
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (segs[mid].tick <= t) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	seg_hint = lo;
	return &segs[lo];
}

static uint64_t on_segment(const struct segment *s, uint64_t t)
{
	/* Differences below 2^63 ticks: signed conversions are one
	 * instruction, unsigned ones a branch and two. */
	if (t >= s->tick) {
		return s->ns +
		       (uint64_t)(int64_t)((double)(int64_t)(t - s->tick) *
					   s->rate);
	}
	uint64_t back =
		(uint64_t)(int64_t)((double)(int64_t)(s->tick - t) * s->rate);
	return back < s->ns ? s->ns - back : 0;
}

/*
 * Starts a new segment when it is time to (see the top of this file).
 * Call on the draining thread. This function can't fail: when memory runs
 * out, the newest segment simply goes on.
 */
void clock_anchor(void)
{
	if (!ticks_use_tsc.on) {
		return;
	}
	if (nsegs == 0) {
		first_segment();
		return;
	}
	struct segment now = read_pair();
	uint64_t since_start = now.ns - first.ns;
	uint64_t every =
		since_start < 2000000000ull ? 100000000ull : 1000000000ull;
	if (now.ns - last_anchor_ns < every) {
		return;
	}
	const struct segment *last = &segs[nsegs - 1];
	if (now.tick <= last->tick) {
		return;
	}
	/* The new segment starts on the current line, so nothing converted
	 * so far moves; its rate is the run's average rate, steered to
	 * absorb the error against CLOCK_MONOTONIC over about a second. */
	uint64_t on_line = on_segment(last, now.tick);
	double err = (double)now.ns - (double)on_line;
	double rate =
		(double)(now.ns - first.ns) / (double)(now.tick - first.tick);
	double steer = err / STEER_NS;
	if (steer > MAX_STEER) {
		steer = MAX_STEER;
	} else if (steer < -MAX_STEER) {
		steer = -MAX_STEER;
	}
	append((struct segment){now.tick, on_line, rate * (1.0 + steer)});
	last_anchor_ns = now.ns;
}

/*
 * Converts a tick value to nanoseconds since the trace origin; values
 * before the origin give 0. The same tick always gives the same value.
 * This function can't fail.
 */
uint64_t clock_to_ns(uint64_t t)
{
	uint64_t ns;

	if (!ticks_use_tsc.on) {
		ns = t;
	} else {
		if (nsegs == 0) {
			first_segment();
		}
		ns = on_segment(segment_for(t), t);
	}
	return ns > base_mono_ns ? ns - base_mono_ns : 0;
}

void clock_line(struct clock_line *l)
{
	l->tick = UINT64_MAX;
	l->base = base_mono_ns;
	if (ticks_use_tsc.on && nsegs > 0) {
		const struct segment *s = &segs[nsegs - 1];
		l->tick = s->tick;
		l->ns = s->ns;
		l->rate = s->rate;
	}
}

/*
 * HOT, async-signal-safe, any thread. Returns now in CLOCK_MONOTONIC
 * nanoseconds as the mapping converts ticks: a tick read at this moment
 * and converted later gives the same value, give or take the steering of
 * an anchor made in between (nanoseconds). Before the first segment, and
 * when ticks are not TSC cycles, it is CLOCK_MONOTONIC itself.
 */
uint64_t clock_now_ns(void)
{
	if (!ticks_use_tsc.on) {
		return ticks_mono_ns();
	}
	for (int tries = 0; tries < 4; tries++) {
		uint32_t seq = __atomic_load_n(&pub.seq, __ATOMIC_ACQUIRE);

		if (seq == 0) {
			break;
		}
		if (seq & 1) {
			continue;
		}
		/* Acquire loads keep the second read of seq after them. */
		struct segment s = {
			.tick = __atomic_load_n(&pub.tick, __ATOMIC_ACQUIRE),
			.ns = __atomic_load_n(&pub.ns, __ATOMIC_ACQUIRE),
		};
		uint64_t bits =
			__atomic_load_n(&pub.rate_bits, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&pub.seq, __ATOMIC_RELAXED) == seq) {
			memcpy(&s.rate, &bits, sizeof(s.rate));
			return on_segment(&s, ticks_now());
		}
	}
	return ticks_mono_ns();
}

/* Returns the UTC time of the trace origin in ns since the epoch. */
int64_t clock_base_utc_ns(void)
{
	return base_utc_ns;
}

/*
 * Moves the trace origin back to mono (CLOCK_MONOTONIC ns) and utc (its
 * UTC time): the origin of an earlier image of this process, whose journal
 * this one continues after exec. Call before the first record is
 * converted; an origin later than this image's own is ignored. This
 * function can't fail.
 */
void clock_set_origin(uint64_t mono, int64_t utc)
{
	if (mono < base_mono_ns) {
		base_mono_ns = mono;
		base_utc_ns = utc;
	}
}

/* Returns CLOCK_MONOTONIC of the trace origin, in ns. */
uint64_t clock_base_mono_ns(void)
{
	return base_mono_ns;
}

/* Returns "tsc" or "monotonic": the clock records are stamped with. */
const char *clock_source(void)
{
	return ticks_use_tsc.on ? "tsc" : "monotonic";
}
