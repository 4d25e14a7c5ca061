/*
 * stack.h - call stacks (MXPROF_STACKS): where in the program a hooked
 * call, an operator, a CUDA launch or an NVTX range came from.
 *
 * The files, each one idea:
 *
 *   stack.c        capture: native frames (stack_unwind.c), mixed with
 *                  the Python frames of the calling thread at the
 *                  interpreter's evaluation calls; the stack's id from
 *                  the collector's stack table (collector/stacks.c); the
 *                  record that ties the id to the event
 *   stack_unwind.c the native walk: mxprof's own unwinder over the
 *                  objects' .eh_frame_hdr tables (stack_objects.c finds
 *                  an address's object), with a per-thread cache
 *                  of each return address's rules, through the hooked
 *                  calls the stack passes (the hook runtime gives their
 *                  callers: stack_set_through)
 *   stack_unwind_thread.c  the walk of another thread from its registers
 *                  (for threads_now.c: memory read with process_vm_readv,
 *                  frame pointers searched for where /proc gives no
 *                  %rbp, hooked calls passed by that thread's shadow
 *                  frames: stack_set_through_tid); the rules from
 *                  stack_unwind.c
 *   stack_reuse.c  a hooked call's stack without a walk: the last stack
 *                  captured from the same place, checked by the words its
 *                  walk read (stack_unwind_check()) and its Python frames
 *   stack_dwarf.c  one address's rules from DWARF call frame information,
 *                  for stack_unwind.c
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

struct py_frame;

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

/*
 * HOT. As stack_capture(), for a hooked call about to begin: the stack of
 * the caller whose return address is at *slot (the call's slot; the
 * caller's stack pointer is slot + 1) with %rbp and %rbx as the caller
 * left them, without the frames of the capture itself. The same stack as
 * stack_capture() gives there; a capture from a place whose stack is
 * unchanged since the last one from there reuses its id (stack_reuse.c).
 * ctx: the stack of the innermost hooked call the thread is in, as far
 * as the caller can tell (0: none or unknown); a hint only, which keeps
 * apart the stacks of one place under different enclosing calls.
 */
uint32_t stack_capture_at(const uintptr_t *slot, uintptr_t rbp, uintptr_t rbx,
			  uint32_t ctx);

/*
 * In a signal handler on the thread whose stack is wanted (threads_now.c):
 * captures it as stack_capture() does, at most depth frames, whether
 * MXPROF_STACKS is on or not, leaving out the frames up to and including
 * the signal frame's restorer (the handler's own). Returns the id, 0 when
 * it did not fit. Async-signal-safe; call stack_ready_any() first.
 */
uint32_t stack_capture_from_signal(int depth, uintptr_t restorer);

/*
 * The id of another thread's stack: native frames ips[0..n) (from
 * stack_unwind_thread()) mixed with its Python frames py[0..np) as
 * stack_capture() mixes them, at most depth words. Not reentrant: one
 * caller at a time (the drain thread). 0 when it did not fit.
 */
uint32_t stack_intern_thread(void *const *ips, int n, const struct py_frame *py,
			     unsigned np, int depth);

/*
 * Readies the capture as stack_init() does when MXPROF_STACKS is on, for
 * the captures above while it is off: mxprof's own code, the objects'
 * unwind tables, CPython. Not HOT: it takes the loader's lock
 * (dl_iterate_phdr); call it from one thread (the drain thread).
 */
void stack_ready_any(void);

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

/* The code object and instruction of Python frame word w, in *f: 0, or
 * -1 for a word that names no Python frame. Describe it
 * (py_frame_describe()) only while its code object is alive. */
int stack_py_frame(uint64_t w, struct py_frame *f);

/* ---- the native walk (stack_unwind.c) ---------------------------------- */

/* Where a register's caller value is. */
enum {
	W_SAME = 0, /* unchanged */
	W_CFA,	    /* saved at CFA + off */
	W_SP,	    /* saved at %rsp + off (signal frames) */
	W_VAL_CFA,  /* is CFA + off */
	W_UNDEF,    /* undefined: the return address ends the stack */
	W_OTHER,    /* a rule the walk does not follow */
};

/* How the CFA is found. */
enum {
	CFA_RSP = 0,
	CFA_RBP,
	CFA_RBX,
	CFA_DEREF_RSP, /* *(%rsp + off): a signal frame's saved %rsp */
	CFA_OTHER,
};

/* One code address's rules (stack_dwarf_rule()): how the caller's frame
 * (CFA) is found, and where the caller's return address, %rbp, %rbx and
 * %rsp are (W_*, with an offset). signal: a signal frame, whose caller's
 * address is the interrupted instruction, not a return address. */
