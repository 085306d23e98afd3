/*
 * sample.c - measuring one case on one backend instance: buffers for its mode and route, one call
 * timed phase by phase (call.c hb_case_call), the poisoned first run verified against the cpu-ref reference
 * (cached per workload item), warm-up, then sampling windows until the median's CI meets the target
 * or the budget runs out; the case record with every raw sample, its statistics, its fraction of the
 * ceiling and the timer agreement. The chain's cases go to chain.c.
 */
#include "measure/internal.h"
#include "measure/timed.h"
#include "measure/exec.h"
#include "measure/energy.h"
#include "measure/instr.h"
#include "measure/refcache.h"
#include "core/rstats.h"
#include "cpu_ref/ref.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* One timed call for the instruction count (instr.h). */
static hb_status instr_call(void *x) { double ph[HB_PH_COUNT], hc; return hb_case_call(x, ph, &hc); }

/* Poison the output (verify.h): the buffer in the device dtype (and its device copy), the f64 and
 * f32 host tensors. */
static hb_status poison_output(run_ctx *x)
{
    hb_verify_poison(x->o64, HB_ELEM_F64, x->nout);
    hb_verify_poison(x->o32, HB_ELEM_F32, x->nout);
    return hb_verify_poison_buf(x->inst, &x->out, x->el, x->nout, x->device && x->out.route != HB_ROUTE_MAPPED);
}

/* Samples per window: one (the verification run) under `hybench verify`, else --max-samples. */
static int window_cap(const hb_options *o) { return o->verify_only ? 1 : o->max_samples; }

/* One mode variant of a group (hb_measure_group): its data path, samples and record. */
typedef struct mvar {
    const hb_case *c;
    run_ctx x;
    int opened;                 /* ctx_init ran (x must be freed) */
    int ready;                  /* verified and warm: takes part in sampling */
    int deferred;               /* out of memory beside the others: measured alone after the group */
    json_t *rec;                /* the case record (NULL until created) */
    int final;                  /* rec is complete as it is (skipped, set-up failed, the chain's) */
    int chain;                  /* a chain case (measured by chain.c with the group's other chain cases) */
    hb_status st;
    char reason[512];
    double rel, vfrac, tol;
    long long nonfinite;
    int warmups;
    double *samp[HB_PH_COUNT], *hostc;
    size_t nsw[HB_MAX_REPETITIONS];
    double wmed[HB_MAX_REPETITIONS];
    int wmet[HB_MAX_REPETITIONS];  /* the CI target met in each window */
    int best, ci_met;
    size_t n;                   /* samples in the current window */
    int met, active;
    int want;                   /* grouped sampling: this variant's own stopping rule still wants samples */
    double spent;               /* wall seconds of this variant's calls in the current window */
    int refc;                   /* hb_refc_state of the reference it was verified against */
    double wall_setup, wall_sampling, wall_ref; /* where its wall time went (record "wall_s"): set-up,
                                 * verification and warm-up; timed calls (with their settle runs) over
                                 * every window; the reference computation it waited for */
    int64_t mem_before, mem_after, dfree, dtotal;
    long long rss_peak;         /* peak RSS of its set-up and verification, as if it were alone */
    long long group_dev, group_host; /* a variant on the group's buffers (x.borrowed): the device
                                 * bytes their owner's allocation measured, and their host bytes,
                                 * added to its own figures (what it would hold alone) */
} mvar;

static long g_prepares; /* var_prepare calls in this process (hb_group_prepares) */

/* The record of a variant that ends before sampling (skipped, unsupported, failed set-up). */
static void var_status(mvar *v, const char *inst_name, hb_status st, const char *reason)
{
    v->st = st;
    v->rec = hb_case_status_record(v->c, inst_name, st, reason);
    v->final = 1;
}

/* The buffers of variant v can serve variant c: the same op, shape, dtype and route, allocated. */
static int group_buffers_fit(const mvar *v, const hb_case *c)
{
    return v && v->opened && v->x.have_out && v->c->op == c->op && v->c->dtype == c->dtype &&
           v->c->route == c->route && !memcmp(&v->c->shape, &c->shape, sizeof c->shape);
}

/* Host bytes behind the buffers of x (what its process holds of them in RSS once written). */
static long long buffers_host_bytes(const run_ctx *x)
{
    long long b = x->out.host ? (long long)x->out.bytes : 0;
    for (int i = 0; i < x->nin; i++)
        if (x->in[i].host) b += (long long)x->in[i].bytes;
    return b;
}


/* Set-up, verification on a poisoned output and warm-up of one variant (steps 1-2 of the case).
 * owner: the group's variant whose buffers this one computes on, or NULL to allocate its own. */
