/*
 * cli.h - the map of the mxprof command.
 *
 * tools/mxprof.c holds main(); each file below is a translation unit of its
 * own, and this header declares everything one of them offers another.
 * Non-static names carry their file's name (util_, trace_read_, cmd_report_,
 * ...); everything else in a file is static.
 *
 *   util.c        messages, number parsing (file names: collector's
 *                 paths_*)
 *   trace_in.c    the bytes of a trace file or pipe, plain or gzip
 *   jscan.c       a streaming JSON tokenizer (jscan.h), yajl's callbacks
 *                 without its cost
 *   trace_read.c  streaming reader of mxprof traces (.json, .json.gz) on
 *                 top of jscan.c: memory stays flat however large the
 *                 file is
 *   trace_doc.c   the reader's handlers: what each token means at its
 *                 place in the document (trace_doc.h)
 *   trace_fast.c  one event read in one step (trace_fast.h), for
 *                 trace_read.c's handlers and fast path alike
 *   trace_par.c   the events of a large plain trace read ahead by
 *                 threads, segment by segment (trace_par.h), for
 *                 trace_read.c and merge_copy.c
 *   cmd_report.c  mxprof report: a trace -> the tables (collector's agg_*)
 *   report_html.c report --html: a trace -> one HTML page; its data
 *                 (report_html.h), written by report_html_out.c around
 *                 report_html_page.c's style and script
 *   report_steps.c  report --steps: the steps of a list only (a first
 *                 pass finds their ProfilerStep#N slices)
 *   cmd_diff.c    mxprof diff: two traces -> per-row deltas
 *   cmd_merge.c   mxprof merge: several traces -> one, clocks aligned,
 *                 written through the collector's struct out
 *   merge_index.c merge's first pass: each file's pids and threads, and
 *                 the pids they become
 *   merge_copy.c  merge's second pass: one file's events, rewritten
 *   cmd_run.c     mxprof run: launch a program with libmxprof.so injected
 *                 (the dump signal's names: the library's settings.c)
 *   run_summary.c mxprof run's summary: the tables and the files written
 *                 (their names: the library's settings.c and paths.c)
 *   run_output.c  mxprof run checks, before it starts the program,
 *                 that the tree can write its files at the output
 *   run_wait.c    mxprof run waits for the whole tree it started (as
 *                 its child subreaper), bounded, and notes how each
 *                 process it reaped ended
 *   run_tree.c    mxprof run's process tree: journals recovered, every
 *                 process's trace merged into one, tables of the whole
 *   run_drop.c    mxprof run as root: the files of a process of the tree
 *                 that runs as another user, from its drop folder
 *   cmd_dump.c    mxprof dump: ask a running process for a dump
 *   cmd_recover.c mxprof recover: a crashed process's journal -> its
 *                 trace and tables (collector's recover_*)
 *
 * Every command returns its exit status: 0 success, 1 failure, 2 usage.
 */
#ifndef MXPROF_CLI_H
#define MXPROF_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <zlib.h>

#include "collector.h"
#include "hmap.h"

/* Exit statuses shared by every subcommand. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* ---- util.c ------------------------------------------------------------ */

/* Prints "mxprof: " (or "mxprof CMD: " once util_set_cmd() named the
 * subcommand), the formatted message and a newline on stderr. */
void util_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Names the running subcommand for util_err(). s must stay valid. */
void util_set_cmd(const char *s);

/*
 * Flushes stdout and checks it for a write error, earlier ones included.
 * Returns CLI_OK, or prints "writing WHAT: REASON" through util_err() and
 * returns CLI_FAIL. Callers set errno to 0 before they start writing, so
 * that the reason of an earlier failed write is still known here.
 */
int util_stdout_done(const char *what);
/* out_open() and out_commit() with one line on failure (util.c). */
int util_out_open(struct out *o, const char *path, int gz);
int util_out_commit(struct out *o, const char *path);

/* Parses a decimal count in [min, max] from s. Returns 0 or -EINVAL. */
int util_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out);

/*
 * Parses a JSON number of microseconds (as the trace writes ts and dur,
 * "12.345") into nanoseconds, rounding to the nearest. Returns 0, or
 * -EINVAL when the text is not a number or the value does not fit in
 * int64_t nanoseconds (*ns is then left as it was). This function is on
 * the report's
 * fast path: it avoids strtod for the common forms.
 */
