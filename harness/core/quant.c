/*
 * quant.c - dequantization of the GGUF block formats, random blocks to measure with, and which cases
 * the quantized dtypes take (quant.h).
 * The value of every weight is computed as each format defines it (ggml's dequantize_row_q8_0,
 * _q4_K, _q5_K, _q6_K): f32 products and differences, each rounded on its own, never fused into an FMA
 * (the contraction is switched off below), so the f32 a kernel must reproduce is one number.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include "core/quant.h"
#include <string.h>
#include "core/convert.h"

static int whole_blocks(hb_dtype d, int64_t n) { return hb_quant_block_elems(d) > 0 && n >= 0 && n % hb_quant_block_elems(d) == 0; }

static void deq_q8_0(const hb_block_q8_0 *b, float *y)
{
    const float d = hb_f16_to_f32(b->d);
    for (int j = 0; j < HB_QK8_0; j++) y[j] = d * (float)b->qs[j];
}

static void deq_q4_k(const hb_block_q4_k *b, float *y)
{
    const float d = hb_f16_to_f32(b->d), dmin = hb_f16_to_f32(b->dmin);
    const uint8_t *q = b->qs;
    for (int j = 0, is = 0; j < HB_QK_K; j += 64, is += 2, q += 32) {
        uint8_t sc, mn;
        hb_k4_scale_min(is, b->scales, &sc, &mn);
        const float d1 = d * (float)sc, m1 = dmin * (float)mn;
        hb_k4_scale_min(is + 1, b->scales, &sc, &mn);
        const float d2 = d * (float)sc, m2 = dmin * (float)mn;
        for (int l = 0; l < 32; l++) { float t = d1 * (float)(q[l] & 0xF); *y++ = t - m1; }
        for (int l = 0; l < 32; l++) { float t = d2 * (float)(q[l] >> 4); *y++ = t - m2; }
    }
}

static void deq_q5_k(const hb_block_q5_k *b, float *y)
{
    const float d = hb_f16_to_f32(b->d), dmin = hb_f16_to_f32(b->dmin);
    const uint8_t *ql = b->qs, *qh = b->qh;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0, is = 0; j < HB_QK_K; j += 64, is += 2, ql += 32) {
        uint8_t sc, mn;
        hb_k4_scale_min(is, b->scales, &sc, &mn);
        const float d1 = d * (float)sc, m1 = dmin * (float)mn;
        hb_k4_scale_min(is + 1, b->scales, &sc, &mn);
        const float d2 = d * (float)sc, m2 = dmin * (float)mn;
        for (int l = 0; l < 32; l++) { float t = d1 * (float)((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)); *y++ = t - m1; }
        for (int l = 0; l < 32; l++) { float t = d2 * (float)((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)); *y++ = t - m2; }
        u1 = (uint8_t)(u1 << 2);
        u2 = (uint8_t)(u2 << 2);
    }
}

static void deq_q6_k(const hb_block_q6_k *b, float *y)
{
    const float d = hb_f16_to_f32(b->d);
    const uint8_t *ql = b->ql, *qh = b->qh;
    const int8_t *sc = b->scales;
    for (int n = 0; n < HB_QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; l++) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * (float)sc[is] * (float)q1;
            y[l + 32] = d * (float)sc[is + 2] * (float)q2;
            y[l + 64] = d * (float)sc[is + 4] * (float)q3;
            y[l + 96] = d * (float)sc[is + 6] * (float)q4;
        }
    }
}

/* One block of format d at p into y (block_elems floats). */
static void deq_block(hb_dtype d, const uint8_t *p, float *y)
{
    switch (d) {
    case HB_Q8_0: { hb_block_q8_0 b; memcpy(&b, p, sizeof b); deq_q8_0(&b, y); break; }
    case HB_Q4_K: { hb_block_q4_k b; memcpy(&b, p, sizeof b); deq_q4_k(&b, y); break; }
    case HB_Q5_K: { hb_block_q5_k b; memcpy(&b, p, sizeof b); deq_q5_k(&b, y); break; }
    case HB_Q6_K: { hb_block_q6_k b; memcpy(&b, p, sizeof b); deq_q6_k(&b, y); break; }
    default: break;
    }
}

