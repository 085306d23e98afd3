/*
 * mde.h - the minimum detectable effect (MDE) of a case: the smallest slowdown that `hybench compare`
 * or `hybench ab` would flag in it with 80% probability, given the spread the run measured and the
 * rounds or samples it had. Written once here; compare.c and ab.c call it, and compare_write.c
 * prints its summary per op family (docs/compare.md, "Three verdicts").
 *
 * On the log-ratio scale, with se the standard error of the case's mean log ratio:
 *   compare (two runs' samples):  se = sqrt(s_b^2 / n_b + s_c^2 / n_c), s = the spread of log(sample)
 *   ab (paired rounds):           se = s / sqrt(n), s = the spread of the n per-round log ratios
 * (s: 1.4826 x the median absolute deviation, hb_mde_spread), and
 *   z_a = z(1 - alpha' / 2), alpha' = alpha k / m: Benjamini-Hochberg's bar for the k-th smallest of m
 *         p-values (Benjamini & Hochberg 1995): k = 1 for a change of one case alone (each case's MDE),
 *         k = the family's tested cases for a change of a whole op family (the family's MDE)
 *   z_b = z(1 - beta), beta = 0.2 (80% power)
 *   z_c = z((1 + confidence) / 2), the bootstrap CI's quantile
 *   test: (z_a + z_b) * sqrt(pi / 3) * se
 *         the normal-approximation sample size of a two-sided test at level alpha' and power 1 - beta,
 *         MDE = (z_{1-alpha/2} + z_{1-beta}) sigma / sqrt(n) (Chow, Shao & Wang, "Sample Size
 *         Calculations in Clinical Research", 2008, sec. 3.1-3.2), for a rank test (Wilcoxon
 *         signed-rank, Mann-Whitney U) whose asymptotic relative efficiency against the t test is 3/pi
 *         under normality (Hodges & Lehmann 1956; Lehmann, "Nonparametrics", 1975, ch. 2 and 4):
 *         n rounds of the rank test are worth n 3/pi of the t test
 *   rule "ci" (the default): log(1 + t) + (z_c + z_b) * sqrt(pi / 2) * se
 *         the whole CI of the median ratio above 1 + t; a sample median's standard error is
 *         sqrt(pi / 2) sigma / sqrt(n) (Kendall & Stuart, vol. 1, 10.10)
 *   rule "point": log(1 + t) + z_b * sqrt(pi / 2) * se (the median ratio above 1 + t)
 *   MDE = max(test, rule), returned as a relative change exp(MDE) - 1
 * and no change at all (INFINITY) when the test cannot reach alpha' whatever the data: its smallest
 * attainable p, p_floor, exceeds alpha' (the exact signed-rank test of n rounds: 2 / 2^n; the exact
 * Mann-Whitney test: 2 / C(n_b + n_c, n_b)). These are approximations of the gate (the bootstrap, BH
 * over the other cases' actual p-values and the whole-run normalisation are not modelled); they say
 * which slowdowns a run could not have seen, not a power the gate guarantees.
 */
#ifndef HB_MDE_H
#define HB_MDE_H
#include <stddef.h>

/* The test's part: power 80%. */
#define HB_MDE_POWER 0.8

typedef struct hb_mde_in {
    double se;         /* standard error of the case's mean log ratio (see above); > 0 and finite */
    double alpha;      /* the gate's false discovery rate (0.05) */
    size_t m;          /* how many cases Benjamini-Hochberg runs over (>= 1) */
    size_t k;          /* how many of them change together (1..m; 0 counts as 1) */
    double confidence; /* the bootstrap CI's level (0.95) */
    double threshold;  /* t: the case's threshold, a fraction (0.02) */
    int rule_point;    /* 0: rule "ci"; 1: rule "point" */
    double p_floor;    /* the test's smallest attainable p for this case; 0 when unbounded */
} hb_mde_in;

/* The MDE of one case as a relative change (0.05: a 5% slowdown); INFINITY when p_floor > alpha k / m;
 * NAN when se, alpha, m or confidence are out of range. Pure; no errors beyond NAN. */
double hb_mde(const hb_mde_in *in);

/* The robust spread of x[n]: 1.4826 x the median absolute deviation from the median (a consistent
 * estimate of sigma for normal data), or the sample standard deviation when that is 0 (more than half
 * the values equal). x is left unchanged (a copy is sorted). NAN for n < 2 or out of memory. */
double hb_mde_spread(const double *x, size_t n);

/* The smallest p of the exact signed-rank test over n nonzero paired differences, 2 / 2^n (1 when
 * n <= 1); and of the exact Mann-Whitney test of nx and ny samples, 2 / C(nx + ny, nx) (capped at 1).
 * Units: probabilities. */
double hb_mde_floor_signed_rank(size_t n);
double hb_mde_floor_mann_whitney(size_t nx, size_t ny);
#endif
