/*
 * compare_fixture.h - synthetic results files for the tests of compare and the nightly tools
 * (test_compare.c, test_nightly.c): a folder of their own under /tmp, cases with lognormal samples
 * (5% outliers), a run's meta / case / end records written with jansson, a family of n cases whose
 * medians are log-uniform over 1 us .. 100 ms with a factor per case. Header-only (static inline):
 * each test file includes it once.
 */
#ifndef HB_TEST_COMPARE_FIXTURE_H
#define HB_TEST_COMPARE_FIXTURE_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/rstats.h"

static char tmpdir[256]; /* the test file's own folder (compare_fixture_setup) */

static inline void path_in(char *buf, size_t len, const char *name)
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

static inline void write_run(const char *path, const char *host, const char *cpu, int schema,
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
static inline void write_family(const char *path, int ncases, int nsamp, uint64_t seed, double sigma,
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

static inline double f_planted(int i) { return i % 10 == 0 ? 1.10 : 1.0; }
static inline double f_drift3(int i) { (void)i; return 1.03; }
static inline double f_drift8(int i) { (void)i; return 1.08; }

static inline int count_substr(const char *hay, const char *needle)
{
    int k = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) k++;
    return k;
}

/* The test file's folder, /tmp/hb_test_<name>_XXXXXX: 0, or -1 when it cannot be made. */
static inline int compare_fixture_setup(const char *name)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hb_test_%s_XXXXXX", name);
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes the folder, unless HB_KEEP_TEST_FILES is set (then names it). */
static inline int compare_fixture_teardown(void)
{
    char cmd[300];
    if (!getenv("HB_KEEP_TEST_FILES")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd)) return 0;
    } else printf("# test files kept in %s\n", tmpdir);
    return 0;
}
#endif
