/*
 * stack_nested_lib.c - libstknest.so: four functions that call each
 * other through the library's PLT, nest_1 -> nest_2 -> nest_3 -> nest_4,
 * so that with MXPROF_HOOK='libstknest.so:nest_*' each hooked call runs
 * inside the hooked calls above it (tests/integration/stack_nested.sh,
 * tests/bench/stack_bench.sh): nest_k calls nest_k+1 and so on down to
 * nest_8, so a call of nest_(9 - d) runs d hooked calls, each nested in
 * the ones before, and returns x + d. nest_via calls back into the
 * program.
 */
int nest_8(int x);
int nest_7(int x);
int nest_6(int x);
int nest_5(int x);
int nest_4(int x);
int nest_3(int x);
int nest_2(int x);
int nest_1(int x);

/* Each keeps its frame (no tail call) so that a debugger and mxprof see
 * every level. */
#define NEST(n, next)                                                          \
	int nest_##n(int x)                                                    \
	{                                                                      \
		int r = next;                                                  \
		__asm__ volatile("" ::: "memory");                             \
		return r + 1;                                                  \
	}

NEST(8, x)
NEST(7, nest_8(x))
NEST(6, nest_7(x))
NEST(5, nest_6(x))
NEST(4, nest_5(x))
NEST(3, nest_4(x))
NEST(2, nest_3(x))
NEST(1, nest_2(x))

/* Calls back into the program: a hooked call f makes is nested in this
 * one. */
int nest_via(int (*f)(int), int x)
{
	int r = f(x);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}
