/*
 * drain.c - the drain thread: the owner of the collector's state.
 *
 * The drain thread runs every pass over the rings, every dump and every
 * source's callbacks; nothing else touches the journal, the aggregates or
 * a source's records. Other threads ask, through requests: a request
 * (flush, dump, dumps(), the final dump) is queued under a small lock, the
 * thread is woken, serves it in order and wakes the requester, who waits
 * on a futex without holding any lock. The dump signal's handler and the
 * continuous-dump timer only raise a flag the thread looks at.
 *
 * The owner lock (LOCK_OWNER) is held for each pass and each dump, never
 * while waiting and never around a source's flush or tick: a source may
 * call into its library there (a GPU library's flush runs its callback),
 * and that library may hold locks of its own that other threads need.
 * fork()'s prepare handler takes the owner lock, so a child sees the
 * state between two steps. When there is no drain thread (not started,
 * finished, or not restarted in a forked child), a requester takes the
 * owner lock and serves its request itself.
 *
 * A pass moves every ring's new records through clock conversion into the
 * journal and the aggregates, lets every source take in what it was
 * handed, then writes the journal out, so that at most one drain period
 * is lost if the process is killed. A dump then writes the trace and the
 * tables (dump.c).
 *
 * The drain thread blocks every signal (the program's handlers never run on
 * it) and marks itself quiet (nothing it does is recorded).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define S coll_state

enum req_type { REQ_FLUSH, REQ_DUMP, REQ_DUMPS, REQ_FINISH, REQ_EXEC };

/* A request to the drain thread, on the requester's stack. */
struct request {
	int type;		    /* enum req_type                   */
	int dump;		    /* REQ_FINISH: write a final dump  */
	int reset;		    /* REQ_DUMPS: reset the aggregates */
	const struct table_opts *o; /* REQ_DUMPS                       */
	char *text;		    /* REQ_DUMPS: the result           */
	char *trace;		    /* REQ_EXEC: the trace path        */
	size_t trace_len;
	int rc;
	int done; /* futex word: 1 once served */
	struct request *next;
};

static struct coll_lock owner = COLL_LOCK_INIT(LOCK_OWNER);

static struct {
	struct coll_lock lock; /* LOCK_REQUESTS: the queue and accepting */
	struct request *head, *tail;
	int accepting; /* the drain thread serves requests */
} Q = {.lock = COLL_LOCK_INIT(LOCK_REQUESTS)};

/* The drain thread and its flags (atomic where marked). */
static struct {
	int started;  /* coll_start() ran (owner)              */
	int finished; /* coll_finish() ran (owner)             */
	pthread_t thread;
	int running;	/* the thread exists, not yet joined     */
	int dump_req;	/* atomic: the dump signal came          */
	int wake;	/* atomic: the thread's futex, 1 = woken */
	int pending;	/* atomic: a forked child's thread is to start */
	int final_req;	/* atomic: a fatal signal asks for the end */
	int final_done; /* futex word: 1 once that end is written */
	int exit_req;	/* atomic: the final dump for _exit, dump + 1 */
	int exit_done;	/* atomic: the thread's futex, 1 = written */
} T;

int coll_dump_signal;

/*
 * In a forked child the drain thread is started again from the fork
 * handler, except under AddressSanitizer: its allocator (GCC 12's) is not
 * made safe across fork, and a thread created inside the child's fork
 * handler sometimes waits forever on it. There the child's drain starts
 * at the next safe point instead (a new thread's first record, or a
 * request), and requests are served by their callers until then.
 */
static int defer_child_drain;

