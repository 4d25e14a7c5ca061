/*
 * test_recover.c - a journal's recovery (collector/recover.c) and the torn
 * entries of journal_read() (collector/journal.c) it relies on.
 *
 * Journals are written with the library's own journal writer, into a
 * folder of their own; damaged ones are made by cutting or patching bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

#define HDR  ((long)sizeof(struct journal_header))
#define PID  4242
#define NA   3	/* records of thread 11 */
#define NB   5	/* records of thread 22 */
#define STAT 32 /* bytes of a stats entry */

static char dir[] = "/tmp/mxprof-test-recover-XXXXXX";
static uint32_t id_step, id_io, id_dom, id_q;

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static struct coll_rec span(uint32_t name, uint64_t t0, uint64_t dur)
{
	struct coll_rec r = {.t0 = t0,
			     .t1 = dur,
			     .name = name,
			     .group = id_dom,
			     .kind = COLL_SPAN};
	return r;
}

/*
 * Writes the reference journal: thread 11 (the main thread, named "main")
 * with NA spans "step", a stats entry (2 dropped), thread 22 with NB
 * records (spans "io", a counter "q" set to 7, a marker), a last stats
 * entry (5 dropped). Returns its size.
 */
static long write_ref(const char *path)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct coll_rec a[NA], b[NB];
	struct stat st;

	assert_non_null(j);
	for (int i = 0; i < NA; i++) {
		a[i] = span(id_step, 1000u * (unsigned)i, 100u + (unsigned)i);
	}
	for (int i = 0; i < 3; i++) {
		b[i] = span(id_io, 5000u + 100u * (unsigned)i, 10);
	}
	b[3] = (struct coll_rec){.t0 = 6000,
				 .t1 = 7,
				 .name = id_q,
				 .group = id_dom,
				 .kind = COLL_COUNTER};
	b[4] = (struct coll_rec){.t0 = 6100,
				 .name = id_step,
				 .group = id_dom,
				 .kind = COLL_INSTANT,
				 .flags = COLL_SCOPE_THREAD};
	assert_int_equal(journal_open(j, path, PID), 0);
	journal_thread(j, PID, "main");
	journal_recs(j, PID, a, NA);
	journal_stats(j, 2);
	journal_thread(j, 22, "io-thread");
	journal_recs(j, 22, b, NB);
	journal_stats(j, 5);
	journal_close(j, 0);
	free(j);
	assert_int_equal(stat(path, &st), 0);
	return (long)st.st_size;
}

/* Writes a journal whose only record is rec, on the main thread. */
static void write_one(const char *path, const struct coll_rec *rec)
{
	struct journal *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	unlink(path);
	assert_int_equal(journal_open(j, path, PID), 0);
	journal_thread(j, PID, "main");
	journal_recs(j, PID, rec, 1);
	journal_close(j, 0);
	free(j);
}

/* Copies the first len bytes of src to dst. */
static void cut(const char *src, const char *dst, long len)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char *buf = malloc((size_t)len + 1);

	assert_non_null(in);
	assert_non_null(out);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, in), (size_t)len);
	assert_int_equal(fwrite(buf, 1, (size_t)len, out), (size_t)len);
	fclose(in);
	fclose(out);
	free(buf);
}

/* Overwrites 4 bytes of path at off with v. */
static void patch_u32(const char *path, long off, uint32_t v)
{
	FILE *f = fopen(path, "r+b");

	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fwrite(&v, 4, 1, f), 1);
	fclose(f);
}

/* Returns the offset of the nth (from 0) entry of type in the journal at
 * path, walking its entry headers; fails the test if there is none. */
static long entry_at(const char *path, uint32_t type, int nth)
{
	FILE *f = fopen(path, "rb");
	long off = HDR;
	uint32_t h[2];

	assert_non_null(f);
	while (fseek(f, off, SEEK_SET) == 0 && fread(h, 4, 2, f) == 2) {
		if (h[0] == type && nth-- == 0) {
			fclose(f);
			return off;
		}
		off += 8 + (long)((h[1] + 7u) & ~7u);
	}
	fclose(f);
	fail_msg("no entry of type %u", type);
	return -1;
}