struct stack_unwind_rule {
	uintptr_t ip; /* the address, in the thread's cache; 0: free */
	uint32_t gen; /* the object table it was worked out from */
	uint8_t cfa_kind, ra_where, rbp_where, rbx_where, rsp_where, signal;
	int32_t cfa_off, ra_off, rbp_off, rbx_off, rsp_off;
};

#define STACK_UNWIND_SETS 512 /* of 4 fast entries: 32 KiB */
#define STACK_UNWIND_FULL 256
#define STACK_UNWIND_MEMO 128 /* the last walk's frames, by depth */

/* A thread's rule cache (stack_unwind.c says how it is used), in
 * zero-filled memory the thread alone writes. */
struct stack_unwind_cache {
	uint64_t fast[STACK_UNWIND_SETS][8];
	struct stack_unwind_rule full[STACK_UNWIND_FULL];
	uint64_t memo[STACK_UNWIND_MEMO][2];
	uint32_t next;
};

/*
 * Works out the rule of address ip (a return address less one, or an
 * interrupted instruction) in the object whose .eh_frame_hdr is at hdr,
 * with count (start, FDE) pairs in its search table at table, into *e
 * (all but ip and gen). Returns 0, or -1 when there is none the walk can
 * follow. Reads memory only; async-signal-safe (stack_dwarf.c).
 */
int stack_dwarf_rule(const uint8_t *hdr, const int32_t *table, uint32_t count,
		     uintptr_t ip, struct stack_unwind_rule *e);

/*
 * The hook runtime's answer for the walk at a stub's address ip (a return
 * address between the bounds given to stack_set_through): -1 when ip is
 * not a hooked call's exit (the walk goes on by the stub's own rules); 0
 * when it is but no call of this thread returns there (the walk ends); 1
 * with the caller's return address, stack pointer and %rbx, and the id of
 * the stack captured as that call began (0 for none). *k is where
 * the search resumes (UINT32_MAX at the first): calls are met innermost
 * first. HOT, async-signal-safe.
 */
typedef int (*stack_through_fn)(uintptr_t ip, uint32_t *k, uintptr_t *ret,
				uintptr_t *sp, uintptr_t *rbx, uint32_t *sid);

/* Names the hook runtime's function for the stubs at [lo, hi). Call once,
 * at start-up. */
void stack_set_through(stack_through_fn fn, uintptr_t lo, uintptr_t hi);

/* ---- the loaded objects (stack_objects.c) ---------------------------- */

/* The loaded objects as a walk sees them (opaque). */
struct stack_objs;

/* HOT, async-signal-safe. The objects' table as last read, with its
 * generation in *gen; NULL (gen 0) before the first read. */
const struct stack_objs *stack_objs_get(uint32_t *gen);

/* HOT. Non-zero when objects are found by the loader's own lock-free
 * lookup, current the moment one comes or goes (glibc's
 * _dl_find_object): then a table read again would find nothing new. */
int stack_objs_current(void);

/* HOT, async-signal-safe. The rules of code address at (a return address
 * less one, or an interrupted instruction) in *e, from the object that
 * holds it (in table t, or by the loader's lookup): 0, or -1 when there
 * are none the walk can follow. Reads memory only. */
int stack_objs_rule(const struct stack_objs *t, uintptr_t at,
		    struct stack_unwind_rule *e);

/* Reads the loaded objects' unwind tables (again after a dlopen: a table
 * that did not change is kept, with the rules cached from it). Returns 1
 * when it read a new table, 0 when the objects were unchanged, -1 when it
 * could not map one. Not HOT: dl_iterate_phdr takes the loader's lock. */
int stack_unwind_load(void);

/*
 * HOT, async-signal-safe. Writes the return addresses of the calling
 * thread's frames into ips, innermost first, starting with the return
 * address into the caller of stack_unwind (at most max), and returns how
 * many. cache is the thread's rule cache; fill is non-zero when the walk
 * may add to it, and may read the objects again when it meets an address
 * it has no rule for (never in a capture nested in another one, such as a
 * signal handler's: that one only reads). When the walk reaches a hooked
 * call whose own stack was captured as it began, it stops there and sets
 * *rest to that stack's id: its words are the rest of this stack (they
 * begin at the hooked call's caller); else *rest is 0. x86-64; 0
 * elsewhere.
 */
int stack_unwind(void **ips, int max, struct stack_unwind_cache *cache,
		 int fill, uint32_t *rest);

/* ---- another thread's walk (stack_unwind_thread.c) ------------------ */

