/*
 * core_fd_limit - a program that opens as many files as its descriptor
 * limit (RLIMIT_NOFILE) allows, while it is profiled.
 *
 * usage: core_fd_limit close|keep [more] [limit N]
 *
 * 100 tasks "work", then mxprof_dump(0), so that the profiler's files
 * exist; then opens /dev/null until open() fails and prints how many it
 * opened and open()'s error. With "close" it closes them all before it
 * exits; with "keep" it exits with every descriptor taken. With "more",
 * 100 more tasks once the files are open (200 in all). With "limit N",
 * it first sets its own RLIMIT_NOFILE to soft = hard = N (after the
 * library started, before it recorded anything). Exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mxprof_dl.h"

int main(int argc, char **argv)
{
	static int fds[65536];
	int n = 0, more = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: core_fd_limit close|keep\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "more") == 0) {
			more = 1;
		} else if (strcmp(argv[i], "limit") == 0 && i + 1 < argc) {
			rlim_t lim = (rlim_t)atoi(argv[++i]);
			struct rlimit rl = {lim, lim};
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
				perror("setrlimit");
				return 2;
			}
		}
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
	for (int i = 0; more && i < 100; i++) {
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
