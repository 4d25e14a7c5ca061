/*
 * drain.c - the collector's state and what the drain thread does with it:
 * one pass over the rings and the sources, and the work of each request
 * (flush, dump, dumps(), the end, exec), each under the owner lock.
 *
 * The drain thread (queue.c) runs every pass, every dump and every
 * source's callbacks; nothing else touches the journal, the aggregates or
 * a source's records. When there is no drain thread (not started,
 * finished, or not restarted in a forked child), a requester serves its
 * own request with the same functions, under the same lock.
 *
 * The owner lock (LOCK_OWNER) is held for each pass and each dump, never
 * while waiting and never around a source's flush or tick: a source may
 * call into its library there (a GPU library's flush runs its callback),
 * and that library may hold locks of its own that other threads need.
 * fork()'s prepare handler takes the owner lock, so a child sees the
 * state between two steps.
 *
 * A pass moves every ring's new records through clock conversion into the
 * journal and the aggregates, lets every source take in what it was
 * handed, then writes the journal out, so that at most one drain period
 * is lost if the process is killed. A dump then writes the trace and the
 * tables (dump.c, given the state).
 *
 * In flight mode the pass hands the records to flight.c instead of the
 * journal and notes steps and progress for the triggers (trigger.c);
 * drain_triggers() fires what is due, and a dump, the end and exec write
 * the window through trigger_write().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drain.h"
#include "files.h"

/* The collector's state (internal.h): the drain thread's, under the
 * owner lock. */
struct coll_state coll_state;
#define S coll_state

struct coll_lock drain_owner = COLL_LOCK_INIT(LOCK_OWNER);
struct drain_thread drain_t;

/* Adds record c of thread tid to the tables, with its call site when it
 * is a span with a stack. */
static void agg_add_stacked(int tid, const struct coll_rec *c)
{
	uint32_t id = 0, sg = 0, sn = 0;

	if (c->kind == COLL_STACK && !S.pends) {
		S.pends = stack_pends_create();
	}
	if (S.pends) {
		id = stack_pends_rec(S.pends, tid, c);
	}
	if (c->kind == COLL_STACK) {
		return;
	}
	if (id) {
		uint32_t site = stack_site(id);
		if (!site ||
		    stack_site_row(c->group, c->name, site, &sg, &sn) < 0) {
			sg = sn = 0;
		}
	}
	struct agg_sample s = agg_rec_sample(c);
	agg_add_site(S.agg, (uint32_t)tid, c->t0, &s, sg, sn);
}

/*
 * A ring's records, converted in bulk (the clock's newest line, inline),
 * to the tables (with their call sites once stacks come) and, 256 at a
 * time, to the journal.
 */
static void emit(void *ctx, int tid, const struct coll_rec *recs, size_t n)
{
	struct coll_rec buf[2 * 256]; /* a span with a stack makes two */
	struct clock_line line;
	/* Flight mode keeps the records in memory (flight.c); the thread's
	 * name is noted all the same (threads_name() writes nothing to a
	 * journal that is not open). */
	int flight = S.cfg.flight_mode != COLL_FLIGHT_OFF;
	int journal_ok = flight || dump_ensure_journal(&S) == 0;
	/* The run's end: past the ring's newest record, or the end of its
	 * array when the run is the first of two. */
	const struct coll_rec *last = recs + n;

	(void)ctx;
	clock_line(&line);
	if (journal_ok) {
		threads_name(S.j, tid, 0);
	}
	/* Steps (steps.c): a thread's first record starts its first step,
	 * and a step window leaves out the records of steps it does not
	 * keep. */
	uint32_t sg = steps_group();
	int filter = steps_filtering();
	uint64_t first = steps_thread_first(tid);

	while (n > 0) {
		size_t k = n < 256 ? n : 256;
		size_t j = 0;
		int stacked = S.pends != NULL;
		for (size_t i = 0; i < k; i++) {
			const struct coll_rec *r = &recs[i];
			struct coll_rec *c = &buf[j];
			/* The ring's lines were written on another core: ask
			 * for them well before they are read, but not for
			 * those past the run, which the recording thread may
			 * be writing: they would be taken from it and given
			 * back. */
			if (r + 16 < last) {
				__builtin_prefetch(r + 16);
			}
			if (__builtin_expect(filter, 0) && r->t0 &&
			    !window_steps_keeps(r->t0)) {
				continue;
			}
			*c = *r;
			uint32_t sid = coll_rec_unstack(c);
			if (__builtin_expect(r->group == sg, 0) &&
			    r->kind == COLL_SPAN) {
				steps_drain_rec(c, first);
			} else if (r->t0 < first) {
				first = r->t0;
			}
			j++;
			c->t0 = clock_line_to_ns(&line, c->t0);
			if (r->kind == COLL_SPAN || r->kind == COLL_FRAME) {
				uint64_t end = clock_line_to_ns(&line, r->t1);
				c->t1 = end > c->t0 ? end - c->t0 : 0;
			}
			stacked |= r->kind == COLL_STACK;
			if (__builtin_expect(flight, 0) && c->group == sg &&
			    c->kind == COLL_SPAN) {
				flight_note_step(c->arg, c->t0, c->t0 + c->t1);
				trigger_note_step(c->arg, c->t0, c->t1);
			}
			if (sid) {
				/* The call's stack, as a record of its own
				 * before the span, as stack_push() makes. */
				c[1] = *c;
				*c = (struct coll_rec){.t0 = c[1].t0,
						       .name = sid,
						       .kind = COLL_STACK};
				j++;
				stacked = 1;
			}
		}
		if (stacked) {
			for (size_t i = 0; i < j; i++) {
				agg_add_stacked(tid, &buf[i]);
			}
		} else if (j) {
			agg_add_recs_on(S.agg, (uint64_t)tid, buf, j);
		}
		if (flight && j) {
			flight_recs(tid, buf, j);
		} else if (journal_ok && j) {
			journal_recs(S.j, tid, buf, j);
		}
		recs += k;
		n -= k;
	}
	steps_thread_seen(tid, first);
	if (flight) {
		trigger_note_records();
	}
}

