/*
 * nest.c - self time: a slice's time minus the time of the slices nested
 * inside it on the same thread, and PyTorch's folding of a child into a
 * parent of the same name.
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
 * PyTorch's slices (sections "aten", "torch annotations" and "autograd":
 * operators, record_function ranges, the autograd engine's rows) count
 * their self time as PyTorch's profiler does, which sees only its own
 * events: a PyTorch slice's self time excludes the PyTorch slices nested
 * in it (the nearest ones, also through a library call between), not the
 * library calls it makes (sgemm_ inside aten::addmm stays addmm's self
 * time, and also sgemm_'s own, in its own section). Every other slice
 * excludes all its direct children, whatever recorded them (hooks,
 * operators, NVTX ranges, API tasks).
 *
 * Folding, as torch.autograd.profiler's _remove_dup_nodes: a PyTorch
 * slice whose only PyTorch child is a direct child of the same name
 * (aten::div_ calling aten::div_ with another overload) takes that
 * child's self time, and the child is taken out of the tables: the
 * caller is told which sample to retract (struct nest_fold), so counts
 * equal key_averages'.
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
#include "files.h"

#define NEST_MAX 65536

struct done {
	uint64_t t0, t1;   /* ns */
	uint64_t torch_in; /* time of the nearest PyTorch slices inside */
	int64_t self;	   /* the self time it was given */
	uint32_t group, name, site_group, site_name;
	uint32_t ntorch; /* how many nearest PyTorch slices it holds */
	uint8_t torch;	 /* a PyTorch slice itself */
};

struct nest_thread {
	uint64_t key;
	struct done *v;
	size_t n, cap;
};

struct nest {
	struct nest_thread *t;
	size_t n, cap;
	size_t last;   /* the thread of the last call: most calls repeat it */
	uint8_t *kind; /* per group id: 0 unknown, 1 PyTorch's, 2 other */
	size_t nkind;
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
		free(ns->kind);
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

/* Non-zero when section group holds PyTorch's slices. */
static int torch_group(struct nest *ns, uint32_t group)
{
	if (group >= ns->nkind) {
		size_t n = (size_t)group + 64;
		uint8_t *k = realloc(ns->kind, n);

		if (!k) {
			return 0;
		}
		memset(k + ns->nkind, 0, n - ns->nkind);
		ns->kind = k;
		ns->nkind = n;
	}
	if (!ns->kind[group]) {
		const char *g = strtab_get(group);

		ns->kind[group] =
			strcmp(g, "aten") == 0 ||
					strcmp(g, "torch annotations") == 0 ||
					strcmp(g, "autograd") == 0
				? 1
				: 2;
	}
	return ns->kind[group] == 1;
}

/* The self time of slice [t0, t1) of thread t, described by s (NULL: no
 * PyTorch slice), which joins its list; *f says which child it folded. */
static inline int64_t self_on(struct nest *ns, struct nest_thread *t,
			      uint64_t t0, uint64_t t1,
			      const struct nest_slice *s, struct nest_fold *f)
{
	uint64_t inner = 0, torch_in = 0, dur = t1 - t0;
	uint32_t ntorch = 0, direct = 0;
	struct done only = {0};

	while (t->n > 0 && t->v[t->n - 1].t0 >= t0 && t->v[t->n - 1].t1 <= t1) {
		const struct done *c = &t->v[t->n - 1];

		inner += c->t1 - c->t0;
		torch_in += c->torch_in;
		ntorch += c->ntorch;
		if (c->torch) {
			direct++;
			only = *c;
		}
		t->n--;
	}
	int torch = s && s->group && torch_group(ns, s->group);
	int64_t self;

	if (f) {
		f->name = 0;
	}
	if (torch) {
		self = torch_in < dur ? (int64_t)(dur - torch_in) : 0;
		if (ntorch == 1 && direct == 1 && only.name == s->name) {
			self += only.self;
			if (f) {
				*f = (struct nest_fold){
					.group = only.group,
					.name = only.name,
					.site_group = only.site_group,
					.site_name = only.site_name,
					.dur = (int64_t)(only.t1 - only.t0),
					.self = only.self};
			}
		}
	} else {
		self = inner < dur ? (int64_t)(dur - inner) : 0;
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
		struct done *d = &t->v[t->n++];

		*d = (struct done){.t0 = t0,
				   .t1 = t1,
				   .self = self,
				   .torch = (uint8_t)torch,
				   .torch_in = torch ? dur : torch_in,
				   .ntorch = torch ? 1 : ntorch};
		if (s) {
			d->group = s->group;
			d->name = s->name;
			d->site_group = s->site_group;
			d->site_name = s->site_name;
		}
	}
	return self;
}

int64_t nest_self(struct nest *ns, uint64_t thread, uint64_t t0, uint64_t dur)
{
	return nest_self_of(ns, thread, t0, dur, NULL, NULL);
}

int64_t nest_self_of(struct nest *ns, uint64_t thread, uint64_t t0,
		     uint64_t dur, const struct nest_slice *s,
		     struct nest_fold *f)
{
	struct nest_thread *t = ns ? thread_of(ns, thread) : NULL;

	if (!t) {
		if (f) {
			f->name = 0;
		}
		return (int64_t)dur;
	}
	return self_on(ns, t, t0, t0 + dur, s, f);
}

void nest_selves(struct nest *ns, uint64_t thread, const struct coll_rec *rec,
		 size_t n, int64_t *self, struct nest_fold *f)
{
	struct nest_thread *t = ns ? thread_of(ns, thread) : NULL;

	for (size_t i = 0; i < n; i++, rec++) {
		uint64_t dur = (int64_t)rec->t1 > 0 ? rec->t1 : 0;
		struct nest_slice s = {.group = rec->group, .name = rec->name};

		f[i].name = 0;
		if (rec->kind != COLL_SPAN && rec->kind != COLL_FRAME) {
			self[i] = 0;
		} else if (t) {
			self[i] = self_on(ns, t, rec->t0, rec->t0 + dur, &s,
					  &f[i]);
		} else {
			self[i] = (int64_t)dur;
		}
	}
}
