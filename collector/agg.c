/*
 * agg.c - aggregate statistics: count, total, min, max (and so the average)
 * per section and name, as MXNet's AggregateStats keeps them.
 *
 * Spans and frames aggregate durations; counters aggregate the values they
 * were set to; markers are counted. A total saturates at the int64_t limits
 * instead of wrapping. The steps (time samples of section STEPS_GROUP)
 * make no row each: their times go to a store of bounded size
 * (stepstat.c), which the Steps section reads (agg_steps()); they still
 * take part in self time as any slice. Time rows also sum their slices' self
 * time (the time outside slices nested inside them, nest.c), and give back the
 * sample of a PyTorch slice that nest.c folds into its parent. Rows live in an
 * open-addressing hash table keyed by (group, name, class). The collector
 * updates one set from the drain thread, under the owner lock; the mxprof
 * command builds its own from a trace file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "internal.h"
#include "files.h"

struct agg {
	struct hmap rows;    /* struct agg_row; count == 0: an empty slot */
	struct nest *nest;   /* self time: made on first use */
	struct agg_row *hot; /* the row of the last sample: loops repeat it */
	struct stepstat *steps; /* the step times: made on the first step */
	uint8_t *gkind;		/* per group id: 0 unknown, 1 steps, 2 other */
	size_t ngkind;
};

/* Non-zero when group is the steps' section (STEPS_GROUP). */
static int steps_of(struct agg *a, uint32_t group)
{
	if (__builtin_expect(group < a->ngkind && a->gkind[group], 1)) {
		return a->gkind[group] == 1;
	}
	if (group >= a->ngkind) {
		size_t n = (size_t)group + 64;
		uint8_t *k = realloc(a->gkind, n);

		if (!k) {
			return strcmp(strtab_get(group), STEPS_GROUP) == 0;
		}
		memset(k + a->ngkind, 0, n - a->ngkind);
		a->gkind = k;
		a->ngkind = n;
	}
	a->gkind[group] = strcmp(strtab_get(group), STEPS_GROUP) == 0 ? 1 : 2;
	return a->gkind[group] == 1;
}

/* A step of v ns into the step times: its number is the N of a name
 * "ProfilerStep#N" (a trace's, an old journal's), else arg (the record's,
 * named STEP_NAME). Returns 0 or -ENOMEM. */
static int add_step(struct agg *a, uint32_t name, uint32_t arg, int64_t v)
{
	const char *hash = strrchr(strtab_get(name), '#');
	uint64_t num = arg;

	if (!a->steps && !(a->steps = stepstat_create())) {
		return -ENOMEM;
	}
	if (hash && hash[1] >= '0' && hash[1] <= '9') {
		num = strtoull(hash + 1, NULL, 10);
	}
	stepstat_add(a->steps, v, num);
	return 0;
}

/* A row's key. */
struct row_key {
	uint32_t group, name;
	int cls;
};

static int class_of(uint16_t kind)
{
	switch (kind) {
	case COLL_COUNTER:
		return AGG_COUNTER;
	case COLL_INSTANT:
		return AGG_MARKER;
	default:
		return AGG_TIME;
	}
}

static uint64_t key_hash(uint32_t group, uint32_t name, int cls)
{
	uint64_t h = ((uint64_t)group << 32 | name) * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)cls * 0xff51afd7ed558ccdull;
	return h >> 17;
}

static int row_empty(const void *slot)
{
	return ((const struct agg_row *)slot)->count == 0;
}

static uint64_t row_hash(const void *slot, const void *ctx)
{
	const struct agg_row *r = slot;

	(void)ctx;
	return key_hash(r->group, r->name, r->cls);
}

static int row_match(const void *slot, const void *key)
{
	const struct agg_row *r = slot;
	const struct row_key *k = key;

	return r->group == k->group && r->name == k->name && r->cls == k->cls;
}

static const struct hmap_ops row_ops = {
	.size = sizeof(struct agg_row),
	.empty = row_empty,
	.hash = row_hash,
};

