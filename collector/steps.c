/*
 * steps.c - training steps and step windows, for every source.
 *
 * A step ends where a marker ends: an annotation, an NVTX range or a
 * hooked function whose name matches MXPROF_STEP (by default
 * "Optimizer.step#*", PyTorch's optimizer step). The source that sees a
 * marker end calls coll_step_end() on that thread, after pushing the
 * marker's own record. Steps are numbered from 0 in the order they end in
 * the process, as PyTorch numbers its ProfilerStep#N.
 *
 * Each step kept becomes a record of its own on the thread that ran it: a
 * span "ProfilerStep#N" of section STEPS_GROUP (cat user_annotation), from
 * the thread's previous step end to the marker's end (each a few ns
 * later: STEP_MARGIN). A thread's first step starts at its first record,
 * which only the drain knows: the record goes out with t0 = 0 and the
 * drain (steps_drain_rec()) puts the thread's first record's start there.
 *
 * Memory per step is O(1): every step's record has the one name
 * STEP_NAME ("ProfilerStep") and its number in arg, and the trace writer
 * (chrome.c, for dumps, flight mode's windows and recoveries alike)
 * writes "ProfilerStep#N"; the tables keep the step times apart from
 * their rows, in bounded memory (agg.c, stepstat.c), and a full ring's
 * tally keys a step's row by its number (tally_step_group()).
 *
 * A step window (MXPROF_STEPS) says which steps are kept. Recording goes
 * on in every step (so that the markers are seen, and a warmup step runs
 * the machinery as torch.profiler's does), and whether a step is kept is
 * known when it begins: coll_step_end() notes in window.c when keeping
 * starts and stops (window_steps_note()), and the drain leaves out every
 * record that began outside (window_steps_keeps()), before the journal
 * and the tables see it; sources whose records come late ask
 * coll_recording_at(), which knows the step windows too.
 *
 * The drain also notes which steps the trace holds, as the metadata key
 * "steps" ("3-5,9").
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "internal.h"

#define MARKER_IDS 65536

static char glob[256] = "Optimizer.step#*";
static struct coll_steps window; /* COLL_STEPS_ALL until configured */
static uint64_t count;		 /* steps ended, atomic */
static uint32_t group_id;	 /* STEPS_GROUP's string id */
static uint32_t name_id;	 /* STEP_NAME's */
/* coll_step_marker_id()'s answers: 0 not asked yet, 1 no, 2 yes. */
static uint8_t marker_ids[MARKER_IDS];
/* The calling thread's previous step end, in ticks; 0: none yet. */
static __thread uint64_t prev_end;

/* The drain's: the steps the trace holds, as ranges, and the threads'
 * first records (ticks) for their first steps. */
static struct {
	struct {
		uint64_t lo, hi;
	} * r;
	size_t n, cap;
	int changed; /* since the metadata "steps" was last written */
} held;

#define FIRSTS 1024
static struct {
	int tid;
	uint64_t t0;
} firsts[FIRSTS];

int coll_steps_keeps(const struct coll_steps *w, uint64_t n)
{
	switch (w->mode) {
	case COLL_STEPS_SCHEDULE: {
		uint64_t cycle = w->wait + w->warmup + w->active;
		if (cycle == 0 || (w->repeat && n / cycle >= w->repeat)) {
			return 0;
		}
		return n % cycle >= w->wait + w->warmup;
	}
	case COLL_STEPS_LIST:
		for (unsigned i = 0; i < w->nranges; i++) {
			if (n >= w->ranges[i].lo && n <= w->ranges[i].hi) {
				return 1;
			}
		}
		return 0;
	default:
		return 1;
	}
}

/* A whole decimal number at *p (no sign), moving *p past it. */
static int number(const char **p, uint64_t *out)
{
	char *end;

	if (**p < '0' || **p > '9') {
		return -EINVAL;
	}
	errno = 0;
	unsigned long long v = strtoull(*p, &end, 10);
	if (errno || v > UINT32_MAX) {
		return -EINVAL;
	}
	*out = v;
	*p = end;
	return 0;
}

