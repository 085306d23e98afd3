/*
 * test_modecheck.c - harness/analysis/modecheck.c: the mode-invariance check on synthetic case records.
 * Samples are drawn around known medians with a fixed seed: two medians 1.30 apart must be `moved`
 * with the ratio's CI covering 1.30; equal medians `invariant`; a 15% difference under wide noise
 * `noisy`. Outputs are poisoned with NaN first; wrong/skipped records never enter a pair; the
 * reference is f32, else the group's first mode; the summary counts and the stderr line; the whole
 * path through a results file (hb_mc_append_run) and the report's per-row flags.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/modecheck.h"
#include "report/report.h"
#include "results/results.h"
#include "core/rstats.h"

#define DNAN ((double)NAN)

/* n samples around median m: m * (1 + rel * N(0,1)), clipped at m/10 */
static json_t *samples(hb_rng *g, int n, double m, double rel)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        double x = m * (1 + rel * hb_rng_normal(g));
        if (x < m / 10) x = m / 10;
        json_array_append_new(a, json_real(x));
    }
    return a;
}

/* a case record with compute samples (n == 0: none, only phases.compute.median = m) */
static json_t *case_rec(hb_rng *g, const char *backend, const char *op, const char *shape, const char *mode, const char *status,
                        int n, double m, double rel)
{
    json_t *r = json_pack("{s:s,s:s,s:s,s:{s:i},s:s,s:s,s:s,s:s,s:s,s:s,s:{s:{s:f}}}", "type", "case", "backend", backend, "op", op,
                          "shape", "n", 4096, "shape_str", shape, "name", "t", "dtype", "f32", "route", "pageable", "mode", mode,
                          "status", status, "phases", "compute", "median", m);
    if (n) json_object_set_new(r, "samples", json_pack("{s:o}", "compute", samples(g, n, m, rel)));
    return r;
}

/* hb_mc_check over a JSON array of case records: the array read into a new hb_run (hb_run_index),
 * kept until the group's teardown because the set's pairs borrow its records. */
static hb_run *g_runs;
static size_t g_nruns;
static hb_status mc_check(json_t *cases, unsigned flags, hb_mc_set *out)
{
    hb_run *nr = realloc(g_runs, (g_nruns + 1) * sizeof *nr);
    assert_non_null(nr);
    g_runs = nr;
    hb_run *r = &g_runs[g_nruns++];
    memset(r, 0, sizeof *r);
    r->cases = json_incref(cases);
    assert_int_equal(hb_run_index(r), HB_OK);
    return hb_mc_check(r, flags, out);
}

static int free_runs(void **state)
{
    (void)state;
    for (size_t i = 0; i < g_nruns; i++) hb_run_free(&g_runs[i]);
    free(g_runs);
    g_runs = NULL;
    g_nruns = 0;
    return 0;
}

static const hb_mc_pair *find_pair(const hb_mc_set *s, const char *op, const char *mode)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].rec->op, op) && !strcmp(s->v[i].rec->mode, mode)) return &s->v[i];
    return NULL;
}

