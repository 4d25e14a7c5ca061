/*
 * hook_tramp.S - the trampolines that time hooked C API calls (x86-64).
 *
 * A patched GOT entry points at stub i (layout in hook_abi.h). When the
 * profiler is stopped the stub costs a compare and its own indirect jump,
 * so the stack and every register are exactly as the caller left them.
 *
 * When it records:
 *  1. The stub calls hook_tramp_enter, which finds i from
 *     its own return address, pushes a shadow frame (the slot where the
 *     caller's return address lives, that address, the entry tick, i, the
 *     caller's %rbx), points %rbx at it, and returns with the slot popped
 *     off the stack. Every argument register is kept: rdi rsi rdx rcx r8
 *     r9 r10, rax (the count of vector registers a varargs call uses) and
 *     xmm0-xmm7.
 *  2. The stub's `call 9` puts its own next instruction, stub + 25, in the
 *     slot, and jumps to the real function, which runs with the original
 *     arguments and stack. Because a call wrote it, the CPU's return-stack
 *     buffer predicts the real function's `ret`, which otherwise would
 *     mispredict on every call.
 *  3. The real function returns to stub + 25, which jumps to
 *     hook_tramp_leave. That keeps rax, rdx, xmm0 and xmm1 (every
 *     integer, SSE and struct return), the x87 st0/st1 of a long double
 *     result, and errno; pops the frame; pushes one record into the
 *     thread's ring (with the call's stack id in its arg, and
 *     COLL_FLAG_STACK, when the entry captured one: one record a call
 *     either way); puts the caller's %rbx back; and returns to the
 *     caller with a `ret`, which the return-stack buffer predicts as
 *     well.
 *
 * Unwinding: while the real function runs, its return address is the
 * stub's exit, and the caller's return address is only in the shadow
 * frame, in thread-local memory that no unwind rule can reach (DWARF
 * expressions have no thread pointer). So from step 1 to step 3 %rbx holds
 * the shadow frame's address, and the frame keeps the caller's %rbx:
 * %rbx is callee-saved, so the real function returns it intact, and every
 * unwinder (gdb, libgcc's for backtrace() and C++ exceptions, libunwind)
 * recovers its value at the stub from the real function's own rules. The
 * stubs' and the trampolines' unwind information then finds the caller's
 * return address and %rbx in that frame, and a backtrace or an exception
 * walks through a hooked call as if it were a direct one. hook_tramp_leave
 * puts the caller's %rbx back before it returns.
 *
 * Each of the two does the common case in a few dozen instructions: it
 * reads the TSC itself, touches no vector or x87 register and calls
 * nothing. Anything else (a thread's first call, a full or stale shadow
 * stack, a quiet thread, a full ring) goes to a general path that saves
 * what it must and calls hook_rt_enter() or hook_rt_exit(), which read
 * ticks_now(). When ticks are not TSC cycles, the end of the shadow stack
 * the trampolines see (hook_rt_tls.end) stays NULL, so every call takes
 * the general paths.
 *
 * Elsewhere this file is empty, and hook.c says once that hooking is not
 * available.
 */
#if defined(__x86_64__)

#include "hook_abi.h"
#include "ring_abi.h"

	.text

/* ---- unwind information ---------------------------------------------------
 * DW_CFA_expression (0x10) rules that find a register's saved value at
 * HOOK_FRAME_RET or HOOK_FRAME_RBX past the shadow frame whose address is in
 * DWARF register REG (0 rax, 3 rbx, 11 r11): DW_OP_breg<REG> (0x70 + REG)
 * with a one-byte SLEB128 offset. 16 is the return-address column.
 */
#define CFI_RA_IN_FRAME(reg)                                                  \
	.cfi_escape 0x10, 16, 2, 0x70 + (reg), HOOK_FRAME_RET
#define CFI_RBX_IN_FRAME(reg)                                                 \
	.cfi_escape 0x10, 3, 2, 0x70 + (reg), HOOK_FRAME_RBX

