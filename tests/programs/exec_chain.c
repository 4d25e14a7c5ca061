/*
 * exec_chain.c - a process that replaces its image several times, for the
 * test of exec: each image records a known number of tasks and then execs
 * the next, in the same process (same pid).
 *
 * usage: exec_chain IMAGES TASKS
 *
 * Each image names IMAGES tasks it never runs (so that the ids of names
 * differ from one image to the next) and runs TASKS tasks "step" in the
 * domain "image", then, while
 * IMAGES is above 1, execs this program again with IMAGES - 1 through a
 * different member of the exec family each time (execv, execvp, execve,
 * execl, execlp), so that every wrapper is used. The last image prints
 * "pid N images done" and exits with status 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mxprof_dl.h"

extern char **environ;

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: exec_chain IMAGES TASKS\n");
		return 2;
	}
	int images = atoi(argv[1]);
	int tasks = atoi(argv[2]);

	/* Without mxprof the stand-ins do nothing: the reference run. */
	mxprof_dl_load();
	mxprof_domain *dom = MXPROF(domain_create)("image");

	/* Names never used, a different number in each image: the name
	 * "step" gets a different id in each, as when an image execs
	 * another program. */
	for (int i = 0; i < images; i++) {
		char pad[32];

		snprintf(pad, sizeof(pad), "unused %d", i);
		MXPROF(task_create)(dom, pad);
	}
	mxprof_task *step = MXPROF(task_create)(dom, "step");

	for (int i = 0; i < tasks; i++) {
		MXPROF(task_start)(step);
		MXPROF(task_stop)(step);
	}
	if (images <= 1) {
		printf("pid %d images done\n", (int)getpid());
		return 0;
	}
	char next[16];
	char *args[] = {argv[0], next, argv[2], NULL};

	snprintf(next, sizeof(next), "%d", images - 1);
	fflush(stdout);
	switch (images % 5) {
	case 0:
		execv(argv[0], args);
		break;
	case 1:
		execvp(argv[0], args);
		break;
	case 2:
		execve(argv[0], args, environ);
		break;
	case 3:
		execl(argv[0], argv[0], next, argv[2], (char *)NULL);
		break;
	default:
		execlp(argv[0], argv[0], next, argv[2], (char *)NULL);
		break;
	}
	perror("exec");
	return 1;
}
