/*
 * test_hook.c - the hook engine's parts that run without patching the test
 * process: the ELF symbol lookup (preload/hook_elf.c), the shadow stack
 * (preload/hook_rt.c) driven through fake return-address slots, and the
 * MXPROF_HOOK parser's error path (preload/hook_spec.c, via hook_init()).
 *
 * A "slot" here is a word in an array standing for where a hooked call's
 * return address lives. Stacks grow down, so a deeper call has a lower
 * slot: slots[0] is the innermost, slots[3] the outermost.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "collector.h"
#include "hook.h"
#include "preload.h"
#include "ticks.h"

/* While noisy is set, clock_gettime() succeeds and leaves errno set to
 * ESTALE, as POSIX allows any successful call to do. The library's
 * ticks_now() calls it when ticks are not TSC cycles, and this test
 * program's definition is the one the library (linked in statically)
 * reaches. */
static int noisy;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	long r = syscall(SYS_clock_gettime, clk, ts);

	if (__atomic_load_n(&noisy, __ATOMIC_RELAXED)) {
		errno = ESTALE;
	}
	return (int)r;
}

struct find {
	const char *soname;
	void *addr;
	int type;
	const char *name;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	struct hook_dyn d;

	(void)size;
	if (hook_elf_dyn(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
			 &d) != 0 ||
	    !d.soname || strcmp(d.soname, f->soname) != 0) {
		return 0;
	}
	f->addr = hook_elf_lookup(info->dlpi_addr, &d, f->name, &f->type);
	return 1;
}

static void test_hook_elf_lookup_finds_what_dlsym_finds(void **state)
{
	struct find f = {"libc.so.6", NULL, 0, "getpid"};

	(void)state;
	dl_iterate_phdr(find_cb, &f);
	assert_non_null(f.addr);
	assert_ptr_equal(f.addr, (void *)getpid);
	assert_int_equal(f.type, STT_FUNC);
}

static void test_hook_elf_lookup_misses_unknown_names(void **state)
{
	struct find f = {"libc.so.6", (void *)1, 0, "no_such_function_here"};

	(void)state;
	dl_iterate_phdr(find_cb, &f);
	assert_null(f.addr);
}

#if defined(__x86_64__)

static void setup_fn(void)
{
	ring_set_quiet(1); /* records go nowhere: no collector here */
	hook_table_real[0] = (void *)0x1000;
	hook_table_real[1] = (void *)0x2000;
}

/* The %rbx a fake caller whose return address is at slot had: the shadow
 * stack keeps it with the frame, and leave() checks it came back. */
static uintptr_t rbx_of(const uintptr_t *slot)
{
	return (uintptr_t)slot ^ 0xb0b0;
}

/* What stub idx does around hook_rt_enter(): a timed call's slot gets the
 * stub's exit address. Returns hook_rt_enter()'s result. */
static int enter(uint32_t idx, uintptr_t *slot)
{
	int timed = hook_rt_enter(idx, slot, rbx_of(slot), 0);

	if (timed) {
		*slot = hook_exit_addr(idx);
	}
	return timed;
}

/* What hook_tramp_leave does with hook_rt_exit(): returns the caller's
 * address, after checking that the caller's %rbx came back with it. */
static uintptr_t leave(uintptr_t *slot)
{
	struct hook_rt_ret r = hook_rt_exit(slot, 0);

	assert_true(r.rbx == rbx_of(slot));
	return r.ret;
}

/* The rel32 target of the 5- or 6-byte instruction at code + at. */
static const unsigned char *rel32_target(const unsigned char *code, int at,
					 int len)
{
	int32_t rel;

	memcpy(&rel, code + at + len - 4, sizeof(rel));
	return code + at + len + rel;
}

