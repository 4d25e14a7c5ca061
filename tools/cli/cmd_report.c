/*
 * cmd_report.c - mxprof report: the aggregate tables of a trace.
 *
 * Each trace event becomes one sample for the collector's aggregates, the
 * same sample the library made from the record, and the tables come from
 * the collector's own formatter, so that the output is byte for byte what
 * the library wrote into X.stats.txt:
 *
 *   "X" -> COLL_SPAN (COLL_FRAME when args has "frame"), value = dur in ns,
 *          self time from the slices of its thread before it (nest.c)
 *   "i" -> COLL_INSTANT, flags = the scope ("g", "p", "t")
 *   "C" -> COLL_COUNTER, value = args.value, section = the top-level "group"
 *
 * The section is args.group ("group" for counters), or the event's "cat"
 * when the writer gave none (GPU activity). Metadata ("M") and flows are not
 * aggregated.
 *
 * A trace recorded with call stacks also gets the library's call-site rows
 * (report_sites.c): a slice with "sf" is added once more to its section's
 * "Call Sites", GPU work to "GPU Time by Call Site". When the file's
 * stackFrames come after its events, a second pass adds those rows only
 * (rp_second()). report --flame is report_flame.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "hmap.h"

/* A small cache in front of strtab_intern(), which takes a lock: traces
 * repeat a few hundred names millions of times. */
#define RP_CACHE 4096

struct rp_cache_ent {
	uint64_t hash;
	uint32_t id;
	uint32_t len;
	char s[64];
};

/* report --steps: the filter of every file read, NULL for none. */
static struct report_steps *rp_steps;

struct rp_ctx {
	const char *path;
	struct agg *agg;
	struct rp_cache_ent *cache;
	uint64_t file; /* which file of the command, for thread keys */
	int failed;
	struct report_sites *sites;
	struct nest *self; /* the second pass's self times */
	int second;	   /* the second pass: call-site rows only */
};

