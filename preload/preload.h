/*
 * preload.h - the map of preload/, the injected library: what the program
 * calls (the API, NVTX, the wrapped exits), load and fork, the settings,
 * the run/pause/stop state, the hook engine (its own map: hook.h) and the
 * call stacks (their own map: stack.h).
 *
 * The files from the top down; a file calls only files below it (the
 * exception is the last paragraph):
 *
 *   api.c          the public C API (mxprof.h); an entry that may come
 *                  before the constructor initialises the library first
 *                  (preload_init_once())
 *   set_config.c   mxprof_set_config(): settings changed while running
 *   nvtx.c         NVTX's injection entry and its callbacks (CUDA builds)
 *   exits.c        the _exit and exec wrappers (the .so only)
 *   creds.c        the wrappers of the user and group id changes, which
 *                  stop the drain thread for them (the .so only)
 *   init.c         load and unload, fork, and the wiring: the settings
 *                  read, the signals, each source set up and registered,
 *                  the stack namer given to the collector
 *   threads_now.c  every thread's stack now (a hang's dump, `mxprof dump
 *                  --stacks`): each thread walked from /proc while it
 *                  waits, or sampled by a signal while it runs; the text
 *                  and the trace events of the next dump (its source)
 *   threads_now_proc.c  what /proc says of a thread (its syscall line)
 *   stack_name.c   names of native frames, on the drain thread (stack.h)
 *   hook*.c, hook_tramp.S   the hook engine, in hook.h's order
 *   stack*.c, pyframes*.c   capturing call stacks: the native walk
 *                  (stack_unwind.c, stack_dwarf.c), the Python frames
 *                  (stack.h)
 *   state.c        the run/pause/stop state machine, the capture window
 *   config.c       this process's trace path and collector settings
 *   continue.c     the trace handed over across exec (MXPROF_CONTINUE)
 *   metadata.c     the metadata pairs (the API's and MXPROF_METADATA's)
 *   signals.c      the dump signal and the final dump on fatal signals
 *   settings.c     the MXPROF_* variables (settings.h): the C library and
 *                  collector/paths.c only, so the mxprof command links it
 *   tls_block.c    a thread's block of a source's own state (nvtx.c,
 *                  hook_torch.c)
 *
 * threads_now.c calls stack*.c, pyframes*.c (through stack.h),
 * stack_name.c and signals.c (the stack signal, the request flag).
 *
 * Who calls whom: the entry points (api, set_config, nvtx) call init's
 * preload_init_once() and state.c; init.c calls everything it sets up;
 * the hook engine calls stack.c (hook_dl, hook_rt; hook_rt_walk gives the
 * native walk its way through hooked calls: stack_set_through) and reads
 * state.c's flag and stack.c's depth (hook_tramp.S); stack_name.c calls stack.c
 * and hook_demangle.c; state.c calls config.c, config.c settings.c and
 * continue.c. Everything may call collector/ (collector.h), which never
 * calls back but through what it is given (sources, the namer, the
 * tick).
 *
 * The one loop left, and why: hook_tramp.S <-> hook_rt.c. They are the
 * two halves of one runtime: the stubs' fast paths call the C general
 * paths (hook_rt_enter, hook_rt_exit) and reach the
 * thread's shadow stack (hook_rt_tls, in hook_rt_walk.c), and the C side
 * computes the address of stub i (hook_stub(), from hook_tramp_stubs) to make a
 * hooked function return into its stub. Passing either side to the other at
 * start-up would put a load through a pointer on every hooked call.
 * tests/integration/house_loops.sh fails on any other loop.
 */
#ifndef MXPROF_PRELOAD_H
#define MXPROF_PRELOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "settings.h"

/*
 * metadata.c: the key-value pairs of mxprof_add_metadata() and
 * MXPROF_METADATA. metadata_add() adds one pair (meta_set()) and returns
 * its result, with one line on stderr for a failure; metadata_load()
 * adds the pairs of MXPROF_METADATA's value (settings_parse() checked its
 * syntax), each failure with one line. Neither is for the hot path.
 */
int metadata_add(const char *key, const char *value);
/* metadata_add() for mxprof_add_metadata_json(): -EINVAL, with one line,
 * for a value that is not JSON text. */
int metadata_add_json(const char *key, const char *json);
void metadata_load(const char *v);

/*
 * tls_block.c: a thread's block of a source's state, size bytes zeroed,
 * freed at the thread's exit; NULL without memory. The caller keeps the
 * pointer in its own TLS and calls this only while it is NULL. Not for
 * signal handlers.
 */
struct tls_block {
	pthread_mutex_t lock;
	pthread_key_t key;
	int ready;
};
#define TLS_BLOCK_INIT                                                         \
	{                                                                      \
		.lock = PTHREAD_MUTEX_INITIALIZER                              \
	}
void *tls_block_make(struct tls_block *b, size_t size);

struct coll_config;

/*
 * signals.c: installs the dump signal's handler (s->signal; set to 0 after
 * one line when the program handles it) and the final dump for the
 * signals that end the process, each only where the disposition is the
 * default. Call once at load, before the collector starts.
 */
void signals_init(struct settings *s);

/* signals.c: set (atomic) by the dump signal's handler when `mxprof dump
 * --stacks` asked for every thread's stack; threads_now.c clears it. */
extern int signals_stacks_wanted;

/* signals.c: the real-time signal that samples a running thread's stack
 * (threads_now.c), handled by fn, a void (*)(int, siginfo_t *, void *)
 * (given as a pointer: <signal.h> is not included here): the highest one below
 * SIGRTMAX whose disposition is the default, taken at the first call (the
 * program's handlers and masks are left as they are). Returns it, or -EBUSY
 * when every one is in use. Not for signal handlers. */
