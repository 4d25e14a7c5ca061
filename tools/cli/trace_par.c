/*
 * trace_par.c - the events of a large plain trace read ahead by threads.
 *
 * A trace is a list of events, and the library writes one event a line.
 * So the file is cut into segments of about MXPROF_READ_SEGMENT bytes (4
 * MiB), each starting at a line that starts with '{' (found once, by
 * tpar_start()), and worker threads read the segments ahead of the
 * scan, each on a guess: that its segment starts at an event of
 * traceEvents. A worker hands each event to the scan's tpar_event_fn (the
 * fast path's form only: tf_parse() for the readers, merge's rewriting
 * copy for its second pass) and stops at the first thing that is not one,
 * or at its segment's end.
 *
 * Only the scan checks the guess: when it meets a segment's start between
 * two values of the events list, it takes the worker's events in their
 * order and goes on where the worker stopped; otherwise the worker's work
 * is thrown away. Every byte outside the workers' events
 * is read by the scan as before, so an error, a file cut short or any
 * other form is read exactly as without threads, and the events, their
 * order and the tables do not depend on the number of threads.
 *
 * The reader takes the segments in order, so a worker slowed down (its
 * core taken by the reader, or by another program) holds up the segments
 * read after its own: each thread has TPAR_AHEAD segments of room ahead
 * of the reader, so that the others go on meanwhile.
 *
 * Memory: at most TPAR_AHEAD * threads + 2 segments are held (16 MiB of
 * text in all, about as much again of events), whatever the file's size.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_fast.h"
#include "trace_par.h"

/* Segments: 2 MiB, smaller when the segments held (TPAR_AHEAD a thread,
 * and 2) would hold more than TPAR_HELD bytes of text (the events read
 * from a segment take about as much again), and few enough for a small
 * table of their starts. */
#define TPAR_SEGMENT	 (2u << 20)
#define TPAR_HELD	 (16u << 20)
#define TPAR_AHEAD	 4
#define TPAR_SEGMENT_MIN (64u << 10)
#define TPAR_NSEG_MAX	 65536
#define TPAR_THREADS_MAX 64
/* How far past a segment's nominal start a line starting with '{' is
 * looked for, and how many misses in a row end the search. */
#define TPAR_LOOK   (64 * 1024)
#define TPAR_MISSES 4

enum { SLOT_EMPTY, SLOT_RUNNING, SLOT_DONE };

struct tpar_slot {
	struct tpar_seg seg;
	size_t index; /* which segment */
	int state;
	unsigned char *buf;
	size_t buf_cap;
};

struct tpar {
	int fd;
	tpar_event_fn fn;
	void *arg;
	uint64_t *start; /* segment i is [start[i], start[i + 1]) */
	size_t nseg;	 /* start[] has nseg + 1 entries */
	size_t cur;	 /* the segment the reader meets next */
	size_t next;	 /* the segment the next free worker reads */
	size_t nslot;
	struct tpar_slot *slots;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t *threads;
	size_t nthreads;
	int quit;
};

/* The value of environment variable name, a count in [lo, hi], or def. */
static unsigned long tpar_env(const char *name, unsigned long def,
			      unsigned long lo, unsigned long hi)
{
	const char *s = getenv(name);
	unsigned long long v;

	if (!s || !*s || util_parse_uint(s, lo, hi, &v) < 0) {
		return def;
	}
	return (unsigned long)v;
}

/* Returns the offset of the first '{' at or past at that starts a line,
 * looked for up to TPAR_LOOK bytes on, or 0 when there is none. */
static uint64_t tpar_find(int fd, uint64_t at, uint64_t size)
{
	unsigned char w[4096 + 1];
	uint64_t from = at - 1; /* the '\n' before it may be at at - 1 */

	while (from < size && from < at + TPAR_LOOK) {
		ssize_t n = pread(fd, w, sizeof(w), (off_t)from);

		if (n < 2) {
			return 0;
		}
		for (ssize_t i = 0; i + 1 < n; i++) {
			if (w[i] == '\n' && w[i + 1] == '{') {
				return from + (uint64_t)i + 1;
			}
		}
		from += (uint64_t)n - 1;
	}
	return 0;
}

