/* chain.c - measuring a chain case (measure/internal.h): the decoder layer of core/hybench.h run step by
 * step on one backend in the case's mode and dtype, verified against its f64 reference, timed per call.
 * Over several ranks (shape field ranks > 1, core/chain.c) each rank runs its shard of the layer with
 * its two all_reduce steps; the ranks agree on the case (the collective step's supports), on every
 * settle run of the collective steps and on the sample where sampling stops (the backend's coll_vote),
 * so that every rank makes the same collective calls. */
#include "measure/internal.h"
#include "core/convert.h"
#include "core/quant.h"
#include "measure/model_layer.h"
#include "measure/exec.h"
#include "measure/timed.h"
#include "measure/rounds.h"
#include "cpu_ref/ref.h"
#include "core/stats.h"
#include "core/launch.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reference (f64), cached for the last shape ----
 * Always the whole layer: for the tensor-parallel layer (ranks > 0) the one-rank layer in the real head
 * layout, whose inputs each rank cuts its shard from (hb_chain_shard) and whose y every rank must end with. */
static struct {
    int64_t seq, kv_seq, tp;
    unsigned long long seed;
    int quant;                     /* the chain's dtype when quantized (its weights' mix), else -1 */
    char src[160];                 /* the case's source: a model file's layer ("gguf:...") or a workload line */
    double *t[HB_CT_COUNT];
    unsigned char *q[HB_CT_COUNT]; /* a quantized layer's weights as blocks (t holds their dequantization) */
} ref = {.quant = -1};

static void ref_free(void)
{
    for (int i = 0; i < HB_CT_COUNT; i++) { free(ref.t[i]); ref.t[i] = NULL; free(ref.q[i]); ref.q[i] = NULL; }
    ref.seq = 0;
}

/* The dtype chain tensor t of case c is stored in: a model file's own (measure/model_layer.h) or the
 * synthetic layer's mix (hb_chain_weight_dtype). */
static hb_dtype chain_wtype(const hb_case *c, int t)
{
    char why[8];
    const hb_model_info *mi = hb_dtype_is_quant(c->dtype) && t >= HB_CT_WQ && t <= HB_CT_WD ? hb_model_case_info(c, why, sizeof why) : NULL;
    return mi && mi->wtype[t] >= 0 ? (hb_dtype)mi->wtype[t] : hb_chain_weight_dtype(t, c->dtype);
}

/* The weights of a quantized layer: random blocks of tensor t's format (hb_chain_weight_dtype), kept,
 * and their dequantization, W[n,k] as ggml stores it, as the f64 tensor every reference step reads. */
static hb_status quant_weight(int t, const hb_case *chain, size_t n, unsigned long long seed)
{
    const hb_dtype wd = hb_chain_weight_dtype(t, chain->dtype);
    size_t bytes = hb_quant_bytes(wd, (int64_t)n);
    if (!bytes) return HB_EINVAL;
    ref.q[t] = malloc(bytes);
    if (!ref.q[t]) return HB_ENOMEM;
    /* 2^-6 as the dense weights' scale (~1/sqrt(fan-in)) so activations stay O(1) */
    hb_status st = hb_quant_fill_random(wd, ref.q[t], (int64_t)n, seed, 1000003ULL + (unsigned long long)t, 1.0 / 64);
    return st != HB_OK ? st : hb_quant_dequantize_f64(wd, ref.q[t], ref.t[t], (int64_t)n);
}

static hb_status ref_get(const hb_case *c, unsigned long long seed)
{
    const int64_t tp = c->shape.ranks > 0;
    const int quant = hb_dtype_is_quant(c->dtype) ? (int)c->dtype : -1;
    if (ref.seq == c->shape.seq && ref.kv_seq == c->shape.kv_seq && ref.tp == tp && ref.seed == seed && ref.quant == quant &&
        !strcmp(ref.src, c->source) && ref.t[HB_CT_Y])
        return HB_OK;
    ref_free();
    hb_case whole = *c;
    whole.shape.ranks = tp;
    whole.shape.rank = 0;
    const hb_case *chain = &whole;
    char mpath[200], why[512];
    int mlayer;
    const int model = hb_model_case(c, mpath, sizeof mpath, &mlayer);
    for (int t = 0; t < HB_CT_COUNT; t++) {
        size_t n = hb_chain_tensor_elems(t, &chain->shape);
        if (!n) continue;
        ref.t[t] = malloc(n * sizeof(double));
        if (!ref.t[t]) { ref_free(); return HB_ENOMEM; }
        if (model && ((t >= HB_CT_WQ && t <= HB_CT_WD) || t == HB_CT_G1 || t == HB_CT_G2)) {
            continue; /* read from the file below */
        } else if (quant >= 0 && t >= HB_CT_WQ && t <= HB_CT_WD) {
            hb_status st = quant_weight(t, chain, n, seed);
            if (st != HB_OK) { ref_free(); return st; }
        } else if (t < HB_CHAIN_NINPUTS) {
            hb_fill_random(ref.t[t], n, seed, 1000003ULL + (unsigned long long)t);
            /* weights scaled by 2^-6 (~1/sqrt(fan-in), exact in f32) so activations stay O(1) */
            if (t >= HB_CT_WQ && t <= HB_CT_WD)
                for (size_t j = 0; j < n; j++) ref.t[t][j] *= 1.0 / 64;
        }
    }
    if (model) {
        hb_status st = hb_model_layer_load(chain, ref.t, ref.q, why, sizeof why);
        if (st != HB_OK) { fprintf(stderr, "hybench: %s\n", why); ref_free(); return st; }
    }
    for (int i = 0; i < hb_chain_nsteps(&chain->shape); i++) {
        int in[3];
        hb_case sc = hb_chain_step_case(chain, i, in);
        /* in f64; a quantized projection keeps its dtype: it reads W[n,k] (C = A W^T) */
        if (!hb_dtype_is_quant(sc.dtype)) sc.dtype = HB_F32;
        const double *ins[3] = {ref.t[in[0]], in[1] >= 0 ? ref.t[in[1]] : NULL, in[2] >= 0 ? ref.t[in[2]] : NULL};
        hb_status st = hb_ref_compute(&sc, ins, ref.t[hb_chain_step_at(&chain->shape, i)->out], 1);
        if (st != HB_OK) { ref_free(); return st; }
    }
    ref.seq = chain->shape.seq;
    ref.kv_seq = chain->shape.kv_seq;
    ref.tp = tp;
    ref.seed = seed;
    ref.quant = quant;
    snprintf(ref.src, sizeof ref.src, "%s", c->source);
    return HB_OK;
}

