// cuda_bench - the cost of one CUDA runtime call, for cuda_bench.sh.
//
// usage: cuda_bench [N]   (default 200000)
// Times N launches of an empty kernel and N cudaStreamQuery calls (a call
// that launches nothing), after a warm-up, and prints ns per call:
//   launch_ns <x>
//   query_ns <y>
// or "no usable GPU: ..." and exit status 3.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty() {}

static double now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);

	if (e != cudaSuccess || count == 0) {
		printf("no usable GPU: %s\n", cudaGetErrorName(e));
		return 3;
	}
	for (int i = 0; i < 1000; i++) {
		empty<<<1, 1>>>();
	}
	cudaDeviceSynchronize();
	double t0 = now_ns();
	for (int i = 0; i < n; i++) {
		empty<<<1, 1>>>();
		if (i % 1000 == 999) {
			cudaDeviceSynchronize(); // keep the launch queue short
		}
	}
	cudaDeviceSynchronize();
	double t1 = now_ns();
	for (int i = 0; i < n; i++) {
		cudaStreamQuery(0);
	}
	double t2 = now_ns();
	printf("launch_ns %.1f\nquery_ns %.1f\n", (t1 - t0) / n, (t2 - t1) / n);
	return 0;
}
