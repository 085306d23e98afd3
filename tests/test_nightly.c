/*
 * test_nightly.c - what a nightly job runs besides compare, on synthetic results files
 * (compare_fixture.h; fixed seeds): the Google Benchmark export (results/gbench.c: its JSON read back,
 * a duplicate case refused), baselines (analysis/baseline.c: set, show, refused for a wrong case,
 * compare --baseline-dir) and the nightly trend (analysis/trend.c: a planted step found where it was
 * planted, flags in the data files, SVG plots, bad input refused).
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
#include "compare_fixture.h"
#include "test_files.h"

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

static int setup(void **state)
{
    (void)state;
    return compare_fixture_setup("nightly");
}

static int teardown(void **state)
{
    (void)state;
    return compare_fixture_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gbench),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_trend),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
