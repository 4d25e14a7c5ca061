/*
 * fake_cudart.c - a CUDA runtime without a GPU, for tests (see fake.h).
 *
 * Device memory is host memory. Every call makes the records CUPTI would:
 * an API record (correlation id, system thread id, entry and exit times)
 * and the GPU work it launched, with deterministic durations:
 *   kernel   grid.x * 1000 ns        (the kernel's name is the string that
 *                                     func points to)
 *   memcpy   bytes / 10 ns           (10 GB/s)
 *   memset   bytes / 20 ns           (20 GB/s)
 * Work on a stream starts 500 ns after its launch call began, or when the
 * stream's previous work ends. Stream 0 is CUPTI's legacy stream id 7.
 * A kernel whose name begins with "held_" keeps its stream busy until the
 * next call that reaches the stream: it ends when the next work launched
 * there starts (at least grid.x * 1000 ns after its start), so the two
 * run back to back whatever the host's pace; its record is made then.
 * Streams and events: cudaStreamCreate numbers streams from 13, as CUPTI
 * does; cudaEventRecord makes CUPTI's CUDA event record, and the three
 * waits (cudaEventSynchronize, cudaStreamSynchronize,
 * cudaStreamWaitEvent) and cudaDeviceSynchronize make sync records.
 *
 * The first call plays cuInit: it loads the library named by
 * CUDA_INJECTION64_PATH and calls its InitializeInjection(), as libcuda
 * does. The driver's device queries (cuDeviceGet*) describe one device,
 * "mxprof fake GPU", compute capability 9.0, 132 SMs, 80 GiB.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "fake.h"

#define EXPORT	      __attribute__((visibility("default")))
#define LEGACY_STREAM 7u
/* CUPTI numbers contexts from 1: the primary context of device 0. */
#define FAKE_CONTEXT 1u

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t busy_until[64];
static struct {
	void *p;
	size_t n;
} allocs[4096];

static fake_cupti_now_fn now_fn;
static fake_cupti_correlation_fn corr_fn;
static fake_cupti_record_fn record_fn;
static fake_cupti_api_fn api_fn;

static void inject(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");

	if (path && *path) {
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		int (*init)(void) =
			h ? (int (*)(void))dlsym(h, "InitializeInjection")
			  : NULL;
		if (init) {
			init();
		}
	}
}

/* Finds the fake libcupti once somebody loaded it. */
static int cupti(void)
{
	if (record_fn) {
		return 1;
	}
	void *h = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
	if (!h) {
		return 0;
	}
	now_fn = (fake_cupti_now_fn)dlsym(h, "fake_cupti_now");
	corr_fn = (fake_cupti_correlation_fn)dlsym(h, "fake_cupti_correlation");
	api_fn = (fake_cupti_api_fn)dlsym(h, "fake_cupti_api");
	__atomic_store_n(&record_fn,
			 (fake_cupti_record_fn)dlsym(h, "fake_cupti_record"),
			 __ATOMIC_RELEASE);
	dlclose(h);
	return record_fn != NULL;
}

