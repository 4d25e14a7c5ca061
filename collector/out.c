/*
 * out.c - output files: buffered, optionally gzip, replaced atomically.
 *
 * A file is written to "<path>.tmp.<pid>" in the same folder and renamed
 * over <path> only when it is complete, so a reader (Perfetto, mxprof
 * report, a second dump) never sees half a file, and a failed write leaves
 * the previous complete file in place. The temporary file is created
 * exclusively and never through a symbolic link (O_EXCL, O_NOFOLLOW): a
 * name left there (by a dead process with the same pid, or planted by
 * someone who may write the folder) is removed, never written through.
 *
 * The formatting helpers write digits by hand instead of calling printf:
 * they are fast, allocate nothing, and use only write(), so the same code
 * can later run from a crash handler.
 *
 * A dump of a big run writes a gigabyte of JSON, so the buffer is large
 * (1 MiB, one write() each time it fills) and the trace writer formats
 * each event straight into it: out_room() gives it the room for a whole
 * event, the out_fmt_* helpers write numbers two digits at a time, and
 * out_wrote() takes what was written, with no copy in between.
 *
 * gzip is ISA-L's igzip at its level 1 (OUT_GZ_LEVEL), one gzip member that
 * any gzip reader takes. On a trace's JSON it compresses as well as zlib's
 * level 1 (30 to 1 on a flood of one call, 11 to 1 on a PyTorch run) at
 * ten times its speed, 1.5 to 3 GB/s on one core, which keeps a gzip dump
 * within about the time of a plain one (tests/bench/dump_bench.sh). Its
 * level 2 compresses no better here and its level 3 is eight times slower.
 *
 * out_json_escape() is the one JSON string escaper of the library and of
 * the mxprof command (report, diff, merge): whatever bytes a name holds,
 * what it writes is valid JSON in valid UTF-8.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "output.h"

#define OUT_GZ_LEVEL 1

/* "00" to "99", for writing numbers two digits at a time. */
static const char digit_pairs[201] = "00010203040506070809"
				     "10111213141516171819"
				     "20212223242526272829"
				     "30313233343536373839"
				     "40414243444546474849"
				     "50515253545556575859"
				     "60616263646566676869"
				     "70717273747576777879"
				     "80818283848586878889"
				     "90919293949596979899";

static void flush_raw(struct out *o, const unsigned char *p, size_t n)
{
	if (o->err == 0) {
		o->err = out_fd_write(o->fd, p, n);
	}
}

