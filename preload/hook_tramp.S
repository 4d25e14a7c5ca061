/*
 * hook_tramp.S - the trampolines that time hooked C API calls (x86-64).
 *
 * A patched GOT entry points at stub i (layout in hook_abi.h). When the
 * profiler is stopped the stub costs a compare and its own indirect jump,
 * so the stack and every register are exactly as the caller left them.
 *
 * When it records:
 *  1. The stub calls hook_tramp_record, which finds i from its own return
 *     address, pushes a shadow frame (the slot where the caller's return
 *     address lives, that address, the entry tick, i) and returns with the
 *     slot popped off the stack. Every argument register is kept: rdi rsi
 *     rdx rcx r8 r9, rax (the count of vector registers a varargs call
 *     uses) and xmm0-xmm7. The common case is written here; anything else
 *     goes through hook_rt_enter().
 *  2. The stub's `call 9` puts its own next instruction, stub + 25, in the
 *     slot, and jumps to the real function, which runs with the original
 *     arguments and stack. Because a call wrote it, the CPU's return-stack
 *     buffer predicts the real function's `ret`, which otherwise would
 *     mispredict on every call.
 *  3. The real function returns to stub + 25, which jumps to
 *     hook_tramp_exit. That keeps rax, rdx, xmm0 and xmm1 (every integer,
 *     SSE and struct return), the x87 st0/st1 of a long double result, and
 *     errno; pops the frame; pushes one record into the thread's ring; and
 *     returns to the caller with a `ret`, which the return-stack buffer
 *     predicts as well. The common case touches no vector or x87 register
 *     and calls nothing; anything else goes through hook_rt_exit().
 *
 * Elsewhere this file is empty, and hook.c says once that hooking is not
 * available.
 */
#if defined(__x86_64__)

#include "hook_abi.h"
#include "ring_abi.h"

	.text

/* ---- the stubs: HOOK_MAX of HOOK_STUB_SIZE bytes each ---------------------
 * Each stub jumps to its own function through its own indirect jump, so
 * that the branch predictor keeps one target per hooked function. The
 * offsets are checked by test_hook.c.
 */
	.p2align 5
	.globl	hook_tramp_stubs
	.hidden	hook_tramp_stubs
	.type	hook_tramp_stubs, @function
hook_tramp_stubs:
	.set	hook_i, 0
	.rept	HOOK_MAX
	.p2align 5
	cmpl	$0, coll_recording(%rip)
	jne	1f
0:	jmpq	*(hook_real + 8 * hook_i)(%rip)
1:	call	hook_tramp_record
	call	0b
	jmp	hook_tramp_exit
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
 * slot free for its `call`. Not timed (the shadow stack is full, or could
 * not be mapped): it returns to stub + HOOK_STUB_JUMP, which jumps to the
 * real function with the stack untouched.
 *
 * The common case: the thread has a shadow stack with room, its top frame
 * is live (no longjmp to clean up after) and ticks are TSC cycles. Four
 * pushes give the registers it needs (rdtsc writes rax and rdx); the
 * resume address is then at 32(%rsp) and the slot at 40(%rsp). Frames are
 * published in the same order as hook_rt_enter() does, for the same
 * signal-handler reasons: in particular the slot holds the resume address
 * before the frame names it, and the exit address from the stub's call
 * on, so a handler (even one on a sigaltstack above this stack) always
 * sees a live frame's slot hold one of the two.
 */
	.p2align 4
	.type	hook_tramp_record, @function
