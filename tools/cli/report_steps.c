/*
 * report_steps.c - mxprof report --steps LIST: the tables of some steps
 * of a trace only, as the library's step window (MXPROF_STEPS=list:LIST)
 * would have given them.
 *
 * A first pass over the file finds the slices "ProfilerStep#N" (cat
 * user_annotation) whose N is in the list, and notes their intervals.
 * Then, as the events are aggregated, a step's own slice is kept when its
 * N is in the list, and any other event when it began inside one of
 * those intervals (on any thread or device: a step is a span of time, as
 * the library's window is).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define STEP_PREFIX "ProfilerStep#"

struct report_steps {
	struct coll_steps sel;
	struct rs_span {
		int64_t t0, t1;
		uint64_t n;
	} * s;
	size_t n, cap;
	int failed;
	char held[512]; /* the steps found, as "3-5,9" */
};

struct report_steps *report_steps_create(const char *list)
{
	struct report_steps *rs = calloc(1, sizeof(*rs));

	if (rs && coll_steps_parse_list(list, &rs->sel) < 0) {
		free(rs);
		errno = EINVAL;
		return NULL;
	}
	return rs;
}

void report_steps_destroy(struct report_steps *rs)
{
	if (rs) {
		free(rs->s);
		free(rs);
	}
}

/* The N of a step's slice, or -1 when ev is not one. */
static int64_t step_number(const struct trace_event *ev)
{
	size_t k = sizeof(STEP_PREFIX) - 1;
	char *end;

	if (ev->ph != 'X' || strcmp(ev->cat, "user_annotation") != 0 ||
	    strncmp(ev->name, STEP_PREFIX, k) != 0 || ev->name[k] < '0' ||
	    ev->name[k] > '9') {
		return -1;
	}
	unsigned long long n = strtoull(ev->name + k, &end, 10);
	return *end || n > INT64_MAX ? -1 : (int64_t)n;
}

static int scan_event(const struct trace_event *ev, void *opaque)
{
	struct report_steps *rs = opaque;
	int64_t n = step_number(ev);

	if (n < 0 || !coll_steps_keeps(&rs->sel, (uint64_t)n) || !ev->has_ts) {
		return 0;
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		void *p = realloc(rs->s, cap * sizeof(*rs->s));
		if (!p) {
			rs->failed = 1;
			return -ENOMEM;
		}
		rs->s = p;
		rs->cap = cap;
	}
	rs->s[rs->n].t0 = ev->ts_ns;
	rs->s[rs->n].t1 = ev->ts_ns + (ev->has_dur ? ev->dur_ns : 0);
	rs->s[rs->n++].n = (uint64_t)n;
	return 0;
}

static int cmp_t0(const void *pa, const void *pb)
{
	const struct rs_span *a = pa, *b = pb;

	return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

static int cmp_n(const void *pa, const void *pb)
{
	const struct rs_span *a = pa, *b = pb;

	return a->n < b->n ? -1 : a->n > b->n;
}

/* rs->held: the numbers of the steps found, as ranges. */
static void held_text(struct report_steps *rs)
{
	size_t at = 0;

	rs->held[0] = 0;
	qsort(rs->s, rs->n, sizeof(*rs->s), cmp_n);
	for (size_t i = 0; i < rs->n;) {
		size_t j = i;
		while (j + 1 < rs->n && rs->s[j + 1].n <= rs->s[j].n + 1) {
			j++;
		}
		char one[48];
		if (rs->s[i].n == rs->s[j].n) {
			snprintf(one, sizeof(one), "%s%" PRIu64, at ? "," : "",
				 rs->s[i].n);
		} else {
			snprintf(one, sizeof(one), "%s%" PRIu64 "-%" PRIu64,
				 at ? "," : "", rs->s[i].n, rs->s[j].n);
		}
		if (at + strlen(one) + 5 > sizeof(rs->held)) {
			strcpy(rs->held + at, ",...");
			break;
		}
		strcpy(rs->held + at, one);
		at += strlen(one);
		i = j + 1;
	}
	qsort(rs->s, rs->n, sizeof(*rs->s), cmp_t0);
}

int report_steps_scan(struct report_steps *rs, const char *path)
{
	struct trace_meta *m = malloc(sizeof(*m));
	uint64_t at;
	enum trace_status st;

	rs->n = 0;
	if (!m) {
		util_err("%s: out of memory", path);
		return -1;
	}
	st = trace_read_file(path, scan_event, rs, m, &at);
	free(m);
	if (rs->failed) {
		util_err("%s: out of memory for the steps", path);
		return -1;
	}
	if (st == TRACE_BAD) {
		return -1;
	}
	if (rs->n == 0) {
		util_err("%s: none of the steps asked for (--steps) is in it",
			 path);
		return -1;
	}
	held_text(rs);
	return 0;
}

int report_steps_keep(const struct report_steps *rs,
		      const struct trace_event *ev)
{
	int64_t n = step_number(ev);

	if (n >= 0) {
		return coll_steps_keeps(&rs->sel, (uint64_t)n);
	}
	if (!ev->has_ts) {
		return 1;
	}
	/* The last interval that starts at or before ts. */
	size_t lo = 0, hi = rs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rs->s[mid].t0 <= ev->ts_ns) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo > 0 && ev->ts_ns < rs->s[lo - 1].t1;
}

const char *report_steps_held(const struct report_steps *rs)
{
	return rs->held;
}
