/*
 * stack_dwarf.c - the rules of one code address from its object's DWARF
 * call frame information (.eh_frame, found through .eh_frame_hdr's search
 * table), for the stack walk (stack_unwind.c).
 *
 * stack_dwarf_rule() finds the address's FDE by binary search, reads its
 * CIE, runs the CIE's and the FDE's instructions up to the address, and
 * keeps what the walk tracks: the CFA (from %rsp, %rbp or %rbx plus an
 * offset, or a signal frame's saved %rsp), and where the return address,
 * %rbp, %rbx and %rsp of the caller are. The DWARF expressions it reads
 * are only glibc's signal frame's (%rsp plus an offset, dereferenced for
 * the CFA); any other expression, or a rule that keeps a tracked register
 * in another register, makes the address one without a rule. Reads memory
 * only: no lock, no allocation, no system call.
 */
#include <stdint.h>
#include <string.h>

#include "stack.h"

#if defined(__x86_64__)

/* ---- reading DWARF ---------------------------------------------------- */

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;
		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
		}
		shift += 7;
		if (!(b & 0x80)) {
			break;
		}
	}
	return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0; /* unsigned: shifts into the sign bit are defined */
	unsigned shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
		}
		shift += 7;
		if (!(b & 0x80)) {
			break;
		}
	}
	if (shift < 64 && (b & 0x40)) {
		v |= ~(uint64_t)0 << shift;
	}
	return (int64_t)v;
}

/* Reads a pointer in encoding enc (DW_EH_PE_*) at *p; pc-relative ones
 * relative to where they lie. Returns 0 and leaves *ok at 0 for an
 * encoding it does not read. */
static uintptr_t read_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc,
			  int *ok)
{
	const uint8_t *at = *p;
	uintptr_t v;

	if (enc == 0xff) {
		return 0; /* DW_EH_PE_omit */
	}
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		if (end - at < 8) {
			*ok = 0;
			return 0;
		}
		memcpy(&v, at, 8);
		*p += 8;
		break;
	case 0x03: { /* udata4 */
		uint32_t u;
		if (end - at < 4) {
			*ok = 0;
			return 0;
		}
		memcpy(&u, at, 4);
		v = u;
		*p += 4;
		break;
	}
	case 0x0b: { /* sdata4 */
		int32_t s;
		if (end - at < 4) {
			*ok = 0;
			return 0;
		}
		memcpy(&s, at, 4);
		v = (uintptr_t)(intptr_t)s;
		*p += 4;
		break;
	}
	case 0x02: { /* udata2 */
		uint16_t u;
		if (end - at < 2) {
			*ok = 0;
			return 0;
		}
		memcpy(&u, at, 2);
		v = u;
		*p += 2;
		break;
	}
	case 0x0a: { /* sdata2 */
		int16_t s;
		if (end - at < 2) {
			*ok = 0;
			return 0;
		}
		memcpy(&s, at, 2);
		v = (uintptr_t)(intptr_t)s;
		*p += 2;
		break;
	}
	case 0x01: /* uleb128 */
		v = (uintptr_t)uleb(p, end);
		break;
	case 0x09: /* sleb128 */
		v = (uintptr_t)sleb(p, end);
		break;
	default:
		*ok = 0;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10: /* pcrel */
		v += (uintptr_t)at;
		break;
	default:
		*ok = 0;
		return 0;
	}
	return v;
}

/* ---- the rules of one address ----------------------------------------- */

/* DWARF register numbers. */
#define R_RBX 3
#define R_RBP 6
#define R_RSP 7

struct reg_rule {
	uint8_t where;
	int32_t off;
};

struct cfa_row {
	uint8_t cfa_kind;
	int32_t cfa_off;
	struct reg_rule ra, rbp, rbx, rsp;
};

/* The rule of DWARF register reg in row r, NULL for one not tracked. */
static struct reg_rule *row_reg(struct cfa_row *r, uint64_t reg,
				uint64_t ra_reg)
{
	if (reg == ra_reg) {
		return &r->ra;
	}
	switch (reg) {
	case R_RBP:
		return &r->rbp;
	case R_RBX:
		return &r->rbx;
	case R_RSP:
		return &r->rsp;
	default:
		return NULL;
	}
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t signal;
	uint8_t has_z;
	const uint8_t *ins, *ins_end;
};

