/*
 * cpu_kernels.c - the f32 kernels of the "cpu" backend (cpu_priv.h).
 *
 * matmul/bmm:  OpenBLAS cblas_sgemm, row-major; cblas_sgemv when m or n is 1. A product below the
 *              thread threshold measured when the backend opens (hb_cpu_kernel_calibrate: one
 *              thread against all, sgemm n = 16..256, sgemv n = 128..2048) runs on one thread.
 *              bmm runs one single-threaded sgemm per OpenMP thread (parallel over the batch) when
 *              one matrix is below that threshold or there are at least as many matrices as threads
 *              (each at most 256^3); otherwise one after the other with OpenBLAS's own threads.
 *              (OpenBLAS 0.3.21 has no sgemm_batch.)
 * conv2d:      lowered onto sgemm per image and group: y[b][g] (ocg x oh*ow) = W[g] (ocg x cg*kh*kw)
 *              x col (cg*kh*kw x oh*ow), col built by im2col; a 1x1 stride-1 unpadded convolution
 *              uses the input plane as col directly. The columns are cut into L2-sized blocks (or
 *              several small images are put side by side in one block), output channels into
 *              blocks when there is too little work otherwise; each (block, group, channel block)
 *              is one im2col + one single-threaded sgemm, spread over the OpenMP threads
 *              (conv_plan_make). Running OpenBLAS's threaded sgemm per image after a parallel
 *              im2col instead was 40x slower on 16 cores (the two thread pools fight).
 *              layout=nhwc: one sgemm per block of output pixels (batch merged) and group against the
 *              OHWI weights, after an NHWC im2col (none for 1x1 stride 1), output written in place
 *              (k_conv2d_nhwc).
 * attention:   per (batch, head, block of query rows): S = scale * Q K^T by sgemm (only the keys
 *              the causal mask lets the block see), masked softmax in place (fused), O = P V by
 *              sgemm; blocks run in parallel, each with single-threaded sgemm; GQA by indexing the
 *              kv head h / (heads / kv_heads).
 * elementwise, pooling, reductions: plain loops vectorized by the compiler (-O3 -march=native,
 *              `omp simd`) and split over threads with a static schedule. gelu and silu use SLEEF's
 *              vector exp2f (3.5 ULP, ew_sleef; 16 wide from ew_avx512.c where the CPU has AVX-512,
 *              chosen at run time, else 8 wide where built for AVX2) where built with SLEEF (else a vectorizable Cephes expf
 *              polynomial, relative error ~1e-7) in the identities 0.5 x (1 + tanh(u)) =
 *              x / (1 + exp(-2u)) and silu(x) = x / (1 + exp(-x)). Elementwise ops run on one
 *              thread below the size measured at open (relu timed for add/mul/relu, silu for
 *              gelu/silu: 4 Ki..1 Mi elements, one thread against all).
 *              Sums accumulate blocks of 1024 elements in 64 f32 lanes and the block sums in f64.
 *
 * OpenBLAS threading: sgemm called from inside an OpenMP parallel region runs single-threaded (the
 * OpenMP build does so itself; a pthread build gets openblas_set_num_threads(1), restored after),
 * so BLAS never oversubscribes the cores the OpenMP threads hold; matmul and large bmm call the
 * threaded sgemm outside any region.
 *
 * Large outputs (the last-level cache or more, HB_CPU_NT_MIN) of elementwise ops and rmsnorm are
 * written with streaming stores. Scratch memory (im2col blocks, score tiles, pooling rows) is kept
 * per thread between calls and freed by hb_cpu_kernel_release. Environment knobs for measurements:
 * HB_CPU_NT_MIN (bytes or "off"; read once), HB_CPU_COL_KIB (im2col block KiB, default 512; read
 * once), HB_CPU_ATTN_TQ (query rows per attention block, default 128; read per call), HB_CPU_ISA
 * (avx2: gelu/silu's 8-wide loop on an AVX-512 CPU; read once).
 */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#if defined(HB_HAVE_SLEEF)
#include <sleef.h>
#endif
#include <time.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* Reductions, pooling and rmsnorm below this many elements run on the calling thread:
 * a parallel region costs a few microseconds, 32 Ki floats take about that long to stream.
 * The elementwise ops and sgemm use thresholds measured when the backend opens instead
 * (hb_cpu_kernel_calibrate). */
#define EW_PAR_MIN ((int64_t)32 * 1024)

/* Measured thresholds (hb_cpu_kernel_calibrate); these defaults hold until it ran. */
static int64_t g_ew_par_min[2] = { EW_PAR_MIN, EW_PAR_MIN }; /* [0] add/mul/relu, [1] gelu/silu */
static double g_gemm_par_flops = 2.0 * 64 * 64 * 64;       /* 2mnk from which threads pay off */
/* Thread counts chosen per calibrated size (HB_CPU_CAL_EW sizes n = 4096 << j; 0 = not calibrated:
 * the thresholds above decide between one thread and all). */
static int g_ew_threads[2][HB_CPU_CAL_EW];
#define SUM_BLOCK 1024

/* ------------------------------------------------------------------ helpers ---------- */

/* Run sgemm from the OpenMP threads with OpenBLAS single-threaded in between. The OpenMP build (the
 * one hybench links: docs/measurement.md) does that by itself: called inside a parallel region it
 * runs on the calling thread. There openblas_set_num_threads(1) must not be called: it also sets
 * OpenMP's thread count to 1, so the region itself ran on one thread (measured: bmm 16x128^3, conv2d
 * and attention 2x slower on 2 cores, about 10x on 16). The pthread build needs the call. */
static int blas_is_openmp(void)
{
    static int v = -1;
    if (v < 0) v = openblas_get_parallel() == 2;
    return v;
}
static void blas_serial_begin(void)
{
    if (!blas_is_openmp()) openblas_set_num_threads(1);
}
static void blas_serial_end(int threads)
{
    if (blas_is_openmp()) return;
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
}

static inline int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Outputs of at least this many bytes are written with streaming stores: the last-level cache
 * (hwloc), 32 MiB when unknown; such an output cannot stay cached for the next op anyway.
 * HB_CPU_NT_MIN (bytes, or "off") overrides it for measurements. */
static size_t nt_min_bytes(void)
{
    static size_t cached; /* stored + 1; 0 = not read yet */
    size_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v - 1;
    size_t r = hb_cpu_llc_bytes();
    if (r == 0)
        r = (size_t)32 << 20;
    const char *e = getenv("HB_CPU_NT_MIN");
    if (e && *e)
        r = strcmp(e, "off") == 0 ? (size_t)-2 : (size_t)strtoull(e, NULL, 10);
    __atomic_store_n(&cached, r + 1, __ATOMIC_RELAXED);
    return r;
}

/* Per-thread scratch (im2col blocks, attention scores, pooling rows), kept between calls so that
 * a timed call does not page-fault fresh memory; grown on demand, released by
 * hb_cpu_kernel_release (the backend's close). Slot t belongs to OpenMP thread t of the team. */
#define SCRATCH_SLOTS 1024
static float *g_scratch[SCRATCH_SLOTS];
static size_t g_scratch_cap[SCRATCH_SLOTS];

static float *scratch(int slot, size_t floats)
{
    if (slot < 0 || slot >= SCRATCH_SLOTS)
        return NULL;
    if (g_scratch_cap[slot] >= floats && g_scratch[slot])
        return g_scratch[slot];
    size_t cap = floats < 4096 ? 4096 : floats + floats / 4;
    float *p = aligned_alloc(64, (cap * sizeof(float) + 63) / 64 * 64);
    if (!p)
        return NULL;
    free(g_scratch[slot]);
    g_scratch[slot] = p;
    g_scratch_cap[slot] = cap;
    return p;
}

