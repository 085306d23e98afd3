/*
 * test_quant.c - harness/core/quant.c: hb_quant_dequantize(_f64) and hb_quant_fill_random.
 *  - bit-exact dequantization of Q8_0, Q4_K, Q5_K and Q6_K blocks that the test builds itself: it
 *    draws the values a block stands for (f16 scales, among them subnormal, negative, zero and large
 *    ones; 6-bit scales and mins; 4/5/6-bit quants; int8 sub-block scales down to -128), packs them
 *    into the bytes by the layout of core/quant.h's comment (the 6-bit scale/min pairs j >= 4 split
 *    over byte j+4 and the top two bits of bytes j-4 and j; Q5_K's fifth bit in qh bit j of byte
 *    e % 32; Q6_K's low nibbles in ql, high pairs in qh, scale e / 16), and compares every output with
 *    the value the format defines, computed here in exact double arithmetic and rounded once to f32
 *    (every product in the formats is exact in f32, so that is the one float ggml gives);
 *  - the f64 form equals the f32 form widened;
 *  - hb_quant_fill_random: same bytes for the same (seed, stream), others for another stream or
 *    seed, values within the documented range and spread over it;
 *  - invalid arguments (n not a whole number of blocks, negative, a dtype that is not quantized,
 *    a scale <= 0 or NaN, NULL buffers) are HB_EINVAL and write nothing.
 * Outputs are poisoned with NaN first.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/quant.h"

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static unsigned below(unsigned n) { return (unsigned)(next_u64() % n); }

/* The value of an IEEE binary16 bit pattern, from its definition (finite patterns only). */
static double f16_value(uint16_t h)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    assert_true(e != 31);
    const double v = e == 0 ? ldexp((double)m, -24) : ldexp((double)(1024 + m), e - 25);
    return s ? -v : v;
}
/* A random finite f16 scale: subnormal, small normal, ordinary, large, zero; either sign. */
static uint16_t rand_f16(void)
{
    uint16_t mag;
    switch (below(6)) {
    case 0: mag = (uint16_t)(1 + below(1023)); break;                         /* subnormal */
    case 1: mag = (uint16_t)((1u << 10) | below(1024)); break;                /* smallest normals */
    case 2: mag = (uint16_t)(((8 + below(8)) << 10) | below(1024)); break;    /* 2^-7 .. 2^0 */
    case 3: mag = (uint16_t)(((25 + below(6)) << 10) | below(1024)); break;   /* 2^10 .. 65504 */
    case 4: mag = below(2) ? 0 : 1; break;                                    /* zero, the smallest subnormal */
    default: mag = (uint16_t)(below(31) << 10 | below(1024)); break;
    }
    return (uint16_t)(mag | (below(4) == 0 ? 0x8000 : 0));
}
static uint32_t fbits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static void poison(float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = NAN;
}

/* Dequantize nb blocks with both entry points (outputs poisoned) and check each value's bits against
 * want[] and the f64 form against the f32 one widened. */
static void check_both(hb_dtype d, const void *blocks, const float *want, int64_t n)
{
    float *y = malloc((size_t)n * sizeof *y);
    double *y64 = malloc((size_t)n * sizeof *y64);
    assert_non_null(y);
    assert_non_null(y64);
    poison(y, (size_t)n);
    for (int64_t i = 0; i < n; i++) y64[i] = NAN;
    assert_int_equal(hb_quant_dequantize(d, blocks, y, n), HB_OK);
    assert_int_equal(hb_quant_dequantize_f64(d, blocks, y64, n), HB_OK);
    for (int64_t i = 0; i < n; i++) {
        if (fbits(y[i]) != fbits(want[i]))
            fail_msg("%s element %lld: got %a, want %a", hb_dtype_name(d), (long long)i, (double)y[i], (double)want[i]);
        const double w = (double)y[i];
        if (memcmp(&y64[i], &w, sizeof w)) fail_msg("%s element %lld: f64 %a is not the f32 %a widened", hb_dtype_name(d), (long long)i, y64[i], w);
    }
    free(y);
    free(y64);
}

