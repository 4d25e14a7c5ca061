/*
 * crash_tasks.c - a program that records a known number of events and then
 * dies without the profiler's final dump, for the test of mxprof recover.
 *
 * usage: crash_tasks [-n STEPS] [-d | -w FILE] HOW
 *
 * In the domain "crash", the main thread runs STEPS (default 200) tasks
 * "step", each around one task "inner", sets the counter "done" to the
 * number of steps finished after each, fires the marker "tick" after every
 * 10th step, and runs the frame "epoch" twice, around each half of the
 * steps. A second thread, named "crash-worker", runs STEPS / 2 tasks "work"
 * first and then waits, alive, until the process dies.
 *
 * Then the records reach the journal: through mxprof_dumps(), which drains
 * every buffer on the calling thread (the default); through mxprof_dump(),
 * which also writes the trace and the tables (-d); or through the drain
 * thread alone (-w: the program creates FILE and waits to be killed). It
 * prints "pid N" and dies as HOW says: abort (SIGABRT), segv (SIGSEGV),
 * kill (SIGKILL), exit (_exit(3)), or wait (until a signal ends it).
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxprof_dl.h"

static mxprof_domain *dom;
static int steps = 200;
static sem_t worked;

static void *worker(void *arg)
{
	mxprof_task *work = MXPROF(task_create)(dom, "work");

	(void)arg;
	/* Named before its first record: the drain reads the name then. */
	pthread_setname_np(pthread_self(), "crash-worker");
	for (int i = 0; i < steps / 2; i++) {
		MXPROF(task_start)(work);
		MXPROF(task_stop)(work);
	}
	sem_post(&worked);
	for (;;) {
		pause();
	}
	return NULL;
}

static void record(void)
{
	mxprof_task *step = MXPROF(task_create)(dom, "step");
	mxprof_task *inner = MXPROF(task_create)(dom, "inner");
	mxprof_frame *epoch = MXPROF(frame_create)(dom, "epoch");
	mxprof_counter *done = MXPROF(counter_create)(dom, "done", 0);
	mxprof_marker *tick = MXPROF(marker_create)(dom, "tick");

	for (int i = 0; i < steps; i++) {
		if (i == 0 || i == steps / 2) {
			MXPROF(frame_start)(epoch);
		}
		MXPROF(task_start)(step);
		MXPROF(task_start)(inner);
		MXPROF(task_stop)(inner);
		MXPROF(task_stop)(step);
		MXPROF(counter_set)(done, i + 1);
		if ((i + 1) % 10 == 0) {
			MXPROF(marker_mark)(tick, "process");
		}
		if (i == steps / 2 - 1 || i == steps - 1) {
			MXPROF(frame_stop)(epoch);
		}
	}
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	int dump = 0, c;
	pthread_t t;

	while ((c = getopt(argc, argv, "n:dw:")) != -1) {
		switch (c) {
		case 'n':
			steps = atoi(optarg);
			break;
		case 'd':
			dump = 1;
			break;
		case 'w':
			ready = optarg;
			break;
		default:
			return 64;
		}
	}
	if (optind != argc - 1 || steps < 2) {
		fprintf(stderr, "usage: crash_tasks [-n STEPS] [-d | -w FILE] "
				"abort|segv|kill|exit|wait\n");
		return 64;
	}
	if (!mxprof_dl_load()) {
		fprintf(stderr, "crash_tasks: libmxprof.so is not loaded\n");
		return 65;
	}
	dom = MXPROF(domain_create)("crash");
	sem_init(&worked, 0, 0);
	if (pthread_create(&t, NULL, worker, NULL) != 0) {
		return 66;
	}
	while (sem_wait(&worked) != 0) {
	}
	record();
	if (dump) {
		MXPROF(dump)(0);
	} else if (!ready) {
		MXPROF(free)(MXPROF(dumps)(0, "table", "total", 0));
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (f) {
			fclose(f);
		}
	}
	const char *how = argv[optind];
	if (strcmp(how, "abort") == 0) {
		abort();
	} else if (strcmp(how, "segv") == 0) {
		raise(SIGSEGV);
	} else if (strcmp(how, "kill") == 0) {
		raise(SIGKILL);
	} else if (strcmp(how, "exit") == 0) {
		_exit(3);
	} else if (strcmp(how, "wait") == 0) {
		for (;;) {
			pause();
		}
	}
	/* Not reached unless HOW is unknown or the signal was ignored. */
	fprintf(stderr, "crash_tasks: still alive after '%s'\n", how);
	_exit(70);
}
