/*
 * report_html_out.c - writes the page of mxprof report --html: the head
 * and script of report_html_page.c around one JSON object, the data that
 * the script draws (in a <script type="application/json"> element, with
 * '<', '>' and '&' escaped so that no name can end it):
 *
 *   meta      command, host, start, rank (when the trace has one),
 *             duration_ns, processes, dropped, files, warnings, pairs
 *             (the trace's metadata)
 *   tables    the tables' JSON (report -f json), as it is
 *   flameGroups  the sections whose self time the flame graph holds
 *   names     the strings the steps and the flame graph name by index
 *   steps     [n, dur_ns, [[name, self_ns], ...]] per step, or null
 *   tracks    the label of each thread and stream, by number
 *   flame     {rows: [[track, self_ns, name...]]}, or null: the stacks,
 *             outermost first, then the slice's name
 *   gpuFlame  the same of GPU work by stream: the stack of its launch,
 *             the launch's name, its own name; null without GPU work
 *   timeline  {t0, width_ns, tracks: [[label, gpu, [busy % per column]]]}
 *
 * The data is aggregated (report_html.c): its size follows the distinct
 * stacks (at most HO_ROWS rows, the rest summed per thread), the steps and
 * the threads, not the events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_html.h"

/* The most flame rows written; lighter stacks are summed per thread. */
#define HO_ROWS 50000

/* The names of the page, by index. */
struct ho_names {
	struct strsum map; /* name -> index (sum), count 1 once given */
	size_t n;
};

/* Appends s as a JSON string that cannot end a script element. */
static void ho_str(struct sbuf *b, const char *s)
{
	sb_printf(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			sb_printf(b, "\\%c", *p);
		} else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
			sb_printf(b, "\\u%04x", *p);
		} else {
			sb_printf(b, "%c", *p);
		}
	}
	sb_printf(b, "\"");
}

/* Returns the index of name s in nm, appending it to the JSON array in
 * list when new, or -1 without memory. */
static long ho_name(struct ho_names *nm, struct sbuf *list, const char *s,
		    size_t len)
{
	struct strsum_ent *e = strsum_at(&nm->map, s, len);

	if (!e) {
		return -1;
	}
	if (!e->count) {
		e->count = 1;
		e->sum = (int64_t)nm->n++;
		if (e->sum) {
			sb_printf(list, ",");
		}
		ho_str(list, e->key);
	}
	return (long)e->sum;
}

/* Reads the command line of the file's first process_labels event (the
 * library writes the metadata events first) into out. */
static void ho_command(const char *path, char *out, size_t len)
{
	static const char key[] = "\"name\":\"process_labels\"";
	struct trace_in in;
	size_t have = 0, cap = 1 << 20;
	char *buf = malloc(cap + 1);
	ssize_t got;

	out[0] = 0;
	if (!buf || trace_in_open(&in, path) < 0) {
		free(buf);
		return;
	}
	while (have < cap &&
	       (got = trace_in_read(&in, (unsigned char *)buf + have,
				    cap - have)) > 0) {
		have += (size_t)got;
	}
	trace_in_close(&in);
	buf[have] = 0;
	char *p = strstr(buf, key);
	char *q = p ? strstr(p, "\"labels\":\"") : NULL;
	size_t k = 0;

	for (q = q ? q + 10 : NULL; q && *q && *q != '"' && k + 1 < len; q++) {
		if (*q == '\\' && q[1]) {
			q++;
		}
		out[k++] = *q;
	}
	out[k] = 0;
	free(buf);
}

/* The label of track t of h. */
static void ho_label(const struct html *h, const struct html_track *t,
		     char *buf, size_t len)
{
	const char *proc = "";

	for (size_t i = 0; i < h->nprocs; i++) {
		if (h->procs[i].file == t->file && h->procs[i].pid == t->pid) {
			proc = h->procs[i].name;
		}
	}
	snprintf(buf, len, "%s%s%s (pid %lld, tid %lld)", proc,
		 *proc && *t->name ? ": " : "", t->name, (long long)t->pid,
		 (long long)t->tid);
	if (h->file > 1) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " [file %llu]",
			 (unsigned long long)t->file);
	}
}

