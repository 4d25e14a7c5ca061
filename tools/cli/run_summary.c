/*
 * run_summary.c - what mxprof run prints once the program has ended: the
 * top rows of each table and the files written, on stderr.
 *
 * The names come from the output pattern as the library expands it
 * (preload/settings.c, with the rank the program inherits from this
 * process's RANK, OMPI_COMM_WORLD_RANK, ...) and from collector/paths.c,
 * which the library writes by: the tables beside the trace, the descendants'
 * traces, the journal a killed program leaves. The tables are the
 * library's own X.stats.txt; only when that is missing are they
 * aggregated again from the trace.
 *
 * A program that names other files with set_config(filename=...) notes
 * the new name in a file of mxprof run's (MXPROF_RUN_NOTES,
 * preload/set_config.c): the summary then follows the program's process
 * to those files (run_summary_notes_*).
 *
 * Only files this run wrote are reported: run_summary_before() notes the
 * files that could match (device, inode, size, time) before the program
 * starts, and a file found unchanged afterwards is an earlier run's.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "settings.h"

static const char *rs_env(const char *name)
{
	return getenv(name);
}

/*
 * Writes the trace path the library will use for pid (0: %p as the glob
 * "*"): MXPROF_OUTPUT's pattern as the library expands it, with the rank
 * the program inherits from this process's environment.
 */
void run_summary_expand(const char *pat, pid_t pid, char *buf, size_t len)
{
	settings_output_name(pat, (int)pid, settings_rank(rs_env), 0, buf, len);
}

/* Prints the stats file with at most top rows in each section, and each
 * time section's Total row. Returns 0, or -1 when it cannot be read. */
static int rs_print_stats(const char *path, unsigned top)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int in_rows = 0;
	unsigned rows = 0, hidden = 0;

	if (!f) {
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '\n') {
			if (hidden) {
				fprintf(stderr, "... %u more\n", hidden);
			}
			in_rows = 0;
			hidden = 0;
			fputs(line, stderr);
			continue;
		}
		if (in_rows && strncmp(line, "Total ", 6) == 0) {
			/* The section's Total row is always shown, after the
			 * count of the rows left out. */
			if (hidden) {
				fprintf(stderr, "... %u more\n", hidden);
			}
			hidden = 0;
		} else if (in_rows) {
			if (top && rows >= top) {
				hidden++;
				continue;
			}
			rows++;
		} else if (strncmp(line, "----", 4) == 0) {
			in_rows = 1;
			rows = 0;
		}
		fputs(line, stderr);
	}
	if (hidden) {
		fprintf(stderr, "... %u more\n", hidden);
	}
	fclose(f);
	return 0;
}

/* The tag of a descendant's trace name, as a glob (paths_child). */
#define RS_PID_GLOB "[0-9]*"

/* The files that could be this run's, as they were before it. */
static struct rs_seen {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
} * rs_seen;
static size_t rs_nseen;

/* Notes every match of pattern in rs_seen; what cannot be noted is
 * left out (and then counts as new). */
static void rs_note(const char *pattern)
{
	glob_t g;

	if (glob(pattern, 0, NULL, &g) != 0) {
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;
		struct rs_seen *n;

		if (stat(g.gl_pathv[i], &st) < 0 ||
		    !(n = realloc(rs_seen, (rs_nseen + 1) * sizeof(*n)))) {
			continue;
		}
		rs_seen = n;
		rs_seen[rs_nseen++] = (struct rs_seen){st.st_dev, st.st_ino,
						       st.st_size, st.st_mtim};
	}
	globfree(&g);
}

/* Returns 1 when path exists and was not as run_summary_before() saw
 * it: this run wrote it. */
static int rs_written(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		return 0;
	}
	for (size_t i = 0; i < rs_nseen; i++) {
		const struct rs_seen *s = &rs_seen[i];
		if (s->dev == st.st_dev && s->ino == st.st_ino &&
		    s->size == st.st_size &&
		    s->mtim.tv_sec == st.st_mtim.tv_sec &&
		    s->mtim.tv_nsec == st.st_mtim.tv_nsec) {
			return 0;
		}
	}
	return 1;
}

int run_summary_parts_dir(const char *trace, char *buf, size_t len)
{
	int w = snprintf(buf, len, "%.*s.processes", (int)paths_stem_len(trace),
			 trace);

	return w >= 0 && (size_t)w < len ? 0 : -ENAMETOOLONG;
}

