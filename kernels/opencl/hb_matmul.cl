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

/* CPU style: work-item (gid0, gid1, gid2) computes the RM x 32 block of C at rows RM*gid0,
 * columns 32*gid1 of batch gid2 with 2*RM float16 accumulators in registers (a register-blocked
 * outer-product kernel, the micro-kernel scheme of GotoBLAS/BLIS without packing). Rows past M are
 * clamped (computed, not stored); a block with fewer than 32 columns takes a scalar path.
 * hb_mm_cpu has RM = 8 (16 accumulators: 8 broadcasts of A per 2 loads of B); hb_mm_cpu_r1 has
 * RM = 1 for M < 8 (matrix-vector shapes, memory-bound: no duplicated rows).
 * Launch: global (ceil(M/RM), ceil(N/32), batch), local (1,1,1); dimension 0 is the row block so
 * that consecutive work-groups reuse the same 32-column panel of B from cache. */
#define HB_MM_CPU(NAME, MM_RM)                                                                 \
__kernel void NAME(HB_MM_ARGS)                                                                 \
{                                                                                              \
    const int ib = (int)get_global_id(0) * MM_RM, jb = (int)get_global_id(1) * 32;             \
    const size_t bz = get_global_id(2);                                                        \
    if (ib >= M || jb >= N) return;                                                            \
    __global const TS *a = A + a_off + bz * a_stride;                                          \
    __global const TS *b = B + b_off + bz * b_stride;                                          \
    __global TS *c = C + c_off + bz * c_stride;                                                \
    size_t ar[MM_RM];                                                                          \
    for (int r = 0; r < MM_RM; r++) ar[r] = (size_t)min(ib + r, M - 1) * (size_t)lda;          \
    if (jb + 32 <= N) {                                                                        \
        float16 acc0[MM_RM], acc1[MM_RM];                                                      \
        for (int r = 0; r < MM_RM; r++) { acc0[r] = 0.0f; acc1[r] = 0.0f; }                    \
        for (int k = 0; k < K; k++) {                                                          \
            __global const TS *bk = b + (size_t)k * (size_t)ldb + jb;                          \
            float16 b0 = LD16(0, bk), b1 = LD16(0, bk + 16);                                   \
            _Pragma("unroll")                                                                  \
            for (int r = 0; r < MM_RM; r++) {                                                  \
                float16 av = (float16)(LD1(ar[r] + k, a));                                     \
                acc0[r] = fma(av, b0, acc0[r]);                                                \
                acc1[r] = fma(av, b1, acc1[r]);                                                \
            }                                                                                  \
        }                                                                                      \
        for (int r = 0; r < MM_RM; r++) {                                                      \
            if (ib + r >= M) break;                                                            \
            __global TS *cr = c + (size_t)(ib + r) * (size_t)ldc + jb;                         \
            ST16(acc0[r], 0, cr);                                                              \
            ST16(acc1[r], 0, cr + 16);                                                         \
        }                                                                                      \
    } else {                                                                                   \
        for (int j = jb; j < N; j++) {                                                         \
            float acc[MM_RM];                                                                  \
            for (int r = 0; r < MM_RM; r++) acc[r] = 0.0f;                                     \
            for (int k = 0; k < K; k++) {                                                      \
                float bv = LD1((size_t)k * (size_t)ldb + j, b);                                \
                for (int r = 0; r < MM_RM; r++) acc[r] = fma(LD1(ar[r] + k, a), bv, acc[r]);   \
            }                                                                                  \
            for (int r = 0; r < MM_RM && ib + r < M; r++)                                      \
                ST1(acc[r], (size_t)(ib + r) * (size_t)ldc + j, c);                            \
        }                                                                                      \
    }                                                                                          \
}
HB_MM_CPU(hb_mm_cpu, 8)
HB_MM_CPU(hb_mm_cpu_r1, 1)

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
