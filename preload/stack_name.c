/*
 * stack_name.c - names of native frames, on the drain thread.
 *
 * A return address is named by the function that contains the call, so
 * the address looked up is one before it. dladdr() knows only the dynamic
 * symbols (what an object exports): an executable exports nothing and a
 * library not its static functions, so the object's own file is read once
 * for its full symbol table (.symtab, left in by any build that was not
 * stripped), and its functions kept sorted by address. A stripped object
 * falls back to dladdr(), and an address no symbol covers is named
 * "object+0xoffset".
 *
 * A frame is the user's own code unless its object is mxprof, CPython's
 * interpreter, one of NVIDIA's libraries (libcu*, libnv*), or comes from
 * the system's or a Python installation's folders (/lib, /usr/lib,
 * /usr/bin, site-packages, dist-packages, a pyenv's lib/): the call-site
 * tables name the innermost user frame.
 *
 * The drain names a stack's frames soon after it was captured, while the
 * objects are loaded: an object unloaded in between gives "0x..." names.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"
#include "hook.h"
#include "stack.h"

struct fn_sym {
	uintptr_t lo, hi; /* offsets from the object's load base */
	uint32_t name;	  /* into strs */
};

struct obj_syms {
	uintptr_t base;
	char fname[512]; /* dladdr's name, with base the object's identity */
	char path[512];
	struct fn_sym *fns;
	size_t nfns;
	char *strs;
	int user;
};

#define OBJ_MAX 512
static struct obj_syms *objs[OBJ_MAX];
static size_t nobjs;

static int cmp_fn(const void *a, const void *b)
{
	const struct fn_sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Reads the functions of the ELF file at path (its .symtab). */
static void read_symtab(struct obj_syms *o, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *map;

	if (fd < 0) {
		return;
	}
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr)) ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
			0)) == MAP_FAILED) {
		close(fd);
		return;
	}
	close(fd);
	size_t size = (size_t)st.st_size;
	const unsigned char *b = map;
	const ElfW(Ehdr) *eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size) {
		munmap(map, size);
		return;
	}
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(b + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum && !o->fns; i++) {
		if (sh[i].sh_type != SHT_SYMTAB ||
		    sh[i].sh_link >= eh->e_shnum) {
			continue;
		}
		const ElfW(Shdr) *ss = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > size ||
		    ss->sh_offset + ss->sh_size > size || ss->sh_size == 0) {
			continue;
		}
		const ElfW(Sym) *sym = (const ElfW(Sym) *)(b + sh[i].sh_offset);
		size_t nsym = sh[i].sh_size / sizeof(ElfW(Sym));
		const char *str = (const char *)(b + ss->sh_offset);
		size_t n = 0;
		for (size_t k = 0; k < nsym; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
			    sym[k].st_value && sym[k].st_name < ss->sh_size) {
				n++;
			}
		}
		o->fns = calloc(n ? n : 1, sizeof(*o->fns));
		o->strs = malloc(ss->sh_size + 1);
		if (!o->fns || !o->strs) {
			free(o->fns);
			free(o->strs);
			o->fns = NULL;
			o->strs = NULL;
			break;
		}
		memcpy(o->strs, str, ss->sh_size);
		o->strs[ss->sh_size] = 0;
		for (size_t k = 0; k < nsym; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
			    !sym[k].st_value || sym[k].st_name >= ss->sh_size) {
				continue;
			}
			struct fn_sym *f = &o->fns[o->nfns++];
			f->lo = sym[k].st_value;
			f->hi = sym[k].st_value +
				(sym[k].st_size ? sym[k].st_size : 1);
			f->name = sym[k].st_name;
		}
		qsort(o->fns, o->nfns, sizeof(*o->fns), cmp_fn);
	}
	munmap(map, size);
}

