/*
 * hook_rt.c - the per-thread shadow stack behind the hook trampolines.
 *
 * Each thread owns a fixed array of HOOK_RT_DEPTH frames, mapped on the
 * thread's first hooked call and unmapped by a thread-specific-data
 * destructor when the thread exits. Only three pointers live in
 * initial-exec TLS, so that libmxprof's static TLS stays small enough
 * that it can still be dlopen'ed after start (glibc keeps only a few
 * hundred bytes spare for that): the stack (for the C paths), and
 * hook_rt_tls, the next free frame and the end of the frames. Keeping the
 * top itself in TLS, rather than in the mapping, saves the trampolines a
 * dependent load on both entry and exit. hook_rt_tls.end stays NULL unless
 * ticks are TSC cycles, because the trampolines' fast paths read the TSC
 * themselves. The first call costs one mmap, with signals held off
 * meanwhile (a handler's hooked call must not see the stack half made);
 * later calls take no lock, allocate nothing and make no system call. A
 * frame remembers where the return address lived (slot), the address
 * itself, the entry tick, the function and the caller's %rbx (which the
 * trampolines replace with the frame's address for the call's length:
 * hook_tramp.S says why). The top is a pointer to the
 * next free frame rather than a count, so that the trampolines push and
 * pop with one add and one store.
 *
 * Frames are matched by slot, never blindly popped, because control does
 * not always leave a function through its return:
 *  - longjmp (and siglongjmp) skips frames. A skipped frame's slot lies
 *    below the current stack pointer. The exit path drops frames above the
 *    one whose slot matches; the entry path drops frames whose slot is at
 *    or below the new call's slot and no longer holds its exit address.
 *    Both are counted in hook_rt_lost().
 *  - A program that switches stacks (swapcontext coroutines, green threads
 *    that copy their stacks out and back in) can make a suspended call's
 *    frame look exactly like one longjmp skipped, and the call returns
 *    later all the same. So a dropped frame is not forgotten at once: the
 *    last HOOK_RT_LIMBO of them are kept in a "limbo", where a return that
 *    no frame in use owns finds its caller's address (lost_return()).
 *  - A signal handler may call hooked functions in the middle of any of
 *    this. Frames are therefore published in an order that a handler
 *    running between two steps cannot corrupt (see hook_rt_enter).
 *  - errno: the program must never see mxprof change it, but the general
 *    paths call libc (mmap for a thread's first frame, clock_gettime when
 *    ticks are not TSC cycles, the ring's attach and wait), and POSIX lets
 *    any successful call set errno. So every function here that the
 *    trampolines or the unwinder's wrappers call saves errno first and
 *    puts it back last; the exit path saves it after the hooked function
 *    returned, so the value that function left is the one the caller sees.
 *  - A C++ exception or a forced unwind walks the stack through the
 *    stubs by their unwind information (hook_tramp.S, "Unwinding"), and
 *    lands in a caller without passing the exit path. The wrappers of
 *    _Unwind_RaiseException and __cxa_begin_catch (hook_unwind.c) tell
 *    the shadow stack: hook_rt_unwind_begin() marks the frames armed
 *    when the exception starts, and hook_rt_unwind_end() records and
 *    pops those the catch left behind.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "source.h"
#include "hook.h"
#include "hook_rt.h"
#include "stack.h"
#include "ticks.h"

#if defined(__x86_64__)

/* hook_tramp.S reads and writes the frames too (hook_abi.h). */
_Static_assert(sizeof(struct hook_frame) == HOOK_FRAME_SIZE, "abi");
_Static_assert(offsetof(struct hook_frame, slot) == HOOK_FRAME_SLOT, "abi");
_Static_assert(offsetof(struct hook_frame, ret) == HOOK_FRAME_RET, "abi");
_Static_assert(offsetof(struct hook_frame, t0) == HOOK_FRAME_T0, "abi");
_Static_assert(offsetof(struct hook_frame, at) == HOOK_FRAME_AT, "abi");
_Static_assert(offsetof(struct hook_frame, unwinding) == HOOK_FRAME_AT + 4,
	       "abi: one store clears it with at");
_Static_assert(offsetof(struct hook_frame, sid) == HOOK_FRAME_SID, "abi");
_Static_assert(offsetof(struct hook_frame, rbx) == HOOK_FRAME_RBX, "abi");
_Static_assert(offsetof(struct hook_tls, top) == HOOK_TLS_TOP, "abi");
_Static_assert(offsetof(struct hook_tls, end) == HOOK_TLS_END, "abi");
_Static_assert(offsetof(struct hook_stack, f) == sizeof(struct hook_frame),
	       "abi: base is the frame below f[0]");
