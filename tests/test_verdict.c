/*
 * test_verdict.c - the gate's three outcomes and machines told apart by fingerprint (issue 41 items 2
 * and 3): the normal quantile (core/rstats.c) and the minimum detectable effect (analysis/mde.c)
 * against values computed by hand (Python's statistics.NormalDist); `hybench ab --redecide` and
 * `hybench compare` on synthetic results files drawn with fixed seeds: rounds or samples that cannot
 * decide (few, noisy) are inconclusive (exit 11, no "PASS" in the Markdown, JSON, JUnit or the
 * terminal, the undecided cases and the MDE per op family named), a clear regression fails (also
 * beside undecided cases), a clear no-change with enough rounds passes; two runs whose host names
 * differ and whose fingerprints agree are compared and find each other's baseline, two whose
 * fingerprints differ are refused (exit 3, both fingerprints and what differs named) unless
 * --cross-machine; a baseline of the former layout (DIR/<host>.jsonl) is still found; a case skipped
 * in both runs is "skipped"; a meta record without "schema" is named by its file.
 * Files go into a temporary folder.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include "cli_capture.h"

#include "analysis/ab.h"
#include "analysis/baseline.h"
#include "analysis/mde.h"
#include "cli/commands.h"
#include "core/rstats.h"
#include "results/machine.h"
#include "test_files.h"

static char dir[64];
static char errbuf[16384];

static void path_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

static void expect_in(const char *what, const char *hay, const char *want)
{
    if (!hay || !strstr(hay, want)) fail_msg("%s: lacks \"%s\" in \"%.3000s\"", what, want, hay ? hay : "(null)");
}

static void expect_not_in_file(const char *path, const char *word)
{
    char *s = hb_test_slurp(path);
    if (!s) fail_msg("%s: cannot read", path);
    if (strstr(s, word)) fail_msg("%s says \"%s\"", path, word);
    free(s);
}

/* ---- synthetic results files ---- */

/* A machine: host name, CPU model and the GPU its cuda backend names (NULL: no backend record). */
typedef struct machine { const char *host, *cpu, *gpu; } machine;

/* A results file: meta (schema unless no_schema), the machine's backend record, and ncases cases
 * "OP|n=i|cuda:0|f32|pageable|f32" (op "matmul" for even i, "add" for odd) with nsamp samples each,
 * lognormal around med[i] with log sd sigma; status[i] (NULL: every case ok). */
static void write_results(const char *path, const machine *m, int no_schema, int ncases, const double *med, int nsamp,
                          double sigma, hb_rng *g, const char *const *status)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    json_t *meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i}, s:s}", "type", "meta", "run_id", path,
                             "date", "2026-11-28T00:00:00Z", "git_commit", "abc", "host", m->host, "cpu", "model", m->cpu,
                             "pus", 2, "cores", 2, "sockets", 1, "compiler", "gcc 12");
    if (!no_schema) json_object_set_new(meta, "schema", json_integer(1));
    char *s = json_dumps(meta, JSON_COMPACT);
    fprintf(f, "%s\n", s);
    free(s);
    json_decref(meta);
    if (m->gpu) fprintf(f, "{\"type\":\"backend\",\"schema\":1,\"backend\":\"cuda:0\",\"available\":true,"
                           "\"info\":{\"name\":\"%s\",\"driver_version\":\"550\"}}\n", m->gpu);
    for (int i = 0; i < ncases; i++) {
        const char *op = i % 2 ? "add" : "matmul", *st = status && status[i] ? status[i] : "ok";
        char key[128], shape[32];
        snprintf(shape, sizeof shape, "n=%d", i);
        snprintf(key, sizeof key, "%s|%s|cuda:0|f32|pageable|f32", op, shape);
        json_t *c = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "case", "schema", 1, "key", key,
                              "backend", "cuda:0", "op", op, "shape_str", shape, "mode", "f32", "route", "pageable", "dtype",
                              "f32", "status", st);
        if (!strcmp(st, "ok")) {
            json_t *a = json_array();
            for (int k = 0; k < nsamp; k++) json_array_append_new(a, json_real(med[i] * exp(sigma * hb_rng_normal(g))));
            json_object_set_new(c, "samples", json_pack("{s:o}", "total", a));
            json_object_set_new(c, "phases", json_pack("{s:{s:f}}", "total", "median", med[i]));
        }
        s = json_dumps(c, JSON_COMPACT);
        fprintf(f, "%s\n", s);
        free(s);
        json_decref(c);
    }
    fprintf(f, "{\"type\":\"end\",\"schema\":1,\"cases\":%d}\n", ncases);
    assert_int_equal(fclose(f), 0);
}

