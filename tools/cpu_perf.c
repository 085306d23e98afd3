/*
 * cpu_perf.c - the cpu backend's performance against the host ceilings, measured in one process.
 * Not part of the build (the harness measures the same through `hybench run`); it exists to check
 * the kernels' targets quickly while working on them:
 *   make build && gcc -std=c11 -D_GNU_SOURCE -O3 -march=native -fopenmp -Iharness -Ikernels \
 *     -I/usr/include/x86_64-linux-gnu/openblas-pthread tools/cpu_perf.c build/libhb_kernels.a build/libhb_core.a \
 *     -o build/cpu_perf $(pkg-config --libs hwloc jansson inih) -lopenblas -lm -ldl
 *   build/cpu_perf [filter]        (filter: substring of the case label, e.g. "conv")
 * On a shared or virtual host the bandwidth and clock available drift by tens of percent within
 * seconds, so each case is timed interleaved with its ceiling probe: 2 warm-up calls, then up to 25
 * rounds of (probe, case) until 3 s have passed; printed are the medians and the bests of both and
 * the ratios median/median and best/best. Probes: a STREAM copy of 2 x 4xLLC f64 arrays with
 * streaming stores and with ordinary stores (the faster of the two per round), as in
 * hb_cpu_ceilings, for memory-bound ops and conversions (bytes counted STREAM-style, hb_op_bytes);
 * an OpenBLAS sgemm n=2048 for compute-bound ops. hb_cpu_ceilings itself is printed once at start.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>
#include <omp.h>

#include <cblas.h>

#include "core/backend.h"
#include "core/convert.h"
#include "cpu/cpu.h"
#include "cpu/cpu_priv.h"
#include "cpu/hostmem.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}


typedef void (*timed_fn)(void *arg);

/* ---- probes, as in kernels/cpu/cpu_sys.c ---- */
static double *g_a, *g_c;
static int64_t g_n;
static float *g_A, *g_B, *g_C;

static void copy_once(int nt)
{
#pragma omp parallel
    {
        int64_t T = omp_get_num_threads(), t = omp_get_thread_num();
        int64_t lo = g_n * t / T / 8 * 8, hi = t + 1 == T ? g_n : g_n * (t + 1) / T / 8 * 8, i = lo;
        if (nt) {
            for (; i + 8 <= hi; i += 8)
                _mm512_stream_pd(g_c + i, _mm512_load_pd(g_a + i));
            _mm_sfence();
        }
        for (; i < hi; i++)
            g_c[i] = g_a[i];
    }
}

/* returns GB/s of the faster variant this round */
static double probe_copy(void)
{
    double best = HUGE_VAL;
    for (int nt = 0; nt < 2; nt++) {
        double t0 = now_s();
        copy_once(nt);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return 16.0 * (double)g_n / best * 1e-9;
}

static double probe_sgemm(void)
{
    const int n = 2048;
    double t0 = now_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, g_A, n, g_B, n, 0.0f, g_C, n);
    return 2.0 * n * (double)n * n / (now_s() - t0) * 1e-9;
}

static void probes_init(void)
{
    size_t llc = hb_cpu_llc_bytes();
    g_n = (int64_t)((4 * llc < ((size_t)64 << 20) ? ((size_t)64 << 20) : 4 * llc) / 8);
    g_a = hb_host_alloc((size_t)g_n * 8);
    g_c = hb_host_alloc((size_t)g_n * 8);
    for (int64_t i = 0; i < g_n; i++)
        g_a[i] = (double)i;
    g_A = hb_host_alloc((size_t)2048 * 2048 * 4);
    g_B = hb_host_alloc((size_t)2048 * 2048 * 4);
    g_C = hb_host_alloc((size_t)2048 * 2048 * 4);
    for (size_t i = 0; i < (size_t)2048 * 2048; i++) {
        g_A[i] = (float)(i % 17) * 0.1f;
        g_B[i] = (float)(i % 13) * 0.1f;
    }
}

