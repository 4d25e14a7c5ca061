/*
 * writer.c - the table of output formats: the one place a new format
 * plugs in.
 *
 * A dump (dump.c) and a recovery (recover.c) do not name a format: they
 * run every entry of writers[] for the trace, from the journal, and for
 * the tables, from the aggregates. Each entry is a struct writer_ops
 * (internal.h), a pair of methods as SQLite's method tables are; either
 * may be NULL. The Chrome trace (chrome.c) and the text tables (table.c)
 * are today's entries.
 */
#include <stddef.h>

#include "internal.h"

static const struct writer_ops chrome = {
	.name = "chrome",
	.trace = chrome_write_from_journal,
};

static const struct writer_ops tables = {
	.name = "tables",
	.tables = table_write_file,
};

const struct writer_ops *const writers[] = {&chrome, &tables, NULL};

int writers_trace(const char *journal_path, const char *path,
		  const struct writer_meta *m)
{
	int rc = 0;

	for (size_t i = 0; writers[i] && rc == 0; i++) {
		if (writers[i]->trace) {
			rc = writers[i]->trace(journal_path, path, m);
		}
	}
	return rc;
}

int writers_tables(const struct agg *a, uint64_t dropped,
		   const struct table_opts *extra, const char *path)
{
	int rc = 0;

	for (size_t i = 0; writers[i] && rc == 0; i++) {
		if (writers[i]->tables) {
			rc = writers[i]->tables(a, dropped, extra, path);
		}
	}
	return rc;
}
