/*
 * chrome.c - the timeline writer: journal in, Chrome Trace Event Format out.
 *
 * The output is the object form with Kineto's conventions, so that Perfetto,
 * chrome://tracing and readers of PyTorch traces load it:
 *
 *   {"schemaVersion":1, "displayTimeUnit":"ms",
 *    "baseTimeNanoseconds": UTC ns of ts 0, "deviceProperties":[...],
 *    "distributedInfo":{"rank":R} (when known),
 *    "traceEvents":[ metadata, spans, instants, counters ],
 *    "mxprof":{"version", "pid", "host", "droppedRecords",
 *              "timelineTruncated", "clock"}}
 *
 * ts and dur are microseconds with three decimals, printed from integer
 * nanoseconds, so that spans that nest in nanoseconds nest in the file too.
 * The group of a record (its table section) travels in args.group, except
 * on counters, whose args are plotted, so it sits in a top-level "group".
 *
 * GPU records (gpu.c) are linked to host spans while the journal is read:
 * a linked span gains "correlation" / "External id" args and a launch flow,
 * and the GPU events follow the host events. Without GPU records the output
 * is what it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mxprof.h"

static const char *const cat_names[COLL_CAT_COUNT] = {
	[COLL_CAT_USER] = "user_annotation",
	[COLL_CAT_CAPI] = "c_api",
	[COLL_CAT_CUDA_RUNTIME] = "cuda_runtime",
	[COLL_CAT_CUDA_DRIVER] = "cuda_driver",
	[COLL_CAT_CUDA_SYNC] = "cuda_sync",
};

struct thread_name {
	int tid;
	char *name;
};

struct writer {
	struct out *o;
	const struct chrome_meta *meta;
	char **names; /* id -> quoted, escaped JSON string */
	uint32_t nnames;
	struct thread_name *threads;
	size_t nthreads, cap_threads;
	int err;
	int first; /* no event written yet: no separating comma */
	char pid[16];
};

/* Starts a new element of traceEvents. */
static void next_event(struct writer *w)
{
	out_str(w->o, w->first ? "\n" : ",\n");
	w->first = 0;
}

static const char *quoted(struct writer *w, uint32_t id)
{
	return id < w->nnames && w->names[id] ? w->names[id] : "\"\"";
}

static void on_str(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct writer *w = ctx;

	if (id >= w->nnames) {
		uint32_t n = w->nnames ? w->nnames : 256;
		while (n <= id) {
			n *= 2;
		}
		char **nn = realloc(w->names, n * sizeof(*nn));
		if (!nn) {
			w->err = -ENOMEM;
			return;
		}
		memset(nn + w->nnames, 0, (n - w->nnames) * sizeof(*nn));
		w->names = nn;
		w->nnames = n;
	}
	char *q = malloc(len * 6 + 3);
	if (q) {
		q[0] = '"';
		size_t k = out_json_escape(q + 1, len * 6, s, len, NULL);
		q[k + 1] = '"';
		q[k + 2] = 0;
	}
	free(w->names[id]);
	w->names[id] = q;
}

static struct thread_name *find_thread(struct writer *w, int tid)
{
	for (size_t i = 0; i < w->nthreads; i++) {
		if (w->threads[i].tid == tid) {
			return &w->threads[i];
		}
	}
	if (w->nthreads == w->cap_threads) {
		size_t n = w->cap_threads ? w->cap_threads * 2 : 64;
		struct thread_name *nt = realloc(w->threads, n * sizeof(*nt));
		if (!nt) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->threads = nt;
		w->cap_threads = n;
	}
	struct thread_name *t = &w->threads[w->nthreads++];
	t->tid = tid;
	t->name = NULL;
	return t;
}

static void on_thread(void *ctx, int tid, const char *name, size_t len)
{
	struct writer *w = ctx;
	struct thread_name *t = find_thread(w, tid);

	if (t) {
		free(t->name);
		t->name = strndup(name, len);
	}
}

static void common(struct writer *w, const char *ph, const struct coll_rec *r,
		   int tid)
{
	struct out *o = w->o;

	next_event(w);
	out_str(o, "{\"ph\":\"");
	out_str(o, ph);
	out_str(o, "\",\"cat\":\"");
	out_str(o, r->cat < COLL_CAT_COUNT && cat_names[r->cat]
			   ? cat_names[r->cat]
			   : "other");
	out_str(o, "\",\"name\":");
	out_str(o, quoted(w, r->name));
	out_str(o, ",\"pid\":");
	out_str(o, w->pid);
	out_str(o, ",\"tid\":");
	out_i64(o, tid);
	out_str(o, ",\"ts\":");
	out_us(o, r->t0);
}

static void on_recs(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	static const char scope[] = {'g', 'p', 't'};
	struct writer *w = ctx;
	struct out *o = w->o;

	if (!find_thread(w, tid)) {
		return;
	}
	for (size_t i = 0; i < n; i++, r++) {
		switch (r->kind) {
		case COLL_SPAN:
		case COLL_FRAME:
			common(w, "X", r, tid);
			out_str(o, ",\"dur\":");
			out_us(o, r->t1);
			out_str(o, ",\"args\":{\"group\":");
			out_str(o, quoted(w, r->group));
			if (r->kind == COLL_FRAME) {
				out_str(o, ",\"frame\":");
				out_u64(o, r->arg);
			}
			if (r->flags & COLL_FLAG_ERROR) {
				out_str(o, ",\"error\":1");
			}
			struct gpu_link l;
			int linked = gpu_link_span(tid, r, &l);
			if (linked) {
				gpu_link_args(o, &l);
			}
			out_str(o, "}}");
			if (linked) {
				gpu_write_slice_flow(o, &w->first, w->meta->pid,
						     tid, r, &l);
			}
			break;
		case COLL_INSTANT:
			common(w, "i", r, tid);
			out_str(o, ",\"s\":\"");
			out_write(o, &scope[r->flags < 3 ? r->flags : 1], 1);
			out_str(o, "\",\"args\":{\"group\":");
			out_str(o, quoted(w, r->group));
			out_str(o, "}}");
			break;
		case COLL_COUNTER:
			common(w, "C", r, tid);
			out_str(o, ",\"group\":");
			out_str(o, quoted(w, r->group));
			out_str(o, ",\"args\":{\"value\":");
			out_i64(o, (int64_t)r->t1);
			out_str(o, "}}");
			break;
		default:
			break;
		}
	}
}