_Static_assert(sizeof(struct hook_ent) == HOOK_ENT_SIZE, "abi");
_Static_assert(HOOK_ENT_SIZE == HOOK_STUB_SIZE, "abi: AT indexes both");
_Static_assert(offsetof(struct hook_ent, name) == HOOK_ENT_NAME, "abi");
_Static_assert(offsetof(struct hook_ent, group) == HOOK_ENT_NAME + 4, "abi");
_Static_assert(offsetof(struct hook_ent, kind) == HOOK_ENT_KIND, "abi");
_Static_assert(offsetof(struct hook_ent, on_error) == HOOK_ENT_ON_ERROR, "abi");
_Static_assert(offsetof(struct hook_ent, marker) == HOOK_ENT_MARKER, "abi");
/* Field fld sits at the same distance from name in an entry as in a
 * record. */
#define HOOK_ENT_AS_REC(fld)                                                   \
	(offsetof(struct hook_ent, fld) - offsetof(struct hook_ent, name) ==   \
	 offsetof(struct coll_rec, fld) - offsetof(struct coll_rec, name))
_Static_assert(offsetof(struct hook_ent, name) + 16 ==
			       offsetof(struct hook_ent, on_error) &&
		       offsetof(struct coll_rec, name) + 16 ==
			       sizeof(struct coll_rec),
	       "abi: an entry's first 16 bytes are a record's last 16");
_Static_assert(HOOK_ENT_AS_REC(group) && HOOK_ENT_AS_REC(kind) &&
		       HOOK_ENT_AS_REC(cat) && HOOK_ENT_AS_REC(flags) &&
		       HOOK_ENT_AS_REC(arg),
	       "abi: the same fields at the same places");
_Static_assert(offsetof(struct coll_rec, flags) -
			       offsetof(struct coll_rec, kind) ==
		       3,
	       "abi: on_error shifts the error flag by 24 bits");
_Static_assert(HOOK_STUB_SIZE == 1u << HOOK_STUB_SIZE_LOG2, "abi");

static pthread_key_t stack_key;
static int stack_key_ok;

static uint64_t overflows;
static uint64_t lost;
static int switch_said; /* the line about stack switching was written */

/* Signals held off while the thread's stack comes or goes, so that a
 * handler's hooked call never sees the stack without its top (a depth
 * read from them would be anything). Once a thread each way. The mask
 * is set by the system call itself, not through libc: a sanitizer's
 * pthread_sigmask calls the real one through an entry that
 * MXPROF_HOOK='*:*' hooks, which would come back here. glibc's own two
 * signals (32 and 33: thread cancellation, and setuid's broadcast to
 * every thread) stay open, as pthread_sigmask leaves them. */
static void signals_hold(uint64_t *old)
{
	uint64_t all = ~(3ull << 31);

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, sizeof(all));
}

static void signals_back(const uint64_t *old)
{
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, sizeof(*old));
}

/* Thread exit: the stack goes back. */
static void stack_free(void *p)
{
	uint64_t old;

	signals_hold(&old);
	hook_rt_walk_drop(p);
	if (p == hook_rt_stk) {
		hook_rt_tls.end = NULL; /* the trampolines' fast paths first */
		hook_rt_tls.top = NULL;
		hook_rt_stk = NULL;
	}
	munmap(p, sizeof(struct hook_stack));
	signals_back(&old);
}

void hook_rt_init(void)
{
	if (!stack_key_ok && pthread_key_create(&stack_key, stack_free) == 0) {
		stack_key_ok = 1;
	}
	hook_rt_walk_init((uintptr_t)hook_tramp_stubs,
			  (uintptr_t)hook_stub(HOOK_MAX));
}

/* Maps this thread's stack. Returns NULL when that fails (the call then
 * goes untimed). Async-signal-safe: mmap and the mask's system call are, and
 * pthread_setspecific only writes this thread's own slot. A handler that
 * came before the signals were held may have mapped it already. */
