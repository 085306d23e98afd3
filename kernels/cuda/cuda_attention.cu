/*
 * cuda_attention.cu - fused attention o = softmax(q k^T / sqrt(d) + mask) v (layouts of hybench.h:
 * q[b,h,s,d], k,v[b,kvh,kvs,d], o[b,h,s,d], or with bshd q,o[b,s,h,d], k,v[b,kvs,kvh,d]: every
 * kernel addresses rows through the strides of attn_args; query head h reads kv head h / (heads/kvh);
 * causal: query i sees keys j <= i + (kvs - s); a row that sees no key gives 0, as kernels/cpu_ref).
 *
 * No kernel here writes the seq x seq score matrix to device memory: each block keeps a tile of
 * queries and streams key/value tiles through shared memory with the online softmax of
 * FlashAttention (Dao et al. 2022, "FlashAttention"; Dao 2023, "FlashAttention-2": running row max
 * m and sum l, O rescaled by exp(m_old - m_new) per tile). Softmax runs in base 2 with the scale
 * 1/sqrt(d) * log2(e) folded into the scores.
 *
 *  - attn_mma<T, D, NW, MT>: f16/bf16, head_dim 64 or 128. NW warps, 16*MT query rows per warp, key tiles
 *    of 64 double-buffered with cp.async; S = Q K^T and O += P V on the tensor cores with
 *    mma.sync.m16n8k16 (f32 accumulate), fragments loaded with ldmatrix from XOR-swizzled shared
 *    memory (conflict-free); P goes from the S accumulators to A fragments in registers.
 *  - attn_tf32x3 (cuda_attn_tf32.cu): f32, head_dim 64 or 128, on the TF32 tensor cores at f32
 *    accuracy (three TF32 products per f32 product); the default for f32 on sm_80 and later.
 *  - attn_simt<D>: f32, head_dim 64 or 128 (HB_CUDA_ATTN_F32=simt; before sm_80). 128 threads, 64
 *    queries x 64 keys per tile; S and P V as register-tiled FFMA products (8 rows x 4 columns per
 *    thread) from shared memory.
 *  - attn_split<T> + attn_combine<T>: any head_dim <= 256 and short query counts (decode): keys
 *    split over blocks (flash-decoding), per-block partial (max, sum, o) merged by a second kernel.
 */
#include "cuda/cuda_attn_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

using namespace hbattn;

__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(p)));
}

template <typename T> struct mma;
template <> struct mma<__half> {
    static __device__ __forceinline__ void run(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    }
};
template <> struct mma<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    }
};

/* ===================== tensor-core kernel (f16 / bf16) ===================== */
/* NW warps, each owning MT m16 tiles (16*MT query rows): every K/V fragment loaded from shared
 * memory with ldmatrix feeds MT mma.sync, so MT = 2 halves the shared-memory traffic per FLOP
 * (the limit at MT = 1: a warp reads the whole 64-key K and V tiles for only 16 rows). */
