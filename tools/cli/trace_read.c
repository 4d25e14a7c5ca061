/*
 * trace_read.c - a streaming reader of the traces mxprof writes.
 *
 * The file (trace_in.c: plain or gzip, a file or a pipe) is fed in 256 KiB
 * chunks to jscan.c's tokenizer, which calls one handler per token
 * (events in the library's own form are read in one step: trace_fast.c);
 * a large plain file's events are also read ahead by threads, segment by
 * segment (trace_par.c), and the scan takes them where it meets a
 * segment's start between two events (rd_par_jump()). A token that a
 * chunk cuts in two is kept and fed again with the next chunk, so a
 * multi-gigabyte trace costs the same memory as a small one.
 *
 * What the tokens mean at their place in the document is trace_doc.c's
 * (the handlers, and the fast path); this file is the scan: the reads,
 * the threads' segments, and how the input ended.
 *
 * A file that stops early (the writer crashed) is told apart from a
 * corrupt one: the tokenizer runs out of input without having met an
 * error, or meets one at a byte from which the rest of the file is NUL bytes (a
 * file that was extended before it was written). Both are "truncated"; the
 * events before the end have been delivered.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jscan.h"
#include "trace_doc.h"
#include "trace_fast.h"
#include "trace_par.h"

/* The longest run of input without a complete token. A token that spans
 * chunks is kept in the buffer and scanned again from its start with
 * every chunk, so a long token costs time quadratic in its length (and
 * the buffer grows with it); no trace has a string or number near this
 * long. */
#define RD_TOKEN_MAX (1024 * 1024)

/* Prints the one warning for a trace that ends early. This function can't
 * fail. */
void trace_read_warn_truncated(const char *path, uint64_t at)
{
	util_err("%s: truncated at byte %llu; tables cover the events before "
		 "it",
		 path, (unsigned long long)at);
}

/* Streams the events of the trace at path to fn and fills meta. Returns
 * TRACE_COMPLETE, TRACE_TRUNCATED (*trunc_at set) or TRACE_BAD (printed);
 * see cli.h. */
enum trace_status trace_read_file(const char *path, trace_event_fn fn,
				  void *opaque, struct trace_meta *meta,
				  uint64_t *trunc_at)
{
	return trace_read_stacks(path, fn, NULL, opaque, meta, trunc_at);
}

/*
 * Scans buf[0..len) (the input from js->base on) and sorts out how it
 * went. Returns 1 when the document ended, 0 when more is wanted (or
 * *truncated was set: the rest of the input is NUL bytes from an error
 * on), or -1 after one line on stderr.
 */
static int rd_feed(struct trace_doc *r, struct jscan *js, struct trace_in *in,
		   unsigned char *buf, size_t len, size_t cap, int last,
		   size_t *used, int *truncated, uint64_t *trunc_at)
{
	uint64_t at0 = js->base;
	enum jscan_status st = jscan_feed(js, buf, len, last, used);

	if (st == JSCAN_DONE || r->root_closed) {
		return 1;
	}
	if (st == JSCAN_MORE) {
		return 0;
	}
	if (r->cb_failed) {
		return -1;
	}
	if (r->not_trace) {
		util_err("%s: not an mxprof trace (the top level is neither "
			 "an object nor a list of events)",
			 in->path);
		return -1;
	}
	if (st == JSCAN_ERROR && r->seen_events &&
	    trace_in_rest_is_nul(in, buf, (size_t)(js->err_at - at0), len,
				 cap)) {
		*truncated = 1;
		*trunc_at = js->err_at;
		return 0;
	}
	util_err("%s: not valid JSON at byte %llu (%s)", in->path,
		 (unsigned long long)js->err_at, js->err);
	return -1;
}

/*
 * At *pos, where a segment of par starts, with have bytes unconsumed:
 * when the scan stands between two values of the events list, hands the
 * events a thread read from the segment to the callback and moves the
 * scan and the input to where that thread stopped (*pos); else leaves
 * both as they are. Returns 0, or -1 when the callback asked to stop or
 * the input cannot be moved (after one line on stderr).
 */
static int rd_par_jump(struct trace_doc *r, struct jscan *js, struct tpar *par,
		       struct trace_in *in, size_t have, uint64_t *pos)
{
	const struct tpar_seg *g;
	int ret = 0;

