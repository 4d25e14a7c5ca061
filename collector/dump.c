/*
 * dump.c - what a dump writes: the journal it starts from, the trace, the
 * tables and the status file.
 *
 * All of it runs on the drain thread (or a requester's thread when there
 * is none) with the owner lock held: the state it works on, struct
 * coll_state, is the drain thread's (drain.c keeps it and passes it in).
 *
 * The journal is created on the first pass that has records, so a process
 * that records nothing (a forked child that execs at once) leaves no file.
 * In flight mode (flight.c) the journal lives for one dump only: it is
 * created, filled with the window kept in memory, written out as the
 * trace and removed.
 *
 * Each output is written to a temporary name and renamed into place, so a
 * reader never sees half a file; the status file tells `mxprof dump` when
 * a dump is complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "output.h"

/* What the last dump's trace held, for the line at exit. */
static struct writer_written last_written;

/*
 * The size in MB past which the exit says that the timeline is big: 1024,
 * the most that trace viewers load well. MXPROF_TEST_BIG_TRACE_MB, a test
 * knob (docs/settings.md), lowers it so a test passes it cheaply. Read
 * at load, while the process has one thread.
 */
static uint64_t big_trace_mb = 1024;

__attribute__((constructor)) static void dump_load(void)
{
	const char *v = getenv("MXPROF_TEST_BIG_TRACE_MB");
	char *end;

	if (!v) {
		return;
	}
	errno = 0;
	unsigned long long mb = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || mb == 0) {
		fprintf(stderr,
			"mxprof: MXPROF_TEST_BIG_TRACE_MB=%s is not a whole "
			"number of MB above 0; 1024 is used\n",
			v);
		return;
	}
	big_trace_mb = mb;
}

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

/*
 * Another running process writes the journal of the same trace name (two
 * programs given the same MXPROF_OUTPUT): this one writes beside it, as
 * X.<pid>.json, and says so once. Returns journal_open's result.
 */
static int open_beside(struct coll_state *s, int owner)
{
	char tag[24], beside[sizeof(s->cfg.output)];
	int rc, again;

	snprintf(tag, sizeof(tag), "%d", (int)getpid());
	if (paths_child(s->cfg.output, tag, beside, sizeof(beside)) < 0) {
		return -ENAMETOOLONG;
	}
	if (owner > 0) {
		fprintf(stderr,
			"mxprof: %s is being written by process %d; writing "
			"%s beside it\n",
			s->cfg.output, owner, beside);
	} else {
		fprintf(stderr,
			"mxprof: %s was written by another process after this "
			"one started; writing %s beside it\n",
			s->cfg.output, beside);
	}
	snprintf(s->cfg.output, sizeof(s->cfg.output), "%s", beside);
	paths_stats(s->cfg.output, s->stats_path, sizeof(s->stats_path));
	paths_journal(s->cfg.output, s->journal_path, sizeof(s->journal_path));
	rc = journal_open_owned(s->j, s->journal_path, (int)getpid(), &again);
	return rc;
}

/*
 * The fallback for an output that cannot be written: a new private folder
 * (mode 0700, a name nobody can guess) in $TMPDIR, or /tmp, holding the
 * trace under its own name, or "profile.json" when that name is refused
 * or too long to take the journal's ending. Writes its path into buf.
 */
