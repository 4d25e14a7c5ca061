/*
 * stack_unwind_thread.c - the walk of a thread that is not the caller
 * (threads_now.c's), from the registers it was given: /proc's instruction
 * and stack pointers for a thread blocked in a system call.
 *
 * The same steps as stack_unwind()'s (stack_unwind.c works out each
 * frame's rules: stack_unwind_rule_at()), with three differences: every
 * stack word is read with stack_read_word() (process_vm_readv on this
 * process), so a thread that runs on meanwhile gives a wrong frame, never
 * a fault; %rbp and %rbx may be unknown (a rule that needs one ends the
 * walk, STACK_END_REGS, but for a frame-pointer frame, which is searched
 * for: fp_search(); a register saved by a frame the walk passed is known
 * from there on); and a hooked call is passed through the walked
 * thread's own shadow frames (the function stack_set_through_tid()
 * names), not the caller's.
 */
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stack.h"

int stack_read_word(uintptr_t addr, uintptr_t *v)
{
	struct iovec local = {v, sizeof(*v)};
	struct iovec remote = {(void *)addr, sizeof(*v)};

	if (addr < 4096) {
		return -1;
	}
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
			       (ssize_t)sizeof(*v)
		       ? 0
		       : -1;
}

static stack_through_tid_fn through_tid;

