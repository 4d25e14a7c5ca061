/*
 * trace_event.c - a source's trace events (struct coll_event, source.h)
 * in the Chrome trace's JSON: the one place that knows how an event of a
 * source is spelled, so that a source (cupti/) fills a struct and a new
 * trace format changes this file, not the source. Keys come in a fixed
 * order: ph, cat, name, id, pid, tid, ts, dur, s, sf, group, bp, args.
 */
#include <stdio.h>

#include "internal.h"

struct coll_arg *coll_event_arg(struct coll_event *e, const char *key, int type)
{
	/* Past the last slot, the arg goes to a spare the event does not
	 * see; events are written on the drain thread only. */
	static struct coll_arg spare;
	struct coll_arg *a =
		e->nargs < COLL_EVENT_ARGS_MAX ? &e->args[e->nargs++] : &spare;

	a->key = key;
	a->type = type;
	a->prec = 0;
	a->n = 0;
	return a;
}

/* Writes a's value. */
static void arg_value(struct out *o, const struct coll_arg *a)
{
	char v[64];

	switch (a->type) {
	case COLL_ARG_U64:
		out_u64(o, a->v.u);
		break;
	case COLL_ARG_I64:
		out_i64(o, a->v.i);
		break;
	case COLL_ARG_STR:
		out_json_str(o, a->v.s);
		break;
	case COLL_ARG_F64:
		if (a->prec >= 0) {
			snprintf(v, sizeof(v), "%.*f", a->prec, a->v.f);
		} else {
			snprintf(v, sizeof(v), "%.*g", -a->prec, a->v.f);
		}
		out_str(o, v);
		break;
	default:
		out_str(o, "[");
		for (int i = 0; i < a->n && i < 3; i++) {
			out_str(o, i ? "," : "");
			out_i64(o, a->v.ints[i]);
		}
		out_str(o, "]");
	}
}

/* Writes n args as "key":value, each with a comma before it but the
 * first when first is set. */
static void args(struct out *o, const struct coll_arg *a, int n, int first)
{
	for (int i = 0; i < n; i++) {
		out_str(o, first && i == 0 ? "\"" : ",\"");
		out_str(o, a[i].key);
		out_str(o, "\":");
		arg_value(o, &a[i]);
	}
}

void coll_trace_args(struct coll_trace *t, const struct coll_arg *a, int n)
{
	args(t->o, a, n, 0);
}

void coll_trace_object(struct out *o, int *first, const struct coll_arg *a,
		       int n)
{
	out_str(o, *first ? "{" : ",{");
	*first = 0;
	args(o, a, n, 1);
	out_str(o, "}");
}

void coll_trace_write(struct coll_trace *t, const struct coll_event *e)
{
	if (t->keep && e->ph != 'M' &&
	    !t->keep(t->keep_ctx, e->ts > t->base ? e->ts - t->base : 0)) {
		return;
	}
	struct out *o = coll_trace_event(t);
	char ph[2] = {e->ph, 0};

	out_str(o, "{\"ph\":\"");
	out_str(o, ph);
	out_str(o, "\"");
	if (e->cat) {
		out_str(o, ",\"cat\":");
		out_json_str(o, e->cat);
	}
	out_str(o, ",\"name\":");
	out_json_str(o, e->name);
	if (e->ph == 's' || e->ph == 'f') {
		out_str(o, ",\"id\":");
		out_u64(o, e->id);
	}
	out_str(o, ",\"pid\":");
	out_i64(o, e->pid);
	out_str(o, ",\"tid\":");
	out_i64(o, e->tid);
	if (e->ph != 'M') {
		out_str(o, ",\"ts\":");
		coll_trace_ts(t, e->ts);
	}
	if (e->ph == 'X') {
		out_str(o, ",\"dur\":");
		out_us(o, e->dur);
	}
	if (e->ph == 'i' && e->scope) {
		char s[2] = {e->scope, 0};
		out_str(o, ",\"s\":\"");
		out_str(o, s);
		out_str(o, "\"");
	}
	if (e->sf) {
		out_str(o, ",\"sf\":");
		out_u64(o, e->sf);
	}
	if (e->group) {
		out_str(o, ",\"group\":");
		out_json_str(o, e->group);
	}
	if (e->ph == 'f') {
		out_str(o, ",\"bp\":\"e\"");
	}
	if (e->nargs) {
		out_str(o, ",\"args\":{");
		args(o, e->args, e->nargs, 1);
		out_str(o, "}");
	}
	out_str(o, "}");
}
