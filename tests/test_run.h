/*
 * test_run.h - the tests' random inputs and their one checked run of a case on a backend instance.
 * Header-only (include after <cmocka.h> and test_case.h); each test file gets its own generator state.
 *
 *   hb_test_seed(s), hb_test_unif(): xorshift64 (Marsaglia 2003, shifts 13, 7, 17), uniform in [-1, 1)
 *     with 53 random bits; the same sequence for the same seed on every machine.
 *   hb_test_run_checked(inst, c, seed, label): one call of case c on inst (f32 host buffers of the
 *     case's route): every input drawn from hb_test_unif after hb_test_seed(seed), the output poisoned
 *     with NaN, the result checked against the f64 reference (kernels/cpu_ref hb_ref_compute) of the
 *     same f32 inputs: every element finite and the relative L2 error below hb_op_tolerance (the
 *     driver's own bound). Returns the instance's case_info for the case as a new JSON object (the
 *     caller picks impl and its own fields, and decrefs); fails the test with label, the error and the
 *     case_info otherwise.
 *   hb_test_open(ops, inst), hb_test_close(inst): a backend's first instance opened into *inst for a
 *     test group (0, or -1 with the backend's reason printed: cmocka's group setup) and closed.
 */
#ifndef HB_TEST_RUN_H
#define HB_TEST_RUN_H
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/backend.h"
#include "core/convert.h"
#include "cpu_ref/ref.h"

static uint64_t hb_test_rng_state;
static inline void hb_test_seed(uint64_t s) { hb_test_rng_state = s * 0x9e3779b97f4a7c15ull + 1; }
static inline double hb_test_unif(void) /* [-1, 1) */
{
    hb_test_rng_state ^= hb_test_rng_state << 13;
    hb_test_rng_state ^= hb_test_rng_state >> 7;
    hb_test_rng_state ^= hb_test_rng_state << 17;
    return (double)(hb_test_rng_state >> 11) * 0x1p-53 * 2.0 - 1.0; /* 53 bits: [0, 1) x 2 - 1 */
}

static inline int hb_test_open(const hb_backend_ops *ops, hb_instance *inst)
{
    char reason[200] = "";
    if (ops->configure) ops->configure(hb_config_get()); /* the process's settings (core/config.h) */
    if (ops->enumerate(inst, 1, reason, sizeof reason) == 1) return 0;
    fprintf(stderr, "no instance of the backend: %s\n", reason);
    return -1;
}

static inline void hb_test_close(hb_instance *inst) { inst->ops->close(inst); }

static inline json_t *hb_test_run_checked(hb_instance *inst, const hb_case *c, uint64_t seed, const char *label)
{
    const hb_backend_ops *ops = inst->ops;
    const int nin = hb_op_get(c->op)->ninputs;
    char reason[200] = "";
    if (ops->supports(inst, c, reason, sizeof reason) != HB_OK) fail_msg("%s: not supported: %s", label, reason);
    hb_buf b[HB_MAX_INPUTS], ob;
    hb_buf *bp[HB_MAX_INPUTS];
    double *din[HB_MAX_INPUTS];
    hb_test_seed(seed);
    for (int i = 0; i < nin; i++) {
        const int64_t n = hb_op_input_elems(c->op, &c->shape, i);
        assert_int_equal(ops->buf_alloc(inst, (size_t)n * 4, c->route, &b[i]), HB_OK);
        bp[i] = &b[i];
        din[i] = malloc((size_t)n * sizeof(double));
        assert_non_null(din[i]);
        float *f = b[i].host;
        for (int64_t j = 0; j < n; j++)
            f[j] = (float)hb_test_unif();
        hb_convert(din[i], HB_ELEM_F64, f, HB_ELEM_F32, (size_t)n);
    }
    const int64_t no = hb_op_output_elems(c->op, &c->shape);
    assert_int_equal(ops->buf_alloc(inst, (size_t)no * 4, c->route, &ob), HB_OK);
    float *y = ob.host;
    for (int64_t j = 0; j < no; j++)
        y[j] = NAN;
    double *ref = malloc((size_t)no * sizeof(double));
    assert_non_null(ref);
    assert_int_equal(hb_ref_compute(c, (const double *const *)din, ref, 1), HB_OK);
    const hb_status st = ops->run(inst, c, bp, &ob);
    if (st != HB_OK) fail_msg("%s: status %d", label, (int)st);
    double num = 0, den = 0;
    int64_t bad = 0;
    for (int64_t j = 0; j < no; j++) {
        if (!isfinite(y[j])) {
            bad++;
            continue;
        }
        num += ((double)y[j] - ref[j]) * ((double)y[j] - ref[j]);
        den += ref[j] * ref[j];
    }
    const double e = sqrt(num / (den > 0 ? den : 1)), tol = hb_op_tolerance(c->op, &c->shape, HB_F32);
    char info[2048];
    assert_int_equal(ops->case_info(inst, c, info, sizeof info), HB_OK);
    json_t *o = json_loads(info, 0, NULL);
    assert_non_null(o);
    if (getenv("HB_TEST_VERBOSE")) print_message("  %-44s rel err %.2e  %s\n", label, e, info);
    if (bad || !(e < tol))
        fail_msg("%s: rel err %.3g (tol %.3g), %lld of %lld non-finite; case_info %s", label, e, tol, (long long)bad, (long long)no, info);
    free(ref);
    ops->buf_free(inst, &ob);
    for (int i = 0; i < nin; i++) {
        ops->buf_free(inst, &b[i]);
        free(din[i]);
    }
    return o;
}
#endif
