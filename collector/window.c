/*
 * window.c - when recording was on: intervals in CLOCK_MONOTONIC ns.
 *
 * Some sources deliver their records late: GPU activity is handed over
 * in buffers, seconds after the work ran, so the state when a buffer
 * arrives says nothing about the work in it. What counts is whether the
 * profiler was recording when the work started. The state machine notes
 * every change here; sources ask coll_recording_at(). Until the first
 * note, everything counts as recorded (the collector driven directly, as
 * in tests).
 *
 * A step window (steps.c) keeps some steps only: the intervals in which
 * steps are kept are noted here too, in ticks for the drain, which leaves
 * out the records that began outside them (window_steps_keeps(),
 * lock-free: an interval is written whole before the count that shows
 * it, and only its end changes after), and in ns for
 * coll_recording_at().
 */
#include <stdint.h>

#include "internal.h"

#define MAX_WINDOWS 4096

static struct {
	struct coll_lock lock;
	unsigned n;
	int noted;
	struct {
		uint64_t on, off; /* off == UINT64_MAX while recording */
	} w[MAX_WINDOWS];
} W = {.lock = COLL_LOCK_INIT(LOCK_WINDOWS)};

/* The step windows: written under W.lock, read lock-free. */
static struct {
	int on;	    /* a step window is set */
	unsigned n; /* atomic: intervals shown */
	struct {
		uint64_t on, off; /* ticks; off atomic, UINT64_MAX: open */
		uint64_t on_ns, off_ns; /* clock_now_ns(); off_ns atomic */
	} w[MAX_WINDOWS];
} SW;

void window_steps_start(int keep)
{
	coll_lock(&W.lock);
	SW.on = 1;
	if (keep && SW.n == 0) {
		SW.w[0].on = SW.w[0].on_ns = 0;
		SW.w[0].off = SW.w[0].off_ns = UINT64_MAX;
		__atomic_store_n(&SW.n, 1, __ATOMIC_RELEASE);
	}
	coll_unlock(&W.lock);
}

void window_steps_note(int keep, uint64_t t, uint64_t now_ns)
{
	coll_lock(&W.lock);
	unsigned n = SW.n;
	int open = n > 0 && SW.w[n - 1].off == UINT64_MAX;
	if (keep && !open) {
		if (n == MAX_WINDOWS) {
			/* Out of room: the last interval absorbs the rest. */
			__atomic_store_n(&SW.w[n - 1].off, UINT64_MAX,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&SW.w[n - 1].off_ns, UINT64_MAX,
					 __ATOMIC_RELEASE);
		} else {
			SW.w[n].on = t;
			SW.w[n].on_ns = now_ns;
			SW.w[n].off = SW.w[n].off_ns = UINT64_MAX;
			__atomic_store_n(&SW.n, n + 1, __ATOMIC_RELEASE);
		}
	} else if (!keep && open) {
		__atomic_store_n(&SW.w[n - 1].off_ns, now_ns, __ATOMIC_RELEASE);
		__atomic_store_n(&SW.w[n - 1].off, t, __ATOMIC_RELEASE);
	}
	coll_unlock(&W.lock);
}

int window_steps_keeps(uint64_t t)
{
	for (unsigned i = __atomic_load_n(&SW.n, __ATOMIC_ACQUIRE); i-- > 0;) {
		if (t >= SW.w[i].on) {
			return t <
			       __atomic_load_n(&SW.w[i].off, __ATOMIC_ACQUIRE);
		}
	}
	return 0;
}

/* The same in clock_now_ns() time. */
static int steps_keep_ns(uint64_t t)
{
	if (!SW.on) {
		return 1;
	}
	for (unsigned i = __atomic_load_n(&SW.n, __ATOMIC_ACQUIRE); i-- > 0;) {
		if (t >= SW.w[i].on_ns) {
			return t < __atomic_load_n(&SW.w[i].off_ns,
						   __ATOMIC_ACQUIRE);
		}
	}
	return 0;
}

void coll_note_recording(int on)
{
	uint64_t now = clock_now_ns();

	coll_lock(&W.lock);
	W.noted = 1;
	int open = W.n > 0 && W.w[W.n - 1].off == UINT64_MAX;
	if (on && !open) {
		if (W.n == MAX_WINDOWS) {
			/* Out of room: the last interval absorbs the rest. */
			W.w[W.n - 1].off = UINT64_MAX;
		} else {
			W.w[W.n].on = now;
			W.w[W.n].off = UINT64_MAX;
			W.n++;
		}
	} else if (!on && open) {
		W.w[W.n - 1].off = now;
	}
	coll_unlock(&W.lock);
}

int coll_recording_at(uint64_t t)
{
	int on = 0;

	coll_lock(&W.lock);
	if (!W.noted) {
		on = 1;
	}
	for (unsigned i = W.n; !on && i-- > 0;) {
		if (t >= W.w[i].on) {
			on = t < W.w[i].off;
			break;
		}
	}
	coll_unlock(&W.lock);
	return on && steps_keep_ns(t);
}

/* fork(): held across it (coll_fork_prepare); the child keeps the
 * parent's intervals, which are its own past too. */
void window_fork_prepare(void)
{
	coll_lock(&W.lock);
}

void window_fork_parent(void)
{
	coll_unlock(&W.lock);
}

void window_fork_child(void)
{
	coll_unlock(&W.lock);
}
