/*
 * test_out.c - output files and the JSON escaper (collector/out.c), the
 * one escaper of the library and the mxprof command.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"
#include <yajl/yajl_tree.h>

#include "collector.h"

static char dir[] = "/tmp/mxprof-test-out-XXXXXX";

/* Escapes s[0..n) with room for everything and returns it as a C string
 * (static buffer). */
static const char *esc_n(const char *s, size_t n)
{
	static char buf[4096];
	size_t used = 12345;

	assert_true(n * 6 < sizeof(buf));
	size_t k = out_json_escape(buf, n * 6, s, n, &used);
	assert_int_equal(used, n);
	buf[k] = 0;
	return buf;
}

static const char *esc(const char *s)
{
	return esc_n(s, strlen(s));
}

/* Returns 1 when s[0..n) is valid UTF-8. */
static int is_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = out_utf8_len((const unsigned char *)s + i, n - i);
		if (!l) {
			return 0;
		}
		i += l;
	}
	return 1;
}

static void test_out_json_escape_quotes_and_backslashes(void **st)
{
	(void)st;
	assert_string_equal(esc("plain ascii ~!"), "plain ascii ~!");
	assert_string_equal(esc("say \"hi\""), "say \\\"hi\\\"");
	assert_string_equal(esc("a\\b"), "a\\\\b");
	assert_string_equal(esc("\"\\\"\\"), "\\\"\\\\\\\"\\\\");
	/* '/' and DEL need no escape in JSON. */
	assert_string_equal(esc("a/b\x7f"), "a/b\x7f");
	assert_string_equal(esc(""), "");
}

static void test_out_json_escape_control_characters_as_u00xx(void **st)
{
	char want[8];

	(void)st;
	for (int c = 1; c < 0x20; c++) {
		char s[2] = {(char)c, 0};
		snprintf(want, sizeof(want), "\\u%04x", c);
		assert_string_equal(esc(s), want);
	}
	assert_string_equal(esc("a\tb\nc\rd"), "a\\u0009b\\u000ac\\u000dd");
	/* A NUL inside the length is a character like the others. */
	assert_string_equal(esc_n("a\0b", 3), "a\\u0000b");
}

static void test_out_json_escape_copies_valid_multibyte_utf8(void **st)
{
	static const char *const valid[] = {
		"\xc2\x80",	    /* U+0080, the first of two bytes  */
		"\xdf\xbf",	    /* U+07FF, the last of two bytes   */
		"\xe0\xa0\x80",	    /* U+0800                          */
		"\xe2\x82\xac",	    /* U+20AC, the euro sign           */
		"\xed\x9f\xbf",	    /* U+D7FF, just below surrogates   */
		"\xee\x80\x80",	    /* U+E000, just above them         */
		"\xef\xbf\xbf",	    /* U+FFFF                          */
		"\xf0\x90\x80\x80", /* U+10000                         */
		"\xf0\x9f\x98\x80", /* U+1F600, an emoji               */
		"\xf4\x8f\xbf\xbf", /* U+10FFFF, the last code point   */
	};

	(void)st;
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		assert_string_equal(esc(valid[i]), valid[i]);
		assert_int_equal(out_utf8_len((const unsigned char *)valid[i],
					      strlen(valid[i])),
				 strlen(valid[i]));
	}
	assert_string_equal(esc("na\xc3\xafve \xe2\x82\xac\"1\""),
			    "na\xc3\xafve \xe2\x82\xac\\\"1\\\"");
}

static void test_out_json_escape_replaces_stray_and_invalid_bytes(void **st)
{
	(void)st;
	/* Continuation bytes without a lead, and bytes that never lead. */
	assert_string_equal(esc("a\x80"
				"b"),
			    "a\\ufffdb");
	assert_string_equal(esc("\xbf"), "\\ufffd");
	assert_string_equal(esc("\xf8\x88\x80\x80\x80"),
			    "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xfe\xff"), "\\ufffd\\ufffd");
	/* A lead byte followed by something that does not continue it:
	 * only the lead is replaced, the next character stays. */
	assert_string_equal(esc("\xe2(\xa1"), "\\ufffd(\\ufffd");
	assert_string_equal(esc("\xc3\xc3\xa9"), "\\ufffd\xc3\xa9");
}

