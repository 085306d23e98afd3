/*
 * test_replay.c - a device plan replayed end to end (measure/replay.h): a two-device plan of the
 * ResNet-50 bottleneck block on this machine's cpu and opencl (PoCL on the VM; cpu-ref where opencl
 * is not available, then without copies), verified against the f64 reference, in modes f32 and
 * convert; two instances of one device backend (PoCL asked for two CPU devices, as a two-GPU host has
 * cuda:0 and cuda:1), each with its own memory, copying a tensor from one to the other through host
 * memory; a backend that skips its op is caught as wrong; bad input (a mode that is not replayed, an
 * op without a device, a backend not available here) refused with its reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "measure/replay.h"
#include "core/stats.h"
#include "test_config.h"

static hb_model g_model;
static hb_plan_costs g_c;
static hb_instance g_inst[HB_PLAN_MAXDEV];
static int g_two_mem;   /* the second device has its own memory (opencl) */
static hb_options g_o = {.budget_s = 0.02, .ci_target = 0.02, .min_samples = 3, .max_samples = 4, .seed = 42, .repetitions = 1, .passes = 1};

static void plugin_dir(void)
{
    if (getenv("HB_PLUGIN_DIR")) return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = 0;
    for (int k = 0; k < 2; k++) { char *s = strrchr(exe, '/'); if (s) *s = 0; } /* build/tests/x -> build */
    setenv("HB_PLUGIN_DIR", exe, 1);
}

/* The cost table of g_model over cpu and a second device, with no costs (the replay needs none). */
static void costs(const char *second_type, const char *second_id, int own_memory)
{
    memset(&g_c, 0, sizeof g_c);
    g_c.model = &g_model;
    g_c.ndev = 2;
    g_c.nmem = own_memory ? 2 : 1;
    snprintf(g_c.dev[0].id, sizeof g_c.dev[0].id, "cpu");
    snprintf(g_c.dev[0].type, sizeof g_c.dev[0].type, "cpu");
    g_c.dev[0].host_memory = 1;
    snprintf(g_c.dev[1].id, sizeof g_c.dev[1].id, "%s", second_id);
    snprintf(g_c.dev[1].type, sizeof g_c.dev[1].type, "%s", second_type);
    g_c.dev[1].host_memory = !own_memory;
    g_c.dev[1].mem = own_memory ? 1 : 0;
    for (int d = 0; d < HB_PLAN_MAXDEV; d++) g_c.whole_s[d] = NAN;
}

static int setup(void **state)
{
    (void)state;
    plugin_dir();
    /* PoCL 3 (Debian 12) names its CPU device "pthread"; two of them give opencl:0:0 and opencl:0:1.
     * Set before any OpenCL call (the platform reads it once); a user's own setting is kept. */
    setenv("POCL_DEVICES", "pthread pthread", 0);
    char err[512];
    if (hb_model_build("resnet50-block", &g_model, err, sizeof err) != HB_OK) return -1;
    costs("opencl", "opencl:0:0", 1);
    g_two_mem = 1;
    if (hb_replay_open(&g_c, g_inst, err, sizeof err) != HB_OK) {
        fprintf(stderr, "test_replay: %s; the second device is cpu-ref (no copies)\n", err);
        costs("cpu-ref", "cpu-ref", 0);
        g_two_mem = 0;
        if (hb_replay_open(&g_c, g_inst, err, sizeof err) != HB_OK) { fprintf(stderr, "test_replay: %s\n", err); return -1; }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hb_replay_close(&g_c, g_inst);
    hb_model_free(&g_model);
    return 0;
}

/* A plan: every conv on device a, the relus and the add on device b; start_mem where op 0 runs. */
static void plan_alternating(hb_plan_named *p, int a, int b)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "test: conv on %d, the rest on %d", a, b);
    p->kind = "optimal";
    p->dev = calloc((size_t)g_model.n, sizeof *p->dev);
    p->res.steps = calloc((size_t)g_model.n, sizeof *p->res.steps);
    p->res.nops = g_model.n;
    for (int i = 0; i < g_model.n; i++) p->dev[i] = p->res.steps[i].dev = g_model.nodes[i].c.op == HB_OP_CONV2D ? a : b;
    p->res.start_mem = g_c.dev[p->dev[0]].mem;
}

