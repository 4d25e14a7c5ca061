/*
 * cmd_run.c - mxprof run: profile a program from its start to its end.
 *
 * The options become MXPROF_* variables in the child's environment (the
 * library reads nothing else), libmxprof.so is appended to LD_PRELOAD, and
 * the program is executed in a child process. mxprof waits for it, passing
 * on SIGINT, SIGTERM, SIGHUP and the dump signal (a signal it was started
 * with ignored, as under nohup, stays ignored here and in the program),
 * and exits as a shell would:
 * with the program's status, or 128 + the signal that ended it. Before
 * that it waits, bounded, for the rest of the tree the program started
 * (run_wait.c), merges the tree's files into one result (run_tree.c) and
 * prints
 * the top rows of the tables and the paths of the files written
 * (run_summary.c).
 *
 * The library is found, in order, at $MXPROF_LIB, beside the mxprof binary
 * (the build folder), and at ../lib/libmxprof.so from it (an installed
 * tree).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "settings.h"

/* The program's pid; 0 once it has ended and mxprof run waits for the
 * rest of its tree (run_wait.c), which takes the signals from run_sig. */
static volatile pid_t run_child = -1;
static volatile sig_atomic_t run_sig, run_sig_kernel;

/* Forwards a signal to the program. A terminal's SIGINT or SIGQUIT went to
 * the whole foreground group, the program included: not sent twice. */
static void run_forward(int sig, siginfo_t *si, void *uc)
{
	pid_t c = run_child;
	int kernel = (sig == SIGINT || sig == SIGQUIT) && si &&
		     si->si_code == SI_KERNEL;

	(void)uc;
	if (c == 0) {
		run_sig_kernel = kernel;
		run_sig = sig;
		return;
	}
	if (c < 0 || kernel) {
		return;
	}
	kill(c, sig);
}

/* Passes sig on to the program (sa), unless mxprof run was started with
 * sig ignored: then it stays ignored here and in the program, as without
 * mxprof. The signals passed on are added to *forwarded. */
static void run_take(int sig, const struct sigaction *sa, sigset_t *forwarded)
{
	struct sigaction cur;

	if (sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == SIG_IGN) {
		return;
	}
	if (sigaction(sig, sa, NULL) == 0) {
		sigaddset(forwarded, sig);
	}
}

static int run_is_number(const char *s, int allow_frac)
{
	char *end;
	double d;

	if (!*s) {
		return 0;
	}
	errno = 0;
	d = strtod(s, &end);
	if (*end || errno || d < 0 || d != d) {
		return 0;
	}
	return allow_frac || d == (double)(long long)d;
}

/* Checks a --trace list: comma-separated known sources. */
static int run_trace_ok(const char *s)
{
	static const char *const known[] = {"api",    "cuda", "gpu", "nvtx",
					    "memory", "all",  "none"};
	char buf[256], *tok, *save = NULL;
	size_t i;

	if (strlen(s) >= sizeof(buf) || !*s) {
		return 0;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (strcmp(tok, known[i]) == 0) {
				break;
			}
		}
		if (i == sizeof(known) / sizeof(known[0])) {
			return 0;
		}
	}
	return 1;
}

/* Finds libmxprof.so. Returns 0 with its absolute path in buf, or -ENOENT
 * (printed). */
static int run_find_lib(char *buf, size_t len)
{
	const char *env = getenv("MXPROF_LIB");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (access(env, R_OK) == 0 && realpath(env, buf)) {
			return 0;
		}
		util_err("MXPROF_LIB=%s: %s", env, strerror(errno));
		return -ENOENT;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char cand[PATH_MAX + 32], *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
		}
		snprintf(cand, sizeof(cand), "%s/libmxprof.so", self);
		if (access(cand, R_OK) == 0 && realpath(cand, buf)) {
			return 0;
		}
		snprintf(cand, sizeof(cand), "%s/../lib/libmxprof.so", self);
		if (access(cand, R_OK) == 0 && realpath(cand, buf)) {
			return 0;
		}
	}
	(void)len;
	util_err("cannot find libmxprof.so (looked beside this program and "
		 "in ../lib); set MXPROF_LIB to its path");
	return -ENOENT;
}

/* Sets LD_PRELOAD to its old value followed by lib (once). */
static int run_set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int r;

	if (!old || !*old) {
		return setenv("LD_PRELOAD", lib, 1);
	}
	if (strstr(old, lib)) {
		return 0;
	}
	if (asprintf(&v, "%s %s", old, lib) < 0) {
		return -1;
	}
	r = setenv("LD_PRELOAD", v, 1);
	free(v);
	return r;
}

