/*
 * cpu.h - facts about the cpu backend other parts of the harness use.
 */
#ifndef HB_CPU_H
#define HB_CPU_H
#include "core/backend.h"
/* The cpu backend (cpu_backend.c), listed in measure/registry.c. */
extern const hb_backend_ops hb_cpu_ops;
/* Measure the host ceilings (STREAM-style copy and triad in GB/s on arrays of 4x the last-level
 * cache or more, and an sgemm peak probe in GFLOP/s) with the calling process's threads.
 * Fills out[0..n-1] (names copy_gbps, triad_gbps, peak_gflops_f32, peak_gflops_f32_1core,
 * peak_gflops_f32_1core_n128, then the copy sweep copy_gbps_ws_<N>MiB at hb_cpu_copy_sweep's sizes:
 * see cpu_sys.c) and returns n (<= max). */
int hb_cpu_ceilings(hb_ceiling *out, int max);
/* At most this many sizes in the copy sweep (1 MiB .. 2 GiB). */
#define HB_COPY_SWEEP 12
/* The copy sweep's working sets in bytes (in + out): 1 MiB, 2 MiB, 4 MiB, ... up to twice the
 * last-level cache (hwloc; at least 8 MiB), at most min(max, HB_COPY_SWEEP) of them, into sizes[]
 * (caller's). Returns how many. */
int hb_cpu_copy_sweep(size_t *sizes, int max);
/* Bind OpenMP threads to cores with hwloc (once per process). Returns the thread count. */
int hb_cpu_bind_threads(void);
/* Evict the host caches (cold compute, docs/measurement.md): write and read back one byte per 64-byte
 * line of a buffer of twice the last-level cache (hwloc; at least 64 MiB) from the OpenMP threads.
 * The buffer is allocated on the first call and kept for the process; if it cannot be allocated the
 * call does nothing (the next compute then runs warm). */
void hb_host_flush_cache(void);
#endif