/* A timed call's stub, with %rsp where the stub's caller will have it
 * (just above the slot) plus BYTES: the caller's %rsp is the CFA - 8, not
 * the CFA itself, so that the stub's frame has a CFA of its own. Without
 * that the stub and its caller would share one, as the stub has no stack
 * and the hooked function's return address sits where the caller's was,
 * and an unwinder that tells frames apart by their CFA (libgcc's phase 2
 * of an exception does) would take the one for the other. */
#define CFI_TIMED(bytes)                                                      \
	.cfi_def_cfa_offset 8 + (bytes);                                       \
	.cfi_val_offset %rsp, -8;                                              \
	CFI_RA_IN_FRAME(3);                                                    \
	CFI_RBX_IN_FRAME(3)

/* After a push of the caller's return address: the usual rules again. */
#define CFI_RETURNING                                                         \
	.cfi_def_cfa_offset 8;                                                 \
	.cfi_restore %rsp;                                                     \
	.cfi_offset %rip, -8

/* ---- the stubs: HOOK_MAX of HOOK_STUB_SIZE bytes each ---------------------
 * Each stub jumps to its own function through its own indirect jump, so
 * that the branch predictor keeps one target per hooked function. The
 * offsets are checked by test_hook.c.
 *
 * Each stub has its own FDE. Up to and during its call of hook_tramp_enter
 * it is the caller's callee with the return address on the stack: the
 * default rules. From HOOK_STUB_RESUME on the call is timed: the stub owns
 * no stack, and %rbx holds the shadow frame, where the caller's return
 * address and %rbx are (CFI_TIMED).
 */
	.p2align 5
	.globl	hook_tramp_stubs
	.hidden	hook_tramp_stubs
	.type	hook_tramp_stubs, @function
hook_tramp_stubs:
	.set	hook_i, 0
	.rept	HOOK_MAX
	.p2align 5
	.cfi_startproc
	cmpl	$0, state_api_recording(%rip)
	jne	1f
0:	jmpq	*(hook_table_real + 8 * hook_i)(%rip)
1:	call	hook_tramp_enter
	CFI_TIMED(0)
	call	0b
	jmp	hook_tramp_leave
	.cfi_endproc
	.set	hook_i, hook_i + 1
	.endr
	.size	hook_tramp_stubs, . - hook_tramp_stubs

/* ---- entry ---------------------------------------------------------------
 * Called by a stub while recording: (%rsp) is the stub's resume address
 * (stub + HOOK_STUB_RESUME), 8(%rsp) the hooked call's return address (the
 * slot); %rsp % 16 == 0.
 *
 * Returns to the stub in one of two ways. Timed: the resume address is
 * moved into the slot and popped from there, so the stub resumes with the
 * slot free for its `call`, and %rbx points at the new shadow frame, which
 * keeps the caller's %rbx. Not timed (the shadow stack is full, or could
 * not be mapped): it returns to stub + HOOK_STUB_JUMP, which jumps to the
 * real function with the stack and %rbx untouched.
 *
 * The TSC path takes the common case: the thread has a shadow stack with room
 * (top < end, which fails while either is NULL), no call stacks are captured
 * (MXPROF_STACKS: the general path captures them), and the frame below its top
 * is live because its slot lies above this call's (the base frame's always
 * does).
 * Two pushes give the registers rdtsc writes; the resume address is then at
 * 16(%rsp) and the slot at 24(%rsp). Frames are published in the same order as
 * hook_rt_enter() does, for the same signal-handler reasons: the top moves past
 * a frame whose slot says "building" (stored before and after the move), and
 * the slot holds the resume address before the frame names it, and the exit
 * address from the stub's call on, so a handler (even one on a sigaltstack
 * above this stack) always sees a live frame's slot hold one of the two.
 * Anything else goes to .Lenter_any, which calls hook_rt_enter().
 *
 * Unwind information: until the slot is overwritten, this is the stub's
 * callee (default rules, then the stub's). Once the caller's return
 * address has left the slot, the stub's rules for its call site would be
 * wrong, so the rules describe the stub's caller directly: its stack
 * pointer is just above the slot, and its return address is in the shadow
 * frame (reached through whichever register holds it) or, on the general
 * path, in a copy on this function's stack.
 */
	.p2align 4
	.globl	hook_tramp_enter
	.hidden	hook_tramp_enter
	.type	hook_tramp_enter, @function
