/*
 * hook.c - MXPROF_HOOK: which C API functions to time, and the GOT
 * patching that routes their calls through the trampolines.
 *
 * Why the GOT: every call from one shared object into another goes through
 * a GOT entry, R_X86_64_JUMP_SLOT for PLT calls and R_X86_64_GLOB_DAT for
 * -fno-plt calls and address-taken functions. Rewriting those entries in
 * every loaded object (except libmxprof and the dynamic linker) catches
 * all cross-object calls without touching code. A call inside one library
 * is seen only when it too goes through the GOT (a library built with
 * semantic interposition calling its own exported functions).
 *
 * Where a call really goes: a GOT entry that the dynamic linker already
 * resolved holds the target (for an ifunc, the implementation it chose).
 * A lazy PLT entry still points into its own object's PLT; its target is
 * found with dlsym, or dlvsym for the version the reference asks for,
 * called as from the referring object, so that glibc searches that
 * object's scope as its own lazy binding would (global scope first, or
 * its own dependencies first under RTLD_DEEPBIND, within its dlmopen
 * namespace). The defining object is the one whose executable segment
 * holds the target; its soname (or file name) is matched against LIBGLOB
 * and names the table section "C API (libfoo.so.1)". Only functions are
 * hooked: a data symbol can share the executable segment (objects linked
 * without separate code), and a stub in its place would be read as data.
 *
 * Unloading: the list of objects comes from dl_iterate_phdr, under the
 * dynamic linker's lock, but an object is patched after that lock is
 * released, so each new object is pinned with dlopen(RTLD_NOLOAD) while
 * its tables are read and its GOT is written.
 *
 * Function-pointer identity: a GLOB_DAT entry also serves `&function`, and
 * code compares such addresses (OpenSSL's CRYPTO_malloc checks whether its
 * allocator pointer is still itself; Python compares tp_free slots). A
 * patched entry would turn such a comparison false. So GLOB_DAT entries
 * are patched only in objects built without a PLT at all (-fno-plt), where
 * they are how calls are made, and only for functions another object
 * defines. Objects with a PLT keep their GLOB_DAT entries.
 *
 * Full RELRO: with BIND_NOW the GOT lies in PT_GNU_RELRO, read-only after
 * start-up. The pages are made writable for the patch and read-only again.
 *
 * Objects loaded later: dlopen and dlmopen are wrapped (patched into every
 * GOT that refers to them); after the real call the new objects are
 * patched. dlclose forgets unloaded objects and
 * retires their hooks. dlsym and dlvsym return a stub for a matching
 * function, so function pointers are timed too.
 *
 * The caller matters to glibc: dlopen searches the caller's RUNPATH and
 * dlsym(RTLD_NEXT) searches after the caller. The wrappers therefore call
 * the real function through hook_tramp_call_as() with a return address in
 * the caller's own code page, and glibc sees the true caller.
 *
 * Locking: the dynamic linker holds its own lock while it runs library
 * constructors, which may call dlopen or dlsym. To never wait on each
 * other, nobody blocks on the patcher's lock: a thread that cannot take
 * it leaves a "scan pending" mark that the holder honours before leaving,
 * and dlsym then returns the unwrapped pointer.
 *
 * Known limits:
 *  - Code that switches stacks under a hooked call (swapcontext, green
 *    threads that copy stacks) can return to a frame the shadow stack does
 *    not know; mxprof then says so on stderr and aborts.
 *  - backtrace() and other unwinders that are not the C++ exception path
 *    stop at a hooked frame (the stubs have no unwind information).
 *    C++ exceptions are handled by wrapping the unwinder's entry points
 *    in the GOTs that call them; a program that links libstdc++ and the
 *    unwinder statically has no such GOT entry, and an exception through
 *    a hooked frame there ends in std::terminate.
 *  - A dlopen'ed library's constructors run before it is patched, so
 *    their calls are not timed.
 *  - At most HOOK_MAX distinct functions are hooked; one line at exit
 *    says when more matched.
 */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <dlfcn.h>

#include "collector.h"
#include "hook.h"

void *hook_real[HOOK_MAX];
struct hook_ent hook_ents[HOOK_MAX];

#define HOOK_PATS 64

/* One LIBGLOB:SYMGLOB pattern. */
struct pat {
	char lib[128];
	char sym[128];
	char text[160];	 /* as the user wrote it, for messages */
	uint8_t cat;	 /* enum coll_cat                      */
	uint8_t status;	 /* returns a status int               */
	uint8_t implied; /* from @auto: never reported unmatched */
	uint8_t live;	 /* its library is loaded (this scan)  */
	int matched;
};

/* A preset: @name stands for one pattern. */
struct preset {
	const char *name;
	const char *lib;
	const char *sym;
	const char *cat; /* the trace category (cat.c) */
	uint8_t status;
};

