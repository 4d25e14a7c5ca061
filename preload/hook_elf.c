/*
 * hook_elf.c - reading a loaded object's dynamic section: the symbol and
 * string tables, its RELA relocations, and a GNU/SysV hash lookup used to
 * find glibc's own dl* functions when libmxprof interposes them.
 *
 * The dynamic linker has already relocated d_ptr values on x86-64, but not
 * everywhere (the vDSO, some architectures), so a pointer below the load
 * base is taken as an offset from it.
 */
#include <errno.h>
#include <string.h>

#include "hook.h"

static const void *dyn_ptr(ElfW(Addr) base, ElfW(Addr) v)
{
	if (v < base) {
		v += base;
	}
	return (const void *)v;
}

int hook_elf_dyn(ElfW(Addr) base, const ElfW(Phdr) * phdr, int phnum,
		 struct hook_dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;
	ElfW(Addr) soname = 0;
	int have_soname = 0;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < phnum; i++) {
		if (phdr[i].p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(base + phdr[i].p_vaddr);
		}
	}
	if (!dyn) {
		return -ENOENT;
	}
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_RELA:
			d->rela = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->relasz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->jmprelsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			if (dyn->d_un.d_val != DT_RELA) {
				return -ENOENT;
			}
			break;
		case DT_GNU_HASH:
			d->gnuhash = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_HASH:
			d->sysvhash = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_VERSYM:
			d->versym = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_VERNEED:
			d->verneed = dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_VERNEEDNUM:
			d->verneednum = dyn->d_un.d_val;
			break;
		case DT_SONAME:
			soname = dyn->d_un.d_val;
			have_soname = 1;
			break;
		default:
			break;
		}
	}
	if (!d->symtab || !d->strtab) {
		return -ENOENT;
	}
	if (have_soname) {
		d->soname = d->strtab + soname;
	}
	return 0;
}

const char *hook_elf_version(const struct hook_dyn *d, uint32_t si)
{
	/* Indexes 0 and 1 are "local" and "global": no version asked. */
	uint16_t want = d->versym ? d->versym[si] & 0x7fff : 0;
	const char *vn = (const char *)d->verneed;

	if (want < 2 || !vn) {
		return NULL;
	}
	for (size_t i = 0; i < d->verneednum; i++) {
		const ElfW(Verneed) *need = (const ElfW(Verneed) *)vn;
		const char *ax = vn + need->vn_aux;

		for (unsigned k = 0; k < need->vn_cnt; k++) {
			const ElfW(Vernaux) *aux = (const ElfW(Vernaux) *)ax;

			if (aux->vna_other == want) {
				return d->strtab + aux->vna_name;
			}
			ax += aux->vna_next;
		}
		vn += need->vn_next;
	}
	return NULL;
}

/* See hook_elf_lookup(); also stores the symbol's type in *type and its
 * index in *idx. */
static void *lookup(ElfW(Addr) base, const struct hook_dyn *d, const char *name,
		    int *type, uint32_t *idx);

/* Returns non-zero when symbol i of d is a default-version definition of
 * name. */
static int sym_is(const struct hook_dyn *d, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &d->symtab[i];

	if (s->st_shndx == SHN_UNDEF || s->st_value == 0) {
		return 0;
	}
	if (d->versym && (d->versym[i] & 0x8000)) {
		return 0; /* a hidden, non-default version */
	}
	return strcmp(d->strtab + s->st_name, name) == 0;
}

void *hook_elf_lookup(ElfW(Addr) base, const struct hook_dyn *d,
		      const char *name, int *type)
{
	int t = 0;
	uint32_t i = 0;
	void *p = lookup(base, d, name, &t, &i);

	if (type) {
		*type = t;
	}
	return p;
}

int hook_elf_unversioned(ElfW(Addr) base, const struct hook_dyn *d,
			 const char *name)
{
	int t = 0;
	uint32_t i = 0;

	if (!lookup(base, d, name, &t, &i)) {
		return 0;
	}
	return !d->versym || (d->versym[i] & 0x7fff) <= 1;
}

static void *lookup(ElfW(Addr) base, const struct hook_dyn *d, const char *name,
		    int *type, uint32_t *idx)
{
	if (d->gnuhash) {
		const uint32_t *g = d->gnuhash;
		uint32_t nbuckets = g[0], symoff = g[1], bloom = g[2];
		const uint32_t *buckets =
			g + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = 5381;

		for (const unsigned char *p = (const void *)name; *p; p++) {
			h = h * 33 + *p;
		}
		if (nbuckets == 0) {
			return NULL;
		}
		uint32_t i = buckets[h % nbuckets];

		if (i < symoff) {
			return NULL;
		}
		for (;; i++) {
			uint32_t h2 = chain[i - symoff];

			if ((h | 1) == (h2 | 1) && sym_is(d, i, name)) {
				*type = ELF64_ST_TYPE(d->symtab[i].st_info);
				*idx = i;
				return (void *)(base + d->symtab[i].st_value);
			}
			if (h2 & 1) {
				break;
			}
		}
		return NULL;
	}
	if (d->sysvhash) {
		const uint32_t *hs = d->sysvhash;
		uint32_t nbucket = hs[0];
		const uint32_t *bucket = hs + 2, *chain = bucket + nbucket;
		uint32_t h = 0, g;

		for (const unsigned char *p = (const void *)name; *p; p++) {
			h = (h << 4) + *p;
			g = h & 0xf0000000u;
			if (g) {
				h ^= g >> 24;
			}
			h &= ~g;
		}
		if (nbucket == 0) {
			return NULL;
		}
		for (uint32_t i = bucket[h % nbucket]; i != 0; i = chain[i]) {
			if (sym_is(d, i, name)) {
				*type = ELF64_ST_TYPE(d->symtab[i].st_info);
				*idx = i;
				return (void *)(base + d->symtab[i].st_value);
			}
		}
	}
	return NULL;
}
