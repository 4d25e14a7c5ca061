/*
 * source.c - the table of event sources that plug into the collector.
 *
 * A source that keeps records of its own beside the rings (the GPU source
 * source) or takes part in the collector's life cycle (the hook
 * engine's fork handlers) registers a struct coll_source at start-up,
 * before recording begins; the collector calls it on the drain thread as
 * source.h describes. The table is written only before the drain
 * thread starts, so reading it takes no lock.
 */
#include <errno.h>

#include "internal.h"

#define MAX_SOURCES 8

const struct coll_source *coll_sources[MAX_SOURCES + 1];
static int nsources;

int coll_source_add(const struct coll_source *s)
{
	for (int i = 0; i < nsources; i++) {
		if (coll_sources[i] == s) {
			return 0;
		}
	}
	if (nsources == MAX_SOURCES) {
		return -ENOSPC;
	}
	coll_sources[nsources++] = s;
	return 0;
}

/* Appends the sources' sections (a table_opts extra). Owner held. */
void source_tables(struct table_sink *k, const struct table_opts *o)
{
	for (int i = 0; i < nsources; i++) {
		if (coll_sources[i]->tables) {
			coll_sources[i]->tables(k, o);
		}
	}
}

int coll_recorded_any(void)
{
	if (ring_any()) {
		return 1;
	}
	for (int i = 0; i < nsources; i++) {
		if (coll_sources[i]->recording &&
		    coll_sources[i]->recording()) {
			return 1;
		}
	}
	return 0;
}
