/*
 * merge_frames.c - the call stacks of mxprof merge: each input's top-level
 * "stackFrames", copied into the merged trace with its frame ids moved
 * out of the way of the other inputs'.
 *
 * The first pass notes each file's largest frame id (merge_frames_note());
 * file k's ids then move up by the sum of (largest id + 1) over the files
 * before it (merge_frames_assign()), so the first file keeps its own. The
 * frames are copied after traceEvents, as the library writes them, by a
 * pass of their own over each file that has any (merge_frames_copy()),
 * which stops where its stackFrames ends, before or after its events (the
 * library writes it after them: the events are then passed over in one
 * step each, mf_object()). The copy rewrites each frame's key and its
 * "parent"; merge_copy.c moves each event's "sf" by the same offset. Ids
 * that are not decimal are copied as they are. A frame is written only
 * whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "jscan.h"
#include "trace_fast.h"

#define MF_DEPTH 64

struct mf_copy {
	struct merge_file *f;
	struct out *out;
	int *first_out; /* no frame written yet, of any file */
	char *p;	/* the frame being copied */
	size_t len, cap;
	int oom;
	int depth; /* 1: the top level, 2: stackFrames, 3: a frame */
	unsigned char is_map[MF_DEPTH];
	unsigned char first[MF_DEPTH];
	unsigned long skip;
	int key_frames; /* the last top-level key was stackFrames */
	int key_parent; /* the last key of the frame was parent */
	int done;
};

/* A trace_frame_fn for the first pass: notes that file (a struct
 * merge_file) has frames and its largest id. Returns 0. */
int merge_frames_note(const struct trace_frame *fr, void *file)
{
	struct merge_file *f = file;

	if (!f->has_frames || fr->id > f->frames_max) {
		f->frames_max = fr->id;
	}
	f->has_frames = 1;
	return 0;
}

/* Gives each of files[0..nf) the offset of its frame ids. This function
 * can't fail (offsets past 2^64 wrap; no trace has that many frames). */
void merge_frames_assign(struct merge_file *files, size_t nf)
{
	uint64_t next = 0;

	for (size_t i = 0; i < nf; i++) {
		files[i].frame_offset = next;
		if (files[i].has_frames) {
			next += files[i].frames_max + 1;
		}
	}
}

static void mf_put(struct mf_copy *c, const void *s, size_t n)
{
	if (c->oom) {
		return;
	}
	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : 1024;
		char *p;

		while (cap < c->len + n) {
			cap *= 2;
		}
		p = realloc(c->p, cap);
		if (!p) {
			c->oom = 1;
			return;
		}
		c->p = p;
		c->cap = cap;
	}
	memcpy(c->p + c->len, s, n);
	c->len += n;
}

static void mf_putstr(struct mf_copy *c, const unsigned char *s, size_t n)
{
	char *tmp = malloc(n * 6 + 1);

	if (!tmp) {
		c->oom = 1;
		return;
	}
	mf_put(c, "\"", 1);
	mf_put(c, tmp, out_json_escape(tmp, n * 6, (const char *)s, n, NULL));
	mf_put(c, "\"", 1);
	free(tmp);
}

/* Writes id s[0..n) moved by the file's offset when it is decimal, as it
 * is otherwise; quoted when quote is set. */
static void mf_put_id(struct mf_copy *c, const unsigned char *s, size_t n,
		      int quote)
{
	char num[32];
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n && i < 19 && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i != n || n == 0) {
		if (quote) {
			mf_putstr(c, s, n);
		} else {
			mf_put(c, s, n);
		}
		return;
	}
	snprintf(num, sizeof(num), quote ? "\"%llu\"" : "%llu",
		 (unsigned long long)(v + c->f->frame_offset));
	mf_put(c, num, strlen(num));
}

/* The comma before a value in an array of the frame. */
static void mf_sep(struct mf_copy *c)
{
	if (!c->first[c->depth] && !c->is_map[c->depth]) {
		mf_put(c, ",", 1);
	}
	c->first[c->depth] = 0;
}

static int mf_scalar(struct mf_copy *c, const char *s, size_t n, int is_str)
{
	if (c->skip || c->depth < 3) {
		return 1;
	}
	mf_sep(c);
	if (c->depth == 3 && c->key_parent) {
		mf_put_id(c, (const unsigned char *)s, n, is_str);
	} else if (is_str) {
		mf_putstr(c, (const unsigned char *)s, n);
	} else {
		mf_put(c, s, n);
	}
	return 1;
}

static int mf_null(void *ctx)
{
	return mf_scalar(ctx, "null", 4, 0);
}

static int mf_boolean(void *ctx, int b)
{
	return mf_scalar(ctx, b ? "true" : "false", b ? 4 : 5, 0);
}

static int mf_number(void *ctx, const char *s, size_t n)
{
	return mf_scalar(ctx, s, n, 0);
}

static int mf_string(void *ctx, const unsigned char *s, size_t n)
{
	return mf_scalar(ctx, (const char *)s, n, 1);
}

