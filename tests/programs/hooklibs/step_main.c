/*
 * step_main.c - drives libsteps.so: N steps of two st_load() calls and
 * one train_step() each, then one st_save(). Prints one checksum line,
 * the same with and without mxprof.
 *
 *   step_main N
 */
#include <stdio.h>
#include <stdlib.h>

long st_load(long i);
long train_step(long i);
long st_save(void);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20;
	long sum = 0;

	for (long i = 0; i < n; i++) {
		sum += st_load(i) & 0xffff;
		sum += st_load(i + 1) & 0xffff;
		sum += train_step(i) & 0xffff;
	}
	sum += st_save() & 0xffff;
	printf("steps %ld sum %ld\n", n, sum);
	return 0;
}
