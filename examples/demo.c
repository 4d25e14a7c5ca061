/*
 * demo - a small "training loop" profiled through mxprof's MXNet-style API.
 *
 * A loader thread fills a queue of batches; two worker threads take them
 * and run forward, backward and optimizer tasks. The main thread opens an
 * "epoch" frame and closes it once the workers have trained that epoch's
 * batches. Counters track the queue depth and the samples seen; markers
 * note each checkpoint. At the end the program prints mxprof_dumps(), the
 * tables in the layout of MXNet's profiler.dumps().
 *
 * It calls the API through dlsym (include/mxprof_dl.h), so it also runs
 * without the profiler, doing the same work and printing no tables.
 *
 *   MXPROF_AUTOSTART=1 LD_PRELOAD=$PWD/libmxprof.so build/examples/demo
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mxprof_dl.h"

#define EPOCHS	3
#define BATCHES 40
#define WORKERS 2

static mxprof_domain *train, *data;
static mxprof_counter *queue_depth, *samples;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER; /* a batch queued */
static pthread_cond_t trained_cond = PTHREAD_COND_INITIALIZER; /* one trained */
static int queued, produced, trained;

static void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000L +
			 (t.tv_nsec - t0.tv_nsec) / 1000 <
		 us);
}

static void *loader(void *arg)
{
	mxprof_task *load = MXPROF(task_create)(data, "load_batch");

	(void)arg;
	for (int i = 0; i < EPOCHS * BATCHES; i++) {
		MXPROF(task_start)(load);
		spin_us(150);
		MXPROF(task_stop)(load);
		pthread_mutex_lock(&lock);
		queued++;
		produced++;
		MXPROF(counter_increment)(queue_depth, 1);
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
	MXPROF(task_destroy)(load);
	return NULL;
}

static int take_batch(void)
{
	pthread_mutex_lock(&lock);
	while (queued == 0 && produced < EPOCHS * BATCHES) {
		pthread_cond_wait(&cond, &lock);
	}
	int got = queued > 0;
	if (got) {
		queued--;
		MXPROF(counter_decrement)(queue_depth, 1);
	}
	pthread_mutex_unlock(&lock);
	return got;
}

static void *worker(void *arg)
{
	mxprof_task *fwd = MXPROF(task_create)(train, "forward");
	mxprof_task *bwd = MXPROF(task_create)(train, "backward");
	mxprof_task *opt = MXPROF(task_create)(train, "optimizer");
	mxprof_event *wait = MXPROF(event_create)("wait_for_batch");
	long id = (long)arg;

	for (;;) {
		MXPROF(event_start)(wait);
		int got = take_batch();
		MXPROF(event_stop)(wait);
		if (!got) {
			break;
		}
		MXPROF(task_start)(fwd);
		spin_us(120 + 20 * id);
		MXPROF(task_stop)(fwd);
		MXPROF(task_start)(bwd);
		spin_us(240);
		MXPROF(task_stop)(bwd);
		MXPROF(task_start)(opt);
		spin_us(40);
		MXPROF(task_stop)(opt);
		MXPROF(counter_increment)(samples, 32);
		pthread_mutex_lock(&lock);
		trained++;
		pthread_cond_signal(&trained_cond);
		pthread_mutex_unlock(&lock);
	}
	MXPROF(task_destroy)(fwd);
	MXPROF(task_destroy)(bwd);
	MXPROF(task_destroy)(opt);
	MXPROF(event_destroy)(wait);
	return NULL;
}

int main(void)
{
	pthread_t load, work[WORKERS];
	int present = mxprof_dl_load();

	train = MXPROF(domain_create)("train");
	data = MXPROF(domain_create)("data");
	queue_depth = MXPROF(counter_create)(data, "queue_depth", 0);
	samples = MXPROF(counter_create)(train, "samples", 0);
	mxprof_frame *epoch = MXPROF(frame_create)(train, "epoch");
	mxprof_marker *ckpt = MXPROF(marker_create)(train, "checkpoint");

	pthread_create(&load, NULL, loader, NULL);
	for (long i = 0; i < WORKERS; i++) {
		pthread_create(&work[i], NULL, worker, (void *)i);
	}
	for (int e = 0; e < EPOCHS; e++) {
		MXPROF(frame_start)(epoch);
		pthread_mutex_lock(&lock);
		while (trained < (e + 1) * BATCHES) {
			pthread_cond_wait(&trained_cond, &lock);
		}
		pthread_mutex_unlock(&lock);
		MXPROF(frame_stop)(epoch);
		MXPROF(marker_mark)(ckpt, "process");
	}
	pthread_join(load, NULL);
	pthread_cond_broadcast(&cond);
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(work[i], NULL);
	}
	printf("demo: %d epochs of %d batches on %d workers\n", EPOCHS, BATCHES,
	       WORKERS);
	if (present) {
		char *tables = MXPROF(dumps)(0, "table", "total", 0);
		if (tables) {
			fputs(tables, stdout);
			MXPROF(free)(tables);
		}
	} else {
		printf("demo: run it with LD_PRELOAD=libmxprof.so and "
		       "MXPROF_AUTOSTART=1 to see the tables\n");
	}
	return 0;
}
