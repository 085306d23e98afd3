/*
 * hb_qmatmul.cl - matmul with quantized weights (dtypes q8_0, q4_k, q5_k, q6_k; core/quant.h):
 * C[m,n] = A[m,k] x W^T, A and C f32 row-major, W[n,k] in GGUF blocks, each of the n rows k / block
 * blocks contiguous. Built in the f32 variant only (HB_HALF 0: the activations are f32 by definition).
 *
 * Kernels hb_qmm_q8_0, hb_qmm_q4_k, hb_qmm_q5_k, hb_qmm_q6_k: work-item (j, t) computes C[i, j] for
 * the rows i = 4 t .. 4 t + 3 (those < m) of A: it walks row j of W in groups of 32 weights,
 * dequantizes a group into a float16 pair in registers (values as core/quant.h's comment defines them:
 * Q8_0 d q; Q4_K/Q5_K d sc q - dmin mn with the 6-bit scales of hb_k4_scale_min; Q6_K d sc (q - 32);
 * products in f32) and multiplies it with the group's activations of each of its rows, f32 FMAs and
 * f32 accumulation. Each weight is decoded once per 4 rows of A; the weight bytes are read with byte
 * vector loads (vload16 of uchar: Q8_0 and Q6_K blocks are only 2-byte aligned) and the f16 scales
 * with vload_half (2-byte aligned in every format).
 */

#define QMB 4 /* rows of A per work-item */

/* 16 activations of row a starting at element e, times 16 weights */
inline float hb_q_dot16(const __global float *a, int e, float16 w) { return hb_hsum16(vload16(0, a + e) * w); }

/* The products of one 32-weight group (w0: elements e .. e+15, w1: e+16 .. e+31) with the work-item's
 * rows of A (mb of them, row i at A + i k), added to acc[]. */
#define HB_Q_ACC(w0, w1, e)                                                                    \
    do {                                                                                       \
        for (int i_ = 0; i_ < QMB; i_++)                                                       \
            if (i_ < mb) {                                                                     \
                const __global float *ar_ = a0 + (size_t)i_ * (size_t)k;                       \
                acc[i_] += hb_q_dot16(ar_, (e), (w0)) + hb_q_dot16(ar_, (e) + 16, (w1));       \
            }                                                                                  \
    } while (0)

