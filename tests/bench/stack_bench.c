/*
 * stack_bench.c - calls libhookb.so's hb_inc N times in a tight loop, R
 * rounds, from DEPTH nested frames, and prints the best round as
 * "ns/call X": with MXPROF_STACKS on, each call captures a stack through
 * all those frames. Run as stack_bench DEPTH N R [PAUSE_MS].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int hb_inc(int x);

static int n_calls, rounds, pause_ms;
static double best = 1e30;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) static int bottom(void)
{
	int x = 0;

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < n_calls; i++) {
			x = hb_inc(x);
		}
		double ns = (now_ns() - t0) / n_calls;
		best = ns < best ? ns : best;
		usleep((useconds_t)pause_ms * 1000);
	}
	return x;
}

__attribute__((noinline)) static int nest(int d)
{
	int x = d <= 1 ? bottom() : nest(d - 1);

	__asm__ volatile("" ::: "memory"); /* keeps the frame */
	return x + 1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: stack_bench DEPTH N R [PAUSE_MS]\n");
		return 2;
	}
	int depth = atoi(argv[1]);
	n_calls = atoi(argv[2]);
	rounds = atoi(argv[3]);
	pause_ms = argc > 4 ? atoi(argv[4]) : 30;
	int x = nest(depth);
	printf("ns/call %.2f (%d)\n", best, x);
	return 0;
}
