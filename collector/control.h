/*
 * control.h - the drain's face: the collector's life cycle (start, the
 * output's name, dumps, flushes, the ends, exec and fork), which the
 * library's entry points (preload/) call. The drain thread serves each
 * call: drain.c (start, dump, flush, dumps(), the end), endings.c
 * (_exit, a fatal signal, exec), fork.c (fork's handlers).
 */
#ifndef MXPROF_CONTROL_H
#define MXPROF_CONTROL_H

#include <stddef.h>
#include <stdint.h>

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
	/* Flight mode (flight.c): keep only the newest window of the
	 * timeline in memory; write it when a trigger fires or the program
	 * ends. flight_mode is enum coll_flight; flight_n the window's
	 * seconds or steps; flight_bytes the memory it may take. */
	int flight_mode;
	uint64_t flight_n;
	uint64_t flight_bytes;
	double trigger_slow;	 /* slow:<F>x, 0 = off */
	uint64_t trigger_hang_s; /* hang:<N>s, 0 = off */
	unsigned flight_max_dumps;
	/* Non-zero: the dump signal reached an earlier image of this
	 * process that had recorded nothing (a shell wrapper that then
	 * exec'ed this program); the dump it asked for is written at this
	 * image's first pass with records. */
	int dump_owed;
};

/* The window of flight mode (MXPROF_FLIGHT). */
enum coll_flight {
	COLL_FLIGHT_OFF = 0,
	COLL_FLIGHT_SECONDS = 1, /* "<N>s"     */
	COLL_FLIGHT_STEPS = 2,	 /* "<N>steps" */
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
 * coll_dump(), the trace and tables holding only the steps of list steps
 * (NULL: all), picked from the journal as `mxprof report --steps` picks
 * them from a trace (step_pick.c). Returns also -EINVAL for a list that
 * is not coll_steps_parse_list()'s and -ENODATA when none of its steps
 * was recorded, both with nothing written.
 */
int coll_dump_steps(const char *steps);

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

/*
 * Sets the function that flight mode's triggers (trigger.c) call with the
 * trigger's name ("dump", "slow", "hang") before they write the window:
 * on the drain thread (for mxprof_dump() without a drain thread, on the
 * caller's), with no collector lock held, so that it may add to the
 * trace (every thread's stack for a hang): what it pushes or hands a
 * source before it returns is drained into the window, which ends after
 * it for dump and hang (a slow step's window ends with that step). It is
 * not called once MXPROF_FLIGHT_MAX_DUMPS files were written. NULL, the
 * default, calls nothing. This function can't fail.
 */
void coll_set_trigger_hook(void (*fn)(const char *trigger));

/*
 * From inside that function: writes the trace path the trigger is about
 * to write ("<base>.hang.1.json"; its tables are paths_stats() of it)
 * into buf. Returns 0, -ESRCH outside the function, or -ENAMETOOLONG.
 */
int coll_trigger_file(char *buf, size_t len);

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
 * trace path in trace when there is a journal to continue (2 when, in
 * addition, a dump signal came while this image had recorded nothing:
 * the next image owes that dump, coll_config's dump_owed), 0 when nothing
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

/* coll_dumps() of the steps of list steps only (NULL: all), as
 * coll_dump_steps() picks them: the journal's sections, no GPU ones.
 * errno EINVAL also for a bad list, ENODATA when none of its steps was
 * recorded. */
char *coll_dumps_steps(int reset, const char *format, const char *sort_by,
		       int ascending, unsigned top, const char *steps);

/* ---- steps and step windows (steps.c) ---------------------------------- */

/* A step window (MXPROF_STEPS): which steps the trace and tables keep. */
enum coll_steps_mode {
	COLL_STEPS_ALL = 0,	 /* every step (no window)               */
	COLL_STEPS_SCHEDULE = 1, /* wait:warmup:active[:repeat]          */
	COLL_STEPS_LIST = 2,	 /* list:5,10-12                         */
};

#define COLL_STEPS_RANGES 64

struct coll_steps {
	int mode;			       /* enum coll_steps_mode */
	uint64_t wait, warmup, active, repeat; /* repeat 0: forever */
	unsigned nranges;
	struct {
		uint64_t lo, hi; /* inclusive */
	} ranges[COLL_STEPS_RANGES];
};

/*
 * Parses a step window: "wait:warmup:active[:repeat]" (active >= 1; a
 * missing repeat is 1, 0 repeats forever) or "list:" followed by
 * coll_steps_parse_list()'s syntax. Returns 0, or -EINVAL (w is then
 * the window of every step). This function can't fail otherwise.
 */
int coll_steps_parse(const char *s, struct coll_steps *w);

/*
 * Parses a list of step numbers and ranges, "5,10-12", into w as a
 * COLL_STEPS_LIST window (at most COLL_STEPS_RANGES items). Returns 0 or
 * -EINVAL (w is then the window of every step).
 */
int coll_steps_parse_list(const char *s, struct coll_steps *w);

/* Returns non-zero when window w keeps step n. This function can't
 * fail. */
int coll_steps_keeps(const struct coll_steps *w, uint64_t n);

/*
 * Sets what marks a step's end (glob, fnmatch syntax, NULL for the
 * default "Optimizer.step#*") and the window (NULL: every step). Call it
 * once at start-up, before any hook is placed or record is pushed.
 */
void coll_steps_config(const char *glob, const struct coll_steps *w);

/* Returns how many steps ended in this process so far (any thread).
 * Lock-free. */
uint64_t coll_steps_count(void);

/* Returns the step glob in use. Lock-free. */
const char *coll_steps_glob(void);

#endif /* MXPROF_CONTROL_H */
