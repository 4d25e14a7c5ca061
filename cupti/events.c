/*
 * events.c - the GPU part of the trace: API calls no hook showed, sync
 * records, kernels, copies and sets with their launch flows, the device
 * memory counters, the GPU tracks' metadata and deviceProperties.
 *
 * Kineto's conventions: GPU events have the device as "pid" and the
 * stream as "tid"; a launch flow is a "ph":"s" on the launching call and
 * a "ph":"f" with "bp":"e" on the GPU event, both "cat":"ac2g" with the
 * correlation id. Each end sits at the middle of its slice, strictly
 * inside it: an end on a slice's edge binds, in the catapult viewer, to
 * the slice that ends there when work runs back to back. Written on the drain
 * thread, between link_begin() and link_end() of the same dump, as events
 * (struct coll_event) the trace writer formats: no file format here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static const char *copy_cat(uint16_t kind)
{
	switch (kind) {
	case GPU_KERNEL:
		return "kernel";
	case GPU_MEMCPY:
		return "gpu_memcpy";
	case GPU_MEMSET:
		return "gpu_memset";
	case GPU_DRIVER:
		return "cuda_driver";
	case GPU_SYNC:
		return "cuda_sync";
	default:
		return "cuda_runtime";
	}
}

/* A memory kind as Kineto names it (CUpti_ActivityMemoryKind). */
static const char *memory_kind(unsigned kind)
{
	static const char *const names[] = {
		"Unknown", "Pageable", "Pinned",	"Device",
		"Array",   "Managed",  "Device Static", "Managed Static"};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind]
						       : "Unknown";
}

/* Fills e with a GPU record's slice: its category, name (buf: room for a
 * copy's name), track, times, stack and correlation. */
static void x_head(struct coll_trace *t, struct coll_event *e,
		   const struct gpu_rec *r, int64_t pid, int64_t tid, char *buf,
		   size_t len)
{
	e->ph = 'X';
	e->cat = copy_cat(r->kind);
	if (r->kind == GPU_MEMCPY) {
		/* Kineto's name: "Memcpy HtoD (Pageable -> Device)"; the
		 * tables keep the copy kind alone. */
		snprintf(buf, len, "%s (%s -> %s)", strtab_get(r->name),
			 memory_kind(GPU_COPY_SRC(r->flags)),
			 memory_kind(GPU_COPY_DST(r->flags)));
		e->name = buf;
	} else {
		e->name = strtab_get(r->name);
	}
	e->pid = pid;
	e->tid = tid;
	e->ts = r->start;
	e->dur = gpu_dur(r);
	e->sf = r->stack ? coll_trace_sf(t, r->stack) : 0;
	coll_event_arg(e, "correlation", COLL_ARG_U64)->v.u = r->correlation;
}

static void arg_u64(struct coll_event *e, const char *key, uint64_t v)
{
	coll_event_arg(e, key, COLL_ARG_U64)->v.u = v;
}

static void arg_i64(struct coll_event *e, const char *key, int64_t v)
{
	coll_event_arg(e, key, COLL_ARG_I64)->v.i = v;
}

static void dims(struct coll_event *e, const char *key, const int32_t *d)
{
	struct coll_arg *a = coll_event_arg(e, key, COLL_ARG_INTS);

	a->n = 3;
	a->v.ints = d;
}

static void arg_f64(struct coll_event *e, const char *key, double v, int prec)
{
	struct coll_arg *a = coll_event_arg(e, key, COLL_ARG_F64);

	a->prec = prec;
	a->v.f = v;
}

/* Kineto's "blocks per SM" (the grid's blocks over the device's SMs) and
 * "warps per SM" (those blocks' warps), when the device is known. */
static void per_sm(struct coll_event *e, const struct gpu_rec *r)
{
	const struct gpu_device *p = store_device((int)r->device);

	if (!p || p->num_sms <= 0 || p->warp_size <= 0) {
		return;
	}
	double blocks = (double)r->grid[0] * r->grid[1] * r->grid[2] /
			(double)p->num_sms;
	double warps = blocks * r->block[0] * r->block[1] * r->block[2] /
		       (double)p->warp_size;
	arg_f64(e, "blocks per SM", blocks, -6);
	arg_f64(e, "warps per SM", warps, -6);
	int occ = occupancy_percent(r, p);
	if (occ >= 0) {
		coll_event_arg(e, "est. achieved occupancy %", COLL_ARG_I64)
			->v.i = occ;
	}
}

