/*
 * hook_bt.c - unwinding through hooked calls (built with -rdynamic, so that
 * dladdr names its functions). Its output must be the same with and
 * without mxprof.
 *
 *   hook_bt walk       backtrace() in a callback of ht_call, called from
 *                      bt_outer: prints the program's functions on the
 *                      stack, innermost first ("bt_cb bt_outer main _start")
 *   hook_bt sample N   N rounds of hooked calls (ht_add, ht_call, and
 *                      every 64th round 300 nested ht_call: more than the
 *                      shadow stack holds) while a timer signal every
 *                      20 us takes a backtrace() wherever the thread is,
 *                      in the trampolines too; prints whether every
 *                      sample reached main
 *   hook_bt gdb        bt_outer calls ht_add once (for a breakpoint)
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ht_add(int a, int b);
int ht_call(int (*cb)(int), int x);

/* Prints the names of the program's own functions among the n frames. */
static void print_own(void *const *frames, int n)
{
	Dl_info self, d;
	const char *sep = "";

	dladdr((void *)print_own, &self);
	for (int i = 0; i < n; i++) {
		if (dladdr(frames[i], &d) && d.dli_fbase == self.dli_fbase &&
		    d.dli_sname) {
			printf("%s%s", sep, d.dli_sname);
			sep = " ";
		}
	}
	printf("\n");
}

int bt_cb(int x)
{
	void *frames[64];
	int n = backtrace(frames, 64);

	print_own(frames, n);
	return x;
}

__attribute__((noinline)) int bt_outer(int x)
{
	return ht_call(bt_cb, x) + 1;
}

__attribute__((noinline)) int bt_add(int x)
{
	return ht_add(x, 2) + 1;
}

#define SAMPLES 4000
#define DEPTH	1024
static void *samples[SAMPLES][DEPTH];
static int depths[SAMPLES];
static volatile int nsamples, sampling;

static void on_timer(int sig)
{
	static unsigned tick;

	(void)sig;
	if (sampling && nsamples < SAMPLES && ++tick % 8 == 0) {
		int i = nsamples++;

		depths[i] = backtrace(samples[i], DEPTH);
	}
}

static int add_cb(int x)
{
	return ht_add(x, 1);
}

static int deep_cb(int x)
{
	return x <= 0 ? ht_add(x, 1) : ht_call(deep_cb, x - 1) + 1;
}

__attribute__((noinline)) long bt_spin(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++) {
		s += ht_add((int)i, 1);
		s += ht_call(add_cb, (int)i);
		if (i % 64 == 0) {
			s += deep_cb(300);
		}
	}
	return s;
}

static int sample(long n)
{
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL,
			      .sigev_signo = SIGPROF};
	struct itimerspec every = {{0, 20000}, {0, 20000}};
	void *warm[4];
	timer_t t;
	Dl_info d;
	int lost = 0;

	backtrace(warm, 4); /* loads the unwinder outside the handler */
	signal(SIGPROF, on_timer);
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0) {
		perror("timer_create");
		return 1;
	}
	timer_settime(t, 0, &every, NULL);
	sampling = 1;
	long s = bt_spin(n);
	sampling = 0;
	timer_delete(t);
	for (int i = 0; i < nsamples; i++) {
		int found = 0;

		for (int k = 0; k < depths[i] && !found; k++) {
			found = dladdr(samples[i][k], &d) && d.dli_sname &&
				strcmp(d.dli_sname, "main") == 0;
		}
		if (!found && lost++ < 3) {
			fprintf(stderr, "sample %d of %d frames:\n", i,
				depths[i]);
			backtrace_symbols_fd(samples[i], depths[i], 2);
		}
	}
	printf("sum %ld\n", s);
	printf("%s\n", lost ? "some samples did not reach main"
			    : "every sample reached main");
	fprintf(stderr, "%d samples, %d did not reach main\n", nsamples, lost);
	return lost != 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "walk";

	if (strcmp(mode, "walk") == 0) {
		return bt_outer(1) == 3 ? 0 : 1;
	}
	if (strcmp(mode, "sample") == 0) {
		return sample(argc > 2 ? atol(argv[2]) : 1000000);
	}
	if (strcmp(mode, "gdb") == 0) {
		printf("%d\n", bt_add(1));
		return 0;
	}
	fprintf(stderr, "unknown mode %s\n", mode);
	return 2;
}
