/*
 * test_compare.c - harness/analysis/compare.c, results/gbench.c, analysis/trend.c and baseline.c on synthetic results files written with
 * jansson (fixed seeds): the false-positive rate on 1000 cases drawn from one distribution, the
 * detection of a 10% slowdown planted in 100 of them, whole-run drift, a per-backend threshold in use
 * (their parsing and scopes: test_thresholds.c),
 * every status transition of the gate, exit statuses (usage, bad input, incomparable machines or
 * schemas, --force), the Markdown, JSON (read back with jansson) and JUnit XML (read back with
 * libxml2 when the build passes its flags) outputs, the Google Benchmark export, baselines and
 * --baseline-dir, the nightly trend (flags in the data files, SVG), and the time of a compare of
 * two 3000-case files. Result structures are poisoned (NaN/0xff) before each call.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli/commands.h"
#include "analysis/baseline.h"
#include "analysis/compare.h"
#include "core/rstats.h"

#if defined(__has_include)
#if __has_include(<libxml/parser.h>)
#include <libxml/parser.h>
#include <libxml/tree.h>
#include "test_files.h"
#define HAVE_LIBXML2 1
#endif
#endif

static char tmpdir[256];

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* ---- synthetic results files ---- */

/* Samples like real timings: lognormal around `median` with spread sigma, plus 5% outliers slowed
 * by 1 + Exp(mean 0.5) (preemption, page faults). */
static json_t *samples(hb_rng *g, double median, double sigma, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        double v = median * exp(sigma * hb_rng_normal(g));
        if (hb_rng_uniform(g) < 0.05) v *= 1 - 0.5 * log(1 - hb_rng_uniform(g));
        json_array_append_new(a, json_real(v));
    }
    return a;
}

static json_t *mk_case(const char *op, const char *shape, const char *backend, const char *status,
                       hb_rng *g, double median, double sigma, int n)
{
    char key[256];
    snprintf(key, sizeof key, "%s|%s|%s|f32|pageable|f32", op, shape, backend);
    json_t *c = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
                          "type", "case", "schema", 1, "key", key, "backend", backend, "op", op,
                          "shape_str", shape, "mode", "f32", "route", "pageable", "dtype", "f32",
                          "status", status);
    if (strcmp(status, "ok")) {
        json_object_set_new(c, "reason", json_string("synthetic failure <&>"));
        return c;
    }
    json_t *tot = samples(g, median, sigma, n);
    json_t *cmp = json_array();
    for (size_t i = 0; i < json_array_size(tot); i++)
        json_array_append_new(cmp, json_real(0.8 * json_real_value(json_array_get(tot, i))));
    json_object_set_new(c, "samples", json_pack("{s:o, s:o}", "total", tot, "compute", cmp));
    json_object_set_new(c, "phases", json_pack("{s:{s:f}, s:{s:f}}", "total", "median", median,
                                               "compute", "median", 0.8 * median));
    return c;
}

static void write_run(const char *path, const char *host, const char *cpu, int schema,
                      const char *run_id, const char *date, json_t *cases, int end)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    json_t *meta = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:i, s:i}, s:s}",
                             "type", "meta", "schema", schema, "run_id", run_id, "date", date,
                             "git_commit", run_id, "host", host, "cpu", "model", cpu, "pus", 2,
                             "cores", 2, "l1d_bytes", 32768, "l2_bytes", 524288, "l3_bytes", 33554432,
                             "command_line", "build/hybench run --quick");
    char *s = json_dumps(meta, JSON_COMPACT);
    fprintf(f, "%s\n", s);
    free(s);
    json_decref(meta);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        s = json_dumps(c, JSON_COMPACT);
        fprintf(f, "%s\n", s);
        free(s);
    }
    if (end) fprintf(f, "{\"type\":\"end\",\"schema\":1,\"cases\":%zu}\n", json_array_size(cases));
    fclose(f);
    json_decref(cases);
}

/* n cases; factor(i) multiplies case i's median in this run. Case medians are log-uniform over
 * 1 us .. 100 ms from a seed shared by both runs; samples from `seed`. */
static void write_family(const char *path, int ncases, int nsamp, uint64_t seed, double sigma,
                         double (*factor)(int), const char *host, const char *run_id)
{
    hb_rng gm, g;
    hb_rng_seed(&gm, 4242);
    hb_rng_seed(&g, seed);
    json_t *cases = json_array();
    static const char *ops[] = { "add", "matmul", "conv2d", "sum", "attention" };
    for (int i = 0; i < ncases; i++) {
        double med = pow(10, -6 + 5 * hb_rng_uniform(&gm));
        char shape[64];
        snprintf(shape, sizeof shape, "n=%d", i);
        json_array_append_new(cases, mk_case(ops[i % 5], shape, i % 3 ? "cpu" : "opencl:0:0", "ok",
                                             &g, med * (factor ? factor(i) : 1), sigma, nsamp));
    }
    write_run(path, host, "AMD EPYC", 1, run_id, "2024-05-01T00:00:00Z", cases, 1);
}

static double f_planted(int i) { return i % 10 == 0 ? 1.10 : 1.0; }
static double f_drift3(int i) { (void)i; return 1.03; }
static double f_drift8(int i) { (void)i; return 1.08; }

static void poison(hb_cmp_result *r) { memset(r, 0xff, sizeof *r); }

static void load2(const char *a, const char *b, hb_run *ra, hb_run *rb)
{
    char err[512];
    assert_int_equal(hb_run_load(a, ra, err, sizeof err), HB_OK);
    assert_int_equal(hb_run_load(b, rb, err, sizeof err), HB_OK);
}

static size_t count_verdict(const hb_cmp_result *r, hb_cmp_verdict v, int (*sel)(int), int want)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->cases[i].verdict != v) continue;
        int idx = atoi(strstr(r->cases[i].key, "n=") + 2);
        if (!sel || sel(idx) == want) k++;
    }
    return k;
}
static int is_planted(int i) { return i % 10 == 0; }

/* ---- tests ---- */

/* 1000 cases from one distribution: at most 1% flagged (we expect none: the CI rule at 5%).
 * Then a 10% slowdown planted in 100: at least 95 caught, none of the other 900 flagged. */