static void plan_free(hb_plan_named *p)
{
    free(p->dev);
    free(p->res.steps);
}

static double jnum(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static json_t *tot_of(json_t *rec) { return json_object_get(json_object_get(rec, "phases"), "total"); }

/* rec verified ok, its total's CI around its median, one step per op, ndev devices named. */
static void check_ok(json_t *rec, hb_status st, size_t ndev)
{
    if (st != HB_OK) fail_msg("replay: %s: %s", hb_status_name(st), json_string_value(json_object_get(rec, "reason")));
    assert_string_equal(json_string_value(json_object_get(rec, "status")), "ok");
    double rel = jnum(rec, "rel_err");
    assert_true(rel >= 0 && rel <= HB_REPLAY_TOL);
    json_t *tot = json_object_get(json_object_get(rec, "phases"), "total");
    assert_true(jnum(tot, "median") > 0);
    assert_true(jnum(tot, "ci_lo") <= jnum(tot, "median") && jnum(tot, "median") <= jnum(tot, "ci_hi"));
    assert_int_equal(json_array_size(json_object_get(rec, "steps")), (size_t)g_model.n);
    assert_int_equal(json_array_size(json_object_get(rec, "devices")), ndev);
}

/* Two devices, both ways round, modes f32 and convert: verified; with its own memory, copies were made. */
static void test_two_devices(void **state)
{
    (void)state;
    static const hb_mode modes[] = {HB_MODE_F32, HB_MODE_CONVERT};
    for (int order = 0; order < 2; order++)
        for (int k = 0; k < 2; k++) {
            hb_plan_named p;
            plan_alternating(&p, order, 1 - order);
            hb_status st;
            json_t *rec = hb_replay_plan(&g_c, &p, g_two_mem ? HB_ROUTE_PINNED : -1, modes[k], g_inst, &g_o, "test", &st);
            assert_non_null(rec);
            check_ok(rec, st, 2);
            assert_string_equal(json_string_value(json_object_get(rec, "mode")), hb_mode_name(modes[k]));
            json_t *ph = json_object_get(rec, "phases");
            double h2d = jnum(json_object_get(ph, "h2d"), "median"), d2h = jnum(json_object_get(ph, "d2h"), "median");
            if (g_two_mem) assert_true(h2d > 0 && d2h > 0);
            else assert_true(h2d == 0 && d2h == 0);
            if (modes[k] == HB_MODE_CONVERT) assert_true(jnum(json_object_get(ph, "convert"), "median") > 0);
            else assert_true(jnum(json_object_get(ph, "convert"), "median") == 0);
            assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(rec, "steps"), 0), "device")),
                                g_c.dev[order].id);
            /* the in-sequence pass: mode f32 only; every op timed; the split adds up to the measured median */
            json_t *es = json_object_get(rec, "error_split");
            if (modes[k] == HB_MODE_CONVERT) assert_null(es);
            else {
                assert_non_null(es);
                double seq = 0;
                for (size_t i = 0; i < json_array_size(json_object_get(rec, "steps")); i++) {
                    double v = jnum(json_array_get(json_object_get(rec, "steps"), i), "in_sequence_s");
                    assert_true(v > 0 && v < 10);
                    seq += v;
                }
                assert_true(fabs(jnum(es, "ops_in_sequence_s") - seq) <= 1e-9 * seq);
                assert_true(fabs(jnum(es, "measured_s") - jnum(tot_of(rec), "median")) <= 1e-12);
                assert_true(fabs(jnum(es, "ops_in_sequence_s") + jnum(es, "copies_measured_s") + jnum(es, "rest_s") - jnum(es, "measured_s")) <=
                            1e-9 * jnum(es, "measured_s"));
                assert_true(jnum(es, "ops_alone_s") == 0 /* this plan predicts nothing */ && jnum(es, "in_sequence_calls") == HB_REPLAY_SEQ_CALLS);
                assert_true(g_two_mem ? jnum(es, "copies_measured_s") > 0 : jnum(es, "copies_measured_s") == 0);
                char line[200];
                hb_rec_plan typed;
                assert_int_equal(hb_rec_plan_parse(rec, &typed), HB_OK);
                assert_non_null(strstr(hb_plan_error_split_str(&typed, line, sizeof line), "ops in sequence"));
                hb_rec_plan_free(&typed);
            }
            json_decref(rec);
            plan_free(&p);
        }
}

