/*
 * hook_orig.c - the original functions behind mxprof's own wrappers: the
 * dl family (dlopen, dlmopen, dlsym, dlvsym, dlclose), the unwinder's
 * entry points with __cxa_begin_catch, and PyTorch's autograd engine's
 * evaluate_function, at::_ops::detach::redispatch and autograd's
 * materialize_autograd_meta (hook_torch.c).
 *
 * The dl functions are looked up once, by symbol table, in libc (or libdl
 * on an older glibc): asking dlsym would find an interposer, or the
 * sanitizer runtime's dlsym that calls back into it. The unwinder's entry
 * points are learnt from the first GOT entry the patcher replaces
 * (hook_patch.c), because they live wherever the program's libgcc_s or
 * libunwind does.
 *
 * The caller matters to glibc: dlopen searches the caller's RUNPATH and
 * dlsym(RTLD_NEXT) searches after the caller. hook_orig_call() therefore
 * calls a dl function through hook_tramp_call_as() with a return address in
 * the caller's own code page, and glibc sees the true caller.
 */
#include <string.h>

#include "hook.h"

static const char *const names[HOOK_ORIG_COUNT] = {
	"dlopen",
	"dlmopen",
	"dlsym",
	"dlvsym",
	"dlclose",
	"_Unwind_RaiseException",
	"_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind",
	"__cxa_begin_catch",
	"_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_"
	"9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE",
	"_ZN2at4_ops6detach10redispatchEN3c1014DispatchKeySetERKNS_6TensorE",
	"_ZN5torch8autograd4impl25materialize_autograd_"
	"metaERKN2at10TensorBaseE",
};

static void *real[HOOK_ORIG_COUNT];

struct find_real {
	const char *name;
	void *addr;
};

static int find_real_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_real *fr = arg;
	struct hook_dyn d;
	const char *soname;

	(void)size;
	if (hook_elf_dyn(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
			 &d) != 0) {
		return 0;
	}
	soname = d.soname ? d.soname : "";
	if (strcmp(soname, "libc.so.6") != 0 &&
	    strcmp(soname, "libdl.so.2") != 0) {
		return 0;
	}
	fr->addr = hook_elf_lookup(info->dlpi_addr, &d, fr->name, NULL);
	return fr->addr != NULL;
}

void *hook_orig_dl(int i)
{
	void *p = __atomic_load_n(&real[i], __ATOMIC_ACQUIRE);

	if (!p) {
		struct find_real fr = {names[i], NULL};

		dl_iterate_phdr(find_real_cb, &fr);
		p = fr.addr;
		__atomic_store_n(&real[i], p, __ATOMIC_RELEASE);
	}
	return p;
}

void *hook_orig_get(int i)
{
	return __atomic_load_n(&real[i], __ATOMIC_ACQUIRE);
}

void hook_orig_note(int i, void *p)
{
	if (!__atomic_load_n(&real[i], __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&real[i], p, __ATOMIC_RELEASE);
	}
}

int hook_orig_index(const char *name)
{
	if (name[0] != 'd' && name[0] != '_') {
		return -1;
	}
	for (int i = 0; i < HOOK_ORIG_COUNT; i++) {
		if (strcmp(name, names[i]) == 0) {
			return i;
		}
	}
	return -1;
}

/* Returns an address of a `ret` instruction byte in the same code page as
 * caller, or NULL. The page is mapped as a whole, so the scan stays inside
 * the caller's object. */
static const void *gadget_near(const void *caller)
{
	uintptr_t page = (uintptr_t)caller & ~(uintptr_t)4095;
	const unsigned char *p = caller;
	const unsigned char *end = (const unsigned char *)(page + 4096);

	for (; p < end; p++) {
		if (*p == 0xc3) {
			return p;
		}
	}
	for (p = (const unsigned char *)page; p < (const unsigned char *)caller;
	     p++) {
		if (*p == 0xc3) {
			return p;
		}
	}
	return NULL;
}

void *hook_orig_call(int i, const void *caller, uintptr_t a, uintptr_t b,
		     uintptr_t c, uintptr_t d)
{
	void *fn = hook_orig_dl(i);

	if (!fn) {
		return NULL;
	}
#if defined(__x86_64__)
	const void *g = gadget_near(caller);

	if (g) {
		return hook_tramp_call_as(fn, g, a, b, c, d);
	}
#else
	(void)caller;
	(void)gadget_near;
#endif
	return ((void *(*)(uintptr_t, uintptr_t, uintptr_t, uintptr_t))fn)(
		a, b, c, d);
}
