/*
 * run_tree.c - mxprof run gives one result for the whole process tree it
 * started.
 *
 * Under the library, the first process writes the trace at -o (X.json)
 * and every descendant, forked or spawned, writes X.<pid>.json beside it
 * (collector/paths.c); an exec'ed image continues its process's file.
 * Once the program has ended:
 *
 *  1. A journal left beside any of those names belongs to a process that
 *     died before its final dump (SIGKILL, an OOM kill): it is recovered
 *     into that process's trace and tables (collector/recover.c), said in
 *     one line, and removed.
 *  2. With more than one process, each one's trace (X.json, X.<pid>.json)
 *     and tables move into the folder X.processes/ (where a reader that
 *     loads every trace of the output folder does not count the same
 *     records twice, and from which mxprof merge rebuilds X.json); they
 *     are merged into X.json (merge_write, the code of mxprof merge),
 *     each process its own labelled track, and X.stats.txt gets the
 *     tables of the whole tree, then one section per process.
 *
 * Only files that this run wrote count: run_tree_before() notes what
 * existed (device, inode, time, size) before the program started. With %p
 * or %r in the output pattern every process names its own file, and the
 * tree is left as the library wrote it.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* A file beside the trace, as stat saw it. */
struct rt_file {
	char *path;
	struct stat st;
};

struct run_tree {
	char trace[PATH_MAX];
	struct rt_file *f;
	size_t n;
	struct timespec start; /* when run_tree_before() ran */
};

/* Appends every match of pattern to *f. Returns 0 or -ENOMEM. */
static int rt_add_glob(const char *pattern, struct rt_file **f, size_t *n)
{
	glob_t g;
	size_t i;
	int rc = 0;

	if (glob(pattern, 0, NULL, &g) != 0) {
		return 0;
	}
	for (i = 0; i < g.gl_pathc && rc == 0; i++) {
		struct rt_file *nf = realloc(*f, (*n + 1) * sizeof(**f));
		struct stat st;

		if (!nf) {
			rc = -ENOMEM;
			break;
		}
		*f = nf;
		if (lstat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode)) {
			continue;
		}
		nf[*n].path = strdup(g.gl_pathv[i]);
		nf[*n].st = st;
		if (!nf[*n].path) {
			rc = -ENOMEM;
			break;
		}
		(*n)++;
	}
	globfree(&g);
	return rc;
}

/* Returns 1 when path is trace, a journal of it, or a descendant's
 * X.<digits><ending> (or its journal). */
static int rt_ours(const char *trace, const char *path)
{
	size_t stem = paths_stem_len(trace), tn = strlen(trace);
	size_t end = tn - stem, n = strlen(path), i;
	static const char jr[] = ".journal";

	if (n > sizeof(jr) - 1 &&
	    strcmp(path + n - (sizeof(jr) - 1), jr) == 0) {
		n -= sizeof(jr) - 1;
	}
	if (n == tn && strncmp(path, trace, n) == 0) {
		return 1;
	}
	if (n < stem + 2 + end || strncmp(path, trace, stem) != 0 ||
	    path[stem] != '.' || strncmp(path + n - end, trace + stem, end)) {
		return 0;
	}
	for (i = stem + 1; i < n - end; i++) {
		if (path[i] < '0' || path[i] > '9') {
			return 0;
		}
	}
	return 1;
}

/* Lists the trace's files: itself, the descendants', their journals. */
static int rt_list(const char *trace, struct rt_file **f, size_t *n)
{
	char pat[PATH_MAX + 64];
	size_t i, k = 0;

	*f = NULL;
	*n = 0;
	if (paths_child(trace, "[0-9]*", pat, sizeof(pat)) < 0) {
		return -ENAMETOOLONG;
	}
	rt_add_glob(pat, f, n);
	strncat(pat, ".journal", sizeof(pat) - strlen(pat) - 1);
	rt_add_glob(pat, f, n);
	rt_add_glob(trace, f, n);
	snprintf(pat, sizeof(pat), "%s.journal", trace);
	rt_add_glob(pat, f, n);
	for (i = 0; i < *n; i++) {
		if (rt_ours(trace, (*f)[i].path)) {
			(*f)[k++] = (*f)[i];
		} else {
			free((*f)[i].path);
		}
	}
	*n = k;
	return 0;
}