/*
 * Reads the word at addr into *v without faulting (process_vm_readv on
 * this process): 0, or -1 when addr is not readable. For memory another
 * thread may unmap meanwhile (its stack, its shadow frames). A system call
 * a word: not HOT. Async-signal-safe.
 */
int stack_read_word(uintptr_t addr, uintptr_t *v);

/* Where a walk of another thread starts: its instruction pointer and
 * stack pointer, and %rbp and %rbx where known (STACK_KNOW_*). at_call:
 * ip follows a call or a system call (the rules of ip - 1 apply), else ip
 * is the interrupted instruction itself. */
#define STACK_KNOW_RBP 1u
#define STACK_KNOW_RBX 2u
struct stack_unwind_start {
	uintptr_t ip, sp, rbp, rbx;
	unsigned known;
	int at_call;
	/* A hooked call's capture: the stack of the innermost hooked call
	 * the thread seemed to be in (0: none), a hint that keeps the
	 * reused stacks of one place apart by their enclosing call. */
	uint32_t ctx;
};

/* Why a walk of another thread ended. */
enum stack_end {
	STACK_END_BASE = 0, /* the outermost frame: the stack is whole  */
	STACK_END_DEPTH,    /* max frames written                        */
	STACK_END_NOINFO,   /* a frame without unwind rules it follows   */
	STACK_END_REGS,	    /* the rules need %rbp or %rbx, unknown here */
	STACK_END_READ,	    /* a stack word could not be read            */
	STACK_END_HOOK,	    /* a hooked call whose shadow frame is gone  */
};

/*
 * The hook runtime's answer for another thread's walk at a stub's exit
 * ip, with sp the stack pointer there (just past the slot that held the
 * exit address): -1 when ip is not a hooked call's exit; 0 when thread
 * tid has no such call; 1 with the caller's return address and %rbx.
 * Reads the thread's shadow frames with stack_read_word(). Not HOT.
 */
typedef int (*stack_through_tid_fn)(int tid, uintptr_t ip, uintptr_t sp,
				    uintptr_t *ret, uintptr_t *rbx);

/* Names the hook runtime's function for other threads' walks. Call once,
 * at start-up. */
void stack_set_through_tid(stack_through_tid_fn fn);

/* stack_unwind.c, for the walk above: the rules of code address at (a
 * return address less one, or an interrupted instruction) in *e: 0, or
 * -1 when it has none the walk can follow; and whether ip lies among the
 * hooked calls' stubs. Read memory only. */
int stack_unwind_rule_at(uintptr_t at, struct stack_unwind_rule *e);
int stack_unwind_in_stubs(uintptr_t ip);

/*
 * Walks the frames of thread tid (of this process, not the caller) from
 * *st: writes st->ip and then the return addresses of its callers into
 * ips, innermost first (at most max), and returns how many; *end says why
 * the walk ended. Every stack word is read with stack_read_word(), so a
 * thread that ran on meanwhile gives a wrong stack, never a fault. No
 * rule cache: each frame's rules are worked out from the object's
 * tables. The objects must have been read (stack_unwind_load()) where
 * glibc has no _dl_find_object. Not HOT; takes no lock. x86-64; 0
 * elsewhere.
 */
int stack_unwind_thread(int tid, const struct stack_unwind_start *st,
			void **ips, int max, int *end);

/* ---- a walk read again (stack_unwind.c, for stack_reuse.c) ------------ */

#define STACK_LOG_MAX 64 /* under 256: a uint8_t counts them */

/*
 * What a walk from a known start (stack_unwind_from()) read: every stack
 * word, in the order read (w[i]: its address and value), and whether it
 * used the start's %rbp or %rbx (before reading their callers' values
 * from the stack). From the same start, a walk that finds the same words
 * there walks the same frames; ok is 0 when the walk depended on anything
 * else too (a signal frame, a hooked call it passed through, a frame
 * without rules, more than STACK_LOG_MAX words).
 */
struct stack_walk_log {
	uint32_t gen; /* the object table walked with */
	uint8_t n;    /* words */
	uint8_t ok, rbp_in, rbx_in;
	uintptr_t through; /* the hooked call's exit it stopped at (rest) */
	uintptr_t w[STACK_LOG_MAX][2];
};

/*
 * HOT, async-signal-safe. As stack_unwind(), from frame st instead of the
 * caller's: st->ip, a return address, is the first written, then its
 * callers' (st->at_call and st->known are not read). log, when not NULL,
 * gets what the walk read.
 */
int stack_unwind_from(const struct stack_unwind_start *st, void **ips, int max,
		      struct stack_unwind_cache *cache, int fill,
		      uint32_t *rest, struct stack_walk_log *log);