static void test_out_json_escape_replaces_truncated_sequences(void **st)
{
	(void)st;
	/* Cut by the end of the string: every byte of it is replaced. */
	assert_string_equal(esc("ab\xe2\x82"), "ab\\ufffd\\ufffd");
	assert_string_equal(esc("\xf0\x9f\x98"), "\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xc3"), "\\ufffd");
	/* Cut by n although s goes on: the bytes past n are not read. */
	assert_string_equal(esc_n("\xc3\xa9", 1), "\\ufffd");
	assert_string_equal(esc_n("x\xe2\x82\xac", 3), "x\\ufffd\\ufffd");
	assert_int_equal(out_utf8_len((const unsigned char *)"\xe2\x82\xac", 2),
			 0);
	assert_int_equal(out_utf8_len((const unsigned char *)"a", 0), 0);
}

static void test_out_json_escape_replaces_overlong_forms(void **st)
{
	(void)st;
	/* '/' in two, three and four bytes, and the largest overlongs. */
	assert_string_equal(esc("\xc0\xaf"), "\\ufffd\\ufffd");
	assert_string_equal(esc("\xe0\x80\xaf"), "\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xf0\x80\x80\xaf"),
			    "\\ufffd\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xc1\xbf"), "\\ufffd\\ufffd");
	assert_string_equal(esc("\xe0\x9f\xbf"), "\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xf0\x8f\xbf\xbf"),
			    "\\ufffd\\ufffd\\ufffd\\ufffd");
	/* An overlong NUL does not end anything. */
	assert_string_equal(esc("a\xc0\x80"
				"b"),
			    "a\\ufffd\\ufffdb");
}

