/*
 * cpu_calibrate.c - hb_cpu_kernel_calibrate (cpu_priv.h): the thread counts the elementwise ops,
 * sgemm and sgemv pay for, measured when the backend opens. Split out of cpu_kernels.c.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* ------------------------------------------------------------------ calibration ------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CAL_REPS 7
/* Thread counts tried: 1, 2, 4, ... below T, and T. Returns how many (at most 16) in ks. */
static int cal_counts(int T, int *ks)
{
    int n = 0;
    for (int k = 1; k < T && n < 15; k *= 2)
        ks[n++] = k;
    ks[n++] = T;
    return n;
}

/* The choice among candidates 0..n-1 (0: one thread) by best time t[]: the fastest that saves 10% or
 * more against one thread, else one thread (0). */
static int cal_pick(const double *t, int n)
{
    int best = 0;
    for (int c = 1; c < n; c++)
        if (t[c] < 0.9 * t[0] && t[c] < t[best])
            best = c;
    return best;
}

/* Threads only from the first size from which every larger size measured chose threads (plans[j] !=
 * 1): a size where one thread won keeps every smaller one on one thread. Returns that first index,
 * or -1 (threads never won at the largest size). */
static int cal_monotone(int *plans, int n)
{
    int first = n;
    while (first > 0 && plans[first - 1] != 1)
        first--;
    for (int j = 0; j < first; j++)
        plans[j] = 1;
    return first < n ? first : -1;
}

