/*
 * merge_copy.c - the second pass of mxprof merge: the events of one input,
 * copied into the merged trace and rewritten on the way.
 *
 * jscan.c's handlers rebuild each event of traceEvents as JSON text:
 *   - "pid" through the file's pid map (merge_index_pid());
 *   - "ts" shifted by the file's shift_ns, so that every file shares the
 *     clock of the earliest one;
 *   - numeric flow "id"s moved into a range of their own per file
 *     (idx << 40), so that launch->kernel arrows never join two processes;
 *   - "sf", the event's frame node, moved by the file's frame_offset, as
 *     its stackFrames are (merge_frames.c);
 *   - the process_labels of each process gain its rank, its host and,
 *     when renumbered, its pid before (merge_index_labels()).
 * Strings go through the collector's JSON escaper, so bytes that are not
 * UTF-8 become U+FFFD. An event is kept in a buffer of its own until it
 * closes, then written whole to the output, so that a truncated input
 * adds only whole events.
 *
 * An event written as the library writes it is copied in one step
 * (merge_fast.c). A large plain input's events are copied so by threads
 * ahead of the scan, segment by segment (trace_par.c), into text that the
 * scan writes out where it meets a segment's start between two events
 * (mc_par_jump()), as trace_read.c does with the events it reads.
 */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "jscan.h"
#include "merge_fast.h"
#include "trace_par.h"

#define MC_DEPTH 256

/* Appends the C string s to b. */
static void mc_puts(struct merge_buf *b, const char *s)
{
	merge_buf_put(b, s, strlen(s));
}

/* Writes s[0..n) as a JSON string with the collector's escaper: bytes
 * that are not UTF-8 (a damaged input) become U+FFFD, so that the output
 * always parses. */
static void mc_putstr(struct merge_buf *b, const unsigned char *s, size_t n)
{
	size_t k;

	/* Room for the worst case, then one call. */
	merge_buf_put(b, "\"", 1);
	if (b->oom || merge_buf_reserve(b, n * 6 + 1) < 0) {
		return;
	}
	k = out_json_escape(b->p + b->len, n * 6, (const char *)s, n, NULL);
	b->len += k;
	merge_buf_put(b, "\"", 1);
}

struct mc_copy {
	struct merge_file *f;
	struct merge_rules rules;
	struct merge_buf ev; /* the event being copied */
	struct out *out;     /* whole events go here */
	int depth;	     /* containers open */
	unsigned char is_map[MC_DEPTH];
	unsigned char first[MC_DEPTH];
	int skip;	     /* levels inside something not copied */
	int in_events;	     /* inside the traceEvents array */
	int root_key_events; /* the last root key was traceEvents */
	int key_at3;	     /* event-level key: 1 pid, 2 ts, 3 id, 4 args,
				5 ph, 6 name, 7 sf */
	int args_open;	     /* depth 4 is the args object */
	int key_labels_at4;  /* the last args key was "labels" */
	int ph_m, plabels;
	int64_t pid; /* the event's pid in its file */
	int too_deep;
	uint64_t events;
};

/* Writes the comma before an element or key at the current depth. */
static void mc_sep(struct mc_copy *c)
{
	if (c->depth <= 2) {
		return;
	}
	if (!c->first[c->depth]) {
		if (!c->is_map[c->depth]) {
			merge_buf_put(&c->ev, ",", 1);
		}
	}
	c->first[c->depth] = 0;
}

/* Returns 1 when the current scalar is copied. */
static int mc_copying(struct mc_copy *c)
{
	return !c->skip && c->depth >= 3;
}

static int mc_null(void *ctx)
{
	struct mc_copy *c = ctx;

	if (mc_copying(c)) {
		mc_sep(c);
		mc_puts(&c->ev, "null");
	}
	return 1;
}

static int mc_boolean(void *ctx, int v)
{
	struct mc_copy *c = ctx;

	if (mc_copying(c)) {
		mc_sep(c);
		mc_puts(&c->ev, v ? "true" : "false");
	}
	return 1;
}

/* Writes the number s[0..n), rewritten when it is a member of the event
 * (c->depth and c->key_at3 say where it is). */
static void mc_put_number(struct mc_copy *c, const char *s, size_t n)
{
	if (c->depth == 3) {
		merge_fast_number(&c->rules, &c->ev, c->key_at3, s, n, &c->pid);
	} else {
		merge_buf_put(&c->ev, s, n);
	}
}

