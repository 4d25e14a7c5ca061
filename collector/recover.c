/*
 * recover.c - the trace and the tables rebuilt from the journal of a
 * process that died before it could write them (mxprof recover).
 *
 * A process that ends without its final dump (SIGSEGV, SIGABRT, SIGKILL,
 * an OOM kill, _exit) leaves <trace>.journal, complete up to its last drain
 * pass, and nothing else. Recovery turns it into the two files a dump
 * writes, with the code a dump uses: the writers' table (writer.c) for
 * the trace and, from agg_add_rec()'s aggregates, for the tables.
 *
 * The journal is read twice. The first pass, recover_open(), checks every
 * entry and aggregates the records; the second is the trace writer's own.
 * The check comes first because the writer trusts its input: a string id
 * far past the ones defined would make it allocate a table that large, and
 * a record that names an undefined string would lose its name. A journal
 * that fails the check is refused whole: a damaged file gives no trace
 * rather than a wrong one. What is not in the journal cannot be recovered:
 * GPU activity (kept in memory), the rank and the host; the dropped-record
 * count is the one of the last dump, 0 if there was none.
 *
 * The mxprof command links it from libmxprof.a; inside a profiled program
 * only an image exec'ed in the same process calls recover_open(), to start
 * its tables from the records of the images before it (drain.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "files.h"

/* The first pass's state. */
struct check {
	struct recovery *r;
	const struct journal_header *hdr;
	uint32_t *ids; /* journal string id -> this process's id */
	uint32_t nids; /* ids defined: 1 .. nids - 1              */
	uint32_t cap_ids;
	int *tids; /* threads seen with records */
	size_t ntids, cap_tids;
	uint64_t torn_at;
	int torn;
	int err; /* first problem, negative errno; r->why says what */
};

/* Notes the first damaged entry: fmt says what, with one number. */
static void bad(struct check *c, const char *fmt, unsigned v)
{
	if (c->err == 0) {
		c->err = -EBADMSG;
		snprintf(c->r->why, sizeof(c->r->why), fmt, v);
	}
}

static void no_memory(struct check *c)
{
	if (c->err == 0) {
		c->err = -ENOMEM;
	}
}

static void on_str(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct check *c = ctx;

	if (c->err) {
		return;
	}
	/* The writer defines ids in order from 1; a gap means damage, and
	 * it bounds the table below by the file's size. */
	if (id == 0 || id > c->nids) {
		bad(c, "corrupt: string id %u out of order", id);
		return;
	}
	if (id == c->nids) {
		if (c->nids == c->cap_ids) {
			uint32_t n = c->cap_ids * 2;
			uint32_t *ni = realloc(c->ids, n * sizeof(*ni));
			if (!ni) {
				no_memory(c);
				return;
			}
			c->ids = ni;
			c->cap_ids = n;
		}
		c->nids++;
	}
	char *copy = strndup(s, len);
	uint32_t local = copy ? strtab_intern(copy) : 0;
	if (!copy || (!local && copy[0])) {
		no_memory(c);
	}
	free(copy);
	c->ids[id] = local;
}

static void on_thread(void *ctx, int tid, const char *name, size_t len)
{
	struct check *c = ctx;
	struct recovery *r = c->r;

	/* The main thread's name is the process's (/proc/PID/comm). */
	if (tid == (int)c->hdr->pid) {
		if (len >= sizeof(r->process_name)) {
			len = sizeof(r->process_name) - 1;
		}
		memcpy(r->process_name, name, len);
		r->process_name[len] = 0;
	}
}

static void note_tid(struct check *c, int tid)
{
	for (size_t i = 0; i < c->ntids; i++) {
		if (c->tids[i] == tid) {
			return;
		}
	}
	if (c->ntids == c->cap_tids) {
		size_t n = c->cap_tids ? c->cap_tids * 2 : 16;
		int *nt = realloc(c->tids, n * sizeof(*nt));
		if (!nt) {
			no_memory(c);
			return;
		}
		c->tids = nt;
		c->cap_tids = n;
	}
	c->tids[c->ntids++] = tid;
}

static void on_recs(void *ctx, int tid, const struct coll_rec *recs, size_t n)
{
	struct check *c = ctx;

	if (c->err) {
		return;
	}
	note_tid(c, tid);
	for (size_t i = 0; i < n && !c->err; i++) {
		struct coll_rec rec = recs[i];
		if (rec.kind == COLL_STACK) {
			/* Its stack table died with the process. */
			continue;
		}
		if (rec.kind < COLL_SPAN || rec.kind > COLL_FRAME) {
			bad(c, "corrupt: a record of unknown kind %u",
			    rec.kind);
			return;
		}
		if (rec.name >= c->nids || rec.group >= c->nids) {
			bad(c,
			    "corrupt: a record names string id %u before it "
			    "is defined",
			    rec.name >= c->nids ? rec.name : rec.group);
			return;
		}
		rec.name = c->ids[rec.name];
		rec.group = c->ids[rec.group];
		if (agg_add_rec_on(c->r->agg, (uint32_t)tid, &rec) < 0) {
			no_memory(c);
			return;
		}
		c->r->records++;
	}
}

static void on_stats(void *ctx, uint64_t dropped, uint64_t truncated,
		     uint64_t cause)
{
	struct check *c = ctx;

	/* Each dump appends one; the last is the latest. An entry that does
	 * not name the cause comes from before the disk's share. */
	c->r->dropped = dropped;
	c->r->capped = !truncated		    ? 0
		       : cause == RECOVER_CUT_SHARE ? RECOVER_CUT_SHARE
						    : RECOVER_CUT_CAP;
}