/* The slot of (group, name, cls): its row, or the empty slot for it. */
static inline struct agg_row *lookup(struct agg *a, uint32_t group,
				     uint32_t name, int cls)
{
	struct row_key k = {group, name, cls};

	return hmap_find(&a->rows, &row_ops, key_hash(group, name, cls),
			 row_match, &k);
}

/* Makes room for one more row (growing at 3/4). Returns 0 or -ENOMEM. */
static int reserve(struct agg *a)
{
	size_t cap = a->rows.cap;
	int rc = hmap_reserve(&a->rows, &row_ops, 256, 3, 4, NULL);

	if (a->rows.cap != cap) {
		a->hot = NULL;
	}
	return rc;
}

struct agg *agg_create(void)
{
	struct agg *a = calloc(1, sizeof(*a));

	if (a && hmap_grow(&a->rows, &row_ops, 256, NULL) < 0) {
		free(a);
		a = NULL;
	}
	return a;
}

void agg_destroy(struct agg *a)
{
	if (a) {
		nest_destroy(a->nest);
		hmap_free(&a->rows);
		stepstat_destroy(a->steps);
		free(a->gkind);
		free(a);
	}
}

void agg_reset(struct agg *a)
{
	hmap_clear(&a->rows, &row_ops);
	a->hot = NULL;
	nest_reset(a->nest);
	stepstat_reset(a->steps);
}

int64_t agg_sat_add(int64_t x, int64_t y)
{
	int64_t r;

	if (__builtin_add_overflow(x, y, &r)) {
		return y > 0 ? INT64_MAX : INT64_MIN;
	}
	return r;
}

/* Row r, whose one sample was taken back, takes samples again: it starts
 * over (a row keeps its slot once made: the table has no deletion). */
static void revive(struct agg_row *r, int64_t v)
{
	r->gone = 0;
	r->count = 0;
	r->errors = 0;
	r->total = 0;
	r->self = 0;
	r->status = 0;
	r->min = r->max = v;
}

/* The row of (group, name, cls), made when new; NULL without memory. */
static inline struct agg_row *row_of(struct agg *a, uint32_t group,
				     uint32_t name, int cls, int64_t v)
{
	struct agg_row *r = a->hot;

	if (r && r->name == name && r->group == group && r->cls == cls) {
		return r;
	}
	if (reserve(a) < 0) {
		return NULL;
	}
	r = lookup(a, group, name, cls);
	if (r->count == 0) {
		r->group = group;
		r->name = name;
		r->cls = (uint8_t)cls;
		r->min = r->max = v;
		a->rows.used++;
	} else if (r->gone) {
		revive(r, v);
	}
	a->hot = r;
	return r;
}

/* One sample of value v (self time self, for time rows) into row r. */
static inline void row_add(struct agg_row *r, int64_t v, int64_t self,
			   uint8_t flags)
{
	r->count++;
	r->total = agg_sat_add(r->total, v);
	if (v < r->min) {
		r->min = v;
	}
	if (v > r->max) {
		r->max = v;
	}
	if (r->cls == AGG_TIME) {
		r->self = agg_sat_add(r->self, self);
		r->status |= (flags & COLL_FLAG_STATUS) != 0;
		r->errors += (flags & COLL_FLAG_ERROR) != 0;
	}
}

/* Takes fold f's sample back out of its row and its call site's (a row
 * keeps its min and max; one left with no sample is marked gone). */
static void take_back(struct agg *a, const struct nest_fold *f)
{
	for (int site = 0; site < 2; site++) {
		uint32_t g = site ? f->site_group : f->group;
		uint32_t n = site ? f->site_name : f->name;

		if (!g || !n) {
			continue;
		}
		struct agg_row *r = lookup(a, g, n, AGG_TIME);

		if (r->count > 1) {
			r->count--;
			r->total = agg_sat_add(r->total, -f->dur);
			r->self = agg_sat_add(r->self, -f->self);
		} else if (r->count == 1) {
			r->gone = 1; /* count stays: 0 marks an empty slot */
		}
	}
}

