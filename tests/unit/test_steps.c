/*
 * test_steps.c - step windows (collector/steps.c): MXPROF_STEPS's two
 * forms, which steps a window keeps, the tables' Steps section
 * (collector/table_steps.c) and the step times behind it
 * (collector/stepstat.c): exact, and in bounded memory past 2^20 steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

/* The steps of 0..n-1 that w keeps, as "3 4 5". */
static void kept(const struct coll_steps *w, uint64_t n, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (coll_steps_keeps(w, i)) {
			at += (size_t)snprintf(buf + at, len - at, "%s%llu",
					       at ? " " : "",
					       (unsigned long long)i);
		}
	}
}

static void test_steps_schedule_is_torch_profilers(void **st)
{
	struct coll_steps w;
	char buf[256];

	(void)st;
	assert_int_equal(coll_steps_parse("2:1:3", &w), 0);
	assert_int_equal(w.mode, COLL_STEPS_SCHEDULE);
	kept(&w, 20, buf, sizeof(buf));
	assert_string_equal(buf, "3 4 5"); /* a missing repeat: once */
	assert_int_equal(coll_steps_parse("2:1:3:0", &w), 0);
	kept(&w, 20, buf, sizeof(buf));
	assert_string_equal(buf, "3 4 5 9 10 11 15 16 17");
	assert_int_equal(coll_steps_parse("2:1:3:2", &w), 0);
	kept(&w, 20, buf, sizeof(buf));
	assert_string_equal(buf, "3 4 5 9 10 11");
	assert_int_equal(coll_steps_parse("0:0:1", &w), 0);
	kept(&w, 5, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	assert_int_equal(coll_steps_parse("1:0:2:0", &w), 0);
	kept(&w, 9, buf, sizeof(buf));
	assert_string_equal(buf, "1 2 4 5 7 8");
}

static void test_steps_list_is_mindspores_step_list(void **st)
{
	struct coll_steps w;
	char buf[256];

	(void)st;
	assert_int_equal(coll_steps_parse("list:1,4-5", &w), 0);
	assert_int_equal(w.mode, COLL_STEPS_LIST);
	kept(&w, 20, buf, sizeof(buf));
	assert_string_equal(buf, "1 4 5");
	assert_int_equal(coll_steps_parse("list:12,3-3,7-8", &w), 0);
	kept(&w, 20, buf, sizeof(buf));
	assert_string_equal(buf, "3 7 8 12");
	assert_int_equal(coll_steps_parse_list("10-12", &w), 0);
	kept(&w, 20, buf, sizeof(buf));
	assert_string_equal(buf, "10 11 12");
}

static void test_steps_bad_windows_keep_every_step(void **st)
{
	static const char *const bad[] = {
		"",	   "1",		"1:2",
		"2:1:0",   "1:2:3:4:5", "-1:1:1",
		"a:1:1",   "1:1:1:",	"1::1",
		"list:",   "list:5-3",	"list:1,,2",
		"list:1,", "list:x",	"list:-1",
		"list:1-", "2:1:3 ",	"99999999999:1:1"};
	struct coll_steps w;

	(void)st;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (coll_steps_parse(bad[i], &w) != -EINVAL) {
			fail_msg("'%s' was taken", bad[i]);
		}
		assert_int_equal(w.mode, COLL_STEPS_ALL);
		assert_true(coll_steps_keeps(&w, 0) && coll_steps_keeps(&w, 7));
	}
	char many[1024] = "list:0";
	for (int i = 1; i <= COLL_STEPS_RANGES; i++) {
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 ",%d", i * 2);
	}
	assert_int_equal(coll_steps_parse(many, &w), -EINVAL);
}

/* A step of time ns as the drain adds it: a span of section Steps. */
static void add_step(struct agg *a, unsigned n, int64_t ns)
{
	char name[32];

	snprintf(name, sizeof(name), "ProfilerStep#%u", n);
	struct agg_sample s = {.group = strtab_intern(STEPS_GROUP),
			       .name = strtab_intern(name),
			       .kind = COLL_SPAN,
			       .value = ns};
	assert_int_equal(agg_add(a, &s), 0);
}