static void on_bad(void *ctx, uint64_t offset)
{
	struct check *c = ctx;

	if (c->err == 0) {
		c->err = -EBADMSG;
		snprintf(c->r->why, sizeof(c->r->why),
			 "corrupt: the records entry at byte %llu cannot be "
			 "decoded",
			 (unsigned long long)offset);
	}
}

static void on_torn(void *ctx, uint64_t offset)
{
	struct check *c = ctx;

	c->torn = 1;
	c->torn_at = offset;
}

/*
 * Tells a file that is too short for a journal header from one that is not
 * a journal at all, for the message. Returns -EINVAL; sets r->why.
 */
static int not_a_journal(struct recovery *r, const char *path, off_t size)
{
	static const char magic[8] = "MXPJRNL1";
	char head[8];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0) {
		n = pread(fd, head, sizeof(head), 0);
		close(fd);
	}
	if (n > 0 && memcmp(head, magic, (size_t)n) == 0 &&
	    size < (off_t)sizeof(struct journal_header)) {
		snprintf(r->why, sizeof(r->why),
			 "truncated inside the journal header (%lld of %zu "
			 "bytes)",
			 (long long)size, sizeof(struct journal_header));
	} else {
		snprintf(r->why, sizeof(r->why), "not an mxprof journal");
	}
	return -EINVAL;
}

/*
 * Reads and checks the journal at path, and aggregates its records, into
 * r (which it initialises). Returns 0, or a negative errno with r->why set
 * when the file itself is at fault:
 *   -EINVAL   not a regular file, not a journal, or cut inside its header;
 *   -ENODATA  empty, or no complete record;
 *   -EBADMSG  an entry is damaged (r->why says which);
 * and another negative errno (r->why empty) when the file cannot be read.
 * Call recover_close() in every case.
 */
int recover_open(struct recovery *r, const char *path)
{
	static const struct journal_ops ops = {.str = on_str,
					       .thread = on_thread,
					       .recs = on_recs,
					       .stats = on_stats,
					       .torn = on_torn,
					       .bad = on_bad};
	struct journal_header hdr;
	struct check c = {.r = r, .hdr = &hdr, .cap_ids = 256};
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&hdr, 0, sizeof(hdr));
	if (snprintf(r->journal, sizeof(r->journal), "%s", path) >=
	    (int)sizeof(r->journal)) {
		return -ENAMETOOLONG;
	}
	/* stat, not open: opening a FIFO would wait for a writer. */
	if (stat(path, &st) < 0) {
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(r->why, sizeof(r->why), "not a regular file");
		return -EINVAL;
	}
	if (st.st_size == 0) {
		snprintf(r->why, sizeof(r->why), "empty file, not a journal");
		return -ENODATA;
	}
	r->agg = agg_create();
	c.ids = calloc(c.cap_ids, sizeof(*c.ids));
	if (!r->agg || !c.ids) {
		rc = -ENOMEM;
		goto out;
	}
	c.nids = 1; /* id 0 is the empty name */
	rc = journal_read(path, &ops, &c, &hdr);
	if (rc == -EINVAL) {
		rc = not_a_journal(r, path, st.st_size);
		goto out;
	}
	if (rc < 0) {
		goto out;
	}
	if (c.err) {
		rc = c.err;
		goto out;
	}
	if (hdr.version < 1 || hdr.version > 3) {
		snprintf(r->why, sizeof(r->why),
			 "journal version %u; this mxprof reads versions 1 "
			 "to 3",
			 hdr.version);
		rc = -EBADMSG;
		goto out;
	}
	r->pid = (int)hdr.pid;
	r->base_utc_ns = hdr.base_utc_ns;
	r->threads = c.ntids;
	if (c.torn && stat(path, &st) == 0 &&
	    (uint64_t)st.st_size > c.torn_at) {
		r->torn_bytes = (uint64_t)st.st_size - c.torn_at;
	}
	if (r->records == 0) {
		snprintf(r->why, sizeof(r->why),
			 "holds no complete record, nothing to recover");
		rc = -ENODATA;
	}
out:
	if (rc < 0 && rc != -EINVAL && rc != -ENODATA && rc != -EBADMSG) {
		r->why[0] = 0;
	}
	free(c.ids);
	free(c.tids);
	return rc;
}

/*
 * Writes the trace of the journal recover_open() checked to path (gzip
 * when it ends in ".gz"), replacing it atomically. The trace has what the
 * journal has: no rank, no host, and "unknown" as its clock. Returns 0 or
 * a negative errno; on error the previous file at path is left as it was.
 */
int recover_write_trace(struct recovery *r, const char *path)
{
	struct writer_meta m = {.pid = r->pid,
				.rank = -1,
				.process_name = r->process_name[0]
							? r->process_name
							: "unknown",
				.host = "",
				.base_utc_ns = r->base_utc_ns,
				.dropped = r->dropped,
				.truncated = r->capped != 0,
				.clock = "unknown",
				.legacy_cats = r->legacy_cats};

	return writers_trace(r->journal, path, &m);
}

/*
 * Writes the tables of the records recover_open() aggregated to path,
 * replacing it atomically, exactly as a dump writes X.stats.txt. Returns 0
 * or a negative errno.
 */
int recover_write_tables(struct recovery *r, const char *path)
{
	return writers_tables(r->agg, r->dropped, NULL, path);
}

/* Frees what recover_open() allocated. Accepts a recovery that failed. */
void recover_close(struct recovery *r)
{
	agg_destroy(r->agg);
	r->agg = NULL;
}
