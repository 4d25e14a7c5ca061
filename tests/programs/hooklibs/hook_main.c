/*
 * hook_main.c - drives libhookt.so for the hook tests. Its output must be
 * identical with and without mxprof; the tests count the recorded calls.
 *
 *   hook_main basic N      N x ht_add, and one each of ht_fmt, ht_dbl8,
 *                          ht_ld, ht_big, ht_pair, ht_errno
 *   hook_main recurse D    ht_call nested D+1 deep through callbacks
 *   hook_main longjmp N    N x (ht_jump, ht_call with a callback that
 *                          longjmps), then N x ht_add
 *   hook_main threads T N  T threads, N x ht_add each
 *   hook_main fork N       N x ht_add, fork inside an ht_call callback,
 *                          both sides N x ht_add more
 *   hook_main signal N     N x raise() inside ht_call; the handler calls
 *                          ht_add
 *   hook_main altstack N   the same with the handler on a sigaltstack
 *                          (heap memory, away from the thread's stack)
 *   hook_main dlopen N     dlopen libhookt2.so, N x ht2_mul through a
 *                          dlsym pointer, dlclose, and once more
 *   hook_main tsd T        T threads one after another, each with one
 *                          ht_add in its body and one in the destructor
 *                          of its thread-specific data
 *   hook_main reload N     N x: dlopen libhookt2.so, one ht2_mul through
 *                          a dlsym pointer, dlclose
 *   hook_main coroutine N  N x: ht_call runs a coroutine (swapcontext)
 *                          that calls ht_call and, inside it, switches
 *                          back; the outer ht_call returns first, then
 *                          the coroutine is resumed, its ht_call returns
 *                          and it calls ht_add
 *   hook_main errno N LIB  N rounds of: a thread's first hooked call
 *                          (ht_add, then ht_errno in another thread),
 *                          dlopen LIB, dlsym, a call through the pointer,
 *                          dlclose; errno is set before each step and
 *                          printed after it
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

int ht_add(int a, int b);
int ht_fmt(char *buf, size_t n, const char *fmt, ...);
double ht_dbl8(double, double, double, double, double, double, double, double);
long double ht_ld(long double x);
struct ht_big {
	long v[5];
};
struct ht_big ht_big(long x);
struct ht_pair {
	double x;
	long y;
};
struct ht_pair ht_pair(double x, long y);
int ht_errno(int e);
int ht_call(int (*cb)(int), int x);
void ht_jump(jmp_buf *jb, int v);

static jmp_buf jb;
static int depth_cb(int x)
{
	if (x <= 0) {
		return ht_add(x, 100);
	}
	return ht_call(depth_cb, x - 1) * 2 % 100003;
}

static int jump_cb(int x)
{
	longjmp(jb, x + 1);
}

static void *thread_main(void *arg)
{
	long n = (long)arg, s = 0;

	for (long i = 0; i < n; i++) {
		s += ht_add((int)i, 1);
	}
	return (void *)s;
}

static pthread_key_t tsd_key;
static long tsd_sum;
static void tsd_dtor(void *p)
{
	__atomic_fetch_add(&tsd_sum, ht_add((int)(long)p, 1), __ATOMIC_RELAXED);
}

static void *tsd_main(void *arg)
{
	pthread_setspecific(tsd_key, arg);
	return (void *)(long)ht_add((int)(long)arg, 1);
}

static int fork_n;
static int fork_cb(int x)
{
	pid_t pid;
	long s = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < fork_n; i++) {
			s += ht_add(i, 2);
		}
		printf("child sum %ld\n", s);
		fflush(stdout);
		return 1;
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return x;
}

/* Sets errno to a value no library sets, makes the call, and prints what
 * errno is afterwards. */
#define ERRNO_STEP(what, call)                                                 \
	do {                                                                   \
		errno = 4000 + __LINE__;                                       \
		call;                                                          \
		printf("%s: errno %s\n", what,                                 \
		       errno == 4000 + __LINE__ ? "kept" : strerror(errno));   \
	} while (0)

