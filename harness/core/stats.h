/*
 * stats.h - descriptive statistics of timing samples (seconds) and the clock.
 */
#ifndef HB_STATS_H
#define HB_STATS_H
#include <stddef.h>

typedef struct hb_stats {
    size_t n;
    double min, max, mean, median, p10, p90;
    double mad;      /* median absolute deviation from the median (unscaled) */
    double stddev;   /* sample standard deviation (n-1), Welford */
    double cv;       /* stddev / mean */
    double ci_lo, ci_hi; /* 95% distribution-free CI of the median (binomial order statistics) */
} hb_stats;

/* Compute every field from x[0..n-1] (not modified; a sorted copy is made internally).
 * n == 0 gives all zeros. Percentiles use linear interpolation between order statistics
 * (Hyndman & Fan type 7, the default of R and NumPy). */
void hb_stats_compute(const double *x, size_t n, hb_stats *out);

/* The 95% CI of the median from sorted x[0..n-1]: order statistics x[j], x[k] with
 * j = floor(n/2 - 1.96 sqrt(n)/2), k = ceil(1 + n/2 + 1.96 sqrt(n)/2) (1-based; normal approximation
 * to the binomial(n, 1/2), Conover "Practical Nonparametric Statistics" 3rd ed., sec. 3.2), clamped.
 * For n < 6 the CI is [min, max]. */
void hb_median_ci(const double *sorted, size_t n, double *lo, double *hi);

/* Quantile q in [0,1] of sorted x (type 7). */
double hb_quantile_sorted(const double *sorted, size_t n, double q);

/* Monotonic clock in seconds (CLOCK_MONOTONIC). */
double hb_now(void);
/* Clock resolution (clock_getres) and the measured cost of one hb_now() call, in nanoseconds. */
void hb_clock_check(double *resolution_ns, double *overhead_ns);
#endif
