/*
 * fake_cupti.c - a deterministic libcupti for tests without a GPU (see
 * fake.h). Records stay in the current buffer until it is full or a flush
 * is forced; completed buffers go back to the client on the calling thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "fake.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc on_request;
static CUpti_BuffersCallbackCompleteFunc on_complete;
static CUpti_TimestampCallbackFunc ts_cb;
static int enabled[64];
static unsigned char runtime_off[1024], driver_off[1024];
static uint8_t *buf;
static size_t buf_size, buf_used;
static size_t dropped;
static uint32_t next_corr;
static int subscribed;
static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static int runtime_domain_on;
static CUpti_ActivityThreadIdType tid_type;
static unsigned full_buffers, flushed_buffers;

/* With FAKE_CUPTI_STATS=PATH, writes "full N\nflushed M\n" there at exit:
 * how many buffers went back full and how many a flush sent back. */
__attribute__((destructor)) static void write_stats(void)
{
	const char *path = getenv("FAKE_CUPTI_STATS");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fprintf(f, "full %u\nflushed %u\n", full_buffers,
			flushed_buffers);
		fclose(f);
	}
}

static size_t size_of(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
		return sizeof(CUpti_ActivityCudaEvent2);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	default:
		return 0;
	}
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static const char *fail_mode(void)
{
	const char *f = getenv("FAKE_CUPTI_FAIL");
	return f ? f : "";
}

/* Hands the current buffer back; lock held, released around the call. */
static void complete_locked(void)
{
	uint8_t *b = buf;
	size_t used = buf_used, size = buf_size;

	buf = NULL;
	buf_used = buf_size = 0;
	if (!b) {
		return;
	}
	pthread_mutex_unlock(&lock);
	on_complete(NULL, 0, b, size, used);
	pthread_mutex_lock(&lock);
}

