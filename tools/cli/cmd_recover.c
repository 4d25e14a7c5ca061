/*
 * cmd_recover.c - mxprof recover: the trace and the tables of a process
 * that died before it could write them, rebuilt from its journal.
 *
 * The work is the collector's (collector/recover.c): the journal is checked
 * and aggregated, then written by the same trace writer and table formatter
 * a dump uses. This file chooses the paths, refuses to replace files that
 * exist unless asked, and reports in one line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char rc_usage[] =
	"usage: mxprof recover [-f] [-o TRACE] JOURNAL\n";

static const char rc_help[] =
	"\n"
	"Rebuild the trace and the tables of a process that died before\n"
	"it could write them (SIGSEGV, abort, SIGKILL, an OOM kill,\n"
	"_exit). While a program records, libmxprof.so keeps every\n"
	"drained record in TRACE.journal beside the trace; this turns\n"
	"that journal into TRACE and its tables (X.json gives\n"
	"X.stats.txt), as the final dump would have, and leaves the\n"
	"journal in place. A torn last entry (the process died while\n"
	"writing it) is skipped and said so. The journal holds no GPU\n"
	"activity, rank or host; dropped records are counted as of the\n"
	"last dump, 0 if there was none.\n"
	"\n"
	"options:\n"
	"  -o, --output TRACE   the trace to write; .gz compresses\n"
	"                       (default: JOURNAL without .journal)\n"
	"  -f, --force          replace TRACE and its tables if they exist\n"
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0 recovered, 1 the journal is missing, empty,\n"
	"truncated, corrupt or not a journal, or TRACE or its tables\n"
	"exist (without -f) or cannot be written, 2 bad usage.\n";

/* Returns 1 when a and b name the same existing file. */
static int rc_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Returns 1 when path exists (a dangling link counts). */
static int rc_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The categories a version 1 journal numbered 2 and up: those of the
 * library that wrote it, which did not name them in the journal. */
static const char *const rc_legacy_cats[] = {"cuda_runtime", "cuda_driver",
					     "cuda_sync", NULL};

/* mxprof recover JOURNAL: the trace and the tables of a process that died,
 * through the collector's recover_*. Returns the exit status (cli.h). */
int cmd_recover(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct recovery *r = NULL;
	char trace[4096], stats[4200];
	const char *journal, *out = NULL;
	int force = 0, c, n, rc, ret = CLI_FAIL;

	util_set_cmd("recover");
	while ((c = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			errno = 0;
			printf("%s%s", rc_usage, rc_help);
			return util_stdout_done("the help");
		default:
			goto usage;
		}
	}
	if (optind != argc - 1) {
		util_err(optind >= argc ? "no journal given"
					: "one journal at a time");
		goto usage;
	}
	journal = argv[optind];
	n = out ? 0 : paths_journal_trace(journal, trace, sizeof(trace));
	if (n == -EINVAL) {
		util_err("%s does not end in .journal; name the trace with -o "
			 "TRACE",
			 journal);
		goto usage;
	}
	if (out && !*out) {
		util_err("-o needs a file name");
		goto usage;
	}
	if (out && (size_t)snprintf(trace, sizeof(trace), "%s", out) >=
			   sizeof(trace)) {
		n = -ENAMETOOLONG;
	}
	if (n < 0 || paths_stats(trace, stats, sizeof(stats)) < 0) {
		util_err("%s: name too long", out ? out : journal);
		return CLI_FAIL;
	}

	r = malloc(sizeof(*r));
	if (!r) {
		util_err("out of memory");
		return CLI_FAIL;
	}
	rc = recover_open(r, journal);
	r->legacy_cats = rc_legacy_cats;
	if (rc < 0) {
		util_err("%s: %s", journal, r->why[0] ? r->why : strerror(-rc));
		goto out;
	}
	if (rc_same_file(trace, journal) || rc_same_file(stats, journal)) {
		util_err("%s: the output would replace the journal itself",
			 journal);
		goto out;
	}
	if (!force && (rc_exists(trace) || rc_exists(stats))) {
		util_err("%s exists; -f replaces it, -o writes elsewhere",
			 rc_exists(trace) ? trace : stats);
		goto out;
	}
	rc = recover_write_trace(r, trace);
	if (rc < 0) {
		util_err("cannot write %s: %s", trace, strerror(-rc));
		goto out;
	}
	rc = recover_write_tables(r, stats);
	if (rc < 0) {
		util_err("cannot write %s: %s", stats, strerror(-rc));
		goto out;
	}
	if (r->capped == RECOVER_CUT_SHARE) {
		util_err("%s: the timeline was cut at its share of the disk; "
			 "the tables cover the records it kept",
			 journal);
	} else if (r->capped) {
		util_err("%s: the timeline was capped (MXPROF_MAX_TRACE_MB); "
			 "the tables cover the records it kept",
			 journal);
	}
	printf("%s: %llu records from %llu thread%s of pid %d; tables in %s",
	       trace, (unsigned long long)r->records,
	       (unsigned long long)r->threads, r->threads == 1 ? "" : "s",
	       r->pid, stats);
	if (r->torn_bytes) {
		printf("; skipped a torn last entry (%llu bytes)",
		       (unsigned long long)r->torn_bytes);
	}
	printf("\n");
	ret = util_stdout_done("the summary");
out:
	recover_close(r);
	free(r);
	return ret;
usage:
	fputs(rc_usage, stderr);
	return CLI_USAGE;
}
