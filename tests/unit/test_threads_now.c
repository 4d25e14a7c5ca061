/*
 * test_threads_now.c - the pure parts of every thread's stack now
 * (preload/threads_now_proc.c): the /proc syscall line, the names of the
 * calls a thread waits in, a Python frame's name split for the text; the
 * text's path beside a trace (collector/paths.c) and the instant event a
 * thread's stack becomes (collector/trace_event.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "output.h"
#include "preload.h"
#include "source.h"

static void test_threads_now_parses_a_call_it_waits_in(void **st)
{
	struct threads_now_sys s;

	(void)st;
	assert_int_equal(threads_now_parse_syscall(
				 "202 0x7f12345678a0 0x80 0x2 0x0 0x0 0x0 "
				 "0x7ffd1000 0x7f0000401234\n",
				 &s),
			 0);
	assert_int_equal(s.running, 0);
	assert_int_equal(s.nr, 202);
	assert_true(s.args[0] == 0x7f12345678a0u);
	assert_true(s.args[1] == 0x80 && s.args[2] == 2 && s.args[5] == 0);
	assert_true(s.sp == 0x7ffd1000u);
	assert_true(s.pc == 0x7f0000401234u);
}

static void
test_threads_now_parses_running_and_blocked_outside_a_call(void **st)
{
	struct threads_now_sys s;

	(void)st;
	assert_int_equal(threads_now_parse_syscall("running\n", &s), 0);
	assert_int_equal(s.running, 1);
	assert_int_equal(
		threads_now_parse_syscall("-1 0x7ffd2000 0x401000", &s), 0);
	assert_int_equal(s.running, 0);
	assert_int_equal(s.nr, -1);
	assert_true(s.sp == 0x7ffd2000u && s.pc == 0x401000u);
}

static void test_threads_now_refuses_other_lines(void **st)
{
	struct threads_now_sys s;

	(void)st;
	assert_int_equal(threads_now_parse_syscall("", &s), -EINVAL);
	assert_int_equal(threads_now_parse_syscall("runningx", &s), -EINVAL);
	/* Too few words, a word without 0x, one too many. */
	assert_int_equal(threads_now_parse_syscall("202 0x1 0x2", &s), -EINVAL);
	assert_int_equal(threads_now_parse_syscall(
				 "7 0x1 0x2 3 0x4 0x5 0x6 0x7 0x8", &s),
			 -EINVAL);
	assert_int_equal(threads_now_parse_syscall(
				 "7 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9", &s),
			 -EINVAL);
	assert_int_equal(threads_now_parse_syscall("-2 0x1 0x2", &s), -EINVAL);
}

static void test_threads_now_names_the_calls_threads_wait_in(void **st)
{
	(void)st;
#if defined(__x86_64__)
	assert_string_equal(threads_now_syscall_name(202), "futex");
	assert_string_equal(threads_now_syscall_name(7), "poll");
	assert_string_equal(threads_now_syscall_name(230), "clock_nanosleep");
	assert_string_equal(threads_now_syscall_name(232), "epoll_wait");
#endif
	assert_null(threads_now_syscall_name(100000));
	assert_null(threads_now_syscall_name(-1));
}

static void test_threads_now_splits_a_python_frame_name(void **st)
{
	char func[64];
	unsigned line;

	(void)st;
	assert_int_equal(threads_now_py_line("Queue.get (queue.py:171)", func,
					     sizeof(func), &line),
			 0);
	assert_string_equal(func, "Queue.get");
	assert_int_equal(line, 171);
	assert_int_equal(threads_now_py_line("<module> (a (b).py:3)", func,
					     sizeof(func), &line),
			 0);
	assert_string_equal(func, "<module>");
	assert_int_equal(line, 3);
	assert_int_equal(threads_now_py_line("odd", func, sizeof(func), &line),
			 -EINVAL);
	assert_string_equal(func, "odd");
	assert_int_equal(line, 0);
}

static void test_threads_now_text_sits_beside_the_trace(void **st)
{
	char buf[256];

	(void)st;
	assert_int_equal(paths_stacks_text("/r/t.json", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/r/t.stacks.txt");
	assert_int_equal(
		paths_stacks_text("t.hang.3.json.gz", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t.hang.3.stacks.txt");
	assert_int_equal(paths_stacks_text("/r/t.json", buf, 8), -ENAMETOOLONG);
}

static void test_threads_now_event_is_a_thread_scoped_instant(void **st)
{
	char dir[] = "/tmp/mxprof-tn-XXXXXX", path[128];
	struct out *o = calloc(1, sizeof(*o));
	size_t len;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/e.json", dir);
	assert_int_equal(out_open(o, path, 0), 0);
	struct coll_trace t = {.o = o, .first = 1, .pid = 7, .base = 1000};
	struct coll_event e = {.ph = 'i',
			       .scope = 't',
			       .cat = "thread_stack",
			       .name = "thread stack now",
			       .pid = 7,
			       .tid = 9,
			       .ts = 3000,
			       .sf = 4};
	coll_event_arg(&e, "state", COLL_ARG_STR)->v.s = "waiting in futex";
	coll_event_arg(&e, "syscall", COLL_ARG_STR)->v.s = "futex";
	coll_trace_write(&t, &e);
	assert_int_equal(out_commit(o), 0);
	char *got = tu_read_file(path, &len);
	assert_string_equal(got, "\n{\"ph\":\"i\",\"cat\":\"thread_stack\","
				 "\"name\":\"thread stack now\",\"pid\":7,"
				 "\"tid\":9,\"ts\":2.000,\"s\":\"t\",\"sf\":4,"
				 "\"args\":{\"state\":\"waiting in futex\","
				 "\"syscall\":\"futex\"}}");
	free(got);
	free(o);
	tu_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_now_parses_a_call_it_waits_in),
		cmocka_unit_test(
			test_threads_now_parses_running_and_blocked_outside_a_call),
		cmocka_unit_test(test_threads_now_refuses_other_lines),
		cmocka_unit_test(
			test_threads_now_names_the_calls_threads_wait_in),
		cmocka_unit_test(test_threads_now_splits_a_python_frame_name),
		cmocka_unit_test(test_threads_now_text_sits_beside_the_trace),
		cmocka_unit_test(
			test_threads_now_event_is_a_thread_scoped_instant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