static void *errno_first_call(void *arg)
{
	ERRNO_STEP("first call in a thread", ht_add(1, 2));
	return arg;
}

static void *errno_first_call_sets(void *arg)
{
	int r = ht_errno(EDOM);

	printf("first call in a thread sets errno: %s\n",
	       r == -1 && errno == EDOM ? "EDOM" : strerror(errno));
	return arg;
}

static ucontext_t main_uc, co_uc;
static long co_sum;

static int co_yield_cb(int x)
{
	swapcontext(&co_uc, &main_uc); /* suspended inside ht_call */
	return x;
}

static void co_body(int x)
{
	co_sum += ht_call(co_yield_cb, x);
	co_sum += ht_add(x, 1);
}

static int co_start_cb(int x)
{
	swapcontext(&main_uc, &co_uc); /* runs until the coroutine yields */
	return x;
}

static volatile long sig_sum;
static void on_sig(int sig)
{
	sig_sum += ht_add(sig, 1);
}

static int raise_cb(int x)
{
	raise(SIGUSR2);
	return x;
}

static void on_alt(int sig)
{
	sig_sum += ht_add(sig, 2);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	long n = argc > 2 ? atol(argv[2]) : 10;
	long s = 0;

	if (strcmp(mode, "basic") == 0) {
		char buf[256];
		long double ld;

		for (long i = 0; i < n; i++) {
			s += ht_add((int)i, 3);
		}
		printf("sum %ld\n", s);
		ht_fmt(buf, sizeof(buf), "%d %.3f %s %g %.1f %e %d %f %f %f", 7,
		       1.25f, "str", 2.5, -0.5, 1e10, 9, 0.1, 0.2, 0.3);
		printf("fmt [%s]\n", buf);
		printf("dbl8 %.3f\n",
		       ht_dbl8(1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5));
		ld = ht_ld(3.0L);
		printf("ld %.25Lg\n", ld);
		struct ht_big b = ht_big(40);
		printf("big %ld %ld\n", b.v[0], b.v[4]);
		struct ht_pair p = ht_pair(1.5, 7);
		printf("pair %.2f %ld\n", p.x, p.y);
		errno = 0;
		int r = ht_errno(ERANGE);
		printf("errno %d %d\n", r, errno == ERANGE);
	} else if (strcmp(mode, "recurse") == 0) {
		printf("recurse %d\n", ht_call(depth_cb, (int)n));
	} else if (strcmp(mode, "longjmp") == 0) {
		for (long i = 0; i < n; i++) {
			volatile int v = setjmp(jb);

			if (v == 0) {
				ht_jump(&jb, 5);
			}
			s += v;
			v = setjmp(jb);
			if (v == 0) {
				ht_call(jump_cb, (int)i);
			}
			s += v;
		}
		for (long i = 0; i < n; i++) {
			s += ht_add((int)i, 1);
		}
		printf("longjmp %ld\n", s);
	} else if (strcmp(mode, "threads") == 0) {
		long m = argc > 3 ? atol(argv[3]) : 1000;
		pthread_t t[64];

		if (n > 64) {
			n = 64;
		}
		for (long i = 0; i < n; i++) {
			pthread_create(&t[i], NULL, thread_main, (void *)m);
		}
		for (long i = 0; i < n; i++) {
			void *r;

			pthread_join(t[i], &r);
			s += (long)r;
		}
		printf("threads %ld\n", s);
	} else if (strcmp(mode, "tsd") == 0) {
		pthread_key_create(&tsd_key, tsd_dtor);
		for (long i = 0; i < n; i++) {
			pthread_t t;
			void *r;

			pthread_create(&t, NULL, tsd_main, (void *)(i + 1));
			pthread_join(t, &r);
			s += (long)r;
		}
		printf("tsd %ld %ld\n", s, tsd_sum);
	} else if (strcmp(mode, "fork") == 0) {
		fork_n = (int)n;
		for (long i = 0; i < n; i++) {
			s += ht_add((int)i, 1);
		}
		int r = ht_call(fork_cb, 41);
		if (r == 2) {
			exit(0); /* the child, back through the hooked frame */
		}
		for (long i = 0; i < n; i++) {
			s += ht_add((int)i, 1);
		}
		printf("parent %d %ld\n", r, s);
	} else if (strcmp(mode, "signal") == 0) {
		signal(SIGUSR2, on_sig);
		for (long i = 0; i < n; i++) {
			s += ht_call(raise_cb, (int)i);
		}
		printf("signal %ld %ld\n", s, sig_sum);
	} else if (strcmp(mode, "altstack") == 0) {
		stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16};
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alt;
		sa.sa_flags = SA_ONSTACK;
		sigaltstack(&ss, NULL);
		sigaction(SIGUSR2, &sa, NULL);
		for (long i = 0; i < n; i++) {
			s += ht_call(raise_cb, (int)i);
		}
		printf("altstack %ld %ld\n", s, sig_sum);
	} else if (strcmp(mode, "dlopen") == 0) {
		const char *lib = argc > 3 ? argv[3] : "./libhookt2.so";

		for (int round = 0; round < 2; round++) {
			void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
			int (*mul)(int, int);

			if (!h) {
				printf("dlopen: %s\n", dlerror());
				return 1;
			}
			*(void **)&mul = dlsym(h, "ht2_mul");
			for (long i = 0; i < n; i++) {
				s += mul((int)i, 2);
			}
			dlclose(h);
		}
		printf("dlopen %ld\n", s);
	} else if (strcmp(mode, "reload") == 0) {
		const char *lib = argc > 3 ? argv[3] : "./libhookt2.so";

		for (long i = 0; i < n; i++) {
			void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
			int (*mul)(int, int);

			if (!h) {
				printf("dlopen: %s\n", dlerror());
				return 1;
			}
			*(void **)&mul = dlsym(h, "ht2_mul");
			s += mul((int)i, 2);
			dlclose(h);
		}
		printf("reload %ld\n", s);
	} else if (strcmp(mode, "coroutine") == 0) {
		static char co_stack[1 << 16];

		for (long i = 0; i < n; i++) {
			getcontext(&co_uc);
			co_uc.uc_stack.ss_sp = co_stack;
			co_uc.uc_stack.ss_size = sizeof(co_stack);
			co_uc.uc_link = &main_uc;
			makecontext(&co_uc, (void (*)(void))co_body, 1, (int)i);
			s += ht_call(co_start_cb, (int)i);
			swapcontext(&main_uc, &co_uc); /* resume: it finishes */
		}
		printf("coroutine %ld %ld\n", s, co_sum);
	} else if (strcmp(mode, "errno") == 0) {
		const char *lib = argc > 3 ? argv[3] : "./libhookt2.so";

		for (long i = 0; i < n; i++) {
			pthread_t t;
			void *h = NULL;
			int (*mul)(int, int) = NULL;

			pthread_create(&t, NULL, errno_first_call, NULL);
			pthread_join(t, NULL);
			pthread_create(&t, NULL, errno_first_call_sets, NULL);
			pthread_join(t, NULL);
			ERRNO_STEP("dlopen", h = dlopen(lib, RTLD_NOW));
			if (!h) {
				printf("dlopen: %s\n", dlerror());
				return 1;
			}
			ERRNO_STEP("dlsym",
				   *(void **)&mul = dlsym(h, "ht2_mul"));
			ERRNO_STEP("call through dlsym", s += mul((int)i, 2));
			ERRNO_STEP("dlclose", dlclose(h));
		}
		printf("errno %ld\n", s);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
