/*
 * test_report_exports.c - issue 17's report and export behaviour (cmocka): the CSV's identity
 * columns (run, date, commit, machine fingerprint, device, one column per shape axis, samples, CI),
 * options before or after the file (getopt_long), Google Benchmark throughput counters, machine
 * fingerprints, plot series that break between workload lines, and the comparison of two runs as
 * ratios with intervals (a copy of cpu_small.jsonl with every time doubled must read 2x slower).
 * Inputs: tests/data/cpu_small.jsonl and files derived from it with a fixed transform.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/commands.h"
#include "report/common.h"
#include "results/machine.h"
#include "results/results.h"

#define CPU_SMALL "tests/data/cpu_small.jsonl"

static char g_tmp[256];

static int setup(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "%s/hb_test_exports.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_tmp) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* index of column name in a CSV header line (no quotes in the header), or -1 */
static int col_of(const char *header, const char *name)
{
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", header);
    buf[strcspn(buf, "\n")] = 0;
    int i = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), i++)
        if (!strcmp(t, name)) return i;
    return -1;
}

/* field i of a CSV line (quoted fields may hold commas; "" is a quote) into out */
static void csv_field(const char *line, int want, char *out, size_t len)
{
    int i = 0, q = 0;
    size_t k = 0;
    out[0] = 0;
    for (const char *p = line; *p && *p != '\n'; p++) {
        if (q) {
            if (*p == '"' && p[1] == '"') { if (i == want && k + 1 < len) out[k++] = '"'; p++; }
            else if (*p == '"') q = 0;
            else if (i == want && k + 1 < len) out[k++] = *p;
        } else if (*p == '"') q = 1;
        else if (*p == ',') { if (i == want) break; i++; }
        else if (i == want && k + 1 < len) out[k++] = *p;
    }
    out[k] = 0;
}

static void test_csv_identity_and_option_order(void **state)
{
    (void)state;
    char out[400];
    snprintf(out, sizeof out, "%s/x.csv", g_tmp);
    unlink(out);
    /* the option before the file (issue 17: this failed with "-o: cannot open") */
    char *argv[] = {"csv", "-o", out, CPU_SMALL, NULL};
    assert_int_equal(hb_cmd_csv(4, argv), HB_EXIT_OK);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    static char header[8192], line[16384];
    assert_non_null(fgets(header, sizeof header, f));
    static const char *const need[] = {"run_id", "date", "git_commit", "machine", "machine_desc", "host", "device", "key",
                                       "shape_n", "shape_m", "shape_k", "samples", "total_ci_lo_s", "total_ci_hi_s",
                                       "ci_target", "ci_met", "noise_pct", "total_median_s"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        if (col_of(header, need[i]) < 0) fprintf(stderr, "missing column %s\n", need[i]);
        assert_true(col_of(header, need[i]) >= 0);
    }
    /* every row carries the meta record's identity and its own CI around its median */
    hb_run r;
    char err[512];
    assert_int_equal(hb_run_load(CPU_SMALL, &r, err, sizeof err), HB_OK);
    char fp[32];
    hb_machine_fingerprint(r.meta, r.backends, NULL, 0, fp, sizeof fp);
    size_t rows = 0;
    char v[512], lo[64], hi[64], med[64], key[512];
    while (fgets(line, sizeof line, f)) {
        csv_field(line, col_of(header, "run_id"), v, sizeof v);
        assert_string_equal(v, hb_rec_str(r.meta, "run_id"));
        csv_field(line, col_of(header, "git_commit"), v, sizeof v);
        assert_string_equal(v, hb_rec_str(r.meta, "git_commit"));
        csv_field(line, col_of(header, "machine"), v, sizeof v);
        assert_string_equal(v, fp);
        csv_field(line, col_of(header, "key"), key, sizeof key);
        json_t *c = json_array_get(r.cases, rows);
        assert_string_equal(key, hb_rec_str(c, "key"));
        if (!strcmp(hb_rec_str(c, "status"), "ok")) {
            csv_field(line, col_of(header, "total_ci_lo_s"), lo, sizeof lo);
            csv_field(line, col_of(header, "total_ci_hi_s"), hi, sizeof hi);
            csv_field(line, col_of(header, "total_median_s"), med, sizeof med);
            assert_true(atof(lo) <= atof(med) && atof(med) <= atof(hi));
            csv_field(line, col_of(header, "shape_n"), v, sizeof v);
            json_t *n = json_object_get(json_object_get(c, "shape"), "n");
            if (n) assert_true(fabs(atof(v) - json_number_value(n)) <= 1e-6 * json_number_value(n));
            else assert_string_equal(v, "");
        }
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, json_array_size(r.cases));
    hb_run_free(&r);
    /* the same after the file */
    char *argv2[] = {"csv", CPU_SMALL, "--out", out, NULL};
    assert_int_equal(hb_cmd_csv(4, argv2), HB_EXIT_OK);
    char *argv3[] = {"csv", "-o", out, NULL};
    assert_int_equal(hb_cmd_csv(3, argv3), HB_EXIT_USAGE);
}

