/*
 * stack_reuse.c - a capture's stack without its walk: the last stack
 * captured from each place of a thread, kept with what its walk read.
 *
 * A hooked call's capture starts from its caller's frame (the return
 * address in the call's slot, the stack pointer above it, %rbp and %rbx).
 * From the same start, a native walk that finds the same stack words
 * where it reads them walks the same frames (stack_unwind_check()), and
 * where it stops at an enclosing hooked call, that call's stack is the
 * rest. The Python frames the capture read are compared too (a Python
 * loop calls from the same native place at each line). A place whose
 * walk cannot be kept (it passed a signal frame, or a hooked call without
 * a stack, or read more words than an entry holds) is noted too, so that
 * the next captures from there walk without noting their words. When all of it
 * is as it was, the stack is the one captured then, and its id is known: the
 * capture costs a few loads of words the thread's stack holds in its cache, no
 * walk of rules, no interning.
 *
 * The entries are the thread's own (in its capture scratch, stack.c),
 * each in one of a set of slots by its start (return address, stack
 * pointer) and the stack of the hooked call the capture is nested in (a
 * hint hook_rt gives): the stacks of one place under different enclosing
 * calls, or reached in turn from two callers or two Python lines, are
 * kept side by side instead of each evicting the other. Only a capture
 * that is not nested in another (a signal handler's) reads or writes
 * them, so none sees one half written.
 */
#include <string.h>

#include "stack.h"

/* The first slot of st's set. */
static inline uint32_t slot_of(const struct stack_unwind_start *st)
{
	uint64_t h = (st->ip ^ (st->sp << 17) ^ ((uint64_t)st->ctx << 40)) *
		     0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 40) & (STACK_REUSE_SLOTS - STACK_REUSE_WAYS);
}

static inline int same_start(const struct stack_reuse_ent *e,
			     const struct stack_unwind_start *st)
{
	return e->ip == st->ip && e->sp == st->sp && e->ctx == st->ctx;
}

/* Python frame f as an entry keeps it. */
static inline void py_pack(const struct py_frame *f, uintptr_t w[2])
{
	w[0] = f->code;
	w[1] = f->offset | (uintptr_t)f->entry << 32;
}

/* Entry e's stack when a capture from st now would give it, else 0.
 * *np: the Python frames read into py so far (-1: none yet). */
static uint32_t reuse_one(struct stack_reuse_ent *e,
			  const struct stack_unwind_start *st, int py_on,
			  struct py_frame *py, unsigned depth, int *np)
{
	if (e->py_on != (uint8_t)py_on ||
	    (e->log.rbp_in && e->rbp != st->rbp) ||
	    (e->log.rbx_in && e->rbx != st->rbx) ||
	    !stack_unwind_check(&e->log, e->rest)) {
		return 0;
	}
	if (e->py_read) {
		const uintptr_t(*pw)[2] = &e->log.w[e->log.n];

		if (*np < 0) {
			*np = (int)py_stack_capture(py, depth);
		}
		if ((unsigned)*np != e->np) {
			return 0;
		}
		for (unsigned i = 0; i < e->np; i++) {
			uintptr_t w[2];

			py_pack(&py[i], w);
			if (w[0] != pw[i][0] || w[1] != pw[i][1]) {
				return 0;
			}
		}
	}
	return e->id;
}

uint32_t stack_reuse_find(struct stack_reuse *r,
			  const struct stack_unwind_start *st, int py_on,
			  struct py_frame *py, unsigned depth, int *no_log)
{
	uint32_t s = slot_of(st);
	struct stack_reuse_ent *none = NULL;
	int np = -1;

	*no_log = 0;
	for (uint32_t k = 0; k < STACK_REUSE_WAYS; k++) {
		struct stack_reuse_ent *e = &r->e[s + k];

		if (!same_start(e, st)) {
			continue;
		}
		if (!e->id) {
			/* The start's walk could not be kept once; others
			 * from it may have been, in the other slots. */
			none = e;
			continue;
		}
		uint32_t id = reuse_one(e, st, py_on, py, depth, &np);

		if (id) {
			return id;
		}
	}
	if (none && none->skip) {
		none->skip--;
		*no_log = 1;
	}
	return 0;
}

void stack_reuse_keep(struct stack_reuse *r,
		      const struct stack_unwind_start *st, int py_on,
		      const struct stack_walk_log *log, uint32_t rest,
		      int py_read, const struct py_frame *py, unsigned np,
		      uint32_t id)
{
	int fits = log->ok && id && (!py_read || log->n + np <= STACK_LOG_MAX);
	struct stack_reuse_ent *set = &r->e[slot_of(st)], *e = set;

	/* The start's entry without a stack, else the set's free slot, else
	 * its oldest: a start has one such entry at most. */
	for (uint32_t k = 1; k < STACK_REUSE_WAYS; k++) {
		if (set[k].age < e->age) {
			e = &set[k];
		}
	}
	for (uint32_t k = 0; k < STACK_REUSE_WAYS; k++) {
		if (!set[k].id && same_start(&set[k], st)) {
			e = &set[k];
		}
	}
	e->ip = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->id = fits ? id : 0;
	e->skip = fits ? 0 : STACK_REUSE_SKIP;
	e->rest = rest;
	e->ctx = st->ctx;
	e->age = ++r->kept;
	e->rbp = st->rbp;
	e->rbx = st->rbx;
	e->py_on = (uint8_t)py_on;
	e->py_read = (uint8_t)py_read;
	e->np = (uint8_t)(fits && py_read ? np : 0);
	if (fits) {
		e->log.n = log->n;
		e->log.gen = log->gen;
		e->log.ok = 1;
		e->log.rbp_in = log->rbp_in;
		e->log.rbx_in = log->rbx_in;
		e->log.through = log->through;
		memcpy(e->log.w, log->w, log->n * sizeof(log->w[0]));
		for (unsigned i = 0; i < e->np; i++) {
			py_pack(&py[i], e->log.w[log->n + i]);
		}
	}
	e->sp = st->sp;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->ip = st->ip;
}
