/* test_changepoint.c - drift and step detection (analysis/changepoint.h) on synthetic nightly series
 * drawn with a fixed seed, at this VM's measured night-to-night noise (tests/data/vm_pass_noise.txt:
 * the spread of log time between the 3 processes of a --quick run, one value per case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/changepoint.h"

/* cmocka has no double comparison (its assert_near converts to float) */
#define assert_near(a, b, eps) do { double a_ = (a), b_ = (b); \
    if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g +- %g", #a, a_, b_, (double)(eps)); } while (0)

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static void seed(uint64_t s) { rng = s ? s : 1; }
static double unif(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

/* the measured spreads, sorted */
static double noise[1024];
static size_t nnoise;
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static void load_noise(void)
{
    if (nnoise) return;
    FILE *f = fopen("tests/data/vm_pass_noise.txt", "r");
    assert_non_null(f);
    char line[256];
    while (fgets(line, sizeof line, f) && nnoise < 1024)
        if (line[0] != '#') noise[nnoise++] = strtod(line, NULL);
    fclose(f);
    assert_true(nnoise > 100);
    qsort(noise, nnoise, sizeof *noise, cmpd);
}
static double noise_median(void) { load_noise(); return noise[nnoise / 2]; }

/* log times: base + drift/step + noise sd */
static void series(double *x, size_t n, double sd, size_t step_at, double step, size_t drift_from, double drift_rate)
{
    for (size_t i = 0; i < n; i++) {
        double v = log(1e-3) + sd * gauss();
        if (step_at && i >= step_at) v += log1p(step);
        if (drift_rate != 0 && i >= drift_from) v += (double)(i - drift_from + 1) * log1p(drift_rate);
        x[i] = v;
    }
    x[0] += 0 * x[0];
}

static void test_pettitt_and_mk_values(void **state)
{
    (void)state;
    /* 1..10: S = 45 (every pair increasing); Var = 10*9*25/18 = 125; z = 44/sqrt(125) */
    double x[10];
    for (int i = 0; i < 10; i++) x[i] = i + 1;
    double s;
    double p = hb_cp_mann_kendall(x, 10, &s);
    assert_near(s, 45, 0);
    assert_near(p, erfc(44 / sqrt(125.0) / sqrt(2.0)), 1e-12);
    /* 0 0 0 0 0 1 1 1 1 1: Pettitt splits after 5, K = 25, p = 2 exp(-6*625/1100) */
    double y[10] = { 0, 0, 0, 0, 0, 1, 1, 1, 1, 1 };
    size_t t;
    p = hb_cp_pettitt(y, 10, 3, &t);
    assert_int_equal(t, 5);
    assert_near(p, 2 * exp(-6 * 625.0 / 1100), 1e-12);
    /* too short for min_seg */
    assert_near(hb_cp_pettitt(y, 5, 3, &t), 1.0, 0);
    assert_int_equal(t, 0);
}

/* Of 20 series of `nights` nights drifting 1% a night from night 1 at noise sd (seeded with s): how
 * many are flagged with a change of more than 5% first */
static int drift_hits(const hb_cp_opts *o, size_t nights, double sd, uint64_t s)
{
    int hits = 0;
    double x[64];
    seed(s);
    for (int rep = 0; rep < 20; rep++) {
        series(x, nights, sd, 0, 0, 1, 0.01);
        hb_change c[8];
        size_t n = hb_changepoints(x, nights, o, c, 8);
        if (n >= 1 && c[0].size > 0.05) hits++;
    }
    print_message("drift 1%%/night x %zu nights, noise sd %.4f: flagged in %d of 20 series\n", nights, sd, hits);
    return hits;
}

/* 1% a night over 20 nights, the whole series drifting, at 1% noise and at the VM's median noise */
static void test_drift_20_nights_flagged(void **state)
{
    (void)state;
    hb_cp_opts o;
    hb_cp_defaults(&o);
    assert_int_equal(drift_hits(&o, 20, 0.01, 101), 20);
    assert_true(drift_hits(&o, 20, noise_median(), 102) >= 16); /* power ~88% at alpha_trend 0.005 (changepoint.h) */
    /* at the VM's noise, five nights more: +28% in all, every series flagged */
    assert_int_equal(drift_hits(&o, 25, noise_median(), 303), 20);
    /* one series in detail: a drift from night 1, about +20.8% in all, about 1% a night */
    seed(7);
    double x[20];
    series(x, 20, 0.01, 0, 0, 1, 0.01);
    hb_change c[4];
    size_t n = hb_changepoints(x, 20, &o, c, 4);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].kind, HB_CP_DRIFT);
    assert_true(c[0].begin <= 2);
    assert_near(c[0].rate, 0.01, 0.003);
    assert_near(c[0].size, 0.19, 0.04);
}

