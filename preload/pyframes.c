/*
 * pyframes.c - the calling thread's Python frames (CPython 3.9 to 3.13,
 * x86-64 Linux), read from the interpreter's memory, and their function,
 * file and line.
 *
 * The capture calls nothing of Python's but PyGILState_GetThisThreadState,
 * which reads the thread's own thread state from thread-specific storage:
 * it is there whether the thread holds the GIL or released it around a C
 * call (ctypes.CDLL, zlib, sqlite3). From the thread state it follows the
 * chain of frames, innermost first:
 *
 *   3.9, 3.10  tstate->frame, a PyFrameObject; f_back links them, f_lasti
 *              is the instruction (bytes in 3.9, code units in 3.10). Each
 *              frame is one call of _PyEval_EvalFrameDefault (entry on all)
 *   3.11       tstate->cframe->current_frame, a _PyInterpreterFrame; the
 *              frames of Python-to-Python calls share one evaluation call,
 *              whose first frame has is_entry set
 *   3.12       as 3.11 without is_entry: each evaluation call links a shim
 *              frame owned by the C stack (FRAME_OWNED_BY_CSTACK) behind
 *              its first frame, so the frame before a shim is an entry
 *   3.13       as 3.12, with tstate->current_frame (no _PyCFrame)
 *
 * In 3.11 and later a frame whose instruction pointer has not reached the
 * code's first traceable instruction is "incomplete" (being set up, or a
 * shim) and CPython's tracebacks leave it out; so does the capture. An
 * evaluation call whose only frame is incomplete then shows no entry.
 *
 * The layouts differ by minor version; each has its table of offsets
 * below, read off that version's headers (Include/cpython/ and
 * Include/internal/, the pycore_ headers). 3.13 also carries
 * _Py_DebugOffsets at the start of _PyRuntime: the probe checks the table
 * against it, which catches a patch release that moved a field. Debug
 * builds (Py_TRACE_REFS changes the object header) and free-threaded
 * builds are not supported; a free-threaded 3.13 is recognised and
 * refused.
 *
 * Names and lines (py_frame_describe) are read from the code object: the
 * qualified name (co_qualname, 3.11+) or co_name, co_filename, and the line
 * of the instruction's offset from the version's line table (co_lnotab,
 * co_linetable, or the 3.11+ location table) counted from co_firstlineno.
 * Every pointer read there is checked first as far as is cheap (aligned,
 * in the user half, object of the expected type, bounded length), so that
 * a stale or garbage code pointer gives "?" rather than a crash, unless it
 * points at unmapped memory.
 *
 * Threads: the probe fills `py` and then publishes it with a release
 * store of py_ready; capture and describe read it after an acquire load.
 * Capture and describe take no lock, allocate nothing and use no stdio.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack.h"

/* ---- per-version layouts ------------------------------------------------ */

enum py_chain {
	PY_FRAME_OBJECT, /* 3.9, 3.10: PyFrameObject, one per eval call */
	PY_IFRAME_ENTRY, /* 3.11: _PyInterpreterFrame.is_entry */
	PY_IFRAME_SHIM,	 /* 3.12+: shim frames owned by the C stack */
};

enum py_instr {
	PY_LASTI_BYTES, /* int f_lasti, a byte offset (3.9) */
	PY_LASTI_UNITS, /* int f_lasti, in 2-byte code units (3.10) */
	PY_INSTR_PTR,	/* pointer into co_code_adaptive (3.11+) */
};

enum py_lines {
	PY_LNOTAB,    /* 3.9: (address delta, signed line delta) pairs */
	PY_LINETABLE, /* 3.10: the same, each pair ends a range */
	PY_LOCTABLE,  /* 3.11+: the location table, in code units */
};

/* _PyInterpreterFrame.owner values (pycore_frame.h, 3.11+). */
#define PY_OWNED_BY_GENERATOR 1
#define PY_OWNED_BY_CSTACK    3

/* The same in every version: PyObject's ob_type, PyVarObject's ob_size,
 * PyBytesObject's ob_sval, PyASCIIObject's length and state. */
