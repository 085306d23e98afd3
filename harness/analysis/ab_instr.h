/*
 * ab_instr.h - the merge gate's deterministic measure (`hybench ab --instructions`, docs/compare.md
 * "Instruction counts"): per case, the instructions per timed call counted by callgrind in each
 * build's rounds (record field instructions.per_call, measure/instr.h), and the rule that flags a
 * case on them. Pure over loaded runs; cli/ab_instr_run.c runs the rounds.
 *
 * Per case (record key) and build, over the rounds that counted it (x[1..n], instructions per call):
 *   med    = median of x                                   (core/rstats.h hb_rs_median_sorted)
 *   spread = (max x - min x) / med                         (the repeat spread; 0 with one round)
 * and for the case:
 *   ratio  = med_cur / med_base                           (> 1: CUR executes more instructions)
 *   regression : ratio > 1 + t and max(spread_base, spread_cur) < t
 *   improvement: ratio < 1 / (1 + t) and max(spread_base, spread_cur) < t
 *   noisy      : the spread is t or more (the count is not deterministic enough to judge: undecided)
 *   unchanged  : otherwise
 *   missing    : counted on one side only, or on neither (undecided)
 * The count is deterministic for single-threaded code under valgrind (docs/compare.md), so a
 * threshold t of 1% (the default) is far above its spread (0 on the cases measured), and one or
 * two rounds suffice; with one round the spread is not measured (0), which the output says.
 */
#ifndef HB_AB_INSTR_H
#define HB_AB_INSTR_H
#include "results/results.h"
#include <stddef.h>

typedef enum {
    HB_INSTR_UNCHANGED, HB_INSTR_REGRESSION, HB_INSTR_IMPROVEMENT, HB_INSTR_NOISY, HB_INSTR_MISSING
} hb_instr_verdict;

/* "unchanged", "regression", "improvement", "noisy", "missing". */
const char *hb_instr_verdict_name(hb_instr_verdict v);

/* The rule above for one case: base[nb] and cur[nc] are its instructions per call in each round
 * (finite, > 0; others are ignored), t the threshold (fraction, > 0). *ratio, *spread (may be NULL)
 * get the ratio (NAN when a side has no count) and the larger repeat spread. */
hb_instr_verdict hb_instr_decide(const double *base, size_t nb, const double *cur, size_t nc, double t, double *ratio,
                                 double *spread);

/* One case of the instruction gate. */
typedef struct hb_instr_case {
    char key[256];        /* the record's key */
    size_t nb, nc;        /* rounds that counted it, per build */
    double med_base, med_cur, ratio, spread; /* instructions per call; NAN where not counted */
    hb_instr_verdict verdict;
} hb_instr_case;

/* Decide every case of nrounds rounds: base[r] and cur[r] are round r's results files (loaded,
 * borrowed). A case is every key with an "instructions" object in any round; an ok record without
 * one counts as not counted. *out gets a malloc'd array sorted by key (free it), *n its length.
 * HB_OK, HB_EINVAL (nrounds < 1 or t not > 0; reason in err), HB_ENOMEM. */
hb_status hb_instr_gate(const hb_run *const *base, const hb_run *const *cur, int nrounds, double t,
                        hb_instr_case **out, size_t *n, char *err, size_t errlen);
#endif
