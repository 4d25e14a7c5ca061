/*
 * nvtx.c - mxprof as the NVTX injection library.
 *
 * NVTX v3 is header-only: the first NVTX call of a program looks for an
 * injection library (NVTX_INJECTION64_PATH, or InitializeInjectionNvtx2-
 * Preinject in the global symbol chain), calls its InitializeInjectionNvtx2
 * with an export-table getter, and the injection fills the function tables
 * of the modules it handles. Every NVTX call then lands here; the ones left
 * empty stay no-ops. The constructor (init.c) points NVTX_INJECTION64_PATH
 * at libmxprof.so when it is unset; when another tool owns it, it says so
 * in one line and NVTX goes to that tool.
 *
 * Mapping:
 *  - push/pop ranges: a per-thread stack of start ticks; the pop records
 *    one complete span (cat user_annotation, section = the domain's name,
 *    "NVTX" for the default domain). Pops without a push are ignored.
 *  - start/end ranges: a fixed pool of slots, the range id is the slot; the
 *    span goes on the thread that ends the range.
 *  - marks: thread-scoped instants.
 *  - registered strings are string-table ids; category names, and names of
 *    OS threads, CUDA devices and streams are kept (threads and devices are
 *    named in the trace).
 *
 * The hot path (push, pop, mark with a string literal) takes no lock: a
 * per-thread cache maps a message pointer to its string id, checked by
 * content, so only a new string takes the string table's lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "source.h"
#include "cupti.h"
#include "preload.h"
#include "stack.h"

#define STACK_MAX 128
#define CACHE	  64
#define PROBE	  4
#define SLOTS	  4096
#define NCAT	  64

struct nvtx_domain {
	uint32_t group;
	uint32_t cat_names[NCAT];
};

struct frame {
	uint64_t t0;
	uint32_t name;
	uint32_t group;
};

struct cache_ent {
	const void *p;
	uint32_t id;
};

/* Per-thread state lives behind one 8-byte initial-exec TLS pointer, so
 * that libmxprof.so still fits in the static TLS surplus glibc keeps for
 * libraries loaded after start. The block is allocated at a thread's first
 * NVTX call and freed at its exit. */
struct nvtx_thread {
	int depth;
	struct frame stack[STACK_MAX];
	struct cache_ent cache[CACHE];
};

static __thread struct nvtx_thread *me
	__attribute__((tls_model("initial-exec")));
static struct tls_block me_block = TLS_BLOCK_INIT;

/* HOT after a thread's first call. Returns the thread's block or NULL. */
static struct nvtx_thread *self(void)
{
	if (__builtin_expect(me != NULL, 1)) {
		return me;
	}
	me = tls_block_make(&me_block, sizeof(*me));
	return me;
}

static struct nvtx_domain default_domain;
static struct {
	uint64_t t0;
	uint32_t name;
	uint32_t group;
	int used; /* atomic */
} slots[SLOTS];
static unsigned next_slot;

static uint32_t group_of(nvtxDomainHandle_t h)
{
	const struct nvtx_domain *d = (const void *)h;

	return d ? d->group : default_domain.group;
}

/* HOT (on a cache hit). Returns the string id of an ASCII message. */
static uint32_t ascii_id(const char *s)
{
	struct nvtx_thread *t = self();
	if (!s) {
		return 0;
	}
	if (!t) {
		return strtab_intern(s);
	}
	/* Open-addressed: a message is looked for in PROBE slots from its
	 * home, and a new one takes its own old slot, or the first free one
	 * there, or its home when none is free, so that two messages whose
	 * addresses once shared a slot (literals a few bytes apart) do not
	 * evict each other. */
	uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
	unsigned home = (unsigned)(h >> 32) % CACHE;
	unsigned i = home, k;

	for (k = 0; k < PROBE; k++, i = (i + 1) % CACHE) {
		struct cache_ent *e = &t->cache[i];

		if (e->p == s) {
			if (strcmp(strtab_get(e->id), s) == 0) {
				return e->id;
			}
			break; /* the buffer holds another message now */
		}
		if (!e->p) {
			break;
		}
	}
	if (k == PROBE) {
		i = home;
	}
	uint32_t id = strtab_intern(s);

	t->cache[i].p = s;
	t->cache[i].id = id;
	return id;
}

static uint32_t wide_id(const wchar_t *w)
{
	char buf[512];
	mbstate_t st;

	if (!w) {
		return 0;
	}
	memset(&st, 0, sizeof(st));
	const wchar_t *src = w;
	size_t n = wcsrtombs(buf, &src, sizeof(buf) - 1, &st);
	if (n == (size_t)-1) {
		return strtab_intern("(unconvertible name)");
	}
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = 0;
	return strtab_intern(buf);
}

