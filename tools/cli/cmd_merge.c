/*
 * cmd_merge.c - mxprof merge: one timeline from the traces of several
 * processes, ranks or hosts.
 *
 * Two streaming passes over every input, so that memory stays flat:
 *
 *  1. trace_read_file() collects each file's pids, base time, rank and host.
 *     Pids that an earlier file already uses are given fresh numbers.
 *  2. Each file is parsed again and its traceEvents are copied to the output
 *     with yajl's callbacks, rewriting on the way:
 *       - "pid" through the file's pid map;
 *       - "ts" shifted by (base_i - min base) so that every file shares the
 *         clock of the earliest one (baseTimeNanoseconds is the UTC time of
 *         ts = 0 in each file);
 *       - numeric flow "id"s moved into a range of their own per file, so
 *         that launch->kernel arrows never join two processes;
 *       - the process_name of each process gains its rank and host.
 *     An event is buffered until it closes, so that a truncated input adds
 *     only whole events.
 *
 * The output is written to OUT.tmp.PID and renamed to OUT when complete;
 * an OUT ending in .gz is compressed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "cli.h"
#include "mxprof.h"

#define MG_CHUNK (256 * 1024)
#define MG_DEPTH 256

struct mg_pid {
	int64_t from, to;
	int named; /* has a process_name event */
};

/* A thread that has events; a truncated trace may lack its name, which the
 * writer puts at the end. */
struct mg_tid {
	int64_t pid, tid;
	int named;
};

/* An open-addressing map from a pair of integers to a position in an
 * array, so that a trace with many pids and threads costs linear time. */
struct mg_ent {
	int64_t a, b;
	size_t pos; /* the position + 1; 0 marks an empty slot */
};

struct mg_map {
	struct mg_ent *e;
	size_t cap, len;
};

struct mg_file {
	const char *path;
	struct trace_meta meta;
	struct mg_pid *pids;
	size_t npids, cap;
	struct mg_map pid_map; /* (from, 0) -> pids[] */
	struct mg_tid *tids;
	size_t ntids, tcap;
	struct mg_map tid_map; /* (pid, tid) -> tids[] */
	int64_t shift_ns;
	enum trace_status st;
};

/* A growable byte buffer. */
struct mg_buf {
	char *p;
	size_t len, cap;
	int oom;
};

/* Makes room for n more bytes. Returns 0, or -1 and sets b->oom. */
static int mg_reserve(struct mg_buf *b, size_t n)
{
	size_t nc;
	char *np;

	if (b->oom) {
		return -1;
	}
	if (b->len + n <= b->cap) {
		return 0;
	}
	nc = b->cap ? b->cap : 4096;
	while (nc < b->len + n) {
		nc *= 2;
	}
	np = realloc(b->p, nc);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = nc;
	return 0;
}

