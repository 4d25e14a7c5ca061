/*
 * cuda_fake_sync - every kind of CUDA synchronisation, once, on the fake
 * libcudart (tests/fakes/), loaded with dlopen as frameworks load theirs.
 *
 * usage: cuda_fake_sync LIBCUDART
 * Inside an NVTX range "step": creates streams A and B (CUPTI's ids 13 and
 * 14) and an event; launches "held_warmup" (grid 1; the fake keeps it
 * running until the next launch, so the two run back to back) and
 * "produce" (grid 20) on A, records the event on
 * A, makes B wait for it (cudaStreamWaitEvent), launches "consume" (grid 5)
 * on B, then waits for the event (cudaEventSynchronize), for stream B
 * (cudaStreamSynchronize) and for the device (cudaDeviceSynchronize).
 * Prints one line.
 */
#include <dlfcn.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

struct dim3_ {
	unsigned x, y, z;
};

typedef int (*launch_fn)(const void *, struct dim3_, struct dim3_, void **,
			 size_t, void *);
typedef int (*handle_fn)(void **);
typedef int (*record_fn)(void *, void *);
typedef int (*wait_fn)(void *, void *, unsigned);
typedef int (*one_fn)(void *);
typedef int (*none_fn)(void);

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!h) {
		fprintf(stderr, "usage: cuda_fake_sync LIBCUDART (%s)\n",
			dlerror());
		return 2;
	}
	launch_fn launch = (launch_fn)dlsym(h, "cudaLaunchKernel");
	handle_fn stream_create = (handle_fn)dlsym(h, "cudaStreamCreate");
	handle_fn event_create = (handle_fn)dlsym(h, "cudaEventCreate");
	record_fn event_record = (record_fn)dlsym(h, "cudaEventRecord");
	wait_fn stream_wait = (wait_fn)dlsym(h, "cudaStreamWaitEvent");
	one_fn event_sync = (one_fn)dlsym(h, "cudaEventSynchronize");
	one_fn stream_sync = (one_fn)dlsym(h, "cudaStreamSynchronize");
	one_fn event_destroy = (one_fn)dlsym(h, "cudaEventDestroy");
	none_fn device_sync = (none_fn)dlsym(h, "cudaDeviceSynchronize");
	if (!launch || !stream_create || !event_create || !event_record ||
	    !stream_wait || !event_sync || !stream_sync || !event_destroy ||
	    !device_sync) {
		fprintf(stderr, "cuda_fake_sync: %s lacks a call\n", argv[1]);
		return 2;
	}
	void *a, *b, *ev;
	struct dim3_ block = {64, 1, 1};
	int rc = 0;

	nvtxRangePushA("step");
	rc |= stream_create(&a);
	rc |= stream_create(&b);
	rc |= event_create(&ev);
	rc |= launch("held_warmup", (struct dim3_){1, 1, 1}, block, NULL, 0, a);
	rc |= launch("produce", (struct dim3_){20, 1, 1}, block, NULL, 0, a);
	rc |= event_record(ev, a);
	rc |= stream_wait(b, ev, 0);
	rc |= launch("consume", (struct dim3_){5, 1, 1}, block, NULL, 0, b);
	rc |= event_sync(ev);
	rc |= stream_sync(b);
	rc |= device_sync();
	rc |= event_destroy(ev);
	nvtxRangePop();
	printf("cuda_fake_sync: %s\n", rc ? "a call failed" : "done");
	return rc ? 1 : 0;
}
