/*
 * frames.c - the call-stack frames of one trace: its top-level
 * "stackFrames", a tree of frame nodes by id, each with its function's
 * name, its caller's node ("parent") and whether it is the user's own code
 * ("user": 1).
 *
 * Two questions are asked of a node (an event's "sf", the innermost frame
 * where it began): its call site, the innermost frame of the user's own
 * code on the way to the root, else the node itself, as the library names
 * the rows of its "Call Sites" sections; and its folded path, the frames
 * outermost first joined by ';', as flamegraph.pl and speedscope read.
 *
 * Nodes live in an open-addressing table keyed by id. Memory grows with
 * the file's distinct frames, never with its events. A walk toward the
 * root stops after as many steps as there are nodes, so a damaged file
 * whose parents form a loop cannot hang it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hmap.h"

struct frames_node {
	uint64_t id;
	uint64_t parent;
	char *name; /* NULL: a free slot */
	int has_parent;
	int user;
};

struct frames {
	struct hmap nodes; /* struct frames_node */
};

static uint64_t fr_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	return id ^ (id >> 33);
}

static int fr_empty(const void *slot)
{
	return ((const struct frames_node *)slot)->name == NULL;
}

static uint64_t fr_slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return fr_hash(((const struct frames_node *)slot)->id);
}

static int fr_match(const void *slot, const void *id)
{
	return ((const struct frames_node *)slot)->id == *(const uint64_t *)id;
}

static const struct hmap_ops fr_ops = {
	.size = sizeof(struct frames_node),
	.empty = fr_empty,
	.hash = fr_slot_hash,
};

/* Returns a new, empty set, or NULL (ENOMEM). */
struct frames *frames_create(void)
{
	return calloc(1, sizeof(struct frames));
}

/* Forgets every node (the next file's ids are its own). This function
 * can't fail. */
void frames_clear(struct frames *fr)
{
	struct frames_node *v = fr->nodes.slots;

	for (size_t i = 0; i < fr->nodes.cap; i++) {
		free(v[i].name);
	}
	hmap_free(&fr->nodes);
}

/* Frees fr (NULL accepted). This function can't fail. */
void frames_destroy(struct frames *fr)
{
	if (fr) {
		frames_clear(fr);
		free(fr);
	}
}

/* Returns how many nodes fr holds. This function can't fail. */
size_t frames_count(const struct frames *fr)
{
	return fr->nodes.used;
}

static struct frames_node *fr_find(const struct frames *fr, uint64_t id)
{
	struct frames_node *e;

	if (!fr->nodes.cap) {
		return NULL;
	}
	e = hmap_find(&fr->nodes, &fr_ops, fr_hash(id), fr_match, &id);
	return e->name ? e : NULL;
}

/* Adds frame f; a second frame with the same id replaces the first.
 * Returns 0 or -ENOMEM. */
int frames_add(struct frames *fr, const struct trace_frame *f)
{
	struct frames_node *e = fr_find(fr, f->id);
	char *name = strdup(f->name);

	if (!name) {
		return -ENOMEM;
	}
	if (!e) {
		if (hmap_reserve(&fr->nodes, &fr_ops, 256, 3, 4, NULL) < 0) {
			free(name);
			return -ENOMEM;
		}
		e = hmap_find(&fr->nodes, &fr_ops, fr_hash(f->id), fr_match,
			      &f->id);
		fr->nodes.used++;
	}
	free(e->name);
	*e = (struct frames_node){.id = f->id,
				  .parent = f->parent,
				  .name = name,
				  .has_parent = f->has_parent,
				  .user = f->user};
	return 0;
}

/* Returns the call site of node id: the name of the innermost node from id
 * toward the root marked as the user's own code, else id's own name; NULL
 * when fr has no node id. A parent missing from fr ends the walk. This
 * function can't fail. */
const char *frames_site(const struct frames *fr, uint64_t id)
{
	const struct frames_node *leaf = fr_find(fr, id), *e = leaf;

	for (size_t steps = 0; e && steps <= fr->nodes.used; steps++) {
		if (e->user) {
			return e->name;
		}
		e = e->has_parent ? fr_find(fr, e->parent) : NULL;
	}
	return leaf ? leaf->name : NULL;
}

/* Makes room in b for n more bytes and a NUL. Returns 0, or -1 with
 * b->err set. */
static int fr_reserve(struct sbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (b->err) {
		return -1;
	}
	if (b->n + n + 1 <= b->cap) {
		return 0;
	}
	while (cap < b->n + n + 1) {
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->err = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Appends ';' and name to b, or only name when b is empty, with the bytes
 * that folded stacks reserve replaced: ';' (the separator) by ':', line
 * ends by spaces. b->err is set when memory runs out. This function can't
 * fail. */
void frames_put(struct sbuf *b, const char *name)
{
	size_t n = strlen(name);

	if (fr_reserve(b, n + 1) < 0) {
		return;
	}
	if (b->n) {
		b->p[b->n++] = ';';
	}
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (ch == ';') {
			ch = ':';
		} else if (ch == '\n' || ch == '\r') {
			ch = ' ';
		}
		b->p[b->n++] = ch;
	}
	b->p[b->n] = 0;
}

/*
 * Appends the folded path of node id to b: the names from the root to id,
 * each through frames_put(). Returns 0, -ENOENT when fr has no node id (b
 * unchanged), or -ENOMEM. A parent missing from fr makes its child the
 * outermost frame.
 */
int frames_path(const struct frames *fr, uint64_t id, struct sbuf *b)
{
	const struct frames_node *e = fr_find(fr, id);
	const struct frames_node **chain;
	size_t n = 0;

	if (!e) {
		return -ENOENT;
	}
	chain = malloc((fr->nodes.used + 1) * sizeof(*chain));
	if (!chain) {
		return -ENOMEM;
	}
	while (e && n <= fr->nodes.used) {
		chain[n++] = e;
		e = e->has_parent ? fr_find(fr, e->parent) : NULL;
	}
	while (n-- > 0) {
		frames_put(b, chain[n]->name);
	}
	free(chain);
	return b->err ? -ENOMEM : 0;
}
