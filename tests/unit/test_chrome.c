/*
 * test_chrome.c - the timeline: the collector records from several
 * threads, coll_dump() writes the Chrome trace (collector/chrome.c) from
 * the journal (collector/journal.c) and the tables beside it.
 *
 * The collector can be started once per process, so the first test that
 * needs it runs the whole scenario (record, flood one ring, dump) and
 * every test checks the files it left. Ticks are CLOCK_MONOTONIC ns here
 * (ticks_use_tsc.on = 0), so times are exact.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"
#include <yajl/yajl_tree.h>

#include "collector.h"
#include "internal.h"

#define NREC  3		 /* threads with spans, frames, markers, counters */
#define STEPS 200	 /* "step" spans per such thread                  */
#define FLOOD 1100	 /* records the flooding thread pushes, past 1    */
#define RING  1024	 /* records per ring                              */
#define MS    1000000ull /* ns                                            */

static char dir[] = "/tmp/mxprof-test-chrome-XXXXXX";
static char trace_path[256], stats_path[256], journal_path[256];

/* ---- small helpers ------------------------------------------------------ */

static yajl_val parse_json(const char *text)
{
	char err[512];
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));

	if (!root) {
		fail_msg("trace does not parse: %s", err);
	}
	return root;
}

static yajl_val get(yajl_val v, const char *key, yajl_type t)
{
	const char *path[] = {key, NULL};

	return yajl_tree_get(v, path, t);
}

static const char *get_str(yajl_val v, const char *key)
{
	yajl_val s = get(v, key, yajl_t_string);

	return s ? YAJL_GET_STRING(s) : NULL;
}

/* Parses a µs value written with exactly three decimals into ns. */
static uint64_t us_to_ns(const char *raw)
{
	const char *dot = strchr(raw, '.');
	uint64_t ns = 0;

	if (!dot || strlen(dot) != 4) {
		fail_msg("not µs with ns precision: %s", raw);
	}
	for (const char *p = raw; *p; p++) {
		if (*p != '.') {
			assert_true(*p >= '0' && *p <= '9');
			ns = ns * 10 + (uint64_t)(*p - '0');
		}
	}
	return ns;
}

/* ---- the scenario ------------------------------------------------------ */

struct worker {
	int k;
	int tid;
	int fails;
};

static pthread_barrier_t recorded, flood_go, flood_done, dumped;
static uint64_t base;	     /* ticks of ts = 0 */
static uint64_t dropped_now; /* ring_dropped() right after the dump */
static int rec_tids[NREC + 1];
static int dump_rc = -1;

static void push(struct worker *w, uint16_t kind, uint8_t cat, uint8_t flags,
		 const char *group, const char *name, uint64_t t0, uint64_t t1,
		 uint32_t arg)
{
	struct coll_rec r = {.t0 = t0,
			     .t1 = t1,
			     .name = strtab_intern(name),
			     .group = strtab_intern(group),
			     .kind = kind,
			     .cat = cat,
			     .flags = flags,
			     .arg = arg};

	if (ring_push(&r) != 0) {
		w->fails++;
	}
}

static void *recorder(void *arg)
{
	struct worker *w = arg;
	char name[16];
	static const uint8_t scopes[] = {COLL_SCOPE_THREAD, COLL_SCOPE_PROCESS,
					 COLL_SCOPE_GLOBAL};

	snprintf(name, sizeof(name), "rec-%d", w->k);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	w->tid = (int)syscall(SYS_gettid);
	uint64_t t = base + (uint64_t)(w->k + 1) * MS;
	push(w, COLL_COUNTER, COLL_CAT_USER, 0, "counters", "queue depth",
	     t + 10, (uint64_t)(5 + w->k), 0);
	push(w, COLL_INSTANT, COLL_CAT_USER, scopes[w->k], "user", "marker",
	     t + 100, 0, 0);
	/* A span is pushed when it ends: the inner one first. */
	push(w, COLL_SPAN, COLL_CAT_CAPI, COLL_FLAG_STATUS | COLL_FLAG_ERROR,
	     "user", "inner", t + 250001, t + 1000003, 0);
	push(w, COLL_SPAN, COLL_CAT_USER, 0, "user", "outer", t, t + 1500000,
	     0);
	push(w, COLL_FRAME, COLL_CAT_USER, 0, "frames", "frame", t + 2 * MS,
	     t + 2 * MS + 16000, (uint32_t)(7 + w->k));
	push(w, COLL_COUNTER, COLL_CAT_USER, 0, "counters", "queue depth",
	     t + 20, (uint64_t)(int64_t)-3, 0);
	for (uint64_t i = 0; i < STEPS; i++) {
		uint64_t s = t + 3 * MS + i * 1000;
		push(w, COLL_SPAN, COLL_CAT_USER, 0, "steps", "step", s,
		     s + 500, 0);
	}
	pthread_barrier_wait(&recorded);
	pthread_barrier_wait(&dumped);
	return NULL;
}

/* Pushes one record, then, while the main thread holds the rings
 * registry (so nothing drains), FLOOD more into a ring of RING. */
