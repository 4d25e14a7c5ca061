/*
 * trace_read.c - a streaming reader of the traces mxprof writes.
 *
 * The file (trace_in.c: plain or gzip, a file or a pipe) is fed in 256 KiB
 * chunks to jscan.c's tokenizer, which calls one handler per token
 * (events in the library's own form are read in one step: trace_fast.c);
 * a large plain file's events are also read ahead by threads, segment by
 * segment (trace_par.c), and the scan takes them where it meets a
 * segment's start between two events (rd_par_jump()). A
 * token that a chunk cuts in two is kept and fed again with the next
 * chunk, so a multi-gigabyte trace costs the same memory as a small one. Only
 * the keys the commands need are kept; everything else is skipped by counting
 * nesting levels.
 *
 * The reader knows these places in the document:
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
 * traceEvents list of an object without other keys.
 *
 * A file that stops early (the writer crashed) is told apart from a
 * corrupt one: the tokenizer runs out of input without having met an
 * error, or meets one at a byte from which the rest of the file is NUL bytes (a
 * file that was extended before it was written). Both are "truncated"; the
 * events before the end have been delivered.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "jscan.h"
#include "trace_fast.h"
#include "trace_par.h"

#define RD_CHUNK TRACE_IN_CHUNK
#define RD_DEPTH 8
/* The longest run of input without a complete token. A token that spans
 * chunks is kept in the buffer and scanned again from its start with
 * every chunk, so a long token costs time quadratic in its length (and
 * the buffer grows with it); no trace has a string or number near this
 * long. */
#define RD_TOKEN_MAX (1024 * 1024)

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

struct rd {
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

static int rd_top(const struct rd *r)
{
	return r->depth ? (int)r->role[r->depth - 1] : -1;
}

static int rd_scalar_ok(struct rd *r)
{
	if (r->skip) {
		return 0;
	}
	/* A scalar at the top level, or in a top-level list, means the file
	 * is not a trace. */
	if (r->depth == 0 || (r->depth == 1 && rd_top(r) == RD_EVENTS)) {
		r->not_trace = 1;
		return -1;
	}
	return 1;
}

static int rd_null(void *ctx)
{
	struct rd *r = ctx;
	int ok = rd_scalar_ok(r);

	if (ok > 0 && rd_top(r) == RD_ARGS && r->key == K_FRAME) {
		r->tf.has_frame = 1;
	}
	return ok >= 0;
}

static int rd_boolean(void *ctx, int b)
{
	struct rd *r = ctx;
	int ok = rd_scalar_ok(r);

	if (ok <= 0) {
		return ok == 0;
	}
	switch (rd_top(r)) {
	case RD_ARGS:
		if (r->key == K_ERROR) {
			r->tf.has_error = 1;
			r->tf.error = b;
		} else if (r->key == K_FRAME) {
			r->tf.has_frame = 1;
		}
		break;
	case RD_MXPROF:
		if (r->key == K_TRUNCATED) {
			r->meta->timeline_truncated = b;
		}
		break;
	case RD_FRAME:
		if (r->key == K_USER) {
			r->frame.user = b;
		}
		break;
	default:
		break;
	}
	return 1;
}

static int rd_number(void *ctx, const char *s, size_t n)
{
	struct rd *r = ctx;
	int ok = rd_scalar_ok(r);
	int64_t v;

	if (ok <= 0) {
		return ok == 0;
	}
	switch (rd_top(r)) {
	case RD_EVENT:
	case RD_ARGS:
		tf_number(&r->tf, rd_top(r) == RD_EVENT ? TF_EVENT : TF_ARGS,
			  r->key, s, n);
		break;
	case RD_ROOT:
		if (r->key == K_BASE && util_parse_i64(s, n, &v) == 0) {
			r->meta->has_base = 1;
			r->meta->base_ns = v;
		}
		break;
	case RD_MXPROF:
		if (r->key == K_DROPPED && util_parse_i64(s, n, &v) == 0) {
			r->meta->dropped = v > 0 ? (uint64_t)v : 0;
		} else if (r->key == K_PID && util_parse_i64(s, n, &v) == 0) {
			r->meta->mx_pid = v;
		}
		break;
	case RD_DIST:
		if (r->key == K_RANK && util_parse_i64(s, n, &v) == 0) {
			r->meta->has_rank = 1;
			r->meta->rank = v;
		}
		break;
	case RD_FRAME:
		if (r->key == K_PARENT) {
			r->frame.has_parent =
				tf_frame_id(s, n, &r->frame.parent) == 0;
		} else if (r->key == K_USER) {
			r->frame.user = !(n == 1 && s[0] == '0');
		}
		break;
	default:
		break;
	}
	return 1;
}

/* Keeps a string member of the top level as metadata (cli.h). */
static void rd_meta(struct rd *r, const unsigned char *s, size_t n)
{
	struct trace_meta *m = r->meta;
	size_t kl = strlen(r->root_key);

	if (strcmp(r->root_key, "displayTimeUnit") == 0 ||
	    strcmp(r->root_key, "traceName") == 0 || memchr(s, 0, n) != NULL ||
	    m->meta_len + kl + n + 2 > sizeof(m->meta)) {
		return;
	}
	memcpy(m->meta + m->meta_len, r->root_key, kl + 1);
	m->meta_len += kl + 1;
	memcpy(m->meta + m->meta_len, s, n);
	m->meta_len += n;
	m->meta[m->meta_len++] = 0;
}

/* A string member of the event (or its args) the handlers read: kept in
 * r->tf, its text copied into r->ev at once (it lives only during the
 * call). */
static void rd_event_string(struct rd *r, const unsigned char *s, size_t n)
{
	int slot = tf_string(&r->tf, rd_top(r) == RD_EVENT ? TF_EVENT : TF_ARGS,
			     r->key, s, n);

	if (slot >= 0) {
		size_t cap;
		char *f = tf_field(&r->ev, (enum tf_str)slot, &cap);

		tf_copy(f, cap, s, n);
	}
}

static int rd_string(void *ctx, const unsigned char *s, size_t n)
{
	struct rd *r = ctx;
	int ok = rd_scalar_ok(r);

	if (ok <= 0) {
		return ok == 0;
	}
	switch (rd_top(r)) {
	case RD_EVENT:
	case RD_ARGS:
		rd_event_string(r, s, n);
		break;
	case RD_FRAME:
		if (r->key == K_NAME) {
			tf_copy(r->frame.name, sizeof(r->frame.name), s, n);
		} else if (r->key == K_CATEGORY) {
			tf_copy(r->frame.category, sizeof(r->frame.category), s,
				n);
		} else if (r->key == K_PARENT) {
			r->frame.has_parent =
				tf_frame_id((const char *)s, n,
					    &r->frame.parent) == 0;
		}
		break;
	case RD_MXPROF:
		if (r->key == K_HOST) {
			tf_copy(r->meta->host, sizeof(r->meta->host), s, n);
		}
		break;
	case RD_ROOT:
		rd_meta(r, s, n);
		break;
	default:
		break;
	}
	return 1;
}

static int rd_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct rd *r = ctx;

