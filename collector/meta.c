/*
 * meta.c - metadata the program adds (mxprof_add_metadata(),
 * MXPROF_METADATA): key and value strings, written at the top level of
 * the trace ("key":"value", as PyTorch's profiler add_metadata writes
 * them) and at the head of the tables, in the order first added.
 *
 * The list has a lock of its own (LOCK_META), taken when a key is added
 * and while a dump copies the list (meta_copy()); nothing else is taken
 * under it, so any thread may add a key whatever it holds above it in the
 * written order, and a dump writes the copy without holding it. A key
 * added again keeps its place and takes the new value. Keys the trace's
 * own top level uses are refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define META_MAX 64

static struct {
	char *key, *value;
} meta[META_MAX];
static size_t nmeta;
static struct coll_lock meta_lock = COLL_LOCK_INIT(LOCK_META);

/* Keys of the trace's top level, as chrome.c and Kineto write them. */
static int meta_reserved(const char *key)
{
	static const char *const taken[] = {
		"schemaVersion",    "displayTimeUnit", "baseTimeNanoseconds",
		"deviceProperties", "traceName",       "distributedInfo",
		"traceEvents",	    "mxprof",	       "stackFrames"};

	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		if (strcmp(key, taken[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

int meta_set(const char *key, const char *value)
{
	int rc = 0;

	if (!key || !*key || !value || meta_reserved(key) ||
	    strlen(key) >= META_KEY_MAX || strlen(value) >= META_VALUE_MAX) {
		return -EINVAL;
	}
	char *v = strdup(value);
	if (!v) {
		return -ENOMEM;
	}
	coll_lock(&meta_lock);
	size_t i = 0;
	while (i < nmeta && strcmp(meta[i].key, key) != 0) {
		i++;
	}
	if (i < nmeta) {
		free(meta[i].value);
		meta[i].value = v;
	} else if (nmeta == META_MAX) {
		free(v);
		rc = -ENOSPC;
	} else if (!(meta[i].key = strdup(key))) {
		free(v);
		rc = -ENOMEM;
	} else {
		meta[i].value = v;
		nmeta++;
	}
	coll_unlock(&meta_lock);
	return rc;
}

const char **meta_copy(void)
{
	const char **pairs = NULL;
	size_t bytes = 0;

	coll_lock(&meta_lock);
	for (size_t i = 0; i < nmeta; i++) {
		bytes += strlen(meta[i].key) + strlen(meta[i].value) + 2;
	}
	if (nmeta) {
		pairs = malloc((2 * nmeta + 1) * sizeof(*pairs) + bytes);
	}
	if (pairs) {
		char *p = (char *)(pairs + 2 * nmeta + 1);
		for (size_t i = 0; i < 2 * nmeta; i++) {
			const char *s =
				i % 2 ? meta[i / 2].value : meta[i / 2].key;
			size_t n = strlen(s) + 1;
			memcpy(p, s, n);
			pairs[i] = p;
			p += n;
		}
		pairs[2 * nmeta] = NULL;
	}
	coll_unlock(&meta_lock);
	return pairs;
}

void meta_fork_prepare(void)
{
	coll_lock(&meta_lock);
}

void meta_fork_parent(void)
{
	coll_unlock(&meta_lock);
}