static void test_classify(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 7);
    double a[60], b[60];
    for (int i = 0; i < 60; i++) { a[i] = 1.00 * (1 + 0.02 * hb_rng_normal(&g)); b[i] = 1.30 * (1 + 0.02 * hb_rng_normal(&g)); }
    hb_mc_result r;
    memset(&r, 0xff, sizeof r); /* NaN in every double, garbage elsewhere */
    assert_int_equal(hb_mc_classify(a, 60, b, 60, 1, 0, &r), HB_OK);
    assert_int_equal(r.verdict, HB_MC_MOVED);
    assert_true(r.has_ci);
    assert_true(r.lo <= 1.30 && 1.30 <= r.hi);
    assert_true(r.lo > 1.0);
    assert_true(fabs(r.ratio - 1.30) < 0.02);
    assert_true(fabs(r.ref_median - 1.0) < 0.01 && fabs(r.median - 1.3) < 0.013);
    assert_int_equal(r.nref, 60);
    assert_int_equal(r.ncur, 60);
    /* the same seed gives the same CI */
    hb_mc_result r2;
    memset(&r2, 0xff, sizeof r2);
    assert_int_equal(hb_mc_classify(a, 60, b, 60, 1, 0, &r2), HB_OK);
    assert_true(r.lo == r2.lo && r.hi == r2.hi && r.ratio == r2.ratio);
    /* equal medians */
    assert_int_equal(hb_mc_classify(a, 60, a, 60, 2, 0, &r), HB_OK);
    assert_int_equal(r.verdict, HB_MC_INVARIANT);
    assert_true(r.ratio == 1.0);
    assert_true(r.has_ci && r.lo <= 1 && r.hi >= 1);
    /* HB_MC_CI_BEYOND_TOL: no bootstrap within 5%, the same verdicts and CI beyond */
    memset(&r, 0xff, sizeof r);
    assert_int_equal(hb_mc_classify(a, 60, a, 60, 2, HB_MC_CI_BEYOND_TOL, &r), HB_OK);
    assert_int_equal(r.verdict, HB_MC_INVARIANT);
    assert_false(r.has_ci);
    assert_true(isnan(r.lo) && isnan(r.hi) && r.ratio == 1.0);
    assert_int_equal(hb_mc_classify(a, 60, b, 60, 1, HB_MC_CI_BEYOND_TOL, &r2), HB_OK);
    assert_int_equal(r2.verdict, HB_MC_MOVED);
    assert_true(r2.has_ci && r2.lo <= 1.30 && 1.30 <= r2.hi);
    /* no CI with too few samples: beyond 5% is noisy, never moved */
    assert_int_equal(hb_mc_classify(a, 60, b, 2, 3, 0, &r), HB_OK);
    assert_false(r.has_ci);
    assert_true(isnan(r.lo) && isnan(r.hi));
    assert_int_equal(r.verdict, HB_MC_NOISY);
    /* non-finite samples dropped; errors leave NaN, not garbage */
    double c[4] = { 1.0, DNAN, INFINITY, 1.02 };
    assert_int_equal(hb_mc_classify(c, 4, c, 4, 4, 0, &r), HB_OK);
    assert_int_equal(r.nref, 2);
    double z[3] = { 0, 0, 0 };
    memset(&r, 0x7f, sizeof r);
    assert_int_equal(hb_mc_classify(z, 3, a, 60, 5, 0, &r), HB_EINVAL);
    assert_true(isnan(r.ratio) && isnan(r.lo) && isnan(r.hi));
    assert_int_equal(r.has_ci, 0);
    assert_int_equal(hb_mc_classify(a, 0, a, 60, 5, 0, &r), HB_EINVAL);
    assert_true(isnan(r.ratio));
}

