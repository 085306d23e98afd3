/*
 * roofline.c - each case's fraction of its measured ceiling (analysis/roofline.h), checked against a
 * goal per case family: the ratio to a ceiling measured in the same run (never to typed-in speeds,
 * except where a goal is itself an absolute figure on named hardware, e.g. "matmul f16 >= 650 TFLOP/s
 * on the H100"). The goals came from the project's work items; each row says which (origin).
 */
#include "analysis/roofline.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const hb_roof_goal hb_roof_goals[] = {
    {"#2", "cpu matmul n>=1024 vs sgemm probe", "cpu", "matmul", "f32", NULL, NULL, NULL, 0, 1024 * 1024, HB_ROOF_FRACTION, 0.85, NULL},
    {"#2", "cpu conv2d ResNet-50 3x3 vs sgemm probe", "cpu", "conv2d", "f32", NULL, NULL, "kh=3 kw=3", 0, 0, HB_ROOF_FRACTION, 0.60, NULL},
    {"#2", "cpu attention 32 heads seq 512 d 64 vs sgemm probe", "cpu", "attention", "f32", NULL, NULL, "heads=32 kv_heads=32 seq=512 kv_seq=512 head_dim=64", 0, 0, HB_ROOF_FRACTION, 0.50, NULL},
    {"#2", "cpu add > 4x LLC vs copy bandwidth", "cpu", "add", "f32", NULL, NULL, NULL, 4, 0, HB_ROOF_FRACTION, 0.80, NULL},
    {"#2", "cpu sum > 4x LLC vs copy bandwidth", "cpu", "sum", "f32", NULL, NULL, NULL, 4, 0, HB_ROOF_FRACTION, 0.80, NULL},
    {"#2", "cpu maxpool vs copy bandwidth", "cpu", "maxpool", "f32", NULL, NULL, NULL, 4, 0, HB_ROOF_FRACTION, 0.50, NULL},
    {"#2", "f64->f32 conversion > 4x LLC vs copy bandwidth", "cpu", "add", "f32", "convert", NULL, NULL, 4, 0, HB_ROOF_CONVERT_FRACTION, 0.80, NULL},
    {"#3", "opencl add > 4x LLC vs cpu copy bandwidth", "opencl", "add", "f32", NULL, NULL, NULL, 4, 0, HB_ROOF_FRACTION_OF_CPU, 0.60, NULL},
    {"#3", "opencl sum > 4x LLC vs cpu copy bandwidth", "opencl", "sum", "f32", NULL, NULL, NULL, 4, 0, HB_ROOF_FRACTION_OF_CPU, 0.60, NULL},
    {"#3", "opencl matmul n>=1024 vs cpu sgemm probe", "opencl", "matmul", "f32", NULL, NULL, NULL, 0, 1024 * 1024, HB_ROOF_FRACTION_OF_CPU, 0.30, NULL},
    {"#3", "opencl mapped route: H2D+D2H share of total (<= 1%)", "opencl", "add", "f32", "f32", "mapped", NULL, 0, 1 << 20, HB_ROOF_MAPPED_ZERO, 0.01, NULL},
    {"#4", "cuda add 2^27 vs device copy", "cuda", "add", "f32", NULL, NULL, "n=134217728", 0, 0, HB_ROOF_FRACTION, 0.90, NULL},
    {"#4", "cuda sum 2^27 vs device copy", "cuda", "sum", "f32", NULL, NULL, NULL, 0, 134217728, HB_ROOF_FRACTION, 0.90, NULL},
    {"#4", "cuda matmul 8192 f32 TFLOP/s", "cuda", "matmul", "f32", NULL, NULL, "m=8192 n=8192 k=8192", 0, 0, HB_ROOF_TFLOPS, 48, NULL},
    {"#4", "cuda matmul 8192 tf32 TFLOP/s", "cuda", "matmul", "tf32", NULL, NULL, "m=8192 n=8192 k=8192", 0, 0, HB_ROOF_TFLOPS, 340, NULL},
    {"#4", "cuda matmul 8192 f16 TFLOP/s", "cuda", "matmul", "f16", NULL, NULL, "m=8192 n=8192 k=8192", 0, 0, HB_ROOF_TFLOPS, 650, NULL},
    {"#4", "cuda matmul 8192 bf16 TFLOP/s", "cuda", "matmul", "bf16", NULL, NULL, "m=8192 n=8192 k=8192", 0, 0, HB_ROOF_TFLOPS, 650, NULL},
    {"#4", "cuda conv2d 64x64x56x56 3x3 f32 TFLOP/s", "cuda", "conv2d", "f32", NULL, NULL, "batch=64 c=64 h=56 w=56 oc=64 kh=3", 0, 0, HB_ROOF_TFLOPS, 35, NULL},
    {"#4", "cuda conv2d 64x64x56x56 3x3 f16 TFLOP/s", "cuda", "conv2d", "f16", NULL, NULL, "batch=64 c=64 h=56 w=56 oc=64 kh=3", 0, 0, HB_ROOF_TFLOPS, 120, NULL},
    {"#4", "cuda attention 8x32x2048x64 f32 TFLOP/s", "cuda", "attention", "f32", NULL, NULL, "batch=8 heads=32 kv_heads=32 seq=2048 kv_seq=2048 head_dim=64", 0, 0, HB_ROOF_TFLOPS, 21, NULL},
    {"#4", "cuda attention 8x32x2048x64 f16 TFLOP/s", "cuda", "attention", "f16", NULL, NULL, "batch=8 heads=32 kv_heads=32 seq=2048 kv_seq=2048 head_dim=64", 0, 0, HB_ROOF_TFLOPS, 200, NULL},
    {"#4", "cuda pinned H2D+D2H vs route ceiling", "cuda", "add", "f32", "f32", "pinned", NULL, 0, 16 << 20, HB_ROOF_TRANSFER_FRACTION, 0.90, NULL},
    {"#13", "cpu gemv (m=1) in cache vs copy bandwidth of its cache level", "cpu", "matmul", "f32", NULL, NULL, "m=1 ", 0, 0, HB_ROOF_CACHE_FRACTION, 0.50, NULL},
    {"#13", "cpu relu in cache vs copy bandwidth of its cache level", "cpu", "relu", "f32", NULL, NULL, NULL, 0, 0, HB_ROOF_CACHE_FRACTION, 0.50, NULL},
    {"#13", "cpu add in cache vs copy bandwidth of its cache level", "cpu", "add", "f32", NULL, NULL, NULL, 0, 0, HB_ROOF_CACHE_FRACTION, 0.50, NULL},
    {"#13", "cpu matmul 128^3 vs single-core sgemm probe", "cpu", "matmul", "f32", NULL, NULL, "m=128 n=128 k=128", 0, 0, HB_ROOF_FRACTION_OF_1CORE, 1.0, NULL},
    {"#13", "cpu bmm 16x128^3 vs single-core sgemm probe", "cpu", "bmm", "f32", NULL, NULL, "batch=16 m=128 n=128 k=128", 0, 0, HB_ROOF_FRACTION_OF_1CORE, 1.0, NULL},
    /* beyond the LLC: each tensor at least twice the LLC (at 1x a hot run keeps its input in the L3
     * while streaming stores write the output: relu n = 2^23 ran at 81 GB/s on the 2-core VM, whose
     * DRAM copy ceiling is 59); the largest such n measured with relu beside it (hb_roof_eval).
     * --quick has no such case: at 2^24 cpu-ref's f64 loops alone took 2.5 minutes there */
    {"#13", "cpu silu >= 2x LLC: time over relu's (at most)", "cpu", "silu", "f32", NULL, NULL, NULL, 2, 0, HB_ROOF_TIME_VS_RELU, 1.3, NULL},
    {"#13", "cpu gelu >= 2x LLC: time over relu's (at most)", "cpu", "gelu", "f32", NULL, NULL, NULL, 2, 0, HB_ROOF_TIME_VS_RELU, 1.3, NULL},
    {"#13", "opencl add in cache vs copy bandwidth of its cache level", "opencl", "add", "f32", NULL, NULL, NULL, 0, 0, HB_ROOF_CACHE_FRACTION, 0.50, NULL},
    {"#4", "cuda add 2^16 compute time (us, at most)", "cuda", "add", "f32", NULL, NULL, "n=65536", 0, 0, HB_ROOF_COMPUTE_US_MAX, 5, NULL},
    /* 0.97: 3% is the spread of two best-of-3 timings of one kernel (kernels/cuda/NOTES.md) */
    {"#13", "cuda conv2d NCHW, every case in device memory: exhaustive cuDNN best (either layout) / median", "cuda", "conv2d", NULL, NULL, NULL, NULL, 0, 0, HB_ROOF_CONV_EXHAUSTIVE, 0.97, "layout=nhwc"},
    {"#13", "cuda conv2d NHWC, every case in device memory: exhaustive cuDNN best (NHWC) / median", "cuda", "conv2d", NULL, NULL, NULL, "layout=nhwc", 0, 0, HB_ROOF_CONV_EXHAUSTIVE, 0.97, NULL},
};
const int hb_roof_ngoals = (int)(sizeof hb_roof_goals / sizeof hb_roof_goals[0]);

