/*
 * meta.c - metadata the program adds (mxprof_add_metadata(),
 * MXPROF_METADATA): key and value strings, written at the top level of
 * the trace ("key":"value", as PyTorch's profiler add_metadata writes
 * them) and at the head of the tables, in the order first added; and
 * JSON values (mxprof_add_metadata_json(), MindSpore's
 * add_metadata_json), written into the trace as they are, after the
 * strings, and not in the tables.
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
	int json; /* value is JSON text, written as it is */
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

/* meta_set() and meta_set_json(). */
static int meta_put(const char *key, const char *value, int json)
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
		meta[i].json = json;
	} else if (nmeta == META_MAX) {
		free(v);
		rc = -ENOSPC;
	} else if (!(meta[i].key = strdup(key))) {
		free(v);
		rc = -ENOMEM;
	} else {
		meta[i].value = v;
		meta[i].json = json;
		nmeta++;
	}
	coll_unlock(&meta_lock);
	return rc;
}

int meta_set(const char *key, const char *value)
{
	return meta_put(key, value, 0);
}

int meta_set_json(const char *key, const char *json)
{
	return meta_put(key, json, 1);
}

/* The pairs whose value is JSON text (json 1) or a string (json 0), in
 * one malloc'ed block; NULL when there is none. meta_lock held. */
static const char **copy_kind(int json)
{
	const char **pairs = NULL;
	size_t bytes = 0, n = 0;

	for (size_t i = 0; i < nmeta; i++) {
		if (meta[i].json == json) {
			bytes +=
				strlen(meta[i].key) + strlen(meta[i].value) + 2;
			n++;
		}
	}
	if (n) {
		pairs = malloc((2 * n + 1) * sizeof(*pairs) + bytes);
	}
	if (pairs) {
		char *p = (char *)(pairs + 2 * n + 1);
		size_t k = 0;
		for (size_t i = 0; i < nmeta; i++) {
			if (meta[i].json != json) {
				continue;
			}
			const char *kv[2] = {meta[i].key, meta[i].value};
			for (int j = 0; j < 2; j++) {
				size_t len = strlen(kv[j]) + 1;
				memcpy(p, kv[j], len);
				pairs[k++] = p;
				p += len;
			}
		}
		pairs[k] = NULL;
	}
	return pairs;
}

const char **meta_copy(const char ***json)
{
	coll_lock(&meta_lock);
	const char **pairs = copy_kind(0);
	if (json) {
		*json = copy_kind(1);
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
