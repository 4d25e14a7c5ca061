/*
 * core_setxid.c - a program that gives up root the way setpriv does, for
 * the test of credential changes under mxprof.
 *
 * usage: core_setxid UID GID
 *
 * Records 50 tasks "before" in the domain "cred", then keeps its
 * capabilities across the change of user (PR_SET_KEEPCAPS), sets the
 * user ids to UID (setresuid), makes its permitted capabilities effective
 * again on this thread only (capset acts on the calling thread), sets the
 * group ids to GID (setresgid; the C library runs it on every thread of
 * the process), and records 50 tasks "after". Prints "uid U gid G" and
 * exits 0; a failed call exits 1 with a line.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mxprof_dl.h"

static void record(const char *name)
{
	mxprof_domain *dom = MXPROF(domain_create)("cred");
	mxprof_task *t = MXPROF(task_create)(dom, name);

	for (int i = 0; i < 50; i++) {
		MXPROF(task_start)(t);
		MXPROF(task_stop)(t);
	}
}

/* Effective = permitted, on the calling thread only. */
static int raise_effective(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0) {
		return -1;
	}
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	return (int)syscall(SYS_capset, &h, d);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: core_setxid UID GID\n");
		return 64;
	}
	uid_t uid = (uid_t)atoi(argv[1]);
	gid_t gid = (gid_t)atoi(argv[2]);

	mxprof_dl_load();
	record("before");
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
		perror("prctl");
		return 1;
	}
	if (setresuid(uid, uid, uid) != 0) {
		perror("setresuid");
		return 1;
	}
	if (raise_effective() != 0) {
		perror("capset");
		return 1;
	}
	if (setresgid(gid, gid, gid) != 0) {
		perror("setresgid");
		return 1;
	}
	record("after");
	printf("uid %d gid %d\n", (int)getuid(), (int)getgid());
	return 0;
}
