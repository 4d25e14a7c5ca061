/*
 * test_settings.c - the MXPROF_* variables (preload/settings.c), read
 * through a fake environment, and the output pattern, signal and rank
 * helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "testutil.h"

#include "collector.h"
#include "preload.h"

/* ---- a fake environment ----------------------------------------------- */

#define MAX_VARS 16

static struct {
	const char *name;
	const char *value;
} env[MAX_VARS];
static int nenv;

static void env_clear(void)
{
	nenv = 0;
}

static void env_set(const char *name, const char *value)
{
	assert_true(nenv < MAX_VARS);
	env[nenv].name = name;
	env[nenv].value = value;
	nenv++;
}

static const char *fake_get(const char *name)
{
	for (int i = 0; i < nenv; i++) {
		if (strcmp(env[i].name, name) == 0) {
			return env[i].value;
		}
	}
	return NULL;
}

/* ---- a fake host name -------------------------------------------------- */

/* What gethostname() answers while set; the real name otherwise. This
 * definition stands in for the C library's in the whole test program. */
static const char *fake_host;

int gethostname(char *name, size_t len)
{
	struct utsname u;
	const char *h = fake_host;

	if (!h) {
		if (uname(&u) < 0) {
			return -1;
		}
		h = u.nodename;
	}
	if (strlen(h) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(name, h);
	return 0;
}

/* ---- capturing stderr ------------------------------------------------- */

static char captured[16384];

/* Parses the fake environment into s with stderr going to a file, and
 * leaves what was printed in captured. Returns the error count. */
static int parse_captured(struct settings *s)
{
	char path[] = "/tmp/mxprof-test-stderr-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	dup2(fd, 2);
	int errors = settings_parse(s, fake_get);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, captured, sizeof(captured) - 1, 0);
	close(fd);
	captured[n > 0 ? n : 0] = 0;
	return errors;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++) {
		n += *s == '\n';
	}
	return n;
}

/* ---- settings_parse ----------------------------------------------------- */

static void assert_defaults(const struct settings *s)
{
	assert_int_equal(s->autostart, 0);
	assert_string_equal(s->output, "profile.json");
	assert_int_equal(s->trace, TRACE_ALL);
	assert_null(s->hook);
	assert_int_equal(s->signal, SIGUSR1);
	assert_true(s->delay_s == 0.0);
	assert_true(s->duration_s == 0.0);
	assert_string_equal(s->capture_nvtx, "");
	assert_int_equal(s->continuous_dump, 0);
	assert_true(s->dump_period_s == 1.0);
	assert_int_equal(s->max_trace_mb, 0);
	assert_int_equal(s->stacks, 0);
	assert_int_equal(s->overflow, COLL_OVERFLOW_DROP);
	assert_int_equal(s->ring_records, 65536);
	assert_int_equal(s->ring_records_max, 65536 * 8);
	assert_int_equal(s->drain_period_ms, 10);
}

static void test_settings_defaults_without_variables(void **st)
{
	struct settings s;

	(void)st;
	env_clear();
	memset(&s, 0x5a, sizeof(s));
	assert_int_equal(parse_captured(&s), 0);
	assert_string_equal(captured, "");
	assert_defaults(&s);
}

/* Parses one variable with no error and nothing on stderr. */
static void parse_one(struct settings *s, const char *name, const char *value)
{
	env_clear();
	env_set(name, value);
	int errors = parse_captured(s);
	if (errors != 0 || captured[0]) {
		fail_msg("%s='%s': %d errors, stderr: %s", name, value, errors,
			 captured);
	}
}