int util_us_to_ns(const char *s, size_t len, int64_t *ns);

/* Parses a JSON integer (or a number with a fraction, truncated toward
 * zero). Returns 0, or -ERANGE when it does not fit in int64_t, or -EINVAL
 * when it is not a number; *out is then left as it was. */
int util_parse_i64(const char *s, size_t len, int64_t *out);

/* ---- trace_in.c -------------------------------------------------------- */

/* The chunk size of trace reads (and of zlib's buffer). */
#define TRACE_IN_CHUNK (256 * 1024)

/* A trace being read: a file or a pipe, plain or gzip. */
struct trace_in {
	int fd;
	gzFile gz; /* NULL: plain reads of fd */
	const char *path;
	int gz_truncated; /* the gzip stream ended early */
	int failed;	  /* a read failed; the reason was printed */
};

/*
 * Opens path for reading: gzip when it starts with the gzip magic or is a
 * pipe (zlib passes other data through), plain otherwise. Returns 0, or -1
 * after one line on stderr (missing, unreadable, a folder, empty); nothing
 * stays open then, and trace_in_close() may still be called.
 */
int trace_in_open(struct trace_in *in, const char *path);

/* Reads up to len bytes into buf. Returns the count, 0 at the end (also of
 * a gzip stream cut short, which sets gz_truncated), or -1 after one line
 * on stderr (a read error, corrupt gzip data; failed is set). */
ssize_t trace_in_read(struct trace_in *in, unsigned char *buf, size_t len);

/*
 * Reads the next chunk (TRACE_IN_CHUNK bytes at most) into *buf after its
 * first have bytes, which a tokenizer left unconsumed (a token the last
 * chunk cut short); *buf (*cap bytes, NULL and 0 at first) grows to fit
 * them and a chunk. Returns the count read, 0 at the end, or -1 after one
 * line on stderr (a read error, out of memory; failed is set).
 */
ssize_t trace_in_more(struct trace_in *in, unsigned char **buf, size_t *cap,
		      size_t have);

/* As trace_in_more(), reading want bytes at most (want > 0). */
ssize_t trace_in_more_n(struct trace_in *in, unsigned char **buf, size_t *cap,
			size_t have, size_t want);

/* Returns 1 when buf[off..len) and everything after it in the input are
 * NUL bytes (a file extended before it was written), 0 otherwise. Reads
 * the rest of the input into buf, cap bytes at a time. */
int trace_in_rest_is_nul(struct trace_in *in, unsigned char *buf, size_t off,
			 size_t len, size_t cap);

/* Closes in. This function can't fail. */
void trace_in_close(struct trace_in *in);

/* ---- trace_read.c ------------------------------------------------------ */

/* Field sizes of one event; longer strings are cut (and stay distinct only
 * up to this length), never inside a UTF-8 sequence. */
#define TRACE_NAME_MAX	1024
#define TRACE_SHORT_MAX 256

/* One trace event, as much of it as the commands need. A string is empty
 * and its has_ flag 0 when the key was absent. */
struct trace_event {
	char ph;
	char scope; /* "s" of an instant, 0 if absent */
	char name[TRACE_NAME_MAX];
	char cat[TRACE_SHORT_MAX];
	char group[TRACE_SHORT_MAX];	  /* top-level "group" (counters) */
	char args_group[TRACE_SHORT_MAX]; /* args.group                 */
	char args_name[TRACE_SHORT_MAX];  /* args.name (metadata)       */
	int has_group, has_args_group, has_ts, has_dur, has_frame, has_value,
		has_error, has_pid;
	int64_t pid, tid;
	int64_t ts_ns, dur_ns;
	int64_t value; /* args.value */
	int64_t error; /* args.error */
	/* dur (in ns) or args.value was a number out of int64_t range; it
	 * then counts as absent (has_dur, has_value 0). */
	int dur_out_of_range, value_out_of_range;
	/* Call stacks: the top-level "sf", the frame node (in stackFrames)
	 * of the innermost frame where the event began, a decimal number or
	 * string; and args.correlation, which ties GPU work to its launch. */
	int has_sf, has_corr;
	uint64_t sf;
	int64_t corr;
};

/* One node of the top-level "stackFrames" object: the frame named by the
 * key id (decimal), called from node parent. Frames whose key is not a
 * decimal id are not delivered; a parent that is not one reads as none. */
