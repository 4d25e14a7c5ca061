/*
 * exit_handler.c - a program that ends through _exit() called from its own
 * signal handler, as daemons do on SIGTERM.
 *
 * usage: exit_handler TASKS
 *
 * Runs TASKS tasks "step" in the domain "handler" on the main thread and
 * TASKS on a second thread, then sends itself SIGTERM; the handler calls
 * _exit(7).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mxprof_dl.h"

static int tasks;
static mxprof_task *step;

static void on_term(int sig)
{
	(void)sig;
	_exit(7);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < tasks; i++) {
		MXPROF(task_start)(step);
		MXPROF(task_stop)(step);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: exit_handler TASKS\n");
		return 2;
	}
	tasks = atoi(argv[1]);
	mxprof_dl_load();
	step = MXPROF(task_create)(MXPROF(domain_create)("handler"), "step");
	signal(SIGTERM, on_term);
	if (pthread_create(&t, NULL, worker, NULL) != 0) {
		return 3;
	}
	worker(NULL);
	pthread_join(t, NULL);
	printf("raising\n");
	fflush(stdout);
	raise(SIGTERM);
	return 1;
}
