/*
 * hook.h - the C API hook engine: MXPROF_HOOK patterns, GOT patching of
 * every loaded object, the dlopen/dlsym family, and the return-address
 * trampolines that time each hooked call.
 *
 * How a call is timed (x86-64 only):
 *
 *   caller --GOT--> stub[i] (hook_tramp.S)
 *        stopped: tail jump to hook_real[i]            (one load, one branch)
 *        running: hook_tramp_enter (or hook_rt_enter() when unusual)
 *                 pushes a shadow frame; the stub then calls the real
 *                 function so that it returns into the stub, which goes on
 *                 to hook_tramp_leave. That pops the frame, pushes one
 *                 record (or has hook_rt_exit() do both when unusual) and
 *                 returns to the saved address.
 *
 * hook.c owns the patterns and the patching, hook_rt.c the per-thread
 * shadow stack, hook_elf.c the ELF dynamic-section reading, and
 * hook_tramp.S the machine code.
 */
#ifndef MXPROF_HOOK_H
#define MXPROF_HOOK_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the interface the library's constructor uses ---------------------- */

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
 * user named that matched no function, and one line if calls went untimed
 * because a shadow stack was full. Not signal-safe.
 */
void hook_finish(void);

/*
 * Child side of fork(): re-initialises the patcher's lock (another thread
 * may have held it). The forking thread's shadow stack stays valid in the
 * child, so it is kept. Fork-safe; call only in the child.
 */
void hook_after_fork_child(void);

/* The engine as a collector source (collector.h): hook_finish() at exit
 * and the fork handler. Registered by the constructor after hook_init(). */
struct coll_source;
extern const struct coll_source hook_source;

/* ---- shared between hook*.c and hook_tramp.S --------------------------- */

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
	uint8_t pad[7];
};

/* The real address of hooked function i, read by the trampolines. */
extern void *hook_real[HOOK_MAX];
/* Per-function facts for the exit path. */
extern struct hook_ent hook_ents[HOOK_MAX];

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

/*
 * HOT, async-signal-safe. Called by the trampoline on entry to hooked
 * function idx whose return address is at *slot. Pushes a shadow frame,
 * stores hook_resume_addr(idx) in *slot and returns 1; the stub's call
 * then stores hook_exit_addr(idx) there. Returns 0 when the call goes
 * untimed (the shadow stack is full, or could not be mapped: counted),
 * with *slot left alone.
 */
int hook_rt_enter(uint32_t idx, uintptr_t *slot);

/*
 * HOT, async-signal-safe. Called by hook_tramp_leave when its own common
 * case does not apply (hook_tramp.S); slot is where the
 * return address was and rax the function's integer result. Pops the
 * matching shadow frame (dropping frames a longjmp skipped), pushes the
 * record, keeps errno, and returns the original return address.
 */
uintptr_t hook_rt_exit(uintptr_t *slot, uintptr_t rax);

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

/* Counters for hook_finish(): calls not timed for a full shadow stack,
 * and frames abandoned by longjmp. Lock-free. */
uint64_t hook_rt_overflows(void);
uint64_t hook_rt_lost(void);

/*
 * Before an exception unwinds (C++ throw, forced unwind): writes the real
 * return addresses back into every hooked frame of this thread so that the
 * unwinder can walk them. Not hot; signal-safe.
 */
void hook_rt_unwind_begin(void);

/*
 * After unwinding stopped with the stack pointer at sp (0: nothing was
 * unwound): records and pops the frames below sp, and re-arms the frames
 * that survive. Not hot; signal-safe.
 */
void hook_rt_unwind_end(uintptr_t sp);

/* ---- ELF helpers (hook_elf.c) ------------------------------------------ */

/* What hook.c needs from one object's dynamic section. */
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

#endif /* MXPROF_HOOK_H */
