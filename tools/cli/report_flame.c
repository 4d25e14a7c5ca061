/*
 * report_flame.c - mxprof report --flame: folded stacks, the "collapsed"
 * format that flamegraph.pl and speedscope read. One line per distinct
 * path, the frames outermost first joined by ';', then the event's own
 * name, a space and the weight in nanoseconds:
 *
 *   main;train_step;conv_forward;cudaLaunchKernel 1500
 *
 * The weight of a host slice with a stack ("sf") is its self time (its
 * duration less the slices nested directly inside it on its thread, as
 * the tables. Self Time: selftime.c, fed every slice of the file), so that a
 * hooked call inside another is not counted twice. With --gpu, each GPU
 * event (kernel, gpu_memcpy, gpu_memset) weighs its duration, under the
 * stack of its launch (the host slice with the same args.correlation,
 * launches.c), then the launch's name, then its own name.
 *
 * Events are summed by (frame node, names) while the file is read, and
 * the paths are built at its end, so the file's stackFrames may come
 * before or after its events, and memory follows the distinct stacks, not
 * the events. The lines are sorted by path (bytewise), so the output of
 * one trace is always the same; paths that two nodes share (a merged
 * trace, a ';' made ':') are one line. Lines of weight 0 (a slice all of
 * whose time is nested) are left out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct fl_ctx {
	const char *path;
	int gpu;
	uint64_t file;
	struct frames *fr;
	struct launches *ln;
	struct nest *self;
	struct strsum stacks; /* this file: (sf, names) -> weight */
	struct strsum early;  /* GPU work before its launch: (corr, name) */
	struct strsum *paths; /* every file: path -> weight */
	uint64_t sf_events;   /* events with "sf" in this file */
	uint64_t no_stack;    /* left out: no stack */
	uint64_t unknown;     /* left out: a frame stackFrames lacks */
	uint64_t unkept;      /* left out: the launch was not kept */
	int full;	      /* launches is full */
	int failed;
};

static int fl_frame(const struct trace_frame *f, void *opaque)
{
	struct fl_ctx *c = opaque;

	if (frames_add(c->fr, f) < 0) {
		util_err("%s: out of memory for the call stacks", c->path);
		c->failed = 1;
		return -ENOMEM;
	}
	return 0;
}

/* Adds weight w to the key (sf, launch name id, name): launch 0 for a
 * host slice. Returns 0 or -ENOMEM. */
static int fl_add(struct fl_ctx *c, uint64_t sf, uint32_t launch,
		  const char *name, int64_t w)
{
	char key[sizeof(sf) + sizeof(launch) + TRACE_NAME_MAX];
	size_t n = strlen(name);

	memcpy(key, &sf, sizeof(sf));
	memcpy(key + sizeof(sf), &launch, sizeof(launch));
	memcpy(key + sizeof(sf) + sizeof(launch), name, n);
	return strsum_add(&c->stacks, key, sizeof(sf) + sizeof(launch) + n, w);
}

/* A GPU run: keeps the launches with a stack, sums the GPU work under
 * them. */
static int fl_gpu(struct fl_ctx *c, const struct trace_event *ev, int is_gpu)
{
	const struct launch *l;
	int rc;

	if (!is_gpu) {
		if (!ev->has_sf || !ev->has_corr) {
			return 0;
		}
		struct launch x = {.corr = ev->corr, .sf = ev->sf};

		x.name = strtab_intern(ev->name);
		if (!x.name && ev->name[0]) {
			return -ENOMEM;
		}
		rc = launches_put(c->ln, &x);
		if (rc == -ENOSPC) {
			c->full = 1;
			return 0;
		}
		return rc;
	}
	l = ev->has_corr ? launches_get(c->ln, ev->corr) : NULL;
	if (!l && ev->has_corr && !c->full) {
		/* Its launch may come later in the file (CUPTI hands API
		 * records and GPU work over in its own order): it waits for
		 * the file's end (fl_early). */
		char key[sizeof(ev->corr) + TRACE_NAME_MAX];
		size_t n = strlen(ev->name);

		memcpy(key, &ev->corr, sizeof(ev->corr));
		memcpy(key + sizeof(ev->corr), ev->name, n);
		return strsum_add(&c->early, key, sizeof(ev->corr) + n,
				  ev->dur_ns > 0 ? ev->dur_ns : 0);
	}
	if (!l) {
		if (c->full && ev->has_corr) {
			c->unkept++;
		} else {
			c->no_stack++;
		}
		return 0;
	}
	/* strtab ids start at 1; the empty name's 0 stays apart from a
	 * host slice by the launch slot alone, so mark it. */
	return fl_add(c, l->sf, l->name ? l->name : UINT32_MAX, ev->name,
		      ev->dur_ns > 0 ? ev->dur_ns : 0);
}

