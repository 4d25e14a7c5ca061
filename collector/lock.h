/*
 * lock.h - the lock order of the whole library and its mutexes (lock.c).
 * Every module includes it through source.h; lock.c alone implements it.
 */
#ifndef MXPROF_LOCK_H
#define MXPROF_LOCK_H

#include <pthread.h>

/* ---- the lock order ----------------------------------------------------- */

/*
 * Every mutex of the library, in the one order in which they may be taken:
 * a thread that holds a lock takes only locks further down this list.
 * coll_fork_prepare() takes them all in this order, with every signal
 * blocked, so that a forked child starts with consistent tables; builds
 * with MXPROF_LOCK_CHECK (the test suite's sanitizer builds) check the
 * order at every acquisition and abort on the first violation.
 *
 * The dynamic linker's own lock sits between LOCK_HOOK and LOCK_STATE: the
 * patcher walks and pins the loaded objects while it holds LOCK_HOOK, and
 * code that the loader runs (constructors, dlopen from them) may record,
 * name things and change the state, but never waits for LOCK_HOOK (the
 * dl wrappers only try it).
 *
 * The ranks name what a lock guards, not who owns it: an event source
 * that must load its library under a lock of its own takes
 * LOCK_SOURCE_START (before the owner lock, held across fork() by the
 * source's fork_prepare), and a source's small table that nothing else
 * is taken under, LOCK_SOURCE_LEAF. The last ranks are leaves: a thread
 * may take one whatever it holds, and takes nothing while it holds it.
 * Two leaves are not held across fork() (lock.c says why).
 */
enum coll_lock_rank {
	LOCK_HOOK = 1,	   /* preload/hook: patterns, objects, stubs     */
	LOCK_STATE,	   /* preload/state.c: run, pause, windows       */
	LOCK_SOURCE_START, /* a source's start: loading its library */
	LOCK_OWNER,	   /* drain.c: the collector's state             */
	LOCK_REQUESTS,	   /* queue.c: requests to the drain thread      */
	LOCK_META,	   /* meta.c: the metadata the program added     */
	LOCK_WINDOWS,	   /* window.c: when recording was on            */
	LOCK_NAMES,	   /* threads.c: thread names the program gave   */
	LOCK_CATEGORIES,   /* cat.c: registering categories              */
	LOCK_DOMAINS,	   /* preload/api.c: the domains                 */
	LOCK_STRTAB,	   /* strtab.c: interning                        */
	LOCK_SOURCE_LEAF,  /* a source's own small table (a leaf)      */
	LOCK_PIPE,	   /* out_pipe.c: one output's chunks (a leaf)   */
	LOCK_RANKS,
};

struct coll_lock {
	pthread_mutex_t m;
	int rank; /* enum coll_lock_rank */
};

#define COLL_LOCK_INIT(r)                                                      \
	{                                                                      \
		PTHREAD_MUTEX_INITIALIZER, (r)                                 \
	}

/* Takes l, checking the lock order in MXPROF_LOCK_CHECK builds. Not HOT,
 * not for signal handlers. */
void coll_lock(struct coll_lock *l);

/* Takes l when it is free: returns 1, or 0 without waiting. */
int coll_trylock(struct coll_lock *l);

/* Takes l, waiting until the CLOCK_REALTIME time until at most: returns 1
 * once taken, 0 when the time came first. A bounded wait cannot deadlock,
 * so, like coll_trylock(), it checks no order. */
struct timespec;
int coll_timedlock(struct coll_lock *l, const struct timespec *until);

/* Releases l. */
void coll_unlock(struct coll_lock *l);

#endif /* MXPROF_LOCK_H */