/* ---- measurement ---- */
typedef struct chain_ctx {
    hb_instance *inst;
    const hb_case *c;
    int nsteps;
    hb_case sc[HB_CHAIN_MAXSTEPS];
    int sin[HB_CHAIN_MAXSTEPS][3];
    hb_buf buf[HB_CT_COUNT];
    int have[HB_CT_COUNT];
    double *h64[HB_CT_COUNT];
    int device;
    int cold;          /* --cold: each step's compute starts with the caches evicted (prepare.h) */
    hb_elem el;        /* host and device element type of the case's dtype */
    size_t es;         /* its bytes */
    int coll_step;     /* over several ranks: a collective step (for coll_vote); -1 on one device */
    int stream;        /* resident on a device with a device timer: the layer is also timed as one stream (chain_stream_once) */
    void *graph;       /* the layer captured as one graph (backend graph hooks; over several ranks on all or none): also timed (chain_graph_once) */
    char graph_why[160]; /* why the capture failed, when it did ("" otherwise) */
    int want_impl;     /* the verified run: each step's implementation read from the backend (step_impl) */
    char impl[HB_CHAIN_MAXSTEPS][48];
    hb_prep_state prep[HB_CHAIN_MAXSTEPS]; /* the hot rule's state per step */
    hb_exec_step step[HB_CHAIN_MAXSTEPS];  /* step i for the executor (exec.h): sc[i] on its buffers */
} chain_ctx;

static void cc_free(chain_ctx *x)
{
    for (int t = 0; t < HB_CT_COUNT; t++) {
        if (x->have[t]) x->inst->ops->buf_free(x->inst, &x->buf[t]);
        free(x->h64[t]);
    }
    if (x->graph) x->inst->ops->graph_free(x->inst, x->graph);
    x->graph = NULL;
}

/* Phases of one call; P_COLL, the collective steps' device time (a part of compute), is recorded in
 * the record's tensor_parallel object, and P_LAYER (chain_stream_once) in its "layer" object, not
 * among the phases. */
enum { P_CIN, P_H2D, P_COMP, P_D2H, P_COUT, P_TOTAL, P_COLL, P_LAYER, P_ENQ, P_GRAPH, P_GENQ, P_N };
_Static_assert((int)P_CIN == (int)HB_PH_CONVERT_IN && (int)P_H2D == (int)HB_PH_H2D && (int)P_COMP == (int)HB_PH_COMPUTE &&
                   (int)P_D2H == (int)HB_PH_D2H && (int)P_COUT == (int)HB_PH_CONVERT_OUT && (int)P_TOTAL == (int)HB_PH_TOTAL,
               "the chain's phases are the record's (record.h)");

/* Step i's implementation, as the backend names it right after running it (case_info's "impl", as
 * sample.c lifts it for a case; "own" when it names none). */
static void step_impl(chain_ctx *x, int i)
{
    const char *name = "own";
    char buf[2048];
    json_t *e = NULL;
    if (x->inst->ops->case_info && x->inst->ops->case_info(x->inst, &x->sc[i], buf, sizeof buf) == HB_OK) {
        e = json_loads(buf, 0, NULL);
        const char *v = json_string_value(json_object_get(e, "impl"));
        if (v && *v) name = v;
    }
    snprintf(x->impl[i], sizeof x->impl[i], "%s", name);
    json_decref(e);
}

