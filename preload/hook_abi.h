/*
 * hook_abi.h - the layout hook_tramp.S and the C side of the hook engine
 * share: the stubs, the shadow stack frames and the per-function facts.
 * hook_rt.c checks the structs against these offsets with
 * _Static_assert.
 *
 * Only preprocessor definitions: both C and assembly include this file.
 */
#ifndef MXPROF_HOOK_ABI_H
#define MXPROF_HOOK_ABI_H

/* HOOK_MAX stubs of HOOK_STUB_SIZE bytes. Stub i, at hook_tramp_stubs +
 * 32 * i, is laid out as (byte offsets):
 *    0  cmpl $0, state_api_recording   is the api source recording?
 *    7  jne  15
 *    9  jmp  *hook_table_real[i]    HOOK_STUB_JUMP: the real function
 *   15  call hook_tramp_enter       HOOK_STUB_ENTER: pushes the shadow
 *                                   frame
 *   20  call 9                      HOOK_STUB_RESUME: puts the exit address
 *                                   in the return-address slot, and in the
 *                                   CPU's return-stack buffer
 *   25  jmp  hook_tramp_leave       HOOK_STUB_EXIT: where the real function
 *                                   returns to
 */
#define HOOK_MAX	    16384
#define HOOK_STUB_SIZE_LOG2 5
#define HOOK_STUB_SIZE	    32
#define HOOK_STUB_JUMP	    9
#define HOOK_STUB_ENTER	    15
#define HOOK_STUB_RESUME    20
#define HOOK_STUB_EXIT	    25

/* struct hook_tls (hook.h), a thread's initial-exec TLS: the next free
 * frame of its shadow stack, and the end of the frames as the trampolines
 * see it (NULL unless ticks are TSC cycles). Both are NULL before the
 * thread's first hooked call. Below the first frame sits a sentinel frame
 * whose slot is HOOK_RT_BUILDING, above every real slot. */
#define HOOK_RT_DEPTH 256
#define HOOK_TLS_TOP  0
#define HOOK_TLS_END  8
/* struct hook_frame: 48 bytes. AT is the resume address's offset from
 * hook_tramp_stubs (32 * i + HOOK_STUB_RESUME); a 4-byte "unwinding" flag
 * follows it, so one 8-byte store sets both. RBX is the caller's %rbx:
 * while a timed call runs, %rbx holds the frame's address (see
 * hook_tramp.S, "Unwinding"). */
#define HOOK_FRAME_SIZE 48
#define HOOK_FRAME_SLOT 0
#define HOOK_FRAME_RET	8
#define HOOK_FRAME_T0	16
#define HOOK_FRAME_AT	24
#define HOOK_FRAME_RBX	32
#define HOOK_FRAME_SID	40 /* the call's stack id (4 bytes), 0: none */

/* struct hook_ent (hook.h): 32 bytes, as many as a stub, so that a frame's
 * AT - HOOK_STUB_RESUME is also the offset of its entry in
 * hook_table_ents. */
#define HOOK_ENT_SIZE	  32
#define HOOK_ENT_NAME	  0  /* name, then group: a record's bytes 16-23 */
#define HOOK_ENT_KIND	  8  /* kind, cat, flags, arg: bytes 24-31      */
#define HOOK_ENT_ON_ERROR 16 /* OR'ed into KIND on a non-zero result    */
#define HOOK_ENT_MARKER	  25 /* a byte: non-zero when it marks a step   */

#endif