/* ---- Q8_0: y = d * qs[j] ---- */
static void test_q8_0_exact(void **state)
{
    (void)state;
    enum { NB = 64 };
    hb_block_q8_0 b[NB];
    float want[NB * HB_QK8_0];
    for (int i = 0; i < NB; i++) {
        const uint16_t d = rand_f16();
        b[i].d = d;
        for (int j = 0; j < HB_QK8_0; j++) {
            const int q = (int)below(256) - 128; /* -128 too: the format allows it */
            b[i].qs[j] = (int8_t)q;
            want[i * HB_QK8_0 + j] = (float)(f16_value(d) * q);
        }
    }
    /* a hand-built block: d = the smallest subnormal, q at the extremes */
    b[0].d = 0x0001;
    b[0].qs[0] = -128, b[0].qs[1] = 127, b[0].qs[2] = 0, b[0].qs[3] = 1;
    want[0] = -128 * 0x1p-24f, want[1] = 127 * 0x1p-24f, want[2] = 0.0f, want[3] = 0x1p-24f;
    check_both(HB_Q8_0, b, want, NB * HB_QK8_0);
}

/* ---- Q4_K / Q5_K: y = d sc_j q - dmin mn_j, j = e / 32 ---- */
/* Pack 8 six-bit scales and mins into the 12 bytes: j < 4 in the low 6 bits of bytes j (scale) and
 * j+4 (min); j >= 4: the low 4 bits in byte j+4 (scale low nibble, min high nibble) and the top 2 bits
 * in the top 2 bits of byte j-4 (scale) and byte j (min). */
static void pack_scales(const uint8_t sc[8], const uint8_t mn[8], uint8_t out[12])
{
    memset(out, 0, 12);
    for (int j = 0; j < 4; j++) {
        out[j] |= sc[j];
        out[j + 4] |= mn[j];
    }
    for (int j = 4; j < 8; j++) {
        out[j + 4] = (uint8_t)((sc[j] & 15) | ((mn[j] & 15) << 4));
        out[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
        out[j] |= (uint8_t)((mn[j] >> 4) << 6);
    }
}
/* Quant e (0..255) of a Q4_K/Q5_K block: the 64-element group g = e / 64 uses bytes 32g..32g+31; within
 * the group, element w = e % 64 is byte w % 32's low nibble for w < 32, its high nibble otherwise. */
static void put_q4(uint8_t *qs, int e, unsigned q)
{
    const int g = e / 64, w = e % 64;
    uint8_t *p = &qs[32 * g + w % 32];
    *p = w < 32 ? (uint8_t)((*p & 0xF0) | q) : (uint8_t)((*p & 0x0F) | (q << 4));
}
static void draw_k4(uint8_t sc[8], uint8_t mn[8], int mode)
{
    for (int j = 0; j < 8; j++) {
        sc[j] = mode == 1 ? 63 : mode == 2 ? 48 : (uint8_t)below(64); /* 48: only the top bits set */
        mn[j] = mode == 1 ? 63 : mode == 2 ? 16 : (uint8_t)below(64);
    }
}
static float k4_value(uint16_t d, uint16_t dmin, unsigned sc, unsigned mn, unsigned q)
{
    return (float)(f16_value(d) * sc * q - f16_value(dmin) * mn); /* exact in double, rounded once */
}

static void test_q4_k_exact(void **state)
{
    (void)state;
    enum { NB = 24 };
    hb_block_q4_k b[NB];
    float want[NB * HB_QK_K];
    for (int i = 0; i < NB; i++) {
        uint8_t sc[8], mn[8];
        draw_k4(sc, mn, i < 3 ? i : 0);
        b[i].d = rand_f16();
        b[i].dmin = rand_f16();
        if (i == 3) b[i].d = 0x03FF, b[i].dmin = 0x0001; /* both subnormal */
        pack_scales(sc, mn, b[i].scales);
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int e = 0; e < HB_QK_K; e++) {
            const unsigned q = i == 1 ? 15 : below(16);
            put_q4(b[i].qs, e, q);
            want[i * HB_QK_K + e] = k4_value(b[i].d, b[i].dmin, sc[e / 32], mn[e / 32], q);
        }
    }
    check_both(HB_Q4_K, b, want, NB * HB_QK_K);
}