static void var_prepare(mvar *v, hb_instance *inst, const hb_options *o, hb_ref_cache *rc, double *shared_best,
                        long long rss_base, const mvar *owner)
{
    int in_group = shared_best != NULL;
    const hb_case *c = v->c;
    v->rel = NAN;
    v->tol = hb_op_tolerance(c->op, &c->shape, c->dtype);
    v->mem_before = v->mem_after = v->dfree = v->dtotal = -1;
    if (inst->ops->mem_info) inst->ops->mem_info(inst, &v->mem_before, &v->dfree, &v->dtotal);
    g_prepares++;
    hb_rss_reset();
    long long rss0 = hb_rss_now();
    if (!group_buffers_fit(owner, c)) owner = NULL;
    hb_status st = hb_ctx_init(&v->x, inst, c, o, rc, v->reason, sizeof v->reason, owner ? &owner->x : NULL);
    v->opened = 1;
    if (owner) {
        v->group_dev = owner->mem_after >= 0 && owner->mem_before >= 0 ? owner->mem_after - owner->mem_before : 0;
        v->group_host = buffers_host_bytes(&owner->x);
    }
    v->x.prep.shared_best = shared_best;
    if (st != HB_OK) {
        if (st == HB_ENOMEM && in_group) { v->deferred = 1; return; } /* retried alone after the group */
        var_status(v, inst->name, st, v->reason);
        return;
    }
    if (inst->ops->mem_info) inst->ops->mem_info(inst, &v->mem_after, &v->dfree, &v->dtotal);
    v->rec = hb_case_record(c, inst->name);
    double ph[HB_PH_COUNT], hc;
    int max_s = window_cap(o);
    int nwin = o->verify_only ? 1 : o->repetitions;
    for (int p = 0; p < HB_PH_COUNT; p++) v->samp[p] = calloc((size_t)max_s * (size_t)nwin, sizeof(double));
    v->hostc = calloc((size_t)max_s * (size_t)nwin, sizeof(double));
    if (!v->samp[HB_PH_COUNT - 1] || !v->hostc || !v->samp[0]) { v->st = HB_ENOMEM; snprintf(v->reason, sizeof v->reason, "sample arrays"); return; }
    /* 1. verification run on a poisoned output (also the first warm-up: JIT, handles, page faults) */
    if ((st = hb_case_place_resident(&v->x)) != HB_OK) { v->st = st; snprintf(v->reason, sizeof v->reason, "upload failed"); return; }
    st = poison_output(&v->x);
    if (st == HB_OK) st = hb_case_call(&v->x, ph, &hc);
    hb_buf *ob = &v->x.out;
    double t_down = 0;
    if (st == HB_OK && c->mode == HB_MODE_RESIDENT && v->x.device) st = hb_exec_fetch(inst, &ob, 1, 0, &t_down);
    v->warmups++;
    /* its own set-up's peak: the peak since the reset, less what the group's other variants hold */
    long long pk = hb_rss_peak();
    v->rss_peak = (pk >= 0 && rss0 >= 0 && rss_base >= 0) ? pk - rss0 + rss_base : pk;
    if (pk >= 0) v->rss_peak += v->group_host;
    if (st != HB_OK) { v->st = st; snprintf(v->reason, sizeof v->reason, "run failed: %s", hb_status_name(st)); return; }
    v->rel = hb_case_rel_error(&v->x, rc->out, &v->nonfinite, &v->vfrac);
    /* 2. warm-up: at least one more call, up to 10% of the budget */
    if (!o->verify_only) {
        double tw = hb_now();
        do {
            st = hb_case_call(&v->x, ph, &hc);
            v->warmups++;
        } while (st == HB_OK && !agreed(&v->x, !(hb_now() - tw < 0.1 * o->budget_s && v->warmups < 20)));
        if (st != HB_OK) { v->st = st; snprintf(v->reason, sizeof v->reason, "run failed during warm-up: %s", hb_status_name(st)); return; }
    }
    if (o->instr_calls > 0 && !o->verify_only &&
        (st = hb_instr_count(instr_call, &v->x, o->instr_calls, o->callgrind_dir, v->rec, v->reason, sizeof v->reason)) != HB_OK) {
        v->st = st;
        return;
    }
    v->ready = 1;
}

/* Step 4, the last sample's output checked too (STREAM validates after timing): right after the
 * variant's last call, while the group's shared buffers still hold its result. */
static void var_check_last(mvar *v, hb_ref_cache *rc)
{
    hb_instance *inst = v->x.inst;
    if (v->c->mode == HB_MODE_RESIDENT && v->x.device) {
        hb_buf *ob = &v->x.out;
        double t_down = 0;
        hb_status st = hb_exec_fetch(inst, &ob, 1, 0, &t_down);
        if (st != HB_OK) {
            v->st = st;
            snprintf(v->reason, sizeof v->reason, "download of the last sample's output failed: %s", hb_status_name(st));
            return;
        }
    }
    double vf2;
    long long nf2;
    double rel2 = hb_case_rel_error(&v->x, rc->out, &nf2, &vf2);
    if (!(rel2 <= v->rel)) v->rel = rel2;
    if (nf2 > v->nonfinite) v->nonfinite = nf2;
}

