/*
 * verify.h - the one verifier that single ops (sample.c), chains (chain.c) and plan replays
 * (replay.c) check their outputs with: the output poisoned before the verified run, and its relative
 * L2 error against the f64 reference after it, under one rule for non-finite values.
 *
 * The rule (hb_verify_rel_error), in the order it is applied:
 *   1. Every output element must be finite: one that is not (NaN left by the poison, or an
 *      overflow) makes the error +INFINITY, and `nonfinite` counts them.
 *   2. A NaN reference element is "not computed" (the reference subsampled its rows: refcache.c,
 *      hb_ref_compute) where the caller allows it (HB_VERIFY_SUBSAMPLED): the element is skipped and
 *      `skipped` counts it. Without that flag, and for an infinite reference element always, the
 *      reference is unusable and the error is NaN, which no tolerance test (`rel <= tol`) passes.
 *   3. Otherwise rel = ||out - ref||_2 / ||ref||_2 over the compared elements, and ||out - ref||_2
 *      (the absolute error) when ||ref||_2 is 0.
 * Why this rule: it is what the three copies it replaced did wherever a case passed. All three made a
 * non-finite output +INFINITY and a zero-norm reference an absolute error (chain.c and replay.c
 * divided by 1). sample.c skipped NaN reference elements (its subsampled references); chain.c and
 * replay.c, whose references are computed in full, had no rule and returned NaN (a wrong case) for
 * one: they keep that by not passing HB_VERIFY_SUBSAMPLED. An infinite reference element gave NaN
 * (inf / inf) in all three, so a wrong case; it stays one, by rule now rather than by accident.
 */
#ifndef HB_MEASURE_VERIFY_H
#define HB_MEASURE_VERIFY_H
#include <stddef.h>
#include "core/backend.h"
#include "core/convert.h"

/* What one comparison found. */
typedef struct hb_verify {
    double rel;          /* the relative L2 error under the rule above: +INFINITY, NaN, or >= 0 */
    long long nonfinite; /* output elements that are not finite (rule 1) */
    long long skipped;   /* NaN reference elements skipped (rule 2, HB_VERIFY_SUBSAMPLED only) */
    long long compared;  /* elements that entered the sums */
    double fraction;     /* compared / n (0 when n is 0): the share of the output verified */
} hb_verify;

/* flags of hb_verify_rel_error */
#define HB_VERIFY_SUBSAMPLED 1 /* NaN reference elements mean "not computed": skip them */

/* Compare out[0..n-1] (element type el: f64, f32, f16 or bf16; converted to f64 in blocks on the
 * stack, so nothing is allocated and nothing can fail) with ref[0..n-1] (f64) under the rule above;
 * flags: 0 or HB_VERIFY_SUBSAMPLED. Returns v->rel (v may be NULL when only the error is wanted). */
double hb_verify_rel_error(const void *out, hb_elem el, const double *ref, size_t n, int flags, hb_verify *v);

/* Fill p[0..n-1] (element type el) with quiet NaN (f16 0x7E00, bf16 0x7FC0): an element the run does
 * not write then fails rule 1. p may be NULL (nothing done). */
void hb_verify_poison(void *p, hb_elem el, size_t n);

/* Poison buffer b's host view (n elements of el) and, when upload is set, copy it to the device
 * through inst's upload hook, so that the device's copy is poisoned too. HB_OK or upload's error. */
hb_status hb_verify_poison_buf(hb_instance *inst, hb_buf *b, hb_elem el, size_t n, int upload);
#endif
