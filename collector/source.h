/*
 * source.h - the face event sources use: records and the rings they are
 * pushed to, categories, the string table, stacks, the recording flag
 * and windows, steps, the clock for sources with their own timestamps, the
 * writers a source adds to the trace and the tables with, the metadata
 * and the source ops table (struct coll_source) through which a source
 * plugs into the drain. preload/ and cupti/ include it; it pulls in no
 * file format (ISA-L's header is output.h's). The implementations:
 * lock.c, cat.c, strtab.c, stacks.c, ring.c, window.c, clock.c, threads.c
 * (coll_thread_name), drain.c (coll_thread_seen, coll_own), out.c (the
 * out_* writers), chrome.c (coll_trace_event, _ts, _sf), trace_event.c
 * (coll_event and coll_trace_write), table_rows.c (table_section and its
 * rows), meta.c, source.c, agg.c and steps.c (coll_step_end and the
 * step markers).
 *
 * Hot-path functions are marked HOT: no lock, no allocation, no system
 * call, nothing that can re-enter a hook.
 */
#ifndef MXPROF_SOURCE_H
#define MXPROF_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "ticks.h"

/* ---- records ---------------------------------------------------------- */

/* What a record describes. */
enum coll_kind {
	COLL_SPAN = 1,	  /* t0..t1 on the recording thread (ticks)        */
	COLL_INSTANT = 2, /* t0; flags hold the COLL_SCOPE_*               */
	COLL_COUNTER = 3, /* t0; t1 holds the new value (int64_t)           */
	COLL_FRAME = 4,	  /* a span numbered in arg                         */
	COLL_STACK = 5,	  /* t0: the span it belongs to; name: stack id     */
};

/*
 * The trace category (Chrome "cat") of a record. Two are built in; sources
 * register the others by name with cat_id() (cat.c), and the journal
 * carries the names, so that a trace rebuilt from it names them too.
 */
enum coll_cat {
	COLL_CAT_USER = 0, /* user_annotation: public API and NVTX    */
	COLL_CAT_CAPI = 1, /* c_api: hooked C API calls              */
	COLL_CAT_MAX = 64,
};

/* Returns the id of category name, registering it on first use, or
 * COLL_CAT_CAPI when COLL_CAT_MAX are taken (one line says so). Takes
 * LOCK_CATEGORIES: call it when a source is set up, not per event. */
unsigned cat_id(const char *name);

/* Returns the id of category name, or -1 when none is registered.
 * Lock-free. */
int cat_find(const char *name);

/* Returns the name of category id, or "other" for an unknown id.
 * Lock-free. */
const char *cat_name(unsigned id);

/* Returns how many categories exist. Lock-free. */
unsigned cat_count(void);

/* Marker scopes, in flags of a COLL_INSTANT record. */
enum { COLL_SCOPE_GLOBAL = 0, COLL_SCOPE_PROCESS = 1, COLL_SCOPE_THREAD = 2 };

/* Flag bits of a COLL_SPAN: the source checks a status (the section gets an
 * Errors column), and this call returned an error status. */
#define COLL_FLAG_STATUS 0x40u
#define COLL_FLAG_ERROR	 0x80u

/* Flag bit of a COLL_SPAN in a ring: arg holds the id of the call's stack,
 * in place of a COLL_STACK record of its own (the hook runtime's spans).
 * The drain turns it back into that record before the span, so nothing
 * past the rings sees the bit: see coll_rec_unstack(). */
#define COLL_FLAG_STACK 0x20u

/*
 * A record: 32 bytes, written whole into the ring before it is published.
 * name and group are string-table ids. group is the table section (a domain,
 * a library's "C API (libz.so.1)", ...). arg is free for the source
 * (frame number, correlation id, ...).
 */
struct coll_rec {
	uint64_t t0;
	uint64_t t1;
	uint32_t name;
	uint32_t group;
	uint16_t kind;
	uint8_t cat;
	uint8_t flags;
	uint32_t arg;
};

_Static_assert(sizeof(struct coll_rec) == 32, "records are 32 bytes");

/* Returns the stack id a span carries (COLL_FLAG_STACK), or 0, and clears
 * the bit and arg: r is then the span as a COLL_STACK record would have
 * preceded it. */
