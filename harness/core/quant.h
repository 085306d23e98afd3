/*
 * quant.h - quantized weight formats in GGUF's block layouts (ggml's Q8_0, Q4_K, Q5_K, Q6_K): their
 * blocks, sizes and GGUF type ids, the dequantization each format defines, and random blocks to
 * measure with. The quantized dtypes (HB_Q8_0 ... HB_Q6_K, core/hybench.h) mean: matmul with its
 * weight operand (input 1) in the format, activations (input 0) and output in f32.
 *
 * Weight layout (ggml's and GGUF's, not hybench's dense B[k,n]): W[n,k] row-major, each of the n output
 * rows holding k weights in blocks along k (ggml's ne0 = k), so C[m,n] = A[m,k] x W^T; k must be a
 * multiple of the format's block (32 for Q8_0, 256 for the K formats: QK_K).
 *
 * The block structs below are the byte layouts of ggml's ggml-common.h (block_q8_0, block_q4_K,
 * block_q5_K, block_q6_K; docs at github.com/ggml-org/ggml docs/gguf.md), stated here from the format's
 * definition; every scale is an IEEE binary16 bit pattern. The structs and constants are header-only so
 * the plugins (hb_opencl.so, hb_cuda.so; they link no harness symbol) read the same layout; the
 * functions are in core/quant.c.
 *
 * Values (y = a weight; j = the element in its block):
 *   Q8_0  32 per block:  y = d * qs[j]                                   (qs int8)
 *   Q4_K  256 per block, 8 sub-blocks of 32 with a 6-bit scale sc and a 6-bit min mn each
 *         (12 bytes `scales`, packed as in ggml's get_scale_min_k4):
 *         y = d * sc * q - dmin * mn                                     (q 4 bits)
 *   Q5_K  as Q4_K, q of 5 bits: the low 4 in qs, the fifth in qh
 *   Q6_K  256 per block, 16 sub-blocks of 16 with an int8 scale each:
 *         y = d * scales[s] * (q - 32)                                   (q 6 bits: 4 in ql, 2 in qh)
 */
