/*
 * trace_doc.c - the tokenizer's handlers of the readers (trace_doc.h): what
 * each token means at its place in the document, and the events written
 * on one line, as the library writes them, read in one step (rd_object(),
 * trace_fast.c).
 *
 * A string or number of an event goes through the same functions
 * (tf_string(), tf_number()) whichever way the event is read, so that an
 * event reads the same written either way.
 */
#include <string.h>

#include "trace_doc.h"

static int rd_top(const struct trace_doc *r)
{
	return r->depth ? (int)r->role[r->depth - 1] : -1;
}

static int rd_scalar_ok(struct trace_doc *r)
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
	struct trace_doc *r = ctx;
	int ok = rd_scalar_ok(r);

	if (ok > 0 && rd_top(r) == RD_ARGS && r->key == K_FRAME) {
		r->tf.has_frame = 1;
	}
	return ok >= 0;
}

static int rd_boolean(void *ctx, int b)
{
	struct trace_doc *r = ctx;
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
	struct trace_doc *r = ctx;
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
static void rd_meta(struct trace_doc *r, const unsigned char *s, size_t n)
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
static void rd_event_string(struct trace_doc *r, const unsigned char *s,
			    size_t n)
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
	struct trace_doc *r = ctx;
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
	struct trace_doc *r = ctx;

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
static void rd_event_reset(struct trace_doc *r)
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

static int rd_push(struct trace_doc *r, enum rd_role role)
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
	struct trace_doc *r = ctx;

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
	struct trace_doc *r = ctx;

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
int trace_doc_event_done(struct trace_doc *r)
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
	struct trace_doc *r = ctx;
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
		return trace_doc_event_done(r) == 0;
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
	struct trace_doc *r = ctx;
	long len;

	if (r->skip || rd_top(r) != RD_EVENTS || r->depth + 2 > RD_DEPTH) {
		return 0;
	}
	len = tf_parse(&r->fast, p0, end);
	if (len == 0) {
		return 0;
	}
	tf_to_event(&r->fast, &r->ev);
	return trace_doc_event_done(r) < 0 ? -1 : len;
}

const struct jscan_cb trace_doc_cb = {
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

/* Whether r stands in the list of events (see trace_doc.h). */
int trace_doc_in_events(const struct trace_doc *r)
{
	return !r->skip && rd_top(r) == RD_EVENTS;
}