static const struct preset presets[] = {
	{"mxnet", "libmxnet.so", "MX*", "c_api", 1},
	{"cudart", "libcudart.so*", "cuda*", "cuda_runtime", 1},
	{"cublas", "libcublas*.so*", "cublas*", "c_api", 0},
	{"cudnn", "libcudnn*.so*", "cudnn*", "c_api", 0},
	{"nccl", "libnccl*.so*", "nccl*", "c_api", 0},
};

/* Functions of a status preset that return a string instead. */
static const char *const nostatus[] = {"*GetErrorString", "*GetErrorName",
				       "MXGetLastError"};

/*
 * Functions never hooked, whatever the pattern: those that return twice or
 * share their stack with another context (a replaced return address would
 * be used twice, or by the wrong side), those that never return normally
 * or run before anything is set up, and the unwinder's and C++ runtime's
 * own machinery.
 */
static const char *const never[] = {
	"vfork",	"__vfork",	     "*setjmp*",	  "getcontext",
	"setcontext",	"swapcontext",	     "makecontext",	  "clone",
	"clone3",	"__clone*",	     "__libc_start_main", "_Unwind_*",
	"__cxa_*",	"__gxx_*",	     "__tls_get_addr",	  "_dl_*",
	"pthread_exit", "__pthread_unwind*",
};

/* A loaded object as the patcher knows it. */
struct obj {
	ElfW(Addr) base;
	const void *dyn; /* identity together with base */
	const ElfW(Phdr) * phdr;
	int phnum;
	uintptr_t xlo, xhi; /* executable segments            */
	uintptr_t rlo, rhi; /* PT_GNU_RELRO, page-aligned     */
	char name[256];	    /* soname, or the file's basename */
	char file[256];	    /* the file's basename            */
	char *path;	    /* the dynamic linker's name for it, or NULL */
	uint32_t group;	    /* "C API (name)", interned lazily */
	uint8_t skip;	    /* libmxprof or the dynamic linker */
	uint8_t seen;
};

static struct {
	int on;
	struct pat pats[HOOK_PATS];
	int npats;
	struct obj *objs;
	int nobjs, cap;
	uint32_t nhooks;
	uint32_t dead[HOOK_MAX]; /* retired hook indexes, oldest first */
	uint32_t ndead;
	int full; /* a match found every stub taken */
	char exe[256];
} H;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int scan_pending;

/* Address -> hook index, open addressing; key 0 empty, 1 deleted. */
#define HASH_SIZE (2 * HOOK_MAX)
static struct {
	uintptr_t key;
	uint32_t idx;
} hash[HASH_SIZE];

/* The real functions behind the wrappers. */
enum {
	R_DLOPEN,
	R_DLMOPEN,
	R_DLSYM,
	R_DLVSYM,
	R_DLCLOSE,
	R_RAISE,
	R_RETHROW,
	R_FORCED,
	R_BEGIN_CATCH,
	R_COUNT,
};
static const char *const real_names[R_COUNT] = {
	"dlopen",
	"dlmopen",
	"dlsym",
	"dlvsym",
	"dlclose",
	"_Unwind_RaiseException",
	"_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind",
	"__cxa_begin_catch",
};
static void *real[R_COUNT];
static void *wrapper_of(int i);

/* ---- finding glibc's own dl functions ---------------------------------- */

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

/* Returns the real dl function i (dlopen ... dlclose), looked up once in
 * libc or libdl. Safe before hook_init(). */
