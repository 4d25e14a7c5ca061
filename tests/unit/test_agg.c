/*
 * test_agg.c - the aggregates (collector/agg.c): count, total, min and max
 * per (section, name, class), as the tables show them.
 *
 * Group and name are plain numbers here: agg.c never looks them up.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

static void add(struct agg *a, uint32_t group, uint32_t name, uint16_t kind,
		uint8_t flags, int64_t value)
{
	struct agg_sample s = {.group = group,
			       .name = name,
			       .kind = kind,
			       .flags = flags,
			       .value = value};

	assert_int_equal(agg_add(a, &s), 0);
}

/* Returns the one row of (group, name, cls) in rows, failing if there is
 * not exactly one. */
static const struct agg_row *find(const struct agg_row *rows, size_t n,
				  uint32_t group, uint32_t name, int cls)
{
	const struct agg_row *found = NULL;

	for (size_t i = 0; i < n; i++) {
		if (rows[i].group == group && rows[i].name == name &&
		    rows[i].cls == cls) {
			assert_null(found);
			found = &rows[i];
		}
	}
	assert_non_null(found);
	return found;
}

static void assert_row(const struct agg_row *r, uint64_t count, int64_t total,
		       int64_t min, int64_t max)
{
	assert_int_equal(r->count, count);
	assert_int_equal(r->total, total);
	assert_int_equal(r->min, min);
	assert_int_equal(r->max, max);
}

static void test_agg_spans_keep_count_total_min_max(void **st)
{
	struct agg *a = agg_create();
	size_t n = 99;

	(void)st;
	assert_non_null(a);
	add(a, 1, 10, COLL_SPAN, 0, 99000);
	add(a, 1, 10, COLL_SPAN, 0, 237000);
	add(a, 1, 10, COLL_SPAN, 0, 5000);
	add(a, 1, 11, COLL_SPAN, 0, 175000);
	struct agg_row *rows = agg_rows(a, &n);
	assert_non_null(rows);
	assert_int_equal(n, 2);
	const struct agg_row *r = find(rows, n, 1, 10, AGG_TIME);
	assert_row(r, 3, 341000, 5000, 237000);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->errors, 0);
	assert_row(find(rows, n, 1, 11, AGG_TIME), 1, 175000, 175000, 175000);
	free(rows);
	agg_destroy(a);
}

/* agg_merge() adds rows: counts, totals, self and errors summed, the
 * extremes kept, rows only in one side copied. */
static void test_agg_merge_adds_rows(void **st)
{
	struct agg *a = agg_create(), *b = agg_create();
	size_t n = 99;

	(void)st;
	assert_non_null(a);
	assert_non_null(b);
	add(a, 1, 10, COLL_SPAN, 0, 5000);
	add(a, 1, 10, COLL_SPAN, COLL_FLAG_STATUS | COLL_FLAG_ERROR, 7000);
	add(a, 1, 12, COLL_COUNTER, 0, -4);
	add(b, 1, 10, COLL_SPAN, 0, 2000);
	add(b, 1, 10, COLL_SPAN, 0, 9000);
	add(b, 1, 11, COLL_INSTANT, 0, 0);
	add(b, 1, 12, COLL_COUNTER, 0, 6);
	assert_int_equal(agg_merge(a, b), 0);
	struct agg_row *rows = agg_rows(a, &n);
	assert_non_null(rows);
	assert_int_equal(n, 3);
	const struct agg_row *r = find(rows, n, 1, 10, AGG_TIME);
	assert_row(r, 4, 23000, 2000, 9000);
	assert_int_equal(r->self, 23000);
	assert_int_equal(r->errors, 1);
	assert_int_equal(r->status, 1);
	assert_row(find(rows, n, 1, 11, AGG_MARKER), 1, 0, 0, 0);
	assert_row(find(rows, n, 1, 12, AGG_COUNTER), 2, 2, -4, 6);
	free(rows);
	agg_destroy(a);
	agg_destroy(b);
}

static void test_agg_frames_aggregate_as_time(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 2, 20, COLL_FRAME, 0, 16000000);
	add(a, 2, 20, COLL_FRAME, 0, 17000000);
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].cls, AGG_TIME);
	assert_row(&rows[0], 2, 33000000, 16000000, 17000000);
	free(rows);
	agg_destroy(a);
}

