/* stack_dl.c - a library stack_chain loads with dlopen: dl_outer ->
 * dl_inner -> crc32. */
#include <zlib.h>

static const char data[] = "loaded later";

__attribute__((noinline)) static unsigned long dl_inner(int i)
{
	unsigned long c = crc32(0L, (const Bytef *)data, sizeof(data) - 1 - i);
	__asm__ volatile("" ::: "memory");
	return c;
}

__attribute__((visibility("default"))) unsigned long dl_outer(int i)
{
	unsigned long c = dl_inner(i);
	__asm__ volatile("" ::: "memory");
	return c;
}
