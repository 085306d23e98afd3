/*
 * test_chain_tp.c - the tensor-parallel decoder layer of core/chain.c against the f64 reference: the
 * layer run as 2 and 4 simulated ranks (each rank's shard of the inputs cut with hb_chain_shard, its
 * steps computed by the reference, the all_reduce steps summing the ranks' partial outputs) must give
 * every rank the whole layer's y; the shards tile each weight exactly once; the attention layout bshd
 * of the reference is the default layout transposed. Random inputs, poisoned outputs, values asserted.
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

#include "core/hybench.h"
#include "core/convert.h"
#include "core/quant.h"
#include "cpu_ref/ref.h"
#include "measure/measure.h"
#include "test_case.h"

static hb_case chain_case(const char *shape, int rank)
{
    hb_case c = hb_test_case(HB_OP_CHAIN, shape);
    c.mode = HB_MODE_RESIDENT;
    c.shape.rank = rank; /* the simulated rank (normalize takes this process's place in its launch) */
    return c;
}

static double *poisoned(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = NAN;
    return p;
}

/* The whole layer (ranks = 1) with every tensor: inputs random, the rest computed. */
static void whole_layer(const hb_case *c, double *t[HB_CT_COUNT], unsigned long long seed)
{
    for (int k = 0; k < HB_CT_COUNT; k++) {
        size_t n = hb_chain_tensor_elems(k, &c->shape);
        t[k] = n ? poisoned(n) : NULL;
        if (n && k < HB_CHAIN_NINPUTS) {
            hb_fill_random(t[k], n, seed, 1000003ULL + (unsigned long long)k);
            if (k >= HB_CT_WQ && k <= HB_CT_WD)
                for (size_t j = 0; j < n; j++) t[k][j] *= 1.0 / 64;
        }
    }
    for (int i = 0; i < hb_chain_nsteps(&c->shape); i++) {
        int in[3];
        hb_case s = hb_chain_step_case(c, i, in);
        const double *ins[3] = {t[in[0]], in[1] >= 0 ? t[in[1]] : NULL, in[2] >= 0 ? t[in[2]] : NULL};
        assert_int_equal(hb_ref_compute(&s, ins, t[hb_chain_step_at(&c->shape, i)->out], 1), HB_OK);
    }
}

static void free_all(double *t[HB_CT_COUNT])
{
    for (int k = 0; k < HB_CT_COUNT; k++) { free(t[k]); t[k] = NULL; }
}