static void test_null_and_planted(void **state)
{
    (void)state;
    char a[300], b[300], c[300];
    path_in(a, sizeof a, "null_a.jsonl");
    path_in(b, sizeof b, "null_b.jsonl");
    path_in(c, sizeof c, "planted.jsonl");
    write_family(a, 1000, 100, 1, 0.05, NULL, "hostA", "runA");
    write_family(b, 1000, 100, 2, 0.05, NULL, "hostA", "runB");
    write_family(c, 1000, 100, 3, 0.05, f_planted, "hostA", "runC");
    hb_run ra, rb, rc;
    load2(a, b, &ra, &rb);
    char err[256];
    assert_int_equal(hb_run_load(c, &rc, err, sizeof err), HB_OK);
    hb_cmp_options o;
    hb_cmp_options_default(&o);
    hb_cmp_result r;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    assert_int_equal(r.n, 1000);
    assert_int_equal(r.matched, 1000);
    assert_int_equal(r.tested, 1000);
    size_t flagged = r.count[HB_CMP_REGRESSION] + r.count[HB_CMP_IMPROVEMENT];
    size_t raw = 0, bh = 0;
    for (size_t i = 0; i < r.n; i++) {
        raw += r.cases[i].p < 0.05;
        bh += r.cases[i].q < 0.05;
        assert_true(r.cases[i].ci_lo <= r.cases[i].ratio && r.cases[i].ratio <= r.cases[i].ci_hi);
        assert_true(r.cases[i].q >= r.cases[i].p);
    }
    printf("# A/A 1000 cases: flagged %zu; raw p<0.05: %zu; BH q<0.05: %zu; shift %.4f; %.2f s\n",
           flagged, raw, bh, r.shift, r.elapsed_s);
    assert_true(flagged <= 10);
    assert_true(raw > 20 && raw < 90);  /* the U test itself is calibrated (~5%) */
    assert_true(fabs(r.shift - 1) < 0.01);
    assert_int_equal(r.fails, (int)r.count[HB_CMP_REGRESSION]);
    hb_cmp_result_free(&r);

    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rc, &o, &r, err, sizeof err), HB_OK);
    size_t caught = count_verdict(&r, HB_CMP_REGRESSION, is_planted, 1);
    size_t false_pos = count_verdict(&r, HB_CMP_REGRESSION, is_planted, 0) +
                       r.count[HB_CMP_IMPROVEMENT];
    printf("# planted 10%% in 100 of 1000: caught %zu, false positives %zu\n", caught, false_pos);
    assert_true(caught >= 95);
    assert_int_equal(false_pos, 0);
    assert_int_equal(r.fails, (int)caught);
    hb_cmp_result_free(&r);

    /* the point rule catches at least as many */
    o.rule_point = 1;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rc, &o, &r, err, sizeof err), HB_OK);
    assert_true(count_verdict(&r, HB_CMP_REGRESSION, is_planted, 1) >= caught);
    hb_cmp_result_free(&r);
    /* a threshold above the planted change catches nothing */
    o.rule_point = 0;
    o.threshold = 0.15;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rc, &o, &r, err, sizeof err), HB_OK);
    assert_int_equal(r.count[HB_CMP_REGRESSION], 0);
    hb_cmp_result_free(&r);
    /* compare against itself: identical samples, p = 1, nothing flagged */
    o.threshold = 0.05;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &ra, &o, &r, err, sizeof err), HB_OK);
    for (size_t i = 0; i < r.n; i++) {
        assert_true(r.cases[i].ratio == 1 && r.cases[i].verdict == HB_CMP_UNCHANGED);
        assert_true(r.cases[i].p > 0.99);
    }
    hb_cmp_result_free(&r);
    hb_run_free(&ra);
    hb_run_free(&rb);
    hb_run_free(&rc);
}

/* Whole-run drift: 3% slower everywhere passes at 5%; 8% everywhere is caught (a real change
 * that slows every case must not hide behind the drift estimate). */
static void test_run_drift(void **state)
{
    (void)state;
    char a[300], b[300], c[300];
    path_in(a, sizeof a, "drift_a.jsonl");
    path_in(b, sizeof b, "drift_3.jsonl");
    path_in(c, sizeof c, "drift_8.jsonl");
    write_family(a, 300, 100, 11, 0.05, NULL, "hostA", "a");
    write_family(b, 300, 100, 12, 0.05, f_drift3, "hostA", "b");
    write_family(c, 300, 100, 13, 0.05, f_drift8, "hostA", "c");
    hb_run ra, rb, rc;
    load2(a, b, &ra, &rb);
    char err[256];
    assert_int_equal(hb_run_load(c, &rc, err, sizeof err), HB_OK);
    hb_cmp_options o;
    hb_cmp_options_default(&o);
    hb_cmp_result r;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    printf("# drift 3%%: %zu regressions, shift %.4f\n", r.count[HB_CMP_REGRESSION], r.shift);
    assert_int_equal(r.count[HB_CMP_REGRESSION], 0);
    assert_true(fabs(r.shift - 1.03) < 0.01);
    hb_cmp_result_free(&r);
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rc, &o, &r, err, sizeof err), HB_OK);
    printf("# drift 8%%: %zu regressions of 300, shift %.4f\n", r.count[HB_CMP_REGRESSION], r.shift);
    assert_true(r.count[HB_CMP_REGRESSION] >= 250);
    hb_cmp_result_free(&r);
    hb_run_free(&ra);
    hb_run_free(&rb);
    hb_run_free(&rc);
}

/* Between-run noise: every case's median moves by exp(0.1 z) between the runs (a machine whose
 * runs differ by ~10% case by case). Without --noise-scale the 5% gate trips on many cases and says
 * so; with --noise-scale 4 it adapts (nothing flagged in the A/A) yet still catches a 60% slowdown
 * planted in 10 of 300 cases. */
static double noisy_factor(int i)
{
    hb_rng g;
    hb_rng_seed(&g, 777 + (uint64_t)i);
    return exp(0.1 * hb_rng_normal(&g));
}
static double f_noisy(int i) { return noisy_factor(i); }
static double f_noisy_planted(int i) { return noisy_factor(i) * (i % 30 == 0 ? 1.6 : 1.0); }
static int is_planted30(int i) { return i % 30 == 0; }