/* ---- journal_read: torn entries ----------------------------------------- */

struct torn_log {
	uint64_t recs;
	int torn;
	uint64_t at;
};

static void tl_recs(void *ctx, int tid, const struct coll_rec *r, size_t n)
{
	(void)tid;
	(void)r;
	((struct torn_log *)ctx)->recs += n;
}

static void tl_torn(void *ctx, uint64_t offset)
{
	struct torn_log *l = ctx;

	l->torn++;
	l->at = offset;
}

static const struct journal_ops tl_ops = {.recs = tl_recs, .torn = tl_torn};

static void test_journal_read_says_where_a_torn_entry_starts(void **st)
{
	char src[300], dst[300];
	struct journal_header h;
	struct torn_log l = {0};
	long size;

	(void)st;
	path_of(src, sizeof(src), "torn-src.journal");
	path_of(dst, sizeof(dst), "torn.journal");
	size = write_ref(src);

	/* Whole: no torn entry. */
	assert_int_equal(journal_read(src, &tl_ops, &l, &h), 0);
	assert_int_equal(l.recs, NA + NB);
	assert_int_equal(l.torn, 0);

	/* The last stats entry cut by one byte: torn where it starts. */
	memset(&l, 0, sizeof(l));
	cut(src, dst, size - 1);
	assert_int_equal(journal_read(dst, &tl_ops, &l, &h), 0);
	assert_int_equal(l.recs, NA + NB);
	assert_int_equal(l.torn, 1);
	assert_int_equal(l.at, size - STAT);

	/* Only part of an entry header left. */
	memset(&l, 0, sizeof(l));
	cut(src, dst, size - STAT + 3);
	assert_int_equal(journal_read(dst, &tl_ops, &l, &h), 0);
	assert_int_equal(l.torn, 1);
	assert_int_equal(l.at, size - STAT);

	/* Cut exactly between entries: nothing torn. */
	memset(&l, 0, sizeof(l));
	cut(src, dst, size - STAT);
	assert_int_equal(journal_read(dst, &tl_ops, &l, &h), 0);
	assert_int_equal(l.torn, 0);
}

static void test_journal_read_treats_a_length_past_the_end_as_torn(void **st)
{
	char path[300];
	struct journal_header h;
	struct torn_log l = {0};

	(void)st;
	path_of(path, sizeof(path), "huge.journal");
	write_ref(path);
	/* The first entry (the main thread's name) claims almost 4 GiB. */
	patch_u32(path, HDR + 4, 0xfffffff0u);
	assert_int_equal(journal_read(path, &tl_ops, &l, &h), 0);
	assert_int_equal(l.recs, 0);
	assert_int_equal(l.torn, 1);
	assert_int_equal(l.at, HDR);
}

/* ---- recover_open ------------------------------------------------------- */

static void test_recover_counts_records_threads_and_last_stats(void **st)
{
	char path[300];
	struct recovery *r = malloc(sizeof(*r));

	(void)st;
	assert_non_null(r);
	path_of(path, sizeof(path), "ref.journal");
	write_ref(path);
	assert_int_equal(recover_open(r, path), 0);
	assert_int_equal(r->pid, PID);
	assert_int_equal(r->records, NA + NB);
	assert_int_equal(r->threads, 2);
	assert_int_equal(r->dropped, 5);
	assert_int_equal(r->capped, 0);
	assert_int_equal(r->torn_bytes, 0);
	assert_string_equal(r->process_name, "main");
	assert_string_equal(r->why, "");
	recover_close(r);
	free(r);
}