static hb_status chain_once(chain_ctx *x, double ph[P_N])
{
    memset(ph, 0, sizeof(double) * P_N);
    hb_mode mode = x->c->mode;
    double tstart = hb_now(), t0;
    hb_status st = HB_OK;
    if (mode == HB_MODE_RESIDENT && x->device) {
        /* resident: the weights and the KV cache already live on the device (uploaded once, before
         * timing); per call only the layer's input crosses, and its output comes back */
        hb_buf *xb = &x->buf[HB_CT_X];
        if ((st = hb_exec_place(x->inst, &xb, 1, 1, &ph[P_H2D])) != HB_OK) return st;
    }
    for (int i = 0; i < x->nsteps; i++) {
        const int *in = x->sin[i];
        int out = hb_chain_step_at(&x->c->shape, i)->out;
        if (mode != HB_MODE_RESIDENT) {
            if (mode == HB_MODE_CONVERT) {
                t0 = hb_now();
                for (int j = 0; j < 3 && in[j] >= 0; j++)
                    hb_convert(x->buf[in[j]].host, x->el, x->h64[in[j]], HB_ELEM_F64, hb_chain_tensor_elems(in[j], &x->c->shape));
                ph[P_CIN] += hb_now() - t0;
            }
            if (x->device) {
                hb_buf *up[3];
                int nu = 0;
                for (int j = 0; j < 3 && in[j] >= 0; j++) up[nu++] = &x->buf[in[j]];
                if ((st = hb_exec_place(x->inst, up, nu, 1, &ph[P_H2D])) != HB_OK) return st;
            }
        }
        /* the step: its start state (hot or cold), then its run timed (exec.h); the preparation is no
         * phase's: it leaves the measured total */
        double tc = 0, prep = 0;
        st = hb_exec_run(&x->step[i], x->cold, x->device ? HB_EXEC_DEV_TIMER : 0, &tc, NULL, &prep);
        tstart += prep;
        ph[P_COMP] += tc;
        if (hb_op_is_collective(x->sc[i].op)) ph[P_COLL] += tc;
        if (st != HB_OK) return st;
        if (x->want_impl) step_impl(x, i);
        if (mode != HB_MODE_RESIDENT || out == HB_CT_Y) {
            if (x->device) {
                hb_buf *ob = &x->buf[out];
                if ((st = hb_exec_fetch(x->inst, &ob, 1, 1, &ph[P_D2H])) != HB_OK) return st;
            }
            if (mode == HB_MODE_CONVERT) {
                t0 = hb_now();
                hb_convert(x->h64[out], HB_ELEM_F64, x->buf[out].host, x->el, hb_chain_tensor_elems(out, &x->c->shape));
                ph[P_COUT] += hb_now() - t0;
            }
        }
    }
    ph[P_TOTAL] = hb_now() - tstart;
    return HB_OK;
}

/* The layer as an executor runs it (resident on a device only): x uploaded (untimed), then every step
 * enqueued back to back (the backend's run_async; run, which waits for each op, where it has none)
 * with no settle runs between them, one device timer
 * around the whole (from the first step's start to the last one's end: the launch gaps the device
 * waits through are in it); *dev its seconds. Over several ranks a vote first aligns the ranks'
 * start, so that a rank's time does not include another rank's late launch of the layer. */
static hb_status chain_stream_once(chain_ctx *x, double *dev, double *enq)
{
    *dev = *enq = 0;
    hb_status st = hb_exec_setup_place(x->inst, &x->buf[HB_CT_X]);
    if (st != HB_OK) return st;
    if (x->coll_step >= 0) (void)x->inst->ops->coll_vote(x->inst, &x->sc[x->coll_step], 0);
    /* *enq, the host's time to enqueue the layer: near the layer's time, the layer is launch-bound */
    return hb_exec_enqueue(x->step, x->nsteps, dev, enq, NULL, NULL);
}

/* The layer's steps recorded once as a graph (the backend's graph_capture around the run_async calls
 * chain_stream_once makes); a failed capture leaves x->graph NULL and says why in x->graph_why. */
static void chain_graph_capture(chain_ctx *x)
{
    hb_status st = x->inst->ops->graph_capture(x->inst, 1, &x->graph);
    if (st != HB_OK) {
        snprintf(x->graph_why, sizeof x->graph_why, "capture did not start: %s", hb_status_name(st));
        x->graph = NULL;
        if (x->coll_step >= 0) (void)x->inst->ops->coll_vote(x->inst, &x->sc[x->coll_step], 1); /* the others' vote below */
        return;
    }
    int failed = -1;
    st = hb_exec_enqueue(x->step, x->nsteps, NULL, NULL, NULL, &failed); /* recorded, not run */
    hb_status st2 = x->inst->ops->graph_capture(x->inst, 0, &x->graph); /* always ends the capture */
    if (failed >= 0 || st2 != HB_OK) {
        if (failed >= 0)
            snprintf(x->graph_why, sizeof x->graph_why, "step %d (%s) could not be captured: %s", failed,
                     hb_op_get(x->sc[failed].op)->name, hb_status_name(st));
        else
            snprintf(x->graph_why, sizeof x->graph_why, "the capture ended in %s", hb_status_name(st2));
        if (x->graph && st2 == HB_OK) x->inst->ops->graph_free(x->inst, x->graph);
        x->graph = NULL;
    }
    /* over several ranks: a graph on every rank or on none (a rank launching its graph's all_reduce
     * alone would wait for the others for ever) */
    if (x->coll_step >= 0 && x->inst->ops->coll_vote(x->inst, &x->sc[x->coll_step], x->graph == NULL) && x->graph) {
        x->inst->ops->graph_free(x->inst, x->graph);
        x->graph = NULL;
        snprintf(x->graph_why, sizeof x->graph_why, "another rank could not capture the layer");
    }
}

/* One launch of the captured layer: x uploaded (untimed), the graph enqueued under the device timer;
 * *dev the device seconds from its start to its end, *enq the host's seconds to launch it. */
static hb_status chain_graph_once(chain_ctx *x, double *dev, double *enq)
{
    *dev = *enq = 0;
    hb_status st = hb_exec_setup_place(x->inst, &x->buf[HB_CT_X]);
    if (st != HB_OK) return st;
    if (x->coll_step >= 0) (void)x->inst->ops->coll_vote(x->inst, &x->sc[x->coll_step], 0); /* aligned start, as chain_stream_once */
    return hb_exec_graph(x->inst, x->graph, dev, enq);
}

