/*
 * report_html.c - mxprof report --html: the pass over each trace that
 * gathers what the page draws, aggregated as it is read so that the page
 * stays small however large the trace is.
 *
 *  - each thread's (and GPU stream's) busy time in HTML_BINS columns,
 *    whose width doubles when the run outgrows them;
 *  - the ProfilerStep#N slices (section "Steps"), each with the rows of
 *    its thread that weighed most inside it: a thread's slices come in
 *    the order they ended, so the slices since its last step are those
 *    of the step that ends next (struct html_track's pending);
 *  - the self time of every host slice by (thread, stack, name), the
 *    flame graph's weights, turned into paths when the file ends (its
 *    stackFrames may come after its events, as in report_flame.c);
 *  - the time of GPU work (kernels, copies, sets) by (stream, stack of
 *    its launch, launch's name, name), the GPU flame graph's weights:
 *    the launch is the host slice with the same args.correlation
 *    (launches.c), before or after it in the file.
 *
 * Self times are the tables' (nest_self_of(), PyTorch's rules included):
 * a PyTorch slice folded into its parent is taken back out of the stack
 * of the last slice of its name on its thread, which is the folded one,
 * so that the flame graph's total is the tables' total of self time.
 * report_html_out.c writes the page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"

/* The key of a host slice's weight in h->stacks, and of GPU work's in
 * h->gpu (launch: the launch's name id, 0 for none). */
struct hr_key {
	uint32_t track;
	uint32_t has_sf;
	uint64_t sf;
	uint32_t name;
	uint32_t launch;
} __attribute__((packed));

/* GPU work whose launch comes later in the file: its key less the
 * stack, and its correlation. */
struct hr_early {
	struct hr_key k;
	int64_t corr;
} __attribute__((packed));

/* Keeps a host slice that launched GPU work with its stack, or sums GPU
 * work ev (name nid) of stream ti under its launch. Returns 0 or
 * -ENOMEM. */
static int hr_gpu(struct html *h, uint32_t ti, const struct trace_event *ev,
		  uint32_t nid, int gpu)
{
	struct hr_key k = {.track = ti, .name = nid};
	const struct launch *l;
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0;

	if (!gpu) {
		struct launch x = {.corr = ev->corr, .sf = ev->sf, .name = nid};
		int rc;

		if (!ev->has_sf || !ev->has_corr) {
			return 0;
		}
		rc = launches_put(h->ln, &x);
		h->gpu_unkept += rc == -ENOSPC;
		return rc == -ENOSPC ? 0 : rc;
	}
	h->gpu_events++;
	l = ev->has_corr ? launches_get(h->ln, ev->corr) : NULL;
	if (!l && ev->has_corr) {
		struct hr_early e = {.k = k, .corr = ev->corr};

		return strsum_add(&h->early, &e, sizeof(e), dur);
	}
	if (l) {
		k.has_sf = 1;
		k.sf = l->sf;
		k.launch = l->name ? l->name : UINT32_MAX;
	}
	return strsum_add(&h->gpu, &k, sizeof(k), dur);
}

/* Charges the GPU work that came before its launch, now that the file's
 * launches are known. Returns 0 or -ENOMEM. */
static int hr_early(struct html *h)
{
	const struct strsum_ent *v = h->early.map.slots;
	int rc = 0;

	for (size_t i = 0; i < h->early.map.cap && !rc; i++) {
		struct hr_early e;
		const struct launch *l;

		if (!v[i].key) {
			continue;
		}
		memcpy(&e, v[i].key, sizeof(e));
		l = launches_get(h->ln, e.corr);
		if (l) {
			e.k.has_sf = 1;
			e.k.sf = l->sf;
			e.k.launch = l->name ? l->name : UINT32_MAX;
		}
		rc = strsum_add(&h->gpu, &e.k, sizeof(e.k), v[i].sum);
	}
	return rc;
}

/* Returns the index of the track of (h->file, pid, tid), added when new,
 * or -1 without memory. */
static long hr_track(struct html *h, int64_t pid, int64_t tid)
{
	struct html_track *t;

	if (h->last < h->ntracks) {
		t = &h->tracks[h->last];
		if (t->file == h->file && t->pid == pid && t->tid == tid) {
			return (long)h->last;
		}
	}
	for (size_t i = 0; i < h->ntracks; i++) {
		t = &h->tracks[i];
		if (t->file == h->file && t->pid == pid && t->tid == tid) {
			h->last = i;
			return (long)i;
		}
	}
	t = realloc(h->tracks, (h->ntracks + 1) * sizeof(*t));
	if (!t) {
		return -1;
	}
	h->tracks = t;
	t = &h->tracks[h->ntracks];
	memset(t, 0, sizeof(*t));
	t->file = h->file;
	t->pid = pid;
	t->tid = tid;
	t->width = 1 << 14;
	h->last = h->ntracks++;
	return (long)h->last;
}