/* Samples a variant takes at least when each of its calls outlasts its budget (a 1 GB conversion at
 * the gate's --budget 0.01): the fewest a median and the mode check's bootstrap can use; the group's
 * shared budget ends the rounds only once every mode has this many (hb_measure_group). */
#define HB_LONG_CALL_SAMPLES 3

/* One sample of variant v in window win; updates its stop state (max samples, CI met, budget). When
 * it stops in the last window (last), its output is checked (var_check_last).
 * grouped: one of several modes sampled in the same rounds (hb_measure_group): the variant does not
 * stop by itself; its rule only sets v->want (it would take more samples) and v->met, and the group
 * ends every variant together. closing: the group's last round: the variant stops after this sample
 * (and its output is checked in the last window). */
static void var_sample(mvar *v, const hb_options *o, int win, double budget, int last, hb_ref_cache *rc, int grouped,
                       int closing)
{
    int max_s = window_cap(o);
    double ph[HB_PH_COUNT], hc;
    double t0 = hb_now();
    hb_status st = hb_case_call(&v->x, ph, &hc);
    v->spent += hb_now() - t0;
    if (st != HB_OK) {
        v->st = st;
        snprintf(v->reason, sizeof v->reason, "run failed while sampling: %s", hb_status_name(st));
        v->active = 0;
        v->ready = 0;
        return;
    }
    size_t off = (size_t)win * (size_t)max_s;
    for (int p = 0; p < HB_PH_COUNT; p++) v->samp[p][off + v->n] = ph[p];
    v->hostc[off + v->n] = hc;
    v->n++;
    size_t n = v->n;
    int stop = (int)n >= max_s, met = 0;
    if (!stop && (int)n >= o->min_samples && (n < 64 || n % 8 == 0)) {
        hb_stats s;
        hb_stats_compute(v->samp[HB_PH_TOTAL] + off, n, &s);
        if (s.median > 0 && (s.ci_hi - s.ci_lo) / 2 <= o->ci_target * s.median) met = stop = 1;
    }
    if (!stop && (int)n >= o->min_samples && v->spent > budget) stop = 1;
    /* a single sample longer than the budget: stop at HB_LONG_CALL_SAMPLES anyway */
    if (!stop && (int)n >= HB_LONG_CALL_SAMPLES && v->spent > 4 * budget && ph[HB_PH_TOTAL] > budget) stop = 1;
    if (grouped) { /* v->met is decided from the window's samples when the group's rounds end */
        v->want = !stop;
        if (closing) {
            v->active = 0;
            if (last) var_check_last(v, rc);
        }
        return;
    }
    /* collectives over several ranks (never grouped): every rank stops at the same sample (a rank that still wanted
     * more keeps its met flag 0); max_s is the same on every rank, so n never exceeds it */
    if (agreed(&v->x, stop)) {
        v->active = 0;
        v->met = met;
        if (last) var_check_last(v, rc);
    }
}

/* Steps 4-5: the last sample's output checked too, then the record's statistics and facts: the
 * record set-up left (v->rec) read into its struct (results/record.h), the measured members set in
 * the record's order, and the record written back from the struct into v->rec. */
