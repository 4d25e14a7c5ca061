/*
 * hook_torch.c - PyTorch's own ranges: record_function annotations and
 * the autograd engine's rows, seen through a RecordFunction callback.
 *
 * PyTorch opens an at::RecordFunction for every record_function range
 * (the user's, and its own Optimizer.step#SGD.step, enumerate(DataLoader)
 * #..., in every release since 1.8, profiler or not), for every autograd
 * node it runs (scope BACKWARD_FUNCTION: "AddmmBackward0",
 * "torch::autograd::AccumulateGrad") and, around each node, for the
 * engine's "autograd::engine::evaluate_function: <Node>" (scope
 * FUNCTION, as every ATen operator). A range reaches callbacks only when
 * one is registered for its scope, and its name is known only then. So
 * when @torch applies to libtorch_cpu (the first operator is hooked,
 * hook_patch.c), this file registers a callback the way Kineto does, with
 * the exported at::addGlobalCallback, for one scope:
 *
 *   USER_SCOPE         a slice of cat user_annotation, section
 *                      "torch annotations", named as PyTorch names it
 *
 * Not for FUNCTION: a callback there makes every operator build a
 * RecordFunction (the training loop of tests/bench/torch_cpu_bench.sh
 * took 18% longer a step); nor for BACKWARD_FUNCTION, which costs every
 * autograd node about 1 us (4 % of that loop's step). The engine's calls
 * are timed instead by wrapping the exported Engine::evaluate_function,
 * which libtorch_cpu calls through its PLT (hook_orig.c,
 * HOOK_ORIG_TORCH_EVAL), around each node it runs: that call is the
 * slice "autograd::engine::evaluate_function: <Node>", and the node's own
 * (cat cpu_op, section "autograd") is the same call NODE_INSET ticks in
 * from each end. The node's name is its virtual name(), as PyTorch names
 * its range, called once per node type on each thread: its vtable slot is
 * the one where two classes that keep Node's (AccumulateGrad, Error) hold
 * the exported Node::name(), and the std::string it returns is freed
 * with the operator delete the library finds. Where the slot is not
 * found, a BACKWARD_FUNCTION callback names and times the nodes instead,
 * and the first node inside an engine call names it.
 *
 * The other FUNCTION ranges PyTorch names without "aten::" in a training
 * loop are "detach" and "detach_", each opened by the autograd kernel of
 * its operator (VariableType::detach and ::detach_, local functions):
 *
 *   detach   around the kernel's call of the exported
 *            at::_ops::detach::redispatch, which reaches the next
 *            dispatch key's kernel (ADInplaceOrView's), which calls it
 *            once more. The redispatch is wrapped
 *            (HOOK_ORIG_TORCH_DETACH): an outer call with an inner one on
 *            the same tensor is the autograd kernel's, the slice
 *            "detach"; a call with none inside (the autograd kernel not
 *            run: inference mode, below autograd) gives none, nor does
 *            PyTorch.
 *   detach_  around the kernel's call of the exported
 *            torch::autograd::impl::materialize_autograd_meta, which
 *            autograd also calls for any tensor that starts needing its
 *            data. It is wrapped (HOOK_ORIG_TORCH_META): a call made
 *            while aten::detach_ is the innermost hooked call
 *            (hook_rt_innermost()) is the slice "detach_"; the others
 *            pass through with a few loads.
 *
 * libtorch_cpu makes these calls through its own PLT: checked in
 * Debian's 1.13 (objdump: the kernels' calls between RecordFunction's
 * constructor and destructor); 2.0 to 2.11 have the same kernels, and a
 * build that calls them directly shows neither row, as before. The
 * slices are of section "autograd", cover the calls wrapped and nest in
 * aten::detach and aten::detach_ as PyTorch's ranges do: counts and
 * nesting are PyTorch's, and the few hundred nanoseconds of the ranges
 * outside the calls are the operators' self time. Detach runs a few
 * times a step and the other once an output, and no operator is
 * touched, so the wrappers cost nothing measurable.
 *
 * Each callback keeps a per-thread stack of open ranges (the range's
 * address, its name's string id, its start tick) and pushes one record
 * when the range ends, on the thread that ends it, so the slices nest
 * with the operators' by time. A range whose end is never seen (left by
 * a longjmp) is dropped when a range below it ends.
 *
 * The ABI (Itanium C++, x86-64), the same in every release known here:
 * at::RecordFunctionCallback is trivially copyable and passed by value
 * (in memory: it is 40 bytes); its start callback returns a
 * std::unique_ptr<ObserverContext>, which has a destructor and so is
 * returned through a hidden pointer (first argument); the end callback
 * is void(const RecordFunction&, ObserverContext*); RecordFunction::
 * name() is exported. Where the layout would differ (the number of
 * RecordScope values), a table names the releases; a release not in it
 * gets the operators only, and one line says so.
 *
 * Registration runs under the patcher's lock; the callbacks are HOT for
 * the FUNCTION scope (every operator: one comparison of the name's
 * first bytes) and close to it for the others (no lock but a new name's
 * first use on a thread).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "hook.h"
#include "hmap.h"
#include "preload.h"

/* RecordScope values, as c10's enum numbers them. */
enum {
	SCOPE_BACKWARD_FUNCTION = 1,
	SCOPE_USER = 7,
};

