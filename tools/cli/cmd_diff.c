/*
 * cmd_diff.c - mxprof diff: what changed between two traces.
 *
 * Both traces are aggregated per (section, name) the way report does it:
 * the number of events and, for spans and frames, the total time. Rows are
 * printed with the change in total time, largest increase (the worst
 * regression) first. Rows present in one trace only are kept, with zeros
 * for the other.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hmap.h"

struct df_row {
	char *section;
	char *name;
	uint64_t hash;
	uint64_t count[2];
	int64_t total_ns[2];
};

/* A table of rows (hmap.h: slots are struct df_row *, NULL when empty);
 * keys are (section, name). */
struct df_map {
	struct hmap rows;
	int side; /* which trace is being read: 0 = A, 1 = B */
};

/* The hash of (a, b): FNV-1a of a, a 0x1f byte, then b. */
static uint64_t df_hash(const char *a, const char *b)
{
	uint64_t h = hmap_fnv1a_add(HMAP_FNV_OFFSET, a, strlen(a));

	h = hmap_fnv1a_add(h, "\x1f", 1);
	return hmap_fnv1a_add(h, b, strlen(b));
}

static int df_empty(const void *slot)
{
	return *(struct df_row *const *)slot == NULL;
}

static uint64_t df_slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return (*(struct df_row *const *)slot)->hash;
}

/* key: a struct df_row with section, name and hash set. */
static int df_match(const void *slot, const void *key)
{
	const struct df_row *r = *(struct df_row *const *)slot, *k = key;

	return r->hash == k->hash && strcmp(r->section, k->section) == 0 &&
	       strcmp(r->name, k->name) == 0;
}

static const struct hmap_ops df_ops = {
	.size = sizeof(struct df_row *),
	.empty = df_empty,
	.hash = df_slot_hash,
};

static struct df_row *df_get(struct df_map *m, const char *section,
			     const char *name)
{
	struct df_row k = {.section = (char *)section,
			   .name = (char *)name,
			   .hash = df_hash(section, name)};
	struct df_row **slot, *r;

	if (hmap_reserve(&m->rows, &df_ops, 256, 1, 2, NULL) < 0) {
		return NULL;
	}
	slot = hmap_find(&m->rows, &df_ops, k.hash, df_match, &k);
	r = *slot;
	if (r) {
		return r;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->section = strdup(section)) ||
	    !(r->name = strdup(name))) {
		if (r) {
			free(r->section);
		}
		free(r);
		return NULL;
	}
	r->hash = k.hash;
	*slot = r;
	m->rows.used++;
	return r;
}

static int df_event(const struct trace_event *ev, void *opaque)
{
	struct df_map *m = opaque;
	const char *section;
	struct df_row *r;

	char buf[TRACE_SHORT_MAX + 16];

	/* Sections as the tables name them: counters and markers apart. */
	switch (ev->ph) {
	case 'X':
		section = ev->has_args_group ? ev->args_group : ev->cat;
		break;
	case 'i':
	case 'I':
		snprintf(buf, sizeof(buf), "%s (markers)",
			 ev->has_args_group ? ev->args_group : ev->cat);
		section = buf;
		break;
	case 'C':
		section = ev->has_group ? ev->group : ev->cat;
		if (!table_bytes_named(section)) { /* MXNet's bare name */
			snprintf(buf, sizeof(buf), "%s (counters)", section);
			section = buf;
		}
		break;
	default:
		return 0;
	}
	r = df_get(m, section, ev->name);
	if (!r) {
		util_err("out of memory");
		return -ENOMEM;
	}
	r->count[m->side]++;
	if (ev->ph == 'X') {
		r->total_ns[m->side] =
			agg_sat_add(r->total_ns[m->side], ev->dur_ns);
	}
	return 0;
}

/* Returns B - A of r's total time, saturated like the totals. */
static int64_t df_delta(const struct df_row *r)
{
	int64_t d;

	if (__builtin_sub_overflow(r->total_ns[1], r->total_ns[0], &d)) {
		return r->total_ns[1] > 0 ? INT64_MAX : INT64_MIN;
	}
	return d;
}

static int df_cmp(const void *pa, const void *pb)
{
	const struct df_row *a = *(struct df_row *const *)pa;
	const struct df_row *b = *(struct df_row *const *)pb;
	int64_t da = df_delta(a);
	int64_t db = df_delta(b);
	int c;

	if (da != db) {
		return da > db ? -1 : 1;
	}
	c = strcmp(a->section, b->section);
	return c ? c : strcmp(a->name, b->name);
}

