/*
 * test_exec.c - the one executor (measure/exec.h) on cpu-ref and cpu: random inputs, poisoned outputs,
 * values asserted against the f64 reference.
 *   - one step (an op case is a one-step graph): matmul, add, relu and rmsnorm, each verified, and
 *     bit for bit the backend's own run on the same buffers (the single op's path is the executor);
 *   - a graph of steps: the TinyLlama decode layer (core/models.h) op by op with hb_exec_run and
 *     enqueued back to back with hb_exec_enqueue: the same output bit for bit, within the chain's
 *     tolerance of the f64 reference;
 *   - the executor's rules, on a wrapped cpu backend that counts its calls and has a fake device
 *     timer: the device's seconds where asked and begun, the host's otherwise; run_async only with
 *     HB_EXEC_ASYNC; no settle runs with HB_EXEC_NO_PREP; place and fetch call upload and download
 *     once per buffer; an enqueue's failing step named; set-up moves untimed; a launch runs its pre
 *     case and the op with no clock and no settle run; the hot rule's settle runs on the device
 *     timer; a graph launched under the device timer, refused without one.
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

#include "measure/measure.h"
#include "measure/exec.h"
#include "measure/registry.h"
#include "measure/verify.h"
#include "core/convert.h"
#include "core/models.h"
#include "cpu_ref/ref.h"

static hb_instance g_inst[2]; /* cpu-ref, cpu */

static int open_one(const char *type, hb_instance *out)
{
    hb_instance all[16];
    char why[256] = "";
    const hb_backend_entry *e = hb_backend_find(type);
    int n = e ? hb_backend_open(e, all, 16, why, sizeof why) : 0;
    if (n < 1) { fprintf(stderr, "test_exec: %s: %s\n", type, why); return -1; }
    *out = all[0];
    for (int k = 1; k < n; k++) all[k].ops->close(&all[k]);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    return open_one("cpu-ref", &g_inst[0]) || open_one("cpu", &g_inst[1]) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) g_inst[k].ops->close(&g_inst[k]);
    return 0;
}

/* A buffer of n f32 elements on inst; when x64 is set, filled from it. */
static hb_buf buf_f32(hb_instance *in, size_t n, const double *x64)
{
    hb_buf b = {0};
    assert_int_equal(in->ops->buf_alloc(in, n ? n * 4 : 4, HB_ROUTE_PAGEABLE, &b), HB_OK);
    b.dtype = HB_F32;
    if (x64) hb_convert(b.host, HB_ELEM_F32, x64, HB_ELEM_F64, n);
    return b;
}

