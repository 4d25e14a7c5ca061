/*
 * drain.h - the drain's own face, shared by the files that make up the
 * drain, in this order (each calls only those before it):
 *
 *   drain.c    the state, one pass, the work of each request (owner held)
 *   queue.c    the drain thread and its queue; calls drain.c
 *   control.c  the coll_* calls of control.h; calls queue.c and drain.c
 *   endings.c  the endings that cannot queue a request (_exit, a fatal
 *              signal, exec); calls control.c, queue.c, drain.c
 *   fork.c     fork's handlers; calls queue.c and drain.c
 *
 * dump.c (the files a dump writes) works on the state drain.c gives it.
 * Sources never include this header: source.h and control.h are theirs.
 */
#ifndef MXPROF_DRAIN_H
#define MXPROF_DRAIN_H

#include <pthread.h>

#include "internal.h"

enum req_type { REQ_FLUSH, REQ_DUMP, REQ_DUMPS, REQ_FINISH, REQ_EXEC };

/* A request to the drain thread, on the requester's stack. */
struct request {
	int type;		    /* enum req_type                   */
	int dump;		    /* REQ_FINISH: write a final dump  */
	int reset;		    /* REQ_DUMPS: reset the aggregates */
	const struct table_opts *o; /* REQ_DUMPS                       */
	char *text;		    /* REQ_DUMPS: the result           */
	const char *steps;	    /* REQ_DUMP(S): only these steps, or NULL */
	char *trace;		    /* REQ_EXEC: the trace path        */
	size_t trace_len;
	int rc;
	int done; /* futex word: 1 once served */
	struct request *next;
};

/* The collector's state (internal.h), kept by drain.c. */
extern struct coll_state coll_state;

/* LOCK_OWNER: held for each pass and each dump (drain.c). */
extern struct coll_lock drain_owner;

/* The requests waiting for the drain thread (queue.c). */
struct queue {
	struct coll_lock lock; /* LOCK_REQUESTS: the queue and accepting */
	struct request *head, *tail;
	int accepting; /* the drain thread serves requests */
};
extern struct queue queue_q;

/* The drain thread and its flags (atomic where marked); drain.c keeps
 * it, queue.c runs the thread. */
struct drain_thread {
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
	int pause_req;	/* atomic: leave the loop for a moment   */
};
extern struct drain_thread drain_t;

/* Set under AddressSanitizer: a forked child starts its drain thread at
 * the next safe point, not in the fork handler (queue.c). */
extern int queue_defer_child;

/* queue.c. wake: wakes the drain thread (async-signal-safe). request:
 * serves r on the drain thread and waits for it, or, when there is no
 * drain thread, on this thread; returns r->rc. start_thread: starts the
 * drain thread, 0 or a negative errno, owner held. start_pending: starts
 * a forked child's deferred drain thread (a ring's attach notify). */
void queue_wake(void);
int queue_request(struct request *r);
int queue_start_thread(void);
void queue_start_pending(void);

/* drain.c, each taking the owner lock itself unless said otherwise.
 * pass: one pass, owner held; returns the records taken from the rings.
 * flush_sources, tick_sources: every source's flush or tick, no lock
 * held. dump: the sources' buffers, a pass and the files; 0 or a
 * negative errno; signal: the dump signal asked for it (a dump asked of
 * an image that has recorded nothing is owed again at its first pass
 * with records, and across exec). owed: whether a dump is owed now, owner
 * held. finish: the end, the final dump when dump is non-zero
 * (COLL_FINISH_IF_RECORDED: only when something was recorded). serve:
 * does r's work and sets r->rc (and r->text, r->trace). setup:
 * (re)initialises the state for cfg, owner held; 0 or -ENOMEM. */
uint64_t drain_pass(void);
void drain_flush_sources(void);
void drain_tick_sources(uint64_t now);
int drain_dump(int signal, const char *reason, const char *steps);
int drain_owed(void);
/* In flight mode: fires the trigger that is due (trigger.c), if any, its
 * hook first, then a pass and the window's file. Owner not held; on the
 * drain thread. */
void drain_triggers(void);
void drain_finish(int dump);
void drain_serve(struct request *r);
int drain_setup(const struct coll_config *cfg);

#endif
