/*
 * metadata.c - the pairs of mxprof_add_metadata() (api.c) and
 * MXPROF_METADATA: key-value pairs the program (or its environment) adds
 * to the trace's top level and the head of the tables, as PyTorch's
 * profiler add_metadata() does. The collector keeps them
 * (collector/meta.c); settings.c checks MXPROF_METADATA's syntax.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"
#include "preload.h"

/* meta_set() with the line for a failure. Called at load too, inside
 * preload_init_once(): it must not call it again. */
int metadata_add(const char *key, const char *value)
{
	int rc = meta_set(key, value);
	if (rc == -EINVAL) {
		fprintf(stderr,
			"mxprof: add_metadata('%s'): a key of 1 to 255 bytes "
			"that the trace's top level does not use, and a value "
			"below 4096 bytes\n",
			key ? key : "(null)");
	} else if (rc == -ENOSPC) {
		fprintf(stderr,
			"mxprof: add_metadata('%s'): at most 64 keys; not "
			"added\n",
			key);
	}
	return rc;
}

void metadata_load(const char *v)
{
	char key[META_KEY_MAX], value[META_VALUE_MAX];

	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		size_t kl = eq ? (size_t)(eq - p) : 0;
		size_t vl = eq ? len - kl - 1 : 0;
		if (eq && kl < sizeof(key) && vl < sizeof(value)) {
			memcpy(key, p, kl);
			key[kl] = 0;
			memcpy(value, eq + 1, vl);
			value[vl] = 0;
			metadata_add(key, value);
		} else {
			fprintf(stderr,
				"mxprof: MXPROF_METADATA: '%.*s' is too long "
				"(keys below 256 bytes, values below 4096); "
				"left out\n",
				(int)len, p);
		}
		p += len;
		if (*p == ',') {
			p++;
		}
	}
}
