/*
 * cuda_kernels.cu - the CUDA backend's own memory-bound kernels: elementwise ops, row and full
 * reductions, rmsnorm, a pooling kernel (fallback to cuDNN), element conversions and the bandwidth
 * probes used for the ceilings. Storage is f32, f16 or bf16; arithmetic is always f32.
 *
 * Memory-bound habits (HOPPER.md): 16-byte loads/stores per thread, coalesced across the warp,
 * several independent 16-byte loads in flight per thread before the first use.
 * Formulas are those of kernels/cpu_ref/ref.c: gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))
 * (tanh form), silu(x) = x / (1 + exp(-x)), sigmoid(x) = 1 / (1 + exp(-x)), rmsnorm y = x / sqrt(mean(x^2) + 1e-5) * g.
 */
#include "cuda/cuda_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4; /* 16-byte vectors in flight per thread */

/* ---- storage <-> f32 ---- */
template <typename T> struct st;
template <> struct st<float> {
    static __device__ __forceinline__ float ld(float v) { return v; }
    static __device__ __forceinline__ float cv(float v) { return v; }
};
template <> struct st<__half> {
    static __device__ __forceinline__ float ld(__half v) { return __half2float(v); }
    static __device__ __forceinline__ __half cv(float v) { return __float2half_rn(v); }
};
template <> struct st<__nv_bfloat16> {
    static __device__ __forceinline__ float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
    static __device__ __forceinline__ __nv_bfloat16 cv(float v) { return __float2bfloat16_rn(v); }
};

/* The elementwise ops' math, one functor each (F::f(a, b), b the second input of two-input ops, 0
 * otherwise; f32 arithmetic whatever the storage). ew_table below gives each op its functor. */
struct ew_add { static __device__ __forceinline__ float f(float a, float b) { return a + b; } };
struct ew_mul { static __device__ __forceinline__ float f(float a, float b) { return a * b; } };
struct ew_relu { static __device__ __forceinline__ float f(float a, float) { return a > 0.0f ? a : 0.0f; } };
struct ew_gelu {
    static __device__ __forceinline__ float f(float a, float)
    {
        return 0.5f * a * (1.0f + tanhf(0.7978845608028654f * (a + 0.044715f * a * a * a)));
    }
};
struct ew_silu { static __device__ __forceinline__ float f(float a, float) { return a / (1.0f + expf(-a)); } };
struct ew_sigmoid { static __device__ __forceinline__ float f(float a, float) { return 1.0f / (1.0f + expf(-a)); } };
template <class F> __device__ __forceinline__ float ew(float a, float b) { return F::f(a, b); }

/* 16-byte vector of VEC elements of T. */
template <typename T> struct alignas(16) vec16 {
    static constexpr int N = 16 / sizeof(T);
    T v[N];
};

/* Each thread handles U vectors, TH apart (coalesced); a block covers TH * U vectors. Large n: U =
 * kUnroll, TH = kThreads (16-byte vectors in flight per thread). Small n (fewer such blocks than
 * SMs): U = 1, TH = 128, so that the grid spreads over more SMs: add n=65536 f32 ran 16 blocks of
 * 1024 vectors on 132 SMs, 4.13 us against PyTorch's 3.36 us (H200, docs/pytorch.md). */
