/*
 * stack_unwind.c - the native walk of a call stack: mxprof's own unwinder
 * over the objects' .eh_frame_hdr tables (x86-64).
 *
 * stack_unwind() walks the calling thread's frames by their DWARF call
 * frame information (stack_dwarf.c), tracking the four registers a walk
 * needs (the instruction pointer, %rsp, %rbp and %rbx). What a frame's
 * information says is worked out once per return address and kept in the
 * thread's rule cache (struct stack_unwind_cache): a walk whose addresses
 * are all known reads a cache entry and two or three words of stack per
 * frame, and makes no system call, takes no lock and allocates nothing,
 * so it is safe in a signal handler.
 *
 * An address not yet cached is looked up in its object's .eh_frame_hdr
 * search table (stack_objects.c finds the object); when the set of objects
 * changed, their table is a new generation, and rules cached from the old
 * one are worked out again (an address may now hold another object's
 * code).
 *
 * A hooked call that the walk passes (one the captured call is nested in)
 * returns into its stub's exit (hook_tramp.S), and its caller's return
 * address lives only in the hook runtime's shadow frame: the function
 * stack_set_through() names (hook_rt.c's) finds that frame and gives the
 * caller's return address, stack pointer and %rbx, and the walk goes on
 * from there as if the call had been direct. %rbp needs nothing: the stubs
 * never touch it, so its value as unwound through the hooked function is
 * the caller's. Where that call's own stack was captured as it began, the
 * walk stops instead and hands that stack's id back: from the call's
 * caller on, the two stacks are the same frames (the call still runs),
 * so a call nested in others walks only the frames since the innermost
 * of them.
 *
 * A walk from a hooked call's caller (stack_unwind_from()) can note every
 * stack word it read (struct stack_walk_log), and stack_unwind_check()
 * then tells whether a walk from there would still find the same frames,
 * by those words alone: what stack_reuse.c keeps a thread's stacks by.
 * Saved %rbp and %rbx values are noted only once a rule finds a CFA from
 * them: a register a function saved and nothing above it uses may hold
 * anything (a loop's counter) without changing the frames.
 *
 * The walk ends at a frame whose return address is undefined (_start, a
 * thread's start), at a frame without unwind information (code outside
 * every object, or an object without .eh_frame_hdr), or at rules it does
 * not follow (a general DWARF expression: a PLT entry, which a walk meets
 * only in a frame a signal interrupted). Signal frames (glibc's
 * __restore_rt, whose rules find the interrupted registers in the
 * ucontext) are walked through.
 */
#include <stdint.h>
#include <string.h>

#include "stack.h"

#if defined(__x86_64__)

/* ---- the hooked calls' way ------------------------------------------ */

static stack_through_fn through;
static uintptr_t through_lo, through_hi;

void stack_set_through(stack_through_fn fn, uintptr_t lo, uintptr_t hi)
{
	through_lo = lo;
	through_hi = hi;
	__atomic_store_n(&through, fn, __ATOMIC_RELEASE);
}

/* ---- the rule cache --------------------------------------------------- */

/*
 * A thread's cache has two parts. fast: sets of four (address, packed
 * rule) pairs, a cache line a set, for the common frame: the CFA is %rsp,
 * %rbp or %rbx plus at most 64 KiB, the return address lies just below
 * it, the caller's %rsp is the CFA, and %rbp and %rbx are unchanged or
 * saved near the CFA. full: any other rule (a signal frame, the end of
 * the stack, an address without a rule), which the fast part's entry
 * sends to. An entry is named by its address only once complete, so a
 * signal handler's walk, which only reads, never sees one half written.
 */
#define P_PRESENT   (1ull << 16)
#define P_FAST	    (1ull << 17)
#define P_RBP_SAVE  (1ull << 18)
#define P_RBX_SAVE  (1ull << 19)
#define P_CFA_SHIFT 20 /* 2 bits: CFA_RSP, CFA_RBP or CFA_RBX */
#define P_OFF_SHIFT 24 /* 16 bits: the CFA's offset */
#define P_RBP_SHIFT 40 /* 12 bits, signed: where %rbp is, from the CFA */
#define P_RBX_SHIFT 52 /* 12 bits, signed: where %rbx is */

