/*
 * ring.c - per-thread record buffers.
 *
 * Each thread that records owns one ring: a single-producer single-consumer
 * circular buffer of struct coll_rec. The thread writes a record into the
 * slot at head and then publishes head with a release store, so a record
 * becomes visible to the drain thread only once it is fully written (a crash
 * handler that drains the rings never sees half a record). The drain thread
 * reads up to head and releases the slots by storing tail.
 *
 * The hot path (ring_push) touches only the thread's own ring through an
 * initial-exec TLS pointer: no lock, no allocation, no system call. The
 * first record of a thread maps its ring (mmap, not malloc, so that
 * recording from inside a malloc hook cannot recurse) and links it into the
 * registry under a mutex; that happens once per thread.
 *
 * A full ring drops the record from the timeline and counts it
 * (COLL_OVERFLOW_DROP), or waits for the drain thread (COLL_OVERFLOW_BLOCK)
 * for at most RING_BLOCK_MAX_NS, so that a dead drain thread can never
 * hang the program. A dropped record still reaches the tables: it is added
 * to the ring's tally (tally.c), which the drain thread folds in.
 *
 * A full ring first grows: the thread moves to a ring twice as big, up to
 * ring_capacity_max records (8 times the first size by default), so that a
 * thread that outruns the drain for a while (the drain thread waits for a core,
 * or its first pass allocates) loses nothing. The move takes a few microseconds
 * (a mapping) at most a few times in a thread's life. The old ring is retired
 * as if its thread had exited, and the new one names it as its predecessor: the
 * drain thread empties the old ring before it reads the new one, so that a
 * thread's records still reach it in the order they ended.
 *
 * When a thread exits, a pthread key destructor marks its ring dead; the
 * drain thread empties it and marks it free for the next thread.
 *
 * The registry of rings takes no lock. Rings are only ever added, at the
 * head of one list, with a compare-and-swap, and never leave it: a thread
 * claims a free ring of the right size (free -> claimed, again with a
 * compare-and-swap) or maps a new one. So a thread's first record never
 * waits for the drain thread, whatever that is doing (writing the journal
 * of a large pass, say), and is as safe in a signal handler as every
 * other push. The drain thread walks the list without a lock: a ring
 * added meanwhile is seen on the next pass. The drop counts of recycled
 * rings move into one total under a sequence count, so that
 * ring_dropped(), which any thread may call, never counts one twice.
 *
 * A signal handler may record while its thread is in the middle of
 * ring_push(). So a push counts itself in depth, claims its slot by
 * advancing reserve in one instruction, writes the slot, and only the
 * outermost push publishes head = reserve: a handler's record goes in the
 * next slot, and both become visible together when the interrupted push
 * completes. Wherever the handler lands, no record is overwritten or
 * published half-written. A push that claimed a slot without room gives
 * it back (again in one instruction) unless a handler claimed a later one
 * since; a handler could only have written that one with room, so there
 * is room for the earlier slot too. Signal fences keep the compiler from
 * moving the steps across each other. hook_tramp.S takes the same steps.
 *
 * Only head is shared with the drain thread. What only the producer (and
 * its signal handlers) touch, reserve, depth, the cached tail and a copy
 * of the mask, lives in the thread's initial-exec TLS rather than in the
 * ring: a push then claims its slot with one %fs-relative instruction,
 * without first loading the ring's address, which shortens the chain of
 * dependent loads on every push by one.
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
#include "ring_abi.h"

#define RING_BLOCK_MAX_NS (10ull * 1000000000ull)

struct ring {
	/* Producer's line. */
	uint64_t head; /* published: slots below are complete */
	uint64_t dropped;
	struct tally *tally; /* after the records, in the same mapping */
	char comm[16];	     /* the thread's OS name when it attached    */
	char pad0[24];
	/* Consumer's line. */
	uint64_t tail;
	uint64_t snap; /* head seen by the current drain pass */
	char pad1[48];
	/* Set when mapped; tid when claimed; state as the comments of enum
	 * ring_state say. next never changes once the ring is listed. */
	uint64_t mask;
	size_t map_len;
	int tid;
	int state; /* enum ring_state, atomic */
	struct ring *next;
	/* The thread's ring before this one grew into it: the drain thread
	 * reads this one only once that one is empty and free (NULL). Set
	 * before the ring is live; then only the drain thread writes them. */
	struct ring *pred;
	struct ring *succ;
	char pad2[16]; /* records start on a line: none straddles two */
	struct coll_rec recs[];
};

/* A ring's life: a thread claims a free one (or maps a new one, claimed),
 * makes it live, and marks it dead when it exits; the drain thread frees
 * it once it is empty. Only the drain thread reads the records of rings
 * that are live or dead. */
enum ring_state { RING_FREE = 0, RING_CLAIMED, RING_LIVE, RING_DEAD };