#define NCASE 30
static const machine M1 = {"runner-17", "AMD EPYC 9654", "NVIDIA H100 80GB HBM3"};
static const machine M1b = {"runner-42", "AMD EPYC 9654", "NVIDIA H100 80GB HBM3"}; /* renamed runner */
static const machine M2 = {"runner-17", "AMD EPYC 9654", "NVIDIA H200"};            /* another GPU */

/* DIR/<name>/rounds/{base,cur}-rNN.jsonl for nrounds rounds: per round and side a process shift of
 * `shift` (log sd), per case and round noise `noise` (log sd), 5 samples of 1% spread; the cases with
 * slow[i] != 0 are that much slower in CUR; cur_status: statuses of CUR's cases in every round. */
static void write_rounds(const char *name, int nrounds, double noise, double shift, const double *slow, uint64_t seed,
                         const char *const *cur_status)
{
    char d[256], r[300], p[400];
    path_of(d, sizeof d, name);
    snprintf(r, sizeof r, "%s/rounds", d);
    mkdir(d, 0755);
    mkdir(r, 0755);
    hb_rng g;
    hb_rng_seed(&g, seed);
    double base[NCASE], med[NCASE];
    for (int i = 0; i < NCASE; i++) base[i] = 1e-4 * (1 + i % 7);
    for (int k = 0; k < nrounds; k++)
        for (int s = 0; s < 2; s++) {
            double sh = shift * hb_rng_normal(&g);
            for (int i = 0; i < NCASE; i++)
                med[i] = base[i] * exp(sh + noise * hb_rng_normal(&g)) * (s && slow ? 1 + slow[i] : 1);
            snprintf(p, sizeof p, "%s/%s-r%02d.jsonl", r, s ? "cur" : "base", k + 1);
            write_results(p, &M1, 0, NCASE, med, 5, 0.01, &g, s ? cur_status : NULL);
        }
}

/* `hybench ab --redecide DIR/name` with outputs in DIR/name/g.{md,json,xml}; extra options after it. */
static int redecide(const char *name, const char *extra1, const char *extra2)
{
    char d[256], md[300], js[300], ju[300];
    path_of(d, sizeof d, name);
    snprintf(md, sizeof md, "%s/g.md", d);
    snprintf(js, sizeof js, "%s/g.json", d);
    snprintf(ju, sizeof ju, "%s/g.xml", d);
    char *v[16] = {"ab", "--redecide", d, "--markdown", md, "--json", js, "--junit", ju};
    int n = 9;
    if (extra1) v[n++] = (char *)extra1;
    if (extra2) v[n++] = (char *)extra2;
    v[n] = NULL;
    return hb_test_run_cmd(hb_cmd_ab, n, v, errbuf, sizeof errbuf, 0);
}

static json_t *load_json(const char *name, const char *file)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s/%s", dir, name, file);
    json_error_t je;
    json_t *j = json_load_file(p, 0, &je);
    if (!j) fail_msg("%s: %s", p, je.text);
    return j;
}

