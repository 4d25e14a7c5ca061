/*
 * ring_push.c - the producer's side of the rings: a thread's pushes.
 *
 * ring_push_words() is the hot path: it writes a record into the calling
 * thread's ring through an initial-exec TLS pointer, without a lock, an
 * allocation or a system call, and is safe in a signal handler. The rest of
 * this file runs a few times in a thread's life: its first record maps or
 * claims its ring, a full ring grows (or the record is dropped and tallied,
 * or the thread waits), and the exit key marks the ring dead. ring.h says
 * how the rings work and what the drain thread's side (ring_collect.c)
 * does with them.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "internal.h"
#include "ring.h"
#include "ring_abi.h"

#define RING_BLOCK_MAX_NS (10ull * 1000000000ull)

__thread struct tls_state ring_tls __attribute__((tls_model("initial-exec")));

_Static_assert(offsetof(struct tls_state, rec) == RING_TLS_REC, "abi");
_Static_assert(offsetof(struct tls_state, reserve) == RING_TLS_RESERVE, "abi");
_Static_assert(offsetof(struct tls_state, cached_tail) == RING_TLS_CACHED_TAIL,
	       "abi");
_Static_assert(offsetof(struct tls_state, mask) == RING_TLS_MASK, "abi");
_Static_assert(offsetof(struct tls_state, limit) == RING_TLS_LIMIT, "abi");
_Static_assert(offsetof(struct tls_state, depth) == RING_TLS_DEPTH, "abi");
_Static_assert(offsetof(struct ring, head) == RING_HEAD, "abi");
_Static_assert(offsetof(struct ring, recs) == RING_RECS, "abi");
_Static_assert(sizeof(struct coll_rec) == 1u << REC_SIZE_LOG2, "abi");
_Static_assert(offsetof(struct coll_rec, t0) == REC_T0, "abi");
_Static_assert(offsetof(struct coll_rec, t1) == REC_T1, "abi");
_Static_assert(offsetof(struct coll_rec, name) == REC_NAME, "abi");
_Static_assert(offsetof(struct coll_rec, group) == REC_NAME + 4, "abi");
_Static_assert(offsetof(struct coll_rec, kind) == REC_KIND, "abi");
_Static_assert(offsetof(struct coll_rec, cat) == REC_KIND + 2, "abi");
_Static_assert(offsetof(struct coll_rec, flags) == REC_KIND + 3, "abi");
_Static_assert(offsetof(struct coll_rec, arg) == REC_KIND + 4, "abi");
_Static_assert(COLL_SPAN == REC_KIND_SPAN, "abi");
_Static_assert(COLL_FLAG_STACK == REC_FLAG_STACK, "abi");
_Static_assert(COLL_FLAG_STATUS == REC_FLAG_STATUS, "abi");
_Static_assert(COLL_FLAG_ERROR == REC_FLAG_ERROR, "abi");

struct ring *ring_all;
uint64_t ring_dropped_other;
static void (*attach_notify)(void);
static void (*ring_wake)(void); /* wakes the drain thread */
static pthread_key_t exit_key;
static int exit_key_ok;

volatile struct hot_flag coll_recording;
unsigned ring_capacity = 65536;
unsigned ring_capacity_max = 65536 * 8;
int ring_overflow = COLL_OVERFLOW_DROP;
volatile int ring_drain_alive;

/*
 * The exit key's destructor. The program's own thread-specific data
 * destructors may run after it in the same round and still record (a
 * hooked call in a destructor), so it keeps its value set, which makes
 * glibc run another round, and lets the ring go in the last round but
 * one: runtimes that tear down their own thread state in the last round
 * (the sanitizers' do) must not have gone before it.
 */
static void on_thread_exit(void *p)
{
	struct ring *r = p;

	if (r && ++ring_tls.exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1 &&
	    pthread_setspecific(exit_key, r) == 0) {
		return;
	}
	/* The key keeps the ring the thread attached with; it may have grown
	 * into another since. */
	if (ring_tls.ring) {
		r = ring_tls.ring;
	}
	ring_tls.exited = 1;
	ring_tls.rec = NULL;
	ring_tls.ring = NULL;
	if (r) {
		__atomic_store_n(&r->state, RING_DEAD, __ATOMIC_RELEASE);
	}
}

