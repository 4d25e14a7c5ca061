/*
 * test_table.c - the aggregate tables (collector/table.c) in text, json and
 * csv, against the layout of MXNet's profiler.dumps().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include <yajl/yajl_tree.h>

#include "collector.h"
#include "internal.h"

static void add(struct agg *a, const char *group, const char *name,
		uint16_t kind, uint8_t flags, int64_t value)
{
	struct agg_sample s = {.group = strtab_intern(group),
			       .name = strtab_intern(name),
			       .kind = kind,
			       .flags = flags,
			       .value = value};

	assert_int_equal(agg_add(a, &s), 0);
}

/*
 * The samples of the golden tables: MXNet's own example (dev guide) plus
 * a section whose source checks statuses and a group with time, counter
 * and marker rows.
 */
static struct agg *golden_agg(void)
{
	struct agg *a = agg_create();

	assert_non_null(a);
	add(a, "MXNET_C_API", "MXNDArrayGetShape", COLL_SPAN, 0, 0);
	add(a, "MXNET_C_API", "MXImperativeInvoke", COLL_SPAN, 0, 99000);
	add(a, "MXNET_C_API", "MXNDArrayCreate", COLL_SPAN, 0, 105000);
	add(a, "MXNET_C_API", "MXNDArrayGetShape", COLL_SPAN, 0, 16000);
	add(a, "MXNET_C_API", "MXImperativeInvoke", COLL_SPAN, 0, 237000);
	add(a, "MXNET_C_API", "MXNDArrayGetShape", COLL_SPAN, 0, 5000);
	add(a, "operator", "sum", COLL_SPAN, COLL_FLAG_STATUS, 52000);
	add(a, "operator", "diag", COLL_SPAN,
	    COLL_FLAG_STATUS | COLL_FLAG_ERROR, 41000);
	add(a, "Device Storage", "Memory: cpu/0", COLL_COUNTER, 0, 96060);
	add(a, "Device Storage", "Memory: cpu/0", COLL_COUNTER, 0, 96076);
	add(a, "Device Storage", "Memory: cpu/0", COLL_COUNTER, 0, 24);
	/* Bytes, as the GPU source declares its device memory counters. */
	table_bytes_group(strtab_intern("Device Storage"));
	add(a, "user", "train", COLL_SPAN, 0, 1500000);
	add(a, "user", "loss", COLL_COUNTER, 0, 3);
	add(a, "user", "loss", COLL_COUNTER, 0, 5);
	add(a, "user", "epoch", COLL_INSTANT, COLL_SCOPE_PROCESS, 0);
	add(a, "user", "epoch", COLL_INSTANT, COLL_SCOPE_GLOBAL, 0);
	return a;
}