/* A hash of s[0..len) for the cache, eight bytes at a time. */
static uint64_t rp_hash(const char *s, size_t len)
{
	uint64_t h = len * 0x9e3779b97f4a7c15ull, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	if (i < len) {
		/* The tail in fixed-size loads, which may overlap bytes
		 * already hashed: a load of a variable size would wait for
		 * the stores that built it. */
		if (len >= 8) {
			memcpy(&w, s + len - 8, 8);
		} else if (len >= 4) {
			uint32_t a, b;

			memcpy(&a, s, 4);
			memcpy(&b, s + len - 4, 4);
			w = (uint64_t)a << 32 | b;
		} else {
			w = (uint64_t)(unsigned char)s[0] << 16 |
			    (uint64_t)(unsigned char)s[len / 2] << 8 |
			    (unsigned char)s[len - 1];
		}
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h ^ h >> 32;
}

/* Returns 1 when a[0..len) and b[0..len) are equal, comparing in the
 * loads rp_hash() makes (a name was just written in small pieces; a wide
 * load across them would wait for them). */
static int rp_equal(const char *a, const char *b, size_t len)
{
	uint64_t x, y;
	size_t i = 0;

	if (len < 8) {
		while (i < len && a[i] == b[i]) {
			i++;
		}
		return i == len;
	}
	for (; i + 8 <= len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
			return 0;
		}
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return x == y;
}

/* Interns s through the cache. Returns strtab_intern()'s id, with errno
 * as it leaves it when that is 0. */
static uint32_t rp_intern(struct rp_ctx *c, const char *s)
{
	size_t len = strlen(s);
	uint64_t h;
	struct rp_cache_ent *e;
	uint32_t id;

	if (len >= sizeof(c->cache[0].s) || !c->cache) {
		errno = 0;
		return strtab_intern(s);
	}
	h = rp_hash(s, len);
	e = &c->cache[h % RP_CACHE];
	if (e->id && e->hash == h && e->len == len && rp_equal(e->s, s, len)) {
		return e->id;
	}
	errno = 0;
	id = strtab_intern(s);
	if (id) {
		e->hash = h;
		e->id = id;
		e->len = (uint32_t)len;
		memcpy(e->s, s, len + 1);
	}
	return id;
}

/* Interns s into *id. Returns 0, or -ENOSPC after one line on stderr
 * (the string table is full or memory ran out). */
static int rp_name(struct rp_ctx *c, const char *s, uint32_t *id)
{
	/* strtab_intern() gives 0 for a name when its table is full, or
	 * when memory runs out (errno ENOMEM) first. */
	*id = rp_intern(c, s);
	if (*id || !*s) {
		return 0;
	}
	if (errno == ENOMEM) {
		util_err("%s: out of memory for the names", c->path);
	} else {
		util_err("%s: too many distinct names (the limit is %u)",
			 c->path, strtab_count() - 1);
	}
	c->failed = 1;
	return -ENOSPC;
}

/* The second pass: only the call-site row of a slice, with the self time
 * the first pass gave it (selftime.c, fed every slice again). */
static int rp_second(struct rp_ctx *c, uint64_t thread,
		     const struct trace_event *ev, struct agg_sample *s,
		     const struct report_site *site, uint32_t sg, uint32_t sn)
{
	struct nest_slice sl = {s->group, s->name, sg, sn};
	struct nest_fold f;
	int64_t self =
		nest_self_of(c->self, thread, (uint64_t)ev->ts_ns,
			     s->value > 0 ? (uint64_t)s->value : 0, &sl, &f);

	if (f.name && f.site_name) {
		/* Only the call-site rows are added in this pass. */
		f.name = 0;
		f.group = 0;
		agg_take_back(c->agg, &f);
	}
	if (!sg) {
		return 0;
	}
	s->group = sg;
	s->name = sn;
	s->has_self = !site->gpu;
	s->self = site->gpu ? 0 : self;
	return agg_add(c->agg, s);
}

static int rp_frame(const struct trace_frame *f, void *opaque)
{
	struct rp_ctx *c = opaque;

	if (report_sites_frame(c->sites, f) < 0) {
		util_err("%s: out of memory for the call stacks", c->path);
		c->failed = 1;
		return -ENOMEM;
	}
	return 0;
}

static int rp_event(const struct trace_event *ev, void *opaque)
{
	struct rp_ctx *c = opaque;
	struct agg_sample s = {0};
	struct report_site site;
	uint32_t sg = 0, sn = 0;
	const char *group;
	int rc;

	if (rp_steps && !report_steps_keep(rp_steps, ev)) {
		return 0;
	}
	switch (ev->ph) {
	case 'X':
		s.kind = ev->has_frame ? COLL_FRAME : COLL_SPAN;
		s.value = ev->dur_ns;
		group = ev->has_args_group ? ev->args_group : ev->cat;
		if (ev->has_error) {
			s.flags = COLL_FLAG_STATUS;
			if (ev->error) {
				s.flags |= COLL_FLAG_ERROR;
			}
		}
		break;
	case 'i':
	case 'I':
		s.kind = COLL_INSTANT;
		s.flags = ev->scope == 'g'   ? COLL_SCOPE_GLOBAL
			  : ev->scope == 't' ? COLL_SCOPE_THREAD
					     : COLL_SCOPE_PROCESS;
		group = ev->has_args_group ? ev->args_group : ev->cat;
		break;
	case 'C':
		s.kind = COLL_COUNTER;
		s.value = ev->value;
		group = ev->has_group ? ev->group : ev->cat;
		break;
	default:
		return 0;
	}
	/* A number cut to what fits would give wrong tables silently. */
	if ((ev->ph == 'X' && ev->dur_out_of_range) ||
	    (ev->ph == 'C' && ev->value_out_of_range)) {
		util_err("%s: the %s of '%s' does not fit in 64 bits", c->path,
			 ev->ph == 'C' ? "value" : "dur", ev->name);
		c->failed = 1;
		return -ERANGE;
	}
	if (c->second && ev->ph != 'X') {
		return 0;
	}
	if (rp_name(c, group, &s.group) < 0 ||
	    rp_name(c, ev->name, &s.name) < 0) {
		return -ENOSPC;
	}
	if (report_sites_event(c->sites, ev, group, &site) < 0) {
		util_err("out of memory while aggregating");
		c->failed = 1;
		return -ENOMEM;
	}
	if (site.name && (rp_name(c, site.group, &sg) < 0 ||
			  rp_name(c, site.name, &sn) < 0)) {
		return -ENOSPC;
	}
	/* A slice's self time comes from the slices of its thread (pid, tid,
	 * in this file) before it: mxprof writes each thread's slices in the
	 * order they ended. */
	uint64_t thread =
		c->file << 48 ^ (uint64_t)ev->pid << 24 ^ (uint64_t)ev->tid;

	if (c->second) {
		rc = rp_second(c, thread, ev, &s, &site, sg, sn);
	} else if (site.gpu) {
		/* GPU work's call-site row is a plain sample, as the other
		 * GPU rows of the library's tables. */
		rc = agg_add_at(c->agg, thread, (uint64_t)ev->ts_ns, &s);
		s.group = sg;
		s.name = sn;
		rc = rc < 0 ? rc : agg_add(c->agg, &s);
	} else {
		rc = agg_add_site(c->agg, thread, (uint64_t)ev->ts_ns, &s, sg,
				  sn);
	}
	if (rc < 0) {
		util_err("out of memory while aggregating");
		c->failed = 1;
		return -ENOMEM;
	}
	return 0;
}

/* Adds the call-site rows of path that its first pass could not (its
 * stackFrames come after its events), from a second pass over it. Returns
 * 0, or -1 after one line on stderr. */
static int rp_second_pass(struct rp_ctx *c, const char *path)
{
	struct trace_meta *m2 = NULL;
	struct stat sb;
	uint64_t at;
	int ret = -1;

	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		util_err("%s: its stackFrames come after its events and it "
			 "cannot be read twice; no Call Sites rows",
			 path);
		return 0;
	}
	m2 = malloc(sizeof(*m2));
	c->self = nest_create();
	if (!m2 || !c->self) {
		util_err("%s: out of memory", path);
		goto out;
	}
	c->second = 1;
	report_sites_rewind(c->sites);
	if (trace_read_file(path, rp_event, c, m2, &at) != TRACE_BAD) {
		ret = 0;
	}
out:
	report_sites_finish(c->sites, path);
	nest_destroy(c->self);
	c->self = NULL;
	c->second = 0;
	free(m2);
	return ret;
}

