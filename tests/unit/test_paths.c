/*
 * test_paths.c - the names of a trace's files (collector/paths.c), which
 * the library writes and the mxprof command looks for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"

/* Returns the tables path of trace (static buffer). */
static const char *stats(const char *trace)
{
	static char buf[8192];

	assert_int_equal(paths_stats(trace, buf, sizeof(buf)), 0);
	return buf;
}

static const char *child(const char *trace, const char *tag)
{
	static char buf[8192];

	assert_int_equal(paths_child(trace, tag, buf, sizeof(buf)), 0);
	return buf;
}

static void test_paths_stats_drops_json_and_gz_endings(void **st)
{
	(void)st;
	assert_string_equal(stats("x.json"), "x.stats.txt");
	assert_string_equal(stats("x.json.gz"), "x.stats.txt");
	/* A trace named x.gz: its tables are x.stats.txt, the file the
	 * library writes and `mxprof run` reports. */
	assert_string_equal(stats("x.gz"), "x.stats.txt");
	assert_string_equal(stats("/abs/dir/x.json"), "/abs/dir/x.stats.txt");
	assert_string_equal(stats("x.gz.json"), "x.gz.stats.txt");
	assert_string_equal(stats("x.json.gz.gz"), "x.json.gz.stats.txt");
	assert_string_equal(stats("x.json.json"), "x.json.stats.txt");
}

static void test_paths_stats_keeps_other_names_whole(void **st)
{
	(void)st;
	assert_string_equal(stats("x"), "x.stats.txt");
	assert_string_equal(stats("x.txt"), "x.txt.stats.txt");
	assert_string_equal(stats("xjson"), "xjson.stats.txt");
	assert_string_equal(stats("x.jsonl"), "x.jsonl.stats.txt");
	/* Endings are matched with their case, as out.c compresses "x.gz"
	 * and not "x.GZ". */
	assert_string_equal(stats("x.JSON"), "x.JSON.stats.txt");
	assert_string_equal(stats("x.Json.GZ"), "x.Json.GZ.stats.txt");
	/* A name that is only an ending stays a name. */
	assert_string_equal(stats(".json"), ".json.stats.txt");
	assert_string_equal(stats("d/.json"), "d/.json.stats.txt");
	assert_string_equal(stats("d/.gz"), "d/.gz.stats.txt");
	assert_string_equal(stats(".json.gz"), ".json.stats.txt");
}

static void test_paths_dots_in_folders_are_not_endings(void **st)
{
	(void)st;
	assert_string_equal(stats("a.b/c"), "a.b/c.stats.txt");
	assert_string_equal(stats("a.json/c"), "a.json/c.stats.txt");
	assert_string_equal(stats("a.gz/c.json"), "a.gz/c.stats.txt");
	assert_string_equal(stats("./c.json.gz"), "./c.stats.txt");
	assert_string_equal(stats("../r.1/t"), "../r.1/t.stats.txt");
	assert_int_equal(paths_stem_len("a.b/c"), 5);
	assert_int_equal(paths_stem_len("a.b/c.json.gz"), 5);
	assert_int_equal(paths_stem_len("a.b/c.gz"), 5);
	assert_int_equal(paths_stem_len(""), 0);
}

static void test_paths_child_puts_the_tag_before_the_ending(void **st)
{
	(void)st;
	assert_string_equal(child("t.json", "42"), "t.42.json");
	assert_string_equal(child("t.json.gz", "42"), "t.42.json.gz");
	assert_string_equal(child("t.gz", "42"), "t.42.gz");
	assert_string_equal(child("t", "42"), "t.42");
	assert_string_equal(child("a.b/t", "42"), "a.b/t.42");
	assert_string_equal(child("t.JSON", "42"), "t.JSON.42");
	assert_string_equal(child("t.json", "[0-9]*"), "t.[0-9]*.json");
	/* A child's own tables are found from its trace the same way. */
	assert_string_equal(stats(child("t.gz", "42")), "t.42.stats.txt");
}

