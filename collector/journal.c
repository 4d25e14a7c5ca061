/*
 * journal.c - the binary record of a run, appended as records are drained.
 *
 * Why a journal: the timeline of a long run does not fit in memory, and a
 * process can die at any moment. The drain thread therefore appends every
 * drained record (already converted to nanoseconds), every new name and
 * every thread name to this file, and writes it out at least once per drain
 * period. A dump turns the journal into the Chrome trace; after a crash or a
 * SIGKILL the journal is still on disk, complete up to the last drain, and
 * recover.c (mxprof recover) rebuilds the trace and the tables from it.
 *
 * Layout: a struct journal_header, then entries. Each entry is a u32 type, a
 * u32 payload length, and the payload padded to 8 bytes. Names are written
 * before the first entry that uses them, so a reader can resolve ids in one
 * pass, and a torn last entry (the writer died in the middle) is ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "files.h"

#define EVENT_JSON_BYTES JOURNAL_EVENT_BYTES

/*
 * The program's disk comes first: the timeline of a run may take an
 * eighth of the space free on the journal's disk when the journal is
 * created (in estimated trace bytes; the journal, the trace and its
 * temporary copy together stay well under half of it). Past that, the
 * timeline stops, once said; the tables go on, and there is room left
 * to write them and the trace, and then to remove the journal.
 */
#define DISK_SHARE 8

/* Journal descriptors start here, above the numbers programs use. */
#define JOURNAL_FD_MIN 512

static int my_tid(void)
{
	return (int)syscall(SYS_gettid);
}

/* Is j->fd a descriptor of this thread's table (whatever file it is)? */
static int fd_here(const struct journal *j)
{
	return j->fd >= 0 && (j->fd_tid == 0 || j->fd_tid == my_tid());
}

/*
 * Places fd, the journal just opened, out of the program's way and
 * returns the descriptor to keep: in the drain thread's own table
 * (out_fd.c) any number will do; in the program's table (no drain thread
 * for a while, or a sandbox that refuses unshare) it goes to
 * JOURNAL_FD_MIN or above, or above the program's soft limit.
 */
static int fd_place(struct journal *j, int fd)
{
	if (out_fd_own_table()) {
		j->fd_tid = my_tid();
		return fd;
	}
	j->fd_tid = 0;
	return out_fd_above(fd, JOURNAL_FD_MIN);
}

/*
 * Is j->fd still the journal? A program that closes the descriptors it
 * did not open (daemons, closefrom) may have closed it, and the number may
 * now be one of the program's own files; a descriptor of the drain
 * thread's own table is not valid on another thread. Then the journal is
 * opened again (appending), and the old number is left alone. Returns 0,
 * or a negative errno when the journal cannot be reached.
 */
static int journal_fd_check(struct journal *j)
{
	struct stat st;

	if (fd_here(j) && fstat(j->fd, &st) == 0 && st.st_dev == j->dev &&
	    st.st_ino == j->ino) {
		return 0;
	}
	int fd = out_fd_open_existing(j->path, O_WRONLY | O_APPEND | O_NOFOLLOW,
				      &st);

	if (fd < 0) {
		return -ESTALE; /* removed or replaced meanwhile */
	}
	if (st.st_dev != j->dev || st.st_ino != j->ino) {
		close(fd);
		return -ESTALE; /* removed or replaced meanwhile */
	}
	j->fd = fd_place(j, fd);
	return 0;
}

/* Records the journal's first error (a negative errno) and says so once:
 * nothing more is written. */
static void journal_fail(struct journal *j, int err)
{
	j->err = err;
	if (err == -ESTALE) {
		/* The program closed it and something else, or nothing, is
		 * at its name: what it held cannot be reached. */
		fprintf(stderr,
			"mxprof: %s was replaced or removed after the program "
			"closed it; no timeline will be written, the tables "
			"will\n",
			j->path);
		return;
	}
	fprintf(stderr,
		"mxprof: cannot write %s: %s; the timeline stops here, the "
		"tables go on\n",
		j->path, strerror(-err));
}