/* mxprof run --html: writes the page of the trace of process pid (the
 * root's, into which the tree was merged) at out, and says so in one
 * line; or one line saying why not. The program's exit status does not
 * change. */
static void run_page(const char *pat, pid_t pid, const char *out)
{
	struct table_opts o = {0};
	struct trace_meta *meta = malloc(sizeof(*meta));
	struct agg *a = agg_create();
	char trace[PATH_MAX], *tables = NULL, *paths[1] = {trace};

	run_summary_expand(pat && *pat ? pat : "profile.json", pid, trace,
			   sizeof(trace));
	if (!meta || !a || table_parse_opts(&o, "json", NULL) < 0) {
		util_err("out of memory for the page");
		goto out;
	}
	if (access(trace, R_OK) < 0) {
		util_err("no page: %s was not written", trace);
		goto out;
	}
	if (cmd_report_aggregate_meta(trace, a, &o.dropped, meta) ==
	    TRACE_BAD) {
		goto out;
	}
	tables = table_format(a, &o);
	if (!tables) {
		util_err("out of memory for the page");
		goto out;
	}
	if (report_html(paths, 1, tables, meta, out) == CLI_OK) {
		fprintf(stderr, "mxprof: page: %s\n", out);
	}
out:
	free(tables);
	agg_destroy(a);
	free(meta);
}

static const char run_usage[] =
	"usage: mxprof run [options] [--] COMMAND [ARG...]\n";

static const char run_help[] =
	"\n"
	"Run COMMAND with libmxprof.so injected (LD_PRELOAD) and recording\n"
	"from its start. When it ends, print the top rows of each table and\n"
	"the files written, on stderr. Every process COMMAND starts (fork,\n"
	"exec, workers) is merged into the one trace at -o, with the tables\n"
	"of the whole tree; the journal of a process killed before it could\n"
	"write its trace is recovered. Each option sets the MXPROF_* variable\n"
	"named beside it; see docs/settings.md for their values.\n"
	"\n"
	"options:\n"
	"  -o, --output PATH        trace file (MXPROF_OUTPUT; %p pid, %r "
	"rank,\n"
	"                           %h host; .gz compresses) [profile.json]\n"
	"  -t, --trace LIST         sources: api,cuda,gpu,nvtx,memory,all\n"
	"                           (MXPROF_TRACE)\n"
	"      --hook SPEC          C API to time, LIBGLOB:SYMGLOB,... or "
	"@preset\n"
	"                           (MXPROF_HOOK) [@auto]\n"
	"      --delay SEC          start recording SEC seconds in "
	"(MXPROF_DELAY)\n"
	"      --duration SEC       record for SEC seconds (MXPROF_DURATION)\n"
	"      --capture-nvtx NAME  record inside the NVTX range NAME only\n"
	"                           (MXPROF_CAPTURE_NVTX)\n"
	"      --stacks DEPTH       call stacks at hooked calls "
	"(MXPROF_STACKS)\n"
	"      --signal SIG         dump signal, or none (MXPROF_SIGNAL) "
	"[USR1]\n"
	"      --overflow MODE      drop or block when a buffer is full\n"
	"                           (MXPROF_OVERFLOW) [drop]\n"
	"      --max-trace-mb N     cap on the timeline (MXPROF_MAX_TRACE_MB)\n"
	"      --continuous-dump    dump periodically "
	"(MXPROF_CONTINUOUS_DUMP)\n"
	"      --dump-period SEC    period of those dumps "
	"(MXPROF_DUMP_PERIOD)\n"
	"      --flight SPEC        flight mode: keep only the newest window,\n"
	"                           Ns or Nsteps, in memory and write it when\n"
	"                           a trigger fires or the program ends\n"
	"                           (MXPROF_FLIGHT)\n"
	"      --trigger LIST       flight mode's triggers: slow:Fx, hang:Ns\n"
	"                           (MXPROF_TRIGGER)\n"
	"      --flight-mb N        the memory the window may take\n"
	"                           (MXPROF_FLIGHT_MB) [256]\n"
	"      --flight-max-dumps N most files the triggers write\n"
	"                           (MXPROF_FLIGHT_MAX_DUMPS) [10]\n"
	"      --no-autostart       do not record until the program calls\n"
	"                           set_state(\"run\") (MXPROF_AUTOSTART=0)\n"
	"      --wait SEC           once COMMAND has ended, wait at most SEC\n"
	"                           seconds for the processes it started that\n"
	"                           still run (workers, daemons) [30]\n"
	"  -n, --top N              rows per table in the summary [10]\n"
	"  -q, --quiet              no summary\n"
	"      --html OUT.html      also write the run's page (mxprof report\n"
	"                           --html) from its trace\n"
	"  -h, --help               this text\n"
	"\n"
	"libmxprof.so is taken from $MXPROF_LIB, else from beside this "
	"program,\n"
	"else from ../lib beside it. SIGINT, SIGTERM, SIGHUP and the dump\n"
	"signal sent to mxprof are passed on to COMMAND; one that mxprof was\n"
	"started with ignored (nohup, a background job) stays ignored.\n"
	"\n"
	"exit status: COMMAND's own, or 128 + the signal that ended it; 127 "
	"if\n"
	"COMMAND cannot be found, 126 if it cannot be run, 1 if libmxprof.so "
	"is\n"
	"missing or the output cannot be written, 2 bad usage.\n";