/* Relative L2 error of the layer's output y (host buffer, or its f64 copy in convert) against the
 * reference, under verify.h's rule (the reference is computed in full: no element skipped). */
static double y_rel_err(const chain_ctx *x)
{
    size_t ny = hb_chain_tensor_elems(HB_CT_Y, &x->c->shape);
    if (x->c->mode == HB_MODE_CONVERT) return hb_verify_rel_error(x->h64[HB_CT_Y], HB_ELEM_F64, ref.t[HB_CT_Y], ny, 0, NULL);
    return hb_verify_rel_error(x->buf[HB_CT_Y].host, x->el, ref.t[HB_CT_Y], ny, 0, NULL);
}

/* Poison y on the host (NaN in the compute dtype, and its f64 copy) and on the device. */
static hb_status y_poison(chain_ctx *x)
{
    size_t ny = hb_chain_tensor_elems(HB_CT_Y, &x->c->shape);
    hb_verify_poison(x->h64[HB_CT_Y], HB_ELEM_F64, ny);
    return hb_verify_poison_buf(x->inst, &x->buf[HB_CT_Y], x->el, ny, x->device && x->c->route != HB_ROUTE_MAPPED);
}

/* One mode of a chain case, from set-up to its record: chain_open (buffers, parameters, the
 * verified run), chain_sample (one timed call), chain_close (the record). */
typedef struct chain_var {
    chain_ctx x;
    json_t *rec;
    hb_status st;
    char reason[512];
    double *samp[P_N];
    size_t ns;
    int ci_met, done;
    int want;          /* measured with other modes: its own rule still wants samples (the group ends
                        * every mode together: hb_chain_measure_group) */
    double spent;      /* seconds in its timed calls (and their settle runs) so far */
    double wall_setup; /* seconds in chain_open (set-up, the verified run): record "wall_s" */
    long long host_bytes, staging, dev_bytes, rss_peak;
    double rel;
} chain_var;

