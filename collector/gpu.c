/*
 * gpu.c - GPU activity: the store, linking to host records, the GPU part of
 * the trace and the GPU tables.
 *
 * An event source (cupti/) pushes struct coll_gpu_rec batches from its own
 * thread. They go into an append-only store of fixed-size chunks, so that
 * a record, once counted, never moves: the dump reads the first n records
 * without the lock while the source appends behind them.
 *
 * Linking happens when a dump writes the trace, because host spans reach
 * the journal when they end and GPU records arrive in batches, in no
 * useful order relative to each other. When there are GPU API records,
 * the writer reads the journal twice. The first pass shows every host span
 * to gpu_link_claim():
 *
 *  - A span of cat cuda_runtime or cuda_driver is a hook's slice of a CUDA
 *    call. The API record of the same name on the same thread inside it is
 *    the same call: the record is marked absorbed (it is not written again
 *    and not counted again in the tables). One call, one slice, with the
 *    hook's timing and CUPTI's correlation.
 *  - Any other span is a host range (NVTX, a hooked C API call, a public
 *    API task). It claims the API records on its thread that lie inside it
 *    and are not yet claimed, under a fresh "External id" that those
 *    records and their GPU work carry. A thread's spans reach the journal
 *    innermost first (a span is recorded when it ends), so each launch is
 *    claimed by its innermost enclosing range.
 *
 * The second pass writes the trace; gpu_link_span() gives each span what
 * the first pass linked to it: a hook's slice gets the call's correlation,
 * External id and launch flow, a range its External id.
 *
 * The GPU events, flows and counters follow the host events in the trace;
 * the attribution also feeds the "GPU Time by Host Range" and "GPU Time by
 * API" tables, which therefore reflect the latest dump.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CHUNK_RECS  4096u
#define MAX_CHUNKS  256u /* 1M records, about 100 MB at most */
#define MAX_DEVICES 64

static struct {
	pthread_mutex_t lock;
	struct coll_gpu_rec *chunks[MAX_CHUNKS];
	size_t count; /* published with release, read with acquire */
	uint64_t dropped;
	size_t drained; /* records already seen by gpu_drain() */
	int64_t in_use[MAX_DEVICES];
	struct coll_gpu_device dev[MAX_DEVICES];
	int have_dev[MAX_DEVICES];
	char label[MAX_DEVICES][64]; /* names given through NVTX */
	const struct coll_gpu_source *src;
	uint32_t next_ext;
	uint32_t storage_group; /* "Device Storage" */
} G = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct coll_gpu_rec *rec_at(size_t i)
{
	return &G.chunks[i / CHUNK_RECS][i % CHUNK_RECS];
}

static size_t published(void)
{
	return __atomic_load_n(&G.count, __ATOMIC_ACQUIRE);
}

/*
 * The string id of device's memory counter, "Memory: cuda/N". Interned
 * here, on the source's thread, because the drain thread must not take the
 * string table's lock while it holds the drain lock (fork takes them in
 * the other order). G.lock held.
 */
static uint32_t memory_name(uint32_t device)
{
	static uint32_t ids[MAX_DEVICES];
	char name[64];

	if (!G.storage_group) {
		G.storage_group = strtab_intern("Device Storage");
	}
	if (!ids[device]) {
		snprintf(name, sizeof(name), "Memory: cuda/%u", device);
		ids[device] = strtab_intern(name);
	}
	return ids[device];
}

/*
 * Recording intervals in CLOCK_MONOTONIC ns. CUPTI delivers activity late,
 * in buffers, so the state when a buffer arrives says nothing about the
 * work in it; what counts is whether the profiler was recording when the
 * work started. Intervals are noted by the state machine; until it notes
 * one, everything is kept (the collector driven directly, as in tests).
 */
#define MAX_WINDOWS 4096

static struct {
	pthread_mutex_t lock;
	unsigned n;
	int noted;
	struct {
		uint64_t on, off; /* off == UINT64_MAX while recording */
	} w[MAX_WINDOWS];
} W = {.lock = PTHREAD_MUTEX_INITIALIZER};

void coll_note_recording(int on)
{
	uint64_t now = clock_now_ns(); /* CUPTI's clock: see activity.c */

	pthread_mutex_lock(&W.lock);
	W.noted = 1;
	int open = W.n > 0 && W.w[W.n - 1].off == UINT64_MAX;
	if (on && !open) {
		if (W.n == MAX_WINDOWS) {
			/* Out of room: the last interval absorbs the rest. */
			W.w[W.n - 1].off = UINT64_MAX;
		} else {
			W.w[W.n].on = now;
			W.w[W.n].off = UINT64_MAX;
			W.n++;
		}
	} else if (!on && open) {
		W.w[W.n - 1].off = now;
	}
	pthread_mutex_unlock(&W.lock);
}

