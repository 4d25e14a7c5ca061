/*
 * collector.h - the collector's interface: records, per-thread buffers, the
 * string table, the clock, the drain thread, aggregation and the writers,
 * and the table through which event sources plug in.
 *
 * Nothing in collector/ knows about GPUs or hooking. Event sources (the
 * public API, hook trampolines, NVTX, a GPU activity source) fill a
 * struct coll_rec and call ring_push(); the drain thread moves records from
 * the per-thread rings into the journal (a binary file beside the trace,
 * the crash-safe record of the run) and into the aggregates. A dump turns
 * the journal into the Chrome trace and the aggregates into tables. After a
 * crash, recovery (recover.c, for the mxprof command) turns a journal left
 * behind into both.
 *
 *   source --ring_push--> ring (per thread, SPSC, bounded, lock-free)
 *          --drain thread--> journal (binary, append-only) --> Chrome trace
 *                        \-> aggregates ------------------------> tables
 *
 * Who owns what. The drain thread owns the collector's state: the journal,
 * the aggregates, the thread names, the dumps and the state of every
 * source registered with coll_source_add() (a source's drain, tables and
 * trace callbacks run only there). Other threads ask: mxprof_dump(),
 * dumps(), a flush and the final dump post a request and wait for it; the
 * dump signal and continuous dumps only wake the thread. The owner lock
 * (LOCK_OWNER) is held for each pass and each dump, so that fork() finds
 * the state between two steps; when there is no drain thread (before
 * start, after the end, or in a forked child whose thread could not
 * start), the caller takes it and serves its own request. A source's flush
 * and tick run on the drain thread without any collector lock held.
 *
 * Hot-path functions are marked HOT: no lock, no allocation, no system call,
 * nothing that can re-enter a hook.
 */
#ifndef MXPROF_COLLECTOR_H
#define MXPROF_COLLECTOR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <isa-l/igzip_lib.h>

#include "ticks.h"

/* ---- the lock order ----------------------------------------------------- */

/*
 * Every mutex of the library, in the one order in which they may be taken:
 * a thread that holds a lock takes only locks further down this list.
 * coll_fork_prepare() takes them all in this order, with every signal
 * blocked, so that a forked child starts with consistent tables; builds
 * with MXPROF_LOCK_CHECK (the test suite's sanitizer builds) check the
 * order at every acquisition and abort on the first violation.
 *
 * The dynamic linker's own lock sits between LOCK_HOOK and LOCK_STATE: the
 * patcher walks and pins the loaded objects while it holds LOCK_HOOK, and
 * code that the loader runs (constructors, dlopen from them) may record,
 * name things and change the state, but never waits for LOCK_HOOK (the
 * dl wrappers only try it).
 */
enum coll_lock_rank {
	LOCK_HOOK = 1,	 /* preload/hook: patterns, objects, stubs     */
	LOCK_STATE,	 /* preload/state.c: run, pause, windows       */
	LOCK_GPU_START,	 /* the GPU source: loading its library        */
	LOCK_OWNER,	 /* drain.c: the collector's state             */
	LOCK_REQUESTS,	 /* drain.c: requests to the drain thread      */
	LOCK_WINDOWS,	 /* window.c: when recording was on            */
	LOCK_NAMES,	 /* threads.c: thread names the program gave   */
	LOCK_CATEGORIES, /* cat.c: registering categories              */
	LOCK_DOMAINS,	 /* preload/api.c: the domains                 */
	LOCK_STRTAB,	 /* strtab.c: interning                        */
	LOCK_RANKS,
};

struct coll_lock {
	pthread_mutex_t m;
	int rank; /* enum coll_lock_rank */
};

#define COLL_LOCK_INIT(r)                                                      \
	{                                                                      \
		PTHREAD_MUTEX_INITIALIZER, (r)                                 \
	}

/* Takes l, checking the lock order in MXPROF_LOCK_CHECK builds. Not HOT,
 * not for signal handlers. */
void coll_lock(struct coll_lock *l);

/* Takes l when it is free: returns 1, or 0 without waiting. */
int coll_trylock(struct coll_lock *l);

/* Releases l. */
void coll_unlock(struct coll_lock *l);

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

/* ---- life cycle --------------------------------------------------------- */

