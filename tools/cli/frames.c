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

struct frames_node {
	uint64_t id;
	uint64_t parent;
	char *name; /* NULL: a free slot */
	int has_parent;
	int user;
};

struct frames {
	struct frames_node *v;
	size_t cap, n; /* cap: 0 or a power of two */
};

static size_t fr_slot(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

/* Returns a new, empty set, or NULL (ENOMEM). */
struct frames *frames_create(void)
{
	return calloc(1, sizeof(struct frames));
}

/* Forgets every node (the next file's ids are its own). This function
 * can't fail. */
void frames_clear(struct frames *fr)
{
	for (size_t i = 0; i < fr->cap; i++) {
		free(fr->v[i].name);
	}
	free(fr->v);
	fr->v = NULL;
	fr->cap = fr->n = 0;
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
	return fr->n;
}

static struct frames_node *fr_find(const struct frames *fr, uint64_t id)
{
	if (!fr->cap) {
		return NULL;
	}
	for (size_t i = fr_slot(id, fr->cap);; i = (i + 1) & (fr->cap - 1)) {
		if (!fr->v[i].name) {
			return NULL;
		}
		if (fr->v[i].id == id) {
			return &fr->v[i];
		}
	}
}

static int fr_grow(struct frames *fr)
{
	size_t cap = fr->cap ? fr->cap * 2 : 256;
	struct frames_node *v = calloc(cap, sizeof(*v));

	if (!v) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < fr->cap; i++) {
		if (fr->v[i].name) {
			size_t j = fr_slot(fr->v[i].id, cap);

			while (v[j].name) {
				j = (j + 1) & (cap - 1);
			}
			v[j] = fr->v[i];
		}
	}
	free(fr->v);
	fr->v = v;
	fr->cap = cap;
	return 0;
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
		if ((fr->n + 1) * 4 > fr->cap * 3 && fr_grow(fr) < 0) {
			free(name);
			return -ENOMEM;
		}
		size_t i = fr_slot(f->id, fr->cap);

		while (fr->v[i].name) {
			i = (i + 1) & (fr->cap - 1);
		}
		e = &fr->v[i];
		fr->n++;
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

	for (size_t steps = 0; e && steps <= fr->n; steps++) {
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
	chain = malloc((fr->n + 1) * sizeof(*chain));
	if (!chain) {
		return -ENOMEM;
	}
	while (e && n <= fr->n) {
		chain[n++] = e;
		e = e->has_parent ? fr_find(fr, e->parent) : NULL;
	}
	while (n-- > 0) {
		frames_put(b, chain[n]->name);
	}
	free(chain);
	return b->err ? -ENOMEM : 0;
}
