/*
 * test_cpu_ref.c - the f64 reference (kernels/cpu_ref/ref.c, hb_ref_compute) on its own: closed-form
 * values of every op family (known results, identities, bad ops refused) and the NHWC convolution
 * against a direct loop written from hybench.h's definition and against the NCHW reference on the
 * same values. Random inputs from fixed seeds; outputs poisoned (NaN) before each call.
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

#include "core/backend.h"
#include "cpu_ref/ref.h"
#include "test_case.h"
#include "test_run.h"

/* The NHWC reference (layout=nhwc: x [b,h,w,c], w [oc,kh,kw,c/g], y [b,oh,ow,oc]) against a direct
 * loop written here from hybench.h's definition, and against the NCHW reference on the same values
 * permuted into NCHW/OIHW; outputs poisoned with NaN first, random inputs. */
static void test_ref_nhwc(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "batch=2 c=6 h=9 w=7 oc=4 kh=3 kw=2 sh=2 sw=1 ph=1 pw=1 dh=1 dw=2 g=2 layout=nhwc",
        "batch=3 c=5 h=6 w=8 oc=7 kh=1 layout=nhwc",
        "batch=1 c=8 h=10 w=10 oc=8 kh=3 ph=1 g=8 layout=nhwc",
        "batch=2 c=3 h=11 w=11 oc=5 kh=5 sh=3 ph=2 dh=2 layout=nhwc",
    };
    hb_test_seed(77);
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        hb_case c = hb_test_case(HB_OP_CONV2D, shapes[k]);
        const hb_shape *s = &c.shape;
        const int64_t B = s->batch, C = s->c, H = s->h, W = s->w, O = s->oc, KH = s->kh, KW = s->kw, G = s->g;
        const int64_t OH = hb_shape_oh(s), OW = hb_shape_ow(s), CG = C / G, OG = O / G;
        const int64_t nx = B * H * W * C, nw = O * KH * KW * CG, ny = B * OH * OW * O;
        double *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
        double *y = malloc((size_t)ny * sizeof *y), *want = malloc((size_t)ny * sizeof *want);
        double *xc = malloc((size_t)nx * sizeof *xc), *wc = malloc((size_t)nw * sizeof *wc), *yc = malloc((size_t)ny * sizeof *yc);
        assert_true(x && w && y && want && xc && wc && yc);
        for (int64_t i = 0; i < nx; i++) x[i] = hb_test_unif();
        for (int64_t i = 0; i < nw; i++) w[i] = hb_test_unif();
        for (int64_t i = 0; i < ny; i++) y[i] = yc[i] = NAN;
        /* direct loop over NHWC indices */
        for (int64_t b = 0; b < B; b++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++)
                    for (int64_t o = 0; o < O; o++) {
                        double acc = 0;
                        const int64_t g = o / OG;
                        for (int64_t ky = 0; ky < KH; ky++)
                            for (int64_t kx = 0; kx < KW; kx++)
                                for (int64_t ci = 0; ci < CG; ci++) {
                                    const int64_t iy = oy * s->sh - s->ph + ky * s->dh, ix = ox * s->sw - s->pw + kx * s->dw;
                                    if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                    acc += x[((b * H + iy) * W + ix) * C + g * CG + ci] * w[((o * KH + ky) * KW + kx) * CG + ci];
                                }
                        want[((b * OH + oy) * OW + ox) * O + o] = acc;
                    }
        const double *in[2] = { x, w };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        for (int64_t i = 0; i < ny; i++)
            if (!(fabs(y[i] - want[i]) <= 1e-12 * (1 + fabs(want[i]))))
                fail_msg("%s: y[%lld] = %g, direct loop %g", shapes[k], (long long)i, y[i], want[i]);
        /* the same values in NCHW/OIHW through the NCHW reference, compared after permuting back */
        for (int64_t b = 0; b < B; b++)
            for (int64_t ch = 0; ch < C; ch++)
                for (int64_t i = 0; i < H * W; i++)
                    xc[(b * C + ch) * H * W + i] = x[(b * H * W + i) * C + ch];
        for (int64_t o = 0; o < O; o++)
            for (int64_t ci = 0; ci < CG; ci++)
                for (int64_t t = 0; t < KH * KW; t++)
                    wc[(o * CG + ci) * KH * KW + t] = w[(o * KH * KW + t) * CG + ci];
        hb_case cn = c;
        cn.shape.layout = HB_LAYOUT_NCHW;
        const double *inc[2] = { xc, wc };
        assert_int_equal(hb_ref_compute(&cn, inc, yc, 1), HB_OK);
        for (int64_t b = 0; b < B; b++)
            for (int64_t o = 0; o < O; o++)
                for (int64_t i = 0; i < OH * OW; i++)
                    if (!(fabs(yc[(b * O + o) * OH * OW + i] - y[(b * OH * OW + i) * O + o]) <= 1e-12 * (1 + fabs(y[(b * OH * OW + i) * O + o]))))
                        fail_msg("%s: NCHW reference differs at b%lld o%lld pixel %lld", shapes[k], (long long)b, (long long)o, (long long)i);
        /* row_step subsamples output pixels: every step-th pixel computed, the others NaN */
        for (int64_t i = 0; i < ny; i++) y[i] = 0.0;
        assert_int_equal(hb_ref_compute(&c, in, y, 3), HB_OK);
        for (int64_t q = 0; q < B * OH * OW; q++)
            for (int64_t o = 0; o < O; o++)
                if (q % 3 ? !isnan(y[q * O + o]) : !(fabs(y[q * O + o] - want[q * O + o]) <= 1e-12 * (1 + fabs(want[q * O + o]))))
                    fail_msg("%s: row_step 3, pixel %lld channel %lld = %g", shapes[k], (long long)q, (long long)o, y[q * O + o]);
        free(x); free(w); free(y); free(want); free(xc); free(wc); free(yc);
    }
}