struct trace_frame {
	uint64_t id;
	char name[TRACE_NAME_MAX];
	char category[TRACE_SHORT_MAX];
	int has_parent;
	int user; /* "user": 1, a frame of the user's own code */
	uint64_t parent;
};

/* What the file says about itself, outside traceEvents. Fields keep their
 * defaults when absent. */
struct trace_meta {
	int has_base;
	int64_t base_ns; /* baseTimeNanoseconds */
	int has_rank;
	int64_t rank;	  /* distributedInfo.rank */
	uint64_t dropped; /* mxprof.droppedRecords */
	int timeline_truncated;
	char host[TRACE_SHORT_MAX]; /* mxprof.host */
	int64_t mx_pid;		    /* mxprof.pid, -1 if absent */
	/* The metadata: the top level's string members other than
	 * displayTimeUnit and traceName, as key NUL value NUL ..., in file
	 * order; meta_len bytes. Pairs that do not fit are left out. */
	char meta[8192];
	size_t meta_len;
};

/* Outcome of trace_read_file(). */
enum trace_status {
	TRACE_COMPLETE = 0,  /* the whole file was read                    */
	TRACE_TRUNCATED = 1, /* it ends early; events before the end count */
	TRACE_BAD = -1,	     /* nothing usable; the reason was printed     */
};

/* Called for each complete event, in file order. Returns 0 to go on or a
 * negative errno to stop the read (trace_read_file then fails). */
typedef int (*trace_event_fn)(const struct trace_event *ev, void *opaque);

/*
 * Reads the trace at path (gzip when it starts with the gzip magic),
 * calling fn for each event in traceEvents and filling meta. Memory use does
 * not depend on the file's size. A file that ends early (a crash) gives
 * TRACE_TRUNCATED with *trunc_at set to the byte offset (of the JSON text,
 * after decompression) where it ends. Any other problem (missing, empty,
 * corrupt, not a trace) prints one line through util_err() and gives
 * TRACE_BAD. Events delivered before a failure have been delivered.
 */
enum trace_status trace_read_file(const char *path, trace_event_fn fn,
				  void *opaque, struct trace_meta *meta,
				  uint64_t *trunc_at);

/* Called for each frame of stackFrames, in file order; returns as a
 * trace_event_fn does. */
typedef int (*trace_frame_fn)(const struct trace_frame *f, void *opaque);

/* trace_read_file(), and also each frame of the top-level stackFrames to
 * frame_fn (NULL: stackFrames is skipped, as trace_read_file() does).
 * Frames and events come in file order: the library writes stackFrames
 * first, other writers may not. */
enum trace_status trace_read_stacks(const char *path, trace_event_fn fn,
				    trace_frame_fn frame_fn, void *opaque,
				    struct trace_meta *meta,
				    uint64_t *trunc_at);

/* Prints the standard warning for a truncated file on stderr. */
void trace_read_warn_truncated(const char *path, uint64_t at);

/* ---- frames.c: the stackFrames of one trace ---------------------------- */

struct frames;

/* Returns a new, empty set of frame nodes, or NULL (ENOMEM). */
struct frames *frames_create(void);

/* Forgets every node. This function can't fail. */
void frames_clear(struct frames *fr);

/* Frees fr (NULL accepted). This function can't fail. */
void frames_destroy(struct frames *fr);

/* Returns how many nodes fr holds. This function can't fail. */
size_t frames_count(const struct frames *fr);

/* Adds frame f (a later one with the same id replaces it). Returns 0 or
 * -ENOMEM. */
int frames_add(struct frames *fr, const struct trace_frame *f);

/* Returns the call site of node id: the name of the innermost node from id
 * toward the root with "user": 1, else id's own name; NULL when fr lacks
 * id. This function can't fail. */
const char *frames_site(const struct frames *fr, uint64_t id);

/* Appends ';' (unless b is empty) and name to the malloc'ed string b,
 * with ';' in name made ':' and line ends spaces; sets b->err when memory
 * runs out. This function can't fail. */
void frames_put(struct sbuf *b, const char *name);

/* Appends the names from the root to node id to b, each through
 * frames_put(). Returns 0, -ENOENT (fr lacks id) or -ENOMEM. */
int frames_path(const struct frames *fr, uint64_t id, struct sbuf *b);

/* ---- launches.c: launches with a stack, by correlation ------------------ */

/* A host launch with a call stack: its args.correlation, its "sf", and
 * its name (a string table id, 0 when not needed). */
