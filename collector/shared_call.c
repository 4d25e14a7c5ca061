/*
 * shared_call.c - the calls the drain thread makes into other libraries
 * run on a thread that has the program's descriptor table.
 *
 * The drain thread works in a descriptor table of its own (out_fd.c), so
 * that none of mxprof's files takes, even for a moment, a number the
 * program uses or is about to reuse (a shell's close(1) then dup2(f, 1)).
 * A source's flush, tick and drain call into the program's libraries
 * (CUPTI and the CUDA driver), which use the program's descriptors (the
 * driver's device files): those calls must see the program's table. The
 * drain thread starts this helper before it takes its own table; the
 * helper keeps the program's, blocks every signal (it inherits the drain
 * thread's mask), records nothing, and runs each call while the drain
 * thread waits for it. Without the helper, calls run inline.
 *
 * Called by queue.c (start, stop) and drain.c (shared_call); a source
 * asks coll_foreign_ok().
 */
#include <errno.h>
#include <pthread.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "source.h"

static struct {
	pthread_t thread;
	int running;
	int req; /* atomic: 1 a call is posted, 2 stop */
	int done;
	void (*fn)(void *);
	void *arg;
} h;

static void fwait(int *addr, int val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void fwake(int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *helper_main(void *unused)
{
	(void)unused;
	ring_set_quiet(1);
	prctl(PR_SET_NAME, "mxprof-calls", 0, 0, 0);
	for (;;) {
		int r;
		while ((r = __atomic_load_n(&h.req, __ATOMIC_ACQUIRE)) == 0) {
			fwait(&h.req, 0);
		}
		if (r == 2) {
			return NULL;
		}
		h.fn(h.arg);
		__atomic_store_n(&h.req, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h.done, 1, __ATOMIC_RELEASE);
		fwake(&h.done);
	}
}

/* See internal.h. */
int shared_call_start(void)
{
	h.running = 0; /* a forked child's copy names its parent's thread */
	h.req = 0;
	int rc = pthread_create(&h.thread, NULL, helper_main, NULL);

	if (rc != 0) {
		return -rc;
	}
	h.running = 1;
	return 0;
}

/* See internal.h. */
void shared_call_stop(void)
{
	if (!h.running) {
		return;
	}
	__atomic_store_n(&h.req, 2, __ATOMIC_RELEASE);
	fwake(&h.req);
	pthread_join(h.thread, NULL);
	h.running = 0;
}

/* See internal.h. */
void shared_call(void (*fn)(void *), void *arg)
{
	if (!h.running || !out_fd_own_table()) {
		fn(arg);
		return;
	}
	h.fn = fn;
	h.arg = arg;
	__atomic_store_n(&h.done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h.req, 1, __ATOMIC_RELEASE);
	fwake(&h.req);
	while (!__atomic_load_n(&h.done, __ATOMIC_ACQUIRE)) {
		fwait(&h.done, 0);
	}
}

/* See source.h. */
int coll_foreign_ok(void)
{
	return !out_fd_own_table();
}