int hb_roof_worst_case(const hb_roof_goal *g) { return g->m == HB_ROOF_CONV_EXHAUSTIVE; }

int hb_roof_lower_better(const hb_roof_goal *g)
{
    return g->m == HB_ROOF_COMPUTE_US_MAX || g->m == HB_ROOF_MAPPED_ZERO || g->m == HB_ROOF_TIME_VS_RELU;
}

static const char *js(const char *s) { return s ? s : ""; }

static double cpu_ceiling(const hb_run *r, const char *name)
{
    double v = hb_run_ceiling(r, "cpu", name);
    return v;
}

/* The copy sweep's figure at a working set of `bytes` (copy_gbps_ws_<N>MiB, N = 1, 2, 4, ...): log-log
 * interpolation between the probes around it, the smallest probe's figure below it; NaN beyond the
 * largest probe or without a sweep. */
static double swept_copy(const hb_run *r, const char *backend, double bytes)
{
    double ps = NAN, pv = NAN;
    for (int k = 0; k < 24; k++) {
        char nm[48];
        snprintf(nm, sizeof nm, "copy_gbps_ws_%lluMiB", 1ULL << k);
        double v = hb_run_ceiling(r, backend, nm), sz = (double)(1ULL << (20 + k));
        if (!(v > 0)) continue;
        if (bytes <= sz) {
            if (isnan(ps)) return v;
            double t = log(bytes / ps) / log(sz / ps);
            return exp(log(pv) + t * (log(v) - log(pv)));
        }
        ps = sz;
        pv = v;
    }
    return NAN;
}

