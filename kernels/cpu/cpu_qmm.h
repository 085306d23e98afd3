/*
 * cpu_qmm.h - private to the cpu backend's quantized matmul (cpu_qmatmul.c, qmm_avx2.c): the 8-bit
 * activation blocks each call quantizes A's rows into, and the micro-kernels' one signature.
 *
 * The method (ggml's idea for its CPU dot products, written here from the formats' definitions in
 * core/quant.h): every row of A is quantized once per call to int8 blocks with one f32 scale
 * (d = amax / 127, q = round-to-nearest-even(x / d)), blocks of 32 elements against Q8_0 weights and
 * of 256 against the K formats, the latter with the sums of their q over each 16 and each 32
 * elements. A weight block then multiplies an activation block in integers: for the K formats every
 * weight is D sc_g q - DM mn_g (q unsigned, g its 16-element group; Q4_K/Q5_K: D = d, DM = dmin, sc_g
 * and mn_g the 6-bit scale and min of g's 32-element sub-block; Q6_K: D = DM = d, mn_g = 32 sc_g, so
 * that q - 32 needs no signed unpacking), and
 *   sum_e w_e a_e = da (D sum_g sc_g sum_{e in g} q_e qa_e - DM sum_g mn_g bsum_g)
 * with exact integer inner sums; Q8_0: dw da sum_e qw_e qa_e per 32. The only rounding beyond f32
 * accumulation is A's quantization (core/ops.c hb_op_tolerance says what it costs).
 */
#ifndef HB_CPU_QMM_H
#define HB_CPU_QMM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/quant.h"

/* nearbyintf(v) in the default rounding mode (to nearest, ties to even) for |v| <= 2^22, as an int8
 * (the caller keeps |v| <= 127: the activations' 8-bit codes), without the libm call, so that the
 * quantization loops vectorize: adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits,
 * offset by 2^22. The trick of ggml's nearest_int (ggml-quants.c). tests/test_cpu_quant.c checks it
 * against nearbyintf, ties included. */
static inline int8_t qmm_round(float v)
{
    float f = v + 12582912.0f;
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return (int8_t)((i & 0x007fffff) - 0x00400000);
}

/* A's block against the K formats: 256 int8 quants, their sums per 16 and per 32, and the scale. */
typedef struct qmm_a8k {
    int8_t q[HB_QK_K];
    int16_t bs16[HB_QK_K / 16];
    int16_t bs32[HB_QK_K / 32];
    float d;
    float pad[3]; /* 320 bytes: every block starts 32-byte aligned in a 64-byte aligned array */
} qmm_a8k;
/* A's block against Q8_0: 32 int8 quants and the scale. */
typedef struct qmm_a8_0 {
    int8_t q[HB_QK8_0];
    float d;
} qmm_a8_0;

/* A micro-kernel: for r < R (1..4) out[r * ldc] = the dot product of one weight row (nb blocks of the
 * format, at w) with A's row r, whose activation blocks (nb of them, qmm_a8k or qmm_a8_0 by format)
 * start at a + r * astride bytes. */
typedef void (*qmm_kern)(const uint8_t *w, const uint8_t *a, size_t astride, int R, int64_t nb, float *out,
                         int64_t ldc);

/* The AVX2 micro-kernel of format d (qmm_avx2.c, compiled for AVX2+FMA+F16C by target attributes in
 * every x86-64 build), or NULL where this build has none. Callable only when qmm_avx2_usable(). */
qmm_kern qmm_avx2_kernel(hb_dtype d);
/* 1 when the CPU runs AVX2, FMA and F16C (cpuid, once per process) and this build has the kernels. */
int qmm_avx2_usable(void);
#endif
