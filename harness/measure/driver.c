/*
 * driver.c - `hybench run` and `hybench verify`: workloads -> cases -> one child process per backend
 * type -> results/<run-id>.jsonl.
 *
 * The parent never initializes a device or OpenMP (so that fork() is safe); each child opens its
 * backend, measures the instance's ceilings, then measures its cases and appends one record per case
 * to the results file (O_APPEND, one write per record). The child reports "begin i"/"end i" on a pipe;
 * when it dies inside case i (signal, abort, OOM kill) or exceeds the per-case time limit, the parent
 * records case i as `crashed` or `timed_out` and starts a new child at case i+1.
 */
#include "measure/driver.h"
#include "measure/registry.h"
#include "measure/prepare.h"
#include "measure/chain_run.h"
#include "cli/commands.h"
#include "core/convert.h"
#include "cpu/cpu.h"
#include "cpu_ref/ref.h"
#include "analysis/modecheck.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_INST 16

/* ---------- case list ---------- */
typedef struct case_list {
    hb_case *v;
    int *item;      /* index of the workload item each case came from (reference cache key) */
    unsigned char *host_route; /* 1 where the case's route is its item's first requested route: a
                                * host-memory backend (one route: its own memory) runs that one */
    const hb_item_list *items;
    size_t n, cap;
} case_list;

static int case_push(case_list *l, const hb_case *c, int item, int host_route)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        hb_case *v = realloc(l->v, nc * sizeof *v);
        if (v) l->v = v;
        int *it = realloc(l->item, nc * sizeof *it);
        if (it) l->item = it;
        unsigned char *hr = realloc(l->host_route, nc);
        if (hr) l->host_route = hr;
        if (!v || !it || !hr) return -1;
        l->cap = nc;
    }
    l->v[l->n] = *c;
    l->item[l->n] = item;
    l->host_route[l->n] = (unsigned char)host_route;
    l->n++;
    return 0;
}

static int list_has(const char *list, const char *name)
{
    if (!list) return 1;
    size_t ln = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == ln && !strncmp(p, name, l)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* ---------- options ---------- */
static void usage(FILE *f, const char *cmd)
{
    fprintf(f,
        "usage: hybench %s [options] [WORKLOAD.ini ...]\n"
        "  Runs every case of the workloads (default: workloads/default.ini workloads/tinyllama.ini\n"
        "  workloads/resnet50.ini) on every available backend, in modes convert and f32 (and resident on\n"
        "  device backends), verifies each result against cpu-ref and appends one record per case to\n"
        "  results/<run-id>.jsonl (docs/results-schema.md).\n"
        "options:\n"
        "  --backend LIST     backends or instances (cpu-ref,cpu,opencl,opencl:0:0,cuda,cuda:0)\n"
        "  --op LIST          ops or families (add,matmul,conv2d,pooling,attention,...)\n"
        "  --mode LIST        convert,f32,resident,convert-device   --route LIST  pageable,pinned,mapped\n"
        "  --dtype LIST       f32,tf32,f16,bf16 (unsupported ones are recorded as skipped)\n"
        "  --filter TEXT      only cases whose name or key contains TEXT\n"
        "  --quick            the quick subset of the workloads (budget 0.2 s, routes pageable+mapped,\n"
        "                     cpu-ref timed up to 0.25 GFLOP, unless given explicitly)\n"
        "  --batch KIND:FILE  a oneDNN benchdnn problem list (conv:, pool:, matmul:); repeatable\n"
        "  --budget SECONDS   sampling budget per case (default 0.5; verify: unused)\n"
        "  --ci-target FRAC   stop sampling when the median's 95%% CI half-width is within FRAC (default 0.02)\n"
        "  --min-samples N    (default 5)   --max-samples N (default 300), per window\n"
        "  --repetitions R    sample each case in R windows (budget split), keep the window with the\n"
        "                     lowest median (default 1; 3 with --quick --passes 1)\n"
        "  --passes P         run the whole case list P times, each pass in new processes (budget\n"
        "                     split); per case the worst status wins, else the pass with the lowest\n"
        "                     median is kept and every pass's median recorded (default 1; 3 with\n"
        "                     --quick). Between-process noise (thread placement, host state on a\n"
        "                     shared VM) is what makes two runs differ; passes sample it\n"
        "  --cold             evict the caches (host LLC or device L2) right before every timed compute;\n"
        "                     default (hot): the timed compute is the second of two back-to-back runs\n"
        "  --ref-max-gflop G  do not time cpu-ref above G GFLOP per call (default 2)\n"
        "  --case-timeout S   kill a case after S seconds: timed_out (default 600)\n"
        "  --seed N           input seed (default 42)\n"
        "  --out FILE         results file (default results/<run-id>.jsonl)\n"
        "  --dry-run          print the parsed cases with shapes and FLOP counts, run nothing\n"
        "exit status: 0 ok, 2 usage, 4 bad workload, 5 a case failed verification, 6 unknown/unavailable\n"
        "backend, 7 cannot write results, 8 cases failed/crashed/timed out, 130 interrupted (SIGINT/SIGTERM:\n"
        "what was measured is written)\n", cmd);
}

static unsigned parse_mask(const char *arg, int (*parse)(const char *), const char *what, int *bad)
{
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int v = parse(tok);
        if (v < 0) { fprintf(stderr, "hybench: unknown %s \"%s\" (option --%s)\n", what, tok, what); *bad = 1; return 0; }
        m |= 1u << v;
    }
    return m;
}

/* ---------- measurement of one case ---------- */
typedef struct run_ctx {
    hb_instance *inst;
    const hb_case *c;
    const hb_options *o;
    int nin;
    hb_elem el;                 /* device storage element type */
    size_t nel[HB_MAX_INPUTS], nout;
    hb_buf in[HB_MAX_INPUTS], out;
    int nbuf_in, have_out;
    double *h64[HB_MAX_INPUTS], *o64;   /* convert mode: the f64 host tensors */
    float *h32[HB_MAX_INPUTS], *o32;    /* f32 mode when the device dtype is not f32 */
    int device;                 /* 1 when the backend has its own memory */
    long long host_bytes, staging_bytes, device_bytes;
    hb_prep_state prep;         /* the hot rule's state (prepare.h) */
} run_ctx;

static void ctx_free(run_ctx *x)
{
    for (int i = 0; i < x->nbuf_in; i++) x->inst->ops->buf_free(x->inst, &x->in[i]);
    if (x->have_out) x->inst->ops->buf_free(x->inst, &x->out);
    for (int i = 0; i < HB_MAX_INPUTS; i++) { free(x->h64[i]); free(x->h32[i]); }
    free(x->o64);
    free(x->o32);
}

static hb_status ctx_init(run_ctx *x, hb_instance *inst, const hb_case *c, const hb_options *o,
                          double *const *inputs, char *reason, size_t rlen)
{
    memset(x, 0, sizeof *x);
    x->inst = inst; x->c = c; x->o = o;
    x->nin = hb_op_get(c->op)->ninputs;
    x->el = hb_elem_of_dtype(c->dtype);
    x->device = !inst->host_memory;
    size_t es = hb_elem_size(x->el);
    for (int i = 0; i < x->nin; i++) x->nel[i] = (size_t)hb_op_input_elems(c->op, &c->shape, i);
    x->nout = (size_t)hb_op_output_elems(c->op, &c->shape);
    /* refuse what cannot fit in host memory before touching it */
    double need = 0;
    for (int i = 0; i < x->nin; i++) need += (double)x->nel[i];
    need += (double)x->nout;
    int f64_host = c->mode == HB_MODE_CONVERT || c->mode == HB_MODE_CONVERT_DEVICE;
    need *= (double)(es + (f64_host ? 8 : 4) + 8); /* staging + host + reference */
    struct sysinfo si;
    if (sysinfo(&si) == 0 && need > 0.8 * (double)si.totalram * si.mem_unit) {
        snprintf(reason, rlen, "needs %.1f GiB of host memory, the machine has %.1f GiB", need / 1073741824.0,
                 (double)si.totalram * si.mem_unit / 1073741824.0);
        return HB_ENOMEM;
    }
    hb_status st;
    for (int i = 0; i < x->nin; i++) {
        st = inst->ops->buf_alloc(inst, x->nel[i] * es, c->route, &x->in[i]);
        if (st != HB_OK) { snprintf(reason, rlen, "buf_alloc of input %d (%zu bytes) failed: %s", i, x->nel[i] * es, hb_status_name(st)); return st; }
        x->in[i].dtype = c->dtype;
        x->nbuf_in++;
    }
    st = inst->ops->buf_alloc(inst, x->nout * es, c->route, &x->out);
    if (st != HB_OK) { snprintf(reason, rlen, "buf_alloc of output (%zu bytes) failed: %s", x->nout * es, hb_status_name(st)); return st; }
    x->have_out = 1;
    x->out.dtype = c->dtype;
    size_t total_el = x->nout;
    for (int i = 0; i < x->nin; i++) total_el += x->nel[i];
    if (x->device) x->device_bytes = (long long)(total_el * es);
    if (f64_host) {
        for (int i = 0; i < x->nin; i++) {
            x->h64[i] = malloc(x->nel[i] * sizeof(double));
            if (!x->h64[i]) { snprintf(reason, rlen, "host f64 tensor allocation failed"); return HB_ENOMEM; }
            memcpy(x->h64[i], inputs[i], x->nel[i] * sizeof(double));
        }
        x->o64 = malloc(x->nout * sizeof(double));
        if (!x->o64) { snprintf(reason, rlen, "host f64 tensor allocation failed"); return HB_ENOMEM; }
        x->host_bytes = (long long)(total_el * sizeof(double));
        /* convert: f32 staging on the host; convert-device: an f64 scratch on the device instead */
        if (c->mode == HB_MODE_CONVERT) x->staging_bytes = (long long)(total_el * es);
        else x->device_bytes += (long long)(total_el * sizeof(double));
    } else if (x->el != HB_ELEM_F32) {
        for (int i = 0; i < x->nin; i++) {
            x->h32[i] = malloc(x->nel[i] * sizeof(float));
            if (!x->h32[i]) { snprintf(reason, rlen, "host f32 tensor allocation failed"); return HB_ENOMEM; }
            hb_convert(x->h32[i], HB_ELEM_F32, inputs[i], HB_ELEM_F64, x->nel[i]);
        }
        x->o32 = malloc(x->nout * sizeof(float));
        if (!x->o32) { snprintf(reason, rlen, "host f32 tensor allocation failed"); return HB_ENOMEM; }
        x->host_bytes = (long long)(total_el * sizeof(float));
        x->staging_bytes = (long long)(total_el * es);
    } else {
        /* conversion-free: the f32 host tensors are the buffers' host memory */
        for (int i = 0; i < x->nin; i++) hb_convert(x->in[i].host, HB_ELEM_F32, inputs[i], HB_ELEM_F64, x->nel[i]);
        x->host_bytes = (long long)(total_el * sizeof(float));
    }
    return HB_OK;
}

