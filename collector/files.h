/*
 * files.h - the readers' face: the aggregates and their tables (agg.c,
 * nest.c, table.c), the recovery of a journal (recover.c), the creation
 * of files and the JSON escaper (out.c). The mxprof command, the drain
 * and the tests use it. It pulls in no file format: output.h, the file
 * being written, is the one face with ISA-L's header.
 */
#ifndef MXPROF_FILES_H
#define MXPROF_FILES_H

#include "source.h"

/* ---- aggregation and tables (also used by the mxprof command) --------- */

/* A growing string (table.c). On allocation failure err is set and later
 * appends do nothing. */
struct sbuf {
	char *p;
	size_t n, cap;
	int err;
};
void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Returns a new, empty aggregate set, or NULL (ENOMEM). */
struct agg *agg_create(void);

/* Frees a. Accepts NULL. */
void agg_destroy(struct agg *a);

/* Forgets every row. This function can't fail. */
void agg_reset(struct agg *a);

/* nest.c: self time. A thread's slices, given in the order they ended,
 * each get their time minus that of the slices nested inside them (for
 * PyTorch's slices, only the PyTorch slices: nest.c says why): nest_self()
 * returns that of slice [t0, t0 + dur) (ns) of thread (any key naming one
 * thread), the tables' Self Time, for a slice of no PyTorch section.
 * nest_create() returns NULL without memory; nest_destroy() accepts
 * NULL. */
struct nest;
struct nest *nest_create(void);
void nest_reset(struct nest *ns);
void nest_destroy(struct nest *ns);
int64_t nest_self(struct nest *ns, uint64_t thread, uint64_t t0, uint64_t dur);

/* What a slice is: its row (section and name, string ids) and its call
 * site's row (0, 0: none). */
struct nest_slice {
	uint32_t group, name, site_group, site_name;
};

/* A child folded into its parent (PyTorch's rule, nest.c): the sample to
 * take back out of its row (and its call site's). name 0: none. */
struct nest_fold {
	uint32_t group, name, site_group, site_name;
	int64_t dur, self;
};

/* nest_self() for slice s, whose section may be PyTorch's; *f (when f is
 * not NULL) is the child folded into it, whose sample the caller takes
 * back after adding this slice's. This function can't fail (without
 * memory, a slice keeps all its time). */
int64_t nest_self_of(struct nest *ns, uint64_t thread, uint64_t t0,
		     uint64_t dur, const struct nest_slice *s,
		     struct nest_fold *f);

/* nest_self_of() for the spans and frames of n drained records of one
 * thread (t1 their duration), in the order they ended: self[i] is record
 * i's self time, 0 for records of other kinds, and f[i] its fold. */
void nest_selves(struct nest *ns, uint64_t thread, const struct coll_rec *rec,
		 size_t n, int64_t *self, struct nest_fold *f);

/* Takes fold f's sample (nest_self_of()) back out of its rows in a: the
 * row of f's section and name, and its call site's row when f has one.
 * For a caller that adds a slice's rows itself (mxprof report's second
 * pass); agg_add_site() does it on its own. This function can't fail. */
void agg_take_back(struct agg *a, const struct nest_fold *f);

/* Returns x + y, or INT64_MAX or INT64_MIN when the sum is out of range.
 * This function can't fail; it is safe anywhere. */
int64_t agg_sat_add(int64_t x, int64_t y);
/* Parses "table"/"json"/"csv" and "total"/"avg"/"min"/"max"/"count"/"self" into
 * o->format and o->sort (NULL keeps the default). Returns 0 or -EINVAL. */
int table_parse_opts(struct table_opts *o, const char *format,
		     const char *sort_by);

/* Says that the counters of section group (a string-table id) are bytes,
 * which the tables show as kB with "Use" columns, as MXNet shows device
 * memory. The source that records such counters calls it (the GPU source,
 * and the mxprof command for traces it reads). At most 8 groups; later
 * ones are ignored. Call it from the thread that writes the tables (the
 * drain thread, or the command's). */
void table_bytes_group(uint32_t group);

/* Returns non-zero when name is the name of a group table_bytes_group()
 * declared: its counter section keeps the bare name (MXNet's "Device
 * Storage"), where other counter sections add " (counters)". Same thread
 * as table_bytes_group(). */
int table_bytes_named(const char *name);

/* Returns the tables of a as a malloc'ed string in the layout of MXNet's
 * dumps(), or NULL (ENOMEM). */
char *table_format(const struct agg *a, const struct table_opts *o);

/* ---- recovery (used by the mxprof command) ---------------------------- */

/*
 * A process that dies without its final dump leaves only its journal,
 * <trace>.journal. recover.c rebuilds the trace and the tables from it with
 * the writers a dump uses. Nothing in a profiled program calls these.
 */
