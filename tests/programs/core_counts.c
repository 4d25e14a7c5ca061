/*
 * core_counts - a multi-threaded program with known numbers of tasks,
 * events, frames, counter updates and markers, for the integration test.
 *
 * usage: core_counts THREADS ITERS [SYNC_DIR] [FORK_ITERS]
 *
 * Each thread runs ITERS iterations of:
 *   task "step" { task "inner" { event "ev" } }  counter "items" += 1
 *   every 10th: frame "frame"; every 100th: marker "tick" (thread scope)
 * With SYNC_DIR, all threads stop half-way; the main thread creates
 * SYNC_DIR/half and waits for SYNC_DIR/go before they go on.
 * With FORK_ITERS > 0, a forked child then runs FORK_ITERS "step" tasks
 * on one thread and exits normally.
 * It prints a checksum that does not depend on the profiler.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mxprof_dl.h"

static int iters;
static const char *sync_dir;
static pthread_barrier_t half;
static mxprof_domain *dom;
static mxprof_counter *items;
static volatile int go;

static unsigned long work(unsigned long x)
{
	for (int i = 0; i < 50; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	}
	return x;
}

static void *worker(void *arg)
{
	unsigned long sum = (unsigned long)(size_t)arg;
	mxprof_task *step = MXPROF(task_create)(dom, "step");
	mxprof_task *inner = MXPROF(task_create)(dom, "inner");
	mxprof_event *ev = MXPROF(event_create)("ev");
	mxprof_frame *frame = MXPROF(frame_create)(dom, "frame");
	mxprof_marker *tick = MXPROF(marker_create)(dom, "tick");

	for (int i = 0; i < iters; i++) {
		if (sync_dir && i == iters / 2) {
			pthread_barrier_wait(&half);
			while (!go) {
				usleep(1000);
			}
		}
		if (i % 10 == 0) {
			MXPROF(frame_start)(frame);
		}
		MXPROF(task_start)(step);
		MXPROF(task_start)(inner);
		MXPROF(event_start)(ev);
		sum = work(sum);
		MXPROF(event_stop)(ev);
		MXPROF(task_stop)(inner);
		MXPROF(task_stop)(step);
		MXPROF(counter_increment)(items, 1);
		if (i % 10 == 0) {
			MXPROF(frame_stop)(frame);
		}
		if (i % 100 == 0) {
			MXPROF(marker_mark)(tick, "thread");
		}
	}
	MXPROF(task_destroy)(step);
	MXPROF(task_destroy)(inner);
	MXPROF(event_destroy)(ev);
	MXPROF(frame_destroy)(frame);
	MXPROF(marker_destroy)(tick);
	return (void *)(size_t)(sum & 0xffff);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: core_counts THREADS ITERS [SYNC_DIR] "
				"[FORK_ITERS]\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	iters = atoi(argv[2]);
	sync_dir = argc > 3 && argv[3][0] && argv[3][0] != '-' ? argv[3] : NULL;
	int fork_iters = argc > 4 ? atoi(argv[4]) : 0;
	pthread_t th[64];
	unsigned long total = 0;

	mxprof_dl_load();
	dom = MXPROF(domain_create)("core");
	items = MXPROF(counter_create)(dom, "items", 0);
	pthread_barrier_init(&half, NULL, (unsigned)nthreads + 1);
	for (int t = 0; t < nthreads; t++) {
		pthread_create(&th[t], NULL, worker, (void *)(size_t)(t + 1));
	}
	if (sync_dir) {
		char path[4096];
		pthread_barrier_wait(&half);
		snprintf(path, sizeof(path), "%s/half", sync_dir);
		fclose(fopen(path, "w"));
		snprintf(path, sizeof(path), "%s/go", sync_dir);
		struct stat st;
		while (stat(path, &st) != 0) {
			usleep(1000);
		}
		go = 1;
	}
	for (int t = 0; t < nthreads; t++) {
		void *r;
		pthread_join(th[t], &r);
		total += (unsigned long)(size_t)r;
	}
	if (fork_iters > 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			mxprof_task *step = MXPROF(task_create)(dom, "step");
			for (int i = 0; i < fork_iters; i++) {
				MXPROF(task_start)(step);
				MXPROF(task_stop)(step);
			}
			printf("child done\n");
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
	}
	printf("checksum %lu\n", total);
	return 0;
}
