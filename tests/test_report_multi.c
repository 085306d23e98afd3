/*
 * test_report_multi.c - the report across several devices and runs (harness/report/across.c,
 * runs_header.c, the cards of q1_conversion.c ... q5_selection.c).
 *
 * - the aggregation: random per-device values (GPUs around a random level, some planted exceptions
 *   far from it, some devices n/a, a CPU, one or two runs) -> the ranges, the exceptions and the n/a
 *   devices that across.c reports equal the ones computed here; too many far values are a spread, not
 *   exceptions; the range text.
 * - the rendered report of a multi-GPU input. No multi-GPU results file is kept in the repository, so
 *   the test makes one: SYNTHETIC TEST DATA, written into the test's temporary directory from the
 *   single-GPU reference run (results/h100-reference.jsonl): its cuda:0 backend record, case and
 *   mode_check records cloned to cuda:1..3, every time scaled by a per-device factor with 2% noise per
 *   case, as two runs (host "synthetic-4gpu", commits 1111111 and 2222222); in run 2, cuda:3's f16 and
 *   bf16 cases are planted 2.5x slower so that one device is an exception. The meta record says so
 *   ("synthetic", the command line). HB_TEST_KEEP=1 keeps the files (their directory is printed), to
 *   look at the report or render it again: `hybench report DIR/multi1.jsonl DIR/multi2.jsonl`;
 *   `test_report_multi --write-fixture SRC OUT RUN` writes one run and exits (check_report_html.sh).
 *   Checked: the runs table opens the page and report.md (one row per run) and the metadata paragraph
 *   is gone; Q2's card is one sentence naming 8 GPUs, with the planted device as its only exception,
 *   and its per-device lines in a table behind it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/across.h"
#include "report/report.h"
#include "report_test.h"
#include "test_files.h"

#define GPU_REF "results/h100-reference.jsonl"

static double urand(double lo, double hi) { return lo + (hi - lo) * ((double)rand() / RAND_MAX); }

/* ------------------------------------------------------------------ the aggregation ---- */

/* A report of nruns runs, each with ngpu GPUs (cuda:0..), a cpu and an OpenCL CPU device; no rows. */
static void fake_report(hb_report *rp, hb_rrun *runs, hb_rdev *devs, int nruns, int ngpu)
{
    memset(rp, 0, sizeof *rp);
    memset(runs, 0, sizeof *runs * (size_t)nruns);
    rp->runs = runs;
    rp->nruns = nruns;
    rp->devs = devs;
    static char names[16][16];
    for (int r = 0; r < nruns; r++) {
        snprintf(runs[r].label, sizeof runs[r].label, "box@%d%d%d%d%d%d%d", r + 1, r + 1, r + 1, r + 1, r + 1, r + 1, r + 1);
        for (int g = 0; g < ngpu + 2; g++) {
            hb_rdev *d = &devs[rp->ndevs++];
            memset(d, 0, sizeof *d);
            d->run = r;
            if (g < ngpu) {
                snprintf(names[g], sizeof names[g], "cuda:%d", g);
                d->backend = names[g];
                snprintf(d->type, sizeof d->type, "cuda");
                d->description = "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)";
            } else if (g == ngpu) {
                d->backend = "cpu";
                snprintf(d->type, sizeof d->type, "cpu");
                d->description = "AMD EPYC, 16 cores / OpenBLAS 0.3.21 (Zen)";
                d->host_memory = d->is_cpu_device = 1;
            } else {
                d->backend = "opencl:0:0";
                snprintf(d->type, sizeof d->type, "opencl");
                d->description = "pthread-AMD EPYC (Portable Computing Language, driver 3.1)";
                d->is_cpu_device = 1;
            }
            d->available = 1;
            d->reason = "";
            if (nruns == 1) snprintf(d->id, sizeof d->id, "%s", d->backend);
            else snprintf(d->id, sizeof d->id, "%s@%s", d->backend, runs[r].label);
        }
    }
}

static json_t *group_named(json_t *j, const char *name)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(j, "groups"), i, g)
        if (!strcmp(js(g, "name"), name)) return g;
    return NULL;
}