static void test_settings_accepts_each_valid_value(void **st)
{
	struct settings s;
	char nvtx[256];

	(void)st;
	static const char *const yes[] = {"1", "true", "YES", "On"};
	static const char *const no[] = {"0", "false", "No", "OFF"};
	for (int i = 0; i < 4; i++) {
		parse_one(&s, "MXPROF_AUTOSTART", yes[i]);
		assert_int_equal(s.autostart, 1);
		parse_one(&s, "MXPROF_AUTOSTART", no[i]);
		assert_int_equal(s.autostart, 0);
		parse_one(&s, "MXPROF_CONTINUOUS_DUMP", yes[i]);
		assert_int_equal(s.continuous_dump, 1);
		parse_one(&s, "MXPROF_CONTINUOUS_DUMP", no[i]);
		assert_int_equal(s.continuous_dump, 0);
	}

	parse_one(&s, "MXPROF_STEP", "train_step*");
	assert_string_equal(s.step, "train_step*");
	parse_one(&s, "MXPROF_STEPS", "2:1:3");
	assert_int_equal(s.steps.mode, COLL_STEPS_SCHEDULE);
	assert_string_equal(s.steps_text, "2:1:3");
	parse_one(&s, "MXPROF_STEPS", "list:5,10-12");
	assert_int_equal(s.steps.mode, COLL_STEPS_LIST);
	assert_int_equal(s.steps.nranges, 2);

	parse_one(&s, "MXPROF_OUTPUT", "runs/%h-%p-r%r-100%%.json.gz");
	assert_string_equal(s.output, "runs/%h-%p-r%r-100%%.json.gz");

	parse_one(&s, "MXPROF_TRACE", "api");
	assert_int_equal(s.trace, TRACE_API);
	parse_one(&s, "MXPROF_TRACE", "api,nvtx");
	assert_int_equal(s.trace, TRACE_API | TRACE_NVTX);
	parse_one(&s, "MXPROF_TRACE", "cuda,gpu,memory");
	assert_int_equal(s.trace, TRACE_CUDA | TRACE_GPU | TRACE_MEMORY);
	parse_one(&s, "MXPROF_TRACE", "all");
	assert_int_equal(s.trace, TRACE_ALL);

	parse_one(&s, "MXPROF_HOOK", "@mxnet,libz.so*:deflate*");
	assert_string_equal(s.hook, "@mxnet,libz.so*:deflate*");

	parse_one(&s, "MXPROF_SIGNAL", "USR2");
	assert_int_equal(s.signal, SIGUSR2);
	parse_one(&s, "MXPROF_SIGNAL", "none");
	assert_int_equal(s.signal, 0);
	parse_one(&s, "MXPROF_SIGNAL", "SIGRTMIN+2");
	assert_int_equal(s.signal, SIGRTMIN + 2);

	parse_one(&s, "MXPROF_DELAY", "2.5");
	assert_true(s.delay_s == 2.5);
	parse_one(&s, "MXPROF_DELAY", "0");
	assert_true(s.delay_s == 0.0);
	parse_one(&s, "MXPROF_DURATION", "10");
	assert_true(s.duration_s == 10.0);
	parse_one(&s, "MXPROF_DURATION", "0");
	assert_true(s.duration_s == 0.0);

	parse_one(&s, "MXPROF_CAPTURE_NVTX", "train_step");
	assert_string_equal(s.capture_nvtx, "train_step");
	memset(nvtx, 'n', 255);
	nvtx[255] = 0;
	parse_one(&s, "MXPROF_CAPTURE_NVTX", nvtx);
	assert_string_equal(s.capture_nvtx, nvtx);

	parse_one(&s, "MXPROF_DUMP_PERIOD", "0.5");
	assert_true(s.dump_period_s == 0.5);
	parse_one(&s, "MXPROF_DUMP_PERIOD", "0.01");
	assert_true(s.dump_period_s == 0.01);

	parse_one(&s, "MXPROF_MAX_TRACE_MB", "512");
	assert_int_equal(s.max_trace_mb, 512);
	parse_one(&s, "MXPROF_MAX_TRACE_MB", "0");
	assert_int_equal(s.max_trace_mb, 0);

	/* A valid depth: kept, with nothing said. */
	static const char *const depths[] = {"16", "128"};
	for (int i = 0; i < 2; i++) {
		env_clear();
		env_set("MXPROF_STACKS", depths[i]);
		assert_int_equal(parse_captured(&s), 0);
		assert_int_equal(s.stacks, atoi(depths[i]));
		assert_int_equal(count_lines(captured), 0);
	}
	parse_one(&s, "MXPROF_STACKS", "0");
	assert_int_equal(s.stacks, 0);

	parse_one(&s, "MXPROF_OVERFLOW", "block");
	assert_int_equal(s.overflow, COLL_OVERFLOW_BLOCK);
	parse_one(&s, "MXPROF_OVERFLOW", "drop");
	assert_int_equal(s.overflow, COLL_OVERFLOW_DROP);

	/* KiB per thread, rounded down to a power of two of 32-byte
	 * records. */
	parse_one(&s, "MXPROF_BUFFER_KB", "64");
	assert_int_equal(s.ring_records, 2048);
	parse_one(&s, "MXPROF_BUFFER_KB", "100");
	assert_int_equal(s.ring_records, 2048);
	parse_one(&s, "MXPROF_BUFFER_KB", "4096");
	assert_int_equal(s.ring_records, 131072);
	parse_one(&s, "MXPROF_BUFFER_KB", "1048576");
	assert_int_equal(s.ring_records, 33554432);
	assert_int_equal(s.ring_records_max, 33554432u * 8);
	/* The biggest a full ring grows to: 8 times the first by default,
	 * from the first size (no growing) up. */
	parse_one(&s, "MXPROF_BUFFER_MAX_KB", "2048");
	assert_int_equal(s.ring_records, 65536);
	assert_int_equal(s.ring_records_max, 65536);
	parse_one(&s, "MXPROF_BUFFER_MAX_KB", "100000");
	assert_int_equal(s.ring_records_max, 2097152);
	parse_one(&s, "MXPROF_BUFFER_MAX_KB", "8388608");
	assert_int_equal(s.ring_records_max, 268435456);

	parse_one(&s, "MXPROF_DRAIN_PERIOD_MS", "1");
	assert_int_equal(s.drain_period_ms, 1);
	parse_one(&s, "MXPROF_DRAIN_PERIOD_MS", "10000");
	assert_int_equal(s.drain_period_ms, 10000);
}