/* hook_abi.h's offsets are what the assembler made of the stubs. */
static void test_hook_stubs_match_the_documented_layout(void **state)
{
	static const uint32_t idx[] = {0, 1, 777, HOOK_MAX - 1};

	(void)state;
	for (size_t k = 0; k < sizeof(idx) / sizeof(*idx); k++) {
		const unsigned char *c =
			(const unsigned char *)hook_tramp_stubs +
			(size_t)idx[k] * HOOK_STUB_SIZE;

		assert_int_equal(c[0], 0x83); /* cmpl $0, state_api_recording */
		assert_int_equal(c[1], 0x3d);
		int32_t disp; /* then an imm8 of 0: relative to byte 7 */

		memcpy(&disp, c + 2, sizeof(disp));
		assert_int_equal(c[6], 0);
		assert_ptr_equal(c + 7 + disp,
				 (const void *)&state_api_recording);
		assert_int_equal(c[7], 0x75); /* jne HOOK_STUB_ENTER */
		assert_int_equal(c[8], HOOK_STUB_ENTER - HOOK_STUB_JUMP);
		assert_int_equal(c[HOOK_STUB_JUMP],
				 0xff); /* jmp *hook_table_real[i] */
		assert_int_equal(c[HOOK_STUB_JUMP + 1], 0x25);
		assert_ptr_equal(rel32_target(c, HOOK_STUB_JUMP, 6),
				 (const void *)&hook_table_real[idx[k]]);
		/* call hook_tramp_enter */
		assert_int_equal(c[HOOK_STUB_ENTER], 0xe8);
		assert_ptr_equal(rel32_target(c, HOOK_STUB_ENTER, 5),
				 (const void *)hook_tramp_enter);
		assert_int_equal(HOOK_STUB_ENTER + 5, HOOK_STUB_RESUME);
		assert_int_equal(c[HOOK_STUB_RESUME], 0xe8); /* call 9 */
		assert_ptr_equal(rel32_target(c, HOOK_STUB_RESUME, 5),
				 c + HOOK_STUB_JUMP);
		assert_int_equal(HOOK_STUB_RESUME + 5, HOOK_STUB_EXIT);
		/* jmp hook_tramp_leave */
		assert_int_equal(c[HOOK_STUB_EXIT], 0xe9);
		assert_ptr_equal(rel32_target(c, HOOK_STUB_EXIT, 5),
				 (const void *)hook_tramp_leave);
		assert_true(HOOK_STUB_EXIT + 5 <= HOOK_STUB_SIZE);
		assert_true(hook_exit_addr(idx[k]) ==
			    (uintptr_t)(c + HOOK_STUB_EXIT));
	}
}

static void test_hook_rt_exit_returns_the_saved_address(void **state)
{
	uintptr_t slot = 0x1234;

	(void)state;
	setup_fn();
	assert_int_equal(enter(0, &slot), 1);
	assert_true(slot == hook_exit_addr(0));
	assert_true(leave(&slot) == 0x1234);
}

static void test_hook_rt_nested_calls_return_in_order(void **state)
{
	uintptr_t slots[3] = {0x10, 0x11, 0x12};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	enter(0, &slots[2]);
	enter(1, &slots[1]);
	enter(0, &slots[0]);
	assert_true(leave(&slots[0]) == 0x10);
	assert_true(leave(&slots[1]) == 0x11);
	assert_true(leave(&slots[2]) == 0x12);
	assert_true(hook_rt_lost() == lost);
}

static void test_hook_rt_exit_drops_frames_a_longjmp_skipped(void **state)
{
	uintptr_t slots[3] = {0x20, 0x21, 0x22};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	enter(0, &slots[2]);
	enter(0, &slots[1]);
	enter(0, &slots[0]);
	/* A longjmp left the two inner calls; the outer one returns. */
	assert_true(leave(&slots[2]) == 0x22);
	assert_true(hook_rt_lost() == lost + 2);
}

static void test_hook_rt_entry_drops_frames_below_a_new_call(void **state)
{
	uintptr_t slots[3] = {0x30, 0x31, 0x32};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	enter(0, &slots[1]);
	slots[1] = 0x99; /* longjmp'ed out; the stack was reused since */
	enter(1, &slots[2]);
	assert_true(hook_rt_lost() == lost + 1);
	assert_true(leave(&slots[2]) == 0x32);
}

static void test_hook_rt_frame_on_another_stack_survives(void **state)
{
	uintptr_t slots[3] = {0x40, 0x41, 0x42};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	/* A call interrupted by a signal whose handler runs on a
	 * sigaltstack at a higher address: the interrupted frame's slot
	 * still holds its exit address, so it is live. */
	enter(0, &slots[0]);
	enter(1, &slots[2]);
	assert_true(leave(&slots[2]) == 0x42);
	assert_true(leave(&slots[0]) == 0x40);
	assert_true(hook_rt_lost() == lost);
}

static void test_hook_rt_frame_not_yet_armed_survives(void **state)
{
	uintptr_t slots[3] = {0x70, 0x71, 0x72};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	/* A signal lands between the entry path and the stub's call, and
	 * its handler, on a sigaltstack above, calls a hooked function: the
	 * interrupted frame's slot holds the resume address, and it is
	 * live. */
	assert_int_equal(hook_rt_enter(0, &slots[0], rbx_of(&slots[0]), 0), 1);
	assert_true(slots[0] == hook_resume_addr(0));
	enter(1, &slots[2]);
	assert_true(leave(&slots[2]) == 0x72);
	slots[0] = hook_exit_addr(0); /* the stub's call */
	assert_true(leave(&slots[0]) == 0x70);
	assert_true(hook_rt_lost() == lost);
}

