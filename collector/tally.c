/*
 * tally.c - what a full ring could not keep, counted for the tables.
 *
 * When a thread's ring is full, its record is lost to the timeline, but
 * not to the tables: ring_push() adds it to the ring's tally, a small table
 * of count, total, min and max (in ticks for spans and frames) per
 * (group, name, kind), which the drain thread folds into the aggregate
 * statistics on its next pass. A step's record (of the group that
 * tally_step_group() names) has a row of its own, keyed by its number
 * too, as the tables keep each step's time. So the tables stay exact however
 * many slices the timeline drops; only a record that finds the tally's rows all
 * taken by other names, or that a signal handler makes while its thread
 * is in the middle of adding one, is lost to both (and counted in lost).
 *
 * Only the ring's thread writes the tally, under a sequence count: odd
 * while it writes. The drain thread copies the rows, and uses the copy
 * only when the count was even and unchanged across it; otherwise it tries
 * again on its next pass. It keeps what it has taken already in taken, so
 * that it folds in only what is new. Adding takes no lock, allocates
 * nothing and makes no system call, as every push.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "internal.h"

/* Set while this thread adds to its tally: a signal handler's record then
 * goes to lost instead. */
static __thread int busy __attribute__((tls_model("initial-exec")));

/* The steps' group (steps.c): its records are keyed by their arg too. */
static uint32_t step_group;

void tally_step_group(uint32_t group)
{
	__atomic_store_n(&step_group, group, __ATOMIC_RELAXED);
}

/* The arg that keys r's row with its group, name and kind: 0 but for a
 * step. */
static uint32_t key_arg(const struct coll_rec *r)
{
	uint32_t g = __atomic_load_n(&step_group, __ATOMIC_RELAXED);

	return g && r->group == g && r->kind == COLL_SPAN ? r->arg : 0;
}

static size_t slot_of(uint32_t group, uint32_t name, uint16_t kind,
		      uint32_t arg)
{
	uint64_t h = ((uint64_t)group << 32 | name) * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)arg * 0xff51afd7ed558ccdull;
	return (size_t)((h ^ kind) >> 40) & (TALLY_ROWS - 1);
}

static int64_t value_of(const struct coll_rec *r)
{
	switch (r->kind) {
	case COLL_SPAN:
	case COLL_FRAME:
		return r->t1 > r->t0 ? (int64_t)(r->t1 - r->t0) : 0;
	case COLL_COUNTER:
		return (int64_t)r->t1;
	default:
		return 0;
	}
}

/* The rows are read while the thread may write them, so every access is
 * atomic. Stores release and loads acquire (plain moves on x86-64): a
 * drain pass that sees a new value then also sees the odd sequence count
 * that came before it when it reads the count again. */
#define PUT(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define GET(p)	  __atomic_load_n(&(p), __ATOMIC_ACQUIRE)

/* Adds r to its row; the thread holds busy and the odd count. */
static void add_row(struct tally *t, const struct coll_rec *r)
{
	uint32_t arg = key_arg(r);
	size_t i = slot_of(r->group, r->name, r->kind, arg);
	size_t k = 0;
	for (; k < TALLY_ROWS; k++, i = (i + 1) & (TALLY_ROWS - 1)) {
		struct tally_row *w = &t->rows[i];
		if (!GET(w->count) ||
		    (GET(w->name) == r->name && GET(w->group) == r->group &&
		     GET(w->kind) == r->kind && GET(w->arg) == arg)) {
			break;
		}
	}
	if (k == TALLY_ROWS) {
		__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
		return;
	}
	struct tally_row *w = &t->rows[i];
	int64_t v = value_of(r);
	if (!GET(w->count)) {
		PUT(w->name, r->name);
		PUT(w->group, r->group);
		PUT(w->kind, r->kind);
		PUT(w->arg, arg);
		PUT(w->cat, r->cat);
		PUT(w->min, v);
		PUT(w->max, v);
	}
	PUT(w->flags, (uint8_t)(GET(w->flags) | r->flags));
	PUT(w->total, GET(w->total) + v);
	if (v < GET(w->min)) {
		PUT(w->min, v);
	}
	if (v > GET(w->max)) {
		PUT(w->max, v);
	}
	if (r->flags & COLL_FLAG_ERROR) {
		PUT(w->errors, GET(w->errors) + 1);
	}
	PUT(w->count, GET(w->count) + 1);
}

/*
 * Signal-safe; the ring's thread only. See the comment at the top.
 *
 * A signal handler that pushes while its thread is in here leaves its
 * record in pending (claiming the index with one instruction, so that a
 * handler interrupting it takes the next one); handlers run to their end
 * before the code they interrupted goes on, so every pending record the
 * thread sees is whole. The thread adds them before it lets go, and looks
 * once more after letting go, for a handler that came in between.
 */
