/*
 * test_rstats.c - harness/core/rstats.c: the RNG, medians and quantiles, the Mann-Whitney U test against
 * published values (scipy's documented example) and against brute-force enumeration of every
 * split (exact p, and the tie-corrected variance, which equals the permutation variance of U),
 * its null distribution (uniform p) and power, Benjamini-Hochberg against R's p.adjust example
 * and a brute-force definition, and the bootstrap CI of the ratio of medians (determinism, coverage
 * of the true ratio, width, errors). Outputs are poisoned with NaN before every call.
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

#include <cmocka.h>

#include "core/rstats.h"

static void test_rng(void **state)
{
    (void)state;
    hb_rng a, b;
    hb_rng_seed(&a, 12345);
    hb_rng_seed(&b, 12345);
    for (int i = 0; i < 100; i++) assert_true(hb_rng_next(&a) == hb_rng_next(&b));
    hb_rng_seed(&b, 12346);
    int same = 0;
    for (int i = 0; i < 100; i++) same += hb_rng_next(&a) == hb_rng_next(&b);
    assert_true(same == 0);
    /* uniform mean and normal moments from 200k draws */
    double su = 0, sn = 0, sn2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = hb_rng_uniform(&a);
        assert_true(u >= 0 && u < 1);
        su += u;
        double z = hb_rng_normal(&a);
        sn += z;
        sn2 += z * z;
    }
    assert_true(fabs(su / n - 0.5) < 0.005);
    assert_true(fabs(sn / n) < 0.01);
    assert_true(fabs(sn2 / n - 1) < 0.02);
    assert_true(hb_hash64("a") != hb_hash64("b"));
    assert_true(hb_hash64("matmul|m=1") == hb_hash64("matmul|m=1"));
}

static void test_median_quantile(void **state)
{
    (void)state;
    double x[] = { 5, 1, 4, 2, 3 };
    hb_rs_sort(x, 5);
    for (int i = 0; i < 5; i++) assert_true(x[i] == i + 1);
    assert_true(hb_rs_median_sorted(x, 5) == 3);
    assert_true(hb_rs_median_sorted(x, 4) == 2.5);
    assert_true(isnan(hb_rs_median_sorted(x, 0)));
    /* numpy.quantile([1,2,3,4,5], 0.1) = 1.4 ; 0.75 -> 4.0 */
    assert_true(fabs(hb_rs_quantile_sorted(x, 5, 0.1) - 1.4) < 1e-12);
    assert_true(fabs(hb_rs_quantile_sorted(x, 5, 0.75) - 4.0) < 1e-12);
    assert_true(hb_rs_quantile_sorted(x, 5, 0) == 1 && hb_rs_quantile_sorted(x, 5, 1) == 5);
}

/* scipy.stats.mannwhitneyu documentation example (Conover): males vs females.
 * method="exact": U = 17, p = 0.1111111111111111; method="asymptotic": p = 0.11134688653314041. */
static void test_mwu_scipy_example(void **state)
{
    (void)state;
    double m[] = { 19, 22, 16, 29, 24 }, f[] = { 20, 11, 17, 12 };
    hb_mwu r = { NAN, NAN, NAN, -1 };
    assert_int_equal(hb_rs_mann_whitney(m, 5, f, 4, HB_MWU_AUTO, &r), HB_OK);
    assert_true(r.exact == 1);
    assert_true(r.u == 17);
    assert_true(fabs(r.p - 0.1111111111111111) < 1e-12);
    r = (hb_mwu){ NAN, NAN, NAN, -1 };
    assert_int_equal(hb_rs_mann_whitney(m, 5, f, 4, HB_MWU_NORMAL, &r), HB_OK);
    assert_true(r.exact == 0);
    assert_true(fabs(r.p - 0.11134688653314041) < 1e-10);
    /* symmetric: swapping the samples gives U' = nx*ny - U and the same p */
    r = (hb_mwu){ NAN, NAN, NAN, -1 };
    assert_int_equal(hb_rs_mann_whitney(f, 4, m, 5, HB_MWU_AUTO, &r), HB_OK);
    assert_true(r.u == 3);
    assert_true(fabs(r.p - 0.1111111111111111) < 1e-12);
}

