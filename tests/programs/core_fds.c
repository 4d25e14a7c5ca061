/*
 * core_fds - closes every descriptor it did not open, as daemons do, while
 * it is profiled, then uses the freed numbers for a pipe and files of its
 * own, which the profiler must leave alone.
 *
 * usage: core_fds DIR [SIGNALS]
 *
 * 100 tasks "work", then mxprof_dump(0), so the profiler's files are open;
 * close descriptors 3-1023; a pipe and DIR/own0.txt ... DIR/own3.txt take
 * the lowest numbers; then 10 rounds of 100 tasks, a line to each file and
 * SIGNALS raises of SIGUSR1 (the dump signal); then 36 bytes through the
 * pipe. Prints what came back through the pipe, and exits 0.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxprof_dl.h"

int main(int argc, char **argv)
{
	static const char msg[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	int signals = argc > 2 ? atoi(argv[2]) : 0;
	char path[4096], got[64] = "";
	int p[2], own[4];

	if (argc < 2) {
		fprintf(stderr, "usage: core_fds DIR [SIGNALS]\n");
		return 2;
	}
	mxprof_dl_load();
	mxprof_task *t =
		MXPROF(task_create)(MXPROF(domain_create)("fds"), "work");
	for (int i = 0; i < 100; i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
	MXPROF(dump)(0);
	for (int fd = 3; fd < 1024; fd++) {
		close(fd);
	}
	if (pipe(p) != 0) {
		perror("pipe");
		return 1;
	}
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/own%d.txt", argv[1], i);
		own[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (own[i] < 0) {
			perror(path);
			return 1;
		}
	}
	for (int r = 0; r < 10; r++) {
		char line[32];
		int n = snprintf(line, sizeof(line), "line %d\n", r);

		for (int i = 0; i < 100; i++) {
			MXPROF(task_start)(t);
			MXPROF(task_stop)(t);
		}
		for (int i = 0; i < 4; i++) {
			if (write(own[i], line, (size_t)n) != n) {
				perror("write");
				return 1;
			}
		}
		for (int s = 0; s < signals; s++) {
			raise(SIGUSR1);
		}
		usleep(20000);
	}
	if (write(p[1], msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1) {
		perror("write");
		return 1;
	}
	close(p[1]);
	ssize_t n = read(p[0], got, sizeof(got) - 1);

	printf("pipe %zd %s\n", n, n > 0 ? got : "");
	return 0;
}
