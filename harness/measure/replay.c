/* replay.c - a device plan of a model run end to end on several backends in one process (replay.h;
 * docs/plans.md, "Replay"). The chain case (chain.c) runs the decoder layer op by op on one backend;
 * this runs any model of core/models.h op by op on the devices a plan names, with the real copies
 * between their memories. */
#include "measure/replay.h"
#include "measure/internal.h"
#include "cpu_ref/ref.h"
#include "core/stats.h"
#include "measure/rounds.h"
#include "measure/exec.h"
#include "measure/timed.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one replay ---- */

enum { P_TOTAL, P_COMP, P_H2D, P_D2H, P_STAGE, P_CONV, P_DEV, P_N };
/* the phases as the record names them: total, compute, h2d, d2h, host_copy, convert, device (record(),
 * results/record_fields.c) */

typedef struct rtensor {
    size_t elems;
    hb_buf dbuf[HB_PLAN_MAXMEM]; /* its buffer in each device memory (index 0 unused) */
    int have[HB_PLAN_MAXMEM];
    void *hmem;                  /* owned host memory (f32) where no device buffer's host view serves */
    void *hout;                  /* where it lives in host memory when made there (or placed there) */
    double *h64;                 /* mode convert: its f64 host copy; the reference's input 0 */
    unsigned present;            /* per call: memories holding it (bit m) */
    void *hloc;                  /* per call: a valid f32 host copy, or NULL */
} rtensor;

typedef struct replay {
    const hb_plan_costs *c;
    const hb_model *m;
    const hb_plan_named *p;
    hb_instance *inst;
    const hb_options *o;
    hb_mode mode;
    hb_route route;
    int n, start_mem, end_mem;
    int owner[HB_PLAN_MAXMEM];   /* the device (index into c->dev) whose instance allocates in memory m */
    rtensor *t;                  /* n + 1: the input, then node i's output */
    hb_buf (*w)[HB_MAX_INPUTS];  /* n: node i's kept tensors (slot -1) */
    int (*wh)[HB_MAX_INPUTS];
    double *ref;                 /* the reference output (f64), elems of t[n] */
    hb_prep_state *prep;         /* n */
    int dev1;                    /* every op on one device with its own memory, a device timer and
                                  * run_async, mode f32, hot: the call is enqueued as the chain's
                                  * layer is (chain.c chain_stream_once) and also timed on the device */
    hb_exec_step *steps;         /* dev1: the n ops as the executor's steps (exec.h), one segment */
    hb_prep_state warm;          /* the hot rule over whole calls, before sampling */
    double *step_c, *step_x;     /* per sample x n: each step's compute and copy seconds */
    double *seq;                 /* n: each op's median compute time in the in-sequence pass (NULL: not run) */
    int seq_calls;
    double *samp[P_N];
    size_t ns;
    double spent;
    long long dev_bytes, weight_bytes[HB_PLAN_MAXDEV];
    char reason[512];
    hb_status st;                /* how it went so far */
    double rel;                  /* the verified call's relative error */
    int done;                    /* no more samples (stop rule met, or failed) */
} replay;

static int tix(int e) { return e == HB_MODEL_INPUT ? 0 : e + 1; }
static int mem_of(const replay *r, int i) { return r->c->dev[r->p->dev[i]].mem; }
static hb_instance *inst_of(const replay *r, int i) { return &r->inst[r->p->dev[i]]; }

static hb_buf host_alias(void *p, size_t bytes)
{
    hb_buf b = {0};
    b.host = b.dev = p;
    b.bytes = bytes;
    b.dtype = HB_F32;
    return b;
}

/* f64 weights: [-1, 1] scaled by a power of two near 1/sqrt(fan-in / 3) (exact in f32), so that
 * activations stay O(1) through the model; gains and the KV cache unscaled. */
static void fill_kept(const hb_case *c, int j, double *x, size_t n, unsigned long long seed, unsigned long long stream)
{
    hb_fill_random(x, n, seed, stream);
    double fan = 0;
    if (c->op == HB_OP_MATMUL && j == 1) fan = (double)c->shape.k;
    if (c->op == HB_OP_CONV2D && j == 1) fan = (double)(c->shape.c * c->shape.kh * c->shape.kw);
    if (fan > 3) {
        double s = ldexp(1.0, -(int)lround(log2(sqrt(fan / 3))));
        for (size_t k = 0; k < n; k++) x[k] *= s;
    }
}

static hb_status alloc_dev(replay *r, int mm, size_t bytes, hb_buf *b)
{
    hb_instance *in = &r->inst[r->owner[mm]];
    hb_status st = in->ops->buf_alloc(in, bytes, r->route, b);
    if (st == HB_OK) { b->dtype = HB_F32; r->dev_bytes += (long long)bytes; }
    return st;
}

/* The last model's reference output, kept for the next plan of the same model and seed: every plan
 * replays the same input and weights (drawn from the seed alone), so the f64 reference, which takes
 * seconds for ResNet-50 at batch 64, is computed once per model in a process. */
static struct {
    char model[64];
    unsigned long long seed;
    size_t elems;
    double *ref;
} ref_memo;