template <typename T, class OP, int NIN, int U, int TH>
__global__ void __launch_bounds__(TH) k_elementwise(const T *__restrict__ a, const T *__restrict__ b,
                                                    T *__restrict__ out, int64_t n)
{
    using V = vec16<T>;
    constexpr int N = V::N;
    const int64_t nvec = n / N;
    const int64_t base = (int64_t)blockIdx.x * TH * U + threadIdx.x;
    V va[U], vb[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        int64_t i = base + (int64_t)u * TH;
        if (i < nvec) {
            va[u] = reinterpret_cast<const V *>(a)[i];
            if (NIN == 2) vb[u] = reinterpret_cast<const V *>(b)[i];
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        int64_t i = base + (int64_t)u * TH;
        if (i < nvec) {
            V r;
#pragma unroll
            for (int e = 0; e < N; e++)
                r.v[e] = st<T>::cv(ew<OP>(st<T>::ld(va[u].v[e]), NIN == 2 ? st<T>::ld(vb[u].v[e]) : 0.0f));
            reinterpret_cast<V *>(out)[i] = r;
        }
    }
    /* Tail (n not a multiple of the vector width): block 0 does it. */
    if (blockIdx.x == 0) {
        for (int64_t i = nvec * N + threadIdx.x; i < n; i += TH)
            out[i] = st<T>::cv(ew<OP>(st<T>::ld(a[i]), NIN == 2 ? st<T>::ld(b[i]) : 0.0f));
    }
}

/* Scalar fallback for misaligned pointers. */
template <typename T, class OP, int NIN>
__global__ void k_elementwise_scalar(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ out, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = st<T>::cv(ew<OP>(st<T>::ld(a[i]), NIN == 2 ? st<T>::ld(b[i]) : 0.0f));
}

bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

template <typename T, class OP, int NIN>
hb_status launch_ew(hbc_ctx *c, const void *a, const void *b, void *out, int64_t n)
{
    const T *pa = (const T *)a, *pb = (const T *)b;
    T *po = (T *)out;
    if (aligned16(a) && (NIN == 1 || aligned16(b)) && aligned16(out)) {
        constexpr int N = 16 / sizeof(T);
        int64_t nvec = n / N;
        int64_t blocks = (nvec + kThreads * kUnroll - 1) / (kThreads * kUnroll);
        if (blocks < 1) blocks = 1;
        if (blocks > 0x7fffffff) return HB_EINVAL;
        static int small_grid = -1; /* HB_CUDA_EW_SMALL=0: always the large-n grid (measurements); read once */
        if (small_grid < 0) {
            const char *ew = hbc_cfg()->cuda_ew_small;
            small_grid = !(ew && !strcmp(ew, "0"));
        }
        if (blocks < c->prop.multiProcessorCount && small_grid) {
            constexpr int TH = 128;
            const int64_t sb = (nvec + TH - 1) / TH;
            k_elementwise<T, OP, NIN, 1, TH><<<(unsigned)(sb < 1 ? 1 : sb), TH, 0, c->stream>>>(pa, pb, po, n);
        } else {
            k_elementwise<T, OP, NIN, kUnroll, kThreads><<<(unsigned)blocks, kThreads, 0, c->stream>>>(pa, pb, po, n);
        }
    } else {
        int64_t blocks = (n + kThreads - 1) / kThreads;
        if (blocks > 65536) blocks = 65536;
        k_elementwise_scalar<T, OP, NIN><<<(unsigned)blocks, kThreads, 0, c->stream>>>(pa, pb, po, n);
    }
    return HBC_LAUNCHED(c, "elementwise");
}

/* The elementwise kernel table: op -> the launcher of its functor per storage (f32, f16, bf16) and its
 * number of inputs (2 for add/mul). A new elementwise op is one functor above and one row here. */
typedef hb_status (*ew_launch_fn)(hbc_ctx *, const void *, const void *, void *, int64_t);
struct ew_row {
    hb_op op;
    ew_launch_fn run[3]; /* HBC_F32, HBC_F16, HBC_BF16 */
};
#define EW_ROW(OP, F, NIN) {OP, {launch_ew<float, F, NIN>, launch_ew<__half, F, NIN>, launch_ew<__nv_bfloat16, F, NIN>}}
static const ew_row ew_table[] = {
    EW_ROW(HB_OP_ADD, ew_add, 2), EW_ROW(HB_OP_MUL, ew_mul, 2), EW_ROW(HB_OP_RELU, ew_relu, 1),
    EW_ROW(HB_OP_GELU, ew_gelu, 1), EW_ROW(HB_OP_SILU, ew_silu, 1), EW_ROW(HB_OP_SIGMOID, ew_sigmoid, 1),
};
#undef EW_ROW
static const ew_row *ew_find(hb_op op)
{
    for (size_t i = 0; i < sizeof ew_table / sizeof ew_table[0]; i++)
        if (ew_table[i].op == op) return &ew_table[i];
    return nullptr;
}

/* ---- reductions ---- */
enum { R_SUM = 0, R_MAX = 1 };

template <int R> __device__ __forceinline__ float rinit() { return R == R_MAX ? -INFINITY : 0.0f; }
template <int R> __device__ __forceinline__ float rop(float a, float b) { return R == R_MAX ? fmaxf(a, b) : a + b; }

template <int R> __device__ __forceinline__ float warp_reduce(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = rop<R>(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Reduce over the block (kThreads threads); the result is valid in every thread. */
template <int R> __device__ float block_reduce(float v)
{
    __shared__ float red[kThreads / 32];
    __shared__ float total;
    v = warp_reduce<R>(v);
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    if (l == 0) red[w] = v;
    __syncthreads();
    if (w == 0) {
        float x = l < kThreads / 32 ? red[l] : rinit<R>();
        x = warp_reduce<R>(x);
        if (l == 0) total = x;
    }
    __syncthreads();
    float r = total;
    __syncthreads(); /* red/total may be reused by a following call */
    return r;
}

/* Sum (or max) of x[lo, hi) in one thread's strided share, 16-byte loads when vec is true. */
template <typename T, int R>
__device__ __forceinline__ float thread_range(const T *__restrict__ x, int64_t lo, int64_t hi, bool vec)
{
    float acc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++) acc[u] = rinit<R>();
    using V = vec16<T>;
    constexpr int N = V::N;
    int64_t i0 = lo;
    if (vec) {
        /* lo is a multiple of N here (the caller splits on vector boundaries) */
        const V *xv = reinterpret_cast<const V *>(x + lo);
        const int64_t nv = (hi - lo) / N;
        int64_t j = threadIdx.x;
        for (; j + (kUnroll - 1) * kThreads < nv; j += kUnroll * kThreads) {
            V t[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; u++) t[u] = xv[j + u * kThreads];
#pragma unroll
            for (int u = 0; u < kUnroll; u++)
#pragma unroll
                for (int e = 0; e < N; e++) acc[u] = rop<R>(acc[u], st<T>::ld(t[u].v[e]));
        }
        for (; j < nv; j += kThreads) {
            V t = xv[j];
#pragma unroll
            for (int e = 0; e < N; e++) acc[0] = rop<R>(acc[0], st<T>::ld(t.v[e]));
        }
        i0 = lo + nv * N;
    }
    for (int64_t i = i0 + threadIdx.x; i < hi; i += kThreads) acc[0] = rop<R>(acc[0], st<T>::ld(x[i]));
    float r = acc[0];
#pragma unroll
    for (int u = 1; u < kUnroll; u++) r = rop<R>(r, acc[u]);
    return r;
}

/* grid (splits, rows): block (s, r) reduces its chunk of row r. splits == 1: writes y[r] in T
 * (scaled by mul); else writes the f32 partial part[r * splits + s]. */
template <typename T, int R>
__global__ void __launch_bounds__(kThreads) k_reduce_rows(const T *__restrict__ x, T *__restrict__ y,
                                                          float *__restrict__ part, int64_t cols, int64_t chunk,
                                                          float mul)
{
    const int64_t r = blockIdx.y, s = blockIdx.x, splits = gridDim.x;
    const T *row = x + r * cols;
    const int64_t lo = s * chunk, hi = min(cols, lo + chunk);
    constexpr int N = 16 / sizeof(T);
    const bool vec = ((cols % N) == 0) && ((((uintptr_t)x) & 15u) == 0);
    float v = lo < hi ? thread_range<T, R>(row, lo, hi, vec) : rinit<R>();
    v = block_reduce<R>(v);
    if (threadIdx.x == 0) {
        if (splits == 1) y[r] = st<T>::cv(v * mul);
        else part[r * splits + s] = v;
    }
}

/* Second pass: y[r] = reduce(part[r, 0..splits-1]) * mul; one block per row. */
template <typename T, int R>
__global__ void __launch_bounds__(kThreads) k_reduce_parts(const float *__restrict__ part, T *__restrict__ y,
                                                           int64_t splits, float mul)
{
    const int64_t r = blockIdx.x;
    float v = rinit<R>();
    for (int64_t i = threadIdx.x; i < splits; i += kThreads) v = rop<R>(v, part[r * splits + i]);
    v = block_reduce<R>(v);
    if (threadIdx.x == 0) y[r] = st<T>::cv(v * mul);
}

/* Short rows (cols <= 1024): one warp per row, 8 rows per block. */
template <typename T, int R>
__global__ void __launch_bounds__(kThreads) k_reduce_rows_warp(const T *__restrict__ x, T *__restrict__ y,
                                                               int64_t rows, int64_t cols, float mul)
{
    const int64_t r = (int64_t)blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
    const int l = threadIdx.x % 32;
    if (r >= rows) return;
    const T *row = x + r * cols;
    float a = rinit<R>(), b = rinit<R>();
    int64_t i = l;
    for (; i + 32 < cols; i += 64) {
        a = rop<R>(a, st<T>::ld(row[i]));
        b = rop<R>(b, st<T>::ld(row[i + 32]));
    }
    if (i < cols) a = rop<R>(a, st<T>::ld(row[i]));
    a = warp_reduce<R>(rop<R>(a, b));
    if (l == 0) y[r] = st<T>::cv(a * mul);
}

/* Short rows whose length is whole 16-byte vectors and whose base is 16-byte aligned: one warp per
 * row, grid-stride over rows (the grid is sized to the resident warps, so no tail wave), each lane
 * with kUnroll 16-byte loads in flight before the first add (HOPPER.md: bytes in flight per SM
 * decide HBM bandwidth; the scalar warp kernel above had 2 x 4 bytes per lane and reached 90% of the
 * copy ceiling on rows=131072 cols=1024). */
template <typename T, int R>
__global__ void __launch_bounds__(kThreads) k_reduce_rows_warp_vec(const T *__restrict__ x, T *__restrict__ y,
                                                                   int64_t rows, int64_t cols, float mul)
{
    using V = vec16<T>;
    constexpr int N = V::N;
    const int l = threadIdx.x % 32;
    const int64_t nv = cols / N;
    const int64_t warps = (int64_t)gridDim.x * (kThreads / 32);
    for (int64_t r = (int64_t)blockIdx.x * (kThreads / 32) + threadIdx.x / 32; r < rows; r += warps) {
        const V *row = reinterpret_cast<const V *>(x + r * cols);
        float acc[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) acc[u] = rinit<R>();
        int64_t j = l;
        for (; j + (kUnroll - 1) * 32 < nv; j += kUnroll * 32) {
            V t[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; u++) t[u] = row[j + u * 32];
#pragma unroll
            for (int u = 0; u < kUnroll; u++)
#pragma unroll
                for (int e = 0; e < N; e++) acc[u] = rop<R>(acc[u], st<T>::ld(t[u].v[e]));
        }
        for (; j < nv; j += 32) {
            V t = row[j];
#pragma unroll
            for (int e = 0; e < N; e++) acc[0] = rop<R>(acc[0], st<T>::ld(t.v[e]));
        }
        float a = acc[0];
#pragma unroll
        for (int u = 1; u < kUnroll; u++) a = rop<R>(a, acc[u]);
        a = warp_reduce<R>(a);
        if (l == 0) y[r] = st<T>::cv(a * mul);
    }
}

/* Rows of at most 16 16-byte vectors (f32 cols <= 64): G lanes per row (G >= the row's vectors, a
 * power of two), 32 / G rows per warp step and kUnroll steps in flight, so a warp reads
 * 32 x kUnroll contiguous vectors where the kernel above had the row's few vectors of one row per
 * warp in flight (sum rows=1048576 cols=16 f32 ran at 480 GB/s on the H100, 1.26x PyTorch's time);
 * the G lanes of a row reduce with shuffles inside their group, and its first lane writes y. */
template <typename T, int R, int G>
__global__ void __launch_bounds__(kThreads) k_reduce_rows_sub(const T *__restrict__ x, T *__restrict__ y, int64_t rows,
                                                              int64_t cols, float mul)
{
    using V = vec16<T>;
    constexpr int N = V::N, RPW = 32 / G;
    const int lane = threadIdx.x % 32, sub = lane / G, k = lane % G;
    const int64_t nv = cols / N;
    const int64_t step = (int64_t)gridDim.x * (kThreads / 32) * RPW * kUnroll;
    for (int64_t r0 = ((int64_t)blockIdx.x * (kThreads / 32) + threadIdx.x / 32) * RPW * kUnroll; r0 < rows; r0 += step) {
        V t[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            const int64_t r = r0 + u * RPW + sub;
            if (r < rows && k < nv) t[u] = reinterpret_cast<const V *>(x + r * cols)[k];
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            const int64_t r = r0 + u * RPW + sub;
            float a = rinit<R>();
            if (r < rows && k < nv)
#pragma unroll
                for (int e = 0; e < N; e++) a = rop<R>(a, st<T>::ld(t[u].v[e]));
#pragma unroll
            for (int o = G / 2; o > 0; o >>= 1) a = rop<R>(a, __shfl_xor_sync(0xffffffffu, a, o));
            if (k == 0 && r < rows) y[r] = st<T>::cv(a * mul);
        }
    }
}

/* Blocks of kThreads resident on the device at once for kernel k: the SM count x k's occupancy (8 per
 * SM when the query fails: 2048 threads per SM on sm_90). */
template <typename K> int64_t resident_blocks(hbc_ctx *c, K k)
{
    int occ = 0;
    const int64_t per_sm =
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, kThreads, 0) == cudaSuccess && occ > 0 ? occ : 8;
    return (int64_t)c->prop.multiProcessorCount * per_sm;
}

template <typename T, int R, int G> hb_status launch_reduce_sub(hbc_ctx *c, const T *x, T *y, int64_t rows, int64_t cols, float mul)
{
    const int64_t rows_per_block = (int64_t)(kThreads / 32) * (32 / G) * kUnroll;
    int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
    const int64_t resident = resident_blocks(c, k_reduce_rows_sub<T, R, G>);
    if (blocks > resident) blocks = resident;
    if (blocks < 1) blocks = 1;
    k_reduce_rows_sub<T, R, G><<<(unsigned)blocks, kThreads, 0, c->stream>>>(x, y, rows, cols, mul);
    return HBC_LAUNCHED(c, "reduce_rows_sub");
}

template <typename T, int R>
hb_status reduce_rows_t(hbc_ctx *c, const void *xv, void *yv, int64_t rows, int64_t cols, float mul)
{
    const T *x = (const T *)xv;
    T *y = (T *)yv;
    constexpr int64_t VN = 16 / (int64_t)sizeof(T);
    /* HB_CUDA_REDUCE_SUB=0: the warp-per-row kernel for short rows too (read once per process, off the
     * timed call's enqueue path after the first) */
    static const int sub_on = [] { const char *e = hbc_cfg()->cuda_reduce_sub; return !(e && !strcmp(e, "0")); }();
    if (cols >= 4 * VN && cols <= 16 * VN && cols % VN == 0 && aligned16(x) && sub_on) {
        const int64_t nv = cols / VN;
        return nv <= 4 ? launch_reduce_sub<T, R, 4>(c, x, y, rows, cols, mul)
               : nv <= 8 ? launch_reduce_sub<T, R, 8>(c, x, y, rows, cols, mul)
                         : launch_reduce_sub<T, R, 16>(c, x, y, rows, cols, mul);
    }
    if (cols <= 1024 && cols >= 4 * VN && cols % VN == 0 && aligned16(x)) {
        int64_t need = (rows + kThreads / 32 - 1) / (kThreads / 32);
        int64_t blocks = resident_blocks(c, k_reduce_rows_warp_vec<T, R>);
        if (blocks > need) blocks = need;
        if (blocks < 1) blocks = 1;
        k_reduce_rows_warp_vec<T, R><<<(unsigned)blocks, kThreads, 0, c->stream>>>(x, y, rows, cols, mul);
        return HBC_LAUNCHED(c, "reduce_rows_warp_vec");
    }
    if (cols <= 1024) {
        int64_t blocks = (rows + kThreads / 32 - 1) / (kThreads / 32);
        if (blocks > 0x7fffffff) return HB_EINVAL;
        k_reduce_rows_warp<T, R><<<(unsigned)blocks, kThreads, 0, c->stream>>>(x, y, rows, cols, mul);
        return HBC_LAUNCHED(c, "reduce_rows_warp");
    }
    /* Split each row so that the grid has at least ~8 blocks per SM, each block reading at least
     * 64 KiB-ish (kThreads x kUnroll x 16 B x 4). Chunks are whole 16-byte vectors. */
    const int64_t N = 16 / (int64_t)sizeof(T);
    const int64_t min_chunk = (int64_t)kThreads * kUnroll * N * 4;
    const int64_t want_blocks = (int64_t)c->prop.multiProcessorCount * 8;
    int64_t splits = (want_blocks + rows - 1) / rows;
    int64_t max_splits = (cols + min_chunk - 1) / min_chunk;
    if (splits > max_splits) splits = max_splits;
    if (splits < 1) splits = 1;
    if (splits > 65535) splits = 65535;
    int64_t chunk = (cols + splits - 1) / splits;
    chunk = (chunk + N - 1) / N * N;
    splits = (cols + chunk - 1) / chunk;
    if (rows > 65535) {
        /* grid.y limit: fall back to one block per row in slices of 65535 rows */
        for (int64_t r0 = 0; r0 < rows; r0 += 65535) {
            int64_t nr = rows - r0 < 65535 ? rows - r0 : 65535;
            k_reduce_rows<T, R><<<dim3(1, (unsigned)nr), kThreads, 0, c->stream>>>(x + r0 * cols, y + r0, nullptr,
                                                                                   cols, cols, mul);
            HBC_TRY(HBC_LAUNCHED(c, "reduce_rows"));
        }
        return HB_OK;
    }
    float *part = nullptr;
    if (splits > 1) {
        HBC_TRY(hbc_grow(c, &c->scratch, &c->scratch_bytes, (size_t)(rows * splits) * sizeof(float)));
        part = (float *)c->scratch;
    }
    k_reduce_rows<T, R><<<dim3((unsigned)splits, (unsigned)rows), kThreads, 0, c->stream>>>(x, y, part, cols, chunk,
                                                                                         mul);
    HBC_TRY(HBC_LAUNCHED(c, "reduce_rows"));
    if (splits > 1) {
        k_reduce_parts<T, R><<<(unsigned)rows, kThreads, 0, c->stream>>>(part, y, splits, mul);
        HBC_TRY(HBC_LAUNCHED(c, "reduce_parts"));
    }
    return HB_OK;
}

template <typename T> hb_status reduce_dispatch(hbc_ctx *c, hb_op op, const void *x, void *y, int64_t rows, int64_t cols)
{
    if (op == HB_OP_MAX) return reduce_rows_t<T, R_MAX>(c, x, y, rows, cols, 1.0f);
    if (op == HB_OP_MEAN) return reduce_rows_t<T, R_SUM>(c, x, y, rows, cols, (float)(1.0 / (double)cols));
    return reduce_rows_t<T, R_SUM>(c, x, y, rows, cols, 1.0f);
}

/* ---- rmsnorm: one block per row ---- */
template <typename T>
__global__ void __launch_bounds__(kThreads) k_rmsnorm(const T *__restrict__ x, const T *__restrict__ g,
                                                      T *__restrict__ y, int64_t cols)
{
    const T *row = x + (int64_t)blockIdx.x * cols;
    T *out = y + (int64_t)blockIdx.x * cols;
    float ss = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
        float v = st<T>::ld(row[i]);
        ss = fmaf(v, v, ss);
    }
    ss = block_reduce<R_SUM>(ss);
    const float inv = rsqrtf(ss / (float)cols + 1e-5f);
    for (int64_t i = threadIdx.x; i < cols; i += kThreads) out[i] = st<T>::cv(st<T>::ld(row[i]) * inv * st<T>::ld(g[i]));
}

