/*
 * pyframes_describe.c - a captured Python frame's function, file and line.
 *
 * Names and lines are read from the code object: the qualified name
 * (co_qualname, 3.11+) or co_name, co_filename, and the line of the
 * instruction's offset from the version's line table (co_lnotab,
 * co_linetable, or the 3.11+ location table) counted from co_firstlineno.
 * Every pointer is checked first as far as is cheap (pyframes.h), so that
 * a stale code pointer gives "?" rather than a crash. No lock, no
 * allocation, no stdio: async-signal-safe.
 */
#include <stdint.h>
#include <string.h>

#include "pyframes.h"
#include "stack.h"

/* A str object's characters, as read from a compact str. */
struct py_str {
	uintptr_t data;
	size_t len;
	unsigned kind; /* bytes per character: 1, 2 or 4 */
};

/* Reads the str at o. Returns 0, or -1 when o is not a compact str. */
static int str_read(uintptr_t o, struct py_str *s)
{
	const struct py_layout *l = &pyframes_found.l;
	uint32_t state;
	intptr_t len;

	if (!ptr_ok(o) || rd_ptr(o + PY_OB_TYPE) != pyframes_found.str_type) {
		return -1;
	}
	len = (intptr_t)rd_ptr(o + PY_STR_LENGTH);
	state = (uint32_t)rd_i32(o + PY_STR_STATE);
	if (len < 0 || len > PY_STR_MAX || !(state & PY_STATE_COMPACT) ||
	    (state & l->str_ready) != l->str_ready) {
		return -1;
	}
	s->len = (size_t)len;
	s->kind = PY_STATE_KIND(state);
	if (state & PY_STATE_ASCII) {
		if (s->kind != 1) {
			return -1;
		}
		s->data = o + (uintptr_t)l->str_ascii_data;
		return 0;
	}
	if (s->kind != 1 && s->kind != 2 && s->kind != 4) {
		return -1;
	}
	s->data = o + (uintptr_t)l->str_compact_data;
	return 0;
}

static uint32_t str_at(const struct py_str *s, size_t i)
{
	uint16_t u16;
	uint32_t u32;

	switch (s->kind) {
	case 1:
		return rd_u8(s->data + i);
	case 2:
		memcpy(&u16, (const void *)(s->data + 2 * i), sizeof(u16));
		return u16;
	default:
		memcpy(&u32, (const void *)(s->data + 4 * i), sizeof(u32));
		return u32;
	}
}

/* A NUL-terminated output buffer that is cut at a whole character. */
struct py_out {
	char *p;
	size_t len, cap;
	int full;
};

static void out_init(struct py_out *o, char *p, size_t cap)
{
	o->p = p;
	o->len = 0;
	o->cap = cap;
	o->full = cap == 0;
	if (cap) {
		p[0] = '\0';
	}
}

static void out_bytes(struct py_out *o, const char *b, size_t n)
{
	if (o->full || o->len + n >= o->cap) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->len, b, n);
	o->len += n;
	o->p[o->len] = '\0';
}

/* Appends c as UTF-8; a surrogate or an out-of-range value as '?'. */
static void out_char(struct py_out *o, uint32_t c)
{
	char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		if (c >= 0xd800 && c < 0xe000) {
			b[0] = '?';
			n = 1;
		} else {
			b[0] = (char)(0xe0 | (c >> 12));
			b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f));
			n = 3;
		}
	} else if (c < 0x110000) {
		b[0] = (char)(0xf0 | (c >> 18));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	} else {
		b[0] = '?';
		n = 1;
	}
	out_bytes(o, b, n);
}

static void out_str(struct py_out *o, const struct py_str *s, size_t from)
{
	for (size_t i = from; i < s->len && !o->full; i++) {
		out_char(o, str_at(s, i));
	}
}

static void out_int(struct py_out *o, int v)
{
	char b[12];
	size_t n = sizeof(b);
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;

	do {
		b[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0) {
		b[--n] = '-';
	}
	out_bytes(o, b + n, sizeof(b) - n);
}

/* The bytes of the bytes object at o. Returns 0, or -1. */
static int bytes_read(uintptr_t o, const uint8_t **p, size_t *len)
{
	intptr_t n;

	if (!ptr_ok(o) || rd_ptr(o + PY_OB_TYPE) != pyframes_found.bytes_type) {
		return -1;
	}
	n = (intptr_t)rd_ptr(o + PY_OB_SIZE);
	if (n < 0 || n > PY_TABLE_MAX) {
		return -1;
	}
	*p = (const uint8_t *)(o + PY_BYTES_DATA);
	*len = (size_t)n;
	return 0;
}

/* 3.9 co_lnotab: pairs of (address delta, signed line delta). */
static int line_lnotab(const uint8_t *p, size_t n, int line, uint32_t off)
{
	uint32_t addr = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		addr += p[i];
		if (addr > off) {
			break;
		}
		line += (int8_t)p[i + 1];
	}
	return line;
}

