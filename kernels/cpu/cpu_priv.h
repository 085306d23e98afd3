/*
 * cpu_priv.h - private to the cpu backend (kernels/cpu/): host topology facts and the f32 kernels.
 */
#ifndef HB_CPU_PRIV_H
#define HB_CPU_PRIV_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/config.h"
#include "core/hybench.h"
/* The run's settings (core/config.h) as the backend's configure hook gave them (cpu_backend.c);
 * every setting unset until it is called. Never NULL. */
const hb_config *hb_cpu_cfg(void);
/* Set the settings the cpu kernels read (NULL: all unset); kept by pointer. For the configure hook
 * and for tests that call the kernels directly. */
void hb_cpu_set_cfg(const hb_config *cfg);

/* Host topology from hwloc, loaded once per process (again after a fork). */
int hb_cpu_ncores(void);           /* physical cores this process may run on (>= 1) */
size_t hb_cpu_llc_bytes(void);     /* total bytes of the last cache level over all its instances
                                    * (0 when hwloc reports none) */
const char *hb_cpu_model(void);    /* hwloc "CPUModel" of the first package, or "unknown CPU" */
/* After a library call that may have run an OpenMP region of fewer threads than the team (libgomp then
 * ends the surplus pool threads, and the ones it starts later inherit the master's one-core cpuset):
 * one region of the whole team in which each thread that did not take part in hb_cpu_bind_threads'
 * binding binds itself to its core (thread t: core t). Returns how many threads it bound (0: nothing
 * was lost; the cost is then one region and a thread-local check). Does nothing (0) before the
 * binding, in a forked child not yet bound, or when the OpenMP thread count is not the bound one. */
int hb_cpu_rebind_team(void);

/* Run case c (dtype f32) on host arrays: in[i] holds hb_op_input_elems(op, shape, i) floats and out
 * hb_op_output_elems floats (caller-owned, 64-byte aligned). Uses the OpenMP threads as set by
 * hb_cpu_bind_threads and OpenBLAS. Returns HB_OK, HB_EINVAL (shape not computable or a dimension
 * over the BLAS integer range), HB_ENOMEM (scratch allocation failed). */
hb_status hb_cpu_kernel_run(const hb_case *c, const float *const *in, float *out);
/* Free the kernels' per-thread scratch memory (kept between calls so that timed calls do not
 * page-fault fresh memory). The next call allocates again. */
void hb_cpu_kernel_release(void);
/* Short name of the implementation run for case c ("openblas-sgemm", "onednn-sgemm", "own-omp+nt", ...):
 * the shape's timed choice of oneDNN where one was made (gemm_impl, conv_impl), else
 * hb_cpu_kernel_path's. Static strings. */
const char *hb_cpu_kernel_impl(const hb_case *c);
/* The implementation case c runs without a timed choice (the backend's impl_of hook): the path the
 * dispatch picks from the shape, dtype and thread count alone; paths taken by size carry it in the
 * name (streaming stores "+nt", pooling "+windows"/"+global", the row-split "-rows" plans). */
const char *hb_cpu_kernel_path(const hb_case *c);
/* OpenBLAS on one thread for the BLAS calls that follow, outside any OpenMP parallel region only (the
 * OpenMP build takes its count from omp_get_max_threads() and, once set to 1, keeps it; inside a
 * region the call would shrink the team too). Returns the thread count to hand back to
 * hb_cpu_blas_restore, which sets OpenBLAS's and OpenMP's counts to it again. */
int hb_cpu_blas_one_thread(void);
void hb_cpu_blas_restore(int threads);
/* The transcendental elementwise ops by SLEEF (cpu_ew.c ew_sleef), each NUM / (1 + exp2(Y)):
 *   silu     NUM = x, Y = -log2(e) x
 *   gelu     NUM = x, Y = x (K0 + K1 x^2), K0 = -2 log2(e) sqrt(2/pi), K1 = K0 * 0.044715 (tanh form)
 *   sigmoid  NUM = 1, Y = -log2(e) x
 * HB_EW_FN_* names the function; cpu_ew.c's kernel table gives each op its one. */
