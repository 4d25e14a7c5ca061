/*
 * mxprof.h - the public C API of mxprof.
 *
 * It mirrors MXNet's profiler model (mxnet.profiler): a global state that is
 * run, paused or stopped; domains that group tasks, frames, counters and
 * markers; free-standing events; and dumps of the timeline and of aggregate
 * tables.
 *
 * A program can link against libmxprof.so, or look these symbols up with
 * dlsym(RTLD_DEFAULT, ...) when the library was injected with LD_PRELOAD.
 *
 * Conventions:
 *  - Functions that can fail return 0 on success or a negative errno value.
 *  - Object constructors return NULL on failure (errno is set).
 *  - Every function is thread-safe. Start/stop, counter and marker calls are
 *    the hot path: they take no lock, allocate nothing and make no system
 *    call (except the first record of a new thread, which maps its buffer).
 *  - A task, frame or event may be started from several threads at once and
 *    recursively: each start and its stop on the same thread make one
 *    slice, nested per thread; a stop ends the calling thread's latest
 *    pass of that object.
 *  - Handles stay valid until destroyed; destroying a NULL handle is a no-op.
 *    Domains are never destroyed, as in MXNet.
 *  - Names are copied; the caller keeps ownership of its strings.
 */
#ifndef MXPROF_H
#define MXPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MXPROF_API __attribute__((visibility("default")))
#else
#define MXPROF_API
#endif

#define MXPROF_VERSION "0.1.0"

typedef struct mxprof_domain mxprof_domain;
typedef struct mxprof_task mxprof_task;
typedef struct mxprof_frame mxprof_frame;
typedef struct mxprof_event mxprof_event;
typedef struct mxprof_counter mxprof_counter;
typedef struct mxprof_marker mxprof_marker;

/*
 * Sets one configuration key, as mxnet.profiler.set_config(key=value) does.
 * Keys:
 *  - "filename": the trace path of the next dump (same pattern rules as
 *    MXPROF_OUTPUT; the tables go beside it). After set_state("run") was
 *    first called it also prints one line naming the new files; files
 *    written before stay where they are. Before, it prints one line when
 *    MXPROF_OUTPUT is set to another name (mxprof run looks there).
 *  - "continuous_dump" (0/1), "dump_period" (seconds), "max_trace_mb"
 *    (MiB, 0 for no cap).
 *  - "profile_api" (0/1): times hooked C API calls (the api source of
 *    MXPROF_TRACE) or stops timing them, from now on. "profile_memory"
 *    (0/1): records device allocations and frees (the memory source:
 *    Device Storage and the GPU memory counters) or leaves out those made
 *    from now on; it can turn on only what MXPROF_TRACE turned on at
 *    start. "profile_all" (0/1) does both. "profile_imperative",
 *    "profile_symbolic", "aggregate_stats" (0/1) are accepted and change
 *    nothing: MXNet's engine operators are not told apart from other
 *    calls, and the tables are always kept.
 *  - "flight" ("<N>s", "<N>steps" or "off"), "trigger" (a list of
 *    "slow:<F>x" and "hang:<N>s", or "none"), "flight_mb" (MiB),
 *    "flight_max_dumps": flight mode, as MXPROF_FLIGHT, MXPROF_TRIGGER,
 *    MXPROF_FLIGHT_MB and MXPROF_FLIGHT_MAX_DUMPS; only before recording
 *    first starts, -EBUSY (with one line) after.
 *  - "profile_process" ("worker"; "server" is accepted),
 *    "gpu_memory_profile_filename_prefix" (ignored).
 * Returns 0, -EINVAL for an unknown key or a bad value (with one line
 * on stderr), or -EBUSY for a flight key once recording started.
 */
MXPROF_API int mxprof_set_config(const char *key, const char *value);

/*
 * Sets the profiler state: "run" starts recording (resuming if paused),
 * "stop" stops it. Returns 0 or -EINVAL for any other string.
 */
