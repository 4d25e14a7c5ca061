/*
 * tables.c - the GPU tables: kernels (with the median), copies and sets
 * (with bytes and bandwidth), CUDA API calls that no hook showed, and the
 * GPU time attributed to each launching API and each enclosing host range
 * by the latest dump's linking. Given to the table writer as rows
 * (table_section(), source.h), which puts them after the host sections in
 * every format.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* The key of a step's host range: STEP_KEY | the step's number (string
 * ids stay below 2^31). */
#define STEP_KEY ((uint64_t)1 << 63)

struct kv {
	uint64_t key; /* string id, or (group << 32 | name), or STEP_KEY | N */
	int64_t v;    /* ns */
	uint64_t bytes;
};

struct grow {
	uint64_t key;
	uint64_t count;
	int64_t total, min, max, median;
	uint64_t bytes;
};

static int cmp_kv(const void *pa, const void *pb)
{
	const struct kv *a = pa, *b = pb;

	if (a->key != b->key) {
		return a->key < b->key ? -1 : 1;
	}
	return a->v < b->v ? -1 : a->v > b->v;
}

static int sort_key_g;
static int sort_asc_g;

static double gkey(const struct grow *r)
{
	return table_sort_value(sort_key_g, r->count, r->total, r->min, r->max);
}

static int cmp_grow(const void *pa, const void *pb)
{
	const struct grow *a = pa, *b = pb;
	double ka = gkey(a), kb = gkey(b);

	if (ka != kb) {
		return (ka < kb) == !!sort_asc_g ? -1 : 1;
	}
	return a->key < b->key ? -1 : a->key > b->key;
}

/* Groups sorted samples into rows (count, total, min, max, median). */
static size_t group_rows(struct kv *v, size_t n, struct grow *rows)
{
	size_t nr = 0;

	qsort(v, n, sizeof(*v), cmp_kv);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct grow *r = &rows[nr++];
		memset(r, 0, sizeof(*r));
		r->key = v[i].key;
		r->min = v[i].v;
		for (; j < n && v[j].key == v[i].key; j++) {
			r->count++;
			r->total += v[j].v;
			r->bytes += v[j].bytes;
			r->max = v[j].v;
		}
		size_t m = i + (j - i) / 2;
		r->median = (j - i) % 2 ? v[m].v : (v[m - 1].v + v[m].v) / 2;
		i = j;
	}
	qsort(rows, nr, sizeof(*rows), cmp_grow);
	return nr;
}

static double msf(int64_t ns)
{
	return (double)ns / 1e6;
}

enum { SEC_TIME, SEC_KERNEL, SEC_BYTES, SEC_GPUTIME };

/* The columns after the time columns, by section type. */
static const struct table_col kernel_cols[] = {
	{"Median Time (ms)", "Median Time", 4, 0},
	{"Time (%)", "Time (%)", 2, 1},
};
static const struct table_col bytes_cols[] = {
	{"Total (kB)", "Total (kB)", 4, 0},
	{"Bandwidth (GB/s)", "Bandwidth (GB/s)", 4, 0},
};
static const struct table_col gputime_cols[] = {
	{"GPU Time (%)", "GPU Time (%)", 2, 1},
};

/* Gives the section of the n samples of v as rows (the first top, 0:
 * all) to the table writer: nothing when there are none. */
static void tsection(struct table_sink *k, const char *title, int type,
		     struct kv *v, size_t n,
		     const char *(*label)(uint64_t key, char *buf, size_t len))
{
	struct grow *rows = n ? malloc(n * sizeof(*rows)) : NULL;
	struct table_section sec = {.title = title};
	int64_t all = 0;

	if (!rows) {
		return;
	}
	size_t nr = group_rows(v, n, rows);
	for (size_t i = 0; i < nr; i++) {
		all += rows[i].total;
	}
	if (type == SEC_KERNEL) {
		sec.cols = kernel_cols;
		sec.ncols = 2;
	} else if (type == SEC_BYTES) {
		sec.cols = bytes_cols;
		sec.ncols = 2;
	} else if (type == SEC_GPUTIME) {
		sec.total = "GPU Time (ms)";
		sec.total_key = "GPU Time";
		sec.cols = gputime_cols;
		sec.ncols = 1;
	}
	table_section(k, &sec);
	for (size_t i = 0; i < nr; i++) {
		const struct grow *r = &rows[i];
		char buf[512];
		double pct = all ? 100.0 * (double)r->total / (double)all : 0;
		struct table_row row = {.name = label(r->key, buf, sizeof(buf)),
					.count = r->count,
					.total = r->total,
					.min = r->min,
					.max = r->max};
		if (type == SEC_KERNEL) {
			row.cols[0] = msf(r->median);
			row.cols[1] = pct;
		} else if (type == SEC_BYTES) {
			row.cols[0] = (double)r->bytes / 1000.0;
			row.cols[1] =
				r->total ? (double)r->bytes / (double)r->total
					 : 0.0;
		} else if (type == SEC_GPUTIME) {
			row.cols[0] = pct;
		}
		table_row(k, &row);
	}
	free(rows);
}

static const char *label_str(uint64_t key, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strtab_get((uint32_t)key));
	return buf;
}