static void *real_dl(int i)
{
	void *p = __atomic_load_n(&real[i], __ATOMIC_ACQUIRE);

	if (!p) {
		struct find_real fr = {real_names[i], NULL};

		dl_iterate_phdr(find_real_cb, &fr);
		p = fr.addr;
		__atomic_store_n(&real[i], p, __ATOMIC_RELEASE);
	}
	return p;
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

/* Calls real dl function i with up to four arguments as if from caller. */
static void *call_real(int i, const void *caller, uintptr_t a, uintptr_t b,
		       uintptr_t c, uintptr_t d)
{
	void *fn = real_dl(i);

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

/* ---- patterns ---------------------------------------------------------- */

static void trim(char *s)
{
	char *e = s + strlen(s);
	char *b = s;

	while (e > s && (e[-1] == ' ' || e[-1] == '\t')) {
		*--e = 0;
	}
	while (*b == ' ' || *b == '\t') {
		b++;
	}
	memmove(s, b, strlen(b) + 1);
}

static int add_pat(const char *lib, const char *sym, const char *text,
		   uint8_t cat, uint8_t status, uint8_t implied)
{
	struct pat *p;

	if (H.npats >= HOOK_PATS || strlen(lib) >= sizeof(p->lib) ||
	    strlen(sym) >= sizeof(p->sym)) {
		return -EINVAL;
	}
	p = &H.pats[H.npats++];
	memset(p, 0, sizeof(*p));
	strcpy(p->lib, lib);
	strcpy(p->sym, sym);
	snprintf(p->text, sizeof(p->text), "%s", text);
	p->cat = cat;
	p->status = status;
	p->implied = implied;
	return 0;
}

/* Parses spec into H.pats. Returns 1 for "none", 0, or -EINVAL. */
static int parse_spec(const char *spec)
{
	char buf[4096];
	char *save = NULL;
	int n = 0;

	if (!spec || !*spec) {
		spec = "@auto";
	}
	if (strlen(spec) >= sizeof(buf)) {
		return -EINVAL;
	}
	strcpy(buf, spec);
	trim(buf);
	if (strcmp(buf, "none") == 0) {
		return 1;
	}
	for (char *it = strtok_r(buf, ",", &save); it;
	     it = strtok_r(NULL, ",", &save)) {
		trim(it);
		n++;
		if (it[0] == '@') {
			size_t k;
			int is_auto = strcmp(it + 1, "auto") == 0;

			for (k = 0; k < sizeof(presets) / sizeof(presets[0]);
			     k++) {
				const struct preset *ps = &presets[k];

				if (!is_auto && strcmp(it + 1, ps->name) != 0) {
					continue;
				}
				if (add_pat(ps->lib, ps->sym, it,
					    (uint8_t)cat_id(ps->cat),
					    ps->status, is_auto) != 0) {
					return -EINVAL;
				}
				if (!is_auto) {
					break;
				}
			}
			if (!is_auto &&
			    k == sizeof(presets) / sizeof(presets[0])) {
				return -EINVAL;
			}
			continue;
		}
		char *colon = strchr(it, ':');

		if (!colon || colon == it || !colon[1] ||
		    strchr(colon + 1, ':')) {
			return -EINVAL;
		}
		*colon = 0;
		trim(it);
		trim(colon + 1);
		if (!*it || !colon[1]) {
			return -EINVAL;
		}
		char text[300];

		snprintf(text, sizeof(text), "%s:%s", it, colon + 1);
		if (add_pat(it, colon + 1, text, COLL_CAT_CAPI, 0, 0) != 0) {
			return -EINVAL;
		}
	}
	return n > 0 ? 0 : -EINVAL;
}

static int lib_matches(const struct pat *p, const struct obj *o)
{
	return fnmatch(p->lib, o->name, 0) == 0 ||
	       fnmatch(p->lib, o->file, 0) == 0;
}

static int never_hooked(const char *name)
{
	for (size_t k = 0; k < sizeof(never) / sizeof(*never); k++) {
		if (fnmatch(never[k], name, 0) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Returns the pattern that hooks symbol name defined in o, or NULL. */
static struct pat *match(const char *name, const struct obj *o)
{
	if (never_hooked(name)) {
		return NULL;
	}
	for (int i = 0; i < H.npats; i++) {
		struct pat *p = &H.pats[i];

		if (p->live && fnmatch(p->sym, name, 0) == 0 &&
		    lib_matches(p, o)) {
			return p;
		}
	}
	return NULL;
}

/* Returns non-zero when some live pattern's SYMGLOB matches name. */
static int sym_wanted(const char *name)
{
	for (int i = 0; i < H.npats; i++) {
		if (H.pats[i].live && fnmatch(H.pats[i].sym, name, 0) == 0) {
			return 1;
		}
	}
	return 0;
}

/* ---- objects ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static struct obj *obj_at(uintptr_t addr)
{
	for (int i = 0; i < H.nobjs; i++) {
		if (addr >= H.objs[i].xlo && addr < H.objs[i].xhi) {
			return &H.objs[i];
		}
	}
	return NULL;
}

struct collect {
	int added;
};

/* The dynamic section of the object info describes, or NULL: with the
 * load base, what tells one load of an object from another. */
static const void *dyn_of(const struct dl_phdr_info *info)
{
	const void *dyn = NULL;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
			dyn = (const void *)(info->dlpi_addr +
					     info->dlpi_phdr[i].p_vaddr);
		}
	}
	return dyn;
}

static int collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct collect *c = arg;
	const void *dyn = dyn_of(info);
	struct obj *o = NULL;
	struct hook_dyn d;

	(void)size;
	for (int i = 0; i < H.nobjs; i++) {
		if (H.objs[i].base == info->dlpi_addr && H.objs[i].dyn == dyn) {
			H.objs[i].seen = 1;
			return 0;
		}
	}
	if (H.nobjs == H.cap) {
		int cap = H.cap ? 2 * H.cap : 64;
		struct obj *n = realloc(H.objs, (size_t)cap * sizeof(*n));

		if (!n) {
			return 0; /* this object stays unhooked */
		}
		H.objs = n;
		H.cap = cap;
	}
	o = &H.objs[H.nobjs++];
	memset(o, 0, sizeof(*o));
	/* For pin_obj(); the program itself and the vDSO have no name, and
	 * are never unloaded. */
	if (info->dlpi_name && *info->dlpi_name) {
		o->path = strdup(info->dlpi_name);
	}
	o->base = info->dlpi_addr;
	o->dyn = dyn;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	o->seen = 2; /* new: to be patched */
	o->xlo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			if (lo < o->xlo) {
				o->xlo = lo;
			}
			if (lo + ph->p_memsz > o->xhi) {
				o->xhi = lo + ph->p_memsz;
			}
		}
		if (ph->p_type == PT_GNU_RELRO) {
			o->rlo = lo & ~(uintptr_t)4095;
			o->rhi = (lo + ph->p_memsz + 4095) & ~(uintptr_t)4095;
		}
	}
	if (o->xlo == UINTPTR_MAX) {
		o->xlo = o->xhi = 0;
	}
	const char *file = info->dlpi_name && *info->dlpi_name
				   ? base_name(info->dlpi_name)
				   : (o->base == getauxval(AT_SYSINFO_EHDR)
					      ? "linux-vdso.so.1"
					      : H.exe);
	snprintf(o->file, sizeof(o->file), "%s", file);
	if (hook_elf_dyn(o->base, o->phdr, o->phnum, &d) == 0 && d.soname) {
		snprintf(o->name, sizeof(o->name), "%s", d.soname);
	} else {
		snprintf(o->name, sizeof(o->name), "%s", o->file);
	}
	if (((uintptr_t)hook_init >= o->xlo && (uintptr_t)hook_init < o->xhi) ||
	    o->base == getauxval(AT_BASE) ||
	    o->base == getauxval(AT_SYSINFO_EHDR)) {
		o->skip = 1;
	}
	c->added++;
	return 0;
}

