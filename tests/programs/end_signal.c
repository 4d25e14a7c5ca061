/*
 * end_signal.c - a program that records a known number of tasks and then
 * ends by a signal, for the tests of the final dump on such signals.
 *
 * usage: end_signal [-n STEPS] HOW
 *
 * With mxprof loaded, the main thread runs STEPS (default 100) tasks
 * "step" in the domain "end", and a second thread STEPS / 2 tasks "work";
 * without it, nothing is recorded and the rest is the same. It prints
 * "steps N" and ends as HOW says:
 *   segv, bus, fpe, ill  a real fault (a write to a page with no access, a
 *                        read past the end of a mapped empty file, an
 *                        integer division by zero, an undefined
 *                        instruction);
 *   abort                abort();
 *   int, term, hup, quit kill() of itself with that signal;
 *   handlers             installs its own SIGINT and SIGSEGV handlers (each
 *                        prints a line; the SIGSEGV one sets the default
 *                        back and returns), raises SIGINT, then faults.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mxprof_dl.h"

static int loaded;
static int steps = 100;

static void *worker(void *arg)
{
	mxprof_task *work = MXPROF(task_create)(arg, "work");

	for (int i = 0; i < steps / 2; i++) {
		MXPROF(task_start)(work);
		MXPROF(task_stop)(work);
	}
	return NULL;
}

static void record(void)
{
	mxprof_domain *dom = MXPROF(domain_create)("end");
	mxprof_task *step = MXPROF(task_create)(dom, "step");
	pthread_t t;

	if (pthread_create(&t, NULL, worker, dom) != 0) {
		exit(66);
	}
	for (int i = 0; i < steps; i++) {
		MXPROF(task_start)(step);
		MXPROF(task_stop)(step);
	}
	pthread_join(t, NULL);
}

static void on_int(int sig)
{
	static const char line[] = "own SIGINT handler\n";

	(void)sig;
	if (write(1, line, sizeof(line) - 1) < 0) {
		_exit(71);
	}
}

static void on_segv(int sig)
{
	static const char line[] = "own SIGSEGV handler\n";

	if (write(1, line, sizeof(line) - 1) < 0) {
		_exit(71);
	}
	signal(sig, SIG_DFL);
}

/* A write to a page with no access (a null pointer's write may be left
 * out by the compiler, being undefined). */
static void fault_segv(void)
{
	volatile char *p =
		mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		exit(69);
	}
	p[0] = 1;
}

static void fault_bus(void)
{
	char name[] = "/tmp/end_signal.XXXXXX";
	int fd = mkstemp(name);

	if (fd < 0) {
		exit(67);
	}
	unlink(name);
	volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		exit(68);
	}
	(void)p[0];
}

/* The division itself, in assembly: in C it is undefined, and the compiler
 * may leave it out. */
static void fault_fpe(void)
{
	int a = 1, d = 0, zero = 0;

	__asm__ volatile("idivl %2" : "+a"(a), "+d"(d) : "r"(zero));
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int sig;
	} sent[] = {{"int", SIGINT},
		    {"term", SIGTERM},
		    {"hup", SIGHUP},
		    {"quit", SIGQUIT}};
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n') {
			return 64;
		}
		steps = atoi(optarg);
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: end_signal [-n STEPS] HOW\n");
		return 64;
	}
	const char *how = argv[optind];
	loaded = mxprof_dl_load();
	if (loaded) {
		record();
	}
	printf("steps %d\n", steps);
	fflush(stdout);
	if (strcmp(how, "handlers") == 0) {
		signal(SIGINT, on_int);
		signal(SIGSEGV, on_segv);
		raise(SIGINT);
		fault_segv();
	} else if (strcmp(how, "segv") == 0) {
		fault_segv();
	} else if (strcmp(how, "bus") == 0) {
		fault_bus();
	} else if (strcmp(how, "fpe") == 0) {
		fault_fpe();
	} else if (strcmp(how, "ill") == 0) {
		__builtin_trap();
	} else if (strcmp(how, "abort") == 0) {
		abort();
	}
	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++) {
		if (strcmp(how, sent[i].name) == 0) {
			kill(getpid(), sent[i].sig);
		}
	}
	fprintf(stderr, "end_signal: still alive after '%s'\n", how);
	return 70;
}