static void test_paths_journal_keeps_the_whole_trace_name(void **st)
{
	char buf[256];

	(void)st;
	assert_int_equal(paths_journal("t.json", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t.json.journal");
	assert_int_equal(paths_journal("t.json.gz", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t.json.gz.journal");
	assert_int_equal(paths_journal("a.b/t", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a.b/t.journal");
	/* And back. */
	assert_int_equal(
		paths_journal_trace("t.json.gz.journal", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t.json.gz");
	assert_int_equal(
		paths_journal_trace("t.journal.journal", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t.journal");
	assert_int_equal(paths_journal_trace("t.json", buf, sizeof(buf)),
			 -EINVAL);
	assert_string_equal(buf, "");
	assert_int_equal(paths_journal_trace(".journal", buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(paths_journal_trace("t.JOURNAL", buf, sizeof(buf)),
			 -EINVAL);
}

static void test_paths_long_names_fit_exactly_or_fail_empty(void **st)
{
	char name[5000], buf[5100];
	size_t n = 4090;

	(void)st;
	memset(name, 'a', n);
	memcpy(name + n, ".json", 6); /* 4095 bytes, the longest path */
	/* "aaa...a.stats.txt": 4090 + 10 bytes and the terminator. */
	assert_int_equal(paths_stats(name, buf, 4101), 0);
	assert_int_equal(strlen(buf), 4100);
	assert_string_equal(buf + 4090, ".stats.txt");
	/* One byte short: an error and an empty name, never a cut one
	 * that would name another file. */
	assert_int_equal(paths_stats(name, buf, 4100), -ENAMETOOLONG);
	assert_string_equal(buf, "");
	assert_int_equal(paths_journal(name, buf, 4095 + 9), 0);
	assert_int_equal(paths_journal(name, buf, 4095 + 8), -ENAMETOOLONG);
	assert_string_equal(buf, "");
	assert_int_equal(paths_child(name, "123", buf, 4095 + 5), 0);
	assert_string_equal(buf + 4090, ".123.json");
	assert_int_equal(paths_child(name, "123", buf, 4095 + 4),
			 -ENAMETOOLONG);
	assert_string_equal(buf, "");
	assert_int_equal(paths_stats("x.json", buf, 0), -ENAMETOOLONG);
}

static void test_paths_status_under_xdg_runtime_dir_or_tmp(void **st)
{
	char buf[256], want[256];
	char *old = getenv("XDG_RUNTIME_DIR");
	char *saved = old ? strdup(old) : NULL;

	(void)st;
	setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
	assert_int_equal(paths_status(123, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/user/7/mxprof/123.status");
	assert_int_equal(paths_status(123, buf, 10), -ENAMETOOLONG);
	assert_string_equal(buf, "");
	setenv("XDG_RUNTIME_DIR", "", 1);
	assert_int_equal(paths_status(123, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "/tmp/mxprof-%u/123.status",
		 (unsigned)getuid());
	assert_string_equal(buf, want);
	unsetenv("XDG_RUNTIME_DIR");
	assert_int_equal(paths_status(123, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
	if (saved) {
		setenv("XDG_RUNTIME_DIR", saved, 1);
		free(saved);
	}
}

static void test_paths_temp_shortens_names_past_name_max(void **st)
{
	char name[300], path[320], buf[400];

	(void)st;
	assert_int_equal(paths_temp("d/t.json", 42, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "d/t.json.tmp.42");
	/* 240 bytes + ".tmp.42" = 247: fits NAME_MAX, kept. */
	memset(name, 'n', 240);
	name[240] = 0;
	snprintf(path, sizeof(path), "d/%s", name);
	assert_int_equal(paths_temp(path, 42, buf, sizeof(buf)), 0);
	assert_int_equal(strlen(buf), 2 + 240 + 7);
	/* 250 bytes: the name is replaced by a hash of it, same folder. */
	memset(name, 'n', 250);
	name[250] = 0;
	snprintf(path, sizeof(path), "d/%s", name);
	assert_int_equal(paths_temp(path, 42, buf, sizeof(buf)), 0);
	assert_int_equal(strncmp(buf, "d/.mxprof-", 10), 0);
	assert_string_equal(buf + 18, ".tmp.42");
	assert_int_equal(strlen(buf), 25);
	/* Another long name gives another hash. */
	char other[400];
	path[10] = 'x';
	assert_int_equal(paths_temp(path, 42, other, sizeof(other)), 0);
	assert_string_not_equal(buf, other);
	assert_int_equal(paths_temp(path, 42, buf, 10), -ENAMETOOLONG);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_stats_drops_json_and_gz_endings),
		cmocka_unit_test(test_paths_stats_keeps_other_names_whole),
		cmocka_unit_test(test_paths_dots_in_folders_are_not_endings),
		cmocka_unit_test(
			test_paths_child_puts_the_tag_before_the_ending),
		cmocka_unit_test(test_paths_journal_keeps_the_whole_trace_name),
		cmocka_unit_test(
			test_paths_long_names_fit_exactly_or_fail_empty),
		cmocka_unit_test(
			test_paths_status_under_xdg_runtime_dir_or_tmp),
		cmocka_unit_test(test_paths_temp_shortens_names_past_name_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