/* Interleaved timing: op seconds (median, best) and probe rates (median, best). */
static void time_pair(timed_fn fn, void *arg, int compute, double *med, double *best, double *pmed,
                      double *pbest)
{
    double s[25], p[25];
    int n = 0;
    fn(arg);
    fn(arg);
    double t_end = now_s() + 3.0;
    while (n < 25 && (n < 5 || now_s() < t_end)) {
        p[n] = compute ? probe_sgemm() : probe_copy();
        double t0 = now_s();
        fn(arg);
        s[n++] = now_s() - t0;
    }
    qsort(s, (size_t)n, sizeof s[0], cmp_d);
    qsort(p, (size_t)n, sizeof p[0], cmp_d);
    *best = s[0];
    *pbest = p[n - 1];
    *med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    *pmed = n % 2 ? p[n / 2] : 0.5 * (p[n / 2 - 1] + p[n / 2]);
}

static void print_row(const char *label, const char *shape, double work, int compute, double med, double best,
                      double pmed, double pbest)
{
    printf("%-22s %-44s %9.3f ms %8.1f %s (best %8.1f) | probe med %7.1f best %7.1f | ratio med %5.1f%% best %5.1f%%\n",
           label, shape, med * 1e3, work / med, compute ? "GFLOP/s" : "GB/s   ", work / best, pmed, pbest,
           100.0 * work / med / pmed, 100.0 * work / best / pbest);
    fflush(stdout);
}

typedef struct op_arg {
    hb_instance *inst;
    hb_case c;
    hb_buf in[3], out;
    hb_buf *inp[3];
} op_arg;

static void run_op(void *p)
{
    op_arg *a = p;
    hb_status st = a->inst->ops->run(a->inst, &a->c, a->inp, &a->out);
    if (st != HB_OK) {
        fprintf(stderr, "run failed: %d\n", (int)st);
        exit(1);
    }
}

typedef struct conv_arg {
    void *dst, *src;
    hb_elem dt, st;
    size_t n;
} conv_arg;
static void run_conv(void *p)
{
    conv_arg *a = p;
    hb_convert(a->dst, a->dt, a->src, a->st, a->n);
}

