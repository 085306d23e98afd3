/*
 * test_qmatmul.h - a quantized-weight matmul case (dtypes q8_0, q4_k, q5_k, q6_k; core/quant.h's
 * contract: input 0 A[m,k] f32 row-major, input 1 the GGUF blocks of W[n,k], output C[m,n] = A W^T f32)
 * run through a plugin's hooks and checked against an f64 reference, for tests/test_cuda.c and
 * tests/test_opencl.c (which link core: hb_quant_fill_random, hb_quant_dequantize_f64).
 *
 * qm_run: random valid blocks (hb_quant_fill_random, weights in about [-1, 1]: scale 1) drawn from
 * seed, A uniform in [-1, 1) (never 0), the output poisoned with NaN before the run; the reference is
 * sum_k A[i,k] W[j,k] in f64 over the dequantized weights (each the f32 the format defines, widened).
 * Returns the run's status; on HB_OK *err is the relative L2 error ||C - ref|| / ||ref|| over the
 * finite outputs and *bad the count of non-finite ones. Header-only, include after <cmocka.h>.
 */
#ifndef HB_TEST_QMATMUL_H
#define HB_TEST_QMATMUL_H
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/quant.h"
#include "test_case.h"

/* The tolerance of a quantized matmul (relative L2, issue 44): f16 dequantization paths must pass it. */
#define QM_TOL 1e-2

static uint64_t qm_rs = 0x9E3779B97F4A7C15ull;
static float qm_unif(void) /* [-1, 1), never 0 */
{
    qm_rs ^= qm_rs << 13;
    qm_rs ^= qm_rs >> 7;
    qm_rs ^= qm_rs << 17;
    float v = (float)((double)(qm_rs >> 11) * 0x1p-53 * 2.0 - 1.0);
    return v == 0.0f ? 0.25f : v;
}

/* A matmul case of dtype d, shape m n k, route r (mode f32). */
static hb_case qm_case(hb_dtype d, int64_t m, int64_t n, int64_t k, hb_route r)
{
    char s[96];
    snprintf(s, sizeof s, "m=%lld n=%lld k=%lld", (long long)m, (long long)n, (long long)k);
    hb_case c = hb_test_case(HB_OP_MATMUL, s);
    c.dtype = d;
    c.route = r;
    return c;
}

static hb_status qm_run(const hb_backend_ops *ops, hb_instance *inst, const hb_case *c, unsigned long long seed, double *err,
                        int64_t *bad)
{
    const int64_t m = c->shape.m, n = c->shape.n, k = c->shape.k;
    char reason[256] = "";
    hb_status st = ops->supports(inst, c, reason, sizeof reason);
    if (st != HB_OK) return st;
    const size_t wbytes = hb_quant_bytes(c->dtype, n * k);
    assert_true(wbytes > 0);
    hb_buf a, w, o;
    assert_int_equal(ops->buf_alloc(inst, (size_t)(m * k) * sizeof(float), c->route, &a), HB_OK);
    assert_int_equal(ops->buf_alloc(inst, wbytes, c->route, &w), HB_OK);
    assert_int_equal(ops->buf_alloc(inst, (size_t)(m * n) * sizeof(float), c->route, &o), HB_OK);
    a.dtype = HB_F32;
    w.dtype = c->dtype;
    o.dtype = HB_F32;
    float *ah = (float *)a.host, *oh = (float *)o.host;
    for (int64_t i = 0; i < m * k; i++) ah[i] = qm_unif();
    assert_int_equal(hb_quant_fill_random(c->dtype, w.host, n * k, seed, 1, 1.0), HB_OK);
    for (int64_t i = 0; i < m * n; i++) oh[i] = NAN;
    assert_int_equal(ops->upload(inst, &a), HB_OK);
    assert_int_equal(ops->upload(inst, &w), HB_OK);
    assert_int_equal(ops->upload(inst, &o), HB_OK);
    hb_buf *in[2] = {&a, &w};
    st = ops->run(inst, c, (hb_buf *const *)in, &o);
    if (st == HB_OK) {
        assert_int_equal(ops->download(inst, &o), HB_OK);
        double *wd = malloc((size_t)(n * k) * sizeof(double));
        assert_non_null(wd);
        assert_int_equal(hb_quant_dequantize_f64(c->dtype, w.host, wd, n * k), HB_OK);
        double num = 0.0, den = 0.0;
        *bad = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double ref = 0.0;
                for (int64_t l = 0; l < k; l++) ref += (double)ah[i * k + l] * wd[j * k + l];
                const double v = (double)oh[i * n + j];
                if (!isfinite(v)) { (*bad)++; continue; }
                num += (v - ref) * (v - ref);
                den += ref * ref;
            }
        *err = den > 0.0 ? sqrt(num / den) : sqrt(num);
        free(wd);
    }
    ops->buf_free(inst, &o);
    ops->buf_free(inst, &w);
    ops->buf_free(inst, &a);
    return st;
}

/* Run every format at m = 1, 5, 64, 300 with odd random n and k of 1..3 blocks (and one longer k of
 * 5 blocks, several chunks per row), rotating the routes; print each line with tag and the case's
 * case_info (when info_len > 0). Returns the failures; *ran counts the runs. want_impl (may be NULL):
 * a case_info key that every run must carry. */