/* The event read by tf_parse() (see trace_par.h). */
long tpar_read_fast(void *arg, struct tpar_seg *g, const unsigned char *p,
		    const unsigned char *end)
{
	(void)arg;
	if (g->n == g->rec_cap) {
		size_t cap = g->rec_cap ? g->rec_cap * 2 : 4096;
		struct tf_event *r = realloc(g->recs, cap * sizeof(*r));

		if (!r) {
			return 0;
		}
		g->recs = r;
		g->rec_cap = cap;
	}
	return tf_parse(&g->recs[g->n], p, end);
}

/* Hands the events from the start of slot s's bytes on to t->fn, as the
 * worker's guess says they are there (see the top of this file). */
static void tpar_read_events(struct tpar *t, struct tpar_slot *s, uint64_t at)
{
	const unsigned char *p = s->buf, *end = s->buf + s->seg.len;
	struct tpar_seg *g = &s->seg;

	g->n = 0;
	g->text_len = 0;
	g->after_value = 0;
	while (p < end && *p == '{') {
		long len = t->fn(t->arg, g, p, end);

		if (len == 0) {
			break;
		}
		g->n++;
		p += len;
		/* After a value: blanks, then ',' and blanks before the next
		 * value, or the reader goes on after this one. */
		const unsigned char *q = p;
		while (q < end &&
		       (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) {
			q++;
		}
		if (q == end || *q != ',') {
			g->after_value = 1;
			break;
		}
		q++;
		while (q < end &&
		       (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) {
			q++;
		}
		p = q;
	}
	g->stop = at + (uint64_t)(p - s->buf);
}

/* Reads segment i into slot s and its events. */
static void tpar_segment(struct tpar *t, struct tpar_slot *s, size_t i)
{
	uint64_t at = t->start[i];
	size_t len = (size_t)(t->start[i + 1] - at), got = 0;

	s->seg.n = 0;
	s->seg.text_len = 0;
	s->seg.after_value = 0;
	s->seg.stop = at;
	s->seg.len = 0;
	if (len > s->buf_cap) {
		unsigned char *b = realloc(s->buf, len);

		if (!b) {
			return;
		}
		s->buf = b;
		s->buf_cap = len;
	}
	while (got < len) {
		ssize_t n = pread(t->fd, s->buf + got, len - got,
				  (off_t)(at + got));

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		got += (size_t)n;
	}
	s->seg.len = got;
	tpar_read_events(t, s, at);
}

static void *tpar_worker(void *arg)
{
	struct tpar *t = arg;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		struct tpar_slot *s;
		size_t i;

		while (!t->quit && t->next < t->nseg &&
		       t->next >= t->cur + t->nslot) {
			pthread_cond_wait(&t->cond, &t->lock);
		}
		if (t->quit || t->next >= t->nseg) {
			break;
		}
		i = t->next++;
		s = &t->slots[i % t->nslot];
		s->index = i;
		s->state = SLOT_RUNNING;
		pthread_mutex_unlock(&t->lock);
		tpar_segment(t, s, i);
		pthread_mutex_lock(&t->lock);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* Finds the segments of the file (see trace_par.h). */
struct tpar *tpar_start(struct trace_in *in, tpar_event_fn fn, void *arg)
{
	struct stat sb;
	uint64_t size;
	int fd = in->fd;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long nt = tpar_env("MXPROF_READ_THREADS",
				    cpus > 0 ? (unsigned long)cpus : 1, 0,
				    TPAR_THREADS_MAX);
	unsigned long seg = TPAR_HELD / (TPAR_AHEAD * nt + 2);
	struct tpar *t;
	sigset_t all, old;
	size_t cap = 0;
	int misses = 0;

	if (in->gz || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		return NULL;
	}
	size = (uint64_t)sb.st_size;
	seg = seg > TPAR_SEGMENT       ? TPAR_SEGMENT
	      : seg < TPAR_SEGMENT_MIN ? TPAR_SEGMENT_MIN
				       : seg;
	/* Tests make segments small, to read small files in many. */
	seg = tpar_env("MXPROF_READ_SEGMENT", seg, 64, 1ul << 30);
	if (size / seg > TPAR_NSEG_MAX) {
		seg = (unsigned long)(size / TPAR_NSEG_MAX);
	}
	if (nt < 2 || size < 2 * (uint64_t)seg) {
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	t->fd = fd;
	t->fn = fn;
	t->arg = arg;
	for (uint64_t at = seg; at < size && misses < TPAR_MISSES; at += seg) {
		uint64_t b = tpar_find(fd, at, size);

		if (!b || (t->nseg && b <= t->start[t->nseg - 1])) {
			misses += !b;
			continue;
		}
		misses = 0;
		if (t->nseg + 2 > cap) {
			size_t nc = cap ? cap * 2 : 64;
			uint64_t *p = realloc(t->start, nc * sizeof(*p));

			if (!p) {
				goto fail;
			}
			t->start = p;
			cap = nc;
		}
		t->start[t->nseg++] = b;
	}
	if (t->nseg == 0) {
		goto fail;
	}
	t->start[t->nseg] = size;
	t->nslot = TPAR_AHEAD * nt + 2;
	t->slots = calloc(t->nslot, sizeof(*t->slots));
	t->threads = calloc(nt, sizeof(*t->threads));
	if (!t->slots || !t->threads) {
		goto fail;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	/* The workers block every signal: mxprof run's handlers, and the
	 * system calls they interrupt, stay with the reader's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t i = 0; i < nt; i++) {
		if (pthread_create(&t->threads[t->nthreads], NULL, tpar_worker,
				   t) == 0) {
			t->nthreads++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (t->nthreads == 0) {
		tpar_stop(t);
		return NULL;
	}
	return t;
fail:
	free(t->start);
	free(t->slots);
	free(t->threads);
	free(t);
	return NULL;
}

/* The start of the segment the reader meets next (see trace_par.h). */
uint64_t tpar_bound(const struct tpar *t)
{
	return t && t->cur < t->nseg ? t->start[t->cur] : UINT64_MAX;
}

/* The size of the scan's next read (see trace_par.h). */
size_t tpar_want(const struct tpar *t, uint64_t total)
{
	size_t want = TRACE_IN_CHUNK - (size_t)(total % TRACE_IN_CHUNK);
	uint64_t bound = tpar_bound(t);

	return bound - total < want ? (size_t)(bound - total) : want;
}

/* Moves the scan past the segment it took (see trace_par.h). */
int tpar_move(const struct tpar_seg *g, struct trace_in *in, struct jscan *js,
	      uint64_t *pos)
{
	if (g->stop == *pos) {
		return 0;
	}
	if (lseek(in->fd, (off_t)g->stop, SEEK_SET) < 0) {
		util_err("%s: %s", in->path, strerror(errno));
		in->failed = 1;
		return -1;
	}
	jscan_skip_values(js, g->stop, g->after_value, g->n);
	*pos = g->stop;
	return 0;
}

/* Waits for the segment at tpar_bound() (see trace_par.h). */
const struct tpar_seg *tpar_take(struct tpar *t)
{
	struct tpar_slot *s = &t->slots[t->cur % t->nslot];

	pthread_mutex_lock(&t->lock);
	while (!(s->index == t->cur && s->state == SLOT_DONE)) {
		pthread_cond_wait(&t->cond, &t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return &s->seg;
}

/* Lets the segment at tpar_bound() go (see trace_par.h). */
void tpar_done(struct tpar *t)
{
	struct tpar_slot *s;

	if (t->cur >= t->nseg) {
		return;
	}
	s = &t->slots[t->cur % t->nslot];
	pthread_mutex_lock(&t->lock);
	if (t->next <= t->cur) {
		/* No worker took it: none will. */
		t->next = t->cur + 1;
	} else {
		while (!(s->index == t->cur && s->state == SLOT_DONE)) {
			pthread_cond_wait(&t->cond, &t->lock);
		}
		s->state = SLOT_EMPTY;
	}
	t->cur++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* Stops the workers and frees t (see trace_par.h). */
void tpar_stop(struct tpar *t)
{
	if (!t) {
		return;
	}
	pthread_mutex_lock(&t->lock);
	t->quit = 1;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	for (size_t i = 0; i < t->nthreads; i++) {
		pthread_join(t->threads[i], NULL);
	}
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	for (size_t i = 0; i < t->nslot; i++) {
		free(t->slots[i].buf);
		free(t->slots[i].seg.recs);
		free(t->slots[i].seg.text);
	}
	free(t->slots);
	free(t->threads);
	free(t->start);
	free(t);
}