static void raw_write(struct journal *j, const void *p, size_t n)
{
	if (j->err == 0 && n > 0) {
		int rc = journal_fd_check(j);
		if (rc) {
			journal_fail(j, rc);
			return;
		}
	}
	if (j->err == 0) {
		int rc = out_fd_write(j->fd, p, n);
		if (rc) {
			journal_fail(j, rc);
		}
	}
}

/*
 * Writes out the buffered entries. Returns 0 or the journal's first error
 * as a negative errno (after which nothing more is written).
 */
int journal_flush(struct journal *j)
{
	if (j->fd >= 0 && j->n > 0) {
		raw_write(j, j->buf, j->n);
	}
	j->n = 0;
	return j->err;
}

static void put(struct journal *j, uint32_t type, const void *a, size_t alen,
		const void *b, size_t blen)
{
	uint32_t len = (uint32_t)(alen + blen);
	size_t padded = (len + 7u) & ~(size_t)7u;
	size_t need = 8 + padded;

	if (j->fd < 0 || j->err) {
		return;
	}
	if (j->n + need > sizeof(j->buf)) {
		journal_flush(j);
	}
	if (need > sizeof(j->buf)) {
		uint32_t hdr[2] = {type, len};
		static const char zeros[8];
		raw_write(j, hdr, 8);
		raw_write(j, a, alen);
		raw_write(j, b, blen);
		raw_write(j, zeros, padded - len);
		return;
	}
	unsigned char *p = j->buf + j->n;
	memcpy(p, &type, 4);
	memcpy(p + 4, &len, 4);
	memcpy(p + 8, a, alen);
	if (blen) {
		memcpy(p + 8 + alen, b, blen);
	}
	memset(p + 8 + len, 0, padded - len);
	j->n += need;
}

/*
 * Whose is the journal at path? Returns the pid in its header when it is
 * a journal of a process other than pid that still runs, else 0 (no
 * journal, a stale one, or not a journal: it may be replaced).
 */
static int journal_live_owner(const char *path, int pid)
{
	struct journal_header h;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t got;

	if (fd < 0) {
		return 0;
	}
	got = read(fd, &h, sizeof(h));
	close(fd);
	if (got != (ssize_t)sizeof(h) || memcmp(h.magic, "MXPJRNL1", 8) != 0 ||
	    h.pid == 0 || h.pid > INT32_MAX || (int)h.pid == pid) {
		return 0;
	}
	if (kill((pid_t)h.pid, 0) == 0 || errno == EPERM) {
		return (int)h.pid;
	}
	return 0;
}

/*
 * Creates the journal at path and writes its header. It is written under
 * a temporary name and linked into place, so a journal that exists always
 * holds its header with its writer's pid, and two processes cannot both
 * take the name. A journal of another running process is never touched
 * (-EBUSY, *owner its pid); anything else at path (a dead process's
 * journal, a link) is removed first. Returns 0 or a negative errno; on
 * error j->fd is -1 and every later call is a no-op.
 */
int journal_open_owned(struct journal *j, const char *path, int pid, int *owner)
{
	struct journal_header h;
	char tmp[sizeof(j->path) + 32];
	struct stat st;

	*owner = 0;
	j->n = 0;
	j->err = 0;
	j->truncated = 0;
	j->str_done = 1;
	j->cat_done = 0;
	j->bytes = 0;
	j->disk_cap = 0;
	j->disk_said = 0;
	j->fd = -1;
	snprintf(j->path, sizeof(j->path), "%s", path);
	if (paths_temp(path, pid, tmp, sizeof(tmp)) < 0) {
		return j->err = -ENAMETOOLONG;
	}
	j->fd = out_create(tmp, 0600);
	if (j->fd < 0) {
		j->err = j->fd;
		j->fd = -1;
		return j->err;
	}
	j->fd = fd_place(j, j->fd);
	if (fstat(j->fd, &st) != 0) {
		j->err = -errno;
		goto fail;
	}
	j->dev = st.st_dev;
	j->ino = st.st_ino;
	struct statvfs vfs;
	if (fstatvfs(j->fd, &vfs) == 0 && vfs.f_blocks > 0) {
		j->disk_cap =
			(uint64_t)vfs.f_bavail * vfs.f_frsize / DISK_SHARE;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, "MXPJRNL1", 8);
	h.version = 3;
	h.pid = (uint32_t)pid;
	h.base_utc_ns = clock_base_utc_ns();
	h.reserved[0] = clock_base_mono_ns();
	raw_write(j, &h, sizeof(h));
	for (int tries = 0; j->err == 0; tries++) {
		if (link(tmp, path) == 0) {
			break;
		}
		if (errno != EEXIST || tries == 3) {
			j->err = -errno;
		} else if ((*owner = journal_live_owner(path, pid)) != 0) {
			j->err = -EBUSY;
		} else if (unlink(path) < 0 && errno != ENOENT) {
			j->err = -errno;
		}
	}
	if (j->err) {
		goto fail;
	}
	unlink(tmp);
	return 0;
fail:
	close(j->fd);
	j->fd = -1;
	unlink(tmp);
	return j->err;
}

