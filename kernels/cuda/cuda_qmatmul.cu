/*
 * cuda_qmatmul.cu - matmul with quantized weights (dtypes q8_0, q4_k, q5_k, q6_k; core/quant.h):
 * C[m,n] = A[m,k] x W^T, A and C f32 row-major, W[n,k] in the format's GGUF blocks, each of the n rows
 * k / block blocks contiguous (ggml's layout). The dequantization is written here from the formats'
 * definitions in core/quant.h's comment (the plugin links no harness symbol, so quant.c's functions
 * are not used); only quant.h's header-only structs and constants are shared.
 *
 * Two paths (hbc_qmatmul chooses by m):
 *  - m <= HBC_QGEMV_MAX_M (8, decode): one kernel per format and m, gemv_<fmt>. A block of 4 warps
 *    owns rows of W in groups of R (R = 2, or 4 for m > 2 in the 8-a-lane layout); S of its warps
 *    (1, 2 or 4, no more than the row has chunks) split a group's chunks of weights between them. In
 *    each chunk a lane owns 8 weights (256-weight chunks: one K super-block or 8 Q8_0 blocks), or 32
 *    (Q4_K and Q5_K with m <= 2: 1024-weight chunks of 4 super-blocks, 8 lanes each, a 16-byte load
 *    of quants per lane and the scales decoded once per 32 weights). It loads their bytes (each weight
 *    byte of the matrix read once per run, the warp's loads contiguous), dequantizes them into f32
 *    registers once (quant to float by the 2^23 exponent trick: a byte permute and one FADD, no I2F)
 *    and multiplies them with the f32 activations of all m rows (read through L1/L2, each load reused
 *    for the R rows in registers). Accumulation in f32; partial sums reduced with warp shuffles, the
 *    S warps' through shared memory. Precision: f32 activations and f32 dequantized weights (the value
 *    differs from quant.c's only where a fused multiply-add rounds d*sc*q - dmin*mn once, not twice).
 *    H100 (2026-11-28, tests/test_cuda.c HB_QBENCH=1): n=4096 k=14336 q4_k m=1 24.8 us warm / 33.6 us
 *    after an L2 flush, m=8 61.6 / 67.2 us; kernels/cuda/NOTES.md has the table.
 *  - m > 8 (prefill): W is dequantized into an f16 copy [n,k] (kernel deq_f16_<fmt>, same decoding as
 *    above, each f32 value rounded to f16), A is rounded to f16, and cublasGemmEx multiplies them with
 *    f32 accumulation (CUBLAS_COMPUTE_32F, f32 output). Precision: weights and activations rounded to
 *    binary16 (relative 2^-11 each) and f16 range: a weight or activation beyond 65504 becomes inf (the
 *    case then fails verification rather than passing silently). The dequantization and the rounding of
 *    A are part of the timed op (they run behind the same events), and their scratch (2 n k + 2 m k
 *    bytes) is kept by the instance (c->qw16, c->qa16).
 *
 * Sets c->last_impl ("own-kernel" or "own-dequant+cublas"), c->last_algo and c->last_qimpl (case_info's
 * "qmatmul_impl", e.g. "gemv_q4_k_r2" or "dequant_f16_q4_k+cublasGemmEx").
 */
#include "cuda/cuda_internal.h"
#include "core/quant.h"

#include <limits.h>
#include <stdio.h>