/* A bad value: one error, one stderr line naming the variable and the
 * value, and the documented fallback (checked by the caller). */
static void parse_bad(struct settings *s, const char *name, const char *value)
{
	char quoted[600];

	env_clear();
	env_set(name, value);
	int errors = parse_captured(s);
	snprintf(quoted, sizeof(quoted), "'%s'", value);
	if (errors != 1 || count_lines(captured) != 1 ||
	    !strstr(captured, name) || !strstr(captured, quoted) ||
	    strncmp(captured, "mxprof: ", 8) != 0) {
		fail_msg("%s='%s': %d errors, stderr: [%s]", name, value,
			 errors, captured);
	}
}

static void test_settings_bad_values_fall_back_with_one_line(void **st)
{
	struct settings s;
	char long_nvtx[300];

	(void)st;
	static const char *const bools[] = {"maybe", "2", "", "yes please"};
	for (int i = 0; i < 4; i++) {
		parse_bad(&s, "MXPROF_AUTOSTART", bools[i]);
		assert_int_equal(s.autostart, 0);
		parse_bad(&s, "MXPROF_CONTINUOUS_DUMP", bools[i]);
		assert_int_equal(s.continuous_dump, 0);
	}

	static const char *const outputs[] = {"trace-%x.json", "", "a%",
					      "%q%p"};
	for (int i = 0; i < 4; i++) {
		parse_bad(&s, "MXPROF_OUTPUT", outputs[i]);
		assert_string_equal(s.output, "profile.json");
	}

	static const char *const traces[] = {"api,foo", "",    "api,",
					     ",api",	"API", "api,,cuda"};
	for (int i = 0; i < 6; i++) {
		parse_bad(&s, "MXPROF_TRACE", traces[i]);
		assert_int_equal(s.trace, TRACE_ALL);
	}

	static const char *const signals[] = {"KILL", "SEGV", "9", "garbage",
					      ""};
	for (int i = 0; i < 5; i++) {
		parse_bad(&s, "MXPROF_SIGNAL", signals[i]);
		assert_int_equal(s.signal, 0); /* no dump signal */
	}

	static const char *const seconds[] = {"-1",   "abc", "nan", "inf",
					      "1e10", "5s",  ""};
	for (int i = 0; i < 7; i++) {
		parse_bad(&s, "MXPROF_DELAY", seconds[i]);
		assert_true(s.delay_s == 0.0);
		parse_bad(&s, "MXPROF_DURATION", seconds[i]);
		assert_true(s.duration_s == 0.0);
	}

	memset(long_nvtx, 'n', 256);
	long_nvtx[256] = 0;
	parse_bad(&s, "MXPROF_CAPTURE_NVTX", "");
	assert_string_equal(s.capture_nvtx, "");
	parse_bad(&s, "MXPROF_CAPTURE_NVTX", long_nvtx);
	assert_string_equal(s.capture_nvtx, "");

	static const char *const periods[] = {"0.001", "0", "x", "-1", "2e6"};
	for (int i = 0; i < 5; i++) {
		parse_bad(&s, "MXPROF_DUMP_PERIOD", periods[i]);
		assert_true(s.dump_period_s == 1.0);
	}

	static const char *const mbs[] = {"-1", "10MB", "1073741825", " 5",
					  "+5"};
	for (int i = 0; i < 5; i++) {
		parse_bad(&s, "MXPROF_MAX_TRACE_MB", mbs[i]);
		assert_int_equal(s.max_trace_mb, 0);
	}

	static const char *const stacks[] = {"129", "-1", "deep"};
	for (int i = 0; i < 3; i++) {
		parse_bad(&s, "MXPROF_STACKS", stacks[i]);
		assert_int_equal(s.stacks, 0);
	}

	static const char *const overflows[] = {"wait", "BLOCK", ""};
	for (int i = 0; i < 3; i++) {
		parse_bad(&s, "MXPROF_OVERFLOW", overflows[i]);
		assert_int_equal(s.overflow, COLL_OVERFLOW_DROP);
	}

	/* The fallback is 2048 KiB: 65536 records. */
	static const char *const kbs[] = {"63", "0", "1048577", "2M"};
	for (int i = 0; i < 4; i++) {
		parse_bad(&s, "MXPROF_BUFFER_KB", kbs[i]);
		assert_int_equal(s.ring_records, 65536);
		assert_int_equal(s.ring_records * sizeof(struct coll_rec),
				 2048 * 1024);
	}

	/* Below the first size, or not a size: 8 times the first. */
	static const char *const maxes[] = {"2047", "0", "8388609", "big"};
	for (int i = 0; i < 4; i++) {
		parse_bad(&s, "MXPROF_BUFFER_MAX_KB", maxes[i]);
		assert_int_equal(s.ring_records_max, 65536 * 8);
	}
	parse_bad(&s, "MXPROF_BUFFER_MAX_KB", "2047");
	assert_string_equal(captured,
			    "mxprof: MXPROF_BUFFER_MAX_KB='2047' is not valid "
			    "(accepted: 2048 to 8388608 (KiB per thread, at "
			    "least MXPROF_BUFFER_KB)); using 8 times "
			    "MXPROF_BUFFER_KB\n");

	parse_bad(&s, "MXPROF_STEPS", "1:2");
	assert_int_equal(s.steps.mode, COLL_STEPS_ALL);
	assert_string_equal(s.steps_text, "");
	assert_string_equal(captured,
			    "mxprof: MXPROF_STEPS='1:2' is not valid "
			    "(accepted: wait:warmup:active[:repeat] with "
			    "active >= 1, or list:N,N-M,...); recording "
			    "every step\n");
	parse_bad(&s, "MXPROF_STEP", "");
	assert_string_equal(s.step, "");

	static const char *const drains[] = {"0", "10001", "fast"};
	for (int i = 0; i < 3; i++) {
		parse_bad(&s, "MXPROF_DRAIN_PERIOD_MS", drains[i]);
		assert_int_equal(s.drain_period_ms, 10);
	}
}