/* Every output of an inconclusive gate says so and none says PASS. */
static void expect_inconclusive_outputs(const char *name, const char *tool)
{
    char md[400], js[400], ju[400], head[80];
    snprintf(md, sizeof md, "%s/%s/g.md", dir, name);
    snprintf(js, sizeof js, "%s/%s/g.json", dir, name);
    snprintf(ju, sizeof ju, "%s/%s/g.xml", dir, name);
    for (const char *const *f = (const char *const[]){md, js, ju, NULL}; *f; f++) expect_not_in_file(*f, "PASS");
    if (strstr(errbuf, "PASS") || strstr(errbuf, ": pass:")) fail_msg("the terminal says pass: %s", errbuf);
    expect_in("terminal", errbuf, "INCONCLUSIVE");
    char *m = hb_test_slurp(md);
    snprintf(head, sizeof head, "## %s: **INCONCLUSIVE**", tool);
    expect_in("markdown", m, head);
    expect_in("markdown", m, "### Undecided cases");
    expect_in("markdown", m, "Smallest slowdown this run could detect");
    free(m);
    char *x = hb_test_slurp(ju);
    expect_in("junit", x, "name=\"verdict\" value=\"inconclusive\"");
    expect_in("junit", x, "undecided (inconclusive)");
    free(x);
    json_t *j = load_json(name, "g.json"), *sum = json_object_get(j, "summary");
    assert_string_equal(json_string_value(json_object_get(sum, "verdict")), "inconclusive");
    assert_true(json_integer_value(json_object_get(sum, "undecided")) > 0);
    json_t *mde = json_object_get(sum, "mde");
    assert_non_null(json_object_get(mde, "matmul"));
    assert_non_null(json_object_get(mde, "elementwise"));
    size_t i, und = 0;
    json_t *c;
    json_array_foreach(json_object_get(j, "cases"), i, c) und += json_is_true(json_object_get(c, "undecided"));
    assert_int_equal(und, json_integer_value(json_object_get(sum, "undecided")));
    json_decref(j);
}

/* ---- tests ---- */

static void test_quantile_and_mde(void **state)
{
    (void)state;
    /* values of statistics.NormalDist().inv_cdf */
    assert_true(fabs(hb_rs_normal_quantile(0.975) - 1.9599639845400536) < 1e-13);
    assert_true(fabs(hb_rs_normal_quantile(0.8) - 0.8416212335729144) < 1e-13);
    assert_true(fabs(hb_rs_normal_quantile(1 - 0.0025) - 2.8070337683438114) < 1e-12);
    assert_true(hb_rs_normal_quantile(0.5) == 0 && isinf(hb_rs_normal_quantile(1)) && isnan(hb_rs_normal_quantile(-1)));
    hb_rng g;
    hb_rng_seed(&g, 41);
    for (int k = 0; k < 2000; k++) { /* Phi(z_p) = p over the three regions of AS 241 */
        double p = k % 3 == 0 ? hb_rng_uniform(&g) : k % 3 == 1 ? pow(10, -1 - 14 * hb_rng_uniform(&g)) : 0.5 + 0.4 * hb_rng_uniform(&g);
        if (!(p > 0 && p < 1)) continue;
        double z = hb_rs_normal_quantile(p), back = 1 - hb_rs_normal_sf(z);
        if (p < 0.5) back = hb_rs_normal_sf(-z);
        assert_true(fabs(back - p) <= 1e-13 * p + 1e-300);
    }
    /* the MDE by hand: se 0.05, alpha 0.05 over m 10 cases, CI 95%, threshold 2%:
     * test (2.8070337683 + 0.8416212336) sqrt(pi/3) 0.05 = 0.186688; rule ci
     * log 1.02 + (1.9599639845 + 0.8416212336) sqrt(pi/2) 0.05 = 0.195366 -> exp(0.195366) - 1 */
    hb_mde_in in = {.se = 0.05, .alpha = 0.05, .m = 10, .k = 1, .confidence = 0.95, .threshold = 0.02};
    assert_true(fabs(hb_mde(&in) - 0.21575580525922958) < 1e-12);
    in.rule_point = 1; /* log 1.02 + 0.8416 sqrt(pi/2) 0.05 = 0.0726 < the test's 0.1867 */
    assert_true(fabs(hb_mde(&in) - 0.2052515563085136) < 1e-12);
    /* k = 5 of the 10 change together: alpha' = 0.025, z(1 - 0.0125) = 2.2414027276, test
     * (2.2414027276 + 0.8416212336) sqrt(pi/3) 0.05 = 0.157747 < the rule's 0.195366: as before */
    in.rule_point = 0;
    in.k = 5;
    assert_true(fabs(hb_mde(&in) - 0.21575580525922958) < 1e-12);
    /* one case of 1000, se 0.1: z(1 - 0.05/2000) = 4.0556269811, the test's part (4.0556269811 +
     * 0.8416212336) sqrt(pi/3) 0.1 = 0.501148 beats the rule's log 1.02 + 2.8015852181 sqrt(pi/2) 0.1 =
     * 0.370929 */
    in.se = 0.1;
    in.m = 1000;
    in.k = 1;
    assert_true(fabs(hb_mde(&in) - 0.6506158972983016) < 1e-12);
    /* P10e: 6 rounds, 274 cases, the 49 of the matmul family slowed: 2/2^6 = 0.031 > 0.05 x 49/274 =
     * 0.0089: no change is detectable */
    assert_true(fabs(hb_mde_floor_signed_rank(6) - 2.0 / 64) < 1e-15);
    in.m = 274;
    in.k = 49;
    in.p_floor = hb_mde_floor_signed_rank(6);
    assert_true(isinf(hb_mde(&in)));
    in.p_floor = hb_mde_floor_signed_rank(8); /* 2/256 = 0.0078 < 0.0089: 8 rounds could */
    assert_true(isfinite(hb_mde(&in)));
    assert_true(fabs(hb_mde_floor_mann_whitney(3, 3) - 0.1) < 1e-12);
    in.se = 0;
    assert_true(isnan(hb_mde(&in)));
    /* the spread: 1.4826 x MAD; the sample sd when the MAD is 0 */
    double x[10] = {0.03, -0.01, 0.05, 0.00, 0.02, 0.04, -0.02, 0.01, 0.06, 0.03}, y[5] = {1, 1, 1, 2, 4};
    assert_true(fabs(hb_mde_spread(x, 10) - 1.4826 * 0.02) < 1e-12);
    assert_true(fabs(hb_mde_spread(y, 5) - sqrt(6.8 / 4)) < 1e-12); /* mean 1.8: 3 x 0.64 + 0.04 + 4.84 */
}