/* Two instances of one device backend, each with its own memory, and the host: every conv on
 * opencl:0:0, every relu on opencl:0:1, the add on cpu. Each conv's output crosses from the first
 * device's memory to the second's through host memory (download, upload); the result is verified. */
static void test_two_instances(void **state)
{
    (void)state;
    if (!g_two_mem) skip();
    hb_plan_costs c3 = g_c;
    c3.ndev = 3;
    c3.nmem = 3;
    snprintf(c3.dev[2].id, sizeof c3.dev[2].id, "opencl:0:1");
    snprintf(c3.dev[2].type, sizeof c3.dev[2].type, "opencl");
    c3.dev[2].host_memory = 0;
    c3.dev[2].mem = 2;
    hb_instance in3[HB_PLAN_MAXDEV];
    char err[512] = "";
    hb_status st = hb_replay_open(&c3, in3, err, sizeof err);
    if (st != HB_OK) fail_msg("two instances of opencl (POCL_DEVICES=%s): %s", getenv("POCL_DEVICES"), err);
    hb_plan_named p;
    plan_alternating(&p, 1, 2);
    for (int i = 0; i < g_model.n; i++)
        if (g_model.nodes[i].c.op == HB_OP_ADD) p.dev[i] = p.res.steps[i].dev = 0;
    p.res.start_mem = c3.dev[1].mem;
    static const hb_mode modes[] = {HB_MODE_F32, HB_MODE_CONVERT};
    for (int k = 0; k < 2; k++) {
        json_t *rec = hb_replay_plan(&c3, &p, HB_ROUTE_PINNED, modes[k], in3, &g_o, "test", &st);
        assert_non_null(rec);
        check_ok(rec, st, 3);
        json_t *steps = json_object_get(rec, "steps");
        for (int i = 0; i < g_model.n; i++)
            assert_string_equal(json_string_value(json_object_get(json_array_get(steps, (size_t)i), "device")), c3.dev[p.dev[i]].id);
        json_t *ph = json_object_get(rec, "phases");
        /* conv_a's output into relu_a alone crosses device to device: at least one d2h and one h2d */
        assert_true(jnum(json_object_get(ph, "h2d"), "median") > 0 && jnum(json_object_get(ph, "d2h"), "median") > 0);
        json_decref(rec);
    }
    plan_free(&p);
    hb_replay_close(&c3, in3);
}

/* A backend whose relu returns without computing: the replay's verification catches it. */
static hb_backend_ops g_lazy;
static const hb_backend_ops *g_real;
static hb_status lazy_run(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    if (c->op == HB_OP_RELU) return HB_OK;
    return g_real->run(inst, c, in, out);
}

static void test_skipped_op_is_wrong(void **state)
{
    (void)state;
    hb_plan_named p;
    plan_alternating(&p, 0, 1);
    g_real = g_inst[1].ops;
    g_lazy = *g_real;
    g_lazy.run = lazy_run;
    g_inst[1].ops = &g_lazy;
    hb_status st;
    json_t *rec = hb_replay_plan(&g_c, &p, g_two_mem ? HB_ROUTE_PAGEABLE : -1, HB_MODE_F32, g_inst, &g_o, "test", &st);
    g_inst[1].ops = g_real;
    assert_int_equal(st, HB_EWRONG);
    assert_string_equal(json_string_value(json_object_get(rec, "status")), "wrong");
    assert_non_null(strstr(json_string_value(json_object_get(rec, "reason")), "tolerance"));
    json_decref(rec);
    plan_free(&p);
}

