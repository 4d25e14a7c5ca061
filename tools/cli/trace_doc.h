/*
 * trace_doc.h - the places of a trace document that the readers know, and
 * the tokenizer's handlers that keep what the commands need of them
 * (trace_doc.c), for trace_read.c's scan.
 *
 *   {                                   RD_ROOT
 *     "stackFrames": {                  RD_FRAMES (only for a frame_fn)
 *       "7": { "name": .., "parent": "3" }, RD_FRAME
 *     },
 *     "traceEvents": [                  RD_EVENTS
 *       { "ph": .., "args": { .. } },   RD_EVENT, RD_ARGS
 *     ],
 *     "mxprof": { .. },                 RD_MXPROF
 *     "distributedInfo": { .. }         RD_DIST
 *   }
 *
 * The array form of the format, a bare list of events, is read as the
 * traceEvents list of an object without other keys. Only the keys the
 * commands need are kept; everything else is skipped by counting nesting
 * levels.
 */
#ifndef MXPROF_TRACE_DOC_H
#define MXPROF_TRACE_DOC_H

#include "cli.h"
#include "jscan.h"
#include "trace_fast.h"

#define RD_DEPTH 8

enum rd_role {
	RD_ROOT,
	RD_EVENTS,
	RD_EVENT,
	RD_ARGS,
	RD_MXPROF,
	RD_DIST,
	RD_FRAMES,
	RD_FRAME,
};

/* What the handlers know of the document so far (jscan's ctx). */
struct trace_doc {
	trace_event_fn fn;
	trace_frame_fn frame_fn; /* NULL: stackFrames is skipped */
	void *opaque;
	struct trace_meta *meta;
	struct trace_event ev;
	struct tf_event tf;   /* the event the handlers read */
	struct tf_event fast; /* the event the fast path read */
	struct trace_frame frame;
	int frame_id_ok; /* the frame's key is a decimal id */
	enum rd_role role[RD_DEPTH];
	int depth;	    /* entries used in role[] */
	unsigned long skip; /* nesting levels inside an ignored value */
	enum rd_key key;    /* the last key of the innermost map */
	char root_key[256]; /* the last key of the top level */
	int seen_root, seen_events, root_closed;
	int not_trace; /* not an object or a list of events */
	int cb_failed; /* the event callback asked to stop */
};

/* The handlers; their ctx is a struct trace_doc whose fn, frame_fn, opaque
 * and meta are set, the rest zero. */
extern const struct jscan_cb trace_doc_cb;

/* Ends the event in r->ev (read by the handlers, the fast path or a
 * thread): back in the list of events, hands it to r->fn when it has a
 * phase. Returns 0, or -1 when the callback asked to stop (cb_failed is
 * then set). */
int trace_doc_event_done(struct trace_doc *r);

/* Returns 1 when r stands in the list of events, nothing skipped, where
 * the handlers would read an event, else 0. This function can't fail. */
int trace_doc_in_events(const struct trace_doc *r);

#endif /* MXPROF_TRACE_DOC_H */