static void ho_meta(struct sbuf *b, const struct html *h,
		    const struct trace_meta *m, char *const *paths, size_t n)
{
	char cmd[TRACE_NAME_MAX], when[64] = "";
	size_t procs = h->nprocs;

	ho_command(paths[0], cmd, sizeof(cmd));
	if (h->has_base && h->has_span) {
		time_t s = (time_t)((h->base_ns + h->t0) / 1000000000);
		struct tm tm;

		if (gmtime_r(&s, &tm)) {
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC",
				 &tm);
		}
	}
	sb_printf(b, "\"meta\":{\"command\":");
	ho_str(b, cmd);
	sb_printf(b, ",\"host\":");
	ho_str(b, h->host);
	sb_printf(b, ",\"start\":");
	ho_str(b, when);
	if (m->has_rank) {
		sb_printf(b, ",\"rank\":%lld", (long long)m->rank);
	}
	sb_printf(b,
		  ",\"duration_ns\":%lld,\"processes\":%zu,\"dropped\":%llu,"
		  "\"unknown_frames\":%llu,\"files\":[",
		  (long long)(h->t1 - h->t0), procs,
		  (unsigned long long)h->dropped,
		  (unsigned long long)h->unknown_frames);
	for (size_t i = 0; i < n; i++) {
		sb_printf(b, "%s", i ? "," : "");
		ho_str(b, paths[i]);
	}
	sb_printf(b, "],\"warnings\":[");
	for (const char *p = h->warnings, *e; *p; p = e + 1) {
		char line[1024];

		e = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		sb_printf(b, "%s", p == h->warnings ? "" : ",");
		ho_str(b, line);
	}
	sb_printf(b, "],\"pairs\":[");
	for (size_t at = 0, k = 0; at < m->meta_len; k++) {
		const char *key = m->meta + at;
		const char *val = key + strlen(key) + 1;

		sb_printf(b, "%s[", k ? "," : "");
		ho_str(b, key);
		sb_printf(b, ",");
		ho_str(b, val);
		sb_printf(b, "]");
		at = (size_t)(val + strlen(val) + 1 - m->meta);
	}
	sb_printf(b, "]}");
}

static void ho_steps(struct sbuf *b, const struct html *h, struct ho_names *nm,
		     struct sbuf *names)
{
	if (!h->nsteps) {
		sb_printf(b, ",\"steps\":null");
		return;
	}
	sb_printf(b, ",\"steps_left_out\":%zu,\"steps\":[", h->steps_left_out);
	for (size_t i = 0; i < h->nsteps; i++) {
		const struct html_step *s = &h->steps[i];

		sb_printf(b, "%s[%lld,%lld,[", i ? "," : "", (long long)s->n,
			  (long long)s->dur);
		for (size_t k = 0; k < HTML_STEP_TOP && s->top[k].name; k++) {
			const char *name = strtab_get(s->top[k].name);

			sb_printf(b, "%s[%ld,%lld]", k ? "," : "",
				  ho_name(nm, names, name, strlen(name)),
				  (long long)s->top[k].self);
		}
		sb_printf(b, "]]");
	}
	sb_printf(b, "]");
}

static int ho_heavier(const void *pa, const void *pb)
{
	const struct strsum_ent *a = *(const struct strsum_ent *const *)pa;
	const struct strsum_ent *b = *(const struct strsum_ent *const *)pb;

	return a->sum < b->sum ? 1 : a->sum > b->sum ? -1 : 0;
}

/* One flame row: track, weight, the names of key's path after its
 * track number. */
static void ho_row(struct sbuf *b, struct ho_names *nm, struct sbuf *names,
		   const char *key, int64_t w, int first)
{
	const char *p = strchr(key, ';');

	sb_printf(b, "%s[%.*s,%lld", first ? "" : ",",
		  (int)(p ? p - key : (long)strlen(key)), key, (long long)w);
	while (p) {
		const char *e = strchr(p + 1, ';');
		size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);

		sb_printf(b, ",%ld", ho_name(nm, names, p + 1, len));
		p = e;
	}
	sb_printf(b, "]");
}

/* Writes ,"KEY":{"rows":[...]} from the paths of map (null when
 * present is 0): the HO_ROWS heaviest, the rest summed per track. Returns
 * 0 or -ENOMEM. */
static int ho_flame(struct sbuf *b, const struct html *h,
		    const struct strsum *map, const char *key, int present,
		    struct ho_names *nm, struct sbuf *names)
{
	const struct strsum_ent *e = map->map.slots;
	const struct strsum_ent **v;
	int64_t *rest = calloc(h->ntracks + 1, sizeof(*rest));
	size_t n = 0;

	if (!present) {
		sb_printf(b, ",\"%s\":null", key);
		free(rest);
		return 0;
	}
	v = malloc((map->map.used + 1) * sizeof(*v));
	if (!v || !rest) {
		free(v);
		free(rest);
		return -ENOMEM;
	}
	for (size_t i = 0; i < map->map.cap; i++) {
		if (e[i].key && e[i].sum > 0) {
			v[n++] = &e[i];
		}
	}
	qsort(v, n, sizeof(*v), ho_heavier);
	sb_printf(b, ",\"%s\":{\"rows\":[", key);
	for (size_t i = 0; i < n; i++) {
		if (i < HO_ROWS) {
			ho_row(b, nm, names, v[i]->key, v[i]->sum, i == 0);
			continue;
		}
		unsigned long t = strtoul(v[i]->key, NULL, 10);

		rest[t < h->ntracks ? t : h->ntracks] += v[i]->sum;
	}
	for (size_t t = 0; t < h->ntracks; t++) {
		if (rest[t]) {
			sb_printf(b, ",[%zu,%lld,%ld]", t, (long long)rest[t],
				  ho_name(nm, names, "(lighter stacks)", 16));
		}
	}
	sb_printf(b, "]}");
	free(v);
	free(rest);
	return 0;
}

