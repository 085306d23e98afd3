/*
 * compare.h - regression gating (`hybench compare`): compare.c matches and judges, compare_write.c
 * writes the outcome. trend.h and baseline.h build on it. docs/compare.md describes the statistics
 * and the command lines; this header the C interface used by the commands and tests.
 *
 * A comparison matches the case records of two results files (docs/results-schema.md) by their
 * "key" ("op|shape|backend|mode|route|dtype"; the n-th repeat of a key in a file matches the n-th in
 * the other) and decides per case from the raw samples (samples.total by default, samples.compute
 * with metric "compute"):
 *   ratio      = median(current) / median(baseline)                 (> 1: slower)
 *   ci_lo/hi   = percentile-bootstrap CI of that ratio (rstats.h)
 *   p          = two-sided Mann-Whitney U p-value of the two sample sets
 *   q          = p adjusted by Benjamini-Hochberg over every case that has a p
 *   regression : q <= alpha  and  ci_lo > 1 + t  (rule "ci", default; rule "point": ratio > 1 + t)
 *                and  median(cur) - median(base) > min_delta
 *   improvement: q <= alpha  and  ci_hi < 1 / (1 + t) (rule "point": ratio < 1/(1+t))
 *                and  median(base) - median(cur) > min_delta
 * with t the threshold of the case's backend (default 5%), raised to exp(noise_k * s) - 1 when
 * noise_k > 0, s being the between-run noise of that backend: the robust spread (1.4826 x median
 * absolute deviation) of log(ratio) over the backend's compared cases (an empirical null in the
 * sense of Efron 2004; reported in every output, used only when asked for).
 * Status changes fail the gate whatever the speed: a case that is `wrong` or `crashed` now and was
 * not in the baseline ("became"), a case that was `ok` and is now anything else ("lost": failed,
 * timed_out, no_resource, skipped, invalid), and a baseline case absent from the current run
 * ("missing", unless allow_missing). A case skipped in both runs is "skipped".
 * Three outcomes (hb_cmp_outcome): fail when any case fails the gate; else inconclusive when a tested
 * case is undecided (neither a regression nor cleared: ci_hi <= 1 + t, the data exclude a slowdown
 * beyond the threshold), a case has too few samples, or an A/B run has fewer rounds than its
 * minimum; else pass. Each tested case carries its minimum detectable effect (analysis/mde.h).
 * Machines are told apart by their fingerprint (results/machine.h), never by host name.
 */
#ifndef HB_COMPARE_H
#define HB_COMPARE_H
#include <stdio.h>
#include <stdint.h>
#include <jansson.h>
#include "core/hybench.h"
#include "results/results.h"

/* ---- options ---- */
#define HB_CMP_MAX_BACKEND_THRESHOLDS 16
typedef struct hb_cmp_options {
    const char *metric;          /* "total" (default) or "compute": which samples.<metric> array */
    double threshold;            /* default relative threshold (0.05 = 5%) */
    struct {
        char backend[64];        /* backend type or instance; "" for every backend */
        char op[32];             /* op name; "" for every op */
        double threshold;
    } per_backend[HB_CMP_MAX_BACKEND_THRESHOLDS]; /* scoped thresholds (hb_cmp_parse_threshold) */
    int nper_backend;
    double alpha;                /* false discovery rate for Benjamini-Hochberg (0.05) */
    double confidence;           /* bootstrap CI level (0.95) */
    int resamples;               /* bootstrap replicates (2000) */
    uint64_t seed;               /* base seed; each case uses seed ^ hash(key) (deterministic) */
    int rule_point;              /* 0: CI bound must clear the threshold (default); 1: point ratio */
    double min_delta;            /* seconds: a change smaller than this in absolute time is never
                                    flagged (default 0) */
    size_t min_samples;          /* fewer samples on either side: verdict "insufficient" (3) */
    int allow_missing;           /* baseline cases absent from the current run do not fail */
    int cross_machine;           /* compare even if the machines (fingerprints) or the schemas
                                    differ: --cross-machine (--force, its former name) */
    int ci_for_all;              /* 1: bootstrap every matched case (for the report, default);
                                    0: only cases whose verdict depends on it (trend) */
    int max_rows;                /* Markdown rows per table (50); JSON/JUnit always list every case */
    double noise_k;              /* > 0: raise each backend's threshold to exp(noise_k * s) - 1
                                    (s: between-run noise, see above); 0 = off (default) */
    const char *tool;            /* the writers' title and JSON "tool": NULL = "hybench compare";
                                    "hybench ab" for the interleaved gate (analysis/ab.h) */
    const char *method_md;       /* NULL: the Markdown's method paragraph of compare; else this text
                                    replaces it (and is the JSON's "method") */
} hb_cmp_options;

