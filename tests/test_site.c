/* test_site.c - `hybench publish`'s pure parts (report/site.h: a machine's readable name, run ids as
 * path components, a case's points and changes, the nights as JSON), what it reads from the store
 * (results/store.h: hb_store_series_ci, hb_store_run_records on a SQLite store made here) and the
 * refusals of hb_site_prepare (a missing libjs-dygraphs file: HB_EXIT_NO_PACKAGE; a folder that cannot
 * be made: HB_EXIT_IO). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "report/site.h"

static void test_machine_name(void **state)
{
    (void)state;
    json_t *meta = json_pack("{s:s, s:{s:s, s:i}}", "run_id", "r1", "cpu", "model", "AMD EPYC 9654", "cores", 96);
    json_t *be = json_pack("[{s:s, s:b, s:s}, {s:s, s:b, s:s}, {s:s, s:b, s:s}, {s:s, s:b, s:s}, {s:s, s:b}]",
                           "backend", "cpu", "available", 1, "description", "AMD EPYC, 96 cores",
                           "backend", "cpu-ref", "available", 1, "description", "f64 reference",
                           "backend", "cuda:0", "available", 1, "description", "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)",
                           "backend", "opencl:0:0", "available", 0, "description", "not here",
                           "backend", "metal", "available", 1);
    char buf[256];
    assert_string_equal(hb_site_machine_name(meta, be, "gpu-7", buf, sizeof buf),
                        "host gpu-7; CPU AMD EPYC 9654 (96 cores); devices: NVIDIA H100 80GB HBM3, metal");
    assert_string_equal(hb_site_machine_name(NULL, NULL, NULL, buf, sizeof buf), "host ?; no other devices");
    char small[12];
    hb_site_machine_name(meta, be, "gpu-7", small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1); /* truncated, terminated */
    assert_string_equal(small, "host gpu-7;");
    json_decref(meta);
    json_decref(be);
}

static void test_run_id_ok(void **state)
{
    (void)state;
    assert_true(hb_site_run_id_ok("20261011-020000-vm"));
    assert_true(hb_site_run_id_ok("a.b_c-D9"));
    assert_false(hb_site_run_id_ok(NULL));
    assert_false(hb_site_run_id_ok(""));
    assert_false(hb_site_run_id_ok(".."));
    assert_false(hb_site_run_id_ok(".hidden"));
    assert_false(hb_site_run_id_ok("a/b"));
    assert_false(hb_site_run_id_ok("a b"));
    assert_false(hb_site_run_id_ok("<script>"));
    char longid[200];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = 0;
    assert_false(hb_site_run_id_ok(longid));
}

/* a series of 5 nights by 2 cases, by hand */
static hb_store_run runs5[5];
static hb_store_case cases2[2] = { { 11, "add|n=1|cpu|f32|pageable|f32", "add", "cpu", "n=1 f32/pageable/f32", 0 },
                                   { 12, "mul|n=1|cpu|f32|pageable|f32", "mul", "cpu", "n=1 f32/pageable/f32", 1 } };
static double med[10], lo[10], hi[10];
static char *infos[2] = { "{\"shape_str\":\"n=1\",\"dtype\":\"f32\",\"mode\":\"f32\",\"route\":\"pageable\"}", "not json" };

static hb_series series(void)
{
    for (int r = 0; r < 5; r++) {
        runs5[r].id = 100 + r;
        snprintf(runs5[r].run_id, sizeof runs5[r].run_id, r == 3 ? "../bad" : "2026010%d-vm", r + 1);
        snprintf(runs5[r].date, sizeof runs5[r].date, "2026-01-0%dT02:00:00Z", r + 1);
        snprintf(runs5[r].commit, sizeof runs5[r].commit, "%040d", r);
        snprintf(runs5[r].host, sizeof runs5[r].host, "vm");
        runs5[r].ncases = 2;
    }
    for (int i = 0; i < 10; i++) {
        med[i] = 1e-3 * (1 + i);
        lo[i] = med[i] * 0.9;
        hi[i] = med[i] * 1.1;
    }
    med[1] = NAN;       /* case 0 absent on night 1 */
    lo[1] = hi[1] = NAN;
    hi[7] = NAN;        /* case 1 night 2: no CI upper bound stored */
    hb_series x = { .runs = runs5, .nruns = 5, .cases = cases2, .ncases = 2, .median = med };
    return x;
}

