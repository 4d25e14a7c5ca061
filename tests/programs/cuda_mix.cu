// cuda_mix - a known mix of kernels and copies, built with nvcc (static
// cudart, nvcc's default, and -cudart shared).
//
// usage: cuda_mix [ROUNDS]   (default 10)
// Per round: scale<<<64,256>>> twice and add<<<32,256>>> once; then one
// cudaMemset of 1 MiB, two 1 MiB HtoD copies before the rounds and one
// 1 MiB DtoH copy after them. Prints the expected counts and a checksum,
// or, without a usable GPU, one line naming the CUDA error (exit 0, so
// that the output can be compared with and without a profiler).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		x[i] *= a;
	}
}

__global__ void add(float *x, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		x[i] += y[i];
	}
}

static int check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		printf("no usable GPU: %s: %s\n", what, cudaGetErrorName(e));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const int n = 1 << 18; // 1 MiB of floats
	const size_t bytes = n * sizeof(float);
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	int count = 0;
	float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes);
	float *x = NULL, *y = NULL;

	if (check(cudaGetDeviceCount(&count), "cudaGetDeviceCount")) {
		return 0;
	}
	for (int i = 0; i < n; i++) {
		hx[i] = 1.0f;
		hy[i] = (float)(i % 7);
	}
	if (check(cudaMalloc(&x, bytes), "cudaMalloc") ||
	    check(cudaMalloc(&y, bytes), "cudaMalloc")) {
		return 0;
	}
	cudaMemcpy(x, hx, bytes, cudaMemcpyHostToDevice);
	cudaMemcpy(y, hy, bytes, cudaMemcpyHostToDevice);
	for (int r = 0; r < rounds; r++) {
		scale<<<64, 256>>>(x, 1.0f, n);
		scale<<<64, 256>>>(x, 1.0f, n);
		add<<<32, 256>>>(x, y, n);
	}
	cudaMemset(y, 0, bytes);
	cudaMemcpy(hx, x, bytes, cudaMemcpyDeviceToHost);
	if (check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
		return 0;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		sum += hx[i];
	}
	printf("kernels: scale=%d add=%d\n", 2 * rounds, rounds);
	printf("copies: htod=2 dtoh=1 memset=1 bytes=%zu\n", bytes);
	printf("checksum %.1f\n", sum);
	cudaFree(x);
	cudaFree(y);
	free(hx);
	free(hy);
	return 0;
}
