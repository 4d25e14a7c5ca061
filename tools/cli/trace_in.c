/*
 * trace_in.c - the bytes of a trace: a file opened once, told plain from
 * gzip by its first two bytes (never by its name), and read in chunks.
 *
 * A pipe cannot be peeked at without consuming it, so it always goes
 * through zlib, which passes data that is not gzip through unchanged. A
 * gzip stream cut short (a crash while it was written) reads as an end,
 * flagged in gz_truncated, so that the reader can tell it from corrupt
 * data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Opens path for reading (see cli.h). Returns 0, or -1 after one line on
 * stderr; nothing is left open then. */
int trace_in_open(struct trace_in *in, const char *path)
{
	unsigned char magic[2];
	struct stat sb;
	ssize_t n;

	memset(in, 0, sizeof(*in));
	in->path = path;
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		util_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(in->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		util_err("%s: is a directory", path);
		goto fail;
	}
	n = pread(in->fd, magic, 2, 0);
	if (n < 0 && errno != ESPIPE) {
		util_err("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (n == 0) {
		util_err("%s: empty file, not a trace", path);
		goto fail;
	}
	if (n < 0 || (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b)) {
		int fd2 = dup(in->fd);

		in->gz = fd2 >= 0 ? gzdopen(fd2, "rb") : NULL;
		if (!in->gz) {
			if (fd2 >= 0) {
				close(fd2);
			}
			util_err("%s: cannot open the gzip stream", path);
			goto fail;
		}
		gzbuffer(in->gz, TRACE_IN_CHUNK);
	}
	return 0;
fail:
	close(in->fd);
	in->fd = -1;
	return -1;
}

/* Reads up to len bytes (see cli.h). Returns the count, 0 at the end, or
 * -1 after one line on stderr. */
ssize_t trace_in_read(struct trace_in *in, unsigned char *buf, size_t len)
{
	ssize_t n;

	if (!in->gz) {
		do {
			n = read(in->fd, buf, len);
		} while (n < 0 && errno == EINTR);
		if (n < 0) {
			util_err("%s: %s", in->path, strerror(errno));
			in->failed = 1;
		}
		return n;
	}
	n = gzread(in->gz, buf, (unsigned)len);
	if (n < 0) {
		int zerr;
		const char *msg = gzerror(in->gz, &zerr);

		if (zerr == Z_BUF_ERROR) {
			in->gz_truncated = 1;
			return 0;
		}
		util_err("%s: corrupt gzip data (%s)", in->path,
			 msg ? msg : "unknown error");
		in->failed = 1;
		return -1;
	}
	if (n == 0) {
		/* gzread reports a stream cut short only once, on the call
		 * that meets the end; ask for the state explicitly. */
		int zerr;

		(void)gzerror(in->gz, &zerr); /* only zerr is wanted */
		if (zerr == Z_BUF_ERROR) {
			in->gz_truncated = 1;
		}
	}
	return n;
}

/* Reads the next chunk after the first have bytes of *buf, growing it
 * (see cli.h). Returns the count, 0 at the end, or -1 after one line on
 * stderr. */
ssize_t trace_in_more(struct trace_in *in, unsigned char **buf, size_t *cap,
		      size_t have)
{
	return trace_in_more_n(in, buf, cap, have, TRACE_IN_CHUNK);
}

/* As trace_in_more(), reading want bytes at most (see cli.h). */
ssize_t trace_in_more_n(struct trace_in *in, unsigned char **buf, size_t *cap,
			size_t have, size_t want)
{
	if (have + TRACE_IN_CHUNK > *cap) {
		unsigned char *p = realloc(*buf, have + TRACE_IN_CHUNK);

		if (!p) {
			util_err("%s: out of memory", in->path);
			in->failed = 1;
			return -1;
		}
		*buf = p;
		*cap = have + TRACE_IN_CHUNK;
	}
	return trace_in_read(in, *buf + have,
			     want < TRACE_IN_CHUNK ? want : TRACE_IN_CHUNK);
}

/* Tells whether buf[off..len) and the rest of the input are all NUL bytes
 * (see cli.h). Returns 1 or 0. */
int trace_in_rest_is_nul(struct trace_in *in, unsigned char *buf, size_t off,
			 size_t len, size_t cap)
{
	ssize_t n;
	size_t i;

	for (i = off; i < len; i++) {
		if (buf[i]) {
			return 0;
		}
	}
	while ((n = trace_in_read(in, buf, cap)) > 0) {
		for (i = 0; i < (size_t)n; i++) {
			if (buf[i]) {
				return 0;
			}
		}
	}
	return n == 0;
}

/* Closes what trace_in_open() opened. This function can't fail. */
void trace_in_close(struct trace_in *in)
{
	if (in->gz) {
		gzclose(in->gz);
		in->gz = NULL;
	}
	if (in->fd >= 0) {
		close(in->fd);
		in->fd = -1;
	}
}