int agg_add(struct agg *a, const struct agg_sample *s)
{
	int cls = class_of(s->kind);
	int64_t v = cls == AGG_MARKER ? 0 : s->value;

	if (cls == AGG_TIME && steps_of(a, s->group)) {
		return add_step(a, s->name, s->arg, v);
	}
	struct agg_row *r = row_of(a, s->group, s->name, cls, v);

	if (!r) {
		return -ENOMEM;
	}
	row_add(r, v, s->has_self ? s->self : v, s->flags);
	return 0;
}

/*
 * agg_add_rec_on() for n records of one thread, in the order they ended:
 * the drain's path for records without stacks. Returns 0 or -ENOMEM (the
 * records after the one that failed are still added).
 */
int agg_add_recs_on(struct agg *a, uint64_t thread, const struct coll_rec *rec,
		    size_t n)
{
	int64_t self[256];
	struct nest_fold fold[256];
	int rc = 0;

	if (!a->nest) {
		a->nest = nest_create();
	}
	while (n > 0) {
		size_t k = n < 256 ? n : 256;
		nest_selves(a->nest, thread, rec, k, self, fold);
		for (size_t i = 0; i < k; i++, rec++) {
			int slice = rec->kind == COLL_SPAN ||
				    rec->kind == COLL_FRAME;
			int64_t v = slice || rec->kind == COLL_COUNTER
					    ? (int64_t)rec->t1
					    : 0;
			int cls = class_of(rec->kind);
			if (cls == AGG_TIME && steps_of(a, rec->group)) {
				if (add_step(a, rec->name, rec->arg, v) < 0) {
					rc = -ENOMEM;
				}
				continue;
			}
			struct agg_row *r =
				row_of(a, rec->group, rec->name, cls, v);
			if (!r) {
				rc = -ENOMEM;
				continue;
			}
			row_add(r, v, slice ? self[i] : v, rec->flags);
			if (fold[i].name) {
				take_back(a, &fold[i]);
			}
		}
		n -= k;
	}
	return rc;
}

/*
 * Adds count samples of one (group, name, kind) at once, whose values sum
 * to total and range from min to max (for markers, only the count
 * matters), errors of them with an error status. Returns 0 or -ENOMEM, as
 * agg_add().
 */
int agg_add_many(struct agg *a, const struct agg_sample *s, uint64_t count,
		 int64_t total, int64_t min, int64_t max, uint64_t errors)
{
	int cls = class_of(s->kind);

	if (count == 0) {
		return 0;
	}
	if (cls == AGG_TIME && steps_of(a, s->group)) {
		/* A full ring's tally keeps each step apart (tally.c): count
		 * is 1 but for a step the tally saw twice. */
		int64_t each = total / (int64_t)count;
		int64_t last = total - each * (int64_t)(count - 1);
		int rc = 0;
		for (uint64_t i = 0; i + 1 < count && rc == 0; i++) {
			rc = add_step(a, s->name, s->arg, each);
		}
		return rc < 0 ? rc : add_step(a, s->name, s->arg, last);
	}
	if (reserve(a) < 0) {
		return -ENOMEM;
	}
	struct agg_row *r = lookup(a, s->group, s->name, cls);
	if (cls == AGG_MARKER) {
		total = min = max = 0;
	}
	if (r->gone) {
		revive(r, min);
		r->max = max;
	} else if (r->count == 0) {
		r->group = s->group;
		r->name = s->name;
		r->cls = (uint8_t)cls;
		r->min = min;
		r->max = max;
		a->rows.used++;
	}
	r->count += count;
	r->total = agg_sat_add(r->total, total);
	if (cls == AGG_TIME) {
		r->self = agg_sat_add(r->self, total);
	}
	if (min < r->min) {
		r->min = min;
	}
	if (max > r->max) {
		r->max = max;
	}
	if (cls == AGG_TIME && (s->flags & COLL_FLAG_STATUS)) {
		r->status = 1;
	}
	if (cls == AGG_TIME) {
		r->errors += errors;
	}
	return 0;
}

/*
 * Adds the sample of one record as the journal holds it: times already in
 * nanoseconds, t1 the duration of a span or frame and the new value of a
 * counter. The drain and a journal's recovery share it, so that both give
 * the same rows. Returns 0 or -ENOMEM, as agg_add().
 */