/* Was the profiler recording at t? W.lock held. */
static int recording_at(uint64_t t)
{
	if (!W.noted) {
		return 1;
	}
	for (unsigned i = W.n; i-- > 0;) {
		if (t >= W.w[i].on) {
			return t < W.w[i].off;
		}
	}
	return 0;
}

int coll_gpu_push(const struct coll_gpu_rec *r, size_t n)
{
	int rc = 0;

	pthread_mutex_lock(&G.lock);
	pthread_mutex_lock(&W.lock);
	size_t c = G.count;
	for (size_t i = 0; i < n; i++) {
		/* Memory events are kept whatever the state: Device Storage
		 * needs every allocation and release to know what is in use. */
		if (r[i].kind != COLL_GPU_MEMORY && !recording_at(r[i].start)) {
			continue;
		}
		size_t k = c / CHUNK_RECS;
		if (k >= MAX_CHUNKS) {
			G.dropped += n - i;
			rc = -ENOSPC;
			break;
		}
		if (!G.chunks[k]) {
			G.chunks[k] = malloc(CHUNK_RECS * sizeof(**G.chunks));
			if (!G.chunks[k]) {
				G.dropped += n - i;
				rc = -ENOSPC;
				break;
			}
		}
		struct coll_gpu_rec *d = rec_at(c);
		*d = r[i];
		d->ext = 0;
		d->absorbed = 0;
		if (d->kind == COLL_GPU_MEMORY && d->device < MAX_DEVICES) {
			d->name = memory_name(d->device);
		}
		c++;
	}
	__atomic_store_n(&G.count, c, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&W.lock);
	pthread_mutex_unlock(&G.lock);
	return rc;
}

void coll_gpu_note_dropped(uint64_t n)
{
	__atomic_add_fetch(&G.dropped, n, __ATOMIC_RELAXED);
}

void coll_gpu_set_device(const struct coll_gpu_device *d)
{
	if (d->id < 0 || d->id >= MAX_DEVICES) {
		return;
	}
	pthread_mutex_lock(&G.lock);
	G.dev[d->id] = *d;
	G.have_dev[d->id] = 1;
	pthread_mutex_unlock(&G.lock);
}

void coll_gpu_name_device(int device, const char *name)
{
	if (device < 0 || device >= MAX_DEVICES || !name) {
		return;
	}
	pthread_mutex_lock(&G.lock);
	snprintf(G.label[device], sizeof(G.label[device]), "%s", name);
	pthread_mutex_unlock(&G.lock);
}

void coll_gpu_set_source(const struct coll_gpu_source *src)
{
	__atomic_store_n(&G.src, src, __ATOMIC_RELEASE);
}

/* Runs the source's tick (drain thread, no drain lock). Can't fail. */
void gpu_source_tick(uint64_t now_ns)
{
	const struct coll_gpu_source *s =
		__atomic_load_n(&G.src, __ATOMIC_ACQUIRE);

	if (s && s->tick) {
		s->tick(now_ns);
	}
}

/* Runs the source's flush (before a dump, drain lock held). Can't fail. */
void gpu_source_flush(void)
{
	const struct coll_gpu_source *s =
		__atomic_load_n(&G.src, __ATOMIC_ACQUIRE);

	if (s && s->flush) {
		s->flush();
	}
}

/* Returns the number of GPU records lost so far. Lock-free. */
uint64_t gpu_dropped(void)
{
	return __atomic_load_n(&G.dropped, __ATOMIC_RELAXED);
}

static int is_api(const struct coll_gpu_rec *r);

/*
 * Feeds the memory records that arrived since the last call into a as
 * "Device Storage" counters ("Memory: cuda/N", bytes in use), and calls
 * on_tid (when not NULL) with the host thread of each CUDA API record, so
 * that a thread the trace shows only through CUPTI gets named too. Drain
 * lock held. This function can't fail (a lost sample is lost).
 */
void gpu_drain(struct agg *a, void (*on_tid)(int tid))
{
	size_t n = published();
	int have_tid = 0;
	uint32_t tid = 0;

	for (; G.drained < n; G.drained++) {
		const struct coll_gpu_rec *r = rec_at(G.drained);
		/* Runs of API records come from one thread: report it once. */
		if (on_tid && is_api(r) && (!have_tid || r->tid != tid)) {
			have_tid = 1;
			tid = r->tid;
			on_tid((int)tid);
		}
		if (r->kind != COLL_GPU_MEMORY || r->device >= MAX_DEVICES) {
			continue;
		}
		int64_t *use = &G.in_use[r->device];
		*use += (r->flags & COLL_GPU_FREE) ? -(int64_t)r->bytes
						   : (int64_t)r->bytes;
		if (*use < 0) {
			*use = 0;
		}
		struct agg_sample s = {.group = G.storage_group,
				       .name = r->name,
				       .kind = COLL_COUNTER,
				       .value = *use};
		agg_add(a, &s);
	}
}

/* ---- linking ------------------------------------------------------------ */

