/*
 * activity.c - CUPTI activity: enabling, buffers, conversion into the
 * collector's GPU records, and the failure lines.
 *
 * Buffers are 4 MB, at most 16 outstanding (64 MB); past the cap CUPTI gets
 * no buffer and counts its dropped records, which are added to the
 * collector's GPU drop count. CUPTI flushes every second on its own
 * (cuptiActivityFlushPeriod) and is forced to flush before every dump.
 *
 * The timestamp callback is registered once per process and returns
 * clock_now_ns(): CLOCK_MONOTONIC nanoseconds exactly as host ticks are
 * converted to them, so GPU and host events share one time line, and a
 * CUDA call recorded by CUPTI nests in the NVTX range or hooked call
 * around it even while the tick mapping is still settling.
 *
 * API records carry the system thread id (cuptiSetThreadIdType), the same
 * id host records carry. Very chatty API calls that never launch work
 * (cudaGetDevice, cudaGetLastError, ...) are switched off.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "collector.h"
#include "cupti.h"

#define BUF_SIZE (4u << 20)
#define MAX_BUFS 16
#define NCBID	 2048
#define BATCH	 256

#define FN(name) static __typeof__(&name) p_##name
FN(cuptiGetVersion);
FN(cuptiGetResultString);
FN(cuptiSubscribe);
FN(cuptiUnsubscribe);
FN(cuptiActivityRegisterCallbacks);
FN(cuptiActivityEnable);
FN(cuptiActivityFlushAll);
FN(cuptiActivityFlushPeriod);
FN(cuptiActivityGetNextRecord);
FN(cuptiActivityGetNumDroppedRecords);
FN(cuptiActivityRegisterTimestampCallback);
FN(cuptiActivityEnableRuntimeApi);
FN(cuptiActivityEnableDriverApi);
FN(cuptiSetThreadIdType);
FN(cuptiGetCallbackName);
#undef FN

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int state; /* 0 not tried, 1 recording, -1 given up (atomic) */
static unsigned want;
static int outstanding; /* buffers handed to CUPTI (atomic) */
static uint32_t api_names[2][NCBID];
static CUpti_SubscriberHandle subscriber;
static int have_devices;

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;

	if (p_cuptiGetResultString &&
	    p_cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) {
		return s;
	}
	return "unknown CUPTI error";
}