static void *flooder(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, "flood", 0, 0, 0);
	w->tid = (int)syscall(SYS_gettid);
	uint64_t t = base + 10 * MS;
	push(w, COLL_SPAN, COLL_CAT_USER, 0, "flood", "flood", t, t + 100, 0);
	pthread_barrier_wait(&recorded);
	pthread_barrier_wait(&flood_go);
	for (uint64_t i = 1; i <= FLOOD; i++) {
		uint64_t s = t + i * 200;
		push(w, COLL_SPAN, COLL_CAT_USER, 0, "flood", "flood", s,
		     s + 100, 0);
	}
	pthread_barrier_wait(&flood_done);
	pthread_barrier_wait(&dumped);
	return NULL;
}

static int scenario_ran;
static struct worker workers[NREC + 1];

static void run_scenario(void)
{
	pthread_t th[NREC + 1];

	if (scenario_ran) {
		assert_int_equal(dump_rc, 0);
		return;
	}
	scenario_ran = 1;
	pthread_barrier_init(&recorded, NULL, NREC + 2);
	pthread_barrier_init(&dumped, NULL, NREC + 2);
	pthread_barrier_init(&flood_go, NULL, 2);
	pthread_barrier_init(&flood_done, NULL, 2);
	for (int k = 0; k <= NREC; k++) {
		workers[k].k = k;
		assert_int_equal(pthread_create(&th[k], NULL,
						k < NREC ? recorder : flooder,
						&workers[k]),
				 0);
	}
	pthread_barrier_wait(&recorded);
	/* Empty the flooder's ring, stop draining (as the collector's owner
	 * this thread keeps the drain thread waiting), let it overfill. */
	assert_int_equal(coll_flush(), 0);
	coll_own();
	pthread_barrier_wait(&flood_go);
	pthread_barrier_wait(&flood_done);
	coll_disown();

	dump_rc = coll_dump();
	dropped_now = ring_dropped();
	pthread_barrier_wait(&dumped);
	for (int k = 0; k <= NREC; k++) {
		pthread_join(th[k], NULL);
		rec_tids[k] = workers[k].tid;
	}
	assert_int_equal(dump_rc, 0);
	for (int k = 0; k < NREC; k++) {
		assert_int_equal(workers[k].fails, 0);
	}
	assert_int_equal(workers[NREC].fails, FLOOD - RING);
}

/* ---- the trace, indexed ------------------------------------------------ */

struct ev {
	char ph;
	const char *name;
	const char *cat;
	int tid;
	int pid;
	uint64_t ts, dur; /* ns */
	const char *ts_raw, *dur_raw;
	yajl_val v;
};

struct trace {
	char *text;
	yajl_val root;
	struct ev *evs;
	size_t n;
};

static void index_trace(struct trace *t, char *text)
{
	t->text = text;
	t->root = parse_json(text);
	assert_true(YAJL_IS_OBJECT(t->root));
	yajl_val arr = get(t->root, "traceEvents", yajl_t_array);
	assert_non_null(arr);
	t->n = YAJL_GET_ARRAY(arr)->len;
	t->evs = calloc(t->n ? t->n : 1, sizeof(*t->evs));
	for (size_t i = 0; i < t->n; i++) {
		yajl_val v = YAJL_GET_ARRAY(arr)->values[i];
		struct ev *e = &t->evs[i];
		const char *ph = get_str(v, "ph");
		assert_non_null(ph);
		assert_int_equal(strlen(ph), 1);
		e->ph = ph[0];
		e->name = get_str(v, "name");
		e->cat = get_str(v, "cat");
		e->v = v;
		yajl_val n = get(v, "tid", yajl_t_number);
		assert_non_null(n);
		e->tid = (int)YAJL_GET_INTEGER(n);
		n = get(v, "pid", yajl_t_number);
		assert_non_null(n);
		e->pid = (int)YAJL_GET_INTEGER(n);
		if ((n = get(v, "ts", yajl_t_number))) {
			e->ts_raw = YAJL_GET_NUMBER(n);
			e->ts = us_to_ns(e->ts_raw);
		}
		if ((n = get(v, "dur", yajl_t_number))) {
			e->dur_raw = YAJL_GET_NUMBER(n);
			e->dur = us_to_ns(e->dur_raw);
		}
	}
}

static void free_trace(struct trace *t)
{
	yajl_tree_free(t->root);
	free(t->evs);
	free(t->text);
}

static void load_trace(struct trace *t)
{
	run_scenario();
	char *text = tu_read_file(trace_path, NULL);
	assert_non_null(text);
	index_trace(t, text);
}

static size_t count(const struct trace *t, char ph, const char *name, int tid)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct ev *e = &t->evs[i];
		if (e->ph == ph && e->name && !strcmp(e->name, name) &&
		    (tid == 0 || e->tid == tid)) {
			n++;
		}
	}
	return n;
}

static const struct ev *find(const struct trace *t, char ph, const char *name,
			     int tid)
{
	const struct ev *found = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct ev *e = &t->evs[i];
		if (e->ph == ph && e->name && !strcmp(e->name, name) &&
		    e->tid == tid) {
			assert_null(found);
			found = e;
		}
	}
	if (!found) {
		fail_msg("no %c event %s on tid %d", ph, name, tid);
	}
	return found;
}

static int is_recording_tid(int tid)
{
	for (int k = 0; k <= NREC; k++) {
		if (rec_tids[k] == tid) {
			return 1;
		}
	}
	return 0;
}

/* ---- tests on the trace -------------------------------------------------- */

