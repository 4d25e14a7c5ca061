/*
 * out_fd.c - the one loop that writes a buffer to a descriptor whole.
 *
 * Every file writer of the collector ends here: out.c (a file written by
 * the formatting thread), out_pipe.c (the same file written by its worker
 * threads) and journal.c. It is a file of its own so that out.c and
 * out_pipe.c, which call each other's parts otherwise (out.c hands its
 * buffers to the pipe), both build on it rather than on each other.
 * It also opens, safely, an existing file that another user could have
 * replaced (the journal, reopened or read).
 */
#include <errno.h>
#include <fcntl.h>
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

/* See internal.h. */
int out_fd_open_existing(const char *path, int flags, struct stat *st)
{
	int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

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
