/*
 * mxprof_dl.h - calls the mxprof API through dlsym, so that a program runs
 * unchanged with or without the profiler: when libmxprof.so is preloaded
 * (or linked), calls reach it; otherwise they do nothing.
 *
 * Call mxprof_dl_load() once before any other call. It returns 1 when the
 * profiler is present and 0 when it is not. Link with -ldl.
 *
 *   mxprof_dl_load();
 *   mxprof_domain *d = MXPROF(domain_create)("demo");
 *   mxprof_task *t = MXPROF(task_create)(d, "step");
 *   MXPROF(task_start)(t); ... MXPROF(task_stop)(t);
 */
#ifndef MXPROF_DL_H
#define MXPROF_DL_H

#include <dlfcn.h>
#include <stddef.h>

#include "mxprof.h"

/* clang-format off */
#define MXPROF_DL_FUNCS(X)                                                    \
	X(set_config) X(set_state) X(pause) X(resume) X(dump) X(dumps)        \
	X(free) X(dropped) X(domain_create) X(task_create) X(task_start)      \
	X(task_stop) X(task_destroy) X(frame_create) X(frame_start)           \
	X(frame_stop) X(frame_destroy) X(event_create) X(event_start)         \
	X(event_stop) X(event_destroy) X(counter_create) X(counter_set)       \
	X(counter_increment) X(counter_decrement) X(counter_destroy)          \
	X(marker_create) X(marker_mark) X(marker_destroy)
/* clang-format on */

struct mxprof_dl {
#define MXPROF_DL_FIELD(f) __typeof__(&mxprof_##f) f;
	MXPROF_DL_FUNCS(MXPROF_DL_FIELD)
#undef MXPROF_DL_FIELD
};

static struct mxprof_dl mxprof_dl_table;
static int mxprof_dl_present;

/* No-op stand-ins for a run without the profiler. */
static void *mxprof_dl_nop_ptr(void)
{
	return NULL;
}

static int mxprof_dl_nop_int(void)
{
	return 0;
}

static inline int mxprof_dl_load(void)
{
	mxprof_dl_present = dlsym(RTLD_DEFAULT, "mxprof_set_state") != NULL;
#define MXPROF_DL_RESOLVE(f)                                                   \
	mxprof_dl_table.f =                                                    \
		(__typeof__(&mxprof_##f))(mxprof_dl_present                    \
						  ? dlsym(RTLD_DEFAULT,        \
							  "mxprof_" #f)        \
						  : (void *)mxprof_dl_nop_int);
	MXPROF_DL_FUNCS(MXPROF_DL_RESOLVE)
#undef MXPROF_DL_RESOLVE
	if (!mxprof_dl_present) {
		/* Constructors must give non-NULL objects to nobody, and
		 * dumps must give NULL: both come back as 0/NULL here. */
		mxprof_dl_table.dumps =
			(__typeof__(&mxprof_dumps))(void *)mxprof_dl_nop_ptr;
	}
	return mxprof_dl_present;
}

#define MXPROF(f) (mxprof_dl_table.f)

#endif /* MXPROF_DL_H */
