/*
 * test_flight.c - flight mode's window in memory (collector/flight.c):
 * the window of the newest steps, a slow step's window ending with it,
 * records drained out of time order across threads, and the memory
 * bound dropping whole segments while what is written stays whole and
 * the newest. The steps mode reads no clock: every figure is exact.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

#define SPANS 5 /* spans a step holds, besides its own record */

/* What a journal holds: records, their earliest start, the steps. */
struct seen {
	uint64_t recs, min_t0, max_t0;
	uint64_t steps; /* records named 0 (the steps') */
};

static void on_recs(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct seen *s = ctx;

	(void)tid;
	for (size_t i = 0; i < n; i++) {
		s->recs++;
		s->min_t0 = r[i].t0 < s->min_t0 ? r[i].t0 : s->min_t0;
		s->max_t0 = r[i].t0 > s->max_t0 ? r[i].t0 : s->max_t0;
		s->steps += r[i].name == 0;
	}
}

/* Fills a journal with window w and reads it back. */
static struct seen fill(const struct flight_window *w)
{
	static const struct journal_ops ops = {.recs = on_recs};
	char path[] = "/tmp/mxprof-test-flight-XXXXXX";
	char jpath[64];
	struct journal *j = calloc(1, sizeof(*j));
	struct journal_header h;
	struct seen s = {.min_t0 = UINT64_MAX};
	int fd = mkstemp(path);

	assert_non_null(j);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	snprintf(jpath, sizeof(jpath), "%s.journal", path);
	assert_int_equal(journal_open(j, jpath, (int)getpid()), 0);
	flight_fill(j, w);
	assert_int_equal(journal_flush(j), 0);
	assert_int_equal(journal_read(jpath, &ops, &s, &h), 0);
	journal_close(j, 1);
	free(j);
	return s;
}

/* Step k of thread tid: SPANS spans from k * 1000 + 10 on (their names
 * 1..SPANS), then the step's own record (name 0) from k * 1000 to
 * k * 1000 + 900, drained in the order they ended. */
static void step(int tid, uint64_t k)
{
	struct coll_rec r[SPANS + 1];

	memset(r, 0, sizeof(r));
	for (int i = 0; i < SPANS; i++) {
		r[i].t0 = k * 1000 + 10 + (uint64_t)i * 100;
		r[i].t1 = 50;
		r[i].name = (uint32_t)i + 1;
		r[i].kind = COLL_SPAN;
	}
	r[SPANS].t0 = k * 1000;
	r[SPANS].t1 = 900;
	r[SPANS].kind = COLL_SPAN;
	flight_recs(tid, r, SPANS + 1);
	flight_note_step(k, k * 1000, k * 1000 + 900);
}

static void setup_steps(uint64_t n, uint64_t mb)
{
	struct coll_config c = {.flight_mode = COLL_FLIGHT_STEPS,
				.flight_n = n,
				.flight_bytes = mb << 20};

	assert_int_equal(flight_setup(&c), 0);
}

static void test_flight_keeps_the_newest_steps(void **st)
{
	struct flight_window w;

	(void)st;
	setup_steps(3, 256);
	for (uint64_t k = 0; k < 10; k++) {
		step(7, k);
	}
	flight_window(&w, UINT64_MAX, UINT64_MAX);
	assert_int_equal(w.start, 7000);
	assert_int_equal(w.step_lo, 7);
	assert_int_equal(w.step_hi, 9);
	assert_int_equal(w.nsteps, 3);
	assert_int_equal(w.cut, 0);
	struct seen s = fill(&w);
	assert_int_equal(s.recs, 3 * (SPANS + 1));
	assert_int_equal(s.steps, 3);
	assert_int_equal(s.min_t0, 7000);
	flight_reset();
}

