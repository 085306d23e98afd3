/*
 * prepare.c - the start state of a timed compute: hot (one untimed run first) or cold (caches
 * evicted). See prepare.h and docs/measurement.md.
 */
#include "prepare.h"
#include "stats.h"

hb_status hb_compute_prepare(hb_instance *inst, int cold, const hb_case *c, hb_buf *const *in, hb_buf *out,
                             double *spent_s)
{
    double t0 = hb_now();
    hb_status st = HB_OK;
    if (cold) {
        if (inst->ops->flush_cache) inst->ops->flush_cache(inst);
    } else {
        st = inst->ops->run(inst, c, in, out);
    }
    *spent_s = hb_now() - t0;
    return st;
}

int hb_compute_cold_supported(const hb_instance *inst) { return inst->ops->flush_cache != NULL; }