/* ---- hooks ----------------------------------------------------------- */

static uint32_t hash_slot(uintptr_t key)
{
	return (uint32_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 49) &
	       (HASH_SIZE - 1);
}

/* Returns the hook index of target, or -1. */
static int hook_find(uintptr_t target)
{
	for (uint32_t h = hash_slot(target), n = 0; n < HASH_SIZE;
	     n++, h = (h + 1) & (HASH_SIZE - 1)) {
		if (hash[h].key == 0) {
			return -1;
		}
		if (hash[h].key == target) {
			return (int)hash[h].idx;
		}
	}
	return -1;
}

/*
 * Picks the stub for a new hook of function name_id of group: the retired
 * stub of the same function when its library was unloaded and is loaded
 * again (so that a program that reloads a library never runs out), else a
 * fresh one, else the oldest retired one. -1 when none is left. A retired
 * stub is reached only through pointers into an unloaded library.
 */
static int reuse(uint32_t name_id, uint32_t group)
{
	uint32_t k = 0;

	while (k < H.ndead && (hook_ents[H.dead[k]].name != name_id ||
			       hook_ents[H.dead[k]].group != group)) {
		k++;
	}
	if (k == H.ndead) {
		if (H.nhooks < HOOK_MAX) {
			return (int)H.nhooks++;
		}
		if (H.ndead == 0) {
			return -1;
		}
		k = 0;
	}
	uint32_t idx = H.dead[k];

	memmove(&H.dead[k], &H.dead[k + 1],
		(H.ndead - k - 1) * sizeof(*H.dead));
	H.ndead--;
	return (int)idx;
}

/* Returns the hook index for target (function name, defined in def,
 * matched by p), creating it; -1 when every stub is taken. */
static int hook_get(uintptr_t target, const char *name, struct obj *def,
		    struct pat *p)
{
	int idx = hook_find(target);
	uint32_t h;

	if (idx >= 0) {
		return idx;
	}
	if (!def->group) {
		char g[300];

		snprintf(g, sizeof(g), "C API (%s)", def->name);
		def->group = strtab_intern(g);
	}
	uint32_t name_id = strtab_intern(name);

	idx = reuse(name_id, def->group);
	if (idx < 0) {
		H.full = 1;
		return -1;
	}
	struct hook_ent *e = &hook_ents[idx];

	e->name = name_id;
	e->group = def->group;
	e->kind = COLL_SPAN;
	e->cat = p->cat;
	int status = p->status;
	for (size_t k = 0; status && k < sizeof(nostatus) / sizeof(*nostatus);
	     k++) {
		if (fnmatch(nostatus[k], name, 0) == 0) {
			status = 0;
		}
	}
	e->flags = status ? COLL_FLAG_STATUS : 0;
	e->arg = 0;
	e->on_error = status ? (uint64_t)COLL_FLAG_ERROR << 24 : 0;
	e->dead = 0;
	hook_real[idx] = (void *)target;
	for (h = hash_slot(target); hash[h].key > 1;
	     h = (h + 1) & (HASH_SIZE - 1)) {
	}
	hash[h].key = target;
	hash[h].idx = (uint32_t)idx;
	p->matched = 1;
	/* Published by the release store of the GOT entry (got_write). */
	return idx;
}

static void *stub(int idx)
{
#if defined(__x86_64__)
	return hook_stub((uint32_t)idx);
#else
	(void)idx;
	return NULL; /* hook_init() never turns hooking on here */
#endif
}

