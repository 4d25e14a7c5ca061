/*
 * test_jpack.c - the journal's compact form of records (collector/jpack.c):
 * exact round trips at the limits of every field, its size on a loop's
 * records, and damaged or torn input refused.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "collector.h"
#include "internal.h"

#define N 4096

static struct coll_rec in[N], out[N];
static unsigned char buf[N * JPACK_REC_MAX];

/* Encodes n records of in, checks the size bound, decodes them into out
 * and checks they are the same. Returns the encoded size. */
static size_t round_trip(size_t n)
{
	size_t len = jpack_encode(in, n, buf);

	assert_true(len <= n * JPACK_REC_MAX);
	memset(out, 0xa5, sizeof(out));
	assert_int_equal(jpack_decode(buf, len, out, n), 0);
	for (size_t i = 0; i < n; i++) {
		assert_memory_equal(&in[i], &out[i], sizeof(in[i]));
	}
	return len;
}

static void test_jpack_keeps_every_field_at_its_limits(void **st)
{
	static const uint64_t ticks[] = {0,
					 1,
					 127,
					 128,
					 UINT32_MAX,
					 (uint64_t)INT64_MAX,
					 (uint64_t)INT64_MAX + 1,
					 UINT64_MAX - 1,
					 UINT64_MAX};
	const size_t nt = sizeof(ticks) / sizeof(ticks[0]);
	size_t n = 0;

	(void)st;
	/* Every pair of extreme t0 in a row (the difference wraps both
	 * ways), with extreme t1, names, kinds and arguments. */
	for (size_t a = 0; a < nt; a++) {
		for (size_t b = 0; b < nt; b++) {
			struct coll_rec *r = &in[n++];
			r->t0 = ticks[a];
			r->t1 = ticks[b];
			r->name = b % 2 ? UINT32_MAX : (uint32_t)a;
			r->group = a % 2 ? UINT32_MAX : 0;
			r->kind = (uint16_t)(b % 3 ? UINT16_MAX : COLL_SPAN);
			r->cat = (uint8_t)(255 - a);
			r->flags = (uint8_t)(b * 37);
			r->arg = a % 3 ? UINT32_MAX : (uint32_t)b;
			struct coll_rec *s = &in[n++];
			*s = *r;
			s->t0 = ticks[b];
		}
	}
	assert_int_equal(n, 2 * nt * nt);
	round_trip(n);

	/* One record alone: everything differs from the zero before it. */
	in[0] = (struct coll_rec){UINT64_MAX, UINT64_MAX, UINT32_MAX,
				  UINT32_MAX, UINT16_MAX, 255,
				  255,	      UINT32_MAX};
	assert_true(round_trip(1) <= JPACK_REC_MAX);
	/* An all-zero record: one byte and two zero varints. */
	memset(&in[0], 0, sizeof(in[0]));
	assert_int_equal(round_trip(1), 3);
}

static void test_jpack_keeps_random_records(void **st)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)st;
	for (size_t i = 0; i < N; i++) {
		/* xorshift64: the same sequence every run. */
		uint64_t v[4];
		for (int k = 0; k < 4; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[k] = x;
		}
		in[i] = (struct coll_rec){
			.t0 = v[0] >> (v[1] & 63),
			.t1 = v[1] >> (v[2] & 63),
			.name = (uint32_t)(v[2] >> (v[3] & 31)),
			.group = (uint32_t)(v[3] >> 40),
			.kind = (uint16_t)(v[0] & 3 ? COLL_SPAN : v[1]),
			.cat = (uint8_t)(v[2] & 1 ? 1 : v[3]),
			.flags = (uint8_t)(v[3] & 7 ? 0 : v[0]),
			.arg = (uint32_t)(v[1] & 1 ? 0 : v[2]),
		};
	}
	round_trip(N);
}

/* A thread's loop: spans 25 ns apart, 10 ns long, same name: the first
 * record carries the name, kind and start; each of the others 3 bytes. */
static void test_jpack_stores_a_loop_in_three_bytes_a_record(void **st)
{
	(void)st;
	for (size_t i = 0; i < N; i++) {
		in[i] = (struct coll_rec){.t0 = 123456789012ull + 25 * i,
					  .t1 = 10,
					  .name = 300,
					  .group = 7,
					  .kind = COLL_SPAN,
					  .cat = 1,
					  .arg = 2};
	}
	size_t first = 1 + 6 + 1 + 2 + 1 + 1 + 2 + 1;
	assert_int_equal(round_trip(N), first + 3 * (N - 1));
	/* A nested pair ends inner first: t0 goes back, zigzag keeps it
	 * small. */
	in[1].t0 = in[0].t0 - 5;
	in[1].t1 = 40;
	round_trip(2);
}

static void test_jpack_refuses_torn_and_damaged_input(void **st)
{
	(void)st;
	for (size_t i = 0; i < 64; i++) {
		in[i] = (struct coll_rec){.t0 = 1000 + 300 * i,
					  .t1 = 200 + i,
					  .name = (uint32_t)(i % 5),
					  .group = 1,
					  .kind = COLL_SPAN,
					  .arg = (uint32_t)(i / 8)};
	}
	size_t len = jpack_encode(in, 64, buf);

	/* Cut anywhere: refused, never read past the end. */
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);
		assert_non_null(copy);
		memcpy(copy, buf, cut);
		assert_int_equal(jpack_decode(copy, cut, out, 64), -EBADMSG);
		free(copy);
	}
	/* Bytes left over, or fewer records than the bytes hold. */
	buf[len] = 0;
	assert_int_equal(jpack_decode(buf, len + 1, out, 64), -EBADMSG);
	assert_int_equal(jpack_decode(buf, len, out, 63), -EBADMSG);
	assert_int_equal(jpack_decode(buf, len, out, 64), 0);

	/* Unknown bits in a record's first byte. */
	unsigned char bad[16] = {0x08, 0, 0};
	assert_int_equal(jpack_decode(bad, 3, out, 1), -EBADMSG);
	/* A varint of 11 bytes, and one of 10 whose last byte overflows. */
	memset(bad, 0x80, sizeof(bad));
	bad[0] = 0;
	bad[11] = 0;
	assert_int_equal(jpack_decode(bad, 13, out, 1), -EBADMSG);
	memset(bad, 0xff, sizeof(bad));
	bad[0] = 0;
	bad[10] = 0x02;
	bad[11] = 0;
	assert_int_equal(jpack_decode(bad, 12, out, 1), -EBADMSG);
	/* The largest 10-byte varint is UINT64_MAX. */
	bad[10] = 0x01;
	assert_int_equal(jpack_decode(bad, 12, out, 1), 0);
	assert_true(out[0].t1 == 0 && out[0].t0 == (uint64_t)INT64_MIN);
	/* A name past 32 bits. */
	unsigned char big_name[] = {1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x10, 0};
	assert_int_equal(jpack_decode(big_name, sizeof(big_name), out, 1),
			 -EBADMSG);
	big_name[7] = 0x0f; /* UINT32_MAX */
	assert_int_equal(jpack_decode(big_name, sizeof(big_name), out, 1), 0);
	assert_int_equal(out[0].name, UINT32_MAX);
	assert_int_equal(out[0].group, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jpack_keeps_every_field_at_its_limits),
		cmocka_unit_test(test_jpack_keeps_random_records),
		cmocka_unit_test(
			test_jpack_stores_a_loop_in_three_bytes_a_record),
		cmocka_unit_test(test_jpack_refuses_torn_and_damaged_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
