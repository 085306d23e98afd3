/*
 * cpu_gemm.c - the cpu backend's matmul and bmm on OpenBLAS (sgemm, sgemv) under the thread plans
 * hb_cpu_kernel_calibrate measures. Split out of cpu_kernels.c; its header comment describes them.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include <cblas.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

double g_gemm_par_flops = 2.0 * 64 * 64 * 64;       /* 2mnk from which threads pay off */

/* ------------------------------------------------------------------ matmul ----------- */

static void sgemm_nn(int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, A, (int)k, B,
                (int)n, 0.0f, C, (int)n);
}

/* C (m x n) = A (m x k) B (k x n), row-major; as sgemv when m or n is 1 (y = B^T x for m = 1,
 * y = A x for n = 1). Called outside any parallel region. */
static void gemm_or_gemv(int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C)
{
    if (m == 1)
        cblas_sgemv(CblasRowMajor, CblasTrans, (int)k, (int)n, 1.0f, B, (int)n, A, 1, 0.0f, C, 1);
    else if (n == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)k, 1.0f, A, (int)k, B, 1, 0.0f, C, 1);
    else
        sgemm_nn(m, n, k, A, B, C);
}

/* Thread plans of a product, measured per size by hb_cpu_kernel_calibrate (0 until then):
 * 1: OpenBLAS on the calling thread alone; the team size T: OpenBLAS's own threading as it comes;
 * p <= -2: the rows of A and C cut into -p blocks, one single-threaded sgemm on each of the first -p
 * threads of the OpenMP team (the split bmm and conv2d use; OpenBLAS 0.3.21 threads a 128^3 sgemm
 * over 8 threads with a synchronised shared packing of B). OpenBLAS is never run on fewer threads
 * than the team: its OpenMP region would end libgomp's surplus pool threads (ew_run). */
const int g_gs[HB_CPU_CAL_GEMM] = { 16, 24, 32, 48, 64, 96, 128, 192, 256 }; /* n^3 sgemm */
const int g_vs[HB_CPU_CAL_GEMV] = { 128, 256, 512, 1024, 2048 };           /* 1 x n x n sgemv */
int g_gemm_plan[HB_CPU_CAL_GEMM], g_gemv_plan[HB_CPU_CAL_GEMV];
double g_gemv_par_flops = 2.0 * 256 * 256;

/* Row blocks of at least 4 rows: a split plan's thread count for m rows (1: no split). */
int split_threads(int plan, int64_t m)
{
    int64_t q = -plan;
    if (q > m / 4)
        q = m / 4;
    return q < 2 ? 1 : (int)q;
}

/* Threads of a split sgemv (m or n = 1): blocks of at least 64 of the split dimension (k for m = 1,
 * m for n = 1); 1: no split. */
static int gemv_split_threads(int plan, int64_t m, int64_t k)
{
    int64_t q = -plan, d = (m == 1 ? k : m) / 64;
    if (q > d)
        q = d;
    return q < 2 ? 1 : (int)q;
}

/* sgemv split over the first q threads of the team, each with single-threaded OpenBLAS on a contiguous
 * block: for m = 1 (y = B^T x) the rows of B (k) in q blocks, each thread's partial y in its scratch,
 * summed after a barrier (each thread sums a slice of the columns, in thread order: the same result
 * on every run); for n = 1 (y = A x) the rows of A. OpenBLAS's threaded sgemv splits y instead, so
 * each thread reads a 4n/q-byte piece of every row. Returns 0 when the scratch cannot be had (the
 * caller runs it on one thread). */
static int gemv_split_run(int q, int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C)
{
    const int T = omp_get_max_threads();
    if (m == 1)
        for (int t = 0; t < q; t++)
            if (!scratch(t, (size_t)n))
                return 0;
    blas_serial_begin();
#pragma omp parallel /* the whole team, q of it working (ew_run says why) */
    {
        const int64_t t = omp_get_thread_num(), nt = q < omp_get_num_threads() ? q : omp_get_num_threads();
        if (m == 1) {
            if (t < nt) {
                const int64_t lo = k * t / nt, hi = k * (t + 1) / nt;
                cblas_sgemv(CblasRowMajor, CblasTrans, (int)(hi - lo), (int)n, 1.0f, B + lo * n, (int)n, A + lo, 1,
                            0.0f, g_scratch[t], 1);
            }
#pragma omp barrier
            if (t < nt) {
                const int64_t c0 = n * t / nt, c1 = n * (t + 1) / nt;
                for (int64_t j = c0; j < c1; j++)
                    C[j] = g_scratch[0][j];
                for (int64_t u = 1; u < nt; u++) {
                    const float *restrict pu = g_scratch[u];
#pragma omp simd
                    for (int64_t j = c0; j < c1; j++)
                        C[j] += pu[j];
                }
            }
        } else if (t < nt) {
            const int64_t lo = m * t / nt, hi = m * (t + 1) / nt;
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)(hi - lo), (int)k, 1.0f, A + lo * k, (int)k, B, 1, 0.0f,
                        C + lo, 1);
        }
    }
    blas_serial_end(T);
    return 1;
}