/* Aggregates the trace at path into a and adds its dropped count to
 * *dropped. Returns TRACE_COMPLETE, TRACE_TRUNCATED or TRACE_BAD, each
 * with its message printed (cli.h). */
enum trace_status cmd_report_aggregate(const char *path, struct agg *a,
				       uint64_t *dropped)
{
	struct trace_meta *meta = malloc(sizeof(*meta));
	enum trace_status st;

	if (!meta) {
		util_err("%s: out of memory", path);
		return TRACE_BAD;
	}
	st = cmd_report_aggregate_meta(path, a, dropped, meta);
	free(meta);
	return st;
}

/* As cmd_report_aggregate(), leaving the file's own data in *m. */
enum trace_status cmd_report_aggregate_meta(const char *path, struct agg *a,
					    uint64_t *dropped,
					    struct trace_meta *m)
{
	static uint64_t files;
	struct rp_ctx c = {.path = path, .agg = a, .file = ++files};
	uint64_t at;
	enum trace_status st;

	if (rp_steps && report_steps_scan(rp_steps, path) < 0) {
		return TRACE_BAD;
	}
	c.cache = calloc(RP_CACHE, sizeof(*c.cache));
	c.sites = report_sites_create();
	if (!c.sites) {
		util_err("%s: out of memory", path);
		free(c.cache);
		return TRACE_BAD;
	}
	st = trace_read_stacks(path, rp_event, rp_frame, &c, m, &at);
	if (st != TRACE_BAD && report_sites_finish(c.sites, path) &&
	    rp_second_pass(&c, path) < 0) {
		st = TRACE_BAD;
	}
	report_sites_destroy(c.sites);
	free(c.cache);
	if (st == TRACE_BAD) {
		return st;
	}
	*dropped += m->dropped;
	if (st == TRACE_TRUNCATED) {
		trace_read_warn_truncated(path, at);
	} else if (m->timeline_truncated) {
		util_err("%s: the timeline was capped (MXPROF_MAX_TRACE_MB); "
			 "these tables cover its events only, the library's "
			 ".stats.txt covers all",
			 path);
	}
	return st;
}

/* The most metadata pairs report shows. */
#define RP_META_MAX 64

/* Points pairs (room for 2 * max + 1) at the metadata in m as key, value,
 * ..., NULL. Returns pairs, or NULL when m has none. */
static const char *const *rp_meta_pairs(const struct trace_meta *m,
					const char **pairs, size_t max)
{
	size_t k = 0;

	for (size_t at = 0; at < m->meta_len && k < 2 * max;) {
		pairs[k++] = m->meta + at;
		at += strlen(m->meta + at) + 1;
	}
	pairs[k & ~(size_t)1] = NULL;
	return k >= 2 ? pairs : NULL;
}