/* One timed phase: host clock always; device clock when the backend has timers and touches the device. */
#define PHASE_BEGIN(use_dev) do { if ((use_dev) && x->inst->ops->timer_begin) x->inst->ops->timer_begin(x->inst); } while (0)

static hb_status phase_end(run_ctx *x, int use_dev, double t0, double *out_s, double *host_s)
{
    double dev = -1;
    hb_status st = HB_OK;
    if (use_dev && x->inst->ops->timer_end) st = x->inst->ops->timer_end(x->inst, &dev);
    double t1 = hb_now();
    if (host_s) *host_s = t1 - t0;
    *out_s = (dev >= 0 && st == HB_OK) ? dev : t1 - t0;
    return st;
}

/* One call of the op through the mode's data path. ph[] receives each phase in seconds. */
static hb_status call_once(run_ctx *x, double ph[HB_PH_COUNT], double *host_compute)
{
    const hb_case *c = x->c;
    hb_status st = HB_OK;
    memset(ph, 0, sizeof(double) * HB_PH_COUNT);
    double t_start = hb_now(), t0;
    int resident = c->mode == HB_MODE_RESIDENT;
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
        ph[HB_PH_CONVERT_IN] = (c->mode == HB_MODE_CONVERT || x->h32[0]) ? hb_now() - t0 : 0;
        if (x->device) {
            t0 = hb_now();
            PHASE_BEGIN(1);
            for (int i = 0; i < x->nin && st == HB_OK; i++) st = x->inst->ops->upload(x->inst, &x->in[i]);
            hb_status s2 = phase_end(x, 1, t0, &ph[HB_PH_H2D], NULL);
            if (st != HB_OK || s2 != HB_OK) return st != HB_OK ? st : s2;
        }
    }
    /* the compute starts hot or cold by one rule in every mode (prepare.h); its time is no phase's */
    hb_buf *ins[HB_MAX_INPUTS] = {&x->in[0], &x->in[1], &x->in[2]};
    double prep = 0;
    st = hb_compute_prepare(x->inst, x->o->cold, c, ins, &x->out, &x->prep, &prep);
    if (st != HB_OK) return st;
    t0 = hb_now();
    PHASE_BEGIN(x->device);
    st = x->inst->ops->run(x->inst, c, ins, &x->out);
    hb_status s3 = phase_end(x, x->device, t0, &ph[HB_PH_COMPUTE], host_compute);
    if (st != HB_OK) return st;
    if (s3 != HB_OK) return s3;
    if (c->mode == HB_MODE_CONVERT_DEVICE) {
        double cp = 0, cv = 0;
        st = x->inst->ops->download_f64(x->inst, &x->out, x->o64, x->nout, &cp, &cv);
        if (st != HB_OK) return st;
        ph[HB_PH_D2H] = cp;
        ph[HB_PH_CONVERT_OUT] = cv;
    } else if (!resident) {
        if (x->device) {
            t0 = hb_now();
            PHASE_BEGIN(1);
            st = x->inst->ops->download(x->inst, &x->out);
            hb_status s4 = phase_end(x, 1, t0, &ph[HB_PH_D2H], NULL);
            if (st != HB_OK || s4 != HB_OK) return st != HB_OK ? st : s4;
        }
        t0 = hb_now();
        if (c->mode == HB_MODE_CONVERT) hb_convert(x->o64, HB_ELEM_F64, x->out.host, x->el, x->nout);
        else if (x->o32) hb_convert(x->o32, HB_ELEM_F32, x->out.host, x->el, x->nout);
        ph[HB_PH_CONVERT_OUT] = (c->mode == HB_MODE_CONVERT || x->o32) ? hb_now() - t0 : 0;
    }
    ph[HB_PH_TOTAL] = hb_now() - t_start - prep;
    return HB_OK;
}

/* Fill the output (host and, for device backends, device memory) with NaN in the device dtype. */
static hb_status poison_output(run_ctx *x)
{
    size_t es = hb_elem_size(x->el);
    if (es == 4) { float *p = x->out.host; for (size_t i = 0; i < x->nout; i++) p[i] = NAN; }
    else { uint16_t *p = x->out.host; uint16_t nanbits = x->el == HB_ELEM_F16 ? 0x7E00 : 0x7FC0; for (size_t i = 0; i < x->nout; i++) p[i] = nanbits; }
    if (x->o64) for (size_t i = 0; i < x->nout; i++) x->o64[i] = NAN;
    if (x->o32) for (size_t i = 0; i < x->nout; i++) x->o32[i] = NAN;
    if (x->device && x->out.route != HB_ROUTE_MAPPED) return x->inst->ops->upload(x->inst, &x->out);
    return HB_OK;
}

/* ||out - ref|| / ||ref|| over the reference's computed (finite) elements; every output element must
 * be finite. Reads the output from where the mode leaves it (f64 tensor, f32 tensor or buffer). */
