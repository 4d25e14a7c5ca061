/*
 * cli_tasks.c - a program with known profiler activity, for the tests of
 * the mxprof command. It finds the public API with dlsym, so it runs with
 * libmxprof.so injected (LD_PRELOAD or mxprof run) and without it.
 *
 * usage: cli_tasks [-s STEPS] [-l LOADS] [-u STEP_US] [-w FILE] [-x STATUS]
 *
 * In the domain "cli": the task "step" runs STEPS times (default 10) and
 * sleeps STEP_US microseconds each time (default 1000); the task "load" runs
 * LOADS times (default 5) inside each of the first LOADS steps' neighbours;
 * the frame "epoch" runs 2 times; the counter "queue" is set 3 times;
 * the marker "mark" fires 4 times. The event "evt" runs 3 times.
 * With -w, after the work it creates FILE.ready and waits (up to 60 s) for
 * FILE to appear, then does the work once more. It exits with STATUS.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mxprof.h"

static struct {
	mxprof_domain *(*domain_create)(const char *);
	mxprof_task *(*task_create)(mxprof_domain *, const char *);
	void (*task_start)(mxprof_task *);
	void (*task_stop)(mxprof_task *);
	mxprof_frame *(*frame_create)(mxprof_domain *, const char *);
	void (*frame_start)(mxprof_frame *);
	void (*frame_stop)(mxprof_frame *);
	mxprof_event *(*event_create)(const char *);
	void (*event_start)(mxprof_event *);
	void (*event_stop)(mxprof_event *);
	mxprof_counter *(*counter_create)(mxprof_domain *, const char *,
					  int64_t);
	void (*counter_set)(mxprof_counter *, int64_t);
	mxprof_marker *(*marker_create)(mxprof_domain *, const char *);
	int (*marker_mark)(mxprof_marker *, const char *);
} api;

static int load_api(void)
{
#define LOAD(field, sym)                                                       \
	do {                                                                   \
		*(void **)&api.field = dlsym(RTLD_DEFAULT, sym);               \
		if (!api.field) {                                              \
			return -1;                                             \
		}                                                              \
	} while (0)
	LOAD(domain_create, "mxprof_domain_create");
	LOAD(task_create, "mxprof_task_create");
	LOAD(task_start, "mxprof_task_start");
	LOAD(task_stop, "mxprof_task_stop");
	LOAD(frame_create, "mxprof_frame_create");
	LOAD(frame_start, "mxprof_frame_start");
	LOAD(frame_stop, "mxprof_frame_stop");
	LOAD(event_create, "mxprof_event_create");
	LOAD(event_start, "mxprof_event_start");
	LOAD(event_stop, "mxprof_event_stop");
	LOAD(counter_create, "mxprof_counter_create");
	LOAD(counter_set, "mxprof_counter_set");
	LOAD(marker_create, "mxprof_marker_create");
	LOAD(marker_mark, "mxprof_marker_mark");
#undef LOAD
	return 0;
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) != 0) {
	}
}

static void work(int steps, int loads, long step_us)
{
	mxprof_domain *d = api.domain_create("cli");
	mxprof_task *step = api.task_create(d, "step");
	mxprof_task *load = api.task_create(d, "load");
	mxprof_frame *epoch = api.frame_create(d, "epoch");
	mxprof_event *evt = api.event_create("evt");
	mxprof_counter *queue = api.counter_create(d, "queue", 0);
	mxprof_marker *mark = api.marker_create(d, "mark");
	int i;

	for (i = 0; i < 2; i++) {
		api.frame_start(epoch);
		sleep_us(100);
		api.frame_stop(epoch);
	}
	for (i = 0; i < steps; i++) {
		api.task_start(step);
		sleep_us(step_us);
		api.task_stop(step);
		if (i < loads) {
			api.task_start(load);
			sleep_us(50);
			api.task_stop(load);
		}
	}
	for (i = 1; i <= 3; i++) {
		api.counter_set(queue, i * 10);
		api.event_start(evt);
		api.event_stop(evt);
	}
	for (i = 0; i < 4; i++) {
		api.marker_mark(mark, "process");
	}
}

int main(int argc, char **argv)
{
	int steps = 10, loads = 5, status = 0, c;
	long step_us = 1000;
	const char *wait = NULL;

	while ((c = getopt(argc, argv, "s:l:u:w:x:")) != -1) {
		switch (c) {
		case 's':
			steps = atoi(optarg);
			break;
		case 'l':
			loads = atoi(optarg);
			break;
		case 'u':
			step_us = atol(optarg);
			break;
		case 'w':
			wait = optarg;
			break;
		case 'x':
			status = atoi(optarg);
			break;
		default:
			return 64;
		}
	}
	if (load_api() < 0) {
		fprintf(stderr, "cli_tasks: libmxprof.so is not loaded\n");
		return 65;
	}
	work(steps, loads, step_us);
	if (wait) {
		char ready[4096];
		FILE *f;
		int i;

		snprintf(ready, sizeof(ready), "%s.ready", wait);
		f = fopen(ready, "w");
		if (f) {
			fclose(f);
		}
		for (i = 0; i < 6000 && access(wait, F_OK) != 0; i++) {
			sleep_us(10000);
		}
		work(steps, loads, step_us);
	}
	return status;
}
