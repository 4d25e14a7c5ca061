/*
 * activity.c - CUPTI activity: enabling, buffers, the failure lines, and
 * the GPU source the collector drives (struct coll_source).
 *
 * Buffers are 4 MB, at most 16 outstanding (64 MB); past the cap CUPTI gets
 * no buffer and counts its dropped records, which are added to the GPU
 * drop count. CUPTI flushes every second on its own
 * (cuptiActivityFlushPeriod) and is forced to flush before every dump.
 *
 * CUPTI's buffer-completed callback only hands the buffer over: it pushes
 * it on a lock-free list and returns. CUPTI may call it with locks of its
 * own held, from its own thread or from the one that flushes; parsing,
 * demangling and interning (which take the string table's lock and
 * allocate) happen on the drain thread instead, on its next pass, as do
 * the calls that ask CUPTI how many records it dropped (Kineto documents a
 * deadlock with CUPTI's lock when that is asked inside the callback).
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

#include "source.h"
#include "cupti.h"
#include "gpu.h"

#define BUF_SIZE (4u << 20)
#define MAX_BUFS 16
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
FN(cuptiEnableDomain);
#undef FN

static struct coll_lock start_lock = COLL_LOCK_INIT(LOCK_SOURCE_START);
static int state; /* 0 not tried, 1 recording, -1 given up (atomic) */
static unsigned want;
static int outstanding; /* buffers handed to CUPTI (atomic) */
static CUpti_SubscriberHandle subscriber;
static int have_devices;

/*
 * A completed buffer on its way to the drain thread. It sits at the end of
 * the buffer's own allocation, behind the bytes CUPTI was given, so that
 * handing it over allocates nothing.
 */
struct handed {
	struct handed *next;
	uint8_t *buffer;
	size_t valid;
	CUcontext ctx;
	uint32_t stream;
};
static struct handed *handed_over; /* a lock-free stack (atomic head) */

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

/*
 * The runtime API's callbacks, on with call stacks only: as a CUDA call
 * begins, on the calling thread, its stack, kept by correlation id for the
 * call's activity record (launch_stack_put()).
 */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d,
				 CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *cb = data;
	uint32_t (*capture)(void) =
		__atomic_load_n(&stack_capture_fn, __ATOMIC_ACQUIRE);

	(void)ud;
	(void)id;
	if (d != CUPTI_CB_DOMAIN_RUNTIME_API || !cb || !capture ||
	    cb->callbackSite != CUPTI_API_ENTER || !coll_active()) {
		return;
	}
	uint32_t sid = capture();
	if (sid) {
		launch_stack_put(cb->correlationId, sid);
	}
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
	if (posix_memalign(&p, 8, BUF_SIZE + sizeof(struct handed)) != 0) {
		__atomic_sub_fetch(&outstanding, 1, __ATOMIC_ACQ_REL);
		return;
	}
	*buffer = p;
	*size = BUF_SIZE;
}

/* Hands a completed buffer to the drain thread; does nothing else (see
 * the top of the file). Any thread. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buffer, size_t size,
				      size_t valid)
{
	struct handed *h;

	(void)size;
	if (!buffer) {
		return;
	}
	h = (struct handed *)(buffer + BUF_SIZE);
	h->buffer = buffer;
	h->valid = valid;
	h->ctx = ctx;
	h->stream = stream;
	h->next = __atomic_load_n(&handed_over, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&handed_over, &h->next, h, 1,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED)) {
	}
}

/* Parses one handed-over buffer into the store and frees it. Drain
 * thread. */
