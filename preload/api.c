/*
 * api.c - the public C API (include/mxprof.h); the state machine behind
 * set_state, pause and dump is state.c's.
 *
 * Tasks, frames and events push one complete span at stop: one record per
 * pair, and a crash between start and stop loses nothing already
 * recorded. One object may be started from several threads at once and
 * recursively: each thread keeps a stack of the passes it started (the
 * object and its start tick), as MXNet keeps its per-thread state, and a
 * stop ends the thread's latest pass of that object. A stop on a thread
 * that did not start the object (or deeper than SPAN_DEPTH) ends the pass
 * kept in the object itself, the latest start on any thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <strings.h>

#include "control.h"
#include "source.h"
#include "mxprof.h"
#include "preload.h"

struct span_obj {
	uint64_t t0; /* a pass kept in the object; 0 when none */
	uint32_t name;
	uint32_t group;
	uint32_t frames;
	uint16_t kind;
};

struct mxprof_task {
	struct span_obj s;
};
struct mxprof_frame {
	struct span_obj s;
};
struct mxprof_event {
	struct span_obj s;
};

struct mxprof_domain {
	uint32_t id;
	struct mxprof_domain *next;
};

struct mxprof_counter {
	int64_t value;
	uint32_t name;
	uint32_t group;
};

struct mxprof_marker {
	uint32_t name;
	uint32_t group;
};

static struct mxprof_domain *domains;
static uint32_t events_group;

int mxprof_set_state(const char *state)
{
	preload_init_once();
	if (state && !strcmp(state, "run")) {
		return state_run();
	}
	if (state && !strcmp(state, "stop")) {
		state_stop();
		return 0;
	}
	fprintf(stderr,
		"mxprof: set_state('%s'): the state is 'run' or "
		"'stop'\n",
		state ? state : "(null)");
	return -EINVAL;
}

int mxprof_pause(void)
{
	state_pause(1);
	return 0;
}

int mxprof_resume(void)
{
	state_pause(0);
	return 0;
}

int mxprof_dump(int finished)
{
	preload_init_once();
	if (!state_started()) {
		/* Nothing recorded yet: start the collector stopped, so the
		 * dump still writes an (empty) trace and tables. */
		state_run();
		mxprof_set_state("stop");
	}
	int rc = coll_dump();
	if (finished) {
		state_finished_dump();
	}
	return rc;
}

/* One line for a format or sort key dumps() does not know. */
static void say_format(const char *format, const char *sort_by)
{
	fprintf(stderr,
		"mxprof: dumps(format='%s', sort_by='%s'): format is "
		"table, json or csv; sort_by is total, avg, min, max, "
		"count or self (PyTorch's cpu_time_total, cpu_time, "
		"self_cpu_time_total and their cuda_ and device_ "
		"forms too)\n",
		format ? format : "table", sort_by ? sort_by : "total");
}

/* One line for a step list mxprof_dump_steps() or _dumps_steps() could
 * not use (err: a positive errno). */
static void say_steps(const char *what, const char *steps, int err)
{
	if (err == EINVAL) {
		fprintf(stderr,
			"mxprof: %s(steps='%s'): not a list of steps (such as "
			"\"5,10-12\": step numbers and ranges, at most 64)\n",
			what, steps);
	} else if (err == ENODATA) {
		fprintf(stderr,
			"mxprof: %s(steps='%s'): none of these steps was "
			"recorded\n",
			what, steps);
	} else if (err == ENOTSUP) {
		fprintf(stderr,
			"mxprof: %s(steps='%s'): not in flight mode, whose "
			"window holds only the last steps; without steps= it "
			"writes the window\n",
			what, steps);
	}
}

int mxprof_dump_steps(int finished, const char *steps)
{
	if (!steps) {
		return mxprof_dump(finished);
	}
	struct coll_steps sel;

	if (coll_steps_parse_list(steps, &sel) < 0) {
		say_steps("dump", steps, EINVAL);
		return -EINVAL;
	}
	preload_init_once();
	if (!state_started()) {
		say_steps("dump", steps, ENODATA);
		return -ENODATA;
	}
	int rc = coll_dump_steps(steps);
	if (rc == -EINVAL || rc == -ENODATA || rc == -ENOTSUP) {
		say_steps("dump", steps, -rc);
		return rc;
	}
	if (finished) {
		state_finished_dump();
	}
	return rc;
}