int signals_stack_signal(void *fn);

/* config.c: the settings of this process (parsed once at load). */
extern struct settings preload_settings;

/* config.c: notes the start folder (relative outputs are taken from it)
 * and the root's pid from the environment as received (a process is a
 * descendant when it is not the root). Call once at load, before mxprof
 * sets any environment variable. */
void config_init(void);

/* config.c: non-zero in a descendant of the root process (a child, forked
 * or exec'ed). This function can't fail. */
int config_descendant(void);

/* config.c: the trace path of this process into out; descendant: a
 * child's name (see settings_expand_output). */
void config_output(char *out, size_t len, int descendant);

/* config.c: fills the collector's settings for this process. */
void config_collector(struct coll_config *c);

/* init.c: makes sure the library is initialised (for static links, and
 * entry points a library may reach before the constructor). */
void preload_init_once(void);

/*
 * state.c. run: starts recording (and the collector, the first time);
 * returns 0 or -ENOMEM. stop, pause(1)/pause(0): what mxprof.h says.
 * started: the collector was started. finished_dump: dump(finished=1)
 * happened, recording stops and no dump is written at exit. at_exit: the
 * final dump unless one was finished, then the collector's end.
 */
/*
 * The hooked C API calls (the api source) are timed while
 * state_api_recording.on is non-zero: while coll_recording.on is, and the api
 * source is on. state_set_api() turns the source on or off (MXPROF_TRACE
 * at load, set_config(profile_api=...) later); the hook trampolines read
 * the flag without a lock. Not for a signal handler (takes LOCK_STATE).
 */
extern volatile struct hot_flag state_api_recording;
void state_set_api(int on);

int state_run(void);
void state_stop(void);
void state_pause(int pause);
int state_started(void);
void state_finished_dump(void);
void state_at_exit(void);

/* As state_at_exit(), for _exit() (exits.c): the final dump only when
 * this process recorded anything, taking no lock (a signal handler may
 * call _exit), waiting for it 10 s at most. */
void state_at_quick_exit(void);

/* The variable that hands a trace to the next image at exec. */
#define CONTINUE_VAR "MXPROF_CONTINUE"

/* continue.c: after exec. init: at load, takes the handover of an
 * earlier image of this process (MXPROF_CONTINUE; early: the process has
 * one thread, so the variable may be removed). continued: writes the trace
 * path that image left and returns 1, or returns 0; *dump_owed: that
 * image owes a dump it was asked for (coll_config's dump_owed). */
void exits_init(int early);
int exits_continued(char *trace, size_t len, int *dump_owed);

/* state.c: holds the state across fork() (see lock.h's lock order). */
struct coll_source;
extern const struct coll_source state_source;

/*
 * MXPROF_CAPTURE_NVTX: the id of the range name that opens the capture
 * window (0 when unset), and the call NVTX makes when a range of that name
 * opens (enter = 1) or closes. Recording is on only while at least one such
 * range is open, on any thread. Takes the state lock, only on a match.
 */
extern uint32_t state_capture_id;
void state_nvtx_range(uint32_t name, int enter);

/* ---- every thread's stack now (threads_now.c, threads_now_proc.c) ---- */

/*
 * Captures every thread's current stack (but the caller's) without
 * stopping the program, and arranges for the next dump to include them:
 * one "thread stack now" instant event on each thread's track, and the
 * text beside the trace ("<trace base>.stacks.txt", paths_stacks_text()).
 * A thread blocked in the kernel is walked from what /proc gives of it; a
 * running one is sampled with a real-time signal (threads_now.c says
 * how). For the hang trigger and `mxprof dump --stacks`: call it on the
 * drain thread (a trigger's hook, a source's flush), never from a signal
 * handler. Bounded: at most 200 ms for each running thread, and the
 * namer's look-ups. Returns how many threads it captured, or a negative
 * errno (-ENOMEM, -ENOENT when /proc cannot be read, -EBUSY while
 * another capture runs).
 */
int threads_now_capture(void);

/* The hook of a triggered dump (a trigger's name: "hang", "slow", "dump",
 * ...), on the drain thread before the window is written: a hang's dump
 * gets every thread's stack (threads_now_capture()). */
void threads_now_on_trigger(const char *trigger);

/* threads_now.c: the source that writes the captured stacks into the next
 * dump's trace and takes `mxprof dump --stacks`'s requests (its flush). */
struct coll_source;
extern const struct coll_source threads_now_source;

/* threads_now_proc.c: one thread's /proc/self/task/TID/syscall line. */
struct threads_now_sys {
	int running; /* "running": on a CPU or ready to run */
	long nr;     /* the system call it waits in; -1: blocked outside one */
	uintptr_t args[6];
	uintptr_t sp, pc;
};

/* Parses line into *out. Returns 0, or -EINVAL for a line of another
 * form. This function can't fail otherwise. */
int threads_now_parse_syscall(const char *line, struct threads_now_sys *out);

/* The name of x86-64 system call nr ("futex"), or NULL for one not in
 * its table. This function can't fail. */
const char *threads_now_syscall_name(long nr);

/* Splits a Python frame's name, "qualname (file.py:LINE)", into func and
 * *line. Returns 0, or -EINVAL (func is then the whole name, *line 0). */
int threads_now_py_line(const char *name, char *func, size_t flen,
			unsigned *line);

/* Reads the file at path into buf (at most len - 1 bytes, NUL-terminated).
 * Returns how many bytes, or a negative errno. */
int threads_now_read_file(const char *path, char *buf, size_t len);

#endif /* MXPROF_PRELOAD_H */