static void test_chrome_trace_is_object_with_top_level_fields(void **st)
{
	struct trace t;
	char host[256] = "";

	(void)st;
	load_trace(&t);
	yajl_val v = get(t.root, "schemaVersion", yajl_t_number);
	assert_non_null(v);
	assert_int_equal(YAJL_GET_INTEGER(v), 1);
	assert_string_equal(get_str(t.root, "displayTimeUnit"), "ns");
	v = get(t.root, "baseTimeNanoseconds", yajl_t_number);
	assert_non_null(v);
	assert_int_equal(YAJL_GET_INTEGER(v), clock_base_utc_ns());
	assert_non_null(get(t.root, "deviceProperties", yajl_t_array));
	/* No rank is known: no distributedInfo. */
	assert_null(get(t.root, "distributedInfo", yajl_t_any));

	yajl_val m = get(t.root, "mxprof", yajl_t_object);
	assert_non_null(m);
	v = get(m, "pid", yajl_t_number);
	assert_int_equal(YAJL_GET_INTEGER(v), getpid());
	gethostname(host, sizeof(host) - 1);
	assert_string_equal(get_str(m, "host"), host);
	assert_string_equal(get_str(m, "clock"), "monotonic");
	assert_true(YAJL_IS_FALSE(get(m, "timelineTruncated", yajl_t_any)));
	assert_non_null(get_str(m, "version"));
	free_trace(&t);
}

static void test_chrome_trace_has_exact_event_counts(void **st)
{
	struct trace t;

	(void)st;
	load_trace(&t);
	assert_int_equal(count(&t, 'X', "outer", 0), NREC);
	assert_int_equal(count(&t, 'X', "inner", 0), NREC);
	assert_int_equal(count(&t, 'X', "frame", 0), NREC);
	assert_int_equal(count(&t, 'X', "step", 0), NREC * STEPS);
	assert_int_equal(count(&t, 'X', "flood", 0), RING + 1);
	assert_int_equal(count(&t, 'i', "marker", 0), NREC);
	assert_int_equal(count(&t, 'C', "queue depth", 0), 2 * NREC);
	for (int k = 0; k < NREC; k++) {
		assert_int_equal(count(&t, 'X', "step", rec_tids[k]), STEPS);
		assert_int_equal(count(&t, 'C', "queue depth", rec_tids[k]), 2);
	}
	/* Nothing else: events plus 3 process (name, command line, sort
	 * index) and 2 per thread metadata. */
	size_t events = 3 * NREC + NREC * STEPS + RING + 1 + NREC + 2 * NREC;
	assert_int_equal(t.n, events + 3 + 2 * (NREC + 1));
	free_trace(&t);
}

static void test_chrome_events_carry_recording_tids_and_pid(void **st)
{
	struct trace t;

	(void)st;
	load_trace(&t);
	for (int k = 0; k <= NREC; k++) {
		for (int m = k + 1; m <= NREC; m++) {
			assert_int_not_equal(rec_tids[k], rec_tids[m]);
		}
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct ev *e = &t.evs[i];
		assert_int_equal(e->pid, getpid());
		if (e->ph == 'M' && e->tid == 0) {
			continue; /* process metadata */
		}
		if (!is_recording_tid(e->tid)) {
			fail_msg("event %c %s on tid %d, not a recording "
				 "thread",
				 e->ph, e->name, e->tid);
		}
	}
	free_trace(&t);
}

static void test_chrome_metadata_names_process_and_threads(void **st)
{
	struct trace t;
	char want[64], prefix[64];

	(void)st;
	load_trace(&t);
	const struct ev *p = find(&t, 'M', "process_name", 0);
	yajl_val args = get(p->v, "args", yajl_t_object);
	/* The program's name alone, as Kineto names a process: the viewers
	 * add the pid. */
	snprintf(prefix, sizeof(prefix), "test_chrome");
	assert_string_equal(get_str(args, "name"), prefix);
	find(&t, 'M', "process_sort_index", 0);
	for (int k = 0; k <= NREC; k++) {
		const struct ev *e = find(&t, 'M', "thread_name", rec_tids[k]);
		/* As Kineto names host threads. */
		if (k < NREC) {
			snprintf(want, sizeof(want), "thread %d (rec-%d)",
				 rec_tids[k], k);
		} else {
			snprintf(want, sizeof(want), "thread %d (flood)",
				 rec_tids[k]);
		}
		args = get(e->v, "args", yajl_t_object);
		assert_string_equal(get_str(args, "name"), want);
		e = find(&t, 'M', "thread_sort_index", rec_tids[k]);
		args = get(e->v, "args", yajl_t_object);
		yajl_val idx = get(args, "sort_index", yajl_t_number);
		assert_int_equal(YAJL_GET_INTEGER(idx), rec_tids[k]);
	}
	free_trace(&t);
}

