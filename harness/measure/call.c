/*
 * call.c - one call of a case through its mode's data path (internal.h hb_case_call): the inputs
 * converted and placed, the compute prepared by the hot rule and run on the executor, the output
 * fetched and converted back, each phase timed; and a resident case's one placement of its inputs
 * (hb_case_place_resident). Split from sample.c, which sets cases up and samples them with it.
 */
#include "measure/internal.h"
#include "measure/exec.h"
#include "measure/plant.h"
#include "measure/instr.h"
#include "core/convert.h"
#include <stdio.h>
#include <string.h>

#ifdef HB_PLANT
/* planted real work on a conversion (plant.h): dst[0..m) = src[0..m) again, m = fraction x n (the same
 * values); nothing when fraction <= 0 */
static void plant_reconvert(double fraction, void *dst, hb_elem dt, const void *src, hb_elem st, size_t n)
{
    if (fraction > 0) hb_convert(dst, dt, src, st, (size_t)(fraction * (double)n));
}
#endif

/* One call of the op through the mode's data path: a one-step graph on the executor (exec.h), which
 * places its inputs, runs and times it (the device clock where the backend has timers and the phase
 * touches the device, else the host clock) and fetches its output. ph[] receives each phase in seconds. */
hb_status hb_case_call(run_ctx *x, double ph[HB_PH_COUNT], double *host_compute)
{
    const hb_case *c = x->c;
    hb_status st = HB_OK;
    memset(ph, 0, sizeof(double) * HB_PH_COUNT);
    double t_start = hb_now(), t0;
    int resident = c->mode == HB_MODE_RESIDENT;
#ifdef HB_PLANT /* planted real work on the host's conversions too (plant.h): see the convert blocks below */
    const double plant_f = hb_plant_factor(c->op);
    const int plant_on_dev = plant_f >= 1 && x->device && x->inst->ops->plant_delay;
    const double plant_conv = plant_f > 1 && !plant_on_dev && hb_plant_is_work(c->op) ? plant_f - 1 : 0;
#endif
    if (c->mode == HB_MODE_CONVERT_DEVICE) {
        for (int i = 0; i < x->nin; i++) {
            double cp = 0, cv = 0;
            st = x->inst->ops->upload_f64(x->inst, &x->in[i], x->h64[i], x->nel[i], &cp, &cv);
            if (st != HB_OK) return st;
            ph[HB_PH_H2D] += cp;
            ph[HB_PH_CONVERT_IN] += cv;
        }
    } else if (!resident) {
        t0 = hb_now();
        if (c->mode == HB_MODE_CONVERT)
            for (int i = 0; i < x->nin; i++) hb_convert(x->in[i].host, x->el, x->h64[i], HB_ELEM_F64, x->nel[i]);
        else if (x->h32[0])
            for (int i = 0; i < x->nin; i++) hb_convert(x->in[i].host, x->el, x->h32[i], HB_ELEM_F32, x->nel[i]);
#ifdef HB_PLANT /* PLANTED REAL WORK: (factor - 1) of each input converted again (the same values), so that a
                 * call whose conversions outweigh the op is slower by the factor too (plant.h) */
        for (int i = 0; i < x->nin && (c->mode == HB_MODE_CONVERT || x->h32[0]); i++)
            plant_reconvert(plant_conv, x->in[i].host, x->el, c->mode == HB_MODE_CONVERT ? (void *)x->h64[i] : (void *)x->h32[i],
                            c->mode == HB_MODE_CONVERT ? HB_ELEM_F64 : HB_ELEM_F32, x->nel[i]);
#endif
        ph[HB_PH_CONVERT_IN] = (c->mode == HB_MODE_CONVERT || x->h32[0]) ? hb_now() - t0 : 0;
        if (x->device && (st = hb_exec_place(x->inst, (hb_buf *[]){&x->in[0], &x->in[1], &x->in[2]}, x->nin, 1, &ph[HB_PH_H2D])) != HB_OK)
            return st;
    }
    /* the compute starts hot or cold by one rule in every mode (prepare.h); its time is no phase's */
    hb_buf *ins[HB_MAX_INPUTS] = {&x->in[0], &x->in[1], &x->in[2]};
    double prep = 0;
    hb_instr_pause(1); /* the settle runs are not counted, as they are not timed (instr.h) */
    st = hb_compute_prepare(x->inst, x->o->cold, c, ins, &x->out, &x->prep, &prep);
    hb_instr_pause(0);
    if (st != HB_OK) return st;
#ifdef HB_PLANT /* ---- PLANTED SLOWDOWN, device side (make PLANT=1 only; plant.h): a device backend
                  * with the plant_delay hook runs a delay kernel behind every call of a named op
                  * (factor 1 included), spinning (factor - 1) x the last call's compute without its
                  * spin, inside the device-timed compute phase, as a slower kernel would ---- */
    double plant_dev = 0;
    if (plant_on_dev) {
        plant_dev = x->plant_compute > 0 ? (plant_f - 1) * x->plant_compute : 0;
        if (plant_dev > 1 || x->inst->ops->plant_delay(x->inst, plant_dev) != HB_OK) plant_dev = 0;
    }
#endif
    hb_exec_step es = {.inst = x->inst, .c = c, .in = {ins[0], ins[1], ins[2]}, .out = &x->out, .prep = &x->prep};
#ifdef HB_PLANT /* ---- PLANTED REAL WORK (HB_PLANT_WORK=1; plant.h): the op on a sub-problem of (factor - 1) x its
                  * FLOPs, on the same buffers, before the real call rewrites the output ---- */
    if (plant_f > 1 && !plant_on_dev && hb_plant_is_work(c->op) && !x->plant_sub) {
        x->plant_case = *c;
        x->plant_sub = hb_plant_sub_shape(c->op, c->dtype, &c->shape, plant_f - 1, &x->plant_case.shape) ? -1 : 1;
        if (x->plant_sub < 0) fprintf(stderr, "hybench: HB_PLANT_WORK: no sub-problem of %s: the timed spin instead\n", hb_op_get(c->op)->name);
    }
    if (plant_f > 1 && x->plant_sub > 0) es.pre = &x->plant_case;
#endif
    st = hb_exec_run(&es, x->o->cold, HB_EXEC_NO_PREP | (x->device ? HB_EXEC_DEV_TIMER : 0), &ph[HB_PH_COMPUTE], host_compute, NULL);
    if (st != HB_OK) return st;
#ifdef HB_PLANT
    if (plant_on_dev) x->plant_compute = ph[HB_PH_COMPUTE] - plant_dev;
#endif
    if (c->mode == HB_MODE_CONVERT_DEVICE) {
        double cp = 0, cv = 0;
        st = x->inst->ops->download_f64(x->inst, &x->out, x->o64, x->nout, &cp, &cv);
        if (st != HB_OK) return st;
        ph[HB_PH_D2H] = cp;
        ph[HB_PH_CONVERT_OUT] = cv;
    } else if (!resident) {
        hb_buf *ob = &x->out;
        if (x->device && (st = hb_exec_fetch(x->inst, &ob, 1, 1, &ph[HB_PH_D2H])) != HB_OK) return st;
        t0 = hb_now();
        if (c->mode == HB_MODE_CONVERT) hb_convert(x->o64, HB_ELEM_F64, x->out.host, x->el, x->nout);
        else if (x->o32) hb_convert(x->o32, HB_ELEM_F32, x->out.host, x->el, x->nout);
#ifdef HB_PLANT /* PLANTED REAL WORK: (factor - 1) of the output converted again, as the inputs above */
        if (c->mode == HB_MODE_CONVERT || x->o32)
            plant_reconvert(plant_conv, c->mode == HB_MODE_CONVERT ? (void *)x->o64 : (void *)x->o32,
                            c->mode == HB_MODE_CONVERT ? HB_ELEM_F64 : HB_ELEM_F32, x->out.host, x->el, x->nout);
#endif
        ph[HB_PH_CONVERT_OUT] = (c->mode == HB_MODE_CONVERT || x->o32) ? hb_now() - t0 : 0;
    }
#ifdef HB_PLANT /* ---- PLANTED SLOWDOWN (make PLANT=1 only; plant.h): the call, inside its timed region, lasts
                  * HB_PLANT's factor times as long, by real work. Where the device-side delay above
                  * planted it, the call is longer by that delay alone, as with a slower kernel: a host
                  * spin after the call moved the next call's mapped-route reads (matmul 128^3 f32
                  * mapped read 8% faster in the planted build, H200 2026-11-27) ---- */
    if (plant_f > 1 && !plant_on_dev && x->plant_sub <= 0)
        hb_plant_spin((plant_f - 1) * (hb_now() - t_start - prep));
#endif
    ph[HB_PH_TOTAL] = hb_now() - t_start - prep;
    return HB_OK;
}

/* A resident case's inputs cross once, before sampling (converted to the device dtype first), on the
 * executor (exec.h), untimed; other modes: nothing. HB_OK or the placement's error. */
hb_status hb_case_place_resident(run_ctx *x)
{
    if (x->c->mode != HB_MODE_RESIDENT) return HB_OK;
    if (x->h32[0])
        for (int i = 0; i < x->nin; i++) hb_convert(x->in[i].host, x->el, x->h32[i], HB_ELEM_F32, x->nel[i]);
    double t_up = 0;
    return x->device ? hb_exec_place(x->inst, (hb_buf *[]){&x->in[0], &x->in[1], &x->in[2]}, x->nin, 0, &t_up) : HB_OK;
}
