/*
 * convert.c - CUPTI activity records into struct gpu_rec, with their
 * names interned.
 *
 * Runs on the drain thread, when it parses the buffers CUPTI handed over
 * (activity.c), never inside CUPTI's callbacks: interning takes the string
 * table's lock and demangling allocates, and CUPTI may hold locks of its
 * own while it calls back. Because only the drain thread runs here, the
 * name caches need no lock.
 *
 * Kernel names are demangled once per distinct name (a cache keyed by the
 * mangled text) with the program's own __cxa_demangle, looked up once;
 * a name longer than NAME_MAX_DEMANGLE bytes is shown as it comes, since
 * the demangler's time and memory grow with the input.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "cupti.h"
#include "gpu.h"
#include "hmap.h"

#define NCBID		  2048
#define NAME_MAX_DEMANGLE 4096

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
typedef CUptiResult (*callback_name_fn)(CUpti_CallbackDomain, uint32_t,
					const char **);

static callback_name_fn callback_name;
static demangle_fn demangle;
static uint32_t api_names[2][NCBID];

/* Kernel names seen: mangled text -> string id of the shown name. */
struct kname {
	uint64_t hash;
	char *mangled; /* NULL: an empty slot */
	uint32_t id;
};
static struct hmap K;

static int kname_empty(const void *slot)
{
	return ((const struct kname *)slot)->mangled == NULL;
}

static uint64_t kname_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return ((const struct kname *)slot)->hash;
}

/* key: a struct kname with hash and mangled set. */
static int kname_match(const void *slot, const void *key)
{
	const struct kname *e = slot, *k = key;

	return e->hash == k->hash && strcmp(e->mangled, k->mangled) == 0;
}

static const struct hmap_ops kname_ops = {
	.size = sizeof(struct kname),
	.empty = kname_empty,
	.hash = kname_hash,
};

void convert_init(void *get_callback_name)
{
	callback_name = (callback_name_fn)get_callback_name;
	demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
}

/* The string id of an API call's name, by callback id. */
static uint32_t api_name(int driver, uint32_t cbid)
{
	uint32_t *slot = cbid < NCBID ? &api_names[driver][cbid] : NULL;
	uint32_t known = slot ? *slot : 0;
	const char *name = NULL;
	char buf[64];

	if (known) {
		return known;
	}
	CUpti_CallbackDomain dom = driver ? CUPTI_CB_DOMAIN_DRIVER_API
					  : CUPTI_CB_DOMAIN_RUNTIME_API;
	if (!callback_name ||
	    callback_name(dom, cbid, &name) != CUPTI_SUCCESS || !name) {
		snprintf(buf, sizeof(buf), "%s %u",
			 driver ? "driver API" : "runtime API", cbid);
		name = buf;
	}
	/* "cudaLaunchKernel_v7000" is shown as "cudaLaunchKernel", the name
	 * a hook and the program's source use. */
	const char *v = strrchr(name, '_');
	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' &&
	    strspn(v + 2, "0123456789") == strlen(v + 2) && name != buf) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(v - name), name);
		name = buf;
	}
	uint32_t id = strtab_intern(name);
	if (slot) {
		*slot = id;
	}
	return id;
}

static uint32_t copy_name(uint8_t kind)
{
	static const char *const names[] = {
		"Memcpy Unknown", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
		"Memcpy AtoH",	  "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
		"Memcpy DtoD",	  "Memcpy HtoH", "Memcpy PtoP"};
	static uint32_t ids[11];

	if (kind >= 11) {
		kind = 0;
	}
	if (!ids[kind]) {
		ids[kind] = strtab_intern(names[kind]);
	}
	return ids[kind];
}

/* A sync record's name, as Kineto names it (its cuda_sync_kind). */
static uint32_t sync_name(uint32_t type)
{
	static const char *const names[] = {"Unknown Sync", "Event Sync",
					    "Stream Wait Event", "Stream Sync",
					    "Context Sync"};
	static uint32_t ids[5];

	if (type >= 5) {
		type = 0;
	}
	if (!ids[type]) {
		ids[type] = strtab_intern(names[type]);
	}
	return ids[type];
}

/* The shown name of a kernel whose name is mangled: demangled when it is
 * a C++ name of reasonable length and the program has a C++ runtime. */
