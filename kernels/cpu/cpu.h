/*
 * cpu.h - facts about the cpu backend other parts of the harness use.
 */
#ifndef HB_CPU_H
#define HB_CPU_H
#include "backend.h"
/* Measure the host ceilings (STREAM-style copy and triad in GB/s on arrays of 4x the last-level
 * cache or more, and an sgemm peak probe in GFLOP/s) with the calling process's threads.
 * Fills out[0..n-1] (names copy_gbps, triad_gbps, peak_gflops_f32) and returns n. */
int hb_cpu_ceilings(hb_ceiling *out, int max);
/* Bind OpenMP threads to cores with hwloc (once per process). Returns the thread count. */
int hb_cpu_bind_threads(void);
#endif