enum { HB_EW_FN_SILU, HB_EW_FN_GELU, HB_EW_FN_SIGMOID };
#define HB_EW_L2E 1.4426950408889634f /* log2(e) */
#define HB_EW_GELU_K0 (-2.0f * HB_EW_L2E * 0.7978845608028654f)
#define HB_EW_GELU_K1 (-2.0f * HB_EW_L2E * 0.7978845608028654f * 0.044715f)
/* The vector width the SLEEF ops (gelu, silu, ...) run at: 512 (AVX-512F present at run time, this build has SLEEF
 * and an x86 compiler: ew_avx512.c), 256 (this build's AVX2+FMA loop), 0 (scalar SLEEF or the own
 * polynomial). HB_CPU_ISA=avx2 steps 512 down to 256 (tests cover both loops on an AVX-512 CPU).
 * Decided once per process. */
int hb_cpu_ew_isa(void);
/* The AVX-512 body: function fn (HB_EW_FN_*) of a[i..n) into o, 16 elements at a time, from index i
 * on; returns the index it stopped at (n rounded down to 16 past i; the caller does the tail).
 * With nt, o + i must be 64-byte aligned and the stores are streaming (the caller fences). Callable
 * only when hb_cpu_ew_isa() == 512. */
int64_t hb_cpu_ew_sleef_avx512(int fn, const float *a, float *o, int64_t i, int64_t n, int nt);
/* Threads the kernels use for case c (the count calibrated for its size; 1 where threads do not pay). */
int hb_cpu_kernel_threads(const hb_case *c);

/* Sizes hb_cpu_kernel_calibrate times: elementwise n = 4096 << j (4 Ki..1 Mi elements), sgemm n^3
 * with n = 16, 24, 32, 48, 64, 96, 128, 192, 256, sgemv 1 x n x n with n = 128..2048 (powers of 2). */
#define HB_CPU_CAL_EW 9
#define HB_CPU_CAL_GEMM 9
#define HB_CPU_CAL_GEMV 5

/* What hb_cpu_kernel_calibrate measured and chose. A thread count is tried among 1, 2, 4, ... and
 * the team size T (working threads: every parallel region keeps the whole team, cpu_ew.c
 * ew_run says why); a choice needs to save 10% or more against one thread, and a size where one
 * thread won keeps every smaller size on one thread. */
typedef struct hb_cpu_calibration {
    int threads;               /* OpenMP threads (T) */
    int64_t ew_par_min[2];     /* elements from which threads are used: [0] add/mul/relu (timed with
                                * relu), [1] gelu/silu (silu); -1 when T = 1 */
    double gemm_par_flops;     /* 2mnk of the smallest n^3 sgemm (n = 16..256) threads win; -1 when T = 1 */
    double gemv_par_flops;     /* 2nk of the smallest 1 x n x n sgemv (n = 128..2048) threads win */
    int ew_threads[2][HB_CPU_CAL_EW]; /* threads chosen per elementwise size */
    int gemm_plan[HB_CPU_CAL_GEMM];   /* per sgemm size: 1 OpenBLAS on one thread, T its own threading,
                                       * p <= -2 rows split over -p threads of the OpenMP team with a
                                       * single-threaded sgemm each */
    int gemv_plan[HB_CPU_CAL_GEMV];   /* per sgemv size: OpenBLAS threads (1 or T) */
    double ew_t1[2][HB_CPU_CAL_EW], ew_tp[2][HB_CPU_CAL_EW]; /* best seconds, one thread / T threads */
    double gemm_t[HB_CPU_CAL_GEMM][2]; /* best seconds per sgemm size: one thread / the plan chosen */
} hb_cpu_calibration;