static void test_gbench_counters(void **state)
{
    (void)state;
    hb_run r;
    char err[512];
    assert_int_equal(hb_run_load(CPU_SMALL, &r, err, sizeof err), HB_OK);
    json_t *doc = hb_gbench_build(&r, "total", 0, 0);
    assert_non_null(doc);
    size_t i, checked = 0;
    json_t *b;
    json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
        const char *rt = json_string_value(json_object_get(b, "run_type"));
        const char *agg = json_string_value(json_object_get(b, "aggregate_name"));
        if (strcmp(rt, "iteration") && strcmp(agg ? agg : "", "median")) continue;
        /* find its case: the benchmark name is the key with '|' as '/' and '=' as ':' */
        const char *name = json_string_value(json_object_get(b, "run_name"));
        if (strchr(name, '#')) continue; /* a repeated key (NAME#2): its first occurrence is checked */
        json_t *c = NULL, *x;
        size_t k;
        json_array_foreach(r.cases, k, x) {
            char want[512];
            size_t o = 0;
            for (const char *p = hb_rec_str(x, "key"); *p && o + 1 < sizeof want; p++) {
                char ch = *p == '|' || *p == ' ' ? '/' : *p == '=' ? ':' : *p;
                if (ch == '/' && o && want[o - 1] == '/') continue;
                want[o++] = ch;
            }
            want[o] = 0;
            if (!strcmp(want, name)) { c = x; break; }
        }
        if (!c) fprintf(stderr, "no case for %s\n", name);
        assert_non_null(c);
        double t = json_number_value(json_object_get(b, "real_time")) * 1e-9;
        double bytes = json_number_value(json_object_get(c, "bytes")), flops = json_number_value(json_object_get(c, "flops"));
        double bps = json_number_value(json_object_get(b, "bytes_per_second"));
        double ips = json_number_value(json_object_get(b, "items_per_second"));
        /* an iteration's rate is its own work / its time; the median's is the median of the rates,
         * which is the work over the median time for an odd count and within the middle pair otherwise */
        if (!strcmp(rt, "iteration")) {
            assert_true(fabs(bps - bytes / t) <= 1e-9 * bps);
            if (flops > 0) assert_true(fabs(ips - flops / t) <= 1e-9 * ips);
        } else {
            assert_true(bps > 0);
        }
        checked++;
    }
    assert_true(checked > 10);
    json_decref(doc);
    hb_run_free(&r);
}

static void test_fingerprint(void **state)
{
    (void)state;
    json_t *m1 = json_pack("{s:s,s:{s:s,s:i},s:s}", "host", "myhost", "cpu", "model", "Xeon", "cores", 16, "os", "Linux 6");
    json_t *m2 = json_deep_copy(m1);
    json_object_set_new(m2, "host", json_string("other-name"));
    json_t *b1 = json_pack("[{s:s,s:b,s:{s:s,s:s}}]", "backend", "cuda:0", "available", 1, "info", "name", "NVIDIA H100",
                           "nvml_driver_version", "580.1");
    json_t *b2 = json_pack("[{s:s,s:b,s:{s:s,s:s}}]", "backend", "cuda:0", "available", 1, "info", "name", "NVIDIA H100",
                           "nvml_driver_version", "580.2");
    char a[32], b[32], c[32], d[32], txt[1024];
    hb_machine_fingerprint(m1, b1, txt, sizeof txt, a, sizeof a);
    hb_machine_fingerprint(m2, b1, NULL, 0, b, sizeof b);
    hb_machine_fingerprint(m1, b2, NULL, 0, c, sizeof c);
    hb_machine_fingerprint(m1, NULL, NULL, 0, d, sizeof d);
    assert_string_equal(a, b);          /* the hostname is not part of it */
    assert_string_not_equal(a, c);      /* a driver version is */
    assert_string_not_equal(a, d);      /* and the GPU */
    assert_int_equal(strlen(a), 16);    /* 16 hex digits, as the history store writes them */
    assert_non_null(strstr(txt, "NVIDIA H100"));
    assert_null(strstr(txt, "myhost"));
    json_decref(m1);
    json_decref(m2);
    json_decref(b1);
    json_decref(b2);
}

