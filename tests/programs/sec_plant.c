/*
 * sec_plant - gives a test the moment to replace the journal with
 * something else (a FIFO, a link) while the program is profiled.
 *
 * usage: sec_plant SYNC_DIR close|exec
 *
 * 100 tasks "work", then mxprof_dump(0), so that the journal exists. With
 * "close", closes descriptors 3-1023 as daemons do (mxprof must reopen the
 * journal to write to it again). Creates SYNC_DIR/ready and waits (60 s
 * at most) for SYNC_DIR/go; then 100 tasks. With "exec", execs itself as
 * "sec_plant - after", an image that runs 100 tasks. Prints "done" and
 * exits 3.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mxprof_dl.h"

static void work(void)
{
	mxprof_task *t =
		MXPROF(task_create)(MXPROF(domain_create)("plant"), "work");

	for (int i = 0; i < 100; i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
}

int main(int argc, char **argv)
{
	char path[4096];

	if (argc < 3) {
		fprintf(stderr, "usage: sec_plant SYNC_DIR close|exec\n");
		return 2;
	}
	mxprof_dl_load();
	work();
	if (strcmp(argv[2], "after") == 0) {
		printf("done\n");
		return 3;
	}
	MXPROF(dump)(0);
	if (strcmp(argv[2], "close") == 0) {
		for (int fd = 3; fd < 1024; fd++) {
			close(fd);
		}
	}
	snprintf(path, sizeof(path), "%s/ready", argv[1]);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "%s/go", argv[1]);
	for (int i = 0; i < 6000 && access(path, F_OK) != 0; i++) {
		usleep(10000);
	}
	work();
	if (strcmp(argv[2], "exec") == 0) {
		execl("/proc/self/exe", argv[0], argv[1], "after",
		      (char *)NULL);
		perror("exec");
		return 1;
	}
	printf("done\n");
	return 3;
}
