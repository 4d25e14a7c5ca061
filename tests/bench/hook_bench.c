/*
 * hook_bench.c - calls libhookb.so's hb_inc N times in a tight loop, R
 * rounds, and prints the best round as "ns/call X". Run as
 * hook_bench N R [PAUSE_MS [floor]]: PAUSE_MS of sleep after each round
 * lets a profiler's drain thread empty its buffers, so that rounds measure
 * recording into warm buffers rather than dropping or page faults. The
 * per-call cost a profiler adds is the difference from a run without it.
 *
 * "floor" times what any tool that records each call's start and end in
 * TSC ticks cannot avoid: two rdtsc around the call and a 32-byte store
 * into a ring, written inline, with no profiler loaded.
 *
 * "stub" times the least a tool that hooks the call at run time adds: the
 * loop calls through a pointer (as a patched GOT entry is) into hb_stub,
 * which does what any return-address trampoline must and nothing else. It
 * keeps rax and rdx, reads the TSC, saves the caller's return address in a
 * thread-local frame, calls hb_inc in the return address's slot (so the
 * stack arguments stay where they were), reads the TSC again and writes
 * the same 32-byte record. There is no check of any kind: no recursion
 * depth, no full ring, no longjmp, no signal handler, no error status.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

int hb_inc(int x);

struct rec {
	uint64_t t0, t1;
	uint32_t name, group, kind, arg;
};

/* Reached from hb_stub too, so not static. */
struct rec hb_ring[1 << 16] __attribute__((visibility("hidden")));
uint64_t hb_head __attribute__((visibility("hidden")));
int (*hb_real)(int) __attribute__((visibility("hidden"))) = hb_inc;
/* The stub's frames: the caller's return address, then the entry tick. */
__thread uint64_t hb_frames[2 * 64] __attribute__((visibility("hidden")));
__thread uint64_t *hb_sp __attribute__((visibility("hidden")));
int hb_stub(int x);

__asm__(".text\n"
	".p2align 4\n"
	".globl hb_stub\n"
	".hidden hb_stub\n"
	".type hb_stub, @function\n"
	"hb_stub:\n"
	"	pushq	%rax\n"
	"	pushq	%rdx\n"
	"	movq	%fs:hb_sp@tpoff, %r11\n"
	"	movq	16(%rsp), %rax\n"
	"	movq	%rax, 0(%r11)\n" /* the caller's return address */
	"	rdtsc\n"
	"	shlq	$32, %rdx\n"
	"	orq	%rdx, %rax\n"
	"	movq	%rax, 8(%r11)\n" /* t0 */
	"	addq	$16, %fs:hb_sp@tpoff\n"
	"	popq	%rdx\n"
	"	popq	%rax\n"
	"	leaq	8(%rsp), %rsp\n"
	"	call	*hb_real(%rip)\n" /* into the slot just freed */
	"	movq	%rax, %r8\n"
	"	movq	%rdx, %r9\n"
	"	rdtsc\n"
	"	shlq	$32, %rdx\n"
	"	orq	%rax, %rdx\n" /* t1 */
	"	movq	%fs:hb_sp@tpoff, %r11\n"
	"	subq	$16, %r11\n"
	"	movq	%r11, %fs:hb_sp@tpoff\n"
	"	movq	hb_head(%rip), %rax\n"
	"	leaq	1(%rax), %rcx\n"
	"	movq	%rcx, hb_head(%rip)\n"
	"	andq	$0xffff, %rax\n"
	"	shlq	$5, %rax\n"
	"	leaq	hb_ring(%rip), %rcx\n"
	"	addq	%rcx, %rax\n"
	"	movq	8(%r11), %rcx\n"
	"	movq	%rcx, 0(%rax)\n"
	"	movq	%rdx, 8(%rax)\n"
	"	movabsq	$0x200000001, %rcx\n"
	"	movq	%rcx, 16(%rax)\n"
	"	movq	$3, 24(%rax)\n"
	"	movq	%r8, %rax\n"
	"	movq	%r9, %rdx\n"
	"	pushq	0(%r11)\n"
	"	ret\n"
	".size hb_stub, . - hb_stub\n");

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	int pause_ms = argc > 3 ? atoi(argv[3]) : 0;
	int floor = argc > 4 && strcmp(argv[4], "floor") == 0;
	int stub = argc > 4 && strcmp(argv[4], "stub") == 0;
	int (*volatile through)(int) = hb_stub;
	double best = 1e300;
	uint64_t h = 0;
	int x = 0;

	hb_sp = hb_frames;

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		if (floor) {
			for (long i = 0; i < n; i++) {
				uint64_t a = __rdtsc();

				x = hb_inc(x);
				struct rec *p = &hb_ring[h++ & 0xffff];

				p->t0 = a;
				p->t1 = __rdtsc();
				p->name = 1;
				p->group = 2;
				p->kind = 3;
				p->arg = 0;
			}
		} else if (stub) {
			for (long i = 0; i < n; i++) {
				x = through(x);
			}
		} else {
			for (long i = 0; i < n; i++) {
				x = hb_inc(x);
			}
		}
		double dt = (now_ns() - t0) / (double)n;

		if (dt < best) {
			best = dt;
		}
		if (pause_ms > 0) {
			usleep((useconds_t)pause_ms * 1000);
		}
	}
	printf("ns/call %.2f (x=%d)\n", best, x);
	return 0;
}