void hb_cpu_kernel_release(void)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        free(g_scratch[i]);
        g_scratch[i] = NULL;
        g_scratch_cap[i] = 0;
    }
}

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

/* Reductions over x[0..n): blocks of SUM_BLOCK elements are reduced into SUM_LANES independent f32
 * partial sums (several vector registers, so the loads of a stream are not serialized behind one
 * add chain), each block's partials summed as a tree and added in f64. Every lane sums
 * SUM_BLOCK / SUM_LANES = 16 values. In L2 on the development host this runs at 83 GB/s per core
 * against 76 for a single-accumulator `omp simd` reduction over blocks of 256. */
#define SUM_LANES 64
/* Sum of the SUM_LANES partials as a tree of vector adds (a serial scalar chain of 64 adds per block
 * cost ~15% of the in-cache throughput). Overwrites a. */
static inline float lanes_sum(float *restrict a)
{
    for (int w = SUM_LANES / 2; w >= 1; w /= 2)
#pragma omp simd
        for (int k = 0; k < w; k++)
            a[k] += a[k + w];
    return a[0];
}

static double sum_f32(const float *restrict x, int64_t n)
{
    double acc = 0.0;
    int64_t i = 0;
    for (; i + SUM_BLOCK <= n; i += SUM_BLOCK) {
        float a[SUM_LANES];
        for (int k = 0; k < SUM_LANES; k++)
            a[k] = x[i + k];
        for (int64_t j = SUM_LANES; j < SUM_BLOCK; j += SUM_LANES)
#pragma omp simd
            for (int k = 0; k < SUM_LANES; k++)
                a[k] += x[i + j + k];
        acc += (double)lanes_sum(a);
    }
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = i; j < n; j++)
        s += x[j];
    return acc + (double)s;
}

static double sumsq_f32(const float *restrict x, int64_t n)
{
    double acc = 0.0;
    int64_t i = 0;
    for (; i + SUM_BLOCK <= n; i += SUM_BLOCK) {
        float a[SUM_LANES];
        for (int k = 0; k < SUM_LANES; k++)
            a[k] = x[i + k] * x[i + k];
        for (int64_t j = SUM_LANES; j < SUM_BLOCK; j += SUM_LANES)
#pragma omp simd
            for (int k = 0; k < SUM_LANES; k++)
                a[k] += x[i + j + k] * x[i + j + k];
        acc += (double)lanes_sum(a);
    }
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = i; j < n; j++)
        s += x[j] * x[j];
    return acc + (double)s;
}

static float max_f32(const float *restrict x, int64_t n)
{
    float m = x[0];
    int64_t i = 0;
    if (n >= SUM_LANES) {
        float a[SUM_LANES];
        for (int k = 0; k < SUM_LANES; k++)
            a[k] = x[k];
        for (i = SUM_LANES; i + SUM_LANES <= n; i += SUM_LANES)
#pragma omp simd
            for (int k = 0; k < SUM_LANES; k++)
                a[k] = x[i + k] > a[k] ? x[i + k] : a[k];
        for (int w = SUM_LANES / 2; w >= 1; w /= 2)
#pragma omp simd
            for (int k = 0; k < w; k++)
                a[k] = a[k + w] > a[k] ? a[k + w] : a[k];
        m = a[0] > m ? a[0] : m;
    }
#pragma omp simd reduction(max : m)
    for (int64_t j = i; j < n; j++)
        m = x[j] > m ? x[j] : m;
    return m;
}

/* dst[0..n) = src[0..n) with streaming stores for the 64-byte aligned body (the caller issues
 * _mm_sfence before its results are read by another thread: at the end of its parallel region). */
static void stream_store(float *restrict dst, const float *restrict src, int64_t n)
{
    int64_t i = 0;
#if defined(__AVX512F__) || defined(__AVX__)
    for (; i < n && ((uintptr_t)(dst + i) & 63u); i++)
        dst[i] = src[i];
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
#endif
    for (; i < n; i++)
        dst[i] = src[i];
}

static void stream_fence(void)
{
#if defined(__AVX__) || defined(__SSE2__)
    _mm_sfence();
#endif
}

#if defined(HB_HAVE_SLEEF)
/* gelu (tanh form, 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), computed as the equal
 * x / (1 + exp(-2u))) or silu (x / (1 + exp(-x))) of a[0..n) into o with SLEEF: exp(y) as
 * Sleef_exp2f{16,8}_u35(y log2 e), the 3.5-ULP exp2f. On the development host (Zen 4, AVX-512) it
 * ran at 0.14 ns per element per core against 0.18 for the 1.0-ULP Sleef_expf16_u10 (SLEEF 3.5.1 has
 * no 3.5-ULP expf) and 4x faster than the 1.0-ULP tanhf; the rounding of y log2 e adds a relative
 * error of about |y| 2^-24, the size exp already turns y's own rounding into. gelu's exp2 argument
 * is x (k0 + k1 x^2) with k0 = -2 log2(e) sqrt(2/pi), k1 = k0 0.044715 folded (3 operations, not 5).
 * Relative error against the f64 formulas: about 1e-7 (tests/test_cpu_kernels.c, test_ew_range).
 * The tail runs the scalar Sleef_exp2f_u35. Returns n. exp overflowing to +inf gives -0 (silu for
 * x < -88.7, gelu for x below about -9.3): the limits. Built when SLEEF is found (Makefile).
 *
 * nt: write o with streaming stores straight from the registers (o from a 64-byte boundary on; the
 * caller fences). Beyond the last-level cache this keeps the stores draining while exp computes:
 * computing a 1024-element block into an L1 buffer and then streaming it out (ew_range's path for
 * the other ops) alternates the two, and the core stalls on the write-combining buffers during the
 * copy-out. Measured on the 2-core Zen 5 VM, n = 2^25, 2 threads, best of 15 under load 6: silu
 * 1.20x relu's time by blocks, 0.95x streamed directly; gelu 1.65x and 1.31x. ew_range takes this
 * path with AVX-512 only (one store per 64-byte line; ew_range says why). The 16-wide body is
 * hb_cpu_ew_sleef_avx512 (ew_avx512.c, compiled with AVX-512 in every x86-64 build). */
#define L2E HB_EW_L2E
#define GELU_K0 HB_EW_GELU_K0
#define GELU_K1 HB_EW_GELU_K1
static int64_t ew_sleef(int gelu, const float *restrict a, float *restrict o, int64_t n, int nt)
{
    int64_t i = 0;
    if (nt) /* scalar up to o's first 64-byte boundary, streamed from there */
        for (; i < n && ((uintptr_t)(o + i) & 63u); i++) {
            const float x = a[i];
            o[i] = x / (1.0f + Sleef_exp2f_u35(gelu ? x * (GELU_K0 + GELU_K1 * x * x) : -L2E * x));
        }
    if (hb_cpu_ew_isa() == 512) /* 16 wide, whatever -march this file was built with (ew_avx512.c) */
        i = hb_cpu_ew_sleef_avx512(gelu, a, o, i, n, nt);
#if defined(__AVX2__) && defined(__FMA__)
    else if (hb_cpu_ew_isa() == 256) {
        const __m256 one = _mm256_set1_ps(1.0f), ml = _mm256_set1_ps(-L2E);
        const __m256 k0 = _mm256_set1_ps(GELU_K0), k1 = _mm256_set1_ps(GELU_K1);
#define EW_SLEEF_LOOP(STORE)                                                                          \
        if (gelu)                                                                                     \
            for (; i + 8 <= n; i += 8) {                                                              \
                const __m256 x = _mm256_loadu_ps(a + i);                                              \
                const __m256 y = _mm256_mul_ps(x, _mm256_fmadd_ps(k1, _mm256_mul_ps(x, x), k0));      \
                STORE(o + i, _mm256_div_ps(x, _mm256_add_ps(one, Sleef_exp2f8_u35(y))));              \
            }                                                                                         \
        else                                                                                          \
            for (; i + 8 <= n; i += 8) {                                                              \
                const __m256 x = _mm256_loadu_ps(a + i);                                              \
                const __m256 e = Sleef_exp2f8_u35(_mm256_mul_ps(ml, x));                              \
                STORE(o + i, _mm256_div_ps(x, _mm256_add_ps(one, e)));                                \
            }
        if (nt) {
            EW_SLEEF_LOOP(_mm256_stream_ps)
        } else {
            EW_SLEEF_LOOP(_mm256_storeu_ps)
        }
#undef EW_SLEEF_LOOP
    }
#endif
    /* the tail (and everything without a vector ISA) with SLEEF's scalar 3.5-ULP exp2f */
    for (; i < n; i++) {
        const float x = a[i];
        o[i] = x / (1.0f + Sleef_exp2f_u35(gelu ? x * (GELU_K0 + GELU_K1 * x * x) : -L2E * x));
    }
    return i;
}
#endif

