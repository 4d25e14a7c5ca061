/*
 * sweep.c - the status files of processes that are gone.
 *
 * A process removes its status file at exit, but one killed (SIGKILL, an
 * OOM kill) leaves <pid>.status behind, and one killed while it replaced
 * the file leaves <pid>.status.tmp.<writer> too. They would pile up in
 * the status folder for ever, and `mxprof dump` could find a stale file
 * for a pid that a new process took. Once per process, before its first
 * status file, every such file whose process no longer exists is removed.
 * A pid that now belongs to another process keeps its file: mxprof dump
 * checks the process's memory map before it trusts one.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Parses the decimal pid at the start of s; returns it and sets *end, or
 * returns 0 when s does not start with one. */
static long sweep_pid(const char *s, const char **end)
{
	long pid = 0;

	while (*s >= '0' && *s <= '9' && pid < 1L << 30) {
		pid = pid * 10 + (*s++ - '0');
	}
	*end = s;
	return pid;
}

/* Is process pid gone? An error other than ESRCH (EPERM: another user's
 * process) means it exists. */
static int sweep_gone(long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

void sweep_status_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int saved = errno;

	if (!d) {
		return;
	}
	while ((e = readdir(d))) {
		const char *end, *tail;
		long pid = sweep_pid(e->d_name, &end), owner;

		if (!pid || strncmp(end, ".status", 7) != 0) {
			continue;
		}
		end += 7;
		if (*end == 0) {
			owner = pid;
		} else if (strncmp(end, ".tmp.", 5) == 0 &&
			   (owner = sweep_pid(end + 5, &tail)) && !*tail) {
			/* A temporary file: its writer's. */
		} else {
			continue;
		}
		if (sweep_gone(owner)) {
			unlinkat(dirfd(d), e->d_name, 0);
		}
	}
	closedir(d);
	errno = saved;
}