static void test_noise_scale(void **state)
{
    (void)state;
    char a[300], b[300], c[300];
    path_in(a, sizeof a, "noise_a.jsonl");
    path_in(b, sizeof b, "noise_b.jsonl");
    path_in(c, sizeof c, "noise_c.jsonl");
    write_family(a, 300, 60, 51, 0.03, NULL, "hostA", "a");
    write_family(b, 300, 60, 52, 0.03, f_noisy, "hostA", "b");
    write_family(c, 300, 60, 53, 0.03, f_noisy_planted, "hostA", "c");
    hb_run ra, rb, rc;
    load2(a, b, &ra, &rb);
    char err[256];
    assert_int_equal(hb_run_load(c, &rc, err, sizeof err), HB_OK);
    hb_cmp_options o;
    hb_cmp_options_default(&o);
    hb_cmp_result r;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    size_t plain = r.count[HB_CMP_REGRESSION];
    printf("# between-run noise 10%%: estimated %.3f (log scale); 5%% gate flags %zu of 300\n",
           r.noise_max, plain);
    assert_true(fabs(r.noise_max - 0.1) < 0.02);
    assert_true(plain > 30);
    for (size_t i = 0; i < r.n; i++) assert_true(r.cases[i].threshold == 0.05);
    hb_cmp_result_free(&r);
    o.noise_k = 4;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    printf("# with --noise-scale 4: threshold %.1f%%, flagged %zu\n", r.cases[0].threshold * 100,
           r.count[HB_CMP_REGRESSION] + r.count[HB_CMP_IMPROVEMENT]);
    assert_true(r.count[HB_CMP_REGRESSION] + r.count[HB_CMP_IMPROVEMENT] <= 3);
    assert_true(r.cases[0].threshold > 0.35 && r.cases[0].threshold < 0.65);
    hb_cmp_result_free(&r);
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rc, &o, &r, err, sizeof err), HB_OK);
    size_t caught = count_verdict(&r, HB_CMP_REGRESSION, is_planted30, 1);
    size_t fp = count_verdict(&r, HB_CMP_REGRESSION, is_planted30, 0);
    printf("# 60%% planted in 10 of 300 under that noise: caught %zu, false %zu\n", caught, fp);
    assert_true(caught >= 8);
    assert_true(fp <= 3);
    hb_cmp_result_free(&r);
    hb_run_free(&ra);
    hb_run_free(&rb);
    hb_run_free(&rc);
    /* the Markdown says the runs are too noisy */
    char md[300];
    path_in(md, sizeof md, "noise.md");
    char *argv[] = { "compare", a, b, "--markdown", md, NULL };
    assert_int_equal(hb_cmd_compare(5, argv), HB_EXIT_REGRESSION);
    char *m = hb_test_slurp(md);
    assert_non_null(strstr(m, "(above its threshold)"));
    assert_non_null(strstr(m, "**Warning:**"));
    free(m);
    char *argv2[] = { "compare", a, b, "--quiet", "--noise-scale", "4", NULL };
    assert_int_equal(hb_cmd_compare(6, argv2), HB_EXIT_OK);
}

static void test_backend_threshold(void **state)
{
    (void)state;
    char a[300], b[300];
    path_in(a, sizeof a, "thr_a.jsonl");
    path_in(b, sizeof b, "thr_b.jsonl");
    hb_rng g;
    hb_rng_seed(&g, 5);
    json_t *ca = json_array(), *cb = json_array();
    for (int i = 0; i < 20; i++) {
        char shape[32];
        snprintf(shape, sizeof shape, "n=%d", i);
        const char *be = i < 10 ? "cuda:0" : "cpu";
        json_array_append_new(ca, mk_case("add", shape, be, "ok", &g, 1e-4, 0.01, 200));
        json_array_append_new(cb, mk_case("add", shape, be, "ok", &g, 1.045e-4, 0.01, 200));
    }
    write_run(a, "h", "cpu", 1, "a", "2024-01-01", ca, 1);
    write_run(b, "h", "cpu", 1, "b", "2024-01-02", cb, 1);
    hb_run ra, rb;
    load2(a, b, &ra, &rb);
    hb_cmp_options o;
    char err[256];
    hb_cmp_options_default(&o);
    assert_int_equal(hb_cmp_parse_threshold(&o, "5%", err, sizeof err), HB_OK);
    assert_int_equal(hb_cmp_parse_threshold(&o, "cuda=3%", err, sizeof err), HB_OK);
    hb_cmp_result r;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    size_t cuda = 0, cpu = 0;
    for (size_t i = 0; i < r.n; i++) {
        const hb_cmp_case *c = &r.cases[i];
        if (c->verdict != HB_CMP_REGRESSION) continue;
        if (!strcmp(c->backend, "cuda:0")) { cuda++; assert_true(c->threshold == 0.03); }
        else cpu++;
    }
    printf("# 4.5%% slowdown: cuda (3%%) flagged %zu/10, cpu (5%%) flagged %zu/10\n", cuda, cpu);
    assert_true(cuda >= 9);
    assert_int_equal(cpu, 0);
    hb_cmp_result_free(&r);
    hb_run_free(&ra);
    hb_run_free(&rb);
}

/* Attach pass_medians (total and compute) to a case: the given totals, compute at 0.8 of them. */
static void set_passes(json_t *c, const double *tot, int n)
{
    json_t *t = json_array(), *k = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(t, json_real(tot[i]));
        json_array_append_new(k, json_real(0.8 * tot[i]));
    }
    json_object_set_new(c, "pass_medians", json_pack("{s:o,s:o}", "total", t, "compute", k));
}

/* Passes: a 20% shift that is significant within one process is not a regression when the runs'
 * passes overlap (between-process noise), and is one when every pass moved. Random samples, pass
 * medians drawn around the case's median with a random spread. */
static void test_passes(void **state)
{
    (void)state;
    char a[300], b[300];
    path_in(a, sizeof a, "pass_a.jsonl");
    path_in(b, sizeof b, "pass_b.jsonl");
    hb_rng g;
    hb_rng_seed(&g, 77);
    json_t *ca = json_array(), *cb = json_array();
    for (int i = 0; i < 40; i++) {
        char shape[32];
        snprintf(shape, sizeof shape, "n=%d", i);
        double m = 1e-4 * (1 + hb_rng_uniform(&g));
        json_t *x = mk_case("add", shape, "cpu", "ok", &g, m, 0.01, 200);
        json_t *y = mk_case("add", shape, "cpu", "ok", &g, 1.2 * m, 0.01, 200);
        /* even cases: passes overlap (the base's slowest pass as slow as the current's best);
         * odd cases: every current pass 20% slower */
        double sp = 1 + 0.02 * hb_rng_uniform(&g);
        double pa[3] = {m, m * sp, i % 2 ? m * 1.01 : 1.3 * m};
        double pb[3] = {1.2 * m, 1.2 * m * sp, 1.21 * m};
        set_passes(x, pa, 3);
        set_passes(y, pb, 3);
        json_array_append_new(ca, x);
        json_array_append_new(cb, y);
    }
    write_run(a, "h", "cpu", 1, "a", "2024-01-01", ca, 1);
    write_run(b, "h", "cpu", 1, "b", "2024-01-02", cb, 1);
    hb_run ra, rb;
    load2(a, b, &ra, &rb);
    hb_cmp_options o;
    char err[256];
    hb_cmp_options_default(&o);
    hb_cmp_result r;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    size_t flagged_odd = 0, flagged_even = 0, overlap_even = 0;
    for (size_t i = 0; i < r.n; i++) {
        const hb_cmp_case *c = &r.cases[i];
        int idx = atoi(strstr(c->key, "n=") + 2);
        assert_int_equal(c->passes_base, 3);
        assert_int_equal(c->passes_cur, 3);
        if (idx % 2) flagged_odd += c->verdict == HB_CMP_REGRESSION;
        else {
            flagged_even += c->verdict == HB_CMP_REGRESSION;
            overlap_even += c->pass_overlap;
            assert_true(c->ratio > 1.15); /* the sample-level shift is there */
        }
    }
    printf("# passes: every pass 20%% slower: %zu/20 flagged; passes overlapping: %zu/20 flagged, %zu marked "
           "within the pass spread\n", flagged_odd, flagged_even, overlap_even);
    assert_int_equal(flagged_odd, 20);
    assert_int_equal(flagged_even, 0);
    assert_int_equal(overlap_even, 20);
    hb_cmp_result_free(&r);
    hb_run_free(&ra);
    hb_run_free(&rb);
}