int coll_steps_parse_list(const char *s, struct coll_steps *w)
{
	const char *p = s;

	memset(w, 0, sizeof(*w));
	w->mode = COLL_STEPS_LIST;
	while (1) {
		uint64_t lo, hi;
		if (number(&p, &lo) < 0) {
			goto bad;
		}
		hi = lo;
		if (*p == '-') {
			p++;
			if (number(&p, &hi) < 0 || hi < lo) {
				goto bad;
			}
		}
		if (w->nranges == COLL_STEPS_RANGES) {
			goto bad;
		}
		w->ranges[w->nranges].lo = lo;
		w->ranges[w->nranges++].hi = hi;
		if (*p == 0) {
			return 0;
		}
		if (*p++ != ',') {
			goto bad;
		}
	}
bad:
	memset(w, 0, sizeof(*w));
	return -EINVAL;
}

int coll_steps_parse(const char *s, struct coll_steps *w)
{
	const char *p = s;
	uint64_t v[4] = {0, 0, 0, 1};
	int n = 0;

	if (strncmp(s, "list:", 5) == 0) {
		return coll_steps_parse_list(s + 5, w);
	}
	memset(w, 0, sizeof(*w));
	while (n < 4) {
		if (number(&p, &v[n]) < 0) {
			return -EINVAL;
		}
		n++;
		if (*p == 0) {
			break;
		}
		if (*p++ != ':') {
			return -EINVAL;
		}
	}
	if (*p || n < 3 || v[2] == 0) {
		return -EINVAL;
	}
	w->mode = COLL_STEPS_SCHEDULE;
	w->wait = v[0];
	w->warmup = v[1];
	w->active = v[2];
	w->repeat = v[3];
	return 0;
}

void coll_steps_config(const char *g, const struct coll_steps *w)
{
	if (g && *g && strlen(g) < sizeof(glob)) {
		strcpy(glob, g);
	}
	memset(marker_ids, 0, sizeof(marker_ids));
	group_id = strtab_intern(STEPS_GROUP);
	name_id = strtab_intern(STEP_NAME);
	tally_step_group(group_id);
	if (w) {
		window = *w;
	}
	if (window.mode != COLL_STEPS_ALL) {
		window_steps_start(coll_steps_keeps(&window, 0));
	}
}

uint64_t coll_steps_count(void)
{
	return __atomic_load_n(&count, __ATOMIC_RELAXED);
}

const char *coll_steps_glob(void)
{
	return glob;
}

int coll_step_marker(const char *name)
{
	return name && fnmatch(glob, name, 0) == 0;
}

int coll_step_marker_id(uint32_t id)
{
	if (id >= MARKER_IDS) {
		return coll_step_marker(strtab_get(id));
	}
	uint8_t m = __atomic_load_n(&marker_ids[id], __ATOMIC_RELAXED);
	if (__builtin_expect(m == 0, 0)) {
		/* Two threads asking at once write the same answer. */
		m = coll_step_marker(strtab_get(id)) ? 2 : 1;
		__atomic_store_n(&marker_ids[id], m, __ATOMIC_RELAXED);
	}
	return m == 2;
}

/*
 * A step's slice ends STEP_MARGIN ticks after its marker, and the next
 * begins STEP_MARGIN ticks after that (a few ns, far less than any call
 * takes): viewers that add ts and dur in floating point (speedscope)
 * would otherwise find the marker ending after its step, or a step ending
 * after the next began.
 */
#define STEP_MARGIN 8

void coll_step_end(uint64_t t1)
{
	uint64_t n = __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
	uint64_t t0 = prev_end;
	int keep = coll_steps_keeps(&window, n);

	prev_end = t1 + 2 * STEP_MARGIN;
	if (keep && coll_active()) {
		struct coll_rec r = {.t0 = t0,
				     .t1 = t1 + STEP_MARGIN,
				     .name = name_id,
				     .group = group_id,
				     .kind = COLL_SPAN,
				     .cat = COLL_CAT_USER,
				     .arg = (uint32_t)n};
		ring_push(&r);
	}
	if (window.mode != COLL_STEPS_ALL) {
		int next = coll_steps_keeps(&window, n + 1);
		if (next != keep) {
			window_steps_note(next, t1, clock_now_ns());
		}
	}
}