/* Retires the hooks of an unloaded object. */
static void retire(const struct obj *o)
{
	for (uint32_t i = 0; i < H.nhooks; i++) {
		uintptr_t t = (uintptr_t)hook_real[i];

		if (!hook_ents[i].dead && t >= o->xlo && t < o->xhi) {
			hook_ents[i].dead = 1;
			H.dead[H.ndead++] = i;
			for (uint32_t h = hash_slot(t), n = 0;
			     n < HASH_SIZE && hash[h].key != 0;
			     n++, h = (h + 1) & (HASH_SIZE - 1)) {
				if (hash[h].key == t) {
					hash[h].key = 1; /* deleted */
					break;
				}
			}
		}
	}
}

/*
 * Resolves the target of the lazy PLT entry of o for symbol si of d, as
 * the dynamic linker will: dlsym (dlvsym when the reference asks for a
 * version) with RTLD_DEFAULT, called as from o, searches o's own scope.
 * That is the global scope then o's dependencies for most objects, o's
 * dependencies first for an RTLD_DEEPBIND one, and o's namespace for a
 * dlmopen'ed one. An ifunc resolves to the implementation it picks.
 */
static uintptr_t resolve_lazy(const struct obj *o, const struct hook_dyn *d,
			      uint32_t si, const char *name)
{
	const char *ver = hook_elf_version(d, si);
	const void *from = (const void *)o->xlo;
	uintptr_t any = (uintptr_t)call_real(
		R_DLSYM, from, (uintptr_t)RTLD_DEFAULT, (uintptr_t)name, 0, 0);

	if (!ver) {
		return any;
	}
	/* The dynamic linker binds a versioned reference to the first
	 * definition in scope of that version or of none (an interposer's).
	 * dlsym finds the first default definition: when it has no version,
	 * that is the one; otherwise dlvsym finds the version asked for. */
	struct obj *def = any ? obj_at(any) : NULL;
	struct hook_dyn dd;

	if (def && hook_elf_dyn(def->base, def->phdr, def->phnum, &dd) == 0 &&
	    hook_elf_unversioned(def->base, &dd, name)) {
		return any;
	}
	return (uintptr_t)call_real(R_DLVSYM, from, (uintptr_t)RTLD_DEFAULT,
				    (uintptr_t)name, (uintptr_t)ver, 0);
}

/*
 * Is name, defined in def at p, a function? Only functions are hooked: a
 * stub in place of data would be read as the data. The symbol table of
 * def says, else the dynamic linker's nearest symbol to p.
 */
static int is_function(const struct obj *def, const char *name, uintptr_t p)
{
	struct hook_dyn d;
	int type = 0;

	if (hook_elf_dyn(def->base, def->phdr, def->phnum, &d) == 0 &&
	    (uintptr_t)hook_elf_lookup(def->base, &d, name, &type) != p) {
		type = 0; /* another version, or an ifunc's implementation */
	}
	if (type == 0) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;

		if (dladdr1((void *)p, &info, (void **)&sym, RTLD_DL_SYMENT) &&
		    sym && (uintptr_t)info.dli_saddr == p) {
			type = ELF64_ST_TYPE(sym->st_info);
		} else {
			type = STT_FUNC; /* no symbol starts there: code */
		}
	}
	return type == STT_FUNC || type == STT_GNU_IFUNC;
}

/* Marks every pattern that hooks name, defined in def, as matched (the
 * one that created the hook is marked by hook_get). */
static void mark_matched(const char *name, const struct obj *def)
{
	for (int i = 0; i < H.npats; i++) {
		struct pat *p = &H.pats[i];

		if (!p->matched && fnmatch(p->sym, name, 0) == 0 &&
		    lib_matches(p, def)) {
			p->matched = 1;
		}
	}
}

/* Writes v into the GOT entry at slot of o, opening RELRO once. */
static void got_write(struct obj *o, uintptr_t *slot, uintptr_t v, int *opened)
{
	uintptr_t a = (uintptr_t)slot;

	if (a >= o->rlo && a < o->rhi && !*opened) {
		if (mprotect((void *)o->rlo, o->rhi - o->rlo,
			     PROT_READ | PROT_WRITE) != 0) {
			return;
		}
		*opened = 1;
	}
	__atomic_store_n(slot, v, __ATOMIC_RELEASE);
}

static int internal_index(const char *name)
{
	if (name[0] != 'd' && name[0] != '_') {
		return -1;
	}
	for (int i = 0; i < R_COUNT; i++) {
		if (strcmp(name, real_names[i]) == 0) {
			return i;
		}
	}
	return -1;
}

