/*
 * queue.c - the drain thread and the requests queued to it.
 *
 * Other threads ask the drain thread (drain.c does the work): a request
 * (flush, dump, dumps(), the final dump, exec) is queued under a small
 * lock, the thread is woken, serves it in order and wakes the requester,
 * who waits on a futex without holding any lock. The dump signal's
 * handler and the continuous-dump timer only raise a flag the thread
 * looks at. When there is no drain thread, a requester serves its own
 * request (drain_serve()).
 *
 * The drain thread blocks every signal (the program's handlers never run on
 * it) and marks itself quiet (nothing it does is recorded).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drain.h"
#include "files.h"

struct queue queue_q = {.lock = COLL_LOCK_INIT(LOCK_REQUESTS)};

#define S coll_state

int coll_dump_signal;

/*
 * In a forked child the drain thread is started again from the fork
 * handler, except under AddressSanitizer: its allocator (GCC 12's) is not
 * made safe across fork, and a thread created inside the child's fork
 * handler sometimes waits forever on it. There the child's drain starts
 * at the next safe point instead (a new thread's first record, or a
 * request), and requests are served by their callers until then.
 */
int queue_defer_child;

static void futex_wake(int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * Waking the drain thread. A futex, not a file descriptor: programs close
 * every descriptor they did not open (daemons, closefrom) and reuse the
 * numbers, and a descriptor of ours would then be the program's file or
 * pipe. futex(2) is async-signal-safe, so the dump signal's handler wakes
 * the thread with it.
 */
void queue_wake(void)
{
	/* Already 1: the thread has not taken the last wake yet, and does
	 * not sleep before it does. */
	if (!__atomic_exchange_n(&drain_t.wake, 1, __ATOMIC_ACQ_REL)) {
		futex_wake(&drain_t.wake);
	}
}

/* Waits up to ms milliseconds, or not at all when woken since the last
 * wait. */
static void queue_wait(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	if (__atomic_exchange_n(&drain_t.wake, 0, __ATOMIC_ACQ_REL) ||
	    ms <= 0) {
		return;
	}
	syscall(SYS_futex, &drain_t.wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* Takes the queued requests, oldest first. */
static struct request *take_requests(void)
{
	coll_lock(&queue_q.lock);
	struct request *r = queue_q.head;
	queue_q.head = queue_q.tail = NULL;
	coll_unlock(&queue_q.lock);
	return r;
}

/* Serves the requests in list and wakes their requesters. Returns
 * non-zero when one of them was the final one. */
static int serve_all(struct request *list)
{
	int finished = 0;

	while (list) {
		struct request *next = list->next;
		drain_serve(list);
		finished |= list->type == REQ_FINISH;
		/* The requester may return, and its stack frame go, as soon
		 * as done is set: nothing of it is touched after this. */
		__atomic_store_n(&list->done, 1, __ATOMIC_RELEASE);
		futex_wake(&list->done);
		list = next;
	}
	return finished;
}

/*
 * Keeps the dump signal unblocked on this thread while it is the dump
 * signal (the program's threads block it), blocked once the program took
 * it over. The raw system call: the library's own pthread_sigmask and
 * sigaction are the program's view (signals.c).
 */
static void dump_signal_mask(int *unblocked)
{
	int sig = __atomic_load_n(&coll_dump_signal, __ATOMIC_ACQUIRE);
	uint64_t bit;

	if (sig == *unblocked) {
		return;
	}
	if (*unblocked) {
		bit = 1ull << (*unblocked - 1);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &bit, NULL, sizeof(bit));
	}
	if (sig > 0 && sig <= 64) {
		bit = 1ull << (sig - 1);
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit, NULL,
			sizeof(bit));
	}
	if (sig == 0) {
		/* The status file no longer names it: mxprof dump must not
		 * send the program a signal it handles itself. */
		coll_lock(&drain_owner);
		S.cfg.dump_signal = 0;
		S.cfg.dump_signal_taken = *unblocked;
		dump_write_status(&S);
		coll_unlock(&drain_owner);
	}
	*unblocked = sig;
}

/* The end a fatal signal asked for: the final dump, then the waiters. */
static int serve_final(void)
{
	if (!__atomic_load_n(&drain_t.final_req, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	drain_finish(1);
	__atomic_store_n(&drain_t.final_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &drain_t.final_done, FUTEX_WAKE_PRIVATE, INT32_MAX,
		NULL, NULL, 0);
	return 1;
}

static void *drain_main(void *arg)
{
	int unblocked = 0;

	(void)arg;
	ring_set_quiet(1);
	prctl(PR_SET_NAME, "mxprof-drain", 0, 0, 0);
	out_pipe_allow(1); /* big dumps are written by other threads */
	/* mxprof's files live in a descriptor table of this thread's own
	 * (out_fd.c), its calls into the program's libraries run on a
	 * helper that keeps the program's (shared_call.c). */
	if (shared_call_start() == 0) {
		out_fd_may_own();
		coll_lock(&drain_owner);
		if (S.journal_open > 0) {
			journal_rehome(S.j);
		}
		coll_unlock(&drain_owner);
		if (out_fd_take_table() != 0) {
			shared_call_stop(); /* refused: one table, inline */
		}
	}
	coll_lock(&drain_owner);
	dump_write_status(&S);
	coll_unlock(&drain_owner);
	/*
	 * The wait adapts to the load: a pass that found an eighth of a ring
	 * or more starts the next at once; one whose records, at the rate
	 * they came since the pass before, would make an eighth in a period
	 * waits 1 ms; a lighter pass waits the full period (a program that
	 * records little is woken no more often than that, and one that
	 * records steadily, a training loop's hundred thousand operators a
	 * second, once a period too, not twice). A flooding thread fills its
	 * ring in a few milliseconds, and a fixed period would turn that into
	 * drops. The ticks still come once per period.
	 */
	int wait_ms = (int)S.cfg.drain_period_ms;
	uint64_t last_tick = 0, last_pass = ticks_mono_ns();
	uint64_t period_ns = (uint64_t)S.cfg.drain_period_ms * 1000000u;
	for (;;) {
		dump_signal_mask(&unblocked);
		queue_wait(wait_ms);
		out_fd_follow_stderr();
		int ex = __atomic_exchange_n(&drain_t.exit_req, 0,
					     __ATOMIC_ACQ_REL);
		if (ex) {
			/* _exit: the caller waits on exit_done, not on a
			 * request (coll_finish_quick). */
			drain_finish(ex - 1);
			__atomic_store_n(&drain_t.exit_done, 1,
					 __ATOMIC_RELEASE);
			syscall(SYS_futex, &drain_t.exit_done,
				FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
			break;
		}
		if (serve_final() || serve_all(take_requests()) ||
		    __atomic_load_n(&drain_t.pause_req, __ATOMIC_ACQUIRE)) {
			break;
		}
		coll_lock(&drain_owner);
		uint64_t got = drain_pass();
		uint64_t now = ticks_mono_ns();
		int periodic = S.cfg.dump_period_s > 0 &&
			       now - S.last_dump_ns >=
				       (uint64_t)(S.cfg.dump_period_s * 1e9);
		int owed = drain_owed();
		coll_unlock(&drain_owner);
		uint64_t since = now - last_pass;
		last_pass = now;
		if (got >= ring_capacity / 8) {
			wait_ms = 0;
		} else if ((double)got * (double)period_ns >=
			   (double)(ring_capacity / 8) * (double)(since + 1)) {
			wait_ms = 1;
		} else {
			wait_ms = (int)S.cfg.drain_period_ms;
		}
		int asked = __atomic_exchange_n(&drain_t.dump_req, 0,
						__ATOMIC_ACQ_REL);
		if (asked || periodic || owed) {
			/* The program may have changed its stderr since the
			 * wakeup (before it sent the dump signal). */
			out_fd_follow_stderr();
			drain_dump(asked, "the dump signal (mxprof dump)",
				   NULL);
		}
		drain_triggers();
		if (now - last_tick < period_ns) {
			continue;
		}
		last_tick = now;
		/* No collector lock held: the state machine's tick takes
		 * LOCK_STATE, which comes before the owner lock. */
		drain_tick_sources(now);
	}
	/* Requests that came while the last one was served: their callers
	 * find the collector finished. */
	coll_lock(&queue_q.lock);
	queue_q.accepting = 0;
	coll_unlock(&queue_q.lock);
	serve_all(take_requests());
	coll_lock(&drain_owner);
	if (S.j) {
		journal_thread_ends(S.j);
	}
	coll_unlock(&drain_owner);
	shared_call_stop();
	return NULL;
}

int queue_start_thread(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	coll_lock(&queue_q.lock);
	int rc = pthread_create(&drain_t.thread, NULL, drain_main, NULL);
	if (rc == 0) {
		queue_q.accepting = 1;
		__atomic_store_n(&drain_t.running, 1, __ATOMIC_RELEASE);
		ring_drain_alive = 1;
	}
	coll_unlock(&queue_q.lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

/* Starts a forked child's drain thread if it was left for later. Only
 * where threads may start (not in a signal handler). */
void queue_start_pending(void)
{
	if (!__atomic_exchange_n(&drain_t.pending, 0, __ATOMIC_ACQ_REL)) {
		return;
	}
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished && !drain_t.running &&
	    queue_start_thread() < 0) {
		fprintf(stderr, "mxprof: cannot start the drain thread in "
				"child; records are drained at exit only\n");
	}
	coll_unlock(&drain_owner);
}

/*
 * Serves r on the drain thread and waits for it, or, when there is no
 * drain thread, on this thread. Returns r->rc.
 */
int queue_request(struct request *r)
{
	int quiet = ring_set_quiet(1);

	/* Neither the end nor an exec needs a thread: never start the one
	 * a forked child deferred for them (under AddressSanitizer a thread
	 * started in such a child can wait forever on the allocator's lock,
	 * which the fork left taken). An exec that fails leaves it for the
	 * next request. */
	if (r->type == REQ_FINISH) {
		__atomic_store_n(&drain_t.pending, 0, __ATOMIC_RELEASE);
	} else if (r->type != REQ_EXEC) {
		queue_start_pending();
	}
	r->done = 0;
	r->next = NULL;
	coll_lock(&queue_q.lock);
	int queued = queue_q.accepting;
	if (queued) {
		if (queue_q.tail) {
			queue_q.tail->next = r;
		} else {
			queue_q.head = r;
		}
		queue_q.tail = r;
	}
	coll_unlock(&queue_q.lock);
	if (queued) {
		queue_wake();
		while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
			syscall(SYS_futex, &r->done, FUTEX_WAIT_PRIVATE, 0,
				NULL, NULL, 0);
		}
	} else {
		drain_serve(r);
	}
	ring_set_quiet(quiet);
	return r->rc;
}