static void test_out_json_escape_replaces_surrogates_and_past_unicode(void **st)
{
	(void)st;
	assert_string_equal(esc("\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xed\xbf\xbf"), "\\ufffd\\ufffd\\ufffd");
	/* A surrogate pair in CESU-8 form is two surrogates. */
	assert_string_equal(esc("\xed\xa0\xbd\xed\xb8\x80"),
			    "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
	/* U+110000 and beyond. */
	assert_string_equal(esc("\xf4\x90\x80\x80"),
			    "\\ufffd\\ufffd\\ufffd\\ufffd");
	assert_string_equal(esc("\xf7\xbf\xbf\xbf"),
			    "\\ufffd\\ufffd\\ufffd\\ufffd");
}

static void test_out_json_escape_stops_before_what_does_not_fit(void **st)
{
	char dst[16];
	size_t used;

	(void)st;
	/* Exactly enough room, and one byte short of a two-byte UTF-8
	 * character: the whole character is left out, never half. */
	memset(dst, '#', sizeof(dst));
	assert_int_equal(out_json_escape(dst, 4, "ab\xc3\xa9", 4, &used), 4);
	assert_int_equal(used, 4);
	assert_memory_equal(dst, "ab\xc3\xa9", 4);
	assert_int_equal(dst[4], '#'); /* no terminator written */
	assert_int_equal(out_json_escape(dst, 3, "ab\xc3\xa9", 4, &used), 2);
	assert_int_equal(used, 2);
	/* Four-byte character with three bytes of room. */
	assert_int_equal(out_json_escape(dst, 3, "\xf0\x9f\x98\x80!", 5, &used),
			 0);
	assert_int_equal(used, 0);
	assert_int_equal(out_json_escape(dst, 5, "\xf0\x9f\x98\x80!", 5, &used),
			 5);
	assert_int_equal(used, 5);
	/* An escape is never cut: \" needs 2, \u00XX and \ufffd need 6. */
	assert_int_equal(out_json_escape(dst, 2, "a\"", 2, &used), 1);
	assert_int_equal(used, 1);
	assert_int_equal(out_json_escape(dst, 3, "a\"", 2, &used), 3);
	assert_memory_equal(dst, "a\\\"", 3);
	assert_int_equal(out_json_escape(dst, 5, "\x01", 1, &used), 0);
	assert_int_equal(used, 0);
	assert_int_equal(out_json_escape(dst, 6, "\x01", 1, &used), 6);
	assert_int_equal(out_json_escape(dst, 5, "\xff", 1, &used), 0);
	assert_int_equal(out_json_escape(dst, 6, "\xff", 1, &used), 6);
	assert_int_equal(used, 1);
	/* Plain ASCII is cut at the byte. */
	assert_int_equal(out_json_escape(dst, 3, "abcdef", 6, &used), 3);
	assert_int_equal(used, 3);
	/* No room, nothing to do, NULL for used. */
	assert_int_equal(out_json_escape(dst, 0, "abc", 3, &used), 0);
	assert_int_equal(used, 0);
	assert_int_equal(out_json_escape(dst, 8, "", 0, &used), 0);
	assert_int_equal(used, 0);
	assert_int_equal(out_json_escape(dst, 8, "abc", 3, NULL), 3);
}

/* A small, fixed pseudo-random sequence (xorshift). */
static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void test_out_json_escape_gives_json_for_any_bytes(void **st)
{
	char s[64], body[64 * 6], doc[64 * 6 + 16], err[128];
	uint32_t x = 2463534242u;

	(void)st;
	for (int round = 0; round < 20000; round++) {
		size_t n = rnd(&x) % sizeof(s), k, used;
		/* Half the rounds from a small alphabet rich in lead and
		 * continuation bytes, so that sequences often form. */
		static const unsigned char alpha[] = {
			0x00, 0x1f, '"',  '\\', 'a',  0x80, 0xbf, 0xc2,
			0xc3, 0xe0, 0xe2, 0xed, 0xf0, 0xf4, 0xa0, 0x9f};
		for (size_t i = 0; i < n; i++) {
			uint32_t r = rnd(&x);
			s[i] = (char)(round & 1 ? alpha[r % 16] : r & 0xff);
		}
		k = out_json_escape(body, sizeof(body), s, n, &used);
		assert_int_equal(used, n);
		assert_true(is_utf8(body, k));
		doc[0] = '[';
		doc[1] = '"';
		memcpy(doc + 2, body, k);
		memcpy(doc + 2 + k, "\"]", 3);
		yajl_val v = yajl_tree_parse(doc, err, sizeof(err));
		if (!v) {
			fail_msg("not JSON (%s): %s", err, doc);
		}
		/* Valid input comes back unchanged. */
		if (is_utf8(s, n) && !memchr(s, 0, n)) {
			yajl_val str = v->u.array.values[0];
			assert_int_equal(strlen(str->u.string), n);
			assert_memory_equal(str->u.string, s, n);
		}
		yajl_tree_free(v);
		/* Any smaller room gives a prefix of the whole escape that
		 * ends between characters. */
		size_t cap = rnd(&x) % (k + 1), used2;
		char part[64 * 6];
		size_t k2 = out_json_escape(part, cap, s, n, &used2);
		assert_true(k2 <= cap && used2 <= n);
		assert_memory_equal(part, body, k2);
		size_t k3 = out_json_escape(part, sizeof(part), s, used2, NULL);
		assert_int_equal(k3, k2);
	}
}

static void test_out_json_str_streams_strings_longer_than_its_buffer(void **st)
{
	struct out *o = malloc(sizeof(*o));
	char path[128];
	size_t n = 300000, len, want_len, i;
	char *s = malloc(n + 1), *want = malloc(n * 6 + 2);
	uint32_t x = 88172645u;

	(void)st;
	/* Characters of every width and escape, so that the buffer fills
	 * at every offset inside them. */
	static const char *const pieces[] = {
		"a",	    "\"",	    "\x01",
		"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xff"};
	for (i = 0; i < n;) {
		const char *p = pieces[rnd(&x) % 7];
		size_t k = strlen(p);
		if (i + k > n) {
			break;
		}
		memcpy(s + i, p, k);
		i += k;
	}
	n = i;
	s[n] = 0;
	want[0] = '"';
	want_len = 1 + out_json_escape(want + 1, n * 6, s, n, NULL);
	want[want_len++] = '"';
	for (int gz = 0; gz < 2; gz++) {
		snprintf(path, sizeof(path), "%s/long.json%s", dir,
			 gz ? ".gz" : "");
		assert_int_equal(out_open(o, path, 1), 0);
		out_json_str(o, s);
		assert_int_equal(out_commit(o), 0);
		char *got = tu_read_gz(path, &len);
		assert_int_equal(len, want_len);
		assert_memory_equal(got, want, len);
		free(got);
	}
	/* out_json_strn takes the length: NULs are escaped, not ends. */
	snprintf(path, sizeof(path), "%s/nul.json", dir);
	assert_int_equal(out_open(o, path, 0), 0);
	out_json_strn(o, "a\0b", 3);
	assert_int_equal(out_commit(o), 0);
	char *got = tu_read_gz(path, &len);
	assert_int_equal(len, 10);
	assert_memory_equal(got, "\"a\\u0000b\"", 10);
	free(got);
	free(s);
	free(want);
	free(o);
}

/* Inflates the whole file as one gzip member (zlib checks its CRC and
 * length); fails on bytes after it: a second member is not what every
 * trace viewer reads. */
static unsigned char *inflate_one_member(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	unsigned char *in = malloc((size_t)sb.st_size + 1);
	assert_int_equal(read(fd, in, (size_t)sb.st_size), sb.st_size);
	close(fd);
	size_t cap = 1 << 20;
	unsigned char *p = malloc(cap);
	z_stream z;
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = in;
	z.avail_in = (uInt)sb.st_size;
	int rc;
	do {
		if (z.total_out == cap) {
			cap *= 2;
			p = realloc(p, cap);
		}
		z.next_out = p + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
	} while (rc == Z_OK);
	assert_int_equal(rc, Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	*len = z.total_out;
	inflateEnd(&z);
	free(in);
	return p;
}

/* The threads of this process named "mxprof-out": the pipe's workers. */
static int out_workers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], name[32] = "";
		if (e->d_name[0] == '.') {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(name, sizeof(name), f)) {
				n += strcmp(name, "mxprof-out\n") == 0;
			}
			fclose(f);
		}
	}
	closedir(d);
	return n;
}