static void test_case_json(void **state)
{
    (void)state;
    hb_series x = series();
    hb_series_ci ci = { .ci_lo = lo, .ci_hi = hi, .info = infos, .ncases = 2 };
    hb_trend_change v[3] = { { .cas = 0, .run_begin = 2, .run_end = 2, .c = { .kind = HB_CP_STEP, .size = 0.15, .p = 1e-5 } },
                             { .cas = 1, .run_begin = 3, .run_end = 4, .c = { .kind = HB_CP_DRIFT, .size = 0.1, .rate = 0.05, .p = 2e-4 } },
                             { .cas = 0, .run_begin = 4, .run_end = 4, .c = { .kind = HB_CP_STEP, .size = -0.05, .p = 1e-3 } } };
    json_t *a = hb_site_case_json(&x, &ci, 0, "total", v, 3);
    assert_non_null(a);
    assert_string_equal(json_string_value(json_object_get(a, "dtype")), "f32");
    assert_string_equal(json_string_value(json_object_get(a, "shape_str")), "n=1");
    assert_string_equal(json_string_value(json_object_get(a, "op")), "add");
    assert_int_equal(json_integer_value(json_object_get(a, "id")), 11);
    json_t *pts = json_object_get(a, "points");
    assert_int_equal(json_array_size(pts), 4); /* one per night with a median: night 1 left out */
    int nights[4] = { 0, 2, 3, 4 };
    for (int i = 0; i < 4; i++) {
        json_t *p = json_array_get(pts, (size_t)i);
        assert_int_equal(json_integer_value(json_array_get(p, 0)), nights[i]);
        assert_true(json_real_value(json_array_get(p, 1)) == med[nights[i]]);
        assert_true(json_real_value(json_array_get(p, 2)) == lo[nights[i]]);
        assert_true(json_real_value(json_array_get(p, 3)) == hi[nights[i]]);
    }
    json_t *chg = json_object_get(a, "changes");
    assert_int_equal(json_array_size(chg), 2); /* only case 0's, in the order given */
    assert_string_equal(json_string_value(json_object_get(json_array_get(chg, 0), "kind")), "step");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(chg, 0), "night")), 2);
    assert_true(json_real_value(json_object_get(json_array_get(chg, 1), "size")) == -0.05);
    json_decref(a);

    json_t *b = hb_site_case_json(&x, &ci, 1, "compute", v, 3);
    assert_null(json_object_get(b, "dtype")); /* its info does not parse: no identity fields, the rest stays */
    assert_string_equal(json_string_value(json_object_get(b, "metric")), "compute");
    assert_int_equal(json_integer_value(json_object_get(b, "occurrence")), 1);
    json_t *p2 = json_array_get(json_object_get(b, "points"), 2);
    assert_true(json_is_null(json_array_get(p2, 3))); /* no upper bound: null, not NaN */
    json_t *d = json_array_get(json_object_get(b, "changes"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "kind")), "drift");
    assert_int_equal(json_integer_value(json_object_get(d, "end")), 4);
    assert_true(json_real_value(json_object_get(d, "rate")) == 0.05);
    json_decref(b);

    json_t *c = hb_site_case_json(&x, NULL, 0, NULL, NULL, 0); /* no CIs, no changes */
    json_t *p0 = json_array_get(json_object_get(c, "points"), 0);
    assert_true(json_is_null(json_array_get(p0, 2)) && json_is_null(json_array_get(p0, 3)));
    assert_int_equal(json_array_size(json_object_get(c, "changes")), 0);
    assert_string_equal(json_string_value(json_object_get(c, "metric")), "total");
    json_decref(c);
}