static double df_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Writes the ratio B/A into buf: "-" (or null in JSON) when A is 0. */
static const char *df_ratio(const struct df_row *r, char *buf, size_t len,
			    const char *none)
{
	if (r->total_ns[0] == 0) {
		return none;
	}
	snprintf(buf, len, "%.3f",
		 (double)r->total_ns[1] / (double)r->total_ns[0]);
	return buf;
}

static void df_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"') {
			fputc('"', f);
		}
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Writes s as a JSON string with the collector's escaper: bytes that are
 * not UTF-8 become U+FFFD. */
static void df_json_str(FILE *f, const char *s)
{
	char buf[1024];
	size_t n = strlen(s), used, k;

	fputc('"', f);
	while (n > 0) {
		k = out_json_escape(buf, sizeof(buf), s, n, &used);
		fwrite(buf, 1, k, f);
		s += used;
		n -= used;
	}
	fputc('"', f);
}

enum { DF_TABLE, DF_CSV, DF_JSON };

static void df_print(struct df_row **rows, size_t n, int fmt, const char *a,
		     const char *b)
{
	size_t i, wn = 4, ws = 7;
	char rb[32];

	if (fmt == DF_CSV) {
		puts("Section,Name,Count A,Count B,Time A (ms),Time B (ms),"
		     "Delta (ms),Ratio");
		for (i = 0; i < n; i++) {
			df_csv_field(stdout, rows[i]->section);
			fputc(',', stdout);
			df_csv_field(stdout, rows[i]->name);
			printf(",%llu,%llu,%.4f,%.4f,%.4f,%s\n",
			       (unsigned long long)rows[i]->count[0],
			       (unsigned long long)rows[i]->count[1],
			       df_ms(rows[i]->total_ns[0]),
			       df_ms(rows[i]->total_ns[1]),
			       df_ms(df_delta(rows[i])),
			       df_ratio(rows[i], rb, sizeof(rb), ""));
		}
		return;
	}
	if (fmt == DF_JSON) {
		fputs("{\"a\":", stdout);
		df_json_str(stdout, a);
		fputs(",\"b\":", stdout);
		df_json_str(stdout, b);
		fputs(",\"rows\":[", stdout);
		for (i = 0; i < n; i++) {
			fputs(i ? ",\n{\"section\":" : "\n{\"section\":",
			      stdout);
			df_json_str(stdout, rows[i]->section);
			fputs(",\"name\":", stdout);
			df_json_str(stdout, rows[i]->name);
			printf(",\"count_a\":%llu,\"count_b\":%llu,"
			       "\"time_a_ms\":%.4f,\"time_b_ms\":%.4f,"
			       "\"delta_ms\":%.4f,\"ratio\":%s}",
			       (unsigned long long)rows[i]->count[0],
			       (unsigned long long)rows[i]->count[1],
			       df_ms(rows[i]->total_ns[0]),
			       df_ms(rows[i]->total_ns[1]),
			       df_ms(df_delta(rows[i])),
			       df_ratio(rows[i], rb, sizeof(rb), "null"));
		}
		puts("\n]}");
		return;
	}
	for (i = 0; i < n; i++) {
		size_t l = strlen(rows[i]->name), s = strlen(rows[i]->section);

		wn = l > wn ? l : wn;
		ws = s > ws ? s : ws;
	}
	wn = wn > 60 ? 60 : wn;
	ws = ws > 40 ? 40 : ws;
	printf("Profile Difference:\n    A: %s\n    B: %s\n"
	       "    Largest increase of total time first; Ratio is B/A.\n\n",
	       a, b);
	printf("%-*s  %-*s  %9s  %9s  %13s  %13s  %13s  %8s\n", (int)wn, "Name",
	       (int)ws, "Section", "Count A", "Count B", "Time A (ms)",
	       "Time B (ms)", "Delta (ms)", "Ratio");
	printf("%-*s  %-*s  %9s  %9s  %13s  %13s  %13s  %8s\n", (int)wn, "----",
	       (int)ws, "-------", "-------", "-------", "-----------",
	       "-----------", "----------", "-----");
	for (i = 0; i < n; i++) {
		const struct df_row *r = rows[i];

		printf("%-*.*s  %-*.*s  %9llu  %9llu  %13.4f  %13.4f  %+13.4f  "
		       "%8s\n",
		       (int)wn, (int)wn, r->name, (int)ws, (int)ws, r->section,
		       (unsigned long long)r->count[0],
		       (unsigned long long)r->count[1], df_ms(r->total_ns[0]),
		       df_ms(r->total_ns[1]), df_ms(df_delta(r)),
		       df_ratio(r, rb, sizeof(rb), "-"));
	}
}