/* Buffers, weights, the reference. */
static hb_status setup(replay *r)
{
    const hb_model *m = r->m;
    const int n = r->n;
    unsigned long long seed = r->o->seed;
    const int have_ref = ref_memo.ref && ref_memo.seed == seed && !strcmp(ref_memo.model, m->name) &&
                         ref_memo.elems == (size_t)(m->nodes[n - 1].out_bytes / 4);
    if (!(r->t = calloc((size_t)n + 1, sizeof *r->t)) || !(r->w = calloc((size_t)n, sizeof *r->w)) ||
        !(r->wh = calloc((size_t)n, sizeof *r->wh)) || !(r->prep = calloc((size_t)n, sizeof *r->prep)))
        return HB_ENOMEM;
    r->t[0].elems = (size_t)(m->in_bytes / 4);
    for (int i = 0; i < n; i++) r->t[i + 1].elems = (size_t)(m->nodes[i].out_bytes / 4);
    /* f64: the input, the reference activations (freed as we go is not worth it: the largest model,
     * ResNet-50 at batch 64, holds ~2.5 GB of f64 activations; the replay is for the VM-sized models) */
    double **a64 = calloc((size_t)n + 1, sizeof *a64);
    if (!a64) return HB_ENOMEM;
    hb_status st = HB_OK;
    if (!(a64[0] = malloc(r->t[0].elems * sizeof(double)))) { st = HB_ENOMEM; goto out; }
    hb_fill_random(a64[0], r->t[0].elems, seed, 2000003ULL);
    /* which device memories each tensor is read or made in */
    for (int i = 0; i < n; i++) {
        int mm = mem_of(r, i);
        if (mm > 0) {
            r->t[i + 1].have[mm] = 1;
            for (int k = 0; k < HB_MAX_INPUTS; k++)
                if (m->nodes[i].in[k] != HB_MODEL_NONE) r->t[tix(m->nodes[i].in[k])].have[mm] = 1;
        }
    }
    if (r->start_mem > 0) r->t[0].have[r->start_mem] = 1;
    if (r->end_mem > 0) r->t[n].have[r->end_mem] = 1;
    for (int t = 0; t <= n && st == HB_OK; t++) {
        rtensor *x = &r->t[t];
        size_t bytes = x->elems * 4;
        for (int mm = 1; mm < r->c->nmem && st == HB_OK; mm++)
            if (x->have[mm]) {
                st = alloc_dev(r, mm, bytes, &x->dbuf[mm]);
                if (st != HB_OK) { x->have[mm] = 0; snprintf(r->reason, sizeof r->reason, "buf_alloc of tensor %d in memory %d failed", t, mm); }
                else if (!x->hout && r->mode == HB_MODE_F32) x->hout = x->dbuf[mm].host;
            }
        if (st != HB_OK) break;
        if (!x->hout) {
            if (posix_memalign(&x->hmem, 64, bytes ? bytes : 64)) { st = HB_ENOMEM; break; }
            x->hout = x->hmem;
        }
        if (r->mode == HB_MODE_CONVERT && !(x->h64 = malloc(x->elems * sizeof(double)))) st = HB_ENOMEM;
    }
    if (st != HB_OK) goto out;
    /* the input: f32 in host memory, and in the start's device memory (placed once) */
    hb_convert(r->t[0].hout, HB_ELEM_F32, a64[0], HB_ELEM_F64, r->t[0].elems);
    if (r->mode == HB_MODE_CONVERT) memcpy(r->t[0].h64, a64[0], r->t[0].elems * sizeof(double));
    if (r->start_mem > 0) {
        hb_buf *b = &r->t[0].dbuf[r->start_mem];
        if (b->host != r->t[0].hout) memcpy(b->host, r->t[0].hout, r->t[0].elems * 4);
        hb_instance *in = &r->inst[r->owner[r->start_mem]];
        if ((st = hb_exec_setup_place(in, b)) != HB_OK) { snprintf(r->reason, sizeof r->reason, "placing the input: %s", hb_status_name(st)); goto out; }
    }
    /* weights: on the op's device, placed once; the reference computed alongside */
    for (int i = 0; i < n && st == HB_OK; i++) {
        const hb_model_node *nd = &m->nodes[i];
        const hb_case *cs = &nd->c;
        int nin = hb_op_get(cs->op)->ninputs;
        const double *ins[HB_MAX_INPUTS] = {NULL, NULL, NULL};
        double *kept[HB_MAX_INPUTS] = {NULL, NULL, NULL};
        hb_instance *in = inst_of(r, i);
        char why[256] = "";
        if (in->ops->supports(in, cs, why, sizeof why) != HB_OK) {
            st = HB_ESKIP;
            snprintf(r->reason, sizeof r->reason, "%s (%s) on %s: %s", nd->label, hb_op_get(cs->op)->name, in->name, why);
            break;
        }
        for (int j = 0; j < nin && st == HB_OK; j++) {
            if (nd->slot[j] >= 0) { ins[j] = a64[tix(nd->in[nd->slot[j]])]; continue; }
            size_t ne = (size_t)hb_op_input_elems(cs->op, &cs->shape, j);
            if (!(kept[j] = malloc(ne * sizeof(double)))) { st = HB_ENOMEM; break; }
            fill_kept(cs, j, kept[j], ne, seed, 3000017ULL + (unsigned long long)(i * 4 + j));
            ins[j] = kept[j];
            st = in->ops->buf_alloc(in, ne * 4, r->route, &r->w[i][j]);
            if (st != HB_OK) { snprintf(r->reason, sizeof r->reason, "%s: buf_alloc of its weight failed", nd->label); break; }
            r->w[i][j].dtype = HB_F32;
            r->wh[i][j] = 1;
            r->weight_bytes[r->p->dev[i]] += (long long)ne * 4;
            hb_convert(r->w[i][j].host, HB_ELEM_F32, kept[j], HB_ELEM_F64, ne);
            if ((st = hb_exec_setup_place(in, &r->w[i][j])) != HB_OK) snprintf(r->reason, sizeof r->reason, "%s: weight upload failed", nd->label);
        }
        if (st == HB_OK && !have_ref && !(a64[i + 1] = malloc(r->t[i + 1].elems * sizeof(double)))) st = HB_ENOMEM;
        if (st == HB_OK && !have_ref && (st = hb_ref_compute(cs, ins, a64[i + 1], 1)) != HB_OK)
            snprintf(r->reason, sizeof r->reason, "%s: the reference failed: %s", nd->label, hb_status_name(st));
        for (int j = 0; j < HB_MAX_INPUTS; j++) free(kept[j]);
        /* an activation no later node reads is not kept */
        for (int t = 0; t <= i; t++) {
            int later = 0;
            for (int k = i + 1; k < n && !later; k++)
                for (int e = 0; e < HB_MAX_INPUTS; e++) later |= m->nodes[k].in[e] != HB_MODEL_NONE && tix(m->nodes[k].in[e]) == t;
            if (!later && t != n) { free(a64[t]); a64[t] = NULL; }
        }
    }
    if (st == HB_OK && have_ref) {
        if (!(r->ref = malloc(r->t[n].elems * sizeof(double)))) st = HB_ENOMEM;
        else memcpy(r->ref, ref_memo.ref, r->t[n].elems * sizeof(double));
    } else if (st == HB_OK) {
        r->ref = a64[n];
        a64[n] = NULL;
        double *keep = malloc(r->t[n].elems * sizeof(double));
        if (keep) {
            memcpy(keep, r->ref, r->t[n].elems * sizeof(double));
            free(ref_memo.ref);
            ref_memo.ref = keep;
            ref_memo.seed = seed;
            ref_memo.elems = r->t[n].elems;
            snprintf(ref_memo.model, sizeof ref_memo.model, "%s", m->name);
        }
    }
out:
    for (int t = 0; t <= n; t++) free(a64[t]);
    free(a64);
    if (st == HB_ENOMEM && !r->reason[0]) snprintf(r->reason, sizeof r->reason, "out of host memory");
    return st;
}