static double rel_err(const double *a, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) return INFINITY;
        num += (a[i] - ref[i]) * (a[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* R simulated ranks run the layer step by step; every rank's y must be the whole layer's. */
static void check_split(const char *shape1, const char *shapeR, int R)
{
    const unsigned long long seed = 20261126ULL + (unsigned long long)R;
    hb_case w = chain_case(shape1, 0);
    double *ref[HB_CT_COUNT];
    whole_layer(&w, ref, seed);
    double *t[4][HB_CT_COUNT];
    hb_case rc[4];
    for (int r = 0; r < R; r++) {
        rc[r] = chain_case(shapeR, r);
        assert_int_equal(hb_chain_nsteps(&rc[r].shape), R > 1 ? HB_CHAIN_MAXSTEPS : HB_CHAIN_NSTEPS);
        for (int k = 0; k < HB_CT_COUNT; k++) {
            size_t n = hb_chain_tensor_elems(k, &rc[r].shape);
            t[r][k] = n ? poisoned(n) : NULL;
            if (!n || k >= HB_CHAIN_NINPUTS) continue;
            hb_chain_block b;
            assert_int_equal(hb_chain_shard(k, &rc[r].shape, &b), 0);
            assert_int_equal((size_t)(b.rows * b.cols), n);
            for (int64_t i = 0; i < b.rows; i++)
                memcpy(t[r][k] + i * b.cols, ref[k] + (b.r0 + i) * b.full_cols + b.c0, (size_t)b.cols * sizeof(double));
        }
    }
    for (int i = 0; i < hb_chain_nsteps(&rc[0].shape); i++) {
        const hb_chain_step *st = hb_chain_step_at(&rc[0].shape, i);
        if (st->op == HB_OP_ALL_REDUCE) {
            size_t n = hb_chain_tensor_elems(st->out, &rc[0].shape);
            for (int r = 0; r < R; r++) {
                int in[3];
                hb_case s = hb_chain_step_case(&rc[r], i, in);
                assert_int_equal(s.shape.ranks, R);
                assert_int_equal(s.shape.rank, r);
                assert_int_equal(s.shape.in_chain, 1);
                assert_int_equal((size_t)s.shape.n, n);
                for (size_t j = 0; j < n; j++) {
                    double sum = 0;
                    for (int q = 0; q < R; q++) sum += t[q][st->in[0]][j];
                    t[r][st->out][j] = sum;
                }
            }
            continue;
        }
        for (int r = 0; r < R; r++) {
            int in[3];
            hb_case s = hb_chain_step_case(&rc[r], i, in);
            const double *ins[3] = {t[r][in[0]], in[1] >= 0 ? t[r][in[1]] : NULL, in[2] >= 0 ? t[r][in[2]] : NULL};
            assert_int_equal(hb_ref_compute(&s, ins, t[r][st->out], 1), HB_OK);
        }
    }
    size_t ny = hb_chain_tensor_elems(HB_CT_Y, &w.shape);
    for (int r = 0; r < R; r++) {
        double e = rel_err(t[r][HB_CT_Y], ref[HB_CT_Y], ny);
        if (!(e < 1e-12)) fail_msg("%s rank %d of %d: y differs from the whole layer's, rel err %.3g", shapeR, r, R, e);
        free_all(t[r]);
    }
    free_all(ref);
}

static void test_split_decode(void **state)
{
    (void)state;
    check_split("seq=1 kv_seq=96 ranks=1", "seq=1 kv_seq=96 ranks=2", 2);
    check_split("seq=1 kv_seq=96 ranks=1", "seq=1 kv_seq=96 ranks=4", 4);
}

static void test_split_prefill(void **state)
{
    (void)state;
    check_split("seq=12 ranks=1", "seq=12 ranks=2", 2);
    check_split("seq=12 ranks=1", "seq=12 ranks=4", 4);
}

/* The shards of a split weight tile it: every element in exactly one rank's block. */
static void test_shards_tile(void **state)
{
    (void)state;
    for (int R = 2; R <= 4; R += 2) {
        char sh[64];
        snprintf(sh, sizeof sh, "seq=1 kv_seq=32 ranks=%d", R);
        for (int k = 0; k < HB_CHAIN_NINPUTS; k++) {
            hb_chain_block b0;
            hb_case c0 = chain_case(sh, 0);
            assert_int_equal(hb_chain_shard(k, &c0.shape, &b0), 0);
            size_t total = (size_t)(b0.full_rows * b0.full_cols);
            unsigned char *seen = calloc(total, 1);
            assert_non_null(seen);
            size_t covered = 0;
            for (int r = 0; r < R; r++) {
                hb_case c = chain_case(sh, r);
                hb_chain_block b;
                assert_int_equal(hb_chain_shard(k, &c.shape, &b), 0);
                for (int64_t i = 0; i < b.rows; i++)
                    for (int64_t j = 0; j < b.cols; j++) seen[(b.r0 + i) * b.full_cols + b.c0 + j]++;
                covered += (size_t)(b.rows * b.cols);
            }
            int replicated = k == HB_CT_X || k == HB_CT_G1 || k == HB_CT_G2;
            size_t bad = 0;
            for (size_t i = 0; i < total; i++) bad += seen[i] != (replicated ? R : 1);
            if (bad) fail_msg("ranks=%d tensor %d: %zu elements not covered %s", R, k, bad, replicated ? "by every rank" : "exactly once");
            assert_int_equal(covered, replicated ? total * (size_t)R : total);
            free(seen);
        }
    }
    /* the prefill has no cache to shard */
    hb_case p = chain_case("seq=8 ranks=2", 0);
    hb_chain_block b;
    assert_int_equal(hb_chain_shard(HB_CT_KC, &p.shape, &b), -1);
    assert_int_equal(hb_chain_tensor_elems(HB_CT_KC, &p.shape), 0);
}

/* The reference's bshd attention is the default layout with seq and heads swapped. */
static void test_bshd_reference(void **state)
{
    (void)state;
    const int64_t B = 2, H = 6, G = 3, S = 5, KV = 9, D = 8;
    hb_case a = {0}, b = {0};
    char err[200];
    a.op = b.op = HB_OP_ATTENTION;
    assert_int_equal(hb_shape_parse("batch=2 heads=6 kv_heads=3 seq=5 kv_seq=9 head_dim=8 causal=1", &a.shape, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_parse("batch=2 heads=6 kv_heads=3 seq=5 kv_seq=9 head_dim=8 causal=1 layout=bshd", &b.shape, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_ATTENTION, &a.shape, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_ATTENTION, &b.shape, err, sizeof err), HB_OK);
    assert_int_equal(b.shape.layout, HB_LAYOUT_BSHD);
    char txt[200];
    assert_non_null(strstr(hb_shape_format(HB_OP_ATTENTION, &b.shape, txt, sizeof txt), "layout=bshd"));
    assert_null(strstr(hb_shape_format(HB_OP_ATTENTION, &a.shape, txt, sizeof txt), "layout"));
    size_t nq = (size_t)(B * H * S * D), nk = (size_t)(B * G * KV * D);
    double *q = malloc(nq * sizeof *q), *k = malloc(nk * sizeof *k), *v = malloc(nk * sizeof *v);
    double *qt = malloc(nq * sizeof *q), *kt = malloc(nk * sizeof *k), *vt = malloc(nk * sizeof *v);
    double *o = poisoned(nq), *ot = poisoned(nq);
    assert_true(q && k && v && qt && kt && vt);
    hb_fill_random(q, nq, 7, 1);
    hb_fill_random(k, nk, 7, 2);
    hb_fill_random(v, nk, 7, 3);
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++)
                memcpy(qt + ((bi * S + i) * H + h) * D, q + ((bi * H + h) * S + i) * D, (size_t)D * sizeof *q);
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t j = 0; j < KV; j++) {
                memcpy(kt + ((bi * KV + j) * G + g) * D, k + ((bi * G + g) * KV + j) * D, (size_t)D * sizeof *k);
                memcpy(vt + ((bi * KV + j) * G + g) * D, v + ((bi * G + g) * KV + j) * D, (size_t)D * sizeof *v);
            }
    const double *ia[3] = {q, k, v}, *ib[3] = {qt, kt, vt};
    assert_int_equal(hb_ref_compute(&a, ia, o, 1), HB_OK);
    assert_int_equal(hb_ref_compute(&b, ib, ot, 1), HB_OK);
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++)
                for (int64_t d = 0; d < D; d++) {
                    double x = o[((bi * H + h) * S + i) * D + d], y = ot[((bi * S + i) * H + h) * D + d];
                    if (!(fabs(x - y) <= 1e-14 * (1 + fabs(x)))) fail_msg("b%lld h%lld i%lld d%lld: %g vs %g", (long long)bi, (long long)h, (long long)i, (long long)d, x, y);
                }
    free(q); free(k); free(v); free(qt); free(kt); free(vt); free(o); free(ot);
}