static inline uint32_t coll_rec_unstack(struct coll_rec *r)
{
	uint32_t id = 0;

	if (__builtin_expect(r->flags & COLL_FLAG_STACK, 0) &&
	    r->kind == COLL_SPAN) {
		id = r->arg;
		r->arg = 0;
		r->flags &= (uint8_t)~COLL_FLAG_STACK;
	}
	return id;
}

/* ---- state -------------------------------------------------------------- */

/*
 * coll_recording.on is non-zero while records should be taken (state "run"
 * and not paused, inside the capture window). Sources test it first, with
 * coll_active(), so that a stopped profiler costs one load and a branch.
 */
extern volatile struct hot_flag coll_recording;

/* HOT. Returns non-zero when a source should record now. */
static inline int coll_active(void)
{
	return __builtin_expect(coll_recording.on, 0);
}

/* ---- the string table ------------------------------------------------- */

/*
 * Returns the id of s, adding it on first use; ids start at 1 and never
 * change. Takes a lock: call it when an object is created, not per event.
 * Returns 0 when memory is exhausted (0 is the empty name).
 */
uint32_t strtab_intern(const char *s);

/* Returns the string for id, or "" for an unknown id. Lock-free. */
const char *strtab_get(uint32_t id);

/* Returns how many ids exist (the highest id + 1). Lock-free. */
uint32_t strtab_count(void);

/* ---- call stacks (stacks.c) ------------------------------------------ */

/* The deepest stack kept, in frame words. */
#define STACK_DEPTH_MAX 256

/* madvise's MADV_POPULATE_WRITE (Linux 5.14; older kernels refuse it,
 * and the pages fault in as used): a table's pages in one system call
 * rather than a page fault each. */
#ifdef MADV_POPULATE_WRITE
#define MXPROF_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define MXPROF_MADV_POPULATE_WRITE 23
#endif

/*
 * HOT. Returns the id of the stack of n frame words w (innermost first),
 * adding it on first use, or 0 when the table is full (counted in
 * stack_lost()). Ids are never reused. Lock-free, allocation-free after
 * the first call; safe in a signal handler.
 */
uint32_t stack_intern(const uint64_t *w, unsigned n);

/* Returns the frame words of stack id and their number in *n, or NULL for
 * an unknown id. Lock-free. */
const uint64_t *stack_words(uint32_t id, unsigned *n);

/* Returns how many stacks did not fit in the table. Lock-free. */
uint64_t stack_lost(void);

/*
 * Names frame word w: writes the frame's name and its category (a
 * library's file name, "python") and sets *user when the frame is in the
 * user's own code rather than a framework's or the system's. Returns 0,
 * or -1 when it cannot (the frame is then named by its address). Called
 * on the drain thread, under the owner lock, once per word, soon after
 * the stack was captured.
 */
typedef int (*stack_namer_fn)(uint64_t w, char *name, size_t nlen, char *cat,
			      size_t clen, int *user);

/* Sets the namer of the stacks' frame words (at start-up). */
void stack_set_namer(stack_namer_fn fn);

/* The string id of the call site of stack id (its innermost frame in the
 * user's own code, else its innermost frame), naming its frames the first
 * time; 0 for an unknown stack. Owner held. */
uint32_t coll_stack_site(uint32_t id);

/* ---- per-thread rings ------------------------------------------------- */

enum coll_overflow { COLL_OVERFLOW_DROP = 0, COLL_OVERFLOW_BLOCK = 1 };

/*
 * HOT. Appends the record whose four 8-byte words are w0 to w3 (in memory
 * order) to the calling thread's ring. Call it through ring_push().
 */
int ring_push_words(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3);

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "ring_push() composes records in little-endian words");

/*
 * HOT. Appends r to the calling thread's ring. Returns 0, or -ENOSPC when
 * the ring was full and the record was dropped (and counted). The first
 * call on a thread maps that thread's ring. Safe in a signal handler.
 *
 * Inline so that a record built in the caller never goes through memory:
 * its fields are put together in registers and passed as four words. A
 * record stored field by field and read back whole waits for each store
 * (no store-to-load forwarding across them), which was most of a task
 * pair's cost.
 */
