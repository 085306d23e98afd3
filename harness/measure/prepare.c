/*
 * prepare.c - the start state of a timed compute: hot (the op's settled steady state) or cold
 * (caches evicted). See prepare.h and docs/measurement.md.
 */
#include "measure/prepare.h"
#include "measure/timed.h"
#include "core/stats.h"
#include "core/hybench.h"
#include "core/hostcache.h"
#include <math.h>

/* hb_settle: the rule of prepare.h, over any run */
hb_status hb_settle(hb_status (*run)(void *ctx, double *t_s), int (*vote)(void *ctx, int stop), void *ctx, hb_prep_state *ps,
                    double t0)
{
    double prev = 0;
    hb_status st = HB_OK;
    for (int i = 0; i < HB_SETTLE_MAX; i++) {
        double t = 0;
        st = run(ctx, &t);
        ps->runs++;
        if (st != HB_OK) break;
        double *best = ps->shared_best ? ps->shared_best : &ps->best_s;
        /* settled: as fast as the fastest warm run, or no longer getting faster (this run not
         * HB_SETTLE_TOL faster than the one before) while within HB_SETTLE_FAR of the fastest:
         * the caches have refilled, what is left is noise, which more runs do not remove. A run
         * further off is never settled: a refill can stall (with the no-longer-faster test alone,
         * max over 4096x1024 read 3.89x slower in convert than in f32 in a quick run on the VM) */
        int settled = *best > 0 && (t <= (1 + HB_SETTLE_TOL) * *best ||
                                    (prev > 0 && t >= (1 - HB_SETTLE_TOL) * prev && t <= (1 + HB_SETTLE_FAR) * *best));
        if (*best <= 0 || t < *best) *best = t;
        prev = t;
        int done = settled || hb_now() - t0 > HB_SETTLE_MAX_S || i == HB_SETTLE_MAX - 1;
        if (vote) done = vote(ctx, done);
        if (done) break;
    }
    return st;
}

/* One untimed run of an op for the hot rule: its time the device timer's where the backend has one
 * (a backend with device timers settles on the device's time of each run, the clock that times the
 * compute: the host clock adds its launch and synchronization latency, about 20 us on the H100,
 * under which a 5% change of a 10 us kernel cannot show; it did not move the one pair the H100 runs
 * mark: cuda gemv m=1 n=k=2048 computes 9.3 us in convert-device and 8.9 us in f32 after settling
 * either way), else the host clock's. */
typedef struct prep_run {
    hb_instance *inst;
    const hb_case *c;
    hb_buf *const *in;
    hb_buf *out;
} prep_run;

/* a collective's ranks must make the same calls: each rank's settle decision differs (its own
 * times), so they stop together, at the first rank that is settled (backend.h coll_vote); without
 * this one rank's next call met the other's vote, NCCL paired an all-reduce of one int with the
 * case's data (all_reduce n=2 over 2 ranks came out with a relative error of 0.5) and the ranks then
 * hung */
static int op_vote(void *ctx, int stop)
{
    prep_run *p = ctx;
    return p->inst->ops->coll_vote(p->inst, p->c, stop);
}

static hb_status op_run(void *ctx, double *t_s)
{
    prep_run *p = ctx;
    hb_instance *inst = p->inst;
    double t0;
    int dt;
    (void)hb_timed_begin(inst, 1, &t0, &dt); /* timed.h: the device's seconds where it has a timer */
    hb_status st = inst->ops->run(inst, p->c, p->in, p->out);
    (void)hb_timed_end(inst, dt, t0, t_s, NULL); /* a failed run's time is not used (hb_settle stops) */
    return st;
}

hb_status hb_compute_prepare(hb_instance *inst, int cold, const hb_case *c, hb_buf *const *in, hb_buf *out,
                             hb_prep_state *ps, double *spent_s)
{
    double t0 = hb_now();
    hb_status st = HB_OK;
    ps->calls++;
    /* mapped: the device reads its operands from host memory and writes its result there during
     * the compute, and a line some CPU cache holds is answered by that cache (a snoop hit), in
     * whatever state the mode's host work left it: convert has just written the operands from
     * every core, f32 wrote them once at set-up. The device's reads leave those states as they
     * are, through every settle run. Write every line back and evict it, hot or cold, in every
     * mode, so that the compute starts from the data in memory (hostcache.h). */
    if (!inst->host_memory && c->route == HB_ROUTE_MAPPED) {
        int nin = hb_op_get(c->op)->ninputs;
        for (int i = 0; i < nin && i < HB_MAX_INPUTS; i++)
            if (in[i] && in[i]->host) hb_host_evict(in[i]->host, in[i]->bytes);
        if (out && out->host) hb_host_evict(out->host, out->bytes);
    }
    if (cold) {
        if (inst->ops->flush_cache) inst->ops->flush_cache(inst);
    } else {
        prep_run pr = {inst, c, in, out};
        st = hb_settle(op_run, hb_op_is_collective(c->op) && inst->ops->coll_vote ? op_vote : NULL, &pr, ps, t0);
    }
    *spent_s = hb_now() - t0;
    return st;
}
