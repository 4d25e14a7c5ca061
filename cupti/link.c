/*
 * link.c - GPU records and the host spans they belong to.
 *
 * Linking happens when a dump writes the trace, because host spans reach
 * the journal when they end and GPU records arrive in batches, in no
 * useful order relative to each other. When there are GPU API records,
 * the trace writer reads the journal twice. The first pass shows every
 * host span to link_claim():
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
 * The second pass writes the trace; link_span() gives each span what the
 * first pass linked to it: a hook's slice gets the call's correlation,
 * External id and launch flow, a range its External id. The marks and the
 * index stay until the next dump, for the "GPU Time by Host Range" and
 * "GPU Time by API" tables, which therefore reflect the latest dump.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* What a host span was linked to. */
struct gpu_link {
	uint32_t corr; /* the API call's correlation id, 0 = none     */
	uint32_t ext;  /* the external id this span carries, 0 = none */
	int flow;      /* the call launched GPU work: write a flow     */
};

struct ext_range {
	struct coll_rec r;
	int tid;
};

struct api_index {
	size_t *idx; /* API record indexes sorted by (tid, start) */
	size_t n;
	size_t *corr_head; /* hash: correlation -> first device or sync
			      record + 1 */
	size_t *corr_next; /* per record: next such record + 1 */
	size_t *api_of;	   /* hash: correlation -> API record + 1 */
	size_t hcap;
	size_t nrecs;
	struct ext_range *ext_of; /* external id -> the host range */
	size_t ext_cap;
};

static struct api_index L;
static uint32_t next_ext;
/* The categories of a hook's slice of a CUDA call (cuda_runtime,
 * cuda_driver), -1 while nobody registered them. */
static int cat_runtime = -1, cat_driver = -1;

static int cmp_api(const void *pa, const void *pb)
{
	const struct gpu_rec *a = store_at(*(const size_t *)pa);
	const struct gpu_rec *b = store_at(*(const size_t *)pb);

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
		if (!table[i] || store_at(table[i] - 1)->correlation == corr) {
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
 * time and every record by correlation. Owner held (drain thread). Returns the
 * number of API records (when positive, the writer runs the journal
 * through link_claim() first), 0, or -ENOMEM (the dump then shows GPU
 * records unlinked).
 */
int link_begin(void)
{
	size_t n = store_count();

	link_free();
	cat_runtime = cat_find("cuda_runtime");
	cat_driver = cat_find("cuda_driver");
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
	next_ext = 0;
	for (size_t i = n; i-- > 0;) {
		struct gpu_rec *r = store_at(i);
		r->ext = 0;
		r->absorbed = 0;
		r->site = 0;
		if (gpu_is_api(r)) {
			L.idx[L.n++] = i;
			*hfind(L.api_of, r->correlation) = i + 1;
		} else if ((gpu_is_device_work(r) || r->kind == GPU_SYNC) &&
			   r->correlation) {
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
		const struct gpu_rec *r = store_at(L.idx[mid]);
		if (r->tid < tid || (r->tid == tid && r->start < t0)) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

int link_has_device_work(uint32_t corr)
{
	return L.hcap && *hfind(L.corr_head, corr) != 0;
}

/* Returns a fresh external id for host range r on thread tid, remembered
 * for the second pass and the attribution table. */
static uint32_t new_ext(int tid, const struct coll_rec *r)
{
	uint32_t ext = ++next_ext;

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
	return (int)r->cat == cat_runtime || (int)r->cat == cat_driver;
}

/*
 * First pass over the journal: host span r (converted: t0 in ns since the
 * origin, t1 the duration) on thread tid, whose call site is site (0: no
 * stack). A hook's slice absorbs CUPTI's record of the same call, and
 * gives it its call site; a host range claims the unclaimed API records
 * inside it under a fresh external id. Owner held (drain thread). Can't fail.
 */
void link_claim(int tid, const struct coll_rec *r, uint32_t site)
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
		struct gpu_rec *a = store_at(L.idx[i]);
		if (a->tid != (uint32_t)tid ||
		    a->start > t1 + (hook ? SLACK_NS : 0)) {
			break;
		}
		if (hook) {
			if (!a->absorbed && a->end <= t1 + SLACK_NS &&
			    same_call(a->name, r->name)) {
				a->absorbed = 1;
				a->site = site;
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
 * id. Returns non-zero when l has something to write. Owner held (drain
 * thread).
 */
static int linked(int tid, const struct coll_rec *r, struct gpu_link *l)
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
		const struct gpu_rec *a = store_at(L.idx[i]);
		if (a->tid != (uint32_t)tid ||
		    a->start > t1 + (hook ? SLACK_NS : 0)) {
			break;
		}
		if (hook) {
			if (a->absorbed && a->end <= t1 + SLACK_NS &&
			    same_call(a->name, r->name)) {
				l->corr = a->correlation;
				l->ext = a->ext;
				l->flow = link_has_device_work(a->correlation);
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

/* What link_span() found for the span being written. */
static struct {
	int ok;
	struct gpu_link l;
} current;

/*
 * Second pass, for the span being written: its args (after == 0): a
 * hook's slice gets the absorbed call's correlation and External id, a
 * range its External id; then (after == 1) a hook's slice that launched
 * GPU work gets the launch flow's start. Can't fail.
 */
void link_span(struct coll_trace *t, int tid, const struct coll_rec *r,
	       int after)
{
	if (!after) {
		struct coll_arg a[2];
		int n = 0;
		current.ok = linked(tid, r, &current.l);
		if (current.ok && current.l.corr) {
			a[n] = (struct coll_arg){.key = "correlation",
						 .type = COLL_ARG_U64,
						 .v.u = current.l.corr};
			n++;
		}
		if (current.ok && current.l.ext) {
			a[n] = (struct coll_arg){.key = "External id",
						 .type = COLL_ARG_U64,
						 .v.u = current.l.ext};
			n++;
		}
		coll_trace_args(t, a, n);
		return;
	}
	if (current.ok && current.l.flow) {
		marks_flow(t, "s", current.l.corr, t->pid, tid,
			   marks_flow_from(r->t0 + t->base, r->t1));
	}
	current.ok = 0;
}

/*
 * Ends linking for this dump. The index and the marks (absorbed, external
 * ids) stay until the next link_begin(), for the tables. Can't fail.
 */
void link_end(void)
{
}

const struct gpu_rec *link_api_for(uint32_t corr)
{
	if (!L.hcap) {
		return NULL;
	}
	size_t k = *hfind(L.api_of, corr);
	return k ? store_at(k - 1) : NULL;
}

const struct coll_rec *link_range(uint32_t ext)
{
	return ext && ext < L.ext_cap ? &L.ext_of[ext].r : NULL;
}

size_t link_count(void)
{
	return L.nrecs;
}

void link_reset(void)
{
	link_free();
}
