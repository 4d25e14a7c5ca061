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
 */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "jscan.h"

#define MC_DEPTH 256

/* A growable byte buffer. */
struct mc_buf {
	char *p;
	size_t len, cap;
	int oom;
};

/* Makes room for n more bytes. Returns 0, or -1 and sets b->oom. */
static int mc_reserve(struct mc_buf *b, size_t n)
{
	size_t nc;
	char *np;

	if (b->oom) {
		return -1;
	}
	if (b->len + n <= b->cap) {
		return 0;
	}
	nc = b->cap ? b->cap : 4096;
	while (nc < b->len + n) {
		nc *= 2;
	}
	np = realloc(b->p, nc);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = nc;
	return 0;
}

static inline void mc_put(struct mc_buf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap && mc_reserve(b, n) < 0) {
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Writes v in decimal, as printf's %llu would. */
static void mc_put_u64(struct mc_buf *b, uint64_t v)
{
	char t[24];
	size_t i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	mc_put(b, t + i, sizeof(t) - i);
}

/* Writes v in decimal, as printf's %lld would. */
static void mc_put_i64(struct mc_buf *b, int64_t v)
{
	if (v < 0) {
		mc_put(b, "-", 1);
		mc_put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		mc_put_u64(b, (uint64_t)v);
	}
}

static void mc_puts(struct mc_buf *b, const char *s)
{
	mc_put(b, s, strlen(s));
}

/* Writes s[0..n) as a JSON string with the collector's escaper: bytes
 * that are not UTF-8 (a damaged input) become U+FFFD, so that the output
 * always parses. */
static void mc_putstr(struct mc_buf *b, const unsigned char *s, size_t n)
{
	size_t k;

	/* Room for the worst case, then one call. */
	mc_put(b, "\"", 1);
	if (b->oom || mc_reserve(b, n * 6 + 1) < 0) {
		return;
	}
	k = out_json_escape(b->p + b->len, n * 6, (const char *)s, n, NULL);
	b->len += k;
	mc_put(b, "\"", 1);
}

struct mc_copy {
	struct merge_file *f;
	uint64_t id_offset;
	struct mc_buf ev; /* the event being copied */
	struct out *out;  /* whole events go here */
	int depth;	  /* containers open */
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
			mc_put(&c->ev, ",", 1);
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

/* Writes ns as microseconds with three decimals ("-12.345"). */
static void mc_put_us(struct mc_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char f[4] = {'.', (char)('0' + a % 1000 / 100),
		     (char)('0' + a % 100 / 10), (char)('0' + a % 10)};

	if (ns < 0) {
		mc_put(b, "-", 1);
	}
	mc_put_u64(b, a / 1000);
	mc_put(b, f, 4);
}

/* Writes the event's "sf" moved by the file's frame offset, quoted when
 * it was a string, and returns 1; returns 0 (nothing written) for any
 * other value, or an sf that is not decimal, which stays as it is. */
static int mc_frame_id(struct mc_copy *c, const unsigned char *s, size_t n,
		       int quote)
{
	uint64_t v = 0;
	size_t i;

	if (c->depth != 3 || c->key_at3 != 7 || !c->f->frame_offset) {
		return 0;
	}
	for (i = 0; i < n && i < 19 && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i != n || n == 0) {
		return 0;
	}
	if (quote) {
		mc_put(&c->ev, "\"", 1);
	}
	mc_put_u64(&c->ev, v + c->f->frame_offset);
	if (quote) {
		mc_put(&c->ev, "\"", 1);
	}
	return 1;
}

/* Writes the number s[0..n), rewritten when it is the event's pid, ts, a
 * flow id or its frame node (c->depth and c->key_at3 say where it is). */
static void mc_put_number(struct mc_copy *c, const char *s, size_t n)
{
	int64_t v;

	if (c->depth == 3 && c->key_at3 == 1 && util_parse_i64(s, n, &v) == 0) {
		c->pid = v;
		mc_put_i64(&c->ev, merge_index_pid(c->f, v));
		return;
	}
	if (c->depth == 3 && c->key_at3 == 2 && c->f->shift_ns &&
	    util_us_to_ns(s, n, &v) == 0) {
		/* A time past the int64 range stops at its end. */
		if (__builtin_add_overflow(v, c->f->shift_ns, &v)) {
			v = INT64_MAX;
		}
		mc_put_us(&c->ev, v);
		return;
	}
	if (c->depth == 3 && c->key_at3 == 3 && c->id_offset &&
	    !memchr(s, '.', n) && util_parse_i64(s, n, &v) == 0) {
		mc_put_u64(&c->ev, (uint64_t)v + c->id_offset);
		return;
	}
	if (mc_frame_id(c, (const unsigned char *)s, n, 0)) {
		return;
	}
	mc_put(&c->ev, s, n);
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
	} else if (mc_frame_id(c, s, n, 1)) {
		return 1;
	} else if (c->depth == 4 && c->args_open && c->key_labels_at4 &&
		   c->ph_m && c->plabels) {
		struct mc_buf nb = {0};
		char tail[TRACE_SHORT_MAX * 2 + 64];

		mc_put(&nb, s, n);
		mc_put(&nb, "", 1); /* a C string for the lookup */
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

/* The key_at3 code of an event's key k[0..n) (struct mc_copy). */
static int mc_key_at3(const unsigned char *k, size_t n)
{
	return n == 3 && !memcmp(k, "pid", 3)	 ? 1
	       : n == 2 && !memcmp(k, "ts", 2)	 ? 2
	       : n == 2 && !memcmp(k, "id", 2)	 ? 3
	       : n == 4 && !memcmp(k, "args", 4) ? 4
	       : n == 2 && !memcmp(k, "ph", 2)	 ? 5
	       : n == 4 && !memcmp(k, "name", 4) ? 6
	       : n == 2 && !memcmp(k, "sf", 2)	 ? 7
						 : 0;
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
		mc_put(&c->ev, ",", 1);
	}
	c->first[c->depth] = 0;
	if (c->depth == 3) {
		c->key_at3 = mc_key_at3(k, n);
	} else if (c->depth == 4) {
		c->key_labels_at4 = n == 6 && !memcmp(k, "labels", 6);
	}
	mc_putstr(&c->ev, k, n);
	mc_put(&c->ev, ":", 1);
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
	mc_put(&c->ev, is_map ? "{" : "[", 1);
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
	mc_put(&c->ev, c->is_map[c->depth] ? "}" : "]", 1);
	c->depth--;
	if (c->depth == 2) {
		mc_commit(c);
	}
	return 1;
}

/*
 * The fast path for an event written as the library writes it: an object
 * on one line without blanks, keys and strings of printable ASCII without
 * escapes, numbers and strings as values, args an object of the same
 * kind, and not a metadata ("M") event. It is copied in one step, the
 * plain bytes as they are, which is what the handlers above would write
 * for them (the escaper keeps printable ASCII), and the numbers through
 * mc_put_number(), as the handlers do. Anything else (a blank, an escape,
 * a byte past ASCII, a literal, an array, the end of the piece, bytes that
 * are not JSON) leaves the event to the handlers, untouched. Returns the
 * event's length, or 0 (jscan.h).
 */
static long mc_object(void *ctx, const unsigned char *p0,
		      const unsigned char *end)
{
	struct mc_copy *c = ctx;
	const unsigned char *p = p0 + 1, *q, *bad, *run = p0;
	const struct merge_file *f = c->f;
	const char *err;
	int depth = 3, key = 0;
	long len;

	if (c->skip || c->depth != 2) {
		return 0;
	}
	c->ev.len = 0;
	c->ph_m = c->plabels = 0;
	c->pid = 0;
	c->key_at3 = 0;
	c->depth = 3; /* for mc_put_number() and mc_frame_id() */
	/* The bytes from run to p are copied as they are, in one piece
	 * before each value that is rewritten and at the end. */
	if (p < end && *p == '}') {
		p++;
		goto done;
	}
	for (;;) {
		/* A member: "key":value. */
		if (p >= end || *p != '"') {
			goto slow;
		}
		q = jscan_ascii_run(p + 1, end);
		if (q + 1 >= end || *q != '"' || q[1] != ':') {
			goto slow;
		}
		if (depth == 3) {
			key = mc_key_at3(p + 1, (size_t)(q - p - 1));
		}
		p = q + 2;
		if (p >= end) {
			goto slow;
		}
		if (*p == '"') {
			q = jscan_ascii_run(p + 1, end);
			if (q >= end || *q != '"' ||
			    (depth == 3 && key == 5 && q == p + 2 &&
			     p[1] == 'M')) {
				goto slow;
			}
			if (depth == 3 && key == 7 && f->frame_offset) {
				mc_put(&c->ev, run, (size_t)(p - run));
				run = p;
				c->key_at3 = key;
				if (mc_frame_id(c, p + 1, (size_t)(q - p - 1),
						1)) {
					run = q + 1;
				}
			}
			p = q + 1;
		} else if (*p == '{' && depth == 3 && key == 4) {
			p++;
			if (p < end && *p == '}') {
				p++;
			} else {
				depth = 4;
				c->depth = 4;
				continue;
			}
		} else if ((*p == '-' || (*p >= '0' && *p <= '9')) &&
			   (len = jscan_number(p, end, 0, &err, &bad)) > 0) {
			/* Not last: a number is whole only when a byte
			 * follows it in the piece. */
			if (depth == 3 &&
			    (key == 1 || (key == 2 && f->shift_ns) ||
			     (key == 3 && c->id_offset) ||
			     (key == 7 && f->frame_offset))) {
				mc_put(&c->ev, run, (size_t)(p - run));
				c->key_at3 = key;
				mc_put_number(c, (const char *)p, (size_t)len);
				run = p + len;
			}
			p += len;
		} else {
			goto slow;
		}
		/* After a value: the next member, or the end of args, or of
		 * the event. */
		for (;;) {
			if (p >= end) {
				goto slow;
			}
			if (*p == ',') {
				p++;
				break;
			}
			if (*p != '}') {
				goto slow;
			}
			p++;
			if (depth == 3) {
				goto done;
			}
			depth = 3;
			c->depth = 3;
		}
	}
done:
	mc_put(&c->ev, run, (size_t)(p - run));
	c->depth = 2;
	mc_commit(c);
	return (long)(p - p0);
slow:
	c->depth = 2;
	c->ev.len = 0;
	return 0;
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
	struct jscan js;
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
	c->id_offset = (uint64_t)idx << 40;
	if (trace_in_open(&in, f->path) < 0) {
		goto out;
	}
	while ((n = trace_in_more(&in, &buf, &cap, have)) > 0) {
		enum jscan_status st;
		size_t used;

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
	}
	if (in.failed) {
		goto out;
	}
	ret = 0;
	*events = c->events;
out:
	jscan_free(&js);
	trace_in_close(&in);
	if (c) {
		free(c->ev.p);
	}
	free(c);
	free(buf);
	return ret;
}