/* Enumerate every way to choose which nx of the pooled values belong to x; U of each split. */
static void enumerate_u(const double *pool, int n, int nx, double *us, size_t *count)
{
    *count = 0;
    for (uint32_t mask = 0; mask < (1u << n); mask++) {
        if (__builtin_popcount(mask) != nx) continue;
        double u = 0;
        for (int i = 0; i < n; i++) {
            if (!(mask & (1u << i))) continue;
            for (int j = 0; j < n; j++) {
                if (mask & (1u << j)) continue;
                u += pool[i] > pool[j] ? 1 : pool[i] == pool[j] ? 0.5 : 0;
            }
        }
        us[(*count)++] = u;
    }
}

static void test_mwu_exact_vs_enumeration(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 7);
    enum { NX = 6, NY = 8, N = NX + NY };
    double *us = malloc(4000 * sizeof *us);
    for (int trial = 0; trial < 20; trial++) {
        double pool[N];
        for (int i = 0; i < N; i++) pool[i] = hb_rng_normal(&g) + (i < NX ? 0.1 * trial : 0);
        size_t cnt;
        enumerate_u(pool, N, NX, us, &cnt);
        assert_true(cnt == 3003);
        hb_mwu r = { NAN, NAN, NAN, -1 };
        assert_int_equal(hb_rs_mann_whitney(pool, NX, pool + NX, NY, HB_MWU_EXACT, &r), HB_OK);
        /* the observed split is mask (1<<NX)-1; its U */
        double u0 = 0;
        for (int i = 0; i < NX; i++) for (int j = NX; j < N; j++) u0 += pool[i] > pool[j];
        assert_true(r.u == u0);
        double le = 0, ge = 0;
        for (size_t k = 0; k < cnt; k++) { le += us[k] <= u0; ge += us[k] >= u0; }
        double p = fmin(1, 2 * fmin(le, ge) / (double)cnt);
        assert_true(fabs(r.p - p) < 1e-12);
    }
    free(us);
}

/* With ties, var(U) over all splits equals the tie-corrected formula; recover sd from z. */
static void test_mwu_tie_variance(void **state)
{
    (void)state;
    enum { NX = 7, NY = 9, N = NX + NY };
    double pool[N] = { 1, 2, 2, 3, 3, 3, 4, 5, 1, 2, 3, 3, 6, 6, 7, 7 };
    double *us = malloc(12000 * sizeof *us);
    size_t cnt;
    enumerate_u(pool, N, NX, us, &cnt);
    assert_true(cnt == 11440);
    double mean = 0, var = 0;
    for (size_t k = 0; k < cnt; k++) mean += us[k];
    mean /= (double)cnt;
    for (size_t k = 0; k < cnt; k++) var += (us[k] - mean) * (us[k] - mean);
    var /= (double)cnt;
    assert_true(fabs(mean - NX * NY / 2.0) < 1e-9);
    hb_mwu r = { NAN, NAN, NAN, -1 };
    assert_int_equal(hb_rs_mann_whitney(pool, NX, pool + NX, NY, HB_MWU_AUTO, &r), HB_OK);
    assert_true(r.exact == 0); /* ties force the normal approximation */
    double d = fabs(r.u - mean) - 0.5;
    assert_true(d > 1);
    double sd = d / fabs(r.z);
    assert_true(fabs(sd * sd - var) / var < 1e-9);
    assert_true(fabs(r.p - erfc(fabs(r.z) / sqrt(2.0))) < 1e-12);
    assert_int_equal(hb_rs_mann_whitney(pool, NX, pool + NX, NY, HB_MWU_EXACT, &r), HB_EINVAL);
    assert_true(isnan(r.p));
    free(us);
}

static void test_mwu_degenerate_and_errors(void **state)
{
    (void)state;
    double a[] = { 1, 1, 1 }, b[] = { 1, 1 }, bad[] = { 1, NAN };
    hb_mwu r = { NAN, NAN, NAN, -1 };
    assert_int_equal(hb_rs_mann_whitney(a, 3, b, 2, HB_MWU_AUTO, &r), HB_OK);
    assert_true(r.p == 1);
    assert_int_equal(hb_rs_mann_whitney(a, 0, b, 2, HB_MWU_AUTO, &r), HB_EINVAL);
    assert_true(isnan(r.p));
    assert_int_equal(hb_rs_mann_whitney(a, 3, bad, 2, HB_MWU_AUTO, &r), HB_EINVAL);
    /* completely separated samples of 40 each: tiny p */
    double x[40], y[40];
    for (int i = 0; i < 40; i++) { x[i] = 100 + i; y[i] = i; }
    assert_int_equal(hb_rs_mann_whitney(x, 40, y, 40, HB_MWU_AUTO, &r), HB_OK);
    assert_true(r.u == 1600 && r.p < 1e-12 && r.z > 0);
}