static void teardown(replay *r)
{
    for (int t = 0; r->t && t <= r->n; t++) {
        rtensor *x = &r->t[t];
        for (int mm = 1; mm < HB_PLAN_MAXMEM; mm++)
            if (x->have[mm]) r->inst[r->owner[mm]].ops->buf_free(&r->inst[r->owner[mm]], &x->dbuf[mm]);
        free(x->hmem);
        free(x->h64);
    }
    for (int i = 0; r->w && i < r->n; i++)
        for (int j = 0; j < HB_MAX_INPUTS; j++)
            if (r->wh[i][j]) inst_of(r, i)->ops->buf_free(inst_of(r, i), &r->w[i][j]);
    free(r->t); free(r->w); free(r->wh); free(r->prep); free(r->ref); free(r->step_c); free(r->step_x); free(r->seq); free(r->steps);
    for (int p = 0; p < P_N; p++) free(r->samp[p]);
}

/* Make tensor t present in memory y (f32 mode), timing the copies into ph. */
static hb_status ensure(replay *r, int t, int y, double ph[P_N])
{
    rtensor *x = &r->t[t];
    if (x->present & (1u << y)) return HB_OK;
    size_t bytes = x->elems * 4;
    hb_status st;
    if (!x->hloc) {
        int from = 1;
        while (from < r->c->nmem && !(x->present & (1u << from))) from++;
        if (from >= r->c->nmem) return HB_EINVAL; /* a bug: the tensor is nowhere */
        hb_buf *b = &x->dbuf[from];
        if ((st = hb_exec_fetch(&r->inst[r->owner[from]], &b, 1, 0, &ph[P_D2H])) != HB_OK) return st;
        x->hloc = x->dbuf[from].host;
        x->present |= 1u;
    }
    if (y > 0) {
        hb_buf *b = &x->dbuf[y];
        if (b->host != x->hloc) {
            double t0 = hb_now();
            memcpy(b->host, x->hloc, bytes);
            ph[P_STAGE] += hb_now() - t0;
        }
        if ((st = hb_exec_place(&r->inst[r->owner[y]], &b, 1, 0, &ph[P_H2D])) != HB_OK) return st;
    }
    x->present |= 1u << y;
    return HB_OK;
}

/* One call of the model. step_c, step_x: per step compute and copy seconds (may be NULL). seq (may be
 * NULL): the in-sequence pass (hb_replay_plan): every op run blocking, with no hot rule before it (its
 * start state is what the ops before it left), seq[i] its compute time - the device timer's where the
 * backend has one and computes in its own memory, else the host clock's. */
/* dev1 (replay.h): the model's input placed in the device's memory (a copy when the plan starts in
 * host memory), the first op's start state prepared (hot rule), then the ops enqueued as one segment
 * on the executor (exec.h hb_exec_enqueue: the same call, and so the same host work per op, as the
 * chain's layer as one stream, chain.c) under one device timer; the output then goes where the plan
 * ends. step_c[i]: op i's share of the host's enqueue; step_x[0] the input's copy. */
static hb_status call_dev1(replay *r, double ph[P_N], double *step_c, double *step_x)
{
    memset(ph, 0, sizeof(double) * P_N);
    const int mm = mem_of(r, 0);
    for (int t = 1; t <= r->n; t++) { r->t[t].present = 0; r->t[t].hloc = NULL; }
    r->t[0].present = (1u << r->start_mem) | (r->start_mem ? 0u : 1u);
    r->t[0].hloc = r->start_mem ? NULL : r->t[0].hout;
    double tstart = hb_now(), prep = 0;
    hb_status st = ensure(r, 0, mm, ph);
    if (step_x) {
        memset(step_x, 0, sizeof(double) * (size_t)r->n);
        step_x[0] = ph[P_H2D] + ph[P_D2H] + ph[P_STAGE];
    }
    const hb_exec_step *s0 = &r->steps[0];
    if (st == HB_OK) st = hb_compute_prepare(s0->inst, r->o->cold, s0->c, s0->in, s0->out, s0->prep, &prep);
    tstart += prep;
    if (st == HB_OK) st = hb_exec_enqueue(r->steps, r->n, &ph[P_DEV], &ph[P_COMP], step_c, NULL);
    for (int t = 1; t <= r->n; t++) r->t[t].present = 1u << mm;
    if (st == HB_OK) st = ensure(r, r->n, r->end_mem, ph); /* the output to the next unit / the host */
    ph[P_TOTAL] = hb_now() - tstart;
    return st;
}

