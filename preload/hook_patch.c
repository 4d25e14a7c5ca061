/*
 * hook_patch.c - GOT patching: routing one object's calls of matching
 * functions through the stubs, and its calls of the dl family and the
 * unwinder through mxprof's wrappers.
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
 * Everything here runs under the patcher's lock (hook_dl.c), with the
 * object pinned (hook_obj.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <dlfcn.h>

#include "source.h"
#include "hook.h"

/* The stub of hook idx, as a GOT entry or a pointer holds it. */
static void *stub(int idx)
{
#if defined(__x86_64__)
	return hook_stub((uint32_t)idx);
#else
	(void)idx;
	return NULL; /* hook_init() never turns hooking on here */
#endif
}

void *hook_patch_stub_for(uintptr_t target, const char *name,
			  struct hook_obj *def, const struct hook_match *m)
{
	int idx = hook_table_find(target);

	if (idx < 0) {
		uint32_t group = hook_obj_group(def);
		uint32_t id = 0;
		char op[256];

		if (m->naming == HOOK_NAMING_ATEN &&
		    hook_aten_name(def, name, op, sizeof(op)) == 0) {
			id = strtab_intern(op);
			group = strtab_intern("aten");
			hook_torch_attach(def);
		}
		if (!id) {
			char *dem = hook_demangle(name);

			id = strtab_intern(dem ? dem : name);
			free(dem);
		}
		idx = hook_table_add(target, id, group, m->cat, m->status);
	}
	if (idx < 0) {
		return NULL;
	}
	hook_spec_mark_matched(name, def->name, def->file);
	return stub(idx);
}

/*
 * Resolves the target of the lazy PLT entry of o for symbol si of d, as
 * the dynamic linker will: dlsym (dlvsym when the reference asks for a
 * version) with RTLD_DEFAULT, called as from o, searches o's own scope.
 * That is the global scope then o's dependencies for most objects, o's
 * dependencies first for an RTLD_DEEPBIND one, and o's namespace for a
 * dlmopen'ed one. An ifunc resolves to the implementation it picks.
 */
static uintptr_t resolve_lazy(const struct hook_obj *o,
			      const struct hook_dyn *d, uint32_t si,
			      const char *name)
{
	const char *ver = hook_elf_version(d, si);
	const void *from = (const void *)o->xlo;
	uintptr_t any = (uintptr_t)hook_orig_call(HOOK_ORIG_DLSYM, from,
						  (uintptr_t)RTLD_DEFAULT,
						  (uintptr_t)name, 0, 0);

	if (!ver) {
		return any;
	}
	/* The dynamic linker binds a versioned reference to the first
	 * definition in scope of that version or of none (an interposer's).
	 * dlsym finds the first default definition: when it has no version,
	 * that is the one; otherwise dlvsym finds the version asked for. */
	struct hook_obj *def = any ? hook_obj_at(any) : NULL;
	struct hook_dyn dd;

	if (def && hook_elf_dyn(def->base, def->phdr, def->phnum, &dd) == 0 &&
	    hook_elf_unversioned(def->base, &dd, name)) {
		return any;
	}
	return (uintptr_t)hook_orig_call(HOOK_ORIG_DLVSYM, from,
					 (uintptr_t)RTLD_DEFAULT,
					 (uintptr_t)name, (uintptr_t)ver, 0);
}

/*
 * v, where a GOT entry for symbol si (name) of d leads, lies in def. When
 * def's symbol at v is undefined, v is def's own PLT entry for it: a non-PIE
 * executable that takes a function's address makes its PLT entry the
 * function's canonical address, and binds every reference that is not a
 * call (and dlsym) there. That entry jumps through def's GOT, which is
 * patched too: a stub whose real function were v would call itself. So the
 * target is found as the dynamic linker binds def's own call: the first
 * definition after def (dlsym or dlvsym with RTLD_NEXT, as from def).
 * Only the program itself has such entries (shared objects are position
 * independent), and it is never unloaded, so calling as from it is safe
 * although it is not pinned. Returns the target, or 0 when there is none.
 */
