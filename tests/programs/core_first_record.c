/*
 * core_first_record - a thread's first record while mxprof's drain thread
 * is in the middle of writing a large journal pass.
 *
 * usage: core_first_record
 * The program defines write(), so that mxprof's calls reach it first (the
 * executable comes first in the symbol search order; it is linked with
 * -rdynamic). Once armed, a write of 64 KiB or more from the thread named
 * "mxprof-drain" waits until the main thread releases it (30 s at most):
 * the drain thread is then held inside a journal write, as on a slow disk.
 * The main thread records 60000 tasks, waits until the drain thread is
 * held, and starts a thread whose first record is one task; that thread
 * times its task_stop(), which maps its ring. The main thread waits up to
 * 10 s for it (the drain thread stays held longer), releases the drain
 * thread and prints:
 *   first record while the drain wrote: yes|no
 *   first record cost: N ns
 * A profiler whose first record waits for the drain's pass prints "no".
 * Run it with a long MXPROF_DRAIN_PERIOD_MS, so that the 60000 tasks are
 * all in the drain's first pass, and its journal writes come in the middle
 * of taking records from the rings.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mxprof_dl.h"

#define TASKS 60000

static int armed, held, released, first_done;
static long first_ns;
static mxprof_domain *dom;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Waits up to ms milliseconds for *flag; returns its value. */
static int wait_for(int *flag, int ms)
{
	struct timespec pause = {0, 1000000};

	for (int i = 0; i < ms && !__atomic_load_n(flag, __ATOMIC_ACQUIRE);
	     i++) {
		nanosleep(&pause, NULL);
	}
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	char name[16] = "";

	if (n >= 65536 && __atomic_load_n(&armed, __ATOMIC_ACQUIRE)) {
		prctl(PR_GET_NAME, name, 0, 0, 0);
		if (strcmp(name, "mxprof-drain") == 0) {
			__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
			wait_for(&released, 30000);
		}
	}
	return syscall(SYS_write, fd, buf, n);
}

static void *newcomer(void *arg)
{
	mxprof_task *t = MXPROF(task_create)(dom, "first");

	(void)arg;
	MXPROF(task_start)(t);
	long t0 = now_ns();
	MXPROF(task_stop)(t);
	first_ns = now_ns() - t0;
	__atomic_store_n(&first_done, 1, __ATOMIC_RELEASE);
	MXPROF(task_destroy)(t);
	return NULL;
}

int main(void)
{
	pthread_t th;

	mxprof_dl_load();
	dom = MXPROF(domain_create)("first_record");
	mxprof_task *t = MXPROF(task_create)(dom, "step");
	__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < TASKS; i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
	if (!wait_for(&held, 30000)) {
		fprintf(stderr, "the drain thread never wrote 64 KiB\n");
		return 1;
	}
	pthread_create(&th, NULL, newcomer, NULL);
	/* The drain thread stays held (30 s) for longer than this wait. */
	int done = wait_for(&first_done, 10000);
	__atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	MXPROF(task_destroy)(t);
	printf("first record while the drain wrote: %s\n", done ? "yes" : "no");
	printf("first record cost: %ld ns\n", first_ns);
	return 0;
}
