/*
 * hook_bench.c - calls libhookb.so's hb_inc N times in a tight loop, R
 * rounds, and prints the best round as "ns/call X". Run as
 * hook_bench N R [PAUSE_MS]: PAUSE_MS of sleep after each round lets a
 * profiler's drain thread empty its buffers, so that rounds measure
 * recording into warm buffers rather than dropping or page faults. The
 * per-call cost a profiler adds is the difference from a run without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int hb_inc(int x);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	int pause_ms = argc > 3 ? atoi(argv[3]) : 0;
	double best = 1e300;
	int x = 0;

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (long i = 0; i < n; i++) {
			x = hb_inc(x);
		}
		double dt = (now_ns() - t0) / (double)n;

		if (dt < best) {
			best = dt;
		}
		if (pause_ms > 0) {
			usleep((useconds_t)pause_ms * 1000);
		}
	}
	printf("ns/call %.2f (x=%d)\n", best, x);
	return 0;
}