struct ext_range {
	struct coll_rec r;
	int tid;
};

struct api_index {
	size_t *idx; /* API record indexes sorted by (tid, start) */
	size_t n;
	size_t *corr_head; /* hash: correlation -> first device record + 1 */
	size_t *corr_next; /* per record: next device record + 1 */
	size_t *api_of;	   /* hash: correlation -> API record + 1 */
	size_t hcap;
	size_t nrecs;
	struct ext_range *ext_of; /* external id -> the host range */
	size_t ext_cap;
};

static struct api_index L;

static int is_api(const struct coll_gpu_rec *r)
{
	return r->kind == COLL_GPU_RUNTIME || r->kind == COLL_GPU_DRIVER;
}

static int is_device_work(const struct coll_gpu_rec *r)
{
	return r->kind == COLL_GPU_KERNEL || r->kind == COLL_GPU_MEMCPY ||
	       r->kind == COLL_GPU_MEMSET;
}

static int cmp_api(const void *pa, const void *pb)
{
	const struct coll_gpu_rec *a = rec_at(*(const size_t *)pa);
	const struct coll_gpu_rec *b = rec_at(*(const size_t *)pb);

	if (a->tid != b->tid) {
		return a->tid < b->tid ? -1 : 1;
	}
	if (a->start != b->start) {
		return a->start < b->start ? -1 : 1;
	}
	return 0;
}

static size_t hslot(uint32_t corr)
{
	return (size_t)((corr * 0x9e3779b1u) & (L.hcap - 1));
}

/* Open addressing on the correlation id: slots hold record index + 1. */
static size_t *hfind(size_t *table, uint32_t corr)
{
	for (size_t i = hslot(corr);; i = (i + 1) & (L.hcap - 1)) {
		if (!table[i] || rec_at(table[i] - 1)->correlation == corr) {
			return &table[i];
		}
	}
}

/* Returns the length of s without a "_vNNNN" version suffix. */
static size_t base_len(const char *s)
{
	const char *v = strrchr(s, '_');

	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' &&
	    strspn(v + 2, "0123456789") == strlen(v + 2)) {
		return (size_t)(v - s);
	}
	return strlen(s);
}

/* Returns non-zero when names a and b (string ids) are the same call,
 * version suffixes aside. Takes no lock. */
static int same_call(uint32_t a, uint32_t b)
{
	const char *sa = strtab_get(a), *sb = strtab_get(b);
	size_t la = base_len(sa);

	return a == b || (la == base_len(sb) && strncmp(sa, sb, la) == 0);
}

static void link_free(void)
{
	free(L.idx);
	free(L.corr_head);
	free(L.corr_next);
	free(L.api_of);
	free(L.ext_of);
	memset(&L, 0, sizeof(L));
}

/*
 * Prepares linking for one dump: indexes the API records by thread and
 * time and every record by correlation. Drain lock held. Returns the
 * number of API records (when positive, the writer runs the journal
 * through gpu_link_claim() first), 0, or -ENOMEM (the dump then shows GPU
 * records unlinked).
 */
int gpu_link_begin(void)
{
	size_t n = published();

	link_free();
	L.nrecs = n;
	if (!n) {
		return 0;
	}
	L.hcap = 64;
	while (L.hcap < n * 2) {
		L.hcap *= 2;
	}
	L.idx = malloc(n * sizeof(*L.idx));
	L.corr_head = calloc(L.hcap, sizeof(*L.corr_head));
	L.api_of = calloc(L.hcap, sizeof(*L.api_of));
	L.corr_next = calloc(n, sizeof(*L.corr_next));
	if (!L.idx || !L.corr_head || !L.api_of || !L.corr_next) {
		link_free();
		return -ENOMEM;
	}
	G.next_ext = 0;
	for (size_t i = n; i-- > 0;) {
		struct coll_gpu_rec *r = rec_at(i);
		r->ext = 0;
		r->absorbed = 0;
		if (is_api(r)) {
			L.idx[L.n++] = i;
			*hfind(L.api_of, r->correlation) = i + 1;
		} else if (is_device_work(r) && r->correlation) {
			/* Walking backwards builds each list in time order. */
			size_t *h = hfind(L.corr_head, r->correlation);
			L.corr_next[i] = *h;
			*h = i + 1;
		}
	}
	qsort(L.idx, L.n, sizeof(*L.idx), cmp_api);
	return (int)(L.n < 0x7fffffff ? L.n : 0x7fffffff);
}

