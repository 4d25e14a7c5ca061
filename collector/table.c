/*
 * table.c - the aggregate tables, in the layout of MXNet's profiler.dumps().
 *
 *   Profile Statistics:
 *       Note the difference in units for different entries.
 *   <section>
 *   =================
 *   Name                          Total Count        Time (ms)    Min ...
 *   ----                          -----------        ---------    -------
 *   <row>
 *   <blank line>
 *
 * The name column is 30 wide (wider when a name needs it, so that the
 * columns stay aligned) and left-aligned, Total Count 11 wide and the
 * other columns 17 wide, right-aligned, with four decimals, as MXNet prints
 * them. Sections come in byte order of their titles, as MXNet's std::map
 * gives them. Beyond MXNet's columns, time sections carry "Self Time (ms)"
 * (the time not spent in slices nested inside, on the same thread:
 * nest.c), "Time (%)" (share of the section's self time, so a section
 * sums to 100%) and, where a source checks return statuses, "Errors", and
 * end with a "Total" row: the count, total, minimum, maximum, average and
 * self time over every row of the section (PyTorch's total_average), also
 * when --top shows fewer. A group's counters and markers are sections
 * of their own, always titled with " (counters)" and " (markers)" after
 * the group's name, so that a section keeps its name in every dump.
 * Counter sections show the values a counter took; a section a source
 * declared as bytes (table_bytes_group()) shows them as kB and keeps its
 * bare name, as MXNet does for device memory. The
 * last line states how many records were dropped. Event sources may add
 * sections of their own (table_opts.extra) before that line, and the
 * metadata a program added (table_opts.meta) comes first, as a "Metadata"
 * section of key-value lines. The cells are cells.c's; the sources'
 * sections, given as rows, are written by table_rows.c, in every format
 * (JSON: under "Time" after the host sections; CSV: time_ms rows).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "internal.h"
#include "output.h"

int table_parse_opts(struct table_opts *o, const char *format,
		     const char *sort_by)
{
	static const char *const formats[] = {"table", "json", "csv"};
	static const char *const sorts[] = {"total", "avg",   "min",
					    "max",   "count", "self"};
	int f = -1, s = -1;

	if (!format) {
		f = o->format;
	}
	for (int i = 0; format && i < 3; i++) {
		if (strcmp(format, formats[i]) == 0) {
			f = i;
		}
	}
	/* PyTorch's table(sort_by=...) keys, as the matching column. */
	static const struct {
		const char *name;
		int sort;
	} torch[] = {
		{"cpu_time_total", TABLE_SORT_TOTAL},
		{"cuda_time_total", TABLE_SORT_TOTAL},
		{"device_time_total", TABLE_SORT_TOTAL},
		{"cpu_time", TABLE_SORT_AVG},
		{"cuda_time", TABLE_SORT_AVG},
		{"device_time", TABLE_SORT_AVG},
		{"self_cpu_time_total", TABLE_SORT_SELF},
		{"self_cuda_time_total", TABLE_SORT_SELF},
		{"self_device_time_total", TABLE_SORT_SELF},
	};
	if (!sort_by) {
		s = o->sort;
	}
	for (int i = 0; sort_by && i < 6; i++) {
		if (strcmp(sort_by, sorts[i]) == 0) {
			s = i;
		}
	}
	for (size_t i = 0; sort_by && i < sizeof(torch) / sizeof(*torch); i++) {
		if (strcmp(sort_by, torch[i].name) == 0) {
			s = torch[i].sort;
		}
	}
	if (f < 0 || s < 0) {
		return -EINVAL;
	}
	o->format = f;
	o->sort = s;
	return 0;
}

/* A section: rows of one group and class, with its title. */
struct section {
	char title[512];
	uint32_t group;
	int cls;
	int status;
	int64_t total;
	int64_t self;
	size_t first, count; /* range in the sorted row array */
};

/* The value a row is sorted by, for sort key key (enum table_sort). */
double table_sort_value(int key, uint64_t count, int64_t total, int64_t min,
			int64_t max)
{
	switch (key) {
	case TABLE_SORT_AVG:
		return (double)total / (double)count;
	case TABLE_SORT_MIN:
		return (double)min;
	case TABLE_SORT_MAX:
		return (double)max;
	case TABLE_SORT_COUNT:
		return (double)count;
	default:
		return (double)total;
	}
}

