/*
 * cpu_ew.c - the cpu backend's elementwise ops (one kernel table, ew_table: add, mul, relu, gelu, silu)
 * and reductions (sum, mean, max, rmsnorm over rows; sum_all), with the f32 sum/max helpers pooling
 * and attention share. Split out of cpu_kernels.c; its header comment describes the methods.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX__)
#include <immintrin.h>
#endif
#if defined(HB_HAVE_SLEEF)
#include <sleef.h>
#endif

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* Measured thresholds (hb_cpu_kernel_calibrate); these defaults hold until it ran. */
int64_t g_ew_par_min[2] = { EW_PAR_MIN, EW_PAR_MIN }; /* [0] add/mul/relu, [1] gelu/silu */
/* Thread counts chosen per calibrated size (HB_CPU_CAL_EW sizes n = 4096 << j; 0 = not calibrated:
 * the thresholds above decide between one thread and all). */
int g_ew_threads[2][HB_CPU_CAL_EW];
#define SUM_BLOCK 1024

/* The size from which outputs are written with streaming stores: the last-level cache (hwloc), 32 MiB
 * when unknown; such an output cannot stay cached for the next op anyway. HB_CPU_NT_MIN (bytes, or
 * "off") overrides it for measurements. rmsnorm compares its output's bytes with it; elementwise
 * ops their working set's (ew_stream). */
static size_t nt_min_bytes(void)
{
    static size_t cached; /* stored + 1; 0 = not read yet */
    size_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v - 1;
    size_t r = hb_cpu_llc_bytes();
    if (r == 0)
        r = (size_t)32 << 20;
    const char *e = hb_cpu_cfg()->cpu_nt_min;
    if (e && *e)
        r = strcmp(e, "off") == 0 ? (size_t)-2 : (size_t)strtoull(e, NULL, 10);
    __atomic_store_n(&cached, r + 1, __ATOMIC_RELAXED);
    return r;
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

double sum_f32(const float *restrict x, int64_t n)
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

float max_f32(const float *restrict x, int64_t n)
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
/* One element of HB_EW_FN_* fn with SLEEF's scalar 3.5-ULP exp2f: NUM / (1 + exp2(Y)) (cpu_priv.h). */
static inline float ew_fn1(int fn, float x)
{
    switch (fn) {
    case HB_EW_FN_GELU: return x / (1.0f + Sleef_exp2f_u35(x * (GELU_K0 + GELU_K1 * x * x)));
    case HB_EW_FN_SIGMOID: return 1.0f / (1.0f + Sleef_exp2f_u35(-L2E * x));
    default: return x / (1.0f + Sleef_exp2f_u35(-L2E * x));
    }
}
static int64_t ew_sleef(int fn, const float *restrict a, float *restrict o, int64_t n, int nt)
{
    int64_t i = 0;
    if (nt) /* scalar up to o's first 64-byte boundary, streamed from there */
        for (; i < n && ((uintptr_t)(o + i) & 63u); i++)
            o[i] = ew_fn1(fn, a[i]);
    if (hb_cpu_ew_isa() == 512) /* 16 wide, whatever -march this file was built with (ew_avx512.c) */
        i = hb_cpu_ew_sleef_avx512(fn, a, o, i, n, nt);
#if defined(__AVX2__) && defined(__FMA__)
    else if (hb_cpu_ew_isa() == 256) {
        const __m256 one = _mm256_set1_ps(1.0f), ml = _mm256_set1_ps(-L2E);
        const __m256 k0 = _mm256_set1_ps(GELU_K0), k1 = _mm256_set1_ps(GELU_K1);
        /* o = NUM / (1 + exp2(Y)) (cpu_priv.h HB_EW_FN_*) */
#define EW_LOOP(STORE, Y, NUM)                                                                        \
        for (; i + 8 <= n; i += 8) {                                                                  \
            const __m256 x = _mm256_loadu_ps(a + i);                                                  \
            STORE(o + i, _mm256_div_ps(NUM, _mm256_add_ps(one, Sleef_exp2f8_u35(Y))));                \
        }
#define EW_SLEEF_LOOP(STORE)                                                                          \
        switch (fn) {                                                                                 \
        case HB_EW_FN_GELU: EW_LOOP(STORE, _mm256_mul_ps(x, _mm256_fmadd_ps(k1, _mm256_mul_ps(x, x), k0)), x) break; \
        case HB_EW_FN_SIGMOID: EW_LOOP(STORE, _mm256_mul_ps(ml, x), one) break;                     \
        default: EW_LOOP(STORE, _mm256_mul_ps(ml, x), x) break;                                       \
        }
        if (nt) {
            EW_SLEEF_LOOP(_mm256_stream_ps)
        } else {
            EW_SLEEF_LOOP(_mm256_storeu_ps)
        }
#undef EW_SLEEF_LOOP
#undef EW_LOOP
    }
#endif
    /* the tail (and everything without a vector ISA) with SLEEF's scalar 3.5-ULP exp2f */
    for (; i < n; i++)
        o[i] = ew_fn1(fn, a[i]);
    return i;
}
#endif

/* ---- the elementwise kernel table: one row per op (shape kind HB_SK_EW) ---- */

/* Plain vectorized loops over n elements (no threads); b is NULL for the one-input ops. The
 * transcendental ones are hybench's own polynomial (fexp), the fallback of a build without SLEEF and
 * the tail after a SLEEF body. */
static void ew_add(const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] + b[i];
}
static void ew_mul(const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] * b[i];
}
static void ew_relu(const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
    (void)b;
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] > 0.0f ? a[i] : 0.0f;
}
static void ew_gelu(const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
    (void)b;
#pragma omp simd
    for (int64_t j = 0; j < n; j++) {
        const float x = a[j];
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x); /* sqrt(2/pi) */
        o[j] = x / (1.0f + fexp(-2.0f * u));
    }
}
static void ew_silu(const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
    (void)b;
#pragma omp simd
    for (int64_t j = 0; j < n; j++)
        o[j] = a[j] / (1.0f + fexp(-a[j]));
}