/* Returns 1 when name[pre .. strlen(name) - suf) is a non-empty run of
 * digits: a pid, not the glob's match of "X.1.stats.txt" or "X.1.journal"
 * for a trace without an ending. */
static int rs_is_tag(const char *name, size_t pre, size_t suf)
{
	size_t n = strlen(name), i;

	if (n < pre + suf + 1) {
		return 0;
	}
	for (i = pre; i < n - suf; i++) {
		if (name[i] < '0' || name[i] > '9') {
			return 0;
		}
	}
	return 1;
}

/* Writes the glob of the descendants' traces that mxprof run moved into
 * X.processes (run_tree.c). Returns 0, or -ENAMETOOLONG. */
static int rs_parked(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], child[PATH_MAX + 16];
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (run_summary_parts_dir(path, dir, sizeof(dir)) < 0 ||
	    paths_child(base, RS_PID_GLOB, child, sizeof(child)) < 0) {
		return -ENAMETOOLONG;
	}
	int w = snprintf(buf, len, "%s/%s", dir, child);
	return w >= 0 && (size_t)w < len ? 0 : -ENAMETOOLONG;
}

/* Prints "mxprof: child  PATH" for each descendant's trace that matches
 * glob cpat (X.<pid><ending>, the pid's digits at pre) and this run
 * wrote. Returns 1 when it printed any. */
static int rs_children(const char *cpat, size_t pre, size_t suf)
{
	glob_t g;
	int any = 0;

	if (glob(cpat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			if (!rs_is_tag(g.gl_pathv[i], pre, suf) ||
			    !rs_written(g.gl_pathv[i])) {
				continue;
			}
			fprintf(stderr, "mxprof: child  %s\n", g.gl_pathv[i]);
			any = 1;
		}
	}
	globfree(&g);
	return any;
}

/* Flight mode's numbered files beside the trace path: X.<trigger>.<n>
 * with its ending. */
static const char *const rs_triggers[] = {"dump", "slow", "hang"};

/* Notes (print 0) or prints as "mxprof: flight PATH" (print 1) the
 * numbered files of flight mode's triggers beside path that this run
 * wrote, traces, tables and a hang's stacks, in the glob's order.
 * Returns 1 when it printed any. */
static int rs_flight(const char *path, int print)
{
	size_t stem = paths_stem_len(path), suf = strlen(path) - stem;
	int any = 0;

	for (size_t t = 0; t < sizeof(rs_triggers) / sizeof(*rs_triggers);
	     t++) {
		char tag[32], cpat[PATH_MAX + 48], stats[PATH_MAX + 64];
		glob_t g;

		snprintf(tag, sizeof(tag), "%s.[0-9]*", rs_triggers[t]);
		if (paths_child(path, tag, cpat, sizeof(cpat)) < 0) {
			continue;
		}
		if (!print) {
			rs_note(cpat);
			if (paths_stats(cpat, stats, sizeof(stats)) == 0) {
				rs_note(stats);
			}
			if (paths_stacks_text(cpat, stats, sizeof(stats)) ==
			    0) {
				rs_note(stats);
			}
			continue;
		}
		if (glob(cpat, 0, NULL, &g) != 0) {
			continue;
		}
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *p = g.gl_pathv[i];
			if (!rs_is_tag(p, stem + strlen(rs_triggers[t]) + 2,
				       suf) ||
			    !rs_written(p)) {
				continue;
			}
			fprintf(stderr, "mxprof: flight %s\n", p);
			if (paths_stats(p, stats, sizeof(stats)) == 0 &&
			    rs_written(stats)) {
				fprintf(stderr, "mxprof: flight %s\n", stats);
			}
			if (paths_stacks_text(p, stats, sizeof(stats)) == 0 &&
			    rs_written(stats)) {
				fprintf(stderr, "mxprof: flight %s\n", stats);
			}
			any = 1;
		}
		globfree(&g);
	}
	return any;
}