static void rt_free(struct rt_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].path);
	}
	free(f);
}

struct run_tree *run_tree_before(const char *pat)
{
	struct run_tree *t;

	if (!pat || !*pat) {
		pat = "profile.json";
	}
	if (strstr(pat, "%p") || strstr(pat, "%r")) {
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &t->start);
	run_summary_expand(pat, 0, t->trace, sizeof(t->trace));
	rt_list(t->trace, &t->f, &t->n);
	return t;
}

/* Returns 1 when f was written during the run (not as it was before). */
static int rt_new(const struct run_tree *t, const struct rt_file *f)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct stat *a = &t->f[i].st, *b = &f->st;

		if (a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
		    a->st_size == b->st_size &&
		    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
		    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec) {
			return 0;
		}
	}
	return 1;
}

/* Writes how pid ended, as w saw it, or that only its parent saw it. */
static void rt_how(const struct run_wait *w, pid_t pid, char *buf, size_t len)
{
	int st;

	if (!run_wait_status(w, pid, &st)) {
		snprintf(buf, len, "only its parent saw how it ended");
	} else if (WIFSIGNALED(st)) {
		snprintf(buf, len, "killed by SIG%s",
			 sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st))
						    : "?");
	} else {
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	}
}

/* Rebuilds the trace and tables of a process that died before its final
 * dump from its journal, says so in one line (with how it ended), and
 * removes the journal. A journal whose writer still runs is left alone. */
static void rt_recover(const char *journal, const struct run_wait *w)
{
	struct recovery *r = malloc(sizeof(*r));
	char trace[PATH_MAX], stats[PATH_MAX + 16];
	int rc;

	if (!r || paths_journal_trace(journal, trace, sizeof(trace)) < 0 ||
	    paths_stats(trace, stats, sizeof(stats)) < 0) {
		free(r);
		return;
	}
	rc = recover_open(r, journal);
	if (rc == 0 && r->pid > 0 && kill(r->pid, 0) == 0) {
		util_err("pid %d still runs: its journal %s is left in place",
			 r->pid, journal);
	} else if (rc == 0 && (rc = recover_write_trace(r, trace)) == 0 &&
		   (rc = recover_write_tables(r, stats)) == 0) {
		char how[64];

		rt_how(w, r->pid, how, sizeof(how));
		util_err("pid %d ended before writing its trace (%s); "
			 "recovered %llu records from its journal",
			 r->pid, how, (unsigned long long)r->records);
		unlink(journal);
	} else {
		util_err("%s: cannot recover: %s", journal,
			 r->why[0] ? r->why : strerror(-rc));
	}
	recover_close(r);
	free(r);
}

/* Removes the temporary files (X.tmp.<pid>, collector/out.c) that a
 * process of this run left when it ended during a dump of the trace or
 * tables at trace (a pattern), one line each: its journal, recovered,
 * holds what the file would have. A file of a process that still runs, or
 * older than the run, is left alone. */
static void rt_drop_temps(const struct run_tree *t, const char *trace,
			  const struct run_wait *w)
{
	char pat[2][PATH_MAX + 32];
	glob_t g;

	if (snprintf(pat[0], sizeof(pat[0]), "%s.tmp.[0-9]*", trace) >=
		    (int)sizeof(pat[0]) ||
	    paths_stats(trace, pat[1], sizeof(pat[1]) - 16) < 0) {
		return;
	}
	strcat(pat[1], ".tmp.[0-9]*");
	for (int k = 0; k < 2; k++) {
		if (glob(pat[k], 0, NULL, &g) != 0) {
			continue;
		}
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *p = g.gl_pathv[i], *tag = strrchr(p, '.');
			char how[64], *end;
			struct stat st;
			long pid = strtol(tag + 1, &end, 10);

			if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 ||
			    lstat(p, &st) < 0 || !S_ISREG(st.st_mode) ||
			    st.st_mtim.tv_sec < t->start.tv_sec ||
			    unlink(p) < 0) {
				continue;
			}
			rt_how(w, (pid_t)pid, how, sizeof(how));
			util_err("removed %s: pid %ld ended while writing it "
				 "(%s)",
				 p, pid, how);
		}
		globfree(&g);
	}
}