hook_tramp_record:
	.cfi_startproc
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%rcx
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	.cfi_remember_state
	movq	32(%rsp), %r11			/* i from the resume address */
	leaq	hook_tramp_stubs+HOOK_STUB_RESUME(%rip), %rax
	subq	%rax, %r11
	shrq	$HOOK_STUB_SIZE_LOG2, %r11
	movq	ticks_use_tsc@GOTPCREL(%rip), %r10
	cmpl	$0, (%r10)
	je	.Lslow
	movq	hook_rt_stack@gottpoff(%rip), %r10
	movq	%fs:(%r10), %r10		/* s */
	testq	%r10, %r10
	jz	.Lslow
	movl	HOOK_STACK_DEPTH(%r10), %ecx	/* d = s->depth */
	cmpl	$HOOK_RT_DEPTH, %ecx
	jae	.Lslow
	leaq	40(%rsp), %rsi			/* slot */
	testl	%ecx, %ecx
	jz	2f
	/* The top frame f[d - 1] sits at 8 + 32 * (d - 1) = 32 * d - 24. */
	movl	%ecx, %eax
	shlq	$HOOK_FRAME_LOG2, %rax
	movq	(HOOK_STACK_FRAMES - 32 + HOOK_FRAME_SLOT)(%r10,%rax), %rdx
	cmpq	%rsi, %rdx
	ja	2f				/* an older frame: live */
	movl	(HOOK_STACK_FRAMES - 32 + HOOK_FRAME_IDX)(%r10,%rax), %eax
	shlq	$HOOK_STUB_SIZE_LOG2, %rax
	leaq	hook_tramp_stubs+HOOK_STUB_EXIT(%rip), %rcx
	addq	%rcx, %rax			/* its stub's exit address */
	movl	HOOK_STACK_DEPTH(%r10), %ecx
	cmpq	%rax, (%rdx)
	je	2f
	subq	$(HOOK_STUB_EXIT - HOOK_STUB_RESUME), %rax
	cmpq	%rax, (%rdx)			/* or its resume address */
	jne	.Lslow				/* left by longjmp */
2:
	movl	%ecx, %eax
	shlq	$HOOK_FRAME_LOG2, %rax
	leaq	HOOK_STACK_FRAMES(%r10,%rax), %rax	/* f = &s->f[d] */
	movq	$-1, HOOK_FRAME_SLOT(%rax)	/* f->slot = building */
	incl	%ecx
	movl	%ecx, HOOK_STACK_DEPTH(%r10)	/* s->depth = d + 1 */
	movq	$-1, HOOK_FRAME_SLOT(%rax)
	movq	(%rsi), %rcx
	movq	%rcx, HOOK_FRAME_RET(%rax)	/* f->ret */
	movq	%r11, HOOK_FRAME_IDX(%rax)	/* f->idx, f->restored = 0 */
	movq	32(%rsp), %rcx
	movq	%rcx, (%rsi)			/* *slot = resume address */
	.cfi_adjust_cfa_offset 8
	movq	%rax, %rcx
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, HOOK_FRAME_T0(%rcx)	/* f->t0 */
	movq	%rsi, HOOK_FRAME_SLOT(%rcx)	/* f->slot = slot */
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	leaq	8(%rsp), %rsp
	.cfi_adjust_cfa_offset -8
	ret

.Lslow:
	.cfi_restore_state
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	/* The C path saves every argument register: 192 bytes keep %rsp
	 * 16-byte aligned (it is aligned here) and put the slot at 200. */
	subq	$192, %rsp
	.cfi_adjust_cfa_offset 192
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

	movl	%r11d, %edi
	leaq	200(%rsp), %rsi
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
	addq	$192, %rsp
	.cfi_adjust_cfa_offset -192
	testl	%r11d, %r11d
	jz	3f
	movq	(%rsp), %r11
	movq	%r11, 8(%rsp)			/* *slot = resume address */
	.cfi_adjust_cfa_offset 8
	leaq	8(%rsp), %rsp
	.cfi_adjust_cfa_offset -8
	ret
3:	subq	$(HOOK_STUB_RESUME - HOOK_STUB_JUMP), (%rsp)
	ret
	.cfi_endproc
	.size	hook_tramp_record, . - hook_tramp_record

/* ---- exit -----------------------------------------------------------------
 * Jumped to by stub + HOOK_STUB_EXIT, where the hooked function returned:
 * %rsp is 16-byte aligned and the slot is at -8(%rsp). At this point only
 * rax, rdx, xmm0, xmm1, st0 and st1 can hold the result; rcx, rsi, rdi and
 * r8-r11 are free.
 *
 * The common case: ticks are TSC cycles, the top shadow frame owns this
 * slot, and the thread's ring exists, is not quiet and has room by its
 * cached tail. It then claims, writes and publishes a slot with the same
 * steps as ring_push() (see ring.c: the ring's depth counts pushes in
 * progress and the claim is one instruction, so a signal handler that
 * records in between never overwrites or publishes our slot), pops the
 * frame, and returns to the caller. Anything else, including a ring that
 * looks full, goes through hook_rt_exit() with the frame still in place.
 */
	.p2align 4
	.globl	hook_tramp_exit
	.hidden	hook_tramp_exit
	.type	hook_tramp_exit, @function
