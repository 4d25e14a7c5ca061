/*
 * threads_now.c - every thread's stack now, for a hang's dump and `mxprof
 * dump --stacks`, without stopping the program or changing what it does.
 *
 * threads_now_capture() lists the threads (/proc/self/task) and takes each
 * one's stack in one of two ways, the program left exactly as it was:
 *
 *  - A thread blocked in the kernel (in a system call: a futex of
 *    pthread_mutex_lock, poll, nanosleep, read) is never woken: a signal
 *    would end its poll, epoll_wait or nanosleep with EINTR, SA_RESTART or
 *    not. Its /proc/self/task/TID/syscall line gives the call's number,
 *    the stack pointer and the instruction pointer without stopping it,
 *    and the native walk goes from there (stack_unwind_thread(): every
 *    word read with process_vm_readv, so a thread that moves meanwhile
 *    gives a wrong frame, not a fault). The line is read again after the
 *    walk: a thread that moved in between is walked again (three tries).
 *    /proc gives neither %rbp nor %rbx: a frame whose rules need one that
 *    no frame below saved is searched for its frame pointer
 *    (stack_unwind.c), else the walk ends there with the reason "regs".
 *    Its Python frames come from its thread state, found by its native
 *    thread id in the interpreter's list (py_stack_tstate_of(), CPython
 *    3.11 and later), and are read while it waits.
 *  - A thread that runs (the line says "running" three times, 1 ms
 *    apart) is interrupted by a real-time signal of mxprof's own
 *    (signals_stack_signal(): one whose disposition was the default,
 *    SA_RESTART, every signal blocked in the handler), sent with a request
 *    number; the handler, on that thread, captures its stack as a hooked
 *    call's is captured (stack_capture_from_signal()) and answers. The
 *    caller waits 200 ms at most; a late answer is ignored (its number is
 *    stale). A thread that blocks the signal is not sent it ("masked").
 *    A thread that entered a system call between the last read and the
 *    signal's arrival is the one case where the signal can end a poll or
 *    sleep early; three reads make it rare, not impossible.
 *
 * A thread whose stack could not be had whole still appears, with what was
 * had and a one-word reason. The caller's own thread (the drain thread) is
 * left out.
 *
 * Frames are named at capture, on the calling thread, while the code they
 * name is certainly loaded and the blocked threads' Python frames alive:
 * the text is made then. The next dump (its events callback) writes one
 * "thread stack now" instant event on each thread's track, whose "sf" is
 * the stack in the trace's stackFrames, and the text beside the trace,
 * and counts it for the status file (`mxprof dump --stacks` waits for the
 * count). A capture replaces one that no dump wrote yet.
 *
 * Naming calls dladdr(), which takes the loader's lock: a thread hung
 * inside dlopen holds it, and the capture then waits for it too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "preload.h"
#include "source.h"
#include "stack.h"

#define TN_THREADS 1024 /* threads in one capture */
#define TN_DEPTH   128	/* frame words of a stack */
#define TN_WAIT_MS 200	/* for a running thread's answer */
#define TN_TRIES   3

struct tn_thread {
	int tid;
	char name[20];
	char state[48];	 /* "waiting in futex", "running", "blocked" */
	char sys[24];	 /* the call waited in, or "" */
	const char *why; /* NULL, or why the stack is not whole */
	uint32_t id;	 /* the stack's id, 0: none */
};

/* One capture, for the next dump. */
struct tn_set {
	uint64_t t_ns;
	int n, seen;
	char *text;
	size_t tlen;
	struct tn_thread th[];
};

static struct tn_set *pending; /* atomic: handed to the next dump */

/* The request a running thread's handler answers. */
static struct {
	int tid, seq, done;
	uint32_t id;
} req;
static uintptr_t restorer; /* the stack signal's sa_restorer */

/* ---- a running thread: the signal --------------------------------------- */

static void on_stack_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	int seq = __atomic_load_n(&req.seq, __ATOMIC_ACQUIRE);

	(void)sig;
	(void)uc;
	if (si->si_code == SI_QUEUE && si->si_pid == getpid() &&
	    si->si_value.sival_int == seq &&
	    (int)syscall(SYS_gettid) ==
		    __atomic_load_n(&req.tid, __ATOMIC_ACQUIRE)) {
		uint32_t id = stack_capture_from_signal(TN_DEPTH, restorer);
		__atomic_store_n(&req.id, id, __ATOMIC_RELAXED);
		__atomic_store_n(&req.done, seq, __ATOMIC_RELEASE);
	}
	errno = saved;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