hook_tramp_enter:
	.cfi_startproc
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	.cfi_remember_state
	movq	hook_rt_tls@gottpoff(%rip), %r11
	/* The end before the top: a signal handler may make the thread's
	 * shadow stack between the two loads (top first, then end), and a
	 * NULL top read before it came would pass against its end. */
	movq	%fs:HOOK_TLS_END(%r11), %rdx
	movq	%fs:HOOK_TLS_TOP(%r11), %rax	/* f: the next free frame */
	cmpq	%rdx, %rax
	jae	.Lenter_other
	cmpl	$0, stack_depth(%rip)		/* a stack to capture */
	jne	.Lenter_other
	leaq	24(%rsp), %rdx			/* slot */
	cmpq	%rdx, (HOOK_FRAME_SLOT - HOOK_FRAME_SIZE)(%rax)
	jbe	.Lenter_other			/* maybe left by longjmp */
	movq	$-1, HOOK_FRAME_SLOT(%rax)	/* f->slot = building */
	addq	$HOOK_FRAME_SIZE, %fs:HOOK_TLS_TOP(%r11)	/* claimed */
	movq	$-1, HOOK_FRAME_SLOT(%rax)
	movq	(%rdx), %r11
	movq	%r11, HOOK_FRAME_RET(%rax)	/* f->ret */
	movq	%rbx, HOOK_FRAME_RBX(%rax)	/* f->rbx */
	movq	16(%rsp), %r11
	movq	%r11, (%rdx)			/* *slot = resume address */
	.cfi_def_cfa_offset 32			/* the stub's caller: slot + 8 */
	CFI_RA_IN_FRAME(0)
	leaq	hook_tramp_stubs(%rip), %rdx
	subq	%rdx, %r11
	movq	%r11, HOOK_FRAME_AT(%rax)	/* f->at, f->unwinding = 0 */
	movl	$0, HOOK_FRAME_SID(%rax)	/* f->sid: no stack */
	movq	%rax, %r11
	CFI_RA_IN_FRAME(11)
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, HOOK_FRAME_T0(%r11)	/* f->t0 */
	leaq	24(%rsp), %rdx
	movq	%rdx, HOOK_FRAME_SLOT(%r11)	/* f->slot = slot: live */
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	movq	%r11, %rbx			/* the stub's view: %rbx = f */
	CFI_RA_IN_FRAME(3)
	CFI_RBX_IN_FRAME(3)
	leaq	8(%rsp), %rsp
	.cfi_adjust_cfa_offset -8
	ret

.Lenter_other:
	.cfi_restore_state
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8