/* One line for a CUPTI call that failed, naming the known causes. */
static int report(const char *what, CUptiResult r)
{
	const char *why = result_name(r);

	switch (r) {
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		fprintf(stderr,
			"mxprof: CUPTI is already used by another profiling "
			"tool (%s: %s); GPU activity is not recorded, host "
			"profiling goes on\n",
			what, why);
		break;
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		fprintf(stderr,
			"mxprof: no permission to profile the GPU (%s: %s; "
			"see NVreg_RestrictProfilingToAdminUsers); GPU "
			"activity is not recorded, host profiling goes on\n",
			what, why);
		break;
	default:
		fprintf(stderr,
			"mxprof: CUPTI failed (%s: %s); GPU activity is not "
			"recorded, host profiling goes on\n",
			what, why);
		break;
	}
	return -EIO;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d,
				 CUpti_CallbackId id, const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

static uint64_t CUPTIAPI timestamp(void)
{
	return clock_now_ns();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
				      size_t *max_records)
{
	*max_records = 0;
	*buffer = NULL;
	*size = 0;
	if (__atomic_add_fetch(&outstanding, 1, __ATOMIC_ACQ_REL) > MAX_BUFS) {
		__atomic_sub_fetch(&outstanding, 1, __ATOMIC_ACQ_REL);
		return; /* CUPTI drops and counts */
	}
	void *p = NULL;
	if (posix_memalign(&p, 8, BUF_SIZE) != 0) {
		__atomic_sub_fetch(&outstanding, 1, __ATOMIC_ACQ_REL);
		return;
	}
	*buffer = p;
	*size = BUF_SIZE;
}

/* The string id of an API call's name, by callback id. */
static uint32_t api_name(int driver, uint32_t cbid)
{
	uint32_t *slot = cbid < NCBID ? &api_names[driver][cbid] : NULL;
	const char *name = NULL;
	char buf[64];

	if (slot && *slot) {
		return *slot;
	}
	CUpti_CallbackDomain dom = driver ? CUPTI_CB_DOMAIN_DRIVER_API
					  : CUPTI_CB_DOMAIN_RUNTIME_API;
	if (!p_cuptiGetCallbackName ||
	    p_cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS ||
	    !name) {
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
		__atomic_store_n(slot, id, __ATOMIC_RELAXED);
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

static uint32_t sync_name(uint32_t type)
{
	static const char *const names[] = {
		"Synchronize", "Event Synchronize", "Stream Wait Event",
		"Stream Synchronize", "Context Synchronize"};
	static uint32_t ids[5];

	if (type >= 5) {
		type = 0;
	}
	if (!ids[type]) {
		ids[type] = strtab_intern(names[type]);
	}
	return ids[type];
}

/* Demangles a C++ kernel name when the program has a C++ runtime. */
static uint32_t kernel_name(const char *mangled)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn demangle;
	static int looked;
	int status = -1;

	if (!mangled) {
		return strtab_intern("(unnamed kernel)");
	}
	if (!looked) {
		demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = 1;
	}
	if (demangle && mangled[0] == '_' && mangled[1] == 'Z') {
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

/* Converts one CUPTI record; returns 0 when it is not kept. */
static int convert(const CUpti_Activity *a, struct coll_gpu_rec *g)
{
	memset(g, 0, sizeof(*g));
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		g->kind = COLL_GPU_KERNEL;
		g->start = k->start;
		g->end = k->end;
		g->name = kernel_name(k->name);
		g->correlation = k->correlationId;
		g->device = k->deviceId;
		g->stream = k->streamId;
		g->grid[0] = k->gridX;
		g->grid[1] = k->gridY;
		g->grid[2] = k->gridZ;
		g->block[0] = k->blockX;
		g->block[1] = k->blockY;
		g->block[2] = k->blockZ;
		g->regs = k->registersPerThread;
		g->shmem = (uint32_t)(k->staticSharedMemory +
				      k->dynamicSharedMemory);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		g->kind = COLL_GPU_MEMCPY;
		g->start = m->start;
		g->end = m->end;
		g->bytes = m->bytes;
		g->name = copy_name(m->copyKind);
		g->correlation = m->correlationId;
		g->device = m->deviceId;
		g->stream = m->streamId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		static uint32_t name;
		if (!name) {
			name = strtab_intern("Memset (Device)");
		}
		g->kind = COLL_GPU_MEMSET;
		g->start = m->start;
		g->end = m->end;
		g->bytes = m->bytes;
		g->name = name;
		g->correlation = m->correlationId;
		g->device = m->deviceId;
		g->stream = m->streamId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *p = (const void *)a;
		int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
		g->kind = driver ? COLL_GPU_DRIVER : COLL_GPU_RUNTIME;
		g->start = p->start;
		g->end = p->end;
		g->name = api_name(driver, p->cbid);
		g->correlation = p->correlationId;
		g->tid = p->threadId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)a;
		g->kind = COLL_GPU_SYNC;
		g->start = s->start;
		g->end = s->end;
		g->name = sync_name(s->type);
		g->correlation = s->correlationId;
		g->stream = s->streamId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		const CUpti_ActivityMemory4 *m = (const void *)a;
		if (m->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
			return 0;
		}
		g->kind = COLL_GPU_MEMORY;
		g->start = g->end = m->timestamp;
		g->bytes = m->bytes;
		g->device = m->deviceId;
		g->correlation = m->correlationId;
		if (m->memoryOperationType ==
		    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
			g->flags = COLL_GPU_FREE;
		}
		return 1;
	}
	default:
		/* External correlation and overhead records are enabled for
		 * completeness; linking is done by time (see gpu.c). */
		return 0;
	}
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buffer, size_t size,
				      size_t valid)
{
	struct coll_gpu_rec batch[BATCH];
	CUpti_Activity *rec = NULL;
	size_t n = 0;
	int quiet = ring_set_quiet(1);

	(void)size;
	while (valid > 0 && p_cuptiActivityGetNextRecord(buffer, valid, &rec) ==
				    CUPTI_SUCCESS) {
		if (convert(rec, &batch[n])) {
			if (++n == BATCH) {
				coll_gpu_push(batch, n);
				n = 0;
			}
		}
	}
	if (n) {
		coll_gpu_push(batch, n);
	}
	size_t dropped = 0;
	if (p_cuptiActivityGetNumDroppedRecords &&
	    p_cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
		    CUPTI_SUCCESS &&
	    dropped) {
		coll_gpu_note_dropped(dropped);
	}
	free(buffer);
	__atomic_sub_fetch(&outstanding, 1, __ATOMIC_ACQ_REL);
	ring_set_quiet(quiet);
}

static int resolve(void *h)
{
#define GET(name)                                                              \
	do {                                                                   \
		*(void **)&p_##name = dlsym(h, #name);                         \
	} while (0)
	GET(cuptiGetVersion);
	GET(cuptiGetResultString);
	GET(cuptiSubscribe);
	GET(cuptiUnsubscribe);
	GET(cuptiActivityRegisterCallbacks);
	GET(cuptiActivityEnable);
	GET(cuptiActivityFlushAll);
	GET(cuptiActivityFlushPeriod);
	GET(cuptiActivityGetNextRecord);
	GET(cuptiActivityGetNumDroppedRecords);
	GET(cuptiActivityRegisterTimestampCallback);
	GET(cuptiActivityEnableRuntimeApi);
	GET(cuptiActivityEnableDriverApi);
	GET(cuptiSetThreadIdType);
	GET(cuptiGetCallbackName);
#undef GET
	return p_cuptiGetVersion && p_cuptiSubscribe &&
	       p_cuptiActivityRegisterCallbacks && p_cuptiActivityEnable &&
	       p_cuptiActivityFlushAll && p_cuptiActivityGetNextRecord;
}

/* Switches off API records of calls that never launch work. */
static void quiet_noisy_calls(void)
{
	static const CUpti_CallbackId runtime[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
	};
	static const CUpti_CallbackId driver[] = {
		CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
		CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
		CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
		CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
		CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
	};

	for (size_t i = 0; p_cuptiActivityEnableRuntimeApi &&
			   i < sizeof(runtime) / sizeof(*runtime);
	     i++) {
		p_cuptiActivityEnableRuntimeApi(runtime[i], 0);
	}
	for (size_t i = 0; p_cuptiActivityEnableDriverApi &&
			   i < sizeof(driver) / sizeof(*driver);
	     i++) {
		p_cuptiActivityEnableDriverApi(driver[i], 0);
	}
}

static int enable_kinds(void)
{
	struct {
		CUpti_ActivityKind kind;
		unsigned need;
	} kinds[] = {
		{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_WANT_GPU},
		{CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_WANT_GPU},
		{CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_WANT_GPU},
		{CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_WANT_API},
		{CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_WANT_API},
		{CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_WANT_API},
		{CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_WANT_API},
		{CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_WANT_MEMORY},
		{CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_WANT_GPU},
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		if (!(want & kinds[i].need)) {
			continue;
		}
		CUptiResult r = p_cuptiActivityEnable(kinds[i].kind);
		if (r != CUPTI_SUCCESS) {
			return report("cuptiActivityEnable", r);
		}
	}
	return 0;
}

static int start_locked(const char *why)
{
	char path[4096] = "";
	uint32_t version = 0;
	static int ts_registered;
	CUptiResult r;

	void *h = cupti_load_library(path, sizeof(path));
	if (!h) {
		fprintf(stderr,
			"mxprof: %s, but no libcupti was found beside the "
			"CUDA libraries, in $CUDA_HOME or on the loader path; "
			"GPU activity is not recorded, host profiling goes "
			"on\n",
			why);
		return -ENOENT;
	}
	if (!resolve(h)) {
		fprintf(stderr,
			"mxprof: %s lacks CUPTI functions mxprof needs; GPU "
			"activity is not recorded, host profiling goes on\n",
			path);
		return -ENOSYS;
	}
	if (p_cuptiGetVersion(&version) != CUPTI_SUCCESS ||
	    version / 10000 != CUPTI_API_VERSION / 10000) {
		fprintf(stderr,
			"mxprof: %s has CUPTI API version %u, mxprof was "
			"built for %u (CUDA %d); GPU activity is not "
			"recorded, host profiling goes on\n",
			path, version, (unsigned)CUPTI_API_VERSION,
			CUPTI_API_VERSION / 10000);
		return -EPROTO;
	}
	r = p_cuptiSubscribe(&subscriber, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		return report("cuptiSubscribe", r);
	}
	if (p_cuptiSetThreadIdType) {
		p_cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	}
	if (!ts_registered && p_cuptiActivityRegisterTimestampCallback) {
		r = p_cuptiActivityRegisterTimestampCallback(timestamp);
		if (r != CUPTI_SUCCESS) {
			fprintf(stderr,
				"mxprof: CUPTI keeps its own clock (%s); GPU "
				"times may be offset from host times\n",
				result_name(r));
		}
		ts_registered = 1;
	}
	r = p_cuptiActivityRegisterCallbacks(buffer_requested,
					     buffer_completed);
	if (r != CUPTI_SUCCESS) {
		return report("cuptiActivityRegisterCallbacks", r);
	}
	int rc = enable_kinds();
	if (rc < 0) {
		if (p_cuptiUnsubscribe) {
			p_cuptiUnsubscribe(subscriber);
		}
		return rc;
	}
	quiet_noisy_calls();
	if (p_cuptiActivityFlushPeriod) {
		p_cuptiActivityFlushPeriod(1000);
	}
	return 0;
}

int cupti_start(const char *why)
{
	int rc = 0;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE)) {
		return state > 0 ? 0 : -EALREADY;
	}
	int quiet = ring_set_quiet(1);
	pthread_mutex_lock(&start_lock);
	if (!state) {
		rc = start_locked(why);
		__atomic_store_n(&state, rc == 0 ? 1 : -1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&start_lock);
	ring_set_quiet(quiet);
	return state > 0 ? 0 : rc ? rc : -EALREADY;
}

