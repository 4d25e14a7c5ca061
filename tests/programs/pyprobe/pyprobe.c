/*
 * pyprobe.c - drives preload/pyframes*.c from inside a Python process for
 * tests/integration/python_frames.sh. Built there as a shared library with
 * build/obj/preload/pyframes*.o linked in, and loaded by the test's script
 * through ctypes: CDLL (the GIL released around each call) or PyDLL (the
 * GIL held). With -DPYPROBE_MAIN it is instead a program that checks the
 * capture in a process without Python.
 *
 * With PYPROBE_CTOR set in the environment and the library in LD_PRELOAD,
 * its constructor probes and captures before the interpreter starts;
 * pyprobe_ctor() gives what it saw.
 */
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stack.h"

#define PYPROBE_MAX 256

static int ctor_probe = -100;
static int ctor_frames = -100;

__attribute__((constructor)) static void pyprobe_init(void)
{
	struct py_frame f[8];

	if (getenv("PYPROBE_CTOR")) {
		ctor_probe = py_stack_probe();
		ctor_frames = (int)py_stack_capture(f, 8);
	}
}

/* Writes "PROBE FRAMES" of the constructor's run into buf. */
void pyprobe_ctor(char *buf, int len)
{
	snprintf(buf, (size_t)len, "%d %d", ctor_probe, ctor_frames);
}

int pyprobe_probe(void)
{
	return py_stack_probe();
}

/* How many native frames of this call's stack lie in the evaluation
 * function (return addresses, so one byte back). */
static int native_evals(void)
{
	void *ip[512];
	int n = backtrace(ip, 512), evals = 0;

	for (int i = 0; i < n; i++) {
		evals += py_stack_is_eval((uintptr_t)ip[i] - 1) != 0;
	}
	return evals;
}

/*
 * Captures the calling thread's Python frames (at most max) and writes one
 * line a frame, innermost first, "ENTRY NAME", then "evals N": the native
 * frames in the evaluation function. Returns the number of frames, or -1
 * when a frame cannot be described.
 */
int pyprobe_stack(char *buf, int len, int max)
{
	struct py_frame f[PYPROBE_MAX];
	char name[512], file[1024];
	unsigned n;
	int at = 0, rc = 0, evals = native_evals();

	if (max > PYPROBE_MAX) {
		max = PYPROBE_MAX;
	}
	n = py_stack_capture(f, (unsigned)max);
	buf[0] = '\0';
	for (unsigned i = 0; i < n && at < len; i++) {
		if (py_frame_describe(&f[i], name, sizeof(name), file,
				      sizeof(file)) < 0) {
			rc = -1;
		}
		at += snprintf(buf + at, (size_t)(len - at), "%u %s\n",
			       f[i].entry, name);
	}
	if (at < len) {
		snprintf(buf + at, (size_t)(len - at), "evals %d\n", evals);
	}
	return rc < 0 ? rc : (int)n;
}

/* py_frame_describe() of a code object given by address (id()). */
int pyprobe_describe(uintptr_t code, unsigned offset, char *name, int nlen,
		     char *file, int flen)
{
	struct py_frame f = {.code = code, .offset = offset, .entry = 0};

	return py_frame_describe(&f, name, (size_t)nlen, file, (size_t)flen);
}

/* Times n captures of up to 64 frames; the depth seen goes to *depth
 * (-1 when it changed between captures). Returns ns per capture. */
double pyprobe_bench(int n, int *depth)
{
	struct py_frame f[64];
	struct timespec t0, t1;
	unsigned d = py_stack_capture(f, 64);

	*depth = (int)d;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		if (py_stack_capture(f, 64) != d) {
			*depth = -1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		(double)(t1.tv_nsec - t0.tv_nsec)) /
	       n;
}

#ifdef PYPROBE_MAIN
int main(void)
{
	struct py_frame f[8] = {{.code = (uintptr_t)&f, .offset = 0}};
	char name[64], file[64];
	int probe = py_stack_probe();
	unsigned n = py_stack_capture(f, 8);
	int d = py_frame_describe(&f[0], name, sizeof(name), file,
				  sizeof(file));

	printf("probe=%d frames=%u describe=%d name=%s file=%s eval=%d\n",
	       probe, n, d, name, file, py_stack_is_eval((uintptr_t)main));
	return 0;
}
#endif
