/*
 * core_shared_spans - one Task, one Frame and one Event shared by THREADS
 * threads, each used recursively, for the integration test.
 *
 * usage: core_shared_spans THREADS ITERS
 *
 * Every thread runs ITERS iterations of
 *   task "shared" { task "shared" { event "ev" { task "shared" {} } } }
 *   frame "f" { frame "f" {} }
 * on the same three objects, with the threads released together by a
 * barrier at each iteration so that their passes overlap. So the trace
 * holds THREADS * ITERS * 3 "shared" slices, * 1 "ev" and * 2 "f", each
 * thread's nested four deep. It prints a checksum that does not depend on
 * the profiler.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mxprof_dl.h"

static int iters;
static pthread_barrier_t bar;
static mxprof_task *task;
static mxprof_frame *frame;
static mxprof_event *ev;

static unsigned long work(unsigned long x)
{
	for (int i = 0; i < 20; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	}
	return x;
}

static void *worker(void *arg)
{
	unsigned long sum = (unsigned long)(size_t)arg;

	for (int i = 0; i < iters; i++) {
		pthread_barrier_wait(&bar);
		MXPROF(task_start)(task);
		MXPROF(task_start)(task);
		MXPROF(event_start)(ev);
		MXPROF(task_start)(task);
		sum = work(sum);
		MXPROF(task_stop)(task);
		MXPROF(event_stop)(ev);
		MXPROF(task_stop)(task);
		MXPROF(task_stop)(task);
		MXPROF(frame_start)(frame);
		MXPROF(frame_start)(frame);
		sum = work(sum);
		MXPROF(frame_stop)(frame);
		MXPROF(frame_stop)(frame);
	}
	return (void *)(size_t)(sum & 0xffff);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: core_shared_spans THREADS ITERS\n");
		return 2;
	}
	int nt = atoi(argv[1]);
	iters = atoi(argv[2]);
	if (nt < 1 || nt > 64 || iters < 0) {
		return 2;
	}
	mxprof_dl_load();
	mxprof_domain *dom = MXPROF(domain_create)("shared");
	task = MXPROF(task_create)(dom, "shared");
	frame = MXPROF(frame_create)(dom, "f");
	ev = MXPROF(event_create)("ev");
	pthread_barrier_init(&bar, NULL, (unsigned)nt);
	pthread_t th[64];
	unsigned long total = 0;
	for (int t = 0; t < nt; t++) {
		pthread_create(&th[t], NULL, worker, (void *)(size_t)(t + 1));
	}
	for (int t = 0; t < nt; t++) {
		void *r;
		pthread_join(th[t], &r);
		total += (unsigned long)(size_t)r;
	}
	MXPROF(task_destroy)(task);
	MXPROF(frame_destroy)(frame);
	MXPROF(event_destroy)(ev);
	printf("threads %d iters %d checksum %lu\n", nt, iters, total);
	return 0;
}
