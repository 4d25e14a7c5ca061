/*
 * dump.c - what a dump writes: the journal it starts from, the trace, the
 * tables and the status file.
 *
 * All of it runs on the drain thread (or a requester's thread when there
 * is none) with the owner lock held: the state it works on, struct
 * coll_state, is the drain thread's (internal.h).
 *
 * The journal is created on the first pass that has records, so a process
 * that records nothing (a forked child that execs at once) leaves no file.
 * Each output is written to a temporary name and renamed into place, so a
 * reader never sees half a file; the status file tells `mxprof dump` when
 * a dump is complete.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

struct coll_state coll_state;
#define S coll_state

/*
 * Can the trace go to path? Committing a file renames it over path, so a
 * path that ends in '/' or names a folder, a device (MXPROF_OUTPUT=
 * /dev/null, as root) or a pipe is refused: NULL when usable, else why.
 */
static const char *output_unusable(const char *path)
{
	struct stat st;
	size_t n = strlen(path);

	if (n == 0 || path[n - 1] == '/') {
		return "it names a folder";
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		return S_ISDIR(st.st_mode) ? "it is a folder"
					   : "it is not a regular file";
	}
	return NULL;
}

int dump_ensure_journal(void)
{
	if (S.journal_open) {
		return S.journal_open > 0 ? 0 : -EIO;
	}
	paths_journal(S.cfg.output, S.journal_path, sizeof(S.journal_path));
	S.j->max_bytes = S.cfg.max_trace_bytes;
	const char *why = output_unusable(S.cfg.output);
	int rc = -EINVAL;

	if (!why && S.cfg.continue_journal) {
		/* An earlier image of this process (before exec) began it. */
		rc = journal_continue(S.j, S.journal_path, (int)getpid());
		if (rc == 0) {
			S.j->bytes = S.continued_records * JOURNAL_EVENT_BYTES;
			S.j->max_bytes = S.cfg.max_trace_bytes;
			S.journal_open = 1;
			return 0;
		}
		fprintf(stderr,
			"mxprof: cannot continue %s after exec: %s; the "
			"timeline starts again here\n",
			S.journal_path, strerror(-rc));
		S.cfg.continue_journal = 0;
	}
	if (!why) {
		rc = journal_open(S.j, S.journal_path, (int)getpid());
	}
	if (rc < 0 && rc != -ENOMEM) {
		/* The output folder is not writable, or the path is not one
		 * a file may replace: keep everything, in the temporary
		 * folder, and say where once. */
		const char *tmp = getenv("TMPDIR");
		const char *base = strrchr(S.cfg.output, '/');
		char fallback[sizeof(S.cfg.output)];
		base = base ? base + 1 : S.cfg.output;
		snprintf(fallback, sizeof(fallback), "%s/mxprof-%d-%s",
			 tmp && *tmp ? tmp : "/tmp", (int)getpid(),
			 *base && !why ? base : "profile.json");
		fprintf(stderr,
			"mxprof: cannot write %s %s: %s; writing "
			"%s instead\n",
			why ? "to" : "beside", S.cfg.output,
			why ? why : strerror(-rc), fallback);
		snprintf(S.cfg.output, sizeof(S.cfg.output), "%s", fallback);
		paths_stats(S.cfg.output, S.stats_path, sizeof(S.stats_path));
		paths_journal(S.cfg.output, S.journal_path,
			      sizeof(S.journal_path));
		rc = journal_open(S.j, S.journal_path, (int)getpid());
	}
	if (rc < 0) {
		fprintf(stderr,
			"mxprof: cannot create %s: %s; no timeline will be "
			"written, the tables will\n",
			S.journal_path, strerror(-rc));
		S.journal_open = -1;
		return rc;
	}
	S.j->max_bytes = S.cfg.max_trace_bytes;
	S.journal_open = 1;
	return 0;
}

static void abs_path(const char *p, char *buf, size_t len)
{
	char cwd[4096];

	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
		snprintf(buf, len, "%s", p);
	} else {
		snprintf(buf, len, "%s/%s", cwd, p);
	}
}

