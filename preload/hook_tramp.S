/*
 * hook_tramp.S - the trampolines that time hooked C API calls (x86-64).
 *
 * A patched GOT entry points at stub i. When the profiler is stopped the
 * stub costs a compare and its own indirect jump, so the stack and every
 * register are exactly as the caller left them.
 *
 * When it records, the stub puts i in %r11 (a scratch register that
 * carries no argument) and calls hook_tramp_record, whose common case is
 * written in assembly. Otherwise every register that can carry an
 * argument is saved:
 * rdi rsi rdx rcx r8 r9, rax (the count of vector registers a varargs
 * call uses) and xmm0-xmm7. hook_rt_enter() swaps the return address for
 * hook_tramp_exit, and the real function runs with the original
 * arguments. On the way out, hook_tramp_exit keeps rax, rdx, xmm0 and
 * xmm1 (every integer, SSE and struct return) and the x87 st0/st1 of a
 * long double or complex long double result, then jumps to the original
 * return address that hook_rt_exit() hands back.
 *
 * Elsewhere this file is empty, and hook.c says once that hooking is not
 * available.
 */
#if defined(__x86_64__)

#define HOOK_MAX 16384 /* and 32-byte stubs: see hook.h */

	.text

/* ---- the stubs: HOOK_MAX of 32 bytes each ------------------------------
 * Each stub tests the recording flag and jumps to its own function through
 * its own indirect jump, so that the branch predictor keeps one target per
 * hooked function. When recording, it calls hook_tramp_record (a call the
 * return-stack buffer predicts) and then takes the same jump.
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
1:	movl	$hook_i, %r11d
	call	hook_tramp_record
	jmp	0b
	.set	hook_i, hook_i + 1
	.endr
	.size	hook_tramp_stubs, . - hook_tramp_stubs

/* ---- entry ---------------------------------------------------------------
 * Called by stub %r11d while recording. (%rsp) is the stub's resume
 * address and 8(%rsp) the hooked call's return address (the slot);
 * %rsp % 16 == 0. Every argument register is kept; hook_tramp_record
 * returns to the stub, which jumps to the real function.
 *
 * The common case is handled in assembly: the thread has a shadow stack
 * with room, its top frame is live (no longjmp to clean up after) and ticks
 * are TSC cycles. Four pushes give the registers it needs (rdtsc writes
 * rax and rdx); the slot is then at 40(%rsp). Frames are published in the
 * same order as hook_rt_enter() does, for the same signal-handler
 * reasons. Anything else goes through hook_rt_enter() below.
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
	movq	ticks_use_tsc@GOTPCREL(%rip), %r10
	cmpl	$0, (%r10)
	je	.Lslow
	movq	hook_rt_stack@gottpoff(%rip), %r10
	movq	%fs:(%r10), %r10		/* s */
	testq	%r10, %r10
	jz	.Lslow
	movl	(%r10), %ecx			/* d = s->depth */
	cmpl	$256, %ecx
	jae	.Lslow
	leaq	40(%rsp), %rsi			/* slot */
	testl	%ecx, %ecx
	jz	2f
	movl	%ecx, %eax
	shlq	$5, %rax
	movq	-24(%r10,%rax), %rdx		/* s->f[d - 1].slot */
	cmpq	%rsi, %rdx
	ja	2f				/* an older frame: live */
	leaq	hook_tramp_exit(%rip), %rax
	cmpq	%rax, (%rdx)
	jne	.Lslow				/* left by longjmp */
2:
	movl	%ecx, %eax
	shlq	$5, %rax
	leaq	8(%r10,%rax), %rax		/* f = &s->f[d] */
	movq	$-1, (%rax)			/* f->slot = building */
	incl	%ecx
	movl	%ecx, (%r10)			/* s->depth = d + 1 */
	movq	$-1, (%rax)
	movq	(%rsi), %rcx
	movq	%rcx, 8(%rax)			/* f->ret */
	movl	%r11d, 24(%rax)			/* f->idx */
	movl	$0, 28(%rax)			/* f->restored */
	movq	%rax, %rcx
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, 16(%rcx)			/* f->t0 */
	movq	%rsi, (%rcx)			/* f->slot = slot */
	leaq	hook_tramp_exit(%rip), %rax
	movq	%rax, (%rsi)			/* *slot = hook_tramp_exit */
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	ret

	.cfi_adjust_cfa_offset 32
.Lslow:
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
	ret
	.cfi_endproc
	.size	hook_tramp_record, . - hook_tramp_record

/* ---- exit -----------------------------------------------------------------
 * Reached by the hooked function's `ret`: %rsp is 16-byte aligned and the
 * return address was at -8(%rsp). The nop makes "return address - 1", which
 * debuggers look up, fall inside this symbol.
 *
 * Save area (96 bytes): xmm0 0, xmm1 16, rax 32, rdx 40, st0 48, st1 64,
 * the number of x87 values saved at 80. The x87 stack is empty unless the
 * function returned a long double (one value) or a complex long double
 * (two); TOP in the status word tells which, and only then are they
 * stored, because popping an empty x87 register would leave a NaN behind.
 */
	.p2align 4
	nop
	.globl	hook_tramp_exit
	.hidden	hook_tramp_exit
	.type	hook_tramp_exit, @function
hook_tramp_exit:
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
	jmpq	*%r11
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
