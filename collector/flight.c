/*
 * flight.c - flight mode's timeline: the newest window of records, kept
 * in memory in bounded space, and written into a journal when a dump
 * asks for it.
 *
 * Without flight mode, the drain appends every record to the journal on
 * disk (journal.c) and a dump turns the journal into the trace. In flight
 * mode (MXPROF_FLIGHT) the drain hands the records here instead
 * (flight_recs()), and nothing is written until a dump: dump.c then
 * creates the journal as it always does, lets flight_fill() write the
 * window into it, writes the trace from it with the usual writers, and
 * removes it. So the trace of a flight dump is made by the same writer,
 * from the same journal format, as every other trace. The tables are not
 * kept here: the aggregates count every record as always, for the whole
 * run.
 *
 * The store. Records are kept in the journal's own compact form (J_PACK
 * entries, jpack.c) in chunks of CHUNK bytes, and the chunks in
 * segments, oldest first. A new segment begins at each step drained
 * (MXPROF_FLIGHT=<N>steps), each eighth of the window ("<N>s"), and when
 * the current one holds an eighth of the memory allowed. Whole segments
 * go, oldest first: once every record in them began before the window's
 * start, and whenever the store would pass MXPROF_FLIGHT_MB. Names and
 * thread names are not kept here: the string table and threads.c hold
 * every one for the life of the process, and the journal a dump writes
 * gets all of them, so a dump can always resolve them.
 *
 * The window a dump writes. Records are drained in the order their
 * threads' rings are read, not in time order, so segments overlap in
 * time; what a dump writes is therefore chosen by time: every record kept
 * that began at or after the window's start (and, for a slow step, at or
 * before the step's end), as a step window (window.c) leaves out what
 * began outside it. No slice in the file began before the window, and
 * with <N>steps the file holds exactly the last N whole ProfilerStep#N
 * slices. The window's start:
 *
 *   <N>steps   the start of the oldest of the newest N steps that ended
 *              (every step ended so far while fewer than N did);
 *   <N>s       N seconds before the dump's end (now, or the slow step's
 *              end).
 *
 * When segments went for the memory bound, the start moves past every
 * record they held (the floor), and with <N>steps on to the next step's
 * start: what is written is still whole and the newest, only shorter,
 * and the trace's metadata says so.
 *
 * Everything here is the drain thread's, under the owner lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A chunk: 64 KiB, a size malloc hands back and reuses without
 * fragmenting. */
#define CHUNK	   (64u << 10)
#define CHUNK_DATA (CHUNK - 2 * sizeof(void *))
#define ENTRY_HEAD 16 /* u32 J_PACK, u32 length, u32 tid, u32 count */
#define ENTRY_RECS ((CHUNK_DATA - ENTRY_HEAD - 8) / JPACK_REC_MAX)
#define SPARE_MAX  4	      /* free chunks kept for the next ones */
#define STEPS_KEPT 1024	      /* steps remembered beyond the window's N */
#define STEPS_MAX  (1u << 16) /* steps remembered at most */

struct chunk {
	struct chunk *next;
	size_t n;
	unsigned char d[CHUNK_DATA];
};

struct seg {
	struct seg *next;
	struct chunk *head, *tail;
	size_t nchunks;
	uint64_t min_t0, max_t0; /* of its records, ns */
	uint64_t opened_ns;	 /* when it began (trace ns) */
};

struct step {
	uint64_t n, t0, t1; /* number; start and end, trace ns */
};

static struct {
	int mode;   /* enum coll_flight */
	uint64_t n; /* seconds or steps */
	uint64_t max_chunks;
	struct seg *oldest, *newest;
	size_t nchunks, nspare;
	struct chunk *spare;
	int rotate;	    /* a step was drained: a new segment next */
	uint64_t floor;	    /* records at or before it went for memory */
	int cut;	    /* segments went for memory */
	uint64_t pin;	    /* keep records from here (a trigger waits) */
	uint64_t records;   /* ever kept */
	struct step *steps; /* a ring of the newest steps, by arrival */
	size_t nsteps, cap_steps, at_steps;
	struct coll_rec *dec; /* ENTRY_RECS records, for flight_fill() */
} F = {.pin = UINT64_MAX};