#define RULE_NONE 0xff /* a full entry's cfa_kind: no rule */

static inline uint32_t set_of(uintptr_t ip)
{
	return (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) &
	       (STACK_UNWIND_SETS - 1);
}

static inline int fits12(int32_t v)
{
	return v >= -2048 && v < 2048;
}

/* The packed form of rule e, or P_PRESENT alone (full) when it has
 * none. */
static uint64_t pack(const struct stack_unwind_rule *e, uint32_t gen)
{
	uint64_t p = P_PRESENT | (gen & 0xffff);

	if (e->cfa_kind > CFA_RBX || e->cfa_off < 0 || e->cfa_off > 0xffff ||
	    e->ra_where != W_CFA || e->ra_off != -8 || e->rsp_where != W_SAME ||
	    e->signal || (e->rbp_where != W_SAME && e->rbp_where != W_CFA) ||
	    (e->rbx_where != W_SAME && e->rbx_where != W_CFA) ||
	    !fits12(e->rbp_off) || !fits12(e->rbx_off)) {
		return p;
	}
	p |= P_FAST | (uint64_t)e->cfa_kind << P_CFA_SHIFT |
	     (uint64_t)e->cfa_off << P_OFF_SHIFT;
	if (e->rbp_where == W_CFA) {
		p |= P_RBP_SAVE | (uint64_t)(e->rbp_off & 0xfff) << P_RBP_SHIFT;
	}
	if (e->rbx_where == W_CFA) {
		p |= P_RBX_SAVE | (uint64_t)(e->rbx_off & 0xfff) << P_RBX_SHIFT;
	}
	return p;
}

/* A packed rule of ip from the fast part, 0 on a miss. */
static inline uint64_t fast_get(const struct stack_unwind_cache *c,
				uintptr_t ip, uint32_t gen)
{
	const uint64_t *set = c->fast[set_of(ip)];

	for (int w = 0; w < 8; w += 2) {
		if (set[w] == ip) {
			uint64_t p = set[w + 1];
			return (p & 0xffff) == (gen & 0xffff) ? p : 0;
		}
	}
	return 0;
}

/* The full rule of ip in *e: 1, or 0 when it is known to have none the
 * walk can follow, -1 when the cache does not have it. */
static int full_get(const struct stack_unwind_cache *c, uintptr_t ip,
		    uint32_t gen, const struct stack_unwind_rule **e)
{
	uint32_t h = set_of(ip);

	for (uint32_t k = 0; k < 4; k++) {
		const struct stack_unwind_rule *f =
			&c->full[(h + k) & (STACK_UNWIND_FULL - 1)];
		if (f->ip == ip && f->gen == gen) {
			*e = f->cfa_kind == RULE_NONE ? NULL : f;
			return *e != NULL;
		}
	}
	return -1;
}

/* Keeps rule e of ip (cfa_kind RULE_NONE: no rule) in the cache. */
static void cache_put(struct stack_unwind_cache *c, uintptr_t ip,
		      const struct stack_unwind_rule *e, uint32_t gen)
{
	uint64_t p = pack(e, gen);
	uint32_t way = c->next++;

	if (!(p & P_FAST)) {
		struct stack_unwind_rule *f =
			&c->full[(set_of(ip) + (way & 3)) &
				 (STACK_UNWIND_FULL - 1)];
		f->ip = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		*f = *e;
		f->ip = 0;
		f->gen = gen;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		f->ip = ip;
	}
	uint64_t *set = c->fast[set_of(ip)];
	int w = (int)(way & 3) * 2;

	set[w] = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	set[w + 1] = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	set[w] = ip;
}

/* Keeps packed rule p of address at in memo entry m. The memo holds the
 * rules of the thread's last walks by depth: a walk checks the address
 * met at the same depth before it looks in the sets, so that a program
 * that captures from the same place again and again (a loop of calls)
 * finds its rules without hashing. */
static inline void memo_put(uint64_t *m, uintptr_t at, uint64_t p)
{
	m[0] = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m[1] = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m[0] = at;
}

/* ---- the walk --------------------------------------------------------- */

