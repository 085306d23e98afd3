/*
 * test_report.c - `hybench report` (harness/report*.c).
 *
 * - helpers: the median against a brute-force definition on random data, the number formatters.
 * - known answers: a results file written here from random base times with exact built-in ratios
 *   (f32 saves 20% / 40% / 28%, memory 25%, f32 = 50% of f16, transfers 30% of the time, a
 *   cpu -> opencl crossover, a `wrong` case that is the fastest and must not count); every answer in
 *   summary.json and routing.json is compared with the value computed here.
 * - the checked-in real CPU results (tests/data/cpu_small.jsonl) and, when present, the GPU
 *   reference run (results/h100-reference.jsonl): every Q1 and Q3 pair and every Q5 entry of the
 *   summary is recomputed independently from the results file (results/results.h only), the number of
 *   matched pairs is counted independently, every listed plot must exist as SVG, PNG, script and
 *   data and be inlined in index.html.
 * - several inputs are kept apart (device ids labelled by host), bad inputs give the usage status.
 * Output directories are poisoned before each run (stale summary.json, index.html and SVG with
 * garbage) so a report that does not rewrite them fails.
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

#include "cli/commands.h"
#include "report/report.h"
#include "results/results.h"
#include "report_test.h"
#include "test_files.h"

#define CPU_SMALL "tests/data/cpu_small.jsonl"
#define GPU_REF "results/h100-reference.jsonl"
#define DNAN ((double)NAN) /* NAN is a float constant */

/* ------------------------------------------------------------------ helpers ---- */

static double brute_median(const double *v, size_t n)
{
    /* the element(s) with as many values below as above, by counting */
    double lo = DNAN, hi = DNAN;
    for (size_t i = 0; i < n; i++) {
        size_t below = 0, equal = 0;
        for (size_t j = 0; j < n; j++) { below += v[j] < v[i]; equal += v[j] == v[i]; }
        if (n % 2) { if (below <= n / 2 && below + equal > n / 2) return v[i]; }
        else {
            if (below <= n / 2 - 1 && below + equal > n / 2 - 1) lo = v[i];
            if (below <= n / 2 && below + equal > n / 2) hi = v[i];
        }
    }
    return 0.5 * (lo + hi);
}

static void test_median_and_format(void **state)
{
    (void)state;
    srand(7);
    for (int t = 0; t < 200; t++) {
        size_t n = 1 + (size_t)(rand() % 40);
        double v[64], w[64];
        for (size_t i = 0; i < n; i++) v[i] = w[i] = (double)(rand() % 20) - 5.0 + (rand() % 2 ? 0.5 : 0.0);
        double m = hb_report_median(w, n);
        assert_close(brute_median(v, n), m, 0);
    }
    double nothing[1] = { DNAN };
    assert_true(isnan(hb_report_median(nothing, 0)));
    assert_string_equal(hb_report_fmt_time(1.5e-3), "1.5 ms");
    assert_string_equal(hb_report_fmt_time(2.5e-6), "2.5 µs");
    assert_string_equal(hb_report_fmt_time(3e-8), "30 ns");
    assert_string_equal(hb_report_fmt_count(1048576), "1Mi");
    assert_string_equal(hb_report_fmt_count(1000), "1000");
    assert_string_equal(hb_report_fmt_bytes(1536), "1.5 KiB");
    assert_string_equal(hb_report_fmt_pct(12.34), "12%");
    assert_string_equal(hb_report_fmt_pct(1.234), "1.2%");
    assert_string_equal(hb_report_fmt_pct(DNAN), "n/a");
}

/* ------------------------------------------------------------------ known answers ---- */

static json_t *stats(double median)
{
    return json_pack("{s:i,s:f,s:f,s:f,s:f}", "n", 10, "median", median, "min", median * 0.98, "max", median * 1.05, "mean", median * 1.01);
}