/* Fill the defaults listed above. */
void hb_cmp_options_default(hb_cmp_options *o);

/* Parse one --threshold argument: "5%", "0.05" (a number < 1 is a fraction, >= 1 a percentage), or
 * SCOPE=5% for some cases only. SCOPE is BACKEND (a backend type such as "cuda", matching every
 * instance "cuda:N", or an instance name such as "opencl:0:1"), OP (an op name of the op table, e.g.
 * "dequantize": every backend's cases of that op) or BACKEND/OP (both). A case takes the most specific
 * threshold that names it: instance/op, type/op, op, instance, type, then the default. The same
 * SCOPE given again replaces its value. Thresholds must lie in [0, 10] (0% to 1000%). Errors:
 * HB_EINVAL with the reason in err: a malformed value, an OP after "/" that the op table does not
 * know, or more than HB_CMP_MAX_BACKEND_THRESHOLDS scoped entries. */
hb_status hb_cmp_parse_threshold(hb_cmp_options *o, const char *arg, char *err, size_t errlen);
/* The threshold that applies to a case of op `op` (an op name; NULL: any) on backend instance
 * `backend` (e.g. "cuda:0"; NULL: the default threshold), by the precedence above. */
double hb_cmp_threshold_for(const hb_cmp_options *o, const char *backend, const char *op);

/* ---- per-case outcome ---- */
typedef enum hb_cmp_verdict {
    HB_CMP_UNCHANGED,     /* matched, both ok, no significant change beyond the threshold */
    HB_CMP_REGRESSION,    /* gate failure: significantly slower beyond the threshold */
    HB_CMP_IMPROVEMENT,   /* significantly faster beyond the threshold */
    HB_CMP_WRONG,         /* gate failure: wrong now, not wrong in the baseline (or new) */
    HB_CMP_CRASHED,       /* gate failure: crashed now, not crashed in the baseline (or new) */
    HB_CMP_LOST,          /* gate failure: ok in the baseline, another non-ok status now */
    HB_CMP_MISSING,       /* gate failure (unless allow_missing): in the baseline only */
    HB_CMP_NEW,           /* in the current run only (not wrong/crashed): informational */
    HB_CMP_FIXED,         /* not ok in the baseline, ok now */
    HB_CMP_STILL_BAD,     /* not ok in both (same or other non-ok status, e.g. wrong twice) */
    HB_CMP_INSUFFICIENT,  /* both ok but fewer than min_samples samples (or a zero median) */
    HB_CMP_SKIPPED,       /* skipped in both (the backend does not run it): informational */
    HB_CMP_VERDICT_COUNT
} hb_cmp_verdict;
/* "unchanged", "regression", "improvement", "wrong", "crashed", "lost", "missing", "new", "fixed",
 * "still_bad", "insufficient", "skipped". */
const char *hb_cmp_verdict_name(hb_cmp_verdict v);
/* 1 when the verdict fails the gate under options o. */
int hb_cmp_verdict_fails(hb_cmp_verdict v, const hb_cmp_options *o);
/* The verdict of a case present on both sides and not ok on both, from its statuses sb (baseline)
 * and sc (current; either may be NULL): wrong or crashed now and not before, lost (ok before),
 * fixed (ok now), skipped (skipped in both), else still_bad. compare and ab share it. */