static void test_chrome_times_are_us_with_ns_precision(void **st)
{
	struct trace t;
	char want[32];

	(void)st;
	load_trace(&t);
	for (int k = 0; k < NREC; k++) {
		int tid = rec_tids[k];
		unsigned ms = (unsigned)k + 1;
		const struct ev *e = find(&t, 'X', "outer", tid);
		snprintf(want, sizeof(want), "%u000.000", ms);
		assert_string_equal(e->ts_raw, want);
		assert_string_equal(e->dur_raw, "1500.000");
		assert_string_equal(e->cat, "user_annotation");

		e = find(&t, 'X', "inner", tid);
		snprintf(want, sizeof(want), "%u250.001", ms);
		assert_string_equal(e->ts_raw, want);
		assert_string_equal(e->dur_raw, "750.002");
		assert_string_equal(e->cat, "c_api");
		yajl_val args = get(e->v, "args", yajl_t_object);
		assert_string_equal(get_str(args, "group"), "user");
		assert_int_equal(
			YAJL_GET_INTEGER(get(args, "error", yajl_t_number)), 1);

		e = find(&t, 'X', "frame", tid);
		snprintf(want, sizeof(want), "%u000.000", ms + 2);
		assert_string_equal(e->ts_raw, want);
		assert_string_equal(e->dur_raw, "16.000");
		args = get(e->v, "args", yajl_t_object);
		assert_string_equal(get_str(args, "group"), "frames");
		assert_int_equal(
			YAJL_GET_INTEGER(get(args, "frame", yajl_t_number)),
			7 + k);

		e = find(&t, 'i', "marker", tid);
		snprintf(want, sizeof(want), "%u000.100", ms);
		assert_string_equal(e->ts_raw, want);
		assert_string_equal(get_str(e->v, "s"), k == 0	 ? "t"
							: k == 1 ? "p"
								 : "g");
	}
	/* The first step of thread 0 and the first flood record. */
	const struct ev *e = NULL;
	for (size_t i = 0; i < t.n; i++) {
		if (t.evs[i].ph == 'X' && !strcmp(t.evs[i].name, "step") &&
		    t.evs[i].tid == rec_tids[0] &&
		    !strcmp(t.evs[i].ts_raw, "4000.000")) {
			e = &t.evs[i];
		}
	}
	assert_non_null(e);
	assert_string_equal(e->dur_raw, "0.500");
	e = NULL;
	for (size_t i = 0; i < t.n; i++) {
		if (t.evs[i].ph == 'X' && !strcmp(t.evs[i].name, "flood") &&
		    !strcmp(t.evs[i].ts_raw, "10000.000")) {
			e = &t.evs[i];
		}
	}
	assert_non_null(e);
	assert_string_equal(e->dur_raw, "0.100");
	free_trace(&t);
}

static void test_chrome_counters_carry_values_and_group(void **st)
{
	struct trace t;

	(void)st;
	load_trace(&t);
	for (int k = 0; k < NREC; k++) {
		int64_t seen_pos = 0, seen_neg = 0;
		for (size_t i = 0; i < t.n; i++) {
			const struct ev *e = &t.evs[i];
			if (e->ph != 'C' || e->tid != rec_tids[k]) {
				continue;
			}
			assert_string_equal(e->name, "queue depth");
			assert_string_equal(get_str(e->v, "group"), "counters");
			yajl_val args = get(e->v, "args", yajl_t_object);
			int64_t value = YAJL_GET_INTEGER(
				get(args, "value", yajl_t_number));
			if (value == -3) {
				assert_int_equal(e->ts % MS, 20);
				seen_neg++;
			} else {
				assert_int_equal(value, 5 + k);
				assert_int_equal(e->ts % MS, 10);
				seen_pos++;
			}
		}
		assert_int_equal(seen_pos, 1);
		assert_int_equal(seen_neg, 1);
	}
	free_trace(&t);
}

/* Sorts by start, longer first for equal starts (parents first). */
static int cmp_start(const void *pa, const void *pb)
{
	const struct ev *a = *(const struct ev *const *)pa;
	const struct ev *b = *(const struct ev *const *)pb;

	if (a->ts != b->ts) {
		return a->ts < b->ts ? -1 : 1;
	}
	return a->dur > b->dur ? -1 : a->dur < b->dur;
}

static void test_chrome_spans_nest_per_thread(void **st)
{
	struct trace t;

	(void)st;
	load_trace(&t);
	for (int k = 0; k <= NREC; k++) {
		const struct ev *list[2048];
		const struct ev *stack[16];
		size_t n = 0, depth = 0, max_depth = 0;
		for (size_t i = 0; i < t.n; i++) {
			if (t.evs[i].ph == 'X' && t.evs[i].tid == rec_tids[k]) {
				assert_true(n < 2048);
				list[n++] = &t.evs[i];
			}
		}
		qsort(list, n, sizeof(list[0]), cmp_start);
		for (size_t i = 0; i < n; i++) {
			const struct ev *e = list[i];
			while (depth &&
			       stack[depth - 1]->ts + stack[depth - 1]->dur <=
				       e->ts) {
				depth--;
			}
			if (depth) {
				const struct ev *p = stack[depth - 1];
				if (e->ts + e->dur > p->ts + p->dur) {
					fail_msg("%s [%s+%s] overlaps %s "
						 "[%s+%s]",
						 e->name, e->ts_raw, e->dur_raw,
						 p->name, p->ts_raw,
						 p->dur_raw);
				}
			}
			stack[depth++] = e;
			max_depth = depth > max_depth ? depth : max_depth;
		}
		assert_int_equal(max_depth, k < NREC ? 2 : 1);
	}
	/* And inner inside outer, by name. */
	for (int k = 0; k < NREC; k++) {
		const struct ev *o = find(&t, 'X', "outer", rec_tids[k]);
		const struct ev *i = find(&t, 'X', "inner", rec_tids[k]);
		assert_true(o->ts < i->ts);
		assert_true(i->ts + i->dur < o->ts + o->dur);
	}
	free_trace(&t);
}