static void test_q5_k_exact(void **state)
{
    (void)state;
    enum { NB = 24 };
    hb_block_q5_k b[NB];
    float want[NB * HB_QK_K];
    for (int i = 0; i < NB; i++) {
        uint8_t sc[8], mn[8];
        draw_k4(sc, mn, i < 3 ? i : 0);
        b[i].d = rand_f16();
        b[i].dmin = rand_f16();
        if (i == 3) b[i].d = 0x8200, b[i].dmin = 0x0155; /* subnormal, one negative */
        pack_scales(sc, mn, b[i].scales);
        memset(b[i].qs, 0, sizeof b[i].qs);
        memset(b[i].qh, 0, sizeof b[i].qh);
        for (int e = 0; e < HB_QK_K; e++) {
            const unsigned q = i == 1 ? 31 : i == 2 ? 16 : below(32); /* 16: only the fifth bit */
            put_q4(b[i].qs, e, q & 15);
            b[i].qh[e % 32] |= (uint8_t)((q >> 4) << (e / 32)); /* the fifth bit: bit e/32 of byte e%32 */
            want[i * HB_QK_K + e] = k4_value(b[i].d, b[i].dmin, sc[e / 32], mn[e / 32], q);
        }
    }
    check_both(HB_Q5_K, b, want, NB * HB_QK_K);
}

/* ---- Q6_K: y = d * scales[e / 16] * (q - 32), q = 4 low bits in ql | 2 high bits in qh ---- */
/* Element e: half h = e / 128 (ql bytes 64h.., qh bytes 32h..), quarter c = (e % 128) / 32, l = e % 32:
 * the low nibble of ql[64h + 32(c & 1) + l] for c < 2, its high nibble for c >= 2; bits 2c, 2c+1 of
 * qh[32h + l]. */
static void put_q6(hb_block_q6_k *b, int e, unsigned q)
{
    const int h = e / 128, c = (e % 128) / 32, l = e % 32;
    uint8_t *p = &b->ql[64 * h + 32 * (c & 1) + l];
    *p = c < 2 ? (uint8_t)((*p & 0xF0) | (q & 15)) : (uint8_t)((*p & 0x0F) | ((q & 15) << 4));
    b->qh[32 * h + l] |= (uint8_t)((q >> 4) << (2 * c));
}

static void test_q6_k_exact(void **state)
{
    (void)state;
    enum { NB = 24 };
    hb_block_q6_k b[NB];
    float want[NB * HB_QK_K];
    for (int i = 0; i < NB; i++) {
        memset(&b[i], 0, sizeof b[i]);
        b[i].d = i == 1 ? 0x0001 : i == 2 ? 0x83FF : rand_f16();
        int sc[16];
        for (int s = 0; s < 16; s++) {
            sc[s] = i == 1 ? (s & 1 ? -128 : 127) : (int)below(256) - 128; /* negative scales, -128 too */
            b[i].scales[s] = (int8_t)sc[s];
        }
        for (int e = 0; e < HB_QK_K; e++) {
            const unsigned q = i == 1 ? (e & 1 ? 0 : 63) : below(64);
            put_q6(&b[i], e, q);
            want[i * HB_QK_K + e] = (float)(f16_value(b[i].d) * sc[e / 16] * ((int)q - 32));
        }
    }
    check_both(HB_Q6_K, b, want, NB * HB_QK_K);
}

/* ---- hb_quant_fill_random ---- */
static const hb_dtype QT[] = { HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K };

static void test_fill_deterministic(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof QT / sizeof QT[0]; t++) {
        const hb_dtype d = QT[t];
        const int64_t n = 8 * HB_QK_K;
        const size_t bytes = hb_quant_bytes(d, n);
        assert_true(bytes > 0);
        uint8_t *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *e = malloc(bytes);
        memset(a, 0xA5, bytes);
        memset(b, 0x5A, bytes);
        assert_int_equal(hb_quant_fill_random(d, a, n, 42, 7, 1.0 / 64), HB_OK);
        assert_int_equal(hb_quant_fill_random(d, b, n, 42, 7, 1.0 / 64), HB_OK);
        assert_memory_equal(a, b, bytes);
        assert_int_equal(hb_quant_fill_random(d, c, n, 42, 8, 1.0 / 64), HB_OK);
        assert_int_equal(hb_quant_fill_random(d, e, n, 43, 7, 1.0 / 64), HB_OK);
        assert_memory_not_equal(a, c, bytes);
        assert_memory_not_equal(a, e, bytes);
        /* a prefix of the blocks is the same as the fill of fewer blocks */
        memset(b, 0x5A, bytes);
        assert_int_equal(hb_quant_fill_random(d, b, n / 2, 42, 7, 1.0 / 64), HB_OK);
        assert_memory_equal(a, b, bytes / 2);
        assert_int_equal(b[bytes / 2], 0x5A); /* nothing written past n / 2 */
        free(a), free(b), free(c), free(e);
    }
}

