/*
 * test_settings_mxnet.c - the settings a user of MXNet reaches for
 * (preload/settings.c): MXNET_PROFILER_AUTOSTART as an alias of
 * MXPROF_AUTOSTART, and the lines that say what a switch accepts.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "preload.h"

/* ---- a fake environment and stderr ------------------------------------ */

static const char *names[8], *values[8];
static int nenv;
static char captured[4096];

static void env_set(const char *name, const char *value)
{
	assert_true(nenv < 8);
	names[nenv] = name;
	values[nenv++] = value;
}

static const char *fake_get(const char *name)
{
	for (int i = 0; i < nenv; i++) {
		if (strcmp(names[i], name) == 0) {
			return values[i];
		}
	}
	return NULL;
}

/* Parses the fake environment into s, then empties it; what went to
 * stderr is left in captured. Returns the error count. */
static int parse(struct settings *s)
{
	char path[] = "/tmp/mxprof-test-stderr-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	int errors = settings_parse(s, fake_get);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, captured, sizeof(captured) - 1, 0);
	close(fd);
	captured[n > 0 ? n : 0] = 0;
	nenv = 0;
	return errors;
}

/* ---- tests -------------------------------------------------------------- */

static void test_settings_mxnet_autostart_alias_starts(void **st)
{
	struct settings s;

	(void)st;
	env_set("MXNET_PROFILER_AUTOSTART", "1");
	assert_int_equal(parse(&s), 0);
	assert_string_equal(captured, "");
	assert_int_equal(s.autostart, 1);

	env_set("MXNET_PROFILER_AUTOSTART", "0");
	assert_int_equal(parse(&s), 0);
	assert_int_equal(s.autostart, 0);
}

static void test_settings_mxnet_mxprof_autostart_wins(void **st)
{
	struct settings s;

	(void)st;
	env_set("MXNET_PROFILER_AUTOSTART", "1");
	env_set("MXPROF_AUTOSTART", "0");
	assert_int_equal(parse(&s), 0);
	assert_int_equal(s.autostart, 0);

	env_set("MXNET_PROFILER_AUTOSTART", "0");
	env_set("MXPROF_AUTOSTART", "yes");
	assert_int_equal(parse(&s), 0);
	assert_int_equal(s.autostart, 1);
}

static void test_settings_mxnet_bad_alias_names_itself(void **st)
{
	struct settings s;

	(void)st;
	env_set("MXNET_PROFILER_AUTOSTART", "maybe");
	assert_int_equal(parse(&s), 1);
	assert_int_equal(s.autostart, 0);
	assert_string_equal(
		captured,
		"mxprof: MXNET_PROFILER_AUTOSTART='maybe' is not valid "
		"(accepted: 1, true, yes, on, or 0, false, no, off (any "
		"case)); not starting until the program asks\n");
}

static void test_settings_mxnet_bool_line_says_what_is_taken(void **st)
{
	struct settings s;

	(void)st;
	env_set("MXPROF_AUTOSTART", "2");
	assert_int_equal(parse(&s), 1);
	assert_string_equal(
		captured,
		"mxprof: MXPROF_AUTOSTART='2' is not valid (accepted: 1, true, "
		"yes, on, or 0, false, no, off (any case)); not starting "
		"until the program asks\n");
	env_set("MXPROF_CONTINUOUS_DUMP", "2");
	assert_int_equal(parse(&s), 1);
	assert_non_null(strstr(captured, "(accepted: 1, true, yes, on, or 0, "
					 "false, no, off (any case))"));
	/* Each word the line names is taken. */
	static const char *const taken[] = {"TRUE", "Yes", "on",
					    "OFF",  "no",  "False"};
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		env_set("MXPROF_AUTOSTART", taken[i]);
		assert_int_equal(parse(&s), 0);
		assert_int_equal(s.autostart, i < 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_mxnet_autostart_alias_starts),
		cmocka_unit_test(test_settings_mxnet_mxprof_autostart_wins),
		cmocka_unit_test(test_settings_mxnet_bad_alias_names_itself),
		cmocka_unit_test(
			test_settings_mxnet_bool_line_says_what_is_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