static void test_across_random(void **state)
{
    (void)state;
    unsigned seed = getenv("HB_TEST_SEED") ? (unsigned)strtoul(getenv("HB_TEST_SEED"), NULL, 10) : (unsigned)time(NULL);
    fprintf(stderr, "seed %u (HB_TEST_SEED repeats it)\n", seed);
    srand(seed);
    hb_rrun runs[2];
    hb_rdev devs[2 * 10];
    for (int iter = 0; iter < 300; iter++) {
        int nruns = 1 + rand() % 2, ngpu = 2 + rand() % 7, nd;
        hb_report rp;
        fake_report(&rp, runs, devs, nruns, ngpu);
        nd = rp.ndevs;
        double base = urand(20, 80), v[20];
        int na[20] = { 0 }, exc[20] = { 0 }, gpu[20] = { 0 };
        int ngv = 0;
        for (int d = 0; d < nd; d++) gpu[d] = !strcmp(devs[d].type, "cuda");
        /* GPUs: near the level, one n/a now and then */
        for (int d = 0; d < nd; d++) {
            if (!gpu[d]) continue;
            na[d] = rand() % 10 == 0;
            v[d] = na[d] ? DNAN : base + urand(-4, 4);
            ngv += !na[d];
        }
        /* planted exceptions: at most a third of the GPU values, beyond both tolerances (the median
         * lies within 4 of the level, the others within 8 of the median) */
        int want = ngv >= 3 ? rand() % (ngv / 3 + 1) : 0, planted = 0;
        while (planted < want) {
            int d = rand() % nd;
            if (!gpu[d] || na[d] || exc[d]) continue;
            exc[d] = 1;
            v[d] = base + (rand() % 2 ? 1 : -1) * (fmax(HB_ACROSS_TOL_PCT, HB_ACROSS_REL * base) + 6 + urand(0, 10));
            planted++;
        }
        int cpu_na = rand() % 3 == 0;
        hb_across a;
        hb_across_init(&a, HB_ACROSS_TOL_PCT);
        for (int d = 0; d < nd; d++) {
            if (gpu[d]) hb_across_dev(&a, &rp, d, v[d], "no f16 case");
            else if (!strcmp(devs[d].type, "cpu")) { v[d] = cpu_na ? DNAN : urand(0, 100); na[d] = cpu_na; hb_across_dev(&a, &rp, d, v[d], "no f16"); }
            else { v[d] = DNAN; na[d] = 1; hb_across_dev(&a, &rp, d, v[d], "no case"); }
        }
        json_t *j = hb_across_json(&a);
        assert_non_null(j);
        /* the GPU group: range over the others, the planted exceptions, no other */
        double lo = INFINITY, hi = -INFINITY;
        for (int d = 0; d < nd; d++)
            if (gpu[d] && !na[d] && !exc[d]) { lo = fmin(lo, v[d]); hi = fmax(hi, v[d]); }
        int gpu_runs = 0;
        for (int r = 0; r < nruns; r++)
            for (int d = 0; d < nd; d++)
                if (gpu[d] && !na[d] && devs[d].run == r) { gpu_runs++; break; }
        char name[128];
        if (ngv == 0) { json_decref(j); hb_across_free(&a); continue; } /* every GPU n/a: nothing to range */
        if (ngv == 1) {
            for (int d = 0; d < nd; d++) if (gpu[d] && !na[d]) snprintf(name, sizeof name, "%s", devs[d].id);
        } else {
            const char *b0 = NULL;
            int same = 1;
            for (int d = 0; d < nd; d++)
                if (gpu[d] && !na[d]) { if (!b0) b0 = devs[d].backend; else if (strcmp(b0, devs[d].backend)) same = 0; }
            if (same) snprintf(name, sizeof name, "%s in 2 runs", b0); /* one device in both runs */
            else snprintf(name, sizeof name, "%d GPUs%s", ngv, gpu_runs > 1 ? " in 2 runs" : "");
        }
        json_t *g = group_named(j, name);
        if (!g) { fprintf(stderr, "iter %d: no group %s in %s\n", iter, name, json_dumps(j, 0)); fail(); }
        assert_int_equal((int)json_integer_value(json_object_get(g, "devices")), ngv);
        assert_close(lo, jv(g, "lo"), 1e-12);
        assert_close(hi, jv(g, "hi"), 1e-12);
        assert_int_equal((int)json_array_size(json_object_get(g, "exceptions")), planted);
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(g, "exceptions"), i, e) {
            int found = 0;
            for (int d = 0; d < nd; d++)
                if (exc[d] && !strcmp(devs[d].id, js(e, "label"))) { found = 1; assert_close(v[d], jv(e, "value"), 1e-12); }
            assert_true(found);
        }
        /* the cpu: one device, or the same device in two runs */
        if (!cpu_na) {
            json_t *cg = group_named(j, nruns == 2 ? "cpu in 2 runs" : "cpu");
            assert_non_null(cg);
            double clo = INFINITY, chi = -INFINITY;
            for (int d = 0; d < nd; d++) if (!strcmp(devs[d].type, "cpu")) { clo = fmin(clo, v[d]); chi = fmax(chi, v[d]); }
            assert_close(clo, jv(cg, "lo"), 1e-12);
            assert_close(chi, jv(cg, "hi"), 1e-12);
            assert_int_equal((int)json_array_size(json_object_get(cg, "exceptions")), 0);
        }
        /* every n/a device listed once with its reason */
        int nna = 0;
        for (int d = 0; d < nd; d++) nna += na[d];
        assert_int_equal((int)json_array_size(json_object_get(j, "na")), nna);
        json_array_foreach(json_object_get(j, "na"), i, e) {
            int found = 0;
            for (int d = 0; d < nd; d++) if (na[d] && !strcmp(devs[d].id, js(e, "label"))) found = 1;
            assert_true(found);
        }
        /* the phrase: each exception named once with "at", the n/a part once, the GPUs counted */
        char text[2000];
        hb_across_text(&a, hb_report_fmt_pct, text, sizeof text);
        for (int d = 0; d < nd; d++)
            if (exc[d]) assert_int_equal(count_substr(text, hb_report_fmt("%s at ", devs[d].id)), 1);
        assert_int_equal(count_substr(text, "n/a on "), 1);
        assert_non_null(strstr(text, name));
        if (nruns == 2) assert_non_null(strstr(text, "opencl:0:0 in 2 runs (no case)")); /* a whole group n/a: named once */
        json_decref(j);
        hb_across_free(&a);
    }
}