/*
 * HOT, async-signal-safe. Whether a walk from the start that log was made
 * from (and, where log->rbp_in or rbx_in, the same %rbp or %rbx) would
 * walk the same frames now and stop at the same hooked call, whose stack
 * is rest: the objects are those it walked with, every word it read
 * holds the same value, and the hooked call has that stack. Reads the
 * words in order and stops at the first that differs, so it reads only
 * what the walk itself would.
 */
int stack_unwind_check(const struct stack_walk_log *log, uint32_t rest);

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

/*
 * As py_stack_capture(), from thread state ts (any thread's: one that
 * py_stack_tstate_of() found, read while that thread is blocked, as its
 * frames then stay as they are). Reads memory only; 0 for a ts that is
 * not a plausible address. Async-signal-safe.
 */
unsigned py_stack_capture_ts(uintptr_t ts, struct py_frame *out, unsigned max);

/*
 * The thread state of the thread whose id (gettid) is tid, in any
 * interpreter, found by its native_thread_id (CPython 3.11 and later);
 * 0 when there is none, before 3.11, or while the interpreter finalizes.
 * Walks the interpreters' lists of thread states without the GIL (as a
 * debugger does): call it while the lists cannot change under it much
 * (each read is checked, the walk is bounded). Not HOT.
 */
uintptr_t py_stack_tstate_of(int tid);

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

/* ---- reuse (stack_reuse.c) --------------------------------------------- */

#define STACK_REUSE_SLOTS 1024
#define STACK_REUSE_WAYS  4 /* a start's entry is one of a set of 4 */
/* How many captures from a start whose walk could not be kept walk
 * without noting their words before one tries again. */
#define STACK_REUSE_SKIP 64

/*
 * The stack last captured from one start, with what it was made of; what
 * a reuse reads first (the start, %rbp and %rbx included) in its first
 * cache line. The Python frames the capture read follow the walk's words
 * in log.w, each as its code object and its offset, with entry in the
 * high half: np of them from w[log.n] on. An entry whose id is 0 holds no
 * stack: its start's walk could not be kept, and the next skip captures from
 * there do not note their words.
 */
struct stack_reuse_ent {
	uintptr_t ip, sp;   /* the start; ip 0: free */
	uintptr_t rbp, rbx; /* the start's, where the walk used them */
	uint32_t id, rest;  /* the stack; the enclosing call's */
	uint32_t ctx;	    /* the start's hint (stack_unwind_start) */
	uint32_t age;	    /* struct stack_reuse's kept, when kept */
	uint8_t py_on, py_read, np, skip;
	struct stack_walk_log log;
} __attribute__((aligned(64)));

/* A thread's entries, in zero-filled memory the thread alone writes. A
 * start's entry is one of a set of STACK_REUSE_WAYS slots (a lookup
 * reads a cache line or a few before the walk's words), the oldest of
 * the set giving way, so that a place reached two ways in turn (one
 * native place under two Python lines, or from two callers) keeps both
 * stacks, and three places of a loop whose starts share a set do not
 * evict each other at every turn. */
struct stack_reuse {
	struct stack_reuse_ent e[STACK_REUSE_SLOTS];
	uint32_t kept; /* entries kept so far */
};

/*
 * HOT, async-signal-safe. The id of the stack captured before from start
 * st when a capture from there now would give the same: the same walk
 * (stack_unwind_check()), py_on the same (CPython found or not), and,
 * where that capture read the Python frames, the same frames now (read
 * into py, at most depth). 0 otherwise, with *no_log set when the walk
 * from there need not note its words (one could not be kept lately).
 * Call it only outside a capture nested in another.
 */
uint32_t stack_reuse_find(struct stack_reuse *r,
			  const struct stack_unwind_start *st, int py_on,
			  struct py_frame *py, unsigned depth, int *no_log);

/*
 * Keeps stack id, captured from st by a walk that read log and stopped at
 * an enclosing hooked call whose stack is rest (0: none), and, where
 * py_read, with Python frames py[0..np), for stack_reuse_find(). A walk
 * that cannot be checked (log->ok 0), or whose words and Python frames
 * do not fit an entry, is kept as such: the next captures from there walk
 * without noting their words. Call it only outside a capture nested in
 * another.
 */
void stack_reuse_keep(struct stack_reuse *r,
		      const struct stack_unwind_start *st, int py_on,
		      const struct stack_walk_log *log, uint32_t rest,
		      int py_read, const struct py_frame *py, unsigned np,
		      uint32_t id);

#endif
