/*
 * out_fd.c - the one loop that writes a buffer to a descriptor whole.
 *
 * Every file writer of the collector ends here: out.c (a file written by
 * the formatting thread), out_pipe.c (the same file written by its worker
 * threads) and journal.c. It is a file of its own so that out.c and
 * out_pipe.c, which call each other's parts otherwise (out.c hands its
 * buffers to the pipe), both build on it rather than on each other.
 * It also opens, safely, an existing file that another user could have
 * replaced (the journal, reopened or read), and keeps mxprof's
 * descriptors out of the program's range (RLIMIT_NOFILE's soft limit).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* See internal.h. */
int out_fd_write(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int limit_lift(struct rlimit *old, rlim_t extra);

/* See internal.h. */
int out_fd_open_existing(const char *path, int flags, struct stat *st)
{
	int fd = out_fd_open_beyond(
		path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);

	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0) {
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	return fd;
}

/*
 * Lifts the soft RLIMIT_NOFILE by extra (within the hard limit) and
 * returns the old limit in *old, or returns -1 when it cannot.
 */
static int limit_lift(struct rlimit *old, rlim_t extra)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, old) != 0 ||
	    old->rlim_cur == RLIM_INFINITY || old->rlim_cur >= old->rlim_max) {
		return -1;
	}
	rl = *old;
	rl.rlim_cur = old->rlim_max - old->rlim_cur < extra
			      ? old->rlim_max
			      : old->rlim_cur + extra;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* See internal.h. */
int out_fd_above(int fd, int min)
{
	struct rlimit old;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, min);

	if (hi < 0 && errno == EINVAL && limit_lift(&old, 16) == 0) {
		/* The program may use every number below its soft limit:
		 * take one above it, briefly lifting the limit. */
		hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)old.rlim_cur);
		setrlimit(RLIMIT_NOFILE, &old);
	}
	if (hi < 0) {
		return fd;
	}
	close(fd);
	return hi;
}

/* See internal.h. */
int out_fd_open_beyond(const char *path, int flags, int mode)
{
	struct rlimit old;
	int fd = open(path, flags, mode);

	if (fd < 0 && errno == EMFILE && limit_lift(&old, 16) == 0) {
		fd = open(path, flags, mode);
		int e = errno;

		setrlimit(RLIMIT_NOFILE, &old);
		errno = e;
	}
	return fd;
}
