/*
 * chrome.c - the timeline writer: journal in, Chrome Trace Event Format out.
 *
 * The output is the object form with Kineto's conventions, so that Perfetto,
 * chrome://tracing and readers of PyTorch traces load it:
 *
 *   {"schemaVersion":1, "displayTimeUnit":"ns",
 *    "baseTimeNanoseconds": UTC ns of ts 0, "deviceProperties":[...],
 *    "traceName": the file's path, as Kineto writes it,
 *    "distributedInfo":{"rank": R, "world_size": W, "local_rank": L}
 *    (those known; the space after each colon is Kineto's, and Holistic
 *    Trace Analysis finds the rank with the regular expression
 *    "rank":\s+(\d+)),
 *    "traceEvents":[ metadata, spans, instants, counters ],
 *    "stackFrames":{ the frame tree, by id } (with stacks: after the
 *    events, where a streaming reader of the metadata stops before it),
 *    "mxprof":{"version", "pid", "host", "droppedRecords",
 *              "timelineTruncated", "clock"}}
 *
 * ts and dur are microseconds with three decimals, printed from integer
 * nanoseconds, so that spans that nest in nanoseconds nest in the file too.
 * The group of a record (its table section) travels in args.group, except
 * on counters, whose args are plotted, so it sits in a top-level "group".
 *
 * Sources with records of their own (the GPU source) take part
 * through their struct coll_source: they may see every host span in a
 * first pass over the journal (to link their records to host ranges), add
 * args and events to host spans as they are written, write their own
 * events after the host events, and list devices in "deviceProperties".
 *
 * Category names come from the journal (J_CAT); a journal of version 1
 * has none, and writer_meta.legacy_cats names its categories 2 and up.
 *
 * A big run's dump writes a gigabyte of events, so what an event shares
 * with others is made once: each name is escaped and quoted once, with its
 * length, when the journal defines it; its event head
 * ({"ph":"X","cat":"c","name":"n") once for each kind and category it
 * comes with; the pid and tid once for each batch of a thread's records.
 * An event is then a few copies of known lengths and its numbers, written
 * straight into the output's buffer (out_room()).
 *
 * The members around the events (the head, the process's and threads'
 * metadata, the "mxprof" object) are chrome_meta.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "output.h"
#include "mxprof.h"

/* A name of this journal, and the head of the last events written with
 * it: {"ph":"<head_ph>","cat":"<head_cat>","name":<q> */
struct name_ent {
	char *q; /* quoted, escaped JSON string; NULL: not defined */
	size_t qn;
	char *head; /* NULL: none made yet */
	size_t headn;
	unsigned head_cat;
	unsigned head_gen; /* the writer's cat_gen it was made under */
	char head_ph;
	uint8_t step_name;  /* it is STEP_NAME */
	uint8_t step_group; /* it is STEPS_GROUP */
};

/* The most an event adds to its head, its thread's part, and its group's
 * name: the separator, the fixed keys, and six numbers. */
#define EVENT_FIXED_BYTES 256

struct writer {
	struct coll_trace t;
	struct out *o;
	const struct writer_meta *meta;
	struct journal_header hdr;
	char cats[COLL_CAT_MAX][32]; /* from J_CAT */
	unsigned cat_gen;	     /* changes when a category is renamed */
	struct name_ent *names;	     /* by id */
	uint32_t nnames;
	struct name_ent noname; /* for an id the journal did not define */
	char empty[4];		/* its quoted form, "" */
	/* The sources that add to host spans in this dump. */
	const struct coll_source *span_src[16];
	size_t nspan_src;
	char *scratch; /* an event too big for the buffer */
	size_t scratch_cap;
	int in_scratch;
	struct chrome_thread *threads;
	size_t nthreads, cap_threads;
	int err;
	char pid[16];
	struct stack_tree *stacks; /* NULL: no stacks in this process */
	struct stack_pends *pends;
	struct callstack *calls; /* Kineto's "Call stack" of cpu_op spans */
	unsigned cpu_op_cat;	 /* the category id of "cpu_op" + 1, 0: none */
	unsigned cpu_op_gen;	 /* the cat_gen it was found under */
};

struct out *coll_trace_event(struct coll_trace *t)
{
	out_str(t->o, t->first ? "\n" : ",\n");
	t->first = 0;
	return t->o;
}