/* A tick count as nanoseconds: the clock is linear between anchors. */
static int64_t ticks_span_ns(int64_t d)
{
	uint64_t base = ticks_now();

	return d > 0 ? (int64_t)(clock_to_ns(base + (uint64_t)d) -
				 clock_to_ns(base))
		     : 0;
}

/* What full rings tallied (tally.c) goes to the tables only. */
static void tally_emit(void *ctx, const struct tally_row *w)
{
	struct agg_sample s = {.group = w->group,
			       .name = w->name,
			       .kind = w->kind,
			       .flags = w->flags,
			       .arg = w->arg};
	int64_t total = w->total, min = w->min, max = w->max;

	(void)ctx;
	if (w->kind == COLL_SPAN || w->kind == COLL_FRAME) {
		total = ticks_span_ns(total);
		min = ticks_span_ns(min);
		max = ticks_span_ns(max);
	}
	agg_add_many(S.agg, &s, w->count, total, min, max, w->errors);
}

void coll_thread_seen(int tid)
{
	if (S.cfg.flight_mode || dump_ensure_journal(&S) == 0) {
		threads_name(S.j, tid, 0);
	}
}

/* A source's drain, flush or tick, on the helper where it calls into
 * the program's libraries (shared_call.c). */
struct source_call {
	const struct coll_source *src;
	int what; /* 0 drain, 1 flush, 2 tick */
	struct agg *agg;
	uint64_t now;
};

static void source_call_run(void *arg)
{
	const struct source_call *c = arg;

	switch (c->what) {
	case 0:
		c->src->drain(c->agg);
		break;
	case 1:
		c->src->flush();
		break;
	default:
		c->src->tick(c->now);
		break;
	}
}

/* Calls what of every source that has it. */
static void sources_call(int what, struct agg *agg, uint64_t now)
{
	for (int i = 0; coll_sources[i]; i++) {
		const struct coll_source *src = coll_sources[i];
		struct source_call c = {src, what, agg, now};
		if (!(what == 0	  ? src->drain != NULL
		      : what == 1 ? src->flush != NULL
				  : src->tick != NULL)) {
			continue;
		}
		if (src->foreign && src->foreign()) {
			shared_call(source_call_run, &c);
		} else {
			source_call_run(&c);
		}
	}
}

/* One pass; owner held. Returns the records taken from the rings. */
uint64_t drain_pass(void)
{
	ring_set_tally_sink(tally_emit, NULL);
	uint64_t n = ring_collect(emit, NULL);

	S.image_records += n;

	sources_call(0, S.agg, 0);
	if (S.journal_open > 0) {
		journal_flush(S.j);
	}
	return n;
}

/* Every source hands over what it buffers; no collector lock held. */
void drain_flush_sources(void)
{
	sources_call(1, NULL, 0);
}

void drain_tick_sources(uint64_t now)
{
	sources_call(2, NULL, now);
}

/* A dump: the sources' buffers, a pass, the files (of the steps of list
 * steps only, when not NULL). In flight mode, the trigger trigger (NULL:
 * none is due) with reason, its hook first (the stacks it adds are
 * drained with the rest). signal: the dump signal asked for it. Owner
 * not held. */