void run_summary_before(const char *pat)
{
	char path[PATH_MAX], stats[PATH_MAX + 16], cpat[PATH_MAX + 16];

	if (!pat || !*pat) {
		pat = "profile.json";
	}
	run_summary_expand(pat, 0, path, sizeof(path));
	rs_note(path);
	if (paths_stats(path, stats, sizeof(stats)) == 0) {
		rs_note(stats);
	}
	if (paths_child(path, RS_PID_GLOB, cpat, sizeof(cpat)) == 0) {
		rs_note(cpat);
	}
	if (rs_parked(path, cpat, sizeof(cpat)) == 0) {
		rs_note(cpat);
	}
	rs_flight(path, 0);
}

/* Prints the summary of a run on stderr (see cli.h). This function can't
 * fail; what cannot be read is left out. */
void run_summary_print(const char *pat, pid_t pid, unsigned top, int quiet)
{
	char path[PATH_MAX], stats[PATH_MAX + 16], cpat[PATH_MAX + 16];
	int have = 0, have_stats;

	if (!pat || !*pat) {
		pat = "profile.json";
	}
	run_summary_expand(pat, pid, path, sizeof(path));
	paths_stats(path, stats, sizeof(stats));
	have = rs_written(path);
	have_stats = rs_written(stats);
	if (!quiet) {
		if ((!have_stats || rs_print_stats(stats, top) < 0) && have) {
			struct agg *a = agg_create();
			struct table_opts o = {.top = top};
			char *text = NULL;

			if (a && cmd_report_aggregate(path, a, &o.dropped) !=
					 TRACE_BAD) {
				text = table_format(a, &o);
			}
			if (text) {
				fputs(text, stderr);
			}
			free(text);
			agg_destroy(a);
		}
	}
	if (have) {
		fprintf(stderr, "mxprof: trace  %s\n", path);
	}
	if (have_stats) {
		fprintf(stderr, "mxprof: tables %s\n", stats);
	}
	/* Descendants write X.<pid>.json (paths_child) beside the parent's
	 * file, which mxprof run moves into X.processes: the glob's matches
	 * whose tag is all digits. */
	size_t stem = paths_stem_len(path), suf = strlen(path) - stem;
	if (paths_child(path, RS_PID_GLOB, cpat, sizeof(cpat)) == 0) {
		have |= rs_children(cpat, stem + 1, suf);
	}
	rs_flight(path, 1);
	if (rs_parked(path, cpat, sizeof(cpat)) == 0) {
		have |= rs_children(
			cpat, strlen(cpat) - strlen(RS_PID_GLOB) - suf, suf);
	}
	if (!have) {
		char journal[4200];
		struct stat st;

		if (paths_journal(path, journal, sizeof(journal)) == 0 &&
		    stat(journal, &st) == 0 && S_ISREG(st.st_mode)) {
			util_err("no trace at %s (the program may have been "
				 "killed before mxprof could write it); "
				 "`mxprof recover %s` rebuilds it",
				 path, journal);
		} else {
			util_err("no trace at %s (the program recorded "
				 "nothing, was killed before mxprof could "
				 "write it, or named another file with "
				 "set_config(filename=...))",
				 path);
		}
	}
}

int run_summary_notes_open(char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	int fd;

	path[0] = 0;
	if (snprintf(dir, sizeof(dir), "%s/mxprof-run-XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(dir) ||
	    !mkdtemp(dir)) {
		return -1;
	}
	if (snprintf(path, len, "%s/notes", dir) >= (int)len ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) <
		    0) {
		rmdir(dir);
		path[0] = 0;
		return -1;
	}
	close(fd);
	return 0;
}

int run_summary_notes_trace(const char *path, pid_t pid, char *out, size_t len)
{
	FILE *f = path[0] ? fopen(path, "r") : NULL;
	char line[4200];
	int found = 0;

	if (!f) {
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *end;
		long p = strtol(line, &end, 10);

		if (!tab || end != tab || p != (long)pid ||
		    !strchr(tab, '\n')) {
			continue;
		}
		tab[1 + strcspn(tab + 1, "\n")] = 0;
		if (snprintf(out, len, "%s", tab + 1) < (int)len) {
			found = 1;
		}
	}
	fclose(f);
	return found;
}

void run_summary_notes_close(char *path)
{
	char *slash;

	if (!path[0]) {
		return;
	}
	unlink(path);
	slash = strrchr(path, '/');
	if (slash) {
		*slash = 0;
		rmdir(path);
	}
	path[0] = 0;
}