static const char golden_text[] =
	"Profile Statistics:\n"
	"    Note the difference in units for different entries.\n"
	"Device Storage\n"
	"=================\n"
	"Name                          Total Count    Min Use  (kB)    Max Use "
	" (kB)    Avg Use  (kB)\n"
	"----                          -----------    -------------    "
	"-------------    -------------\n"
	"Memory: cpu/0                           3           0.0240          "
	"96.0760          64.0533\n"
	"\n"
	"MXNET_C_API\n"
	"=================\n"
	"Name                          Total Count        Time (ms)    Min "
	"Time (ms)    Max Time (ms)    Avg Time (ms)   Self Time (ms)         "
	"Time (%)\n"
	"----                          -----------        ---------    "
	"-------------    -------------    -------------   --------------      "
	"   --------\n"
	"MXImperativeInvoke                      2           0.3360           "
	"0.0990           0.2370           0.1680           0.3360            "
	"72.73\n"
	"MXNDArrayCreate                         1           0.1050           "
	"0.1050           0.1050           0.1050           0.1050            "
	"22.73\n"
	"MXNDArrayGetShape                       3           0.0210           "
	"0.0000           0.0160           0.0070           0.0210             "
	"4.55\n"
	"Total                                   6           0.4620           "
	"0.0"
	"000           0.2370           0.0770           0.4620           "
	"100.00\n"
	"\n"
	"operator\n"
	"=================\n"
	"Name                          Total Count        Time (ms)    Min "
	"Time (ms)    Max Time (ms)    Avg Time (ms)   Self Time (ms)         "
	"Time (%)           Errors\n"
	"----                          -----------        ---------    "
	"-------------    -------------    -------------   --------------      "
	"   --------           ------\n"
	"sum                                     1           0.0520           "
	"0.0520           0.0520           0.0520           0.0520            "
	"55.91                0\n"
	"diag                                    1           0.0410           "
	"0.0410           0.0410           0.0410           0.0410            "
	"44.09                1\n"
	"Total                                   2           0.0930           "
	"0.0410      "
	"     0.0520           0.0465           0.0930           100.00        "
	"        1\n"
	"\n"
	"user\n"
	"=================\n"
	"Name                          Total Count        Time (ms)    Min "
	"Time (ms)    Max Time (ms)    Avg Time (ms)   Self Time (ms)         "
	"Time (%)\n"
	"----                          -----------        ---------    "
	"-------------    -------------    -------------   --------------      "
	"   --------\n"
	"train                                   1           1.5000           "
	"1.5000           1.5000           1.5000           1.5000           "
	"100.00\n"
	"Total                                   1           1.5000           "
	"1.5"
	"000           1.5000           1.5000           1.5000           "
	"100.00\n"
	"\n"
	"user (counters)\n"
	"=================\n"
	"Name                          Total Count        Min Value        Max "
	"Value        Avg Value\n"
	"----                          -----------        ---------        "
	"---------        ---------\n"
	"loss                                    2           3.0000           "
	"5.0000           4.0000\n"
	"\n"
	"user (markers)\n"
	"=================\n"
	"Name                          Total Count\n"
	"----                          -----------\n"
	"epoch                                   2\n"
	"\n"
	"Dropped records: 7\n";

static void test_table_text_matches_mxnet_layout_byte_for_byte(void **st)
{
	struct agg *a = golden_agg();
	struct table_opts o = {.dropped = 7};

	(void)st;
	char *t = table_format(a, &o);
	assert_non_null(t);
	assert_string_equal(t, golden_text);
	free(t);
	agg_destroy(a);
}

static void test_table_empty_text_has_header_and_dropped_line(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {0};

	(void)st;
	char *t = table_format(a, &o);
	assert_string_equal(t, "Profile Statistics:\n"
			       "    Note the difference in units for different "
			       "entries.\n"
			       "Dropped records: 0\n");
	free(t);
	agg_destroy(a);
}

static void test_table_long_name_is_separated_from_count(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {0};
	const char *name = "MXNDArraySyncCopyFromCPUWithOffset"; /* 34 */

	(void)st;
	add(a, "longname", name, COLL_SPAN, 0, 1000);
	char *t = table_format(a, &o);
	assert_non_null(strstr(t, "\nMXNDArraySyncCopyFromCPUWithOffset "
				  "          1           0.0010"));
	free(t);
	agg_destroy(a);
}

/*
 * Writes into out the row names of the text section titled title, in
 * order, joined by commas; the Total row is left out.
 */
static void section_rows(const char *text, const char *title, char *out,
			 size_t cap)
{
	char key[256];

	snprintf(key, sizeof(key), "\n%s\n=================\n", title);
	const char *p = strstr(text, key);
	assert_non_null(p);
	p += strlen(key);
	p = strchr(p, '\n') + 1; /* header */
	p = strchr(p, '\n') + 1; /* dashes */
	out[0] = 0;
	while (*p && *p != '\n' && strncmp(p, "Total ", 6) != 0) {
		size_t len = strcspn(p, " ");
		size_t n = strlen(out);
		snprintf(out + n, cap - n, "%s%.*s", n ? "," : "", (int)len, p);
		p = strchr(p, '\n') + 1;
	}
}

/* Rows whose rank differs for every sort key (values in µs):
 *   A: 10 10 10 10  count 4 total 40 avg 10 min 10 max 10
 *   B: 1 59         count 2 total 60 avg 30 min  1 max 59
 *   C: 25           count 1 total 25 avg 25 min 25 max 25
 *   D: 5 5 5        count 3 total 15 avg  5 min  5 max  5 */