const char *hb_roof_cache_level(const hb_run *r, const char *backend, double bytes, double *ceil, int *swept)
{
    if (swept) *swept = 0;
    const hb_rec_meta *m = r->meta_rec;
    double l2 = m ? m->cpu.l2_bytes : (double)NAN, l3 = m ? m->cpu.l3_bytes : (double)NAN,
           cores = m ? m->cpu.cores : (double)NAN;
    double l2all = l2 > 0 && cores > 0 ? l2 * cores : (double)NAN;
    const char *level = "DRAM", *name = "copy_gbps";
    if (bytes > 0 && bytes <= l2all) {
        level = "L2";
        name = "copy_gbps_l2";
    } else if (bytes > 0 && l3 > 0 && !(l3 <= l2all) && bytes <= l3) {
        level = "LLC";
        name = "copy_gbps_llc";
    }
    if (strcmp(level, "DRAM") && bytes > 0) {
        double sv = swept_copy(r, backend, bytes);
        if (!isnan(sv)) {
            *ceil = sv;
            if (swept) *swept = 1;
            return level;
        }
    }
    *ceil = hb_run_ceiling(r, backend, name);
    /* a backend without a probe at this level (opencl has none for L2) is held to the next level
     * up it has, and the level named is that one */
    if (isnan(*ceil) && !strcmp(level, "L2") && !(l3 <= l2all)) {
        level = "LLC";
        *ceil = hb_run_ceiling(r, backend, "copy_gbps_llc");
    }
    if (isnan(*ceil) && strcmp(level, "DRAM")) {
        level = "DRAM";
        *ceil = hb_run_ceiling(r, backend, "copy_gbps");
    }
    return level;
}

/* Backend instance b ("cpu", "opencl:0:0") is of type `type`: "cpu-ref" is not a "cpu". */
static int backend_is(const char *b, const char *type)
{
    size_t n = strlen(type);
    return !strncmp(b, type, n) && (b[n] == 0 || b[n] == ':');
}