static __attribute__((noinline)) struct hook_stack *stack_attach(void)
{
	uint64_t old;

	signals_hold(&old);
	struct hook_stack *s = hook_rt_stk;

	if (!s) {
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s == MAP_FAILED) {
			s = NULL;
		} else {
			s->base.slot = HOOK_RT_BUILDING;
			if (stack_key_ok) {
				pthread_setspecific(stack_key, s);
			}
			hook_rt_walk_put(s);
			hook_rt_tls.top = s->f;
			/* The top before the end, which the trampolines
			 * read first (hook_tramp.S). */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			if (ticks_use_tsc.on) {
				hook_rt_tls.end = s->f + HOOK_RT_DEPTH;
			}
			hook_rt_stk = s;
		}
	}
	signals_back(&old);
	return s;
}

/* Keeps the compiler from reordering the stores a signal handler on this
 * thread could observe. */
#define HOOK_RT_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The hooked function of frame f. */
static inline uint32_t frame_idx(const struct hook_frame *f)
{
	return (f->at - HOOK_STUB_RESUME) >> HOOK_STUB_SIZE_LOG2;
}

/* Does frame f's slot still hold what the trampoline put there: the resume
 * address (before the stub's call) or the exit address (after)? A frame
 * whose slot holds anything else was left by longjmp. */
static int frame_armed(const struct hook_frame *f)
{
	return *f->slot == hook_exit_addr(frame_idx(f)) ||
	       *f->slot == hook_resume_addr(frame_idx(f));
}

/*
 * Keeps a copy of frame f, which is being dropped, in the limbo. The entry
 * is claimed with one instruction and named by its slot only once it is
 * complete, so a signal handler that drops frames meanwhile takes another
 * entry and never sees half of this one.
 */
static void limbo_put(struct hook_stack *s, const struct hook_frame *f)
{
	if (f->slot == HOOK_RT_BUILDING) {
		return; /* not yet a call: its entry path is still running */
	}
	uint32_t i = __atomic_fetch_add(&s->limbo_next, 1, __ATOMIC_RELAXED);
	struct hook_frame *e = &s->limbo[i % HOOK_RT_LIMBO];

	e->slot = NULL;
	HOOK_RT_FENCE();
	e->ret = f->ret;
	e->t0 = f->t0;
	e->at = f->at;
	e->unwinding = f->unwinding;
	e->rbx = f->rbx;
	e->sid = f->sid;
	HOOK_RT_FENCE();
	e->slot = f->slot;
}

/*
 * A call returned through its stub's exit at slot, and no frame in use
 * owns slot: copies the newest dropped frame with that slot whose stub is
 * the one the call returned through (the slot still holds that stub's
 * exit address) to *out, reclaims the entry and returns 1; 0 when none
 * does.
 */
static int limbo_take(struct hook_stack *s, uintptr_t *slot,
		      struct hook_frame *out)
{
	uint32_t n = __atomic_load_n(&s->limbo_next, __ATOMIC_RELAXED);

	for (uint32_t k = 0; k < HOOK_RT_LIMBO && k < n; k++) {
		struct hook_frame *e = &s->limbo[(n - 1 - k) % HOOK_RT_LIMBO];

		if (e->slot != slot || *slot != hook_exit_addr(frame_idx(e))) {
			continue;
		}
		*out = *e;
		HOOK_RT_FENCE();
		e->slot = NULL;
		return 1;
	}
	return 0;
}

/* The stack of the innermost call the thread seems to be in, or 0: a
 * hint for stack_capture_at(), which checks what it reuses. */
static inline uint32_t enclosing_sid(void)
{
	const struct hook_stack *s = hook_rt_stk;
	uint32_t d = s ? depth(s) : 0;

	return d > 0 && d <= HOOK_RT_DEPTH ? s->f[d - 1].sid : 0;
}