namespace {

constexpr int QNW = 4;   /* warps per gemv block */
constexpr int QCH = 256; /* weights per chunk (one K super-block, or 8 Q8_0 blocks) */

/* The float 2^23 + b for the byte b = byte j of x (PRMT with the exponent word 0x4B000000: bytes
 * x.j, 0, 0, 0x4B); subtracting 2^23 (or 2^23 + an offset) gives b as float, exactly. */
template <int J> __device__ __forceinline__ float mag(uint32_t x)
{
    return __uint_as_float(__byte_perm(x, 0x4B000000u, 0x7440u | J));
}
constexpr float k2p23 = 8388608.0f;

__device__ __forceinline__ float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint32_t ld_u16(const uint8_t *p) { return *(const uint16_t *)p; }
__device__ __forceinline__ uint32_t ld_u32(const uint8_t *p) { return *(const uint32_t *)p; }

/* Per format: the 8 weights lane L owns in chunk ch of a row (row: the row's first block), dequantized
 * into y[8] (f32) by decode, and the activations of row a (a: the row's first element) at
 * those weights' positions (pattern of the format): acts loads them into v[8] in y's order; elem(ch, L, j)
 * is y[j]'s element index within the row. valid == false: the lane owns nothing (a Q8_0
 * row whose block count is no multiple of 8): y = 0 and dot reads nothing. */
struct FmtQ8_0 {
    static constexpr int WPL = 8, CHW = QCH;
    static constexpr hb_dtype dt = HB_Q8_0;
    static constexpr int BB = (int)sizeof(hb_block_q8_0);
    static constexpr const char *name = "q8_0";
    /* lane L: block 8 ch + L / 4, its quarter L % 4: elements 32 (L/4) + 8 (L%4) .. +7 */
    __device__ static int base(int ch, int L) { return ch * QCH + 32 * (L >> 2) + 8 * (L & 3); }
    __device__ static void decode(const uint8_t *row, int ch, int L, int nb, float y[8])
    {
        const int b = 8 * ch + (L >> 2);
        if (b >= nb) {
            for (int j = 0; j < 8; j++) y[j] = 0.0f;
            return;
        }
        const uint8_t *p = row + (size_t)b * BB;
        const float d = h2f((uint16_t)ld_u16(p));
        const uint8_t *q = p + 2 + 8 * (L & 3); /* 2-byte aligned only */
        /* the int8 quants offset by 128 (xor 0x80 per byte): 2^23 + q + 128 */
        const uint32_t w0 = (ld_u16(q) | (ld_u16(q + 2) << 16)) ^ 0x80808080u;
        const uint32_t w1 = (ld_u16(q + 4) | (ld_u16(q + 6) << 16)) ^ 0x80808080u;
        const float off = k2p23 + 128.0f;
        y[0] = d * (mag<0>(w0) - off); y[1] = d * (mag<1>(w0) - off);
        y[2] = d * (mag<2>(w0) - off); y[3] = d * (mag<3>(w0) - off);
        y[4] = d * (mag<0>(w1) - off); y[5] = d * (mag<1>(w1) - off);
        y[6] = d * (mag<2>(w1) - off); y[7] = d * (mag<3>(w1) - off);
    }
    __device__ static bool valid(int ch, int L, int nb) { return 8 * ch + (L >> 2) < nb; }
    __device__ static void acts(const float *a, int ch, int L, int, float v[8])
    {
        const float4 *p = (const float4 *)(a + base(ch, L));
        const float4 u = __ldg(p), w = __ldg(p + 1);
        v[0] = u.x; v[1] = u.y; v[2] = u.z; v[3] = u.w; v[4] = w.x; v[5] = w.y; v[6] = w.z; v[7] = w.w;
    }
    /* the element index of y[j] within the row */
    __device__ static int elem(int ch, int L, int j) { return base(ch, L) + j; }
};

/* Q4_K and Q5_K: lane L reads 4 bytes at qs + 4 L: 32-byte group g = L / 8, bytes l0 = 4 (L % 8) ..
 * l0 + 3 of it: low nibbles are elements 64 g + l0 .. +3 (sub-block 2 g), high nibbles 64 g + 32 + l0
 * .. +3 (sub-block 2 g + 1). Q5_K's fifth bits: byte l of qh, bit 2 g (low) and 2 g + 1 (high). */
template <bool Q5> struct FmtK45 {
    static constexpr int WPL = 8, CHW = QCH;
    static constexpr hb_dtype dt = Q5 ? HB_Q5_K : HB_Q4_K;
    static constexpr int BB = Q5 ? (int)sizeof(hb_block_q5_k) : (int)sizeof(hb_block_q4_k);
    static constexpr const char *name = Q5 ? "q5_k" : "q4_k";
    __device__ static int base(int ch, int L) { return ch * QCH + 64 * (L >> 3) + 4 * (L & 7); }
    __device__ static void scale_min(int j, uint32_t s0, uint32_t s1, uint32_t s2, uint32_t *sc, uint32_t *mn)
    {
        /* hb_k4_scale_min on the 12 bytes s0 (0..3), s1 (4..7), s2 (8..11) */
        const uint32_t q_j = j < 4 ? (s0 >> (8 * j)) & 0xFF : (s1 >> (8 * (j - 4))) & 0xFF;      /* byte j */
        const uint32_t q_j4 = j < 4 ? (s1 >> (8 * j)) & 0xFF : (s2 >> (8 * (j - 4))) & 0xFF;     /* byte j + 4 */
        if (j < 4) {
            *sc = q_j & 63;
            *mn = q_j4 & 63;
        } else {
            const uint32_t q_jm4 = (s0 >> (8 * (j - 4))) & 0xFF; /* byte j - 4 */
            *sc = (q_j4 & 0xF) | ((q_jm4 >> 6) << 4);
            *mn = (q_j4 >> 4) | ((q_j >> 6) << 4);
        }
    }
    __device__ static void decode(const uint8_t *row, int ch, int L, int nb, float y[8])
    {
        const uint8_t *p = row + (size_t)ch * BB; /* 16-byte aligned: 144 and 176 are multiples of 16 */
        const uint32_t dd = ld_u32(p);
        const float d = h2f((uint16_t)(dd & 0xFFFF)), dmin = h2f((uint16_t)(dd >> 16));
        const uint32_t s0 = ld_u32(p + 4), s1 = ld_u32(p + 8), s2 = ld_u32(p + 12);
        const int g = L >> 3;
        const uint8_t *qs = p + (Q5 ? 48 : 16);
        const uint32_t w = ld_u32(qs + 4 * L);
        uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;
        if (Q5) {
            const uint32_t h = ld_u32(p + 16 + 4 * (L & 7));
            lo |= ((h >> (2 * g)) & 0x01010101u) << 4;
            hi |= ((h >> (2 * g + 1)) & 0x01010101u) << 4;
        }
        uint32_t sc, mn;
        scale_min(2 * g, s0, s1, s2, &sc, &mn);
        const float d1 = d * (float)sc, m1 = dmin * (float)mn;
        scale_min(2 * g + 1, s0, s1, s2, &sc, &mn);
        const float d2 = d * (float)sc, m2 = dmin * (float)mn;
        y[0] = fmaf(d1, mag<0>(lo) - k2p23, -m1); y[1] = fmaf(d1, mag<1>(lo) - k2p23, -m1);
        y[2] = fmaf(d1, mag<2>(lo) - k2p23, -m1); y[3] = fmaf(d1, mag<3>(lo) - k2p23, -m1);
        y[4] = fmaf(d2, mag<0>(hi) - k2p23, -m2); y[5] = fmaf(d2, mag<1>(hi) - k2p23, -m2);
        y[6] = fmaf(d2, mag<2>(hi) - k2p23, -m2); y[7] = fmaf(d2, mag<3>(hi) - k2p23, -m2);
    }
    __device__ static bool valid(int, int, int) { return true; }
    __device__ static void acts(const float *a, int ch, int L, int, float v[8])
    {
        const float *q = a + base(ch, L);
        const float4 u = __ldg((const float4 *)q), w = __ldg((const float4 *)(q + 32));
        v[0] = u.x; v[1] = u.y; v[2] = u.z; v[3] = u.w; v[4] = w.x; v[5] = w.y; v[6] = w.z; v[7] = w.w;
    }
    __device__ static int elem(int ch, int L, int j) { return base(ch, L) + (j < 4 ? j : 32 + j - 4); }
};

/* Q4_K and Q5_K, 32 weights a lane (the gemv kernels): a warp step covers 4 super-blocks, 8 lanes
 * each; lane L: super-block 4 ch + L / 8, l = L % 8 reads the 16 bytes qs[16 l ..]: 32-byte group g = l
 * / 2, bytes l0 = 16 (l % 2) .. +15 of it: low nibbles are elements 64 g + l0 .. +15 (sub-block 2 g),
 * high nibbles 64 g + 32 + l0 .. +15 (sub-block 2 g + 1); y[0..15] low, y[16..31] high. */
template <bool Q5> struct FmtK45W {
    static constexpr hb_dtype dt = Q5 ? HB_Q5_K : HB_Q4_K;
    static constexpr int BB = FmtK45<Q5>::BB;
    static constexpr int WPL = 32, CHW = 4 * QCH;
    static constexpr const char *name = Q5 ? "q5_k" : "q4_k";
    __device__ static int base(int ch, int L)
    {
        const int l = L & 7;
        return ch * CHW + QCH * (L >> 3) + 64 * (l >> 1) + 16 * (l & 1);
    }
    __device__ static bool valid(int ch, int L, int nb) { return 4 * ch + (L >> 3) < nb; }
    __device__ static void decode(const uint8_t *row, int ch, int L, int nb, float y[32])
    {
        const int sb = 4 * ch + (L >> 3) < nb ? 4 * ch + (L >> 3) : nb - 1; /* past the row: any block, unused */
        const uint8_t *p = row + (size_t)sb * BB; /* 16-byte aligned */
        const int l = L & 7, g = l >> 1;
        const uint4 w = *(const uint4 *)(p + (Q5 ? 48 : 16) + 16 * l);
        const uint32_t dd = ld_u32(p), s0 = ld_u32(p + 4), s1 = ld_u32(p + 8), s2 = ld_u32(p + 12);
        uint4 h = make_uint4(0, 0, 0, 0);
        if (Q5) h = *(const uint4 *)(p + 16 + 16 * (l & 1));
        const float d = h2f((uint16_t)(dd & 0xFFFF)), dmin = h2f((uint16_t)(dd >> 16));
        uint32_t sc, mn;
        FmtK45<Q5>::scale_min(2 * g, s0, s1, s2, &sc, &mn);
        const float d1 = d * (float)sc, m1 = dmin * (float)mn;
        FmtK45<Q5>::scale_min(2 * g + 1, s0, s1, s2, &sc, &mn);
        const float d2 = d * (float)sc, m2 = dmin * (float)mn;
        const uint32_t ws[4] = {w.x, w.y, w.z, w.w}, hs[4] = {h.x, h.y, h.z, h.w};
#pragma unroll
        for (int q = 0; q < 4; q++) {
            uint32_t lo = ws[q] & 0x0F0F0F0Fu, hi = (ws[q] >> 4) & 0x0F0F0F0Fu;
            if (Q5) {
                lo |= ((hs[q] >> (2 * g)) & 0x01010101u) << 4;
                hi |= ((hs[q] >> (2 * g + 1)) & 0x01010101u) << 4;
            }
            y[4 * q + 0] = fmaf(d1, mag<0>(lo) - k2p23, -m1); y[4 * q + 1] = fmaf(d1, mag<1>(lo) - k2p23, -m1);
            y[4 * q + 2] = fmaf(d1, mag<2>(lo) - k2p23, -m1); y[4 * q + 3] = fmaf(d1, mag<3>(lo) - k2p23, -m1);
            y[16 + 4 * q + 0] = fmaf(d2, mag<0>(hi) - k2p23, -m2); y[16 + 4 * q + 1] = fmaf(d2, mag<1>(hi) - k2p23, -m2);
            y[16 + 4 * q + 2] = fmaf(d2, mag<2>(hi) - k2p23, -m2); y[16 + 4 * q + 3] = fmaf(d2, mag<3>(hi) - k2p23, -m2);
        }
    }
    /* piece pc (0..3) of the lane's activations: y[8 pc .. 8 pc + 7] */
    __device__ static void acts(const float *a, int ch, int L, int pc, float v[8])
    {
        const float *q = a + base(ch, L) + (pc < 2 ? 8 * pc : 32 + 8 * (pc - 2));
        const float4 u = __ldg((const float4 *)q), w = __ldg((const float4 *)(q + 4));
        v[0] = u.x; v[1] = u.y; v[2] = u.z; v[3] = u.w; v[4] = w.x; v[5] = w.y; v[6] = w.z; v[7] = w.w;
    }
};

/* Q6_K: lane L: half h = L / 16 (elements 128 h ..), l0 = 2 (L % 16): l in {l0, l0 + 1} in each of the
 * four quarters: element 128 h + 32 t + l with q = ql nibble | 2 bits of qh[32 h + l] << 4, minus 32,
 * scale scales[8 h + l0 / 16 + 2 t]; ql byte 64 h + l (t = 0 low, t = 2 high) or 64 h + 32 + l (t = 1
 * low, t = 3 high); qh bits 2 t. y[2 t + i] is element 128 h + 32 t + l0 + i. */
struct FmtQ6 {
    static constexpr int WPL = 8, CHW = QCH;
    static constexpr hb_dtype dt = HB_Q6_K;
    static constexpr int BB = (int)sizeof(hb_block_q6_k);
    static constexpr const char *name = "q6_k";
    __device__ static int base(int ch, int L) { return ch * QCH + 128 * (L >> 4) + 2 * (L & 15); }
    __device__ static void decode(const uint8_t *row, int ch, int L, int nb, float y[8])
    {
        const uint8_t *p = row + (size_t)ch * BB; /* 2-byte aligned only */
        const int h = L >> 4, l0 = 2 * (L & 15);
        const uint32_t qa = ld_u16(p + 64 * h + l0), qb = ld_u16(p + 64 * h + 32 + l0);
        const uint32_t qh = ld_u16(p + 128 + 32 * h + l0);
        /* bytes: t = 0 and 1 in the low half-word pair of w01, t = 2 and 3 in w23 */
        const uint32_t w01 = ((qa & 0x0F0Fu) | ((qh & 0x0303u) << 4)) | (((qb & 0x0F0Fu) | (((qh >> 2) & 0x0303u) << 4)) << 16);
        const uint32_t w23 = (((qa >> 4) & 0x0F0Fu) | (((qh >> 4) & 0x0303u) << 4)) |
                             ((((qb >> 4) & 0x0F0Fu) | (((qh >> 6) & 0x0303u) << 4)) << 16);
        const float d = h2f((uint16_t)ld_u16(p + 208));
        const int8_t *sc = (const int8_t *)(p + 192) + 8 * h + (l0 >> 4);
        const float d0 = d * (float)sc[0], d1 = d * (float)sc[2], d2 = d * (float)sc[4], d3 = d * (float)sc[6];
        const float off = k2p23 + 32.0f;
        y[0] = d0 * (mag<0>(w01) - off); y[1] = d0 * (mag<1>(w01) - off);
        y[2] = d1 * (mag<2>(w01) - off); y[3] = d1 * (mag<3>(w01) - off);
        y[4] = d2 * (mag<0>(w23) - off); y[5] = d2 * (mag<1>(w23) - off);
        y[6] = d3 * (mag<2>(w23) - off); y[7] = d3 * (mag<3>(w23) - off);
    }
    __device__ static bool valid(int, int, int) { return true; }
    __device__ static void acts(const float *a, int ch, int L, int, float v[8])
    {
        const float *q = a + base(ch, L);
        const float2 u0 = __ldg((const float2 *)q), u1 = __ldg((const float2 *)(q + 32));
        const float2 u2 = __ldg((const float2 *)(q + 64)), u3 = __ldg((const float2 *)(q + 96));
        v[0] = u0.x; v[1] = u0.y; v[2] = u1.x; v[3] = u1.y; v[4] = u2.x; v[5] = u2.y; v[6] = u3.x; v[7] = u3.y;
    }
    __device__ static int elem(int ch, int L, int j) { return base(ch, L) + 32 * (j >> 1) + (j & 1); }
};

/* gemv: block (QNW warps) -> QNW / S groups of R rows (row group w / S of warp w; rows past n are
 * left out), each row's chunks split between S warps (S in 1, 2, 4, at most the chunks per row: warp
 * w takes chunks w % S, + S, ...); U chunks' weights are decoded before their products (loads in
 * flight). Products in pieces of 8 weights: the lane's 8 activations of row i loaded once for the R
 * rows. Partial sums: warp shuffles, then shared memory across the S warps of a row. */
template <class F, int M, int R, int U>
__global__ void __launch_bounds__(QNW * 32) k_gemv(const float *__restrict__ A, const uint8_t *__restrict__ W,
                                                  float *__restrict__ C, int n, int k, int S)
{
    const int L = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int G = QNW / S;                                   /* row groups per block */
    const int r0 = (blockIdx.x * G + w / S) * R;
    const int nb = k / (F::dt == HB_Q8_0 ? HB_QK8_0 : HB_QK_K); /* blocks per row */
    const int nch = (k + F::CHW - 1) / F::CHW;
    const size_t row_bytes = (size_t)nb * F::BB;
    float acc[R][M];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int i = 0; i < M; i++) acc[r][i] = 0.0f;
    for (int ch0 = w % S; ch0 < nch; ch0 += S * U) {
        float y[U][R][F::WPL];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int row = r0 + r < n ? r0 + r : n - 1; /* a row past n repeats the last one, unused */
                const int ch = ch0 + u * S < nch ? ch0 + u * S : ch0;
                F::decode(W + (size_t)row * row_bytes, ch, L, nb, y[u][r]);
            }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int ch = ch0 + u * S;
            if (ch >= nch || !F::valid(ch, L, nb)) continue;
#pragma unroll
            for (int pc = 0; pc < F::WPL / 8; pc++)
#pragma unroll
                for (int i = 0; i < M; i++) {
                    float av[8];
                    F::acts(A + (size_t)i * k, ch, L, pc, av); /* loaded once, used for the R rows */
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        float s = acc[r][i];
#pragma unroll
                        for (int j = 0; j < 8; j++) s = fmaf(y[u][r][8 * pc + j], av[j], s);
                        acc[r][i] = s;
                    }
                }
        }
    }
    __shared__ float red[QNW][R][M];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int i = 0; i < M; i++) {
            float v = acc[r][i];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if (L == 0) red[w][r][i] = v;
        }
    __syncthreads();
    const int t = threadIdx.x;
    if (t < G * R * M) {
        const int gi = t / (R * M), r = (t / M) % R, i = t % M;
        const int row = (blockIdx.x * G + gi) * R + r;
        if (row < n) {
            float sum = 0.0f;
            for (int q = 0; q < S; q++) sum += red[gi * S + q][r][i];
            C[(size_t)i * n + row] = sum;
        }
    }
}

