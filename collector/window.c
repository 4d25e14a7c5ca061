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
	return on;
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
