/*
 * fork_exec_fail - a forked child that execs a program that does not
 * exist, for the test of exec in a child: mxprof writes the child's
 * journal out before the exec on the exec's own thread: under
 * AddressSanitizer, where a forked child's drain thread is started only
 * when something needs it, the exec starts none.
 *
 * usage: fork_exec_fail TASKS
 * The parent runs TASKS tasks "step" (domain "fx") and forks; the child
 * runs TASKS more, calls execv("/nonexistent/fork_exec_fail"), which
 * fails, prints how many threads it has then ("after exec: N threads"),
 * runs TASKS more tasks and exits with 0. The parent waits for it and
 * prints "child status S".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mxprof_dl.h"

static int threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Threads: %d", &n);
	}
	if (f) {
		fclose(f);
	}
	return n;
}

static void run(mxprof_task *t, int n)
{
	for (int i = 0; i < n; i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fork_exec_fail TASKS\n");
		return 2;
	}
	int tasks = atoi(argv[1]);

	mxprof_dl_load();
	mxprof_domain *dom = MXPROF(domain_create)("fx");
	mxprof_task *step = MXPROF(task_create)(dom, "step");

	run(step, tasks);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		char *args[] = {"fork_exec_fail", NULL};
		run(step, tasks);
		execv("/nonexistent/fork_exec_fail", args);
		printf("after exec: %d threads\n", threads());
		run(step, tasks);
		fflush(stdout);
		return 0;
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