int hook_rt_enter(uint32_t idx, uintptr_t *slot, uintptr_t rbx, uintptr_t rbp)
{
	int saved = errno;
	/* The call's stack, taken while the slot still holds the caller's
	 * address, and before the thread's shadow stack is read: a signal
	 * handler's hooked calls during the capture may make it. */
	uint32_t sid =
		stack_depth ? stack_capture_at(slot, rbp, rbx, enclosing_sid())
			    : 0;
	struct hook_stack *s = hook_rt_stk;

	if (__builtin_expect(!s, 0)) {
		s = stack_attach();
		if (!s) {
			__atomic_fetch_add(&overflows, 1, __ATOMIC_RELAXED);
			errno = saved;
			return 0;
		}
	}
	uint32_t d = depth(s);
	uint32_t d0 = d;

	/* Frames at or below this call's slot whose slot holds neither
	 * their resume nor their exit address were left by longjmp. A frame
	 * on another stack (sigaltstack) above us still holds one, so it
	 * stays. */
	while (d > 0) {
		if (s->f[d - 1].slot > slot || frame_armed(&s->f[d - 1])) {
			break;
		}
		d--;
	}
	if (d != d0) {
		__atomic_fetch_add(&lost, d0 - d, __ATOMIC_RELAXED);
		for (uint32_t i = d; i < d0; i++) {
			limbo_put(s, &s->f[i]);
		}
		HOOK_RT_FENCE();
		hook_rt_tls.top = &s->f[d];
		HOOK_RT_FENCE();
	}
	if (__builtin_expect(d >= HOOK_RT_DEPTH, 0)) {
		__atomic_fetch_add(&overflows, 1, __ATOMIC_RELAXED);
		errno = saved;
		return 0;
	}

	/* Publish in three steps. A handler that interrupts before the top
	 * moves reuses f[d] and puts the top back; one that interrupts
	 * after sees a slot of "building", which is never dropped. */
	struct hook_frame *f = &s->f[d];

	f->slot = HOOK_RT_BUILDING;
	HOOK_RT_FENCE();
	hook_rt_tls.top = f + 1;
	HOOK_RT_FENCE();
	f->slot = HOOK_RT_BUILDING;
	f->ret = *slot;
	f->at = idx * HOOK_STUB_SIZE + HOOK_STUB_RESUME; /* see frame_idx() */
	f->unwinding = 0;
	f->rbx = rbx;
	f->sid = sid;
	HOOK_RT_FENCE();
	*slot = hook_resume_addr(idx);
	f->t0 = ticks_now();
	HOOK_RT_FENCE();
	f->slot = slot;
	errno = saved;
	return 1;
}

/* Pushes the record of frame f, ended at t1. HOT. */
static inline void record(const struct hook_frame *f, uint64_t t1,
			  uintptr_t rax, int have_rax)
{
	const struct hook_ent *e = &hook_table_ents[frame_idx(f)];
	struct coll_rec r = {
		.t0 = f->t0,
		.t1 = t1,
		.name = e->name,
		.group = e->group,
		.kind = e->kind,
		.cat = e->cat,
		.flags = e->flags,
		.arg = e->arg,
	};

	if (have_rax && (int)rax != 0) {
		r.flags |= (uint8_t)(e->on_error >> 24);
	}
	if (f->sid) {
		r.flags |= COLL_FLAG_STACK;
		r.arg = f->sid;
	}
	ring_push(&r);
	/* A step's marker: the exit path sends it here (hook_tramp.S). */
	if (__builtin_expect(e->marker, 0)) {
		coll_step_end(t1);
	}
}

/* Writes msg (a string literal) on stderr. Async-signal-safe. */
#define HOOK_RT_SAY(msg)                                                       \
	do {                                                                   \
		ssize_t w_ = write(2, msg, sizeof(msg) - 1);                   \
		(void)w_;                                                      \
	} while (0)

/*
 * The call that returned at slot has no frame in use: the shadow stack
 * dropped it, taking it for a frame that longjmp skipped, but the call was
 * only suspended on a stack the thread switched away from (swapcontext
 * coroutines, green threads that copy their stacks out and back in) and
 * has come back. Returns the caller's address and %rbx kept in the limbo.
 * The call is not recorded: its span would overlap the spans recorded
 * meanwhile on this thread, which must nest. The first time, one line
 * says so.
 *
 * When the limbo does not have it either, there is no correct address to
 * return to: the only copy of the caller's return address was the frame,
 * and that is gone (more than HOOK_RT_LIMBO frames were dropped since, or
 * the stack moved to another address, so the slot does not match). The
 * caller's code is somewhere, but no address can be proven to be it, and
 * a wrong guess resumes the program in another function's frame, where
 * it would corrupt memory or produce wrong results before it crashed.
 * Continuing is therefore not safe, and neither is stopping only this
 * thread (pthread_exit would unwind through the same broken frame, and
 * parking it would leave its locks held). This is the one place where
 * mxprof ends its host: one line, then abort(), so that the process stops
 * at once, with a core dump pointing here, rather than later somewhere
 * unrelated.
 */
static struct hook_rt_ret lost_return(struct hook_stack *s, uintptr_t *slot)
{
	struct hook_frame f;

