/*
 * sync.c - CUDA synchronisation records in the trace, as Kineto writes
 * them.
 *
 * A sync record (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, cudaStreamWaitEvent) is a slice of "cat"
 * "cuda_sync" on its device's track, named by its kind ("Context Sync",
 * "Stream Sync", "Event Sync", "Stream Wait Event"), with the args
 * Holistic Trace Analysis's critical path reads:
 *
 *   External id, cuda_sync_kind, wait_on_stream,
 *   wait_on_cuda_event_record_corr_id, wait_on_cuda_event_id (the last
 *   three for Event Sync and Stream Wait Event), stream, correlation,
 *   device, context
 *
 * Its "tid" is the stream (-1 when the record has none: Context Sync,
 * Event Sync), except a Stream Sync's, which Kineto moves to a track of
 * its own, stream + SYNC_TRACK ("stream N (sync)"), because it lasts while
 * that stream's kernels run. The call that waited gets a launch flow to
 * it, as a launch does to its kernel.
 *
 * Which stream and call recorded the event waited on comes from CUPTI's
 * CUDA event records (GPU_EVENT): the one with the same context, event
 * and event sync id, or, where CUPTI gives no sync id, the latest
 * recorded before the wait (by correlation id), as Kineto matches them.
 * Unknown: -1, as Kineto writes it.
 *
 * The device of a record comes from its context: CUPTI's sync records
 * carry no device id, so the contexts of the device work and event
 * records name it (device 0 when none does, as in Kineto).
 *
 * Drain thread only, between sync_begin() and sync_end() of one dump.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* Kineto's offset of a Stream Sync's track from its stream's. */
#define SYNC_TRACK 1000000

struct ctx_dev {
	uint32_t context, device;
};

struct track {
	uint32_t device;
	int64_t tid;
};

static struct {
	size_t *events; /* GPU_EVENT records by (context, event, corr) */
	size_t nevents;
	struct ctx_dev *ctx;
	size_t nctx;
	struct track *tracks; /* the tracks sync records were written on */
	size_t ntracks, cap;
} S;

static int cmp_event(const void *pa, const void *pb)
{
	const struct gpu_rec *a = store_at(*(const size_t *)pa);
	const struct gpu_rec *b = store_at(*(const size_t *)pb);

	if (a->context != b->context) {
		return a->context < b->context ? -1 : 1;
	}
	if (a->event != b->event) {
		return a->event < b->event ? -1 : 1;
	}
	if (a->correlation != b->correlation) {
		return a->correlation < b->correlation ? -1 : 1;
	}
	return 0;
}

static void add_context(uint32_t context, uint32_t device)
{
	for (size_t i = 0; i < S.nctx; i++) {
		if (S.ctx[i].context == context) {
			return;
		}
	}
	struct ctx_dev *n = realloc(S.ctx, (S.nctx + 1) * sizeof(*n));
	if (n) {
		S.ctx = n;
		S.ctx[S.nctx++] = (struct ctx_dev){context, device};
	}
}

void sync_begin(size_t n)
{
	size_t nsync = 0;

	sync_end_free();
	for (size_t i = 0; i < n; i++) {
		const struct gpu_rec *r = store_at(i);
		nsync += r->kind == GPU_SYNC;
		S.nevents += r->kind == GPU_EVENT;
		if (gpu_is_device_work(r) || r->kind == GPU_EVENT) {
			add_context(r->context, r->device);
		}
	}
	if (!nsync || !S.nevents) {
		S.nevents = 0;
		return;
	}
	S.events = malloc(S.nevents * sizeof(*S.events));
	if (!S.events) {
		S.nevents = 0; /* every wait shows an unknown source */
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (store_at(i)->kind == GPU_EVENT) {
			S.events[k++] = i;
		}
	}
	qsort(S.events, S.nevents, sizeof(*S.events), cmp_event);
}

static uint32_t device_of(uint32_t context)
{
	for (size_t i = 0; i < S.nctx; i++) {
		if (S.ctx[i].context == context) {
			return S.ctx[i].device;
		}
	}
	return 0;
}

/* A sync id CUPTI filled in (it writes the invalid value, or nothing
 * before CUDA 12.8, where the record has no such field). */
static int have_sync_id(uint64_t id)
{
	return id != 0 && id != GPU_NONE && id != UINT64_MAX;
}

/* The CUDA event record a wait (Event Sync, Stream Wait Event) waited on,
 * or NULL. */