static void flush_buf(struct out *o, int finish)
{
	o->flushed += o->n;
	/* A file past one buffer goes to other threads where this thread
	 * allows it (out_pipe.c); out_commit() then waits for them. */
	if (!o->pipe && !finish && o->flushed == o->n) {
		out_pipe_start(o);
	}
	if (o->pipe) {
		out_pipe_submit(o, finish);
		return;
	}
	if (!o->gz) {
		flush_raw(o, o->buf, o->n);
		o->n = 0;
		return;
	}
	o->zs.next_in = o->buf;
	o->zs.avail_in = (uint32_t)o->n;
	o->zs.end_of_stream = (uint16_t)(finish != 0);
	/* Until it has taken all the input, and when finishing until it has
	 * written the trailer. */
	do {
		o->zs.next_out = o->zbuf;
		o->zs.avail_out = sizeof(o->zbuf);
		if (isal_deflate(&o->zs) != COMP_OK) {
			o->err = -EIO;
			return;
		}
		flush_raw(o, o->zbuf, sizeof(o->zbuf) - o->zs.avail_out);
	} while (o->zs.avail_in > 0 || o->zs.avail_out == 0 ||
		 (finish && o->zs.internal_state.state != ZSTATE_END));
	o->n = 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Creates path exclusively, never through a symbolic link, removing
 * what stands at that name first (a few times, should it come back).
 * Returns the descriptor or a negative errno. */
int out_create(const char *path, int mode)
{
	for (int tries = 0;; tries++) {
		int fd = out_fd_open_beyond(path,
					    O_WRONLY | O_CREAT | O_EXCL |
						    O_NOFOLLOW | O_CLOEXEC,
					    mode);
		if (fd >= 0 || errno != EEXIST || tries == 3) {
			return fd >= 0 ? fd : -errno;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			return -errno;
		}
	}
}

int out_write_small(const char *path, const char *text, size_t len)
{
	char tmp[4200];
	int rc = paths_temp(path, (int)getpid(), tmp, sizeof(tmp));

	if (rc < 0) {
		return -ENAMETOOLONG;
	}
	int fd = out_create(tmp, 0644);

	if (fd < 0) {
		return fd;
	}
	rc = out_fd_write(fd, text, len);
	if (close(fd) < 0 && rc == 0) {
		rc = -errno;
	}
	if (rc == 0 && rename(tmp, path) < 0) {
		rc = -errno;
	}
	if (rc < 0) {
		unlink(tmp);
	}
	return rc;
}

/*
 * The temporary files being written, for out_forget_temps(): an ending
 * that stops waiting for its dump removes them (a trace's can be GBs).
 * Slots are claimed and freed with atomics; the pid tells a forked
 * child's inherited entries from its own.
 */
#define LIVE_MAX 8
static struct out *live[LIVE_MAX];
static int live_pid[LIVE_MAX];

static void live_add(struct out *o)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		struct out *none = NULL;

		if (__atomic_compare_exchange_n(&live[i], &none, o, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&live_pid[i], (int)getpid(),
					 __ATOMIC_RELEASE);
			return;
		}
	}
}

static void live_remove(struct out *o)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		if (__atomic_load_n(&live[i], __ATOMIC_ACQUIRE) == o) {
			__atomic_store_n(&live_pid[i], 0, __ATOMIC_RELEASE);
			__atomic_store_n(&live[i], NULL, __ATOMIC_RELEASE);
		}
	}
}

/* See internal.h. */
void out_forget_temps(void)
{
	int pid = (int)getpid();

	for (int i = 0; i < LIVE_MAX; i++) {
		struct out *o = __atomic_load_n(&live[i], __ATOMIC_ACQUIRE);

		if (o &&
		    __atomic_load_n(&live_pid[i], __ATOMIC_ACQUIRE) == pid) {
			unlink(o->tmp);
		}
	}
}

static int ends_with(const char *s, const char *suffix);

/* MXPROF_TEST_DUMP_STALL_MS, for the tests only: a trace (a .json file)
 * waits that long once opened (at most 600 s), as on a slow disk. */
static void test_stall(const char *path)
{
	const char *v = getenv("MXPROF_TEST_DUMP_STALL_MS");
	long ms = v && ends_with(path, ".json") ? strtol(v, NULL, 10) : 0;

	if (ms > 0 && ms <= 600000) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
		}
	}
}

/*
 * Opens a temporary file beside path. With allow_gz, a path ending in
 * ".gz" is gzip-compressed. Returns 0 or a negative errno (o is then
 * unusable and needs no out_abort()).
 */
int out_open(struct out *o, const char *path, int allow_gz)
{
	o->buf = o->mem;
	o->n = 0;
	o->flushed = 0;
	o->pipe = NULL;
	o->err = 0;
	o->gz = allow_gz && ends_with(path, ".gz");
	if (snprintf(o->path, sizeof(o->path), "%s", path) >=
		    (int)sizeof(o->path) ||
	    paths_temp(path, (int)getpid(), o->tmp, sizeof(o->tmp)) < 0) {
		return -ENAMETOOLONG;
	}
	o->fd = out_create(o->tmp, 0644);
	if (o->fd < 0) {
		return o->fd;
	}
	live_add(o);
	test_stall(path);
	if (o->gz) {
		isal_deflate_init(&o->zs);
		o->zs.gzip_flag = IGZIP_GZIP;
		o->zs.level = OUT_GZ_LEVEL;
		o->zs.level_buf = o->zlevel;
		o->zs.level_buf_size = sizeof(o->zlevel);
	}
	return 0;
}

