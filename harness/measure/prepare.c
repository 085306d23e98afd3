/*
 * prepare.c - the start state of a timed compute: hot (the op's settled steady state) or cold
 * (caches evicted). See prepare.h and docs/measurement.md.
 */
#include "measure/prepare.h"
#include "core/stats.h"
#include <math.h>

hb_status hb_compute_prepare(hb_instance *inst, int cold, const hb_case *c, hb_buf *const *in, hb_buf *out,
                             hb_prep_state *ps, double *spent_s)
{
    double t0 = hb_now();
    hb_status st = HB_OK;
    ps->calls++;
    if (cold) {
        if (inst->ops->flush_cache) inst->ops->flush_cache(inst);
    } else {
        for (int i = 0; i < HB_SETTLE_MAX; i++) {
            double t = hb_now();
            st = inst->ops->run(inst, c, in, out);
            t = hb_now() - t;
            ps->runs++;
            if (st != HB_OK) break;
            int settled = ps->best_s > 0 && t <= (1 + HB_SETTLE_TOL) * ps->best_s;
            if (ps->best_s <= 0 || t < ps->best_s) ps->best_s = t;
            if (settled || hb_now() - t0 > HB_SETTLE_MAX_S) break;
        }
    }
    *spent_s = hb_now() - t0;
    return st;
}
