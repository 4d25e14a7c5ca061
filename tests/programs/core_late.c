/*
 * core_late - a program that records only once it is told to, for the
 * integration test of two programs given the same output.
 *
 * usage: core_late READY GO
 *
 * Creates the file READY, waits for the file GO, then runs 10 tasks
 * "late/step" and prints "done".
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxprof_dl.h"

int main(int argc, char **argv)
{
	struct stat st;

	if (argc < 3) {
		fprintf(stderr, "usage: core_late READY GO\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fclose(f);
	while (stat(argv[2], &st) != 0) {
		usleep(1000);
	}
	mxprof_dl_load();
	mxprof_domain *dom = MXPROF(domain_create)("late");
	mxprof_task *step = MXPROF(task_create)(dom, "step");
	for (int i = 0; i < 10; i++) {
		MXPROF(task_start)(step);
		MXPROF(task_stop)(step);
	}
	printf("done\n");
	return 0;
}
