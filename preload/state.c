/*
 * state.c - the run/pause/stop state machine and the capture window.
 *
 * State: stopped or running, and, while running, paused or not, inside or
 * outside the capture window (MXPROF_DELAY / MXPROF_DURATION) and inside
 * or outside the MXPROF_CAPTURE_NVTX range. Sources record only when
 * running, not paused and inside both; the collector's coll_recording
 * flag caches that answer for the hot path, and every change is noted for
 * sources whose records arrive late (coll_note_recording).
 *
 * LOCK_STATE guards all of it. It comes before the collector's locks in
 * the lock order: the first run starts the collector under it, and the
 * capture window's tick (on the drain thread) takes it with no collector
 * lock held. fork() holds it (the state source below).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "control.h"
#include "source.h"
#include "preload.h"

static struct coll_lock state_lock = COLL_LOCK_INIT(LOCK_STATE);
static int running;
static int paused;
static int window_open = 1;
static int window_over;
static int nvtx_gate = 1;  /* inside the MXPROF_CAPTURE_NVTX range */
static int capture_depth;  /* open occurrences of that range */
uint32_t state_capture_id; /* its name's id, 0 when not set */
static int started;	   /* atomic writes: _exit reads it unlocked */
static int finished_dump;  /* dump(finished=1) happened; atomic writes */
static uint64_t run_since_ns;
static int api_on = 1; /* the api source (MXPROF_TRACE, profile_api) */
volatile struct hot_flag state_api_recording;

/* Caller holds state_lock. */
static void update_recording(void)
{
	int on = running && !paused && window_open && nvtx_gate &&
		 !finished_dump;

	if (on != coll_recording.on) {
		coll_note_recording(on);
	}
	coll_recording.on = on;
	state_api_recording.on = on && api_on;
}

void state_set_api(int on)
{
	coll_lock(&state_lock);
	api_on = on != 0;
	update_recording();
	coll_unlock(&state_lock);
}

/* Drain-thread tick (the source's): opens and closes the capture
 * window. */
static void window_tick(uint64_t now)
{
	const struct settings *s = &preload_settings;

	coll_lock(&state_lock);
	if (running && !window_over) {
		double since = (double)(now - run_since_ns) / 1e9;
		int open = since >= s->delay_s;
		if (s->duration_s > 0 && since >= s->delay_s + s->duration_s) {
			open = 0;
			window_over = 1;
		}
		if (open != window_open) {
			window_open = open;
			update_recording();
		}
	}
	coll_unlock(&state_lock);
}

void state_nvtx_range(uint32_t name, int enter)
{
	if (name != state_capture_id || !name) {
		return;
	}
	coll_lock(&state_lock);
	capture_depth += enter ? 1 : -1;
	if (capture_depth < 0) {
		capture_depth = 0;
	}
	nvtx_gate = capture_depth > 0;
	update_recording();
	coll_unlock(&state_lock);
}

int state_run(void)
{
	struct coll_config cfg;
	sigset_t all, old;
	int rc = 0;
	/*
	 * The first start runs with every signal blocked, until no lock is
	 * held: the handler of a signal that ends the process waits for the
	 * drain thread's final dump, which needs the collector's locks and
	 * the state lock (its tick). A signal that comes meanwhile (while
	 * the drain thread is created, above all) is delivered at the end.
	 */
	int first = !__atomic_load_n(&started, __ATOMIC_ACQUIRE);

	if (first) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
	}
	coll_lock(&state_lock);
	if (!started) {
		config_collector(&cfg);
		rc = coll_start(&cfg);
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
		run_since_ns = ticks_mono_ns();
		window_open = preload_settings.delay_s <= 0;
		if (preload_settings.capture_nvtx[0]) {
			state_capture_id =
				strtab_intern(preload_settings.capture_nvtx);
			nvtx_gate = capture_depth > 0;
		}
	}
	running = 1;
	paused = 0;
	__atomic_store_n(&finished_dump, 0, __ATOMIC_RELEASE);
	update_recording();
	coll_unlock(&state_lock);
	if (first) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return rc == -ENOMEM ? rc : 0;
}

void state_stop(void)
{
	coll_lock(&state_lock);
	running = 0;
	update_recording();
	coll_unlock(&state_lock);
}

void state_pause(int pause)
{
	coll_lock(&state_lock);
	paused = pause;
	update_recording();
	coll_unlock(&state_lock);
}

int state_started(void)
{
	coll_lock(&state_lock);
	int s = started;
	coll_unlock(&state_lock);
	return s;
}

void state_finished_dump(void)
{
	coll_lock(&state_lock);
	running = 0;
	__atomic_store_n(&finished_dump, 1, __ATOMIC_RELEASE);
	update_recording();
	coll_unlock(&state_lock);
}

/* At exit: a step window with no step marker seen says so in one line,
 * in a process that recorded something. */
static void steps_unseen(int started_run)
{
	const struct settings *s = &preload_settings;

	if (!started_run || s->steps.mode == COLL_STEPS_ALL ||
	    coll_steps_count() > 0 || !coll_recorded_any()) {
		return;
	}
	fprintf(stderr,
		"mxprof: MXPROF_STEPS='%s': no step marker (MXPROF_STEP='%s') "
		"was seen; %s\n",
		s->steps_text, coll_steps_glob(),
		coll_steps_keeps(&s->steps, 0)
			? "the whole run was kept, as step 0"
			: "nothing was kept");
}

void state_at_exit(void)
{
	coll_lock(&state_lock);
	running = 0;
	update_recording();
	int dump = started && !finished_dump;
	coll_unlock(&state_lock);
	steps_unseen(dump);
	/* A process that recorded nothing (a shell wrapper's helpers)
	 * writes no files, as at _exit; GPU activity counts. */
	coll_finish(!dump		  ? 0
		    : coll_recorded_any() ? 1
					  : COLL_FINISH_IF_RECORDED);
}

/*
 * _exit, maybe from a signal handler: no lock here. Recording stops
 * without noting it (coll_note_recording takes a lock); the process ends.
 * The final dump gets 10 s.
 */
void state_at_quick_exit(void)
{
	__atomic_store_n(&coll_recording.on, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&state_api_recording.on, 0, __ATOMIC_RELAXED);
	int dump = __atomic_load_n(&started, __ATOMIC_ACQUIRE) &&
		   !__atomic_load_n(&finished_dump, __ATOMIC_ACQUIRE);

	coll_finish_quick(dump ? COLL_FINISH_IF_RECORDED : 0, 10000);
}

/* fork(): the state is held across it, in the lock order's place. */
static void fork_prepare(void)
{
	coll_lock(&state_lock);
}

static void fork_release(void)
{
	coll_unlock(&state_lock);
}

const struct coll_source state_source = {
	.name = "state",
	.tick = window_tick,
	.fork_rank = LOCK_STATE,
	.fork_prepare = fork_prepare,
	.fork_parent = fork_release,
	.fork_child = fork_release,
};
