/*
 * stack_nested.c - hooked calls nested in hooked calls, for
 * tests/integration/stack_nested.sh and tests/bench/stack_bench.sh.
 *
 *   stack_nested chain   main -> p_1 -> ... -> p_14 -> nest_5 -> nest_6
 *                        -> nest_7 -> nest_8 (libstknest.so, through its
 *                        PLT), twice
 *   stack_nested bench D N R
 *                        from 70 nested frames, calls nest_(9 - D), which
 *                        runs D nested calls, N times a round for R rounds,
 *                        and prints the best round as "ns/call X" (per
 *                        call of nest_(9 - D))
 *
 *   stack_nested alike N main -> a_1 or a_2, by turns, N times -> mid ->
 *                        same -> nest_8: the same call from the same place
 *                        with the same stack pointer, from two callers
 *   stack_nested under N main -> u_1 or u_2, by turns, N times -> nest_via
 *                        (libstknest.so) -> mid -> same -> nest_8: the
 *                        same call from the same place with the same stack
 *                        pointer and the same frames up to the hooked call
 *                        it is in, whose own stacks differ
 *
 * chain and alike print what the calls returned, so a run with and
 * without mxprof can be compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int nest_1(int x);
int nest_2(int x);
int nest_3(int x);
int nest_4(int x);
int nest_5(int x);
int nest_6(int x);
int nest_7(int x);
int nest_8(int x);
int nest_via(int (*f)(int), int x);

/* p_k calls p_k+1; p_14 calls nest_5. Each keeps its frame. */
__attribute__((noinline)) static int p_14(int x)
{
	int r = nest_5(x);
	__asm__ volatile("" ::: "memory");
	return r;
}

#define P(n, next)                                                             \
	__attribute__((noinline)) static int p_##n(int x)                      \
	{                                                                      \
		int r = next(x);                                               \
		__asm__ volatile("" ::: "memory");                             \
		return r;                                                      \
	}

P(13, p_14)
P(12, p_13)
P(11, p_12)
P(10, p_11)
P(9, p_10)
P(8, p_9)
P(7, p_8)
P(6, p_7)
P(5, p_6)
P(4, p_5)
P(3, p_4)
P(2, p_3)
P(1, p_2)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int depth, n_calls, rounds;

/* Calls through the PLT (a pointer to the function would not be). */
static int call(int x)
{
	switch (depth) {
	case 1:
		return nest_8(x);
	case 2:
		return nest_7(x);
	case 3:
		return nest_6(x);
	case 4:
		return nest_5(x);
	case 5:
		return nest_4(x);
	case 6:
		return nest_3(x);
	case 7:
		return nest_2(x);
	default:
		return nest_1(x);
	}
}
static double best = 1e30;

__attribute__((noinline)) static int bottom(void)
{
	int x = 0;

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < n_calls; i++) {
			x = call(x) & 0xffff;
		}
		double ns = (now_ns() - t0) / n_calls;
		best = ns < best ? ns : best;
		usleep(30000);
	}
	return x;
}

__attribute__((noinline)) static int nest(int d)
{
	int x = d <= 1 ? bottom() : nest(d - 1);

	__asm__ volatile("" ::: "memory"); /* keeps the frame */
	return x + 1;
}

/* same calls nest_8 from one place; mid calls same; a_1 and a_2 (which
 * differ, so that no linker folds them) call mid with the same frame. */
__attribute__((noinline)) static int same(int x)
{
	int r = nest_8(x);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static int mid(int x)
{
	int r = same(x);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static int a_1(int x)
{
	int r = mid(x);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) static int a_2(int x)
{
	int r = mid(x);
	__asm__ volatile("" ::: "memory");
	return r + 2;
}

/* u_1 and u_2 call nest_via with the same frame. */
__attribute__((noinline)) static int u_1(int x)
{
	int r = nest_via(mid, x);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) static int u_2(int x)
{
	int r = nest_via(mid, x);
	__asm__ volatile("" ::: "memory");
	return r + 2;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "alike") == 0) {
		int n = atoi(argv[2]), x = 0;
		for (int i = 0; i < n; i++) {
			x = (i & 1 ? a_2(x) : a_1(x)) & 0xffff;
		}
		printf("alike %d\n", x);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "under") == 0) {
		int n = atoi(argv[2]), x = 0;
		for (int i = 0; i < n; i++) {
			x = (i & 1 ? u_2(x) : u_1(x)) & 0xffff;
		}
		printf("under %d\n", x);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "chain") == 0) {
		int a = p_1(0);
		int b = p_1(10);
		printf("chain %d %d\n", a, b);
		return 0;
	}
	if (argc >= 5 && strcmp(argv[1], "bench") == 0) {
		depth = atoi(argv[2]);
		if (depth < 1 || depth > 8) {
			fprintf(stderr, "stack_nested: D is 1 to 8\n");
			return 2;
		}
		n_calls = atoi(argv[3]);
		rounds = atoi(argv[4]);
		int x = nest(70);
		printf("ns/call %.2f (%d)\n", best, x);
		return 0;
	}
	fprintf(stderr, "usage: stack_nested chain | bench D N R | alike N | "
			"under N\n");
	return 2;
}
