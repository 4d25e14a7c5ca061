/*
 * internal.h - declarations shared by the files of collector/ only (the
 * map is collector.h). Other modules use the faces: source.h, control.h,
 * paths.h, files.h, output.h. It includes neither of the last two: the
 * files that read or write files include them themselves.
 */
#ifndef MXPROF_COLLECTOR_INTERNAL_H
#define MXPROF_COLLECTOR_INTERNAL_H

#include <stdio.h>
#include <sys/types.h>

#include "control.h"
#include "paths.h"
#include "source.h"

/*
 * out_fd.c: writes p[0..n) to fd whole, again after EINTR and short writes.
 * Returns 0 or write()'s errno negated. Uses write() alone: safe in a
 * signal handler. Every file writer of the collector goes through it.
 */
int out_fd_write(int fd, const void *p, size_t n);

/*
 * out_fd.c: opens the existing regular file at path with flags (O_RDONLY,
 * O_WRONLY | O_APPEND, ...; add O_NOFOLLOW to refuse a symbolic link),
 * never blocking: a FIFO or a device another user planted at path is
 * refused, not waited on. Fills *st with the file's. Returns the
 * descriptor (close-on-exec, blocking), or a negative errno: -EINVAL not
 * a regular file, -ELOOP a link refused, -ENXIO a FIFO with no reader.
 */
struct stat;
int out_fd_open_existing(const char *path, int flags, struct stat *st);

/*
 * out_fd.c: mxprof's descriptors stay out of the program's way. out_fd_above
 * moves fd to min or above, or, when the soft RLIMIT_NOFILE is lower,
 * above that limit (lifting it for a moment, within the hard limit), so
 * that the program can still open as many files as its limit says; it
 * returns the new descriptor (fd closed) or fd when it cannot move it.
 * out_fd_open_beyond is open(path, flags, mode) that, when the program has
 * taken every descriptor its soft limit allows (EMFILE), tries once more
 * with the limit lifted for a moment; it returns open()'s result.
 */
int out_fd_above(int fd, int min);
int out_fd_open_beyond(const char *path, int flags, int mode);

/*
 * The drain thread, which opens and writes every file of mxprof's
 * (journal, trace, tables, status), works in a descriptor table of its
 * own (unshare(CLONE_FILES)), where no file of mxprof's takes one of the
 * program's numbers, even for a moment (a number the program closed to
 * reuse it with dup2); the threads it starts afterwards (out_pipe.c's
 * workers) share it. out_fd_may_own: this thread (the drain thread, at
 * its start) may take a table of its own. out_fd_take_table: takes it,
 * once: the copy of the program's descriptors is closed but for stderr,
 * 0 and 1 are /dev/null. Returns 0 (taken, or taken before), -EPERM on
 * another thread, or unshare's negative errno (a sandbox that refuses
 * it; not asked again): descriptors then stay in the program's table.
 * out_fd_can_take: may this thread take it, and has not yet?
 * out_fd_own_table: has this thread taken it? A descriptor opened there
 * is valid on this thread (and the threads it started since) only, and
 * goes when the thread ends.
 */
void out_fd_may_own(void);
int out_fd_take_table(void);
int out_fd_can_take(void);
int out_fd_own_table(void);
/*
 * out_fd_follow_stderr: in a table of this thread's own, makes its stderr
 * the program's again where the program changed it (dup2) since, and
 * /dev/null where the program closed it (so that mxprof keeps no pipe
 * open that a reader waits to see end); elsewhere it does nothing. The
 * drain thread calls it at each wake-up and before a dump; where the
 * kernel has kcmp(), a stderr that did not change costs one system call.
 * This function can't fail.
 */
void out_fd_follow_stderr(void);

/*
 * shared_call.c: the drain thread's calls into the program's libraries
 * (a source's flush, tick, drain) run with the program's descriptor
 * table. shared_call_start: on the drain thread, before it takes a table
 * of its own: starts the helper that keeps the program's table; 0 or a
 * negative errno (no helper: the drain thread must keep the program's
 * table too). shared_call_stop: at the drain thread's end, stops it.
 * shared_call: runs fn(arg) on the helper and waits for it where this
 * thread has a table of its own and the helper runs, else here.
 */
int shared_call_start(void);
void shared_call_stop(void);
void shared_call(void (*fn)(void *), void *arg);

/*
 * out.c: removes the temporary files this process is writing (a dump the
 * ending stopped waiting for; should the process go on after all, that
 * dump fails and the next is whole). Uses unlink() alone: safe in a
 * signal handler, from any thread.
 */
void out_forget_temps(void);

