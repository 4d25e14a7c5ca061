/*
 * hook_unwind.c - C++ exceptions through hooked frames.
 *
 * An exception (or a forced unwind: pthread_cancel, pthread_exit) walks
 * the stack through the stubs by their unwind information (hook_tramp.S,
 * "Unwinding") and lands in a catcher above them: the calls it passed end
 * without returning through their stubs' exits. The patcher
 * (hook_patch.c) points every GOT entry of _Unwind_RaiseException,
 * _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind and __cxa_begin_catch
 * at the wrappers below, which are never exported, so that the shadow
 * stack learns which: hook_rt_unwind_begin() marks the calls running when
 * the unwinder starts, and the catch (or a search that found no handler)
 * has hook_rt_unwind_end() record and pop those the catcher's stack
 * pointer shows gone.
 *
 * A program that links libstdc++ and the unwinder statically has no such
 * GOT entry: its exceptions still pass hooked frames, but the calls they
 * end are not recorded (docs/hooks.md, "Limits").
 */
#include "hook.h"

int hook_unwind_raise(void *exc)
{
	int (*fn)(void *) = (int (*)(void *))hook_orig_get(HOOK_ORIG_RAISE);
	int rc;

	hook_rt_unwind_begin();
	rc = fn(exc);
	hook_rt_unwind_end(0);
	return rc;
}

int hook_unwind_rethrow(void *exc)
{
	int (*fn)(void *) = (int (*)(void *))hook_orig_get(HOOK_ORIG_RETHROW);
	int rc;

	hook_rt_unwind_begin();
	rc = fn(exc);
	hook_rt_unwind_end(0);
	return rc;
}

int hook_unwind_forced(void *exc, void *stop, void *arg)
{
	int (*fn)(void *, void *, void *) = (int (*)(
		void *, void *, void *))hook_orig_get(HOOK_ORIG_FORCED);
	int rc;

	hook_rt_unwind_begin();
	rc = fn(exc, stop, arg);
	hook_rt_unwind_end(0);
	return rc;
}

void *hook_unwind_begin_catch(void *exc)
{
	void *(*fn)(void *) =
		(void *(*)(void *))hook_orig_get(HOOK_ORIG_BEGIN_CATCH);
	void *r = fn(exc);

	/* The catcher's stack pointer: hooked frames below it are gone. */
	hook_rt_unwind_end((uintptr_t)__builtin_dwarf_cfa());
	return r;
}