struct launch {
	int64_t corr;
	uint64_t sf;
	uint32_t name;
	uint32_t used; /* owned by launches.c */
};

struct launches;

/* Returns a new, empty table, or NULL (ENOMEM). */
struct launches *launches_create(void);

/* Forgets every launch. This function can't fail. */
void launches_clear(struct launches *l);

/* Frees l (NULL accepted). This function can't fail. */
void launches_destroy(struct launches *l);

/* Returns 1 when cat is a category of GPU work: kernel, gpu_memcpy,
 * gpu_memset. This function can't fail. */
int launches_is_gpu(const char *cat);

/* Keeps x under x->corr, replacing an earlier launch with the same one.
 * Returns 0, -ENOSPC when the table is full (x is not kept) or -ENOMEM. */
int launches_put(struct launches *l, const struct launch *x);

/* Returns the launch with correlation corr, or NULL. This function can't
 * fail. */
const struct launch *launches_get(const struct launches *l, int64_t corr);

/* ---- strsum.c: sums by byte string -------------------------------------- */

struct strsum_ent {
	char *key; /* NULL: a free slot; NUL-terminated past len */
	size_t len;
	uint64_t hash;
	int64_t sum;
	uint64_t count;
};

/* Zeroed means empty; map's slots are struct strsum_ent (hmap.h). */
struct strsum {
	struct hmap map;
};

/* Adds v (saturating) to the sum of key[0..len) and counts it. Returns 0
 * or -ENOMEM. */
int strsum_add(struct strsum *m, const void *key, size_t len, int64_t v);

/* Returns the entry of key[0..len) (a new one has sum and count 0), whose
 * sum and count the caller may set, or NULL (ENOMEM). */
struct strsum_ent *strsum_at(struct strsum *m, const void *key, size_t len);

/* Frees m's keys and table and empties it. This function can't fail. */
void strsum_clear(struct strsum *m);

/* ---- report_steps.c: report --steps -------------------------------------- */

struct report_steps;

/* A filter for the steps of list ("5,10-12"); NULL with errno EINVAL for
 * a bad list, ENOMEM. */
struct report_steps *report_steps_create(const char *list);

void report_steps_destroy(struct report_steps *rs);

/* Finds the steps of the list in the trace at path (a first pass over
 * it). Returns 0, or -1 after one line on stderr (unreadable, or none of
 * the steps is in it). */
int report_steps_scan(struct report_steps *rs, const char *path);

/* Non-zero when ev of the file last scanned is kept: a step slice of the
 * list, or an event that began inside one. */
int report_steps_keep(const struct report_steps *rs,
		      const struct trace_event *ev);

/* The steps the last scan found, as "3-5,9". */
const char *report_steps_held(const struct report_steps *rs);

/* ---- report_sites.c: the call-site rows of the tables ------------------- */

/* The call-site row of one event: NULL names when it has none. */
struct report_site {
	const char *group, *name;
	int gpu; /* "GPU Time by Call Site": a plain sample of its dur */
};

struct report_sites;

/* Returns a new set, or NULL (ENOMEM). */
struct report_sites *report_sites_create(void);

/* Frees rs (NULL accepted). This function can't fail. */
void report_sites_destroy(struct report_sites *rs);

/* Keeps frame f of the file being read. Returns 0 or -ENOMEM. */
int report_sites_frame(struct report_sites *rs, const struct trace_frame *f);

/* Fills *site with the call-site row of ev (section group); call it for
 * every event of the file, in order. Returns 0 or -ENOMEM. */
int report_sites_event(struct report_sites *rs, const struct trace_event *ev,
		       const char *group, struct report_site *site);

/* Starts a second pass over the same file (its frames stay). This
 * function can't fail. */
void report_sites_rewind(struct report_sites *rs);

/* Ends a pass over path: returns 1 when a second pass must add the rows
 * (stackFrames came after the events), else 0 after a line on stderr per
 * kind of event left without a row; rs is then ready for another file.
 * This function can't fail. */
int report_sites_finish(struct report_sites *rs, const char *path);

/* ---- report_flame.c: mxprof report --flame ------------------------------ */

/*
 * Writes the folded stacks of the traces paths[0..n) to outpath (NULL:
 * stdout): host slices weighted by their self time, or, with gpu, GPU
 * events by their duration under the stack of their launch. Returns
 * CLI_OK, or CLI_FAIL after one line on stderr.
 */