/* The collector's settings, filled from MXPROF_* and set_config. */
struct coll_config {
	char output[4096];	   /* resolved trace path             */
	unsigned ring_records;	   /* records per thread ring         */
	unsigned ring_records_max; /* a full ring grows up to this   */
	int overflow;		   /* enum coll_overflow              */
	unsigned drain_period_ms;  /* journal flush period            */
	double dump_period_s;	   /* continuous dump period, 0 = off */
	uint64_t max_trace_bytes;  /* timeline cap, 0 = none          */
	int rank;		   /* -1 when unknown                 */
	int world_size;		   /* 0 when unknown                  */
	int has_local_rank;	   /* local_rank is known             */
	int local_rank;
	int dump_signal;       /* for the status file, 0 = none */
	int dump_signal_taken; /* the program's own handler has it */
	/* Non-zero: an earlier image of this process (before exec) began
	 * the journal of output; append to it, and start the tables from
	 * its records. */
	int continue_journal;
	/* Called on the drain thread once per drain period, with
	 * CLOCK_MONOTONIC ns, no collector lock held (the capture window
	 * lives there). */
	void (*tick)(uint64_t now_ns);
};

/*
 * Chooses the clock and prepares the rings. Call once from the library
 * constructor, before any record. Returns 0 or a negative errno.
 */
int coll_init(void);

/*
 * Starts the collector with cfg: starts the drain thread (the journal is
 * created on the first pass with records). Returns 0 or a negative errno;
 * without a drain thread the collector still aggregates at each request
 * and at exit, with one line on stderr.
 */
int coll_start(const struct coll_config *cfg);

/*
 * Changes the trace path (and the tables' beside it) of the next dump, as
 * MXNet's set_config(filename=...) does. The journal stays where it is;
 * files already written stay too. Returns 0, or 1 when the journal
 * already exists (recording had begun). This function can't fail.
 */
int coll_set_output(const char *output);

/* Sets the continuous-dump period in seconds (0 = off). */
void coll_set_dump_period(double seconds);

/*
 * Writes the trace and tables now (on the drain thread) and returns when
 * both are on disk, including everything recorded before the call.
 * Returns 0, -ESRCH when the collector is not running, or a negative errno
 * from the writes (with one line on stderr). Not for signal handlers.
 */
int coll_dump(void);

/*
 * Wakes the drain thread to dump. Async-signal-safe: it sets a flag and
 * wakes a futex. Returns nothing; nothing here can fail.
 */
void coll_dump_async(void);

/*
 * The dump signal, taken on the drain thread only (0 = none). The library
 * blocks it in the program's threads and sets it here; the drain thread
 * unblocks it for itself, and blocks it again once it is 0 (the program
 * took the signal over). Atomic.
 */
extern int coll_dump_signal;

/*
 * The final dump for a signal that ends the process, from its handler:
 * asks the drain thread for the final trace and tables and waits for them
 * at most ms milliseconds. Async-signal-safe (atomics, futex, clock).
 * Several callers share one dump. Returns 0 once written, -ETIMEDOUT when
 * the wait ran out, -ESRCH when there is nothing to write or no drain
 * thread, -EDEADLK on the drain thread itself.
 */
int coll_finish_signal(int ms);

/* Drains every ring and source now and waits for it. Returns 0, or -ESRCH
 * when the collector is not running. */
int coll_flush(void);

/*
 * At exit: writes the trace and tables when dump is non-zero (with dump
 * COLL_FINISH_IF_RECORDED, only when this process recorded something or
 * continues an earlier image's journal), stops the drain thread, and
 * removes the journal and the status file. Idempotent.
 */
#define COLL_FINISH_IF_RECORDED 2
void coll_finish(int dump);

/*
 * For _exit(): coll_finish(dump), with the work done by the drain thread
 * while the caller waits at most wait_ms. The caller takes no lock and
 * allocates nothing, so a signal handler that calls _exit cannot deadlock
 * on a lock the thread it interrupted holds; after wait_ms it gives up
 * with one line (the journal keeps what was drained). Without a drain
 * thread the caller calls coll_finish(dump) itself. Returns 0, -ETIMEDOUT
 * or -ESRCH (not live in this process).
 */
int coll_finish_quick(int dump, unsigned wait_ms);

/*
 * Stops the drain thread for a moment, for a change of the process's
 * credentials (the C library runs it on every thread, and aborts when one
 * of them fails: a thread must not keep capabilities the caller changed on
 * itself). The requests that come meanwhile are served by their callers.
 * Returns 1 when the thread was stopped: call coll_drain_resume() after
 * the change, from the same thread, which starts it again with that
 * thread's credentials; 0 when there was none. Not from a signal handler.
 */
