/*
 * hook_mxnet.c - calls the fake libmxnet.so: MXGetVersion once, then
 * MXNDArrayCreate N times, every third call failing, and MXGetLastError
 * after each failure.
 */
#include <stdio.h>
#include <stdlib.h>

int MXGetVersion(int *out);
int MXNDArrayCreate(int ndim, void **out);
const char *MXGetLastError(void);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 9;
	int v = 0, failed = 0;
	void *h;

	MXGetVersion(&v);
	for (int i = 0; i < n; i++) {
		if (MXNDArrayCreate(i % 3 == 2 ? -1 : i, &h) != 0) {
			failed++;
			if (i == 2) {
				printf("error: %s\n", MXGetLastError());
			} else {
				MXGetLastError();
			}
		}
	}
	printf("version %d failed %d\n", v, failed);
	return 0;
}
