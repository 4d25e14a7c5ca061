/*
 * test_ring.c - the per-thread record rings (collector/ring_push.c,
 * ring_collect.c).
 *
 * The rings are global: every test drains what earlier tests left, records
 * on threads of its own (a thread's ring capacity is fixed at its first
 * push) and looks only at the records of its own threads' tids.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"
#include "ring_abi.h"

/* What ring_collect handed over: every record with its tid, and the size
 * of every run. */
struct seen {
	struct coll_rec *recs;
	int *tids;
	size_t n, cap;
	size_t runs[64];
	size_t nruns;
};

static void seen_emit(void *ctx, int tid, const struct coll_rec *recs, size_t n)
{
	struct seen *s = ctx;

	if (s->nruns < 64) {
		s->runs[s->nruns] = n;
	}
	s->nruns++;
	if (s->n + n > s->cap) {
		size_t cap = (s->n + n) * 2;
		s->recs = realloc(s->recs, cap * sizeof(*s->recs));
		s->tids = realloc(s->tids, cap * sizeof(*s->tids));
		/* Runs on worker threads too: no cmocka assert here. */
		if (!s->recs || !s->tids) {
			abort();
		}
		s->cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		s->recs[s->n] = recs[i];
		s->tids[s->n] = tid;
		s->n++;
	}
}

static void seen_free(struct seen *s)
{
	free(s->recs);
	free(s->tids);
	memset(s, 0, sizeof(*s));
}

static void discard_emit(void *ctx, int tid, const struct coll_rec *recs,
			 size_t n)
{
	(void)ctx;
	(void)tid;
	(void)recs;
	(void)n;
}

/* Empties every ring, so that a test sees only its own records. */
static void drain_leftovers(void)
{
	ring_collect(discard_emit, NULL);
	ring_collect(discard_emit, NULL);
}

/* The record number seq of writer w: every field is derived from both. */
static struct coll_rec make_rec(uint32_t w, uint32_t seq)
{
	struct coll_rec r = {
		.t0 = 1000000ull * w + seq,
		.t1 = 3ull * seq + 1,
		.name = w + 1,
		.group = 77,
		.kind = COLL_SPAN,
		.cat = (uint8_t)(seq % 2),
		.flags = (uint8_t)(seq & 0xc0),
		.arg = seq ^ 0xabcdu,
	};
	return r;
}

static void assert_rec(const struct coll_rec *r, uint32_t w, uint32_t seq)
{
	struct coll_rec want = make_rec(w, seq);

	assert_int_equal(r->t0, want.t0);
	assert_int_equal(r->t1, want.t1);
	assert_int_equal(r->name, want.name);
	assert_int_equal(r->group, want.group);
	assert_int_equal(r->kind, want.kind);
	assert_int_equal(r->cat, want.cat);
	assert_int_equal(r->flags, want.flags);
	assert_int_equal(r->arg, want.arg);
}

static int gettid_int(void)
{
	return (int)syscall(SYS_gettid);
}

/* Runs fn(arg) on a new thread and waits for it to exit. */
static void run_on_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* ---- one thread: order, fields, wrap-around, drops --------------------- */

struct one {
	int tid;
	int rc[64];
	struct seen a, b, c;
	uint64_t dropped_before, dropped_after;
};

static void *push_1000_and_collect(void *arg)
{
	struct one *o = arg;

	o->tid = gettid_int();
	for (uint32_t i = 0; i < 1000; i++) {
		struct coll_rec r = make_rec(0, i);
		o->rc[0] |= ring_push(&r);
	}
	ring_collect(seen_emit, &o->a);
	return NULL;
}

static void test_ring_collects_pushed_records_in_order_with_fields(void **st)
{
	struct one o = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 1024;
	run_on_thread(push_1000_and_collect, &o);
	assert_int_equal(o.rc[0], 0);
	assert_int_equal(o.a.n, 1000);
	assert_int_equal(o.a.nruns, 1);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(o.a.tids[i], o.tid);
		assert_rec(&o.a.recs[i], 0, i);
	}
	seen_free(&o.a);
}

