/*
 * hmap.h - the hash tables of the collector, the hooks and the mxprof
 * command: open addressing with linear probing over an array of the
 * caller's own fixed-size slots, and the one string hash (FNV-1a).
 *
 * The caller keeps its entries in the slots (a row, an id, a pointer) and
 * describes them once in a struct hmap_ops: their size, which slot is
 * empty (an all-zero slot must be), and the hash of a full slot, which is
 * what a lookup of its key computes. A slot's home is hash & (cap - 1);
 * a lookup walks from there to the key's slot or the first empty one, so
 * the table must never fill: the caller grows it before an insert
 * (hmap_reserve(), or its own bound and hmap_grow()). Keys are compared by
 * the caller's match function; hmap_find() is inline, so that with a
 * constant ops and match the compiler makes one loop of them.
 *
 * Growing allocates (calloc) and the tables take no lock: a table is used
 * by one thread at a time, under its owner's lock, and never on the hot
 * path or in a signal handler. The tables that must be (the stack table
 * of collector/stacks.c, the ring tallies of collector/tally.c) are fixed
 * arrays of their own and do not use this module.
 *
 * Files: hmap.h (this), hmap.c (growing, freeing). Callers: collector/
 * (agg.c, stacks.c, strtab.c), preload/hook_aten.c, cupti/convert.c and
 * tools/cli/ (cmd_diff.c, frames.c, launches.c, merge_index.c, strsum.c);
 * hmap.c calls nothing of the project's.
 */
#ifndef MXPROF_HMAP_H
#define MXPROF_HMAP_H

#include <stddef.h>
#include <stdint.h>

/* What the slots of a table are. */
struct hmap_ops {
	size_t size; /* bytes per slot */
	/* Non-zero when slot holds no entry. An all-zero slot must be
	 * empty: new tables are zeroed. */
	int (*empty)(const void *slot);
	/* The hash of the entry in full slot, the same a lookup of its key
	 * computes; ctx is hmap_grow()'s. */
	uint64_t (*hash)(const void *slot, const void *ctx);
};

/* A table: zero-initialised is an empty one with no slots. */
struct hmap {
	void *slots;
	size_t cap;  /* slots: 0 or a power of two */
	size_t used; /* full slots, counted by the caller's inserts */
};

/* Returns the address of slot i of m. This function can't fail. */
static inline void *hmap_at(const struct hmap *m, const struct hmap_ops *ops,
			    size_t i)
{
	return (char *)m->slots + i * ops->size;
}

/*
 * Returns the slot of m that holds the entry that match (slot, key) finds,
 * or else the empty slot where that entry belongs (fill it and count it in
 * m->used). h is the key's hash, as ops->hash gives it for the entry. m
 * must have slots (cap > 0) and an empty one. Allocates nothing; safe
 * wherever the table may be read.
 */
static inline void *hmap_find(const struct hmap *m, const struct hmap_ops *ops,
			      uint64_t h,
			      int (*match)(const void *slot, const void *key),
			      const void *key)
{
	size_t mask = m->cap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		void *s = hmap_at(m, ops, i);
		if (ops->empty(s) || match(s, key)) {
			return s;
		}
	}
}

/*
 * Doubles m (the first time: first slots, a power of two) and moves every
 * entry, in slot order, to its place in the new slots. ctx goes to
 * ops->hash. Returns 0, or -ENOMEM with m as it was. Allocates: not for
 * the hot path or a signal handler.
 */
int hmap_grow(struct hmap *m, const struct hmap_ops *ops, size_t first,
	      const void *ctx);

/*
 * Makes room for one more entry: grows m (hmap_grow()) when used + 1
 * entries would fill more than num / den of it. Returns 0 or -ENOMEM
 * (m is then as it was, and may have no room).
 */
static inline int hmap_reserve(struct hmap *m, const struct hmap_ops *ops,
			       size_t first, unsigned num, unsigned den,
			       const void *ctx)
{
	if ((m->used + 1) * den > m->cap * num) {
		return hmap_grow(m, ops, first, ctx);
	}
	return 0;
}

/* Empties m, keeping its slots. This function can't fail. */
void hmap_clear(struct hmap *m, const struct hmap_ops *ops);

/* Frees the slots of m and makes it an empty table with none (what the
 * entries point to is the caller's). This function can't fail. */
void hmap_free(struct hmap *m);

/* ---- FNV-1a, 64-bit: the string hash ---------------------------------- */

/* The offset basis is the one mxprof has always used, a digit short of
 * the published 14695981039346656037: the hash keeps its values, and the
 * tables walked in slot order (report --flame's folded stacks) their
 * order. The prime is FNV's. */
#define HMAP_FNV_OFFSET 1469598103934665603ull
#define HMAP_FNV_PRIME	1099511628211ull

/* Returns the FNV-1a hash h continued over p[0..n) (start with
 * HMAP_FNV_OFFSET). This function can't fail. */
static inline uint64_t hmap_fnv1a_add(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h = (h ^ b[i]) * HMAP_FNV_PRIME;
	}
	return h;
}

/* Returns the FNV-1a hash of p[0..n). This function can't fail. */
static inline uint64_t hmap_fnv1a(const void *p, size_t n)
{
	return hmap_fnv1a_add(HMAP_FNV_OFFSET, p, n);
}

/* Returns the FNV-1a hash of the C string s, and its length in *len when
 * len is not NULL. This function can't fail. */
static inline uint64_t hmap_fnv1a_str(const char *s, size_t *len)
{
	uint64_t h = HMAP_FNV_OFFSET;
	const char *p = s;

	for (; *p; p++) {
		h = (h ^ (unsigned char)*p) * HMAP_FNV_PRIME;
	}
	if (len) {
		*len = (size_t)(p - s);
	}
	return h;
}

#endif