static void test_settings_counts_each_bad_value_once(void **st)
{
	struct settings s;

	(void)st;
	env_clear();
	env_set("MXPROF_AUTOSTART", "1");
	env_set("MXPROF_TRACE", "bogus");
	env_set("MXPROF_STACKS", "8");
	env_set("MXPROF_SIGNAL", "KILL");
	env_set("MXPROF_DRAIN_PERIOD_MS", "0");
	env_set("MXPROF_OUTPUT", "out-%p.json");
	assert_int_equal(parse_captured(&s), 3);
	/* Three bad values, one line each. */
	assert_int_equal(count_lines(captured), 3);
	assert_non_null(strstr(captured, "MXPROF_TRACE='bogus'"));
	assert_non_null(strstr(captured, "MXPROF_SIGNAL='KILL'"));
	assert_non_null(strstr(captured, "MXPROF_DRAIN_PERIOD_MS='0'"));
	/* The good values around them hold. */
	assert_int_equal(s.autostart, 1);
	assert_int_equal(s.stacks, 8);
	assert_string_equal(s.output, "out-%p.json");
	assert_int_equal(s.trace, TRACE_ALL);
	assert_int_equal(s.signal, 0);
	assert_int_equal(s.drain_period_ms, 10);
}

/* ---- settings_expand_output ------------------------------------------- */

