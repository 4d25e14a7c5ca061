/*
 * ring_collect.c - the consumer's side of the rings: the drain thread's.
 *
 * ring_collect() hands the drain thread every ring's new records and
 * releases their slots, reading each ring only up to the head its thread
 * published; it frees the rings of exited threads once they are empty, so
 * that new threads claim them. The drop counts of freed rings move into
 * one total here, which any thread may read (ring_dropped()). None of
 * this takes a lock: ring.h says why that is safe.
 */
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "internal.h"
#include "ring.h"

static uint64_t dropped_gone;	 /* drops of rings already recycled      */
static unsigned dropped_seq;	 /* odd while a ring's drops move        */
static uint64_t tally_lost_gone; /* tally_lost of rings recycled      */
static tally_fn tally_sink;
static void *tally_ctx;

/* A ring the drain thread reads: live, or dead with records left. */
static int in_use(const struct ring *r)
{
	int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);

	return st == RING_LIVE || st == RING_DEAD;
}

int ring_any(void)
{
	return __atomic_load_n(&ring_all, __ATOMIC_ACQUIRE) != NULL;
}

uint64_t ring_dropped(void)
{
	uint64_t n;
	unsigned seq;

	/* A sequence count: the loads of the counts are acquires, so the
	 * second read of seq cannot move before them. */
	do {
		while ((seq = __atomic_load_n(&dropped_seq, __ATOMIC_ACQUIRE)) &
		       1u) {
			sched_yield();
		}
		n = __atomic_load_n(&ring_dropped_other, __ATOMIC_ACQUIRE) +
		    __atomic_load_n(&dropped_gone, __ATOMIC_ACQUIRE);
		for (struct ring *r =
			     __atomic_load_n(&ring_all, __ATOMIC_ACQUIRE);
		     r; r = r->next) {
			if (in_use(r)) {
				n += __atomic_load_n(&r->dropped,
						     __ATOMIC_ACQUIRE);
			}
		}
	} while (__atomic_load_n(&dropped_seq, __ATOMIC_RELAXED) != seq);
	return n;
}

uint64_t ring_dropped_ringless(void)
{
	return __atomic_load_n(&ring_dropped_other, __ATOMIC_ACQUIRE);
}

uint64_t ring_tally_lost(void)
{
	uint64_t n;
	unsigned seq;

	do {
		while ((seq = __atomic_load_n(&dropped_seq, __ATOMIC_ACQUIRE)) &
		       1u) {
			sched_yield();
		}
		n = __atomic_load_n(&tally_lost_gone, __ATOMIC_ACQUIRE) +
		    tally_orphans_lost();
		for (struct ring *r =
			     __atomic_load_n(&ring_all, __ATOMIC_ACQUIRE);
		     r; r = r->next) {
			if (in_use(r)) {
				n += __atomic_load_n(&r->tally->lost,
						     __ATOMIC_ACQUIRE);
			}
		}
	} while (__atomic_load_n(&dropped_seq, __ATOMIC_RELAXED) != seq);
	return n;
}

void ring_set_tally_sink(tally_fn fn, void *ctx)
{
	tally_sink = fn;
	tally_ctx = ctx;
}

/* Frees the dead, empty ring r, moving its drop count into the total:
 * between two increments of the sequence count, the first an acquire (the
 * moves cannot start before it), the second a release. */
static void recycle(struct ring *r)
{
	__atomic_fetch_add(&dropped_seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&dropped_gone, dropped_gone + r->dropped,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tally_lost_gone, tally_lost_gone + r->tally->lost,
			 __ATOMIC_RELAXED);
	tally_clear(r->tally);
	__atomic_fetch_add(&dropped_seq, 1, __ATOMIC_RELEASE);
	if (r->succ) {
		__atomic_store_n(&r->succ->pred, NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&r->succ, NULL, __ATOMIC_RELAXED);
	}
	/* A grown ring waits for the next thread that grows: without the
	 * pages its records used. */
	if (r->mask + 1 != ring_capacity) {
		madvise(r->recs,
			(size_t)(r->mask + 1) * sizeof(struct coll_rec),
			MADV_DONTNEED);
	}
	__atomic_store_n(&r->state, RING_FREE, __ATOMIC_RELEASE);
}

/*
 * A thread's first lap through a new buffer writes pages that are not
 * there yet: a page fault every 128 records on the recording thread, and
 * lines fetched from memory. The drain fills in a buffer of the first
 * size (grown ones are mapped filled) ahead of its thread, on its own
 * core: twice what the thread has used, and RING_FILL_AHEAD records more,
 * so that a thread that records little keeps a small footprint. Until
 * its head passes the end, [0, head) is what the thread wrote itself.
 */
#define RING_FILL_AHEAD 1024

static void fill_ahead(struct ring *r)
{
	static int cannot; /* the kernel refuses MADV_POPULATE_WRITE */
	uint64_t cap = r->mask + 1;

	if (r->filled >= cap || cap != ring_capacity) {
		return;
	}
	if (cannot || r->snap >= cap) {
		r->filled = cap; /* the thread has been everywhere */
		return;
	}
	uint64_t want = 2 * r->snap + RING_FILL_AHEAD;
	if (want > cap) {
		want = cap;
	}
	if (want <= r->filled) {
		return;
	}
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)&r->recs[r->filled] & ~(page - 1);
	uintptr_t hi = (uintptr_t)&r->recs[want];

	/* The kernel rounds the end up to its page. */
	if (madvise((void *)lo, hi - lo, MXPROF_MADV_POPULATE_WRITE) != 0) {
		cannot = 1;
	}
	r->filled = want;
}