/* The implementation gelu and silu run: SLEEF's 16- or 8-wide loop (hb_cpu_ew_isa: AVX-512 chosen at
 * run time, AVX2 where built for it), else hybench's own polynomial in OpenMP loops. */
static const char *ew_impl(void)
{
    const int isa = hb_cpu_ew_isa();
    return isa == 512 ? "sleef-avx512" : isa == 256 ? "sleef-avx2" : "own-omp";
}

/* Plain vectorized loop over n elements (no threads). b is NULL for the one-input ops. */
static void ew_plain(hb_op op, const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
    switch (op) {
    case HB_OP_ADD:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            o[i] = a[i] + b[i];
        break;
    case HB_OP_MUL:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            o[i] = a[i] * b[i];
        break;
    case HB_OP_RELU:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            o[i] = a[i] > 0.0f ? a[i] : 0.0f;
        break;
    case HB_OP_GELU:
    case HB_OP_SILU: {
        int64_t i = 0;
#if defined(HB_HAVE_SLEEF)
        i = ew_sleef(op == HB_OP_GELU, a, o, n, 0);
#endif
        if (op == HB_OP_GELU) {
#pragma omp simd
            for (int64_t j = i; j < n; j++) {
                const float x = a[j];
                const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x); /* sqrt(2/pi) */
                o[j] = x / (1.0f + fexp(-2.0f * u));
            }
        } else {
#pragma omp simd
            for (int64_t j = i; j < n; j++)
                o[j] = a[j] / (1.0f + fexp(-a[j]));
        }
        break;
    }
    default:
        break;
    }
}

#define EW_BLOCK 1024
/* One thread's range; with nt, blocks are computed into an L1-resident buffer and written with
 * streaming stores (no write-allocate read of the output). */
static void ew_range(hb_op op, const float *a, const float *b, float *o, int64_t n, int nt)
{
    if (!nt || n < 2 * EW_BLOCK) {
        ew_plain(op, a, b, o, n);
        return;
    }
#if defined(HB_HAVE_SLEEF)
    /* streamed from the registers, one whole 64-byte line per store, where the CPU has AVX-512
     * (chosen at run time, so the GPU machine's x86-64-v3 bundle takes it too); the AVX2 loop keeps
     * the blocks: with two 32-byte streaming stores per line and exp between them, the 16-core Xeon
     * host measured 1.83x relu's time (n = 2^28) against 1.39x by blocks, but on a lease whose
     * single-core sgemm read half the other's, so the cause is not established */
    if ((op == HB_OP_GELU || op == HB_OP_SILU) && hb_cpu_ew_isa() == 512) {
        ew_sleef(op == HB_OP_GELU, a, o, n, 1);
        stream_fence();
        return;
    }
#endif
    float tmp[EW_BLOCK] __attribute__((aligned(64)));
    for (int64_t i = 0; i < n; i += EW_BLOCK) {
        const int64_t m = n - i < EW_BLOCK ? n - i : EW_BLOCK;
        ew_plain(op, a + i, b ? b + i : NULL, tmp, m);
        stream_store(o + i, tmp, m);
    }
    stream_fence();
}

static int ew_class(hb_op op) { return op == HB_OP_GELU || op == HB_OP_SILU; }

/* o = op(a[, b]) over n elements, on the calling thread (nth <= 1) or split over the first nth threads
 * of the whole OpenMP team (the others have nothing to do: a region of fewer threads than the team
 * would make libgomp end the surplus pool threads, and the ones it starts again later inherit the
 * master's one-core binding, hb_cpu_bind_threads: on the 16-core host every later region then ran
 * on one core). */
static void ew_run(hb_op op, const float *a, const float *b, float *o, int64_t n, int nth)
{
    const int nt = (double)n * 4.0 >= (double)nt_min_bytes();
    if (nth <= 1) {
        ew_range(op, a, b, o, n, nt);
        return;
    }
#pragma omp parallel
    {
        const int64_t team = omp_get_num_threads(), T = nth < team ? nth : team, t = omp_get_thread_num();
        if (t < T) {
        const int64_t lo = n * t / T / 16 * 16, hi = t + 1 == T ? n : n * (t + 1) / T / 16 * 16;
        if (hi > lo)
            ew_range(op, a + lo, b ? b + lo : NULL, o + lo, hi - lo, nt);
        }
    }
}

/* Threads for an elementwise op of n elements: the count calibrated for the largest size measured
 * that is not above n (one thread below the smallest, all threads from twice the largest, 4 Mi
 * elements: beyond the caches the threads' bandwidth is what counts); before calibration, all
 * threads from the threshold g_ew_par_min of its class on. */
static int ew_threads(hb_op op, int64_t n)
{
    const int T = omp_get_max_threads(), cls = ew_class(op);
    if (T < 2)
        return 1;
    if (!g_ew_threads[cls][0])
        return n >= g_ew_par_min[cls] ? T : 1;
    if (n < 4096)
        return 1;
    if (n >= ((int64_t)4096 << HB_CPU_CAL_EW))
        return T;
    int j = 0;
    while (j + 1 < HB_CPU_CAL_EW && ((int64_t)4096 << (j + 1)) <= n)
        j++;
    return g_ew_threads[cls][j];
}

static void k_elementwise(hb_op op, const float *a, const float *b, float *o, int64_t n)
{
    ew_run(op, a, b, o, n, ew_threads(op, n));
}

/* ------------------------------------------------------------------ reductions ------- */