EXPORT uint64_t fake_cupti_now(void)
{
	struct timespec ts;

	if (ts_cb) {
		return ts_cb();
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether the client enabled activity kind k (fake.h). */
EXPORT int fake_cupti_enabled(int k)
{
	return k >= 0 && k < 64 &&
	       __atomic_load_n(&enabled[k], __ATOMIC_ACQUIRE);
}

EXPORT uint32_t fake_cupti_correlation(void)
{
	return __atomic_add_fetch(&next_corr, 1, __ATOMIC_RELAXED);
}

EXPORT int fake_cupti_record(const void *rec)
{
	const CUpti_Activity *a = rec;
	size_t n = size_of(a->kind);
	int kept = 0;

	if (!n || a->kind >= 64 || !enabled[a->kind] || !on_request) {
		return 0;
	}
	if (a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ||
	    a->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
		const CUpti_ActivityAPI *api = rec;
		unsigned char *off = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME
					     ? runtime_off
					     : driver_off;
		if (api->cbid < 1024 && off[api->cbid]) {
			return 0;
		}
	}
	pthread_mutex_lock(&lock);
	if (buf && buf_used + align8(n) > buf_size) {
		full_buffers++;
		complete_locked();
	}
	if (!buf) {
		size_t max = 0;
		uint8_t *b = NULL;
		size_t size = 0;
		pthread_mutex_unlock(&lock);
		on_request(&b, &size, &max);
		pthread_mutex_lock(&lock);
		if (buf) { /* another thread got one meanwhile */
			free(b);
		} else {
			buf = b;
			buf_size = size;
			buf_used = 0;
		}
	}
	if (buf && buf_used + align8(n) <= buf_size) {
		memcpy(buf + buf_used, rec, n);
		buf_used += align8(n);
		kept = 1;
	} else {
		dropped++;
	}
	pthread_mutex_unlock(&lock);
	return kept;
}

EXPORT int fake_cupti_thread_id_is_system(void)
{
	return tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	const char *v = getenv("FAKE_CUPTI_VERSION");

	*version = v ? (uint32_t)strtoul(v, NULL, 10) : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	switch (result) {
	case CUPTI_SUCCESS:
		*str = "CUPTI_SUCCESS";
		break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		*str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
		break;
	default:
		*str = "CUPTI_ERROR_UNKNOWN";
		break;
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
				    CUpti_CallbackFunc callback, void *userdata)
{
	if (strcmp(fail_mode(), "subscribe") == 0 || subscribed) {
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	sub_cb = callback;
	sub_ud = userdata;
	subscribed = 1;
	*subscriber = (CUpti_SubscriberHandle)(void *)&subscribed;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable,
				       CUpti_SubscriberHandle subscriber,
				       CUpti_CallbackDomain domain)
{
	if (!subscribed ||
	    subscriber != (CUpti_SubscriberHandle)(void *)&subscribed) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		__atomic_store_n(&runtime_domain_on, enable != 0,
				 __ATOMIC_RELEASE);
	}
	return CUPTI_SUCCESS;
}

EXPORT void fake_cupti_api(int exit, uint32_t cbid, uint32_t corr)
{
	CUpti_CallbackData d;

	if (!__atomic_load_n(&runtime_domain_on, __ATOMIC_ACQUIRE) || !sub_cb) {
		return;
	}
	memset(&d, 0, sizeof(d));
	d.callbackSite = exit ? CUPTI_API_EXIT : CUPTI_API_ENTER;
	d.correlationId = corr;
	sub_cb(sub_ud, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	(void)subscriber;
	subscribed = 0;
	__atomic_store_n(&runtime_domain_on, 0, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
			       CUpti_BuffersCallbackCompleteFunc complete)
{
	on_request = request;
	on_complete = complete;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (strcmp(fail_mode(), "privileges") == 0) {
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	}
	if ((unsigned)kind >= 64 || !size_of(kind)) {
		return CUPTI_ERROR_INVALID_KIND;
	}
	__atomic_store_n(&enabled[kind], 1, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind < 64) {
		enabled[kind] = 0;
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid,
						   uint8_t enable)
{
	if (cbid < 1024) {
		runtime_off[cbid] = !enable;
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid,
						  uint8_t enable)
{
	if (cbid < 1024) {
		driver_off[cbid] = !enable;
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&lock);
	if (buf && buf_used && on_complete) {
		flushed_buffers++;
		complete_locked();
	}
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
	(void)time;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer,
						size_t validBufferSizeBytes,
						CUpti_Activity **record)
{
	size_t off = 0;

	if (*record) {
		off = (size_t)((uint8_t *)*record - buffer) +
		      align8(size_of((*record)->kind));
	}
	if (off >= validBufferSizeBytes) {
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	*record = (CUpti_Activity *)(void *)(buffer + off);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context,
						       uint32_t streamId,
						       size_t *d)
{
	(void)context;
	(void)streamId;
	pthread_mutex_lock(&lock);
	*d = dropped;
	dropped = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc cb)
{
	ts_cb = cb;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	tid_type = type;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain,
					  uint32_t cbid, const char **name)
{
	static const struct {
		uint32_t cbid;
		const char *name;
	} runtime[] = {
		{CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
		 "cudaGetDeviceCount_v3020"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
		 "cudaGetDevice_v3020"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree_v3020"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset_v3020"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		 "cudaLaunchKernel_v7000"},
		{CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
		 "cudaDeviceSynchronize_v3020"},
#define NAME(call, v) {CUPTI_RUNTIME_TRACE_CBID_##call##_##v, #call "_" #v}
		NAME(cudaStreamCreate, v3020),
		NAME(cudaStreamDestroy, v5050),
		NAME(cudaStreamSynchronize, v3020),
		NAME(cudaStreamWaitEvent, v3020),
		NAME(cudaEventCreate, v3020),
		NAME(cudaEventDestroy, v3020),
		NAME(cudaEventRecord, v3020),
		NAME(cudaEventSynchronize, v3020),
#undef NAME
	};

	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	for (size_t i = 0; i < sizeof(runtime) / sizeof(*runtime); i++) {
		if (runtime[i].cbid == cbid) {
			*name = runtime[i].name;
			return CUPTI_SUCCESS;
		}
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}