/* the synthetic run of the set tests */
static json_t *synthetic_cases(void)
{
    hb_rng g;
    hb_rng_seed(&g, 99);
    json_t *cs = json_array();
    /* sum: convert 1.30x slower compute than f32 -> moved; convert-device equal -> invariant */
    json_array_append_new(cs, case_rec(&g, "cpu", "sum", "rows=4096 cols=1024", "convert", "ok", 40, 1.30e-3, 0.02));
    json_array_append_new(cs, case_rec(&g, "cpu", "sum", "rows=4096 cols=1024", "f32", "ok", 40, 1.00e-3, 0.02));
    json_array_append_new(cs, case_rec(&g, "cpu", "sum", "rows=4096 cols=1024", "convert-device", "ok", 40, 1.00e-3, 0.02));
    /* max: medians 15% apart, samples spread over a factor 3 -> noisy */
    json_t *mx = case_rec(&g, "cpu", "max", "rows=4096 cols=1024", "f32", "ok", 0, 1.00e-3, 0);
    json_object_set_new(mx, "samples", json_pack("{s:[f,f,f,f,f,f]}", "compute", 0.5e-3, 0.8e-3, 1.0e-3, 1.0e-3, 1.3e-3, 1.7e-3));
    json_array_append_new(cs, mx);
    mx = case_rec(&g, "cpu", "max", "rows=4096 cols=1024", "convert", "ok", 0, 1.15e-3, 0);
    json_object_set_new(mx, "samples", json_pack("{s:[f,f,f,f,f,f]}", "compute", 0.6e-3, 0.9e-3, 1.15e-3, 1.15e-3, 1.4e-3, 1.9e-3));
    json_array_append_new(cs, mx);
    /* matmul: f32 wrong -> reference is convert (the group's first ok mode); the wrong record is in no pair */
    json_array_append_new(cs, case_rec(&g, "cpu", "matmul", "m=64 n=64 k=64", "convert", "ok", 20, 2e-4, 0.01));
    json_array_append_new(cs, case_rec(&g, "cpu", "matmul", "m=64 n=64 k=64", "f32", "wrong", 20, 9e-4, 0.01));
    json_array_append_new(cs, case_rec(&g, "cpu", "matmul", "m=64 n=64 k=64", "resident", "ok", 20, 2e-4, 0.01));
    /* add: f32 skipped -> one ok mode, no pair */
    json_array_append_new(cs, case_rec(&g, "cpu", "add", "n=4096", "convert", "ok", 20, 2e-5, 0.01));
    json_array_append_new(cs, case_rec(&g, "cpu", "add", "n=4096", "f32", "skipped", 0, 0, 0));
    /* another backend, another shape: never grouped with cpu's */
    json_array_append_new(cs, case_rec(&g, "cpu-ref", "sum", "rows=4096 cols=1024", "convert", "ok", 0, 5e-3, 0));
    json_array_append_new(cs, case_rec(&g, "cpu", "sum", "rows=8 cols=8", "convert", "ok", 10, 1e-6, 0.01));
    /* chain: no samples, medians only -> ratio 1.5, no CI -> noisy */
    json_array_append_new(cs, case_rec(&g, "cpu-ref", "chain", "seq=1 kv_seq=512", "f32", "ok", 0, 2e-2, 0));
    json_array_append_new(cs, case_rec(&g, "cpu-ref", "chain", "seq=1 kv_seq=512", "convert", "ok", 0, 3e-2, 0));
    /* a non-case record and a case without mode are ignored */
    json_array_append_new(cs, json_pack("{s:s}", "type", "backend"));
    json_array_append_new(cs, json_pack("{s:s,s:s,s:s}", "type", "case", "backend", "cpu", "op", "add"));
    return cs;
}

