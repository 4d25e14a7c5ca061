/*
 * tally.c - what a full ring could not keep, counted for the tables.
 *
 * When a thread's ring is full, its record is lost to the timeline, but
 * not to the tables: ring_push() adds it to the ring's tally, a small table
 * of count, total, min and max (in ticks for spans and frames) per
 * (group, name, kind), which the drain thread folds into the aggregate
 * statistics on its next pass. So the tables stay exact however many
 * slices the timeline drops; only a record that finds the tally's rows all
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

static size_t slot_of(uint32_t group, uint32_t name, uint16_t kind)
{
	uint64_t h = ((uint64_t)group << 32 | name) * 0x9e3779b97f4a7c15ull;

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

/* Signal-safe; the ring's thread only. See the comment at the top. */
void tally_add(struct tally *t, const struct coll_rec *r)
{
	if (busy) {
		__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
		return;
	}
	busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t seq = GET(t->seq);
	PUT(t->seq, seq + 1);

	size_t i = slot_of(r->group, r->name, r->kind);
	size_t k = 0;
	for (; k < TALLY_ROWS; k++, i = (i + 1) & (TALLY_ROWS - 1)) {
		struct tally_row *w = &t->rows[i];
		if (!GET(w->count) ||
		    (GET(w->name) == r->name && GET(w->group) == r->group &&
		     GET(w->kind) == r->kind)) {
			break;
		}
	}
	if (k == TALLY_ROWS) {
		__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
	} else {
		struct tally_row *w = &t->rows[i];
		int64_t v = value_of(r);
		if (!GET(w->count)) {
			PUT(w->name, r->name);
			PUT(w->group, r->group);
			PUT(w->kind, r->kind);
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
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	busy = 0;
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