/* The sample of record r: t1 is the duration of a span or frame and the
 * new value of a counter. */
struct agg_sample agg_rec_sample(const struct coll_rec *r)
{
	struct agg_sample s = {.group = r->group,
			       .name = r->name,
			       .kind = r->kind,
			       .flags = r->flags,
			       .arg = r->arg};

	if (r->kind == COLL_SPAN || r->kind == COLL_FRAME ||
	    r->kind == COLL_COUNTER) {
		s.value = (int64_t)r->t1;
	}
	return s;
}

int agg_add_rec(struct agg *a, const struct coll_rec *r)
{
	struct agg_sample s = agg_rec_sample(r);

	return agg_add(a, &s);
}

int agg_add_at(struct agg *a, uint64_t thread, uint64_t t0,
	       const struct agg_sample *s)
{
	return agg_add_site(a, thread, t0, s, 0, 0);
}

int agg_add_site(struct agg *a, uint64_t thread, uint64_t t0,
		 const struct agg_sample *s, uint32_t site_group,
		 uint32_t site_name)
{
	struct agg_sample x = *s;
	int rc;

	if (s->kind != COLL_SPAN && s->kind != COLL_FRAME) {
		return agg_add(a, s);
	}
	if (!a->nest) {
		a->nest = nest_create();
	}
	struct nest_slice sl = {s->group, s->name, site_group, site_name};
	struct nest_fold f;

	x.has_self = 1;
	x.self = nest_self_of(a->nest, thread, t0,
			      s->value > 0 ? (uint64_t)s->value : 0, &sl, &f);
	rc = agg_add(a, &x);
	if (site_group && site_name) {
		x.group = site_group;
		x.name = site_name;
		int rc2 = agg_add(a, &x);
		rc = rc < 0 ? rc : rc2;
	}
	if (f.name) {
		take_back(a, &f);
	}
	return rc;
}

void agg_take_back(struct agg *a, const struct nest_fold *f)
{
	take_back(a, f);
}

/* agg_add_rec() for a record of thread tid: with its self time
 * (agg_add_at()). */
int agg_add_rec_on(struct agg *a, uint64_t thread, const struct coll_rec *r)
{
	struct agg_sample s = agg_rec_sample(r);

	return agg_add_at(a, thread, r->t0, &s);
}

int agg_merge(struct agg *dst, const struct agg *src)
{
	for (size_t i = 0; i < src->rows.cap; i++) {
		const struct agg_row *r = hmap_at(&src->rows, &row_ops, i);
		if (!r->count || r->gone) {
			continue;
		}
		struct agg_row *d =
			row_of(dst, r->group, r->name, r->cls, r->min);
		if (!d) {
			return -ENOMEM;
		}
		if (d->count == 0) { /* row_of() made it */
			d->max = r->max;
		}
		d->count += r->count;
		d->errors += r->errors;
		d->total = agg_sat_add(d->total, r->total);
		d->self = agg_sat_add(d->self, r->self);
		d->min = r->min < d->min ? r->min : d->min;
		d->max = r->max > d->max ? r->max : d->max;
		d->status |= r->status;
	}
	if (src->steps) {
		if (!dst->steps && !(dst->steps = stepstat_create())) {
			return -ENOMEM;
		}
		return stepstat_merge(dst->steps, src->steps);
	}
	return 0;
}

const struct stepstat *agg_steps(const struct agg *a)
{
	return a->steps;
}

struct agg_row *agg_rows(const struct agg *a, size_t *n)
{
	struct agg_row *out =
		malloc((a->rows.used ? a->rows.used : 1) * sizeof(*out));
	size_t k = 0;

	if (!out) {
		return NULL;
	}
	for (size_t i = 0; i < a->rows.cap; i++) {
		const struct agg_row *r = hmap_at(&a->rows, &row_ops, i);
		if (r->count && !r->gone) {
			out[k++] = *r;
		}
	}
	*n = k;
	return out;
}
