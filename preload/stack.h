/*
 * stack.h - call stacks (MXPROF_STACKS): where in the program a hooked
 * call, an operator, a CUDA launch or an NVTX range came from.
 *
 * The files, each one idea:
 *
 *   stack.c        capture: native frames (libunwind's unw_backtrace),
 *                  mixed with the Python frames of the calling thread at
 *                  the interpreter's evaluation calls; the stack's id from
 *                  the collector's stack table (collector/stacks.c); the
 *                  record that ties the id to the event
 *   stack_name.c   frame names, off the hot path: a native address's
 *                  function (demangled) and library
 *   pyframes*.c    CPython 3.9 to 3.13: the calling thread's Python frames,
 *                  read from the interpreter's memory without calling
 *                  into Python, and their function, file and line
 *                  (pyframes.h is their map)
 *
 * Threads: capture runs on any thread, in any context a hooked call runs
 * in (a signal handler included): it takes no lock and allocates nothing.
 */
#ifndef MXPROF_STACK_H
#define MXPROF_STACK_H

#include <stddef.h>
#include <stdint.h>

/* ---- capture (stack.c) ----------------------------------------------------
 */

/* A frame word that names a Python frame (the rest: its pynames entry);
 * other words are native return addresses. */
#define STACK_PY (1ull << 63)

/* MXPROF_STACKS: the deepest stack captured, 0 when off. */
extern int stack_depth;

/* Sets the depth (0: off) and, when on, readies the capture: mxprof's own
 * code, CPython. The caller then gives the collector the namer
 * (stack_set_namer(stack_name)) when stack_depth > 0. Call once at
 * start-up. Returns 0. */
int stack_init(int depth);

/* Looks for CPython again (after a dlopen). Not HOT. */
void stack_probe(void);

/* HOT. Captures the calling thread's stack and returns its id in the
 * collector's stack table, 0 when off or when it did not fit. */
uint32_t stack_capture(void);

/* How many captures were left out: nested deeper than the scratch
 * levels, or no scratch could be mapped (stack.c). */
uint64_t stack_skipped(void);

/* HOT. Pushes the COLL_STACK record that gives stack id (0: none, nothing
 * is pushed) to the span of this thread that begins at tick t0. */
void stack_push(uint32_t id, uint64_t t0);

/* HOT. Captures the stack and pushes it for the span of this thread that
 * begins at tick t0 (stack_push). */
void stack_record(uint64_t t0);

/* Non-zero when ip lies in mxprof's own code or in the object that holds
 * CPython's interpreter (once found): code that is never the user's. */
int stack_in_runtime(uintptr_t ip);

/* Names Python frame word w (stack_namer_fn's contract, without the
 * category). */
int stack_py_name(uint64_t w, char *name, size_t len, int *user);

/* ---- naming (stack_name.c) ------------------------------------------------
 */

/* The namer of every frame word (stack_namer_fn): a native address's
 * function, demangled, from the object's symbol tables, and the object's
 * file name; Python frames from stack_py_name(). */
int stack_name(uint64_t w, char *name, size_t nlen, char *cat, size_t clen,
	       int *user);

/* ---- Python frames (pyframes*.c) ---------------------------------------- */

/*
 * A Python frame as captured: its code object, and the byte offset of the
 * instruction it runs in that code's bytecode. entry is non-zero on the
 * outermost Python frame that one call of the interpreter's evaluation
 * function (_PyEval_EvalFrameDefault) runs: the native frames of that call
 * come right above it in a mixed stack.
 */
struct py_frame {
	uintptr_t code;
	uint32_t offset;
	uint32_t entry;
};

/*
 * Looks for CPython in the process (the executable or a loaded libpython)
 * and, for a version it knows (3.9 to 3.13), readies the capture. Call at
 * start-up and after each dlopen; cheap once found. Returns 1 when the
 * capture is ready, 0 when there is no CPython (or not yet), -ENOTSUP for
 * a version it does not know (one line says so, once). Not HOT: it calls
 * dlsym.
 */
int py_stack_probe(void);

/*
 * HOT. Writes the calling thread's Python frames, innermost first, into
 * out (at most max) and returns how many. 0 when the thread runs no
 * Python, when CPython was not found, or while the interpreter finalizes.
 * Works whether the thread holds the GIL or released it around a C call;
 * reads memory only: no lock, no allocation, no call into Python. Safe in
 * a signal handler.
 */
unsigned py_stack_capture(struct py_frame *out, unsigned max);

/* HOT. Non-zero when ip lies in the interpreter's evaluation function, so
 * that a native frame there stands for Python frames. */
int py_stack_is_eval(uintptr_t ip);

/*
 * Writes the function of f as "qualname (file.py:line)" into name (the
 * file's base name) and the code's file name as it is into file, each
 * NUL-terminated and cut to its length. Reads the code object: call it
 * only while f's frame is running (at capture). Returns 0, or -1 when f
 * cannot be read (both strings are then "?"). Async-signal-safe.
 */
int py_frame_describe(const struct py_frame *f, char *name, size_t nlen,
		      char *file, size_t flen);

#endif