static inline int ring_push(const struct coll_rec *r)
{
	return ring_push_words(
		r->t0, r->t1, (uint64_t)r->name | (uint64_t)r->group << 32,
		(uint64_t)r->kind | (uint64_t)r->cat << 16 |
			(uint64_t)r->flags << 24 | (uint64_t)r->arg << 32);
}

/* Returns the number of records dropped so far. Lock-free. */
uint64_t ring_dropped(void);

/* Returns non-zero when some thread of this process (or of the parent it
 * was forked from) has pushed a record. Lock-free. */
int ring_any(void);

/*
 * Suppresses recording on the calling thread while non-zero (used by
 * mxprof's own threads and re-entrant paths). Returns the previous value.
 */
int ring_set_quiet(int quiet);

/* ---- recording windows (window.c) ------------------------------------- */

/*
 * Notes that recording started (on != 0) or stopped now, in the clock of
 * clock_now_ns(). Sources whose records arrive late (GPU activity comes in
 * buffers) keep only work that started while recording, which
 * coll_recording_at() tells. Takes LOCK_WINDOWS; not for the hot path.
 */
void coll_note_recording(int on);

/*
 * Returns non-zero when recording was on at t (clock_now_ns() time), and
 * always before the first coll_note_recording() (a collector driven
 * directly, as in tests). Takes LOCK_WINDOWS; not for the hot path.
 */
int coll_recording_at(uint64_t t);

/* ---- steps (steps.c) ---------------------------------------------------- */

/*
 * A source tells the collector that a step ended on the calling thread:
 * the range, call or annotation marking a step (coll_step_marker()) ended
 * at t1, in ticks (ticks_now(), the clock of the records). Call it after
 * pushing the marker's own record. The step becomes a "ProfilerStep#N"
 * slice (cat user_annotation, N from 0 in the order steps end in the
 * process) on this thread, from the thread's previous step end (its
 * first record for its first step) to t1, when the step window keeps
 * step N; records of steps the window does not keep are left out of the
 * trace and the tables. Not HOT (it takes LOCK_WINDOWS and LOCK_STRTAB,
 * once per step); never from a signal handler.
 */
void coll_step_end(uint64_t t1);

/*
 * Returns non-zero when name marks a step's end (it matches MXPROF_STEP,
 * by default "Optimizer.step#*"). fnmatch() on each call: ask once per
 * name (when a function is hooked, a name first seen) and keep the
 * answer. Lock-free.
 */
int coll_step_marker(const char *name);

/*
 * coll_step_marker() of string id, kept for ids below 65536 after the
 * first question (lock-free, allocation-free after that: one load); ids
 * above it are matched on each call. For a source that meets names as
 * ids on its hot path (NVTX ranges).
 */
int coll_step_marker_id(uint32_t id);

/*
 * Names thread tid in the trace, over its OS name (NVTX naming of OS
 * threads). Takes LOCK_NAMES: not for the hot path.
 */
void coll_thread_name(int tid, const char *name);

/*
 * Notes that thread tid appears in the trace (through a source's own
 * events), so that it gets a name. The drain thread's, under the owner
 * lock (a source's drain callback). This function can't fail.
 */
void coll_thread_seen(int tid);

/*
 * Makes the calling thread the owner of the collector's state until
 * coll_disown(): it takes LOCK_OWNER, so the drain thread waits between
 * two steps. For code that must touch a source's state from another
 * thread, such as a test that feeds a source directly. Not HOT.
 */
void coll_own(void);
void coll_disown(void);

/* ---- writers: what sources use to add to the trace and the tables ----- */

/*
 * An output being written (struct out, output.h): a source writes only
 * into one it is given (coll_trace_event(), a source's devices), with
 * these; out.c implements them. None can fail: errors come back from
 * the file's out_commit().
 */
struct out;

/* Appends n bytes of p. This function can't fail (see out_commit). */
void out_write(struct out *o, const void *p, size_t n);

/* Appends the C string s, unquoted. This function can't fail. */
void out_str(struct out *o, const char *s);

/* Appends v in decimal. This function can't fail. */
void out_u64(struct out *o, uint64_t v);

/* Appends v in decimal, with a '-' when negative. This function can't
 * fail. */
void out_i64(struct out *o, int64_t v);

/* Appends ns as microseconds with three decimals: 1234567 -> "1234.567".
 * This function can't fail. */
