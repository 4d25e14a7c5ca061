/*
 * hook.h - the C API hook engine: MXPROF_HOOK patterns, GOT patching of
 * every loaded object, the dlopen/dlsym family, and the return-address
 * trampolines that time each hooked call.
 *
 * How a call is timed (x86-64 only):
 *
 *   caller --GOT--> stub[i] (hook_tramp.S)
 *        stopped: tail jump to hook_table_real[i]      (one load, one branch)
 *        running: hook_tramp_enter (or hook_rt_enter() when unusual)
 *                 pushes a shadow frame; the stub then calls the real
 *                 function so that it returns into the stub, which goes on
 *                 to hook_tramp_leave. That pops the frame, pushes one
 *                 record (or has hook_rt_exit() do both when unusual) and
 *                 returns to the saved address.
 *
 * The files, each one idea, from the top down (a file uses only those
 * below it, through the declarations here):
 *
 *   hook.c         life cycle: hook_init(), hook_finish(), fork
 *   hook_dl.c      the dlopen family's wrappers, the scans they start,
 *                  and the patcher's lock
 *   hook_unwind.c  the unwinder's wrappers: C++ exceptions through hooked
 *                  frames
 *   hook_patch.c   GOT patching of one object, lazy PLT resolution, RELRO
 *   hook_torch.c   PyTorch's annotations and autograd rows (@torch):
 *                  RecordFunction callbacks, registered when the first
 *                  operator of libtorch_cpu is hooked, and the wrappers of
 *                  the autograd engine's evaluate_function and of the
 *                  calls inside detach's and detach_'s ranges
 *   hook_obj.c     the list of loaded objects, and pinning one while it is
 *                  patched
 *   hook_orig.c    the real dl and unwinder functions behind the wrappers,
 *                  and calling one as from its caller
 *   hook_spec.c    the MXPROF_HOOK patterns and presets
 *   hook_glob.c    their globs, matched byte by byte
 *   hook_hint.c    the lines at exit when nothing was recorded, or a
 *                  pattern matched nothing
 *   hook_demangle.c  readable names of hooked C++ functions (the object
 *                  list hands it libstdc++'s demangler when it finds one)
 *   hook_aten.c    PyTorch's names of its operators (@torch)
 *   hook_rt.c      the per-thread shadow stack: the trampolines' general
 *                  paths, and the exception hooks
 *   hook_rt_walk.c the shadow stacks as call stack walks see them (the
 *                  hooked calls' callers); hook_rt.h is the frames' map
 *   hook_tramp.S   the stubs and the trampolines' fast paths
 *   hook_table.c   the hook table: stub i's function and its record's facts
 *   hook_elf.c     reading an object's dynamic section
 *
 * hook_tramp.S and hook_rt.c are the two halves of one runtime: the
 * assembly calls the C general paths, and the C side computes the stubs'
 * addresses (hook_stub() and friends below). That is the one loop among
 * these files (preload.h says why it stays). Outside the engine, hook_dl.c
 * and hook_rt.c call the stack capture (stack.h), hook_rt_walk.c gives the
 * walk its way through hooked calls, and the stubs read state.c's flag
 * (state_api_recording) and the capture's depth (stack_depth).
 *
 * Threads: everything the patcher does (hook_dl.c and below, except the
 * runtime) runs under the patcher's lock, which nobody blocks on (see
 * hook_dl.c). The runtime's functions are per thread and lock-free.
 */
#ifndef MXPROF_HOOK_H
#define MXPROF_HOOK_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the interface the library's constructor uses (hook.c) ------------- */

/*
 * Parses spec (MXPROF_HOOK's value; NULL or "" means "@auto") and patches
 * every loaded object. Returns 0, or a negative errno: -EINVAL for a bad
 * spec (one line on stderr names MXPROF_HOOK, the value and the accepted
 * syntax; hooking stays off), -ENOTSUP on an architecture without
 * trampolines (one line on stderr). Call once, from the constructor.
 */
int hook_init(const char *spec);

/*
 * At exit, before the final dump: prints one line for each pattern the
 * user named that matched no function (in the root process only, see
 * hook_set_descendant()), and one line if calls went untimed because a
 * shadow stack was full. Not signal-safe.
 */
void hook_finish(void);