/* Scale and min of sub-block j (0..7) from the 12 packed bytes q (hb_k4_scale_min in core/quant.h) */
inline void hb_q_scale_min(int j, const __global uchar *q, float *sc, float *mn)
{
    if (j < 4) {
        *sc = (float)(q[j] & 63);
        *mn = (float)(q[j + 4] & 63);
    } else {
        *sc = (float)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *mn = (float)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* The 32 weights of group g (0..7) of a Q4_K (q5 = 0) or Q5_K (q5 = 1) super-block at p, elements
 * 32 g .. 32 g + 31, as w0 (the first 16) and w1: low nibbles of qs[32 (g/2) ..] for even g, high for
 * odd, the fifth bit of element l bit g of qh[l]; d * sc * q - dmin * mn. Matmul and dequantize read it. */
inline void hb_q_k45_group(const __global uchar *p, int g, int q5, float16 *w0, float16 *w1)
{
    const float d = vload_half(0, (const __global half *)p), dmin = vload_half(1, (const __global half *)p);
    const __global uchar *qs = p + (q5 ? 48 : 16);
    float sc, mn;
    hb_q_scale_min(g, p + 4, &sc, &mn);
    const float dl = d * sc, ml = dmin * mn;
    const uchar16 b0 = vload16(0, qs + 32 * (g >> 1)), b1 = vload16(1, qs + 32 * (g >> 1));
    const uchar sh = (uchar)(4 * (g & 1));
    uchar16 q0 = (b0 >> sh) & (uchar)0xF, q1 = (b1 >> sh) & (uchar)0xF;
    if (q5) {
        const uchar16 h0 = vload16(0, p + 16), h1 = vload16(1, p + 16);
        q0 |= ((h0 >> (uchar)g) & (uchar)1) << (uchar)4;
        q1 |= ((h1 >> (uchar)g) & (uchar)1) << (uchar)4;
    }
    *w0 = dl * convert_float16(q0) - ml;
    *w1 = dl * convert_float16(q1) - ml;
}

/* The 32 weights of group g (0..7) of a Q6_K super-block at p (the group layout: hb_qmm_q6_k's comment),
 * elements 128 (g / 4) + 32 (g % 4) .. + 31, as w0 and w1: d * sc * (q - 32). */
inline void hb_q_q6_group(const __global uchar *p, int g, float16 *w0, float16 *w1)
{
    const int h = g >> 2, t = g & 3;
    const float d = vload_half(104, (const __global half *)p); /* byte 208 */
    const __global char *sc = (const __global char *)(p + 192);
    const __global uchar *ql = p + 64 * h + ((t & 1) ? 32 : 0), *qh = p + 128 + 32 * h;
    const uchar sl = (uchar)((t >> 1) * 4), shh = (uchar)(2 * t);
    const uchar16 q0 = ((vload16(0, ql) >> sl) & (uchar)0xF) | (((vload16(0, qh) >> shh) & (uchar)3) << (uchar)4);
    const uchar16 q1 = ((vload16(1, ql) >> sl) & (uchar)0xF) | (((vload16(1, qh) >> shh) & (uchar)3) << (uchar)4);
    const float d0 = d * (float)sc[8 * h + 2 * t], d1 = d * (float)sc[8 * h + 2 * t + 1];
    *w0 = d0 * (convert_float16(q0) - 32.0f);
    *w1 = d1 * (convert_float16(q1) - 32.0f);
}

/* The start of the kernels: which row j and which rows of A; returns from out-of-range items. */
#define HB_Q_PROLOGUE(BLOCK_BYTES, BLOCK_ELEMS)                                                \
    const int j = (int)get_global_id(0), i0 = (int)get_global_id(1) * QMB;                     \
    if (j >= n || i0 >= m) return;                                                             \
    const int mb = m - i0 < QMB ? m - i0 : QMB;                                                \
    const int nb = k / (BLOCK_ELEMS);                                                          \
    const __global uchar *row = W + (size_t)j * (size_t)nb * (BLOCK_BYTES);                    \
    const __global float *a0 = A + (size_t)i0 * (size_t)k;                                     \
    float acc[QMB] = {0.0f, 0.0f, 0.0f, 0.0f}

#define HB_Q_EPILOGUE                                                                          \
    for (int i = 0; i < QMB; i++)                                                              \
        if (i < mb) C[(size_t)(i0 + i) * (size_t)n + j] = acc[i]

/* Q8_0: 34-byte blocks of 32: f16 d, 32 int8 quants. */
__kernel void hb_qmm_q8_0(const __global float *A, const __global uchar *W, __global float *C, int m, int n, int k)
{
    HB_Q_PROLOGUE(34, 32);
    for (int b = 0; b < nb; b++) {
        const __global uchar *p = row + (size_t)b * 34;
        const float d = vload_half(0, (const __global half *)p);
        const float16 w0 = d * convert_float16(as_char16(vload16(0, p + 2)));
        const float16 w1 = d * convert_float16(as_char16(vload16(0, p + 18)));
        HB_Q_ACC(w0, w1, 32 * b);
    }
    HB_Q_EPILOGUE;
}

/* Q4_K (144 bytes) and Q5_K (176 bytes) super-blocks of 256: f16 d, dmin; 12 scale bytes; (Q5_K: 32
 * bytes of fifth bits qh); 128 bytes of nibbles qs. Group g (0..7) of 32: bytes qs[32 (g/2) ..], low
 * nibbles for even g, high for odd; the fifth bit of element l is bit g of qh[l]. */
#define HB_Q_K45(NAME, BYTES, Q5)                                                                           \
    __kernel void NAME(const __global float *A, const __global uchar *W, __global float *C, int m, int n, int k) \
    {                                                                                                       \
        HB_Q_PROLOGUE(BYTES, 256);                                                                          \
        for (int b = 0; b < nb; b++) {                                                                      \
            const __global uchar *p = row + (size_t)b * (BYTES);                                            \
            for (int g = 0; g < 8; g++) {                                                                   \
                float16 w0, w1;                                                                             \
                hb_q_k45_group(p, g, (Q5), &w0, &w1);                                                       \
                HB_Q_ACC(w0, w1, 256 * b + 32 * g);                                                         \
            }                                                                                               \
        }                                                                                                   \
        HB_Q_EPILOGUE;                                                                                      \
    }
HB_Q_K45(hb_qmm_q4_k, 144, 0)
HB_Q_K45(hb_qmm_q5_k, 176, 1)

/* Q6_K: 210-byte super-blocks of 256: ql[128] low nibbles, qh[64] high 2 bits, 16 int8 scales, f16 d.
 * Group g (0..7): half h = g / 4, quarter t = g % 4: elements 128 h + 32 t + l (l < 32), q = (nibble
 * of ql[64 h + l] (t = 0, 2) or ql[64 h + 32 + l] (t = 1, 3), low for t < 2, high else) | ((qh[32 h +
 * l] >> 2 t) & 3) << 4, scale scales[8 h + 2 t + l / 16]. */
__kernel void hb_qmm_q6_k(const __global float *A, const __global uchar *W, __global float *C, int m, int n, int k)
{
    HB_Q_PROLOGUE(210, 256);
    for (int b = 0; b < nb; b++) {
        const __global uchar *p = row + (size_t)b * 210;
        for (int g = 0; g < 8; g++) {
            float16 w0, w1;
            hb_q_q6_group(p, g, &w0, &w1);
            HB_Q_ACC(w0, w1, 256 * b + 128 * (g >> 2) + 32 * (g & 3));
        }
    }
    HB_Q_EPILOGUE;
}

/* Op dequantize (the same values as above, written out): Y[n] f32 from the blocks W of n weights;
 * work-item t writes the 32 weights of group t (elements 32 t .. 32 t + 31), ngroups = n / 32. */
__kernel void hb_dq_q8_0(const __global uchar *W, __global float *Y, int ngroups)
{
    const int t = (int)get_global_id(0);
    if (t >= ngroups) return;
    const __global uchar *p = W + (size_t)t * 34;
    const float d = vload_half(0, (const __global half *)p);
    vstore16(d * convert_float16(as_char16(vload16(0, p + 2))), 0, Y + 32 * (size_t)t);
    vstore16(d * convert_float16(as_char16(vload16(0, p + 18))), 1, Y + 32 * (size_t)t);
}
#define HB_DQ_K45(NAME, BYTES, Q5)                                                                     \
    __kernel void NAME(const __global uchar *W, __global float *Y, int ngroups)                        \
    {                                                                                                  \
        const int t = (int)get_global_id(0);                                                           \
        if (t >= ngroups) return;                                                                      \
        float16 w0, w1;                                                                                \
        hb_q_k45_group(W + (size_t)(t >> 3) * (BYTES), t & 7, (Q5), &w0, &w1);                         \
        vstore16(w0, 0, Y + 32 * (size_t)t);                                                           \
        vstore16(w1, 1, Y + 32 * (size_t)t);                                                           \
    }
HB_DQ_K45(hb_dq_q4_k, 144, 0)
HB_DQ_K45(hb_dq_q5_k, 176, 1)
__kernel void hb_dq_q6_k(const __global uchar *W, __global float *Y, int ngroups)
{
    const int t = (int)get_global_id(0);
    if (t >= ngroups) return;
    const int b = t >> 3, g = t & 7;
    float16 w0, w1;
    hb_q_q6_group(W + (size_t)b * 210, g, &w0, &w1);
    __global float *y = Y + 256 * (size_t)b + 128 * (g >> 2) + 32 * (g & 3);
    vstore16(w0, 0, y);
    vstore16(w1, 1, y);
}