/* Writes a journal of NA records cut at the cap (cause RECOVER_CUT_CAP)
 * or at the disk's share (RECOVER_CUT_SHARE), with one stats entry. */
static void write_cut(const char *path, int cause)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct coll_rec a[NA];

	assert_non_null(j);
	for (int i = 0; i < NA; i++) {
		a[i] = span(id_step, 1000u * (unsigned)i, 10);
	}
	unlink(path);
	assert_int_equal(journal_open(j, path, PID), 0);
	journal_thread(j, PID, "main");
	journal_recs(j, PID, a, 2);
	if (cause == RECOVER_CUT_CAP) {
		j->max_bytes = j->bytes + 1;
	} else {
		j->disk_cap = j->bytes + 1;
		j->disk_said = 1; /* no line */
	}
	journal_recs(j, PID, a + 2, NA - 2);
	journal_stats(j, 0);
	journal_close(j, 0);
	free(j);
}

static int recovered_cut(const char *path)
{
	struct recovery *r = calloc(1, sizeof(*r));
	int capped;

	assert_non_null(r);
	assert_int_equal(recover_open(r, path), 0);
	assert_int_equal(r->records, 2);
	capped = r->capped;
	recover_close(r);
	free(r);
	return capped;
}

/* The stats entry says what cut the timeline; one of the older form,
 * without the cause, reads as the cap. */
static void test_recover_says_what_cut_the_timeline(void **st)
{
	char path[300];
	const uint64_t old[3] = {(uint64_t)J_STATS | (16ull << 32), 0, 1};
	FILE *f;

	(void)st;
	path_of(path, sizeof(path), "cut.journal");
	write_cut(path, RECOVER_CUT_CAP);
	assert_int_equal(recovered_cut(path), RECOVER_CUT_CAP);
	write_cut(path, RECOVER_CUT_SHARE);
	assert_int_equal(recovered_cut(path), RECOVER_CUT_SHARE);
	/* The last stats entry counts: an older writer's, two fields. */
	f = fopen(path, "ab");
	assert_non_null(f);
	assert_int_equal(fwrite(old, sizeof(old), 1, f), 1);
	fclose(f);
	assert_int_equal(recovered_cut(path), RECOVER_CUT_CAP);
}

/* exec: the next image of the process appends to the journal the earlier
 * one wrote, after its origin; a journal of another pid is refused. */
static void test_journal_continues_after_exec(void **st)
{
	char path[300];
	struct journal *j = calloc(1, sizeof(*j));
	struct recovery *r = malloc(sizeof(*r));
	struct coll_rec a[NA];
	uint64_t mono = 0;
	int64_t utc = 0;

	(void)st;
	assert_non_null(j);
	assert_non_null(r);
	clock_init();
	path_of(path, sizeof(path), "exec.journal");
	write_ref(path);
	assert_int_equal(journal_origin(path, PID, &mono, &utc), 0);
	assert_true(mono == clock_base_mono_ns());
	assert_true(utc == clock_base_utc_ns());
	assert_int_equal(journal_origin(path, PID + 1, &mono, &utc), -ESTALE);
	assert_int_equal(journal_continue(j, path, PID + 1), -ESTALE);
	assert_int_equal(j->fd, -1);
	assert_int_equal(journal_continue(j, path, PID), 0);
	for (int i = 0; i < NA; i++) {
		a[i] = span(id_step, 9000u + 10u * (unsigned)i, 5);
	}
	journal_recs(j, PID, a, NA);
	journal_close(j, 0);
	assert_int_equal(recover_open(r, path), 0);
	assert_int_equal(r->records, 2 * NA + NB);
	assert_int_equal(r->threads, 2);
	assert_int_equal(r->pid, PID);
	recover_close(r);
	free(r);
	free(j);
}

