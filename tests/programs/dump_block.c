/*
 * dump_block.c - blocking calls with a timeout, while another thread sends
 * the process a signal during each, for the test that the dump signal
 * interrupts none of them.
 *
 * usage: dump_block [-s SIGNAL] ROUNDS
 *
 * The main thread makes ROUNDS calls in turn: sleep(1), nanosleep() of
 * 300 ms, poll() with no descriptors and 300 ms, select() with none and
 * 300 ms, epoll_wait() on an empty epoll set for 300 ms, and
 * sem_timedwait() on a semaphore nobody posts, 300 ms ahead.
 * With -s, a second thread waits until the main thread is asleep in each
 * call (its state in /proc is 'S') and sends SIGNAL to the process. Each
 * call prints one line: its name, its result and, on failure, errno's
 * name. The exit status is the number of calls that ended early.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static sem_t entering, never;
static int main_tid;
static int sig;
static int rounds;

/* Waits until the main thread sleeps in the kernel. */
static void wait_asleep(void)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", main_tid);
	for (;;) {
		FILE *f = fopen(path, "re");
		char *p = NULL;
		if (f && fgets(buf, sizeof(buf), f)) {
			p = strrchr(buf, ')');
		}
		if (f) {
			fclose(f);
		}
		if (p && p[1] == ' ' && p[2] == 'S') {
			return;
		}
		usleep(1000);
	}
}

static void *sender(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		while (sem_wait(&entering) != 0) {
		}
		wait_asleep();
		kill(getpid(), sig);
	}
	return NULL;
}

static void report(const char *name, long rc, int err, int *early)
{
	if (rc < 0) {
		printf("%s -1 %s\n", name, err == EINTR ? "EINTR" : "other");
		*early += err == EINTR;
	} else {
		printf("%s %ld\n", name, rc);
		*early += rc > 0 && strcmp(name, "sleep") == 0;
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct timespec d = {0, 300000000};
	pthread_t t;
	struct epoll_event ev;
	int early = 0, c, ep = epoll_create1(EPOLL_CLOEXEC);

	while ((c = getopt(argc, argv, "s:")) != -1) {
		if (c != 's') {
			return 64;
		}
		sig = atoi(optarg);
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: dump_block [-s SIGNAL] ROUNDS\n");
		return 64;
	}
	rounds = atoi(argv[optind]);
	main_tid = (int)syscall(SYS_gettid);
	sem_init(&entering, 0, 0);
	sem_init(&never, 0, 0);
	if (sig && pthread_create(&t, NULL, sender, NULL) != 0) {
		return 66;
	}
	for (int i = 0; i < rounds; i++) {
		struct timespec until;
		struct timeval tv = {0, 300000};
		long rc;
		sem_post(&entering);
		switch (i % 6) {
		case 0:
			rc = (long)sleep(1);
			report("sleep", rc, errno, &early);
			break;
		case 1:
			rc = nanosleep(&d, NULL);
			report("nanosleep", rc, errno, &early);
			break;
		case 2:
			rc = poll(NULL, 0, 300);
			report("poll", rc, errno, &early);
			break;
		case 3:
			rc = select(0, NULL, NULL, NULL, &tv);
			report("select", rc, errno, &early);
			break;
		case 4:
			rc = epoll_wait(ep, &ev, 1, 300);
			report("epoll_wait", rc, errno, &early);
			break;
		default:
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 300000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			rc = sem_timedwait(&never, &until);
			report("sem_timedwait", rc, errno, &early);
			break;
		}
	}
	if (sig) {
		pthread_join(t, NULL);
	}
	return early;
}
