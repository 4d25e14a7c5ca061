/*
 * cat.c - trace categories: the Chrome "cat" of each record, by id.
 *
 * A record carries its category as one byte. The collector knows two,
 * user_annotation and c_api; every other one (a GPU runtime's calls, a
 * framework's operators) is named by the source that records it, once,
 * when it is set up. Names are kept for the life of the process and
 * published with a release store of the count, so reading one takes no
 * lock; the journal writes each name before the first pass that may use
 * it (journal.c), and a trace rebuilt from a journal gets the same names.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static char names[COLL_CAT_MAX][32] = {
	[COLL_CAT_USER] = "user_annotation",
	[COLL_CAT_CAPI] = "c_api",
};
static unsigned count = 2;
static struct coll_lock lock = COLL_LOCK_INIT(LOCK_CATEGORIES);

int cat_find(const char *name)
{
	unsigned n = __atomic_load_n(&count, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < n; i++) {
		if (strcmp(names[i], name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

unsigned cat_id(const char *name)
{
	int id = cat_find(name);
	int full = 0;

	if (id >= 0) {
		return (unsigned)id;
	}
	coll_lock(&lock);
	id = cat_find(name);
	if (id < 0 && count < COLL_CAT_MAX) {
		snprintf(names[count], sizeof(names[count]), "%s", name);
		id = (int)count;
		__atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
	} else if (id < 0) {
		full = 1;
		id = COLL_CAT_CAPI;
	}
	coll_unlock(&lock);
	if (full) {
		fprintf(stderr,
			"mxprof: more than %d trace categories; '%s' is "
			"shown as c_api\n",
			COLL_CAT_MAX, name);
	}
	return (unsigned)id;
}

const char *cat_name(unsigned id)
{
	return id < __atomic_load_n(&count, __ATOMIC_ACQUIRE) ? names[id]
							      : "other";
}

unsigned cat_count(void)
{
	return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

/* fork(): held across it (coll_fork_prepare). */
void cat_fork_prepare(void)
{
	coll_lock(&lock);
}

void cat_fork_parent(void)
{
	coll_unlock(&lock);
}
