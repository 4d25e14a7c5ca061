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
 * search table; the object is found by glibc's _dl_find_object (2.35 and
 * later: lock-free, and current the moment an object comes or goes), or
 * else in the table of objects stack_unwind_load() reads with
 * dl_iterate_phdr. That table is read at start-up and again after each
 * dlopen and dlclose mxprof sees (stack_probe()); when the set of objects
 * changed, it is a new generation, and rules cached from the old one are
 * worked out again (an address may now hold another object's code).
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
 * The walk ends at a frame whose return address is undefined (_start, a
 * thread's start), at a frame without unwind information (code outside
 * every object, or an object without .eh_frame_hdr), or at rules it does
 * not follow (a general DWARF expression: a PLT entry, which a walk meets
 * only in a frame a signal interrupted). Signal frames (glibc's
 * __restore_rt, whose rules find the interrupted registers in the
 * ucontext) are walked through.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "stack.h"

#if defined(__x86_64__)

/* ---- the loaded objects ------------------------------------------------ */

struct unw_obj {
	uintptr_t lo, hi;     /* the executable segments' extent */
	const uint8_t *hdr;   /* .eh_frame_hdr */
	const int32_t *table; /* its (start, FDE) pairs, sorted by start */
	uint32_t count;
};

/* A table of objects, published whole: a reader never sees one half
 * built. Tables replaced by a later load are not unmapped (a walk on
 * another thread may still read them); a load that finds the objects
 * unchanged keeps the table it has. */
struct unw_table {
	uint32_t gen;
	uint32_t n;
	unsigned long long adds, subs;
	struct unw_obj obj[];
};

#define UNW_OBJ_MAX 4096

static struct unw_table *table;
static uint32_t table_gen;
static stack_through_fn through;
static uintptr_t through_lo, through_hi;

void stack_set_through(stack_through_fn fn, uintptr_t lo, uintptr_t hi)
{
	through_lo = lo;
	through_hi = hi;
	__atomic_store_n(&through, fn, __ATOMIC_RELEASE);
}

struct load_ctx {
	struct unw_table *t; /* NULL: count the objects */
	uint32_t room;	     /* how many t has room for */
	uint32_t count;
	unsigned long long adds, subs;
};

/* Reads the search table of the .eh_frame_hdr at hdr into o (all but
 * the range). Only its common layout: version 1, the entries as signed
 * 4-byte offsets from the header (datarel sdata4), their count as udata4.
 * Returns 0, or -1 for another. */
static int hdr_read(const uint8_t *hdr, struct unw_obj *o)
{
	uint8_t enc = hdr[1] & 0x0f; /* eh_frame_ptr's */
	size_t eh_size = enc == 0x0b || enc == 0x03 ? 4 : 8;
	uint32_t count;

	if (hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b ||
	    (enc != 0x0b && enc != 0x03 && enc != 0x04 && enc != 0x0c &&
	     enc != 0x00)) {
		return -1;
	}
	memcpy(&count, hdr + 4 + eh_size, 4);
	o->hdr = hdr;
	o->count = count;
	o->table = (const int32_t *)(hdr + 8 + eh_size);
	return 0;
}

static int load_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct load_ctx *c = arg;
	struct unw_table *t = c->t;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const uint8_t *hdr = NULL;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	if (!t) {
		c->count++;
		return 0;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t b = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			lo = b < lo ? b : lo;
			hi = b + p->p_memsz > hi ? b + p->p_memsz : hi;
		} else if (p->p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)b;
		}
	}
	if (!hdr || hi <= lo || t->n >= c->room) {
		return 0;
	}
	struct unw_obj *o = &t->obj[t->n];

	if (hdr_read(hdr, o) == 0) {
		o->lo = lo;
		o->hi = hi;
		t->n++;
	}
	return 0;
}

int stack_unwind_load(void)
{
	struct unw_table *old = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	struct load_ctx c = {NULL, 0, 0, 0, 0};

	dl_iterate_phdr(load_cb, &c);
	if (old && c.adds == old->adds && c.subs == old->subs) {
		return 0;
	}
	/* Room for a few objects loaded between the two passes. */
	c.room = c.count + 16 < UNW_OBJ_MAX ? c.count + 16 : UNW_OBJ_MAX;
	size_t bytes =
		sizeof(struct unw_table) + c.room * sizeof(struct unw_obj);
	struct unw_table *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		return -1;
	}
	c.t = t;
	dl_iterate_phdr(load_cb, &c);
	t->adds = c.adds;
	t->subs = c.subs;
	t->gen = __atomic_add_fetch(&table_gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&table, t, __ATOMIC_RELEASE);
	return 1;
}

#if defined(DLFO_STRUCT_HAS_EH_DBASE)
/* glibc 2.35 and later: the loader's own lock-free, async-signal-safe
 * lookup, current the moment an object is loaded or unloaded. Weak, for
 * a run on an older glibc. */
#pragma weak _dl_find_object
#define HAVE_DL_FIND_OBJECT 1
#else
#define HAVE_DL_FIND_OBJECT 0
#endif

/* Does obj_find() see the objects as they are now? */
static inline int current(void)
{
#if HAVE_DL_FIND_OBJECT
	return _dl_find_object != NULL;
#else
	return 0;
#endif
}

