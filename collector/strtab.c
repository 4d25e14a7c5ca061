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

#include "internal.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 1024u /* 4M names */

static const char **chunks[MAX_CHUNKS];
static uint32_t count = 1; /* id 0 is the empty name */
static struct coll_lock lock = COLL_LOCK_INIT(LOCK_STRTAB);

/* Open-addressing hash from string to id; guarded by lock. */
static uint32_t *slots;
static uint32_t nslots;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++) {
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	}
	return h;
}

static const char *slot_str(uint32_t id)
{
	return chunks[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)];
}

static int grow(void)
{
	uint32_t n = nslots ? nslots * 2 : 1024;
	uint32_t *ns = calloc(n, sizeof(*ns));

	if (!ns) {
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t id = slots[i];
		if (!id) {
			continue;
		}
		uint64_t h = hash_str(slot_str(id));
		for (uint32_t j = h & (n - 1);; j = (j + 1) & (n - 1)) {
			if (!ns[j]) {
				ns[j] = id;
				break;
			}
		}
	}
	free(slots);
	slots = ns;
	nslots = n;
	return 0;
}

uint32_t strtab_intern(const char *s)
{
	uint32_t id = 0;

	if (!s || !*s) {
		return 0;
	}
	coll_lock(&lock);
	if ((count + 1) * 2 > nslots && grow() < 0) {
		goto out;
	}
	uint64_t h = hash_str(s);
	uint32_t j = h & (nslots - 1);
	for (; slots[j]; j = (j + 1) & (nslots - 1)) {
		if (strcmp(slot_str(slots[j]), s) == 0) {
			id = slots[j];
			goto out;
		}
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
	slots[j] = id;
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
