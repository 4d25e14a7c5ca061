/*
 * test_gpu_window.c - GPU work follows the recording state: work that
 * started while the profiler was stopped or paused is left out even though
 * CUPTI delivers it later, while memory events are always kept (Device
 * Storage needs every allocation and release).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "cupti.h"
#include "gpu.h"
#include "collector.h"
#include "internal.h"

static char dir[] = "/tmp/mxprof-gpuwin-XXXXXX";
static char path[256];

static struct gpu_rec at(int kind, const char *name, uint64_t t, uint64_t bytes)
{
	struct gpu_rec g = {.kind = (uint16_t)kind,
			    .start = t,
			    .end = t + 1000,
			    .bytes = bytes,
			    .name = strtab_intern(name)};
	return g;
}

/* Pushes one kernel and one memory event stamped now, after 1 ms. */
static void work(const char *kernel, uint64_t bytes)
{
	usleep(1000);
	uint64_t t = ticks_mono_ns();
	struct gpu_rec g[2] = {at(GPU_KERNEL, kernel, t, 0),
			       at(GPU_MEMORY, "", t, bytes)};
	coll_own();
	assert_int_equal(store_push(g, 2), 0);
	coll_disown();
}

static void test_gpu_work_outside_recording_is_left_out(void **st)
{
	struct coll_config cfg;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.json", dir);
	assert_int_equal(coll_init(), 0);
	assert_int_equal(coll_source_add(&cupti_source), 0);
	TU_COLL_CONFIG(cfg, path);
	assert_int_equal(coll_start(&cfg), 0);

	coll_note_recording(1);
	work("while_running", 4096);
	coll_note_recording(0);
	work("while_stopped", 8192);
	coll_note_recording(1);
	work("after_resume", 16384);
	coll_note_recording(0);
	assert_int_equal(coll_dump(), 0);

	char *trace = tu_read_file(path, NULL);
	assert_non_null(trace);
	assert_non_null(strstr(trace, "\"name\":\"while_running\""));
	assert_non_null(strstr(trace, "\"name\":\"after_resume\""));
	assert_null(strstr(trace, "while_stopped"));
	/* All three memory events: 4096, then 4096 + 8192, then + 16384. */
	assert_non_null(strstr(trace, "28672"));
	free(trace);
	coll_finish(0);
	tu_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_work_outside_recording_is_left_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