hb_cmp_verdict hb_cmp_status_verdict(const char *sb, const char *sc);

/* The gate's outcome over all cases. */
typedef enum hb_cmp_outcome { HB_CMP_PASS, HB_CMP_FAIL, HB_CMP_INCONCLUSIVE } hb_cmp_outcome;
/* "pass", "fail", "inconclusive". */
const char *hb_cmp_outcome_name(hb_cmp_outcome v);

typedef struct hb_cmp_case {
    char key[256];               /* the case key ("#2" appended to a repeated key) */
    const hb_rec_case *base, *cur; /* borrowed case records (NULL when absent); owned by the hb_run */
    const char *backend, *op, *shape_str, *mode, *route, *dtype; /* borrowed from base or cur */
    const char *status_base, *status_cur;  /* NULL when absent */
    size_t n_base, n_cur;        /* samples used */
    double med_base, med_cur;    /* seconds; NAN when not available */
    double ratio, ci_lo, ci_hi;  /* NAN when not computed */
    double p, q;                 /* NAN when not tested */
    double threshold;            /* t applied to this case: the backend's threshold, raised by
                                    noise_k when that is on */
    double noise;                /* between-run noise s of this case's backend; NAN when fewer
                                    than 10 compared cases could estimate it */
    int passes_base, passes_cur; /* ok passes with a median (pass_medians.<metric>); 0 without */
    double pass_lo_base, pass_hi_base, pass_lo_cur, pass_hi_cur; /* fastest / slowest pass median (s) */
    int pass_overlap;            /* 1 when both runs have >= 2 passes and the slower run's fastest
                                    pass is not beyond the other run's slowest pass by the
                                    threshold: the change is within between-process noise */
    double mde_se, mde_floor;    /* set by the decider: the standard error of the case's log ratio and
                                    its test's smallest attainable p (analysis/mde.h); NAN: untested */
    double mde;                  /* minimum detectable effect of the case alone (hb_cmp_finish, from
                                    mde_se): the smallest slowdown (fraction, 0.05 = 5%) flagged with
                                    80% probability; INFINITY: none; NAN: not tested */
    hb_cmp_verdict verdict;
} hb_cmp_case;

/* 1 when c is undecided: both sides ok but too few samples or rounds to test it (insufficient), or
 * tested and neither a regression nor cleared (ci_hi <= 1 + threshold: the data exclude a regression
 * beyond the threshold; a NAN CI clears nothing). Makes the outcome inconclusive; `hybench ab` stops
 * early when no case is, and its subset rounds run these. */
int hb_cmp_case_undecided(const hb_cmp_case *c);

/* Point c's label fields (backend, op, shape_str, mode, route, dtype: borrowed from the current record,
 * else the baseline's) and status_base / status_cur (NULL for a missing side) at its records' strings.
 * They live as long as the records do. No errors. */
void hb_cmp_fill_labels(hb_cmp_case *c);

typedef struct hb_cmp_result {
    hb_cmp_case *cases;          /* owned; sorted by key */
    size_t n;
    size_t count[HB_CMP_VERDICT_COUNT];
    size_t matched;              /* keys present in both runs */
    size_t tested;               /* cases with a p-value (the m of Benjamini-Hochberg) */
    double shift;                /* median of ratios over tested cases (whole-run drift); NAN if none */
    double noise_max;            /* largest per-backend between-run noise s; NAN if none */
    int fails;                   /* number of cases that fail the gate */
    size_t undecided;            /* cases that make the outcome inconclusive (hb_cmp_case_undecided) */
    int rounds, min_rounds;      /* hybench ab: rounds decided from and the minimum (fewer:
                                    inconclusive); 0 for compare */
    hb_cmp_outcome outcome;      /* fail if fails; else inconclusive if undecided or rounds <
                                    min_rounds; else pass */
    struct {                     /* per op family (hb_family_name, or the op when it is none): the
                                    median over its tested cases of the MDE of a change of the whole
                                    family (k = its cases, mde.h); INFINITY when most have none */
        char family[32];
        size_t cases;            /* tested cases of the family */
        double mde;
    } fam[HB_FAM_COUNT + 4];
    int nfam;
    double elapsed_s;            /* time spent in hb_compare_runs */
} hb_cmp_result;