/* far values that are more than a third of the group are its spread, not exceptions */
static void test_across_spread(void **state)
{
    (void)state;
    hb_rrun runs[1];
    hb_rdev devs[8];
    hb_report rp;
    fake_report(&rp, runs, devs, 1, 6);
    srand((unsigned)time(NULL));
    hb_across a;
    hb_across_init(&a, HB_ACROSS_TOL_PCT);
    double lo = INFINITY, hi = -INFINITY;
    for (int d = 0; d < 6; d++) {
        double x = d < 3 ? urand(40, 45) : urand(80, 90);
        lo = fmin(lo, x);
        hi = fmax(hi, x);
        hb_across_dev(&a, &rp, d, x, NULL);
    }
    json_t *j = hb_across_json(&a), *g = group_named(j, "6 GPUs");
    assert_non_null(g);
    assert_int_equal((int)json_array_size(json_object_get(g, "exceptions")), 0);
    assert_close(lo, jv(g, "lo"), 1e-12);
    assert_close(hi, jv(g, "hi"), 1e-12);
    char text[600];
    hb_across_text(&a, hb_report_fmt_pct, text, sizeof text);
    assert_string_equal(text, hb_report_fmt("%s\u2013%s on 6 GPUs", hb_report_fmt("%.0f", lo), hb_report_fmt_pct(hi)));
    json_decref(j);
    hb_across_free(&a);
    /* a negative end is written "lo to hi"; equal ends once */
    hb_across_init(&a, HB_ACROSS_TOL_PCT);
    hb_across_dev(&a, &rp, 0, -5, NULL);
    hb_across_dev(&a, &rp, 1, 3, NULL);
    hb_across_dev(&a, &rp, 6, 50.2, NULL);
    hb_across_dev(&a, &rp, 7, DNAN, "no f16");
    hb_across_text(&a, hb_report_fmt_pct, text, sizeof text);
    assert_string_equal(text, "-5.0% to 3.0% on 2 GPUs, 50% on cpu; n/a on opencl:0:0 (no f16)");
    hb_across_free(&a);
}