__device__ __forceinline__ void put(__half *o, float v) { *o = __float2half_rn(v); }
__device__ __forceinline__ void put(float *o, float v) { *o = v; }

/* W[n,k] blocks -> T Wh[n,k] row-major (T: __half for the prefill's cuBLAS, float for op dequantize):
 * one warp per (row, chunk), 8 warps per block. */
template <class F, class T>
__global__ void __launch_bounds__(256) k_deq(const uint8_t *__restrict__ W, T *__restrict__ Wh, int n, int k)
{
    const int L = threadIdx.x & 31;
    const int nb = k / (F::dt == HB_Q8_0 ? HB_QK8_0 : HB_QK_K);
    const int nch = (k + F::CHW - 1) / F::CHW;
    const int64_t job = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (job >= (int64_t)n * nch) return;
    const int row = (int)(job / nch), ch = (int)(job % nch);
    if (!F::valid(ch, L, nb)) return;
    float y[8];
    F::decode(W + (size_t)row * nb * F::BB, ch, L, nb, y);
    T *o = Wh + (size_t)row * k;
#pragma unroll
    for (int j = 0; j < 8; j++) put(&o[F::elem(ch, L, j)], y[j]);
}

__global__ void k_f32_to_f16(const float *__restrict__ x, __half *__restrict__ y, int64_t count)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = __float2half_rn(x[i]);
}