	if (r->skip) {
		return 1;
	}
	if (rd_top(r) == RD_FRAMES) {
		/* The key of a frame is its id. */
		r->key = K_OTHER;
		r->frame_id_ok =
			tf_frame_id((const char *)k, n, &r->frame.id) == 0;
		return 1;
	}
	r->key = tf_classify(k, n);
	if (rd_top(r) == RD_ROOT) {
		tf_copy(r->root_key, sizeof(r->root_key), k, n);
	}
	return 1;
}

/* Starts an event for the handlers. */
static void rd_event_reset(struct rd *r)
{
	struct trace_event *ev = &r->ev;

	ev->name[0] = ev->cat[0] = ev->group[0] = 0;
	ev->args_group[0] = ev->args_name[0] = 0;
	tf_reset(&r->tf);
}

static void rd_frame_reset(struct trace_frame *f)
{
	f->name[0] = f->category[0] = 0;
	f->has_parent = f->user = 0;
	f->parent = 0;
}

static int rd_push(struct rd *r, enum rd_role role)
{
	if (r->depth >= RD_DEPTH) {
		r->skip = 1;
		return 1;
	}
	r->role[r->depth++] = role;
	r->key = K_OTHER;
	return 1;
}

static int rd_start_map(void *ctx)
{
	struct rd *r = ctx;

	if (r->skip) {
		r->skip++;
		return 1;
	}
	if (r->depth == 0) {
		if (r->seen_root) {
			return 1;
		}
		r->seen_root = 1;
		return rd_push(r, RD_ROOT);
	}
	switch (rd_top(r)) {
	case RD_ROOT:
		if (r->key == K_MXPROF) {
			return rd_push(r, RD_MXPROF);
		}
		if (r->key == K_DIST) {
			return rd_push(r, RD_DIST);
		}
		if (r->key == K_STACK_FRAMES && r->frame_fn) {
			return rd_push(r, RD_FRAMES);
		}
		break;
	case RD_FRAMES:
		rd_frame_reset(&r->frame);
		return rd_push(r, RD_FRAME);
	case RD_EVENTS:
		rd_event_reset(r);
		return rd_push(r, RD_EVENT);
	case RD_EVENT:
		if (r->key == K_ARGS) {
			return rd_push(r, RD_ARGS);
		}
		break;
	default:
		break;
	}
	r->skip = 1;
	return 1;
}

static int rd_start_array(void *ctx)
{
	struct rd *r = ctx;

	if (r->skip) {
		r->skip++;
		return 1;
	}
	if (r->depth == 0) {
		if (r->seen_root) {
			return 1;
		}
		/* The array form: the document is the list of events. */
		r->seen_root = 1;
		r->seen_events = 1;
		return rd_push(r, RD_EVENTS);
	}
	if (rd_top(r) == RD_ROOT && r->key == K_TRACE_EVENTS) {
		r->seen_events = 1;
		return rd_push(r, RD_EVENTS);
	}
	r->skip = 1;
	return 1;
}

