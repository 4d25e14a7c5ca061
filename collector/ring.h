/*
 * ring.h - per-thread record buffers: the map of ring_push.c and
 * ring_collect.c, and what the two share.
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
 *
 * Files (declarations for the rest of the collector: collector.h for
 * sources, internal.h for the drain):
 *   ring_push.c     the producer: a thread's ring (map or claim, grow,
 *                   drop or wait when full), ring_push_words() (HOT),
 *                   ring_set_quiet(), and the settings the drain gives it.
 *   ring_collect.c  the consumer: ring_collect() for the drain thread,
 *                   freeing the rings of exited threads, the drop counts,
 *                   the threads that have rings, and fork's child side.
 *   ring_abi.h      the offsets hook_tramp.S pushes through.
 *
 * Who calls whom: sources (and hook_tramp.S, in assembly) push through
 * ring_push.c; drain.c, dump.c and fork.c call ring_collect.c, which reads
 * the registry ring_push.c adds to (ring_all, below). ring_collect.c hands
 * threads.c the OS name a thread had when it attached (threads_note_comm),
 * and threads.c quiets its own thread through ring_set_quiet() while it
 * holds its lock: ring_push.c <- threads.c <- ring_collect.c, no loop.
 */
#ifndef MXPROF_RING_H
#define MXPROF_RING_H

#include <stdint.h>

#include "internal.h"

struct ring {
	/* Producer's line. */
	uint64_t head; /* published: slots below are complete */
	uint64_t dropped;
	struct tally *tally; /* after the records, in the same mapping */
	char comm[16];	     /* the thread's OS name when it attached    */
	char pad0[24];
	/* Consumer's line. */
	uint64_t tail;
	uint64_t snap;	 /* head seen by the current drain pass */
	uint64_t filled; /* records whose pages the drain filled in */
	char pad1[40];
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

/* The calling thread's push state. Not static: hook_tramp.S pushes its
 * records through it (ring_abi.h). */
extern __thread struct tls_state ring_tls
	__attribute__((tls_model("initial-exec")));

/* ring_push.c: every ring ever mapped (an atomic list head; rings are only
 * added, at the head), and the records dropped with no ring to count them
 * on. ring_collect.c reads both. */
extern struct ring *ring_all;
extern uint64_t ring_dropped_other;

#endif
