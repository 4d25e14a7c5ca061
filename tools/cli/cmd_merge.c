/*
 * cmd_merge.c - mxprof merge: one timeline from the traces of several
 * processes, ranks or hosts.
 *
 * Two streaming passes over every input, so that memory stays flat:
 *
 *  1. trace_read_file() collects each file's pids, threads, base time, rank
 *     and host (merge_index.c). Pids that an earlier file already uses are
 *     given fresh numbers, and every file gets its shift: the difference
 *     between its baseTimeNanoseconds (the UTC time of its ts = 0) and the
 *     earliest one.
 *  2. Each file is parsed again and its traceEvents are copied to the
 *     output, rewritten on the way (merge_copy.c), followed by the names a
 *     truncated file lacks.
 *
 * Files with call stacks are read once more, before step 2, for their
 * stackFrames (merge_frames.c): the merged trace has one stackFrames,
 * after its traceEvents as in the library's traces, with each file's frame
 * ids (and its events' "sf") moved past those of the files before it.
 *
 * The output is a struct out (collector/out.c): written to OUT.tmp.PID and
 * renamed to OUT when complete, gzip-compressed when OUT ends in .gz.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "mxprof.h"

static const char mg_usage[] = "usage: mxprof merge -o OUT FILE...\n";

static const char mg_help[] =
	"\n"
	"Combine the traces of several processes, ranks or hosts into one\n"
	"timeline that chrome://tracing and HTA load. Clocks are aligned\n"
	"through each file's baseTimeNanoseconds (the UTC time of ts = 0), so\n"
	"times in the output are relative to the earliest file. Processes "
	"keep\n"
	"their pids unless two files use the same one; then the later file's\n"
	"pid is renumbered. Each process name gains its rank and host. A\n"
	"truncated input contributes the events before its end, with a\n"
	"warning. OUT ending in .gz is compressed. Each input is read twice,\n"
	"so it must be a regular file, not a pipe.\n"
	"\n"
	"options:\n"
	"  -o, --output OUT   the merged trace (required)\n"
	"  -h, --help         this text\n"
	"\n"
	"environment: MXPROF_READ_THREADS=N threads read a large plain file\n"
	"(default: one per processor online; 1: none); the output is the\n"
	"same with any N.\n"
	"\n"
	"exit status: 0 written, 1 an input could not be read or OUT could "
	"not\n"
	"be written, 2 bad usage.\n";

/* Writes the end of the merged trace: the mxprof object with the totals
 * and, per input, its file, rank, host, shift, truncation and pid map. */
static void mg_top_level(struct out *o, const struct merge_file *files,
			 size_t nf, uint64_t events)
{
	uint64_t dropped = 0;
	int capped = 0;
	size_t i, j;

	out_str(o, "\"mxprof\":{\"version\":\"" MXPROF_VERSION "\"");
	for (i = 0; i < nf; i++) {
		dropped += files[i].meta.dropped;
		capped |= files[i].meta.timeline_truncated;
	}
	out_str(o, ",\"droppedRecords\":");
	out_u64(o, dropped);
	out_str(o, capped ? ",\"timelineTruncated\":true"
			  : ",\"timelineTruncated\":false");
	out_str(o, ",\"events\":");
	out_u64(o, events);
	out_str(o, ",\"merged\":[");
	for (i = 0; i < nf; i++) {
		const struct merge_file *f = &files[i];

		out_str(o, i ? ",{\"file\":" : "{\"file\":");
		out_json_str(o, f->path);
		if (f->meta.has_rank) {
			out_str(o, ",\"rank\":");
			out_i64(o, f->meta.rank);
		}
		out_str(o, ",\"host\":");
		out_json_str(o, f->meta.host);
		/* Never negative: the earliest base is subtracted. */
		out_str(o, ",\"shiftMicroseconds\":");
		out_us(o, (uint64_t)f->shift_ns);
		out_str(o, f->st == TRACE_TRUNCATED ? ",\"truncated\":true"
						    : ",\"truncated\":false");
		out_str(o, ",\"pids\":{");
		for (j = 0; j < f->npids; j++) {
			out_str(o, j ? ",\"" : "\"");
			out_i64(o, f->pids[j].from);
			out_str(o, "\":");
			out_i64(o, f->pids[j].to);
		}
		out_str(o, "}}");
	}
	out_str(o, "]}}\n");
}

