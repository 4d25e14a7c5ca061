/*
 * trace_par.h - the events of a large plain trace read ahead by threads
 * (trace_par.c), for trace_read.c.
 *
 * The reader asks tpar_bound() where the next segment starts and stops
 * its reads there. Meeting it between two values of the events list, it
 * takes the segment's events (tpar_take()) and goes on from their stop;
 * otherwise it reads on as if there were none. Either way it then calls
 * tpar_done(), and tpar_bound() names the next segment.
 */
#ifndef MXPROF_TRACE_PAR_H
#define MXPROF_TRACE_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "trace_fast.h"

/* What a worker read from a segment: n events, then it stopped at offset
 * stop of the file, after a value (after_value: a ',' or the list's end
 * comes next) or where a value starts (the ',' before it taken). The
 * events' strings point into the segment's buffer (len bytes) and stay
 * valid until tpar_done(). */
struct tpar_seg {
	struct tf_event *recs;
	size_t n, len;
	uint64_t stop;
	int after_value;
};

struct tpar;

/*
 * Cuts the plain file fd of size bytes into segments and starts the
 * threads that read them (MXPROF_READ_THREADS, default: the processors
 * online; MXPROF_READ_SEGMENT bytes a segment, for tests; by default
 * 2 MiB or less, see trace_par.c). Returns
 * NULL when there is nothing to gain (one thread, a small file, no line
 * that starts with '{') or when memory or threads are short: the reader
 * then reads alone. Call from the reader's thread.
 */
struct tpar *tpar_start(int fd, uint64_t size);

/* Returns the offset where the next segment starts, or UINT64_MAX when
 * none is left. This function can't fail. */
uint64_t tpar_bound(const struct tpar *t);

/* Waits for the events of the segment at tpar_bound() and returns them.
 * This function can't fail. */
const struct tpar_seg *tpar_take(struct tpar *t);

/* Lets the segment at tpar_bound() go (taken or not), and moves
 * tpar_bound() on. This function can't fail. */
void tpar_done(struct tpar *t);

/* Stops the threads and frees t (NULL accepted). This function can't
 * fail. */
void tpar_stop(struct tpar *t);

#endif /* MXPROF_TRACE_PAR_H */
