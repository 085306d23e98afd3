/*
 * modecheck.h - the mode-invariance self-check of a run (../shared/DESIGN.md, "What makes a phase
 * time valid": compute is mode-invariant).
 *
 * The compute phase of one op, shape, dtype, route and backend must take the same time whichever
 * mode fed it (convert, f32, convert-device, resident). This module checks that of a run's case
 * records:
 *
 *   Groups.  Case records with status "ok" are grouped by backend, op, shape (shape_str), route,
 *   dtype and workload name (every field of the record's `key`, op|shape|backend|mode|route|dtype,
 *   but the mode; plus the name, as the report matches cases), and by occurrence: the k-th record of
 *   a (group, mode) in the file belongs to occurrence k, so a case listed twice in the workloads
 *   stays two groups, as the pass merge (measure/merge.c record_key) keeps it two records. Chains (op
 *   "chain") are grouped like any op. A record of any other status never enters a group.
 *
 *   Pairs.  In a group with more than one mode, the reference mode is f32, or when f32 is absent the
 *   first mode of the group in file order. Every other mode forms a pair (mode, reference).
 *
 *   Ratio.  ratio = median(compute samples of mode) / median(compute samples of the reference), from
 *   the raw samples `samples.compute` (seconds); its 95% percentile-bootstrap CI comes from
 *   hb_rs_bootstrap_ratio (rstats.h) with HB_MC_RESAMPLES replicates, seeded with
 *   HB_MC_SEED ^ hb_hash64("<group key>|<mode>"), so the result is reproducible and does not depend
 *   on the order of the records. A record without raw samples (older or synthetic files) counts as
 *   one sample equal to its phases.compute.median. Non-finite samples are dropped.
 *
 *   Verdict.  invariant: |ratio - 1| <= HB_MC_TOL (5%).
 *             moved:     otherwise, and the CI excludes 1 (the move is beyond the samples' noise).
 *             noisy:     otherwise (beyond 5%, but the CI includes 1, or there is no CI because a side
 *                        has fewer than HB_MC_MIN_SAMPLES samples).
 *   Rounds.   The modes of a case are measured together (measure/sample.c hb_measure_group): each
 *             takes one sample per round, in turns, so the i-th samples of two modes were taken
 *             moments apart. When both records carry interleaved_with, the same best_pass (or
 *             none) and as many raw compute samples (at least HB_MC_MIN_SAMPLES), the pair is
 *             paired by round: ratio = median over rounds of (mode / reference), its CI the
 *             percentile bootstrap of that median (HB_MC_RESAMPLES replicates, the same seed);
 *             verdicts as above. A host state that comes and goes over seconds (the H100 host's
 *             relu n=4Mi read 90 us and 195 us in stretches) then reaches both sides of each
 *             ratio: the unpaired medians read 0.68x there, the paired ones 0.95x. Files from
 *             before the shared rounds (unequal sample counts) keep the unpaired ratio.
 *   Passes.   A run of several passes (--passes P, 3 with --quick) keeps per case the pass with the
 *             lowest total, so the two records of a pair may come from different processes, whose
 *             medians differ by far more than one process's samples say (docs/compare.md). When
 *             both records carry pass_medians.compute of the same P >= 2 passes, the pass's two
 *             medians are paired instead (each pass ran both modes back to back in one process):
 *             ratio = median over passes of (mode / reference), interval = [min, max] of the
 *             per-pass ratios, and `moved` needs every pass beyond 5% on the same side (the
 *             every-pass rule of hybench compare); else `noisy` when the median ratio is beyond 5%.
 *   beyond_20pct counts pairs with |ratio - 1| > HB_MC_FAR (any verdict).
 *   A pair whose either median is not finite and > 0 is left out (no ratio can be formed).
 *
 * Output: one "mode_check" record per pair (hb_mc_pair_json; docs/results-schema.md), and a summary
 * per backend and overall (hb_mc_invariance_json), which `hybench run` puts in its end record as
 * "mode_invariance". The report (report_modecheck.c) recomputes the same from the case records, so
 * files written before this check existed are checked too.
 */
