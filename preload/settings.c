/*
 * settings.c - the MXPROF_* environment variables.
 *
 * Parsing is strict: a value is either entirely valid or rejected with one
 * line on stderr naming the variable, the bad value and what is accepted.
 * A rejected value never stops the program; the feature it controls falls
 * back to its safe default (see docs/settings.md), so that a typo costs
 * a feature, not a run.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "control.h"
#include "paths.h"
#include "settings.h"
#include "source.h"

/* KiB as records, rounded down to a power of two. */
static unsigned kb_records(uint64_t kb)
{
	uint64_t recs = kb * 1024 / sizeof(struct coll_rec);
	unsigned pow = 1;

	while ((uint64_t)pow * 2 <= recs) {
		pow *= 2;
	}
	return pow;
}

/* The most bytes of a bad value its line shows. */
#define BAD_SHOWN 300

static int bad(const char *var, const char *value, const char *accepted,
	       const char *fallback)
{
	size_t n = strlen(value);

	if (n > BAD_SHOWN) { /* a long value is cut in the line */
		fprintf(stderr,
			"mxprof: %s='%.*s...' (%zu bytes) is not valid "
			"(accepted: %s); %s\n",
			var, BAD_SHOWN, value, n, accepted, fallback);
		return 1;
	}
	fprintf(stderr, "mxprof: %s='%s' is not valid (accepted: %s); %s\n",
		var, value, accepted, fallback);
	return 1;
}

/* What parse_bool() takes, for the line about a bad value. */
#define BOOLS "1, true, yes, on, or 0, false, no, off (any case)"

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "1") || !strcasecmp(v, "true") ||
	    !strcasecmp(v, "yes") || !strcasecmp(v, "on")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(v, "0") || !strcasecmp(v, "false") ||
	    !strcasecmp(v, "no") || !strcasecmp(v, "off")) {
		*out = 0;
		return 0;
	}
	return -EINVAL;
}

/* A non-negative finite number of seconds, at most max. */
static int parse_seconds(const char *v, double max, double *out)
{
	char *end;

	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < 0 || d > max) {
		return -EINVAL;
	}
	*out = d;
	return 0;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *out)
{
	char *end;

	if (*v < '0' || *v > '9') {
		return -EINVAL;
	}
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || n > max) {
		return -EINVAL;
	}
	*out = n;
	return 0;
}

int settings_signal(const char *v)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2},   {"HUP", SIGHUP},
		     {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"URG", SIGURG},
		     {"PWR", SIGPWR}};
	uint64_t n;

	if (!strcasecmp(v, "none")) {
		return 0;
	}
	if (!strncasecmp(v, "SIG", 3)) {
		v += 3;
	}
	if (!strncasecmp(v, "RTMIN+", 6) && parse_uint(v + 6, 64, &n) == 0 &&
	    SIGRTMIN + (int)n <= SIGRTMAX) {
		return SIGRTMIN + (int)n;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(v, names[i].name)) {
			return names[i].sig;
		}
	}
	/* A number names the same signals as the names do. */
	if (parse_uint(v, 64, &n) == 0 && n >= 1 && (int)n <= SIGRTMAX) {
		if ((int)n >= SIGRTMIN) {
			return (int)n;
		}
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (names[i].sig == (int)n) {
				return (int)n;
			}
		}
	}
	return -1;
}

/* MXPROF_METADATA: key=value[,key=value...], no key empty (metadata.c
 * adds the pairs). */
static int parse_metadata(const char *v)
{
	const char *p = v;

	if (!*v) {
		return -EINVAL;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		if (!eq || eq == p) {
			return -EINVAL;
		}
		p += len;
		if (*p == ',' && !*++p) {
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_trace(const char *v, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"api", TRACE_API},       {"cuda", TRACE_CUDA},
		     {"gpu", TRACE_GPU},       {"nvtx", TRACE_NVTX},
		     {"memory", TRACE_MEMORY}, {"all", TRACE_ALL}};
	unsigned mask = 0;
	const char *p = v;

	while (*p) {
		size_t len = strcspn(p, ",");
		int found = 0;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (len == strlen(names[i].name) &&
			    !strncmp(p, names[i].name, len)) {
				mask |= names[i].bit;
				found = 1;
			}
		}
		if (!found) {
			return -EINVAL;
		}
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				return -EINVAL;
			}
		}
	}
	if (!mask) {
		return -EINVAL;
	}
	*out = mask;
	return 0;
}

