/*
 * output.h - a file being written (struct out: out.c, out_pipe.c), with
 * ISA-L's deflate state inside it, whose header only this face includes:
 * the files that open, commit or allocate one (chrome.c, table.c,
 * dump.c, the mxprof command, the tests). Writing into one is source.h's
 * (out_str() and the rest); creating files and the escaper, files.h's.
 */
#ifndef MXPROF_OUTPUT_H
#define MXPROF_OUTPUT_H

#include <isa-l/igzip_lib.h>

#include "files.h"

/* ---- output files (out.c, out_pipe.c; also used by the mxprof command) - */

/*
 * A file being written: buffered, gzip-compressed when asked, and replaced
 * atomically. It is written to "<path>.tmp.<pid>" (paths_temp()) beside path
 * and renamed over path by out_commit() only when whole, so a reader never sees
 * half a file and a failed write leaves the previous file in place. Write
 * errors are kept, not returned, and come back from out_commit(). The
 * buffer is written (or compressed) whole, with one write(), when the next
 * bytes do not fit, or handed to other threads that write it while the
 * caller goes on in another (out_pipe_allow()). About 1.6 MiB: allocate it, do
 * not put it on a stack (the pages of what a plain file does not use are never
 * touched). Not for the hot path.
 */
#define OUT_BUF_BYTES (1u << 20)
struct out_pipe;
struct out {
	int fd;
	int gz;
	int err; /* first error, negative errno */
	struct isal_zstream zs;
	unsigned char *buf; /* OUT_BUF_BYTES: mem, or a chunk of pipe */
	size_t n;
	uint64_t flushed;      /* bytes taken from buf before compression */
	struct out_pipe *pipe; /* other threads write (out_pipe.c) */
	char path[4096];
	char tmp[4200];
	unsigned char mem[OUT_BUF_BYTES];
	unsigned char zbuf[1 << 18];
	unsigned char
		zlevel[ISAL_DEF_LVL1_DEFAULT]; /* the compressor's tables */
};

/*
 * Starts writing path: creates its temporary file (mode 0644, out_create). With
 * allow_gz non-zero, a path ending in ".gz" is gzip-compressed (level 1).
 * Returns 0, -ENAMETOOLONG (path or its temporary name too long), -ENOMEM
 * (zlib), or the errno of open() negated, with o->tmp naming the file that
 * could not be created. On error o needs no out_abort().
 */
int out_open(struct out *o, const char *path, int allow_gz);

/*
 * Flushes and closes the file and renames it over path. Returns 0, or the
 * first error of any write since out_open() (or of the close or rename) as
 * a negative errno; the temporary file is then removed and the previous
 * file at path is untouched. o is finished either way.
 */
int out_commit(struct out *o);

/* Closes and removes the temporary file; path is untouched. This function
 * can't fail. */
void out_abort(struct out *o);

#endif /* MXPROF_OUTPUT_H */