/* ---- pooling (NCHW), one thread per output element ---- */
template <typename T>
__global__ void k_pool(int is_max, const T *__restrict__ x, T *__restrict__ y, int64_t planes, int64_t h, int64_t w,
                       int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                       int64_t dh, int64_t dw)
{
    const int64_t total = planes * oh * ow;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ox = i % ow, oy = (i / ow) % oh, p = i / (ow * oh);
        const T *xp = x + p * h * w;
        float acc = is_max ? -INFINITY : 0.0f;
        int cnt = 0;
        for (int64_t a = 0; a < kh; a++) {
            const int64_t iy = oy * sh - ph + a * dh;
            if (iy < 0 || iy >= h) continue;
            for (int64_t bb = 0; bb < kw; bb++) {
                const int64_t ix = ox * sw - pw + bb * dw;
                if (ix < 0 || ix >= w) continue;
                const float v = st<T>::ld(xp[iy * w + ix]);
                acc = is_max ? fmaxf(acc, v) : acc + v;
                cnt++;
            }
        }
        y[i] = st<T>::cv(cnt == 0 ? 0.0f : (is_max ? acc : acc / (float)cnt));
    }
}

/* ---- conversions and probes ---- */
template <typename T> __global__ void k_from_f64(const double *__restrict__ s, T *__restrict__ d, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        d[i] = st<T>::cv((float)s[i]);
}
/* f64 -> f16/bf16 goes through f32, as harness/core/convert.h does on the host. */
template <typename T> __global__ void k_to_f64(const T *__restrict__ s, double *__restrict__ d, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        d[i] = (double)st<T>::ld(s[i]);
}