static int path_is_user(const char *path, uintptr_t ip)
{
	static const char *const sys[] = {"/lib/",
					  "/lib64/",
					  "/usr/lib/",
					  "/usr/lib64/",
					  "/usr/bin/",
					  "/bin/",
					  "/usr/local/lib/python"};
	if (stack_in_runtime(ip)) {
		return 0;
	}
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		if (!strncmp(path, sys[i], strlen(sys[i]))) {
			return 0;
		}
	}
	/* NVIDIA's libraries, wherever the toolkit is: libcuda, libcudart,
	 * libcupti, libcublas, libcudnn, libnvrtc, libnvToolsExt... */
	const char *file = strrchr(path, '/');
	file = file ? file + 1 : path;
	if (!strncmp(file, "libcu", 5) || !strncmp(file, "libnv", 5)) {
		return 0;
	}
	return !strstr(path, "/site-packages/") &&
	       !strstr(path, "/dist-packages/") && !strstr(path, "/.pyenv/");
}

/* The object of info, which holds address ip. */
static struct obj_syms *obj_of(const Dl_info *info, uintptr_t ip)
{
	uintptr_t base = (uintptr_t)info->dli_fbase;
	char path[512];

	const char *fname = info->dli_fname ? info->dli_fname : "";

	/* By base and name: a library unloaded and another loaded at the
	 * same base is another object, with other symbols. */
	for (size_t i = 0; i < nobjs; i++) {
		if (objs[i]->base == base && !strcmp(objs[i]->fname, fname)) {
			return objs[i];
		}
	}
	if (nobjs == OBJ_MAX) {
		return NULL;
	}
	struct obj_syms *o = calloc(1, sizeof(*o));
	if (!o) {
		return NULL;
	}
	o->base = base;
	snprintf(o->fname, sizeof(o->fname), "%s", fname);
	if (info->dli_fname && info->dli_fname[0]) {
		snprintf(path, sizeof(path), "%s", info->dli_fname);
	} else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = 0;
	}
	/* The main program's dli_fname is argv[0]'s: the real file is
	 * /proc/self/exe. */
	if (!strchr(path, '/')) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = 0;
	}
	snprintf(o->path, sizeof(o->path), "%s", path);
	read_symtab(o, path);
	o->user = path_is_user(path, ip);
	objs[nobjs++] = o;
	return o;
}

static const struct fn_sym *fn_at(const struct obj_syms *o, uintptr_t off)
{
	size_t lo = 0, hi = o->nfns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->fns[mid].lo <= off) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	/* The last function starting at or before off. */
	if (lo > 0 && off < o->fns[lo - 1].hi) {
		return &o->fns[lo - 1];
	}
	return NULL;
}

static void put_name(char *name, size_t nlen, const char *sym)
{
#ifdef MXPROF_WITH_HOOK
	char *d = hook_demangle(sym);

	snprintf(name, nlen, "%s", d ? d : sym);
	free(d);
#else
	snprintf(name, nlen, "%s", sym);
#endif
}

int stack_name(uint64_t w, char *name, size_t nlen, char *cat, size_t clen,
	       int *user)
{
	Dl_info info;
	uintptr_t ip = (uintptr_t)w - 1;

	if (w & STACK_PY) {
		snprintf(cat, clen, "python");
		return stack_py_name(w, name, nlen, user);
	}
	if (!dladdr((void *)ip, &info)) {
		return -1;
	}
	struct obj_syms *o = obj_of(&info, ip);
	const char *base = o ? strrchr(o->path, '/') : NULL;
	snprintf(cat, clen, "%s",
		 base ? base + 1 : (info.dli_fname ? info.dli_fname : "?"));
	*user = o ? o->user : 0;
	const struct fn_sym *f = o ? fn_at(o, ip - o->base) : NULL;
	if (f) {
		put_name(name, nlen, o->strs + f->name);
	} else if (info.dli_sname) {
		put_name(name, nlen, info.dli_sname);
	} else {
		snprintf(name, nlen, "%s+0x%llx", cat,
			 (unsigned long long)(ip - (uintptr_t)info.dli_fbase));
	}
	return 0;
}
