/*
 * hooklib3.c - libhookt3.so, for the dl* caller semantics:
 *  - ht3_open() dlopen()s "libhookt4.so" by bare name; only libhookt3's
 *    own RUNPATH finds it, so glibc must see libhookt3 as the caller;
 *  - ht_add() interposes libhookt.so's ht_add and calls the next one
 *    through dlsym(RTLD_NEXT), which also depends on the caller.
 */
#include <dlfcn.h>
#include <stdio.h>

int ht3_open(void)
{
	void *h = dlopen("libhookt4.so", RTLD_NOW);
	int (*val)(void);

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return -1;
	}
	*(void **)&val = dlsym(h, "ht4_val");
	return val ? val() : -2;
}

int ht_add(int a, int b)
{
	static int (*next)(int, int);

	if (!next) {
		*(void **)&next = dlsym(RTLD_NEXT, "ht_add");
	}
	return next(a, b) * 10;
}
