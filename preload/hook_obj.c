/*
 * hook_obj.c - the loaded objects as the patcher knows them.
 *
 * The list comes from dl_iterate_phdr. An object is known by its load
 * base, its dynamic section and its file name together: another library
 * loaded where an unloaded one was is a new object, even one built from
 * the same source with the same layout, and the
 * program itself and the vDSO, which have no name, are told apart from
 * everything else by their addresses. Each entry keeps what the patcher
 * needs: the executable range (which object defines an address), the
 * PT_GNU_RELRO range (pages to open for a full-RELRO GOT), and the names
 * that LIBGLOB is matched against.
 *
 * Unloading: the list is read under the dynamic linker's lock, but an
 * object is patched after that lock is released, so each new object is
 * pinned with dlopen(RTLD_NOLOAD) while its tables are read and its GOT is
 * written (hook_obj_pin()). An object that has gone from the list is
 * forgotten and its hooks are retired (hook_table.c).
 *
 * Everything here runs under the patcher's lock (hook_dl.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <dlfcn.h>

#include "source.h"
#include "hook.h"

static struct hook_obj *objs;
static int nobjs, cap;
static char exe[256]; /* the program's file name */

/* The dynamic linker's count of loads and unloads at the last sync. */
static unsigned long long loads_seen;

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void hook_obj_set_exe(void)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	path[n > 0 ? n : 0] = 0;
	snprintf(exe, sizeof(exe), "%.255s", base_name(path));
}

int hook_obj_count(void)
{
	return nobjs;
}

struct hook_obj *hook_obj_nth(int i)
{
	return &objs[i];
}

struct hook_obj *hook_obj_at(uintptr_t addr)
{
	for (int i = 0; i < nobjs; i++) {
		if (addr >= objs[i].xlo && addr < objs[i].xhi) {
			return &objs[i];
		}
	}
	return NULL;
}

uint32_t hook_obj_group(struct hook_obj *o)
{
	if (!o->group) {
		char g[300];

		snprintf(g, sizeof(g), "C API (%s)", o->name);
		o->group = strtab_intern(g);
	}
	return o->group;
}

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

/* Fills o's ranges from its program headers. */
static void ranges(struct hook_obj *o, const struct dl_phdr_info *info)
{
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
}

/* Looks for libstdc++'s __cxa_demangle in new object o, whose dynamic
 * section is d, until one has it, and hands it to hook_demangle.c. Called
 * from collect_cb(), inside dl_iterate_phdr(): the loader's lock keeps o
 * mapped (after it returns, another thread's dlclose() may unmap it). */
static void find_demangler(const struct hook_obj *o, const struct hook_dyn *d)
{
	int type = 0;
	void *p;

	if (o->skip || hook_demangle_ready()) {
		return;
	}
	p = hook_elf_lookup(o->base, d, "__cxa_demangle", &type);
	if (p && type == STT_FUNC) {
		hook_demangle_use((hook_demangle_fn)(uintptr_t)p);
	}
}

static int collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *added = arg;
	const void *dyn = dyn_of(info);
	struct hook_obj *o = NULL;
	struct hook_dyn d;

	(void)size;
	const char *name = info->dlpi_name ? info->dlpi_name : "";

	for (int i = 0; i < nobjs; i++) {
		if (objs[i].base == info->dlpi_addr && objs[i].dyn == dyn &&
		    strcmp(objs[i].path ? objs[i].path : "", name) == 0) {
			objs[i].seen = 1;
			return 0;
		}
	}
	if (nobjs == cap) {
		int ncap = cap ? 2 * cap : 64;
		struct hook_obj *n = realloc(objs, (size_t)ncap * sizeof(*n));

		if (!n) {
			return 0; /* this object stays unhooked */
		}
		objs = n;
		cap = ncap;
	}
	o = &objs[nobjs++];
	memset(o, 0, sizeof(*o));
	/* For hook_obj_pin(); the program itself and the vDSO have no name,
	 * and are never unloaded. */
	if (info->dlpi_name && *info->dlpi_name) {
		o->path = strdup(info->dlpi_name);
	}
	o->base = info->dlpi_addr;
	o->dyn = dyn;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	o->seen = 2; /* new: to be patched */
	ranges(o, info);
	const char *file = info->dlpi_name && *info->dlpi_name
				   ? base_name(info->dlpi_name)
				   : (o->base == getauxval(AT_SYSINFO_EHDR)
					      ? "linux-vdso.so.1"
					      : exe);
	snprintf(o->file, sizeof(o->file), "%s", file);
	int have_dyn = hook_elf_dyn(o->base, o->phdr, o->phnum, &d) == 0;
	if (have_dyn && d.soname) {
		snprintf(o->name, sizeof(o->name), "%s", d.soname);
	} else {
		snprintf(o->name, sizeof(o->name), "%s", o->file);
	}
	/* libmxprof itself (any of its functions tells which object it is),
	 * the dynamic linker and the vDSO are never patched. */
	if (((uintptr_t)hook_obj_sync >= o->xlo &&
	     (uintptr_t)hook_obj_sync < o->xhi) ||
	    o->base == getauxval(AT_BASE) ||
	    o->base == getauxval(AT_SYSINFO_EHDR)) {
		o->skip = 1;
	}
	if (have_dyn) {
		find_demangler(o, &d);
	}
	(*added)++;
	return 0;
}

