/*
 * test_cpu_kernels.c - the f64 reference (kernels/cpu_ref/ref.c) and the two CPU backends (cpu-ref,
 * cpu) through their hooks: enumerate, buf_alloc, inputs written into buf.host, output poisoned
 * with NaN, upload, run, download. Every op on small random shapes with odd sizes, strides,
 * padding, dilation, groups, GQA and causal masks, and on sizes that take the kernels' parallel and
 * split paths; ||out - ref|| / ||ref|| < 1e-4 against hb_ref_compute on the same f32 inputs, and
 * every output element finite. The reference itself on closed-form values and NHWC: test_cpu_ref.c. Unsupported
 * dtypes and routes must be skips. The ceilings and the describe/case_info JSON are checked for
 * sanity.
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
#include <jansson.h>

#include "core/backend.h"
#include "core/convert.h"
#include "cpu/cpu.h"
#include "cpu/cpu_priv.h" /* hb_cpu_llc_bytes: the copy sweep's top size */
#include "cpu_ref/ref.h"
#include "test_case.h"
#include "test_run.h"
#include "test_config.h"

#define REL_TOL 1e-4

static hb_instance g_cpu, g_ref;


static hb_case make_case(hb_op op, const char *shape) { return hb_test_case(op, shape); }

/* Run c on inst through its hooks. in[i] are f32 host arrays; out receives the result. */
static hb_status run_on(hb_instance *inst, const hb_case *c, float *const *in, float *out)
{
    const hb_backend_ops *ops = inst->ops;
    const int nin = hb_op_get(c->op)->ninputs;
    hb_buf bufs[HB_MAX_INPUTS], ob;
    hb_buf *bp[HB_MAX_INPUTS];
    char reason[200] = "";
    hb_status st = ops->supports(inst, c, reason, sizeof reason);
    if (st != HB_OK)
        return st;
    for (int i = 0; i < nin; i++) {
        int64_t n = hb_op_input_elems(c->op, &c->shape, i);
        assert_int_equal(ops->buf_alloc(inst, (size_t)n * 4, c->route, &bufs[i]), HB_OK);
        assert_non_null(bufs[i].host);
        assert_int_equal((uintptr_t)bufs[i].host % 64, 0);
        memcpy(bufs[i].host, in[i], (size_t)n * 4);
        assert_int_equal(ops->upload(inst, &bufs[i]), HB_OK);
        bp[i] = &bufs[i];
    }
    int64_t no = hb_op_output_elems(c->op, &c->shape);
    assert_int_equal(ops->buf_alloc(inst, (size_t)no * 4, c->route, &ob), HB_OK);
    float *oh = ob.host;
    for (int64_t i = 0; i < no; i++)
        oh[i] = NAN;
    st = ops->run(inst, c, bp, &ob);
    if (st == HB_OK)
        assert_int_equal(ops->download(inst, &ob), HB_OK);
    memcpy(out, ob.host, (size_t)no * 4);
    ops->buf_free(inst, &ob);
    for (int i = 0; i < nin; i++)
        ops->buf_free(inst, &bufs[i]);
    return st;
}