static void chain_open(chain_var *v, hb_instance *inst, const hb_case *c, const hb_options *o, long long rss_base)
{
    chain_ctx *x = &v->x;
    memset(v, 0, sizeof *v);
    v->rec = hb_case_record(c, inst->name);
    v->rel = NAN;
    x->inst = inst;
    x->c = c;
    x->device = !inst->host_memory;
    x->cold = o->cold;
    hb_status st = HB_OK;
    char *reason = v->reason;
    size_t rl = sizeof v->reason;
    long long rss0 = hb_rss_now();
    hb_rss_reset();
    x->el = hb_elem_of_dtype(c->dtype);
    x->es = hb_dtype_size(c->dtype);
    x->nsteps = hb_chain_nsteps(&c->shape);
    x->coll_step = -1;
    if (c->dtype == HB_TF32) { st = HB_ESKIP; snprintf(reason, rl, "the chain runs in f32, f16 or bf16 (tf32 is a matrix-product mode)"); goto out; }
    const int quant = hb_dtype_is_quant(c->dtype);
    if (quant && (c->mode == HB_MODE_CONVERT || c->mode == HB_MODE_CONVERT_DEVICE)) {
        st = HB_ESKIP;
        snprintf(reason, rl, "quantized weights have no f64 host form to convert at every op (a model file holds the blocks): modes f32 and resident");
        goto out;
    }
    if (quant && c->shape.ranks > 0)
        for (int t = HB_CT_WQ; t <= HB_CT_WD; t++)
            if (hb_chain_qshard(t, &c->shape, chain_wtype(c, t), NULL, NULL, reason, rl) != 0) { st = HB_ESKIP; goto out; }
    if (c->shape.ranks > 0 && c->shape.ranks != hb_launch_ranks()) {
        st = HB_ESKIP;
        snprintf(reason, rl, "the case has ranks=%lld, the launch has %d process%s (core/launch.h)", (long long)c->shape.ranks,
                 hb_launch_ranks(), hb_launch_ranks() == 1 ? "" : "es");
        goto out;
    }
    /* the steps this rank runs on its own first; then, over several ranks, the collective step's supports,
     * where the ranks agree on the case (a rank that refused a step above refuses it on every rank alike:
     * the same shard shapes on the same backend) */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < x->nsteps; i++) {
            if (pass == 0) {
                x->sc[i] = hb_chain_step_case(c, i, x->sin[i]);
                /* a model file's projection: in its own format */
                if (quant && x->sc[i].op == HB_OP_MATMUL) x->sc[i].dtype = chain_wtype(c, x->sin[i][1]);
            }
            const int coll = hb_op_is_collective(x->sc[i].op);
            if (coll != pass || (coll && x->coll_step >= 0)) continue;
            char r2[256] = "";
            if (inst->ops->supports(inst, &x->sc[i], r2, sizeof r2) != HB_OK) {
                st = HB_ESKIP;
                snprintf(reason, rl, "step %d (%s): %s", i, hb_op_get(x->sc[i].op)->name, r2);
                goto out;
            }
            if (coll) x->coll_step = i;
        }
    for (int i = 0; i < x->nsteps; i++) {
        const int *in = x->sin[i];
        x->step[i] = (hb_exec_step){.inst = inst, .c = &x->sc[i], .in = {&x->buf[in[0]], in[1] >= 0 ? &x->buf[in[1]] : NULL, in[2] >= 0 ? &x->buf[in[2]] : NULL},
                                    .out = &x->buf[hb_chain_step_at(&c->shape, i)->out], .prep = &x->prep[i]};
    }
    if (x->coll_step >= 0 && !inst->ops->coll_vote) {
        st = HB_ESKIP;
        snprintf(reason, rl, "the backend has no collective vote: its ranks could not agree where sampling stops");
        goto out;
    }
    st = ref_get(c, o->seed);
    if (st != HB_OK) { snprintf(reason, rl, "reference chain failed: %s", hb_status_name(st)); goto out; }
    for (int t = 0; t < HB_CT_COUNT; t++) {
        size_t n = hb_chain_tensor_elems(t, &c->shape);
        if (!n) continue;
        /* a quantized layer's weight: its blocks, as the file holds them (f32 and resident only) */
        const size_t qbytes = ref.q[t] ? hb_chain_tensor_bytes(t, &c->shape, chain_wtype(c, t)) : 0;
        const size_t bytes = qbytes ? qbytes : n * x->es;
        st = inst->ops->buf_alloc(inst, bytes, c->route, &x->buf[t]);
        if (st != HB_OK) { snprintf(reason, rl, "buf_alloc of tensor %d failed", t); goto out; }
        x->buf[t].dtype = quant ? chain_wtype(c, t) : c->dtype;
        x->have[t] = 1;
        if (x->device) v->dev_bytes += (long long)bytes;
        if (qbytes) {
            if (c->shape.ranks > 0) (void)hb_chain_qshard(t, &c->shape, chain_wtype(c, t), ref.q[t], x->buf[t].host, reason, rl);
            else memcpy(x->buf[t].host, ref.q[t], qbytes);
            v->host_bytes += (long long)qbytes;
            continue;
        }
        double *shard = NULL;
        if (t < HB_CHAIN_NINPUTS) {
            /* this rank's block of the whole layer's input (the whole tensor on one device) */
            hb_chain_block b;
            shard = malloc(n * sizeof(double));
            if (!shard || hb_chain_shard(t, &c->shape, &b) != 0 || (size_t)(b.rows * b.cols) != n) {
                free(shard);
                st = shard ? HB_EINVAL : HB_ENOMEM;
                snprintf(reason, rl, "tensor %d: no shard of the reference", t);
                goto out;
            }
            for (int64_t r = 0; r < b.rows; r++)
                memcpy(shard + r * b.cols, ref.t[t] + (b.r0 + r) * b.full_cols + b.c0, (size_t)b.cols * sizeof(double));
        }
        if (c->mode == HB_MODE_CONVERT) {
            x->h64[t] = shard ? shard : malloc(n * sizeof(double));
            if (!x->h64[t]) { st = HB_ENOMEM; snprintf(reason, rl, "host f64 tensor"); goto out; }
            v->host_bytes += (long long)n * 8;
            v->staging += (long long)(n * x->es);
        } else {
            if (shard) hb_convert(x->buf[t].host, x->el, shard, HB_ELEM_F64, n);
            free(shard);
            v->host_bytes += (long long)(n * x->es);
        }
    }
    for (int p = 0; p < P_N; p++) {
        v->samp[p] = calloc((size_t)o->max_samples + 1, sizeof(double));
        if (!v->samp[p]) { st = HB_ENOMEM; goto out; }
    }
    /* resident: parameters (weights, norms, KV cache) cross once, outside the timed calls */
    if (c->mode == HB_MODE_RESIDENT && x->device)
        for (int t = 0; t < HB_CHAIN_NINPUTS && st == HB_OK; t++)
            if (x->have[t] && t != HB_CT_X) st = hb_exec_setup_place(inst, &x->buf[t]);
    if (st != HB_OK) { snprintf(reason, rl, "parameter upload failed: %s", hb_status_name(st)); goto out; }
    /* poison the output, one verified run (also the warm-up), then sample */
    {
        double ph[P_N];
        st = y_poison(x);
        x->want_impl = 1;
        if (st == HB_OK) st = chain_once(x, ph);
        x->want_impl = 0;
        if (st != HB_OK) { snprintf(reason, rl, "chain run failed: %s", hb_status_name(st)); goto out; }
        v->rel = y_rel_err(x);
        /* the layer as one stream: verified the same way (its output poisoned first) */
        x->stream = c->mode == HB_MODE_RESIDENT && x->device && hb_timed_has_timer(inst);
        if (x->stream) {
            double dev, enq;
            st = y_poison(x);
            if (st == HB_OK) st = chain_stream_once(x, &dev, &enq);
            if (st == HB_OK) st = hb_exec_setup_fetch(inst, &x->buf[HB_CT_Y]);
            if (st != HB_OK) { snprintf(reason, rl, "chain run as one stream failed: %s", hb_status_name(st)); goto out; }
            double r2 = y_rel_err(x);
            if (!(r2 <= v->rel)) v->rel = r2;
            ph[P_LAYER] = dev;
            /* the layer as one graph (over several ranks its all_reduce steps in it), verified too */
            if (inst->ops->graph_capture && inst->ops->graph_launch && inst->ops->graph_free) {
                chain_graph_capture(x);
                if (x->graph) {
                    st = y_poison(x);
                    if (st == HB_OK) st = chain_graph_once(x, &dev, &enq);
                    if (st == HB_OK) st = hb_exec_setup_fetch(inst, &x->buf[HB_CT_Y]);
                    if (st != HB_OK) { snprintf(reason, rl, "chain run as one graph failed: %s", hb_status_name(st)); goto out; }
                    r2 = y_rel_err(x);
                    if (!(r2 <= v->rel)) v->rel = r2;
                }
            }
        }
        /* one more warm-up call */
        if (!o->verify_only) st = chain_once(x, ph);
        if (st != HB_OK) snprintf(reason, rl, "chain run failed while warming up: %s", hb_status_name(st));
        if (o->verify_only) { for (int p = 0; p < P_N; p++) v->samp[p][0] = ph[p]; v->ns = 1; v->ci_met = 1; }
    }