/* What cut a recovered timeline. A journal written before the cause was
 * recorded says RECOVER_CUT_CAP. */
enum recover_cut {
	RECOVER_CUT_CAP = 1,   /* MXPROF_MAX_TRACE_MB */
	RECOVER_CUT_SHARE = 2, /* the journal's share of its disk */
};
struct recovery {
	int pid;	     /* the process that wrote the journal         */
	uint64_t records;    /* complete records, the events recovered     */
	uint64_t threads;    /* threads with records                       */
	uint64_t torn_bytes; /* a torn last entry and what follows, skipped */
	uint64_t dropped;    /* records dropped, as of the last dump       */
	int capped;	     /* 0, or what cut the timeline: RECOVER_CUT_* */
	char why[160];	     /* after an error: what is wrong with the file */
	/* Set by the caller: the names of categories 2 and up for a journal
	 * of version 1, which does not carry them (NULL-terminated). */
	const char *const *legacy_cats;
	/* Owned by recover.c. */
	struct agg *agg;
	int64_t base_utc_ns;
	char process_name[64];
	char journal[4096];
};

/*
 * Reads and checks the journal at path, and aggregates its records, into
 * r. Returns 0, or a negative errno with r->why set when the file is at
 * fault: -EINVAL not a regular file, not a journal, or cut inside its
 * header; -ENODATA empty, or no complete record; -EBADMSG a damaged entry.
 * Any other negative errno (r->why empty) means the file could not be read.
 * Call recover_close() in every case.
 */
int recover_open(struct recovery *r, const char *path);

/* Writes the trace of the journal r checked to path (gzip when it ends in
 * ".gz"), replacing it atomically. Returns 0 or a negative errno. */
int recover_write_trace(struct recovery *r, const char *path);

/* Writes r's tables to path as a dump writes X.stats.txt, replacing it
 * atomically. Returns 0 or a negative errno. */
int recover_write_tables(struct recovery *r, const char *path);

/* Frees what recover_open() allocated. This function can't fail. */
void recover_close(struct recovery *r);

/* ---- files (out.c; also used by the mxprof command) ------------------- */

/*
 * Creates the file path exclusively (O_EXCL) and never through a symbolic
 * link (O_NOFOLLOW), with the given mode: whatever stands at that name is
 * removed first. Every file mxprof creates is created this way. Returns
 * the descriptor (close-on-exec) or a negative errno.
 */
int out_create(const char *path, int mode);

/*
 * Writes text (len bytes) as the whole of path: to a temporary name
 * beside it (out_create, mode 0644), then renamed into place, as out_open
 * and out_commit do, without their buffers (a status file: no 1.6 MB
 * allocation). Returns 0 or a negative errno (the temporary file is then
 * removed).
 */
int out_write_small(const char *path, const char *text, size_t len);

/*
 * Lets the calling thread's outputs be written by other threads
 * (out_pipe.c) once they pass one buffer: up to 4 compressing a gzip file
 * (one fewer than the CPUs this process may use), one writing a plain
 * file, while the caller formats. Off by default: a thread that may write
 * from a signal handler, or in a program's thread, leaves it off; the
 * drain thread and the mxprof command turn it on. The file is the same
 * either way (a gzip file is one member). This function can't fail.
 */
void out_pipe_allow(int on);

/*
 * Escapes s[0..n) for the body of a JSON string (no quotes) into
 * dst[0..cap), without a terminator; the one escaper of the library and the
 * mxprof command. '"' and '\' get a backslash, control characters (NUL
 * included) become \u00XX, valid UTF-8 is copied as it is, and each byte
 * that does not start a valid UTF-8 sequence (a stray continuation byte, a
 * byte that never starts one, an overlong form, a surrogate, past
 * U+10FFFF, a sequence cut by n) becomes \ufffd, so the output is valid
 * JSON in valid UTF-8 whatever s holds. It stops before the first
 * character whose escape does not fit in dst, so it never ends inside an
 * escape or a UTF-8 sequence. Returns the bytes written; *used, when used
 * is not NULL, gets the bytes of s consumed (n when all fit). A byte of s
 * takes at most 6 bytes of dst: cap >= 6 * n always takes all of s, and
 * cap >= 6 always takes at least one character. This function can't fail;
 * it allocates nothing and is safe anywhere.
 */
size_t out_json_escape(char *dst, size_t cap, const char *s, size_t n,
		       size_t *used);

/* Returns the length of the valid UTF-8 sequence at s[0..n) (1 for an
 * ASCII byte), or 0 when s does not start with one (n is 0, a stray or
 * invalid byte, an overlong form, a surrogate, past U+10FFFF, or cut at
 * n). This function can't fail; it is safe anywhere. */
size_t out_utf8_len(const unsigned char *s, size_t n);

#endif /* MXPROF_FILES_H */