static void k_rows(hb_op op, const float *restrict x, const float *restrict g, float *restrict y,
                   int64_t rows, int64_t cols)
{
    const int T = omp_get_max_threads();
    const int par = rows * cols >= EW_PAR_MIN;
    if (rows >= T || !par) {
        /* rmsnorm over a large tensor writes its output with streaming stores, row by row from a
         * per-thread row buffer */
        const int nt = op == HB_OP_RMSNORM && (double)rows * (double)cols * 4.0 >= (double)nt_min_bytes();
#pragma omp parallel if (par && rows > 1)
        {
            /* without a row buffer (allocation failed) rows are written directly */
            float *row = nt ? scratch(omp_get_thread_num(), (size_t)cols) : NULL;
#pragma omp for schedule(static)
            for (int64_t r = 0; r < rows; r++) {
                const float *xr = x + r * cols;
                switch (op) {
                case HB_OP_SUM: y[r] = (float)sum_f32(xr, cols); break;
                case HB_OP_MEAN: y[r] = (float)(sum_f32(xr, cols) / (double)cols); break;
                case HB_OP_MAX: y[r] = max_f32(xr, cols); break;
                default: { /* RMSNORM */
                    const float inv = (float)(1.0 / sqrt(sumsq_f32(xr, cols) / (double)cols + 1e-5));
                    float *yr = y + r * cols;
                    float *dst = row ? row : yr;
#pragma omp simd
                    for (int64_t j = 0; j < cols; j++)
                        dst[j] = xr[j] * inv * g[j];
                    if (row)
                        stream_store(yr, row, cols);
                }
                }
            }
            if (nt)
                stream_fence();
        }
        return;
    }
    /* Few long rows: split each row over the threads, partial results per chunk. */
    const int64_t nch = (int64_t)T;
    double *part = malloc((size_t)(rows * nch) * sizeof *part);
    if (!part) { /* fall back to one thread per row */
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = x + r * cols;
            double s = op == HB_OP_MAX ? (double)max_f32(xr, cols)
                     : op == HB_OP_RMSNORM ? sumsq_f32(xr, cols) : sum_f32(xr, cols);
            if (op == HB_OP_RMSNORM) {
                const float inv = (float)(1.0 / sqrt(s / (double)cols + 1e-5));
                for (int64_t j = 0; j < cols; j++)
                    y[r * cols + j] = xr[j] * inv * g[j];
            } else {
                y[r] = op == HB_OP_MEAN ? (float)(s / (double)cols) : (float)s;
            }
        }
        return;
    }
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int64_t r = 0; r < rows; r++) {
            const int64_t lo = cols * t / nt, hi = cols * (t + 1) / nt;
            const float *xr = x + r * cols;
            if (op == HB_OP_MAX)
                part[r * nch + t] = hi > lo ? (double)max_f32(xr + lo, hi - lo) : -HUGE_VAL;
            else if (op == HB_OP_RMSNORM)
                part[r * nch + t] = sumsq_f32(xr + lo, hi - lo);
            else
                part[r * nch + t] = sum_f32(xr + lo, hi - lo);
        }
        for (int64_t tt = nt; tt < nch; tt++) /* a smaller team than asked: empty chunks */
            if (t == 0)
                for (int64_t r = 0; r < rows; r++) {
                    part[r * nch + tt] = op == HB_OP_MAX ? -HUGE_VAL : 0.0;
                }
#pragma omp barrier
        if (op == HB_OP_RMSNORM) {
            for (int64_t r = 0; r < rows; r++) {
                double s = 0.0;
                for (int64_t k = 0; k < nch; k++)
                    s += part[r * nch + k];
                const float inv = (float)(1.0 / sqrt(s / (double)cols + 1e-5));
                const int64_t lo = cols * t / nt, hi = cols * (t + 1) / nt;
                const float *xr = x + r * cols;
                float *yr = y + r * cols;
#pragma omp simd
                for (int64_t j = lo; j < hi; j++)
                    yr[j] = xr[j] * inv * g[j];
            }
        } else {
#pragma omp single
            for (int64_t r = 0; r < rows; r++) {
                if (op == HB_OP_MAX) {
                    double m = part[r * nch];
                    for (int64_t k = 1; k < nch; k++)
                        m = part[r * nch + k] > m ? part[r * nch + k] : m;
                    y[r] = (float)m;
                } else {
                    double s = 0.0;
                    for (int64_t k = 0; k < nch; k++)
                        s += part[r * nch + k];
                    y[r] = op == HB_OP_MEAN ? (float)(s / (double)cols) : (float)s;
                }
            }
        }
    }
    free(part);
}

static void k_sum_all(const float *restrict x, float *restrict y, int64_t n)
{
    const int T = omp_get_max_threads();
    double part[256];
    if (n < EW_PAR_MIN || T > 256) {
        y[0] = (float)sum_f32(x, n);
        return;
    }
    int used = 1;
#pragma omp parallel num_threads(T)
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        part[t] = sum_f32(x + n * t / nt, n * (t + 1) / nt - n * t / nt);
        if (t == 0)
            used = (int)nt;
    }
    double total = 0.0;
    for (int t = 0; t < used; t++) /* in thread order: the same result on every run */
        total += part[t];
    y[0] = (float)total;
}

/* ------------------------------------------------------------------ pooling ---------- */

/* Range [lo, hi) of output positions o with 0 <= o*s + off < in (off = k*d - p). */
static void tap_range(int64_t out, int64_t in, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
    if (h > out)
        h = out;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* Pooling of one plane, window by window: for outputs narrower than POOL_ROW_MIN (global and
 * large-kernel pooling), where the row method's per-tap loop overhead dominates. */
static void pool_plane_direct(const hbk_conv *p, int is_max, const float *restrict xp, float *restrict yp)
{
    for (int64_t oy = 0; oy < p->oh; oy++) {
        const int64_t iy0 = oy * p->sh - p->ph;
        for (int64_t ox = 0; ox < p->ow; ox++) {
            const int64_t ix0 = ox * p->sw - p->pw;
            float acc = is_max ? -HUGE_VALF : 0.0f;
            int64_t cnt = 0;
            for (int64_t ky = 0; ky < p->kh; ky++) {
                const int64_t iy = iy0 + ky * p->dh;
                if (iy < 0 || iy >= p->h)
                    continue;
                const float *xr = xp + iy * p->w;
                int64_t kx0 = 0, kx1 = p->kw;
                while (kx0 < kx1 && ix0 + kx0 * p->dw < 0)
                    kx0++;
                while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dw >= p->w)
                    kx1--;
                cnt += kx1 - kx0;
                if (p->dw == 1) {
                    const float *xs = xr + ix0;
                    if (is_max) {
#pragma omp simd reduction(max : acc)
                        for (int64_t kx = kx0; kx < kx1; kx++)
                            acc = xs[kx] > acc ? xs[kx] : acc;
                    } else {
#pragma omp simd reduction(+ : acc)
                        for (int64_t kx = kx0; kx < kx1; kx++)
                            acc += xs[kx];
                    }
                } else {
                    for (int64_t kx = kx0; kx < kx1; kx++) {
                        const float v = xr[ix0 + kx * p->dw];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                    }
                }
            }
            yp[oy * p->ow + ox] = cnt == 0 ? 0.0f : (is_max ? acc : acc / (float)cnt);
        }
    }
}

/* Horizontal pass of one output row: orow[ox] = reduction over the kw taps of v (the vertically
 * reduced input row). The interior [ilo, ihi), where every tap is in bounds, runs as one vectorized
 * loop (specialized for the 3-tap kernels of ResNet-style pooling); the few border columns are
 * counted tap by tap. avg divides by nky * (in-bounds taps). */
