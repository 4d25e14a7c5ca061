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
 * loop calls from the same native place at each line). When all of it is
 * as it was, the stack is the one captured then, and its id is known:
 * the capture costs a few loads of words the thread's stack holds in its
 * cache, no walk of rules, no interning.
 *
 * The entries are the thread's own (in its capture scratch, stack.c), in
 * sets of four by (return address, stack pointer), replaced by turns; only
 * a capture that is not nested in another (a signal handler's) reads or
 * writes them, so none sees one half written.
 */
#include <string.h>

#include "stack.h"

static inline uint32_t set_of(uintptr_t ip, uintptr_t sp)
{
	uint64_t h = (ip ^ (sp << 17)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 40) & (STACK_REUSE_SETS - 1);
}

uint32_t stack_reuse_find(const struct stack_reuse *r,
			  const struct stack_unwind_start *st, int py_on,
			  struct py_frame *py, unsigned depth)
{
	uint32_t set = set_of(st->ip, st->sp);
	const uintptr_t(*key)[2] = r->key[set];
	int way = key[0][0] == st->ip && key[0][1] == st->sp   ? 0
		  : key[1][0] == st->ip && key[1][1] == st->sp ? 1
		  : key[2][0] == st->ip && key[2][1] == st->sp ? 2
		  : key[3][0] == st->ip && key[3][1] == st->sp ? 3
							       : -1;
	if (way < 0) {
		return 0;
	}
	const struct stack_reuse_ent *e = &r->e[set][way];

	if (e->py_on != (uint8_t)py_on ||
	    (e->log.rbp_in && e->rbp != st->rbp) ||
	    (e->log.rbx_in && e->rbx != st->rbx) ||
	    !stack_unwind_check(&e->log, e->rest)) {
		return 0;
	}
	if (e->py_read) {
		unsigned np = py_stack_capture(py, depth);
		if (np != e->np || memcmp(py, e->py, np * sizeof(*py))) {
			return 0;
		}
	}
	return e->id;
}

void stack_reuse_keep(struct stack_reuse *r,
		      const struct stack_unwind_start *st, int py_on,
		      const struct stack_walk_log *log, uint32_t rest,
		      int py_read, const struct py_frame *py, unsigned np,
		      uint32_t id)
{
	if (!log->ok || !id || (py_read && np > STACK_REUSE_PY)) {
		return;
	}
	uint32_t set = set_of(st->ip, st->sp), way = 0;
	uintptr_t(*key)[2] = r->key[set];

	/* The entry this start has, else a free one, else the next by
	 * turns. */
	while (way < 4 && (key[way][0] != st->ip || key[way][1] != st->sp)) {
		way++;
	}
	for (uint32_t k = 0; way == 4 && k < 4; k++) {
		way = key[k][0] == 0 ? k : 4;
	}
	if (way == 4) {
		way = r->next++ & 3;
	}
	struct stack_reuse_ent *e = &r->e[set][way];

	key[way][0] = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->id = id;
	e->rest = rest;
	e->rbp = st->rbp;
	e->rbx = st->rbx;
	e->py_on = (uint8_t)py_on;
	e->py_read = (uint8_t)py_read;
	e->np = py_read ? np : 0;
	memcpy(e->py, py, e->np * sizeof(*py));
	e->log.n = log->n;
	e->log.gen = log->gen;
	e->log.ok = 1;
	e->log.rbp_in = log->rbp_in;
	e->log.rbx_in = log->rbx_in;
	e->log.through = log->through;
	memcpy(e->log.w, log->w, log->n * sizeof(log->w[0]));
	key[way][1] = st->sp;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	key[way][0] = st->ip;
}