int report_flame(char *const *paths, size_t n, int gpu, const char *outpath);

/* ---- report_html.c: mxprof report --html ------------------------------ */

/*
 * Writes one self-contained HTML page of the traces paths[0..n) to
 * outpath: the header, the step bars, the rows of tables (their JSON,
 * report -f json of the same traces) by self time, the flame graph and a
 * timeline overview (report_html.h), aggregated so that its size follows
 * the distinct names and stacks, not the events; meta is the first
 * file's. Returns CLI_OK, or CLI_FAIL after one line on stderr (outpath
 * is then untouched).
 */
int report_html(char *const *paths, size_t n, const char *tables,
		const struct trace_meta *meta, const char *outpath);

/* ---- run_summary.c ----------------------------------------------------- */

/*
 * Prints, on stderr, the summary of a run of process pid whose
 * MXPROF_OUTPUT was pat (NULL or "" for the default): unless quiet, the
 * tables with at most top rows per section (0: all); then the trace, the
 * tables, flight mode's numbered files ("mxprof: flight PATH") and every
 * descendant's trace that exist, or, when there is none,
 * one line saying so (and how to recover the journal if one is left).
 * This function can't fail.
 */
void run_summary_print(const char *pat, pid_t pid, unsigned top, int quiet);

/* Notes the files that match the MXPROF_OUTPUT pattern pat before the
 * program starts, so that run_summary_print() reports only those this
 * run wrote. Call once, before the launch. This function can't fail. */
void run_summary_before(const char *pat);

/* Writes the folder that holds the per-process files of the tree whose
 * merged trace is trace ("d/X.json" gives "d/X.processes"). Returns 0 or
 * -ENAMETOOLONG. */
int run_summary_parts_dir(const char *trace, char *buf, size_t len);

/* Writes the trace path the library uses for process pid under the
 * MXPROF_OUTPUT pattern pat into buf: settings_output_name() (preload/
 * settings.h), %r with the rank of this process's environment; pid 0
 * gives %p as the glob "*". This function can't fail. */
void run_summary_expand(const char *pat, pid_t pid, char *buf, size_t len);

/* ---- run_output.c ------------------------------------------------------ */

/* Checks that the processes of a run can write their files at the output
 * pattern pat (NULL or "": profile.json): a regular file or none, in a
 * writable folder, with a name that leaves room for the names derived
 * from it. Returns 0, or -1 after one line saying why not. */
int run_output_check(const char *pat);

/* ---- run_wait.c -------------------------------------------------------- */

/* A process of the tree that mxprof run reaped, and its wait status. */
struct run_ended {
	pid_t pid;
	int status;
};

/* What mxprof run saw of its tree's endings (zeroed to start). */
struct run_wait {
	struct run_ended *ended;
	size_t n;
};

/* Makes this process the child subreaper of what it starts: orphans of
 * the tree become its children. Returns 0 or -errno. */
int run_wait_adopt(void);

/* Waits for the program's process main, reaping (and noting in w) any
 * other child that ends first. Returns 0 with main's wait status in
 * *status, or -errno. */
int run_wait_main(struct run_wait *w, pid_t main, int *status);

/* Once the program (named prog) has ended: waits for every process of
 * its tree still running, at most bound seconds, noting each in w; says
 * in one line what it waits for, and in one line what it stopped waiting
 * for. A signal stored in *sig meanwhile is passed on to them, or ends
 * the wait when *kernel says the terminal sent it. This function can't
 * fail. */
void run_wait_rest(struct run_wait *w, const char *prog, double bound,
		   volatile sig_atomic_t *sig, volatile sig_atomic_t *kernel);

/* Returns 1 with pid's wait status in *status when w saw pid end, else 0.
 * w may be NULL. */
int run_wait_status(const struct run_wait *w, pid_t pid, int *status);

/* Frees what w holds. */
void run_wait_free(struct run_wait *w);

/* Creates an empty file for the library's notes (MXPROF_RUN_NOTES) in a
 * new private folder of $TMPDIR or /tmp, and writes its path into path.
 * Returns 0, or -1 (path "") when it cannot. */
int run_summary_notes_open(char *path, size_t len);

/* Writes into out the last trace name that process pid noted in the
 * notes file path (set_config(filename=...)). Returns 1, or 0 when it
 * noted none. */
