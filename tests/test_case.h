/*
 * test_case.h - the tests' one way to make a case from an op and a shape text: parsed and normalized as
 * a workload's would be (hb_shape_parse, hb_shape_normalize), f32, mode f32, route pageable; a shape
 * the table refuses fails the test with the reason. Header-only (include after <cmocka.h>); the
 * Makefile passes -Itests to every test.
 */
#ifndef HB_TEST_CASE_H
#define HB_TEST_CASE_H
#include <string.h>
#include "core/hybench.h"

static inline hb_case hb_test_case(hb_op op, const char *shape)
{
    hb_case c;
    char err[200];
    memset(&c, 0, sizeof c);
    c.op = op;
    c.dtype = HB_F32;
    c.mode = HB_MODE_F32;
    c.route = HB_ROUTE_PAGEABLE;
    hb_status st = hb_shape_parse(shape, &c.shape, err, sizeof err);
    if (st == HB_OK)
        st = hb_shape_normalize(op, &c.shape, err, sizeof err);
    if (st != HB_OK)
        fail_msg("bad test shape \"%s\": %s", shape, err);
    return c;
}
#endif