/* ---- one step ---- */
static void one_step(hb_instance *in, hb_case c, unsigned long long seed)
{
    char why[256] = "";
    if (hb_shape_normalize(c.op, &c.shape, why, sizeof why) != HB_OK) fail_msg("%s: %s", hb_op_get(c.op)->name, why);
    c.dtype = HB_F32;
    c.mode = HB_MODE_F32;
    c.route = HB_ROUTE_PAGEABLE;
    if (in->ops->supports(in, &c, why, sizeof why) != HB_OK) fail_msg("%s on %s: %s", hb_op_get(c.op)->name, in->name, why);
    const int nin = hb_op_get(c.op)->ninputs;
    size_t nout = (size_t)hb_op_output_elems(c.op, &c.shape);
    double *x64[HB_MAX_INPUTS] = {NULL, NULL, NULL}, *ref = malloc(nout * sizeof(double));
    hb_buf bin[HB_MAX_INPUTS], out = buf_f32(in, nout, NULL), out2 = buf_f32(in, nout, NULL);
    hb_exec_step s = {.inst = in, .c = &c, .out = &out};
    hb_prep_state ps = {0};
    s.prep = &ps;
    const double *r64[HB_MAX_INPUTS] = {NULL, NULL, NULL};
    for (int j = 0; j < nin; j++) {
        size_t n = (size_t)hb_op_input_elems(c.op, &c.shape, j);
        x64[j] = malloc(n * sizeof(double));
        hb_fill_random(x64[j], n, seed, (unsigned long long)j);
        /* the reference reads the inputs as the backend does: rounded to f32 */
        hb_buf tmp = buf_f32(in, n, x64[j]);
        hb_convert(x64[j], HB_ELEM_F64, tmp.host, HB_ELEM_F32, n);
        in->ops->buf_free(in, &tmp);
        bin[j] = buf_f32(in, n, x64[j]);
        s.in[j] = &bin[j];
        r64[j] = x64[j];
    }
    assert_int_equal(hb_ref_compute(&c, r64, ref, 1), HB_OK);
    hb_buf *ins[HB_MAX_INPUTS] = {s.in[0], s.in[1], s.in[2]};
    double tp = 0;
    assert_int_equal(hb_exec_place(in, ins, nin, 1, &tp), HB_OK);
    assert_true(tp >= 0);
    hb_verify_poison(out.host, HB_ELEM_F32, nout);
    double t = -1, host = -1, prep = -1;
    assert_int_equal(hb_exec_run(&s, 0, HB_EXEC_DEV_TIMER, &t, &host, &prep), HB_OK);
    assert_true(t > 0 && host > 0 && prep >= 0);
    assert_true(t == host); /* no device timer on a host backend: the host's seconds */
    assert_int_equal(ps.calls, 1);
    assert_true(ps.runs >= 1); /* hot: settled by untimed runs */
    double tf = 0;
    hb_buf *ob = &out;
    assert_int_equal(hb_exec_fetch(in, &ob, 1, 1, &tf), HB_OK);
    hb_verify v;
    double rel = hb_verify_rel_error(out.host, HB_ELEM_F32, ref, nout, 0, &v);
    if (!(rel <= hb_op_tolerance(c.op, &c.shape, c.dtype)))
        fail_msg("%s on %s: relative error %g over %g", hb_op_get(c.op)->name, in->name, rel, hb_op_tolerance(c.op, &c.shape, c.dtype));
    assert_int_equal(v.nonfinite, 0);
    /* the backend's own run on the same inputs: the same bits */
    hb_verify_poison(out2.host, HB_ELEM_F32, nout);
    assert_int_equal(in->ops->run(in, &c, ins, &out2), HB_OK);
    assert_memory_equal(out.host, out2.host, nout * 4);
    /* cold, no hot rule: the same bits again, no settle runs */
    long runs = ps.runs;
    hb_verify_poison(out.host, HB_ELEM_F32, nout);
    assert_int_equal(hb_exec_run(&s, 1, 0, &t, NULL, &prep), HB_OK);
    assert_int_equal(ps.runs, runs);
    assert_memory_equal(out.host, out2.host, nout * 4);
    for (int j = 0; j < nin; j++) { in->ops->buf_free(in, &bin[j]); free(x64[j]); }
    in->ops->buf_free(in, &out);
    in->ops->buf_free(in, &out2);
    free(ref);
}

static void test_one_step(void **state)
{
    (void)state;
    srand(7);
    for (int k = 0; k < 2; k++) {
        hb_instance *in = &g_inst[k];
        hb_case c = {.op = HB_OP_MATMUL};
        c.shape.m = 1 + rand() % 40; c.shape.n = 1 + rand() % 70; c.shape.k = 1 + rand() % 90;
        one_step(in, c, 11 + (unsigned long long)k);
        c = (hb_case){.op = HB_OP_ADD};
        c.shape.n = 1 + rand() % 5000;
        one_step(in, c, 12);
        c = (hb_case){.op = HB_OP_RELU};
        c.shape.n = 1 + rand() % 5000;
        one_step(in, c, 13);
        c = (hb_case){.op = HB_OP_RMSNORM};
        c.shape.rows = 1 + rand() % 8; c.shape.cols = 8 + rand() % 300;
        one_step(in, c, 14);
    }
}

/* ---- a graph: the decode layer ---- */
static int tix(int e) { return e == HB_MODEL_INPUT ? 0 : e + 1; }

