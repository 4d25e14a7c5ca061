/*
 * stack_objects.c - the loaded objects and their unwind tables, for the
 * native walk (stack_unwind.c, stack_unwind_thread.c).
 *
 * The object that holds a code address is found by glibc's
 * _dl_find_object (2.35 and later: lock-free, and current the moment an
 * object comes or goes), or else in the table of objects
 * stack_unwind_load() reads with dl_iterate_phdr. That table is read at
 * start-up and again after each dlopen and dlclose mxprof sees
 * (stack_probe()); when the set of objects changed, it is a new
 * generation, which the walk's rule cache and stack_reuse.c's entries
 * are kept by. The address's rules come from the object's .eh_frame_hdr
 * search table (stack_dwarf.c).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "stack.h"

#if defined(__x86_64__)

/* ---- the loaded objects ------------------------------------------------ */

struct unw_obj {
	uintptr_t lo, hi;     /* the executable segments' extent */
	const uint8_t *hdr;   /* .eh_frame_hdr */
	const int32_t *table; /* its (start, FDE) pairs, sorted by start */
	uint32_t count;
};

/* A table of objects, published whole: a reader never sees one half
 * built. Tables replaced by a later load are not unmapped (a walk on
 * another thread may still read them); a load that finds the objects
 * unchanged keeps the table it has. */
struct stack_objs {
	uint32_t gen;
	uint32_t n;
	unsigned long long adds, subs;
	struct unw_obj obj[];
};

#define UNW_OBJ_MAX 4096

static struct stack_objs *table;
static uint32_t table_gen;
struct load_ctx {
	struct stack_objs *t; /* NULL: count the objects */
	uint32_t room;	      /* how many t has room for */
	uint32_t count;
	unsigned long long adds, subs;
};

/* Reads the search table of the .eh_frame_hdr at hdr into o (all but
 * the range). Only its common layout: version 1, the entries as signed
 * 4-byte offsets from the header (datarel sdata4), their count as udata4.
 * Returns 0, or -1 for another. */
static int hdr_read(const uint8_t *hdr, struct unw_obj *o)
{
	uint8_t enc = hdr[1] & 0x0f; /* eh_frame_ptr's */
	size_t eh_size = enc == 0x0b || enc == 0x03 ? 4 : 8;
	uint32_t count;

	if (hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b ||
	    (enc != 0x0b && enc != 0x03 && enc != 0x04 && enc != 0x0c &&
	     enc != 0x00)) {
		return -1;
	}
	memcpy(&count, hdr + 4 + eh_size, 4);
	o->hdr = hdr;
	o->count = count;
	o->table = (const int32_t *)(hdr + 8 + eh_size);
	return 0;
}

static int load_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct load_ctx *c = arg;
	struct stack_objs *t = c->t;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const uint8_t *hdr = NULL;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	if (!t) {
		c->count++;
		return 0;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t b = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			lo = b < lo ? b : lo;
			hi = b + p->p_memsz > hi ? b + p->p_memsz : hi;
		} else if (p->p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)b;
		}
	}
	if (!hdr || hi <= lo || t->n >= c->room) {
		return 0;
	}
	struct unw_obj *o = &t->obj[t->n];

	if (hdr_read(hdr, o) == 0) {
		o->lo = lo;
		o->hi = hi;
		t->n++;
	}
	return 0;
}

int stack_unwind_load(void)
{
	struct stack_objs *old = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	struct load_ctx c = {NULL, 0, 0, 0, 0};

	dl_iterate_phdr(load_cb, &c);
	if (old && c.adds == old->adds && c.subs == old->subs) {
		return 0;
	}
	/* Room for a few objects loaded between the two passes. */
	c.room = c.count + 16 < UNW_OBJ_MAX ? c.count + 16 : UNW_OBJ_MAX;
	size_t bytes =
		sizeof(struct stack_objs) + c.room * sizeof(struct unw_obj);
	struct stack_objs *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		return -1;
	}
	c.t = t;
	dl_iterate_phdr(load_cb, &c);
	t->adds = c.adds;
	t->subs = c.subs;
	t->gen = __atomic_add_fetch(&table_gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&table, t, __ATOMIC_RELEASE);
	return 1;
}

#if defined(DLFO_STRUCT_HAS_EH_DBASE)
/* glibc 2.35 and later: the loader's own lock-free, async-signal-safe
 * lookup, current the moment an object is loaded or unloaded. Weak, for
 * a run on an older glibc. */
#pragma weak _dl_find_object
#define HAVE_DL_FIND_OBJECT 1
#else
#define HAVE_DL_FIND_OBJECT 0
#endif

/* Does obj_find() see the objects as they are now? */
static inline int current(void)
{
#if HAVE_DL_FIND_OBJECT
	return _dl_find_object != NULL;
#else
	return 0;
#endif
}

/* The object that holds ip, in *o (for a miss: not HOT). The loader's
 * lookup where it has one, else table t. Returns 0, or -1 when ip lies
 * in no object with a search table. */
static int obj_find(const struct stack_objs *t, uintptr_t ip, struct unw_obj *o)
{
#if HAVE_DL_FIND_OBJECT
	if (_dl_find_object) {
		struct dl_find_object f;

		if (_dl_find_object((void *)ip, &f) != 0 || !f.dlfo_eh_frame) {
			return -1;
		}
		o->lo = (uintptr_t)f.dlfo_map_start;
		o->hi = (uintptr_t)f.dlfo_map_end;
		return hdr_read(f.dlfo_eh_frame, o);
	}
#endif
	for (uint32_t i = 0; i < t->n; i++) {
		if (ip >= t->obj[i].lo && ip < t->obj[i].hi) {
			*o = t->obj[i];
			return 0;
		}
	}
	return -1;
}

const struct stack_objs *stack_objs_get(uint32_t *gen)
{
	const struct stack_objs *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);

	*gen = t ? t->gen : 0;
	return t;
}

int stack_objs_current(void)
{
	return current();
}

int stack_objs_rule(const struct stack_objs *t, uintptr_t at,
		    struct stack_unwind_rule *e)
{
	struct unw_obj o;

	if ((!t && !current()) || obj_find(t, at, &o) < 0) {
		return -1;
	}
	return stack_dwarf_rule(o.hdr, o.table, o.count, at, e);
}

int stack_unwind_rule_at(uintptr_t at, struct stack_unwind_rule *e)
{
	return stack_objs_rule(stack_objs_get(&(uint32_t){0}), at, e);
}

#else /* !__x86_64__ */

int stack_unwind_load(void)
{
	return 0;
}

int stack_unwind_rule_at(uintptr_t at, struct stack_unwind_rule *e)
{
	(void)at;
	(void)e;
	return -1;
}

#endif