/* ------------------------------------------------------------------ the synthetic multi-GPU input ---- */

static void scale_stats(json_t *o, double f)
{
    static const char *const k[] = { "min", "max", "mean", "median", "p10", "p90", "mad", "stddev", "ci_lo", "ci_hi" };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        json_t *v = json_object_get(o, k[i]);
        if (json_is_number(v)) json_object_set_new(o, k[i], json_real(json_number_value(v) * f));
    }
}

static void scale_array(json_t *a, double f)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (json_is_number(v)) json_array_set_new(a, i, json_real(json_number_value(v) * f));
}

/* every time of case record c times f, every rate divided by it */
static void scale_case(json_t *c, double f)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(c, "phases"), k, v) scale_stats(v, f);
    json_object_foreach(json_object_get(c, "samples"), k, v) scale_array(v, f);
    scale_array(json_object_get(c, "window_medians"), f);
    scale_stats(json_object_get(c, "host_compute"), f);
    static const char *const rates[] = { "gflops", "gbps", "gflops_total", "gbps_total", "fraction" };
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        json_t *r = json_object_get(c, rates[i]);
        if (json_is_number(r)) json_object_set_new(c, rates[i], json_real(json_number_value(r) / f));
    }
}

static void put_line(FILE *out, json_t *rec)
{
    char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_non_null(s);
    fprintf(out, "%s\n", s);
    free(s);
}

/* Write run `run` (1 or 2) of the synthetic 4-GPU machine from the single-GPU results file src (see
 * the top of this file). */
static void write_fixture(const char *src, const char *dst, int run)
{
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    assert_non_null(in);
    assert_non_null(out);
    char *line = NULL;
    size_t cap = 0;
    json_t *counts = json_object(), *per_backend = json_object();
    while (getline(&line, &cap, in) > 0) {
        json_error_t e;
        json_t *r = json_loads(line, 0, &e);
        assert_non_null(r);
        const char *type = js(r, "type"), *bk = js(r, "backend");
        if (!strcmp(type, "meta")) {
            json_object_set_new(r, "host", json_string("synthetic-4gpu"));
            json_object_set_new(r, "run_id", json_string(run == 1 ? "synthetic-4gpu-run1" : "synthetic-4gpu-run2"));
            json_object_set_new(r, "git_commit", json_string(run == 1 ? "1111111111111111111111111111111111111111" : "2222222222222222222222222222222222222222"));
            json_object_set_new(r, "date", json_string(run == 1 ? "2026-11-27T01:00:00Z" : "2026-11-27T02:00:00Z"));
            json_object_set_new(r, "command_line", json_string(hb_report_fmt("SYNTHETIC TEST DATA (tests/test_report_multi.c): %s", js(r, "command_line"))));
            json_object_set_new(r, "synthetic", json_string("synthetic test data, not a measurement: the single-GPU reference run with its cuda:0 "
                                                            "cloned to cuda:1..3 and its times perturbed (tests/test_report_multi.c)"));
            put_line(out, r);
        } else if (!strcmp(type, "backend") && !strcmp(bk, "cuda:0")) {
            for (int g = 0; g < 4; g++) {
                json_t *c = json_deep_copy(r);
                json_object_set_new(c, "backend", json_string(hb_report_fmt("cuda:%d", g)));
                json_t *info = json_object_get(c, "info");
                if (info) json_object_set_new(info, "pci_bus_id", json_string(hb_report_fmt("0000:00:%02d", 6 + g)));
                put_line(out, c);
                json_decref(c);
            }
        } else if ((!strcmp(type, "case") || !strcmp(type, "mode_check")) && !strcmp(bk, "cuda:0")) {
            for (int g = 0; g < 4; g++) {
                json_t *c = json_deep_copy(r);
                const char *name = hb_report_fmt("cuda:%d", g);
                json_object_set_new(c, "backend", json_string(name));
                const char *key = js(c, "key"), *p = strstr(key, "|cuda:0|");
                if (p) json_object_set_new(c, "key", json_string(hb_report_fmt("%.*s|%s|%s", (int)(p - key), key, name, p + 8)));
                if (!strcmp(type, "case")) {
                    double f = (1.0 + 0.015 * g + 0.01 * (run - 1)) * (1.0 + urand(-0.02, 0.02));
                    const char *dt = js(c, "dtype");
                    if (run == 2 && g == 3 && (!strcmp(dt, "f16") || !strcmp(dt, "bf16"))) f *= 2.5; /* the planted exception */
                    scale_case(c, f);
                    const char *st = js(c, "status");
                    json_object_set_new(counts, st, json_integer(json_integer_value(json_object_get(counts, st)) + 1));
                    json_object_set_new(per_backend, name, json_integer(json_integer_value(json_object_get(per_backend, name)) + 1));
                }
                put_line(out, c);
                json_decref(c);
            }
        } else if (!strcmp(type, "end")) {
            const char *k;
            json_t *v, *bo = json_object();
            json_int_t total = 0;
            json_object_foreach(per_backend, k, v) {
                total += json_integer_value(v);
                json_object_set_new(bo, k, json_pack("{s:I}", "cases", json_integer_value(v)));
            }
            json_object_set_new(r, "cases", json_integer(total));
            static const char *const sts[] = { "ok", "wrong", "failed", "skipped", "crashed", "no_resource", "timed_out" };
            for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++)
                json_object_set_new(r, sts[i], json_integer(json_integer_value(json_object_get(counts, sts[i]))));
            json_object_set_new(r, "backends", bo);
            put_line(out, r);
        } else {
            if (!strcmp(type, "case")) {
                double f = 1.0 + urand(-0.02, 0.02);
                scale_case(r, f);
                const char *st = js(r, "status");
                json_object_set_new(counts, st, json_integer(json_integer_value(json_object_get(counts, st)) + 1));
                json_object_set_new(per_backend, bk, json_integer(json_integer_value(json_object_get(per_backend, bk)) + 1));
            }
            put_line(out, r);
        }
        json_decref(r);
    }
    free(line);
    json_decref(counts);
    json_decref(per_backend);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* the text of the element that starts at `from` in html up to `end` (a new string) */