static void test_chrome_dropped_records_stated_and_exact(void **st)
{
	struct trace t;

	(void)st;
	load_trace(&t);
	yajl_val m = get(t.root, "mxprof", yajl_t_object);
	yajl_val d = get(m, "droppedRecords", yajl_t_number);
	assert_non_null(d);
	assert_int_equal(dropped_now, FLOOD - RING);
	assert_int_equal(YAJL_GET_INTEGER(d), dropped_now);
	assert_int_equal(ring_dropped(), dropped_now);
	free_trace(&t);
}

static void test_chrome_tables_file_has_expected_rows(void **st)
{
	(void)st;
	run_scenario();
	char *text = tu_read_file(stats_path, NULL);
	assert_non_null(text);
	static const char *const lines[] = {
		"Profile Statistics:\n",
		"\nuser\n=================\n",
		/* outer holds inner: each has 0.75 ms of self time a thread. */
		"\nouter                                   3           4.5000  "
		"         1.5000           1.5000           1.5000           "
		"2.2500            50.00                0\n",
		"\ninner                                   3           2.2500  "
		"         0.7500           0.7500           0.7500           "
		"2.2500            50.00                3\n",
		"\ncounters (counters)\n=================\n",
		"\nqueue depth                             6          -3.0000  "
		"         7.0000           1.5000\n",
		"\nframes\n=================\n",
		"\nframe                                   3           0.0480  "
		"         0.0160           0.0160           0.0160           "
		"0.0480           100.00\n",
		"\nstep                                  600           0.3000  "
		"         0.0005           0.0005           0.0005           "
		"0.3000           100.00\n",
		/* Every record counted, also the 76 the timeline dropped. */
		"\nflood                                1101           0.1101  "
		"         0.0001           0.0001           0.0001           "
		"0.1101           100.00\n",
		"\nuser (markers)\n=================\n",
		"\nmarker                                  3\n",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (!strstr(text, lines[i])) {
			fail_msg("tables lack [%s]:\n%s", lines[i], text);
		}
	}
	/* Ends with the drop count. */
	const char *end = "\nDropped records: 76\n";
	size_t len = strlen(text);
	assert_true(len > strlen(end));
	assert_string_equal(text + len - strlen(end), end);
	free(text);
}

static void test_chrome_gzip_output_has_same_events(void **st)
{
	struct trace plain, gz;
	char gz_path[300];
	unsigned char magic[2] = {0, 0};
	char host[] = "h\"ost";

	(void)st;
	load_trace(&plain);
	snprintf(gz_path, sizeof(gz_path), "%s.gz", trace_path);
	/* The dump labels the process with its command line. */
	char cmdline[1024] = "";
	FILE *cl = fopen("/proc/self/cmdline", "rb");
	size_t cn = cl ? fread(cmdline, 1, sizeof(cmdline) - 1, cl) : 0;

	if (cl) {
		fclose(cl);
	}
	while (cn > 0 && cmdline[cn - 1] == 0) {
		cn--;
	}
	for (size_t i = 0; i < cn; i++) {
		cmdline[i] = cmdline[i] ? cmdline[i] : ' ';
	}
	cmdline[cn] = 0;
	struct writer_meta m = {.pid = getpid(),
				.rank = 5,
				.world_size = 8,
				.has_local_rank = 1,
				.local_rank = 0,
				.process_name = "proc",
				.cmdline = cmdline,
				.host = host,
				.base_utc_ns = clock_base_utc_ns(),
				.dropped = dropped_now,
				.truncated = 1,
				.clock = "monotonic"};
	assert_int_equal(chrome_write_from_journal(journal_path, gz_path, &m),
			 0);
	FILE *f = fopen(gz_path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	assert_int_equal(magic[0], 0x1f);
	assert_int_equal(magic[1], 0x8b);

	index_trace(&gz, tu_read_gz(gz_path, NULL));
	assert_int_equal(gz.n, plain.n);
	for (size_t i = 0; i < plain.n; i++) {
		const struct ev *a = &plain.evs[i], *b = &gz.evs[i];
		assert_int_equal(a->ph, b->ph);
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->tid, b->tid);
		if (a->ts_raw) {
			assert_string_equal(a->ts_raw, b->ts_raw);
		}
		if (a->dur_raw) {
			assert_string_equal(a->dur_raw, b->dur_raw);
		}
	}
	/* The rank and the rest of the meta data. */
	const char *rank[] = {"distributedInfo", "rank", NULL};
	yajl_val r = yajl_tree_get(gz.root, rank, yajl_t_number);
	assert_non_null(r);
	assert_int_equal(YAJL_GET_INTEGER(r), 5);
	yajl_val mx = get(gz.root, "mxprof", yajl_t_object);
	assert_string_equal(get_str(mx, "host"), "h\"ost");
	assert_true(YAJL_IS_TRUE(get(mx, "timelineTruncated", yajl_t_any)));
	const char *world[] = {"distributedInfo", "world_size", NULL};
	r = yajl_tree_get(gz.root, world, yajl_t_number);
	assert_non_null(r);
	assert_int_equal(YAJL_GET_INTEGER(r), 8);
	const char *local[] = {"distributedInfo", "local_rank", NULL};
	r = yajl_tree_get(gz.root, local, yajl_t_number);
	assert_non_null(r);
	assert_int_equal(YAJL_GET_INTEGER(r), 0);
	const struct ev *p = find(&gz, 'M', "process_name", 0);
	assert_string_equal(get_str(get(p->v, "args", yajl_t_object), "name"),
			    "proc");
	p = find(&gz, 'M', "process_labels", 0);
	assert_string_equal(get_str(get(p->v, "args", yajl_t_object), "labels"),
			    cmdline);
	free_trace(&gz);
	free_trace(&plain);
}