/* The workers left: none once joined. A joined thread's entry in /proc
 * can outlive the join for a moment, so this waits for them to go (10 s
 * at most, a bound never reached unless a worker was left running). */
static int out_workers_left(void)
{
	int n = out_workers();

	for (int i = 0; n > 0 && i < 10000; i++) {
		usleep(1000);
		n = out_workers();
	}
	return n;
}

/* The workers a file of this kind gets on this machine. */
static int workers_for(int gz)
{
	cpu_set_t set;
	int n;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	n = CPU_COUNT(&set) - 1;
	return !gz ? 1 : n > 4 ? 4 : n > 1 ? n : 1;
}

/* n bytes of JSON-like runs and random bytes (which do not compress). */
static unsigned char *mixed_bytes(size_t n, uint32_t seed)
{
	unsigned char *p = malloc(n ? n : 1);

	assert_non_null(p);
	for (size_t i = 0; i < n;) {
		size_t k = 1 + rnd(&seed) % 70000;
		k = k > n - i ? n - i : k;
		for (size_t j = 0; j < k; j++) {
			p[i + j] = rnd(&seed) % 3
					   ? (unsigned char)rnd(&seed)
					   : (unsigned char)"{\"ts\":1}"[j % 9];
		}
		i += k;
	}
	return p;
}

/*
 * Writes want[0..n) to path in pieces of every size, with the calling
 * thread allowing the pipe or not, and checks the workers running while
 * the file is written (after the second buffer) and after the commit.
 * Returns out_commit()'s result.
 */