static int fl_event(const struct trace_event *ev, void *opaque)
{
	struct fl_ctx *c = opaque;
	int is_gpu, rc = 0;

	if (ev->ph != 'X') {
		return 0;
	}
	if (ev->dur_out_of_range) {
		util_err("%s: the dur of '%s' does not fit in 64 bits", c->path,
			 ev->name);
		c->failed = 1;
		return -ERANGE;
	}
	c->sf_events += ev->has_sf;
	is_gpu = launches_is_gpu(ev->cat);
	if (c->gpu) {
		rc = fl_gpu(c, ev, is_gpu);
	} else {
		/* Every slice, with or without a stack, in the tables'
		 * thread keys (cmd_report.c), for the same self times. */
		uint64_t thread = c->file << 48 ^ (uint64_t)ev->pid << 24 ^
				  (uint64_t)ev->tid;
		int64_t self =
			nest_self(c->self, thread, (uint64_t)ev->ts_ns,
				  ev->dur_ns > 0 ? (uint64_t)ev->dur_ns : 0);

		if (is_gpu) {
			return 0;
		}
		if (!ev->has_sf) {
			c->no_stack++;
			return 0;
		}
		rc = fl_add(c, ev->sf, 0, ev->name, self);
	}
	if (rc < 0) {
		util_err("out of memory while folding the stacks");
		c->failed = 1;
	}
	return rc;
}

/* Charges the GPU work that came before its launch, now that the file's
 * launches are known. Returns 0 or -ENOMEM. */
static int fl_early(struct fl_ctx *c)
{
	int rc = 0;

	const struct strsum_ent *v = c->early.map.slots;

	for (size_t i = 0; i < c->early.map.cap && !rc; i++) {
		const struct strsum_ent *e = &v[i];
		int64_t corr;

		if (!e->key) {
			continue;
		}
		memcpy(&corr, e->key, sizeof(corr));
		const struct launch *l = launches_get(c->ln, corr);
		if (!l) {
			c->no_stack += e->count;
			continue;
		}
		rc = fl_add(c, l->sf, l->name ? l->name : UINT32_MAX,
			    e->key + sizeof(corr), e->sum);
	}
	return rc;
}

/* Turns this file's sums by frame node into sums by path. Returns 0 or
 * -ENOMEM. */
static int fl_resolve(struct fl_ctx *c)
{
	struct sbuf b = {0};
	int rc = 0;

	const struct strsum_ent *v = c->stacks.map.slots;

	for (size_t i = 0; i < c->stacks.map.cap && !rc; i++) {
		const struct strsum_ent *e = &v[i];
		uint64_t sf;
		uint32_t launch;

		if (!e->key) {
			continue;
		}
		memcpy(&sf, e->key, sizeof(sf));
		memcpy(&launch, e->key + sizeof(sf), sizeof(launch));
		b.n = 0;
		rc = frames_path(c->fr, sf, &b);
		if (rc == -ENOENT) {
			c->unknown += e->count;
			rc = 0;
			continue;
		}
		if (launch) {
			frames_put(&b, launch == UINT32_MAX
					       ? ""
					       : strtab_get(launch));
		}
		frames_put(&b, e->key + sizeof(sf) + sizeof(launch));
		rc = b.err ? -ENOMEM : rc;
		if (!rc) {
			rc = strsum_add(c->paths, b.p, b.n, e->sum);
		}
	}
	free(b.p);
	return rc;
}