static int dump_or_trigger(const char *trigger, const char *reason, int signal,
			   const char *steps)
{
	if (trigger) {
		char output[sizeof(S.cfg.output)];
		coll_lock(&drain_owner);
		snprintf(output, sizeof(output), "%s", S.cfg.output);
		coll_unlock(&drain_owner);
		trigger_call_hook(trigger, output);
	}
	drain_flush_sources();
	coll_lock(&drain_owner);
	int rc = -ESRCH;
	if (S.agg && !drain_t.finished) {
		drain_pass();
		/* A dump signal that found nothing of this image (a shell
		 * wrapper's, before it execs the program) is owed again once
		 * there is something, here or in the next image. */
		if (S.image_records > 0) {
			S.cfg.dump_owed = 0;
		} else if (signal) {
			S.cfg.dump_owed = 1;
		}
		rc = trigger ? trigger_write(&S, ring_dropped(), trigger,
					     reason, 1)
			     : dump_write(&S, ring_dropped(), steps);
	}
	coll_unlock(&drain_owner);
	return rc;
}

int drain_dump(int signal, const char *reason, const char *steps)
{
	if (steps && S.cfg.flight_mode) {
		return -ENOTSUP; /* the window holds the last steps only */
	}
	return dump_or_trigger(S.cfg.flight_mode ? "dump" : NULL, reason,
			       signal, steps);
}

void drain_triggers(void)
{
	char why[128];

	coll_lock(&drain_owner);
	const char *t = S.cfg.flight_mode && S.agg && !drain_t.finished
				? trigger_due(ticks_mono_ns())
				: NULL;
	const char *reason = t && !strcmp(t, "hang")
				     ? trigger_hang_reason(why, sizeof(why))
				     : "";
	coll_unlock(&drain_owner);
	if (t) {
		dump_or_trigger(t, reason, 0, NULL);
	}
}

int drain_owed(void)
{
	return S.cfg.dump_owed && S.image_records > 0;
}

/* The tables of the steps of list steps, picked from the journal
 * (step_pick.c): no GPU sections, the metadata "steps" saying which were
 * found. NULL with *err set when there are none or without memory. Owner
 * held. */
static char *tables_picked(struct table_opts o, const char *steps, int *err)
{
	char *s = NULL;

	*err = -ENODATA;
	if (S.cfg.flight_mode) {
		*err = -ENOTSUP; /* the window holds the last steps only */
		return NULL;
	}
	if (dump_ensure_journal(&S) != 0 || S.journal_open <= 0) {
		return NULL;
	}
	journal_flush(S.j);
	struct step_pick *p = step_pick_open(steps, S.journal_path, err);
	struct agg *a = p ? step_pick_agg(p, S.journal_path) : NULL;
	const char **shown = p ? step_pick_meta(o.meta, p) : NULL;

	if (a && shown) {
		o.extra = NULL;
		o.meta = shown;
		s = table_format(a, &o);
	}
	if (p && !s) {
		*err = -ENOMEM;
	}
	free(shown);
	agg_destroy(a);
	step_pick_close(p);
	return s;
}

static char *tables_now(struct request *r)
{
	struct table_opts o = *r->o;
	char *s = NULL;

	drain_flush_sources();
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished) {
		drain_pass();
	}
	o.dropped = ring_dropped();
	o.extra = source_tables;
	steps_meta_sync();
	const char **pairs = meta_copy(NULL);
	o.meta = pairs;
	if (r->steps) {
		int err;

		s = tables_picked(o, r->steps, &err);
		r->rc = s ? 0 : err;
	} else if (S.agg) {
		s = table_format(S.agg, &o);
	} else {
		struct agg *empty = agg_create();
		s = empty ? table_format(empty, &o) : NULL;
		agg_destroy(empty);
	}
	/* dumps() counts from here; the files keep it all. */
	if (r->reset && S.agg && (s || !r->steps)) {
		if (!S.before_reset) {
			S.before_reset = agg_create();
		}
		if (S.before_reset) {
			agg_merge(S.before_reset, S.agg);
		}
		agg_reset(S.agg);
		for (int i = 0; coll_sources[i]; i++) {
			if (coll_sources[i]->reset) {
				coll_sources[i]->reset();
			}
		}
	}
	coll_unlock(&drain_owner);
	free(pairs);
	if (!s && r->rc == 0) {
		r->rc = -ENOMEM;
	}
	return s;
}

/* The end: the final dump when asked, the journal and status file gone.
 * Owner not held. */