static const struct gpu_rec *waited_on(const struct gpu_rec *w)
{
	size_t lo = 0, hi = S.nevents;
	const struct gpu_rec *best = NULL;

	/* The first record of (context, event). */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct gpu_rec *e = store_at(S.events[mid]);
		if (e->context < w->context ||
		    (e->context == w->context && e->event < w->event)) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	for (; lo < S.nevents; lo++) {
		const struct gpu_rec *e = store_at(S.events[lo]);
		if (e->context != w->context || e->event != w->event) {
			break;
		}
		if (have_sync_id(w->event_sync) &&
		    have_sync_id(e->event_sync)) {
			if (e->event_sync == w->event_sync) {
				return e;
			}
		} else if (e->correlation < w->correlation) {
			best = e;
		}
	}
	return best;
}

static void note_track(uint32_t device, int64_t tid)
{
	for (size_t i = 0; i < S.ntracks; i++) {
		if (S.tracks[i].device == device && S.tracks[i].tid == tid) {
			return;
		}
	}
	if (S.ntracks == S.cap) {
		size_t c = S.cap ? S.cap * 2 : 8;
		struct track *n = realloc(S.tracks, c * sizeof(*n));
		if (!n) {
			return; /* the track goes unnamed */
		}
		S.tracks = n;
		S.cap = c;
	}
	S.tracks[S.ntracks++] = (struct track){device, tid};
}

static void arg_i64(struct coll_event *e, const char *key, int64_t v)
{
	coll_event_arg(e, key, COLL_ARG_I64)->v.i = v;
}

uint32_t sync_write(struct coll_trace *t, const struct gpu_rec *r,
		    int64_t *track)
{
	const struct gpu_rec *api = link_api_for(r->correlation);
	uint32_t device = device_of(r->context);
	int64_t stream = r->stream == GPU_NONE ? -1 : (int64_t)r->stream;
	int64_t tid = stream;
	uint64_t dur = gpu_dur(r);

	if (r->flags == GPU_SYNC_STREAM && stream >= 0) {
		tid = stream + SYNC_TRACK;
	}
	if (tid < 0 || tid >= SYNC_TRACK) {
		note_track(device, tid);
	}
	*track = tid;
	struct coll_event e = {.ph = 'X',
			       .cat = "cuda_sync",
			       .name = strtab_get(r->name),
			       .pid = device,
			       .tid = tid,
			       .ts = r->start,
			       .dur = dur};
	if (api && api->ext) {
		arg_i64(&e, "External id", api->ext);
	}
	coll_event_arg(&e, "cuda_sync_kind", COLL_ARG_STR)->v.s =
		strtab_get(r->name);
	if (r->flags == GPU_SYNC_EVENT || r->flags == GPU_SYNC_STREAM_WAIT) {
		const struct gpu_rec *w = waited_on(r);
		arg_i64(&e, "wait_on_stream",
			w && w->stream != GPU_NONE ? (int64_t)w->stream : -1);
		arg_i64(&e, "wait_on_cuda_event_record_corr_id",
			w ? (int64_t)w->correlation : -1);
		arg_i64(&e, "wait_on_cuda_event_id", r->event);
	}
	arg_i64(&e, "stream", stream);
	arg_i64(&e, "correlation", r->correlation);
	arg_i64(&e, "device", device);
	arg_i64(&e, "context", r->context);
	coll_trace_write(t, &e);
	if (api && r->correlation) {
		marks_flow(t, "f", r->correlation, device, tid,
			   marks_flow_at(r->start, dur));
	}
	return device;
}

void sync_end(struct coll_trace *t)
{
	for (size_t i = 0; i < S.ntracks; i++) {
		const struct track *k = &S.tracks[i];
		char label[64];
		int64_t sort = k->tid;
		if (k->tid < 0) {
			snprintf(label, sizeof(label), "sync");
		} else {
			snprintf(label, sizeof(label), "stream %lld (sync)",
				 (long long)(k->tid - SYNC_TRACK));
			sort = k->tid - SYNC_TRACK;
		}
		marks_meta(t, "thread_name", k->device, k->tid, "name", label,
			   0);
		marks_meta(t, "thread_sort_index", k->device, k->tid,
			   "sort_index", NULL, sort);
	}
	sync_end_free();
}

void sync_end_free(void)
{
	free(S.events);
	free(S.ctx);
	free(S.tracks);
	memset(&S, 0, sizeof(S));
}
