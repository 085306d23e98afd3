/*
 * cuda_attn_tf32.cu - f32 attention on the TF32 tensor cores at f32 accuracy (3xTF32).
 *
 * The op, layouts and mask: cuda_attention.cu (hbc_attention fills attn_args). This kernel is the
 * f32 path on sm_80 and later; attn_simt (FFMA on the CUDA cores) stays for older devices and as
 * HB_CUDA_ATTN_F32=simt.
 *
 * Why: for f32 inputs PyTorch's scaled_dot_product_attention runs the memory-efficient kernel
 * (xformers' CUTLASS kernel), whose f32 products on sm80+ are OpMultiplyAddFastF32: each operand
 * x = big + small with big the TF32 rounding of x and small the rest (split, below), and a b =
 * big_a big_b + big_a small_b + small_a big_b (the small x small term, below 2^-22 relative, dropped),
 * three mma.sync per product on the tensor cores. The error stays near f32's (about 2^-20 to 2^-22
 * relative per product against TF32's 2^-11; the cases' rel_err equals the FFMA kernel's,
 * docs/backends.md), whatever torch.backends.cuda.matmul.allow_tf32 says, at about 3x the
 * tensor-core work of TF32 and well under the FFMA time: on the H100 machine the FFMA kernel took
 * 1.97x PyTorch's time at b4 h16 s1024 d128 (issue 33); this one 1.09x.
 *
 * Kernel attn_tf32x3<D, BN, DBUF, NW, CVT>: NW warps (4), 16 NW query rows per block (16 per warp),
 * key tiles of BN keys, with DBUF double-buffered (the next tile's cp.async in flight during this
 * tile's products; default: 32 keys, double-buffered, launch_tf32x3 says why), FlashAttention-2's
 * online softmax in base 2 with the scale folded into Q. Q, K and V tiles are f32 in shared memory
 * (cp.async), rows D + 4 floats apart,
 * which makes every fragment load below conflict-free (lanes (g, t) of a quad layout hit banks
 * 4g + t, or 8t + g for V). mma.sync.m16n8k8 with TF32 operands (PTX ISA, "Matrix fragments for
 * mma.m16n8k8", .tf32):
 *   A 16x8 row-major: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
 *   B 8x8: b0 (k=t, n=g), b1 (k=t+4, n=g);  C 16x8: c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1);
 * with g = lane / 4, t = lane % 4. S = Q K^T: A from Q's rows, B from K's rows (K^T's columns).
 * O += P V: P's A fragment comes from S's accumulators without shuffles by permuting the 8 keys of
 * each chunk: A's column t is key 2t and column t + 4 key 2t + 1 (so a0 = c0, a1 = c2, a2 = c1,
 * a3 = c3), and B's rows follow the same permutation (b0 = V[2t][g], b1 = V[2t + 1][g]): the sum
 * over the chunk's keys is the same.
 */
