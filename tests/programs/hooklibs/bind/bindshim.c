/* libbindshim.so: a preloaded dlopen interposer of the usual kind. It
 * prints each call and forwards to the next dlopen in line. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *dlopen(const char *file, int mode)
{
	static void *(*next)(const char *, int);
	const char *base = file ? strrchr(file, '/') : NULL;

	if (!next) {
		next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	}
	printf("shim: dlopen(%s)\n", base ? base + 1 : file ? file : "NULL");
	return next(file, mode);
}