/* The metadata pairs with "steps" set to held (report --steps), added
 * when absent. pairs has room for RP_META_MAX pairs and its NULL. */
static const char *const *rp_meta_steps(const char **pairs, const char *held)
{
	size_t k = 0;

	for (; pairs[k]; k += 2) {
		if (strcmp(pairs[k], "steps") == 0) {
			pairs[k + 1] = held;
			return pairs;
		}
	}
	if (k < 2 * RP_META_MAX) {
		pairs[k] = "steps";
		pairs[k + 1] = held;
		pairs[k + 2] = NULL;
	}
	return pairs;
}

static const char rp_usage[] =
	"usage: mxprof report [--sort KEY] [--ascending] [--format FMT] "
	"[--top N]\n"
	"                     [--category SECTION] [--steps LIST] FILE...\n"
	"       mxprof report --flame [--gpu] [-o OUT] FILE...\n"
	"       mxprof report --html OUT.html FILE...\n";

static const char rp_help[] =
	"\n"
	"Print the aggregate tables (the layout of MXNet's profiler.dumps())\n"
	"of traces written by mxprof, plain or gzip-compressed. The output is\n"
	"the same as the X.stats.txt the library writes beside X.json. "
	"Several\n"
	"files are aggregated together. The file is read as a stream: its "
	"size\n"
	"does not matter.\n"
	"\n"
	"A file that ends early (the program crashed while writing it) still\n"
	"gives the tables of the events before the end, with one warning on\n"
	"stderr, and the exit status stays 0.\n"
	"\n"
	"options:\n"
	"  -s, --sort KEY        sort rows by total, avg, min, max, count or\n"
	"                        self (self time); PyTorch's cpu_time_total,\n"
	"                        cpu_time and self_cpu_time_total (and cuda_,\n"
	"                        device_) are total, avg and self\n"
	"                        (default total)\n"
	"  -a, --ascending       smallest first (default: largest first)\n"
	"  -f, --format FMT      table (default), json or csv\n"
	"  -n, --top N           at most N rows per section (default: all)\n"
	"  -c, --category NAME   only the section NAME\n"
	"      --steps LIST      only the steps of LIST (\"5,10-12\"): their\n"
	"                        ProfilerStep#N slices and the events that\n"
	"                        began inside them, as MXPROF_STEPS=list:LIST\n"
	"                        records them\n"
	"  -h, --help            this text\n"
	"\n"
	"A trace recorded with call stacks (MXPROF_STACKS=N) also has, as the\n"
	"library's tables, a \"Call Sites: SECTION\" section per section, "
	"with\n"
	"rows \"NAME @ SITE\" (SITE: the innermost frame of the program's own\n"
	"code, else the innermost frame), and \"GPU Time by Call Site\".\n"
	"\n"
	"      --flame           print folded stacks instead of the tables,\n"
	"                        for flamegraph.pl and speedscope: one line\n"
	"                        per stack, \"outer;...;inner;NAME NS\", "
	"weighted\n"
	"                        by self time in nanoseconds\n"
	"      --gpu             with --flame: GPU time, under the stack of\n"
	"                        the launch (\"...;LAUNCH;KERNEL NS\")\n"
	"  -o, --output OUT      with --flame: write to OUT (.gz: gzip)\n"
	"\n"
	"      --html OUT.html   write one self-contained HTML page instead\n"
	"                        of the tables: the run's header, step time\n"
	"                        bars, the rows by self time, a flame graph\n"
	"                        (with call stacks) and a timeline overview\n"
	"\n"
	"environment: MXPROF_READ_THREADS=N threads read a large plain file\n"
	"(default: one per processor online; 1: none); the output is the\n"
	"same with any N.\n"
	"\n"
	"exit status: 0 tables printed (maybe with a warning), 1 a file is\n"
	"missing, empty, corrupt or not a trace, or the tables could not be\n"
	"written, 2 bad usage.\n";

/* mxprof report FILE...: the tables of one or more traces, through the
 * collector's formatter. Returns the exit status (cli.h). */
