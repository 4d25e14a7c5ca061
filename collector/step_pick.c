/*
 * step_pick.c - some steps of a recorded run, picked after the fact: the
 * trace and the tables of mxprof_dump_steps() and mxprof_dumps_steps(),
 * as `mxprof report --steps LIST` gives them from a trace.
 *
 * The rule is report's (tools/cli/report_steps.c), on the journal
 * instead of a trace: a first pass finds the step records
 * (spans of cat user_annotation named STEP_NAME in the steps' group, N
 * in their arg, or "ProfilerStep#N" in a journal of before) whose N the list
 * holds, and notes their intervals; then a step's own record is kept
 * when its N is in the list, any other span, instant or counter when it
 * began inside one of those intervals (on any thread: a step is a span
 * of time, as the library's window is), and a record with no time of
 * its own (a stack) always. The list is coll_steps_parse_list()'s, as
 * report's is.
 *
 * The journal holds the CPU's records, not the GPU activity a source
 * keeps in memory: the trace's source events are picked by their start
 * (chrome.c asks step_pick_keep_ns() through struct coll_trace), while
 * the tables hold the journal's sections only (no GPU sections).
 *
 * Used by dump.c and drain.c on the drain thread, owner held; calls
 * journal.c (reading), agg.c, stacks.c, strtab.c and steps.c's parser
 * only. Allocates; not hot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "files.h"

#define STEP_PREFIX "ProfilerStep#"
#define STEP_BY_ARG UINT64_MAX

struct step_pick {
	struct coll_steps sel;
	/* Per journal string id: the N of "ProfilerStep#N" + 1 (0: not a
	 * step's name; STEP_BY_ARG: STEP_NAME, whose records in the steps'
	 * group carry N in arg), and the id in this process's string
	 * table. */
	uint64_t *step_n;
	uint32_t steps_group; /* STEPS_GROUP's journal id + 1, 0: not seen */
	uint32_t *local;
	uint32_t nids, cap;
	struct span {
		uint64_t t0, t1; /* ns, as the journal's records */
		uint64_t n;
	} * s;
	size_t n, cap_s;
	int err;	/* negative errno */
	char held[512]; /* the steps found, as "3-5,9" */
	/* The second pass's. */
	struct agg *agg;
	struct stack_pends *pends;
};

static int grow_ids(struct step_pick *p, uint32_t id)
{
	if (id < p->cap) {
		return 0;
	}
	uint32_t cap = p->cap ? p->cap : 256;

	while (cap <= id) {
		cap *= 2;
	}
	uint64_t *n = realloc(p->step_n, cap * sizeof(*n));

	if (n) {
		p->step_n = n;
	}
	uint32_t *l = realloc(p->local, cap * sizeof(*l));

	if (l) {
		p->local = l;
	}
	if (!n || !l) {
		return -1;
	}
	memset(p->step_n + p->cap, 0, (cap - p->cap) * sizeof(*n));
	memset(p->local + p->cap, 0, (cap - p->cap) * sizeof(*l));
	p->cap = cap;
	return 0;
}

static void on_str(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct step_pick *p = ctx;
	const size_t k = sizeof(STEP_PREFIX) - 1;

	if (p->err || grow_ids(p, id) < 0) {
		p->err = -ENOMEM;
		return;
	}
	char *copy = strndup(s, len);

	if (!copy) {
		p->err = -ENOMEM;
		return;
	}
	p->local[id] = strtab_intern(copy);
	if (id >= p->nids) {
		p->nids = id + 1;
	}
	if (strcmp(copy, STEP_NAME) == 0) {
		p->step_n[id] = STEP_BY_ARG;
	} else if (strcmp(copy, STEPS_GROUP) == 0) {
		p->steps_group = id + 1;
	} else if (len > k && strncmp(copy, STEP_PREFIX, k) == 0 &&
		   copy[k] >= '0' && copy[k] <= '9') {
		char *end;
		unsigned long long n = strtoull(copy + k, &end, 10);

		if (!*end && n < UINT64_MAX - 1) {
			p->step_n[id] = n + 1;
		}
	}
	free(copy);
}

/* The N of step record r, or -1 when r is no step's. */
static int64_t step_of(const struct step_pick *p, const struct coll_rec *r)
{
	if (r->kind != COLL_SPAN || r->cat != COLL_CAT_USER ||
	    r->name >= p->nids || !p->step_n[r->name]) {
		return -1;
	}
	if (p->step_n[r->name] == STEP_BY_ARG) {
		/* One name for every step: its number is in arg. */
		return p->steps_group && r->group == p->steps_group - 1
			       ? (int64_t)r->arg
			       : -1;
	}
	return (int64_t)(p->step_n[r->name] - 1);
}

static void on_scan(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct step_pick *p = ctx;

	(void)tid;
	for (size_t i = 0; i < n && !p->err; i++) {
		int64_t num = step_of(p, &r[i]);

		if (num < 0 || !coll_steps_keeps(&p->sel, (uint64_t)num)) {
			continue;
		}
		if (p->n == p->cap_s) {
			size_t cap = p->cap_s ? p->cap_s * 2 : 64;
			void *s = realloc(p->s, cap * sizeof(*p->s));

			if (!s) {
				p->err = -ENOMEM;
				return;
			}
			p->s = s;
			p->cap_s = cap;
		}
		/* A journal's span holds its duration in t1. */
		p->s[p->n++] = (struct span){.t0 = r[i].t0,
					     .t1 = r[i].t0 + r[i].t1,
					     .n = (uint64_t)num};
	}
}

