/*
 * collector.h - the collector's interface: records, per-thread buffers, the
 * string table, the clock, the drain thread, aggregation and the writers.
 *
 * Nothing in collector/ knows about CUDA or hooking. Event sources (the
 * public API, hook trampolines, NVTX, CUPTI) fill a struct coll_rec and call
 * ring_push(); the drain thread moves records from the per-thread rings into
 * the journal (a binary file beside the trace, the crash-safe record of the
 * run) and into the aggregates. A dump turns the journal into the Chrome
 * trace and the aggregates into tables. After a crash, recovery (recover.c,
 * for the mxprof command) turns a journal left behind into both.
 *
 *   source --ring_push--> ring (per thread, SPSC, bounded)
 *          --drain thread--> journal (binary, append-only) --> Chrome trace
 *                        \-> aggregates ------------------------> tables
 *
 * Hot-path functions are marked HOT: no lock, no allocation, no system call,
 * nothing that can re-enter a hook.
 */
#ifndef MXPROF_COLLECTOR_H
#define MXPROF_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "ticks.h"

/* ---- records ---------------------------------------------------------- */

/* What a record describes. */
enum coll_kind {
	COLL_SPAN = 1,	  /* t0..t1 on the recording thread (ticks)        */
	COLL_INSTANT = 2, /* t0; flags hold the COLL_SCOPE_*               */
	COLL_COUNTER = 3, /* t0; t1 holds the new value (int64_t)           */
	COLL_FRAME = 4,	  /* a span numbered in arg                         */
};

/* The trace category (Chrome "cat") of a record. */
enum coll_cat {
	COLL_CAT_USER = 0, /* user_annotation: public API and NVTX    */
	COLL_CAT_CAPI,	   /* c_api: hooked C API calls              */
	COLL_CAT_CUDA_RUNTIME,
	COLL_CAT_CUDA_DRIVER,
	COLL_CAT_CUDA_SYNC,
	COLL_CAT_COUNT,
};

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
 * coll_recording is non-zero while records should be taken (state "run" and
 * not paused, inside the capture window). Sources test it first, with
 * coll_active(), so that a stopped profiler costs one load and a branch.
 */
extern volatile int coll_recording;

