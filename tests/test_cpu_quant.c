/*
 * test_cpu_quant.c - matmul with quantized weights (q8_0, q4_k, q5_k, q6_k; core/quant.h) on the host:
 *   - the cpu backend's fused kernels (kernels/cpu/cpu_qmatmul.c), scalar and AVX2 (where the CPU has
 *     it), for every format at m = 1, 3, 17, 64 (decode, one partial group of 4 rows, prefill tiles),
 *     n small and odd, k = 1 and 3 blocks, on random blocks (hb_quant_fill_random) and random
 *     activations: outputs poisoned with NaN first, every element written and finite, the relative L2
 *     error against an f64 product over hb_quant_dequantize_f64 within hb_op_tolerance (the driver's
 *     bound), and the two paths' integer sums the same (their outputs within 1e-5 of each other);
 *   - the same through the cpu and cpu-ref backends' hooks (supports, buf_alloc of the weight's block
 *     bytes, run), cpu-ref to f32 rounding;
 *   - their skips (another op, k no whole number of blocks) and a case's bytes (hb_case_bytes);
 *   - the activations' rounding (qmm_round) against nearbyintf, ties and random values, and the fused
 *     kernel's output at 1, 3 and 7 threads bit for bit the same (the rows' quantization is split in
 *     runs of blocks over the team, which must not change a code).
 */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/backend.h"
#include "core/quant.h"
#include "cpu/cpu.h"
#include "cpu/cpu_priv.h"
#include "cpu/cpu_qmm.h"
#include "cpu_ref/ref.h"
#include "test_case.h"
#include "test_qmatmul.h"
#include "test_run.h"

static const hb_dtype fmts[4] = {HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K};

static hb_case qcase(hb_dtype d, int64_t m, int64_t n, int64_t k)
{
    char sh[96];
    snprintf(sh, sizeof sh, "m=%lld n=%lld k=%lld", (long long)m, (long long)n, (long long)k);
    hb_case c = hb_test_case(HB_OP_MATMUL, sh);
    c.dtype = d;
    return c;
}

/* random weights (blocks) and activations of case c, and the f64 product over the dequantized weights */
typedef struct qdata {
    void *w;
    float *a;
    double *ref;
} qdata;

static void qdata_make(const hb_case *c, uint64_t seed, qdata *q)
{
    const int64_t m = c->shape.m, n = c->shape.n, k = c->shape.k;
    const size_t wb = hb_quant_bytes(c->dtype, n * k);
    assert_true(wb > 0);
    q->w = malloc(wb);
    q->a = malloc((size_t)(m * k) * sizeof(float));
    q->ref = malloc((size_t)(m * n) * sizeof(double));
    double *wd = malloc((size_t)(n * k) * sizeof(double));
    assert_non_null(q->w);
    assert_non_null(q->a);
    assert_non_null(q->ref);
    assert_non_null(wd);
    assert_int_equal(hb_quant_fill_random(c->dtype, q->w, n * k, seed, 1, 1.0 / 16), HB_OK);
    assert_int_equal(hb_quant_dequantize_f64(c->dtype, q->w, wd, n * k), HB_OK);
    hb_test_seed(seed);
    for (int64_t i = 0; i < m * k; i++) q->a[i] = (float)hb_test_unif();
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t e = 0; e < k; e++) s += (double)q->a[i * k + e] * wd[j * k + e];
            q->ref[i * n + j] = s;
        }
    free(wd);
}

static void qdata_free(qdata *q)
{
    free(q->w);
    free(q->a);
    free(q->ref);
}