static int cmp_t0(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

static int cmp_n(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The steps found, as ranges ("3-5,9"), "..." past what fits. */
static void held_text(struct step_pick *p)
{
	uint64_t *ns = malloc(p->n * sizeof(*ns));
	size_t len = 0;

	p->held[0] = 0;
	if (!ns) {
		return;
	}
	for (size_t i = 0; i < p->n; i++) {
		ns[i] = p->s[i].n;
	}
	qsort(ns, p->n, sizeof(*ns), cmp_n);
	for (size_t i = 0; i < p->n;) {
		size_t j = i;

		while (j + 1 < p->n && ns[j + 1] <= ns[j] + 1) {
			j++;
		}
		char item[48];
		int w = ns[j] == ns[i] ? snprintf(item, sizeof(item), "%s%llu",
						  len ? "," : "",
						  (unsigned long long)ns[i])
				       : snprintf(item, sizeof(item),
						  "%s%llu-%llu", len ? "," : "",
						  (unsigned long long)ns[i],
						  (unsigned long long)ns[j]);
		if (len + (size_t)w + 4 >= sizeof(p->held)) {
			snprintf(p->held + len, sizeof(p->held) - len, ",...");
			break;
		}
		memcpy(p->held + len, item, (size_t)w + 1);
		len += (size_t)w;
		i = j + 1;
	}
	free(ns);
}

struct step_pick *step_pick_open(const char *list, const char *journal,
				 int *err)
{
	static const struct journal_ops ops = {.str = on_str, .recs = on_scan};
	struct step_pick *p = calloc(1, sizeof(*p));
	struct journal_header hdr;

	*err = 0;
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	if (coll_steps_parse_list(list, &p->sel) < 0) {
		*err = -EINVAL;
	} else if (!journal) {
		*err = -ENODATA;
	} else {
		int rc = journal_read(journal, &ops, p, &hdr);

		*err = rc < 0 ? rc : p->err;
	}
	if (*err == 0 && p->n == 0) {
		*err = -ENODATA;
	}
	if (*err) {
		step_pick_close(p);
		return NULL;
	}
	qsort(p->s, p->n, sizeof(*p->s), cmp_t0);
	held_text(p);
	return p;
}

int step_pick_keep_ns(const void *pick, uint64_t ns)
{
	const struct step_pick *p = pick;
	/* The last interval that starts at or before ns. */
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->s[mid].t0 <= ns) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo > 0 && ns < p->s[lo - 1].t1;
}

int step_pick_keep(const struct step_pick *p, const struct coll_rec *r)
{
	if (r->kind != COLL_SPAN && r->kind != COLL_FRAME &&
	    r->kind != COLL_INSTANT && r->kind != COLL_COUNTER) {
		return 1;
	}
	int64_t n = step_of(p, r);

	if (n >= 0) {
		return coll_steps_keeps(&p->sel, (uint64_t)n);
	}
	return step_pick_keep_ns(p, r->t0);
}

const char *step_pick_held(const struct step_pick *p)
{
	return p->held;
}

const char **step_pick_meta(const char *const *pairs, const struct step_pick *p)
{
	size_t n = 0, k = 0;

	while (pairs && pairs[n]) {
		n += 2;
	}
	const char **v = malloc((n + 3) * sizeof(*v));

	if (!v) {
		return NULL;
	}
	for (size_t i = 0; i < n; i += 2) {
		if (strcmp(pairs[i], "steps") != 0) {
			v[k++] = pairs[i];
			v[k++] = pairs[i + 1];
		}
	}
	v[k++] = "steps";
	v[k++] = p->held;
	v[k] = NULL;
	return v;
}

/* The second pass: the records kept, with this process's string ids and
 * their call sites, into p->agg. */
static void on_agg(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct step_pick *p = ctx;

	for (size_t i = 0; i < n && !p->err; i++) {
		struct coll_rec c = r[i];
		uint32_t id = 0, sg = 0, sn = 0;

		if (c.kind == COLL_STACK && !p->pends &&
		    !(p->pends = stack_pends_create())) {
			p->err = -ENOMEM;
			return;
		}
		if (p->pends) {
			id = stack_pends_rec(p->pends, tid, &c);
		}
		if (c.kind == COLL_STACK || !step_pick_keep(p, &c)) {
			continue;
		}
		c.name = c.name < p->nids ? p->local[c.name] : 0;
		c.group = c.group < p->nids ? p->local[c.group] : 0;
		uint32_t site = id ? stack_site(id) : 0;

		if (!site ||
		    stack_site_row(c.group, c.name, site, &sg, &sn) < 0) {
			sg = sn = 0;
		}
		struct agg_sample s = agg_rec_sample(&c);

		if (agg_add_site(p->agg, (uint32_t)tid, c.t0, &s, sg, sn) < 0) {
			p->err = -ENOMEM;
		}
	}
}

struct agg *step_pick_agg(struct step_pick *p, const char *journal)
{
	static const struct journal_ops ops = {.recs = on_agg};
	struct journal_header hdr;

	p->agg = agg_create();
	if (!p->agg) {
		return NULL;
	}
	p->err = 0;
	if (journal_read(journal, &ops, p, &hdr) < 0 || p->err) {
		agg_destroy(p->agg);
		p->agg = NULL;
	}
	stack_pends_destroy(p->pends);
	p->pends = NULL;
	struct agg *a = p->agg;

	p->agg = NULL;
	return a;
}

void step_pick_close(struct step_pick *p)
{
	if (p) {
		agg_destroy(p->agg);
		stack_pends_destroy(p->pends);
		free(p->step_n);
		free(p->local);
		free(p->s);
		free(p);
	}
}