static double rel_error(run_ctx *x, const double *ref, long long *nonfinite, double *verified_fraction)
{
    double *o = malloc(x->nout * sizeof *o);
    if (!o) return INFINITY;
    if (x->c->mode == HB_MODE_CONVERT || x->c->mode == HB_MODE_CONVERT_DEVICE) memcpy(o, x->o64, x->nout * sizeof *o);
    else if (x->o32 && x->c->mode != HB_MODE_RESIDENT) hb_convert(o, HB_ELEM_F64, x->o32, HB_ELEM_F32, x->nout);
    else hb_convert(o, HB_ELEM_F64, x->out.host, x->el, x->nout);
    double num = 0, den = 0;
    long long bad = 0, checked = 0;
    for (size_t i = 0; i < x->nout; i++) {
        if (!isfinite(o[i])) { bad++; continue; }
        if (isnan(ref[i])) continue;
        double d = o[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        checked++;
    }
    free(o);
    *nonfinite = bad;
    *verified_fraction = x->nout ? (double)checked / (double)x->nout : 0;
    if (bad) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The reference cache: inputs and reference output of the last workload item seen. */
typedef struct ref_cache {
    int item;
    int nin;
    double *in[HB_MAX_INPUTS];
    double *out;
    int64_t row_step;
} ref_cache;

static void ref_cache_free(ref_cache *r)
{
    for (int i = 0; i < HB_MAX_INPUTS; i++) { free(r->in[i]); r->in[i] = NULL; }
    free(r->out);
    r->out = NULL;
    r->item = -1;
}

static hb_status ref_cache_get(ref_cache *r, const hb_case *c, int item, unsigned long long seed)
{
    if (r->item == item && r->out) return HB_OK;
    ref_cache_free(r);
    const hb_op_info *info = hb_op_get(c->op);
    r->nin = info->ninputs;
    for (int i = 0; i < r->nin; i++) {
        size_t n = (size_t)hb_op_input_elems(c->op, &c->shape, i);
        r->in[i] = malloc(n * sizeof(double));
        if (!r->in[i]) { ref_cache_free(r); return HB_ENOMEM; }
        hb_fill_random(r->in[i], n, seed, (unsigned long long)item * 8 + (unsigned long long)i);
    }
    size_t no = (size_t)hb_op_output_elems(c->op, &c->shape);
    r->out = malloc(no * sizeof(double));
    if (!r->out) { ref_cache_free(r); return HB_ENOMEM; }
    /* The reference is f64 plain C: subsample rows beyond ~4 GFLOP so that verifying a GPU-sized case
     * takes seconds, not minutes. */
    r->row_step = hb_ref_row_step(c, 4e9);
    hb_status st = hb_ref_compute(c, (const double *const *)r->in, r->out, r->row_step);
    if (st != HB_OK) { ref_cache_free(r); return st; }
    r->item = item;
    return HB_OK;
}

/* Measured ceilings of the current instance. */
typedef struct ceilings { hb_ceiling v[HB_MAX_CEILINGS]; int n; } ceilings;

static double ceiling_get(const ceilings *cl, const char *name)
{
    for (int i = 0; i < cl->n; i++)
        if (!strcmp(cl->v[i].name, name)) return cl->v[i].value;
    return NAN;
}

json_t *hb_timer_agreement(double host_s, double device_s, double enqueue_s)
{
    double diff = device_s > 0 ? (host_s - device_s) / device_s : (double)NAN;
    int agree = fabs(diff) <= HB_TIMER_AGREE;
    json_t *o = json_pack("{s:f,s:f,s:f,s:b}", "host_s", host_s, "device_s", device_s, "diff", diff, "agree", agree);
    if (isfinite(enqueue_s)) json_object_set_new(o, "host_enqueue_s", json_real(enqueue_s));
    if (agree) return o;
    char why[256];
    double rest = host_s - device_s - (isfinite(enqueue_s) ? enqueue_s : 0);
    if (device_s < HB_TIMER_MIN_S)
        snprintf(why, sizeof why, "device time %.1f us is under %.0f us: the host timer's launch and synchronization "
                 "latency (%.1f us here) is a large share of it", device_s * 1e6, HB_TIMER_MIN_S * 1e6, (host_s - device_s) * 1e6);
    else if (isfinite(enqueue_s) && fabs(rest) <= HB_TIMER_AGREE * device_s + HB_TIMER_SYNC_S)
        snprintf(why, sizeof why, "the host timer includes %.1f us of host-side library calls before the device work starts "
                 "(the device timer starts at the first launch); without them the timers agree", enqueue_s * 1e6);
    else
        snprintf(why, sizeof why, "unexplained: host exceeds device by %.1f us (%.1f%%)%s", (host_s - device_s) * 1e6, 100 * diff,
                 isfinite(enqueue_s) ? " beyond the host-side enqueue time" : "");
    json_object_set_new(o, "why", json_string(why));
    json_object_set_new(o, "explained", json_boolean(strncmp(why, "unexplained", 11) != 0));
    return o;
}

static json_t *samples_json(const double *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(s[i]));
    return a;
}

/* Measure case c on inst. Returns a new "case" record (never NULL except on allocation failure).
 * *st_out gets the case status. */
static json_t *measure_case(hb_instance *inst, const hb_case *c, int item, const char *skip, const hb_options *o,
                            ref_cache *rc, const ceilings *cl, hb_status *st_out)
{
    char reason[512] = "";
    if (skip && skip[0]) { *st_out = HB_ESKIP; return hb_case_status_record(c, inst->name, HB_ESKIP, skip); }
    /* the chain is the driver's: each of its steps is checked against supports() in chain.c */
    hb_status st = c->op == HB_OP_CHAIN ? HB_OK : inst->ops->supports(inst, c, reason, sizeof reason);
    if (st != HB_OK) { *st_out = HB_ESKIP; return hb_case_status_record(c, inst->name, HB_ESKIP, reason[0] ? reason : "unsupported"); }
    double gflop = hb_op_flops(c->op, &c->shape) / 1e9;
    if (!strcmp(inst->ops->type, "cpu-ref") && gflop > o->ref_max_gflop && !o->verify_only) {
        snprintf(reason, sizeof reason, "cpu-ref is the plain-C reference: not timed above %.3g GFLOP per call (this case: %.3g; --ref-max-gflop)",
                 o->ref_max_gflop, gflop);
        *st_out = HB_ESKIP;
        return hb_case_status_record(c, inst->name, HB_ESKIP, reason);
    }
    hb_rss_reset();
    if (c->op == HB_OP_CHAIN) return hb_chain_measure(inst, c, o, cl->v, cl->n, st_out);
    st = ref_cache_get(rc, c, item, o->seed);
    if (st != HB_OK) {
        *st_out = st == HB_ENOMEM ? HB_ENOMEM : HB_EINVAL;
        return hb_case_status_record(c, inst->name, *st_out, "reference computation failed (out of host memory?)");
    }
    int64_t mem_before = -1, dfree = -1, dtotal = -1;
    if (inst->ops->mem_info) inst->ops->mem_info(inst, &mem_before, &dfree, &dtotal);
    run_ctx x;
    st = ctx_init(&x, inst, c, o, rc->in, reason, sizeof reason);
    if (st != HB_OK) {
        ctx_free(&x);
        *st_out = st;
        return hb_case_status_record(c, inst->name, st, reason);
    }
    int64_t mem_after = -1;
    if (inst->ops->mem_info) inst->ops->mem_info(inst, &mem_after, &dfree, &dtotal);
    json_t *rec = hb_case_record(c, inst->name);
    double ph[HB_PH_COUNT], hc;
    double tol = hb_op_tolerance(c->op, &c->shape, c->dtype);
    double rel = NAN, vfrac = 0;
    long long nonfinite = 0;
    int warmups = 0;
    double *samp[HB_PH_COUNT] = {0};
    double *hostc = NULL;
    size_t ns = 0;
    int ci_met = 0;
    int max_s = o->verify_only ? 1 : o->max_samples;
    int nwin = o->verify_only ? 1 : o->repetitions;
    size_t nsw[HB_MAX_REPETITIONS] = {0};
    double wmed[HB_MAX_REPETITIONS] = {0};
    int best = 0;
    double ck[4] = {NAN, NAN, NAN, NAN}; /* host clock (GHz) before / after sampling: slowest, fastest CPU */
    for (int p = 0; p < HB_PH_COUNT; p++) samp[p] = calloc((size_t)max_s * (size_t)nwin, sizeof(double));
    hostc = calloc((size_t)max_s * (size_t)nwin, sizeof(double));
    if (!samp[HB_PH_COUNT - 1] || !hostc || !samp[0]) { st = HB_ENOMEM; snprintf(reason, sizeof reason, "sample arrays"); goto done; }

    /* 1. verification run on a poisoned output (also the first warm-up: JIT, handles, page faults) */
    if (c->mode == HB_MODE_RESIDENT) {
        /* resident: the inputs cross once, before sampling (converted to the device dtype first) */
        if (x.h32[0])
            for (int i = 0; i < x.nin; i++) hb_convert(x.in[i].host, x.el, x.h32[i], HB_ELEM_F32, x.nel[i]);
        for (int i = 0; i < x.nin && x.device && st == HB_OK; i++) st = inst->ops->upload(inst, &x.in[i]);
        if (st != HB_OK) { snprintf(reason, sizeof reason, "upload failed"); goto done; }
    }
    st = poison_output(&x);
    if (st == HB_OK) st = call_once(&x, ph, &hc);
    if (st == HB_OK && c->mode == HB_MODE_RESIDENT && x.device) st = inst->ops->download(inst, &x.out);
    warmups++;
    if (st != HB_OK) { snprintf(reason, sizeof reason, "run failed: %s", hb_status_name(st)); goto done; }
    rel = rel_error(&x, rc->out, &nonfinite, &vfrac);
    /* 2. warm-up: at least one more call, up to 10% of the budget */
    if (!o->verify_only) {
        double tw = hb_now();
        do {
            st = call_once(&x, ph, &hc);
            warmups++;
        } while (st == HB_OK && hb_now() - tw < 0.1 * o->budget_s && warmups < 20);
        if (st != HB_OK) { snprintf(reason, sizeof reason, "run failed during warm-up: %s", hb_status_name(st)); goto done; }
    }
    /* 3. sampling until the median's CI is tight enough or the budget is spent, in `repetitions`
     * windows separated in time (each with budget/repetitions). The window with the lowest median
     * total is kept: interference on a shared machine only ever adds time, so the best window is the
     * most robust estimate (Chen & Revels, "Robust benchmarking in noisy environments", 2016, the
     * estimator of Julia's BenchmarkTools); every window's median is recorded beside it. */
    if (!o->verify_only) hb_clock_probe(&ck[0], &ck[1]);
    for (int win = 0; win < nwin; win++) {
        double *ws[HB_PH_COUNT];
        for (int p = 0; p < HB_PH_COUNT; p++) ws[p] = samp[p] + (size_t)win * (size_t)max_s;
        double *wh = hostc + (size_t)win * (size_t)max_s;
        double budget = o->budget_s / nwin;
        size_t n = 0;
        int met = 0;
        if (win > 0) usleep(20000); /* separate the windows in time */
        double t_begin = hb_now();
        for (;;) {
            st = call_once(&x, ph, &hc);
            if (st != HB_OK) { snprintf(reason, sizeof reason, "run failed while sampling: %s", hb_status_name(st)); goto done; }
            for (int p = 0; p < HB_PH_COUNT; p++) ws[p][n] = ph[p];
            wh[n] = hc;
            n++;
            if ((int)n >= max_s) break;
            if ((int)n >= o->min_samples && (n < 64 || n % 8 == 0)) {
                hb_stats s;
                hb_stats_compute(ws[HB_PH_TOTAL], n, &s);
                if (s.median > 0 && (s.ci_hi - s.ci_lo) / 2 <= o->ci_target * s.median) { met = 1; break; }
            }
            if ((int)n >= o->min_samples && hb_now() - t_begin > budget) break;
            /* a single sample longer than the budget: stop at min_samples anyway */
            if ((int)n >= 3 && hb_now() - t_begin > 4 * budget && ph[HB_PH_TOTAL] > budget) break;
        }
        hb_stats s;
        hb_stats_compute(ws[HB_PH_TOTAL], n, &s);
        nsw[win] = n;
        wmed[win] = s.median;
        if (win == 0 || s.median < wmed[best]) { best = win; ci_met = met; }
    }
    /* keep the best window's samples at the front */
    ns = nsw[best];
    if (best > 0) {
        for (int p = 0; p < HB_PH_COUNT; p++) memmove(samp[p], samp[p] + (size_t)best * (size_t)max_s, ns * sizeof(double));
        memmove(hostc, hostc + (size_t)best * (size_t)max_s, ns * sizeof(double));
    }
    hb_clock_probe(&ck[2], &ck[3]);
    /* 4. check the last sample's output too (STREAM validates after timing) */
    if (c->mode == HB_MODE_RESIDENT && x.device) st = inst->ops->download(inst, &x.out);
    if (st == HB_OK) {
        double vf2;
        long long nf2;
        double rel2 = rel_error(&x, rc->out, &nf2, &vf2);
        if (!(rel2 <= rel)) rel = rel2;
        if (nf2 > nonfinite) nonfinite = nf2;
    }
done:
    json_object_set_new(rec, "ci_target", json_real(o->ci_target));
    json_object_set_new(rec, "warmup_runs", json_integer(warmups));
    if (x.prep.calls && !o->cold)
        json_object_set_new(rec, "settle_runs", json_real((double)x.prep.runs / (double)x.prep.calls));
    if (nwin > 1 && st == HB_OK) {
        json_t *wm = json_array();
        for (int w = 0; w < nwin; w++) json_array_append_new(wm, json_real(wmed[w]));
        json_object_set_new(rec, "repetitions", json_integer(nwin));
        json_object_set_new(rec, "window_medians", wm);
        json_object_set_new(rec, "best_window", json_integer(best));
    }
    if (st == HB_OK) {
        hb_stats sp[HB_PH_COUNT];
        json_t *phases = json_object();
        for (int p = 0; p < HB_PH_COUNT; p++) {
            hb_stats_compute(samp[p], ns, &sp[p]);
            json_object_set_new(phases, hb_phase_names[p], hb_stats_json(&sp[p]));
        }
        json_object_set_new(rec, "phases", phases);
        json_object_set_new(rec, "samples", json_pack("{s:o,s:o}", "total", samples_json(samp[HB_PH_TOTAL], ns),
                                                      "compute", samples_json(samp[HB_PH_COMPUTE], ns)));
        hb_stats hs = {0};
        int two_timers = x.device && inst->ops->timer_end;
        if (two_timers) {
            hb_stats_compute(hostc, ns, &hs);
            json_object_set_new(rec, "host_compute", hb_stats_json(&hs));
        }
        json_object_set_new(rec, "ci_met", json_boolean(ci_met || o->verify_only));
        if (isfinite(ck[0]) && isfinite(ck[2]))
            json_object_set_new(rec, "host_clock_ghz",
                                json_pack("{s:f,s:f,s:[f,f],s:[f,f]}", "min", fmin(ck[0], ck[2]), "max", fmax(ck[1], ck[3]),
                                          "before", ck[0], ck[1], "after", ck[2], ck[3]));
        double flops = hb_op_flops(c->op, &c->shape), bytes = hb_op_bytes(c->op, &c->shape, hb_dtype_size(c->dtype));
        double tc = sp[HB_PH_COMPUTE].median, tt = sp[HB_PH_TOTAL].median;
        double gf = tc > 0 ? flops / tc / 1e9 : 0, gb = tc > 0 ? bytes / tc / 1e9 : 0;
        json_object_set_new(rec, "gflops", json_real(gf));
        json_object_set_new(rec, "gbps", json_real(gb));
        json_object_set_new(rec, "gflops_total", json_real(tt > 0 ? flops / tt / 1e9 : 0));
        json_object_set_new(rec, "gbps_total", json_real(tt > 0 ? bytes / tt / 1e9 : 0));
        char cname[48];
        if (hb_op_get(c->op)->compute_bound) snprintf(cname, sizeof cname, "peak_gflops_%s", hb_dtype_name(c->dtype));
        else snprintf(cname, sizeof cname, "copy_gbps");
        double cv = ceiling_get(cl, cname);
        json_object_set_new(rec, "ceiling", json_string(cname));
        json_object_set_new(rec, "ceiling_value", isnan(cv) ? json_null() : json_real(cv));
        double frac = (isnan(cv) || cv <= 0) ? (double)NAN : (hb_op_get(c->op)->compute_bound ? gf : gb) / cv;
        json_object_set_new(rec, "fraction", isnan(frac) ? json_null() : json_real(frac));
        json_object_set_new(rec, "rel_err", isfinite(rel) ? json_real(rel) : json_string("inf"));
        json_object_set_new(rec, "tolerance", json_real(tol));
        json_object_set_new(rec, "verified_fraction", json_real(vfrac));
        if (!(rel <= tol)) {
            st = HB_EWRONG;
            if (nonfinite) snprintf(reason, sizeof reason, "%lld output elements are NaN/Inf (unwritten or overflow)", nonfinite);
            else snprintf(reason, sizeof reason, "relative error %.3g over tolerance %.3g", rel, tol);
        }
        if (inst->ops->case_info) {
            char buf[2048];
            if (inst->ops->case_info(inst, c, buf, sizeof buf) == HB_OK) {
                json_t *e = json_loads(buf, 0, NULL);
                if (e) json_object_set_new(rec, "extra", e);
            }
        }
        if (two_timers) {
            json_t *enq = json_object_get(json_object_get(rec, "extra"), "host_enqueue_s");
            json_t *ta = hb_timer_agreement(hs.median, sp[HB_PH_COMPUTE].median, json_is_number(enq) ? json_number_value(enq) : (double)NAN);
            json_object_set_new(rec, "timer_disagreement", json_boolean(!json_is_true(json_object_get(ta, "agree"))));
            json_object_set_new(rec, "timer_agreement", ta);
        }
    }
    {
        long long rss = hb_rss_peak();
        json_t *mem = json_pack("{s:I,s:I,s:I,s:I}", "host_bytes", (json_int_t)x.host_bytes, "staging_bytes",
                                (json_int_t)x.staging_bytes, "device_bytes",
                                (json_int_t)(mem_after >= 0 && mem_before >= 0 && x.device ? mem_after - mem_before : x.device_bytes),
                                "peak_rss_bytes", (json_int_t)rss);
        if (dtotal >= 0) {
            json_object_set_new(mem, "device_free_bytes", json_integer(dfree));
            json_object_set_new(mem, "device_total_bytes", json_integer(dtotal));
        }
        json_object_set_new(rec, "mem", mem);
    }
    json_object_set_new(rec, "status", json_string(hb_status_name(st)));
    if (st != HB_OK) json_object_set_new(rec, "reason", json_string(reason));
    for (int p = 0; p < HB_PH_COUNT; p++) free(samp[p]);
    free(hostc);
    ctx_free(&x);
    *st_out = st;
    return rec;
}

/* ---------- the child process of one backend type ---------- */
typedef struct child_args {
    const hb_backend_entry *entry;
    const hb_options *o;
    const case_list *cases;
    int fd;            /* results file */
    int pipe_w;        /* progress to the parent */
    int start_inst, start_case;
    int write_backend_records;
} child_args;

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && write(fd, buf, (size_t)n) < 0) { /* parent gone: nothing to do */ }
}