static void parse(struct handed *h)
{
	struct gpu_rec batch[BATCH];
	CUpti_Activity *rec = NULL;
	size_t n = 0;
	CUptiResult r;

	while (h->valid > 0 &&
	       (r = p_cuptiActivityGetNextRecord(h->buffer, h->valid, &rec)) ==
		       CUPTI_SUCCESS) {
		if (convert_record(rec, &batch[n]) && ++n == BATCH) {
			store_push(batch, n);
			n = 0;
		}
	}
	if (n) {
		store_push(batch, n);
	}
	size_t dropped = 0;
	if (p_cuptiActivityGetNumDroppedRecords &&
	    p_cuptiActivityGetNumDroppedRecords(h->ctx, h->stream, &dropped) ==
		    CUPTI_SUCCESS &&
	    dropped) {
		store_note_dropped(dropped);
	}
	free(h->buffer);
	__atomic_sub_fetch(&outstanding, 1, __ATOMIC_ACQ_REL);
}

/* Parses every buffer handed over since the last call, oldest first.
 * Drain thread (owner held). */
static void parse_handed(void)
{
	struct handed *h =
		__atomic_exchange_n(&handed_over, NULL, __ATOMIC_ACQUIRE);
	struct handed *fifo = NULL;

	while (h) {
		struct handed *next = h->next;
		h->next = fifo;
		fifo = h;
		h = next;
	}
	while (fifo) {
		struct handed *next = fifo->next;
		parse(fifo);
		fifo = next;
	}
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
	GET(cuptiEnableDomain);
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

	int failed = 0;

	/* A call CUPTI cannot switch off stays in the trace: that costs
	 * slices, not correctness, so one line says so and no more. */
	for (size_t i = 0; p_cuptiActivityEnableRuntimeApi &&
			   i < sizeof(runtime) / sizeof(*runtime);
	     i++) {
		failed |= p_cuptiActivityEnableRuntimeApi(runtime[i], 0) !=
			  CUPTI_SUCCESS;
	}
	for (size_t i = 0; p_cuptiActivityEnableDriverApi &&
			   i < sizeof(driver) / sizeof(*driver);
	     i++) {
		failed |= p_cuptiActivityEnableDriverApi(driver[i], 0) !=
			  CUPTI_SUCCESS;
	}
	if (failed) {
		fprintf(stderr, "mxprof: CUPTI cannot switch off the records "
				"of calls such as cudaGetDevice; they stay in "
				"the trace\n");
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
	/* CUDA event records only tell a wait which stream recorded its
	 * event (sync.c); a CUPTI without them leaves that unknown. */
	if (want & CUPTI_WANT_API) {
		(void)p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
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
	if (__atomic_load_n(&stack_capture_fn, __ATOMIC_ACQUIRE)) {
		r = p_cuptiEnableDomain
			    ? p_cuptiEnableDomain(1, subscriber,
						  CUPTI_CB_DOMAIN_RUNTIME_API)
			    : CUPTI_ERROR_NOT_SUPPORTED;
		if (r != CUPTI_SUCCESS) {
			fprintf(stderr,
				"mxprof: CUPTI's runtime API callbacks are "
				"not available (%s); CUDA calls CUPTI "
				"records have no call stacks\n",
				result_name(r));
		}
	}
	if (p_cuptiSetThreadIdType) {
		r = p_cuptiSetThreadIdType(
			CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		if (r != CUPTI_SUCCESS) {
			fprintf(stderr,
				"mxprof: CUPTI keeps its own thread ids (%s); "
				"CUDA calls may not line up with their host "
				"threads\n",
				result_name(r));
		}
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
		/* Already failing, with its line: a second error here has
		 * nothing to add. */
		if (p_cuptiUnsubscribe) {
			(void)p_cuptiUnsubscribe(subscriber);
		}
		return rc;
	}
	quiet_noisy_calls();
	if (p_cuptiActivityFlushPeriod &&
	    (r = p_cuptiActivityFlushPeriod(1000)) != CUPTI_SUCCESS) {
		fprintf(stderr,
			"mxprof: CUPTI does not flush on its own (%s); GPU "
			"activity reaches the trace at dumps only\n",
			result_name(r));
	}
	convert_init((void *)p_cuptiGetCallbackName);
	return 0;
}

int cupti_start(const char *why)
{
	int rc = 0;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE)) {
		return state > 0 ? 0 : -EALREADY;
	}
	int quiet = ring_set_quiet(1);
	coll_lock(&start_lock);
	if (!state) {
		rc = start_locked(why);
		__atomic_store_n(&state, rc == 0 ? 1 : -1, __ATOMIC_RELEASE);
	}
	coll_unlock(&start_lock);
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
		struct gpu_device d = {.id = i};
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
		attr(&d.max_threads_per_sm,
		     CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
		attr(&d.regs_per_sm,
		     CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev);
		attr(&d.shared_per_block_optin,
		     CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
		     dev);
		attr(&d.shared_per_sm,
		     CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		     dev);
		attr(&d.reserved_shared_per_block,
		     CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, dev);
		if (mem && mem(&total, dev) == CUDA_SUCCESS) {
			d.total_mem = total;
		}
		store_set_device(&d);
	}
	have_devices = 1;
}

/*
 * The source's flush: CUPTI delivers every buffered record now, through
 * buffer_completed() (on this thread or its own), and the drain thread's
 * next pass parses them. No collector lock held. Can't fail: an error
 * gets one line, once, and the records come with CUPTI's next periodic
 * flush instead.
 */
void cupti_flush(void)
{
	static int reported;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) <= 0 ||
	    !coll_foreign_ok()) {
		return;
	}
	int quiet = ring_set_quiet(1);
	CUptiResult r =
		p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS &&
	    !__atomic_exchange_n(&reported, 1, __ATOMIC_RELAXED)) {
		fprintf(stderr,
			"mxprof: CUPTI could not flush (%s); a dump may miss "
			"the GPU activity of its last second\n",
			result_name(r));
	}
	ring_set_quiet(quiet);
}