/* ||out-ref|| / ||ref||; counts non-finite outputs into *bad. */
static double rel_err(const float *out, const double *ref, int64_t n, int64_t *bad)
{
    double num = 0.0, den = 0.0;
    *bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(out[i])) {
            (*bad)++;
            continue;
        }
        double d = (double)out[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

typedef struct tcase {
    hb_op op;
    const char *shape;
} tcase;

static const tcase cases[] = {
    { HB_OP_ADD, "n=17" },
    { HB_OP_ADD, "n=1000003" },
    { HB_OP_MUL, "n=65537" },
    { HB_OP_RELU, "n=1001" },
    { HB_OP_GELU, "n=100003" },
    { HB_OP_GELU, "n=13" },
    { HB_OP_SILU, "n=70001" },
    { HB_OP_SIGMOID, "n=70001" },
    { HB_OP_SIGMOID, "n=21" },              /* SLEEF body + scalar tail */
    { HB_OP_MATMUL, "m=67 n=45 k=129" },
    { HB_OP_MATMUL, "m=1 n=300 k=77" },     /* sgemv, y = B^T x */
    { HB_OP_MATMUL, "m=70 n=1 k=301" },     /* sgemv, y = A x */
    { HB_OP_MATMUL, "m=1 n=1 k=513" },
    { HB_OP_MATMUL, "m=8 n=8 k=8" },        /* below the measured thread threshold: one thread */
    { HB_OP_BMM, "batch=5 m=1 n=64 k=33" }, /* sgemv per matrix */
    { HB_OP_BMM, "batch=16 m=24 n=24 k=24" },
    { HB_OP_SILU, "n=33" },                 /* SLEEF body + scalar tail */
    { HB_OP_GELU, "n=4111" },
    { HB_OP_MATMUL, "m=256 n=256 k=256" },
    { HB_OP_MATMUL, "m=131 n=96 k=128" },   /* rows split unevenly where the plan splits them */
    { HB_OP_MATMUL, "m=1 n=1500 k=2047" },  /* sgemv: rows of B split, partials summed, where chosen */
    { HB_OP_MATMUL, "m=2049 n=1 k=1500" },  /* sgemv: rows of A split, where chosen */
    { HB_OP_BMM, "batch=3 m=33 n=17 k=65" },
    { HB_OP_BMM, "batch=8 m=40 n=40 k=64" },
    { HB_OP_CONV2D, "batch=2 c=8 h=15 w=13 oc=6 kh=3 ph=1" },
    { HB_OP_CONV2D, "batch=3 c=5 h=16 w=17 oc=7 kh=3 ph=1" },
    { HB_OP_CONV2D, "batch=1 c=4 h=19 w=18 oc=5 kh=5 kw=3 sh=2 sw=3 ph=2 pw=1 dh=2 dw=1" },
    { HB_OP_CONV2D, "batch=2 c=8 h=12 w=12 oc=6 kh=3 ph=1 g=2" },
    { HB_OP_CONV2D, "batch=4 c=6 h=9 w=9 oc=6 kh=3 ph=1 g=6" },
    { HB_OP_CONV2D, "batch=2 c=16 h=7 w=9 oc=24 kh=1" },
    { HB_OP_CONV2D, "batch=3 c=16 h=7 w=9 oc=8 kh=1" },
    { HB_OP_CONV2D, "batch=2 c=8 h=14 w=14 oc=12 kh=1 sh=2" },
    { HB_OP_CONV2D, "batch=1 c=3 h=23 w=23 oc=8 kh=7 sh=2 ph=3" },
    { HB_OP_CONV2D, "batch=1 c=32 h=7 w=7 oc=64 kh=3 ph=1" },
    { HB_OP_CONV2D, "batch=5 c=12 h=7 w=7 oc=20 kh=3 ph=1" },     /* images grouped per sgemm */
    { HB_OP_CONV2D, "batch=7 c=8 h=9 w=11 oc=40 kh=3 sh=2 ph=1" },
    { HB_OP_CONV2D, "batch=1 c=16 h=30 w=31 oc=20 kh=3 ph=1" },
    /* layout=nhwc: x NHWC, w OHWI, y NHWC (k_conv2d_nhwc; 1x1 stride 1 on x itself) */
    { HB_OP_CONV2D, "batch=2 c=8 h=15 w=13 oc=6 kh=3 ph=1 layout=nhwc" },
    { HB_OP_CONV2D, "batch=1 c=4 h=19 w=18 oc=5 kh=5 kw=3 sh=2 sw=3 ph=2 pw=1 dh=2 dw=1 layout=nhwc" },
    { HB_OP_CONV2D, "batch=2 c=8 h=12 w=12 oc=6 kh=3 ph=1 g=2 layout=nhwc" },
    { HB_OP_CONV2D, "batch=4 c=6 h=9 w=9 oc=6 kh=3 ph=1 g=6 layout=nhwc" },
    { HB_OP_CONV2D, "batch=3 c=16 h=7 w=9 oc=8 kh=1 layout=nhwc" },
    { HB_OP_CONV2D, "batch=2 c=16 h=7 w=9 oc=24 kh=1 g=4 layout=nhwc" },
    { HB_OP_CONV2D, "batch=2 c=8 h=14 w=14 oc=12 kh=1 sh=2 layout=nhwc" },
    { HB_OP_CONV2D, "batch=1 c=32 h=30 w=31 oc=40 kh=3 ph=1 layout=nhwc" },     /* several row blocks */
    { HB_OP_MAXPOOL, "batch=2 c=3 h=17 w=16 kh=3 sh=2 ph=1" },
    { HB_OP_MAXPOOL, "batch=1 c=5 h=11 w=13 kh=2 sh=2" },
    { HB_OP_MAXPOOL, "batch=2 c=4 h=10 w=10 kh=3 sh=3 ph=1" },
    { HB_OP_MAXPOOL, "batch=3 c=16 h=40 w=40 kh=3 sh=1 ph=1" },
    { HB_OP_AVGPOOL, "batch=2 c=3 h=17 w=16 kh=3 sh=2 ph=1" },
    { HB_OP_MAXPOOL, "batch=2 c=3 h=67 w=66 kh=3 sh=2 ph=1" },
    { HB_OP_AVGPOOL, "batch=2 c=3 h=67 w=66 kh=3 sh=2 ph=1" },
    { HB_OP_AVGPOOL, "batch=1 c=2 h=40 w=70 kh=4 kw=3 sh=3 ph=2 pw=1" },
    { HB_OP_MAXPOOL, "batch=1 c=2 h=40 w=70 kh=4 kw=3 sh=3 ph=2 pw=1" },
    { HB_OP_MAXPOOL, "batch=1 c=2 h=20 w=40 kh=2 sh=2" },
    { HB_OP_AVGPOOL, "batch=2 c=2 h=21 w=30 kh=5 sh=1 ph=2" },
    { HB_OP_AVGPOOL, "batch=2 c=2 h=33 w=35 kh=3 sh=1 ph=1" },
    { HB_OP_AVGPOOL, "batch=2 c=7 h=7 w=7 kh=7" },
    { HB_OP_MAXPOOL, "batch=3 c=5 h=6 w=9 kh=6 kw=9" },
    { HB_OP_AVGPOOL, "batch=1 c=3 h=7 w=7 kh=6 ph=1" },
    { HB_OP_AVGPOOL, "batch=1 c=4 h=9 w=12 kh=4 kw=2 sh=1 sw=2 ph=2 pw=1" },
    { HB_OP_SUM, "rows=37 cols=1001" },
    { HB_OP_SUM, "rows=1 cols=300001" },
    { HB_OP_MEAN, "rows=100 cols=7" },
    { HB_OP_MEAN, "rows=1 cols=200003" },
    { HB_OP_MAX, "rows=3 cols=100000" },
    { HB_OP_MAX, "rows=1 cols=99999" },
    { HB_OP_MAX, "rows=50 cols=33" },
    { HB_OP_SUM_ALL, "n=1000001" },
    { HB_OP_SUM_ALL, "n=5" },
    { HB_OP_RMSNORM, "rows=5 cols=4097" },
    { HB_OP_RMSNORM, "rows=1 cols=200003" },
    { HB_OP_RMSNORM, "rows=64 cols=2048" },
    { HB_OP_RMSNORM, "rows=130 cols=2053" }, /* 1.07 MB output: streaming-store path in this test */
    { HB_OP_ATTENTION, "batch=1 heads=4 seq=37 head_dim=16" },
    { HB_OP_ATTENTION, "batch=2 heads=8 kv_heads=2 seq=33 head_dim=32 causal=1" },
    { HB_OP_ATTENTION, "batch=1 heads=4 kv_heads=1 seq=5 kv_seq=40 head_dim=8 causal=1" },
    { HB_OP_ATTENTION, "batch=1 heads=32 kv_heads=4 seq=1 kv_seq=100 head_dim=64 causal=1" },
    { HB_OP_ATTENTION, "batch=2 heads=2 seq=200 head_dim=64 causal=1" },
    { HB_OP_ATTENTION, "batch=1 heads=3 seq=150 kv_seq=70 head_dim=24" },
    /* layout=bshd (q, o [b, seq, heads, d]; k, v [b, kv_seq, kv_heads, d]): the tensor-parallel layer's */
    { HB_OP_ATTENTION, "batch=2 heads=8 kv_heads=2 seq=33 head_dim=32 causal=1 layout=bshd" },
    { HB_OP_ATTENTION, "batch=1 heads=16 kv_heads=2 seq=1 kv_seq=100 head_dim=64 causal=1 layout=bshd" },
    { HB_OP_ATTENTION, "batch=1 heads=6 kv_heads=3 seq=70 head_dim=40 layout=bshd" },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

typedef struct prepared {
    hb_case c;
    int nin;
    float *in[HB_MAX_INPUTS];
    double *din[HB_MAX_INPUTS];
    double *ref;
    int64_t nout;
} prepared;

static void prepare(prepared *p, const tcase *t, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->c = make_case(t->op, t->shape);
    p->nin = hb_op_get(t->op)->ninputs;
    hb_test_seed(seed);
    for (int i = 0; i < p->nin; i++) {
        int64_t n = hb_op_input_elems(t->op, &p->c.shape, i);
        p->in[i] = malloc((size_t)n * sizeof(float));
        p->din[i] = malloc((size_t)n * sizeof(double));
        assert_non_null(p->in[i]);
        assert_non_null(p->din[i]);
        for (int64_t j = 0; j < n; j++) {
            double v = hb_test_unif();
            if (t->op == HB_OP_RMSNORM && i == 1)
                v = 1.0 + 0.5 * v; /* gains around 1 */
            if (t->op == HB_OP_ATTENTION)
                v *= 2.0; /* scores of a few units: a softmax that is not flat */
            p->in[i][j] = (float)v;
        }
        hb_convert(p->din[i], HB_ELEM_F64, p->in[i], HB_ELEM_F32, (size_t)n);
    }
    p->nout = hb_op_output_elems(t->op, &p->c.shape);
    p->ref = malloc((size_t)p->nout * sizeof(double));
    assert_non_null(p->ref);
    for (int64_t j = 0; j < p->nout; j++)
        p->ref[j] = NAN;
    assert_int_equal(hb_ref_compute(&p->c, (const double *const *)p->din, p->ref, 1), HB_OK);
    for (int64_t j = 0; j < p->nout; j++)
        assert_true(isfinite(p->ref[j]));
}

static void release(prepared *p)
{
    for (int i = 0; i < p->nin; i++) {
        free(p->in[i]);
        free(p->din[i]);
    }
    free(p->ref);
}

/* The bound for case c: 1e-4, or the harness's own tolerance where it is tighter; elementwise ops
 * are one f32 rounding (6e-8) plus the exp approximation (~1e-7): 5e-7. */
static double case_tol(const hb_case *c, double tol)
{
    double t = hb_op_tolerance(c->op, &c->shape, HB_F32);
    if (t < tol)
        tol = t;
    if (hb_op_get(c->op)->family == HB_FAM_ELEMENTWISE && tol > 5e-7)
        tol = 5e-7;
    return tol;
}

static void check_backend(hb_instance *inst, double tol0)
{
    for (int k = 0; k < NCASES; k++) {
        prepared p;
        prepare(&p, &cases[k], 1000u + (uint64_t)k);
        const double tol = case_tol(&p.c, tol0);
        float *out = malloc((size_t)p.nout * sizeof(float));
        assert_non_null(out);
        hb_status st = run_on(inst, &p.c, p.in, out);
        if (st != HB_OK)
            fail_msg("%s %s %s: status %d", inst->name, hb_op_get(p.c.op)->name, cases[k].shape, (int)st);
        int64_t bad;
        double e = rel_err(out, p.ref, p.nout, &bad);
        if (getenv("HB_TEST_VERBOSE"))
            print_message("  %-8s %-10s %-70s rel err %.2e\n", inst->name, hb_op_get(p.c.op)->name,
                          cases[k].shape, e);
        if (bad || !(e < tol))
            fail_msg("%s %s %s: rel err %.3g (tol %.1g), %lld non-finite of %lld", inst->name,
                     hb_op_get(p.c.op)->name, cases[k].shape, e, tol, (long long)bad, (long long)p.nout);
        free(out);
        release(&p);
    }
}

static void test_cpu_backend(void **state)
{
    (void)state;
    check_backend(&g_cpu, REL_TOL);
}

/* cpu-ref is the reference rounded to f32: within a few f32 ulps. */
static void test_cpu_ref_backend(void **state)
{
    (void)state;
    check_backend(&g_ref, 1e-6);
}

/* Every elementwise op of the op table (shape kind HB_SK_EW) has a row in cpu_ref's and cpu's kernel
 * tables: a new op without one fails here by name, not by a skip in a sweep. Random inputs, output
 * poisoned with NaN (prepare, run_on), checked against the f64 reference. */
static void test_ew_table_complete(void **state)
{
    (void)state;
    for (int op = 0; op < HB_OP_COUNT; op++) {
        if (hb_op_get((hb_op)op)->kind != HB_SK_EW)
            continue;
        /* dequantize reads a quantized dtype's blocks, never f32: test_qmatmul.h's qm_dequant_all checks it */
        if (hb_quant_input((hb_op)op, HB_Q4_K) == 0)
            continue;
        const tcase t = { (hb_op)op, "n=37" };
        hb_instance *insts[2] = { &g_ref, &g_cpu };
        for (int b = 0; b < 2; b++) {
            char reason[256] = "";
            prepared p;
            prepare(&p, &t, 77u + (uint64_t)op);
            if (insts[b]->ops->supports(insts[b], &p.c, reason, sizeof reason) != HB_OK)
                fail_msg("%s has no kernel for elementwise op %s: %s", insts[b]->name, hb_op_get(p.c.op)->name, reason);
            float *out = malloc((size_t)p.nout * sizeof(float));
            assert_non_null(out);
            assert_int_equal(run_on(insts[b], &p.c, p.in, out), HB_OK);
            int64_t bad;
            const double e = rel_err(out, p.ref, p.nout, &bad);
            if (bad || !(e < case_tol(&p.c, REL_TOL)))
                fail_msg("%s %s n=37: rel err %.3g, %lld non-finite", insts[b]->name, hb_op_get(p.c.op)->name, e, (long long)bad);
            free(out);
            release(&p);
        }
    }
}

/* The per-thread paths (bmm per matrix, conv per image: sgemm from several threads at once;
 * attention items, dynamically scheduled when causal) must give bit-identical results when repeated. */
static void test_cpu_repeatable(void **state)
{
    (void)state;
    const tcase rep[] = {
        { HB_OP_BMM, "batch=16 m=48 n=40 k=56" },
        { HB_OP_CONV2D, "batch=8 c=16 h=14 w=14 oc=16 kh=3 ph=1" },
        { HB_OP_ATTENTION, "batch=2 heads=8 kv_heads=2 seq=96 head_dim=32 causal=1" },
    };
    for (size_t k = 0; k < sizeof rep / sizeof rep[0]; k++) {
        prepared p;
        prepare(&p, &rep[k], 77u + k);
        float *a = malloc((size_t)p.nout * 4), *b = malloc((size_t)p.nout * 4);
        assert_int_equal(run_on(&g_cpu, &p.c, p.in, a), HB_OK);
        int64_t bad;
        assert_true(rel_err(a, p.ref, p.nout, &bad) < REL_TOL);
        assert_int_equal(bad, 0);
        for (int r = 0; r < 5; r++) {
            assert_int_equal(run_on(&g_cpu, &p.c, p.in, b), HB_OK);
            assert_memory_equal(a, b, (size_t)p.nout * 4);
        }
        free(a);
        free(b);
        release(&p);
    }
}

/* The fused attention kernel (cpu_attn.c) on shapes that hit its edges: seq not a multiple of the
 * query block or of the micro-kernel's 6 rows, key blocks cut by the causal diagonal, causal with
 * seq < kv_seq (a KV cache), GQA groups of 3 and 4 and 8 heads (heads of a group share an item),
 * head_dim 64, 128, 96 and odd ones (19, 40: V copied into padded blocks), decode (seq 1), items few
 * enough that the keys are split over items and merged (rows whose keys end inside a split); each under
 * the default blocking and under small and large ones (HB_CPU_ATTN_TQ/TK, read per call), so that
 * items of one row and blocks shorter than a tile occur. Random inputs, output poisoned with NaN
 * (run_on), every element checked against the f64 reference: |out - ref| <= 2e-5 max|ref|. */
static void test_cpu_attention_tiles(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "batch=2 heads=6 kv_heads=2 seq=100 head_dim=64 causal=1",
        "batch=1 heads=8 seq=70 kv_seq=200 head_dim=128 causal=1",
        "batch=1 heads=4 kv_heads=1 seq=33 kv_seq=77 head_dim=19",
        "batch=1 heads=32 kv_heads=4 seq=1 kv_seq=300 head_dim=64 causal=1",
        "batch=1 heads=2 seq=131 head_dim=40 causal=1",
        "batch=3 heads=4 kv_heads=2 seq=5 kv_seq=9 head_dim=128 causal=1",
        "batch=1 heads=2 kv_heads=1 seq=257 head_dim=96",
        "batch=1 heads=16 kv_heads=2 seq=7 kv_seq=130 head_dim=64 causal=1",
        "batch=1 heads=1 seq=3 kv_seq=5 head_dim=1 causal=1",
        /* fewer items than two per thread: the keys split over items and merged (flash-decoding) */
        "batch=1 heads=8 kv_heads=1 seq=1 kv_seq=300 head_dim=64 causal=1",
        "batch=1 heads=4 kv_heads=1 seq=2 kv_seq=129 head_dim=24",
        "batch=1 heads=2 kv_heads=1 seq=3 kv_seq=70 head_dim=8 causal=1",
    };
    static const char *const knobs[][2] = { { NULL, NULL }, { "16", "12" }, { "5", "6" }, { "200", "300" } };
    for (size_t kn = 0; kn < sizeof knobs / sizeof knobs[0]; kn++) {
        if (knobs[kn][0]) {
            setenv("HB_CPU_ATTN_TQ", knobs[kn][0], 1);
            setenv("HB_CPU_ATTN_TK", knobs[kn][1], 1);
        }
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            const tcase t = { HB_OP_ATTENTION, shapes[k] };
            prepared p;
            prepare(&p, &t, 300u + k);
            float *out = malloc((size_t)p.nout * sizeof(float));
            assert_non_null(out);
            assert_int_equal(run_on(&g_cpu, &p.c, p.in, out), HB_OK);
            double amax = 0.0;
            for (int64_t i = 0; i < p.nout; i++)
                amax = fabs(p.ref[i]) > amax ? fabs(p.ref[i]) : amax;
            for (int64_t i = 0; i < p.nout; i++)
                if (!isfinite(out[i]) || fabs((double)out[i] - p.ref[i]) > 2e-5 * amax)
                    fail_msg("attention %s (TQ %s TK %s): element %lld = %.9g, reference %.9g", shapes[k],
                             knobs[kn][0] ? knobs[kn][0] : "default", knobs[kn][1] ? knobs[kn][1] : "default",
                             (long long)i, (double)out[i], p.ref[i]);
            free(out);
            release(&p);
        }
    }
    unsetenv("HB_CPU_ATTN_TQ");
    unsetenv("HB_CPU_ATTN_TK");
}