__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
template <typename T> __global__ void k_fill(T *__restrict__ d, int64_t n, uint64_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        /* 24 random bits -> [-1, 1), exactly representable in f32; 0 maps to a small non-zero */
        uint32_t r = (uint32_t)(mix64(seed * 0x9e3779b97f4a7c15ull + (uint64_t)i) >> 40);
        float v = ((float)r - 8388608.0f) / 8388608.0f;
        if (v == 0.0f) v = 0.5f;
        d[i] = st<T>::cv(v);
    }
}

__global__ void __launch_bounds__(kThreads) k_copy(uint4 *__restrict__ d, const uint4 *__restrict__ s, int64_t nv)
{
    const int64_t base = (int64_t)blockIdx.x * kThreads * kUnroll + threadIdx.x;
    uint4 t[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++)
        if (base + u * kThreads < nv) t[u] = s[base + u * kThreads];
#pragma unroll
    for (int u = 0; u < kUnroll; u++)
        if (base + u * kThreads < nv) d[base + u * kThreads] = t[u];
}

__global__ void __launch_bounds__(kThreads) k_triad(float4 *__restrict__ a, const float4 *__restrict__ b,
                                                    const float4 *__restrict__ cc, int64_t nv)
{
    const int64_t base = (int64_t)blockIdx.x * kThreads * kUnroll + threadIdx.x;
    float4 tb[kUnroll], tc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++)
        if (base + u * kThreads < nv) { tb[u] = b[base + u * kThreads]; tc[u] = cc[base + u * kThreads]; }