static void var_finish(mvar *v, hb_instance *inst, const hb_options *o, const hb_ceiling_set *cl,
                       const double ck[4], int nwin, int in_group)
{
    const hb_case *c = v->c;
    hb_status st = v->st, ws = HB_OK;
    hb_rec_case r;
    json_t *extra = NULL;
    char cname[48], why[256];
    if (hb_rec_case_parse(v->rec, &r) != HB_OK) { v->st = HB_ENOMEM; return; }
#define SET(m, x) (ws = ws ? ws : HB_REC_SET(hb_rec_case, &r, m, x))
#define PUT(m) (ws = ws ? ws : hb_rec_put(&hb_rec_case_table, &r, offsetof(hb_rec_case, m)))
#define SETIN(T, s, m, x) (ws = ws ? ws : HB_REC_SET(T, s, m, x))
    size_t ns = 0;
    if (st == HB_OK) {
        ns = v->nsw[v->best];
        /* keep the best window's samples at the front */
        if (v->best > 0) {
            size_t off = (size_t)v->best * (size_t)window_cap(o);
            for (int p = 0; p < HB_PH_COUNT; p++) memmove(v->samp[p], v->samp[p] + off, ns * sizeof(double));
            memmove(v->hostc, v->hostc + off, ns * sizeof(double));
        }
        /* 3b. --energy: a window of calls bracketed by the energy counter (measure/energy.h), the
         * case alone (after its group's interleaved sampling) */
        if (o->energy_min_s > 0 && !o->verify_only) {
            /* the batch is sized on the host's time of a call (launch and synchronization included),
             * which back-to-back calls take, when the device timer saw less */
            hb_stats sc, sh;
            hb_stats_compute(v->samp[HB_PH_COMPUTE], ns, &sc);
            hb_stats_compute(v->hostc, ns, &sh);
            if (!ws) ws = measure_energy(&v->x, &r.energy, v->x.device && hb_timed_has_timer(inst) && sh.median > sc.median ? sh.median : sc.median);
            PUT(energy);
        }
        /* 4. the last sample's output was checked when the variant stopped (var_check_last) */
    }
    char *reason = v->reason;
    size_t rlen = sizeof v->reason;
    double rel = v->rel;
    SET(ci_target, o->ci_target);
    SET(warmup_runs, v->warmups);
    SETIN(hb_rec_wall, &r.wall, setup, v->wall_setup);
    SETIN(hb_rec_wall, &r.wall, sampling, v->wall_sampling);
    SETIN(hb_rec_wall, &r.wall, reference, v->wall_ref);
    PUT(wall);
    if (o->ref_cache && *o->ref_cache) /* read from the on-disk cache or computed (refcache.h) */
        SET(reference_cache, hb_refc_state_name((hb_refc_state)v->refc));
    if (v->x.prep.calls && !o->cold) SET(settle_runs, (double)v->x.prep.runs / (double)v->x.prep.calls);
    if (in_group > 1 && !o->verify_only) SET(interleaved_with, in_group - 1);
    if (nwin > 1 && st == HB_OK) {
        SET(repetitions, nwin);
        if (!ws) ws = hb_rec_nums_set(&r.window_medians, v->wmed, (size_t)nwin);
        PUT(window_medians);
        SET(best_window, v->best);
    }
    if (st == HB_OK) {
        double **samp = v->samp;
        hb_stats sp[HB_PH_COUNT];
        for (int p = 0; p < HB_PH_COUNT; p++) {
            hb_stats_compute(samp[p], ns, &sp[p]);
            if (!ws) ws = hb_rec_stats_set(&r.phase[p], &sp[p]);
            PUT(phase[p]);
        }
        if (!ws) ws = hb_rec_nums_set(&r.samples[HB_PH_TOTAL], samp[HB_PH_TOTAL], ns);
        PUT(samples[HB_PH_TOTAL]);
        if (!ws) ws = hb_rec_nums_set(&r.samples[HB_PH_COMPUTE], samp[HB_PH_COMPUTE], ns);
        PUT(samples[HB_PH_COMPUTE]);
        hb_stats hs = {0};
        int two_timers = v->x.device && hb_timed_has_timer(inst);
        if (two_timers) {
            hb_stats_compute(v->hostc, ns, &hs);
            if (!ws) ws = hb_rec_stats_set(&r.host_compute, &hs);
            PUT(host_compute);
        }
        SET(ci_met, v->ci_met || o->verify_only);
        if (isfinite(ck[0]) && isfinite(ck[2])) {
            SETIN(hb_rec_clock, &r.clock, min, fmin(ck[0], ck[2]));
            SETIN(hb_rec_clock, &r.clock, max, fmax(ck[1], ck[3]));
            if (!ws) ws = hb_rec_nums_set(&r.clock.before, ck, 2);
            if (!ws) ws = hb_rec_put(&hb_rec_clock_table, &r.clock, offsetof(hb_rec_clock, before));
            if (!ws) ws = hb_rec_nums_set(&r.clock.after, ck + 2, 2);
            if (!ws) ws = hb_rec_put(&hb_rec_clock_table, &r.clock, offsetof(hb_rec_clock, after));
            PUT(clock);
        }
        double flops = hb_op_flops(c->op, &c->shape), bytes = hb_case_bytes(c);
        double tc = sp[HB_PH_COMPUTE].median, tt = sp[HB_PH_TOTAL].median;
        double gf = tc > 0 ? flops / tc / 1e9 : 0, gb = tc > 0 ? bytes / tc / 1e9 : 0;
        SET(gflops, gf);
        SET(gbps, gb);
        SET(gflops_total, tt > 0 ? flops / tt / 1e9 : 0);
        SET(gbps_total, tt > 0 ? bytes / tt / 1e9 : 0);
        if (hb_op_is_collective(c->op)) {
            /* nccl-tests' figures (doc/PERFORMANCE.md): size S, time, algbw = S/t, busbw = algbw x factor */
            double fac = hb_coll_busbw_factor(c->op, &c->shape);
            hb_rec_collective *co = &r.collective;
            SETIN(hb_rec_collective, co, size_bytes, bytes);
            SETIN(hb_rec_collective, co, time_s, tc);
            SETIN(hb_rec_collective, co, algbw_gbps, gb);
            SETIN(hb_rec_collective, co, busbw_gbps, gb * fac);
            SETIN(hb_rec_collective, co, busbw_factor, fac);
            SETIN(hb_rec_collective, co, ranks, (double)c->shape.ranks);
            SETIN(hb_rec_collective, co, path, hb_coll_path_name(c->shape.path));
            SETIN(hb_rec_collective, co, in_place, (int)c->shape.inplace);
            PUT(collective);
        }
        if (hb_op_get(c->op)->compute_bound) snprintf(cname, sizeof cname, "peak_gflops_%s", hb_dtype_name(c->dtype));
        else snprintf(cname, sizeof cname, "copy_gbps");
        double cv = ceiling_get(cl, cname);
        SET(ceiling, cname);
        SET(ceiling_value, cv);
        SET(fraction, (isnan(cv) || cv <= 0) ? (double)NAN : (hb_op_get(c->op)->compute_bound ? gf : gb) / cv);
        SET(rel_err, rel); /* "inf" when not finite */
        SET(tolerance, v->tol);
        SET(verified_fraction, v->vfrac);
        if (!(rel <= v->tol)) {
            st = HB_EWRONG;
            if (v->nonfinite) snprintf(reason, rlen, "%lld output elements are NaN/Inf (unwritten or overflow)", v->nonfinite);
            else snprintf(reason, rlen, "relative error %.3g over tolerance %.3g", rel, v->tol);
        }
        if (inst->ops->case_info) {
            char buf[2048];
            if (inst->ops->case_info(inst, c, buf, sizeof buf) == HB_OK && (extra = json_loads(buf, 0, NULL)))
                SET(extra_json, extra);
        }
        /* the implementation that ran (cublas, openblas-sgemm, sleef, ...): the backend's extra.impl
         * lifted to the record's top level; "own" when the backend names none (its own kernels) */
        {
            const char *impl = json_string_value(json_object_get(r.extra_json, "impl"));
            SET(impl, impl && *impl ? impl : "own");
        }
        if (two_timers) {
            json_t *enq = json_object_get(r.extra_json, "host_enqueue_s");
            if (!ws) ws = hb_timer_agreement(&r.timer, why, sizeof why, hs.median, sp[HB_PH_COMPUTE].median,
                                             json_is_number(enq) ? json_number_value(enq) : (double)NAN);
            SET(timer_disagreement, r.timer.agree != 1);
            PUT(timer);
        }
    }
    {
        run_ctx *x = &v->x;
        SETIN(hb_rec_mem, &r.mem, host_bytes, (double)x->host_bytes);
        SETIN(hb_rec_mem, &r.mem, staging_bytes, (double)x->staging_bytes);
        SETIN(hb_rec_mem, &r.mem, device_bytes,
              (double)(v->mem_after >= 0 && v->mem_before >= 0 && x->device ? v->mem_after - v->mem_before + v->group_dev : x->device_bytes));
        SETIN(hb_rec_mem, &r.mem, peak_rss_bytes, (double)v->rss_peak);
        if (v->dtotal >= 0) {
            SETIN(hb_rec_mem, &r.mem, device_free_bytes, (double)v->dfree);
            SETIN(hb_rec_mem, &r.mem, device_total_bytes, (double)v->dtotal);
        }
        PUT(mem);
    }
    SET(status, hb_status_name(st));
    if (st != HB_OK) SET(reason, reason);
#undef SET
#undef PUT
#undef SETIN
    json_t *out = ws ? NULL : hb_rec_case_json(&r);
    hb_rec_case_free(&r); /* borrowed from v->rec and extra, which outlive it until here */
    json_decref(extra);
    if (out) {
        json_decref(v->rec);
        v->rec = out;
    } else st = HB_ENOMEM; /* out of memory: the record stays as set-up left it */
    v->st = st;
}

