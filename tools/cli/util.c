/*
 * util.c - messages, number parsing and path helpers of the mxprof command.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *util_cmd;

/* Names the subcommand for util_err(). This function can't fail. */
void util_set_cmd(const char *s)
{
	util_cmd = s;
}

/* Prints one message line on stderr, prefixed with the command. */
void util_err(const char *fmt, ...)
{
	va_list ap;

	if (util_cmd) {
		fprintf(stderr, "mxprof %s: ", util_cmd);
	} else {
		fputs("mxprof: ", stderr);
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Flushes stdout. Returns CLI_OK, or CLI_FAIL after one line naming what
 * could not be written and why. */
int util_stdout_done(const char *what)
{
	int err = errno;

	if (fflush(stdout) != 0) {
		err = errno;
	} else if (!ferror(stdout)) {
		return CLI_OK;
	}
	util_err("writing %s: %s", what, strerror(err ? err : EIO));
	return CLI_FAIL;
}

/* out_open() of path, with one line naming the file and the reason when
 * it fails. Returns out_open()'s result. */
int util_out_open(struct out *o, const char *path, int gz)
{
	int rc = out_open(o, path, gz);

	if (rc < 0) {
		util_err("%s: %s", rc == -ENAMETOOLONG ? path : o->tmp,
			 strerror(-rc));
	}
	return rc;
}

/* out_commit() of o, written to path, with one line when it fails.
 * Returns out_commit()'s result. */
int util_out_commit(struct out *o, const char *path)
{
	int rc = out_commit(o);

	if (rc < 0) {
		util_err("writing %s: %s", path, strerror(-rc));
	}
	return rc;
}

/* Parses a decimal in [min, max]. Returns 0 or -EINVAL. */
int util_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Parses microseconds into rounded nanoseconds. Returns 0 or -EINVAL. */
int util_us_to_ns(const char *s, size_t len, int64_t *ns)
{
	const char *p = s, *end = s + len;
	int neg = 0;
	int64_t whole = 0, frac = 0;
	int digits = 0, fdigits = 0;

	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	while (p < end && *p >= '0' && *p <= '9') {
		/* Keeps whole * 10000 + 9999 (the tenths below) in
		 * range; larger values take strtod's path. */
		if (whole >= INT64_MAX / 100000) {
			goto slow;
		}
		whole = whole * 10 + (*p++ - '0');
		digits++;
	}
	if (p < end && *p == '.') {
		p++;
		while (p < end && *p >= '0' && *p <= '9') {
			if (fdigits < 4) {
				frac = frac * 10 + (*p - '0');
				fdigits++;
			} else if (fdigits == 4) {
				/* Digits past the fourth cannot change the
				 * rounding of the fourth except through ties,
				 * which the writer never produces. */
				fdigits = 5;
			}
			p++;
		}
	}
	if (p != end || digits == 0) {
		goto slow;
	}
	/* frac holds up to four decimals of a microsecond; scale it to
	 * tenths of a nanosecond, then round to the nanosecond. */
	{
		int f = fdigits > 4 ? 4 : fdigits;
		int64_t tenths;

		while (f < 4) {
			frac *= 10;
			f++;
		}
		tenths = whole * 10000 + frac;
		*ns = (tenths + 5) / 10;
	}
	if (neg) {
		*ns = -*ns;
	}
	return 0;
slow : {
	char buf[64];
	char *e;
	double d;

	if (len == 0 || len >= sizeof(buf)) {
		return -EINVAL;
	}
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	d = strtod(buf, &e);
	if (*e || errno || d != d || d > 9.2e15 || d < -9.2e15) {
		return -EINVAL;
	}
	*ns = (int64_t)(d * 1000.0 + (d < 0 ? -0.5 : 0.5));
	return 0;
}
}

/* Parses a JSON integer (a fraction truncated). Returns 0, -ERANGE or
 * -EINVAL. */
int util_parse_i64(const char *s, size_t len, int64_t *out)
{
	char buf[64];
	char *e;
	long long v;
	double d;
	size_t i = len && s[0] == '-';

	/* The common form, up to 18 digits, cannot overflow: no strtoll. */
	if (len > i && len - i <= 18) {
		int64_t u = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9') {
			u = u * 10 + (s[i++] - '0');
		}
		if (i == len) {
			*out = s[0] == '-' ? -u : u;
			return 0;
		}
	}
	if (len == 0 || len >= sizeof(buf)) {
		return -EINVAL;
	}
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	v = strtoll(buf, &e, 10);
	if (e == buf) {
		return -EINVAL;
	}
	if (*e == 0) {
		if (errno) {
			return -ERANGE;
		}
		*out = v;
		return 0;
	}
	/* A fraction or an exponent: through a double, truncated. */
	d = strtod(buf, &e);
	if (*e || d != d) {
		return -EINVAL;
	}
	if (d >= 9.2e18 || d <= -9.2e18) {
		return -ERANGE;
	}
	*out = (int64_t)d;
	return 0;
}