void dump_write_status(void)
{
	char path[4200], dir[4200], line[9000], out_abs[4200], stats_abs[4200];
	struct out *o = malloc(sizeof(*o));

	if (!o || paths_status((int)getpid(), path, sizeof(path)) < 0) {
		free(o);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	mkdir(dir, 0700);
	abs_path(S.cfg.output, out_abs, sizeof(out_abs));
	abs_path(S.stats_path, stats_abs, sizeof(stats_abs));
	if (out_open(o, path, 0) == 0) {
		snprintf(line, sizeof(line),
			 "output=%s\nstats=%s\nsignal=%d\ndumps=%llu\n",
			 out_abs, stats_abs, S.cfg.dump_signal,
			 (unsigned long long)S.dumps_done);
		out_str(o, line);
		out_commit(o);
	}
	free(o);
}

void dump_remove_status(void)
{
	char path[4200];

	if (paths_status((int)getpid(), path, sizeof(path)) == 0) {
		unlink(path);
	}
}

/*
 * Writes the tables of a, with the sections extra->extra adds (when extra
 * is not NULL) and the count of dropped records, to path (replaced
 * atomically). Returns 0 or a negative errno, and prints nothing. Shared
 * by a dump and a journal's recovery.
 */
int dump_write_tables(const struct agg *a, uint64_t dropped,
		      const struct table_opts *extra, const char *path)
{
	struct table_opts opts = {.dropped = dropped};
	struct out *o = malloc(sizeof(*o));
	char *text;
	int rc;

	if (extra) {
		opts.extra = extra->extra;
	}
	text = table_format(a, &opts);
	if (!text || !o) {
		rc = -ENOMEM;
	} else if ((rc = out_open(o, path, 0)) == 0) {
		out_str(o, text);
		rc = out_commit(o);
	}
	free(text);
	free(o);
	return rc;
}

/* Reads this process's command line, its arguments joined by spaces (cut
 * to len - 1 bytes), into buf; "" when it cannot be read. */
static void read_cmdline(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/cmdline", "re");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	if (f) {
		fclose(f);
	}
	while (n > 0 && buf[n - 1] == 0) {
		n--;
	}
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == 0) {
			buf[i] = ' ';
		}
	}
	buf[n] = 0;
}

static void refresh_thread(void *ctx, int tid, int dead)
{
	(void)ctx;
	if (!dead) {
		threads_name(S.j, tid, 1);
	}
}

int dump_write(uint64_t dropped)
{
	static const struct table_opts with_sources = {.extra = source_tables};
	char host[256] = "", comm[64], cmdline[1024];
	int rc_trace = 0, rc_stats = 0;
	int cut = 0;

	if (dump_ensure_journal() == 0) {
		ring_foreach_tid(refresh_thread, NULL);
		journal_stats(S.j, dropped);
		/* A journal that could not be written to the end (a full
		 * disk) still holds the timeline up to there: the trace is
		 * written from it, marked as cut. */
		cut = journal_flush(S.j) != 0;
	} else {
		rc_trace = -EIO;
	}
	if (rc_trace == 0) {
		gethostname(host, sizeof(host) - 1);
		threads_read_comm(0, comm, sizeof(comm));
		read_cmdline(cmdline, sizeof(cmdline));
		struct chrome_meta m = {.pid = (int)getpid(),
					.rank = S.cfg.rank,
					.process_name = comm,
					.cmdline = cmdline,
					.host = host,
					.base_utc_ns = clock_base_utc_ns(),
					.dropped = dropped,
					.truncated = S.j->truncated || cut,
					.clock = clock_source(),
					.sources = coll_sources};
		rc_trace = chrome_write_from_journal(S.journal_path,
						     S.cfg.output, &m);
		if (rc_trace < 0 && rc_trace != S.last_trace_err) {
			fprintf(stderr, "mxprof: cannot write %s: %s\n",
				S.cfg.output, strerror(-rc_trace));
		}
	}
	S.last_trace_err = rc_trace;

	rc_stats =
		dump_write_tables(S.agg, dropped, &with_sources, S.stats_path);
	if (rc_stats < 0 && rc_stats != S.last_stats_err) {
		fprintf(stderr, "mxprof: cannot write %s: %s\n", S.stats_path,
			strerror(-rc_stats));
	}
	S.last_stats_err = rc_stats;
	S.dumps_done++;
	S.last_dump_ns = ticks_mono_ns();
	dump_write_status();
	return rc_trace < 0 ? rc_trace : rc_stats;
}