static int write_pieces(const char *path, const unsigned char *want, size_t n,
			int allow, int gz)
{
	struct out *o = malloc(sizeof(*o));
	uint32_t x = 362436069u;
	int checked = 0, rc;

	assert_non_null(o);
	out_pipe_allow(allow);
	assert_int_equal(out_open(o, path, 1), 0);
	for (size_t i = 0; i < n;) {
		size_t k = 1 + rnd(&x) % 3000000;
		k = k > n - i ? n - i : k;
		out_write(o, want + i, k);
		i += k;
		if (!checked && i > 2 * OUT_BUF_BYTES) {
			assert_int_equal(out_workers(),
					 allow ? workers_for(gz) : 0);
			checked = 1;
		}
	}
	rc = out_commit(o);
	assert_int_equal(out_workers_left(), 0);
	out_pipe_allow(0);
	free(o);
	return rc;
}

static void test_out_gzip_is_one_member_of_any_size(void **st)
{
	struct out *o = malloc(sizeof(*o));
	char path[128];
	size_t len, n = 5 * OUT_BUF_BYTES + 12345;
	/* Runs of JSON and of random bytes (which do not compress: the
	 * compressed buffer fills before the input is taken), written in
	 * pieces of every size, past the buffer several times, by this
	 * thread alone (it does not allow other threads: none runs). */
	unsigned char *want = mixed_bytes(n, 2463534242u);

	(void)st;
	snprintf(path, sizeof(path), "%s/big.json.gz", dir);
	assert_int_equal(write_pieces(path, want, n, 0, 1), 0);
	unsigned char *got = inflate_one_member(path, &len);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);
	free(got);

	/* Nothing written: still a whole, empty gzip file. */
	assert_int_equal(out_open(o, path, 1), 0);
	assert_int_equal(out_commit(o), 0);
	got = inflate_one_member(path, &len);
	assert_int_equal(len, 0);
	free(got);
	free(want);
	free(o);
}

static void test_out_gzip_by_ending_and_atomic_replace(void **st)
{
	struct out *o = malloc(sizeof(*o));
	char path[128], buf[8];
	size_t len;
	struct stat sb;

	(void)st;
	/* ".gz" compresses when allowed, and only then. */
	snprintf(path, sizeof(path), "%s/t.json.gz", dir);
	assert_int_equal(out_open(o, path, 1), 0);
	out_str(o, "{\"n\":");
	out_i64(o, -42);
	out_str(o, ",\"ts\":");
	out_us(o, 1234567);
	out_str(o, "}");
	assert_int_equal(out_commit(o), 0);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, 2), 2);
	close(fd);
	assert_memory_equal(buf, "\x1f\x8b", 2);
	char *got = tu_read_gz(path, &len);
	assert_int_equal(len, strlen("{\"n\":-42,\"ts\":1234.567}"));
	assert_memory_equal(got, "{\"n\":-42,\"ts\":1234.567}", len);
	free(got);
	assert_int_equal(out_open(o, path, 0), 0);
	out_str(o, "plain");
	assert_int_equal(out_commit(o), 0);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, 5), 5);
	close(fd);
	assert_memory_equal(buf, "plain", 5);

	/* Abandoned: the previous file stays, and no temporary is left. */
	assert_int_equal(out_open(o, path, 0), 0);
	assert_int_equal(stat(o->tmp, &sb), 0);
	out_str(o, "half");
	out_abort(o);
	assert_int_equal(stat(o->tmp, &sb), -1);
	got = tu_read_gz(path, &len);
	assert_int_equal(len, 5);
	assert_memory_equal(got, "plain", 5);
	free(got);

	/* A folder that does not exist: open's errno, naming o->tmp. */
	snprintf(path, sizeof(path), "%s/none/t.json", dir);
	assert_int_equal(out_open(o, path, 1), -ENOENT);
	assert_non_null(strstr(o->tmp, "/none/t.json.tmp."));
	free(o);
}

static int setup(void **st)
{
	(void)st;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
	(void)st;
	tu_rmdir(dir);
	return 0;
}

/* Formats v with out_fmt_u64 and returns it as a C string (static
 * buffer). */
static const char *fmt_u64(uint64_t v)
{
	static char buf[32];

	memset(buf, 'x', sizeof(buf));
	*out_fmt_u64(buf, v) = 0;
	return buf;
}

static const char *fmt_us(uint64_t ns)
{
	static char buf[32];

	memset(buf, 'x', sizeof(buf));
	*out_fmt_us(buf, ns) = 0;
	return buf;
}