/*
 * Prepares the registry. Call once from the library constructor. Returns 0
 * or a negative errno (threads then record nothing, and drops are counted).
 */
int ring_init(void)
{
	if (!exit_key_ok &&
	    pthread_key_create(&exit_key, on_thread_exit) == 0) {
		exit_key_ok = 1;
	}
	return exit_key_ok ? 0 : -EAGAIN;
}

/* Maps a ring of cap records; populate: with its pages, for a thread that
 * grows into it and fills it at once. */
static struct ring *ring_map(uint64_t cap, int populate)
{
	size_t len = sizeof(struct ring) +
		     (size_t)cap * sizeof(struct coll_rec) +
		     sizeof(struct tally);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS |
			       (populate ? MAP_POPULATE : 0),
		       -1, 0);

	if (p == MAP_FAILED) {
		return NULL;
	}
	struct ring *r = p;
	r->mask = cap - 1;
	r->map_len = len;
	r->tally = (struct tally *)(void *)&r->recs[cap];
	r->filled = populate ? cap : 0;
	r->state = RING_CLAIMED;
	return r;
}

/* Claims a free ring of cap records, or returns NULL. */
static struct ring *claim_free(uint64_t cap)
{
	for (struct ring *r = __atomic_load_n(&ring_all, __ATOMIC_ACQUIRE); r;
	     r = r->next) {
		int expect = RING_FREE;
		if (r->mask + 1 == cap &&
		    __atomic_compare_exchange_n(
			    &r->state, &expect, RING_CLAIMED, 0,
			    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			/* Empty (head == tail) and its counts moved: its
			 * slots go on from there. Only the drain thread
			 * writes tail and snap, which it may be reading
			 * now. */
			return r;
		}
	}
	return NULL;
}

/* Puts a newly mapped ring at the head of the list. */
static void list_add(struct ring *r)
{
	struct ring *head = __atomic_load_n(&ring_all, __ATOMIC_RELAXED);

	do {
		r->next = head;
	} while (!__atomic_compare_exchange_n(
		&ring_all, &head, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void ring_set_attach_notify(void (*fn)(void))
{
	attach_notify = fn;
}

void ring_set_wake(void (*fn)(void))
{
	ring_wake = fn;
}

/* Gives the calling thread a ring. Not the hot path: once per thread. */
static struct ring *attach(void)
{
	int saved = errno;
	struct ring *r = NULL;

	if (ring_tls.attaching || ring_tls.exited || !exit_key_ok) {
		return NULL;
	}
	ring_tls.attaching = 1;
	r = claim_free(ring_capacity);
	if (!r && (r = ring_map(ring_capacity, 0)) != NULL) {
		list_add(r);
	}
	if (r) {
		r->tid = (int)syscall(SYS_gettid);
		/* Its name now, for a thread that ends before the drain
		 * reads /proc (threads_note_comm). */
		if (prctl(PR_GET_NAME, r->comm) != 0) {
			r->comm[0] = 0;
		}
		__atomic_store_n(&r->state, RING_LIVE, __ATOMIC_RELEASE);
		if (attach_notify) {
			attach_notify(); /* a new thread in a forked child */
		}
		pthread_setspecific(exit_key, r);
		ring_tls.reserve = r->head;
		ring_tls.cached_tail = r->head;
		ring_tls.mask = r->mask;
		ring_tls.limit = r->mask >> 1;
		/* Not the depth: a signal handler attaches while its thread
		 * is in a push (hook_tramp.S counts itself in the depth
		 * before it looks for a ring), which counts itself out
		 * after; set to 0 here, that push left it at -1 and no
		 * record of the thread was ever published again. */
		ring_tls.ring = r;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ring_tls.rec = ring_tls.quiet ? NULL : r;
	}
	ring_tls.attaching = 0;
	errno = saved;
	return r;
}

/* Waits until slot h is free, for at most RING_BLOCK_MAX_NS and only
 * while the drain thread lives. Returns 0 or -ENOSPC. */
static int wait_for_room(struct ring *r, uint64_t h)
{
	uint64_t start = ticks_mono_ns();

	while (h - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) > r->mask) {
		if (!ring_drain_alive ||
		    ticks_mono_ns() - start > RING_BLOCK_MAX_NS) {
			return -ENOSPC;
		}
		sched_yield();
	}
	return 0;
}

/* Claims the thread's next slot and returns it. One instruction on x86-64
 * (no lock prefix: only this thread and its signal handlers write
 * reserve), so a handler sees the claim either made or not begun. */
static inline uint64_t claim(void)
{
#if defined(__x86_64__)
	uint64_t h = 1;

	__asm__ volatile("xaddq %0, %1"
			 : "+r"(h), "+m"(ring_tls.reserve)::"memory");
	return h;
#else
	return __atomic_fetch_add(&ring_tls.reserve, 1, __ATOMIC_RELAXED);
#endif
}

/* Gives slot h back if it is still the last one claimed. Returns 1 when it
 * did. */
static inline int unclaim(uint64_t h)
{
	uint64_t expect = h + 1;
#if defined(__x86_64__)
	unsigned char done;

	__asm__ volatile("cmpxchgq %3, %1\n\tsete %0"
			 : "=q"(done), "+m"(ring_tls.reserve), "+a"(expect)
			 : "r"(h)
			 : "memory", "cc");
	return done;
#else
	return __atomic_compare_exchange_n(&ring_tls.reserve, &expect, h, 0,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

/* Counts one dropped record: one instruction on x86-64, for the same
 * reason as claim(); the drain thread reads the count. */
static inline void count_drop(struct ring *r)
{
#if defined(__x86_64__)
	__asm__ volatile("incq %0" : "+m"(r->dropped)::"memory");
#else
	__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
#endif
}

/* Ends a push: the outermost one publishes every slot claimed so far. */
static inline void push_end(struct ring *r)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--ring_tls.depth == 0) {
		__atomic_store_n(&r->head, ring_tls.reserve, __ATOMIC_RELEASE);
	}
}

/*
 * Slot h of the full ring r was claimed by the outermost push: moves the
 * thread to a ring twice as big, when r is not already the biggest one and
 * one can be had, and gives h back. Returns 1 when it did. Signals are
 * blocked meanwhile: a handler's push never sees the thread's ring state
 * half switched.
 */
static int grow(struct ring *r, uint64_t h)
{
	uint64_t cap = (r->mask + 1) * 2;
	sigset_t all_sigs, old;

	if (cap > ring_capacity_max) {
		return 0;
	}
	struct ring *n = claim_free(cap);
	int fresh = !n;
	if (fresh && !(n = ring_map(cap, 1))) {
		return 0;
	}
	sigfillset(&all_sigs);
	pthread_sigmask(SIG_BLOCK, &all_sigs, &old);
	/* A handler that claimed a later slot wrote it with room: then h
	 * has room too, and the thread stays. */
	int moved = unclaim(h);
	if (moved) {
		n->tid = r->tid;
		memcpy(n->comm, r->comm, sizeof(n->comm));
		__atomic_store_n(&n->pred, r, __ATOMIC_RELAXED);
		__atomic_store_n(&r->succ, n, __ATOMIC_RELAXED);
		__atomic_store_n(&n->state, RING_LIVE, __ATOMIC_RELEASE);
		/* Every slot below h is written: this is the only push. */
		__atomic_store_n(&r->head, h, __ATOMIC_RELEASE);
		__atomic_store_n(&r->state, RING_DEAD, __ATOMIC_RELEASE);
		ring_tls.reserve = n->head;
		ring_tls.cached_tail = n->head;
		ring_tls.mask = n->mask;
		ring_tls.limit = n->mask >> 1;
		ring_tls.ring = n;
		ring_tls.rec = n;
	} else {
		__atomic_store_n(&n->state, RING_FREE, __ATOMIC_RELEASE);
	}
	if (fresh) {
		list_add(n);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return moved;
}

/*
 * Slot h was claimed, and the cached tail says the ring is past its limit:
 * half full, or full. Returns 1 when h may be written after all, 2 when
 * the thread moved to a bigger ring (h was given back: claim again), or 0
 * when h was given back.
 *
 * A ring more than half full means the drain thread sleeps while this
 * thread floods (it waits up to its period when it last found little to
 * do): it is woken, and the limit moves a quarter of the ring further, so
 * that a thread that outruns the drain comes here once a quarter ring,
 * not at every push.
 */
__attribute__((noinline, cold)) static int room_for(struct ring *r, uint64_t h)
{
	ring_tls.cached_tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t fill = h - ring_tls.cached_tail;
	uint64_t half = r->mask >> 1;

	ring_tls.limit = half;
	if (fill > half) {
		uint64_t next = fill + (r->mask >> 2);
		ring_tls.limit = next < r->mask ? next : r->mask;
		if (ring_wake && ring_drain_alive) {
			ring_wake();
		}
	}
	if (fill <= r->mask) {
		return 1;
	}
	/* Only the outermost push may grow or wait: a handler must not stall
	 * the code it interrupted. */
	if (ring_tls.depth == 1 && grow(r, h)) {
		return 2;
	}
	if (ring_overflow == COLL_OVERFLOW_BLOCK && ring_tls.depth == 1 &&
	    wait_for_room(r, h) == 0) {
		return 1;
	}
	if (unclaim(h)) {
		return 0;
	}
	/* A handler claimed a later slot and, with room, wrote it. */
	return 1;
}

/* A record's words, written over the slot's struct coll_rec. */
typedef uint64_t rec_word __attribute__((may_alias));

/* The record of words w, for the tally of a dropped one: a span's stack
 * (COLL_FLAG_STACK) is no part of its row. */
static struct coll_rec rec_of_words(const uint64_t w[4])
{
	struct coll_rec rec;

	memcpy(&rec, w, sizeof(rec));
	coll_rec_unstack(&rec);
	return rec;
}

/* HOT. See collector.h. */
int ring_push_words(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3)
{
	struct ring *r = ring_tls.rec;

	if (__builtin_expect(!r, 0)) {
		if (ring_tls.quiet) {
			return 0;
		}
		r = attach();
		if (!r) {
			/* Lost to the timeline, not to the tables. */
			const uint64_t w[4] = {w0, w1, w2, w3};
			struct coll_rec rec = rec_of_words(w);
			__atomic_fetch_add(&ring_dropped_other, 1,
					   __ATOMIC_RELAXED);
			if (rec.kind != COLL_STACK) {
				tally_orphan(&rec);
			}
			return -ENOSPC;
		}
	}
	ring_tls.depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Read again now that the depth is up: a signal handler's push may
	 * have moved the thread to a bigger ring, or made it quiet. */
	r = ring_tls.rec;
	if (__builtin_expect(!r, 0)) {
		if (ring_tls.ring) {
			push_end(ring_tls.ring);
		} else {
			ring_tls.depth--;
		}
		return 0;
	}
	uint64_t h = claim();
	if (__builtin_expect(h - ring_tls.cached_tail > ring_tls.limit, 0)) {
		int room = room_for(r, h);
		if (room == 2) {
			r = ring_tls.rec;
			h = claim();
		} else if (!room) {
			const uint64_t w[4] = {w0, w1, w2, w3};
			struct coll_rec rec = rec_of_words(w);
			count_drop(r);
			if (rec.kind != COLL_STACK) {
				tally_add(r->tally, &rec);
			}
			push_end(r);
			return -ENOSPC;
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec_word *slot = (rec_word *)&r->recs[h & ring_tls.mask];
	slot[0] = w0;
	slot[1] = w1;
	slot[2] = w2;
	slot[3] = w3;
	push_end(r);
	return 0;
}

int ring_set_quiet(int quiet)
{
	int old = ring_tls.quiet;

	/* rec is what hook_tramp.S looks at: it goes first when turning
	 * quiet, last when turning back. */
	if (quiet) {
		ring_tls.rec = NULL;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ring_tls.quiet = quiet;
	} else {
		ring_tls.quiet = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ring_tls.rec = ring_tls.ring;
	}
	return old;
}