/* Appends n bytes. Errors are kept for out_commit(). */
void out_write(struct out *o, const void *p, size_t n)
{
	const unsigned char *s = p;

	if (n < OUT_BUF_BYTES - o->n) {
		memcpy(o->buf + o->n, s, n);
		o->n += n;
		return;
	}
	while (n > 0) {
		size_t room = OUT_BUF_BYTES - o->n;
		size_t k = n < room ? n : room;
		memcpy(o->buf + o->n, s, k);
		o->n += k;
		s += k;
		n -= k;
		if (o->n == OUT_BUF_BYTES) {
			flush_buf(o, 0);
		}
	}
}

/* Room for n bytes at the buffer's end (see output.h). This function
 * can't fail. */
char *out_room(struct out *o, size_t n)
{
	assert(n <= OUT_BUF_BYTES);
	if (OUT_BUF_BYTES - o->n < n) {
		flush_buf(o, 0);
	}
	return (char *)o->buf + o->n;
}

/* Takes what was written at out_room()'s pointer. This function can't
 * fail. */
void out_wrote(struct out *o, const char *end)
{
	size_t n = (size_t)(end - (const char *)o->buf);

	assert(n >= o->n && n <= OUT_BUF_BYTES);
	o->n = n;
}

/* Writes v in decimal at p; returns the end. This function can't fail. */
char *out_fmt_u64(char *p, uint64_t v)
{
	/* The digits: from the bit length, then one comparison. */
	static const uint64_t pow10[20] = {1ull,
					   10ull,
					   100ull,
					   1000ull,
					   10000ull,
					   100000ull,
					   1000000ull,
					   10000000ull,
					   100000000ull,
					   1000000000ull,
					   10000000000ull,
					   100000000000ull,
					   1000000000000ull,
					   10000000000000ull,
					   100000000000000ull,
					   1000000000000000ull,
					   10000000000000000ull,
					   100000000000000000ull,
					   1000000000000000000ull,
					   10000000000000000000ull};
	unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
	size_t len = (bits * 1233) >> 12; /* about bits * log10(2) */
	char *q;

	len += len < 20 && v >= pow10[len];
	len += len == 0;
	q = p + len;
	while (v >= 100) {
		q -= 2;
		memcpy(q, digit_pairs + v % 100 * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, digit_pairs + v * 2, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return p + len;
}

/* Writes ns as microseconds with three decimals at p; returns the end.
 * This function can't fail. */
char *out_fmt_us(char *p, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);

	p = out_fmt_u64(p, ns / 1000);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	memcpy(p + 2, digit_pairs + frac % 100 * 2, 2);
	return p + 4;
}

/* Bytes appended since out_open(). This function can't fail. */
uint64_t out_bytes(const struct out *o)
{
	return o->flushed + o->n;
}

/* Appends the C string s. This function can't fail. */
void out_str(struct out *o, const char *s)
{
	out_write(o, s, strlen(s));
}

/* Appends v in decimal, without printf. This function can't fail. */
void out_u64(struct out *o, uint64_t v)
{
	out_wrote(o, out_fmt_u64(out_room(o, 20), v));
}

/* Appends v in decimal, with a '-' when negative. This function can't
 * fail. */
void out_i64(struct out *o, int64_t v)
{
	char *p = out_room(o, 21);

	if (v < 0) {
		*p++ = '-';
		out_wrote(o, out_fmt_u64(p, (uint64_t)0 - (uint64_t)v));
		return;
	}
	out_wrote(o, out_fmt_u64(p, (uint64_t)v));
}

/* Writes ns as microseconds with three decimals: 1234567 -> "1234.567". */
void out_us(struct out *o, uint64_t ns)
{
	out_wrote(o, out_fmt_us(out_room(o, 24), ns));
}

/* Returns the length of the valid UTF-8 sequence at s[0..n), or 0 (see
 * output.h). This function can't fail. */
size_t out_utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (n == 0) {
		return 0;
	}
	if (s[0] < 0x80) {
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n) {
		return 0;
	}
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past Unicode. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff) {
		return 0;
	}
	return len;
}

