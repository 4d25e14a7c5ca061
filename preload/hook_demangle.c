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
 * objects: a program that calls C++ functions has it loaded. mxprof does not
 * link libstdc++ itself, so a C program never loads it because of mxprof;
 * without it, names stay mangled.
 *
 * Runs under the patcher's lock; allocates; not hot.
 */
#include <stdlib.h>
#include <string.h>

#include "hook.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Returns libstdc++'s __cxa_demangle, looked up in the loaded objects
 * (again each time until found: libstdc++ may be loaded later), or NULL. */
static demangle_fn demangler(void)
{
	static demangle_fn fn;

	for (int i = 0; !fn && i < hook_obj_count(); i++) {
		struct hook_obj *o = hook_obj_nth(i);
		struct hook_dyn d;
		int type = 0;
		void *p;

		if (o->skip ||
		    hook_elf_dyn(o->base, o->phdr, o->phnum, &d) != 0) {
			continue;
		}
		p = hook_elf_lookup(o->base, &d, "__cxa_demangle", &type);
		if (p && type == STT_FUNC) {
			fn = (demangle_fn)(uintptr_t)p;
		}
	}
	return fn;
}

char *hook_demangle(const char *sym)
{
	demangle_fn fn;
	int status = -1;
	char *out;

	if (strncmp(sym, "_Z", 2) != 0 || !(fn = demangler())) {
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