static uint32_t attr_name(const nvtxEventAttributes_t *a)
{
	if (!a) {
		return 0;
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return ascii_id(a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return wide_id(a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return (uint32_t)(uintptr_t)a->message.registered;
	default:
		return 0;
	}
}

/* HOT. */
static int push(uint32_t group, uint32_t name)
{
	struct nvtx_thread *t = self();

	if (!t) {
		return -1;
	}
	if (__builtin_expect(state_capture_id != 0, 0)) {
		state_nvtx_range(name, 1);
	}
	int d = t->depth++;
	if (d < STACK_MAX) {
		t->stack[d] = (struct frame){ticks_now(), name, group};
		if (stack_depth && coll_active()) {
			stack_record(t->stack[d].t0);
		}
	}
	return d;
}

/* HOT. */
static int pop(void)
{
	struct nvtx_thread *t = self();

	if (!t || t->depth <= 0) {
		return -1;
	}
	int d = --t->depth;
	if (d < STACK_MAX && coll_active()) {
		struct coll_rec r = {.t0 = t->stack[d].t0,
				     .t1 = ticks_now(),
				     .name = t->stack[d].name,
				     .group = t->stack[d].group,
				     .kind = COLL_SPAN,
				     .cat = COLL_CAT_USER};
		ring_push(&r);
		/* A range named by MXPROF_STEP ends a step. */
		if (__builtin_expect(coll_step_marker_id(r.name), 0)) {
			coll_step_end(r.t1);
		}
	}
	if (__builtin_expect(state_capture_id != 0, 0) && d < STACK_MAX) {
		state_nvtx_range(t->stack[d].name, 0);
	}
	return d;
}

static void mark(uint32_t group, uint32_t name)
{
	if (coll_active()) {
		struct coll_rec r = {.t0 = ticks_now(),
				     .name = name,
				     .group = group,
				     .kind = COLL_INSTANT,
				     .cat = COLL_CAT_USER,
				     .flags = COLL_SCOPE_THREAD};
		ring_push(&r);
	}
}

static nvtxRangeId_t start(uint32_t group, uint32_t name)
{
	for (unsigned k = 0; k < SLOTS; k++) {
		unsigned i =
			__atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) %
			SLOTS;
		int free_slot = 0;
		if (__atomic_compare_exchange_n(&slots[i].used, &free_slot, 1,
						0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			if (__builtin_expect(state_capture_id != 0, 0)) {
				state_nvtx_range(name, 1);
			}
			slots[i].name = name;
			slots[i].group = group;
			slots[i].t0 = ticks_now();
			return (nvtxRangeId_t)i + 1;
		}
	}
	return 0; /* more than SLOTS ranges open: this one is not shown */
}

static void end(nvtxRangeId_t id)
{
	uint64_t t1 = ticks_now();

	if (id == 0 || id > SLOTS) {
		return;
	}
	unsigned i = (unsigned)(id - 1);
	if (!__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE)) {
		return;
	}
	if (coll_active()) {
		struct coll_rec r = {.t0 = slots[i].t0,
				     .t1 = t1,
				     .name = slots[i].name,
				     .group = slots[i].group,
				     .kind = COLL_SPAN,
				     .cat = COLL_CAT_USER};
		ring_push(&r);
		if (__builtin_expect(coll_step_marker_id(r.name), 0)) {
			coll_step_end(t1);
		}
	}
	if (__builtin_expect(state_capture_id != 0, 0)) {
		state_nvtx_range(slots[i].name, 0);
	}
	__atomic_store_n(&slots[i].used, 0, __ATOMIC_RELEASE);
}

/* ---- the callbacks NVTX calls ------------------------------------------- */

static void cb_mark_ex(const nvtxEventAttributes_t *a)
{
	mark(default_domain.group, attr_name(a));
}

static void cb_mark_a(const char *m)
{
	mark(default_domain.group, ascii_id(m));
}

static void cb_mark_w(const wchar_t *m)
{
	mark(default_domain.group, wide_id(m));
}

static nvtxRangeId_t cb_start_ex(const nvtxEventAttributes_t *a)
{
	return start(default_domain.group, attr_name(a));
}

static nvtxRangeId_t cb_start_a(const char *m)
{
	return start(default_domain.group, ascii_id(m));
}

static nvtxRangeId_t cb_start_w(const wchar_t *m)
{
	return start(default_domain.group, wide_id(m));
}

static int cb_push_ex(const nvtxEventAttributes_t *a)
{
	return push(default_domain.group, attr_name(a));
}

static int cb_push_a(const char *m)
{
	return push(default_domain.group, ascii_id(m));
}

static int cb_push_w(const wchar_t *m)
{
	return push(default_domain.group, wide_id(m));
}

static void name_category(struct nvtx_domain *d, uint32_t cat, uint32_t name)
{
	if (cat < NCAT) {
		d->cat_names[cat] = name;
	}
}

static void cb_name_category_a(uint32_t cat, const char *name)
{
	name_category(&default_domain, cat, strtab_intern(name));
}

static void cb_name_category_w(uint32_t cat, const wchar_t *name)
{
	name_category(&default_domain, cat, wide_id(name));
}

static void cb_name_thread_a(uint32_t tid, const char *name)
{
	coll_thread_name((int)tid, name);
}

static void cb_name_thread_w(uint32_t tid, const wchar_t *name)
{
	coll_thread_name((int)tid, strtab_get(wide_id(name)));
}

static void cb_domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	mark(group_of(d), attr_name(a));
}