static void var_free(mvar *v)
{
    for (int p = 0; p < HB_PH_COUNT; p++) { free(v->samp[p]); v->samp[p] = NULL; }
    free(v->hostc);
    v->hostc = NULL;
    if (v->opened) hb_ctx_free(&v->x);
    v->opened = 0;
}

/* A group set up, verified and warmed (hb_group_prepare), ready to take rounds of samples. */
struct hb_group {
    hb_instance *inst;
    hb_case cases[HB_MAX_GROUP]; /* the group's own copy: v[k].c points here */
    int n, item, nready;
    const char *skip;
    hb_ref_cache *rc;
    mvar *v;
    json_t *base[HB_MAX_GROUP];  /* each variant's record as set-up left it (a complete one when final) */
    int rounds;                  /* hb_group_sample calls so far */
    int placements;              /* the buffers' placements: 1 at set-up, one more per move (group_move) */
    hb_rng rng;                  /* the spacers' sizes (group_move) */
    double shared_best;          /* the hot rule's fastest warm run, shared by the group's modes (prepare.h):
                                  * the variants keep its address for every round, so it lives here, with the
                                  * group (a local of hb_group_prepare left them a dead stack slot) */
};

/* A served round after the first moves the group's data path to new memory before its samples, as a
 * fresh process's round would have it: a served process otherwise keeps its buffers where set-up put
 * them for the whole gate, and their placement (physical pages; addresses, whose low bits decide
 * cache sets and 4K aliasing between operands) biases every round alike. Measured on the 2-vCPU VM
 * (tests/data/ab_small.ini, cpu, one thread, A/A, 12 served rounds, buffers kept): add n=16384 convert
 * read 0.934 [0.917, 0.949] and 0.957 [0.950, 0.963] in two of four runs, mul n=4096 convert 1.021
 * [1.018, 1.038], where per-round processes read 0.989-1.021 (docs/compare.md "Served rounds"). The
 * same remedy as Stabilizer's (Curtsinger & Berger, ASPLOS 2013): re-randomize the layout during the
 * run so that its effect averages over rounds instead of staying one bias. The new buffers are
 * allocated while the old ones are held, behind two spacers of random size (heap bytes, which shift
 * the new addresses; mapped pages, which take a random number of free physical pages first), then
 * the old ones are freed. Each moved variant makes one untimed call (page faults, caches) before the
 * round's samples; the round's last outputs are checked against the reference as always. When one
 * variant cannot move (memory), none does (they share one set of buffers), said on stderr. */