/* The end of the event in r->ev, read by the scan or the fast path: back
 * in the list of events, the event handed to the callback when it has a
 * phase. Returns 0, or -1 when the callback asked to stop. */
static int rd_event_done(struct rd *r)
{
	r->key = K_OTHER;
	if (r->ev.ph && r->fn(&r->ev, r->opaque) < 0) {
		r->cb_failed = 1;
		return -1;
	}
	return 0;
}

static int rd_end(void *ctx)
{
	struct rd *r = ctx;
	int role;

	if (r->skip) {
		r->skip--;
		return 1;
	}
	if (r->depth == 0) {
		return 1;
	}
	role = r->role[--r->depth];
	if (role == RD_EVENT) {
		tf_numbers_to_event(&r->tf, &r->ev);
		return rd_event_done(r) == 0;
	}
	/* Back in the parent map: its next key comes before any value. */
	r->key = K_OTHER;
	if (role == RD_FRAME) {
		if (r->frame_id_ok && r->frame_fn(&r->frame, r->opaque) < 0) {
			r->cb_failed = 1;
			return 0;
		}
	} else if (role == RD_ROOT || r->depth == 0) {
		r->root_closed = 1;
	}
	return 1;
}

/* jscan's object handler (jscan.h): an event of RD_EVENTS read whole by
 * the fast path (trace_fast.c), or 0 to leave the object to the scan, or
 * -1 when the event callback asked to stop. */
static long rd_object(void *ctx, const unsigned char *p0,
		      const unsigned char *end)
{
	struct rd *r = ctx;
	long len;

	if (r->skip || rd_top(r) != RD_EVENTS || r->depth + 2 > RD_DEPTH) {
		return 0;
	}
	len = tf_parse(&r->fast, p0, end);
	if (len == 0) {
		return 0;
	}
	tf_to_event(&r->fast, &r->ev);
	return rd_event_done(r) < 0 ? -1 : len;
}

static const struct jscan_cb rd_callbacks = {
	.null = rd_null,
	.boolean = rd_boolean,
	.number = rd_number,
	.string = rd_string,
	.start_map = rd_start_map,
	.map_key = rd_map_key,
	.end_map = rd_end,
	.start_array = rd_start_array,
	.end_array = rd_end,
	.object = rd_object,
};

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
static int rd_feed(struct rd *r, struct jscan *js, struct trace_in *in,
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

/* Starts the threads that read a plain file's events ahead
 * (trace_par.c), or returns NULL: the file is read here alone. */
static struct tpar *rd_par_start(struct trace_in *in)
{
	struct stat sb;

	if (in->gz || fstat(in->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		return NULL;
	}
	return tpar_start(in->fd, (uint64_t)sb.st_size);
}

/*
 * At *pos, where a segment of par starts, with have bytes unconsumed:
 * when the scan stands between two values of the events list, hands the
 * events a thread read from the segment to the callback and moves the
 * scan and the input to where that thread stopped (*pos); else leaves
 * both as they are. Returns 0, or -1 when the callback asked to stop or
 * the input cannot be moved (after one line on stderr).
 */
static int rd_par_jump(struct rd *r, struct jscan *js, struct tpar *par,
		       struct trace_in *in, size_t have, uint64_t *pos)
{
	const struct tpar_seg *g;
	int ret = 0;

	if (have || r->skip || rd_top(r) != RD_EVENTS ||
	    !jscan_array_value(js)) {
		tpar_done(par);
		return 0;
	}
	g = tpar_take(par);
	for (size_t i = 0; i < g->n; i++) {
		tf_to_event(&g->recs[i], &r->ev);
		if (rd_event_done(r) < 0) {
			ret = -1;
			goto out;
		}
	}
	if (g->stop != *pos) {
		if (lseek(in->fd, (off_t)g->stop, SEEK_SET) < 0) {
			util_err("%s: %s", in->path, strerror(errno));
			in->failed = 1;
			ret = -1;
			goto out;
		}
		jscan_skip_values(js, g->stop, g->after_value, g->n);
		*pos = g->stop;
	}
out:
	tpar_done(par);
	return ret;
}

/* trace_read_file(), and the frames of stackFrames to frame_fn (cli.h). */
enum trace_status trace_read_stacks(const char *path, trace_event_fn fn,
				    trace_frame_fn frame_fn, void *opaque,
				    struct trace_meta *meta, uint64_t *trunc_at)
{
	struct rd *r = NULL;
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
	jscan_init(&js, &rd_callbacks, NULL);
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

	par = rd_par_start(&in);
	for (;;) {
		/* Reads end where the next segment starts, and where a read
		 * of a whole chunk would (so that the check below is made
		 * where it always was). */
		size_t want = TRACE_IN_CHUNK - (size_t)(total % TRACE_IN_CHUNK);
		uint64_t at, bound = par ? tpar_bound(par) : UINT64_MAX;

		if (bound - total < want) {
			want = (size_t)(bound - total);
		}
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
