/*
 * test_clock.c - the tick-to-nanosecond mapping (collector/clock.c).
 *
 * Ticks are TSC cycles on this machine (the tests say so when they are
 * not, and then check the identity mapping). Anchors come every 100 ms in
 * the first two seconds, so the tests sleep across a few of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

#define NT 2000

static uint64_t ticks[NT];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Takes NT ticks spread over about 600 ms, anchoring as the drain does;
 * the last ones come after the newest anchor. */
static void take_ticks(void)
{
	for (int i = 0; i < NT; i++) {
		ticks[i] = ticks_now();
		if (i % 200 == 150) {
			sleep_ms(60);
			clock_anchor();
		}
	}
}

static void test_clock_same_tick_same_ns_after_later_anchors(void **st)
{
	uint64_t before[NT];

	(void)st;
	take_ticks();
	for (int i = 0; i < NT; i++) {
		before[i] = clock_to_ns(ticks[i]);
	}
	/* Later anchors (more than a short history would keep), then the
	 * same ticks again: nothing may move, not even the ticks that were
	 * past the newest anchor the first time. */
	for (int k = 0; k < 20; k++) {
		sleep_ms(110);
		clock_anchor();
	}
	for (int i = 0; i < NT; i++) {
		assert_int_equal(clock_to_ns(ticks[i]), before[i]);
	}
}

static void test_clock_is_monotonic_across_segments(void **st)
{
	(void)st;
	take_ticks();
	uint64_t prev = 0;
	for (int i = 0; i < NT; i++) {
		uint64_t ns = clock_to_ns(ticks[i]);
		assert_true(ns >= prev);
		prev = ns;
	}
	/* Ticks one apart across the whole range never go backwards. */
	uint64_t t = ticks[0], last = clock_to_ns(t);
	for (; t < ticks[NT - 1];
	     t += (ticks[NT - 1] - ticks[0]) / 100000 + 1) {
		uint64_t ns = clock_to_ns(t);
		assert_true(ns >= last);
		last = ns;
	}
}

static void test_clock_tracks_clock_monotonic(void **st)
{
	(void)st;
	/* A second and a half of anchors, then compare with the real
	 * clock: the tick read between two CLOCK_MONOTONIC reads maps into
	 * that window, widened by 20 us on each side (the first rate,
	 * measured over 1 ms, may be off by tens of ppm; the steering takes
	 * that away). A preemption between the reads only widens the
	 * window, so a loaded machine cannot fail the check. */
	for (int k = 0; k < 15; k++) {
		sleep_ms(100);
		clock_anchor();
	}
	for (int k = 0; k < 5; k++) {
		int64_t base = (int64_t)clock_base_mono_ns();
		int64_t a = (int64_t)ticks_mono_ns() - base;
		uint64_t t = ticks_now();
		int64_t b = (int64_t)ticks_mono_ns() - base;
		int64_t got = (int64_t)clock_to_ns(t);
		int64_t off = got < a ? a - got : got > b ? got - b : 0;

		printf("clock: mapped tick %lld ns outside [a, b] (b - a = "
		       "%lld ns, %s)\n",
		       (long long)off, (long long)(b - a), clock_source());
		assert_true(off < 20000);
		sleep_ms(50);
	}
}

/* clock_now_ns() between two ticks converts between them: a source that
 * stamps nanoseconds (CUPTI) orders exactly with ticks, whatever the
 * mapping's distance from CLOCK_MONOTONIC. Checked right after an anchor
 * and 300 ms after one. */
static void check_now_between_ticks(int n)
{
	for (int k = 0; k < n; k++) {
		uint64_t a = ticks_now();
		uint64_t now = clock_now_ns() - clock_base_mono_ns();
		uint64_t b = ticks_now();

		assert_true(clock_to_ns(a) <= now);
		assert_true(now <= clock_to_ns(b));
	}
}

static void test_clock_now_ns_orders_with_ticks(void **st)
{
	(void)st;
	clock_anchor();
	check_now_between_ticks(1000);
	sleep_ms(300);
	check_now_between_ticks(1000);
}

static int setup(void **st)
{
	(void)st;
	clock_init();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_clock_same_tick_same_ns_after_later_anchors),
		cmocka_unit_test(test_clock_is_monotonic_across_segments),
		cmocka_unit_test(test_clock_tracks_clock_monotonic),
		cmocka_unit_test(test_clock_now_ns_orders_with_ticks),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