static inline uintptr_t load(uintptr_t addr)
{
	return *(const uintptr_t *)addr;
}

static inline uintptr_t reg_value(uint8_t where, int32_t off, uintptr_t cur,
				  uintptr_t cfa, uintptr_t sp)
{
	switch (where) {
	case W_CFA:
		return load(cfa + (intptr_t)off);
	case W_SP:
		return load(sp + (intptr_t)off);
	case W_VAL_CFA:
		return cfa + (intptr_t)off;
	default:
		return cur;
	}
}

/* The registers of a frame as the walk knows them. */
struct regs {
	uintptr_t ip, sp, rbp, rbx;
};

/* Steps from frame *r to its caller by packed rule p. */
static inline void step_fast(struct regs *r, uint64_t p)
{
	uint32_t kind = (uint32_t)(p >> P_CFA_SHIFT) & 3;
	uintptr_t base = kind == CFA_RSP   ? r->sp
			 : kind == CFA_RBP ? r->rbp
					   : r->rbx;
	uintptr_t cfa = base + ((p >> P_OFF_SHIFT) & 0xffff);

	r->ip = load(cfa - 8);
	if (p & P_RBP_SAVE) {
		r->rbp = load(cfa + (intptr_t)((int64_t)(p << 12) >> 52));
	}
	if (p & P_RBX_SAVE) {
		r->rbx = load(cfa + (intptr_t)((int64_t)p >> 52));
	}
	r->sp = cfa;
}

/* Steps from frame *r to its caller by full rule e. */
static void step_full(struct regs *r, const struct stack_unwind_rule *e)
{
	uintptr_t cfa;

	switch (e->cfa_kind) {
	case CFA_RSP:
		cfa = r->sp + (intptr_t)e->cfa_off;
		break;
	case CFA_RBP:
		cfa = r->rbp + (intptr_t)e->cfa_off;
		break;
	case CFA_RBX:
		cfa = r->rbx + (intptr_t)e->cfa_off;
		break;
	default: /* CFA_DEREF_RSP */
		cfa = load(r->sp + (intptr_t)e->cfa_off);
		break;
	}
	uintptr_t sp = r->sp;

	r->ip = reg_value(e->ra_where, e->ra_off, 0, cfa, sp);
	r->rbp = reg_value(e->rbp_where, e->rbp_off, r->rbp, cfa, sp);
	r->rbx = reg_value(e->rbx_where, e->rbx_off, r->rbx, cfa, sp);
	r->sp = e->rsp_where == W_SAME
			? cfa
			: reg_value(e->rsp_where, e->rsp_off, 0, cfa, sp);
}

/* Notes in log that the walk read word v at addr; a full log can no
 * longer stand for the walk. */
static inline void log_word(struct stack_walk_log *log, uintptr_t addr,
			    uintptr_t v)
{
	if (log->n < STACK_LOG_MAX) {
		log->w[log->n][0] = addr;
		log->w[log->n][1] = v;
		log->n++;
	} else {
		log->ok = 0;
	}
}

/* The walk can no longer be replayed: *log says so, and is no longer
 * written (its pointer is cleared). */
static inline void log_off(struct stack_walk_log **log)
{
	if (*log) {
		(*log)->ok = 0;
		*log = NULL;
	}
}

/* Where the walk's %rbp and %rbx came from, for its log: the start's
 * values (in0), or words read from the stack at addr not yet in the log
 * (pend): a saved value matters only once a rule finds a CFA from it. */
struct log_regs {
	uint8_t rbp_in0, rbx_in0, rbp_pend, rbx_pend;
	uintptr_t rbp_addr, rbx_addr;
};

/* Steps from *r by packed rule p as step_fast() does, noting in log what
 * the step depends on. */
static inline void log_fast(struct stack_walk_log *log, struct log_regs *lr,
			    struct regs *r, uint64_t p)
{
	uint32_t kind = (uint32_t)(p >> P_CFA_SHIFT) & 3;