/* What one process's trace gives the tables. */
struct rt_proc {
	char name[TRACE_SHORT_MAX];
	uint64_t events; /* other than metadata */
	struct agg *agg;
	uint64_t dropped;
};

static int rt_name_event(const struct trace_event *ev, void *opaque)
{
	struct rt_proc *p = opaque;

	if (ev->ph == 'M' && strcmp(ev->name, "process_name") == 0 &&
	    !p->name[0]) {
		/* The program's name; a trace of an earlier version has the
		 * pid in it already. */
		if (strstr(ev->args_name, "(pid ") || !ev->has_pid) {
			snprintf(p->name, sizeof(p->name), "%s", ev->args_name);
		} else {
			snprintf(p->name, sizeof(p->name), "%s (pid %lld)",
				 ev->args_name, (long long)ev->pid);
		}
	}
	p->events += ev->ph != 'M';
	return 0;
}

/* Writes the tables of the whole tree, then one section per process that
 * recorded anything, to the stats file of trace, and lists the processes
 * on stderr. */
static void rt_tables(const char *trace, char *const *paths, size_t n)
{
	struct rt_proc *p = calloc(n, sizeof(*p));
	struct agg *all = agg_create();
	struct table_opts o = {0};
	struct out *out = malloc(sizeof(*out));
	char stats[PATH_MAX + 16];
	size_t i;
	uint64_t at;

	if (!p || !all || !out || paths_stats(trace, stats, sizeof(stats))) {
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct trace_meta m;

		p[i].agg = agg_create();
		if (!p[i].agg ||
		    cmd_report_aggregate(paths[i], p[i].agg, &p[i].dropped) ==
			    TRACE_BAD ||
		    cmd_report_aggregate(paths[i], all, &at) == TRACE_BAD) {
			goto done;
		}
		o.dropped += p[i].dropped;
		trace_read_file(paths[i], rt_name_event, &p[i], &m, &at);
	}
	if (out_open(out, stats, 0) < 0) {
		goto done;
	}
	char *text = table_format(all, &o);

	out_str(out, text ? text : "");
	free(text);
	for (i = 0; i < n; i++) {
		struct table_opts po = {.dropped = p[i].dropped};

		if (!p[i].events) {
			continue; /* a process that recorded nothing */
		}
		out_str(out, "\nProcess ");
		out_str(out, p[i].name[0] ? p[i].name : paths[i]);
		out_str(out, "\n");
		text = table_format(p[i].agg, &po);
		out_str(out, text ? text : "");
		free(text);
	}
	if (out_commit(out) < 0) {
		util_err("cannot write %s", stats);
	}
	size_t idle = 0;

	for (i = 0; i < n; i++) {
		if (p[i].events) {
			fprintf(stderr, "mxprof: process %s\n",
				p[i].name[0] ? p[i].name : paths[i]);
		} else {
			idle++;
		}
	}
	if (idle) {
		fprintf(stderr,
			"mxprof: %zu more process%s recorded nothing (no "
			"section in the tables)\n",
			idle, idle == 1 ? "" : "es");
	}
done:
	for (i = 0; p && i < n; i++) {
		agg_destroy(p[i].agg);
	}
	free(p);
	agg_destroy(all);
	free(out);
}

/* Moves path, and its tables when it has them, into folder dir (same
 * name). Returns the new path (malloc'd), or NULL with path left where it
 * was. */
static char *rt_park(const char *dir, const char *path)
{
	char stats[PATH_MAX + 16], to[2 * PATH_MAX];
	const char *base = strrchr(path, '/');
	char *moved;

	base = base ? base + 1 : path;
	if ((size_t)snprintf(to, sizeof(to), "%s/%s", dir, base) >=
		    sizeof(to) ||
	    !(moved = strdup(to))) {
		return NULL;
	}
	if (rename(path, moved) < 0) {
		free(moved);
		return NULL;
	}
	if (paths_stats(path, stats, sizeof(stats)) == 0 &&
	    access(stats, F_OK) == 0) {
		const char *sb = strrchr(stats, '/');
		sb = sb ? sb + 1 : stats;
		if ((size_t)snprintf(to, sizeof(to), "%s/%s", dir, sb) <
		    sizeof(to)) {
			rename(stats, to);
		}
	}
	return moved;
}