static uintptr_t past_canonical_plt(const struct hook_dyn *d, uint32_t si,
				    const char *name, uintptr_t v,
				    const struct hook_obj *def)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	/* dladdr names an undefined symbol that has an address: exactly a
	 * canonical PLT entry. */
	if (!def || def->skip || def->path ||
	    !dladdr1((void *)v, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    (uintptr_t)info.dli_saddr != v || sym->st_shndx != SHN_UNDEF) {
		return v;
	}
	const char *ver = hook_elf_version(d, si);
	const void *from = (const void *)def->xlo;
	uintptr_t t;

	if (ver) {
		t = (uintptr_t)hook_orig_call(
			HOOK_ORIG_DLVSYM, from, (uintptr_t)RTLD_NEXT,
			(uintptr_t)name, (uintptr_t)ver, 0);
	} else {
		t = (uintptr_t)hook_orig_call(HOOK_ORIG_DLSYM, from,
					      (uintptr_t)RTLD_NEXT,
					      (uintptr_t)name, 0, 0);
	}
	return t >= def->xlo && t < def->xhi ? 0 : t;
}

int hook_patch_is_function(const struct hook_obj *def, const char *name,
			   uintptr_t p)
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

/* Writes v into the GOT entry at slot of o, opening RELRO once. */
static void got_write(struct hook_obj *o, uintptr_t *slot, uintptr_t v,
		      int *opened)
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

/*
 * The GOT entry at slot of o, bound to v (defined in def), names one of
 * the functions mxprof wraps (ii, see hook_orig.c): points it at the
 * wrapper, unless it is bound elsewhere on purpose.
 */
static void patch_wrapped(struct hook_obj *o, uintptr_t *slot, uintptr_t v,
			  const struct hook_obj *def, int ii, void *wrapper,
			  int *opened)
{
	if (v == (uintptr_t)wrapper || !def || def->skip) {
		return;
	}
	/* An entry bound to another interposer of the dl functions (a
	 * preloaded shim) stays: the interposer reaches glibc's function
	 * through dlsym(RTLD_NEXT), which returns the wrapper, and what it
	 * loads is patched then or at the next dl call (loads_changed). The
	 * sanitizers' runtimes are the exception: their dlopen calls glibc's
	 * from their own code, which loses the caller's RUNPATH, and the
	 * wrapper keeps it. */
	if (ii <= HOOK_ORIG_DLCLOSE && v != (uintptr_t)hook_orig_dl(ii) &&
	    !hook_glob_match("lib*san.so*", def->name)) {
		return;
	}
	hook_orig_note(ii, (void *)v);
	got_write(o, slot, (uintptr_t)wrapper, opened);
}

static void patch_rels(struct hook_obj *o, const struct hook_dyn *d,
		       const ElfW(Rela) * rel, size_t size,
		       void *const wrappers[HOOK_ORIG_COUNT], int *opened)
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
		int ii = hook_orig_index(name);

		if (ii < 0 && !hook_spec_wanted(name)) {
			continue;
		}
		uintptr_t *slot = (uintptr_t *)(o->base + rel[k].r_offset);
		uintptr_t v = *slot;

		if (type == R_X86_64_JUMP_SLOT && v >= o->xlo && v < o->xhi) {
			v = resolve_lazy(o, d, si, name);
		}
		struct hook_obj *def = v ? hook_obj_at(v) : NULL;

		if (def && v >= def->xlo && v < def->xhi) {
			v = past_canonical_plt(d, si, name, v, def);
			def = v ? hook_obj_at(v) : NULL;
		}
		if (!v) {
			continue;
		}

		if (type == R_X86_64_GLOB_DAT && def == o) {
			continue;
		}
		if (ii >= 0) {
			patch_wrapped(o, slot, v, def, ii, wrappers[ii],
				      opened);
			continue;
		}
		struct hook_match m;

		if (!def || def->skip ||
		    !hook_spec_match(name, def->name, def->file, &m)) {
			continue; /* data, libmxprof itself, ld.so, unwanted */
		}
		int st = ELF64_ST_TYPE(sym->st_info);

		if (type == R_X86_64_GLOB_DAT &&
		    (st == STT_OBJECT || st == STT_TLS || st == STT_COMMON ||
		     (st != STT_FUNC && st != STT_GNU_IFUNC &&
		      !hook_patch_is_function(def, name, v)))) {
			continue;
		}
		void *s = hook_patch_stub_for(v, name, def, &m);

		if (s) {
			got_write(o, slot, (uintptr_t)s, opened);
		}
	}
}

void hook_patch_obj(struct hook_obj *o, void *const wrappers[HOOK_ORIG_COUNT])
{
	struct hook_dyn d;
	int opened = 0;

	if (o->skip || hook_elf_dyn(o->base, o->phdr, o->phnum, &d) != 0) {
		return;
	}
	patch_rels(o, &d, d.jmprel, d.jmprelsz, wrappers, &opened);
	patch_rels(o, &d, d.rela, d.relasz, wrappers, &opened);
	if (opened) {
		mprotect((void *)o->rlo, o->rhi - o->rlo, PROT_READ);
	}
}