static int mc_number(void *ctx, const char *s, size_t n)
{
	struct mc_copy *c = ctx;

	if (mc_copying(c)) {
		mc_sep(c);
		mc_put_number(c, s, n);
	}
	return 1;
}

static int mc_string(void *ctx, const unsigned char *s, size_t n)
{
	struct mc_copy *c = ctx;

	if (!mc_copying(c)) {
		return 1;
	}
	mc_sep(c);
	if (c->depth == 3 && c->key_at3 == 5) {
		c->ph_m = n == 1 && s[0] == 'M';
	} else if (c->depth == 3 && c->key_at3 == 6) {
		c->plabels = n == 14 && memcmp(s, "process_labels", 14) == 0;
	} else if (c->depth == 3 && c->key_at3 == 7 &&
		   merge_fast_sf(c->f, &c->ev, s, n, 1)) {
		return 1;
	} else if (c->depth == 4 && c->args_open && c->key_labels_at4 &&
		   c->ph_m && c->plabels) {
		struct merge_buf nb = {0};
		char tail[TRACE_SHORT_MAX * 2 + 64];

		merge_buf_put(&nb, s, n);
		merge_buf_put(&nb, "", 1); /* a C string for the lookup */
		if (!nb.oom) {
			merge_index_labels(c->f, c->pid, nb.p, tail,
					   sizeof(tail));
			nb.len--;
			mc_puts(&nb, tail);
		}
		if (nb.oom) {
			c->ev.oom = 1;
			free(nb.p);
			return 1;
		}
		mc_putstr(&c->ev, (const unsigned char *)nb.p, nb.len);
		free(nb.p);
		return 1;
	}
	mc_putstr(&c->ev, s, n);
	return 1;
}

static int mc_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct mc_copy *c = ctx;

	if (c->skip) {
		return 1;
	}
	if (c->depth == 1) {
		c->root_key_events =
			n == 11 && memcmp(k, "traceEvents", 11) == 0;
		return 1;
	}
	if (c->depth < 3) {
		return 1;
	}
	if (!c->first[c->depth]) {
		merge_buf_put(&c->ev, ",", 1);
	}
	c->first[c->depth] = 0;
	if (c->depth == 3) {
		c->key_at3 = merge_fast_key(k, n);
	} else if (c->depth == 4) {
		c->key_labels_at4 = n == 6 && !memcmp(k, "labels", 6);
	}
	mc_putstr(&c->ev, k, n);
	merge_buf_put(&c->ev, ":", 1);
	return 1;
}

static int mc_open(struct mc_copy *c, int is_map)
{
	if (c->skip) {
		c->skip++;
		return 1;
	}
	if (c->depth == 0) {
		c->depth = 1;
		return 1;
	}
	if (c->depth == 1) {
		if (!is_map && c->root_key_events) {
			c->depth = 2;
			c->in_events = 1;
			return 1;
		}
		c->skip = 1;
		return 1;
	}
	if (c->depth == 2 && !is_map) {
		c->skip = 1; /* an array inside traceEvents: not an event */
		return 1;
	}
	if (c->depth + 1 >= MC_DEPTH) {
		c->too_deep = 1;
		return 0;
	}
	if (c->depth == 2) {
		c->ev.len = 0;
		c->ph_m = c->plabels = 0;
		c->pid = 0;
		c->key_at3 = 0;
	} else {
		mc_sep(c);
	}
	c->args_open = c->depth == 3 ? c->key_at3 == 4 : c->args_open;
	c->depth++;
	c->is_map[c->depth] = (unsigned char)is_map;
	c->first[c->depth] = 1;
	merge_buf_put(&c->ev, is_map ? "{" : "[", 1);
	return 1;
}

static int mc_start_map(void *ctx)
{
	return mc_open(ctx, 1);
}

static int mc_start_array(void *ctx)
{
	return mc_open(ctx, 0);
}

/* Writes the event in c->ev, whole, after ",\n" unless it is the first,
 * and counts it. Write errors stay in c->out. */
static void mc_commit(struct mc_copy *c)
{
	if (c->events++) {
		out_write(c->out, ",\n", 2);
	}
	out_write(c->out, c->ev.p, c->ev.len);
	c->ev.len = 0;
}

static int mc_close(void *ctx)
{
	struct mc_copy *c = ctx;

	if (c->skip) {
		c->skip--;
		return 1;
	}
	if (c->depth <= 2) {
		c->depth--;
		return 1;
	}
	merge_buf_put(&c->ev, c->is_map[c->depth] ? "}" : "]", 1);
	c->depth--;
	if (c->depth == 2) {
		mc_commit(c);
	}
	return 1;
}

