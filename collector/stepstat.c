/*
 * stepstat.c - the step times of a run, in bounded memory: what the Steps
 * section of the tables (table_steps.c) needs, and nothing per step once
 * a run is long.
 *
 * A run of days may end millions of steps; one aggregate row (and one
 * name) per step would grow without end. The aggregates (agg.c) hand
 * each step's time here instead, and this keeps:
 *
 *   count, total, min, max      exact;
 *   the SLOWEST slowest steps   exact (time and number), slowest first,
 *                               of equal times the lower number first;
 *   the times themselves        exact while the run has at most
 *                               EXACT_MAX steps (8 bytes each), for the
 *                               median and the 90th percentile; past
 *                               that, a histogram of log-linear buckets
 *                               (each power of two split in SUB equal
 *                               buckets: under 0.4 % of the value wide;
 *                               below SUB ns, one bucket per ns) of
 *                               NBINS counts, 112 KiB, whatever the run's
 *                               length. A quantile is then the middle of
 *                               its bucket, within 0.2 % of the exact one,
 *                               and never outside [min, max].
 *
 * Not thread-safe: the aggregates' owner's (the drain thread, under the
 * owner lock, or the mxprof command). Allocates; a failed allocation
 * leaves count, total, min, max and the slowest exact, and the quantiles
 * of the times kept (stepstat_lossy() says so).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EXACT_MAX ((size_t)1 << 20)
#define SUB_BITS  8
#define SUB	  ((uint64_t)1 << SUB_BITS)
/* Values up to INT64_MAX: octaves SUB_BITS..62 after the SUB exact. */
#define NBINS ((63 - SUB_BITS + 1) * SUB)

struct stepstat {
	uint64_t count;
	int64_t total, min, max;
	struct stepstat_slow slow[STEPSTAT_SLOWEST];
	unsigned nslow;
	int64_t *v; /* the times, while exact (hist NULL) */
	size_t n, cap;
	uint64_t *hist; /* NBINS counts, once past EXACT_MAX */
	int lossy;	/* an allocation failed: times were left out */
};

struct stepstat *stepstat_create(void)
{
	return calloc(1, sizeof(struct stepstat));
}

void stepstat_destroy(struct stepstat *s)
{
	if (s) {
		free(s->v);
		free(s->hist);
		free(s);
	}
}

void stepstat_reset(struct stepstat *s)
{
	if (s) {
		free(s->v);
		free(s->hist);
		memset(s, 0, sizeof(*s));
	}
}

/* x + y, saturating at the int64_t limits as the aggregates' totals. */
static int64_t sat_add(int64_t x, int64_t y)
{
	int64_t r;

	if (__builtin_add_overflow(x, y, &r)) {
		return y > 0 ? INT64_MAX : INT64_MIN;
	}
	return r;
}

/* The bucket of time v (ns, negative as 0). */
static size_t bin_of(int64_t v)
{
	if (v < (int64_t)SUB) {
		return v > 0 ? (size_t)v : 0;
	}
	unsigned e = 63 - (unsigned)__builtin_clzll((uint64_t)v);
	uint64_t sub = ((uint64_t)v >> (e - SUB_BITS)) & (SUB - 1);

	return (size_t)(e - SUB_BITS + 1) * SUB + sub;
}

/* The middle of bucket b, in ns. */
static int64_t bin_mid(size_t b)
{
	if (b < SUB) {
		return (int64_t)b;
	}
	unsigned e = (unsigned)(b / SUB) + SUB_BITS - 1;
	uint64_t lo = (SUB + b % SUB) << (e - SUB_BITS);
	uint64_t width = (uint64_t)1 << (e - SUB_BITS);

	return (int64_t)(lo + (width - 1) / 2);
}

/* Moves the exact times into the histogram. Returns 0 or -ENOMEM. */
static int to_hist(struct stepstat *s)
{
	if (s->hist) {
		return 0;
	}
	s->hist = calloc(NBINS, sizeof(*s->hist));
	if (!s->hist) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		s->hist[bin_of(s->v[i])]++;
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
	return 0;
}

/* Keeps time ns among the times (exact or in the histogram). */
static void keep_time(struct stepstat *s, int64_t ns)
{
	if (!s->hist && s->n == s->cap) {
		if (s->cap >= EXACT_MAX) {
			if (to_hist(s) < 0) {
				s->lossy = 1;
				return;
			}
		} else {
			size_t cap = s->cap ? s->cap * 2 : 1024;
			int64_t *v = realloc(s->v, cap * sizeof(*v));
			if (!v) {
				s->lossy = 1;
				return;
			}
			s->v = v;
			s->cap = cap;
		}
	}
	if (s->hist) {
		s->hist[bin_of(ns)]++;
	} else {
		s->v[s->n++] = ns;
	}
}

/* Non-zero when step a comes before step b among the slowest. */
static int slower(const struct stepstat_slow *a, const struct stepstat_slow *b)
{
	return a->ns != b->ns ? a->ns > b->ns : a->num < b->num;
}

