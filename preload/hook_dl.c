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
 * Locking: the patcher's lock is LOCK_HOOK, the first of the lock order
 * (collector.h). The dynamic linker holds its own lock while it runs
 * library constructors, which may call dlopen or dlsym, and the patcher
 * takes the dynamic linker's lock (dl_iterate_phdr, dlopen(RTLD_NOLOAD),
 * dlsym). To never wait on each other, nobody blocks on the patcher's
 * lock: a thread that cannot take it leaves a "scan pending" mark that the
 * holder honours before leaving, and dlsym then returns the unwrapped
 * pointer. fork() is the one waiter, bounded (see "fork" below).
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
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "collector.h"
#include "stack.h"
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
	[HOOK_ORIG_TORCH_EVAL] = (void *)hook_torch_evaluate_function,
	[HOOK_ORIG_TORCH_DETACH] = (void *)hook_torch_detach,
	[HOOK_ORIG_TORCH_META] = (void *)hook_torch_meta,
};

/* Hooking is on: hook_dl_start() was called, and no fork left this
 * process's tables in doubt. */
static int on;
/* The patcher's lock: first in the lock order (collector.h), and only
 * ever tried or, at fork, waited for with a bound. */
static struct coll_lock lock = COLL_LOCK_INIT(LOCK_HOOK);
static int scan_pending;
/* The thread that holds the lock (its pthread_self()), or 0. */
static unsigned long holder;

/* What hook_dl_fork_prepare() did with the lock. */
enum fork_lock { FORK_NONE, FORK_HELD, FORK_SELF, FORK_MISSED };

/* How long a fork waits for a scan to end, at most. */
#define FORK_WAIT_S 2

/* Per thread: inside dlopen, dlmopen or dlclose, which run constructors
 * and destructors under the dynamic linker's lock; and what this thread's
 * fork did with the patcher's lock (threads may fork at once). */
static __thread struct {
	int in_loader;
	int fork_lock; /* enum fork_lock */
} me __attribute__((tls_model("initial-exec")));

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

/* Takes the lock if it is free. Returns 0, or -1 when another thread (or
 * this one, further up) holds it. */
static int lock_try(void)
{
	if (!coll_trylock(&lock)) {
		return -1;
	}
	__atomic_store_n(&holder, (unsigned long)pthread_self(),
			 __ATOMIC_RELAXED);
	return 0;
}

/* Lets go of the lock, and scans again as long as another thread left a
 * "scan pending" mark meanwhile and the lock can be had again: every
 * holder honours the marks before it leaves. */