static void test_out_fmt_writes_every_digit_count_as_printf(void **st)
{
	char want[32];
	uint64_t p = 1;

	(void)st;
	assert_string_equal(fmt_u64(0), "0");
	assert_string_equal(fmt_u64(9), "9");
	assert_string_equal(fmt_u64(10), "10");
	assert_string_equal(fmt_u64(UINT64_MAX), "18446744073709551615");
	/* Each power of ten and its neighbours: where the digit count
	 * changes. */
	for (int k = 0; k < 20; k++, p *= 10) {
		for (uint64_t v = p - 1; v <= p + 1; v++) {
			snprintf(want, sizeof(want), "%llu",
				 (unsigned long long)v);
			assert_string_equal(fmt_u64(v), want);
		}
	}
	/* Each power of two and its neighbours: where the bit length
	 * changes. */
	for (int k = 1; k < 64; k++) {
		for (uint64_t v = (1ull << k) - 1; v <= (1ull << k) + 1; v++) {
			snprintf(want, sizeof(want), "%llu",
				 (unsigned long long)v);
			assert_string_equal(fmt_u64(v), want);
		}
	}
}

static void test_out_fmt_us_gives_microseconds_with_three_decimals(void **st)
{
	(void)st;
	assert_string_equal(fmt_us(0), "0.000");
	assert_string_equal(fmt_us(7), "0.007");
	assert_string_equal(fmt_us(10), "0.010");
	assert_string_equal(fmt_us(999), "0.999");
	assert_string_equal(fmt_us(1000), "1.000");
	assert_string_equal(fmt_us(1234567), "1234.567");
	assert_string_equal(fmt_us(UINT64_MAX), "18446744073709551.615");
}

static void test_out_room_writes_in_order_across_buffer_fills(void **st)
{
	struct out *o = malloc(sizeof(*o));
	char path[128], *want = malloc(3 * OUT_BUF_BYTES), *got, *p;
	size_t n = 0, len, chunk = OUT_BUF_BYTES / 3 + 7;

	(void)st;
	assert_non_null(o);
	assert_non_null(want);
	snprintf(path, sizeof(path), "%s/room.json", dir);
	assert_int_equal(out_open(o, path, 0), 0);
	/* Direct writes that do not fit what is left, between short
	 * appends: each lands whole, after what came before. */
	for (int i = 0; i < 6; i++) {
		out_write(o, "<", 1);
		want[n++] = '<';
		p = out_room(o, chunk);
		memset(p, 'a' + i, chunk);
		out_wrote(o, p + chunk);
		memset(want + n, 'a' + i, chunk);
		n += chunk;
		out_u64(o, 1234567890123ull);
		memcpy(want + n, "1234567890123", 13);
		n += 13;
	}
	assert_int_equal(out_bytes(o), n);
	assert_int_equal(out_commit(o), 0);
	got = tu_read_gz(path, &len);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);
	free(got);
	free(want);
	free(o);
}

/* ---- big outputs written by other threads (out_pipe.c) ----------------- */

static void test_out_pipe_writes_the_same_bytes_as_one_thread(void **st)
{
	/* Sizes that end a chunk exactly (the last chunk empty), just past
	 * one, inside one, and that never leave the first buffer. */
	const size_t sizes[] = {4 * OUT_BUF_BYTES, 4 * OUT_BUF_BYTES + 1,
				7 * OUT_BUF_BYTES + 54321, OUT_BUF_BYTES - 1,
				0};
	char path[128];
	size_t len;

	(void)st;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		size_t n = sizes[i];
		unsigned char *want = mixed_bytes(n, 88675123u + (uint32_t)i);
		for (int gz = 0; gz < 2; gz++) {
			snprintf(path, sizeof(path), "%s/pipe.json%s", dir,
				 gz ? ".gz" : "");
			assert_int_equal(write_pieces(path, want, n, 1, gz), 0);
			unsigned char *got =
				gz ? inflate_one_member(path, &len)
				   : (unsigned char *)tu_read_gz(path, &len);
			assert_int_equal(len, n);
			assert_memory_equal(got, want, n);
			free(got);
		}
		free(want);
	}
}

