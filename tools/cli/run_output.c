/*
 * run_output.c - mxprof run checks, before it starts the program, that
 * the process tree can write its files at the output path.
 *
 * Under the library, a process that cannot create its journal beside the
 * trace writes into a private folder of its own instead
 * (collector/dump.c): with an output that no process can write, every
 * process of the tree would do so, and mxprof run would merge nothing.
 * mxprof run refuses such an output in one line instead: the trace must
 * not be a folder or anything but a regular file, its folder must exist
 * and be writable, and the longest name a descendant derives from it,
 * X.<pid>.json.tmp.<pid> (collector/paths.c), must fit in the folder's
 * file names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The longest pid (pid_max's ceiling, 2^22), and the ending of a
 * temporary trace, ".tmp.<pid>", the longest the library adds. */
#define RO_PID "4194304"
#define RO_TMP ".tmp." RO_PID

int run_output_check(const char *pat)
{
	char path[PATH_MAX], dir[PATH_MAX], child[PATH_MAX + 32];
	const char *base, *why = NULL;
	struct stat st;
	long name_max;
	size_t n;

	if (!pat || !*pat) {
		pat = "profile.json";
	}
	run_summary_expand(pat, getpid(), path, sizeof(path));
	n = strlen(path);
	if (n == 0 || path[n - 1] == '/') {
		why = "it names a folder";
	} else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		why = S_ISDIR(st.st_mode) ? "it is a folder"
					  : "it is not a regular file";
	}
	if (why) {
		goto bad;
	}
	base = strrchr(path, '/');
	if (base) {
		snprintf(dir, sizeof(dir), "%.*s",
			 base == path ? 1 : (int)(base - path), path);
		base++;
	} else {
		snprintf(dir, sizeof(dir), ".");
		base = path;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		why = stat(dir, &st) < 0 && errno == ENOENT
			      ? "its folder does not exist"
			      : "its folder is not a folder";
		goto bad;
	}
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		why = errno == EROFS
			      ? "its folder is on a read-only file system"
			      : "its folder is not writable";
		goto bad;
	}
	name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max <= 0) {
		name_max = NAME_MAX;
	}
	if (paths_child(base, RO_PID, child, sizeof(child)) < 0 ||
	    strlen(child) + sizeof(RO_TMP) - 1 > (size_t)name_max) {
		util_err("cannot write the output %s: its name is too long "
			 "(%zu characters; the names mxprof derives from it "
			 "need at most %ld)",
			 path, strlen(base),
			 name_max - (long)(strlen(child) - strlen(base)) -
				 (long)(sizeof(RO_TMP) - 1));
		return -1;
	}
	return 0;
bad:
	util_err("cannot write the output %s: %s", path, why);
	return -1;
}
