/*
 * dlrace - THREADS threads each dlopen() and dlclose() their own library
 * (libdlrace<k>.so, whose GOT refers to every function of libdlracez.so)
 * ITERS times, while mxprof patches each new load. Then main calls rz_0
 * once. Prints "rz_0(1) = 1" and exits 0.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

int rz_0(int x);

static const char *dir;
static int iters;

static void *churn(void *arg)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/libdlrace%ld.so", dir, (long)arg);
	for (int i = 0; i < iters; i++) {
		void *h = dlopen(path, RTLD_LAZY);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			exit(1);
		}
		dlclose(h);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];

	if (argc != 3) {
		fprintf(stderr, "usage: dlrace DIR ITERS\n");
		return 2;
	}
	dir = argv[1];
	iters = atoi(argv[2]);
	for (long i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, churn, (void *)(i + 1));
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
	}
	printf("rz_0(1) = %d\n", rz_0(1));
	return 0;
}
