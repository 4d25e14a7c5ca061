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
 * Keys: "filename" (trace path, same pattern rules as MXPROF_OUTPUT),
 * "continuous_dump" (0/1), "dump_period" (seconds), "aggregate_stats" (0/1),
 * "profile_all", "profile_api", "profile_memory", "profile_imperative",
 * "profile_symbolic" (0/1, accepted for compatibility), and
 * "max_trace_mb" (MiB, 0 for no cap).
 * Returns 0, -EINVAL for an unknown key or a bad value (with one line on
 * stderr), or -EBUSY for "filename" after the trace has been opened.
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
 * When finished is non-zero the profiler then stops, and no further dump
 * happens at exit. Returns 0 or a negative errno from the file writes.
 */
MXPROF_API int mxprof_dump(int finished);

/*
 * Returns the aggregate tables as a string, in the layout of MXNet's
 * profiler.dumps(). format is "table" or "json"; sort_by is "total", "avg",
 * "min", "max", "count" or "self" (self time); ascending sorts the rows
 * ascending. NULL selects the default ("table", "total"). reset clears the
 * aggregates afterwards. The caller frees the string with mxprof_free().
 * Returns NULL with errno EINVAL for a bad format or sort key, or ENOMEM.
 */
MXPROF_API char *mxprof_dumps(int reset, const char *format,
			      const char *sort_by, int ascending);

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

/* Counters: a 64-bit value tracked over time. */
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
 * (MXNet's "g", "p", "t" are accepted too); NULL means "process".
 * Returns 0, or -EINVAL for another scope.
 */
MXPROF_API mxprof_marker *mxprof_marker_create(mxprof_domain *domain,
					       const char *name);
MXPROF_API int mxprof_marker_mark(mxprof_marker *marker, const char *scope);
MXPROF_API void mxprof_marker_destroy(mxprof_marker *marker);

#ifdef __cplusplus
}
#endif

#endif /* MXPROF_H */
