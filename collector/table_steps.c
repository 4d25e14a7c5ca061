/*
 * table_steps.c - the Steps section of the tables: how long the training
 * steps took. Its figures come from the step times that the aggregates
 * keep apart from their rows (agg_steps(), stepstat.c: the steps'
 * records, "ProfilerStep#N" of section STEPS_GROUP, make no row each);
 * table.c has this file write them, in one time column (the same in the
 * text, the JSON and the CSV):
 *
 *   mean, median, p90, max   over every step (Total Count: the steps)
 *   ProfilerStep#N           the five slowest steps, slowest first
 *
 * The median and the 90th percentile interpolate linearly between the
 * two nearest steps, as numpy's percentile() does by default. They are
 * exact while the run has at most 2^20 (1048576) steps; beyond that
 * they come from a histogram of buckets under 0.4 % of the value wide
 * (within 0.2 % of the exact figure), so that the memory they take stays
 * bounded (112 KiB) however long the run. The count, mean, max and the
 * five slowest are always exact.
 */
#include <stdio.h>

#include "files.h"
#include "internal.h"

static const struct table_section steps_section = {
	.title = "Steps",
	.total = "Step Time (ms)",
	.total_key = "Step Time",
};

void table_steps(struct table_sink *k, const struct stepstat *s)
{
	uint64_t n = stepstat_count(s);
	struct {
		const char *name;
		double ns;
	} stats[] = {
		{"mean", (double)stepstat_total(s) / (double)n},
		{"median", stepstat_quantile(s, 0.5)},
		{"p90", stepstat_quantile(s, 0.9)},
		{"max", (double)stepstat_max(s)},
	};

	table_section(k, &steps_section);
	for (size_t i = 0; i < sizeof(stats) / sizeof(*stats); i++) {
		struct table_row r = {.name = stats[i].name,
				      .count = n,
				      .total = (int64_t)(stats[i].ns + 0.5)};
		table_row(k, &r);
	}
	/* Slowest first; of equal times, the lower number first. */
	const struct stepstat_slow *slow;
	unsigned ns = stepstat_slowest(s, &slow);
	for (unsigned i = 0; i < ns; i++) {
		char name[48];
		snprintf(name, sizeof(name), STEP_NAME "#%llu",
			 (unsigned long long)slow[i].num);
		struct table_row r = {
			.name = name, .count = 1, .total = slow[i].ns};
		table_row(k, &r);
	}
}
