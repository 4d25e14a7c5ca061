/*
 * merge_fast.c - one event of merge's second pass copied in one step,
 * rewritten on the way (merge_fast.h), by the scan (merge_copy.c) or by
 * the threads that copy a large plain file's events ahead of it
 * (trace_par.c).
 *
 * An event written as the library writes it (an object on one line
 * without blanks, keys and strings of printable ASCII without escapes,
 * numbers and strings as values, args an object of the same kind, and
 * not a metadata "M" event) is copied with its plain bytes as they are,
 * which is what the scan's handlers would write for them (the escaper
 * keeps printable ASCII), and its numbers through merge_fast_number(), as
 * the handlers do: pid through the pid map, ts shifted, flow ids and the
 * frame node moved. Anything else is left to the handlers.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jscan.h"
#include "merge_fast.h"

/* Makes room in b (see merge_fast.h). */
int merge_buf_reserve(struct merge_buf *b, size_t n)
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

/* Writes v in decimal, as printf's %llu would. */
static void mc_put_u64(struct merge_buf *b, uint64_t v)
{
	char t[24];
	size_t i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	merge_buf_put(b, t + i, sizeof(t) - i);
}

/* Writes v in decimal, as printf's %lld would. */
static void mc_put_i64(struct merge_buf *b, int64_t v)
{
	if (v < 0) {
		merge_buf_put(b, "-", 1);
		mc_put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		mc_put_u64(b, (uint64_t)v);
	}
}

/* Writes ns as microseconds with three decimals ("-12.345"). */
static void mc_put_us(struct merge_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char f[4] = {'.', (char)('0' + a % 1000 / 100),
		     (char)('0' + a % 100 / 10), (char)('0' + a % 10)};

	if (ns < 0) {
		merge_buf_put(b, "-", 1);
	}
	mc_put_u64(b, a / 1000);
	merge_buf_put(b, f, 4);
}

/* Writes the event's "sf" s[0..n) moved by f's frame offset into b,
 * quoted when it was a string, and returns 1; returns 0 (nothing written)
 * when f has no offset, or the sf is not decimal and stays as it is. */
int merge_fast_sf(const struct merge_file *f, struct merge_buf *b,
		  const unsigned char *s, size_t n, int quote)
{
	uint64_t v = 0;
	size_t i;

	if (!f->frame_offset) {
		return 0;
	}
	for (i = 0; i < n && i < 19 && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i != n || n == 0) {
		return 0;
	}
	if (quote) {
		merge_buf_put(b, "\"", 1);
	}
	mc_put_u64(b, v + f->frame_offset);
	if (quote) {
		merge_buf_put(b, "\"", 1);
	}
	return 1;
}

/* Writes the number s[0..n) of the event's member key (struct mc_copy's
 * key_at3) into b, rewritten when it is the pid (*pid set to it), ts, a
 * flow id or the frame node. */
void merge_fast_number(const struct merge_rules *r, struct merge_buf *b,
		       int key, const char *s, size_t n, int64_t *pid)
{
	const struct merge_file *f = r->f;
	int64_t v;

	if (key == 1 && util_parse_i64(s, n, &v) == 0) {
		*pid = v;
		mc_put_i64(b, merge_index_pid(f, v));
		return;
	}
	if (key == 2 && f->shift_ns && util_us_to_ns(s, n, &v) == 0) {
		/* A time past the int64 range stops at its end. */
		if (__builtin_add_overflow(v, f->shift_ns, &v)) {
			v = INT64_MAX;
		}
		mc_put_us(b, v);
		return;
	}
	if (key == 3 && r->id_offset && !memchr(s, '.', n) &&
	    util_parse_i64(s, n, &v) == 0) {
		mc_put_u64(b, (uint64_t)v + r->id_offset);
		return;
	}
	if (key == 7 && merge_fast_sf(f, b, (const unsigned char *)s, n, 0)) {
		return;
	}
	merge_buf_put(b, s, n);
}

/* The key_at3 code of an event's key k[0..n) (struct mc_copy). */
int merge_fast_key(const unsigned char *k, size_t n)
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

/*
 * The fast path for an event written as the library writes it: an object
 * on one line without blanks, keys and strings of printable ASCII without
 * escapes, numbers and strings as values, args an object of the same
 * kind, and not a metadata ("M") event. The event at p0 is appended to b
 * in one step, the plain bytes as they are, which is what the handlers
 * above would write for them (the escaper keeps printable ASCII), and the
 * numbers through merge_fast_number(), as the handlers do. Anything else (a
 * blank, an escape, a byte past ASCII, a literal, an array, the end of
 * the piece, bytes that are not JSON) leaves the event to the handlers,
 * b's length as it was. Returns the event's length, or 0. Safe in any
 * thread (r is only read).
 */
long merge_fast_event(const struct merge_rules *r, struct merge_buf *b,
		      const unsigned char *p0, const unsigned char *end)
{
	const unsigned char *p = p0 + 1, *q, *bad, *run = p0;
	const struct merge_file *f = r->f;
	size_t len0 = b->len;
	const char *err;
	int depth = 3, key = 0;
	int64_t pid;
	long len;

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
			key = merge_fast_key(p + 1, (size_t)(q - p - 1));
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
				merge_buf_put(b, run, (size_t)(p - run));
				run = p;
				if (merge_fast_sf(f, b, p + 1,
						  (size_t)(q - p - 1), 1)) {
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
				continue;
			}
		} else if ((*p == '-' || (*p >= '0' && *p <= '9')) &&
			   (len = jscan_number(p, end, 0, &err, &bad)) > 0) {
			/* Not last: a number is whole only when a byte
			 * follows it in the piece. */
			if (depth == 3 &&
			    (key == 1 || (key == 2 && f->shift_ns) ||
			     (key == 3 && r->id_offset) ||
			     (key == 7 && f->frame_offset))) {
				merge_buf_put(b, run, (size_t)(p - run));
				merge_fast_number(r, b, key, (const char *)p,
						  (size_t)len, &pid);
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
		}
	}
done:
	merge_buf_put(b, run, (size_t)(p - run));
	return (long)(p - p0);
slow:
	b->len = len0;
	return 0;
}

/* A tpar_event_fn (trace_par.h): the event copied by merge_fast_event() into
 * the segment's text, after ",\n" unless it is the segment's first; arg is the
 * file's struct merge_rules. */
long merge_fast_par_event(void *arg, struct tpar_seg *g, const unsigned char *p,
			  const unsigned char *end)
{
	struct merge_buf b = {(char *)g->text, g->text_len, g->text_cap, 0};
	long len;

	if (g->n) {
		merge_buf_put(&b, ",\n", 2);
	}
	len = merge_fast_event(arg, &b, p, end);
	g->text = (unsigned char *)b.p;
	g->text_cap = b.cap;
	if (len <= 0 || b.oom) {
		return 0;
	}
	g->text_len = b.len;
	return len;
}