/* Under H0 p is uniform: about 5% below 0.05; under a 1-sd shift with n=30 power is ~97%. */
static void test_mwu_null_and_power(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 99);
    int rej0 = 0, rej1 = 0, low = 0;
    const int T = 2000;
    double x[30], y[30];
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < 30; i++) { x[i] = hb_rng_normal(&g); y[i] = hb_rng_normal(&g); }
        hb_mwu r = { NAN, NAN, NAN, -1 };
        assert_int_equal(hb_rs_mann_whitney(x, 30, y, 30, HB_MWU_AUTO, &r), HB_OK);
        rej0 += r.p < 0.05;
        low += r.p < 0.5;
        for (int i = 0; i < 30; i++) x[i] += 1.0;
        assert_int_equal(hb_rs_mann_whitney(x, 30, y, 30, HB_MWU_AUTO, &r), HB_OK);
        rej1 += r.p < 0.05;
    }
    printf("# MWU null rejection at 0.05: %.3f, P(p<0.5) %.3f, power at 1 sd: %.3f\n",
           rej0 / (double)T, low / (double)T, rej1 / (double)T);
    assert_true(rej0 > 0.03 * T && rej0 < 0.07 * T);
    assert_true(low > 0.45 * T && low < 0.55 * T);
    assert_true(rej1 > 0.9 * T);
}

/* R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH") = 0.02 0.04 0.04 0.02 */
static void test_bh_known(void **state)
{
    (void)state;
    double p[] = { 0.01, 0.04, 0.03, 0.005 }, q[4] = { NAN, NAN, NAN, NAN };
    assert_int_equal(hb_rs_bh_adjust(p, 4, q), HB_OK);
    double e[] = { 0.02, 0.04, 0.04, 0.02 };
    for (int i = 0; i < 4; i++) assert_true(fabs(q[i] - e[i]) < 1e-15);
    /* NaN entries are skipped and m counts only the rest; values cap at 1 */
    double p2[] = { 0.5, NAN, 0.9, 0.01 }, q2[4] = { 0, 0, 0, 0 };
    assert_int_equal(hb_rs_bh_adjust(p2, 4, q2), HB_OK);
    assert_true(isnan(q2[1]));
    assert_true(fabs(q2[3] - 0.03) < 1e-15 && fabs(q2[0] - 0.75) < 1e-15 && fabs(q2[2] - 0.9) < 1e-15);
    /* in place */
    assert_int_equal(hb_rs_bh_adjust(p, 4, p), HB_OK);
    for (int i = 0; i < 4; i++) assert_true(fabs(p[i] - e[i]) < 1e-15);
}

static void test_bh_bruteforce(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 3);
    enum { M = 300 };
    double p[M], q[M];
    for (int t = 0; t < 20; t++) {
        for (int i = 0; i < M; i++) {
            p[i] = hb_rng_uniform(&g);
            if (i % 7 == 0) p[i] *= 1e-3;
            if (i % 50 == 0) p[i] = p[0]; /* ties */
            q[i] = NAN;
        }
        assert_int_equal(hb_rs_bh_adjust(p, M, q), HB_OK);
        for (int i = 0; i < M; i++) {
            /* q_i = min over j with p_j >= p_i of min(1, M p_j / rank_j), rank_j = #{k: p_k <= p_j} */
            double best = 1;
            for (int j = 0; j < M; j++) {
                if (p[j] < p[i]) continue;
                int rank = 0;
                for (int k = 0; k < M; k++) rank += p[k] <= p[j];
                double a = M * p[j] / rank;
                if (a < best) best = a;
            }
            assert_true(fabs(q[i] - best) < 1e-12);
        }
    }
}

static double lognormal(hb_rng *g, double median, double sigma)
{
    return median * exp(sigma * hb_rng_normal(g));
}