static int instance_selected(const hb_options *o, const hb_instance *inst)
{
    if (!o->backends) return 1;
    return list_has(o->backends, inst->name) || list_has(o->backends, inst->ops->type);
}

/* Whether instance inst runs case j of the list; NULL, or why not (a reason shared by a whole class
 * of cases, reported when an instance is left with none). Host-memory backends (cpu-ref, cpu) have
 * one route, their own memory, recorded as `pageable`: they run each case once, at its item's first
 * requested route (so `--route pinned` still measures them), and have no resident mode (their data
 * never leaves host memory: f32 is that path). */
static const char *case_refusal(const hb_instance *inst, const case_list *l, size_t j)
{
    const hb_case *c = &l->v[j];
    if (inst->host_memory && c->mode == HB_MODE_RESIDENT)
        return "a host-memory backend has no resident mode (its data never leaves host memory; f32 is that path)";
    if (inst->host_memory && !l->host_route[j]) return "a host-memory backend runs each case once, at its one route";
    /* convert-device exists only where the backend converts on the device (upload_f64 hook) */
    if (c->mode == HB_MODE_CONVERT_DEVICE && (!inst->ops->upload_f64 || !inst->ops->download_f64))
        return "convert-device needs a backend that converts on the device (upload_f64/download_f64 hooks)";
    if (c->mode == HB_MODE_CONVERT_DEVICE && c->op == HB_OP_CHAIN) return "the decoder-layer chain has no convert-device mode";
    return NULL;
}
static int case_applies(const hb_instance *inst, const case_list *l, size_t j) { return case_refusal(inst, l, j) == NULL; }

