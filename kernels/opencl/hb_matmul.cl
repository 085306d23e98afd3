/*
 * hb_matmul.cl - the backend's own GEMM kernels (used when CLBlast is absent, disabled, or not the
 * better choice on this device; see ocl_matmul.c). C[b] = A[b] x B[b], row-major, for b < batch:
 *   A[b] at A + a_off + b*a_stride, element (i,k) at i*lda + k     (M x K)
 *   B[b] at B + b_off + b*b_stride, element (k,j) at k*ldb + j     (K x N)
 *   C[b] at C + c_off + b*c_stride, element (i,j) at i*ldc + j     (M x N), overwritten
 * Offsets, strides and leading dimensions are in elements. Accumulation is f32 (also for f16 storage).
 */
#define HB_MM_ARGS                                                                  \
    __global const TS *A, ulong a_off, int lda, ulong a_stride,                     \
    __global const TS *B, ulong b_off, int ldb, ulong b_stride,                     \
    __global TS *C, ulong c_off, int ldc, ulong c_stride, int M, int N, int K

/* CPU style: work-item (gid0, gid1, gid2) computes the RM x (16*NV) block of C at rows RM*gid0,
 * columns 16*NV*gid1 of batch gid2 with RM*NV float16 accumulators in registers (a register-blocked
 * outer-product kernel, the micro-kernel scheme of GotoBLAS/BLIS without packing), over the
 * k-block [k0, k0+kb): C = A B restricted to it, plus C's previous value when acc_in is 1 (the host
 * splits long K into blocks of 512 so that the A rows and the B panel of a block stay in L1/L2).
 * Rows past M are clamped (computed, not stored). A block with fewer than 16*NV columns goes 16
 * columns at a time, then column by column. f16 rows of B and C take the vector built-ins only
 * when all are 16-byte aligned (va; see HB_ALIGNED in hb_common.cl).
 *   hb_mm_cpu     RM 8, NV 2 (8 x 32: 16 accumulators, 8 broadcasts of A per 2 loads of B)
 * (m == 1 takes hb_gemv_part/hb_gemv_final below instead.)
 * Launch: global (ceil(M/RM), ceil(N/(16*NV)), batch), local (1,1,1); dimension 0 is the row block
 * so that consecutive work-groups reuse the same column panel of B from cache. */
#define HB_MM_CPU(NAME, RM, NV)                                                                \
__kernel void NAME(HB_MM_ARGS, int k0, int kb, int acc_in)                                     \
{                                                                                              \
    const int ib = (int)get_global_id(0) * RM, jb = (int)get_global_id(1) * (16 * NV);         \
    const size_t bz = get_global_id(2);                                                        \
    if (ib >= M || jb >= N) return;                                                            \
    __global const TS *a = A + a_off + bz * a_stride;                                          \
    __global const TS *b = B + b_off + bz * b_stride;                                          \
    __global TS *c = C + c_off + bz * c_stride;                                                \
    const int va = HB_ALIGNED(b, 16) && HB_ALIGNED(c, 16) && ldb % 8 == 0 && ldc % 8 == 0;     \
    const int k1 = min(K, k0 + kb);                                                            \
    size_t ar[RM];                                                                             \
    for (int r = 0; r < RM; r++) ar[r] = (size_t)min(ib + r, M - 1) * (size_t)lda;             \
    if (jb + 16 * NV <= N) {                                                                   \
        float16 acc[RM][NV];                                                                   \
        for (int r = 0; r < RM; r++)                                                           \
            for (int v = 0; v < NV; v++)                                                       \
                acc[r][v] = acc_in && ib + r < M ? LDV16(va, 0, c + (size_t)(ib + r) * ldc + jb + 16 * v) : 0.0f; \
        for (int k = k0; k < k1; k++) {                                                        \
            __global const TS *bk = b + (size_t)k * (size_t)ldb + jb;                          \
            float16 bv[NV];                                                                    \
            _Pragma("unroll")                                                                  \
            for (int v = 0; v < NV; v++) bv[v] = LDV16(va, 0, bk + 16 * v);                    \
            _Pragma("unroll")                                                                  \
            for (int r = 0; r < RM; r++) {                                                     \
                float16 av = (float16)(LD1(ar[r] + k, a));                                     \
                _Pragma("unroll")                                                              \
                for (int v = 0; v < NV; v++) acc[r][v] = fma(av, bv[v], acc[r][v]);            \
            }                                                                                  \
        }                                                                                      \
        for (int r = 0; r < RM; r++) {                                                         \
            if (ib + r >= M) break;                                                            \
            for (int v = 0; v < NV; v++) STV16(va, acc[r][v], 0, c + (size_t)(ib + r) * ldc + jb + 16 * v); \
        }                                                                                      \
        return;                                                                                \
    }                                                                                          \
    int j = jb;                                                                                \
    for (; j + 16 <= N; j += 16) {                                                             \
        float16 acc[RM];                                                                       \
        for (int r = 0; r < RM; r++)                                                           \
            acc[r] = acc_in && ib + r < M ? LDV16(va, 0, c + (size_t)(ib + r) * ldc + j) : 0.0f; \
        for (int k = k0; k < k1; k++) {                                                        \
            float16 bv = LDV16(va, 0, b + (size_t)k * (size_t)ldb + j);                        \
            for (int r = 0; r < RM; r++) acc[r] = fma((float16)(LD1(ar[r] + k, a)), bv, acc[r]); \
        }                                                                                      \
        for (int r = 0; r < RM && ib + r < M; r++) STV16(va, acc[r], 0, c + (size_t)(ib + r) * ldc + j); \
    }                                                                                          \
    for (; j < N; j++) {                                                                       \
        float acc[RM];                                                                         \
        for (int r = 0; r < RM; r++)                                                           \
            acc[r] = acc_in && ib + r < M ? LD1((size_t)(ib + r) * ldc + j, c) : 0.0f;         \
        for (int k = k0; k < k1; k++) {                                                        \
            float bv = LD1((size_t)k * (size_t)ldb + j, b);                                    \
            for (int r = 0; r < RM; r++) acc[r] = fma(LD1(ar[r] + k, a), bv, acc[r]);          \
        }                                                                                      \
        for (int r = 0; r < RM && ib + r < M; r++) ST1(acc[r], (size_t)(ib + r) * (size_t)ldc + j, c); \
    }                                                                                          \
}
HB_MM_CPU(hb_mm_cpu, 8, 2)

