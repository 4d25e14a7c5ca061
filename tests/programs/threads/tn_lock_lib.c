/*
 * tn_lock_lib.c - the library function that takes a mutex, hooked by the
 * threads_now_c test (MXPROF_HOOK): a thread blocked in it is blocked
 * inside a hooked call.
 */
#include <pthread.h>

__attribute__((noinline)) void lock_in_lib(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}