int flight_setup(const struct coll_config *cfg)
{
	flight_reset();
	F.mode = cfg->flight_mode;
	F.n = cfg->flight_n;
	F.max_chunks = cfg->flight_bytes / CHUNK;
	if (F.max_chunks < 16) {
		F.max_chunks = 16; /* 1 MiB: eight segments of two chunks */
	}
	if (F.mode == COLL_FLIGHT_OFF) {
		return 0;
	}
	/* A window of more steps than STEPS_MAX is kept by its memory bound
	 * alone once that many ended (steps_start() knows too few). */
	F.cap_steps = (F.mode == COLL_FLIGHT_STEPS ? F.n + 16 : 0) + STEPS_KEPT;
	if (F.cap_steps > STEPS_MAX) {
		F.cap_steps = STEPS_MAX;
	}
	F.steps = calloc(F.cap_steps, sizeof(*F.steps));
	F.dec = malloc(ENTRY_RECS * sizeof(*F.dec));
	return F.steps && F.dec ? 0 : -ENOMEM;
}

int flight_on(void)
{
	return F.mode != COLL_FLIGHT_OFF;
}

static void chunk_free(struct chunk *c)
{
	if (F.nspare < SPARE_MAX) {
		c->next = F.spare;
		F.spare = c;
		F.nspare++;
	} else {
		free(c);
	}
}

static struct chunk *chunk_new(void)
{
	struct chunk *c = F.spare;

	if (c) {
		F.spare = c->next;
		F.nspare--;
	} else if (!(c = malloc(sizeof(*c)))) {
		return NULL;
	}
	c->next = NULL;
	c->n = 0;
	return c;
}

/* Drops the oldest segment. */
static void seg_drop(void)
{
	struct seg *s = F.oldest;

	F.oldest = s->next;
	if (!F.oldest) {
		F.newest = NULL;
	}
	for (struct chunk *c = s->head, *next; c; c = next) {
		next = c->next;
		chunk_free(c);
	}
	F.nchunks -= s->nchunks;
	free(s);
}

void flight_reset(void)
{
	while (F.oldest) {
		seg_drop();
	}
	while (F.spare) {
		struct chunk *c = F.spare;
		F.spare = c->next;
		free(c);
	}
	free(F.steps);
	free(F.dec);
	memset(&F, 0, sizeof(F));
	F.pin = UINT64_MAX;
}

/* The newest time a record may have began at and be in trace ns now. */
static uint64_t now_ns(void)
{
	uint64_t now = clock_now_ns(), base = clock_base_mono_ns();

	return now > base ? now - base : 0;
}