int coll_drain_pause(void);
void coll_drain_resume(void);

/*
 * Returns non-zero when the collector is running and belongs to the
 * calling process: not before start or after the end, and not in a child
 * that shares the parent's memory (vfork), whose files are the parent's.
 * Not HOT.
 */
int coll_live_here(void);

/*
 * Before exec: drains everything recorded into the journal and writes it
 * out, keeping it for the next image of this process. Returns 1 with the
 * trace path in trace when there is a journal to continue, 0 when nothing
 * was recorded, -ESRCH when the collector is not live here. Recording goes
 * on (the exec may fail). Not for signal handlers.
 */
int coll_exec_prepare(char *trace, size_t len);

/*
 * In a new image after exec, before coll_start(): takes the trace origin
 * from the journal of trace that the earlier image left, so that both
 * images share one timeline. Returns 0 or a negative errno (the journal
 * is missing or not this process's: start afresh).
 */
int coll_continue_origin(const char *trace);

/*
 * fork() support, for pthread_atfork handlers: prepare blocks every signal
 * and takes every lock of the written order: each source's (by its
 * fork_rank) and the collector's own. Parent releases them. Child resets
 * the collector to a fresh one writing to output (the parent's records
 * stay the parent's), releases them and restarts the drain thread.
 */
void coll_fork_prepare(void);
void coll_fork_parent(void);
void coll_fork_child(const char *output);

/*
 * Returns the tables as a malloc'ed string (see mxprof_dumps), at most
 * top rows per section (0: all), after draining. Returns NULL with errno
 * set on a bad argument or ENOMEM.
 */
char *coll_dumps(int reset, const char *format, const char *sort_by,
		 int ascending, unsigned top);

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
};

/* The "sf" of an event whose stack is stack id (stacks.c): its frame node
 * in the trace's stackFrames, 0 when it has none. */
uint32_t coll_trace_sf(const struct coll_trace *t, uint32_t id);

/* Starts the next element of traceEvents; returns where to write it. */
struct out *coll_trace_event(struct coll_trace *t);

/* Writes CLOCK_MONOTONIC time mono_ns as a trace "ts" value. */
void coll_trace_ts(struct coll_trace *t, uint64_t mono_ns);

/* A growing string for the tables (table.c). On allocation failure err is
 * set and later appends do nothing. */
struct sbuf {
	char *p;
	size_t n, cap;
	int err;
};
void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Table cells in MXNet's layout: the header lines of a section (Name and
 * Total Count, then cols), and a row's name cell. */
void table_header(struct sbuf *b, const char *const *cols, int ncols);
void table_row_name(struct sbuf *b, const char *name);

/* The value rows are sorted by for sort key (enum table_sort). */
double table_sort_value(int key, uint64_t count, int64_t total, int64_t min,
			int64_t max);

struct table_opts;
struct agg;

/* ---- metadata (meta.c) --------------------------------------------------- */

/* The longest key and value, with their terminators. */
#define META_KEY_MAX   256
#define META_VALUE_MAX 4096

/*
 * Adds key with value to the metadata written at the top level of the
 * trace and at the head of the tables from the next dump on; a key added
 * again takes the new value. Takes LOCK_OWNER. Returns 0, -EINVAL for an
 * empty or too long key or value or a key the trace's top level uses
 * (schemaVersion, traceEvents, mxprof, ...), -ENOSPC past 64 keys, or
 * -ENOMEM.
 */
int meta_set(const char *key, const char *value);

/* Writes every pair as "key":"value", each followed by a comma. Owner
 * held. */
void meta_write_trace(struct out *o);

/* Returns the pairs as key, value, ..., NULL (for table_opts.meta), valid
 * while the owner lock is held; NULL when there are none. */
const char **meta_pairs(void);

/* ---- sources ------------------------------------------------------------ */

/*
 * An event source that keeps state of its own beside the rings (the GPU
 * source) or needs the collector's life cycle (the hook engine's fork
 * handlers). Every member may be NULL. Unless said otherwise, a callback
 * runs on the drain thread with LOCK_OWNER held (or on a requester's
 * thread when there is no drain thread, still under LOCK_OWNER).
 */