hb_status hb_cpu_kernel_calibrate(hb_cpu_calibration *out)
{
    memset(out, 0, sizeof *out);
    const int T = omp_get_max_threads();
    out->threads = T;
    if (T < 2) { /* nothing to choose */
        g_ew_par_min[0] = g_ew_par_min[1] = INT64_MAX;
        g_gemm_par_flops = g_gemv_par_flops = HUGE_VAL;
        out->ew_par_min[0] = out->ew_par_min[1] = -1;
        out->gemm_par_flops = out->gemv_par_flops = -1;
        return HB_OK;
    }
    int ks[16];
    const int nk = cal_counts(T, ks);
    const int64_t ew_max = (int64_t)4096 << (HB_CPU_CAL_EW - 1); /* 1 Mi floats */
    const size_t fl = (size_t)(ew_max > 2048 * 2048 + 2 * 2048 ? ew_max : 2048 * 2048 + 2 * 2048);
    float *a = aligned_alloc(64, fl * sizeof(float)), *o = aligned_alloc(64, fl * sizeof(float));
    float *w = aligned_alloc(64, (size_t)3 * 256 * 256 * sizeof(float));
    if (!a || !o || !w) {
        free(a);
        free(o);
        free(w);
        return HB_ENOMEM;
    }
    unsigned st = 2024u;
    for (size_t i = 0; i < fl; i++) {
        st = st * 1664525u + 1013904223u;
        a[i] = (float)(st >> 8) * 0x1p-22f - 2.0f;
        o[i] = 0.0f;
    }
    for (size_t i = 0; i < (size_t)3 * 256 * 256; i++)
        w[i] = a[i];
    /* elementwise: relu for add/mul/relu (memory-bound), silu for gelu/silu (transcendental); each
     * size on 1, 2, 4, ... and T threads, interleaved */
    for (int cls = 0; cls < 2; cls++) {
        const hb_op op = cls ? HB_OP_SILU : HB_OP_RELU;
        int plans[HB_CPU_CAL_EW];
        for (int j = 0; j < HB_CPU_CAL_EW; j++) {
            const int64_t n = (int64_t)4096 << j;
            double t[16];
            for (int c = 0; c < nk; c++)
                t[c] = HUGE_VAL;
            for (int r = 0; r <= CAL_REPS; r++) /* r = 0: warm-up */
                for (int c = 0; c < nk; c++) {
                    const double t0 = now_s();
                    ew_run(op, a, NULL, o, n, ks[c]);
                    const double dt = now_s() - t0;
                    if (r > 0 && dt < t[c])
                        t[c] = dt;
                }
            plans[j] = ks[cal_pick(t, nk)];
            out->ew_t1[cls][j] = t[0];
            out->ew_tp[cls][j] = t[nk - 1];
        }
        const int f = cal_monotone(plans, HB_CPU_CAL_EW);
        for (int j = 0; j < HB_CPU_CAL_EW; j++)
            g_ew_threads[cls][j] = out->ew_threads[cls][j] = plans[j];
        g_ew_par_min[cls] = f < 0 ? 2 * ew_max : (int64_t)4096 << f;
        out->ew_par_min[cls] = g_ew_par_min[cls];
    }
    /* sgemm n x n x n: one thread, OpenBLAS's own T threads, rows split over 2, 4, ... T threads */
    {
        int plans[HB_CPU_CAL_GEMM], cand[17], nc = 0;
        cand[nc++] = 1;
        cand[nc++] = T;
        for (int c = 1; c < nk; c++)
            cand[nc++] = -ks[c];
        for (int j = 0; j < HB_CPU_CAL_GEMM; j++) {
            const int n = g_gs[j];
            double t[17];
            for (int c = 0; c < nc; c++)
                t[c] = HUGE_VAL;
            for (int r = 0; r <= CAL_REPS; r++)
                for (int c = 0; c < nc; c++) {
                    if (cand[c] <= -2 && split_threads(cand[c], n) != -cand[c])
                        continue; /* blocks under 4 rows: not a plan of its own */
                    const double t0 = now_s();
                    gemm_plan_run(cand[c], n, n, n, w, w + 256 * 256, w + 2 * 256 * 256);
                    const double dt = now_s() - t0;
                    if (r > 0 && dt < t[c])
                        t[c] = dt;
                }
            plans[j] = cand[cal_pick(t, nc)];
            out->gemm_t[j][0] = t[0];
            out->gemm_t[j][1] = t[cal_pick(t, nc)];
        }
        const int f = cal_monotone(plans, HB_CPU_CAL_GEMM);
        for (int j = 0; j < HB_CPU_CAL_GEMM; j++)
            g_gemm_plan[j] = out->gemm_plan[j] = plans[j];
        g_gemm_par_flops = f < 0 ? 2.0 * 512 * 512 * 512 : 2.0 * g_gs[f] * g_gs[f] * g_gs[f];
        out->gemm_par_flops = g_gemm_par_flops;
    }
    /* sgemv 1 x n x n (y = B^T x): OpenBLAS on one thread or on T, or split over the rows of B */
    {
        int plans[HB_CPU_CAL_GEMV];
        const int cand[3] = { 1, T, -T };
        for (int j = 0; j < HB_CPU_CAL_GEMV; j++) {
            const int n = g_vs[j];
            double t[3] = { HUGE_VAL, HUGE_VAL, HUGE_VAL };
            for (int r = 0; r <= CAL_REPS; r++)
                for (int c = 0; c < 3; c++) {
                    const double t0 = now_s();
                    gemm_plan_run(cand[c], 1, n, n, a, a + (size_t)n, o);
                    const double dt = now_s() - t0;
                    if (r > 0 && dt < t[c])
                        t[c] = dt;
                }
            plans[j] = cand[cal_pick(t, 3)];
        }
        const int f = cal_monotone(plans, HB_CPU_CAL_GEMV);
        for (int j = 0; j < HB_CPU_CAL_GEMV; j++)
            g_gemv_plan[j] = out->gemv_plan[j] = plans[j];
        g_gemv_par_flops = f < 0 ? 2.0 * 4096 * 4096 : 2.0 * g_vs[f] * g_vs[f];
        out->gemv_par_flops = g_gemv_par_flops;
    }
    free(a);
    free(o);
    free(w);
    return HB_OK;
}