/* The gemv format of F for m rows: Q4_K and Q5_K with m <= 2 take the 32-weights-a-lane layout (fewer
 * instructions a weight: H100, n=4096 k=14336 m=1, 24.9 us against 41.3 us with 8 a lane); with more
 * rows the 8-a-lane layout, whose R = 4 rows a warp reuse each activation load more (m=8: 70 us
 * against 150 us with the wide layout at R = 2, whose registers do not take R = 4). */
template <class F, int M> struct GemvFmt { using T = F; };
template <bool Q5> struct GemvFmt<FmtK45<Q5>, 1> { using T = FmtK45W<Q5>; };
template <bool Q5> struct GemvFmt<FmtK45<Q5>, 2> { using T = FmtK45W<Q5>; };

template <class F0, int M>
hb_status launch_gemv_m(hbc_ctx *c, const float *A, const uint8_t *W, float *C, int n, int k)
{
    using F = typename GemvFmt<F0, M>::T;
    constexpr int R = F::WPL == 32 ? 2 : M <= 2 ? 2 : 4, U = F::WPL == 32 ? 1 : M <= 2 ? 2 : 1;
    const int nch = (k + F::CHW - 1) / F::CHW;
    const int S = nch >= 4 ? 4 : nch >= 2 ? 2 : 1, rows_per_block = R * (QNW / S);
    const unsigned grid = (unsigned)((n + rows_per_block - 1) / rows_per_block);
    k_gemv<F, M, R, U><<<grid, QNW * 32, 0, c->stream>>>(A, W, C, n, k, S);
    snprintf(c->last_qimpl, sizeof c->last_qimpl, "gemv_%s_r%d_w%d_s%d", F::name, R, F::WPL, S);
    return HBC_LAUNCHED(c, "k_gemv");
}

