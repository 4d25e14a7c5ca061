/*
 * hook_spec.c - MXPROF_HOOK: the patterns that say which functions to
 * time, the presets they may name, and the functions never hooked.
 *
 * A pattern is LIBGLOB:SYMGLOB, two shell globs (hook_glob.c): one on the
 * defining object's soname or file name, one on the function's name. A preset
 * (@mxnet, @cudart, ...) stands for patterns with their own category and
 * status rule; @auto stands for every preset, and such "implied" patterns
 * are never reported as unmatched, because the program need not load
 * their libraries.
 *
 * A pattern is "live" once an object its LIBGLOB matches has been loaded:
 * the patcher asks hook_spec_wanted() about every relocation of every
 * object, and checking only live patterns keeps that cheap while the
 * program has not loaded the libraries the patterns name.
 *
 * Everything here runs under the patcher's lock (hook_dl.c), except
 * hook_spec_set(), called once from hook_init(), and hook_spec_report(),
 * called at exit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "hook.h"

#define HOOK_PATS 64

/* One LIBGLOB:SYMGLOB pattern. */
struct pat {
	char lib[128];
	char sym[128];
	char text[160];	 /* as the user wrote it, for messages */
	uint8_t cat;	 /* enum coll_cat                      */
	uint8_t status;	 /* returns a status int               */
	uint8_t naming;	 /* enum hook_naming                   */
	uint8_t cxx;	 /* sym is a C++ name: match demangled */
	int8_t preset;	 /* index in presets[], or -1          */
	uint8_t implied; /* from @auto: never reported unmatched */
	uint8_t live;	 /* its library is loaded (this scan)  */
	int matched;
};

/* A preset: @name stands for the patterns of every entry of that name. */
struct preset {
	const char *name;
	const char *lib;
	const char *sym;
	const char *cat; /* the trace category (cat.c) */
	uint8_t status;
	uint8_t naming; /* enum hook_naming */
};

/*
 * @torch times ATen's operators at their entry points,
 * at::_ops::<op>_<overload>::call (not ::redispatch, which runs once per
 * dispatch key of one call), named and categorized as PyTorch's profiler
 * and Kineto do: "aten::<op>", cat "cpu_op".
 */
static const struct preset presets[] = {
	{"mxnet", "libmxnet.so", "MX*", "c_api", 1, 0},
	{"torch", "libtorch_cpu.so*", "_ZN2at4_ops*4callE*", "cpu_op", 0,
	 HOOK_NAMING_ATEN},
	/* BLAS: the C interface and the Fortran matrix products, in
	 * OpenBLAS (Debian's is libblas.so.3), the reference BLAS, MKL's
	 * single dynamic library and BLIS. */
	{"blas", "lib*blas*.so*", "cblas_*", "c_api", 0, 0},
	{"blas", "lib*blas*.so*", "*gemm_", "c_api", 0, 0},
	{"blas", "libmkl_rt.so*", "cblas_*", "c_api", 0, 0},
	{"blas", "libmkl_rt.so*", "*gemm_", "c_api", 0, 0},
	{"blas", "libblis*.so*", "cblas_*", "c_api", 0, 0},
	{"blas", "libblis*.so*", "*gemm_", "c_api", 0, 0},
	{"cudart", "libcudart.so*", "cuda*", "cuda_runtime", 1, 0},
	{"cublas", "libcublas*.so*", "cublas*", "c_api", 0, 0},
	{"cudnn", "libcudnn*.so*", "cudnn*", "c_api", 0, 0},
	{"nccl", "libnccl*.so*", "nccl*", "c_api", 0, 0},
};

/* Functions of a status preset that return a string instead. */
static const char *const nostatus[] = {"*GetErrorString", "*GetErrorName",
				       "MXGetLastError"};

/*
 * Functions never hooked, whatever the pattern: those that return twice or
 * share their stack with another context (a replaced return address would
 * be used twice, or by the wrong side), those that never return normally
 * or run before anything is set up, and the unwinder's and C++ runtime's
 * own machinery.
 */
static const char *const never[] = {
	"vfork",	"__vfork",	     "*setjmp*",	  "getcontext",
	"setcontext",	"swapcontext",	     "makecontext",	  "clone",
	"clone3",	"__clone*",	     "__libc_start_main", "_Unwind_*",
	"__cxa_*",	"__gxx_*",	     "__tls_get_addr",	  "_dl_*",
	"pthread_exit", "__pthread_unwind*",
};

static const char syntax[] =
	"LIBGLOB:SYMGLOB[,...] (fnmatch globs on the defining library's "
	"file name and the symbol), @auto, @mxnet, @torch, @blas, @cudart, "
	"@cublas, @cudnn, @nccl, or none";