/* Returns the process (h->file, pid), added when new, or NULL. */
static struct html_proc *hr_proc(struct html *h, int64_t pid)
{
	struct html_proc *p;

	for (size_t i = 0; i < h->nprocs; i++) {
		if (h->procs[i].file == h->file && h->procs[i].pid == pid) {
			return &h->procs[i];
		}
	}
	p = realloc(h->procs, (h->nprocs + 1) * sizeof(*p));
	if (!p) {
		return NULL;
	}
	h->procs = p;
	p = &h->procs[h->nprocs++];
	memset(p, 0, sizeof(*p));
	p->file = h->file;
	p->pid = pid;
	return p;
}

/* Metadata events: process and thread names, the command line. */
static int hr_meta(struct html *h, const struct trace_event *ev)
{
	if (strcmp(ev->name, "thread_name") == 0) {
		long t = hr_track(h, ev->pid, ev->tid);

		if (t < 0) {
			return -ENOMEM;
		}
		snprintf(h->tracks[t].name, sizeof(h->tracks[t].name), "%s",
			 ev->args_name);
		return 0;
	}
	if (strcmp(ev->name, "process_name") == 0) {
		struct html_proc *p = hr_proc(h, ev->pid);

		if (!p) {
			return -ENOMEM;
		}
		snprintf(p->name, sizeof(p->name), "%s", ev->args_name);
	}
	return 0;
}

/* Spreads self ns of slice [ts, ts + dur) over the columns of t. */
static void hr_bins(struct html_track *t, int64_t ts, int64_t dur, int64_t self)
{
	uint64_t a = ts > 0 ? (uint64_t)ts : 0;
	uint64_t b = a + (dur > 0 ? (uint64_t)dur : 0);

	while (b / t->width >= HTML_BINS) {
		for (size_t i = 0; i < HTML_BINS / 2; i++) {
			t->bins[i] = t->bins[2 * i] + t->bins[2 * i + 1];
		}
		memset(t->bins + HTML_BINS / 2, 0,
		       HTML_BINS / 2 * sizeof(t->bins[0]));
		t->width *= 2;
	}
	if (self <= 0) {
		return;
	}
	if (b == a) {
		t->bins[a / t->width] += (double)self;
		return;
	}
	double per_ns = (double)self / (double)(b - a);

	for (uint64_t i = a / t->width; i <= (b - 1) / t->width; i++) {
		uint64_t lo = i * t->width > a ? i * t->width : a;
		uint64_t hi = (i + 1) * t->width < b ? (i + 1) * t->width : b;

		t->bins[i] += per_ns * (double)(hi - lo);
	}
}

/* A ProfilerStep#N slice of track ti ends: keeps it with the heaviest
 * rows of its thread since the last one. Returns 0 or -ENOMEM. */
static int hr_step(struct html *h, uint32_t ti, const struct trace_event *ev)
{
	struct html_track *t = &h->tracks[ti];
	const struct strsum_ent *e = t->pending.map.slots;
	struct html_step *s;

	if (h->nsteps >= HTML_STEPS_MAX) {
		h->steps_left_out++;
		strsum_clear(&t->pending);
		return 0;
	}
	if (!(h->nsteps & (h->nsteps + 1)) || !h->steps) {
		s = realloc(h->steps, (2 * h->nsteps + 1) * sizeof(*s));
		if (!s) {
			return -ENOMEM;
		}
		h->steps = s;
	}
	s = &h->steps[h->nsteps++];
	memset(s, 0, sizeof(*s));
	s->n = strtoll(ev->name + strlen("ProfilerStep#"), NULL, 10);
	s->ts = ev->ts_ns;
	s->dur = ev->dur_ns;
	s->track = ti;
	for (size_t i = 0; i < t->pending.map.cap; i++) {
		uint32_t name;
		size_t k;

		if (!e[i].key || e[i].sum <= 0) {
			continue;
		}
		memcpy(&name, e[i].key, sizeof(name));
		for (k = HTML_STEP_TOP; k > 0 && s->top[k - 1].self < e[i].sum;
		     k--) {
			if (k < HTML_STEP_TOP) {
				s->top[k] = s->top[k - 1];
			}
		}
		if (k < HTML_STEP_TOP) {
			s->top[k].name = name;
			s->top[k].self = e[i].sum;
		}
	}
	strsum_clear(&t->pending);
	return 0;
}