#define PY_OB_TYPE    8
#define PY_OB_SIZE    16
#define PY_BYTES_DATA 32
#define PY_STR_LENGTH 16
#define PY_STR_STATE  32
/* PyASCIIObject.state bits: kind:3 at bit 2, compact, ascii (and ready
 * before 3.12, given per version). */
#define PY_STATE_KIND(s) (((s) >> 2) & 7)
#define PY_STATE_COMPACT 0x20u
#define PY_STATE_ASCII	 0x40u

/* Offsets in bytes; -1 where the version has no such field. */
struct py_layout {
	unsigned minor;
	enum py_chain chain;
	enum py_instr instr;
	enum py_lines lines;
	int ts_cframe;	/* PyThreadState.cframe, or -1 */
	int ts_frame;	/* the innermost frame, in the cframe if any */
	int f_back;	/* f_back or previous */
	int f_code;	/* f_code or f_executable */
	int f_instr;	/* f_lasti, prev_instr or instr_ptr */
	int f_is_entry; /* 3.11 */
	int f_owner;	/* 3.11+ */
	int co_firstlineno;
	int co_filename;
	int co_name;
	int co_qualname; /* 3.11+ */
	int co_table;	 /* co_lnotab or co_linetable, a bytes object */
	int co_code;	 /* the code: bytes object (3.9/3.10) */
	int co_adaptive; /* the code: inline array (3.11+) */
	int co_firsttraceable;
	int str_ascii_data;   /* sizeof(PyASCIIObject) */
	int str_compact_data; /* sizeof(PyCompactUnicodeObject) */
	unsigned str_ready;   /* state.ready bit (before 3.12), or 0 */
	int rt_finalizing;    /* _PyRuntimeState._finalizing */
};

static const struct py_layout py_layouts[] = {
	{
		.minor = 9,
		.chain = PY_FRAME_OBJECT,
		.instr = PY_LASTI_BYTES,
		.lines = PY_LNOTAB,
		.ts_cframe = -1,
		.ts_frame = 24,
		.f_back = 24,
		.f_code = 32,
		.f_instr = 104,
		.f_is_entry = -1,
		.f_owner = -1,
		.co_firstlineno = 40,
		.co_filename = 104,
		.co_name = 112,
		.co_qualname = -1,
		.co_table = 120,
		.co_code = 48,
		.co_adaptive = -1,
		.co_firsttraceable = -1,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.str_ready = 0x80,
		.rt_finalizing = 16,
	},
	{
		.minor = 10,
		.chain = PY_FRAME_OBJECT,
		.instr = PY_LASTI_UNITS,
		.lines = PY_LINETABLE,
		.ts_cframe = -1,
		.ts_frame = 24,
		.f_back = 24,
		.f_code = 32,
		.f_instr = 96,
		.f_is_entry = -1,
		.f_owner = -1,
		.co_firstlineno = 40,
		.co_filename = 104,
		.co_name = 112,
		.co_qualname = -1,
		.co_table = 120,
		.co_code = 48,
		.co_adaptive = -1,
		.co_firsttraceable = -1,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.str_ready = 0x80,
		.rt_finalizing = 16,
	},
	{
		.minor = 11,
		.chain = PY_IFRAME_ENTRY,
		.instr = PY_INSTR_PTR,
		.lines = PY_LOCTABLE,
		.ts_cframe = 56,
		.ts_frame = 8,
		.f_back = 48,
		.f_code = 32,
		.f_instr = 56,
		.f_is_entry = 68,
		.f_owner = 69,
		.co_firstlineno = 72,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_table = 136,
		.co_code = -1,
		.co_adaptive = 184,
		.co_firsttraceable = 168,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.str_ready = 0x80,
		.rt_finalizing = 24,
	},
	{
		.minor = 12,
		.chain = PY_IFRAME_SHIM,
		.instr = PY_INSTR_PTR,
		.lines = PY_LOCTABLE,
		.ts_cframe = 56,
		.ts_frame = 0,
		.f_back = 8,
		.f_code = 0,
		.f_instr = 56,
		.f_is_entry = -1,
		.f_owner = 70,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_table = 136,
		.co_code = -1,
		.co_adaptive = 192,
		.co_firsttraceable = 176,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.str_ready = 0,
		.rt_finalizing = 24,
	},
	{
		.minor = 13,
		.chain = PY_IFRAME_SHIM,
		.instr = PY_INSTR_PTR,
		.lines = PY_LOCTABLE,
		.ts_cframe = -1,
		.ts_frame = 72,
		.f_back = 8,
		.f_code = 0,
		.f_instr = 56,
		.f_is_entry = -1,
		.f_owner = 70,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_table = 136,
		.co_code = -1,
		.co_adaptive = 200,
		.co_firsttraceable = 184,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.str_ready = 0,
		.rt_finalizing = 608,
	},
};