/* Every status transition, duplicates, too few samples. */
static void write_status_pair(const char *a, const char *b, int with_bad)
{
    hb_rng g;
    hb_rng_seed(&g, 9);
    json_t *ca = json_array(), *cb = json_array();
#define PAIR(shape, sa, sb)                                                                  \
    do {                                                                                     \
        if (sa) json_array_append_new(ca, mk_case("mul", shape, "cpu", sa, &g, 1e-3, 0.02, 50)); \
        if (sb) json_array_append_new(cb, mk_case("mul", shape, "cpu", sb, &g, 1e-3, 0.02, 50)); \
    } while (0)
    PAIR("n=1", "ok", "ok");
    PAIR("n=1", "ok", "ok"); /* a repeated key: matched as n=1#2 */
    PAIR("n=6", "ok", "ok");
    PAIR("n=7", NULL, "ok");                 /* new */
    PAIR("n=8", "wrong", "wrong");           /* still bad */
    PAIR("n=9", "skipped", "skipped");       /* skipped (in both) */
    PAIR("n=10", "wrong", "ok");             /* fixed */
    if (with_bad) {
        PAIR("n=2", "ok", "wrong");          /* wrong */
        PAIR("n=3", "ok", "crashed");        /* crashed */
        PAIR("n=4", "ok", "timed_out");      /* lost */
        PAIR("n=5", "ok", NULL);             /* missing */
        PAIR("n=11", NULL, "crashed");       /* new and crashed */
    }
#undef PAIR
    /* too few samples */
    json_t *x = mk_case("mul", "n=12", "cpu", "ok", &g, 1e-3, 0.02, 2);
    json_array_append_new(ca, x);
    json_array_append_new(cb, mk_case("mul", "n=12", "cpu", "ok", &g, 1e-3, 0.02, 2));
    write_run(a, "h", "cpu", 1, "a", "2024-01-01", ca, 1);
    write_run(b, "h", "cpu", 1, "b", "2024-01-02", cb, with_bad);
}

static const hb_cmp_case *find_case(const hb_cmp_result *r, const char *key)
{
    for (size_t i = 0; i < r->n; i++) if (!strcmp(r->cases[i].key, key)) return &r->cases[i];
    return NULL;
}

static void test_status_gate(void **state)
{
    (void)state;
    char a[300], b[300];
    path_in(a, sizeof a, "st_a.jsonl");
    path_in(b, sizeof b, "st_b.jsonl");
    write_status_pair(a, b, 1);
    hb_run ra, rb;
    load2(a, b, &ra, &rb);
    hb_cmp_options o;
    char err[256];
    hb_cmp_options_default(&o);
    hb_cmp_result r;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    struct { const char *key; hb_cmp_verdict v; int fails; } want[] = {
        { "mul|n=1|cpu|f32|pageable|f32", HB_CMP_UNCHANGED, 0 },
        { "mul|n=1|cpu|f32|pageable|f32#2", HB_CMP_UNCHANGED, 0 },
        { "mul|n=2|cpu|f32|pageable|f32", HB_CMP_WRONG, 1 },
        { "mul|n=3|cpu|f32|pageable|f32", HB_CMP_CRASHED, 1 },
        { "mul|n=4|cpu|f32|pageable|f32", HB_CMP_LOST, 1 },
        { "mul|n=5|cpu|f32|pageable|f32", HB_CMP_MISSING, 1 },
        { "mul|n=7|cpu|f32|pageable|f32", HB_CMP_NEW, 0 },
        { "mul|n=8|cpu|f32|pageable|f32", HB_CMP_STILL_BAD, 0 },
        { "mul|n=9|cpu|f32|pageable|f32", HB_CMP_SKIPPED, 0 },  /* skipped in both: skipped, not still_bad */
        { "mul|n=10|cpu|f32|pageable|f32", HB_CMP_FIXED, 0 },
        { "mul|n=11|cpu|f32|pageable|f32", HB_CMP_CRASHED, 1 },
        { "mul|n=12|cpu|f32|pageable|f32", HB_CMP_INSUFFICIENT, 0 },
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const hb_cmp_case *c = find_case(&r, want[i].key);
        if (!c) fail_msg("case %s not in the result", want[i].key);
        if (c->verdict != want[i].v)
            fail_msg("%s: verdict %s, want %s", want[i].key, hb_cmp_verdict_name(c->verdict),
                     hb_cmp_verdict_name(want[i].v));
        assert_int_equal(hb_cmp_verdict_fails(c->verdict, &o), want[i].fails);
        fails += want[i].fails;
    }
    assert_int_equal(r.fails, fails);
    assert_int_equal(r.tested, 3); /* n=1, n=1#2, n=6 */
    hb_cmp_result_free(&r);
    o.allow_missing = 1;
    poison(&r);
    assert_int_equal(hb_compare_runs(&ra, &rb, &o, &r, err, sizeof err), HB_OK);
    assert_int_equal(r.fails, fails - 1);
    hb_cmp_result_free(&r);
    hb_run_free(&ra);
    hb_run_free(&rb);

    /* through the command: exit 1 with the bad cases; without them inconclusive (11): the case with
     * 2 samples (n=12) is fewer than the minimum; with --min-samples 2 it is compared, and passes */
    char *argv1[] = { "compare", a, b, "--quiet", NULL };
    assert_int_equal(hb_cmd_compare(4, argv1), HB_EXIT_REGRESSION);
    write_status_pair(a, b, 0);
    assert_int_equal(hb_cmd_compare(4, argv1), HB_EXIT_INCONCLUSIVE);
}

