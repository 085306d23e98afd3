/*
 * ab.h - the interleaved A/B gate (`hybench ab`, docs/compare.md "hybench ab"): the statistics of
 * rounds in which two builds (BASE and CUR) each ran the same case list once, in fresh processes,
 * in alternating and randomised order. cli/cmd_ab.c runs the rounds; this file decides.
 *
 * Per case and round r where both builds measured the case `ok`:
 *   m_base[r], m_cur[r] = median (round_quantile) of every raw sample of samples.<metric> in that
 *                         round's record
 *   d[r]                = log(m_cur[r] / m_base[r])          (the paired, per-round log ratio)
 *   s[b][r]             = median of d[r] over the ok cases of backend b (at least 10): the whole-run
 *                         shift of that backend's process in round r (co-tenants, frequency, the
 *                         host's minute), which pairing within a round does not remove
 *   d'[r]               = d[r] - s[b][r]  (normalize; d[r] itself when normalize is 0, and in a
 *                         round that ran a subset of the cases by key (meta options.cases_from:
 *                         the gate's later rounds run only the cases not yet cleared), whose cases
 *                         are no sample of the whole run)
 * and over the rounds, from d':
 *   ratio      = exp(median d)                               (> 1: CUR slower)
 *   ci_lo/hi   = percentile bootstrap over rounds (Efron & Tibshirani 1993, ch. 13) of exp(median d)
 *   p          = two-sided Wilcoxon signed-rank test of d against 0 (exact below 26 rounds without
 *                ties, else the normal approximation with tie and continuity corrections)
 *   q          = p adjusted by Benjamini-Hochberg over every tested case (hb_rs_bh_adjust)
 *   regression : q <= alpha and ratio > 1 + t and ci_lo > 1 + t        (rule "point": ci_lo > 1)
 *   improvement: q <= alpha and ratio < 1/(1+t) and ci_hi < 1/(1+t)    (rule "point": ci_hi < 1)
 * A change of every case alike is not lost by the normalisation: each backend gets one more case,
 * key "(whole run)|BACKEND", op "(whole run)", tested the same way from s[b][.] (ratio
 * exp(median s), in BH with the others), which fails the gate as a regression like any case.
 * Status over the rounds: a case is `ok` on a side only when every round measured it ok; the first
 * wrong / crashed / other record otherwise stands for that side (then the verdicts of compare.h:
 * wrong, crashed, lost, missing, ... fail the gate as in `hybench compare`). A case present in a
 * round of BASE and absent from the same round of CUR is `missing`.
 *
 * Each tested case's mde (analysis/mde.h) is from the spread of its d over its n rounds, se = s /
 * sqrt(n), with the exact signed-rank test's floor 2 / 2^n; res->rounds and res->min_rounds are set
 * (fewer rounds than the minimum: the outcome is inconclusive unless a case fails).
 * The outcome is an hb_cmp_result, so compare's writers (Markdown, JSON, JUnit) and exit codes serve
 * it unchanged; hb_cmp_case.n_base/n_cur count every sample of every round, med_base/med_cur are
 * the medians over rounds of the per-round medians, and base/cur point to one round's record (the
 * round whose d is the median one, or the first non-ok record).
 */
#ifndef HB_AB_H
#define HB_AB_H
#include "analysis/compare.h"

typedef struct hb_ab_options {
    hb_cmp_options cmp;   /* metric, threshold(s), alpha, confidence, resamples, seed, min_delta,
                             allow_missing, max_rows; rule_point 0 (default, as compare): the
                             whole CI beyond 1 + t; 1: the point ratio beyond the threshold and
                             the CI beyond 1 (flags more noise: docs/compare.md) */
    int min_rounds;       /* no early stop before this many rounds (default 8) */
    int normalize;        /* 1 (default): each case's d[r] less its backend's whole-run shift s[b][r] */
    int whole_run;        /* 1 (default): one "(whole run)|BACKEND" case per backend tests s[b][.] */
    double round_quantile; /* each round's statistic: this quantile of its samples (0.5, the median,
                              default; 0: the minimum, least touched by co-tenants) */
} hb_ab_options;

/* Defaults: hb_cmp_options_default, then threshold 2%, rule_point 0, min_samples 1 (per round),
 * min_rounds 8. */
