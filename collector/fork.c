/*
 * fork.c - fork()'s handlers: every lock of the written order taken in
 * prepare, with every signal blocked, and released in the parent; the
 * child forgets its parent's queue, journal and records, and starts its
 * own drain thread.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "drain.h"
#include "files.h"

#define S coll_state

/* The signal mask of the forking thread, from prepare to parent/child. */
static sigset_t fork_mask;

/* Runs the fork callback of every source whose lock has rank rank. */
static void sources_fork(int rank, int which)
{
	for (int i = 0; coll_sources[i]; i++) {
		const struct coll_source *s = coll_sources[i];
		void (*fn)(void) = which == 0	? s->fork_prepare
				   : which == 1 ? s->fork_parent
						: s->fork_child;
		if (s->fork_rank == rank && fn) {
			fn();
		}
	}
}

/*
 * fork(): every lock of the written order, with every signal blocked (a
 * handler that records or dumps must not run while they are held).
 */
void coll_fork_prepare(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fork_mask);
	for (int rank = 1; rank < LOCK_OWNER; rank++) {
		sources_fork(rank, 0);
	}
	coll_lock(&drain_owner);
	coll_lock(&queue_q.lock);
	meta_fork_prepare();
	window_fork_prepare();
	threads_fork_prepare();
	cat_fork_prepare();
	strtab_lock();
}

/* Releases what coll_fork_prepare() took, last first; which: 1 parent,
 * 2 child. */
static void fork_release(int which)
{
	strtab_unlock();
	cat_fork_parent();
	threads_fork_parent();
	if (which == 1) {
		window_fork_parent();
	} else {
		window_fork_child();
		steps_fork_child();
	}
	meta_fork_parent();
	coll_unlock(&queue_q.lock);
	coll_unlock(&drain_owner);
	for (int rank = LOCK_OWNER - 1; rank >= 1; rank--) {
		sources_fork(rank, which);
	}
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

void coll_fork_parent(void)
{
	fork_release(1);
}

void coll_fork_child(const char *output)
{
	ring_after_fork_child();
	/* Requests queued by the parent's other threads: those threads are
	 * not in the child, and nobody waits here. */
	queue_q.head = queue_q.tail = NULL;
	queue_q.accepting = 0;
	__atomic_store_n(&drain_t.running, 0, __ATOMIC_RELEASE);
	drain_t.wake = 0;
	drain_t.dump_req = 0;
	drain_t.final_req = 0;
	drain_t.final_done = 0;
	drain_t.exit_req = 0;
	drain_t.exit_done = 0;
	drain_t.pause_req = 0; /* another thread was changing its ids */
	ring_drain_alive = 0;
	if (drain_t.started && !drain_t.finished) {
		/* The parent's journal stays the parent's: forget it
		 * unflushed. */
		if (S.journal_open > 0) {
			journal_forget(S.j);
		}
		S.j->fd = -1;
		S.j->n = 0;
		if (S.agg) {
			agg_reset(S.agg);
		}
		agg_destroy(S.before_reset);
		S.before_reset = NULL;
		snprintf(S.cfg.output, sizeof(S.cfg.output), "%s", output);
		/* The child's journal is its own, new. */
		S.cfg.continue_journal = 0;
		S.cfg.dump_owed = 0; /* the parent's signal */
		drain_setup(&S.cfg);
	}
	fork_release(2);
	if (!drain_t.started || drain_t.finished) {
		return;
	}
	if (queue_defer_child) {
		__atomic_store_n(&drain_t.pending, 1, __ATOMIC_RELEASE);
	} else if (queue_start_thread() < 0) {
		fprintf(stderr, "mxprof: cannot start the drain thread in "
				"child; records are drained at exit only\n");
	}
}