#include "cuda/cuda_attn_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace hbattn {
namespace {

__device__ __forceinline__ uint32_t to_tf32(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

/* x = big + small. CVT: both with cvt.rna.tf32.f32 (exact TF32 values). Otherwise as CUTLASS's
 * OpMultiplyAddFastF32 operands are made, without conversion instructions: big = x rounded to TF32 by
 * adding half a TF32 ulp to the bits and clearing the low 13 (round_half_ulp_truncate), small = x - big
 * (exact in f32) passed as it is: the tensor core reads a .tf32 operand's top 19 bits, so small is
 * truncated to TF32 (round_toward_zero) there. An integer add, a mask and a subtraction instead of
 * two conversions and a subtraction per operand, and every warp splits every K and V element it
 * reads. */
template <bool CVT> __device__ __forceinline__ void split(float x, uint32_t &big, uint32_t &small)
{
    if (CVT) {
        big = to_tf32(x);
        small = to_tf32(x - __uint_as_float(big));
    } else {
        big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
        small = __float_as_uint(x - __uint_as_float(big));
    }
}

__device__ __forceinline__ void mma_tf32(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* c += a b in 3xTF32, the small terms first (as CUTLASS orders them: they are added to c before the
 * large term, so less of them is lost to rounding) */
__device__ __forceinline__ void mma3(float c[4], const uint32_t ab[4], const uint32_t as[4], uint32_t bb0, uint32_t bb1,
                                     uint32_t bs0, uint32_t bs1)
{
    mma_tf32(c, as, bb0, bb1);
    mma_tf32(c, ab, bs0, bs1);
    mma_tf32(c, ab, bb0, bb1);
}

template <int D, int BN, bool DBUF, int NW, bool CVT>
__global__ void __launch_bounds__(NW * 32) attn_tf32x3(attn_args a)
{
    constexpr int BM = 16 * NW, NT = NW * 32, LD = D + 4, CH = D / 4; /* CH: 16-byte chunks per row */
    constexpr int KC = D / 8, NB = BN / 8, DB = D / 8;
    extern __shared__ float4 smem4[];
    float *Qs = reinterpret_cast<float *>(smem4); /* [BM][LD], multiplied by scale_log2 */
    float *const Ks0 = Qs + BM * LD;              /* [NBUF][BN][LD] */
    float *const Vs0 = Ks0 + (DBUF ? 2 : 1) * BN * LD; /* [NBUF][BN][LD] */

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
    const int h = blockIdx.y, b = blockIdx.z, q0 = blockIdx.x * BM;
    const int kh = h / a.rep;
    const float *Qg = (const float *)a.q + qrow(a, b, h, 0);
    const float *Kg = (const float *)a.k + kvbase(a, b, kh);
    const float *Vg = (const float *)a.v + kvbase(a, b, kh);
    float *Og = (float *)a.o + qrow(a, b, h, 0);

    const int q_last = min(q0 + BM, a.seq) - 1;
    const int kv_end = kv_end_for(a, q_last);
    const int ntiles = (kv_end + BN - 1) / BN;

    /* K and V tile t into buffer buf (rows past kvs zero-filled), one cp.async group */
    auto load_kv = [&](int t, int buf) {
        float *ks = Ks0 + buf * BN * LD, *vs = Vs0 + buf * BN * LD;
        const int k0 = t * BN;
        for (int i = tid; i < BN * CH; i += NT) {
            const int r = i / CH, ch = i % CH, gr = k0 + r;
            const size_t src = (size_t)min(gr, a.kvs - 1) * a.kr + ch * 4;
            const int nb = gr < a.kvs ? 16 : 0;
            cp_async16(&ks[r * LD + ch * 4], Kg + src, nb);
            cp_async16(&vs[r * LD + ch * 4], Vg + src, nb);
        }
        cp_async_commit();
    };

    /* Q tile (rows past seq zero-filled), then scaled in place; with DBUF the first K/V tile is
     * already on its way */
    for (int i = tid; i < BM * CH; i += NT) {
        const int r = i / CH, ch = i % CH, gr = q0 + r;
        cp_async16(&Qs[r * LD + ch * 4], Qg + (size_t)min(gr, a.seq - 1) * a.qr + ch * 4, gr < a.seq ? 16 : 0);
    }
    cp_async_commit();
    if (DBUF && ntiles > 0) load_kv(0, 0);
    else if (DBUF) cp_async_commit(); /* no key to load: an empty group, so that wait<1> covers Q */
    if (DBUF) cp_async_wait<1>(); else cp_async_wait<0>();
    __syncthreads();
    for (int i = tid; i < BM * D; i += NT) Qs[(i / D) * LD + i % D] *= a.scale_log2;

    float o[DB][4];
#pragma unroll
    for (int j = 0; j < DB; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f; /* rows g and g + 8: running max (log2), sum */
    const int wr = warp * 16, row0 = q0 + wr + g, row1 = row0 + 8;

    for (int t = 0; t < ntiles; t++) {
        const int k0 = t * BN;
        const float *Ks, *Vs;
        if (DBUF) {
            /* the buffer of tile t + 1 was last read in iteration t - 1, which ended with a barrier */
            if (t + 1 < ntiles) load_kv(t + 1, (t + 1) & 1);
            else cp_async_commit(); /* an empty group keeps the count of wait<1> */
            cp_async_wait<1>();
            __syncthreads(); /* tile t (and Q's scaling, at t = 0) visible to every warp */
            Ks = Ks0 + (t & 1) * BN * LD;
            Vs = Vs0 + (t & 1) * BN * LD;
        } else {
            __syncthreads(); /* the previous tile's reads are done (and Q's scaling, at t = 0) */
            load_kv(t, 0);
            cp_async_wait<0>();
            __syncthreads();
            Ks = Ks0;
            Vs = Vs0;
        }

        /* S = Q K^T (already in log2 units) */
        float s[NB][4];
#pragma unroll
        for (int j = 0; j < NB; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
        for (int kc = 0; kc < KC; kc++) {
            const float *q = Qs + (wr + g) * LD + kc * 8 + tq;
            uint32_t ab[4], as[4];
            split<CVT>(q[0], ab[0], as[0]);
            split<CVT>(q[8 * LD], ab[1], as[1]);
            split<CVT>(q[4], ab[2], as[2]);
            split<CVT>(q[8 * LD + 4], ab[3], as[3]);
#pragma unroll
            for (int j = 0; j < NB; j++) {
                const float *kp = Ks + (j * 8 + g) * LD + kc * 8 + tq;
                uint32_t bb0, bs0, bb1, bs1;
                split<CVT>(kp[0], bb0, bs0);
                split<CVT>(kp[4], bb1, bs1);
                mma3(s[j], ab, as, bb0, bb1, bs0, bs1);
            }
        }

        /* mask, online softmax (as attn_mma) */
        const bool need_mask = (k0 + BN > a.kvs) || (a.causal && k0 + BN - 1 > q0 + wr + a.off);
        float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
        for (int j = 0; j < NB; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                if (need_mask) {
                    const int key = k0 + j * 8 + tq * 2 + (e & 1);
                    const int row = e < 2 ? row0 : row1;
                    if (key >= a.kvs || (a.causal && key > row + a.off)) s[j][e] = -INFINITY;
                }
            }
            mx0 = fmaxf(mx0, fmaxf(s[j][0], s[j][1]));
            mx1 = fmaxf(mx1, fmaxf(s[j][2], s[j][3]));
        }
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
        const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
        const float base0 = n0 == -INFINITY ? 0.0f : n0, base1 = n1 == -INFINITY ? 0.0f : n1;
        const float al0 = ex2(m0 - base0), al1 = ex2(m1 - base1);
        m0 = n0;
        m1 = n1;
        float ps0 = 0.0f, ps1 = 0.0f;
#pragma unroll
        for (int j = 0; j < NB; j++) {
            s[j][0] = ex2(s[j][0] - base0);
            s[j][1] = ex2(s[j][1] - base0);
            s[j][2] = ex2(s[j][2] - base1);
            s[j][3] = ex2(s[j][3] - base1);
            ps0 += s[j][0] + s[j][1];
            ps1 += s[j][2] + s[j][3];
        }
        l0 = l0 * al0 + ps0;
        l1 = l1 * al1 + ps1;
#pragma unroll
        for (int j = 0; j < DB; j++) {
            o[j][0] *= al0; o[j][1] *= al0; o[j][2] *= al1; o[j][3] *= al1;
        }

        /* O += P V, keys permuted within each chunk of 8 (header) */
#pragma unroll
        for (int kk = 0; kk < NB; kk++) {
            uint32_t pb[4], ps[4];
            split<CVT>(s[kk][0], pb[0], ps[0]);
            split<CVT>(s[kk][2], pb[1], ps[1]);
            split<CVT>(s[kk][1], pb[2], ps[2]);
            split<CVT>(s[kk][3], pb[3], ps[3]);
            const float *vp = Vs + (kk * 8 + 2 * tq) * LD + g;
#pragma unroll
            for (int dn = 0; dn < DB; dn++) {
                uint32_t bb0, bs0, bb1, bs1;
                split<CVT>(vp[dn * 8], bb0, bs0);
                split<CVT>(vp[LD + dn * 8], bb1, bs1);
                mma3(o[dn], pb, ps, bb0, bb1, bs0, bs1);
            }
        }
        if (DBUF) __syncthreads(); /* every warp is done with buffer t & 1 before it is refilled */
    }
    if (DBUF) cp_async_wait<0>();

    /* row sums over the quad, normalise, store */
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float i0 = l0 > 0.0f ? 1.0f / l0 : 0.0f, i1 = l1 > 0.0f ? 1.0f / l1 : 0.0f;
#pragma unroll
    for (int j = 0; j < DB; j++) {
        const int col = j * 8 + tq * 2;
        if (row0 < a.seq) *reinterpret_cast<float2 *>(Og + (size_t)row0 * a.qr + col) = make_float2(o[j][0] * i0, o[j][1] * i0);
        if (row1 < a.seq) *reinterpret_cast<float2 *>(Og + (size_t)row1 * a.qr + col) = make_float2(o[j][2] * i1, o[j][3] * i1);
    }
}

template <int D, int BN, bool DBUF, int NW = 4, bool CVT = false> hb_status launch(hbc_ctx *c, const attn_args &a, int batch)
{
    constexpr int BM = 16 * NW, LD = D + 4;
    const size_t smem = (size_t)(BM + (DBUF ? 4 : 2) * BN) * LD * sizeof(float);
    HBC_TRY(set_smem(c, attn_tf32x3<D, BN, DBUF, NW, CVT>, smem));
    dim3 grid((unsigned)((a.seq + BM - 1) / BM), (unsigned)a.heads, (unsigned)batch);
    attn_tf32x3<D, BN, DBUF, NW, CVT><<<grid, NW * 32, smem, c->stream>>>(a);
    snprintf(c->last_impl, sizeof c->last_impl, "%s", hbc_attn_kernel_name(HBC_ATTN_FLASH_3XTF32));
    snprintf(c->last_algo, sizeof c->last_algo, "flash_mma_m16n8k8_3xtf32_d%d_n%d%s_w%d%s", D, BN, DBUF ? "_db" : "", NW,
             CVT ? "_cvt" : "");
    return HBC_LAUNCHED(c, "attn_tf32x3");
}

} // namespace

hb_status launch_tf32x3(hbc_ctx *c, const attn_args &a, int batch, int head_dim)
{
    /* Default: key tiles of 32, double-buffered. On the H100 machine (2026-11-27, one call, the 17 f32
     * attention cases of workloads/default.ini, tinyllama.ini and gpu.ini) it was the fastest of the
     * four variants in 13 of 17 cases: b1 h32 s128 d64 14.9 us against 17.0 (64 single-buffered, the
     * first version), b4 h16 s1024 d128 903 against 928, causal b8 s2048 3474 against 3655; the worst
     * against 64 single was b8 h32 s2048 d64, 6402 against 6182 us (+3.5%). (Those runs split with
     * cvt; with the split below, a later call: 8 warps for d128, 845 against 861 us, within 2%.)
     * HB_CUDA_ATTN_TF32=BN or BNd (32, 64, 32d, 64d: key tile, d = double-buffered) for measurements. */
    const char *e = hbc_cfg()->cuda_attn_tf32;
    const int bn = e && atoi(e) == 64 ? 64 : 32;
    const bool db = !e || !*e || strchr(e, 'd');
    if (e && !strcmp(e, "cvt")) /* the default variant with the operands split by cvt.rna (split) */
        return head_dim == 64 ? launch<64, 32, true, 4, true>(c, a, batch)
               : head_dim == 128 ? launch<128, 32, true, 4, true>(c, a, batch) : HB_EINVAL;
    if (head_dim == 64) {
        if (bn == 32) return db ? launch<64, 32, true>(c, a, batch) : launch<64, 32, false>(c, a, batch);
        return db ? launch<64, 64, true>(c, a, batch) : launch<64, 64, false>(c, a, batch);
    }
    if (head_dim == 128) {
        if (e && strchr(e, 'w')) return launch<128, 32, true, 8>(c, a, batch); /* e.g. 32dw8: 8 warps */
        if (bn == 32) return db ? launch<128, 32, true>(c, a, batch) : launch<128, 32, false>(c, a, batch);
        return db ? launch<128, 64, true>(c, a, batch) : launch<128, 64, false>(c, a, batch);
    }
    return HB_EINVAL;
}

} // namespace hbattn
