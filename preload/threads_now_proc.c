/*
 * threads_now_proc.c - what /proc says of a thread, for threads_now.c:
 * the line of /proc/self/task/TID/syscall, the names of the system calls a
 * thread waits in, and a small file read whole. Pure functions but the
 * last, so that the unit tests check them on their own.
 *
 * The kernel writes the syscall file (fs/proc/base.c, proc_pid_syscall)
 * without stopping the thread: "running" when it is on a CPU or ready to
 * run; "-1 SP PC" when it is blocked outside a system call (a page fault,
 * a stop); else "NR A1 A2 A3 A4 A5 A6 SP PC", the call's number in
 * decimal, its six arguments, the user stack pointer and the instruction
 * pointer (just past the syscall instruction) in hexadecimal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

int threads_now_parse_syscall(const char *line, struct threads_now_sys *out)
{
	char *end;
	unsigned long long v[8];
	int want;

	memset(out, 0, sizeof(*out));
	while (*line == ' ') {
		line++;
	}
	if (strncmp(line, "running", 7) == 0 &&
	    (line[7] == 0 || line[7] == '\n')) {
		out->running = 1;
		return 0;
	}
	errno = 0;
	long nr = strtol(line, &end, 10);
	if (end == line || errno || nr < -1 || (*end != ' ' && nr >= 0)) {
		return -EINVAL;
	}
	want = nr < 0 ? 2 : 8;
	line = end;
	for (int i = 0; i < want; i++) {
		if (*line != ' ') {
			return -EINVAL;
		}
		line++;
		if (strncmp(line, "0x", 2) != 0) {
			return -EINVAL;
		}
		v[i] = strtoull(line + 2, &end, 16);
		if (end == line + 2 || errno) {
			return -EINVAL;
		}
		line = end;
	}
	if (*line != 0 && *line != '\n') {
		return -EINVAL;
	}
	out->nr = nr;
	out->sp = (uintptr_t)v[want - 2];
	out->pc = (uintptr_t)v[want - 1];
	for (int i = 0; nr >= 0 && i < 6; i++) {
		out->args[i] = (uintptr_t)v[i];
	}
	return 0;
}

/* x86-64 numbers of the calls a thread is commonly found waiting in. */
static const struct {
	long nr;
	const char *name;
} names[] = {
	{0, "read"},
	{1, "write"},
	{7, "poll"},
	{16, "ioctl"},
	{17, "pread64"},
	{19, "readv"},
	{20, "writev"},
	{23, "select"},
	{34, "pause"},
	{35, "nanosleep"},
	{42, "connect"},
	{43, "accept"},
	{44, "sendto"},
	{45, "recvfrom"},
	{46, "sendmsg"},
	{47, "recvmsg"},
	{61, "wait4"},
	{65, "semop"},
	{70, "msgrcv"},
	{72, "fcntl"},
	{73, "flock"},
	{128, "rt_sigtimedwait"},
	{130, "rt_sigsuspend"},
	{202, "futex"},
	{208, "io_getevents"},
	{220, "semtimedop"},
	{230, "clock_nanosleep"},
	{232, "epoll_wait"},
	{247, "waitid"},
	{257, "openat"},
	{270, "pselect6"},
	{271, "ppoll"},
	{281, "epoll_pwait"},
	{288, "accept4"},
	{299, "recvmmsg"},
	{426, "io_uring_enter"},
	{441, "epoll_pwait2"},
	{449, "futex_waitv"},
};

const char *threads_now_syscall_name(long nr)
{
#if defined(__x86_64__)
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].nr == nr) {
			return names[i].name;
		}
	}
#else
	(void)names;
#endif
	return NULL;
}

int threads_now_py_line(const char *name, char *func, size_t flen,
			unsigned *line)
{
	/* A qualified name has no space; a file name may have " (". */
	const char *open = strstr(name, " (");
	const char *colon = open ? strrchr(open, ':') : NULL;
	char *end;

	*line = 0;
	if (!open || open == name || !colon) {
		snprintf(func, flen, "%s", name);
		return -EINVAL;
	}
	unsigned long n = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || *end != ')' || end[1] != 0) {
		snprintf(func, flen, "%s", name);
		return -EINVAL;
	}
	snprintf(func, flen, "%.*s", (int)(open - name), name);
	*line = (unsigned)n;
	return 0;
}

int threads_now_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0) {
		return -errno;
	}
	while (n < len - 1) {
		ssize_t got = read(fd, buf + n, len - 1 - n);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0) {
			break;
		}
		n += (size_t)got;
	}
	close(fd);
	buf[n] = 0;
	return (int)n;
}