.Lenter_any:
	/* Every argument register is saved around the C call, and a copy of
	 * the caller's return address: 208 bytes keep %rsp 16-byte aligned
	 * (it is aligned here) and put the copy at 192, the resume address
	 * at 208, the slot at 216. */
	subq	$208, %rsp
	.cfi_adjust_cfa_offset 208
	movaps	%xmm0, 0(%rsp)
	movaps	%xmm1, 16(%rsp)
	movaps	%xmm2, 32(%rsp)
	movaps	%xmm3, 48(%rsp)
	movaps	%xmm4, 64(%rsp)
	movaps	%xmm5, 80(%rsp)
	movaps	%xmm6, 96(%rsp)
	movaps	%xmm7, 112(%rsp)
	movq	%rdi, 128(%rsp)
	movq	%rsi, 136(%rsp)
	movq	%rdx, 144(%rsp)
	movq	%rcx, 152(%rsp)
	movq	%r8, 160(%rsp)
	movq	%r9, 168(%rsp)
	movq	%rax, 176(%rsp)
	movq	%r10, 184(%rsp)
	movq	216(%rsp), %r11
	movq	%r11, 192(%rsp)
	/* hook_rt_enter() moves the caller's address out of the slot: from
	 * here on the rules describe the stub's caller, through the copy.
	 * With MXPROF_STACKS it captures the call's stack first, from the
	 * caller on: its return address in the slot, %rbx and %rbp as it
	 * left them (both untouched so far). */
	.cfi_def_cfa_offset 224
	.cfi_offset %rip, -32

	movq	208(%rsp), %rdi			/* i from the resume address */
	leaq	hook_tramp_stubs+HOOK_STUB_RESUME(%rip), %rsi
	subq	%rsi, %rdi
	shrq	$HOOK_STUB_SIZE_LOG2, %rdi
	leaq	216(%rsp), %rsi
	movq	%rbx, %rdx
	movq	%rbp, %rcx
	call	hook_rt_enter
	movl	%eax, %r11d

	movaps	0(%rsp), %xmm0
	movaps	16(%rsp), %xmm1
	movaps	32(%rsp), %xmm2
	movaps	48(%rsp), %xmm3
	movaps	64(%rsp), %xmm4
	movaps	80(%rsp), %xmm5
	movaps	96(%rsp), %xmm6
	movaps	112(%rsp), %xmm7
	movq	128(%rsp), %rdi
	movq	136(%rsp), %rsi
	movq	144(%rsp), %rdx
	movq	152(%rsp), %rcx
	movq	160(%rsp), %r8
	movq	168(%rsp), %r9
	movq	176(%rsp), %rax
	movq	184(%rsp), %r10
	testl	%r11d, %r11d
	.cfi_remember_state
	jz	3f
	/* Timed: the new frame is the top one (a signal handler that ran
	 * since put the top back). The slot holds the resume address. */
	movq	hook_rt_tls@gottpoff(%rip), %r11
	movq	%fs:HOOK_TLS_TOP(%r11), %r11
	subq	$HOOK_FRAME_SIZE, %r11
	movq	%r11, %rbx			/* the stub's view: %rbx = f */
	CFI_RA_IN_FRAME(3)
	CFI_RBX_IN_FRAME(3)
	addq	$208, %rsp
	.cfi_def_cfa_offset 16
	leaq	8(%rsp), %rsp
	.cfi_def_cfa_offset 8
	ret
	/* Not timed: the slot still holds the caller's address. */
3:	.cfi_restore_state
	addq	$208, %rsp
	.cfi_def_cfa_offset 8
	.cfi_offset %rip, -8	/* not .cfi_restore: libgcc reads that as "same" */
	subq	$(HOOK_STUB_RESUME - HOOK_STUB_JUMP), (%rsp)
	ret
	.cfi_endproc
	.size	hook_tramp_enter, . - hook_tramp_enter

/* ---- exit -----------------------------------------------------------------
 * Jumped to by stub + HOOK_STUB_EXIT, where the hooked function returned:
 * %rsp is 16-byte aligned and the slot is at -8(%rsp); %rbx is the shadow
 * frame's address, as the function kept it. At this point only rax, rdx,
 * xmm0, xmm1, st0 and st1 can hold the result; rcx, rsi, rdi and r8-r11
 * are free.
 *
 * The TSC path takes the common case: ticks are TSC cycles (top <= end), the
 * frame below the top owns this slot, and the thread's ring is there (not
 * quiet) and has room by its cached tail. It then claims, writes and publishes
 * a slot with the same steps as ring_push() (see ring.h: the ring's depth
 * counts pushes in progress and the claim is one instruction, so a signal
 * handler that records in between never overwrites or publishes our slot), pops
 * the frame, puts the caller's %rbx back, and returns to the caller. Anything
 * else, including a ring that looks full and a function whose end ends a
 * step (its entry's marker byte), goes to .Lleave_any, which calls
 * hook_rt_exit() with the frame still in place.
 *
 * Unwind information: the stub's timed rules (the return address and the
 * caller's %rbx are in the frame %rbx points at) until they are moved into
 * registers for the return.
 */
	.p2align 4
	.globl	hook_tramp_leave
	.hidden	hook_tramp_leave
	.type	hook_tramp_leave, @function