static void *wrap_around(void *arg)
{
	struct one *o = arg;
	uint32_t seq = 0;

	o->tid = gettid_int();
	/* Five records move head and tail to slot 5 of 8. */
	for (int i = 0; i < 5; i++, seq++) {
		struct coll_rec r = make_rec(1, seq);
		o->rc[0] |= ring_push(&r);
	}
	ring_collect(seen_emit, &o->a);
	/* Eight more fill the ring exactly, across its end: slots 5..7 and
	 * 0..4. A ninth does not fit. */
	for (int i = 0; i < 8; i++, seq++) {
		struct coll_rec r = make_rec(1, seq);
		o->rc[1] |= ring_push(&r);
	}
	struct coll_rec extra = make_rec(1, 999);
	o->rc[2] = ring_push(&extra);
	ring_collect(seen_emit, &o->b);
	return NULL;
}

static void test_ring_wraps_around_its_end_in_two_runs(void **st)
{
	struct one o = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 8;
	ring_capacity_max = ring_capacity;
	uint64_t d0 = ring_dropped();
	run_on_thread(wrap_around, &o);
	ring_capacity_max = 65536 * 8;
	assert_int_equal(o.rc[0], 0);
	assert_int_equal(o.rc[1], 0);
	assert_int_equal(o.rc[2], -ENOSPC);
	assert_int_equal(ring_dropped() - d0, 1);

	assert_int_equal(o.a.n, 5);
	assert_int_equal(o.a.nruns, 1);
	for (uint32_t i = 0; i < 5; i++) {
		assert_rec(&o.a.recs[i], 1, i);
	}
	/* Oldest first: slots 5..7, then 0..4. */
	assert_int_equal(o.b.n, 8);
	assert_int_equal(o.b.nruns, 2);
	assert_int_equal(o.b.runs[0], 3);
	assert_int_equal(o.b.runs[1], 5);
	for (uint32_t i = 0; i < 8; i++) {
		assert_int_equal(o.b.tids[i], o.tid);
		assert_rec(&o.b.recs[i], 1, 5 + i);
	}
	seen_free(&o.a);
	seen_free(&o.b);
}

static void *overfill(void *arg)
{
	struct one *o = arg;

	o->tid = gettid_int();
	o->dropped_before = ring_dropped();
	for (uint32_t i = 0; i < 20; i++) {
		struct coll_rec r = make_rec(2, i);
		o->rc[i] = ring_push(&r);
	}
	o->dropped_after = ring_dropped();
	ring_collect(seen_emit, &o->a);
	/* Once drained, the ring takes records again. */
	for (uint32_t i = 20; i < 23; i++) {
		struct coll_rec r = make_rec(2, i);
		o->rc[i] = ring_push(&r);
	}
	ring_collect(seen_emit, &o->b);
	return NULL;
}

static void test_ring_drops_when_full_and_counts(void **st)
{
	struct one o = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 16;
	ring_capacity_max = ring_capacity;
	ring_overflow = COLL_OVERFLOW_DROP;
	uint64_t d0 = ring_dropped();
	run_on_thread(overfill, &o);
	ring_capacity_max = 65536 * 8;
	for (int i = 0; i < 16; i++) {
		assert_int_equal(o.rc[i], 0);
	}
	for (int i = 16; i < 20; i++) {
		assert_int_equal(o.rc[i], -ENOSPC);
	}
	for (int i = 20; i < 23; i++) {
		assert_int_equal(o.rc[i], 0);
	}
	assert_int_equal(o.dropped_after - o.dropped_before, 4);
	/* The first 16 arrived; the 4 dropped ones never do. */
	assert_int_equal(o.a.n, 16);
	for (uint32_t i = 0; i < 16; i++) {
		assert_rec(&o.a.recs[i], 2, i);
	}
	assert_int_equal(o.b.n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_rec(&o.b.recs[i], 2, 20 + i);
	}
	/* The drops stay counted after the thread's ring is recycled. */
	drain_leftovers();
	assert_int_equal(ring_dropped() - d0, 4);
	seen_free(&o.a);
	seen_free(&o.b);
}

