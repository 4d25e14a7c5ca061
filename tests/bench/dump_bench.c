/*
 * dump_bench.c - calls libhookb.so's hb_inc N times in one tight loop and
 * prints, on stdout, "loop_ns X" (the loop's time) and "loop_end_ns Y"
 * (CLOCK_REALTIME when the loop ended, in ns), then returns from main.
 * Under mxprof, what follows the loop end is the exit: the final drain,
 * the trace and the tables. dump_bench.sh takes the time from the loop's
 * end to the process's end as the exit dump's time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int hb_inc(int x);

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	int x = 0;

	for (long i = 0; i < n; i++) {
		x = hb_inc(x);
	}
	uint64_t t1 = now_ns(CLOCK_MONOTONIC);
	printf("loop_ns %llu\nloop_end_ns %llu\nresult %d\n",
	       (unsigned long long)(t1 - t0),
	       (unsigned long long)now_ns(CLOCK_REALTIME), x);
	fflush(stdout);
	return 0;
}