int settings_dist(const char *(*get)(const char *), enum settings_dist what)
{
	/* torchrun, Open MPI, MPICH and Intel MPI (PMI), Slurm, MVAPICH. */
	static const char *const vars[][5] = {
		[SETTINGS_RANK] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
				   "SLURM_PROCID", "MV2_COMM_WORLD_RANK"},
		[SETTINGS_WORLD_SIZE] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
					 "PMI_SIZE", "SLURM_NTASKS",
					 "MV2_COMM_WORLD_SIZE"},
		[SETTINGS_LOCAL_RANK] = {"LOCAL_RANK",
					 "OMPI_COMM_WORLD_LOCAL_RANK",
					 "MPI_LOCALRANKID", "SLURM_LOCALID",
					 "MV2_COMM_WORLD_LOCAL_RANK"},
	};
	uint64_t n;

	for (size_t i = 0; i < sizeof(vars[0]) / sizeof(vars[0][0]); i++) {
		const char *v = get(vars[what][i]);
		/* A world of no process is no world: the next variable. */
		if (v && parse_uint(v, 1u << 30, &n) == 0 &&
		    (n > 0 || what != SETTINGS_WORLD_SIZE)) {
			return (int)n;
		}
	}
	return what == SETTINGS_WORLD_SIZE ? 0 : -1;
}

int settings_rank(const char *(*get)(const char *))
{
	return settings_dist(get, SETTINGS_RANK);
}

int settings_expand_output(const char *pattern, int pid, int rank,
			   int descendant, char *buf, size_t len)
{
	size_t n = 0;
	int has_pid = 0;
	char tmp[HOST_NAME_MAX + 16]; /* a host name, or a number */

	for (const char *p = pattern; *p; p++) {
		const char *piece = tmp;
		if (*p != '%') {
			tmp[0] = *p;
			tmp[1] = 0;
		} else {
			switch (*++p) {
			case 'p':
				snprintf(tmp, sizeof(tmp), "%d", pid);
				if (pid == 0) {
					strcpy(tmp, "*"); /* any process's */
				}
				has_pid = 1;
				break;
			case 'r':
				snprintf(tmp, sizeof(tmp), "%d",
					 rank < 0 ? 0 : rank);
				break;
			case 'h':
				if (gethostname(tmp, sizeof(tmp) - 1) < 0) {
					strcpy(tmp, "localhost");
				}
				tmp[sizeof(tmp) - 1] = 0;
				/* The kernel takes any byte in a host name:
				 * %h stays one name, never a folder. */
				for (char *c = tmp; (c = strchr(c, '/'));) {
					*c = '_';
				}
				break;
			case '%':
				strcpy(tmp, "%");
				break;
			default:
				return -EINVAL;
			}
		}
		size_t k = strlen(piece);
		if (n + k >= len) {
			return -ENAMETOOLONG;
		}
		memcpy(buf + n, piece, k);
		n += k;
	}
	buf[n] = 0;
	if (n == 0) {
		return -EINVAL;
	}
	if (descendant && !has_pid) {
		/* Insert ".<pid>" before the ending (paths_child), so a child
		 * never replaces its parent's file. */
		char name[4096];
		if (n >= sizeof(name)) {
			return -ENAMETOOLONG;
		}
		memcpy(name, buf, n + 1);
		snprintf(tmp, sizeof(tmp), "%d", pid);
		return paths_child(name, tmp, buf, len);
	}
	return 0;
}

