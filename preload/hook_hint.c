/*
 * hook_hint.c - never silently empty: what to try when hooking found
 * nothing.
 *
 * At exit, a run that recorded nothing under the default @auto (no ring
 * attached and no GPU activity either: coll_recorded_any()) says so in one
 * line: the presets it tried, and the loaded libraries that look like a
 * framework's or a BLAS (libtorch*, libmxnet*, ...). One that a preset
 * covers is named with it ("timed by @torch": the preset applied, and the
 * program made none of those calls while recording); when no loaded
 * library is covered, each gets a pattern to try. A library of a covered
 * framework gets no pattern: `libtorch.so:*` would hook every function of
 * the framework, where its preset already applies. A pattern of the user's that
 * matched no function gets, on its own line, the loaded libraries whose names
 * start like its LIBGLOB
 * (`libtorch_cpu.so:` matches nothing when the file is
 * libtorch_cpu.so.1.13).
 *
 * Runs at exit only (hook_finish()); reads the loaded objects with
 * dl_iterate_phdr, not the patcher's list, so it takes no lock of
 * mxprof's. Not hot; not signal-safe.
 */
#include <stdio.h>
#include <string.h>

#include "source.h"
#include "hook.h"

/* Library names that look like a framework's or a BLAS. */
static const char *const frameworks[] = {
	"libtorch*",	"libc10*",	   "libmxnet*", "libjax*",
	"libxla*",	"libonnxruntime*", "libtf*",	"libtensorflow*",
	"libopenblas*", "libblas*",	   "libmkl*",	"libblis*",
	"libcublas*",	"libcudnn*",
};

struct walk {
	char *out;
	size_t n, used;
	const char *stem; /* similar names: those starting with it */
	const char *sym;  /* the pattern's SYMGLOB */
	int found;
	/* framework_cb: the preset @auto applied to a library, or NULL;
	 * try: give a pattern to try (no library is covered) */
	const char *(*covered)(const char *name);
	int try;
};

static void add(struct walk *w, const char *fmt, const char *a, const char *b)
{
	if (w->used < w->n) {
		int k = snprintf(w->out + w->used, w->n - w->used, fmt, a, b);

		w->used += k > 0 ? (size_t)k : 0;
	}
}

static int framework_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : 0;

	(void)size;
	name = name ? name + 1 : info->dlpi_name;
	if (!name || !*name || w->found >= 4) {
		return 0;
	}
	for (size_t k = 0; k < sizeof(frameworks) / sizeof(*frameworks); k++) {
		if (hook_glob_match(frameworks[k], name)) {
			const char *pre = w->covered(name);

			add(w, "%s%s", w->found ? ", " : "", name);
			if (pre) {
				add(w, " (timed by @%s)", pre, "");
			} else if (w->try) {
				add(w, " (try MXPROF_HOOK='%s:*')", name, "");
			}
			w->found++;
			break;
		}
	}
	return 0;
}

/* Clears w->try when a loaded library looks like a framework's and a
 * preset covers it. */
static int covered_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : 0;

	(void)size;
	name = name ? name + 1 : info->dlpi_name;
	if (!name || !*name) {
		return 0;
	}
	for (size_t k = 0; k < sizeof(frameworks) / sizeof(*frameworks); k++) {
		if (hook_glob_match(frameworks[k], name) && w->covered(name)) {
			w->try = 0;
			break;
		}
	}
	return 0;
}

void hook_hint_empty(const char *presets,
		     const char *(*covered)(const char *name))
{
	char libs[1024] = "";
	struct walk w = {libs, sizeof(libs), 0, NULL, NULL, 0, covered, 1};

	if (coll_recorded_any()) {
		return;
	}
	dl_iterate_phdr(covered_cb, &w);
	dl_iterate_phdr(framework_cb, &w);
	fprintf(stderr,
		"mxprof: nothing was recorded; MXPROF_HOOK=@auto tried "
		"%s%s%s\n",
		presets,
		w.found ? "; loaded: "
			: ", whose libraries are not "
			  "loaded, and no framework "
			  "library is loaded",
		libs);
}

static int similar_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : 0;

	(void)size;
	name = name ? name + 1 : info->dlpi_name;
	if (!name || !*name || w->found >= 4 ||
	    strncmp(name, w->stem, strlen(w->stem)) != 0) {
		return 0;
	}
	add(w, "%s%s", w->found ? ", " : "", name);
	add(w, " (try '%s:%s')", name, w->sym);
	w->found++;
	return 0;
}

int hook_hint_similar(const char *libglob, const char *sym, char *out,
		      size_t size)
{
	char stem[128];
	size_t n = strcspn(libglob, ".*?[");
	struct walk w = {out, size, 0, stem, sym, 0, NULL, 0};

	if (n < 4 || n >= sizeof(stem)) {
		return 0;
	}
	memcpy(stem, libglob, n);
	stem[n] = 0;
	out[0] = 0;
	dl_iterate_phdr(similar_cb, &w);
	return w.found;
}