/* a drift beginning after 30 stable nights: found, and beginning near night 30 */
static void test_drift_after_stable_nights(void **state)
{
    (void)state;
    hb_cp_opts o;
    hb_cp_defaults(&o);
    seed(11);
    double x[50];
    series(x, 50, 0.01, 0, 0, 30, 0.01);
    hb_change c[4];
    size_t n = hb_changepoints(x, 50, &o, c, 4);
    assert_true(n >= 1);
    assert_int_equal(c[0].kind, HB_CP_DRIFT);
    assert_true(c[0].begin >= 27 && c[0].begin <= 33);
    assert_near(c[0].rate, 0.01, 0.003);
}

/* a single 5% step at night 30 of 60: on its night at 1% noise; within 3 nights at the VM's median */
static void test_step_5pct_on_its_night(void **state)
{
    (void)state;
    hb_cp_opts o;
    hb_cp_defaults(&o);
    seed(3);
    int exact = 0;
    for (int rep = 0; rep < 20; rep++) {
        double x[60];
        series(x, 60, 0.01, 30, 0.05, 0, 0);
        hb_change c[4];
        size_t n = hb_changepoints(x, 60, &o, c, 4);
        assert_int_equal(n, 1);
        assert_int_equal(c[0].kind, HB_CP_STEP);
        assert_near(c[0].size, 0.05, 0.015);
        exact += c[0].begin == 30;
    }
    print_message("5%% step at night 30, noise sd 0.01: on its night in %d of 20 series\n", exact);
    assert_true(exact >= 19);
    double sd = noise_median();
    int found = 0, near = 0;
    for (int rep = 0; rep < 20; rep++) {
        double x[100];
        series(x, 100, sd, 50, 0.05, 0, 0);
        hb_change c[4];
        size_t n = hb_changepoints(x, 100, &o, c, 4);
        if (n >= 1) { found++; near += c[0].begin >= 47 && c[0].begin <= 53 && c[0].size > 0; }
    }
    print_message("5%% step at night 50 of 100, noise sd %.4f (VM median): flagged in %d of 20, within 3 nights in %d\n", sd, found, near);
    assert_true(found >= 16);
    assert_true(near >= 14);
}

/* 100 stable nights, each case's noise one of the VM's measured spreads (heavy tail up to 50%),
 * drawn Gaussian and Student-t(3): at most 1 case in 100 flagged (1000 cases each, so at most 10) */
static void test_stable_100_nights_false_alarms(void **state)
{
    (void)state;
    load_noise();
    hb_cp_opts o;
    hb_cp_defaults(&o);
    seed(42);
    for (int dist = 0; dist < 2; dist++) {
        int flagged = 0;
        for (int k = 0; k < 1000; k++) {
            double sd = noise[(size_t)k % nnoise], x[100];
            for (int i = 0; i < 100; i++) {
                double e = gauss();
                if (dist) { double c = gauss(), d = gauss(), f = gauss(); e = e / sqrt((c * c + d * d + f * f) / 3) / sqrt(3.0); }
                x[i] = log(1e-3) + sd * e;
            }
            flagged += hb_changepoints(x, 100, &o, NULL, 0) > 0;
        }
        print_message("stable 100 nights, %s noise at the VM's spreads: %d of 1000 cases flagged\n",
                      dist ? "Student-t(3)" : "Gaussian", flagged);
        assert_true(flagged <= 10);
    }
}

/* input too short, and two steps in one series */
static void test_short_and_two_steps(void **state)
{
    (void)state;
    hb_cp_opts o;
    hb_cp_defaults(&o);
    double x[5] = { 0, 0, 1, 1, 1 };
    hb_change c[4];
    memset(c, 0x7f, sizeof c); /* poison */
    assert_int_equal(hb_changepoints(x, 5, &o, c, 4), 0);
    seed(5);
    double y[90];
    series(y, 90, 0.01, 30, 0.10, 0, 0);
    for (int i = 60; i < 90; i++) y[i] += log1p(-0.08); /* night 60: 8% faster than night 59 */
    size_t n = hb_changepoints(y, 90, &o, c, 4);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].begin, 30);
    assert_int_equal(c[1].begin, 60);
    assert_true(c[0].size > 0.08 && c[1].size < -0.06);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pettitt_and_mk_values),
        cmocka_unit_test(test_drift_20_nights_flagged),
        cmocka_unit_test(test_drift_after_stable_nights),
        cmocka_unit_test(test_step_5pct_on_its_night),
        cmocka_unit_test(test_stable_100_nights_false_alarms),
        cmocka_unit_test(test_short_and_two_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