static void test_set(void **state)
{
    (void)state;
    json_t *cs = synthetic_cases();
    hb_mc_set s;
    memset(&s, 0xff, sizeof s);
    assert_int_equal(mc_check(cs, 0, &s), HB_OK);
    assert_int_equal(s.n, 5);
    const hb_mc_pair *p = find_pair(&s, "sum", "convert");
    assert_non_null(p);
    assert_int_equal(p->r.verdict, HB_MC_MOVED);
    assert_true(p->r.lo <= 1.30 && 1.30 <= p->r.hi);
    assert_string_equal(p->ref->mode, "f32");
    assert_non_null(strstr(p->group, "cpu|sum|rows=4096 cols=1024|pageable|f32|t#1"));
    p = find_pair(&s, "sum", "convert-device");
    assert_non_null(p);
    assert_int_equal(p->r.verdict, HB_MC_INVARIANT);
    assert_true(fabs(p->r.ratio - 1) <= HB_MC_TOL);
    p = find_pair(&s, "max", "convert");
    assert_non_null(p);
    assert_int_equal(p->r.verdict, HB_MC_NOISY);
    assert_true(p->r.has_ci && p->r.lo < 1 && p->r.hi > 1 && fabs(p->r.ratio - 1) > HB_MC_TOL);
    p = find_pair(&s, "matmul", "resident");
    assert_non_null(p);
    assert_string_equal(p->ref->mode, "convert");
    assert_int_equal(p->r.verdict, HB_MC_INVARIANT);
    assert_null(find_pair(&s, "matmul", "f32"));
    assert_null(find_pair(&s, "add", "convert"));
    assert_null(find_pair(&s, "add", "f32"));
    p = find_pair(&s, "chain", "convert");
    assert_non_null(p);
    assert_false(p->r.has_ci);
    assert_true(fabs(p->r.ratio - 1.5) < 1e-12);
    assert_int_equal(p->r.verdict, HB_MC_NOISY);

    /* the record */
    json_t *rec = hb_mc_pair_json(find_pair(&s, "sum", "convert"));
    assert_string_equal(json_string_value(json_object_get(rec, "type")), "mode_check");
    assert_string_equal(json_string_value(json_object_get(rec, "verdict")), "moved");
    assert_string_equal(json_string_value(json_object_get(rec, "ref_mode")), "f32");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "shape"), "n")), 4096);
    json_t *ci = json_object_get(rec, "ci");
    assert_int_equal(json_array_size(ci), 2);
    assert_true(json_real_value(json_array_get(ci, 0)) <= 1.3 && json_real_value(json_array_get(ci, 1)) >= 1.3);
    json_decref(rec);
    rec = hb_mc_pair_json(find_pair(&s, "chain", "convert"));
    assert_true(json_is_null(json_object_get(rec, "ci")));
    json_decref(rec);

    /* the summary */
    json_t *inv = hb_mc_invariance_json(&s);
    json_t *all = json_object_get(inv, "overall"), *cpu = json_object_get(json_object_get(inv, "backends"), "cpu");
    assert_int_equal(json_integer_value(json_object_get(all, "pairs")), 5);
    assert_int_equal(json_integer_value(json_object_get(all, "within_5pct")), 2);
    assert_true(fabs(json_real_value(json_object_get(all, "within_5pct_share")) - 0.4) < 1e-12);
    assert_int_equal(json_integer_value(json_object_get(all, "moved")), 1);
    assert_int_equal(json_integer_value(json_object_get(all, "noisy")), 2);
    assert_int_equal(json_integer_value(json_object_get(all, "beyond_20pct")), 2); /* sum 1.3, chain 1.5 */
    assert_string_equal(json_string_value(json_object_get(json_object_get(all, "worst"), "op")), "chain");
    assert_null(json_object_get(json_object_get(all, "worst"), "type"));
    assert_int_equal(json_integer_value(json_object_get(cpu, "pairs")), 4);
    assert_string_equal(json_string_value(json_object_get(json_object_get(cpu, "worst"), "op")), "sum");
    json_decref(inv);
    char line[512];
    hb_mc_line(&s, "cpu", line, sizeof line);
    assert_non_null(strstr(line, "mode invariance (cpu): 2 of 4 pairs within 5%, 1 moved beyond its noise (worst: sum rows=4096 cols=1024 convert/f32 1.3"));
    hb_mc_set_free(&s);
    assert_null(s.v);
    assert_int_equal(s.n, 0);

    /* an empty run: no pair, an empty summary */
    json_t *none = json_array();
    assert_int_equal(mc_check(none, HB_MC_PARALLEL, &s), HB_OK);
    assert_int_equal(s.n, 0);
    inv = hb_mc_invariance_json(&s);
    assert_true(json_is_null(json_object_get(json_object_get(inv, "overall"), "worst")));
    assert_true(json_is_null(json_object_get(json_object_get(inv, "overall"), "within_5pct_share")));
    json_decref(inv);
    hb_mc_set_free(&s);
    json_decref(none);

    /* parallel gives the same as serial */
    hb_mc_set s1, s2;
    assert_int_equal(mc_check(cs, 0, &s1), HB_OK);
    assert_int_equal(mc_check(cs, HB_MC_PARALLEL, &s2), HB_OK);
    assert_int_equal(s1.n, s2.n);
    for (size_t i = 0; i < s1.n; i++) assert_true(s1.v[i].r.lo == s2.v[i].r.lo || (isnan(s1.v[i].r.lo) && isnan(s2.v[i].r.lo)));
    hb_mc_set_free(&s1);
    hb_mc_set_free(&s2);
    json_decref(cs);
}