static void test_nights_json(void **state)
{
    (void)state;
    hb_series x = series();
    int has[5] = { 1, 0, 1, 1, 0 };
    json_t *j = hb_site_nights_json(&x, "abcd", "host vm", has);
    assert_string_equal(json_string_value(json_object_get(j, "machine")), "abcd");
    json_t *n = json_object_get(j, "nights");
    assert_int_equal(json_array_size(n), 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(n, 0), "report")), "runs/20260101-vm/index.html");
    assert_true(json_is_null(json_object_get(json_array_get(n, 1), "report")));
    assert_true(json_is_null(json_object_get(json_array_get(n, 3), "report"))); /* "../bad" is no path component */
    assert_string_equal(json_string_value(json_object_get(json_array_get(n, 2), "date")), "2026-01-03T02:00:00Z");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(n, 4), "cases")), 2);
    json_decref(j);
    j = hb_site_nights_json(&x, NULL, NULL, NULL);
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "nights"), 0), "report")));
    json_decref(j);
}

/* a run of one machine with two cases; case b absent on night 1; CI = median * (1 -+ 0.1 * (night + 1)) */
static void put_run(hb_store *s, int night)
{
    hb_run r = { 0 };
    char id[32], date[32];
    snprintf(id, sizeof id, "2026010%d-vm", night + 1);
    snprintf(date, sizeof date, "2026-01-0%dT02:00:00Z", night + 1);
    r.meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i}, s:i}", "type", "meta", "run_id", id, "date", date, "git_commit",
                       "c0ffee", "host", "vm", "cpu", "model", "Test CPU", "cores", 4, "schema", 1);
    r.backends = json_pack("[{s:s, s:s, s:b, s:s, s:i}]", "type", "backend", "backend", "cpu", "available", 1,
                           "description", "test", "schema", 1);
    r.cases = json_array();
    for (int k = 0; k < 2; k++) {
        if (k == 1 && night == 1) continue;
        double m = 1e-3 * (k + 1) * (night + 1), w = 0.1 * (night + 1);
        json_array_append_new(r.cases, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:{s:i, s:f, s:f, s:f}}, s:i}",
                                                 "type", "case", "key", k ? "b|n=2|cpu|f32|pageable|f16" : "a|n=1|cpu|convert|pageable|f32",
                                                 "backend", "cpu", "op", k ? "b" : "a", "shape_str", k ? "n=2" : "n=1",
                                                 "dtype", k ? "f16" : "f32", "mode", k ? "f32" : "convert", "route", "pageable",
                                                 "status", "ok", "phases", "total", "n", 5, "median", m, "ci_lo", m * (1 - w),
                                                 "ci_hi", m * (1 + w), "schema", 1));
    }
    r.end = json_pack("{s:s, s:i}", "type", "end", "schema", 1);
    int dup;
    char err[512];
    assert_int_equal(hb_store_import(s, &r, &dup, err, sizeof err), HB_OK);
    hb_run_free(&r);
}