/* ---- the journal on its own ---------------------------------------------- */

struct jentry {
	int type;
	uint32_t id;
	int tid;
	char *text;
	struct coll_rec *recs;
	size_t n;
	uint64_t a, b;
};

struct jlog {
	struct jentry e[32768];
	size_t n;
};

static struct jentry *jnext(struct jlog *l, int type)
{
	assert_true(l->n < 32768);
	struct jentry *e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	return e;
}

static void j_str(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct jentry *e = jnext(ctx, J_STR);

	e->id = id;
	e->text = strndup(s, len);
}

static void j_thread(void *ctx, int tid, const char *name, size_t len)
{
	struct jentry *e = jnext(ctx, J_THREAD);

	e->tid = tid;
	e->text = strndup(name, len);
}

static void j_recs(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct jentry *e = jnext(ctx, J_RECS);

	e->tid = tid;
	e->n = n;
	e->recs = malloc(n * sizeof(*r));
	memcpy(e->recs, r, n * sizeof(*r));
}

static void j_stats(void *ctx, uint64_t dropped, uint64_t truncated,
		    uint64_t cause)
{
	struct jentry *e = jnext(ctx, J_STATS);

	e->a = dropped;
	e->b = truncated;
}

static const struct journal_ops jops = {
	.str = j_str, .thread = j_thread, .recs = j_recs, .stats = j_stats};

static void jlog_free(struct jlog *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].text);
		free(l->e[i].recs);
	}
	free(l);
}

static struct coll_rec jrec(uint32_t i)
{
	struct coll_rec r = {.t0 = 1000ull * i,
			     .t1 = 7ull * i + 1,
			     .name = i % 3 + 1,
			     .group = 2,
			     .kind = (uint16_t)(i % 4 + 1),
			     .cat = (uint8_t)(i % 5),
			     .flags = (uint8_t)i,
			     .arg = i * 31u};
	return r;
}

static char late_name[64];
static int journals_written;

#define BIG 5000 /* more than one J_RECS entry (4096) */

/* Writes the reference journal at path. Returns the first string id it
 * wrote and, in *late, the id of the name interned midway. */
static void write_journal(const char *path, uint32_t *late)
{
	struct journal *j = calloc(1, sizeof(*j));
	static struct coll_rec small[3], big[BIG];

	assert_non_null(j);
	strtab_intern("jr:alpha");
	strtab_intern("jr:beta");
	for (uint32_t i = 0; i < 3; i++) {
		small[i] = jrec(i);
	}
	for (uint32_t i = 0; i < BIG; i++) {
		big[i] = jrec(100 + i);
	}
	assert_int_equal(journal_open(j, path, 4321), 0);
	journal_thread(j, 111, "worker-a");
	journal_recs(j, 111, small, 3);
	/* A new name each time, interned after the first records. */
	snprintf(late_name, sizeof(late_name), "jr:late name \"q\" #%d",
		 ++journals_written);
	*late = strtab_intern(late_name);
	journal_thread(j, 222, "worker-b");
	journal_recs(j, 222, big, BIG);
	journal_stats(j, 9);
	assert_int_equal(journal_flush(j), 0);
	journal_close(j, 0);
	assert_int_equal(j->fd, -1);
	free(j);
}