static struct pat pats[HOOK_PATS];
static int npats;

static void trim(char *s)
{
	char *e = s + strlen(s);
	char *b = s;

	while (e > s && (e[-1] == ' ' || e[-1] == '\t')) {
		*--e = 0;
	}
	while (*b == ' ' || *b == '\t') {
		b++;
	}
	memmove(s, b, strlen(b) + 1);
}

static int add_pat(const char *lib, const char *sym, const char *text,
		   uint8_t cat, uint8_t status, uint8_t naming, uint8_t implied)
{
	struct pat *p;

	if (npats >= HOOK_PATS || strlen(lib) >= sizeof(p->lib) ||
	    strlen(sym) >= sizeof(p->sym)) {
		return -EINVAL;
	}
	p = &pats[npats++];
	memset(p, 0, sizeof(*p));
	strcpy(p->lib, lib);
	strcpy(p->sym, sym);
	snprintf(p->text, sizeof(p->text), "%s", text);
	p->cat = cat;
	p->status = status;
	p->naming = naming;
	p->implied = implied;
	p->cxx = strstr(sym, "::") != NULL || strchr(sym, '(') != NULL;
	p->preset = -1;
	return 0;
}

/* Adds the patterns of preset item ("@name" or "@auto"). Returns 0 or
 * -EINVAL. */
static int add_preset(const char *item)
{
	size_t n = sizeof(presets) / sizeof(presets[0]);
	int is_auto = strcmp(item + 1, "auto") == 0;
	int found = 0;

	for (size_t k = 0; k < n; k++) {
		const struct preset *ps = &presets[k];

		if (!is_auto && strcmp(item + 1, ps->name) != 0) {
			continue;
		}
		if (add_pat(ps->lib, ps->sym, item, (uint8_t)cat_id(ps->cat),
			    ps->status, ps->naming, is_auto) != 0) {
			return -EINVAL;
		}
		pats[npats - 1].preset = (int8_t)k;
		found = 1;
	}
	return found ? 0 : -EINVAL;
}

/* Returns non-zero when s holds a ':' that is not half of a "::" (a C++
 * name's scope). */
static int lone_colon(const char *s)
{
	for (const char *c = strchr(s, ':'); c; c = strchr(c + 1, ':')) {
		if (c[1] == ':') {
			c++;
		} else {
			return 1;
		}
	}
	return 0;
}

/* Parses spec into pats. Returns 1 for "none", 0, or -EINVAL. */
static int parse_spec(const char *spec)
{
	char buf[4096];
	char *save = NULL;
	int n = 0;

	if (!spec || !*spec) {
		spec = "@auto";
	}
	if (strlen(spec) >= sizeof(buf)) {
		return -EINVAL;
	}
	strcpy(buf, spec);
	trim(buf);
	if (strcmp(buf, "none") == 0) {
		return 1;
	}
	for (char *it = strtok_r(buf, ",", &save); it;
	     it = strtok_r(NULL, ",", &save)) {
		trim(it);
		n++;
		if (it[0] == '@') {
			if (add_preset(it) != 0) {
				return -EINVAL;
			}
			continue;
		}
		char *colon = strchr(it, ':');

		if (!colon || colon == it || !colon[1] ||
		    lone_colon(colon + 1)) {
			return -EINVAL;
		}
		*colon = 0;
		trim(it);
		trim(colon + 1);
		if (!*it || !colon[1]) {
			return -EINVAL;
		}
		char text[300];

		snprintf(text, sizeof(text), "%s:%s", it, colon + 1);
		if (add_pat(it, colon + 1, text, COLL_CAT_CAPI, 0, 0, 0) != 0) {
			return -EINVAL;
		}
	}
	return n > 0 ? 0 : -EINVAL;
}

int hook_spec_set(const char *spec)
{
	int rc = parse_spec(spec);

	if (rc < 0) {
		fprintf(stderr,
			"mxprof: MXPROF_HOOK='%s' is not valid; accepted: %s; "
			"C API hooking is off\n",
			spec, syntax);
		npats = 0;
	}
	return rc;
}

void hook_spec_clear(void)
{
	npats = 0;
}

/* Does p's LIBGLOB match the object called name (soname) or file? */
static int lib_matches(const struct pat *p, const char *name, const char *file)
{
	return hook_glob_match(p->lib, name) || hook_glob_match(p->lib, file);
}

void hook_spec_lib_loaded(const char *name, const char *file)
{
	for (int i = 0; i < npats; i++) {
		if (!pats[i].live && lib_matches(&pats[i], name, file)) {
			pats[i].live = 1;
		}
	}
}

