/* test_plan.c - the planner (analysis/plan.h) on synthetic cost tables with known optima, the model
 * graphs (core/models.h), and the cost table's refusals (analysis/plan_costs.h) on results missing
 * an op or a transfer route. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/plan.h"
#include "analysis/plan_costs.h"
#include "core/models.h"

#define assert_near(a, b, eps) do { double a_ = (a), b_ = (b); \
    if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g +- %g", #a, a_, b_, (double)(eps)); } while (0)

#define N HB_PLAN_MAXIN
static const int mem2[2] = {0, 1};         /* device 0 computes in host memory, device 1 in its own */
static const double INF = HUGE_VAL;

/* A link with a fixed cost per copy (latency) and bandwidth bw bytes/s each way. */
static hb_plan_link link_(double lat, double bw) { hb_plan_link l = {lat, bw, lat, bw}; return l; }

static void test_seed_rule(void **state)
{
    (void)state;
    const char *rule = NULL;
    assert_int_equal(hb_plan_seed_role(HB_OP_MATMUL, 4194304, &rule), HB_SEED_GPU);
    assert_string_equal(rule, "matmul > 10000 elements -> GPU");
    assert_int_equal(hb_plan_seed_role(HB_OP_MATMUL, 10000, NULL), HB_SEED_CPU); /* "above", not at */
    assert_int_equal(hb_plan_seed_role(HB_OP_CONV2D, 10, NULL), HB_SEED_ANE);
    assert_int_equal(hb_plan_seed_role(HB_OP_RELU, 1e9, NULL), HB_SEED_ANE);
    assert_int_equal(hb_plan_seed_role(HB_OP_SILU, 1, NULL), HB_SEED_ANE);
    assert_int_equal(hb_plan_seed_role(HB_OP_ADD, 1e9, NULL), HB_SEED_CPU);
    assert_int_equal(hb_plan_seed_role(HB_OP_ATTENTION, 1e9, NULL), HB_SEED_CPU);
}

/* Four ops in a chain whose fastest device alternates; every copy costs 1.5 s. The greedy plan
 * (each op on its fastest device) pays 4 copies: 4 + 6 = 10 s; staying on either device costs 6 s,
 * which is the optimum. */
static void test_greedy_loses_to_one_device(void **state)
{
    (void)state;
    int in[4 * N] = {0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1};
    double bytes[5] = {100, 100, 100, 100, 100};
    double cost[4 * 2] = {1, 2, 2, 1, 1, 2, 2, 1};
    hb_plan_link links[2] = {{0}, link_(1.5, 1e18)};
    for (int cyclic = 0; cyclic <= 1; cyclic++) {
        hb_plan_problem p = {4, 2, 2, in, bytes, cost, mem2, links, cyclic};
        int greedy[4];
        assert_int_equal(hb_plan_greedy(&p, cost, greedy), 0);
        assert_int_equal(greedy[0], 0);
        assert_int_equal(greedy[1], 1);
        assert_int_equal(greedy[2], 0);
        assert_int_equal(greedy[3], 1);
        char err[256];
        hb_plan_result g, o;
        assert_int_equal(hb_plan_evaluate(&p, greedy, &g, err, sizeof err), HB_OK);
        assert_near(g.total_s, 10, 1e-9);
        assert_near(g.compute_s, 4, 1e-9);
        assert_int_equal(g.ncopies, 4);
        assert_int_equal(hb_plan_optimal(&p, &o, err, sizeof err), HB_OK);
        assert_near(o.total_s, 6, 1e-9);
        assert_near(o.xfer_s, 0, 1e-12);
        assert_int_equal(o.ncopies, 0);
        for (int i = 1; i < 4; i++) assert_int_equal(o.steps[i].dev, o.steps[0].dev); /* one device */
        hb_plan_result_free(&g);
        hb_plan_result_free(&o);
    }
}

/* A residual branch: a = A(x); b = B(a); y = add(b, x). Copies cost bytes / 1000 s; x is 6000 bytes,
 * a and b 1000. A is fast on the CPU, B and add on the GPU.
 *   cpu,gpu,gpu: 1 + 1 (a in) + 1 + 6 (x, the skip, in) + 1 + 1 (y back) = 11
 *   cpu,gpu,cpu: 1 + 1 (a in) + 1 + 1 (b back) + 5 = 9   <- optimum
 *   gpu,gpu,gpu: 6 + 5 + 1 + 1 + 1 = 14; cpu,cpu,cpu: 1 + 5 + 5 = 11
 * A planner that forgot the skip edge would see cpu,gpu,gpu as 5 and pick it. */