/*
 * Marks this process a descendant of the root: its exit says nothing of
 * patterns that matched no function or of a run that recorded nothing.
 * The patterns were written for the whole tree, and a child that never
 * loads the library named (a shell, a tool the program runs) is no
 * mistake of the user's. Call from the constructor. This function can't
 * fail.
 */
void hook_set_descendant(int on);

/*
 * fork() handlers, in pthread_atfork's roles, run by the collector
 * through hook_source at rank LOCK_HOOK: hook_fork_prepare() before any
 * collector lock is taken (the patcher takes the string table's lock
 * while it holds its own), hook_fork_parent() after all are released.
 *
 * hook_fork_prepare() holds the patcher's lock across the fork, so the
 * child never starts with tables another thread was halfway through. It
 * waits for a scan to end (2 s at most), but not at all when the forking
 * thread is inside dlopen, dlmopen or dlclose (a library constructor or
 * destructor that forks holds the dynamic linker's lock, which the
 * patcher may be waiting for), and not when this thread is the one
 * patching. Never fails; keeps errno; not signal-safe (fork handlers are
 * not run for a fork from a signal handler anyway).
 *
 * hook_fork_parent() releases the lock, then scans if a dl call of
 * another thread asked for one meanwhile. Keeps errno.
 *
 * hook_fork_child() releases the lock in the child, which keeps the
 * forking thread's shadow stack (it stays valid). When the prepare
 * handler did not get the lock, the child's tables may be half-written:
 * it never patches again (what is hooked stays timed) and says so in one
 * line. Fork-safe: only async-signal-safe calls; keeps errno.
 */
void hook_fork_prepare(void);
void hook_fork_parent(void);
void hook_fork_child(void);

/* The engine as a collector source (collector.h): hook_finish() at exit,
 * and the fork handlers above at rank LOCK_HOOK, the first to prepare and
 * the last to let go. Registered by the constructor after hook_init(). */
struct coll_source;
extern const struct coll_source hook_source;

/* ---- the hook table (hook_table.c), read by hook_tramp.S ---------------- */

#include "hook_abi.h" /* HOOK_MAX, the stub layout */

/* What the exit path needs to know about hooked function i. The first 16
 * bytes are the second half of each of its records, as the exit path
 * copies them; hook_abi.h gives the offsets. */
struct hook_ent {
	uint32_t name;	   /* string id of the symbol               */
	uint32_t group;	   /* string id of "C API (libfoo.so)"      */
	uint16_t kind;	   /* COLL_SPAN                             */
	uint8_t cat;	   /* enum coll_cat                         */
	uint8_t flags;	   /* COLL_FLAG_STATUS: returns a status int */
	uint32_t arg;	   /* 0                                     */
	uint64_t on_error; /* COLL_FLAG_ERROR << 24 when it does   */
	uint8_t dead;	   /* its library was unloaded              */
	uint8_t marker;	   /* its end ends a step (MXPROF_STEP): the
			      exit takes the C path (hook_rt.c)     */
	uint8_t pad[6];
};

/* The real address of hooked function i, read by the trampolines. */
extern void *hook_table_real[HOOK_MAX];
/* Per-function facts for the exit path. */
extern struct hook_ent hook_table_ents[HOOK_MAX];

/* Returns the hook index of the function at target, or -1 when it is not
 * hooked. Patcher's lock held; not hot. */
int hook_table_find(uintptr_t target);

/*
 * Hooks the function at target: picks a stub (see hook_table.c for which)
 * and fills its entry (name and group are string ids, cat an enum
 * coll_cat, status non-zero when the function returns a status int).
 * Returns the index, or -1 when every stub is taken (hook_table_full()
 * then says so). The caller publishes the stub by a release store.
 * Patcher's lock held; not hot.
 */
int hook_table_add(uintptr_t target, uint32_t name_id, uint32_t group,
		   uint8_t cat, int status);

/* Retires the hooks of every function in [lo, hi), the code of an
 * unloaded object: their stubs may be reused. Patcher's lock held. */
void hook_table_retire(uintptr_t lo, uintptr_t hi);

/* Returns non-zero when some function could not be hooked because every
 * stub was taken. Lock-free. */
int hook_table_full(void);

/* ---- the trampolines (hook_tramp.S) ------------------------------------ */

/* HOOK_MAX stubs of HOOK_STUB_SIZE bytes, stub i for hooked function i.
 * Code, not data: never call it from C. */
extern char hook_tramp_stubs[];
/* The entry and exit paths every stub calls and jumps to. Code: never
 * call them from C. */
