/*
 * strsum.c - sums by byte string: a hash map from keys of any bytes to a
 * 64-bit sum and a count, for the folded stacks of report --flame (one
 * entry per distinct stack, however many events share it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static uint64_t ss_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ p[i]) * 1099511628211ull;
	}
	return h;
}

static int ss_grow(struct strsum *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	struct strsum_ent *v = calloc(cap, sizeof(*v));

	if (!v) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->e[i].key) {
			size_t j = m->e[i].hash & (cap - 1);

			while (v[j].key) {
				j = (j + 1) & (cap - 1);
			}
			v[j] = m->e[i];
		}
	}
	free(m->e);
	m->e = v;
	m->cap = cap;
	return 0;
}

/* Adds v to the sum of key[0..len) (a new key starts at 0) and counts it.
 * Sums saturate. Returns 0 or -ENOMEM. */
int strsum_add(struct strsum *m, const void *key, size_t len, int64_t v)
{
	uint64_t h = ss_hash(key, len);
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && ss_grow(m) < 0) {
		return -ENOMEM;
	}
	for (i = h & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1)) {
		struct strsum_ent *e = &m->e[i];

		if (e->hash == h && e->len == len &&
		    !memcmp(e->key, key, len)) {
			e->sum = agg_sat_add(e->sum, v);
			e->count++;
			return 0;
		}
	}
	m->e[i].key = malloc(len + 1);
	if (!m->e[i].key) {
		return -ENOMEM;
	}
	memcpy(m->e[i].key, key, len);
	m->e[i].key[len] = 0;
	m->e[i].len = len;
	m->e[i].hash = h;
	m->e[i].sum = v;
	m->e[i].count = 1;
	m->n++;
	return 0;
}

/* Frees the keys and the table of m and empties it. This function can't
 * fail. */
void strsum_clear(struct strsum *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->e[i].key);
	}
	free(m->e);
	memset(m, 0, sizeof(*m));
}