/* Writes the merge of paths[0..nf) to outpath (see cli.h). */
int merge_write(const char *outpath, char *const *paths, size_t nf, int no_host,
		uint64_t *events_out)
{
	struct merge_file *files = NULL;
	struct out *o = NULL;
	int64_t base = 0;
	int has_base = 0, rc, ret = CLI_FAIL;
	int frames = 0, first_frame = 1;
	uint64_t at, events = 0;
	size_t i;

	files = calloc(nf, sizeof(*files));
	o = malloc(sizeof(*o));
	if (!files || !o) {
		util_err("out of memory");
		goto out;
	}
	for (i = 0; i < nf; i++) {
		struct stat sb;

		files[i].path = paths[i];
		/* Each input is read twice; a pipe would be empty the second
		 * time, and a FIFO would wait for another writer. */
		if (stat(files[i].path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
		    !S_ISDIR(sb.st_mode)) {
			util_err("%s: not a regular file (merge reads each "
				 "input twice; save it to a file first)",
				 files[i].path);
			goto out;
		}
		files[i].st = trace_read_stacks(
			files[i].path, merge_index_event, merge_frames_note,
			&files[i], &files[i].meta, &at);
		if (files[i].st == TRACE_BAD) {
			goto out;
		}
		if (no_host) {
			files[i].meta.host[0] = 0;
		}
		if (files[i].st == TRACE_TRUNCATED) {
			util_err("%s: truncated at byte %llu; merging the "
				 "events before it",
				 files[i].path, (unsigned long long)at);
		}
		if (!files[i].meta.has_base) {
			util_err("%s: no baseTimeNanoseconds; its times are "
				 "not shifted",
				 files[i].path);
		} else if (!has_base || files[i].meta.base_ns < base) {
			base = files[i].meta.base_ns;
			has_base = 1;
		}
	}
	for (i = 0; i < nf; i++) {
		if (files[i].meta.has_base &&
		    __builtin_sub_overflow(files[i].meta.base_ns, base,
					   &files[i].shift_ns)) {
			util_err("%s: baseTimeNanoseconds is too far from the "
				 "other files'; its times are not shifted",
				 files[i].path);
			files[i].shift_ns = 0;
		}
	}
	if (merge_index_assign_pids(files, nf) < 0) {
		goto out;
	}
	merge_frames_assign(files, nf);

	rc = out_open(o, outpath, 1);
	if (rc == -ENAMETOOLONG) {
		util_err("%s: name too long", outpath);
		goto out;
	}
	if (rc < 0) {
		util_err("%s: %s", o->tmp, strerror(-rc));
		goto out;
	}
	out_str(o, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\"");
	if (has_base) {
		out_str(o, ",\"baseTimeNanoseconds\":");
		out_i64(o, base);
	}
	out_str(o, ",\"deviceProperties\":[],\n");
	/* Files of one rank (the processes of one rank's run, which mxprof
	 * run merges) make a trace of that rank, as Kineto writes it (the
	 * space after the colon: HTA's rank lookup). Files of several ranks
	 * make none: each process's labels name its rank. */
	for (i = 0; i < nf && files[i].meta.has_rank &&
		    files[i].meta.rank == files[0].meta.rank;
	     i++) {
	}
	if (nf && i == nf) {
		out_str(o, "\"distributedInfo\":{\"rank\": ");
		out_i64(o, files[0].meta.rank);
		out_str(o, "},\n");
	}
	out_str(o, "\"traceEvents\":[\n");
	for (i = 0; i < nf; i++) {
		if (merge_copy_file(&files[i], i, o, &events) < 0) {
			out_abort(o);
			goto out;
		}
		merge_index_write_names(&files[i], o, &events);
	}
	out_str(o, "],\n");
	/* The frames after the events, as the library writes them. */
	for (i = 0; i < nf; i++) {
		if (!files[i].has_frames) {
			continue;
		}
		if (!frames) {
			out_str(o, "\"stackFrames\":{");
			frames = 1;
		}
		if (merge_frames_copy(&files[i], o, &first_frame) < 0) {
			out_abort(o);
			goto out;
		}
	}
	if (frames) {
		out_str(o, "\n},\n");
	}
	mg_top_level(o, files, nf, events);
	if (util_out_commit(o, outpath) < 0) {
		goto out;
	}
	*events_out = events;
	ret = CLI_OK;
out:
	for (i = 0; files && i < nf; i++) {
		merge_index_free(&files[i]);
	}
	free(files);
	free(o);
	return ret;
}

/* mxprof merge -o OUT FILE...: one trace from several, clocks aligned.
 * Returns the exit status (cli.h). */
int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *outpath = NULL;
	uint64_t events = 0;
	int c;
	size_t nf;

	util_set_cmd("merge");
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			errno = 0;
			printf("%s%s", mg_usage, mg_help);
			return util_stdout_done("the help");
		default:
			fputs(mg_usage, stderr);
			return CLI_USAGE;
		}
	}
	if (!outpath || optind >= argc) {
		util_err(outpath ? "no input trace given"
				 : "-o OUT is required");
		fputs(mg_usage, stderr);
		return CLI_USAGE;
	}
	nf = (size_t)(argc - optind);
	if (merge_write(outpath, argv + optind, nf, 0, &events) != CLI_OK) {
		return CLI_FAIL;
	}
	errno = 0;
	printf("%s: %llu events from %zu traces\n", outpath,
	       (unsigned long long)events, nf);
	return util_stdout_done("the summary");
}