hb_status hb_quant_dequantize(hb_dtype d, const void *blocks, float *out, int64_t n)
{
    if (!whole_blocks(d, n) || (n && (!blocks || !out))) return HB_EINVAL;
    const int be = hb_quant_block_elems(d), bb = hb_quant_block_bytes(d);
    const uint8_t *p = (const uint8_t *)blocks;
    for (int64_t i = 0; i < n / be; i++) deq_block(d, p + (size_t)i * (size_t)bb, out + i * be);
    return HB_OK;
}

hb_status hb_quant_dequantize_f64(hb_dtype d, const void *blocks, double *out, int64_t n)
{
    if (!whole_blocks(d, n) || (n && (!blocks || !out))) return HB_EINVAL;
    const int be = hb_quant_block_elems(d), bb = hb_quant_block_bytes(d);
    const uint8_t *p = (const uint8_t *)blocks;
    float y[HB_QK_K];
    for (int64_t i = 0; i < n / be; i++) {
        deq_block(d, p + (size_t)i * (size_t)bb, y);
        for (int j = 0; j < be; j++) out[i * be + j] = (double)y[j];
    }
    return HB_OK;
}

/* splitmix64 (Steele, Lea, Flood 2014), as measure/meta.c's hb_fill_random draws. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static void bytes(uint64_t *s, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = next(s);
        for (size_t j = 0; j < 8 && i + j < n; j++) p[i + j] = (uint8_t)(r >> (8 * j));
    }
}
/* a uniform factor in [0.5, 1) */
static float half_to_one(uint64_t *s) { return (float)(0.5 + 0.5 * (double)(next(s) >> 11) / 9007199254740992.0); }

hb_status hb_quant_fill_random(hb_dtype d, void *blocks, int64_t n, unsigned long long seed, unsigned long long stream,
                               double scale)
{
    if (!whole_blocks(d, n) || !(scale > 0) || (n && !blocks)) return HB_EINVAL;
    uint64_t s = seed * 0x2545F4914F6CDD1DULL + stream * 0x9E3779B97F4A7C15ULL + 0x51ED27ULL;
    const int be = hb_quant_block_elems(d), bb = hb_quant_block_bytes(d);
    uint8_t *p = (uint8_t *)blocks;
    for (int64_t i = 0; i < n / be; i++, p += bb) {
        switch (d) {
        case HB_Q8_0: { /* y = d q, |q| <= 127: |y| <= scale */
            hb_block_q8_0 b;
            b.d = hb_f32_to_f16((float)(scale / 127) * half_to_one(&s));
            bytes(&s, (uint8_t *)b.qs, sizeof b.qs);
            for (int j = 0; j < HB_QK8_0; j++) if (b.qs[j] == -128) b.qs[j] = -127; /* ggml's quantizer never writes -128 */
            memcpy(p, &b, sizeof b);
            break;
        }
        case HB_Q4_K: { /* y = d sc q - dmin mn: sc, mn <= 63, q <= 15: y in [-scale, scale] about */
            hb_block_q4_k b;
            b.d = hb_f32_to_f16((float)(2 * scale / (63.0 * 15)) * half_to_one(&s));
            b.dmin = hb_f32_to_f16((float)(scale / 63) * half_to_one(&s));
            bytes(&s, b.scales, sizeof b.scales);
            bytes(&s, b.qs, sizeof b.qs);
            memcpy(p, &b, sizeof b);
            break;
        }
        case HB_Q5_K: { /* q <= 31 */
            hb_block_q5_k b;
            b.d = hb_f32_to_f16((float)(2 * scale / (63.0 * 31)) * half_to_one(&s));
            b.dmin = hb_f32_to_f16((float)(scale / 63) * half_to_one(&s));
            bytes(&s, b.scales, sizeof b.scales);
            bytes(&s, b.qh, sizeof b.qh);
            bytes(&s, b.qs, sizeof b.qs);
            memcpy(p, &b, sizeof b);
            break;
        }
        case HB_Q6_K: { /* y = d sc (q - 32), |sc| <= 127 (ggml's quantizer writes -128..127; drawn symmetric) */
            hb_block_q6_k b;
            b.d = hb_f32_to_f16((float)(scale / (127.0 * 32)) * half_to_one(&s));
            bytes(&s, b.ql, sizeof b.ql);
            bytes(&s, b.qh, sizeof b.qh);
            bytes(&s, (uint8_t *)b.scales, sizeof b.scales);
            for (int j = 0; j < 16; j++) if (b.scales[j] == -128) b.scales[j] = -127;
            memcpy(p, &b, sizeof b);
            break;
        }
        default: return HB_EINVAL;
        }
    }
    return HB_OK;
}

/* quant.h */