void out_us(struct out *o, uint64_t ns);

/*
 * The writers' fast path: room for n bytes (n <= OUT_BUF_BYTES) at the
 * buffer's end, written out first when fewer are left. Returns where the
 * caller writes them, directly; out_wrote() then takes them, end being
 * just past the last byte written. Nothing else may write to o between
 * the two. This function can't fail (see out_commit).
 */
char *out_room(struct out *o, size_t n);

/* Takes the bytes written at out_room()'s pointer, up to end. This
 * function can't fail. */
void out_wrote(struct out *o, const char *end);

/* Writes v in decimal at p (at most 20 bytes), without printf; returns
 * the end. This function can't fail. */
char *out_fmt_u64(char *p, uint64_t v);

/* Writes ns as microseconds with three decimals at p (at most 24 bytes):
 * 1234567 -> "1234.567"; returns the end. This function can't fail. */
char *out_fmt_us(char *p, uint64_t ns);

/* Returns how many bytes were appended since out_open(), before any
 * compression. This function can't fail. */
uint64_t out_bytes(const struct out *o);

/* Appends the C string s as a quoted JSON string (out_json_escape()).
 * This function can't fail. */
void out_json_str(struct out *o, const char *s);

/* Appends s[0..n), NUL bytes included, as a quoted JSON string
 * (out_json_escape()). This function can't fail. */
void out_json_strn(struct out *o, const char *s, size_t n);

/*
 * A trace being written (chrome.c). Sources add events with
 * coll_trace_event(), which starts a new element of traceEvents and
 * returns the output to write it to.
 */
struct stack_tree;
struct coll_trace {
	struct out *o;
	int first;     /* no event written yet: no separating comma */
	int pid;       /* the process's pid, the host events' "pid"  */
	uint64_t base; /* CLOCK_MONOTONIC ns of ts 0                  */
	const struct stack_tree *stacks; /* "stackFrames", NULL: none */
	const char *path; /* the trace's path, as it will be named  */
	/* When set, coll_trace_write() leaves out an event (but metadata)
	 * unless keep(keep_ctx, its ts - base) says to write it. */
	int (*keep)(const void *keep_ctx, uint64_t ns);
	const void *keep_ctx;
};

/* The "sf" of an event whose stack is stack id (stacks.c): its frame node
 * in the trace's stackFrames, 0 when it has none. */
uint32_t coll_trace_sf(const struct coll_trace *t, uint32_t id);

/* Starts the next element of traceEvents; returns where to write it. */
struct out *coll_trace_event(struct coll_trace *t);

/* Writes CLOCK_MONOTONIC time mono_ns as a trace "ts" value. */
void coll_trace_ts(struct coll_trace *t, uint64_t mono_ns);

/*
 * A source's sections of the tables, given as rows: the table writer
 * (table.c, table_rows.c) formats them in every format, as the host sections
 * (text: after them, before the last line; JSON: in "Time", after them; CSV:
 * rows of kind time_ms). A source's tables callback (struct coll_source)
 * calls table_section() for each section, table_row() for each of its
 * rows, in the order shown (the writer keeps the first table_opts.top),
 * and table_note() for a count stated after the sections.
 */
struct table_sink;

/* An extra column of a section, after the time columns. */
struct table_col {
	const char *title; /* the text's header: "Median Time (ms)"  */
	const char *key;   /* the JSON key: "Median Time"            */
	int decimals;	   /* in the text and the JSON               */
	int percent;	   /* non-zero: the CSV's percent column     */
};

#define TABLE_COLS_MAX 4

struct table_section {
	const char *title;
	/* NULL: the columns Time, Min Time, Max Time and Avg Time (ms);
	 * else the header of the only time column, the total ("GPU Time
	 * (ms)"), and total_key its JSON key ("GPU Time"). */
	const char *total;
	const char *total_key;
	const struct table_col *cols; /* ncols (<= TABLE_COLS_MAX) */
	int ncols;
};

/* A row: times in ns, cols[i] the value of the section's column i. */
struct table_row {
	const char *name;
	uint64_t count;
	int64_t total, min, max;
	double cols[TABLE_COLS_MAX];
};