static void mg_put(struct mg_buf *b, const void *s, size_t n)
{
	if (mg_reserve(b, n) < 0) {
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void mg_puts(struct mg_buf *b, const char *s)
{
	mg_put(b, s, strlen(s));
}

/* Writes s[0..n) as a JSON string with the collector's escaper: bytes
 * that are not UTF-8 (a damaged input) become U+FFFD, so that the output
 * always parses. */
static void mg_putstr(struct mg_buf *b, const unsigned char *s, size_t n)
{
	size_t k;

	/* Room for the worst case, then one call. */
	mg_put(b, "\"", 1);
	if (b->oom || mg_reserve(b, n * 6 + 1) < 0) {
		return;
	}
	k = out_json_escape(b->p + b->len, n * 6, (const char *)s, n, NULL);
	b->len += k;
	mg_put(b, "\"", 1);
}

/* ---- pass 1 ------------------------------------------------------------ */

static size_t mg_slot(int64_t a, int64_t b, size_t cap)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;

	h = (h ^ (h >> 29) ^ (uint64_t)b) * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

/* Returns the slot of (a, b) in m: its entry, or the empty slot where it
 * belongs. m->cap is a power of two and m is never full. */
static struct mg_ent *mg_map_slot(const struct mg_map *m, int64_t a, int64_t b)
{
	size_t i = mg_slot(a, b, m->cap);

	while (m->e[i].pos && (m->e[i].a != a || m->e[i].b != b)) {
		i = (i + 1) & (m->cap - 1);
	}
	return &m->e[i];
}

/* Returns the position stored for (a, b), or -1 when there is none. */
static ssize_t mg_map_find(const struct mg_map *m, int64_t a, int64_t b)
{
	const struct mg_ent *e;

	if (!m->cap) {
		return -1;
	}
	e = mg_map_slot(m, a, b);
	return e->pos ? (ssize_t)(e->pos - 1) : -1;
}

/* Stores pos for (a, b), which m does not hold. Returns 0 or -ENOMEM
 * (printed). */
static int mg_map_add(struct mg_map *m, int64_t a, int64_t b, size_t pos)
{
	if ((m->len + 1) * 2 > m->cap) {
		struct mg_map n = {.cap = m->cap ? m->cap * 2 : 64};
		size_t i;

		n.e = calloc(n.cap, sizeof(*n.e));
		if (!n.e) {
			util_err("out of memory");
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++) {
			if (m->e[i].pos) {
				*mg_map_slot(&n, m->e[i].a, m->e[i].b) =
					m->e[i];
			}
		}
		n.len = m->len;
		free(m->e);
		*m = n;
	}
	*mg_map_slot(m, a, b) = (struct mg_ent){a, b, pos + 1};
	m->len++;
	return 0;
}

static int mg_grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t nc;
	void *np;

	if (n < *cap) {
		return 0;
	}
	nc = *cap ? *cap * 2 : 8;
	np = realloc(*p, nc * size);
	if (!np) {
		util_err("out of memory");
		return -ENOMEM;
	}
	*p = np;
	*cap = nc;
	return 0;
}

static int mg_collect(const struct trace_event *ev, void *opaque)
{
	struct mg_file *f = opaque;
	int pname, tname;
	ssize_t found;
	size_t i;

	if (!ev->has_pid) {
		return 0;
	}
	pname = ev->ph == 'M' && strcmp(ev->name, "process_name") == 0;
	tname = ev->ph == 'M' && strcmp(ev->name, "thread_name") == 0;
	found = mg_map_find(&f->pid_map, ev->pid, 0);
	i = found < 0 ? f->npids : (size_t)found;
	if (i == f->npids) {
		if (mg_grow((void **)&f->pids, &f->cap, f->npids,
			    sizeof(*f->pids)) < 0 ||
		    mg_map_add(&f->pid_map, ev->pid, 0, i) < 0) {
			return -ENOMEM;
		}
		f->pids[i].from = f->pids[i].to = ev->pid;
		f->pids[i].named = 0;
		f->npids++;
	}
	f->pids[i].named |= pname;
	if (ev->ph == 'M' && !tname) {
		return 0;
	}
	found = mg_map_find(&f->tid_map, ev->pid, ev->tid);
	i = found < 0 ? f->ntids : (size_t)found;
	if (i == f->ntids) {
		if (mg_grow((void **)&f->tids, &f->tcap, f->ntids,
			    sizeof(*f->tids)) < 0 ||
		    mg_map_add(&f->tid_map, ev->pid, ev->tid, i) < 0) {
			return -ENOMEM;
		}
		f->tids[i].pid = ev->pid;
		f->tids[i].tid = ev->tid;
		f->tids[i].named = 0;
		f->ntids++;
	}
	f->tids[i].named |= tname;
	return 0;
}

/* Adds process_name and thread_name events that a truncated file lacks, so
 * that viewers label every track. */
static void mg_add_names(struct mg_file *f, struct mg_buf *out,
			 uint64_t *events)
{
	const char *base = strrchr(f->path, '/');
	char tmp[TRACE_SHORT_MAX * 2 + 256];
	ssize_t j;
	size_t i;

	base = base ? base + 1 : f->path;
	for (i = 0; i < f->npids; i++) {
		if (f->pids[i].named) {
			continue;
		}
		snprintf(tmp, sizeof(tmp), "%s (pid %lld)", base,
			 (long long)f->pids[i].from);
		if (f->meta.has_rank) {
			snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp),
				 " rank %lld", (long long)f->meta.rank);
		}
		if (f->meta.host[0]) {
			snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp),
				 " on %s", f->meta.host);
		}
		if ((*events)++) {
			mg_puts(out, ",\n");
		}
		mg_puts(out,
			"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
		{
			char num[32];

			snprintf(num, sizeof(num), "%lld",
				 (long long)f->pids[i].to);
			mg_puts(out, num);
		}
		mg_puts(out, ",\"tid\":0,\"args\":{\"name\":");
		mg_putstr(out, (const unsigned char *)tmp, strlen(tmp));
		mg_puts(out, "}}");
	}
	for (i = 0; i < f->ntids; i++) {
		int64_t pid = f->tids[i].pid;

		if (f->tids[i].named) {
			continue;
		}
		j = mg_map_find(&f->pid_map, pid, 0);
		if (j >= 0) {
			pid = f->pids[j].to;
		}
		if ((*events)++) {
			mg_puts(out, ",\n");
		}
		snprintf(tmp, sizeof(tmp),
			 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,"
			 "\"tid\":%lld,\"args\":{\"name\":\"thread %lld\"}}",
			 (long long)pid, (long long)f->tids[i].tid,
			 (long long)f->tids[i].tid);
		mg_puts(out, tmp);
	}
}

