/*
 * gpu.h - declarations shared by the files of cupti/ only: GPU records in
 * mxprof's own form, their store, their linking to host records, and
 * their part of the trace and the tables. Only activity.c and convert.c
 * see CUPTI's types; everything here works on struct gpu_rec.
 *
 * All of it is the drain thread's (the collector's owner, see
 * source.h): records are parsed, stored, linked and written there, so
 * nothing here takes a lock (device labels, which NVTX sets from the
 * program's threads, are published atomically).
 */
#ifndef MXPROF_CUPTI_GPU_H
#define MXPROF_CUPTI_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"

enum gpu_kind {
	GPU_KERNEL = 1,
	GPU_MEMCPY,
	GPU_MEMSET,
	GPU_RUNTIME, /* a runtime API call on a host thread    */
	GPU_DRIVER,  /* a driver API call on a host thread     */
	GPU_SYNC,    /* a synchronisation, by correlation      */
	GPU_MEMORY,  /* an allocation (bytes) or a free        */
	GPU_EVENT,   /* a CUDA event recorded on a stream      */
};

/* Flag bits of a gpu_rec. */
#define GPU_FREE 0x1u /* GPU_MEMORY: a release, not an allocation */
/* GPU_MEMCPY: the source and destination memory kinds (CUPTI's
 * CUpti_ActivityMemoryKind) in flags, 4 bits each. */
#define GPU_COPY_KINDS(src, dst)                                               \
	((uint16_t)((((unsigned)(src)&0xfu) << 4) | ((unsigned)(dst)&0xfu)))
#define GPU_COPY_SRC(flags) (((unsigned)(flags) >> 4) & 0xfu)
#define GPU_COPY_DST(flags) ((unsigned)(flags)&0xfu)
/* GPU_SYNC: CUPTI's CUpti_ActivitySynchronizationType in flags. */
#define GPU_SYNC_EVENT	     1u /* cudaEventSynchronize          */
#define GPU_SYNC_STREAM_WAIT 2u /* cudaStreamWaitEvent           */
#define GPU_SYNC_STREAM	     3u /* cudaStreamSynchronize         */
#define GPU_SYNC_CONTEXT     4u /* cudaDeviceSynchronize and alike */
/* CUPTI's "not applicable" stream, event and sync ids of sync records. */
#define GPU_NONE 0xffffffffu

/* One GPU activity record. Times are CLOCK_MONOTONIC ns, the clock host
 * ticks are converted to (CUPTI's timestamp callback, activity.c). */
struct gpu_rec {
	uint64_t start;
	uint64_t end;	/* == start for GPU_MEMORY             */
	uint64_t bytes; /* memcpy, memset, memory              */
	uint32_t name;	/* string id: kernel, API or copy kind */
	uint32_t correlation;
	uint32_t device;
	uint32_t stream;
	uint32_t tid;  /* host thread of API records (gettid) */
	uint16_t kind; /* enum gpu_kind                      */
	uint16_t flags;
	int32_t grid[3];
	int32_t block[3];
	uint32_t regs;	    /* registers per thread               */
	uint32_t shmem;	    /* static + dynamic shared memory     */
	uint32_t dyn_shmem; /* the dynamic part of shmem        */
	uint32_t context;   /* CUPTI's context id of device work  */
	uint32_t cbid;	    /* CUPTI's callback id of API records */
	/* GPU_SYNC and GPU_EVENT: the CUDA event (GPU_NONE when the sync is
	 * on no event) and CUPTI's id tying a sync to the event's record. */
	uint32_t event;
	uint64_t event_sync;
	uint64_t queued; /* kernels: CUPTI's queued timestamp, as it comes */
	/* Filled while a dump links records (link.c). */
	uint32_t ext;	   /* external id of the enclosing host range */
	uint32_t absorbed; /* a hook's slice shows this API call      */
	uint32_t site;	   /* that slice's call site (string id), 0    */
	uint32_t stack;	   /* API records: the call's stack (stacks.c), 0 */
};