static int by_number_down(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

/* The start of the oldest of the newest n steps numbered at most hi; 0
 * while fewer than n such steps are known. For a dump: sorts a copy. */
static uint64_t steps_start(uint64_t n, uint64_t hi)
{
	struct step *v = malloc((F.nsteps + 1) * sizeof(*v));
	size_t have = 0;
	uint64_t start = UINT64_MAX;

	if (!v || n == 0) {
		free(v);
		return 0;
	}
	for (size_t i = 0; i < F.nsteps; i++) {
		if (F.steps[i].n <= hi) {
			v[have++] = F.steps[i];
		}
	}
	if (have >= n) {
		qsort(v, have, sizeof(*v), by_number_down);
		for (size_t i = 0; i < n; i++) {
			start = v[i].t0 < start ? v[i].t0 : start;
		}
	}
	free(v);
	return start == UINT64_MAX ? 0 : start;
}

/* The same for dropping, cheaply and never later than the true start:
 * the earliest start among the newest n + 16 steps to arrive (steps
 * arrive nearly in their order). */
static uint64_t steps_start_quick(uint64_t n)
{
	uint64_t start = UINT64_MAX, look = n + 16;

	if (F.nsteps < look) {
		return 0;
	}
	for (uint64_t k = 1; k <= look; k++) {
		const struct step *s =
			&F.steps[(F.at_steps + F.cap_steps - k) % F.cap_steps];
		start = s->t0 < start ? s->t0 : start;
	}
	return start;
}

/* The window's start as of now, for dropping what is older. */
static uint64_t window_start_now(void)
{
	if (F.mode == COLL_FLIGHT_STEPS) {
		return steps_start_quick(F.n);
	}
	uint64_t now = now_ns(), span = F.n * 1000000000ull;

	return now > span ? now - span : 0;
}

/* Segments whose records all began before the window (or the pinned
 * start of a trigger that waits) go; the newest stays. */
static void trim_window(void)
{
	uint64_t start = window_start_now();

	if (F.pin < start) {
		start = F.pin;
	}
	while (F.oldest && F.oldest != F.newest && F.oldest->max_t0 < start) {
		seg_drop();
	}
}

/* Past the memory bound: the oldest segments go, and the floor rises. */
static void trim_memory(void)
{
	while (F.nchunks > F.max_chunks && F.oldest && F.oldest != F.newest) {
		if (F.oldest->max_t0 > F.floor || !F.cut) {
			F.floor = F.oldest->max_t0 > F.floor ? F.oldest->max_t0
							     : F.floor;
		}
		F.cut = 1;
		seg_drop();
	}
}

/* Begins a new segment. Returns 0 or -ENOMEM. */
static int seg_open(uint64_t now)
{
	struct seg *s = calloc(1, sizeof(*s));

	if (!s) {
		return -ENOMEM;
	}
	s->min_t0 = UINT64_MAX;
	s->opened_ns = now;
	if (F.newest) {
		F.newest->next = s;
	} else {
		F.oldest = s;
	}
	F.newest = s;
	F.rotate = 0;
	return 0;
}

/* Does the newest segment end here? */
static int seg_full(uint64_t now)
{
	const struct seg *s = F.newest;

	if (!s || F.rotate) {
		return 1;
	}
	if (s->nchunks * 8 >= F.max_chunks) {
		return 1;
	}
	return F.mode == COLL_FLIGHT_SECONDS &&
	       now - s->opened_ns >= F.n * (1000000000ull / 8);
}

/* Room for need bytes in the newest segment's last chunk. */
static unsigned char *room(size_t need)
{
	struct seg *s = F.newest;

	if (s->tail && CHUNK_DATA - s->tail->n >= need) {
		return s->tail->d + s->tail->n;
	}
	struct chunk *c = chunk_new();
	if (!c) {
		return NULL;
	}
	if (s->tail) {
		s->tail->next = c;
	} else {
		s->head = c;
	}
	s->tail = c;
	s->nchunks++;
	F.nchunks++;
	return c->d;
}

void flight_recs(int tid, const struct coll_rec *r, size_t n)
{
	uint64_t now = now_ns();

	if (n == 0) {
		return;
	}
	if (seg_full(now)) {
		trim_window();
		if (seg_open(now) < 0) {
			return;
		}
	}
	while (n > 0) {
		size_t k = n < ENTRY_RECS ? n : ENTRY_RECS;
		unsigned char *p = room(ENTRY_HEAD + 8 + k * JPACK_REC_MAX);
		if (!p) {
			return; /* no memory: the tables still count them */
		}
		uint32_t head[4] = {J_PACK, 0, (uint32_t)tid, (uint32_t)k};
		size_t len = 8 + jpack_encode(r, k, p + ENTRY_HEAD);
		size_t padded = (len + 7u) & ~(size_t)7u;
		head[1] = (uint32_t)len;
		memcpy(p, head, ENTRY_HEAD);
		memset(p + 8 + len, 0, padded - len);
		F.newest->tail->n += 8 + padded;
		for (size_t i = 0; i < k; i++) {
			uint64_t t = r[i].t0;
			if (t < F.newest->min_t0) {
				F.newest->min_t0 = t;
			}
			if (t > F.newest->max_t0) {
				F.newest->max_t0 = t;
			}
		}
		F.records += k;
		r += k;
		n -= k;
	}
	trim_memory();
}

void flight_note_step(uint64_t n, uint64_t t0, uint64_t t1)
{
	if (!F.steps) {
		return;
	}
	F.steps[F.at_steps] = (struct step){n, t0, t1};
	F.at_steps = (F.at_steps + 1) % F.cap_steps;
	if (F.nsteps < F.cap_steps) {
		F.nsteps++;
	}
	/* A new segment at a step, once this one holds a chunk's worth:
	 * short steps share segments (the store keeps a little more than
	 * the window, never more than its bound). */
	if (F.mode == COLL_FLIGHT_STEPS && F.newest &&
	    (F.newest->nchunks > 1 ||
	     (F.newest->tail && F.newest->tail->n >= CHUNK_DATA / 2))) {
		F.rotate = 1;
	}
}

void flight_pin(uint64_t start)
{
	F.pin = start;
}

uint64_t flight_records(void)
{
	return F.records;
}

void flight_window(struct flight_window *w, uint64_t end, uint64_t step_hi)
{
	memset(w, 0, sizeof(*w));
	w->end = end;
	if (F.mode == COLL_FLIGHT_STEPS) {
		w->start = steps_start(F.n, step_hi);
	} else {
		uint64_t e = end == UINT64_MAX ? now_ns() : end;
		uint64_t span = F.n * 1000000000ull;
		w->start = e > span ? e - span : 0;
	}
	if (F.cut && w->start <= F.floor) {
		w->start = F.floor + 1;
		w->cut = 1;
		if (F.mode == COLL_FLIGHT_STEPS) {
			/* On to the next step's start: whole steps only. */
			uint64_t next = UINT64_MAX;
			for (size_t i = 0; i < F.nsteps; i++) {
				const struct step *s = &F.steps[i];
				if (s->t0 >= w->start && s->t0 < next &&
				    s->n <= step_hi) {
					next = s->t0;
				}
			}
			if (next != UINT64_MAX) {
				w->start = next;
			}
		}
	}
	/* The steps it holds whole. */
	w->step_lo = UINT64_MAX;
	for (size_t i = 0; i < F.nsteps; i++) {
		const struct step *s = &F.steps[i];
		if (s->t0 >= w->start && s->t0 <= end && s->n <= step_hi) {
			if (s->n < w->step_lo) {
				w->step_lo = s->n;
			}
			if (s->n >= w->step_hi || w->nsteps == 0) {
				w->step_hi = s->n;
			}
			w->nsteps++;
		}
	}
}

/* Writes the records of one J_PACK entry that began inside w. */
static void fill_entry(struct journal *j, const unsigned char *p,
		       const struct flight_window *w)
{
	uint32_t head[4];
	size_t kept = 0;

	memcpy(head, p, sizeof(head));
	if (head[3] > ENTRY_RECS ||
	    jpack_decode(p + ENTRY_HEAD, head[1] - 8, F.dec, head[3]) < 0) {
		return;
	}
	for (size_t i = 0; i < head[3]; i++) {
		uint64_t t = F.dec[i].t0;
		if (t >= w->start && t <= w->end) {
			F.dec[kept++] = F.dec[i];
		}
	}
	if (kept) {
		journal_recs(j, (int)head[2], F.dec, kept);
	}
}

void flight_fill(struct journal *j, const struct flight_window *w)
{
	if (!F.dec) {
		return;
	}
	for (const struct seg *s = F.oldest; s; s = s->next) {
		if (s->max_t0 < w->start || s->min_t0 > w->end) {
			continue;
		}
		for (const struct chunk *c = s->head; c; c = c->next) {
			for (size_t off = 0; off + ENTRY_HEAD <= c->n;) {
				uint32_t len;
				memcpy(&len, c->d + off + 4, 4);
				fill_entry(j, c->d + off, w);
				off += 8 + ((len + 7u) & ~(size_t)7u);
			}
		}
	}
}

size_t flight_bytes_held(void)
{
	return F.nchunks * (size_t)CHUNK;
}