hook_tramp_leave:
	.cfi_startproc
	CFI_TIMED(0)
	movq	%rax, %r8
	movq	%rdx, %r9
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx			/* t1 */
	movq	hook_rt_tls@gottpoff(%rip), %r11
	movq	%fs:HOOK_TLS_TOP(%r11), %rdi	/* f + 1 */
	cmpq	%fs:HOOK_TLS_END(%r11), %rdi
	ja	.Lleave_other			/* not TSC ticks: end is NULL */
	leaq	-8(%rsp), %rax
	cmpq	%rax, (HOOK_FRAME_SLOT - HOOK_FRAME_SIZE)(%rdi)
	jne	.Lleave_other
	/* A step's marker (MXPROF_STEP) takes the C path, which ends the
	 * step after the record. */
	movl	(HOOK_FRAME_AT - HOOK_FRAME_SIZE)(%rdi), %eax
	leaq	hook_table_ents-HOOK_STUB_RESUME(%rip), %rsi
	cmpb	$0, HOOK_ENT_MARKER(%rsi,%rax)
	jne	.Lleave_other
	movq	ring_tls@gottpoff(%rip), %r10
	incl	%fs:RING_TLS_DEPTH(%r10)
	/* r, read once the depth is up: before, a signal handler's push could
	 * move the thread to a bigger ring (ring_push.c). */
	movq	%fs:RING_TLS_REC(%r10), %rcx
	testq	%rcx, %rcx
	jz	.Lleave_quiet
	movl	$1, %eax
	xaddq	%rax, %fs:RING_TLS_RESERVE(%r10)	/* h: claimed */
	movq	%rax, %rsi
	subq	%fs:RING_TLS_CACHED_TAIL(%r10), %rsi
	cmpq	%fs:RING_TLS_LIMIT(%r10), %rsi
	ja	.Lleave_full
.Lleave_write:
	andq	%fs:RING_TLS_MASK(%r10), %rax
	shlq	$REC_SIZE_LOG2, %rax
	leaq	RING_RECS(%rcx,%rax), %rax	/* the record */
	movq	%rdx, REC_T1(%rax)
	movq	(HOOK_FRAME_T0 - HOOK_FRAME_SIZE)(%rdi), %rdx
	movq	%rdx, REC_T0(%rax)
	movl	(HOOK_FRAME_AT - HOOK_FRAME_SIZE)(%rdi), %edx
	leaq	hook_table_ents-HOOK_STUB_RESUME(%rip), %rsi
	addq	%rsi, %rdx			/* e = &hook_table_ents[i] */
	movq	HOOK_ENT_NAME(%rdx), %rsi
	movq	%rsi, REC_NAME(%rax)		/* name, group */
	movq	HOOK_ENT_KIND(%rdx), %rsi
	testl	%r8d, %r8d
	jz	4f
	orq	HOOK_ENT_ON_ERROR(%rdx), %rsi
4:	movl	(HOOK_FRAME_SID - HOOK_FRAME_SIZE)(%rdi), %edx
	testl	%edx, %edx
	jz	7f
	shlq	$32, %rdx			/* arg: the stack's id */
	orq	$(REC_FLAG_STACK << 24), %rdx
	orq	%rdx, %rsi
7:	movq	%rsi, REC_KIND(%rax)		/* kind, cat, flags, arg */
	decl	%fs:RING_TLS_DEPTH(%r10)
	jnz	5f
	movq	%fs:RING_TLS_RESERVE(%r10), %rdx
	movq	%rdx, RING_HEAD(%rcx)		/* published */
5:	.cfi_remember_state
	movq	(HOOK_FRAME_RET - HOOK_FRAME_SIZE)(%rdi), %rsi
	.cfi_register %rip, %rsi
	movq	(HOOK_FRAME_RBX - HOOK_FRAME_SIZE)(%rdi), %rbx
	.cfi_same_value %rbx
	subq	$HOOK_FRAME_SIZE, %rdi
	movq	%rdi, %fs:HOOK_TLS_TOP(%r11)	/* the frame is popped */
	movq	%r8, %rax
	movq	%r9, %rdx
	pushq	%rsi
	CFI_RETURNING
	ret
	.cfi_restore_state