static struct agg *sort_agg(void)
{
	struct agg *a = agg_create();
	static const struct {
		const char *name;
		int64_t us;
	} s[] = {{"A", 10}, {"A", 10}, {"A", 10}, {"A", 10}, {"B", 1},
		 {"B", 59}, {"C", 25}, {"D", 5},  {"D", 5},  {"D", 5}};

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		add(a, "sorting", s[i].name, COLL_SPAN, 0, s[i].us * 1000);
	}
	return a;
}

static void check_order(struct agg *a, const char *sort, int ascending,
			const char *want)
{
	struct table_opts o = {.ascending = ascending};
	char rows[64];

	assert_int_equal(table_parse_opts(&o, "table", sort), 0);
	char *t = table_format(a, &o);
	section_rows(t, "sorting", rows, sizeof(rows));
	if (strcmp(rows, want) != 0) {
		fail_msg("sort %s %s: got %s, want %s", sort,
			 ascending ? "ascending" : "descending", rows, want);
	}
	free(t);
}

static void test_table_sorts_rows_by_each_key_both_ways(void **st)
{
	struct agg *a = sort_agg();

	(void)st;
	check_order(a, "total", 0, "B,A,C,D");
	check_order(a, "total", 1, "D,C,A,B");
	check_order(a, "avg", 0, "B,C,A,D");
	check_order(a, "avg", 1, "D,A,C,B");
	check_order(a, "min", 0, "C,A,D,B");
	check_order(a, "min", 1, "B,D,A,C");
	check_order(a, "max", 0, "B,C,A,D");
	check_order(a, "max", 1, "D,A,C,B");
	check_order(a, "count", 0, "A,D,B,C");
	check_order(a, "count", 1, "C,B,D,A");
	agg_destroy(a);
}

static void test_table_ties_are_ordered_by_name(void **st)
{
	struct agg *a = agg_create();
	char rows[64];
	struct table_opts o = {0};

	(void)st;
	add(a, "ties", "zeta", COLL_SPAN, 0, 1000);
	add(a, "ties", "alpha", COLL_SPAN, 0, 1000);
	add(a, "ties", "mid", COLL_SPAN, 0, 1000);
	char *t = table_format(a, &o);
	section_rows(t, "ties", rows, sizeof(rows));
	assert_string_equal(rows, "alpha,mid,zeta");
	free(t);
	agg_destroy(a);
}

static void test_table_sections_come_in_byte_order(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {0};
	char titles[256] = "";

	(void)st;
	const char *groups[] = {"b", "B", "a", "_x", "Z", ""};
	for (size_t i = 0; i < 6; i++) {
		add(a, groups[i], "row", COLL_SPAN, 0, 1000);
	}
	char *t = table_format(a, &o);
	/* A title is the line before a "=================" line. */
	for (const char *p = t; (p = strstr(p, "\n=================\n")); p++) {
		const char *start = p;
		while (start > t && start[-1] != '\n') {
			start--;
		}
		size_t n = strlen(titles);
		snprintf(titles + n, sizeof(titles) - n, "%s%.*s", n ? "|" : "",
			 (int)(p - start), start);
	}
	/* Group 0 has no name: its section is "(none)". */
	assert_string_equal(titles, "(none)|B|Z|_x|a|b");
	free(t);
	agg_destroy(a);
}

static void test_table_top_limits_rows_per_section(void **st)
{
	struct agg *a = golden_agg();
	struct table_opts o = {.top = 2};
	char rows[128];

	(void)st;
	char *t = table_format(a, &o);
	section_rows(t, "MXNET_C_API", rows, sizeof(rows));
	assert_string_equal(rows, "MXImperativeInvoke,MXNDArrayCreate");
	section_rows(t, "operator", rows, sizeof(rows));
	assert_string_equal(rows, "sum,diag");
	section_rows(t, "user", rows, sizeof(rows));
	assert_string_equal(rows, "train");
	/* Percentages stay shares of the whole section's self time. */
	assert_non_null(strstr(t, "0.3360            72.73\n"));
	free(t);

	o.top = 1;
	o.format = TABLE_CSV;
	t = table_format(a, &o);
	int lines = 0;
	for (const char *p = t; (p = strchr(p, '\n')); p++) {
		lines++;
	}
	assert_int_equal(lines, 1 + 6); /* header + one row per section */
	free(t);
	agg_destroy(a);
}

