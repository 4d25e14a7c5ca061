/*
 * strtab.c - interned names.
 *
 * Records carry 32-bit ids instead of strings, so that a record stays 32
 * bytes and the hot path never copies or hashes text. Interning happens when
 * an object (domain, task, hooked symbol) is created: it takes a mutex and
 * hashes. Looking an id up is lock-free: strings live in fixed chunks that
 * are never moved or freed, and the count is published with a release store
 * after the slot is filled, so a reader that sees id < count sees its string.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "internal.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 1024u /* 4M names */

static const char **chunks[MAX_CHUNKS];
static uint32_t count = 1; /* id 0 is the empty name */
static struct coll_lock lock = COLL_LOCK_INIT(LOCK_STRTAB);

/* Open-addressing hash from string to id (slots hold ids, 0: empty);
 * guarded by lock. */
static struct hmap slots;

static const char *slot_str(uint32_t id)
{
	return chunks[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)];
}

static int slot_empty(const void *slot)
{
	return *(const uint32_t *)slot == 0;
}

static uint64_t slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return hmap_fnv1a_str(slot_str(*(const uint32_t *)slot), NULL);
}

static int slot_match(const void *slot, const void *s)
{
	return strcmp(slot_str(*(const uint32_t *)slot), s) == 0;
}

static const struct hmap_ops slot_ops = {
	.size = sizeof(uint32_t),
	.empty = slot_empty,
	.hash = slot_hash,
};

uint32_t strtab_intern(const char *s)
{
	uint32_t id = 0;

	if (!s || !*s) {
		return 0;
	}
	coll_lock(&lock);
	if ((count + 1) * 2 > slots.cap &&
	    hmap_grow(&slots, &slot_ops, 1024, NULL) < 0) {
		goto out;
	}
	uint32_t *slot = hmap_find(&slots, &slot_ops, hmap_fnv1a_str(s, NULL),
				   slot_match, s);
	if (*slot) {
		id = *slot;
		goto out;
	}
	uint32_t c = count >> CHUNK_BITS;
	if (c >= MAX_CHUNKS) {
		goto out;
	}
	if (!chunks[c]) {
		chunks[c] = calloc(CHUNK_SIZE, sizeof(char *));
		if (!chunks[c]) {
			goto out;
		}
	}
	char *copy = strdup(s);
	if (!copy) {
		goto out;
	}
	id = count;
	chunks[c][id & (CHUNK_SIZE - 1)] = copy;
	*slot = id;
	slots.used++;
	__atomic_store_n(&count, id + 1, __ATOMIC_RELEASE);
out:
	coll_unlock(&lock);
	return id;
}

const char *strtab_get(uint32_t id)
{
	if (id == 0 || id >= __atomic_load_n(&count, __ATOMIC_ACQUIRE)) {
		return "";
	}
	return slot_str(id);
}

uint32_t strtab_count(void)
{
	return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

/*
 * Fork support: held across fork() (coll_fork_prepare), released on both
 * sides, so that the child never inherits a table half-way through a
 * change.
 */
void strtab_lock(void)
{
	coll_lock(&lock);
}

void strtab_unlock(void)
{
	coll_unlock(&lock);
}
