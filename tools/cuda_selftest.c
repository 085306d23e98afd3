/*
 * cuda_selftest.c - times the CUDA plugin's target shapes on the device machine, independent of the
 * driver: dlopen build/hb_cuda.so (or $HB_PLUGIN_DIR/hb_cuda.so), enumerate, measure the ceilings,
 * then per case: random inputs (never zeros) in the device dtype, upload, 3 warm-up runs, then
 * `reps` runs each bracketed by the plugin's timer_begin/timer_end (CUDA events on its stream), the
 * median reported; the output of one run (poisoned with NaN first) is checked against the f64
 * reference hb_ref_compute, subsampled by hb_ref_row_step to about 2 GFLOP of reference work.
 * Prints one table (op, shape, dtype, median, GFLOP/s or GB/s, fraction of the ceiling, rel. error,
 * tolerance, implementation) and exits 1 if any case is wrong.
 *
 * Build (tools/gpu_bundle.sh does it): cc -std=c11 -O2 -Iharness -Ikernels tools/cuda_selftest.c
 *   build/libhb_kernels.a build/libhb_core.a <LDLIBS> -o build/cuda_selftest (it uses the backend
 *   interface and the cpu-ref reference: the core and kernels layers)
 * Then the issue-13 target lines ("target ..."): attention f16/bf16 at seq >= 1024 against the same run's
 * 8192^3 matmul rate, conv2d against the exhaustive cuDNN best of either layout (check_targets).
 * Usage: cuda_selftest [--quick] [--only SUBSTRING[,SUBSTRING...]]
 */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"
#include "core/convert.h"
#include "cpu_ref/ref.h"

static const hb_backend_ops *ops;
static hb_instance inst;
static hb_ceiling ceil_v[HB_MAX_CEILINGS];
static int nceil;
static int wrong;
/* the last case's median (s), rate (TFLOP/s or GB/s) and case_info, for the targets' ratios */
static double last_med, last_rate;
static char last_info[2048];
/* f16/bf16 dense matmul rate of the 8192^3 case in this run (TFLOP/s), by dtype */
static double mm_rate[HB_DTYPE_COUNT];
static int targets_missed;

