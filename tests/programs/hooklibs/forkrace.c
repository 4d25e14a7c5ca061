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
 *
 *   forkrace DIR FORKS [ctor] calm
 *
 * Either of the above, but each fork (or dlopen of libforkctor.so) waits
 * until the churning thread is between a dlclose() and its next dlopen():
 * no fork then meets another thread inside the allocator. AddressSanitizer's
 * runtime of GCC 12 does not lock its allocator across fork(), so a child
 * forked while another thread allocates can wait forever in its first
 * malloc(); the ASan run uses this mode.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int rz_0(int x);

static const char *dir;
static volatile int stop;
static int calm;
/* Calm mode: the churning thread's dlopen()/dlclose() pairs and main's
 * forks take turns; a waiting fork goes first. */
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int churning, fork_wanted;

/* main: waits until the churning thread is between two pairs, and keeps
 * it there until calm_end(). */
static void calm_begin(void)
{
	if (calm) {
		pthread_mutex_lock(&turn_mu);
		fork_wanted = 1;
		while (churning) {
			pthread_cond_wait(&turn_cv, &turn_mu);
		}
	}
}

static void calm_end(void)
{
	if (calm) {
		fork_wanted = 0;
		pthread_cond_broadcast(&turn_cv);
		pthread_mutex_unlock(&turn_mu);
	}
}

/* The churning thread, around each pair. */
static void churn_turn(int begin)
{
	if (calm) {
		pthread_mutex_lock(&turn_mu);
		while (begin && fork_wanted) {
			pthread_cond_wait(&turn_cv, &turn_mu);
		}
		churning = begin;
		pthread_cond_broadcast(&turn_cv);
		pthread_mutex_unlock(&turn_mu);
	}
}

static void *churn(void *arg)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/libforkrace1.so", dir);
	while (!stop) {
		churn_turn(1);
		void *h = dlopen(path, RTLD_LAZY);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			exit(1);
		}
		dlclose(h);
		churn_turn(0);
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
		calm_begin();
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

		calm_end();
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

	if (argc > 3 && strcmp(argv[argc - 1], "calm") == 0) {
		calm = 1;
		argc--;
	}
	if (argc != 3 && (argc != 4 || strcmp(argv[3], "ctor") != 0)) {
		fprintf(stderr, "usage: forkrace DIR FORKS [ctor] [calm]\n");
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

		calm_begin();
		pid_t pid = fork();

		if (pid == 0) {
			_exit(rz_0(1) == 1 && rz_1(1) == 2 ? 0 : 3);
		}
		calm_end();
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