/* Parses the CIE at p. Returns 0, or -1 when it cannot. */
static int cie_parse(const uint8_t *p, struct cie *c)
{
	uint32_t len32;
	uint64_t len;

	memcpy(&len32, p, 4);
	p += 4;
	len = len32;
	if (len32 == 0xffffffffu) {
		memcpy(&len, p, 8);
		p += 8;
		p += 8; /* the CIE id */
	} else {
		p += 4;
	}
	const uint8_t *end = p + len - (len32 == 0xffffffffu ? 8 : 4);
	uint8_t version = *p++;
	const char *aug = (const char *)p;
	size_t alen = strnlen(aug, 16);
	int ok = 1;

	if (alen >= 16 || (version != 1 && version != 3 && version != 4)) {
		return -1;
	}
	p += alen + 1;
	if (aug[0] == 'e' && aug[1] == 'h') {
		p += 8;
	}
	if (version == 4) {
		p += 2; /* address and segment sizes */
	}
	c->code_align = uleb(&p, end);
	c->data_align = sleb(&p, end);
	c->ra_reg = version == 1 ? *p++ : uleb(&p, end);
	c->fde_enc = 0;
	c->signal = 0;
	c->has_z = aug[0] == 'z';
	if (c->has_z) {
		uint64_t zlen = uleb(&p, end);
		const uint8_t *zend = p + zlen;
		for (size_t i = 1; i < alen; i++) {
			switch (aug[i]) {
			case 'R':
				c->fde_enc = *p++;
				break;
			case 'L':
				p++;
				break;
			case 'P': {
				uint8_t enc = *p++;
				read_ptr(&p, zend, enc & 0x0f, &ok);
				break;
			}
			case 'S':
				c->signal = 1;
				break;
			default:
				break;
			}
		}
		p = zend;
	}
	if (!ok || p > end) {
		return -1;
	}
	c->ins = p;
	c->ins_end = end;
	return 0;
}

#define STATE_STACK 8

/* Runs the instructions [p, end) from row *r, starting at address loc,
 * until the row for address ip is complete. init is the CIE's row, for
 * DW_CFA_restore. Returns 0, or -1 on what it cannot follow. */
