/*
 * merge_index.c - what the first pass of mxprof merge learns of each file:
 * its pids and threads, the pid each becomes in the merged trace, and the
 * process_name and thread_name events a truncated file lacks.
 *
 * A trace can have many processes and threads (a merge of merges), so the
 * lookups go through an open-addressing hash map from a pair of integers to
 * a position in the file's array: linear time in the number of events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One slot of a map. */
struct merge_ent {
	int64_t a, b;
	size_t pos; /* the position + 1; 0 marks an empty slot */
};

static uint64_t mi_hash(int64_t a, int64_t b)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;

	h = (h ^ (h >> 29) ^ (uint64_t)b) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static int mi_empty(const void *slot)
{
	return ((const struct merge_ent *)slot)->pos == 0;
}

static uint64_t mi_slot_hash(const void *slot, const void *ctx)
{
	const struct merge_ent *e = slot;

	(void)ctx;
	return mi_hash(e->a, e->b);
}

/* key: a struct merge_ent with a and b set. */
static int mi_match(const void *slot, const void *key)
{
	const struct merge_ent *e = slot, *k = key;

	return e->a == k->a && e->b == k->b;
}

static const struct hmap_ops mi_ops = {
	.size = sizeof(struct merge_ent),
	.empty = mi_empty,
	.hash = mi_slot_hash,
};

/* Returns the slot of (a, b) in m: its entry, or the empty slot where it
 * belongs. m has slots and is never full. */
static struct merge_ent *mi_map_slot(const struct merge_map *m, int64_t a,
				     int64_t b)
{
	struct merge_ent k = {a, b, 0};

	return hmap_find(&m->map, &mi_ops, mi_hash(a, b), mi_match, &k);
}

/* Returns the position stored for (a, b), or -1 when there is none. */
static ssize_t mi_map_find(const struct merge_map *m, int64_t a, int64_t b)
{
	const struct merge_ent *e;

	if (!m->map.cap) {
		return -1;
	}
	e = mi_map_slot(m, a, b);
	return e->pos ? (ssize_t)(e->pos - 1) : -1;
}

/* Stores pos for (a, b), which m does not hold. Returns 0 or -ENOMEM
 * (printed). */
static int mi_map_add(struct merge_map *m, int64_t a, int64_t b, size_t pos)
{
	if (hmap_reserve(&m->map, &mi_ops, 64, 1, 2, NULL) < 0) {
		util_err("out of memory");
		return -ENOMEM;
	}
	*mi_map_slot(m, a, b) = (struct merge_ent){a, b, pos + 1};
	m->map.used++;
	return 0;
}

static int mi_grow(void **p, size_t *cap, size_t n, size_t size)
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

/* Notes the pid and thread of ev in f (a struct merge_file). Returns 0 or
 * -ENOMEM (printed), which stops the read. */
int merge_index_event(const struct trace_event *ev, void *file)
{
	struct merge_file *f = file;
	int pname, tname;
	ssize_t found;
	size_t i;

	if (!ev->has_pid) {
		return 0;
	}
	pname = ev->ph == 'M' && strcmp(ev->name, "process_name") == 0;
	tname = ev->ph == 'M' && strcmp(ev->name, "thread_name") == 0;
	found = mi_map_find(&f->pid_map, ev->pid, 0);
	i = found < 0 ? f->npids : (size_t)found;
	if (i == f->npids) {
		if (mi_grow((void **)&f->pids, &f->cap, f->npids,
			    sizeof(*f->pids)) < 0 ||
		    mi_map_add(&f->pid_map, ev->pid, 0, i) < 0) {
			return -ENOMEM;
		}
		f->pids[i].from = f->pids[i].to = ev->pid;
		f->pids[i].named = 0;
		f->pids[i].labelled = 0;
		f->npids++;
	}
	f->pids[i].named |= pname;
	f->pids[i].labelled |=
		ev->ph == 'M' && strcmp(ev->name, "process_labels") == 0;
	if (ev->ph == 'M' && !tname) {
		return 0;
	}
	found = mi_map_find(&f->tid_map, ev->pid, ev->tid);
	i = found < 0 ? f->ntids : (size_t)found;
	if (i == f->ntids) {
		if (mi_grow((void **)&f->tids, &f->tcap, f->ntids,
			    sizeof(*f->tids)) < 0 ||
		    mi_map_add(&f->tid_map, ev->pid, ev->tid, i) < 0) {
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

/* Returns the pid that pid of f becomes, or pid when f has no such pid.
 * This function can't fail. */
int64_t merge_index_pid(const struct merge_file *f, int64_t pid)
{
	ssize_t i = mi_map_find(&f->pid_map, pid, 0);

	return i >= 0 ? f->pids[i].to : pid;
}

/* Returns the first number from *next on (1 after INT64_MAX) that no
 * file uses (taken), and moves *next past it. */
static int64_t mi_fresh_pid(const struct merge_map *taken, int64_t *next)
{
	for (;;) {
		int64_t v = *next;

		*next = v == INT64_MAX ? 1 : v + 1;
		if (mi_map_find(taken, v, 0) < 0) {
			return v;
		}
	}
}

/* Gives every pid that an earlier file uses a fresh number: positive,
 * past the largest pid of any file when there is room, else the first
 * that no file uses. Returns 0 or -ENOMEM (printed). */
int merge_index_assign_pids(struct merge_file *files, size_t nf)
{
	struct merge_map used = {0};  /* (to, 0) of the files before i */
	struct merge_map taken = {0}; /* every pid of every file, and
				       * every fresh one */
	int64_t next, max = 0;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < nf && ret == 0; i++) {
		for (j = 0; j < files[i].npids && ret == 0; j++) {
			int64_t p = files[i].pids[j].from;

			max = p > max ? p : max;
			if (mi_map_find(&taken, p, 0) < 0) {
				ret = mi_map_add(&taken, p, 0, j);
			}
		}
	}
	next = max == INT64_MAX ? 1 : max + 1;
	for (i = 0; i < nf && ret == 0; i++) {
		for (j = 0; j < files[i].npids && ret == 0; j++) {
			if (i > 0 &&
			    mi_map_find(&used, files[i].pids[j].from, 0) >= 0) {
				int64_t v = mi_fresh_pid(&taken, &next);

				files[i].pids[j].to = v;
				ret = mi_map_add(&taken, v, 0, j);
			}
		}
		for (j = 0; j < files[i].npids && ret == 0; j++) {
			if (mi_map_find(&used, files[i].pids[j].to, 0) < 0) {
				ret = mi_map_add(&used, files[i].pids[j].to, 0,
						 j);
			}
		}
	}
	hmap_free(&used.map);
	hmap_free(&taken.map);
	return ret;
}

/* Returns non-zero when the comma-separated list labels holds item. */
static int mi_has_label(const char *labels, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = labels; p && *p;) {
		while (*p == ' ') {
			p++;
		}
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && memcmp(p, item, n) == 0) {
			return 1;
		}
		p = end ? end + 1 : p + len;
	}
	return 0;
}