.Lleave_full:
	/* Past the limit by the cached tail: give slot h back, unless a signal
	 * handler has claimed a later slot since, which it could only have
	 * written with room, so h has room too. */
	movq	%rax, %rsi
	incq	%rax
	cmpxchgq %rsi, %fs:RING_TLS_RESERVE(%r10)
	je	6f
	movq	%rsi, %rax
	jmp	.Lleave_write
6:	decl	%fs:RING_TLS_DEPTH(%r10)	/* given back: end the push */
	jnz	.Lleave_other
	movq	%fs:RING_TLS_RESERVE(%r10), %rsi
	movq	%rsi, RING_HEAD(%rcx)
	/* The C path reloads the tail, and drops or blocks. */
	jmp	.Lleave_other
.Lleave_quiet:
	decl	%fs:RING_TLS_DEPTH(%r10)
.Lleave_other:
	movq	%r8, %rax
	movq	%r9, %rdx

/* Save area (96 bytes): xmm0 0, xmm1 16, rax 32, rdx 40, st0 48, st1 64,
 * the number of x87 values saved at 80. The x87 stack is empty unless the
 * function returned a long double (one value) or a complex long double
 * (two); TOP in the status word tells which, and only then are they
 * stored, because popping an empty x87 register would leave a NaN behind.
 */
.Lleave_any:
	subq	$96, %rsp
	.cfi_adjust_cfa_offset 96
	movaps	%xmm0, 0(%rsp)
	movaps	%xmm1, 16(%rsp)
	movq	%rax, 32(%rsp)
	movq	%rdx, 40(%rsp)
	movq	$0, 80(%rsp)
	fnstsw	%ax
	andl	$0x3800, %eax
	jz	2f
	cmpl	$0x3800, %eax		/* TOP == 7: one value */
	jne	3f
	fstpt	48(%rsp)
	movq	$1, 80(%rsp)
	jmp	2f
3:	cmpl	$0x3000, %eax		/* TOP == 6: two values */
	jne	2f
	fstpt	48(%rsp)
	fstpt	64(%rsp)
	movq	$2, 80(%rsp)
2:
	leaq	88(%rsp), %rdi		/* where the return address was */
	movq	32(%rsp), %rsi
	call	hook_rt_exit
	movq	%rax, %r11		/* the caller's return address */
	.cfi_register %rip, %r11
	movq	%rdx, %rbx		/* and its %rbx */
	.cfi_same_value %rbx

	movq	80(%rsp), %rax
	cmpq	$1, %rax
	jb	5f
	je	4f
	fldt	64(%rsp)
4:	fldt	48(%rsp)
5:
	movaps	0(%rsp), %xmm0
	movaps	16(%rsp), %xmm1
	movq	32(%rsp), %rax
	movq	40(%rsp), %rdx
	addq	$96, %rsp
	.cfi_adjust_cfa_offset -96
	pushq	%r11
	CFI_RETURNING
	ret
	.cfi_endproc
	.size	hook_tramp_leave, . - hook_tramp_leave

/* ---- calling a dl function "from" another object ------------------------
 * void *hook_tramp_call_as(fn, gadget, a, b, c, d): pushes our own resume
 * address, then gadget (a `ret` byte in the object fn should see as its
 * caller), and jumps to fn(a, b, c, d). fn returns into the gadget, whose
 * `ret` comes back to 1: below.
 */
	.p2align 4
	.globl	hook_tramp_call_as
	.hidden	hook_tramp_call_as
	.type	hook_tramp_call_as, @function
hook_tramp_call_as:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	movq	%rdi, %r11
	movq	%rsi, %r10
	movq	%rdx, %rdi
	movq	%rcx, %rsi
	movq	%r8, %rdx
	movq	%r9, %rcx
	subq	$8, %rsp
	leaq	1f(%rip), %rax
	pushq	%rax
	pushq	%r10
	jmpq	*%r11
1:
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	hook_tramp_call_as, . - hook_tramp_call_as

#endif /* __x86_64__ */

	.section .note.GNU-stack, "", @progbits