static double sort_key(const struct agg_row *r, int key)
{
	if (key == TABLE_SORT_SELF && r->cls == AGG_TIME) {
		return (double)r->self;
	}
	return table_sort_value(key, r->count, r->total, r->min, r->max);
}

/* A time row's share of its section's self time, in percent. */
static double pct(const struct section *s, const struct agg_row *r)
{
	return s->self ? 100.0 * (double)r->self / (double)s->self : 0.0;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct agg_row *a = pa, *b = pb;
	const struct table_opts *sort_opts = arg;

	if (a->group != b->group) {
		int c = strcmp(strtab_get(a->group), strtab_get(b->group));
		return c ? c : (a->group < b->group ? -1 : 1);
	}
	if (a->cls != b->cls) {
		return a->cls - b->cls;
	}
	double ka = sort_key(a, sort_opts->sort);
	double kb = sort_key(b, sort_opts->sort);
	if (ka != kb) {
		return (ka < kb) == !!sort_opts->ascending ? -1 : 1;
	}
	return strcmp(strtab_get(a->name), strtab_get(b->name));
}

static int cmp_sections(const void *pa, const void *pb)
{
	const struct section *a = pa, *b = pb;

	return strcmp(a->title, b->title);
}

/* The groups whose counters are bytes. Written and read by the thread
 * that writes the tables. */
static uint32_t bytes_groups[8];
static unsigned bytes_count;

void table_bytes_group(uint32_t group)
{
	for (unsigned i = 0; i < bytes_count; i++) {
		if (bytes_groups[i] == group) {
			return;
		}
	}
	if (bytes_count < sizeof(bytes_groups) / sizeof(*bytes_groups)) {
		bytes_groups[bytes_count++] = group;
	}
}

static int is_storage(const struct section *s)
{
	for (unsigned i = 0; i < bytes_count; i++) {
		if (bytes_groups[i] == s->group) {
			return 1;
		}
	}
	return 0;
}