/* out_pipe.c: a big output written by other threads (out.c calls it) */
/*
 * For out.c: starts o's pipe (o->n bytes in the buffer are kept for the
 * first out_pipe_submit()). Returns 0, -EPERM (not allowed on this
 * thread, or started), -ENOMEM or -EAGAIN (no thread could start); o is
 * then left as it was.
 */
int out_pipe_start(struct out *o);

/* For out.c: hands o->buf[0..o->n) over, the last chunk when last is
 * non-zero, and points o->buf at a free chunk (waiting for one). */
void out_pipe_submit(struct out *o, int last);

/* For out.c: waits until every chunk is written, ends a gzip member, stops
 * the workers and frees the pipe. Returns 0 or the first error as a
 * negative errno. */
int out_pipe_finish(struct out *o);

/* For out.c: stops the workers and frees the pipe (what was handed over
 * is still written; the caller removes the file). */
void out_pipe_abort(struct out *o);

/* clock.c */
void clock_init(void);
void clock_anchor(void);
uint64_t clock_to_ns(uint64_t ticks);

/*
 * The newest segment of the mapping, for converting a pass's ticks in
 * bulk: clock_line_to_ns() gives what clock_to_ns() gives, inline, for
 * ticks on the line and hands the others to it. Take the line after
 * clock_anchor() and use it until the next one.
 */
struct clock_line {
	uint64_t tick; /* the line starts here; UINT64_MAX: no line */
	uint64_t ns;
	double rate;
	uint64_t base; /* CLOCK_MONOTONIC ns of the origin */
};
void clock_line(struct clock_line *l);

static inline uint64_t clock_line_to_ns(const struct clock_line *l, uint64_t t)
{
	if (__builtin_expect(t < l->tick, 0)) {
		return clock_to_ns(t);
	}
	uint64_t ns =
		l->ns +
		(uint64_t)(int64_t)((double)(int64_t)(t - l->tick) * l->rate);
	return ns > l->base ? ns - l->base : 0;
}
int64_t clock_base_utc_ns(void);
void clock_set_origin(uint64_t mono, int64_t utc);
const char *clock_source(void);

/* ring_push.c, ring_collect.c (ring.h is their map) */
extern unsigned ring_capacity;
extern unsigned ring_capacity_max; /* a full ring grows up to this */
extern int ring_overflow;
extern volatile int ring_drain_alive;
typedef void (*ring_emit_fn)(void *ctx, int tid, const struct coll_rec *recs,
			     size_t n);
int ring_init(void);
uint64_t ring_collect(ring_emit_fn emit, void *ctx);
void ring_foreach_tid(void (*fn)(void *ctx, int tid, int dead), void *ctx);
void ring_after_fork_child(void);
/* fn runs when a thread maps or claims its ring (drain.c starts a forked
 * child's deferred drain thread there). */
void ring_set_attach_notify(void (*fn)(void));
/* fn wakes the drain thread: a thread whose ring passes half full calls
 * it (async-signal-safe). */
void ring_set_wake(void (*fn)(void));

/* tally.c: a ring's records that the timeline dropped, for the tables. */
#define TALLY_ROWS 128
struct tally_row {
	uint32_t name, group;
	uint32_t arg; /* a step's number (tally_step_group()), else 0 */
	uint16_t kind;
	uint8_t cat, flags;
	uint64_t count;		 /* 0: a free row */
	int64_t total, min, max; /* ticks for spans and frames */
	uint64_t errors;
};
#define TALLY_PENDING 8
struct tally {
	uint64_t seq;  /* odd while the ring's thread writes rows */
	uint64_t lost; /* records the tally had no row for        */
	uint64_t taken_seq;
	/* Records of signal handlers that ran while the thread added one:
	 * the thread adds them before it lets go. */
	uint64_t npending;
	struct coll_rec pending[TALLY_PENDING];
	struct tally_row rows[TALLY_ROWS];
	struct tally_row taken[TALLY_ROWS]; /* the drain thread's */
};
/* Gets a row whose count, total, errors are what is new since the last
 * call, and min and max as of now. */
typedef void (*tally_fn)(void *ctx, const struct tally_row *row);
void tally_add(struct tally *t, const struct coll_rec *r);
/* Returns 0, or -EAGAIN when the thread was writing (try next pass). */
int tally_take(struct tally *t, tally_fn fn, void *ctx);
void tally_clear(struct tally *t);
/* The group of the steps' records (steps.c), whose rows are keyed by
 * their arg (the step's number) too; 0: none. Safe anywhere. */
void tally_step_group(uint32_t group);
uint64_t ring_tally_lost(void);
/* Of ring_dropped(), the records of threads that had no ring (getting
 * one, or ended, or none could be had). */
