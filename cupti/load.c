/*
 * load.c - finding the libcupti that belongs to the program's CUDA.
 *
 * Order, first that opens wins:
 *  1. a libcupti the program already loaded;
 *  2. beside the CUDA libraries the program loaded (libcudart*, libcuda*):
 *     the same folder, ../extras/CUPTI/lib64 (a toolkit) and
 *     ../../cuda_cupti/lib (PyTorch's nvidia/ wheels);
 *  3. $CUDA_HOME/extras/CUPTI/lib64, $CUDA_HOME/lib64, $CUDA_HOME/lib
 *     ($CUDA_HOME defaults to /usr/local/cuda: a program linked with the
 *     static cudart loads only libcuda, from the driver's folder);
 *  4. the loader's search path: libcupti.so.13, libcupti.so.
 * In a folder, "libcupti.so.<major of the cudart beside it>" comes first,
 * then any "libcupti.so*".
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"

struct scan {
	char cupti[4096];   /* an already loaded libcupti */
	char dirs[8][4096]; /* folders of loaded CUDA libraries */
	char major[8][16];  /* their soname's major, "" if none */
	int ndirs;
	int cuda;	    /* a libcuda* or libcudart* is loaded */
	char libs[8][4096]; /* the loaded CUDA libraries' paths */
	int nlibs;
};

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct scan *s = ctx;
	const char *path = info->dlpi_name;
	const char *base = path ? strrchr(path, '/') : NULL;

	(void)size;
	base = base ? base + 1 : path;
	if (!base || !*base) {
		return 0;
	}
	if (starts(base, "libcupti.so")) {
		snprintf(s->cupti, sizeof(s->cupti), "%s", path);
		return 0;
	}
	if (!starts(base, "libcudart") && !starts(base, "libcuda.so")) {
		return 0;
	}
	s->cuda = 1;
	if (s->nlibs < 8) {
		snprintf(s->libs[s->nlibs++], sizeof(s->libs[0]), "%s", path);
	}
	if (s->ndirs < 8 && base != path) {
		int k = s->ndirs++;
		snprintf(s->dirs[k], sizeof(s->dirs[k]), "%.*s",
			 (int)(base - path - 1), path);
		const char *so = strstr(base, ".so.");
		snprintf(s->major[k], sizeof(s->major[k]), "%s",
			 so ? so + 4 : "");
		s->major[k][strcspn(s->major[k], ".")] = 0;
	}
	return 0;
}

static void *try_open(const char *path, char *out, unsigned long len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (h) {
		snprintf(out, len, "%s", path);
	}
	return h;
}

/* Opens a libcupti in dir: the one of major first, then any. */
static void *open_in(const char *dir, const char *major, char *out,
		     unsigned long len)
{
	char path[4400];
	void *h = NULL;

	if (*major) {
		snprintf(path, sizeof(path), "%s/libcupti.so.%s", dir, major);
		if ((h = try_open(path, out, len))) {
			return h;
		}
	}
	DIR *d = opendir(dir);
	if (!d) {
		return NULL;
	}
	struct dirent *e;
	while (!h && (e = readdir(d))) {
		if (starts(e->d_name, "libcupti.so")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			h = try_open(path, out, len);
		}
	}
	closedir(d);
	return h;
}

void *cupti_load_library(char *path, unsigned long len)
{
	static const char *const rel[] = {"", "/../extras/CUPTI/lib64",
					  "/../../cuda_cupti/lib"};
	static const char *const home_rel[] = {"/extras/CUPTI/lib64", "/lib64",
					       "/lib"};
	struct scan *s = calloc(1, sizeof(*s));
	char dir[4400];
	void *h = NULL;

	if (!s) {
		return NULL;
	}
	dl_iterate_phdr(on_object, s);
	if (s->cupti[0]) {
		h = try_open(s->cupti, path, len);
	}
	for (int i = 0; !h && i < s->ndirs; i++) {
		for (size_t k = 0; !h && k < sizeof(rel) / sizeof(*rel); k++) {
			snprintf(dir, sizeof(dir), "%s%s", s->dirs[i], rel[k]);
			h = open_in(dir, s->major[i], path, len);
		}
	}
	const char *home = getenv("CUDA_HOME");
	if (!home || !*home) {
		home = "/usr/local/cuda";
	}
	for (size_t k = 0;
	     !h && home && *home && k < sizeof(home_rel) / sizeof(*home_rel);
	     k++) {
		snprintf(dir, sizeof(dir), "%s%s", home, home_rel[k]);
		h = open_in(dir, "", path, len);
	}
	if (!h) {
		h = try_open("libcupti.so.13", path, len);
	}
	if (!h) {
		h = try_open("libcupti.so", path, len);
	}
	free(s);
	return h;
}

/*
 * The drain thread asks cupti_cuda_loaded() every tick, and a PyTorch
 * process has hundreds of objects: the walk is made again only when the
 * loader's counts of objects added and removed (dl_iterate_phdr gives
 * them with the first object) changed since the last one. Otherwise the
 * first callback stops it, and the last answer stands.
 */
struct probe {
	unsigned long long adds, subs; /* the loader's counts, this walk */
	int first;		       /* the next object is the first  */
	int same;		       /* the counts had not changed     */
	int cuda;		       /* a CUDA library was seen        */
};

static struct {
	unsigned long long adds, subs;
	int valid, cuda;
} seen;

static int is_cuda(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct probe *p = ctx;
	const char *path = info->dlpi_name;
	const char *base = path ? strrchr(path, '/') : NULL;

	if (p->first) {
		p->first = 0;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
				    sizeof(info->dlpi_subs)) {
			p->adds = info->dlpi_adds;
			p->subs = info->dlpi_subs;
			if (seen.valid && seen.adds == p->adds &&
			    seen.subs == p->subs) {
				p->same = 1;
				return 1;
			}
		}
	}
	base = base ? base + 1 : path;
	p->cuda = base &&
		  (starts(base, "libcudart") || starts(base, "libcuda.so"));
	return p->cuda;
}

/* A walk of the loaded objects' names, or of the first one only when
 * none came or went since the last call: no allocation, no system
 * call. */
int cupti_cuda_loaded(void)
{
	struct probe p = {.first = 1};

	dl_iterate_phdr(is_cuda, &p);
	if (p.same) {
		return seen.cuda;
	}
	/* A walk stopped at a CUDA library: the answer is yes until the
	 * counts change. Counts unknown (an old loader): never cached. */
	seen.valid = p.adds != 0;
	seen.adds = p.adds;
	seen.subs = p.subs;
	seen.cuda = p.cuda;
	return p.cuda;
}

void *cupti_cuda_sym(const char *sym)
{
	struct scan *s = calloc(1, sizeof(*s));
	void *p = NULL;

	if (!s) {
		return NULL;
	}
	dl_iterate_phdr(on_object, s);
	for (int i = 0; !p && i < s->nlibs; i++) {
		void *h = dlopen(s->libs[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			p = dlsym(h, sym);
			dlclose(h);
		}
	}
	free(s);
	return p;
}
