/*
 * test_tally.c - what a full ring tallies for the tables (collector/tally.c):
 * exact count, total, min and max per (group, name, kind), handed over once
 * and then only what is new, and lost counted when no row is free.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

struct got {
	struct tally_row rows[TALLY_ROWS + 8];
	int n;
};

static void keep(void *ctx, const struct tally_row *w)
{
	struct got *g = ctx;

	g->rows[g->n++] = *w;
}

static const struct tally_row *find(const struct got *g, uint32_t name,
				    uint16_t kind)
{
	for (int i = 0; i < g->n; i++) {
		if (g->rows[i].name == name && g->rows[i].kind == kind) {
			return &g->rows[i];
		}
	}
	return NULL;
}

static struct coll_rec span(uint32_t name, uint64_t t0, uint64_t t1,
			    uint8_t flags)
{
	return (struct coll_rec){.t0 = t0,
				 .t1 = t1,
				 .name = name,
				 .group = 7,
				 .kind = COLL_SPAN,
				 .flags = flags};
}

static void test_tally_counts_exactly_then_only_what_is_new(void **st)
{
	struct tally *t = calloc(1, sizeof(*t));
	struct got *g = calloc(1, sizeof(*g));
	(void)st;

	for (uint64_t i = 1; i <= 10; i++) {
		struct coll_rec r = span(1, 100, 100 + i * 10,
					 i == 3 ? COLL_FLAG_ERROR : 0);
		tally_add(t, &r);
	}
	for (int64_t v = -2; v <= 2; v++) {
		struct coll_rec c = {.t1 = (uint64_t)v,
				     .name = 1,
				     .group = 7,
				     .kind = COLL_COUNTER};
		tally_add(t, &c);
	}
	assert_int_equal(tally_take(t, keep, g), 0);
	assert_int_equal(g->n, 2);
	const struct tally_row *s = find(g, 1, COLL_SPAN);
	assert_non_null(s);
	assert_int_equal(s->count, 10);
	assert_int_equal(s->total, 550);
	assert_int_equal(s->min, 10);
	assert_int_equal(s->max, 100);
	assert_int_equal(s->errors, 1);
	const struct tally_row *c = find(g, 1, COLL_COUNTER);
	assert_non_null(c);
	assert_int_equal(c->count, 5);
	assert_int_equal(c->total, 0);
	assert_int_equal(c->min, -2);
	assert_int_equal(c->max, 2);

	/* Nothing new: nothing handed over. */
	g->n = 0;
	assert_int_equal(tally_take(t, keep, g), 0);
	assert_int_equal(g->n, 0);

	/* Two more passes: only they come, with min and max as of now. */
	struct coll_rec r = span(1, 0, 5, 0);
	tally_add(t, &r);
	r = span(1, 0, 7, 0);
	tally_add(t, &r);
	assert_int_equal(tally_take(t, keep, g), 0);
	assert_int_equal(g->n, 1);
	assert_int_equal(g->rows[0].count, 2);
	assert_int_equal(g->rows[0].total, 12);
	assert_int_equal(g->rows[0].min, 5);
	assert_int_equal(g->rows[0].max, 100);
	assert_int_equal(g->rows[0].errors, 0);
	assert_int_equal(t->lost, 0);
	free(t);
	free(g);
}

static void test_tally_counts_lost_when_every_row_is_taken(void **st)
{
	struct tally *t = calloc(1, sizeof(*t));
	struct got *g = calloc(1, sizeof(*g));
	(void)st;

	for (uint32_t name = 1; name <= TALLY_ROWS + 3; name++) {
		struct coll_rec r = span(name, 0, name, 0);
		tally_add(t, &r);
	}
	assert_int_equal(t->lost, 3);
	assert_int_equal(tally_take(t, keep, g), 0);
	assert_int_equal(g->n, TALLY_ROWS);
	tally_clear(t);
	assert_int_equal(t->lost, 0);
	g->n = 0;
	assert_int_equal(tally_take(t, keep, g), 0);
	assert_int_equal(g->n, 0);
	free(t);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_tally_counts_exactly_then_only_what_is_new),
		cmocka_unit_test(
			test_tally_counts_lost_when_every_row_is_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
