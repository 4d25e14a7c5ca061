/*
 * flight_main.c - drives libsteps.so for the flight tests: STEPS steps of
 * LOADS st_load() calls and one train_step() each; then, with "wait",
 * prints "waiting" and blocks reading standard input until it ends (a
 * program that stops making progress); then one st_save(). With -t, it
 * first calls st_load() at full speed for SECONDS, no step ending (the
 * soak), then runs 10 such steps. Prints one line, the same with and
 * without mxprof.
 *
 *   flight_main STEPS LOADS [wait]
 *   flight_main -t SECONDS LOADS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long st_load(long i);
long train_step(long i);
long st_save(void);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int timed = argc > 1 && strcmp(argv[1], "-t") == 0;
	long n = timed ? 10 : argc > 1 ? atol(argv[1]) : 0;
	long loads = argc > 2 + timed ? atol(argv[2 + timed]) : 1;
	long sum = 0, i;

	if (timed) {
		/* The soak: calls at full speed, no step ending, for SECONDS;
		 * the clock is read every 1024 calls. */
		double end = now() + atof(argv[2]);
		for (i = 0; i % 1024 || now() < end; i++) {
			sum += st_load(i) & 0xffff;
		}
	}
	for (i = 0; i < n; i++) {
		for (long k = 0; k < loads; k++) {
			sum += st_load(i + k) & 0xffff;
		}
		sum += train_step(i) & 0xffff;
	}
	if (!timed && argc > 3 && strcmp(argv[3], "wait") == 0) {
		char buf[256];
		printf("waiting\n");
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0) {
		}
	}
	sum += st_save() & 0xffff;
	if (timed) {
		printf("steps done\n");
	} else {
		printf("steps %ld sum %ld\n", i, sum);
	}
	return 0;
}
