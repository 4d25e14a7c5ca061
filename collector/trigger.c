/*
 * trigger.c - flight mode's triggers: when the window kept in memory
 * (flight.c) is written, under which name, and why.
 *
 * A trigger writes the window as a normal trace and tables to a new
 * numbered file, "<base>.<trigger>.<n>.json" beside the output (n counts
 * each trigger's files from 1), names the trigger and its reason in the
 * trace's metadata ("flight") and on one stderr line, and recording goes
 * on. At most MXPROF_FLIGHT_MAX_DUMPS numbered files are written in a run;
 * then one line says so. The triggers:
 *
 *   dump   the dump signal (mxprof dump) or mxprof_dump();
 *   slow   MXPROF_TRIGGER=slow:<F>x: a step ended that took more than F
 *          times the median of the steps before it (the newest MEDIAN_N
 *          of them), once at least MIN_STEPS steps came before it. The
 *          file holds the window that ends with that step's end; it is
 *          written after one more pass, so that what other threads did
 *          up to that end is drained too;
 *   hang   MXPROF_TRIGGER=hang:<N>s: no progress for N seconds, where
 *          progress is a step ending, or, in a program where no step has
 *          ended yet, any record drained from any thread. Measured on the
 *          drain thread's clock at each pass; once per stall (armed again
 *          by the next progress). The watchdog starts with the first
 *          record drained; while recording is paused its clock starts
 *          again: a pause is no stall. Before writing, the hook of
 *          coll_set_trigger_hook() may add every thread's stack.
 *
 * The program's endings (exit, a signal, a crash, _exit, exec) write the
 * window to the trace's own name, as every ending does without flight
 * mode (trigger_write() with numbered 0).
 *
 * drain.c calls in here, owner held, on the drain thread: it notes the
 * records and steps it drains, asks what is due, and, after the pass that
 * the hook's additions need, has the window written; trigger.c calls
 * dump.c (dump_write) and flight.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MEDIAN_N  1024 /* the running median's steps, the newest */
#define MIN_STEPS 10   /* steps before the first that may be slow */

static struct {
	double slow;	  /* factor, 0 = off */
	uint64_t hang_ns; /* 0 = off */
	unsigned max_dumps;
	char setting[32]; /* MXPROF_FLIGHT as given, for the metadata */
	/* The median: the newest durations in arrival order (ring) and
	 * sorted. */
	uint64_t ring[MEDIAN_N], sorted[MEDIAN_N];
	size_t nmed, atmed;
	uint64_t steps;	    /* steps drained */
	uint64_t last_step; /* the number of the last drained */
	/* A slow step waiting for the next pass. */
	int slow_due;
	uint64_t slow_step, slow_end;
	char slow_reason[160];
	/* The hang watchdog (CLOCK_MONOTONIC ns). */
	uint64_t progress_ns;
	int armed; /* a record was drained: the watchdog runs */
	int hang_fired;
	/* Files written, each trigger's and all. */
	unsigned n_dump, n_slow, n_hang, written;
	int said_max;
} T;

static void (*hook)(const char *trigger);

void coll_set_trigger_hook(void (*fn)(const char *trigger))
{
	__atomic_store_n(&hook, fn, __ATOMIC_RELEASE);
}

/* The trace path the trigger in the hook is about to write ("" outside
 * a hook); the drain thread's. */
static char hook_path[4200];

int coll_trigger_file(char *buf, size_t len)
{
	if (!hook_path[0] || strlen(hook_path) >= len) {
		return hook_path[0] ? -ENAMETOOLONG : -ESRCH;
	}
	memcpy(buf, hook_path, strlen(hook_path) + 1);
	return 0;
}

/* The count of the files trigger wrote, or NULL for an ending. */
static unsigned *count_of(const char *trigger)
{
	if (strcmp(trigger, "slow") == 0) {
		return &T.n_slow;
	}
	if (strcmp(trigger, "hang") == 0) {
		return &T.n_hang;
	}
	return strcmp(trigger, "dump") == 0 ? &T.n_dump : NULL;
}