static void device_event(struct coll_trace *t, const struct gpu_rec *r)
{
	const struct gpu_rec *api = link_api_for(r->correlation);
	uint32_t ext = api ? api->ext : 0;
	struct coll_event e = {0};
	char name[128];

	x_head(t, &e, r, r->device, r->stream, name, sizeof(name));
	if (ext) {
		arg_u64(&e, "External id", ext);
	}
	arg_u64(&e, "device", r->device);
	arg_u64(&e, "context", r->context);
	arg_u64(&e, "stream", r->stream);
	if (r->kind == GPU_KERNEL) {
		/* Kineto writes CUPTI's value as it comes (0 unless the
		 * program enabled CUPTI's latency timestamps). */
		arg_u64(&e, "queued", r->queued);
		dims(&e, "grid", r->grid);
		dims(&e, "block", r->block);
		arg_u64(&e, "registers per thread", r->regs);
		arg_u64(&e, "shared memory", r->shmem);
		per_sm(&e, r);
	} else {
		uint64_t dur = gpu_dur(r);
		arg_u64(&e, "bytes", r->bytes);
		arg_f64(&e, "memory bandwidth (GB/s)",
			dur ? (double)r->bytes / (double)dur : 0.0, 4);
	}
	coll_trace_write(t, &e);
	if (api && r->correlation) {
		marks_flow(t, "f", r->correlation, r->device, r->stream,
			   marks_flow_at(r->start, gpu_dur(r)));
	}
}

struct stream_key {
	uint32_t device, stream;
};