/* one case record; phases as fractions of total */
static void put_case(FILE *f, const char *backend, const char *op, const char *family, const char *bound, double size,
                     const char *mode, const char *route, const char *dtype, const char *status, const char *name, const char *model,
                     double weight, double total, double f_conv, double f_xfer, double compute, double mem)
{
    char shape[64], key[256];
    snprintf(shape, sizeof shape, "n=%.0f", size);
    snprintf(key, sizeof key, "%s|%s|%s|%s|%s|%s", op, shape, backend, mode, route, dtype);
    json_t *ph = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "convert_in", stats(total * f_conv / 2), "h2d", stats(total * f_xfer / 2),
                           "compute", stats(compute), "d2h", stats(total * f_xfer / 2), "convert_out", stats(total * f_conv / 2), "total", stats(total));
    json_t *r = json_pack("{s:s,s:i,s:s,s:s,s:s,s:s,s:{s:f},s:s,s:f,s:s,s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:f,s:f,s:s,s:o,s:f,s:f,s:{s:f,s:f,s:f}}",
                          "type", "case", "schema", 1, "key", key, "backend", backend, "op", op, "family", family, "shape", "n", size,
                          "shape_str", shape, "size", size, "name", name, "source", "test:1", "model", model, "weight", weight,
                          "dtype", dtype, "mode", mode, "route", route, "status", status, "flops", size * 64, "bytes", size * 12, "bound", bound,
                          "phases", ph, "gflops", size * 64 / compute / 1e9, "fraction", 0.5,
                          "mem", "host_bytes", mem * 0.75, "device_bytes", mem * 0.25, "peak_rss_bytes", 1e8);
    char *s = json_dumps(r, JSON_COMPACT);
    fprintf(f, "%s\n", s);
    free(s);
    json_decref(r);
}

static double urand(double lo, double hi) { return lo + (hi - lo) * ((double)rand() / RAND_MAX); }

/* times of the known-answer file, kept for the expected Q5 figures */
typedef struct ka { double size, cpu, ocl; } ka;

