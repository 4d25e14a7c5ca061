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
 * thread, between link_begin() and link_end() of the same dump.
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

static struct out *x_head(struct coll_trace *t, const struct gpu_rec *r,
			  int64_t pid, int64_t tid)
{
	struct out *o = coll_trace_event(t);

	out_str(o, "{\"ph\":\"X\",\"cat\":\"");
	out_str(o, copy_cat(r->kind));
	out_str(o, "\",\"name\":");
	if (r->kind == GPU_MEMCPY) {
		/* Kineto's name: "Memcpy HtoD (Pageable -> Device)"; the
		 * tables keep the copy kind alone. */
		char name[128];
		snprintf(name, sizeof(name), "%s (%s -> %s)",
			 strtab_get(r->name),
			 memory_kind(GPU_COPY_SRC(r->flags)),
			 memory_kind(GPU_COPY_DST(r->flags)));
		out_json_str(o, name);
	} else {
		out_json_str(o, strtab_get(r->name));
	}
	out_str(o, ",\"pid\":");
	out_i64(o, pid);
	out_str(o, ",\"tid\":");
	out_i64(o, tid);
	out_str(o, ",\"ts\":");
	coll_trace_ts(t, r->start);
	out_str(o, ",\"dur\":");
	out_us(o, gpu_dur(r));
	uint32_t sf = r->stack ? coll_trace_sf(t, r->stack) : 0;
	if (sf) {
		out_str(o, ",\"sf\":");
		out_u64(o, sf);
	}
	out_str(o, ",\"args\":{\"correlation\":");
	out_u64(o, r->correlation);
	return o;
}

static void dims(struct out *o, const char *key, const int32_t *d)
{
	out_str(o, key);
	out_str(o, "\":[");
	for (int i = 0; i < 3; i++) {
		if (i) {
			out_str(o, ",");
		}
		out_i64(o, d[i]);
	}
	out_str(o, "]");
}

/* Kineto's "blocks per SM" (the grid's blocks over the device's SMs) and
 * "warps per SM" (those blocks' warps), when the device is known. */
static void per_sm(struct out *o, const struct gpu_rec *r)
{
	const struct gpu_device *p = store_device((int)r->device);
	char v[64];

	if (!p || p->num_sms <= 0 || p->warp_size <= 0) {
		return;
	}
	double blocks = (double)r->grid[0] * r->grid[1] * r->grid[2] /
			(double)p->num_sms;
	double warps = blocks * r->block[0] * r->block[1] * r->block[2] /
		       (double)p->warp_size;
	snprintf(v, sizeof(v), "%.6g", blocks);
	out_str(o, ",\"blocks per SM\":");
	out_str(o, v);
	snprintf(v, sizeof(v), "%.6g", warps);
	out_str(o, ",\"warps per SM\":");
	out_str(o, v);
	int occ = occupancy_percent(r, p);
	if (occ >= 0) {
		out_str(o, ",\"est. achieved occupancy %\":");
		out_i64(o, occ);
	}
}

static void device_event(struct coll_trace *t, const struct gpu_rec *r)
{
	const struct gpu_rec *api = link_api_for(r->correlation);
	uint32_t ext = api ? api->ext : 0;

	struct out *o = x_head(t, r, r->device, r->stream);
	if (ext) {
		out_str(o, ",\"External id\":");
		out_u64(o, ext);
	}
	out_str(o, ",\"device\":");
	out_u64(o, r->device);
	out_str(o, ",\"context\":");
	out_u64(o, r->context);
	out_str(o, ",\"stream\":");
	out_u64(o, r->stream);
	if (r->kind == GPU_KERNEL) {
		/* Kineto writes CUPTI's value as it comes (0 unless the
		 * program enabled CUPTI's latency timestamps). */
		out_str(o, ",\"queued\":");
		out_u64(o, r->queued);
		dims(o, ",\"grid", r->grid);
		dims(o, ",\"block", r->block);
		out_str(o, ",\"registers per thread\":");
		out_u64(o, r->regs);
		out_str(o, ",\"shared memory\":");
		out_u64(o, r->shmem);
		per_sm(o, r);
	} else {
		uint64_t dur = gpu_dur(r);
		char bw[32];
		snprintf(bw, sizeof(bw), "%.4f",
			 dur ? (double)r->bytes / (double)dur : 0.0);
		out_str(o, ",\"bytes\":");
		out_u64(o, r->bytes);
		out_str(o, ",\"memory bandwidth (GB/s)\":");
		out_str(o, bw);
	}
	out_str(o, "}}");
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
	struct out *o;
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
			o = x_head(t, r, host_pid, r->tid);
			if (r->ext) {
				out_str(o, ",\"External id\":");
				out_u64(o, r->ext);
			}
			out_str(o, ",\"cbid\":");
			out_u64(o, r->cbid);
			out_str(o, "}}");
			if (link_has_device_work(r->correlation)) {
				marks_flow(t, "s", r->correlation, host_pid,
					   r->tid,
					   marks_flow_at(r->start, gpu_dur(r)));
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
			o = coll_trace_event(t);
			out_str(o, "{\"ph\":\"C\",\"cat\":\"gpu_memory\","
				   "\"name\":");
			out_json_str(o, name);
			out_str(o, ",\"pid\":");
			out_u64(o, r->device);
			out_str(o, ",\"tid\":0,\"ts\":");
			coll_trace_ts(t, r->start);
			out_str(o, ",\"group\":\"Device Storage\","
				   "\"args\":{\"value\":");
			out_i64(o, *u);
			out_str(o, "}}");
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
		char cc[32];
		if (!p) {
			continue;
		}
		out_str(o, *first ? "{\"id\":" : ",{\"id\":");
		*first = 0;
		out_i64(o, p->id);
		out_str(o, ",\"name\":");
		out_json_str(o, p->name);
		snprintf(cc, sizeof(cc), "%d.%d", p->cc_major, p->cc_minor);
		out_str(o, ",\"computeCapability\":");
		out_json_str(o, cc);
		out_str(o, ",\"computeMajor\":");
		out_i64(o, p->cc_major);
		out_str(o, ",\"computeMinor\":");
		out_i64(o, p->cc_minor);
		out_str(o, ",\"totalGlobalMem\":");
		out_u64(o, p->total_mem);
		out_str(o, ",\"numSms\":");
		out_i64(o, p->num_sms);
		out_str(o, ",\"maxThreadsPerBlock\":");
		out_i64(o, p->max_threads_per_block);
		out_str(o, ",\"sharedMemPerBlock\":");
		out_i64(o, p->max_shared_per_block);
		out_str(o, ",\"warpSize\":");
		out_i64(o, p->warp_size);
		out_str(o, ",\"regsPerBlock\":");
		out_i64(o, p->regs_per_block);
		out_str(o, ",\"maxThreadsPerMultiprocessor\":");
		out_i64(o, p->max_threads_per_sm);
		out_str(o, ",\"regsPerMultiprocessor\":");
		out_i64(o, p->regs_per_sm);
		out_str(o, ",\"sharedMemPerBlockOptin\":");
		out_i64(o, p->shared_per_block_optin);
		out_str(o, ",\"sharedMemPerMultiprocessor\":");
		out_i64(o, p->shared_per_sm);
		out_str(o, "}");
	}
}