void stack_set_through_tid(stack_through_tid_fn fn)
{
	__atomic_store_n(&through_tid, fn, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)

struct rregs {
	uintptr_t ip, sp, rbp, rbx;
	unsigned known;
};

/* A register's caller value by rule (where, off): *known says whether it
 * could be had, *bad is set when a stack word could not be read.
 * cur_known: the current value is known. */
static uintptr_t rreg_value(uint8_t where, int32_t off, uintptr_t cur,
			    int cur_known, uintptr_t cfa, uintptr_t sp,
			    int *known, int *bad)
{
	uintptr_t v = 0;

	switch (where) {
	case W_SAME:
		*known = cur_known;
		return cur;
	case W_CFA:
		*known = stack_read_word(cfa + (intptr_t)off, &v) == 0;
		*bad |= !*known;
		return v;
	case W_SP:
		*known = stack_read_word(sp + (intptr_t)off, &v) == 0;
		*bad |= !*known;
		return v;
	case W_VAL_CFA:
		*known = 1;
		return cfa + (intptr_t)off;
	default:
		*known = 0;
		return 0;
	}
}

/* Does the code just before ra end with a call instruction: e8 rel32, or
 * ff /2 with a register, a displacement or a RIP-relative operand? */
static int after_call(uintptr_t ra)
{
	uintptr_t w;
	uint8_t b[8];

	if (stack_read_word(ra - 8, &w) < 0) {
		return 0;
	}
	memcpy(b, &w, sizeof(b)); /* b[8 - k] is the byte at ra - k */
	if (b[3] == 0xe8 || (b[2] == 0xff && b[3] == 0x15)) {
		return 1;
	}
	for (int k = 2; k <= 7; k++) {
		if (b[8 - k] == 0xff && ((b[9 - k] >> 3) & 7) == 2) {
			return 1;
		}
	}
	return 0;
}

/*
 * A frame whose CFA is %rbp + 16 (a function with a frame pointer) while
 * %rbp is unknown (/proc gives a blocked thread's %rsp and %rip only): its
 * %rbp is the address of the pair it pushed, the caller's %rbp and the
 * return address. The search takes the lowest word at or above %rsp, at
 * most 64 KiB up, that holds 0 or an address higher up the stack (a saved
 * %rbp), followed by a return address (code with unwind rules, right
 * after a call instruction). Returns 0 with r->rbp set, or -1.
 */
static int fp_search(struct rregs *r)
{
	for (uintptr_t a = r->sp; a < r->sp + 65536; a += 8) {
		uintptr_t bp, ra;
		struct stack_unwind_rule e;

		if (stack_read_word(a, &bp) < 0) {
			return -1;
		}
		if ((bp != 0 && (bp <= a || bp > a + (64u << 20))) ||
		    stack_read_word(a + 8, &ra) < 0 || ra < 4096 ||
		    stack_unwind_rule_at(ra - 1, &e) < 0 || !after_call(ra)) {
			continue;
		}
		r->rbp = a;
		r->known |= STACK_KNOW_RBP;
		return 0;
	}
	return -1;
}

/* Steps *r to its caller by rule e. Returns STACK_END_BASE when done (the
 * caller is in *r), or why it cannot. */
static int rstep(struct rregs *r, const struct stack_unwind_rule *e)
{
	uintptr_t cfa = 0, sp = r->sp;
	int k_ip, k_bp, k_bx, k_sp = 1, bad = 0;

	switch (e->cfa_kind) {
	case CFA_RSP:
		cfa = r->sp + (intptr_t)e->cfa_off;
		break;
	case CFA_RBP:
		if (!(r->known & STACK_KNOW_RBP) &&
		    (e->cfa_off != 16 || fp_search(r) < 0)) {
			return STACK_END_REGS;
		}
		cfa = r->rbp + (intptr_t)e->cfa_off;
		break;
	case CFA_RBX:
		if (!(r->known & STACK_KNOW_RBX)) {
			return STACK_END_REGS;
		}
		cfa = r->rbx + (intptr_t)e->cfa_off;
		break;
	case CFA_DEREF_RSP:
		if (stack_read_word(r->sp + (intptr_t)e->cfa_off, &cfa) < 0) {
			return STACK_END_READ;
		}
		break;
	default:
		return STACK_END_NOINFO;
	}
	uintptr_t ip =
		rreg_value(e->ra_where, e->ra_off, 0, 0, cfa, sp, &k_ip, &bad);
	uintptr_t rbp =
		rreg_value(e->rbp_where, e->rbp_off, r->rbp,
			   !!(r->known & STACK_KNOW_RBP), cfa, sp, &k_bp, &bad);
	uintptr_t rbx =
		rreg_value(e->rbx_where, e->rbx_off, r->rbx,
			   !!(r->known & STACK_KNOW_RBX), cfa, sp, &k_bx, &bad);
	uintptr_t nsp = e->rsp_where == W_SAME
				? cfa
				: rreg_value(e->rsp_where, e->rsp_off, 0, 0,
					     cfa, sp, &k_sp, &bad);
	if (bad) {
		return STACK_END_READ;
	}
	if (!k_ip || !k_sp) {
		return STACK_END_NOINFO;
	}
	r->ip = ip;
	r->sp = nsp;
	r->rbp = rbp;
	r->rbx = rbx;
	r->known = (k_bp ? STACK_KNOW_RBP : 0) | (k_bx ? STACK_KNOW_RBX : 0);
	return STACK_END_BASE;
}

int stack_unwind_thread(int tid, const struct stack_unwind_start *st,
			void **ips, int max, int *end)
{
	stack_through_tid_fn thru =
		__atomic_load_n(&through_tid, __ATOMIC_ACQUIRE);
	struct rregs r = {st->ip, st->sp, st->rbp, st->rbx, st->known};
	int n = 0, is_ret = st->at_call ? 1 : 0;

	*end = STACK_END_DEPTH;
	if (max <= 0) {
		return 0;
	}
	ips[n++] = (void *)r.ip;
	while (n < max) {
		uintptr_t at = r.ip - (uintptr_t)is_ret, sp = r.sp;
		struct stack_unwind_rule e;

		if (stack_unwind_rule_at(at, &e) < 0) {
			*end = STACK_END_NOINFO;
			return n;
		}
		if (e.ra_where == W_UNDEF) {
			*end = STACK_END_BASE;
			return n;
		}
		int why = rstep(&r, &e);
		if (why != STACK_END_BASE) {
			*end = why;
			return n;
		}
		if (r.ip < 0x1000) {
			*end = STACK_END_BASE;
			return n;
		}
		if (!e.signal && r.sp <= sp) {
			*end = STACK_END_NOINFO;
			return n;
		}
		is_ret = !e.signal;
		if (thru && stack_unwind_in_stubs(r.ip)) {
			uintptr_t ret, rbx;
			int got = thru(tid, r.ip, r.sp, &ret, &rbx);
			if (got == 0) {
				*end = STACK_END_HOOK;
				return n;
			}
			if (got > 0) {
				r.ip = ret;
				r.rbx = rbx;
				r.known |= STACK_KNOW_RBX;
				is_ret = 1;
			}
		}
		ips[n++] = (void *)r.ip;
	}
	return n;
}

#else /* !__x86_64__ */

int stack_unwind_thread(int tid, const struct stack_unwind_start *st,
			void **ips, int max, int *end)
{
	(void)tid;
	(void)st;
	(void)ips;
	(void)max;
	*end = STACK_END_NOINFO;
	return 0;
}

#endif