/* Properties of one device, for the trace's deviceProperties. */
struct gpu_device {
	int id;
	char name[128];
	int cc_major, cc_minor;
	uint64_t total_mem;
	int num_sms;
	int max_threads_per_block;
	int max_shared_per_block;
	int warp_size;
	int regs_per_block;
	int max_threads_per_sm;
	int regs_per_sm;
	int shared_per_block_optin;
	int shared_per_sm;
	int reserved_shared_per_block; /* the driver's, per block */
};

#define GPU_MAX_DEVICES 64

/* ---- store.c: the records, devices and memory in use ------------------- */

/*
 * Appends n records, leaving out work that started while the profiler was
 * not recording (memory events excepted: Device Storage needs them all).
 * Returns 0, or -ENOSPC when the store is full (1M records; the rest are
 * dropped and counted).
 */
int store_push(const struct gpu_rec *r, size_t n);

/* Returns record i (i < store_count()). */
struct gpu_rec *store_at(size_t i);

/* Returns the number of records stored. */
size_t store_count(void);

/* The first record the GPU tables count: dumps(reset=1) moves it past
 * every record stored (store_tables_reset(), the source's reset); the
 * trace keeps them all. Owner lock held. Can't fail. */
size_t store_tables_from(void);
void store_tables_reset(void);

/* Counts n records lost before they reached the store. Can't fail. */
void store_note_dropped(uint64_t n);

/* Returns the records lost so far. */
uint64_t store_dropped(void);

/* Records the properties of device d->id (kept once per id). */
void store_set_device(const struct gpu_device *d);

/* Returns device id's properties, or NULL when unknown. */
const struct gpu_device *store_device(int id);

/* Names device in the trace (NVTX), from any thread; lock-free. The
 * second writes the name into buf (empty when none). */
void store_label_device(int device, const char *name);
void store_device_label(int device, char *buf, size_t len);

/* The string id of device's memory counter, "Memory: cuda/N". */
uint32_t store_memory_name(uint32_t device);

/* Feeds the records stored since the last call into a (Device Storage)
 * and names the host threads of API records. Can't fail. */
void store_drain(struct agg *a);

/* Forgets every record (a forked child: the parent's stay its own). */
void store_reset(void);

/* ---- convert.c: CUPTI's records into gpu_rec ---------------------------- */

/* Keeps CUPTI's cuptiGetCallbackName (API names) and finds the program's
 * demangler. Call once CUPTI is loaded. */
void convert_init(void *get_callback_name);

/* Converts one CUPTI activity record (a CUpti_Activity *) into g, with its
 * names interned. Returns 1, or 0 for a record that is not kept. Drain
 * thread. */
int convert_record(const void *activity, struct gpu_rec *g);

/* ---- launch_stack.c: call stacks of CUDA calls, by correlation id ------- */

/* The capture (cupti_set_stacks()), NULL without stacks. Atomic. */
extern uint32_t (*stack_capture_fn)(void);
/* Keeps stack for the call of correlation id corr; any thread. */
void launch_stack_put(uint32_t corr, uint32_t stack);
/* The stack kept for corr, 0 when none (or lost). */
uint32_t launch_stack_get(uint32_t corr);

/* ---- marks.c: flows and track metadata, written by events, link, sync -- */

/* Where a flow's end ("f") goes on the GPU slice from start lasting dur
 * ns: its middle, strictly inside it when dur >= 2. */
uint64_t marks_flow_at(uint64_t start, uint64_t dur);

/* Where a flow's start ("s") goes on the launching call's slice from
 * start lasting dur ns: its beginning, as Kineto's, 1 ns in when dur >= 2
 * (strictly inside it, not on the end of a slice just before it): never
 * after the flow's end, even for a synchronous call that returns after
 * the GPU work it launched. */
uint64_t marks_flow_from(uint64_t start, uint64_t dur);