/* Starts section s (kept by pointer while its rows are given). This
 * function can't fail (memory running out fails the whole output). */
void table_section(struct table_sink *k, const struct table_section *s);

/* Adds row r (copied) to the current section. This function can't
 * fail. */
void table_row(struct table_sink *k, const struct table_row *r);

/* States count with label (a string constant) after the sections: the
 * text's "label: count" line, the JSON's "label": count; not in the CSV.
 * At most four per output; this function can't fail. */
void table_note(struct table_sink *k, const char *label, uint64_t count);

/* The value rows are sorted by for sort key (enum table_sort). */
double table_sort_value(int key, uint64_t count, int64_t total, int64_t min,
			int64_t max);

struct table_opts;
struct agg;

enum table_format { TABLE_TEXT = 0, TABLE_JSON = 1, TABLE_CSV = 2 };
enum table_sort {
	TABLE_SORT_TOTAL = 0,
	TABLE_SORT_AVG,
	TABLE_SORT_MIN,
	TABLE_SORT_MAX,
	TABLE_SORT_COUNT,
	TABLE_SORT_SELF, /* self time; rows without nesting: total */
};

struct table_opts {
	int format;	      /* enum table_format                     */
	int sort;	      /* enum table_sort                       */
	int ascending;	      /* non-zero: ascending                   */
	unsigned top;	      /* rows per section, 0 = all             */
	const char *category; /* only this section, NULL = all         */
	uint64_t dropped;     /* records dropped, stated in the output */
	/* Sections of the event sources (table_section()), after the host
	 * sections; NULL for none. */
	void (*extra)(struct table_sink *k, const struct table_opts *o);
	/* Metadata (meta.c) as key, value, ..., NULL: a "Metadata" section
	 * at the head of the text format; NULL for none. */
	const char *const *meta;
	/* Non-zero: the sources' sections cover the whole run, also after
	 * dumps(reset) (the files); 0: since the last reset (dumps()). */
	int whole_run;
};

/*
 * A source's trace event, which the trace writer formats (trace_event.c:
 * today the Chrome trace's JSON), so that a source writes no file format.
 * ph is 'X' (a slice: ts, dur), 'i' (an instant: ts, scope), 'C' (a
 * counter), 's' and 'f' (the two
 * ends of a flow: id; an 'f' binds to the enclosing slice) or 'M' (a
 * track's metadata: no ts). Times are CLOCK_MONOTONIC ns.
 */
enum coll_arg_type {
	COLL_ARG_U64,
	COLL_ARG_I64,
	COLL_ARG_STR,  /* a string, quoted                          */
	COLL_ARG_F64,  /* prec >= 0: "%.*f"; < 0: "%.*g" with -prec  */
	COLL_ARG_INTS, /* n (<= 3) integers, an array               */
};

struct coll_arg {
	const char *key;
	int type; /* enum coll_arg_type */
	int prec; /* COLL_ARG_F64 */
	int n;	  /* COLL_ARG_INTS */
	union {
		uint64_t u;
		int64_t i;
		const char *s;
		double f;
		const int32_t *ints;
	} v;
};

#define COLL_EVENT_ARGS_MAX 16

struct coll_event {
	char ph;
	const char *cat;  /* NULL: none ('M')              */
	const char *name; /* 's', 'f': the flow's category */
	int64_t pid, tid;
	uint64_t ts, dur;  /* ns                            */
	uint64_t id;	   /* 's', 'f'                      */
	uint32_t sf;	   /* stack frame node, 0: none     */
	char scope;	   /* 'i': 't', 'p' or 'g' ("s")     */
	const char *group; /* a counter's section, or NULL  */
	struct coll_arg args[COLL_EVENT_ARGS_MAX];
	int nargs;
};

/* Adds arg to e (up to COLL_EVENT_ARGS_MAX; more are left out). Returns
 * it, for its value. This function can't fail. */
struct coll_arg *coll_event_arg(struct coll_event *e, const char *key,
				int type);

/* Writes e as the next event of t. This function can't fail (write
 * errors stay in t's output). */
void coll_trace_write(struct coll_trace *t, const struct coll_event *e);

/* Writes n args into the args of the host span being written (a
 * source's span callback, after == 0). This function can't fail. */
void coll_trace_args(struct coll_trace *t, const struct coll_arg *a, int n);