static uint64_t now(void)
{
	struct timespec ts;

	if (cupti() && now_fn) {
		return now_fn();
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct call {
	uint64_t start;
	uint32_t corr;
	uint32_t cbid;
};

static struct call enter(uint32_t cbid)
{
	pthread_once(&init_once, inject);
	struct call c = {now(), cupti() ? corr_fn() : 0, cbid};
	if (c.corr && api_fn) {
		api_fn(0, cbid, c.corr);
	}
	return c;
}

static void leave(const struct call *c)
{
	if (!cupti()) {
		return;
	}
	if (c->corr && api_fn) {
		api_fn(1, c->cbid, c->corr);
	}
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = c->cbid;
	a.start = c->start;
	a.end = now();
	a.processId = (uint32_t)getpid();
	a.threadId = (uint32_t)syscall(SYS_gettid);
	a.correlationId = c->corr;
	record_fn(&a);
}

/* A "held_" kernel's record, per stream slot, until the stream's next
 * call; under lock. */
static struct {
	int on;
	CUpti_ActivityKernel10 k;
} held[64];

/* Ends the held kernel of stream, if any: at next (the next work's start)
 * when that is later than its own end, and makes its record. */
static void settle(uint32_t stream, uint64_t next)
{
	CUpti_ActivityKernel10 k;
	int on;

	pthread_mutex_lock(&lock);
	on = held[stream % 64].on;
	k = held[stream % 64].k;
	held[stream % 64].on = 0;
	if (on) {
		if (next > k.end) {
			k.end = k.completed = next;
		}
		busy_until[stream % 64] = k.end;
	}
	pthread_mutex_unlock(&lock);
	if (on && record_fn) {
		record_fn(&k);
	}
}

static void settle_all(void)
{
	for (uint32_t i = 0; i < 64; i++) {
		settle(i, 0);
	}
}

/* Schedules dur ns of work on stream after launch time t; returns start. */
static uint64_t schedule(uint32_t stream, uint64_t t, uint64_t dur)
{
	uint64_t start = t + 500;

	pthread_mutex_lock(&lock);
	uint64_t *b = &busy_until[stream % 64];
	if (*b > start) {
		start = *b;
	}
	*b = start + dur;
	pthread_mutex_unlock(&lock);
	return start;
}

static uint32_t stream_id(cudaStream_t s)
{
	return s ? (uint32_t)(uintptr_t)s : LEGACY_STREAM;
}

static void memory_record(int release, size_t bytes, uint32_t corr)
{
	CUpti_ActivityMemory4 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType =
		release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
			: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = corr;
	m.bytes = bytes;
	m.timestamp = now();
	m.deviceId = 0;
	m.processId = (uint32_t)getpid();
	record_fn(&m);
}

struct fake_event;
static void wait_until(uint64_t until);

/* The sync record CUPTI makes of a call that waited (from 10 ns after
 * the call began until now, 20 ns at least): of a stream (or CUPTI's invalid
 * value), and of event e's latest record when e is not NULL. */
static void sync_record(const struct call *c,
			CUpti_ActivitySynchronizationType type, uint32_t stream,
			const struct fake_event *e);

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	struct call c =
		enter(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020);
	*count = 1;
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
	*device = 0;
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
	cudaError_t rc = cudaErrorMemoryAllocation;

	*p = malloc(size ? size : 1);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; *p && i < sizeof(allocs) / sizeof(*allocs); i++) {
		if (!allocs[i].p) {
			allocs[i].p = *p;
			allocs[i].n = size;
			rc = cudaSuccess;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (rc == cudaSuccess && cupti()) {
		memory_record(0, size, c.corr);
	}
	leave(&c);
	return rc;
}

EXPORT cudaError_t cudaFree(void *p)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
	size_t n = 0;
	int found = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; p && i < sizeof(allocs) / sizeof(*allocs); i++) {
		if (allocs[i].p == p) {
			n = allocs[i].n;
			allocs[i].p = NULL;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (found) {
		free(p);
		if (cupti()) {
			memory_record(1, n, c.corr);
		}
	}
	leave(&c);
	return found || !p ? cudaSuccess : cudaErrorInvalidValue;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
			      enum cudaMemcpyKind kind)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
	uint64_t dur = count / 10;

	memcpy(dst, src, count);
	settle(LEGACY_STREAM, c.start + 500);
	uint64_t start = schedule(LEGACY_STREAM, c.start, dur);
	if (cupti()) {
		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = kind == cudaMemcpyHostToDevice
				     ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
			     : kind == cudaMemcpyDeviceToHost
				     ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
				     : CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
		/* Host buffers here are malloc's: pageable memory. */
		m.srcKind = kind == cudaMemcpyHostToDevice
				    ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
				    : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.dstKind = kind == cudaMemcpyDeviceToHost
				    ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
				    : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.bytes = count;
		m.start = start;
		m.end = start + dur;
		m.deviceId = 0;
		m.contextId = FAKE_CONTEXT;
		m.streamId = LEGACY_STREAM;
		m.correlationId = c.corr;
		record_fn(&m);
	}
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *p, int value, size_t count)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020);
	uint64_t dur = count / 20;

	memset(p, value, count);
	settle(LEGACY_STREAM, c.start + 500);
	uint64_t start = schedule(LEGACY_STREAM, c.start, dur);
	if (cupti()) {
		CUpti_ActivityMemset4 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.value = (uint32_t)value;
		m.bytes = count;
		m.start = start;
		m.end = start + dur;
		m.deviceId = 0;
		m.contextId = FAKE_CONTEXT;
		m.streamId = LEGACY_STREAM;
		m.correlationId = c.corr;
		m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		record_fn(&m);
	}
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block,
				    void **args, size_t shared,
				    cudaStream_t stream)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	uint32_t sid = stream_id(stream);
	uint64_t dur = (uint64_t)grid.x * 1000;

	(void)args;
	settle(sid, c.start + 500);
	uint64_t start = schedule(sid, c.start, dur);
	if (cupti()) {
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.registersPerThread = 32;
		k.start = start;
		k.end = start + dur;
		k.completed = k.end;
		k.deviceId = 0;
		k.contextId = FAKE_CONTEXT;
		k.streamId = sid;
		k.gridX = (int32_t)grid.x;
		k.gridY = (int32_t)grid.y;
		k.gridZ = (int32_t)grid.z;
		k.blockX = (int32_t)block.x;
		k.blockY = (int32_t)block.y;
		k.blockZ = (int32_t)block.z;
		k.staticSharedMemory = 1024;
		k.dynamicSharedMemory = (int32_t)shared;
		k.correlationId = c.corr;
		k.name = (const char *)func;
		if (strncmp(k.name, "held_", 5) == 0) {
			pthread_mutex_lock(&lock);
			held[sid % 64].on = 1;
			held[sid % 64].k = k;
			pthread_mutex_unlock(&lock);
		} else {
			record_fn(&k);
		}
	}
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	struct call c =
		enter(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
	uint64_t until = 0;

	settle_all();

	pthread_mutex_lock(&lock);
	for (int i = 0; i < 64; i++) {
		if (busy_until[i] > until) {
			until = busy_until[i];
		}
	}
	pthread_mutex_unlock(&lock);
	/* Wait, as the real call does, until the device is idle. */
	wait_until(until);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
		    CUPTI_SYNCHRONIZATION_INVALID_VALUE, NULL);
	leave(&c);
	return cudaSuccess;
}