static void test_recover_tables_are_the_drains_tables(void **st)
{
	char path[300], stats[300];
	struct recovery *r = malloc(sizeof(*r));
	struct agg *a = agg_create();
	struct table_opts o = {.dropped = 5};
	char got[4096];

	(void)st;
	assert_non_null(r);
	assert_non_null(a);
	path_of(path, sizeof(path), "tables.journal");
	path_of(stats, sizeof(stats), "tables.stats.txt");
	write_ref(path);
	assert_int_equal(recover_open(r, path), 0);
	assert_int_equal(recover_write_tables(r, stats), 0);

	/* The same records, aggregated as the drain does. */
	for (int i = 0; i < NA; i++) {
		struct coll_rec c = span(id_step, 0, 100u + (unsigned)i);
		assert_int_equal(agg_add_rec(a, &c), 0);
	}
	for (int i = 0; i < 3; i++) {
		struct coll_rec c = span(id_io, 0, 10);
		assert_int_equal(agg_add_rec(a, &c), 0);
	}
	struct coll_rec q = {
		.t1 = 7, .name = id_q, .group = id_dom, .kind = COLL_COUNTER};
	struct coll_rec m = {.name = id_step,
			     .group = id_dom,
			     .kind = COLL_INSTANT,
			     .flags = COLL_SCOPE_THREAD};
	assert_int_equal(agg_add_rec(a, &q), 0);
	assert_int_equal(agg_add_rec(a, &m), 0);
	char *want = table_format(a, &o);
	assert_non_null(want);

	FILE *f = fopen(stats, "r");
	assert_non_null(f);
	size_t n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = 0;
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "Dropped records: 5\n"));
	free(want);
	agg_destroy(a);
	recover_close(r);
	free(r);
}

static void test_recover_skips_a_torn_tail_and_counts_its_bytes(void **st)
{
	char src[300], dst[300];
	struct recovery *r = malloc(sizeof(*r));
	long size;

	(void)st;
	assert_non_null(r);
	path_of(src, sizeof(src), "tail-src.journal");
	path_of(dst, sizeof(dst), "tail.journal");
	size = write_ref(src);
	/* Into the second records entry: its records and the stats after
	 * them are lost; the first stats entry (2 dropped) is the last. */
	long torn_at = entry_at(src, J_PACK, 1);
	assert_true(torn_at < size);
	cut(src, dst, torn_at + 20);
	assert_int_equal(recover_open(r, dst), 0);
	assert_int_equal(r->records, NA);
	assert_int_equal(r->threads, 1);
	assert_int_equal(r->dropped, 2);
	assert_int_equal(r->torn_bytes, 20);
	recover_close(r);
	free(r);
}

static void test_recover_refuses_damaged_entries(void **st)
{
	char src[300], dst[300];
	struct recovery *r = malloc(sizeof(*r));
	long size;

	(void)st;
	assert_non_null(r);
	path_of(src, sizeof(src), "damage-src.journal");
	path_of(dst, sizeof(dst), "damage.journal");
	size = write_ref(src);

	/* A string id far past the ones defined. */
	cut(src, dst, size);
	patch_u32(dst, entry_at(dst, J_STR, 0) + 8, 1000000);
	assert_int_equal(recover_open(r, dst), -EBADMSG);
	assert_string_equal(r->why, "corrupt: string id 1000000 out of order");
	recover_close(r);

	/* A record naming a string never defined. */
	struct coll_rec bad = span(id_step, 10, 5);
	bad.name = 900000;
	write_one(dst, &bad);
	assert_int_equal(recover_open(r, dst), -EBADMSG);
	assert_string_equal(r->why, "corrupt: a record names string id "
				    "900000 before it is defined");
	recover_close(r);

	/* A record of a kind no writer makes. */
	bad = span(id_step, 10, 5);
	bad.kind = 99;
	write_one(dst, &bad);
	assert_int_equal(recover_open(r, dst), -EBADMSG);
	assert_string_equal(r->why, "corrupt: a record of unknown kind 99");
	recover_close(r);

	/* A records entry that does not decode: unknown bits in its first
	 * record's first byte. */
	cut(src, dst, size);
	long at = entry_at(dst, J_PACK, 0);
	patch_u32(dst, at + 16, 0xffffffffu);
	assert_int_equal(recover_open(r, dst), -EBADMSG);
	char want[128];
	snprintf(want, sizeof(want),
		 "corrupt: the records entry at byte %ld cannot be decoded",
		 at);
	assert_string_equal(r->why, want);
	recover_close(r);

	/* A records entry that says it holds more records than it does. */
	cut(src, dst, size);
	patch_u32(dst, entry_at(dst, J_PACK, 1) + 12, NB + 1);
	assert_int_equal(recover_open(r, dst), -EBADMSG);
	recover_close(r);

	/* A journal version this reader does not know. */
	cut(src, dst, size);
	patch_u32(dst, 8, 4);
	assert_int_equal(recover_open(r, dst), -EBADMSG);
	assert_string_equal(r->why, "journal version 4; this mxprof reads "
				    "versions 1 to 3");
	recover_close(r);
	free(r);
}