/* hb_ab_decide's MDE of one case equals the formula over its own per-round log ratios. */
static void test_ab_mde_hand(void **state)
{
    (void)state;
    static const double d[10] = {0.03, -0.01, 0.05, 0.00, 0.02, 0.04, -0.02, 0.01, 0.06, 0.03};
    hb_run rb[10], rc[10];
    const hb_run *pb[10], *pc[10];
    for (int r = 0; r < 10; r++)
        for (int s = 0; s < 2; s++) {
            hb_run *x = s ? &rc[r] : &rb[r];
            memset(x, 0, sizeof *x);
            x->path = strdup("synthetic");
            x->meta = json_pack("{s:s,s:i,s:s}", "type", "meta", "schema", 1, "host", "h");
            x->backends = json_array();
            x->cases = json_array();
            json_array_append_new(x->cases, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:{s:[f]}}", "type", "case", "key",
                                                      "matmul|n=1|cpu|f32|pageable|f32", "backend", "cpu", "op", "matmul",
                                                      "shape_str", "n=1", "mode", "f32", "route", "pageable", "dtype", "f32",
                                                      "status", "ok", "samples", "total", 1e-3 * (s ? exp(d[r]) : 1)));
            (s ? pc : pb)[r] = x;
        }
    hb_ab_options o;
    hb_ab_options_default(&o);
    o.normalize = 0;
    o.whole_run = 0;
    hb_cmp_result res;
    char err[256];
    memset(&res, 0xff, sizeof res);
    for (int r = 0; r < 10; r++) { /* the records as structs: what hb_ab_decide reads */
        assert_int_equal(hb_run_index((hb_run *)pb[r]), HB_OK);
        assert_int_equal(hb_run_index((hb_run *)pc[r]), HB_OK);
    }
    assert_int_equal(hb_ab_decide(pb, pc, 10, &o, &res, NULL, err, sizeof err), HB_OK);
    assert_int_equal(res.tested, 1);
    /* by hand: median 0.025, MAD 0.02, s = 0.029652, se = s / sqrt 10 = 0.0093768; m = 1, alpha' 0.05:
     * test (1.95996 + 0.84162) sqrt(pi/3) se = 0.026883; rule log 1.02 + (1.95996 + 0.84162) sqrt(pi/2)
     * se = 0.052727, the larger: exp(0.052727) - 1 */
    assert_true(fabs(res.cases[0].mde - 0.05414184573400775) < 1e-9);
    assert_int_equal(res.nfam, 1);
    assert_string_equal(res.fam[0].family, "matmul");
    assert_true(fabs(res.fam[0].mde - res.cases[0].mde) < 1e-15);
    assert_int_equal(res.rounds, 10);
    hb_cmp_result_free(&res);
    for (int r = 0; r < 10; r++) { hb_run_free(&rb[r]); hb_run_free(&rc[r]); }
}