static hb_status call_once(replay *r, double ph[P_N], double *step_c, double *step_x, double *seq)
{
    if (r->dev1 && !seq) return call_dev1(r, ph, step_c, step_x);
    memset(ph, 0, sizeof(double) * P_N);
    const hb_model *m = r->m;
    const int conv = r->mode == HB_MODE_CONVERT;
    for (int t = 1; t <= r->n; t++) { r->t[t].present = 0; r->t[t].hloc = NULL; }
    r->t[0].present = (1u << r->start_mem) | (r->start_mem ? 0u : 1u);
    r->t[0].hloc = r->start_mem ? NULL : r->t[0].hout;
    double tstart = hb_now();
    hb_status st = HB_OK;
    int prev_async = 0;
    for (int i = 0; i < r->n && st == HB_OK; i++) {
        const hb_model_node *nd = &m->nodes[i];
        const int mm = mem_of(r, i), nin = hb_op_get(nd->c.op)->ninputs;
        hb_instance *in = inst_of(r, i);
        double before = ph[P_H2D] + ph[P_D2H] + ph[P_STAGE];
        hb_buf alias[HB_MAX_INPUTS + 1], *ins[HB_MAX_INPUTS] = {NULL, NULL, NULL}, *out;
        for (int e = 0; e < HB_MAX_INPUTS && st == HB_OK; e++) {
            if (nd->in[e] == HB_MODEL_NONE) continue;
            int t = tix(nd->in[e]);
            rtensor *x = &r->t[t];
            if (!conv) { st = ensure(r, t, mm, ph); continue; }
            /* convert: f64 host -> f32 where the op reads it, uploaded to a device */
            void *dst = mm ? x->dbuf[mm].host : x->hout;
            double t0 = hb_now();
            hb_convert(dst, HB_ELEM_F32, x->h64, HB_ELEM_F64, x->elems);
            ph[P_CONV] += hb_now() - t0;
            if (mm) {
                hb_buf *b = &x->dbuf[mm];
                st = hb_exec_place(in, &b, 1, 0, &ph[P_H2D]);
            }
        }
        if (st != HB_OK) break;
        for (int j = 0; j < nin; j++) {
            if (nd->slot[j] < 0) { ins[j] = &r->w[i][j]; continue; }
            rtensor *x = &r->t[tix(nd->in[nd->slot[j]])];
            if (mm) ins[j] = &x->dbuf[mm];
            else { alias[j] = host_alias(conv ? x->hout : x->hloc, x->elems * 4); ins[j] = &alias[j]; }
        }
        rtensor *y = &r->t[i + 1];
        if (mm) out = &y->dbuf[mm];
        else { alias[HB_MAX_INPUTS] = host_alias(y->hout, y->elems * 4); out = &alias[HB_MAX_INPUTS]; }
        /* f32 mode on a device with run_async: an op whose successor runs on the same device is enqueued
         * without waiting, as an executor launches a segment of ops; the segment's last op waits (run), so
         * the segment's device time is in the total (and in its last op's compute figure), and an op
         * after an enqueued one gets no settle runs (they would wait for it outside the timed total) */
        const int async = !seq && !conv && !r->o->cold && in->ops->run_async && !in->host_memory && i + 1 < r->n && inst_of(r, i + 1) == in;
        const int dtimer = seq && !in->host_memory && hb_timed_has_timer(in);
        /* the step on the executor (exec.h): its start state first unless it follows an enqueued op or
         * is in sequence */
        hb_exec_step es = {.inst = in, .c = &nd->c, .in = {ins[0], ins[1], ins[2]}, .out = out, .prep = &r->prep[i]};
        unsigned fl = (async ? HB_EXEC_ASYNC : 0) | (dtimer ? HB_EXEC_DEV_TIMER : 0) | (seq || prev_async ? HB_EXEC_NO_PREP : 0);
        double prep = 0, tc = 0, tt = 0;
        st = hb_exec_run(&es, r->o->cold, fl, &tt, &tc, &prep);
        tstart += prep;
        prev_async = async;
        if (seq) seq[i] = tt; /* the device timer's where the backend has one on a device, else the host clock's */
        ph[P_COMP] += tc;
        if (st != HB_OK) break;
        y->present = (1u << mm) | (mm ? 0u : 1u);
        y->hloc = mm ? NULL : y->hout;
        if (conv) {
            if (mm) st = hb_exec_fetch(in, &out, 1, 0, &ph[P_D2H]);
            double t0 = hb_now();
            hb_convert(y->h64, HB_ELEM_F64, mm ? out->host : y->hout, HB_ELEM_F32, y->elems);
            ph[P_CONV] += hb_now() - t0;
        }
        if (step_c) step_c[i] = tc;
        if (step_x) step_x[i] = ph[P_H2D] + ph[P_D2H] + ph[P_STAGE] - before;
    }
    if (st == HB_OK && !conv) st = ensure(r, r->n, r->end_mem, ph); /* the output to the next unit / the host */
    ph[P_TOTAL] = hb_now() - tstart;
    return st;
}

/* One warm-up call for hb_settle: its time the device's where the call has it (dev1), else the total. */
static hb_status warm_call(void *ctx, double *t_s)
{
    replay *r = ctx;
    double ph[P_N];
    hb_status st = call_once(r, ph, NULL, NULL, NULL);
    *t_s = r->dev1 ? ph[P_DEV] : ph[P_TOTAL];
    return st;
}

/* The in-sequence pass, after sampling (mode f32): HB_REPLAY_SEQ_CALLS calls with every op blocking
 * and timed alone (call_once's seq), so that the error of the prediction splits into the ops' cost in
 * the model's order against alone (their start state: caches, clocks), the copies, and the rest of
 * the measured total (launch gaps, synchronisation, host overhead between ops). r->seq gets each op's
 * median; left NULL when a call fails (the record then has no split; the sampled figures stand). */