/*
 * Rewrites the journal at src as the previous version (2) wrote it: the
 * same entries, but each records entry as J_RECS, its records as they are
 * in memory (u32 tid, u32 n, n 32-byte records).
 */
static void write_v2(const char *src, const char *dst)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	struct journal_header h;
	uint32_t e[2];
	static unsigned char payload[1 << 20];
	static struct coll_rec recs[JOURNAL_BATCH];
	static const unsigned char zeros[8];

	assert_non_null(in);
	assert_non_null(out);
	assert_int_equal(fread(&h, sizeof(h), 1, in), 1);
	assert_int_equal(h.version, 3);
	h.version = 2;
	assert_int_equal(fwrite(&h, sizeof(h), 1, out), 1);
	while (fread(e, 4, 2, in) == 2) {
		size_t padded = (e[1] + 7u) & ~7u;
		assert_true(padded <= sizeof(payload));
		assert_int_equal(fread(payload, 1, padded, in), padded);
		if (e[0] == J_PACK) {
			uint32_t th[2];
			memcpy(th, payload, 8);
			assert_int_equal(jpack_decode(payload + 8, e[1] - 8,
						      recs, th[1]),
					 0);
			uint32_t ne[2] = {
				J_RECS, (uint32_t)(8 + th[1] * sizeof(*recs))};
			assert_int_equal(fwrite(ne, 4, 2, out), 2);
			assert_int_equal(fwrite(th, 4, 2, out), 2);
			assert_int_equal(
				fwrite(recs, sizeof(*recs), th[1], out), th[1]);
			continue; /* 32-byte records: no padding */
		}
		assert_int_equal(fwrite(e, 4, 2, out), 2);
		assert_int_equal(fwrite(payload, 1, e[1], out), e[1]);
		fwrite(zeros, 1, padded - e[1], out);
	}
	fclose(in);
	fclose(out);
}

/* A journal of the previous version is recovered as it was: the same
 * records, threads, drops and tables as the same journal in today's. */