static void test_ab_three_outcomes(void **state)
{
    (void)state;
    double slow[NCASE] = {0};
    /* 3 rounds of 20% noise: fewer than the minimum (8), and nothing can be decided */
    write_rounds("ab_inc", 3, 0.20, 0.05, NULL, 1, NULL);
    assert_int_equal(redecide("ab_inc", NULL, NULL), HB_EXIT_INCONCLUSIVE);
    expect_inconclusive_outputs("ab_inc", "hybench ab");
    char mdp[300];
    snprintf(mdp, sizeof mdp, "%s/ab_inc/g.md", dir);
    char *m = hb_test_slurp(mdp);
    expect_in("markdown", m, "3 rounds, fewer than the minimum of 8");
    expect_in("markdown", m, "matmul none (15 cases)"); /* 2/2^3 > 0.05 x 15/31: no change detectable */
    expect_in("markdown", m, "None: with so few rounds or samples the test cannot reach its significance level");
    free(m);
    /* 8 rounds (the minimum) of 25% noise: undecided cases alone make it inconclusive */
    write_rounds("ab_noisy", 8, 0.25, 0.02, NULL, 2, NULL);
    assert_int_equal(redecide("ab_noisy", NULL, NULL), HB_EXIT_INCONCLUSIVE);
    expect_inconclusive_outputs("ab_noisy", "hybench ab");
    json_t *j = load_json("ab_noisy", "g.json");
    json_t *fam = json_object_get(json_object_get(json_object_get(j, "summary"), "mde"), "matmul");
    /* 8 rounds, 25% noise: only a large change of the family (its 15 cases of 31 tested) would show; a
     * change of one case alone none at all (2/2^8 > 0.05/31) */
    double mde = json_real_value(json_object_get(fam, "mde"));
    assert_true(mde > 0.25 && isfinite(mde));
    size_t ci;
    json_t *cj;
    json_array_foreach(json_object_get(j, "cases"), ci, cj)
        if (json_is_true(json_object_get(cj, "undecided"))) assert_string_equal(json_string_value(json_object_get(cj, "mde")), "none");
    json_decref(j);
    /* a clear regression (10 of 30 cases 30% slower, 1% noise, 10 rounds): fail */
    for (int i = 0; i < 10; i++) slow[i] = 0.30;
    write_rounds("ab_fail", 10, 0.01, 0.005, slow, 3, NULL);
    assert_int_equal(redecide("ab_fail", NULL, NULL), HB_EXIT_REGRESSION);
    j = load_json("ab_fail", "g.json");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "summary"), "verdict")), "fail");
    size_t i;
    json_t *c;
    int nreg = 0;
    json_array_foreach(json_object_get(j, "cases"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "verdict")), "regression")) {
            nreg++;
            assert_true(atoi(strstr(json_string_value(json_object_get(c, "key")), "n=") + 2) < 10);
        }
    assert_int_equal(nreg, 10);
    json_decref(j);
    /* a regression wins over undecided cases: 3 noisy rounds, one case wrong in CUR */
    const char *st[NCASE] = {NULL};
    st[5] = "wrong";
    write_rounds("ab_wrong", 3, 0.20, 0.05, NULL, 4, st);
    assert_int_equal(redecide("ab_wrong", NULL, NULL), HB_EXIT_REGRESSION);
    j = load_json("ab_wrong", "g.json");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "summary"), "verdict")), "fail");
    assert_true(json_integer_value(json_object_get(json_object_get(j, "summary"), "undecided")) > 0);
    json_decref(j);
    /* no change, 0.3% noise, 12 rounds: every case cleared, pass */
    write_rounds("ab_pass", 12, 0.003, 0.002, NULL, 5, NULL);
    assert_int_equal(redecide("ab_pass", NULL, NULL), HB_EXIT_OK);
    snprintf(mdp, sizeof mdp, "%s/ab_pass/g.md", dir);
    m = hb_test_slurp(mdp);
    expect_in("markdown", m, "## hybench ab: **PASS**");
    free(m);
    j = load_json("ab_pass", "g.json");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "summary"), "verdict")), "pass");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "summary"), "undecided")), 0);
    /* 12 rounds: 2/2^12 < 0.05/31; the MDE is the 2% threshold plus what 0.3% noise adds */
    mde = json_real_value(json_object_get(json_object_get(json_object_get(json_object_get(j, "summary"), "mde"),
                                                          "matmul"), "mde"));
    assert_true(mde > 0.02 && mde < 0.04);
    json_decref(j);
}