extern char hook_tramp_enter[], hook_tramp_leave[];

/* Stub idx: what the GOT entries of hooked function idx point at. x86-64
 * only (the stubs exist nowhere else). */
static inline char *hook_stub(uint32_t idx)
{
	return hook_tramp_stubs + (size_t)idx * HOOK_STUB_SIZE;
}

/* The address a timed call of hooked function idx returns to: what its
 * return-address slot holds while the call runs. */
static inline uintptr_t hook_exit_addr(uint32_t idx)
{
	return (uintptr_t)(hook_stub(idx) + HOOK_STUB_EXIT);
}

/* What the slot holds from the moment the shadow frame names it until the
 * stub's call stores the exit address. */
static inline uintptr_t hook_resume_addr(uint32_t idx)
{
	return (uintptr_t)(hook_stub(idx) + HOOK_STUB_RESUME);
}

/*
 * Calls fn(a, b, c, d) so that fn sees gadget as its return address, and
 * returns fn's result. gadget must be the address of a `ret` byte inside
 * the object fn should treat as its caller: glibc's dlopen and dlsym look
 * at their return address to pick the RUNPATH and the meaning of
 * RTLD_NEXT. Not hot; as safe as fn itself.
 */
void *hook_tramp_call_as(void *fn, const void *gadget, uintptr_t a, uintptr_t b,
			 uintptr_t c, uintptr_t d);

/* ---- the shadow stack (hook_rt.c) -------------------------------------- */

/*
 * HOT, async-signal-safe. Called by the trampoline on entry to hooked
 * function idx whose return address is at *slot, with rbx and rbp the
 * caller's %rbx and %rbp. Pushes a shadow frame (the new top frame; the
 * trampoline then points %rbx at it), stores hook_resume_addr(idx) in
 * *slot and returns 1; the stub's call then stores hook_exit_addr(idx)
 * there. Returns 0 when the call goes untimed (the shadow stack is full,
 * or could not be mapped: counted), with *slot left alone. With
 * MXPROF_STACKS, first captures the caller's stack (stack_capture_at(),
 * while *slot still holds the caller's address), whose record goes out
 * with the entry tick. Keeps errno.
 */
int hook_rt_enter(uint32_t idx, uintptr_t *slot, uintptr_t rbx, uintptr_t rbp);

/* What a call's exit restores: the caller's return address and %rbx
 * (returned in %rax and %rdx). */
struct hook_rt_ret {
	uintptr_t ret;
	uintptr_t rbx;
};

/*
 * HOT, async-signal-safe. Called by hook_tramp_leave when its own common
 * case does not apply (hook_tramp.S); slot is where the return address was
 * and rax the function's integer result. Pops the matching shadow frame
 * (dropping frames a longjmp skipped), pushes the record, keeps errno,
 * and returns the caller's return address and %rbx. A call whose frame was
 * dropped while it was suspended on another stack gets them from the
 * dropped frames it keeps, untimed; when they are gone too, it says so in
 * one line and aborts (hook_rt.c says why nothing else is safe).
 */
struct hook_rt_ret hook_rt_exit(uintptr_t *slot, uintptr_t rax);

/* This thread's shadow stack as the trampolines see it, held in TLS
 * itself so that reaching the top frame is one %fs-relative load (see
 * hook_abi.h). top is the next free frame, or NULL before the thread's
 * first hooked call; end is the end of the frames, or NULL when ticks are
 * not TSC cycles, which sends every call to the general paths. Only
 * hook_rt.c and hook_tramp.S change them. */
struct hook_frame;
struct hook_tls {
	struct hook_frame *top;
	struct hook_frame *end;
};
extern __thread struct hook_tls hook_rt_tls
	__attribute__((tls_model("initial-exec")));

/* Prepares the per-thread shadow stacks (a thread-exit destructor).
 * Call once from hook_init(), before patching. Not hot. */
void hook_rt_init(void);

/* The hook index of the innermost hooked call this thread is in, or -1
 * when it is in none. Lock-free, close to hot (two TLS loads). */
int hook_rt_innermost(void);

/* Counters for hook_finish(): calls not timed for a full shadow stack,
 * and frames abandoned by longjmp. Lock-free. */
uint64_t hook_rt_overflows(void);
uint64_t hook_rt_lost(void);