/*
 * 3.13's _Py_DebugOffsets, at the start of _PyRuntime: where its fields
 * lie (each a uint64_t), and which table entry each must equal.
 */
#define PY_DEBUG_COOKIE	       "xdebugpy"
#define PY_DEBUG_FREE_THREADED 16
#define PY_DEBUG_FINALIZING    32

static const struct {
	int at;
	int field; /* offsetof(struct py_layout, ...) */
} py_debug_checks[] = {
	{184, offsetof(struct py_layout, ts_frame)},
	{232, offsetof(struct py_layout, f_back)},
	{240, offsetof(struct py_layout, f_code)},
	{248, offsetof(struct py_layout, f_instr)},
	{264, offsetof(struct py_layout, f_owner)},
	{280, offsetof(struct py_layout, co_filename)},
	{288, offsetof(struct py_layout, co_name)},
	{296, offsetof(struct py_layout, co_qualname)},
	{304, offsetof(struct py_layout, co_table)},
	{312, offsetof(struct py_layout, co_firstlineno)},
	{344, offsetof(struct py_layout, co_adaptive)},
};

/* ---- what the probe found ------------------------------------------------ */

struct py_found {
	struct py_layout l; /* the version's table (3.13: checked) */
	void *(*this_tstate)(void);
	uintptr_t code_type;
	uintptr_t str_type;
	uintptr_t bytes_type;
	uintptr_t runtime; /* &_PyRuntime, or 0 */
	uintptr_t eval_lo, eval_hi;
};

static struct py_found py;
static int py_ready;   /* py is complete (release / acquire) */
static int py_unknown; /* a CPython of another version was found */
static int py_probing; /* a thread is in probe_once() */

/* Strings longer than this are taken as garbage. */
#define PY_STR_MAX   (1 << 16)
#define PY_TABLE_MAX (1 << 24)
/* The most frames a capture walks past, whatever max says. */
#define PY_WALK_MAX (1 << 16)

/* ---- reading memory ------------------------------------------------------ */

/* A plausible object or frame address: user half, 8-aligned, not in the
 * first page. */
static inline int ptr_ok(uintptr_t p)
{
	return p >= 4096 && p < ((uintptr_t)1 << 47) && (p & 7) == 0;
}

static inline uintptr_t rd_ptr(uintptr_t a)
{
	uintptr_t v;

	memcpy(&v, (const void *)a, sizeof(v));
	return v;
}

static inline int32_t rd_i32(uintptr_t a)
{
	int32_t v;

	memcpy(&v, (const void *)a, sizeof(v));
	return v;
}

static inline uint8_t rd_u8(uintptr_t a)
{
	return *(const volatile uint8_t *)a;
}

/* ---- probe --------------------------------------------------------------- */

static const struct py_layout *layout_of(unsigned major, unsigned minor)
{
	if (major != 3) {
		return NULL;
	}
	for (size_t i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]);
	     i++) {
		if (py_layouts[i].minor == minor) {
			return &py_layouts[i];
		}
	}
	return NULL;
}

/* The running version: Py_Version (3.11+), else Py_GetVersion()'s "3.9.18
 * (main, ...". Returns 0, or -1 when neither can be read. */
