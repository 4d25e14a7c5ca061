/*
 * hook_bench.c - calls libhookb.so's hb_inc N times in a tight loop, R
 * rounds, and prints the best round as "ns/call X". Run as
 * hook_bench N R [PAUSE_MS [floor]]: PAUSE_MS of sleep after each round
 * lets a profiler's drain thread empty its buffers, so that rounds measure
 * recording into warm buffers rather than dropping or page faults. The
 * per-call cost a profiler adds is the difference from a run without it.
 *
 * "floor" times what any tool that records each call's start and end in
 * TSC ticks cannot avoid: two rdtsc around the call and a 32-byte store
 * into a ring, written inline, with no profiler loaded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

int hb_inc(int x);

struct rec {
	uint64_t t0, t1;
	uint32_t name, group, kind, arg;
};

static struct rec ring[1 << 16];

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
	int floor = argc > 4 && strcmp(argv[4], "floor") == 0;
	double best = 1e300;
	uint64_t h = 0;
	int x = 0;

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		if (floor) {
			for (long i = 0; i < n; i++) {
				uint64_t a = __rdtsc();

				x = hb_inc(x);
				struct rec *p = &ring[h++ & 0xffff];

				p->t0 = a;
				p->t1 = __rdtsc();
				p->name = 1;
				p->group = 2;
				p->kind = 3;
				p->arg = 0;
			}
		} else {
			for (long i = 0; i < n; i++) {
				x = hb_inc(x);
			}
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
