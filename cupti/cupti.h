/*
 * cupti.h - the CUPTI event source: GPU activity for the collector.
 *
 * CUPTI is loaded lazily with dlopen, only once the program initialises
 * CUDA, so that a program that never uses CUDA pays nothing (no dlopen, no
 * thread). Two ways lead there:
 *
 *  - injection: libcuda calls InitializeInjection() of the library named by
 *    CUDA_INJECTION64_PATH during cuInit(). cupti_setup() points that
 *    variable at libmxprof.so when it is unset, so CUPTI starts exactly when
 *    CUDA does, also for statically linked cudart (nvcc's default);
 *  - the drain thread's tick: when CUDA_INJECTION64_PATH belongs to another
 *    tool, or libcuda was initialised before mxprof was asked to record,
 *    every tick checks with dl_iterate_phdr() whether a libcuda* or
 *    libcudart* is loaded (a walk of the loaded objects, no system call,
 *    made again only when the loader's counts of objects loaded and
 *    unloaded changed) and starts CUPTI then. Activity before that tick is not
 * seen.
 *
 * (Interposing dlopen would find CUDA earlier, but dlopen belongs to the
 * hook engine; the injection entry point gives the same moment without it.)
 *
 * The source plugs into the collector as a struct coll_source: CUPTI's
 * buffers are handed to the drain thread, which parses them into mxprof's
 * own GPU records (gpu.h), links them to host records when it writes a
 * dump, and adds the GPU events and tables. Nothing outside cupti/ sees a
 * CUDA type or a GPU record.
 */
#ifndef MXPROF_CUPTI_H
#define MXPROF_CUPTI_H

#include <stdint.h>

/* What to record: bits of enum cupti_want. */
enum cupti_want {
	CUPTI_WANT_API = 1u << 0,    /* runtime, driver and sync records   */
	CUPTI_WANT_GPU = 1u << 1,    /* kernels, copies, sets              */
	CUPTI_WANT_MEMORY = 1u << 2, /* device allocations (Device Storage) */
};

/*
 * Called once from the library constructor with the cupti_want bits.
 * Registers the GPU source with the collector and points
 * CUDA_INJECTION64_PATH at self_path when it is unset. Does not load
 * CUPTI. Returns 0, -EINVAL when want is 0 (nothing is installed), or
 * coll_source_add()'s error.
 */
int cupti_setup(unsigned want, const char *self_path);

/* With call stacks (MXPROF_STACKS): capture returns the calling thread's
 * stack id, for the CUDA runtime calls CUPTI records. Call before
 * cupti_setup(). */
void cupti_set_stacks(uint32_t (*capture)(void));

/* The GPU source (registered by cupti_setup(); tests register it
 * themselves). */
struct coll_source;
extern const struct coll_source cupti_source;

/* set_config(profile_memory): device memory records made from now on
 * count (on) or are left out of the trace and Device Storage. Any
 * thread; takes a lock of its own. */
void cupti_memory_switch(int on);

/* Names device in the trace's GPU track (NVTX). Any thread, lock-free. */
void cupti_name_device(int device, const char *name);

/*
 * Loads CUPTI and enables the activity kinds, once; why names the trigger
 * for the error line. Returns 0 when CUPTI records, or a negative errno
 * after printing one line (the host profiling goes on). Not for the hot
 * path; takes a lock.
 */
int cupti_start(const char *why);

/* Makes CUPTI hand over every buffered record now (the source's flush,
 * no collector lock held). Can't fail. */
void cupti_flush(void);

/* load.c: finds and opens libcupti (see the order there). Returns the
 * handle or NULL, and the path opened in path. */
void *cupti_load_library(char *path, unsigned long len);

/* load.c: returns non-zero when a libcuda* or libcudart* is loaded. The
 * drain thread's (one caller at a time): it walks the loaded objects only
 * when one was loaded or unloaded since its last call. */
int cupti_cuda_loaded(void);

/* load.c: returns the address of sym in a loaded libcuda* or libcudart*
 * (the CUDA driver API), or NULL. */
void *cupti_cuda_sym(const char *sym);

#endif /* MXPROF_CUPTI_H */
