/*
 * cmd_dump.c - mxprof dump: make a running process write its trace now.
 *
 * A recording process keeps a status file (paths_status()) with
 * "output=", "stats=", "signal=" and "dumps=" lines. dump reads it, sends
 * the dump signal, and waits until "dumps=" grows: the library rewrites
 * the file after each complete dump. Then it prints the trace's path.
 *
 * With --stacks it sends the dump signal with a value (sigqueue,
 * SETTINGS_STACKS_REQUEST): the library then also takes every thread's
 * stack before the dump, writes their text beside the trace
 * (paths_stacks_text()) and counts it in "stacks=". dump waits for that
 * count to grow and prints the text.
 *
 * What the file says is trusted only when the folder is this user's own
 * (paths_private_dir()) and the file is a plain file of this user that
 * nobody else may write, and the signal it names is one a program may be
 * given as its dump signal: never SIGKILL, SIGSTOP, SIGTERM and the like.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "settings.h"

struct dp_status {
	char output[PATH_MAX + 32];
	char stats[PATH_MAX + 32];
	int signal;
	unsigned long long dumps, stacks;
	int has_signal, has_dumps, has_stacks;
	int taken; /* the program's own handler took this dump signal */
	unsigned long long refused; /* dumps flight mode's limit refused */
};

/* Reads the status file. Returns 0, or a negative errno. */
static int dp_read(const char *path, struct dp_status *s)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char line[PATH_MAX + 32];

	if (!f) {
		int err = -errno;
		if (fd >= 0) {
			close(fd);
		}
		return err;
	}
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n') {
			line[--n] = 0;
		}
		if (strncmp(line, "output=", 7) == 0) {
			snprintf(s->output, sizeof(s->output), "%s", line + 7);
		} else if (strncmp(line, "stats=", 6) == 0) {
			snprintf(s->stats, sizeof(s->stats), "%s", line + 6);
		} else if (strncmp(line, "signal=", 7) == 0) {
			s->signal = atoi(line + 7);
			s->has_signal = 1;
		} else if (strncmp(line, "taken=", 6) == 0) {
			s->taken = atoi(line + 6);
		} else if (strncmp(line, "refused=", 8) == 0) {
			s->refused = strtoull(line + 8, NULL, 10);
		} else if (strncmp(line, "stacks=", 7) == 0) {
			s->stacks = strtoull(line + 7, NULL, 10);
			s->has_stacks = 1;
		} else if (strncmp(line, "dumps=", 6) == 0) {
			s->dumps = strtoull(line + 6, NULL, 10);
			s->has_dumps = 1;
		}
	}
	fclose(f);
	return 0;
}

/* Is sig one that MXPROF_SIGNAL may name (settings_signal())? The
 * signals that end, stop or crash a program are not. */
static int dp_dump_signal_ok(int sig)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", sig);
	return sig > 0 && settings_signal(num) == sig;
}

/* Can the status file at path be trusted: in this user's private status
 * folder, a plain file of this user that nobody else may write? Returns
 * NULL, or why not. */
static const char *dp_untrusted(const char *path)
{
	char dir[PATH_MAX];
	const char *why;
	struct stat st;

	if (paths_status_dir(dir, sizeof(dir)) < 0) {
		return "its folder's name is too long";
	}
	if (paths_private_dir(dir, (unsigned)getuid(), &why) < 0) {
		return why;
	}
	if (lstat(path, &st) < 0) {
		return NULL; /* dp_read says what is missing */
	}
	if (!S_ISREG(st.st_mode)) {
		return "it is not a plain file";
	}
	if (st.st_uid != getuid()) {
		return "another user owns it";
	}
	if (st.st_mode & 022) {
		return "other users may write to it";
	}
	return NULL;
}

/* Returns 1 when pid's memory map holds libmxprof, 0 when it does not,
 * -1 when it cannot be read. */
static int dp_has_lib(pid_t pid)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		return -1;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		found = strstr(line, "libmxprof") != NULL;
	}
	fclose(f);
	return found;
}

/* Says that the program's own handler has the dump signal. Returns
 * CLI_FAIL. */