static void jpath(char *buf, size_t len, const char *name)
{
	run_scenario(); /* for the folder; harmless otherwise */
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Checks entries [0, upto) of the reference journal in l. */
static void check_journal(const struct jlog *l, uint32_t late, size_t upto)
{
	const struct jentry *e = l->e;
	uint32_t id = 1;

	/* A thread name is text: it needs no string entry before it. */
	assert_int_equal(e[0].type, J_THREAD);
	assert_int_equal(e[0].tid, 111);
	assert_string_equal(e[0].text, "worker-a");
	/* Every name known at the first records, in id order, before
	 * them. */
	for (e++; id < late; id++, e++) {
		assert_int_equal(e->type, J_STR);
		assert_int_equal(e->id, id);
		assert_string_equal(e->text, strtab_get(id));
	}
	e--; /* e[1] is now the first records entry */
	assert_int_equal(e[1].type, J_RECS);
	assert_int_equal(e[1].tid, 111);
	assert_int_equal(e[1].n, 3);
	for (uint32_t k = 0; k < 3; k++) {
		struct coll_rec want = jrec(k);
		assert_memory_equal(&e[1].recs[k], &want, sizeof(want));
	}
	assert_int_equal(e[2].type, J_THREAD);
	assert_int_equal(e[2].tid, 222);
	assert_string_equal(e[2].text, "worker-b");
	/* The name interned in between comes before the records using it. */
	assert_int_equal(e[3].type, J_STR);
	assert_int_equal(e[3].id, late);
	assert_string_equal(e[3].text, late_name);
	assert_int_equal(e[4].type, J_RECS);
	assert_int_equal(e[4].tid, 222);
	assert_int_equal(e[4].n, 4096);
	if (upto <= 5) {
		return;
	}
	assert_int_equal(e[5].type, J_RECS);
	assert_int_equal(e[5].n, BIG - 4096);
	for (uint32_t k = 0; k < BIG; k++) {
		struct coll_rec want = jrec(100 + k);
		const struct coll_rec *got =
			k < 4096 ? &e[4].recs[k] : &e[5].recs[k - 4096];
		assert_memory_equal(got, &want, sizeof(want));
	}
	if (upto <= 6) {
		return;
	}
	assert_int_equal(e[6].type, J_STATS);
	assert_int_equal(e[6].a, 9);
	assert_int_equal(e[6].b, 0);
}

static void test_journal_round_trip_gives_same_entries(void **st)
{
	char path[300];
	struct journal_header h;
	uint32_t late;

	(void)st;
	jpath(path, sizeof(path), "round.journal");
	write_journal(path, &late);
	struct jlog *l = calloc(1, sizeof(*l));
	assert_non_null(l);
	memset(&h, 0, sizeof(h));
	assert_int_equal(journal_read(path, &jops, l, &h), 0);
	assert_memory_equal(h.magic, "MXPJRNL1", 8);
	assert_int_equal(h.version, 3);
	assert_int_equal(h.pid, 4321);
	assert_int_equal(h.base_utc_ns, clock_base_utc_ns());
	assert_int_equal(l->n, (late - 1) + 7);
	check_journal(l, late, 7);
	jlog_free(l);
}

/* The categories a journal names, in order, and where records began. */
struct catlog {
	char names[COLL_CAT_MAX][32];
	int ids[COLL_CAT_MAX];
	int n;
	int n_at_recs; /* categories named before the first records */
};

static void c_cat(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct catlog *c = ctx;

	assert_true(c->n < COLL_CAT_MAX);
	c->ids[c->n] = (int)id;
	snprintf(c->names[c->n++], 32, "%.*s", (int)len, s);
}

static void c_recs(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	struct catlog *c = ctx;

	(void)tid;
	(void)r;
	(void)n;
	if (c->n_at_recs < 0) {
		c->n_at_recs = c->n;
	}
}

static void test_journal_names_categories_before_records(void **st)
{
	static const struct journal_ops ops = {.cat = c_cat, .recs = c_recs};
	char path[300];
	struct journal_header h;
	struct journal *j = calloc(1, sizeof(*j));
	struct catlog c = {.n_at_recs = -1};
	unsigned id = cat_id("test_category");
	struct coll_rec r = {.t0 = 1,
			     .t1 = 2,
			     .name = strtab_intern("x"),
			     .group = strtab_intern("g"),
			     .kind = COLL_SPAN,
			     .cat = (uint8_t)id};

	(void)st;
	assert_non_null(j);
	assert_true(id >= 2);
	assert_int_equal(cat_id("test_category"), id);
	assert_int_equal(cat_find("test_category"), (int)id);
	assert_string_equal(cat_name(id), "test_category");
	jpath(path, sizeof(path), "cats.journal");
	assert_int_equal(journal_open(j, path, 1), 0);
	journal_recs(j, 1, &r, 1);
	journal_close(j, 0);
	free(j);
	assert_int_equal(journal_read(path, &ops, &c, &h), 0);
	assert_int_equal(h.version, 3);
	/* Every category registered so far, in id order, before the first
	 * records that may use one. */
	assert_int_equal(c.n, (int)cat_count());
	assert_int_equal(c.n_at_recs, c.n);
	for (int i = 0; i < c.n; i++) {
		assert_int_equal(c.ids[i], i);
		assert_string_equal(c.names[i], cat_name((unsigned)i));
	}
	assert_string_equal(c.names[0], "user_annotation");
	assert_string_equal(c.names[1], "c_api");
	assert_string_equal(c.names[id], "test_category");
}

static void read_truncated(const char *src, const char *dst, off_t cut,
			   struct jlog **out, int *rc)
{
	size_t len;
	char *data = tu_read_file(src, &len);
	struct journal_header h;

	assert_non_null(data);
	assert_true((off_t)len > cut);
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len - (size_t)cut),
			 (ssize_t)(len - (size_t)cut));
	close(fd);
	free(data);
	*out = calloc(1, sizeof(**out));
	*rc = journal_read(dst, &jops, *out, &h);
}

