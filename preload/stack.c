/*
 * stack.c - capturing the call stack of an event as it begins.
 *
 * stack_capture() walks the native frames with mxprof's own unwinder
 * (stack_unwind.c, which passes the hooked calls the call is nested in
 * through the hook runtime's shadow frames), leaves out mxprof's own
 * frames (this code, the hook trampolines) and, where the thread
 * runs CPython, puts the Python frames in the place of the interpreter's
 * evaluation calls; the interpreter's other native frames (calls, vectorcalls,
 * the evaluation loop's helpers) are left out of such a stack, as the Python
 * frames say more. Python frames the native walk did not reach (it stops at a
 * frame without unwind information) follow the native ones.
 *
 * stack_capture_at(), a hooked call's, walks from the call's caller and
 * first asks stack_reuse.c whether the last stack captured from there
 * still holds: then its id is the answer, without a walk.
 *
 * A stack is a list of 64-bit words: a native frame's return address, or
 * STACK_PY with the index of a Python frame's entry in pynames, a table
 * keyed by code object and instruction whose entry is named the first time
 * the frame is seen, while its code object is certainly alive (the frame
 * runs it). The collector interns the list (stack_intern) and the drain
 * thread names its frames later (stack_name.c).
 *
 * Nothing here takes a lock or allocates once the tables are mapped (the
 * first capture maps them; mmap is async-signal-safe), so any thread can
 * capture in any context a hooked call runs in.
 *
 * The capture's arrays (the native walk, the Python frames, the words)
 * are not on the thread's stack, which a hooked call may find nearly used
 * up: each thread maps a scratch area at its first capture, with a level
 * for each capture nested in another (a signal handler's), and unmaps it
 * when it ends; the walk's cache of unwind rules lives there too, one
 * for all levels, and the stacks kept for reuse (stack_reuse.c), which
 * only the first level uses. The capture itself then needs under 1 KiB
 * of stack, whatever the depth. A capture nested
 * deeper than the levels, or one whose scratch cannot be mapped, is left
 * out and counted (stack_skipped()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "source.h"
#include "preload.h"
#include "stack.h"

/* Native frames come from mxprof's own unwinder (stack_unwind.c), on
 * x86-64; elsewhere the capture is left out, with one line at start-up. */
#if defined(__x86_64__)
#define STACK_NATIVE 1
#else
#define STACK_NATIVE 0
#endif

int stack_depth;

/* [lo, hi) of mxprof's own code, and of the object that holds CPython's
 * interpreter (0 when none). */
static uintptr_t self_lo, self_hi;
static uintptr_t py_lo, py_hi;
static int py_ready;

#define PYNAME_SLOTS (1u << 15)
#define PYNAME_LEN   240

struct pyname {
	uint64_t key; /* 0: free; claimed by compare-and-swap */
	uintptr_t code;
	uint32_t offset;
	uint8_t ready;
	uint8_t user;
	char name[PYNAME_LEN];
};

static struct pyname *pynames;

/* ---- where code lives ------------------------------------------------- */

struct range_ask {
	uintptr_t addr;
	uintptr_t lo, hi;
};

/* Finds the executable segments' extent of the object that holds
 * ask->addr. */
static int range_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct range_ask *a = ctx;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int hit = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD) {
			continue;
		}
		uintptr_t b = info->dlpi_addr + p->p_vaddr;
		uintptr_t e = b + p->p_memsz;
		if (a->addr >= b && a->addr < e) {
			hit = 1;
		}
		if (p->p_flags & PF_X) {
			lo = b < lo ? b : lo;
			hi = e > hi ? e : hi;
		}
	}
	if (hit && hi > lo) {
		a->lo = lo;
		a->hi = hi;
		return 1;
	}
	return 0;
}

static void code_range(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
	struct range_ask a = {(uintptr_t)addr, 0, 0};

	dl_iterate_phdr(range_cb, &a);
	*lo = a.lo;
	*hi = a.hi;
}

/* ---- scratch ------------------------------------------------------------ */

#define SCRATCH_LEVELS 4