/* Returns the first index into L.idx with (tid, start >= t0). */
static size_t lower_bound(uint32_t tid, uint64_t t0)
{
	size_t lo = 0, hi = L.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct coll_gpu_rec *r = rec_at(L.idx[mid]);
		if (r->tid < tid || (r->tid == tid && r->start < t0)) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static int has_device_work(uint32_t corr)
{
	return L.hcap && *hfind(L.corr_head, corr) != 0;
}

/* Returns a fresh external id for host range r on thread tid, remembered
 * for the second pass and the attribution table. */
static uint32_t new_ext(int tid, const struct coll_rec *r)
{
	uint32_t ext = ++G.next_ext;

	if (ext >= L.ext_cap) {
		size_t c = L.ext_cap ? L.ext_cap * 2 : 256;
		struct ext_range *n = realloc(L.ext_of, c * sizeof(*n));
		if (n) {
			memset(n + L.ext_cap, 0, (c - L.ext_cap) * sizeof(*n));
			L.ext_of = n;
			L.ext_cap = c;
		}
	}
	if (ext < L.ext_cap) {
		L.ext_of[ext].r = *r;
		L.ext_of[ext].tid = tid;
	}
	return ext;
}

/*
 * A hook's slice and CUPTI's record of the same call: CUPTI's times lie
 * inside the hook's, up to this much disagreement between the two clocks'
 * conversions (host ticks are interpolated, CUPTI reads CLOCK_MONOTONIC).
 */
#define SLACK_NS 200

static int is_hook_slice(const struct coll_rec *r)
{
	return r->cat == COLL_CAT_CUDA_RUNTIME ||
	       r->cat == COLL_CAT_CUDA_DRIVER;
}

/*
 * First pass over the journal: host span r (converted: t0 in ns since the
 * origin, t1 the duration) on thread tid. A hook's slice absorbs CUPTI's
 * record of the same call; a host range claims the unclaimed API records
 * inside it under a fresh external id. Drain lock held. Can't fail.
 */
void gpu_link_claim(int tid, const struct coll_rec *r)
{
	if (!L.n || r->kind != COLL_SPAN) {
		return;
	}
	uint64_t base = clock_base_mono_ns();
	uint64_t t0 = r->t0 + base, t1 = t0 + r->t1;
	int hook = is_hook_slice(r);
	size_t i = lower_bound((uint32_t)tid, hook ? t0 - SLACK_NS : t0);
	uint32_t ext = 0;

	for (; i < L.n; i++) {
		struct coll_gpu_rec *a = rec_at(L.idx[i]);
		if (a->tid != (uint32_t)tid ||
		    a->start > t1 + (hook ? SLACK_NS : 0)) {
			break;
		}
		if (hook) {
			if (!a->absorbed && a->end <= t1 + SLACK_NS &&
			    same_call(a->name, r->name)) {
				a->absorbed = 1;
				return;
			}
			continue;
		}
		if (a->end <= t1 && !a->ext) {
			if (!ext) {
				ext = new_ext(tid, r);
			}
			a->ext = ext;
		}
	}
}

/*
 * Second pass, while the span is written: fills l with what the first pass
 * linked to span r: for a hook's slice, the absorbed call's correlation,
 * external id and whether it launched GPU work; for a range, its external
 * id. Returns non-zero when l has something to write. Drain lock held.
 */
int gpu_link_span(int tid, const struct coll_rec *r, struct gpu_link *l)
{
	memset(l, 0, sizeof(*l));
	if (!L.n || r->kind != COLL_SPAN) {
		return 0;
	}
	uint64_t base = clock_base_mono_ns();
	uint64_t t0 = r->t0 + base, t1 = t0 + r->t1;
	int hook = is_hook_slice(r);
	size_t i = lower_bound((uint32_t)tid, hook ? t0 - SLACK_NS : t0);

	for (; i < L.n; i++) {
		const struct coll_gpu_rec *a = rec_at(L.idx[i]);
		if (a->tid != (uint32_t)tid ||
		    a->start > t1 + (hook ? SLACK_NS : 0)) {
			break;
		}
		if (hook) {
			if (a->absorbed && a->end <= t1 + SLACK_NS &&
			    same_call(a->name, r->name)) {
				l->corr = a->correlation;
				l->ext = a->ext;
				l->flow = has_device_work(a->correlation);
				return 1;
			}
			continue;
		}
		const struct ext_range *e =
			a->ext && a->ext < L.ext_cap ? &L.ext_of[a->ext] : NULL;
		if (e && e->tid == tid && e->r.t0 == r->t0 &&
		    e->r.t1 == r->t1 && e->r.name == r->name &&
		    e->r.group == r->group) {
			l->ext = a->ext;
			return 1;
		}
	}
	return 0;
}

/* ---- trace -------------------------------------------------------------- */

static void sep(struct out *o, int *first)
{
	out_str(o, *first ? "\n" : ",\n");
	*first = 0;
}

static void ts_us(struct out *o, uint64_t mono_ns)
{
	uint64_t base = clock_base_mono_ns();

	out_us(o, mono_ns > base ? mono_ns - base : 0);
}

static void flow(struct out *o, int *first, const char *ph, uint32_t corr,
		 int64_t pid, int64_t tid, uint64_t mono_ns)
{
	sep(o, first);
	out_str(o, "{\"ph\":\"");
	out_str(o, ph);
	out_str(o, "\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
	out_u64(o, corr);
	out_str(o, ",\"pid\":");
	out_i64(o, pid);
	out_str(o, ",\"tid\":");
	out_i64(o, tid);
	out_str(o, ",\"ts\":");
	ts_us(o, mono_ns);
	if (ph[0] == 'f') {
		out_str(o, ",\"bp\":\"e\"");
	}
	out_str(o, "}");
}

/* Writes the args a linked span gains. Can't fail. */
void gpu_link_args(struct out *o, const struct gpu_link *l)
{
	if (l->corr) {
		out_str(o, ",\"correlation\":");
		out_u64(o, l->corr);
	}
	if (l->ext) {
		out_str(o, ",\"External id\":");
		out_u64(o, l->ext);
	}
}

/*
 * Writes the launch flow start for a hook's slice that gpu_link_span()
 * linked (l->flow), at the slice's start. Drain lock held. Can't fail.
 */
void gpu_write_slice_flow(struct out *o, int *first, int pid, int tid,
			  const struct coll_rec *r, const struct gpu_link *l)
{
	if (l->flow) {
		flow(o, first, "s", l->corr, pid, tid,
		     r->t0 + clock_base_mono_ns());
	}
}

static const char *copy_cat(uint16_t kind)
{
	switch (kind) {
	case COLL_GPU_KERNEL:
		return "kernel";
	case COLL_GPU_MEMCPY:
		return "gpu_memcpy";
	case COLL_GPU_MEMSET:
		return "gpu_memset";
	case COLL_GPU_DRIVER:
		return "cuda_driver";
	case COLL_GPU_SYNC:
		return "cuda_sync";
	case COLL_GPU_OVERHEAD:
		return "overhead";
	default:
		return "cuda_runtime";
	}
}

static void x_head(struct out *o, int *first, const struct coll_gpu_rec *r,
		   int64_t pid, int64_t tid)
{
	sep(o, first);
	out_str(o, "{\"ph\":\"X\",\"cat\":\"");
	out_str(o, copy_cat(r->kind));
	out_str(o, "\",\"name\":");
	out_json_str(o, strtab_get(r->name));
	out_str(o, ",\"pid\":");
	out_i64(o, pid);
	out_str(o, ",\"tid\":");
	out_i64(o, tid);
	out_str(o, ",\"ts\":");
	ts_us(o, r->start);
	out_str(o, ",\"dur\":");
	out_us(o, r->end > r->start ? r->end - r->start : 0);
	out_str(o, ",\"args\":{\"correlation\":");
	out_u64(o, r->correlation);
}

static const struct coll_gpu_rec *api_for(uint32_t corr)
{
	if (!L.hcap) {
		return NULL;
	}
	size_t k = *hfind(L.api_of, corr);
	return k ? rec_at(k - 1) : NULL;
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

static void device_event(struct out *o, int *first,
			 const struct coll_gpu_rec *r)
{
	const struct coll_gpu_rec *api = api_for(r->correlation);
	uint32_t ext = api ? api->ext : 0;

	x_head(o, first, r, r->device, r->stream);
	if (ext) {
		out_str(o, ",\"External id\":");
		out_u64(o, ext);
	}
	out_str(o, ",\"device\":");
	out_u64(o, r->device);
	out_str(o, ",\"stream\":");
	out_u64(o, r->stream);
	if (r->kind == COLL_GPU_KERNEL) {
		dims(o, ",\"grid", r->grid);
		dims(o, ",\"block", r->block);
		out_str(o, ",\"registers per thread\":");
		out_u64(o, r->regs);
		out_str(o, ",\"shared memory\":");
		out_u64(o, r->shmem);
	} else {
		uint64_t dur = r->end > r->start ? r->end - r->start : 0;
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
		flow(o, first, "f", r->correlation, r->device, r->stream,
		     r->start);
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

static void meta(struct out *o, int *first, const char *what, int64_t pid,
		 int64_t tid, const char *key, const char *sval, int64_t ival)
{
	sep(o, first);
	out_str(o, "{\"ph\":\"M\",\"name\":\"");
	out_str(o, what);
	out_str(o, "\",\"pid\":");
	out_i64(o, pid);
	out_str(o, ",\"tid\":");
	out_i64(o, tid);
	out_str(o, ",\"args\":{\"");
	out_str(o, key);
	out_str(o, "\":");
	if (sval) {
		out_json_str(o, sval);
	} else {
		out_i64(o, ival);
	}
	out_str(o, "}}");
}

/*
 * Writes the GPU part of traceEvents: API calls no hook showed, sync
 * records, kernels, copies and sets with their flows, device memory
 * counters and the GPU tracks' metadata. Call after the host events,
 * between gpu_link_begin() and gpu_link_end(). Drain lock held. Can't fail
 * (write errors stay in o).
 */
void gpu_write_events(struct out *o, int *first, int host_pid)
{
	struct stream_key *streams = NULL;
	size_t nstreams = 0, cap = 0;
	int64_t use[MAX_DEVICES] = {0};
	int counter_dev[MAX_DEVICES] = {0};

	for (size_t i = 0; i < L.nrecs; i++) {
		const struct coll_gpu_rec *r = rec_at(i);
		if (is_api(r)) {
			if (r->absorbed) {
				continue;
			}
			x_head(o, first, r, host_pid, r->tid);
			if (r->ext) {
				out_str(o, ",\"External id\":");
				out_u64(o, r->ext);
			}
			out_str(o, "}}");
			if (has_device_work(r->correlation)) {
				flow(o, first, "s", r->correlation, host_pid,
				     r->tid, r->start);
			}
		} else if (r->kind == COLL_GPU_SYNC) {
			const struct coll_gpu_rec *api =
				api_for(r->correlation);
			if (!api) {
				continue;
			}
			x_head(o, first, r, host_pid, api->tid);
			out_str(o, "}}");
		} else if (is_device_work(r)) {
			device_event(o, first, r);
			add_stream(&streams, &nstreams, &cap, r->device,
				   r->stream);
		} else if (r->kind == COLL_GPU_MEMORY &&
			   r->device < MAX_DEVICES) {
			int64_t *u = &use[r->device];
			*u += (r->flags & COLL_GPU_FREE) ? -(int64_t)r->bytes
							 : (int64_t)r->bytes;
			if (*u < 0) {
				*u = 0;
			}
			char name[64];
			snprintf(name, sizeof(name), "Memory: cuda/%u",
				 r->device);
			sep(o, first);
			out_str(o, "{\"ph\":\"C\",\"cat\":\"gpu_memory\","
				   "\"name\":");
			out_json_str(o, name);
			out_str(o, ",\"pid\":");
			out_u64(o, r->device);
			out_str(o, ",\"tid\":0,\"ts\":");
			ts_us(o, r->start);
			out_str(o, ",\"group\":\"Device Storage\","
				   "\"args\":{\"value\":");
			out_i64(o, *u);
			out_str(o, "}}");
			counter_dev[r->device] = 1;
		}
	}
	int named[MAX_DEVICES] = {0};
	for (size_t i = 0; i < nstreams; i++) {
		uint32_t d = streams[i].device;
		if (d < MAX_DEVICES) {
			named[d] = 1;
		}
	}
	for (int d = 0; d < MAX_DEVICES; d++) {
		if (!named[d] && !counter_dev[d]) {
			continue;
		}
		char label[200];
		if (G.label[d][0]) {
			snprintf(label, sizeof(label), "GPU %d (%s)", d,
				 G.label[d]);
		} else if (G.have_dev[d]) {
			snprintf(label, sizeof(label), "GPU %d (%s)", d,
				 G.dev[d].name);
		} else {
			snprintf(label, sizeof(label), "GPU %d", d);
		}
		meta(o, first, "process_name", d, 0, "name", label, 0);
		meta(o, first, "process_sort_index", d, 0, "sort_index", NULL,
		     0x1000000 + d);
		if (counter_dev[d]) {
			meta(o, first, "thread_name", d, 0, "name",
			     "device memory", 0);
		}
	}
	for (size_t i = 0; i < nstreams; i++) {
		char label[64];
		snprintf(label, sizeof(label), "stream %u", streams[i].stream);
		meta(o, first, "thread_name", streams[i].device,
		     streams[i].stream, "name", label, 0);
		meta(o, first, "thread_sort_index", streams[i].device,
		     streams[i].stream, "sort_index", NULL, streams[i].stream);
	}
	free(streams);
}

/*
 * Writes the value of the top-level "deviceProperties" key: [] when no
 * device is known. Can't fail.
 */
void gpu_write_device_properties(struct out *o)
{
	int any = 0;

	out_str(o, "[");
	for (int d = 0; d < MAX_DEVICES; d++) {
		const struct coll_gpu_device *p = &G.dev[d];
		char cc[32];
		if (!G.have_dev[d]) {
			continue;
		}
		out_str(o, any ? ",{\"id\":" : "{\"id\":");
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
		out_str(o, "}");
		any = 1;
	}
	out_str(o, "]");
}

/*
 * Ends linking for this dump. The index and the marks (absorbed, external
 * ids) stay until the next gpu_link_begin(), for the tables. Can't fail.
 */
void gpu_link_end(void)
{
}

/* ---- tables ------------------------------------------------------------- */

struct kv {
	uint64_t key; /* string id, or (group << 32 | name) */
	int64_t v;    /* ns */
	uint64_t bytes;
};

struct grow {
	uint64_t key;
	uint64_t count;
	int64_t total, min, max, median;
	uint64_t bytes;
};

static int cmp_kv(const void *pa, const void *pb)
{
	const struct kv *a = pa, *b = pb;

	if (a->key != b->key) {
		return a->key < b->key ? -1 : 1;
	}
	return a->v < b->v ? -1 : a->v > b->v;
}

static int sort_key_g;
static int sort_asc_g;

static double gkey(const struct grow *r)
{
	return table_sort_value(sort_key_g, r->count, r->total, r->min, r->max);
}

static int cmp_grow(const void *pa, const void *pb)
{
	const struct grow *a = pa, *b = pb;
	double ka = gkey(a), kb = gkey(b);

	if (ka != kb) {
		return (ka < kb) == !!sort_asc_g ? -1 : 1;
	}
	return a->key < b->key ? -1 : a->key > b->key;
}

/* Groups sorted samples into rows (count, total, min, max, median). */
static size_t group_rows(struct kv *v, size_t n, struct grow *rows)
{
	size_t nr = 0;

	qsort(v, n, sizeof(*v), cmp_kv);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct grow *r = &rows[nr++];
		memset(r, 0, sizeof(*r));
		r->key = v[i].key;
		r->min = v[i].v;
		for (; j < n && v[j].key == v[i].key; j++) {
			r->count++;
			r->total += v[j].v;
			r->bytes += v[j].bytes;
			r->max = v[j].v;
		}
		size_t m = i + (j - i) / 2;
		r->median = (j - i) % 2 ? v[m].v : (v[m - 1].v + v[m].v) / 2;
		i = j;
	}
	qsort(rows, nr, sizeof(*rows), cmp_grow);
	return nr;
}

/* A section: its title, then table.c's header lines. */
static void theader(struct sbuf *b, const char *title, const char *const *cols,
		    int ncols)
{
	sb_printf(b, "%s\n=================\n", title);
	table_header(b, cols, ncols);
}

static double msf(int64_t ns)
{
	return (double)ns / 1e6;
}

enum { SEC_TIME, SEC_KERNEL, SEC_BYTES, SEC_GPUTIME };

static void tsection(struct sbuf *b, const char *title, int type, struct kv *v,
		     size_t n, unsigned top,
		     const char *(*label)(uint64_t key, char *buf, size_t len))
{
	static const char *const kcols[] = {"Time (ms)",	"Min Time (ms)",
					    "Max Time (ms)",	"Avg Time (ms)",
					    "Median Time (ms)", "Time (%)"};
	static const char *const bcols[] = {
		"Time (ms)",	 "Min Time (ms)", "Max Time (ms)",
		"Avg Time (ms)", "Total (kB)",	  "Bandwidth (GB/s)"};
	static const char *const gcols[] = {"GPU Time (ms)", "GPU Time (%)"};
	struct grow *rows = n ? malloc(n * sizeof(*rows)) : NULL;
	int64_t all = 0;

	if (!n) {
		return;
	}
	if (!rows) {
		b->err = 1;
		return;
	}
	size_t nr = group_rows(v, n, rows);
	for (size_t i = 0; i < nr; i++) {
		all += rows[i].total;
	}
	if (type == SEC_KERNEL) {
		theader(b, title, kcols, 6);
	} else if (type == SEC_BYTES) {
		theader(b, title, bcols, 6);
	} else if (type == SEC_GPUTIME) {
		theader(b, title, gcols, 2);
	} else {
		theader(b, title, kcols, 4);
	}
	size_t shown = top && top < nr ? top : nr;
	for (size_t i = 0; i < shown; i++) {
		const struct grow *r = &rows[i];
		char buf[512];
		double pct = all ? 100.0 * (double)r->total / (double)all : 0;
		table_row_name(b, label(r->key, buf, sizeof(buf)));
		sb_printf(b, "%11llu", (unsigned long long)r->count);
		if (type == SEC_GPUTIME) {
			sb_printf(b, "%17.4f%17.2f\n", msf(r->total), pct);
			continue;
		}
		sb_printf(b, "%17.4f%17.4f%17.4f%17.4f", msf(r->total),
			  msf(r->min), msf(r->max),
			  msf(r->total) / (double)r->count);
		if (type == SEC_KERNEL) {
			sb_printf(b, "%17.4f%17.2f", msf(r->median), pct);
		} else if (type == SEC_BYTES) {
			sb_printf(b, "%17.4f%17.4f", (double)r->bytes / 1000.0,
				  r->total ? (double)r->bytes / (double)r->total
					   : 0.0);
		}
		sb_printf(b, "\n");
	}
	sb_printf(b, "\n");
	free(rows);
}

static const char *label_str(uint64_t key, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strtab_get((uint32_t)key));
	return buf;
}

static const char *label_range(uint64_t key, char *buf, size_t len)
{
	const char *g = strtab_get((uint32_t)(key >> 32));

	snprintf(buf, len, "%s%s%s", g, *g ? ": " : "",
		 strtab_get((uint32_t)key));
	return buf;
}

/* Fills v with the device records' durations keyed by what key() says;
 * returns how many. */
static size_t collect(struct kv *v, size_t n, int want,
		      uint64_t (*key)(const struct coll_gpu_rec *r))
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct coll_gpu_rec *r = rec_at(i);
		int match = want < 0 ? is_device_work(r) : r->kind == want;
		if (want == COLL_GPU_RUNTIME) {
			match = is_api(r) && !r->absorbed;
		}
		if (!match) {
			continue;
		}
		uint64_t kk = key(r);
		if (kk == UINT64_MAX) {
			continue;
		}
		v[k].key = kk;
		v[k].v = r->end > r->start ? (int64_t)(r->end - r->start) : 0;
		v[k].bytes = r->bytes;
		k++;
	}
	return k;
}

static uint64_t key_name(const struct coll_gpu_rec *r)
{
	return r->name;
}

/* API names come without version suffixes from the source. */
static uint64_t key_api_base(const struct coll_gpu_rec *r)
{
	return r->name;
}

/* The API that launched r, by base name; only records the last dump
 * linked. */
static uint64_t key_launch_api(const struct coll_gpu_rec *r)
{
	const struct coll_gpu_rec *a =
		r->correlation ? api_for(r->correlation) : NULL;

	return a ? a->name : UINT64_MAX;
}

static uint64_t key_host_range(const struct coll_gpu_rec *r)
{
	const struct coll_gpu_rec *a =
		r->correlation ? api_for(r->correlation) : NULL;

	if (!a || !a->ext || a->ext >= L.ext_cap) {
		return UINT64_MAX;
	}
	const struct coll_rec *h = &L.ext_of[a->ext].r;
	return (uint64_t)h->group << 32 | h->name;
}

/*
 * Returns text (a malloc'ed table text, taken over) with the GPU sections
 * put before its last line ("Dropped records: N"), and a line with the GPU
 * records lost when there were any. Text and CSV/JSON other than the text
 * format come back unchanged, as does text when there is no GPU record.
 * Drain lock held. Returns NULL (ENOMEM) only when text was NULL.
 */
char *gpu_tables_append(char *text, const struct table_opts *o)
{
	size_t n = published();
	struct sbuf b = {0};

	if (!text || o->format != TABLE_TEXT || !n || o->category) {
		return text;
	}
	struct kv *v = malloc(n * sizeof(*v));
	if (!v) {
		return text;
	}
	sort_key_g = o->sort;
	sort_asc_g = o->ascending;
	size_t k = collect(v, n, COLL_GPU_KERNEL, key_name);
	tsection(&b, "CUDA GPU Kernels", SEC_KERNEL, v, k, o->top, label_str);
	k = collect(v, n, COLL_GPU_MEMCPY, key_name);
	tsection(&b, "CUDA GPU Memcpy", SEC_BYTES, v, k, o->top, label_str);
	k = collect(v, n, COLL_GPU_MEMSET, key_name);
	tsection(&b, "CUDA GPU Memset", SEC_BYTES, v, k, o->top, label_str);
	k = collect(v, n, COLL_GPU_RUNTIME, key_api_base);
	tsection(&b, "CUDA API (CUPTI)", SEC_TIME, v, k, o->top, label_str);
	if (L.nrecs) {
		size_t lim = L.nrecs < n ? L.nrecs : n;
		k = collect(v, lim, -1, key_launch_api);
		tsection(&b, "GPU Time by API", SEC_GPUTIME, v, k, o->top,
			 label_str);
		k = collect(v, lim, -1, key_host_range);
		tsection(&b, "GPU Time by Host Range", SEC_GPUTIME, v, k,
			 o->top, label_range);
	}
	if (gpu_dropped()) {
		sb_printf(&b, "Dropped GPU records: %llu\n",
			  (unsigned long long)gpu_dropped());
	}
	free(v);
	if (b.err || !b.p) {
		free(b.p);
		return text;
	}
	char *last = NULL;
	for (char *p = strstr(text, "Dropped records:"); p;
	     p = strstr(p + 1, "Dropped records:")) {
		last = p;
	}
	size_t head = last ? (size_t)(last - text) : strlen(text);
	size_t tl = strlen(text);
	char *out = malloc(tl + b.n + 1);
	if (!out) {
		free(b.p);
		return text;
	}
	memcpy(out, text, head);
	memcpy(out + head, b.p, b.n);
	memcpy(out + head + b.n, text + head, tl - head + 1);
	free(b.p);
	free(text);
	return out;
}

/* Child side of fork(): the parent's GPU records stay the parent's. */
void gpu_after_fork_child(void)
{
	pthread_mutex_init(&G.lock, NULL);
	__atomic_store_n(&G.count, 0, __ATOMIC_RELEASE);
	G.drained = 0;
	G.dropped = 0;
	memset(G.in_use, 0, sizeof(G.in_use));
	link_free();
}
