/*
 * test_stacks.c - the stack table and the matching of stacks with spans
 * (collector/stacks.c).
 *
 * The table is global and ids are never reused, so every test makes frame
 * words of its own (a distinct high part).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

static void words(uint64_t *w, unsigned n, uint64_t tag, unsigned k)
{
	for (unsigned i = 0; i < n; i++) {
		w[i] = tag << 40 | (uint64_t)k << 16 | i;
	}
}

static void test_stacks_same_words_same_id(void **st)
{
	uint64_t a[8], b[8];
	unsigned n;

	(void)st;
	words(a, 8, 1, 0);
	memcpy(b, a, sizeof(a));
	uint32_t id = stack_intern(a, 8);
	assert_int_not_equal(id, 0);
	assert_int_equal(stack_intern(b, 8), id);
	/* A prefix, or one word changed, is another stack. */
	assert_int_not_equal(stack_intern(a, 7), id);
	b[3] ^= 1;
	assert_int_not_equal(stack_intern(b, 8), id);
	const uint64_t *w = stack_words(id, &n);
	assert_non_null(w);
	assert_int_equal(n, 8);
	assert_memory_equal(w, a, sizeof(a));
}

static void test_stacks_empty_and_too_deep_are_none(void **st)
{
	static uint64_t big[STACK_DEPTH_MAX + 1];
	unsigned n = 99;

	(void)st;
	words(big, STACK_DEPTH_MAX + 1, 2, 0);
	assert_int_equal(stack_intern(big, 0), 0);
	assert_int_equal(stack_intern(big, STACK_DEPTH_MAX + 1), 0);
	assert_int_not_equal(stack_intern(big, STACK_DEPTH_MAX), 0);
	assert_null(stack_words(0, &n));
	assert_int_equal(n, 0);
	assert_null(stack_words(0xffffffffu, &n));
}

#define THREADS 4
#define STACKS	2000

struct job {
	uint32_t ids[STACKS];
};

static void *intern_all(void *arg)
{
	struct job *j = arg;
	uint64_t w[16];

	for (unsigned k = 0; k < STACKS; k++) {
		words(w, 1 + k % 16, 3, k);
		j->ids[k] = stack_intern(w, 1 + k % 16);
	}
	return NULL;
}

/* Threads interning the same stacks at once: every id names exactly the
 * words it was returned for (two ids for one stack are allowed, one id
 * for two stacks never). */
static void test_stacks_concurrent_interning(void **st)
{
	pthread_t t[THREADS];
	static struct job jobs[THREADS];
	uint64_t w[16];

	(void)st;
	for (int i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, intern_all, &jobs[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
	}
	for (int i = 0; i < THREADS; i++) {
		for (unsigned k = 0; k < STACKS; k++) {
			unsigned n;
			const uint64_t *got = stack_words(jobs[i].ids[k], &n);
			words(w, 1 + k % 16, 3, k);
			assert_non_null(got);
			assert_int_equal(n, 1 + k % 16);
			assert_memory_equal(got, w, n * sizeof(*w));
		}
	}
	/* Once settled, a stack has one id. */
	words(w, 5, 3, 4);
	assert_int_equal(stack_intern(w, 5), stack_intern(w, 5));
}

static struct coll_rec rec(uint16_t kind, uint64_t t0, uint32_t name)
{
	struct coll_rec r = {.t0 = t0, .kind = kind, .name = name};

	return r;
}

/* Spans end innermost first; each gets the stack pushed at its t0, on its
 * own thread; a stack whose span never came is dropped by the next span
 * that began before it. */
static void test_stacks_pends_match_spans(void **st)
{
	struct stack_pends *p = stack_pends_create();
	struct coll_rec r;

	(void)st;
	assert_non_null(p);
	r = rec(COLL_STACK, 10, 101);
	assert_int_equal(stack_pends_rec(p, 1, &r), 0);
	r = rec(COLL_STACK, 20, 102);
	assert_int_equal(stack_pends_rec(p, 1, &r), 0);
	r = rec(COLL_STACK, 15, 201); /* another thread */
	assert_int_equal(stack_pends_rec(p, 2, &r), 0);
	r = rec(COLL_SPAN, 20, 7);
	assert_int_equal(stack_pends_rec(p, 1, &r), 102);
	r = rec(COLL_SPAN, 12, 7); /* no stack of its own */
	assert_int_equal(stack_pends_rec(p, 1, &r), 0);
	r = rec(COLL_STACK, 30, 103); /* its span is never seen */
	assert_int_equal(stack_pends_rec(p, 1, &r), 0);
	r = rec(COLL_SPAN, 10, 7);
	assert_int_equal(stack_pends_rec(p, 1, &r), 101);
	r = rec(COLL_SPAN, 30, 7); /* 103 was dropped with the span at 10 */
	assert_int_equal(stack_pends_rec(p, 1, &r), 0);
	r = rec(COLL_SPAN, 15, 7);
	assert_int_equal(stack_pends_rec(p, 2, &r), 201);
	r = rec(COLL_INSTANT, 15, 7);
	assert_int_equal(stack_pends_rec(p, 2, &r), 0);
	stack_pends_destroy(p);
	stack_pends_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_same_words_same_id),
		cmocka_unit_test(test_stacks_empty_and_too_deep_are_none),
		cmocka_unit_test(test_stacks_concurrent_interning),
		cmocka_unit_test(test_stacks_pends_match_spans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