	if (have || !trace_doc_in_events(r) || !jscan_array_value(js)) {
		tpar_done(par);
		return 0;
	}
	g = tpar_take(par);
	for (size_t i = 0; i < g->n; i++) {
		tf_to_event(&g->recs[i], &r->ev);
		if (trace_doc_event_done(r) < 0) {
			ret = -1;
			goto out;
		}
	}
	ret = tpar_move(g, in, js, pos);
out:
	tpar_done(par);
	return ret;
}

/* trace_read_file(), and the frames of stackFrames to frame_fn (cli.h). */
enum trace_status trace_read_stacks(const char *path, trace_event_fn fn,
				    trace_frame_fn frame_fn, void *opaque,
				    struct trace_meta *meta, uint64_t *trunc_at)
{
	struct trace_doc *r = NULL;
	struct trace_in in = {.fd = -1};
	struct jscan js;
	unsigned char *buf = NULL;
	size_t cap = 0, have = 0, used;
	enum trace_status ret = TRACE_BAD;
	uint64_t total = 0, quiet = 0, checked = 0;
	struct tpar *par = NULL;
	unsigned long calls = 0;
	ssize_t n;
	int truncated = 0, done = 0;

	memset(meta, 0, sizeof(*meta));
	meta->mx_pid = -1;
	*trunc_at = 0;
	jscan_init(&js, &trace_doc_cb, NULL);
	if (trace_in_open(&in, path) < 0) {
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		util_err("%s: out of memory", path);
		goto out;
	}
	r->fn = fn;
	r->frame_fn = frame_fn;
	r->opaque = opaque;
	r->meta = meta;
	js.ctx = r;

	par = tpar_start(&in, tpar_read_fast, NULL);
	for (;;) {
		/* Reads end where the next segment starts, and where a read
		 * of a whole chunk would (so that the check below is made
		 * where it always was). */
		size_t want = tpar_want(par, total);
		uint64_t at;

		n = trace_in_more_n(&in, &buf, &cap, have, want);
		if (n <= 0) {
			break;
		}
		total += (uint64_t)n;
		have += (size_t)n;
		done = rd_feed(r, &js, &in, buf, have, cap, 0, &used,
			       &truncated, trunc_at);
		if (done < 0) {
			goto out;
		}
		if (done || truncated) {
			break;
		}
		/* Keep the token the chunk cut short for the next one. */
		have -= used;
		memmove(buf, buf + used, have);
		at = total;
		/* A segment's events may end where the next one starts. */
		while (par && total == tpar_bound(par)) {
			if (rd_par_jump(r, &js, par, &in, have, &total) < 0) {
				goto out;
			}
		}
		if (total % TRACE_IN_CHUNK && (size_t)n == want) {
			continue;
		}
		/* Whole chunks without a complete token: the token (or
		 * blank run) is longer than quiet. */
		quiet = js.tokens == calls ? quiet + (at - checked) : 0;
		checked = total;
		calls = js.tokens;
		if (quiet > RD_TOKEN_MAX) {
			util_err("%s: a string or number longer than %d MiB "
				 "before byte %llu; not an mxprof trace",
				 path, RD_TOKEN_MAX >> 20,
				 (unsigned long long)total);
			goto out;
		}
	}
	if (in.failed) {
		goto out;
	}
	if (!truncated && !done) {
		/* The end of the input: a number there is whole. */
		done = rd_feed(r, &js, &in, buf, have, cap, 1, &used,
			       &truncated, trunc_at);
		if (done < 0) {
			goto out;
		}
		if (total == 0 && in.gz_truncated) {
			util_err("%s: the gzip stream is cut short before any "
				 "data (truncated file)",
				 path);
			goto out;
		}
		if (total == 0) {
			util_err("%s: empty file, not a trace", path);
			goto out;
		}
		if (!done && !truncated) {
			truncated = 1;
			*trunc_at = total;
		}
	}
	if (!r->seen_events) {
		if (truncated) {
			util_err("%s: ends at byte %llu before its traceEvents "
				 "list (truncated, or not a trace)",
				 path, (unsigned long long)*trunc_at);
		} else {
			util_err("%s: not an mxprof trace (no traceEvents "
				 "list)",
				 path);
		}
		goto out;
	}
	ret = truncated ? TRACE_TRUNCATED : TRACE_COMPLETE;
out:
	tpar_stop(par);
	jscan_free(&js);
	trace_in_close(&in);
	free(buf);
	free(r);
	return ret;
}