static void test_residual_branch(void **state)
{
    (void)state;
    int in[3 * N] = {0, -1, -1, 1, -1, -1, 2, 0, -1};
    double bytes[4] = {6000, 1000, 1000, 1000};
    double cost[3 * 2] = {1, 5, 5, 1, 5, 1};
    hb_plan_link links[2] = {{0}, link_(0, 1000)};
    hb_plan_problem p = {3, 2, 2, in, bytes, cost, mem2, links, 0};
    char err[256];
    hb_plan_result o, h;
    assert_int_equal(hb_plan_optimal(&p, &o, err, sizeof err), HB_OK);
    assert_near(o.total_s, 9, 1e-9);
    assert_int_equal(o.steps[0].dev, 0);
    assert_int_equal(o.steps[1].dev, 1);
    assert_int_equal(o.steps[2].dev, 0);
    assert_near(o.steps[1].xfer_bytes, 1000, 0);
    assert_near(o.steps[2].xfer_bytes, 1000, 0); /* b back; x is in host memory already */
    int hybrid[3] = {0, 1, 1};
    assert_int_equal(hb_plan_evaluate(&p, hybrid, &h, err, sizeof err), HB_OK);
    assert_near(h.total_s, 11, 1e-9);
    assert_near(h.steps[2].xfer_bytes, 6000, 0); /* the skip tensor crossed to the add */
    assert_near(h.end_xfer_bytes, 1000, 0);
    hb_plan_result_free(&o);
    hb_plan_result_free(&h);
}

/* A copy made once serves every later reader on that memory: x read by three GPU ops crosses once. */
static void test_copy_reused(void **state)
{
    (void)state;
    int in[3 * N] = {0, -1, -1, 0, 1, -1, 0, 2, -1};
    double bytes[4] = {1000, 10, 10, 10};
    double cost[3 * 2] = {9, 1, 9, 1, 9, 1};
    hb_plan_link links[2] = {{0}, link_(0, 1000)};
    hb_plan_problem p = {3, 2, 2, in, bytes, cost, mem2, links, 0};
    int gpu[3] = {1, 1, 1};
    char err[256];
    hb_plan_result r;
    assert_int_equal(hb_plan_evaluate(&p, gpu, &r, err, sizeof err), HB_OK);
    assert_near(r.total_s, 3 + 1 + 0.01, 1e-9);
    assert_int_equal(r.ncopies, 2);
    hb_plan_result_free(&r);
}

/* Exhaustive search against the DP on random graphs with skips: 3 devices (two share host memory,
 * one its own), random costs (some impossible), cyclic or not. */
static uint64_t rng = 88172645463325252ull;
static double unif(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (double)(rng >> 11) / 9007199254740992.0; }

static void test_optimal_is_exhaustive_minimum(void **state)
{
    (void)state;
    const int mem3[3] = {0, 0, 1};
    for (int trial = 0; trial < 200; trial++) {
        int n = 2 + (int)(unif() * 5), nd = 3;
        int in[8 * N];
        double bytes[9], cost[8 * 3];
        for (int t = 0; t <= n; t++) bytes[t] = 100 + unif() * 5000;
        for (int i = 0; i < n; i++) {
            in[i * N] = i; /* the previous op's output (or the input) */
            in[i * N + 1] = unif() < 0.4 ? (int)(unif() * (i + 1)) : -1; /* a skip */
            in[i * N + 2] = -1;
            for (int d = 0; d < nd; d++) cost[i * nd + d] = unif() < 0.1 ? INF : 0.5 + unif() * 5;
        }
        hb_plan_link links[2] = {{0}, {unif() * 2, 1000 + unif() * 3000, unif() * 2, 1000 + unif() * 3000}};
        hb_plan_problem p = {n, nd, 2, in, bytes, cost, mem3, links, trial % 2};
        double best = INF;
        int dev[8];
        char err[256];
        for (int code = 0; code < (int)pow(3, n); code++) {
            for (int i = 0, c = code; i < n; i++, c /= 3) dev[i] = c % 3;
            hb_plan_result r;
            assert_int_equal(hb_plan_evaluate(&p, dev, &r, err, sizeof err), HB_OK);
            if (r.total_s < best) best = r.total_s;
            hb_plan_result_free(&r);
        }
        hb_plan_result o;
        hb_status st = hb_plan_optimal(&p, &o, err, sizeof err);
        if (!isfinite(best)) { assert_int_equal(st, HB_EINVAL); continue; }
        assert_int_equal(st, HB_OK);
        assert_near(o.total_s, best, 1e-9 * best);
        hb_plan_result_free(&o);
    }
}