/* HOT. Returns non-zero when a source should record now. */
static inline int coll_active(void)
{
	return __builtin_expect(coll_recording, 0);
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

/* ---- per-thread rings ------------------------------------------------- */

enum coll_overflow { COLL_OVERFLOW_DROP = 0, COLL_OVERFLOW_BLOCK = 1 };

/*
 * HOT. Appends r to the calling thread's ring. Returns 0, or -ENOSPC when
 * the ring was full and the record was dropped (and counted). The first
 * call on a thread maps that thread's ring. Safe in a signal handler.
 */
int ring_push(const struct coll_rec *r);

/* Returns the number of records dropped so far. Lock-free. */
uint64_t ring_dropped(void);

/*
 * Suppresses recording on the calling thread while non-zero (used by
 * mxprof's own threads and re-entrant paths). Returns the previous value.
 */
int ring_set_quiet(int quiet);

/* ---- life cycle ------------------------------------------------------- */

/* The collector's settings, filled from MXPROF_* and set_config. */
struct coll_config {
	char output[4096];	  /* resolved trace path             */
	unsigned ring_records;	  /* records per thread ring         */
	int overflow;		  /* enum coll_overflow              */
	unsigned drain_period_ms; /* journal flush period            */
	double dump_period_s;	  /* continuous dump period, 0 = off */
	uint64_t max_trace_bytes; /* timeline cap, 0 = none          */
	int rank;		  /* -1 when unknown                 */
	int dump_signal;	  /* for the status file, 0 = none */
	/* Called on the drain thread after every pass, with CLOCK_MONOTONIC
	 * ns, drain lock not held (the capture window lives there). */
	void (*tick)(uint64_t now_ns);
};

/*
 * Chooses the clock and prepares the rings. Call once from the library
 * constructor, before any record. Returns 0 or a negative errno.
 */
int coll_init(void);

/*
 * Starts the collector with cfg: opens the journal and starts the drain
 * thread. Returns 0 or a negative errno; on error the collector still
 * aggregates in memory and dumps tables, with one line on stderr.
 */
int coll_start(const struct coll_config *cfg);

/*
 * Changes the trace path before anything was written. Returns 0, or -EBUSY
 * once the journal exists.
 */
int coll_set_output(const char *output);

/* Sets the continuous-dump period in seconds (0 = off). */
void coll_set_dump_period(double seconds);

/*
 * Writes the trace and tables now, on the calling thread, and returns when
 * both are on disk. Returns 0, -ESRCH when the collector is not running, or
 * a negative errno from the writes (with one line on stderr).
 */
int coll_dump(void);

/*
 * Wakes the drain thread to dump. Async-signal-safe: it only writes to an
 * eventfd. Returns nothing; a failed wake is counted, never reported here.
 */
void coll_dump_async(void);

/* Drains every ring now and waits for it. Returns 0 or a negative errno. */
int coll_flush(void);

/*
 * At exit: stops the drain thread, drains everything, writes the trace and
 * tables when dump is non-zero, and removes the journal and the status
 * file. Idempotent.
 */
void coll_finish(int dump);

/* Child side of fork(): reset to a fresh collector writing to output. */
void coll_after_fork_child(const char *output);

/* Locks held across fork() so the child sees consistent tables. */
void coll_before_fork(void);
void coll_after_fork_parent(void);

/*
 * Returns the tables as a malloc'ed string (see mxprof_dumps), after
 * draining. Returns NULL with errno set on a bad argument or ENOMEM.
 */
char *coll_dumps(int reset, const char *format, const char *sort_by,
		 int ascending);

/* ---- aggregation and tables (also used by the mxprof command) --------- */

struct agg;

/* One sample for the aggregates. value: duration in ns for spans and
 * frames, the new value for counters, ignored for instants. */
struct agg_sample {
	uint32_t group; /* string id of the section */
	uint32_t name;	/* string id of the row     */
	uint16_t kind;	/* enum coll_kind           */
	uint8_t flags;	/* COLL_FLAG_* / scope      */
	int64_t value;
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
};

struct table_opts {
	int format;	      /* enum table_format                     */
	int sort;	      /* enum table_sort                       */
	int ascending;	      /* non-zero: ascending                   */
	unsigned top;	      /* rows per section, 0 = all             */
	const char *category; /* only this section, NULL = all         */
	uint64_t dropped;     /* records dropped, stated in the output */
};

/* Parses "table"/"json"/"csv" and "total"/"avg"/"min"/"max"/"count" into
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

/* ---- output files (out.c; also used by the mxprof command) ------------ */

/*
 * A file being written: buffered, gzip-compressed when asked, and replaced
 * atomically. It is written to "<path>.tmp.<pid>" beside path and renamed
 * over path by out_commit() only when whole, so a reader never sees half a
 * file and a failed write leaves the previous file in place. Write errors
 * are kept, not returned, and come back from out_commit(). About 130 KiB:
 * allocate it, do not put it on a small stack. Not for the hot path.
 */
struct out {
	int fd;
	int gz;
	int err; /* first error, negative errno */
	z_stream zs;
	size_t n;
	char path[4096];
	char tmp[4200];
	unsigned char buf[1 << 16];
	unsigned char zbuf[1 << 16];
};

/*
 * Starts writing path: creates its temporary file (mode 0644). With
 * allow_gz non-zero, a path ending in ".gz" is gzip-compressed (level 6).
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

/* ---- GPU activity ------------------------------------------------------- */

/*
 * GPU activity comes from an event source outside collector/ (cupti/) in
 * mxprof's own form, so that nothing here knows any CUDA type. The source
 * converts each activity record into a struct coll_gpu_rec and hands
 * batches to coll_gpu_push() from whatever thread delivers them (not the
 * program's hot path). The collector keeps them in memory, links them to
 * host records when it writes a dump (see gpu.c) and renders the GPU
 * tables. Times are CLOCK_MONOTONIC nanoseconds, the clock host ticks are
 * converted to.
 */
enum coll_gpu_kind {
	COLL_GPU_KERNEL = 1,
	COLL_GPU_MEMCPY,
	COLL_GPU_MEMSET,
	COLL_GPU_RUNTIME, /* a runtime API call on a host thread    */
	COLL_GPU_DRIVER,  /* a driver API call on a host thread     */
	COLL_GPU_SYNC,	  /* a synchronisation, by correlation      */
	COLL_GPU_MEMORY,  /* an allocation (bytes) or a free        */
	COLL_GPU_OVERHEAD,
};

/* Flag bits of a coll_gpu_rec. */
#define COLL_GPU_FREE 0x1u /* COLL_GPU_MEMORY: a release, not an allocation */

struct coll_gpu_rec {
	uint64_t start; /* CLOCK_MONOTONIC ns                       */
	uint64_t end;	/* == start for COLL_GPU_MEMORY            */
	uint64_t bytes; /* memcpy, memset, memory                  */
	uint32_t name;	/* string id: kernel, API or copy kind    */
	uint32_t correlation;
	uint32_t device;
	uint32_t stream;
	uint32_t tid;  /* host thread of API records (gettid)      */
	uint16_t kind; /* enum coll_gpu_kind                     */
	uint16_t flags;
	int32_t grid[3];
	int32_t block[3];
	uint32_t regs;	/* registers per thread                   */
	uint32_t shmem; /* static + dynamic shared memory, bytes  */
	/* Owned by the collector: filled while a dump links records. */
	uint32_t ext;	   /* external id of the enclosing host range */
	uint32_t absorbed; /* a hook's slice shows this API call      */
};

/* Properties of one device, for the trace's deviceProperties. */
struct coll_gpu_device {
	int id;
	char name[128];
	int cc_major, cc_minor;
	uint64_t total_mem;
	int num_sms;
	int max_threads_per_block;
	int max_shared_per_block;
	int warp_size;
	int regs_per_block;
};

/*
 * Appends n records. Takes the GPU store's lock; not for the hot path.
 * Returns 0, or -ENOSPC when the store is full (the records beyond it are
 * dropped and counted).
 */
/*
 * HOT, async-signal-safe, any thread. Now, in CLOCK_MONOTONIC nanoseconds
 * on the mapping that converts ticks (clock.c): the clock for sources that
 * stamp nanoseconds themselves, such as CUPTI's timestamp callback, so
 * that their slices nest with those recorded in ticks.
 */
uint64_t clock_now_ns(void);

/*
 * Notes that recording started (on != 0) or stopped now. GPU work that
 * started while not recording is left out when it arrives (memory events
 * excepted). Until the first call, all GPU work is kept. Takes a lock; not
 * for the hot path.
 */
void coll_note_recording(int on);

int coll_gpu_push(const struct coll_gpu_rec *r, size_t n);

/* Counts n records the source itself lost. This function can't fail. */
void coll_gpu_note_dropped(uint64_t n);

/* Records the properties of device d->id (kept once per id). */
void coll_gpu_set_device(const struct coll_gpu_device *d);

/*
 * A GPU event source. tick runs on the drain thread after every pass,
 * without the drain lock; flush runs before every dump, with the drain lock
 * held, and must deliver everything pending through coll_gpu_push() (which
 * does not take the drain lock). Either may be NULL.
 */
struct coll_gpu_source {
	void (*tick)(uint64_t now_ns);
	void (*flush)(void);
};

/* Installs the GPU source (one per process; NULL removes it). */
void coll_gpu_set_source(const struct coll_gpu_source *src);

/* Names device in the trace (NVTX naming). Takes a lock; not HOT. */
void coll_gpu_name_device(int device, const char *name);

/*
 * Names thread tid in the trace, over its OS name (NVTX naming of OS
 * threads). Takes the drain lock: not for the hot path.
 */
void coll_thread_name(int tid, const char *name);

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

#endif /* MXPROF_COLLECTOR_H */