	if (s && limbo_take(s, slot, &f)) {
		if (!__atomic_exchange_n(&switch_said, 1, __ATOMIC_RELAXED)) {
			HOOK_RT_SAY("mxprof: a hooked call returned after its "
				    "thread switched stacks (swapcontext or "
				    "green threads); such calls are not "
				    "timed\n");
		}
		return (struct hook_rt_ret){f.ret, f.rbx};
	}
	HOOK_RT_SAY("mxprof: a hooked call returned to a frame mxprof does "
		    "not know (its stack moved, or more than 256 such calls "
		    "were suspended); its caller's address is lost, "
		    "aborting\n");
	abort();
}

struct hook_rt_ret hook_rt_exit(uintptr_t *slot, uintptr_t rax)
{
	int saved = errno; /* what the hooked function left */
	uint64_t t1 = ticks_now();
	struct hook_stack *s = hook_rt_stk;
	uint32_t d = s ? depth(s) : 0;
	uint32_t k = d;

	while (k > 0 && s->f[k - 1].slot != slot) {
		k--;
	}
	if (__builtin_expect(k == 0, 0)) {
		struct hook_rt_ret r = lost_return(s, slot);

		errno = saved;
		return r;
	}
	struct hook_frame f = s->f[k - 1];

	if (k != d) {
		__atomic_fetch_add(&lost, d - k, __ATOMIC_RELAXED);
		for (uint32_t i = k; i < d; i++) {
			limbo_put(s, &s->f[i]);
		}
	}
	HOOK_RT_FENCE();
	hook_rt_tls.top = &s->f[k - 1];
	HOOK_RT_FENCE();
	record(&f, t1, rax, 1);
	errno = saved;
	return (struct hook_rt_ret){f.ret, f.rbx};
}

void hook_rt_unwind_begin(void)
{
	struct hook_stack *s = hook_rt_stk;
	int saved = errno;

	if (!s) {
		return;
	}
	for (struct hook_frame *f = s->f; f < hook_rt_tls.top; f++) {
		if (f->slot != HOOK_RT_BUILDING &&
		    *f->slot == hook_exit_addr(frame_idx(f))) {
			f->unwinding = 1;
		}
	}
	errno = saved;
}

void hook_rt_unwind_end(uintptr_t sp)
{
	int saved = errno;
	struct hook_stack *s = hook_rt_stk;
	uint64_t t1 = ticks_now();

	if (!s) {
		return;
	}
	/* Frames whose slot is below the catcher's stack pointer were
	 * unwound: the call ended by an exception, now. Those that were
	 * armed when the exception began are recorded; the others were left
	 * by longjmp before. */
	while (hook_rt_tls.top > s->f) {
		struct hook_frame *f = hook_rt_tls.top - 1;

		if ((uintptr_t)f->slot >= sp || f->slot == HOOK_RT_BUILDING) {
			break;
		}
		struct hook_frame copy = *f;

		HOOK_RT_FENCE();
		hook_rt_tls.top = f;
		HOOK_RT_FENCE();
		if (copy.unwinding) {
			record(&copy, t1, 0, 0);
		}
	}
	for (struct hook_frame *f = s->f; f < hook_rt_tls.top; f++) {
		f->unwinding = 0;
	}
	errno = saved;
}

int hook_rt_innermost(void)
{
	const struct hook_stack *s = hook_rt_stk;
	const struct hook_frame *top = hook_rt_tls.top;

	if (!s || !top || top <= s->f) {
		return -1;
	}
	return (int)frame_idx(top - 1);
}

uint64_t hook_rt_overflows(void)
{
	return __atomic_load_n(&overflows, __ATOMIC_RELAXED);
}

uint64_t hook_rt_lost(void)
{
	return __atomic_load_n(&lost, __ATOMIC_RELAXED);
}

#else /* !__x86_64__ */

void hook_rt_init(void)
{
}

int hook_rt_enter(uint32_t idx, uintptr_t *slot, uintptr_t rbx, uintptr_t rbp)
{
	(void)idx;
	(void)slot;
	(void)rbx;
	(void)rbp;
	return 0;
}

struct hook_rt_ret hook_rt_exit(uintptr_t *slot, uintptr_t rax)
{
	(void)slot;
	(void)rax;
	return (struct hook_rt_ret){0, 0};
}

void hook_rt_unwind_begin(void)
{
}

void hook_rt_unwind_end(uintptr_t sp)
{
	(void)sp;
}

int hook_rt_innermost(void)
{
	return -1;
}

uint64_t hook_rt_overflows(void)
{
	return 0;
}

uint64_t hook_rt_lost(void)
{
	return 0;
}

#endif