/* Writes n args as one object of a top-level array (a source's devices
 * callback: o and first as it is given them). This function can't
 * fail. */
void coll_trace_object(struct out *o, int *first, const struct coll_arg *a,
		       int n);

/*
 * A source that writes the text of every thread's stack beside a trace
 * (preload/threads_now.c, in its events callback) counts it here; the
 * status file's "stacks=" line says how many were written, so that
 * `mxprof dump --stacks` knows when its text is complete. Owner held.
 */
void coll_status_stacks_written(void);

/* ---- metadata (meta.c) --------------------------------------------------- */

/* The longest key and value, with their terminators. */
#define META_KEY_MAX   256
#define META_VALUE_MAX 4096

/*
 * Adds key with value to the metadata written at the top level of the
 * trace and at the head of the tables from the next dump on; a key added
 * again takes the new value. Takes LOCK_META (nothing is taken under it).
 * Returns 0, -EINVAL for an empty or too long key or value or a key the
 * trace's top level uses (schemaVersion, traceEvents, mxprof, ...),
 * -ENOSPC past 64 keys, or -ENOMEM.
 */
int meta_set(const char *key, const char *value);

/* meta_set() for a value that is JSON text (checked by the caller): it
 * goes into the trace as it is, and not into the tables. */
int meta_set_json(const char *key, const char *json);

/* ---- sources ------------------------------------------------------------ */

/*
 * An event source that keeps state of its own beside the rings (the GPU
 * source) or needs the collector's life cycle (the hook engine's fork
 * handlers). Every member may be NULL. Unless said otherwise, a callback
 * runs on the drain thread with LOCK_OWNER held (or on a requester's
 * thread when there is no drain thread, still under LOCK_OWNER).
 */
/*
 * Whether this thread may call into the program's libraries (it has the
 * program's descriptor table): 0 on the drain thread, which works in a
 * table of its own (collector/shared_call.c). This function can't fail.
 */
int coll_foreign_ok(void);

struct coll_source {
	const char *name;
	/* NULL, or whether tick, flush and drain may call into the
	 * program's libraries now (which use the program's descriptors):
	 * then the drain thread runs them on its helper, in the program's
	 * descriptor table (shared_call.c); else on the drain thread itself,
	 * where such a call must do nothing of that kind when
	 * coll_foreign_ok() says no (the answer changed in between). */
	int (*foreign)(void);
	/* tick: once per drain period, with CLOCK_MONOTONIC ns, in the
	 * order the sources were added (the state machine's, which opens
	 * and closes the capture window, is added first); flush: before
	 * every dump and dumps(), hand over whatever the source buffers
	 * (flush then delivers it all). No collector lock held for either:
	 * the source may call into libraries whose callbacks come back to
	 * it, or take its own lock ranked before LOCK_OWNER. */
	void (*tick)(uint64_t now_ns);
	void (*flush)(void);
	/* Every pass: take in what was handed over; samples for the tables
	 * go to a; coll_thread_seen() names the threads of its events. */
	void (*drain)(struct agg *a);
	/* Sections of the source's own for the tables, as rows
	 * (table_section()), after the host sections, in every format. */
	void (*tables)(struct table_sink *k, const struct table_opts *o);
	/* dumps(reset=1): forget what the tables show. */
	void (*reset)(void);
	/* The trace. devices writes the source's entries of the top-level
	 * "deviceProperties" array, each as an object, with a comma before
	 * every one when *first is 0 (then clears it). begin prepares
	 * linking and returns non-zero
	 * when claim must see every host record first (a pass over the
	 * journal), with site the string id of the call site of a span
	 * that has a stack (MXPROF_STACKS), else 0; span adds to a host span
	 * being written: its args (after == 0, inside "args", each as
	 * ,"key":value) and then events of its own (after == 1, through
	 * coll_trace_event()); span is called only in a dump whose begin
	 * returned more than 0, or for a source without begin, so that a
	 * source with nothing to link costs a big trace nothing per span;
	 * events writes the source's own events after the
	 * host events; end frees what begin made. The tables of a dump are
	 * written after its trace. */
	void (*devices)(struct out *o, int *first);
	int (*begin)(void);
	void (*claim)(int tid, const struct coll_rec *r, uint32_t site);
	void (*span)(struct coll_trace *t, int tid, const struct coll_rec *r,
		     int after);
	void (*events)(struct coll_trace *t);
	void (*end)(void);
	/* fork(): prepare takes the source's lock, whose rank (before
	 * LOCK_OWNER) is fork_rank, so that coll_fork_prepare() takes the
	 * sources' locks and its own in the written order; parent and child
	 * release it, and the child forgets the parent's records. From
	 * coll_fork_*, on the forking thread, signals blocked. */
	int fork_rank;
	void (*fork_prepare)(void);
	void (*fork_parent)(void);
	void (*fork_child)(void);
	/* At exit, before the final dump, on the exiting thread: one line
	 * for what the user should know (patterns that matched nothing). */
	void (*finish)(void);
	/* Non-zero when the source records events of its own beside the
	 * rings (the GPU source once its library is attached), so that
	 * coll_recorded_any() is not fooled by empty rings. Any thread. */
	int (*recording)(void);
};