struct tls_state {
	struct ring *rec;     /* where records go: ring, or NULL when quiet */
	uint64_t reserve;     /* claimed: slots below are being written      */
	uint64_t cached_tail; /* the producer's copy of the ring's tail       */
	uint64_t mask;	      /* the ring's mask                              */
	uint64_t limit;	      /* a push further past cached_tail: room_for()  */
	uint32_t depth;	      /* pushes in progress on this thread (signals) */
	int quiet;
	struct ring *ring;
	int attaching;
	int exited;
	int exit_rounds; /* calls of on_thread_exit so far */
};

/* Not static: hook_tramp.S pushes its records through it (ring_abi.h). */
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
_Static_assert(COLL_FLAG_STATUS == REC_FLAG_STATUS, "abi");
_Static_assert(COLL_FLAG_ERROR == REC_FLAG_ERROR, "abi");

static struct ring *all;	 /* every ring ever mapped (atomic head) */
static uint64_t dropped_gone;	 /* drops of rings already recycled      */
static uint64_t dropped_other;	 /* drops with no ring to count on       */
static unsigned dropped_seq;	 /* odd while a ring's drops move        */
static uint64_t tally_lost_gone; /* tally_lost of rings recycled      */
static tally_fn tally_sink;
static void *tally_ctx;
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
	r->state = RING_CLAIMED;
	return r;
}

