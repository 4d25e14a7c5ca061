/*
 * drain.c - the drain thread, dumps and the collector's life cycle.
 *
 * One mutex (the drain lock) serialises everything that reads the rings or
 * touches the journal and the aggregates: the periodic pass of the drain
 * thread, a dump (from the drain thread after a signal, or synchronously
 * from mxprof_dump()), dumps() and the final dump at exit.
 *
 * A pass moves every ring's new records through clock conversion into the
 * journal and the aggregates, then writes the journal out, so that at most
 * one drain period is lost if the process is killed. A dump then turns the
 * journal into the trace and the aggregates into the tables, each written
 * to a temporary file and renamed into place.
 *
 * The drain thread blocks every signal (the program's handlers never run on
 * it) and marks itself quiet (nothing it does is recorded). The signal
 * handler of the dump signal only sets a flag and writes to an eventfd.
 *
 * The journal is created on the first pass that has records, so a process
 * that records nothing (a forked child that execs at once) leaves no file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

struct tid_name {
	int tid;
	char name[32];
};

/* Names given to threads by the program (NVTX), over their OS names. */
static struct tid_name name_over[64];
static int nname_over;

static struct {
	pthread_mutex_t lock;
	struct coll_config cfg;
	struct journal *j;
	int journal_open; /* 1 open, -1 failed, 0 not yet */
	struct agg *agg;
	int started;
	int finished;
	pthread_t thread;
	int thread_running;
	int stop;     /* atomic */
	int dump_req; /* atomic */
	int wake;     /* atomic: the drain thread's futex, 1 when woken */
	uint64_t dumps_done;
	uint64_t last_dump_ns;
	int last_trace_err;
	int last_stats_err;
	struct tid_name *tids;
	size_t ntids, cap_tids;
	char stats_path[4200];
	char journal_path[4200];
} D = {.lock = PTHREAD_MUTEX_INITIALIZER};

/*
 * Waking the drain thread. A futex, not a file descriptor: programs close
 * every descriptor they did not open (daemons, closefrom) and reuse the
 * numbers, and a descriptor of ours would then be the program's file or
 * pipe. futex(2) is async-signal-safe, so the dump signal's handler wakes
 * the thread with it.
 */