/* Measure, on this process's bound threads (after hb_cpu_bind_threads), how many threads pay for the
 * elementwise ops, sgemm and sgemv at each size above: best of 7 timed calls after one warm-up per
 * candidate, interleaved, in cache (the question is the thread pool's fixed cost, not memory). Sets
 * the kernels' choices; until called they use fixed thresholds (32 Ki elements, 2 * 64^3 flops,
 * 2 * 256^2 flops; below one thread, from there all). Takes some tens of milliseconds (T = 16: about
 * 5 candidates per size). HB_ENOMEM when its buffers (about 40 MiB) cannot be allocated (the
 * defaults stay). */
hb_status hb_cpu_kernel_calibrate(hb_cpu_calibration *out);

/* HB_OK when the kernels can compute c's shape; otherwise HB_ESKIP with the reason written. */
hb_status hb_cpu_kernel_check(const hb_case *c, char *reason, size_t reasonlen);

/* ---- shared between the kernel files (cpu_kernels.c was split by what each part owns) ---- */
/* Reductions, pooling and rmsnorm below this many elements run on the calling thread:
 * a parallel region costs a few microseconds, 32 Ki floats take about that long to stream.
 * The elementwise ops and sgemm use thresholds measured when the backend opens instead
 * (hb_cpu_kernel_calibrate). */
#define EW_PAR_MIN ((int64_t)32 * 1024)

/* exp(x) for float, vectorizable (no calls, no branches): Cephes expf. x is clamped to
 * [-87.3, 88.0], so the result is a normal float in [1.2e-38, 1.65e38]. */
static inline float fexp(float x)
{
    x = x < -87.3f ? -87.3f : (x > 88.0f ? 88.0f : x);
    float t = x * 1.44269504088896341f;
    float kf = (t + 12582912.0f) - 12582912.0f; /* round to nearest: 1.5 * 2^23 */
    float r = x - kf * 0.693359375f;
    r = r - kf * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * r * r + r + 1.0f;
    int32_t ki = (int32_t)kf;
    uint32_t bits = (uint32_t)(ki + 127) << 23;
    float scale;
    memcpy(&scale, &bits, 4);
    return y * scale;
}

/* cpu_blas.c */
void blas_serial_begin(void);          /* OpenBLAS single-threaded for calls from inside an OpenMP region */
void blas_serial_end(int threads);     /* undoes blas_serial_begin (threads: the team size) */
/* cpu_scratch.c */
extern float *g_scratch[];             /* per-thread scratch buffers, slot t = OpenMP thread t */
float *scratch(int slot, size_t floats); /* slot's buffer grown to >= floats (NULL: no memory) */
float *scratch_shared(size_t floats);    /* the team's one shared buffer, grown (outside parallel regions) */
/* cpu_ew.c */
extern int64_t g_ew_par_min[2];        /* elements from which elementwise ops use threads (calibrated) */
extern int g_ew_threads[2][HB_CPU_CAL_EW]; /* calibrated threads per elementwise size (0: none yet) */
double sum_f32(const float *restrict x, int64_t n); /* sum of x[0..n), f64 over 1024-element blocks */
float max_f32(const float *restrict x, int64_t n);  /* max of x[0..n), n >= 1 */
/* The elementwise kernel table (cpu_ew.c): 1 when op has a row (an op of shape kind HB_SK_EW
 * without one is a skip); its implementation name ("sleef-avx512", "own-omp", ...); its calibration
 * class (0: timed with relu, memory-bound; 1: timed with silu, transcendental). */
int ew_supported(hb_op op);
const char *ew_impl(hb_op op);
const char *ew_impl_n(hb_op op, int64_t n); /* ew_impl's name at n elements, "+nt" with streaming stores */
int rows_stream(hb_op op, int64_t rows, int64_t cols); /* 1: k_rows writes op's output with streaming stores */
void ew_run(hb_op op, const float *a, const float *b, float *o, int64_t n, int nth); /* on nth threads */
int ew_threads(hb_op op, int64_t n);   /* threads an elementwise op of n elements runs on */
void k_elementwise(hb_op op, const float *a, const float *b, float *o, int64_t n); /* a table row's op */
void k_rows(hb_op op, const float *restrict x, const float *restrict g, float *restrict y,
            int64_t rows, int64_t cols);      /* sum/mean/max/rmsnorm over each row */