static int version_of(unsigned *major, unsigned *minor)
{
	const unsigned long *hex = dlsym(RTLD_DEFAULT, "Py_Version");
	const char *(*get)(void) = NULL;
	const char *s;
	char *end;

	if (hex) {
		*major = (*hex >> 24) & 0xff;
		*minor = (*hex >> 16) & 0xff;
		return 0;
	}
	*(void **)&get = dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!get || !(s = get())) {
		return -1;
	}
	*major = (unsigned)strtoul(s, &end, 10);
	if (*end != '.') {
		return -1;
	}
	*minor = (unsigned)strtoul(end + 1, &end, 10);
	return 0;
}

/* Tells once that the capture leaves this CPython's frames out. */
static int refuse(unsigned major, unsigned minor, const char *why)
{
	if (!__atomic_exchange_n(&py_unknown, 1, __ATOMIC_ACQ_REL)) {
		fprintf(stderr,
			"mxprof: CPython %u.%u %s; Python frames are left "
			"out\n",
			major, minor, why);
	}
	return -ENOTSUP;
}

/* 3.13: checks the table against _Py_DebugOffsets and takes the offset of
 * _finalizing from it. Returns 0, or -ENOTSUP (free-threaded, moved). */
static int check_debug_offsets(struct py_layout *l)
{
	uintptr_t d = py.runtime;

	if (!d || memcmp((const void *)d, PY_DEBUG_COOKIE, 8) != 0) {
		return -ENOTSUP;
	}
	if (rd_ptr(d + PY_DEBUG_FREE_THREADED) != 0) {
		return -ENOTSUP;
	}
	l->rt_finalizing = (int)rd_ptr(d + PY_DEBUG_FINALIZING);
	for (size_t i = 0;
	     i < sizeof(py_debug_checks) / sizeof(py_debug_checks[0]); i++) {
		int want;

		memcpy(&want, (const char *)l + py_debug_checks[i].field,
		       sizeof(want));
		if (rd_ptr(d + py_debug_checks[i].at) != (uintptr_t)want) {
			return -ENOTSUP;
		}
	}
	return 0;
}

/* Fills py. Returns 1 (found, ready to publish), 0 (no CPython) or
 * -ENOTSUP. */
static int probe_once(void)
{
	const struct py_layout *l;
	unsigned major, minor;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	void *eval;

	*(void **)&py.this_tstate =
		dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!py.this_tstate || version_of(&major, &minor) < 0) {
		return 0;
	}
	py.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	py.str_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	py.bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	py.runtime = (uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime");
	if (!py.code_type || !py.str_type || !py.bytes_type) {
		return 0;
	}
	l = layout_of(major, minor);
	if (!l) {
		return refuse(major, minor,
			      "is not known to the stack capture");
	}
	py.l = *l;
	if (minor == 13 && check_debug_offsets(&py.l) < 0) {
		return refuse(major, minor,
			      "is a build whose layout the stack capture "
			      "does not know");
	}
	eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	if (eval && dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) &&
	    sym) {
		py.eval_lo = (uintptr_t)eval;
		py.eval_hi = (uintptr_t)eval + sym->st_size;
	}
	return 1;
}