/* jscan's object handler (jscan.h): an event of traceEvents copied by
 * merge_fast_event() and written, or 0 to leave it to the handlers. */
static long mc_object(void *ctx, const unsigned char *p0,
		      const unsigned char *end)
{
	struct mc_copy *c = ctx;
	long len;

	if (c->skip || c->depth != 2) {
		return 0;
	}
	c->ev.len = 0;
	len = merge_fast_event(&c->rules, &c->ev, p0, end);
	if (len > 0) {
		mc_commit(c);
	}
	return len;
}

/*
 * At *pos, where a segment of par starts, with have bytes unconsumed:
 * when the scan stands between two events of traceEvents, writes the
 * events a thread copied from the segment and moves the scan and the
 * input to where that thread stopped (*pos); else leaves both as they
 * are. Returns 0, or -1 when the input cannot be moved (after one line on
 * stderr).
 */
static int mc_par_jump(struct mc_copy *c, struct jscan *js, struct tpar *par,
		       struct trace_in *in, size_t have, uint64_t *pos)
{
	const struct tpar_seg *g;
	int ret;

	if (have || c->skip || c->depth != 2 || !jscan_array_value(js)) {
		tpar_done(par);
		return 0;
	}
	g = tpar_take(par);
	if (g->n) {
		if (c->events) {
			out_write(c->out, ",\n", 2);
		}
		out_write(c->out, g->text, g->text_len);
		c->events += g->n;
	}
	ret = tpar_move(g, in, js, pos);
	tpar_done(par);
	return ret;
}

static const struct jscan_cb mc_callbacks = {
	.null = mc_null,
	.boolean = mc_boolean,
	.number = mc_number,
	.string = mc_string,
	.start_map = mc_start_map,
	.map_key = mc_map_key,
	.end_map = mc_close,
	.start_array = mc_start_array,
	.end_array = mc_close,
	.object = mc_object,
};

/* Copies the whole events of f into o, rewritten for the merged trace,
 * each after ",\n" unless it is the first (*events counts them); idx is
 * f's place among the inputs, which keeps its flow ids apart. Returns 0,
 * or -1 after one line on stderr (out of memory, f cannot be opened or is
 * nested too deeply). The end of f's JSON, or an error in it, ends the
 * copy without failing: the first pass accepted f, so that is where f was
 * cut short. Write errors stay in o. */
int merge_copy_file(struct merge_file *f, size_t idx, struct out *o,
		    uint64_t *events)
{
	struct mc_copy *c = calloc(1, sizeof(*c));
	unsigned char *buf = NULL;
	size_t cap = 0, have = 0;
	struct trace_in in = {.fd = -1};
	struct tpar *par = NULL;
	struct jscan js;
	uint64_t total = 0;
	ssize_t n;
	int ret = -1;

	jscan_init(&js, &mc_callbacks, c);
	if (!c) {
		util_err("out of memory");
		goto out;
	}
	c->f = f;
	c->out = o;
	c->events = *events;
	c->rules.f = f;
	c->rules.id_offset = (uint64_t)idx << 40;
	if (trace_in_open(&in, f->path) < 0) {
		goto out;
	}
	par = tpar_start(&in, merge_fast_par_event, &c->rules);
	/* Reads end where the next segment starts. */
	while ((n = trace_in_more_n(&in, &buf, &cap, have,
				    tpar_want(par, total))) > 0) {
		enum jscan_status st;
		size_t used;

		total += (uint64_t)n;
		have += (size_t)n;
		st = jscan_feed(&js, buf, have, 0, &used);
		if (c->ev.oom) {
			util_err("out of memory");
			goto out;
		}
		if (c->too_deep) {
			util_err("%s: nested too deeply", f->path);
			goto out;
		}
		if (st != JSCAN_MORE) {
			/* The end, or an error: pass 1 accepted this file,
			 * so that is where it was cut short. Whole events
			 * before it are kept. */
			break;
		}
		have -= used;
		memmove(buf, buf + used, have);
		while (par && total == tpar_bound(par)) {
			if (mc_par_jump(c, &js, par, &in, have, &total) < 0) {
				goto out;
			}
		}
	}
	if (in.failed) {
		goto out;
	}
	ret = 0;
	*events = c->events;
out:
	tpar_stop(par);
	jscan_free(&js);
	trace_in_close(&in);
	if (c) {
		free(c->ev.p);
	}
	free(c);
	free(buf);
	return ret;
}