/* A byte that stands for itself inside a JSON string. */
static inline int json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/*
 * Escapes s[0..n) into dst[0..cap) (see output.h). Runs of plain ASCII
 * are copied whole, so that names, nearly all ASCII, cost a scan and a
 * memcpy. This function can't fail; it allocates nothing.
 */
size_t out_json_escape(char *dst, size_t cap, const char *s, size_t n,
		       size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t k = 0;

	while (p < end) {
		const unsigned char *q = p;
		size_t run = (size_t)(end - p) < cap - k ? (size_t)(end - p)
							 : cap - k;
		while (q < p + run && json_plain(*q)) {
			q++;
		}
		memcpy(dst + k, p, (size_t)(q - p));
		k += (size_t)(q - p);
		p = q;
		if (p == end || k == cap) {
			break;
		}
		/* *p needs more than itself, or is the start of UTF-8. */
		unsigned char c = *p;
		size_t take = 1, len;
		if (c >= 0x80 && (len = out_utf8_len(p, (size_t)(end - p)))) {
			if (cap - k < len) {
				break;
			}
			memcpy(dst + k, p, len);
			k += len;
			take = len;
		} else if (c >= 0x80) {
			if (cap - k < 6) {
				break;
			}
			memcpy(dst + k, "\\ufffd", 6);
			k += 6;
		} else if (c == '"' || c == '\\') {
			if (cap - k < 2) {
				break;
			}
			dst[k++] = '\\';
			dst[k++] = (char)c;
		} else {
			if (cap - k < 6) {
				break;
			}
			memcpy(dst + k, "\\u00", 4);
			dst[k + 4] = hex[c >> 4];
			dst[k + 5] = hex[c & 15];
			k += 6;
		}
		p += take;
	}
	if (used) {
		*used = (size_t)(p - (const unsigned char *)s);
	}
	return k;
}

/* Writes s[0..n) as a quoted JSON string, escaped straight into the
 * buffer. Errors are kept for out_commit(). */
void out_json_strn(struct out *o, const char *s, size_t n)
{
	out_write(o, "\"", 1);
	while (n > 0) {
		size_t used;
		/* An escape takes at most six bytes: with that much room,
		 * every call takes at least one character. */
		if (OUT_BUF_BYTES - o->n < 6) {
			flush_buf(o, 0);
		}
		o->n += out_json_escape((char *)o->buf + o->n,
					OUT_BUF_BYTES - o->n, s, n, &used);
		s += used;
		n -= used;
		if (o->n == OUT_BUF_BYTES) {
			flush_buf(o, 0);
		}
	}
	out_write(o, "\"", 1);
}

/* Writes the C string s as a quoted JSON string. */
void out_json_str(struct out *o, const char *s)
{
	out_json_strn(o, s, strlen(s));
}

/*
 * Flushes, closes and renames the file into place. Returns 0, or the first
 * write error as a negative errno (the temporary file is then removed and
 * the previous file at path is untouched).
 */
int out_commit(struct out *o)
{
	live_remove(o);
	flush_buf(o, 1);
	if (o->pipe) {
		int rc = out_pipe_finish(o);
		if (o->err == 0) {
			o->err = rc;
		}
	}
	if (close(o->fd) < 0 && o->err == 0) {
		o->err = -errno;
	}
	if (o->err == 0 && rename(o->tmp, o->path) < 0) {
		o->err = -errno;
	}
	if (o->err) {
		unlink(o->tmp);
	}
	return o->err;
}

/* Discards the file being written. This function can't fail. */
void out_abort(struct out *o)
{
	live_remove(o);
	if (o->pipe) {
		out_pipe_abort(o);
	}
	close(o->fd);
	unlink(o->tmp);
}
