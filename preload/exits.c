/*
 * exits.c - the endings that skip the destructor: _exit (forked workers,
 * os._exit) and exec.
 *
 * _exit() and _Exit() end the process without atexit handlers or
 * destructors, so the library's final dump would never run: multiprocessing
 * and PyTorch DataLoader workers leave through os._exit(). The wrappers
 * here write the files first (the final dump, a request to the drain
 * thread), then call the C library's function. A process that recorded
 * nothing writes nothing, so that a forked child whose exec failed leaves
 * no empty trace.
 *
 * exec keeps the pid and replaces the image: the next image loads mxprof
 * afresh and would create the same <trace>.journal again. Before the C
 * library's exec, the wrappers drain everything recorded into the journal
 * and write it out, and pass the trace's name to the next image in
 * MXPROF_CONTINUE=<pid>:<trace> (<pid>+:<trace> when a dump signal came
 * while this image had recorded nothing: the next image owes that dump,
 * as a shell wrapper that execs the program cannot give it). That image
 * (exits_init) takes the trace
 * origin from the journal's header, appends to the journal instead of
 * replacing it, and starts its tables from the records already there, so
 * that the last image's dump holds every image's records on one timeline
 * (continue.c). An exec that fails returns as it would have; recording
 * goes on.
 *
 * A vfork child (posix_spawn, subprocess) shares its parent's memory: the
 * wrappers see that the collector is not theirs (coll_live_here) and do
 * nothing but call through.
 *
 * These symbols are exported by libmxprof.so only (preload/exports.map);
 * libmxprof.a leaves this file out, so that a program that links mxprof
 * statically keeps the C library's own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "control.h"
#include "source.h"
#include "preload.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int);

static struct {
	execve_fn execve, execvpe;
	fexecve_fn fexecve;
	exit_fn exit_, Exit_;
} real;

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
	if (!real.execve) {
		real.execve = (execve_fn)next_sym("execve");
		real.execvpe = (execve_fn)next_sym("execvpe");
		real.fexecve = (fexecve_fn)next_sym("fexecve");
		real.exit_ = (exit_fn)next_sym("_exit");
		real.Exit_ = (exit_fn)next_sym("_Exit");
	}
}

/*
 * Before exec: the journal written out for the next image. Returns envp
 * with MXPROF_CONTINUE set, malloc'ed (free it after a failed exec), or
 * NULL to pass envp as it is.
 */
static char **handover(char *const envp[])
{
	char trace[4096];
	size_t n = 0, k = 0;
	int saved = errno;

	int kept = coll_live_here() ? coll_exec_prepare(trace, sizeof(trace))
				    : -ESRCH;

	if (kept != 1 && kept != 2) {
		errno = saved;
		return NULL;
	}
	while (envp && envp[n]) {
		n++;
	}
	size_t vlen = sizeof(CONTINUE_VAR) + 24 + strlen(trace);
	char **env = malloc((n + 2) * sizeof(*env) + vlen);

	if (!env) {
		errno = saved;
		return NULL;
	}
	char *var = (char *)(env + n + 2);

	snprintf(var, vlen, CONTINUE_VAR "=%d%s:%s", (int)getpid(),
		 kept == 2 ? "+" : "", trace);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(envp[i], CONTINUE_VAR "=", sizeof(CONTINUE_VAR)) !=
		    0) {
			env[k++] = envp[i];
		}
	}
	env[k++] = var;
	env[k] = NULL;
	errno = saved;
	return env;
}

/* Calls exec (fn, or fexecve on fd when fn is NULL) with the handover's
 * environment; returns as exec does. */
static int exec_with(execve_fn fn, int fd, const char *path, char *const argv[],
		     char *const envp[])
{
	resolve();
	char **env = handover(envp);
	char *const *use = env ? env : envp;
	int sig = __atomic_load_n(&coll_dump_signal, __ATOMIC_ACQUIRE);
	sigset_t bit, old;
	int rc;

	/* mxprof blocks its dump signal in the program's threads
	 * (signals.c); the next image must not inherit that mask. */
	sigemptyset(&bit);
	if (sig > 0) {
		sigaddset(&bit, sig);
	}
	pthread_sigmask(SIG_UNBLOCK, &bit, &old);
	if (fn) {
		rc = fn(path, argv, use);
	} else if (real.fexecve) {
		rc = real.fexecve(fd, argv, use);
	} else {
		errno = ENOSYS;
		rc = -1;
	}
	int saved = errno;

	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(env);
	errno = saved;
	return rc;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	resolve();
	return exec_with(real.execve, -1, path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	resolve();
	return exec_with(real.execve, -1, path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	resolve();
	return exec_with(real.execvpe, -1, file, argv, envp);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	resolve();
	return exec_with(real.execvpe, -1, file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return exec_with(NULL, fd, NULL, argv, envp);
}

/* The arguments of execl and friends, as an array: arg, then the
 * variadic ones up to the NULL. Sets *envp for execle. */
#define LIST_ARGS(arg, ap, with_env)                                           \
	size_t n_ = 1;                                                         \
	va_list c_;                                                            \
	va_copy(c_, ap);                                                       \
	while (va_arg(c_, const char *)) {                                     \
		n_++;                                                          \
	}                                                                      \
	va_end(c_);                                                            \
	const char *args[n_ + 1];                                              \
	args[0] = arg;                                                         \
	for (size_t i_ = 1; i_ <= n_; i_++) {                                  \
		args[i_] = va_arg(ap, const char *);                           \
	}                                                                      \
	char *const *envp_ = with_env ? va_arg(ap, char *const *) : environ;

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	LIST_ARGS(arg, ap, 0);
	va_end(ap);
	resolve();
	return exec_with(real.execve, -1, path, (char *const *)args, envp_);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	LIST_ARGS(arg, ap, 1);
	va_end(ap);
	resolve();
	return exec_with(real.execve, -1, path, (char *const *)args, envp_);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	LIST_ARGS(arg, ap, 0);
	va_end(ap);
	resolve();
	return exec_with(real.execvpe, -1, file, (char *const *)args, envp_);
}

/* The C library's functions, found at load: a vfork child must not be
 * the first to look them up (dlsym takes the loader's lock). */
__attribute__((constructor)) static void exits_load(void)
{
	resolve();
}

/* _exit and _Exit: the final dump, when this process recorded anything.
 * Nothing here takes a lock: a signal handler may call _exit. */
static void leave(void)
{
	int saved = errno;

	state_at_quick_exit();
	errno = saved;
}

EXPORT void _exit(int status)
{
	resolve();
	leave();
	if (real.exit_) {
		real.exit_(status);
	}
	for (;;) {
		syscall(SYS_exit_group, status);
	}
}

EXPORT void _Exit(int status)
{
	resolve();
	leave();
	if (real.Exit_) {
		real.Exit_(status);
	}
	for (;;) {
		syscall(SYS_exit_group, status);
	}
}
