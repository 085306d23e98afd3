/*
 * test_thresholds.c - the regression threshold's scopes (analysis/compare.h hb_cmp_parse_threshold,
 * hb_cmp_threshold_for): a default, a backend type or instance, an op, an op on a backend; the most
 * specific scope wins (checked on random sets of scopes against the stated order); malformed values
 * and unknown ops are errors with a reason.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/compare.h"

static void test_threshold_parse(void **state)
{
    (void)state;
    hb_cmp_options o;
    char err[256];
    hb_cmp_options_default(&o);
    assert_true(o.threshold == 0.05);
    assert_int_equal(hb_cmp_parse_threshold(&o, "7%", err, sizeof err), HB_OK);
    assert_true(fabs(o.threshold - 0.07) < 1e-15);
    assert_int_equal(hb_cmp_parse_threshold(&o, "0.04", err, sizeof err), HB_OK);
    assert_true(fabs(o.threshold - 0.04) < 1e-15);
    assert_int_equal(hb_cmp_parse_threshold(&o, "5", err, sizeof err), HB_OK);
    assert_true(fabs(o.threshold - 0.05) < 1e-15);
    assert_int_equal(hb_cmp_parse_threshold(&o, "cuda=3%", err, sizeof err), HB_OK);
    assert_int_equal(hb_cmp_parse_threshold(&o, "opencl:0:1=10%", err, sizeof err), HB_OK);
    assert_int_equal(hb_cmp_parse_threshold(&o, "opencl=8%", err, sizeof err), HB_OK);
    assert_int_equal(hb_cmp_parse_threshold(&o, "cuda=2%", err, sizeof err), HB_OK); /* replaces */
    assert_int_equal(o.nper_backend, 3);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cuda:0", NULL) - 0.02) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cuda", NULL) - 0.02) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "opencl:0:1", NULL) - 0.10) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "opencl:0:0", NULL) - 0.08) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cpu", NULL) - 0.05) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cudax:0", NULL) - 0.05) < 1e-15);
    /* scoped to an op, on every backend or one: the most specific scope wins */
    assert_int_equal(hb_cmp_parse_threshold(&o, "dequantize=4%", err, sizeof err), HB_OK);
    assert_int_equal(hb_cmp_parse_threshold(&o, "cuda/matmul=6%", err, sizeof err), HB_OK);
    assert_int_equal(o.nper_backend, 5);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cuda:0", "dequantize") - 0.04) < 1e-15); /* op over type */
    assert_true(fabs(hb_cmp_threshold_for(&o, "cpu", "dequantize") - 0.04) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cuda:0", "matmul") - 0.06) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cuda:0", "add") - 0.02) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "opencl:0:0", "matmul") - 0.08) < 1e-15);
    assert_true(fabs(hb_cmp_threshold_for(&o, "cuda:0", NULL) - 0.02) < 1e-15);
    /* the precedence on random sets of scopes: instance/op, type/op, op, instance, type, default */
    const char *kinds[6] = {"cuda:1/gelu", "cuda/gelu", "gelu", "cuda:1", "cuda", "cpu/gelu"};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int trial = 0; trial < 200; trial++) {
        hb_cmp_options q;
        hb_cmp_options_default(&q);
        double val[6];
        int on[6];
        for (int k = 0; k < 6; k++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            on[k] = (int)(x & 1);
            val[k] = (double)((x >> 8) % 900 + 1) / 1000;
            char arg[64];
            snprintf(arg, sizeof arg, "%s=%.3f", kinds[k], val[k]);
            if (on[k]) assert_int_equal(hb_cmp_parse_threshold(&q, arg, err, sizeof err), HB_OK);
        }
        double want = q.threshold;
        for (int k = 4; k >= 0; k--) /* kinds[5] names another backend: never this case's */
            if (on[k]) want = val[k];
        assert_true(fabs(hb_cmp_threshold_for(&q, "cuda:1", "gelu") - want) < 1e-12);
        assert_true(fabs(hb_cmp_threshold_for(&q, "cpu", "gelu") - (on[5] ? val[5] : on[2] ? val[2] : q.threshold)) < 1e-12);
    }
    const char *bad[] = { "", "abc", "5%%", "-1%", "cuda=", "=3%", "cuda=x", "2000%", "5% x", "cuda/=3%", "/add=3%",
                          "cuda/dequantise=3%" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(hb_cmp_parse_threshold(&o, bad[i], err, sizeof err), HB_EINVAL);
        assert_true(err[0] != 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threshold_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