/*
 * Before an exception unwinds (C++ throw, forced unwind): marks every
 * hooked frame of this thread whose call is running, so that
 * hook_rt_unwind_end() knows which calls the exception ends. Not hot;
 * signal-safe; keeps errno.
 */
void hook_rt_unwind_begin(void);

/*
 * After unwinding stopped with the stack pointer at sp (0: nothing was
 * unwound): records the marked frames below sp (their calls ended now),
 * pops every frame below sp, and clears the marks. Not hot; signal-safe;
 * keeps errno.
 */
void hook_rt_unwind_end(uintptr_t sp);

/* ---- ELF helpers (hook_elf.c) ------------------------------------------ */

/* What the patcher needs from one object's dynamic section. */
struct hook_dyn {
	const ElfW(Sym) * symtab;
	const char *strtab;
	const ElfW(Rela) * rela; /* DT_RELA            */
	size_t relasz;
	const ElfW(Rela) * jmprel; /* DT_JMPREL (RELA) */
	size_t jmprelsz;
	const uint32_t *gnuhash;
	const uint32_t *sysvhash;
	const uint16_t *versym;
	const ElfW(Verneed) * verneed; /* DT_VERNEED */
	size_t verneednum;
	const char *soname; /* NULL when absent */
};

/*
 * Reads the dynamic section of the object loaded at base. Returns 0, or
 * -ENOENT when it has none or uses REL instead of RELA relocations. Not
 * hot; does not allocate.
 */
int hook_elf_dyn(ElfW(Addr) base, const ElfW(Phdr) * phdr, int phnum,
		 struct hook_dyn *d);

/*
 * Returns the address of the default version of the function or object
 * name defined in the object at base with dynamic info d, or NULL, and
 * stores its STT_* type in *type (when type is not NULL). Does not run
 * ifunc resolvers. Not hot; does not allocate; safe inside
 * dl_iterate_phdr callbacks.
 */
void *hook_elf_lookup(ElfW(Addr) base, const struct hook_dyn *d,
		      const char *name, int *type);

/*
 * Returns non-zero when the object at base defines name without a version
 * (the way an interposer usually does). Not hot; does not allocate.
 */
int hook_elf_unversioned(ElfW(Addr) base, const struct hook_dyn *d,
			 const char *name);

/*
 * Returns the version (such as "GLIBC_2.2.5") that symbol si of d, an
 * undefined reference, asks for, or NULL when it asks for none. Not hot;
 * does not allocate.
 */
const char *hook_elf_version(const struct hook_dyn *d, uint32_t si);

/* ---- the patterns (hook_spec.c) ---------------------------------------- */

/* What the pattern that hooks a function says about its records. */
struct hook_match {
	uint8_t cat;	/* enum coll_cat                        */
	uint8_t status; /* it returns a status int (non-zero: error) */
	uint8_t naming; /* enum hook_naming: how its rows are named */
};

/* How a hooked function's rows and slices are named, and in which
 * section. */
enum hook_naming {
	HOOK_NAMING_SYMBOL = 0, /* the symbol, in "C API (<library>)"   */
	HOOK_NAMING_ATEN = 1,	/* "aten::<op>" (hook_aten.c), in "aten" */
};

/*
 * Takes spec (MXPROF_HOOK's value; NULL or "" means "@auto") as the
 * patterns. Returns 0, 1 when it is "none", or -EINVAL after one line on
 * stderr that names MXPROF_HOOK, the value and the accepted syntax (no
 * pattern is kept). Call once, from hook_init(); not thread-safe.
 */
int hook_spec_set(const char *spec);

/*
 * Returns 1 when s matches the shell glob pat ('*', '?', bracket
 * expressions with ranges, '!' or '^' and [:classes:], backslash escapes),
 * 0 otherwise: fnmatch(pat, s, 0)'s answer in the C locale, byte by byte
 * whatever the program's locale. No allocation, no lock; any thread
 * (hook_glob.c).
 */
int hook_glob_match(const char *pat, const char *s);

/* Forgets every pattern (hooking stays off). From hook_init() only. */
void hook_spec_clear(void);

/* An object called name (its soname, or file name) and file (its file
 * name) is loaded: the patterns whose LIBGLOB matches it become live.
 * Patcher's lock held; not hot. */
void hook_spec_lib_loaded(const char *name, const char *file);

/* Returns non-zero when some live pattern's SYMGLOB matches sym: the
 * patcher's first, cheap test of every relocation. Patcher's lock held. */
