/*
 * core_signal_tally - zlib's crc32() called from many threads and from a
 * SIGPROF handler that interrupts them (and mxprof's own code): for the
 * tables' counts when the timeline drops records, and, with many short
 * threads, for the handler's calls that land in a thread's first hooked
 * call (which maps its shadow stack) or in its exit (which unmaps it).
 *
 * Usage: core_signal_tally THREADS CALLS [AT_ONCE [US]]
 * THREADS threads make CALLS calls each, at most AT_ONCE (1 to 256;
 * default: THREADS) running at a time; the handler comes every US (default
 * 200) microseconds of the process's CPU time. Prints "calls N": every
 * crc32() call made, the handler's included.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <zlib.h>

#define AT_ONCE_MAX 256

static unsigned long handler_calls;
static int calls;

static void on_prof(int sig)
{
	static const unsigned char b[8];

	(void)sig;
	crc32(0, b, sizeof(b));
	__atomic_fetch_add(&handler_calls, 1, __ATOMIC_RELAXED);
}

static void *work(void *arg)
{
	unsigned char b[64] = {0};
	unsigned long sum = 0;

	(void)arg;
	for (int i = 0; i < calls; i++) {
		sum += crc32(0, b, sizeof(b));
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: core_signal_tally THREADS CALLS "
				"[AT_ONCE [US]]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	calls = atoi(argv[2]);
	int at_once = argc > 3 ? atoi(argv[3]) : n;
	int us = argc > 4 ? atoi(argv[4]) : 200;
	if (n < 1 || calls < 0 || at_once < 1 || at_once > AT_ONCE_MAX ||
	    us < 1) {
		fprintf(stderr, "core_signal_tally: bad arguments\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_prof, .sa_flags = SA_RESTART};
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval on = {{0, us}, {0, us}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &on, NULL);
	for (int made = 0; made < n;) {
		pthread_t t[AT_ONCE_MAX];
		int k = 0;
		for (; k < at_once && made < n; k++, made++) {
			if (pthread_create(&t[k], NULL, work, NULL) != 0) {
				fprintf(stderr, "core_signal_tally: "
						"pthread_create failed\n");
				return 1;
			}
		}
		for (int i = 0; i < k; i++) {
			pthread_join(t[i], NULL);
		}
	}
	setitimer(ITIMER_PROF, &off, NULL);
	printf("calls %lu\n",
	       (unsigned long)n * (unsigned long)calls +
		       __atomic_load_n(&handler_calls, __ATOMIC_RELAXED));
	return 0;
}
