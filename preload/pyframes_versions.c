/*
 * pyframes_versions.c - where CPython keeps what the Python frame reader
 * reads, release by release: a table of offsets per minor version, read off
 * that version's headers (Include/cpython/ and Include/internal/, the
 * pycore_ headers), and 3.13's check of its table against the
 * _Py_DebugOffsets the interpreter carries. A new CPython release is one
 * more entry here. pyframes.h says what each field is.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pyframes.h"

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
		.rt_tstate_current = 568,
		.rt_gil_holder = 360,
		.ts_native_id = -1,
		.ts_thread_id = 176,
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
		.rt_tstate_current = 568,
		.rt_gil_holder = 360,
		.ts_native_id = -1,
		.ts_thread_id = 176,
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
		.rt_tstate_current = 576,
		.rt_gil_holder = 368,
		.ts_native_id = 160,
		.ts_thread_id = 152,
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
		.rt_tstate_current = -1,
		.rt_gil_holder = -1,
		.ts_native_id = 144,
		.ts_thread_id = -1,
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
		.rt_tstate_current = -1,
		.rt_gil_holder = -1,
		.ts_native_id = -1,
		.ts_thread_id = -1,
	},
};

/*
 * 3.13's _Py_DebugOffsets, at the start of _PyRuntime: where its fields
 * lie (each a uint64_t), and which table entry each must equal.
 */
#define PY_DEBUG_COOKIE	       "xdebugpy"
#define PY_DEBUG_FREE_THREADED 16
#define PY_DEBUG_FINALIZING    32
#define PY_DEBUG_NATIVE_ID     200 /* thread_state.native_thread_id */

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

/* The table of 3.minor, or NULL. See pyframes.h. */
const struct py_layout *pyframes_versions_layout(unsigned major, unsigned minor)
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

/* 3.13: the table against _Py_DebugOffsets. See pyframes.h. */
int pyframes_versions_check(struct py_layout *l, uintptr_t runtime)
{
	uintptr_t d = runtime;

	if (!d || memcmp((const void *)d, PY_DEBUG_COOKIE, 8) != 0) {
		return -ENOTSUP;
	}
	if (rd_ptr(d + PY_DEBUG_FREE_THREADED) != 0) {
		return -ENOTSUP;
	}
	l->rt_finalizing = (int)rd_ptr(d + PY_DEBUG_FINALIZING);
	uintptr_t native = rd_ptr(d + PY_DEBUG_NATIVE_ID);
	l->ts_native_id = native < 4096 && !(native & 7) ? (int)native : -1;
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
