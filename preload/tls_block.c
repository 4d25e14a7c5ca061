/*
 * tls_block.c - a thread's block of a source's own state: made at the
 * thread's first use, freed when the thread exits.
 *
 * Sources that keep more per thread than fits in the static TLS surplus
 * glibc keeps for libraries loaded late (NVTX's range stacks, PyTorch's
 * open ranges) keep only a pointer in TLS and the block on the heap. Not
 * for signal handlers (it may allocate and lock).
 */
#include <pthread.h>
#include <stdlib.h>

#include "preload.h"

void *tls_block_make(struct tls_block *b, size_t size)
{
	if (!__atomic_load_n(&b->ready, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&b->lock);
		if (!b->ready && pthread_key_create(&b->key, free) == 0) {
			__atomic_store_n(&b->ready, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&b->lock);
		if (!__atomic_load_n(&b->ready, __ATOMIC_ACQUIRE)) {
			return NULL;
		}
	}
	void *p = calloc(1, size);
	if (p && pthread_setspecific(b->key, p) != 0) {
		free(p);
		p = NULL;
	}
	return p;
}