template <typename T, int D, int NW, int MT>
__global__ void __launch_bounds__(NW * 32) attn_mma(attn_args a)
{
    constexpr int BM = 16 * MT * NW, BN = 64, CH = D / 8, NT = NW * 32;
    constexpr int KC = D / 16;  /* k-chunks of the Q K^T product */
    constexpr int NB = BN / 8;  /* n-blocks of S */
    constexpr int DB = D / 8;   /* n-blocks of O */
    extern __shared__ uint4 smem[];
    uint4 *Qs = smem;              /* [BM][CH] */
    uint4 *Ks = Qs + BM * CH;      /* [2][BN][CH] */
    uint4 *Vs = Ks + 2 * BN * CH;  /* [2][BN][CH] */

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int h = blockIdx.y, b = blockIdx.z, q0 = blockIdx.x * BM;
    const int kh = h / a.rep;
    const T *Qg = (const T *)a.q + qrow(a, b, h, 0);
    const T *Kg = (const T *)a.k + kvbase(a, b, kh);
    const T *Vg = (const T *)a.v + kvbase(a, b, kh);
    T *Og = (T *)a.o + qrow(a, b, h, 0);

    const int q_last = min(q0 + BM, a.seq) - 1;
    const int kv_end = kv_end_for(a, q_last);
    const int ntiles = (kv_end + BN - 1) / BN;

    /* Q tile (rows past seq zero-filled) */
    for (int i = tid; i < BM * CH; i += NT) {
        const int r = i / CH, ch = i % CH, gr = q0 + r;
        cp_async16(&Qs[r * CH + (ch ^ (r & 7))], Qg + (size_t)min(gr, a.seq - 1) * a.qr + ch * 8, gr < a.seq ? 16 : 0);
    }
    auto load_kv = [&](int t, int buf) {
        uint4 *ks = Ks + buf * BN * CH, *vs = Vs + buf * BN * CH;
        const int k0 = t * BN;
        for (int i = tid; i < BN * CH; i += NT) {
            const int r = i / CH, ch = i % CH, gr = k0 + r;
            const size_t src = (size_t)min(gr, a.kvs - 1) * a.kr + ch * 8;
            const int nb = gr < a.kvs ? 16 : 0;
            cp_async16(&ks[r * CH + (ch ^ (r & 7))], Kg + src, nb);
            cp_async16(&vs[r * CH + (ch ^ (r & 7))], Vg + src, nb);
        }
    };
    if (ntiles > 0) load_kv(0, 0);
    cp_async_commit();

    float o[MT][DB][4];
    float mrow[MT][2], lrow[MT][2]; /* running max (log2 units) and partial sum of rows g, g + 8 */
    uint32_t qf[MT][KC][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int j = 0; j < DB; j++) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.0f;
        mrow[mt][0] = mrow[mt][1] = -INFINITY;
        lrow[mt][0] = lrow[mt][1] = 0.0f;
    }
    const int g = lane / 4, tq = lane % 4;
    const int wrow = q0 + warp * 16 * MT; /* first query row of this warp */

    for (int t = 0; t < ntiles; t++) {
        if (t + 1 < ntiles) load_kv(t + 1, (t + 1) & 1);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        if (t == 0) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int kc = 0; kc < KC; kc++) {
                    const int r = (warp * MT + mt) * 16 + (lane % 16), ch = kc * 2 + lane / 16;
                    ldsm_x4(qf[mt][kc], &Qs[r * CH + (ch ^ (r & 7))]);
                }
        }
        const uint4 *ks = Ks + (t & 1) * BN * CH, *vs = Vs + (t & 1) * BN * CH;
        float s[MT][NB][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < NB; j++) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
#pragma unroll
        for (int kc = 0; kc < KC; kc++) {
#pragma unroll
            for (int np = 0; np < NB / 2; np++) {
                uint32_t kb[4];
                const int r = np * 16 + (lane / 16) * 8 + (lane % 8), ch = kc * 2 + ((lane / 8) % 2);
                ldsm_x4(kb, &ks[r * CH + (ch ^ (r & 7))]);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma<T>::run(s[mt][2 * np], qf[mt][kc], kb[0], kb[1]);
                    mma<T>::run(s[mt][2 * np + 1], qf[mt][kc], kb[2], kb[3]);
                }
            }
        }
        const int k0 = t * BN;
        const bool need_mask = (k0 + BN > a.kvs) || (a.causal && k0 + BN - 1 > wrow + a.off);
        uint32_t pf[MT][NB / 2][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            const int row0 = wrow + mt * 16 + g, row1 = row0 + 8;
            /* mask; the max is taken on raw scores (the scale is positive) */
            float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
            for (int j = 0; j < NB; j++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    if (need_mask) {
                        const int key = k0 + j * 8 + tq * 2 + (e & 1);
                        const int row = e < 2 ? row0 : row1;
                        if (key >= a.kvs || (a.causal && key > row + a.off)) s[mt][j][e] = -INFINITY;
                    }
                }
                mx0 = fmaxf(mx0, fmaxf(s[mt][j][0], s[mt][j][1]));
                mx1 = fmaxf(mx1, fmaxf(s[mt][j][2], s[mt][j][3]));
            }
            mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
            mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
            mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
            mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
            const float n0 = fmaxf(mrow[mt][0], mx0 * a.scale_log2), n1 = fmaxf(mrow[mt][1], mx1 * a.scale_log2);
            const float base0 = n0 == -INFINITY ? 0.0f : n0, base1 = n1 == -INFINITY ? 0.0f : n1;
            const float al0 = ex2(mrow[mt][0] - base0), al1 = ex2(mrow[mt][1] - base1);
            mrow[mt][0] = n0;
            mrow[mt][1] = n1;
            float ps0 = 0.0f, ps1 = 0.0f;