/* The Total row of a time section covers every row, also those that top
 * leaves out; counter and marker sections have none. */
static void test_table_total_row_covers_rows_top_leaves_out(void **st)
{
	struct agg *a = golden_agg();
	struct table_opts o = {.top = 1};

	(void)st;
	char *t = table_format(a, &o);
	assert_non_null(strstr(t, "\nMXImperativeInvoke                      2 "
				  "          0.3360           0.0990           "
				  "0.2370           0.1680           0.3360    "
				  "        72.73\n"
				  "Total                                   6 "
				  "          0.4620           0.0000           "
				  "0.2370           0.0770           0.4620    "
				  "       100.00\n"
				  "\n"));
	int totals = 0;
	for (const char *p = t; (p = strstr(p, "\nTotal ")); p++) {
		totals++;
	}
	assert_int_equal(totals, 3); /* MXNET_C_API, operator, user */
	free(t);
	agg_destroy(a);
}

/* A domain's counter and marker sections keep their documented names
 * whether or not the domain has other rows; Device Storage keeps MXNet's. */
static void test_table_counter_marker_sections_always_suffixed(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {0};

	(void)st;
	assert_non_null(a);
	add(a, "gauges", "loss", COLL_COUNTER, 0, 3);
	add(a, "ticks", "epoch", COLL_INSTANT, COLL_SCOPE_PROCESS, 0);
	add(a, "Device Storage", "Memory: cpu/0", COLL_COUNTER, 0, 24);
	char *t = table_format(a, &o);
	assert_non_null(strstr(t, "\ngauges (counters)\n"));
	assert_non_null(strstr(t, "\nticks (markers)\n"));
	assert_non_null(strstr(t, "\nDevice Storage\n"));
	assert_null(strstr(t, "\ngauges\n"));
	assert_null(strstr(t, "\nticks\n"));
	free(t);
	o.category = "gauges (counters)";
	t = table_format(a, &o);
	assert_non_null(strstr(t, "\ngauges (counters)\n"));
	assert_null(strstr(t, "ticks"));
	free(t);
	agg_destroy(a);
}

static void test_table_category_selects_sections(void **st)
{
	struct agg *a = golden_agg();
	struct table_opts o = {.category = "operator", .dropped = 3};

	(void)st;
	char *t = table_format(a, &o);
	assert_string_equal(
		t, "Profile Statistics:\n"
		   "    Note the difference in units for different entries.\n"
		   "operator\n"
		   "=================\n"
		   "Name                          Total Count        Time (ms) "
		   "   Min Time (ms)    Max Time (ms)    Avg Time (ms)   Self "
		   "Time (ms)         Time (%)           Errors\n"
		   "----                          -----------        --------- "
		   "   -------------    -------------    -------------   "
		   "--------------         --------           ------\n"
		   "sum                                     1           0.0520 "
		   "          0.0520           0.0520           0.0520         "
		   "  0.0520            55.91                0\n"
		   "diag                                    1           0.0410 "
		   "          0.0410           0.0410           0.0410         "
		   "  0.0410            44.09                1\n"
		   "Total                                   2           0.0930 "
		   "          0.0410      "
		   "     0.0520           0.0465           0.0930           "
		   "100.00                1\n"
		   "\n"
		   "Dropped records: 3\n");
	free(t);

	/* A full title selects one section; a group name all of its. */
	o.category = "user (counters)";
	t = table_format(a, &o);
	assert_non_null(strstr(t, "\nuser (counters)\n"));
	assert_null(strstr(t, "\nuser\n"));
	assert_null(strstr(t, "\nuser (markers)\n"));
	assert_null(strstr(t, "MXNET_C_API"));
	free(t);
	o.category = "user";
	t = table_format(a, &o);
	assert_non_null(strstr(t, "\nuser\n"));
	assert_non_null(strstr(t, "\nuser (counters)\n"));
	assert_non_null(strstr(t, "\nuser (markers)\n"));
	assert_null(strstr(t, "operator"));
	free(t);
	o.category = "no such section";
	t = table_format(a, &o);
	assert_string_equal(t, "Profile Statistics:\n"
			       "    Note the difference in units for different "
			       "entries.\n"
			       "Dropped records: 3\n");
	free(t);
	agg_destroy(a);
}