uint64_t ring_dropped_ringless(void);
/* A record of a thread that has no ring (it is getting one, or has ended,
 * or none could be had): for the tables. Signal-safe, any thread. Returns
 * -ENOSPC when it had to be lost (counted in tally_orphans_lost()). */
int tally_orphan(const struct coll_rec *r);
/* The drain thread's: hands fn the orphans since the last call. */
void tally_orphans_take(tally_fn fn, void *ctx);
uint64_t tally_orphans_lost(void);
/* In a forked child: forgets the parent's orphans. */
void tally_orphans_reset(void);
/* fn gets what full rings tallied; ring_collect() calls it. */
void ring_set_tally_sink(tally_fn fn, void *ctx);

/* stacks.c: the owner's side of the stack table. stack_site() names the
 * frames of stack id (once) and returns its call site's name id, 0 for an
 * unknown stack. A stack_pends matches each thread's COLL_STACK records
 * with the spans they belong to: stack_pends_rec() takes every record of
 * thread tid in order and returns, for a span, its stack id (0: none).
 * stack_tree_build() makes the frame tree of every stack the drain met
 * (NULL: no stacks, or no memory); stack_tree_leaf() gives the frame node
 * of a stack, for an event's "sf" (0: none); stack_frames_write() writes
 * the tree as the top-level "stackFrames" member (no comma). */
uint32_t stack_site(uint32_t id);
/* The call-site row of a span of row name in section group whose site is
 * site: "<name> @ <site>" in "Call Sites: <group>". Returns 0 or
 * -ENOMEM. */
int stack_site_row(uint32_t group, uint32_t name, uint32_t site,
		   uint32_t *sgroup, uint32_t *sname);
struct stack_pends;
struct stack_pends *stack_pends_create(void);
void stack_pends_destroy(struct stack_pends *p);
uint32_t stack_pends_rec(struct stack_pends *p, int tid,
			 const struct coll_rec *r);
struct stack_tree;
struct stack_tree *stack_tree_build(void);
void stack_frames_write(struct out *o, const struct stack_tree *t);
/* Stores node id's parent (0: a root), name and category (string ids);
 * returns 0 when t has no such node. */
int stack_tree_node(const struct stack_tree *t, uint32_t id, uint32_t *parent,
		    uint32_t *name, uint32_t *cat);

/* callstack.c: Kineto's "Call stack" argument of the frame nodes of tree
 * t, for one dump. callstack_of() returns node's as a quoted JSON string
 * (made once, kept until callstack_destroy()) and its length in *len, or
 * NULL when the node has no Python frame or memory is short. */
struct callstack;
struct callstack *callstack_create(const struct stack_tree *t);
const char *callstack_of(struct callstack *c, uint32_t node, size_t *len);
void callstack_destroy(struct callstack *c);
uint32_t stack_tree_leaf(const struct stack_tree *t, uint32_t id);
void stack_tree_free(struct stack_tree *t);

/* threads.c: the OS name thread tid had when its ring attached, kept for
 * a thread that ends before its name is read (owner held). */
void threads_note_comm(int tid, const char *comm);

/* strtab.c: held across fork() (coll_fork_prepare). */
void strtab_lock(void);
void strtab_unlock(void);

/* window.c: held across fork(); the child forgets the parent's windows. */
void window_fork_prepare(void);
void window_fork_parent(void);
void window_fork_child(void);

/*
 * window.c: the step windows (steps.c), in ticks (the records' clock) and
 * in clock_now_ns() time. window_steps_start() begins with keep (step 0
 * kept or not), at start-up; window_steps_note() notes that keeping
 * starts (keep != 0) or stops at t ticks, now_ns, under LOCK_WINDOWS.
 * window_steps_keeps() answers for a record that began at t ticks:
 * lock-free, for the drain.
 */
void window_steps_start(int keep);
void window_steps_note(int keep, uint64_t t, uint64_t now_ns);
int window_steps_keeps(uint64_t t);

/*
 * steps.c, the drain's side. STEPS_GROUP (source.h) is the section of
 * the steps' records (steps_group(): its string id); the tables write it as the
 * Steps section (table_steps.c). steps_filtering(): a step window is set
 * (window_steps_keeps() decides). steps_thread_first() is the start
 * (ticks) of thread tid's first record so far (UINT64_MAX: none), which
 * steps_thread_seen() lowers to t0. steps_drain_rec() completes step
 * record r (a thread's first step starts at first) and notes its number
 * for the metadata "steps", which steps_meta_sync() writes (before the
 * metadata is read, or replaced by a flight window's). Owner held, all
 * of them.
 */