void coll_trace_ts(struct coll_trace *t, uint64_t mono_ns)
{
	out_us(t->o, mono_ns > t->base ? mono_ns - t->base : 0);
}

static void on_cat(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct writer *w = ctx;

	if (id < COLL_CAT_MAX) {
		snprintf(w->cats[id], sizeof(w->cats[id]), "%.*s", (int)len, s);
		w->cat_gen++;
	}
}

/* The name of category id in this journal. */
static const char *cat_of(struct writer *w, unsigned id)
{
	if (id == COLL_CAT_USER || id == COLL_CAT_CAPI) {
		return cat_name(id);
	}
	if (w->hdr.version < 2 && w->meta->legacy_cats) {
		for (unsigned i = 2; w->meta->legacy_cats[i - 2]; i++) {
			if (i == id) {
				return w->meta->legacy_cats[i - 2];
			}
		}
		return "other";
	}
	return id < COLL_CAT_MAX && w->cats[id][0] ? w->cats[id] : "other";
}

/* The entry of name id: the journal's, or "" for an id it did not
 * define. */
static struct name_ent *ent(struct writer *w, uint32_t id)
{
	return id < w->nnames && w->names[id].q ? &w->names[id] : &w->noname;
}

static void on_str(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct writer *w = ctx;

	if (id >= w->nnames) {
		uint32_t n = w->nnames ? w->nnames : 256;
		while (n <= id) {
			n *= 2;
		}
		struct name_ent *nn = realloc(w->names, n * sizeof(*nn));
		if (!nn) {
			w->err = -ENOMEM;
			return;
		}
		memset(nn + w->nnames, 0, (n - w->nnames) * sizeof(*nn));
		w->names = nn;
		w->nnames = n;
	}
	struct name_ent *e = &w->names[id];
	char *q = malloc(len * 6 + 2);
	free(e->q);
	free(e->head);
	memset(e, 0, sizeof(*e));
	if (q) {
		q[0] = '"';
		size_t k = out_json_escape(q + 1, len * 6, s, len, NULL);
		q[k + 1] = '"';
		e->q = q;
		e->qn = k + 2;
	}
	e->step_name = len == strlen(STEP_NAME) && !memcmp(s, STEP_NAME, len);
	e->step_group =
		len == strlen(STEPS_GROUP) && !memcmp(s, STEPS_GROUP, len);
}

/*
 * The entry of r's name with its head for events of type ph and r's
 * category, made when the last one was for another. Returns NULL, with
 * w->err set, when it cannot be allocated.
 */
static const struct name_ent *head_of(struct writer *w,
				      const struct coll_rec *r, char ph)
{
	struct name_ent *e = ent(w, r->name);

	if (e->head && e->head_ph == ph && e->head_cat == r->cat &&
	    e->head_gen == w->cat_gen) {
		return e;
	}
	const char *cat = cat_of(w, r->cat);
	size_t catn = strlen(cat);
	char *h = realloc(e->head, catn + e->qn + 32);
	if (!h) {
		w->err = -ENOMEM;
		return NULL;
	}
	char *p = h;
	memcpy(p, "{\"ph\":\"", 7);
	p[7] = ph;
	memcpy(p + 8, "\",\"cat\":\"", 9);
	p += 17;
	memcpy(p, cat, catn);
	p += catn;
	memcpy(p, "\",\"name\":", 9);
	p += 9;
	memcpy(p, e->q, e->qn);
	e->head = h;
	e->headn = (size_t)(p - h) + e->qn;
	e->head_ph = ph;
	e->head_cat = r->cat;
	e->head_gen = w->cat_gen;
	return e;
}

static struct chrome_thread *find_thread(struct writer *w, int tid)
{
	for (size_t i = 0; i < w->nthreads; i++) {
		if (w->threads[i].tid == tid) {
			return &w->threads[i];
		}
	}
	if (w->nthreads == w->cap_threads) {
		size_t n = w->cap_threads ? w->cap_threads * 2 : 64;
		struct chrome_thread *nt = realloc(w->threads, n * sizeof(*nt));
		if (!nt) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->threads = nt;
		w->cap_threads = n;
	}
	struct chrome_thread *t = &w->threads[w->nthreads++];
	t->tid = tid;
	t->name = NULL;
	return t;
}