int hook_spec_wanted(const char *sym);

/*
 * Returns 1 and fills *m when a live pattern hooks function sym defined in
 * the object called name (soname) or file, 0 when none does or sym is one
 * of the functions never hooked (setjmp, the unwinder, ...). Patcher's
 * lock held; not hot.
 */
int hook_spec_match(const char *sym, const char *name, const char *file,
		    struct hook_match *m);

/* Marks every pattern that hooks sym, defined in the object called name
 * or file, as matched: hook_spec_report() stays quiet about it.
 * Patcher's lock held. */
void hook_spec_mark_matched(const char *sym, const char *name,
			    const char *file);

/* At exit: one line on stderr for each pattern the user named (not one
 * @auto implied) that matched no function, naming loaded libraries with
 * similar names; under @auto, one line when nothing was recorded
 * (hook_hint_empty()). Not signal-safe. */
void hook_spec_report(void);

/* ---- naming PyTorch's operators (hook_aten.c) --------------------------- */

struct hook_obj;

/*
 * Writes PyTorch's name of the operator whose entry point is sym
 * (at::_ops::<struct>::call, mangled), defined in def, into out:
 * "aten::<op>", without the overload, as torch.autograd.profiler names
 * it. Returns 0, or -1 when sym is not such an entry point or out is too
 * small. The first call for an object searches its read-only data for
 * the operators' names. Patcher's lock held; not hot; allocates.
 */
int hook_aten_name(const struct hook_obj *def, const char *sym, char *out,
		   size_t size);

/* ---- PyTorch's annotations and autograd rows (hook_torch.c) ------------ */

/*
 * @torch applies to def, a libtorch_cpu: registers mxprof's RecordFunction
 * callback(s) with it (once per object), so that its record_function ranges
 * become slices and rows of "torch annotations" and its autograd engine's
 * of "autograd". A release whose layout is not known is left alone, with
 * one line on stderr. Patcher's lock held; not hot.
 */
void hook_torch_attach(const struct hook_obj *def);

/*
 * The wrapper of torch::autograd::Engine::evaluate_function (engine,
 * graph task, node, input buffer, ready queue: all pointers or
 * references), which libtorch_cpu calls through its own PLT: times the
 * call as the slice "autograd::engine::evaluate_function: <Node>" and
 * the node's own slice inside it, the node's name being its virtual
 * name() (asked once per node type and thread), and calls the real
 * function (HOOK_ORIG_TORCH_EVAL). Any thread; close to hot (no
 * lock but a new name's first use on a thread); an exception passes
 * through it (its slice is then dropped).
 */
void hook_torch_evaluate_function(void *engine, void *task, void *node,
				  void *inputs, void *queue);

/*
 * The wrapper of at::_ops::detach::redispatch (the hidden return slot of
 * the at::Tensor it returns, the dispatch key set, the tensor), which
 * libtorch_cpu calls through its own PLT: an outer call with an inner
 * one on the same tensor is the autograd kernel's, timed as the slice
 * "detach" (section "autograd") that PyTorch's FUNCTION range of that
 * name stands for; calls the real function (HOOK_ORIG_TORCH_DETACH) and
 * returns ret. Any thread; close to hot (no lock, no allocation but the
 * thread's block); an exception passes through it (no slice then).
 */
void *hook_torch_detach(void *ret, uint64_t keys, const void *tensor);

/*
 * The wrapper of torch::autograd::impl::materialize_autograd_meta (the
 * tensor; returns its AutogradMeta*), which libtorch_cpu calls through
 * its own PLT: a call made while aten::detach_ is the innermost hooked
 * call is detach_'s autograd kernel's, timed as the slice "detach_"
 * (section "autograd") that PyTorch's FUNCTION range of that name stands
 * for; calls the real function (HOOK_ORIG_TORCH_META). Any thread;
 * close to hot (every tensor that starts needing autograd's data passes
 * here: a few loads and a branch); an exception passes through it.
 */
void *hook_torch_meta(const void *tensor);

/* ---- hints at exit (hook_hint.c) ---------------------------------------- */

/* When no thread recorded anything: one line on stderr saying so, with
 * presets (the presets @auto tried, as text) and the loaded libraries that
 * look like a framework's. covered(name) gives the preset @auto applied to
 * a library (NULL: none): such a library is named with its preset, and
 * when none is covered, each gets a pattern to try. At exit only. */
