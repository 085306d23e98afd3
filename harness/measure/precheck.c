/* precheck.c - the checks a case passes before its first call on an instance (internal.h
 * hb_case_precheck), written once for the run (sample.c) and the gate list (kernel_paths.c). */
#include "measure/internal.h"
#include <stdio.h>
#include <string.h>

hb_status hb_case_precheck(hb_instance *inst, const hb_case *c, const char *skip, const hb_options *o, char *reason, size_t len)
{
    if (len) reason[0] = 0;
    if (skip && skip[0]) { snprintf(reason, len, "%s", skip); return HB_ESKIP; }
    if (hb_quant_case_skip(c, reason, len)) return HB_ESKIP;
    /* the chain is the driver's: each of its steps is checked against supports() in chain.c */
    if (c->op != HB_OP_CHAIN && inst->ops->supports(inst, c, reason, len) != HB_OK) {
        if (len && !reason[0]) snprintf(reason, len, "unsupported");
        return HB_ESKIP;
    }
    double gflop = hb_op_flops(c->op, &c->shape) / 1e9;
    if (!strcmp(inst->ops->type, "cpu-ref") && gflop > o->ref_max_gflop && !o->verify_only) {
        snprintf(reason, len, "cpu-ref is the plain-C reference: not timed above %.3g GFLOP per call (this case: %.3g; --ref-max-gflop)",
                 o->ref_max_gflop, gflop);
        return HB_ESKIP;
    }
    return HB_OK;
}