#pragma unroll
            for (int j = 0; j < NB; j++) {
                const float p0 = ex2(fmaf(s[mt][j][0], a.scale_log2, -base0)), p1 = ex2(fmaf(s[mt][j][1], a.scale_log2, -base0));
                const float p2 = ex2(fmaf(s[mt][j][2], a.scale_log2, -base1)), p3 = ex2(fmaf(s[mt][j][3], a.scale_log2, -base1));
                ps0 += p0 + p1;
                ps1 += p2 + p3;
                pf[mt][j / 2][(j & 1) * 2 + 0] = mma<T>::pack(p0, p1);
                pf[mt][j / 2][(j & 1) * 2 + 1] = mma<T>::pack(p2, p3);
            }
            lrow[mt][0] = lrow[mt][0] * al0 + ps0;
            lrow[mt][1] = lrow[mt][1] * al1 + ps1;
#pragma unroll
            for (int j = 0; j < DB; j++) {
                o[mt][j][0] *= al0; o[mt][j][1] *= al0; o[mt][j][2] *= al1; o[mt][j][3] *= al1;
            }
        }
        /* O += P V */
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
#pragma unroll
            for (int dp = 0; dp < DB / 2; dp++) {
                uint32_t vb[4];
                const int r = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8, ch = dp * 2 + lane / 16;
                ldsm_x4_t(vb, &vs[r * CH + (ch ^ (r & 7))]);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma<T>::run(o[mt][2 * dp], pf[mt][kk], vb[0], vb[1]);
                    mma<T>::run(o[mt][2 * dp + 1], pf[mt][kk], vb[2], vb[3]);
                }
            }
        }
        __syncthreads();
    }
    cp_async_wait<0>();
    /* row sums over the quad, normalize, store */
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
        float l0 = lrow[mt][0], l1 = lrow[mt][1];
        l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
        l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
        l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
        l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
        const float i0 = l0 > 0.0f ? 1.0f / l0 : 0.0f, i1 = l1 > 0.0f ? 1.0f / l1 : 0.0f;
        const int row0 = wrow + mt * 16 + g, row1 = row0 + 8;
#pragma unroll
        for (int j = 0; j < DB; j++) {
            const int col = j * 8 + tq * 2;
            if (row0 < a.seq) *reinterpret_cast<uint32_t *>(Og + (size_t)row0 * a.qr + col) = mma<T>::pack(o[mt][j][0] * i0, o[mt][j][1] * i0);
            if (row1 < a.seq) *reinterpret_cast<uint32_t *>(Og + (size_t)row1 * a.qr + col) = mma<T>::pack(o[mt][j][2] * i1, o[mt][j][3] * i1);
        }
    }
}

/* ===================== f32 FFMA kernel ===================== */
/* 128 threads = 8 (ty) x 16 (tx). Thread (ty, tx) owns S rows ty*8..+7, columns tx*4..+3, and O rows
 * ty*8..+7, columns tx*4 + 64*c (c < D/64). The 16 threads of one row group are one half warp, so row
 * maxima reduce with shuffles over lane bits 0..3. */
template <int D>
__global__ void __launch_bounds__(128) attn_simt(attn_args a)
{
    constexpr int BM = 64, BN = 64, PAD = 4, LD = BM + PAD, DC = D / 64;
    extern __shared__ float4 smem4[];
    float *Qt = reinterpret_cast<float *>(smem4); /* [D][LD]   q transposed, pre-scaled */
    float *Kt = Qt + D * LD;                      /* [D][LD]   k transposed */
    float *Vs = Kt + D * LD;                      /* [BN][D]   v */
    float *Pt = Vs + BN * D;                      /* [BN][LD]  p transposed */
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    const int h = blockIdx.y, b = blockIdx.z, q0 = blockIdx.x * BM;
    const int kh = h / a.rep;
    const float *Qg = (const float *)a.q + qrow(a, b, h, 0);
    const float *Kg = (const float *)a.k + kvbase(a, b, kh);
    const float *Vg = (const float *)a.v + kvbase(a, b, kh);
    float *Og = (float *)a.o + qrow(a, b, h, 0);
    const int q_last = min(q0 + BM, a.seq) - 1;
    const int kv_end = kv_end_for(a, q_last);
    const int ntiles = (kv_end + BN - 1) / BN;

    /* Q transposed: thread i reads row (i % 64), float4 column (i / 64); consecutive lanes write
     * consecutive rows -> conflict-free stores. */
    for (int i = tid; i < BM * (D / 4); i += 128) {
        const int r = i % BM, c4 = i / BM, gr = q0 + r;
        float4 v = gr < a.seq ? *reinterpret_cast<const float4 *>(Qg + (size_t)gr * a.qr + c4 * 4) : make_float4(0, 0, 0, 0);
        Qt[(c4 * 4 + 0) * LD + r] = v.x * a.scale_log2;
        Qt[(c4 * 4 + 1) * LD + r] = v.y * a.scale_log2;
        Qt[(c4 * 4 + 2) * LD + r] = v.z * a.scale_log2;
        Qt[(c4 * 4 + 3) * LD + r] = v.w * a.scale_log2;
    }
    float o[8][4 * DC];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 4 * DC; j++) o[i][j] = 0.0f;
    float m[8], l[8];