/* Rounds: two modes sampled in the same rounds under a host state that switches between 1x and 2.2x in
 * stretches (random lengths): paired by round, a true ratio of 1 is invariant and one of 1.3 is moved
 * (its CI covering 1.3 in at least 16 of 20 trials); without interleaved_with, or with unequal counts, no round pairing. */
static json_t *round_rec(const char *mode, const double *st, int n, double m, double rel, hb_rng *g, int interleaved)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_real(m * st[i] * (1 + rel * hb_rng_normal(g))));
    json_t *r = json_pack("{s:s,s:s,s:s,s:{s:i},s:s,s:s,s:s,s:s,s:s,s:s,s:{s:{s:f}},s:{s:o}}", "type", "case", "backend", "cpu",
                          "op", "relu", "shape", "n", 4096, "shape_str", "n=4096", "name", "t", "dtype", "f32", "route", "pageable",
                          "mode", mode, "status", "ok", "phases", "compute", "median", m, "samples", "compute", a);
    if (interleaved) json_object_set_new(r, "interleaved_with", json_integer(1));
    return r;
}

static void test_rounds(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 7);
    int covered = 0;
    for (int trial = 0; trial < 20; trial++) {
        const int n = 21 + trial;
        double st[64];
        double s = 1;
        for (int i = 0; i < n; i++) {
            if (hb_rng_uniform(&g) < 0.2) s = s > 1.5 ? 1.0 : 2.2; /* stretches of about 5 rounds */
            st[i] = s;
        }
        for (int k = 0; k < 2; k++) {
            const double truth = k ? 1.3 : 1.0;
            json_t *cs = json_array();
            json_array_append_new(cs, round_rec("f32", st, n, 1e-4, 0.02, &g, 1));
            json_array_append_new(cs, round_rec("convert", st, n, truth * 1e-4, 0.02, &g, 1));
            hb_mc_set set;
            assert_int_equal(mc_check(cs, 0, &set), HB_OK);
            assert_int_equal(set.n, 1);
            const hb_mc_pair *p = &set.v[0];
            assert_int_equal(p->r.nround, n);
            /* the ratio is the median of the per-round ratios */
            const hb_rec_nums *a = &p->rec->samples[HB_PH_COMPUTE], *b = &p->ref->samples[HB_PH_COMPUTE];
            double q[64];
            for (int i = 0; i < n; i++) q[i] = a->v[i] / b->v[i];
            hb_rs_sort(q, (size_t)n);
            assert_true(fabs(p->r.ratio - hb_rs_median_sorted(q, (size_t)n)) < 1e-12);
            if (k == 0) assert_int_equal(p->r.verdict, HB_MC_INVARIANT);
            else {
                assert_int_equal(p->r.verdict, HB_MC_MOVED);
                assert_true(fabs(p->r.ratio - 1.3) < 0.05);
                covered += p->r.lo <= 1.3 && 1.3 <= p->r.hi;
            }
            json_t *rec = hb_mc_pair_json(p);
            assert_int_equal(json_integer_value(json_object_get(rec, "paired_rounds")), n);
            json_decref(rec);
            hb_mc_set_free(&set);
            /* not measured together: the medians' ratio */
            json_object_del(json_array_get(cs, 0), "interleaved_with");
            assert_int_equal(mc_check(cs, 0, &set), HB_OK);
            assert_int_equal(set.v[0].r.nround, 0);
            hb_mc_set_free(&set);
            /* unequal counts: the medians' ratio */
            json_object_set_new(json_array_get(cs, 0), "interleaved_with", json_integer(1));
            json_array_remove(json_object_get(json_object_get(json_array_get(cs, 1), "samples"), "compute"), 0);
            assert_int_equal(mc_check(cs, 0, &set), HB_OK);
            assert_int_equal(set.v[0].r.nround, 0);
            hb_mc_set_free(&set);
            json_decref(cs);
        }
    }
    assert_true(covered >= 16); /* a 95% interval: 19 of 20 expected */
}