#pragma unroll
    for (int u = 0; u < kUnroll; u++)
        if (base + u * kThreads < nv) {
            float4 r;
            r.x = fmaf(3.0f, tc[u].x, tb[u].x); r.y = fmaf(3.0f, tc[u].y, tb[u].y);
            r.z = fmaf(3.0f, tc[u].z, tb[u].z); r.w = fmaf(3.0f, tc[u].w, tb[u].w);
            a[base + u * kThreads] = r;
        }
}

__global__ void __launch_bounds__(kThreads) k_read(const uint4 *__restrict__ s, int64_t nv, uint32_t *sink)
{
    uint32_t x = 0;
    for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < nv; i += (int64_t)gridDim.x * kThreads) {
        uint4 t = s[i];
        x ^= t.x ^ t.y ^ t.z ^ t.w;
    }
    if (x == 0x9e3779b9u) *sink = x; /* practically never; keeps the loads alive */
}

__global__ void __launch_bounds__(kThreads) k_write(uint4 *__restrict__ d, int64_t nv)
{
    for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < nv; i += (int64_t)gridDim.x * kThreads)
        d[i] = make_uint4((uint32_t)i, 1u, 2u, 3u);
}

__global__ void k_gate(const volatile int *flag, unsigned long long timeout_ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) break;
        __nanosleep(200);
    }
}