static void unlock_and_catch_up(void)
{
	for (;;) {
		__atomic_store_n(&holder, 0, __ATOMIC_RELAXED);
		coll_unlock(&lock);
		if (!__atomic_load_n(&scan_pending, __ATOMIC_SEQ_CST) ||
		    lock_try() != 0) {
			return;
		}
		__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
		scan_locked();
		dlerror(); /* our failed lookups are not the program's */
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
	if (lock_try() == 0) {
		__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
		scan_locked();
		dlerror(); /* our failed lookups are not the program's */
		unlock_and_catch_up();
	}
	stack_probe(); /* CPython may have come with the object */
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
	if (lock_try() != 0) {
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
	unlock_and_catch_up();
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
	me.in_loader++;
	void *h = hook_orig_call(HOOK_ORIG_DLOPEN, __builtin_return_address(0),
				 (uintptr_t)file, (uintptr_t)mode, 0, 0);

	me.in_loader--;
	if (h) {
		scan();
	}
	return h;
}

static void *dl_mopen(Lmid_t lmid, const char *file, int mode)
{
	me.in_loader++;
	void *h = hook_orig_call(HOOK_ORIG_DLMOPEN, __builtin_return_address(0),
				 (uintptr_t)lmid, (uintptr_t)file,
				 (uintptr_t)mode, 0);

	me.in_loader--;
	if (h && lmid != LM_ID_BASE) {
		hook_obj_namespace_made();
	}
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

	me.in_loader++;
	int rc = fn ? fn(handle) : -1;

	me.in_loader--;
	if (rc == 0) {
		scan();
	}
	return rc;
}

/* ---- fork ----------------------------------------------------------------
 * The lock is held across fork(), so that the child never starts with
 * tables another thread was halfway through. But a fork may come from a
 * thread that holds the dynamic linker's lock (a library constructor or
 * destructor that forks, under dlopen or dlclose), while the thread that
 * patches waits for that lock (dlsym, dlopen(RTLD_NOLOAD)): waiting for
 * the patcher there would never end. So the forking thread
 *  - holds the lock already (a destructor run by the patcher's own
 *    dlclose forked): nothing to take; it goes on patching in the child;
 *  - is inside dlopen, dlmopen or dlclose: takes the lock only if it is
 *    free at once;
 *  - else waits for it, FORK_WAIT_S at most, in case the dynamic
 *    linker's lock is held in a way mxprof cannot see (a fork from a
 *    dl_iterate_phdr callback, or from a library libc loads itself).
 * When it did not get the lock, the parent goes on as if nothing happened,
 * and the child, whose tables may be half-written, never patches again:
 * the functions hooked so far stay timed, libraries it loads later are
 * not hooked, and one line says so.
 */

/* Waits FORK_WAIT_S at most for the lock. Returns 0 once taken, or -1.
 * A bounded wait cannot deadlock, so, like a try-lock, it needs no order
 * check; the lock is the first of the order, and fork's prepare takes the
 * others after it. */
static int lock_wait(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FORK_WAIT_S;
	if (!coll_timedlock(&lock, &until)) {
		return -1;
	}
	__atomic_store_n(&holder, (unsigned long)pthread_self(),
			 __ATOMIC_RELAXED);
	return 0;
}

void hook_dl_fork_prepare(void)
{
	int saved = errno;

	if (!on) {
		me.fork_lock = FORK_NONE;
	} else if (__atomic_load_n(&holder, __ATOMIC_RELAXED) ==
		   (unsigned long)pthread_self()) {
		me.fork_lock = FORK_SELF;
	} else if (lock_try() == 0 || (!me.in_loader && lock_wait() == 0)) {
		me.fork_lock = FORK_HELD;
	} else {
		me.fork_lock = FORK_MISSED;
	}
	errno = saved;
}

void hook_dl_fork_parent(void)
{
	int saved = errno;

	if (me.fork_lock == FORK_HELD) {
		unlock_and_catch_up();
	}
	me.fork_lock = FORK_NONE;
	errno = saved;
}

/* Makes the lock a fresh one, nobody's. */
static void lock_reset(void)
{
	struct coll_lock fresh = COLL_LOCK_INIT(LOCK_HOOK);

	memcpy(&lock, &fresh, sizeof(lock));
	__atomic_store_n(&holder, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
}

void hook_dl_fork_child(void)
{
	static const char frozen[] =
		"mxprof: forked while another thread was patching; this "
		"process hooks no library it loads from now on\n";
	int saved = errno;

	switch (me.fork_lock) {
	case FORK_HELD:
		/* The tables are whole. The marks of threads the child does
		 * not have go: its next dl call scans what they loaded. */
		__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&holder, 0, __ATOMIC_RELAXED);
		coll_unlock(&lock);
		break;
	case FORK_SELF:
		break; /* this thread's scan goes on, and lets go */
	case FORK_MISSED: {
		ssize_t w;

		on = 0;
		lock_reset();
		w = write(2, frozen, sizeof(frozen) - 1);
		(void)w;
		break;
	}
	default:
		/* No prepare ran (a fork the collector did not see), or hooking
		 * is off: the lock, whoever held it, is free in the child. */
		lock_reset();
		break;
	}
	me.fork_lock = FORK_NONE;
	errno = saved;
}
