/*
 * core_start_signal - a signal that ends the process comes while mxprof
 * starts its drain thread, in its constructor.
 *
 * usage: core_start_signal
 * The program defines pthread_create() (linked with -rdynamic, so that
 * mxprof's call reaches it first): its first call sends the process
 * SIGTERM, then creates the thread with the C library's function.
 * pthread_create() is called with every signal blocked (mxprof's drain
 * thread and the C library's own), so the signal is delivered right after
 * it returns, when the caller unblocks signals. Under mxprof with
 * MXPROF_AUTOSTART=1 the first call is the drain thread's, in the
 * constructor; without mxprof it is the program's own, in main(). Either
 * way the process ends by SIGTERM; main() prints "not ended" and exits 3
 * if it does not.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
			 void *);

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	static int sent;
	create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");

	if (!sent) {
		sent = 1;
		kill(getpid(), SIGTERM);
	}
	return real(t, attr, fn, arg);
}

static void *idle(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, idle, NULL) == 0) {
		pthread_join(t, NULL);
	}
	printf("not ended\n");
	return 3;
}