unsigned grid_for(hbc_ctx *c, int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    int64_t cap = (int64_t)c->prop.multiProcessorCount * 32;
    if (b > cap) b = cap;
    return (unsigned)(b < 1 ? 1 : b);
}

} // namespace

hb_status hbc_elementwise(hbc_ctx *c, hb_op op, hbc_elem e, const void *a, const void *b, void *out, int64_t n)
{
    if (n <= 0) return HB_EINVAL;
    const ew_row *r = ew_find(op);
    if (!r) return HB_ESKIP;
    return r->run[e == HBC_F32 ? 0 : e == HBC_F16 ? 1 : 2](c, a, b, out, n);
}

bool hbc_ew_supported(hb_op op) { return ew_find(op) != nullptr; }

hb_status hbc_reduce_rows(hbc_ctx *c, hb_op op, hbc_elem e, const void *x, void *y, int64_t rows, int64_t cols)
{
    if (rows <= 0 || cols <= 0) return HB_EINVAL;
    switch (e) {
    case HBC_F32: return reduce_dispatch<float>(c, op, x, y, rows, cols);
    case HBC_F16: return reduce_dispatch<__half>(c, op, x, y, rows, cols);
    default: return reduce_dispatch<__nv_bfloat16>(c, op, x, y, rows, cols);
    }
}