template <class F>
hb_status run_fmt(hbc_ctx *c, const float *A, const uint8_t *W, float *C, int m, int n, int k)
{
    snprintf(c->last_impl, sizeof c->last_impl, "%s", hbc_qmatmul_impl(m));
    if (m <= HBC_QGEMV_MAX_M) {
        hb_status st;
        switch (m) {
        case 1: st = launch_gemv_m<F, 1>(c, A, W, C, n, k); break;
        case 2: st = launch_gemv_m<F, 2>(c, A, W, C, n, k); break;
        case 3: st = launch_gemv_m<F, 3>(c, A, W, C, n, k); break;
        case 4: st = launch_gemv_m<F, 4>(c, A, W, C, n, k); break;
        case 5: st = launch_gemv_m<F, 5>(c, A, W, C, n, k); break;
        case 6: st = launch_gemv_m<F, 6>(c, A, W, C, n, k); break;
        case 7: st = launch_gemv_m<F, 7>(c, A, W, C, n, k); break;
        default: st = launch_gemv_m<F, 8>(c, A, W, C, n, k); break;
        }
        snprintf(c->last_algo, sizeof c->last_algo, "%s (f32 activations, f32 dequantized weights, f32 accumulation)",
                 c->last_qimpl);
        return st;
    }
    const size_t wbytes = (size_t)n * (size_t)k * sizeof(__half), abytes = (size_t)m * (size_t)k * sizeof(__half);
    HBC_TRY(hbc_grow(c, &c->qw16, &c->qw16_bytes, wbytes));
    HBC_TRY(hbc_grow(c, &c->qa16, &c->qa16_bytes, abytes));
    const int nch = (k + F::CHW - 1) / F::CHW;
    const int64_t jobs = (int64_t)n * nch;
    k_deq<F, __half><<<(unsigned)((jobs + 7) / 8), 256, 0, c->stream>>>(W, (__half *)c->qw16, n, k);
    HBC_TRY(HBC_LAUNCHED(c, "k_deq_f16"));
    const int64_t acount = (int64_t)m * k;
    int64_t g = (acount + 255) / 256;
    if (g > 65535) g = 65535;
    k_f32_to_f16<<<(unsigned)g, 256, 0, c->stream>>>(A, (__half *)c->qa16, acount);
    HBC_TRY(HBC_LAUNCHED(c, "k_f32_to_f16"));
    /* row-major C[m,n] = A W^T is column-major C^T[n,m] = W[n,k] (column-major k x n, transposed) x
     * A^T (column-major k x m) */
    const float alpha = 1.0f, beta = 0.0f;
    snprintf(c->last_qimpl, sizeof c->last_qimpl, "dequant_f16_%s+cublasGemmEx", F::name);
    snprintf(c->last_algo, sizeof c->last_algo,
             "%s (W dequantized to f16, A rounded to f16, CUBLAS_COMPUTE_32F, f32 output)", c->last_qimpl);
    return HBC_BLAS(c, cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, c->qw16, CUDA_R_16F, k, c->qa16,
                                    CUDA_R_16F, k, &beta, C, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* op dequantize: the n weights as one row of k = n */
template <class F>
hb_status run_deq(hbc_ctx *c, const uint8_t *W, float *Y, int n)
{
    const int64_t jobs = (n + F::CHW - 1) / F::CHW;
    k_deq<F, float><<<(unsigned)((jobs + 7) / 8), 256, 0, c->stream>>>(W, Y, 1, n);
    snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
    snprintf(c->last_qimpl, sizeof c->last_qimpl, "dequant_f32_%s", F::name);
    snprintf(c->last_algo, sizeof c->last_algo, "%s (a warp per chunk of the blocks)", c->last_qimpl);
    return HBC_LAUNCHED(c, "k_deq_f32");
}

} /* namespace */

const char *hbc_qmatmul_impl(int64_t m) { return m <= HBC_QGEMV_MAX_M ? "own-kernel" : "own-dequant+cublas"; }

hb_status hbc_dequant(hbc_ctx *c, hb_dtype dt, const void *W, void *Y, int64_t n)
{
    const int be = hb_quant_block_elems(dt);
    if (be <= 0 || n <= 0 || n % be || n > INT_MAX) return HB_EINVAL;
    c->last_qimpl[0] = 0;
    const uint8_t *w = (const uint8_t *)W;
    float *y = (float *)Y;
    switch (dt) {
    case HB_Q8_0: return run_deq<FmtQ8_0>(c, w, y, (int)n);
    case HB_Q4_K: return run_deq<FmtK45<false>>(c, w, y, (int)n);
    case HB_Q5_K: return run_deq<FmtK45<true>>(c, w, y, (int)n);
    case HB_Q6_K: return run_deq<FmtQ6>(c, w, y, (int)n);
    default: return HB_EINVAL;
    }
}

hb_status hbc_qmatmul(hbc_ctx *c, hb_dtype dt, const void *A, const void *W, void *C, int64_t m, int64_t n, int64_t k)
{
    const int be = hb_quant_block_elems(dt);
    if (be <= 0 || m <= 0 || n <= 0 || k <= 0 || k % be || m > INT_MAX || n > INT_MAX || k > INT_MAX) return HB_EINVAL;
    c->last_qimpl[0] = 0;
    const float *a = (const float *)A;
    const uint8_t *w = (const uint8_t *)W;
    float *o = (float *)C;
    switch (dt) {
    case HB_Q8_0: return run_fmt<FmtQ8_0>(c, a, w, o, (int)m, (int)n, (int)k);
    case HB_Q4_K: return run_fmt<FmtK45<false>>(c, a, w, o, (int)m, (int)n, (int)k);
    case HB_Q5_K: return run_fmt<FmtK45<true>>(c, a, w, o, (int)m, (int)n, (int)k);
    case HB_Q6_K: return run_fmt<FmtQ6>(c, a, w, o, (int)m, (int)n, (int)k);
    default: return HB_EINVAL;
    }
}
