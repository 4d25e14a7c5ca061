/*
 * nest.c - self time: a slice's time minus the time of the slices nested
 * directly inside it on the same thread, whatever recorded them (hooks,
 * operators, NVTX ranges, API tasks).
 *
 * A thread's slices reach the aggregates in the order they ended (each
 * source pushes a record when its call or range ends, into the thread's
 * ring), so a slice's children come before it. Each thread keeps the
 * slices that ended and have no parent yet, oldest first; a slice that
 * ends takes from the end of that list every slice that lies inside it
 * (its direct children: theirs were taken by them already), subtracts
 * their time from its own, and joins the list in their place. A trace
 * written by mxprof holds each thread's slices in the same order, so
 * `mxprof report` gets the same figures from it.
 *
 * The list of a thread keeps its last NEST_MAX slices: a slice that ends
 * after more than that many others with no parent ended inside it (a
 * loop's slices under one long range, with no level between) keeps the
 * time of the oldest ones as its own.
 *
 * Used by the aggregates (agg.c) on the drain thread or in the mxprof
 * command; not thread-safe; allocates.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NEST_MAX 65536

struct done {
	uint64_t t0, t1; /* ns */
};

struct nest_thread {
	uint64_t key;
	struct done *v;
	size_t n, cap;
};

struct nest {
	struct nest_thread *t;
	size_t n, cap;
	size_t last; /* the thread of the last call: most calls repeat it */
};

struct nest *nest_create(void)
{
	return calloc(1, sizeof(struct nest));
}

void nest_reset(struct nest *ns)
{
	for (size_t i = 0; ns && i < ns->n; i++) {
		ns->t[i].n = 0;
	}
}

void nest_destroy(struct nest *ns)
{
	for (size_t i = 0; ns && i < ns->n; i++) {
		free(ns->t[i].v);
	}
	if (ns) {
		free(ns->t);
		free(ns);
	}
}

static struct nest_thread *thread_of(struct nest *ns, uint64_t key)
{
	if (ns->last < ns->n && ns->t[ns->last].key == key) {
		return &ns->t[ns->last];
	}
	for (size_t i = 0; i < ns->n; i++) {
		if (ns->t[i].key == key) {
			ns->last = i;
			return &ns->t[i];
		}
	}
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 16;
		struct nest_thread *t = realloc(ns->t, cap * sizeof(*t));

		if (!t) {
			return NULL;
		}
		ns->t = t;
		ns->cap = cap;
	}
	memset(&ns->t[ns->n], 0, sizeof(ns->t[0]));
	ns->t[ns->n].key = key;
	ns->last = ns->n;
	return &ns->t[ns->n++];
}

/* The self time of slice [t0, t1) of thread t, which joins its list. */
static inline int64_t self_on(struct nest_thread *t, uint64_t t0, uint64_t t1)
{
	uint64_t inner = 0, dur = t1 - t0;

	while (t->n > 0 && t->v[t->n - 1].t0 >= t0 && t->v[t->n - 1].t1 <= t1) {
		inner += t->v[t->n - 1].t1 - t->v[t->n - 1].t0;
		t->n--;
	}
	if (__builtin_expect(t->n == t->cap, 0)) {
		if (t->cap >= NEST_MAX) {
			/* Forget the oldest half. */
			memmove(t->v, t->v + t->cap / 2,
				(t->cap - t->cap / 2) * sizeof(*t->v));
			t->n = t->cap - t->cap / 2;
		} else {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct done *v = realloc(t->v, cap * sizeof(*v));

			if (v) {
				t->v = v;
				t->cap = cap;
			}
		}
	}
	if (t->n < t->cap) {
		t->v[t->n++] = (struct done){t0, t1};
	}
	return inner < dur ? (int64_t)(dur - inner) : 0;
}

int64_t nest_self(struct nest *ns, uint64_t thread, uint64_t t0, uint64_t dur)
{
	struct nest_thread *t = ns ? thread_of(ns, thread) : NULL;

	return t ? self_on(t, t0, t0 + dur) : (int64_t)dur;
}

void nest_selves(struct nest *ns, uint64_t thread, const struct coll_rec *rec,
		 size_t n, int64_t *self)
{
	struct nest_thread *t = ns ? thread_of(ns, thread) : NULL;

	for (size_t i = 0; i < n; i++, rec++) {
		uint64_t dur = (int64_t)rec->t1 > 0 ? rec->t1 : 0;
		if (rec->kind != COLL_SPAN && rec->kind != COLL_FRAME) {
			self[i] = 0;
		} else if (t) {
			self[i] = self_on(t, rec->t0, rec->t0 + dur);
		} else {
			self[i] = (int64_t)dur;
		}
	}
}
