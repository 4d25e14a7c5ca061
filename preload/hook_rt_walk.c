/*
 * hook_rt_walk.c - the shadow stacks as call stack walks see them.
 *
 * A hooked call's caller's return address lives only in its shadow frame
 * while the call runs (hook_tramp.S says why), so a walk of the stack
 * that meets a stub's exit asks here for it: walk_through() for the
 * calling thread's own walk (stack_unwind.c), walk_through_tid() for a
 * walk of another thread from the drain thread (stack_unwind_thread.c),
 * which finds that thread's frames by its id in a table of the threads'
 * shadow stacks. Reads only; the frames are written by hook_rt.c and
 * hook_tramp.S.
 */
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hook_rt.h"
#include "stack.h"

#if defined(__x86_64__)

/* The top of the thread's stack and hook_tramp.S's end of it (NULL
 * unless ticks are TSC cycles), and the stack itself. */
__thread struct hook_tls hook_rt_tls __attribute__((tls_model("initial-exec")));
__thread struct hook_stack *hook_rt_stk
	__attribute__((tls_model("initial-exec")));

static uintptr_t stubs_lo;

/*
 * The threads' shadow stacks by thread id, for a walk of another thread
 * (walk_through_tid): an entry is claimed by compare-and-swap on its tid
 * at the thread's first hooked call and cleared when the stack goes back.
 * A thread past the table's size is walked only to its first hooked
 * call.
 */
#define HOOK_RT_THREADS 4096
static struct {
	int tid; /* 0: free */
	struct hook_stack *s;
} stacks_of[HOOK_RT_THREADS];

void hook_rt_walk_put(struct hook_stack *s)
{
	int tid = (int)syscall(SYS_gettid);

	for (uint32_t k = 0, i = (uint32_t)tid % HOOK_RT_THREADS;
	     k < HOOK_RT_THREADS; k++, i = (i + 1) % HOOK_RT_THREADS) {
		int zero = 0;
		if (__atomic_compare_exchange_n(&stacks_of[i].tid, &zero, -1, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&stacks_of[i].s, s, __ATOMIC_RELEASE);
			__atomic_store_n(&stacks_of[i].tid, tid,
					 __ATOMIC_RELEASE);
			return;
		}
	}
}

void hook_rt_walk_drop(struct hook_stack *s)
{
	for (uint32_t i = 0; i < HOOK_RT_THREADS; i++) {
		if (__atomic_load_n(&stacks_of[i].s, __ATOMIC_ACQUIRE) == s &&
		    __atomic_load_n(&stacks_of[i].tid, __ATOMIC_ACQUIRE) > 0) {
			__atomic_store_n(&stacks_of[i].s, NULL,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&stacks_of[i].tid, 0,
					 __ATOMIC_RELEASE);
			return;
		}
	}
}

/* The stack walk's way through a hooked call this thread is in
 * (stack_through_fn): ip is a return address among the stubs. A call
 * whose function returns to ip is a live frame of that stub whose slot
 * holds ip; frames are searched from *k down, the walk meeting calls
 * innermost first. */
static int walk_through(uintptr_t ip, uint32_t *k, uintptr_t *ret,
			uintptr_t *sp, uintptr_t *rbx, uint32_t *sid)
{
	uintptr_t off = ip - stubs_lo;
	struct hook_stack *s = hook_rt_stk;

	if ((off & (HOOK_STUB_SIZE - 1)) != HOOK_STUB_EXIT) {
		return -1;
	}
	if (!s) {
		return 0;
	}
	uint32_t at = (uint32_t)(off - HOOK_STUB_EXIT + HOOK_STUB_RESUME);
	uint32_t d = depth(s);
	uint32_t i = *k < d ? *k : d;

	while (i > 0) {
		const struct hook_frame *f = &s->f[--i];
		uintptr_t *slot = f->slot;

		if (f->at == at && slot != HOOK_RT_BUILDING && *slot == ip) {
			*k = i;
			*ret = f->ret;
			*sp = (uintptr_t)(slot + 1);
			*rbx = f->rbx;
			*sid = f->sid;
			return 1;
		}
	}
	return 0;
}

/*
 * Another thread's way through a hooked call (stack_through_tid_fn): the
 * frame of thread tid whose slot lies just below sp and still holds ip.
 * The frames in use are f[0] up to the thread's top, which only it can
 * see; the lowest frame with that slot is the one in use (the frames
 * below a live one are live, and live calls have distinct slots). Reads
 * with stack_read_word(): the thread may end meanwhile.
 */
static int walk_through_tid(int tid, uintptr_t ip, uintptr_t sp, uintptr_t *ret,
			    uintptr_t *rbx)
{
	uintptr_t off = ip - stubs_lo, held;
	struct hook_stack *s = NULL;

	if ((off & (HOOK_STUB_SIZE - 1)) != HOOK_STUB_EXIT) {
		return -1;
	}
	for (uint32_t i = 0; i < HOOK_RT_THREADS; i++) {
		if (__atomic_load_n(&stacks_of[i].tid, __ATOMIC_ACQUIRE) ==
		    tid) {
			s = __atomic_load_n(&stacks_of[i].s, __ATOMIC_ACQUIRE);
			break;
		}
	}
	if (!s || stack_read_word(sp - 8, &held) < 0 || held != ip) {
		return 0;
	}
	uint32_t at = (uint32_t)(off - HOOK_STUB_EXIT + HOOK_STUB_RESUME);
	for (uint32_t i = 0; i < HOOK_RT_DEPTH; i++) {
		const struct hook_frame *f = &s->f[i];
		uintptr_t slot, fat;

		if (stack_read_word((uintptr_t)&f->slot, &slot) < 0) {
			return 0;
		}
		if (slot != sp - 8) {
			continue;
		}
		if (stack_read_word((uintptr_t)&f->at, &fat) < 0 ||
		    (uint32_t)fat != at ||
		    stack_read_word((uintptr_t)&f->ret, ret) < 0 ||
		    stack_read_word((uintptr_t)&f->rbx, rbx) < 0) {
			return 0;
		}
		return 1;
	}
	return 0;
}

void hook_rt_walk_init(uintptr_t lo, uintptr_t hi)
{
	stubs_lo = lo;
	stack_set_through_tid(walk_through_tid);
	stack_set_through(walk_through, lo, hi);
}

#endif