/* One capture's arrays. */
struct scratch_level {
	struct stack_walk_log log; /* the walk's reads, for the reuse */
	void *ips[STACK_DEPTH_MAX + 16];
	struct py_frame py[STACK_DEPTH_MAX];
	uint64_t w[STACK_DEPTH_MAX];
	char file[512]; /* a Python frame's file, named on first sight */
};

/* A stack nested in a hooked call's: the words of its own part (at most
 * NEST_WORDS), the id of the rest (the hooked call's stack) and the id
 * the whole got. */
#define NEST_WORDS 8
#define NEST_SLOTS 256

struct nest_memo {
	uint32_t rest, id, n, pad;
	uint64_t w[NEST_WORDS];
};

struct scratch {
	struct stack_unwind_cache cache; /* the walk's rules, all levels' */
	struct stack_reuse reuse;	 /* the first level's */
	struct nest_memo nest[NEST_SLOTS];
	struct scratch_level level[SCRATCH_LEVELS];
	uint32_t walks; /* the first level's, up to SCRATCH_FILL_AFTER */
};

/* A thread's scratch is mapped without its pages, which fault in as
 * captures use them: a thread that captures a few stacks holds a few
 * pages. One that walks this often is capturing many: the entries of
 * its new stacks land all over the reuse table, each on a page not yet
 * there (read in as zeros, then copied on the first write, which also
 * flushes the other cores' view of the mapping), so the rest of its
 * pages come in one system call instead. */
#define SCRATCH_FILL_AFTER 16

static __thread struct scratch *scratch_mine
	__attribute__((tls_model("initial-exec")));
static __thread int scratch_nest __attribute__((tls_model("initial-exec")));
static pthread_key_t scratch_key;
static int scratch_key_ok;
static uint64_t skipped; /* atomic: captures left out */

static void scratch_free(void *p)
{
	if (p == scratch_mine) {
		scratch_mine = NULL;
	}
	munmap(p, sizeof(struct scratch));
}

/* The scratch level of this capture, or NULL (counted): the caller calls
 * scratch_leave() after either. Async-signal-safe: a handler's capture
 * runs to its end before the one it interrupted goes on, so the plain
 * counter is enough. */
static struct scratch_level *scratch_enter(void)
{
	int nest = scratch_nest++;
	struct scratch *s = scratch_mine;

	__asm__ volatile("" ::: "memory");
	if (nest >= SCRATCH_LEVELS) {
		__atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (!s) {
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (s == MAP_FAILED) {
			__atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		if (scratch_mine) {
			/* A handler's capture mapped one meanwhile. */
			munmap(s, sizeof(*s));
			s = scratch_mine;
		} else {
			scratch_mine = s;
			if (scratch_key_ok) {
				pthread_setspecific(scratch_key, s);
			}
		}
	}
	return &s->level[nest];
}

static void scratch_leave(void)
{
	__asm__ volatile("" ::: "memory");
	scratch_nest--;
}

uint64_t stack_skipped(void)
{
	return __atomic_load_n(&skipped, __ATOMIC_RELAXED);
}

/* ---- set-up --------------------------------------------------------- */

/* stack_probe(), whatever the depth. */
static void probe(void)
{
	stack_unwind_load();
	if (__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE)) {
		return;
	}
	if (py_stack_probe() <= 0) {
		return;
	}
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	if (eval) {
		code_range(eval, &py_lo, &py_hi);
	}
	__atomic_store_n(&py_ready, 1, __ATOMIC_RELEASE);
}

void stack_probe(void)
{
	if (stack_depth > 0) {
		probe();
	}
}

int stack_init(int depth)
{
	stack_depth = depth > STACK_DEPTH_MAX ? STACK_DEPTH_MAX : depth;
	if (stack_depth > 0 && !STACK_NATIVE) {
		fprintf(stderr, "mxprof: MXPROF_STACKS: call stacks are not "
				"available on this architecture; recording "
				"without them\n");
		stack_depth = 0;
	}
	if (stack_depth <= 0) {
		return 0;
	}
	scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
	code_range((const void *)stack_init, &self_lo, &self_hi);
	stack_probe(); /* reads the objects' unwind tables too */
	return 0;
}

int stack_in_runtime(uintptr_t ip)
{
	return (ip >= self_lo && ip < self_hi) || (ip >= py_lo && ip < py_hi);
}

/* ---- Python frames ---------------------------------------------------- */

static int py_path_is_user(const char *file)
{
	return file[0] && file[0] != '<' && !strstr(file, "/site-packages/") &&
	       !strstr(file, "/dist-packages/") && !strstr(file, "/lib/python");
}

static struct pyname *pynames_get(void)
{
	struct pyname *t = __atomic_load_n(&pynames, __ATOMIC_ACQUIRE);