static void test_bootstrap_basic(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 11);
    double b[101], c[100];
    for (int i = 0; i < 101; i++) b[i] = lognormal(&g, 1e-3, 0.05);
    for (int i = 0; i < 100; i++) c[i] = lognormal(&g, 1.2e-3, 0.05);
    hb_rs_sort(b, 101);
    hb_rs_sort(c, 100);
    double r = NAN, lo = NAN, hi = NAN, r2 = NAN, lo2 = NAN, hi2 = NAN;
    assert_int_equal(hb_rs_bootstrap_ratio(b, 101, c, 100, 2000, 0.95, 5, &r, &lo, &hi), HB_OK);
    assert_true(r == hb_rs_median_sorted(c, 100) / hb_rs_median_sorted(b, 101));
    assert_true(lo < r && r < hi);
    assert_true(lo > 1.15 && hi < 1.25);
    /* deterministic for a seed, different (slightly) for another */
    assert_int_equal(hb_rs_bootstrap_ratio(b, 101, c, 100, 2000, 0.95, 5, &r2, &lo2, &hi2), HB_OK);
    assert_true(lo == lo2 && hi == hi2);
    assert_int_equal(hb_rs_bootstrap_ratio(b, 101, c, 100, 2000, 0.95, 6, &r2, &lo2, &hi2), HB_OK);
    assert_true(lo != lo2 || hi != hi2);
    assert_true(fabs(lo - lo2) < 0.01 && fabs(hi - hi2) < 0.01);
    /* a 99% CI is wider than the 95% one */
    assert_int_equal(hb_rs_bootstrap_ratio(b, 101, c, 100, 2000, 0.99, 5, &r2, &lo2, &hi2), HB_OK);
    assert_true(lo2 <= lo && hi2 >= hi);
    /* identical constant samples: a point CI at 1 */
    double k[10] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
    assert_int_equal(hb_rs_bootstrap_ratio(k, 10, k, 10, 500, 0.95, 1, &r, &lo, &hi), HB_OK);
    assert_true(r == 1 && lo == 1 && hi == 1);
    /* errors */
    assert_int_equal(hb_rs_bootstrap_ratio(b, 0, c, 100, 2000, 0.95, 5, &r, &lo, &hi), HB_EINVAL);
    assert_true(isnan(r) && isnan(lo) && isnan(hi));
    assert_int_equal(hb_rs_bootstrap_ratio(b, 101, c, 100, 10, 0.95, 5, &r, &lo, &hi), HB_EINVAL);
    assert_int_equal(hb_rs_bootstrap_ratio(b, 101, c, 100, 2000, 1.5, 5, &r, &lo, &hi), HB_EINVAL);
    double z[3] = { 0, 0, 0 };
    assert_int_equal(hb_rs_bootstrap_ratio(z, 3, c, 100, 2000, 0.95, 5, &r, &lo, &hi), HB_EINVAL);
}

/* The exact distribution of a resample median of x = {1..n} by enumerating all n^n resamples,
 * against the frequencies of both samplers. Medians are half-integers: index 2*median. */
static void test_bootstrap_medians_exact(void **state)
{
    (void)state;
    const int N = 200000;
    double *out = malloc((size_t)N * sizeof *out);
    for (int n = 1; n <= 7; n++) {
        double x[7], prob[15] = { 0 };
        for (int i = 0; i < n; i++) x[i] = i + 1;
        long total = 1;
        for (int i = 0; i < n; i++) total *= n;
        int idx[7];
        for (long r = 0; r < total; r++) {
            long v = r;
            int cnt[7] = { 0 };
            for (int i = 0; i < n; i++) { cnt[v % n]++; v /= n; }
            int k = 0;
            for (int i = 0; i < n; i++) for (int c = 0; c < cnt[i]; c++) idx[k++] = i;
            double med = (n & 1) ? x[idx[n / 2]] : 0.5 * (x[idx[n / 2 - 1]] + x[idx[n / 2]]);
            prob[(int)llround(2 * med)] += 1.0 / (double)total;
        }
        for (int m = HB_BOOT_ORDER_STAT; m <= HB_BOOT_DIRECT; m++) {
            for (int i = 0; i < N; i++) out[i] = NAN;
            assert_int_equal(hb_rs_bootstrap_medians(x, (size_t)n, N, 77 + (uint64_t)n, (hb_boot_method)m, out), HB_OK);
            double freq[15] = { 0 };
            for (int i = 0; i < N; i++) {
                assert_true(out[i] >= 1 && out[i] <= n);
                double h = 2 * out[i];
                assert_true(h == floor(h));
                freq[(int)h] += 1.0 / N;
            }
            for (int h = 0; h < 15; h++)
                if (fabs(freq[h] - prob[h]) > 0.005)
                    fail_msg("n=%d method=%d median %.1f: frequency %.4f, exact %.4f", n, m, h / 2.0, freq[h], prob[h]);
        }
    }
    free(out);
}