#ifndef HB_MODECHECK_H
#define HB_MODECHECK_H
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "core/hybench.h"
#include "results/results.h"

#define HB_MC_TOL 0.05          /* |ratio - 1| within this: invariant */
#define HB_MC_FAR 0.20          /* |ratio - 1| beyond this: counted in beyond_20pct */
#define HB_MC_CONF 0.95         /* confidence of the bootstrap CI */
#define HB_MC_RESAMPLES 2000    /* bootstrap replicates */
#define HB_MC_MIN_SAMPLES 5     /* fewer samples on a side: no CI, so never "moved". Below 5 the
                                   percentile bootstrap's CI excludes 1 as soon as the two sample
                                   sets merely separate (3 v 3: a 1-in-10 event under pure noise);
                                   5 is also hybench run's default --min-samples */
#define HB_MC_SEED 0x6d6f6465636b2031ULL /* base seed of every pair's bootstrap ("modeck 1") */
#define HB_MC_REF_MODE "f32"    /* the preferred reference mode */

typedef enum hb_mc_verdict { HB_MC_INVARIANT, HB_MC_MOVED, HB_MC_NOISY } hb_mc_verdict;

/* "invariant", "moved", "noisy" ("?" for a value out of range). Static string. */
const char *hb_mc_verdict_name(hb_mc_verdict v);

/* The check of one pair of sample sets. */
typedef struct hb_mc_result {
    double ratio;             /* median(cur) / median(ref) */
    double lo, hi;            /* 95% bootstrap CI of ratio; NAN when there is none (has_ci == 0) */
    double ref_median, median; /* medians of ref and cur, seconds */
    size_t nref, ncur;        /* finite samples used */
    int has_ci;               /* both sides had at least HB_MC_MIN_SAMPLES samples, or passes were paired */
    int npass;                /* 0, or the P passes paired (then lo/hi are the per-pass range) */
    int nround;               /* 0, or the rounds paired (ratio: median of the per-round ratios) */
    hb_mc_verdict verdict;
} hb_mc_result;

/* Classify cur against ref (the rule above). ref[nref], cur[ncur]: compute samples in seconds, any
 * order, not modified; non-finite values are dropped. seed: the bootstrap's RNG seed. flags:
 * HB_MC_CI_BEYOND_TOL skips the bootstrap (has_ci 0) when |ratio - 1| <= HB_MC_TOL, whose verdict
 * (invariant) does not depend on it; 0 computes the CI of every pair.
 * Returns HB_OK with every field of *out written; HB_EINVAL when a side has no finite sample or a
 * median is not > 0; HB_ENOMEM. On error *out is written too: NAN numbers, has_ci 0, verdict noisy. */
hb_status hb_mc_classify(const double *ref, size_t nref, const double *cur, size_t ncur, uint64_t seed,
                         unsigned flags, hb_mc_result *out);

/* flags of hb_mc_classify and hb_mc_check */
#define HB_MC_PARALLEL 1u       /* spread the bootstraps over OpenMP threads */
#define HB_MC_CI_BEYOND_TOL 2u  /* a CI only for pairs beyond HB_MC_TOL (the report: the bootstrap of
                                   300 v 300 samples costs about 1 ms, and most pairs are within) */

/* One pair of case records. */
typedef struct hb_mc_pair {
    const hb_rec_case *rec;   /* borrowed: the case record of `mode` (results/record.h) */
    const hb_rec_case *ref;   /* borrowed: the case record of the reference mode */
    char group[600];          /* the group key: backend|op|shape_str|route|dtype|name#occurrence */
    hb_mc_result r;
} hb_mc_pair;

/* Every pair of a run, in the order of the groups' first records, then of the modes in the file. */
typedef struct hb_mc_set { hb_mc_pair *v; size_t n; } hb_mc_set;

/* Check the case records of one run: run->case_recs (hb_run_index; records whose type is not "case"
 * and records without mode, backend or op are ignored). flags: HB_MC_PARALLEL spreads the bootstraps over
 * OpenMP threads (the report; without it the caller stays single-threaded, as hybench run's parent
 * process must); HB_MC_CI_BEYOND_TOL as in hb_mc_classify.
 * Returns HB_OK and *out (zeroed first; free with hb_mc_set_free; its pairs borrow the records, so
 * run must outlive it), or HB_ENOMEM with *out empty. Pairs that cannot be formed (see above) are
 * left out, never an error. */