/* compare with outputs into DIR/name/g.*; returns its exit status */
static int compare(const char *name, const char *a, const char *b, const char *extra)
{
    char d[256], md[300], js[300], ju[300];
    path_of(d, sizeof d, name);
    mkdir(d, 0755);
    snprintf(md, sizeof md, "%s/g.md", d);
    snprintf(js, sizeof js, "%s/g.json", d);
    snprintf(ju, sizeof ju, "%s/g.xml", d);
    char *v[12] = {"compare", (char *)a, (char *)b, "--markdown", md, "--json", js, "--junit", ju};
    int n = 9;
    if (extra) v[n++] = (char *)extra;
    v[n] = NULL;
    return hb_test_run_cmd(hb_cmd_compare, n, v, errbuf, sizeof errbuf, 0);
}

static void test_compare_three_outcomes(void **state)
{
    (void)state;
    char a[300], b[300];
    double med[NCASE], slow[NCASE];
    hb_rng g;
    hb_rng_seed(&g, 7);
    for (int i = 0; i < NCASE; i++) med[i] = 1e-4 * (1 + i % 5);
    /* 4 samples of 20% spread a side: undecided */
    path_of(a, sizeof a, "c_inc_a.jsonl");
    path_of(b, sizeof b, "c_inc_b.jsonl");
    write_results(a, &M1, 0, NCASE, med, 4, 0.20, &g, NULL);
    write_results(b, &M1, 0, NCASE, med, 4, 0.20, &g, NULL);
    assert_int_equal(compare("c_inc", a, b, NULL), HB_EXIT_INCONCLUSIVE);
    expect_inconclusive_outputs("c_inc", "hybench compare");
    /* 50 samples of 1%, 6 cases 30% slower: fail */
    for (int i = 0; i < NCASE; i++) slow[i] = med[i] * (i < 6 ? 1.3 : 1);
    path_of(a, sizeof a, "c_fail_a.jsonl");
    path_of(b, sizeof b, "c_fail_b.jsonl");
    write_results(a, &M1, 0, NCASE, med, 50, 0.01, &g, NULL);
    write_results(b, &M1, 0, NCASE, slow, 50, 0.01, &g, NULL);
    assert_int_equal(compare("c_fail", a, b, NULL), HB_EXIT_REGRESSION);
    json_t *j = load_json("c_fail", "g.json");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(j, "summary"), "counts"), "regression")), 6);
    json_decref(j);
    /* 50 samples of 0.5%, no change: pass, with the MDE of each family under 5% + its noise */
    path_of(a, sizeof a, "c_pass_a.jsonl");
    path_of(b, sizeof b, "c_pass_b.jsonl");
    write_results(a, &M1, 0, NCASE, med, 50, 0.005, &g, NULL);
    write_results(b, &M1, 0, NCASE, med, 50, 0.005, &g, NULL);
    assert_int_equal(compare("c_pass", a, b, NULL), HB_EXIT_OK);
    j = load_json("c_pass", "g.json");
    json_t *sum = json_object_get(j, "summary");
    assert_string_equal(json_string_value(json_object_get(sum, "verdict")), "pass");
    double mde = json_real_value(json_object_get(json_object_get(json_object_get(sum, "mde"), "matmul"), "mde"));
    assert_true(mde > 0.05 && mde < 0.06); /* the 5% threshold plus about 2.8 x 1.25 x 0.5% sqrt(2/50) */
    json_decref(j);
}

