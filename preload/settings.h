/*
 * settings.h - the MXPROF_* settings (settings.c): parsing each variable,
 * the dump signal's names, the launcher's rank variables and the output
 * name's %p/%r/%h expansion.
 *
 * One definition serves the library and the mxprof command: settings.c
 * uses only the C library and collector/paths.c, so the command links it
 * from libmxprof.a without the library's constructor, and its checks of
 * run's options, and its idea of the files a run writes, are the
 * library's own.
 */
#ifndef MXPROF_SETTINGS_H
#define MXPROF_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "control.h"

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
	char step[256];		 /* MXPROF_STEP, "" for the default */
	char steps_text[256];	 /* MXPROF_STEPS as given, "" unset */
	struct coll_steps steps; /* the window, COLL_STEPS_ALL unset */
	int continuous_dump;
	double dump_period_s;
	uint64_t max_trace_mb;
	int stacks;
	int overflow;		   /* enum coll_overflow */
	unsigned ring_records;	   /* from MXPROF_BUFFER_KB */
	unsigned ring_records_max; /* MXPROF_BUFFER_MAX_KB: a full ring grows */
	unsigned drain_period_ms;
	int flight_mode;	   /* enum coll_flight, MXPROF_FLIGHT */
	uint64_t flight_n;	   /* its seconds or steps */
	uint64_t flight_mb;	   /* MXPROF_FLIGHT_MB */
	double trigger_slow;	   /* MXPROF_TRIGGER slow:<F>x, 0 = off */
	uint64_t trigger_hang_s;   /* MXPROF_TRIGGER hang:<N>s, 0 = off */
	unsigned flight_max_dumps; /* MXPROF_FLIGHT_MAX_DUMPS */
};

/* What MXPROF_FLIGHT and MXPROF_TRIGGER accept, for the lines about a
 * bad value (settings.c, set_config.c). */
#define SETTINGS_FLIGHT_FORMS "<N>s or <N>steps, N a whole number >= 1"
#define SETTINGS_TRIGGER_FORMS                                                 \
	"a list of slow:<F>x (F >= 1) and hang:<N>s (N >= 1)"

/* Parses MXPROF_FLIGHT's value: "<N>s" or "<N>steps". Returns 0 with
 * *mode (enum coll_flight) and *n set, or -EINVAL (nothing set). */
int settings_flight(const char *v, int *mode, uint64_t *n);

/* Parses MXPROF_TRIGGER's value: a comma list of "slow:<F>x" and
 * "hang:<N>s", each at most once. Returns 0 with *slow (0: none) and
 * *hang_s (0: none) set, or -EINVAL (nothing set). */
int settings_trigger(const char *v, double *slow, uint64_t *hang_s);

/*
 * Reads every MXPROF_* variable through get (getenv in the library, a
 * table in tests) into s. A bad value gives one line on stderr naming the
 * variable, the value and what is accepted, and that feature falls back as
 * docs/settings.md documents. Returns the number of bad values.
 */
int settings_parse(struct settings *s, const char *(*get)(const char *));

/*
 * Expands %p (pid), %r (rank), %h (host) and %% in pattern into buf.
 * A pid of 0 expands %p as the glob "*" (for a caller that looks for the
 * files of any process). A '/' in the host name becomes '_': %h is one
 * name, never a folder. When descendant is non-zero and the pattern has
 * no %p, ".<pid>" is put before the trace's ending (paths_child()), so
 * that a child never writes its parent's file. Returns 0, or -EINVAL for
 * an empty result or another % sequence, or -ENAMETOOLONG. This function
 * can't fail otherwise.
 */
int settings_expand_output(const char *pattern, int pid, int rank,
			   int descendant, char *buf, size_t len);

/*
 * The trace name the library writes for pattern (MXPROF_OUTPUT, NULL or
 * "" when unset): settings_expand_output() of it, or of "profile.json"
 * when it is not a valid pattern (settings_parse() said so). A relative
 * name is relative to the folder the program started in.
 */
void settings_output_name(const char *pattern, int pid, int rank,
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

/* The value `mxprof dump --stacks` sends with the dump signal (sigqueue):
 * the dump then also writes every thread's stack (preload/signals.c). */
#define SETTINGS_STACKS_REQUEST 0x6d787374 /* "mxst" */

#endif /* MXPROF_SETTINGS_H */
