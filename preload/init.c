/*
 * init.c - load and unload of the injected library, fork,
 * and the event sources this build has.
 *
 * The constructor reads the settings, installs the signal handlers
 * (signals.c) and the fork handlers, sets up each source (the hook engine, NVTX
 * and CUDA injection, CUPTI) and registers with the collector those that take
 * part in its life cycle, and starts recording under MXPROF_AUTOSTART. The
 * destructor writes the final dump.
 *
 * Children: the first process that loads mxprof exports MXPROF_ROOT_PID.
 * A process that finds a different MXPROF_ROOT_PID (an exec'ed child), and
 * a forked child, write to "<base>.<pid>.json" unless the pattern has %p
 * (config.c), so that no child ever replaces its parent's file. An image
 * that execs in the same pid hands its journal to the next one, which goes
 * on appending to it (exits.c, MXPROF_CONTINUE).
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

#include "control.h"
#include "source.h"
#include "preload.h"
#include "stack.h"
#ifdef MXPROF_WITH_HOOK
#include "hook.h"
#endif
#ifdef MXPROF_WITH_CUDA
#include "cupti.h"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static const char *env(const char *name)
{
	return getenv(name);
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

static void after_fork_child(void)
{
	char out[4096];

	config_output(out, sizeof(out), 1);
	coll_fork_child(out);
}

#ifdef MXPROF_WITH_CUDA
/*
 * Makes libmxprof.so (self_path) the NVTX injection library when
 * NVTX_INJECTION64_PATH is unset. Returns 0, or -EBUSY after one line when
 * another tool owns it.
 */
static int nvtx_injection(const char *self_path)
{
	const char *cur = getenv("NVTX_INJECTION64_PATH");

	if (!cur || !*cur) {
		if (self_path && *self_path) {
			setenv("NVTX_INJECTION64_PATH", self_path, 1);
		}
		return 0;
	}
	if (self_path && strcmp(cur, self_path) == 0) {
		return 0;
	}
	const char *base = strrchr(cur, '/');
	if (strcmp(base ? base + 1 : cur, "libmxprof.so") == 0) {
		return 0;
	}
	fprintf(stderr,
		"mxprof: NVTX_INJECTION64_PATH is set to %s (another tool); "
		"NVTX ranges go to that tool, not to mxprof\n",
		cur);
	return -EBUSY;
}

/*
 * Points NVTX and the CUDA driver at this library (the injection paths,
 * only where unset) and sets up the CUPTI source, for the sources
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
	if (s->trace & TRACE_NVTX) {
		nvtx_injection(self);
	}
	want |= (s->trace & TRACE_CUDA) ? CUPTI_WANT_API : 0;
	want |= (s->trace & TRACE_GPU) ? CUPTI_WANT_GPU : 0;
	want |= (s->trace & TRACE_MEMORY) ? CUPTI_WANT_MEMORY : 0;
	if (want) {
		if (stack_depth > 0) {
			cupti_set_stacks(stack_capture);
		}
		cupti_setup(want, self);
	}
}
#endif

static void load(void)
{
	struct settings *s = &preload_settings;
	char pid[24];

	coll_init();
	settings_parse(s, env);
	/* Before any hook is placed: a hooked function may mark steps. */
	coll_steps_config(s->step[0] ? s->step : NULL, &s->steps);
	config_init();
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	const char *root = getenv("MXPROF_ROOT_PID");
	int early = only_thread();
	exits_init(early);
	if (!root && early) {
		/* Before main, nobody else reads the environment yet. */
		setenv("MXPROF_ROOT_PID", pid, 0);
	}
	signals_init(s);
	/* The fork handlers take every lock of the written order (see
	 * lock.h); the state machine's is one of them. */
	coll_source_add(&state_source);
	coll_source_add(&threads_now_source);
	/* A hang's file holds where every thread stood. */
	coll_set_trigger_hook(threads_now_on_trigger);
	state_set_api(s->trace & TRACE_API);
	if (s->metadata) {
		metadata_load(s->metadata);
	}
	stack_init(s->stacks);
	if (stack_depth > 0) {
		stack_set_namer(stack_name);
	}
#ifdef MXPROF_WITH_HOOK
	if (hook_init(s->hook) == 0) {
		hook_set_descendant(config_descendant());
		coll_source_add(&hook_source);
	}
#endif
#ifdef MXPROF_WITH_CUDA
	cuda_setup(early);
#else
	(void)early;
#endif
	pthread_atfork(coll_fork_prepare, coll_fork_parent, after_fork_child);
	loaded = 1;
	if (s->autostart) {
		state_run();
	}
}

void preload_init_once(void)
{
	pthread_once(&once, load);
}

__attribute__((constructor)) static void mxprof_load(void)
{
	preload_init_once();
}

__attribute__((destructor)) static void mxprof_unload(void)
{
	if (loaded) {
		state_at_exit();
		uint64_t n = stack_skipped();
		if (n) {
			fprintf(stderr,
				"mxprof: %llu call stacks were left out "
				"(nested in signal handlers more than 4 "
				"deep, or no memory for them)\n",
				(unsigned long long)n);
		}
	}
}
