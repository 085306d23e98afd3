/*
 * changepoint.h - steps and drifts in one case's nightly series (`hybench trend`, docs/history.md).
 *
 * Method: binary segmentation with two rank tests, which need no noise model (a VM's night-to-night
 * noise is heavy-tailed: docs/history.md quotes 5% median, 24% at the 90th percentile, of log time
 * between processes) and whose false-alarm rate under a stable series does not depend on the noise's
 * distribution or size:
 *   - Pettitt's test (A. N. Pettitt, "A non-parametric approach to the change-point problem",
 *     Applied Statistics 28(2), 1979): U_t = sum_{i<=t} sum_{j>t} sign(x_i - x_j), K = max |U_t|,
 *     p ~= 2 exp(-6 K^2 / (m^3 + m^2)) for a segment of m nights; the argmax t is the night before
 *     the change;
 *   - the Mann-Kendall trend test (Mann 1945, Kendall 1975): S = sum_{i<j} sign(x_j - x_i),
 *     Var S = m (m-1) (2m+5) / 18, two-sided normal p; it catches slow drifts that no single
 *     split separates well (1% a night over 20 nights).
 * A segment is split when either test's p is below its alpha (alpha, alpha_trend) and the change is at least min_change; the change is
 * called a drift when a hinge (flat, then a straight line in log time to the segment's end) fits the
 * segment's log times with a smaller residual sum of squares than the best step does, else a step.
 * Segmentation goes on in the parts before and after a step and in the part before a drift. This is
 * the rolling E-Divisive idea of Daly et al. (ICPE 2020) with rank statistics in place of energy
 * distances: O(m log m) per test, so 2000 cases of 365 nights take well under a second.
 */
#ifndef HB_CHANGEPOINT_H
#define HB_CHANGEPOINT_H
#include <stddef.h>

typedef enum hb_cp_kind { HB_CP_STEP = 1, HB_CP_DRIFT = 2 } hb_cp_kind;

typedef struct hb_change {
    hb_cp_kind kind;
    size_t begin;   /* index (into the series given) of the first night that changed */
    size_t end;     /* step: begin; drift: the last night of the segment the drift was fitted on */
    double size;    /* relative change of the time, after / before - 1 (+0.05: 5% slower). Step: ratio of
                       the medians of the two parts; drift: exp(slope * nights) - 1 from begin-1 to end */
    double rate;    /* drift: relative change per night, exp(slope) - 1; step: 0 */
    double p;       /* the smaller p value of the two tests on the segment where it was found */
} hb_change;

typedef struct hb_cp_opts {
    double alpha;       /* significance of Pettitt's step test, default 0.001 */
    double alpha_trend; /* significance of the Mann-Kendall trend test, default 0.005: a drift spreads
                           its evidence over the whole series, and at this VM's night-to-night noise
                           (5% sd of log time) 0.001 catches a 1%-a-night drift within 20 nights in
                           64% of series, 0.005 in 88% (99.9% within 25), while a stable series of 100
                           nights is still flagged in under 1% of cases (tests/test_changepoint.c) */
    double min_change;  /* smallest |size| reported, default 0.02 (2%) */
    size_t min_seg;     /* fewest nights on each side of a step, default 3: a step on one of the last
                           min_seg-1 nights is reported only once that many nights followed it */
} hb_cp_opts;

void hb_cp_defaults(hb_cp_opts *o);

/* Changes in x[0..n-1], the natural logs of one case's nightly median times, oldest first, all
 * finite (a caller drops missing nights and maps the indices back). Writes at most maxout changes to
 * out, ordered by begin; returns how many it found (which may exceed maxout: only maxout are written).
 * Allocates scratch of O(n) and frees it; returns 0 (and writes nothing) when n < 2 * min_seg or on
 * out of memory. */
size_t hb_changepoints(const double *x, size_t n, const hb_cp_opts *o, hb_change *out, size_t maxout);

/* The tests alone, on x[0..n-1] (any finite values), for tests and callers that want them.
 * Pettitt: returns p, *t the number of values before the most likely change (min_seg <= *t <= n -
 * min_seg; 0 when n < 2 * min_seg, p 1). Mann-Kendall: returns the two-sided p, *s the statistic S. */
double hb_cp_pettitt(const double *x, size_t n, size_t min_seg, size_t *t);
double hb_cp_mann_kendall(const double *x, size_t n, double *s);
#endif
