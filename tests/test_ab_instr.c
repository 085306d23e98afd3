/*
 * test_ab_instr.c - harness/analysis/ab_instr.c (the instruction-count rule of `hybench ab
 * --instructions`): random counts drawn with a fixed seed (1e5..1e9 instructions per call, a repeat
 * spread of at most 0.1% where one is drawn): a 3% rise is flagged, equal counts are not, a 3% fall
 * is an improvement, a spread at the threshold is noisy (undecided), a side with no count is
 * missing; and hb_instr_gate over synthetic runs (records built with jansson) keyed and sorted.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "analysis/ab_instr.h"
#include "core/rstats.h"

static double draw_count(hb_rng *r) { return floor(1e5 * pow(1e4, hb_rng_uniform(r))); }

static void test_rise_flagged_equal_not(void **state)
{
    (void)state;
    hb_rng r;
    hb_rng_seed(&r, 42);
    for (int trial = 0; trial < 1000; trial++) {
        double c = draw_count(&r), base[2] = {c, c}, same[2] = {c, c}, up[2], down[2];
        for (int i = 0; i < 2; i++) up[i] = floor(c * 1.03), down[i] = floor(c / 1.03);
        double ratio, spread;
        assert_int_equal(hb_instr_decide(base, 2, same, 2, 0.01, &ratio, &spread), HB_INSTR_UNCHANGED);
        assert_true(ratio == 1 && spread == 0);
        assert_int_equal(hb_instr_decide(base, 2, up, 2, 0.01, &ratio, NULL), HB_INSTR_REGRESSION);
        assert_true(fabs(ratio - 1.03) < 1e-4);
        assert_int_equal(hb_instr_decide(base, 2, down, 2, 0.01, NULL, NULL), HB_INSTR_IMPROVEMENT);
        /* a small repeat spread (0.1%) does not hide 3%, and a rise below the threshold is no flag */
        double jit[2] = {c, c * 1.001}, half[2] = {c * 1.005, c * 1.005};
        assert_int_equal(hb_instr_decide(jit, 2, up, 2, 0.01, NULL, NULL), HB_INSTR_REGRESSION);
        assert_int_equal(hb_instr_decide(base, 2, half, 2, 0.01, NULL, NULL), HB_INSTR_UNCHANGED);
        /* one round each: no spread measured (0), still decided */
        assert_int_equal(hb_instr_decide(base, 1, up, 1, 0.01, NULL, &spread), HB_INSTR_REGRESSION);
        assert_true(spread == 0);
    }
}

static void test_noisy_and_missing(void **state)
{
    (void)state;
    double base[2] = {1000, 1011}, cur[2] = {1100, 1100}, none[2] = {NAN, NAN}, ratio, spread;
    /* a spread above the threshold (1.09%): not deterministic enough to judge */
    assert_int_equal(hb_instr_decide(base, 2, cur, 2, 0.01, &ratio, &spread), HB_INSTR_NOISY);
    assert_true(fabs(spread - 11 / 1005.5) < 1e-12);
    assert_int_equal(hb_instr_decide(base, 2, none, 2, 0.01, &ratio, &spread), HB_INSTR_MISSING);
    assert_true(isnan(ratio) && isnan(spread));
    assert_int_equal(hb_instr_decide(none, 2, cur, 0, 0.01, NULL, NULL), HB_INSTR_MISSING);
    assert_string_equal(hb_instr_verdict_name(HB_INSTR_NOISY), "noisy");
}

/* A run with cases key -> instructions per call (count <= 0: the record has no "instructions"). */
static void make_run(hb_run *r, const char *const *keys, const double *counts, int n)
{
    memset(r, 0, sizeof *r);
    r->cases = json_array();
    for (int i = 0; i < n; i++) {
        json_t *c = json_pack("{s:s,s:s,s:s}", "type", "case", "key", keys[i], "status", "ok");
        if (counts[i] > 0)
            json_object_set_new(c, "instructions", json_pack("{s:s,s:f}", "tool", "callgrind", "per_call", counts[i]));
        json_array_append_new(r->cases, c);
    }
    assert_int_equal(hb_run_index(r), HB_OK); /* the records as structs: what hb_instr_gate reads */
}

static void test_gate_over_runs(void **state)
{
    (void)state;
    const char *keys[3] = {"matmul|m=64|cpu|f32|pageable|f32", "add|n=64|cpu|f32|pageable|f32", "add|n=64|opencl|f32|pageable|f32"};
    double b[3] = {1e6, 5e4, 0}, c1[3] = {1.03e6, 5e4, 0};
    hb_run rb[2], rc[2];
    for (int r = 0; r < 2; r++) { make_run(&rb[r], keys, b, 3); make_run(&rc[r], keys, c1, 3); }
    const hb_run *pb[2] = {&rb[0], &rb[1]}, *pc[2] = {&rc[0], &rc[1]};
    hb_instr_case *out;
    size_t n;
    char err[256];
    assert_int_equal(hb_instr_gate(pb, pc, 2, 0.01, &out, &n, err, sizeof err), HB_OK);
    assert_int_equal(n, 2); /* the opencl case has no count: not an instruction case */
    assert_string_equal(out[0].key, keys[1]);  /* sorted by key */
    assert_int_equal(out[0].verdict, HB_INSTR_UNCHANGED);
    assert_int_equal(out[1].verdict, HB_INSTR_REGRESSION);
    assert_int_equal((int)out[1].nb, 2);
    assert_true(fabs(out[1].ratio - 1.03) < 1e-12);
    free(out);
    assert_int_equal(hb_instr_gate(pb, pc, 0, 0.01, &out, &n, err, sizeof err), HB_EINVAL);
    assert_int_equal(hb_instr_gate(pb, pc, 2, 0, &out, &n, err, sizeof err), HB_EINVAL);
    for (int r = 0; r < 2; r++) { hb_run_free(&rb[r]); hb_run_free(&rc[r]); }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rise_flagged_equal_not),
        cmocka_unit_test(test_noisy_and_missing),
        cmocka_unit_test(test_gate_over_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