static void test_flight_window_ends_with_a_slow_step(void **st)
{
	struct flight_window w;

	(void)st;
	setup_steps(3, 256);
	for (uint64_t k = 0; k < 10; k++) {
		step(7, k);
	}
	/* Step 5 was slow; steps 6 to 9 were drained before its file. */
	flight_window(&w, 5900, 5);
	assert_int_equal(w.start, 3000);
	assert_int_equal(w.step_lo, 3);
	assert_int_equal(w.step_hi, 5);
	struct seen s = fill(&w);
	assert_int_equal(s.recs, 3 * (SPANS + 1));
	assert_int_equal(s.min_t0, 3000);
	assert_int_equal(s.max_t0, 5000 + 10 + (SPANS - 1) * 100);
	/* Fewer steps than the window: everything up to the end. */
	flight_window(&w, 1900, 1);
	assert_int_equal(w.start, 0);
	assert_int_equal(fill(&w).recs, 2 * (SPANS + 1));
	flight_reset();
}

static void test_flight_takes_threads_out_of_order(void **st)
{
	struct flight_window w;

	(void)st;
	setup_steps(2, 256);
	/* Thread 8's slices of steps 0 to 9 come after thread 7's steps
	 * (its ring was read last): by time, the window takes 8's of the
	 * last two steps only, and no slice that began before them. */
	for (uint64_t k = 0; k < 10; k++) {
		step(7, k);
	}
	for (uint64_t k = 0; k < 10; k++) {
		struct coll_rec r = {.t0 = k * 1000 + 5,
				     .t1 = 10,
				     .name = 99,
				     .kind = COLL_SPAN};
		flight_recs(8, &r, 1);
	}
	flight_window(&w, UINT64_MAX, UINT64_MAX);
	assert_int_equal(w.start, 8000);
	struct seen s = fill(&w);
	assert_int_equal(s.recs, 2 * (SPANS + 1) + 2);
	assert_int_equal(s.min_t0, 8000);
	flight_reset();
}

static void test_flight_memory_bound_drops_whole_segments(void **st)
{
	struct flight_window w;
	/* Records that do not pack small: a varying name, length, arg. */
	static struct coll_rec r[5000];
	uint64_t steps = 60, per = 5000;

	(void)st;
	setup_steps(1000, 1);
	for (uint64_t k = 0; k < steps; k++) {
		for (uint64_t i = 0; i < per; i++) {
			r[i] = (struct coll_rec){
				.t0 = k * 10000000 + 100 + i * 400,
				.t1 = (i * 2654435761u) % 100000,
				.name = (uint32_t)(1 + (i * 7919) % 5000),
				.kind = COLL_SPAN,
				.arg = (uint32_t)(i * 40503u)};
		}
		flight_recs(3, r, per);
		struct coll_rec s = {
			.t0 = k * 10000000, .t1 = 9000000, .kind = COLL_SPAN};
		flight_recs(3, &s, 1);
		flight_note_step(k, k * 10000000, k * 10000000 + 9000000);
		/* Never past the bound by more than the segment being
		 * filled (an eighth of it) and one chunk. */
		assert_true(flight_bytes_held() <= (1u << 20) * 9 / 8 + 65536);
	}
	flight_window(&w, UINT64_MAX, UINT64_MAX);
	assert_int_equal(w.cut, 1);
	assert_int_equal(w.step_hi, steps - 1);
	print_message("kept steps %llu..%llu, %zu bytes held\n",
		      (unsigned long long)w.step_lo,
		      (unsigned long long)w.step_hi, flight_bytes_held());
	assert_true(w.nsteps > 1 && w.nsteps < steps);
	/* Whole steps: it starts where its first step starts. */
	assert_int_equal(w.start, w.step_lo * 10000000);
	assert_int_equal(w.step_hi - w.step_lo + 1, w.nsteps);
	struct seen s = fill(&w);
	assert_int_equal(s.recs, w.nsteps * (per + 1));
	assert_int_equal(s.steps, w.nsteps);
	assert_int_equal(s.min_t0, w.start);
	flight_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flight_keeps_the_newest_steps),
		cmocka_unit_test(test_flight_window_ends_with_a_slow_step),
		cmocka_unit_test(test_flight_takes_threads_out_of_order),
		cmocka_unit_test(test_flight_memory_bound_drops_whole_segments),
	};

	clock_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
