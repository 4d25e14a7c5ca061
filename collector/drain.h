/*
 * drain.h - the drain thread's own state, shared by the files that make up
 * the drain: drain.c (the thread, its passes and the requests it serves),
 * endings.c (the endings that cannot queue a request: _exit, a fatal
 * signal, exec) and fork.c (fork's handlers). Sources never include it:
 * collector.h is theirs.
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
	char *trace;		    /* REQ_EXEC: the trace path        */
	size_t trace_len;
	int rc;
	int done; /* futex word: 1 once served */
	struct request *next;
};

/* LOCK_OWNER: held for each pass and each dump (drain.c). */
extern struct coll_lock drain_owner;

/* The requests waiting for the drain thread. */
struct drain_queue {
	struct coll_lock lock; /* LOCK_REQUESTS: the queue and accepting */
	struct request *head, *tail;
	int accepting; /* the drain thread serves requests */
};
extern struct drain_queue drain_q;

/* The drain thread and its flags (atomic where marked). */
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
 * the next safe point, not in the fork handler (drain.c). */
extern int drain_defer_child;

/* Wakes the drain thread. Async-signal-safe. */
void drain_wake(void);

/* Serves r on the drain thread and waits for it, or, when there is no
 * drain thread, on this thread. Returns r->rc. */
int drain_request(struct request *r);

/* Starts the drain thread; 0 or a negative errno. Owner held. */
int drain_start_thread(void);

/* (Re)initialises the collector's state for cfg; 0 or -ENOMEM. Owner
 * held. */
int drain_setup(const struct coll_config *cfg);

#endif
