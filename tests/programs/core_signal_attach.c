/*
 * core_signal_attach - many short threads, each making its first few
 * hooked calls (zlib's crc32()) while a SIGPROF handler that calls
 * crc32() too interrupts the process every 50 us of its CPU time. A
 * thread's first hooked call maps its shadow stack, and its exit unmaps
 * it: a handler's call that comes in the middle of either must find the
 * stack whole or not at all.
 *
 * Usage: core_signal_attach THREADS
 * Threads run 16 at a time, 4 calls each. Prints "calls N": every
 * crc32() call made, the handler's included.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <zlib.h>

#define AT_ONCE 16
#define CALLS	4

static unsigned long handler_calls;

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
	for (int i = 0; i < CALLS; i++) {
		sum += crc32(0, b, sizeof(b));
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	int n = argc == 2 ? atoi(argv[1]) : 0;

	if (n < 1) {
		fprintf(stderr, "usage: core_signal_attach THREADS\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_prof, .sa_flags = SA_RESTART};
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval on = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &on, NULL);
	int made = 0;
	while (made < n) {
		pthread_t t[AT_ONCE];
		int k = 0;
		for (; k < AT_ONCE && made < n; k++, made++) {
			if (pthread_create(&t[k], NULL, work, NULL) != 0) {
				fprintf(stderr, "core_signal_attach: "
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
	       (unsigned long)n * CALLS +
		       __atomic_load_n(&handler_calls, __ATOMIC_RELAXED));
	return 0;
}