static int fallback_path(const struct coll_state *s, const char *why, char *buf,
			 size_t len)
{
	const char *tmp = getenv("TMPDIR");
	const char *drop = getenv("MXPROF_RUN_DROP");
	const char *base = strrchr(s->cfg.output, '/');
	char dir[4096];
	struct stat st;

	/* Under mxprof run as root: its drop folder (a sticky folder every
	 * user may create in, not list), from which it merges the files. */
	if (drop && *drop && lstat(drop, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_mode & S_ISVTX)) {
		tmp = drop;
	}

	base = base ? base + 1 : s->cfg.output;
	if (why || !*base || strlen(base) + sizeof(".journal") > NAME_MAX + 1) {
		base = "profile.json";
	}
	if (snprintf(dir, sizeof(dir), "%s/mxprof-XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(dir) ||
	    !mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/mxprof-XXXXXX");
		if (!mkdtemp(dir)) {
			return -errno;
		}
	}
	return snprintf(buf, len, "%s/%s", dir, base) < (int)len
		       ? 0
		       : -ENAMETOOLONG;
}

void dump_note_output(struct coll_state *s)
{
	struct stat st;

	snprintf(s->seen_path, sizeof(s->seen_path), "%s", s->cfg.output);
	s->seen_exists = stat(s->cfg.output, &st) == 0;
	s->seen_dev = s->seen_exists ? st.st_dev : 0;
	s->seen_ino = s->seen_exists ? st.st_ino : 0;
}

/* Was the trace at s->cfg.output written (created or replaced) by
 * another process since dump_note_output? A process that started before
 * another ended would otherwise replace that one's trace: two short
 * programs given the same MXPROF_OUTPUT, one after the other. */
static int written_since(const struct coll_state *s)
{
	struct stat st;

	if (strcmp(s->seen_path, s->cfg.output) != 0 ||
	    stat(s->cfg.output, &st) != 0) {
		return 0;
	}
	return !s->seen_exists || st.st_dev != s->seen_dev ||
	       st.st_ino != s->seen_ino;
}

int dump_ensure_journal(struct coll_state *s)
{
	int owner = 0;

	if (s->journal_open) {
		return s->journal_open > 0 ? 0 : -EIO;
	}
	paths_journal(s->cfg.output, s->journal_path, sizeof(s->journal_path));
	s->j->max_bytes = s->cfg.max_trace_bytes;
	const char *why = output_unusable(s->cfg.output);
	int rc = -EINVAL;

	if (!why && s->cfg.continue_journal) {
		/* An earlier image of this process (before exec) began it. */
		rc = journal_continue(s->j, s->journal_path, (int)getpid());
		if (rc == 0) {
			s->j->bytes =
				s->continued_records * JOURNAL_EVENT_BYTES;
			s->j->max_bytes = s->cfg.max_trace_bytes;
			s->journal_open = 1;
			return 0;
		}
		fprintf(stderr,
			"mxprof: cannot continue %s after exec: %s; the "
			"timeline starts again here\n",
			s->journal_path,
			rc == -ESTALE ? "it is not this process's journal"
				      : strerror(-rc));
		s->cfg.continue_journal = 0;
	}
	if (!why && written_since(s)) {
		rc = open_beside(s, 0);
	} else if (!why) {
		rc = journal_open_owned(s->j, s->journal_path, (int)getpid(),
					&owner);
	}
	if (rc == -EBUSY) {
		rc = open_beside(s, owner);
	}
	char fallback[sizeof(s->cfg.output)];
	if (rc < 0 && rc != -ENOMEM &&
	    fallback_path(s, why, fallback, sizeof(fallback)) == 0) {
		/* The output folder is not writable, or the path is not one
		 * a file may replace: keep everything, in a private folder
		 * of the temporary folder, and say where once. */
		fprintf(stderr,
			"mxprof: cannot write %s %s: %s; writing "
			"%s instead\n",
			why ? "to" : "beside", s->cfg.output,
			why ? why : strerror(-rc), fallback);
		snprintf(s->cfg.output, sizeof(s->cfg.output), "%s", fallback);
		paths_stats(s->cfg.output, s->stats_path,
			    sizeof(s->stats_path));
		paths_journal(s->cfg.output, s->journal_path,
			      sizeof(s->journal_path));
		rc = journal_open(s->j, s->journal_path, (int)getpid());
	}
	if (rc < 0) {
		fprintf(stderr,
			"mxprof: cannot create %s: %s; no timeline will be "
			"written, the tables will\n",
			s->journal_path, strerror(-rc));
		s->journal_open = -1;
		return rc;
	}
	s->j->max_bytes = s->cfg.max_trace_bytes;
	s->journal_open = 1;
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

/*
 * The status folder, created mode 0700 when missing, is used only when it
 * is this user's own (paths_private_dir()): another user who made
 * /tmp/mxprof-<uid> first could otherwise plant links there or rewrite
 * what `mxprof dump` reads. Says so once, and then writes no status file.
 */
static int status_dir_ok(const char *dir)
{
	static int warned;
	const char *why;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		return -errno;
	}
	if (paths_private_dir(dir, (unsigned)geteuid(), &why) == 0) {
		return 0;
	}
	if (!warned) {
		warned = 1;
		fprintf(stderr,
			"mxprof: not using %s: %s; no status file, `mxprof "
			"dump` cannot reach this process\n",
			dir, why);
	}
	return -EPERM;
}

/* Texts of every thread's stack written (coll_status_stacks_written). */
static unsigned long long stacks_written;

void coll_status_stacks_written(void)
{
	stacks_written++;
}

void dump_write_status(const struct coll_state *s)
{
	char path[4200], dir[4200], line[9000], out_abs[4200], stats_abs[4200];

	static int swept;

	if (paths_status((int)getpid(), path, sizeof(path)) < 0 ||
	    paths_status_dir(dir, sizeof(dir)) < 0 || status_dir_ok(dir) < 0) {
		return;
	}
	if (!swept) {
		swept = 1;
		sweep_status_dir(dir);
	}
	abs_path(s->cfg.output, out_abs, sizeof(out_abs));
	abs_path(s->stats_path, stats_abs, sizeof(stats_abs));
	int n = snprintf(line, sizeof(line),
			 "output=%s\nstats=%s\nsignal=%d\ndumps=%llu\n"
			 "taken=%d\nstacks=%llu\nrefused=%llu\n",
			 out_abs, stats_abs, s->cfg.dump_signal,
			 (unsigned long long)s->dumps_done,
			 s->cfg.dump_signal_taken, stacks_written,
			 (unsigned long long)s->dumps_refused);

	if (n > 0 && (size_t)n < sizeof(line)) {
		out_write_small(path, line, (size_t)n);
	}
}

void dump_remove_status(const struct coll_state *s)
{
	char path[4200];

	if (paths_status((int)getpid(), path, sizeof(path)) == 0) {
		unlink(path);
	}
}

/* Reads this process's command line, its arguments joined by spaces (cut
 * to len - 1 bytes), into buf; "" when it cannot be read. */
static void read_cmdline(char *buf, size_t len)
{
	int fd = out_fd_open_beyond("/proc/self/cmdline", O_RDONLY | O_CLOEXEC,
				    0);
	size_t n = 0;

	while (fd >= 0 && n < len - 1) {
		ssize_t got = read(fd, buf + n, len - 1 - n);

		if (got <= 0) {
			break;
		}
		n += (size_t)got;
	}
	if (fd >= 0) {
		close(fd);
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
	struct coll_state *s = ctx;

	if (!dead) {
		threads_name(s->j, tid, 1);
	}
}

/*
 * The output's folder was removed while the program ran (rm -rf of a run
 * folder): the trace and tables go to the fallback folder, as for an
 * output that could not be written at start, with one line. The journal
 * is still open; dump_journal_source() reads it through its descriptor.
 */
static void output_folder_check(struct coll_state *s)
{
	char dir[sizeof(s->cfg.output)], fallback[sizeof(s->cfg.output)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", s->cfg.output);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir) {
		return;
	}
	*slash = 0;
	if (stat(dir, &st) == 0 || errno != ENOENT ||
	    fallback_path(s, NULL, fallback, sizeof(fallback)) < 0) {
		return;
	}
	fprintf(stderr, "mxprof: %s was removed; writing %s instead\n", dir,
		fallback);
	snprintf(s->cfg.output, sizeof(s->cfg.output), "%s", fallback);
	paths_stats(s->cfg.output, s->stats_path, sizeof(s->stats_path));
}

/* Where a dump reads the journal: its path, or, when the file at the path
 * is no longer the journal (removed, or replaced by another user) while
 * the journal is still open, its descriptor in /proc. */
static const char *dump_journal_source(const struct coll_state *s, char *buf,
				       size_t len)
{
	struct stat st;

	if (s->j->fd >= 0 && s->j->fd_tid >= 0 &&
	    (lstat(s->journal_path, &st) != 0 || st.st_dev != s->j->dev ||
	     st.st_ino != s->j->ino) &&
	    fstat(s->j->fd, &st) == 0 && st.st_dev == s->j->dev &&
	    st.st_ino == s->j->ino) {
		snprintf(buf, len, "/proc/thread-self/fd/%d", s->j->fd);
		return buf;
	}
	return s->journal_path;
}

static int no_space(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT;
}

/*
 * The output's disk is full (and stays full): the trace and tables go to
 * the fallback folder, with one line; the journal stays where it is.
 * Returns 0, or a negative errno when there is no fallback.
 */
static int disk_fallback(struct coll_state *s)
{
	char fallback[sizeof(s->cfg.output)];
	int rc = fallback_path(s, NULL, fallback, sizeof(fallback));

	if (rc < 0) {
		return rc;
	}
	fprintf(stderr,
		"mxprof: no space left to write %s; writing %s instead\n",
		s->cfg.output, fallback);
	snprintf(s->cfg.output, sizeof(s->cfg.output), "%s", fallback);
	paths_stats(s->cfg.output, s->stats_path, sizeof(s->stats_path));
	return 0;
}

/* dump_write() for some steps: the journal's path and the pick made. */
static int picked(struct coll_state *s, const char *steps, char *jsrc,
		  size_t len, struct step_pick **pick)
{
	int err = 0;

	*pick = NULL;
	if (!steps) {
		return 0;
	}
	if (dump_ensure_journal(s) != 0 || s->journal_open <= 0) {
		return -ENODATA; /* nothing recorded */
	}
	journal_flush(s->j);
	*pick = step_pick_open(steps, dump_journal_source(s, jsrc, len), &err);
	return err;
}

int dump_write(struct coll_state *s, uint64_t dropped, const char *steps)
{
	char jsrc[64];
	static const struct table_opts with_sources = {.extra = source_tables};
	char host[256] = "", comm[64], cmdline[1024];
	int rc_trace = 0, rc_stats = 0;
	int cut = 0;
	struct step_pick *pick = NULL;
	int rc_pick = picked(s, steps, jsrc, sizeof(jsrc), &pick);

	if (rc_pick < 0) {
		return rc_pick;
	}
	const char **json = NULL;
	steps_meta_sync();
	const char **pairs = meta_copy(&json);
	const char **shown = pairs;

	if (pick && !(shown = step_pick_meta(pairs, pick))) {
		shown = pairs;
	}

	if (s->journal_open > 0) {
		output_folder_check(s);
	}
	if (dump_ensure_journal(s) == 0) {
		if (s->cfg.flight_mode) {
			/* The journal begins empty: the window and every
			 * thread's name go in (flight.c). */
			flight_fill(s->j, &s->flight_win);
			threads_write_all(s->j);
		}
		ring_foreach_tid(refresh_thread, s);
		journal_stats(s->j, dropped);
		/* A journal that could not be written to the end (a full
		 * disk) still holds the timeline up to there: the trace is
		 * written from it, marked as cut. */
		cut = journal_flush(s->j) != 0;
	} else {
		rc_trace = -EIO;
	}
	if (rc_trace == 0) {
		gethostname(host, sizeof(host) - 1);
		threads_read_comm(0, comm, sizeof(comm));
		read_cmdline(cmdline, sizeof(cmdline));
		struct writer_meta m = {.pid = (int)getpid(),
					.rank = s->cfg.rank,
					.world_size = s->cfg.world_size,
					.has_local_rank = s->cfg.has_local_rank,
					.local_rank = s->cfg.local_rank,
					.process_name = comm,
					.cmdline = cmdline,
					.host = host,
					.base_utc_ns = clock_base_utc_ns(),
					.dropped = dropped,
					.truncated = s->j->truncated || cut,
					.clock = clock_source(),
					.sources = coll_sources,
					.meta = shown,
					.meta_json = json,
					.written = &last_written,
					.steps = pick};
		rc_trace = writers_trace(
			dump_journal_source(s, jsrc, sizeof(jsrc)),
			s->cfg.output, &m);
		if (no_space(rc_trace) && disk_fallback(s) == 0) {
			rc_trace = writers_trace(
				dump_journal_source(s, jsrc, sizeof(jsrc)),
				s->cfg.output, &m);
		}
		if (s->final && (rc_trace == -EMFILE || rc_trace == -ENFILE) &&
		    s->j->fd >= 0) {
			/* Every descriptor is taken and the limit cannot be
			 * lifted (hard = soft): the journal's, which mxprof
			 * holds, is given up for the tables; the journal
			 * stays on disk for mxprof recover. */
			journal_close(s->j, 0);
			fprintf(stderr,
				"mxprof: cannot write %s: %s; its journal "
				"%s is kept (mxprof recover -f %s)\n",
				s->cfg.output, strerror(-rc_trace),
				s->journal_path, s->journal_path);
			s->last_trace_err = rc_trace;
		}
		/* A journal lost (replaced or removed) has said so. */
		if (rc_trace < 0 && rc_trace != s->last_trace_err &&
		    s->j->err != -ESTALE) {
			fprintf(stderr, "mxprof: cannot write %s: %s\n",
				s->cfg.output, strerror(-rc_trace));
		}
	}
	s->last_trace_err = rc_trace;
	if (s->cfg.flight_mode) {
		/* Flight mode keeps no journal between dumps. */
		journal_close(s->j, 1);
		s->journal_open = 0;
	}

	struct table_opts with_meta = with_sources;
	with_meta.meta = shown;
	/* After dumps(reset), the whole run: what it took out, and since. */
	struct agg *whole = s->agg, *merged = NULL;
	if (pick) {
		/* The journal's records of the steps picked: no GPU
		 * sections, which the journal does not hold. */
		with_meta.extra = NULL;
		if (!(merged = step_pick_agg(
			      pick,
			      dump_journal_source(s, jsrc, sizeof(jsrc))))) {
			rc_stats = -ENOMEM;
		}
		whole = merged;
	} else if (s->before_reset && (merged = agg_create()) &&
		   agg_merge(merged, s->before_reset) == 0 &&
		   agg_merge(merged, s->agg) == 0) {
		whole = merged;
	}
	with_meta.whole_run = 1;
	if (whole) {
		rc_stats = writers_tables(whole, dropped, &with_meta,
					  s->stats_path);
	}
	if (whole && no_space(rc_stats) && disk_fallback(s) == 0) {
		rc_stats = writers_tables(whole, dropped, &with_meta,
					  s->stats_path);
	}
	agg_destroy(merged);
	step_pick_close(pick);
	if (shown != pairs) {
		free(shown);
	}
	free(pairs);
	free(json);
	if (rc_stats < 0 && rc_stats != s->last_stats_err) {
		fprintf(stderr, "mxprof: cannot write %s: %s\n", s->stats_path,
			strerror(-rc_stats));
	}
	s->last_stats_err = rc_stats;
	s->dumps_done++;
	s->last_dump_ns = ticks_mono_ns();
	dump_write_status(s);
	return rc_trace < 0 ? rc_trace : rc_stats;
}

/*
 * One line at exit when the last trace passed big_trace_mb of JSON (more
 * than viewers load well), naming the settings that make it smaller: the
 * cap, and what is recorded. A timeline cut at the cap has its own line
 * (dump_say_cut), which already names the cap. Owner held.
 */
static void say_big(const struct coll_state *s, int cut)
{
	uint64_t mb = last_written.json_bytes >> 20;

	if (cut || s->last_trace_err || mb < big_trace_mb) {
		return;
	}
	fprintf(stderr,
		"mxprof: the timeline is %llu MB of JSON, past the %llu MB "
		"that trace viewers load well: cap it with "
		"MXPROF_MAX_TRACE_MB (the tables still count everything), or "
		"record less with MXPROF_HOOK (fewer functions), MXPROF_TRACE "
		"(fewer sources)%s or a capture window (MXPROF_DELAY, "
		"MXPROF_DURATION, MXPROF_CAPTURE_NVTX)\n",
		(unsigned long long)mb, (unsigned long long)big_trace_mb,
		last_written.stacks ? ", MXPROF_STACKS=0" : ",");
}

/* One line at exit when the timeline lost slices to full buffers (or
 * records of threads that had no buffer) or was cut at
 * MXPROF_MAX_TRACE_MB, naming the setting to change, and one when it is
 * big (say_big). Owner held. */
void dump_say_cut(const struct coll_state *s, uint64_t dropped)
{
	uint64_t lost = ring_tally_lost();
	uint64_t ringless = ring_dropped_ringless();
	uint64_t full = dropped > ringless ? dropped - ringless : 0;
	/* Cut at MXPROF_MAX_TRACE_MB; the disk's share has its own line
	 * (journal.c). */
	int cut = s->j && s->j->truncated && s->cfg.max_trace_bytes &&
		  !s->j->disk_said;
	const char *nobuf = "made while their thread had no buffer (as it "
			    "started or after it ended)";
	char also[96] = "", what[192] = "", fix[128] = "";

	say_big(s, cut);
	if (!dropped && !cut) {
		return;
	}
	if (lost) {
		snprintf(also, sizeof(also),
			 " (%llu of them missing from the "
			 "tables too)",
			 (unsigned long long)lost);
	}
	/* Nothing to raise for the records of a thread without a buffer:
	 * a signal handler's as it starts, a destructor's after it ends. */
	if (full && dropped > full) {
		snprintf(what, sizeof(what),
			 ": %llu from full per-thread buffers, %llu %s",
			 (unsigned long long)full,
			 (unsigned long long)(dropped - full), nobuf);
	} else {
		snprintf(what, sizeof(what), " %s",
			 full ? "from full per-thread buffers" : nobuf);
	}
	if (full) {
		snprintf(fix, sizeof(fix),
			 ": raise MXPROF_BUFFER_MAX_KB (now %u) or set "
			 "MXPROF_OVERFLOW=block",
			 (unsigned)(ring_capacity_max *
				    sizeof(struct coll_rec) / 1024));
	}
	if (dropped) {
		fprintf(stderr,
			"mxprof: the timeline dropped %llu records%s%s%s; "
			"the tables count %s%s\n",
			(unsigned long long)dropped, what, also,
			cut ? " and was cut at MXPROF_MAX_TRACE_MB" : "",
			lost ? "the rest" : "them all", fix);
	} else {
		fprintf(stderr,
			"mxprof: the timeline was cut at "
			"MXPROF_MAX_TRACE_MB=%llu; "
			"the tables count everything: raise it, or 0 for no "
			"cap\n",
			(unsigned long long)(s->cfg.max_trace_bytes >> 20));
	}
}