int steps_filtering(void);
uint32_t steps_group(void);
uint64_t steps_thread_first(int tid);
void steps_thread_seen(int tid, uint64_t t0);
void steps_drain_rec(struct coll_rec *r, uint64_t first);
void steps_meta_sync(void);
/* steps.c: a forked child forgets the parent's threads and steps. */
void steps_fork_child(void);

/*
 * step_pick.c: some steps of a recorded run, picked from its journal as
 * `mxprof report --steps LIST` picks them from a trace. open: parses
 * list (coll_steps_parse_list) and finds the listed steps' records in
 * journal; returns the pick, or NULL with *err -EINVAL (a bad list),
 * -ENODATA (none of the steps is in the journal, or journal is NULL),
 * -ENOMEM or a reading error. keep: whether record r of the journal
 * (its ids, ns) is kept; keep_ns: whether an event that began at ns
 * (the journal's time) is. held: the steps found ("3-5,9"). agg: the
 * kept records' aggregates, with this process's string ids and their
 * call sites (NULL without memory or on a reading error). close frees
 * (NULL accepted). Owner held; allocates.
 */
struct step_pick;
struct step_pick *step_pick_open(const char *list, const char *journal,
				 int *err);
int step_pick_keep(const struct step_pick *p, const struct coll_rec *r);
int step_pick_keep_ns(const void *pick, uint64_t ns);
const char *step_pick_held(const struct step_pick *p);
/* The metadata pairs (key, value, ..., NULL; NULL for none) with "steps"
 * set to the steps p found, added when absent: a malloc'ed array of the
 * same pointers, to free(); NULL without memory. */
const char **step_pick_meta(const char *const *pairs,
			    const struct step_pick *p);
struct agg *step_pick_agg(struct step_pick *p, const char *journal);
void step_pick_close(struct step_pick *p);

/* cat.c: held across fork(). */
void cat_fork_prepare(void);
void cat_fork_parent(void);

/* jpack.c: the journal's compact form of a batch of one thread's
 * records. jpack_encode writes at most JPACK_REC_MAX bytes a record and
 * returns the count; jpack_decode reads exactly n records filling len
 * bytes, or returns -EBADMSG. */
#define JPACK_REC_MAX 48
size_t jpack_encode(const struct coll_rec *r, size_t n, unsigned char *out);
int jpack_decode(const unsigned char *in, size_t len, struct coll_rec *out,
		 size_t n);

/* journal.c: the binary, append-only record of a run. */
enum journal_type {
	J_STR = 1,    /* u32 id, bytes                 */
	J_RECS = 2,   /* u32 tid, u32 n, n coll_rec    */
	J_THREAD = 3, /* u32 tid, bytes                */
	J_STATS = 4,  /* u64 dropped, u64 truncated, u64 the
		       * cause (enum recover_cut; absent in older
		       * journals: MXPROF_MAX_TRACE_MB) */
	J_CAT = 5,    /* u32 id, bytes (version 2 on)  */
	J_PACK = 6,   /* u32 tid, u32 n, n records in jpack.c's form
		       * (version 3 on; J_RECS before)  */
};
struct journal_header {
	char magic[8];	  /* "MXPJRNL1" */
	uint32_t version; /* 3; 2 wrote J_RECS, 1 no J_CAT either */
	uint32_t pid;
	int64_t base_utc_ns;
	/* [0]: CLOCK_MONOTONIC ns of ts 0 (0 in older journals), so that an
	 * image exec'ed in the same process continues the timeline. */
	uint64_t reserved[4];
};
#define JOURNAL_EVENT_BYTES 150	 /* estimated trace bytes per record */
#define JOURNAL_BATCH	    4096 /* most records in one entry */
struct journal {
	int fd;
	/* fd is in the own table (out_fd.c) of this thread; 0: the
	 * program's table; -1: of a thread that has ended */
	int fd_tid;
	dev_t dev; /* the file fd was opened on: a program may close fd */
	ino_t ino; /* and open something else under the same number   */
	int err;
	int truncated;	    /* 0, or what cut the timeline (recover_cut) */
	uint32_t str_done;  /* ids below this are written */
	uint32_t cat_done;  /* categories below this are written */
	uint64_t bytes;	    /* estimated trace size */
	uint64_t max_bytes; /* 0 = no cap */
	uint64_t disk_cap;  /* the disk's share (journal_open), 0 = none */
	int disk_said;	    /* the disk cap was reached and said */
	size_t n;
	char path[4096];
	unsigned char buf[1 << 20];
};
/* journal_open_owned: see journal.c; -EBUSY with *owner the pid of the
 * running process whose journal path is. journal_open: the same, without
 * the owner. */
int journal_open_owned(struct journal *j, const char *path, int pid,
		       int *owner);