static void write_known(const char *path, ka *tab, int *ntab, double *loss_pct)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"type\":\"meta\",\"schema\":1,\"run_id\":\"20250101-000000-kbox\",\"host\":\"kbox\",\"git_commit\":\"0123456789abcdef\","
               "\"date\":\"2025-01-01T00:00:00Z\",\"cpu\":{\"model\":\"Test CPU\",\"cores\":2}}\n");
    fprintf(f, "{\"type\":\"backend\",\"schema\":1,\"backend\":\"cpu-ref\",\"available\":true,\"host_memory\":true,\"description\":\"ref\"}\n");
    fprintf(f, "{\"type\":\"backend\",\"schema\":1,\"backend\":\"cpu\",\"available\":true,\"host_memory\":true,\"description\":\"Test CPU\","
               "\"ceilings\":[{\"name\":\"copy_gbps\",\"value\":10,\"unit\":\"GB/s\"},{\"name\":\"peak_gflops_f32\",\"value\":100,\"unit\":\"GFLOP/s\"}]}\n");
    fprintf(f, "{\"type\":\"backend\",\"schema\":1,\"backend\":\"opencl:0:0\",\"available\":true,\"host_memory\":false,\"description\":\"Test GPU\","
               "\"ceilings\":[{\"name\":\"copy_gbps\",\"value\":5,\"unit\":\"GB/s\"},{\"name\":\"peak_gflops_f32\",\"value\":10,\"unit\":\"GFLOP/s\"},"
               "{\"name\":\"h2d_gbps_pageable\",\"value\":5,\"unit\":\"GB/s\"}]}\n");
    fprintf(f, "{\"type\":\"backend\",\"schema\":1,\"backend\":\"cuda\",\"available\":false,\"host_memory\":false,\"reason\":\"no driver\"}\n");
    srand(12345);
    double sh = 0, sb = 0;
    int n = 0;
    for (int p = 10; p <= 20; p += 2) {
        double size = ldexp(1, p);
        double cpu = urand(1e-5, 1e-3) * size / 1024;
        double ocl = cpu * (p < 16 ? 2.0 : 0.5); /* crossover between 2^14 and 2^16 */
        tab[n].size = size; tab[n].cpu = cpu; tab[n].ocl = ocl;
        n++;
        /* f32 and convert: cpu saves 20%, opencl 40%; memory saves 25% */
        put_case(f, "cpu", "add", "elementwise", "memory", size, "f32", "pageable", "f32", "ok", "", "", 1, cpu, 0, 0, cpu * 0.9, 1000 * size * 0.75);
        put_case(f, "cpu", "add", "elementwise", "memory", size, "convert", "pageable", "f32", "ok", "", "", 1, cpu / 0.8, 0.2, 0, cpu * 0.9, 1000 * size);
        put_case(f, "opencl:0:0", "add", "elementwise", "memory", size, "f32", "pageable", "f32", "ok", "", "", 1, ocl, 0, 0.3, ocl * 0.5, 1000 * size * 0.75);
        put_case(f, "opencl:0:0", "add", "elementwise", "memory", size, "convert", "pageable", "f32", "ok", "", "", 1, ocl / 0.6, 0.4, 0.18, ocl * 0.5, 1000 * size);
        put_case(f, "cpu-ref", "add", "elementwise", "memory", size, "f32", "pageable", "f32", "ok", "", "", 1, cpu * 0.01, 0, 0, cpu * 0.01, 1);
        /* the fastest of all at the largest size, but wrong: must not count */
        if (p == 20) put_case(f, "cpu", "add", "elementwise", "memory", size, "f32", "pinned", "f32", "wrong", "", "", 1, cpu * 1e-3, 0, 0, cpu * 1e-3, 1);
        /* plan: size * 4 bytes < 1e6 -> cpu, else the GPU chain (opencl first, no cuda) */
        double th = size * 4 < 1e6 ? cpu : ocl, tb = cpu < ocl ? cpu : ocl;
        sh += th;
        sb += tb;
    }
    /* Q2 counts only cases compute-bound as measured (intensity 64/12 FLOP/byte above the ridge point
     * 10/5 and at least 25% of the 10 GFLOP/s peak): a small bmm at 0.07 GFLOP/s, where f16 gains
     * nothing (launch overhead), must not dilute the answer */
    put_case(f, "opencl:0:0", "bmm", "matmul", "compute", 1024, "f32", "pageable", "f32", "ok", "", "", 1, 2e-3, 0, 0.3, 1e-3, 1);
    put_case(f, "opencl:0:0", "bmm", "matmul", "compute", 1024, "f32", "pageable", "f16", "ok", "", "", 1, 2e-3, 0, 0.3, 1e-3, 1);
    /* matmul on opencl: f16 compute twice as fast -> f32 = 50% of f16 (the largest at >= 7 GFLOP/s is
     * compute-bound whatever urand draws) */
    for (int p = 12; p <= 16; p += 2) {
        double size = ldexp(1, p), t = urand(1e-4, 1e-3);
        put_case(f, "opencl:0:0", "matmul", "matmul", "compute", size, "f32", "pageable", "f32", "ok", "", "", 1, t, 0, 0.3, t * 0.6, 1);
        put_case(f, "opencl:0:0", "matmul", "matmul", "compute", size, "f32", "pageable", "f16", "ok", "", "", 1, t * 0.7, 0, 0.3, t * 0.3, 1);
    }
    /* the transformer block: opencl saves 28%; model total = 22 x layer */
    put_case(f, "opencl:0:0", "chain:tinyllama-layer", "chain", "compute", 5632, "f32", "pageable", "f32", "ok", "decode", "tinyllama", 22, 0.072, 0, 0.3, 0.04, 3000);
    put_case(f, "opencl:0:0", "chain:tinyllama-layer", "chain", "compute", 5632, "convert", "pageable", "f32", "ok", "decode", "tinyllama", 22, 0.1, 0.25, 0.2, 0.04, 4000);
    put_case(f, "opencl:0:0", "chain:tinyllama-layer", "chain", "compute", 5632, "resident", "pageable", "f32", "ok", "decode", "tinyllama", 22, 0.05, 0, 0.01, 0.04, 2000);
    fprintf(f, "{\"type\":\"end\",\"schema\":1,\"cases\":1}\n");
    fclose(f);
    *ntab = n;
    *loss_pct = 100.0 * (sh / sb - 1.0);
}

static json_t *find_obj(json_t *arr, const char *k1, const char *v1, const char *k2, const char *v2)
{
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
        if (!strcmp(js(o, k1), v1) && (!k2 || !strcmp(js(o, k2), v2))) return o;
    return NULL;
}