int journal_open(struct journal *j, const char *path, int pid)
{
	int owner;

	return journal_open_owned(j, path, pid, &owner);
}

/*
 * Opens the journal at path that an earlier image of this process (pid)
 * wrote before it called exec, to append to it. Returns 0, or a negative
 * errno (-ESTALE: not a journal of pid) with j->fd -1.
 */
int journal_continue(struct journal *j, const char *path, int pid)
{
	struct journal_header h;
	struct stat st;

	j->n = 0;
	j->err = 0;
	j->truncated = 0;
	j->str_done = 1;
	j->cat_done = 0;
	snprintf(j->path, sizeof(j->path), "%s", path);
	j->fd = out_fd_open_existing(path, O_RDWR | O_APPEND | O_NOFOLLOW, &st);
	if (j->fd < 0) {
		j->err = j->fd == -ENOENT ? -ENOENT : -ESTALE;
		j->fd = -1;
		return j->err;
	}
	if (pread(j->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, "MXPJRNL1", 8) != 0 || h.pid != (uint32_t)pid) {
		close(j->fd);
		j->fd = -1;
		j->err = -ESTALE;
		return j->err;
	}
	j->dev = st.st_dev;
	j->ino = st.st_ino;
	j->fd = fd_place(j, j->fd);
	return 0;
}

/* Reads the trace origin an earlier image wrote in the journal at path:
 * CLOCK_MONOTONIC and UTC ns of its ts 0. Returns 0 or a negative errno
 * (-ESTALE: not a journal of pid, or from before the origin was kept). */
int journal_origin(const char *path, int pid, uint64_t *mono, int64_t *utc)
{
	struct journal_header h;
	struct stat st;
	int fd = out_fd_open_existing(path, O_RDONLY | O_NOFOLLOW, &st);
	int rc = -ESTALE;

	if (fd < 0) {
		return fd == -ENOENT ? fd : -ESTALE;
	}
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    memcmp(h.magic, "MXPJRNL1", 8) == 0 && h.pid == (uint32_t)pid &&
	    h.reserved[0] != 0) {
		*mono = h.reserved[0];
		*utc = h.base_utc_ns;
		rc = 0;
	}
	close(fd);
	return rc;
}

/*
 * Grows the descriptor table past JOURNAL_FD_MIN now. Growing it later,
 * once the process has threads, makes the kernel wait for an RCU grace
 * period (tens of milliseconds) inside fcntl(): the first drain pass
 * would stall there with the program's first records in memory. Call it
 * while the process has one thread (the library's constructor). This
 * function can't fail; without a descriptor to spare it does nothing.
 */
void journal_reserve_fds(void)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		return;
	}
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, JOURNAL_FD_MIN);

	if (hi >= 0) {
		close(hi);
	}
	close(fd);
}

/* Writes the names and categories registered since the last call, so
 * that every record that follows finds its names before it. */
static void sync_strings(struct journal *j)
{
	uint32_t n = strtab_count();
	uint32_t c = cat_count();

	for (; j->str_done < n; j->str_done++) {
		const char *s = strtab_get(j->str_done);
		put(j, J_STR, &j->str_done, 4, s, strlen(s));
	}
	for (; j->cat_done < c; j->cat_done++) {
		const char *s = cat_name(j->cat_done);
		put(j, J_CAT, &j->cat_done, 4, s, strlen(s));
	}
}

/* Appends n converted records of thread tid, in batches of jpack.c's
 * form. Past the cap, counts them as truncated instead. */
