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

#define LAUNCHES_MAX (1u << 22)

struct launches {
	struct launch *v;
	size_t cap, n; /* cap: 0 or a power of two */
};

static size_t ln_slot(int64_t corr, size_t cap)
{
	uint64_t h = (uint64_t)corr * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (cap - 1);
}

/* Returns a new, empty table, or NULL (ENOMEM). */
struct launches *launches_create(void)
{
	return calloc(1, sizeof(struct launches));
}

/* Forgets every launch. This function can't fail. */
void launches_clear(struct launches *l)
{
	free(l->v);
	l->v = NULL;
	l->cap = l->n = 0;
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
	return strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 ||
	       strcmp(cat, "gpu_memset") == 0;
}

/* Returns the launch with correlation corr, or NULL. This function can't
 * fail. */
const struct launch *launches_get(const struct launches *l, int64_t corr)
{
	if (!l->cap) {
		return NULL;
	}
	for (size_t i = ln_slot(corr, l->cap);; i = (i + 1) & (l->cap - 1)) {
		if (!l->v[i].used) {
			return NULL;
		}
		if (l->v[i].corr == corr) {
			return &l->v[i];
		}
	}
}

static int ln_grow(struct launches *l)
{
	size_t cap = l->cap ? l->cap * 2 : 1024;
	struct launch *v = calloc(cap, sizeof(*v));

	if (!v) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->cap; i++) {
		if (l->v[i].used) {
			size_t j = ln_slot(l->v[i].corr, cap);

			while (v[j].used) {
				j = (j + 1) & (cap - 1);
			}
			v[j] = l->v[i];
		}
	}
	free(l->v);
	l->v = v;
	l->cap = cap;
	return 0;
}

/* Keeps launch x under x->corr, replacing one kept before. Returns 0,
 * -ENOSPC when LAUNCHES_MAX are kept (x is not), or -ENOMEM. */
int launches_put(struct launches *l, const struct launch *x)
{
	struct launch *e = (struct launch *)launches_get(l, x->corr);

	if (!e) {
		if (l->n >= LAUNCHES_MAX) {
			return -ENOSPC;
		}
		if ((l->n + 1) * 4 > l->cap * 3 && ln_grow(l) < 0) {
			return -ENOMEM;
		}
		size_t i = ln_slot(x->corr, l->cap);

		while (l->v[i].used) {
			i = (i + 1) & (l->cap - 1);
		}
		e = &l->v[i];
		l->n++;
	}
	*e = *x;
	e->used = 1;
	return 0;
}