/* C (m x n) = A (m x k) B (k x n) under plan p (above), called outside any parallel region. */
void gemm_plan_run(int p, int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C)
{
    const int T = omp_get_max_threads();
    if (p <= -2 && (m == 1 || n == 1) && !(m == 1 && n == 1)) {
        const int q = gemv_split_threads(p, m, k);
        if (q >= 2 && gemv_split_run(q, m, n, k, A, B, C))
            return;
        p = 1;
    }
    if (p <= -2 && m > 1 && n > 1) {
        const int q = split_threads(p, m);
        if (q >= 2) {
            blas_serial_begin();
#pragma omp parallel /* the whole team, q of it working (ew_run says why) */
            {
                const int64_t t = omp_get_thread_num(), nt = q < omp_get_num_threads() ? q : omp_get_num_threads();
                const int64_t lo = t < nt ? m * t / nt : m, hi = t < nt ? m * (t + 1) / nt : m;
                if (hi > lo)
                    sgemm_nn(hi - lo, n, k, A + lo * k, B, C + lo * n);
            }
            blas_serial_end(T);
            return;
        }
        p = 1;
    }
    if (p > 1 || T < 2) { /* OpenBLAS's own threads: never fewer than the team (ew_run says why) */
        gemm_or_gemv(m, n, k, A, B, C);
        return;
    }
    p = hb_cpu_blas_one_thread();
    gemm_or_gemv(m, n, k, A, B, C);
    hb_cpu_blas_restore(p);
}

/* The plan for one product of 2mnk flops: that of the largest calibrated size of its kind (sgemv for
 * m or n = 1) whose flops do not exceed it; one thread below the smallest, OpenBLAS's own threads
 * from twice the largest (2 x 2 x 256^3, 2 x 2 x 2048^2) on. Before calibration: one thread below
 * g_gemm_par_flops (g_gemv_par_flops), else OpenBLAS's threads. */
int gemm_plan_for(int64_t m, int64_t n, int64_t k)
{
    const int T = omp_get_max_threads();
    const double f = 2.0 * (double)m * (double)n * (double)k;
    const int gemv = m == 1 || n == 1;
    const int ns = gemv ? HB_CPU_CAL_GEMV : HB_CPU_CAL_GEMM;
    const int *plan = gemv ? g_gemv_plan : g_gemm_plan;
    if (T < 2)
        return 1;
    if (!plan[0])
        return f < (gemv ? g_gemv_par_flops : g_gemm_par_flops) ? 1 : T;
    int j = -1;
    double top = 0;
    for (int i = 0; i < ns; i++) {
        const double z = gemv ? g_vs[i] : g_gs[i];
        top = gemv ? 2.0 * z * z : 2.0 * z * z * z;
        if (top <= f)
            j = i;
    }
    if (j < 0)
        return 1;
    if (f >= 2.0 * top)
        return T;
    return plan[j];
}

/* Threads a plan runs on for m rows. */
int plan_threads(int p, int64_t m, int64_t n, int64_t k)
{
    if (p <= -2)
        return m > 1 && n > 1 ? split_threads(p, m) : (m == 1 && n == 1) ? 1 : gemv_split_threads(p, m, k);
    return p < 1 ? 1 : p;
}

static int gemm_one_thread(int64_t m, int64_t n, int64_t k)
{
    return plan_threads(gemm_plan_for(m, n, k), m, n, k) == 1;
}

/* bmm plan: 0 = one matrix after the other on one thread (the whole batch is too small for threads),
 * 1 = parallel over the batch, one single-threaded sgemm per matrix (a single matrix does not pay
 * for threads, or there are at least as many matrices as threads and each is at most 256^3),
 * 2 = one matrix after the other, each under its own product plan (gemm_plan_for). */
int bmm_plan(int64_t batch, int64_t m, int64_t n, int64_t k)
{
    const int T = omp_get_max_threads();
    const double f = 2.0 * (double)m * (double)n * (double)k;
    if (T < 2 || f * (double)batch < g_gemm_par_flops)
        return 0;
    if (batch > 1 && (gemm_one_thread(m, n, k) || (batch >= T && f <= 2.0 * 256.0 * 256.0 * 256.0)))
        return 1;
    return 2;
}

hb_status k_bmm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *A, const float *B,
                float *C)
{
    const int T = omp_get_max_threads();
    const int plan = bmm_plan(batch, m, n, k);
    if (plan != 1) {
        const int p = plan == 0 ? 1 : gemm_plan_for(m, n, k);
        for (int64_t b = 0; b < batch; b++)
            gemm_plan_run(p, m, n, k, A + b * m * k, B + b * k * n, C + b * m * n);
        return HB_OK;
    }
    blas_serial_begin();
    /* the whole team (ew_run says why); with fewer matrices than threads the rest have none */
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < batch; b++)
        gemm_or_gemv(m, n, k, A + b * m * k, B + b * k * n, C + b * m * n);
    blas_serial_end(T);
    return HB_OK;
}
