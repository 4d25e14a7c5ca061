/*
 * paths.c - the names of the files that belong to a trace, in one place for
 * the library and the mxprof command, which must agree on them: the command
 * looks for what the library wrote.
 *
 *   X.json, X.json.gz, X.gz, X   the trace (a ".gz" ending compresses)
 *   X.stats.txt                  its tables
 *   <trace>.journal              its journal (the whole trace name kept)
 *   X.<pid>.json, X.<pid>.gz ... a descendant's trace
 *   .../mxprof[-<uid>]/<pid>.status   a recording process's status file
 *
 * The status folder is trusted only when it is a real folder (not a
 * symbolic link) that its user owns and nobody else may write:
 * paths_private_dir() is that test, for the library and `mxprof dump`.
 *
 * X is the trace's name without its ending: first ".gz", then ".json", each
 * taken off only when something other than a '/' comes before it, so that
 * "t.gz" and "t.json.gz" both give "t" and a file named ".json" keeps its
 * name. Endings are matched with their case: "t.JSON" is its own X, as
 * out.c compresses "t.gz" but not "t.GZ".
 *
 * Every function writes into the caller's buffer and returns 0 or
 * -ENAMETOOLONG (buf is then ""); none allocates, so each is safe after
 * fork in a multi-threaded program.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

/* Returns 1 when s[0..n) ends with the ending e and something other than a
 * '/' comes before it. */
static int has_ending(const char *s, size_t n, const char *e)
{
	size_t k = strlen(e);

	return n > k && memcmp(s + n - k, e, k) == 0 && s[n - k - 1] != '/';
}

/* Returns the length of X, the trace's name without ".json", ".gz" or
 * ".json.gz" (see paths.h). */
size_t paths_stem_len(const char *trace)
{
	size_t n = strlen(trace);

	if (has_ending(trace, n, ".gz")) {
		n -= 3;
	}
	if (has_ending(trace, n, ".json")) {
		n -= 5;
	}
	return n;
}

/* Returns 0 when snprintf's result w fit in len; else empties buf and
 * returns -ENAMETOOLONG. */
static int fit(int w, char *buf, size_t len)
{
	if (w >= 0 && (size_t)w < len) {
		return 0;
	}
	if (len > 0) {
		buf[0] = 0;
	}
	return -ENAMETOOLONG;
}

/* Writes X.stats.txt for the trace path trace (see paths.h). */
int paths_stats(const char *trace, char *buf, size_t len)
{
	size_t n = paths_stem_len(trace);

	return fit(snprintf(buf, len, "%.*s.stats.txt", (int)n, trace), buf,
		   len);
}

/* Writes X.stacks.txt (see paths.h). */
int paths_stacks_text(const char *trace, char *buf, size_t len)
{
	size_t n = paths_stem_len(trace);

	return fit(snprintf(buf, len, "%.*s.stacks.txt", (int)n, trace), buf,
		   len);
}

/* Writes <trace>.journal (see paths.h). */
int paths_journal(const char *trace, char *buf, size_t len)
{
	return fit(snprintf(buf, len, "%s.journal", trace), buf, len);
}

/* Writes the trace whose journal is journal (see paths.h). */
int paths_journal_trace(const char *journal, char *buf, size_t len)
{
	static const char ending[] = ".journal";
	size_t n = strlen(journal), k = sizeof(ending) - 1;

	if (n <= k || strcmp(journal + n - k, ending) != 0) {
		if (len > 0) {
			buf[0] = 0;
		}
		return -EINVAL;
	}
	return fit(snprintf(buf, len, "%.*s", (int)(n - k), journal), buf, len);
}

/* Writes X.<tag> followed by the trace's ending (see paths.h). */
int paths_child(const char *trace, const char *tag, char *buf, size_t len)
{
	size_t n = paths_stem_len(trace);

	return fit(
		snprintf(buf, len, "%.*s.%s%s", (int)n, trace, tag, trace + n),
		buf, len);
}

/* Writes the status file's path of process pid (see paths.h). */
int paths_status(int pid, char *buf, size_t len)
{
	char dir[4096];

	if (paths_status_dir(dir, sizeof(dir)) < 0) {
		return fit(-1, buf, len);
	}
	return fit(snprintf(buf, len, "%s/%d.status", dir, pid), buf, len);
}

/* Writes the folder of the status files (see paths.h). */
int paths_status_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg && *xdg) {
		return fit(snprintf(buf, len, "%s/mxprof", xdg), buf, len);
	}
	return fit(snprintf(buf, len, "/tmp/mxprof-%u", (unsigned)getuid()),
		   buf, len);
}

/* Is dir a private folder of uid (see paths.h)? */
int paths_private_dir(const char *dir, unsigned uid, const char **why)
{
	struct stat st;

	*why = NULL;
	if (lstat(dir, &st) < 0) {
		*why = "it cannot be read";
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		*why = "it is a symbolic link";
	} else if (!S_ISDIR(st.st_mode)) {
		*why = "it is not a folder";
	} else if (st.st_uid != uid) {
		*why = "another user owns it";
	} else if (st.st_mode & 022) {
		*why = "other users may write to it";
	}
	return *why ? -EPERM : 0;
}

/* Writes the temporary name beside path for process pid (see
 * paths.h). */
int paths_temp(const char *path, int pid, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char tail[32];
	int n = snprintf(tail, sizeof(tail), ".tmp.%d", pid);
	uint32_t h = 2166136261u;

	if (strlen(base) + (size_t)n <= NAME_MAX) {
		return fit(snprintf(buf, len, "%s%s", path, tail), buf, len);
	}
	for (const char *p = base; *p; p++) {
		h = (h ^ (unsigned char)*p) * 16777619u;
	}
	return fit(snprintf(buf, len, "%.*s.mxprof-%08x%s", (int)(base - path),
			    path, (unsigned)h, tail),
		   buf, len);
}