static uint32_t shown_name(const char *mangled)
{
	int status = -1;

	if (demangle && mangled[0] == '_' && mangled[1] == 'Z' &&
	    strnlen(mangled, NAME_MAX_DEMANGLE + 1) <= NAME_MAX_DEMANGLE) {
		char *d = demangle(mangled, NULL, NULL, &status);
		if (d && status == 0) {
			uint32_t id = strtab_intern(d);
			free(d);
			return id;
		}
		free(d);
	}
	return strtab_intern(mangled);
}

static uint32_t kernel_name(const char *mangled)
{
	if (!mangled) {
		return strtab_intern("(unnamed kernel)");
	}
	if (hmap_reserve(&K, &kname_ops, 256, 1, 2, NULL) < 0) {
		return shown_name(mangled);
	}
	uint64_t h = hmap_fnv1a_str(mangled, NULL);
	struct kname k = {h, (char *)mangled, 0};
	struct kname *e = hmap_find(&K, &kname_ops, h, kname_match, &k);
	if (e->mangled) {
		return e->id;
	}
	uint32_t id = shown_name(mangled);
	char *copy = strdup(mangled);
	if (copy) {
		e->hash = h;
		e->mangled = copy;
		e->id = id;
		K.used++;
	}
	return id;
}

int convert_record(const void *activity, struct gpu_rec *g)
{
	const CUpti_Activity *a = activity;

	memset(g, 0, sizeof(*g));
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		g->kind = GPU_KERNEL;
		g->start = k->start;
		g->end = k->end;
		g->name = kernel_name(k->name);
		g->correlation = k->correlationId;
		g->device = k->deviceId;
		g->context = k->contextId;
		g->stream = k->streamId;
		g->grid[0] = k->gridX;
		g->grid[1] = k->gridY;
		g->grid[2] = k->gridZ;
		g->block[0] = k->blockX;
		g->block[1] = k->blockY;
		g->block[2] = k->blockZ;
		g->regs = k->registersPerThread;
		g->queued = k->queued;
		g->shmem = (uint32_t)(k->staticSharedMemory +
				      k->dynamicSharedMemory);
		g->dyn_shmem = (uint32_t)k->dynamicSharedMemory;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		g->kind = GPU_MEMCPY;
		g->start = m->start;
		g->end = m->end;
		g->bytes = m->bytes;
		g->name = copy_name(m->copyKind);
		g->flags = GPU_COPY_KINDS(m->srcKind, m->dstKind);
		g->correlation = m->correlationId;
		g->device = m->deviceId;
		g->context = m->contextId;
		g->stream = m->streamId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		static uint32_t name;
		if (!name) {
			name = strtab_intern("Memset (Device)");
		}
		g->kind = GPU_MEMSET;
		g->start = m->start;
		g->end = m->end;
		g->bytes = m->bytes;
		g->name = name;
		g->correlation = m->correlationId;
		g->device = m->deviceId;
		g->context = m->contextId;
		g->stream = m->streamId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *p = (const void *)a;
		int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
		g->kind = driver ? GPU_DRIVER : GPU_RUNTIME;
		g->start = p->start;
		g->end = p->end;
		g->name = api_name(driver, p->cbid);
		g->correlation = p->correlationId;
		g->cbid = p->cbid;
		g->tid = p->threadId;
		g->stack = driver ? 0 : launch_stack_get(p->correlationId);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)a;
		g->kind = GPU_SYNC;
		g->start = s->start;
		g->end = s->end;
		g->name = sync_name(s->type);
		g->flags = s->type < 5 ? (uint16_t)s->type : 0;
		g->correlation = s->correlationId;
		g->context = s->contextId;
		g->stream = s->streamId;
		g->event = s->cudaEventId;
		g->event_sync = s->cudaEventSyncId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
		/* Not shown: it tells an Event Sync or a Stream Wait Event
		 * which stream and call recorded the event waited on. */
		const CUpti_ActivityCudaEvent2 *e = (const void *)a;
		g->kind = GPU_EVENT;
		g->correlation = e->correlationId;
		g->context = e->contextId;
		g->stream = e->streamId;
		g->device = e->deviceId;
		g->event = e->eventId;
		g->event_sync = e->cudaEventSyncId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		const CUpti_ActivityMemory4 *m = (const void *)a;
		if (m->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
			return 0;
		}
		g->kind = GPU_MEMORY;
		g->start = g->end = m->timestamp;
		g->bytes = m->bytes;
		g->device = m->deviceId;
		g->correlation = m->correlationId;
		if (m->memoryOperationType ==
		    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
			g->flags = GPU_FREE;
		}
		return 1;
	}
	default:
		/* External correlation and overhead records are enabled for
		 * completeness; linking is done by time (see link.c). */
		return 0;
	}
}