static void test_exit_codes(void **state)
{
    (void)state;
    char a[300], b[300], other[300], cpu[300], sch[300], bad[300], none[300];
    path_in(a, sizeof a, "ex_a.jsonl");
    path_in(b, sizeof b, "ex_b.jsonl");
    path_in(other, sizeof other, "ex_other.jsonl");
    path_in(cpu, sizeof cpu, "ex_cpu.jsonl");
    path_in(sch, sizeof sch, "ex_schema.jsonl");
    path_in(bad, sizeof bad, "ex_bad.jsonl");
    path_in(none, sizeof none, "does_not_exist.jsonl");
    hb_rng g;
    hb_rng_seed(&g, 1);
    const char *paths[] = { a, b, other, cpu, sch };
    const char *hosts[] = { "h", "h", "elsewhere", "h", "h" };
    const char *cpus[] = { "X", "X", "X", "Y", "X" };
    int schemas[] = { 1, 1, 1, 1, 2 };
    for (int i = 0; i < 5; i++) {
        json_t *cs = json_array();
        json_array_append_new(cs, mk_case("add", "n=1", "cpu", "ok", &g, 1e-3, 0.02, 30));
        write_run(paths[i], hosts[i], cpus[i], schemas[i], "r", "2024-01-01", cs, 1);
    }
    FILE *f = fopen(bad, "w");
    fputs("{\"type\":\"meta\",\"schema\":1}\nthis is not json\n{\"type\":\"end\"}\n", f);
    fclose(f);
    char *u0[] = { "compare", NULL };
    assert_int_equal(hb_cmd_compare(1, u0), HB_EXIT_USAGE);
    char *u1[] = { "compare", a, NULL };
    assert_int_equal(hb_cmd_compare(2, u1), HB_EXIT_USAGE);
    char *u2[] = { "compare", a, b, "--bogus", NULL };
    assert_int_equal(hb_cmd_compare(4, u2), HB_EXIT_USAGE);
    char *u3[] = { "compare", a, b, "--threshold", "zz", NULL };
    assert_int_equal(hb_cmd_compare(5, u3), HB_EXIT_USAGE);
    char *u4[] = { "compare", a, b, "--metric", NULL };
    assert_int_equal(hb_cmd_compare(4, u4), HB_EXIT_USAGE);
    char *u7[] = { "compare", a, b, "--alpha", "0.0x5", NULL };
    assert_int_equal(hb_cmd_compare(5, u7), HB_EXIT_USAGE);
    char *u8[] = { "compare", a, b, "--min-samples=-3", NULL };
    assert_int_equal(hb_cmd_compare(4, u8), HB_EXIT_USAGE);
    char *u9[] = { "compare", a, b, "--alpha", "1.5", NULL };
    assert_int_equal(hb_cmd_compare(5, u9), HB_EXIT_USAGE);
    char *u5[] = { "compare", a, none, NULL };
    assert_int_equal(hb_cmd_compare(3, u5), HB_EXIT_USAGE);
    char *u6[] = { "compare", bad, a, NULL };
    assert_int_equal(hb_cmd_compare(3, u6), HB_EXIT_USAGE);
    char *ok[] = { "compare", a, b, "--quiet", "--metric=compute", NULL };
    assert_int_equal(hb_cmd_compare(5, ok), HB_EXIT_OK);
    char *i1[] = { "compare", a, other, "--quiet", NULL }; /* another host name, the same fingerprint */
    assert_int_equal(hb_cmd_compare(4, i1), HB_EXIT_OK);
    char *i2[] = { "compare", a, cpu, "--quiet", NULL };
    assert_int_equal(hb_cmd_compare(4, i2), HB_EXIT_INCOMPARABLE);
    char *i3[] = { "compare", a, sch, "--quiet", NULL };
    assert_int_equal(hb_cmd_compare(4, i3), HB_EXIT_INCOMPARABLE);
    char *i4[] = { "compare", a, cpu, "--quiet", "--force", NULL };
    assert_int_equal(hb_cmd_compare(5, i4), HB_EXIT_OK);
    char *i5[] = { "compare", a, cpu, "--quiet", "--cross-machine", NULL };
    assert_int_equal(hb_cmd_compare(5, i5), HB_EXIT_OK);
}

static int count_substr(const char *hay, const char *needle)
{
    int k = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) k++;
    return k;
}

static void test_outputs(void **state)
{
    (void)state;
    char a[300], b[300], md[300], js[300], ju[300];
    path_in(a, sizeof a, "out_a.jsonl");
    path_in(b, sizeof b, "out_b.jsonl");
    path_in(md, sizeof md, "out.md");
    path_in(js, sizeof js, "out.json");
    path_in(ju, sizeof ju, "out.xml");
    /* 200 cases, 10% planted in 20, plus the status cases */
    write_family(a, 200, 60, 21, 0.03, NULL, "hostA", "runA");
    write_family(b, 200, 60, 22, 0.03, f_planted, "hostA", "runB");
    /* append a wrong case and a missing case */
    hb_rng g;
    hb_rng_seed(&g, 2);
    FILE *fa = fopen(a, "a"), *fb = fopen(b, "a");
    json_t *c1 = mk_case("relu", "n=5", "cpu", "ok", &g, 1e-3, 0.02, 50);
    json_t *c2 = mk_case("relu", "n=5", "cpu", "wrong", &g, 1e-3, 0.02, 50);
    json_t *c3 = mk_case("relu", "n=6", "cpu", "ok", &g, 1e-3, 0.02, 50);
    char *s1 = json_dumps(c1, JSON_COMPACT), *s2 = json_dumps(c2, JSON_COMPACT), *s3 = json_dumps(c3, JSON_COMPACT);
    fprintf(fa, "%s\n%s\n", s1, s3);
    fprintf(fb, "%s\n", s2);
    fclose(fa);
    fclose(fb);
    free(s1); free(s2); free(s3);
    json_decref(c1); json_decref(c2); json_decref(c3);
    unlink(md); unlink(js); unlink(ju);
    char *argv[] = { "compare", a, b, "--markdown", md, "--json", js, "--junit", ju, NULL };
    assert_int_equal(hb_cmd_compare(9, argv), HB_EXIT_REGRESSION);

    /* JSON, read back */
    json_error_t je;
    json_t *doc = json_load_file(js, 0, &je);
    assert_non_null(doc);
    json_t *sum = json_object_get(doc, "summary");
    assert_string_equal(json_string_value(json_object_get(sum, "verdict")), "fail");
    json_t *cases = json_object_get(doc, "cases");
    assert_int_equal(json_array_size(cases), 202);
    json_t *counts = json_object_get(sum, "counts");
    json_int_t nreg = json_integer_value(json_object_get(counts, "regression"));
    assert_true(nreg >= 19 && nreg <= 20);
    assert_int_equal(json_integer_value(json_object_get(counts, "wrong")), 1);
    assert_int_equal(json_integer_value(json_object_get(counts, "missing")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "fails")), nreg + 2);
    size_t i;
    json_t *c;
    json_int_t nfails = 0, nreg2 = 0;
    json_array_foreach(cases, i, c) {
        const char *v = json_string_value(json_object_get(c, "verdict"));
        assert_non_null(v);
        nfails += json_is_true(json_object_get(c, "fails"));
        if (!strcmp(v, "regression")) {
            nreg2++;
            assert_true(json_real_value(json_object_get(c, "ci_lo")) > 1.05);
            assert_true(json_real_value(json_object_get(c, "q")) <= 0.05);
            int idx = atoi(strstr(json_string_value(json_object_get(c, "key")), "n=") + 2);
            assert_true(idx % 10 == 0);
        }
        if (!strcmp(v, "missing")) assert_true(json_is_null(json_object_get(c, "median_cur_s")));
        if (!strcmp(v, "wrong"))
            assert_string_equal(json_string_value(json_object_get(c, "reason")), "synthetic failure <&>");
    }
    assert_int_equal(nreg2, nreg);
    assert_int_equal(nfails, nreg + 2);
    json_decref(doc);

    /* Markdown: verdict, sections, rows sorted by change (largest first) */
    char *m = hb_test_slurp(md);
    assert_non_null(m);
    assert_non_null(strstr(m, "## hybench compare: **FAIL**"));
    assert_non_null(strstr(m, "### Gate failures"));
    assert_non_null(strstr(m, "**wrong**"));
    assert_non_null(strstr(m, "**missing**"));
    assert_int_equal(count_substr(m, "| **regression** |"), (int)nreg);
    double prev = 1e9;
    for (const char *p = m; (p = strstr(p, "| **regression** |")); p++) {
        /* the change column is the 6th cell of the row: find the row start */
        const char *row = p;
        while (row > m && row[-1] != '\n') row--;
        const char *cell = row;
        for (int k = 0; k < 5; k++) cell = strchr(cell + 1, '|');
        double v = strtod(cell + 1, NULL);
        assert_true(v > 5 && v <= prev + 1e-9);
        prev = v;
    }
    assert_non_null(strstr(m, "\xc2\xb5s") ? m : strstr(m, " ms"));
    free(m);

    /* JUnit: well-formed; one testcase per case; failures as counted */
    char *x = hb_test_slurp(ju);
    assert_non_null(x);
    assert_int_equal(count_substr(x, "<testcase "), 202);
    assert_int_equal(count_substr(x, "<failure "), (int)nreg + 2);
    assert_null(strstr(x, "<&>"));
    assert_non_null(strstr(x, "synthetic failure &lt;&amp;&gt;"));
    free(x);