static void on_link(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		gpu_link_claim(tid, &r[i]);
	}
}

static void metadata(struct writer *w)
{
	struct out *o = w->o;
	const struct chrome_meta *m = w->meta;

	next_event(w);
	out_str(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	out_str(o, w->pid);
	out_str(o, ",\"tid\":0,\"args\":{\"name\":");
	char label[512];
	if (m->rank >= 0) {
		snprintf(label, sizeof(label), "%s (pid %d, rank %d, %s)",
			 m->process_name, m->pid, m->rank, m->host);
	} else {
		snprintf(label, sizeof(label), "%s (pid %d)", m->process_name,
			 m->pid);
	}
	out_json_str(o, label);
	out_str(o, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\","
		   "\"pid\":");
	out_str(o, w->pid);
	out_str(o, ",\"tid\":0,\"args\":{\"sort_index\":");
	out_str(o, w->pid);
	out_str(o, "}}");
	for (size_t i = 0; i < w->nthreads; i++) {
		const struct thread_name *t = &w->threads[i];
		char fallback[32];
		snprintf(fallback, sizeof(fallback), "thread %d", t->tid);
		out_str(o,
			",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
		out_str(o, w->pid);
		out_str(o, ",\"tid\":");
		out_i64(o, t->tid);
		out_str(o, ",\"args\":{\"name\":");
		out_json_str(o, t->name ? t->name : fallback);
		out_str(o, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\","
			   "\"pid\":");
		out_str(o, w->pid);
		out_str(o, ",\"tid\":");
		out_i64(o, t->tid);
		/* The main thread (tid == pid) sorts first. */
		out_str(o, ",\"args\":{\"sort_index\":");
		out_i64(o, t->tid == m->pid ? 0 : t->tid);
		out_str(o, "}}");
	}
}

/*
 * Writes the trace for the journal at journal_path to out_path (gzip when
 * it ends in ".gz"), replacing it atomically. Returns 0 or a negative
 * errno; on error the previous file at out_path is left as it was.
 */
int chrome_write_from_journal(const char *journal_path, const char *out_path,
			      const struct chrome_meta *m)
{
	static const struct journal_ops ops = {
		.str = on_str, .thread = on_thread, .recs = on_recs};
	struct journal_header hdr;
	struct writer w = {.meta = m};
	struct out *o = malloc(sizeof(*o));
	int rc;

	if (!o) {
		return -ENOMEM;
	}
	w.o = o;
	snprintf(w.pid, sizeof(w.pid), "%d", m->pid);
	rc = out_open(o, out_path, 1);
	if (rc < 0) {
		free(o);
		return rc;
	}
	out_str(o, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\","
		   "\"baseTimeNanoseconds\":");
	out_i64(o, m->base_utc_ns);
	out_str(o, ",\"deviceProperties\":");
	gpu_write_device_properties(o);
	out_str(o, ",");
	if (m->rank >= 0) {
		out_str(o, "\"distributedInfo\":{\"rank\":");
		out_i64(o, m->rank);
		out_str(o, "},");
	}
	/* The journal is read once: events go out as they come, and the
	 * metadata, which needs every thread seen, follows them. */
	out_str(o, "\n\"traceEvents\":[");
	w.first = 1;
	if (gpu_link_begin() > 0) {
		/* GPU calls to link: a first pass over the journal claims
		 * them for host spans (see gpu.c). */
		static const struct journal_ops link_ops = {.recs = on_link};
		journal_read(journal_path, &link_ops, NULL, &hdr);
	}
	rc = journal_read(journal_path, &ops, &w, &hdr);
	if (rc == 0 && w.err == 0) {
		gpu_write_events(o, &w.first, m->pid);
		metadata(&w);
		out_str(o, "\n],\n\"mxprof\":{\"version\":\"" MXPROF_VERSION
			   "\",\"pid\":");
		out_str(o, w.pid);
		out_str(o, ",\"host\":");
		out_json_str(o, m->host);
		out_str(o, ",\"droppedRecords\":");
		out_u64(o, m->dropped);
		out_str(o, ",\"timelineTruncated\":");
		out_str(o, m->truncated ? "true" : "false");
		out_str(o, ",\"clock\":\"");
		out_str(o, m->clock);
		out_str(o, "\"}}\n");
		rc = out_commit(o);
	} else {
		out_abort(o);
		if (rc == 0) {
			rc = w.err;
		}
	}
	gpu_link_end();
	for (uint32_t i = 0; i < w.nnames; i++) {
		free(w.names[i]);
	}
	free(w.names);
	for (size_t i = 0; i < w.nthreads; i++) {
		free(w.threads[i].name);
	}
	free(w.threads);
	free(o);
	return rc;
}
