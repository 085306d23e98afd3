/*
 * cuda_conv_gemm.cu - a pointwise convolution (1x1 window, stride 1, no padding, no dilation, one
 * group) as one cuBLAS gemm: a candidate that conv_choose_timed (cuda_conv_pool.cu) times beside
 * every cuDNN algorithm and engine, kept only when it is the fastest. A 1x1 convolution is a matrix
 * product over the channels (the "1x1 convolution = GEMM" identity that im2col-free frameworks use):
 *
 *   NHWC (layout=nhwc): y[b*h*w, oc] = x[b*h*w, c] . w[oc, c]^T      (w: KRSC [oc, 1, 1, c])
 *       column-major for cuBLAS: y^T (oc x bhw) = w (oc x c, op T of the c x oc view) . x^T (c x bhw)
 *   NCHW: per image n, y[n][oc, h*w] = w[oc, c] . x[n][c, h*w]        (w: KCRS [oc, c, 1, 1])
 *       column-major: y_n^T (hw x oc) = x_n^T (hw x c) . w^T (c x oc), batched over n with w's stride 0
 *
 * Compute types as the matmul family's (cuda_backend.cu gemm): f32 CUBLAS_COMPUTE_32F (no TF32; the
 * handle's math mode is CUBLAS_DEFAULT_MATH), tf32 CUBLAS_COMPUTE_32F_FAST_TF32, f16 and bf16 with f32
 * accumulation. cuBLAS chooses its kernel by its own heuristic (CUBLAS_GEMM_DEFAULT).
 */
#include "cuda/cuda_internal.h"

#include <limits.h>

bool hbc_conv_gemm_fits(const conv_p &p)
{
    if (p.kh != 1 || p.kw != 1 || p.sh != 1 || p.sw != 1 || p.ph != 0 || p.pw != 0 || p.dh != 1 || p.dw != 1 || p.g != 1)
        return false;
    if (p.oh != p.h || p.ow != p.w) return false;
    const long long rows = (long long)p.b * p.h * p.w;
    return rows <= INT_MAX && p.c <= INT_MAX && p.oc <= INT_MAX && (long long)p.h * p.w <= INT_MAX && p.b <= INT_MAX;
}

hb_status hbc_conv_gemm(hbc_ctx *c, hb_dtype dt, const conv_p &p, bool nhwc, const void *x, const void *w, void *y)
{
    if (!hbc_conv_gemm_fits(p)) return HB_ESKIP;
    const cudaDataType t = dt == HB_F16 ? CUDA_R_16F : dt == HB_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct = dt == HB_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float alpha = 1.0f, beta = 0.0f;
    const int oc = (int)p.oc, ch = (int)p.c;
    if (nhwc) {
        const int rows = (int)(p.b * p.h * p.w);
        return HBC_BLAS(c, cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, oc, rows, ch, &alpha, w, t, ch, x, t, ch, &beta, y, t,
                                        oc, ct, CUBLAS_GEMM_DEFAULT));
    }
    const int hw = (int)(p.h * p.w);
    return HBC_BLAS(c, cublasGemmStridedBatchedEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, hw, oc, ch, &alpha, x, t, hw,
                                                  (long long)ch * hw, w, t, ch, 0LL, &beta, y, t, hw, (long long)oc * hw,
                                                  (int)p.b, ct, CUBLAS_GEMM_DEFAULT));
}