/* The reference on values known in closed form. */
static void test_ref_known_values(void **state)
{
    (void)state;
    /* gelu (tanh form), silu, relu */
    {
        hb_case c = hb_test_case(HB_OP_GELU, "n=3");
        double x[3] = { 1.0, -1.0, 0.0 }, y[3];
        const double *in[1] = { x };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        /* 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) */
        assert_true(fabs(y[0] - 0.8411919906082768) < 1e-15);
        assert_true(fabs(y[1] - (-0.15880800939172324)) < 1e-15);
        assert_true(y[2] == 0.0);
        c.op = HB_OP_SILU;
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(fabs(y[0] - 0.7310585786300049) < 1e-15);
        assert_true(fabs(y[1] - (-0.2689414213699951)) < 1e-15);
    }
    /* matmul 2x3 x 3x2 */
    {
        hb_case c = hb_test_case(HB_OP_MATMUL, "m=2 n=2 k=3");
        double A[6] = { 1, 2, 3, 4, 5, 6 }, B[6] = { 7, 8, 9, 10, 11, 12 }, C[4];
        const double *in[2] = { A, B };
        assert_int_equal(hb_ref_compute(&c, in, C, 1), HB_OK);
        assert_true(C[0] == 58 && C[1] == 64 && C[2] == 139 && C[3] == 154);
    }
    /* conv2d: all-ones input and 3x3 weights, pad 1: interior 9, edges 6, corners 4 (times c) */
    {
        hb_case c = hb_test_case(HB_OP_CONV2D, "batch=1 c=2 h=4 w=5 oc=1 kh=3 ph=1");
        double x[40], w[18], y[20];
        for (int i = 0; i < 40; i++) x[i] = 1.0;
        for (int i = 0; i < 18; i++) w[i] = 1.0;
        const double *in[2] = { x, w };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(y[0] == 8 && y[1] == 12 && y[6] == 18 && y[19] == 8);
    }
    /* conv2d with groups: group 1 reads channel 1 only */
    {
        hb_case c = hb_test_case(HB_OP_CONV2D, "batch=1 c=2 h=1 w=1 oc=2 kh=1 g=2");
        double x[2] = { 3, 5 }, w[2] = { 2, 7 }, y[2];
        const double *in[2] = { x, w };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(y[0] == 6 && y[1] == 35);
    }
    /* avgpool excludes padding: an all-ones input averages to 1 everywhere, borders included */
    {
        hb_case c = hb_test_case(HB_OP_AVGPOOL, "batch=1 c=1 h=5 w=5 kh=3 sh=2 ph=1");
        double x[25], y[9];
        for (int i = 0; i < 25; i++) x[i] = 1.0;
        const double *in[1] = { x };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        for (int i = 0; i < 9; i++)
            assert_true(fabs(y[i] - 1.0) < 1e-15);
        for (int i = 0; i < 25; i++) x[i] = i;
        c.op = HB_OP_MAXPOOL;
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(y[0] == 6 && y[1] == 8 && y[8] == 24);
    }
    /* reductions and rmsnorm */
    {
        hb_case c = hb_test_case(HB_OP_SUM, "rows=2 cols=3");
        double x[6] = { 1, 2, 3, -4, 9, -1 }, y[6];
        const double *in[2] = { x, NULL };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(y[0] == 6 && y[1] == 4);
        c.op = HB_OP_MEAN;
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(y[0] == 2 && fabs(y[1] - 4.0 / 3.0) < 1e-15);
        c.op = HB_OP_MAX;
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_OK);
        assert_true(y[0] == 3 && y[1] == 9);
        c = hb_test_case(HB_OP_RMSNORM, "rows=1 cols=4");
        double xr[4] = { 2, 2, 2, 2 }, g[4] = { 1, 2, 3, 4 };
        const double *in2[2] = { xr, g };
        assert_int_equal(hb_ref_compute(&c, in2, y, 1), HB_OK);
        for (int j = 0; j < 4; j++)
            assert_true(fabs(y[j] - 2.0 / sqrt(4.0 + 1e-5) * g[j]) < 1e-14);
    }
    /* attention: identical keys give the mean of v over the visible keys; causal row 0 sees key 0;
     * GQA: heads 0,1 read kv head 0 and heads 2,3 kv head 1 */
    {
        hb_case c = hb_test_case(HB_OP_ATTENTION, "batch=1 heads=4 kv_heads=2 seq=3 head_dim=2 causal=1");
        double q[24], k[12], v[12], o[24];
        for (int i = 0; i < 24; i++) q[i] = 0.1 * i;
        for (int i = 0; i < 12; i++) k[i] = 1.0;
        for (int i = 0; i < 12; i++) v[i] = i;
        const double *in[3] = { q, k, v };
        assert_int_equal(hb_ref_compute(&c, in, o, 1), HB_OK);
        for (int h = 0; h < 4; h++) {
            const double *vb = v + (h / 2) * 6; /* kv head's v: rows (0,1),(2,3),(4,5) */
            for (int i = 0; i < 3; i++)
                for (int t = 0; t < 2; t++) {
                    double mean = 0.0;
                    for (int j = 0; j <= i; j++)
                        mean += vb[j * 2 + t];
                    mean /= i + 1;
                    assert_true(fabs(o[(h * 3 + i) * 2 + t] - mean) < 1e-12);
                }
        }
        /* causal with kv_seq > seq (a KV cache): query i sees keys j <= i + kv_seq - seq */
        c = hb_test_case(HB_OP_ATTENTION, "batch=1 heads=1 seq=2 kv_seq=4 head_dim=1 causal=1");
        double qc[2] = { 0.3, -0.2 }, kc[4] = { 1, 1, 1, 1 }, vc[4] = { 1, 2, 4, 8 }, oc[2];
        const double *inc[3] = { qc, kc, vc };
        assert_int_equal(hb_ref_compute(&c, inc, oc, 1), HB_OK);
        assert_true(fabs(oc[0] - 7.0 / 3.0) < 1e-12);  /* keys 0..2 */
        assert_true(fabs(oc[1] - 15.0 / 4.0) < 1e-12); /* keys 0..3 */
        /* softmax weights: 2 keys with scores 0 and ln(3)*sqrt(d) give weights 1/4, 3/4 */
        c = hb_test_case(HB_OP_ATTENTION, "batch=1 heads=1 seq=1 kv_seq=2 head_dim=1");
        double q1[1] = { 1.0 }, k1[2] = { 0.0, log(3.0) }, v1[2] = { 4.0, 8.0 }, o1[1];
        const double *in1[3] = { q1, k1, v1 };
        assert_int_equal(hb_ref_compute(&c, in1, o1, 1), HB_OK);
        assert_true(fabs(o1[0] - 7.0) < 1e-12);
    }
    /* unknown op */
    {
        hb_case c = hb_test_case(HB_OP_ADD, "n=1");
        c.op = HB_OP_COUNT;
        double x[1] = { 0 }, y[1];
        const double *in[2] = { x, x };
        assert_int_equal(hb_ref_compute(&c, in, y, 1), HB_EINVAL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref_known_values),
        cmocka_unit_test(test_ref_nhwc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