/*
 * Registers s (kept by pointer, for the life of the process) at start-up,
 * before recording begins. Returns 0, or -ENOSPC when 8 are registered.
 */
int coll_source_add(const struct coll_source *s);

/*
 * Returns non-zero when something was recorded: a ring was attached, or a
 * source says it records events of its own. For the lines at exit that say
 * a run recorded nothing. Lock-free; not HOT.
 */
int coll_recorded_any(void);

/* ---- samples for the tables (agg.c) ------------------------------------ */

struct agg;

/* One sample for the aggregates. value: duration in ns for spans and
 * frames, the new value for counters, ignored for instants. */
/*
 * A training step's record (steps.c): a span of section STEPS_GROUP whose
 * name is STEP_NAME and whose arg is the step's number N. Whatever shows
 * it by name (the trace, the tables) writes "ProfilerStep#N": one name
 * for every step, not one each.
 */
#define STEPS_GROUP "Steps"
#define STEP_NAME   "ProfilerStep"

struct agg_sample {
	uint32_t group;	  /* string id of the section */
	uint32_t name;	  /* string id of the row     */
	uint16_t kind;	  /* enum coll_kind           */
	uint8_t flags;	  /* COLL_FLAG_* / scope      */
	uint8_t has_self; /* self is set (else self time = value) */
	int64_t value;
	int64_t self; /* a span's time outside slices nested inside it */
	uint32_t arg; /* the record's arg: a step's number */
};

/* Adds one sample. Returns 0 or -ENOMEM (the sample is then lost). Totals
 * saturate at INT64_MAX and INT64_MIN. */
int agg_add(struct agg *a, const struct agg_sample *s);

/*
 * Adds the sample of a slice (COLL_SPAN or COLL_FRAME) that began at t0
 * (ns) on thread (any key naming one thread), with its self time worked
 * out from the slices of that thread added before it (nest.c): slices of
 * one thread must come in the order they ended. Other kinds are added as
 * agg_add() does. Returns 0 or -ENOMEM, as agg_add().
 */
int agg_add_at(struct agg *a, uint64_t thread, uint64_t t0,
	       const struct agg_sample *s);

/*
 * agg_add_at(), and then, when site_group and site_name are non-zero, the
 * same sample (value and self time) once more as row site_name of section
 * site_group: the slice's call site (a "Call Sites: <section>" row named
 * "<name> @ <site>", stacks). Returns 0 or -ENOMEM, as agg_add().
 */
int agg_add_site(struct agg *a, uint64_t thread, uint64_t t0,
		 const struct agg_sample *s, uint32_t site_group,
		 uint32_t site_name);

/* ---- the clock for sources with their own timestamps ------------------ */

/*
 * HOT, async-signal-safe, any thread. Now, in CLOCK_MONOTONIC nanoseconds
 * on the mapping that converts ticks (clock.c): the clock for sources that
 * stamp nanoseconds themselves, such as a GPU library's timestamp
 * callback, so
 * that their slices nest with those recorded in ticks.
 */
uint64_t clock_now_ns(void);

/* CLOCK_MONOTONIC ns of the trace's ts 0. Lock-free. */
uint64_t clock_base_mono_ns(void);

#endif /* MXPROF_SOURCE_H */