static void drain_wake(void)
{
	__atomic_store_n(&D.wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &D.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits up to ms milliseconds, or not at all when woken since the last
 * wait. */
static void drain_wait(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	if (__atomic_exchange_n(&D.wake, 0, __ATOMIC_ACQ_REL) || ms <= 0) {
		return;
	}
	syscall(SYS_futex, &D.wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static void read_comm(int tid, char *buf, size_t len)
{
	char path[64];

	if (tid) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	} else {
		snprintf(path, sizeof(path), "/proc/self/comm");
	}
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * Can the trace go to path? Committing a file renames it over path, so a
 * path that ends in '/' or names a folder, a device (MXPROF_OUTPUT=
 * /dev/null, as root) or a pipe is refused: NULL when usable, else why.
 */
static const char *output_unusable(const char *path)
{
	struct stat st;
	size_t n = strlen(path);

	if (n == 0 || path[n - 1] == '/') {
		return "it names a folder";
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		return S_ISDIR(st.st_mode) ? "it is a folder"
					   : "it is not a regular file";
	}
	return NULL;
}

static int ensure_journal(void)
{
	if (D.journal_open) {
		return D.journal_open > 0 ? 0 : -EIO;
	}
	paths_journal(D.cfg.output, D.journal_path, sizeof(D.journal_path));
	D.j->max_bytes = D.cfg.max_trace_bytes;
	const char *why = output_unusable(D.cfg.output);
	int rc = why ? -EINVAL
		     : journal_open(D.j, D.journal_path, (int)getpid());
	if (rc < 0 && rc != -ENOMEM) {
		/* The output folder is not writable, or the path is not one
		 * a file may replace: keep everything, in the temporary
		 * folder, and say where once. */
		const char *tmp = getenv("TMPDIR");
		const char *base = strrchr(D.cfg.output, '/');
		char fallback[sizeof(D.cfg.output)];
		base = base ? base + 1 : D.cfg.output;
		snprintf(fallback, sizeof(fallback), "%s/mxprof-%d-%s",
			 tmp && *tmp ? tmp : "/tmp", (int)getpid(),
			 *base && !why ? base : "profile.json");
		fprintf(stderr,
			"mxprof: cannot write %s %s: %s; writing "
			"%s instead\n",
			why ? "to" : "beside", D.cfg.output,
			why ? why : strerror(-rc), fallback);
		snprintf(D.cfg.output, sizeof(D.cfg.output), "%s", fallback);
		paths_stats(D.cfg.output, D.stats_path, sizeof(D.stats_path));
		paths_journal(D.cfg.output, D.journal_path,
			      sizeof(D.journal_path));
		rc = journal_open(D.j, D.journal_path, (int)getpid());
	}
	if (rc < 0) {
		fprintf(stderr,
			"mxprof: cannot create %s: %s; no timeline will be "
			"written, the tables will\n",
			D.journal_path, strerror(-rc));
		D.journal_open = -1;
		return rc;
	}
	D.j->max_bytes = D.cfg.max_trace_bytes;
	D.journal_open = 1;
	return 0;
}

/* Names thread tid in the journal if it is new, or if renamed. */
static void name_thread(int tid, int refresh)
{
	struct tid_name *t = NULL;
	char name[32];

	for (size_t i = 0; i < D.ntids; i++) {
		if (D.tids[i].tid == tid) {
			t = &D.tids[i];
			break;
		}
	}
	if (t && !refresh) {
		return;
	}
	read_comm(tid, name, sizeof(name));
	for (int i = 0; i < nname_over; i++) {
		if (name_over[i].tid == tid) {
			snprintf(name, sizeof(name), "%s", name_over[i].name);
		}
	}
	if (!t) {
		if (D.ntids == D.cap_tids) {
			size_t n = D.cap_tids ? D.cap_tids * 2 : 64;
			struct tid_name *nt = realloc(D.tids, n * sizeof(*nt));
			if (!nt) {
				return;
			}
			D.tids = nt;
			D.cap_tids = n;
		}
		t = &D.tids[D.ntids++];
		t->tid = tid;
		t->name[0] = 0;
		if (!name[0]) {
			snprintf(name, sizeof(name), "thread %d", tid);
		}
	} else if (!name[0] || strcmp(name, t->name) == 0) {
		return;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	journal_thread(D.j, tid, t->name);
}

static void emit(void *ctx, int tid, const struct coll_rec *recs, size_t n)
{
	struct coll_rec buf[256];
	int journal_ok = ensure_journal() == 0;

	(void)ctx;
	if (journal_ok) {
		name_thread(tid, 0);
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
			agg_add_rec(D.agg, c);
		}
		if (journal_ok) {
			journal_recs(D.j, tid, buf, k);
		}
		recs += k;
		n -= k;
	}
}

/* Names a thread seen only through its CUDA API records. */
static void name_gpu_thread(int tid)
{
	if (ensure_journal() == 0) {
		name_thread(tid, 0);
	}
}

/* One pass; drain lock held. */
static uint64_t pass(void)
{
	uint64_t n = ring_collect(emit, NULL);

	gpu_drain(D.agg, name_gpu_thread);
	if (D.journal_open > 0) {
		journal_flush(D.j);
	}
	return n;
}

static void refresh_thread(void *ctx, int tid, int dead)
{
	(void)ctx;
	if (!dead) {
		name_thread(tid, 1);
	}
}

void coll_thread_name(int tid, const char *name)
{
	int quiet = ring_set_quiet(1);

	pthread_mutex_lock(&D.lock);
	int i = 0;
	while (i < nname_over && name_over[i].tid != tid) {
		i++;
	}
	if (i < 64 && name) {
		name_over[i].tid = tid;
		snprintf(name_over[i].name, sizeof(name_over[i].name), "%s",
			 name);
		if (i == nname_over) {
			nname_over++;
		}
	}
	pthread_mutex_unlock(&D.lock);
	ring_set_quiet(quiet);
}

static void abs_path(const char *p, char *buf, size_t len)
{
	char cwd[4096];

	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
		snprintf(buf, len, "%s", p);
	} else {
		snprintf(buf, len, "%s/%s", cwd, p);
	}
}

static void write_status(void)
{
	char path[4200], dir[4200], line[9000], out_abs[4200], stats_abs[4200];
	struct out *o = malloc(sizeof(*o));

	if (!o || paths_status((int)getpid(), path, sizeof(path)) < 0) {
		free(o);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	mkdir(dir, 0700);
	abs_path(D.cfg.output, out_abs, sizeof(out_abs));
	abs_path(D.stats_path, stats_abs, sizeof(stats_abs));
	if (out_open(o, path, 0) == 0) {
		snprintf(line, sizeof(line),
			 "output=%s\nstats=%s\nsignal=%d\ndumps=%llu\n",
			 out_abs, stats_abs, D.cfg.dump_signal,
			 (unsigned long long)D.dumps_done);
		out_str(o, line);
		out_commit(o);
	}
	free(o);
}

static void remove_status(void)
{
	char path[4200];

	if (paths_status((int)getpid(), path, sizeof(path)) == 0) {
		unlink(path);
	}
}

/*
 * Writes the tables of a, with the GPU tables after them and the count of
 * dropped records, to path (replaced atomically). Returns 0 or a negative
 * errno, and prints nothing. Shared by a dump and a journal's recovery.
 */
int drain_write_tables(const struct agg *a, uint64_t dropped, const char *path)
{
	struct table_opts opts = {.dropped = dropped};
	char *text = gpu_tables_append(table_format(a, &opts), &opts);
	struct out *o = malloc(sizeof(*o));
	int rc;

	if (!text || !o) {
		rc = -ENOMEM;
	} else if ((rc = out_open(o, path, 0)) == 0) {
		out_str(o, text);
		rc = out_commit(o);
	}
	free(text);
	free(o);
	return rc;
}

/* Writes the trace and the tables; drain lock held. Returns 0 or the
 * first error as a negative errno. */
static int do_dump(void)
{
	char host[256] = "", comm[64];
	int rc_trace = 0, rc_stats = 0;

	gpu_source_flush(); /* GPU activity still buffered by its source */
	pass();
	uint64_t dropped = ring_dropped();
	int cut = 0;
	if (ensure_journal() == 0) {
		ring_foreach_tid(refresh_thread, NULL);
		journal_stats(D.j, dropped);
		/* A journal that could not be written to the end (a full
		 * disk) still holds the timeline up to there: the trace is
		 * written from it, marked as cut. */
		cut = journal_flush(D.j) != 0;
	} else {
		rc_trace = -EIO;
	}
	if (rc_trace == 0) {
		gethostname(host, sizeof(host) - 1);
		read_comm(0, comm, sizeof(comm));
		struct chrome_meta m = {.pid = (int)getpid(),
					.rank = D.cfg.rank,
					.process_name = comm,
					.host = host,
					.base_utc_ns = clock_base_utc_ns(),
					.dropped = dropped,
					.truncated = D.j->truncated || cut,
					.clock = clock_source()};
		rc_trace = chrome_write_from_journal(D.journal_path,
						     D.cfg.output, &m);
		if (rc_trace < 0 && rc_trace != D.last_trace_err) {
			fprintf(stderr, "mxprof: cannot write %s: %s\n",
				D.cfg.output, strerror(-rc_trace));
		}
	}
	D.last_trace_err = rc_trace;

	rc_stats = drain_write_tables(D.agg, dropped, D.stats_path);
	if (rc_stats < 0 && rc_stats != D.last_stats_err) {
		fprintf(stderr, "mxprof: cannot write %s: %s\n", D.stats_path,
			strerror(-rc_stats));
	}
	D.last_stats_err = rc_stats;
	D.dumps_done++;
	D.last_dump_ns = ticks_mono_ns();
	write_status();
	return rc_trace < 0 ? rc_trace : rc_stats;
}

static void *drain_main(void *arg)
{
	(void)arg;
	ring_set_quiet(1);
	prctl(PR_SET_NAME, "mxprof-drain", 0, 0, 0);
	pthread_mutex_lock(&D.lock);
	write_status();
	pthread_mutex_unlock(&D.lock);
	/*
	 * The wait adapts to the load: a pass that found an eighth of a ring
	 * or more starts the next at once, one that found a 64th waits 1 ms,
	 * and a lighter pass waits the full period (a program that records
	 * little is woken no more often than that). A flooding
	 * thread fills its ring in a few milliseconds, and a fixed period
	 * would turn that into drops. The ticks still come once per period.
	 */
	int wait_ms = (int)D.cfg.drain_period_ms;
	uint64_t last_tick = 0;
	uint64_t period_ns = (uint64_t)D.cfg.drain_period_ms * 1000000u;
	while (!__atomic_load_n(&D.stop, __ATOMIC_ACQUIRE)) {
		drain_wait(wait_ms);
		if (__atomic_load_n(&D.stop, __ATOMIC_ACQUIRE)) {
			break;
		}
		pthread_mutex_lock(&D.lock);
		uint64_t got = pass();
		if (got >= ring_capacity / 8) {
			wait_ms = 0;
		} else if (got >= ring_capacity / 64) {
			wait_ms = 1;
		} else {
			wait_ms = (int)D.cfg.drain_period_ms;
		}
		uint64_t now = ticks_mono_ns();
		int periodic = D.cfg.dump_period_s > 0 &&
			       now - D.last_dump_ns >=
				       (uint64_t)(D.cfg.dump_period_s * 1e9);
		if (__atomic_exchange_n(&D.dump_req, 0, __ATOMIC_ACQ_REL) ||
		    periodic) {
			do_dump();
		}
		void (*tick)(uint64_t) = D.cfg.tick;
		pthread_mutex_unlock(&D.lock);
		if (now - last_tick < period_ns) {
			continue;
		}
		last_tick = now;
		/* Outside the drain lock: the tick takes the state lock, which
		 * is held around coll_start(). */
		if (tick) {
			tick(now);
		}
		gpu_source_tick(now);
	}
	return NULL;
}

static int start_thread(void)
{
	sigset_t all, old;

	D.stop = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&D.thread, NULL, drain_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		return -rc;
	}
	D.thread_running = 1;
	ring_drain_alive = 1;
	return 0;
}

static int setup(const struct coll_config *cfg)
{
	D.cfg = *cfg;
	ring_capacity = cfg->ring_records;
	ring_overflow = cfg->overflow;
	paths_stats(D.cfg.output, D.stats_path, sizeof(D.stats_path));
	D.journal_open = 0;
	D.dumps_done = 0;
	D.last_dump_ns = ticks_mono_ns();
	D.ntids = 0;
	if (!D.j) {
		D.j = calloc(1, sizeof(*D.j));
	}
	if (!D.agg) {
		D.agg = agg_create();
	}
	if (!D.j || !D.agg) {
		return -ENOMEM;
	}
	D.j->fd = -1;
	return 0;
}

/*
 * In a forked child the drain thread is started again from the fork
 * handler, except under AddressSanitizer: its allocator (GCC 12's) is not
 * made safe across fork, and a thread created inside the child's fork
 * handler sometimes waits forever on it. There the child's drain starts
 * at the next safe point instead (a new thread's first record, or a dump
 * or flush the program asks for), and at exit at the latest.
 */
static int defer_child_drain;
int coll_drain_pending;

/* Starts a forked child's drain thread; drain lock held. */
static void start_child_drain(void)
{
	if (start_thread() < 0) {
		fprintf(stderr, "mxprof: cannot start the drain thread in "
				"child; records are drained at exit only\n");
	}
}

void coll_drain_kick(void)
{
	if (!__atomic_load_n(&coll_drain_pending, __ATOMIC_ACQUIRE)) {
		return;
	}
	pthread_mutex_lock(&D.lock);
	if (__atomic_load_n(&coll_drain_pending, __ATOMIC_ACQUIRE) &&
	    D.started && !D.finished && !D.thread_running) {
		start_child_drain();
	}
	__atomic_store_n(&coll_drain_pending, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&D.lock);
}

int coll_init(void)
{
	clock_init();
	defer_child_drain = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
	return ring_init();
}

int coll_start(const struct coll_config *cfg)
{
	int rc;

	pthread_mutex_lock(&D.lock);
	if (D.started) {
		pthread_mutex_unlock(&D.lock);
		return 0;
	}
	rc = setup(cfg);
	if (rc == 0) {
		D.started = 1;
		rc = start_thread();
	}
	pthread_mutex_unlock(&D.lock);
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
	pthread_mutex_lock(&D.lock);
	int busy = D.journal_open != 0;
	if (!busy) {
		snprintf(D.cfg.output, sizeof(D.cfg.output), "%s", output);
		paths_stats(D.cfg.output, D.stats_path, sizeof(D.stats_path));
	}
	pthread_mutex_unlock(&D.lock);
	return busy ? -EBUSY : 0;
}

void coll_set_dump_period(double seconds)
{
	pthread_mutex_lock(&D.lock);
	D.cfg.dump_period_s = seconds;
	pthread_mutex_unlock(&D.lock);
}

int coll_dump(void)
{
	int quiet = ring_set_quiet(1);

	coll_drain_kick();
	pthread_mutex_lock(&D.lock);
	int rc = D.started && !D.finished ? do_dump() : -ESRCH;
	pthread_mutex_unlock(&D.lock);
	ring_set_quiet(quiet);
	return rc;
}

void coll_dump_async(void)
{
	int saved = errno;

	__atomic_store_n(&D.dump_req, 1, __ATOMIC_RELEASE);
	drain_wake();
	errno = saved;
}

int coll_flush(void)
{
	int quiet = ring_set_quiet(1);

	coll_drain_kick();
	pthread_mutex_lock(&D.lock);
	if (D.started && !D.finished) {
		pass();
	}
	pthread_mutex_unlock(&D.lock);
	ring_set_quiet(quiet);
	return 0;
}

char *coll_dumps(int reset, const char *format, const char *sort_by,
		 int ascending)
{
	struct table_opts o = {.ascending = ascending};
	char *s = NULL;

	if (table_parse_opts(&o, format, sort_by) < 0) {
		errno = EINVAL;
		return NULL;
	}
	int quiet = ring_set_quiet(1);
	pthread_mutex_lock(&D.lock);
	if (D.started && !D.finished) {
		gpu_source_flush();
		pass();
	}
	o.dropped = ring_dropped();
	if (D.agg) {
		s = gpu_tables_append(table_format(D.agg, &o), &o);
		if (reset) {
			agg_reset(D.agg);
		}
	} else {
		struct agg *empty = agg_create();
		s = empty ? table_format(empty, &o) : NULL;
		agg_destroy(empty);
	}
	pthread_mutex_unlock(&D.lock);
	ring_set_quiet(quiet);
	return s;
}

void coll_finish(int dump)
{
	ring_set_quiet(1);
	pthread_mutex_lock(&D.lock);
	if (!D.started || D.finished) {
		pthread_mutex_unlock(&D.lock);
		return;
	}
	D.finished = 1;
	__atomic_store_n(&D.stop, 1, __ATOMIC_RELEASE);
	int running = D.thread_running;
	D.thread_running = 0;
	pthread_mutex_unlock(&D.lock);
	if (running) {
		coll_dump_async();
		pthread_join(D.thread, NULL);
	}
	ring_drain_alive = 0;
	pthread_mutex_lock(&D.lock);
	if (dump) {
		do_dump();
	}
	if (D.journal_open > 0) {
		/* Keep the journal only if the trace could not be written:
		 * it is then the only copy of the timeline. */
		journal_close(D.j, D.last_trace_err == 0);
	}
	remove_status();
	pthread_mutex_unlock(&D.lock);
}

void coll_before_fork(void)
{
	strtab_lock();
	pthread_mutex_lock(&D.lock);
	ring_before_fork();
}

void coll_after_fork_parent(void)
{
	ring_after_fork_parent();
	pthread_mutex_unlock(&D.lock);
	strtab_unlock();
}

void coll_after_fork_child(const char *output)
{
	ring_after_fork_child();
	gpu_after_fork_child();
	pthread_mutex_init(&D.lock, NULL);
	strtab_unlock();
	if (!D.started || D.finished) {
		return;
	}
	/* The parent's journal stays the parent's: forget it unflushed. */
	if (D.journal_open > 0) {
		close(D.j->fd);
	}
	D.j->fd = -1;
	D.j->n = 0;
	if (D.agg) {
		agg_reset(D.agg);
	}
	D.wake = 0;
	snprintf(D.cfg.output, sizeof(D.cfg.output), "%s", output);
	setup(&D.cfg);
	D.thread_running = 0;
	ring_drain_alive = 0;
	if (defer_child_drain) {
		coll_drain_pending = 1;
	} else {
		start_child_drain();
	}
}