static void test_bad_problem(void **state)
{
    (void)state;
    int in[2 * N] = {0, -1, -1, 2, -1, -1}; /* op 1 reads its own output */
    double bytes[3] = {1, 1, 1}, cost[2 * 2] = {1, 1, 1, 1};
    hb_plan_link links[2] = {{0}, link_(0, 1)};
    hb_plan_problem p = {2, 2, 2, in, bytes, cost, mem2, links, 0};
    char err[256] = "";
    hb_plan_result r;
    assert_int_equal(hb_plan_optimal(&p, &r, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "made after it"));
    int ok_in[2 * N] = {0, -1, -1, 1, -1, -1};
    double nocost[2 * 2] = {1, 1, INF, (double)NAN};
    hb_plan_problem q = {2, 2, 2, ok_in, bytes, nocost, mem2, links, 0};
    assert_int_equal(hb_plan_optimal(&q, &r, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "op 1 has no cost on any device"));
}

static void test_models(void **state)
{
    (void)state;
    hb_model m;
    char err[512];
    assert_int_equal(hb_model_build("resnet-51", &m, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "unknown model 'resnet-51'"));
    assert_non_null(strstr(err, "tinyllama-decode"));
    /* the decoder layer: the chain's 14 steps; attention reads q, k, v; the second residual reads h */
    assert_int_equal(hb_model_build("tinyllama-decode", &m, err, sizeof err), HB_OK);
    assert_int_equal(m.n, HB_CHAIN_NSTEPS);
    assert_true(m.cyclic);
    assert_int_equal(m.nodes[4].c.op, HB_OP_ATTENTION);
    assert_int_equal(m.nodes[4].in[0], 1);
    assert_int_equal(m.nodes[4].in[1], 2);
    assert_int_equal(m.nodes[4].in[2], 3);
    assert_near(m.nodes[4].weight_bytes, 2 * 512 * 256 * 4.0, 0); /* the KV cache stays with it */
    assert_int_equal(m.nodes[6].in[0], HB_MODEL_INPUT);                /* residual1 = x + o */
    assert_int_equal(m.nodes[13].in[0], 6);                            /* residual2 = h + d */
    assert_near(m.nodes[1].weight_bytes, 2048.0 * 2048 * 4, 0);
    assert_near(m.nodes[1].out_bytes, 2048 * 4.0, 0);
    hb_model_free(&m);
    /* ResNet-50: stem 3, 16 blocks of 7 ops, 4 projections, pool and fc */
    assert_int_equal(hb_model_build("resnet50-mb1", &m, err, sizeof err), HB_OK);
    assert_int_equal(m.n, 3 + 16 * 7 + 4 + 2);
    assert_false(m.cyclic);
    int adds = 0;
    for (int i = 0; i < m.n; i++) {
        if (m.nodes[i].c.op != HB_OP_ADD) continue;
        adds++;
        assert_true(m.nodes[i].in[1] >= 0 && m.nodes[i].in[1] < m.nodes[i].in[0] - 3); /* the skip, from before the block's convs */
    }
    assert_int_equal(adds, 16);
    assert_int_equal(m.nodes[m.n - 1].c.op, HB_OP_MATMUL);
    assert_int_equal(m.nodes[m.n - 1].c.shape.m, 1);
    hb_model_free(&m);
    assert_int_equal(hb_model_build("resnet50-block", &m, err, sizeof err), HB_OK);
    assert_int_equal(m.n, 7);
    assert_int_equal(m.nodes[5].c.op, HB_OP_ADD);
    assert_int_equal(m.nodes[5].in[1], HB_MODEL_INPUT);
    hb_model_free(&m);
}

/* ---- the cost table from a results file ---- */