/* Gives every pid that an earlier file uses a fresh number. Returns 0 or
 * -ENOMEM (printed). */
static int mg_assign_pids(struct mg_file *files, size_t nf)
{
	struct mg_map used = {0}; /* (to, 0) of the files before i */
	int64_t next = 0;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < nf; i++) {
		for (j = 0; j < files[i].npids; j++) {
			if (files[i].pids[j].from >= next) {
				next = files[i].pids[j].from + 1;
			}
		}
	}
	for (i = 0; i < nf && ret == 0; i++) {
		for (j = 0; j < files[i].npids; j++) {
			if (i > 0 &&
			    mg_map_find(&used, files[i].pids[j].from, 0) >= 0) {
				files[i].pids[j].to = next++;
			}
		}
		for (j = 0; j < files[i].npids && ret == 0; j++) {
			if (mg_map_find(&used, files[i].pids[j].to, 0) < 0) {
				ret = mg_map_add(&used, files[i].pids[j].to, 0,
						 j);
			}
		}
	}
	free(used.e);
	return ret;
}

/* ---- pass 2 ------------------------------------------------------------ */

struct mg_copy {
	struct mg_file *f;
	uint64_t id_offset;
	struct mg_buf ev;   /* the event being copied */
	struct mg_buf *out; /* whole events go here */
	int depth;	    /* containers open */
	unsigned char is_map[MG_DEPTH];
	unsigned char first[MG_DEPTH];
	int skip;	     /* levels inside something not copied */
	int in_events;	     /* inside the traceEvents array */
	int root_key_events; /* the last root key was traceEvents */
	int key_at3;	     /* event-level key: 1 pid, 2 ts, 3 id, 4 args,
				5 ph, 6 name */
	int args_open;	     /* depth 4 is the args object */
	int key_name_at4;    /* the last args key was "name" */
	int ph_m, pname;
	int too_deep;
	uint64_t events;
};

/* Writes the comma before an element or key at the current depth. */
static void mg_sep(struct mg_copy *c)
{
	if (c->depth <= 2) {
		return;
	}
	if (!c->first[c->depth]) {
		if (!c->is_map[c->depth]) {
			mg_put(&c->ev, ",", 1);
		}
	}
	c->first[c->depth] = 0;
}

/* Returns 1 when the current scalar is copied. */
static int mg_copying(struct mg_copy *c)
{
	return !c->skip && c->depth >= 3;
}

static int mg_null(void *ctx)
{
	struct mg_copy *c = ctx;

	if (mg_copying(c)) {
		mg_sep(c);
		mg_puts(&c->ev, "null");
	}
	return 1;
}