/* The object that holds ip, in *o (for a miss: not HOT). The loader's
 * lookup where it has one, else table t. Returns 0, or -1 when ip lies
 * in no object with a search table. */
static int obj_find(const struct unw_table *t, uintptr_t ip, struct unw_obj *o)
{
#if HAVE_DL_FIND_OBJECT
	if (_dl_find_object) {
		struct dl_find_object f;

		if (_dl_find_object((void *)ip, &f) != 0 || !f.dlfo_eh_frame) {
			return -1;
		}
		o->lo = (uintptr_t)f.dlfo_map_start;
		o->hi = (uintptr_t)f.dlfo_map_end;
		return hdr_read(f.dlfo_eh_frame, o);
	}
#endif
	for (uint32_t i = 0; i < t->n; i++) {
		if (ip >= t->obj[i].lo && ip < t->obj[i].hi) {
			*o = t->obj[i];
			return 0;
		}
	}
	return -1;
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

__attribute__((noinline)) int stack_unwind(void **ips, int max,
					   struct stack_unwind_cache *cache,
					   int fill, uint32_t *rest)
{
	const struct unw_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	stack_through_fn thru = __atomic_load_n(&through, __ATOMIC_ACQUIRE);
	struct regs r;
	uint32_t k = UINT32_MAX;
	int n = 0, is_ret = 0, reloaded = 0;

	*rest = 0;
	if (!t) {
		return 0;
	}
	__asm__ volatile("leaq 1f(%%rip), %0\n\t"
			 "movq %%rsp, %1\n\t"
			 "movq %%rbp, %2\n\t"
			 "movq %%rbx, %3\n"
			 "1:"
			 : "=&r"(r.ip), "=&r"(r.sp), "=&r"(r.rbp),
			   "=&r"(r.rbx));
	while (n < max) {
		uintptr_t at = r.ip - (uintptr_t)is_ret;
		uintptr_t sp = r.sp;
		uint64_t p;
		int signal = 0;

		if (n < STACK_UNWIND_MEMO && cache->memo[n][0] == at &&
		    ((cache->memo[n][1] ^ t->gen) & 0xffff) == 0) {
			p = cache->memo[n][1];
		} else {
			p = fast_get(cache, at, t->gen);
			if (fill && (p & P_FAST) && n < STACK_UNWIND_MEMO) {
				memo_put(cache->memo[n], at, p);
			}
		}

		if (__builtin_expect(p & P_FAST, 1)) {
			step_fast(&r, p);
		} else {
			const struct stack_unwind_rule *e;
			struct stack_unwind_rule tmp;

			if (!p || full_get(cache, at, t->gen, &e) < 0) {
				/* A miss: worked out now, and kept. */
				struct unw_obj o;
				e = obj_find(t, at, &o) == 0 &&
						    stack_dwarf_rule(
							    o.hdr, o.table,
							    o.count, at,
							    &tmp) == 0
					    ? &tmp
					    : NULL;
				if (!e && fill && !reloaded && !current()) {
					/* Maybe an object loaded since (not
					 * through a dlopen mxprof saw) that the
					 * table lacks: read the objects again,
					 * once a walk; unchanged, they keep
					 * their rules. */
					reloaded = 1;
					if (stack_unwind_load() > 0) {
						t = __atomic_load_n(
							&table,
							__ATOMIC_ACQUIRE);
						continue;
					}
				}
				if (fill) {
					if (!e) {
						tmp.cfa_kind = RULE_NONE;
					}
					cache_put(cache, at, &tmp, t->gen);
				}
			}
			if (!e || e->ra_where == W_UNDEF) {
				break;
			}
			signal = e->signal;
			step_full(&r, e);
		}
		/* A caller's frame lies above its callee's, except across a
		 * signal frame (the handler may run on another stack). */
		if (r.ip < 0x1000 || (!signal && r.sp <= sp)) {
			break;
		}
		is_ret = !signal;
		if (r.ip >= through_lo && r.ip < through_hi && thru) {
			/* A hooked call's exit: its caller from the shadow
			 * frame. */
			uintptr_t ret, csp, crbx;
			uint32_t sid;
			int got = thru(r.ip, &k, &ret, &csp, &crbx, &sid);
			if (got == 0) {
				break;
			}
			if (got > 0 && sid) {
				/* The rest is the stack that call began
				 * with. */
				*rest = sid;
				break;
			}
			if (got > 0) {
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

/* ---- for another thread's walk (stack_unwind_thread.c) ---------------- */

int stack_unwind_rule_at(uintptr_t at, struct stack_unwind_rule *e)
{
	const struct unw_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	struct unw_obj o;

	if ((!t && !current()) || obj_find(t, at, &o) < 0) {
		return -1;
	}
	return stack_dwarf_rule(o.hdr, o.table, o.count, at, e);
}

int stack_unwind_in_stubs(uintptr_t ip)
{
	return ip >= through_lo && ip < through_hi;
}

#else /* !__x86_64__ */

int stack_unwind_load(void)
{
	return 0;
}

void stack_set_through(stack_through_fn fn, uintptr_t lo, uintptr_t hi)
{
	(void)fn;
	(void)lo;
	(void)hi;
}

int stack_unwind_rule_at(uintptr_t at, struct stack_unwind_rule *e)
{
	(void)at;
	(void)e;
	return -1;
}

int stack_unwind_in_stubs(uintptr_t ip)
{
	(void)ip;
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