static int loads_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *n = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		*n = info->dlpi_adds + info->dlpi_subs;
	}
	return 1;
}

int hook_obj_loads_changed(void)
{
	unsigned long long n = 0;

	dl_iterate_phdr(loads_cb, &n);
	return n != loads_seen;
}

int hook_obj_sync(void)
{
	int added = 0;

	for (int i = 0; i < nobjs; i++) {
		objs[i].seen = 0;
	}
	dl_iterate_phdr(loads_cb, &loads_seen);
	dl_iterate_phdr(collect_cb, &added);
	for (int i = 0; i < nobjs;) {
		if (!objs[i].seen) {
			hook_table_retire(objs[i].xlo, objs[i].xhi);
			free(objs[i].path);
			objs[i] = objs[--nobjs];
			continue;
		}
		i++;
	}
	return added;
}

/* Is the object with this base and dynamic section still loaded? */
struct still {
	ElfW(Addr) base;
	const void *dyn;
	const char *path;
	int found;
};

/* The same object: the same base, dynamic section and file. Two builds of
 * one source may load at the same address with the same layout, one after
 * the other, so the address alone does not tell them apart. */
static int still_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct still *st = arg;

	(void)size;
	st->found = info->dlpi_addr == st->base && dyn_of(info) == st->dyn &&
		    info->dlpi_name && strcmp(info->dlpi_name, st->path) == 0;
	return st->found;
}

void hook_obj_unpin(void *pin)
{
	int (*close_fn)(void *) =
		(int (*)(void *))hook_orig_dl(HOOK_ORIG_DLCLOSE);

	if (pin && close_fn) {
		close_fn(pin);
	}
}

/* Set once a dlmopen made a namespace other than the base one: only then
 * can a loaded object be one that RTLD_NOLOAD does not find by its name. */
static int other_namespaces;

void hook_obj_namespace_made(void)
{
	__atomic_store_n(&other_namespaces, 1, __ATOMIC_RELAXED);
}

int hook_obj_pin(const struct hook_obj *o, void **pin)
{
	void *(*open_fn)(const char *, int) =
		(void *(*)(const char *, int))hook_orig_dl(HOOK_ORIG_DLOPEN);
	struct link_map *lm = NULL;
	void *h;

	*pin = NULL;
	if (!o->path || !open_fn || !hook_orig_dl(HOOK_ORIG_DLCLOSE)) {
		return 0;
	}
	h = open_fn(o->path, RTLD_LAZY | RTLD_NOLOAD);
	if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm &&
	    lm->l_addr == o->base && (const void *)lm->l_ld == o->dyn) {
		*pin = h;
		return 0;
	}
	hook_obj_unpin(h);
	/* In the base namespace, not found means gone or going: another
	 * thread's dlclose ran, and may have loaded it again at the same
	 * place since, where an unpinned patch would race its next dlclose
	 * (seen in hook_forkrace). */
	if (!__atomic_load_n(&other_namespaces, __ATOMIC_RELAXED)) {
		return -1;
	}
	/* Not to be had by its name (another namespace): patched unpinned
	 * while it is still the object listed. */
	struct still st = {o->base, o->dyn, o->path, 0};

	dl_iterate_phdr(still_cb, &st);
	return st.found ? 0 : -1;
}