static int child_main(const child_args *a)
{
    hb_instance inst[MAX_INST];
    char reason[512];
    int n = hb_backend_open(a->entry, inst, MAX_INST, reason, sizeof reason);
    if (n == 0) {
        if (a->write_backend_records) {
            json_t *r = json_pack("{s:s,s:s,s:b,s:s}", "type", "backend", "backend", a->entry->type, "available", 0,
                                  "reason", reason);
            hb_record_write(a->fd, r);
        }
        say(a->pipe_w, "U %s\n", reason);
        return 0;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (i < a->start_inst || !instance_selected(a->o, &inst[i])) continue;
        size_t total = 0;
        const char *why_none = "no case of the workloads matches the selection (--op, --filter, --quick)";
        for (size_t j = 0; j < a->cases->n; j++) {
            const char *r = case_refusal(&inst[i], a->cases, j);
            if (!r) total++;
            else why_none = r;
        }
        say(a->pipe_w, "T %d %zu %s\n", i, total, inst[i].name);
        if (!total) say(a->pipe_w, "N %d %s: none of the requested cases: %s\n", i, inst[i].name, why_none);
        ceilings cl = {.n = 0};
        if (!a->o->verify_only || a->write_backend_records) {
            say(a->pipe_w, "C %d\n", i);
            if (inst[i].ops->ceilings) cl.n = inst[i].ops->ceilings(&inst[i], cl.v, HB_MAX_CEILINGS);
            else if (inst[i].host_memory && !a->o->verify_only) cl.n = hb_cpu_ceilings(cl.v, HB_MAX_CEILINGS);
        }
        if (a->write_backend_records || i > a->start_inst) {
            json_t *r = json_pack("{s:s,s:s,s:b,s:s,s:b}", "type", "backend", "backend", inst[i].name, "available", 1,
                                  "description", inst[i].description, "host_memory", inst[i].host_memory);
            json_t *ca = json_array();
            for (int k = 0; k < cl.n; k++)
                json_array_append_new(ca, json_pack("{s:s,s:f,s:s,s:s}", "name", cl.v[k].name, "value", cl.v[k].value,
                                                    "unit", cl.v[k].unit, "how", cl.v[k].how));
            json_object_set_new(r, "ceilings", ca);
            if (inst[i].ops->describe) {
                char buf[8192];
                if (inst[i].ops->describe(&inst[i], buf, sizeof buf) == HB_OK) {
                    json_t *d = json_loads(buf, 0, NULL);
                    if (d) json_object_set_new(r, "info", d);
                }
            }
            if (hb_record_write(a->fd, r) != HB_OK) return HB_EXIT_IO;
        }
        ref_cache rcache = {.item = -1};
        size_t j0 = (i == a->start_inst) ? (size_t)a->start_case : 0;
        for (size_t j = j0; j < a->cases->n; j++) {
            if (!case_applies(&inst[i], a->cases, j)) continue;
            hb_case hc = a->cases->v[j];
            if (inst[i].host_memory) hc.route = HB_ROUTE_PAGEABLE; /* its one route (case_refusal) */
            const hb_case *c = &hc;
            say(a->pipe_w, "B %d %zu\n", i, j);
            /* fault injection for the test suite: HB_INJECT_CRASH=TEXT kills the child inside every case
             * whose key contains TEXT, to check that the run records `crashed` and goes on */
            const char *inject = getenv("HB_INJECT_CRASH");
            if (inject && *inject) {
                char key[512];
                if (strstr(hb_case_key(c, inst[i].name, key, sizeof key), inject)) raise(SIGSEGV);
            }
            hb_status st;
            json_t *rec = measure_case(&inst[i], c, a->cases->item[j], a->cases->items->v[a->cases->item[j]].skip, a->o,
                                       &rcache, &cl, &st);
            json_t *rec_copy_rel = json_pack("{s:O?}", "rel_err", rec ? json_object_get(rec, "rel_err") : NULL);
            if (!rec || hb_record_write(a->fd, rec) != HB_OK) { json_decref(rec_copy_rel); rc = HB_EXIT_IO; break; }
            json_t *re = json_object_get(rec_copy_rel, "rel_err");
            say(a->pipe_w, "E %d %zu %s %.3g\n", i, j, hb_status_name(st), json_is_number(re) ? json_number_value(re) : -1.0);
            json_decref(rec_copy_rel);
        }
        ref_cache_free(&rcache);
        inst[i].ops->close(&inst[i]);
        if (rc) break;
    }
    return rc;
}

/* ---------- the parent ---------- */
typedef struct progress {
    int tty;
    double t0;
    size_t done, total_known;
    int counts[HB_STATUS_COUNT];
    json_t *backends;  /* every requested backend: {instance or type: {"cases": n} or {"cases": 0, "why"}} */
} progress;