static void patch_rels(struct obj *o, const struct hook_dyn *d,
		       const ElfW(Rela) * rel, size_t size, int *opened)
{
	/* See "Function-pointer identity" above. */
	int glob_dat_calls = d->jmprelsz == 0;

	for (size_t k = 0; rel && k < size / sizeof(*rel); k++) {
		uint32_t type = ELF64_R_TYPE(rel[k].r_info);
		uint32_t si = ELF64_R_SYM(rel[k].r_info);

		if (si == 0 ||
		    (type != R_X86_64_JUMP_SLOT &&
		     (type != R_X86_64_GLOB_DAT || !glob_dat_calls))) {
			continue;
		}
		const ElfW(Sym) *sym = &d->symtab[si];
		const char *name = d->strtab + sym->st_name;
		int ii = internal_index(name);

		if (ii < 0 && !sym_wanted(name)) {
			continue;
		}
		uintptr_t *slot = (uintptr_t *)(o->base + rel[k].r_offset);
		uintptr_t v = *slot;

		if (type == R_X86_64_JUMP_SLOT && v >= o->xlo && v < o->xhi) {
			v = resolve_lazy(o, d, si, name);
		}
		if (!v) {
			continue;
		}
		struct obj *def = obj_at(v);

		if (type == R_X86_64_GLOB_DAT && def == o) {
			continue;
		}
		if (ii >= 0) {
			void *w = wrapper_of(ii);

			if (v == (uintptr_t)w || !def || def->skip) {
				continue;
			}
			/* An entry bound to another interposer of the dl
			 * functions (a preloaded shim) stays: the interposer
			 * reaches glibc's function through dlsym(RTLD_NEXT),
			 * which returns the wrapper, and what it loads is
			 * patched then or at the next dl call (loads_changed).
			 * The sanitizers' runtimes are the exception: their
			 * dlopen calls glibc's from their own code, which
			 * loses the caller's RUNPATH, and the wrapper keeps
			 * it. */
			if (ii <= R_DLCLOSE && v != (uintptr_t)real_dl(ii) &&
			    fnmatch("lib*san.so*", def->name, 0) != 0) {
				continue;
			}
			if (!real[ii]) {
				__atomic_store_n(&real[ii], (void *)v,
						 __ATOMIC_RELEASE);
			}
			got_write(o, slot, (uintptr_t)w, opened);
			continue;
		}
		if (!def || def->skip) {
			continue; /* data, libmxprof itself, or ld.so */
		}
		struct pat *p = match(name, def);

		if (!p) {
			continue;
		}
		int st = ELF64_ST_TYPE(sym->st_info);

		if (type == R_X86_64_GLOB_DAT &&
		    (st == STT_OBJECT || st == STT_TLS || st == STT_COMMON ||
		     (st != STT_FUNC && st != STT_GNU_IFUNC &&
		      !is_function(def, name, v)))) {
			continue;
		}
		int idx = hook_get(v, name, def, p);

		if (idx >= 0) {
			got_write(o, slot, (uintptr_t)stub(idx), opened);
			mark_matched(name, def);
		}
	}
}

static void patch_obj(struct obj *o)
{
	struct hook_dyn d;
	int opened = 0;

	if (o->skip || hook_elf_dyn(o->base, o->phdr, o->phnum, &d) != 0) {
		return;
	}
	patch_rels(o, &d, d.jmprel, d.jmprelsz, &opened);
	patch_rels(o, &d, d.rela, d.relasz, &opened);
	if (opened) {
		mprotect((void *)o->rlo, o->rhi - o->rlo, PROT_READ);
	}
}

/* Is the object with this base and dynamic section still loaded? */
struct still {
	ElfW(Addr) base;
	const void *dyn;
	int found;
};

static int still_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct still *st = arg;

	(void)size;
	st->found = info->dlpi_addr == st->base && dyn_of(info) == st->dyn;
	return st->found;
}

/*
 * Keeps o loaded while it is patched: the snapshot of objects was taken
 * under the dynamic linker's lock, which is released by now, and another
 * thread's dlclose could unmap o while its tables are read and its GOT is
 * written. dlopen(RTLD_NOLOAD) of the name the dynamic linker knows it by
 * takes a reference, checked to be this very load. Returns 0 with *pin
 * the handle to dlclose after the patch (NULL when o is never unloaded,
 * or lives in another dlmopen namespace, where RTLD_NOLOAD does not find
 * it), or -1 when o is gone.
 */
static void unpin(void *h)
{
	int (*close_fn)(void *) = (int (*)(void *))real_dl(R_DLCLOSE);

	if (h && close_fn) {
		close_fn(h);
	}
}

static int pin_obj(const struct obj *o, void **pin)
{
	void *(*open_fn)(const char *, int) =
		(void *(*)(const char *, int))real_dl(R_DLOPEN);
	struct link_map *lm = NULL;
	void *h;

	*pin = NULL;
	if (!o->path || !open_fn || !real_dl(R_DLCLOSE)) {
		return 0;
	}
	h = open_fn(o->path, RTLD_LAZY | RTLD_NOLOAD);
	if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm &&
	    lm->l_addr == o->base && (const void *)lm->l_ld == o->dyn) {
		*pin = h;
		return 0;
	}
	unpin(h);
	struct still st = {o->base, o->dyn, 0};

	dl_iterate_phdr(still_cb, &st);
	return st.found ? 0 : -1;
}