static void test_known_answers(void **state)
{
    (void)state;
    char path[400], dir[400];
    snprintf(path, sizeof path, "%s/known.jsonl", g_tmp);
    snprintf(dir, sizeof dir, "%s/known", g_tmp);
    ka tab[16];
    int ntab = 0;
    double loss = DNAN;
    write_known(path, tab, &ntab, &loss);
    poison_dir(dir);
    const char *files[] = { path };
    assert_int_equal(run_report(dir, "known", 1, files, NULL), HB_EXIT_OK);
    json_t *s = load_json(dir, "summary.json");

    /* Q1 */
    json_t *q1 = json_object_get(s, "q1");
    assert_true(json_is_true(json_object_get(q1, "answered")));
    assert_int_equal(json_array_size(json_object_get(q1, "pairs")), 2 * ntab + 1); /* cpu, opencl (cpu-ref has no convert), the chain */
    json_t *c = find_obj(json_object_get(q1, "by_class"), "device", "cpu", "class", "memory");
    assert_non_null(c);
    assert_close(20.0, jv(c, "median_saving_pct"), 1e-9);
    assert_non_null(strstr(js(c, "verdict"), "inside the 15-25% success band"));
    assert_string_equal(js(c, "tone"), "good");
    c = find_obj(json_object_get(q1, "by_class"), "device", "opencl:0:0", "class", "memory");
    assert_close(40.0, jv(c, "median_saving_pct"), 1e-9);
    assert_non_null(strstr(js(c, "verdict"), "above the plan's 10-30%"));
    assert_close(40.0, jv(c, "median_convert_share_pct"), 1e-9);
    c = find_obj(json_object_get(q1, "chain"), "device", "opencl:0:0", "name", "decode");
    assert_close(28.0, jv(c, "saving_pct"), 1e-9);
    assert_non_null(strstr(js(c, "verdict"), "inside 10-30%, above the 15-25% success band"));
    /* the card of opencl uses the chain, cpu's every op */
    c = find_obj(json_object_get(q1, "verdicts"), "device", "opencl:0:0", NULL, NULL);
    assert_string_equal(js(c, "basis"), "chain");
    assert_close(28.0, jv(c, "median_saving_pct"), 1e-9); /* its one chain, a decode layer */
    assert_close(28.0, jv(c, "decode_saving_pct"), 1e-9);
    assert_true(json_is_null(json_object_get(c, "prefill_saving_pct")));
    c = find_obj(json_object_get(q1, "verdicts"), "device", "cpu", NULL, NULL);
    assert_string_equal(js(c, "basis"), "all ops");
    assert_close(20.0, jv(c, "median_saving_pct"), 1e-9);

    /* Q2 */
    json_t *q2 = json_object_get(s, "q2");
    assert_true(json_is_true(json_object_get(q2, "answered")));
    c = find_obj(json_object_get(q2, "by_device"), "device", "opencl:0:0", "dtype", "f16");
    assert_non_null(c);
    assert_close(50.0, jv(c, "median_compute_bound_pct"), 1e-9);
    assert_true(jv(c, "n_compute_bound") >= 1);
    assert_close(4.0, jv(c, "n"), 0);
    assert_true(jv(c, "n_compute_bound") <= 3);             /* the bmm is not among them */
    assert_true(jv(c, "median_other_pct") > 50.0);           /* it stays with the others (100%) */
    assert_string_equal(js(c, "tone"), "bad");

    /* Q3 */
    json_t *q3 = json_object_get(s, "q3");
    c = find_obj(json_object_get(q3, "by_class"), "device", "cpu", "class", "memory");
    assert_close(25.0, jv(c, "median_saving_pct"), 1e-9);
    assert_non_null(strstr(js(c, "verdict"), "inside the 20-30% target"));
    c = find_obj(json_object_get(q3, "chain"), "device", "opencl:0:0", "name", "decode");
    assert_close(25.0, jv(c, "saving_pct"), 1e-9);
    assert_close(2000.0, jv(c, "mem_resident_bytes"), 1e-12);

    /* Q4: h2d + d2h = 30% of the f32 time on opencl; resident layer saves 1 - 0.05/0.072 */
    json_t *q4 = json_object_get(s, "q4");
    assert_true(json_is_true(json_object_get(q4, "answered")));
    size_t i;
    json_t *o;
    int seen = 0;
    json_array_foreach(json_object_get(q4, "share"), i, o) {
        if (strcmp(js(o, "device"), "opencl:0:0") || strcmp(js(o, "mode"), "f32")) continue;
        assert_close(30.0, jv(o, "median_share_pct"), 1e-9);
        seen = 1;
    }
    assert_true(seen);
    c = find_obj(json_object_get(q4, "resident"), "device", "opencl:0:0", "name", "decode");
    assert_close(100.0 * (1.0 - 0.05 / 0.072), jv(c, "saving_pct"), 1e-9);

    /* Q5 */
    json_t *q5 = json_object_get(s, "q5");
    assert_true(json_is_true(json_object_get(q5, "answered")));
    json_t *m = json_array_get(json_object_get(q5, "machines"), 0);
    json_t *cand = json_object_get(m, "candidates");
    assert_int_equal(json_array_size(cand), 2); /* cpu-ref is never a candidate */
    json_array_foreach(json_object_get(m, "entries"), i, o) {
        if (strcmp(js(o, "op"), "add")) continue;
        double size = jv(o, "size");
        int k;
        for (k = 0; k < ntab && tab[k].size != size; k++) {}
        assert_true(k < ntab);
        const char *want = tab[k].cpu < tab[k].ocl ? "cpu" : "opencl:0:0";
        assert_string_equal(js(o, "best"), want);
        assert_close(tab[k].cpu < tab[k].ocl ? tab[k].cpu : tab[k].ocl, jv(o, "best_s"), 1e-12);
        assert_null(json_object_get(json_object_get(o, "times_s"), "cpu-ref"));
        assert_string_equal(js(o, "heuristic"), size * 4 < 1e6 ? "cpu" : "opencl:0:0");
    }
    json_t *x = json_array_get(json_object_get(m, "crossovers"), 0);
    assert_non_null(x);
    assert_string_equal(js(x, "op"), "add");
    assert_string_equal(js(x, "from"), "cpu");
    assert_string_equal(js(x, "to"), "opencl:0:0");
    assert_close(ldexp(1, 15), jv(x, "at_size"), 1e-12);
    json_t *per = find_obj(json_object_get(m, "per_op"), "op", "add", NULL, NULL);
    assert_close(loss, jv(per, "loss_pct"), 1e-9);
    json_t *r = load_json(dir, "routing.json");
    json_t *ranges = json_object_get(json_object_get(json_array_get(json_object_get(r, "machines"), 0), "ops"), "add");
    assert_int_equal(json_array_size(ranges), 2);
    assert_string_equal(js(json_array_get(ranges, 0), "backend"), "cpu");
    assert_close(0, jv(json_array_get(ranges, 0), "size_min"), 0);
    assert_close(ldexp(1, 15), jv(json_array_get(ranges, 0), "size_max"), 1e-12);
    assert_string_equal(js(json_array_get(ranges, 1), "backend"), "opencl:0:0");
    assert_close(ldexp(1, 15), jv(json_array_get(ranges, 1), "size_min"), 1e-12);
    assert_true(json_is_null(json_object_get(json_array_get(ranges, 1), "size_max")));
    json_decref(r);
    /* the unavailable backend is named with the run that would answer */
    json_t *miss = find_obj(json_object_get(q5, "missing"), "backend", "cuda", NULL, NULL);
    assert_non_null(miss);
    assert_non_null(strstr(js(miss, "which_run"), "NVIDIA"));

    /* model totals: 22 layers x the layer's median */
    json_t *mt = NULL;
    json_array_foreach(json_object_get(s, "models"), i, o)
        if (!strcmp(js(o, "model"), "tinyllama") && !strcmp(js(o, "mode"), "f32")) mt = o;
    assert_non_null(mt);
    assert_close(22 * 0.072, jv(mt, "time_s"), 1e-12);
    assert_true(json_is_true(json_object_get(mt, "complete")));

    /* the five cards, Q2 verdict below the plan */
    json_t *cards = json_object_get(s, "verdicts");
    assert_int_equal(json_array_size(cards), 5);
    assert_string_equal(js(json_array_get(cards, 1), "tone"), "bad");

    /* poisoned files were rewritten */
    char p[512];
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = hb_test_slurp(p);
    assert_non_null(html);
    assert_null(strstr(html, "POISON"));
    assert_int_equal(count_substr(html, "<svg"), (int)json_array_size(json_object_get(s, "plots")));
    free(html);
    snprintf(p, sizeof p, "%s/op_add.svg", dir);
    html = hb_test_slurp(p);
    assert_non_null(html);
    assert_null(strstr(html, "POISON"));
    free(html);
    json_decref(s);
}

