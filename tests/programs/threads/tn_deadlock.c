/*
 * tn_deadlock.c - two threads that deadlock and one that sleeps, for
 * threads_now_c: "lock_a" holds mutex a and wants b (take_b), "lock_b"
 * holds b and wants a inside the hooked lock_in_lib (tn_lock_lib.c). A
 * barrier makes the deadlock certain. "sleeper" loops on poll and
 * nanosleep, 50 ms each, and prints after each round how many rounds it
 * made and how many of its calls ended with EINTR. The main thread joins
 * the lockers, forever; argv[1] is created once the threads exist. With
 * argv[2], the main thread first makes that many hooked calls that end
 * (for flight_hang: a run that recorded something, then stopped).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

void lock_in_lib(pthread_mutex_t *m);

__attribute__((noinline)) static void take_b(void)
{
	pthread_mutex_lock(&b);
	__asm__ volatile("" ::: "memory");
}

static void *locker_a(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&a);
	pthread_barrier_wait(&both);
	take_b();
	return NULL;
}

static void *locker_b(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&b);
	pthread_barrier_wait(&both);
	lock_in_lib(&a);
	return NULL;
}

static void *sleeper(void *arg)
{
	unsigned long rounds = 0, eintr = 0;

	(void)arg;
	for (;;) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		if (poll(NULL, 0, 50) < 0 && errno == EINTR) {
			eintr++;
		}
		if (nanosleep(&ts, NULL) < 0 && errno == EINTR) {
			eintr++;
		}
		printf("round %lu eintr %lu\n", ++rounds, eintr);
		fflush(stdout);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ta, tb, ts;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: tn_deadlock READY_FILE [WARM_CALLS]\n");
		return 2;
	}
	/* Some calls that end, first: a run has recorded something before
	 * it stops making progress. */
	static pthread_mutex_t warm = PTHREAD_MUTEX_INITIALIZER;
	for (int i = argc == 3 ? atoi(argv[2]) : 0; i > 0; i--) {
		lock_in_lib(&warm);
		pthread_mutex_unlock(&warm);
	}
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&ta, NULL, locker_a, NULL);
	pthread_setname_np(ta, "lock_a");
	pthread_create(&tb, NULL, locker_b, NULL);
	pthread_setname_np(tb, "lock_b");
	pthread_create(&ts, NULL, sleeper, NULL);
	pthread_setname_np(ts, "sleeper");
	FILE *f = fopen(argv[1], "w");
	if (f) {
		fclose(f);
	}
	pthread_join(ta, NULL);
	return 0;
}
