/*
 * hook_abi.h - the layout hook_tramp.S and the C side of the hook engine
 * share: the stubs, the shadow stack frames and the per-function facts.
 * hook.c and hook_rt.c check the structs against these offsets with
 * _Static_assert.
 *
 * Only preprocessor definitions: both C and assembly include this file.
 */
#ifndef MXPROF_HOOK_ABI_H
#define MXPROF_HOOK_ABI_H

/* HOOK_MAX stubs of HOOK_STUB_SIZE bytes. Stub i, at hook_tramp_stubs +
 * 32 * i, is laid out as (byte offsets):
 *    0  cmpl $0, coll_recording    is the profiler recording?
 *    7  jne  15
 *    9  jmp  *hook_real[i]          HOOK_STUB_JUMP: the real function
 *   15  call hook_tramp_record      pushes the shadow frame
 *   20  call 9                      HOOK_STUB_RESUME: puts the exit address
 *                                   in the return-address slot, and in the
 *                                   CPU's return-stack buffer
 *   25  jmp  hook_tramp_exit        HOOK_STUB_EXIT: where the real function
 *                                   returns to
 */
#define HOOK_MAX	    16384
#define HOOK_STUB_SIZE_LOG2 5
#define HOOK_STUB_SIZE	    32
#define HOOK_STUB_JUMP	    9
#define HOOK_STUB_RESUME    20
#define HOOK_STUB_EXIT	    25

/* struct hook_stack (hook_rt.c): a depth, then HOOK_RT_DEPTH frames. */
#define HOOK_RT_DEPTH	  256
#define HOOK_STACK_DEPTH  0
#define HOOK_STACK_FRAMES 8
/* struct hook_frame: 32 bytes. */
#define HOOK_FRAME_LOG2 5
#define HOOK_FRAME_SLOT 0
#define HOOK_FRAME_RET	8
#define HOOK_FRAME_T0	16
#define HOOK_FRAME_IDX	24

/* struct hook_ent (hook.h): 12 bytes. */
#define HOOK_ENT_NAME	0 /* name, then group: one 8-byte word */
#define HOOK_ENT_CAT	8
#define HOOK_ENT_STATUS 9

#endif