/* ------------------------------------------------------------------ real results ---- */

/* the case record of run r with this key and name (first one, as the report takes it) */
static json_t *find_case(const hb_run *r, const char *key, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(r->cases, i, c)
        if (!strcmp(js(c, "key"), key) && !strcmp(js(c, "name"), name)) return c;
    return NULL;
}

static int case_ok(json_t *c)
{
    double t = hb_case_phase(c, "total", "median");
    return !strcmp(js(c, "status"), "ok") && isfinite(t) && t > 0;
}

/* key with its mode field (4th of op|shape|backend|mode|route|dtype) replaced */
static int key_with_mode(const char *key, const char *mode, char *out, size_t len)
{
    const char *p = key;
    for (int k = 0; k < 3; k++) { p = strchr(p, '|'); if (!p) return -1; p++; }
    const char *q = strchr(p, '|');
    if (!q) return -1;
    snprintf(out, len, "%.*s%s%s", (int)(p - key), key, mode, q);
    return 0;
}

static double mem_of(json_t *c)
{
    json_t *m = json_object_get(c, "mem");
    double h = jv(m, "host_bytes"), d = jv(m, "device_bytes");
    if (isnan(h) && isnan(d)) return DNAN;
    return (isnan(h) ? 0 : h) + (isnan(d) ? 0 : d);
}