static json_t *case_rec(const char *backend, const hb_case *c, const char *mode, const char *route, double compute, double total, double h2d)
{
    char sh[256];
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:{s:{s:f},s:{s:f},s:{s:f},s:{s:f}}}", "type", "case", "backend", backend, "op",
                     hb_op_get(c->op)->name, "family", hb_family_name(hb_op_get(c->op)->family), "shape_str",
                     hb_shape_format(c->op, &c->shape, sh, sizeof sh), "status", "ok", "mode", mode, "dtype", "f32", "route", route, "phases",
                     "compute", "median", compute, "total", "median", total, "h2d", "median", h2d, "d2h", "median", 0.0);
}

/* cpu (f32 cases) and opencl:0:0 (resident cases, f32 cases on pageable for the routing times),
 * every op of model m except the node `skip` on opencl; ceilings of opencl's routes when ceilings. */
static void make_run(hb_run *r, const hb_model *m, int skip, int ceilings)
{
    memset(r, 0, sizeof *r);
    r->path = "mem.jsonl";
    r->meta = json_object();
    r->backends = json_array();
    json_array_append_new(r->backends, json_pack("{s:s,s:b,s:b,s:[]}", "backend", "cpu", "available", 1, "host_memory", 1, "ceilings"));
    json_t *cl = json_pack("{s:s,s:b,s:b,s:[]}", "backend", "opencl:0:0", "available", 1, "host_memory", 0, "ceilings");
    if (ceilings)
        for (int rt = 0; rt < 2; rt++) {
            char h[32], d[32];
            snprintf(h, sizeof h, "h2d_gbps_%s", hb_route_name((hb_route)rt));
            snprintf(d, sizeof d, "d2h_gbps_%s", hb_route_name((hb_route)rt));
            json_array_append_new(json_object_get(cl, "ceilings"), json_pack("{s:s,s:f}", "name", h, "value", 10.0));
            json_array_append_new(json_object_get(cl, "ceilings"), json_pack("{s:s,s:f}", "name", d, "value", 10.0));
        }
    json_array_append_new(r->backends, cl);
    r->cases = json_array();
    for (int i = 0; i < m->n; i++) {
        const hb_case *c = &m->nodes[i].c;
        json_array_append_new(r->cases, case_rec("cpu", c, "f32", "pageable", 1e-3 * (i + 1), 1e-3 * (i + 1), 0));
        if (i == skip) continue;
        json_array_append_new(r->cases, case_rec("opencl:0:0", c, "resident", "pageable", 1e-4, 1.2e-4, 0));
        json_array_append_new(r->cases, case_rec("opencl:0:0", c, "f32", "pageable", 2e-4, 5e-3, 1e-3)); /* compute ignored: resident wins */
    }
}

/* hb_plan_costs_build after the run's JSON is read into its structs again (the test changes records
 * between calls) */
static hb_status costs_build(hb_run *r, const hb_model *m, const char *backends, const char *routes, hb_plan_costs *c,
                             hb_plan_costs_why *why, char *err, size_t errlen)
{
    assert_int_equal(hb_run_index(r), HB_OK);
    return hb_plan_costs_build(r, m, backends, routes, c, why, err, errlen);
}

static void free_run(hb_run *r)
{
    hb_run_unindex(r);
    json_decref(r->meta);
    json_decref(r->backends);
    json_decref(r->cases);
}

