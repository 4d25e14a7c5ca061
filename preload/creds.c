/*
 * creds.c - changes of the process's user and group ids: the drain thread
 * stops for them.
 *
 * The C library applies setuid(), setresgid(), setgroups() and the rest
 * to every thread of the process (each thread has its own credentials in
 * Linux), and aborts the process when the call succeeds on one thread and
 * fails on another. Capabilities are per thread too: setpriv keeps them
 * across setresuid (PR_SET_KEEPCAPS, for the calling thread), makes them
 * effective again with capset (on the calling thread only), then calls
 * setresgid, which mxprof's drain thread, left without the capability,
 * refused: SIGABRT. So the wrappers here stop the drain thread before
 * the C library's call and start it again after, from the calling thread,
 * whose credentials the new thread copies (coll_drain_pause()). Records
 * made meanwhile wait in their rings; a request is served by its caller.
 *
 * A call made while another thread is changing credentials, or from a
 * signal handler that interrupted such a change, goes straight through.
 *
 * These symbols are exported by libmxprof.so only (preload/exports.map);
 * libmxprof.a leaves this file out, as it does exits.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <unistd.h>

#include "collector.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*id1_fn)(unsigned);
typedef int (*id2_fn)(unsigned, unsigned);
typedef int (*id3_fn)(unsigned, unsigned, unsigned);
typedef int (*groups_fn)(size_t, const gid_t *);

static struct {
	id1_fn setuid, setgid, seteuid, setegid;
	id2_fn setreuid, setregid;
	id3_fn setresuid, setresgid;
	groups_fn setgroups;
} real;

/* One change at a time: a second could find the thread half stopped. */
static pthread_mutex_t changing = PTHREAD_MUTEX_INITIALIZER;

/* The C library's functions, found at load: dlsym is not for a vfork
 * child or a signal handler. */
__attribute__((constructor)) static void creds_load(void)
{
	real.setuid = (id1_fn)dlsym(RTLD_NEXT, "setuid");
	real.setgid = (id1_fn)dlsym(RTLD_NEXT, "setgid");
	real.seteuid = (id1_fn)dlsym(RTLD_NEXT, "seteuid");
	real.setegid = (id1_fn)dlsym(RTLD_NEXT, "setegid");
	real.setreuid = (id2_fn)dlsym(RTLD_NEXT, "setreuid");
	real.setregid = (id2_fn)dlsym(RTLD_NEXT, "setregid");
	real.setresuid = (id3_fn)dlsym(RTLD_NEXT, "setresuid");
	real.setresgid = (id3_fn)dlsym(RTLD_NEXT, "setresgid");
	real.setgroups = (groups_fn)dlsym(RTLD_NEXT, "setgroups");
}

/* Stops the drain thread when it is there and no other change is under
 * way. Returns 2 (stopped: resume), 1 (locked only) or 0 (neither). */
static int before(void)
{
	if (pthread_mutex_trylock(&changing) != 0) {
		return 0;
	}
	return 1 + coll_drain_pause();
}

/* Starts the drain thread again after before(); keeps errno. */
static void after(int how)
{
	int saved = errno;

	if (how == 2) {
		coll_drain_resume();
	}
	if (how) {
		pthread_mutex_unlock(&changing);
	}
	errno = saved;
}

/* Calls real.fn with the drain thread stopped; ENOSYS where the C
 * library has none. */
#define AROUND(fn, ...)                                                        \
	do {                                                                   \
		if (!real.fn) {                                                \
			errno = ENOSYS;                                        \
			return -1;                                             \
		}                                                              \
		int how_ = before();                                           \
		int rc_ = real.fn(__VA_ARGS__);                                \
		after(how_);                                                   \
		return rc_;                                                    \
	} while (0)

EXPORT int setuid(uid_t uid)
{
	AROUND(setuid, uid);
}

EXPORT int setgid(gid_t gid)
{
	AROUND(setgid, gid);
}

EXPORT int seteuid(uid_t uid)
{
	AROUND(seteuid, uid);
}

EXPORT int setegid(gid_t gid)
{
	AROUND(setegid, gid);
}

EXPORT int setreuid(uid_t r, uid_t e)
{
	AROUND(setreuid, r, e);
}

EXPORT int setregid(gid_t r, gid_t e)
{
	AROUND(setregid, r, e);
}

EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
	AROUND(setresuid, r, e, s);
}

EXPORT int setresgid(gid_t r, gid_t e, gid_t s)
{
	AROUND(setresgid, r, e, s);
}

EXPORT int setgroups(size_t n, const gid_t *list)
{
	AROUND(setgroups, n, list);
}