/* Does thread tid block signal sig? */
static int masked(int tid, int sig)
{
	char path[64], buf[2048];
	const char *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	if (threads_now_read_file(path, buf, sizeof(buf)) <= 0 ||
	    !(p = strstr(buf, "SigBlk:"))) {
		return 0;
	}
	unsigned long long m = strtoull(p + 7, NULL, 16);
	return (m >> (sig - 1)) & 1;
}

/* The stack of running thread th, from its own handler. */
static void sample_running(struct tn_thread *th)
{
	static int seq;
	int sig = signals_stack_signal((void *)on_stack_signal);
	struct sigaction cur;
	siginfo_t si;

	snprintf(th->state, sizeof(th->state), "running");
	if (sig < 0) {
		th->why = "nosignal";
		return;
	}
	if (sigaction(sig, NULL, &cur) == 0) {
		restorer = (uintptr_t)cur.sa_restorer;
	}
	if (masked(th->tid, sig)) {
		th->why = "masked";
		return;
	}
	int s = ++seq & 0x7fffffff;
	__atomic_store_n(&req.tid, th->tid, __ATOMIC_RELAXED);
	__atomic_store_n(&req.seq, s, __ATOMIC_RELEASE);
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = s;
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), th->tid, sig, &si) < 0) {
		th->why = errno == ESRCH ? "gone" : "nosignal";
		return;
	}
	for (int ms = 0; ms < TN_WAIT_MS; ms++) {
		if (__atomic_load_n(&req.done, __ATOMIC_ACQUIRE) == s) {
			th->id = __atomic_load_n(&req.id, __ATOMIC_RELAXED);
			th->why = th->id ? NULL : "nomemory";
			return;
		}
		sleep_ms(1);
	}
	th->why = "timeout";
}

/* ---- a blocked thread: /proc ------------------------------------------- */

static int read_sys(int tid, struct threads_now_sys *s)
{
	char path[64], line[512];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	if (threads_now_read_file(path, line, sizeof(line)) <= 0) {
		return -1;
	}
	return threads_now_parse_syscall(line, s);
}

static const char *end_word(int end)
{
	switch (end) {
	case STACK_END_BASE:
		return NULL;
	case STACK_END_DEPTH:
		return "deep";
	case STACK_END_REGS:
		return "regs";
	case STACK_END_READ:
		return "unreadable";
	case STACK_END_HOOK:
		return "hooked";
	default:
		return "noinfo";
	}
}

/* The stack of thread th, blocked as *s says (walked again while it
 * moves), or sampled when it runs. */
static void capture_one(struct tn_thread *th)
{
	static void *ips[TN_DEPTH + 16];
	static struct py_frame py[TN_DEPTH];
	struct threads_now_sys a, b;

	for (int tries = 0, runs = 0;;) {
		if (read_sys(th->tid, &a) < 0) {
			th->why = "gone";
			return;
		}
		if (a.running) {
			if (++runs < TN_TRIES) {
				sleep_ms(1);
				continue;
			}
			sample_running(th);
			return;
		}
		const char *name = threads_now_syscall_name(a.nr);
		if (a.nr < 0) {
			snprintf(th->state, sizeof(th->state), "blocked");
			th->sys[0] = 0;
		} else if (name) {
			snprintf(th->state, sizeof(th->state), "waiting in %s",
				 name);
			snprintf(th->sys, sizeof(th->sys), "%s", name);
		} else {
			snprintf(th->state, sizeof(th->state),
				 "waiting in syscall %ld", a.nr);
			snprintf(th->sys, sizeof(th->sys), "syscall %ld", a.nr);
		}
		struct stack_unwind_start st = {
			.ip = a.pc, .sp = a.sp, .at_call = a.nr >= 0};
		int end, n = stack_unwind_thread(th->tid, &st, ips,
						 TN_DEPTH + 16, &end);
		uintptr_t ts = py_stack_tstate_of(th->tid);
		unsigned np = ts ? py_stack_capture_ts(ts, py, TN_DEPTH) : 0;
		if (read_sys(th->tid, &b) == 0 && !b.running && b.sp == a.sp &&
		    b.pc == a.pc) {
			th->id = stack_intern_thread(ips, n, py, np, TN_DEPTH);
			th->why = th->id ? end_word(end) : "nomemory";
			return;
		}
		if (++tries >= TN_TRIES) {
			th->id = stack_intern_thread(ips, n, py, np, TN_DEPTH);
			th->why = "moving";
			return;
		}
	}
}