static int run_cfa(const struct cie *c, const uint8_t *p, const uint8_t *end,
		   uintptr_t loc, uintptr_t ip, struct cfa_row *r,
		   const struct cfa_row *init)
{
	struct cfa_row stack[STATE_STACK];
	int sp = 0, ok = 1;

	while (p < end) {
		uint8_t op = *p++;
		uint64_t reg;
		int64_t off;
		struct reg_rule *rr;

		switch (op >> 6) {
		case 1: /* advance_loc */
			loc += (op & 0x3f) * c->code_align;
			if (loc > ip) {
				return 0;
			}
			continue;
		case 2: /* offset */
			off = (int64_t)uleb(&p, end) * c->data_align;
			rr = row_reg(r, op & 0x3f, c->ra_reg);
			if (rr) {
				*rr = (struct reg_rule){W_CFA, (int32_t)off};
			}
			continue;
		case 3: /* restore */
			rr = row_reg(r, op & 0x3f, c->ra_reg);
			if (rr && init) {
				*rr = *row_reg((struct cfa_row *)init,
					       op & 0x3f, c->ra_reg);
			}
			continue;
		default:
			break;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			loc = read_ptr(&p, end, c->fde_enc, &ok);
			if (!ok) {
				return -1;
			}
			if (loc > ip) {
				return 0;
			}
			break;
		case 0x02: /* advance_loc1 */
			loc += *p++ * c->code_align;
			if (loc > ip) {
				return 0;
			}
			break;
		case 0x03: { /* advance_loc2 */
			uint16_t d;
			memcpy(&d, p, 2);
			p += 2;
			loc += d * c->code_align;
			if (loc > ip) {
				return 0;
			}
			break;
		}
		case 0x04: { /* advance_loc4 */
			uint32_t d;
			memcpy(&d, p, 4);
			p += 4;
			loc += d * c->code_align;
			if (loc > ip) {
				return 0;
			}
			break;
		}
		case 0x05: /* offset_extended */
		case 0x11: /* offset_extended_sf */
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = uleb(&p, end);
			off = op == 0x05 || op == 0x14 ? (int64_t)uleb(&p, end)
						       : sleb(&p, end);
			off *= c->data_align;
			rr = row_reg(r, reg, c->ra_reg);
			if (rr) {
				*rr = (struct reg_rule){op == 0x05 || op == 0x11
								? W_CFA
								: W_VAL_CFA,
							(int32_t)off};
			}
			break;
		case 0x06: /* restore_extended */
			reg = uleb(&p, end);
			rr = row_reg(r, reg, c->ra_reg);
			if (rr && init) {
				*rr = *row_reg((struct cfa_row *)init, reg,
					       c->ra_reg);
			}
			break;
		case 0x07: /* undefined */
		case 0x08: /* same_value */
			reg = uleb(&p, end);
			rr = row_reg(r, reg, c->ra_reg);
			if (rr) {
				*rr = (struct reg_rule){
					op == 0x07 ? W_UNDEF : W_SAME, 0};
			}
			break;
		case 0x09: /* register */
			reg = uleb(&p, end);
			uleb(&p, end);
			rr = row_reg(r, reg, c->ra_reg);
			if (rr) {
				*rr = (struct reg_rule){W_OTHER, 0};
			}
			break;
		case 0x0a: /* remember_state */
			if (sp >= STATE_STACK) {
				return -1;
			}
			stack[sp++] = *r;
			break;
		case 0x0b: /* restore_state */
			if (sp <= 0) {
				return -1;
			}
			*r = stack[--sp];
			break;
		case 0x0c: /* def_cfa */
			reg = uleb(&p, end);
			r->cfa_off = (int32_t)uleb(&p, end);
			r->cfa_kind = reg == R_RSP   ? CFA_RSP
				      : reg == R_RBP ? CFA_RBP
				      : reg == R_RBX ? CFA_RBX
						     : CFA_OTHER;
			break;
		case 0x12: /* def_cfa_sf */
			reg = uleb(&p, end);
			r->cfa_off = (int32_t)(sleb(&p, end) * c->data_align);
			r->cfa_kind = reg == R_RSP   ? CFA_RSP
				      : reg == R_RBP ? CFA_RBP
				      : reg == R_RBX ? CFA_RBX
						     : CFA_OTHER;
			break;
		case 0x0d: /* def_cfa_register */
			reg = uleb(&p, end);
			r->cfa_kind = reg == R_RSP   ? CFA_RSP
				      : reg == R_RBP ? CFA_RBP
				      : reg == R_RBX ? CFA_RBX
						     : CFA_OTHER;
			break;
		case 0x0e: /* def_cfa_offset */
			r->cfa_off = (int32_t)uleb(&p, end);
			break;
		case 0x13: /* def_cfa_offset_sf */
			r->cfa_off = (int32_t)(sleb(&p, end) * c->data_align);
			break;
		case 0x0f: { /* def_cfa_expression */
			uint64_t len = uleb(&p, end);
			const uint8_t *e = p, *eend = p + len;
			/* DW_OP_breg7 N; DW_OP_deref: a signal frame's. */
			r->cfa_kind = CFA_OTHER;
			if (len >= 3 && e[0] == 0x77 && eend[-1] == 0x06) {
				e++;
				off = sleb(&e, eend);
				if (e == eend - 1) {
					r->cfa_kind = CFA_DEREF_RSP;
					r->cfa_off = (int32_t)off;
				}
			}
			p = eend;
			break;
		}
		case 0x10:   /* expression */
		case 0x16: { /* val_expression */
			reg = uleb(&p, end);
			uint64_t len = uleb(&p, end);
			const uint8_t *e = p, *eend = p + len;
			struct reg_rule rule = {W_OTHER, 0};
			/* DW_OP_breg7 N: saved at %rsp + N (a signal
			 * frame's). */
			if (op == 0x10 && len >= 2 && e[0] == 0x77) {
				e++;
				off = sleb(&e, eend);
				if (e == eend) {
					rule = (struct reg_rule){W_SP,
								 (int32_t)off};
				}
			}
			rr = row_reg(r, reg, c->ra_reg);
			if (rr) {
				*rr = rule;
			}
			p = eend;
			break;
		}
		case 0x2e: /* GNU_args_size */
			uleb(&p, end);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = uleb(&p, end);
			off = -(int64_t)uleb(&p, end) * c->data_align;
			rr = row_reg(r, reg, c->ra_reg);
			if (rr) {
				*rr = (struct reg_rule){W_CFA, (int32_t)off};
			}
			break;
		default:
			return -1;
		}
	}
	return 0;
}

