/*
 * test_gpu.c - the GPU source (cupti/): its records linked to
 * host spans at dump time, the GPU part of the trace and the GPU tables.
 *
 * One scenario, with exact times (ticks_use_tsc.on = 0, so ticks are
 * CLOCK_MONOTONIC ns, the clock GPU records carry):
 *
 *   host thread   [step (user)                                 ]  1000..9000
 *                    [cudaLaunchKernel (hook slice)]              2000..3000
 *                     (CUPTI: cudaLaunchKernel, corr 42)          2100..2900
 *                                    (CUPTI: cudaMemcpy, corr 43) 4000..4500
 *   GPU 0 / 7          kernels k (corr 42) 5000..10000
 *                      memcpy  (corr 43)  10000..10100, 1000 bytes
 *   outside:       (CUPTI: cudaLaunchKernel, corr 44)           20000..20100
 *                      kernels k (corr 44) 21000..22000 and k2 (corr 44)
 *   device memory: +4096, +8192, -4096
 *
 * Expected: the hook's slice is the only cudaLaunchKernel slice of corr 42
 * and carries correlation 42 and the flow start; CUPTI's own record of it
 * is absorbed; cudaMemcpy shows as CUPTI's slice; "step" gets External id
 * 1, carried by both GPU events launched inside it; the tables show the
 * kernel count, median, attributed GPU time and Device Storage.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testutil.h"

#include "cupti.h"
#include "gpu.h"
#include "collector.h"
#include "internal.h"

static char dir[] = "/tmp/mxprof-test-gpu-XXXXXX";
static char trace_path[256], stats_path[256];
static char *trace, *stats;
static uint64_t base;

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++) {
		n++;
	}
	return n;
}

/* Returns the trace line (one event per line) holding all of a and b. */
static const char *line_with(const char *a, const char *b, char *out,
			     size_t len)
{
	for (const char *p = trace; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		snprintf(out, len, "%.*s", (int)n, p);
		if (strstr(out, a) && (!b || strstr(out, b))) {
			return out;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

static void host(uint64_t t0, uint64_t t1, const char *name, const char *group,
		 int cat)
{
	struct coll_rec r = {.t0 = t0 + base,
			     .t1 = t1 + base,
			     .name = strtab_intern(name),
			     .group = strtab_intern(group),
			     .kind = COLL_SPAN,
			     .cat = (uint8_t)cat};
	assert_int_equal(ring_push(&r), 0);
}

static struct gpu_rec gpu(int kind, uint64_t t0, uint64_t t1, const char *name,
			  uint32_t corr)
{
	struct gpu_rec g = {.kind = (uint16_t)kind,
			    .start = t0 + base,
			    .end = t1 + base,
			    .name = strtab_intern(name),
			    .correlation = corr,
			    .stream = 7,
			    .tid = (uint32_t)syscall(SYS_gettid)};
	return g;
}

static void scenario(void)
{
	struct gpu_rec g[12];
	int n = 0;

	/* Inner spans end first and are recorded first. */
	host(2000, 3000, "cudaLaunchKernel", "C API (libcudart.so.13)",
	     (int)cat_id("cuda_runtime"));
	host(1000, 9000, "step", "user", COLL_CAT_USER);
	g[n++] = gpu(GPU_RUNTIME, 2100, 2900, "cudaLaunchKernel_v7000", 42);
	g[n++] = gpu(GPU_RUNTIME, 4000, 4500, "cudaMemcpy", 43);
	g[n++] = gpu(GPU_KERNEL, 5000, 10000, "k", 42);
	g[n] = gpu(GPU_MEMCPY, 10000, 10100, "Memcpy HtoD", 43);
	g[n].flags = GPU_COPY_KINDS(1, 3); /* pageable -> device */
	g[n++].bytes = 1000;
	g[n++] = gpu(GPU_RUNTIME, 20000, 20100, "cudaLaunchKernel", 44);
	g[n++] = gpu(GPU_KERNEL, 21000, 22000, "k", 44);
	g[n++] = gpu(GPU_KERNEL, 22000, 22300, "k", 44);
	g[n] = gpu(GPU_MEMORY, 100, 100, "", 0);
	g[n++].bytes = 4096;
	g[n] = gpu(GPU_MEMORY, 200, 200, "", 0);
	g[n++].bytes = 8192;
	g[n] = gpu(GPU_MEMORY, 300, 300, "", 0);
	g[n].bytes = 4096;
	g[n++].flags = GPU_FREE;
	struct gpu_device d = {.id = 0, .cc_major = 8, .num_sms = 108};
	snprintf(d.name, sizeof(d.name), "test GPU");
	/* What the source's drain does with parsed CUPTI records, as the
	 * collector's owner. */
	coll_own();
	assert_int_equal(store_push(g, (size_t)n), 0);
	store_set_device(&d);
	coll_disown();
	assert_int_equal(coll_dump(), 0);
	trace = tu_read_file(trace_path, NULL);
	stats = tu_read_file(stats_path, NULL);
	assert_non_null(trace);
	assert_non_null(stats);
}

static void test_gpu_hook_slice_absorbs_cupti_record_of_same_call(void **st)
{
	char line[2048];

	(void)st;
	assert_int_equal(count(trace, "\"name\":\"cudaLaunchKernel\""), 2);
	/* The hook's slice: its group, CUPTI's correlation. */
	assert_non_null(line_with("\"group\":\"C API (libcudart.so.13)\"",
				  "\"correlation\":42", line, sizeof(line)));
	assert_non_null(strstr(line, "\"ts\":2.000,\"dur\":1.000"));
	assert_non_null(strstr(line, "\"External id\":1}"));
	/* No CUPTI slice for correlation 42 (only the hook's slice and the
	 * kernel carry it); one for 44, which no hook saw. */
	assert_int_equal(count(trace, "\"correlation\":42"), 2);
	assert_non_null(line_with("\"name\":\"cudaLaunchKernel\"",
				  "\"correlation\":44", line, sizeof(line)));
	assert_non_null(line_with("\"name\":\"cudaMemcpy\"",
				  "\"correlation\":43", line, sizeof(line)));
}

static void test_gpu_every_gpu_event_has_a_flow_from_its_launch(void **st)
{
	char line[2048];

	(void)st;
	assert_int_equal(count(trace, "\"ph\":\"s\""), 3);
	assert_int_equal(count(trace, "\"ph\":\"f\""), 4);
	assert_int_equal(count(trace, "\"bp\":\"e\""), 4);
	/* The flow of 42 starts at the hook's slice's beginning (2..3 us),
	 * as Kineto's, 1 ns in (strictly inside it), and ends in the middle of
	 * the kernel (5..10 us): an end on a slice's edge binds to the slice
	 * that ends there. */
	assert_non_null(
		line_with("\"ph\":\"s\"", "\"id\":42,", line, sizeof(line)));
	assert_non_null(strstr(line, "\"ts\":2.001"));
	assert_non_null(
		line_with("\"ph\":\"f\"", "\"id\":42,", line, sizeof(line)));
	assert_non_null(strstr(line, "\"pid\":0,\"tid\":7,\"ts\":7.500"));
	/* Kernels of 44 back to back (21..22 and 22..22.3 us): each end
	 * strictly inside its own kernel, none on the shared edge. */
	assert_int_equal(count(trace, "\"tid\":7,\"ts\":21.500,\"bp\":\"e\""),
			 1);
	assert_int_equal(count(trace, "\"tid\":7,\"ts\":22.150,\"bp\":\"e\""),
			 1);
	assert_int_equal(count(trace, "\"ts\":22.000,\"bp\""), 0);
	/* The copy is named with its memory kinds, as Kineto names it. */
	assert_int_equal(
		count(trace, "\"name\":\"Memcpy HtoD (Pageable -> Device)\""),
		1);
}

static void test_gpu_external_id_links_launches_to_innermost_range(void **st)
{
	char line[2048];

	(void)st;
	assert_non_null(line_with("\"name\":\"step\"", "\"External id\":1}",
				  line, sizeof(line)));
	assert_non_null(line_with("\"cat\":\"kernel\"", "\"correlation\":42",
				  line, sizeof(line)));
	assert_non_null(strstr(line, "\"External id\":1,"));
	assert_non_null(strstr(line, "\"grid\":[0,0,0]"));
	assert_non_null(line_with("\"cat\":\"gpu_memcpy\"", "\"External id\":1",
				  line, sizeof(line)));
	assert_non_null(strstr(line, "\"bytes\":1000"));
	assert_non_null(strstr(line, "\"memory bandwidth (GB/s)\":10.0000"));
	/* Launched outside any range: no External id. */
	assert_non_null(line_with("\"cat\":\"kernel\"", "\"correlation\":44",
				  line, sizeof(line)));
	assert_null(strstr(line, "External id"));
}

static void test_gpu_tables_kernels_median_and_attribution(void **st)
{
	(void)st;
	/* k: 5000, 1000, 300 ns: total 6300, median 1000. */
	assert_non_null(strstr(stats, "CUDA GPU Kernels\n"));
	assert_non_null(strstr(stats,
			       "k                                       "
			       "3           0.0063           0.0003      "
			       "     0.0050           0.0021           "
			       "0.0010           100.00\n"));
	/* The absorbed call is not counted again: 1 of 2 launches. */
	assert_non_null(strstr(stats, "cudaLaunchKernel                        "
				      "1"));
	assert_non_null(strstr(stats, "GPU Time by Host Range\n"));
	assert_non_null(strstr(stats, "user: step                              "
				      "2           0.0051"));
	assert_non_null(strstr(stats, "Memory: cuda/0                          "
				      "3           4.0960          12.2880"));
	/* GPU sections come before the last line. */
	assert_non_null(strstr(stats, "\nDropped records: 0\n"));
	assert_null(strstr(strstr(stats, "Dropped records: 0"), "CUDA"));
}

static void test_gpu_device_properties_at_top_level(void **st)
{
	(void)st;
	assert_non_null(strstr(trace, "\"deviceProperties\":[{\"id\":0,"
				      "\"name\":\"test GPU\","
				      "\"computeCapability\":\"8.0\""));
	assert_non_null(strstr(trace, "\"numSms\":108"));
	assert_non_null(strstr(trace, "\"name\":\"process_name\",\"pid\":0,"
				      "\"tid\":0,\"args\":{\"name\":\"GPU 0 "
				      "(test GPU)\"}"));
}

/* dumps(format='json'|'csv') carries the GPU sections too, as rows of the
 * same form as the host ones: exact rows. */
static void test_gpu_dumps_json_and_csv_carry_the_gpu_sections(void **st)
{
	(void)st;
	char *j = coll_dumps(0, "json", "total", 0, 0);
	char *c = coll_dumps(0, "csv", "total", 0, 0);
	char *c1 = coll_dumps(0, "csv", "total", 0, 1);
	assert_non_null(j);
	assert_non_null(c);
	assert_non_null(c1);
	assert_non_null(strstr(
		j, "        \"CUDA GPU Kernels\": {\n"
		   "            \"k\": {\"Total Count\": 3, \"Total Time\": "
		   "0.0063, \"Min Time\": 0.0003, \"Max Time\": 0.0050, "
		   "\"Avg Time\": 0.0021, \"Median Time\": 0.0010, "
		   "\"Time (%)\": 100.00}\n        },\n"));
	assert_non_null(strstr(
		j, "            \"Memcpy HtoD\": {\"Total Count\": 1, \"Total "
		   "Time\": 0.0001, \"Min Time\": 0.0001, \"Max Time\": "
		   "0.0001, \"Avg Time\": 0.0001, \"Total (kB)\": 1.0000, "
		   "\"Bandwidth (GB/s)\": 10.0000}\n"));
	assert_non_null(strstr(
		j, "        \"GPU Time by Host Range\": {\n"
		   "            \"user: step\": {\"Total Count\": 2, \"GPU "
		   "Time\": 0.0051, \"GPU Time (%)\": 100.00}\n        }\n"
		   "    },\n    \"Counter\": {"));
	assert_non_null(strstr(c, "\n\"CUDA GPU Kernels\",time_ms,\"k\",3,"
				  "0.006300,0.000300,0.005000,0.002100,,"
				  "100.00,\n"));
	assert_non_null(strstr(c, "\n\"CUDA GPU Memcpy\",time_ms,\"Memcpy "
				  "HtoD\",1,0.000100,0.000100,0.000100,"
				  "0.000100,,,\n"));
	assert_non_null(strstr(c, "\n\"CUDA API (CUPTI)\",time_ms,"
				  "\"cudaLaunchKernel\",1,0.000100,0.000100,"
				  "0.000100,0.000100,,,\n"));
	assert_non_null(strstr(c, "\n\"GPU Time by Host Range\",time_ms,"
				  "\"user: step\",2,0.005100,,,,,100.00,\n"));
	/* row_limit keeps the first row of each GPU section too. */
	assert_int_equal(count(c, "\"GPU Time by API\""), 3);
	assert_int_equal(count(c1, "\"GPU Time by API\""), 1);
	free(j);
	free(c);
	free(c1);
}

/* dumps(reset=1) clears every table dumps() shows, the GPU ones too; the
 * trace and the .stats.txt keep every GPU record. Runs last: it resets
 * the tables. */
static void test_gpu_dumps_reset_clears_the_gpu_tables(void **st)
{
	(void)st;
	char *before = coll_dumps(1, "table", "total", 0, 0);
	char *after = coll_dumps(0, "table", "total", 0, 0);
	assert_non_null(before);
	assert_non_null(after);
	assert_non_null(strstr(before, "CUDA GPU Kernels\n"));
	assert_non_null(strstr(before, "GPU Time by Host Range\n"));
	assert_null(strstr(after, "CUDA GPU"));
	assert_null(strstr(after, "GPU Time by"));
	assert_null(strstr(after, "CUDA API (CUPTI)"));
	assert_null(strstr(after, "Memory: cuda/0"));
	free(before);
	free(after);
	assert_int_equal(coll_dump(), 0);
	char *t = tu_read_file(trace_path, NULL);
	char *tables = tu_read_file(stats_path, NULL);
	assert_non_null(t);
	assert_non_null(tables);
	assert_int_equal(count(t, "\"cat\":\"kernel\""), 3);
	assert_non_null(strstr(tables, "CUDA GPU Kernels\n"));
	assert_non_null(strstr(tables, "GPU Time by Host Range\n"));
	free(t);
	free(tables);
}

static int group_setup(void **st)
{
	struct coll_config cfg;

	(void)st;
	if (!mkdtemp(dir) || coll_init() != 0 ||
	    coll_source_add(&cupti_source) != 0) {
		return -1;
	}
	ticks_use_tsc.on = 0;
	base = clock_base_mono_ns();
	snprintf(trace_path, sizeof(trace_path), "%s/trace.json", dir);
	snprintf(stats_path, sizeof(stats_path), "%s/trace.stats.txt", dir);
	TU_COLL_CONFIG(cfg, trace_path);
	if (coll_start(&cfg) != 0) {
		return -1;
	}
	coll_recording.on = 1;
	scenario();
	return 0;
}

static int group_teardown(void **st)
{
	(void)st;
	coll_recording.on = 0;
	coll_finish(0);
	free(trace);
	free(stats);
	tu_rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_gpu_hook_slice_absorbs_cupti_record_of_same_call),
		cmocka_unit_test(
			test_gpu_every_gpu_event_has_a_flow_from_its_launch),
		cmocka_unit_test(
			test_gpu_external_id_links_launches_to_innermost_range),
		cmocka_unit_test(
			test_gpu_tables_kernels_median_and_attribution),
		cmocka_unit_test(test_gpu_device_properties_at_top_level),
		cmocka_unit_test(
			test_gpu_dumps_json_and_csv_carry_the_gpu_sections),
		cmocka_unit_test(test_gpu_dumps_reset_clears_the_gpu_tables),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