/* Reads one trace into c->paths. Returns 0, or -1 after one line. */
static int fl_file(struct fl_ctx *c, const char *path)
{
	struct trace_meta *m = malloc(sizeof(*m));
	enum trace_status st;
	uint64_t at;
	int ret = -1;

	if (!m) {
		util_err("%s: out of memory", path);
		return -1;
	}
	c->path = path;
	c->file++;
	c->sf_events = 0;
	c->full = 0;
	st = trace_read_stacks(path, fl_event, fl_frame, c, m, &at);
	if (st == TRACE_BAD) {
		goto out;
	}
	if (st == TRACE_TRUNCATED) {
		trace_read_warn_truncated(path, at);
	}
	if (!c->sf_events && !frames_count(c->fr)) {
		util_err("%s has no call stacks (record with MXPROF_STACKS=N "
			 "or mxprof run --stacks N)",
			 path);
		goto out;
	}
	if (!frames_count(c->fr)) {
		util_err("%s: its events carry call stacks (sf) but it has no "
			 "stackFrames",
			 path);
		goto out;
	}
	if (fl_early(c) < 0 || fl_resolve(c) < 0) {
		util_err("out of memory while folding the stacks");
		goto out;
	}
	ret = 0;
out:
	strsum_clear(&c->stacks);
	strsum_clear(&c->early);
	frames_clear(c->fr);
	launches_clear(c->ln);
	free(m);
	return ret;
}

static int fl_cmp(const void *pa, const void *pb)
{
	const struct strsum_ent *a = *(const struct strsum_ent *const *)pa;
	const struct strsum_ent *b = *(const struct strsum_ent *const *)pb;

	return strcmp(a->key, b->key);
}

/* Writes the lines of paths, sorted, to outpath (NULL: stdout). Returns
 * CLI_OK or CLI_FAIL after one line. */
static int fl_write(struct strsum *paths, const char *outpath)
{
	const struct strsum_ent **v =
		malloc((paths->map.used + 1) * sizeof(*v));
	const struct strsum_ent *e = paths->map.slots;
	struct out *o = NULL;
	char num[32];
	size_t n = 0;
	int ret = CLI_FAIL;

	if (!v) {
		util_err("out of memory");
		return CLI_FAIL;
	}
	for (size_t i = 0; i < paths->map.cap; i++) {
		if (e[i].key && e[i].sum > 0) {
			v[n++] = &e[i];
		}
	}
	qsort(v, n, sizeof(*v), fl_cmp);
	if (!outpath) {
		errno = 0;
		for (size_t i = 0; i < n; i++) {
			printf("%s %lld\n", v[i]->key, (long long)v[i]->sum);
		}
		ret = util_stdout_done("the folded stacks");
		goto out;
	}
	o = malloc(sizeof(*o));
	if (!o) {
		util_err("out of memory");
		goto out;
	}
	if (util_out_open(o, outpath, 1) < 0) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		out_write(o, v[i]->key, v[i]->len);
		snprintf(num, sizeof(num), " %lld\n", (long long)v[i]->sum);
		out_str(o, num);
	}
	if (util_out_commit(o, outpath) < 0) {
		goto out;
	}
	ret = CLI_OK;
out:
	free(o);
	free(v);
	return ret;
}

/* mxprof report --flame [--gpu] FILE... (cli.h). */
int report_flame(char *const *paths, size_t n, int gpu, const char *outpath)
{
	struct strsum all = {0};
	struct fl_ctx c = {.gpu = gpu, .paths = &all};
	int ret = CLI_FAIL;

	c.fr = frames_create();
	c.ln = launches_create();
	c.self = nest_create();
	if (!c.fr || !c.ln || !c.self) {
		util_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (fl_file(&c, paths[i]) < 0) {
			goto out;
		}
	}
	if (c.no_stack) {
		util_err(gpu ? "%llu GPU events whose launch has no call stack "
			       "left out"
			     : "%llu events without a call stack (sf) left out",
			 (unsigned long long)c.no_stack);
	}
	if (c.unknown) {
		util_err("%llu events name frames that stackFrames lacks; left "
			 "out",
			 (unsigned long long)c.unknown);
	}
	if (c.unkept) {
		util_err("%llu GPU events left out (too many launches with a "
			 "stack)",
			 (unsigned long long)c.unkept);
	}
	ret = fl_write(&all, outpath);
out:
	strsum_clear(&all);
	frames_destroy(c.fr);
	launches_destroy(c.ln);
	nest_destroy(c.self);
	return ret;
}