/* ---- rings that grow --------------------------------------------------- */

static void note_tid(void *ctx, int tid, int dead)
{
	struct one *o = ctx;

	if (tid == o->tid) {
		o->rc[dead ? 41 : 40]++;
	}
}

static void *grow_then_fill(void *arg)
{
	struct one *o = arg;
	uint32_t seq = 0;

	o->tid = gettid_int();
	/* 5 records, drained: the 8-record ring has room again. */
	for (; seq < 5; seq++) {
		struct coll_rec r = make_rec(4, seq);
		o->rc[0] |= ring_push(&r);
	}
	ring_collect(seen_emit, &o->a);
	/* 30 more: 8 in that ring, 16 in one it grows into, 6 in one of
	 * 32, the biggest (ring_capacity_max), which the thread keeps. */
	for (; seq < 35; seq++) {
		struct coll_rec r = make_rec(4, seq);
		o->rc[1] |= ring_push(&r);
	}
	ring_foreach_tid(note_tid, o);
	ring_collect(seen_emit, &o->b);
	/* Emptied: 32 fit, the 33rd is dropped. */
	o->dropped_before = ring_dropped();
	for (; seq < 67; seq++) {
		struct coll_rec r = make_rec(4, seq);
		o->rc[2] |= ring_push(&r);
	}
	struct coll_rec extra = make_rec(4, 999);
	o->rc[3] = ring_push(&extra);
	o->dropped_after = ring_dropped();
	return NULL;
}

static void test_ring_full_ring_grows_and_keeps_order(void **st)
{
	struct one o = {0};
	struct seen c = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 8;
	ring_capacity_max = 32;
	run_on_thread(grow_then_fill, &o);
	drain_leftovers();
	ring_collect(seen_emit, &c);
	ring_capacity_max = 65536 * 8;
	assert_int_equal(o.rc[0], 0);
	assert_int_equal(o.rc[1], 0);
	assert_int_equal(o.rc[2], 0);
	assert_int_equal(o.rc[3], -ENOSPC);
	assert_int_equal(o.dropped_after - o.dropped_before, 1);
	/* The thread is listed once, alive, though three rings held its
	 * records. */
	assert_int_equal(o.rc[40], 1);
	assert_int_equal(o.rc[41], 0);
	/* One pass takes a thread's records from every ring it grew
	 * through, oldest ring first: 8, then 16, then 6, each in one run
	 * or two (a ring claimed again goes on from its last slot). */
	assert_int_equal(o.a.n, 5);
	assert_int_equal(o.b.n, 30);
	assert_in_range(o.b.nruns, 3, 6);
	size_t run = 0, part[3] = {0}, want[3] = {8, 16, 6};
	for (int k = 0; k < 3; k++) {
		while (run < o.b.nruns && part[k] < want[k]) {
			part[k] += o.b.runs[run++];
		}
		assert_int_equal(part[k], want[k]);
	}
	assert_int_equal(run, o.b.nruns);
	for (uint32_t i = 0; i < 30; i++) {
		assert_int_equal(o.b.tids[i], o.tid);
		assert_rec(&o.b.recs[i], 4, 5 + i);
	}
	seen_free(&o.a);
	seen_free(&o.b);
	seen_free(&c);
}

/* ---- threads that exit ----------------------------------------------- */

static void *push_100_and_exit(void *arg)
{
	struct one *o = arg;

	o->tid = gettid_int();
	for (uint32_t i = 0; i < 100; i++) {
		struct coll_rec r = make_rec(3, i);
		o->rc[0] |= ring_push(&r);
	}
	return NULL;
}