int journal_open(struct journal *j, const char *path, int pid);
/*
 * For the drain thread. journal_rehome, at its start, before it takes a
 * table of its own (out_fd.c): a journal descriptor in the program's
 * table is given back, and the next write opens the journal again in
 * the thread's own. journal_thread_ends, at its end:
 * a descriptor of its own table is gone with it; the next write, on
 * whatever thread, opens the journal again. journal_forget: the journal
 * dropped unwritten (a forked child's copy of its parent's), its
 * descriptor closed where it is this thread's.
 */
void journal_rehome(struct journal *j);
void journal_thread_ends(struct journal *j);
void journal_forget(struct journal *j);
int journal_continue(struct journal *j, const char *path, int pid);
int journal_origin(const char *path, int pid, uint64_t *mono, int64_t *utc);
void journal_reserve_fds(void);
void journal_recs(struct journal *j, int tid, const struct coll_rec *r,
		  size_t n);
void journal_thread(struct journal *j, int tid, const char *name);
void journal_stats(struct journal *j, uint64_t dropped);
int journal_flush(struct journal *j);
void journal_close(struct journal *j, int unlink_file);
struct journal_ops {
	void (*str)(void *ctx, uint32_t id, const char *s, size_t len);
	void (*thread)(void *ctx, int tid, const char *name, size_t len);
	void (*recs)(void *ctx, int tid, const struct coll_rec *r, size_t n);
	/* cause: enum recover_cut, 0 when the entry does not say. */
	void (*stats)(void *ctx, uint64_t dropped, uint64_t truncated,
		      uint64_t cause);
	void (*cat)(void *ctx, uint32_t id, const char *name, size_t len);
	/* The file ends inside the entry at offset (a writer that died). */
	void (*torn)(void *ctx, uint64_t offset);
	/* The records entry at offset cannot be decoded (damaged); its
	 * records are skipped. */
	void (*bad)(void *ctx, uint64_t offset);
};
int journal_read(const char *path, const struct journal_ops *ops, void *ctx,
		 struct journal_header *hdr);

/*
 * flight.c: flight mode's timeline in memory (its top comment tells the
 * design). setup: for cfg (nothing kept when flight mode is off); 0 or
 * -ENOMEM. on: flight mode is on. recs: keeps n converted records of
 * thread tid (the drain's emit, instead of the journal). note_step: step
 * n, from t0 to t1 (trace ns), was drained. pin: keeps every record from
 * start on until pinned again (UINT64_MAX: no pin), for a trigger that
 * waits for one more pass. window: the window a dump writes, ending at
 * end (UINT64_MAX: now), with steps numbered at most step_hi. fill:
 * writes the records kept that began inside w into j (journal_recs()).
 * records: records ever kept; bytes_held: the memory the store holds.
 * reset: frees everything (a forked child; setup calls it). All on the
 * drain thread, owner held.
 */
struct flight_window {
	uint64_t start, end; /* trace ns, both inclusive */
	int cut; /* records of the window went for MXPROF_FLIGHT_MB */
	uint64_t step_lo, step_hi, nsteps; /* the steps it holds */
};
int flight_setup(const struct coll_config *cfg);
int flight_on(void);
void flight_recs(int tid, const struct coll_rec *r, size_t n);
void flight_note_step(uint64_t n, uint64_t t0, uint64_t t1);
void flight_pin(uint64_t start);
void flight_window(struct flight_window *w, uint64_t end, uint64_t step_hi);
void flight_fill(struct journal *j, const struct flight_window *w);
uint64_t flight_records(void);
size_t flight_bytes_held(void);
void flight_reset(void);

/* writer.c: what a trace writer is told about the run (a dump's or a
 * recovery's), and where it says what it wrote. */
struct writer_meta {
	int pid;
	int rank;	    /* -1 when unknown */
	int world_size;	    /* 0 when unknown */
	int has_local_rank; /* local_rank is known */
	int local_rank;
	const char *process_name;
	const char *cmdline; /* the command line, for process_labels; or NULL */
	const char *host;
	int64_t base_utc_ns;
	uint64_t dropped;
	int truncated;
	const char *clock;
	/* Sources that add to the trace (NULL-terminated), or NULL. */
	const struct coll_source *const *sources;
	/* Names of categories 2 and up for a version 1 journal, which does
	 * not carry them (NULL-terminated), or NULL. */
	const char *const *legacy_cats;
	/* The metadata (meta.c) as key, value, ..., NULL, written at the
	 * top level as "key":"value" pairs; NULL for none (a recovery). */
	const char *const *meta;
	/* The metadata whose values are JSON text, as key, value, ..., NULL,
	 * written after meta as "key":value, the value as it is; or NULL. */
	const char *const *meta_json;
	/* Where to say what was written, or NULL: the JSON's size before
	 * gzip, and whether the trace has stacks. */
	struct writer_written *written;
	/* Only the records and events of these steps (step_pick.c), or
	 * NULL for all. */
	const struct step_pick *steps;
};
struct writer_written {
	uint64_t json_bytes;
	int stacks;
};
/* chrome.c: the Chrome trace (see writer.c's table). */
int chrome_write_from_journal(const char *journal_path, const char *out_path,
			      const struct writer_meta *meta);