/* Reads the devices' properties through the driver API, once. */
static void read_devices(void)
{
	typedef CUresult (*count_fn)(int *);
	typedef CUresult (*get_fn)(CUdevice *, int);
	typedef CUresult (*name_fn)(char *, int, CUdevice);
	typedef CUresult (*attr_fn)(int *, CUdevice_attribute, CUdevice);
	typedef CUresult (*mem_fn)(size_t *, CUdevice);
	count_fn count = (count_fn)cupti_cuda_sym("cuDeviceGetCount");
	get_fn get = (get_fn)cupti_cuda_sym("cuDeviceGet");
	name_fn name = (name_fn)cupti_cuda_sym("cuDeviceGetName");
	attr_fn attr = (attr_fn)cupti_cuda_sym("cuDeviceGetAttribute");
	mem_fn mem = (mem_fn)cupti_cuda_sym("cuDeviceTotalMem_v2");
	int n = 0;

	if (!count || !get || !name || !attr || count(&n) != CUDA_SUCCESS) {
		return;
	}
	for (int i = 0; i < n; i++) {
		struct coll_gpu_device d = {.id = i};
		CUdevice dev;
		size_t total = 0;
		if (get(&dev, i) != CUDA_SUCCESS) {
			continue;
		}
		name(d.name, sizeof(d.name), dev);
		attr(&d.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		     dev);
		attr(&d.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
		     dev);
		attr(&d.num_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
		attr(&d.max_threads_per_block,
		     CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
		attr(&d.max_shared_per_block,
		     CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
		attr(&d.warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
		attr(&d.regs_per_block,
		     CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev);
		if (mem && mem(&total, dev) == CUDA_SUCCESS) {
			d.total_mem = total;
		}
		coll_gpu_set_device(&d);
	}
	have_devices = 1;
}

void cupti_flush(void)
{
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) <= 0) {
		return;
	}
	int quiet = ring_set_quiet(1);
	p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (!have_devices) {
		read_devices();
	}
	ring_set_quiet(quiet);
}

/* ---- the source the collector drives ------------------------------------ */

/*
 * The drain thread's check (see cupti.h). CUDA counts as initialised once
 * the driver answers cuDeviceGetCount(); before cuInit() it answers
 * CUDA_ERROR_NOT_INITIALIZED and the next tick asks again. A driver that
 * finds no GPU gets one line, and CUPTI is never loaded.
 */
static void tick(uint64_t now_ns)
{
	typedef CUresult (*count_fn)(int *);
	int n = 0;

	(void)now_ns;
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 0 ||
	    !cupti_cuda_loaded()) {
		return;
	}
	count_fn count = (count_fn)cupti_cuda_sym("cuDeviceGetCount");
	if (!count) {
		return; /* the runtime is loaded, the driver not yet */
	}
	CUresult r = count(&n);
	if (r == CUDA_ERROR_NOT_INITIALIZED) {
		return;
	}
	if (r != CUDA_SUCCESS || n == 0) {
		fprintf(stderr,
			"mxprof: CUDA finds no GPU (cuDeviceGetCount: error "
			"%d, %d devices); GPU activity is not recorded, host "
			"profiling goes on\n",
			(int)r, n);
		__atomic_store_n(&state, -1, __ATOMIC_RELEASE);
		return;
	}
	cupti_start("the program initialised CUDA");
}

static const struct coll_gpu_source source = {.tick = tick,
					      .flush = cupti_flush};

/* A forked child of a CUDA process cannot use CUDA or CUPTI: its source
 * goes quiet (its own GPU store starts empty, see gpu.c). */
static void after_fork_child(void)
{
	__atomic_store_n(&state, -1, __ATOMIC_RELEASE);
}

int cupti_setup(unsigned what, const char *self_path)
{
	if (!what) {
		return -EINVAL;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	want = what;
	if (self_path && *self_path) {
		setenv("CUDA_INJECTION64_PATH", self_path, 0);
	}
	coll_gpu_set_source(&source);
	return 0;
}

/*
 * The CUDA driver's injection entry point (CUDA_INJECTION64_PATH): called
 * once, during cuInit(), before any work. Returns 1 (the driver ignores
 * the value).
 */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	if (want) {
		cupti_start("CUDA initialised");
	}
	return 1;
}
