/*
 * ring_abi.h - what assembly may touch of a thread's ring.
 *
 * The hook trampolines (preload/hook_tramp.S) push their records without a
 * call into C: they read the thread's ring_tls, claim a slot, write the 32
 * bytes and publish it, following the same steps as ring_push(). These
 * offsets are the contract; ring_push.c checks each against its structs, so a
 * change there fails to compile instead of corrupting records.
 *
 * Only preprocessor definitions: both C and assembly include this file.
 */
#ifndef MXPROF_RING_ABI_H
#define MXPROF_RING_ABI_H

/* struct tls_state (ring.h): the thread's ring (NULL while it is quiet or
 * has none yet), then the producer's side of it. */
#define RING_TLS_REC	     0
#define RING_TLS_RESERVE     8
#define RING_TLS_CACHED_TAIL 16
#define RING_TLS_MASK	     24
#define RING_TLS_LIMIT	     32 /* pushes past cached tail + limit: C path */
#define RING_TLS_DEPTH	     40

/* struct ring (ring.h): the published head and the records. */
#define RING_HEAD 0
#define RING_RECS 192

/* struct coll_rec (collector.h): 32 bytes. */
#define REC_SIZE_LOG2 5
#define REC_T0	      0
#define REC_T1	      8
#define REC_NAME      16 /* name, then group: one 8-byte word */
#define REC_KIND      24 /* kind (16 bits), cat, flags, then arg (32) */

#define REC_KIND_SPAN	1    /* COLL_SPAN         */
#define REC_FLAG_STACK	0x20 /* COLL_FLAG_STACK   */
#define REC_FLAG_STATUS 0x40 /* COLL_FLAG_STATUS  */
#define REC_FLAG_ERROR	0x80 /* COLL_FLAG_ERROR   */

#endif