static void test_agg_counters_aggregate_values(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 3, 30, COLL_COUNTER, 0, 10);
	add(a, 3, 30, COLL_COUNTER, 0, -5);
	add(a, 3, 30, COLL_COUNTER, 0, 30);
	add(a, 3, 30, COLL_COUNTER, 0, 0);
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].cls, AGG_COUNTER);
	assert_row(&rows[0], 4, 35, -5, 30);
	free(rows);
	agg_destroy(a);
}

static void test_agg_counter_starting_negative_keeps_true_max(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 3, 31, COLL_COUNTER, 0, -7);
	add(a, 3, 31, COLL_COUNTER, 0, -2);
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 1);
	assert_row(&rows[0], 2, -9, -7, -2);
	free(rows);
	agg_destroy(a);
}

static void test_agg_markers_are_counted_with_zero_time(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 4, 40, COLL_INSTANT, COLL_SCOPE_GLOBAL, 12345);
	add(a, 4, 40, COLL_INSTANT, COLL_SCOPE_THREAD, 999);
	add(a, 4, 40, COLL_INSTANT, COLL_SCOPE_PROCESS, 0);
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].cls, AGG_MARKER);
	assert_row(&rows[0], 3, 0, 0, 0);
	assert_int_equal(rows[0].status, 0);
	free(rows);
	agg_destroy(a);
}

static void test_agg_kinds_of_one_name_are_separate_rows(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 5, 50, COLL_SPAN, 0, 100);
	add(a, 5, 50, COLL_COUNTER, 0, 7);
	add(a, 5, 50, COLL_INSTANT, 0, 0);
	add(a, 6, 50, COLL_SPAN, 0, 200); /* another section */
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 4);
	assert_row(find(rows, n, 5, 50, AGG_TIME), 1, 100, 100, 100);
	assert_row(find(rows, n, 5, 50, AGG_COUNTER), 1, 7, 7, 7);
	assert_row(find(rows, n, 5, 50, AGG_MARKER), 1, 0, 0, 0);
	assert_row(find(rows, n, 6, 50, AGG_TIME), 1, 200, 200, 200);
	free(rows);
	agg_destroy(a);
}

static void test_agg_counts_status_checks_and_errors(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 7, 70, COLL_SPAN, COLL_FLAG_STATUS, 10);
	add(a, 7, 70, COLL_SPAN, COLL_FLAG_STATUS | COLL_FLAG_ERROR, 20);
	add(a, 7, 70, COLL_SPAN, COLL_FLAG_STATUS | COLL_FLAG_ERROR, 30);
	add(a, 7, 70, COLL_SPAN, 0, 40);
	add(a, 7, 71, COLL_SPAN, COLL_FLAG_STATUS, 5);
	add(a, 7, 72, COLL_SPAN, 0, 5);
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 3);
	const struct agg_row *r = find(rows, n, 7, 70, AGG_TIME);
	assert_row(r, 4, 100, 10, 40);
	assert_int_equal(r->status, 1);
	assert_int_equal(r->errors, 2);
	r = find(rows, n, 7, 71, AGG_TIME);
	assert_int_equal(r->status, 1);
	assert_int_equal(r->errors, 0);
	r = find(rows, n, 7, 72, AGG_TIME);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->errors, 0);
	free(rows);
	agg_destroy(a);
}

static void test_agg_reset_forgets_every_row(void **st)
{
	struct agg *a = agg_create();
	size_t n = 99;

	(void)st;
	for (uint32_t i = 0; i < 300; i++) {
		add(a, 8, i + 1, COLL_SPAN, COLL_FLAG_STATUS | COLL_FLAG_ERROR,
		    1000);
	}
	agg_reset(a);
	struct agg_row *rows = agg_rows(a, &n);
	assert_non_null(rows);
	assert_int_equal(n, 0);
	free(rows);
	/* A row added again starts from nothing. */
	add(a, 8, 1, COLL_SPAN, 0, 5);
	rows = agg_rows(a, &n);
	assert_int_equal(n, 1);
	assert_row(&rows[0], 1, 5, 5, 5);
	assert_int_equal(rows[0].status, 0);
	assert_int_equal(rows[0].errors, 0);
	free(rows);
	agg_destroy(a);
}

static void test_agg_grows_to_10000_rows(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;
	const uint32_t rows_wanted = 10000;

	(void)st;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < rows_wanted; i++) {
			add(a, 9 + i % 3, i + 1, COLL_SPAN, 0,
			    (int64_t)i * (pass + 1));
		}
	}
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, rows_wanted);
	char *seen = calloc(rows_wanted + 1, 1);
	assert_non_null(seen);
	for (size_t k = 0; k < n; k++) {
		const struct agg_row *r = &rows[k];
		uint32_t i = r->name - 1;
		assert_in_range(r->name, 1, rows_wanted);
		assert_int_equal(seen[r->name], 0);
		seen[r->name] = 1;
		assert_int_equal(r->group, 9 + i % 3);
		assert_row(r, 2, 3 * (int64_t)i, i, 2 * (int64_t)i);
	}
	free(seen);
	free(rows);
	agg_destroy(a);
}