static void on_thread(void *ctx, int tid, const char *name, size_t len)
{
	struct writer *w = ctx;
	struct chrome_thread *t = find_thread(w, tid);

	if (t) {
		free(t->name);
		t->name = strndup(name, len);
	}
}

static char *copy(char *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* Copies a string literal: its length is known at compile time. */
#define LIT(p, s) copy(p, s, sizeof(s) - 1)

/*
 * Room for an event of at most need bytes: in the output's buffer, or in
 * a scratch buffer for one too big for it (a name of megabytes). Returns
 * NULL, with w->err set, when that cannot be allocated. event_done()
 * takes what was written.
 */
static char *event_room(struct writer *w, size_t need)
{
	if (need <= OUT_BUF_BYTES) {
		w->in_scratch = 0;
		return out_room(w->o, need);
	}
	if (need > w->scratch_cap) {
		char *b = realloc(w->scratch, need);
		if (!b) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->scratch = b;
		w->scratch_cap = need;
	}
	w->in_scratch = 1;
	return w->scratch;
}

static void event_done(struct writer *w, const char *end)
{
	if (w->in_scratch) {
		out_write(w->o, w->scratch, (size_t)(end - w->scratch));
		w->in_scratch = 0;
	} else {
		out_wrote(w->o, end);
	}
}

/* Writes the separator before an event, as coll_trace_event() does. */
static char *event_sep(struct writer *w, char *p)
{
	if (w->t.first) {
		w->t.first = 0;
		*p++ = '\n';
		return p;
	}
	return LIT(p, ",\n");
}

/* The head of r's event of type ph, then its thread's part (tp: ,"pid":
 * P,"tid":T,"ts":) and ts; with step, the name gets "#<arg>" (a step's
 * record, named STEP_NAME, steps.c). Returns the end, or NULL with
 * w->err set. */
static char *event_start(struct writer *w, const struct coll_rec *r, char ph,
			 const char *tp, size_t tpn, size_t more, int step)
{
	const struct name_ent *h = head_of(w, r, ph);
	char *p;

	if (!h ||
	    !(p = event_room(w, h->headn + tpn + more + EVENT_FIXED_BYTES))) {
		return NULL;
	}
	p = event_sep(w, p);
	p = copy(p, h->head, h->headn);
	if (step) {
		p = LIT(p - 1, "#"); /* over the name's closing quote */
		p = out_fmt_u64(p, r->arg);
		*p++ = '"';
	}
	p = copy(p, tp, tpn);
	return out_fmt_us(p, r->t0);
}

/* Lets the sources add to host span r: args, then events. */
static void sources_span(struct writer *w, int tid, const struct coll_rec *r,
			 int after)
{
	for (size_t i = 0; i < w->nspan_src; i++) {
		w->span_src[i]->span(&w->t, tid, r, after);
	}
}

/* Returns 1 when category cat is Kineto's "cpu_op" (PyTorch's operators),
 * whose spans with a stack carry Kineto's "Call stack". */
static int is_cpu_op(struct writer *w, unsigned cat)
{
	if (w->cpu_op_cat == 0 || w->cpu_op_cat - 1 != cat ||
	    w->cpu_op_gen != w->cat_gen) {
		if (strcmp(cat_of(w, cat), "cpu_op") != 0) {
			return 0;
		}
		w->cpu_op_cat = cat + 1;
		w->cpu_op_gen = w->cat_gen;
	}
	return 1;
}

/* A span or frame: ph "X". */
static void write_span(struct writer *w, int tid, const struct coll_rec *r,
		       uint32_t sf, const char *tp, size_t tpn)
{
	const struct name_ent *g = ent(w, r->group);
	const char *cs = NULL;
	size_t csn = 0;

	if (sf && w->calls && is_cpu_op(w, r->cat)) {
		cs = callstack_of(w->calls, sf, &csn);
	}
	/* A step's record: "ProfilerStep#N" (N its arg, steps.c). */
	int step = r->kind == COLL_SPAN && g->step_group &&
		   ent(w, r->name)->step_name;
	char *p = event_start(w, r, 'X', tp, tpn, g->qn + csn + 32, step);

	if (!p) {
		return;
	}
	p = LIT(p, ",\"dur\":");
	p = out_fmt_us(p, r->t1);
	if (sf) {
		p = LIT(p, ",\"sf\":");
		p = out_fmt_u64(p, sf);
	}
	p = LIT(p, ",\"args\":{\"group\":");
	p = copy(p, g->q, g->qn);
	if (cs) {
		p = LIT(p, ",\"Call stack\":");
		p = copy(p, cs, csn);
	}
	if (r->kind == COLL_FRAME) {
		p = LIT(p, ",\"frame\":");
		p = out_fmt_u64(p, r->arg);
	}
	if (r->flags & COLL_FLAG_ERROR) {
		p = LIT(p, ",\"error\":1");
	}
	if (w->nspan_src) {
		event_done(w, p);
		sources_span(w, tid, r, 0);
		p = out_room(w->o, 2);
		p = LIT(p, "}}");
		out_wrote(w->o, p);
		sources_span(w, tid, r, 1);
		return;
	}
	p = LIT(p, "}}");
	event_done(w, p);
}

/* A marker: ph "i", its scope in "s". */
static void write_instant(struct writer *w, const struct coll_rec *r,
			  const char *tp, size_t tpn)
{
	static const char scope[] = {'g', 'p', 't'};
	const struct name_ent *g = ent(w, r->group);
	char *p = event_start(w, r, 'i', tp, tpn, g->qn, 0);

	if (!p) {
		return;
	}
	p = LIT(p, ",\"s\":\"");
	*p++ = scope[r->flags < 3 ? r->flags : 1];
	p = LIT(p, "\",\"args\":{\"group\":");
	p = copy(p, g->q, g->qn);
	p = LIT(p, "}}");
	event_done(w, p);
}

/* A counter: ph "C", its group at the top level (args are plotted). */
static void write_counter(struct writer *w, const struct coll_rec *r,
			  const char *tp, size_t tpn)
{
	const struct name_ent *g = ent(w, r->group);
	char *p = event_start(w, r, 'C', tp, tpn, g->qn, 0);
	int64_t v = (int64_t)r->t1;

	if (!p) {
		return;
	}
	p = LIT(p, ",\"group\":");
	p = copy(p, g->q, g->qn);
	p = LIT(p, ",\"args\":{\"value\":");
	if (v < 0) {
		*p++ = '-';
	}
	p = out_fmt_u64(p, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	p = LIT(p, "}}");
	event_done(w, p);
}

static void on_recs(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct writer *w = ctx;
	char tp[80], *p = tp;

	if (!find_thread(w, tid)) {
		return;
	}
	/* What every event of the batch has after its head. */
	p = LIT(p, ",\"pid\":");
	p = copy(p, w->pid, strlen(w->pid));
	p = LIT(p, ",\"tid\":");
	if (tid < 0) {
		*p++ = '-';
	}
	p = out_fmt_u64(p, tid < 0 ? (uint64_t)0 - (uint64_t)(int64_t)tid
				   : (uint64_t)tid);
	p = LIT(p, ",\"ts\":");
	for (size_t i = 0; i < n && w->err == 0; i++, r++) {
		uint32_t sf = 0;
		if (w->pends) {
			sf = stack_tree_leaf(w->stacks,
					     stack_pends_rec(w->pends, tid, r));
		}
		if (w->meta->steps && !step_pick_keep(w->meta->steps, r)) {
			continue;
		}
		switch (r->kind) {
		case COLL_SPAN:
		case COLL_FRAME:
			write_span(w, tid, r, sf, tp, (size_t)(p - tp));
			break;
		case COLL_INSTANT:
			write_instant(w, r, tp, (size_t)(p - tp));
			break;
		case COLL_COUNTER:
			write_counter(w, r, tp, (size_t)(p - tp));
			break;
		default:
			break;
		}
	}
}

/* The first pass: a source that links its records to host spans sees
 * every one, with its call site when it has a stack. */
struct claim_pass {
	const struct coll_source *s;
	struct stack_pends *pends; /* NULL: no stacks */
};

static void on_claim(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct claim_pass *c = ctx;

	for (size_t i = 0; i < n; i++) {
		uint32_t id =
			c->pends ? stack_pends_rec(c->pends, tid, &r[i]) : 0;
		c->s->claim(tid, &r[i], id ? stack_site(id) : 0);
	}
}

/*
 * Writes the trace for the journal at journal_path to out_path (gzip when
 * it ends in ".gz"), replacing it atomically. Returns 0 or a negative
 * errno; on error the previous file at out_path is left as it was.
 */
int chrome_write_from_journal(const char *journal_path, const char *out_path,
			      const struct writer_meta *m)
{
	static const struct journal_ops ops = {.str = on_str,
					       .thread = on_thread,
					       .recs = on_recs,
					       .cat = on_cat};
	const struct coll_source *const *src = m->sources;
	struct writer w = {.meta = m};
	struct out *o = malloc(sizeof(*o));
	int rc;

	if (!o) {
		return -ENOMEM;
	}
	w.o = o;
	w.t.o = o;
	memcpy(w.empty, "\"\"", 3);
	w.noname.q = w.empty;
	w.noname.qn = 2;
	w.t.pid = m->pid;
	w.t.base = clock_base_mono_ns();
	if (m->steps) {
		w.t.keep = step_pick_keep_ns;
		w.t.keep_ctx = m->steps;
	}
	snprintf(w.pid, sizeof(w.pid), "%d", m->pid);
	rc = out_open(o, out_path, 1);
	if (rc < 0) {
		free(o);
		return rc;
	}
	chrome_head(o, m, out_path);
	/* The frame tree before the events that name its nodes; written
	 * after them (below). */
	if ((w.stacks = stack_tree_build())) {
		w.pends = stack_pends_create();
		w.calls = callstack_create(w.stacks);
	}
	w.t.stacks = w.stacks;
	w.t.path = out_path;
	/* The journal is read once: events go out as they come, and the
	 * metadata, which needs every thread seen, follows them. */
	out_str(o, "\n\"traceEvents\":[");
	w.t.first = 1;
	for (size_t i = 0; src && src[i]; i++) {
		int linking = src[i]->begin ? src[i]->begin() > 0 : 1;
		if (linking && src[i]->span &&
		    w.nspan_src < sizeof(w.span_src) / sizeof(w.span_src[0])) {
			w.span_src[w.nspan_src++] = src[i];
		}
		if (linking && src[i]->begin && src[i]->claim) {
			/* Records to link: a first pass over the journal
			 * shows the source every host span. */
			static const struct journal_ops claim_ops = {
				.recs = on_claim};
			struct claim_pass c = {src[i], NULL};
			if (w.stacks) {
				c.pends = stack_pends_create();
			}
			journal_read(journal_path, &claim_ops, &c, &w.hdr);
			stack_pends_destroy(c.pends);
		}
	}
	rc = journal_read(journal_path, &ops, &w, &w.hdr);
	if (rc == 0 && w.err == 0) {
		for (size_t i = 0; src && src[i]; i++) {
			if (src[i]->events) {
				src[i]->events(&w.t);
			}
		}
		chrome_metadata(coll_trace_event(&w.t), m, w.pid, w.threads,
				w.nthreads);
		out_str(o, "\n],\n");
		if (w.stacks) {
			/* After traceEvents: Holistic Trace Analysis's
			 * streaming reader takes the members before it as
			 * metadata, one recursion for each, and a big
			 * stackFrames overflows Python's stack. */
			stack_frames_write(o, w.stacks);
			out_str(o, ",\n");
		}
		chrome_tail(o, m, w.pid);
		if (m->written) {
			m->written->json_bytes = out_bytes(o);
			m->written->stacks = w.stacks != NULL;
		}
		rc = out_commit(o);
	} else {
		out_abort(o);
		if (rc == 0) {
			rc = w.err;
		}
	}
	for (size_t i = 0; src && src[i]; i++) {
		if (src[i]->end) {
			src[i]->end();
		}
	}
	for (uint32_t i = 0; i < w.nnames; i++) {
		free(w.names[i].q);
		free(w.names[i].head);
	}
	free(w.names);
	free(w.noname.head);
	free(w.scratch);
	for (size_t i = 0; i < w.nthreads; i++) {
		free(w.threads[i].name);
	}
	free(w.threads);
	callstack_destroy(w.calls);
	stack_tree_free(w.stacks);
	stack_pends_destroy(w.pends);
	free(o);
	return rc;
}