/* Takes folded child f's self time back out of its thread's stacks and
 * step rows (see the file's header). Returns 0 or -ENOMEM. */
static int hr_take_back(struct html *h, uint32_t ti, const struct nest_fold *f)
{
	struct html_track *t = &h->tracks[ti];
	struct strsum_ent *p = strsum_at(&t->pending, &f->name, 4);
	struct strsum_ent *l = strsum_at(&t->last_sf, &f->name, 4);
	struct hr_key k = {.track = ti, .name = f->name};

	if (!p || !l) {
		return -ENOMEM;
	}
	p->sum -= f->self;
	k.has_sf = l->sum > 0;
	k.sf = l->sum > 0 ? (uint64_t)l->sum - 1 : 0;
	return strsum_add(&h->stacks, &k, sizeof(k), -f->self);
}

/* The slice ev of track ti, in sections group and name (strtab ids). */
static int hr_slice(struct html *h, uint32_t ti, const struct trace_event *ev,
		    const char *group, uint32_t gid, uint32_t nid)
{
	struct html_track *t = &h->tracks[ti];
	uint64_t thread =
		h->file << 48 ^ (uint64_t)ev->pid << 24 ^ (uint64_t)ev->tid;
	struct nest_slice sl = {gid, nid, 0, 0};
	struct nest_fold f = {0};
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0;
	int64_t self = nest_self_of(h->nest, thread, (uint64_t)ev->ts_ns,
				    (uint64_t)dur, &sl, &f);
	int gpu = launches_is_gpu(ev->cat);
	int rc = 0;

	t->used = 1;
	t->gpu |= gpu;
	if (!h->has_span || ev->ts_ns < h->t0) {
		h->t0 = ev->ts_ns;
	}
	if (!h->has_span || ev->ts_ns + dur > h->t1) {
		h->t1 = ev->ts_ns + dur;
	}
	h->has_span = 1;
	hr_bins(t, ev->ts_ns, dur, self);
	if (f.name) {
		rc = hr_take_back(h, ti, &f);
	}
	if (rc == 0) {
		rc = hr_gpu(h, ti, ev, nid, gpu);
	}
	if (gpu || rc < 0) {
		return rc;
	}
	if (strcmp(group, "Steps") == 0) {
		return strncmp(ev->name, "ProfilerStep#", 13) == 0
			       ? hr_step(h, ti, ev)
			       : 0;
	}
	struct hr_key k = {.track = ti,
			   .has_sf = (uint32_t)ev->has_sf,
			   .sf = ev->has_sf ? ev->sf : 0,
			   .name = nid};
	struct strsum_ent *e = strsum_at(&t->last_sf, &nid, 4);

	if (!e || strsum_add(&t->pending, &nid, 4, self) < 0 ||
	    strsum_add(&h->groups, group, strlen(group), self) < 0) {
		return -ENOMEM;
	}
	e->sum = ev->has_sf ? (int64_t)ev->sf + 1 : 0;
	h->stack_events += ev->has_sf;
	return strsum_add(&h->stacks, &k, sizeof(k), self);
}

static int hr_event(const struct trace_event *ev, void *opaque)
{
	struct html *h = opaque;
	const char *group;
	uint32_t gid, nid;
	long ti;
	int rc;

	if (ev->ph == 'M') {
		rc = hr_meta(h, ev);
		goto out;
	}
	if (ev->ph != 'X' || ev->dur_out_of_range) {
		return 0;
	}
	group = ev->has_args_group ? ev->args_group : ev->cat;
	/* The tables interned these names already (cmd_report.c); a name
	 * they could not keep failed them. */
	gid = strtab_intern(group);
	nid = strtab_intern(ev->name);
	if ((!gid && *group) || (!nid && *ev->name)) {
		return 0;
	}
	ti = hr_track(h, ev->pid, ev->tid);
	if (ti < 0) {
		rc = -ENOMEM;
		goto out;
	}
	rc = hr_slice(h, (uint32_t)ti, ev, group, gid, nid);
out:
	if (rc < 0) {
		util_err("%s: out of memory for the page", h->path);
		h->failed = 1;
	}
	return rc;
}

static int hr_frame(const struct trace_frame *f, void *opaque)
{
	struct html *h = opaque;

	if (frames_add(h->fr, f) < 0) {
		util_err("%s: out of memory for the call stacks", h->path);
		h->failed = 1;
		return -ENOMEM;
	}
	return 0;
}

/* Turns this file's weights by frame node in from into weights by path
 * in to, each path under its track's number (and, for GPU work, its
 * launch's name before its own). Returns 0 or -ENOMEM. */