/* Values in the documented range (quant.h): [-scale, scale] for Q8_0 and Q6_K, [-scale, 2 scale] for
 * Q4_K and Q5_K, widened by the f16 rounding of the block scales (2^-11 relative; 2^-25 absolute times
 * the largest multiplier where a scale is subnormal); and spread over it. */
static void test_fill_range(void **state)
{
    (void)state;
    const double scales[] = { 1.0 / 64, 1.0, 0.37 };
    for (size_t t = 0; t < sizeof QT / sizeof QT[0]; t++)
        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
            const hb_dtype d = QT[t];
            const double s = scales[k];
            const int64_t n = 64 * HB_QK_K;
            void *blk = malloc(hb_quant_bytes(d, n));
            float *y = malloc((size_t)n * sizeof *y);
            poison(y, (size_t)n);
            assert_int_equal(hb_quant_fill_random(d, blk, n, 1 + k, t, s), HB_OK);
            assert_int_equal(hb_quant_dequantize(d, blk, y, n), HB_OK);
            const double hi = (d == HB_Q4_K || d == HB_Q5_K) ? 2 * s : s, lo = -s;
            const double slack = 2048.0 * 0x1p-25 + hi * 0x1p-10;
            double mx = -INFINITY, mn = INFINITY, sum = 0;
            for (int64_t i = 0; i < n; i++) {
                assert_false(isnan(y[i]));
                if ((double)y[i] > hi + slack || (double)y[i] < lo - slack)
                    fail_msg("%s scale %g: value %g outside [%g, %g]", hb_dtype_name(d), s, (double)y[i], lo, hi);
                mx = fmax(mx, (double)y[i]), mn = fmin(mn, (double)y[i]), sum += (double)y[i];
            }
            /* spread: the extremes reach at least a third of the range's ends, the mean near 0 */
            assert_true(mx > s / 3 && mn < -s / 3);
            assert_true(fabs(sum / (double)n) < 0.1 * s);
            free(blk);
            free(y);
        }
}