/* Appends label to buf unless labels or buf holds it already. */
static void mi_add_label(char *buf, size_t len, const char *labels,
			 const char *label)
{
	size_t used = strlen(buf);

	if (!label[0] || mi_has_label(labels, label) ||
	    mi_has_label(buf, label)) {
		return;
	}
	int sep = used || (labels && labels[0]);
	size_t need = strlen(label) + (sep ? 2 : 0);
	if (used + need < len) {
		snprintf(buf + used, len - used, "%s%s", sep ? ", " : "",
			 label);
	}
}

void merge_index_labels(const struct merge_file *f, int64_t from,
			const char *labels, char *buf, size_t len)
{
	char item[TRACE_SHORT_MAX + 32];
	int64_t to = merge_index_pid(f, from);

	buf[0] = 0;
	if (f->meta.has_rank) {
		snprintf(item, sizeof(item), "rank %lld",
			 (long long)f->meta.rank);
		mi_add_label(buf, len, labels, item);
	}
	mi_add_label(buf, len, labels, f->meta.host);
	if (to != from) {
		snprintf(item, sizeof(item), "was pid %lld", (long long)from);
		mi_add_label(buf, len, labels, item);
	}
}

/* Writes a process_name event for every pid of f that has none (the
 * file's name, as the program's is unknown), a process_labels event for
 * every pid that has none, and a thread_name event for every unnamed
 * thread, each after ",\n" unless it is the first event (*events counts
 * them). Write errors stay in o. */
void merge_index_write_names(const struct merge_file *f, struct out *o,
			     uint64_t *events)
{
	const char *base = strrchr(f->path, '/');
	char tmp[TRACE_SHORT_MAX * 2 + 256];
	size_t i;

	base = base ? base + 1 : f->path;
	for (i = 0; i < f->npids; i++) {
		if (!f->pids[i].named) {
			if ((*events)++) {
				out_str(o, ",\n");
			}
			out_str(o, "{\"ph\":\"M\",\"name\":\"process_name\","
				   "\"pid\":");
			out_i64(o, f->pids[i].to);
			out_str(o, ",\"tid\":0,\"args\":{\"name\":");
			out_json_str(o, base);
			out_str(o, "}}");
		}
		merge_index_labels(f, f->pids[i].from, NULL, tmp, sizeof(tmp));
		if (f->pids[i].labelled || !tmp[0]) {
			continue;
		}
		if ((*events)++) {
			out_str(o, ",\n");
		}
		out_str(o, "{\"ph\":\"M\",\"name\":\"process_labels\","
			   "\"pid\":");
		out_i64(o, f->pids[i].to);
		out_str(o, ",\"tid\":0,\"args\":{\"labels\":");
		out_json_str(o, tmp);
		out_str(o, "}}");
	}
	for (i = 0; i < f->ntids; i++) {
		if (f->tids[i].named) {
			continue;
		}
		if ((*events)++) {
			out_str(o, ",\n");
		}
		out_str(o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
		out_i64(o, merge_index_pid(f, f->tids[i].pid));
		out_str(o, ",\"tid\":");
		out_i64(o, f->tids[i].tid);
		out_str(o, ",\"args\":{\"name\":\"thread ");
		out_i64(o, f->tids[i].tid);
		out_str(o, "\"}}");
	}
}

/* Frees what the index of f holds. This function can't fail. */
void merge_index_free(struct merge_file *f)
{
	free(f->pids);
	free(f->tids);
	hmap_free(&f->pid_map.map);
	hmap_free(&f->tid_map.map);
}
