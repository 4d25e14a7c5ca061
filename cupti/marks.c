/*
 * marks.c - the GPU part's one-line trace events, which events.c,
 * link.c and sync.c all write: the two ends of a launch flow and the
 * tracks' metadata. Kept apart from events.c so that the files that
 * write GPU events call down to it and never back into one another.
 *
 * A flow is Kineto's: a "ph":"s" on the launching call and a "ph":"f"
 * with "bp":"e" on the GPU event, both "cat":"ac2g" with the correlation
 * id. Written on the drain thread, during a dump.
 */
#include "gpu.h"

uint64_t marks_flow_at(uint64_t start, uint64_t dur)
{
	return start + dur / 2;
}

void marks_flow(struct coll_trace *t, const char *ph, uint32_t corr,
		int64_t pid, int64_t tid, uint64_t mono_ns)
{
	struct out *o = coll_trace_event(t);

	out_str(o, "{\"ph\":\"");
	out_str(o, ph);
	out_str(o, "\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
	out_u64(o, corr);
	out_str(o, ",\"pid\":");
	out_i64(o, pid);
	out_str(o, ",\"tid\":");
	out_i64(o, tid);
	out_str(o, ",\"ts\":");
	coll_trace_ts(t, mono_ns);
	if (ph[0] == 'f') {
		out_str(o, ",\"bp\":\"e\"");
	}
	out_str(o, "}");
}

void marks_meta(struct coll_trace *t, const char *what, int64_t pid,
		int64_t tid, const char *key, const char *sval, int64_t ival)
{
	struct out *o = coll_trace_event(t);

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