static void ew_sigmoid(const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
    (void)b;
#pragma omp simd
    for (int64_t j = 0; j < n; j++)
        o[j] = 1.0f / (1.0f + fexp(-a[j]));
}

typedef struct ew_kernel {
    hb_op op;
    int cls;   /* calibration class (g_ew_par_min, g_ew_threads): 0 memory-bound, 1 transcendental */
    int sleef; /* the SLEEF body's function (HB_EW_FN_*), -1 for none */
    void (*loop)(const float *restrict a, const float *restrict b, float *restrict o, int64_t n);
} ew_kernel;
static const ew_kernel ew_table[] = {
    {HB_OP_ADD, 0, -1, ew_add},
    {HB_OP_MUL, 0, -1, ew_mul},
    {HB_OP_RELU, 0, -1, ew_relu},
    {HB_OP_GELU, 1, HB_EW_FN_GELU, ew_gelu},
    {HB_OP_SILU, 1, HB_EW_FN_SILU, ew_silu},
    {HB_OP_SIGMOID, 1, HB_EW_FN_SIGMOID, ew_sigmoid},
};
static const ew_kernel *ew_row(hb_op op)
{
    for (size_t i = 0; i < sizeof ew_table / sizeof ew_table[0]; i++)
        if (ew_table[i].op == op)
            return &ew_table[i];
    return NULL;
}
int ew_supported(hb_op op) { return ew_row(op) != NULL; }

/* The implementation an op runs: SLEEF's 16- or 8-wide loop (hb_cpu_ew_isa: AVX-512 chosen at run
 * time, AVX2 where built for it) for the rows with a SLEEF function, else hybench's own loops. */