static void test_machines(void **state)
{
    (void)state;
    char a[300], a2[300], b[300], c[300], bdir[300], old[300], fa[17], fc[17], ta[4096], tc[4096];
    double med[NCASE];
    hb_rng g;
    hb_rng_seed(&g, 11);
    for (int i = 0; i < NCASE; i++) med[i] = 1e-4 * (1 + i % 5);
    path_of(a, sizeof a, "m_a.jsonl");
    path_of(a2, sizeof a2, "m_a2.jsonl");
    path_of(b, sizeof b, "m_b.jsonl");
    path_of(c, sizeof c, "m_c.jsonl");
    write_results(a, &M1, 0, NCASE, med, 40, 0.005, &g, NULL);
    write_results(a2, &M1, 0, NCASE, med, 40, 0.005, &g, NULL);
    write_results(b, &M1b, 0, NCASE, med, 40, 0.005, &g, NULL);
    write_results(c, &M2, 0, NCASE, med, 40, 0.005, &g, NULL);
    /* another host name, the same fingerprint: compared, with a note */
    assert_int_equal(compare("m_ab", a, b, NULL), HB_EXIT_OK);
    expect_in("renamed runner", errbuf, "note: host \"runner-17\" vs \"runner-42\"");
    /* another GPU: refused, both fingerprints and the backend named */
    hb_run r;
    char err[256];
    assert_int_equal(hb_run_load(a, &r, err, sizeof err), HB_OK);
    hb_machine_fingerprint(r.meta, r.backends, ta, sizeof ta, fa, sizeof fa);
    hb_run_free(&r);
    assert_int_equal(hb_run_load(c, &r, err, sizeof err), HB_OK);
    hb_machine_fingerprint(r.meta, r.backends, tc, sizeof tc, fc, sizeof fc);
    hb_run_free(&r);
    assert_string_not_equal(fa, fc);
    assert_int_equal(compare("m_ac", a, c, NULL), HB_EXIT_INCOMPARABLE);
    expect_in("other machine", errbuf, fa);
    expect_in("other machine", errbuf, fc);
    expect_in("other machine", errbuf, "cuda:0: cuda:0: driver_version=550 name=NVIDIA H100 80GB HBM3 vs cuda:0: "
                                       "driver_version=550 name=NVIDIA H200");
    expect_in("other machine", errbuf, "--cross-machine");
    assert_int_equal(compare("m_ac2", a, c, "--cross-machine"), HB_EXIT_OK);
    expect_in("cross-machine", errbuf, "compared anyway: --cross-machine");
    /* the baseline of a's machine is found from b (renamed runner), not from c (another machine) */
    path_of(bdir, sizeof bdir, "baselines");
    char *set[] = {"baseline", "set", a, "--dir", bdir, NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_baseline, 5, set, errbuf, sizeof errbuf, 0), HB_EXIT_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s/%s.jsonl", bdir, fa);
    assert_int_equal(access(want, R_OK), 0);
    char *cb[] = {"compare", "--baseline-dir", bdir, b, "--quiet", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_compare, 5, cb, errbuf, sizeof errbuf, 0), HB_EXIT_OK);
    char *cc[] = {"compare", "--baseline-dir", bdir, c, "--quiet", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_compare, 5, cc, errbuf, sizeof errbuf, 0), HB_EXIT_USAGE);
    expect_in("no baseline", errbuf, fc);
    char *sb[] = {"baseline", "show", "--dir", bdir, b, NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_baseline, 5, sb, errbuf, sizeof errbuf, 0), HB_EXIT_OK);
    char *sh[] = {"baseline", "show", "--dir", bdir, "--host", "runner-17", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_baseline, 6, sh, errbuf, sizeof errbuf, 0), HB_EXIT_OK);
    /* the former layout, DIR/<host>.jsonl: found by host with a notice; its machine still checked */
    path_of(old, sizeof old, "old_baselines");
    mkdir(old, 0755);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp %s %s/runner-17.jsonl", a, old);
    assert_int_equal(system(cmd), 0);
    char *co[] = {"compare", "--baseline-dir", old, a2, "--quiet", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_compare, 5, co, errbuf, sizeof errbuf, 0), HB_EXIT_OK);
    expect_in("former layout", errbuf, "notice: no baseline of machine");
    char *coc[] = {"compare", "--baseline-dir", old, c, "--quiet", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_compare, 5, coc, errbuf, sizeof errbuf, 0), HB_EXIT_INCOMPARABLE);
    /* ab: rounds of two machines refused, accepted with --cross-machine */
    char d[300];
    path_of(d, sizeof d, "ab_mach");
    mkdir(d, 0755);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/rounds && cp %s %s/rounds/base-r01.jsonl && cp %s %s/rounds/cur-r01.jsonl && "
                              "cp %s %s/rounds/base-r02.jsonl && cp %s %s/rounds/cur-r02.jsonl", d, a, d, c, d, a2, d, c, d);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(redecide("ab_mach", "--min-rounds", "2"), HB_EXIT_INCOMPARABLE);
    expect_in("ab other machine", errbuf, fc);
    int rc = redecide("ab_mach", "--cross-machine", NULL);
    assert_true(rc != HB_EXIT_INCOMPARABLE && rc != HB_EXIT_USAGE);
}