#pragma unroll
    for (int i = 0; i < 8; i++) { m[i] = -INFINITY; l[i] = 0.0f; }

    for (int t = 0; t < ntiles; t++) {
        const int k0 = t * BN;
        __syncthreads(); /* previous tile's Kt/Vs/Pt reads are done */
        for (int i = tid; i < BN * (D / 4); i += 128) {
            const int r = i % BN, c4 = i / BN, gr = k0 + r;
            float4 v = gr < a.kvs ? *reinterpret_cast<const float4 *>(Kg + (size_t)gr * a.kr + c4 * 4) : make_float4(0, 0, 0, 0);
            Kt[(c4 * 4 + 0) * LD + r] = v.x;
            Kt[(c4 * 4 + 1) * LD + r] = v.y;
            Kt[(c4 * 4 + 2) * LD + r] = v.z;
            Kt[(c4 * 4 + 3) * LD + r] = v.w;
        }
        for (int i = tid; i < BN * (D / 4); i += 128) {
            const int r = i / (D / 4), c4 = i % (D / 4), gr = k0 + r;
            float4 v = gr < a.kvs ? *reinterpret_cast<const float4 *>(Vg + (size_t)gr * a.kr + c4 * 4) : make_float4(0, 0, 0, 0);
            *reinterpret_cast<float4 *>(&Vs[r * D + c4 * 4]) = v;
        }
        __syncthreads();
        float s[8][4];
#pragma unroll
        for (int i = 0; i < 8; i++) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll 8
        for (int d = 0; d < D; d++) {
            const float4 qa = *reinterpret_cast<const float4 *>(&Qt[d * LD + ty * 8]);
            const float4 qb = *reinterpret_cast<const float4 *>(&Qt[d * LD + ty * 8 + 4]);
            const float4 kv = *reinterpret_cast<const float4 *>(&Kt[d * LD + tx * 4]);
            const float qr[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
            const float kr[4] = {kv.x, kv.y, kv.z, kv.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) s[i][j] = fmaf(qr[i], kr[j], s[i][j]);
        }
        const bool need_mask = (k0 + BN > a.kvs) || (a.causal && k0 + BN - 1 > q0 + a.off);
        float alpha[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int row = q0 + ty * 8 + i;
            float mx = m[i];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (need_mask) {
                    const int key = k0 + tx * 4 + j;
                    if (key >= a.kvs || (a.causal && key > row + a.off)) s[i][j] = -INFINITY;
                }
                mx = fmaxf(mx, s[i][j]);
            }
#pragma unroll
            for (int o2 = 1; o2 < 16; o2 <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o2));
            const float base = mx == -INFINITY ? 0.0f : mx;
            alpha[i] = exp2f(m[i] - base);
            m[i] = mx;
            float ps = 0.0f;
#pragma unroll
            for (int j = 0; j < 4; j++) { s[i][j] = exp2f(s[i][j] - base); ps += s[i][j]; }
            l[i] = l[i] * alpha[i] + ps; /* this thread's partial row sum; reduced at the end */
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            *reinterpret_cast<float4 *>(&Pt[(tx * 4 + j) * LD + ty * 8]) = make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);
            *reinterpret_cast<float4 *>(&Pt[(tx * 4 + j) * LD + ty * 8 + 4]) = make_float4(s[4][j], s[5][j], s[6][j], s[7][j]);
        }
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < 4 * DC; j++) o[i][j] *= alpha[i];
        __syncthreads();