hb_status hbc_rmsnorm(hbc_ctx *c, hbc_elem e, const void *x, const void *g, void *y, int64_t rows, int64_t cols)
{
    if (rows <= 0 || cols <= 0 || rows > 0x7fffffff) return HB_EINVAL;
    switch (e) {
    case HBC_F32: k_rmsnorm<float><<<(unsigned)rows, kThreads, 0, c->stream>>>((const float *)x, (const float *)g, (float *)y, cols); break;
    case HBC_F16: k_rmsnorm<__half><<<(unsigned)rows, kThreads, 0, c->stream>>>((const __half *)x, (const __half *)g, (__half *)y, cols); break;
    default:
        k_rmsnorm<__nv_bfloat16><<<(unsigned)rows, kThreads, 0, c->stream>>>((const __nv_bfloat16 *)x, (const __nv_bfloat16 *)g,
                                                                           (__nv_bfloat16 *)y, cols);
    }
    return HBC_LAUNCHED(c, "rmsnorm");
}

hb_status hbc_pool(hbc_ctx *c, int is_max, hbc_elem e, const void *x, void *y, int64_t b, int64_t ch, int64_t h,
                   int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                   int64_t pw, int64_t dh, int64_t dw)
{
    const int64_t planes = b * ch;
    const unsigned grid = grid_for(c, planes * oh * ow);
    switch (e) {
    case HBC_F32: k_pool<float><<<grid, kThreads, 0, c->stream>>>(is_max, (const float *)x, (float *)y, planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw); break;
    case HBC_F16: k_pool<__half><<<grid, kThreads, 0, c->stream>>>(is_max, (const __half *)x, (__half *)y, planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw); break;
    default:
        k_pool<__nv_bfloat16><<<grid, kThreads, 0, c->stream>>>(is_max, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, planes, h, w, oh, ow, kh, kw,
                                                              sh, sw, ph, pw, dh, dw);
    }
    return HBC_LAUNCHED(c, "pool");
}

