/*
 * test_final.c - the final dump a signal that ends the process asks for
 * (coll_finish_signal): nothing to write before the collector starts; a
 * wait that cannot be served (the owner lock held, as by a thread that
 * faulted inside mxprof) ends at its bound; once the lock is free the
 * drain thread writes the trace and the tables, and every later caller
 * shares that one dump.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

static char dir[] = "/tmp/mxprof-final-XXXXXX";

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_final_dump_bounded_then_written_once(void **st)
{
	struct coll_config cfg;
	char trace[300], stats[300], journal[320];

	(void)st;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(coll_init(), 0);
	assert_int_equal(coll_finish_signal(100), -ESRCH);

	snprintf(trace, sizeof(trace), "%s/t.json", dir);
	snprintf(stats, sizeof(stats), "%s/t.stats.txt", dir);
	snprintf(journal, sizeof(journal), "%s.journal", trace);
	TU_COLL_CONFIG(cfg, trace);
	cfg.overflow = COLL_OVERFLOW_DROP;
	assert_int_equal(coll_start(&cfg), 0);

	/* The owner lock held: the drain thread cannot write; the wait ends
	 * at its bound, not before. */
	coll_own();
	uint64_t t0 = now_ms();
	assert_int_equal(coll_finish_signal(300), -ETIMEDOUT);
	assert_true(now_ms() - t0 >= 300);
	assert_int_equal(access(trace, F_OK), -1);
	coll_disown();

	/* Then the request, still standing, is served. */
	assert_int_equal(coll_finish_signal(600000), 0);
	assert_int_equal(access(trace, F_OK), 0);
	assert_int_equal(access(stats, F_OK), 0);
	assert_int_equal(access(journal, F_OK), -1);
	/* A second signal shares the dump. */
	assert_int_equal(coll_finish_signal(0), 0);
	coll_finish(1); /* after it: nothing left to do */
	tu_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_final_dump_bounded_then_written_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