MXPROF_API int mxprof_set_state(const char *state);

/* Pauses recording without leaving the run state. Returns 0. */
MXPROF_API int mxprof_pause(void);

/* Resumes a paused profiler. Returns 0. */
MXPROF_API int mxprof_resume(void);

/*
 * Writes the trace file and the tables beside it now, with everything
 * recorded since the start, and waits until both are complete on disk.
 * When finished is non-zero the profiler then stops, and no dump happens
 * at exit unless mxprof_set_state("run") is called again: that records
 * again, and the exit (or the next dump) rewrites both files with
 * everything recorded since the start, before and after this dump.
 * Returns 0 or a negative errno from the file writes.
 */
MXPROF_API int mxprof_dump(int finished);

/*
 * Returns the aggregate tables as a string, in the layout of MXNet's
 * profiler.dumps(). format is "table", "json" or "csv" (one row per line:
 * section,kind,name,count,total,min,max,avg,self,percent,errors, as
 * `mxprof report --format csv` prints); sort_by is "total", "avg", "min",
 * "max", "count" or "self" (self time), or PyTorch's table() keys
 * "cpu_time_total", "cpu_time" and "self_cpu_time_total" (and their
 * "cuda_" and "device_" forms) for total, avg and self; ascending sorts the
 * rows ascending. NULL selects the default ("table", "total"). reset clears
 * every table afterwards, the GPU tables included, for the next call (the
 * trace and the .stats.txt still cover the whole run). The caller frees the
 * string with mxprof_free(). Returns NULL with errno EINVAL for a bad format or
 * sort key, or ENOMEM.
 */
MXPROF_API char *mxprof_dumps(int reset, const char *format,
			      const char *sort_by, int ascending);

/*
 * As mxprof_dumps(), with at most row_limit rows in each section (0: all),
 * as `mxprof report --top N` prints them; a time section's Total row
 * still covers every row (PyTorch's table(row_limit=N)).
 */
MXPROF_API char *mxprof_dumps_limit(int reset, const char *format,
				    const char *sort_by, int ascending,
				    unsigned row_limit);

/*
 * mxprof_dump(), the trace and the tables holding only the steps of
 * steps, picked from what was recorded as `mxprof report --steps` picks
 * them from a trace: steps is its list ("5,10-12": step numbers and
 * inclusive ranges, at most 64 items); each listed step's ProfilerStep#N
 * slice is kept, and every other event that began inside one of them (on
 * any thread). The trace's metadata "steps" names the steps found. The
 * tables hold the host's sections (the GPU sections are not among the
 * recorded records: `mxprof report --steps` on the trace gives them).
 * NULL steps is mxprof_dump(finished). Returns also -EINVAL for a list
 * of another form, -ENODATA when none of its steps was recorded and
 * -ENOTSUP in flight mode (MXPROF_FLIGHT: its window holds the last steps
 * only), with nothing written (one line on stderr for each).
 */
MXPROF_API int mxprof_dump_steps(int finished, const char *steps);

/*
 * mxprof_dumps_limit() of the steps of steps only, picked as
 * mxprof_dump_steps() picks them (the host's sections). reset still
 * clears every table afterwards. NULL steps is mxprof_dumps_limit().
 * Returns NULL with errno EINVAL also for a bad list, ENODATA when none
 * of its steps was recorded, ENOTSUP in flight mode (one line on stderr
 * for each).
 */
MXPROF_API char *mxprof_dumps_steps(int reset, const char *format,
				    const char *sort_by, int ascending,
				    unsigned row_limit, const char *steps);

