/*
 * mxprof.c - the mxprof command: run, report, dump, merge, diff, recover.
 *
 * The subcommands live under tools/cli/, one translation unit each;
 * cli/cli.h is their map.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mxprof.h"
#include "cli/cli.h"

static const char main_usage[] =
	"usage: mxprof [--version] [--help] COMMAND [ARGS]\n";

static const char main_help[] =
	"\n"
	"mxprof profiles unmodified programs: C API calls of any library, "
	"CUDA,\n"
	"NVTX ranges and GPU work, with MXNet's profiler API and tables.\n"
	"\n"
	"commands:\n"
	"  run [options] -- CMD [ARGS]   profile CMD from start to end\n"
	"  report [options] FILE...      print the tables (or --flame: the\n"
	"                                folded call stacks) of a trace\n"
	"  dump PID                      make a running process dump now\n"
	"  merge -o OUT FILE...          one timeline from several traces\n"
	"  diff A B                      what changed between two traces\n"
	"  recover [-o TRACE] JOURNAL    the trace of a process that crashed\n"
	"\n"
	"'mxprof COMMAND --help' describes a command.\n";

struct main_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct main_cmd main_cmds[] = {
	{"run", cmd_run},     {"report", cmd_report}, {"dump", cmd_dump},
	{"merge", cmd_merge}, {"diff", cmd_diff},     {"recover", cmd_recover},
};

/* Runs the command named in argv[1]. Returns its exit status, or
 * CLI_USAGE when there is none; --help and --version print to stdout. */
int main(int argc, char **argv)
{
	size_t i;

	out_pipe_allow(1); /* big outputs are written by other threads */
	/* The GPU source's device memory counters are bytes. */
	table_bytes_group(strtab_intern("Device Storage"));
	if (argc < 2) {
		fputs(main_usage, stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char help[] = "--help";
			char *av[] = {argv[2], help, NULL};

			for (i = 0; i < sizeof(main_cmds) / sizeof(*main_cmds);
			     i++) {
				if (strcmp(argv[2], main_cmds[i].name) == 0) {
					return main_cmds[i].fn(2, av);
				}
			}
		}
		errno = 0;
		printf("%s%s", main_usage, main_help);
		return util_stdout_done("the help");
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		errno = 0;
		printf("mxprof %s\n", MXPROF_VERSION);
		return util_stdout_done("the version");
	}
	for (i = 0; i < sizeof(main_cmds) / sizeof(*main_cmds); i++) {
		if (strcmp(argv[1], main_cmds[i].name) == 0) {
			/* getopt names argv[0] in its messages. */
			char name[32];

			snprintf(name, sizeof(name), "mxprof %s",
				 main_cmds[i].name);
			argv[1] = name;
			return main_cmds[i].fn(argc - 1, argv + 1);
		}
	}
	util_err("'%s' is not a command", argv[1]);
	fputs(main_usage, stderr);
	return CLI_USAGE;
}