void journal_recs(struct journal *j, int tid, const struct coll_rec *r,
		  size_t n)
{
	const size_t batch = JOURNAL_BATCH;

	if (j->max_bytes && j->bytes + n * EVENT_JSON_BYTES > j->max_bytes) {
		j->truncated = RECOVER_CUT_CAP;
		return;
	}
	if (j->disk_cap && j->bytes + n * EVENT_JSON_BYTES > j->disk_cap) {
		j->truncated = RECOVER_CUT_SHARE;
		if (!j->disk_said) {
			j->disk_said = 1;
			fprintf(stderr,
				"mxprof: %s has taken its share of the disk "
				"(%llu KiB of trace); the timeline stops here, "
				"the tables go on\n",
				j->path,
				(unsigned long long)(j->disk_cap >> 10));
		}
		return;
	}
	j->bytes += n * EVENT_JSON_BYTES;
	sync_strings(j);
	while (n > 0 && j->fd >= 0 && j->err == 0) {
		size_t k = n < batch ? n : batch;
		if (j->n + 16 + k * JPACK_REC_MAX > sizeof(j->buf)) {
			journal_flush(j);
		}
		/* The entry is built in place: its header, then the records,
		 * then the length once it is known. */
		unsigned char *p = j->buf + j->n;
		uint32_t head[4] = {J_PACK, 0, (uint32_t)tid, (uint32_t)k};
		size_t len = 8 + jpack_encode(r, k, p + 16);
		size_t padded = (len + 7u) & ~(size_t)7u;
		head[1] = (uint32_t)len;
		memcpy(p, head, 16);
		memset(p + 8 + len, 0, padded - len);
		j->n += 8 + padded;
		r += k;
		n -= k;
	}
}

/* Appends the name of thread tid (the last one written wins). */
void journal_thread(struct journal *j, int tid, const char *name)
{
	uint32_t t = (uint32_t)tid;

	put(j, J_THREAD, &t, 4, name, strlen(name));
}

/* Appends the drop count, whether the timeline was cut and what cut it,
 * as of now. Readers of the two-field entry read the first two. */
void journal_stats(struct journal *j, uint64_t dropped)
{
	uint64_t v[3] = {dropped, j->truncated != 0, (uint64_t)j->truncated};

	put(j, J_STATS, v, sizeof(v), NULL, 0);
}

/* Closes j->fd where it is this thread's and still the journal. */
static void fd_drop(struct journal *j)
{
	struct stat st;

	if (fd_here(j) && fstat(j->fd, &st) == 0 && st.st_dev == j->dev &&
	    st.st_ino == j->ino) {
		close(j->fd);
	}
	j->fd = -1;
}

/* Forgets the journal without writing what is buffered (a forked child's
 * copy of its parent's), closing its descriptor where it is this
 * thread's. */
void journal_forget(struct journal *j)
{
	if (j->fd >= 0) {
		fd_drop(j);
	}
	j->n = 0;
}

/* See internal.h. */
void journal_rehome(struct journal *j)
{
	if (j->fd >= 0 && j->fd_tid == 0 && out_fd_can_take()) {
		fd_drop(j);
		j->fd = 0; /* open, with no descriptor: the next write */
		j->fd_tid = -1;
	}
}

/* See internal.h. */
void journal_thread_ends(struct journal *j)
{
	if (j->fd >= 0 && j->fd_tid == my_tid()) {
		j->fd_tid = -1;
	}
}

/* Flushes and closes the journal, removing the file if asked (when the
 * name is still the journal's: not what another user put in its place). */
void journal_close(struct journal *j, int unlink_file)
{
	struct stat st;

	if (j->fd < 0) {
		return;
	}
	journal_flush(j);
	fd_drop(j);
	if (unlink_file && lstat(j->path, &st) == 0 && st.st_dev == j->dev &&
	    st.st_ino == j->ino) {
		unlink(j->path);
	}
}

/*
 * Reads the journal at path from the start, calling ops for every complete
 * entry in order. A torn entry at the end is ignored: ops->torn, when set,
 * learns its offset. An entry that claims more bytes than the file holds is
 * torn too, so that a damaged length never becomes an allocation. Returns
 * 0, -EINVAL if the file is not a journal, or another negative errno.
 */