enum {
	RUN_HOOK = 256,
	RUN_DELAY,
	RUN_DURATION,
	RUN_NVTX,
	RUN_STACKS,
	RUN_SIGNAL,
	RUN_OVERFLOW,
	RUN_MAXMB,
	RUN_CONT,
	RUN_PERIOD,
	RUN_NOAUTO,
	RUN_WAIT,
	RUN_HTML,
	RUN_FLIGHT,
	RUN_TRIGGER,
	RUN_FLIGHT_MB,
	RUN_FLIGHT_MAX,
};

/* The settings collected from the options, applied in the child. */
struct run_env {
	const char *name;
	const char *value;
};

/* mxprof run CMD: runs CMD with the library preloaded and prints its
 * tables. Returns CMD's status as a shell gives it, or 126, 127, 1, 2
 * (cli.h). */
int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"trace", required_argument, NULL, 't'},
		{"hook", required_argument, NULL, RUN_HOOK},
		{"delay", required_argument, NULL, RUN_DELAY},
		{"duration", required_argument, NULL, RUN_DURATION},
		{"capture-nvtx", required_argument, NULL, RUN_NVTX},
		{"stacks", required_argument, NULL, RUN_STACKS},
		{"signal", required_argument, NULL, RUN_SIGNAL},
		{"overflow", required_argument, NULL, RUN_OVERFLOW},
		{"max-trace-mb", required_argument, NULL, RUN_MAXMB},
		{"continuous-dump", no_argument, NULL, RUN_CONT},
		{"dump-period", required_argument, NULL, RUN_PERIOD},
		{"no-autostart", no_argument, NULL, RUN_NOAUTO},
		{"wait", required_argument, NULL, RUN_WAIT},
		{"html", required_argument, NULL, RUN_HTML},
		{"flight", required_argument, NULL, RUN_FLIGHT},
		{"trigger", required_argument, NULL, RUN_TRIGGER},
		{"flight-mb", required_argument, NULL, RUN_FLIGHT_MB},
		{"flight-max-dumps", required_argument, NULL, RUN_FLIGHT_MAX},
		{"top", required_argument, NULL, 'n'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct run_env env[22]; /* the options, autostart, notes, drop */
	size_t nenv = 0, i;
	char lib[PATH_MAX];
	int c, dump_sig = SIGUSR1, quiet = 0, autostart = 1, status, err = 0;
	int fds[2];
	unsigned long long top = 10, tmp;
	double wait_s = 30;
	char notes[PATH_MAX], moved[PATH_MAX], drop[PATH_MAX] = "";
	struct run_wait w = {0};
	static const int fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;
	sigset_t block, old, forwarded;
	pid_t pid;
	ssize_t rn;
	const char *pat = getenv("MXPROF_OUTPUT"), *html = NULL;
	struct run_tree *tree;

#define RUN_SET(n, v)                                                          \
	do {                                                                   \
		env[nenv].name = (n);                                          \
		env[nenv].value = (v);                                         \
		nenv++;                                                        \
	} while (0)

	util_set_cmd("run");
	while ((c = getopt_long(argc, argv, "+o:t:n:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			RUN_SET("MXPROF_OUTPUT", optarg);
			break;
		case 't':
			if (!run_trace_ok(optarg)) {
				util_err("--trace: '%s' is not a list of api, "
					 "cuda, gpu, nvtx, memory, all",
					 optarg);
				goto usage;
			}
			RUN_SET("MXPROF_TRACE", optarg);
			break;
		case RUN_HOOK:
			RUN_SET("MXPROF_HOOK", optarg);
			break;
		case RUN_DELAY:
		case RUN_DURATION:
		case RUN_PERIOD:
			if (!run_is_number(optarg, 1)) {
				util_err(
					"--%s: '%s' is not a number of seconds",
					c == RUN_DELAY	    ? "delay"
					: c == RUN_DURATION ? "duration"
							    : "dump-period",
					optarg);
				goto usage;
			}
			RUN_SET(c == RUN_DELAY	    ? "MXPROF_DELAY"
				: c == RUN_DURATION ? "MXPROF_DURATION"
						    : "MXPROF_DUMP_PERIOD",
				optarg);
			break;
		case RUN_NVTX:
			RUN_SET("MXPROF_CAPTURE_NVTX", optarg);
			break;
		case RUN_STACKS:
			if (util_parse_uint(optarg, 0, 256, &tmp) < 0) {
				util_err("--stacks: '%s' is not a depth from 0 "
					 "to 256",
					 optarg);
				goto usage;
			}
			RUN_SET("MXPROF_STACKS", optarg);
			break;
		case RUN_SIGNAL:
			dump_sig = settings_signal(optarg);
			if (dump_sig < 0) {
				util_err("--signal: '%s' is not USR1, USR2, "
					 "HUP, "
					 "PROF, WINCH, URG, PWR, RTMIN+N, a "
					 "number "
					 "or none",
					 optarg);
				goto usage;
			}
			RUN_SET("MXPROF_SIGNAL", optarg);
			break;
		case RUN_OVERFLOW:
			if (strcmp(optarg, "drop") && strcmp(optarg, "block")) {
				util_err(
					"--overflow: '%s' is not drop or block",
					optarg);
				goto usage;
			}
			RUN_SET("MXPROF_OVERFLOW", optarg);
			break;
		case RUN_MAXMB:
			if (util_parse_uint(optarg, 0, 1ull << 40, &tmp) < 0) {
				util_err("--max-trace-mb: '%s' is not a number "
					 "of MiB",
					 optarg);
				goto usage;
			}
			RUN_SET("MXPROF_MAX_TRACE_MB", optarg);
			break;
		case RUN_CONT:
			RUN_SET("MXPROF_CONTINUOUS_DUMP", "1");
			break;
		case RUN_FLIGHT_MB:
		case RUN_FLIGHT_MAX:
			if (util_parse_uint(optarg, c == RUN_FLIGHT_MB,
					    c == RUN_FLIGHT_MB ? 1u << 24
							       : 1000000,
					    &tmp) < 0) {
				util_err(
					"--%s: '%s' is not a number from %d to "
					"%d",
					c == RUN_FLIGHT_MB ? "flight-mb"
							   : "flight-max-dumps",
					optarg, c == RUN_FLIGHT_MB,
					c == RUN_FLIGHT_MB ? 1 << 24 : 1000000);
				goto usage;
			}
			RUN_SET(c == RUN_FLIGHT_MB ? "MXPROF_FLIGHT_MB"
						   : "MXPROF_FLIGHT_MAX_DUMPS",
				optarg);
			break;
		case RUN_FLIGHT: {
			int mode;
			uint64_t n;
			if (settings_flight(optarg, &mode, &n) < 0) {
				util_err("--flight: '%s' is "
					 "not " SETTINGS_FLIGHT_FORMS,
					 optarg);
				goto usage;
			}
			RUN_SET("MXPROF_FLIGHT", optarg);
			break;
		}
		case RUN_TRIGGER: {
			double slow;
			uint64_t hang;
			if (settings_trigger(optarg, &slow, &hang) < 0) {
				util_err("--trigger: '%s' is "
					 "not " SETTINGS_TRIGGER_FORMS,
					 optarg);
				goto usage;
			}
			RUN_SET("MXPROF_TRIGGER", optarg);
			break;
		}
		case RUN_NOAUTO:
			autostart = 0;
			break;
		case RUN_WAIT:
			if (!run_is_number(optarg, 1)) {
				util_err("--wait: '%s' is not a number of "
					 "seconds",
					 optarg);
				goto usage;
			}
			wait_s = strtod(optarg, NULL);
			break;
		case 'n':
			if (util_parse_uint(optarg, 0, 1000000, &top) < 0) {
				util_err("--top: '%s' is not a count", optarg);
				goto usage;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case RUN_HTML:
			html = optarg;
			break;
		case 'h':
			errno = 0;
			printf("%s%s", run_usage, run_help);
			return util_stdout_done("the help");
		default:
			goto usage;
		}
		if (nenv >= sizeof(env) / sizeof(env[0]) - 2) {
			util_err("too many options");
			goto usage;
		}
	}
	RUN_SET("MXPROF_AUTOSTART", autostart ? "1" : "0");
#undef RUN_SET
	if (optind >= argc) {
		util_err("no command given");
		goto usage;
	}
	if (run_find_lib(lib, sizeof(lib)) < 0) {
		return CLI_FAIL;
	}
	for (i = 0; i < nenv; i++) {
		if (strcmp(env[i].name, "MXPROF_OUTPUT") == 0) {
			pat = env[i].value;
		}
	}
	if (run_output_check(pat) < 0) {
		return CLI_FAIL;
	}
	tree = run_tree_before(pat);
	run_summary_before(pat);
	/* Where the program notes the files set_config(filename=...) names
	 * (run_summary.c). */
	if (run_summary_notes_open(notes, sizeof(notes)) == 0) {
		env[nenv].name = "MXPROF_RUN_NOTES";
		env[nenv].value = notes;
		nenv++;
		/* As root, where a process that runs as another user writes
		 * (run_drop.c). */
		if (run_drop_open(notes, drop, sizeof(drop)) == 0) {
			env[nenv].name = "MXPROF_RUN_DROP";
			env[nenv].value = drop;
			nenv++;
		}
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		util_err("pipe: %s", strerror(errno));
		run_tree_free(tree);
		run_drop_close(drop);
		run_summary_notes_close(notes);
		return CLI_FAIL;
	}
	/* Signals stay blocked until the child's pid is known, so that none
	 * is lost or sent to pid -1. */
	sigemptyset(&forwarded);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	if (dump_sig > 0) {
		sigaddset(&block, dump_sig);
	}
	sigprocmask(SIG_BLOCK, &block, &old);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = run_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++) {
		run_take(fwd[i], &sa, &forwarded);
	}
	if (dump_sig > 0) {
		run_take(dump_sig, &sa, &forwarded);
	}
	/* The orphans of the tree become this process's children, to be
	 * waited for (run_wait.c). */
	run_wait_adopt();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		util_err("fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		run_tree_free(tree);
		run_drop_close(drop);
		run_summary_notes_close(notes);
		return CLI_FAIL;
	}
	if (pid == 0) {
		struct sigaction dfl;
		int sig;

		/* The program gets the dispositions mxprof run was given: a
		 * signal ignored there (nohup, a background job) stays
		 * ignored. */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (sig = 1; sig < NSIG; sig++) {
			if (sigismember(&forwarded, sig) == 1) {
				sigaction(sig, &dfl, NULL);
			}
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fds[0]);
		for (i = 0; i < nenv; i++) {
			setenv(env[i].name, env[i].value, 1);
		}
		if (run_set_preload(lib) < 0) {
			err = errno;
			goto child_fail;
		}
		execvp(argv[optind], argv + optind);
		err = errno;
	child_fail:
		rn = write(fds[1], &err, sizeof(err));
		(void)rn;
		_exit(err == ENOENT ? 127 : 126);
	}
	run_child = pid;
	close(fds[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	do {
		rn = read(fds[0], &err, sizeof(err));
	} while (rn < 0 && errno == EINTR);
	close(fds[0]);
	c = run_wait_main(&w, pid, &status);
	if (c < 0) {
		util_err("waitpid: %s", strerror(-c));
		run_tree_free(tree);
		run_wait_free(&w);
		run_drop_close(drop);
		run_summary_notes_close(notes);
		return CLI_FAIL;
	}
	if (rn == (ssize_t)sizeof(err)) {
		run_child = -1;
		util_err("%s: %s", argv[optind], strerror(err));
		run_tree_free(tree);
		run_wait_free(&w);
		run_drop_close(drop);
		run_summary_notes_close(notes);
		return err == ENOENT ? 127 : 126;
	}
	run_child = 0;
	run_wait_rest(&w, argv[optind], wait_s, &run_sig, &run_sig_kernel);
	run_child = -1;
	/* The program's process named other files: the summary and the
	 * tree follow it there. */
	if (run_summary_notes_trace(notes, pid, moved, sizeof(moved))) {
		run_tree_moved(tree, moved);
		pat = moved;
	}
	if (tree && drop[0]) {
		char trace[PATH_MAX];
		run_summary_expand(pat, 0, trace, sizeof(trace));
		run_drop_gather(drop, trace);
	}
	run_drop_close(drop);
	run_summary_notes_close(notes);
	run_tree_after(tree, &w);
	run_wait_free(&w);
	run_summary_print(pat, pid, (unsigned)top, quiet);
	if (html) {
		run_page(pat, pid, html);
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "mxprof: %s was killed by signal %d (%s)\n",
			argv[optind], WTERMSIG(status),
			strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
usage:
	fputs(run_usage, stderr);
	return CLI_USAGE;
}
