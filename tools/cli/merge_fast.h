/*
 * merge_fast.h - merge's second pass, shared by its scan (merge_copy.c)
 * and the copy of an event in one step (merge_fast.c): the buffer an
 * event is written into, and what its numbers are rewritten by.
 */
#ifndef MXPROF_MERGE_FAST_H
#define MXPROF_MERGE_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "trace_par.h"

/* A growable byte buffer. */
struct merge_buf {
	char *p;
	size_t len, cap;
	int oom;
};

/* What an event's numbers are rewritten by: the file, and the offset of
 * its flow ids. Read-only while the file is copied, so the threads share
 * it. */
struct merge_rules {
	const struct merge_file *f;
	uint64_t id_offset;
};

/* Makes room for n more bytes in b. Returns 0, or -1 and sets b->oom
 * (then every later write to b is dropped). */
int merge_buf_reserve(struct merge_buf *b, size_t n);

/* Appends s[0..n) to b (dropped when memory is short: b->oom). */
static inline void merge_buf_put(struct merge_buf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap && merge_buf_reserve(b, n) < 0) {
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Writes the event's "sf" s[0..n) moved by f's frame offset into b,
 * quoted when it was a string, and returns 1; returns 0 (nothing written)
 * when f has no offset, or the sf is not decimal and stays as it is. This
 * function can't fail (memory: b->oom). */
int merge_fast_sf(const struct merge_file *f, struct merge_buf *b,
		  const unsigned char *s, size_t n, int quote);

/* Writes the number s[0..n) of the event's member of code key (see
 * merge_fast_key()) into b, rewritten when it is the pid (*pid set to
 * the pid read), ts, a flow id or the frame node. This function can't
 * fail (memory: b->oom). */
void merge_fast_number(const struct merge_rules *r, struct merge_buf *b,
		       int key, const char *s, size_t n, int64_t *pid);

/* Returns the code of an event's key k[0..n): 1 pid, 2 ts, 3 id, 4 args,
 * 5 ph, 6 name, 7 sf, 0 any other. This function can't fail. */
int merge_fast_key(const unsigned char *k, size_t n);

/*
 * Appends the event whose '{' is at p0, up to end, to b, rewritten, when
 * it is written as the library writes it (see merge_fast.c). Returns its
 * length, or 0 with b's length as it was when it is in any other form
 * or end cuts it short. Safe in any thread (r is only read).
 */
long merge_fast_event(const struct merge_rules *r, struct merge_buf *b,
		      const unsigned char *p0, const unsigned char *end);

/* A tpar_event_fn (trace_par.h): the event copied by merge_fast_event()
 * into the segment's text, after ",\n" unless it is the segment's first;
 * arg is the file's struct merge_rules. */
long merge_fast_par_event(void *arg, struct tpar_seg *g, const unsigned char *p,
			  const unsigned char *end);

#endif /* MXPROF_MERGE_FAST_H */
