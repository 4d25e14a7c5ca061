/*
 * hook_dlcaller.c - linked with libhookt3 before libhookt: ht3_open() once
 * (a RUNPATH-relative dlopen from a library), then N x ht_add, which
 * resolves to libhookt3's interposer and from there, through
 * dlsym(RTLD_NEXT), to libhookt's.
 */
#include <stdio.h>
#include <stdlib.h>

int ht3_open(void);
int ht_add(int a, int b);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long s = 0;

	printf("open %d\n", ht3_open());
	for (int i = 0; i < n; i++) {
		s += ht_add(i, 1);
	}
	printf("sum %ld\n", s);
	return 0;
}