/* The dynamic linker's count of loads and unloads at the last scan. */
static unsigned long long loads_seen;

static int loads_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *n = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		*n = info->dlpi_adds + info->dlpi_subs;
	}
	return 1;
}

/* Has an object been loaded or unloaded since the last scan, maybe by a
 * path that does not pass through the wrappers (another interposer's
 * dlopen)? One callback of dl_iterate_phdr: cheap. */
static int loads_changed(void)
{
	unsigned long long n = 0;

	dl_iterate_phdr(loads_cb, &n);
	return n != loads_seen;
}

/* One pass: forget unloaded objects, learn and patch new ones. Called with
 * the lock held. */
static void scan_locked(void)
{
	struct collect c = {0};

	for (int i = 0; i < H.nobjs; i++) {
		H.objs[i].seen = 0;
	}
	dl_iterate_phdr(loads_cb, &loads_seen);
	dl_iterate_phdr(collect_cb, &c);
	for (int i = 0; i < H.nobjs;) {
		if (!H.objs[i].seen) {
			retire(&H.objs[i]);
			free(H.objs[i].path);
			H.objs[i] = H.objs[--H.nobjs];
			continue;
		}
		i++;
	}
	if (!c.added) {
		return;
	}
	for (int i = 0; i < H.npats; i++) {
		struct pat *p = &H.pats[i];

		for (int k = 0; !p->live && k < H.nobjs; k++) {
			p->live = !H.objs[k].skip && lib_matches(p, &H.objs[k]);
		}
	}
	for (int i = 0; i < H.nobjs; i++) {
		struct obj *o = &H.objs[i];
		void *pin = NULL;

		if (o->seen != 2) {
			continue;
		}
		o->seen = 1;
		if (o->skip || pin_obj(o, &pin) != 0) {
			continue;
		}
		patch_obj(o);
		unpin(pin);
	}
}

/* Scans now, or leaves it to the thread that holds the lock. */
static void scan(void)
{
	if (!H.on) {
		return;
	}
	__atomic_store_n(&scan_pending, 1, __ATOMIC_SEQ_CST);
	do {
		if (pthread_mutex_trylock(&lock) != 0) {
			return;
		}
		__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
		scan_locked();
		dlerror(); /* our failed lookups are not the program's */
		pthread_mutex_unlock(&lock);
	} while (__atomic_load_n(&scan_pending, __ATOMIC_SEQ_CST));
}