static void in_sequence(replay *r)
{
    double ph[P_N], *v = calloc((size_t)HB_REPLAY_SEQ_CALLS * (size_t)r->n, sizeof *v), *col = calloc(HB_REPLAY_SEQ_CALLS, sizeof *col);
    r->seq = calloc((size_t)r->n, sizeof *r->seq);
    int k = 0;
    for (; v && col && r->seq && k < HB_REPLAY_SEQ_CALLS; k++)
        if (call_once(r, ph, NULL, NULL, v + (size_t)k * (size_t)r->n) != HB_OK) break;
    if (k < HB_REPLAY_SEQ_CALLS) { free(r->seq); r->seq = NULL; }
    for (int i = 0; r->seq && i < r->n; i++) {
        hb_stats s;
        for (int j = 0; j < k; j++) col[j] = v[(size_t)j * (size_t)r->n + (size_t)i];
        hb_stats_compute(col, (size_t)k, &s);
        r->seq[i] = s.median;
    }
    r->seq_calls = k;
    free(v);
    free(col);
}

/* The output's relative L2 error against the reference, under verify.h's rule (the reference is
 * computed in full: no element skipped). Brings the output to the host first in mode f32. */
static double out_err(replay *r)
{
    rtensor *x = &r->t[r->n];
    if (r->mode == HB_MODE_CONVERT) return hb_verify_rel_error(x->h64, HB_ELEM_F64, r->ref, x->elems, 0, NULL);
    double ph[P_N] = {0};
    if (ensure(r, r->n, 0, ph) != HB_OK) return INFINITY;
    return hb_verify_rel_error(x->hloc, HB_ELEM_F32, r->ref, x->elems, 0, NULL);
}

/* NaN into every activation (host views, device buffers, f64 copies) but the input (verify.h). */
static hb_status poison(replay *r)
{
    for (int t = 1; t <= r->n; t++) {
        rtensor *x = &r->t[t];
        hb_verify_poison(x->hmem, HB_ELEM_F32, x->elems);
        hb_verify_poison(x->h64, HB_ELEM_F64, x->elems);
        for (int mm = 1; mm < r->c->nmem; mm++) {
            if (!x->have[mm]) continue;
            hb_status st = hb_verify_poison_buf(&r->inst[r->owner[mm]], &x->dbuf[mm], HB_ELEM_F32, x->elems, 1);
            if (st != HB_OK) return st;
        }
    }
    return HB_OK;
}

/* The record: the plan's identity and prediction, the measured phases and steps, filled into pl
 * (results/record.h hb_rec_plan, absent members on entry; each member put in the record's order).
 * Strings point into r, its costs and the environment: pl is written before r is torn down. wb
 * receives the new JSON map of the weights' bytes per device (the caller decrefs it after writing).
 * HB_OK or HB_ENOMEM. */