static void test_ring_collects_records_of_exited_thread(void **st)
{
	struct one o = {0}, o2 = {0};
	struct seen s = {0}, again = {0}, s2 = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 128;
	run_on_thread(push_100_and_exit, &o);
	assert_int_equal(o.rc[0], 0);
	ring_collect(seen_emit, &s);
	assert_int_equal(s.n, 100);
	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(s.tids[i], o.tid);
		assert_rec(&s.recs[i], 3, i);
	}
	/* Nothing is handed over twice. */
	ring_collect(seen_emit, &again);
	assert_int_equal(again.n, 0);

	/* A new thread (which may get the recycled ring) starts empty and
	 * is collected under its own tid. */
	run_on_thread(push_100_and_exit, &o2);
	ring_collect(seen_emit, &s2);
	assert_int_equal(s2.n, 100);
	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(s2.tids[i], o2.tid);
		assert_rec(&s2.recs[i], 3, i);
	}
	seen_free(&s);
	seen_free(&again);
	seen_free(&s2);
}

/* ---- quiet ------------------------------------------------------------ */

static void *quiet_then_loud(void *arg)
{
	struct one *o = arg;

	o->tid = gettid_int();
	o->rc[0] = ring_set_quiet(1);
	for (uint32_t i = 0; i < 10; i++) {
		struct coll_rec r = make_rec(4, i);
		o->rc[1] |= ring_push(&r);
	}
	o->rc[2] = ring_set_quiet(0);
	for (uint32_t i = 10; i < 13; i++) {
		struct coll_rec r = make_rec(4, i);
		o->rc[3] |= ring_push(&r);
	}
	ring_collect(seen_emit, &o->a);
	return NULL;
}

static void test_ring_quiet_thread_records_nothing(void **st)
{
	struct one o = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 64;
	uint64_t d0 = ring_dropped();
	run_on_thread(quiet_then_loud, &o);
	assert_int_equal(o.rc[0], 0); /* previous value */
	assert_int_equal(o.rc[1], 0); /* suppressed, not dropped */
	assert_int_equal(o.rc[2], 1);
	assert_int_equal(o.rc[3], 0);
	assert_int_equal(o.a.n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(o.a.tids[i], o.tid);
		assert_rec(&o.a.recs[i], 4, 10 + i);
	}
	assert_int_equal(ring_dropped() - d0, 0);
	seen_free(&o.a);
}

/* ---- many threads ----------------------------------------------------- */

#define NTHREADS   8
#define PER_THREAD 10000

struct writer {
	uint32_t w;
	int tid;
	int fails;
	pthread_barrier_t *go;
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;

	__atomic_store_n(&wr->tid, gettid_int(), __ATOMIC_RELEASE);
	pthread_barrier_wait(wr->go);
	for (uint32_t i = 0; i < PER_THREAD; i++) {
		struct coll_rec r = make_rec(wr->w + 10, i);
		if (ring_push(&r) != 0) {
			wr->fails++;
		}
	}
	return NULL;
}