static void test_agg_rows_of_empty_set_is_empty(void **st)
{
	struct agg *a = agg_create();
	size_t n = 42;

	(void)st;
	struct agg_row *rows = agg_rows(a, &n);
	assert_non_null(rows);
	assert_int_equal(n, 0);
	free(rows);
	agg_destroy(a);
	agg_destroy(NULL);
}

static void test_agg_totals_saturate_instead_of_wrapping(void **st)
{
	struct agg *a = agg_create();
	size_t n = 0;

	(void)st;
	add(a, 1, 1, COLL_COUNTER, 0, INT64_MAX);
	add(a, 1, 1, COLL_COUNTER, 0, INT64_MAX);
	add(a, 1, 2, COLL_COUNTER, 0, INT64_MIN);
	add(a, 1, 2, COLL_COUNTER, 0, -1);
	add(a, 1, 3, COLL_SPAN, 0, INT64_MAX - 5);
	add(a, 1, 3, COLL_SPAN, 0, 10);
	add(a, 1, 3, COLL_SPAN, 0, -20); /* back below the limit */
	struct agg_row *rows = agg_rows(a, &n);
	assert_int_equal(n, 3);
	assert_row(find(rows, n, 1, 1, AGG_COUNTER), 2, INT64_MAX, INT64_MAX,
		   INT64_MAX);
	assert_row(find(rows, n, 1, 2, AGG_COUNTER), 2, INT64_MIN, INT64_MIN,
		   -1);
	assert_row(find(rows, n, 1, 3, AGG_TIME), 3, INT64_MAX - 20, -20,
		   INT64_MAX - 5);
	free(rows);
	agg_destroy(a);
	assert_int_equal(agg_sat_add(INT64_MIN, INT64_MIN), INT64_MIN);
	assert_int_equal(agg_sat_add(INT64_MAX, INT64_MIN), -1);
	assert_int_equal(agg_sat_add(-7, 3), -4);
}

#define MS 1000000LL

/* A slice of thread tid from t0 to t0 + dur ms, as the drain adds it. */
static void slice(struct agg *a, uint64_t tid, uint32_t name, int64_t t0,
		  int64_t dur)
{
	struct agg_sample s = {
		.group = 1, .name = name, .kind = COLL_SPAN, .value = dur * MS};

	assert_int_equal(agg_add_at(a, tid, (uint64_t)(t0 * MS), &s), 0);
}

/* outer (10 ms) holds a (3 ms) and b (4 ms); a holds c (1 ms). Slices come
 * in the order they end: c, a, b, outer. outer's self time is 10 - 3 - 4
 * = 3 ms (c is a's child, not outer's), a's 2 ms, b's 4, c's 1; the
 * selves sum to outer's time. */
static void test_agg_self_time_subtracts_direct_children(void **st)
{
	struct agg *a = agg_create();
	struct agg_row *rows;
	size_t n;

	(void)st;
	slice(a, 7, 3, 1, 1);  /* c: 1..2      */
	slice(a, 7, 1, 1, 3);  /* a: 1..4      */
	slice(a, 7, 2, 5, 4);  /* b: 5..9      */
	slice(a, 7, 0, 0, 10); /* outer: 0..10 */
	slice(a, 7, 0, 20, 2); /* outer again, no children */
	rows = agg_rows(a, &n);
	assert_int_equal(n, 4);
	assert_int_equal(find(rows, n, 1, 0, AGG_TIME)->total, 12 * MS);
	assert_int_equal(find(rows, n, 1, 0, AGG_TIME)->self, 5 * MS);
	assert_int_equal(find(rows, n, 1, 1, AGG_TIME)->self, 2 * MS);
	assert_int_equal(find(rows, n, 1, 2, AGG_TIME)->self, 4 * MS);
	assert_int_equal(find(rows, n, 1, 3, AGG_TIME)->self, 1 * MS);
	free(rows);
	agg_destroy(a);
}

/* A slice on another thread inside outer's time is not its child; a
 * sample added without a thread keeps its whole time as self time. */