static void pool_hrow(const hbk_conv *p, int is_max, const float *restrict v, float *restrict orow,
                      int64_t nky, int64_t ilo, int64_t ihi)
{
    const int64_t sw = p->sw, dw = p->dw, kw = p->kw, pw = p->pw, w = p->w, ow = p->ow;
    for (int64_t ox = 0; ox < ow; ox++) {
        if (ox == ilo && ihi > ilo)
            ox = ihi; /* skip the interior */
        if (ox >= ow)
            break;
        float acc = is_max ? -HUGE_VALF : 0.0f;
        int64_t cnt = 0;
        for (int64_t kx = 0; kx < kw; kx++) {
            const int64_t ix = ox * sw - pw + kx * dw;
            if (ix < 0 || ix >= w)
                continue;
            acc = is_max ? (v[ix] > acc ? v[ix] : acc) : acc + v[ix];
            cnt++;
        }
        orow[ox] = cnt == 0 ? 0.0f : (is_max ? acc : acc / ((float)nky * (float)cnt));
    }
    if (ihi <= ilo)
        return;
    const float inv = 1.0f / ((float)nky * (float)kw);
    if (kw == 3 && dw == 1 && sw == 2) {
        if (is_max) {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = 2 * ox - pw;
                const float m = v[b] > v[b + 1] ? v[b] : v[b + 1];
                orow[ox] = m > v[b + 2] ? m : v[b + 2];
            }
        } else {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = 2 * ox - pw;
                orow[ox] = (v[b] + v[b + 1] + v[b + 2]) * inv;
            }
        }
    } else if (kw == 3 && dw == 1 && sw == 1) {
        if (is_max) {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = ox - pw;
                const float m = v[b] > v[b + 1] ? v[b] : v[b + 1];
                orow[ox] = m > v[b + 2] ? m : v[b + 2];
            }
        } else {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = ox - pw;
                orow[ox] = (v[b] + v[b + 1] + v[b + 2]) * inv;
            }
        }
    } else {
        /* any kernel: tap by tap over the interior, each pass vectorized over ox */
        for (int64_t ox = ilo; ox < ihi; ox++)
            orow[ox] = v[ox * sw - pw];
        for (int64_t kx = 1; kx < kw; kx++) {
            const int64_t off = kx * dw - pw;
            if (is_max) {
#pragma omp simd
                for (int64_t ox = ilo; ox < ihi; ox++)
                    orow[ox] = v[ox * sw + off] > orow[ox] ? v[ox * sw + off] : orow[ox];
            } else {
#pragma omp simd
                for (int64_t ox = ilo; ox < ihi; ox++)
                    orow[ox] += v[ox * sw + off];
            }
        }
        if (!is_max)
            for (int64_t ox = ilo; ox < ihi; ox++)
                orow[ox] *= inv;
    }
}

/* Pooling of one plane, row by row: the kh input rows of an output row are first reduced
 * vertically into v (contiguous, vectorized), then v horizontally (pool_hrow). */
static void pool_plane_rows(const hbk_conv *p, int is_max, const float *restrict xp, float *restrict yp,
                            float *restrict v, int64_t ilo, int64_t ihi)
{
    const int64_t w = p->w;
    for (int64_t oy = 0; oy < p->oh; oy++) {
        float *restrict orow = yp + oy * p->ow;
        int64_t nky = 0;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
            if (iy < 0 || iy >= p->h)
                continue;
            const float *restrict xr = xp + iy * w;
            if (nky == 0) {
                memcpy(v, xr, (size_t)w * sizeof(float));
            } else if (is_max) {
#pragma omp simd
                for (int64_t i = 0; i < w; i++)
                    v[i] = xr[i] > v[i] ? xr[i] : v[i];
            } else {
#pragma omp simd
                for (int64_t i = 0; i < w; i++)
                    v[i] += xr[i];
            }
            nky++;
        }
        if (nky == 0) { /* the window rows lie wholly in the padding (see ref.c) */
            memset(orow, 0, (size_t)p->ow * sizeof(float));
            continue;
        }
        pool_hrow(p, is_max, v, orow, nky, ilo, ihi);
    }
}

#define POOL_ROW_MIN 16

static hb_status k_pool(const hbk_conv *p, int is_max, const float *x, float *y)
{
    const int64_t planes = p->b * p->c;
    const int direct = p->ow < POOL_ROW_MIN;
    /* global pooling (one window = the whole plane, ResNet pool5): a contiguous reduction */
    const int global = p->oh == 1 && p->ow == 1 && p->ph == 0 && p->pw == 0 && p->kh == p->h &&
                       p->kw == p->w;
    /* interior output columns: every horizontal tap in bounds */
    int64_t ilo, ihi, lo2, hi2;
    tap_range(p->ow, p->w, p->sw, -p->pw, &ilo, &ihi);
    tap_range(p->ow, p->w, p->sw, (p->kw - 1) * p->dw - p->pw, &lo2, &hi2);
    ilo = ilo > lo2 ? ilo : lo2;
    ihi = ihi < hi2 ? ihi : hi2;
    if (ihi < ilo)
        ihi = ilo;
    int failed = 0;
    const int par = planes > 1 && planes * p->oh * p->ow * p->kh * p->kw >= EW_PAR_MIN;
#pragma omp parallel if (par)
    {
        float *v = direct ? NULL : scratch(omp_get_thread_num(), (size_t)p->w);
        if (!direct && !v) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int64_t pl = 0; pl < planes; pl++) {
            const float *xp = x + pl * p->h * p->w;
            float *yp = y + pl * p->oh * p->ow;
            if (global)
                yp[0] = is_max ? max_f32(xp, p->h * p->w)
                               : (float)(sum_f32(xp, p->h * p->w) / (double)(p->h * p->w));
            else if (direct)
                pool_plane_direct(p, is_max, xp, yp);
            else if (v)
                pool_plane_rows(p, is_max, xp, yp, v, ilo, ihi);
        }
    }
    return failed ? HB_ENOMEM : HB_OK;
}

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

/* OpenBLAS on one thread for the BLAS calls that follow. The OpenMP build of OpenBLAS takes its
 * thread count from omp_get_max_threads() at each call and, once set to 1, keeps 1 until
 * openblas_set_num_threads raises it; so both counts are set to 1 and restored (outside any parallel
 * region only: inside one the call would also shrink the team, see blas_serial_begin). */
int hb_cpu_blas_one_thread(void)
{
    const int T = omp_get_max_threads();
    openblas_set_num_threads(1);
    return T;
}

void hb_cpu_blas_restore(int threads)
{
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
}

/* Thread plans of a product, measured per size by hb_cpu_kernel_calibrate (0 until then):
 * 1: OpenBLAS on the calling thread alone; the team size T: OpenBLAS's own threading as it comes;
 * p <= -2: the rows of A and C cut into -p blocks, one single-threaded sgemm on each of the first -p
 * threads of the OpenMP team (the split bmm and conv2d use; OpenBLAS 0.3.21 threads a 128^3 sgemm
 * over 8 threads with a synchronised shared packing of B). OpenBLAS is never run on fewer threads
 * than the team: its OpenMP region would end libgomp's surplus pool threads (ew_run). */
static const int g_gs[HB_CPU_CAL_GEMM] = { 16, 24, 32, 48, 64, 96, 128, 192, 256 }; /* n^3 sgemm */
static const int g_vs[HB_CPU_CAL_GEMV] = { 128, 256, 512, 1024, 2048 };           /* 1 x n x n sgemv */
static int g_gemm_plan[HB_CPU_CAL_GEMM], g_gemv_plan[HB_CPU_CAL_GEMV];
static double g_gemv_par_flops = 2.0 * 256 * 256;

/* Row blocks of at least 4 rows: a split plan's thread count for m rows (1: no split). */
static int split_threads(int plan, int64_t m)
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
static void gemm_plan_run(int p, int64_t m, int64_t n, int64_t k, const float *A, const float *B, float *C)
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
static int gemm_plan_for(int64_t m, int64_t n, int64_t k)
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
static int plan_threads(int p, int64_t m, int64_t n, int64_t k)
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
static int bmm_plan(int64_t batch, int64_t m, int64_t n, int64_t k)
{
    const int T = omp_get_max_threads();
    const double f = 2.0 * (double)m * (double)n * (double)k;
    if (T < 2 || f * (double)batch < g_gemm_par_flops)
        return 0;
    if (batch > 1 && (gemm_one_thread(m, n, k) || (batch >= T && f <= 2.0 * 256.0 * 256.0 * 256.0)))
        return 1;
    return 2;
}

static hb_status k_bmm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *A, const float *B,
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

/* ------------------------------------------------------------------ conv2d ----------- */

static int conv_is_direct(const hbk_conv *p)
{
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0;
}

/* im2col of output columns [col0, col0 + ncols) (column j = output pixel oy*ow + ox) for the input
 * channels of group g of one image: row r = (ci, ky, kx) of the group at col + r * ld. */