void hook_hint_empty(const char *presets,
		     const char *(*covered)(const char *name));

/* Writes into out the loaded libraries whose file names start like
 * libglob (up to its first '.' or wildcard, at least 4 characters), each
 * with the pattern libname:sym to try, and returns how many (0: out is
 * untouched). At exit only. */
int hook_hint_similar(const char *libglob, const char *sym, char *out,
		      size_t size);

/* ---- C++ names (hook_demangle.c) ---------------------------------------- */

/*
 * Returns the demangled name of sym (a malloc'd string for the caller to
 * free), or NULL when sym is no C++ name or libstdc++'s demangler was not
 * found yet. Any thread; not hot; allocates.
 */
char *hook_demangle(const char *sym);

/* libstdc++'s __cxa_demangle. hook_demangle_use() makes fn the demangler
 * unless one was set already; hook_demangle_ready() is non-zero once one
 * was. The object list (hook_obj.c) looks for it in each new object until
 * found. Neither can fail. */
typedef char *(*hook_demangle_fn)(const char *, char *, size_t *, int *);
void hook_demangle_use(hook_demangle_fn fn);
int hook_demangle_ready(void);

/* ---- the real functions behind the wrappers (hook_orig.c) --------------- */

/* The functions mxprof wraps, in this order: the dl family first. */
enum {
	HOOK_ORIG_DLOPEN,
	HOOK_ORIG_DLMOPEN,
	HOOK_ORIG_DLSYM,
	HOOK_ORIG_DLVSYM,
	HOOK_ORIG_DLCLOSE,
	HOOK_ORIG_RAISE,	/* _Unwind_RaiseException    */
	HOOK_ORIG_RETHROW,	/* _Unwind_Resume_or_Rethrow */
	HOOK_ORIG_FORCED,	/* _Unwind_ForcedUnwind      */
	HOOK_ORIG_BEGIN_CATCH,	/* __cxa_begin_catch        */
	HOOK_ORIG_TORCH_EVAL,	/* torch::autograd::Engine::evaluate_function */
	HOOK_ORIG_TORCH_DETACH, /* at::_ops::detach::redispatch */
	HOOK_ORIG_TORCH_META,	/* autograd's materialize_autograd_meta */
	HOOK_ORIG_COUNT,
};

/* Returns glibc's dl function i (HOOK_ORIG_DLOPEN .. HOOK_ORIG_DLCLOSE),
 * looked up in libc or libdl the first time, or NULL. Thread-safe; not
 * hot; safe before hook_init(). */
void *hook_orig_dl(int i);

/* Returns the real function i as known so far (the unwinder's once a GOT
 * entry of it was patched), or NULL. Lock-free. */
void *hook_orig_get(int i);

/* Learns p as the real function i, unless one is known already.
 * Patcher's lock held. */
void hook_orig_note(int i, void *p);

/* Returns the HOOK_ORIG_* index of the function called name, or -1 when
 * mxprof does not wrap it. Cheap for most names; never fails. */
int hook_orig_index(const char *name);

/*
 * Calls glibc's dl function i with the arguments a..d as if from caller
 * (an address in the calling object's code), and returns its result, or
 * NULL when it is not found. Not hot; as thread-safe as the function.
 */
void *hook_orig_call(int i, const void *caller, uintptr_t a, uintptr_t b,
		     uintptr_t c, uintptr_t d);

/* ---- the loaded objects (hook_obj.c) ------------------------------------ */

/* A loaded object as the patcher knows it. */
struct hook_obj {
	ElfW(Addr) base;
	const void *dyn; /* identity together with base */
	const ElfW(Phdr) * phdr;
	int phnum;
	uintptr_t xlo, xhi; /* executable segments            */
	uintptr_t rlo, rhi; /* PT_GNU_RELRO, page-aligned     */
	char name[256];	    /* soname, or the file's basename */
	char file[256];	    /* the file's basename            */
	char *path;	    /* the dynamic linker's name for it, or NULL */
	uint32_t group;	    /* "C API (name)", interned lazily */
	uint8_t skip;	    /* libmxprof, the dynamic linker or the vDSO */
	uint8_t seen;	    /* 2: new since the last sync, to be patched */
};

/* Learns the program's file name (the name of the nameless first object).
 * From hook_init(), before the first sync. */
void hook_obj_set_exe(void);