static hb_status record(replay *r, hb_status st, double rel, hb_rec_plan *pl, json_t **wb)
{
    const hb_plan_costs *c = r->c;
    const hb_plan_named *p = r->p;
    hb_status ws = HB_OK;
#define SET(m, x) (ws = ws ? ws : HB_REC_SET(hb_rec_plan, pl, m, x))
#define PUT(m) (ws = ws ? ws : hb_rec_put(&hb_rec_plan_table, pl, offsetof(hb_rec_plan, m)))
#define SETIN(T, s, m, x) (ws = ws ? ws : HB_REC_SET(T, s, m, x))
    SET(type, "plan"), SET(model, r->m->name), SET(what, r->m->what), SET(plan, p->name), SET(kind, p->kind);
    SET(route, r->route < 0 || c->nmem <= 1 ? "none" : hb_route_name(r->route));
    SET(mode, hb_mode_name(r->mode));
    {
        const char *wp = getenv("OMP_WAIT_POLICY"), *sc = getenv("GOMP_SPINCOUNT");
        SET(omp_wait.policy, wp ? wp : "unset");
        SET(omp_wait.spincount, sc ? sc : "unset (libgomp: 300000)");
    }
    if (!(pl->devices = calloc((size_t)(c->ndev > 0 ? c->ndev : 1), sizeof *pl->devices)) || !(*wb = json_object()))
        return HB_ENOMEM;
    for (int d = 0; d < c->ndev; d++) {
        int used = 0;
        for (int i = 0; i < r->n; i++) used |= p->dev[i] == d;
        if (!used) continue;
        hb_rec_plan_device *dv = &pl->devices[pl->ndevices++];
        SETIN(hb_rec_plan_device, dv, id, c->dev[d].id);
        SETIN(hb_rec_plan_device, dv, description, r->inst[d].description);
        json_object_set_new(*wb, c->dev[d].id, json_integer(r->weight_bytes[d])); /* a map by device id, kept as JSON */
    }
    PUT(devices);
    SET(weight_bytes, *wb);
    int sm = r->start_mem, sd = -1;
    for (int d = 0; d < c->ndev && sm > 0; d++) if (c->dev[d].mem == sm && sd < 0) sd = d;
    SET(starts_in, sd >= 0 ? c->dev[sd].id : "host");
    const hb_plan_result *pr = &p->res;
    SET(predicted_s, pr->total_s);
    SET(predicted.compute_s, pr->compute_s), SET(predicted.transfer_s, pr->xfer_s);
    SET(predicted.end_transfer_s, pr->end_xfer_s);
    SET(bytes_crossing, pr->xfer_bytes);
    SET(copies, pr->ncopies);
    int moves = 0;
    for (int i = 1; i < r->n; i++) moves += mem_of(r, i) != mem_of(r, i - 1) || p->dev[i] != p->dev[i - 1];
    SET(device_changes, moves);
    {
        /* the chain case of the same model on a single-device plan's backend (plan_costs.h whole_s) */
        int single = 1;
        for (int i = 1; i < r->n; i++) single &= p->dev[i] == p->dev[0];
        if (single && r->m->has_whole && isfinite(c->whole_s[p->dev[0]])) SET(chain_case_s, c->whole_s[p->dev[0]]);
    }
    hb_stats s;
    double *col = malloc((r->ns + 1) * sizeof(double));
    if (r->n > 0 && !(pl->steps = calloc((size_t)r->n, sizeof *pl->steps))) ws = HB_ENOMEM;
    for (int i = 0; pl->steps && i < r->n; i++) {
        const hb_plan_step *ps = &pr->steps[i];
        hb_rec_plan_step *so = &pl->steps[pl->nsteps++];
        SETIN(hb_rec_plan_step, so, label, r->m->nodes[i].label), SETIN(hb_rec_plan_step, so, device, c->dev[p->dev[i]].id);
        SETIN(hb_rec_plan_step, so, bytes_in, ps->xfer_bytes);
        SETIN(hb_rec_plan_step, so, predicted_compute_s, ps->compute_s);
        SETIN(hb_rec_plan_step, so, predicted_transfer_s, ps->xfer_s);
        if (st == HB_OK && col && r->ns) {
            for (size_t k = 0; k < r->ns; k++) col[k] = r->step_c[k * (size_t)r->n + (size_t)i];
            hb_stats_compute(col, r->ns, &s);
            SETIN(hb_rec_plan_step, so, compute_s, s.median);
            for (size_t k = 0; k < r->ns; k++) col[k] = r->step_x[k * (size_t)r->n + (size_t)i];
            hb_stats_compute(col, r->ns, &s);
            SETIN(hb_rec_plan_step, so, transfer_s, s.median);
        }
        if (st == HB_OK && r->seq) SETIN(hb_rec_plan_step, so, in_sequence_s, r->seq[i]);
    }
    free(col);
    PUT(steps);
    if (st == HB_OK) {
        /* pnames' phases: the record's own where the schema names them, else the plan's */
        hb_rec_stats *const at[P_N] = {&pl->phase[HB_PH_TOTAL], &pl->phase[HB_PH_COMPUTE], &pl->phase[HB_PH_H2D],
                                       &pl->phase[HB_PH_D2H], &pl->host_copy, &pl->convert, &pl->device};
        hb_stats tot = {0};
        for (int k = 0; k < P_N; k++) {
            if (k == P_DEV && !r->dev1) continue;
            hb_stats_compute(r->samp[k], r->ns, &s);
            if (k == P_TOTAL) tot = s;
            if (!ws) ws = hb_rec_stats_set(at[k], &s);
            if (!ws) ws = hb_rec_put(&hb_rec_plan_table, pl, (size_t)((char *)at[k] - (char *)pl));
        }
        if (r->dev1) {
            /* launch-bound: the host's time to enqueue the ops (the compute phase: the run_async calls)
             * is at least 90% of the device's span, so the device waits for the host and the plan's
             * time is the host's enqueue rate (chain.c's layer records the same as enqueue_s) */
            hb_stats e, d;
            hb_stats_compute(r->samp[P_COMP], r->ns, &e);
            hb_stats_compute(r->samp[P_DEV], r->ns, &d);
            SET(launch_bound, e.median >= 0.9 * d.median);
        }
        if (!ws) ws = hb_rec_nums_set(&pl->samples_total, r->samp[P_TOTAL], r->ns);
        PUT(samples_total);
        if (r->dev1) {
            if (!ws) ws = hb_rec_nums_set(&pl->samples_device, r->samp[P_DEV], r->ns);
            PUT(samples_device);
        }
        int met = tot.median > 0 && (tot.ci_hi - tot.ci_lo) / 2 <= r->o->ci_target * tot.median;
        SET(ci_met, met);
        SET(ci_target, r->o->ci_target);
        if (tot.median > 0 && pr->total_s > 0) SET(error_pct, (pr->total_s / tot.median - 1) * 100);
        if (r->seq && tot.median > 0) {
            /* measured - predicted = (ops in sequence - ops alone) + (copies measured - predicted) + the rest */
            double seq = 0, cp = 0;
            for (int i = 0; i < r->n; i++) seq += r->seq[i];
            for (int k = P_H2D; k <= P_STAGE; k++) { hb_stats_compute(r->samp[k], r->ns, &s); cp += s.median; }
            SET(error_split.measured_s, tot.median), SET(error_split.predicted_s, pr->total_s);
            SET(error_split.ops_alone_s, pr->compute_s), SET(error_split.ops_in_sequence_s, seq);
            SET(error_split.copies_predicted_s, pr->xfer_s + pr->end_xfer_s), SET(error_split.copies_measured_s, cp);
            SET(error_split.rest_s, tot.median - seq - cp), SET(error_split.in_sequence_calls, r->seq_calls);
            /* a prediction off by more than HB_REPLAY_CAUSE_PCT: the record names the split's largest term */
            if (pr->total_s > 0 && fabs(tot.median - pr->total_s) > HB_REPLAY_CAUSE_PCT / 100 * tot.median) {
                const double term[3] = {seq - pr->compute_s, cp - (pr->xfer_s + pr->end_xfer_s), tot.median - seq - cp};
                static const char *const why[3] = {"ops_in_sequence", "copies", "launches_and_syncs"};
                int big = 0;
                for (int k = 1; k < 3; k++) if (fabs(term[k]) > fabs(term[big])) big = k;
                SET(error_cause.term, why[big]), SET(error_cause.seconds, term[big]);
                SET(error_cause.share_of_error, term[big] / (tot.median - pr->total_s));
            }
        }
        long runs = 0, calls = 0;
        for (int i = 0; i < r->n; i++) { runs += r->prep[i].runs; calls += r->prep[i].calls; }
        if (calls && !r->o->cold) SET(settle_runs, (double)runs / (double)calls);
        SETIN(hb_rec_wall, &pl->wall, sampling, r->spent);
        PUT(wall);
    }
    if (isfinite(rel)) SET(rel_err, rel);
    SET(tolerance, HB_REPLAY_TOL);
    SETIN(hb_rec_mem, &pl->mem, device_bytes, (double)r->dev_bytes);
    PUT(mem);
    SET(status, hb_status_name(st));
    if (st != HB_OK) SET(reason, r->reason[0] ? r->reason : hb_status_name(st));
#undef SET
#undef PUT
#undef SETIN
    return ws;
}