/* Moves the traces of the tree (and their tables) into X.processes, where
 * a reader of the output folder (Holistic Trace Analysis loads every
 * .json in it) does not count them beside the merged X.json, and where
 * mxprof merge can rebuild X.json from them. traces[i] then name the
 * moved files (those moved are freed through *owned). Any that cannot
 * move stays where it is. */
static void rt_park_all(const char *trace, char **traces, size_t nt,
			char **owned)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t i;

	if (run_summary_parts_dir(trace, dir, sizeof(dir)) < 0 ||
	    (mkdir(dir, 0777) < 0 &&
	     (errno != EEXIST || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))) {
		util_err("cannot make %s (%s); the processes' traces stay "
			 "beside %s",
			 dir, strerror(errno), trace);
		return;
	}
	for (i = 0; i < nt; i++) {
		char *moved = rt_park(dir, traces[i]);
		if (moved) {
			traces[i] = owned[i] = moved;
		}
	}
}

void run_tree_after(struct run_tree *t, const struct run_wait *w)
{
	struct rt_file *f = NULL;
	size_t n = 0, i, nt = 0;
	char **traces = NULL, **owned = NULL;
	uint64_t events = 0;
	int merge;
	char child[PATH_MAX + 16];

	if (!t) {
		return;
	}
	/* The temporary files of processes that ended during a dump: the
	 * root's, then its descendants'. */
	rt_drop_temps(t, t->trace, w);
	if (paths_child(t->trace, "[0-9]*", child, sizeof(child)) == 0) {
		rt_drop_temps(t, child, w);
	}
	rt_list(t->trace, &f, &n);
	for (i = 0; i < n; i++) {
		size_t len = strlen(f[i].path);
		if (len > 8 && strcmp(f[i].path + len - 8, ".journal") == 0 &&
		    rt_new(t, &f[i])) {
			rt_recover(f[i].path, w);
		}
	}
	rt_free(f, n);
	rt_list(t->trace, &f, &n);
	traces = calloc(n + 1, sizeof(*traces));
	for (i = 0; traces && i < n; i++) {
		size_t len = strlen(f[i].path);
		if ((len <= 8 || strcmp(f[i].path + len - 8, ".journal")) &&
		    rt_new(t, &f[i])) {
			traces[nt++] = f[i].path;
		}
	}
	/* The root first: its process leads the tables and the track list. */
	for (i = 1; i < nt; i++) {
		if (strcmp(traces[i], t->trace) == 0) {
			memmove(traces + 1, traces, i * sizeof(*traces));
			traces[0] = t->trace;
			break;
		}
	}
	/* One trace at -o: several merged, or the one of a process other
	 * than the root (which wrote none: it ended with _exit, recorded
	 * nothing, or was a shell that exec'ed nothing). */
	merge = nt > 1 || (nt == 1 && strcmp(traces[0], t->trace) != 0);
	if (merge && (owned = calloc(nt, sizeof(*owned)))) {
		/* Each process's trace (the root's included, which the merge
		 * replaces) into X.processes, then the tables of the tree
		 * from them. */
		rt_park_all(t->trace, traces, nt, owned);
	}
	if (merge) {
		rt_tables(t->trace, traces, nt);
	}
	if (merge && merge_write(t->trace, traces, nt, 1, &events) == CLI_OK) {
		fprintf(stderr,
			"mxprof: %zu process%s merged into %s (%llu events)\n",
			nt, nt == 1 ? "" : "es", t->trace,
			(unsigned long long)events);
	}
	for (i = 0; owned && i < nt; i++) {
		free(owned[i]);
	}
	free(owned);
	free(traces);
	rt_free(f, n);
	run_tree_free(t);
}

void run_tree_moved(struct run_tree *t, const char *trace)
{
	if (t) {
		snprintf(t->trace, sizeof(t->trace), "%s", trace);
	}
}

void run_tree_free(struct run_tree *t)
{
	if (t) {
		rt_free(t->f, t->n);
		free(t);
	}
}