	if (kind == CFA_RBP) {
		log->rbp_in |= lr->rbp_in0;
		if (lr->rbp_pend) {
			log_word(log, lr->rbp_addr, r->rbp);
			lr->rbp_pend = 0;
		}
	} else if (kind == CFA_RBX) {
		log->rbx_in |= lr->rbx_in0;
		if (lr->rbx_pend) {
			log_word(log, lr->rbx_addr, r->rbx);
			lr->rbx_pend = 0;
		}
	}
	step_fast(r, p);
	log_word(log, r->sp - 8, r->ip);
	if (p & P_RBP_SAVE) {
		lr->rbp_in0 = 0;
		lr->rbp_pend = 1;
		lr->rbp_addr = r->sp + (intptr_t)((int64_t)(p << 12) >> 52);
	}
	if (p & P_RBX_SAVE) {
		lr->rbx_in0 = 0;
		lr->rbx_pend = 1;
		lr->rbx_addr = r->sp + (intptr_t)((int64_t)p >> 52);
	}
}

/* The walk of stack_unwind() and stack_unwind_from(), from the frame r
 * (first: r is the frame of a return address to be written as it is,
 * else the frame whose caller is the first). */
static inline __attribute__((always_inline)) int
walk(struct regs r, int first, void **ips, int max,
     struct stack_unwind_cache *cache, int fill, uint32_t *rest,
     struct stack_walk_log *log)
{
	uint32_t gen;
	const struct stack_objs *t = stack_objs_get(&gen);
	stack_through_fn thru = __atomic_load_n(&through, __ATOMIC_ACQUIRE);
	uint32_t k = UINT32_MAX;
	int n = 0, is_ret = first, reloaded = 0;
	struct log_regs lr = {1, 1, 0, 0, 0, 0};

	*rest = 0;
	if (log) {
		log->n = 0;
		log->ok = 1;
		log->rbp_in = log->rbx_in = 0;
		log->through = 0;
		log->gen = gen;
	}
	if (!t) {
		return 0;
	}
	while (n < max) {
		uintptr_t at = r.ip - (uintptr_t)is_ret;
		uintptr_t sp = r.sp;
		uint64_t p;
		int signal = 0;

		if (first) {
			first = 0;
			goto arrived;
		}
		if (n < STACK_UNWIND_MEMO && cache->memo[n][0] == at &&
		    ((cache->memo[n][1] ^ gen) & 0xffff) == 0) {
			p = cache->memo[n][1];
		} else {
			p = fast_get(cache, at, gen);
			if (fill && (p & P_FAST) && n < STACK_UNWIND_MEMO) {
				memo_put(cache->memo[n], at, p);
			}
		}

		if (__builtin_expect(!(p & P_FAST), 0)) {
			const struct stack_unwind_rule *e;
			struct stack_unwind_rule tmp;

			if (!p || full_get(cache, at, gen, &e) < 0) {
				/* A miss: worked out now, and kept. */
				e = stack_objs_rule(t, at, &tmp) == 0 ? &tmp
								      : NULL;
				if (!e && fill && !reloaded &&
				    !stack_objs_current()) {
					/* Maybe an object loaded since (not
					 * through a dlopen mxprof saw) that the
					 * table lacks: read the objects again,
					 * once a walk; unchanged, they keep
					 * their rules. */
					reloaded = 1;
					if (stack_unwind_load() > 0) {
						t = stack_objs_get(&gen);
						log_off(&log);
						continue;
					}
				}
				if (fill) {
					if (!e) {
						tmp.cfa_kind = RULE_NONE;
					}
					cache_put(cache, at, &tmp, gen);
				}
			}
			if (!e || e->ra_where == W_UNDEF) {
				if (!e) {
					log_off(&log);
				}
				break;
			}
			/* A rule just worked out is stepped by as the cached
			 * one will be, and noted for the replay; only the
			 * rare frames (a signal frame's) are not replayed. */
			p = pack(e, gen);
			if (!(p & P_FAST)) {
				log_off(&log);
				signal = e->signal;
				step_full(&r, e);
			}
		}
		if (__builtin_expect(p & P_FAST, 1)) {
			if (log) {
				log_fast(log, &lr, &r, p);
				if (!log->ok) {
					log = NULL; /* full: no use going on */
				}
			} else {
				step_fast(&r, p);
			}
		}
		/* A caller's frame lies above its callee's, except across a
		 * signal frame (the handler may run on another stack). */
		if (r.ip < 0x1000 || (!signal && r.sp <= sp)) {
			break;
		}
		is_ret = !signal;
	arrived:
		if (r.ip >= through_lo && r.ip < through_hi && thru) {
			/* A hooked call's exit: its caller from the shadow
			 * frame. */
			uintptr_t ret, csp, crbx;
			uint32_t sid;
			int got = thru(r.ip, &k, &ret, &csp, &crbx, &sid);
			if (got == 0) {
				log_off(&log);
				break;
			}
			if (got > 0 && sid) {
				/* The rest is the stack that call began
				 * with. */
				*rest = sid;
				if (log) {
					log->through = r.ip;
				}
				break;
			}
			if (got > 0) {
				/* Its caller lives in the shadow frame, not
				 * on the stack. */
				log_off(&log);
				r.ip = ret;
				r.sp = csp;
				r.rbx = crbx;
				is_ret = 1;
			}
		}
		ips[n++] = (void *)r.ip;
	}
	return n;
}