/* ||out - ref|| / ||ref||; fails on a non-finite (unwritten) element */
static double rel_err(const float *out, const double *ref, int64_t n, const char *label)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(out[i])) fail_msg("%s: element %lld is %g (unwritten or overflow)", label, (long long)i, (double)out[i]);
        num += ((double)out[i] - ref[i]) * ((double)out[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void test_kernels_every_format(void **state)
{
    (void)state;
    static const int64_t ms[4] = {1, 3, 17, 64};
    const int avx2 = qmm_avx2_usable();
    if (!avx2) fprintf(stderr, "test_cpu_quant: no AVX2+FMA+F16C on this CPU: the scalar kernels only\n");
    uint64_t seed = 7;
    hb_test_seed(12345);
    for (int f = 0; f < 4; f++)
        for (int mi = 0; mi < 4; mi++)
            for (int kb = 1; kb <= 3; kb += 2) {
                const int64_t n = 2 * (int64_t)((hb_test_unif() + 1) * 9) + 1; /* odd, 1..37 */
                const int64_t k = kb * hb_quant_block_elems(fmts[f]);
                const hb_case c = qcase(fmts[f], ms[mi], n, k);
                qdata q;
                qdata_make(&c, seed++, &q);
                const int64_t no = ms[mi] * n;
                float *out[2] = {malloc((size_t)no * sizeof(float)), malloc((size_t)no * sizeof(float))};
                assert_non_null(out[0]);
                assert_non_null(out[1]);
                const double tol = hb_op_tolerance(HB_OP_MATMUL, &c.shape, c.dtype);
                for (int p = 0; p < 1 + avx2; p++) {
                    char label[128];
                    snprintf(label, sizeof label, "%s m=%lld n=%lld k=%lld %s", hb_dtype_name(c.dtype), (long long)ms[mi],
                             (long long)n, (long long)k, p ? "avx2" : "scalar");
                    for (int64_t i = 0; i < no; i++) out[p][i] = NAN;
                    assert_int_equal(hb_cpu_qmatmul_run(&c, q.a, q.w, out[p], p ? 256 : 0), HB_OK);
                    const double e = rel_err(out[p], q.ref, no, label);
                    if (!(e <= tol)) fail_msg("%s: relative error %.3g over tolerance %.3g", label, e, tol);
                    /* the activations' 8-bit rounding is all there is: about 2^-8 on uniform inputs */
                    if (!(e > 1e-4)) fail_msg("%s: relative error %.3g: no activation quantization seen", label, e);
                }
                if (avx2) { /* the same integer sums: only the f32 summation order differs */
                    double d = 0, s = 0;
                    for (int64_t i = 0; i < no; i++) {
                        const double x0 = (double)out[0][i], x1 = (double)out[1][i];
                        d += (x0 - x1) * (x0 - x1);
                        s += x0 * x0;
                    }
                    if (!(sqrt(d / s) <= 1e-5))
                        fail_msg("%s m=%lld n=%lld k=%lld: scalar and avx2 differ by %.3g", hb_dtype_name(c.dtype),
                                 (long long)ms[mi], (long long)n, (long long)k, sqrt(d / s));
                }
                free(out[0]);
                free(out[1]);
                qdata_free(&q);
            }
}

/* case c through inst's hooks: A f32, W its blocks, C poisoned; returns the relative error */
static double run_hooks(hb_instance *inst, const hb_case *c, const qdata *q)
{
    const hb_backend_ops *ops = inst->ops;
    char reason[256] = "";
    assert_int_equal(ops->supports(inst, c, reason, sizeof reason), HB_OK);
    hb_buf b[2], ob;
    hb_buf *bp[2] = {&b[0], &b[1]};
    const int64_t na = c->shape.m * c->shape.k, no = c->shape.m * c->shape.n;
    assert_int_equal(hb_case_input_bytes(c, 0), (size_t)na * 4);
    assert_int_equal(ops->buf_alloc(inst, hb_case_input_bytes(c, 0), c->route, &b[0]), HB_OK);
    assert_int_equal(ops->buf_alloc(inst, hb_case_input_bytes(c, 1), c->route, &b[1]), HB_OK);
    assert_int_equal(ops->buf_alloc(inst, hb_case_output_bytes(c), c->route, &ob), HB_OK);
    memcpy(b[0].host, q->a, (size_t)na * 4);
    memcpy(b[1].host, q->w, hb_case_input_bytes(c, 1));
    for (int64_t i = 0; i < no; i++) ((float *)ob.host)[i] = NAN;
    assert_int_equal(ops->run(inst, c, bp, &ob), HB_OK);
    const double e = rel_err(ob.host, q->ref, no, inst->name);
    ops->buf_free(inst, &b[0]);
    ops->buf_free(inst, &b[1]);
    ops->buf_free(inst, &ob);
    return e;
}

static void test_round(void **state)
{
    (void)state;
    hb_test_seed(99);
    for (int t = -255; t <= 255; t++) { /* every tie of the range: -127.5 .. 127.5 */
        const float v = (float)t * 0.5f;
        if (qmm_round(v) != (int8_t)nearbyintf(v)) fail_msg("qmm_round(%g) = %d, nearbyintf %g", (double)v, qmm_round(v), (double)nearbyintf(v));
    }
    for (int i = 0; i < 200000; i++) {
        const float v = (float)(hb_test_unif() * 2 - 1) * 127.49f;
        if (qmm_round(v) != (int8_t)nearbyintf(v)) fail_msg("qmm_round(%.9g) = %d, nearbyintf %g", (double)v, qmm_round(v), (double)nearbyintf(v));
    }
}

/* the team's size must not change a bit of the output: decode (m = 1, one row cut into runs of blocks)
 * and a few rows (m = 3, fewer rows than threads) */
static void test_threads_same_bits(void **state)
{
    (void)state;
    const int saved = omp_get_max_threads();
    uint64_t seed = 101;
    for (int f = 0; f < 4; f++)
        for (int64_t m = 1; m <= 3; m += 2) {
            const hb_case c = qcase(fmts[f], m, 9, 11 * hb_quant_block_elems(fmts[f]));
            qdata q;
            qdata_make(&c, seed++, &q);
            const int64_t no = m * 9;
            float *out[3];
            static const int team[3] = {1, 3, 7};
            for (int t = 0; t < 3; t++) {
                out[t] = malloc((size_t)no * sizeof(float));
                assert_non_null(out[t]);
                for (int64_t i = 0; i < no; i++) out[t][i] = NAN;
                omp_set_num_threads(team[t]);
                assert_int_equal(hb_cpu_qmatmul_run(&c, q.a, q.w, out[t], qmm_avx2_usable() ? 256 : 0), HB_OK);
                if (t && memcmp(out[t], out[0], (size_t)no * sizeof(float)))
                    fail_msg("%s m=%lld: %d threads' output differs from 1 thread's", hb_dtype_name(c.dtype), (long long)m, team[t]);
            }
            (void)rel_err(out[0], q.ref, no, "threads");
            for (int t = 0; t < 3; t++) free(out[t]);
            qdata_free(&q);
        }
    omp_set_num_threads(saved);
}

static void test_backends(void **state)
{
    (void)state;
    hb_instance cpu, ref;
    assert_int_equal(hb_test_open(&hb_cpu_ops, &cpu), 0);
    assert_int_equal(hb_test_open(&hb_cpu_ref_ops, &ref), 0);
    for (int f = 0; f < 4; f++) {
        const hb_case c = qcase(fmts[f], 5, 13, 2 * hb_quant_block_elems(fmts[f]));
        qdata q;
        qdata_make(&c, 100 + (uint64_t)f, &q);
        const double ec = run_hooks(&cpu, &c, &q), er = run_hooks(&ref, &c, &q);
        if (!(ec <= hb_op_tolerance(c.op, &c.shape, c.dtype))) fail_msg("cpu %s: relative error %.3g", hb_dtype_name(c.dtype), ec);
        if (!(er <= 1e-6)) fail_msg("cpu-ref %s: relative error %.3g (f32 rounding only)", hb_dtype_name(c.dtype), er);
        /* what cpu says it ran */
        char info[256];
        assert_int_equal(cpu.ops->case_info(&cpu, &c, info, sizeof info), HB_OK);
        char want[64];
        snprintf(want, sizeof want, "own-%s-", hb_dtype_name(c.dtype));
        assert_non_null(strstr(info, want));
        qdata_free(&q);
        /* skips: another op, k no whole number of blocks */
        char reason[256] = "";
        hb_case add = hb_test_case(HB_OP_ADD, "n=256");
        add.dtype = fmts[f];
        assert_int_equal(cpu.ops->supports(&cpu, &add, reason, sizeof reason), HB_ESKIP);
        assert_non_null(strstr(reason, "matmul only"));
        assert_int_equal(ref.ops->supports(&ref, &add, reason, sizeof reason), HB_ESKIP);
        const hb_case odd = qcase(fmts[f], 2, 3, hb_quant_block_elems(fmts[f]) + 16);
        assert_int_equal(cpu.ops->supports(&cpu, &odd, reason, sizeof reason), HB_ESKIP);
        assert_int_equal(ref.ops->supports(&ref, &odd, reason, sizeof reason), HB_ESKIP);
    }
    /* op dequantize: every format, bit for bit against core/quant.c (test_qmatmul.h) */
    int ran = 0;
    assert_int_equal(qm_dequant_all(&hb_cpu_ops, &cpu, 1, &ran), 0);
    assert_int_equal(qm_dequant_all(&hb_cpu_ref_ops, &ref, 1, &ran), 0);
    assert_int_equal(ran, 24);
    hb_test_close(&cpu);
    hb_test_close(&ref);
}

static void test_case_bytes(void **state)
{
    (void)state;
    /* q4_k m=2 n=3 k=512: A 2x512x4, W 3 rows x 2 blocks x 144, C 2x3x4 */
    hb_case c = qcase(HB_Q4_K, 2, 3, 512);
    assert_int_equal(hb_case_input_bytes(&c, 1), 3 * 2 * 144);
    assert_true(hb_case_bytes(&c) == 2 * 512 * 4 + 3 * 2 * 144 + 2 * 3 * 4);
    c.dtype = HB_Q8_0; /* 16 blocks of 34 bytes per row */
    assert_true(hb_case_bytes(&c) == 2 * 512 * 4 + 3 * 16 * 34 + 2 * 3 * 4);
    c.dtype = HB_F32; /* dense: every element at 4 bytes, as hb_op_bytes */
    assert_true(hb_case_bytes(&c) == hb_op_bytes(c.op, &c.shape, 4));
    c.dtype = HB_F16;
    assert_true(hb_case_bytes(&c) == hb_op_bytes(c.op, &c.shape, 2));
    c = qcase(HB_Q6_K, 2, 3, 300); /* no whole number of blocks */
    assert_int_equal(hb_case_input_bytes(&c, 1), 0);
    /* the tolerance of the q dtypes does not depend on k (the activations' rounding, ops.c) */
    const hb_case s1 = qcase(HB_Q5_K, 1, 1, 256), s2 = qcase(HB_Q5_K, 1, 1, 14336);
    assert_true(hb_op_tolerance(HB_OP_MATMUL, &s1.shape, HB_Q5_K) == hb_op_tolerance(HB_OP_MATMUL, &s2.shape, HB_Q5_K));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_every_format),
        cmocka_unit_test(test_round),
        cmocka_unit_test(test_threads_same_bits),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_case_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