static void group_move(hb_group *g)
{
    mvar *v = g->v;
    run_ctx old[HB_MAX_GROUP];
    int moved[HB_MAX_GROUP] = {0};
    size_t heap_b = 64 * (1 + (size_t)(hb_rng_next(&g->rng) % 1024)); /* 64 B .. 64 KiB */
    size_t map_b = 4096 * (1 + (size_t)(hb_rng_next(&g->rng) % 512)); /* 4 KiB .. 2 MiB */
    void *sp_heap = malloc(heap_b);
    if (sp_heap) memset(sp_heap, 0, heap_b);
    void *sp_map = mmap(NULL, map_b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    const mvar *owner = NULL;   /* the first moved variant with buffers of its own: the others compute on them */
    char why[256] = "", key[512] = "";
    int ok = 1;
    for (int k = 0; k < g->n && ok; k++) {
        if (!v[k].ready || v[k].deferred) continue;
        const run_ctx *grp = group_buffers_fit(owner, v[k].c) ? &owner->x : NULL;
        if (hb_ctx_move(&v[k].x, &old[k], g->rc, grp, why, sizeof why) != HB_OK) {
            hb_case_key(v[k].c, g->inst->name, key, sizeof key);
            ok = 0;
            break;
        }
        moved[k] = 1;
        if (!owner && v[k].x.have_out) owner = &v[k];
    }
    /* all or none: the modes keep computing on one set of buffers */
    for (int k = g->n - 1; k >= 0; k--) {
        if (!moved[k]) continue;
        run_ctx *gone = ok ? &old[k] : &v[k].x;
        hb_ctx_free(gone);
        if (!ok) v[k].x = old[k];
    }
    if (sp_map != MAP_FAILED) munmap(sp_map, map_b);
    free(sp_heap);
    if (!ok) { fprintf(stderr, "hybench: %s: buffers not moved for this round: %s\n", key, why); return; }
    g->placements++;
    for (int k = 0; k < g->n; k++) {
        double ph[HB_PH_COUNT], hc;
        if (moved[k] && (hb_case_place_resident(&v[k].x) != HB_OK || hb_case_call(&v[k].x, ph, &hc) != HB_OK)) {
            hb_case_key(v[k].c, g->inst->name, key, sizeof key);
            fprintf(stderr, "hybench: %s: the first call on moved buffers failed (the round's samples will say)\n", key);
        }
    }
}

long hb_group_prepares(void) { return g_prepares; }

hb_group *hb_group_prepare(hb_instance *inst, const hb_case *cases, int n, int item, const char *skip, const hb_options *o,
                           hb_ref_cache *rc, const hb_ceiling_set *cl)
{
    (void)cl;
    if (n < 1 || n > HB_MAX_GROUP) return NULL;
    hb_group *g = calloc(1, sizeof *g);
    mvar *v = g ? calloc((size_t)n, sizeof *v) : NULL;
    if (!v) { free(g); return NULL; }
    g->inst = inst; g->n = n; g->item = item; g->skip = skip; g->rc = rc; g->v = v;
    memcpy(g->cases, cases, (size_t)n * sizeof *cases);
    g->placements = 1;
    hb_rng_seed(&g->rng, (uint64_t)o->seed ^ ((uint64_t)item << 32));
    int nready = 0;
    for (int k = 0; k < n; k++) v[k].c = &g->cases[k];
    /* 0. what ends before any run: the item's skip, supports(), cpu-ref's size limit, the chain */
    for (int k = 0; k < n; k++) {
        const hb_case *c = v[k].c;
        char reason[512] = "";
        if (hb_case_precheck(inst, c, skip, o, reason, sizeof reason) != HB_OK) { var_status(&v[k], inst->name, HB_ESKIP, reason); continue; }
        if (c->op == HB_OP_CHAIN) v[k].chain = 1;
    }
    /* the chain's modes (runner.c groups chains only with chains): measured together in chain.c */
    {
        hb_case cc[HB_MAX_GROUP];
        int ck[HB_MAX_GROUP], nc = 0;
        for (int k = 0; k < n; k++)
            if (v[k].chain && !v[k].rec) { cc[nc] = *v[k].c; ck[nc++] = k; }
        if (nc) {
            json_t *cr[HB_MAX_GROUP];
            hb_status cs[HB_MAX_GROUP];
            hb_chain_measure_group(inst, cc, nc, o, cl->v, cl->n, cr, cs);
            for (int j = 0; j < nc; j++) { v[ck[j]].rec = cr[j]; v[ck[j]].st = cs[j]; v[ck[j]].final = 1; }
        }
    }
    int need_ref = 0;
    for (int k = 0; k < n; k++) need_ref |= !v[k].rec;
    if (need_ref) {
        double tr = hb_now();
        hb_status st = hb_ref_cache_get(rc, v[0].c, item, o);
        tr = hb_now() - tr; /* 0 when cached; the group's modes share it: counted once, on the first */
        for (int k = 0; k < n; k++)
            if (!v[k].rec) { v[k].wall_ref = tr; break; }
        for (int k = 0; k < n; k++) v[k].refc = rc->cstate;
        if (st != HB_OK)
            for (int k = 0; k < n; k++)
                if (!v[k].rec) var_status(&v[k], inst->name, st == HB_ENOMEM ? HB_ENOMEM : HB_EINVAL, "reference computation failed (out of host memory?)");
    }
    /* 1-2. set-up, verification and warm-up of every variant. They compute on one set of buffers,
     * the first variant's: with a set per mode, the modes' operands sat at different addresses and
     * competed for the device's caches and address translations, and a mode's compute time depended
     * on how its own operands had last been written (docs/measurement.md, "One set of buffers") */
    long long rss_base = hb_rss_now();
    g->shared_best = 0;
    const mvar *owner = NULL;
    for (int k = 0; k < n; k++) {
        if (v[k].rec) continue;
        double tp = hb_now();
        var_prepare(&v[k], inst, o, rc, n > 1 ? &g->shared_best : NULL, rss_base, owner);
        v[k].wall_setup = hb_now() - tp;
        if (!owner && v[k].opened && v[k].x.have_out && !v[k].deferred) owner = &v[k];
        nready += v[k].ready;
    }
    g->nready = nready;
    for (int k = 0; k < n; k++) { g->base[k] = v[k].rec; v[k].rec = NULL; }
    return g;
}

int hb_group_sample(hb_group *g, const hb_options *o, const hb_ceiling_set *cl, json_t **recs, hb_status *st_out)
{
    hb_instance *inst = g->inst;
    hb_ref_cache *rc = g->rc;
    mvar *v = g->v;
    const int n = g->n, nready = g->nready;
    if (g->rounds++ > 0 && nready) group_move(g);
    for (int k = 0; k < n; k++) { /* a new round: the record as set-up left it, no samples yet */
        v[k].rec = g->base[k] ? json_deep_copy(g->base[k]) : NULL;
        if (g->base[k] && !v[k].rec) return -1;
        v[k].best = v[k].ci_met = 0;
        v[k].wall_sampling = 0;
    }
    /* 3. sampling until each variant's median CI is tight enough or its budget is spent, in
     * `repetitions` windows separated in time (each with budget/repetitions per variant). The
     * variants of a group (one case in several modes) take their samples in turns, in an order that
     * rotates every round, so that drift on a shared machine (seconds to minutes) reaches every mode
     * alike instead of reading as a difference between modes. Each variant keeps its window with the
     * lowest median total: interference on a shared machine only ever adds time, so the best window
     * is the most robust estimate (Chen & Revels, "Robust benchmarking in noisy environments", 2016,
     * the estimator of Julia's BenchmarkTools); every window's median is recorded beside it. */
    int nwin = o->verify_only ? 1 : o->repetitions;
    double ck[4] = {NAN, NAN, NAN, NAN}; /* host clock (GHz) before / after sampling: slowest, fastest CPU */
    if (nready) {
        if (!o->verify_only) hb_clock_probe(&ck[0], &ck[1]);
        double budget = o->budget_s / nwin;
        for (int win = 0; win < nwin; win++) {
            if (win > 0) usleep(20000); /* separate the windows in time */
            int nact = 0;
            for (int k = 0; k < n; k++) {
                v[k].n = 0; v[k].met = 0; v[k].spent = 0; v[k].want = 1;
                v[k].active = v[k].ready;
                nact += v[k].active;
            }
            /* With more than one variant ready, every variant takes one sample in every round, and the
             * rounds end for all of them together: when none of them wants more samples (each one's
             * CI target met, or its budget spent) or the group has spent the sum of their budgets,
             * once every one has --min-samples; or when one reaches the sample cap. Then one closing
             * round, whose outputs are checked.
             * When a variant stopped by itself, the others went on sampling alone, back to back with
             * no other mode's work between their calls: on the VM the resident mode of relu n=4Mi
             * (opencl) took 44 samples, most of them alone, and read 0.66x f32's 7; every mode now
             * has the same rounds, so their medians compare like with like. */
            const int grouped = nact > 1;
            int closing = 0;
            for (int round = 0; nact; round++) {
                for (int t = 0; t < n; t++) {
                    mvar *w = &v[(t + round) % n];
                    if (w->active) var_sample(w, o, win, budget, win == nwin - 1, rc, grouped, closing);
                }
                nact = 0;
                int want = 0, full = 0, minn = INT_MAX;
                double gspent = 0;
                for (int k = 0; k < n; k++) {
                    if (!v[k].active) continue;
                    nact++;
                    want |= v[k].want;
                    gspent += v[k].spent;
                    full |= (int)v[k].n >= window_cap(o) - 1;
                    if ((int)v[k].n < minn) minn = (int)v[k].n;
                }
                /* Each mode's own rule holds --min-samples, or 3 samples for calls longer than the budget
                 * (var_sample), so the group ends when none wants more; the group's budget ends it only
                 * once every mode has HB_LONG_CALL_SAMPLES (with the closing round's): a mode whose calls outlast the
                 * window's budget (a 1 GB conversion) would otherwise leave after two rounds. Requiring
                 * --min-samples here instead cost the merge gate a third of its rounds (its budget of
                 * 0.01 s makes most opencl cases long: 37 s runs instead of 24 s, 11 rounds instead of
                 * 16-18 in 840 s, 44 of 49 planted cases caught instead of 48-49). */
                const int enough = minn + 1 >= HB_LONG_CALL_SAMPLES;
                if (grouped && nact && !closing && (full || !want || (enough && gspent > budget * nact))) closing = 1;
            }
            for (int k = 0; k < n; k++) {
                if (!v[k].ready) continue;
                hb_stats s;
                hb_stats_compute(v[k].samp[HB_PH_TOTAL] + (size_t)win * (size_t)window_cap(o), v[k].n, &s);
                /* grouped variants sampled on after meeting their CI target: met as at the end */
                if (grouped) v[k].met = v[k].n && s.median > 0 && (s.ci_hi - s.ci_lo) / 2 <= o->ci_target * s.median;
                v[k].nsw[win] = v[k].n;
                v[k].wall_sampling += v[k].spent;
                v[k].wmed[win] = s.median;
                v[k].wmet[win] = v[k].met;
                if (win == 0 || s.median < v[k].wmed[v[k].best]) { v[k].best = win; v[k].ci_met = v[k].met; }
            }
        }
        if (!o->verify_only) hb_clock_probe(&ck[2], &ck[3]);
        /* Modes sampled in the same rounds keep the same window, the one whose medians are lowest
         * together (geometric mean of each mode's median over its own lowest), so that the modes
         * compared by the mode-invariance check were measured at the same moments; each mode picking
         * its own window compared, e.g., convert's third window with f32's first. */
        int nr = 0;
        for (int k = 0; k < n; k++) nr += v[k].ready;
        if (nr > 1 && nwin > 1) {
            int bw = -1;
            double bscore = 0;
            for (int w = 0; w < nwin; w++) {
                double sc = 0;
                for (int k = 0; k < n; k++) {
                    if (!v[k].ready) continue;
                    double lo = v[k].wmed[v[k].best];
                    sc += (lo > 0 && v[k].wmed[w] > 0) ? log(v[k].wmed[w] / lo) : 0;
                }
                if (bw < 0 || sc < bscore) { bw = w; bscore = sc; }
            }
            for (int k = 0; k < n; k++)
                if (v[k].ready) { v[k].best = bw; v[k].ci_met = v[k].wmet[bw]; }
        }
    }
    for (int k = 0; k < n; k++) {
        if (v[k].deferred) { recs[k] = NULL; continue; }
        hb_status st0 = v[k].st;
        if (!v[k].final) var_finish(&v[k], inst, o, cl, ck, nwin, n);
        recs[k] = v[k].rec;
        v[k].rec = NULL;
        st_out[k] = v[k].st;
        if (v[k].st == HB_EWRONG && st0 == HB_OK) v[k].st = HB_OK; /* judged again from rel in each round */
    }
    return 0;
}

void hb_group_free(hb_group *g)
{
    if (!g) return;
    for (int k = 0; k < g->n; k++) { var_free(&g->v[k]); json_decref(g->base[k]); json_decref(g->v[k].rec); }
    free(g->v);
    free(g);
}

int hb_group_deferred(const hb_group *g, int k) { return g->v[k].deferred; }
int hb_group_placements(const hb_group *g) { return g->placements; }

int hb_measure_group(hb_instance *inst, const hb_case *cases, int n, int item, const char *skip, const hb_options *o,
                     hb_ref_cache *rc, const hb_ceiling_set *cl, json_t **recs, hb_status *st_out)
{
    hb_group *g = hb_group_prepare(inst, cases, n, item, skip, o, rc, cl);
    if (!g) return -1;
    int r = hb_group_sample(g, o, cl, recs, st_out);
    int def[HB_MAX_GROUP];
    for (int k = 0; k < n; k++) def[k] = hb_group_deferred(g, k);
    hb_group_free(g);
    /* variants that did not fit beside the others: alone, now that the group's memory is free */
    for (int k = 0; k < n && r == 0; k++)
        if (def[k] && hb_measure_group(inst, &cases[k], 1, item, skip, o, rc, cl, &recs[k], &st_out[k]) != 0) r = -1;
    return r;
}