char *mxprof_dumps_steps(int reset, const char *format, const char *sort_by,
			 int ascending, unsigned row_limit, const char *steps)
{
	if (!steps) {
		return mxprof_dumps_limit(reset, format, sort_by, ascending,
					  row_limit);
	}
	preload_init_once();
	struct coll_steps sel;

	if (coll_steps_parse_list(steps, &sel) < 0) {
		say_steps("dumps", steps, EINVAL);
		errno = EINVAL;
		return NULL;
	}
	char *s = coll_dumps_steps(reset, format, sort_by, ascending, row_limit,
				   steps);
	if (!s && errno == EINVAL) {
		say_format(format, sort_by);
	} else if (!s && (errno == ENODATA || errno == ENOTSUP)) {
		say_steps("dumps", steps, errno);
	}
	return s;
}

char *mxprof_dumps(int reset, const char *format, const char *sort_by,
		   int ascending)
{
	return mxprof_dumps_limit(reset, format, sort_by, ascending, 0);
}

char *mxprof_dumps_limit(int reset, const char *format, const char *sort_by,
			 int ascending, unsigned row_limit)
{
	preload_init_once();
	char *s = coll_dumps(reset, format, sort_by, ascending, row_limit);
	if (!s && errno == EINVAL) {
		say_format(format, sort_by);
	}
	return s;
}

void mxprof_free(void *p)
{
	free(p);
}

uint64_t mxprof_dropped(void)
{
	return ring_dropped();
}

int mxprof_add_metadata(const char *key, const char *value)
{
	preload_init_once();
	return metadata_add(key, value);
}

int mxprof_add_metadata_json(const char *key, const char *json)
{
	preload_init_once();
	return metadata_add_json(key, json);
}

mxprof_domain *mxprof_domain_create(const char *name)
{
	static struct coll_lock lock = COLL_LOCK_INIT(LOCK_DOMAINS);
	uint32_t id = strtab_intern(name);
	struct mxprof_domain *d;

	if (!id) {
		errno = name && *name ? ENOMEM : EINVAL;
		return NULL;
	}
	coll_lock(&lock);
	for (d = domains; d; d = d->next) {
		if (d->id == id) {
			goto out;
		}
	}
	d = calloc(1, sizeof(*d));
	if (d) {
		d->id = id;
		d->next = domains;
		domains = d;
	}
out:
	coll_unlock(&lock);
	return d;
}

static void *span_create(size_t size, uint32_t group, const char *name,
			 uint16_t kind)
{
	struct span_obj *s;
	uint32_t id = strtab_intern(name);

	if (!id || !group) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, size);
	if (s) {
		s->name = id;
		s->group = group;
		s->kind = kind;
	}
	return s;
}

#define SPAN_DEPTH 64

/* The passes this thread started and has not stopped, oldest first. An
 * entry whose obj is NULL was stopped out of order. */
struct span_pass {
	const struct span_obj *obj;
	uint64_t t0;
	uint32_t frame;
};

/* A thread's passes live behind one 8-byte initial-exec TLS pointer, so
 * that libmxprof.so still fits in the static TLS surplus glibc keeps for
 * libraries loaded after start (the Python binding's ctypes load). The
 * block is mapped at the thread's first start (mmap: also from a signal
 * handler) and unmapped at its exit. */
struct span_thread {
	unsigned depth;
	struct span_pass stack[SPAN_DEPTH];
};
static __thread struct span_thread *span_me
	__attribute__((tls_model("initial-exec")));
static pthread_key_t span_key;
static pthread_once_t span_once = PTHREAD_ONCE_INIT;

static void span_me_free(void *p)
{
	span_me = NULL;
	munmap(p, sizeof(struct span_thread));
}