/* One round of ring_collect(); sets *again when it freed a ring that
 * another grew from, whose records may now be read. */
static uint64_t collect_round(ring_emit_fn emit, void *ctx, int anchor,
			      int *again)
{
	struct ring *list = __atomic_load_n(&ring_all, __ATOMIC_ACQUIRE);
	uint64_t total = 0;
	int any = 0;

	for (struct ring *r = list; r; r = r->next) {
		r->snap = in_use(r)
				  ? __atomic_load_n(&r->head, __ATOMIC_ACQUIRE)
				  : r->tail;
		any |= r->snap != r->tail;
	}
	/* The clock's first segment is measured over a millisecond from
	 * the start: a process that records nothing (a shell wrapper's
	 * helpers) never waits for it, nor does a pass with nothing to
	 * convert (clock_to_ns makes it when first needed). */
	if (anchor && any) {
		clock_anchor();
	}
	for (struct ring *r = list; r; r = r->next) {
		uint64_t t = r->tail;
		/* A ring grown from one not yet empty waits for it. */
		int wait = __atomic_load_n(&r->pred, __ATOMIC_RELAXED) != NULL;
		if (!wait && t < r->snap) {
			threads_note_comm(r->tid, r->comm);
		}
		while (!wait && t < r->snap) {
			uint64_t i = t & r->mask;
			uint64_t n = r->snap - t;
			if (n > r->mask + 1 - i) {
				n = r->mask + 1 - i;
			}
			emit(ctx, r->tid, &r->recs[i], (size_t)n);
			t += n;
		}
		total += t - r->tail;
		__atomic_store_n(&r->tail, t, __ATOMIC_RELEASE);
		if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) == RING_LIVE) {
			fill_ahead(r);
		}
		if (tally_sink && in_use(r)) {
			tally_take(r->tally, tally_sink, tally_ctx);
		}
	}
	if (tally_sink) {
		tally_orphans_take(tally_sink, tally_ctx);
	}
	/* Free the rings of exited threads once they are empty. */
	for (struct ring *r = list; r; r = r->next) {
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == RING_DEAD &&
		    r->tail == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE)) {
			/* The thread may have added to its tally after the
			 * take above, before it died or grew: take it once
			 * more, now that nothing writes it, before it is
			 * cleared. */
			if (tally_sink) {
				tally_take(r->tally, tally_sink, tally_ctx);
			}
			*again |= r->succ != NULL;
			recycle(r);
		}
	}
	return total;
}

/*
 * One drain pass: snapshots every ring's head, takes a clock anchor, then
 * hands each ring's new records to emit (in at most two contiguous runs per
 * ring, oldest first) and releases them. Dead rings that are empty are
 * freed for new threads. A ring a thread grew into is read once the one it
 * grew from is empty and freed, in a further round of the same pass. Call only
 * from the thread that drains (the collector's owner); takes no lock, so a
 * thread's first record never waits for it. Returns the number of records
 * handed over. This function can't fail.
 */
uint64_t ring_collect(ring_emit_fn emit, void *ctx)
{
	uint64_t total = 0;
	int again = 1;

	for (int round = 0; again; round++) {
		again = 0;
		total += collect_round(emit, ctx, round == 0, &again);
	}
	return total;
}

/*
 * Calls fn for every thread that has a ring (live, or dead and not yet
 * freed). The drain thread's; takes no lock. This function can't fail.
 */
void ring_foreach_tid(void (*fn)(void *ctx, int tid, int dead), void *ctx)
{
	for (struct ring *r = __atomic_load_n(&ring_all, __ATOMIC_ACQUIRE); r;
	     r = r->next) {
		int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		/* A ring its thread grew out of: the thread has another. */
		if ((st == RING_LIVE || st == RING_DEAD) &&
		    !__atomic_load_n(&r->succ, __ATOMIC_RELAXED)) {
			fn(ctx, r->tid, st == RING_DEAD);
		}
	}
}

/*
 * Child side of fork(): records still in the rings were made by the parent,
 * which drains them itself, so the child discards them. Rings of threads
 * that do not exist in the child are freed; the calling thread keeps its
 * ring under its new tid. Drop counts restart at zero. The drain thread
 * was between passes (the fork handlers hold the collector's owner lock).
 */
void ring_after_fork_child(void)
{
	struct ring *mine = ring_tls.ring;

	/* A push of this thread cut by fork() never ends: its slots count as
	 * published, then as drained, like every other ring's. */
	ring_tls.depth = 0;
	ring_tls.cached_tail = ring_tls.reserve;
	for (struct ring *r = ring_all; r; r = r->next) {
		r->head = r == mine ? ring_tls.reserve : 0;
		r->tail = r->snap = r->head;
		r->filled = 0; /* the parent's pages: copied on write */
		r->dropped = 0;
		tally_clear(r->tally);
		r->state = r == mine ? RING_LIVE : RING_FREE;
		r->pred = NULL;
		r->succ = NULL;
	}
	if (mine) {
		mine->tid = (int)syscall(SYS_gettid);
	}
	dropped_gone = ring_dropped_other = tally_lost_gone = 0;
	tally_orphans_reset();
	dropped_seq = 0;
}
