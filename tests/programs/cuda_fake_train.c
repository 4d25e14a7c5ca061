/*
 * cuda_fake_train - a training-loop-shaped CUDA program for the fake
 * libcudart (tests/fakes/), loaded with dlopen as frameworks load theirs.
 *
 * usage: cuda_fake_train LIBCUDART STEPS [WAIT [USR1_AT]]
 *        cuda_fake_train none      (touches no CUDA at all)
 * Allocates two 1 MiB buffers, calls cudaGetDevice 10 times, then per step
 * (inside an NVTX range "step"): a 1 MiB HtoD copy, kernels conv_fwd
 * (grid 10), relu (grid 2), conv_bwd (grid 20), a 64 KiB memset, a 4 KiB
 * DtoH copy and cudaDeviceSynchronize. Frees both buffers. WAIT, after
 * loading the library and before the first call: a number of
 * milliseconds, or "cupti": until the fake libcupti says a profiler
 * enabled the kernel, copy, set and runtime records (at most 60 s).
 * USR1_AT raises SIGUSR1 (mxprof's dump signal) before that step. Prints
 * a checksum; with "none", prints whether libcupti is mapped and how many
 * threads run, once at least 3 do (mxprof's drain thread and its helper
 * beside the main one; at most 60 s) and 200 ms more have passed.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_activity.h>
#include <nvtx3/nvToolsExt.h>

#include "../fakes/fake.h"

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

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The path of the mapped libcupti in path (empty when there is none). */
static void cupti_mapped(char *path, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");

	path[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (p && strstr(p, "libcupti")) {
			p[strcspn(p, "\n")] = 0;
			snprintf(path, len, "%s", p);
			break;
		}
	}
	if (f) {
		fclose(f);
	}
}

static int threads_now(void)
{
	char line[512];
	int threads = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Threads: %d", &threads);
	}
	if (f) {
		fclose(f);
	}
	return threads;
}

static void report_nothing_loaded(void)
{
	char path[4096];

	for (int i = 0; i < 6000 && threads_now() < 3; i++) {
		sleep_ms(10);
	}
	sleep_ms(200); /* a few drain ticks */
	cupti_mapped(path, sizeof(path));
	printf("libcupti mapped: %d, threads: %d\n", path[0] != 0,
	       threads_now());
}

/* Waits until the fake libcupti says the kinds this program's records
 * need are enabled, at most 60 s. */
static void wait_for_cupti(void)
{
	static const int kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
				    CUPTI_ACTIVITY_KIND_MEMCPY,
				    CUPTI_ACTIVITY_KIND_MEMSET,
				    CUPTI_ACTIVITY_KIND_RUNTIME};
	fake_cupti_enabled_fn enabled = NULL;
	char path[4096];

	for (int i = 0; i < 6000; i++, sleep_ms(10)) {
		if (!enabled) {
			cupti_mapped(path, sizeof(path));
			void *h = path[0] ? dlopen(path, RTLD_NOW | RTLD_NOLOAD)
					  : NULL;
			enabled = h ? (fake_cupti_enabled_fn)dlsym(
					      h, "fake_cupti_enabled")
				    : NULL;
			if (!enabled) {
				continue;
			}
		}
		size_t k = 0;
		while (k < sizeof(kinds) / sizeof(kinds[0]) &&
		       enabled(kinds[k])) {
			k++;
		}
		if (k == sizeof(kinds) / sizeof(kinds[0])) {
			return;
		}
	}
	fprintf(stderr, "cuda_fake_train: CUPTI not enabled after 60 s\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "none") == 0) {
		report_nothing_loaded();
		return 0;
	}
	int steps = argc > 2 ? atoi(argv[2]) : 5;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	if (argc > 3 && strcmp(argv[3], "cupti") == 0) {
		wait_for_cupti();
	} else if (argc > 3) {
		sleep_ms(atol(argv[3]));
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