int table_bytes_named(const char *name)
{
	for (unsigned i = 0; i < bytes_count; i++) {
		if (strcmp(strtab_get(bytes_groups[i]), name) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Groups sorted rows into sections and titles them. Returns the count. */
static size_t make_sections(struct agg_row *rows, size_t n,
			    struct section *secs)
{
	size_t ns = 0;

	for (size_t i = 0; i < n; i++) {
		struct agg_row *r = &rows[i];
		struct section *s = ns ? &secs[ns - 1] : NULL;
		if (!s || s->group != r->group || s->cls != r->cls) {
			s = &secs[ns++];
			memset(s, 0, sizeof(*s));
			s->group = r->group;
			s->cls = r->cls;
			s->first = i;
		}
		s->count++;
		s->total = agg_sat_add(s->total, r->total);
		s->self = agg_sat_add(s->self, r->self);
		s->status |= r->status;
	}
	for (size_t i = 0; i < ns; i++) {
		struct section *s = &secs[i];
		const char *g = strtab_get(s->group);
		const char *suffix = "";
		/* The same names whatever other rows the group has, so
		 * that --category and diff find them in every dump. */
		if (s->cls == AGG_COUNTER && !is_storage(s)) {
			suffix = " (counters)";
		} else if (s->cls == AGG_MARKER) {
			suffix = " (markers)";
		}
		snprintf(s->title, sizeof(s->title), "%s%s", *g ? g : "(none)",
			 suffix);
	}
	qsort(secs, ns, sizeof(*secs), cmp_sections);
	return ns;
}

/* The Name column's width for the first n rows of section s: MXNet's 30,
 * or wider to fit the longest name with one space after, so that long
 * names (C++ functions) keep the columns aligned. */
static int name_width(const struct section *s, const struct agg_row *rows,
		      size_t n)
{
	size_t w = CELLS_NAME_W;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(strtab_get(rows[s->first + i].name)) + 1;

		if (len > w) {
			w = len;
		}
	}
	return w > 4096 ? 4096 : (int)w;
}

/* Writes the "Total" row of a time section: every row of it, also those
 * --top left out (PyTorch's total_average). */
static void total_row(struct sbuf *b, const struct section *s,
		      const struct agg_row *rows, int w)
{
	uint64_t count = 0, errors = 0;
	int64_t min = 0, max = 0;

	for (size_t i = 0; i < s->count; i++) {
		const struct agg_row *r = &rows[s->first + i];
		if (i == 0 || r->min < min) {
			min = r->min;
		}
		if (i == 0 || r->max > max) {
			max = r->max;
		}
		count += r->count;
		errors += r->errors;
	}
	cells_name(b, "Total", w);
	sb_printf(b, "%*llu%*.4f%*.4f%*.4f%*.4f%*.4f%*.2f", CELLS_COUNT_W,
		  (unsigned long long)count, CELLS_COL_W, cells_ms(s->total),
		  CELLS_COL_W, cells_ms(min), CELLS_COL_W, cells_ms(max),
		  CELLS_COL_W, count ? cells_ms(s->total) / (double)count : 0.0,
		  CELLS_COL_W, cells_ms(s->self), CELLS_COL_W,
		  s->self ? 100.0 : 0.0);
	if (s->status) {
		sb_printf(b, "%*llu", CELLS_COL_W, (unsigned long long)errors);
	}
	sb_printf(b, "\n");
}

static void text_section(struct sbuf *b, const struct section *s,
			 const struct agg_row *rows, unsigned top)
{
	static const char *const time_cols[] = {
		"Time (ms)",	 "Min Time (ms)",  "Max Time (ms)",
		"Avg Time (ms)", "Self Time (ms)", "Time (%)",
		"Errors"};
	static const char *const counter_cols[] = {"Min Value", "Max Value",
						   "Avg Value"};
	static const char *const storage_cols[] = {
		"Min Use  (kB)", "Max Use  (kB)", "Avg Use  (kB)"};
	size_t n = top && top < s->count ? top : s->count;
	int w = name_width(s, rows, n);

	sb_printf(b, "%s\n=================\n", s->title);
	if (s->cls == AGG_TIME) {
		cells_header(b, time_cols, s->status ? 7 : 6, w);
	} else if (s->cls == AGG_COUNTER) {
		cells_header(b, is_storage(s) ? storage_cols : counter_cols, 3,
			     w);
	} else {
		cells_header(b, NULL, 0, w);
	}
	for (size_t i = 0; i < n; i++) {
		const struct agg_row *r = &rows[s->first + i];
		cells_name(b, strtab_get(r->name), w);
		sb_printf(b, "%*llu", CELLS_COUNT_W,
			  (unsigned long long)r->count);
		if (s->cls == AGG_TIME) {
			sb_printf(b, "%*.4f%*.4f%*.4f%*.4f%*.4f%*.2f",
				  CELLS_COL_W, cells_ms(r->total), CELLS_COL_W,
				  cells_ms(r->min), CELLS_COL_W,
				  cells_ms(r->max), CELLS_COL_W,
				  cells_ms(r->total) / (double)r->count,
				  CELLS_COL_W, cells_ms(r->self), CELLS_COL_W,
				  pct(s, r));
			if (s->status) {
				sb_printf(b, "%*llu", CELLS_COL_W,
					  (unsigned long long)r->errors);
			}
		} else if (s->cls == AGG_COUNTER) {
			double div = is_storage(s) ? 1000.0 : 1.0;
			sb_printf(b, "%*.4f%*.4f%*.4f", CELLS_COL_W,
				  (double)r->min / div, CELLS_COL_W,
				  (double)r->max / div, CELLS_COL_W,
				  (double)r->total / (double)r->count / div);
		}
		sb_printf(b, "\n");
	}
	if (s->cls == AGG_TIME) {
		total_row(b, s, rows, w);
	}
	sb_printf(b, "\n");
}

static void json_row(struct sbuf *b, const struct section *s,
		     const struct agg_row *r)
{
	sb_printf(b, "            ");
	cells_json_str(b, strtab_get(r->name));
	sb_printf(b, ": {\"Total Count\": %llu", (unsigned long long)r->count);
	if (s->cls == AGG_TIME) {
		sb_printf(b,
			  ", \"Total Time\": %.4f, \"Min Time\": %.4f, "
			  "\"Max Time\": %.4f, \"Avg Time\": %.4f, "
			  "\"Self Time\": %.4f, \"Time (%%)\": %.2f",
			  cells_ms(r->total), cells_ms(r->min),
			  cells_ms(r->max),
			  cells_ms(r->total) / (double)r->count,
			  cells_ms(r->self), pct(s, r));
		if (s->status) {
			sb_printf(b, ", \"Errors\": %llu",
				  (unsigned long long)r->errors);
		}
	} else if (s->cls == AGG_COUNTER) {
		double div = is_storage(s) ? 1000.0 : 1.0;
		const char *unit = is_storage(s) ? "Use" : "Value";
		sb_printf(b,
			  ", \"Min %s\": %.4f, \"Max %s\": %.4f, "
			  "\"Avg %s\": %.4f",
			  unit, (double)r->min / div, unit,
			  (double)r->max / div, unit,
			  (double)r->total / (double)r->count / div);
	}
	sb_printf(b, "}");
}

/* The sections given as rows, after the host sections: Steps (from the
 * step times steps, when there was a step; for one category, only when
 * it is "Steps") and the sources'. Returns first after them
 * (table_rows_run()). */
static int rows_sections(struct table_sink *k, struct sbuf *b,
			 const struct table_opts *o, int first,
			 const struct stepstat *steps)
{
	table_rows_begin(k, b, o, first);
	if (stepstat_count(steps) &&
	    (!o->category || !strcmp(o->category, "Steps"))) {
		table_steps(k, steps);
	}
	return table_rows_run(k);
}

static void json_tables(struct sbuf *b, const struct section *secs, size_t ns,
			const struct agg_row *rows, const struct table_opts *o,
			const struct stepstat *steps)
{
	static const char *const kinds[] = {"Time", "Counter", "Marker"};
	struct table_sink sink;

	sb_printf(b, "{\n    \"Unit\": {\"Time\": \"ms\", \"Memory\": \"kB\"}");
	for (int cls = 0; cls < 3; cls++) {
		sb_printf(b, ",\n    \"%s\": {", kinds[cls]);
		int first = 1;
		for (size_t i = 0; i < ns; i++) {
			const struct section *s = &secs[i];
			if (s->cls != cls) {
				continue;
			}
			sb_printf(b, "%s\n        ", first ? "" : ",");
			cells_json_str(b, s->title);
			sb_printf(b, ": {");
			size_t n =
				o->top && o->top < s->count ? o->top : s->count;
			for (size_t k = 0; k < n; k++) {
				sb_printf(b, "%s\n", k ? "," : "");
				json_row(b, s, &rows[s->first + k]);
			}
			sb_printf(b, "\n        }");
			first = 0;
		}
		if (cls == AGG_TIME) {
			first = rows_sections(&sink, b, o, first, steps);
		}
		sb_printf(b, "%s}", first ? "" : "\n    ");
	}
	for (int i = 0; i < sink.nnotes; i++) {
		sb_printf(b, ",\n    ");
		cells_json_str(b, sink.notes[i].label);
		sb_printf(b, ": %llu", (unsigned long long)sink.notes[i].count);
	}
	sb_printf(b, ",\n    \"Dropped Records\": %llu\n}\n",
		  (unsigned long long)o->dropped);
}

static void csv_tables(struct sbuf *b, const struct section *secs, size_t ns,
		       const struct agg_row *rows, const struct table_opts *o,
		       const struct stepstat *steps)
{
	static const char *const kinds[] = {"time_ms", "counter", "marker"};
	struct table_sink sink;

	sb_printf(b, "section,kind,name,count,total,min,max,avg,self,percent,"
		     "errors\n");
	for (size_t i = 0; i < ns; i++) {
		const struct section *s = &secs[i];
		size_t n = o->top && o->top < s->count ? o->top : s->count;
		for (size_t k = 0; k < n; k++) {
			const struct agg_row *r = &rows[s->first + k];
			double div = s->cls == AGG_TIME ? 1e6 : 1.0;
			cells_csv_str(b, s->title);
			sb_printf(b, ",%s,", kinds[s->cls]);
			cells_csv_str(b, strtab_get(r->name));
			sb_printf(b, ",%llu", (unsigned long long)r->count);
			if (s->cls == AGG_MARKER) {
				sb_printf(b, ",,,,,,,\n");
				continue;
			}
			sb_printf(b, ",%.6f,%.6f,%.6f,%.6f",
				  (double)r->total / div, (double)r->min / div,
				  (double)r->max / div,
				  (double)r->total / (double)r->count / div);
			if (s->cls == AGG_TIME) {
				sb_printf(b, ",%.6f,%.2f",
					  (double)r->self / div, pct(s, r));
			} else {
				sb_printf(b, ",,");
			}
			if (s->status) {
				sb_printf(b, ",%llu\n",
					  (unsigned long long)r->errors);
			} else {
				sb_printf(b, ",\n");
			}
		}
	}
	rows_sections(&sink, b, o, 1, steps);
}

/* s with control characters as \n, \r, \t or \xHH, so that a pair stays
 * on its line; malloc'd, NULL when out of memory. */
static char *meta_escape(const char *s)
{
	char *e = malloc(strlen(s) * 4 + 1), *q = e;

	for (; e && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n' || c == '\r' || c == '\t') {
			*q++ = '\\';
			*q++ = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20 || c == 0x7f) {
			q += sprintf(q, "\\x%02x", c);
		} else {
			*q++ = (char)c;
		}
	}
	if (e) {
		*q = 0;
	}
	return e;
}

/* Writes the Metadata section: one line per pair, the key in the name
 * column, control characters escaped. Nothing when meta is NULL. */
static void meta_section(struct sbuf *b, const char *const *meta)
{
	if (!meta || !meta[0]) {
		return;
	}
	sb_printf(b, "Metadata\n=================\n");
	for (size_t i = 0; meta[i] && meta[i + 1]; i += 2) {
		char *k = meta_escape(meta[i]), *v = meta_escape(meta[i + 1]);
		if (!k || !v) {
			b->err = 1;
		} else {
			cells_name(b, k, CELLS_NAME_W);
			sb_printf(b, "%s\n", v);
		}
		free(k);
		free(v);
	}
	sb_printf(b, "\n");
}

char *table_format(const struct agg *a, const struct table_opts *o)
{
	struct sbuf b = {0};
	size_t n = 0;
	struct agg_row *rows = agg_rows(a, &n);
	struct section *secs =
		rows ? malloc((n ? n : 1) * sizeof(*secs)) : NULL;

	if (!secs) {
		goto fail;
	}
	qsort_r(rows, n, sizeof(*rows), cmp_rows, (void *)o);
	size_t ns = make_sections(rows, n, secs);
	/* The step times make the Steps section (table_steps.c), after the
	 * host sections; the steps have no rows (agg_rows()). */
	const struct stepstat *steps = agg_steps(a);
	if (o->category) {
		size_t k = 0;
		for (size_t i = 0; i < ns; i++) {
			if (strcmp(secs[i].title, o->category) == 0 ||
			    strcmp(strtab_get(secs[i].group), o->category) ==
				    0) {
				secs[k++] = secs[i];
			}
		}
		ns = k;
	}
	if (o->format == TABLE_JSON) {
		json_tables(&b, secs, ns, rows, o, steps);
	} else if (o->format == TABLE_CSV) {
		csv_tables(&b, secs, ns, rows, o, steps);
	} else {
		sb_printf(&b, "Profile Statistics:\n    Note the difference "
			      "in units for different entries.\n");
		/* One category: that section alone. */
		if (!o->category || !strcmp(o->category, "Metadata")) {
			meta_section(&b, o->meta);
		}
		for (size_t i = 0; i < ns; i++) {
			text_section(&b, &secs[i], rows, o->top);
		}
		struct table_sink sink;
		rows_sections(&sink, &b, o, 1, steps);
		for (int i = 0; i < sink.nnotes; i++) {
			sb_printf(&b, "%s: %llu\n", sink.notes[i].label,
				  (unsigned long long)sink.notes[i].count);
		}
		sb_printf(&b, "Dropped records: %llu\n",
			  (unsigned long long)o->dropped);
	}
	if (b.err) {
		goto fail;
	}
	free(rows);
	free(secs);
	return b.p;
fail:
	free(rows);
	free(secs);
	free(b.p);
	errno = ENOMEM;
	return NULL;
}

/*
 * Writes the tables of a, with the sections extra->extra adds and the
 * metadata extra->meta (when extra is not NULL) and the count of dropped
 * records, to path (replaced atomically). Returns 0 or a negative errno,
 * and prints nothing. Shared by a dump and a journal's recovery.
 */
int table_write_file(const struct agg *a, uint64_t dropped,
		     const struct table_opts *extra, const char *path)
{
	struct table_opts opts = {.dropped = dropped};
	struct out *o = malloc(sizeof(*o));
	char *text;
	int rc;

	if (extra) {
		opts.extra = extra->extra;
		opts.meta = extra->meta;
		opts.whole_run = extra->whole_run;
	}
	text = table_format(a, &opts);
	if (!text || !o) {
		rc = -ENOMEM;
	} else if ((rc = out_open(o, path, 0)) == 0) {
		out_str(o, text);
		rc = out_commit(o);
	}
	free(text);
	free(o);
	return rc;
}