/* Compute median of the relu case with c's backend, mode, dtype and n (NaN when there is none). */
static double relu_time(const hb_run *r, const hb_rec_case *c)
{
    double n = HB_REC_SHAPE(&c->shape, n);
    for (size_t i = 0; i < r->ncase_recs; i++) {
        const hb_rec_case *x = &r->case_recs[i];
        if (strcmp(js(x->status), "ok") || strcmp(js(x->op), "relu") || strcmp(js(x->backend), js(c->backend)) ||
            strcmp(js(x->mode), js(c->mode)) || strcmp(js(x->dtype), js(c->dtype)) || strcmp(js(x->route), js(c->route)))
            continue;
        if (HB_REC_SHAPE(&x->shape, n) == n)
            return x->phase[HB_PH_COMPUTE].median;
    }
    return (double)NAN;
}

int hb_roof_eval(const hb_run *r, const hb_roof_goal *t, double *ratio, double *figure, double *ceil, char *which, size_t wl)
{
    double l3 = r->meta_rec ? r->meta_rec->cpu.l3_bytes : (double)NAN;
    int found = 0;
    /* the kept case: the best, or the worst for a goal every case must reach */
    int lower_better = hb_roof_lower_better(t) != hb_roof_worst_case(t);
    double relu_n = 0; /* HB_ROOF_TIME_VS_RELU: the largest n seen with relu beside it */
    *ratio = lower_better ? INFINITY : -INFINITY;
    for (size_t i = 0; i < r->ncase_recs; i++) {
        const hb_rec_case *c = &r->case_recs[i];
        if (strcmp(js(c->status), "ok") || !backend_is(js(c->backend), t->backend)) continue;
        if (strcmp(js(c->op), t->op)) continue;
        if (t->dtype && strcmp(js(c->dtype), t->dtype)) continue;
        if (t->mode && strcmp(js(c->mode), t->mode)) continue;
        if (t->route && strcmp(js(c->route), t->route)) continue;
        if (t->shape_has && !strstr(js(c->shape_str), t->shape_has)) continue;
        if (t->shape_lacks && strstr(js(c->shape_str), t->shape_lacks)) continue;
        /* a matrix-vector product (m or n = 1) is memory-bound: only a goal that names it holds it
         * (the sgemm-peak goals of matmul n >= 1024 took gemv for a matmul) */
        if (!t->shape_has && !strcmp(t->op, "matmul") &&
            (HB_REC_SHAPE(&c->shape, m) == 1 || HB_REC_SHAPE(&c->shape, n) == 1)) continue;
        double size = c->size;
        if (t->min_size && size < (double)t->min_size) continue;
        if (t->min_llc_multiple > 0 && !(size * 4 >= t->min_llc_multiple * l3)) continue;
        double v = NAN, fig = NAN, cv = NAN;
        const char *level = NULL;
        int swept = 0;
        double comp = c->phase[HB_PH_COMPUTE].median, tot = c->phase[HB_PH_TOTAL].median;
        switch (t->m) {
        case HB_ROOF_FRACTION: v = c->fraction; cv = c->ceiling_value; fig = v * cv; break;
        case HB_ROOF_FRACTION_OF_CPU: {
            int cb = !strcmp(js(c->bound), "compute");
            cv = cpu_ceiling(r, cb ? "peak_gflops_f32" : "copy_gbps");
            fig = cb ? c->gflops : c->gbps;
            v = fig / cv;
            break;
        }
        case HB_ROOF_TFLOPS: fig = c->gflops / 1e3; cv = t->need; v = fig; break;
        case HB_ROOF_CACHE_FRACTION: {
            level = hb_roof_cache_level(r, js(c->backend), c->bytes, &cv, &swept);
            if (!strcmp(level, "DRAM")) break; /* not cache-resident: other goals hold it */
            fig = c->gbps;
            v = fig / cv;
            break;
        }
        case HB_ROOF_FRACTION_OF_1CORE: {
            /* the single-core probe at the case's own size where the run has one (m = n = k = N:
             * peak_gflops_f32_1core_nN), else the n = 512 probe */
            double m = HB_REC_SHAPE(&c->shape, m);
            char nm[64];
            cv = NAN;
            if (m > 0 && m == HB_REC_SHAPE(&c->shape, n) && m == HB_REC_SHAPE(&c->shape, k) && m < 1e9) {
                snprintf(nm, sizeof nm, "peak_gflops_f32_1core_n%d", (int)m);
                cv = hb_run_ceiling(r, js(c->backend), nm);
                level = isnan(cv) ? NULL : "1-core sgemm at the same n";
            }
            if (isnan(cv))
                cv = hb_run_ceiling(r, js(c->backend), "peak_gflops_f32_1core");
            if (!level)
                level = "1-core sgemm n=512";
            fig = c->gflops;
            v = fig / cv;
            break;
        }
        case HB_ROOF_TIME_VS_RELU: {
            /* the largest n measured beside relu, not the case with the best ratio */
            double n = HB_REC_SHAPE(&c->shape, n);
            if (n < relu_n) continue;
            cv = relu_time(r, c) * 1e6;
            fig = comp * 1e6;
            v = fig / cv;
            if (isnan(v)) continue;
            if (n > relu_n) { /* a larger size: it replaces what the smaller ones gave */
                relu_n = n;
                *ratio = INFINITY;
            }
            break;
        }
        case HB_ROOF_COMPUTE_US_MAX: fig = comp * 1e6; cv = t->need; v = fig; break;
        case HB_ROOF_CONV_EXHAUSTIVE: {
            /* figure: the case's median (ms); ceiling: the exhaustive best (ms). Device memory only:
             * on the mapped route the convolution reads its operands over the bus, while the other
             * layout's engines of the choice are timed on device copies (H100: b64 1x1 f16 mapped
             * 3.4 ms against a 0.049 ms device-memory best), so the two do not compare */
            if (!strcmp(js(c->route), "mapped")) continue;
            cv = c->extra.conv_exhaustive_best_ms;
            fig = comp * 1e3;
            v = cv > 0 && fig > 0 ? cv / fig : (double)NAN;
            break;
        }
        case HB_ROOF_CONVERT_FRACTION: {
            /* bytes of the conversion: every input read as f64 (8) and written as f32 (4) */
            double n = HB_REC_SHAPE(&c->shape, n);
            double cin = c->phase[HB_PH_CONVERT_IN].median;
            cv = c->ceiling_value;
            fig = cin > 0 ? 2 * n * 12 / cin / 1e9 : (double)NAN;
            v = fig / cv;
            break;
        }
        case HB_ROOF_TRANSFER_FRACTION: {
            const char *route = js(c->route);
            char hn[64], dn[64];
            snprintf(hn, sizeof hn, "h2d_gbps_%s", route);
            snprintf(dn, sizeof dn, "d2h_gbps_%s", route);
            double n = HB_REC_SHAPE(&c->shape, n);
            double h = c->phase[HB_PH_H2D].median, d = c->phase[HB_PH_D2H].median;
            double hc = hb_run_ceiling(r, js(c->backend), hn), dc = hb_run_ceiling(r, js(c->backend), dn);
            double hg = 2 * n * 4 / h / 1e9, dg = n * 4 / d / 1e9;
            v = fmin(hg / hc, dg / dc);
            fig = hg; cv = hc;
            break;
        }
        case HB_ROOF_MAPPED_ZERO: {
            double h = c->phase[HB_PH_H2D].median, d = c->phase[HB_PH_D2H].median;
            v = tot > 0 ? (h + d) / tot : (double)NAN;
            fig = (h + d) * 1e6; cv = tot * 1e6;
            break;
        }
        }
        if (isnan(v)) continue;
        if (lower_better ? v < *ratio : v > *ratio) {
            *ratio = v; *figure = fig; *ceil = cv;
            int w = snprintf(which, wl, "%s %s %s %s %s", js(c->backend), js(c->shape_str), js(c->mode), js(c->route), js(c->dtype));
            if (level && t->m == HB_ROOF_FRACTION_OF_1CORE && w >= 0 && (size_t)w < wl) /* the probe used */
                snprintf(which + w, wl - (size_t)w, " [vs %s]", level);
            else if (level && w >= 0 && (size_t)w < wl) /* the cache level the case is held to */
                snprintf(which + w, wl - (size_t)w, " [%s: working set %.3g MiB%s]", level, c->bytes / 1048576.0,
                         swept ? ", vs the copy sweep at that size" : "");
        }
        found = 1;
    }
    return found;
}