static void test_skipped_and_schema(void **state)
{
    (void)state;
    char a[300], b[300], x[300];
    double med[4] = {1e-4, 1e-4, 1e-4, 1e-4};
    const char *st[4] = {NULL, "skipped", NULL, "skipped"}, *st2[4] = {NULL, "skipped", "skipped", "failed"};
    hb_rng g;
    hb_rng_seed(&g, 13);
    path_of(a, sizeof a, "s_a.jsonl");
    path_of(b, sizeof b, "s_b.jsonl");
    write_results(a, &M1, 0, 4, med, 40, 0.005, &g, st);
    write_results(b, &M1, 0, 4, med, 40, 0.005, &g, st2);
    compare("s_ab", a, b, NULL);
    json_t *j = load_json("s_ab", "g.json");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(j, "cases"), i, c) {
        const char *k = json_string_value(json_object_get(c, "key")), *v = json_string_value(json_object_get(c, "verdict"));
        if (strstr(k, "n=1|")) assert_string_equal(v, "skipped");   /* skipped in both */
        if (strstr(k, "n=2|")) assert_string_equal(v, "lost");      /* ok, then skipped */
        if (strstr(k, "n=3|")) assert_string_equal(v, "still_bad"); /* skipped, then failed */
    }
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(j, "summary"), "counts"), "skipped")), 1);
    json_decref(j);
    /* a meta record without "schema": the file named, not "(0 vs 0)" */
    path_of(x, sizeof x, "noschema.jsonl");
    write_results(x, &M1, 1, 4, med, 40, 0.005, &g, NULL);
    char *v[] = {"compare", x, x, "--quiet", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_compare, 4, v, errbuf, sizeof errbuf, 0), HB_EXIT_INCOMPARABLE);
    char want[1024];
    snprintf(want, sizeof want, "%s: its meta record has no \"schema\"", x);
    expect_in("no schema", errbuf, want);
    if (strstr(errbuf, "0 vs 0")) fail_msg("still says 0 vs 0: %s", errbuf);
    char *v2[] = {"compare", a, x, "--quiet", NULL};
    assert_int_equal(hb_test_run_cmd(hb_cmd_compare, 4, v2, errbuf, sizeof errbuf, 0), HB_EXIT_INCOMPARABLE);
    snprintf(want, sizeof want, "%s: its meta record has no \"schema\" (%s says schema 1)", x, a);
    expect_in("no schema, one side", errbuf, want);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hb_verdict_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantile_and_mde),
        cmocka_unit_test(test_ab_mde_hand),
        cmocka_unit_test(test_ab_three_outcomes),
        cmocka_unit_test(test_compare_three_outcomes),
        cmocka_unit_test(test_machines),
        cmocka_unit_test(test_skipped_and_schema),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