	if (t) {
		return t;
	}
	t = mmap(NULL, PYNAME_SLOTS * sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED) {
		return NULL;
	}
	struct pyname *none = NULL;
	if (!__atomic_compare_exchange_n(&pynames, &none, t, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(t, PYNAME_SLOTS * sizeof(*t));
		return none;
	}
	return t;
}

/* The word of Python frame f: its entry in pynames, named on first
 * sight. 0 when the table is full. */
static uint64_t py_word(const struct py_frame *f, char *file, size_t flen)
{
	struct pyname *t = pynames_get();

	if (!t) {
		return 0;
	}
	uint64_t key = ((uint64_t)f->code * 0x9e3779b97f4a7c15ull) ^
		       ((uint64_t)f->offset * 0xff51afd7ed558ccdull);
	key = key ? key : 1;
	for (uint32_t k = 0, i = (uint32_t)(key >> 40) & (PYNAME_SLOTS - 1);
	     k < PYNAME_SLOTS; k++, i = (i + 1) & (PYNAME_SLOTS - 1)) {
		struct pyname *e = &t[i];
		uint64_t ek = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if (ek == key) {
			if (__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) &&
			    e->code == f->code && e->offset == f->offset) {
				return STACK_PY | i;
			}
			continue;
		}
		if (ek != 0) {
			continue;
		}
		uint64_t zero = 0;
		if (!__atomic_compare_exchange_n(&e->key, &zero, key, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			continue;
		}
		e->code = f->code;
		e->offset = f->offset;
		py_frame_describe(f, e->name, sizeof(e->name), file, flen);
		e->user = (uint8_t)py_path_is_user(file);
		__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
		return STACK_PY | i;
	}
	return 0;
}

int stack_py_name(uint64_t w, char *name, size_t len, int *user)
{
	uint32_t i = (uint32_t)(w & ~STACK_PY);
	struct pyname *t = __atomic_load_n(&pynames, __ATOMIC_ACQUIRE);

	if (!t || i >= PYNAME_SLOTS ||
	    !__atomic_load_n(&t[i].ready, __ATOMIC_ACQUIRE)) {
		return -1;
	}
	snprintf(name, len, "%s", t[i].name);
	*user = t[i].user;
	return 0;
}

int stack_py_frame(uint64_t w, struct py_frame *f)
{
	uint32_t i = (uint32_t)(w & ~STACK_PY);
	struct pyname *t = __atomic_load_n(&pynames, __ATOMIC_ACQUIRE);

	if (!(w & STACK_PY) || !t || i >= PYNAME_SLOTS ||
	    !__atomic_load_n(&t[i].ready, __ATOMIC_ACQUIRE)) {
		return -1;
	}
	f->code = t[i].code;
	f->offset = t[i].offset;
	f->entry = 0;
	return 0;
}

/* ---- capture --------------------------------------------------------- */

/* The capture of stack_capture() at depth; cut non-zero: the frames up
 * to the native one at cut (a signal frame's restorer) are left out. st:
 * the walk starts there (stack_capture_at()), else at the caller. asked:
 * -1, or stack_reuse_find() was asked already and found nothing, and
 * this is its no_log. */
static inline __attribute__((always_inline)) uint32_t
capture(int depth, uintptr_t cut, const struct stack_unwind_start *st,
	int asked)
{
	/* Room for the frames left out: mxprof's own (three from a hooked
	 * call's entry, which a walk from st does not meet) and the
	 * interpreter's. */
	int want = depth + (st ? 13 : 16), py_done = 0, n;
	unsigned np = 0, pi = 0, k = 0;
	uint32_t rest;

	if (depth <= 0) {
		return 0;
	}
	struct scratch_level *l = scratch_enter();
	if (!l) {
		scratch_leave();
		return 0;
	}
	void **ips = l->ips;
	struct py_frame *py = l->py;
	uint64_t *w = l->w;
	int py_on = __atomic_load_n(&py_ready, __ATOMIC_ACQUIRE);
	int first = scratch_nest == 1;
	struct stack_walk_log *log = st && first ? &l->log : NULL;

	if (log) {
		int no_log = asked;
		if (asked < 0) {
			uint32_t id = stack_reuse_find(
				&scratch_mine->reuse, st, py_on, py,
				(unsigned)depth, &no_log);
			if (id) {
				scratch_leave();
				return id;
			}
		}
		log = no_log ? NULL : log;
		if (scratch_mine->walks < SCRATCH_FILL_AFTER &&
		    ++scratch_mine->walks == SCRATCH_FILL_AFTER) {
			madvise(scratch_mine, sizeof(struct scratch),
				MXPROF_MADV_POPULATE_WRITE);
		}
		n = stack_unwind_from(st, ips, want, &scratch_mine->cache, 1,
				      &rest, log);
	} else {
		n = stack_unwind(ips, want, &scratch_mine->cache, first, &rest);
	}

	for (int i = 0; i < n && k < (unsigned)depth; i++) {
		uintptr_t ip = (uintptr_t)ips[i];
		if (__builtin_expect(cut != 0, 0)) {
			cut = ip == cut ? 0 : cut;
			continue;
		}
		/* mxprof's own frames: the capture, and the stubs of the
		 * hooked calls this one is nested in. */
		if (ip >= self_lo && ip < self_hi) {
			continue;
		}
		if (py_on &&
		    ((ip >= py_lo && ip < py_hi) || py_stack_is_eval(ip))) {
			/* The thread's Python frames, read the first time
			 * the walk meets the interpreter. */
			if (!py_done) {
				py_done = 1;
				np = py_stack_capture(py, (unsigned)depth);
			}
			if (np && py_stack_is_eval(ip)) {
				while (pi < np && k < (unsigned)depth) {
					uint64_t pw = py_word(&py[pi], l->file,
							      sizeof(l->file));
					if (pw) {
						w[k++] = pw;
					}
					if (py[pi++].entry) {
						break;
					}
				}
				continue;
			}
			if (np) {
				continue;
			}
		}
		w[k++] = ip;
	}
	if (rest) {
		/* The rest is the stack of the hooked call this one is
		 * nested in, Python frames included. The same own part on
		 * the same rest was interned before: its id, without
		 * hashing the whole. */
		struct nest_memo *m = NULL;
		if (k <= NEST_WORDS && k < (unsigned)depth) {
			uint64_t h = rest * 0x9e3779b97f4a7c15ull;
			for (unsigned j = 0; j < k; j++) {
				h = (h ^ w[j]) * 0xff51afd7ed558ccdull;
			}
			m = &scratch_mine->nest[(h >> 40) & (NEST_SLOTS - 1)];
			if (m->id && m->rest == rest && m->n == k &&
			    !memcmp(m->w, w, k * sizeof(*w))) {
				uint32_t id = m->id;
				if (log) {
					stack_reuse_keep(&scratch_mine->reuse,
							 st, py_on, log, rest,
							 py_done, py, np, id);
				}
				scratch_leave();
				return id;
			}
		}
		unsigned rn, k0 = k;
		const uint64_t *rw = stack_words(rest, &rn);
		for (unsigned j = 0; j < rn && k < (unsigned)depth; j++) {
			w[k++] = rw[j];
		}
		uint32_t id = stack_intern(w, k);
		if (m && id && scratch_nest == 1) {
			/* Kept only outside nested captures: a signal
			 * handler's capture never sees one half written. */
			m->id = 0;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			memcpy(m->w, w, k0 * sizeof(*w));
			m->rest = rest;
			m->n = k0;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			m->id = id;
		}
		if (log) {
			stack_reuse_keep(&scratch_mine->reuse, st, py_on, log,
					 rest, py_done, py, np, id);
		}
		scratch_leave();
		return id;
	}
	if (n < want) {
		/* The native walk ended early (a frame it could not
		 * unwind): the outer Python frames still say where the call
		 * came from. */
		if (py_on && !py_done) {
			py_done = 1;
			np = py_stack_capture(py, (unsigned)depth);
		}
		for (; pi < np && k < (unsigned)depth; pi++) {
			uint64_t pw =
				py_word(&py[pi], l->file, sizeof(l->file));
			if (pw) {
				w[k++] = pw;
			}
		}
	}
	uint32_t id = stack_intern(w, k);
	if (log) {
		stack_reuse_keep(&scratch_mine->reuse, st, py_on, log, 0,
				 py_done, py, np, id);
	}
	scratch_leave();
	return id;
}

uint32_t stack_capture(void)
{
	return capture(stack_depth, 0, NULL, -1);
}

/* stack_capture_at()'s capture when no stack could be reused. */
static __attribute__((noinline)) uint32_t
capture_at(const struct stack_unwind_start *st, int asked)
{
	return capture(stack_depth, 0, st, asked);
}

uint32_t stack_capture_at(const uintptr_t *slot, uintptr_t rbp, uintptr_t rbx,
			  uint32_t ctx)
{
	struct stack_unwind_start st = {
		.ip = *slot,
		.sp = (uintptr_t)(slot + 1),
		.rbp = rbp,
		.rbx = rbx,
		.ctx = ctx,
	};
	struct scratch *s = scratch_mine;
	int asked = -1;

	/* The common case, without the frame of the whole capture: a
	 * stack reused by a capture not nested in another (scratch_enter()
	 * says why the plain counter is enough). */
	if (s && scratch_nest == 0 && stack_depth > 0) {
		uint32_t id;

		scratch_nest = 1;
		__asm__ volatile("" ::: "memory");
		id = stack_reuse_find(
			&s->reuse, &st,
			__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE),
			s->level[0].py, (unsigned)stack_depth, &asked);
		scratch_leave();
		if (id) {
			return id;
		}
	}
	return capture_at(&st, asked);
}

uint32_t stack_capture_from_signal(int depth, uintptr_t restorer)
{
	return capture(depth > STACK_DEPTH_MAX ? STACK_DEPTH_MAX : depth,
		       restorer, NULL, -1);
}

uint32_t stack_intern_thread(void *const *ips, int n, const struct py_frame *py,
			     unsigned np, int depth)
{
	static uint64_t w[STACK_DEPTH_MAX];
	static char file[512];
	int py_on = __atomic_load_n(&py_ready, __ATOMIC_ACQUIRE);
	unsigned k = 0, pi = 0,
		 max = depth > STACK_DEPTH_MAX ? STACK_DEPTH_MAX
					       : (unsigned)depth;

	for (int i = 0; i < n && k < max; i++) {
		uintptr_t ip = (uintptr_t)ips[i];
		if (ip >= self_lo && ip < self_hi) {
			continue;
		}
		if (py_on && np &&
		    ((ip >= py_lo && ip < py_hi) || py_stack_is_eval(ip))) {
			/* As stack_capture(): the Python frames of each
			 * evaluation call in its place. */
			while (py_stack_is_eval(ip) && pi < np && k < max) {
				uint64_t pw =
					py_word(&py[pi], file, sizeof(file));
				if (pw) {
					w[k++] = pw;
				}
				if (py[pi++].entry) {
					break;
				}
			}
			continue;
		}
		w[k++] = ip;
	}
	for (; pi < np && k < max; pi++) {
		uint64_t pw = py_word(&py[pi], file, sizeof(file));
		if (pw) {
			w[k++] = pw;
		}
	}
	return stack_intern(w, k);
}

static void ready_any_once(void)
{
	if (stack_depth <= 0) {
		scratch_key_ok =
			pthread_key_create(&scratch_key, scratch_free) == 0;
		code_range((const void *)stack_init, &self_lo, &self_hi);
	}
}

void stack_ready_any(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, ready_any_once);
	probe();
}

void stack_push(uint32_t id, uint64_t t0)
{
	if (id) {
		struct coll_rec r = {.t0 = t0, .name = id, .kind = COLL_STACK};
		ring_push(&r);
	}
}

void stack_record(uint64_t t0)
{
	stack_push(stack_capture(), t0);
}
