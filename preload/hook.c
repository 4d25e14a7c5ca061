/*
 * hook.c - the hook engine's life cycle: start (hook_init), the lines at
 * exit (hook_finish) and fork. hook.h is the map of the other files.
 *
 * Known limits (docs/hooks.md, "Limits", tells users the same):
 *  - Code that switches stacks under a hooked call (swapcontext, green
 *    threads that copy stacks) can return after the shadow stack dropped
 *    the call's frame; the frame's copy in the limbo sends it back to its
 *    caller, untimed. When the copy is gone too (more than 256 such frames
 *    dropped since, or a stack that moved to another address), no correct
 *    address is left: mxprof says so and aborts (hook_rt.c says why).
 *  - Unwinders (gdb, backtrace(), C++ exceptions) walk through hooked
 *    frames by the stubs' unwind information (hook_tramp.S). The calls
 *    an exception ends are recorded by the wrappers of the unwinder's
 *    entry points (hook_unwind.c); a program that links libstdc++ and
 *    the unwinder statically has no GOT entry to wrap, so there those
 *    calls are not recorded (their frames are dropped at the next
 *    hooked call).
 *  - A dlopen'ed library's constructors run before it is patched, so
 *    their calls are not timed (hook_dl.c).
 *  - At most HOOK_MAX distinct functions are hooked at a time; one line at
 *    exit says when more matched (hook_table.c).
 */
#include <errno.h>
#include <stdio.h>

#include "source.h"
#include "hook.h"

int hook_init(const char *spec)
{
	int rc = hook_spec_set(spec);

	if (rc < 0) {
		return rc;
	}
	if (rc == 1) {
		return 0;
	}
#if !defined(__x86_64__)
	fprintf(stderr, "mxprof: C API hooking is not available on this "
			"architecture\n");
	hook_spec_clear();
	return -ENOTSUP;
#else
	hook_obj_set_exe();
	for (int i = 0; i <= HOOK_ORIG_DLCLOSE; i++) {
		hook_orig_dl(i);
	}
	hook_rt_init();
	hook_dl_start();
	return 0;
#endif
}

static int descendant;

void hook_set_descendant(int on)
{
	descendant = on;
}

void hook_finish(void)
{
	uint64_t over = hook_rt_overflows();

	if (!descendant) {
		hook_spec_report();
	}
	if (hook_table_full()) {
		fprintf(stderr,
			"mxprof: more than %d functions matched MXPROF_HOOK; "
			"the rest were not timed\n",
			HOOK_MAX);
	}
	if (over) {
		fprintf(stderr,
			"mxprof: %llu hooked calls were not timed (more than "
			"256 nested hooked calls on a thread)\n",
			(unsigned long long)over);
	}
}

void hook_fork_prepare(void)
{
	hook_dl_fork_prepare();
}

void hook_fork_parent(void)
{
	hook_dl_fork_parent();
}

void hook_fork_child(void)
{
	hook_dl_fork_child();
	descendant = 1; /* a forked child is never the root */
}

/* The hook engine's part in the collector's life cycle: the lines at exit,
 * and the patcher's lock held across fork() at the first rank. */
const struct coll_source hook_source = {
	.name = "hook",
	.finish = hook_finish,
	.fork_rank = LOCK_HOOK,
	.fork_prepare = hook_fork_prepare,
	.fork_parent = hook_fork_parent,
	.fork_child = hook_fork_child,
};