hb_status hb_mc_check(const hb_run *run, unsigned flags, hb_mc_set *out);
void hb_mc_set_free(hb_mc_set *s);

/* The "mode_check" record of a pair (docs/results-schema.md): type, backend, op, shape (the case
 * record's shape object), shape_str, name, dtype, route, mode, ref_mode, ratio, ci [lo, hi] (null
 * without a CI), ref_median, median, n, ref_n, verdict. New reference; NULL when out of memory. */
json_t *hb_mc_pair_json(const hb_mc_pair *p);

/* Counts over a set of pairs. Zero-initialize, then hb_mc_tally_add each pair. */
typedef struct hb_mc_tally {
    size_t pairs, within, beyond_far, moved, noisy;
    const hb_mc_pair *worst;  /* largest |log ratio|; borrowed; NULL while pairs == 0 */
} hb_mc_tally;
void hb_mc_tally_add(hb_mc_tally *t, const hb_mc_pair *p);
/* {"pairs","within_5pct","within_5pct_share" (null when pairs == 0),"beyond_20pct","moved","noisy",
 * "worst" (the pair as hb_mc_pair_json without "type"; null when none)}. New reference. */
json_t *hb_mc_tally_json(const hb_mc_tally *t);

/* The end record's "mode_invariance" object: {"rule", "tolerance", "far", "conf", "resamples",
 * "ref_mode", "overall": tally, "backends": {backend: tally, ...}}. New reference; NULL when out of
 * memory. */
json_t *hb_mc_invariance_json(const hb_mc_set *s);

/* One line (no newline) for backend: "mode invariance (cpu): 38 of 41 pairs within 5%, 1 moved
 * beyond its noise (worst: sum rows=4096 cols=1024 convert/f32 1.31x [1.27,1.35])". backend NULL:
 * every pair. Writes at most len bytes into buf (always terminated) and returns buf. */
char *hb_mc_line(const hb_mc_set *s, const char *backend, char *buf, size_t len);

/* For `hybench run`, after the passes are merged and before the end record: read the results file
 * at path back (hb_run_load), check it, append one mode_check record per pair to fd (hb_record_write,
 * one write per record), print one hb_mc_line per backend to log (NULL: nothing printed), and set
 * *summary to the mode_invariance object (new reference, owned by the caller; NULL on error).
 * Returns HB_OK; HB_EINVAL or HB_EDEVICE when the file cannot be read back (reason on log);
 * HB_EDEVICE when a record cannot be written; HB_ENOMEM. */
hb_status hb_mc_append_run(const char *path, int fd, json_t **summary, FILE *log);

/* ---- the report's use (report_modecheck.c) ---- */
struct hb_report;
/* The check of every input of a report, with per-row flags for Q1. */
typedef struct hb_report_mc {
    hb_mc_set *sets;          /* one per run (rp->nruns) */
    int nsets;
    unsigned char *moved;     /* per row of rp->rows: 1 when the row is the non-reference side of a
                                 pair whose verdict is moved */
    double *ratio;            /* per row: the pair's ratio when the row is its non-reference side,
                                 else NAN */
} hb_report_mc;
/* Check every run of rp (hb_mc_check, HB_MC_PARALLEL | HB_MC_CI_BEYOND_TOL: pairs within 5% have no
 * CI in the report). HB_OK, or HB_ENOMEM with *m empty. Free with
 * hb_report_mc_free in every case. */
hb_status hb_report_mc_compute(const struct hb_report *rp, hb_report_mc *m);
void hb_report_mc_free(hb_report_mc *m);
/* Append the "Mode invariance" subsection (a table per device, the pairs beyond 5%) to the
 * document, and set q's "mode_invariance" (q: the summary's q1 object) to {"definition",
 * "devices": [{device, run, backend, tally...}], "pairs_beyond_tol": [...]}. */
void hb_report_mc_doc(struct hb_report *rp, const hb_report_mc *m, json_t *q);
#endif
