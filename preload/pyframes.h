/*
 * pyframes.h - the calling thread's Python frames (CPython 3.9 to 3.13,
 * x86-64 Linux), read from the interpreter's memory, and their function,
 * file and line.
 *
 * The capture calls nothing of Python's but PyGILState_GetThisThreadState,
 * which reads the thread's own thread state from thread-specific storage:
 * it is there whether the thread holds the GIL or released it around a C
 * call (ctypes.CDLL, zlib, sqlite3). Before 3.12 that is the thread's
 * state in the main interpreter, also while the thread runs code in a
 * sub-interpreter, so there the capture first takes the runtime's current
 * thread state (the GIL holder's) or, the GIL released, its last holder,
 * when either is the calling thread's (its thread_id). From the thread
 * state it follows the chain of frames, innermost first:
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
 * in pyframes_versions.c, read off that version's headers (Include/cpython/ and
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
 * Threads: the probe fills pyframes_found and then publishes it with a
 * release store of pyframes_ready; capture and describe read it after an
 * acquire load. Capture and describe take no lock, allocate nothing and use no
 * stdio.
 *
 * Files (stack.h declares what the rest of preload/ calls):
 *   pyframes.c           the probe (finds CPython, picks its layout,
 *                        publishes it) and the capture, the frame walker
 *                        (HOT)
 *   pyframes_versions.c  the per-version tables of offsets and the check
 *                        of 3.13's table against _Py_DebugOffsets
 *   pyframes_describe.c  a captured frame's function, file and line
 * Who calls whom: stack.c calls py_stack_probe(), py_stack_capture() and
 * py_stack_is_eval() (pyframes.c), which looks its version up in
 * pyframes_versions.c; stack_name.c calls py_frame_describe()
 * (pyframes_describe.c), which reads what pyframes.c published.
 */
#ifndef MXPROF_PYFRAMES_H
#define MXPROF_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	/* Before 3.12: gilstate.tstate_current and ceval.gil.last_holder
	 * of _PyRuntimeState, PyThreadState.thread_id; -1 after. */
	int rt_tstate_current;
	int rt_gil_holder;
	int ts_thread_id;
	/* PyThreadState.native_thread_id (3.11+; 3.13: from
	 * _Py_DebugOffsets), -1 before: another thread's state is found by
	 * it. */
	int ts_native_id;
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
	/* The debuggers' walk of the thread states (plain reads, no lock),
	 * NULL when missing. */
	void *(*interp_head)(void);
	void *(*interp_next)(void *);
	void *(*thread_head)(void *);
	void *(*thread_next)(void *);
};

/* pyframes.c: what the probe found, complete once pyframes_ready is set
 * (release / acquire). */
extern struct py_found pyframes_found;
extern int pyframes_ready;

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

/*
 * pyframes_versions.c: the table of CPython 3.minor, or NULL for a version
 * it does not know. This function can't fail.
 */
const struct py_layout *pyframes_versions_layout(unsigned major,
						 unsigned minor);

/*
 * pyframes_versions.c: checks l (3.13's table) against the _Py_DebugOffsets
 * at the start of _PyRuntime (runtime) and takes the offset of _finalizing
 * from it. Returns 0, or -ENOTSUP (no such offsets, free-threaded, or a
 * field moved). Reads memory only.
 */
int pyframes_versions_check(struct py_layout *l, uintptr_t runtime);

#endif
