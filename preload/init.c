/*
 * init.c - load and unload of the injected library, the dump signal, fork.
 *
 * The constructor reads the settings, installs the dump signal's handler
 * and the fork handlers, starts the hook engine when it is linked in, and
 * starts recording under MXPROF_AUTOSTART. The destructor writes the final
 * dump.
 *
 * Children: the first process that loads mxprof exports MXPROF_ROOT_PID.
 * A process that finds a different MXPROF_ROOT_PID (an exec'ed child), and
 * a forked child, write to "<base>.<pid>.json" unless the pattern has %p,
 * so that no child ever replaces its parent's file. An exec'ed image starts
 * from nothing: the new image loads mxprof afresh.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "preload.h"

/* The hook engine, when built in (preload/hook*.c). */
extern int hook_init(const char *spec) __attribute__((weak));
extern void hook_finish(void) __attribute__((weak));
extern void hook_fork_prepare(void) __attribute__((weak));
extern void hook_fork_parent(void) __attribute__((weak));
extern void hook_fork_child(void) __attribute__((weak));

/* CUDA and NVTX (cupti/, preload/nvtx.c), built in when the CUDA headers
 * are there. */
extern int cupti_setup(unsigned want, const char *self_path)
	__attribute__((weak));
extern int nvtx_setup(const char *self_path) __attribute__((weak));

struct settings preload_settings;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static const char *env(const char *name)
{
	return getenv(name);
}

static void on_dump_signal(int sig)
{
	(void)sig;
	coll_dump_async();
}

static int only_thread(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int threads = 0;

	if (!f) {
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Threads: %d", &threads) == 1) {
			break;
		}
	}
	fclose(f);
	return threads == 1;
}

/* The working folder when the library was loaded: a relative output path
 * means a file there, even after the program changes folder. */
static char launch_cwd[PATH_MAX];

/* Expands the output pattern for this process into out, from launch_cwd
 * when it is relative. */
static void resolve_output(char *out, size_t len, int descendant)
{
	const struct settings *s = &preload_settings;
	char rel[PATH_MAX];
	int rc = settings_expand_output(s->output, (int)getpid(),
					settings_rank(env), descendant, rel,
					sizeof(rel));

	if (rc < 0) {
		settings_expand_output("profile.json", (int)getpid(), 0,
				       descendant, rel, sizeof(rel));
	}
	if (rel[0] == '/' || !launch_cwd[0] ||
	    snprintf(out, len, "%s/%s", launch_cwd, rel) >= (int)len) {
		snprintf(out, len, "%s", rel);
	}
}

static void before_fork(void)
{
	/* First: a scan it waits for may need the collector's locks. */
	if (hook_fork_prepare) {
		hook_fork_prepare();
	}
	coll_before_fork();
}

static void after_fork_parent(void)
{
	coll_after_fork_parent();
	if (hook_fork_parent) {
		hook_fork_parent();
	}
}

static void after_fork_child(void)
{
	char out[4096];

	resolve_output(out, sizeof(out), 1);
	coll_after_fork_child(out);
	if (hook_fork_child) {
		hook_fork_child();
	}
}

/*
 * Points NVTX and the CUDA driver at this library (the injection paths,
 * only where unset) and installs the CUPTI source, for the sources
 * MXPROF_TRACE selects. Loads nothing: CUPTI starts when CUDA does.
 */
static void cuda_setup(int early)
{
	const struct settings *s = &preload_settings;
	unsigned want = 0;
	char self[PATH_MAX] = "";
	Dl_info info;

	/* Only a shared libmxprof can be injected by path; linked statically
	 * into a program, the entry points are found without a path. */
	if (dladdr((void *)cuda_setup, &info) && info.dli_fname &&
	    strstr(info.dli_fname, ".so") && !realpath(info.dli_fname, self)) {
		self[0] = 0;
	}
	/* The injection paths are environment variables: set them only while
	 * no other thread can be reading the environment (a library loaded
	 * after start, by Python say, leaves them alone). */
	if (!early) {
		self[0] = 0;
	}
	if (nvtx_setup && (s->trace & TRACE_NVTX)) {
		nvtx_setup(self);
	}
	want |= (s->trace & TRACE_CUDA) ? 1u : 0;   /* CUPTI_WANT_API */
	want |= (s->trace & TRACE_GPU) ? 2u : 0;    /* CUPTI_WANT_GPU */
	want |= (s->trace & TRACE_MEMORY) ? 4u : 0; /* CUPTI_WANT_MEMORY */
	if (cupti_setup && want) {
		cupti_setup(want, self);
	}
}

static void load(void)
{
	struct settings *s = &preload_settings;
	char pid[24];

	coll_init();
	settings_parse(s, env);
	if (!getcwd(launch_cwd, sizeof(launch_cwd))) {
		launch_cwd[0] = 0; /* gone or too long: relative it stays */
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	const char *root = getenv("MXPROF_ROOT_PID");
	int early = only_thread();
	if (!root && early) {
		/* Before main, nobody else reads the environment yet. */
		setenv("MXPROF_ROOT_PID", pid, 0);
	}
	if (s->signal) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_dump_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(s->signal, &sa, NULL) < 0) {
			fprintf(stderr, "mxprof: cannot handle signal %d: %s\n",
				s->signal, strerror(errno));
			s->signal = 0;
		}
	}
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	if (hook_init) {
		hook_init(s->hook);
	}
	cuda_setup(early);
	loaded = 1;
	if (s->autostart) {
		state_run();
	}
}

void preload_init_once(void)
{
	pthread_once(&once, load);
}

/*
 * Fills the collector's settings for this process. Used when recording
 * starts for the first time.
 */
void preload_collector_config(struct coll_config *c)
{
	const struct settings *s = &preload_settings;
	const char *root = getenv("MXPROF_ROOT_PID");
	int descendant = root && atoi(root) != (int)getpid();

	memset(c, 0, sizeof(*c));
	resolve_output(c->output, sizeof(c->output), descendant);
	c->ring_records = s->ring_records;
	c->overflow = s->overflow;
	c->drain_period_ms = s->drain_period_ms;
	c->dump_period_s = s->continuous_dump ? s->dump_period_s : 0;
	c->max_trace_bytes = s->max_trace_mb << 20;
	c->rank = settings_rank(env);
	c->dump_signal = s->signal;
}

__attribute__((constructor)) static void mxprof_load(void)
{
	preload_init_once();
}

__attribute__((destructor)) static void mxprof_unload(void)
{
	if (!loaded) {
		return;
	}
	if (hook_finish) {
		hook_finish();
	}
	state_at_exit();
}