void k_sum_all(const float *restrict x, float *restrict y, int64_t n); /* y[0] = sum of x */
/* cpu_conv.c (struct hbk_conv, hbk_attn: cpu_ref/kshape.h) */
struct hbk_conv;
struct hbk_attn;
hb_status k_pool(const struct hbk_conv *p, int is_max, const float *x, float *y); /* max/avg pooling */
/* k_pool's method for p as a name: "own-omp" (the row method), "own-omp+windows" (input rows under 16
 * wide: window by window), "own-omp+global" (one window per plane); static strings */
const char *pool_impl(const struct hbk_conv *p);
int conv_is_direct(const struct hbk_conv *p); /* 1x1 stride-1 unpadded: the input is its own im2col */
hb_status k_conv2d(const struct hbk_conv *p, const float *x, const float *wt, float *y);      /* NCHW */
hb_status k_conv2d_nhwc(const struct hbk_conv *p, const float *x, const float *wt, float *y); /* NHWC */
/* cpu_dnnl.c: conv2d by oneDNN or the own path above, whichever a timed probe at the shape's first
 * call found faster (cached per shape and thread count; HB_CPU_CONV forces one, see there). */
hb_status conv_run(const hb_case *c, const struct hbk_conv *p, const float *x, const float *wt, float *y);
const char *conv_impl(const hb_case *c); /* "onednn:<impl>" when oneDNN runs c's shape, else NULL */
const char *conv_note(const hb_case *c); /* the probe's figures or why oneDNN is not used; NULL before the first call */
void conv_release(void);                 /* free the cached primitives (the backend's close, cpu_backend.c) */
const char *conv_dnnl_version(char *buf, size_t len); /* "2.6.3 (hash)" or "not in this build" */
void dnnl_engine_release(void);          /* destroy oneDNN's engine and stream (after conv_release, gemm_release) */
/* cpu_dnnl_gemm.c: matmul (A [m,k] x B [k,n] -> C [m,n]) and bmm (batch of those, matrices contiguous),
 * f32 row-major, by OpenBLAS or oneDNN, whichever a timed probe at the shape's first call found faster
 * (cached per op, shape and thread count; HB_CPU_GEMM forces one, see there). gemm_run: HB_OK,
 * HB_ENOMEM / HB_EDEVICE from oneDNN. */
hb_status gemm_run(const hb_case *c, const float *A, const float *B, float *C);
const char *gemm_impl(const hb_case *c); /* "onednn-sgemm" / "onednn-matmul:<impl>" when oneDNN runs c's shape, else NULL */
const char *gemm_note(const hb_case *c); /* extra.gemm_choice: the probe's figures or why OpenBLAS runs; NULL before the first call */
void gemm_release(void);                 /* free the cached primitives (the backend's close) */
/* cpu_probe.c: the timing rounds of the per-shape choices (conv2d in cpu_dnnl.c, matmul/bmm in
 * cpu_dnnl_gemm.c). probe_best_of runs slot k (0 <= k < slots <= PROBE_MAX_SLOTS) as run(ctx, k):
 * once each, untimed (first-call costs; a slot whose first run took over 0.25 s and 4x the fastest
 * is not run again and keeps that time), then in interleaved rounds whose order rotates, each run
 * timed with CLOCK_MONOTONIC: at least 3 rounds, at most PROBE_MAX_ROUNDS, no new round once the
 * rounds took PROBE_ROUNDS_S (after the third) or PROBE_LONG_S (after the first: shapes of seconds
 * per call). best[k] (seconds, caller's array of slots) gets slot k's minimum: on a shared machine
 * single runs lose 10-40 ms to other processes, the minimum is what the code itself costs. Returns
 * the first status other than HB_OK that a run gave (the rounds stop there), HB_EINVAL for bad
 * arguments. probe_now: CLOCK_MONOTONIC in seconds. */