#ifdef HAVE_LIBXML2
    xmlDocPtr xd = xmlReadFile(ju, NULL, XML_PARSE_NONET);
    assert_non_null(xd);
    xmlNodePtr root = xmlDocGetRootElement(xd);
    assert_string_equal((const char *)root->name, "testsuites");
    xmlChar *fa_attr = xmlGetProp(root, (const xmlChar *)"failures");
    assert_int_equal(atoi((const char *)fa_attr), (int)nreg + 2);
    xmlFree(fa_attr);
    int ntc = 0, nfail = 0, nsuites = 0;
    for (xmlNodePtr s = root->children; s; s = s->next) {
        if (s->type != XML_ELEMENT_NODE) continue;
        assert_string_equal((const char *)s->name, "testsuite");
        nsuites++;
        xmlChar *t = xmlGetProp(s, (const xmlChar *)"tests");
        int declared = atoi((const char *)t), seen = 0;
        xmlFree(t);
        for (xmlNodePtr tc = s->children; tc; tc = tc->next) {
            if (tc->type != XML_ELEMENT_NODE || strcmp((const char *)tc->name, "testcase")) continue;
            ntc++;
            seen++;
            xmlChar *tm = xmlGetProp(tc, (const xmlChar *)"time");
            assert_true(strtod((const char *)tm, NULL) >= 0);
            xmlFree(tm);
            for (xmlNodePtr fl = tc->children; fl; fl = fl->next)
                if (fl->type == XML_ELEMENT_NODE && !strcmp((const char *)fl->name, "failure")) nfail++;
        }
        assert_int_equal(seen, declared);
    }
    assert_int_equal(nsuites, 2); /* cpu and opencl:0:0 */
    assert_int_equal(ntc, 202);
    assert_int_equal(nfail, (int)nreg + 2);
    xmlFreeDoc(xd);
    xmlCleanupParser();
#else
    printf("# libxml2 flags not in this build: JUnit checked by text only\n");
#endif
}