static void fmt_time(double s, char *buf, size_t len)
{
    if (s < 0 || !isfinite(s)) { snprintf(buf, len, "--:--"); return; }
    long t = (long)s;
    if (t >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static void progress_line(progress *p, const char *inst, const hb_case *c, size_t i, size_t n)
{
    if (!p->tty) return;
    double el = hb_now() - p->t0;
    char e[32], r[32], sh[128];
    fmt_time(el, e, sizeof e);
    fmt_time(p->done ? el / (double)p->done * (double)(p->total_known - p->done) : -1, r, sizeof r);
    hb_shape_format(c->op, &c->shape, sh, sizeof sh);
    fprintf(stderr, "\r\033[K[%s] %s %.40s %s | case %zu/%zu | elapsed %s | remaining ~%s", inst,
            hb_op_get(c->op)->name, sh, hb_mode_name(c->mode), i, n, e, r);
    fflush(stderr);
}

/* SIGINT/SIGTERM in the parent: stop after killing the child in flight, keep what was measured. */
static volatile sig_atomic_t g_stop;
static void on_stop_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* Key of a case record across passes: its "key" (hb_case_key) and its occurrence in the pass, so a
 * case listed twice in the workloads stays two records ("#2"), as compare matches them. seen counts
 * the keys of the current pass. Returns a new string, or NULL when out of memory. */
static char *record_key(json_t *r, json_t *seen)
{
    const char *k = json_string_value(json_object_get(r, "key"));
    if (!k) k = "";
    json_int_t n = json_integer_value(json_object_get(seen, k)) + 1;
    json_object_set_new(seen, k, json_integer(n));
    size_t len = strlen(k) + 24;
    char *out = malloc(len);
    if (out) snprintf(out, len, "%s#%lld", k, (long long)n);
    return out;
}

/* Precedence of a status when passes disagree: a wrong or crashed pass decides the merged record
 * (a wrong result is never hidden behind a faster pass); then timeouts, failures, out-of-memory. */
static int status_rank(const char *s)
{
    static const char *order[] = {"ok", "skipped", "no_resource", "failed", "timed_out", "crashed", "wrong"};
    for (int i = 6; i >= 0; i--)
        if (s && !strcmp(s, order[i])) return i;
    return 3; /* unknown non-ok status: as a failure */
}

static double rec_median(json_t *r, const char *phase)
{
    json_t *m = json_object_get(json_object_get(json_object_get(r, "phases"), phase), "median");
    return json_is_number(m) ? json_number_value(m) : (double)NAN;
}

static double rec_total_median(json_t *r)
{
    return rec_median(r, "total");
}

/* Append this pass's medians (total and compute; null when the pass is not ok) to pm, after
 * padding with nulls for the passes before `pass` that did not run the case. */
static void pass_medians_add(json_t *pm, json_t *r, int pass, int ok)
{
    static const char *ph[2] = {"total", "compute"};
    for (int i = 0; i < 2; i++) {
        json_t *a = json_object_get(pm, ph[i]);
        if (!a) { a = json_array(); json_object_set_new(pm, ph[i], a); }
        while ((int)json_array_size(a) < pass) json_array_append_new(a, json_null());
        double m = rec_median(r, ph[i]);
        json_array_append_new(a, ok && isfinite(m) ? json_real(m) : json_null());
    }
}

/* A backend record of pass p: the first one of an instance is kept (in order); later passes' ceilings
 * raise its values to the best measured in any pass (ceilings are best-of figures, and the case
 * records keep their best pass: both estimators then cover the same host states). The record is
 * indexed under "backend|<name>". */
static void merge_backend(json_t *order, json_t *index, json_t *r, int p)
{
    const char *name = json_string_value(json_object_get(r, "backend"));
    if (!name) return;
    char key[300];
    snprintf(key, sizeof key, "backend|%s", name);
    json_t *slot = json_object_get(index, key);
    if (!slot) {
        json_object_set_new(index, key, json_integer((json_int_t)json_array_size(order)));
        json_array_append(order, r);
        return;
    }
    json_t *old = json_array_get(order, (size_t)json_integer_value(slot));
    json_t *oc = json_object_get(old, "ceilings"), *nc = json_object_get(r, "ceilings");
    for (size_t i = 0; i < json_array_size(oc); i++) {
        json_t *c = json_array_get(oc, i);
        const char *cn = json_string_value(json_object_get(c, "name"));
        double v = json_number_value(json_object_get(c, "value"));
        for (size_t k = 0; k < json_array_size(nc) && cn; k++) {
            json_t *d = json_array_get(nc, k);
            const char *dn = json_string_value(json_object_get(d, "name"));
            double w = json_number_value(json_object_get(d, "value"));
            if (dn && !strcmp(dn, cn) && w > v) {
                json_object_set_new(c, "value", json_real(w));
                v = w;
            }
        }
        json_object_set_new(c, "passes", json_integer(p + 1));
    }
}

/* A merged case record: its ceiling_value and fraction from the merged backend ceilings (the
 * fraction is gflops or gbps over the ceiling, as measure_case computes it). */
static void refraction(json_t *index, json_t *order, json_t *r)
{
    const char *be = json_string_value(json_object_get(r, "backend"));
    const char *cn = json_string_value(json_object_get(r, "ceiling"));
    if (!be || !cn) return;
    char key[300];
    snprintf(key, sizeof key, "backend|%s", be);
    json_t *slot = json_object_get(index, key);
    if (!slot) return;
    json_t *ca = json_object_get(json_array_get(order, (size_t)json_integer_value(slot)), "ceilings");
    for (size_t i = 0; i < json_array_size(ca); i++) {
        json_t *c = json_array_get(ca, i);
        if (strcmp(json_string_value(json_object_get(c, "name")) ? json_string_value(json_object_get(c, "name")) : "", cn)) continue;
        double v = json_number_value(json_object_get(c, "value"));
        const char *bound = json_string_value(json_object_get(r, "bound")); /* as measure_case: compute-bound ops against GFLOP/s */
        double x = json_number_value(json_object_get(r, bound && !strcmp(bound, "compute") ? "gflops" : "gbps"));
        if (v > 0) {
            json_object_set_new(r, "ceiling_value", json_real(v));
            json_object_set_new(r, "fraction", json_real(x / v));
        }
        return;
    }
}

/* Merge the per-pass files into fd: backend records (merge_backend), then one record per case
 * in first-seen order: among passes that ran it, the worst status decides (status_rank); when all
 * are ok, the pass with the lowest total median is kept (interference only adds time: Chen &
 * Revels 2016), and every pass's medians are recorded (pass_medians: {"total": [...], "compute":
 * [...]}, seconds, null where the pass was not ok), with passes and best_pass (1-based). counts[] gets the merged statuses. Returns 0, or HB_EXIT_IO. */
static int merge_passes(int fd, const char *const *paths, int npass, int counts[HB_STATUS_COUNT], size_t *ncases)
{
    json_t *order = json_array(), *index = json_object();
    int rc = 0;
    for (int p = 0; p < npass && !rc; p++) {
        FILE *f = fopen(paths[p], "r");
        if (!f) continue;
        char *line = NULL;
        size_t cap = 0;
        json_t *seen = json_object();
        while (getline(&line, &cap, f) > 0) {
            json_t *r = json_loads(line, 0, NULL);
            if (!r) continue;
            const char *type = json_string_value(json_object_get(r, "type"));
            if (!type || strcmp(type, "case")) {
                if (type && !strcmp(type, "backend")) merge_backend(order, index, r, p);
                json_decref(r);
                continue;
            }
            double med = rec_total_median(r);
            const char *st = json_string_value(json_object_get(r, "status"));
            int ok = st && !strcmp(st, "ok");
            char *key = record_key(r, seen);
            if (!key) { json_decref(r); rc = HB_EXIT_IO; break; }
            json_t *slot = json_object_get(index, key);
            if (!slot) {
                json_t *meds = json_object();
                pass_medians_add(meds, r, p, ok);
                json_object_set_new(r, "pass_medians", meds);
                json_object_set_new(r, "best_pass", json_integer(p + 1));
                json_object_set_new(index, key, json_integer((json_int_t)json_array_size(order)));
                json_array_append_new(order, r);
            } else {
                size_t at = (size_t)json_integer_value(slot);
                json_t *old = json_array_get(order, at);
                json_t *meds = json_incref(json_object_get(old, "pass_medians"));
                pass_medians_add(meds, r, p, ok);
                const char *ost = json_string_value(json_object_get(old, "status"));
                int take = status_rank(st) > status_rank(ost) ||
                           (status_rank(st) == status_rank(ost) && isfinite(med) && med < rec_total_median(old));
                if (take) {
                    json_object_set(r, "pass_medians", meds);
                    json_object_set_new(r, "best_pass", json_integer(p + 1));
                    json_array_set(order, at, r);
                }
                json_decref(meds);
                json_decref(r);
            }
            free(key);
        }
        json_decref(seen);
        free(line);
        fclose(f);
    }
    for (size_t i = 0; i < json_array_size(order) && !rc; i++) {
        json_t *r = json_array_get(order, i);
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && !strcmp(type, "case")) {
            json_object_set_new(r, "passes", json_integer(npass));
            refraction(index, order, r);
            hb_status s = hb_status_from_name(json_string_value(json_object_get(r, "status")));
            if ((unsigned)s < HB_STATUS_COUNT) counts[s]++;
            (*ncases)++;
        }
        if (hb_record_write(fd, json_incref(r)) != HB_OK) rc = HB_EXIT_IO;
    }
    json_decref(order);
    json_decref(index);
    return rc;
}

/* Run one backend type in child processes until its case list is done. Returns 0, or HB_EXIT_IO. */
static int run_backend(const hb_backend_entry *e, const hb_options *o, const case_list *cases, int fd, progress *pg,
                       int *unavailable)
{
    *unavailable = 0;
    int start_inst = 0, start_case = 0, first = 1;
    char inst_names[MAX_INST][64];
    memset(inst_names, 0, sizeof inst_names);
    for (;;) {
        int pfd[2];
        if (pipe(pfd)) { perror("pipe"); return HB_EXIT_IO; }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return HB_EXIT_IO; }
        if (pid == 0) {
            close(pfd[0]);
            child_args a = {e, o, cases, fd, pfd[1], start_inst, start_case, first};
            _exit(child_main(&a));
        }
        close(pfd[1]);
        FILE *rp = fdopen(pfd[0], "r");
        char line[1024];
        int cur_inst = -1;
        long cur_case = -1;
        size_t inst_total = 0, inst_done = 0;
        double case_t0 = 0;
        int timed_out = 0, stopped = 0;
        for (;;) {
            struct pollfd pf = {pfd[0], POLLIN, 0};
            int pr = poll(&pf, 1, 1000); /* wake every second: progress line and the case time limit */
            if (g_stop) { kill(pid, SIGKILL); stopped = 1; }
            if (pr == 0) {
                if (cur_case >= 0 && hb_now() - case_t0 > o->case_timeout_s) { kill(pid, SIGKILL); timed_out = 1; }
                if (cur_case >= 0) progress_line(pg, inst_names[cur_inst], &cases->v[cur_case], inst_done + 1, inst_total);
                continue;
            }
            if (pr < 0 && errno == EINTR) continue;
            if (!fgets(line, sizeof line, rp)) break;
            int ii;
            size_t jj, tt;
            char name[256];
            if (sscanf(line, "T %d %zu %255s", &ii, &tt, name) == 3) {
                snprintf(inst_names[ii], sizeof inst_names[ii], "%.63s", name);
                if (!json_object_get(pg->backends, name))
                    json_object_set_new(pg->backends, name, json_pack("{s:I}", "cases", (json_int_t)tt));
                cur_inst = ii;
                inst_total = tt;
                if (ii == start_inst && !first) inst_done = 0; /* resumed: count restarts, fine */
                pg->total_known += first || ii != start_inst ? tt : 0;
                if (pg->tty) fprintf(stderr, "\r\033[K[%s] measuring ceilings...", name);
            } else if (sscanf(line, "B %d %zu", &ii, &jj) == 2) {
                cur_inst = ii;
                cur_case = (long)jj;
                case_t0 = hb_now();
                progress_line(pg, inst_names[ii], &cases->v[jj], inst_done + 1, inst_total);
            } else if (sscanf(line, "E %d %zu %255s", &ii, &jj, name) == 3) {
                hb_status s = hb_status_from_name(name);
                double rel = -1;
                { char t1[8], t2[32], t3[64]; sscanf(line, "%7s %31s %31s %63s %lf", t1, t2, t2, t3, &rel); }
                if (o->verify_only || (s != HB_OK && s != HB_ESKIP)) {
                    const hb_case *vc = &cases->v[jj];
                    char sh[160];
                    if (pg->tty) fprintf(stderr, "\r\033[K");
                    printf("%-12s %-9s %-48s %-8s %-8s %-5s %-11s rel_err %s%.2g\n", inst_names[ii], hb_op_get(vc->op)->name,
                           hb_shape_format(vc->op, &vc->shape, sh, sizeof sh), hb_mode_name(vc->mode), hb_route_name(vc->route),
                           hb_dtype_name(vc->dtype), name, rel < 0 ? "n/a " : "", rel < 0 ? 0.0 : rel);
                }
                if (s < HB_STATUS_COUNT) pg->counts[s]++;
                pg->done++;
                inst_done++;
                cur_case = -1;
            } else if (!strncmp(line, "U ", 2)) {
                *unavailable = 1;
                line[strcspn(line, "\n")] = 0;
                if (!json_object_get(pg->backends, e->type)) { /* once per run, not once per pass */
                    if (pg->tty) fprintf(stderr, "\r\033[K");
                    fprintf(stderr, "hybench: %s unavailable: %s\n", e->type, line + 2);
                    json_object_set_new(pg->backends, e->type, json_pack("{s:i,s:b,s:s}", "cases", 0, "available", 0, "why", line + 2));
                }
            } else if (sscanf(line, "N %d %255s", &ii, name) == 2) {
                /* "N <instance index> <name>: none of the requested cases: <why>" */
                line[strcspn(line, "\n")] = 0;
                name[strcspn(name, ":")] = 0;
                const char *msg = strchr(line + 2, ' ') + 1, *why = strstr(msg, ": none of the requested cases: ");
                json_t *b = json_object_get(pg->backends, name);
                if (b && why && !json_object_get(b, "why")) {
                    if (pg->tty) fprintf(stderr, "\r\033[K");
                    fprintf(stderr, "hybench: %s\n", msg);
                    json_object_set_new(b, "why", json_string(why + strlen(": none of the requested cases: ")));
                }
            }
        }
        fclose(rp);
        int wst = 0;
        waitpid(pid, &wst, 0);
        if (stopped || g_stop) return 0; /* interrupted: the case in flight is not recorded */
        if (cur_case < 0) {
            if (WIFEXITED(wst) && WEXITSTATUS(wst) == HB_EXIT_IO) return HB_EXIT_IO;
            if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
                fprintf(stderr, "\nhybench: %s child ended abnormally outside a case (status %d)\n", e->type, wst);
            return 0;
        }
        /* died inside case cur_case: record it and resume after it */
        const hb_case *c = &cases->v[cur_case];
        char reason[256];
        hb_status st = HB_ECRASH;
        if (timed_out) { st = HB_ETIMEOUT; snprintf(reason, sizeof reason, "killed after %.0f s (--case-timeout)", o->case_timeout_s); }
        else if (WIFSIGNALED(wst)) {
            int sig = WTERMSIG(wst);
            if (sig == SIGKILL) { st = HB_ENOMEM; snprintf(reason, sizeof reason, "child killed by SIGKILL (likely the out-of-memory killer)"); }
            else snprintf(reason, sizeof reason, "child died from signal %d (%s)", sig, strsignal(sig));
        } else snprintf(reason, sizeof reason, "child exited with status %d inside the case", WEXITSTATUS(wst));
        if (pg->tty) fprintf(stderr, "\r\033[K");
        fprintf(stderr, "hybench: %s: case %ld %s: %s\n", inst_names[cur_inst], cur_case, hb_status_name(st), reason);
        if (hb_record_write(fd, hb_case_status_record(c, inst_names[cur_inst], st, reason)) != HB_OK) return HB_EXIT_IO;
        pg->counts[st]++;
        pg->done++;
        start_inst = cur_inst;
        start_case = (int)cur_case + 1;
        first = 0;
    }
}

