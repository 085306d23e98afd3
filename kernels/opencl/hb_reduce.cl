/*
 * hb_reduce.cl - reductions over the last axis of x[rows, cols] (sum, mean, max; sum_all is one
 * row) and rmsnorm. Two passes: a partial kernel reduces chunks of `chunk` columns of each row
 * into part[row*nchunk + c] (or straight into y when nchunk == 1, applying the final operation),
 * then hb_red_final combines the nchunk partials of each row. Accumulation is f32.
 * `fin` selects the final operation: 0 raw partial (f32 scratch), 1 sum, 2 mean (divide by cols),
 * 3 max. Partials are always f32 (__global float *), whatever the tensor storage type.
 */

inline void hb_red_store(float v, int fin, int cols, size_t idx, __global float *part, __global TS *y)
{
    if (fin == 0) part[idx] = v;
    else ST1(fin == 2 ? v / (float)cols : v, idx, y);
}

#if HB_CPU_STYLE
/* CPU style: work-item (c, row) walks its chunk with float16 accumulators, after single elements
 * up to a 16-byte boundary (f16 rows start anywhere; see HB_ALIGNED in hb_common.cl).
 * Launch: global (nchunk, rows rounded up to L), local (1, L). */
#define HB_RED_PART(NAME, INIT, VOP, HRED, SOP)                                                \
__kernel void NAME(__global const TS *x, __global float *part, __global TS *y, int rows,        \
                   int cols, int chunk, int nchunk, int fin)                                   \
{                                                                                              \
    const int c = (int)get_global_id(0), row = (int)get_global_id(1);                          \
    if (c >= nchunk || row >= rows) return;                                                    \
    const int j0 = c * chunk, j1 = min(j0 + chunk, cols);                                       \
    __global const TS *p = x + (size_t)row * (size_t)cols;                                     \
    float s = INIT;                                                                            \
    int j = j0;                                                                                \
    for (; j < j1 && !HB_ALIGNED(p + j, 16); j++) { float v = LD1(j, p); s = SOP; }             \
    float16 acc = (float16)(INIT);                                                             \
    for (; j + 16 <= j1; j += 16) { float16 v = LD16(0, p + j); acc = VOP; }                   \
    { float v = HRED(acc); s = SOP; }                                                          \
    for (; j < j1; j++) { float v = LD1(j, p); s = SOP; }                                       \
    hb_red_store(s, fin, cols, (size_t)row * nchunk + c, part, y);                             \
}
HB_RED_PART(hb_red_sum, 0.0f, acc + v, hb_hsum16, s + v)
HB_RED_PART(hb_red_max, -INFINITY, fmax(acc, v), hb_hmax16, fmax(s, v))
#else
/* GPU style: one work-group per (chunk, row); its work-items read the chunk coalesced and combine
 * in local memory. Launch: global (nchunk*L, rows), local (L, 1), L a power of two <= 256. */
#define HB_RED_PART(NAME, INIT, OP)                                                            \
__kernel void NAME(__global const TS *x, __global float *part, __global TS *y, int rows,        \
                   int cols, int chunk, int nchunk, int fin)                                   \
{                                                                                              \
    __local float sh[256];                                                                     \
    const int c = (int)get_group_id(0), row = (int)get_global_id(1);                           \
    const int l = (int)get_local_id(0), L = (int)get_local_size(0);                            \
    const int j0 = c * chunk, j1 = min(j0 + chunk, cols);                                       \
    __global const TS *p = x + (size_t)row * (size_t)cols;                                     \
    float s = INIT;                                                                            \
    for (int j = j0 + l; j < j1; j += L) { float v = LD1(j, p); s = OP(s, v); }                \
    sh[l] = s;                                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    for (int o = L / 2; o > 0; o >>= 1) {                                                      \
        if (l < o) sh[l] = OP(sh[l], sh[l + o]);                                               \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
    }                                                                                          \
    if (l == 0) hb_red_store(sh[0], fin, cols, (size_t)row * nchunk + c, part, y);             \
}
#define HB_ADD(a, b) ((a) + (b))
HB_RED_PART(hb_red_sum, 0.0f, HB_ADD)
HB_RED_PART(hb_red_max, -INFINITY, fmax)
#endif

/* Combine part[row*nchunk .. +nchunk) into y[row] (fin 1 sum, 2 mean, 3 max).
 * Launch: global ceil(rows/64)*64. */
__kernel void hb_red_final(__global const float *part, __global TS *y, int rows, int nchunk, int cols, int fin)
{
    const int row = (int)get_global_id(0);
    if (row >= rows) return;
    __global const float *p = part + (size_t)row * nchunk;
    float s = fin == 3 ? -INFINITY : 0.0f;
    for (int c = 0; c < nchunk; c++) s = fin == 3 ? fmax(s, p[c]) : s + p[c];
    ST1(fin == 2 ? s / (float)cols : s, row, y);
}

/* rmsnorm: y[r, j] = x[r, j] / sqrt(mean_j(x[r, j]^2) + 1e-5) * g[j] (eps 1e-5 as in hybench.h and
 * LLaMA's RMSNorm). */
#define HB_RMS_EPS 1e-5f
#if HB_CPU_STYLE
/* One work-item per row: sum of squares with float16 accumulators, then the scaled copy (va: the
 * row and g are 16-byte aligned; see HB_ALIGNED in hb_common.cl). Launch: global rows rounded up
 * to L, local L. */
__kernel void hb_rmsnorm(__global const TS *x, __global const TS *g, __global TS *y, int rows, int cols)
{
    const int row = (int)get_global_id(0);
    if (row >= rows) return;
    __global const TS *p = x + (size_t)row * (size_t)cols;
    __global TS *q = y + (size_t)row * (size_t)cols;
    const int va = HB_ALIGNED(p, 16) && HB_ALIGNED(q, 16) && HB_ALIGNED(g, 16);
    float16 acc = 0.0f;
    int j = 0;
    for (; j + 16 <= cols; j += 16) { float16 v = LDV16(va, 0, p + j); acc = fma(v, v, acc); }
    float s = hb_hsum16(acc);
    for (; j < cols; j++) { float v = LD1(j, p); s = fma(v, v, s); }
    const float inv = 1.0f / sqrt(s / (float)cols + HB_RMS_EPS);
    j = 0;
    for (; j + 16 <= cols; j += 16) STV16(va, LDV16(va, 0, p + j) * inv * LDV16(va, 0, g + j), 0, q + j);
    for (; j < cols; j++) ST1(LD1(j, p) * inv * LD1(j, g), j, q);
}
#else
/* One work-group of 256 per row. Launch: global (256, rows), local (256, 1). */
__kernel void hb_rmsnorm(__global const TS *x, __global const TS *g, __global TS *y, int rows, int cols)
{
    __local float sh[256];
    const int row = (int)get_global_id(1), l = (int)get_local_id(0), L = (int)get_local_size(0);
    __global const TS *p = x + (size_t)row * (size_t)cols;
    __global TS *q = y + (size_t)row * (size_t)cols;
    float s = 0.0f;
    for (int j = l; j < cols; j += L) { float v = LD1(j, p); s = fma(v, v, s); }
    sh[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = L / 2; o > 0; o >>= 1) {
        if (l < o) sh[l] += sh[l + o];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv = 1.0f / sqrt(sh[0] / (float)cols + HB_RMS_EPS);
    for (int j = l; j < cols; j += L) ST1(LD1(j, p) * inv * LD1(j, g), j, q);
}
#endif