/* chrome_meta.c: the trace's members around its events, for chrome.c. */
struct chrome_thread {
	int tid;
	char *name; /* NULL: none known */
};
/* Writes the trace's head: from its opening brace to "distributedInfo"
 * and the comma after it (schemaVersion, the sources' deviceProperties,
 * traceName out_path, m's metadata). */
void chrome_head(struct out *o, const struct writer_meta *m,
		 const char *out_path);
/* Writes to o, where a new element of traceEvents begins (after its
 * separator), the metadata events of process pid (m's name, command line)
 * and of its n threads. */
void chrome_metadata(struct out *o, const struct writer_meta *m,
		     const char *pid, const struct chrome_thread *threads,
		     size_t n);
/* Writes the trace's tail: the "mxprof" object of process pid, and the
 * closing brace. */
void chrome_tail(struct out *o, const struct writer_meta *m, const char *pid);

/* agg.c: rows, for the table writer. */
enum agg_class { AGG_TIME = 0, AGG_COUNTER = 1, AGG_MARKER = 2 };
struct agg_row {
	uint32_t group;
	uint32_t name;
	uint8_t cls;	/* enum agg_class */
	uint8_t status; /* a source checked the status of this row */
	uint8_t gone;	/* its one sample was folded (nest.c): not shown */
	uint64_t count;
	uint64_t errors;
	int64_t total; /* ns, or the sum of counter values */
	int64_t min;
	int64_t max;
	int64_t self; /* ns of total not spent in nested slices (time rows) */
};
/* Returns the rows in a malloc'ed array (*n of them), or NULL. The steps
 * (time samples of section STEPS_GROUP) make no rows: agg_steps(). */
struct agg_row *agg_rows(const struct agg *a, size_t *n);
/* The step times of a (stepstat.c), NULL when a has had none. */
const struct stepstat *agg_steps(const struct agg *a);

/*
 * stepstat.c: the step times of a run in bounded memory, for the Steps
 * section: count, total, min, max and the STEPSTAT_SLOWEST slowest
 * (slowest first, of equal times the lower number first) exact, the
 * quantiles exact up to 2^20 steps and from a histogram (within 0.2 %)
 * beyond. stepstat_create(): NULL without memory. stepstat_add(): one
 * step of ns ns, number num; can't fail (times it could not keep leave
 * the quantiles to those kept: stepstat_lossy()). stepstat_merge(): adds
 * src's steps to dst; 0 or -ENOMEM (as add). stepstat_quantile(): the
 * q-th quantile (0..1), interpolating linearly between the two nearest
 * steps as numpy's percentile() does; it reorders the times kept (s is
 * not otherwise changed), so it is the owner's, as every other call.
 * Not thread-safe: the aggregates' owner's.
 */
#define STEPSTAT_SLOWEST 5
struct stepstat_slow {
	int64_t ns;
	uint64_t num;
};
struct stepstat *stepstat_create(void);
void stepstat_destroy(struct stepstat *s);
void stepstat_reset(struct stepstat *s);
void stepstat_add(struct stepstat *s, int64_t ns, uint64_t num);
int stepstat_merge(struct stepstat *dst, const struct stepstat *src);
uint64_t stepstat_count(const struct stepstat *s);
int64_t stepstat_total(const struct stepstat *s);
int64_t stepstat_max(const struct stepstat *s);
int stepstat_lossy(const struct stepstat *s);
unsigned stepstat_slowest(const struct stepstat *s,
			  const struct stepstat_slow **out);
double stepstat_quantile(const struct stepstat *s, double q);
int agg_add_rec(struct agg *a, const struct coll_rec *r);
struct agg_sample agg_rec_sample(const struct coll_rec *r);
int agg_add_rec_on(struct agg *a, uint64_t thread, const struct coll_rec *r);
int agg_add_recs_on(struct agg *a, uint64_t thread, const struct coll_rec *rec,
		    size_t n);

int agg_add_many(struct agg *a, const struct agg_sample *s, uint64_t count,
		 int64_t total, int64_t min, int64_t max, uint64_t errors);