static nvtxRangeId_t cb_domain_start(nvtxDomainHandle_t d,
				     const nvtxEventAttributes_t *a)
{
	return start(group_of(d), attr_name(a));
}

static void cb_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	end(id);
}

static int cb_domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(group_of(d), attr_name(a));
}

static int cb_domain_pop(nvtxDomainHandle_t d)
{
	(void)d;
	return pop();
}

static nvtxResourceHandle_t cb_resource_create(nvtxDomainHandle_t d,
					       nvtxResourceAttributes_t *a)
{
	(void)d;
	(void)a;
	return NULL;
}

static void cb_resource_destroy(nvtxResourceHandle_t r)
{
	(void)r;
}

static void cb_domain_category_a(nvtxDomainHandle_t d, uint32_t cat,
				 const char *name)
{
	name_category(d ? (void *)d : &default_domain, cat,
		      strtab_intern(name));
}

static void cb_domain_category_w(nvtxDomainHandle_t d, uint32_t cat,
				 const wchar_t *name)
{
	name_category(d ? (void *)d : &default_domain, cat, wide_id(name));
}

static nvtxStringHandle_t cb_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)(uintptr_t)strtab_intern(s ? s : "");
}

static nvtxStringHandle_t cb_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	(void)d;
	return (nvtxStringHandle_t)(uintptr_t)wide_id(s);
}

static nvtxDomainHandle_t domain_create(uint32_t group)
{
	struct nvtx_domain *d = calloc(1, sizeof(*d));

	if (d) {
		d->group = group;
	}
	return (nvtxDomainHandle_t)(void *)d;
}

static nvtxDomainHandle_t cb_domain_create_a(const char *name)
{
	return domain_create(strtab_intern(name ? name : "NVTX"));
}

static nvtxDomainHandle_t cb_domain_create_w(const wchar_t *name)
{
	return domain_create(name ? wide_id(name) : strtab_intern("NVTX"));
}

static void cb_domain_destroy(nvtxDomainHandle_t d)
{
	/* Handles may still be in flight on other threads: keep it. */
	(void)d;
}

static void cb_initialize(const void *reserved)
{
	(void)reserved;
}

/* CUDA naming: devices by ordinal; streams and driver objects by handle,
 * which only CUPTI can map to a stream id, so they are accepted only. */
static void cb_name_cuda_device_a(int device, const char *name)
{
	cupti_name_device(device, name);
}

static void cb_name_cuda_device_w(int device, const wchar_t *name)
{
	cupti_name_device(device, strtab_get(wide_id(name)));
}

static void cb_name_handle_a(void *handle, const char *name)
{
	(void)handle;
	(void)name;
}

static void cb_name_handle_w(void *handle, const wchar_t *name)
{
	(void)handle;
	(void)name;
}

/* ---- injection ---------------------------------------------------------- */

struct slot_fn {
	unsigned id;
	NvtxFunctionPointer fn;
};

#define F(id, fn)                                                              \
	{                                                                      \
		id, (NvtxFunctionPointer)(void *)(fn)                          \
	}

static const struct slot_fn core[] = {
	F(NVTX_CBID_CORE_MarkEx, cb_mark_ex),
	F(NVTX_CBID_CORE_MarkA, cb_mark_a),
	F(NVTX_CBID_CORE_MarkW, cb_mark_w),
	F(NVTX_CBID_CORE_RangeStartEx, cb_start_ex),
	F(NVTX_CBID_CORE_RangeStartA, cb_start_a),
	F(NVTX_CBID_CORE_RangeStartW, cb_start_w),
	F(NVTX_CBID_CORE_RangeEnd, end),
	F(NVTX_CBID_CORE_RangePushEx, cb_push_ex),
	F(NVTX_CBID_CORE_RangePushA, cb_push_a),
	F(NVTX_CBID_CORE_RangePushW, cb_push_w),
	F(NVTX_CBID_CORE_RangePop, pop),
	F(NVTX_CBID_CORE_NameCategoryA, cb_name_category_a),
	F(NVTX_CBID_CORE_NameCategoryW, cb_name_category_w),
	F(NVTX_CBID_CORE_NameOsThreadA, cb_name_thread_a),
	F(NVTX_CBID_CORE_NameOsThreadW, cb_name_thread_w),
};

