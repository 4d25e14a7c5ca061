/*
 * marks.c - the GPU part's one-line trace events, which events.c,
 * link.c and sync.c all write: the two ends of a launch flow and the
 * tracks' metadata. Kept apart from events.c so that the files that
 * write GPU events call down to it and never back into one another.
 *
 * A flow is Kineto's: a "ph":"s" at the launching call's beginning and
 * a "ph":"f" with "bp":"e" inside the GPU event, both "cat":"ac2g" with
 * the correlation id. The start is never in the middle of the call: a
 * synchronous call (cudaMemcpy, cudaDeviceSynchronize) ends after the
 * GPU work it waits for, and a viewer that orders flow points by time
 * (catapult) drops an arrow whose end comes before its start. Written on the
 * drain thread, during a dump, as events (struct coll_event) the trace writer
 * formats.
 */
#include "gpu.h"

uint64_t marks_flow_at(uint64_t start, uint64_t dur)
{
	return start + dur / 2;
}

uint64_t marks_flow_from(uint64_t start, uint64_t dur)
{
	return start + (dur >= 2 ? 1 : 0);
}

void marks_flow(struct coll_trace *t, const char *ph, uint32_t corr,
		int64_t pid, int64_t tid, uint64_t mono_ns)
{
	struct coll_event e = {.ph = ph[0],
			       .cat = "ac2g",
			       .name = "ac2g",
			       .id = corr,
			       .pid = pid,
			       .tid = tid,
			       .ts = mono_ns};

	coll_trace_write(t, &e);
}

void marks_meta(struct coll_trace *t, const char *what, int64_t pid,
		int64_t tid, const char *key, const char *sval, int64_t ival)
{
	struct coll_event e = {.ph = 'M', .name = what, .pid = pid, .tid = tid};
	struct coll_arg *a =
		coll_event_arg(&e, key, sval ? COLL_ARG_STR : COLL_ARG_I64);

	if (sval) {
		a->v.s = sval;
	} else {
		a->v.i = ival;
	}
	coll_trace_write(t, &e);
}
