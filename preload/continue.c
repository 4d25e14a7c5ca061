/*
 * continue.c - the new image's side of exec: the handover that an earlier
 * image of this process left in MXPROF_CONTINUE=<pid>:<trace> (exits.c
 * writes it just before exec; <pid>+:<trace> when that image owes a dump
 * it was asked for while it had recorded nothing).
 *
 * The variable counts only in the process that wrote it (same pid): a
 * child that inherits it starts afresh. The trace origin comes from the
 * journal's header, so that every image's records share one timeline, and
 * the collector then appends to that journal (coll_config's
 * continue_journal) instead of creating it again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "source.h"
#include "preload.h"

/* The trace this image continues, or "". */
static char continued[4096];
/* An earlier image owes a dump (the dump signal reached it while it had
 * recorded nothing). */
static int owed;

void exits_init(int early)
{
	const char *v = getenv(CONTINUE_VAR);
	char *end;

	if (!v) {
		return;
	}
	long pid = strtol(v, &end, 10);
	int plus = *end == '+';
	int rc;

	end += plus;
	if (*end == ':' && pid == (long)getpid() && end[1] &&
	    strlen(end + 1) < sizeof(continued)) {
		rc = coll_continue_origin(end + 1);
		if (rc == 0) {
			snprintf(continued, sizeof(continued), "%s", end + 1);
			owed = plus;
		} else {
			/* Removed, or replaced by something else (another
			 * user's FIFO or link, never opened). */
			fprintf(stderr,
				"mxprof: cannot continue the timeline of %s "
				"after exec: %s; it starts again here\n",
				end + 1,
				rc == -ESTALE ? "its journal is not this "
						"process's"
					      : strerror(-rc));
		}
	}
	if (early) {
		/* Not the program's business; nobody else reads the
		 * environment before main. */
		unsetenv(CONTINUE_VAR);
	}
}

int exits_continued(char *trace, size_t len, int *dump_owed)
{
	size_t n = strlen(continued);

	*dump_owed = 0;
	if (!n || n >= len) {
		return 0;
	}
	memcpy(trace, continued, n + 1);
	*dump_owed = owed;
	return 1;
}