__attribute__((noinline)) int stack_unwind(void **ips, int max,
					   struct stack_unwind_cache *cache,
					   int fill, uint32_t *rest)
{
	struct regs r;

	__asm__ volatile("leaq 1f(%%rip), %0\n\t"
			 "movq %%rsp, %1\n\t"
			 "movq %%rbp, %2\n\t"
			 "movq %%rbx, %3\n"
			 "1:"
			 : "=&r"(r.ip), "=&r"(r.sp), "=&r"(r.rbp),
			   "=&r"(r.rbx));
	return walk(r, 0, ips, max, cache, fill, rest, NULL);
}

int stack_unwind_from(const struct stack_unwind_start *st, void **ips, int max,
		      struct stack_unwind_cache *cache, int fill,
		      uint32_t *rest, struct stack_walk_log *log)
{
	struct regs r = {st->ip, st->sp, st->rbp, st->rbx};

	/* Two walks, so that the one without a log has none of its code. */
	if (!log) {
		return walk(r, 1, ips, max, cache, fill, rest, NULL);
	}
	return walk(r, 1, ips, max, cache, fill, rest, log);
}

int stack_unwind_check(const struct stack_walk_log *log, uint32_t rest)
{
	uint32_t gen;

	if (!stack_objs_get(&gen) || gen != log->gen) {
		return 0;
	}
	for (uint32_t i = 0; i < log->n; i++) {
		if (load(log->w[i][0]) != log->w[i][1]) {
			return 0;
		}
	}
	if (log->through) {
		stack_through_fn thru =
			__atomic_load_n(&through, __ATOMIC_ACQUIRE);
		uintptr_t ret, csp, crbx;
		uint32_t k = UINT32_MAX, sid = 0;

		if (!thru ||
		    thru(log->through, &k, &ret, &csp, &crbx, &sid) <= 0 ||
		    sid != rest) {
			return 0;
		}
	}
	return 1;
}

/* ---- for another thread's walk (stack_unwind_thread.c) ---------------- */

int stack_unwind_in_stubs(uintptr_t ip)
{
	return ip >= through_lo && ip < through_hi;
}

#else /* !__x86_64__ */

void stack_set_through(stack_through_fn fn, uintptr_t lo, uintptr_t hi)
{
	(void)fn;
	(void)lo;
	(void)hi;
}

int stack_unwind_in_stubs(uintptr_t ip)
{
	(void)ip;
	return 0;
}

int stack_unwind_from(const struct stack_unwind_start *st, void **ips, int max,
		      struct stack_unwind_cache *cache, int fill,
		      uint32_t *rest, struct stack_walk_log *log)
{
	(void)st;
	(void)log;
	return stack_unwind(ips, max, cache, fill, rest);
}

int stack_unwind_check(const struct stack_walk_log *log, uint32_t rest)
{
	(void)log;
	(void)rest;
	return 0;
}

int stack_unwind(void **ips, int max, struct stack_unwind_cache *cache,
		 int fill, uint32_t *rest)
{
	*rest = 0;
	(void)ips;
	(void)max;
	(void)cache;
	(void)fill;
	return 0;
}

#endif
