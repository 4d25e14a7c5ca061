/*
 * core_fd_limit - a program that opens as many files as its descriptor
 * limit (RLIMIT_NOFILE) allows, while it is profiled.
 *
 * usage: core_fd_limit close|keep [more]
 *
 * 100 tasks "work", then mxprof_dump(0), so that the profiler's files
 * exist; then opens /dev/null until open() fails and prints how many it
 * opened and open()'s error. With "close" it closes them all before it
 * exits; with "keep" it exits with every descriptor taken. With "more",
 * 100 more tasks once the files are open (200 in all). Exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mxprof_dl.h"

int main(int argc, char **argv)
{
	int fds[65536], n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: core_fd_limit close|keep\n");
		return 2;
	}
	mxprof_dl_load();
	mxprof_task *t =
		MXPROF(task_create)(MXPROF(domain_create)("fdlim"), "work");
	for (int i = 0; i < 100; i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
	MXPROF(dump)(0);
	while (n < 65536 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0) {
		n++;
	}
	printf("opened %d: %s\n", n, strerror(errno));
	fflush(stdout);
	for (int i = 0; argc > 2 && strcmp(argv[2], "more") == 0 && i < 100;
	     i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
	if (strcmp(argv[1], "close") == 0) {
		while (n > 0) {
			close(fds[--n]);
		}
	}
	return 0;
}