void hb_ab_options_default(hb_ab_options *o);

/* Decide from nrounds rounds: base[r] and cur[r] are the results files of round r (loaded with
 * hb_run_load; they must outlive res, whose cases borrow their records). res is filled as by
 * hb_compare_runs (free with hb_cmp_result_free). *undecided (may be NULL) gets the number of
 * undecided cases (hb_cmp_case_undecided: too few rounds yet, or tested and neither a gate failure nor
 * cleared, ci_hi <= 1 + t); 0 means the gate could stop.
 * Errors: HB_EINVAL (nrounds < 1, bad options; reason in err), HB_ENOMEM. */
/* med_base/med_cur of the whole-run cases are NAN; min_delta applies to |med_cur - med_base| of the
 * others when > 0. */
hb_status hb_ab_decide(const hb_run *const *base, const hb_run *const *cur, int nrounds, const hb_ab_options *o,
                       hb_cmp_result *res, size_t *undecided, char *err, size_t errlen);

/* Undecided cases: hb_cmp_case_undecided (compare.h); the gate stops early when no case is, its
 * subset rounds run these (cmd_ab.c), and the outcome is inconclusive while any is. */

/* Two-sided Wilcoxon signed-rank test of d[n] against a zero median (Wilcoxon 1945). Zeros are
 * dropped (Wilcoxon's convention, scipy's zero_method="wilcox"); ranks of |d| with ties averaged.
 * Exact null distribution (all 2^n sign patterns, counted by dynamic programming over the rank
 * sum) when n <= 25 and there are no ties, else the normal approximation: mean n(n+1)/4, variance
 * n(n+1)(2n+1)/24 - sum(t^3 - t)/48 over tie groups, continuity correction 0.5 (as
 * scipy.stats.wilcoxon(..., method="approx", correction=True)). Returns p in [0, 1]; 1 when no
 * nonzero difference is left; *wplus (may be NULL) gets the sum of the ranks of the positive d.
 * NAN when d has a non-finite value or memory runs out. */
double hb_ab_signed_rank_p(const double *d, size_t n, double *wplus);

/* Percentile bootstrap CI of exp(median(d)) over d[n] (resampling the n values with replacement,
 * `resamples` times, RNG seeded with seed; median as hb_rs_median_sorted; type-7 quantiles at
 * (1 -+ conf)/2). HB_EINVAL for n == 0, resamples < 1 or conf outside (0,1); HB_ENOMEM. */
hb_status hb_ab_bootstrap_median_ratio(const double *d, size_t n, int resamples, double conf, uint64_t seed,
                                       double *lo, double *hi);

/* Write one build's results file of the whole A/B run to fd (JSONL, docs/results-schema.md), so that
 * `hybench report` and `hybench compare` read it: the meta record of its first round with "ab" (*ab,
 * results/record.h hb_rec_ab, borrowed; compare tells interleaved pairs by it), the backend records of the first
 * round, one case record per case of res on that side (side 0: BASE, 1: CUR): the whole record of
 * the round res's case points to (the round whose ratio is the median one; the worst status when
 * not ok everywhere), with "pass_medians": {metric: [each round's median, null where not ok]} and
 * "ab_rounds"; then the end record of the last round read.
 * runs[nrounds]: that side's rounds as res was decided from them (loaded with fewer fields);
 * full_paths[nrounds]: their files, re-read whole one at a time. HB_OK, HB_EINVAL (no round, or a
 * file that cannot be read: message on stderr), HB_ENOMEM, HB_EDEVICE (a write failed). */
hb_status hb_ab_write_merged(int fd, const hb_run *const *runs, const char *const *full_paths, int nrounds,
                             const hb_cmp_result *res, int side, const char *metric, const hb_rec_ab *ab);
/* The gate's JSON verdict (`hybench ab --json`): compare's JSON of res (compare.h hb_cmp_to_json,
 * base/cur the merged runs, o its options) with the "ab" object *ab (results/record.h
 * hb_rec_ab_summary, borrowed) as its member "ab". New reference; NULL when out of memory. */
json_t *hb_ab_verdict_json(const hb_cmp_result *res, const hb_run *base, const hb_run *cur, const hb_cmp_options *o,
                           const hb_rec_ab_summary *ab);
#endif