static char *between(const char *html, const char *from, const char *end)
{
    const char *a = strstr(html, from);
    if (!a) return NULL;
    const char *b = strstr(a + strlen(from), end);
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *s = malloc(n + 1);
    memcpy(s, a, n);
    s[n] = 0;
    return s;
}

static void test_multi_gpu_report(void **state)
{
    (void)state;
    if (access(GPU_REF, R_OK) != 0) {
        fprintf(stderr, "SKIP: %s is absent (make test unpacks it from tests/data/h100-reference.jsonl.gz)\n", GPU_REF);
        skip();
    }
    srand((unsigned)time(NULL));
    char f1[400], f2[400], dir[400];
    snprintf(f1, sizeof f1, "%s/multi1.jsonl", g_tmp);
    snprintf(f2, sizeof f2, "%s/multi2.jsonl", g_tmp);
    snprintf(dir, sizeof dir, "%s/multi", g_tmp);
    write_fixture(GPU_REF, f1, 1);
    write_fixture(GPU_REF, f2, 2);
    poison_dir(dir);
    const char *files[] = { f1, f2 };
    assert_int_equal(run_report(dir, "multi", 2, files, "--svg-only"), HB_EXIT_OK);

    json_t *s = load_json(dir, "summary.json");
    assert_int_equal(json_array_size(json_object_get(s, "inputs")), 2);
    /* Q2: one finding per dtype; f16's names the 8 GPUs with the planted device as its one exception */
    json_t *q2 = json_array_get(json_object_get(s, "verdicts"), 1), *f16 = NULL, *f;
    size_t i;
    json_array_foreach(json_object_get(q2, "findings"), i, f) if (!strcmp(js(f, "what"), "f16")) f16 = f;
    assert_non_null(f16);
    json_t *g = group_named(f16, "8 GPUs in 2 runs");
    assert_non_null(g);
    assert_int_equal((int)json_array_size(json_object_get(g, "exceptions")), 1);
    const char *exc = js(json_array_get(json_object_get(g, "exceptions"), 0), "label");
    assert_non_null(strstr(exc, "cuda:3@"));
    assert_non_null(strstr(exc, "2222222"));
    /* the card's sentence: one, not one per GPU; every GPU id at most once (the exception) */
    const char *text = js(q2, "text");
    assert_int_equal(count_substr(text, ". "), 0);
    assert_int_equal(count_substr(text, "cuda:"), count_substr(text, hb_report_fmt("%s at ", exc))); /* f16 and bf16 */
    assert_non_null(strstr(text, "8 GPUs in 2 runs"));
    assert_int_equal((int)json_array_size(json_object_get(json_object_get(q2, "details"), "rows")), 2 * 4 * 3);
    /* every card speaks of the GPUs together */
    json_t *card;
    json_array_foreach(json_object_get(s, "verdicts"), i, card) {
        assert_true(count_substr(js(card, "text"), "cuda:0@") <= 1);
        if (i < 4) assert_non_null(strstr(js(card, "text"), "8 GPUs in 2 runs"));
    }
    /* Q1 and Q3's badge: the devices' one verdict, or "differs by backend" when they differ (the
     * first verdict is kept however many devices follow) */
    static const char *const qs[] = { "q1", "q3" };
    for (int k = 0; k < 2; k++) {
        json_t *vs = json_object_get(json_object_get(s, qs[k]), "verdicts"), *x;
        const char *first = js(json_array_get(vs, 0), "verdict");
        int same = 1;
        json_array_foreach(vs, i, x) if (strcmp(js(x, "verdict"), first)) same = 0;
        assert_true(json_array_size(vs) >= 10);
        assert_string_equal(js(json_array_get(json_object_get(s, "verdicts"), k ? 2 : 0), "badge"), same ? first : "differs by backend");
    }
    json_decref(s);

    char p[512];
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = hb_test_slurp(p);
    assert_non_null(html);
    /* the runs table before the summary, one row per run, the metadata paragraph gone */
    char *top = between(html, "<h1", "id=\"summary\"");
    assert_non_null(top);
    assert_non_null(strstr(top, "<th>run id</th>"));
    assert_int_equal(count_substr(top, "<tr>"), 3); /* the header and two runs */
    assert_non_null(strstr(top, "synthetic-4gpu-run1"));
    assert_non_null(strstr(top, "synthetic-4gpu-run2"));
    assert_non_null(strstr(top, "4x NVIDIA H100 80GB HBM3 (cuda)"));
    assert_non_null(strstr(top, "SYNTHETIC TEST DATA"));
    assert_null(strstr(top, "From 2 results files"));
    assert_null(strstr(top, "; machine "));
    assert_true(strlen(top) < 12000);
    free(top);
    /* five cards, each with its table one click away; the Q2 card has one paragraph */
    assert_int_equal(count_substr(html, "<div class=\"card "), 5);
    char *c2 = between(html, "id=\"card-q2\"", "<div class=\"card ");
    assert_non_null(c2);
    assert_int_equal(count_substr(c2, "<p>"), 1);
    assert_int_equal(count_substr(c2, "<details>"), 1);
    free(c2);
    free(html);
    snprintf(p, sizeof p, "%s/report.md", dir);
    char *md = hb_test_slurp(p);
    assert_non_null(md);
    assert_non_null(strstr(md, "| run | run id | date | host | CPU | devices | software | commit | cases |"));
    char *q2md = between(md, "**Q2 Lower precision: ", "**Q3 ");
    assert_non_null(q2md);
    assert_non_null(strstr(q2md, "| backend | vs dtype |"));
    assert_int_equal(count_substr(q2md, "\n| cuda:"), 2 * 4 * 3);
    free(q2md);
    free(md);
}

int main(int argc, char **argv)
{
    /* `test_report_multi --write-fixture SRC OUT RUN`: write one synthetic run (1 or 2) and exit, for
     * tests/check_report_html.sh to load its report in Chromium */
    if (argc == 5 && !strcmp(argv[1], "--write-fixture")) {
        srand(42);
        write_fixture(argv[2], argv[3], atoi(argv[4]) == 2 ? 2 : 1);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_across_random),
        cmocka_unit_test(test_across_spread),
        cmocka_unit_test(test_multi_gpu_report),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
