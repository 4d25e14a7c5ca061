/*
 * control.c - the collector's life cycle as the library's entry points
 * call it (control.h): start, the output's name, dumps, flushes and the
 * end. Each call that touches the state is a request to the drain thread
 * (queue.c), or takes the owner lock for a flag or a setting.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "drain.h"
#include "files.h"

#define S coll_state

int coll_init(void)
{
	clock_init();
	journal_reserve_fds();
	queue_defer_child = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
	ring_set_attach_notify(queue_start_pending);
	ring_set_wake(queue_wake);
	return ring_init();
}

int coll_start(const struct coll_config *cfg)
{
	int rc;

	coll_lock(&drain_owner);
	if (drain_t.started) {
		coll_unlock(&drain_owner);
		return 0;
	}
	rc = drain_setup(cfg);
	if (rc == 0) {
		__atomic_store_n(&drain_t.started, 1, __ATOMIC_RELEASE);
		rc = queue_start_thread();
	}
	coll_unlock(&drain_owner);
	if (rc < 0) {
		fprintf(stderr,
			"mxprof: cannot start the drain thread: %s; records "
			"are drained at dumps only\n",
			strerror(-rc));
	}
	return rc;
}

int coll_set_output(const char *output)
{
	coll_lock(&drain_owner);
	int busy = S.journal_open != 0;
	snprintf(S.cfg.output, sizeof(S.cfg.output), "%s", output);
	paths_stats(S.cfg.output, S.stats_path, sizeof(S.stats_path));
	if (!busy) {
		dump_note_output(&S);
	}
	coll_unlock(&drain_owner);
	return busy;
}

void coll_set_dump_period(double seconds)
{
	coll_lock(&drain_owner);
	/* Flight mode writes on its triggers only. */
	S.cfg.dump_period_s = S.cfg.flight_mode ? 0 : seconds;
	coll_unlock(&drain_owner);
}

int coll_live_here(void)
{
	/* A vfork child must not wait for the parent's locks. */
	if (__atomic_load_n(&S.pid, __ATOMIC_RELAXED) != (int)getpid()) {
		return 0;
	}
	coll_lock(&drain_owner);
	int live =
		drain_t.started && !drain_t.finished && S.pid == (int)getpid();
	coll_unlock(&drain_owner);
	return live;
}

int coll_dump(void)
{
	return coll_dump_steps(NULL);
}

int coll_dump_steps(const char *steps)
{
	struct request r = {.type = REQ_DUMP, .steps = steps};

	coll_lock(&drain_owner);
	int live = drain_t.started && !drain_t.finished;
	coll_unlock(&drain_owner);
	return live ? queue_request(&r) : -ESRCH;
}

void coll_dump_async(void)
{
	int saved = errno;

	__atomic_store_n(&drain_t.dump_req, 1, __ATOMIC_RELEASE);
	queue_wake();
	errno = saved;
}

int coll_flush(void)
{
	struct request r = {.type = REQ_FLUSH};

	return queue_request(&r);
}

char *coll_dumps(int reset, const char *format, const char *sort_by,
		 int ascending, unsigned top)
{
	return coll_dumps_steps(reset, format, sort_by, ascending, top, NULL);
}

char *coll_dumps_steps(int reset, const char *format, const char *sort_by,
		       int ascending, unsigned top, const char *steps)
{
	struct table_opts o = {.ascending = ascending, .top = top};
	struct request r = {
		.type = REQ_DUMPS, .reset = reset, .o = &o, .steps = steps};

	if (table_parse_opts(&o, format, sort_by) < 0) {
		errno = EINVAL;
		return NULL;
	}
	queue_request(&r);
	if (!r.text) {
		errno = r.rc < 0 ? -r.rc : ENOMEM;
	}
	return r.text;
}

int coll_drain_pause(void)
{
	/* A vfork child: the thread is the parent's. */
	if (__atomic_load_n(&S.pid, __ATOMIC_RELAXED) != (int)getpid()) {
		return 0;
	}
	/* Taking running over, as coll_finish does: one joiner only. */
	coll_lock(&queue_q.lock);
	int running = drain_t.running;
	__atomic_store_n(&drain_t.running, 0, __ATOMIC_RELEASE);
	if (running) {
		__atomic_store_n(&drain_t.pause_req, 1, __ATOMIC_RELEASE);
	}
	coll_unlock(&queue_q.lock);
	if (!running) {
		return 0;
	}
	queue_wake();
	pthread_join(drain_t.thread, NULL);
	__atomic_store_n(&drain_t.pause_req, 0, __ATOMIC_RELEASE);
	return 1;
}

void coll_drain_resume(void)
{
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished && !drain_t.running &&
	    queue_start_thread() < 0) {
		ring_drain_alive = 0;
		fprintf(stderr, "mxprof: cannot start the drain thread again; "
				"records are drained at exit only\n");
	}
	coll_unlock(&drain_owner);
}

void coll_finish(int dump)
{
	struct request r = {.type = REQ_FINISH, .dump = dump};
	static int sources_told;

	ring_set_quiet(1);
	if (!__atomic_exchange_n(&sources_told, 1, __ATOMIC_ACQ_REL)) {
		for (int i = 0; coll_sources[i]; i++) {
			if (coll_sources[i]->finish) {
				coll_sources[i]->finish();
			}
		}
	}
	coll_lock(&drain_owner);
	int live = drain_t.started && !drain_t.finished;
	coll_unlock(&drain_owner);
	if (live) {
		queue_request(&r);
	}
	/* The drain thread ends after the final dump, also after one a
	 * signal asked for (coll_finish_signal). */
	coll_lock(&queue_q.lock);
	int running = drain_t.running;
	__atomic_store_n(&drain_t.running, 0, __ATOMIC_RELEASE);
	coll_unlock(&queue_q.lock);
	if (running) {
		pthread_join(drain_t.thread, NULL);
	}
	ring_drain_alive = 0;
}