/* Plans replayed together (hb_replay_plans): each gets its own record, sampled in rounds; the same
 * plan twice computes the same output (the same relative error, bit for bit); a plan that cannot run
 * gets its error and does not stop the others. */
static void test_plans_in_rounds(void **state)
{
    (void)state;
    hb_plan_named p[3];
    plan_alternating(&p[0], 0, 1);
    plan_alternating(&p[1], 0, 1);
    plan_alternating(&p[2], 0, 1);
    p[2].dev[2] = 5; /* no such device */
    json_t *recs[3];
    hb_status st[3];
    hb_replay_plans(&g_c, p, 3, g_two_mem ? HB_ROUTE_PINNED : -1, HB_MODE_F32, g_inst, &g_o, "test", recs, st);
    assert_int_equal(st[0], HB_OK);
    assert_int_equal(st[1], HB_OK);
    assert_int_equal(st[2], HB_EINVAL);
    assert_non_null(strstr(json_string_value(json_object_get(recs[2], "reason")), g_model.nodes[2].label));
    for (int k = 0; k < 2; k++) {
        assert_int_equal(json_integer_value(json_object_get(recs[k], "interleaved_with")), 2);
        json_t *tot = json_object_get(json_object_get(recs[k], "phases"), "total");
        assert_true(json_integer_value(json_object_get(tot, "n")) >= g_o.min_samples);
        assert_true(json_real_value(json_object_get(tot, "median")) > 0);
    }
    double r0 = json_real_value(json_object_get(recs[0], "rel_err")), r1 = json_real_value(json_object_get(recs[1], "rel_err"));
    assert_true(r0 > 0 && r0 <= 1e-3);
    assert_true(r0 == r1);
    for (int k = 0; k < 3; k++) { json_decref(recs[k]); plan_free(&p[k]); }
}

/* A model with a chain case (the TinyLlama decode layer): the chain case on each device that a plan
 * runs alone is sampled in the same rounds as the plans (measure/rounds.h) and summarised in that plan's
 * record ("chain_in_rounds"): verified, at least as many calls as the plan (it follows the plans' rounds),
 * and the ratio of the two medians on one clock and span; a plan over two devices has none. */
static void test_chain_in_rounds(void **state)
{
    (void)state;
    hb_model dm;
    char err[256];
    assert_int_equal(hb_model_build("tinyllama-decode", &dm, err, sizeof err), HB_OK);
    assert_true(dm.has_whole);
    hb_plan_costs c = g_c;
    c.model = &dm;
    hb_plan_named p[3];
    for (int k = 0; k < 3; k++) {
        memset(&p[k], 0, sizeof p[k]);
        snprintf(p[k].name, sizeof p[k].name, "test %d", k);
        p[k].kind = k < 2 ? "single" : "optimal";
        p[k].dev = calloc((size_t)dm.n, sizeof *p[k].dev);
        p[k].res.steps = calloc((size_t)dm.n, sizeof *p[k].res.steps);
        p[k].res.nops = dm.n;
        for (int i = 0; i < dm.n; i++) p[k].dev[i] = p[k].res.steps[i].dev = k < 2 ? k : i % 2;
        p[k].res.start_mem = c.dev[p[k].dev[0]].mem;
    }
    json_t *recs[3];
    hb_status st[3];
    hb_replay_plans(&c, p, 3, g_two_mem ? HB_ROUTE_PINNED : -1, HB_MODE_F32, g_inst, &g_o, "test", recs, st);
    for (int k = 0; k < 3; k++) {
        if (st[k] != HB_OK) fail_msg("plan %d: %s", k, json_string_value(json_object_get(recs[k], "reason")));
        /* three plans and two chains in the rounds */
        assert_int_equal(json_integer_value(json_object_get(recs[k], "interleaved_with")), 4);
        json_t *cr = json_object_get(recs[k], "chain_in_rounds");
        if (k == 2) { assert_null(cr); continue; }
        assert_non_null(cr);
        assert_string_equal(json_string_value(json_object_get(cr, "backend")), g_inst[k].name);
        if (strcmp(json_string_value(json_object_get(cr, "status")), "ok"))
            fail_msg("the chain on %s: %s", g_inst[k].name, json_string_value(json_object_get(cr, "reason")));
        assert_string_equal(json_string_value(json_object_get(cr, "mode")), g_inst[k].host_memory ? "f32" : "resident");
        assert_true(jnum(cr, "rel_err") <= jnum(cr, "tolerance"));
        assert_int_equal(json_integer_value(json_object_get(cr, "interleaved_with")), 4);
        json_t *ct = json_object_get(cr, "total"), *pt = tot_of(recs[k]);
        assert_true(json_integer_value(json_object_get(ct, "n")) >= json_integer_value(json_object_get(pt, "n")));
        json_t *pd = json_object_get(json_object_get(recs[k], "phases"), "device"), *ly = json_object_get(cr, "layer");
        const int span = pd && ly;
        assert_string_equal(json_string_value(json_object_get(cr, "compared")), span ? "phases.device / layer" : "phases.total / total");
        double a = jnum(span ? pd : pt, "median"), b = jnum(span ? ly : ct, "median");
        assert_true(a > 0 && b > 0);
        assert_true(fabs(jnum(cr, "replay_over_chain") - a / b) <= 1e-12 * (a / b));
    }
    for (int k = 0; k < 3; k++) { json_decref(recs[k]); plan_free(&p[k]); }
    hb_model_free(&dm);
}