/* Adds every row of src to dst (counts, totals, self times and errors
 * summed; min and max kept). Returns 0 or -ENOMEM (rows left out). */
int agg_merge(struct agg *dst, const struct agg *src);

/* source.c: the registered sources, NULL-terminated (drain thread). */
extern const struct coll_source *coll_sources[];
/* Calls the tables callbacks of the sources (a table_opts extra). */
void source_tables(struct table_sink *k, const struct table_opts *o);

/*
 * The collector's state: the drain thread's, under LOCK_OWNER. drain.c
 * keeps it and runs the passes and requests; dump.c writes the outputs
 * of the state it is given.
 */
struct coll_state {
	struct coll_config cfg;
	int pid; /* the process the collector belongs to (not a vfork child) */
	uint64_t continued_records; /* read back from an earlier image's */
	uint64_t image_records;	    /* taken from the rings by this image */
	struct journal *j;
	int journal_open; /* 1 open, -1 failed, 0 not yet */
	struct agg *agg;
	/* What dumps(reset) took out of agg; the files still count it. */
	struct agg *before_reset;
	struct stack_pends *pends; /* spans' stacks, made on the first */
	uint64_t dumps_done;
	/* Dumps asked for that flight mode's file limit refused. */
	uint64_t dumps_refused;
	uint64_t last_dump_ns;
	int last_trace_err;
	int last_stats_err;
	int final; /* the dump being written is the last (drain_finish) */
	char stats_path[4200];
	char journal_path[4200];
	/* The trace at seen_path when this process named it (dump_note):
	 * another process's trace written there since is not replaced. */
	int seen_exists;
	dev_t seen_dev;
	ino_t seen_ino;
	char seen_path[4096];
	/* Flight mode: the window the next dump writes (trigger.c sets it,
	 * dump.c fills the journal with it). */
	struct flight_window flight_win;
};

/* dump.c, on the state s that drain.c passes in, owner held.
 * ensure_journal: creates the journal on first use (with the $TMPDIR
 * fallback); returns 0 or a negative errno. write: the trace, the tables
 * and the status file, of the steps of list steps only when it is not
 * NULL (step_pick.c: -EINVAL for a bad list and -ENODATA when none of
 * them was recorded, both with nothing written); returns 0 or the first
 * error. */
int dump_ensure_journal(struct coll_state *s);
/* Notes the file now at s->cfg.output, before this process writes there:
 * a trace another process writes there later is not replaced. Owner
 * held, or before the drain thread starts. */
void dump_note_output(struct coll_state *s);
int dump_write(struct coll_state *s, uint64_t dropped, const char *steps);
/* One line at exit when the timeline lost slices to full buffers or was
 * cut at MXPROF_MAX_TRACE_MB, naming the setting to change. Owner held. */
void dump_say_cut(const struct coll_state *s, uint64_t dropped);
void dump_write_status(const struct coll_state *s);
void dump_remove_status(const struct coll_state *s);

/*
 * trigger.c: flight mode's triggers (its top comment tells them), owner
 * held, on the drain thread. setup: for cfg. note_records: records were
 * drained; note_step: step n (t0 and its duration, trace ns) was drained.
 * due: the trigger to fire now ("slow", "hang") or NULL, at now
 * (CLOCK_MONOTONIC ns). call_hook: calls coll_set_trigger_hook()'s
 * function (no collector lock held) for the numbered file beside output
 * (a copy of the trace path) that trigger is about to write, which
 * coll_trigger_file() tells meanwhile; not past the most files. write: writes
 * the window for trigger with reason (ignored for "slow", which has its own),
 * to the numbered file when numbered, else to the trace's own name (an ending);
 * returns dump_write()'s result, or -ENOSPC past
 * MXPROF_FLIGHT_MAX_DUMPS. hang_reason: the hang's reason, in buf.
 */
void trigger_setup(const struct coll_config *cfg);
void trigger_note_records(void);
void trigger_note_step(uint64_t n, uint64_t t0, uint64_t dur);
const char *trigger_due(uint64_t now);
void trigger_call_hook(const char *trigger, const char *output);
int trigger_write(struct coll_state *s, uint64_t dropped, const char *trigger,
		  const char *reason, int numbered);
const char *trigger_hang_reason(char *buf, size_t len);

/* cells.c: the cells of the tables (MXNet's widths: a Name column 30
 * wide, Total Count 11, the others 17). cells_json_str and cells_csv_str
 * append s quoted; cells_header the two header lines of a section with a
 * Name column w wide; cells_name a name cell w wide and at least one
 * space after; cells_ms ns as ms. None can fail (b->err says). */