#ifndef HB_QUANT_H
#define HB_QUANT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "core/hybench.h"
#ifdef __cplusplus
extern "C" {
#endif

#define HB_QK8_0 32  /* elements per Q8_0 block */
#define HB_QK_K 256  /* elements per K-format super-block */
#define HB_K_SCALE_SIZE 12

typedef struct hb_block_q8_0 { uint16_t d; int8_t qs[HB_QK8_0]; } hb_block_q8_0;                       /* 34 bytes */
typedef struct hb_block_q4_k {
    uint16_t d, dmin;                     /* super-block scale of the scales, of the mins (f16) */
    uint8_t scales[HB_K_SCALE_SIZE];      /* 8 scales and 8 mins, 6 bits each */
    uint8_t qs[HB_QK_K / 2];              /* 4-bit quants: byte l of a 32-byte group holds element l (low) and l+32 (high) */
} hb_block_q4_k;                                                                                       /* 144 bytes */
typedef struct hb_block_q5_k {
    uint16_t d, dmin;
    uint8_t scales[HB_K_SCALE_SIZE];
    uint8_t qh[HB_QK_K / 8];              /* the fifth bit of each quant */
    uint8_t qs[HB_QK_K / 2];              /* the low 4 bits, as Q4_K */
} hb_block_q5_k;                                                                                       /* 176 bytes */
typedef struct hb_block_q6_k {
    uint8_t ql[HB_QK_K / 2];              /* the low 4 bits */
    uint8_t qh[HB_QK_K / 4];              /* the high 2 bits */
    int8_t scales[HB_QK_K / 16];          /* 16 sub-block scales */
    uint16_t d;                           /* super-block scale (f16) */
} hb_block_q6_k;                                                                                       /* 210 bytes */

#ifdef __cplusplus
static_assert(sizeof(hb_block_q8_0) == 34 && sizeof(hb_block_q4_k) == 144 && sizeof(hb_block_q5_k) == 176 &&
              sizeof(hb_block_q6_k) == 210, "GGUF block sizes");
#else
_Static_assert(sizeof(hb_block_q8_0) == 34 && sizeof(hb_block_q4_k) == 144 && sizeof(hb_block_q5_k) == 176 &&
               sizeof(hb_block_q6_k) == 210, "GGUF block sizes");
#endif

/* GGUF's ggml_type ids of the formats (and of f32/f16 tensors), as the file stores them. */
enum { HB_GGUF_F32 = 0, HB_GGUF_F16 = 1, HB_GGUF_Q8_0 = 8, HB_GGUF_Q4_K = 12, HB_GGUF_Q5_K = 13, HB_GGUF_Q6_K = 14,
       HB_GGUF_BF16 = 30 };

/* Elements per block and bytes per block of a quantized dtype; 0 for any other dtype. */
static inline int hb_quant_block_elems(hb_dtype d)
{
    return d == HB_Q8_0 ? HB_QK8_0 : (d == HB_Q4_K || d == HB_Q5_K || d == HB_Q6_K) ? HB_QK_K : 0;
}
static inline int hb_quant_block_bytes(hb_dtype d)
{
    switch (d) {
    case HB_Q8_0: return (int)sizeof(hb_block_q8_0);
    case HB_Q4_K: return (int)sizeof(hb_block_q4_k);
    case HB_Q5_K: return (int)sizeof(hb_block_q5_k);
    case HB_Q6_K: return (int)sizeof(hb_block_q6_k);
    default: return 0;
    }
}
/* Bytes of n weights of quantized dtype d (n a multiple of the block); 0 when d is not quantized or n
 * is no whole number of blocks. */
static inline size_t hb_quant_bytes(hb_dtype d, int64_t n)
{
    const int be = hb_quant_block_elems(d);
    if (be <= 0 || n < 0 || n % be) return 0;
    return (size_t)(n / be) * (size_t)hb_quant_block_bytes(d);
}
/* The block rule of a case with quantized weights: matmul's k (and the chain's) and dequantize's n are a
 * positive whole number of blocks. 1 when c keeps it, or when c's dtype is not quantized (nothing to
 * keep); else 0, with reason ("weights in blocks of 256 along k: k=300 is no positive multiple")
 * when reason is not NULL. The one statement of the rule: the driver (core/ops.c hb_quant_case_skip)
 * and every backend's supports read it (inline: the plugins link no harness symbol). */
static inline int hb_quant_blocks_whole(const hb_case *c, char *reason, size_t rlen)
{
    const int be = hb_quant_block_elems(c->dtype);
    if (be <= 0) return 1;
    const int along_n = c->op == HB_OP_DEQUANTIZE;
    const int64_t v = along_n ? c->shape.n : c->shape.k;
    if (v > 0 && v % be == 0) return 1;
    if (reason && rlen)
        snprintf(reason, rlen, "weights in blocks of %d along %s: %s=%lld is no positive multiple", be, along_n ? "n" : "k",
                 along_n ? "n" : "k", (long long)v);
    return 0;
}
/* The GGUF type id of quantized dtype d; -1 for another dtype. */
static inline int hb_quant_gguf_type(hb_dtype d)
{
    switch (d) {
    case HB_Q8_0: return HB_GGUF_Q8_0;
    case HB_Q4_K: return HB_GGUF_Q4_K;
    case HB_Q5_K: return HB_GGUF_Q5_K;
    case HB_Q6_K: return HB_GGUF_Q6_K;
    default: return -1;
    }
}
/* Q4_K/Q5_K: scale and min of sub-block j (0..7) from the 12 packed bytes (ggml's get_scale_min_k4):
 * j < 4: the low 6 bits of bytes j and j+4; j >= 4: 4 bits of byte j+4 and the top 2 bits of bytes
 * j-4 and j. */
static inline void hb_k4_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *mn)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *mn = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* Dequantize n weights (a whole number of blocks) of format d from `blocks` into out, exactly as the
 * format defines (products in f32, as ggml's dequantize_row_*: the value is the same float ggml gives).
 * HB_OK; HB_EINVAL for a dtype that is not quantized or n that is no whole number of blocks. */
hb_status hb_quant_dequantize(hb_dtype d, const void *blocks, float *out, int64_t n);
/* The same into f64 (each value the f32 above, widened exactly). */
hb_status hb_quant_dequantize_f64(hb_dtype d, const void *blocks, double *out, int64_t n);
/* Fill n weights' worth of blocks (a whole number) of format d with random valid blocks drawn from
 * (seed, stream): the same bytes for the same arguments on every machine. Scales are chosen so the
 * weights lie in [-scale, scale] for Q8_0 and Q6_K and in [-scale, 2 scale] for Q4_K and Q5_K (y =
 * d sc q - dmin mn with d <= 2 scale / (63 q_max), dmin <= scale / 63; mean about 0), up to the f16
 * rounding of the block scales (2^-11 relative, 2^-25 absolute where the f16 scale is subnormal) (scale
 * > 0; TinyLlama-like weights use 1/64); quants, 6-bit scales and mins uniform (tests/test_quant.c).
 * HB_OK or HB_EINVAL (as above, or scale <= 0). Deterministic, single-threaded. */
hb_status hb_quant_fill_random(hb_dtype d, void *blocks, int64_t n, unsigned long long seed, unsigned long long stream,
                               double scale);
#ifdef __cplusplus
}
#endif
#endif