/* Step (ns, num) among the slowest, when it is one of them. */
static void keep_slow(struct stepstat *s, int64_t ns, uint64_t num)
{
	struct stepstat_slow x = {ns, num};
	unsigned i = s->nslow;

	if (i == STEPSTAT_SLOWEST) {
		if (!slower(&x, &s->slow[i - 1])) {
			return;
		}
		i--;
	} else {
		s->nslow++;
	}
	for (; i > 0 && slower(&x, &s->slow[i - 1]); i--) {
		s->slow[i] = s->slow[i - 1];
	}
	s->slow[i] = x;
}

void stepstat_add(struct stepstat *s, int64_t ns, uint64_t num)
{
	if (s->count == 0 || ns < s->min) {
		s->min = ns;
	}
	if (s->count == 0 || ns > s->max) {
		s->max = ns;
	}
	s->count++;
	s->total = sat_add(s->total, ns);
	keep_slow(s, ns, num);
	keep_time(s, ns);
}

int stepstat_merge(struct stepstat *dst, const struct stepstat *src)
{
	if (!src || src->count == 0) {
		return 0;
	}
	if (dst->count == 0 || src->min < dst->min) {
		dst->min = src->min;
	}
	if (dst->count == 0 || src->max > dst->max) {
		dst->max = src->max;
	}
	dst->count += src->count;
	dst->total = sat_add(dst->total, src->total);
	dst->lossy |= src->lossy;
	for (unsigned i = 0; i < src->nslow; i++) {
		keep_slow(dst, src->slow[i].ns, src->slow[i].num);
	}
	if (src->hist || dst->n + src->n > EXACT_MAX) {
		if (to_hist(dst) < 0) {
			dst->lossy = 1;
			return -ENOMEM;
		}
	}
	if (dst->hist) {
		for (size_t i = 0; src->hist && i < NBINS; i++) {
			dst->hist[i] += src->hist[i];
		}
		for (size_t i = 0; i < src->n; i++) {
			dst->hist[bin_of(src->v[i])]++;
		}
		return 0;
	}
	for (size_t i = 0; i < src->n; i++) {
		keep_time(dst, src->v[i]);
	}
	return dst->lossy ? -ENOMEM : 0;
}

uint64_t stepstat_count(const struct stepstat *s)
{
	return s ? s->count : 0;
}

int64_t stepstat_total(const struct stepstat *s)
{
	return s->total;
}

int64_t stepstat_max(const struct stepstat *s)
{
	return s->max;
}

int stepstat_lossy(const struct stepstat *s)
{
	return s->lossy;
}

unsigned stepstat_slowest(const struct stepstat *s,
			  const struct stepstat_slow **out)
{
	*out = s->slow;
	return s->nslow;
}

static void swap(int64_t *a, int64_t *b)
{
	int64_t t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest of v[0..n) (k < n), moving v's elements so that none
 * before k is larger and none after it smaller: a quickselect with a
 * three-way partition (step times repeat) around the median of three. */
static int64_t kth(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		int64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
		int64_t p = a < b ? (b < c   ? b
				     : a < c ? c
					     : a)
				  : (a < c   ? a
				     : b < c ? c
					     : b);
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (v[i] < p) {
				swap(&v[lt++], &v[i++]);
			} else if (v[i] > p) {
				swap(&v[i], &v[--gt]);
			} else {
				i++;
			}
		}
		if (k < lt) {
			hi = lt;
		} else if (k >= gt) {
			lo = gt;
		} else {
			return p;
		}
	}
	return v[lo];
}

/* The k-th smallest time (k < the times kept). */
static int64_t rank(const struct stepstat *s, uint64_t k, uint64_t kept)
{
	if (!s->hist) {
		return kth(s->v, s->n, (size_t)k);
	}
	if (k == 0 && !s->lossy) {
		return s->min;
	}
	if (k + 1 == kept && !s->lossy) {
		return s->max;
	}
	uint64_t seen = 0;
	for (size_t b = 0; b < NBINS; b++) {
		seen += s->hist[b];
		if (seen > k) {
			int64_t m = bin_mid(b);
			return m < s->min ? s->min : m > s->max ? s->max : m;
		}
	}
	return s->max;
}

double stepstat_quantile(const struct stepstat *s, double q)
{
	uint64_t kept = s->hist ? s->count : s->n;

	if (s->hist && s->lossy) {
		kept = 0;
		for (size_t b = 0; b < NBINS; b++) {
			kept += s->hist[b];
		}
	}
	if (kept == 0) {
		return 0;
	}
	double at = q * (double)(kept - 1);
	uint64_t lo = (uint64_t)at;
	double frac = at - (double)lo;

	if (lo + 1 >= kept) {
		return (double)rank(s, kept - 1, kept);
	}
	int64_t x = rank(s, lo, kept);
	if (frac == 0) {
		return (double)x;
	}
	/* The next: after kth(), the least of those after lo. */
	int64_t y;
	if (s->hist) {
		y = rank(s, lo + 1, kept);
	} else {
		y = s->v[lo + 1];
		for (size_t i = (size_t)lo + 2; i < s->n; i++) {
			y = s->v[i] < y ? s->v[i] : y;
		}
	}
	return (double)x + frac * (double)(y - x);
}
