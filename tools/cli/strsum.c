/*
 * strsum.c - sums by byte string: a hash map from keys of any bytes to a
 * 64-bit sum and a count, for the folded stacks of report --flame (one
 * entry per distinct stack, however many events share it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int ss_empty(const void *slot)
{
	return ((const struct strsum_ent *)slot)->key == NULL;
}

static uint64_t ss_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return ((const struct strsum_ent *)slot)->hash;
}

/* key: a struct strsum_ent with key, len and hash set. */
static int ss_match(const void *slot, const void *key)
{
	const struct strsum_ent *e = slot, *k = key;

	return e->hash == k->hash && e->len == k->len &&
	       !memcmp(e->key, k->key, k->len);
}

static const struct hmap_ops ss_ops = {
	.size = sizeof(struct strsum_ent),
	.empty = ss_empty,
	.hash = ss_hash,
};

/* Adds v to the sum of key[0..len) (a new key starts at 0) and counts it.
 * Sums saturate. Returns 0 or -ENOMEM. */
int strsum_add(struct strsum *m, const void *key, size_t len, int64_t v)
{
	struct strsum_ent k = {
		.key = (char *)key, .len = len, .hash = hmap_fnv1a(key, len)};
	struct strsum_ent *e;

	if (hmap_reserve(&m->map, &ss_ops, 256, 3, 4, NULL) < 0) {
		return -ENOMEM;
	}
	e = hmap_find(&m->map, &ss_ops, k.hash, ss_match, &k);
	if (e->key) {
		e->sum = agg_sat_add(e->sum, v);
		e->count++;
		return 0;
	}
	e->key = malloc(len + 1);
	if (!e->key) {
		return -ENOMEM;
	}
	memcpy(e->key, key, len);
	e->key[len] = 0;
	e->len = len;
	e->hash = k.hash;
	e->sum = v;
	e->count = 1;
	m->map.used++;
	return 0;
}

/* Returns the entry of key[0..len), a new one (sum and count 0) when m
 * had none, or NULL (ENOMEM). The caller may change its sum and count. */
struct strsum_ent *strsum_at(struct strsum *m, const void *key, size_t len)
{
	struct strsum_ent *e;

	if (strsum_add(m, key, len, 0) < 0) {
		return NULL;
	}
	struct strsum_ent k = {
		.key = (char *)key, .len = len, .hash = hmap_fnv1a(key, len)};
	e = hmap_find(&m->map, &ss_ops, k.hash, ss_match, &k);
	e->count--; /* strsum_add() counted this look-up */
	return e;
}

/* Frees the keys and the table of m and empties it. This function can't
 * fail. */
void strsum_clear(struct strsum *m)
{
	struct strsum_ent *e = m->map.slots;

	for (size_t i = 0; i < m->map.cap; i++) {
		free(e[i].key);
	}
	hmap_free(&m->map);
}