static void test_decode_graph(void **state)
{
    (void)state;
    hb_model m;
    char err[256];
    assert_int_equal(hb_model_build("tinyllama-decode", &m, err, sizeof err), HB_OK);
    hb_instance *in = &g_inst[1]; /* cpu */
    const int n = m.n;
    hb_buf *act = calloc((size_t)n + 1, sizeof *act), (*w)[HB_MAX_INPUTS] = calloc((size_t)n, sizeof *w);
    double **a64 = calloc((size_t)n + 1, sizeof *a64);
    hb_exec_step *steps = calloc((size_t)n, sizeof *steps);
    hb_prep_state *ps = calloc((size_t)n, sizeof *ps);
    size_t n0 = (size_t)(m.in_bytes / 4);
    a64[0] = malloc(n0 * sizeof(double));
    hb_fill_random(a64[0], n0, 5, 0);
    act[0] = buf_f32(in, n0, a64[0]);
    hb_convert(a64[0], HB_ELEM_F64, act[0].host, HB_ELEM_F32, n0);
    for (int i = 0; i < n; i++) {
        const hb_model_node *nd = &m.nodes[i];
        const int nin = hb_op_get(nd->c.op)->ninputs;
        size_t no = (size_t)(nd->out_bytes / 4);
        act[i + 1] = buf_f32(in, no, NULL);
        hb_verify_poison(act[i + 1].host, HB_ELEM_F32, no);
        a64[i + 1] = malloc(no * sizeof(double));
        const double *r[HB_MAX_INPUTS] = {NULL, NULL, NULL};
        steps[i] = (hb_exec_step){.inst = in, .c = &nd->c, .out = &act[i + 1], .prep = &ps[i]};
        for (int j = 0; j < nin; j++) {
            if (nd->slot[j] >= 0) {
                int t = tix(nd->in[nd->slot[j]]);
                steps[i].in[j] = &act[t];
                r[j] = a64[t];
                continue;
            }
            size_t ne = (size_t)hb_op_input_elems(nd->c.op, &nd->c.shape, j);
            double *x = malloc(ne * sizeof(double));
            hb_fill_random(x, ne, 5, 100 + (unsigned long long)(i * 4 + j));
            if (nd->c.op == HB_OP_MATMUL && j == 1)
                for (size_t q = 0; q < ne; q++) x[q] *= 1.0 / 64; /* activations stay O(1) */
            w[i][j] = buf_f32(in, ne, x);
            hb_convert(x, HB_ELEM_F64, w[i][j].host, HB_ELEM_F32, ne);
            steps[i].in[j] = &w[i][j];
            r[j] = x;
        }
        assert_int_equal(hb_ref_compute(&nd->c, r, a64[i + 1], 1), HB_OK);
        for (int j = 0; j < nin; j++) if (nd->slot[j] < 0) free((void *)r[j]);
    }
    size_t ny = (size_t)(m.nodes[n - 1].out_bytes / 4);
    /* op by op, each under the hot rule */
    for (int i = 0; i < n; i++) {
        double t, prep;
        assert_int_equal(hb_exec_run(&steps[i], 0, HB_EXEC_DEV_TIMER, &t, NULL, &prep), HB_OK);
        assert_true(t > 0);
        assert_int_equal(ps[i].calls, 1);
    }
    double rel = hb_verify_rel_error(act[n].host, HB_ELEM_F32, a64[n], ny, 0, NULL);
    double tol = hb_op_tolerance(HB_OP_CHAIN, &m.whole.shape, HB_F32);
    if (!(rel <= tol)) fail_msg("decode layer op by op: relative error %g over %g", rel, tol);
    float *y1 = malloc(ny * 4);
    memcpy(y1, act[n].host, ny * 4);
    /* enqueued back to back (no timer on cpu): the same bits */
    for (int t = 1; t <= n; t++) hb_verify_poison(act[t].host, HB_ELEM_F32, (size_t)(m.nodes[t - 1].out_bytes / 4));
    double enq = -1;
    int failed = 7;
    double *per = calloc((size_t)n, sizeof *per);
    assert_int_equal(hb_exec_enqueue(steps, n, NULL, &enq, per, &failed), HB_OK);
    double sum = 0;
    for (int i = 0; i < n; i++) { assert_true(per[i] > 0); sum += per[i]; }
    assert_true(fabs(sum - enq) <= 1e-9 + 1e-6 * enq); /* the steps' shares add up to the enqueue */
    free(per);
    assert_int_equal(failed, -1);
    assert_true(enq > 0);
    assert_memory_equal(act[n].host, y1, ny * 4);
    for (int i = 0; i < n; i++) assert_int_equal(ps[i].calls, 1); /* no hot rule in an enqueue */
    free(y1);
    for (int t = 0; t <= n; t++) { in->ops->buf_free(in, &act[t]); free(a64[t]); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < HB_MAX_INPUTS; j++) if (w[i][j].host) in->ops->buf_free(in, &w[i][j]);
    free(act); free(w); free(a64); free(steps); free(ps);
    hb_model_free(&m);
}