static const char df_usage[] = "usage: mxprof diff [--format FMT] [--top N] "
			       "[--category SECTION] A B\n";

static const char df_help[] =
	"\n"
	"Compare two traces written by mxprof (for example the same program\n"
	"before and after a change). For every section and name it prints the\n"
	"number of events in A and in B, the total time in each, the change\n"
	"(B - A) and the ratio B/A. The largest increase of total time, the\n"
	"worst regression, comes first.\n"
	"\n"
	"options:\n"
	"  -f, --format FMT      table (default), csv or json\n"
	"  -n, --top N           only the first N rows\n"
	"  -c, --category NAME   only the section NAME\n"
	"  -h, --help            this text\n"
	"\n"
	"environment: MXPROF_READ_THREADS=N threads read a large plain file\n"
	"(default: one per processor online; 1: none); the output is the\n"
	"same with any N.\n"
	"\n"
	"exit status: 0 printed, 1 a trace could not be read or the output\n"
	"could not be written, 2 bad usage.\n";

/* mxprof diff A B: the rows of two traces side by side, largest increase
 * first. Returns the exit status (cli.h). */
int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"top", required_argument, NULL, 'n'},
		{"category", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct df_map m = {0};
	struct df_row **rows = NULL, **slots;
	struct trace_meta meta;
	unsigned long long top = 0;
	const char *category = NULL;
	uint64_t at;
	size_t i, n = 0;
	int c, fmt = DF_TABLE, side, ret = CLI_FAIL;
	enum trace_status st;

	util_set_cmd("diff");
	while ((c = getopt_long(argc, argv, "f:n:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "table") == 0) {
				fmt = DF_TABLE;
			} else if (strcmp(optarg, "csv") == 0) {
				fmt = DF_CSV;
			} else if (strcmp(optarg, "json") == 0) {
				fmt = DF_JSON;
			} else {
				util_err("--format: '%s' is not table, csv or "
					 "json",
					 optarg);
				goto usage;
			}
			break;
		case 'n':
			if (util_parse_uint(optarg, 0, 1000000000, &top) < 0) {
				util_err("--top: '%s' is not a count", optarg);
				goto usage;
			}
			break;
		case 'c':
			category = optarg;
			break;
		case 'h':
			errno = 0;
			printf("%s%s", df_usage, df_help);
			return util_stdout_done("the help");
		default:
			goto usage;
		}
	}
	if (argc - optind != 2) {
		util_err("needs exactly two traces, A and B");
		goto usage;
	}
	for (side = 0; side < 2; side++) {
		const char *path = argv[optind + side];

		m.side = side;
		st = trace_read_file(path, df_event, &m, &meta, &at);
		if (st == TRACE_BAD) {
			goto out;
		}
		if (st == TRACE_TRUNCATED) {
			trace_read_warn_truncated(path, at);
		}
	}
	rows = calloc(m.rows.used ? m.rows.used : 1, sizeof(*rows));
	if (!rows) {
		util_err("out of memory");
		goto out;
	}
	slots = m.rows.slots;
	for (i = 0; i < m.rows.cap; i++) {
		if (slots[i] &&
		    (!category || strcmp(slots[i]->section, category) == 0)) {
			rows[n++] = slots[i];
		}
	}
	qsort(rows, n, sizeof(*rows), df_cmp);
	if (top && n > top) {
		n = (size_t)top;
	}
	errno = 0;
	df_print(rows, n, fmt, argv[optind], argv[optind + 1]);
	ret = util_stdout_done("the comparison");
out:
	free(rows);
	slots = m.rows.slots;
	for (i = 0; i < m.rows.cap; i++) {
		if (slots[i]) {
			free(slots[i]->section);
			free(slots[i]->name);
			free(slots[i]);
		}
	}
	hmap_free(&m.rows);
	return ret;
usage:
	fputs(df_usage, stderr);
	return CLI_USAGE;
}
