/*
 * table_steps.c - the Steps section of the tables: how long the training
 * steps took. Its rows are the step records' (steps.c), one per step
 * ("ProfilerStep#N", section STEPS_GROUP), which the aggregates keep like
 * any slice; table.c hands them here instead of writing them as a section
 * of their own, and this file writes, in one time column (the same in the
 * text, the JSON and the CSV):
 *
 *   mean, median, p90, max   over every step (Total Count: the steps)
 *   ProfilerStep#N           the five slowest steps, slowest first
 *
 * The median and the 90th percentile interpolate linearly between the
 * two nearest steps, as numpy's percentile() does by default.
 */
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "internal.h"

#define SLOWEST 5

struct step {
	int64_t ns;
	uint64_t num; /* N of ProfilerStep#N, for ties */
	const char *name;
};

static int cmp_time(const void *pa, const void *pb)
{
	const struct step *a = pa, *b = pb;

	if (a->ns != b->ns) {
		return a->ns < b->ns ? -1 : 1;
	}
	return a->num < b->num ? -1 : a->num > b->num;
}

static int cmp_slow(const void *pa, const void *pb)
{
	const struct step *a = pa, *b = pb;

	if (a->ns != b->ns) {
		return a->ns > b->ns ? -1 : 1;
	}
	return a->num < b->num ? -1 : a->num > b->num;
}

/* The q-th quantile (0..1) of the n sorted step times. */
static double quantile(const struct step *s, size_t n, double q)
{
	double at = q * (double)(n - 1);
	size_t lo = (size_t)at;
	double frac = at - (double)lo;

	if (lo + 1 >= n) {
		return (double)s[n - 1].ns;
	}
	return (double)s[lo].ns + frac * (double)(s[lo + 1].ns - s[lo].ns);
}

static const struct table_section steps_section = {
	.title = "Steps",
	.total = "Step Time (ms)",
	.total_key = "Step Time",
};

void table_steps(struct table_sink *k, const struct agg_row *rows, size_t n)
{
	struct step *s = n ? malloc(n * sizeof(*s)) : NULL;
	double sum = 0;

	if (!s) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = strtab_get(rows[i].name);
		const char *hash = strrchr(name, '#');
		s[i].ns = rows[i].count ? rows[i].total / (int64_t)rows[i].count
					: 0;
		s[i].num = hash ? strtoull(hash + 1, NULL, 10) : 0;
		s[i].name = name;
		sum += (double)s[i].ns;
	}
	qsort(s, n, sizeof(*s), cmp_time);
	struct {
		const char *name;
		double ns;
	} stats[] = {{"mean", sum / (double)n},
		     {"median", quantile(s, n, 0.5)},
		     {"p90", quantile(s, n, 0.9)},
		     {"max", (double)s[n - 1].ns}};
	table_section(k, &steps_section);
	for (size_t i = 0; i < sizeof(stats) / sizeof(*stats); i++) {
		struct table_row r = {.name = stats[i].name,
				      .count = n,
				      .total = (int64_t)(stats[i].ns + 0.5)};
		table_row(k, &r);
	}
	/* Slowest first; of equal times, the lower number first. */
	qsort(s, n, sizeof(*s), cmp_slow);
	for (size_t i = 0; i < SLOWEST && i < n; i++) {
		struct table_row r = {
			.name = s[i].name, .count = 1, .total = s[i].ns};
		table_row(k, &r);
	}
	free(s);
}