/* Larger n: both samplers agree on the quantiles of the resample median. */
static void test_bootstrap_medians_agree(void **state)
{
    (void)state;
    const int N = 100000;
    double *a = malloc((size_t)N * sizeof *a), *b = malloc((size_t)N * sizeof *b);
    size_t ns[] = { 20, 99, 100, 301, 1000 };
    hb_rng g;
    hb_rng_seed(&g, 5);
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        size_t n = ns[t];
        double *x = malloc(n * sizeof *x);
        for (size_t i = 0; i < n; i++) x[i] = lognormal(&g, 1, 0.2);
        hb_rs_sort(x, n);
        assert_int_equal(hb_rs_bootstrap_medians(x, n, N, 1, HB_BOOT_ORDER_STAT, a), HB_OK);
        assert_int_equal(hb_rs_bootstrap_medians(x, n, N, 2, HB_BOOT_DIRECT, b), HB_OK);
        hb_rs_sort(a, (size_t)N);
        hb_rs_sort(b, (size_t)N);
        double spread = hb_rs_quantile_sorted(b, (size_t)N, 0.975) - hb_rs_quantile_sorted(b, (size_t)N, 0.025);
        double qs[] = { 0.025, 0.1, 0.5, 0.9, 0.975 };
        for (size_t q = 0; q < 5; q++) {
            double qa = hb_rs_quantile_sorted(a, (size_t)N, qs[q]), qb = hb_rs_quantile_sorted(b, (size_t)N, qs[q]);
            if (fabs(qa - qb) > 0.04 * spread)
                fail_msg("n=%zu q=%.3f: order-stat %.6f direct %.6f (spread %.6f)", n, qs[q], qa, qb, spread);
        }
        free(x);
    }
    /* a big n builds a sane table (no NaN, values inside the sample) */
    size_t n = 4000;
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = (double)i;
    assert_int_equal(hb_rs_bootstrap_medians(x, n, 1000, 3, HB_BOOT_ORDER_STAT, a), HB_OK);
    for (int i = 0; i < 1000; i++) assert_true(a[i] >= 1700 && a[i] <= 2300);
    free(x);
    free(a);
    free(b);
}

/* Coverage: the 95% CI contains the true ratio of population medians in about 95% of trials
 * (percentile bootstrap of a median is slightly conservative/liberal with small n; accept 89-99%). */
static void test_bootstrap_coverage(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 2024);
    const int T = 400;
    int cover = 0;
    double b[60], c[45];
    double width = 0;
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < 60; i++) b[i] = lognormal(&g, 2.0, 0.1);
        for (int i = 0; i < 45; i++) c[i] = lognormal(&g, 2.2, 0.1);
        hb_rs_sort(b, 60);
        hb_rs_sort(c, 45);
        double r = NAN, lo = NAN, hi = NAN;
        assert_int_equal(hb_rs_bootstrap_ratio(b, 60, c, 45, 1000, 0.95, (uint64_t)t, &r, &lo, &hi), HB_OK);
        cover += lo <= 1.1 && 1.1 <= hi;
        width += hi - lo;
    }
    printf("# bootstrap 95%% CI coverage %.3f, mean width %.4f\n", cover / (double)T, width / T);
    assert_true(cover >= 0.89 * T && cover <= 0.99 * T);
}

/* The cost that matters for `hybench compare`: 2000 resamples of 100+100 samples. */
static void test_bootstrap_speed(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 1);
    double b[100], c[100];
    for (int i = 0; i < 100; i++) { b[i] = lognormal(&g, 1, 0.05); c[i] = lognormal(&g, 1, 0.05); }
    hb_rs_sort(b, 100);
    hb_rs_sort(c, 100);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int K = 300;
    for (int k = 0; k < K; k++) {
        double r, lo, hi;
        assert_int_equal(hb_rs_bootstrap_ratio(b, 100, c, 100, 2000, 0.95, (uint64_t)k, &r, &lo, &hi), HB_OK);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double per = ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / K;
    printf("# bootstrap 2000 x (100+100): %.3f ms per case (one thread)\n", per * 1e3);
    assert_true(per < 20e-3); /* generous: the gate needs thousands of cases in seconds */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_median_quantile),
        cmocka_unit_test(test_mwu_scipy_example),
        cmocka_unit_test(test_mwu_exact_vs_enumeration),
        cmocka_unit_test(test_mwu_tie_variance),
        cmocka_unit_test(test_mwu_degenerate_and_errors),
        cmocka_unit_test(test_mwu_null_and_power),
        cmocka_unit_test(test_bh_known),
        cmocka_unit_test(test_bh_bruteforce),
        cmocka_unit_test(test_bootstrap_basic),
        cmocka_unit_test(test_bootstrap_medians_exact),
        cmocka_unit_test(test_bootstrap_medians_agree),
        cmocka_unit_test(test_bootstrap_coverage),
        cmocka_unit_test(test_bootstrap_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