#pragma unroll 4
        for (int kk = 0; kk < BN; kk++) {
            const float4 pa = *reinterpret_cast<const float4 *>(&Pt[kk * LD + ty * 8]);
            const float4 pb = *reinterpret_cast<const float4 *>(&Pt[kk * LD + ty * 8 + 4]);
            const float pr[8] = {pa.x, pa.y, pa.z, pa.w, pb.x, pb.y, pb.z, pb.w};
#pragma unroll
            for (int c = 0; c < DC; c++) {
                const float4 vv = *reinterpret_cast<const float4 *>(&Vs[kk * D + c * 64 + tx * 4]);
                const float vr[4] = {vv.x, vv.y, vv.z, vv.w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++) o[i][c * 4 + j] = fmaf(pr[i], vr[j], o[i][c * 4 + j]);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        float li = l[i];
#pragma unroll
        for (int o2 = 1; o2 < 16; o2 <<= 1) li += __shfl_xor_sync(0xffffffffu, li, o2);
        const int row = q0 + ty * 8 + i;
        const float inv = li > 0.0f ? 1.0f / li : 0.0f;
        if (row < a.seq) {
#pragma unroll
            for (int c = 0; c < DC; c++)
                *reinterpret_cast<float4 *>(Og + (size_t)row * a.qr + c * 64 + tx * 4) =
                    make_float4(o[i][c * 4 + 0] * inv, o[i][c * 4 + 1] * inv, o[i][c * 4 + 2] * inv, o[i][c * 4 + 3] * inv);
        }
    }
}