static void expand_ok(const char *pattern, int pid, int rank, int desc,
		      const char *want)
{
	char buf[512];
	int rc = settings_expand_output(pattern, pid, rank, desc, buf,
					sizeof(buf));

	if (rc != 0 || strcmp(buf, want) != 0) {
		fail_msg("expand '%s' (pid %d rank %d desc %d): rc %d, '%s', "
			 "want '%s'",
			 pattern, pid, rank, desc, rc, rc == 0 ? buf : "",
			 want);
	}
}

static void test_settings_expand_output_replaces_sequences(void **st)
{
	char host[256], want[600];

	(void)st;
	expand_ok("profile.json", 1234, -1, 0, "profile.json");
	expand_ok("trace-%p.json", 1234, -1, 0, "trace-1234.json");
	expand_ok("%p", 77, -1, 0, "77");
	expand_ok("r%r.json", 1234, 3, 0, "r3.json");
	expand_ok("r%r.json", 1234, -1, 0, "r0.json"); /* unknown rank */
	expand_ok("100%%.json", 1234, -1, 0, "100%.json");
	expand_ok("%%p.json", 1234, -1, 0, "%p.json");
	expand_ok("%p-%p", 5, -1, 0, "5-5");
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	host[sizeof(host) - 1] = 0;
	snprintf(want, sizeof(want), "/tmp/%s-r2.json.gz", host);
	expand_ok("/tmp/%h-r%r.json.gz", 1234, 2, 0, want);
}

static void test_settings_expand_output_descendant_gets_pid(void **st)
{
	(void)st;
	expand_ok("profile.json", 1234, -1, 1, "profile.1234.json");
	expand_ok("out.json.gz", 1234, -1, 1, "out.1234.json.gz");
	expand_ok("dir/run-r%r.json", 1234, 4, 1, "dir/run-r4.1234.json");
	expand_ok("trace", 1234, -1, 1, "trace.1234");
	expand_ok("trace.gz", 1234, -1, 1, "trace.1234.gz");
	/* A pattern with %p already differs per process. */
	expand_ok("trace-%p.json", 1234, -1, 1, "trace-1234.json");
	expand_ok("trace-%p.json.gz", 99, -1, 1, "trace-99.json.gz");
	/* %% then p is not %p. */
	expand_ok("a%%p.json", 1234, -1, 1, "a%p.1234.json");
}

