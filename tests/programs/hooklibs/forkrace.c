/*
 * forkrace - fork() while another thread keeps mxprof's patcher busy.
 *
 *   forkrace DIR FORKS
 *
 * A thread dlopen()s and dlclose()s DIR/libforkrace1.so in a loop; its GOT
 * refers to every function of libforkracez.so (hooked), so a scan is under
 * way most of the time. Meanwhile main forks FORKS times. Each child calls
 * rz_0 (hooked through main's GOT) and rz_1 through a pointer dlsym gave
 * before the fork, and _exit()s with 0 when both results are right; it
 * calls nothing of the dynamic linker, whose locks a fork can leave held
 * (glibc 2.36 does not reset dl_load_write_lock in the child). The parent
 * calls rz_0 after each fork too. Prints "forks FORKS: every child exited
 * 0" and exits 0, or says which child did not and exits 1.
 *
 *   forkrace DIR FORKS ctor
 *
 * The same churn, but each fork comes from the constructor of
 * DIR/libforkctor.so, which main dlopen()s and dlclose()s FORKS times: the
 * forking thread holds the dynamic linker's lock, which the patching
 * thread may be waiting for. Prints "constructor forks FORKS: every child
 * exited 0".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int rz_0(int x);

static const char *dir;
static volatile int stop;

static void *churn(void *arg)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/libforkrace1.so", dir);
	while (!stop) {
		void *h = dlopen(path, RTLD_LAZY);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			exit(1);
		}
		dlclose(h);
	}
	return arg;
}

/* FORKS dlopen()s of libforkctor.so, whose constructor forks; returns 0
 * when every child exited 0. */
static int ctor_forks(int forks)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/libforkctor.so", dir);
	for (int i = 0; i < forks; i++) {
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		int *st = h ? dlsym(h, "forkctor_status") : NULL;

		if (!st || *st != 0) {
			printf("constructor fork %d: %s %d\n", i,
			       st ? "status" : "no library", st ? *st : -1);
			return 1;
		}
		dlclose(h);
	}
	printf("constructor forks %d: every child exited 0\n", forks);
	return 0;
}

int main(int argc, char **argv)
{
	int (*rz_1)(int);
	pthread_t t;
	int forks;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: forkrace DIR FORKS [ctor]\n");
		return 2;
	}
	dir = argv[1];
	forks = atoi(argv[2]);
	if (argc == 4) {
		int rc;

		pthread_create(&t, NULL, churn, NULL);
		rc = ctor_forks(forks);
		stop = 1;
		pthread_join(t, NULL);
		return rc;
	}
	*(void **)&rz_1 = dlsym(RTLD_DEFAULT, "rz_1");
	if (!rz_1) {
		fprintf(stderr, "no rz_1\n");
		return 2;
	}
	pthread_create(&t, NULL, churn, NULL);
	for (int i = 0; i < forks; i++) {
		int st = 0;
		pid_t pid = fork();

		if (pid == 0) {
			_exit(rz_0(1) == 1 && rz_1(1) == 2 ? 0 : 3);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0 || rz_0(2) != 2) {
			printf("fork %d: child %s %d\n", i,
			       WIFSIGNALED(st) ? "killed by signal" : "exited",
			       WIFSIGNALED(st) ? WTERMSIG(st)
					       : WEXITSTATUS(st));
			stop = 1;
			pthread_join(t, NULL);
			return 1;
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("forks %d: every child exited 0\n", forks);
	return 0;
}