/* One machine, one series (issue 32 item 5): two synthetic runs of one machine whose meta and backend
 * records differ only in what changes from run to run (the OpenCL device's memory, which PoCL reports
 * as a share of the free memory: "5.3 GiB" vs "12.3 GiB" in its description and global_mem_bytes; a
 * hypothetical free-memory field; thread and compute-unit counts; date, load, clock readings; total
 * memory by a few MB) get one fingerprint; another CPU model, GPU or driver version does not. */
static json_t *pocl_run(double mem_gib, int threads, json_t **backends)
{
    char d[256], r[128];
    snprintf(d, sizeof d, "pthread-skylake-avx512-AMD EPYC (Portable Computing Language, driver 3.1+debian), %.1f GiB, "
             "%d CU, fp16 no, fp64 yes", mem_gib, threads);
    snprintf(r, sizeof r, "f64 reference, plain C loops, OpenMP %d threads", threads);
    *backends = json_pack("[{s:s,s:s,s:b,s:s,s:{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:i}},{s:s,s:s,s:b,s:s,s:{s:s,s:i}}]",
                          "type", "backend", "backend", "opencl:0:0", "available", 1, "description", d, "info",
                          "platform", "Portable Computing Language", "device", "pthread-skylake-avx512-AMD EPYC",
                          "driver_version", "3.1+debian", "device_version", "OpenCL 3.0 PoCL", "global_mem_bytes",
                          (json_int_t)(mem_gib * 1073741824.0), "max_alloc_bytes", (json_int_t)(mem_gib * 268435456.0),
                          "free_memory_bytes", (json_int_t)(mem_gib * 1e9), "compute_units", threads,
                          "type", "backend", "backend", "cpu-ref", "available", 1, "description", r, "info", "impl",
                          "plain C loops, f64 accumulation", "omp_threads", threads);
    return json_pack("{s:s,s:s,s:s,s:{s:s,s:i,s:i,s:i},s:I,s:s,s:[f,f,f],s:{s:f}}", "type", "meta", "host", "vm",
                     "date", threads == 2 ? "2026-11-20T03:00:00Z" : "2026-11-20T03:30:00Z", "cpu", "model", "AMD EPYC",
                     "sockets", 1, "cores", 2, "pus", 2, "memory_bytes",
                     (json_int_t)25276514304LL + (threads == 2 ? 0 : 5 * 1048576), "compiler", "gcc 12.2.0",
                     "load_avg", 0.1 * threads, 1.0, 2.0, "host_clock", "probe_ghz", 3.0 + 0.1 * threads);
}

static void test_fingerprint_stable(void **state)
{
    (void)state;
    json_t *b1, *b2;
    json_t *m1 = pocl_run(5.3, 2, &b1), *m2 = pocl_run(12.3, 1, &b2);
    char a[32], b[32], c[32], ta[4096], tb[4096];
    hb_machine_fingerprint(m1, b1, ta, sizeof ta, a, sizeof a);
    hb_machine_fingerprint(m2, b2, tb, sizeof tb, b, sizeof b);
    assert_string_equal(ta, tb);
    assert_string_equal(a, b);
    assert_null(strstr(ta, "GiB,"));   /* the OpenCL device's memory is not in the text */
    assert_null(strstr(ta, "5.3"));
    assert_null(strstr(ta, "free_memory"));
    assert_non_null(strstr(ta, "memory=24 GiB")); /* the host's total memory, rounded */
    assert_non_null(strstr(ta, "device=pthread-skylake-avx512-AMD EPYC"));
    assert_non_null(strstr(ta, "driver_version=3.1+debian"));
    assert_non_null(strstr(ta, "OpenMP # threads")); /* a backend without naming fields: its text, counts blanked */
    /* what names the machine and its software still tells machines apart */
    json_object_set_new(json_object_get(m2, "cpu"), "model", json_string("Intel(R) Xeon(R) Processor"));
    hb_machine_fingerprint(m2, b2, NULL, 0, c, sizeof c);
    assert_string_not_equal(a, c);
    json_object_set_new(json_object_get(m2, "cpu"), "model", json_string("AMD EPYC"));
    json_object_set_new(json_object_get(json_array_get(b2, 0), "info"), "driver_version", json_string("5.0+debian"));
    hb_machine_fingerprint(m2, b2, NULL, 0, c, sizeof c);
    assert_string_not_equal(a, c);
    json_object_set_new(json_object_get(json_array_get(b2, 0), "info"), "driver_version", json_string("3.1+debian"));
    json_object_set_new(json_object_get(json_array_get(b2, 0), "info"), "device", json_string("NVIDIA H100 80GB HBM3"));
    hb_machine_fingerprint(m2, b2, NULL, 0, c, sizeof c);
    assert_string_not_equal(a, c);
    json_object_set_new(m2, "memory_bytes", json_integer(137438953472LL)); /* 128 GiB */
    json_object_set_new(json_object_get(json_array_get(b2, 0), "info"), "device", json_string("pthread-skylake-avx512-AMD EPYC"));
    hb_machine_fingerprint(m2, b2, NULL, 0, c, sizeof c);
    assert_string_not_equal(a, c);
    json_decref(m1);
    json_decref(m2);
    json_decref(b1);
    json_decref(b2);
}