static void test_settings_expand_output_rejects_bad_patterns(void **st)
{
	char buf[64];

	(void)st;
	assert_int_equal(
		settings_expand_output("a%x.json", 1, 0, 0, buf, sizeof(buf)),
		-EINVAL);
	assert_int_equal(
		settings_expand_output("a%", 1, 0, 0, buf, sizeof(buf)),
		-EINVAL);
	assert_int_equal(settings_expand_output("", 1, 0, 0, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(
		settings_expand_output("%P.json", 1, 0, 0, buf, sizeof(buf)),
		-EINVAL);
	/* Too long, with room for the terminator counted. */
	assert_int_equal(settings_expand_output("abcd.json", 1, 0, 0, buf, 9),
			 -ENAMETOOLONG);
	assert_int_equal(settings_expand_output("abcd.json", 1, 0, 0, buf, 10),
			 0);
	assert_string_equal(buf, "abcd.json");
	assert_int_equal(
		settings_expand_output("abcd.json", 1234, 0, 1, buf, 14),
		-ENAMETOOLONG);
	assert_int_equal(
		settings_expand_output("abcd.json", 1234, 0, 1, buf, 15), 0);
	assert_string_equal(buf, "abcd.1234.json");
}

/* A host name may hold '/' (the kernel takes any byte): %h stays one
 * name; and a name of 64 bytes, the most Linux allows, is kept whole. */
static void test_settings_expand_output_host_is_one_name(void **st)
{
	static const char longest[] = "h123456789012345678901234567890123456789"
				      "012345678901234567890123";

	(void)st;
	assert_int_equal(strlen(longest), 64);
	fake_host = "../a/b";
	expand_ok("runs/%h.json", 1, -1, 0, "runs/.._a_b.json");
	fake_host = "/";
	expand_ok("%h-%p", 7, -1, 0, "_-7");
	fake_host = longest;
	expand_ok("%h", 1, -1, 0, longest);
	fake_host = NULL;
}

/* A pid of 0 asks for any process's file: %p is the glob "*". */
static void test_settings_expand_output_pid_zero_is_a_glob(void **st)
{
	(void)st;
	expand_ok("trace-%p.json", 0, -1, 0, "trace-*.json");
	expand_ok("r%r-%p", 0, 5, 0, "r5-*");
	expand_ok("100%%p.json", 0, -1, 0, "100%p.json");
}

/* settings_output_name(): the name the library writes, profile.json for
 * a pattern settings_parse() refuses or none. */
static void test_settings_output_name_falls_back_to_profile_json(void **st)
{
	char buf[256];

	(void)st;
	settings_output_name("run-r%r-%p.json", 42, 3, 0, buf, sizeof(buf));
	assert_string_equal(buf, "run-r3-42.json");
	settings_output_name("a%x.json", 42, 3, 0, buf, sizeof(buf));
	assert_string_equal(buf, "profile.json");
	settings_output_name("", 42, 3, 1, buf, sizeof(buf));
	assert_string_equal(buf, "profile.42.json");
	settings_output_name(NULL, 0, -1, 0, buf, sizeof(buf));
	assert_string_equal(buf, "profile.json");
}

/* ---- settings_signal and settings_rank ----------------------------------- */

static void test_settings_signal_names_numbers_and_refusals(void **st)
{
	(void)st;
	assert_int_equal(settings_signal("USR1"), SIGUSR1);
	assert_int_equal(settings_signal("usr1"), SIGUSR1);
	assert_int_equal(settings_signal("SIGUSR2"), SIGUSR2);
	assert_int_equal(settings_signal("sigusr2"), SIGUSR2);
	assert_int_equal(settings_signal("10"), 10);
	assert_int_equal(settings_signal("HUP"), SIGHUP);
	assert_int_equal(settings_signal("SIGPROF"), SIGPROF);
	assert_int_equal(settings_signal("WINCH"), SIGWINCH);
	assert_int_equal(settings_signal("URG"), SIGURG);
	assert_int_equal(settings_signal("PWR"), SIGPWR);
	assert_int_equal(settings_signal("RTMIN+0"), SIGRTMIN);
	assert_int_equal(settings_signal("SIGRTMIN+3"), SIGRTMIN + 3);
	assert_int_equal(settings_signal("12"), SIGUSR2);
	assert_int_equal(settings_signal("1"), SIGHUP);
	assert_int_equal(settings_signal("34"), SIGRTMIN);
	assert_int_equal(settings_signal("none"), 0);
	assert_int_equal(settings_signal("NONE"), 0);

	static const char *const refused[] = {
		"KILL",	 "SIGKILL", "SEGV",   "SIGSEGV",  "STOP",    "9",
		"11",	 "19",	    "6",      "7",	  "8",	     "4",
		"0",	 "65",	    "-10",    "garbage",  "",	     "SIG",
		"USR1x", "10 ",	    "RTMIN+", "RTMIN+99", "SIGnone", "15",
		"2",	 "13",	    "17",     "3",	  "14",	     "TERM",
		"INT",	 "PIPE",    "CHLD"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (settings_signal(refused[i]) != -1) {
			fail_msg("settings_signal(\"%s\") = %d, want -1",
				 refused[i], settings_signal(refused[i]));
		}
	}
}

static void test_settings_rank_from_launcher_variables(void **st)
{
	(void)st;
	env_clear();
	assert_int_equal(settings_rank(fake_get), -1);

	env_clear();
	env_set("RANK", "3");
	env_set("SLURM_PROCID", "9");
	assert_int_equal(settings_rank(fake_get), 3);

	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
					   "SLURM_PROCID",
					   "MV2_COMM_WORLD_RANK"};
	for (int i = 0; i < 4; i++) {
		env_clear();
		env_set(vars[i], "5");
		assert_int_equal(settings_rank(fake_get), 5);
	}

	/* A bad value is skipped for the next variable. */
	env_clear();
	env_set("RANK", "x");
	env_set("PMI_RANK", "2");
	assert_int_equal(settings_rank(fake_get), 2);

	env_clear();
	env_set("RANK", "1073741824");
	assert_int_equal(settings_rank(fake_get), 1073741824);
	env_clear();
	env_set("RANK", "1073741825");
	assert_int_equal(settings_rank(fake_get), -1);
	env_clear();
	env_set("RANK", "-1");
	assert_int_equal(settings_rank(fake_get), -1);
	env_clear();
	env_set("RANK", "0");
	assert_int_equal(settings_rank(fake_get), 0);
}

/* distributedInfo's world_size and local_rank, from the same launchers. */
static void test_settings_world_size_and_local_rank(void **st)
{
	(void)st;
	env_clear();
	assert_int_equal(settings_dist(fake_get, SETTINGS_WORLD_SIZE), 0);
	assert_int_equal(settings_dist(fake_get, SETTINGS_LOCAL_RANK), -1);

	static const char *const sizes[] = {
		"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
		"SLURM_NTASKS", "MV2_COMM_WORLD_SIZE"};
	static const char *const locals[] = {
		"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
		"SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK"};
	for (int i = 0; i < 5; i++) {
		env_clear();
		env_set(sizes[i], "8");
		env_set(locals[i], "3");
		assert_int_equal(settings_dist(fake_get, SETTINGS_WORLD_SIZE),
				 8);
		assert_int_equal(settings_dist(fake_get, SETTINGS_LOCAL_RANK),
				 3);
		assert_int_equal(settings_rank(fake_get), -1);
	}

	/* torchrun's first; a world of 0 or a bad value passes to the
	 * next variable; local rank 0 is a rank. */
	env_clear();
	env_set("WORLD_SIZE", "0");
	env_set("SLURM_NTASKS", "4");
	env_set("LOCAL_RANK", "0");
	env_set("SLURM_LOCALID", "2");
	assert_int_equal(settings_dist(fake_get, SETTINGS_WORLD_SIZE), 4);
	assert_int_equal(settings_dist(fake_get, SETTINGS_LOCAL_RANK), 0);
	env_clear();
	env_set("WORLD_SIZE", "two");
	assert_int_equal(settings_dist(fake_get, SETTINGS_WORLD_SIZE), 0);
}

/* Flight mode's settings: MXPROF_FLIGHT's two forms, MXPROF_TRIGGER's
 * list, the memory bound and the most files; bad values one line each,
 * the feature off; MXPROF_TRIGGER alone says it needs flight mode. */
static void test_settings_flight_and_triggers(void **st)
{
	struct settings s;

	(void)st;
	parse_one(&s, "MXPROF_AUTOSTART", "1");
	assert_int_equal(s.flight_mode, COLL_FLIGHT_OFF);
	assert_int_equal(s.flight_mb, 32);
	assert_int_equal(s.flight_max_dumps, 10);
	assert_true(s.trigger_slow == 0.0);
	assert_int_equal(s.trigger_hang_s, 0);
	parse_one(&s, "MXPROF_FLIGHT", "120s");
	assert_int_equal(s.flight_mode, COLL_FLIGHT_SECONDS);
	assert_int_equal(s.flight_n, 120);
	parse_one(&s, "MXPROF_FLIGHT", "20steps");
	assert_int_equal(s.flight_mode, COLL_FLIGHT_STEPS);
	assert_int_equal(s.flight_n, 20);
	parse_one(&s, "MXPROF_FLIGHT_MB", "1");
	assert_int_equal(s.flight_mb, 1);
	parse_one(&s, "MXPROF_FLIGHT_MAX_DUMPS", "0");
	assert_int_equal(s.flight_max_dumps, 0);

	env_clear();
	env_set("MXPROF_FLIGHT", "10steps");
	env_set("MXPROF_TRIGGER", "hang:60s,slow:2.5x");
	assert_int_equal(parse_captured(&s), 0);
	assert_string_equal(captured, "");
	assert_true(s.trigger_slow == 2.5);
	assert_int_equal(s.trigger_hang_s, 60);

	static const char *const flights[] = {"10",   "0s",	 "5min",    "s",
					      "1.5s", "-1steps", "10 steps"};
	for (size_t i = 0; i < sizeof(flights) / sizeof(*flights); i++) {
		parse_bad(&s, "MXPROF_FLIGHT", flights[i]);
		assert_int_equal(s.flight_mode, COLL_FLIGHT_OFF);
	}
	static const char *const triggers[] = {
		"slow:3",    "slow:0.9x", "slow:x",	     "hang:0s",
		"hang:1.5s", "hang:5",	  "slow:3x,",	     ",slow:3x",
		"stall:5s",  "",	  "hang:5s,hang:6s", "slow:3x,slow:4x"};
	for (size_t i = 0; i < sizeof(triggers) / sizeof(*triggers); i++) {
		env_clear();
		env_set("MXPROF_FLIGHT", "10steps");
		env_set("MXPROF_TRIGGER", triggers[i]);
		assert_int_equal(parse_captured(&s), 1);
		assert_int_equal(count_lines(captured), 1);
		char want[256];
		snprintf(
			want, sizeof(want),
			"mxprof: MXPROF_TRIGGER='%s' is not valid (accepted: "
			"a list of slow:<F>x (F >= 1) and hang:<N>s (N >= 1)); "
			"no triggers\n",
			triggers[i]);
		assert_string_equal(captured, want);
		assert_true(s.trigger_slow == 0.0);
		assert_int_equal(s.trigger_hang_s, 0);
		assert_int_equal(s.flight_mode, COLL_FLIGHT_STEPS);
	}
	parse_bad(&s, "MXPROF_FLIGHT_MB", "0");
	assert_int_equal(s.flight_mb, 32);
	parse_bad(&s, "MXPROF_FLIGHT_MAX_DUMPS", "ten");
	assert_int_equal(s.flight_max_dumps, 10);

	env_clear();
	env_set("MXPROF_TRIGGER", "slow:3x");
	assert_int_equal(parse_captured(&s), 0);
	assert_string_equal(captured,
			    "mxprof: MXPROF_TRIGGER='slow:3x' needs "
			    "MXPROF_FLIGHT (flight mode); no triggers\n");
	assert_true(s.trigger_slow == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_defaults_without_variables),
		cmocka_unit_test(test_settings_accepts_each_valid_value),
		cmocka_unit_test(
			test_settings_bad_values_fall_back_with_one_line),
		cmocka_unit_test(test_settings_counts_each_bad_value_once),
		cmocka_unit_test(
			test_settings_expand_output_replaces_sequences),
		cmocka_unit_test(
			test_settings_expand_output_descendant_gets_pid),
		cmocka_unit_test(
			test_settings_expand_output_rejects_bad_patterns),
		cmocka_unit_test(test_settings_expand_output_host_is_one_name),
		cmocka_unit_test(
			test_settings_expand_output_pid_zero_is_a_glob),
		cmocka_unit_test(
			test_settings_output_name_falls_back_to_profile_json),
		cmocka_unit_test(
			test_settings_signal_names_numbers_and_refusals),
		cmocka_unit_test(test_settings_rank_from_launcher_variables),
		cmocka_unit_test(test_settings_world_size_and_local_rank),
		cmocka_unit_test(test_settings_flight_and_triggers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