/* ---- streams and events ---------------------------------------------------
 */

/* CUPTI numbers the streams a program creates from 13 in a context. */
static uint32_t next_stream = 13;
static uint32_t next_event = 1;
static uint64_t next_event_sync = 1;

/* A CUDA event: where and when its latest record completes. */
struct fake_event {
	uint32_t id;
	uint32_t recorded; /* 0 until cudaEventRecord */
	uint64_t sync_id;  /* CUPTI's id of the latest record */
	uint64_t done;	   /* when the work before the record ends */
};

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020);

	pthread_mutex_lock(&lock);
	*s = (cudaStream_t)(uintptr_t)next_stream++;
	pthread_mutex_unlock(&lock);
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050);

	(void)s;
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020);
	struct fake_event *f = calloc(1, sizeof(*f));

	if (f) {
		pthread_mutex_lock(&lock);
		f->id = next_event++;
		pthread_mutex_unlock(&lock);
	}
	*e = (cudaEvent_t)f;
	leave(&c);
	return f ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020);

	free(e);
	leave(&c);
	return cudaSuccess;
}

/* The record real CUPTI makes of cudaEventRecord (CUDA_EVENT kind). */
EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream)
{
	struct call c = enter(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
	struct fake_event *f = (struct fake_event *)e;
	uint32_t sid = stream_id(stream);

	settle(sid, 0);
	pthread_mutex_lock(&lock);
	f->recorded = 1;
	f->sync_id = next_event_sync++;
	f->done = busy_until[sid % 64];
	pthread_mutex_unlock(&lock);
	if (cupti()) {
		CUpti_ActivityCudaEvent2 r;
		memset(&r, 0, sizeof(r));
		r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
		r.correlationId = c.corr;
		r.contextId = FAKE_CONTEXT;
		r.streamId = sid;
		r.eventId = f->id;
		r.deviceId = 0;
		r.cudaEventSyncId = f->sync_id;
		record_fn(&r);
	}
	leave(&c);
	return cudaSuccess;
}

/* Waits, as the real calls do, until the device reaches until. */
static void wait_until(uint64_t until)
{
	while (now() < until) {
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	struct call c =
		enter(CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020);
	const struct fake_event *f = (const struct fake_event *)e;

	wait_until(f->done);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
		    CUPTI_SYNCHRONIZATION_INVALID_VALUE, f);
	leave(&c);
	return cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	struct call c =
		enter(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020);
	uint32_t sid = stream_id(stream);

	settle(sid, 0);
	pthread_mutex_lock(&lock);
	uint64_t until = busy_until[sid % 64];
	pthread_mutex_unlock(&lock);
	wait_until(until);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
		    sid, NULL);
	leave(&c);
	return cudaSuccess;
}

/* The stream's next work starts no earlier than the event's: the host
 * does not wait. */
EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t e,
				       unsigned int flags)
{
	struct call c =
		enter(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020);
	const struct fake_event *f = (const struct fake_event *)e;
	uint32_t sid = stream_id(stream);

	(void)flags;
	settle(sid, 0);
	pthread_mutex_lock(&lock);
	if (busy_until[sid % 64] < f->done) {
		busy_until[sid % 64] = f->done;
	}
	pthread_mutex_unlock(&lock);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
		    sid, f);
	leave(&c);
	return cudaSuccess;
}

static void sync_record(const struct call *c,
			CUpti_ActivitySynchronizationType type, uint32_t stream,
			const struct fake_event *e)
{
	if (!cupti()) {
		return;
	}
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = type;
	s.start = c->start + 10;
	/* A wait lasts a little even when there is nothing to wait for. */
	while ((s.end = now()) < s.start + 20) {
	}
	s.correlationId = c->corr;
	s.contextId = FAKE_CONTEXT;
	s.streamId = stream;
	s.cudaEventId = e ? e->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	s.cudaEventSyncId =
		e ? e->sync_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	record_fn(&s);
}

/* ---- the driver's device queries ---------------------------------------- */

EXPORT CUresult cuDeviceGetCount(int *count)
{
	*count = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	*dev = ordinal;
	return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	(void)dev;
	strncpy(name, "mxprof fake GPU", (size_t)len);
	name[len - 1] = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr,
				     CUdevice dev)
{
	(void)dev;
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*v = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*v = 132;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*v = 1024;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		*v = 49152;
		break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		*v = 32;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
		*v = 65536;
		break;
	/* An H100's limits (compute capability 9.0). */
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		*v = 2048;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
		*v = 65536;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		*v = 232448;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
		*v = 233472;
		break;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
		*v = 1024;
		break;
	default:
		*v = 0;
		break;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	(void)dev;
	*bytes = (size_t)80 << 30;
	return CUDA_SUCCESS;
}