/* The releases whose layout is known: [lo, hi] as major * 100 + minor. */
static const struct layout {
	int lo, hi;
	int nscopes; /* RecordScope::NUM_SCOPES */
} layouts[] = {
	{113, 113, 10}, /* 1.13 */
	{200, 211, 10}, /* 2.0 .. 2.11 */
};

/* at::RecordFunctionCallback: start_, end_, sampling_prob_ (8 bytes
 * each), scopes_ (bool[NUM_SCOPES]), needs_inputs_, needs_outputs_,
 * needs_ids_ (bool each), padded to 8: 40 bytes for up to 13 scopes.
 * Built as bytes and passed by value, as the C++ class is (trivially
 * copyable, so passed in memory like a C struct of its size). */
#define CB_SCOPES_MAX 13
struct rf_cb_bytes {
	uint64_t w[5];
};

typedef uint64_t (*add_global_fn)(struct rf_cb_bytes cb);
typedef const char *(*name_fn)(const void *rf);

#define STACK_MAX 256
#define CACHE	  128

struct open_range {
	const void *rf;
	uint64_t t0;
	uint32_t name;
	uint32_t node; /* R_ENGINE: its node's own name, 0: none */
	uint8_t kind;  /* enum range_kind */
};

enum range_kind { R_USER, R_NODE, R_ENGINE, R_DETACH };

#define KINDS_BITS 6
#define KINDS	   (1u << KINDS_BITS)
/* Ticks between a node's slice and its engine call's, at each end: a
 * nanosecond or more for a tick rate up to 8 GHz. */
#define NODE_INSET 8

struct torch_thread {
	int depth;
	struct open_range stack[STACK_MAX];
	struct {
		uint64_t h;
		uint32_t id;
	} cache[CACHE];
	/* The names of the nodes of a type (by its vtable) seen on this
	 * thread: the node's own and its engine call's. */
	struct {
		const void *vptr;
		uint32_t node, engine;
	} kinds[KINDS];
};

static __thread struct torch_thread *me
	__attribute__((tls_model("initial-exec")));
static struct tls_block me_block = TLS_BLOCK_INIT;

static name_fn rf_name;
static int on; /* the callbacks are registered */
/* The slot of the virtual torch::autograd::Node::name() in a node's
 * vtable, or -1: the nodes are then named by a BACKWARD_FUNCTION
 * callback. */
static int name_slot = -1;
static void (*cxx_delete)(void *); /* operator delete(void *) */
static uint32_t group_user, group_autograd, name_detach, name_detach_;
/* at::_ops::detach_::call in the library attached, or 0. */
static uintptr_t detach__call;
static uint8_t cat_cpu_op;
static const void *attached; /* the library's dynamic section, once */

static const char engine_prefix[] = "autograd::engine::evaluate_function: ";

/* The thread's block, made at its first range; NULL without memory. */
static struct torch_thread *self(void)
{
	if (__builtin_expect(me != NULL, 1)) {
		return me;
	}
	me = tls_block_make(&me_block, sizeof(*me));
	return me;
}

/* The thread's caches are open-addressed: a key is looked for in PROBE
 * slots from its home slot, and a new one takes the first free slot
 * there, or its home slot when none is free. Two keys of one home never
 * evict each other while the table has room, so a loop's few names and
 * node types are each found in a probe or two, step after step. */
#define PROBE 8

/* The string id of name, from the thread's cache when it was seen; a new
 * name takes the string table's lock once per thread. */
static uint32_t name_id(struct torch_thread *t, const char *name)
{
	uint64_t h = hmap_fnv1a_str(name, NULL) | 1;
	unsigned home = (unsigned)(h % CACHE), i = home, k;

	for (k = 0; k < PROBE; k++, i = (i + 1) % CACHE) {
		if (t->cache[i].h == 0) {
			break;
		}
		if (t->cache[i].h == h &&
		    strcmp(strtab_get(t->cache[i].id), name) == 0) {
			return t->cache[i].id;
		}
	}
	if (k == PROBE) {
		i = home;
	}
	uint32_t id = strtab_intern(name);

	t->cache[i].h = h;
	t->cache[i].id = id;
	return id;
}

