/*
 * memswitch.c - set_config(profile_memory=...): which device memory
 * records count, by when they happened.
 *
 * CUPTI hands memory records over seconds after the allocations, so the
 * switch cannot act on them as they come: each change is noted with its
 * time (CLOCK_MONOTONIC ns, the records' clock), and store_push() keeps a
 * memory record only when the switch was on at its timestamp. The last
 * MEM_SWITCHES changes are kept; a record older than all of them takes
 * the state before the oldest. Changes come from the program's threads,
 * the questions from the drain thread: a lock of this file's own, a leaf
 * of the lock order (LOCK_SOURCE_LEAF): nothing is taken inside it.
 */
#include <pthread.h>
#include <time.h>

#include "cupti.h"
#include "gpu.h"

#define MEM_SWITCHES 256

static struct coll_lock lock = COLL_LOCK_INIT(LOCK_SOURCE_LEAF);
static struct {
	uint64_t at;
	int on;
} sw[MEM_SWITCHES];
static unsigned nsw;

void memswitch_set_at(int on, uint64_t at)
{
	coll_lock(&lock);
	if (nsw == MEM_SWITCHES) {
		for (unsigned i = 1; i < nsw; i++) {
			sw[i - 1] = sw[i];
		}
		nsw--;
	}
	sw[nsw].at = at;
	sw[nsw].on = on != 0;
	nsw++;
	coll_unlock(&lock);
}

int memswitch_on_at(uint64_t t)
{
	int on = 1;

	coll_lock(&lock);
	if (nsw) {
		on = !sw[0].on; /* before the oldest change */
	}
	for (unsigned i = nsw; i-- > 0;) {
		if (t >= sw[i].at) {
			on = sw[i].on;
			break;
		}
	}
	coll_unlock(&lock);
	return on;
}

void memswitch_reset(void)
{
	coll_lock(&lock);
	nsw = 0;
	coll_unlock(&lock);
}

void cupti_memory_switch(int on)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	memswitch_set_at(on, (uint64_t)ts.tv_sec * 1000000000u +
				     (uint64_t)ts.tv_nsec);
}