void trigger_call_hook(const char *trigger, const char *output)
{
	void (*fn)(const char *) = __atomic_load_n(&hook, __ATOMIC_ACQUIRE);
	const unsigned *count = count_of(trigger);
	char tag[48];

	/* Past the most files, nothing will be written: no hook either. */
	if (!fn || !count || T.written >= T.max_dumps) {
		return;
	}
	snprintf(tag, sizeof(tag), "%s.%u", trigger, *count + 1);
	if (paths_child(output, tag, hook_path, sizeof(hook_path)) < 0) {
		hook_path[0] = 0;
	}
	fn(trigger);
	hook_path[0] = 0;
}

void trigger_setup(const struct coll_config *cfg)
{
	memset(&T, 0, sizeof(T));
	T.slow = cfg->trigger_slow;
	T.hang_ns = cfg->trigger_hang_s * 1000000000ull;
	T.max_dumps = cfg->flight_max_dumps;
	T.progress_ns = ticks_mono_ns();
	snprintf(T.setting, sizeof(T.setting), "%llu%s",
		 (unsigned long long)cfg->flight_n,
		 cfg->flight_mode == COLL_FLIGHT_STEPS ? "steps" : "s");
}

void trigger_note_records(void)
{
	if (!T.armed) {
		T.armed = 1;
		T.progress_ns = ticks_mono_ns();
	}
	if (T.steps == 0) {
		T.progress_ns = ticks_mono_ns();
		T.hang_fired = 0;
	}
}

/* The median of the steps before, in ns. */
static uint64_t median(void)
{
	size_t n = T.nmed;

	return n % 2 ? T.sorted[n / 2]
		     : (T.sorted[n / 2 - 1] + T.sorted[n / 2]) / 2;
}

/* Adds d to the median's steps (the oldest goes past MEDIAN_N). */
static void median_add(uint64_t d)
{
	size_t i;

	if (T.nmed == MEDIAN_N) {
		uint64_t old = T.ring[T.atmed];
		for (i = 0; T.sorted[i] != old; i++) {
		}
		memmove(&T.sorted[i], &T.sorted[i + 1],
			(T.nmed - i - 1) * sizeof(T.sorted[0]));
		T.nmed--;
	}
	T.ring[T.atmed] = d;
	T.atmed = (T.atmed + 1) % MEDIAN_N;
	for (i = T.nmed; i > 0 && T.sorted[i - 1] > d; i--) {
		T.sorted[i] = T.sorted[i - 1];
	}
	T.sorted[i] = d;
	T.nmed++;
}

void trigger_note_step(uint64_t n, uint64_t t0, uint64_t dur)
{
	T.progress_ns = ticks_mono_ns();
	T.hang_fired = 0;
	if (T.slow > 0 && T.steps >= MIN_STEPS && !T.slow_due && T.nmed) {
		uint64_t med = median();
		if ((double)dur > T.slow * (double)med) {
			struct flight_window w;
			T.slow_due = 1;
			T.slow_step = n;
			T.slow_end = t0 + dur;
			snprintf(T.slow_reason, sizeof(T.slow_reason),
				 "step %llu took %.1f ms, %.1fx the median "
				 "%.3f ms of the %zu steps before it",
				 (unsigned long long)n, (double)dur / 1e6,
				 med ? (double)dur / (double)med : 0.0,
				 (double)med / 1e6, T.nmed);
			/* Its window stays until it is written. */
			flight_window(&w, T.slow_end, n);
			flight_pin(w.start);
		}
	}
	median_add(dur);
	T.steps++;
	T.last_step = n;
}

const char *trigger_due(uint64_t now)
{
	if (T.slow_due) {
		return "slow";
	}
	if (T.hang_ns && !coll_recording_at(clock_now_ns())) {
		/* Recording is paused (set_state('stop')): no stall. */
		T.progress_ns = now;
		T.hang_fired = 0;
		return NULL;
	}
	if (T.hang_ns && T.armed && !T.hang_fired &&
	    now - T.progress_ns >= T.hang_ns && now > T.progress_ns) {
		return "hang";
	}
	return NULL;
}

/* The stderr line and the counts for a numbered file past the most
 * allowed. Returns 1 when no more may be written. */
static int over_max(const char *trigger, const char *reason)
{
	if (T.written < T.max_dumps) {
		return 0;
	}
	if (!T.said_max) {
		T.said_max = 1;
		fprintf(stderr,
			"mxprof: MXPROF_FLIGHT_MAX_DUMPS=%u files written; "
			"no more for this run (the %s trigger: %s); the "
			"ending still writes the window\n",
			T.max_dumps, trigger, reason);
	}
	return 1;
}