static void test_costs_from_results(void **state)
{
    (void)state;
    hb_model m;
    char err[4096];
    assert_int_equal(hb_model_build("tinyllama-decode", &m, err, sizeof err), HB_OK);
    hb_run r;
    hb_plan_costs c;
    hb_plan_costs_why why;
    /* complete: costs from resident on opencl, f32 on cpu; routing times from f32 totals */
    make_run(&r, &m, -1, 1);
    /* the chain case of the layer: on opencl with its layer as one stream (that median is the figure),
     * on cpu without one (its total is) */
    assert_true(m.has_whole);
    json_t *ch = case_rec("opencl:0:0", &m.whole, "resident", "pageable", 1e-3, 9e-3, 0);
    json_object_set_new(ch, "layer", json_pack("{s:f,s:f}", "median", 2e-3, "enqueue_s", 1e-3));
    json_array_append_new(r.cases, ch);
    json_array_append_new(r.cases, case_rec("cpu", &m.whole, "f32", "pageable", 6e-3, 7e-3, 0));
    if (costs_build(&r, &m, NULL, NULL, &c, &why, err, sizeof err) != HB_OK) fail_msg("%s", err);
    assert_near(c.whole_s[0], 7e-3, 1e-15);
    assert_near(c.whole_s[1], 2e-3, 1e-15);
    assert_int_equal(c.ndev, 2);
    assert_int_equal(c.nmem, 2);
    assert_true(c.route_ok[HB_ROUTE_PAGEABLE] && c.route_ok[HB_ROUTE_PINNED] && !c.route_ok[HB_ROUTE_MAPPED]);
    assert_near(c.cost[0 * 2 + 1], 1e-4, 0);
    assert_string_equal(c.cost_mode[0 * 2 + 1], "resident");
    assert_near(c.cost[4 * 2 + 0], 5e-3, 1e-15);
    assert_near(c.cost[3 * 2 + 0], 3e-3, 1e-15); /* v_proj: k_proj's shape too, the lower of the two cases */
    assert_near(c.rank[3 * 2 + 1], 5e-3, 0);
    assert_near(c.link[HB_ROUTE_PAGEABLE][1].h2d_bw, 10e9, 1);
    hb_plan_named *p;
    int np;
    assert_int_equal(hb_plan_costs_plans(&c, HB_ROUTE_PAGEABLE, NULL, &p, &np, &why, err, sizeof err), HB_OK);
    assert_int_equal(np, 2 + 3);
    assert_string_equal(p[np - 1].kind, "optimal");
    assert_near(p[1].res.total_s, 14 * 1e-4, 1e-12); /* all on opencl: resident costs, nothing crosses */
    assert_true(p[np - 1].res.total_s <= p[1].res.total_s);
    assert_int_equal(p[2].dev[1], 1); /* heuristic: q_proj (4 M elements) -> the GPU rule -> opencl */
    assert_int_equal(p[2].dev[0], 0); /* rmsnorm -> CPU */
    hb_plan_named_free(p, np);
    hb_plan_costs_free(&c);
    /* a named route that the file lacks */
    assert_int_equal(costs_build(&r, &m, NULL, "mapped", &c, &why, err, sizeof err), HB_EINVAL);
    assert_int_equal(why, HB_PLAN_COSTS_MISSING);
    assert_non_null(strstr(err, "h2d_gbps_mapped and d2h_gbps_mapped of opencl:0:0"));
    /* an unknown backend named */
    assert_int_equal(costs_build(&r, &m, "cuda", NULL, &c, &why, err, sizeof err), HB_EINVAL);
    assert_int_equal(why, HB_PLAN_COSTS_BAD);
    assert_non_null(strstr(err, "--backend cuda"));
    free_run(&r);
    /* one op missing on opencl: refused, naming the op, its shape and the backend */
    make_run(&r, &m, 4, 1);
    assert_int_equal(costs_build(&r, &m, NULL, NULL, &c, &why, err, sizeof err), HB_EINVAL);
    assert_int_equal(why, HB_PLAN_COSTS_MISSING);
    assert_non_null(strstr(err, "lacks 1 op of model tinyllama-decode"));
    assert_non_null(strstr(err, "attention batch=1 heads=32 kv_heads=4 seq=1 kv_seq=512 head_dim=64 causal=1 (attention) on opencl:0:0"));
    assert_null(strstr(err, "q_proj"));
    /* ... unless the plan is over cpu alone */
    assert_int_equal(costs_build(&r, &m, "cpu", NULL, &c, &why, err, sizeof err), HB_OK);
    assert_int_equal(c.nmem, 1);
    hb_plan_costs_free(&c);
    free_run(&r);
    /* no transfer ceilings at all on a device with its own memory */
    make_run(&r, &m, -1, 0);
    assert_int_equal(costs_build(&r, &m, NULL, NULL, &c, &why, err, sizeof err), HB_EINVAL);
    assert_int_equal(why, HB_PLAN_COSTS_MISSING);
    assert_non_null(strstr(err, "no transfer route"));
    assert_non_null(strstr(err, "h2d_gbps_pageable"));
    free_run(&r);
    hb_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_rule),
        cmocka_unit_test(test_greedy_loses_to_one_device),
        cmocka_unit_test(test_residual_branch),
        cmocka_unit_test(test_copy_reused),
        cmocka_unit_test(test_optimal_is_exhaustive_minimum),
        cmocka_unit_test(test_bad_problem),
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_costs_from_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