/*
 * Adds key = value to the metadata of the trace and the tables, as
 * PyTorch's profiler add_metadata(key, value) does: from the next dump
 * on, the trace has "key":"value" at its top level and the text tables
 * start with a "Metadata" section of key-value lines (`mxprof report`
 * shows it too). A key added again takes the new value.
 * MXPROF_METADATA=k=v,... adds pairs at load. Returns 0, -EINVAL for a
 * NULL or empty key, a NULL value, a key of 256 bytes or more, a value of
 * 4096 bytes or more, or a key the trace's top level uses
 * (schemaVersion, displayTimeUnit, baseTimeNanoseconds,
 * deviceProperties, traceName, distributedInfo, traceEvents, mxprof,
 * stackFrames), with one line on stderr; -ENOSPC past 64 keys; -ENOMEM.
 */
MXPROF_API int mxprof_add_metadata(const char *key, const char *value);

/*
 * mxprof_add_metadata() for a value that is JSON text, as MindSpore's
 * Profiler.add_metadata_json(key, value): the trace has "key":<value> at
 * its top level, the value as JSON (an object, array, number, ...); the
 * tables leave it out (they show string values). Returns what
 * mxprof_add_metadata() does, and -EINVAL, with one line on stderr, for
 * a value that is not JSON text.
 */
MXPROF_API int mxprof_add_metadata_json(const char *key, const char *json);

/* Frees a string returned by mxprof_dumps(). Accepts NULL. */
MXPROF_API void mxprof_free(void *p);

/* Returns the number of records dropped because a buffer was full. */
MXPROF_API uint64_t mxprof_dropped(void);

/*
 * Returns the domain called name, creating it on first use. The same name
 * always gives the same handle. Returns NULL on allocation failure.
 */
MXPROF_API mxprof_domain *mxprof_domain_create(const char *name);

/* Tasks: a named unit of work; all passes aggregate into one row. */
MXPROF_API mxprof_task *mxprof_task_create(mxprof_domain *domain,
					   const char *name);
MXPROF_API void mxprof_task_start(mxprof_task *task);
MXPROF_API void mxprof_task_stop(mxprof_task *task);
MXPROF_API void mxprof_task_destroy(mxprof_task *task);

/* Frames: like tasks, but each pass is numbered in the trace. */
MXPROF_API mxprof_frame *mxprof_frame_create(mxprof_domain *domain,
					     const char *name);
MXPROF_API void mxprof_frame_start(mxprof_frame *frame);
MXPROF_API void mxprof_frame_stop(mxprof_frame *frame);
MXPROF_API void mxprof_frame_destroy(mxprof_frame *frame);

/* Events: per-thread ranges without a domain. */
MXPROF_API mxprof_event *mxprof_event_create(const char *name);
MXPROF_API void mxprof_event_start(mxprof_event *event);
MXPROF_API void mxprof_event_stop(mxprof_event *event);
MXPROF_API void mxprof_event_destroy(mxprof_event *event);

/* Counters: a 64-bit value tracked over time. As MXNet's
 * Counter(domain, name, value), a non-zero value given to create is the
 * counter's first sample (when recording); 0 records nothing. */
MXPROF_API mxprof_counter *
mxprof_counter_create(mxprof_domain *domain, const char *name, int64_t value);
MXPROF_API void mxprof_counter_set(mxprof_counter *counter, int64_t value);
MXPROF_API void mxprof_counter_increment(mxprof_counter *counter,
					 int64_t delta);
MXPROF_API void mxprof_counter_decrement(mxprof_counter *counter,
					 int64_t delta);
MXPROF_API void mxprof_counter_destroy(mxprof_counter *counter);

/*
 * Markers: an instant in time. scope is "global", "process" or "thread"
 * ("g", "p", "t" are accepted too), or MXNet's "task" and "marker", which
 * are written with process scope as MXNet writes them; NULL means
 * "process". Returns 0, or -EINVAL for another scope.
 */
MXPROF_API mxprof_marker *mxprof_marker_create(mxprof_domain *domain,
					       const char *name);
MXPROF_API int mxprof_marker_mark(mxprof_marker *marker, const char *scope);
MXPROF_API void mxprof_marker_destroy(mxprof_marker *marker);

#ifdef __cplusplus
}
#endif

#endif /* MXPROF_H */