hb_status hbc_from_f64(hbc_ctx *c, hbc_elem e, const double *src, void *dst, int64_t n)
{
    const unsigned grid = grid_for(c, n);
    switch (e) {
    case HBC_F32: k_from_f64<float><<<grid, kThreads, 0, c->stream>>>(src, (float *)dst, n); break;
    case HBC_F16: k_from_f64<__half><<<grid, kThreads, 0, c->stream>>>(src, (__half *)dst, n); break;
    default: k_from_f64<__nv_bfloat16><<<grid, kThreads, 0, c->stream>>>(src, (__nv_bfloat16 *)dst, n);
    }
    return HBC_LAUNCHED(c, "from_f64");
}

hb_status hbc_to_f64(hbc_ctx *c, hbc_elem e, const void *src, double *dst, int64_t n)
{
    const unsigned grid = grid_for(c, n);
    switch (e) {
    case HBC_F32: k_to_f64<float><<<grid, kThreads, 0, c->stream>>>((const float *)src, dst, n); break;
    case HBC_F16: k_to_f64<__half><<<grid, kThreads, 0, c->stream>>>((const __half *)src, dst, n); break;
    default: k_to_f64<__nv_bfloat16><<<grid, kThreads, 0, c->stream>>>((const __nv_bfloat16 *)src, dst, n);
    }
    return HBC_LAUNCHED(c, "to_f64");
}

hb_status hbc_fill_random(hbc_ctx *c, hbc_elem e, void *dst, int64_t n, uint64_t seed)
{
    const unsigned grid = grid_for(c, n);
    switch (e) {
    case HBC_F32: k_fill<float><<<grid, kThreads, 0, c->stream>>>((float *)dst, n, seed); break;
    case HBC_F16: k_fill<__half><<<grid, kThreads, 0, c->stream>>>((__half *)dst, n, seed); break;
    default: k_fill<__nv_bfloat16><<<grid, kThreads, 0, c->stream>>>((__nv_bfloat16 *)dst, n, seed);
    }
    return HBC_LAUNCHED(c, "fill_random");
}

hb_status hbc_copy(hbc_ctx *c, void *dst, const void *src, size_t bytes)
{
    const int64_t nv = (int64_t)(bytes / 16);
    const int64_t blocks = (nv + kThreads * kUnroll - 1) / (kThreads * kUnroll);
    k_copy<<<(unsigned)blocks, kThreads, 0, c->stream>>>((uint4 *)dst, (const uint4 *)src, nv);
    return HBC_LAUNCHED(c, "copy");
}

hb_status hbc_triad(hbc_ctx *c, float *a, const float *b, const float *cc, int64_t n)
{
    const int64_t nv = n / 4;
    const int64_t blocks = (nv + kThreads * kUnroll - 1) / (kThreads * kUnroll);
    k_triad<<<(unsigned)blocks, kThreads, 0, c->stream>>>((float4 *)a, (const float4 *)b, (const float4 *)cc, nv);
    return HBC_LAUNCHED(c, "triad");
}

hb_status hbc_read_probe(hbc_ctx *c, const void *src, size_t bytes, uint32_t *sink)
{
    const int64_t nv = (int64_t)(bytes / 16);
    k_read<<<grid_for(c, nv), kThreads, 0, c->stream>>>((const uint4 *)src, nv, sink);
    return HBC_LAUNCHED(c, "read_probe");
}

hb_status hbc_write_probe(hbc_ctx *c, void *dst, size_t bytes)
{
    const int64_t nv = (int64_t)(bytes / 16);
    k_write<<<grid_for(c, nv), kThreads, 0, c->stream>>>((uint4 *)dst, nv);
    return HBC_LAUNCHED(c, "write_probe");
}

hb_status hbc_gate_launch(hbc_ctx *c)
{
    if (!c->gate_on || c->gate_held || !c->gate_h) return HB_OK;
    __atomic_store_n(c->gate_h, 0, __ATOMIC_SEQ_CST);
    k_gate<<<1, 1, 0, c->stream>>>(c->gate_d, 100ull * 1000 * 1000);
    HBC_TRY(HBC_LAUNCHED(c, "gate"));
    c->gate_held = 1;
    return HB_OK;
}

void hbc_gate_release(hbc_ctx *c)
{
    if (!c->gate_held) return;
    __atomic_store_n(c->gate_h, 1, __ATOMIC_SEQ_CST);
    c->gate_held = 0;
}