/* duplicates: a case listed twice stays two groups, matched by occurrence */
static void test_occurrence(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 3);
    json_t *cs = json_array();
    json_array_append_new(cs, case_rec(&g, "cpu", "add", "n=8", "f32", "ok", 20, 1e-3, 0.01));
    json_array_append_new(cs, case_rec(&g, "cpu", "add", "n=8", "convert", "ok", 20, 1e-3, 0.01));
    json_array_append_new(cs, case_rec(&g, "cpu", "add", "n=8", "f32", "ok", 20, 2e-3, 0.01));
    json_array_append_new(cs, case_rec(&g, "cpu", "add", "n=8", "convert", "ok", 20, 2e-3, 0.01));
    hb_mc_set s;
    assert_int_equal(mc_check(cs, 0, &s), HB_OK);
    assert_int_equal(s.n, 2);
    for (size_t i = 0; i < 2; i++) assert_int_equal(s.v[i].r.verdict, HB_MC_INVARIANT);
    assert_non_null(strstr(s.v[1].group, "#2"));
    hb_mc_set_free(&s);
    json_decref(cs);
}

/* hb_mc_append_run on a written results file, then the report's rows and Q1 */
static void test_file_and_report(void **state)
{
    (void)state;
    char dir[] = "/tmp/hb_modecheck_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/r.jsonl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"type\":\"meta\",\"schema\":1,\"run_id\":\"x\",\"host\":\"h\"}\n");
    json_t *cs = synthetic_cases();
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        /* the report needs a total */
        json_object_set_new(json_object_get(c, "phases"), "total", json_pack("{s:f}", "median", 1e-3));
        char *s = json_dumps(c, JSON_COMPACT);
        fprintf(f, "%s\n", s);
        free(s);
    }
    fclose(f);
    json_decref(cs);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    json_t *inv = (json_t *)1;
    FILE *log = tmpfile();
    assert_int_equal(hb_mc_append_run(path, fd, &inv, log), HB_OK);
    close(fd);
    assert_non_null(inv);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(inv, "overall"), "moved")), 1);
    json_decref(inv);
    char buf[2048] = "";
    rewind(log);
    size_t nr = fread(buf, 1, sizeof buf - 1, log);
    buf[nr] = 0;
    fclose(log);
    assert_non_null(strstr(buf, "mode invariance (cpu): 2 of 4 pairs within 5%"));
    assert_non_null(strstr(buf, "mode invariance (cpu-ref): 0 of 1 pairs within 5%, 0 moved"));
    /* five mode_check records appended */
    f = fopen(path, "r");
    int nmc = 0;
    char line[8192];
    while (fgets(line, sizeof line, f)) nmc += strstr(line, "\"type\":\"mode_check\"") != NULL;
    fclose(f);
    assert_int_equal(nmc, 5);
    /* the report's rows: the convert sum row is moved, nothing else */
    hb_report rp;
    memset(&rp, 0, sizeof rp);
    char err[256];
    char *paths[] = { path };
    assert_int_equal(hb_report_load(&rp, paths, 1, err, sizeof err), HB_OK);
    hb_report_mc m;
    memset(&m, 0xff, sizeof m);
    assert_int_equal(hb_report_mc_compute(&rp, &m), HB_OK);
    int moved = 0;
    for (size_t k = 0; k < rp.nrows; k++) {
        if (m.moved[k]) {
            moved++;
            assert_string_equal(rp.rows[k].op, "sum");
            assert_string_equal(rp.rows[k].mode, "convert");
            assert_true(m.ratio[k] > 1.25 && m.ratio[k] < 1.35);
        }
        if (!strcmp(rp.rows[k].mode, "f32")) assert_true(isnan(m.ratio[k]));
    }
    assert_int_equal(moved, 1);
    hb_report_mc_free(&m);
    hb_report_free(&rp);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_occurrence),
        cmocka_unit_test(test_file_and_report),
    };
    return cmocka_run_group_tests(tests, NULL, free_runs);
}