/* row_step: every row_step-th row computed and equal to the full result, the others NaN. */
static void test_ref_row_step(void **state)
{
    (void)state;
    const tcase t[] = {
        { HB_OP_MATMUL, "m=50 n=20 k=30" },
        { HB_OP_BMM, "batch=3 m=10 n=7 k=5" },
        { HB_OP_CONV2D, "batch=2 c=3 h=8 w=8 oc=5 kh=3 ph=1" },
        { HB_OP_ATTENTION, "batch=2 heads=4 kv_heads=2 seq=9 head_dim=8 causal=1" },
        { HB_OP_ADD, "n=100" },
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        prepared p;
        prepare(&p, &t[k], 5u + k);
        double *y = malloc((size_t)p.nout * sizeof(double));
        const int64_t step = 3;
        assert_int_equal(hb_ref_compute(&p.c, (const double *const *)p.din, y, step), HB_OK);
        const hb_shape *s = &p.c.shape;
        int64_t rowlen;
        switch (p.c.op) {
        case HB_OP_MATMUL: case HB_OP_BMM: rowlen = s->n; break;
        case HB_OP_CONV2D: rowlen = hb_shape_oh(s) * hb_shape_ow(s); break;
        case HB_OP_ATTENTION: rowlen = s->head_dim; break;
        default: rowlen = 0; break; /* cheap op: everything computed */
        }
        int64_t nan_rows = 0;
        for (int64_t i = 0; i < p.nout; i++) {
            int computed = rowlen == 0 || (i / rowlen) % step == 0;
            if (computed)
                assert_true(y[i] == p.ref[i]);
            else {
                assert_true(isnan(y[i]));
                nan_rows++;
            }
        }
        if (rowlen)
            assert_true(nan_rows > 0);
        free(y);
        release(&p);
    }
    hb_case big = make_case(HB_OP_MATMUL, "m=1000 n=1000 k=1000"); /* 2e9 flops */
    assert_int_equal(hb_ref_row_step(&big, 1e10), 1);
    assert_int_equal(hb_ref_row_step(&big, 1e9), 2);
    assert_int_equal(hb_ref_row_step(&big, 1e8), 20);
    assert_int_equal(hb_ref_row_step(&big, 1.0), 1000); /* capped at the row count: one row */
    hb_case cheap = make_case(HB_OP_ADD, "n=100000000");
    assert_int_equal(hb_ref_row_step(&cheap, 1.0), 1);
    /* 2 * (2*64 planes) * 3136 * 576 = 4.62e8 flops */
    hb_case conv = make_case(HB_OP_CONV2D, "batch=2 c=64 h=56 w=56 oc=64 kh=3 ph=1");
    assert_int_equal(hb_ref_row_step(&conv, 1e8), 5);
}

