/*
 * preload.h - the injected library's front: settings (settings.c), this
 * process's collector settings (config.c), the run/pause/stop state
 * machine (state.c), load and fork (init.c), the signals (signals.c),
 * the public API (api.c) and NVTX injection (nvtx.c). The hook engine has its
 * own map, hook.h.
 *
 * Dependencies go one way: api.c and nvtx.c use init.c and state.c;
 * init.c uses state.c, config.c, signals.c and the sources it sets up (hook,
 * cupti); state.c uses config.c; none of them calls back up.
 */
#ifndef MXPROF_PRELOAD_H
#define MXPROF_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

/* MXPROF_TRACE sources. */
enum {
	TRACE_API = 1u << 0,
	TRACE_CUDA = 1u << 1,
	TRACE_GPU = 1u << 2,
	TRACE_NVTX = 1u << 3,
	TRACE_MEMORY = 1u << 4,
	TRACE_ALL = 0x1f,
};

struct settings {
	int autostart;
	char output[4096];    /* the pattern, not yet expanded */
	unsigned trace;	      /* TRACE_* mask */
	const char *hook;     /* MXPROF_HOOK, NULL for the default @auto */
	const char *metadata; /* MXPROF_METADATA, checked; NULL if unset */
	int signal;	      /* dump signal number, 0 = none */
	int signal_taken;     /* the program handles the one asked for */
	double delay_s;
	double duration_s;
	char capture_nvtx[256];
	int continuous_dump;
	double dump_period_s;
	uint64_t max_trace_mb;
	int stacks;
	int overflow;		   /* enum coll_overflow */
	unsigned ring_records;	   /* from MXPROF_BUFFER_KB */
	unsigned ring_records_max; /* MXPROF_BUFFER_MAX_KB: a full ring grows */
	unsigned drain_period_ms;
};

/*
 * Reads every MXPROF_* variable through get (getenv in the library, a
 * table in tests) into s. A bad value gives one line on stderr naming the
 * variable, the value and what is accepted, and that feature falls back as
 * the README documents. Returns the number of bad values.
 */
int settings_parse(struct settings *s, const char *(*get)(const char *));

/*
 * MXPROF_METADATA (metadata.c): metadata_check() returns 0 when v is
 * key=value[,key=value...] with no empty key, -EINVAL otherwise;
 * metadata_load() adds its pairs (mxprof_add_metadata()), each failure
 * with one line. Neither is for the hot path.
 */
int metadata_check(const char *v);
void metadata_load(const char *v);

/*
 * Expands %p (pid), %r (rank), %h (host) and %% in pattern into buf.
 * When descendant is non-zero and the pattern has no %p, ".<pid>" is put
 * before the trace's ending (paths_child()), so that a child never writes
 * its parent's file. Returns 0, or -EINVAL for another % sequence, or
 * -ENAMETOOLONG.
 */
int settings_expand_output(const char *pattern, int pid, int rank,
			   int descendant, char *buf, size_t len);

/* Returns the rank from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK,
 * SLURM_PROCID or MV2_COMM_WORLD_RANK, or -1. */
int settings_rank(const char *(*get)(const char *));

/* What a launcher says of the process's place among its peers. */
enum settings_dist {
	SETTINGS_RANK,	     /* settings_rank()'s variables */
	SETTINGS_WORLD_SIZE, /* WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE,
				SLURM_NTASKS, MV2_COMM_WORLD_SIZE */
	SETTINGS_LOCAL_RANK, /* LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK,
				MPI_LOCALRANKID, SLURM_LOCALID,
				MV2_COMM_WORLD_LOCAL_RANK */
};

/* Returns what's value from the first of its variables that holds a
 * number (a world size of 0 is passed over); -1 when none does (0 for
 * the world size). */
int settings_dist(const char *(*get)(const char *), enum settings_dist what);

/* Parses a signal name ("USR1", "SIGUSR2", "10") or "none" (0). Returns the
 * number, or -1 when invalid. */
int settings_signal(const char *v);

struct coll_config;

/*
 * signals.c: installs the dump signal's handler (s->signal; set to 0 after
 * one line when the program handles it) and the final dump for the
 * signals that end the process, each only where the disposition is the
 * default. Call once at load, before the collector starts.
 */
void signals_init(struct settings *s);

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
 * path that image left and returns 1, or returns 0. */
void exits_init(int early);
int exits_continued(char *trace, size_t len);

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

#endif /* MXPROF_PRELOAD_H */