/* ---- the text ------------------------------------------------------------ */

struct buf {
	char *p;
	size_t n, cap;
	int err;
};

static void put(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	for (int k = 0; k < 2 && !b->err; k++) {
		va_start(ap, fmt);
		int w = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (w < 0) {
			b->err = 1;
			return;
		}
		if ((size_t)w < b->cap - b->n) {
			b->n += (size_t)w;
			return;
		}
		size_t cap = (b->cap + (size_t)w + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->err = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* One frame word as a line of the text. */
static void put_frame(struct buf *b, uint64_t w)
{
	char name[512], cat[256], file[1024], func[512];
	struct py_frame f;
	unsigned line;
	int user;

	if (w & STACK_PY) {
		if (stack_py_frame(w, &f) == 0 &&
		    py_frame_describe(&f, name, sizeof(name), file,
				      sizeof(file)) == 0) {
			threads_now_py_line(name, func, sizeof(func), &line);
			put(b, "  File \"%s\", line %u, in %s\n", file, line,
			    func);
		} else {
			put(b, "  File \"?\", line 0, in ?\n");
		}
		return;
	}
	if (stack_name(w, name, sizeof(name), cat, sizeof(cat), &user) == 0) {
		put(b, "  %s (%s)\n", name, cat);
	} else {
		put(b, "  0x%llx\n", (unsigned long long)w);
	}
}

static void make_text(struct tn_set *set, struct buf *b)
{
	char comm[64] = "";

	if (threads_now_read_file("/proc/self/comm", comm, sizeof(comm)) > 0) {
		comm[strcspn(comm, "\n")] = 0;
	}
	put(b, "Process %d (%s): %d thread%s, most recent call last\n",
	    (int)getpid(), comm, set->n, set->n == 1 ? "" : "s");
	for (int i = 0; i < set->n; i++) {
		const struct tn_thread *th = &set->th[i];
		unsigned n = 0;
		const uint64_t *w = th->id ? stack_words(th->id, &n) : NULL;

		put(b, "\nThread %d (%s) %s", th->tid, th->name, th->state);
		if (th->why) {
			put(b, ", %s: %s", w ? "stack incomplete" : "no stack",
			    th->why);
		}
		put(b, ":\n");
		for (unsigned k = n; w && k-- > 0;) {
			put_frame(b, w[k]);
		}
	}
}

/* ---- the capture --------------------------------------------------------- */

static int cmp_tid(const void *x, const void *y)
{
	const struct tn_thread *a = x, *b = y;

	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* One capture at a time: its buffers and the request are shared. */
static int busy;

static int capture_all(void);

int threads_now_capture(void)
{
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) {
		return -EBUSY;
	}
	int rc = capture_all();
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	return rc;
}

static int capture_all(void)
{
	int me = (int)syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	struct tn_set *set;
	struct buf text = {NULL, 0, 0, 0};

	if (!d) {
		return -ENOENT;
	}
	set = calloc(1, sizeof(*set) + TN_THREADS * sizeof(set->th[0]));
	if (!set) {
		closedir(d);
		return -ENOMEM;
	}
	while ((e = readdir(d)) && set->n < TN_THREADS) {
		int tid = atoi(e->d_name);
		if (tid > 0 && tid != me) {
			set->th[set->n++].tid = tid;
		}
	}
	closedir(d);
	qsort(set->th, (size_t)set->n, sizeof(set->th[0]), cmp_tid);
	stack_ready_any();
	stack_set_namer(stack_name);
	set->t_ns = clock_now_ns();
	int kept = 0;
	for (int i = 0; i < set->n; i++) {
		struct tn_thread *th = &set->th[kept];
		char path[64];

		th->tid = set->th[i].tid;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm",
			 th->tid);
		if (threads_now_read_file(path, th->name, sizeof(th->name)) >
		    0) {
			th->name[strcspn(th->name, "\n")] = 0;
		}
		/* mxprof's own threads (the drain's helper, the writers) are
		 * not the program's: left out, as the caller is. */
		if (strncmp(th->name, "mxprof-", 7) == 0) {
			memset(th, 0, sizeof(*th));
			continue;
		}
		capture_one(th);
		kept++;
	}
	set->n = kept;
	make_text(set, &text);
	if (text.err) {
		free(text.p);
		free(set);
		return -ENOMEM;
	}
	set->text = text.p;
	set->tlen = text.n;
	struct tn_set *old =
		__atomic_exchange_n(&pending, set, __ATOMIC_ACQ_REL);
	if (old) {
		free(old->text);
		free(old);
	}
	return set->n;
}

void threads_now_on_trigger(const char *trigger)
{
	if (trigger && strcmp(trigger, "hang") == 0) {
		threads_now_capture();
	}
}

/* ---- the source --------------------------------------------------------- */

/* `mxprof dump --stacks`: the dump signal asked for the stacks, taken
 * before the dump it also asked for. */
static void tn_flush(void)
{
	if (__atomic_exchange_n(&signals_stacks_wanted, 0, __ATOMIC_ACQ_REL)) {
		threads_now_capture();
	}
}

/* The threads of a capture get their names in the trace. */
static void tn_drain(struct agg *a)
{
	struct tn_set *set = __atomic_load_n(&pending, __ATOMIC_ACQUIRE);

	(void)a;
	if (set && !set->seen) {
		set->seen = 1;
		for (int i = 0; i < set->n; i++) {
			coll_thread_seen(set->th[i].tid);
		}
	}
}

/* Writes the text beside trace path trace, through a temporary name. */
static void write_text(const char *trace, const struct tn_set *set)
{
	char path[4200], tmp[4300];

	if (paths_stacks_text(trace, path, sizeof(path)) < 0 ||
	    paths_temp(path, (int)getpid(), tmp, sizeof(tmp)) < 0) {
		return;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t done = 0;

	if (fd < 0) {
		fprintf(stderr, "mxprof: cannot write %s: %s\n", path,
			strerror(errno));
		return;
	}
	while (done < set->tlen) {
		ssize_t w = write(fd, set->text + done, set->tlen - done);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) == 0 && done == set->tlen && rename(tmp, path) == 0) {
		coll_status_stacks_written();
		return;
	}
	fprintf(stderr, "mxprof: cannot write %s: %s\n", path,
		strerror(errno ? errno : EIO));
	unlink(tmp);
}

static void tn_events(struct coll_trace *t)
{
	struct tn_set *set =
		__atomic_exchange_n(&pending, NULL, __ATOMIC_ACQ_REL);

	if (!set) {
		return;
	}
	for (int i = 0; i < set->n; i++) {
		const struct tn_thread *th = &set->th[i];
		struct coll_event e = {
			.ph = 'i',
			.scope = 't',
			.cat = "thread_stack",
			.name = "thread stack now",
			.pid = getpid(),
			.tid = th->tid,
			.ts = set->t_ns,
			.sf = th->id ? coll_trace_sf(t, th->id) : 0,
		};
		coll_event_arg(&e, "state", COLL_ARG_STR)->v.s = th->state;
		if (th->sys[0]) {
			coll_event_arg(&e, "syscall", COLL_ARG_STR)->v.s =
				th->sys;
		}
		if (th->why) {
			coll_event_arg(&e, "incomplete", COLL_ARG_STR)->v.s =
				th->why;
		}
		coll_trace_write(t, &e);
	}
	if (t->path) {
		write_text(t->path, set);
	}
	free(set->text);
	free(set);
}

/* A forked child does not write its parent's threads. */
static void tn_fork_child(void)
{
	struct tn_set *set =
		__atomic_exchange_n(&pending, NULL, __ATOMIC_ACQ_REL);

	if (set) {
		free(set->text);
		free(set);
	}
	__atomic_store_n(&signals_stacks_wanted, 0, __ATOMIC_RELEASE);
}

const struct coll_source threads_now_source = {
	.name = "threads_now",
	.flush = tn_flush,
	.drain = tn_drain,
	.events = tn_events,
	.fork_child = tn_fork_child,
};