const char *ew_impl(hb_op op)
{
    const ew_kernel *k = ew_row(op);
    const int isa = hb_cpu_ew_isa();
    if (!k || k->sleef < 0)
        return "own-omp";
    return isa == 512 ? "sleef-avx512" : isa == 256 ? "sleef-avx2" : "own-omp";
}

/* Plain vectorized loop over n elements (no threads). b is NULL for the one-input ops. */
static void ew_plain(const ew_kernel *k, const float *restrict a, const float *restrict b, float *restrict o, int64_t n)
{
    int64_t i = 0;
#if defined(HB_HAVE_SLEEF)
    if (k->sleef >= 0)
        i = ew_sleef(k->sleef, a, o, n, 0);
#endif
    if (i < n)
        k->loop(a + i, b ? b + i : NULL, o + i, n - i);
}

#define EW_BLOCK 1024
/* One thread's range; with nt, blocks are computed into an L1-resident buffer and written with
 * streaming stores (no write-allocate read of the output). */
static void ew_range(const ew_kernel *k, const float *a, const float *b, float *o, int64_t n, int nt)
{
    if (!nt || n < 2 * EW_BLOCK) {
        ew_plain(k, a, b, o, n);
        return;
    }
#if defined(HB_HAVE_SLEEF)
    /* streamed from the registers, one whole 64-byte line per store, where the CPU has AVX-512
     * (chosen at run time, so the GPU machine's x86-64-v3 bundle takes it too); the AVX2 loop keeps
     * the blocks: with two 32-byte streaming stores per line and exp between them, the 16-core Xeon
     * host measured 1.83x relu's time (n = 2^28) against 1.39x by blocks, but on a lease whose
     * single-core sgemm read half the other's, so the cause is not established */
    if (k->sleef >= 0 && hb_cpu_ew_isa() == 512) {
        ew_sleef(k->sleef, a, o, n, 1);
        stream_fence();
        return;
    }
#endif
    float tmp[EW_BLOCK] __attribute__((aligned(64)));
    for (int64_t i = 0; i < n; i += EW_BLOCK) {
        const int64_t m = n - i < EW_BLOCK ? n - i : EW_BLOCK;
        ew_plain(k, a + i, b ? b + i : NULL, tmp, m);
        stream_store(o + i, tmp, m);
    }
    stream_fence();
}

static int ew_class(hb_op op)
{
    const ew_kernel *k = ew_row(op);
    return k ? k->cls : 0;
}

/* Streaming stores for an elementwise op of n elements (inputs a and, where b is not NULL, b; output
 * o) when its working set, inputs and output together, reaches the last-level cache or 32 MiB,
 * whichever is less (HB_CPU_NT_MIN, when set, is the threshold as it is). Why the cap: the H100
 * machine's 16-core Xeon reports a 300 MiB L3 (hwloc), yet relu at n = 4 Mi (32 MiB working set) ran
 * in 201 us with plain stores and 122 us streamed, at 2 Mi (16 MiB) in 25 us plain and 79 us
 * streamed; add at 4 Mi (48 MiB) 256 against 160 us, at 1 Mi (12 MiB) 23 against 43 (one call,
 * 2026-11-27; a second call: relu 4 Mi 172 us streamed, 230 plain). Before, only the output's bytes
 * were compared with the LLC, and the Xeon's relu at 4 Mi ran at 1.59x PyTorch's time in one call.
 * On the development VM (EPYC, 32 MiB L3) the same sizes moved too much between runs to show a
 * crossing (relu 4 Mi: 474-943 us, one setting). */
