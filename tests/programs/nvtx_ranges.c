/*
 * nvtx_ranges - a CPU-only program annotated with the NVTX v3 headers.
 *
 * usage: nvtx_ranges N
 * Main thread: one start/end range "epoch" around N "step" ranges (push/
 * pop), each holding an "inner" range; a mark "tick" every 10th step; N
 * "forward" ranges in domain "trainer" with a registered string. A second
 * thread pushes N/2 "worker" ranges. Then N ranges named from one buffer,
 * "batch 0" and "batch 1" by turns. Names its main thread "nvtx-main" and
 * category 1 "io". Prints "done N".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static int n;
static volatile unsigned long sink;

static void work(int k)
{
	for (int i = 0; i < k; i++) {
		sink += (unsigned long)i * 7u;
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < n / 2; i++) {
		nvtxRangePushA("worker");
		work(100);
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	n = argc > 1 ? atoi(argv[1]) : 100;
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "nvtx-main");
	nvtxNameCategoryA(1, "io");
	nvtxDomainHandle_t dom = nvtxDomainCreateA("trainer");
	nvtxStringHandle_t fwd = nvtxDomainRegisterStringA(dom, "forward");
	nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < n; i++) {
		nvtxRangePushA("step");
		nvtxRangePushA("inner");
		work(200);
		if (i % 10 == 0) {
			nvtxMarkA("tick");
		}
		nvtxRangePop();
		nvtxEventAttributes_t a = {0};
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.category = 1;
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = fwd;
		nvtxDomainRangePushEx(dom, &a);
		work(100);
		nvtxDomainRangePop(dom);
		nvtxRangePop();
	}
	/* One buffer, two messages by turns: each range keeps its own. */
	char buf[16];
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "batch %d", i % 2);
		nvtxRangePushA(buf);
		nvtxRangePop();
	}
	pthread_join(t, NULL);
	nvtxRangeEnd(epoch);
	nvtxDomainDestroy(dom);
	printf("done %d\n", n);
	return 0;
}