/* Expand workload items into cases (items outermost so that one reference serves all variants). */
static int expand(const hb_item_list *items, const hb_options *o, case_list *out)
{
    for (size_t i = 0; i < items->n; i++) {
        const hb_item *it = &items->v[i];
        const hb_op_info *info = hb_op_get(it->c.op);
        if (o->ops && !list_has(o->ops, info->name) && !list_has(o->ops, hb_family_name(info->family))) continue;
        if (o->quick && !it->c.quick) continue;
        unsigned dm = o->dtype_mask ? o->dtype_mask : it->dtype_mask ? it->dtype_mask : 1u << HB_F32;
        unsigned mm = o->mode_mask ? o->mode_mask : it->mode_mask ? it->mode_mask
                                                                     : (1u << HB_MODE_CONVERT) | (1u << HB_MODE_F32) | (1u << HB_MODE_RESIDENT) | (1u << HB_MODE_CONVERT_DEVICE);
        unsigned rm = o->route_mask ? o->route_mask : it->route_mask ? it->route_mask
                                                                       : (1u << HB_ROUTE_PAGEABLE) | (1u << HB_ROUTE_PINNED) | (1u << HB_ROUTE_MAPPED);
        if (o->quick_routes && (rm & o->quick_routes)) rm &= o->quick_routes;
        for (int d = 0; d < HB_DTYPE_COUNT; d++) {
            if (!(dm & (1u << d))) continue;
            for (int m = 0; m < HB_MODE_COUNT; m++) {
                if (!(mm & (1u << m))) continue;
                for (int r = 0; r < HB_ROUTE_COUNT; r++) {
                    if (!(rm & (1u << r))) continue;
                    /* resident keeps data on the device: one route is enough (the first allowed) */
                    if (m == HB_MODE_RESIDENT && (rm & ((1u << r) - 1))) continue;
                    hb_case c = it->c;
                    c.dtype = (hb_dtype)d;
                    c.mode = (hb_mode)m;
                    c.route = (hb_route)r;
                    if (o->filter) {
                        char key[512];
                        hb_case_key(&c, "", key, sizeof key);
                        if (!strstr(key, o->filter) && !strstr(c.name, o->filter)) continue;
                    }
                    if (case_push(out, &c, (int)i, !(rm & ((1u << r) - 1)))) return -1;
                }
            }
        }
    }
    return 0;
}

static const char *const default_workloads[] = {"workloads/default.ini", "workloads/tinyllama.ini", "workloads/resnet50.ini"};