int py_stack_probe(void)
{
	int rc;

	if (__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE)) {
		return 1;
	}
	if (__atomic_load_n(&py_unknown, __ATOMIC_ACQUIRE)) {
		return -ENOTSUP;
	}
	/* Another thread probing: not yet, as far as this one knows. */
	if (__atomic_exchange_n(&py_probing, 1, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	rc = probe_once();
	if (rc == 1) {
		__atomic_store_n(&py_ready, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&py_probing, 0, __ATOMIC_RELEASE);
	return rc;
}

/* ---- capture ------------------------------------------------------------- */

/* The byte offset of frame f's instruction in code, or -1 for a 3.11+
 * frame that is incomplete. */
static int64_t frame_offset(const struct py_layout *l, uintptr_t f,
			    uintptr_t code)
{
	int64_t off;

	switch (l->instr) {
	case PY_LASTI_BYTES:
		off = rd_i32(f + l->f_instr);
		break;
	case PY_LASTI_UNITS:
		off = (int64_t)rd_i32(f + l->f_instr) * 2;
		break;
	default:
		off = (int64_t)(rd_ptr(f + l->f_instr) -
				(code + (uintptr_t)l->co_adaptive));
		if (rd_u8(f + l->f_owner) != PY_OWNED_BY_GENERATOR &&
		    off < (int64_t)rd_i32(code + l->co_firsttraceable) * 2) {
			return -1;
		}
		return off < 0 || off > UINT32_MAX ? 0 : off;
	}
	return off < 0 ? 0 : off;
}

unsigned py_stack_capture(struct py_frame *out, unsigned max)
{
	const struct py_layout *l = &py.l;
	uintptr_t ts, f;
	unsigned n = 0, steps = 0, limit;
	int kept = 0; /* the frame before f in the chain is out[n - 1] */

	if (!__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE) || max == 0) {
		return 0;
	}
	if (py.runtime && rd_ptr(py.runtime + l->rt_finalizing)) {
		return 0;
	}
	ts = (uintptr_t)py.this_tstate();
	if (!ptr_ok(ts)) {
		return 0;
	}
	if (l->ts_cframe >= 0) {
		ts = rd_ptr(ts + l->ts_cframe);
		if (!ptr_ok(ts)) {
			return 0;
		}
	}
	/* A loop guard: at most one shim or incomplete frame a kept one. */
	limit = max > PY_WALK_MAX ? 2 * PY_WALK_MAX : 2 * max + 64;
	f = rd_ptr(ts + l->ts_frame);
	for (; f && steps < limit; steps++, f = rd_ptr(f + l->f_back)) {
		uintptr_t code;
		int64_t off;

		if (!ptr_ok(f)) {
			break;
		}
		if (l->chain == PY_IFRAME_SHIM &&
		    rd_u8(f + l->f_owner) == PY_OWNED_BY_CSTACK) {
			if (kept) {
				out[n - 1].entry = 1;
			}
			kept = 0;
			continue;
		}
		if (n == max) {
			break;
		}
		code = rd_ptr(f + l->f_code);
		if (!ptr_ok(code) ||
		    rd_ptr(code + PY_OB_TYPE) != py.code_type) {
			break;
		}
		off = frame_offset(l, f, code);
		if (off < 0) {
			kept = 0;
			continue;
		}
		out[n].code = code;
		out[n].offset = (uint32_t)off;
		switch (l->chain) {
		case PY_FRAME_OBJECT:
			out[n].entry = 1;
			break;
		case PY_IFRAME_ENTRY:
			out[n].entry = rd_u8(f + l->f_is_entry) != 0;
			break;
		default:
			out[n].entry = 0;
			break;
		}
		n++;
		kept = 1;
	}
	return n;
}

int py_stack_is_eval(uintptr_t ip)
{
	if (!__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	return ip >= py.eval_lo && ip < py.eval_hi;
}

/* ---- describe ------------------------------------------------------------ */

/* A str object's characters, as read from a compact str. */
struct py_str {
	uintptr_t data;
	size_t len;
	unsigned kind; /* bytes per character: 1, 2 or 4 */
};

/* Reads the str at o. Returns 0, or -1 when o is not a compact str. */
static int str_read(uintptr_t o, struct py_str *s)
{
	const struct py_layout *l = &py.l;
	uint32_t state;
	intptr_t len;

	if (!ptr_ok(o) || rd_ptr(o + PY_OB_TYPE) != py.str_type) {
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

	if (!ptr_ok(o) || rd_ptr(o + PY_OB_TYPE) != py.bytes_type) {
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
	const struct py_layout *l = &py.l;
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
	const struct py_layout *l = &py.l;
	struct py_str qn, fn;
	struct py_out o;
	size_t base = 0;
	int line;

	if (!__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE) || !f ||
	    !ptr_ok(f->code) || rd_ptr(f->code + PY_OB_TYPE) != py.code_type ||
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
