/*
 * test_verify.c - the one output check (measure/verify.h) that single ops, chains and plan replays use:
 *   - on random outputs of every element type (sizes that span several conversion blocks), the error
 *     equals a long-double recomputation of ||out - ref|| / ||ref||;
 *   - rule 1: a planted NaN or Inf in the output gives +INFINITY and is counted;
 *   - rule 2: a NaN reference element is skipped (counted, fraction < 1) with HB_VERIFY_SUBSAMPLED and
 *     makes the error NaN without it; an infinite reference element makes it NaN either way;
 *   - rule 3: a zero reference gives the absolute error ||out||;
 *   - the poison is NaN in every element type, a poisoned output fails rule 1 in full, and the
 *     buffer form uploads it exactly when asked.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/measure.h"
#include "measure/verify.h"

static const hb_elem elems[] = {HB_ELEM_F64, HB_ELEM_F32, HB_ELEM_F16, HB_ELEM_BF16};

/* out (element type el, n) = ref + noise of relative size eps; *o64 gets out read back as f64 */
static void *noisy(const double *ref, size_t n, hb_elem el, double eps, unsigned long long stream, double **o64)
{
    double *d = malloc(n * sizeof *d), *noise = malloc(n * sizeof *noise);
    assert_non_null(d);
    assert_non_null(noise);
    hb_fill_random(noise, n, 77, stream);
    for (size_t i = 0; i < n; i++) d[i] = ref[i] + eps * noise[i];
    void *out = malloc(n * hb_elem_size(el) + 8);
    assert_non_null(out);
    hb_convert(out, el, d, HB_ELEM_F64, n);
    hb_convert(d, HB_ELEM_F64, out, el, n);
    free(noise);
    *o64 = d;
    return out;
}

static double expect_rel(const double *o, const double *ref, size_t n)
{
    long double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) { num += (long double)(o[i] - ref[i]) * (o[i] - ref[i]); den += (long double)ref[i] * ref[i]; }
    return (double)sqrtl(num / den);
}

static void test_random_values(void **state)
{
    (void)state;
    for (int rep = 0; rep < 6; rep++) {
        size_t n = 1 + (size_t)(rand() % 9000); /* up to four blocks of 2048 */
        double *ref = malloc(n * sizeof *ref);
        assert_non_null(ref);
        hb_fill_random(ref, n, 1234 + (unsigned long long)rep, 1);
        for (size_t k = 0; k < sizeof elems / sizeof elems[0]; k++) {
            double *o64;
            void *out = noisy(ref, n, elems[k], 1e-3, (unsigned long long)(rep * 8 + (int)k), &o64);
            hb_verify v;
            memset(&v, 0xff, sizeof v);
            double rel = hb_verify_rel_error(out, elems[k], ref, n, 0, &v);
            double want = expect_rel(o64, ref, n);
            assert_true(want > 0);
            assert_true(fabs(rel - want) <= 1e-9 * want);
            assert_true(rel == v.rel);
            assert_int_equal(v.nonfinite, 0);
            assert_int_equal(v.skipped, 0);
            assert_int_equal(v.compared, (long long)n);
            assert_true(v.fraction == 1.0);
            /* the flag changes nothing on a finite reference */
            assert_true(hb_verify_rel_error(out, elems[k], ref, n, HB_VERIFY_SUBSAMPLED, NULL) == rel);
            free(out);
            free(o64);
        }
        free(ref);
    }
}

static void test_nonfinite_output(void **state)
{
    (void)state;
    size_t n = 5000;
    double ref[5000];
    hb_fill_random(ref, n, 9, 2);
    float out[5000];
    for (int planted = 0; planted < 2; planted++) {
        for (size_t i = 0; i < n; i++) out[i] = (float)ref[i];
        size_t a = (size_t)rand() % n, b = (a + 2049) % n; /* two elements in different blocks */
        out[a] = planted ? INFINITY : NAN;
        out[b] = -INFINITY;
        hb_verify v;
        double rel = hb_verify_rel_error(out, HB_ELEM_F32, ref, n, HB_VERIFY_SUBSAMPLED, &v);
        assert_true(isinf(rel) && rel > 0);
        assert_int_equal(v.nonfinite, 2);
        assert_int_equal(v.compared, (long long)n - 2);
        /* a non-finite output wins over an unusable reference: still +INFINITY */
        ref[7] = INFINITY;
        assert_true(isinf(hb_verify_rel_error(out, HB_ELEM_F32, ref, n, 0, NULL)));
        ref[7] = 0.5;
    }
}

