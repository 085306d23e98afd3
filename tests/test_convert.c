/*
 * test_convert.c - harness/core/convert.c: known f16/bf16 encodings (round to nearest even, subnormals,
 * overflow, inf, NaN), an exhaustive f16 round trip, a property check of f32->f16 rounding on random
 * bit patterns, and random arrays through hb_convert on both the serial and the parallel path
 * (>= 64 Ki elements), with and without streaming stores, unaligned and odd-sized, into destinations
 * poisoned with NaN (f32/f64) or 0xAAAA (f16/bf16) beforehand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/convert.h"
#include "test_config.h"

static float f_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
/* 64-byte aligned, for the streaming-store alignment cases */
static void *amalloc(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static double next_unif(void) /* [-1, 1) */
{
    return (double)(next_u64() >> 11) * 0x1p-52 - 1.0;
}

static void test_sizes(void **state)
{
    (void)state;
    assert_int_equal(hb_elem_size(HB_ELEM_F64), 8);
    assert_int_equal(hb_elem_size(HB_ELEM_F32), 4);
    assert_int_equal(hb_elem_size(HB_ELEM_F16), 2);
    assert_int_equal(hb_elem_size(HB_ELEM_BF16), 2);
    assert_int_equal(hb_elem_of_dtype(HB_F32), HB_ELEM_F32);
    assert_int_equal(hb_elem_of_dtype(HB_TF32), HB_ELEM_F32);
    assert_int_equal(hb_elem_of_dtype(HB_F16), HB_ELEM_F16);
    assert_int_equal(hb_elem_of_dtype(HB_BF16), HB_ELEM_BF16);
}

/* f32 -> f16 through the scalar helper and through hb_convert (vector path when n >= 16). */
static uint16_t to_f16_both(float x)
{
    float src[32];
    uint16_t dst[32];
    for (int i = 0; i < 32; i++)
        src[i] = x;
    memset(dst, 0xAA, sizeof dst);
    hb_convert(dst, HB_ELEM_F16, src, HB_ELEM_F32, 32);
    uint16_t s = hb_f32_to_f16(x);
    for (int i = 0; i < 32; i++)
        assert_int_equal(dst[i], s);
    return s;
}

static void test_f16_known(void **state)
{
    (void)state;
    assert_int_equal(to_f16_both(1.0f), 0x3c00);
    assert_int_equal(to_f16_both(-2.0f), 0xc000);
    assert_int_equal(to_f16_both(0.0f), 0x0000);
    assert_int_equal(to_f16_both(-0.0f), 0x8000);
    assert_int_equal(to_f16_both(65504.0f), 0x7bff);         /* largest finite */
    assert_int_equal(to_f16_both(65519.0f), 0x7bff);         /* below the halfway point */
    assert_int_equal(to_f16_both(65520.0f), 0x7c00);         /* halfway, odd mantissa: up to inf */
    assert_int_equal(to_f16_both(1e9f), 0x7c00);
    assert_int_equal(to_f16_both(-1e9f), 0xfc00);
    assert_int_equal(to_f16_both(0x1p-14f), 0x0400);         /* smallest normal */
    assert_int_equal(to_f16_both(0x1p-24f), 0x0001);         /* smallest subnormal */
    assert_int_equal(to_f16_both(0x1p-25f), 0x0000);         /* tie between 0 and 1 ulp: even (0) */
    assert_int_equal(to_f16_both(0x1.8p-24f), 0x0002);       /* tie 1.5 ulp: even (2) */
    assert_int_equal(to_f16_both(0x1.4p-24f), 0x0001);
    assert_int_equal(to_f16_both(0x1.ff8p-15f), 0x03ff);     /* largest subnormal */
    assert_int_equal(to_f16_both(0x1.ffcp-15f), 0x0400);     /* tie 1023.5 ulp: even, the smallest normal */
    assert_int_equal(to_f16_both(1.0f + 0x1p-11f), 0x3c00);  /* tie: even */
    assert_int_equal(to_f16_both(1.0f + 0x1.8p-10f), 0x3c02); /* 1.5 ulp: tie to even (2) */
    assert_int_equal(to_f16_both(1.0f + 0x1p-10f), 0x3c01);
    assert_int_equal(to_f16_both(f_of(0x00000001u)), 0x0000); /* f32 subnormal */
    assert_int_equal(to_f16_both(INFINITY), 0x7c00);
    assert_int_equal(to_f16_both(-INFINITY), 0xfc00);
    uint16_t n = to_f16_both(NAN);
    assert_int_equal(n & 0x7c00, 0x7c00);
    assert_true((n & 0x3ff) != 0);
    n = to_f16_both(f_of(0xff800001u)); /* signalling NaN, negative, payload in the low bits only */
    assert_int_equal(n & 0xfc00, 0xfc00);
    assert_true((n & 0x3ff) != 0);

    assert_true(hb_f16_to_f32(0x3c00) == 1.0f);
    assert_true(hb_f16_to_f32(0x7bff) == 65504.0f);
    assert_true(hb_f16_to_f32(0x0001) == 0x1p-24f);
    assert_true(hb_f16_to_f32(0x03ff) == 0x1.ff8p-15f);
    assert_true(hb_f16_to_f32(0x8000) == 0.0f && signbit(hb_f16_to_f32(0x8000)));
    assert_true(isinf(hb_f16_to_f32(0x7c00)) && hb_f16_to_f32(0x7c00) > 0);
    assert_true(isinf(hb_f16_to_f32(0xfc00)) && hb_f16_to_f32(0xfc00) < 0);
    assert_true(isnan(hb_f16_to_f32(0x7e00)));
}

/* Every f16 pattern: f16 -> f32 -> f16 is the identity (NaNs stay NaN with the quiet bit), and the
 * scalar and vector f16 -> f32 paths agree bit for bit. */
static void test_f16_exhaustive(void **state)
{
    (void)state;
    uint16_t *h = malloc(65536 * sizeof *h), *back = malloc(65536 * sizeof *back);
    float *f = malloc(65536 * sizeof *f);
    assert_non_null(h);
    assert_non_null(back);
    assert_non_null(f);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    for (uint32_t i = 0; i < 65536; i++)
        f[i] = NAN;
    hb_convert(f, HB_ELEM_F32, h, HB_ELEM_F16, 65536);
    memset(back, 0xAA, 65536 * sizeof *back);
    hb_convert(back, HB_ELEM_F16, f, HB_ELEM_F32, 65536);
    for (uint32_t i = 0; i < 65536; i++) {
        uint32_t a = bits_of(f[i]), b = bits_of(hb_f16_to_f32((uint16_t)i));
        int is_nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        if (is_nan) {
            assert_true(isnan(f[i]));
            assert_int_equal(a, b); /* both paths quiet a signalling NaN */
            assert_int_equal(back[i], (uint16_t)(i | 0x200));
            assert_int_equal(hb_f32_to_f16(f[i]), (uint16_t)(i | 0x200));
        } else {
            assert_int_equal(a, b);
            assert_int_equal(back[i], i);
            assert_int_equal(hb_f32_to_f16(f[i]), i);
        }
    }
    free(h);
    free(back);
    free(f);
}

/* Random f32 bit patterns: the f16 result is the nearest representable value, ties to even,
 * checked against the neighbours in double arithmetic (exact for these magnitudes). */
static void test_f16_rounding_property(void **state)
{
    (void)state;
    enum { N = 200000 };
    float *x = malloc(N * sizeof *x);
    uint16_t *h = malloc(N * sizeof *h);
    assert_non_null(x);
    assert_non_null(h);
    for (int i = 0; i < N; i++) {
        /* exponents around the f16 range: |x| in [2^-26, 2^17) */
        uint32_t e = 101u + (uint32_t)(next_u64() % 43u);
        uint32_t b = (uint32_t)(next_u64() & 0x807fffffu) | (e << 23);
        if (i % 7 == 0)
            b = (b & 0xffffe000u) | 0x1000u; /* exact ties at the f16 mantissa boundary */
        x[i] = f_of(b);
    }
    memset(h, 0xAA, N * sizeof *h);
    hb_convert(h, HB_ELEM_F16, x, HB_ELEM_F32, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(h[i], hb_f32_to_f16(x[i]));
        double v = fabs((double)x[i]);
        uint16_t m = h[i] & 0x7fff;
        if (m == 0x7c00) { /* overflow: only from values at or past the halfway point 65520 */
            assert_true(v >= 65520.0);
            continue;
        }
        double got = fabs((double)hb_f16_to_f32(m));
        double err = fabs(got - v);
        double lo = m > 0 ? fabs((double)hb_f16_to_f32((uint16_t)(m - 1))) : -1.0;
        double hi = fabs((double)hb_f16_to_f32((uint16_t)(m + 1)));
        if (lo >= 0.0)
            assert_true(err <= fabs(lo - v));
        assert_true(err <= fabs(hi - v));
        if ((lo >= 0.0 && err == fabs(lo - v)) || err == fabs(hi - v))
            assert_int_equal(m & 1, 0); /* a tie went to the even neighbour */
        assert_int_equal(h[i] & 0x8000, (bits_of(x[i]) >> 16) & 0x8000);
    }
    free(x);
    free(h);
}

static void test_bf16_known(void **state)
{
    (void)state;
    assert_int_equal(hb_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(hb_f32_to_bf16(-2.0f), 0xc000);
    assert_int_equal(hb_f32_to_bf16(f_of(0x3f808000u)), 0x3f80); /* tie, even stays */
    assert_int_equal(hb_f32_to_bf16(f_of(0x3f818000u)), 0x3f82); /* tie, odd rounds up */
    assert_int_equal(hb_f32_to_bf16(f_of(0x3f808001u)), 0x3f81);
    assert_int_equal(hb_f32_to_bf16(f_of(0x3f807fffu)), 0x3f80);
    assert_int_equal(hb_f32_to_bf16(f_of(0x7f7fffffu)), 0x7f80); /* FLT_MAX rounds to inf */
    assert_int_equal(hb_f32_to_bf16(f_of(0x00008000u)), 0x0000); /* subnormal tie to even */
    assert_int_equal(hb_f32_to_bf16(f_of(0x00018000u)), 0x0002);
    assert_int_equal(hb_f32_to_bf16(f_of(0x00010000u)), 0x0001); /* exact subnormal */
    assert_int_equal(hb_f32_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(hb_f32_to_bf16(-INFINITY), 0xff80);
    uint16_t n = hb_f32_to_bf16(f_of(0x7f800001u)); /* NaN whose payload would round away */
    assert_int_equal(n & 0x7f80, 0x7f80);
    assert_true((n & 0x7f) != 0);
    assert_true(hb_bf16_to_f32(0x3f80) == 1.0f);
    assert_true(isnan(hb_bf16_to_f32(0x7fc0)));
    assert_true(hb_bf16_to_f32(0x0001) == f_of(0x00010000u));
    /* vector path agrees with the scalar one on special values */
    float src[40];
    uint16_t dst[40];
    const uint32_t pats[8] = { 0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x00018000u,
                               0x7f800000u, 0xff800001u, 0x80000000u, 0x3f807fffu };
    for (int i = 0; i < 40; i++)
        src[i] = f_of(pats[i % 8]);
    memset(dst, 0xAA, sizeof dst);
    hb_convert(dst, HB_ELEM_BF16, src, HB_ELEM_F32, 40);
    for (int i = 0; i < 40; i++)
        assert_int_equal(dst[i], hb_f32_to_bf16(src[i]));
}

/* Random arrays through every conversion pair, each element checked against the scalar definition.
 * off shifts both arrays by one element from their 64-byte aligned allocation. */
static void check_all_pairs(size_t n, size_t off)
{
    double *d = amalloc((n + 1) * 8), *d2 = amalloc((n + 1) * 8);
    float *f = amalloc((n + 1) * 4), *f2 = amalloc((n + 1) * 4);
    uint16_t *h = amalloc((n + 1) * 2), *b = amalloc((n + 1) * 2), *h2 = amalloc((n + 1) * 2);
    assert_true(d && d2 && f && f2 && h && b && h2);
    double *D = d + off, *D2 = d2 + off;
    float *F = f + off, *F2 = f2 + off;
    uint16_t *H = h + off, *B = b + off, *H2 = h2 + off;
    for (size_t i = 0; i < n; i++)
        D[i] = next_unif() * 1000.0;
    D[0] = 1e300; /* overflows f32: inf */
    if (n > 3) {
        D[1] = 1e-300; /* underflows to 0 */
        D[2] = -0.0;
        D[3] = NAN;
    }

    for (size_t i = 0; i < n; i++)
        F[i] = NAN;
    hb_convert(F, HB_ELEM_F32, D, HB_ELEM_F64, n);
    for (size_t i = 0; i < n; i++) {
        float want = (float)D[i];
        if (isnan(want))
            assert_true(isnan(F[i]));
        else
            assert_int_equal(bits_of(F[i]), bits_of(want));
    }

    for (size_t i = 0; i < n; i++)
        D2[i] = NAN;
    hb_convert(D2, HB_ELEM_F64, F, HB_ELEM_F32, n);
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(F[i]) ? isnan(D2[i]) : D2[i] == (double)F[i]);

    memset(H, 0xAA, n * 2);
    hb_convert(H, HB_ELEM_F16, F, HB_ELEM_F32, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(H[i], hb_f32_to_f16(F[i]));

    memset(H2, 0xAA, n * 2);
    hb_convert(H2, HB_ELEM_F16, D, HB_ELEM_F64, n); /* through f32 (convert.h) */
    assert_memory_equal(H2, H, n * 2);

    for (size_t i = 0; i < n; i++)
        F2[i] = NAN;
    hb_convert(F2, HB_ELEM_F32, H, HB_ELEM_F16, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(bits_of(F2[i]), bits_of(hb_f16_to_f32(H[i])));

    for (size_t i = 0; i < n; i++)
        D2[i] = NAN;
    hb_convert(D2, HB_ELEM_F64, H, HB_ELEM_F16, n);
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(F2[i]) ? isnan(D2[i]) : D2[i] == (double)F2[i]);

    memset(B, 0xAA, n * 2);
    hb_convert(B, HB_ELEM_BF16, F, HB_ELEM_F32, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(B[i], hb_f32_to_bf16(F[i]));

    memset(H2, 0xAA, n * 2);
    hb_convert(H2, HB_ELEM_BF16, D, HB_ELEM_F64, n);
    assert_memory_equal(H2, B, n * 2);

    for (size_t i = 0; i < n; i++)
        F2[i] = NAN;
    hb_convert(F2, HB_ELEM_F32, B, HB_ELEM_BF16, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(bits_of(F2[i]), (uint32_t)B[i] << 16);

    for (size_t i = 0; i < n; i++)
        D2[i] = NAN;
    hb_convert(D2, HB_ELEM_F64, B, HB_ELEM_BF16, n);
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(F2[i]) ? isnan(D2[i]) : D2[i] == (double)F2[i]);

    memset(H2, 0xAA, n * 2);
    hb_convert(H2, HB_ELEM_BF16, H, HB_ELEM_F16, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(H2[i], hb_f32_to_bf16(hb_f16_to_f32(H[i])));
    memset(H2, 0xAA, n * 2);
    hb_convert(H2, HB_ELEM_F16, B, HB_ELEM_BF16, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(H2[i], hb_f32_to_f16(hb_bf16_to_f32(B[i])));

    /* same type: a copy */
    for (size_t i = 0; i < n; i++)
        D2[i] = NAN;
    hb_convert(D2, HB_ELEM_F64, D, HB_ELEM_F64, n);
    assert_memory_equal(D2, D, n * 8);
    for (size_t i = 0; i < n; i++)
        F2[i] = NAN;
    hb_convert(F2, HB_ELEM_F32, F, HB_ELEM_F32, n);
    assert_memory_equal(F2, F, n * 4);

    free(d); free(d2); free(f); free(f2); free(h); free(b); free(h2);
}

static void test_arrays_small(void **state)
{
    (void)state;
    const size_t sizes[] = { 1, 2, 15, 16, 17, 1000, 4099, 65535 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_all_pairs(sizes[i], 0);
        check_all_pairs(sizes[i], 1);
    }
}

/* Above 64 Ki elements (parallel path); 1.5 Mi f32 = 6 MiB stays under the streaming threshold
 * set in main (4 MiB is crossed by the f64 and f32 destinations of the larger size only). */
static void test_arrays_parallel(void **state)
{
    (void)state;
    check_all_pairs(65536, 0);
    check_all_pairs(65536 + 1, 1);
    check_all_pairs(((size_t)1 << 20) - 3, 1);  /* 4 MiB f32 destination, 8 MiB f64: both sides */
    check_all_pairs(((size_t)3 << 20) + 7, 0);  /* 12 MiB f32: streaming stores */
    check_all_pairs(((size_t)3 << 20) + 7, 1);  /* unaligned streaming head */
}

/* n = 0 and null pointers do nothing and do not crash. */
static void test_degenerate(void **state)
{
    (void)state;
    float f[4] = { NAN, NAN, NAN, NAN };
    double d[4] = { 1, 2, 3, 4 };
    hb_convert(f, HB_ELEM_F32, d, HB_ELEM_F64, 0);
    assert_true(isnan(f[0]));
    hb_convert(NULL, HB_ELEM_F32, d, HB_ELEM_F64, 4);
    hb_convert(f, HB_ELEM_F32, NULL, HB_ELEM_F64, 4);
    hb_convert(f, (hb_elem)9, d, HB_ELEM_F64, 4);
    assert_true(isnan(f[3]));
}

int main(void)
{
    /* Streaming stores from 4 MiB of destination, so that both store paths run in this test. */
    setenv("HB_CONVERT_NT_MIN", "4194304", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_f16_known),
        cmocka_unit_test(test_f16_exhaustive),
        cmocka_unit_test(test_f16_rounding_property),
        cmocka_unit_test(test_bf16_known),
        cmocka_unit_test(test_arrays_small),
        cmocka_unit_test(test_arrays_parallel),
        cmocka_unit_test(test_degenerate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