int run_summary_notes_trace(const char *path, pid_t pid, char *out, size_t len);

/* Removes the notes file path and its folder, and empties path. */
void run_summary_notes_close(char *path);

/* ---- run_drop.c -------------------------------------------------------- */

/* As root: makes the drop folder of the tree's processes that run as
 * another user beside the notes file notes (MXPROF_RUN_DROP) and writes
 * its path into drop. Returns 0, or -1 (drop "") when not root or when it
 * cannot. */
int run_drop_open(const char *notes, char *drop, size_t len);

/* Copies the files of trace's descendants found in the drop folder drop
 * beside trace (where run_tree.c merges them), and removes them there.
 * A journal whose writer still runs stays. */
void run_drop_gather(const char *drop, const char *trace);

/* Removes the drop folder when empty, and empties drop. */
void run_drop_close(char *drop);

/* ---- run_tree.c -------------------------------------------------------- */

/*
 * The files of the processes a run starts. run_tree_before() notes the
 * files that already exist beside the trace of pattern pat (so that only
 * this run's count); run_tree_after(), once the program has ended,
 * recovers the journals that processes killed before their final dump
 * left (one line each, with how the process ended when w saw it; a
 * journal whose writer still runs is left in place), moves every
 * process's trace and tables into the folder X.processes (below), merges
 * the traces into the root's X.json and writes the tables of the whole
 * tree, then one section per process that recorded anything, over the
 * root's; it frees t. Neither can fail: what cannot be done is said in one
 * line and left as it was.
 */
struct run_tree;
struct run_tree *run_tree_before(const char *pat);
void run_tree_after(struct run_tree *t, const struct run_wait *w);

/* Makes trace (an expanded path) the root's trace of t (NULL included):
 * the program named it with set_config(filename=...). */
void run_tree_moved(struct run_tree *t, const char *trace);

/* Frees t (from run_tree_before(), NULL included) without looking at the
 * files: the program could not be started. This function can't fail. */
void run_tree_free(struct run_tree *t);

/* ---- merge_index.c, merge_copy.c: the passes of mxprof merge ---------- */

/* A pid of an input and the pid it has in the merged trace. */
struct merge_pid {
	int64_t from, to;
	int named;    /* has a process_name event */
	int labelled; /* has a process_labels event */
};

/* A thread that has events; a truncated trace may lack its name, which
 * merge_index_write_names() adds. */
struct merge_tid {
	int64_t pid, tid;
	int named;
};

/* A hash map from a pair of integers to a position in an array (owned by
 * merge_index.c; zeroed means empty). */
struct merge_map {
	struct hmap map;
};

/* One input of a merge. Zero it, set path, then let trace_read_file() call
 * merge_index_event() for each event. */
struct merge_file {
	const char *path;
	struct trace_meta meta;
	struct merge_pid *pids;
	size_t npids, cap;
	struct merge_map pid_map; /* (from, 0) -> pids[] */
	struct merge_tid *tids;
	size_t ntids, tcap;
	struct merge_map tid_map; /* (pid, tid) -> tids[] */
	int64_t shift_ns;	  /* added to every ts */
	enum trace_status st;	  /* of the first pass */
	int has_frames;		  /* stackFrames has a frame */
	uint64_t frames_max;	  /* its largest frame id */
	uint64_t frame_offset;	  /* added to every frame id and sf */
};

/* A trace_event_fn: notes ev's pid and thread in file, a struct
 * merge_file. Returns 0, or -ENOMEM after one line on stderr. */
int merge_index_event(const struct trace_event *ev, void *file);

/* Gives every pid that an earlier file of files[0..nf) uses a fresh
 * number, past the largest pid of any file. Returns 0, or -ENOMEM after one
 * line on stderr. */
int merge_index_assign_pids(struct merge_file *files, size_t nf);

/* Returns the pid that pid of f has in the merged trace (pid itself when f
 * has no such pid). This function can't fail. */
int64_t merge_index_pid(const struct merge_file *f, int64_t pid);

/*
 * Writes into buf (len bytes, NUL-terminated) the labels that the merged
 * trace gives process from of f beyond those in labels (its own
 * process_labels, or NULL): "rank R", the host, and "was pid N" when the
 * merge renumbered it, each left out when labels already holds it, each
 * after ", " unless it comes first in buf. The viewers show the labels
 * beside the process's name, so that two ranks' "python3" stay apart.
 * This function can't fail (a label that does not fit is left out).
 */