static void im2col_block(const hbk_conv *p, const float *xb, int64_t g, int64_t col0, int64_t ncols,
                         float *restrict col, int64_t ld)
{
    const int64_t kk = p->kh * p->kw, kg = p->cg * kk;
    for (int64_t r = 0; r < kg; r++) {
        const int64_t ci = g * p->cg + r / kk, ky = (r / p->kw) % p->kh, kx = r % p->kw;
        const float *xc = xb + ci * p->h * p->w;
        const int64_t off = kx * p->dw - p->pw;
        int64_t lo, hi;
        tap_range(p->ow, p->w, p->sw, off, &lo, &hi);
        float *dst = col + r * ld;
        int64_t j = 0, oy = col0 / p->ow, ox = col0 % p->ow;
        while (j < ncols) {
            /* output columns [a, b) of output row oy go to d[0 .. b-a) */
            const int64_t a = ox, b = ox + (p->ow - ox < ncols - j ? p->ow - ox : ncols - j);
            float *d = dst + j;
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
            if (iy < 0 || iy >= p->h) {
                memset(d, 0, (size_t)(b - a) * sizeof(float));
            } else {
                const float *xr = xc + iy * p->w;
                /* in-bounds taps [lo, hi) clamped to [a, b) */
                const int64_t l = lo > a ? (lo < b ? lo : b) : a, h = hi < b ? (hi > l ? hi : l) : b;
                for (int64_t q = a; q < l; q++)
                    d[q - a] = 0.0f;
                if (p->sw == 1) {
                    if (h > l)
                        memcpy(d + (l - a), xr + l + off, (size_t)(h - l) * sizeof(float));
                } else {
                    const int64_t sw = p->sw;
                    for (int64_t q = l; q < h; q++)
                        d[q - a] = xr[q * sw + off];
                }
                for (int64_t q = h; q < b; q++)
                    d[q - a] = 0.0f;
            }
            const int64_t seg = b - a;
            j += seg;
            oy++;
            ox = 0;
        }
    }
}

/* Target size of one im2col block: 512 KiB (a quarter to a half of the per-core L2 of current
 * x86 cores, so the block and OpenBLAS's packed panels stay in L2). HB_CPU_COL_KIB overrides it
 * for measurements. */
static int64_t col_block_bytes(void)
{
    static int64_t cached;
    int64_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v;
    v = 512 * 1024;
    const char *e = getenv("HB_CPU_COL_KIB");
    if (e && atoll(e) > 0)
        v = atoll(e) * 1024;
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    return v;
}

/* Work split of a convolution. An item is one im2col block (kg x columns, about col_block_bytes)
 * and one single-threaded sgemm (ocb x columns x kg) for one group; items are spread over the
 * OpenMP threads. Columns are output pixels: of one image, split into blocks of nb (>= 64) when
 * an image is larger than a block or when there are fewer than 4 items per thread; or of nimg
 * images side by side when several small images fit one block (ResNet's 7x7 layers), the sgemm
 * result then being scattered to the images. Output channels are split into blocks of ocb (>= 16)
 * only when there is still less than one item per thread. */
typedef struct conv_plan { int64_t nimg, nbg, nb, ncb, ocb, nob, items; } conv_plan;

static int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

static void conv_plan_make(const hbk_conv *p, int direct, int T, conv_plan *pl)
{
    const int64_t ohw = p->oh * p->ow, kg = p->cg * p->kh * p->kw;
    int64_t cols = col_block_bytes() / (kg * 4); /* columns of one block */
    if (cols < 64)
        cols = 64;
    pl->nimg = 1;
    if (!direct && p->b > 1 && 2 * ohw <= cols) {
        int64_t nimg = cols / ohw;
        int64_t par = (p->b * p->g) / T; /* images per item that still leave one item per thread */
        if (par < 1)
            par = 1;
        nimg = nimg < par ? nimg : par;
        pl->nimg = nimg < p->b ? nimg : p->b;
    }
    pl->nbg = (p->b + pl->nimg - 1) / pl->nimg;
    const int64_t units = pl->nbg * p->g;
    int64_t nb = ohw;
    if (pl->nimg == 1) {
        if (nb > cols)
            nb = round16(cols);
        const int64_t want = 4 * (int64_t)T;
        if (units * ((ohw + nb - 1) / nb) < want) {
            int64_t per = (want + units - 1) / units; /* column blocks wanted per image-group */
            int64_t nb2 = round16((ohw + per - 1) / per);
            if (nb2 < nb)
                nb = nb2;
        }
        if (nb < 64)
            nb = ohw < 64 ? ohw : 64;
        int64_t ncb = (ohw + nb - 1) / nb; /* balance the blocks: no sliver at the end */
        nb = round16((ohw + ncb - 1) / ncb);
        if (nb > ohw)
            nb = ohw;
    }
    pl->nb = nb;
    pl->ncb = (ohw + nb - 1) / nb;
    pl->nob = 1;
    if (units * pl->ncb < T) {
        int64_t nob = (T + units * pl->ncb - 1) / (units * pl->ncb);
        int64_t maxob = p->ocg / 16 > 0 ? p->ocg / 16 : 1;
        pl->nob = nob < maxob ? nob : maxob;
    }
    pl->ocb = (p->ocg + pl->nob - 1) / pl->nob;
    pl->nob = (p->ocg + pl->ocb - 1) / pl->ocb;
    pl->items = units * pl->ncb * pl->nob;
}

static hb_status k_conv2d(const hbk_conv *p, const float *x, const float *wt, float *y)
{
    const int T = omp_get_max_threads();
    const int64_t ohw = p->oh * p->ow, kg = p->cg * p->kh * p->kw, chw = p->c * p->h * p->w;
    const int direct = conv_is_direct(p);
    conv_plan pl;
    conv_plan_make(p, direct, T, &pl);
    /* scratch per thread: the col block, and for grouped images the sgemm result before scatter */
    const size_t need = direct ? 0
                      : pl.nimg > 1 ? (size_t)((kg + pl.ocb) * pl.nimg * ohw)
                                    : (size_t)(kg * pl.nb);
    int failed = 0;
    blas_serial_begin();
#pragma omp parallel if (pl.items > 1)
    {
        float *col = need ? scratch(omp_get_thread_num(), need) : NULL;
        if (need && !col) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < pl.items; it++) {
            if (need && !col)
                continue;
            const int64_t ob = it % pl.nob, cb = (it / pl.nob) % pl.ncb, bgi = it / (pl.nob * pl.ncb);
            const int64_t g = bgi % p->g, b0 = (bgi / p->g) * pl.nimg;
            const int64_t o0 = ob * pl.ocb, mo = p->ocg - o0 < pl.ocb ? p->ocg - o0 : pl.ocb;
            const float *A = wt + (g * p->ocg + o0) * kg;
            if (pl.nimg > 1) {
                const int64_t ni = p->b - b0 < pl.nimg ? p->b - b0 : pl.nimg, ld = ni * ohw;
                float *C = col + kg * ld;
                for (int64_t i = 0; i < ni; i++)
                    im2col_block(p, x + (b0 + i) * chw, g, 0, ohw, col + i * ohw, ld);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mo, (int)ld, (int)kg, 1.0f, A,
                            (int)kg, col, (int)ld, 0.0f, C, (int)ld);
                for (int64_t o = 0; o < mo; o++)
                    for (int64_t i = 0; i < ni; i++)
                        memcpy(y + ((b0 + i) * p->oc + g * p->ocg + o0 + o) * ohw, C + o * ld + i * ohw,
                               (size_t)ohw * sizeof(float));
                continue;
            }
            const int64_t col0 = cb * pl.nb, ncols = ohw - col0 < pl.nb ? ohw - col0 : pl.nb;
            const float *xb = x + b0 * chw;
            const float *B;
            int64_t ldb;
            if (direct) { /* 1x1, stride 1, no padding: the input plane block is the col block */
                B = xb + g * p->cg * ohw + col0;
                ldb = ohw;
            } else {
                im2col_block(p, xb, g, col0, ncols, col, ncols);
                B = col;
                ldb = ncols;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mo, (int)ncols, (int)kg, 1.0f, A,
                        (int)kg, B, (int)ldb, 0.0f, y + (b0 * p->oc + g * p->ocg + o0) * ohw + col0, (int)ohw);
        }
    }
    blas_serial_end(T);
    return failed ? HB_ENOMEM : HB_OK;
}

