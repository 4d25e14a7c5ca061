/*
 * trace_par.h - the events of a large plain trace read ahead by threads
 * (trace_par.c), for the scans that read every event: trace_read.c (report,
 * diff, merge's first pass) and merge_copy.c (merge's second pass).
 *
 * A scan starts the threads with what they do to each event (a
 * tpar_event_fn: read it into a record, or write it rewritten), asks
 * tpar_bound() where the next segment starts and stops its reads there
 * (tpar_want()). Meeting it between two values of the events list, it
 * takes the segment's work (tpar_take()), hands it on and goes on from its
 * stop (tpar_move()); otherwise it reads on as if there were none. Either
 * way it then calls tpar_done(), and tpar_bound() names the next segment.
 */
#ifndef MXPROF_TRACE_PAR_H
#define MXPROF_TRACE_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "jscan.h"
#include "trace_fast.h"

/* What a worker made of a segment: n events, then it stopped at offset
 * stop of the file, after a value (after_value: a ',' or the list's end
 * comes next) or where a value starts (the ',' before it taken). The
 * events are in recs (tpar_read_fast(), their strings pointing into the
 * segment's buffer of len bytes) or in text (text_len bytes, written by
 * another tpar_event_fn); both stay valid until tpar_done(). */
struct tpar_seg {
	struct tf_event *recs;
	size_t n, len, rec_cap;
	unsigned char *text;
	size_t text_len, text_cap;
	uint64_t stop;
	int after_value;
};

/* What a worker does with the event whose '{' is at p, up to end, the
 * segment's g->n + 1st: keeps it in g (recs or text, grown with
 * realloc(); tpar_stop() frees them) and returns its length, or returns
 * 0 with g as it was when the event is in a form it does not take, end
 * cuts it short or memory is short (the scan then reads it). Called from
 * the workers, with arg as tpar_start() was given it. */
typedef long (*tpar_event_fn)(void *arg, struct tpar_seg *g,
			      const unsigned char *p, const unsigned char *end);

/* A tpar_event_fn: the event read by tf_parse() into g->recs[g->n]. arg
 * is unused. */
long tpar_read_fast(void *arg, struct tpar_seg *g, const unsigned char *p,
		    const unsigned char *end);

struct tpar;

/*
 * Cuts in, when it is a plain regular file, into segments and starts the
 * threads that read them, calling fn(arg, ...) for each event
 * (MXPROF_READ_THREADS, default: the processors online; MXPROF_READ_SEGMENT
 * bytes a segment, for tests; by default 2 MiB or less, see trace_par.c).
 * Returns NULL when there is nothing to gain (gzip, a pipe, one thread, a
 * small file, no line that starts with '{') or when memory or threads are
 * short: the scan then reads alone. Call from the scan's thread, with in
 * at its start.
 */
struct tpar *tpar_start(struct trace_in *in, tpar_event_fn fn, void *arg);

/* Returns the offset where the next segment starts, or UINT64_MAX when
 * none is left (t NULL included). This function can't fail. */
uint64_t tpar_bound(const struct tpar *t);

/* Returns how many bytes a scan that has read total bytes reads next: up
 * to the next chunk's end (TRACE_IN_CHUNK), and not past tpar_bound() (t
 * NULL accepted). This function can't fail. */
size_t tpar_want(const struct tpar *t, uint64_t total);

/* Waits for the events of the segment at tpar_bound() and returns them.
 * This function can't fail. */
const struct tpar_seg *tpar_take(struct tpar *t);

/* For a scan at *pos that took g: moves in and js to where g stopped (see
 * jscan_skip_values()), and *pos with them. Returns 0, or -1 after one
 * line on stderr (the file cannot be moved; in->failed is set). */
int tpar_move(const struct tpar_seg *g, struct trace_in *in, struct jscan *js,
	      uint64_t *pos);

/* Lets the segment at tpar_bound() go (taken or not), and moves
 * tpar_bound() on. This function can't fail. */
void tpar_done(struct tpar *t);

/* Stops the threads and frees t (NULL accepted). This function can't
 * fail. */
void tpar_stop(struct tpar *t);

#endif /* MXPROF_TRACE_PAR_H */