/*
 * Brings the list up to date with the dynamic linker's: forgets the
 * objects that were unloaded (retiring their hooks) and adds new ones with
 * seen = 2. Returns how many were added. An object that cannot be added
 * (no memory) stays unhooked. Invalidates pointers into the list.
 * Patcher's lock held; not hot; allocates.
 */
int hook_obj_sync(void);

/* The number of objects, and object i of them (0 <= i < count), as of the
 * last sync. Patcher's lock held. */
int hook_obj_count(void);
struct hook_obj *hook_obj_nth(int i);

/* Returns the object whose executable segments hold addr, or NULL.
 * Patcher's lock held. */
struct hook_obj *hook_obj_at(uintptr_t addr);

/* Returns the string id of o's table section, "C API (<name>)", interning
 * it the first time. Patcher's lock held; may allocate. */
uint32_t hook_obj_group(struct hook_obj *o);

/* Has an object been loaded or unloaded since the last sync, maybe by a
 * path that does not pass through the wrappers (another interposer's
 * dlopen)? One callback of dl_iterate_phdr: cheap. Patcher's lock held. */
int hook_obj_loads_changed(void);

/*
 * Keeps o loaded while it is patched: another thread's dlclose could
 * unmap it meanwhile. Returns 0 with *pin the handle to give to
 * hook_obj_unpin() after the patch (NULL when o is never unloaded, or
 * lives in another dlmopen namespace, where RTLD_NOLOAD does not find it),
 * or -1 when o is gone (or, with no other namespace made, not to be found
 * by its name: it is being unloaded, or was and is loaded again). Takes
 * the dynamic linker's lock; not hot.
 */
int hook_obj_pin(const struct hook_obj *o, void **pin);

/* Notes that a dlmopen loaded something into a namespace of its own: from
 * then on, an object RTLD_NOLOAD does not find may still be loaded there
 * (hook_obj_pin()). Any thread; not hot. This function can't fail. */
void hook_obj_namespace_made(void);

/* Lets go of a pin (NULL: nothing to do). When it was the last reference,
 * the object is unloaded now and its destructors run. */
void hook_obj_unpin(void *pin);

/* ---- GOT patching (hook_patch.c) ---------------------------------------- */

/*
 * Patches o's GOT: each entry of a function a live pattern matches points
 * at its stub, and each entry of a wrapped function (HOOK_ORIG_*) at
 * wrappers[i]. o must be pinned. Patcher's lock held; not hot; takes the
 * dynamic linker's lock (lazy entries are resolved with dlsym).
 */
void hook_patch_obj(struct hook_obj *o, void *const wrappers[HOOK_ORIG_COUNT]);

/*
 * Returns the stub of the function at target (called name, defined in
 * def, hooked as m says), hooking it now if it is not yet, and marks the
 * patterns that match it as matched; NULL when every stub is taken.
 * Patcher's lock held; not hot.
 */
void *hook_patch_stub_for(uintptr_t target, const char *name,
			  struct hook_obj *def, const struct hook_match *m);

/*
 * Returns non-zero when name, defined in def at address p, is a function
 * (or an ifunc's implementation): only functions are hooked, because a
 * stub in place of data would be read as the data. Not hot.
 */
int hook_patch_is_function(const struct hook_obj *def, const char *name,
			   uintptr_t p);

/* ---- what is loaded, and the patcher's lock (hook_dl.c) ------------------ */

/* Turns hooking on and patches every loaded object. From hook_init(). */
void hook_dl_start(void);

/* hook_fork_prepare(), hook_fork_parent() and hook_fork_child() for the
 * patcher's lock; same contracts. */
void hook_dl_fork_prepare(void);
void hook_dl_fork_parent(void);
void hook_dl_fork_child(void);

/* ---- the unwinder's wrappers (hook_unwind.c) ----------------------------- */

/*
 * _Unwind_RaiseException, _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind
 * and __cxa_begin_catch, as the patched GOT entries reach them: the real
 * function (hook_orig_get()), with the shadow stack told which hooked
 * calls the exception ends. Same contract and thread-safety as the real
 * ones; keep errno as the real ones leave it; never called by mxprof
 * itself.
 */
int hook_unwind_raise(void *exc);
int hook_unwind_rethrow(void *exc);
int hook_unwind_forced(void *exc, void *stop, void *arg);
void *hook_unwind_begin_catch(void *exc);

#endif /* MXPROF_HOOK_H */
