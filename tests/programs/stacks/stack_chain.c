/*
 * stack_chain.c - known call chains down to a hooked zlib call, for the
 * call-stack tests (tests/integration/stack_native.sh).
 *
 *   stack_chain chain     main -> outer_fn -> inner_fn -> crc32, 3 times
 *   stack_chain threads   2 threads: thread_fn -> inner_fn -> crc32, 4 each
 *   stack_chain dlopen    main -> dl_outer -> dl_inner -> crc32 in a
 *                         library loaded with dlopen (argv[2]), twice
 *   stack_chain fork      a child: child_fn -> inner_fn -> crc32, 5 times
 *
 * Each prints the checksums it computed, so a run with and without mxprof
 * can be compared.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static const char data[] = "where in the program";

__attribute__((noinline)) static unsigned long inner_fn(int i)
{
	unsigned long c = crc32(0L, (const Bytef *)data, sizeof(data) - 1 - i);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return c;
}

__attribute__((noinline)) static unsigned long outer_fn(int i)
{
	unsigned long c = inner_fn(i);
	__asm__ volatile("" ::: "memory");
	return c;
}

__attribute__((noinline)) static void *thread_fn(void *arg)
{
	unsigned long *out = arg;

	for (int i = 0; i < 4; i++) {
		out[i] = inner_fn(i);
	}
	__asm__ volatile("" ::: "memory");
	return NULL;
}

__attribute__((noinline)) static unsigned long child_fn(int i)
{
	unsigned long c = inner_fn(i);
	__asm__ volatile("" ::: "memory");
	return c;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "chain";

	if (!strcmp(mode, "chain")) {
		for (int i = 0; i < 3; i++) {
			printf("%lx\n", outer_fn(i));
		}
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[2];
		unsigned long out[2][4];
		for (int i = 0; i < 2; i++) {
			pthread_create(&t[i], NULL, thread_fn, out[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			for (int k = 0; k < 4; k++) {
				printf("%lx\n", out[i][k]);
			}
		}
	} else if (!strcmp(mode, "dlopen") && argc > 2) {
		void *h = dlopen(argv[2], RTLD_NOW);
		unsigned long (*f)(int) =
			h ? (unsigned long (*)(int))dlsym(h, "dl_outer") : NULL;
		if (!f) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		for (int i = 0; i < 2; i++) {
			printf("%lx\n", f(i));
		}
	} else if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < 5; i++) {
				printf("%lx\n", child_fn(i));
			}
			return 0;
		}
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	return 0;
}
