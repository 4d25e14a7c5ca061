/*
 * testutil.h - what the unit suites share: cmocka's headers in the order
 * it needs them, a file read into memory (as it is, or inflated), a
 * scratch folder removed with its files, and the collector's settings the
 * suites that start it use. Header-only (static inline functions and one
 * macro): every tests/unit/test_*.c is a program of one file.
 */
#ifndef MXPROF_TESTUTIL_H
#define MXPROF_TESTUTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* cmocka.h needs these first. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/*
 * The whole file at path in memory (malloc'ed, NUL-terminated), its size
 * in *len when len is not NULL; NULL when the file cannot be opened. Fails
 * the test when memory runs out.
 */
static inline char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		return NULL;
	}
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t k = fread(buf + n, 1, 65536, f);
		n += k;
		if (k == 0) {
			break;
		}
	}
	fclose(f);
	buf[n] = 0;
	if (len) {
		*len = n;
	}
	return buf;
}

/*
 * tu_read_file through zlib: a gzip file (one member or several) comes
 * back inflated, any other file as it is. Fails the test when the file
 * cannot be opened or read.
 */
static inline char *tu_read_gz(const char *path, size_t *len)
{
	gzFile g = gzopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	assert_non_null(g);
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		int k = gzread(g, buf + n, 65536);
		assert_true(k >= 0);
		n += (size_t)k;
		if (k == 0) {
			break;
		}
	}
	assert_int_equal(gzclose(g), Z_OK);
	buf[n] = 0;
	if (len) {
		*len = n;
	}
	return buf;
}

/*
 * Removes the files in the folder dir (a scratch folder made by mkdtemp;
 * it holds no folders), then dir itself. Quiet about what is not there.
 */
static inline void tu_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];

	if (d) {
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				snprintf(path, sizeof(path), "%s/%s", dir,
					 e->d_name);
				unlink(path);
			}
		}
		closedir(d);
	}
	rmdir(dir);
}

/*
 * TU_COLL_CONFIG(cfg, path): the struct coll_config cfg zeroed, then the
 * settings of a suite that starts the collector: the trace to path, rings
 * of 1024 records, a drain pass every 10 ms, no rank. A macro, so that
 * suites that do not include the collector's header can include this one.
 */
#define TU_COLL_CONFIG(cfg, path)                                              \
	do {                                                                   \
		memset(&(cfg), 0, sizeof(cfg));                                \
		snprintf((cfg).output, sizeof((cfg).output), "%s", (path));    \
		(cfg).ring_records = 1024;                                     \
		(cfg).drain_period_ms = 10;                                    \
		(cfg).rank = -1;                                               \
	} while (0)

#endif
