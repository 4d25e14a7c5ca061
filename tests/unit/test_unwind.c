/*
 * test_unwind.c - the native stack walk (preload/stack_unwind.c and
 * stack_dwarf.c) against return addresses the functions themselves know
 * (__builtin_return_address): a chain of calls, the same chain again from
 * the thread's cache, from a signal handler through the signal frame,
 * and from a second thread (its own cache).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "testutil.h"

#include "stack.h"

#define MAX 64

static struct stack_unwind_cache *cache_new(void)
{
	void *p = mmap(NULL, sizeof(struct stack_unwind_cache),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* What one walk saw, and what the functions on the way knew. */
struct seen {
	void *ips[MAX];
	int n;
	void *ra[4]; /* ra[i]: the return address out of level i */
};

static __attribute__((noinline)) void leaf(struct seen *s,
					   struct stack_unwind_cache *c)
{
	uint32_t rest;

	s->ra[0] = __builtin_return_address(0);
	s->n = stack_unwind(s->ips, MAX, c, 1, &rest);
	assert_int_equal(rest, 0);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static __attribute__((noinline)) void mid(struct seen *s,
					  struct stack_unwind_cache *c)
{
	s->ra[1] = __builtin_return_address(0);
	leaf(s, c);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void top(struct seen *s,
					  struct stack_unwind_cache *c)
{
	s->ra[2] = __builtin_return_address(0);
	mid(s, c);
	__asm__ volatile("" ::: "memory");
}

/* The index of address a in s->ips, -1 when it is not there. */
static int find(const struct seen *s, void *a)
{
	for (int i = 0; i < s->n; i++) {
		if (s->ips[i] == a) {
			return i;
		}
	}
	return -1;
}

/* ips[0] returns into leaf; then mid, top and top's caller, in order. */
static void check_chain(const struct seen *s)
{
	assert_true(s->n >= 4);
	assert_ptr_equal(s->ips[1], s->ra[0]);
	assert_ptr_equal(s->ips[2], s->ra[1]);
	assert_ptr_equal(s->ips[3], s->ra[2]);
}

static void test_unwind_chain_and_cache(void **st)
{
	struct stack_unwind_cache *c = cache_new();
	struct seen s[2];

	(void)st;
	assert_true(stack_unwind_load() >= 0);
	/* Twice: the second walk takes its rules from the cache, and sees
	 * the same frames (the compiler may make two call sites of the
	 * loop: the frames from the test's caller on are the same). */
	for (int i = 0; i < 2; i++) {
		top(&s[i], c);
		check_chain(&s[i]);
	}
	assert_int_equal(s[0].n, s[1].n);
	assert_memory_equal(s[0].ips + 4, s[1].ips + 4,
			    (s[0].n - 4) * sizeof(void *));
	/* The walk reached main's caller and stopped at the end of the
	 * stack, well short of MAX. */
	assert_true(s[0].n < MAX);
	munmap(c, sizeof(*c));
}

static struct seen sig_seen;
static struct stack_unwind_cache *sig_cache;
static void *sig_ra; /* out of the function the signal came in */

static void on_signal(int sig)
{
	uint32_t rest;

	(void)sig;
	/* A handler's walk only reads the cache. */
	sig_seen.n = stack_unwind(sig_seen.ips, MAX, sig_cache, 0, &rest);
}

static __attribute__((noinline)) void raiser(void)
{
	sig_ra = __builtin_return_address(0);
	raise(SIGUSR2);
	__asm__ volatile("" ::: "memory");
}

static void test_unwind_through_a_signal_frame(void **st)
{
	struct sigaction sa, old;

	(void)st;
	assert_true(stack_unwind_load() >= 0);
	sig_cache = cache_new();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR2, &sa, &old);
	raiser();
	sigaction(SIGUSR2, &old, NULL);
	/* Past the handler, glibc's signal frame and raise's own frames:
	 * the function that raised it, then its caller. */
	assert_true(find(&sig_seen, sig_ra) > 0);
	munmap(sig_cache, sizeof(*sig_cache));
}

static void *thread_walk(void *arg)
{
	struct seen *s = arg;
	struct stack_unwind_cache *c = cache_new();

	top(s, c);
	munmap(c, sizeof(*c));
	return NULL;
}

static void test_unwind_other_thread(void **st)
{
	struct seen s;
	pthread_t t;

	(void)st;
	assert_true(stack_unwind_load() >= 0);
	assert_int_equal(pthread_create(&t, NULL, thread_walk, &s), 0);
	pthread_join(t, NULL);
	check_chain(&s);
	/* The thread's stack ends at its start (clone3's frame marks the
	 * end): the walk stops there. */
	assert_true(s.n < MAX);
}

/* Walks from its caller's frame (the start a hooked call's capture has:
 * the return address, the stack pointer above it, %rbp), two frames,
 * with a log, on cache c: the first walk there works its rules out. */
static __attribute__((noinline)) void
walk_from_caller(struct stack_unwind_cache *c, struct stack_walk_log *log,
		 void **ips, int *n)
{
	void **fp = __builtin_frame_address(0);
	struct stack_unwind_start from = {
		.ip = (uintptr_t)fp[1],
		.sp = (uintptr_t)(fp + 2),
		.rbp = (uintptr_t)fp[0],
	};
	uint32_t rest;

	*n = stack_unwind_from(&from, ips, 2, c, 1, &rest, log);
	assert_int_equal(rest, 0);
	/* The frames are still there: the log says so. */
	assert_true(stack_unwind_check(log, 0));
	__asm__ volatile("" ::: "memory");
}

static void test_unwind_log_first_walk(void **st)
{
	struct stack_unwind_cache *c = cache_new();
	struct stack_walk_log log[2];
	void *ips[2][MAX];
	int n[2];

	(void)st;
	assert_true(stack_unwind_load() >= 0);
	for (int i = 0; i < 2; i++) {
		walk_from_caller(c, &log[i], ips[i], &n[i]);
		/* The first walk, from an empty cache, is logged as the
		 * second, from the cache, is: a rule worked out on the way
		 * does not turn the log off. */
		assert_int_equal(n[i], 2);
		assert_int_equal(log[i].ok, 1);
		assert_true(log[i].n >= 1);
	}
	assert_int_equal(log[0].n, log[1].n);
	assert_memory_equal(log[0].w, log[1].w, log[0].n * sizeof(log[0].w[0]));
	assert_ptr_equal(ips[0][1], ips[1][1]);
	munmap(c, sizeof(*c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwind_chain_and_cache),
		cmocka_unit_test(test_unwind_through_a_signal_frame),
		cmocka_unit_test(test_unwind_other_thread),
		cmocka_unit_test(test_unwind_log_first_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
