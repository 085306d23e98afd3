/* stats.c - descriptive statistics of timing samples and the monotonic clock (core/stats.h). */
#include "core/stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hb_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0) return 0;
    if (q <= 0) return s[0];
    if (q >= 1) return s[n - 1];
    double h = (double)(n - 1) * q;
    size_t i = (size_t)floor(h);
    double f = h - (double)i;
    return i + 1 < n ? s[i] + f * (s[i + 1] - s[i]) : s[i];
}

void hb_median_ci(const double *s, size_t n, double *lo, double *hi)
{
    if (n == 0) { *lo = *hi = 0; return; }
    if (n < 6) { *lo = s[0]; *hi = s[n - 1]; return; }
    double half = 1.96 * sqrt((double)n) / 2.0;
    long j = (long)floor((double)n / 2.0 - half);       /* 1-based lower rank */
    long k = (long)ceil(1.0 + (double)n / 2.0 + half);  /* 1-based upper rank */
    if (j < 1) j = 1;
    if (k > (long)n) k = (long)n;
    *lo = s[j - 1];
    *hi = s[k - 1];
}

void hb_stats_compute(const double *x, size_t n, hb_stats *o)
{
    memset(o, 0, sizeof *o);
    if (n == 0) return;
    double *s = malloc(n * sizeof *s);
    if (!s) return;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    o->n = n;
    o->min = s[0];
    o->max = s[n - 1];
    o->median = hb_quantile_sorted(s, n, 0.5);
    o->p10 = hb_quantile_sorted(s, n, 0.10);
    o->p90 = hb_quantile_sorted(s, n, 0.90);
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) { /* Welford */
        double d = x[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (x[i] - mean);
    }
    o->mean = mean;
    o->stddev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
    o->cv = mean > 0 ? o->stddev / mean : 0;
    for (size_t i = 0; i < n; i++) s[i] = fabs(x[i] - o->median);
    qsort(s, n, sizeof *s, cmp_double);
    o->mad = hb_quantile_sorted(s, n, 0.5);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    hb_median_ci(s, n, &o->ci_lo, &o->ci_hi);
    free(s);
}

double hb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void hb_clock_check(double *resolution_ns, double *overhead_ns)
{
    struct timespec r;
    clock_getres(CLOCK_MONOTONIC, &r);
    *resolution_ns = (double)r.tv_sec * 1e9 + (double)r.tv_nsec;
    enum { N = 10000 };
    double t0 = hb_now(), t = t0;
    for (int i = 0; i < N; i++) t = hb_now();
    *overhead_ns = (t - t0) / N * 1e9;
}
