/*
 * cuda_attn_common.h - what the fused attention kernels share (cuda_attention.cu: the f16/bf16
 * tensor-core, f32 FFMA and split-key kernels; cuda_attn_tf32.cu: the f32 kernel on TF32 tensor
 * cores): the kernels' argument block (attn_args: pointers and element strides of the op's
 * layouts, harness/core/hybench.h), row addressing, the causal key bound, cp.async and ex2 wrappers,
 * and the dynamic shared-memory opt-in. Device code: included by .cu files only.
 */
#ifndef HB_CUDA_ATTN_COMMON_H
#define HB_CUDA_ATTN_COMMON_H
#include "cuda/cuda_internal.h"

namespace hbattn {

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* 2^x with the MUFU.EX2 instruction (ex2.approx.ftz: ~2 ulp; 2^-inf = 0), without exp2f's
 * denormal-range fix-up, which softmax does not need. */
__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

struct attn_args {
    const void *q, *k, *v;
    void *o;
    int heads, rep, seq, kvs, causal, off;
    float scale_log2;
    long long qb, qh, qr; /* element strides of q and o: batch, head, row (bhsd: h*s*d, s*d, d; bshd: s*h*d, d, h*d) */
    long long kb, kh, kr; /* the same for k and v */
};

/* First element of query/output row i of head h, batch b; of key/value row 0 of kv head g, batch b. */
__device__ __forceinline__ size_t qrow(const attn_args &a, int b, int h, long long i)
{
    return (size_t)(b * a.qb + h * a.qh + i * a.qr);
}
__device__ __forceinline__ size_t kvbase(const attn_args &a, int b, int g) { return (size_t)(b * a.kb + g * a.kh); }

/* Keys visible to the last query of rows [q0, q0 + rows) (causal), clamped to [0, kvs]. */
__device__ __forceinline__ int kv_end_for(const attn_args &a, int q_last)
{
    if (!a.causal) return a.kvs;
    long long e = (long long)q_last + a.off + 1;
    return e < 0 ? 0 : (e > a.kvs ? a.kvs : (int)e);
}

/* Opt a kernel into more than 48 KiB of dynamic shared memory (cudaFuncSetAttribute); errors as HBC_RT. */
template <typename K> hb_status set_smem(hbc_ctx *c, K kern, size_t bytes)
{
    if (bytes > 48 * 1024)
        return HBC_RT(c, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return HB_OK;
}

/* f32 attention on the TF32 tensor cores with f32 accuracy (3xTF32; cuda_attn_tf32.cu): a's
 * layouts and strides as hbc_attention fills them; head_dim 64 or 128 (HB_EINVAL otherwise), seq >= 1.
 * Enqueued on c->stream; sets c->last_impl and c->last_algo. Errors: HB_EINVAL, a launch failure. */
hb_status launch_tf32x3(hbc_ctx *c, const attn_args &a, int batch, int head_dim);

} // namespace hbattn
#endif