/* An exception thrown through the inner of two hooked calls and caught
 * between them: the slots stay as they are (the unwinder walks the stubs
 * by their unwind information), the inner call is popped, and the outer
 * one returns as usual. */
static void test_hook_rt_unwind_pops_the_frames_the_catch_left(void **state)
{
	uintptr_t slots[3] = {0x50, 0x51, 0x52};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	enter(0, &slots[2]);
	enter(0, &slots[1]);
	hook_rt_unwind_begin();
	assert_true(slots[2] == hook_exit_addr(0));
	assert_true(slots[1] == hook_exit_addr(0));
	/* Caught between the two frames: the inner one is gone. */
	hook_rt_unwind_end((uintptr_t)&slots[2]);
	assert_true(slots[2] == hook_exit_addr(0));
	assert_true(leave(&slots[2]) == 0x52);
	assert_true(hook_rt_lost() == lost);
}

/* swapcontext: a call suspended on another stack (slots[0]) is dropped
 * when a call below it on the shadow stack returns first, and comes back
 * later: it returns to its own caller, untimed. */
static void test_hook_rt_call_back_from_another_stack_returns_home(void **state)
{
	uintptr_t slots[3] = {0x80, 0x81, 0x82};
	uint64_t lost = hook_rt_lost();

	(void)state;
	setup_fn();
	enter(0, &slots[2]); /* on the main stack */
	enter(1, &slots[0]); /* on the coroutine's, then it switches back */
	assert_true(leave(&slots[2]) == 0x82);
	assert_true(hook_rt_lost() == lost + 1);
	assert_true(leave(&slots[0]) == 0x80); /* resumed */
}

/* A green thread whose stack is copied out and back in: while it is out,
 * another one's call reuses the addresses and the suspended frame is
 * dropped as if a longjmp had left it; once copied back, its call returns
 * to its own caller. */
static void test_hook_rt_call_on_a_copied_stack_returns_home(void **state)
{
	uintptr_t slots[3] = {0x90, 0x91, 0x92};

	(void)state;
	setup_fn();
	enter(0, &slots[1]);
	slots[1] = 0x1234; /* copied out: another green thread's data */
	enter(1, &slots[2]);
	assert_true(leave(&slots[2]) == 0x92);
	slots[1] = hook_exit_addr(0); /* copied back in */
	assert_true(leave(&slots[1]) == 0x91);
	/* Taken back: a second return through the same slot is unknown. */
}

/* In a thread of its own (its limbo holds nothing): one timed call, then
 * a return through a slot no frame ever owned. */
static void *unknown_return_thread(void *p)
{
	uintptr_t slot = 0xa0, other = hook_exit_addr(1);

	enter(1, &slot);
	leave(&slot);
	hook_rt_exit(&other, 0);
	return p;
}

/* A return through a slot no frame ever owned leaves no address to
 * return to: one line, and the process stops (in a child here). */
static void test_hook_rt_unknown_return_stops_with_one_line(void **state)
{
	int fds[2];
	char buf[512] = "";
	int st = 0;

	(void)state;
	setup_fn();
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t t;

		dup2(fds[1], 2);
		if (pthread_create(&t, NULL, unknown_return_thread, NULL) ==
		    0) {
			pthread_join(t, NULL);
		}
		_exit(0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);

	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(n > 0);
	assert_non_null(strstr(buf, "its caller's address is lost"));
	assert_int_equal(strchr(buf, '\n') - buf, n - 1); /* one line */
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

static void test_hook_rt_overflow_calls_through_untimed(void **state)
{
	static uintptr_t slots[258];
	uint64_t over = hook_rt_overflows();

	(void)state;
	setup_fn();
	for (int i = 257; i >= 0; i--) {
		slots[i] = 0x6000 + (uintptr_t)i;
		assert_int_equal(enter(0, &slots[i]), i >= 2);
	}
	assert_true(hook_rt_overflows() == over + 2);
	assert_true(slots[1] == 0x6001); /* untouched: not timed */
	assert_true(slots[0] == 0x6000);
	for (int i = 2; i < 258; i++) {
		assert_true(leave(&slots[i]) == 0x6000 + (uintptr_t)i);
	}
}

struct tsc_case {
	int tsc;	 /* ticks_use_tsc while the thread runs */
	int visible;	 /* out: hook_rt_tls.end set after its first call */
	uintptr_t back;	 /* out: what hook_rt_exit() returned */
	uintptr_t armed; /* out: the slot while the call ran */
};

static void *tsc_thread(void *p)
{
	struct tsc_case *c = p;
	uintptr_t slot = 0x7777;

	ticks_use_tsc.on = c->tsc;
	enter(1, &slot);
	c->visible = hook_rt_tls.end != NULL;
	c->armed = slot;
	c->back = hook_rt_exit(&slot, 0).ret;
	return NULL;
}

/* The trampolines' fast paths read TSC ticks themselves, so they see a
 * thread's shadow stack only when ticks are TSC cycles; otherwise every
 * call takes the general path, which works the same. */
static void test_hook_rt_trampolines_see_the_stack_only_with_tsc(void **state)
{
	int saved = ticks_use_tsc.on;

	(void)state;
	setup_fn();
	for (int tsc = 0; tsc < 2; tsc++) {
		struct tsc_case c = {tsc, -1, 0, 0};
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, tsc_thread, &c), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		ticks_use_tsc.on = saved;
		assert_int_equal(c.visible, tsc);
		assert_true(c.armed == hook_exit_addr(1));
		assert_true(c.back == 0x7777);
	}
}

