/*
 * cuda_transpose.cu - batched matrix transpose for the NHWC convolution pipeline (cuda_conv_pool.cu's
 * conv_exec_nhwc): src [nb][rows][cols] -> dst [nb][cols][rows], elements of esize 2 or 4 bytes (moved
 * as raw bits). NCHW -> NHWC is rows = C, cols = H*W; NHWC -> NCHW is rows = H*W, cols = C.
 * 32x32 tiles through shared memory (one padding column against bank conflicts), 32x8 threads, each
 * thread moving 4 elements: reads and writes both run along the fastest index (the classic
 * shared-memory transpose; NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++"). Measured against
 * cudnnTransformTensor by the conv choice itself (both pipelines are timed).
 */
#include <stdint.h>
#include "cuda_internal.h"

namespace {
template <typename T>
__global__ void k_transpose(const T *__restrict__ src, T *__restrict__ dst, int rows, int cols)
{
    __shared__ T tile[32][33];
    const size_t mat = (size_t)rows * cols * blockIdx.z;
    const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int r = r0 + j, cc = c0 + threadIdx.x;
        if (r < rows && cc < cols) tile[j][threadIdx.x] = src[mat + (size_t)r * cols + cc];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int cc = c0 + j, r = r0 + threadIdx.x;
        if (r < rows && cc < cols) dst[mat + (size_t)cc * rows + r] = tile[threadIdx.x][j];
    }
}
} // namespace

/* Enqueue the transpose on c->stream (no synchronization). HB_ESKIP when the grid limits (65535
 * row tiles or matrices) or the element size do not fit, so the caller uses cudnnTransformTensor. */
hb_status hbc_transpose_batched(hbc_ctx *c, size_t esize, const void *src, void *dst, int64_t nb, int64_t rows,
                                int64_t cols)
{
    if (nb <= 0 || rows <= 0 || cols <= 0) return HB_EINVAL;
    const int64_t gx = (cols + 31) / 32, gy = (rows + 31) / 32;
    if (gx > 0x7fffffff || gy > 65535 || nb > 65535 || rows > 0x7fffffff || cols > 0x7fffffff) return HB_ESKIP;
    dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)nb), block(32, 8);
    if (esize == 2)
        k_transpose<uint16_t><<<grid, block, 0, c->stream>>>((const uint16_t *)src, (uint16_t *)dst, (int)rows, (int)cols);
    else if (esize == 4)
        k_transpose<uint32_t><<<grid, block, 0, c->stream>>>((const uint32_t *)src, (uint32_t *)dst, (int)rows, (int)cols);
    else
        return HB_ESKIP;
    return HBC_LAUNCHED(c, "k_transpose");
}
