/*
 * callstack.c - Kineto's "Call stack" argument of an operator with a
 * stack, for the readers of PyTorch's traces that show it (TensorBoard's
 * PyTorch Profiler plugin: its call-stack view, its operators grouped by
 * stack).
 *
 * PyTorch writes the Python frames of an operator's stack, innermost
 * first, each "FILE(LINE): FUNCTION", joined by ";". The frames of the
 * dump's frame tree (stacks.c) are named "FUNCTION (FILE:LINE)" in the
 * category "python"; a node's argument is made from its Python frames,
 * once, when an event first names the node, and kept as a quoted JSON
 * string for the rest of the dump. chrome.c calls callstack_of() for each
 * "cpu_op" span with a stack.
 */
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "internal.h"

struct callstack {
	const struct stack_tree *tree;
	uint32_t py; /* the category of Python frames */
	char **q;    /* node id -> its quoted argument; "" none */
	uint32_t cap;
};

struct callstack *callstack_create(const struct stack_tree *t)
{
	struct callstack *c = calloc(1, sizeof(*c));

	if (c) {
		c->tree = t;
		c->py = strtab_intern("python");
	}
	return c;
}

void callstack_destroy(struct callstack *c)
{
	if (!c) {
		return;
	}
	for (uint32_t i = 0; i < c->cap; i++) {
		if (c->q[i] && c->q[i][0]) {
			free(c->q[i]);
		}
	}
	free(c->q);
	free(c);
}

/* Appends frame name s ("FUNCTION (FILE:LINE)") to b[*n..cap) as PyTorch
 * names it, "FILE(LINE): FUNCTION", or as it is when it has no place.
 * Returns 0, or -1 when it does not fit. */
static int put_frame(char *b, size_t *n, size_t cap, const char *s)
{
	size_t len = strlen(s);
	const char *open = len ? strrchr(s, '(') : NULL;
	const char *colon = open ? strrchr(open, ':') : NULL;
	int w;

	if (open && colon && open > s && open[-1] == ' ' && s[len - 1] == ')') {
		w = snprintf(b + *n, cap - *n, "%.*s(%.*s): %.*s",
			     (int)(colon - open - 1), open + 1,
			     (int)(s + len - 1 - colon - 1), colon + 1,
			     (int)(open - 1 - s), s);
	} else {
		w = snprintf(b + *n, cap - *n, "%s", s);
	}
	if (w < 0 || (size_t)w >= cap - *n) {
		return -1;
	}
	*n += (size_t)w;
	return 0;
}

/* Makes node's quoted argument, "" when it has no Python frame. */
static char *make(const struct callstack *c, uint32_t node)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap), *q;
	uint32_t name, cat, parent;

	if (!b) {
		return NULL;
	}
	while (node && stack_tree_node(c->tree, node, &parent, &name, &cat)) {
		if (cat == c->py) {
			if (n && n + 1 < cap) {
				b[n++] = ';';
			}
			while (put_frame(b, &n, cap, strtab_get(name)) < 0) {
				char *nb = realloc(b, cap * 2);
				if (!nb) {
					free(b);
					return NULL;
				}
				b = nb;
				cap *= 2;
			}
		}
		node = parent;
	}
	if (!n) {
		free(b);
		return "";
	}
	q = malloc(n * 6 + 3);
	if (q) {
		q[0] = '"';
		size_t k = out_json_escape(q + 1, n * 6, b, n, NULL);
		q[k + 1] = '"';
		q[k + 2] = 0;
	}
	free(b);
	return q;
}

const char *callstack_of(struct callstack *c, uint32_t node, size_t *len)
{
	if (!c || !node) {
		return NULL;
	}
	if (node >= c->cap) {
		uint32_t cap = c->cap ? c->cap : 1024;
		while (cap <= node) {
			cap *= 2;
		}
		char **nq = realloc(c->q, cap * sizeof(*nq));
		if (!nq) {
			return NULL;
		}
		memset(nq + c->cap, 0, (cap - c->cap) * sizeof(*nq));
		c->q = nq;
		c->cap = cap;
	}
	if (!c->q[node]) {
		c->q[node] = make(c, node);
	}
	if (!c->q[node] || !c->q[node][0]) {
		return NULL;
	}
	*len = strlen(c->q[node]);
	return c->q[node];
}