/* Checks that every writer's records arrived, in order, under its tid. */
static void check_writers(struct seen *s, struct writer *wr)
{
	uint32_t next[NTHREADS] = {0};

	assert_int_equal(s->n, (size_t)NTHREADS * PER_THREAD);
	for (int k = 0; k < NTHREADS; k++) {
		for (int m = k + 1; m < NTHREADS; m++) {
			assert_int_not_equal(wr[k].tid, wr[m].tid);
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		int k = -1;
		for (int m = 0; m < NTHREADS; m++) {
			if (wr[m].tid == s->tids[i]) {
				k = m;
			}
		}
		assert_true(k >= 0);
		assert_rec(&s->recs[i], (uint32_t)k + 10, next[k]);
		next[k]++;
	}
	for (int k = 0; k < NTHREADS; k++) {
		assert_int_equal(next[k], PER_THREAD);
		assert_int_equal(wr[k].fails, 0);
	}
}

static void run_writers(struct writer *wr, pthread_t *th, pthread_barrier_t *go)
{
	pthread_barrier_init(go, NULL, NTHREADS + 1);
	for (int k = 0; k < NTHREADS; k++) {
		wr[k] = (struct writer){.w = (uint32_t)k, .go = go};
		assert_int_equal(
			pthread_create(&th[k], NULL, writer_main, &wr[k]), 0);
	}
	pthread_barrier_wait(go);
}

static void test_ring_records_of_8_threads_all_arrive_in_order(void **st)
{
	struct writer wr[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t go;
	struct seen s = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 16384; /* room for all: nothing drains meanwhile */
	uint64_t d0 = ring_dropped();
	run_writers(wr, th, &go);
	for (int k = 0; k < NTHREADS; k++) {
		pthread_join(th[k], NULL);
	}
	pthread_barrier_destroy(&go);
	ring_collect(seen_emit, &s);
	assert_int_equal(ring_dropped() - d0, 0);
	check_writers(&s, wr);
	seen_free(&s);
}

/* Runs the writers wr while this thread drains them concurrently into s,
 * until every record arrived; returns the records dropped meanwhile. */
static uint64_t drain_writers_concurrently(struct writer *wr, struct seen *s)
{
	pthread_t th[NTHREADS];
	pthread_barrier_t go;
	uint64_t d0 = ring_dropped();

	run_writers(wr, th, &go);
	while (s->n < (size_t)NTHREADS * PER_THREAD) {
		ring_collect(seen_emit, s);
	}
	for (int k = 0; k < NTHREADS; k++) {
		pthread_join(th[k], NULL);
	}
	pthread_barrier_destroy(&go);
	ring_collect(seen_emit, s);
	return ring_dropped() - d0;
}

static void test_ring_block_mode_loses_nothing_while_draining(void **st)
{
	struct writer wr[NTHREADS];
	struct seen s = {0};

	(void)st;
	drain_leftovers();
	/* Small rings that fill up: writers wait for this thread, which
	 * drains concurrently. */
	ring_capacity = 256;
	ring_capacity_max = ring_capacity; /* no growing: they wait */
	ring_overflow = COLL_OVERFLOW_BLOCK;
	ring_drain_alive = 1;
	uint64_t dropped = drain_writers_concurrently(wr, &s);
	ring_drain_alive = 0;
	ring_overflow = COLL_OVERFLOW_DROP;
	ring_capacity_max = 65536 * 8;
	assert_int_equal(dropped, 0);
	check_writers(&s, wr);
	seen_free(&s);
}

/* Writers whose small rings grow while this thread drains them
 * concurrently: every record arrives, in order, once. The biggest ring
 * holds a writer's every record, so nothing can be dropped, however the
 * threads are scheduled. */
static void test_ring_growing_while_draining_loses_nothing(void **st)
{
	struct writer wr[NTHREADS];
	struct seen s = {0};

	(void)st;
	drain_leftovers();
	ring_capacity = 64;
	ring_capacity_max = 16384; /* >= PER_THREAD */
	uint64_t dropped = drain_writers_concurrently(wr, &s);
	ring_capacity_max = 65536 * 8;
	assert_int_equal(dropped, 0);
	check_writers(&s, wr);
	seen_free(&s);
}

static int group_setup(void **st)
{
	(void)st;
	if (coll_init() != 0) {
		return -1;
	}
	coll_recording.on = 1;
	return 0;
}

/* ---- a signal handler that records in the middle of a push ------------ */

/*
 * To interrupt ring_push() exactly while it writes a record, the slot it
 * writes sits on a page made read-only: the write faults after the slot is
 * claimed and before it is published; the SIGSEGV handler makes the page
 * writable again and records a record of its own on the same thread, and
 * the interrupted write resumes. Both records must arrive, whole: the
 * handler's must not overwrite the slot being written.
 */
static void *fault_page;
static long page_size;
static volatile int handler_pushes;

/* The thread's push state, laid out as ring_abi.h says (ring.h). */
extern __thread char ring_tls[];

/* Makes the page of the slot the thread's next push writes read-only. */
static void protect_next_slot(void)
{
	char *ring = *(char **)(ring_tls + RING_TLS_REC);
	uint64_t h = *(uint64_t *)(ring_tls + RING_TLS_RESERVE);
	uint64_t mask = *(uint64_t *)(ring_tls + RING_TLS_MASK);
	uintptr_t slot = (uintptr_t)(ring + RING_RECS) +
			 (uintptr_t)(h & mask) * sizeof(struct coll_rec);

	fault_page = (void *)(slot & ~(uintptr_t)(page_size - 1));
	assert_int_equal(mprotect(fault_page, (size_t)page_size, PROT_READ), 0);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (!fault_page || (char *)si->si_addr < (char *)fault_page ||
	    (char *)si->si_addr >= (char *)fault_page + page_size) {
		abort(); /* a real crash */
	}
	mprotect(fault_page, (size_t)page_size, PROT_READ | PROT_WRITE);
	fault_page = NULL;
	struct coll_rec r = make_rec(1, (uint32_t)handler_pushes);
	if (ring_push(&r) == 0) {
		handler_pushes++;
	}
}

static void *push_faulting(void *arg)
{
	struct seen *s = arg;
	struct coll_rec r = make_rec(0, 0);

	assert_int_equal(ring_push(&r), 0); /* maps the thread's ring */
	for (uint32_t i = 1; i < 50; i++) {
		r = make_rec(0, i);
		protect_next_slot();
		ring_push(&r); /* faults inside, then completes */
	}
	ring_collect(seen_emit, s);
	return NULL;
}

/* Runs fn(s) on a thread of a 1024-record ring, with on_segv handling
 * the faults on fault_page. */
static void run_with_fault_handler(void *(*fn)(void *), struct seen *s)
{
	struct sigaction sa, old;

	page_size = sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	ring_capacity = 1024;
	handler_pushes = 0;
	run_on_thread(fn, s);
	sigaction(SIGSEGV, &old, NULL);
}

static void
test_ring_handler_recording_mid_push_loses_and_tears_nothing(void **st)
{
	struct seen s = {0};
	uint32_t next[2] = {0, 0};

	(void)st;
	drain_leftovers();
	run_with_fault_handler(push_faulting, &s);

	assert_int_equal(handler_pushes, 49);
	assert_int_equal(s.n, 99);
	for (size_t i = 0; i < s.n; i++) {
		uint32_t w = s.recs[i].name - 1;
		assert_true(w <= 1);
		assert_rec(&s.recs[i], w, next[w]);
		next[w]++;
	}
	assert_int_equal(next[0], 50);
	assert_int_equal(next[1], 49);
	seen_free(&s);
}

/* The ring has one free slot left: the interrupted push claims it, and the
 * handler's push finds none, gives its claim back and counts a drop. The
 * interrupted record still arrives, in its place. */
static void *push_faulting_into_last_slot(void *arg)
{
	struct seen *s = arg;

	for (uint32_t i = 0; i < 1023; i++) {
		struct coll_rec r = make_rec(0, i);

		assert_int_equal(ring_push(&r), 0);
	}
	struct coll_rec r = make_rec(0, 1023);
	protect_next_slot();
	assert_int_equal(ring_push(&r), 0); /* faults inside, then completes */
	ring_collect(seen_emit, s);
	return NULL;
}

static void
test_ring_handler_finding_no_room_mid_push_drops_only_its_own(void **st)
{
	struct seen s = {0};
	uint64_t d0;

	(void)st;
	drain_leftovers();
	d0 = ring_dropped();
	run_with_fault_handler(push_faulting_into_last_slot, &s);

	assert_int_equal(handler_pushes, 0);
	assert_int_equal(ring_dropped() - d0, 1);
	assert_int_equal(s.n, 1024);
	for (uint32_t i = 0; i < s.n; i++) {
		assert_rec(&s.recs[i], 0, i);
	}
	seen_free(&s);
}

/* ---- a new buffer's pages, filled in ahead of its thread --------------- */

struct fill {
	int rc;
	uint64_t cap, resident[4]; /* pages resident in four ranges */
};

/* How many pages of [p, p + len) are resident. */
static uint64_t resident_pages(const void *p, size_t len)
{
	size_t page = 4096;
	uintptr_t lo = (uintptr_t)p & ~(page - 1);
	size_t n = ((uintptr_t)p + len - lo + page - 1) / page;
	unsigned char v[4096];
	uint64_t k = 0;

	if (n > sizeof(v) || mincore((void *)lo, n * page, v) != 0) {
		return UINT64_MAX;
	}
	for (size_t i = 0; i < n; i++) {
		k += v[i] & 1;
	}
	return k;
}

static void *push_1000_then_drain(void *arg)
{
	struct fill *f = arg;

	for (uint32_t i = 0; i < 1000; i++) {
		struct coll_rec r = make_rec(5, i);
		f->rc |= ring_push(&r);
	}
	char *recs = *(char **)(ring_tls + RING_TLS_REC) + RING_RECS;
	f->cap = *(uint64_t *)(ring_tls + RING_TLS_MASK) + 1;
	ring_collect(discard_emit, NULL);
	/* Written by the thread: [0, 1000). Filled by the drain: up to
	 * 2 * 1000 + 1024. Beyond: untouched until the thread gets there. */
	f->resident[0] = resident_pages(recs, 1000 * 32);
	f->resident[1] = resident_pages(recs + 1024 * 32, 1976 * 32);
	f->resident[2] = resident_pages(recs + 3200 * 32, 9000 * 32);
	f->resident[3] = resident_pages(recs + 16384 * 32, 16384 * 32);
	return NULL;
}

static void test_ring_drain_fills_new_buffer_ahead(void **st)
{
	struct fill f = {0};

	(void)st;
	assert_int_equal(sysconf(_SC_PAGESIZE), 4096);
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(probe != MAP_FAILED);
	int can = madvise(probe, 4096, MXPROF_MADV_POPULATE_WRITE) == 0;
	munmap(probe, 4096);
	if (!can) {
		skip(); /* a kernel before 5.14: the thread faults them in */
	}
	drain_leftovers();
	/* A size no other test uses: a buffer mapped for this thread (1 MiB:
	 * too small for a huge page). */
	ring_capacity = 32768;
	ring_capacity_max = ring_capacity;
	run_on_thread(push_1000_then_drain, &f);
	ring_capacity = 65536;
	ring_capacity_max = 65536 * 8;
	drain_leftovers();
	assert_int_equal(f.rc, 0);
	assert_int_equal(f.cap, 32768);
	/* Records start 192 bytes into the mapping, 128 a page: [0, 1000)
	 * lie on pages 0 to 7, [1024, 3000) on pages 8 to 23, and the fill
	 * ends with record 3024's page, 23; [3200, 12200) start on page
	 * 25. */
	assert_int_equal(f.resident[0], 8);
	assert_int_equal(f.resident[1], 16);
	assert_int_equal(f.resident[2], 0);
	assert_int_equal(f.resident[3], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_ring_collects_pushed_records_in_order_with_fields),
		cmocka_unit_test(test_ring_wraps_around_its_end_in_two_runs),
		cmocka_unit_test(test_ring_drops_when_full_and_counts),
		cmocka_unit_test(test_ring_full_ring_grows_and_keeps_order),
		cmocka_unit_test(test_ring_collects_records_of_exited_thread),
		cmocka_unit_test(test_ring_quiet_thread_records_nothing),
		cmocka_unit_test(test_ring_drain_fills_new_buffer_ahead),
		cmocka_unit_test(
			test_ring_records_of_8_threads_all_arrive_in_order),
		cmocka_unit_test(
			test_ring_block_mode_loses_nothing_while_draining),
		cmocka_unit_test(
			test_ring_growing_while_draining_loses_nothing),
		cmocka_unit_test(
			test_ring_handler_recording_mid_push_loses_and_tears_nothing),
		cmocka_unit_test(
			test_ring_handler_finding_no_room_mid_push_drops_only_its_own),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