/* ---- the drain's side -------------------------------------------------- */

int steps_filtering(void)
{
	return window.mode != COLL_STEPS_ALL;
}

uint32_t steps_group(void)
{
	return group_id;
}

uint64_t steps_thread_first(int tid)
{
	unsigned h = (unsigned)tid % FIRSTS;

	for (unsigned k = 0; k < FIRSTS; k++, h = (h + 1) % FIRSTS) {
		if (firsts[h].tid == tid) {
			return firsts[h].t0;
		}
		if (firsts[h].tid == 0) {
			break;
		}
	}
	return UINT64_MAX;
}

void steps_thread_seen(int tid, uint64_t t0)
{
	unsigned h = (unsigned)tid % FIRSTS;

	if (tid == 0 || t0 == UINT64_MAX) {
		return;
	}
	for (unsigned k = 0; k < FIRSTS; k++, h = (h + 1) % FIRSTS) {
		if (firsts[h].tid == tid) {
			if (t0 < firsts[h].t0) {
				firsts[h].t0 = t0;
			}
			return;
		}
		if (firsts[h].tid == 0) {
			firsts[h].tid = tid;
			firsts[h].t0 = t0;
			return;
		}
	}
	/* Full: a thread's first step then starts at its marker. */
}

/* Adds step n to the steps the trace holds; returns 0 or -ENOMEM. */
static int held_add(uint64_t n)
{
	for (size_t i = 0; i < held.n; i++) {
		if (n >= held.r[i].lo && n <= held.r[i].hi) {
			return 0;
		}
		if (n + 1 == held.r[i].lo) {
			held.r[i].lo = n;
			return 0;
		}
		if (n == held.r[i].hi + 1) {
			held.r[i].hi = n;
			if (i + 1 < held.n && held.r[i + 1].lo == n + 1) {
				held.r[i].hi = held.r[i + 1].hi;
				memmove(&held.r[i + 1], &held.r[i + 2],
					(held.n - i - 2) * sizeof(*held.r));
				held.n--;
			}
			return 0;
		}
		if (n < held.r[i].lo) {
			break;
		}
	}
	if (held.n == held.cap) {
		size_t cap = held.cap ? held.cap * 2 : 16;
		void *p = realloc(held.r, cap * sizeof(*held.r));
		if (!p) {
			return -ENOMEM;
		}
		held.r = p;
		held.cap = cap;
	}
	size_t at = 0;
	while (at < held.n && held.r[at].lo < n) {
		at++;
	}
	memmove(&held.r[at + 1], &held.r[at], (held.n - at) * sizeof(*held.r));
	held.r[at].lo = held.r[at].hi = n;
	held.n++;
	return 0;
}

/* The metadata "steps": the ranges held, "..." past what fits. */
static void held_meta(void)
{
	char buf[META_VALUE_MAX];
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < held.n; i++) {
		char one[48];
		if (held.r[i].lo == held.r[i].hi) {
			snprintf(one, sizeof(one), "%s%llu", i ? "," : "",
				 (unsigned long long)held.r[i].lo);
		} else {
			snprintf(one, sizeof(one), "%s%llu-%llu", i ? "," : "",
				 (unsigned long long)held.r[i].lo,
				 (unsigned long long)held.r[i].hi);
		}
		size_t k = strlen(one);
		if (at + k + 4 >= sizeof(buf)) {
			memcpy(buf + at, ",...", 5);
			break;
		}
		memcpy(buf + at, one, k + 1);
		at += k;
	}
	meta_set("steps", buf);
}

void steps_drain_rec(struct coll_rec *r, uint64_t first)
{
	if (r->t0 == 0) {
		r->t0 = first < r->t1 ? first : r->t1;
	}
	if (held_add(r->arg) == 0) {
		held.changed = 1;
	}
}

/* The metadata is written when it is read, not at every step's end: one
 * snprintf and a copy a step were a twentieth of the drain thread's time
 * in a training loop. */
void steps_meta_sync(void)
{
	if (held.changed) {
		held.changed = 0;
		held_meta();
	}
}

void steps_fork_child(void)
{
	memset(firsts, 0, sizeof(firsts));
	held.n = 0;
	held.changed = 0;
}
