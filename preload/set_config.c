/*
 * set_config.c - mxprof_set_config(): MXNet's profiler keys.
 *
 * Keys act at once, as in MXNet: "filename" names the files of the next
 * dump (recording that began keeps its journal where it is; a folder gets
 * profile.json), and the
 * profile_* switches turn sources on and off while the program runs:
 * profile_api the api source (hooked C API calls), profile_memory the
 * memory source (device allocations, cupti/memswitch.c), profile_all
 * both. MXNet's profile_imperative and
 * profile_symbolic select its own engine's operators, which mxprof does
 * not see apart from other calls: they are accepted and change nothing.
 *
 * Flight mode's keys (flight, trigger, flight_mb, flight_max_dumps) are
 * MXPROF_FLIGHT's and its companions', taken when recording first
 * starts and refused after that.
 *
 * Under mxprof run, a new filename is also noted, as "<pid>\t<trace>", in
 * the file MXPROF_RUN_NOTES names, so that mxprof run's summary follows
 * the files the program really writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "source.h"
#include "mxprof.h"
#include "preload.h"
#ifdef MXPROF_WITH_CUDA
#include "cupti.h"
#endif

/* Appends "<pid>\t<trace>\n" to $MXPROF_RUN_NOTES (set by mxprof run),
 * in one write; a path that is not a regular file is left alone. */
static void note_output(const char *trace)
{
	const char *notes = getenv("MXPROF_RUN_NOTES");
	char line[4200];
	struct stat st;
	int fd, n;

	if (!notes || !*notes) {
		return;
	}
	fd = open(notes,
		  O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	n = snprintf(line, sizeof(line), "%d\t%s\n", (int)getpid(), trace);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && n > 0 &&
	    n < (int)sizeof(line) && write(fd, line, (size_t)n) < 0) {
		n = 0; /* nothing to do: the summary stays at -o */
	}
	close(fd);
}

static int bad_config(const char *key, const char *value, const char *ok)
{
	fprintf(stderr, "mxprof: set_config(%s='%s'): accepted: %s\n", key,
		value ? value : "(null)", ok);
	return -EINVAL;
}

/* profile_memory: the memory source (device allocations, as Device
 * Storage and the GPU memory counters), from now on. */
static void memory_switch(int on)
{
#ifdef MXPROF_WITH_CUDA
	cupti_memory_switch(on);
#else
	(void)on;
#endif
}

/*
 * Flight mode's keys: flight (MXPROF_FLIGHT's "<N>s" or "<N>steps", or
 * "off"), trigger (MXPROF_TRIGGER's list, or "none"), flight_mb and
 * flight_max_dumps. The collector takes them when recording first
 * starts; after that they are refused with one line (-EBUSY).
 */
static int flight_config(struct settings *s, const char *key, const char *value)
{
	char *end;
	unsigned long long n;

	if (state_started()) {
		fprintf(stderr,
			"mxprof: set_config(%s='%s'): flight mode is chosen "
			"before recording starts (set_config before "
			"set_state('run'), or MXPROF_FLIGHT and MXPROF_TRIGGER "
			"in the environment); recording has started, nothing "
			"changes\n",
			key, value);
		return -EBUSY;
	}
	if (!strcmp(key, "flight")) {
		if (!strcmp(value, "off")) {
			s->flight_mode = COLL_FLIGHT_OFF;
		} else if (settings_flight(value, &s->flight_mode,
					   &s->flight_n) < 0) {
			return bad_config(key, value,
					  SETTINGS_FLIGHT_FORMS ", or off");
		}
		return 0;
	}
	if (!strcmp(key, "trigger")) {
		if (!strcmp(value, "none")) {
			s->trigger_slow = 0;
			s->trigger_hang_s = 0;
		} else if (settings_trigger(value, &s->trigger_slow,
					    &s->trigger_hang_s) < 0) {
			return bad_config(key, value,
					  SETTINGS_TRIGGER_FORMS ", or none");
		}
		return 0;
	}
	errno = 0;
	n = strtoull(value, &end, 10);
	if (!strcmp(key, "flight_mb")) {
		if (errno || *end || end == value || value[0] == '-' || n < 1 ||
		    n > (1u << 24)) {
			return bad_config(key, value, "1 to 16777216 (MiB)");
		}
		s->flight_mb = n;
		return 0;
	}
	if (errno || *end || end == value || value[0] == '-' || n > 1000000) {
		return bad_config(key, value, "0 to 1000000");
	}
	s->flight_max_dumps = (unsigned)n;
	return 0;
}