static double ceiling(const char *name)
{
    for (int i = 0; i < nceil; i++)
        if (!strcmp(ceil_v[i].name, name)) return ceil_v[i].value;
    return 0.0;
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static double unif(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    double v = (double)(rs >> 11) * 0x1p-53 * 2.0 - 1.0;
    return v == 0.0 ? 0.25 : v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run_case(hb_op op, const char *shape_txt, hb_dtype dt, hb_route route, int reps, const char *env)
{
    hb_case c;
    char err[256], reason[256] = "";
    memset(&c, 0, sizeof c);
    c.op = op;
    c.dtype = dt;
    c.mode = HB_MODE_F32;
    c.route = route;
    if (hb_shape_parse(shape_txt, &c.shape, err, sizeof err) != HB_OK ||
        hb_shape_normalize(op, &c.shape, err, sizeof err) != HB_OK) {
        printf("bad shape %s: %s\n", shape_txt, err);
        wrong++;
        return;
    }
    if (env) putenv((char *)env);
    if (ops->supports(&inst, &c, reason, sizeof reason) != HB_OK) {
        printf("%-9s %-44s %-5s skipped: %s\n", hb_op_get(op)->name, shape_txt, hb_dtype_name(dt), reason);
        return;
    }
    const int nin = hb_op_get(op)->ninputs;
    const hb_elem e = hb_elem_of_dtype(dt);
    const size_t es = hb_dtype_size(dt);
    hb_buf in[HB_MAX_INPUTS], out;
    hb_buf *bp[HB_MAX_INPUTS];
    double *rin[HB_MAX_INPUTS] = {0};
    int ok = 1;
    for (int i = 0; i < nin && ok; i++) {
        int64_t n = hb_op_input_elems(op, &c.shape, i);
        rin[i] = malloc((size_t)n * sizeof(double));
        if (!rin[i] || ops->buf_alloc(&inst, (size_t)n * es, route, &in[i]) != HB_OK) { ok = 0; break; }
        for (int64_t j = 0; j < n; j++) rin[i][j] = unif();
        hb_convert(in[i].host, e, rin[i], HB_ELEM_F64, (size_t)n);
        hb_convert(rin[i], HB_ELEM_F64, in[i].host, e, (size_t)n);
        if (ops->upload(&inst, &in[i]) != HB_OK) ok = 0;
        bp[i] = &in[i];
    }
    const int64_t no = hb_op_output_elems(op, &c.shape);
    double *o64 = malloc((size_t)no * sizeof(double)), *ref = malloc((size_t)no * sizeof(double));
    if (!ok || !o64 || !ref || ops->buf_alloc(&inst, (size_t)no * es, route, &out) != HB_OK) {
        printf("%-9s %-44s %-5s allocation failed\n", hb_op_get(op)->name, shape_txt, hb_dtype_name(dt));
        wrong++;
        return;
    }
    for (int64_t j = 0; j < no; j++) o64[j] = NAN;
    hb_convert(out.host, e, o64, HB_ELEM_F64, (size_t)no);
    hb_status st = ops->upload(&inst, &out);
    if (st == HB_OK) st = ops->run(&inst, &c, bp, &out); /* the checked run (first call: plans, finds) */
    if (st == HB_OK) st = ops->download(&inst, &out);
    double rel = NAN;
    int64_t bad = 0;
    if (st == HB_OK) {
        hb_convert(o64, HB_ELEM_F64, out.host, e, (size_t)no);
        int64_t step = hb_ref_row_step(&c, 2e9);
        hb_ref_compute(&c, (const double *const *)rin, ref, step);
        double num = 0, den = 0;
        for (int64_t j = 0; j < no; j++) {
            if (!isfinite(o64[j])) {
                if (!bad) printf("  first non-finite output [%lld] = %g (reference %g)\n", (long long)j, o64[j], ref[j]);
                bad++;
                continue;
            }
            if (isnan(ref[j])) continue; /* row not computed by the subsampled reference */
            num += (o64[j] - ref[j]) * (o64[j] - ref[j]);
            den += ref[j] * ref[j];
        }
        rel = den > 0 ? sqrt(num / den) : sqrt(num);
    }
    last_med = 0;
    last_rate = 0;
    last_info[0] = 0;
    double *t = calloc((size_t)reps, sizeof(double));
    for (int w = 0; w < 3 && st == HB_OK; w++) st = ops->run(&inst, &c, bp, &out);
    for (int r = 0; r < reps && st == HB_OK; r++) {
        st = ops->timer_begin(&inst);
        if (st == HB_OK) st = ops->run(&inst, &c, bp, &out);
        if (st == HB_OK) st = ops->timer_end(&inst, &t[r]);
    }
    const double tol = hb_op_tolerance(op, &c.shape, dt);
    char info[2048] = "";
    ops->case_info(&inst, &c, info, sizeof info);
    if (st != HB_OK) {
        printf("%-9s %-44s %-5s FAILED: %s %s\n", hb_op_get(op)->name, shape_txt, hb_dtype_name(dt), hb_status_name(st), info);
        wrong++;
    } else {
        qsort(t, (size_t)reps, sizeof(double), cmp_d);
        const double med = t[reps / 2];
        const int cb = hb_op_get(op)->compute_bound;
        const double rate = cb ? hb_op_flops(op, &c.shape) / med * 1e-12 : hb_op_bytes(op, &c.shape, es) / med * 1e-9;
        char cname[40];
        if (cb) snprintf(cname, sizeof cname, "peak_gflops_%s", hb_dtype_name(dt));
        const double cv = cb ? ceiling(cname) * 1e-3 : ceiling("copy_gbps");
        const int good = bad == 0 && rel <= tol;
        if (!good) wrong++;
        printf("%-9s %-44s %-5s %-8s %10.4f ms %9.1f %-6s %5.0f%% err %.1e tol %.0e %s%s %s\n", hb_op_get(op)->name,
               shape_txt, hb_dtype_name(dt), hb_route_name(route), med * 1e3, rate, cb ? "TFLOPs" : "GB/s",
               cv > 0 ? 100.0 * rate / cv : 0.0, rel, tol, good ? "ok" : "WRONG", env ? " " : "", env ? env : "");
        printf("          %s  min %.4f ms p90 %.4f ms\n", info, t[0] * 1e3, t[(reps * 9) / 10] * 1e3);
        if (good) {
            last_med = med;
            last_rate = rate;
            snprintf(last_info, sizeof last_info, "%s", info);
        }
    }
    fflush(stdout);
    free(t);
    free(o64);
    free(ref);
    ops->buf_free(&inst, &out);
    for (int i = 0; i < nin; i++) {
        ops->buf_free(&inst, &in[i]);
        free(rin[i]);
    }
}

/* H2D/D2H of one buffer through the hooks (what the driver's h2d/d2h phases measure). */
static void transfer(hb_route route, size_t bytes)
{
    hb_buf b;
    if (ops->buf_alloc(&inst, bytes, route, &b) != HB_OK) return;
    memset(b.host, 3, bytes);
    double up[7], dn[7];
    for (int r = 0; r < 7; r++) {
        ops->timer_begin(&inst);
        ops->upload(&inst, &b);
        ops->timer_end(&inst, &up[r]);
        ops->timer_begin(&inst);
        ops->download(&inst, &b);
        ops->timer_end(&inst, &dn[r]);
    }
    qsort(up, 7, sizeof(double), cmp_d);
    qsort(dn, 7, sizeof(double), cmp_d);
    char n1[40], n2[40];
    snprintf(n1, sizeof n1, "h2d_gbps_%s", hb_route_name(route));
    snprintf(n2, sizeof n2, "d2h_gbps_%s", hb_route_name(route));
    const double gu = (double)bytes / up[3] * 1e-9, gd = (double)bytes / dn[3] * 1e-9;
    printf("transfer %-8s %zu MiB: upload %.3f ms %.1f GB/s (%.0f%% of %s), download %.3f ms %.1f GB/s (%.0f%% of %s)\n",
           hb_route_name(route), bytes >> 20, up[3] * 1e3, gu, 100.0 * gu / ceiling(n1), n1, dn[3] * 1e3, gd,
           100.0 * gd / ceiling(n2), n2);
    ops->buf_free(&inst, &b);
}

/* --only LIST: comma-separated substrings, any of which matches the op name or the shape text. */
static int only_match(const char *list, const char *op, const char *shape)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (strstr(op, t) || strstr(shape, t)) return 1;
    return 0;
}

/* Value of "key": in a case_info JSON text (flat search; 0 when absent). */
static double info_num(const char *info, const char *key)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(info, pat);
    return p ? atof(p + strlen(pat)) : 0.0;
}

