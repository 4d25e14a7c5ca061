/*
 * steplib.c - libsteps.so, a training loop's library for the step tests:
 * st_load() fetches a batch, train_step() runs one step (MXPROF_STEP
 * names it), st_save() runs once after the loop.
 */
#include <stdio.h>

static volatile long sink;

long st_load(long i)
{
	sink += i;
	return sink;
}

long train_step(long i)
{
	sink = sink * 3 + i;
	return sink;
}

long st_save(void)
{
	return sink;
}