static void test_nan_and_inf_reference(void **state)
{
    (void)state;
    size_t n = 3000;
    double *ref = malloc(n * sizeof *ref), *o = malloc(n * sizeof *o);
    assert_non_null(ref);
    assert_non_null(o);
    hb_fill_random(ref, n, 5, 3);
    hb_fill_random(o, n, 5, 4);
    for (size_t i = 0; i < n; i++) o[i] = ref[i] + 1e-4 * o[i];
    double full = expect_rel(o, ref, n);
    /* subsampled rows: every third element not computed */
    size_t nan_count = 0;
    long double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 3 == 1) { ref[i] = NAN; nan_count++; continue; }
        num += (long double)(o[i] - ref[i]) * (o[i] - ref[i]);
        den += (long double)ref[i] * ref[i];
    }
    hb_verify v;
    double rel = hb_verify_rel_error(o, HB_ELEM_F64, ref, n, HB_VERIFY_SUBSAMPLED, &v);
    double want = (double)sqrtl(num / den);
    assert_true(fabs(rel - want) <= 1e-12 * want);
    assert_true(rel != full);
    assert_int_equal(v.skipped, (long long)nan_count);
    assert_int_equal(v.compared, (long long)(n - nan_count));
    assert_true(fabs(v.fraction - (double)(n - nan_count) / (double)n) < 1e-15);
    /* without the flag the reference is unusable: NaN, which fails every tolerance test */
    rel = hb_verify_rel_error(o, HB_ELEM_F64, ref, n, 0, &v);
    assert_true(isnan(rel));
    assert_false(rel <= 1e30);
    assert_int_equal(v.skipped, 0);
    /* an infinite reference element: NaN with or without the flag */
    hb_fill_random(ref, n, 5, 3);
    ref[n - 1] = -INFINITY;
    assert_true(isnan(hb_verify_rel_error(o, HB_ELEM_F64, ref, n, HB_VERIFY_SUBSAMPLED, NULL)));
    assert_true(isnan(hb_verify_rel_error(o, HB_ELEM_F64, ref, n, 0, NULL)));
    free(ref);
    free(o);
}

static void test_zero_reference(void **state)
{
    (void)state;
    size_t n = 4100;
    double *ref = calloc(n, sizeof *ref), *o = malloc(n * sizeof *o);
    assert_non_null(ref);
    assert_non_null(o);
    hb_fill_random(o, n, 11, 5);
    long double s = 0;
    for (size_t i = 0; i < n; i++) { o[i] *= 1e-6; s += (long double)o[i] * o[i]; }
    double rel = hb_verify_rel_error(o, HB_ELEM_F64, ref, n, 0, NULL);
    assert_true(fabs(rel - (double)sqrtl(s)) <= 1e-12 * (double)sqrtl(s));
    /* an exact output of a zero reference: 0 */
    memset(o, 0, n * sizeof *o);
    assert_true(hb_verify_rel_error(o, HB_ELEM_F64, ref, n, 0, NULL) == 0.0);
    /* nothing to compare */
    hb_verify v;
    assert_true(hb_verify_rel_error(o, HB_ELEM_F64, ref, 0, 0, &v) == 0.0);
    assert_true(v.fraction == 0.0);
    free(ref);
    free(o);
}

static int uploads;
static hb_status fake_upload(hb_instance *in, hb_buf *b)
{
    (void)in;
    (void)b;
    uploads++;
    return HB_OK;
}

static void test_poison(void **state)
{
    (void)state;
    size_t n = 2500;
    double ref[2500];
    hb_fill_random(ref, n, 3, 6);
    for (size_t k = 0; k < sizeof elems / sizeof elems[0]; k++) {
        void *p = malloc(n * hb_elem_size(elems[k]));
        assert_non_null(p);
        hb_convert(p, elems[k], ref, HB_ELEM_F64, n); /* finite first, so the poison must overwrite */
        hb_verify_poison(p, elems[k], n);
        double back[2500];
        hb_convert(back, HB_ELEM_F64, p, elems[k], n);
        for (size_t i = 0; i < n; i++) assert_true(isnan(back[i]));
        hb_verify v;
        assert_true(isinf(hb_verify_rel_error(p, elems[k], ref, n, HB_VERIFY_SUBSAMPLED, &v)));
        assert_int_equal(v.nonfinite, (long long)n);
        free(p);
    }
    hb_verify_poison(NULL, HB_ELEM_F32, n); /* nothing to do, no crash */
    hb_backend_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.upload = fake_upload;
    hb_instance in;
    memset(&in, 0, sizeof in);
    in.ops = &ops;
    float host[64];
    hb_buf b = {0};
    b.host = b.dev = host;
    b.bytes = sizeof host;
    uploads = 0;
    assert_int_equal(hb_verify_poison_buf(&in, &b, HB_ELEM_F32, 64, 0), HB_OK);
    assert_int_equal(uploads, 0);
    for (int i = 0; i < 64; i++) assert_true(isnan(host[i]));
    assert_int_equal(hb_verify_poison_buf(&in, &b, HB_ELEM_F32, 64, 1), HB_OK);
    assert_int_equal(uploads, 1);
}

int main(void)
{
    srand(20261128);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_values),
        cmocka_unit_test(test_nonfinite_output),
        cmocka_unit_test(test_nan_and_inf_reference),
        cmocka_unit_test(test_zero_reference),
        cmocka_unit_test(test_poison),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