/* ---- the rules, on a counting wrapper of cpu with a fake device timer ---- */
static hb_backend_ops g_wrap;
static const hb_backend_ops *g_real;
static int n_run, n_async, n_up, n_down, n_tb, n_te, fail_at = -1, n_seen;
static const double FAKE_DEV = 0.125;

static hb_status w_run(hb_instance *i, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    n_run++;
    if (n_seen++ == fail_at) return HB_EDEVICE;
    return g_real->run(i, c, in, out);
}
static hb_status w_async(hb_instance *i, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    n_async++;
    if (n_seen++ == fail_at) return HB_EDEVICE;
    return g_real->run(i, c, in, out);
}
static hb_status w_up(hb_instance *i, hb_buf *b) { n_up++; return g_real->upload(i, b); }
static hb_status w_down(hb_instance *i, hb_buf *b) { n_down++; return g_real->download(i, b); }
static int n_graph;
static hb_status w_graph(hb_instance *i, void *g) { (void)i; n_graph++; return g ? HB_OK : HB_EDEVICE; }
static hb_status w_tb(hb_instance *i) { (void)i; n_tb++; return HB_OK; }
static hb_status w_te(hb_instance *i, double *s) { (void)i; n_te++; *s = FAKE_DEV; return HB_OK; }

static void test_rules(void **state)
{
    (void)state;
    hb_instance in = g_inst[1];
    g_real = in.ops;
    g_wrap = *g_real;
    g_wrap.run = w_run;
    g_wrap.run_async = w_async;
    g_wrap.upload = w_up;
    g_wrap.download = w_down;
    g_wrap.timer_begin = w_tb;
    g_wrap.timer_end = w_te;
    in.ops = &g_wrap;
    hb_case c = {.op = HB_OP_RELU, .dtype = HB_F32, .mode = HB_MODE_F32};
    c.shape.n = 1000;
    assert_int_equal(hb_shape_normalize(c.op, &c.shape, NULL, 0), HB_OK);
    double x[1000];
    hb_fill_random(x, 1000, 3, 0);
    hb_buf a = buf_f32(&in, 1000, x), y = buf_f32(&in, 1000, NULL);
    hb_prep_state ps = {0};
    hb_exec_step s = {.inst = &in, .c = &c, .in = {&a, NULL, NULL}, .out = &y, .prep = &ps};
    double t, host, prep;
    /* the device timer: its seconds */
    assert_int_equal(hb_exec_run(&s, 0, HB_EXEC_DEV_TIMER | HB_EXEC_NO_PREP, &t, &host, &prep), HB_OK);
    assert_true(t == FAKE_DEV);
    assert_true(host > 0 && host < FAKE_DEV);
    assert_true(prep == 0);
    assert_int_equal(n_tb, 1); assert_int_equal(n_te, 1); assert_int_equal(n_run, 1); assert_int_equal(n_async, 0);
    assert_int_equal(ps.calls, 0);
    for (int q = 0; q < 1000; q++) assert_true(((float *)y.host)[q] == (float)fmax(0, (double)((float *)a.host)[q]));
    /* no timer asked: the host's seconds; async: run_async */
    assert_int_equal(hb_exec_run(&s, 0, HB_EXEC_ASYNC | HB_EXEC_NO_PREP, &t, &host, NULL), HB_OK);
    assert_true(t == host && t < FAKE_DEV);
    assert_int_equal(n_tb, 1); assert_int_equal(n_async, 1); assert_int_equal(n_run, 1);
    /* hot: settle runs (run), then the timed run */
    assert_int_equal(hb_exec_run(&s, 0, 0, &t, NULL, &prep), HB_OK);
    assert_int_equal(ps.calls, 1);
    assert_int_equal(n_run, 1 + 1 + (int)ps.runs);
    /* place and fetch: one upload / download per buffer, timed on the device timer when asked */
    hb_buf *two[2] = {&a, &y};
    double tp = 0;
    assert_int_equal(hb_exec_place(&in, two, 2, 1, &tp), HB_OK);
    assert_true(tp == FAKE_DEV);
    assert_int_equal(n_up, 2);
    assert_int_equal(hb_exec_fetch(&in, two, 2, 0, &tp), HB_OK);
    assert_true(tp > FAKE_DEV && tp < 2 * FAKE_DEV); /* added: the host's seconds */
    assert_int_equal(n_down, 2);
    /* an enqueue: every step with run_async under one timer; the failing step named */
    hb_exec_step three[3] = {s, s, s};
    int failed = 9, a0 = n_async;
    double dev = 0, enq = 0;
    assert_int_equal(hb_exec_enqueue(three, 3, &dev, &enq, NULL, &failed), HB_OK);
    assert_int_equal(failed, -1);
    assert_true(dev == FAKE_DEV && enq > 0);
    assert_int_equal(n_async, a0 + 3);
    fail_at = n_seen + 1;
    int a1 = n_async;
    assert_int_equal(hb_exec_enqueue(three, 3, NULL, NULL, NULL, &failed), HB_EDEVICE);
    assert_int_equal(n_async, a1 + 2); /* the step after the failing one is not launched */
    assert_int_equal(failed, 1);
    fail_at = -1;
    /* set-up moves: one upload / download each, no timer */
    int tb0 = n_tb, up0 = n_up, down0 = n_down;
    assert_int_equal(hb_exec_setup_place(&in, &a), HB_OK);
    assert_int_equal(hb_exec_setup_fetch(&in, &y), HB_OK);
    assert_int_equal(n_up, up0 + 1); assert_int_equal(n_down, down0 + 1); assert_int_equal(n_tb, tb0);
    /* a launch: run once (the pre case first), no timer, no settle runs, the output computed */
    hb_verify_poison(y.host, HB_ELEM_F32, 1000);
    int r0 = n_run, calls0 = ps.calls;
    hb_case pre = c;
    hb_exec_step sp = s;
    sp.pre = &pre;
    assert_int_equal(hb_exec_launch(&sp), HB_OK);
    assert_int_equal(n_run, r0 + 2); assert_int_equal(n_tb, tb0); assert_int_equal(ps.calls, calls0);
    for (int q = 0; q < 1000; q++) assert_true(((float *)y.host)[q] == (float)fmax(0, (double)((float *)a.host)[q]));
    /* the settle runs of the hot rule time on the device timer too (timed.h): one begin/end per run */
    hb_prep_state ps2 = {0};
    s.prep = &ps2;
    int te0 = n_te;
    assert_int_equal(hb_exec_run(&s, 0, 0, &t, NULL, &prep), HB_OK);
    assert_int_equal(n_te, te0 + (int)ps2.runs);
    assert_true(ps2.best_s == FAKE_DEV); /* settled on the device's seconds */
    /* a graph launch under the device timer; none without a timer */
    g_wrap.graph_launch = w_graph;
    double gd = 0, ge = 0;
    assert_int_equal(hb_exec_graph(&in, (void *)&gd, &gd, &ge), HB_OK);
    assert_true(gd == FAKE_DEV && ge >= 0 && n_graph == 1);
    assert_int_equal(hb_exec_graph(&in, NULL, &gd, &ge), HB_EDEVICE);
    g_wrap.timer_begin = NULL;
    assert_int_equal(hb_exec_graph(&in, (void *)&gd, &gd, &ge), HB_EINVAL);
    assert_int_equal(n_graph, 2);
    in.ops->buf_free(&in, &a);
    in.ops->buf_free(&in, &y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_step),
        cmocka_unit_test(test_decode_graph),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