static void test_bad_shapes(void **state)
{
    (void)state;
    const char *bad[][2] = {
        {"chain", "seq=1 kv_seq=8 ranks=3"}, {"chain", "seq=1 kv_seq=8 ranks=8"}, {"matmul", "m=1 n=2 k=3 layout=bshd"},
        {"conv2d", "c=3 h=8 oc=4 kh=3 layout=bshd"}, {"attention", "heads=2 seq=4 head_dim=8 layout=nhwc"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hb_shape s;
        char err[200] = "";
        int op = hb_op_parse(bad[i][0]);
        assert_true(op >= 0);
        hb_status st = hb_shape_parse(bad[i][1], &s, err, sizeof err);
        if (st == HB_OK) st = hb_shape_normalize((hb_op)op, &s, err, sizeof err);
        if (st != HB_EINVAL) fail_msg("%s \"%s\" was accepted", bad[i][0], bad[i][1]);
        assert_true(err[0] != 0);
    }
    /* the one-device chain is unchanged: 14 steps, no collective */
    hb_case c = chain_case("seq=1 kv_seq=512", 0);
    assert_int_equal(c.shape.ranks, 0);
    assert_int_equal(hb_chain_nsteps(&c.shape), HB_CHAIN_NSTEPS);
    for (int i = 0; i < HB_CHAIN_NSTEPS; i++) assert_false(hb_op_is_collective(hb_chain_step_at(&c.shape, i)->op));
    /* the tensor-parallel layer's FLOPs are the whole layer's, whatever the ranks */
    hb_case c1 = chain_case("seq=16 ranks=1", 0), c4 = chain_case("seq=16 ranks=4", 0);
    assert_true(fabs(hb_chain_flops(&c1.shape) - hb_chain_flops(&c4.shape)) <= 1e-9 * hb_chain_flops(&c1.shape));
}

/* Quantized weights over ranks (hb_chain_qshard): each rank's blocks, dequantized, are exactly its
 * block of the whole weight W[n,k] dequantized, for every projection, format and rank; a rank's share
 * of k that is no whole number of blocks is refused (down-projection, k = 5632 over 4 ranks: 1408,
 * 5.5 blocks of 256) and only then. */
static void test_qshard(void **state)
{
    (void)state;
    static const hb_dtype fm[3] = {HB_Q8_0, HB_Q4_K, HB_Q6_K};
    int refused = 0;
    for (int R = 2; R <= 4; R += 2)
        for (int f = 0; f < 3; f++)
            for (int t = HB_CT_WQ; t <= HB_CT_WD; t++) {
                char sh[64];
                snprintf(sh, sizeof sh, "seq=1 kv_seq=64 ranks=%d", R);
                hb_case c0 = chain_case(sh, 0);
                hb_chain_block b;
                assert_int_equal(hb_chain_shard(t, &c0.shape, &b), 0);
                const int64_t K = b.full_rows, N = b.full_cols; /* the f32 layout [k, n]; W is [n, k] */
                const size_t wb = hb_quant_bytes(fm[f], N * K);
                unsigned char *w = malloc(wb);
                double *wd = malloc((size_t)(N * K) * sizeof(double));
                assert_non_null(w);
                assert_non_null(wd);
                assert_int_equal(hb_quant_fill_random(fm[f], w, N * K, 77 + (uint64_t)t, 3, 1.0 / 64), HB_OK);
                assert_int_equal(hb_quant_dequantize_f64(fm[f], w, wd, N * K), HB_OK);
                for (int r = 0; r < R; r++) {
                    hb_case c = chain_case(sh, r);
                    char why[256] = "";
                    assert_int_equal(hb_chain_shard(t, &c.shape, &b), 0);
                    const int be = hb_quant_block_elems(fm[f]), whole = b.r0 % be == 0 && b.rows % be == 0;
                    if (!whole) {
                        assert_int_equal(hb_chain_qshard(t, &c.shape, fm[f], w, w, why, sizeof why), -1);
                        assert_non_null(strstr(why, "no whole number"));
                        refused++;
                        continue;
                    }
                    const size_t pb = hb_quant_bytes(fm[f], b.rows * b.cols);
                    unsigned char *d = malloc(pb);
                    double *dd = malloc((size_t)(b.rows * b.cols) * sizeof(double));
                    assert_non_null(d);
                    assert_non_null(dd);
                    memset(d, 0xff, pb); /* poison: 0xffff scales are NaN in f16 */
                    assert_int_equal(hb_chain_qshard(t, &c.shape, fm[f], w, d, why, sizeof why), 0);
                    assert_int_equal(hb_quant_dequantize_f64(fm[f], d, dd, b.rows * b.cols), HB_OK);
                    for (int64_t j = 0; j < b.cols; j++)
                        for (int64_t e = 0; e < b.rows; e++)
                            if (dd[j * b.rows + e] != wd[(b.c0 + j) * K + b.r0 + e])
                                fail_msg("%s tensor %d rank %d of %d: W[%lld,%lld] differs", hb_dtype_name(fm[f]), t, r, R,
                                         (long long)(b.c0 + j), (long long)(b.r0 + e));
                    free(d);
                    free(dd);
                }
                free(w);
                free(wd);
            }
    /* q4_k and q6_k's down-projection over 4 ranks, every rank */
    assert_int_equal(refused, 2 * 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_decode),   cmocka_unit_test(test_split_prefill), cmocka_unit_test(test_shards_tile),
        cmocka_unit_test(test_bshd_reference), cmocka_unit_test(test_bad_shapes), cmocka_unit_test(test_qshard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