int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"sort", required_argument, NULL, 's'},
		{"ascending", no_argument, NULL, 'a'},
		{"format", required_argument, NULL, 'f'},
		{"top", required_argument, NULL, 'n'},
		{"category", required_argument, NULL, 'c'},
		{"steps", required_argument, NULL, 'S'},
		{"flame", no_argument, NULL, 'F'},
		{"html", required_argument, NULL, 'H'},
		{"gpu", no_argument, NULL, 'G'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct table_opts o = {0};
	struct trace_meta *meta = NULL;
	const char *pairs[2 * RP_META_MAX + 1];
	const char *format = NULL, *sort = NULL, *outpath = NULL;
	const char *steps = NULL, *html = NULL;
	char held[512];
	int flame = 0, gpu = 0, tables_opt = 0;
	unsigned long long top;
	struct agg *a = NULL;
	char *text = NULL;
	int c, i, ret = CLI_FAIL;

	util_set_cmd("report");
	while ((c = getopt_long(argc, argv, "s:af:n:c:o:h", opts, NULL)) !=
	       -1) {
		tables_opt |= c == 's' || c == 'a' || c == 'f' || c == 'n' ||
			      c == 'c' || c == 'S';
		switch (c) {
		case 'F':
			flame = 1;
			break;
		case 'G':
			gpu = 1;
			break;
		case 'H':
			html = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 's':
			sort = optarg;
			break;
		case 'a':
			o.ascending = 1;
			break;
		case 'f':
			format = optarg;
			break;
		case 'n':
			if (util_parse_uint(optarg, 0, 1000000000, &top) < 0) {
				util_err("--top: '%s' is not a count", optarg);
				goto usage;
			}
			o.top = (unsigned)top;
			break;
		case 'c':
			o.category = optarg;
			break;
		case 'S':
			steps = optarg;
			break;
		case 'h':
			errno = 0;
			printf("%s%s", rp_usage, rp_help);
			return util_stdout_done("the help");
		default:
			goto usage;
		}
	}
	if ((gpu || outpath) && !flame) {
		util_err("%s needs --flame", gpu ? "--gpu" : "--output");
		goto usage;
	}
	if (flame && tables_opt) {
		util_err("--flame takes no --sort, --ascending, --format, "
			 "--top, --category or --steps");
		goto usage;
	}
	if (table_parse_opts(&o, html ? "json" : format, sort) < 0) {
		util_err("bad --format '%s' or --sort '%s' (formats: table, "
			 "json, csv; keys: total, avg, min, max, count, self, "
			 "or PyTorch's cpu_time_total, cpu_time, "
			 "self_cpu_time_total and their cuda_ and device_ "
			 "forms)",
			 format ? format : "table", sort ? sort : "total");
		goto usage;
	}
	if (html && (flame || gpu || outpath || tables_opt)) {
		util_err("--html takes no other option");
		goto usage;
	}
	if (optind >= argc) {
		util_err("no trace file given");
		goto usage;
	}
	if (flame) {
		return report_flame(argv + optind, (size_t)(argc - optind), gpu,
				    outpath);
	}
	if (steps && !(rp_steps = report_steps_create(steps))) {
		if (errno == EINVAL) {
			util_err(
				"--steps: '%s' is not a list of steps (such as "
				"5,10-12)",
				steps);
			goto usage;
		}
		util_err("out of memory");
		return CLI_FAIL;
	}
	a = agg_create();
	if (!a) {
		util_err("out of memory");
		goto out;
	}
	meta = malloc(sizeof(*meta));
	if (!meta) {
		util_err("out of memory");
		goto out;
	}
	/* The metadata of the first file heads the tables, as the library's
	 * .stats.txt has it. */
	if (cmd_report_aggregate_meta(argv[optind], a, &o.dropped, meta) ==
	    TRACE_BAD) {
		goto out;
	}
	o.meta = rp_meta_pairs(meta, pairs, RP_META_MAX);
	if (rp_steps) {
		snprintf(held, sizeof(held), "%s", report_steps_held(rp_steps));
		o.meta = rp_meta_steps(pairs, held);
	}
	for (i = optind + 1; i < argc; i++) {
		if (cmd_report_aggregate(argv[i], a, &o.dropped) == TRACE_BAD) {
			goto out;
		}
	}
	text = table_format(a, &o);
	if (!text) {
		util_err("out of memory while formatting the tables");
		goto out;
	}
	if (html) {
		ret = report_html(argv + optind, (size_t)(argc - optind), text,
				  meta, html);
		goto out;
	}
	errno = 0;
	fputs(text, stdout);
	ret = util_stdout_done("the tables");
out:
	free(text);
	free(meta);
	agg_destroy(a);
	report_steps_destroy(rp_steps);
	rp_steps = NULL;
	return ret;
usage:
	fputs(rp_usage, stderr);
	return CLI_USAGE;
}