/* conv2d, layout=nhwc (hybench.h: x [b,h,w,c], w [oc,kh,kw,c/g] (OHWI), y [b,oh,ow,oc]): channels-last
 * is a matrix product without reordering the output. The b*oh*ow output pixels (batch merged) are cut
 * into row blocks; per (block, group) one NHWC im2col (pixel rows x kh*kw*cg, the taps in OHWI order)
 * and one single-threaded sgemm Y[rows, ocg] = col x W_g^T written straight into y (ldc = oc). A 1x1
 * stride-1 unpadded convolution uses the input rows as col (lda = c). Blocks spread over the OpenMP
 * threads as in k_conv2d. */
static void im2col_nhwc_rows(const hbk_conv *p, const float *x, int64_t g, int64_t q0, int64_t nq, float *col)
{
    const int64_t kk = p->kh * p->kw * p->cg, ohw = p->oh * p->ow;
    for (int64_t r = 0; r < nq; r++) {
        const int64_t q = q0 + r, bi = q / ohw, oy = q / p->ow % p->oh, ox = q % p->ow;
        float *dst = col + r * kk;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
            for (int64_t kx = 0; kx < p->kw; kx++, dst += p->cg) {
                const int64_t ix = ox * p->sw - p->pw + kx * p->dw;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                    memset(dst, 0, (size_t)p->cg * sizeof(float));
                else
                    memcpy(dst, x + ((bi * p->h + iy) * p->w + ix) * p->c + g * p->cg, (size_t)p->cg * sizeof(float));
            }
        }
    }
}

static hb_status k_conv2d_nhwc(const hbk_conv *p, const float *x, const float *wt, float *y)
{
    const int T = omp_get_max_threads();
    const int64_t kk = p->kh * p->kw * p->cg, P = p->b * p->oh * p->ow;
    const int direct = conv_is_direct(p) && p->g == 1;
    /* rows per block: a col block of about 256 KiB (L2), at least 16 rows, and at least 4 items per thread */
    int64_t rb = (int64_t)(65536 / (kk > 0 ? kk : 1));
    if (rb < 16) rb = 16;
    while (rb > 16 && ((P + rb - 1) / rb) * p->g < 4 * T) rb /= 2;
    const int64_t nblk = (P + rb - 1) / rb, items = nblk * p->g;
    int failed = 0;
    blas_serial_begin();
#pragma omp parallel if (items > 1)
    {
        float *col = direct ? NULL : scratch(omp_get_thread_num(), (size_t)(rb * kk));
        if (!direct && !col) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < items; it++) {
            if (!direct && !col)
                continue;
            const int64_t g = it % p->g, q0 = (it / p->g) * rb, nq = P - q0 < rb ? P - q0 : rb;
            const float *A;
            int64_t lda;
            if (direct) {
                A = x + q0 * p->c;
                lda = p->c;
            } else {
                im2col_nhwc_rows(p, x, g, q0, nq, col);
                A = col;
                lda = kk;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)p->ocg, (int)kk, 1.0f, A, (int)lda,
                        wt + g * p->ocg * kk, (int)kk, 0.0f, y + q0 * p->oc + g * p->ocg, (int)p->oc);
        }
    }
    blas_serial_end(T);
    return failed ? HB_ENOMEM : HB_OK;
}

/* ------------------------------------------------------------------ attention -------- */

/* One work item of k_attention: query rows q0..q0+nq of head bh, on the calling thread, S its
 * nq x kv_seq score scratch. */
static void attn_item(const hbk_attn *a, const float *q, const float *k, const float *v, float *o, float *S,
                      int64_t bh, int64_t q0, int64_t nq, float scale)
{
    const int64_t bi = bh / a->heads, h = bh % a->heads;
    const int64_t kvoff = (bi * a->kvh + h / a->rep) * a->kvs * a->d;
    const float *qb = q + (bh * a->seq + q0) * a->d;
    float *ob = o + (bh * a->seq + q0) * a->d;
    const int64_t nk = hbk_attn_keys(a, q0 + nq - 1); /* the most any row of the block sees */
    if (nk == 0) {
        memset(ob, 0, (size_t)(nq * a->d) * sizeof(float));
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)a->d, scale, qb,
                (int)a->d, k + kvoff, (int)a->d, 0.0f, S, (int)nk);
    for (int64_t i = 0; i < nq; i++) {
        float *srow = S + i * nk;
        const int64_t ni = hbk_attn_keys(a, q0 + i);
        if (ni == 0) {
            memset(srow, 0, (size_t)nk * sizeof(float));
            continue;
        }
        const float mx = max_f32(srow, ni);
        float den = 0.0f;
#pragma omp simd reduction(+ : den)
        for (int64_t j = 0; j < ni; j++) {
            const float e = fexp(srow[j] - mx);
            srow[j] = e;
            den += e;
        }
        const float inv = 1.0f / den;
#pragma omp simd
        for (int64_t j = 0; j < ni; j++)
            srow[j] *= inv;
        for (int64_t j = ni; j < nk; j++)
            srow[j] = 0.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)a->d, (int)nk, 1.0f, S,
                (int)nk, v + kvoff, (int)a->d, 0.0f, ob, (int)a->d);
}

static hb_status k_attention(const hbk_attn *a, const float *q, const float *k, const float *v, float *o)
{
    const int T = omp_get_max_threads();
    const int64_t heads_total = a->b * a->heads;
    /* query rows per block: 128 (HB_CPU_ATTN_TQ overrides it for measurements) */
    const char *etq = getenv("HB_CPU_ATTN_TQ");
    int64_t tq = etq && atoll(etq) >= 16 ? atoll(etq) : 128;
    while (tq > 16 && heads_total * ((a->seq + tq - 1) / tq) < 4 * T)
        tq /= 2;
    if (tq > a->seq)
        tq = a->seq;
    const int64_t nblk = (a->seq + tq - 1) / tq, items = heads_total * nblk;
    const float scale = (float)(1.0 / sqrt((double)a->d));
    /* Items of equal work (no causal mask, or one block per head: decode) go to the threads in a
     * fixed static split, so that every call reads a head's K and V on the core that read them the
     * call before (the hot rule's settle runs then leave them in that core's L2 in every mode); a
     * causal prefill's blocks differ in work (later blocks see more keys) and are handed out
     * dynamically. */
    const int uniform = !a->causal || nblk == 1;
    int failed = 0;
    blas_serial_begin();
#pragma omp parallel if (items > 1)
    {
        float *S = scratch(omp_get_thread_num(), (size_t)(tq * (a->kvs > 0 ? a->kvs : 1)));
        if (!S) {
#pragma omp atomic write
            failed = 1;
        }
        if (uniform) {
#pragma omp for schedule(static)
            for (int64_t it = 0; it < items; it++)
                if (S) {
                    const int64_t q0 = it % nblk * tq;
                    attn_item(a, q, k, v, o, S, it / nblk, q0, a->seq - q0 < tq ? a->seq - q0 : tq, scale);
                }
        } else {
#pragma omp for schedule(dynamic, 1)
            for (int64_t it = 0; it < items; it++)
                if (S) {
                    const int64_t q0 = it % nblk * tq;
                    attn_item(a, q, k, v, o, S, it / nblk, q0, a->seq - q0 < tq ? a->seq - q0 : tq, scale);
                }
        }
    }
    blas_serial_end(T);
    return failed ? HB_ENOMEM : HB_OK;
}