static void test_gbench(void **state)
{
    (void)state;
    char a[300], out[300];
    path_in(a, sizeof a, "gb.jsonl");
    path_in(out, sizeof out, "gb.json");
    hb_rng g;
    hb_rng_seed(&g, 3);
    json_t *cs = json_array();
    json_array_append_new(cs, mk_case("matmul", "m=64 n=64 k=64", "cpu", "ok", &g, 2e-4, 0.05, 37));
    json_array_append_new(cs, mk_case("add", "n=1024", "cpu", "skipped", &g, 0, 0, 0));
    json_array_append_new(cs, mk_case("add", "n=4096", "opencl:0:0", "ok", &g, 3e-6, 0.05, 12));
    write_run(a, "hostG", "AMD EPYC", 1, "rg", "2024-02-02T00:00:00Z", cs, 1);
    hb_run r;
    char err[256];
    assert_int_equal(hb_run_load(a, &r, err, sizeof err), HB_OK);
    json_t *d = hb_gbench_from_run(&r, "total", 0);
    assert_non_null(d);
    json_t *ctx = json_object_get(d, "context");
    assert_string_equal(json_string_value(json_object_get(ctx, "host_name")), "hostG");
    assert_string_equal(json_string_value(json_object_get(ctx, "executable")), "build/hybench");
    assert_int_equal(json_integer_value(json_object_get(ctx, "num_cpus")), 2);
    assert_int_equal(json_array_size(json_object_get(ctx, "caches")), 3);
    assert_true(json_is_integer(json_object_get(ctx, "mhz_per_cpu")));
    assert_true(json_is_boolean(json_object_get(ctx, "cpu_scaling_enabled")));
    json_t *bs = json_object_get(d, "benchmarks");
    assert_int_equal(json_array_size(bs), 37 + 4 + 12 + 4);
    /* iterations of the first case in sample order, in ns */
    json_t *samp = json_object_get(json_object_get(json_array_get(r.cases, 0), "samples"), "total");
    double xs[37];
    for (int i = 0; i < 37; i++) {
        json_t *b = json_array_get(bs, (size_t)i);
        assert_string_equal(json_string_value(json_object_get(b, "name")), "matmul/m:64/n:64/k:64/cpu/f32/pageable/f32");
        assert_string_equal(json_string_value(json_object_get(b, "run_name")), "matmul/m:64/n:64/k:64/cpu/f32/pageable/f32");
        assert_string_equal(json_string_value(json_object_get(b, "run_type")), "iteration");
        assert_int_equal(json_integer_value(json_object_get(b, "repetitions")), 37);
        assert_int_equal(json_integer_value(json_object_get(b, "repetition_index")), i);
        assert_int_equal(json_integer_value(json_object_get(b, "iterations")), 1);
        assert_int_equal(json_integer_value(json_object_get(b, "threads")), 1);
        assert_string_equal(json_string_value(json_object_get(b, "time_unit")), "ns");
        double rt = json_real_value(json_object_get(b, "real_time"));
        assert_true(fabs(rt - 1e9 * json_real_value(json_array_get(samp, (size_t)i))) < 1e-6 * rt);
        assert_true(rt == json_real_value(json_object_get(b, "cpu_time")));
        xs[i] = rt;
    }
    hb_rs_sort(xs, 37);
    const char *aggs[] = { "mean", "median", "stddev", "cv" };
    for (int k = 0; k < 4; k++) {
        json_t *b = json_array_get(bs, (size_t)(37 + k));
        assert_string_equal(json_string_value(json_object_get(b, "run_type")), "aggregate");
        assert_string_equal(json_string_value(json_object_get(b, "aggregate_name")), aggs[k]);
        char nm[128];
        snprintf(nm, sizeof nm, "matmul/m:64/n:64/k:64/cpu/f32/pageable/f32_%s", aggs[k]);
        assert_string_equal(json_string_value(json_object_get(b, "name")), nm);
        assert_null(json_object_get(b, "repetition_index"));
    }
    assert_true(fabs(json_real_value(json_object_get(json_array_get(bs, 38), "real_time")) - hb_rs_median_sorted(xs, 37)) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(json_array_get(bs, 40), "aggregate_unit")), "percentage");
    double cv = json_real_value(json_object_get(json_array_get(bs, 40), "real_time"));
    assert_true(cv > 0.01 && cv < 0.5);
    json_decref(d);
    d = hb_gbench_from_run(&r, "compute", 1);
    assert_int_equal(json_array_size(json_object_get(d, "benchmarks")), 8);
    json_decref(d);
    hb_run_free(&r);
    /* the command writes a file jansson reads back */
    unlink(out);
    char *argv[] = { "gbench", a, "-o", out, "--errors", NULL };
    assert_int_equal(hb_cmd_gbench(5, argv), HB_EXIT_OK);
    json_error_t je;
    d = json_load_file(out, 0, &je);
    assert_non_null(d);
    bs = json_object_get(d, "benchmarks");
    assert_int_equal(json_array_size(bs), 37 + 4 + 1 + 12 + 4);
    assert_true(json_is_true(json_object_get(json_array_get(bs, 41), "error_occurred")));
    json_decref(d);
    char *bad[] = { "gbench", NULL };
    assert_int_equal(hb_cmd_gbench(1, bad), HB_EXIT_USAGE);
    /* a key repeated in one file is a separate family NAME#2, as compare matches it */
    cs = json_array();
    json_array_append_new(cs, mk_case("add", "n=8", "cpu", "ok", &g, 1e-6, 0.05, 5));
    json_array_append_new(cs, mk_case("add", "n=8", "cpu", "ok", &g, 1e-6, 0.05, 5));
    write_run(a, "hostG", "AMD EPYC", 1, "rg", "2024-02-02T00:00:00Z", cs, 1);
    assert_int_equal(hb_run_load(a, &r, err, sizeof err), HB_OK);
    d = hb_gbench_from_run(&r, "total", 1);
    bs = json_object_get(d, "benchmarks");
    assert_int_equal(json_array_size(bs), 8);
    assert_string_equal(json_string_value(json_object_get(json_array_get(bs, 0), "run_name")), "add/n:8/cpu/f32/pageable/f32");
    assert_string_equal(json_string_value(json_object_get(json_array_get(bs, 4), "run_name")), "add/n:8/cpu/f32/pageable/f32#2");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(bs, 4), "family_index")), 1);
    json_decref(d);
    hb_run_free(&r);
}

static void test_baseline(void **state)
{
    (void)state;
    char a[300], b[300], w[300], dir[300], jl[600], jsn[600];
    path_in(a, sizeof a, "bl_a.jsonl");
    path_in(b, sizeof b, "bl_b.jsonl");
    path_in(w, sizeof w, "bl_wrong.jsonl");
    path_in(dir, sizeof dir, "baselines");
    write_family(a, 50, 40, 31, 0.03, NULL, "my host/1", "runA");
    write_family(b, 50, 40, 32, 0.03, f_planted, "my host/1", "runB");
    hb_rng g;
    hb_rng_seed(&g, 1);
    json_t *cs = json_array();
    json_array_append_new(cs, mk_case("add", "n=1", "cpu", "wrong", &g, 1, 1, 1));
    write_run(w, "my host/1", "AMD EPYC", 1, "w", "2024", cs, 1);
    char slug[64];
    assert_string_equal(hb_host_slug("my host/1", slug, sizeof slug), "my_host_1");
    assert_string_equal(hb_host_slug("", slug, sizeof slug), "unknown");
    assert_string_equal(hb_host_slug("..", slug, sizeof slug), "unknown");
    char *show0[] = { "baseline", "show", "--dir", dir, "--host", "my host/1", NULL };
    assert_int_equal(hb_cmd_baseline(6, show0), HB_EXIT_USAGE); /* none yet */
    char *setw[] = { "baseline", "set", w, "--dir", dir, NULL };
    assert_int_equal(hb_cmd_baseline(5, setw), HB_EXIT_USAGE);  /* refused: wrong case */
    char *set[] = { "baseline", "set", a, "--dir", dir, NULL };
    assert_int_equal(hb_cmd_baseline(5, set), HB_EXIT_OK);
    {   /* stored by the machine's fingerprint, not by host name */
        hb_run ra;
        char err[256], fp[17];
        assert_int_equal(hb_run_load(a, &ra, err, sizeof err), HB_OK);
        assert_int_equal(hb_baseline_find(dir, &ra, jl, jsn, sizeof jl, fp, NULL), 0);
        assert_non_null(strstr(jl, fp));
        hb_run_free(&ra);
    }
    char *orig = hb_test_slurp(a), *copy = hb_test_slurp(jl);
    assert_non_null(copy);
    assert_string_equal(orig, copy);
    free(orig);
    free(copy);
    json_error_t je;
    json_t *p = json_load_file(jsn, 0, &je);
    assert_non_null(p);
    assert_string_equal(json_string_value(json_object_get(p, "run_id")), "runA");
    assert_string_equal(json_string_value(json_object_get(p, "host")), "my host/1");
    assert_int_equal(strlen(json_string_value(json_object_get(p, "fingerprint"))), 16);
    assert_int_equal(json_integer_value(json_object_get(p, "ok")), 50);
    json_decref(p);
    assert_int_equal(hb_cmd_baseline(6, show0), HB_EXIT_OK);
    char *show1[] = { "baseline", "show", "--dir", dir, b, NULL };
    assert_int_equal(hb_cmd_baseline(5, show1), HB_EXIT_OK);
    char *show2[] = { "baseline", "show", "--dir", dir, NULL };
    assert_int_equal(hb_cmd_baseline(4, show2), HB_EXIT_OK);
    char *show3[] = { "baseline", "show", "--dir", dir, "--host", "nobody", NULL };
    assert_int_equal(hb_cmd_baseline(6, show3), HB_EXIT_USAGE);
    char *cmp[] = { "compare", "--baseline-dir", dir, b, "--quiet", NULL };
    assert_int_equal(hb_cmd_compare(5, cmp), HB_EXIT_REGRESSION); /* 10% planted in 5 cases */
    char *cmp2[] = { "compare", dir, a, "--quiet", NULL };    /* a directory as BASELINE */
    assert_int_equal(hb_cmd_compare(4, cmp2), HB_EXIT_OK);
    char *bad[] = { "baseline", "frob", NULL };
    assert_int_equal(hb_cmd_baseline(2, bad), HB_EXIT_USAGE);
}

