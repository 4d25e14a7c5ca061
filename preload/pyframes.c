/*
 * pyframes.c - the probe and the capture of the Python frame reader.
 *
 * The probe looks CPython up with dlsym, picks its version's table
 * (pyframes_versions.c) and publishes what it found. The capture, the hot
 * part, walks the calling thread's chain of frames from its thread state,
 * innermost first, reading memory only. pyframes.h says how the chain
 * differs from one CPython to the next.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pyframes.h"
#include "stack.h"

struct py_found pyframes_found;
int pyframes_ready;    /* pyframes_found is complete (release / acquire) */
static int py_unknown; /* a CPython of another version was found */
static int py_probing; /* a thread is in probe_once() */

/* ---- probe --------------------------------------------------------------- */

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

/* Fills pyframes_found. Returns 1 (found, ready to publish), 0 (no CPython) or
 * -ENOTSUP. */
static int probe_once(void)
{
	const struct py_layout *l;
	unsigned major, minor;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	void *eval;

	*(void **)&pyframes_found.this_tstate =
		dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!pyframes_found.this_tstate || version_of(&major, &minor) < 0) {
		return 0;
	}
	pyframes_found.code_type =
		(uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	pyframes_found.str_type =
		(uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	pyframes_found.bytes_type =
		(uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	pyframes_found.runtime = (uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime");
	*(void **)&pyframes_found.interp_head =
		dlsym(RTLD_DEFAULT, "PyInterpreterState_Head");
	*(void **)&pyframes_found.interp_next =
		dlsym(RTLD_DEFAULT, "PyInterpreterState_Next");
	*(void **)&pyframes_found.thread_head =
		dlsym(RTLD_DEFAULT, "PyInterpreterState_ThreadHead");
	*(void **)&pyframes_found.thread_next =
		dlsym(RTLD_DEFAULT, "PyThreadState_Next");
	if (!pyframes_found.code_type || !pyframes_found.str_type ||
	    !pyframes_found.bytes_type) {
		return 0;
	}
	l = pyframes_versions_layout(major, minor);
	if (!l) {
		return refuse(major, minor,
			      "is not known to the stack capture");
	}
	pyframes_found.l = *l;
	if (minor == 13 &&
	    pyframes_versions_check(&pyframes_found.l, pyframes_found.runtime) <
		    0) {
		return refuse(major, minor,
			      "is a build whose layout the stack capture "
			      "does not know");
	}
	eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	if (eval && dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) &&
	    sym) {
		pyframes_found.eval_lo = (uintptr_t)eval;
		pyframes_found.eval_hi = (uintptr_t)eval + sym->st_size;
	}
	return 1;
}

int py_stack_probe(void)
{
	int rc;

	if (__atomic_load_n(&pyframes_ready, __ATOMIC_ACQUIRE)) {
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
		__atomic_store_n(&pyframes_ready, 1, __ATOMIC_RELEASE);
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

/* Before 3.12: the calling thread's current thread state, which is in a
 * sub-interpreter while the thread runs code there, when the runtime
 * shows it (the thread holds the GIL, or was its last holder); else 0. */
static uintptr_t sub_tstate(const struct py_layout *l)
{
	uintptr_t rt = pyframes_found.runtime, me = (uintptr_t)pthread_self();

	if (l->rt_tstate_current < 0 || !rt) {
		return 0;
	}
	uintptr_t ts = rd_ptr(rt + (uintptr_t)l->rt_tstate_current);
	if (ptr_ok(ts) && rd_ptr(ts + (uintptr_t)l->ts_thread_id) == me) {
		return ts;
	}
	ts = rd_ptr(rt + (uintptr_t)l->rt_gil_holder);
	if (ptr_ok(ts) && rd_ptr(ts + (uintptr_t)l->ts_thread_id) == me) {
		return ts;
	}
	return 0;
}

unsigned py_stack_capture(struct py_frame *out, unsigned max)
{
	const struct py_layout *l = &pyframes_found.l;
	uintptr_t ts;

	if (!__atomic_load_n(&pyframes_ready, __ATOMIC_ACQUIRE) || max == 0) {
		return 0;
	}
	if (pyframes_found.runtime &&
	    rd_ptr(pyframes_found.runtime + l->rt_finalizing)) {
		return 0;
	}
	ts = sub_tstate(l);
	if (!ts) {
		ts = (uintptr_t)pyframes_found.this_tstate();
	}
	return py_stack_capture_ts(ts, out, max);
}

/* The word at a, read without faulting (a thread state freed meanwhile):
 * 0, or -1. pyframes*.c stand alone (tests link them without the rest). */
static int read_word(uintptr_t a, uintptr_t *v)
{
	struct iovec local = {v, sizeof(*v)}, remote = {(void *)a, sizeof(*v)};

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
			       (ssize_t)sizeof(*v)
		       ? 0
		       : -1;
}

uintptr_t py_stack_tstate_of(int tid)
{
	const struct py_found *p = &pyframes_found;
	int off = p->l.ts_native_id;
	unsigned guard = 0;

	if (!__atomic_load_n(&pyframes_ready, __ATOMIC_ACQUIRE) || off < 0 ||
	    !p->interp_head || !p->interp_next || !p->thread_head ||
	    !p->thread_next ||
	    (p->runtime && rd_ptr(p->runtime + p->l.rt_finalizing))) {
		return 0;
	}
	for (void *in = p->interp_head(); in && guard < 4096;
	     in = p->interp_next(in)) {
		for (void *ts = p->thread_head(in); ts && ++guard < 4096;
		     ts = p->thread_next(ts)) {
			uintptr_t id;
			if (ptr_ok((uintptr_t)ts) &&
			    read_word((uintptr_t)ts + (uintptr_t)off, &id) ==
				    0 &&
			    id == (uintptr_t)tid) {
				return (uintptr_t)ts;
			}
		}
	}
	return 0;
}

unsigned py_stack_capture_ts(uintptr_t ts, struct py_frame *out, unsigned max)
{
	const struct py_layout *l = &pyframes_found.l;
	uintptr_t f;
	unsigned n = 0, steps = 0, limit;
	int kept = 0; /* the frame before f in the chain is out[n - 1] */

	if (!__atomic_load_n(&pyframes_ready, __ATOMIC_ACQUIRE) || max == 0 ||
	    !ptr_ok(ts)) {
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
		    rd_ptr(code + PY_OB_TYPE) != pyframes_found.code_type) {
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
	if (!__atomic_load_n(&pyframes_ready, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	return ip >= pyframes_found.eval_lo && ip < pyframes_found.eval_hi;
}