static void range_open(const void *rf, const char *name, int kind)
{
	struct torch_thread *t = self();

	if (!t || !name) {
		return;
	}
	int d = t->depth++;

	if (d < STACK_MAX) {
		t->stack[d] = (struct open_range){.rf = rf,
						  .name = name_id(t, name),
						  .kind = (uint8_t)kind,
						  .t0 = ticks_now()};
	}
}

static void close_range(const void *rf)
{
	uint64_t t1 = ticks_now();
	struct torch_thread *t = me;

	if (!t || t->depth <= 0) {
		return;
	}
	int d = t->depth - 1;

	/* Ranges opened above this one whose end was never seen. */
	while (d >= 0 && (d >= STACK_MAX || t->stack[d].rf != rf)) {
		d--;
	}
	if (d < 0) {
		return; /* not opened on this thread */
	}
	t->depth = d;
	const struct open_range *o = &t->stack[d];

	if (o->node && coll_active()) {
		/* The node's own range runs inside the engine's call: its
		 * slice is the call's, NODE_INSET ticks in from either end,
		 * so that it nests in the trace's nanoseconds too. */
		uint64_t in = t1 - o->t0 > 2 * NODE_INSET ? NODE_INSET : 0;
		struct coll_rec r = {.t0 = o->t0 + in,
				     .t1 = t1 - in,
				     .name = o->node,
				     .group = group_autograd,
				     .kind = COLL_SPAN,
				     .cat = cat_cpu_op};
		ring_push(&r);
	}
	if (o->name && coll_active()) {
		struct coll_rec r = {
			.t0 = o->t0,
			.t1 = t1,
			.name = o->name,
			.group =
				o->kind == R_USER ? group_user : group_autograd,
			.kind = COLL_SPAN,
			.cat = o->kind == R_USER ? COLL_CAT_USER : cat_cpu_op};
		ring_push(&r);
	}
	/* Optimizer.step#* (or MXPROF_STEP's annotation) ends a step. */
	if (o->kind == R_USER && o->name && coll_step_marker_id(o->name)) {
		coll_step_end(t1);
	}
}

/* The start callbacks: ret is the hidden return slot of the
 * std::unique_ptr<ObserverContext> (none: no context). */
static void **start_user(void **ret, const void *rf)
{
	range_open(rf, rf_name(rf), R_USER);
	*ret = NULL;
	return ret;
}

static void **start_node(void **ret, const void *rf)
{
	const char *n = rf_name(rf);
	struct torch_thread *t = self();

	range_open(rf, n, R_NODE);
	/* The first node to run inside an engine's call names it. */
	int d = t ? t->depth - 2 : -1;

	if (n && d >= 0 && d < STACK_MAX && t->stack[d].kind == R_ENGINE &&
	    t->stack[d].name == 0) {
		char buf[512];

		snprintf(buf, sizeof(buf), "%s%s", engine_prefix, n);
		t->stack[d].name = name_id(t, buf);
	}
	*ret = NULL;
	return ret;
}

/* std::string as libstdc++'s C++11 ABI lays it out. */
struct cxx_string {
	char *p;
	size_t len;
	char local[16]; /* the characters of a short one; p points here */
};

typedef struct cxx_string *(*node_name_fn)(struct cxx_string *ret,
					   const void *node);

/* The names of node, of a type seen on this thread or asked of it once
 * (its virtual name(), as its BACKWARD_FUNCTION range is named): its own
 * in *own and its engine call's in *engine (0: unknown). */
static void node_names(struct torch_thread *t, const void *node, uint32_t *own,
		       uint32_t *engine)
{
	const void *const *vptr = *(const void *const *const *)node;
	/* Vtables lie a few dozen bytes apart: the high bits of a
	 * Fibonacci product spread them. */
	unsigned home = (unsigned)(((uint64_t)(uintptr_t)vptr *
				    0x9e3779b97f4a7c15ull) >>
				   (64 - KINDS_BITS));
	unsigned i = home, k;

	for (k = 0; k < PROBE; k++, i = (i + 1) % KINDS) {
		if (!t->kinds[i].vptr || t->kinds[i].vptr == vptr) {
			break;
		}
	}
	if (k == PROBE) {
		i = home;
	}
	if (t->kinds[i].vptr != vptr) {
		node_name_fn f = (node_name_fn)vptr[name_slot];
		struct cxx_string str;
		char buf[512];

		f(&str, node);
		snprintf(buf, sizeof(buf), "%s%.*s", engine_prefix,
			 (int)(str.len < 400 ? str.len : 400), str.p);
		if (str.p != str.local && cxx_delete) {
			cxx_delete(str.p);
		}
		t->kinds[i].vptr = vptr;
		t->kinds[i].engine = name_id(t, buf);
		t->kinds[i].node = name_id(t, buf + strlen(engine_prefix));
	}
	*own = t->kinds[i].node;
	*engine = t->kinds[i].engine;
}