/* The open half of a replay: set-up, the verified call and the warm-up of plan p. r->st and r->rel say
 * how it went; r->done when there is nothing to sample. */
static void rp_open(replay *r, const hb_plan_costs *c, const hb_plan_named *p, int route, hb_mode mode, hb_instance *inst,
                    const hb_options *o)
{
    r->c = c; r->m = c->model; r->p = p; r->inst = inst; r->o = o; r->mode = mode; r->n = c->model->n;
    r->route = route < 0 ? HB_ROUTE_PAGEABLE : (hb_route)route;
    r->start_mem = p->res.start_mem;
    r->end_mem = c->model->cyclic ? r->start_mem : 0;
    r->rel = NAN;
    r->done = 1;
    for (int mm = 0; mm < HB_PLAN_MAXMEM; mm++) r->owner[mm] = -1;
    for (int d = c->ndev - 1; d >= 0; d--) r->owner[c->dev[d].mem] = d;
    hb_status st = HB_OK;
    if (mode != HB_MODE_F32 && mode != HB_MODE_CONVERT) {
        st = HB_EINVAL;
        snprintf(r->reason, sizeof r->reason, "a plan is replayed in mode f32 or convert, not %s", hb_mode_name(mode));
        goto out;
    }
    for (int i = 0; i < r->n; i++)
        if (p->dev[i] < 0 || p->dev[i] >= c->ndev || !inst[p->dev[i]].ops) {
            st = HB_EINVAL;
            snprintf(r->reason, sizeof r->reason, "op %s has no open device", c->model->nodes[i].label);
            goto out;
        }
    {
        hb_instance *in0 = &inst[p->dev[0]];
        r->dev1 = mode == HB_MODE_F32 && !o->cold && !in0->host_memory && in0->ops->run_async && hb_timed_has_timer(in0);
        for (int i = 1; i < r->n; i++) r->dev1 &= p->dev[i] == p->dev[0];
    }
    if ((st = setup(r)) != HB_OK) goto out;
    if (r->dev1 && !(r->steps = calloc((size_t)r->n, sizeof *r->steps))) st = HB_ENOMEM;
    for (int i = 0; r->steps && i < r->n; i++) {
        /* dev1: every activation in the device's memory, every weight on it */
        const hb_model_node *nd = &r->m->nodes[i];
        const int mm = mem_of(r, i);
        hb_exec_step *es = &r->steps[i];
        *es = (hb_exec_step){.inst = inst_of(r, i), .c = &nd->c, .out = &r->t[i + 1].dbuf[mm], .prep = &r->prep[i]};
        for (int j = 0; j < hb_op_get(nd->c.op)->ninputs; j++)
            es->in[j] = nd->slot[j] < 0 ? &r->w[i][j] : &r->t[tix(nd->in[nd->slot[j]])].dbuf[mm];
    }
    for (int k = 0; k < P_N; k++)
        if (!(r->samp[k] = calloc((size_t)o->max_samples + 2, sizeof(double)))) st = HB_ENOMEM;
    if (st == HB_OK && (!(r->step_c = calloc(((size_t)o->max_samples + 2) * (size_t)r->n, sizeof(double))) ||
                        !(r->step_x = calloc(((size_t)o->max_samples + 2) * (size_t)r->n, sizeof(double)))))
        st = HB_ENOMEM;
    if (st != HB_OK) { snprintf(r->reason, sizeof r->reason, "out of host memory"); goto out; }
    double ph[P_N];
    if ((st = poison(r)) == HB_OK) st = call_once(r, ph, NULL, NULL, NULL);
    if (st != HB_OK) { snprintf(r->reason, sizeof r->reason, "the verified call failed: %s", hb_status_name(st)); goto out; }
    r->rel = out_err(r);
    if (!(r->rel <= HB_REPLAY_TOL)) {
        st = HB_EWRONG;
        snprintf(r->reason, sizeof r->reason, "relative error %.3g over tolerance %.3g", r->rel, HB_REPLAY_TOL);
        goto out;
    }
    /* warm-up: whole calls under the hot rule (prepare.h hb_settle), until the call's time settles */
    if ((st = hb_settle(warm_call, NULL, r, &r->warm, hb_now())) != HB_OK) {
        snprintf(r->reason, sizeof r->reason, "warm-up call failed: %s", hb_status_name(st));
        goto out;
    }
    r->done = 0;
out:
    r->st = st;
}

/* One sampled call of r; r->done once its stop rule holds, or when the call failed (r->st). */
static void rp_sample(replay *r)
{
    const hb_options *o = r->o;
    double ph[P_N];
    double t0 = hb_now();
    hb_status st = call_once(r, ph, r->step_c + r->ns * (size_t)r->n, r->step_x + r->ns * (size_t)r->n, NULL);
    r->spent += hb_now() - t0;
    if (st != HB_OK) {
        snprintf(r->reason, sizeof r->reason, "call failed while sampling: %s", hb_status_name(st));
        r->st = st;
        r->done = 1;
        return;
    }
    for (int k = 0; k < P_N; k++) r->samp[k][r->ns] = ph[k];
    r->ns++;
    if ((int)r->ns >= o->max_samples) { r->done = 1; return; }
    if ((int)r->ns >= o->min_samples) {
        hb_stats s;
        hb_stats_compute(r->samp[P_TOTAL], r->ns, &s);
        /* the CI counts only once the calls span o->budget_s: a launch-bound plan's time is the
         * host's enqueue rate, which drifts, and 5 calls within 0.8 ms met the CI target at 128 us
         * while the same plan read 145 us [143, 149] in the same process (2x H200 host, decode
         * layer; docs/plans.md) */
        int met = s.median > 0 && (s.ci_hi - s.ci_lo) / 2 <= o->ci_target * s.median;
        if ((met && r->spent >= o->budget_s) || r->spent > 4 * o->budget_s) r->done = 1;
    }
}

