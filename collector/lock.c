/*
 * lock.c - mxprof's mutexes, and the check of the lock order.
 *
 * Every mutex of the library is a struct coll_lock with a rank from enum
 * coll_lock_rank (lock.h), which is the one written lock order: a
 * thread that holds a lock may only take locks of a higher rank. fork()'s
 * prepare handler takes them all in that order (coll_fork_prepare), so
 * that the child starts with every table consistent.
 *
 * Built with MXPROF_LOCK_CHECK (the sanitizer builds the test suite runs
 * define it), every blocking acquisition checks the order against the
 * locks the thread already holds, kept as a bit mask in initial-exec TLS,
 * and a violation prints one line naming both locks and aborts: a wrong
 * order is a deadlock waiting for its moment, and the suite must fail on
 * the first one it meets. A try-lock cannot deadlock and is not checked,
 * but what it takes counts as held. Without MXPROF_LOCK_CHECK these are
 * plain pthread calls.
 *
 * Three locks are ranked but stand apart:
 *  - the hook patcher's (preload/hook_dl.c, LOCK_HOOK) is only tried by
 *    the dl wrappers, and waited for with a time limit by fork()'s
 *    prepare, because the loader's lock may be held around the fork;
 *  - a source's leaf (LOCK_SOURCE_LEAF, such as the GPU source's memory
 *    switch) and an output's pipe (LOCK_PIPE, out_pipe.c) are not taken
 *    by coll_fork_prepare(): each is held only for a few stores or to
 *    wait on its condition, never around a call out, and a pipe belongs
 *    to one write of the parent's, which the child never touches (a
 *    leaf's table is reset in the child when it matters). A condition
 *    variable waits on the plain mutex inside (struct coll_lock's m),
 *    which stays counted as held.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lock.h"

#ifdef MXPROF_LOCK_CHECK
static __thread uint32_t held __attribute__((tls_model("initial-exec")));

static const char *const rank_names[LOCK_RANKS] = {
	[LOCK_HOOK] = "hook patcher",
	[LOCK_STATE] = "state",
	[LOCK_SOURCE_START] = "source start",
	[LOCK_OWNER] = "collector owner",
	[LOCK_REQUESTS] = "requests",
	[LOCK_META] = "metadata",
	[LOCK_WINDOWS] = "recording windows",
	[LOCK_NAMES] = "thread names",
	[LOCK_CATEGORIES] = "categories",
	[LOCK_DOMAINS] = "domains",
	[LOCK_STRTAB] = "string table",
	[LOCK_SOURCE_LEAF] = "source table",
	[LOCK_PIPE] = "output pipe",
};

static void check(const struct coll_lock *l)
{
	uint32_t later = held & ~((1u << l->rank) - 1u);

	if (later) {
		int r = 31 - __builtin_clz(later);
		fprintf(stderr,
			"mxprof: lock order violated: taking the %s lock "
			"while holding the %s lock\n",
			rank_names[l->rank], rank_names[r]);
		abort();
	}
}
#endif

void coll_lock(struct coll_lock *l)
{
#ifdef MXPROF_LOCK_CHECK
	check(l);
	pthread_mutex_lock(&l->m);
	held |= 1u << l->rank;
#else
	pthread_mutex_lock(&l->m);
#endif
}

int coll_trylock(struct coll_lock *l)
{
	if (pthread_mutex_trylock(&l->m) != 0) {
		return 0;
	}
#ifdef MXPROF_LOCK_CHECK
	held |= 1u << l->rank;
#endif
	return 1;
}

int coll_timedlock(struct coll_lock *l, const struct timespec *until)
{
	if (pthread_mutex_timedlock(&l->m, until) != 0) {
		return 0;
	}
#ifdef MXPROF_LOCK_CHECK
	held |= 1u << l->rank;
#endif
	return 1;
}

void coll_unlock(struct coll_lock *l)
{
#ifdef MXPROF_LOCK_CHECK
	held &= ~(1u << l->rank);
#endif
	pthread_mutex_unlock(&l->m);
}