static int mg_boolean(void *ctx, int v)
{
	struct mg_copy *c = ctx;

	if (mg_copying(c)) {
		mg_sep(c);
		mg_puts(&c->ev, v ? "true" : "false");
	}
	return 1;
}

static void mg_put_us(struct mg_buf *b, int64_t ns)
{
	char s[48];
	uint64_t a = ns < 0 ? (uint64_t)(-ns) : (uint64_t)ns;

	snprintf(s, sizeof(s), "%s%llu.%03llu", ns < 0 ? "-" : "",
		 (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
	mg_puts(b, s);
}

static int mg_number(void *ctx, const char *s, size_t n)
{
	struct mg_copy *c = ctx;
	char tmp[48];
	int64_t v;

	if (!mg_copying(c)) {
		return 1;
	}
	mg_sep(c);
	if (c->depth == 3 && c->key_at3 == 1 && util_parse_i64(s, n, &v) == 0) {
		ssize_t i = mg_map_find(&c->f->pid_map, v, 0);

		if (i >= 0) {
			v = c->f->pids[i].to;
		}
		snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
		mg_puts(&c->ev, tmp);
		return 1;
	}
	if (c->depth == 3 && c->key_at3 == 2 && c->f->shift_ns &&
	    util_us_to_ns(s, n, &v) == 0) {
		mg_put_us(&c->ev, v + c->f->shift_ns);
		return 1;
	}
	if (c->depth == 3 && c->key_at3 == 3 && c->id_offset &&
	    !memchr(s, '.', n) && util_parse_i64(s, n, &v) == 0) {
		snprintf(tmp, sizeof(tmp), "%llu",
			 (unsigned long long)((uint64_t)v + c->id_offset));
		mg_puts(&c->ev, tmp);
		return 1;
	}
	mg_put(&c->ev, s, n);
	return 1;
}

static int mg_string(void *ctx, const unsigned char *s, size_t n)
{
	struct mg_copy *c = ctx;
	const struct trace_meta *m = &c->f->meta;

	if (!mg_copying(c)) {
		return 1;
	}
	mg_sep(c);
	if (c->depth == 3 && c->key_at3 == 5) {
		c->ph_m = n == 1 && s[0] == 'M';
	} else if (c->depth == 3 && c->key_at3 == 6) {
		c->pname = n == 12 && memcmp(s, "process_name", 12) == 0;
	} else if (c->depth == 4 && c->args_open && c->key_name_at4 &&
		   c->ph_m && c->pname) {
		struct mg_buf nb = {0};
		char tail[TRACE_SHORT_MAX + 64];

		mg_put(&nb, s, n);
		if (m->has_rank) {
			snprintf(tail, sizeof(tail), " rank %lld",
				 (long long)m->rank);
			mg_puts(&nb, tail);
		}
		if (m->host[0]) {
			snprintf(tail, sizeof(tail), " on %s", m->host);
			mg_puts(&nb, tail);
		}
		if (nb.oom) {
			c->ev.oom = 1;
			free(nb.p);
			return 1;
		}
		mg_putstr(&c->ev, (const unsigned char *)nb.p, nb.len);
		free(nb.p);
		return 1;
	}
	mg_putstr(&c->ev, s, n);
	return 1;
}

static int mg_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct mg_copy *c = ctx;

	if (c->skip) {
		return 1;
	}
	if (c->depth == 1) {
		c->root_key_events =
			n == 11 && memcmp(k, "traceEvents", 11) == 0;
		return 1;
	}
	if (c->depth < 3) {
		return 1;
	}
	if (!c->first[c->depth]) {
		mg_put(&c->ev, ",", 1);
	}
	c->first[c->depth] = 0;
	if (c->depth == 3) {
		c->key_at3 = n == 3 && !memcmp(k, "pid", 3)    ? 1
			     : n == 2 && !memcmp(k, "ts", 2)   ? 2
			     : n == 2 && !memcmp(k, "id", 2)   ? 3
			     : n == 4 && !memcmp(k, "args", 4) ? 4
			     : n == 2 && !memcmp(k, "ph", 2)   ? 5
			     : n == 4 && !memcmp(k, "name", 4) ? 6
							       : 0;
	} else if (c->depth == 4) {
		c->key_name_at4 = n == 4 && !memcmp(k, "name", 4);
	}
	mg_putstr(&c->ev, k, n);
	mg_put(&c->ev, ":", 1);
	return 1;
}

static int mg_open(struct mg_copy *c, int is_map)
{
	if (c->skip) {
		c->skip++;
		return 1;
	}
	if (c->depth == 0) {
		c->depth = 1;
		return 1;
	}
	if (c->depth == 1) {
		if (!is_map && c->root_key_events) {
			c->depth = 2;
			c->in_events = 1;
			return 1;
		}
		c->skip = 1;
		return 1;
	}
	if (c->depth == 2 && !is_map) {
		c->skip = 1; /* an array inside traceEvents: not an event */
		return 1;
	}
	if (c->depth + 1 >= MG_DEPTH) {
		c->too_deep = 1;
		return 0;
	}
	if (c->depth == 2) {
		c->ev.len = 0;
		c->ph_m = c->pname = 0;
		c->key_at3 = 0;
	} else {
		mg_sep(c);
	}
	c->args_open = c->depth == 3 ? c->key_at3 == 4 : c->args_open;
	c->depth++;
	c->is_map[c->depth] = (unsigned char)is_map;
	c->first[c->depth] = 1;
	mg_put(&c->ev, is_map ? "{" : "[", 1);
	return 1;
}

static int mg_start_map(void *ctx)
{
	return mg_open(ctx, 1);
}

static int mg_start_array(void *ctx)
{
	return mg_open(ctx, 0);
}

static int mg_close(void *ctx)
{
	struct mg_copy *c = ctx;

	if (c->skip) {
		c->skip--;
		return 1;
	}
	if (c->depth <= 2) {
		c->depth--;
		return 1;
	}
	mg_put(&c->ev, c->is_map[c->depth] ? "}" : "]", 1);
	c->depth--;
	if (c->depth == 2) {
		/* A whole event: commit it. */
		if (c->events++) {
			mg_put(c->out, ",\n", 2);
		}
		mg_put(c->out, c->ev.p, c->ev.len);
		c->ev.len = 0;
	}
	return 1;
}

static const yajl_callbacks mg_callbacks = {
	.yajl_null = mg_null,
	.yajl_boolean = mg_boolean,
	.yajl_number = mg_number,
	.yajl_string = mg_string,
	.yajl_start_map = mg_start_map,
	.yajl_map_key = mg_map_key,
	.yajl_end_map = mg_close,
	.yajl_start_array = mg_start_array,
	.yajl_end_array = mg_close,
};

/* The output: stdio or gzip. */
struct mg_out {
	FILE *fp;
	gzFile gz;
	int err; /* the errno of the first failed write, 0 if none */
};

/* Records the reason of a failed write or close of o, unless an earlier
 * failure already gave one. For zlib, errno holds it when the failure was
 * the file's (Z_ERRNO). */
static void mg_out_fail(struct mg_out *o, int gz_status)
{
	int err = errno ? errno : EIO;

	if (o->gz && gz_status != Z_ERRNO) {
		err = gz_status == Z_MEM_ERROR ? ENOMEM : EIO;
	}
	if (!o->err) {
		o->err = err;
	}
}

static void mg_out_write(struct mg_out *o, struct mg_buf *b)
{
	int zerr = Z_OK;

	if (o->err || b->len == 0) {
		b->len = 0;
		return;
	}
	errno = 0;
	if (o->gz) {
		if (gzwrite(o->gz, b->p, (unsigned)b->len) != (int)b->len) {
			gzerror(o->gz, &zerr);
			mg_out_fail(o, zerr);
		}
	} else if (fwrite(b->p, 1, b->len, o->fp) != b->len) {
		mg_out_fail(o, Z_ERRNO);
	}
	b->len = 0;
}

/* Copies the events of f into out. Returns 0 or -1 (printed). */
static int mg_copy_file(struct mg_file *f, size_t idx, struct mg_out *o,
			struct mg_buf *out, uint64_t *events)
{
	struct mg_copy *c = calloc(1, sizeof(*c));
	unsigned char *buf = malloc(MG_CHUNK);
	yajl_handle h = NULL;
	gzFile gz = NULL;
	int n, ret = -1;

	if (!c || !buf) {
		util_err("out of memory");
		goto out;
	}
	c->f = f;
	c->out = out;
	c->events = *events;
	c->id_offset = (uint64_t)idx << 40;
	gz = gzopen(f->path, "rb");
	h = yajl_alloc(&mg_callbacks, NULL, c);
	if (!gz || !h) {
		util_err("%s: %s", f->path,
			 gz ? "out of memory" : strerror(errno));
		goto out;
	}
	yajl_config(h, yajl_dont_validate_strings, 1);
	yajl_config(h, yajl_allow_trailing_garbage, 1);
	gzbuffer(gz, MG_CHUNK);
	while ((n = gzread(gz, buf, MG_CHUNK)) > 0) {
		yajl_status st = yajl_parse(h, buf, (size_t)n);

		if (out->len >= MG_CHUNK) {
			mg_out_write(o, out);
		}
		if (c->ev.oom || out->oom) {
			util_err("out of memory");
			goto out;
		}
		if (c->too_deep) {
			util_err("%s: nested too deeply", f->path);
			goto out;
		}
		if (st != yajl_status_ok) {
			/* Pass 1 accepted this file: the error is where it
			 * was cut short. Whole events before it are kept. */
			break;
		}
	}
	ret = 0;
	*events = c->events;
out:
	if (h) {
		yajl_free(h);
	}
	if (gz) {
		gzclose(gz);
	}
	if (c) {
		free(c->ev.p);
	}
	free(c);
	free(buf);
	return ret;
}

static const char mg_usage[] = "usage: mxprof merge -o OUT FILE...\n";

static const char mg_help[] =
	"\n"
	"Combine the traces of several processes, ranks or hosts into one\n"
	"timeline that Perfetto and chrome://tracing load. Clocks are aligned\n"
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
	"exit status: 0 written, 1 an input could not be read or OUT could "
	"not\n"
	"be written, 2 bad usage.\n";

static void mg_top_level(struct mg_buf *b, struct mg_file *files, size_t nf,
			 uint64_t events)
{
	char tmp[128];
	uint64_t dropped = 0;
	int capped = 0;
	size_t i, j;

	mg_puts(b, "],\n\"mxprof\":{\"version\":\"" MXPROF_VERSION "\"");
	for (i = 0; i < nf; i++) {
		dropped += files[i].meta.dropped;
		capped |= files[i].meta.timeline_truncated;
	}
	snprintf(tmp, sizeof(tmp),
		 ",\"droppedRecords\":%llu,\"timelineTruncated\":%s,"
		 "\"events\":%llu,\"merged\":[",
		 (unsigned long long)dropped, capped ? "true" : "false",
		 (unsigned long long)events);
	mg_puts(b, tmp);
	for (i = 0; i < nf; i++) {
		const struct mg_file *f = &files[i];

		mg_puts(b, i ? ",{\"file\":" : "{\"file\":");
		mg_putstr(b, (const unsigned char *)f->path, strlen(f->path));
		if (f->meta.has_rank) {
			snprintf(tmp, sizeof(tmp), ",\"rank\":%lld",
				 (long long)f->meta.rank);
			mg_puts(b, tmp);
		}
		mg_puts(b, ",\"host\":");
		mg_putstr(b, (const unsigned char *)f->meta.host,
			  strlen(f->meta.host));
		snprintf(tmp, sizeof(tmp), ",\"shiftMicroseconds\":");
		mg_puts(b, tmp);
		mg_put_us(b, f->shift_ns);
		snprintf(tmp, sizeof(tmp), ",\"truncated\":%s,\"pids\":{",
			 f->st == TRACE_TRUNCATED ? "true" : "false");
		mg_puts(b, tmp);
		for (j = 0; j < f->npids; j++) {
			snprintf(tmp, sizeof(tmp), "%s\"%lld\":%lld",
				 j ? "," : "", (long long)f->pids[j].from,
				 (long long)f->pids[j].to);
			mg_puts(b, tmp);
		}
		mg_puts(b, "}}");
	}
	mg_puts(b, "]}}\n");
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
	struct mg_file *files = NULL;
	struct mg_buf out = {0};
	struct mg_out o = {0};
	char tmp[4200];
	int64_t base = 0;
	int has_base = 0, c, ret = CLI_FAIL;
	uint64_t at, events = 0;
	size_t nf, i, len;

	util_set_cmd("merge");
	while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
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
	files = calloc(nf, sizeof(*files));
	if (!files) {
		util_err("out of memory");
		return CLI_FAIL;
	}
	for (i = 0; i < nf; i++) {
		struct stat sb;

		files[i].path = argv[optind + (int)i];
		/* Each input is read twice; a pipe would be empty the second
		 * time, and a FIFO would wait for another writer. */
		if (stat(files[i].path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
		    !S_ISDIR(sb.st_mode)) {
			util_err("%s: not a regular file (merge reads each "
				 "input twice; save it to a file first)",
				 files[i].path);
			goto out;
		}
		files[i].st = trace_read_file(files[i].path, mg_collect,
					      &files[i], &files[i].meta, &at);
		if (files[i].st == TRACE_BAD) {
			goto out;
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
		if (files[i].meta.has_base) {
			files[i].shift_ns = files[i].meta.base_ns - base;
		}
	}
	if (mg_assign_pids(files, nf) < 0) {
		goto out;
	}

	len = strlen(outpath);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", outpath, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		util_err("%s: name too long", outpath);
		goto out;
	}
	if (len > 3 && strcmp(outpath + len - 3, ".gz") == 0) {
		o.gz = gzopen(tmp, "wb6");
	} else {
		o.fp = fopen(tmp, "w");
	}
	if (!o.gz && !o.fp) {
		util_err("%s: %s", tmp, strerror(errno));
		goto out;
	}
	mg_puts(&out, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\"");
	if (has_base) {
		char b[64];

		snprintf(b, sizeof(b), ",\"baseTimeNanoseconds\":%lld",
			 (long long)base);
		mg_puts(&out, b);
	}
	mg_puts(&out, ",\"deviceProperties\":[],\n\"traceEvents\":[\n");
	mg_out_write(&o, &out);
	for (i = 0; i < nf; i++) {
		if (mg_copy_file(&files[i], i, &o, &out, &events) < 0) {
			goto out_unlink;
		}
		mg_add_names(&files[i], &out, &events);
	}
	mg_top_level(&out, files, nf, events);
	if (out.oom) {
		util_err("out of memory");
		goto out_unlink;
	}
	mg_out_write(&o, &out);
	errno = 0;
	if (o.gz) {
		int zs = gzclose(o.gz);

		if (zs != Z_OK) {
			mg_out_fail(&o, zs);
		}
		o.gz = NULL;
	} else {
		if (fclose(o.fp) != 0) {
			mg_out_fail(&o, Z_ERRNO);
		}
		o.fp = NULL;
	}
	if (o.err) {
		util_err("writing %s: %s", tmp, strerror(o.err));
		goto out_unlink;
	}
	if (rename(tmp, outpath) < 0) {
		util_err("%s: %s", outpath, strerror(errno));
		goto out_unlink;
	}
	errno = 0;
	printf("%s: %llu events from %zu traces\n", outpath,
	       (unsigned long long)events, nf);
	ret = util_stdout_done("the summary");
	goto out;
out_unlink:
	if (o.gz) {
		gzclose(o.gz);
	}
	if (o.fp) {
		fclose(o.fp);
	}
	unlink(tmp);
out:
	for (i = 0; files && i < nf; i++) {
		free(files[i].pids);
		free(files[i].tids);
		free(files[i].pid_map.e);
		free(files[i].tid_map.e);
	}
	free(files);
	free(out.p);
	return ret;
}