static void span_key_create(void)
{
	pthread_key_create(&span_key, span_me_free);
}

/* The thread's block, mapped on first use; NULL when that failed (its
 * passes then end through the object's latest start, as on another
 * thread). */
static struct span_thread *span_self(void)
{
	if (__builtin_expect(span_me != NULL, 1)) {
		return span_me;
	}
	void *p = mmap(NULL, sizeof(struct span_thread), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		return NULL;
	}
	pthread_once(&span_once, span_key_create);
	span_me = p;
	pthread_setspecific(span_key, p);
	return span_me;
}

/* HOT. */
static inline void span_start(struct span_obj *s)
{
	if (!coll_active() || !s) {
		return;
	}
	/* Only frames show their pass number: a locked add on every task
	 * start would wait for the thread's pending ring stores. */
	uint32_t frame =
		s->kind == COLL_FRAME
			? __atomic_add_fetch(&s->frames, 1, __ATOMIC_RELAXED)
			: 0;
	struct span_thread *me = span_self();
	uint64_t t0 = ticks_now();

	/* For a stop on another thread: the latest start of any thread. */
	__atomic_store_n(&s->t0, t0, __ATOMIC_RELAXED);
	unsigned d = me ? me->depth : SPAN_DEPTH;
	if (d < SPAN_DEPTH) {
		/* The slot is taken before it is written: a signal handler's
		 * pass goes above it. */
		me->depth = d + 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		me->stack[d] = (struct span_pass){s, t0, frame};
	}
}

/* Takes this thread's latest pass of s off its stack; returns 1 with *p
 * set, or 0 when it has none. */
