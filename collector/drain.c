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

#include "drain.h"

#define S coll_state

struct coll_lock drain_owner = COLL_LOCK_INIT(LOCK_OWNER);
struct drain_queue drain_q = {.lock = COLL_LOCK_INIT(LOCK_REQUESTS)};
struct drain_thread drain_t;

int coll_dump_signal;

/*
 * In a forked child the drain thread is started again from the fork
 * handler, except under AddressSanitizer: its allocator (GCC 12's) is not
 * made safe across fork, and a thread created inside the child's fork
 * handler sometimes waits forever on it. There the child's drain starts
 * at the next safe point instead (a new thread's first record, or a
 * request), and requests are served by their callers until then.
 */
int drain_defer_child;

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
void drain_wake(void)
{
	/* Already 1: the thread has not taken the last wake yet, and does
	 * not sleep before it does. */
	if (!__atomic_exchange_n(&drain_t.wake, 1, __ATOMIC_ACQ_REL)) {
		futex_wake(&drain_t.wake);
	}
}

/* Waits up to ms milliseconds, or not at all when woken since the last
 * wait. */
static void drain_wait(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	if (__atomic_exchange_n(&drain_t.wake, 0, __ATOMIC_ACQ_REL) ||
	    ms <= 0) {
		return;
	}
	syscall(SYS_futex, &drain_t.wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* Adds record c of thread tid to the tables, with its call site when it
 * is a span with a stack. */
static void agg_add_stacked(int tid, const struct coll_rec *c)
{
	uint32_t id = 0, sg = 0, sn = 0;

	if (c->kind == COLL_STACK && !S.pends) {
		S.pends = stack_pends_create();
	}
	if (S.pends) {
		id = stack_pends_rec(S.pends, tid, c);
	}
	if (c->kind == COLL_STACK) {
		return;
	}
	if (id) {
		uint32_t site = stack_site(id);
		if (!site ||
		    stack_site_row(c->group, c->name, site, &sg, &sn) < 0) {
			sg = sn = 0;
		}
	}
	struct agg_sample s = agg_rec_sample(c);
	agg_add_site(S.agg, (uint32_t)tid, c->t0, &s, sg, sn);
}

/*
 * A ring's records, converted in bulk (the clock's newest line, inline),
 * to the tables (with their call sites once stacks come) and, 256 at a
 * time, to the journal.
 */
static void emit(void *ctx, int tid, const struct coll_rec *recs, size_t n)
{
	struct coll_rec buf[256];
	struct clock_line line;
	int journal_ok = dump_ensure_journal() == 0;
	/* The run's end: past the ring's newest record, or the end of its
	 * array when the run is the first of two. */
	const struct coll_rec *last = recs + n;

	(void)ctx;
	clock_line(&line);
	if (journal_ok) {
		threads_name(S.j, tid, 0);
	}
	while (n > 0) {
		size_t k = n < 256 ? n : 256;
		int stacked = S.pends != NULL;
		for (size_t i = 0; i < k; i++) {
			const struct coll_rec *r = &recs[i];
			struct coll_rec *c = &buf[i];
			/* The ring's lines were written on another core: ask
			 * for them well before they are read, but not for
			 * those past the run, which the recording thread may
			 * be writing: they would be taken from it and given
			 * back. */
			if (r + 16 < last) {
				__builtin_prefetch(r + 16);
			}
			*c = *r;
			c->t0 = clock_line_to_ns(&line, r->t0);
			if (r->kind == COLL_SPAN || r->kind == COLL_FRAME) {
				uint64_t end = clock_line_to_ns(&line, r->t1);
				c->t1 = end > c->t0 ? end - c->t0 : 0;
			}
			stacked |= r->kind == COLL_STACK;
		}
		if (stacked) {
			for (size_t i = 0; i < k; i++) {
				agg_add_stacked(tid, &buf[i]);
			}
		} else {
			agg_add_recs_on(S.agg, (uint64_t)tid, buf, k);
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
	coll_lock(&drain_owner);
	int rc = -ESRCH;
	if (S.agg && !drain_t.finished) {
		pass();
		rc = dump_write(ring_dropped());
	}
	coll_unlock(&drain_owner);
	return rc;
}

static char *tables_now(const struct request *r)
{
	struct table_opts o = *r->o;
	char *s = NULL;

	sources_flush();
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished) {
		pass();
	}
	o.dropped = ring_dropped();
	o.extra = source_tables;
	o.meta = meta_pairs();
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
	coll_unlock(&drain_owner);
	if (!s) {
		errno = ENOMEM;
	}
	return s;
}

/* The end: the final dump when asked, the journal and status file gone.
 * Owner not held. */
static void finish_now(int dump)
{
	if (dump) {
		sources_flush();
	}
	coll_lock(&drain_owner);
	if (!drain_t.finished) {
		__atomic_store_n(&drain_t.finished, 1, __ATOMIC_RELEASE);
		if (dump && S.agg) {
			pass();
			if (dump != COLL_FINISH_IF_RECORDED || S.journal_open ||
			    S.cfg.continue_journal) {
				uint64_t dropped = ring_dropped();
				dump_write(dropped);
				dump_say_cut(dropped);
			}
		}
		if (S.journal_open > 0) {
			/* Keep the journal only if the trace could not be
			 * written: it is then the only copy of the timeline. */
			journal_close(S.j, S.last_trace_err == 0);
		}
		dump_remove_status();
	}
	coll_unlock(&drain_owner);
}

/* Before exec: everything into the journal, kept for the next image.
 * Owner not held. */
static int exec_now(struct request *r)
{
	int rc = -ESRCH;

	sources_flush();
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished && S.agg) {
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
	coll_unlock(&drain_owner);
	return rc;
}

static void serve(struct request *r)
{
	switch (r->type) {
	case REQ_FLUSH:
		sources_flush();
		coll_lock(&drain_owner);
		r->rc = drain_t.started && !drain_t.finished ? 0 : -ESRCH;
		if (r->rc == 0) {
			pass();
		}
		coll_unlock(&drain_owner);
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
	coll_lock(&drain_q.lock);
	struct request *r = drain_q.head;
	drain_q.head = drain_q.tail = NULL;
	coll_unlock(&drain_q.lock);
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
		coll_lock(&drain_owner);
		S.cfg.dump_signal = 0;
		S.cfg.dump_signal_taken = *unblocked;
		dump_write_status();
		coll_unlock(&drain_owner);
	}
	*unblocked = sig;
}

/* The end a fatal signal asked for: the final dump, then the waiters. */
static int serve_final(void)
{
	if (!__atomic_load_n(&drain_t.final_req, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	finish_now(1);
	__atomic_store_n(&drain_t.final_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &drain_t.final_done, FUTEX_WAKE_PRIVATE, INT32_MAX,
		NULL, NULL, 0);
	return 1;
}

static void *drain_main(void *arg)
{
	int unblocked = 0;

	(void)arg;
	ring_set_quiet(1);
	prctl(PR_SET_NAME, "mxprof-drain", 0, 0, 0);
	out_pipe_allow(1); /* big dumps are written by other threads */
	coll_lock(&drain_owner);
	dump_write_status();
	coll_unlock(&drain_owner);
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
		int ex = __atomic_exchange_n(&drain_t.exit_req, 0,
					     __ATOMIC_ACQ_REL);
		if (ex) {
			/* _exit: the caller waits on exit_done, not on a
			 * request (coll_finish_quick). */
			finish_now(ex - 1);
			__atomic_store_n(&drain_t.exit_done, 1,
					 __ATOMIC_RELEASE);
			syscall(SYS_futex, &drain_t.exit_done,
				FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
			break;
		}
		if (serve_final() || serve_all(take_requests()) ||
		    __atomic_load_n(&drain_t.pause_req, __ATOMIC_ACQUIRE)) {
			break;
		}
		coll_lock(&drain_owner);
		uint64_t got = pass();
		uint64_t now = ticks_mono_ns();
		int periodic = S.cfg.dump_period_s > 0 &&
			       now - S.last_dump_ns >=
				       (uint64_t)(S.cfg.dump_period_s * 1e9);
		void (*tick)(uint64_t) = S.cfg.tick;
		coll_unlock(&drain_owner);
		if (got >= ring_capacity / 8) {
			wait_ms = 0;
		} else if (got >= ring_capacity / 64) {
			wait_ms = 1;
		} else {
			wait_ms = (int)S.cfg.drain_period_ms;
		}
		if (__atomic_exchange_n(&drain_t.dump_req, 0,
					__ATOMIC_ACQ_REL) ||
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
	coll_lock(&drain_q.lock);
	drain_q.accepting = 0;
	coll_unlock(&drain_q.lock);
	serve_all(take_requests());
	return NULL;
}

int drain_start_thread(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	coll_lock(&drain_q.lock);
	int rc = pthread_create(&drain_t.thread, NULL, drain_main, NULL);
	if (rc == 0) {
		drain_q.accepting = 1;
		__atomic_store_n(&drain_t.running, 1, __ATOMIC_RELEASE);
		ring_drain_alive = 1;
	}
	coll_unlock(&drain_q.lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

/* Starts a forked child's drain thread if it was left for later. Only
 * where threads may start (not in a signal handler). */
static void start_pending(void)
{
	if (!__atomic_exchange_n(&drain_t.pending, 0, __ATOMIC_ACQ_REL)) {
		return;
	}
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished && !drain_t.running &&
	    drain_start_thread() < 0) {
		fprintf(stderr, "mxprof: cannot start the drain thread in "
				"child; records are drained at exit only\n");
	}
	coll_unlock(&drain_owner);
}

/*
 * Serves r on the drain thread and waits for it, or, when there is no
 * drain thread, on this thread. Returns r->rc.
 */
int drain_request(struct request *r)
{
	int quiet = ring_set_quiet(1);

	/* Neither the end nor an exec needs a thread: never start the one
	 * a forked child deferred for them (under AddressSanitizer a thread
	 * started in such a child can wait forever on the allocator's lock,
	 * which the fork left taken). An exec that fails leaves it for the
	 * next request. */
	if (r->type == REQ_FINISH) {
		__atomic_store_n(&drain_t.pending, 0, __ATOMIC_RELEASE);
	} else if (r->type != REQ_EXEC) {
		start_pending();
	}
	r->done = 0;
	r->next = NULL;
	coll_lock(&drain_q.lock);
	int queued = drain_q.accepting;
	if (queued) {
		if (drain_q.tail) {
			drain_q.tail->next = r;
		} else {
			drain_q.head = r;
		}
		drain_q.tail = r;
	}
	coll_unlock(&drain_q.lock);
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

int drain_setup(const struct coll_config *cfg)
{
	S.cfg = *cfg;
	__atomic_store_n(&S.pid, (int)getpid(), __ATOMIC_RELAXED);
	S.continued_records = 0;
	ring_capacity = cfg->ring_records;
	ring_capacity_max = cfg->ring_records_max > cfg->ring_records
				    ? cfg->ring_records_max
				    : cfg->ring_records;
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
	drain_defer_child = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
	ring_set_attach_notify(start_pending);
	ring_set_wake(drain_wake);
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
		rc = drain_start_thread();
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
	coll_unlock(&drain_owner);
	return busy;
}

void coll_set_dump_period(double seconds)
{
	coll_lock(&drain_owner);
	S.cfg.dump_period_s = seconds;
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
	struct request r = {.type = REQ_DUMP};

	coll_lock(&drain_owner);
	int live = drain_t.started && !drain_t.finished;
	coll_unlock(&drain_owner);
	return live ? drain_request(&r) : -ESRCH;
}

void coll_own(void)
{
	coll_lock(&drain_owner);
}

void coll_disown(void)
{
	coll_unlock(&drain_owner);
}

void coll_dump_async(void)
{
	int saved = errno;

	__atomic_store_n(&drain_t.dump_req, 1, __ATOMIC_RELEASE);
	drain_wake();
	errno = saved;
}

int coll_flush(void)
{
	struct request r = {.type = REQ_FLUSH};

	return drain_request(&r);
}

char *coll_dumps(int reset, const char *format, const char *sort_by,
		 int ascending, unsigned top)
{
	struct table_opts o = {.ascending = ascending, .top = top};
	struct request r = {.type = REQ_DUMPS, .reset = reset, .o = &o};

	if (table_parse_opts(&o, format, sort_by) < 0) {
		errno = EINVAL;
		return NULL;
	}
	drain_request(&r);
	if (!r.text) {
		errno = ENOMEM;
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
	coll_lock(&drain_q.lock);
	int running = drain_t.running;
	__atomic_store_n(&drain_t.running, 0, __ATOMIC_RELEASE);
	if (running) {
		__atomic_store_n(&drain_t.pause_req, 1, __ATOMIC_RELEASE);
	}
	coll_unlock(&drain_q.lock);
	if (!running) {
		return 0;
	}
	drain_wake();
	pthread_join(drain_t.thread, NULL);
	__atomic_store_n(&drain_t.pause_req, 0, __ATOMIC_RELEASE);
	return 1;
}

void coll_drain_resume(void)
{
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished && !drain_t.running &&
	    drain_start_thread() < 0) {
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
		drain_request(&r);
	}
	/* The drain thread ends after the final dump, also after one a
	 * signal asked for (coll_finish_signal). */
	coll_lock(&drain_q.lock);
	int running = drain_t.running;
	__atomic_store_n(&drain_t.running, 0, __ATOMIC_RELEASE);
	coll_unlock(&drain_q.lock);
	if (running) {
		pthread_join(drain_t.thread, NULL);
	}
	ring_drain_alive = 0;
}
