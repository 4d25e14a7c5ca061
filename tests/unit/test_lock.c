/*
 * test_lock.c - the lock order check (collector/lock.c): in a build with
 * MXPROF_LOCK_CHECK (the sanitizer builds), taking a lock while holding a
 * later one in the written order stops the process with one line naming
 * both; the written order, and try-locks, pass. Without the check, the
 * locks are plain mutexes and the violation test is skipped.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

static struct coll_lock state = COLL_LOCK_INIT(LOCK_STATE);
static struct coll_lock owner = COLL_LOCK_INIT(LOCK_OWNER);
static struct coll_lock strtab = COLL_LOCK_INIT(LOCK_STRTAB);

/* Runs fn in a child with stderr to a pipe; returns its wait status and
 * what it printed in out. */
static int in_child(void (*fn)(void), char *out, size_t len)
{
	int p[2];
	int status = 0;

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		fn();
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, len - 1);
	out[n > 0 ? n : 0] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void in_order(void)
{
	coll_lock(&state);
	coll_lock(&owner);
	coll_lock(&strtab);
	coll_unlock(&strtab);
	coll_unlock(&owner);
	coll_unlock(&state);
}

static void out_of_order(void)
{
	coll_lock(&strtab);
	coll_lock(&owner);
}

static void trylock_out_of_order(void)
{
	coll_lock(&strtab);
	if (coll_trylock(&owner)) {
		coll_unlock(&owner);
	}
	coll_unlock(&strtab);
}

static void same_rank_twice(void)
{
	static struct coll_lock other = COLL_LOCK_INIT(LOCK_OWNER);

	coll_lock(&owner);
	coll_lock(&other);
}

static void test_lock_written_order_passes(void **st)
{
	char out[512];

	(void)st;
	int status = in_child(in_order, out, sizeof(out));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(out, "");
	status = in_child(trylock_out_of_order, out, sizeof(out));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(out, "");
}

static void test_lock_check_stops_a_violation_naming_both_locks(void **st)
{
	char out[512];

	(void)st;
#ifndef MXPROF_LOCK_CHECK
	skip();
#endif
	int status = in_child(out_of_order, out, sizeof(out));
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_non_null(strstr(out, "mxprof: lock order violated: taking the "
				    "collector owner lock while holding the "
				    "string table lock\n"));
	status = in_child(same_rank_twice, out, sizeof(out));
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_non_null(strstr(out, "taking the collector owner lock while "
				    "holding the collector owner lock"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_written_order_passes),
		cmocka_unit_test(
			test_lock_check_stops_a_violation_naming_both_locks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