hook_tramp_exit:
	movq	%rax, %r8
	movq	%rdx, %r9
	movq	ticks_use_tsc@GOTPCREL(%rip), %rcx
	cmpl	$0, (%rcx)
	je	.Lexit_slow
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, %rsi			/* t1 */
	movq	hook_rt_stack@gottpoff(%rip), %r11
	movq	%fs:(%r11), %r11		/* s */
	testq	%r11, %r11
	jz	.Lexit_slow
	movl	HOOK_STACK_DEPTH(%r11), %edi
	testl	%edi, %edi
	jz	.Lexit_slow
	shlq	$HOOK_FRAME_LOG2, %rdi
	leaq	(HOOK_STACK_FRAMES - 32)(%r11,%rdi), %rdi	/* f = top */
	leaq	-8(%rsp), %rax
	cmpq	%rax, HOOK_FRAME_SLOT(%rdi)
	jne	.Lexit_slow
	movq	ring_tls@gottpoff(%rip), %rcx
	cmpl	$0, %fs:RING_TLS_QUIET(%rcx)
	jne	.Lexit_slow
	movq	%fs:RING_TLS_RING(%rcx), %rcx	/* r */
	testq	%rcx, %rcx
	jz	.Lexit_slow
	incl	RING_DEPTH(%rcx)
	movl	$1, %eax
	xaddq	%rax, RING_RESERVE(%rcx)	/* h: claimed */
	movq	%rax, %rdx
	subq	RING_CACHED_TAIL(%rcx), %rdx
	cmpq	RING_MASK(%rcx), %rdx
	ja	.Lexit_full
.Lexit_write:
	andq	RING_MASK(%rcx), %rax
	shlq	$REC_SIZE_LOG2, %rax
	leaq	RING_RECS(%rcx,%rax), %rax	/* the record */
	movq	HOOK_FRAME_T0(%rdi), %rdx
	movq	%rdx, REC_T0(%rax)
	movq	%rsi, REC_T1(%rax)
	movl	HOOK_FRAME_IDX(%rdi), %edx
	leaq	(%rdx,%rdx,2), %rdx
	leaq	hook_ents(%rip), %r10
	leaq	(%r10,%rdx,4), %r10		/* e = &hook_ents[i] */
	movq	HOOK_ENT_NAME(%r10), %rdx
	movq	%rdx, REC_NAME(%rax)		/* name, group */
	movzbl	HOOK_ENT_CAT(%r10), %edx
	shll	$16, %edx
	orl	$REC_KIND_SPAN, %edx
	cmpb	$0, HOOK_ENT_STATUS(%r10)
	je	4f
	orl	$(REC_FLAG_STATUS << 24), %edx
	testl	%r8d, %r8d
	jz	4f
	orl	$(REC_FLAG_ERROR << 24), %edx
4:	movq	%rdx, REC_KIND(%rax)		/* kind, cat, flags, arg 0 */
	decl	RING_DEPTH(%rcx)
	jnz	5f
	movq	RING_RESERVE(%rcx), %rdx
	movq	%rdx, RING_HEAD(%rcx)		/* published */
5:	movq	HOOK_FRAME_RET(%rdi), %r10
	decl	HOOK_STACK_DEPTH(%r11)		/* the frame is popped */
	movq	%r8, %rax
	movq	%r9, %rdx
	pushq	%r10
	ret

.Lexit_full:
	/* No room by the cached tail: give slot h back, unless a signal
	 * handler has claimed a later slot since, which it could only have
	 * written with room, so h has room too. */
	movq	%rax, %rdx
	incq	%rax
	cmpxchgq %rdx, RING_RESERVE(%rcx)
	je	6f
	movq	%rdx, %rax
	jmp	.Lexit_write
6:	decl	RING_DEPTH(%rcx)		/* given back: end the push */
	jnz	.Lexit_slow
	movq	RING_RESERVE(%rcx), %rdx
	movq	%rdx, RING_HEAD(%rcx)
	/* fall through: the C path reloads the tail, and drops or blocks */

/* Save area (96 bytes): xmm0 0, xmm1 16, rax 32, rdx 40, st0 48, st1 64,
 * the number of x87 values saved at 80. The x87 stack is empty unless the
 * function returned a long double (one value) or a complex long double
 * (two); TOP in the status word tells which, and only then are they
 * stored, because popping an empty x87 register would leave a NaN behind.
 */
.Lexit_slow:
	movq	%r8, %rax
	movq	%r9, %rdx
	subq	$96, %rsp
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
	movq	%rax, %r11

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
	pushq	%r11
	ret
	.size	hook_tramp_exit, . - hook_tramp_exit

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