static const char *label_range(uint64_t key, char *buf, size_t len)
{
	if (key & STEP_KEY) {
		snprintf(buf, len, "%s: %s#%llu", STEPS_GROUP, STEP_NAME,
			 (unsigned long long)(uint32_t)key);
		return buf;
	}
	const char *g = strtab_get((uint32_t)(key >> 32));

	snprintf(buf, len, "%s%s%s", g, *g ? ": " : "",
		 strtab_get((uint32_t)key));
	return buf;
}

/* The first record the tables count: store_tables_from(), or 0 for the
 * whole run (table_opts.whole_run). Set by tables_write(). */
static size_t tables_first;

/* Fills v with the durations of the records the tables count (from
 * tables_first to n) keyed by what key() says; returns how many. */
static size_t collect(struct kv *v, size_t n, int want,
		      uint64_t (*key)(const struct gpu_rec *r))
{
	size_t k = 0;

	for (size_t i = tables_first; i < n; i++) {
		const struct gpu_rec *r = store_at(i);
		int match = want < 0 ? gpu_is_device_work(r) : r->kind == want;
		if (want == GPU_RUNTIME) {
			match = gpu_is_api(r) && !r->absorbed;
		}
		if (!match) {
			continue;
		}
		uint64_t kk = key(r);
		if (kk == UINT64_MAX) {
			continue;
		}
		v[k].key = kk;
		v[k].v = r->end > r->start ? (int64_t)(r->end - r->start) : 0;
		v[k].bytes = r->bytes;
		k++;
	}
	return k;
}

static uint64_t key_name(const struct gpu_rec *r)
{
	return r->name;
}

/* API names come without version suffixes from the source. */
static uint64_t key_api_base(const struct gpu_rec *r)
{
	return r->name;
}

/* The API that launched r, by base name; only records the last dump
 * linked. */
static uint64_t key_launch_api(const struct gpu_rec *r)
{
	const struct gpu_rec *a =
		r->correlation ? link_api_for(r->correlation) : NULL;

	return a ? a->name : UINT64_MAX;
}

static uint64_t key_host_range(const struct gpu_rec *r)
{
	const struct gpu_rec *a =
		r->correlation ? link_api_for(r->correlation) : NULL;

	const struct coll_rec *h = a ? link_range(a->ext) : NULL;

	if (!h) {
		return UINT64_MAX;
	}
	/* A step's record (source.h) is one range per step, by its number. */
	if (h->kind == COLL_SPAN && !strcmp(strtab_get(h->name), STEP_NAME) &&
	    !strcmp(strtab_get(h->group), STEPS_GROUP)) {
		return STEP_KEY | h->arg;
	}
	return (uint64_t)h->group << 32 | h->name;
}

/* The call site of the launch of r, with r's name: "<name> @ <site>"; only
 * launches with a stack (MXPROF_STACKS): the hook's slice's, or the one
 * CUPTI's callback took. */
static uint64_t key_call_site(const struct gpu_rec *r)
{
	const struct gpu_rec *a =
		r->correlation ? link_api_for(r->correlation) : NULL;

	uint32_t site = !a ? 0 : a->site ? a->site : coll_stack_site(a->stack);

	if (!site) {
		return UINT64_MAX;
	}
	return (uint64_t)site << 32 | r->name;
}

static const char *label_site(uint64_t key, char *buf, size_t len)
{
	snprintf(buf, len, "%s @ %s", strtab_get((uint32_t)key),
		 strtab_get((uint32_t)(key >> 32)));
	return buf;
}

/*
 * Gives the GPU sections to the table writer as rows (see struct
 * coll_source), which formats them in every format: kernels, copies,
 * sets, API calls no hook showed, GPU time by launching API, by host
 * range and by call site (as of the latest dump), and a note with the
 * GPU records lost, when there were any. Nothing when there is no GPU
 * record. Can't fail (memory runs out: the sections are left out).
 */
void tables_write(struct table_sink *t, const struct table_opts *o)
{
	size_t n = store_count();

	tables_first = o->whole_run ? 0 : store_tables_from();
	if (n <= tables_first) {
		return;
	}
	struct kv *v = malloc(n * sizeof(*v));
	if (!v) {
		return;
	}
	sort_key_g = o->sort;
	sort_asc_g = o->ascending;
	size_t k = collect(v, n, GPU_KERNEL, key_name);
	tsection(t, "CUDA GPU Kernels", SEC_KERNEL, v, k, label_str);
	k = collect(v, n, GPU_MEMCPY, key_name);
	tsection(t, "CUDA GPU Memcpy", SEC_BYTES, v, k, label_str);
	k = collect(v, n, GPU_MEMSET, key_name);
	tsection(t, "CUDA GPU Memset", SEC_BYTES, v, k, label_str);
	k = collect(v, n, GPU_RUNTIME, key_api_base);
	tsection(t, "CUDA API (CUPTI)", SEC_TIME, v, k, label_str);
	size_t linked = link_count();
	if (linked) {
		size_t lim = linked < n ? linked : n;
		k = collect(v, lim, -1, key_launch_api);
		tsection(t, "GPU Time by API", SEC_GPUTIME, v, k, label_str);
		k = collect(v, lim, -1, key_host_range);
		tsection(t, "GPU Time by Host Range", SEC_GPUTIME, v, k,
			 label_range);
		k = collect(v, lim, -1, key_call_site);
		tsection(t, "GPU Time by Call Site", SEC_GPUTIME, v, k,
			 label_site);
	}
	if (store_dropped()) {
		table_note(t, "Dropped GPU records", store_dropped());
	}
	free(v);
}