static void futex_wake(int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * Waking the drain thread. A futex, not a file descriptor: programs close
 * every descriptor they did not open (daemons, closefrom) and reuse the
 * numbers, and a descriptor of ours would then be the program's file or
 * pipe. futex(2) is async-signal-safe, so the dump signal's handler wakes
 * the thread with it.
 */
static void drain_wake(void)
{
	__atomic_store_n(&T.wake, 1, __ATOMIC_RELEASE);
	futex_wake(&T.wake);
}

/* Waits up to ms milliseconds, or not at all when woken since the last
 * wait. */
static void drain_wait(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	if (__atomic_exchange_n(&T.wake, 0, __ATOMIC_ACQ_REL) || ms <= 0) {
		return;
	}
	syscall(SYS_futex, &T.wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static void emit(void *ctx, int tid, const struct coll_rec *recs, size_t n)
{
	struct coll_rec buf[256];
	int journal_ok = dump_ensure_journal() == 0;

	(void)ctx;
	if (journal_ok) {
		threads_name(S.j, tid, 0);
	}
	while (n > 0) {
		size_t k = n < 256 ? n : 256;
		for (size_t i = 0; i < k; i++) {
			const struct coll_rec *r = &recs[i];
			struct coll_rec *c = &buf[i];
			*c = *r;
			c->t0 = clock_to_ns(r->t0);
			if (r->kind == COLL_SPAN || r->kind == COLL_FRAME) {
				uint64_t end = clock_to_ns(r->t1);
				c->t1 = end > c->t0 ? end - c->t0 : 0;
			}
			agg_add_rec(S.agg, c);
		}
		if (journal_ok) {
			journal_recs(S.j, tid, buf, k);
		}
		recs += k;
		n -= k;
	}
}

/* A tick count as nanoseconds: the clock is linear between anchors. */
static int64_t ticks_span_ns(int64_t d)
{
	uint64_t base = ticks_now();

	return d > 0 ? (int64_t)(clock_to_ns(base + (uint64_t)d) -
				 clock_to_ns(base))
		     : 0;
}

/* What full rings tallied (tally.c) goes to the tables only. */
static void tally_emit(void *ctx, const struct tally_row *w)
{
	struct agg_sample s = {.group = w->group,
			       .name = w->name,
			       .kind = w->kind,
			       .flags = w->flags};
	int64_t total = w->total, min = w->min, max = w->max;

	(void)ctx;
	if (w->kind == COLL_SPAN || w->kind == COLL_FRAME) {
		total = ticks_span_ns(total);
		min = ticks_span_ns(min);
		max = ticks_span_ns(max);
	}
	agg_add_many(S.agg, &s, w->count, total, min, max, w->errors);
}

void coll_thread_seen(int tid)
{
	if (dump_ensure_journal() == 0) {
		threads_name(S.j, tid, 0);
	}
}

/* One pass; owner held. Returns the records taken from the rings. */
static uint64_t pass(void)
{
	ring_set_tally_sink(tally_emit, NULL);
	uint64_t n = ring_collect(emit, NULL);

	for (int i = 0; coll_sources[i]; i++) {
		if (coll_sources[i]->drain) {
			coll_sources[i]->drain(S.agg);
		}
	}
	if (S.journal_open > 0) {
		journal_flush(S.j);
	}
	return n;
}

/* Every source hands over what it buffers; no collector lock held. */
static void sources_flush(void)
{
	for (int i = 0; coll_sources[i]; i++) {
		if (coll_sources[i]->flush) {
			coll_sources[i]->flush();
		}
	}
}

static void sources_tick(uint64_t now)
{
	for (int i = 0; coll_sources[i]; i++) {
		if (coll_sources[i]->tick) {
			coll_sources[i]->tick(now);
		}
	}
}

/* A dump: the sources' buffers, a pass, the files. Owner not held. */
static int dump_now(void)
{
	sources_flush();
	coll_lock(&owner);
	int rc = -ESRCH;
	if (S.agg && !T.finished) {
		pass();
		rc = dump_write(ring_dropped());
	}
	coll_unlock(&owner);
	return rc;
}

static char *tables_now(const struct request *r)
{
	struct table_opts o = *r->o;
	char *s = NULL;

	sources_flush();
	coll_lock(&owner);
	if (T.started && !T.finished) {
		pass();
	}
	o.dropped = ring_dropped();
	o.extra = source_tables;
	if (S.agg) {
		s = table_format(S.agg, &o);
		if (r->reset) {
			agg_reset(S.agg);
			for (int i = 0; coll_sources[i]; i++) {
				if (coll_sources[i]->reset) {
					coll_sources[i]->reset();
				}
			}
		}
	} else {
		struct agg *empty = agg_create();
		s = empty ? table_format(empty, &o) : NULL;
		agg_destroy(empty);
	}
	coll_unlock(&owner);
	if (!s) {
		errno = ENOMEM;
	}
	return s;
}

/* One line at exit when the timeline lost slices to full buffers or was
 * cut at MXPROF_MAX_TRACE_MB, naming the setting to change. Owner held. */
static void say_timeline_cut(uint64_t dropped)
{
	uint64_t lost = ring_tally_lost();
	int cut = S.j && S.j->truncated;
	char also[96] = "";

	if (!dropped && !cut) {
		return;
	}
	if (lost) {
		snprintf(also, sizeof(also),
			 " (%llu of them missing from the "
			 "tables too)",
			 (unsigned long long)lost);
	}
	if (dropped) {
		fprintf(stderr,
			"mxprof: the timeline dropped %llu records from full "
			"per-thread buffers%s%s; the tables count %s: raise "
			"MXPROF_BUFFER_KB (now %u) or set "
			"MXPROF_OVERFLOW=block\n",
			(unsigned long long)dropped, also,
			cut ? " and was cut at MXPROF_MAX_TRACE_MB" : "",
			lost ? "the rest" : "them all",
			(unsigned)(ring_capacity * sizeof(struct coll_rec) /
				   1024));
	} else {
		fprintf(stderr,
			"mxprof: the timeline was cut at "
			"MXPROF_MAX_TRACE_MB=%llu; "
			"the tables count everything: raise it, or 0 for no "
			"cap\n",
			(unsigned long long)(S.cfg.max_trace_bytes >> 20));
	}
}

/* The end: the final dump when asked, the journal and status file gone.
 * Owner not held. */
static void finish_now(int dump)
{
	if (dump) {
		sources_flush();
	}
	coll_lock(&owner);
	if (!T.finished) {
		__atomic_store_n(&T.finished, 1, __ATOMIC_RELEASE);
		if (dump && S.agg) {
			pass();
			if (dump != COLL_FINISH_IF_RECORDED || S.journal_open ||
			    S.cfg.continue_journal) {
				uint64_t dropped = ring_dropped();
				dump_write(dropped);
				say_timeline_cut(dropped);
			}
		}
		if (S.journal_open > 0) {
			/* Keep the journal only if the trace could not be
			 * written: it is then the only copy of the timeline. */
			journal_close(S.j, S.last_trace_err == 0);
		}
		dump_remove_status();
	}
	coll_unlock(&owner);
}

/* Before exec: everything into the journal, kept for the next image.
 * Owner not held. */
static int exec_now(struct request *r)
{
	int rc = -ESRCH;

	sources_flush();
	coll_lock(&owner);
	if (T.started && !T.finished && S.agg) {
		pass();
		rc = 0;
		if (S.journal_open > 0) {
			journal_stats(S.j, ring_dropped());
			if (journal_flush(S.j) == 0) {
				snprintf(r->trace, r->trace_len, "%s",
					 S.cfg.output);
				rc = 1;
			}
		}
		/* The next image writes its own when it starts. */
		dump_remove_status();
	}
	coll_unlock(&owner);
	return rc;
}

static void serve(struct request *r)
{
	switch (r->type) {
	case REQ_FLUSH:
		sources_flush();
		coll_lock(&owner);
		r->rc = T.started && !T.finished ? 0 : -ESRCH;
		if (r->rc == 0) {
			pass();
		}
		coll_unlock(&owner);
		break;
	case REQ_DUMP:
		r->rc = dump_now();
		break;
	case REQ_DUMPS:
		r->text = tables_now(r);
		r->rc = r->text ? 0 : -ENOMEM;
		break;
	case REQ_FINISH:
		finish_now(r->dump);
		r->rc = 0;
		break;
	case REQ_EXEC:
		r->rc = exec_now(r);
		break;
	}
}

/* Takes the queued requests, oldest first. */
static struct request *take_requests(void)
{
	coll_lock(&Q.lock);
	struct request *r = Q.head;
	Q.head = Q.tail = NULL;
	coll_unlock(&Q.lock);
	return r;
}

/* Serves the requests in list and wakes their requesters. Returns
 * non-zero when one of them was the final one. */
static int serve_all(struct request *list)
{
	int finished = 0;

	while (list) {
		struct request *next = list->next;
		serve(list);
		finished |= list->type == REQ_FINISH;
		/* The requester may return, and its stack frame go, as soon
		 * as done is set: nothing of it is touched after this. */
		__atomic_store_n(&list->done, 1, __ATOMIC_RELEASE);
		futex_wake(&list->done);
		list = next;
	}
	return finished;
}

/*
 * Keeps the dump signal unblocked on this thread while it is the dump
 * signal (the program's threads block it), blocked once the program took
 * it over. The raw system call: the library's own pthread_sigmask and
 * sigaction are the program's view (signals.c).
 */
static void dump_signal_mask(int *unblocked)
{
	int sig = __atomic_load_n(&coll_dump_signal, __ATOMIC_ACQUIRE);
	uint64_t bit;

	if (sig == *unblocked) {
		return;
	}
	if (*unblocked) {
		bit = 1ull << (*unblocked - 1);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &bit, NULL, sizeof(bit));
	}
	if (sig > 0 && sig <= 64) {
		bit = 1ull << (sig - 1);
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit, NULL,
			sizeof(bit));
	}
	if (sig == 0) {
		/* The status file no longer names it: mxprof dump must not
		 * send the program a signal it handles itself. */
		coll_lock(&owner);
		S.cfg.dump_signal = 0;
		dump_write_status();
		coll_unlock(&owner);
	}
	*unblocked = sig;
}

/* The end a fatal signal asked for: the final dump, then the waiters. */
static int serve_final(void)
{
	if (!__atomic_load_n(&T.final_req, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	finish_now(1);
	__atomic_store_n(&T.final_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &T.final_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL,
		NULL, 0);
	return 1;
}

static void *drain_main(void *arg)
{
	int unblocked = 0;

	(void)arg;
	ring_set_quiet(1);
	prctl(PR_SET_NAME, "mxprof-drain", 0, 0, 0);
	coll_lock(&owner);
	dump_write_status();
	coll_unlock(&owner);
	/*
	 * The wait adapts to the load: a pass that found an eighth of a ring
	 * or more starts the next at once, one that found a 64th waits 1 ms,
	 * and a lighter pass waits the full period (a program that records
	 * little is woken no more often than that). A flooding thread fills
	 * its ring in a few milliseconds, and a fixed period would turn that
	 * into drops. The ticks still come once per period.
	 */
	int wait_ms = (int)S.cfg.drain_period_ms;
	uint64_t last_tick = 0;
	uint64_t period_ns = (uint64_t)S.cfg.drain_period_ms * 1000000u;
	for (;;) {
		dump_signal_mask(&unblocked);
		drain_wait(wait_ms);
		int ex = __atomic_exchange_n(&T.exit_req, 0, __ATOMIC_ACQ_REL);
		if (ex) {
			/* _exit: the caller waits on exit_done, not on a
			 * request (coll_finish_quick). */
			finish_now(ex - 1);
			__atomic_store_n(&T.exit_done, 1, __ATOMIC_RELEASE);
			syscall(SYS_futex, &T.exit_done, FUTEX_WAKE_PRIVATE,
				INT_MAX, NULL, NULL, 0);
			break;
		}
		if (serve_final() || serve_all(take_requests())) {
			break;
		}
		coll_lock(&owner);
		uint64_t got = pass();
		uint64_t now = ticks_mono_ns();
		int periodic = S.cfg.dump_period_s > 0 &&
			       now - S.last_dump_ns >=
				       (uint64_t)(S.cfg.dump_period_s * 1e9);
		void (*tick)(uint64_t) = S.cfg.tick;
		coll_unlock(&owner);
		if (got >= ring_capacity / 8) {
			wait_ms = 0;
		} else if (got >= ring_capacity / 64) {
			wait_ms = 1;
		} else {
			wait_ms = (int)S.cfg.drain_period_ms;
		}
		if (__atomic_exchange_n(&T.dump_req, 0, __ATOMIC_ACQ_REL) ||
		    periodic) {
			dump_now();
		}
		if (now - last_tick < period_ns) {
			continue;
		}
		last_tick = now;
		/* No collector lock held: the state machine's tick takes
		 * LOCK_STATE, which comes before the owner lock. */
		if (tick) {
			tick(now);
		}
		sources_tick(now);
	}
	/* Requests that came while the last one was served: their callers
	 * find the collector finished. */
	coll_lock(&Q.lock);
	Q.accepting = 0;
	coll_unlock(&Q.lock);
	serve_all(take_requests());
	return NULL;
}

static int start_thread(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	coll_lock(&Q.lock);
	int rc = pthread_create(&T.thread, NULL, drain_main, NULL);
	if (rc == 0) {
		Q.accepting = 1;
		__atomic_store_n(&T.running, 1, __ATOMIC_RELEASE);
		ring_drain_alive = 1;
	}
	coll_unlock(&Q.lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

/* Starts a forked child's drain thread if it was left for later. Only
 * where threads may start (not in a signal handler). */
static void start_pending(void)
{
	if (!__atomic_exchange_n(&T.pending, 0, __ATOMIC_ACQ_REL)) {
		return;
	}
	coll_lock(&owner);
	if (T.started && !T.finished && !T.running && start_thread() < 0) {
		fprintf(stderr, "mxprof: cannot start the drain thread in "
				"child; records are drained at exit only\n");
	}
	coll_unlock(&owner);
}

/*
 * Serves r on the drain thread and waits for it, or, when there is no
 * drain thread, on this thread. Returns r->rc.
 */
static int request(struct request *r)
{
	int quiet = ring_set_quiet(1);

	start_pending();
	r->done = 0;
	r->next = NULL;
	coll_lock(&Q.lock);
	int queued = Q.accepting;
	if (queued) {
		if (Q.tail) {
			Q.tail->next = r;
		} else {
			Q.head = r;
		}
		Q.tail = r;
	}
	coll_unlock(&Q.lock);
	if (queued) {
		drain_wake();
		while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
			syscall(SYS_futex, &r->done, FUTEX_WAIT_PRIVATE, 0,
				NULL, NULL, 0);
		}
	} else {
		serve(r);
	}
	ring_set_quiet(quiet);
	return r->rc;
}

/* The tables of an exec'ed image start from the records of the images
 * before it, read back from their journal. */
static void continue_tables(void)
{
	char journal[4200];
	struct recovery *r = malloc(sizeof(*r));

	if (!r || paths_journal(S.cfg.output, journal, sizeof(journal)) < 0) {
		free(r);
		return;
	}
	if (recover_open(r, journal) == 0) {
		agg_destroy(S.agg);
		S.agg = r->agg;
		r->agg = NULL;
		S.continued_records = r->records;
	}
	recover_close(r);
	free(r);
}

static int setup(const struct coll_config *cfg)
{
	S.cfg = *cfg;
	__atomic_store_n(&S.pid, (int)getpid(), __ATOMIC_RELAXED);
	S.continued_records = 0;
	ring_capacity = cfg->ring_records;
	ring_overflow = cfg->overflow;
	paths_stats(S.cfg.output, S.stats_path, sizeof(S.stats_path));
	S.journal_open = 0;
	S.dumps_done = 0;
	S.last_dump_ns = ticks_mono_ns();
	threads_forget();
	if (!S.j) {
		S.j = calloc(1, sizeof(*S.j));
	}
	if (!S.agg) {
		S.agg = agg_create();
	}
	if (!S.j || !S.agg) {
		return -ENOMEM;
	}
	S.j->fd = -1;
	if (S.cfg.continue_journal) {
		continue_tables();
	}
	return 0;
}

int coll_init(void)
{
	clock_init();
	journal_reserve_fds();
	defer_child_drain = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
	ring_set_attach_notify(start_pending);
	return ring_init();
}

int coll_start(const struct coll_config *cfg)
{
	int rc;

	coll_lock(&owner);
	if (T.started) {
		coll_unlock(&owner);
		return 0;
	}
	rc = setup(cfg);
	if (rc == 0) {
		__atomic_store_n(&T.started, 1, __ATOMIC_RELEASE);
		rc = start_thread();
	}
	coll_unlock(&owner);
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
	coll_lock(&owner);
	int busy = S.journal_open != 0;
	if (!busy) {
		snprintf(S.cfg.output, sizeof(S.cfg.output), "%s", output);
		paths_stats(S.cfg.output, S.stats_path, sizeof(S.stats_path));
	}
	coll_unlock(&owner);
	return busy ? -EBUSY : 0;
}

void coll_set_dump_period(double seconds)
{
	coll_lock(&owner);
	S.cfg.dump_period_s = seconds;
	coll_unlock(&owner);
}

int coll_live_here(void)
{
	/* A vfork child must not wait for the parent's locks. */
	if (__atomic_load_n(&S.pid, __ATOMIC_RELAXED) != (int)getpid()) {
		return 0;
	}
	coll_lock(&owner);
	int live = T.started && !T.finished && S.pid == (int)getpid();
	coll_unlock(&owner);
	return live;
}

int coll_finish_quick(int dump, unsigned wait_ms)
{
	static const char gave_up[] =
		"mxprof: the final dump did not finish in time at _exit; the "
		"journal keeps what was drained\n";
	int saved = errno;

	if (__atomic_load_n(&S.pid, __ATOMIC_RELAXED) != (int)getpid() ||
	    !__atomic_load_n(&T.started, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&T.finished, __ATOMIC_ACQUIRE)) {
		return -ESRCH;
	}
	if (!__atomic_load_n(&T.running, __ATOMIC_ACQUIRE)) {
		/* No drain thread (yet): the caller does it, with locks. */
		coll_finish(dump);
		return 0;
	}
	ring_set_quiet(1);
	__atomic_store_n(&T.exit_req, dump + 1, __ATOMIC_RELEASE);
	drain_wake();
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!__atomic_load_n(&T.exit_done, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t left =
			(int64_t)wait_ms * 1000000 -
			((int64_t)(now.tv_sec - start.tv_sec) * 1000000000 +
			 (now.tv_nsec - start.tv_nsec));
		if (left <= 0) {
			ssize_t w = write(2, gave_up, sizeof(gave_up) - 1);
			(void)w;
			errno = saved;
			return -ETIMEDOUT;
		}
		struct timespec ts = {left / 1000000000, left % 1000000000};
		syscall(SYS_futex, &T.exit_done, FUTEX_WAIT_PRIVATE, 0, &ts,
			NULL, 0);
	}
	errno = saved;
	return 0;
}

int coll_exec_prepare(char *trace, size_t len)
{
	struct request r = {.type = REQ_EXEC, .trace = trace, .trace_len = len};

	if (!coll_live_here()) {
		return -ESRCH;
	}
	return request(&r);
}

int coll_continue_origin(const char *trace)
{
	char journal[4200];
	uint64_t mono;
	int64_t utc;
	int rc = paths_journal(trace, journal, sizeof(journal));

	if (rc == 0) {
		rc = journal_origin(journal, (int)getpid(), &mono, &utc);
	}
	if (rc == 0) {
		clock_set_origin(mono, utc);
	}
	return rc;
}

int coll_dump(void)
{
	struct request r = {.type = REQ_DUMP};

	coll_lock(&owner);
	int live = T.started && !T.finished;
	coll_unlock(&owner);
	return live ? request(&r) : -ESRCH;
}

void coll_own(void)
{
	coll_lock(&owner);
}

void coll_disown(void)
{
	coll_unlock(&owner);
}

void coll_dump_async(void)
{
	int saved = errno;

	__atomic_store_n(&T.dump_req, 1, __ATOMIC_RELEASE);
	drain_wake();
	errno = saved;
}

int coll_finish_signal(int ms)
{
	struct timespec now, end;

	if (!__atomic_load_n(&T.running, __ATOMIC_ACQUIRE)) {
		return -ESRCH;
	}
	if (pthread_equal(pthread_self(), T.thread)) {
		return -EDEADLK;
	}
	__atomic_store_n(&T.final_req, 1, __ATOMIC_RELEASE);
	drain_wake();
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	while (!__atomic_load_n(&T.final_done, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		struct timespec left = {end.tv_sec - now.tv_sec,
					end.tv_nsec - now.tv_nsec};
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000;
		}
		if (left.tv_sec < 0) {
			return -ETIMEDOUT;
		}
		syscall(SYS_futex, &T.final_done, FUTEX_WAIT_PRIVATE, 0, &left,
			NULL, 0);
	}
	return 0;
}

int coll_flush(void)
{
	struct request r = {.type = REQ_FLUSH};

	return request(&r);
}

char *coll_dumps(int reset, const char *format, const char *sort_by,
		 int ascending)
{
	struct table_opts o = {.ascending = ascending};
	struct request r = {.type = REQ_DUMPS, .reset = reset, .o = &o};

	if (table_parse_opts(&o, format, sort_by) < 0) {
		errno = EINVAL;
		return NULL;
	}
	request(&r);
	if (!r.text) {
		errno = ENOMEM;
	}
	return r.text;
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
	coll_lock(&owner);
	int live = T.started && !T.finished;
	coll_unlock(&owner);
	if (live) {
		request(&r);
	}
	/* The drain thread ends after the final dump, also after one a
	 * signal asked for (coll_finish_signal). */
	coll_lock(&Q.lock);
	int running = T.running;
	__atomic_store_n(&T.running, 0, __ATOMIC_RELEASE);
	coll_unlock(&Q.lock);
	if (running) {
		pthread_join(T.thread, NULL);
	}
	ring_drain_alive = 0;
}

/* The signal mask of the forking thread, from prepare to parent/child. */
static sigset_t fork_mask;

/* Runs the fork callback of every source whose lock has rank rank. */
static void sources_fork(int rank, int which)
{
	for (int i = 0; coll_sources[i]; i++) {
		const struct coll_source *s = coll_sources[i];
		void (*fn)(void) = which == 0	? s->fork_prepare
				   : which == 1 ? s->fork_parent
						: s->fork_child;
		if (s->fork_rank == rank && fn) {
			fn();
		}
	}
}

/*
 * fork(): every lock of the written order, with every signal blocked (a
 * handler that records or dumps must not run while they are held).
 */
void coll_fork_prepare(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fork_mask);
	for (int rank = 1; rank < LOCK_OWNER; rank++) {
		sources_fork(rank, 0);
	}
	coll_lock(&owner);
	coll_lock(&Q.lock);
	window_fork_prepare();
	threads_fork_prepare();
	cat_fork_prepare();
	strtab_lock();
}

/* Releases what coll_fork_prepare() took, last first; which: 1 parent,
 * 2 child. */
static void fork_release(int which)
{
	strtab_unlock();
	cat_fork_parent();
	threads_fork_parent();
	if (which == 1) {
		window_fork_parent();
	} else {
		window_fork_child();
	}
	coll_unlock(&Q.lock);
	coll_unlock(&owner);
	for (int rank = LOCK_OWNER - 1; rank >= 1; rank--) {
		sources_fork(rank, which);
	}
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

void coll_fork_parent(void)
{
	fork_release(1);
}

void coll_fork_child(const char *output)
{
	ring_after_fork_child();
	/* Requests queued by the parent's other threads: those threads are
	 * not in the child, and nobody waits here. */
	Q.head = Q.tail = NULL;
	Q.accepting = 0;
	__atomic_store_n(&T.running, 0, __ATOMIC_RELEASE);
	T.wake = 0;
	T.dump_req = 0;
	T.final_req = 0;
	T.final_done = 0;
	T.exit_req = 0;
	T.exit_done = 0;
	ring_drain_alive = 0;
	if (T.started && !T.finished) {
		/* The parent's journal stays the parent's: forget it
		 * unflushed. */
		if (S.journal_open > 0) {
			close(S.j->fd);
		}
		S.j->fd = -1;
		S.j->n = 0;
		if (S.agg) {
			agg_reset(S.agg);
		}
		snprintf(S.cfg.output, sizeof(S.cfg.output), "%s", output);
		/* The child's journal is its own, new. */
		S.cfg.continue_journal = 0;
		setup(&S.cfg);
	}
	fork_release(2);
	if (!T.started || T.finished) {
		return;
	}
	if (defer_child_drain) {
		__atomic_store_n(&T.pending, 1, __ATOMIC_RELEASE);
	} else if (start_thread() < 0) {
		fprintf(stderr, "mxprof: cannot start the drain thread in "
				"child; records are drained at exit only\n");
	}
}