/* GPU style: the classic local-memory tiled kernel (16 x 16 tiles of A and B staged in local
 * memory, one output per work-item; as in the NVIDIA OpenCL SDK matrixMul sample).
 * Launch: global (ceil(N/16)*16, ceil(M/16)*16, batch), local (16,16,1). */
#define MM_T 16
__kernel void hb_mm_local(HB_MM_ARGS)
{
    __local float As[MM_T][MM_T + 1];
    __local float Bs[MM_T][MM_T + 1];
    const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
    const int j = (int)get_global_id(0), i = (int)get_global_id(1);
    const size_t bz = get_global_id(2);
    __global const TS *a = A + a_off + bz * a_stride;
    __global const TS *b = B + b_off + bz * b_stride;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += MM_T) {
        int ka = k0 + tx, kb = k0 + ty;
        As[ty][tx] = (i < M && ka < K) ? LD1((size_t)i * (size_t)lda + ka, a) : 0.0f;
        Bs[ty][tx] = (j < N && kb < K) ? LD1((size_t)kb * (size_t)ldb + j, b) : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < MM_T; kk++) acc = fma(As[ty][kk], Bs[kk][tx], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < M && j < N) ST1(acc, (size_t)i * (size_t)ldc + j, C + c_off + bz * c_stride);
}

/* CPU style, M == 1 (matrix-vector): the K rows of B are split into nkb runs of kr rows; work-item
 * (kb, bz) streams its run of whole rows of B contiguously and accumulates x[k] * B[k, :] into its
 * f32 partial row part[(bz*nkb + kb)*N ..] (N floats, cache-resident), then hb_gemv_final sums the
 * nkb partials of each column. Reads B once, in address order, as a memory-bound product should
 * (f16 rows of B through the vector built-ins when 16-byte aligned, va).
 * Launch: global (nkb, batch), local (1, 1). */
__kernel void hb_gemv_part(__global const TS *A, ulong a_off, ulong a_stride,
                           __global const TS *B, ulong b_off, int ldb, ulong b_stride,
                           __global float *part, int N, int K, int kr, int nkb)
{
    const int kb = (int)get_global_id(0);
    const size_t bz = get_global_id(1);
    if (kb >= nkb) return;
    __global const TS *x = A + a_off + bz * a_stride;
    __global const TS *b = B + b_off + bz * b_stride;
    __global float *p = part + (bz * (size_t)nkb + (size_t)kb) * (size_t)N;
    const int k0 = kb * kr, k1 = min(K, k0 + kr);
    const int va = HB_ALIGNED(b, 16) && ldb % 8 == 0;
    for (int k = k0; k < k1; k++) {
        const float xk = LD1(k, x);
        const float16 xv = (float16)(xk);
        __global const TS *bk = b + (size_t)k * (size_t)ldb;
        int j = 0;
        if (k == k0) {
            for (; j + 16 <= N; j += 16) vstore16(xv * LDV16(va, 0, bk + j), 0, p + j);
            for (; j < N; j++) p[j] = xk * LD1(j, bk);
        } else {
            for (; j + 16 <= N; j += 16) vstore16(fma(xv, LDV16(va, 0, bk + j), vload16(0, p + j)), 0, p + j);
            for (; j < N; j++) p[j] = fma(xk, LD1(j, bk), p[j]);
        }
    }
}

/* y[bz, j] = sum over kb of part[(bz*nkb + kb)*N + j]. Launch: global (ceil(N/64)*64, batch), local (64, 1). */
__kernel void hb_gemv_final(__global const float *part, __global TS *C, ulong c_off, ulong c_stride, int N, int nkb)
{
    const int j = (int)get_global_id(0);
    const size_t bz = get_global_id(1);
    if (j >= N) return;
    __global const float *p = part + bz * (size_t)nkb * (size_t)N + j;
    float s = 0.0f;
    for (int kb = 0; kb < nkb; kb++) s += p[(size_t)kb * N];
    ST1(s, j, C + c_off + bz * c_stride);
}