struct errno_case {
	int entry;  /* out: errno after hook_rt_enter(), set 1234 before */
	int exit;   /* out: errno after hook_rt_exit(), set 4321 before */
	int unwind; /* out: errno after an unwind's begin and end, set 77 */
	uintptr_t back;
};

static void *errno_thread(void *p)
{
	struct errno_case *c = p;
	uintptr_t slot = 0x8888, slot2 = 0x9999;

	ticks_use_tsc.on = 0; /* every call takes the C paths */
	__atomic_store_n(&noisy, 1, __ATOMIC_RELAXED);
	errno = 1234;
	enter(0, &slot); /* the thread's first: maps its stack too */
	c->entry = errno;
	errno = 4321; /* what the hooked function leaves */
	c->back = hook_rt_exit(&slot, 0).ret;
	c->exit = errno;
	enter(1, &slot2);
	errno = 77;
	hook_rt_unwind_begin();
	hook_rt_unwind_end((uintptr_t)&slot2 + 1); /* the frame is gone */
	c->unwind = errno;
	__atomic_store_n(&noisy, 0, __ATOMIC_RELAXED);
	return NULL;
}

/* The trampolines' general paths call libc, which may set errno even when
 * it succeeds: the program still sees errno as it left it on entry, and as
 * the hooked function left it on exit. */
static void test_hook_rt_general_paths_keep_errno(void **state)
{
	int saved = ticks_use_tsc.on;
	struct errno_case c = {0, 0, 0, 0};
	pthread_t t;

	(void)state;
	setup_fn();
	assert_int_equal(pthread_create(&t, NULL, errno_thread, &c), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	ticks_use_tsc.on = saved;
	assert_int_equal(c.entry, 1234);
	assert_int_equal(c.exit, 4321);
	assert_true(c.back == 0x8888);
	assert_int_equal(c.unwind, 77);
}

#endif

static void test_hook_init_rejects_malformed_specs(void **state)
{
	static const char *const bad[] = {
		"libz.so", ":deflate", "libz.so:", "@nosuch", "a:b:c", ","};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(hook_init(bad[i]), -EINVAL);
	}
	assert_int_equal(hook_init("none"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] =
	{ cmocka_unit_test(test_hook_elf_lookup_finds_what_dlsym_finds),
	  cmocka_unit_test(test_hook_elf_lookup_misses_unknown_names),
#if defined(__x86_64__)
	  cmocka_unit_test(test_hook_stubs_match_the_documented_layout),
	  cmocka_unit_test(test_hook_rt_exit_returns_the_saved_address),
	  cmocka_unit_test(
		  test_hook_rt_trampolines_see_the_stack_only_with_tsc),
	  cmocka_unit_test(test_hook_rt_nested_calls_return_in_order),
	  cmocka_unit_test(test_hook_rt_exit_drops_frames_a_longjmp_skipped),
	  cmocka_unit_test(test_hook_rt_entry_drops_frames_below_a_new_call),
	  cmocka_unit_test(test_hook_rt_frame_on_another_stack_survives),
	  cmocka_unit_test(test_hook_rt_frame_not_yet_armed_survives),
	  cmocka_unit_test(test_hook_rt_unwind_pops_the_frames_the_catch_left),
	  cmocka_unit_test(
		  test_hook_rt_call_back_from_another_stack_returns_home),
	  cmocka_unit_test(test_hook_rt_call_on_a_copied_stack_returns_home),
	  cmocka_unit_test(test_hook_rt_unknown_return_stops_with_one_line),
	  cmocka_unit_test(test_hook_rt_overflow_calls_through_untimed),
	  cmocka_unit_test(test_hook_rt_general_paths_keep_errno),
#endif
	  cmocka_unit_test(test_hook_init_rejects_malformed_specs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