/* Writes ,"tracks":[label...], by track number. */
static void ho_tracks(struct sbuf *b, const struct html *h)
{
	char label[TRACE_NAME_MAX];

	sb_printf(b, ",\"tracks\":[");
	for (size_t i = 0; i < h->ntracks; i++) {
		ho_label(h, &h->tracks[i], label, sizeof(label));
		sb_printf(b, "%s", i ? "," : "");
		ho_str(b, label);
	}
	sb_printf(b, "]");
}

static void ho_timeline(struct sbuf *b, const struct html *h)
{
	uint64_t w = 1;
	char label[TRACE_NAME_MAX];
	int first = 1;

	for (size_t i = 0; i < h->ntracks; i++) {
		if (h->tracks[i].used && h->tracks[i].width > w) {
			w = h->tracks[i].width;
		}
	}
	uint64_t c0 = h->t0 > 0 ? (uint64_t)h->t0 / w : 0;
	uint64_t c1 = h->t1 > 0 ? (uint64_t)(h->t1 - 1) / w : 0;

	sb_printf(b,
		  ",\"timeline\":{\"t0\":%llu,\"width_ns\":%llu,\"tracks\":[",
		  (unsigned long long)(c0 * w), (unsigned long long)w);
	for (size_t i = 0; i < h->ntracks; i++) {
		const struct html_track *t = &h->tracks[i];
		uint64_t r = w / t->width;

		if (!t->used) {
			continue;
		}
		ho_label(h, t, label, sizeof(label));
		sb_printf(b, "%s[", first ? "" : ",");
		ho_str(b, label);
		sb_printf(b, ",%d,[", t->gpu);
		first = 0;
		for (uint64_t c = c0; c <= c1 && c < HTML_BINS; c++) {
			double busy = 0;

			for (uint64_t k = c * r; k < (c + 1) * r; k++) {
				busy += k < HTML_BINS ? t->bins[k] : 0;
			}
			int pct = (int)(busy * 100.0 / (double)w + 0.5);

			sb_printf(b, "%s%d", c == c0 ? "" : ",",
				  pct > 100 ? 100 : pct);
		}
		sb_printf(b, "]]");
	}
	sb_printf(b, "]}");
}

/* Appends the tables' JSON, with "</" written "<\/". */
static void ho_tables(struct sbuf *b, const char *tables)
{
	sb_printf(b, ",\"tables\":");
	for (const char *p = tables; *p; p++) {
		if (p[0] == '<' && p[1] == '/') {
			sb_printf(b, "<\\");
		} else {
			sb_printf(b, "%c", *p);
		}
	}
}

/* Writes the page (report_html.h). */
int report_html_write(struct html *h, const char *tables,
		      const struct trace_meta *meta, char *const *paths,
		      size_t n, const char *outpath)
{
	struct sbuf b = {0}, names = {0};
	struct ho_names nm = {0};
	const struct strsum_ent *g = h->groups.map.slots;
	struct out *o = malloc(sizeof(*o));
	int ret = CLI_FAIL, first = 1;

	sb_printf(&b, "{");
	ho_meta(&b, h, meta, paths, n);
	ho_tables(&b, tables);
	sb_printf(&b, ",\"flameGroups\":[");
	for (size_t i = 0; i < h->groups.map.cap; i++) {
		if (g[i].key) {
			sb_printf(&b, "%s", first ? "" : ",");
			ho_str(&b, g[i].key);
			first = 0;
		}
	}
	sb_printf(&b, "]");
	ho_steps(&b, h, &nm, &names);
	ho_tracks(&b, h);
	if (ho_flame(&b, h, &h->flame, "flame", h->stack_events != 0, &nm,
		     &names) < 0 ||
	    ho_flame(&b, h, &h->gpu_flame, "gpuFlame", h->gpu_events != 0, &nm,
		     &names) < 0) {
		b.err = 1;
	}
	ho_timeline(&b, h);
	sb_printf(&b, ",\"names\":[%s]}", names.p ? names.p : "");
	if (!o || b.err || names.err) {
		util_err("out of memory while writing the page");
		goto out;
	}
	if (util_out_open(o, outpath, 0) < 0) {
		goto out;
	}
	out_str(o, report_html_page_head);
	out_write(o, b.p, b.n);
	out_str(o, report_html_page_tail);
	if (util_out_commit(o, outpath) < 0) {
		goto out;
	}
	ret = CLI_OK;
out:
	free(o);
	free(b.p);
	free(names.p);
	strsum_clear(&nm.map);
	return ret;
}