static double f_step(int i) { return i < 5 ? 1.25 : 1.0; }

/* hybench trend over the history store (docs/history.md): 24 nights from one machine, each night
 * from a new host name; from night 12 on, cases 0..4 are 25% slower. trend reports exactly those
 * five steps, on night 12, and writes the tables, the data and (with gnuplot) the plots. (Rank tests
 * at alpha 0.001 need about 10 nights on each side of a step: Pettitt's p is at least
 * 2 exp(-6 (n/2)^4 / (n^3 + n^2)), 0.03 for 12 nights.) */
static void test_trend(void **state)
{
    (void)state;
    char hist[300], out[300], store[400], f[1400];
    path_in(hist, sizeof hist, "history");
    path_in(out, sizeof out, "trend");
    mkdir(hist, 0775);
    snprintf(store, sizeof store, "%s/history.db", hist);
    unlink(store);
    for (int r = 0; r < 24; r++) {
        char id[32], host[32];
        snprintf(id, sizeof id, "night%02d", r);
        snprintf(host, sizeof host, "runner%d", r);
        snprintf(f, sizeof f, "%s/%s.jsonl", hist, id);
        write_family(f, 30, 40, 100 + (uint64_t)r, 0.03, r >= 12 ? f_step : NULL, host, id);
        char *argv[] = { "trend", "--add", f, "--store", store, NULL };
        assert_int_equal(hb_cmd_trend(5, argv), HB_EXIT_OK);
    }
    /* the same file again: already there, still 0 */
    char *again[] = { "trend", "--store", store, "--add", f, NULL };
    assert_int_equal(hb_cmd_trend(5, again), HB_EXIT_OK);
    int have_gp = system("gnuplot --version >/dev/null 2>&1") == 0;
    char *argv[] = { "trend", "--store", store, "--out", out, have_gp ? NULL : "--no-plot", NULL };
    assert_int_equal(hb_cmd_trend(have_gp ? 5 : 6, argv), HB_EXIT_OK);
    /* one machine folder (one fingerprint for 24 host names) */
    DIR *dd = opendir(out);
    assert_non_null(dd);
    struct dirent *de;
    char fp[300] = "";
    int nmach = 0;
    while ((de = readdir(dd)))
        if (de->d_name[0] != '.') { nmach++; snprintf(fp, sizeof fp, "%s", de->d_name); }
    closedir(dd);
    assert_int_equal(nmach, 1);
    snprintf(f, sizeof f, "%s/%s/changes.md", out, fp);
    char *md = hb_test_slurp(f);
    assert_non_null(md);
    assert_int_equal(count_substr(md, "| step (slower) | 12, "), 5);
    assert_int_equal(count_substr(md, "(slower)") + count_substr(md, "(faster)"), 5);
    free(md);
    static const char *ops[] = { "add", "matmul", "conv2d", "sum", "attention" };
    static const char *bes[] = { "cpu", "opencl_0_0" };
    for (int o = 0; o < 5; o++)
        for (int b = 0; b < 2; b++) {
            snprintf(f, sizeof f, "%s/%s/%s__%s.dat", out, fp, ops[o], bes[b]);
            char *d = hb_test_slurp(f);
            assert_non_null(d);
            /* the band block: night 0 is 1 for every case (normalised to the first night) */
            char *l0 = strstr(d, "\n0 ");
            assert_non_null(l0);
            double p10, p50, p90;
            assert_int_equal(sscanf(l0 + 3, "%lf %lf %lf", &p10, &p50, &p90), 3);
            assert_true(p10 == 1 && p50 == 1 && p90 == 1);
            free(d);
            if (have_gp) {
                snprintf(f, sizeof f, "%s/%s/%s__%s.svg", out, fp, ops[o], bes[b]);
                char *svg = hb_test_slurp(f);
                assert_non_null(svg);
                assert_non_null(strstr(svg, "<svg"));
                free(svg);
            }
        }
    snprintf(f, sizeof f, "%s/%s/index.html", out, fp);
    char *h = hb_test_slurp(f);
    assert_non_null(strstr(h, "5 changes in 5 cases"));
    free(h);
    /* an empty store: no runs (2); a store that cannot be created (7) */
    snprintf(f, sizeof f, "%s/empty.db", hist);
    unlink(f);
    char *empty[] = { "trend", "--store", f, "--no-plot", "--out", out, NULL };
    assert_int_equal(hb_cmd_trend(6, empty), HB_EXIT_USAGE);
    char *bad[] = { "trend", "--store", "/proc/nonexistent/h.db", NULL };
    assert_int_equal(hb_cmd_trend(3, bad), HB_EXIT_IO);
    char *badopt[] = { "trend", "--alpha", "2", NULL };
    assert_int_equal(hb_cmd_trend(3, badopt), HB_EXIT_USAGE);
}

/* Two files of 3000 cases x 100 samples (a default run's size): load + compare under 5 s. */
static void test_speed(void **state)
{
    (void)state;
    char a[300], b[300];
    path_in(a, sizeof a, "big_a.jsonl");
    path_in(b, sizeof b, "big_b.jsonl");
    write_family(a, 3000, 100, 41, 0.05, NULL, "hostA", "a");
    write_family(b, 3000, 100, 42, 0.05, f_planted, "hostA", "b");
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    char *argv[] = { "compare", a, b, "--quiet", NULL };
    assert_int_equal(hb_cmd_compare(4, argv), HB_EXIT_REGRESSION);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("# compare of two 3000-case files (100 samples per case, total and compute): %.2f s wall, "
           "%.2f s CPU (all threads)\n", s, cpu);
    /* the target is 5 s wall on an idle 2-core machine; CPU time does not depend on the load that
     * other jobs put on a shared machine, and bounds the wall time there */
    assert_true(cpu < 5.0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hb_test_compare_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    if (!getenv("HB_KEEP_TEST_FILES")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd)) return 0;
    } else printf("# test files kept in %s\n", tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_and_planted),
        cmocka_unit_test(test_run_drift),
        cmocka_unit_test(test_noise_scale),
        cmocka_unit_test(test_backend_threshold),
        cmocka_unit_test(test_passes),
        cmocka_unit_test(test_status_gate),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_gbench),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_trend),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
