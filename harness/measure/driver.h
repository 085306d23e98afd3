/*
 * driver.h - the measurement driver: options, case expansion, the per-backend child process and
 * the measurement of one case. Used by `hybench run` and `hybench verify` (driver.c), and by the
 * chain runner (chain.c).
 */
#ifndef HB_DRIVER_H
#define HB_DRIVER_H
#include <jansson.h>
#include <stdio.h>
#include "core/backend.h"
#include "results/results.h"
#include "core/stats.h"
#include "workload/workload.h"

#define HB_MAX_REPETITIONS 16
#define HB_MAX_PASSES 9

typedef struct hb_options {
    const char *backends;      /* comma list of types/instances; NULL = every available one */
    const char *ops;           /* comma list of op names or families; NULL = all */
    unsigned mode_mask;        /* 0 = per item / default */
    unsigned route_mask;
    unsigned dtype_mask;
    unsigned quick_routes;     /* --quick: routes kept by default */
    const char *filter;        /* substring of the case key or name */
    int quick;
    int verify_only;           /* hybench verify: one poisoned run per case, no sampling */
    int dry_run;
    int cold;                  /* flush caches between samples (backend flush_cache hook) */
    double budget_s;           /* sampling budget per case (seconds) */
    double ci_target;          /* target half-width of the median's 95% CI, fraction of the median */
    int min_samples, max_samples;
    int repetitions;           /* sampling windows per case; the best one is kept */
    int passes;                /* passes over the whole case list, each in new processes; best kept */
    double ref_max_gflop;      /* cpu-ref is not timed above this many GFLOP per call */
    double case_timeout_s;     /* a case running longer is killed: timed_out */
    unsigned long long seed;
    const char *out;           /* results path */
    char *argv_joined;         /* for the metadata record */
} hb_options;

/* The "meta" record of this run. New reference. */
/* The process's thread runtime as a JSON object (new reference): OpenMP settings, the BLAS's
 * threading model ("openmp" when it shares hybench's pool: "one_runtime": true), its thread count and
 * the OPENBLAS_* / OMP_* / GOMP_* / GOTO_* / KMP_* environment. Never fails. */
json_t *hb_threads_json(void);
/* Timer agreement of a device case (docs/measurement.md, "Self-checks"): the host monotonic clock and
 * the device's events time the same compute. host_s, device_s: their medians in seconds; enqueue_s:
 * the backend's host-side time spent before its device work started (NaN when it does not report one).
 * Returns a new object {host_s, device_s, diff = host/device - 1, agree = |diff| <= HB_TIMER_AGREE,
 * host_enqueue_s?, why?, explained?}: when they disagree, `why` says whether the device time is too
 * short for the host timer (< HB_TIMER_MIN_S), or the gap is the host-side enqueue time (within
 * HB_TIMER_AGREE of the device time plus HB_TIMER_SYNC_S of synchronization latency), or unexplained. */
#define HB_TIMER_AGREE 0.03   /* 3%: the agreement the design asks of cases of 100 us and more */
#define HB_TIMER_MIN_S 100e-6
#define HB_TIMER_SYNC_S 20e-6 /* launch + event-synchronize latency allowance: the H100 reference run's
                              * 4 us add n=65536 cases read 25 us on the host clock (about 20 us gap) */
json_t *hb_timer_agreement(double host_s, double device_s, double enqueue_s);
json_t *hb_meta_record(const hb_options *o, const char *run_id, char **workloads, int nworkloads);
/* Fill deterministic random inputs in [-1, 1] (never zeros), exactly representable in f32, from a
 * seed and a stream id (splitmix64/xoshiro). */
void hb_fill_random(double *x, size_t n, unsigned long long seed, unsigned long long stream);
/* Peak RSS since the last reset, in bytes (VmHWM); hb_rss_reset() resets it via /proc/self/clear_refs. */
long long hb_rss_peak(void);

/* The host CPU's effective clock: hb_clock_probe(&ghz_min, &ghz_max) (an imul chain on each online
 * CPU, GHz, NAN outside [0.2, 7] GHz), hb_clock_probe_ex, hb_kernel_cpu_ghz, hb_clock_ghz_valid,
 * hb_clock_selfcheck_json: declared and documented in clockprobe.h. */
#include "measure/clockprobe.h"
void hb_rss_reset(void);
#endif
