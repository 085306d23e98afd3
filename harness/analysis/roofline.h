/*
 * roofline.h - `hybench roofline`: how close each case family comes to the ceiling measured in the
 * same run (copy bandwidth, sgemm peak, transfer routes), against a goal per family (roofline.c).
 */
#ifndef HB_ROOFLINE_H
#define HB_ROOFLINE_H
#include <stdint.h>
#include "results/results.h"

/* What a goal measures. */
typedef enum {HB_ROOF_FRACTION, HB_ROOF_FRACTION_OF_CPU, HB_ROOF_TFLOPS, HB_ROOF_COMPUTE_US_MAX, HB_ROOF_CONVERT_FRACTION, HB_ROOF_TRANSFER_FRACTION,
               HB_ROOF_MAPPED_ZERO,
               /* a cache-resident memory-bound case's GB/s over the copy ceiling at its working set (the
                * copy sweep's, else that of the cache level it fits: hb_roof_cache_level); cases that
                * fit no cache are left out */
               HB_ROOF_CACHE_FRACTION,
               /* GFLOP/s over the backend's single-core sgemm ceiling at the case's own size
                * (peak_gflops_f32_1core_nN for an N^3 case, where the run measured it; else
                * peak_gflops_f32_1core, n = 512) */
               HB_ROOF_FRACTION_OF_1CORE,
               /* compute median over that of relu at the same shape, backend, mode and dtype (lower is
                * better), at the largest n the run measured both at (within the size condition) */
               HB_ROOF_TIME_VS_RELU,
               /* cuda conv2d: the exhaustive cuDNN best the plugin timed for the shape
                * (extra.conv_choice.exhaustive_best_ms: either layout for an NCHW case, its own layout
                * for a layout=nhwc case) over the case's compute median; held by the worst case (every
                * case must reach it), not the best */
               HB_ROOF_CONV_EXHAUSTIVE } hb_roof_metric;

typedef struct hb_roof_goal {
    const char *origin;      /* where the goal comes from (the project issue that set it) */
    const char *what;
    const char *backend;     /* backend type prefix */
    const char *op;
    const char *dtype;       /* NULL: any */
    const char *mode;        /* NULL: any */
    const char *route;       /* NULL: any */
    const char *shape_has;   /* substring of shape_str, NULL: any */
    double min_llc_multiple; /* largest tensor >= this many times the L3 (0: no size condition) */
    int64_t min_size;        /* largest tensor >= this many elements */
    hb_roof_metric m;
    double need;             /* ratio >= need (or, for HB_ROOF_COMPUTE_US_MAX, compute <= need us) */
    const char *shape_lacks; /* substring shape_str must not contain, NULL: none (last: rows may omit it) */
} hb_roof_goal;

extern const hb_roof_goal hb_roof_goals[];
extern const int hb_roof_ngoals;

/* The cache level that holds a working set of `bytes` on run r's host (meta.cpu from hwloc): "L2" when
 * it fits the L2 of all cores (l2_bytes x cores), "LLC" when it fits the L3 (l3_bytes, when larger),
 * else "DRAM"; *ceil receives backend's copy ceiling for that working set: where the backend measured
 * the copy sweep (copy_gbps_ws_<N>MiB, kernels/cpu/cpu_sys.c), the sweep's figure at `bytes` (log-log
 * interpolation between the two probes around it, the smallest probe below it) and *swept = 1;
 * else the level's probe (copy_gbps_l2, copy_gbps_llc, copy_gbps) and *swept = 0. A backend without
 * that level's probe is held to the next level up it has (the name returned is the level used); NaN
 * when it has none. swept may be NULL. Returns the level's name (static string). */
const char *hb_roof_cache_level(const hb_run *r, const char *backend, double bytes, double *ceil, int *swept);

/* 1 when a smaller figure is better (a time, a share of the total), else 0. */
int hb_roof_lower_better(const hb_roof_goal *g);
/* 1 when a goal is held by its worst matching case (HB_ROOF_CONV_EXHAUSTIVE), else by its best. */
int hb_roof_worst_case(const hb_roof_goal *g);
/* Evaluate goal g over run r: among the ok cases it matches, the best *ratio (the worst for
 * hb_roof_worst_case goals; fraction of the ceiling, or the figure itself for absolute goals), its *figure, the *ceil it was divided by and the case in
 * which ("backend shape mode route dtype"). 0 when no case of r matches. */
int hb_roof_eval(const hb_run *r, const hb_roof_goal *g, double *ratio, double *figure, double *ceil, char *which, size_t wl);
#endif