void drain_finish(int dump)
{
	if (dump) {
		drain_flush_sources();
	}
	coll_lock(&drain_owner);
	if (!drain_t.finished) {
		__atomic_store_n(&drain_t.finished, 1, __ATOMIC_RELEASE);
		if (dump && S.agg) {
			drain_pass();
			if (dump != COLL_FINISH_IF_RECORDED || S.journal_open ||
			    S.cfg.continue_journal || flight_records()) {
				uint64_t dropped = ring_dropped();
				S.final = 1;
				if (S.cfg.flight_mode) {
					trigger_write(&S, dropped, "end",
						      "the program ended", 0);
				} else {
					dump_write(&S, dropped, NULL);
				}
				dump_say_cut(&S, dropped);
			}
		}
		if (S.journal_open > 0) {
			/* Keep the journal only if the trace could not be
			 * written: it is then the only copy of the timeline. */
			journal_close(S.j, S.last_trace_err == 0);
		}
		dump_remove_status(&S);
	}
	coll_unlock(&drain_owner);
}

/* Before exec: everything into the journal, kept for the next image.
 * Owner not held. */
static int exec_now(struct request *r)
{
	int rc = -ESRCH;

	drain_flush_sources();
	coll_lock(&drain_owner);
	if (drain_t.started && !drain_t.finished && S.agg) {
		drain_pass();
		rc = 0;
		if (S.cfg.flight_mode) {
			/* The window to the trace's name; the next image
			 * starts its own. */
			trigger_write(&S, ring_dropped(), "exec",
				      "the program called exec", 0);
		} else if (S.journal_open > 0) {
			journal_stats(S.j, ring_dropped());
			if (journal_flush(S.j) == 0) {
				snprintf(r->trace, r->trace_len, "%s",
					 S.cfg.output);
				rc = S.cfg.dump_owed ? 2 : 1;
			}
		}
		/* The next image writes its own when it starts. */
		dump_remove_status(&S);
	}
	coll_unlock(&drain_owner);
	return rc;
}

void drain_serve(struct request *r)
{
	switch (r->type) {
	case REQ_FLUSH:
		drain_flush_sources();
		coll_lock(&drain_owner);
		r->rc = drain_t.started && !drain_t.finished ? 0 : -ESRCH;
		if (r->rc == 0) {
			drain_pass();
		}
		coll_unlock(&drain_owner);
		break;
	case REQ_DUMP:
		r->rc = drain_dump(0, "the program called mxprof_dump()",
				   r->steps);
		break;
	case REQ_DUMPS:
		r->rc = 0;
		r->text = tables_now(r);
		break;
	case REQ_FINISH:
		drain_finish(r->dump);
		r->rc = 0;
		break;
	case REQ_EXEC:
		r->rc = exec_now(r);
		break;
	}
}

/* The tables of an exec'ed image start from the records of the images
 * before it, read back from their journal. */
static void continue_tables(void)
{
	char journal[4200];
	struct recovery *r = malloc(sizeof(*r));

	if (!r || paths_journal(S.cfg.output, journal, sizeof(journal)) < 0) {
		free(r);
		return;
	}
	if (recover_open(r, journal) == 0) {
		agg_destroy(S.agg);
		S.agg = r->agg;
		r->agg = NULL;
		S.continued_records = r->records;
	}
	recover_close(r);
	free(r);
}

int drain_setup(const struct coll_config *cfg)
{
	S.cfg = *cfg;
	__atomic_store_n(&S.pid, (int)getpid(), __ATOMIC_RELAXED);
	S.continued_records = 0;
	S.final = 0;
	S.image_records = 0;
	ring_capacity = cfg->ring_records;
	ring_capacity_max = cfg->ring_records_max > cfg->ring_records
				    ? cfg->ring_records_max
				    : cfg->ring_records;
	ring_overflow = cfg->overflow;
	paths_stats(S.cfg.output, S.stats_path, sizeof(S.stats_path));
	dump_note_output(&S);
	S.journal_open = 0;
	S.dumps_done = 0;
	S.last_dump_ns = ticks_mono_ns();
	threads_forget();
	if (!S.j) {
		S.j = calloc(1, sizeof(*S.j));
	}
	if (!S.agg) {
		S.agg = agg_create();
	}
	if (!S.j || !S.agg) {
		return -ENOMEM;
	}
	S.j->fd = -1;
	if (S.cfg.flight_mode) {
		/* No continuous dumps: a trigger or the end writes. */
		S.cfg.dump_period_s = 0;
		trigger_setup(&S.cfg);
	}
	if (flight_setup(&S.cfg) < 0) {
		return -ENOMEM;
	}
	if (S.cfg.continue_journal) {
		continue_tables();
	}
	return 0;
}

void coll_own(void)
{
	coll_lock(&drain_owner);
}

void coll_disown(void)
{
	coll_unlock(&drain_owner);
}