static void end_range(const void *rf, void *ctx)
{
	(void)ctx;
	close_range(rf);
}

/* The release of the library def (major * 100 + minor), from its soname
 * (Debian's libtorch_cpu.so.1.13) or the package's version.py beside its
 * lib/ folder (a wheel's torch/lib/libtorch_cpu.so); 0 when unknown. */
static int release_of(const struct hook_obj *def)
{
	const char *v = strstr(def->name, ".so.");
	int major = 0, minor = 0;

	if (v && sscanf(v + 4, "%d.%d", &major, &minor) == 2) {
		return major * 100 + minor;
	}
	if (!def->path) {
		return 0;
	}
	char path[4096];
	const char *slash = strrchr(def->path, '/');
	int n = slash ? (int)(slash - def->path) : 0;

	if (snprintf(path, sizeof(path), "%.*s/../version.py", n, def->path) >=
	    (int)sizeof(path)) {
		return 0;
	}
	FILE *f = fopen(path, "re");
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		const char *q = strstr(line, "__version__");

		q = q ? strpbrk(q, "'\"") : NULL;
		if (q && sscanf(q + 1, "%d.%d", &major, &minor) == 2) {
			break;
		}
	}
	if (f) {
		fclose(f);
	}
	return major * 100 + minor;
}

/* The callback for one scope, as the C++ class lays it out. */
static struct rf_cb_bytes callback(void *start, void *end, int scope)
{
	struct rf_cb_bytes cb;
	unsigned char *b = (unsigned char *)&cb;
	double one = 1.0;

	memset(&cb, 0, sizeof(cb));
	memcpy(b, &start, 8);
	memcpy(b + 8, &end, 8);
	memcpy(b + 16, &one, 8);
	b[24 + scope] = 1; /* needs_* (after the scopes) stay false */
	return cb;
}

/* operator delete(void *) as def's own references find it, or NULL: in
 * the global scope first (one that replaces libstdc++'s, preloaded or in
 * the program: a malloc library's, a sanitizer's), then among the
 * objects def needs. */
static void (*delete_of(const struct hook_obj *def))(void *)
{
	void *(*sym)(void *, const char *) =
		(void *(*)(void *, const char *))hook_orig_dl(HOOK_ORIG_DLSYM);
	void *pin = NULL, *f = NULL;

	if (!sym) {
		return NULL;
	}
	f = sym(RTLD_DEFAULT, "_ZdlPv");
	if (!f && hook_obj_pin(def, &pin) == 0 && pin) {
		f = sym(pin, "_ZdlPv");
	}
	hook_obj_unpin(pin);
	return (void (*)(void *))f;
}

/* The slot of Node::name() in the vtable of vt's class, which does not
 * override it, or -1: its function entries run from the third word to
 * the first null one (the next vtable's offset to top). */
static int slot_in(const void *const *vt, const void *name)
{
	for (int i = 0; vt && i < 64 && vt[2 + i]; i++) {
		if (vt[2 + i] == name) {
			return i;
		}
	}
	return -1;
}

/* The slot of the virtual torch::autograd::Node::name() in the vtables of
 * def's nodes, found in two classes that keep Node's, or -1. */
static int name_slot_of(const struct hook_obj *def, const struct hook_dyn *d)
{
	const void *name = hook_elf_lookup(
		def->base, d, "_ZNK5torch8autograd4Node4nameB5cxx11Ev", NULL);
	int a = slot_in(hook_elf_lookup(def->base, d,
					"_ZTVN5torch8autograd14AccumulateGradE",
					NULL),
			name);
	int b = slot_in(hook_elf_lookup(def->base, d,
					"_ZTVN5torch8autograd5ErrorE", NULL),
			name);

	return name && a >= 0 && a == b ? a : -1;
}