/* A plan on one device with its own memory, run_async and a device timer (the all-GPU plan of a GPU
 * host), on this machine: cpu dressed as such a device (its buffers' host views are its "device
 * memory", run_async its run, the device timer the host clock). The plan is enqueued as one segment on
 * the executor (replay.h dev1) and verified; twice the same plan and the model's resident chain case
 * in the same rounds: phases.device and launch_bound recorded, each op's share of the enqueue, and the
 * chain compared on the same clock and span (phases.device / layer). */
static double g_fake_t0;
static hb_status fake_tb(hb_instance *i) { (void)i; g_fake_t0 = hb_now(); return HB_OK; }
static hb_status fake_te(hb_instance *i, double *s) { (void)i; *s = hb_now() - g_fake_t0; return HB_OK; }

static void test_device_plan_in_rounds(void **state)
{
    (void)state;
    hb_model dm;
    char err[256];
    assert_int_equal(hb_model_build("tinyllama-decode", &dm, err, sizeof err), HB_OK);
    hb_instance fin[HB_PLAN_MAXDEV];
    memcpy(fin, g_inst, sizeof fin);
    static hb_backend_ops fops;
    fops = *g_inst[0].ops; /* cpu */
    fops.run_async = fops.run;
    fops.timer_begin = fake_tb;
    fops.timer_end = fake_te;
    fin[1] = g_inst[0];
    fin[1].ops = &fops;
    fin[1].host_memory = 0;
    snprintf(fin[1].name, sizeof fin[1].name, "cpu-as-device");
    hb_plan_costs c = g_c;
    c.model = &dm;
    c.nmem = 2;
    snprintf(c.dev[1].id, sizeof c.dev[1].id, "cpu-as-device");
    c.dev[1].host_memory = 0;
    c.dev[1].mem = 1;
    hb_plan_named p[2];
    for (int k = 0; k < 2; k++) {
        memset(&p[k], 0, sizeof p[k]);
        snprintf(p[k].name, sizeof p[k].name, "device plan %d", k);
        p[k].kind = "single";
        p[k].dev = calloc((size_t)dm.n, sizeof *p[k].dev);
        p[k].res.steps = calloc((size_t)dm.n, sizeof *p[k].res.steps);
        p[k].res.nops = dm.n;
        for (int i = 0; i < dm.n; i++) p[k].dev[i] = p[k].res.steps[i].dev = 1;
        p[k].res.start_mem = 1;
    }
    json_t *recs[2];
    hb_status st[2];
    hb_replay_plans(&c, p, 2, -1, HB_MODE_F32, fin, &g_o, "test", recs, st);
    double rel[2];
    for (int k = 0; k < 2; k++) {
        if (st[k] != HB_OK) fail_msg("plan %d: %s", k, json_string_value(json_object_get(recs[k], "reason")));
        rel[k] = jnum(recs[k], "rel_err");
        assert_true(rel[k] > 0 && rel[k] <= HB_REPLAY_TOL);
        json_t *ph = json_object_get(recs[k], "phases"), *dv = json_object_get(ph, "device");
        assert_non_null(dv);
        assert_true(jnum(dv, "median") > 0 && jnum(dv, "median") <= jnum(json_object_get(ph, "total"), "median"));
        assert_true(json_is_boolean(json_object_get(recs[k], "launch_bound")));
        json_t *steps = json_object_get(recs[k], "steps");
        for (size_t i = 0; i < json_array_size(steps); i++) assert_true(jnum(json_array_get(steps, i), "compute_s") > 0);
        assert_int_equal(json_integer_value(json_object_get(recs[k], "interleaved_with")), 2);
        json_t *cr = json_object_get(recs[k], "chain_in_rounds");
        assert_non_null(cr);
        if (strcmp(json_string_value(json_object_get(cr, "status")), "ok"))
            fail_msg("the chain: %s", json_string_value(json_object_get(cr, "reason")));
        assert_string_equal(json_string_value(json_object_get(cr, "mode")), "resident");
        assert_string_equal(json_string_value(json_object_get(cr, "compared")), "phases.device / layer");
        double a = jnum(dv, "median"), b = jnum(json_object_get(cr, "layer"), "median");
        assert_true(b > 0 && fabs(jnum(cr, "replay_over_chain") - a / b) <= 1e-12 * (a / b));
    }
    assert_true(rel[0] == rel[1]); /* the same plan, the same output */
    for (int k = 0; k < 2; k++) { json_decref(recs[k]); plan_free(&p[k]); }
    hb_model_free(&dm);
}

