/*
 * sample_facts.c - the facts of a case record beside its statistics (sample.c builds the record): the
 * ceiling it is measured against, the host/device timer agreement, the raw samples as JSON, the stop
 * decision the ranks of a collective case agree on, the --energy window after its sampling, and the
 * verification's relative error of an output.
 */
#include "measure/internal.h"
#include "measure/exec.h"
#include "measure/energy.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double ceiling_get(const hb_ceiling_set *cl, const char *name)
{
    for (int i = 0; i < cl->n; i++)
        if (!strcmp(cl->v[i].name, name)) return cl->v[i].value;
    return NAN;
}

hb_status hb_timer_agreement(hb_rec_timer *t, char *why, size_t whylen, double host_s, double device_s, double enqueue_s)
{
    double diff = device_s > 0 ? (host_s - device_s) / device_s : (double)NAN;
    int agree = fabs(diff) <= HB_TIMER_AGREE;
    hb_status st = HB_OK;
#define SET(m, x) (st = st ? st : HB_REC_SET(hb_rec_timer, t, m, x))
    SET(host_s, host_s);
    SET(device_s, device_s);
    SET(diff, diff);
    SET(agree, agree);
    if (isfinite(enqueue_s)) SET(host_enqueue_s, enqueue_s);
    if (agree) return st;
    const int have_enq = isfinite(enqueue_s) && enqueue_s > 0;
    double rest = host_s - device_s - (have_enq ? enqueue_s : 0);
    if (device_s < HB_TIMER_MIN_S)
        snprintf(why, whylen, "device time %.1f us is under %.0f us: the host timer's launch and synchronization "
                 "latency (%.1f us here) is a large share of it", device_s * 1e6, HB_TIMER_MIN_S * 1e6, (host_s - device_s) * 1e6);
    else if (have_enq && enqueue_s > HB_TIMER_AGREE * device_s && fabs(rest) <= HB_TIMER_AGREE * device_s + HB_TIMER_SYNC_S)
        snprintf(why, whylen, "the host timer includes %.1f us of host-side library calls before the device work starts "
                 "(the device timer starts at the first launch) and %.1f us of launch and synchronization latency; "
                 "without them the timers agree", enqueue_s * 1e6, rest * 1e6);
    else if (host_s >= device_s && host_s - device_s <= HB_TIMER_AGREE * device_s + HB_TIMER_SYNC_S)
        snprintf(why, whylen, "the host timer includes the launch and synchronization latency that the gated device "
                 "events leave out (%.1f us, at most %.0f us plus %.0f%%); without it the timers agree",
                 (host_s - device_s) * 1e6, HB_TIMER_SYNC_S * 1e6, HB_TIMER_AGREE * 100);
    else
        snprintf(why, whylen, "unexplained: host exceeds device by %.1f us (%.1f%%)%s", (host_s - device_s) * 1e6, 100 * diff,
                 isfinite(enqueue_s) ? " beyond the host-side enqueue time" : "");
    SET(why, why);
    SET(explained, strncmp(why, "unexplained", 11) != 0);
#undef SET
    return st;
}

json_t *samples_json(const double *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(s[i]));
    return a;
}

/* A loop's stop decision, agreed across the ranks of a collective case (backend.h coll_vote): every
 * rank's process then makes the same number of calls. Other cases: stop as given. */
int agreed(run_ctx *x, int stop)
{
    if (!hb_op_is_collective(x->c->op) || !x->inst->ops->coll_vote) return stop;
    return x->inst->ops->coll_vote(x->inst, x->c, stop);
}
static int vote_cb(void *arg, int stop) { return agreed(arg, stop); }

/* The energy window's unit of work: `energy_batch` back-to-back calls of the backend's run hook on the
 * case's buffers (the op's compute alone: no conversion, no transfer, no prepare), so that reading
 * the counter (an NVML call) happens once per ~HB_ENERGY_BATCH_S of device work, not once per op. */
#define HB_ENERGY_BATCH_S 0.02
static int energy_batch = 1;
static hb_status energy_call(void *arg)
{
    run_ctx *x = arg;
    const hb_exec_step es = {.inst = x->inst, .c = x->c, .in = {&x->in[0], &x->in[1], &x->in[2]}, .out = &x->out};
    for (int k = 0; k < energy_batch; k++) {
        hb_status st = hb_exec_launch(&es); /* exec.h: the executor's launch, no clock of its own */
        if (st != HB_OK) return st;
    }
    return HB_OK;
}

/* The instance's energy counter and idle power, opened at the first --energy case of this process
 * (one backend type per process; measure/energy.h). */
static hb_energy_src energy_src;
static hb_instance *energy_inst;
static double energy_idle_w = NAN;

/* internal.h */
hb_status measure_energy(run_ctx *x, hb_rec_energy *e, double t_compute)
{
    const hb_options *o = x->o;
    if (energy_inst != x->inst) {
        hb_energy_open(&energy_src, x->inst, NULL);
        energy_inst = x->inst;
        /* idle power once per process, after a pause that lets the last case's power decay */
        if (energy_src.available) {
            usleep(500000);
            energy_idle_w = hb_energy_idle(&energy_src, o->energy_min_s);
        }
    }
    /* calls per batch: a power of 2 near HB_ENERGY_BATCH_S of compute; the ranks of a collective
     * agree on the largest of theirs (one vote per doubling) */
    int want = 1;
    while (want < 65536 && t_compute > 0 && (double)want * t_compute < HB_ENERGY_BATCH_S) want *= 2;
    energy_batch = 1;
    while (energy_batch < 65536 && agreed(x, energy_batch < want)) energy_batch *= 2;
    hb_energy_result r;
    double flops = hb_op_flops(x->c->op, &x->c->shape), bytes = hb_case_bytes(x->c);
    hb_status st = energy_src.available
                       ? hb_energy_window(&energy_src, energy_call, x, hb_op_is_collective(x->c->op) ? vote_cb : NULL, x,
                                          o->energy_min_s, &r)
                       : HB_EDEVICE;
    if (st == HB_OK) r.calls *= energy_batch; /* the window counted batches */
    hb_status ws = hb_energy_fill(e, &energy_src, st == HB_OK ? &r : NULL, o->energy_min_s, energy_idle_w, flops, bytes);
    if (!ws && st == HB_OK) ws = HB_REC_SET(hb_rec_energy, e, batch, energy_batch);
    return ws;
}

/* internal.h */
double hb_case_rel_error(run_ctx *x, const double *ref, long long *nonfinite, double *verified_fraction)
{
    hb_verify v;
    if (x->c->mode == HB_MODE_CONVERT || x->c->mode == HB_MODE_CONVERT_DEVICE)
        hb_verify_rel_error(x->o64, HB_ELEM_F64, ref, x->nout, HB_VERIFY_SUBSAMPLED, &v);
    else if (x->o32 && x->c->mode != HB_MODE_RESIDENT)
        hb_verify_rel_error(x->o32, HB_ELEM_F32, ref, x->nout, HB_VERIFY_SUBSAMPLED, &v);
    else hb_verify_rel_error(x->out.host, x->el, ref, x->nout, HB_VERIFY_SUBSAMPLED, &v);
    *nonfinite = v.nonfinite;
    *verified_fraction = v.fraction;
    return v.rel;
}