/* Claims a free ring of cap records, or returns NULL. */
static struct ring *claim_free(uint64_t cap)
{
	for (struct ring *r = __atomic_load_n(&all, __ATOMIC_ACQUIRE); r;
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
	struct ring *head = __atomic_load_n(&all, __ATOMIC_RELAXED);

	do {
		r->next = head;
	} while (!__atomic_compare_exchange_n(
		&all, &head, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
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
		ring_tls.depth = 0;
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

/* HOT. See collector.h. */
/* A record's words, written over the slot's struct coll_rec. */
typedef uint64_t rec_word __attribute__((may_alias));

/* The record of words w, for the tally of a dropped one. */
static struct coll_rec rec_of_words(const uint64_t w[4])
{
	struct coll_rec rec;

	memcpy(&rec, w, sizeof(rec));
	return rec;
}

int ring_push_words(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3)
{
	struct ring *r = ring_tls.rec;

	if (__builtin_expect(!r, 0)) {
		if (ring_tls.quiet) {
			return 0;
		}
		r = attach();
		if (!r) {
			__atomic_fetch_add(&dropped_other, 1, __ATOMIC_RELAXED);
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

/* A ring the drain thread reads: live, or dead with records left. */
static int in_use(const struct ring *r)
{
	int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);

	return st == RING_LIVE || st == RING_DEAD;
}

int ring_any(void)
{
	return __atomic_load_n(&all, __ATOMIC_ACQUIRE) != NULL;
}

uint64_t ring_dropped(void)
{
	uint64_t n;
	unsigned seq;

	/* A sequence count: the loads of the counts are acquires, so the
	 * second read of seq cannot move before them. */
	do {
		while ((seq = __atomic_load_n(&dropped_seq, __ATOMIC_ACQUIRE)) &
		       1u) {
			sched_yield();
		}
		n = __atomic_load_n(&dropped_other, __ATOMIC_ACQUIRE) +
		    __atomic_load_n(&dropped_gone, __ATOMIC_ACQUIRE);
		for (struct ring *r = __atomic_load_n(&all, __ATOMIC_ACQUIRE);
		     r; r = r->next) {
			if (in_use(r)) {
				n += __atomic_load_n(&r->dropped,
						     __ATOMIC_ACQUIRE);
			}
		}
	} while (__atomic_load_n(&dropped_seq, __ATOMIC_RELAXED) != seq);
	return n;
}

uint64_t ring_tally_lost(void)
{
	uint64_t n;
	unsigned seq;

	do {
		while ((seq = __atomic_load_n(&dropped_seq, __ATOMIC_ACQUIRE)) &
		       1u) {
			sched_yield();
		}
		n = __atomic_load_n(&tally_lost_gone, __ATOMIC_ACQUIRE);
		for (struct ring *r = __atomic_load_n(&all, __ATOMIC_ACQUIRE);
		     r; r = r->next) {
			if (in_use(r)) {
				n += __atomic_load_n(&r->tally->lost,
						     __ATOMIC_ACQUIRE);
			}
		}
	} while (__atomic_load_n(&dropped_seq, __ATOMIC_RELAXED) != seq);
	return n;
}

void ring_set_tally_sink(tally_fn fn, void *ctx)
{
	tally_sink = fn;
	tally_ctx = ctx;
}

/* Frees the dead, empty ring r, moving its drop count into the total:
 * between two increments of the sequence count, the first an acquire (the
 * moves cannot start before it), the second a release. */
static void recycle(struct ring *r)
{
	__atomic_fetch_add(&dropped_seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&dropped_gone, dropped_gone + r->dropped,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tally_lost_gone, tally_lost_gone + r->tally->lost,
			 __ATOMIC_RELAXED);
	tally_clear(r->tally);
	__atomic_fetch_add(&dropped_seq, 1, __ATOMIC_RELEASE);
	if (r->succ) {
		__atomic_store_n(&r->succ->pred, NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&r->succ, NULL, __ATOMIC_RELAXED);
	}
	/* A grown ring waits for the next thread that grows: without the
	 * pages its records used. */
	if (r->mask + 1 != ring_capacity) {
		madvise(r->recs,
			(size_t)(r->mask + 1) * sizeof(struct coll_rec),
			MADV_DONTNEED);
	}
	__atomic_store_n(&r->state, RING_FREE, __ATOMIC_RELEASE);
}

/* One round of ring_collect(); sets *again when it freed a ring that
 * another grew from, whose records may now be read. */
static uint64_t collect_round(ring_emit_fn emit, void *ctx, int anchor,
			      int *again)
{
	struct ring *list = __atomic_load_n(&all, __ATOMIC_ACQUIRE);
	uint64_t total = 0;

	for (struct ring *r = list; r; r = r->next) {
		r->snap = in_use(r)
				  ? __atomic_load_n(&r->head, __ATOMIC_ACQUIRE)
				  : r->tail;
	}
	if (anchor) {
		clock_anchor();
	}
	for (struct ring *r = list; r; r = r->next) {
		uint64_t t = r->tail;
		/* A ring grown from one not yet empty waits for it. */
		int wait = __atomic_load_n(&r->pred, __ATOMIC_RELAXED) != NULL;
		if (!wait && t < r->snap) {
			threads_note_comm(r->tid, r->comm);
		}
		while (!wait && t < r->snap) {
			uint64_t i = t & r->mask;
			uint64_t n = r->snap - t;
			if (n > r->mask + 1 - i) {
				n = r->mask + 1 - i;
			}
			emit(ctx, r->tid, &r->recs[i], (size_t)n);
			t += n;
		}
		total += t - r->tail;
		__atomic_store_n(&r->tail, t, __ATOMIC_RELEASE);
		if (tally_sink && in_use(r)) {
			tally_take(r->tally, tally_sink, tally_ctx);
		}
	}
	/* Free the rings of exited threads once they are empty. */
	for (struct ring *r = list; r; r = r->next) {
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == RING_DEAD &&
		    r->tail == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE)) {
			*again |= r->succ != NULL;
			recycle(r);
		}
	}
	return total;
}

/*
 * One drain pass: snapshots every ring's head, takes a clock anchor, then
 * hands each ring's new records to emit (in at most two contiguous runs per
 * ring, oldest first) and releases them. Dead rings that are empty are
 * freed for new threads. A ring a thread grew into is read once the one it
 * grew from is empty and freed, in a further round of the same pass. Call only
 * from the thread that drains (the collector's owner); takes no lock, so a
 * thread's first record never waits for it. Returns the number of records
 * handed over. This function can't fail.
 */
uint64_t ring_collect(ring_emit_fn emit, void *ctx)
{
	uint64_t total = 0;
	int again = 1;

	for (int round = 0; again; round++) {
		again = 0;
		total += collect_round(emit, ctx, round == 0, &again);
	}
	return total;
}

/*
 * Calls fn for every thread that has a ring (live, or dead and not yet
 * freed). The drain thread's; takes no lock. This function can't fail.
 */
void ring_foreach_tid(void (*fn)(void *ctx, int tid, int dead), void *ctx)
{
	for (struct ring *r = __atomic_load_n(&all, __ATOMIC_ACQUIRE); r;
	     r = r->next) {
		int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		/* A ring its thread grew out of: the thread has another. */
		if ((st == RING_LIVE || st == RING_DEAD) &&
		    !__atomic_load_n(&r->succ, __ATOMIC_RELAXED)) {
			fn(ctx, r->tid, st == RING_DEAD);
		}
	}
}

/*
 * Child side of fork(): records still in the rings were made by the parent,
 * which drains them itself, so the child discards them. Rings of threads
 * that do not exist in the child are freed; the calling thread keeps its
 * ring under its new tid. Drop counts restart at zero. The drain thread
 * was between passes (the fork handlers hold the collector's owner lock).
 */
void ring_after_fork_child(void)
{
	struct ring *mine = ring_tls.ring;

	/* A push of this thread cut by fork() never ends: its slots count as
	 * published, then as drained, like every other ring's. */
	ring_tls.depth = 0;
	ring_tls.cached_tail = ring_tls.reserve;
	for (struct ring *r = all; r; r = r->next) {
		r->head = r == mine ? ring_tls.reserve : 0;
		r->tail = r->snap = r->head;
		r->dropped = 0;
		tally_clear(r->tally);
		r->state = r == mine ? RING_LIVE : RING_FREE;
		r->pred = NULL;
		r->succ = NULL;
	}
	if (mine) {
		mine->tid = (int)syscall(SYS_gettid);
	}
	dropped_gone = dropped_other = tally_lost_gone = 0;
	dropped_seq = 0;
}
