/* test_stats.c - the driver's statistics (harness/core/stats.c) against known distributions, and the
 * results writer/reader round trip (harness/results/write.c hb_record_write, harness/results/read.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "measure/measure.h"
#include "results/results.h"
#include "core/stats.h"

static unsigned long long rng = 0x1234567ULL;
static double unif(void) /* (0,1), xorshift64* */
{
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return ((double)((rng * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

static void test_exact_small(void **state)
{
    (void)state;
    double x[] = {5, 1, 4, 2, 3};
    hb_stats s;
    hb_stats_compute(x, 5, &s);
    assert_int_equal(s.n, 5);
    assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.mean == 3);
    assert_true(fabs(s.stddev - sqrt(2.5)) < 1e-12);
    assert_true(s.mad == 1);                 /* |x-3| = 2,2,1,1,0 -> median 1 */
    assert_true(fabs(s.p10 - 1.4) < 1e-12);  /* type 7: 1 + 0.4*(2-1) */
    assert_true(fabs(s.p90 - 4.6) < 1e-12);
    assert_true(s.ci_lo == 1 && s.ci_hi == 5); /* n < 6: [min, max] */
    double even[] = {4, 1, 3, 2};
    hb_stats_compute(even, 4, &s);
    assert_true(s.median == 2.5);
    hb_stats_compute(NULL, 0, &s);
    assert_int_equal(s.n, 0);
}

/* Normal(10, 2): median 10, MAD = 0.6745 * 2, p10/p90 = 10 -/+ 1.2816 * 2. */
static void test_normal(void **state)
{
    (void)state;
    enum { N = 200001 };
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++) x[i] = 10 + 2 * normal();
    hb_stats s;
    hb_stats_compute(x, N, &s);
    assert_true(fabs(s.median - 10) < 0.02);
    assert_true(fabs(s.mean - 10) < 0.02);
    assert_true(fabs(s.stddev - 2) < 0.02);
    assert_true(fabs(s.mad - 0.67449 * 2) < 0.02);
    assert_true(fabs(s.p10 - (10 - 1.28155 * 2)) < 0.03);
    assert_true(fabs(s.p90 - (10 + 1.28155 * 2)) < 0.03);
    assert_true(fabs(s.cv - 0.2) < 0.005);
    assert_true(s.ci_lo < 10 && s.ci_hi > 10 && s.ci_hi - s.ci_lo < 0.05);
    free(x);
}

/* Exponential(1): median ln 2, mean 1 (skewed: median != mean). */
static void test_exponential(void **state)
{
    (void)state;
    enum { N = 200001 };
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++) x[i] = -log(unif());
    hb_stats s;
    hb_stats_compute(x, N, &s);
    assert_true(fabs(s.median - log(2.0)) < 0.01);
    assert_true(fabs(s.mean - 1) < 0.01);
    assert_true(fabs(s.p90 - log(10.0)) < 0.03);
    free(x);
}

/* The 95% CI of the median covers the true median in about 95% of repeated samples
 * (distribution-free: checked on a skewed distribution, n = 50). */
static void test_ci_coverage(void **state)
{
    (void)state;
    enum { REPS = 4000, N = 50 };
    int covered = 0;
    double x[N];
    for (int r = 0; r < REPS; r++) {
        for (int i = 0; i < N; i++) x[i] = -log(unif());
        hb_stats s;
        hb_stats_compute(x, N, &s);
        covered += s.ci_lo <= log(2.0) && log(2.0) <= s.ci_hi;
    }
    double cov = (double)covered / REPS;
    print_message("median CI coverage at n=50: %.3f\n", cov);
    assert_true(cov > 0.93 && cov < 0.985);
}

static void test_clock(void **state)
{
    (void)state;
    double res, ovh;
    hb_clock_check(&res, &ovh);
    assert_true(res > 0 && res < 1e6);
    assert_true(ovh > 0 && ovh < 1e5);
    double t0 = hb_now();
    usleep(20000);
    double dt = hb_now() - t0;
    assert_true(dt >= 0.019 && dt < 2);
}

/* Random inputs: deterministic, in [-1, 1], never zero, exactly representable in f32. */
static void test_fill_random(void **state)
{
    (void)state;
    enum { N = 300000 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    hb_fill_random(a, N, 42, 7);
    hb_fill_random(b, N, 42, 7);
    assert_memory_equal(a, b, N * sizeof *a);
    double sum = 0;
    for (int i = 0; i < N; i++) {
        assert_true(a[i] >= -1 && a[i] <= 1 && a[i] != 0);
        assert_true((double)(float)a[i] == a[i]);
        sum += a[i];
    }
    assert_true(fabs(sum / N) < 0.01);
    hb_fill_random(b, N, 43, 7);
    assert_true(memcmp(a, b, N * sizeof *a) != 0);
    free(a);
    free(b);
}

/* Records written with hb_record_write read back with hb_run_load, field for field; a truncated
 * last line (a killed run) is skipped, a malformed middle line is an error naming the line. */
static void test_results_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/hb_test_results_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:s}", "type", "meta", "run_id", "r1")), HB_OK);
    double samples[7];
    for (int i = 0; i < 7; i++) samples[i] = 1e-3 * (1 + unif());
    hb_stats st;
    hb_stats_compute(samples, 7, &st);
    json_t *c = json_pack("{s:s,s:s,s:s,s:{s:o}}", "type", "case", "key", "add|n=4|cpu|f32|pageable|f32", "status", "ok",
                          "phases", "total", hb_stats_json(&st));
    assert_int_equal(hb_record_write(fd, c), HB_OK);
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:s,s:[{s:s,s:f}]}", "type", "backend", "backend", "cpu",
                                                   "ceilings", "name", "copy_gbps", "value", 12.5)), HB_OK);
    assert_true(write(fd, "{\"type\":\"case\",\"key\":\"trunc", 26) == 26); /* killed mid-record */
    close(fd);
    hb_run r;
    char err[256];
    assert_int_equal(hb_run_load(path, &r, err, sizeof err), HB_OK);
    assert_string_equal(json_string_value(json_object_get(r.meta, "run_id")), "r1");
    assert_int_equal(json_array_size(r.cases), 1);
    json_t *rc = json_array_get(r.cases, 0);
    assert_int_equal(json_integer_value(json_object_get(rc, "schema")), HB_SCHEMA_VERSION);
    assert_true(fabs(hb_case_phase(rc, "total", "median") - st.median) <= 1e-6 * st.median);
    assert_true(fabs(hb_case_phase(rc, "total", "ci_hi") - st.ci_hi) <= 1e-6 * st.ci_hi);
    assert_true(isnan(hb_case_phase(rc, "h2d", "median")));
    assert_true(hb_run_ceiling(&r, "cpu", "copy_gbps") == 12.5);
    assert_true(isnan(hb_run_ceiling(&r, "cpu", "triad_gbps")));
    hb_run_free(&r);
    /* a malformed line in the middle */
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"type\":\"meta\"}\nnot json\n{\"type\":\"end\"}\n");
    fclose(f);
    assert_int_equal(hb_run_load(path, &r, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, ":2:"));
    unlink(path);
    assert_int_equal(hb_run_load(path, &r, err, sizeof err), HB_EDEVICE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_small), cmocka_unit_test(test_normal),  cmocka_unit_test(test_exponential),
        cmocka_unit_test(test_ci_coverage), cmocka_unit_test(test_clock),   cmocka_unit_test(test_fill_random),
        cmocka_unit_test(test_results_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