#define CELLS_NAME_W  30
#define CELLS_COUNT_W 11
#define CELLS_COL_W   17
struct sbuf;
void cells_json_str(struct sbuf *b, const char *s);
void cells_csv_str(struct sbuf *b, const char *s);
void cells_header(struct sbuf *b, const char *const *cols, int ncols, int w);
void cells_name(struct sbuf *b, const char *name, int w);
double cells_ms(int64_t ns);

/* table_rows.c: the sources' sections being written (struct table_sink,
 * source.h) into b, in o's format, with the notes they stated. */
struct table_sink {
	struct sbuf *b;
	const struct table_opts *o;
	const struct table_section *s; /* the current section, or NULL */
	size_t rows;		       /* rows of s given so far        */
	int first;		       /* JSON: nothing yet in "Time"   */
	int nnotes;
	struct {
		const char *label;
		uint64_t count;
	} notes[4];
};

/* Starts k, the sink of b's sections given as rows; first: nothing
 * written yet in JSON's "Time". Then table_steps() may add the Steps
 * section, and table_rows_run() adds the sources' sections (o->extra;
 * none for one category), ends the last section and returns first after
 * them. Neither can fail (b->err says). */
void table_rows_begin(struct table_sink *k, struct sbuf *b,
		      const struct table_opts *o, int first);
int table_rows_run(struct table_sink *k);

/* table_steps.c: the Steps section from the step times s (at least
 * one step). This function can't fail (b->err). */
struct stepstat;
void table_steps(struct table_sink *k, const struct stepstat *s);

/* table.c: the tables file of a dump or a recovery (its name:
 * paths_stats, collector.h); extra gives the sources' sections and the
 * metadata, or NULL. */
int table_write_file(const struct agg *a, uint64_t dropped,
		     const struct table_opts *extra, const char *path);

/*
 * writer.c: the output formats, as a table of methods (SQLite's way). A
 * dump and a recovery write every entry's trace from the journal to the
 * trace path, and every entry's tables to the tables path, in the order
 * of writers[] (NULL-terminated); the first error ends the trace's or
 * the tables' turn and is returned. Today: the Chrome trace (chrome.c)
 * and the text tables (table.c). A format plugs in here, with a file
 * name of its own (paths.c) when it does not replace one of these.
 */
struct writer_ops {
	const char *name;
	/* The timeline of the journal at journal_path into path (gzip when
	 * path ends in ".gz"), replaced atomically; 0 or a negative errno.
	 * NULL: the writer writes no trace. */
	int (*trace)(const char *journal_path, const char *path,
		     const struct writer_meta *m);
	/* The tables of a, with extra's sources' sections and metadata (when
	 * not NULL), to path, replaced atomically; 0 or a negative errno.
	 * NULL: the writer writes no tables. */
	int (*tables)(const struct agg *a, uint64_t dropped,
		      const struct table_opts *extra, const char *path);
};
extern const struct writer_ops *const writers[];

/* Runs every writer's trace (writers_trace) or tables (writers_tables)
 * as struct writer_ops says. Returns 0 or the first negative errno. */
int writers_trace(const char *journal_path, const char *path,
		  const struct writer_meta *m);
int writers_tables(const struct agg *a, uint64_t dropped,
		   const struct table_opts *extra, const char *path);

/* meta.c. copy: the metadata whose values are strings as key, value,
 * ..., NULL in one malloc'ed block (free() it), in the order first added,
 * for table_opts.meta and writer_meta.meta; NULL when there is none or
 * without memory. When json is not NULL, *json gets those whose values
 * are JSON text the same way (meta_set_json()), for
 * writer_meta.meta_json. Takes LOCK_META once for both. fork_*: held
 * across fork() (coll_fork_prepare). */
const char **meta_copy(const char ***json);
void meta_fork_prepare(void);
void meta_fork_parent(void);

/* threads.c: thread names in the journal (owner). read_comm: the OS name
 * of tid (0: the process). name: writes tid's name to j when new, or when
 * refresh and renamed. forget: a fresh table (fork child). */
void threads_read_comm(int tid, char *buf, size_t len);
void threads_name(struct journal *j, int tid, int refresh);
/* threads.c: writes the name of every thread named so far to j (a flight
 * dump's journal, which begins with none). */
void threads_write_all(struct journal *j);
void threads_forget(void);
void threads_fork_prepare(void);
void threads_fork_parent(void);

/* sweep.c: removes the status files (<pid>.status, and
 * <pid>.status.tmp.<writer>) in dir whose process is gone. Owner held;
 * not for the hot path. This function can't fail. */
void sweep_status_dir(const char *dir);

#endif /* MXPROF_COLLECTOR_INTERNAL_H */
