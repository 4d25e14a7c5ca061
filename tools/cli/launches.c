/*
 * launches.c - host launches that carry a call stack, by correlation id,
 * so that the GPU work they started can be charged to their stack.
 *
 * A launch (a host "X" event with "sf" and args.correlation: cudaLaunchKernel,
 * cudaMemcpyAsync, ...) is kept until the file's end, not dropped at its
 * first match: one graph launch starts many kernels under one correlation.
 * The library writes a process's GPU events after its host events, so a
 * launch must wait for them. A later launch with the same correlation (the
 * next file of a merged trace, which merge copies file by file) replaces
 * the earlier one.
 *
 * The table is bounded: past LAUNCHES_MAX launches, new ones are not kept,
 * and their GPU work is counted as not charged (the caller says so once).
 * Each entry is 24 bytes, so the bound is 96 MiB at most; a trace of that
 * many launches is several gigabytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hmap.h"

#define LAUNCHES_MAX (1u << 22)

struct launches {
	struct hmap v; /* struct launch, used 0: an empty slot */
};

static uint64_t ln_hash(int64_t corr)
{
	return ((uint64_t)corr * 0x9e3779b97f4a7c15ull) >> 20;
}

static int ln_empty(const void *slot)
{
	return !((const struct launch *)slot)->used;
}

static uint64_t ln_slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return ln_hash(((const struct launch *)slot)->corr);
}

static int ln_match(const void *slot, const void *corr)
{
	return ((const struct launch *)slot)->corr == *(const int64_t *)corr;
}

static const struct hmap_ops ln_ops = {
	.size = sizeof(struct launch),
	.empty = ln_empty,
	.hash = ln_slot_hash,
};

/* Returns a new, empty table, or NULL (ENOMEM). */
struct launches *launches_create(void)
{
	return calloc(1, sizeof(struct launches));
}

/* Forgets every launch. This function can't fail. */
void launches_clear(struct launches *l)
{
	hmap_free(&l->v);
}

/* Frees l (NULL accepted). This function can't fail. */
void launches_destroy(struct launches *l)
{
	if (l) {
		launches_clear(l);
		free(l);
	}
}

/* Returns 1 when cat is the category of GPU work (kernel, gpu_memcpy,
 * gpu_memset), which a launch starts. This function can't fail. */
int launches_is_gpu(const char *cat)
{
	/* Called for every slice a report reads: most are neither. */
	if (cat[0] == 'k') {
		return strcmp(cat, "kernel") == 0;
	}
	return cat[0] == 'g' && (strcmp(cat, "gpu_memcpy") == 0 ||
				 strcmp(cat, "gpu_memset") == 0);
}

/* Returns the launch with correlation corr, or NULL. This function can't
 * fail. */
const struct launch *launches_get(const struct launches *l, int64_t corr)
{
	const struct launch *e;

	if (!l->v.cap) {
		return NULL;
	}
	e = hmap_find(&l->v, &ln_ops, ln_hash(corr), ln_match, &corr);
	return e->used ? e : NULL;
}

/* Keeps launch x under x->corr, replacing one kept before. Returns 0,
 * -ENOSPC when LAUNCHES_MAX are kept (x is not), or -ENOMEM. */
int launches_put(struct launches *l, const struct launch *x)
{
	struct launch *e = (struct launch *)launches_get(l, x->corr);

	if (!e) {
		if (l->v.used >= LAUNCHES_MAX) {
			return -ENOSPC;
		}
		if (hmap_reserve(&l->v, &ln_ops, 1024, 3, 4, NULL) < 0) {
			return -ENOMEM;
		}
		e = hmap_find(&l->v, &ln_ops, ln_hash(x->corr), ln_match,
			      &x->corr);
		l->v.used++;
	}
	*e = *x;
	e->used = 1;
	return 0;
}