void settings_output_name(const char *pattern, int pid, int rank,
			  int descendant, char *buf, size_t len)
{
	if (!pattern || !*pattern ||
	    settings_expand_output(pattern, pid, rank, descendant, buf, len) <
		    0) {
		settings_expand_output("profile.json", pid, rank, descendant,
				       buf, len);
	}
}

int settings_flight(const char *v, int *mode, uint64_t *n)
{
	char num[24];
	size_t k = strspn(v, "0123456789");
	uint64_t got;

	if (k == 0 || k >= sizeof(num)) {
		return -EINVAL;
	}
	memcpy(num, v, k);
	num[k] = 0;
	if (parse_uint(num, 1u << 30, &got) < 0 || got == 0) {
		return -EINVAL;
	}
	if (!strcmp(v + k, "s")) {
		*mode = COLL_FLIGHT_SECONDS;
	} else if (!strcmp(v + k, "steps")) {
		*mode = COLL_FLIGHT_STEPS;
	} else {
		return -EINVAL;
	}
	*n = got;
	return 0;
}

int settings_trigger(const char *v, double *slow, uint64_t *hang_s)
{
	double f = 0;
	uint64_t h = 0;
	const char *p = v;

	if (!*v) {
		return -EINVAL;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		char item[64];
		if (len == 0 || len >= sizeof(item)) {
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = 0;
		if (!strncmp(item, "slow:", 5) && len > 6 &&
		    item[len - 1] == 'x' && f == 0) {
			char *end;
			item[len - 1] = 0;
			errno = 0;
			f = strtod(item + 5, &end);
			if (errno || *end || end == item + 5 || !isfinite(f) ||
			    f < 1 || item[5] < '0' || item[5] > '9') {
				return -EINVAL;
			}
		} else if (!strncmp(item, "hang:", 5) && len > 6 &&
			   item[len - 1] == 's' && h == 0) {
			item[len - 1] = 0;
			if (parse_uint(item + 5, 1u << 30, &h) < 0 || h == 0) {
				return -EINVAL;
			}
		} else {
			return -EINVAL;
		}
		p += len;
		if (*p == ',' && !*++p) {
			return -EINVAL;
		}
	}
	*slow = f;
	*hang_s = h;
	return 0;
}

/* MXPROF_FLIGHT, MXPROF_FLIGHT_MB, MXPROF_TRIGGER,
 * MXPROF_FLIGHT_MAX_DUMPS. Returns the number of bad values. */
static int parse_flight(struct settings *s, const char *(*get)(const char *))
{
	const char *v;
	int errors = 0;
	uint64_t n;

	s->flight_mb = 32;
	s->flight_max_dumps = 10;
	if ((v = get("MXPROF_FLIGHT")) &&
	    settings_flight(v, &s->flight_mode, &s->flight_n) < 0) {
		errors += bad("MXPROF_FLIGHT", v, SETTINGS_FLIGHT_FORMS,
			      "no flight mode: recording everything");
	}
	if ((v = get("MXPROF_FLIGHT_MB"))) {
		if (parse_uint(v, 1u << 24, &n) == 0 && n >= 1) {
			s->flight_mb = n;
		} else {
			errors += bad("MXPROF_FLIGHT_MB", v,
				      "a whole number of MiB, 1 to 16777216",
				      "using 256");
		}
	}
	if ((v = get("MXPROF_TRIGGER")) &&
	    settings_trigger(v, &s->trigger_slow, &s->trigger_hang_s) < 0) {
		errors += bad("MXPROF_TRIGGER", v, SETTINGS_TRIGGER_FORMS,
			      "no triggers");
	} else if (v && !s->flight_mode) {
		fprintf(stderr,
			"mxprof: MXPROF_TRIGGER='%.*s' needs MXPROF_FLIGHT "
			"(flight mode); no triggers\n",
			BAD_SHOWN, v);
		s->trigger_slow = 0;
		s->trigger_hang_s = 0;
	}
	if ((v = get("MXPROF_FLIGHT_MAX_DUMPS"))) {
		if (parse_uint(v, 1000000, &n) == 0) {
			s->flight_max_dumps = (unsigned)n;
		} else {
			errors +=
				bad("MXPROF_FLIGHT_MAX_DUMPS", v,
				    "a whole number, 0 to 1000000", "using 10");
		}
	}
	return errors;
}

int settings_parse(struct settings *s, const char *(*get)(const char *))
{
	const char *v;
	int errors = 0;
	uint64_t n;
	double d;

	memset(s, 0, sizeof(*s));
	strcpy(s->output, "profile.json");
	s->trace = TRACE_ALL;
	s->signal = SIGUSR1;
	s->ring_records = 65536;
	s->drain_period_ms = 10;
	s->dump_period_s = 1.0;

	/* MXNet's own switch stands in for MXPROF_AUTOSTART when that is
	 * unset. */
	const char *autostart = "MXPROF_AUTOSTART";
	if (!(v = get(autostart)) && (v = get("MXNET_PROFILER_AUTOSTART"))) {
		autostart = "MXNET_PROFILER_AUTOSTART";
	}
	if (v && parse_bool(v, &s->autostart)) {
		errors += bad(autostart, v, BOOLS,
			      "not starting until the program asks");
		s->autostart = 0;
	}
	if ((v = get("MXPROF_OUTPUT"))) {
		char probe[4096];
		int rc = settings_expand_output(v, 1, 0, 0, probe,
						sizeof(probe));
		if (rc < 0) {
			errors += bad("MXPROF_OUTPUT", v,
				      "a path; %p pid, %r rank, %h host, %%",
				      "using profile.json");
		} else {
			snprintf(s->output, sizeof(s->output), "%s", v);
		}
	}
	if ((v = get("MXPROF_TRACE")) && parse_trace(v, &s->trace) < 0) {
		errors += bad("MXPROF_TRACE", v,
			      "a list of api,cuda,gpu,nvtx,memory or all",
			      "recording all sources");
		s->trace = TRACE_ALL;
	}
	if ((v = get("MXPROF_METADATA"))) {
		if (parse_metadata(v) < 0) {
			errors += bad("MXPROF_METADATA", v,
				      "key=value[,key=value...], keys not "
				      "empty",
				      "no metadata from the environment");
		} else {
			s->metadata = v;
		}
	}
	if ((v = get("MXPROF_HOOK"))) {
		s->hook = v; /* checked by the hook engine */
	}
	if ((v = get("MXPROF_SIGNAL"))) {
		int sig = settings_signal(v);
		if (sig < 0) {
			errors += bad(
				"MXPROF_SIGNAL", v,
				"USR1, USR2, HUP, PROF, WINCH, URG, PWR, "
				"RTMIN+N, the number of one of them or none",
				"no dump signal");
			sig = 0;
		}
		s->signal = sig;
	}
	if ((v = get("MXPROF_DELAY")) && parse_seconds(v, 1e9, &d) == 0) {
		s->delay_s = d;
	} else if (v) {
		errors += bad("MXPROF_DELAY", v, "seconds >= 0",
			      "recording from the start");
	}
	if ((v = get("MXPROF_DURATION")) && parse_seconds(v, 1e9, &d) == 0) {
		s->duration_s = d;
	} else if (v) {
		errors += bad("MXPROF_DURATION", v,
			      "seconds > 0, or 0 for no limit",
			      "recording without a time limit");
	}
	if ((v = get("MXPROF_CAPTURE_NVTX"))) {
		if (!*v || strlen(v) >= sizeof(s->capture_nvtx)) {
			errors += bad("MXPROF_CAPTURE_NVTX", v,
				      "an NVTX range name of 1 to 255 bytes",
				      "no NVTX capture range");
		} else {
			strcpy(s->capture_nvtx, v);
		}
	}
	if ((v = get("MXPROF_STEP"))) {
		if (!*v || strlen(v) >= sizeof(s->step)) {
			errors += bad("MXPROF_STEP", v,
				      "a glob of 1 to 255 bytes naming an "
				      "annotation, NVTX range or hooked "
				      "function",
				      "steps end at Optimizer.step#*");
		} else {
			strcpy(s->step, v);
		}
	}
	if ((v = get("MXPROF_STEPS"))) {
		if (strlen(v) >= sizeof(s->steps_text) ||
		    coll_steps_parse(v, &s->steps) < 0) {
			errors += bad("MXPROF_STEPS", v,
				      "wait:warmup:active[:repeat] with "
				      "active >= 1, or list:N,N-M,...",
				      "recording every step");
			memset(&s->steps, 0, sizeof(s->steps));
		} else {
			strcpy(s->steps_text, v);
		}
	}
	if ((v = get("MXPROF_CONTINUOUS_DUMP")) &&
	    parse_bool(v, &s->continuous_dump)) {
		errors += bad("MXPROF_CONTINUOUS_DUMP", v, BOOLS,
			      "dumping at exit and on the signal only");
		s->continuous_dump = 0;
	}
	if ((v = get("MXPROF_DUMP_PERIOD"))) {
		if (parse_seconds(v, 1e6, &d) == 0 && d >= 0.01) {
			s->dump_period_s = d;
		} else {
			errors += bad("MXPROF_DUMP_PERIOD", v,
				      "seconds, at least 0.01",
				      "dumping every 1 second");
		}
	}
	if ((v = get("MXPROF_MAX_TRACE_MB"))) {
		if (parse_uint(v, 1u << 30, &n) == 0) {
			s->max_trace_mb = n;
		} else {
			errors += bad("MXPROF_MAX_TRACE_MB", v,
				      "a whole number of MiB, 0 for no cap",
				      "no cap");
		}
	}
	if ((v = get("MXPROF_STACKS"))) {
		if (parse_uint(v, 128, &n) == 0) {
			s->stacks = (int)n;
		} else {
			errors += bad("MXPROF_STACKS", v, "0 to 128",
				      "no call stacks");
		}
	}
	if ((v = get("MXPROF_OVERFLOW"))) {
		if (!strcmp(v, "drop")) {
			s->overflow = COLL_OVERFLOW_DROP;
		} else if (!strcmp(v, "block")) {
			s->overflow = COLL_OVERFLOW_BLOCK;
		} else {
			errors += bad("MXPROF_OVERFLOW", v, "drop or block",
				      "dropping and counting");
		}
	}
	if ((v = get("MXPROF_BUFFER_KB"))) {
		if (parse_uint(v, 1u << 20, &n) == 0 && n >= 64) {
			s->ring_records = kb_records(n);
		} else {
			errors += bad("MXPROF_BUFFER_KB", v,
				      "64 to 1048576 (KiB per thread)",
				      "using 2048");
		}
	}
	s->ring_records_max = s->ring_records * 8;
	if ((v = get("MXPROF_BUFFER_MAX_KB"))) {
		uint64_t least =
			s->ring_records * sizeof(struct coll_rec) / 1024;
		if (parse_uint(v, 1u << 23, &n) == 0 && n >= least) {
			s->ring_records_max = kb_records(n);
		} else {
			char what[96];
			snprintf(what, sizeof(what),
				 "%llu to 8388608 (KiB per thread, at least "
				 "MXPROF_BUFFER_KB)",
				 (unsigned long long)least);
			errors += bad("MXPROF_BUFFER_MAX_KB", v, what,
				      "using 8 times MXPROF_BUFFER_KB");
		}
	}
	if ((v = get("MXPROF_DRAIN_PERIOD_MS"))) {
		if (parse_uint(v, 10000, &n) == 0 && n >= 1) {
			s->drain_period_ms = (unsigned)n;
		} else {
			errors += bad("MXPROF_DRAIN_PERIOD_MS", v, "1 to 10000",
				      "using 10");
		}
	}
	return errors + parse_flight(s, get);
}
