/*
 * forkctor.c - libforkctor.so for forkrace's ctor mode: its constructor
 * forks, under the dynamic linker's lock. The child calls rz_0 and
 * _exit()s with 0 when it returned right; forkctor_status is the child's
 * wait status (0: exited 0).
 */
#include <sys/wait.h>
#include <unistd.h>

int rz_0(int x);

int forkctor_status = -1;

__attribute__((constructor)) static void forkctor(void)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		_exit(rz_0(1) == 1 ? 0 : 3);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid) {
		forkctor_status = st;
	}
}