/* Asserts that the number at path in root equals want exactly (the
 * writer prints fixed decimals, which parse back to the same double). */
static void assert_num(yajl_val root, const char **path, double want)
{
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);

	if (!v) {
		fail_msg("no number at %s/%s/%s", path[0], path[1],
			 path[2] ? path[2] : "");
	}
	double got = YAJL_IS_INTEGER(v) ? (double)YAJL_GET_INTEGER(v)
					: YAJL_GET_DOUBLE(v);
	if (got != want) {
		fail_msg("%s/%s/%s/%s: got %.17g, want %.17g", path[0], path[1],
			 path[2] ? path[2] : "",
			 path[2] && path[3] ? path[3] : "", got, want);
	}
}

#define NUM(root, want, ...)                                                   \
	do {                                                                   \
		const char *p_[] = {__VA_ARGS__, NULL};                        \
		assert_num(root, p_, want);                                    \
	} while (0)

static size_t object_len(yajl_val root, const char **path)
{
	yajl_val v = yajl_tree_get(root, path, yajl_t_object);

	assert_non_null(v);
	return YAJL_GET_OBJECT(v)->len;
}

#define LEN(root, ...)                                                         \
	({                                                                     \
		const char *p_[] = {__VA_ARGS__, NULL};                        \
		object_len(root, p_);                                          \
	})

