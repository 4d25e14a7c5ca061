/*
 * run_drop.c - mxprof run merges the files of a process of its tree that
 * runs as another user.
 *
 * Under mxprof run as root, a process of the tree that becomes a user who
 * may not write the output folder (setuid after fork, setpriv --reuid)
 * cannot create its files beside the trace, and the library writes them
 * into a private folder instead (collector/dump.c). As root, mxprof run
 * gives such processes a drop folder: MXPROF_RUN_DROP names
 * <notes folder>/drop, mode 1733 inside the notes folder made 0711, so
 * that no one lists either and only a process that knows the name from
 * its environment creates its private folder there (mode 0700, its
 * own). Once the tree has ended, mxprof run copies the files there that
 * are a descendant's (X.<pid>.json, its tables, the journal of a process
 * that has ended) beside the trace, where run_tree.c merges them, and
 * removes what it copied. A file is opened never through a link, never
 * blocking, as a regular file owned by its folder's owner only.
 *
 * Called by cmd_run.c; the names: the library's paths.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int run_drop_open(const char *notes, char *drop, size_t len)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(notes, '/');

	drop[0] = 0;
	if (geteuid() != 0 || !notes[0] || !slash ||
	    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - notes), notes) >=
		    (int)sizeof(dir) ||
	    snprintf(drop, len, "%s/drop", dir) >= (int)len) {
		drop[0] = 0;
		return -1;
	}
	if (chmod(dir, 0711) < 0 || mkdir(drop, 0700) < 0 ||
	    chmod(drop, 01733) < 0) {
		rmdir(drop);
		chmod(dir, 0700);
		drop[0] = 0;
		return -1;
	}
	return 0;
}

/* Is name (in a drop folder) a descendant's file of trace's base name:
 * <stem>.<digits><ending>, its .journal or <stem>.<digits>.stats.txt?
 * Sets *pid to the digits, *journal when it is a journal. */
static int drop_ours(const char *base, const char *name, long *pid,
		     int *journal)
{
	size_t stem = paths_stem_len(base), bn = strlen(base), n = strlen(name);
	const char *end = base + stem, *p = name + stem + 1, *q;
	static const char jr[] = ".journal", st[] = ".stats.txt";

	if (n <= stem + 1 || strncmp(name, base, stem) || name[stem] != '.') {
		return 0;
	}
	for (q = p; *q >= '0' && *q <= '9'; q++) {
	}
	if (q == p) {
		return 0;
	}
	*pid = strtol(p, NULL, 10);
	*journal = 0;
	if (!strcmp(q, st) || !strcmp(q, end)) {
		return 1;
	}
	*journal = strlen(q) == bn - stem + sizeof(jr) - 1 &&
		   !strncmp(q, end, bn - stem) && !strcmp(q + bn - stem, jr);
	return *journal;
}

/* Copies the regular file name of folder dfd (owned by uid) to to,
 * created anew. Returns 0 or -1. */
static int drop_copy(int dfd, const char *name, uid_t uid, const char *to)
{
	char buf[1 << 16];
	struct stat st;
	int in = openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int out = -1, rc = -1;
	ssize_t r;

	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != uid) {
		goto done;
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		   0644);
	if (out < 0) {
		goto done;
	}
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)r) != r) {
			goto done;
		}
	}
	rc = r == 0 ? 0 : -1;
done:
	if (out >= 0 && (close(out) < 0 || rc < 0)) {
		unlink(to);
		rc = -1;
	}
	if (in >= 0) {
		close(in);
	}
	return rc;
}

/* Copies a private folder's files that are trace's descendants' beside
 * trace, removing each one copied and the folder once empty. */
static void drop_folder(int drop_fd, const char *sub, const char *trace)
{
	const char *base = strrchr(trace, '/');
	char to[PATH_MAX];
	int dfd = openat(drop_fd, sub,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	DIR *d;
	struct dirent *e;

	base = base ? base + 1 : trace;
	if (dfd < 0 || fstat(dfd, &st) < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0) {
			close(dfd);
		}
		return;
	}
	while ((e = readdir(d))) {
		long pid;
		int journal;
		if (!drop_ours(base, e->d_name, &pid, &journal) ||
		    (journal && pid > 0 &&
		     (kill((pid_t)pid, 0) == 0 || errno == EPERM)) ||
		    snprintf(to, sizeof(to), "%.*s%s", (int)(base - trace),
			     trace, e->d_name) >= (int)sizeof(to)) {
			continue; /* not ours, or its writer still runs */
		}
		if (drop_copy(dirfd(d), e->d_name, st.st_uid, to) == 0) {
			unlinkat(dirfd(d), e->d_name, 0);
		}
	}
	closedir(d);
	unlinkat(drop_fd, sub, AT_REMOVEDIR);
}

void run_drop_gather(const char *drop, const char *trace)
{
	int fd;
	DIR *d;
	struct dirent *e;

	if (!drop[0] || (fd = open(drop, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC)) < 0) {
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			drop_folder(dirfd(d), e->d_name, trace);
		}
	}
	closedir(d);
}

void run_drop_close(char *drop)
{
	if (drop[0]) {
		rmdir(drop);
		drop[0] = 0;
	}
}