void tally_add(struct tally *t, const struct coll_rec *r)
{
	if (busy) {
		uint64_t i =
			__atomic_fetch_add(&t->npending, 1, __ATOMIC_RELAXED);
		if (i < TALLY_PENDING) {
			t->pending[i] = *r;
		} else {
			__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	do {
		busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		uint64_t seq = GET(t->seq);
		PUT(t->seq, seq + 1);
		if (r) {
			add_row(t, r);
			r = NULL;
		}
		uint64_t done = 0;
		for (;;) {
			uint64_t n =
				__atomic_load_n(&t->npending, __ATOMIC_RELAXED);
			if (done < n) {
				if (done < TALLY_PENDING) {
					add_row(t, &t->pending[done]);
				}
				done++;
			} else if (__atomic_compare_exchange_n(
					   &t->npending, &n, 0, 0,
					   __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED)) {
				break;
			}
		}
		__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		busy = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} while (__atomic_load_n(&t->npending, __ATOMIC_RELAXED));
}

/* The drain thread's: a copy of the rows, so that a pass never hands on a
 * row the thread was writing. */
static struct tally_row copy[TALLY_ROWS];

int tally_take(struct tally *t, tally_fn fn, void *ctx)
{
	uint64_t s1 = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);

	if (s1 == t->taken_seq) {
		return 0;
	}
	if (s1 & 1u) {
		return -EAGAIN;
	}
	for (size_t i = 0; i < TALLY_ROWS; i++) {
		struct tally_row *w = &t->rows[i];
		copy[i] = (struct tally_row){.name = GET(w->name),
					     .group = GET(w->group),
					     .kind = GET(w->kind),
					     .arg = GET(w->arg),
					     .cat = GET(w->cat),
					     .flags = GET(w->flags),
					     .count = GET(w->count),
					     .total = GET(w->total),
					     .min = GET(w->min),
					     .max = GET(w->max),
					     .errors = GET(w->errors)};
	}
	if (__atomic_load_n(&t->seq, __ATOMIC_RELAXED) != s1) {
		return -EAGAIN;
	}
	for (size_t i = 0; i < TALLY_ROWS; i++) {
		struct tally_row *c = &copy[i], *was = &t->taken[i];
		if (c->count == was->count) {
			continue;
		}
		struct tally_row d = *c;
		d.count -= was->count;
		d.total -= was->total;
		d.errors -= was->errors;
		fn(ctx, &d);
		*was = *c;
	}
	t->taken_seq = s1;
	return 0;
}

void tally_clear(struct tally *t)
{
	memset(t, 0, sizeof(*t));
}

/*
 * Orphans: records of a thread without a ring. A thread has none while it
 * gets one (a signal handler's push then finds it half made), after its
 * ring was given back at its exit (destructors and handlers still run),
 * or when no memory could be had. Their records cannot reach the
 * timeline, but they reach the tables through this queue: a bounded
 * queue of cells, each with a sequence count that says whose turn it is
 * (the producer of position p waits for p, the consumer for p + 1). Any
 * thread and any signal handler may add: a position is claimed by one
 * compare-and-swap, and a handler that interrupts an add claims the next
 * one; the drain thread stops at a cell not yet written and takes it on
 * a later pass. The counts are stored minus the cell's index, so that
 * the zeroed queue is the empty one.
 */
#define ORPHAN_CELLS 1024

static struct orphan_cell {
	uint64_t seq;
	struct coll_rec rec;
} orphan_cells[ORPHAN_CELLS];
static uint64_t orphan_in, orphan_out, orphan_lost;

static uint64_t cell_seq(size_t i)
{
	return __atomic_load_n(&orphan_cells[i].seq, __ATOMIC_ACQUIRE) + i;
}

int tally_orphan(const struct coll_rec *r)
{
	uint64_t pos = __atomic_load_n(&orphan_in, __ATOMIC_RELAXED);
	size_t i;

	for (;;) {
		i = (size_t)(pos & (ORPHAN_CELLS - 1));
		int64_t dif = (int64_t)(cell_seq(i) - pos);
		if (dif == 0) {
			if (__atomic_compare_exchange_n(
				    &orphan_in, &pos, pos + 1, 1,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				break;
			}
		} else if (dif < 0) {
			__atomic_fetch_add(&orphan_lost, 1, __ATOMIC_RELAXED);
			return -ENOSPC;
		} else {
			pos = __atomic_load_n(&orphan_in, __ATOMIC_RELAXED);
		}
	}
	orphan_cells[i].rec = *r;
	__atomic_store_n(&orphan_cells[i].seq, pos + 1 - i, __ATOMIC_RELEASE);
	return 0;
}

void tally_orphans_take(tally_fn fn, void *ctx)
{
	for (;;) {
		size_t i = (size_t)(orphan_out & (ORPHAN_CELLS - 1));
		if (cell_seq(i) != orphan_out + 1) {
			return;
		}
		const struct coll_rec *r = &orphan_cells[i].rec;
		int64_t v = value_of(r);
		struct tally_row row = {
			.name = r->name,
			.group = r->group,
			.kind = r->kind,
			.cat = r->cat,
			.flags = r->flags,
			.count = 1,
			.total = v,
			.min = v,
			.max = v,
			.errors = (r->flags & COLL_FLAG_ERROR) != 0};
		__atomic_store_n(&orphan_cells[i].seq,
				 orphan_out + ORPHAN_CELLS - i,
				 __ATOMIC_RELEASE);
		orphan_out++;
		fn(ctx, &row);
	}
}

uint64_t tally_orphans_lost(void)
{
	return __atomic_load_n(&orphan_lost, __ATOMIC_RELAXED);
}

void tally_orphans_reset(void)
{
	memset(orphan_cells, 0, sizeof(orphan_cells));
	orphan_in = orphan_out = orphan_lost = 0;
}
