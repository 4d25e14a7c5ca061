/*
 * hook_demangle.c - readable names for hooked C++ functions.
 *
 * A hooked function's row and slice are named once, when it is hooked
 * (hook_patch_stub_for()), so its records carry an interned id and the
 * writers, `report`, `diff` and `merge` all read the readable name; the
 * hot path never sees it. Patterns that name a function the way C++ code
 * spells it (`libfoo.so:nn::*`) are matched against the same name.
 *
 * The demangler is libstdc++'s __cxa_demangle, found among the loaded
 * objects as the patcher learns them (hook_obj.c, which hands it over with
 * hook_demangle_use()): a program that calls C++ functions has it loaded.
 * mxprof does not link libstdc++ itself, so a C program never loads it
 * because of mxprof; without it, names stay mangled.
 *
 * Runs under the patcher's lock, and on the drain thread (stack_name.c);
 * allocates; not hot.
 */
#include <stdlib.h>
#include <string.h>

#include "hook.h"

/* libstdc++'s __cxa_demangle once found; set once, read unlocked. */
static hook_demangle_fn demangler;

void hook_demangle_use(hook_demangle_fn fn)
{
	hook_demangle_fn none = NULL;

	__atomic_compare_exchange_n(&demangler, &none, fn, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

int hook_demangle_ready(void)
{
	return __atomic_load_n(&demangler, __ATOMIC_ACQUIRE) != NULL;
}

char *hook_demangle(const char *sym)
{
	hook_demangle_fn fn = __atomic_load_n(&demangler, __ATOMIC_ACQUIRE);
	int status = -1;
	char *out;

	if (strncmp(sym, "_Z", 2) != 0 || !fn) {
		return NULL;
	}
	out = fn(sym, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	/* A new buffer from the demangler, never the status it was given
	 * (cppcheck takes the two for one). */
	// cppcheck-suppress returnDanglingLifetime
	return out;
}