static int dp_taken(pid_t pid, int sig)
{
	util_err("process %d handles the dump signal %d (SIG%s) itself, so "
		 "mxprof cannot dump it on a signal; start it with "
		 "MXPROF_SIGNAL set to another signal (USR2, PROF, RTMIN+N, "
		 "...)",
		 (int)pid, sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return CLI_FAIL;
}

static double dp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copies the file at path to stdout. Returns the exit status. */
static int dp_print_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[8192];
	size_t n;

	if (!f) {
		util_err("cannot read %s: %s", path, strerror(errno));
		return CLI_FAIL;
	}
	errno = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (fwrite(buf, 1, n, stdout) != n) {
			break;
		}
	}
	fclose(f);
	return util_stdout_done("the stacks");
}

/* How a wait for the status file ended. */
enum dp_end { DP_DONE, DP_REFUSED, DP_TAKEN, DP_GONE, DP_LATE };

/* Polls PID's status file (spath) every 20 ms until its count of dumps
 * (stacks: of stacks texts) passes st's, or flight mode refused a dump,
 * or the program took the dump signal, or it exited, or deadline passed.
 * now holds the last status read. */
static enum dp_end dp_wait(pid_t pid, const char *spath,
			   const struct dp_status *st, struct dp_status *now,
			   double deadline, int stacks)
{
	for (;;) {
		struct timespec ts = {0, 20 * 1000 * 1000};
		int r = dp_read(spath, now);

		if (r == 0 && (stacks ? now->stacks > st->stacks
				      : now->dumps > st->dumps)) {
			return DP_DONE;
		}
		if (r == 0 && !stacks && now->refused > st->refused) {
			return DP_REFUSED;
		}
		if (r == 0 && now->signal <= 0 && now->taken > 0) {
			/* The program took the signal before mxprof saw it:
			 * its handler, not mxprof's, got this one. */
			return DP_TAKEN;
		}
		if (r < 0 && kill(pid, 0) < 0 && errno == ESRCH) {
			return DP_GONE;
		}
		if (dp_now() > deadline) {
			return DP_LATE;
		}
		nanosleep(&ts, NULL);
	}
}

/* mxprof dump --stacks PID: the dump signal with the stacks' request,
 * then the text once the status file counts one more. st is the status
 * before. Returns the exit status. */
static int dp_stacks(pid_t pid, const char *spath, const struct dp_status *st,
		     double timeout)
{
	union sigval v = {.sival_int = SETTINGS_STACKS_REQUEST};
	double deadline = dp_now() + timeout;
	struct dp_status now;
	char text[PATH_MAX + 32];

	if (!st->has_stacks) {
		util_err("process %d runs a libmxprof.so without --stacks "
			 "(no stacks= in %s)",
			 (int)pid, spath);
		return CLI_FAIL;
	}
	if (sigqueue(pid, st->signal, v) < 0) {
		util_err("cannot signal process %d: %s", (int)pid,
			 strerror(errno));
		return CLI_FAIL;
	}
	switch (dp_wait(pid, spath, st, &now, deadline, 1)) {
	case DP_DONE:
	case DP_REFUSED: /* not for stacks */
		break;
	case DP_TAKEN:
		return dp_taken(pid, now.taken);
	case DP_GONE:
		util_err("process %d exited before its stacks were written",
			 (int)pid);
		return CLI_FAIL;
	case DP_LATE:
		util_err("process %d did not write its stacks within %g s",
			 (int)pid, timeout);
		return CLI_FAIL;
	}
	if (paths_stacks_text(now.output[0] ? now.output : st->output, text,
			      sizeof(text)) < 0) {
		util_err("the stacks' path is too long");
		return CLI_FAIL;
	}
	return dp_print_file(text);
}

static const char dp_usage[] =
	"usage: mxprof dump [--stacks] [--timeout SEC] PID\n";

static const char dp_help[] =
	"\n"
	"Ask the process PID, which runs with libmxprof.so, to write its "
	"trace\n"
	"and tables now (it keeps running and recording), wait until they are\n"
	"complete on disk, and print the trace's path.\n"
	"\n"
	"options:\n"
	"  -s, --stacks        also take every thread's current stack (native\n"
	"                      and Python frames, the program not stopped) "
	"and\n"
	"                      print them, most recent call last, instead of\n"
	"                      the path; the text stays beside the trace\n"
	"  -t, --timeout SEC   give up after SEC seconds [30]\n"
	"  -h, --help          this text\n"
	"\n"
	"exit status: 0 dumped, 1 no such process, not profiled by mxprof, no\n"
	"dump signal, or no dump within the timeout, 2 bad usage.\n";