/* ===================== generic kernel: split over keys ===================== */
template <typename T> __device__ __forceinline__ float ldf(const T *p);
template <> __device__ __forceinline__ float ldf<float>(const float *p) { return *p; }
template <> __device__ __forceinline__ float ldf<__half>(const __half *p) { return __half2float(*p); }
template <> __device__ __forceinline__ float ldf<__nv_bfloat16>(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
template <typename T> __device__ __forceinline__ T stf(float v);
template <> __device__ __forceinline__ float stf<float>(float v) { return v; }
template <> __device__ __forceinline__ __half stf<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 stf<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* Block (s, r): query row r (over batch*heads*seq), keys [s*chunk, min((s+1)*chunk, visible)).
 * 4 warps take groups of 4 consecutive keys round-robin; lanes split head_dim (<= 256, 8 per lane);
 * per group: 4 independent dot products reduced with shuffles, one online-softmax update. The 4
 * warps' (m, l, o) are merged in shared memory; with nsplit == 1 the block writes o, else the
 * partial (m, l, o[0..D-1]) goes to part[(r * nsplit + s) * (D + 2)] for attn_combine. */
template <typename T>
__global__ void __launch_bounds__(128) attn_split(attn_args a, int D, int chunk, int nsplit, float *__restrict__ part)
{
    constexpr int MAXPL = 8, KG = 4;
    __shared__ float sm_m[4], sm_l[4];
    __shared__ float sm_o[4][256];
    const long long blk = blockIdx.x;
    const int s = (int)(blk % nsplit);
    const long long r = blk / nsplit;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int i = (int)(r % a.seq);
    const long long bh = r / a.seq;
    const int h = (int)(bh % a.heads), b = (int)(bh / a.heads);
    const int kh = h / a.rep;
    const T *q = (const T *)a.q + qrow(a, b, h, i);
    const T *K = (const T *)a.k + kvbase(a, b, kh);
    const T *V = (const T *)a.v + kvbase(a, b, kh);
    int nk = a.kvs;
    if (a.causal) {
        long long lim = (long long)i + a.off + 1;
        nk = lim < 0 ? 0 : (lim > a.kvs ? a.kvs : (int)lim);
    }
    const int k_lo = s * chunk, k_hi = min(nk, k_lo + chunk);
    float qr[MAXPL], acc[MAXPL];
#pragma unroll
    for (int u = 0; u < MAXPL; u++) {
        const int d = lane + 32 * u;
        qr[u] = d < D ? ldf<T>(q + d) * a.scale_log2 : 0.0f;
        acc[u] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (int g0 = k_lo + warp * KG; g0 < k_hi; g0 += 4 * KG) {
        float dot[KG];
#pragma unroll
        for (int e = 0; e < KG; e++) {
            dot[e] = 0.0f;
            const int j = g0 + e;
            if (j < k_hi) {
#pragma unroll
                for (int u = 0; u < MAXPL; u++) {
                    const int d = lane + 32 * u;
                    if (d < D) dot[e] = fmaf(qr[u], ldf<T>(K + (size_t)j * a.kr + d), dot[e]);
                }
            }
        }
#pragma unroll
        for (int o2 = 16; o2 > 0; o2 >>= 1)
#pragma unroll
            for (int e = 0; e < KG; e++) dot[e] += __shfl_xor_sync(0xffffffffu, dot[e], o2);
        float mx = m;
#pragma unroll
        for (int e = 0; e < KG; e++) {
            if (g0 + e >= k_hi) dot[e] = -INFINITY;
            mx = fmaxf(mx, dot[e]);
        }
        const float al = exp2f(m - mx); /* mx is finite: key g0 < k_hi exists */
        float p[KG];
#pragma unroll
        for (int e = 0; e < KG; e++) { p[e] = exp2f(dot[e] - mx); }
        l = l * al + p[0] + p[1] + p[2] + p[3];
#pragma unroll
        for (int u = 0; u < MAXPL; u++) {
            const int d = lane + 32 * u;
            if (d < D) {
                float x = acc[u] * al;
#pragma unroll
                for (int e = 0; e < KG; e++)
                    if (g0 + e < k_hi) x = fmaf(p[e], ldf<T>(V + (size_t)(g0 + e) * a.kr + d), x);
                acc[u] = x;
            }
        }
        m = mx;
    }
    if (lane == 0) { sm_m[warp] = m; sm_l[warp] = l; }
#pragma unroll
    for (int u = 0; u < MAXPL; u++) {
        const int d = lane + 32 * u;
        if (d < D) sm_o[warp][d] = acc[u];
    }
    __syncthreads();
    float M = fmaxf(fmaxf(sm_m[0], sm_m[1]), fmaxf(sm_m[2], sm_m[3]));
    const float base = M == -INFINITY ? 0.0f : M;
    float sc[4], L = 0.0f;
#pragma unroll
    for (int w = 0; w < 4; w++) { sc[w] = exp2f(sm_m[w] - base); L += sm_l[w] * sc[w]; }
    for (int d = threadIdx.x; d < D; d += 128) {
        const float O = sm_o[0][d] * sc[0] + sm_o[1][d] * sc[1] + sm_o[2][d] * sc[2] + sm_o[3][d] * sc[3];
        if (nsplit == 1) ((T *)a.o)[qrow(a, b, h, i) + d] = stf<T>(L > 0.0f ? O / L : 0.0f);
        else part[(size_t)blk * (D + 2) + 2 + d] = O;
    }
    if (nsplit > 1 && threadIdx.x == 0) {
        part[(size_t)blk * (D + 2)] = M;
        part[(size_t)blk * (D + 2) + 1] = L;
    }
}

/* One warp per row r (over batch*heads*seq, as attn_split): merge the nsplit partials (m, l, o). */
template <typename T>
__global__ void __launch_bounds__(256) attn_combine(const float *__restrict__ part, attn_args a, long long rows, int D,
                                                    int nsplit)
{
    const long long r = (long long)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const long long bh = r / a.seq;
    T *o = (T *)a.o + qrow(a, (int)(bh / a.heads), (int)(bh % a.heads), r % a.seq);
    const float *p = part + (size_t)r * nsplit * (D + 2);
    float M = -INFINITY;
    for (int s = 0; s < nsplit; s++) M = fmaxf(M, p[(size_t)s * (D + 2)]);
    const float base = M == -INFINITY ? 0.0f : M;
    float L = 0.0f;
    for (int s = 0; s < nsplit; s++) L += p[(size_t)s * (D + 2) + 1] * exp2f(p[(size_t)s * (D + 2)] - base);
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;
    for (int d = lane; d < D; d += 32) {
        float O = 0.0f;
        for (int s = 0; s < nsplit; s++) O += p[(size_t)s * (D + 2) + 2 + d] * exp2f(p[(size_t)s * (D + 2)] - base);
        o[d] = stf<T>(O * inv);
    }
}

template <typename T, int D, int NW, int MT> hb_status launch_mma(hbc_ctx *c, const attn_args &a, int batch)
{
    constexpr int BM = 16 * MT * NW, BN = 64;
    const size_t smem = (size_t)(BM + 4 * BN) * D * sizeof(T);
    HBC_TRY(set_smem(c, attn_mma<T, D, NW, MT>, smem));
    dim3 grid((unsigned)((a.seq + BM - 1) / BM), (unsigned)a.heads, (unsigned)batch);
    attn_mma<T, D, NW, MT><<<grid, NW * 32, smem, c->stream>>>(a);
    snprintf(c->last_impl, sizeof c->last_impl, "%s", hbc_attn_kernel_name(HBC_ATTN_FLASH));
    snprintf(c->last_algo, sizeof c->last_algo, "flash_mma_m16n8k16_d%d_w%d_m%d", D, NW, 16 * MT);
    return HBC_LAUNCHED(c, "attn_mma");
}

/* f16/bf16: head_dim 64 takes 32 rows per warp (MT = 2; HB_CUDA_ATTN_MT=1 for 16), head_dim 128 16
 * rows per warp (its accumulators would not fit twice in registers); HB_CUDA_ATTN_WARPS=8 for 8 warps. */
template <typename T> hb_status launch_mma_for(hbc_ctx *c, const attn_args &a, int batch, int hd, int nw, int mt)
{
    if (hd == 64) {
        if (mt == 1) return nw == 8 ? launch_mma<T, 64, 8, 1>(c, a, batch) : launch_mma<T, 64, 4, 1>(c, a, batch);
        return nw == 8 ? launch_mma<T, 64, 8, 2>(c, a, batch) : launch_mma<T, 64, 4, 2>(c, a, batch);
    }
    return nw == 8 ? launch_mma<T, 128, 8, 1>(c, a, batch) : launch_mma<T, 128, 4, 1>(c, a, batch);
}

template <int D> hb_status launch_simt(hbc_ctx *c, const attn_args &a, int batch)
{
    constexpr int BM = 64, BN = 64, LD = BM + 4;
    const size_t smem = (size_t)(2 * D * LD + BN * D + BN * LD) * sizeof(float);
    HBC_TRY(set_smem(c, attn_simt<D>, smem));
    dim3 grid((unsigned)((a.seq + BM - 1) / BM), (unsigned)a.heads, (unsigned)batch);
    attn_simt<D><<<grid, 128, smem, c->stream>>>(a);
    snprintf(c->last_impl, sizeof c->last_impl, "%s", hbc_attn_kernel_name(HBC_ATTN_FLASH));
    snprintf(c->last_algo, sizeof c->last_algo, "flash_ffma_f32_d%d", D);
    return HBC_LAUNCHED(c, "attn_simt");
}

/* Split the keys so that the grid has about 16 blocks per SM, each at least 64 keys. */
template <typename T> hb_status launch_split(hbc_ctx *c, const attn_args &a, int D, long long rows)
{
    const long long want = 16LL * c->prop.multiProcessorCount;
    long long nsplit = (want + rows - 1) / rows;
    const long long max_split = (a.kvs + 63) / 64;
    if (nsplit > max_split) nsplit = max_split;
    if (nsplit < 1) nsplit = 1;
    const int chunk = (int)((a.kvs + nsplit - 1) / nsplit);
    nsplit = (a.kvs + chunk - 1) / chunk;
    if (rows * nsplit > 0x7fffffffLL) return HB_EINVAL;
    float *part = nullptr;
    if (nsplit > 1) {
        HBC_TRY(hbc_grow(c, &c->scratch, &c->scratch_bytes, (size_t)(rows * nsplit) * (size_t)(D + 2) * sizeof(float)));
        part = (float *)c->scratch;
    }
    attn_split<T><<<(unsigned)(rows * nsplit), 128, 0, c->stream>>>(a, D, chunk, (int)nsplit, part);
    HBC_TRY(HBC_LAUNCHED(c, "attn_split"));
    if (nsplit > 1) {
        attn_combine<T><<<(unsigned)((rows + 7) / 8), 256, 0, c->stream>>>(part, a, rows, D, (int)nsplit);
        HBC_TRY(HBC_LAUNCHED(c, "attn_combine"));
    }
    snprintf(c->last_impl, sizeof c->last_impl, "%s", hbc_attn_kernel_name(HBC_ATTN_SPLIT));
    snprintf(c->last_algo, sizeof c->last_algo, "attn_split_kv(%lld splits)", nsplit);
    return HB_OK;
}

/* A setting's text s (core/config.h; NULL: unset) as an integer, else dflt. */
int cfg_int(const char *s, int dflt)
{
    return (s && *s) ? atoi(s) : dflt;
}

} // namespace

hbc_attn_kernel hbc_attn_kernel_for(const hbc_ctx *c, hb_dtype dt, int64_t hd, int64_t seq)
{
    /* HB_CUDA_ATTN=split forces the generic kernel (tests) */
    const char *force = hbc_cfg()->cuda_attn;
    const bool fused_ok = (hd == 64 || hd == 128) && seq >= 16 && !(force && !strcmp(force, "split"));
    if (!fused_ok) return HBC_ATTN_SPLIT;
    /* f32: 3xTF32 on the tensor cores from sm_80 on (cuda_attn_tf32.cu); HB_CUDA_ATTN_F32=simt keeps FFMA */
    const char *f32k = hbc_cfg()->cuda_attn_f32;
    if (dt == HB_F32 && c->prop.major >= 8 && !(f32k && !strcmp(f32k, "simt"))) return HBC_ATTN_FLASH_3XTF32;
    return HBC_ATTN_FLASH;
}

const char *hbc_attn_kernel_name(hbc_attn_kernel k)
{
    return k == HBC_ATTN_FLASH_3XTF32 ? "own-flash-3xtf32" : k == HBC_ATTN_FLASH ? "own-flash" : "own-split-kv";
}

hb_status hbc_attention(hbc_ctx *c, hb_dtype dt, const void *q, const void *k, const void *v, void *o, int64_t batch,
                        int64_t heads, int64_t kvh, int64_t seq, int64_t kvs, int64_t hd, int causal, int bshd)
{
    if (dt == HB_TF32) return HB_ESKIP;
    if (batch <= 0 || heads <= 0 || kvh <= 0 || heads % kvh || seq <= 0 || kvs <= 0 || hd <= 0) return HB_EINVAL;
    if (hd > 256) return HB_ESKIP;
    if (heads > 65535 || batch > 65535 || seq > 0x7fffffff / 2 || kvs > 0x7fffffff / 2) return HB_EINVAL;
    attn_args a;
    a.q = q; a.k = k; a.v = v; a.o = o;
    a.heads = (int)heads; a.rep = (int)(heads / kvh); a.seq = (int)seq; a.kvs = (int)kvs;
    a.causal = causal != 0; a.off = (int)(kvs - seq);
    a.scale_log2 = (float)(1.0 / sqrt((double)hd)) * kLog2e;
    if (bshd) {
        a.qb = seq * heads * hd; a.qh = hd; a.qr = heads * hd;
        a.kb = kvs * kvh * hd; a.kh = hd; a.kr = kvh * hd;
    } else {
        a.qb = heads * seq * hd; a.qh = seq * hd; a.qr = hd;
        a.kb = kvh * kvs * hd; a.kh = kvs * hd; a.kr = hd;
    }
    const long long rows = (long long)batch * heads * seq;
    /* which kernel: hbc_attn_kernel_for; HB_CUDA_ATTN_WARPS=4|8 picks the tensor-core kernel's query
     * tile (64 or 128 rows) */
    const hbc_attn_kernel kern = hbc_attn_kernel_for(c, dt, hd, seq);
    const bool fused_ok = kern != HBC_ATTN_SPLIT;
    const int nw = cfg_int(hbc_cfg()->cuda_attn_warps, 4) == 8 ? 8 : 4;
    if (dt == HB_F32) {
        if (kern == HBC_ATTN_FLASH_3XTF32) return launch_tf32x3(c, a, (int)batch, (int)hd);
        if (fused_ok) return hd == 64 ? launch_simt<64>(c, a, (int)batch) : launch_simt<128>(c, a, (int)batch);
        return launch_split<float>(c, a, (int)hd, rows);
    }
    const int mt = cfg_int(hbc_cfg()->cuda_attn_mt, 2) == 1 ? 1 : 2;
    if (dt == HB_F16) {
        if (fused_ok) return launch_mma_for<__half>(c, a, (int)batch, (int)hd, nw, mt);
        return launch_split<__half>(c, a, (int)hd, rows);
    }
    if (fused_ok) return launch_mma_for<__nv_bfloat16>(c, a, (int)batch, (int)hd, nw, mt);
    return launch_split<__nv_bfloat16>(c, a, (int)hd, rows);
}