int mxprof_set_config(const char *key, const char *value)
{
	static const char *const flags[] = {
		"profile_all",	      "profile_api",	  "profile_memory",
		"profile_imperative", "profile_symbolic", "aggregate_stats",
		"continuous_dump"};
	struct settings *s = &preload_settings;

	preload_init_once();
	if (!key || !value) {
		return bad_config(key ? key : "(null)", value,
				  "a key and a value");
	}
	if (!strcmp(key, "filename")) {
		char out[4096];
		if (settings_expand_output(value, 1, 0, 0, out, sizeof(out)) <
		    0) {
			return bad_config(key, value,
					  "a path; %p pid, %r rank, %h host");
		}
		/* A folder (MindSpore's output_path) gets profile.json. */
		struct stat st;
		size_t n = strlen(value);
		if (n && (value[n - 1] == '/' ||
			  (stat(value, &st) == 0 && S_ISDIR(st.st_mode)))) {
			snprintf(s->output, sizeof(s->output),
				 "%s%sprofile.json", value,
				 value[n - 1] == '/' ? "" : "/");
		} else {
			snprintf(s->output, sizeof(s->output), "%s", value);
		}
		struct coll_config cfg;
		config_collector(&cfg);
		/* Whether the journal exists yet depends on the drain's
		 * timing; the line depends on the state alone. */
		coll_set_output(cfg.output);
		note_output(cfg.output);
		const char *env = getenv("MXPROF_OUTPUT");
		if (!state_started() && env && strcmp(env, value) != 0) {
			/* mxprof run, or the user, looks for the trace where
			 * MXPROF_OUTPUT says: tell where it goes. */
			fprintf(stderr,
				"mxprof: set_config(filename='%s'): the trace "
				"and tables go to %s, not to MXPROF_OUTPUT's "
				"%s\n",
				value, cfg.output, env);
		} else if (state_started()) {
			fprintf(stderr,
				"mxprof: set_config(filename='%s'): the next "
				"dump writes %s and its tables; files written "
				"before stay where they are\n",
				value, cfg.output);
		}
		return 0;
	}
	if (!strcmp(key, "dump_period")) {
		double d = strtod(value, NULL);
		if (!(d >= 0.01 && d <= 1e6)) {
			return bad_config(key, value, "seconds, at least 0.01");
		}
		s->dump_period_s = d;
		if (s->continuous_dump) {
			coll_set_dump_period(d);
		}
		return 0;
	}
	if (!strcmp(key, "flight") || !strcmp(key, "trigger") ||
	    !strcmp(key, "flight_mb") || !strcmp(key, "flight_max_dumps")) {
		return flight_config(s, key, value);
	}
	if (!strcmp(key, "max_trace_mb")) {
		char *end;
		unsigned long long n = strtoull(value, &end, 10);
		if (*end || end == value) {
			return bad_config(key, value, "a whole number of MiB");
		}
		s->max_trace_mb = n;
		return 0;
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strcmp(key, flags[i]) != 0) {
			continue;
		}
		int on;
		if (!strcmp(value, "1") || !strcasecmp(value, "true")) {
			on = 1;
		} else if (!strcmp(value, "0") || !strcasecmp(value, "false")) {
			on = 0;
		} else {
			return bad_config(key, value, "1/0 or true/false");
		}
		if (!strcmp(key, "continuous_dump")) {
			s->continuous_dump = on;
			coll_set_dump_period(on ? s->dump_period_s : 0);
		} else if (!strcmp(key, "profile_api")) {
			/* The api source: hooked C API calls. */
			state_set_api(on);
		} else if (!strcmp(key, "profile_memory")) {
			memory_switch(on);
		} else if (!strcmp(key, "profile_all")) {
			state_set_api(on);
			memory_switch(on);
		}
		return 0;
	}
	/* MXNet keys with no meaning here, accepted so that MXNet code runs
	 * unchanged. */
	if (!strcmp(key, "profile_process")) {
		if (strcmp(value, "worker") && strcmp(value, "server")) {
			return bad_config(key, value, "worker or server");
		}
		return 0;
	}
	if (!strcmp(key, "gpu_memory_profile_filename_prefix")) {
		return 0;
	}
	return bad_config(key, value,
			  "keys filename, continuous_dump, dump_period, "
			  "aggregate_stats, max_trace_mb, flight, trigger, "
			  "flight_mb, flight_max_dumps, profile_*");
}