/* 3.10 co_linetable: each pair (length, signed line delta) ends a range
 * of that many bytes; a delta of -128 means the range has no line. */
static int line_linetable(const uint8_t *p, size_t n, int line, uint32_t off)
{
	uint32_t start, end = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		int8_t d = (int8_t)p[i + 1];

		start = end;
		end += p[i];
		if (d != -128) {
			line += d;
		}
		if (start <= off && off < end) {
			return d == -128 ? -1 : line;
		}
	}
	return -1;
}

/* A location table's signed varint at p[*i], 6 bits a byte, low first,
 * bit 6 set while more follow; the sign is the lowest bit. */
static int loc_svarint(const uint8_t *p, size_t n, size_t *i)
{
	uint32_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 30) {
			return 0;
		}
		b = p[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/*
 * 3.11+ location table: each entry starts with a byte whose top bit is
 * set; bits 3-6 are its form, bits 0-2 its length in code units less one.
 * Form 15 has no location, 14 (long) and 13 (no columns) give a signed
 * varint line delta, 10 to 12 a delta of 0 to 2, the short forms 0 to 9
 * none; column bytes follow, which the line does not need.
 */
static int line_loctable(const uint8_t *p, size_t n, int line, uint32_t off)
{
	uint32_t unit = off / 2, addr = 0;
	size_t i = 0;

	while (i < n) {
		uint8_t b = p[i];
		unsigned form = (b >> 3) & 15, len = (b & 7) + 1u;
		size_t j = i + 1;

		if (!(b & 0x80)) {
			return -1;
		}
		if (form == 13 || form == 14) {
			line += loc_svarint(p, n, &j);
		} else if (form >= 10 && form <= 12) {
			line += (int)form - 10;
		}
		if (addr <= unit && unit < addr + len) {
			return form == 15 ? -1 : line;
		}
		addr += len;
		for (i++; i < n && !(p[i] & 0x80); i++) {
		}
	}
	return -1;
}

/* The line of offset off in code, or -1 when it has none (or the table
 * cannot be read). */
static int code_line(uintptr_t code, uint32_t off)
{
	const struct py_layout *l = &pyframes_found.l;
	int first = rd_i32(code + l->co_firstlineno);
	const uint8_t *p;
	size_t n;

	if (bytes_read(rd_ptr(code + l->co_table), &p, &n) < 0) {
		return -1;
	}
	switch (l->lines) {
	case PY_LNOTAB:
		return line_lnotab(p, n, first, off);
	case PY_LINETABLE:
		return line_linetable(p, n, first, off);
	default:
		return line_loctable(p, n, first, off);
	}
}

static void put_unknown(char *s, size_t len)
{
	if (len >= 2) {
		memcpy(s, "?", 2);
	} else if (len == 1) {
		s[0] = '\0';
	}
}

int py_frame_describe(const struct py_frame *f, char *name, size_t nlen,
		      char *file, size_t flen)
{
	const struct py_layout *l = &pyframes_found.l;
	struct py_str qn, fn;
	struct py_out o;
	size_t base = 0;
	int line;

	if (!__atomic_load_n(&pyframes_ready, __ATOMIC_ACQUIRE) || !f ||
	    !ptr_ok(f->code) ||
	    rd_ptr(f->code + PY_OB_TYPE) != pyframes_found.code_type ||
	    str_read(rd_ptr(f->code + (l->co_qualname >= 0 ? l->co_qualname
							   : l->co_name)),
		     &qn) < 0 ||
	    str_read(rd_ptr(f->code + l->co_filename), &fn) < 0) {
		put_unknown(name, nlen);
		put_unknown(file, flen);
		return -1;
	}
	line = code_line(f->code, f->offset);
	for (size_t i = 0; i < fn.len; i++) {
		if (str_at(&fn, i) == '/') {
			base = i + 1;
		}
	}
	out_init(&o, name, nlen);
	out_str(&o, &qn, 0);
	out_bytes(&o, " (", 2);
	out_str(&o, &fn, base);
	if (line >= 0) {
		out_bytes(&o, ":", 1);
		out_int(&o, line);
	}
	out_bytes(&o, ")", 1);
	out_init(&o, file, flen);
	out_str(&o, &fn, 0);
	return 0;
}