static void test_series_break(void **state)
{
    (void)state;
    hb_rec_case ra = {.source = "default.ini:47"}, rb = {.source = "tinyllama.ini:16"};
    hb_rrow a = {.rec = &ra, .name = "", .size = 16384}, a2 = {.rec = &ra, .name = "", .size = 262144},
            a3 = {.rec = &ra, .name = "", .size = 262144}, b = {.rec = &rb, .name = "", .size = 4194304};
    assert_int_equal(series_break(NULL, &a), 0);
    assert_int_equal(series_break(&a, &a2), 0);  /* one sweep: joined */
    assert_int_equal(series_break(&a2, &a3), 1); /* two shapes of equal size: not a sweep step */
    assert_int_equal(series_break(&a2, &b), 1);  /* another workload line */
}

/* cpu_small.jsonl with every case's total median and CI multiplied by k */
static void write_scaled(const char *path, double k)
{
    FILE *in = fopen(CPU_SMALL, "r"), *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    static char line[1 << 20];
    while (fgets(line, sizeof line, in)) {
        json_error_t e;
        json_t *rec = json_loads(line, 0, &e);
        assert_non_null(rec);
        json_t *tot = json_object_get(json_object_get(rec, "phases"), "total");
        static const char *const f[] = {"median", "ci_lo", "ci_hi", "min", "max", "mean", "p10", "p90"};
        for (size_t i = 0; tot && i < sizeof f / sizeof *f; i++) {
            json_t *v = json_object_get(tot, f[i]);
            if (json_is_number(v)) json_object_set_new(tot, f[i], json_real(json_number_value(v) * k));
        }
        if (!strcmp(json_string_value(json_object_get(rec, "type")), "meta"))
            json_object_set_new(rec, "git_commit", json_string("feedfacefeedfacefeedfacefeedfacefeedface"));
        char *s = json_dumps(rec, JSON_COMPACT);
        fprintf(out, "%s\n", s);
        free(s);
        json_decref(rec);
    }
    fclose(in);
    fclose(out);
}

static void test_two_runs_ratios(void **state)
{
    (void)state;
    char slow[400], dir[400], p[500];
    snprintf(slow, sizeof slow, "%s/slow.jsonl", g_tmp);
    snprintf(dir, sizeof dir, "%s/cmp", g_tmp);
    write_scaled(slow, 2.0);
    char *argv[] = {"report", CPU_SMALL, slow, "--out", dir, "--name", "cmp", "-q", "--svg-only", NULL};
    assert_int_equal(hb_cmd_report(9, argv), HB_EXIT_OK);
    snprintf(p, sizeof p, "%s/summary.json", dir);
    json_error_t e;
    json_t *s = json_load_file(p, 0, &e);
    assert_non_null(s);
    json_t *rc = json_object_get(s, "runs_compared");
    assert_non_null(rc);
    assert_int_equal(json_array_size(json_object_get(rc, "runs")), 2);
    size_t i, nb = 0;
    json_t *b;
    json_array_foreach(json_object_get(rc, "by_backend"), i, b) {
        /* every ratio is 2 exactly: so is their geometric mean; a ratio counts as slower only where
         * its interval [2 lo/hi, 2 hi/lo] lies above 1, never as faster */
        assert_true(fabs(json_number_value(json_object_get(b, "geomean_ratio")) - 2.0) < 1e-6);
        assert_int_equal(json_integer_value(json_object_get(b, "faster")), 0);
        assert_true(json_integer_value(json_object_get(b, "slower")) <= json_integer_value(json_object_get(b, "n")));
        nb++;
    }
    assert_true(nb >= 2); /* cpu-ref and cpu at least */
    /* the report folder holds the report, not gnuplot's logs */
    glob_t g;
    snprintf(p, sizeof p, "%s/gnuplot-*.log", dir);
    assert_int_equal(glob(p, 0, NULL, &g), GLOB_NOMATCH);
    /* the CI counts are in the summary */
    json_t *ci = json_object_get(s, "ci");
    assert_true(json_integer_value(json_object_get(ci, "ci_target_missed")) <= json_integer_value(json_object_get(ci, "ok_cases")));
    assert_true(json_integer_value(json_object_get(ci, "ok_cases")) > 0);
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_identity_and_option_order),
        cmocka_unit_test(test_gbench_counters),
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_fingerprint_stable),
        cmocka_unit_test(test_series_break),
        cmocka_unit_test(test_two_runs_ratios),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