/* The source's drain: parses what CUPTI handed over, reads the devices
 * once CUPTI runs, and feeds memory use into the tables. Owner held. */
static void drain(struct agg *a)
{
	parse_handed();
	if (!have_devices && __atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0 &&
	    coll_foreign_ok()) {
		read_devices();
	}
	store_drain(a);
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
	    !cupti_cuda_loaded() || !coll_foreign_ok()) {
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

/* fork(): CUPTI's start is held across it. */
static void fork_prepare(void)
{
	coll_lock(&start_lock);
}

static void fork_parent(void)
{
	coll_unlock(&start_lock);
}

/* A forked child of a CUDA process cannot use CUDA or CUPTI: its source
 * goes quiet, and the parent's records and buffers stay the parent's. */
static void fork_child(void)
{
	struct handed *h = handed_over;

	handed_over = NULL;
	while (h) {
		struct handed *next = h->next;
		free(h->buffer);
		h = next;
	}
	outstanding = 0;
	store_reset();
	link_reset();
	__atomic_store_n(&state, -1, __ATOMIC_RELEASE);
	coll_unlock(&start_lock);
}

/* The source records once CUPTI is attached (coll_recorded_any()). */
/* The source's calls reach CUPTI or the CUDA driver: CUPTI runs, or
 * CUDA is loaded and the next tick may start it. */
static int foreign_now(void)
{
	int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	return st > 0 || (st == 0 && cupti_cuda_loaded());
}

static int recording(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0;
}

const struct coll_source cupti_source = {
	.name = "cupti",
	.foreign = foreign_now, /* CUPTI and the CUDA driver */
	.tick = tick,
	.flush = cupti_flush,
	.drain = drain,
	.tables = tables_write,
	.reset = store_tables_reset,
	.devices = events_devices,
	.begin = link_begin,
	.claim = link_claim,
	.span = link_span,
	.events = events_write,
	.end = link_end,
	.fork_rank = LOCK_SOURCE_START,
	.fork_prepare = fork_prepare,
	.fork_parent = fork_parent,
	.fork_child = fork_child,
	.recording = recording,
};

int cupti_setup(unsigned what, const char *self_path)
{
	if (!what) {
		return -EINVAL;
	}
	want = what;
	if (self_path && *self_path) {
		setenv("CUDA_INJECTION64_PATH", self_path, 0);
	}
	return coll_source_add(&cupti_source);
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