/* Recompute the report's answers from one results file (a single input). */
static void check_against_results(const char *results, const char *dir)
{
    hb_run run;
    char err[512];
    assert_int_equal(hb_run_load(results, &run, err, sizeof err), HB_OK);
    json_t *s = load_json(dir, "summary.json");

    /* Q1: every pair recomputed; the number of pairs counted independently */
    json_t *pairs = json_object_get(json_object_get(s, "q1"), "pairs");
    size_t i;
    json_t *p, *c;
    json_array_foreach(pairs, i, p) {
        json_t *a = find_case(&run, js(p, "key_convert"), js(p, "name")), *b = find_case(&run, js(p, "key_f32"), js(p, "name"));
        assert_non_null(a);
        assert_non_null(b);
        assert_true(case_ok(a) && case_ok(b));
        assert_string_equal(js(a, "mode"), "convert");
        assert_string_equal(js(b, "mode"), "f32");
        double want = 100.0 * (1.0 - hb_case_phase(b, "total", "median") / hb_case_phase(a, "total", "median"));
        assert_close(want, jv(p, "saving_pct"), 1e-9);
        double cs = 100.0 * (hb_case_phase(a, "convert_in", "median") + hb_case_phase(a, "convert_out", "median")) / hb_case_phase(a, "total", "median");
        assert_close(cs, jv(p, "convert_share_pct"), 1e-9);
    }
    size_t want_pairs = 0;
    json_t *seen = json_object();
    json_array_foreach(run.cases, i, c) {
        if (strcmp(js(c, "mode"), "f32") || !case_ok(c)) continue;
        char ck[600], dedup[700];
        if (key_with_mode(js(c, "key"), "convert", ck, sizeof ck)) continue;
        snprintf(dedup, sizeof dedup, "%s#%s", ck, js(c, "name"));
        if (json_object_get(seen, dedup)) continue;
        json_t *a = find_case(&run, ck, js(c, "name"));
        if (a && case_ok(a)) { want_pairs++; json_object_set_new(seen, dedup, json_true()); }
    }
    json_decref(seen);
    assert_int_equal(json_array_size(pairs), want_pairs);
    assert_true(want_pairs > 0);

    /* Q3 */
    json_array_foreach(json_object_get(json_object_get(s, "q3"), "pairs"), i, p) {
        json_t *a = find_case(&run, js(p, "key_convert"), js(p, "name")), *b = find_case(&run, js(p, "key_f32"), js(p, "name"));
        assert_non_null(a);
        assert_non_null(b);
        assert_close(100.0 * (1.0 - mem_of(b) / mem_of(a)), jv(p, "saving_pct"), 1e-9);
    }

    /* Q5: each entry's times are the fastest ok route of each backend (mode f32, dtype f32); the
     * best is the minimum; cpu-ref never appears; a wrong case never counts */
    json_t *m = json_array_get(json_object_get(json_object_get(s, "q5"), "machines"), 0);
    assert_non_null(m);
    size_t checked = 0;
    json_array_foreach(json_object_get(m, "entries"), i, p) {
        json_t *times = json_object_get(p, "times_s");
        const char *bk;
        json_t *tv;
        double best = INFINITY;
        const char *bestname = "";
        json_object_foreach(times, bk, tv) {
            assert_string_not_equal(bk, "cpu-ref");
            double want = INFINITY;
            size_t k;
            json_t *cc;
            json_array_foreach(run.cases, k, cc) {
                if (strcmp(js(cc, "backend"), bk) || strcmp(js(cc, "op"), js(p, "op")) || strcmp(js(cc, "shape_str"), js(p, "shape")) ||
                    strcmp(js(cc, "mode"), "f32") || strcmp(js(cc, "dtype"), "f32") || !case_ok(cc)) continue;
                double t = hb_case_phase(cc, "total", "median");
                if (t < want) want = t;
            }
            assert_close(want, json_number_value(tv), 1e-12);
            if (want < best) { best = want; bestname = bk; }
        }
        assert_string_equal(js(p, "best"), bestname);
        assert_close(best, jv(p, "best_s"), 1e-12);
        checked++;
    }
    assert_true(checked > 0);

    /* routing.json: contiguous ranges per op */
    json_t *r = load_json(dir, "routing.json");
    json_t *ops = json_object_get(json_array_get(json_object_get(r, "machines"), 0), "ops");
    assert_true(json_object_size(ops) > 0);
    const char *op;
    json_t *ranges;
    json_object_foreach(ops, op, ranges) {
        size_t k;
        json_t *rg;
        double prev = 0;
        json_array_foreach(ranges, k, rg) {
            assert_close(prev, jv(rg, "size_min"), 1e-12);
            if (k + 1 < json_array_size(ranges)) { prev = jv(rg, "size_max"); assert_true(prev > jv(rg, "size_min")); }
            else assert_true(json_is_null(json_object_get(rg, "size_max")));
        }
    }
    json_decref(r);

    /* every listed plot drawn and inlined */
    json_t *plots = json_object_get(s, "plots");
    assert_true(json_array_size(plots) >= 5);
    json_array_foreach(plots, i, p) {
        char f[600];
        assert_true(json_is_true(json_object_get(p, "ok")));
        static const char *const fields[] = { "svg", "png", "script", "data" };
        for (int k = 0; k < 4; k++) {
            snprintf(f, sizeof f, "%s/%s", dir, js(p, fields[k]));
            if (file_size(f) <= 0) fprintf(stderr, "missing %s\n", f);
            assert_true(file_size(f) > 0);
        }
    }
    char f[600];
    snprintf(f, sizeof f, "%s/index.html", dir);
    char *html = hb_test_slurp(f);
    assert_non_null(html);
    assert_int_equal(count_substr(html, "<svg"), (int)json_array_size(plots));
    assert_null(strstr(html, "POISON"));
    assert_null(strstr(html, "<script"));
    free(html);
    snprintf(f, sizeof f, "%s/report.md", dir);
    char *md = hb_test_slurp(f);
    assert_non_null(md);
    for (int q = 1; q <= 5; q++) { char h[16]; snprintf(h, sizeof h, "## Q%d ", q); assert_non_null(strstr(md, h)); }
    free(md);
    json_decref(s);
    hb_run_free(&run);
}