static void test_agg_self_time_keeps_threads_apart(void **st)
{
	struct agg *a = agg_create();
	struct agg_row *rows;
	size_t n;

	(void)st;
	slice(a, 8, 1, 2, 3);
	slice(a, 7, 0, 0, 10);
	add(a, 1, 2, COLL_SPAN, 0, 6 * MS);
	rows = agg_rows(a, &n);
	assert_int_equal(find(rows, n, 1, 0, AGG_TIME)->self, 10 * MS);
	assert_int_equal(find(rows, n, 1, 1, AGG_TIME)->self, 3 * MS);
	assert_int_equal(find(rows, n, 1, 2, AGG_TIME)->self, 6 * MS);
	free(rows);
	agg_destroy(a);
}

/* A slice of section group, as the drain adds it (group and name are
 * string ids, so that nest.c can tell PyTorch's sections). */
static void gslice(struct agg *a, uint32_t group, uint32_t name, int64_t t0,
		   int64_t dur)
{
	struct agg_sample s = {.group = group,
			       .name = name,
			       .kind = COLL_SPAN,
			       .value = dur * MS};

	assert_int_equal(agg_add_at(a, 7, (uint64_t)(t0 * MS), &s), 0);
}

/* PyTorch's self time: aten::addmm (0..10 ms) holds sgemm_ (1..9, a
 * library call) and aten::empty (9..10): its self time excludes only the
 * operator (9 ms), sgemm_ keeps its own 8 ms; a library call (20..30)
 * holding an operator (21..23) still excludes it. */
static void test_agg_torch_self_time_keeps_library_calls(void **st)
{
	struct agg *a = agg_create();
	uint32_t aten = strtab_intern("aten"), lib = strtab_intern("C API");
	uint32_t addmm = strtab_intern("aten::addmm"),
		 empty = strtab_intern("aten::empty"),
		 sgemm = strtab_intern("sgemm_");
	struct agg_row *rows;
	size_t n;

	(void)st;
	gslice(a, lib, sgemm, 1, 8);
	gslice(a, aten, empty, 9, 1);
	gslice(a, aten, addmm, 0, 10);
	gslice(a, aten, empty, 21, 2);
	gslice(a, lib, sgemm, 20, 10);
	rows = agg_rows(a, &n);
	assert_int_equal(n, 3);
	assert_int_equal(find(rows, n, aten, addmm, AGG_TIME)->self, 9 * MS);
	assert_int_equal(find(rows, n, aten, empty, AGG_TIME)->self, 3 * MS);
	assert_int_equal(find(rows, n, lib, sgemm, AGG_TIME)->self, 16 * MS);
	free(rows);
	agg_destroy(a);
}

/* PyTorch's folding: aten::div_ (0..10) whose only PyTorch child is
 * aten::div_ (1..9, holding aten::mul 2..3) counts once, with self time
 * 10 - 1 = 9 ms; a div_ with two children (20..30: div_ 21..22 and mul
 * 23..24) folds nothing; a row whose one sample is folded away is not
 * shown (aten::sum inside aten::sum). */
static void test_agg_torch_folds_only_child_of_same_name(void **st)
{
	struct agg *a = agg_create();
	uint32_t aten = strtab_intern("aten");
	uint32_t div = strtab_intern("aten::div_"),
		 mul = strtab_intern("aten::mul"),
		 sum = strtab_intern("aten::sum"),
		 ann = strtab_intern("torch annotations"),
		 blk = strtab_intern("my_block");
	struct agg_row *rows;
	size_t n;

	(void)st;
	gslice(a, aten, mul, 2, 1);
	gslice(a, aten, div, 1, 8);
	gslice(a, aten, div, 0, 10);
	gslice(a, aten, div, 21, 1);
	gslice(a, aten, mul, 23, 1);
	gslice(a, aten, div, 20, 10);
	gslice(a, ann, sum, 41, 1);
	gslice(a, ann, blk, 40, 5);
	rows = agg_rows(a, &n);
	assert_int_equal(n, 4);
	const struct agg_row *r = find(rows, n, aten, div, AGG_TIME);
	assert_int_equal(r->count, 3);
	assert_int_equal(r->total, 21 * MS);
	assert_int_equal(r->self, (9 + 1 + 8) * MS);
	assert_int_equal(find(rows, n, aten, mul, AGG_TIME)->count, 2);
	free(rows);
	agg_destroy(a);

	a = agg_create();
	gslice(a, aten, sum, 1, 1);
	gslice(a, aten, sum, 0, 3);
	rows = agg_rows(a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].count, 1);
	assert_int_equal(rows[0].self, 3 * MS);
	free(rows);
	agg_destroy(a);
}

