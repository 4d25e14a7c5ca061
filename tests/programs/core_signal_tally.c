/*
 * core_signal_tally - zlib's crc32() called from many threads and from a
 * SIGPROF handler that interrupts them (and mxprof's own code), for the
 * tables' counts when the timeline drops records.
 *
 * Usage: core_signal_tally THREADS CALLS
 * Prints "calls N": every crc32() call made, the handler's included.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <zlib.h>

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
	if (argc != 3) {
		fprintf(stderr, "usage: core_signal_tally THREADS CALLS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	calls = atoi(argv[2]);
	if (n < 1 || n > 256 || calls < 0) {
		fprintf(stderr, "core_signal_tally: bad arguments\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_prof, .sa_flags = SA_RESTART};
	sigaction(SIGPROF, &sa, NULL);
	/* Every 200 us of the process's CPU time. */
	struct itimerval on = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &on, NULL);
	pthread_t t[256];
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, work, NULL);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
	setitimer(ITIMER_PROF, &off, NULL);
	printf("calls %lu\n",
	       (unsigned long)n * (unsigned long)calls +
		       __atomic_load_n(&handler_calls, __ATOMIC_RELAXED));
	return 0;
}