static void test_cpu_small(void **state)
{
    (void)state;
    if (access(CPU_SMALL, R_OK) != 0) { fprintf(stderr, "%s missing: run the tests from the repository root\n", CPU_SMALL); fail(); }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/cpu_small", g_tmp);
    poison_dir(dir);
    const char *files[] = { CPU_SMALL };
    assert_int_equal(run_report(dir, "cpu_small", 1, files, NULL), HB_EXIT_OK);
    check_against_results(CPU_SMALL, dir);
    /* a CPU-only run cannot answer Q2 and says which run would */
    json_t *s = load_json(dir, "summary.json");
    json_t *q2 = json_object_get(s, "q2");
    if (!json_is_true(json_object_get(q2, "answered"))) {
        json_t *card = json_array_get(json_object_get(s, "verdicts"), 1);
        assert_string_equal(js(card, "badge"), "unanswered");
        assert_non_null(strstr(js(card, "text"), "h100-reference"));
    }
    json_decref(s);
}

static void test_gpu_reference(void **state)
{
    (void)state;
    if (access(GPU_REF, R_OK) != 0) {
        fprintf(stderr, "SKIP: %s is absent (the GPU reference run from tools/gpu_run.md)\n", GPU_REF);
        skip();
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/h100", g_tmp);
    poison_dir(dir);
    const char *files[] = { GPU_REF };
    assert_int_equal(run_report(dir, "h100", 1, files, "--svg-only") == HB_EXIT_OK, 1);
    /* --svg-only: the PNG check of check_against_results would fail; check the rest here */
    json_t *s = load_json(dir, "summary.json");
    assert_true(json_is_true(json_object_get(json_object_get(s, "q1"), "answered")));
    assert_true(json_is_true(json_object_get(json_object_get(s, "q2"), "answered")));
    assert_true(json_is_true(json_object_get(json_object_get(s, "q4"), "answered")));
    size_t i;
    json_t *d;
    int cuda = 0;
    json_array_foreach(json_object_get(s, "devices"), i, d)
        if (!strncmp(js(d, "backend"), "cuda", 4) && json_is_true(json_object_get(d, "available"))) cuda = 1;
    assert_true(cuda);
    json_decref(s);
    /* full recomputation with PNGs */
    assert_int_equal(run_report(dir, "h100", 1, files, NULL), HB_EXIT_OK);
    check_against_results(GPU_REF, dir);
}

static void test_two_inputs_kept_apart(void **state)
{
    (void)state;
    /* the known-answer file under a second host name: both runs' devices appear, labelled */
    char a[400], b[400], dir[400];
    snprintf(a, sizeof a, "%s/known.jsonl", g_tmp);
    snprintf(b, sizeof b, "%s/known2.jsonl", g_tmp);
    snprintf(dir, sizeof dir, "%s/two", g_tmp);
    ka tab[16];
    int n;
    double loss;
    write_known(a, tab, &n, &loss);
    char *text = hb_test_slurp(a);
    assert_non_null(text);
    char *h = strstr(text, "\"host\":\"kbox\"");
    assert_non_null(h);
    memcpy(h, "\"host\":\"kbo2\"", 13);
    FILE *f = fopen(b, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    const char *files[] = { a, b };
    assert_int_equal(run_report(dir, "two", 2, files, "--svg-only"), HB_EXIT_OK);
    json_t *s = load_json(dir, "summary.json");
    assert_int_equal(json_array_size(json_object_get(s, "inputs")), 2);
    assert_non_null(find_obj(json_object_get(s, "devices"), "id", "cpu@kbox", NULL, NULL));
    assert_non_null(find_obj(json_object_get(s, "devices"), "id", "cpu@kbo2", NULL, NULL));
    json_t *ms = json_object_get(json_object_get(s, "q5"), "machines");
    assert_int_equal(json_array_size(ms), 2);
    /* each machine's candidates are its own */
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_array_get(ms, 1), "candidates"), i, c) assert_non_null(strstr(json_string_value(c), "@kbo2"));
    json_t *cls = find_obj(json_object_get(json_object_get(s, "q1"), "by_class"), "device", "cpu@kbo2", "class", "memory");
    assert_close(20.0, jv(cls, "median_saving_pct"), 1e-9);
    json_decref(s);
}

static void test_bad_input(void **state)
{
    (void)state;
    char dir[400], bad[400];
    snprintf(dir, sizeof dir, "%s/bad", g_tmp);
    const char *missing[] = { "/nonexistent/results.jsonl" };
    assert_int_equal(run_report(dir, "bad", 1, missing, NULL), HB_EXIT_USAGE);
    snprintf(bad, sizeof bad, "%s/bad.jsonl", g_tmp);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"type\":\"meta\",\"schema\":1}\nthis is not json\n{\"type\":\"end\"}\n", f);
    fclose(f);
    const char *files[] = { bad };
    assert_int_equal(run_report(dir, "bad", 1, files, NULL), HB_EXIT_USAGE);
    char *argv[] = { (char *)"report", NULL };
    assert_int_equal(hb_cmd_report(1, argv), HB_EXIT_USAGE);
    char *argv2[] = { (char *)"report", (char *)"--jobs", (char *)"0", (char *)bad, NULL };
    assert_int_equal(hb_cmd_report(4, argv2), HB_EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_and_format),
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_two_inputs_kept_apart),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_cpu_small),
        cmocka_unit_test(test_gpu_reference),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