static void test_bad_input(void **state)
{
    (void)state;
    hb_plan_named p;
    plan_alternating(&p, 0, 1);
    hb_status st;
    /* a mode a plan is not replayed in */
    json_t *rec = hb_replay_plan(&g_c, &p, -1, HB_MODE_RESIDENT, g_inst, &g_o, "test", &st);
    assert_int_equal(st, HB_EINVAL);
    assert_non_null(strstr(json_string_value(json_object_get(rec, "reason")), "f32 or convert"));
    json_decref(rec);
    /* an op on a device the table does not have */
    p.dev[3] = 5;
    rec = hb_replay_plan(&g_c, &p, -1, HB_MODE_F32, g_inst, &g_o, "test", &st);
    assert_int_equal(st, HB_EINVAL);
    assert_non_null(strstr(json_string_value(json_object_get(rec, "reason")), g_model.nodes[3].label));
    json_decref(rec);
    plan_free(&p);
    /* a backend not available in this process: named */
    hb_plan_costs c2 = g_c;
    snprintf(c2.dev[1].id, sizeof c2.dev[1].id, "cuda:7");
    snprintf(c2.dev[1].type, sizeof c2.dev[1].type, "cuda");
    hb_instance in2[HB_PLAN_MAXDEV];
    char err[512] = "";
    assert_int_equal(hb_replay_open(&c2, in2, err, sizeof err), HB_ESKIP);
    assert_non_null(strstr(err, "cuda:7"));
    for (int d = 0; d < HB_PLAN_MAXDEV; d++) assert_null(in2[d].ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_devices),
        cmocka_unit_test(test_two_instances),
        cmocka_unit_test(test_skipped_op_is_wrong),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_plans_in_rounds),
        cmocka_unit_test(test_chain_in_rounds),
        cmocka_unit_test(test_device_plan_in_rounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