/* ------------------------------------------------------------------ dispatch --------- */

hb_status hb_cpu_kernel_check(const hb_case *c, char *reason, size_t reasonlen)
{
    const hb_shape *s = &c->shape;
    hbk_conv p;
    hbk_attn a;
    const char *why = NULL;
    switch (c->op) {
    case HB_OP_ADD: case HB_OP_MUL: case HB_OP_RELU: case HB_OP_GELU: case HB_OP_SILU:
    case HB_OP_SUM_ALL:
        if (s->n <= 0)
            why = "n must be positive";
        break;
    case HB_OP_MATMUL:
    case HB_OP_BMM:
        if (s->m <= 0 || s->n <= 0 || s->k <= 0)
            why = "m, n, k must be positive";
        else if (!fits_int(s->m * s->k) || !fits_int(s->k * s->n) || !fits_int(s->m * s->n))
            why = "matrix larger than the BLAS 32-bit integer range";
        break;
    case HB_OP_CONV2D:
        if (hbk_conv_params(s, 0, &p))
            why = "conv2d shape not computable (sizes, groups, or empty output)";
        else if (!fits_int(p.oh * p.ow * p.c * p.kh * p.kw) || !fits_int(p.oc * p.cg * p.kh * p.kw) ||
                 !fits_int(p.oc * p.oh * p.ow))
            why = "conv2d lowering larger than the BLAS 32-bit integer range";
        break;
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL:
        if (hbk_conv_params(s, 1, &p))
            why = "pooling shape not computable (sizes or empty output)";
        break;
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX: case HB_OP_RMSNORM:
        if (s->rows <= 0 || s->cols <= 0)
            why = "rows and cols must be positive";
        break;
    case HB_OP_ATTENTION:
        if (hbk_attn_params(s, &a))
            why = "attention shape not computable (heads must be a multiple of kv_heads)";
        else if (!fits_int(a.seq * a.kvs) || !fits_int(a.kvs * a.d) || !fits_int(a.seq * a.d))
            why = "attention larger than the BLAS 32-bit integer range";
        break;
    case HB_OP_CHAIN:
        why = "chain is run op by op by the driver";
        break;
    case HB_OP_ALL_REDUCE: case HB_OP_ALL_GATHER: case HB_OP_REDUCE_SCATTER: case HB_OP_BROADCAST:
        why = "collectives run on the cuda backend (NCCL); the CPU's share is its host-staged path";
        break;
    default:
        why = "unknown op";
    }
    if (why) {
        if (reason && reasonlen)
            snprintf(reason, reasonlen, "%s", why);
        return HB_ESKIP;
    }
    return HB_OK;
}

const char *hb_cpu_kernel_impl(const hb_case *c)
{
    hbk_conv p;
    const hb_shape *s = &c->shape;
    switch (c->op) {
    case HB_OP_MATMUL:
        if (s->m == 1 || s->n == 1) /* split: blocks of rows over the threads (gemv_split_run) */
            return plan_threads(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k) >= 2 &&
                           gemm_plan_for(s->m, s->n, s->k) <= -2
                       ? "openblas-sgemv-rows" : "openblas-sgemv";
        /* rows split over OpenMP threads, one single-threaded sgemm each (gemm_plan_run) */
        return gemm_plan_for(s->m, s->n, s->k) <= -2 && split_threads(gemm_plan_for(s->m, s->n, s->k), s->m) >= 2
                   ? "openblas-sgemm-rows" : "openblas-sgemm";
    case HB_OP_BMM:
        if (bmm_plan(s->batch > 0 ? s->batch : 1, s->m, s->n, s->k) == 1)
            return s->m == 1 || s->n == 1 ? "openblas-sgemv-batch" : "openblas-sgemm-batch";
        return s->m == 1 || s->n == 1 ? "openblas-sgemv" : "openblas-sgemm";
    case HB_OP_CONV2D:
        if (hbk_conv_params(&c->shape, 0, &p) == 0 && p.nhwc)
            return conv_is_direct(&p) && p.g == 1 ? "openblas-sgemm-nhwc-1x1" : "openblas-sgemm-nhwc-im2col";
        if (hbk_conv_params(&c->shape, 0, &p) == 0 && conv_is_direct(&p))
            return "openblas-sgemm-1x1";
        return "openblas-sgemm-im2col";
    case HB_OP_ATTENTION: return "openblas-sgemm-attn";
    case HB_OP_GELU:
    case HB_OP_SILU: return ew_impl();
    default: return "own-omp";
    }
}

int hb_cpu_kernel_threads(const hb_case *c)
{
    const int T = omp_get_max_threads();
    const hb_shape *s = &c->shape;
    switch (c->op) {
    case HB_OP_ADD: case HB_OP_MUL: case HB_OP_RELU: case HB_OP_GELU: case HB_OP_SILU:
        return ew_threads(c->op, s->n);
    case HB_OP_MATMUL:
        return plan_threads(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k);
    case HB_OP_BMM: {
        const int64_t b = s->batch > 0 ? s->batch : 1;
        const int plan = bmm_plan(b, s->m, s->n, s->k);
        return plan == 0 ? 1 : plan == 1 ? (b < T ? (int)b : T) : plan_threads(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k);
    }
    default:
        return T;
    }
}

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

hb_status hb_cpu_kernel_run(const hb_case *c, const float *const *in, float *out)
{
    if (!c || !in || !out)
        return HB_EINVAL;
    if (hb_cpu_kernel_check(c, NULL, 0) != HB_OK)
        return HB_EINVAL;
    const hb_shape *s = &c->shape;
    switch (c->op) {
    case HB_OP_ADD:
    case HB_OP_MUL:
        k_elementwise(c->op, in[0], in[1], out, s->n);
        return HB_OK;
    case HB_OP_RELU:
    case HB_OP_GELU:
    case HB_OP_SILU:
        k_elementwise(c->op, in[0], NULL, out, s->n);
        return HB_OK;
    case HB_OP_MATMUL:
        gemm_plan_run(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k, in[0], in[1], out);
        return HB_OK;
    case HB_OP_BMM:
        return k_bmm(hbk_def(s->batch, 1), s->m, s->n, s->k, in[0], in[1], out);
    case HB_OP_CONV2D: {
        hbk_conv p;
        hbk_conv_params(s, 0, &p);
        return p.nhwc ? k_conv2d_nhwc(&p, in[0], in[1], out) : k_conv2d(&p, in[0], in[1], out);
    }
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL: {
        hbk_conv p;
        hbk_conv_params(s, 1, &p);
        return k_pool(&p, c->op == HB_OP_MAXPOOL, in[0], out);
    }
    case HB_OP_SUM:
    case HB_OP_MEAN:
    case HB_OP_MAX:
        k_rows(c->op, in[0], NULL, out, s->rows, s->cols);
        return HB_OK;
    case HB_OP_RMSNORM:
        k_rows(c->op, in[0], in[1], out, s->rows, s->cols);
        return HB_OK;
    case HB_OP_SUM_ALL:
        k_sum_all(in[0], out, s->n);
        return HB_OK;
    case HB_OP_ATTENTION: {
        hbk_attn a;
        hbk_attn_params(s, &a);
        return k_attention(&a, in[0], in[1], in[2], out);
    }
    default:
        return HB_EINVAL;
    }
}
