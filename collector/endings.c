/*
 * endings.c - the endings that cannot wait in the request queue: _exit
 * (exits.c) and a fatal signal (signals.c) raise a flag the drain thread
 * looks at first and wait, bounded, on a futex; exec asks for everything
 * to be written into the journal, which the next image continues. An
 * ending that stops waiting removes the files the dump had begun.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"

#define S coll_state

int coll_finish_quick(int dump, unsigned wait_ms)
{
	static const char gave_up[] =
		"mxprof: the final dump did not finish in time at _exit; the "
		"journal keeps what was drained\n";
	int saved = errno;

	if (__atomic_load_n(&S.pid, __ATOMIC_RELAXED) != (int)getpid() ||
	    !__atomic_load_n(&drain_t.started, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&drain_t.finished, __ATOMIC_ACQUIRE)) {
		return -ESRCH;
	}
	if (!__atomic_load_n(&drain_t.running, __ATOMIC_ACQUIRE)) {
		/* No drain thread (yet): the caller does it, with locks. */
		coll_finish(dump);
		return 0;
	}
	ring_set_quiet(1);
	__atomic_store_n(&drain_t.exit_req, dump + 1, __ATOMIC_RELEASE);
	queue_wake();
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!__atomic_load_n(&drain_t.exit_done, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t left =
			(int64_t)wait_ms * 1000000 -
			((int64_t)(now.tv_sec - start.tv_sec) * 1000000000 +
			 (now.tv_nsec - start.tv_nsec));
		if (left <= 0) {
			out_forget_temps();
			ssize_t w = write(2, gave_up, sizeof(gave_up) - 1);
			(void)w;
			errno = saved;
			return -ETIMEDOUT;
		}
		struct timespec ts = {left / 1000000000, left % 1000000000};
		syscall(SYS_futex, &drain_t.exit_done, FUTEX_WAIT_PRIVATE, 0,
			&ts, NULL, 0);
	}
	errno = saved;
	return 0;
}

int coll_exec_prepare(char *trace, size_t len)
{
	struct request r = {.type = REQ_EXEC, .trace = trace, .trace_len = len};

	if (!coll_live_here()) {
		return -ESRCH;
	}
	return queue_request(&r);
}

int coll_continue_origin(const char *trace)
{
	char journal[4200];
	uint64_t mono;
	int64_t utc;
	int rc = paths_journal(trace, journal, sizeof(journal));

	if (rc == 0) {
		rc = journal_origin(journal, (int)getpid(), &mono, &utc);
	}
	if (rc == 0) {
		clock_set_origin(mono, utc);
	}
	return rc;
}

int coll_finish_signal(int ms)
{
	struct timespec now, end;

	if (!__atomic_load_n(&drain_t.running, __ATOMIC_ACQUIRE)) {
		return -ESRCH;
	}
	if (pthread_equal(pthread_self(), drain_t.thread)) {
		return -EDEADLK;
	}
	__atomic_store_n(&drain_t.final_req, 1, __ATOMIC_RELEASE);
	queue_wake();
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	while (!__atomic_load_n(&drain_t.final_done, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		struct timespec left = {end.tv_sec - now.tv_sec,
					end.tv_nsec - now.tv_nsec};
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000;
		}
		if (left.tv_sec < 0) {
			out_forget_temps();
			return -ETIMEDOUT;
		}
		syscall(SYS_futex, &drain_t.final_done, FUTEX_WAIT_PRIVATE, 0,
			&left, NULL, 0);
	}
	return 0;
}