static void measure_op(hb_instance *inst, hb_op op, const char *shape, const char *label)
{
    op_arg a;
    char err[200];
    memset(&a, 0, sizeof a);
    a.inst = inst;
    a.c.op = op;
    a.c.dtype = HB_F32;
    a.c.mode = HB_MODE_F32;
    a.c.route = HB_ROUTE_PAGEABLE;
    if (hb_shape_parse(shape, &a.c.shape, err, sizeof err) || hb_shape_normalize(op, &a.c.shape, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", shape, err);
        return;
    }
    const int nin = hb_op_get(op)->ninputs;
    unsigned seed = 1;
    for (int i = 0; i < nin; i++) {
        int64_t n = hb_op_input_elems(op, &a.c.shape, i);
        if (inst->ops->buf_alloc(inst, (size_t)n * 4, HB_ROUTE_PAGEABLE, &a.in[i]) != HB_OK) {
            fprintf(stderr, "alloc failed\n");
            return;
        }
        float *f = a.in[i].host;
        for (int64_t j = 0; j < n; j++) {
            seed = seed * 1664525u + 1013904223u;
            f[j] = (float)(seed >> 8) * 0x1p-23f - 1.0f;
        }
        a.inp[i] = &a.in[i];
    }
    int64_t no = hb_op_output_elems(op, &a.c.shape);
    inst->ops->buf_alloc(inst, (size_t)no * 4, HB_ROUTE_PAGEABLE, &a.out);
    const int cb = hb_op_get(op)->compute_bound;
    double med, best, pmed, pbest;
    time_pair(run_op, &a, cb, &med, &best, &pmed, &pbest);
    double work = cb ? hb_op_flops(op, &a.c.shape) * 1e-9 : hb_op_bytes(op, &a.c.shape, 4) * 1e-9;
    print_row(label, shape, work, cb, med, best, pmed, pbest);
    for (int i = 0; i < nin; i++)
        inst->ops->buf_free(inst, &a.in[i]);
    inst->ops->buf_free(inst, &a.out);
}

static void measure_convert(hb_instance *inst, hb_elem dt, hb_elem st, size_t n, const char *label)
{
    hb_buf d, s;
    inst->ops->buf_alloc(inst, n * hb_elem_size(dt), HB_ROUTE_PAGEABLE, &d);
    inst->ops->buf_alloc(inst, n * hb_elem_size(st), HB_ROUTE_PAGEABLE, &s);
    if (st == HB_ELEM_F64)
        for (size_t i = 0; i < n; i++)
            ((double *)s.host)[i] = (double)i * 1e-3;
    else if (st == HB_ELEM_F32)
        for (size_t i = 0; i < n; i++)
            ((float *)s.host)[i] = (float)i * 1e-3f;
    conv_arg a = { d.host, s.host, dt, st, n };
    double med, best, pmed, pbest;
    time_pair(run_conv, &a, 0, &med, &best, &pmed, &pbest);
    double gb = (double)n * (double)(hb_elem_size(dt) + hb_elem_size(st)) * 1e-9;
    char sh[64];
    snprintf(sh, sizeof sh, "n=%zu", n);
    print_row(label, sh, gb, 0, med, best, pmed, pbest);
    inst->ops->buf_free(inst, &d);
    inst->ops->buf_free(inst, &s);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : "";
    hb_instance inst;
    char reason[200];
    memset(&inst, 0, sizeof inst);
    if (hb_cpu_ops.enumerate(&inst, 1, reason, sizeof reason) != 1) {
        fprintf(stderr, "cpu backend: %s\n", reason);
        return 1;
    }
    printf("# %s\n", inst.description);
    hb_ceiling cl[8];
    int ncl = hb_cpu_ceilings(cl, 8);
    for (int i = 0; i < ncl; i++)
        printf("# ceiling %s = %.1f %s (%s)\n", cl[i].name, cl[i].value, cl[i].unit, cl[i].how);
    probes_init();
    static const struct { hb_op op; const char *shape, *label; } cases[] = {
        { HB_OP_MATMUL, "m=1024 n=1024 k=1024", "matmul" },
        { HB_OP_MATMUL, "m=2048 n=2048 k=2048", "matmul" },
        { HB_OP_MATMUL, "m=4096 n=4096 k=4096", "matmul" },
        { HB_OP_CONV2D, "batch=1 c=64 h=56 w=56 oc=64 kh=3 ph=1", "conv2d res2 3x3" },
        { HB_OP_CONV2D, "batch=2 c=64 h=56 w=56 oc=64 kh=3 ph=1", "conv2d res2 3x3" },
        { HB_OP_CONV2D, "batch=4 c=64 h=56 w=56 oc=64 kh=3 ph=1", "conv2d res2 3x3" },
        { HB_OP_CONV2D, "batch=8 c=64 h=56 w=56 oc=64 kh=3 ph=1", "conv2d res2 3x3" },
        { HB_OP_CONV2D, "batch=1 c=128 h=28 w=28 oc=128 kh=3 ph=1", "conv2d res3 3x3" },
        { HB_OP_CONV2D, "batch=2 c=128 h=28 w=28 oc=128 kh=3 ph=1", "conv2d res3 3x3" },
        { HB_OP_CONV2D, "batch=4 c=128 h=28 w=28 oc=128 kh=3 ph=1", "conv2d res3 3x3" },
        { HB_OP_CONV2D, "batch=8 c=128 h=28 w=28 oc=128 kh=3 ph=1", "conv2d res3 3x3" },
        { HB_OP_CONV2D, "batch=1 c=256 h=14 w=14 oc=256 kh=3 ph=1", "conv2d res4 3x3" },
        { HB_OP_CONV2D, "batch=2 c=256 h=14 w=14 oc=256 kh=3 ph=1", "conv2d res4 3x3" },
        { HB_OP_CONV2D, "batch=4 c=256 h=14 w=14 oc=256 kh=3 ph=1", "conv2d res4 3x3" },
        { HB_OP_CONV2D, "batch=8 c=256 h=14 w=14 oc=256 kh=3 ph=1", "conv2d res4 3x3" },
        { HB_OP_CONV2D, "batch=1 c=512 h=7 w=7 oc=512 kh=3 ph=1", "conv2d res5 3x3" },
        { HB_OP_CONV2D, "batch=2 c=512 h=7 w=7 oc=512 kh=3 ph=1", "conv2d res5 3x3" },
        { HB_OP_CONV2D, "batch=4 c=512 h=7 w=7 oc=512 kh=3 ph=1", "conv2d res5 3x3" },
        { HB_OP_CONV2D, "batch=8 c=512 h=7 w=7 oc=512 kh=3 ph=1", "conv2d res5 3x3" },
        { HB_OP_ATTENTION, "batch=1 heads=32 seq=512 head_dim=64", "attention" },
        { HB_OP_ATTENTION, "batch=1 heads=32 seq=512 head_dim=64 causal=1", "attention causal" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strstr(cases[i].label, filter))
            measure_op(&inst, cases[i].op, cases[i].shape, cases[i].label);
    /* memory-bound cases: f32 tensors of 4x the last-level cache (128 MiB at least) */
    size_t llc = hb_cpu_llc_bytes();
    const long long big = (long long)((4 * llc < ((size_t)128 << 20) ? ((size_t)128 << 20) : 4 * llc) / 4);
    char sh[160];
    static const struct { hb_op op; const char *fmt, *label; long long div; } mem[] = {
        { HB_OP_ADD, "n=%lld", "add 4xLLC", 1 },
        { HB_OP_MUL, "n=%lld", "mul 4xLLC", 1 },
        { HB_OP_RELU, "n=%lld", "relu 4xLLC", 1 },
        { HB_OP_GELU, "n=%lld", "gelu 4xLLC", 1 },
        { HB_OP_SILU, "n=%lld", "silu 4xLLC", 1 },
        { HB_OP_SUM, "rows=%lld cols=4096", "sum rows 4xLLC", 4096 },
        { HB_OP_MAX, "rows=%lld cols=4096", "max rows 4xLLC", 4096 },
        { HB_OP_SUM_ALL, "n=%lld", "sum_all 4xLLC", 1 },
        { HB_OP_RMSNORM, "rows=%lld cols=2048", "rmsnorm 4xLLC", 2048 },
        { HB_OP_MAXPOOL, "batch=%lld c=64 h=112 w=112 kh=3 sh=2 ph=1", "maxpool resnet pool1", 64 * 112 * 112 },
        { HB_OP_AVGPOOL, "batch=%lld c=64 h=112 w=112 kh=3 sh=2 ph=1", "avgpool 3x3 s2", 64 * 112 * 112 },
        { HB_OP_AVGPOOL, "batch=%lld c=2048 h=7 w=7 kh=7", "avgpool resnet pool5", 2048 * 7 * 7 },
    };
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        if (!strstr(mem[i].label, filter))
            continue;
        snprintf(sh, sizeof sh, mem[i].fmt, (big + mem[i].div - 1) / mem[i].div);
        measure_op(&inst, mem[i].op, sh, mem[i].label);
    }
    const size_t bigc = (size_t)big; /* f64 in 8*bigc bytes, f32 out 4*bigc */
    if (strstr("convert", filter) || strstr(filter, "convert")) {
        measure_convert(&inst, HB_ELEM_F32, HB_ELEM_F64, bigc, "convert f64->f32");
        measure_convert(&inst, HB_ELEM_F64, HB_ELEM_F32, bigc, "convert f32->f64");
        measure_convert(&inst, HB_ELEM_F16, HB_ELEM_F32, bigc, "convert f32->f16");
        measure_convert(&inst, HB_ELEM_BF16, HB_ELEM_F32, bigc, "convert f32->bf16");
    }
    inst.ops->close(&inst);
    return 0;
}