int stack_dwarf_rule(const uint8_t *hdr, const int32_t *table, uint32_t count,
		     uintptr_t ip, struct stack_unwind_rule *e)
{
	if (count == 0) {
		return -1;
	}
	/* The last entry whose start is at or below ip. */
	intptr_t rel = (intptr_t)(ip - (uintptr_t)hdr);
	uint32_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((intptr_t)table[2 * mid] <= rel) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	if ((intptr_t)table[2 * lo] > rel) {
		return -1;
	}
	const uint8_t *fde = hdr + table[2 * lo + 1];
	const uint8_t *p = fde;
	uint32_t len32;
	uint64_t len;
	int32_t cie_off;

	memcpy(&len32, p, 4);
	p += 4;
	len = len32;
	if (len32 == 0xffffffffu) {
		return -1; /* 64-bit DWARF: not in .eh_frame in practice */
	}
	const uint8_t *end = p + len;
	memcpy(&cie_off, p, 4);
	const uint8_t *cie_at = p - cie_off;
	p += 4;

	struct cie c;
	int ok = 1;

	if (cie_parse(cie_at, &c) < 0) {
		return -1;
	}
	uintptr_t start = read_ptr(&p, end, c.fde_enc, &ok);
	uintptr_t range = read_ptr(&p, end, c.fde_enc & 0x0f, &ok);
	if (!ok || ip < start || ip >= start + range) {
		return -1;
	}
	if (c.has_z) {
		uint64_t zlen = uleb(&p, end);
		p += zlen;
	}

	struct cfa_row init = {CFA_RSP, 8, {W_CFA, -8}, {0, 0}, {0, 0}, {0, 0}};
	init.ra = (struct reg_rule){W_UNDEF, 0};
	if (run_cfa(&c, c.ins, c.ins_end, 0, UINTPTR_MAX, &init, NULL) < 0) {
		return -1;
	}
	struct cfa_row r = init;
	if (run_cfa(&c, p, end, start, ip, &r, &init) < 0) {
		return -1;
	}
	if (r.cfa_kind == CFA_OTHER || r.ra.where == W_OTHER ||
	    r.ra.where == W_SAME || r.ra.where == W_VAL_CFA ||
	    r.rbp.where == W_OTHER || r.rbp.where == W_UNDEF ||
	    r.rbx.where == W_OTHER || r.rbx.where == W_UNDEF ||
	    (r.rsp.where != W_SAME && r.rsp.where != W_SP &&
	     r.rsp.where != W_VAL_CFA)) {
		return -1;
	}
	e->cfa_kind = r.cfa_kind;
	e->cfa_off = r.cfa_off;
	e->ra_where = r.ra.where;
	e->ra_off = r.ra.off;
	e->rbp_where = r.rbp.where;
	e->rbp_off = r.rbp.off;
	e->rbx_where = r.rbx.where;
	e->rbx_off = r.rbx.off;
	e->rsp_where = r.rsp.where;
	e->rsp_off = r.rsp.off;
	e->signal = c.signal;
	return 0;
}

#endif