static void test_journal_torn_last_entry_is_ignored(void **st)
{
	char path[300], torn[300];
	uint32_t late;
	struct jlog *l;
	int rc;
	const size_t stats_len = 8 + 16;
	/* The last records entry: BIG - 4096 records in the compact form. */
	struct coll_rec *rest = calloc(BIG - 4096, sizeof(*rest));
	unsigned char *packed = malloc((BIG - 4096) * JPACK_REC_MAX);
	assert_non_null(rest);
	assert_non_null(packed);
	for (uint32_t i = 0; i < BIG - 4096; i++) {
		rest[i] = jrec(100 + 4096 + i);
	}
	const size_t recs_len =
		8 + ((8 + jpack_encode(rest, BIG - 4096, packed) + 7) & ~7ul);
	free(rest);
	free(packed);

	(void)st;
	jpath(path, sizeof(path), "torn-src.journal");
	jpath(torn, sizeof(torn), "torn.journal");
	write_journal(path, &late);

	/* A few bytes short: the stats entry is torn, all else reads. */
	read_truncated(path, torn, 3, &l, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(l->n, (late - 1) + 6);
	check_journal(l, late, 6);
	jlog_free(l);

	/* Exactly the stats entry missing: same. */
	read_truncated(path, torn, (off_t)stats_len, &l, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(l->n, (late - 1) + 6);
	jlog_free(l);

	/* Into the second records entry: it is dropped whole. */
	read_truncated(path, torn, (off_t)(stats_len + recs_len - 100), &l,
		       &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(l->n, (late - 1) + 5);
	check_journal(l, late, 5);
	jlog_free(l);

	/* Only an entry header left of it. */
	read_truncated(path, torn, (off_t)(stats_len + recs_len - 8), &l, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(l->n, (late - 1) + 5);
	jlog_free(l);
}

static void test_journal_read_rejects_what_is_not_a_journal(void **st)
{
	char path[300];
	struct journal_header h;
	struct jlog *l = calloc(1, sizeof(*l));
	uint32_t late;

	(void)st;
	jpath(path, sizeof(path), "nothing-here.journal");
	assert_int_equal(journal_read(path, &jops, l, &h), -ENOENT);

	jpath(path, sizeof(path), "not.journal");
	FILE *f = fopen(path, "w");
	fputs("{\"traceEvents\":[]} and then some more bytes to pass a header",
	      f);
	fclose(f);
	assert_int_equal(journal_read(path, &jops, l, &h), -EINVAL);
	assert_int_equal(l->n, 0);
	free(l);

	/* A header and nothing else: no entries. A torn header: invalid. */
	char src[300], dst[300];
	int rc;
	jpath(src, sizeof(src), "hdr-src.journal");
	jpath(dst, sizeof(dst), "hdr.journal");
	write_journal(src, &late);
	struct stat sb;
	assert_int_equal(stat(src, &sb), 0);
	read_truncated(src, dst,
		       sb.st_size - (off_t)sizeof(struct journal_header), &l,
		       &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(l->n, 0);
	jlog_free(l);
	read_truncated(src, dst,
		       sb.st_size - (off_t)sizeof(struct journal_header) + 10,
		       &l, &rc);
	assert_int_equal(rc, -EINVAL);
	jlog_free(l);
}

static void test_journal_cap_truncates_timeline(void **st)
{
	char path[300];
	struct journal_header h;
	struct journal *j = calloc(1, sizeof(*j));
	struct coll_rec r[6];

	(void)st;
	jpath(path, sizeof(path), "cap.journal");
	for (uint32_t i = 0; i < 6; i++) {
		r[i] = jrec(i);
	}
	assert_int_equal(journal_open(j, path, 1), 0);
	j->max_bytes = 150 * 8; /* 8 records' estimated trace bytes */
	journal_recs(j, 5, r, 5);
	assert_int_equal(j->truncated, 0);
	journal_recs(j, 5, r, 4); /* 9 > 8: not written */
	assert_int_equal(j->truncated, 1);
	journal_recs(j, 5, r + 5, 1); /* 6 still fits */
	journal_stats(j, 0);
	journal_close(j, 0);
	free(j);

	struct jlog *l = calloc(1, sizeof(*l));
	assert_int_equal(journal_read(path, &jops, l, &h), 0);
	size_t recs = 0, stats = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (l->e[i].type == J_RECS) {
			recs += l->e[i].n;
		} else if (l->e[i].type == J_STATS) {
			stats++;
			assert_int_equal(l->e[i].b, 1);
		}
	}
	assert_int_equal(recs, 6);
	assert_int_equal(stats, 1);
	jlog_free(l);
}

/* ---- set-up ----------------------------------------------------------- */

static int group_setup(void **st)
{
	struct coll_config cfg;

	(void)st;
	if (!mkdtemp(dir) || coll_init() != 0) {
		return -1;
	}
	/* Ticks become CLOCK_MONOTONIC ns: exact times. Before the drain
	 * thread exists. */
	ticks_use_tsc.on = 0;
	base = clock_base_mono_ns();
	snprintf(trace_path, sizeof(trace_path), "%s/trace.json", dir);
	snprintf(stats_path, sizeof(stats_path), "%s/trace.stats.txt", dir);
	snprintf(journal_path, sizeof(journal_path), "%s.journal", trace_path);
	TU_COLL_CONFIG(cfg, trace_path);
	cfg.ring_records = RING;
	cfg.overflow = COLL_OVERFLOW_DROP;
	if (coll_start(&cfg) != 0) {
		return -1;
	}
	coll_recording.on = 1;
	return 0;
}

static int group_teardown(void **st)
{
	(void)st;
	coll_recording.on = 0;
	coll_finish(0);
	tu_rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_chrome_trace_is_object_with_top_level_fields),
		cmocka_unit_test(test_chrome_trace_has_exact_event_counts),
		cmocka_unit_test(
			test_chrome_events_carry_recording_tids_and_pid),
		cmocka_unit_test(
			test_chrome_metadata_names_process_and_threads),
		cmocka_unit_test(test_chrome_times_are_us_with_ns_precision),
		cmocka_unit_test(test_chrome_counters_carry_values_and_group),
		cmocka_unit_test(test_chrome_spans_nest_per_thread),
		cmocka_unit_test(test_chrome_dropped_records_stated_and_exact),
		cmocka_unit_test(test_chrome_tables_file_has_expected_rows),
		cmocka_unit_test(test_chrome_gzip_output_has_same_events),
		cmocka_unit_test(test_journal_round_trip_gives_same_entries),
		cmocka_unit_test(test_journal_names_categories_before_records),
		cmocka_unit_test(test_journal_torn_last_entry_is_ignored),
		cmocka_unit_test(
			test_journal_read_rejects_what_is_not_a_journal),
		cmocka_unit_test(test_journal_cap_truncates_timeline),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
