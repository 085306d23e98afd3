/*
 * rstats.h - robust two-sample statistics for regression gating (hybench compare, trend).
 *
 *   - a small deterministic RNG (xoshiro256**, seeded through splitmix64),
 *   - the median and type-7 quantiles,
 *   - a percentile-bootstrap confidence interval of the ratio of medians cur/base,
 *   - the Mann-Whitney U test (Wilcoxon rank-sum), two-sided, with tie correction and continuity
 *     correction in the normal approximation, exact for small tie-free samples,
 *   - Benjamini-Hochberg adjusted p-values (false discovery rate across many cases).
 *
 * Every function is pure (no globals, no I/O) and thread-safe: compare.c calls them from OpenMP
 * threads, one case per iteration. Samples are durations in seconds but nothing here depends on the
 * unit. Inputs must be finite; NaN or infinite samples give HB_EINVAL.
 */
#ifndef HB_RSTATS_H
#define HB_RSTATS_H
#include <stddef.h>
#include <stdint.h>
#include "core/hybench.h"

/* ---- random numbers ---- */
/* xoshiro256** 1.0 (Blackman & Vigna, https://prng.di.unimi.it/xoshiro256starstar.c), state seeded
 * with four outputs of splitmix64 (same page) so that any 64-bit seed, 0 included, is valid. */
typedef struct hb_rng { uint64_t s[4]; } hb_rng;
void hb_rng_seed(hb_rng *r, uint64_t seed);
uint64_t hb_rng_next(hb_rng *r);
/* Uniform double in [0, 1) with 53 random bits. */
double hb_rng_uniform(hb_rng *r);
/* Standard normal deviate (Box-Muller, one of the pair discarded). */
double hb_rng_normal(hb_rng *r);
/* 64-bit FNV-1a hash of a NUL-terminated string (for per-case seeds that do not depend on the
 * order in which cases are processed). */
uint64_t hb_hash64(const char *s);

/* ---- order statistics ---- */
/* Sort x[0..n-1] ascending in place (qsort; NaN must not be present). */
void hb_rs_sort(double *x, size_t n);
/* Median of sorted x: the middle value, or the mean of the two middle values for even n.
 * NAN for n == 0. */
double hb_rs_median_sorted(const double *sorted, size_t n);
/* Quantile q in [0,1] of sorted x, linear interpolation between order statistics (Hyndman & Fan
 * type 7, R's and NumPy's default). NAN for n == 0. */
double hb_rs_quantile_sorted(const double *sorted, size_t n, double q);

/* ---- bootstrap CI of the ratio of medians ---- */
/* Percentile bootstrap (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13) of
 * R = median(cur) / median(base). Each of `resamples` replicates draws nb values from base and nc
 * from cur with replacement, independently, and takes the ratio of the two resample medians (the
 * same median definition as hb_rs_median_sorted); lo/hi are the (1-conf)/2 and (1+conf)/2 type-7
 * quantiles of the replicates. The RNG is seeded with `seed`, so the result is deterministic.
 *   base_sorted[nb], cur_sorted[nc]: samples, sorted ascending (hb_rs_sort), medians > 0.
 *   resamples: 100..1000000 (typical 2000); conf in (0,1), e.g. 0.95.
 * Outputs *ratio (point estimate from the full samples), *lo, *hi.
 * Resample medians are drawn with HB_BOOT_AUTO (below): for the usual n <= resamples, from the
 * exact distribution of the resample's middle order statistics, O(n^2) set-up plus O(log n) per
 * replicate, about 0.1 ms for n = 100 and 2000 resamples.
 * Errors: HB_EINVAL for nb or nc == 0 or > 2^31, a non-positive median, resamples or conf out of
 * range; HB_ENOMEM when scratch memory cannot be allocated. Outputs are NAN on error. */
hb_status hb_rs_bootstrap_ratio(const double *base_sorted, size_t nb, const double *cur_sorted,
                                size_t nc, int resamples, double conf, uint64_t seed,
                                double *ratio, double *lo, double *hi);

/* How resample medians are drawn. Both give the same distribution (the resample median of the
 * nonparametric bootstrap); they differ in cost. */