static void test_steps_section_has_the_stats_and_the_slowest(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {0};

	(void)st;
	assert_non_null(a);
	/* Steps 0..9 of 1..10 ms, step 6 as slow as step 9 (10 ms). */
	for (unsigned i = 0; i < 10; i++) {
		add_step(a, i, (int64_t)(i == 6 ? 10 : i + 1) * 1000000);
	}
	char *t = table_format(a, &o);
	assert_non_null(t);
	const char *s = strstr(t, "Steps\n=================\n");
	assert_non_null(s);
	/* times: 1 2 3 4 5 6 8 9 10 10 ms: mean 5.8, median 5.5, p90 10. */
	assert_string_equal(
		strchr(strchr(strchr(s, '\n') + 1, '\n') + 1, '\n') + 1,
		"----                          -----------   --------------\n"
		"mean                                   10           5.8000\n"
		"median                                 10           5.5000\n"
		"p90                                    10          10.0000\n"
		"max                                    10          10.0000\n"
		"ProfilerStep#6                          1          10.0000\n"
		"ProfilerStep#9                          1          10.0000\n"
		"ProfilerStep#8                          1           9.0000\n"
		"ProfilerStep#7                          1           8.0000\n"
		"ProfilerStep#5                          1           6.0000\n"
		"\n"
		"Dropped records: 0\n");
	free(t);
	/* No section of its own named Steps besides; --category finds it. */
	o.category = "Steps";
	t = table_format(a, &o);
	assert_non_null(t);
	assert_non_null(strstr(t, "p90 "));
	free(t);
	o.category = "other";
	t = table_format(a, &o);
	assert_null(strstr(t, "Steps"));
	free(t);
	agg_destroy(a);
}

static void test_steps_section_in_json_and_csv(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {.format = TABLE_CSV};

	(void)st;
	add_step(a, 0, 2000000);
	add_step(a, 1, 4000000);
	char *t = table_format(a, &o);
	assert_non_null(t);
	assert_non_null(
		strstr(t, "\"Steps\",time_ms,\"median\",2,3.000000,,,"));
	assert_non_null(strstr(
		t, "\"Steps\",time_ms,\"ProfilerStep#1\",1,4.000000,,,"));
	free(t);
	o.format = TABLE_JSON;
	t = table_format(a, &o);
	assert_non_null(t);
	assert_non_null(strstr(
		t, "\"p90\": {\"Total Count\": 2, \"Step Time\": 3.8000}"));
	free(t);
	agg_destroy(a);
}

/* numpy's percentile (linear) of the n sorted v. */
static double np_quantile(const int64_t *v, size_t n, double q)
{
	double at = q * (double)(n - 1);
	size_t lo = (size_t)at;

	if (lo + 1 >= n) {
		return (double)v[n - 1];
	}
	return (double)v[lo] + (at - (double)lo) * (double)(v[lo + 1] - v[lo]);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Up to 2^20 steps: the quantiles are numpy's, exactly, with times that
 * repeat; the slowest are the slowest, of equal times the lower number
 * first; a merge gives what adding both would. */
static void test_stepstat_exact(void **st)
{
	struct stepstat *s = stepstat_create(), *t = stepstat_create();
	enum { N = 5001 };
	static int64_t v[N];
	uint64_t x = 88172645463325252ull;

	(void)st;
	assert_non_null(s);
	assert_non_null(t);
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = (int64_t)(x % 300) * 1000 + 5;
		stepstat_add(i < 3000 ? s : t, v[i], i);
	}
	assert_int_equal(stepstat_merge(s, t), 0);
	assert_int_equal(stepstat_count(s), N);
	int64_t *w = malloc(sizeof(v));
	memcpy(w, v, sizeof(v));
	qsort(w, N, sizeof(*w), cmp_i64);
	for (double q = 0; q <= 1.0; q += 0.05) {
		assert_true(stepstat_quantile(s, q) == np_quantile(w, N, q));
	}
	assert_true(stepstat_quantile(s, 0.5) == np_quantile(w, N, 0.5));
	assert_true(stepstat_quantile(s, 0.9) == np_quantile(w, N, 0.9));
	assert_int_equal(stepstat_max(s), w[N - 1]);
	const struct stepstat_slow *slow;
	assert_int_equal(stepstat_slowest(s, &slow), STEPSTAT_SLOWEST);
	/* The first steps of the slowest time, by number. */
	uint64_t want = 0;
	for (unsigned k = 0; k < STEPSTAT_SLOWEST; k++) {
		while (v[want] != w[N - 1]) {
			want++;
		}
		assert_int_equal(slow[k].ns, w[N - 1]);
		assert_int_equal(slow[k].num, want);
		want++;
	}
	assert_false(stepstat_lossy(s));
	free(w);
	stepstat_destroy(s);
	stepstat_destroy(t);
}