/* The metadata "flight" and "steps" of the window w. */
static void window_meta(const char *trigger, const char *reason,
			const struct flight_window *w)
{
	char json[META_VALUE_MAX], steps[64] = "";

	/* The steps held are written first (they may have changed since
	 * the last dump), so that the window's take their place. */
	steps_meta_sync();
	if (w->nsteps) {
		snprintf(steps, sizeof(steps), "%llu-%llu",
			 (unsigned long long)w->step_lo,
			 (unsigned long long)w->step_hi);
		if (w->step_lo == w->step_hi) {
			snprintf(steps, sizeof(steps), "%llu",
				 (unsigned long long)w->step_lo);
		}
		meta_set("steps", steps);
	} else if (T.steps) {
		meta_set("steps", "none");
	}
	char end[24] = "null";
	if (w->end != UINT64_MAX) {
		snprintf(end, sizeof(end), "%llu", (unsigned long long)w->end);
	}
	snprintf(json, sizeof(json),
		 "{\"trigger\":\"%s\",\"reason\":\"%s\",\"window\":{"
		 "\"setting\":\"%s\",\"start_ns\":%llu,\"end_ns\":%s,"
		 "\"steps\":\"%s\",\"cut_by_memory\":%s}}",
		 trigger, reason, T.setting, (unsigned long long)w->start, end,
		 steps, w->cut ? "true" : "false");
	meta_set_json("flight", json);
}

int trigger_write(struct coll_state *s, uint64_t dropped, const char *trigger,
		  const char *reason, int numbered)
{
	char saved[sizeof(s->cfg.output)], tag[48];
	uint64_t end = UINT64_MAX, step_hi = UINT64_MAX;
	unsigned *count;
	int rc;

	count = count_of(trigger);
	if (strcmp(trigger, "slow") == 0) {
		end = T.slow_end;
		step_hi = T.slow_step;
		reason = T.slow_reason;
		T.slow_due = 0;
	} else if (strcmp(trigger, "hang") == 0) {
		T.hang_fired = 1;
	}
	if (numbered && over_max(trigger, reason)) {
		flight_pin(UINT64_MAX);
		if (strcmp(trigger, "dump") == 0) {
			/* mxprof dump waits for a file: the status says
			 * there will be none. */
			s->dumps_refused++;
			dump_write_status(s);
		}
		return -ENOSPC;
	}
	flight_window(&s->flight_win, end, step_hi);
	window_meta(trigger, reason, &s->flight_win);
	if (!numbered || !count) {
		rc = dump_write(s, dropped, NULL);
		flight_pin(UINT64_MAX);
		return rc;
	}
	snprintf(tag, sizeof(tag), "%s.%u", trigger, *count + 1);
	snprintf(saved, sizeof(saved), "%s", s->cfg.output);
	if (paths_child(saved, tag, s->cfg.output, sizeof(s->cfg.output)) < 0) {
		snprintf(s->cfg.output, sizeof(s->cfg.output), "%s", saved);
		flight_pin(UINT64_MAX);
		return -ENAMETOOLONG;
	}
	paths_stats(s->cfg.output, s->stats_path, sizeof(s->stats_path));
	rc = dump_write(s, dropped, NULL);
	if (rc == 0) {
		(*count)++;
		T.written++;
		fprintf(stderr, "mxprof: %s trigger: wrote %s and %s: %s\n",
			trigger, s->cfg.output, s->stats_path, reason);
	}
	snprintf(s->cfg.output, sizeof(s->cfg.output), "%s", saved);
	paths_stats(s->cfg.output, s->stats_path, sizeof(s->stats_path));
	flight_pin(UINT64_MAX);
	return rc;
}

const char *trigger_hang_reason(char *buf, size_t len)
{
	if (T.steps) {
		snprintf(buf, len,
			 "no step ended for %llu s (the last was step %llu)",
			 (unsigned long long)(T.hang_ns / 1000000000ull),
			 (unsigned long long)T.last_step);
	} else {
		snprintf(buf, len, "no record was drained for %llu s",
			 (unsigned long long)(T.hang_ns / 1000000000ull));
	}
	return buf;
}