typedef enum hb_boot_method {
    HB_BOOT_AUTO,        /* ORDER_STAT when n <= resamples and n <= 4096, else DIRECT */
    HB_BOOT_ORDER_STAT,  /* exact distribution of the middle order statistic(s), O(n^2) once, then
                            O(log n) per resample (rstats.c explains the formulas) */
    HB_BOOT_DIRECT       /* draw n indices, histogram, read the middle: O(n) per resample */
} hb_boot_method;

/* Fill out[resamples] with the medians of `resamples` bootstrap resamples of sorted[n] (median as
 * in hb_rs_median_sorted), RNG seeded with seed. For tests and for callers that need the
 * replicates. Errors: HB_EINVAL (n == 0, resamples < 1, NULL), HB_ENOMEM. */
hb_status hb_rs_bootstrap_medians(const double *sorted, size_t n, int resamples, uint64_t seed,
                                  hb_boot_method method, double *out);

/* ---- Mann-Whitney U ---- */
typedef enum hb_mwu_method {
    HB_MWU_AUTO,    /* exact when there are no ties and nx, ny <= 30 and nx*ny <= 400, else normal */
    HB_MWU_EXACT,   /* exact null distribution; HB_EINVAL if there are ties or nx*ny > 10000 */
    HB_MWU_NORMAL   /* normal approximation, tie- and continuity-corrected */
} hb_mwu_method;

typedef struct hb_mwu {
    double u;       /* U of the first sample x: #(x_i > y_j) + 0.5 #(x_i == y_j), in [0, nx*ny] */
    double z;       /* normal score of U (tie- and continuity-corrected, signed: > 0 when x tends
                       to be larger); 0 when exact or degenerate */
    double p;       /* two-sided p-value in [0, 1] */
    int exact;      /* 1 when p comes from the exact null distribution */
} hb_mwu;

/* Two-sided Mann-Whitney U test of x[nx] against y[ny] (any order; not modified).
 * Exact: the null distribution of U counted with the generating function
 *   prod_{i=1..nx} (1 - q^(ny+i)) / (1 - q^i)   (the Gaussian binomial [nx+ny, nx]_q,
 * Mann & Whitney 1947), p = min(1, 2 min(P(U <= u), P(U >= u))).
 * Normal: var U = nx ny / 12 * ((N+1) - sum(t^3 - t) / (N (N-1))), N = nx+ny, t = size of each tie
 * group (Hollander & Wolfe, "Nonparametric Statistical Methods", 2nd ed., sec. 4.1), continuity
 * correction 0.5 toward the mean; identical to scipy.stats.mannwhitneyu(method="asymptotic",
 * use_continuity=True). When every value is tied (variance 0) p = 1.
 * Errors: HB_EINVAL for nx or ny == 0, a non-finite value, or an impossible exact request;
 * HB_ENOMEM. *out is set to {NAN, NAN, NAN, 0} on error. */
hb_status hb_rs_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                             hb_mwu_method method, hb_mwu *out);

/* ---- Benjamini-Hochberg ---- */
/* Adjusted p-values (R's p.adjust(p, method = "BH")) of p[m]:
 *   q_(i) = min_{j >= i} min(1, m p_(j) / j)  over the ascending order p_(1) <= ... <= p_(m)
 * (Benjamini & Hochberg 1995, JRSS B 57:289). Rejecting every hypothesis with q <= alpha controls
 * the false discovery rate at alpha for independent or positively dependent tests.
 * NaN entries are left out of m and get q = NaN. q may alias p.
 * Errors: HB_ENOMEM (q untouched). */
hb_status hb_rs_bh_adjust(const double *p, size_t m, double *q);

/* Standard normal upper tail P(Z > z) = erfc(z / sqrt 2) / 2. */
double hb_rs_normal_sf(double z);
/* Standard normal quantile z_p, P(Z <= z_p) = p, for p in (0, 1): Wichura's algorithm AS 241
 * (PPND16, Applied Statistics 37:477, 1988), relative error about 1e-16. -INFINITY / INFINITY at p 0
 * and 1, NAN outside [0, 1]. */
double hb_rs_normal_quantile(double p);
#endif