void hook_torch_attach(const struct hook_obj *def)
{
	struct hook_dyn d;

	if (attached == def->dyn) {
		return;
	}
	attached = def->dyn;
	if (hook_elf_dyn(def->base, def->phdr, def->phnum, &d) != 0) {
		return;
	}
	add_global_fn add = (add_global_fn)hook_elf_lookup(
		def->base, &d,
		"_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE", NULL);
	name_fn name = (name_fn)hook_elf_lookup(
		def->base, &d, "_ZNK2at14RecordFunction4nameEv", NULL);
	int rel = release_of(def);
	const struct layout *l = NULL;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts); i++) {
		if (rel >= layouts[i].lo && rel <= layouts[i].hi) {
			l = &layouts[i];
		}
	}
	if (!l || !add || !name || l->nscopes > CB_SCOPES_MAX) {
		fprintf(stderr,
			"mxprof: %s: PyTorch %d.%d is not one mxprof knows: "
			"its operators are timed, its annotations and "
			"autograd rows are not\n",
			def->name, rel / 100, rel % 100);
		return;
	}
	rf_name = name;
	group_user = strtab_intern("torch annotations");
	group_autograd = strtab_intern("autograd");
	name_detach = strtab_intern("detach");
	name_detach_ = strtab_intern("detach_");
	detach__call = (uintptr_t)hook_elf_lookup(
		def->base, &d, "_ZN2at4_ops7detach_4callERNS_6TensorE", NULL);
	cat_cpu_op = (uint8_t)cat_id("cpu_op");
	name_slot = name_slot_of(def, &d);
	cxx_delete = delete_of(def);
	add(callback((void *)start_user, (void *)end_range, SCOPE_USER));
	if (name_slot < 0 || !cxx_delete) {
		name_slot = -1;
		add(callback((void *)start_node, (void *)end_range,
			     SCOPE_BACKWARD_FUNCTION));
	}
	__atomic_store_n(&on, 1, __ATOMIC_RELEASE);
}

typedef void (*eval_fn)(void *, void *, void *, void *, void *);

void hook_torch_evaluate_function(void *engine, void *task, void *node,
				  void *inputs, void *queue)
{
	eval_fn real = (eval_fn)hook_orig_get(HOOK_ORIG_TORCH_EVAL);
	struct torch_thread *t =
		__atomic_load_n(&on, __ATOMIC_ACQUIRE) ? self() : NULL;

	if (!t) {
		real(engine, task, node, inputs, queue);
		return;
	}
	uint32_t own = 0, name = 0;

	if (name_slot >= 0) {
		node_names(t, node, &own, &name);
	}
	int d = t->depth++;

	if (d < STACK_MAX) {
		t->stack[d] = (struct open_range){.rf = node,
						  .kind = R_ENGINE,
						  .name = name,
						  .node = own,
						  .t0 = ticks_now()};
	}
	real(engine, task, node, inputs, queue);
	close_range(node);
}

typedef void *(*redispatch_fn)(void *, uint64_t, const void *);

void *hook_torch_detach(void *ret, uint64_t keys, const void *tensor)
{
	redispatch_fn real =
		(redispatch_fn)hook_orig_get(HOOK_ORIG_TORCH_DETACH);
	struct torch_thread *t =
		__atomic_load_n(&on, __ATOMIC_ACQUIRE) ? self() : NULL;

	if (!t) {
		return real(ret, keys, tensor);
	}
	int d = t->depth - 1;

	if (d >= 0 && d < STACK_MAX && t->stack[d].kind == R_DETACH &&
	    t->stack[d].rf == tensor) {
		/* The inner call: the outer one is the autograd kernel's. */
		t->stack[d].name = name_detach;
		return real(ret, keys, tensor);
	}
	d = t->depth++;
	if (d < STACK_MAX) {
		t->stack[d] = (struct open_range){
			.rf = tensor, .kind = R_DETACH, .t0 = ticks_now()};
	}
	real(ret, keys, tensor);
	close_range(tensor);
	return ret;
}

typedef void *(*meta_fn)(const void *);

void *hook_torch_meta(const void *tensor)
{
	meta_fn real = (meta_fn)hook_orig_get(HOOK_ORIG_TORCH_META);

	if (!__atomic_load_n(&on, __ATOMIC_ACQUIRE) || !coll_active()) {
		return real(tensor);
	}
	int i = hook_rt_innermost();

	if (i < 0 || !detach__call ||
	    (uintptr_t)__atomic_load_n(&hook_table_real[i], __ATOMIC_RELAXED) !=
		    detach__call) {
		return real(tensor);
	}
	uint64_t t0 = ticks_now();
	void *meta = real(tensor);
	struct coll_rec r = {.t0 = t0,
			     .t1 = ticks_now(),
			     .name = name_detach_,
			     .group = group_autograd,
			     .kind = COLL_SPAN,
			     .cat = cat_cpu_op};

	ring_push(&r);
	return meta;
}