static void check_skips(hb_instance *inst)
{
    char reason[200];
    hb_case c = make_case(HB_OP_MATMUL, "m=8 n=8 k=8");
    const hb_dtype bad[] = { HB_TF32, HB_F16, HB_BF16 };
    for (size_t i = 0; i < 3; i++) {
        c.dtype = bad[i];
        reason[0] = 0;
        assert_int_equal(inst->ops->supports(inst, &c, reason, sizeof reason), HB_ESKIP);
        assert_true(strlen(reason) > 0);
        /* run refuses as well, with real buffers */
        hb_buf a, b, o;
        assert_int_equal(inst->ops->buf_alloc(inst, 256, HB_ROUTE_PAGEABLE, &a), HB_OK);
        assert_int_equal(inst->ops->buf_alloc(inst, 256, HB_ROUTE_PAGEABLE, &b), HB_OK);
        assert_int_equal(inst->ops->buf_alloc(inst, 256, HB_ROUTE_PAGEABLE, &o), HB_OK);
        hb_buf *in[2] = { &a, &b };
        assert_int_equal(inst->ops->run(inst, &c, in, &o), HB_ESKIP);
        inst->ops->buf_free(inst, &a);
        inst->ops->buf_free(inst, &b);
        inst->ops->buf_free(inst, &o);
    }
    c.dtype = HB_F32;
    assert_int_equal(inst->ops->supports(inst, &c, reason, sizeof reason), HB_OK);
    c.route = HB_ROUTE_PINNED;
    assert_int_equal(inst->ops->supports(inst, &c, reason, sizeof reason), HB_ESKIP);
    c.route = HB_ROUTE_MAPPED;
    assert_int_equal(inst->ops->supports(inst, &c, reason, sizeof reason), HB_ESKIP);
    hb_case ch;
    memset(&ch, 0, sizeof ch);
    ch.op = HB_OP_CHAIN;
    ch.shape.seq = 1;
    ch.shape.kv_seq = 1;
    assert_int_equal(inst->ops->supports(inst, &ch, reason, sizeof reason), HB_ESKIP);
}