int journal_read(const char *path, const struct journal_ops *ops, void *ctx,
		 struct journal_header *hdr)
{
	int rc = 0, torn = 0;
	size_t cap = 1 << 20, have = 0, off = 0;
	uint64_t pos = sizeof(*hdr); /* file offset of buf + off */
	unsigned char *buf = malloc(cap);
	struct coll_rec *recs = NULL; /* a J_PACK entry's, decoded */
	struct stat fst;
	int fd = out_fd_open_existing(path, O_RDONLY, &fst);

	if (!buf || fd < 0) {
		rc = !buf ? -ENOMEM : fd;
		goto out;
	}
	if (read(fd, hdr, sizeof(*hdr)) != (ssize_t)sizeof(*hdr) ||
	    memcmp(hdr->magic, "MXPJRNL1", 8) != 0) {
		rc = -EINVAL;
		goto out;
	}
	for (;;) {
		/* Refill: keep the unread tail, read more behind it. */
		memmove(buf, buf + off, have - off);
		have -= off;
		off = 0;
		ssize_t r = read(fd, buf + have, cap - have);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			rc = -errno;
			goto out;
		}
		have += (size_t)r;
		int progressed = 0;
		while (have - off >= 8) {
			uint32_t type, len;
			memcpy(&type, buf + off, 4);
			memcpy(&len, buf + off + 4, 4);
			size_t need = 8 + ((len + 7u) & ~(size_t)7u);
			if (need > cap) {
				struct stat st;
				if (fstat(fd, &st) == 0 &&
				    (uint64_t)st.st_size < pos + need) {
					torn = 1;
					break;
				}
				unsigned char *nb = realloc(buf, need);
				if (!nb) {
					rc = -ENOMEM;
					goto out;
				}
				buf = nb;
				cap = need;
			}
			if (have - off < need) {
				break;
			}
			const unsigned char *p = buf + off + 8;
			uint32_t u;
			switch (type) {
			case J_STR:
				memcpy(&u, p, 4);
				if (ops->str && len >= 4) {
					ops->str(ctx, u, (const char *)p + 4,
						 len - 4);
				}
				break;
			case J_CAT:
				memcpy(&u, p, 4);
				if (ops->cat && len >= 4) {
					ops->cat(ctx, u, (const char *)p + 4,
						 len - 4);
				}
				break;
			case J_THREAD:
				memcpy(&u, p, 4);
				if (ops->thread && len >= 4) {
					ops->thread(ctx, (int)u,
						    (const char *)p + 4,
						    len - 4);
				}
				break;
			case J_RECS: {
				uint32_t h[2];
				memcpy(h, p, 8);
				if (ops->recs &&
				    (size_t)h[1] * sizeof(struct coll_rec) +
						    8 ==
					    len) {
					ops->recs(ctx, (int)h[0],
						  (const struct coll_rec *)(p +
									    8),
						  h[1]);
				}
				break;
			}
			case J_PACK: {
				uint32_t h[2] = {0, 0};
				memcpy(h, p, len < 8 ? len : 8);
				if (!ops->recs) {
					break;
				}
				if (!recs && !(recs = malloc(JOURNAL_BATCH *
							     sizeof(*recs)))) {
					rc = -ENOMEM;
					goto out;
				}
				if (len >= 8 && h[1] <= JOURNAL_BATCH &&
				    jpack_decode(p + 8, len - 8, recs, h[1]) ==
					    0) {
					ops->recs(ctx, (int)h[0], recs, h[1]);
				} else if (ops->bad) {
					ops->bad(ctx, pos);
				}
				break;
			}
			case J_STATS: {
				uint64_t v[3] = {0, 0, 0};
				memcpy(v, p,
				       len < sizeof(v) ? (len < 16 ? len : 16)
						       : sizeof(v));
				if (ops->stats) {
					ops->stats(ctx, v[0], v[1], v[2]);
				}
				break;
			}
			default:
				break; /* unknown entries are skipped */
			}
			off += need;
			pos += need;
			progressed = 1;
		}
		if (torn || (r == 0 && !progressed)) {
			break;
		}
	}
	if (have > off && ops->torn) {
		ops->torn(ctx, pos);
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	free(recs);
	free(buf);
	return rc;
}
