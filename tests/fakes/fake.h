/*
 * fake.h - what the fake libcudart asks of the fake libcupti.
 *
 * The fake libcupti (fake_cupti.c, soname libcupti.so.13) speaks CUPTI's
 * activity protocol with the record layouts of the real CUPTI 13 headers:
 * the client registers its buffer callbacks, enables kinds, and gets
 * buffers back full of CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, ...
 * records it walks with cuptiActivityGetNextRecord(). The fake libcudart
 * (fake_cudart.c, soname libcudart.so.13) plays the program's CUDA: each
 * call makes the records real CUPTI would, with deterministic durations,
 * through these entry points.
 *
 * Knobs (environment): FAKE_CUPTI_FAIL=subscribe|privileges makes
 * cuptiSubscribe / cuptiActivityEnable fail as they do when another tool
 * holds CUPTI or profiling is restricted; FAKE_CUPTI_VERSION=N makes
 * cuptiGetVersion report N; FAKE_CUPTI_STATS=PATH writes at exit how many
 * buffers went back full and how many a forced flush sent back.
 */
#ifndef MXPROF_FAKE_H
#define MXPROF_FAKE_H

#include <stddef.h>
#include <stdint.h>

/* The clock CUPTI stamps records with (the client's timestamp callback
 * when registered, else CLOCK_MONOTONIC). */
typedef uint64_t (*fake_cupti_now_fn)(void);

/* A new correlation id, as CUPTI assigns one per API call. */
typedef uint32_t (*fake_cupti_correlation_fn)(void);

/* Appends one activity record (its kind decides its size) when its kind is
 * enabled and, for API records, its callback id is not switched off.
 * Returns 1 when kept. */
typedef int (*fake_cupti_record_fn)(const void *rec);

/* Calls the subscriber's callback for runtime API call cbid with
 * correlation id corr as it begins (exit 0) or ends (exit 1), on the
 * calling thread, when the subscriber enabled the runtime API domain
 * (cuptiEnableDomain), as CUPTI does. */
typedef void (*fake_cupti_api_fn)(int exit, uint32_t cbid, uint32_t corr);

/* Not CUPTI's, for test programs: 1 when the client enabled activity
 * kind k, so that a program can wait for a profiler that starts CUPTI
 * from another thread instead of guessing how long that takes. */
typedef int (*fake_cupti_enabled_fn)(int k);

#endif /* MXPROF_FAKE_H */