static inline int span_take(const struct span_obj *s, struct span_pass *p)
{
	struct span_thread *me = span_me;
	unsigned d = me ? me->depth : 0;

	for (unsigned i = d; i-- > 0;) {
		if (me->stack[i].obj != s) {
			continue;
		}
		*p = me->stack[i];
		me->stack[i].obj = NULL;
		while (d > 0 && !me->stack[d - 1].obj) {
			d--;
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		me->depth = d;
		return 1;
	}
	return 0;
}

/* HOT. */
static inline void span_stop(struct span_obj *s)
{
	struct span_pass p;

	if (!s) {
		return;
	}
	int mine = span_take(s, &p);

	if (mine) {
		/* The object's latest start is this pass's unless another
		 * thread started it since: an extra stop finds none. */
		uint64_t t0 = p.t0;
		__atomic_compare_exchange_n(&s->t0, &t0, 0, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	}
	if (!coll_active()) {
		return;
	}
	if (!mine) {
		p.t0 = __atomic_exchange_n(&s->t0, 0, __ATOMIC_RELAXED);
		p.frame = __atomic_load_n(&s->frames, __ATOMIC_RELAXED);
		if (!p.t0) {
			return;
		}
	}
	struct coll_rec r = {.t0 = p.t0,
			     .t1 = ticks_now(),
			     .name = s->name,
			     .group = s->group,
			     .kind = s->kind,
			     .cat = COLL_CAT_USER,
			     .arg = p.frame};
	ring_push(&r);
}

mxprof_task *mxprof_task_create(mxprof_domain *domain, const char *name)
{
	return span_create(sizeof(mxprof_task), domain ? domain->id : 0, name,
			   COLL_SPAN);
}

void mxprof_task_start(mxprof_task *task)
{
	span_start((struct span_obj *)task);
}

void mxprof_task_stop(mxprof_task *task)
{
	span_stop((struct span_obj *)task);
}

/* Forgets this thread's passes of s, so that an object allocated later at
 * the same address does not end them. */
static void span_destroy(void *s)
{
	struct span_pass p;

	while (s && span_take(s, &p)) {
	}
	free(s);
}

void mxprof_task_destroy(mxprof_task *task)
{
	span_destroy(task);
}

mxprof_frame *mxprof_frame_create(mxprof_domain *domain, const char *name)
{
	return span_create(sizeof(mxprof_frame), domain ? domain->id : 0, name,
			   COLL_FRAME);
}

void mxprof_frame_start(mxprof_frame *frame)
{
	span_start((struct span_obj *)frame);
}

void mxprof_frame_stop(mxprof_frame *frame)
{
	span_stop((struct span_obj *)frame);
}

void mxprof_frame_destroy(mxprof_frame *frame)
{
	span_destroy(frame);
}

mxprof_event *mxprof_event_create(const char *name)
{
	if (!events_group) {
		events_group = strtab_intern("Events");
	}
	return span_create(sizeof(mxprof_event), events_group, name, COLL_SPAN);
}

void mxprof_event_start(mxprof_event *event)
{
	span_start((struct span_obj *)event);
}

void mxprof_event_stop(mxprof_event *event)
{
	span_stop((struct span_obj *)event);
}

void mxprof_event_destroy(mxprof_event *event)
{
	span_destroy(event);
}

/* HOT. */
static void counter_record(struct mxprof_counter *c, int64_t value)
{
	struct coll_rec r = {.t0 = ticks_now(),
			     .t1 = (uint64_t)value,
			     .name = c->name,
			     .group = c->group,
			     .kind = COLL_COUNTER,
			     .cat = COLL_CAT_USER};
	ring_push(&r);
}

mxprof_counter *mxprof_counter_create(mxprof_domain *domain, const char *name,
				      int64_t value)
{
	uint32_t id = strtab_intern(name);
	struct mxprof_counter *c;

	if (!id || !domain) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		c->name = id;
		c->group = domain->id;
		c->value = value;
		/* As MXNet's Counter(domain, name, value): a value given is
		 * the first sample. */
		if (value != 0 && coll_active()) {
			counter_record(c, value);
		}
	}
	return c;
}

void mxprof_counter_set(mxprof_counter *c, int64_t value)
{
	if (!c) {
		return;
	}
	__atomic_store_n(&c->value, value, __ATOMIC_RELAXED);
	if (coll_active()) {
		counter_record(c, value);
	}
}

void mxprof_counter_increment(mxprof_counter *c, int64_t delta)
{
	if (!c) {
		return;
	}
	int64_t v = __atomic_add_fetch(&c->value, delta, __ATOMIC_RELAXED);
	if (coll_active()) {
		counter_record(c, v);
	}
}

void mxprof_counter_decrement(mxprof_counter *c, int64_t delta)
{
	mxprof_counter_increment(c, -delta);
}

void mxprof_counter_destroy(mxprof_counter *c)
{
	free(c);
}

mxprof_marker *mxprof_marker_create(mxprof_domain *domain, const char *name)
{
	uint32_t id = strtab_intern(name);
	struct mxprof_marker *m;

	if (!id || !domain) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m) {
		m->name = id;
		m->group = domain->id;
	}
	return m;
}

int mxprof_marker_mark(mxprof_marker *m, const char *scope)
{
	/* MXNet's scopes; its "task" and "marker" are written as process
	 * scope, as MXNet writes them. */
	static const struct {
		const char *name, *letter;
		int scope;
	} names[] = {{"global", "g", COLL_SCOPE_GLOBAL},
		     {"process", "p", COLL_SCOPE_PROCESS},
		     {"thread", "t", COLL_SCOPE_THREAD},
		     {"task", NULL, COLL_SCOPE_PROCESS},
		     {"marker", NULL, COLL_SCOPE_PROCESS}};
	int sc = COLL_SCOPE_PROCESS;

	if (scope) {
		sc = -1;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (!strcmp(scope, names[i].name) ||
			    (names[i].letter &&
			     !strcmp(scope, names[i].letter))) {
				sc = names[i].scope;
			}
		}
		if (sc < 0) {
			return -EINVAL;
		}
	}
	if (m && coll_active()) {
		struct coll_rec r = {.t0 = ticks_now(),
				     .name = m->name,
				     .group = m->group,
				     .kind = COLL_INSTANT,
				     .cat = COLL_CAT_USER,
				     .flags = (uint8_t)sc};
		ring_push(&r);
	}
	return 0;
}

void mxprof_marker_destroy(mxprof_marker *m)
{
	free(m);
}