static int mf_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct mf_copy *c = ctx;

	if (c->skip) {
		return 1;
	}
	if (c->depth == 1) {
		c->key_frames = n == 11 && !memcmp(k, "stackFrames", 11);
	} else if (c->depth == 2) {
		/* A frame's id: its key, kept until the frame opens. */
		c->len = 0;
		mf_put(c, c->first_out[0] ? "\n" : ",\n",
		       c->first_out[0] ? 1 : 2);
		mf_put_id(c, k, n, 1);
		mf_put(c, ":", 1);
	} else {
		if (!c->first[c->depth]) {
			mf_put(c, ",", 1);
		}
		c->first[c->depth] = 0;
		c->key_parent =
			c->depth == 3 && n == 6 && !memcmp(k, "parent", 6);
		mf_putstr(c, k, n);
		mf_put(c, ":", 1);
	}
	return 1;
}

static int mf_open(struct mf_copy *c, int is_map)
{
	if (c->skip) {
		c->skip++;
		return 1;
	}
	if (c->depth == 0) {
		/* The array form has no stackFrames. */
		c->depth = 1;
		return is_map;
	}
	if ((c->depth == 1 && !(is_map && c->key_frames)) ||
	    (c->depth == 2 && !is_map)) {
		c->skip = 1;
		return 1;
	}
	if (c->depth + 1 >= MF_DEPTH) {
		c->skip = 1; /* too deep for a frame: left out */
		return 1;
	}
	if (c->depth >= 3) {
		mf_sep(c);
	}
	c->depth++;
	c->is_map[c->depth] = (unsigned char)is_map;
	c->first[c->depth] = 1;
	if (c->depth >= 3) {
		mf_put(c, is_map ? "{" : "[", 1);
	}
	return 1;
}

static int mf_start_map(void *ctx)
{
	return mf_open(ctx, 1);
}

static int mf_start_array(void *ctx)
{
	return mf_open(ctx, 0);
}

static int mf_close(void *ctx)
{
	struct mf_copy *c = ctx;

	if (c->skip) {
		c->skip--;
		return 1;
	}
	if (c->depth >= 3) {
		mf_put(c, c->is_map[c->depth] ? "}" : "]", 1);
	}
	c->depth--;
	if (c->depth == 2 && !c->oom) {
		/* A whole frame. */
		out_write(c->out, c->p, c->len);
		c->first_out[0] = 0;
		c->len = 0;
	}
	if (c->depth <= 1) {
		/* stackFrames (or the document) ends: nothing more to copy. */
		c->done = 1;
		return 0;
	}
	return 1;
}

/* jscan's object handler: an object inside a value that is skipped (the
 * events, when stackFrames comes after them) is passed over in one step
 * when it has the form of the library's events (tf_parse()), which is
 * what counting its nesting would do. Returns its length, or 0. */
static long mf_object(void *ctx, const unsigned char *p,
		      const unsigned char *end)
{
	struct mf_copy *c = ctx;
	struct tf_event e;

	return c->skip ? tf_parse(&e, p, end) : 0;
}

static const struct jscan_cb mf_callbacks = {
	.null = mf_null,
	.boolean = mf_boolean,
	.number = mf_number,
	.string = mf_string,
	.start_map = mf_start_map,
	.map_key = mf_map_key,
	.end_map = mf_close,
	.object = mf_object,
	.start_array = mf_start_array,
	.end_array = mf_close,
};

/*
 * Copies the frames of f's stackFrames into o as members of the merged
 * stackFrames object, ids moved by f->frame_offset, each after ",\n"
 * (after "\n" while *first is set, which it then clears). Returns 0 (also
 * when f ends early: whole frames are kept), or -1 after one line on
 * stderr (f cannot be opened, out of memory). Write errors stay in o.
 */
int merge_frames_copy(struct merge_file *f, struct out *o, int *first)
{
	struct mf_copy *c = calloc(1, sizeof(*c));
	unsigned char *buf = NULL;
	size_t cap = 0, have = 0;
	struct trace_in in = {.fd = -1};
	struct jscan js;
	ssize_t n;
	int ret = -1;

	jscan_init(&js, &mf_callbacks, c);
	if (!c) {
		util_err("out of memory");
		goto out;
	}
	c->f = f;
	c->out = o;
	c->first_out = first;
	if (trace_in_open(&in, f->path) < 0) {
		goto out;
	}
	while (!c->done && (n = trace_in_more(&in, &buf, &cap, have)) > 0) {
		enum jscan_status st;
		size_t used;

		have += (size_t)n;
		st = jscan_feed(&js, buf, have, 0, &used);
		if (c->oom) {
			util_err("out of memory");
			goto out;
		}
		if (st != JSCAN_MORE) {
			break; /* the end of stackFrames, or of the file */
		}
		have -= used;
		memmove(buf, buf + used, have);
	}
	if (in.failed) {
		goto out;
	}
	ret = 0;
out:
	jscan_free(&js);
	trace_in_close(&in);
	if (c) {
		free(c->p);
	}
	free(c);
	free(buf);
	return ret;
}