static void test_store_ci(void **state)
{
    (void)state;
    char dir[] = "/tmp/hb_test_site_XXXXXX", url[128], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(url, sizeof url, "%s/h.db", dir);
    hb_store *s;
    assert_int_equal(hb_store_open(url, &s, err, sizeof err), HB_OK);
    for (int n = 0; n < 3; n++) put_run(s, n);
    char **fps, **descs;
    size_t nm;
    assert_int_equal(hb_store_machines(s, &fps, &descs, &nm, err, sizeof err), HB_OK);
    assert_int_equal(nm, 1);
    hb_series x;
    assert_int_equal(hb_store_series(s, fps[0], "total", 0, &x, err, sizeof err), HB_OK);
    assert_int_equal(x.nruns, 3);
    assert_int_equal(x.ncases, 2);
    hb_series_ci ci;
    assert_int_equal(hb_store_series_ci(s, fps[0], "total", &x, &ci, err, sizeof err), HB_OK);
    for (size_t k = 0; k < 2; k++) {
        json_t *info = json_loads(ci.info[k], 0, NULL);
        assert_string_equal(json_string_value(json_object_get(info, "dtype")), k ? "f16" : "f32");
        json_decref(info);
        for (size_t r = 0; r < 3; r++) {
            double m = x.median[k * 3 + r], w = 0.1 * (double)(r + 1);
            if (k == 1 && r == 1) {
                assert_true(isnan(m) && isnan(ci.ci_lo[k * 3 + r]) && isnan(ci.ci_hi[k * 3 + r]));
                continue;
            }
            assert_true(fabs(m - 1e-3 * (double)(k + 1) * (double)(r + 1)) < 1e-12);
            assert_true(fabs(ci.ci_lo[k * 3 + r] - m * (1 - w)) < 1e-12);
            assert_true(fabs(ci.ci_hi[k * 3 + r] - m * (1 + w)) < 1e-12);
        }
    }
    /* the compute metric has no CI in these runs: NaN throughout */
    hb_series_ci cc;
    assert_int_equal(hb_store_series_ci(s, fps[0], "compute", &x, &cc, err, sizeof err), HB_OK);
    for (size_t i = 0; i < 6; i++) assert_true(isnan(cc.ci_lo[i]));
    hb_series_ci_free(&cc);
    json_t *meta, *be;
    assert_int_equal(hb_store_run_records(s, "20260103-vm", &meta, &be, err, sizeof err), HB_OK);
    char name[256];
    assert_string_equal(hb_site_machine_name(meta, be, "vm", name, sizeof name), "host vm; CPU Test CPU (4 cores); no other devices");
    json_decref(meta);
    json_decref(be);
    assert_int_equal(hb_store_run_records(s, "nosuch", &meta, &be, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "nosuch"));
    assert_null(meta);
    hb_series_ci_free(&ci);
    assert_null(ci.info);
    hb_series_free(&x);
    for (size_t i = 0; i < nm; i++) { free(fps[i]); free(descs[i]); }
    free(fps);
    free(descs);
    hb_store_close(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_prepare_refusals(void **state)
{
    (void)state;
    char dir[] = "/tmp/hb_test_site_XXXXXX", out[128], file[128], lib[128], tpl[128], err[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/site", dir);
    snprintf(lib, sizeof lib, "%s/lib", dir);
    snprintf(tpl, sizeof tpl, "%s/tpl", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    hb_site_opts o = { .out = out, .lib_dir = lib, .tpl_dir = tpl, .metric = "total" };
    /* no dygraphs: the package is named, with its own status */
    assert_int_equal(hb_site_prepare(&o, err, sizeof err), HB_EXIT_NO_PACKAGE);
    assert_non_null(strstr(err, "libjs-dygraphs"));
    assert_non_null(strstr(err, "dygraph.min.js"));
    char p[300];
    assert_int_equal(mkdir(lib, 0755), 0);
    assert_int_equal(mkdir(tpl, 0755), 0);
    static const char *const files[] = { "lib/dygraph.min.js", "lib/dygraph.css", "tpl/site.js", "tpl/site.css" };
    for (int i = 0; i < 4; i++) {
        if (i == 2) { /* dygraphs present, no templates */
            assert_int_equal(hb_site_prepare(&o, err, sizeof err), HB_EXIT_USAGE);
            assert_non_null(strstr(err, "site.js"));
        }
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs("/* test */\n", f);
        fclose(f);
    }
    assert_int_equal(hb_site_prepare(&o, err, sizeof err), HB_EXIT_OK);
    snprintf(p, sizeof p, "%s/lib/dygraph.min.js", out);
    assert_int_equal(access(p, R_OK), 0);
    /* an --out below a file cannot be made: HB_EXIT_IO, the option named */
    FILE *f = fopen(file, "w");
    fclose(f);
    snprintf(out, sizeof out, "%s/file/site", dir);
    assert_int_equal(hb_site_prepare(&o, err, sizeof err), HB_EXIT_IO);
    assert_non_null(strstr(err, "--out"));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_machine_name), cmocka_unit_test(test_run_id_ok), cmocka_unit_test(test_case_json),
        cmocka_unit_test(test_nights_json), cmocka_unit_test(test_store_ci), cmocka_unit_test(test_prepare_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
