/*
 * hook_aten.c - naming PyTorch's operators as PyTorch does: the function
 * at::_ops::add__Tensor::call becomes "aten::add_".
 *
 * Each ATen operator has a struct in at::_ops named after the operator and
 * its overload, joined by '_' (add_Tensor, add__Tensor, conv2d), whose
 * static call() is the operator's entry point. PyTorch's own profiler
 * names an operator "aten::<op>" without the overload, but the struct's
 * name alone does not say where the operator ends: max_pool2d has no
 * overload, add_Tensor is add with overload Tensor, and add__Tensor is
 * add_ with overload Tensor.
 *
 * The operators' names are in the library, though: every operator is
 * looked up by its name ("aten::add", "aten::add_") and registered by its
 * schema ("aten::add.Tensor(Tensor self, ...)"). So the first time an
 * operator of a library is named, its read-only data is searched once for
 * "aten::<identifier>" strings, and each struct name is then split at the
 * longest operator name that is a prefix of it followed by '_' (or is all
 * of it). Operator names that extend one another (max_pool2d and
 * max_pool2d_with_indices) are told apart by that longest match, as
 * PyTorch's code generator keeps struct names unique.
 *
 * Runs under the patcher's lock, when an operator is hooked; never on the
 * hot path. The search reads about 30 MB of libtorch_cpu's mapped file
 * once (some milliseconds).
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "hook.h"

/* The operator names found in one object: an open-addressing set of
 * strings copied into one arena. */
static struct {
	ElfW(Addr) base;
	const void *dyn;
	char *arena;
	size_t arena_n, arena_cap;
	struct hmap set; /* uint32_t: arena offset + 1; 0 is empty */
	int built;
} ops;

static int ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* A name looked up: s[0..n). */
struct name {
	const char *s;
	size_t n;
};

static int slot_empty(const void *slot)
{
	return *(const uint32_t *)slot == 0;
}

static uint64_t slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return hmap_fnv1a_str(ops.arena + *(const uint32_t *)slot - 1, NULL);
}

static int slot_match(const void *slot, const void *key)
{
	const struct name *k = key;
	const char *o = ops.arena + *(const uint32_t *)slot - 1;

	return strncmp(o, k->s, k->n) == 0 && o[k->n] == 0;
}

static const struct hmap_ops slot_ops = {
	.size = sizeof(uint32_t),
	.empty = slot_empty,
	.hash = slot_hash,
};

/* Returns the slot for s[0..n), empty or holding s. */
static uint32_t *slot_of(const char *s, size_t n)
{
	struct name k = {s, n};

	return hmap_find(&ops.set, &slot_ops, hmap_fnv1a(s, n), slot_match, &k);
}

static int has(const char *s, size_t n)
{
	return ops.set.cap && *slot_of(s, n) != 0;
}

/* Adds s[0..n) to the set. Returns 0, or -1 when memory runs out. */
static int add(const char *s, size_t n)
{
	if (hmap_reserve(&ops.set, &slot_ops, 4096, 1, 2, NULL) != 0) {
		return -1;
	}
	uint32_t *sl = slot_of(s, n);

	if (*sl) {
		return 0;
	}
	if (ops.arena_n + n + 1 > ops.arena_cap) {
		size_t cap = (ops.arena_cap ? ops.arena_cap * 2 : 65536) + n;
		char *a = realloc(ops.arena, cap);

		if (!a) {
			return -1;
		}
		ops.arena = a;
		ops.arena_cap = cap;
	}
	memcpy(ops.arena + ops.arena_n, s, n);
	ops.arena[ops.arena_n + n] = 0;
	*sl = (uint32_t)ops.arena_n + 1;
	ops.arena_n += n + 1;
	ops.set.used++;
	return 0;
}

/* Collects every "aten::<identifier>" in [p, end) that ends a string, a
 * schema's name part ('.') or a schema's name ('('). */
static void scan(const char *p, const char *end)
{
	static const char key[] = "aten::";
	const size_t kn = sizeof(key) - 1;

	while (p < end) {
		const char *k = memmem(p, (size_t)(end - p), key, kn);

		if (!k) {
			return;
		}
		const char *s = k + kn;
		const char *e = s;

		while (e < end && ident((unsigned char)*e)) {
			e++;
		}
		if (e > s && e < end && (*e == 0 || *e == '.' || *e == '(') &&
		    add(s, (size_t)(e - s)) != 0) {
			return;
		}
		p = e > s ? e : s;
	}
}

/* Builds the set for def, unless it is built already. */
static void build(const struct hook_obj *def)
{
	if (ops.built && ops.base == def->base && ops.dyn == def->dyn) {
		return;
	}
	free(ops.arena);
	hmap_free(&ops.set);
	memset(&ops, 0, sizeof(ops));
	ops.base = def->base;
	ops.dyn = def->dyn;
	ops.built = 1;
	for (int i = 0; i < def->phnum; i++) {
		const ElfW(Phdr) *ph = &def->phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) ||
		    (ph->p_flags & (PF_W | PF_X))) {
			continue;
		}
		const char *lo = (const char *)(def->base + ph->p_vaddr);

		scan(lo, lo + ph->p_filesz);
	}
}

int hook_aten_name(const struct hook_obj *def, const char *sym, char *out,
		   size_t size)
{
	static const char prefix[] = "_ZN2at4_ops";
	const char *p = sym + sizeof(prefix) - 1;
	char *end;

	if (strncmp(sym, prefix, sizeof(prefix) - 1) != 0) {
		return -1;
	}
	unsigned long n = strtoul(p, &end, 10);

	if (end == p || n == 0 || n > strlen(end) ||
	    strncmp(end + n, "4callE", 6) != 0) {
		return -1;
	}
	const char *s = end;
	size_t len = n;

	build(def);
	if (!has(s, len)) {
		for (size_t i = n - 1; i > 0; i--) {
			if (s[i] == '_' && has(s, i)) {
				len = i;
				break;
			}
		}
	}
	if (len + 7 > size) {
		return -1;
	}
	memcpy(out, "aten::", 6);
	memcpy(out + 6, s, len);
	out[6 + len] = 0;
	return 0;
}
