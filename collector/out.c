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
 * out_json_escape() is the one JSON string escaper of the library and of
 * the mxprof command (report, diff, merge): whatever bytes a name holds,
 * what it writes is valid JSON in valid UTF-8.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static void flush_raw(struct out *o, const unsigned char *p, size_t n)
{
	while (n > 0 && o->err == 0) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			o->err = -errno;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void flush_buf(struct out *o, int finish)
{
	if (!o->gz) {
		flush_raw(o, o->buf, o->n);
		o->n = 0;
		return;
	}
	o->zs.next_in = o->buf;
	o->zs.avail_in = (uInt)o->n;
	int rc;
	do {
		o->zs.next_out = o->zbuf;
		o->zs.avail_out = sizeof(o->zbuf);
		rc = deflate(&o->zs, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR) {
			o->err = -EIO;
			return;
		}
		flush_raw(o, o->zbuf, sizeof(o->zbuf) - o->zs.avail_out);
	} while (o->zs.avail_out == 0 || (finish && rc != Z_STREAM_END));
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
		int fd = open(path,
			      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				      O_CLOEXEC,
			      mode);
		if (fd >= 0 || errno != EEXIST || tries == 3) {
			return fd >= 0 ? fd : -errno;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			return -errno;
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
	o->n = 0;
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
	if (o->gz) {
		memset(&o->zs, 0, sizeof(o->zs));
		if (deflateInit2(&o->zs, 6, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK) {
			close(o->fd);
			unlink(o->tmp);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Appends n bytes. Errors are kept for out_commit(). */
void out_write(struct out *o, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n > 0) {
		size_t room = sizeof(o->buf) - o->n;
		size_t k = n < room ? n : room;
		memcpy(o->buf + o->n, s, k);
		o->n += k;
		s += k;
		n -= k;
		if (o->n == sizeof(o->buf)) {
			flush_buf(o, 0);
		}
	}
}

/* Appends the C string s. This function can't fail. */
void out_str(struct out *o, const char *s)
{
	out_write(o, s, strlen(s));
}

/* Appends v in decimal, without printf. This function can't fail. */
void out_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_write(o, tmp + i, sizeof(tmp) - (size_t)i);
}

/* Appends v in decimal, with a '-' when negative. This function can't
 * fail. */
void out_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		out_write(o, "-", 1);
		out_u64(o, (uint64_t)0 - (uint64_t)v);
		return;
	}
	out_u64(o, (uint64_t)v);
}

/* Writes ns as microseconds with three decimals: 1234567 -> "1234.567". */
void out_us(struct out *o, uint64_t ns)
{
	char frac[4] = {(char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			(char)('0' + ns % 10), 0};

	out_u64(o, ns / 1000);
	out_write(o, ".", 1);
	out_write(o, frac, 3);
}

/* Returns the length of the valid UTF-8 sequence at s[0..n), or 0 (see
 * collector.h). This function can't fail. */
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
 * Escapes s[0..n) into dst[0..cap) (see collector.h). Runs of plain ASCII
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
		if (sizeof(o->buf) - o->n < 6) {
			flush_buf(o, 0);
		}
		o->n += out_json_escape((char *)o->buf + o->n,
					sizeof(o->buf) - o->n, s, n, &used);
		s += used;
		n -= used;
		if (o->n == sizeof(o->buf)) {
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
	flush_buf(o, 1);
	if (o->gz) {
		deflateEnd(&o->zs);
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
	if (o->gz) {
		deflateEnd(&o->zs);
	}
	close(o->fd);
	unlink(o->tmp);
}