/* The issue-13 targets, each ratio measured in this run:
 *   attention f16/bf16 with seq >= 1024 (prefill): rate >= 65% of the same dtype's 8192^3 matmul rate;
 *   conv2d: the fastest cuDNN candidate, timed alone by the plugin's one-off choice
 *   (extra.conv_choice.exhaustive_best_ms: either layout for an NCHW case, NHWC for a layout=nhwc
 *   case), divided by the case's median; >= 0.97 is met (the choice's own ratio, chosen pipeline vs
 *   that best, is printed beside it). */
static void check_targets(hb_op op, const char *shape, hb_dtype dt, const char *env)
{
    if (last_med <= 0) return;
    if (op == HB_OP_MATMUL && strstr(shape, "m=8192 n=8192 k=8192")) mm_rate[dt] = last_rate;
    if (op == HB_OP_ATTENTION && (dt == HB_F16 || dt == HB_BF16) && !env) {
        const char *sq = strstr(shape, "seq=");
        long seq = sq ? atol(sq + 4) : 0;
        if (seq >= 1024 && mm_rate[dt] > 0) {
            const double f = last_rate / mm_rate[dt];
            if (f < 0.65) targets_missed++;
            printf("  target  attention %s %s: %.1f TFLOP/s = %.0f%% of matmul %.1f (>= 65%%): %s\n", hb_dtype_name(dt), shape,
                   last_rate, 100.0 * f, mm_rate[dt], f >= 0.65 ? "met" : "NOT met");
        }
    }
    if (op == HB_OP_CONV2D && !env) {
        const double ex = info_num(last_info, "exhaustive_best_ms"), ch = info_num(last_info, "exhaustive_best_over_chosen");
        if (ex > 0) {
            const double r = ex * 1e-3 / last_med;
            if (r < 0.97) targets_missed++; /* 3%: the spread of two best-of-3 timings of one kernel */
            printf("  target  conv2d %s %s: median %.4f ms, exhaustive cuDNN best (%s) %.4f ms (NCHW %.4f/%.4f, NHWC alone %.4f/%.4f "
                   "legacy/graph): best/median %.3f, choice's best/chosen %.3f (>= 1): %s\n",
                   hb_dtype_name(dt), shape, last_med * 1e3, strstr(shape, "layout=nhwc") ? "NHWC, its layout" : "either layout", ex,
                   info_num(last_info, "legacy_nchw_ms"),
                   info_num(last_info, "graph_nchw_ms"), info_num(last_info, "legacy_nhwc_ms"),
                   info_num(last_info, "graph_nhwc_ms"), r, ch, r >= 0.97 ? "met" : "NOT met");
        }
    }
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    }
    char path[PATH_MAX + 32];
    const char *dir = getenv("HB_PLUGIN_DIR");
    snprintf(path, sizeof path, "%s/hb_cuda.so", dir && *dir ? dir : "build");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen %s: %s\n", path, dlerror()); return 2; }
    ops = dlsym(h, "hb_cuda_ops");
    if (!ops) { printf("no hb_cuda_ops in %s\n", path); return 2; }
    char reason[512] = "";
    hb_instance all[8];
    memset(all, 0, sizeof all);
    int n = ops->enumerate(all, 8, reason, sizeof reason);
    if (n <= 0) { printf("no CUDA device: %s\n", reason); return 2; }
    inst = all[0];
    char desc[4096];
    ops->describe(&inst, desc, sizeof desc);
    printf("%s: %s\n%s\n", inst.name, inst.description, desc);
    if (!only || strstr(only, "ceilings")) {
        nceil = ops->ceilings(&inst, ceil_v, HB_MAX_CEILINGS);
        for (int i = 0; i < nceil; i++)
            printf("ceiling %-20s %10.1f %-8s %s\n", ceil_v[i].name, ceil_v[i].value, ceil_v[i].unit, ceil_v[i].how);
        transfer(HB_ROUTE_PAGEABLE, (size_t)256 << 20);
        transfer(HB_ROUTE_PINNED, (size_t)256 << 20);
    }
    const int R = quick ? 10 : 30;
    struct { hb_op op; const char *shape; unsigned dmask; int reps; const char *env; } cs[] = {
        {HB_OP_ADD, "n=65536", 1, 200, NULL},
        {HB_OP_ADD, "n=134217728", 1 | 4, R, NULL},
        {HB_OP_MUL, "n=134217728", 1, R, NULL},
        {HB_OP_GELU, "n=134217728", 1 | 4, R, NULL},
        {HB_OP_SILU, "n=134217728", 1, R, NULL},
        {HB_OP_SUM, "rows=1 cols=134217728", 1 | 4, R, NULL},
        {HB_OP_SUM, "rows=4096 cols=32768", 1, R, NULL},
        {HB_OP_SUM, "rows=4 cols=1048576", 4 | 8, R, NULL},
        {HB_OP_SUM_ALL, "n=134217728", 4, R, NULL},
        {HB_OP_SUM, "rows=131072 cols=1024", 1, R, NULL},
        {HB_OP_MAX, "rows=16384 cols=8192", 1, R, NULL},
        {HB_OP_SUM_ALL, "n=134217728", 1, R, NULL},
        {HB_OP_RMSNORM, "rows=16384 cols=2048", 1 | 4, R, NULL},
        {HB_OP_MATMUL, "m=8192 n=8192 k=8192", 15, R, NULL},
        {HB_OP_MATMUL, "m=2048 n=5632 k=2048", 15, R, NULL},
        {HB_OP_BMM, "batch=32 m=512 n=512 k=64", 15, R, NULL},
        {HB_OP_CONV2D, "batch=64 c=64 h=56 w=56 oc=64 kh=3 ph=1", 15, R, NULL},
        {HB_OP_CONV2D, "batch=64 c=256 h=56 w=56 oc=64 kh=1", 15, R, NULL},
        {HB_OP_CONV2D, "batch=1 c=128 h=28 w=28 oc=128 kh=3 ph=1", 15, R, NULL},
        {HB_OP_CONV2D, "batch=1 c=256 h=56 w=56 oc=64 kh=1", 15, R, NULL},
        {HB_OP_CONV2D, "batch=64 c=64 h=56 w=56 oc=64 kh=3 ph=1 layout=nhwc", 15, R, NULL},
        {HB_OP_CONV2D, "batch=64 c=256 h=56 w=56 oc=64 kh=1 layout=nhwc", 15, R, NULL},
        {HB_OP_CONV2D, "batch=1 c=128 h=28 w=28 oc=128 kh=3 ph=1 layout=nhwc", 15, R, NULL},
        {HB_OP_CONV2D, "batch=1 c=256 h=56 w=56 oc=64 kh=1 layout=nhwc", 15, R, NULL},
        {HB_OP_MAXPOOL, "batch=64 c=64 h=112 w=112 kh=3 sh=2 ph=1", 1 | 4, R, NULL},
        {HB_OP_AVGPOOL, "batch=64 c=2048 h=7 w=7 kh=7", 1, R, NULL},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=2048 head_dim=64", 1 | 4 | 8, R, NULL},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=2048 head_dim=64", 4 | 8, R, "HB_CUDA_ATTN=own"},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=2048 head_dim=64", 4, R, "HB_CUDA_ATTN=cudnn"},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=2048 head_dim=64", 4, R, "HB_CUDA_GATE=0"},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=2048 head_dim=64 causal=1", 1 | 4 | 8, R, NULL},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=2048 head_dim=64 causal=1", 4, R, "HB_CUDA_ATTN=own"},
        {HB_OP_ATTENTION, "batch=2 heads=32 kv_heads=8 seq=1024 kv_seq=2048 head_dim=128 causal=1", 4 | 8, R, NULL},
        {HB_OP_ATTENTION, "batch=1 heads=32 kv_heads=4 seq=2048 head_dim=64 causal=1", 1 | 4, R, NULL},
        {HB_OP_ATTENTION, "batch=1 heads=32 kv_heads=4 seq=1 kv_seq=2048 head_dim=64", 1 | 4 | 8, R, NULL},
        {HB_OP_ATTENTION, "batch=1 heads=32 kv_heads=4 seq=1 kv_seq=2048 head_dim=64", 4, R, "HB_CUDA_ATTN=cudnn"},
        {HB_OP_ATTENTION, "batch=8 heads=32 seq=1 kv_seq=4096 head_dim=128", 1 | 4, R, NULL},
        {HB_OP_ATTENTION, "batch=2 heads=16 seq=512 head_dim=80 causal=1", 1 | 4, R, NULL},
        {HB_OP_ATTENTION, "batch=4 heads=16 seq=1024 head_dim=128", 1 | 4 | 8, R, NULL},
    };
    printf("%-9s %-44s %-5s %-8s %13s %9s %-6s %6s\n", "op", "shape", "dtype", "route", "median", "rate", "unit", "ceil");
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (only && !only_match(only, hb_op_get(cs[i].op)->name, cs[i].shape)) continue;
        for (int d = 0; d < HB_DTYPE_COUNT; d++)
            if (cs[i].dmask & (1u << d)) {
                run_case(cs[i].op, cs[i].shape, (hb_dtype)d, HB_ROUTE_PINNED, cs[i].reps, cs[i].env);
                check_targets(cs[i].op, cs[i].shape, (hb_dtype)d, cs[i].env);
                if (cs[i].env) { /* the knob holds for this line only */
                    char name[64];
                    snprintf(name, sizeof name, "%.*s", (int)strcspn(cs[i].env, "="), cs[i].env);
                    unsetenv(name);
                }
            }
    }
    ops->close(&inst);
    for (int i = 1; i < n; i++) ops->close(&all[i]);
    printf("selftest: %d wrong or failed; %d target lines missed\n", wrong, targets_missed);
    return wrong ? 1 : 0;
}