out:
    {
        /* its own set-up's peak: the peak since the reset, less what the group's other modes held
         * when it started (as sample.c's var_prepare) */
        long long pk = hb_rss_peak();
        v->rss_peak = pk >= 0 && rss0 >= 0 && rss_base >= 0 ? pk - rss0 + rss_base : pk;
    }
    v->st = st;
    v->done = st != HB_OK || o->verify_only;
}

/* One timed call of v; done when the median's CI meets the target after min_samples, at
 * max_samples, or when its own calls have taken 4x the budget (a call is a whole layer). grouped:
 * one of several modes in the same rounds: the CI and budget tests only clear v->want, and the
 * group ends its modes together (max_samples and a failure still end v itself). */
static void chain_sample(chain_var *v, const hb_options *o, int grouped)
{
    double ph[P_N];
    double t0 = hb_now();
    hb_status st = chain_once(&v->x, ph);
    if (st == HB_OK && v->x.stream) st = chain_stream_once(&v->x, &ph[P_LAYER], &ph[P_ENQ]);
    if (st == HB_OK && v->x.graph) st = chain_graph_once(&v->x, &ph[P_GRAPH], &ph[P_GENQ]);
    v->spent += hb_now() - t0;
    if (st != HB_OK) {
        v->st = st;
        snprintf(v->reason, sizeof v->reason, "chain run failed while sampling: %s", hb_status_name(st));
        v->done = 1;
        return;
    }
    for (int p = 0; p < P_N; p++) v->samp[p][v->ns] = ph[p];
    v->ns++;
    if ((int)v->ns >= o->max_samples) { v->done = 1; return; }
    const chain_ctx *x = &v->x;
    if ((int)v->ns >= o->min_samples || x->coll_step >= 0) {
        hb_stats s;
        hb_stats_compute(v->samp[P_TOTAL], v->ns, &s);
        int met = (int)v->ns >= o->min_samples && s.median > 0 && (s.ci_hi - s.ci_lo) / 2 <= o->ci_target * s.median;
        int stop = (int)v->ns >= o->min_samples && (met || v->spent > 4 * o->budget_s);
        /* over several ranks every rank stops at the same sample: the one where any rank would */
        if (x->coll_step >= 0) stop = x->inst->ops->coll_vote(x->inst, &x->sc[x->coll_step], stop);
        if (grouped) {
            v->ci_met = met;
            v->want = !stop;
        } else if (stop) {
            v->ci_met = met;
            v->done = 1;
        }
    }
}

/* The chain case's record: the record set-up left (v->rec) read into its struct (results/record.h),
 * the measured members set in the record's order, written back from the struct. Returns the record
 * (the caller owns it; v->rec is consumed) and its status in *st_out. */
