/*
 * cuda_fork_dump - forks while other threads launch kernels and ask for
 * the tables: the mix that deadlocked a profiler whose dump held its lock
 * while CUPTI called back into it, and whose fork handler took the same
 * locks in another order.
 *
 * usage: cuda_fork_dump LIBCUDART FORKS
 * A launcher thread launches kernels (a C++-mangled name; the program has
 * no C++ runtime to demangle it) on the fake libcudart, one every 20 us or
 * so, until the main thread has forked FORKS times (50000 at most); each child
 * _exits at once. A third thread asks mxprof for its tables (dumps()) in a
 * loop, when mxprof is loaded. Run under MXPROF_CONTINUOUS_DUMP=1 with a
 * short MXPROF_DUMP_PERIOD, the drain thread also dumps all along.
 * Prints "launches N forks F dumps D", D being 1 when dumps() gave the
 * tables at least once and 0 when it never did (or mxprof is not loaded).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct dim3_ {
	unsigned x, y, z;
};

typedef int (*launch_fn)(const void *, struct dim3_, struct dim3_, void **,
			 size_t, void *);
typedef char *(*dumps_fn)(int, const char *, const char *, int);
typedef void (*free_fn)(void *);

static launch_fn launch;
static int stop;
static unsigned long launches, dumps;

/* At most this many launches: the GPU records stay far below what the
 * store keeps (1M), however slowly the forks go on a loaded machine. */
#define MAX_LAUNCHES 50000

static void *launcher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE) &&
	       launches < MAX_LAUNCHES) {
		launch("_Z6kernelPfi", (struct dim3_){1, 1, 1},
		       (struct dim3_){32, 1, 1}, NULL, 0, NULL);
		launches++;
		usleep(20);
	}
	return NULL;
}

static void *dumper(void *arg)
{
	dumps_fn mx_dumps = (dumps_fn)dlsym(RTLD_DEFAULT, "mxprof_dumps");
	free_fn mx_free = (free_fn)dlsym(RTLD_DEFAULT, "mxprof_free");

	(void)arg;
	while (mx_dumps && mx_free &&
	       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		char *t = mx_dumps(0, "table", "total", 0);
		if (t) {
			dumps++;
			mx_free(t);
		}
		usleep(2000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cuda_fork_dump LIBCUDART FORKS\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h || !(launch = (launch_fn)dlsym(h, "cudaLaunchKernel"))) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	int forks = atoi(argv[2]);
	pthread_t lt, dt;
	pthread_create(&lt, NULL, launcher, NULL);
	pthread_create(&dt, NULL, dumper, NULL);
	for (int i = 0; i < forks; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
			perror("fork");
			return 1;
		}
		usleep(1000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(lt, NULL);
	pthread_join(dt, NULL);
	printf("launches %lu forks %d dumps %lu\n", launches, forks,
	       dumps > 0 ? 1ul : 0ul);
	return 0;
}