static void test_recover_reads_the_previous_version(void **st)
{
	char src[300], old[300], stats_new[300], stats_old[300];
	struct recovery *r = malloc(sizeof(*r));
	struct stat a, b;

	(void)st;
	assert_non_null(r);
	path_of(src, sizeof(src), "v3.journal");
	path_of(old, sizeof(old), "v2.journal");
	path_of(stats_new, sizeof(stats_new), "v3.stats.txt");
	path_of(stats_old, sizeof(stats_old), "v2.stats.txt");
	write_ref(src);
	write_v2(src, old);
	assert_int_equal(stat(src, &a), 0);
	assert_int_equal(stat(old, &b), 0);
	/* 8 records: the old form is larger by more than 20 bytes each. */
	assert_true(b.st_size - a.st_size > 20 * (NA + NB));

	assert_int_equal(recover_open(r, src), 0);
	assert_int_equal(recover_write_tables(r, stats_new), 0);
	recover_close(r);
	assert_int_equal(recover_open(r, old), 0);
	assert_int_equal(r->records, NA + NB);
	assert_int_equal(r->threads, 2);
	assert_int_equal(r->dropped, 5);
	assert_string_equal(r->process_name, "main");
	assert_int_equal(recover_write_tables(r, stats_old), 0);
	recover_close(r);
	free(r);

	FILE *f = fopen(stats_new, "r"), *g = fopen(stats_old, "r");
	static char x[8192], y[8192];
	assert_non_null(f);
	assert_non_null(g);
	size_t nx = fread(x, 1, sizeof(x) - 1, f);
	size_t ny = fread(y, 1, sizeof(y) - 1, g);
	fclose(f);
	fclose(g);
	x[nx] = y[ny] = 0;
	assert_non_null(strstr(x, "step"));
	assert_string_equal(x, y);
}

static void test_recover_says_what_is_wrong_with_the_file(void **st)
{
	char src[300], dst[300];
	struct recovery *r = malloc(sizeof(*r));

	(void)st;
	assert_non_null(r);
	path_of(src, sizeof(src), "file-src.journal");
	path_of(dst, sizeof(dst), "file.journal");
	write_ref(src);

	path_of(dst, sizeof(dst), "missing.journal");
	assert_int_equal(recover_open(r, dst), -ENOENT);
	assert_string_equal(r->why, "");
	recover_close(r);

	path_of(dst, sizeof(dst), "file.journal");
	cut(src, dst, 0);
	assert_int_equal(recover_open(r, dst), -ENODATA);
	assert_string_equal(r->why, "empty file, not a journal");
	recover_close(r);

	cut(src, dst, 10);
	assert_int_equal(recover_open(r, dst), -EINVAL);
	assert_string_equal(
		r->why, "truncated inside the journal header (10 of 56 bytes)");
	recover_close(r);

	cut(src, dst, HDR);
	assert_int_equal(recover_open(r, dst), -ENODATA);
	assert_string_equal(r->why,
			    "holds no complete record, nothing to recover");
	recover_close(r);

	FILE *f = fopen(dst, "w");
	assert_non_null(f);
	fputs("{\"traceEvents\":[]} and enough bytes to fill a header", f);
	fclose(f);
	assert_int_equal(recover_open(r, dst), -EINVAL);
	assert_string_equal(r->why, "not an mxprof journal");
	recover_close(r);

	assert_int_equal(recover_open(r, dir), -EINVAL);
	assert_string_equal(r->why, "not a regular file");
	recover_close(r);
	free(r);
}

/* ---- set-up ----------------------------------------------------------- */

static int group_setup(void **st)
{
	(void)st;
	if (!mkdtemp(dir)) {
		return -1;
	}
	id_step = strtab_intern("rc:step");
	id_io = strtab_intern("rc:io");
	id_dom = strtab_intern("rc:domain");
	id_q = strtab_intern("rc:q");
	return 0;
}

static int group_teardown(void **st)
{
	(void)st;
	tu_rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_journal_read_says_where_a_torn_entry_starts),
		cmocka_unit_test(
			test_journal_read_treats_a_length_past_the_end_as_torn),
		cmocka_unit_test(
			test_recover_counts_records_threads_and_last_stats),
		cmocka_unit_test(test_recover_tables_are_the_drains_tables),
		cmocka_unit_test(test_recover_says_what_cut_the_timeline),
		cmocka_unit_test(test_journal_continues_after_exec),
		cmocka_unit_test(
			test_recover_skips_a_torn_tail_and_counts_its_bytes),
		cmocka_unit_test(test_recover_refuses_damaged_entries),
		cmocka_unit_test(test_recover_reads_the_previous_version),
		cmocka_unit_test(test_recover_says_what_is_wrong_with_the_file),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