/* Returns a stub for the function p that dlsym found under name, or p. */
static void *wrap_pointer(void *p, const char *name)
{
	void *r = p;

	if (!p || !H.on || !name) {
		return p;
	}
	int ii = internal_index(name);

	if (ii >= 0 && ii <= R_DLCLOSE && p == real_dl(ii)) {
		return wrapper_of(ii);
	}
	if (pthread_mutex_trylock(&lock) != 0) {
		return p;
	}
	if (loads_changed()) {
		scan_locked();
	}
	struct obj *def = obj_at((uintptr_t)p);

	if (def && !def->skip && !never_hooked(name)) {
		struct pat *pt = NULL;

		for (int i = 0; i < H.npats && !pt; i++) {
			if (fnmatch(H.pats[i].sym, name, 0) == 0 &&
			    lib_matches(&H.pats[i], def)) {
				pt = &H.pats[i];
			}
		}
		if (pt && is_function(def, name, (uintptr_t)p)) {
			int idx = hook_get((uintptr_t)p, name, def, pt);

			if (idx >= 0) {
				r = stub(idx);
				mark_matched(name, def);
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- the wrappers ------------------------------------------------------ */

/*
 * dlopen, dlmopen, dlsym, dlvsym, dlclose: glibc's functions, called as
 * from the caller, plus patching of what was loaded and wrapping of
 * matching function pointers. Not hot. Same thread-safety as glibc's.
 *
 * They are static and reach callers only through patched GOT entries,
 * never by exporting the names: an exported dlsym would also be what a
 * sanitizer runtime calls while it initialises, before this (possibly
 * instrumented) code may run, and a program linked with libmxprof.a
 * would interpose them on every other object.
 */
static void *hook_dlopen(const char *file, int mode)
{
	void *h = call_real(R_DLOPEN, __builtin_return_address(0),
			    (uintptr_t)file, (uintptr_t)mode, 0, 0);

	if (h) {
		scan();
	}
	return h;
}

static void *hook_dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h =
		call_real(R_DLMOPEN, __builtin_return_address(0),
			  (uintptr_t)lmid, (uintptr_t)file, (uintptr_t)mode, 0);

	if (h) {
		scan();
	}
	return h;
}

static void *hook_dlsym(void *handle, const char *name)
{
	void *p = call_real(R_DLSYM, __builtin_return_address(0),
			    (uintptr_t)handle, (uintptr_t)name, 0, 0);

	return wrap_pointer(p, name);
}

static void *hook_dlvsym(void *handle, const char *name, const char *version)
{
	void *p = call_real(R_DLVSYM, __builtin_return_address(0),
			    (uintptr_t)handle, (uintptr_t)name,
			    (uintptr_t)version, 0);

	return wrap_pointer(p, name);
}

static int hook_dlclose(void *handle)
{
	int (*fn)(void *) = (int (*)(void *))real_dl(R_DLCLOSE);
	int rc = fn ? fn(handle) : -1;

	if (rc == 0) {
		scan();
	}
	return rc;
}

/*
 * The unwinder's entry points and __cxa_begin_catch, patched into every
 * GOT that refers to them (not exported). An exception walks the stack
 * through return addresses, so the real ones go back first; the catch
 * (or a failed search) re-arms the hooked frames that survive.
 */
static int wrap_raise(void *exc)
{
	int (*fn)(void *) = (int (*)(void *))real[R_RAISE];
	int rc;

	hook_rt_unwind_begin();
	rc = fn(exc);
	hook_rt_unwind_end(0);
	return rc;
}

static int wrap_rethrow(void *exc)
{
	int (*fn)(void *) = (int (*)(void *))real[R_RETHROW];
	int rc;

	hook_rt_unwind_begin();
	rc = fn(exc);
	hook_rt_unwind_end(0);
	return rc;
}

static int wrap_forced(void *exc, void *stop, void *arg)
{
	int (*fn)(void *, void *, void *) =
		(int (*)(void *, void *, void *))real[R_FORCED];
	int rc;

	hook_rt_unwind_begin();
	rc = fn(exc, stop, arg);
	hook_rt_unwind_end(0);
	return rc;
}

static void *wrap_begin_catch(void *exc)
{
	void *(*fn)(void *) = (void *(*)(void *))real[R_BEGIN_CATCH];
	void *r = fn(exc);

	/* The catcher's stack pointer: hooked frames below it are gone. */
	hook_rt_unwind_end((uintptr_t)__builtin_dwarf_cfa());
	return r;
}

static void *wrapper_of(int i)
{
	switch (i) {
	case R_DLOPEN:
		return (void *)hook_dlopen;
	case R_DLMOPEN:
		return (void *)hook_dlmopen;
	case R_DLSYM:
		return (void *)hook_dlsym;
	case R_DLVSYM:
		return (void *)hook_dlvsym;
	case R_DLCLOSE:
		return (void *)hook_dlclose;
	case R_RAISE:
		return (void *)wrap_raise;
	case R_RETHROW:
		return (void *)wrap_rethrow;
	case R_FORCED:
		return (void *)wrap_forced;
	case R_BEGIN_CATCH:
		return (void *)wrap_begin_catch;
	default:
		return NULL;
	}
}

/* ---- life cycle -------------------------------------------------------- */

static const char syntax[] =
	"LIBGLOB:SYMGLOB[,...] (fnmatch globs on the defining library's "
	"file name and the symbol), @auto, @mxnet, @cudart, @cublas, @cudnn, "
	"@nccl, or none";

int hook_init(const char *spec)
{
	int rc;

	rc = parse_spec(spec);
	if (rc < 0) {
		fprintf(stderr,
			"mxprof: MXPROF_HOOK='%s' is not valid; accepted: %s; "
			"C API hooking is off\n",
			spec, syntax);
		H.npats = 0;
		return rc;
	}
	if (rc == 1) {
		return 0;
	}
#if !defined(__x86_64__)
	fprintf(stderr, "mxprof: C API hooking is not available on this "
			"architecture\n");
	H.npats = 0;
	return -ENOTSUP;
#else
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	snprintf(H.exe, sizeof(H.exe), "%.255s", base_name(exe));
	for (int i = 0; i < R_DLCLOSE + 1; i++) {
		real_dl(i);
	}
	hook_rt_init();
	H.on = 1;
	scan();
	return 0;
#endif
}

void hook_finish(void)
{
	uint64_t over = hook_rt_overflows();

	for (int i = 0; i < H.npats; i++) {
		if (!H.pats[i].implied && !H.pats[i].matched) {
			fprintf(stderr,
				"mxprof: MXPROF_HOOK pattern '%s' matched no "
				"function\n",
				H.pats[i].text);
		}
	}
	if (H.full) {
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

void hook_after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	memcpy(&lock, &fresh, sizeof(lock));
	__atomic_store_n(&scan_pending, 0, __ATOMIC_SEQ_CST);
}

/* The hook engine's part in the collector's life cycle: the lines at exit
 * and the fork handler. */
const struct coll_source hook_source = {
	.name = "hook",
	.finish = hook_finish,
	.fork_rank = LOCK_HOOK,
	.fork_child = hook_after_fork_child,
};