static json_t *chain_close(chain_var *v, const hb_options *o, const hb_ceiling *cl, int ncl, int in_group, hb_status *st_out)
{
    const hb_case *c = v->x.c;
    hb_status st = v->st, ws = HB_OK;
    hb_rec_case r;
    json_t *weights = NULL, *out = NULL;
    char cname[40], mpath[200], comp[512] = "";
    if (hb_rec_case_parse(v->rec, &r) != HB_OK) { ws = HB_ENOMEM; goto done; }
#define SET(m, x) (ws = ws ? ws : HB_REC_SET(hb_rec_case, &r, m, x))
#define PUT(m) (ws = ws ? ws : hb_rec_put(&hb_rec_case_table, &r, offsetof(hb_rec_case, m)))
#define SETIN(T, s, m, x) (ws = ws ? ws : HB_REC_SET(T, s, m, x))
    if (st == HB_OK) {
        hb_stats sp[P_N];
        for (int p = 0; p < P_N; p++) {
            hb_stats_compute(v->samp[p], v->ns, &sp[p]);
            if (p <= P_TOTAL) { /* the phases in the schema's order (P_CIN..P_TOTAL are HB_PH_*) */
                if (!ws) ws = hb_rec_stats_set(&r.phase[p], &sp[p]);
                PUT(phase[p]);
            }
        }
        if (!ws) ws = hb_rec_nums_set(&r.samples[HB_PH_TOTAL], v->samp[P_TOTAL], v->ns);
        PUT(samples[HB_PH_TOTAL]);
        if (!ws) ws = hb_rec_nums_set(&r.samples[HB_PH_COMPUTE], v->samp[P_COMP], v->ns);
        PUT(samples[HB_PH_COMPUTE]);
        SET(ci_met, v->ci_met);
        {
            long runs = 0, calls = 0;
            for (int k = 0; k < v->x.nsteps; k++) { runs += v->x.prep[k].runs; calls += v->x.prep[k].calls; }
            if (calls && !o->cold) SET(settle_runs, (double)runs / (double)calls);
            /* a chain computes its reference inside set-up (chain_open) */
            SETIN(hb_rec_wall, &r.wall, setup, v->wall_setup);
            SETIN(hb_rec_wall, &r.wall, sampling, v->spent);
            PUT(wall);
        }
        if (in_group > 1 && !o->verify_only) SET(interleaved_with, in_group - 1);
        SET(ci_target, o->ci_target);
        double flops = hb_chain_flops(&c->shape), bytes = hb_case_bytes(c);
        double tc = sp[P_COMP].median, tt = sp[P_TOTAL].median;
        SET(gflops, tc > 0 ? flops / tc / 1e9 : 0);
        SET(gbps, tc > 0 ? bytes / tc / 1e9 : 0);
        SET(gflops_total, tt > 0 ? flops / tt / 1e9 : 0);
        SET(gbps_total, tt > 0 ? bytes / tt / 1e9 : 0);
        double peak = NAN;
        snprintf(cname, sizeof cname, "peak_gflops_%s", hb_dtype_name(c->dtype));
        for (int i = 0; i < ncl; i++) if (!strcmp(cl[i].name, cname)) peak = cl[i].value;
        SET(ceiling, cname);
        SET(ceiling_value, peak);
        SET(fraction, isnan(peak) || tc <= 0 ? (double)NAN : flops / tc / 1e9 / peak);
        double tol = hb_op_tolerance(HB_OP_CHAIN, &c->shape, c->dtype);
        SET(rel_err, v->rel); /* "inf" when not finite */
        SET(tolerance, tol);
        SET(verified_fraction, 1);
        SET(steps, v->x.nsteps);
        /* the layer's weight memory as stored (a quantized mix's blocks) and, for a model file's layer,
         * where it came from and each projection's format */
        {
            double wb = 0;
            for (int t = HB_CT_WQ; t <= HB_CT_WD; t++)
                wb += (double)hb_chain_tensor_bytes(t, &c->shape, hb_dtype_is_quant(c->dtype) ? chain_wtype(c, t) : c->dtype);
            SET(weight_bytes, wb);
            char why[256];
            int ml;
            const hb_model_info *mi = hb_model_case(c, mpath, sizeof mpath, &ml) ? hb_model_case_info(c, why, sizeof why) : NULL;
            if (mi) {
                /* the stored format of each tensor, by the file's tensor name (a map, kept as JSON) */
                if (!(weights = json_object())) ws = HB_ENOMEM;
                for (int t = HB_CT_G1; weights && t <= HB_CT_WD; t++) {
                    char tn[80];
                    if (mi->wtype[t] >= 0 && hb_model_tensor_name(t, ml, tn, sizeof tn))
                        json_object_set_new(weights, tn, json_string(hb_dtype_name((hb_dtype)mi->wtype[t])));
                }
                SETIN(hb_rec_model_file, &r.model_file, path, mpath);
                SETIN(hb_rec_model_file, &r.model_file, layer, ml);
                SETIN(hb_rec_model_file, &r.model_file, layers, mi->nlayers);
                SETIN(hb_rec_model_file, &r.model_file, weights, weights);
                PUT(model_file);
            }
        }
        /* its composition: every step's op and implementation, and "impl" the distinct op:impl pairs in step order */
        {
            size_t used = 0;
            hb_rec_step_impl *si = v->x.nsteps > 0 ? calloc((size_t)v->x.nsteps, sizeof *si) : NULL;
            if (v->x.nsteps > 0 && !si) ws = HB_ENOMEM;
            for (int k = 0; si && k < v->x.nsteps; k++) {
                const char *op = hb_op_get(v->x.sc[k].op)->name, *im = v->x.impl[k][0] ? v->x.impl[k] : "own";
                SETIN(hb_rec_step_impl, &si[k], op, op);
                SETIN(hb_rec_step_impl, &si[k], impl, im);
                int seen = 0;
                for (int q = 0; q < k && !seen; q++)
                    seen = v->x.sc[q].op == v->x.sc[k].op && !strcmp(v->x.impl[q][0] ? v->x.impl[q] : "own", im);
                if (!seen && used < sizeof comp)
                    used += (size_t)snprintf(comp + used, sizeof comp - used, "%s%s:%s", used ? " " : "", op, im);
            }
            r.steps_impl = si; /* the struct's own from here (freed by hb_rec_case_free) */
            r.nsteps_impl = si ? (size_t)v->x.nsteps : 0;
            PUT(steps_impl);
            SET(impl, comp);
        }
        /* the layer as one stream (chain_stream_once): the time an executor's layer takes */
        if (v->x.stream) {
            /* the host's time to enqueue it (median): where it is near the layer's, launches bound the layer */
            if (!ws) ws = hb_rec_layer_set(&r.layer, &sp[P_LAYER], sp[P_ENQ].median);
            PUT(layer);
            /* the layer as one graph (chain_graph_once): what the GPU needs without the host's launches */
            if (v->x.graph) {
                if (!ws) ws = hb_rec_layer_set(&r.graph, &sp[P_GRAPH], sp[P_GENQ].median);
                PUT(graph);
            } else if (v->x.graph_why[0]) {
                SETIN(hb_rec_layer, &r.graph, unavailable, v->x.graph_why);
                PUT(graph);
            }
        }
        if (c->shape.ranks > 0) {
            /* the tensor-parallel layer (docs/collectives.md): time_s is this rank's layer time (the
             * layer as one stream where measured, else the compute median); steps_s the compute median
             * (every step timed on its own, hot, the collectives included); allreduce_s the median of the
             * all_reduce steps' part of steps_s; the ranks' merge (results/ranks.c) keeps every rank's
             * time_s and the mean */
            double tl = v->x.stream ? sp[P_LAYER].median : tc;
            SETIN(hb_rec_tp, &r.tp, ranks, (double)c->shape.ranks);
            SETIN(hb_rec_tp, &r.tp, rank, (double)c->shape.rank);
            SETIN(hb_rec_tp, &r.tp, time_s, tl);
            SETIN(hb_rec_tp, &r.tp, steps_s, tc);
            SETIN(hb_rec_tp, &r.tp, allreduce_s, sp[P_COLL].median);
            SETIN(hb_rec_tp, &r.tp, allreduce_share, tc > 0 ? sp[P_COLL].median / tc : 0.0);
            /* the layer as one graph on this rank, its all_reduce steps in it (where captured) */
            if (v->x.graph) SETIN(hb_rec_tp, &r.tp, graph_s, sp[P_GRAPH].median);
            PUT(tp);
        }
        if (!(v->rel <= tol)) { st = HB_EWRONG; snprintf(v->reason, sizeof v->reason, "relative error %.3g over tolerance %.3g", v->rel, tol); }
    }
    SETIN(hb_rec_mem, &r.mem, host_bytes, (double)v->host_bytes);
    SETIN(hb_rec_mem, &r.mem, staging_bytes, (double)v->staging);
    SETIN(hb_rec_mem, &r.mem, device_bytes, (double)v->dev_bytes);
    SETIN(hb_rec_mem, &r.mem, peak_rss_bytes, (double)v->rss_peak);
    PUT(mem);
    SET(status, hb_status_name(st));
    if (st != HB_OK) SET(reason, v->reason);
#undef SET
#undef PUT
#undef SETIN
    if (!ws) out = hb_rec_case_json(&r);
    hb_rec_case_free(&r); /* borrowed from v->rec and weights, which outlive it until here */
done:
    json_decref(weights);
    if (out) json_decref(v->rec);
    else { out = v->rec; st = HB_ENOMEM; } /* out of memory: the record as set-up left it */
    for (int p = 0; p < P_N; p++) { free(v->samp[p]); v->samp[p] = NULL; }
    cc_free(&v->x);
    v->rec = NULL;
    *st_out = st;
    return out;
}

