/*
 * cuda_fake_train - a training-loop-shaped CUDA program for the fake
 * libcudart (tests/fakes/), loaded with dlopen as frameworks load theirs.
 *
 * usage: cuda_fake_train LIBCUDART STEPS [WAIT_MS [USR1_AT]]
 *        cuda_fake_train none      (touches no CUDA at all)
 * Allocates two 1 MiB buffers, calls cudaGetDevice 10 times, then per step
 * (inside an NVTX range "step"): a 1 MiB HtoD copy, kernels conv_fwd
 * (grid 10), relu (grid 2), conv_bwd (grid 20), a 64 KiB memset, a 4 KiB
 * DtoH copy and cudaDeviceSynchronize. Frees both buffers. WAIT_MS waits
 * after loading the library, before the first call; USR1_AT raises SIGUSR1
 * (mxprof's dump signal) before that step. Prints a checksum; with
 * "none", prints whether libcupti is mapped and how many threads run.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

struct dim3_ {
	unsigned x, y, z;
};

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*memset_fn)(void *, int, size_t);
typedef int (*launch_fn)(const void *, struct dim3_, struct dim3_, void **,
			 size_t, void *);
typedef int (*sync_fn)(void);
typedef int (*getdev_fn)(int *);

static void report_nothing_loaded(void)
{
	char line[512];
	int cupti = 0, threads = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		cupti |= strstr(line, "libcupti") != NULL;
	}
	if (f) {
		fclose(f);
	}
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Threads: %d", &threads);
	}
	if (f) {
		fclose(f);
	}
	printf("libcupti mapped: %d, threads: %d\n", cupti, threads);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "none") == 0) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL); /* a few drain ticks */
		report_nothing_loaded();
		return 0;
	}
	int steps = argc > 2 ? atoi(argv[2]) : 5;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	if (argc > 3) {
		struct timespec ts = {0, atol(argv[3]) * 1000000L};
		nanosleep(&ts, NULL);
	}
	malloc_fn cmalloc = (malloc_fn)dlsym(h, "cudaMalloc");
	free_fn cfree = (free_fn)dlsym(h, "cudaFree");
	memcpy_fn cmemcpy = (memcpy_fn)dlsym(h, "cudaMemcpy");
	memset_fn cmemset = (memset_fn)dlsym(h, "cudaMemset");
	launch_fn launch = (launch_fn)dlsym(h, "cudaLaunchKernel");
	sync_fn csync = (sync_fn)dlsym(h, "cudaDeviceSynchronize");
	getdev_fn getdev = (getdev_fn)dlsym(h, "cudaGetDevice");
	size_t big = 1 << 20;
	unsigned char *host = malloc(big);
	void *a = NULL, *b = NULL;
	unsigned long sum = 0;
	int dev = -1;

	for (size_t i = 0; i < big; i++) {
		host[i] = (unsigned char)(i * 31u);
	}
	cmalloc(&a, big);
	cmalloc(&b, big);
	for (int i = 0; i < 10; i++) {
		getdev(&dev);
	}
	int usr1_at = argc > 4 ? atoi(argv[4]) : -1;
	for (int s = 0; s < steps; s++) {
		struct dim3_ blk = {128, 1, 1};
		if (s == usr1_at) {
			raise(SIGUSR1);
		}
		nvtxRangePushA("step");
		cmemcpy(a, host, big, 1 /* HtoD */);
		launch("conv_fwd", (struct dim3_){10, 1, 1}, blk, NULL, 0,
		       NULL);
		launch("relu", (struct dim3_){2, 1, 1}, blk, NULL, 0, NULL);
		launch("conv_bwd", (struct dim3_){20, 1, 1}, blk, NULL, 0,
		       NULL);
		cmemset(b, s, 65536);
		cmemcpy(host, b, 4096, 2 /* DtoH */);
		csync();
		nvtxRangePop();
		for (int i = 0; i < 4096; i++) {
			sum += host[i];
		}
	}
	cfree(a);
	cfree(b);
	printf("device %d, %d steps, checksum %lu\n", dev, steps, sum);
	free(host);
	return 0;
}