static inline int qm_run_all(const hb_backend_ops *ops, hb_instance *inst, const char *tag, const char *want_impl, int *ran)
{
    static const hb_dtype fmts[4] = {HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K};
    static const int64_t ms[4] = {1, 5, 64, 300};
    int failures = 0, idx = 0;
    for (int f = 0; f < 4; f++) {
        const int be = hb_quant_block_elems(fmts[f]);
        for (int mi = 0; mi < 4; mi++)
            for (int nbk = 1; nbk <= 4; nbk++, idx++) {
                const int64_t blocks = nbk == 4 ? (fmts[f] == HB_Q8_0 ? 11 : 5) : nbk;
                const int64_t n = 1 + 2 * (int64_t)(qm_unif() * 0.5f * 40.0f + 20.0f); /* odd, 1..~81 */
                hb_case c = qm_case(fmts[f], ms[mi], n < 1 ? 1 : n, blocks * be, (hb_route)(idx % HB_ROUTE_COUNT));
                double err = -1.0;
                int64_t bad = 0;
                hb_status st = qm_run(ops, inst, &c, 1000u + (unsigned)idx, &err, &bad);
                char info[2048] = "";
                if (ops->case_info) ops->case_info(inst, &c, info, sizeof info);
                const int has = !want_impl || strstr(info, want_impl);
                const int ok = st == HB_OK && bad == 0 && err <= QM_TOL && has;
                (*ran)++;
                printf("%-4s %s %-5s m=%-4lld n=%-3lld k=%-4lld %-8s err %.2e tol %.0e %s %s\n", ok ? "ok" : "FAIL", tag,
                       hb_dtype_name(c.dtype), (long long)c.shape.m, (long long)c.shape.n, (long long)c.shape.k,
                       hb_route_name(c.route), err, QM_TOL, hb_status_name(st), info);
                failures += !ok;
            }
    }
    return failures;
}

/* Op dequantize through the plugin's hooks: for every format, random blocks of n = 1, 3 and 37 blocks
 * (the first nroutes routes rotating: 1 for a host backend, HB_ROUTE_COUNT for a device), the f32 output poisoned with NaN first, then compared element by element with
 * hb_quant_dequantize (core/quant.c, the format's definition): every value must be equal (a device may
 * contract d*q - m into one FMA: allowed up to 2 ulp of the largest |value|). Returns the failures;
 * *ran counts the runs. */
static inline int qm_dequant_all(const hb_backend_ops *ops, hb_instance *inst, int nroutes, int *ran)
{
    static const hb_dtype fmts[4] = {HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K};
    static const int nbl[3] = {1, 3, 37};
    int failures = 0, r = 0;
    for (int f = 0; f < 4; f++)
        for (int t = 0; t < 3; t++) {
            const hb_dtype d = fmts[f];
            const int64_t n = (int64_t)nbl[t] * hb_quant_block_elems(d);
            hb_case c;
            memset(&c, 0, sizeof c);
            c.op = HB_OP_DEQUANTIZE;
            c.dtype = d;
            c.mode = HB_MODE_F32;
            c.route = (hb_route)(r++ % nroutes);
            c.shape.n = n;
            char why[256] = "";
            if (ops->supports(inst, &c, why, sizeof why) != HB_OK) {
                printf("FAIL dequantize %s n=%lld: skipped: %s\n", hb_dtype_name(d), (long long)n, why);
                failures++;
                continue;
            }
            const size_t wb = hb_quant_bytes(d, n);
            hb_buf w, y;
            float *want = malloc((size_t)n * sizeof(float));
            if (!want || ops->buf_alloc(inst, wb, c.route, &w) != HB_OK) { free(want); failures++; continue; }
            if (ops->buf_alloc(inst, (size_t)n * 4, c.route, &y) != HB_OK) { ops->buf_free(inst, &w); free(want); failures++; continue; }
            w.dtype = d;
            y.dtype = HB_F32;
            hb_quant_fill_random(d, w.host, n, 77, (unsigned long long)(10 * f + t), 1.0);
            hb_quant_dequantize(d, w.host, want, n);
            for (int64_t i = 0; i < n; i++) ((float *)y.host)[i] = NAN;
            hb_buf *in[1] = {&w};
            hb_status st = ops->upload(inst, &w);
            if (st == HB_OK) st = ops->upload(inst, &y);
            if (st == HB_OK) st = ops->run(inst, &c, (hb_buf *const *)in, &y);
            if (st == HB_OK) st = ops->download(inst, &y);
            float amax = 0;
            for (int64_t i = 0; i < n; i++) amax = fabsf(want[i]) > amax ? fabsf(want[i]) : amax;
            int64_t bad = 0;
            for (int64_t i = 0; st == HB_OK && i < n; i++) {
                const float v = ((float *)y.host)[i];
                bad += !(fabsf(v - want[i]) <= 2 * FLT_EPSILON * amax);
            }
            const int ok = st == HB_OK && bad == 0;
            printf("%-4s dequantize %-5s n=%-7lld %-8s %lld of %lld values differ\n", ok ? "ok" : "FAIL", hb_dtype_name(d), (long long)n,
                   hb_route_name(c.route), (long long)bad, (long long)n);
            failures += !ok;
            (*ran)++;
            ops->buf_free(inst, &y);
            ops->buf_free(inst, &w);
            free(want);
        }
    return failures;
}

#endif