/* Writes a flow end or start (ph "s"/"f") of correlation corr. */
void marks_flow(struct coll_trace *t, const char *ph, uint32_t corr,
		int64_t pid, int64_t tid, uint64_t mono_ns);

/* Writes a metadata event ("process_name", "thread_name", ...) with one
 * arg, key: the string sval, or the number ival when sval is NULL. */
void marks_meta(struct coll_trace *t, const char *what, int64_t pid,
		int64_t tid, const char *key, const char *sval, int64_t ival);

/* ---- link.c: GPU records and host spans -------------------------------- */

/* r's duration in ns (0 for a record that ends before it starts). */
static inline uint64_t gpu_dur(const struct gpu_rec *r)
{
	return r->end > r->start ? r->end - r->start : 0;
}

static inline int gpu_is_api(const struct gpu_rec *r)
{
	return r->kind == GPU_RUNTIME || r->kind == GPU_DRIVER;
}

static inline int gpu_is_device_work(const struct gpu_rec *r)
{
	return r->kind == GPU_KERNEL || r->kind == GPU_MEMCPY ||
	       r->kind == GPU_MEMSET;
}

/* The coll_source members of linking (source.h): begin indexes the
 * records; claim and span are the two passes over the host spans; end
 * keeps the marks for the tables. */
int link_begin(void);
void link_claim(int tid, const struct coll_rec *r, uint32_t site);
void link_span(struct coll_trace *t, int tid, const struct coll_rec *r,
	       int after);
void link_end(void);

/* Returns the API record of correlation corr, or NULL. */
const struct gpu_rec *link_api_for(uint32_t corr);

/* Returns non-zero when correlation corr launched device work or waited
 * in a sync record: its call starts a flow. */
int link_has_device_work(uint32_t corr);

/* Returns the host range external id ext was given to, or NULL. */
const struct coll_rec *link_range(uint32_t ext);

/* Returns how many records the last dump linked. */
size_t link_count(void);

/* Forgets the index (a forked child). */
void link_reset(void);

/* ---- events.c: the GPU part of the trace -------------------------------- */

/* The coll_source members: the devices of deviceProperties, and the GPU
 * events after the host events. */
void events_devices(struct out *o, int *first);
void events_write(struct coll_trace *t);

/* ---- memswitch.c: profile_memory, by time ---------------------------------
 */

/* Notes that device memory records count (on) or not from time at (the
 * records' clock) on. Any thread. */
void memswitch_set_at(int on, uint64_t at);

/* Returns non-zero when device memory records of time t count. */
int memswitch_on_at(uint64_t t);

/* Forgets every change: memory records count again (tests). */
void memswitch_reset(void);

/* ---- occupancy.c: a kernel's estimated occupancy ----------------------- */

/* Returns kernel k's "est. achieved occupancy %" as Kineto computes it on
 * device d (the CUDA toolkit's occupancy calculator, the launch's blocks
 * per SM as a cap), or -1 when d's limits are unknown. */
int occupancy_percent(const struct gpu_rec *k, const struct gpu_device *d);

/* ---- sync.c: synchronisation records in the trace ----------------------- */

/* Indexes the first n records' CUDA events and contexts for one dump.
 * Can't fail (out of memory: waits show an unknown source). */
void sync_begin(size_t n);

/* Writes sync record r (with its flow end) on its device's track; returns
 * the device and sets *track to the "tid" used. Sync tracks of their own
 * are named by sync_end(); a stream's track is the caller's to name. */
uint32_t sync_write(struct coll_trace *t, const struct gpu_rec *r,
		    int64_t *track);

/* Names the sync tracks written, then forgets the index. */
void sync_end(struct coll_trace *t);

/* Forgets the index without writing (also what sync_end() ends with). */
void sync_end_free(void);

/* ---- tables.c: the GPU tables -------------------------------------------- */

/* The coll_source member: the GPU sections, as rows for every format. */
void tables_write(struct table_sink *t, const struct table_opts *o);

#endif /* MXPROF_CUPTI_GPU_H */
