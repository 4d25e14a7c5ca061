/*
 * hmap.c - growing and freeing the open-addressing tables of hmap.h.
 *
 * Growing moves the entries in slot order, each to the first empty slot
 * from its home, as the tables did one by one before they shared this:
 * a table that grows at the same sizes holds its entries in the same
 * slots, so whatever walks the slots in order (a dump's rows) walks them
 * as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"

int hmap_grow(struct hmap *m, const struct hmap_ops *ops, size_t first,
	      const void *ctx)
{
	size_t cap = m->cap ? m->cap * 2 : first;
	char *slots;

	if (cap <= m->cap || (cap & (cap - 1)) != 0 ||
	    !(slots = calloc(cap, ops->size))) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		const void *s = hmap_at(m, ops, i);
		if (ops->empty(s)) {
			continue;
		}
		size_t j = (size_t)ops->hash(s, ctx) & (cap - 1);
		while (!ops->empty(slots + j * ops->size)) {
			j = (j + 1) & (cap - 1);
		}
		memcpy(slots + j * ops->size, s, ops->size);
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

void hmap_clear(struct hmap *m, const struct hmap_ops *ops)
{
	if (m->slots) {
		memset(m->slots, 0, m->cap * ops->size);
	}
	m->used = 0;
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->used = 0;
}