/* ---- invalid arguments ---- */
static void test_invalid(void **state)
{
    (void)state;
    uint8_t blk[2 * sizeof(hb_block_q6_k)];
    float y[2 * HB_QK_K];
    double y64[2 * HB_QK_K];
    memset(blk, 0, sizeof blk);
    for (size_t t = 0; t < sizeof QT / sizeof QT[0]; t++) {
        const hb_dtype d = QT[t];
        const int be = hb_quant_block_elems(d);
        const int64_t bad[] = { 1, be - 1, be + 1, be + 16, -be, INT64_MIN };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            poison(y, 2 * HB_QK_K);
            assert_int_equal(hb_quant_dequantize(d, blk, y, bad[i]), HB_EINVAL);
            assert_int_equal(hb_quant_dequantize_f64(d, blk, y64, bad[i]), HB_EINVAL);
            assert_int_equal(hb_quant_fill_random(d, blk, bad[i], 1, 1, 1.0), HB_EINVAL);
            for (int j = 0; j < 2 * HB_QK_K; j++) assert_true(isnan(y[j])); /* nothing written */
            assert_int_equal(hb_quant_bytes(d, bad[i]), 0);
        }
        assert_int_equal(hb_quant_dequantize(d, NULL, y, be), HB_EINVAL);
        assert_int_equal(hb_quant_dequantize(d, blk, NULL, be), HB_EINVAL);
        assert_int_equal(hb_quant_fill_random(d, NULL, be, 1, 1, 1.0), HB_EINVAL);
        assert_int_equal(hb_quant_fill_random(d, blk, be, 1, 1, 0.0), HB_EINVAL);
        assert_int_equal(hb_quant_fill_random(d, blk, be, 1, 1, -1.0), HB_EINVAL);
        assert_int_equal(hb_quant_fill_random(d, blk, be, 1, 1, NAN), HB_EINVAL);
        /* n = 0: nothing to do, OK even with NULL buffers */
        assert_int_equal(hb_quant_dequantize(d, NULL, NULL, 0), HB_OK);
        assert_int_equal(hb_quant_fill_random(d, NULL, 0, 1, 1, 1.0), HB_OK);
    }
    const hb_dtype dense[] = { HB_F32, HB_TF32, HB_F16, HB_BF16, HB_DTYPE_COUNT, (hb_dtype)-1 };
    for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++) {
        poison(y, 2 * HB_QK_K);
        assert_int_equal(hb_quant_dequantize(dense[i], blk, y, 256), HB_EINVAL);
        assert_int_equal(hb_quant_dequantize_f64(dense[i], blk, y64, 256), HB_EINVAL);
        assert_int_equal(hb_quant_fill_random(dense[i], blk, 256, 1, 1, 1.0), HB_EINVAL);
        assert_true(isnan(y[0]));
        assert_int_equal(hb_quant_block_elems(dense[i]), 0);
        assert_int_equal(hb_quant_bytes(dense[i], 256), 0);
        assert_int_equal(hb_quant_gguf_type(dense[i]), -1);
    }
    /* sizes and GGUF ids (ggml's ggml_type enum, docs/gguf.md) */
    assert_int_equal(hb_quant_bytes(HB_Q8_0, 64), 68);
    assert_int_equal(hb_quant_bytes(HB_Q4_K, 512), 288);
    assert_int_equal(hb_quant_bytes(HB_Q5_K, 256), 176);
    assert_int_equal(hb_quant_bytes(HB_Q6_K, 768), 630);
    assert_int_equal(hb_quant_gguf_type(HB_Q8_0), 8);
    assert_int_equal(hb_quant_gguf_type(HB_Q4_K), 12);
    assert_int_equal(hb_quant_gguf_type(HB_Q5_K), 13);
    assert_int_equal(hb_quant_gguf_type(HB_Q6_K), 14);
}

/* hb_quant_blocks_whole: matmul's k and dequantize's n a positive whole number of blocks, on random
 * values; other dtypes always pass; the reason names the axis and the value */
static void test_blocks_whole(void **state)
{
    (void)state;
    static const hb_dtype ds[5] = {HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K, HB_F32};
    for (int it = 0; it < 4000; it++) {
        hb_case c;
        memset(&c, 0, sizeof c);
        c.dtype = ds[next_u64() % 5];
        c.op = next_u64() % 2 ? HB_OP_MATMUL : HB_OP_DEQUANTIZE;
        const int be = hb_quant_block_elems(c.dtype);
        /* often a multiple, sometimes off by one, sometimes zero or negative */
        int64_t v = (int64_t)(next_u64() % 9) * (be ? be : 32) + (next_u64() % 3 == 0 ? (int64_t)(next_u64() % 5) - 2 : 0);
        if (c.op == HB_OP_DEQUANTIZE) c.shape.n = v, c.shape.k = 7;
        else c.shape.k = v, c.shape.n = 7;
        char why[160] = "";
        const int want = be == 0 || (v > 0 && v % be == 0);
        assert_int_equal(hb_quant_blocks_whole(&c, why, sizeof why), want);
        if (!want) {
            char tag[64];
            snprintf(tag, sizeof tag, "%s=%lld ", c.op == HB_OP_DEQUANTIZE ? "n" : "k", (long long)v);
            if (!strstr(why, tag)) fail_msg("reason \"%s\" lacks \"%s\"", why, tag);
        } else {
            assert_string_equal(why, "");
        }
        assert_int_equal(hb_quant_blocks_whole(&c, NULL, 0), want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_q8_0_exact),
        cmocka_unit_test(test_q4_k_exact),
        cmocka_unit_test(test_q5_k_exact),
        cmocka_unit_test(test_q6_k_exact),
        cmocka_unit_test(test_fill_deterministic),
        cmocka_unit_test(test_fill_range),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_blocks_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
