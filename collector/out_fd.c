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
 * descriptors out of the program's range: in a descriptor table of the
 * drain thread's own (out_fd_take_table), else above RLIMIT_NOFILE's
 * soft limit where the hard one leaves room.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* This thread may take a table of its own (the drain thread); it has. */
static __thread int own_allowed, own_table;

/* See internal.h. */
void out_fd_may_own(void)
{
	own_allowed = 1;
}

/* See internal.h. */
int out_fd_own_table(void)
{
	return own_table;
}

/* See internal.h. */
int out_fd_can_take(void)
{
	return own_allowed && !own_table;
}

/* Closes every descriptor from lo up, in this thread's table. */
static void close_from(int lo)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0) == 0) {
		return;
	}
#endif
	struct rlimit rl;
	long hi = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
				  rl.rlim_cur != RLIM_INFINITY &&
				  rl.rlim_cur < 1u << 20
			  ? (long)rl.rlim_cur
			  : 1L << 20;

	for (long fd = lo; fd < hi; fd++) {
		close((int)fd);
	}
}

/* See internal.h. */
int out_fd_take_table(void)
{
	if (own_table) {
		return 0;
	}
	if (!own_allowed) {
		return -EPERM;
	}
	if (unshare(CLONE_FILES) != 0) {
		own_allowed = 0; /* refused here: not asked again */
		return -errno;
	}
	own_table = 1;
	/* The copy's references to the program's files go at once (a pipe
	 * the program closes must reach its end of file). 0 and 1 become
	 * /dev/null; 2 stays the program's stderr, for mxprof's lines, and
	 * is /dev/null where the program had none: no file of mxprof's
	 * may take the number stderr writes to. */
	close_from(3);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0) {
		return 0;
	}
	for (int fd = 0; fd < 2; fd++) {
		if (fd != null) {
			dup2(null, fd);
		}
	}
	if (null != 2 && fcntl(2, F_GETFD) < 0) {
		dup2(null, 2);
	}
	if (null > 2) {
		close(null);
	}
	return 0;
}

/* Our stderr is /dev/null because the program had none. */
static __thread int stderr_none;

/* A copy of the program's descriptor 2 (its table, the main thread's),
 * or -1. */
static int program_stderr(void)
{
	int fd = -1;
#ifdef SYS_pidfd_getfd
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	if (pfd >= 0) {
		fd = (int)syscall(SYS_pidfd_getfd, pfd, 2, 0);
		close(pfd);
	}
#endif
	if (fd < 0) {
		fd = open("/proc/self/fd/2",
			  O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0) {
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
			}
		}
	}
	return fd;
}

/* Whether kcmp() can tell that this table's descriptor 2 is the
 * program's: 1 until the kernel (or a sandbox) refuses it. */
static __thread int kcmp_works = 1;

/* 1 when this table's descriptor 2 is the very open file of the
 * program's (the main thread's table), 0 when it is not or kcmp() cannot
 * tell. One system call: the check below walks /proc (a path lookup and
 * a permission check on each of its parts), and the drain thread makes
 * it at every wakeup, which made it a sixth of that thread's time in a
 * training loop. */
static int same_stderr(void)
{
#ifdef SYS_kcmp
	if (kcmp_works) {
		long r = syscall(SYS_kcmp, (long)getpid(), (long)gettid(),
				 KCMP_FILE, 2L, 2L);
		if (r == 0) {
			return 1;
		}
		if (r < 0 &&
		    (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
			kcmp_works = 0;
		}
	}
#endif
	return 0;
}

/* See internal.h. */
void out_fd_follow_stderr(void)
{
	struct stat prog, mine;
	int fd;

	if (!own_table || (!stderr_none && same_stderr())) {
		return;
	}
	if (stat("/proc/self/fd/2", &prog) != 0) {
		if (errno == ENOENT && !stderr_none &&
		    stat("/proc/self/fd", &prog) == 0 &&
		    (fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
			/* The program closed its stderr: the copy must not
			 * keep what it was open (a pipe's reader waits for
			 * its end). */
			dup2(fd, 2);
			close(fd);
			stderr_none = 1;
		}
		return;
	}
	if (!stderr_none && fstat(2, &mine) == 0 &&
	    mine.st_dev == prog.st_dev && mine.st_ino == prog.st_ino) {
		return;
	}
	fd = program_stderr();
	if (fd >= 0) {
		if (fd != 2) {
			dup2(fd, 2);
			close(fd);
		}
		stderr_none = 0;
	}
}