static int add_stream(struct stream_key **v, size_t *n, size_t *cap,
		      uint32_t device, uint32_t stream)
{
	for (size_t i = 0; i < *n; i++) {
		if ((*v)[i].device == device && (*v)[i].stream == stream) {
			return 0;
		}
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct stream_key *nv = realloc(*v, c * sizeof(*nv));
		if (!nv) {
			return -ENOMEM;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = (struct stream_key){device, stream};
	return 0;
}

/*
 * Writes the GPU part of traceEvents: API calls no hook showed, sync
 * records, kernels, copies and sets with their flows, device memory
 * counters and the GPU tracks' metadata. Call after the host events,
 * between link_begin() and link_end(). Owner held. Can't fail
 * (write errors stay in o).
 */
void events_write(struct coll_trace *t)
{
	int host_pid = t->pid;
	struct stream_key *streams = NULL;
	size_t nstreams = 0, cap = 0;
	int64_t use[GPU_MAX_DEVICES] = {0};
	int counter_dev[GPU_MAX_DEVICES] = {0};
	int sync_dev[GPU_MAX_DEVICES] = {0};

	sync_begin(link_count());
	/* The API calls first, then the work they launched: a reader that
	 * streams the file (mxprof report's call sites) meets each launch
	 * before its GPU work, whatever order CUPTI handed them over in. */
	for (size_t i = 0, n = link_count(); i < n; i++) {
		const struct gpu_rec *r = store_at(i);
		if (gpu_is_api(r)) {
			if (r->absorbed) {
				continue;
			}
			struct coll_event e = {0};
			char name[128];
			x_head(t, &e, r, host_pid, r->tid, name, sizeof(name));
			if (r->ext) {
				arg_u64(&e, "External id", r->ext);
			}
			arg_u64(&e, "cbid", r->cbid);
			coll_trace_write(t, &e);
			if (link_has_device_work(r->correlation)) {
				marks_flow(
					t, "s", r->correlation, host_pid,
					r->tid,
					marks_flow_from(r->start, gpu_dur(r)));
			}
		}
	}
	for (size_t i = 0, n = link_count(); i < n; i++) {
		const struct gpu_rec *r = store_at(i);
		if (gpu_is_api(r)) {
			continue;
		} else if (r->kind == GPU_SYNC) {
			int64_t track;
			uint32_t d = sync_write(t, r, &track);
			if (d < GPU_MAX_DEVICES) {
				sync_dev[d] = 1;
			}
			if (track >= 0 && (int64_t)r->stream == track) {
				add_stream(&streams, &nstreams, &cap, d,
					   r->stream);
			}
		} else if (gpu_is_device_work(r)) {
			device_event(t, r);
			add_stream(&streams, &nstreams, &cap, r->device,
				   r->stream);
		} else if (r->kind == GPU_MEMORY &&
			   r->device < GPU_MAX_DEVICES) {
			int64_t *u = &use[r->device];
			*u += (r->flags & GPU_FREE) ? -(int64_t)r->bytes
						    : (int64_t)r->bytes;
			if (*u < 0) {
				*u = 0;
			}
			char name[64];
			snprintf(name, sizeof(name), "Memory: cuda/%u",
				 r->device);
			struct coll_event e = {.ph = 'C',
					       .cat = "gpu_memory",
					       .name = name,
					       .pid = r->device,
					       .ts = r->start,
					       .group = "Device Storage"};
			coll_event_arg(&e, "value", COLL_ARG_I64)->v.i = *u;
			coll_trace_write(t, &e);
			counter_dev[r->device] = 1;
		}
	}
	int named[GPU_MAX_DEVICES] = {0};
	for (size_t i = 0; i < nstreams; i++) {
		uint32_t d = streams[i].device;
		if (d < GPU_MAX_DEVICES) {
			named[d] = 1;
		}
	}
	for (int d = 0; d < GPU_MAX_DEVICES; d++) {
		if (!named[d] && !counter_dev[d] && !sync_dev[d]) {
			continue;
		}
		char label[200], given[64];
		const struct gpu_device *dev = store_device(d);
		store_device_label(d, given, sizeof(given));
		if (given[0]) {
			snprintf(label, sizeof(label), "GPU %d (%s)", d, given);
		} else if (dev) {
			snprintf(label, sizeof(label), "GPU %d (%s)", d,
				 dev->name);
		} else {
			snprintf(label, sizeof(label), "GPU %d", d);
		}
		marks_meta(t, "process_name", d, 0, "name", label, 0);
		marks_meta(t, "process_sort_index", d, 0, "sort_index", NULL,
			   0x1000000 + d);
		if (counter_dev[d]) {
			marks_meta(t, "thread_name", d, 0, "name",
				   "device memory", 0);
		}
	}
	for (size_t i = 0; i < nstreams; i++) {
		char label[64];
		snprintf(label, sizeof(label), "stream %u", streams[i].stream);
		marks_meta(t, "thread_name", streams[i].device,
			   streams[i].stream, "name", label, 0);
		marks_meta(t, "thread_sort_index", streams[i].device,
			   streams[i].stream, "sort_index", NULL,
			   streams[i].stream);
	}
	free(streams);
	sync_end(t);
}

/*
 * Writes the known devices as entries of the top-level "deviceProperties"
 * array (see struct coll_source). Can't fail.
 */
void events_devices(struct out *o, int *first)
{
	for (int d = 0; d < GPU_MAX_DEVICES; d++) {
		const struct gpu_device *p = store_device(d);
		struct coll_event e = {0};
		char cc[32];
		if (!p) {
			continue;
		}
		snprintf(cc, sizeof(cc), "%d.%d", p->cc_major, p->cc_minor);
		coll_event_arg(&e, "id", COLL_ARG_I64)->v.i = p->id;
		coll_event_arg(&e, "name", COLL_ARG_STR)->v.s = p->name;
		coll_event_arg(&e, "computeCapability", COLL_ARG_STR)->v.s = cc;
		arg_i64(&e, "computeMajor", p->cc_major);
		arg_i64(&e, "computeMinor", p->cc_minor);
		arg_u64(&e, "totalGlobalMem", p->total_mem);
		arg_i64(&e, "numSms", p->num_sms);
		arg_i64(&e, "maxThreadsPerBlock", p->max_threads_per_block);
		arg_i64(&e, "sharedMemPerBlock", p->max_shared_per_block);
		arg_i64(&e, "warpSize", p->warp_size);
		arg_i64(&e, "regsPerBlock", p->regs_per_block);
		arg_i64(&e, "maxThreadsPerMultiprocessor",
			p->max_threads_per_sm);
		arg_i64(&e, "regsPerMultiprocessor", p->regs_per_sm);
		arg_i64(&e, "sharedMemPerBlockOptin",
			p->shared_per_block_optin);
		arg_i64(&e, "sharedMemPerMultiprocessor", p->shared_per_sm);
		coll_trace_object(o, first, e.args, e.nargs);
	}
}