static void test_out_pipe_write_error_keeps_the_previous_file(void **st)
{
	size_t n = 6 * OUT_BUF_BYTES, len;
	unsigned char *want = mixed_bytes(n, 123456789u);
	char path[128], gzpath[140], tmp[160];
	uint32_t x = 5783321u;
	struct rlimit old, small;
	struct stat sb;

	(void)st;
	/* A whole file first; then files that pass the size limit: write()
	 * fails with EFBIG (SIGXFSZ ignored) in a worker. */
	snprintf(path, sizeof(path), "%s/limit.json", dir);
	assert_int_equal(write_pieces(path, want, 1000, 1, 0), 0);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 2 * OUT_BUF_BYTES + 1000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	assert_int_equal(write_pieces(path, want, n, 1, 0), -EFBIG);
	/* Bytes that do not compress pass it in a gzip file too. */
	for (size_t i = 0; i < n; i++) {
		want[i] = (unsigned char)(rnd(&x) >> 7);
	}
	snprintf(gzpath, sizeof(gzpath), "%s.gz", path);
	assert_int_equal(write_pieces(gzpath, want, n, 1, 1), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	unsigned char *got = (unsigned char *)tu_read_gz(path, &len);
	assert_int_equal(len, 1000);
	free(got);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	assert_int_equal(stat(tmp, &sb), -1);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", gzpath, (int)getpid());
	assert_int_equal(stat(tmp, &sb), -1);
	assert_int_equal(stat(gzpath, &sb), -1);
	free(want);
}

static void test_out_pipe_abort_removes_what_it_wrote(void **st)
{
	struct out *o = malloc(sizeof(*o));
	unsigned char *want = mixed_bytes(3 * OUT_BUF_BYTES, 1u);
	char path[128], tmp[160];
	struct stat sb;

	(void)st;
	snprintf(path, sizeof(path), "%s/aborted.json.gz", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	out_pipe_allow(1);
	assert_int_equal(out_open(o, path, 1), 0);
	out_write(o, want, 3 * OUT_BUF_BYTES);
	assert_int_equal(out_workers(), workers_for(1));
	out_abort(o);
	out_pipe_allow(0);
	assert_int_equal(out_workers_left(), 0);
	assert_int_equal(stat(tmp, &sb), -1);
	assert_int_equal(stat(path, &sb), -1);
	free(want);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_json_escape_quotes_and_backslashes),
		cmocka_unit_test(
			test_out_json_escape_control_characters_as_u00xx),
		cmocka_unit_test(
			test_out_json_escape_copies_valid_multibyte_utf8),
		cmocka_unit_test(
			test_out_json_escape_replaces_stray_and_invalid_bytes),
		cmocka_unit_test(
			test_out_json_escape_replaces_truncated_sequences),
		cmocka_unit_test(test_out_json_escape_replaces_overlong_forms),
		cmocka_unit_test(
			test_out_json_escape_replaces_surrogates_and_past_unicode),
		cmocka_unit_test(
			test_out_json_escape_stops_before_what_does_not_fit),
		cmocka_unit_test(test_out_json_escape_gives_json_for_any_bytes),
		cmocka_unit_test(
			test_out_json_str_streams_strings_longer_than_its_buffer),
		cmocka_unit_test(test_out_gzip_by_ending_and_atomic_replace),
		cmocka_unit_test(test_out_gzip_is_one_member_of_any_size),
		cmocka_unit_test(
			test_out_fmt_writes_every_digit_count_as_printf),
		cmocka_unit_test(
			test_out_fmt_us_gives_microseconds_with_three_decimals),
		cmocka_unit_test(
			test_out_room_writes_in_order_across_buffer_fills),
		cmocka_unit_test(
			test_out_pipe_writes_the_same_bytes_as_one_thread),
		cmocka_unit_test(
			test_out_pipe_write_error_keeps_the_previous_file),
		cmocka_unit_test(test_out_pipe_abort_removes_what_it_wrote),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
