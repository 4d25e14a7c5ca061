/*
 * hook_dl.c - keeping up with what is loaded: the dlopen family's
 * wrappers, the scans they start, and the patcher's lock.
 *
 * A scan reads the list of loaded objects (hook_obj.c), retires the hooks
 * of those that went, and patches the GOT of each new one (hook_patch.c)
 * while it is pinned. dlopen and dlmopen are wrapped (patched into every
 * GOT that refers to them) to scan after the real call, dlclose to scan
 * after a successful unload, and dlsym and dlvsym to return a stub for a
 * matching function, so that function pointers are timed too.
 *
 * The wrappers are static and reach callers only through patched GOT
 * entries, never by exporting the names: an exported dlsym would also be
 * what a sanitizer runtime calls while it initialises, before this
 * (possibly instrumented) code may run, and a program linked with
 * libmxprof.a would interpose them on every other object. They call the
 * real function as from their caller (hook_orig_call()).
 *
 * Locking: the dynamic linker holds its own lock while it runs library
 * constructors, which may call dlopen or dlsym, and the patcher takes the
 * dynamic linker's lock (dl_iterate_phdr, dlopen(RTLD_NOLOAD), dlsym). To
 * never wait on each other, nobody blocks on the patcher's lock: a thread
 * that cannot take it leaves a "scan pending" mark that the holder honours
 * before leaving, and dlsym then returns the unwrapped pointer.
 *
 * errno: what a wrapper returns to the program is what the real function
 * left in errno; the scans and lookups after it keep it (scan() and
 * wrap_pointer() save and restore it), as the shadow stack's functions do
 * (hook_rt.c says why).
 *
 * A dlopen'ed library's constructors run before it is patched, so their
 * calls are not timed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <dlfcn.h>

#include "hook.h"

static void *dl_open(const char *file, int mode);
static void *dl_mopen(Lmid_t lmid, const char *file, int mode);
static void *dl_sym(void *handle, const char *name);
static void *dl_vsym(void *handle, const char *name, const char *version);
static int dl_close(void *handle);

/* What the patcher points the GOT entries of each wrapped function at. */
static void *const wrappers[HOOK_ORIG_COUNT] = {
	[HOOK_ORIG_DLOPEN] = (void *)dl_open,
	[HOOK_ORIG_DLMOPEN] = (void *)dl_mopen,
	[HOOK_ORIG_DLSYM] = (void *)dl_sym,
	[HOOK_ORIG_DLVSYM] = (void *)dl_vsym,
	[HOOK_ORIG_DLCLOSE] = (void *)dl_close,
	[HOOK_ORIG_RAISE] = (void *)hook_unwind_raise,
	[HOOK_ORIG_RETHROW] = (void *)hook_unwind_rethrow,
	[HOOK_ORIG_FORCED] = (void *)hook_unwind_forced,
	[HOOK_ORIG_BEGIN_CATCH] = (void *)hook_unwind_begin_catch,
};

static int on; /* hooking is on: hook_dl_start() was called */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int scan_pending;

/* One pass: forget unloaded objects, learn and patch new ones. Called with
 * the lock held. */
static void scan_locked(void)
{
	if (hook_obj_sync() == 0) {
		return;
	}
	for (int i = 0; i < hook_obj_count(); i++) {
		struct hook_obj *o = hook_obj_nth(i);

		if (!o->skip) {
			hook_spec_lib_loaded(o->name, o->file);
		}
	}
	for (int i = 0; i < hook_obj_count(); i++) {
		struct hook_obj *o = hook_obj_nth(i);
		void *pin = NULL;

		if (o->seen != 2) {
			continue;
		}
		o->seen = 1;
		if (o->skip || hook_obj_pin(o, &pin) != 0) {
			continue;
		}
		hook_patch_obj(o, wrappers);
		hook_obj_unpin(pin);
	}
}

/* Scans now, or leaves it to the thread that holds the lock. Keeps errno
 * (and dlerror()) as the program left them. */
static void scan(void)
{
	int saved = errno;

	if (!on) {
		return;
	}
	__atomic_store_n(&scan_pending, 1, __ATOMIC_SEQ_CST);
	do {
		if (pthread_mutex_trylock(&lock) != 0) {
			break;
		}
		__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
		scan_locked();
		dlerror(); /* our failed lookups are not the program's */
		pthread_mutex_unlock(&lock);
	} while (__atomic_load_n(&scan_pending, __ATOMIC_SEQ_CST));
	errno = saved;
}

void hook_dl_start(void)
{
	on = 1;
	scan();
}

/* Returns a stub for the function p that dlsym found under name, or p.
 * Keeps errno. */
static void *wrap_pointer(void *p, const char *name)
{
	void *r = p;
	int saved = errno;

	if (!p || !on || !name) {
		return p;
	}
	int ii = hook_orig_index(name);

	if (ii >= 0 && ii <= HOOK_ORIG_DLCLOSE && p == hook_orig_dl(ii)) {
		return wrappers[ii];
	}
	if (pthread_mutex_trylock(&lock) != 0) {
		errno = saved;
		return p;
	}
	if (hook_obj_loads_changed()) {
		scan_locked();
	}
	struct hook_obj *def = hook_obj_at((uintptr_t)p);
	struct hook_match m;

	if (def && !def->skip &&
	    hook_spec_match(name, def->name, def->file, &m) &&
	    hook_patch_is_function(def, name, (uintptr_t)p)) {
		void *s = hook_patch_stub_for((uintptr_t)p, name, def, &m);

		if (s) {
			r = s;
		}
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
	return r;
}

/* ---- the wrappers ------------------------------------------------------
 * dlopen, dlmopen, dlsym, dlvsym, dlclose: glibc's functions, called as
 * from the caller, plus patching of what was loaded and wrapping of
 * matching function pointers. Not hot. Same thread-safety as glibc's.
 */
static void *dl_open(const char *file, int mode)
{
	void *h = hook_orig_call(HOOK_ORIG_DLOPEN, __builtin_return_address(0),
				 (uintptr_t)file, (uintptr_t)mode, 0, 0);

	if (h) {
		scan();
	}
	return h;
}

static void *dl_mopen(Lmid_t lmid, const char *file, int mode)
{
	void *h = hook_orig_call(HOOK_ORIG_DLMOPEN, __builtin_return_address(0),
				 (uintptr_t)lmid, (uintptr_t)file,
				 (uintptr_t)mode, 0);

	if (h) {
		scan();
	}
	return h;
}

static void *dl_sym(void *handle, const char *name)
{
	void *p = hook_orig_call(HOOK_ORIG_DLSYM, __builtin_return_address(0),
				 (uintptr_t)handle, (uintptr_t)name, 0, 0);

	return wrap_pointer(p, name);
}

static void *dl_vsym(void *handle, const char *name, const char *version)
{
	void *p = hook_orig_call(HOOK_ORIG_DLVSYM, __builtin_return_address(0),
				 (uintptr_t)handle, (uintptr_t)name,
				 (uintptr_t)version, 0);

	return wrap_pointer(p, name);
}

static int dl_close(void *handle)
{
	int (*fn)(void *) = (int (*)(void *))hook_orig_dl(HOOK_ORIG_DLCLOSE);
	int rc = fn ? fn(handle) : -1;

	if (rc == 0) {
		scan();
	}
	return rc;
}

void hook_dl_after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	memcpy(&lock, &fresh, sizeof(lock));
	__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
}
