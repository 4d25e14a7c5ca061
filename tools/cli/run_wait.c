/*
 * run_wait.c - mxprof run waits for the whole process tree it started.
 *
 * mxprof run makes itself the child subreaper of the program
 * (PR_SET_CHILD_SUBREAPER): a process of the tree whose parent dies, a
 * worker of a main process killed by SIGTERM or a daemon that forked twice
 * and called setsid, becomes mxprof run's child instead of init's. Once
 * the program has ended, mxprof run reaps its children until none is
 * left, so that every process of the tree has written its files before
 * they are merged, and it knows how each one it reaped ended.
 *
 * The wait is bounded (--wait): when processes still run at the bound,
 * one line names them and mxprof run goes on without them; their journals
 * are left in place (run_tree.c leaves alone a journal whose writer runs).
 * A SIGINT, SIGTERM or SIGHUP sent to mxprof run meanwhile is passed on
 * to them; one from the terminal (which the foreground group got already)
 * ends the wait.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int run_wait_adopt(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

/* Notes that pid ended with status. */
static void rw_note(struct run_wait *w, pid_t pid, int status)
{
	struct run_ended *n = realloc(w->ended, (w->n + 1) * sizeof(*n));

	if (n) {
		w->ended = n;
		w->ended[w->n].pid = pid;
		w->ended[w->n].status = status;
		w->n++;
	}
}

int run_wait_main(struct run_wait *w, pid_t main, int *status)
{
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, 0);

		if (r < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		rw_note(w, r, st);
		if (r == main) {
			*status = st;
			return 0;
		}
	}
}

/* The name of process pid (its comm), or "?". */
static void rw_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(buf, len, "?");
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, (int)len, f)) {
			buf[strcspn(buf, "\n")] = 0;
		}
		fclose(f);
	}
}

/* Lists this process's children (the processes of the tree still
 * running) into pids, at most max. Returns how many there are. */
static size_t rw_children(pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;
	pid_t self = getpid();

	if (!d) {
		return 0;
	}
	while ((e = readdir(d))) {
		char path[300], line[512], *p;
		FILE *f;
		int ppid;

		if (!isdigit((unsigned char)e->d_name[0])) {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f) {
			continue;
		}
		p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		/* "pid (comm) S ppid ...": comm may hold spaces and ')'. */
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == self) {
			if (n < max) {
				pids[n] = (pid_t)atoi(e->d_name);
			}
			n++;
		}
	}
	closedir(d);
	return n;
}

/* Writes "pid N (name), ..." for up to 8 of the n processes of pids. */
static void rw_names(const pid_t *pids, size_t n, char *buf, size_t len)
{
	size_t used = 0, i;

	buf[0] = 0;
	for (i = 0; i < n && i < 8 && used < len; i++) {
		char comm[64];
		int k;

		rw_comm(pids[i], comm, sizeof(comm));
		k = snprintf(buf + used, len - used, "%spid %d (%s)",
			     i ? ", " : "", (int)pids[i], comm);
		used += k > 0 ? (size_t)k : 0;
	}
	if (n > 8 && used < len) {
		snprintf(buf + used, len - used, " and %zu more", n - 8);
	}
}

static double rw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void run_wait_rest(struct run_wait *w, const char *prog, double bound,
		   volatile sig_atomic_t *sig, volatile sig_atomic_t *kernel)
{
	double deadline = rw_now() + bound;
	int said = 0;
	pid_t pids[64];
	char names[1024];
	size_t n;

	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG);

		if (r > 0) {
			rw_note(w, r, st);
			continue;
		}
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			return; /* ECHILD: the whole tree has ended */
		}
		/* n may be 0 for an instant: a child between its exit and
		 * the next waitpid. */
		n = rw_children(pids, sizeof(pids) / sizeof(pids[0]));
		if (n > sizeof(pids) / sizeof(pids[0])) {
			n = sizeof(pids) / sizeof(pids[0]);
		}
		if (!said && n) {
			rw_names(pids, n, names, sizeof(names));
			util_err("%s ended; waiting for %zu process%s it "
				 "started, "
				 "still running: %s (at most %g s: --wait)",
				 prog, n, n == 1 ? "" : "es", names, bound);
			said = 1;
		}
		if (*sig && *kernel) {
			rw_names(pids, n, names, sizeof(names));
			util_err("interrupted; stopped waiting for %s; their "
				 "files are not merged",
				 names);
			return;
		}
		if (*sig) {
			for (size_t i = 0; i < n; i++) {
				kill(pids[i], *sig);
			}
			*sig = 0;
		}
		if (rw_now() >= deadline) {
			rw_names(pids, n, names, sizeof(names));
			util_err("stopped waiting after %g s for %s, still "
				 "running; their files are not merged",
				 bound, names);
			return;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
}

int run_wait_status(const struct run_wait *w, pid_t pid, int *status)
{
	for (size_t i = 0; w && i < w->n; i++) {
		if (w->ended[i].pid == pid) {
			*status = w->ended[i].status;
			return 1;
		}
	}
	return 0;
}

void run_wait_free(struct run_wait *w)
{
	free(w->ended);
	w->ended = NULL;
	w->n = 0;
}