/* The closing half: the in-sequence pass (mode f32, when sampled), the record, r torn down. */
static json_t *rp_close(replay *r, const char *costs_from, int others)
{
    if (r->st == HB_OK && r->mode == HB_MODE_F32) in_sequence(r);
    hb_rec_plan pl;
    json_t *wb = NULL, *rec = NULL;
    memset(&pl, 0, sizeof pl);
    hb_rec_clear(&hb_rec_plan_table, &pl);
    hb_status ws = record(r, r->st, r->rel, &pl, &wb);
    if (!ws) ws = HB_REC_SET(hb_rec_plan, &pl, costs_from, costs_from ? costs_from : "");
    if (!ws && others > 0) ws = HB_REC_SET(hb_rec_plan, &pl, interleaved_with, others);
    if (!ws) rec = hb_rec_plan_json(&pl); /* NULL when out of memory: no record (the caller's rule for NULL) */
    hb_rec_plan_free(&pl);
    json_decref(wb);
    teardown(r);
    return rec;
}

/* One sampled call of plan r in the rounds (rounds.h): a plan's own rule ends it. */
static int rp_round(void *ctx)
{
    replay *r = ctx;
    if (r->done) return HB_ROUND_DONE;
    rp_sample(r);
    return r->done ? HB_ROUND_DONE : HB_ROUND_MORE;
}

/* The device that runs every op of plan p, or -1. */
static int single_dev(const hb_plan_costs *c, const hb_plan_named *p)
{
    for (int i = 1; i < c->model->n; i++)
        if (p->dev[i] != p->dev[0]) return -1;
    return p->dev[0] >= 0 && p->dev[0] < c->ndev ? p->dev[0] : -1;
}

/* The chain case on device d in the rounds: it takes calls while a plan that runs alone on d still
 * samples, and after that only while its own rule wants more (a chain kept going for other devices'
 * plans would only put its host work before theirs). */
typedef struct chain_slot {
    hb_chain_part *cp;
    const replay *r;
    const int *single; /* per plan: its one device, or -1 */
    int np, d, last;
} chain_slot;

static int chain_round(void *ctx)
{
    chain_slot *cs = ctx;
    int live = 0;
    for (int k = 0; k < cs->np; k++) live |= cs->single[k] == cs->d && !cs->r[k].done;
    if (!live && cs->last != HB_ROUND_MORE) return HB_ROUND_DONE;
    return cs->last = hb_chain_part_sample(cs->cp);
}

void hb_replay_plans(const hb_plan_costs *c, const hb_plan_named *p, int np, int route, hb_mode mode, hb_instance inst[HB_PLAN_MAXDEV],
                     const hb_options *o, const char *costs_from, json_t **recs, hb_status *st)
{
    replay *r = calloc((size_t)(np > 0 ? np : 1), sizeof *r);
    hb_round_part *parts = calloc((size_t)np + HB_PLAN_MAXDEV + 1, sizeof *parts);
    if (!r || !parts) {
        free(r);
        free(parts);
        for (int k = 0; k < np; k++) { recs[k] = NULL; st[k] = HB_ENOMEM; }
        return;
    }
    for (int k = 0; k < np; k++) {
        rp_open(&r[k], c, &p[k], route, mode, inst, o);
        parts[k] = (hb_round_part){.ctx = &r[k], .sample = rp_round};
    }
    /* the model's chain case on each device that one of these plans runs alone (mode f32, a model
     * with a chain case): a participant of the same rounds, so that the replay and the chain meet
     * the host's drift alike (rounds.h) */
    hb_chain_part *chain[HB_PLAN_MAXDEV] = {NULL};
    chain_slot slot[HB_PLAN_MAXDEV];
    hb_case chain_case[HB_PLAN_MAXDEV]; /* hb_chain_part_open keeps a pointer to its case until close */
    int npart = np, *single = calloc((size_t)np + 1, sizeof *single);
    for (int k = 0; k < np && single; k++) single[k] = single_dev(c, &p[k]);
    for (int k = 0; k < np && single && mode == HB_MODE_F32 && c->model->has_whole; k++) {
        int d = single[k];
        if (d < 0 || chain[d] || !inst[d].ops || r[k].st != HB_OK) continue;
        chain_case[d] = hb_replay_chain_case(c->model, &inst[d], route < 0 ? HB_ROUTE_PAGEABLE : (hb_route)route);
        if (!(chain[d] = hb_chain_part_open(&inst[d], &chain_case[d], o))) continue;
        slot[d] = (chain_slot){.cp = chain[d], .r = r, .single = single, .np = np, .d = d, .last = HB_ROUND_MORE};
        parts[npart++] = (hb_round_part){.ctx = &slot[d], .sample = chain_round};
    }
    hb_rounds_run(parts, npart);
    json_t *crec[HB_PLAN_MAXDEV] = {NULL};
    for (int d = 0; d < HB_PLAN_MAXDEV; d++) {
        hb_status cst;
        if (chain[d]) crec[d] = hb_chain_part_close(chain[d], npart - 1, &cst);
    }
    for (int k = 0; k < np; k++) {
        recs[k] = rp_close(&r[k], costs_from, npart - 1);
        st[k] = r[k].st;
        int d = single_dev(c, &p[k]);
        if (recs[k] && d >= 0 && crec[d]) json_object_set_new(recs[k], "chain_in_rounds", hb_replay_chain_summary(crec[d], recs[k]));
    }
    for (int d = 0; d < HB_PLAN_MAXDEV; d++) json_decref(crec[d]);
    free(single);
    free(parts);
    free(r);
}

json_t *hb_replay_plan(const hb_plan_costs *c, const hb_plan_named *p, int route, hb_mode mode, hb_instance inst[HB_PLAN_MAXDEV],
                       const hb_options *o, const char *costs_from, hb_status *st_out)
{
    json_t *rec;
    hb_replay_plans(c, p, 1, route, mode, inst, o, costs_from, &rec, st_out);
    return rec;
}
