/*
 * bind_main - calls that must reach the very function the dynamic linker
 * binds, hooked or not:
 *   bv_get  3 calls of the old version BV_1 through a lazy PLT entry
 *   bg_val  2 calls, the global scope's (libbindg.so)
 *   be_call 4 calls through a dlsym pointer into libbinde.so, loaded with
 *           RTLD_DEEPBIND, each calling its own dependency's bg_val
 *   bd_fn   5 calls through a dlsym pointer, 5 more from bu_read
 *   bd_name, bd_table: data, read through dlsym and through GLOB_DAT
 * Prints every result; the output must be the same under mxprof.
 */
#include <dlfcn.h>
#include <stdio.h>

__asm__(".symver bv_get, bv_get@BV_1");
int bv_get(void);
int bg_val(void);

static void *need(void *p, const char *what)
{
	if (!p) {
		printf("%s: %s\n", what, dlerror());
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char path[4096];
	int sum = 0;

	for (int i = 0; i < 3; i++) {
		sum += bv_get();
	}
	printf("bv_get x3 = %d\n", sum);
	printf("bg_val = %d %d\n", bg_val(), bg_val());

	snprintf(path, sizeof(path), "%s/libbinde.so", dir);
	void *e = need(dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_DEEPBIND),
		       path);
	if (!e) {
		return 1;
	}
	int (*be_call)(void) =
		(int (*)(void))need(dlsym(e, "be_call"), "be_call");
	for (int i = 0; i < 4; i++) {
		printf("be_call = %d\n", be_call());
	}

	snprintf(path, sizeof(path), "%s/libbindu.so", dir);
	void *u = need(dlopen(path, RTLD_NOW), path);
	if (!u) {
		return 1;
	}
	const char *name = need(dlsym(u, "bd_name"), "bd_name");
	const int *table = need(dlsym(u, "bd_table"), "bd_table");
	int (*bd_fn)(int) = (int (*)(int))need(dlsym(u, "bd_fn"), "bd_fn");
	int (*bu_read)(void) =
		(int (*)(void))need(dlsym(u, "bu_read"), "bu_read");
	if (!name || !table || !bd_fn || !bu_read) {
		return 1;
	}
	printf("bd_name = %s, bd_table[2] = %d\n", name, table[2]);
	for (int i = 0; i < 5; i++) {
		printf("bd_fn(%d) = %d, bu_read = %d\n", i, bd_fn(i),
		       bu_read());
	}
	return 0;
}
