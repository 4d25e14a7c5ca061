/*
 * meta.c - metadata the program adds (mxprof_add_metadata(),
 * MXPROF_METADATA): key and value strings, written at the top level of
 * the trace ("key":"value", as PyTorch's profiler add_metadata writes
 * them) and at the head of the tables, in the order first added.
 *
 * The list is the collector's state: LOCK_OWNER guards it, taken here
 * when a key is added and held by every dump that writes it. A key added
 * again keeps its place and takes the new value. Keys the trace's own
 * top level uses are refused.
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
	coll_own();
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
	coll_disown();
	return rc;
}

void meta_write_trace(struct out *o)
{
	for (size_t i = 0; i < nmeta; i++) {
		out_json_str(o, meta[i].key);
		out_str(o, ":");
		out_json_str(o, meta[i].value);
		out_str(o, ",");
	}
}

const char **meta_pairs(void)
{
	static const char *pairs[2 * META_MAX + 1];

	for (size_t i = 0; i < nmeta; i++) {
		pairs[2 * i] = meta[i].key;
		pairs[2 * i + 1] = meta[i].value;
	}
	pairs[2 * nmeta] = NULL;
	return nmeta ? pairs : NULL;
}
