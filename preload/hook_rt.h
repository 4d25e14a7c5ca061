/*
 * hook_rt.h - the shadow stack's frames, shared by the hook runtime's two
 * C files (private to them):
 *
 *   hook_rt.c       the trampolines' general paths: frames pushed and
 *                   popped, longjmp, stack switching, exceptions
 *   hook_rt_walk.c  the shadow stacks as call stack walks see them: the
 *                   thread's own (stack_set_through) and another
 *                   thread's by its id (stack_set_through_tid); the
 *                   thread's stack pointer and hook_rt_tls live here
 *
 * hook_rt.c calls hook_rt_walk.c, never the other way.
 */
#ifndef MXPROF_HOOK_RT_H
#define MXPROF_HOOK_RT_H

#include <stdint.h>

#include "hook.h"

#if defined(__x86_64__)

#define HOOK_RT_BUILDING ((uintptr_t *)UINTPTR_MAX)

struct hook_frame {
	uintptr_t *slot;    /* where the return address is           */
	uintptr_t ret;	    /* the caller's real return address       */
	uint64_t t0;	    /* entry tick                             */
	uint32_t at;	    /* hook_resume_addr(idx) - stubs           */
	uint32_t unwinding; /* armed when an exception began to unwind */
	uintptr_t rbx;	    /* the caller's %rbx (hook_tramp.S)        */
	uint32_t sid;	    /* the call's stack, 0: none               */
	uint32_t spare;
};

/* Dropped frames kept in case their call returns after all. */
#define HOOK_RT_LIMBO 256

/* The frames in use are f[0] .. hook_rt_tls.top - 1. base sits right
 * below f[0] with a slot of HOOK_RT_BUILDING, so that "the frame below
 * top" always exists for the trampolines: it never matches a slot, and it
 * is above every new call's slot. limbo holds copies of the last
 * HOOK_RT_LIMBO frames dropped, the newest at limbo_next - 1; a slot of
 * NULL marks a free or reclaimed entry. The trampolines never read it. */
struct hook_stack {
	struct hook_frame base;
	struct hook_frame f[HOOK_RT_DEPTH];
	struct hook_frame limbo[HOOK_RT_LIMBO];
	uint32_t limbo_next;
};

/* This thread's shadow stack, NULL before its first hooked call. */
extern __thread struct hook_stack *hook_rt_stk
	__attribute__((tls_model("initial-exec")));

/* How many frames are in use. */
static inline uint32_t depth(const struct hook_stack *s)
{
	return (uint32_t)(hook_rt_tls.top - s->f);
}

/* Names the walks' ways through hooked calls to the stack walk
 * (stack_set_through, stack_set_through_tid), with the stubs at
 * [lo, hi). Call once, at start-up. */
void hook_rt_walk_init(uintptr_t lo, uintptr_t hi);

/* Makes s the calling thread's stack for walks of it from other threads
 * (at its first hooked call). Async-signal-safe. */
void hook_rt_walk_put(struct hook_stack *s);

/* Forgets s, whose thread ends. */
void hook_rt_walk_drop(struct hook_stack *s);

#endif
#endif
