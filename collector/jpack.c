/*
 * jpack.c - the journal's compact form of records.
 *
 * A drained record is 32 bytes in memory, but most of it repeats: a
 * thread's records follow each other by tens of nanoseconds, last as long,
 * and a loop's records carry the same name, kind and argument. The journal
 * (journal.c) therefore stores a batch of one thread's records as
 * differences, in variable-length integers (LEB128: 7 bits a byte, the
 * high bit set on every byte but the last). A record is:
 *
 *   u8      what differs from the record before it (JP_* bits)
 *   varint  t0 minus the previous t0, zigzag-coded (records of one thread
 *           come in the order they ended, so t0 may go back)
 *   varint  t1 (a span's duration; a counter's value; 0 for the rest)
 *   varint  name, varint group            when JP_NAME
 *   varint  kind, u8 cat, u8 flags        when JP_KIND
 *   varint  arg                           when JP_ARG
 *
 * The record before the first of a batch is all zeros, so every batch
 * decodes alone, and a torn or damaged batch costs only its own records.
 * A loop's span takes 3 to 5 bytes instead of 32.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

enum {
	JP_NAME = 1, /* name or group differ */
	JP_KIND = 2, /* kind, cat or flags differ */
	JP_ARG = 4,  /* arg differs */
	JP_ALL = 7,
};

static inline unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* Reads a varint at *p, before end. Returns 0, or -1 when it runs past
 * end or past 64 bits. */
static inline int get_varint(const unsigned char **p, const unsigned char *end,
			     uint64_t *v)
{
	const unsigned char *s = *p;
	uint64_t x = 0;

	for (unsigned shift = 0; s < end; shift += 7) {
		unsigned char b = *s++;
		if (shift == 63 && b > 1) {
			return -1;
		}
		x |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*p = s;
			*v = x;
			return 0;
		}
	}
	return -1;
}

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
}

/* The record's name and group as one word, and its kind, cat and flags as
 * another: compared whole, and kept whole as the previous record's (GCC
 * rebuilt the three small fields through the stack, and the load that read
 * them back waited on the stores: most of this function's time). */
_Static_assert(offsetof(struct coll_rec, group) ==
			       offsetof(struct coll_rec, name) + 4 &&
		       offsetof(struct coll_rec, cat) ==
			       offsetof(struct coll_rec, kind) + 2 &&
		       offsetof(struct coll_rec, flags) ==
			       offsetof(struct coll_rec, kind) + 3,
	       "name and group, and kind, cat and flags, are adjacent");

static inline uint64_t ids_of(const struct coll_rec *r)
{
	uint64_t v;

	memcpy(&v, &r->name, sizeof(v));
	return v;
}

static inline uint32_t kind_of(const struct coll_rec *r)
{
	uint32_t v;

	memcpy(&v, &r->kind, sizeof(v));
	return v;
}

size_t jpack_encode(const struct coll_rec *r, size_t n, unsigned char *out)
{
	uint64_t prev_t0 = 0, prev_ids = 0;
	uint32_t prev_kind = 0, prev_arg = 0;
	unsigned char *p = out;

	for (size_t i = 0; i < n; i++, r++) {
		uint64_t ids = ids_of(r);
		uint32_t kind = kind_of(r);
		unsigned what = (ids != prev_ids ? JP_NAME : 0) |
				(kind != prev_kind ? JP_KIND : 0) |
				(r->arg != prev_arg ? JP_ARG : 0);
		*p++ = (unsigned char)what;
		p = put_varint(p, zigzag(r->t0 - prev_t0));
		p = put_varint(p, r->t1);
		if (what & JP_NAME) {
			p = put_varint(p, r->name);
			p = put_varint(p, r->group);
		}
		if (what & JP_KIND) {
			p = put_varint(p, r->kind);
			*p++ = r->cat;
			*p++ = r->flags;
		}
		if (what & JP_ARG) {
			p = put_varint(p, r->arg);
		}
		prev_t0 = r->t0;
		prev_ids = ids;
		prev_kind = kind;
		prev_arg = r->arg;
	}
	return (size_t)(p - out);
}

/* A varint that must fit in 32 (or 16) bits. */
static int get_u32(const unsigned char **p, const unsigned char *end,
		   uint64_t max, uint64_t *v)
{
	return get_varint(p, end, v) < 0 || *v > max ? -1 : 0;
}

int jpack_decode(const unsigned char *in, size_t len, struct coll_rec *out,
		 size_t n)
{
	const unsigned char *p = in, *end = in + len;
	struct coll_rec prev = {0};

	for (size_t i = 0; i < n; i++) {
		uint64_t d, v, g;
		if (p == end || (*p & ~(unsigned)JP_ALL)) {
			return -EBADMSG;
		}
		unsigned what = *p++;
		struct coll_rec r = prev;
		if (get_varint(&p, end, &d) < 0 ||
		    get_varint(&p, end, &r.t1) < 0) {
			return -EBADMSG;
		}
		r.t0 = prev.t0 + unzigzag(d);
		if (what & JP_NAME) {
			if (get_u32(&p, end, UINT32_MAX, &v) < 0 ||
			    get_u32(&p, end, UINT32_MAX, &g) < 0) {
				return -EBADMSG;
			}
			r.name = (uint32_t)v;
			r.group = (uint32_t)g;
		}
		if (what & JP_KIND) {
			if (get_u32(&p, end, UINT16_MAX, &v) < 0 ||
			    end - p < 2) {
				return -EBADMSG;
			}
			r.kind = (uint16_t)v;
			r.cat = p[0];
			r.flags = p[1];
			p += 2;
		}
		if (what & JP_ARG) {
			if (get_u32(&p, end, UINT32_MAX, &v) < 0) {
				return -EBADMSG;
			}
			r.arg = (uint32_t)v;
		}
		out[i] = prev = r;
	}
	return p == end ? 0 : -EBADMSG;
}