static int hr_resolve(struct html *h, struct strsum *from, struct strsum *to)
{
	const struct strsum_ent *v = from->map.slots;
	struct sbuf b = {0};
	int rc = 0;

	for (size_t i = 0; i < from->map.cap && !rc; i++) {
		struct hr_key k;

		if (!v[i].key) {
			continue;
		}
		memcpy(&k, v[i].key, sizeof(k));
		b.n = 0;
		sb_printf(&b, "%u", k.track);
		if (k.has_sf) {
			rc = frames_path(h->fr, k.sf, &b);
			if (rc == -ENOENT) {
				h->unknown_frames += v[i].count;
				rc = 0;
			}
		}
		if (k.launch) {
			frames_put(&b, k.launch == UINT32_MAX
					       ? ""
					       : strtab_get(k.launch));
		}
		frames_put(&b, k.name ? strtab_get(k.name) : "");
		rc = rc ? rc : b.err ? -ENOMEM : 0;
		if (!rc) {
			rc = strsum_add(to, b.p, b.n, v[i].sum);
		}
	}
	free(b.p);
	return rc;
}

/* Reads one trace into h (report_html.h). */
int report_html_file(struct html *h, const char *path, struct trace_meta *meta)
{
	enum trace_status st;
	uint64_t at;
	int ret = -1;

	h->path = path;
	h->file++;
	if (!h->nest) {
		h->nest = nest_create();
	}
	if (!h->fr) {
		h->fr = frames_create();
	}
	if (!h->ln) {
		h->ln = launches_create();
	}
	if (!h->nest || !h->fr || !h->ln) {
		util_err("out of memory");
		return -1;
	}
	st = trace_read_stacks(path, hr_event, hr_frame, h, meta, &at);
	if (st == TRACE_BAD || h->failed) {
		goto out;
	}
	if (h->file == 1) {
		h->has_base = meta->has_base;
		h->base_ns = meta->base_ns;
		snprintf(h->host, sizeof(h->host), "%s", meta->host);
	}
	h->dropped += meta->dropped;
	if (st == TRACE_TRUNCATED) {
		snprintf(h->warnings + strlen(h->warnings),
			 sizeof(h->warnings) - strlen(h->warnings),
			 "%s ends early (the program stopped while writing "
			 "it).\n",
			 path);
	}
	if (meta->timeline_truncated) {
		snprintf(h->warnings + strlen(h->warnings),
			 sizeof(h->warnings) - strlen(h->warnings),
			 "%s: the timeline was capped (MXPROF_MAX_TRACE_MB).\n",
			 path);
	}
	if (hr_resolve(h, &h->stacks, &h->flame) < 0 || hr_early(h) < 0 ||
	    hr_resolve(h, &h->gpu, &h->gpu_flame) < 0) {
		util_err("out of memory while folding the stacks");
		goto out;
	}
	ret = 0;
out:
	strsum_clear(&h->stacks);
	strsum_clear(&h->gpu);
	strsum_clear(&h->early);
	launches_clear(h->ln);
	frames_clear(h->fr);
	nest_reset(h->nest);
	return ret;
}

/* Frees what h holds (report_html.h). */
void report_html_free(struct html *h)
{
	for (size_t i = 0; i < h->ntracks; i++) {
		strsum_clear(&h->tracks[i].pending);
		strsum_clear(&h->tracks[i].last_sf);
	}
	free(h->tracks);
	free(h->procs);
	free(h->steps);
	strsum_clear(&h->stacks);
	strsum_clear(&h->flame);
	strsum_clear(&h->groups);
	strsum_clear(&h->gpu);
	strsum_clear(&h->early);
	strsum_clear(&h->gpu_flame);
	launches_destroy(h->ln);
	frames_destroy(h->fr);
	nest_destroy(h->nest);
	memset(h, 0, sizeof(*h));
}

/* mxprof report --html OUT FILE... (cli.h). */
int report_html(char *const *paths, size_t n, const char *tables,
		const struct trace_meta *meta, const char *outpath)
{
	struct trace_meta *m = malloc(sizeof(*m));
	struct html h = {0};
	int ret = CLI_FAIL;

	if (!m) {
		util_err("out of memory");
		return CLI_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		if (report_html_file(&h, paths[i], m) < 0) {
			goto out;
		}
	}
	if (h.gpu_unkept) {
		snprintf(h.warnings + strlen(h.warnings),
			 sizeof(h.warnings) - strlen(h.warnings),
			 "%llu launches with a stack were not kept (too many); "
			 "their GPU work is under its stream alone.\n",
			 (unsigned long long)h.gpu_unkept);
	}
	ret = report_html_write(&h, tables, meta, paths, n, outpath);
out:
	report_html_free(&h);
	free(m);
	return ret;
}