/*
 * A symbol as the patterns see it: its name, and its demangled name, made
 * the first time a C++ pattern asks for it (NULL when it is no C++ name).
 */
struct sym_names {
	const char *sym;
	char *dem;
	int tried;
};

static int sym_matches(const struct pat *p, struct sym_names *s)
{
	if (!p->cxx) {
		return hook_glob_match(p->sym, s->sym);
	}
	if (!s->tried) {
		s->dem = hook_demangle(s->sym);
		s->tried = 1;
	}
	return s->dem && hook_glob_match(p->sym, s->dem);
}

static int never_hooked(const char *sym)
{
	for (size_t k = 0; k < sizeof(never) / sizeof(*never); k++) {
		if (hook_glob_match(never[k], sym)) {
			return 1;
		}
	}
	return 0;
}

int hook_spec_match(const char *sym, const char *name, const char *file,
		    struct hook_match *m)
{
	struct sym_names sn = {sym, NULL, 0};

	if (never_hooked(sym)) {
		return 0;
	}
	for (int i = 0; i < npats; i++) {
		const struct pat *p = &pats[i];

		if (!p->live || !lib_matches(p, name, file) ||
		    !sym_matches(p, &sn)) {
			continue;
		}
		m->cat = p->cat;
		m->status = p->status;
		m->naming = p->naming;
		for (size_t k = 0;
		     m->status && k < sizeof(nostatus) / sizeof(*nostatus);
		     k++) {
			if (hook_glob_match(nostatus[k], sym)) {
				m->status = 0;
			}
		}
		free(sn.dem);
		return 1;
	}
	free(sn.dem);
	return 0;
}

int hook_spec_wanted(const char *sym)
{
	struct sym_names sn = {sym, NULL, 0};
	int r = 0;

	for (int i = 0; i < npats && !r; i++) {
		r = pats[i].live && sym_matches(&pats[i], &sn);
	}
	free(sn.dem);
	return r;
}

void hook_spec_mark_matched(const char *sym, const char *name, const char *file)
{
	struct sym_names sn = {sym, NULL, 0};

	for (int i = 0; i < npats; i++) {
		struct pat *p = &pats[i];

		if (!p->matched && lib_matches(p, name, file) &&
		    sym_matches(p, &sn)) {
			p->matched = 1;
		}
	}
	free(sn.dem);
}

/* The name of the preset p comes from, or "". */
static const char *preset_of(const struct pat *p)
{
	return p->preset >= 0 ? presets[p->preset].name : "";
}

/* Did some pattern written as text (one preset stands for several) match
 * a function, or was one before i reported already? */
static int text_done(int i)
{
	for (int k = 0; k < npats; k++) {
		if (strcmp(pats[k].text, pats[i].text) == 0 &&
		    (pats[k].matched || (k < i && !pats[k].implied))) {
			return 1;
		}
	}
	return 0;
}

/* The preset that @auto applied to the library whose file name is name,
 * or NULL (hook_hint_empty()'s question). */
static const char *implied_preset(const char *name)
{
	for (int i = 0; i < npats; i++) {
		if (pats[i].implied && hook_glob_match(pats[i].lib, name)) {
			return preset_of(&pats[i]);
		}
	}
	return NULL;
}

void hook_spec_report(void)
{
	char names[256] = "";
	size_t used = 0;
	int is_auto = 0;

	for (int i = 0; i < npats; i++) {
		const struct pat *p = &pats[i];
		char similar[1024];

		if (p->implied) {
			/* Each preset once, in the table's order. */
			int seen = 0;

			for (int k = 0; k < i; k++) {
				seen |= pats[k].implied &&
					preset_of(&pats[k]) == preset_of(p);
			}
			if (!seen && used < sizeof(names)) {
				int k = snprintf(names + used,
						 sizeof(names) - used, "%s@%s",
						 used ? ", " : "",
						 preset_of(p));

				used += k > 0 ? (size_t)k : 0;
			}
			is_auto = 1;
			continue;
		}
		if (p->matched || text_done(i)) {
			continue;
		}
		if (p->text[0] != '@' &&
		    hook_hint_similar(p->lib, p->sym, similar,
				      sizeof(similar)) > 0) {
			fprintf(stderr,
				"mxprof: MXPROF_HOOK pattern '%s' matched no "
				"function; loaded libraries with similar "
				"names: %s\n",
				p->text, similar);
		} else {
			fprintf(stderr,
				"mxprof: MXPROF_HOOK pattern '%s' matched no "
				"function\n",
				p->text);
		}
	}
	if (is_auto) {
		hook_hint_empty(names, implied_preset);
	}
}
