/*
 * test_stack_reuse.c - the stacks a thread keeps by the start of their
 * walk (preload/stack_reuse.c): a start whose walk could not be kept
 * makes the next captures from it walk without a log, and a later one
 * that could be kept is found all the same; two stacks of one start
 * (one place reached from two callers by turns) are both kept. The logs
 * here are made by hand: none, or one word of the test's own, which
 * tells two walks apart (a log's replay reads its words, and checks that
 * the objects are those it was made with).
 */
#include <string.h>
#include <sys/mman.h>

#include "testutil.h"

#include "stack.h"

static struct stack_reuse *table_new(void)
{
	void *p = mmap(NULL, sizeof(struct stack_reuse), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* A log that stands for a walk, or one that could not be kept. */
static struct stack_walk_log log_of(int ok)
{
	struct stack_walk_log log;
	uint32_t gen = 0;

	memset(&log, 0, sizeof(log));
	assert_non_null(stack_objs_get(&gen));
	log.gen = gen;
	log.ok = (uint8_t)ok;
	return log;
}

static uint32_t find(struct stack_reuse *r, const struct stack_unwind_start *s,
		     int *no_log)
{
	return stack_reuse_find(r, s, 0, NULL, 32, no_log);
}

static void test_reuse_after_one_not_kept(void **st)
{
	struct stack_reuse *r = table_new();
	struct stack_unwind_start from = {.ip = 0x401234, .sp = 0x7ffd1000};
	struct stack_walk_log off, on;
	int no_log;

	(void)st;
	assert_true(stack_unwind_load() >= 0);
	off = log_of(0);
	on = log_of(1);
	assert_int_equal(find(r, &from, &no_log), 0);
	assert_int_equal(no_log, 0);
	/* Not kept: the next captures walk without noting their words. */
	stack_reuse_keep(r, &from, 0, &off, 0, 0, NULL, 0, 7);
	assert_int_equal(find(r, &from, &no_log), 0);
	assert_int_equal(no_log, 1);
	/* Kept the next time: found, not hidden by the first. */
	stack_reuse_keep(r, &from, 0, &on, 0, 0, NULL, 0, 9);
	assert_int_equal(find(r, &from, &no_log), 9);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(find(r, &from, &no_log), 9);
	}
	/* One not kept again: the stack kept stays found. */
	stack_reuse_keep(r, &from, 0, &off, 0, 0, NULL, 0, 11);
	assert_int_equal(find(r, &from, &no_log), 9);
	munmap(r, sizeof(*r));
}

static void test_reuse_two_stacks_of_one_start(void **st)
{
	struct stack_reuse *r = table_new();
	struct stack_unwind_start from = {.ip = 0x401234, .sp = 0x7ffd1000};
	struct stack_walk_log a, b;
	/* The word the walks read, which tells the two callers apart. */
	static volatile uintptr_t word;
	int no_log;

	(void)st;
	assert_true(stack_unwind_load() >= 0);
	a = log_of(1);
	b = log_of(1);
	a.n = b.n = 1;
	a.w[0][0] = b.w[0][0] = (uintptr_t)&word;
	a.w[0][1] = 1;
	b.w[0][1] = 2;
	stack_reuse_keep(r, &from, 0, &a, 0, 0, NULL, 0, 21);
	stack_reuse_keep(r, &from, 0, &b, 0, 0, NULL, 0, 22);
	/* By turns, each finds its own. */
	for (int i = 0; i < 10; i++) {
		word = 1 + (uintptr_t)(i & 1);
		assert_int_equal(find(r, &from, &no_log), 21 + (i & 1));
	}
	/* A word neither walk read: no stack. */
	word = 3;
	assert_int_equal(find(r, &from, &no_log), 0);
	/* Another start of the same place (a deeper caller's stack
	 * pointer) is another entry. */
	struct stack_unwind_start deeper = from;
	deeper.sp -= 64;
	word = 1;
	assert_int_equal(find(r, &deeper, &no_log), 0);
	stack_reuse_keep(r, &deeper, 0, &a, 0, 0, NULL, 0, 23);
	assert_int_equal(find(r, &deeper, &no_log), 23);
	assert_int_equal(find(r, &from, &no_log), 21);
	munmap(r, sizeof(*r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_after_one_not_kept),
		cmocka_unit_test(test_reuse_two_stacks_of_one_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