#define PROBE_MAX_SLOTS 8
#define PROBE_MAX_ROUNDS 9
#define PROBE_ROUNDS_S 0.3
#define PROBE_LONG_S 2.0
typedef hb_status (*probe_run_fn)(void *ctx, int slot);
hb_status probe_best_of(int slots, probe_run_fn run, void *ctx, double *best);
double probe_now(void);
/* cpu_gemm.c */
extern double g_gemm_par_flops;        /* 2mnk from which sgemm threads pay off (calibrated) */
extern double g_gemv_par_flops;        /* 2nk from which sgemv threads pay off (calibrated) */
extern const int g_gs[HB_CPU_CAL_GEMM], g_vs[HB_CPU_CAL_GEMV]; /* calibrated sgemm / sgemv sizes n */
extern int g_gemm_plan[HB_CPU_CAL_GEMM], g_gemv_plan[HB_CPU_CAL_GEMV]; /* calibrated plans per size */
int split_threads(int plan, int64_t m); /* threads of a row-split plan for m rows (1: no split) */
void gemm_plan_run(int p, int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C); /* C = A B */
int gemm_plan_for(int64_t m, int64_t n, int64_t k); /* the calibrated plan for an m x n x k product */
int plan_threads(int p, int64_t m, int64_t n, int64_t k); /* threads plan p runs on */
int bmm_plan(int64_t batch, int64_t m, int64_t n, int64_t k); /* 0 serial, 1 over the batch, 2 per product */
hb_status k_bmm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *A, const float *B,
                float *C);             /* batched C = A B */
/* cpu_qmatmul.c: matmul with quantized weights (c->dtype q8_0, q4_k, q5_k, q6_k; core/quant.h):
 * C[m,n] = A[m,k] x W^T, A and C f32 row-major (caller-owned), W the n rows' blocks (hb_quant_bytes(
 * dtype, n*k) bytes). check: HB_OK, or HB_ESKIP with the reason (not matmul, k no whole number of
 * blocks, sizes). run: isa 256 the AVX2 kernels (HB_EINVAL where the CPU lacks AVX2/FMA/F16C), 0 the
 * scalar ones, -1 the process's choice (hb_cpu_qmatmul_isa); HB_OK, HB_EINVAL (a shape check refuses, a
 * NULL pointer), HB_ENOMEM (A's quantized copy, m x k x 1.25 bytes at most, in the shared scratch).
 * isa: 256 where the CPU has AVX2+FMA+F16C, else 0; HB_CPU_QMM_ISA=scalar forces 0 (read once).
 * impl: "own-<dtype>-avx2" or "own-<dtype>-scalar" (static string). */
hb_status hb_cpu_qmatmul_check(const hb_case *c, char *reason, size_t reasonlen);
/* cpu_dequant.c: op dequantize (blocks of c->dtype, c->shape.n values, to f32 out[n]): HB_OK or HB_ESKIP
 * with the reason (check); HB_OK or HB_EINVAL (run). */
hb_status hb_cpu_dequant_check(const hb_case *c, char *reason, size_t reasonlen);
hb_status hb_cpu_dequant_run(const hb_case *c, const void *blocks, float *out);
hb_status hb_cpu_qmatmul_run(const hb_case *c, const float *A, const void *W, float *C, int isa);
int hb_cpu_qmatmul_isa(void);
const char *hb_cpu_qmatmul_impl(const hb_case *c);
/* cpu_attn.c */
hb_status k_attention(const struct hbk_attn *a, const float *q, const float *k, const float *v,
                      float *o);       /* causal/GQA attention, fused and tiled (online softmax) */
int attn_width(void);                  /* floats per vector the next call runs at: 16 (AVX-512F CPU,
                                        * attn_avx512.c) or 8; HB_CPU_ATTN_ISA=avx2 forces 8 (per call) */
const char *attn_impl(void);           /* its implementation name (the width above, exp): static string */
#endif
