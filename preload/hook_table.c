/*
 * hook_table.c - the hook table: which function each stub stands for.
 *
 * Hooked function i is reached through stub i (hook_tramp.S), which jumps
 * to hook_table_real[i]; the exit path reads hook_table_ents[i] to write
 * the call's record. An address hash finds the index of a function that
 * is hooked already, so that every GOT entry and dlsym pointer of one
 * function shares one stub.
 *
 * Unloading: when the library that defines a hooked function is unloaded,
 * its hooks are retired. A retired stub is reached only through pointers
 * into the unloaded library, so it may be given to another function; it
 * goes first to the same function when its library is loaded again, so a
 * program that reloads a library never runs out of stubs.
 *
 * Publishing: an entry is written completely before any GOT entry or
 * pointer names its stub, and the patcher's release store of the GOT
 * entry (hook_patch.c) publishes it to the trampolines.
 *
 * Everything here but the two arrays runs under the patcher's lock
 * (hook_dl.c).
 */
#include <string.h>

#include "source.h"
#include "hook.h"

void *hook_table_real[HOOK_MAX];
struct hook_ent hook_table_ents[HOOK_MAX];

/* Address -> hook index, open addressing; key 0 empty, 1 deleted. */
#define HASH_SIZE (2 * HOOK_MAX)
static struct {
	uintptr_t key;
	uint32_t idx;
} hash[HASH_SIZE];

static uint32_t nhooks;		/* stubs ever handed out */
static uint32_t dead[HOOK_MAX]; /* retired hook indexes, oldest first */
static uint32_t ndead;
static int full; /* a match found every stub taken */

static uint32_t hash_slot(uintptr_t key)
{
	return (uint32_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 49) &
	       (HASH_SIZE - 1);
}

int hook_table_find(uintptr_t target)
{
	for (uint32_t h = hash_slot(target), n = 0; n < HASH_SIZE;
	     n++, h = (h + 1) & (HASH_SIZE - 1)) {
		if (hash[h].key == 0) {
			return -1;
		}
		if (hash[h].key == target) {
			return (int)hash[h].idx;
		}
	}
	return -1;
}

/*
 * Picks the stub for a new hook of function name_id of group: the retired
 * stub of the same function when its library was unloaded and is loaded
 * again, else a fresh one, else the oldest retired one. -1 when none is
 * left.
 */
static int reuse(uint32_t name_id, uint32_t group)
{
	uint32_t k = 0;

	while (k < ndead && (hook_table_ents[dead[k]].name != name_id ||
			     hook_table_ents[dead[k]].group != group)) {
		k++;
	}
	if (k == ndead) {
		if (nhooks < HOOK_MAX) {
			return (int)nhooks++;
		}
		if (ndead == 0) {
			return -1;
		}
		k = 0;
	}
	uint32_t idx = dead[k];

	memmove(&dead[k], &dead[k + 1], (ndead - k - 1) * sizeof(*dead));
	ndead--;
	return (int)idx;
}

int hook_table_add(uintptr_t target, uint32_t name_id, uint32_t group,
		   uint8_t cat, int status)
{
	int idx = reuse(name_id, group);
	uint32_t h;

	if (idx < 0) {
		full = 1;
		return -1;
	}
	struct hook_ent *e = &hook_table_ents[idx];

	e->name = name_id;
	e->group = group;
	e->kind = COLL_SPAN;
	e->cat = cat;
	e->flags = status ? COLL_FLAG_STATUS : 0;
	e->arg = 0;
	e->on_error = status ? (uint64_t)COLL_FLAG_ERROR << 24 : 0;
	e->dead = 0;
	/* Whether it marks a step: asked once, here, not per call. */
	e->marker = (uint8_t)coll_step_marker(strtab_get(name_id));
	hook_table_real[idx] = (void *)target;
	for (h = hash_slot(target); hash[h].key > 1;
	     h = (h + 1) & (HASH_SIZE - 1)) {
	}
	hash[h].key = target;
	hash[h].idx = (uint32_t)idx;
	return idx;
}

void hook_table_retire(uintptr_t lo, uintptr_t hi)
{
	for (uint32_t i = 0; i < nhooks; i++) {
		uintptr_t t = (uintptr_t)hook_table_real[i];

		if (hook_table_ents[i].dead || t < lo || t >= hi) {
			continue;
		}
		hook_table_ents[i].dead = 1;
		dead[ndead++] = i;
		for (uint32_t h = hash_slot(t), n = 0;
		     n < HASH_SIZE && hash[h].key != 0;
		     n++, h = (h + 1) & (HASH_SIZE - 1)) {
			if (hash[h].key == t) {
				hash[h].key = 1; /* deleted */
				break;
			}
		}
	}
}

int hook_table_full(void)
{
	return full;
}
