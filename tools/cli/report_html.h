/*
 * report_html.h - what the passes of mxprof report --html gather and the
 * page writer draws from: report_html.c reads the traces into a struct
 * html (one pass per file, besides the tables' own), report_html_out.c
 * writes the page from it and the tables' JSON, with the page's style and
 * script from report_html_page.c.
 */
#ifndef MXPROF_REPORT_HTML_H
#define MXPROF_REPORT_HTML_H

#include "cli.h"

/* Columns of a track's timeline while it is read (a power of two). */
#define HTML_BINS 1024
/* The operators and annotations kept per step. */
#define HTML_STEP_TOP 8
/* The most steps drawn. */
#define HTML_STEPS_MAX 100000

/* One thread (or GPU stream) of one file. */
struct html_track {
	uint64_t file;
	int64_t pid, tid;
	char name[TRACE_SHORT_MAX];
	int gpu;		/* holds GPU work */
	int used;		/* has slices */
	uint64_t width;		/* ns per bin, a power of two */
	double bins[HTML_BINS]; /* busy ns per bin, from ts 0 */
	struct strsum pending;	/* name id -> self ns since its last step */
	struct strsum last_sf;	/* name id -> sf + 1 of its last slice */
};

/* A process's name. */
struct html_proc {
	uint64_t file;
	int64_t pid;
	char name[TRACE_SHORT_MAX];
};

struct html_top {
	uint32_t name; /* strtab id */
	int64_t self;
};

/* A ProfilerStep#N slice and its heaviest rows. */
struct html_step {
	int64_t n;
	int64_t ts, dur;
	uint32_t track;
	struct html_top top[HTML_STEP_TOP];
};

struct html {
	const char *path; /* the file being read */
	uint64_t file;
	struct html_track *tracks;
	size_t ntracks, last;
	struct html_proc *procs;
	size_t nprocs;
	struct html_step *steps;
	size_t nsteps, steps_left_out;
	struct nest *nest;
	struct frames *fr;
	struct strsum stacks; /* this file: (track, sf, name) -> self ns */
	struct strsum flame;  /* all: track, "path;...;name" -> self ns */
	struct launches *ln;  /* this file: host launches with a stack */
	struct strsum gpu;    /* this file: (stream, sf, launch, name) -> ns */
	struct strsum early;  /* GPU work before its launch: (key, corr) */
	struct strsum gpu_flame; /* all: "stream;path;launch;name" -> ns */
	uint64_t gpu_events, gpu_unkept;
	struct strsum groups; /* sections of the flame's slices */
	int64_t t0, t1;	      /* first ts, last end (ns) */
	int has_span;
	int64_t base_ns;
	int has_base;
	uint64_t dropped, unknown_frames, stack_events;
	char host[TRACE_SHORT_MAX];
	char warnings[2048];
	int failed;
};

/* Reads the trace at path into h (its file number h->file, counted from
 * 1). Returns 0, or -1 after one line on stderr. */
int report_html_file(struct html *h, const char *path, struct trace_meta *meta);

/* Frees what h holds. This function can't fail. */
void report_html_free(struct html *h);

/* Writes the page to outpath from h, the tables' JSON text tables and
 * the metadata of the first file meta; paths[0..n) are the traces read.
 * Returns CLI_OK, or CLI_FAIL after one line on stderr. */
int report_html_write(struct html *h, const char *tables,
		      const struct trace_meta *meta, char *const *paths,
		      size_t n, const char *outpath);

/* The page around the data: its head (up to the data's script element)
 * and its tail (the script that draws). */
extern const char report_html_page_head[];
extern const char report_html_page_tail[];

#endif /* MXPROF_REPORT_HTML_H */