void merge_index_labels(const struct merge_file *f, int64_t from,
			const char *labels, char *buf, size_t len);

/* Writes the process_name and thread_name events f lacks (a truncated
 * file), and the process_labels event of each process that has none,
 * each after ",\n" unless *events is 0, counting them in *events.
 * Write errors stay in o for out_commit(). */
void merge_index_write_names(const struct merge_file *f, struct out *o,
			     uint64_t *events);

/*
 * Writes one trace at outpath from the traces paths[0..nf) (mxprof merge
 * without its summary line); with no_host the process labels do not gain
 * the host. Stores the count of events in *events. Returns CLI_OK, or
 * CLI_FAIL after one line on stderr (outpath is then untouched).
 */
int merge_write(const char *outpath, char *const *paths, size_t nf, int no_host,
		uint64_t *events);

/* Frees the arrays and maps of f. This function can't fail. */
void merge_index_free(struct merge_file *f);

/*
 * Copies the events of f (indexed by the first pass) to o, rewritten: pids
 * through merge_index_pid(), ts shifted by f->shift_ns, flow ids moved by
 * idx << 40, process names given rank and host. Only whole events are
 * written, each after ",\n" unless *events is 0; *events counts them.
 * Returns 0 (also when f ends early or has an error where the first pass
 * found it cut short), or -1 after one line on stderr (f cannot be opened,
 * out of memory, nested too deeply). Write errors stay in o.
 */
int merge_copy_file(struct merge_file *f, size_t idx, struct out *o,
		    uint64_t *events);

/* ---- merge_frames.c: the call stacks of mxprof merge -------------------- */

/* A trace_frame_fn for merge's first pass: notes in file (a struct
 * merge_file) that it has frames, and its largest id. Returns 0. */
int merge_frames_note(const struct trace_frame *fr, void *file);

/* Gives each of files[0..nf) the offset of its frame ids: the first file
 * keeps its ids, each next one starts past the ids before it. This
 * function can't fail. */
void merge_frames_assign(struct merge_file *files, size_t nf);

/* Copies f's stackFrames frames into o, as members of the merged
 * stackFrames, ids and parents moved by f->frame_offset, each after ",\n"
 * ("\n" while *first is set; it is then cleared). Returns 0, or -1 after
 * one line on stderr. Write errors stay in o. */
int merge_frames_copy(struct merge_file *f, struct out *o, int *first);

/* ---- commands ---------------------------------------------------------- */

/*
 * Each command takes argv after the subcommand's name (argv[0] is the name,
 * as getopt prints it), parses its options with getopt_long and returns its
 * exit status: CLI_OK, CLI_FAIL after one line on stderr (through
 * util_err()), or CLI_USAGE after the usage line. Each is called once per
 * process, from main().
 */

/* mxprof report: prints the tables of the traces named in argv. */
int cmd_report(int argc, char **argv);

/* mxprof diff: prints per-row differences between two traces. */
int cmd_diff(int argc, char **argv);

/* mxprof merge: writes one trace from several, clocks aligned. */
int cmd_merge(int argc, char **argv);

/* mxprof run: runs a program with libmxprof.so preloaded, waits for it and
 * prints its tables. Returns the program's status (128 + a signal that
 * ended it), 127 or 126 when it cannot be found or run, 1 or 2 as above. */
int cmd_run(int argc, char **argv);

/* mxprof dump: makes a recording process dump and prints the trace path. */
int cmd_dump(int argc, char **argv);

/* mxprof recover: writes the trace and tables of a journal left behind. */
int cmd_recover(int argc, char **argv);

/*
 * Aggregates the trace at path into a (a fresh set from agg_create()) the
 * way the library does, and adds the dropped-record count to *dropped.
 * cmd_report_aggregate_meta() also copies what the file says about itself
 * (its metadata included) into *meta.
 * Returns TRACE_COMPLETE, TRACE_TRUNCATED (the warning was printed) or
 * TRACE_BAD (the reason was printed). Shared by report and run.
 */
enum trace_status cmd_report_aggregate(const char *path, struct agg *a,
				       uint64_t *dropped);
enum trace_status cmd_report_aggregate_meta(const char *path, struct agg *a,
					    uint64_t *dropped,
					    struct trace_meta *meta);

#endif /* MXPROF_CLI_H */