void hb_chain_measure_group(hb_instance *inst, const hb_case *cases, int n, const hb_options *o, const hb_ceiling *cl,
                            int ncl, json_t **recs, hb_status *st_out)
{
    chain_var *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    if (!v) {
        for (int k = 0; k < n; k++) {
            recs[k] = hb_case_status_record(&cases[k], inst->name, HB_ENOMEM, "no host memory for the chain's group");
            st_out[k] = HB_ENOMEM;
        }
        return;
    }
    long long rss_base = hb_rss_now();
    int ready = 0;
    for (int k = 0; k < n; k++) {
        double tp = hb_now();
        chain_open(&v[k], inst, &cases[k], o, rss_base);
        v[k].wall_setup = hb_now() - tp;
        v[k].want = 1;
        ready += !v[k].done;
    }
    /* Every ready mode takes one call per round, and the rounds end for all of them together (as
     * sample.c's hb_measure_group): when none wants more, one has reached max_samples, or the group
     * has spent its modes' budgets; a mode that went on alone would be timed without the others'
     * work between its calls. */
    const int grouped = ready > 1;
    for (int round = 0;; round++) {
        int nact = 0;
        for (int t = 0; t < n; t++) {
            chain_var *w = &v[(t + round) % n];
            if (!w->done) { chain_sample(w, o, grouped); nact++; }
        }
        if (!nact) break;
        if (grouped) {
            int want = 0, full = 0, act = 0, minn = INT_MAX;
            double gspent = 0;
            for (int k = 0; k < n; k++) {
                if (v[k].st != HB_OK) continue;
                full |= v[k].done; /* max_samples */
                if (v[k].done) continue;
                act++;
                want |= v[k].want;
                gspent += v[k].spent;
                if ((int)v[k].ns < minn) minn = (int)v[k].ns;
            }
            /* the budget ends the rounds once every mode has --min-samples (its want already waits) */
            if (!want || full || (gspent > 4 * o->budget_s * act && minn >= o->min_samples))
                for (int k = 0; k < n; k++) v[k].done = 1;
        }
    }
    for (int k = 0; k < n; k++) recs[k] = chain_close(&v[k], o, cl, ncl, n, &st_out[k]);
    free(v);
}

json_t *hb_chain_measure(hb_instance *inst, const hb_case *c, const hb_options *o, const hb_ceiling *cl, int ncl,
                         hb_status *st_out)
{
    json_t *rec = NULL;
    hb_chain_measure_group(inst, c, 1, o, cl, ncl, &rec, st_out);
    return rec;
}

/* ---- a chain in another measurement's rounds (internal.h) ---- */
struct hb_chain_part {
    chain_var v;
    const hb_options *o;
};

hb_chain_part *hb_chain_part_open(hb_instance *inst, const hb_case *c, const hb_options *o)
{
    hb_chain_part *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->o = o;
    double t0 = hb_now();
    chain_open(&p->v, inst, c, o, hb_rss_now());
    p->v.wall_setup = hb_now() - t0;
    p->v.want = 1;
    return p;
}

int hb_chain_part_sample(void *ctx)
{
    hb_chain_part *p = ctx;
    if (p->v.done) return HB_ROUND_DONE;
    chain_sample(&p->v, p->o, 1); /* grouped: its rule clears want; done only at max_samples or a failure */
    return p->v.done ? HB_ROUND_DONE : p->v.want ? HB_ROUND_MORE : HB_ROUND_ENOUGH;
}

json_t *hb_chain_part_close(hb_chain_part *p, int others, hb_status *st)
{
    json_t *rec = chain_close(&p->v, p->o, NULL, 0, others + 1, st);
    free(p);
    return rec;
}
