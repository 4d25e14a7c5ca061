/*
 * config.c - this process's collector settings: the trace path it writes
 * and the rest of struct coll_config, from the MXPROF_* settings.
 *
 * A relative MXPROF_OUTPUT names a file in the folder the program started
 * in (kept at load), even after the program changes folder. A forked child
 * and an exec'ed descendant write "<base>.<pid>.json" unless the pattern
 * has %p, so that no child ever replaces its parent's file.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "source.h"
#include "preload.h"

struct settings preload_settings;

/* The working folder when the library was loaded. */
static char launch_cwd[PATH_MAX];

/*
 * MXPROF_ROOT_PID as the process received it, read at load from environ
 * itself: a program that brings its own getenv and setenv (bash) may
 * later answer NULL for it, and a descendant that then believed it was
 * the root would write under the root's names. When absent, this process
 * is the root: its pid, which a forked child keeps.
 */
static int root_pid;

static int root_pid_at_load(void)
{
	static const char key[] = "MXPROF_ROOT_PID=";
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, key, sizeof(key) - 1) == 0) {
			return atoi(*e + sizeof(key) - 1);
		}
	}
	return 0;
}

static const char *env(const char *name)
{
	return getenv(name);
}

void config_init(void)
{
	root_pid = root_pid_at_load();
	if (root_pid <= 0) {
		root_pid = (int)getpid();
	}
	if (!getcwd(launch_cwd, sizeof(launch_cwd))) {
		launch_cwd[0] = 0; /* gone or too long: relative it stays */
	}
}

void config_output(char *out, size_t len, int descendant)
{
	const struct settings *s = &preload_settings;
	char rel[PATH_MAX];

	settings_output_name(s->output, (int)getpid(), settings_rank(env),
			     descendant, rel, sizeof(rel));
	if (rel[0] == '/' || !launch_cwd[0] ||
	    snprintf(out, len, "%s/%s", launch_cwd, rel) >= (int)len) {
		snprintf(out, len, "%s", rel);
	}
}

int config_descendant(void)
{
	return root_pid && root_pid != (int)getpid();
}

void config_collector(struct coll_config *c)
{
	const struct settings *s = &preload_settings;
	int descendant = config_descendant();

	memset(c, 0, sizeof(*c));
	config_output(c->output, sizeof(c->output), descendant);
	/* An earlier image of this process, before exec, began a journal:
	 * its trace is this one's. */
	c->continue_journal =
		exits_continued(c->output, sizeof(c->output), &c->dump_owed);
	c->ring_records = s->ring_records;
	c->ring_records_max = s->ring_records_max;
	c->overflow = s->overflow;
	c->drain_period_ms = s->drain_period_ms;
	c->dump_period_s = s->continuous_dump ? s->dump_period_s : 0;
	c->max_trace_bytes = s->max_trace_mb << 20;
	c->rank = settings_rank(env);
	c->world_size = settings_dist(env, SETTINGS_WORLD_SIZE);
	c->local_rank = settings_dist(env, SETTINGS_LOCAL_RANK);
	c->has_local_rank = c->local_rank >= 0;
	c->dump_signal = s->signal;
	c->dump_signal_taken = s->signal_taken;
	c->flight_mode = s->flight_mode;
	c->flight_n = s->flight_n;
	c->flight_bytes = s->flight_mb << 20;
	c->trigger_slow = s->trigger_slow;
	c->trigger_hang_s = s->trigger_hang_s;
	c->flight_max_dumps = s->flight_max_dumps;
}