static void test_skips(void **state)
{
    (void)state;
    check_skips(&g_cpu);
    check_skips(&g_ref);
    char reason[200];
    hb_case c = make_case(HB_OP_MATMUL, "m=8 n=8 k=8");
    c.dtype = HB_F16;
    g_cpu.ops->supports(&g_cpu, &c, reason, sizeof reason);
    assert_string_equal(reason, "cpu backend computes in f32 (and matmul with quantized weights) only");
    c.dtype = HB_F32;
    c.route = HB_ROUTE_PINNED;
    g_cpu.ops->supports(&g_cpu, &c, reason, sizeof reason);
    assert_string_equal(reason, "host-memory backend: no transfer routes");
}

static void test_instances(void **state)
{
    (void)state;
    assert_int_equal(hb_backend_validate(&hb_cpu_ops), HB_OK);
    assert_int_equal(hb_backend_validate(&hb_cpu_ref_ops), HB_OK);
    assert_string_equal(g_cpu.name, "cpu");
    assert_string_equal(g_ref.name, "cpu-ref");
    assert_int_equal(g_cpu.host_memory, 1);
    assert_int_equal(g_ref.host_memory, 1);
    assert_null(hb_cpu_ref_ops.ceilings);
    assert_non_null(hb_cpu_ops.ceilings);
    /* memory accounting */
    int64_t a0, a1, fr, tot;
    hb_buf b;
    g_cpu.ops->mem_info(&g_cpu, &a0, &fr, &tot);
    assert_int_equal(g_cpu.ops->buf_alloc(&g_cpu, 1000, HB_ROUTE_PAGEABLE, &b), HB_OK);
    assert_true(b.host == b.dev && b.bytes == 1000);
    g_cpu.ops->mem_info(&g_cpu, &a1, &fr, &tot);
    assert_int_equal(a1 - a0, 1000);
    g_cpu.ops->buf_free(&g_cpu, &b);
    g_cpu.ops->mem_info(&g_cpu, &a1, &fr, &tot);
    assert_int_equal(a1, a0);
    /* describe and case_info are JSON objects */
    char buf[2048];
    json_error_t je;
    assert_int_equal(g_cpu.ops->describe(&g_cpu, buf, sizeof buf), HB_OK);
    json_t *o = json_loads(buf, 0, &je);
    assert_non_null(o);
    assert_true(json_is_object(o));
    assert_true(json_integer_value(json_object_get(o, "hwloc_cores")) >= 1);
    assert_non_null(json_string_value(json_object_get(o, "openblas_config")));
    json_decref(o);
    hb_case c = make_case(HB_OP_CONV2D, "batch=1 c=2 h=4 w=4 oc=2 kh=3 ph=1");
    assert_int_equal(g_cpu.ops->case_info(&g_cpu, &c, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "impl")), "openblas-sgemm-im2col");
    assert_true(json_integer_value(json_object_get(o, "threads")) >= 1);
    json_decref(o);
    /* the implementation names per op */
    const struct { hb_op op; const char *shape, *impl; } im[] = {
        { HB_OP_MATMUL, "m=1 n=64 k=64", "openblas-sgemv" },
        { HB_OP_MATMUL, "m=64 n=1 k=64", "openblas-sgemv" },
        { HB_OP_MATMUL, "m=8 n=8 k=8", "openblas-sgemm" }, /* one thread: never split */
        { HB_OP_RELU, "n=100", "own-omp" },

    };
    for (size_t i = 0; i < sizeof im / sizeof im[0]; i++) {
        c = make_case(im[i].op, im[i].shape);
        assert_int_equal(g_cpu.ops->case_info(&g_cpu, &c, buf, sizeof buf), HB_OK);
        o = json_loads(buf, 0, &je);
        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(o, "impl")), im[i].impl);
        json_decref(o);
    }
    /* attention: the fused kernel, named by its vector width and exp (own-flash-sleef-avx2, ...) */
    c = make_case(HB_OP_ATTENTION, "batch=1 heads=2 seq=8 head_dim=8");
    assert_int_equal(g_cpu.ops->case_info(&g_cpu, &c, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    assert_non_null(o);
    assert_true(!strncmp(json_string_value(json_object_get(o, "impl")), "own-flash", 9));
    json_decref(o);
    /* a product whose calibrated plan splits its rows says so, and runs on 2 or more threads */
    for (int sz = 16; sz <= 512; sz *= 2) {
        char sh[64];
        snprintf(sh, sizeof sh, "m=%d n=%d k=%d", sz, sz, sz);
        c = make_case(HB_OP_MATMUL, sh);
        assert_int_equal(g_cpu.ops->case_info(&g_cpu, &c, buf, sizeof buf), HB_OK);
        o = json_loads(buf, 0, &je);
        assert_non_null(o);
        const char *impl = json_string_value(json_object_get(o, "impl"));
        assert_true(impl && (!strcmp(impl, "openblas-sgemm") || !strcmp(impl, "openblas-sgemm-rows")));
        if (!strcmp(impl, "openblas-sgemm-rows"))
            assert_true(json_integer_value(json_object_get(o, "threads")) >= 2);
        json_decref(o);
    }
    c = make_case(HB_OP_SILU, "n=100");
    assert_int_equal(g_cpu.ops->case_info(&g_cpu, &c, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    assert_non_null(o);
    const char *ew = json_string_value(json_object_get(o, "impl"));
    assert_true(ew && (!strcmp(ew, "sleef-avx512") || !strcmp(ew, "sleef-avx2") || !strcmp(ew, "own-omp")));
#if defined(HB_HAVE_SLEEF) && defined(__x86_64__)
    /* the loop the CPU and HB_CPU_ISA allow (run_tests.sh runs this binary again with avx2) */
    __builtin_cpu_init();
    const char *isa = getenv("HB_CPU_ISA");
    if (__builtin_cpu_supports("avx512f") && !(isa && !strcmp(isa, "avx2")))
        assert_string_equal(ew, "sleef-avx512");
#if defined(__AVX2__) && defined(__FMA__)
    else
        assert_string_equal(ew, "sleef-avx2");
#endif
#endif
    json_decref(o);
    /* one thread for a tiny product: the threshold is at least the smallest size calibrated */
    c = make_case(HB_OP_MATMUL, "m=4 n=4 k=4");
    assert_int_equal(g_cpu.ops->case_info(&g_cpu, &c, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    assert_int_equal(json_integer_value(json_object_get(o, "threads")), 1);
    json_decref(o);
    /* the measured thread thresholds are in describe */
    assert_int_equal(g_cpu.ops->describe(&g_cpu, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    json_t *tt = json_object_get(o, "thread_thresholds");
    if (json_integer_value(json_object_get(o, "omp_threads")) > 1) {
        assert_non_null(tt);
        assert_true(json_integer_value(json_array_get(json_object_get(tt, "ew_par_min_elems"), 0)) >= 4096);
        assert_true(json_integer_value(json_array_get(json_object_get(tt, "ew_par_min_elems"), 1)) >= 4096);
        assert_true(json_number_value(json_object_get(tt, "gemm_par_min_flops")) >= 2.0 * 16 * 16 * 16);
        assert_true(json_number_value(json_object_get(tt, "gemv_par_min_flops")) >= 2.0 * 128 * 128);
    }
    json_decref(o);
    /* cpu-ref names itself */
    c = make_case(HB_OP_ADD, "n=10");
    assert_int_equal(g_ref.ops->case_info(&g_ref, &c, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "impl")), "cpu-ref");
    json_decref(o);
    assert_int_equal(g_ref.ops->describe(&g_ref, buf, sizeof buf), HB_OK);
    o = json_loads(buf, 0, &je);
    assert_non_null(o);
    json_decref(o);
}

static void test_ceilings(void **state)
{
    (void)state;
    hb_ceiling cl[HB_MAX_CEILINGS];
    int n = g_cpu.ops->ceilings(&g_cpu, cl, HB_MAX_CEILINGS);
    /* the copy sweep: 1 MiB doubling up to twice the LLC (at least 8 MiB), at most HB_COPY_SWEEP sizes */
    size_t ws[HB_COPY_SWEEP];
    int nsw = hb_cpu_copy_sweep(ws, HB_COPY_SWEEP);
    size_t top = 2 * hb_cpu_llc_bytes();
    if (top < ((size_t)8 << 20)) top = (size_t)8 << 20;
    assert_true(nsw >= 4);
    for (int i = 0; i < nsw; i++) assert_true(ws[i] == ((size_t)1 << (20 + i)) && ws[i] <= top);
    assert_true(nsw == HB_COPY_SWEEP || ws[nsw - 1] * 2 > top); /* stops at the top, or at the cap */
    assert_int_equal(hb_cpu_copy_sweep(ws, 2), 2);              /* respects max */
    const int nfix = 5;
    assert_int_equal(n, nfix + nsw);
    const char *names[5] = { "copy_gbps", "triad_gbps", "peak_gflops_f32", "peak_gflops_f32_1core",
                             "peak_gflops_f32_1core_n128" };
    for (int i = 0; i < n; i++) {
        if (i < nfix) assert_string_equal(cl[i].name, names[i]);
        else {
            char want[40];
            snprintf(want, sizeof want, "copy_gbps_ws_%zuMiB", ws[i - nfix] >> 20);
            assert_string_equal(cl[i].name, want);
        }
        assert_true(cl[i].value > 0.1 && cl[i].value < 1e5);
        assert_true(strlen(cl[i].how) > 0);
        print_message("  %s = %.1f %s (%s)\n", cl[i].name, cl[i].value, cl[i].unit, cl[i].how);
    }
    assert_int_equal(hb_cpu_ceilings(cl, 1), 1); /* respects max */
}

/* The transcendental elementwise ops (silu, gelu, sigmoid; SLEEF's exp2f where built) against the f64
 * formulas element by element, over [-120, 120] (exp overflow and underflow on both sides; the random
 * draws never 0, the edge values below include it), at lengths that leave vector tails (and, over
 * 1 MiB of output, the streaming-store path: main sets HB_CPU_NT_MIN):
 * relative error 1e-6 (the f32 rounding of a few operations and SLEEF's 3.5-ULP exp2f) plus 4 ulp of
 * exp's argument (its f32 rounding, which exp turns into a relative error), or 1e-36
 * absolute near zero (exp(-x) overflows f32 below x = -88.7, where the result becomes -0 and the
 * exact one is under 3e-37). Outputs poisoned with NaN first. */
static void test_ew_range(void **state)
{
    (void)state;
    const int64_t lens[] = { 1, 15, 17, 1000, 4099, 524307 }; /* the last: streaming stores (main) */
    static const hb_op ops[] = { HB_OP_SILU, HB_OP_GELU, HB_OP_SIGMOID };
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            const int64_t n = lens[li];
            char sh[32];
            snprintf(sh, sizeof sh, "n=%lld", (long long)n);
            const hb_op op = ops[oi];
            hb_case c = make_case(op, sh);
            float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
            assert_non_null(x);
            assert_non_null(y);
            hb_test_seed(500u + (uint64_t)li);
            for (int64_t i = 0; i < n; i++)
                do
                    x[i] = (float)(120.0 * hb_test_unif());
                while (x[i] == 0.0f);
            if (n > 4) {
                x[0] = -120.0f;
                x[1] = 120.0f;
                x[2] = 0.0f;
                x[3] = -1e-20f;
            }
            for (int64_t i = 0; i < n; i++)
                y[i] = NAN;
            float *in[1] = { x };
            assert_int_equal(run_on(&g_cpu, &c, in, y), HB_OK);
            for (int64_t i = 0; i < n; i++) {
                const double v = x[i];
                const double u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
                /* 0.5 v (1 + tanh(u)) as v / (1 + exp(-2u)): the same function without the cancellation
                 * of 1 + tanh(u) for u << 0 (in f64 that sum loses 1e-3 relative at v = -6.6) */
                const double r = op == HB_OP_GELU ? v / (1.0 + exp(-2.0 * u))
                                 : op == HB_OP_SIGMOID ? 1.0 / (1.0 + exp(-v)) : v / (1.0 + exp(-v));
                /* exp turns the f32 rounding of its argument into a relative error of the same absolute
                 * size: 4 x 2^-24 x |argument| on top */
                const double arg = op == HB_OP_GELU ? 2.0 * u : v;
                if (!isfinite((double)y[i]) || fabs((double)y[i] - r) > (1e-6 + 4.0 * 0x1p-24 * fabs(arg)) * fabs(r) + 1e-36)
                    fail_msg("%s(%.9g) = %.9g, f64 %.9g (n=%lld, i=%lld)", hb_op_get(op)->name, v, (double)y[i], r,
                             (long long)n, (long long)i);
            }
            free(x);
            free(y);
        }
}

static int setup(void **state)
{
    (void)state;
    if (hb_test_open(&hb_cpu_ops, &g_cpu) || hb_test_open(&hb_cpu_ref_ops, &g_ref))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hb_test_close(&g_cpu);
    hb_test_close(&g_ref);
    return 0;
}

int main(void)
{
    /* the run's settings from the environment, as cli/main.c reads them (core/config.h) */
    hb_config_from_env(hb_config_boundary());
    hb_cpu_ops.configure(hb_config_get());
    /* Streaming stores in the cpu backend from 1 MiB of output (default: the last-level cache), so
     * that the large elementwise cases above run that path too. */
    setenv("HB_CPU_NT_MIN", "1048576", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instances),
        cmocka_unit_test(test_ref_row_step),
        cmocka_unit_test(test_cpu_ref_backend),
        cmocka_unit_test(test_cpu_backend),
        cmocka_unit_test(test_cpu_repeatable),
        cmocka_unit_test(test_cpu_attention_tiles),
        cmocka_unit_test(test_skips),
        cmocka_unit_test(test_ceilings),
        cmocka_unit_test(test_ew_range),
        cmocka_unit_test(test_ew_table_complete),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