static int run_common(int argc, char **argv, int verify)
{
    hb_options o = {.repetitions = 1, .passes = 1, .budget_s = 0.5, .ci_target = 0.02, .min_samples = 5, .max_samples = 300, .ref_max_gflop = 2,
                    .case_timeout_s = 600, .seed = 42, .verify_only = verify};
    const char *cmd = verify ? "verify" : "run";
    const char *batches[32];
    int nbatches = 0, bad = 0;
    enum { O_BACKEND = 256, O_OP, O_MODE, O_ROUTE, O_DTYPE, O_FILTER, O_QUICK, O_BATCH, O_BUDGET, O_CI, O_MINS, O_MAXS,
           O_COLD, O_REFMAX, O_TMO, O_REPS, O_PASSES, O_SEED, O_OUT, O_DRY, O_HELP };
    static const struct option lo[] = {
        {"backend", 1, 0, O_BACKEND}, {"op", 1, 0, O_OP}, {"mode", 1, 0, O_MODE}, {"route", 1, 0, O_ROUTE},
        {"dtype", 1, 0, O_DTYPE}, {"filter", 1, 0, O_FILTER}, {"quick", 0, 0, O_QUICK}, {"batch", 1, 0, O_BATCH},
        {"budget", 1, 0, O_BUDGET}, {"ci-target", 1, 0, O_CI}, {"min-samples", 1, 0, O_MINS},
        {"max-samples", 1, 0, O_MAXS}, {"cold", 0, 0, O_COLD}, {"ref-max-gflop", 1, 0, O_REFMAX},
        {"case-timeout", 1, 0, O_TMO}, {"repetitions", 1, 0, O_REPS}, {"passes", 1, 0, O_PASSES}, {"seed", 1, 0, O_SEED}, {"out", 1, 0, O_OUT}, {"dry-run", 0, 0, O_DRY},
        {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    /* join argv for the metadata */
    size_t jl = 16;
    for (int i = 0; i < argc; i++) jl += strlen(argv[i]) + 1;
    o.argv_joined = calloc(1, jl + 16);
    strcat(o.argv_joined, "hybench");
    for (int i = 0; i < argc; i++) { strcat(o.argv_joined, " "); strcat(o.argv_joined, argv[i]); }
    optind = 1;
    int ch;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_BACKEND: o.backends = optarg; break;
        case O_OP:
            o.ops = optarg;
            for (char *p = strdup(optarg), *tok = strtok(p, ","), *keep = p; tok || (free(keep), 0); tok = strtok(NULL, ",")) {
                int fam = 0;
                for (int f = 0; f < HB_FAM_COUNT; f++) fam |= !strcmp(tok, hb_family_name(f));
                if (hb_op_parse(tok) < 0 && !fam) { fprintf(stderr, "hybench %s: unknown op \"%s\" (option --op)\n", cmd, tok); bad = 1; }
            }
            break;
        case O_MODE: o.mode_mask = parse_mask(optarg, hb_mode_parse, "mode", &bad); break;
        case O_ROUTE: o.route_mask = parse_mask(optarg, hb_route_parse, "route", &bad); break;
        case O_DTYPE: o.dtype_mask = parse_mask(optarg, hb_dtype_parse, "dtype", &bad); break;
        case O_FILTER: o.filter = optarg; break;
        case O_QUICK: o.quick = 1; break;
        case O_BATCH: if (nbatches < 32) batches[nbatches++] = optarg; break;
        case O_BUDGET: o.budget_s = strtod(optarg, &end); if (*end || o.budget_s <= 0 || o.budget_s > 3600) { fprintf(stderr, "hybench: --budget wants seconds in (0, 3600]\n"); bad = 1; } break;
        case O_CI: o.ci_target = strtod(optarg, &end); if (*end || o.ci_target <= 0 || o.ci_target >= 1) { fprintf(stderr, "hybench: --ci-target wants a fraction in (0, 1)\n"); bad = 1; } break;
        case O_MINS: o.min_samples = (int)strtol(optarg, &end, 10); if (*end || o.min_samples < 1 || o.min_samples > 100000) { fprintf(stderr, "hybench: bad --min-samples\n"); bad = 1; } break;
        case O_MAXS: o.max_samples = (int)strtol(optarg, &end, 10); if (*end || o.max_samples < 1 || o.max_samples > 100000) { fprintf(stderr, "hybench: bad --max-samples\n"); bad = 1; } break;
        case O_COLD: o.cold = 1; break;
        case O_REFMAX: o.ref_max_gflop = strtod(optarg, &end); if (*end || o.ref_max_gflop < 0) { fprintf(stderr, "hybench: bad --ref-max-gflop\n"); bad = 1; } break;
        case O_TMO: o.case_timeout_s = strtod(optarg, &end); if (*end || o.case_timeout_s <= 0) { fprintf(stderr, "hybench: bad --case-timeout\n"); bad = 1; } break;
        case O_REPS: o.repetitions = (int)strtol(optarg, &end, 10); if (*end || o.repetitions < 1 || o.repetitions > HB_MAX_REPETITIONS) { fprintf(stderr, "hybench: --repetitions wants 1..%d\n", HB_MAX_REPETITIONS); bad = 1; } break;
        case O_PASSES: o.passes = (int)strtol(optarg, &end, 10); if (*end || o.passes < 1 || o.passes > HB_MAX_PASSES) { fprintf(stderr, "hybench: --passes wants 1..%d\n", HB_MAX_PASSES); bad = 1; } break;
        case O_SEED: o.seed = strtoull(optarg, &end, 10); if (*end) { fprintf(stderr, "hybench: bad --seed\n"); bad = 1; } break;
        case O_OUT: o.out = optarg; break;
        case O_DRY: o.dry_run = 1; break;
        case O_HELP: case 'h': usage(stdout, cmd); return HB_EXIT_OK;
        default: usage(stderr, cmd); return HB_EXIT_USAGE;
        }
    }
    if (o.quick) {
        /* --quick: a smaller per-case budget, cpu-ref timed only on small cases, and the pinned route
         * left out by default (pageable and zero-copy mapped remain), unless the options say otherwise */
        int has_budget = 0, has_ref = 0, has_reps = 0, has_passes = 0;
        for (int i = 1; i < argc; i++) {
            has_budget |= !strncmp(argv[i], "--budget", 8);
            has_ref |= !strncmp(argv[i], "--ref-max-gflop", 15);
            has_reps |= !strncmp(argv[i], "--repetitions", 13);
            has_passes |= !strncmp(argv[i], "--passes", 8);
        }
        if (!has_budget) o.budget_s = 0.2;
        /* quick runs gate merges: three passes over the case list in new processes, the best pass
         * kept per case (merge_passes); with --passes 1, three windows within the process instead */
        if (!has_passes) o.passes = 3;
        if (!has_reps) o.repetitions = o.passes > 1 ? 1 : 3;
        if (!has_ref) o.ref_max_gflop = 0.25;
        if (!o.route_mask) o.quick_routes = (1u << HB_ROUTE_PAGEABLE) | (1u << HB_ROUTE_MAPPED);
    }
    if (o.max_samples < o.min_samples) o.max_samples = o.min_samples;
    if (bad) return HB_EXIT_USAGE;
    /* backends named must exist */
    if (o.backends) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", o.backends);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
            if (!hb_backend_find(tok)) {
                fprintf(stderr, "hybench %s: unknown backend \"%s\" (option --backend); `hybench list` shows them\n", cmd, tok);
                return HB_EXIT_NO_BACKEND;
            }
    }
    /* workloads: every file parsed before anything runs */
    hb_item_list items = {0};
    char err[1024];
    char *wl[64];
    int nwl = 0;
    for (int i = optind; i < argc && nwl < 64; i++) wl[nwl++] = argv[i];
    if (nwl == 0 && nbatches == 0)
        for (size_t i = 0; i < sizeof default_workloads / sizeof default_workloads[0]; i++) wl[nwl++] = (char *)default_workloads[i];
    for (int i = 0; i < nwl; i++)
        if (hb_workload_load(wl[i], &items, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench %s: %s\n", cmd, err);
            return HB_EXIT_BAD_WORKLOAD;
        }
    for (int i = 0; i < nbatches; i++)
        if (hb_batch_load(batches[i], &items, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench %s: %s\n", cmd, err);
            return HB_EXIT_BAD_WORKLOAD;
        }
    case_list cases = {0};
    cases.items = &items;
    if (expand(&items, &o, &cases)) { fprintf(stderr, "hybench: out of memory\n"); return HB_EXIT_IO; }
    if (o.dry_run) {
        for (size_t i = 0; i < items.n; i++) {
            const hb_item *it = &items.v[i];
            const hb_op_info *info = hb_op_get(it->c.op);
            if (o.ops && !list_has(o.ops, info->name) && !list_has(o.ops, hb_family_name(info->family))) continue;
            if (o.quick && !it->c.quick) continue;
            hb_item_print(stdout, it);
        }
        printf("%zu workload entries, %zu cases per backend before per-backend filtering\n", items.n, cases.n);
        return HB_EXIT_OK;
    }
    if (cases.n == 0) { fprintf(stderr, "hybench %s: no case selected (check --op, --filter, --quick)\n", cmd); return HB_EXIT_USAGE; }
    /* results file */
    char run_id[128], host[64] = "host", path[512];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++) if (*p == '.' || *p == '/') { *p = 0; break; }
    time_t now = time(NULL);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
    snprintf(run_id, sizeof run_id, "%s%s-%s", ts, verify ? "-verify" : "", host);
    if (o.out) snprintf(path, sizeof path, "%s", o.out);
    else { mkdir("results", 0755); snprintf(path, sizeof path, "results/%s.jsonl", run_id); }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) { fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, path, strerror(errno)); return HB_EXIT_IO; }
    if (hb_record_write(fd, hb_meta_record(&o, run_id, wl, nwl)) != HB_OK) { fprintf(stderr, "hybench: write failed\n"); return HB_EXIT_IO; }
    progress pg = {.tty = isatty(2), .t0 = hb_now(), .backends = json_object()};
    fprintf(stderr, "hybench %s: %zu cases per backend -> %s\n", cmd, cases.n, path);
    int rc = 0, unavailable_named = 0;
    const int npass = o.verify_only ? 1 : o.passes;
    hb_options op = o;
    op.budget_s = o.budget_s / npass;
    char ppath[HB_MAX_PASSES][600];
    int passes_done = 0;
    g_stop = 0;
    struct sigaction sa_new = {0}, sa_int, sa_term;
    sa_new.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa_new, &sa_int);
    sigaction(SIGTERM, &sa_new, &sa_term);
    for (int pass = 0; pass < npass && !rc && !g_stop; pass++) {
        int pfd = fd;
        if (npass > 1) {
            /* each pass into its own file beside the results; merged below, then removed */
            snprintf(ppath[pass], sizeof ppath[pass], "%s.pass%d", path, pass + 1);
            pfd = open(ppath[pass], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
            if (pfd < 0) { fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, ppath[pass], strerror(errno)); rc = HB_EXIT_IO; break; }
            if (pg.tty) fprintf(stderr, "\r\033[K");
            fprintf(stderr, "hybench %s: pass %d of %d (budget %.3g s per case)\n", cmd, pass + 1, npass, op.budget_s);
        }
        passes_done = pass + 1;
        for (int b = 0; b < hb_nbackends && !rc && !g_stop; b++) {
            const hb_backend_entry *e = &hb_backends[b];
            if (o.backends) {
                int sel = 0;
                char buf[512];
                snprintf(buf, sizeof buf, "%s", o.backends);
                for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) sel |= hb_backend_find(tok) == e;
                if (!sel) continue;
            }
            int unavailable = 0;
            rc = run_backend(e, &op, &cases, pfd, &pg, &unavailable);
            unavailable_named |= unavailable && o.backends;
        }
        if (pfd != fd) close(pfd);
    }
    if (g_stop) fprintf(stderr, "\nhybench %s: interrupted; keeping what was measured\n", cmd);
    if (npass > 1 && passes_done > 0) {
        /* merge the passes: statuses recounted from the merged records */
        memset(pg.counts, 0, sizeof pg.counts);
        pg.done = 0;
        const char *pp[HB_MAX_PASSES];
        for (int i = 0; i < passes_done; i++) pp[i] = ppath[i];
        int mrc = merge_passes(fd, pp, passes_done, pg.counts, &pg.done);
        if (mrc) { if (!rc) rc = mrc; }
        else for (int i = 0; i < passes_done; i++) unlink(ppath[i]);
    }
    sigaction(SIGINT, &sa_int, NULL);
    sigaction(SIGTERM, &sa_term, NULL);
    if (pg.tty) fprintf(stderr, "\r\033[K");
    /* mode invariance: the run's case records read back, one mode_check record per pair appended,
     * the summary put in the end record (modecheck.h); verify runs time nothing, so not there */
    json_t *mode_inv = NULL;
    if (!verify && pg.done) hb_mc_append_run(path, fd, &mode_inv, stderr);
    double el = hb_now() - pg.t0;
    json_t *endr = json_pack("{s:s,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:i,s:b}", "type", "end", "cases", (json_int_t)pg.done,
                             "ok", pg.counts[HB_OK], "wrong", pg.counts[HB_EWRONG], "failed", pg.counts[HB_EDEVICE] + pg.counts[HB_EINVAL],
                             "skipped", pg.counts[HB_ESKIP], "crashed", pg.counts[HB_ECRASH], "no_resource", pg.counts[HB_ENOMEM],
                             "timed_out", pg.counts[HB_ETIMEOUT], "elapsed_s", el, "passes", passes_done,
                             "interrupted", g_stop != 0);
    json_object_set_new(endr, "backends", pg.backends);
    if (mode_inv) json_object_set_new(endr, "mode_invariance", mode_inv);
    hb_record_write(fd, endr);
    close(fd);
    fprintf(stderr, "hybench %s: %zu cases in %.1f s: %d ok, %d wrong, %d failed, %d skipped, %d crashed, %d no_resource, %d timed_out\n",
            cmd, pg.done, el, pg.counts[HB_OK], pg.counts[HB_EWRONG], pg.counts[HB_EDEVICE] + pg.counts[HB_EINVAL],
            pg.counts[HB_ESKIP], pg.counts[HB_ECRASH], pg.counts[HB_ENOMEM], pg.counts[HB_ETIMEOUT]);
    printf("%s\n", path);
    hb_item_list_free(&items);
    free(cases.v);
    free(cases.item);
    free(cases.host_route);
    if (rc) return rc;
    if (g_stop) return HB_EXIT_INTERRUPTED;
    if (unavailable_named) {
        fprintf(stderr, "hybench %s: a backend named by --backend is unavailable here (reason above)\n", cmd);
        return HB_EXIT_NO_BACKEND;
    }
    if (pg.counts[HB_EWRONG]) return HB_EXIT_WRONG;
    if (pg.counts[HB_EDEVICE] + pg.counts[HB_EINVAL] + pg.counts[HB_ECRASH] + pg.counts[HB_ETIMEOUT]) return HB_EXIT_FAILED;
    return HB_EXIT_OK;
}

int hb_cmd_run(int argc, char **argv) { return run_common(argc, argv, 0); }
int hb_cmd_verify(int argc, char **argv) { return run_common(argc, argv, 1); }