struct coll_source {
	const char *name;
	/* Once per drain period, and before every dump and dumps(): hand
	 * over whatever the source buffers (flush then delivers it all).
	 * No collector lock held: the source may call into libraries whose
	 * callbacks come back to it. */
	void (*tick)(uint64_t now_ns);
	void (*flush)(void);
	/* Every pass: take in what was handed over; samples for the tables
	 * go to a; coll_thread_seen() names the threads of its events. */
	void (*drain)(struct agg *a);
	/* Extra sections for the tables, after the host sections. */
	void (*tables)(struct sbuf *b, const struct table_opts *o);
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

/* ---- aggregation and tables (also used by the mxprof command) --------- */

struct agg;

/* One sample for the aggregates. value: duration in ns for spans and
 * frames, the new value for counters, ignored for instants. */
struct agg_sample {
	uint32_t group;	  /* string id of the section */
	uint32_t name;	  /* string id of the row     */
	uint16_t kind;	  /* enum coll_kind           */
	uint8_t flags;	  /* COLL_FLAG_* / scope      */
	uint8_t has_self; /* self is set (else self time = value) */
	int64_t value;
	int64_t self; /* a span's time outside slices nested inside it */
};

/* Returns a new, empty aggregate set, or NULL (ENOMEM). */
struct agg *agg_create(void);

/* Frees a. Accepts NULL. */
void agg_destroy(struct agg *a);

/* Forgets every row. This function can't fail. */
void agg_reset(struct agg *a);

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

/* nest.c: self time. A thread's slices, given in the order they ended,
 * each get their time minus that of the slices directly inside them:
 * nest_self() returns that of slice [t0, t0 + dur) (ns) of thread (any key
 * naming one thread), the tables' Self Time. nest_create() returns NULL
 * without memory; nest_destroy() accepts NULL. */
struct nest;
struct nest *nest_create(void);
void nest_reset(struct nest *ns);
void nest_destroy(struct nest *ns);
int64_t nest_self(struct nest *ns, uint64_t thread, uint64_t t0, uint64_t dur);
/* nest_self() for the spans and frames of n drained records of one thread
 * (t1 their duration), in the order they ended: self[i] is record i's self
 * time, 0 for records of other kinds. */
void nest_selves(struct nest *ns, uint64_t thread, const struct coll_rec *rec,
		 size_t n, int64_t *self);

/* Returns x + y, or INT64_MAX or INT64_MIN when the sum is out of range.
 * This function can't fail; it is safe anywhere. */
int64_t agg_sat_add(int64_t x, int64_t y);

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
	/* Sections of the event sources, put after the host sections of
	 * the text format (before its last line); NULL for none. */
	void (*extra)(struct sbuf *b, const struct table_opts *o);
	/* Metadata (meta.c) as key, value, ..., NULL: a "Metadata" section
	 * at the head of the text format; NULL for none. */
	const char *const *meta;
};

/* Parses "table"/"json"/"csv" and "total"/"avg"/"min"/"max"/"count"/"self" into
 * o->format and o->sort (NULL keeps the default). Returns 0 or -EINVAL. */
int table_parse_opts(struct table_opts *o, const char *format,
		     const char *sort_by);

/* Returns the tables of a as a malloc'ed string in the layout of MXNet's
 * dumps(), or NULL (ENOMEM). */
char *table_format(const struct agg *a, const struct table_opts *o);

/* ---- recovery (used by the mxprof command) ---------------------------- */

/*
 * A process that dies without its final dump leaves only its journal,
 * <trace>.journal. recover.c rebuilds the trace and the tables from it with
 * the writers a dump uses. Nothing in a profiled program calls these.
 */
struct recovery {
	int pid;	     /* the process that wrote the journal         */
	uint64_t records;    /* complete records, the events recovered     */
	uint64_t threads;    /* threads with records                       */
	uint64_t torn_bytes; /* a torn last entry and what follows, skipped */
	uint64_t dropped;    /* records dropped, as of the last dump       */
	int capped;	     /* the timeline reached MXPROF_MAX_TRACE_MB   */
	char why[160];	     /* after an error: what is wrong with the file */
	/* Set by the caller: the names of categories 2 and up for a journal
	 * of version 1, which does not carry them (NULL-terminated). */
	const char *const *legacy_cats;
	/* Owned by recover.c. */
	struct agg *agg;
	int64_t base_utc_ns;
	char process_name[64];
	char journal[4096];
};

