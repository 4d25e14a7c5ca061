/*
 * stack_low.c - a hooked zlib call made with little thread stack left,
 * for tests/integration/stack_low.sh.
 *
 *   stack_low FREE   a thread whose stack ends at a page with no access
 *                    uses it up until FREE bytes are left below its frame,
 *                    then calls low_fn -> crc32 once
 *
 * Prints the checksum and exits 0; running out of stack ends the process
 * by SIGSEGV.
 */
#include <alloca.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <zlib.h>

#define STACK_SIZE (256 * 1024)
#define GUARD	   4096

static const char data[] = "little stack left";
static char *stack_lo; /* the lowest usable byte */
static size_t free_bytes;
static unsigned long result;

__attribute__((noinline)) static unsigned long low_fn(void)
{
	unsigned long c = crc32(0L, (const Bytef *)data, sizeof(data) - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return c;
}

/* Uses the stack down to free_bytes above stack_lo, then calls low_fn. */
__attribute__((noinline)) static void *thread_fn(void *arg)
{
	char *sp = __builtin_frame_address(0);
	size_t used = (size_t)(sp - stack_lo) - free_bytes - 256;
	volatile char *pad = alloca(used);

	pad[0] = 0;
	result = low_fn();
	__asm__ volatile("" ::: "memory");
	return arg;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: stack_low FREE\n");
		return 64;
	}
	free_bytes = strtoul(argv[1], NULL, 0);
	char *base = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED || mprotect(base, GUARD, PROT_NONE) != 0) {
		return 65;
	}
	stack_lo = base + GUARD;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack_lo, STACK_SIZE - GUARD);
	if (pthread_create(&t, &attr, thread_fn, NULL) != 0) {
		return 66;
	}
	pthread_join(t, NULL);
	printf("crc32 %lx\n", result);
	return 0;
}