static int ew_stream_n(int ninputs, int64_t n)
{
    static size_t cached; /* the threshold + 1; 0 = not decided yet (read once, as nt_min_bytes) */
    size_t lim = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (!lim) {
        const char *e = hb_cpu_cfg()->cpu_nt_min;
        lim = nt_min_bytes();
        if (!(e && *e) && lim > ((size_t)32 << 20))
            lim = (size_t)32 << 20;
        __atomic_store_n(&cached, lim + 1, __ATOMIC_RELAXED);
    } else
        lim -= 1;
    return (double)n * 4.0 * (ninputs > 1 ? 3.0 : 2.0) >= (double)lim;
}
static int ew_stream(const float *b, int64_t n) { return ew_stream_n(b ? 2 : 1, n); }

/* The elementwise op's implementation at n elements: ew_impl's name, with "+nt" where its outputs are
 * written with streaming stores (ew_stream: a working set from the last-level cache or 32 MiB on). */
const char *ew_impl_n(hb_op op, int64_t n)
{
    const char *b = ew_impl(op);
    if (!ew_stream_n(hb_op_get(op)->ninputs, n))
        return b;
    return !strcmp(b, "sleef-avx512") ? "sleef-avx512+nt" : !strcmp(b, "sleef-avx2") ? "sleef-avx2+nt" : "own-omp+nt";
}

/* o = op(a[, b]) over n elements, on the calling thread (nth <= 1) or split over the first nth threads
 * of the whole OpenMP team (the others have nothing to do: a region of fewer threads than the team
 * would make libgomp end the surplus pool threads, and the ones it starts again later inherit the
 * master's one-core binding, hb_cpu_bind_threads: on the 16-core host every later region then ran
 * on one core). */
void ew_run(hb_op op, const float *a, const float *b, float *o, int64_t n, int nth)
{
    const ew_kernel *k = ew_row(op);
    if (!k)
        return; /* hb_cpu_kernel_check refused it (ew_supported) */
    const int nt = ew_stream(b, n);
    if (nth <= 1) {
        ew_range(k, a, b, o, n, nt);
        return;
    }
#pragma omp parallel
    {
        const int64_t team = omp_get_num_threads(), T = nth < team ? nth : team, t = omp_get_thread_num();
        if (t < T) {
        const int64_t lo = n * t / T / 16 * 16, hi = t + 1 == T ? n : n * (t + 1) / T / 16 * 16;
        if (hi > lo)
            ew_range(k, a + lo, b ? b + lo : NULL, o + lo, hi - lo, nt);
        }
    }
}

/* Threads for an elementwise op of n elements: the count calibrated for the largest size measured
 * that is not above n (one thread below the smallest, all threads from twice the largest, 4 Mi
 * elements: beyond the caches the threads' bandwidth is what counts); before calibration, all
 * threads from the threshold g_ew_par_min of its class on. */
int ew_threads(hb_op op, int64_t n)
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

void k_elementwise(hb_op op, const float *a, const float *b, float *o, int64_t n)
{
    ew_run(op, a, b, o, n, ew_threads(op, n));
}

/* ------------------------------------------------------------------ reductions ------- */

/* 1 when k_rows writes op's output with streaming stores: rmsnorm over a tensor of the last-level
 * cache or more, in the branch that runs whole rows per thread (as many rows as threads, or too small
 * for threads) */
int rows_stream(hb_op op, int64_t rows, int64_t cols)
{
    const int T = omp_get_max_threads();
    const int par = rows * cols >= EW_PAR_MIN;
    return (rows >= T || !par) && op == HB_OP_RMSNORM && (double)rows * (double)cols * 4.0 >= (double)nt_min_bytes();
}

void k_rows(hb_op op, const float *restrict x, const float *restrict g, float *restrict y,
            int64_t rows, int64_t cols)
{
    const int T = omp_get_max_threads();
    const int par = rows * cols >= EW_PAR_MIN;
    if (rows >= T || !par) {
        /* rmsnorm over a large tensor writes its output with streaming stores, row by row from a
         * per-thread row buffer */
        const int nt = rows_stream(op, rows, cols);
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

void k_sum_all(const float *restrict x, float *restrict y, int64_t n)
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