/*
 * Reads and checks the journal at path, and aggregates its records, into
 * r. Returns 0, or a negative errno with r->why set when the file is at
 * fault: -EINVAL not a regular file, not a journal, or cut inside its
 * header; -ENODATA empty, or no complete record; -EBADMSG a damaged entry.
 * Any other negative errno (r->why empty) means the file could not be read.
 * Call recover_close() in every case.
 */
int recover_open(struct recovery *r, const char *path);

/* Writes the trace of the journal r checked to path (gzip when it ends in
 * ".gz"), replacing it atomically. Returns 0 or a negative errno. */
int recover_write_trace(struct recovery *r, const char *path);

/* Writes r's tables to path as a dump writes X.stats.txt, replacing it
 * atomically. Returns 0 or a negative errno. */
int recover_write_tables(struct recovery *r, const char *path);

/* Frees what recover_open() allocated. This function can't fail. */
void recover_close(struct recovery *r);

/* ---- output files (out.c, out_pipe.c; also used by the mxprof command) - */

/*
 * A file being written: buffered, gzip-compressed when asked, and replaced
 * atomically. It is written to "<path>.tmp.<pid>" (paths_temp()) beside path
 * and renamed over path by out_commit() only when whole, so a reader never sees
 * half a file and a failed write leaves the previous file in place. Write
 * errors are kept, not returned, and come back from out_commit(). The
 * buffer is written (or compressed) whole, with one write(), when the next
 * bytes do not fit, or handed to other threads that write it while the
 * caller goes on in another (out_pipe_allow()). About 1.6 MiB: allocate it, do
 * not put it on a stack (the pages of what a plain file does not use are never
 * touched). Not for the hot path.
 */
#define OUT_BUF_BYTES (1u << 20)
struct out_pipe;
struct out {
	int fd;
	int gz;
	int err; /* first error, negative errno */
	struct isal_zstream zs;
	unsigned char *buf; /* OUT_BUF_BYTES: mem, or a chunk of pipe */
	size_t n;
	uint64_t flushed;      /* bytes taken from buf before compression */
	struct out_pipe *pipe; /* other threads write (out_pipe.c) */
	char path[4096];
	char tmp[4200];
	unsigned char mem[OUT_BUF_BYTES];
	unsigned char zbuf[1 << 18];
	unsigned char
		zlevel[ISAL_DEF_LVL1_DEFAULT]; /* the compressor's tables */
};

/*
 * Creates the file path exclusively (O_EXCL) and never through a symbolic
 * link (O_NOFOLLOW), with the given mode: whatever stands at that name is
 * removed first. Every file mxprof creates is created this way. Returns
 * the descriptor (close-on-exec) or a negative errno.
 */
int out_create(const char *path, int mode);

/*
 * Starts writing path: creates its temporary file (mode 0644, out_create). With
 * allow_gz non-zero, a path ending in ".gz" is gzip-compressed (level 1).
 * Returns 0, -ENAMETOOLONG (path or its temporary name too long), -ENOMEM
 * (zlib), or the errno of open() negated, with o->tmp naming the file that
 * could not be created. On error o needs no out_abort().
 */
int out_open(struct out *o, const char *path, int allow_gz);

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
 * Flushes and closes the file and renames it over path. Returns 0, or the
 * first error of any write since out_open() (or of the close or rename) as
 * a negative errno; the temporary file is then removed and the previous
 * file at path is untouched. o is finished either way.
 */
int out_commit(struct out *o);

/*
 * Lets the calling thread's outputs be written by other threads
 * (out_pipe.c) once they pass one buffer: up to 4 compressing a gzip file
 * (one fewer than the CPUs this process may use), one writing a plain
 * file, while the caller formats. Off by default: a thread that may write
 * from a signal handler, or in a program's thread, leaves it off; the
 * drain thread and the mxprof command turn it on. The file is the same
 * either way (a gzip file is one member). This function can't fail.
 */
void out_pipe_allow(int on);

/* Closes and removes the temporary file; path is untouched. This function
 * can't fail. */
void out_abort(struct out *o);