/* Past 2^20 steps: the count, total, max and slowest stay exact, the
 * quantiles within 0.2 % of numpy's, from a histogram; a reset forgets. */
static void test_stepstat_histogram(void **st)
{
	struct stepstat *s = stepstat_create();
	size_t n = ((size_t)1 << 20) + 4096;
	int64_t *w = malloc(n * sizeof(*w));
	int64_t total = 0;

	(void)st;
	assert_non_null(s);
	assert_non_null(w);
	for (size_t i = 0; i < n; i++) {
		/* 1 us to about 1 s, spread over every octave. */
		w[i] = 1000 + (int64_t)((i * 2654435761u) % 1000003) *
				      (int64_t)(1 + i % 997);
		total += w[i];
		stepstat_add(s, w[i], i);
	}
	assert_int_equal(stepstat_count(s), n);
	assert_int_equal(stepstat_total(s), total);
	qsort(w, n, sizeof(*w), cmp_i64);
	assert_int_equal(stepstat_max(s), w[n - 1]);
	for (double q = 0.05; q < 1.0; q += 0.05) {
		double want = np_quantile(w, n, q),
		       got = stepstat_quantile(s, q);
		if (got < want * 0.998 || got > want * 1.002) {
			fail_msg("quantile %.2f: %.0f, not %.0f", q, got, want);
		}
	}
	assert_true(stepstat_quantile(s, 1.0) == (double)w[n - 1]);
	assert_true(stepstat_quantile(s, 0.0) == (double)w[0]);
	const struct stepstat_slow *slow;
	assert_int_equal(stepstat_slowest(s, &slow), STEPSTAT_SLOWEST);
	for (unsigned k = 0; k < STEPSTAT_SLOWEST; k++) {
		assert_int_equal(slow[k].ns, w[n - 1 - k]);
	}
	stepstat_reset(s);
	assert_int_equal(stepstat_count(s), 0);
	stepstat_add(s, 7, 3);
	assert_true(stepstat_quantile(s, 0.5) == 7.0);
	free(w);
	stepstat_destroy(s);
}

/* Steps make no aggregate row: a run's steps, named STEP_NAME with their
 * number in arg as the collector records them, give the section, and no
 * row of section Steps. */
static void test_steps_make_no_rows(void **st)
{
	struct agg *a = agg_create();
	struct coll_rec r = {.group = strtab_intern(STEPS_GROUP),
			     .name = strtab_intern(STEP_NAME),
			     .kind = COLL_SPAN,
			     .cat = COLL_CAT_USER};

	(void)st;
	for (uint32_t i = 0; i < 1000; i++) {
		r.t0 = 1000 * (uint64_t)i;
		r.t1 = i == 417 ? 900 : 100;
		r.arg = i;
		assert_int_equal(agg_add_recs_on(a, 1, &r, 1), 0);
	}
	size_t n = 1;
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 0);
	free(rows);
	assert_int_equal(stepstat_count(agg_steps(a)), 1000);
	struct table_opts o = {0};
	char *t = table_format(a, &o);
	assert_non_null(
		strstr(t, "\nProfilerStep#417                        1 "));
	free(t);
	agg_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_schedule_is_torch_profilers),
		cmocka_unit_test(test_steps_list_is_mindspores_step_list),
		cmocka_unit_test(test_steps_bad_windows_keep_every_step),
		cmocka_unit_test(
			test_steps_section_has_the_stats_and_the_slowest),
		cmocka_unit_test(test_steps_section_in_json_and_csv),
		cmocka_unit_test(test_stepstat_exact),
		cmocka_unit_test(test_stepstat_histogram),
		cmocka_unit_test(test_steps_make_no_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