/* Fill res's counts, fails, undecided, outcome, each tested case's mde and the per-family MDE from its
 * cases' verdicts, thresholds, mde_se and mde_floor (rounds, min_rounds and tested set by the caller
 * first; the one caller of hb_mde). compare.c and ab.c call it last. No errors. */
void hb_cmp_finish(hb_cmp_result *res, const hb_cmp_options *o);

/* Whether a and b can be compared: both meta records carry a "schema" and the same one (else
 * HB_CMP_OTHER_SCHEMA: the file without one named by its path, or both versions), and both runs have
 * the same machine fingerprint (hb_machine_fingerprint over meta and backend records; else
 * HB_CMP_OTHER_MACHINE: both fingerprints, both paths and the parts of the fingerprint text that
 * differ). why gets the reason; note (may be NULL) gets a remark that is no refusal: the host names
 * differ while the fingerprints agree (a renamed runner). Both are "" when there is nothing to say. */
typedef enum hb_cmp_comparability { HB_CMP_COMPARABLE, HB_CMP_OTHER_SCHEMA, HB_CMP_OTHER_MACHINE } hb_cmp_comparability;
hb_cmp_comparability hb_cmp_comparable(const hb_run *a, const hb_run *b, char *why, size_t whylen, char *note,
                                       size_t notelen);

/* 1 when a and b come from one interleaved A/B run (`hybench ab`): both meta records carry "ab"
 * objects with the same "pair" id. compare's writers say so, or that the runs were taken at
 * different times (then between-run drift is in every ratio). */
int hb_cmp_interleaved(const hb_run *a, const hb_run *b);

/* Compare run cur against run base. res is filled (free with hb_cmp_result_free); its cases
 * borrow json from base and cur, which must outlive it. Does not check comparability.
 * Errors: HB_EINVAL (bad options; reason in err), HB_ENOMEM. */
hb_status hb_compare_runs(const hb_run *base, const hb_run *cur, const hb_cmp_options *o,
                          hb_cmp_result *res, char *err, size_t errlen);
void hb_cmp_result_free(hb_cmp_result *r);

/* Writers. Markdown: a summary, then tables of gate failures, of changes sorted by ratio (largest
 * first) with medians in time units, the CI, p after BH and the verdict, then unmatched cases.
 * JSON: {"tool","schema","baseline":{...},"current":{...},"options":{...},"summary":{...},
 * "cases":[...]} (docs/compare.md). JUnit XML: one <testsuite> per backend, one <testcase> per
 * case, <failure> for every case that fails the gate, <skipped> for cases not measured in both.
 * They return HB_OK, or HB_EDEVICE when writing fails. */
hb_status hb_cmp_write_markdown(FILE *f, const hb_cmp_result *r, const hb_run *base,
                                const hb_run *cur, const hb_cmp_options *o);
json_t *hb_cmp_to_json(const hb_cmp_result *r, const hb_run *base, const hb_run *cur,
                       const hb_cmp_options *o);  /* new reference, NULL on ENOMEM */
hb_status hb_cmp_write_junit(FILE *f, const hb_cmp_result *r, const hb_run *base,
                             const hb_run *cur, const hb_cmp_options *o);

/* Format a duration in seconds with 3 significant digits and a unit ("1.23 ms", "456 us" with the
 * micro sign, "12.0 ns"). Returns buf. */
char *hb_fmt_time(double s, char *buf, size_t len);

#endif