/* mxprof dump PID: signals PID and waits for its status file to count one
 * more dump. Returns the exit status (cli.h). */
int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{"stacks", no_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct dp_status st, now;
	char spath[PATH_MAX];
	unsigned long long pidv;
	double timeout = 30, deadline;
	char *end;
	pid_t pid;
	int c, r, stacks = 0;

	util_set_cmd("dump");
	while ((c = getopt_long(argc, argv, "st:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			stacks = 1;
			break;
		case 't':
			timeout = strtod(optarg, &end);
			if (*end || !(timeout > 0)) {
				util_err("--timeout: '%s' is not a number of "
					 "seconds",
					 optarg);
				goto usage;
			}
			break;
		case 'h':
			errno = 0;
			printf("%s%s", dp_usage, dp_help);
			return util_stdout_done("the help");
		default:
			goto usage;
		}
	}
	if (argc - optind != 1) {
		util_err("needs one PID");
		goto usage;
	}
	if (util_parse_uint(argv[optind], 1, INT_MAX, &pidv) < 0) {
		util_err("'%s' is not a process id", argv[optind]);
		goto usage;
	}
	pid = (pid_t)pidv;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		util_err("no process with pid %d", (int)pid);
		return CLI_FAIL;
	}
	if (paths_status((int)pid, spath, sizeof(spath)) < 0) {
		util_err("status file path too long");
		return CLI_FAIL;
	}
	const char *why = dp_untrusted(spath);
	if (why) {
		util_err("not trusting %s: %s (or its folder); no signal sent",
			 spath, why);
		return CLI_FAIL;
	}
	r = dp_read(spath, &st);
	if (r < 0) {
		if (dp_has_lib(pid) == 1) {
			util_err("process %d has libmxprof.so loaded but is "
				 "not recording (no %s)",
				 (int)pid, spath);
		} else {
			util_err("process %d does not run under mxprof (no "
				 "%s, and libmxprof.so is not in its memory "
				 "map)",
				 (int)pid, spath);
		}
		return CLI_FAIL;
	}
	if (dp_has_lib(pid) == 0) {
		util_err("process %d does not run under mxprof (%s is stale: "
			 "libmxprof.so is not in its memory map)",
			 (int)pid, spath);
		return CLI_FAIL;
	}
	if (st.signal <= 0 && st.taken > 0) {
		return dp_taken(pid, st.taken);
	}
	if (!st.has_signal || st.signal <= 0) {
		util_err("process %d has no dump signal (MXPROF_SIGNAL=none); "
			 "it can only dump through mxprof_dump()",
			 (int)pid);
		return CLI_FAIL;
	}
	if (!dp_dump_signal_ok(st.signal)) {
		util_err("%s names signal %d, which is not a dump signal; no "
			 "signal sent",
			 spath, st.signal);
		return CLI_FAIL;
	}
	if (stacks) {
		return dp_stacks(pid, spath, &st, timeout);
	}
	if (kill(pid, st.signal) < 0) {
		util_err("cannot signal process %d: %s", (int)pid,
			 strerror(errno));
		return CLI_FAIL;
	}
	deadline = dp_now() + timeout;
	switch (dp_wait(pid, spath, &st, &now, deadline, 0)) {
	case DP_DONE:
		break;
	case DP_REFUSED:
		util_err("process %d wrote no file: flight mode's numbered "
			 "files reached MXPROF_FLIGHT_MAX_DUMPS; its window is "
			 "written when it ends",
			 (int)pid);
		return CLI_FAIL;
	case DP_TAKEN:
		return dp_taken(pid, now.taken);
	case DP_GONE:
		/* It exited; its final dump went to the same file. */
		if (access(st.output, F_OK) == 0) {
			util_err("process %d exited; its final trace is below",
				 (int)pid);
			errno = 0;
			printf("%s\n", st.output);
			return util_stdout_done("the trace's path");
		}
		util_err("process %d exited before the dump completed",
			 (int)pid);
		return CLI_FAIL;
	case DP_LATE:
		util_err("process %d did not complete a dump within %g s",
			 (int)pid, timeout);
		return CLI_FAIL;
	}
	errno = 0;
	printf("%s\n", now.output[0] ? now.output : st.output);
	return util_stdout_done("the trace's path");
usage:
	fputs(dp_usage, stderr);
	return CLI_USAGE;
}