static void test_table_json_parses_back_to_exact_values(void **st)
{
	struct agg *a = golden_agg();
	struct table_opts o = {.dropped = 7};
	char err[256];

	(void)st;
	assert_int_equal(table_parse_opts(&o, "json", NULL), 0);
	char *t = table_format(a, &o);
	yajl_val root = yajl_tree_parse(t, err, sizeof(err));
	if (!root) {
		fail_msg("json does not parse: %s\n%s", err, t);
	}
	const char *unit_time[] = {"Unit", "Time", NULL};
	const char *unit_mem[] = {"Unit", "Memory", NULL};
	assert_string_equal(
		YAJL_GET_STRING(yajl_tree_get(root, unit_time, yajl_t_string)),
		"ms");
	assert_string_equal(
		YAJL_GET_STRING(yajl_tree_get(root, unit_mem, yajl_t_string)),
		"kB");
	NUM(root, 7, "Dropped Records");

	assert_int_equal(LEN(root, "Time"), 3);
	assert_int_equal(LEN(root, "Counter"), 2);
	assert_int_equal(LEN(root, "Marker"), 1);
	assert_int_equal(LEN(root, "Time", "MXNET_C_API"), 3);

	NUM(root, 2, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Total Count");
	NUM(root, 0.336, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Total Time");
	NUM(root, 0.099, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Min Time");
	NUM(root, 0.237, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Max Time");
	NUM(root, 0.168, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Avg Time");
	NUM(root, 72.73, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Time (%)");
	NUM(root, 3, "Time", "MXNET_C_API", "MXNDArrayGetShape", "Total Count");
	NUM(root, 0.007, "Time", "MXNET_C_API", "MXNDArrayGetShape",
	    "Avg Time");
	NUM(root, 4.55, "Time", "MXNET_C_API", "MXNDArrayGetShape", "Time (%)");
	/* Errors only where the status is checked. */
	NUM(root, 1, "Time", "operator", "diag", "Errors");
	NUM(root, 0, "Time", "operator", "sum", "Errors");
	const char *no_err[] = {"Time", "MXNET_C_API", "MXNDArrayCreate",
				"Errors", NULL};
	assert_null(yajl_tree_get(root, no_err, yajl_t_any));
	NUM(root, 100, "Time", "user", "train", "Time (%)");
	NUM(root, 0.336, "Time", "MXNET_C_API", "MXImperativeInvoke",
	    "Self Time");
	NUM(root, 1.5, "Time", "user", "train", "Total Time");

	NUM(root, 3, "Counter", "Device Storage", "Memory: cpu/0",
	    "Total Count");
	NUM(root, 0.024, "Counter", "Device Storage", "Memory: cpu/0",
	    "Min Use");
	NUM(root, 96.076, "Counter", "Device Storage", "Memory: cpu/0",
	    "Max Use");
	NUM(root, 64.0533, "Counter", "Device Storage", "Memory: cpu/0",
	    "Avg Use");
	NUM(root, 3, "Counter", "user (counters)", "loss", "Min Value");
	NUM(root, 5, "Counter", "user (counters)", "loss", "Max Value");
	NUM(root, 4, "Counter", "user (counters)", "loss", "Avg Value");
	NUM(root, 2, "Marker", "user (markers)", "epoch", "Total Count");
	assert_int_equal(LEN(root, "Marker", "user (markers)", "epoch"), 1);

	yajl_tree_free(root);
	free(t);
	agg_destroy(a);
}

static void test_table_json_escapes_names(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {.format = TABLE_JSON};
	char err[256];

	(void)st;
	add(a, "grp \"q\"", "a\\b\"c\td", COLL_SPAN, 0, 2000);
	char *t = table_format(a, &o);
	yajl_val root = yajl_tree_parse(t, err, sizeof(err));
	if (!root) {
		fail_msg("json does not parse: %s\n%s", err, t);
	}
	NUM(root, 0.002, "Time", "grp \"q\"", "a\\b\"c\td", "Total Time");
	yajl_tree_free(root);
	free(t);

	/* An empty set is still a whole document. */
	agg_reset(a);
	t = table_format(a, &o);
	root = yajl_tree_parse(t, err, sizeof(err));
	assert_non_null(root);
	assert_int_equal(LEN(root, "Time"), 0);
	assert_int_equal(LEN(root, "Counter"), 0);
	assert_int_equal(LEN(root, "Marker"), 0);
	NUM(root, 0, "Dropped Records");
	yajl_tree_free(root);
	free(t);
	agg_destroy(a);
}

/* Returns 1 when s[0..n) is valid UTF-8. */
static int is_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = out_utf8_len((const unsigned char *)s + i, n - i);
		if (!l) {
			return 0;
		}
		i += l;
	}
	return 1;
}

static void test_table_json_replaces_bytes_that_are_not_utf8(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {.format = TABLE_JSON};
	char name[1100], err[256];
	size_t k = 0;

	(void)st;
	/* Stray and cut sequences, a surrogate, an overlong '/'. */
	add(a, "g\xed\xa0\x80",
	    "a\xff\xc3"
	    "b\xe2\x82",
	    COLL_SPAN, 0, 1000);
	add(a, "g\xed\xa0\x80", "\xc0\xaf\xc3\xa9", COLL_SPAN, 0, 1000);
	/* A long name needing more than 2048 bytes of escapes. */
	while (k < 1000) {
		name[k++] = '\x80';
	}
	name[k] = 0;
	add(a, "long", name, COLL_SPAN, 0, 1000);
	char *t = table_format(a, &o);
	assert_non_null(t);
	assert_true(is_utf8(t, strlen(t)));
	assert_non_null(strstr(t, "\"g\\ufffd\\ufffd\\ufffd\": {"));
	assert_non_null(strstr(t, "\"a\\ufffd\\ufffdb\\ufffd\\ufffd\": {"));
	assert_non_null(strstr(t, "\"\\ufffd\\ufffd\xc3\xa9\": {"));
	yajl_val root = yajl_tree_parse(t, err, sizeof(err));
	if (!root) {
		fail_msg("json does not parse: %s\n%s", err, t);
	}
	/* yajl gives the name back as 1000 U+FFFD (3 bytes each). */
	yajl_val sec = yajl_tree_get(
		root, (const char *[]){"Time", "long", NULL}, yajl_t_object);
	assert_non_null(sec);
	assert_int_equal(sec->u.object.len, 1);
	assert_int_equal(strlen(sec->u.object.keys[0]), 3000);
	yajl_tree_free(root);
	free(t);
	agg_destroy(a);
}

static void test_table_csv_has_header_and_one_line_per_row(void **st)
{
	struct agg *a = golden_agg();
	struct table_opts o = {0};

	(void)st;
	assert_int_equal(table_parse_opts(&o, "csv", "total"), 0);
	char *t = table_format(a, &o);
	assert_string_equal(
		t,
		"section,kind,name,count,total,min,max,avg,self,percent,"
		"errors\n"
		"\"Device Storage\",counter,\"Memory: "
		"cpu/"
		"0\",3,192160.000000,24.000000,96076.000000,64053.333333,,,\n"
		"\"MXNET_C_API\",time_ms,\"MXImperativeInvoke\",2,0.336000,0."
		"099000,0.237000,0.168000,0.336000,72.73,\n"
		"\"MXNET_C_API\",time_ms,\"MXNDArrayCreate\",1,0.105000,0."
		"105000,0.105000,0.105000,0.105000,22.73,\n"
		"\"MXNET_C_API\",time_ms,\"MXNDArrayGetShape\",3,0.021000,0."
		"000000,0.016000,0.007000,0.021000,4.55,\n"
		"\"operator\",time_ms,\"sum\",1,0.052000,0.052000,0.052000,0."
		"052000,0.052000,55.91,0\n"
		"\"operator\",time_ms,\"diag\",1,0.041000,0.041000,0.041000,0."
		"041000,0.041000,44.09,1\n"
		"\"user\",time_ms,\"train\",1,1.500000,1.500000,1.500000,1."
		"500000,1.500000,100.00,\n"
		"\"user "
		"(counters)\",counter,\"loss\",2,8.000000,3.000000,5.000000,4."
		"000000,,,\n"
		"\"user (markers)\",marker,\"epoch\",2,,,,,,,\n");
	free(t);

	/* Quotes in names are doubled. */
	agg_reset(a);
	add(a, "q", "say \"hi\", twice", COLL_INSTANT, 0, 0);
	t = table_format(a, &o);
	assert_string_equal(
		t,
		"section,kind,name,count,total,min,max,avg,self,percent,"
		"errors\n"
		"\"q (markers)\",marker,\"say \"\"hi\"\", twice\",1,,,,,,,\n");
	free(t);
	agg_destroy(a);
}

static void test_table_parse_opts_accepts_names_and_rejects_others(void **st)
{
	struct table_opts o = {0};
	static const char *const formats[] = {"table", "json", "csv"};
	static const char *const sorts[] = {"total", "avg",   "min",
					    "max",   "count", "self"};

	(void)st;
	for (int f = 0; f < 3; f++) {
		for (int s = 0; s < 6; s++) {
			assert_int_equal(
				table_parse_opts(&o, formats[f], sorts[s]), 0);
			assert_int_equal(o.format, f);
			assert_int_equal(o.sort, s);
		}
	}
	assert_int_equal(TABLE_JSON, 1);
	assert_int_equal(TABLE_SORT_COUNT, 4);
	/* NULL keeps what is there. */
	o.format = TABLE_CSV;
	o.sort = TABLE_SORT_MAX;
	assert_int_equal(table_parse_opts(&o, NULL, NULL), 0);
	assert_int_equal(o.format, TABLE_CSV);
	assert_int_equal(o.sort, TABLE_SORT_MAX);
	assert_int_equal(table_parse_opts(&o, "json", NULL), 0);
	assert_int_equal(o.format, TABLE_JSON);
	assert_int_equal(o.sort, TABLE_SORT_MAX);

	/* PyTorch's table() keys sort by the matching column. */
	assert_int_equal(table_parse_opts(&o, NULL, "cpu_time_total"), 0);
	assert_int_equal(o.sort, TABLE_SORT_TOTAL);
	assert_int_equal(table_parse_opts(&o, NULL, "cuda_time"), 0);
	assert_int_equal(o.sort, TABLE_SORT_AVG);
	assert_int_equal(table_parse_opts(&o, NULL, "self_cpu_time_total"), 0);
	assert_int_equal(o.sort, TABLE_SORT_SELF);
	assert_int_equal(table_parse_opts(&o, NULL, "device_time_total"), 0);
	assert_int_equal(o.sort, TABLE_SORT_TOTAL);
	assert_int_equal(table_parse_opts(&o, NULL, "cpu_memory_usage"),
			 -EINVAL);
	assert_int_equal(o.sort, TABLE_SORT_TOTAL);

	/* A bad value changes nothing, even next to a good one. */
	static const char *const bad_formats[] = {"xml", "", "JSON", "tab",
						  "table "};
	static const char *const bad_sorts[] = {"median", "", "Total",
						"average", "cnt"};
	for (int i = 0; i < 5; i++) {
		o.format = TABLE_TEXT;
		o.sort = TABLE_SORT_TOTAL;
		assert_int_equal(table_parse_opts(&o, bad_formats[i], "avg"),
				 -EINVAL);
		assert_int_equal(table_parse_opts(&o, "csv", bad_sorts[i]),
				 -EINVAL);
		assert_int_equal(table_parse_opts(&o, bad_formats[i], NULL),
				 -EINVAL);
		assert_int_equal(table_parse_opts(&o, NULL, bad_sorts[i]),
				 -EINVAL);
		assert_int_equal(o.format, TABLE_TEXT);
		assert_int_equal(o.sort, TABLE_SORT_TOTAL);
	}
}

/* Self time: outer (10 ms) holds a (3 ms) and b (4 ms) on one thread.
 * The Self Time column shows 3, 3 and 4 ms, Time (%) shares of the
 * section's self time (30%, 30%, 40%: 100 together), and sort_by "self"
 * puts b first although outer has the most time. */
static void test_table_self_time_column_and_sort(void **st)
{
	struct agg *a = agg_create();
	struct table_opts o = {0};
	static const struct {
		const char *name;
		int64_t t0, dur;
	} slices[] = {{"a", 1, 3}, {"b", 5, 4}, {"outer", 0, 10}};

	(void)st;
	for (int i = 0; i < 3; i++) {
		struct agg_sample s = {.group = strtab_intern("nest"),
				       .name = strtab_intern(slices[i].name),
				       .kind = COLL_SPAN,
				       .value = slices[i].dur * 1000000};

		assert_int_equal(
			agg_add_at(a, 1, (uint64_t)slices[i].t0 * 1000000, &s),
			0);
	}
	assert_int_equal(table_parse_opts(&o, "table", "self"), 0);
	o.category = "nest";
	char *t = table_format(a, &o);
	char rows[128];

	section_rows(t, "nest", rows, sizeof(rows));
	assert_string_equal(rows, "b,a,outer");
	assert_non_null(strstr(t, "\nouter                                   1"
				  "          10.0000          10.0000          "
				  "10.0000          10.0000           3.0000"
				  "            30.00\n"));
	assert_non_null(strstr(t, "           4.0000            40.00\n"));
	free(t);
	agg_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_table_text_matches_mxnet_layout_byte_for_byte),
		cmocka_unit_test(
			test_table_empty_text_has_header_and_dropped_line),
		cmocka_unit_test(test_table_long_name_is_separated_from_count),
		cmocka_unit_test(test_table_sorts_rows_by_each_key_both_ways),
		cmocka_unit_test(test_table_ties_are_ordered_by_name),
		cmocka_unit_test(test_table_sections_come_in_byte_order),
		cmocka_unit_test(test_table_top_limits_rows_per_section),
		cmocka_unit_test(
			test_table_total_row_covers_rows_top_leaves_out),
		cmocka_unit_test(test_table_category_selects_sections),
		cmocka_unit_test(
			test_table_counter_marker_sections_always_suffixed),
		cmocka_unit_test(test_table_self_time_column_and_sort),
		cmocka_unit_test(test_table_json_parses_back_to_exact_values),
		cmocka_unit_test(test_table_json_escapes_names),
		cmocka_unit_test(
			test_table_json_replaces_bytes_that_are_not_utf8),
		cmocka_unit_test(
			test_table_csv_has_header_and_one_line_per_row),
		cmocka_unit_test(
			test_table_parse_opts_accepts_names_and_rejects_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