/*
 * Escapes s[0..n) for the body of a JSON string (no quotes) into
 * dst[0..cap), without a terminator; the one escaper of the library and the
 * mxprof command. '"' and '\' get a backslash, control characters (NUL
 * included) become \u00XX, valid UTF-8 is copied as it is, and each byte
 * that does not start a valid UTF-8 sequence (a stray continuation byte, a
 * byte that never starts one, an overlong form, a surrogate, past
 * U+10FFFF, a sequence cut by n) becomes \ufffd, so the output is valid
 * JSON in valid UTF-8 whatever s holds. It stops before the first
 * character whose escape does not fit in dst, so it never ends inside an
 * escape or a UTF-8 sequence. Returns the bytes written; *used, when used
 * is not NULL, gets the bytes of s consumed (n when all fit). A byte of s
 * takes at most 6 bytes of dst: cap >= 6 * n always takes all of s, and
 * cap >= 6 always takes at least one character. This function can't fail;
 * it allocates nothing and is safe anywhere.
 */
size_t out_json_escape(char *dst, size_t cap, const char *s, size_t n,
		       size_t *used);

/* Returns the length of the valid UTF-8 sequence at s[0..n) (1 for an
 * ASCII byte), or 0 when s does not start with one (n is 0, a stray or
 * invalid byte, an overlong form, a surrogate, past U+10FFFF, or cut at
 * n). This function can't fail; it is safe anywhere. */
size_t out_utf8_len(const unsigned char *s, size_t n);

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

/* ---- file names (paths.c; also used by the mxprof command) ----------- */

/*
 * The library writes, and the mxprof command looks for, these names; both
 * take them from here. X is the trace's name without its ending: ".gz",
 * then ".json", each only when something other than '/' precedes it, with
 * their case ("t.json", "t.json.gz" and "t.gz" give "t"; "t", "t.JSON" and
 * "a.b/t" are their own X). Each function writes into buf and returns 0,
 * or -ENAMETOOLONG when the name does not fit in len bytes (buf is then
 * ""). None allocates or takes a lock: safe after fork, not in a signal
 * handler (snprintf).
 */

/* Returns the length of X in the trace path trace: trace[0..X) is the
 * name, the rest its ending ("", ".gz", ".json" or ".json.gz"). This
 * function can't fail. */
size_t paths_stem_len(const char *trace);

/* Writes the tables path of the trace path trace: "X.stats.txt". */
int paths_stats(const char *trace, char *buf, size_t len);

/* Writes the journal path of the trace path trace: the whole name with
 * ".journal" added ("t.json.gz.journal"). */
int paths_journal(const char *trace, char *buf, size_t len);

/* Writes the trace path whose journal is journal: journal without its
 * ".journal" ending. Returns -EINVAL (buf "") when journal does not end in
 * ".journal" after at least one byte. */
int paths_journal_trace(const char *journal, char *buf, size_t len);

/* Writes the trace path of a descendant: "X.<tag>" with the trace's ending
 * after it ("t.json.gz" and tag "123" give "t.123.json.gz"; "t" gives
 * "t.123"). The library's tag is the pid; a glob such as "[0-9]*" finds
 * them all. */
int paths_child(const char *trace, const char *tag, char *buf, size_t len);

/*
 * While a process records, its status file, /tmp/mxprof-<uid>/<pid>.status
 * (or $XDG_RUNTIME_DIR/mxprof/<pid>.status when that is set), holds
 * "key=value" lines: output=<abs trace path>, stats=<abs tables path>,
 * signal=<dump signal number, 0 if none>, dumps=<completed dumps>. It is
 * rewritten atomically after every dump and removed at exit. `mxprof dump
 * PID` waits for dumps to grow. Writes the path of pid's status file.
 */
int paths_status(int pid, char *buf, size_t len);

/* Writes the temporary name of path for process pid, in the same folder:
 * "<path>.tmp.<pid>", or, when that name would pass NAME_MAX (a legal
 * name of 250 bytes), ".mxprof-<hash of the name>.tmp.<pid>". */
int paths_temp(const char *path, int pid, char *buf, size_t len);

/* Writes the folder that holds the status files of this user (the folder
 * of paths_status()). */
int paths_status_dir(char *buf, size_t len);

/*
 * Is dir a folder that only the user uid controls: a folder, not a
 * symbolic link, owned by uid, writable by no group and no other user?
 * Returns 0; else a negative errno with *why saying what is wrong in a
 * few words. The status folder is used only when it passes, by the
 * library (which creates it, mode 0700) and by `mxprof dump` (which then
 * trusts the status file it reads there).
 */
int paths_private_dir(const char *dir, unsigned uid, const char **why);

#endif /* MXPROF_COLLECTOR_H */