static const struct slot_fn core2[] = {
	F(NVTX_CBID_CORE2_DomainMarkEx, cb_domain_mark),
	F(NVTX_CBID_CORE2_DomainRangeStartEx, cb_domain_start),
	F(NVTX_CBID_CORE2_DomainRangeEnd, cb_domain_end),
	F(NVTX_CBID_CORE2_DomainRangePushEx, cb_domain_push),
	F(NVTX_CBID_CORE2_DomainRangePop, cb_domain_pop),
	F(NVTX_CBID_CORE2_DomainResourceCreate, cb_resource_create),
	F(NVTX_CBID_CORE2_DomainResourceDestroy, cb_resource_destroy),
	F(NVTX_CBID_CORE2_DomainNameCategoryA, cb_domain_category_a),
	F(NVTX_CBID_CORE2_DomainNameCategoryW, cb_domain_category_w),
	F(NVTX_CBID_CORE2_DomainRegisterStringA, cb_register_a),
	F(NVTX_CBID_CORE2_DomainRegisterStringW, cb_register_w),
	F(NVTX_CBID_CORE2_DomainCreateA, cb_domain_create_a),
	F(NVTX_CBID_CORE2_DomainCreateW, cb_domain_create_w),
	F(NVTX_CBID_CORE2_DomainDestroy, cb_domain_destroy),
	F(NVTX_CBID_CORE2_Initialize, cb_initialize),
};

static const struct slot_fn cudart[] = {
	F(NVTX_CBID_CUDART_NameCudaDeviceA, cb_name_cuda_device_a),
	F(NVTX_CBID_CUDART_NameCudaDeviceW, cb_name_cuda_device_w),
	F(NVTX_CBID_CUDART_NameCudaStreamA, cb_name_handle_a),
	F(NVTX_CBID_CUDART_NameCudaStreamW, cb_name_handle_w),
	F(NVTX_CBID_CUDART_NameCudaEventA, cb_name_handle_a),
	F(NVTX_CBID_CUDART_NameCudaEventW, cb_name_handle_w),
};

static const struct slot_fn cuda[] = {
	F(NVTX_CBID_CUDA_NameCuDeviceA, cb_name_cuda_device_a),
	F(NVTX_CBID_CUDA_NameCuDeviceW, cb_name_cuda_device_w),
	F(NVTX_CBID_CUDA_NameCuContextA, cb_name_handle_a),
	F(NVTX_CBID_CUDA_NameCuContextW, cb_name_handle_w),
	F(NVTX_CBID_CUDA_NameCuStreamA, cb_name_handle_a),
	F(NVTX_CBID_CUDA_NameCuStreamW, cb_name_handle_w),
	F(NVTX_CBID_CUDA_NameCuEventA, cb_name_handle_a),
	F(NVTX_CBID_CUDA_NameCuEventW, cb_name_handle_w),
};

#undef F

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		const struct slot_fn *fns, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;

	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) {
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (fns[i].id < size && table[fns[i].id]) {
			*table[fns[i].id] = fns[i].fn;
		}
	}
	return 1;
}

/*
 * NVTX's injection entry point. Fills the function tables of the modules
 * mxprof handles. Returns 1 on success, 0 when NVTX is not traced (NVTX
 * then turns every call into a no-op).
 */
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;

	preload_init_once();
	if (!(preload_settings.trace & TRACE_NVTX) || !get) {
		return 0;
	}
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb)) {
		return 0;
	}
	if (!default_domain.group) {
		default_domain.group = strtab_intern("NVTX");
	}
	if (!fill(cb, NVTX_CB_MODULE_CORE, core,
		  sizeof(core) / sizeof(*core))) {
		return 0;
	}
	fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(*core2));
	fill(cb, NVTX_CB_MODULE_CUDART, cudart,
	     sizeof(cudart) / sizeof(*cudart));
	fill(cb, NVTX_CB_MODULE_CUDA, cuda, sizeof(cuda) / sizeof(*cuda));
	return 1;
}

/* The same entry, found in the global symbol chain when NVTX_INJECTION64_
 * PATH is unset (libmxprof.so preloaded). */
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2Preinject(NvtxGetExportTableFunc_t get)
{
	return InitializeInjectionNvtx2(get);
}