static struct coll_rec rec_of(uint16_t kind, uint32_t name, uint64_t t0,
			      uint64_t t1)
{
	return (struct coll_rec){
		.t0 = t0, .t1 = t1, .name = name, .group = 1, .kind = kind};
}

/*
 * The drain's path, agg_add_recs_on(), gives the rows that adding the same
 * records one by one gives (agg_add_rec_on()), across its batches of 256.
 * 100 rounds of a counter, a marker, a frame a holding span c, and a span
 * b, all inside one outer span that ends last; then a span whose duration
 * reads as negative. outer's self time is its 100200 ns less its direct
 * children a and b (100 x (20 + 40) ns), a's is 100 x (20 - 5) ns.
 */
static void test_agg_batch_matches_one_by_one(void **st)
{
	struct coll_rec recs[502];
	size_t n = 0;

	(void)st;
	for (uint64_t k = 0; k < 100; k++) {
		uint64_t base = 1000 * k + 100;
		recs[n++] = rec_of(COLL_COUNTER, 5, base, k);
		recs[n++] = rec_of(COLL_INSTANT, 6, base + 1, 0);
		recs[n++] = rec_of(COLL_SPAN, 3, base + 10, 5);	 /* c */
		recs[n++] = rec_of(COLL_FRAME, 1, base + 5, 20); /* a */
		recs[n++] = rec_of(COLL_SPAN, 2, base + 30, 40); /* b */
	}
	recs[n++] = rec_of(COLL_SPAN, 0, 0, 100200); /* outer */
	recs[n++] = rec_of(COLL_SPAN, 4, 200000, UINT64_MAX - 5);

	struct agg *batch = agg_create(), *one = agg_create();
	assert_int_equal(agg_add_recs_on(batch, 7, recs, n), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(agg_add_rec_on(one, 7, &recs[i]), 0);
	}
	size_t nb, no;
	struct agg_row *rb = agg_rows(batch, &nb), *ro = agg_rows(one, &no);
	assert_int_equal(nb, 7);
	assert_int_equal(no, nb);
	for (size_t i = 0; i < nb; i++) {
		const struct agg_row *o =
			find(ro, no, rb[i].group, rb[i].name, rb[i].cls);
		assert_row(&rb[i], o->count, o->total, o->min, o->max);
		assert_int_equal(rb[i].self, o->self);
	}
	assert_int_equal(find(rb, nb, 1, 0, AGG_TIME)->self, 94200);
	assert_int_equal(find(rb, nb, 1, 1, AGG_TIME)->self, 1500);
	assert_int_equal(find(rb, nb, 1, 2, AGG_TIME)->self, 4000);
	assert_int_equal(find(rb, nb, 1, 3, AGG_TIME)->self, 500);
	assert_row(find(rb, nb, 1, 5, AGG_COUNTER), 100, 4950, 0, 99);
	assert_int_equal(find(rb, nb, 1, 6, AGG_MARKER)->count, 100);
	assert_int_equal(find(rb, nb, 1, 4, AGG_TIME)->self, 0);
	free(rb);
	free(ro);
	agg_destroy(batch);
	agg_destroy(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agg_spans_keep_count_total_min_max),
		cmocka_unit_test(test_agg_merge_adds_rows),
		cmocka_unit_test(test_agg_frames_aggregate_as_time),
		cmocka_unit_test(test_agg_counters_aggregate_values),
		cmocka_unit_test(
			test_agg_counter_starting_negative_keeps_true_max),
		cmocka_unit_test(test_agg_markers_are_counted_with_zero_time),
		cmocka_unit_test(test_agg_kinds_of_one_name_are_separate_rows),
		cmocka_unit_test(test_agg_counts_status_checks_and_errors),
		cmocka_unit_test(test_agg_reset_forgets_every_row),
		cmocka_unit_test(test_agg_grows_to_10000_rows),
		cmocka_unit_test(test_agg_rows_of_empty_set_is_empty),
		cmocka_unit_test(test_agg_totals_saturate_instead_of_wrapping),
		cmocka_unit_test(test_agg_self_time_subtracts_direct_children),
		cmocka_unit_test(test_agg_self_time_keeps_threads_apart),
		cmocka_unit_test(test_agg_torch_self_time_keeps_library_calls),
		cmocka_unit_test(test_agg_torch_folds_only_child_of_same_name),
		cmocka_unit_test(test_agg_batch_matches_one_by_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
