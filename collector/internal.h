/*
 * internal.h - declarations shared by the files of collector/ only.
 * Other modules use collector.h.
 */
#ifndef MXPROF_COLLECTOR_INTERNAL_H
#define MXPROF_COLLECTOR_INTERNAL_H

#include <stdio.h>
#include <sys/types.h>

#include "collector.h"

/* clock.c */
void clock_init(void);
void clock_anchor(void);
uint64_t clock_to_ns(uint64_t ticks);
int64_t clock_base_utc_ns(void);
uint64_t clock_base_mono_ns(void);
const char *clock_source(void);

/* ring.c */
extern unsigned ring_capacity;
extern int ring_overflow;
extern volatile int ring_drain_alive;
typedef void (*ring_emit_fn)(void *ctx, int tid, const struct coll_rec *recs,
			     size_t n);
int ring_init(void);
uint64_t ring_collect(ring_emit_fn emit, void *ctx);
void ring_foreach_tid(void (*fn)(void *ctx, int tid, int dead), void *ctx);
void ring_before_fork(void);
void ring_after_fork_parent(void);
void ring_after_fork_child(void);

/* strtab.c */
void strtab_lock(void);
void strtab_unlock(void);

/* journal.c: the binary, append-only record of a run. */
enum journal_type {
	J_STR = 1,    /* u32 id, bytes                 */
	J_RECS = 2,   /* u32 tid, u32 n, n coll_rec    */
	J_THREAD = 3, /* u32 tid, bytes                */
	J_STATS = 4,  /* u64 dropped, u64 truncated    */
};
struct journal_header {
	char magic[8]; /* "MXPJRNL1" */
	uint32_t version;
	uint32_t pid;
	int64_t base_utc_ns;
	uint64_t reserved[4];
};
struct journal {
	int fd;
	dev_t dev; /* the file fd was opened on: a program may close fd */
	ino_t ino; /* and open something else under the same number   */
	int err;
	int truncated;	    /* timeline cap reached */
	uint32_t str_done;  /* ids below this are written */
	uint64_t bytes;	    /* estimated trace size */
	uint64_t max_bytes; /* 0 = no cap */
	size_t n;
	char path[4096];
	unsigned char buf[1 << 18];
};
int journal_open(struct journal *j, const char *path, int pid);
void journal_recs(struct journal *j, int tid, const struct coll_rec *r,
		  size_t n);
void journal_thread(struct journal *j, int tid, const char *name);
void journal_stats(struct journal *j, uint64_t dropped);
int journal_flush(struct journal *j);
void journal_close(struct journal *j, int unlink_file);
struct journal_ops {
	void (*str)(void *ctx, uint32_t id, const char *s, size_t len);
	void (*thread)(void *ctx, int tid, const char *name, size_t len);
	void (*recs)(void *ctx, int tid, const struct coll_rec *r, size_t n);
	void (*stats)(void *ctx, uint64_t dropped, uint64_t truncated);
	/* The file ends inside the entry at offset (a writer that died). */
	void (*torn)(void *ctx, uint64_t offset);
};
int journal_read(const char *path, const struct journal_ops *ops, void *ctx,
		 struct journal_header *hdr);

/* chrome.c */
struct chrome_meta {
	int pid;
	int rank; /* -1 when unknown */
	const char *process_name;
	const char *host;
	int64_t base_utc_ns;
	uint64_t dropped;
	int truncated;
	const char *clock;
};
int chrome_write_from_journal(const char *journal_path, const char *out_path,
			      const struct chrome_meta *meta);

/* agg.c: rows, for the table writer. */
enum agg_class { AGG_TIME = 0, AGG_COUNTER = 1, AGG_MARKER = 2 };
struct agg_row {
	uint32_t group;
	uint32_t name;
	uint8_t cls;	/* enum agg_class */
	uint8_t status; /* a source checked the status of this row */
	uint64_t count;
	uint64_t errors;
	int64_t total; /* ns, or the sum of counter values */
	int64_t min;
	int64_t max;
};
/* Returns the rows in a malloc'ed array (*n of them), or NULL. */
struct agg_row *agg_rows(const struct agg *a, size_t *n);
int agg_add_rec(struct agg *a, const struct coll_rec *r);

/* gpu.c: GPU records from an event source, linked at dump time. */
struct gpu_link {
	uint32_t corr; /* the API call's correlation id, 0 = none   */
	uint32_t ext;  /* the external id this span carries, 0 = none */
	int flow;      /* the call launched GPU work: write a flow   */
};
void gpu_source_tick(uint64_t now_ns);
void gpu_source_flush(void);
uint64_t gpu_dropped(void);
void gpu_drain(struct agg *a, void (*on_tid)(int tid));
int gpu_link_begin(void);
void gpu_link_claim(int tid, const struct coll_rec *r);
int gpu_link_span(int tid, const struct coll_rec *r, struct gpu_link *l);
void gpu_link_args(struct out *o, const struct gpu_link *l);
void gpu_write_slice_flow(struct out *o, int *first, int pid, int tid,
			  const struct coll_rec *r, const struct gpu_link *l);
void gpu_write_events(struct out *o, int *first, int host_pid);
void gpu_write_device_properties(struct out *o);
void gpu_link_end(void);
char *gpu_tables_append(char *text, const struct table_opts *o);
void gpu_after_fork_child(void);

/* table.c: a growing string, and MXNet's table cells, for the GPU tables. */
struct sbuf {
	char *p;
	size_t n, cap;
	int err;
};
void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void table_header(struct sbuf *b, const char *const *cols, int ncols);
void table_row_name(struct sbuf *b, const char *name);
double table_sort_value(int key, uint64_t count, int64_t total, int64_t min,
			int64_t max);

/* drain.c: the tables file of a dump (its name: paths_stats, collector.h) */
int drain_write_tables(const struct agg *a, uint64_t dropped, const char *path);

/* Set in a forked child whose drain thread is still to start (drain.c);
 * coll_drain_kick() starts it then, and does nothing otherwise. Call it
 * only where threads may start (not in a signal handler). */
extern int coll_drain_pending;
void coll_drain_kick(void);

#endif /* MXPROF_COLLECTOR_INTERNAL_H */
