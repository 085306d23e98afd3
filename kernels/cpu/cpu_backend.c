/*
 * cpu_backend.c - the "cpu" backend: f32 kernels on the host (cpu_kernels.c and the kernel files beside it) with OpenMP threads
 * bound one per core by hwloc and OpenBLAS for the matrix products.
 *
 * One instance, "cpu". Host memory: buffers are 64-byte aligned, first-touched by the threads
 * (hostmem.c), dev == host, upload/download do nothing. Compute dtype f32, and for matmul the
 * quantized dtypes (q8_0, q4_k, q5_k, q6_k: fused kernels of cpu_qmatmul.c); route pageable only;
 * other dtypes and routes are HB_ESKIP. No device timer: the driver's monotonic clock times run.
 * Ceilings: hb_cpu_ceilings (STREAM copy/triad, sgemm probe), measured when the driver asks.
 */
#include <jansson.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

#include "core/backend.h"
#include "cpu/cpu.h"
#include "cpu/cpu_priv.h"
#include "cpu/hostmem.h"

typedef struct cpu_ctx {
    int threads;
    int calibrated;               /* 1 when cal holds a measurement */
    hb_cpu_calibration cal;       /* thread thresholds measured at open */
    int64_t allocated;  /* bytes currently allocated through buf_alloc */
} cpu_ctx;

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = 0;
    size_t i = 0;
    while (s[i] == ' ')
        i++;
    if (i)
        memmove(s, s + i, n - i + 1);
}

/* NULL, or a warning when OpenBLAS runs kernels older than the CPU: a DYNAMIC_ARCH build that does
 * not know the CPU model falls back to a generic core (0.3.21 took a Sapphire Rapids Xeon for a
 * Prescott and ran sgemm at ~4% of the machine). The fix is OPENBLAS_CORETYPE, read at load time. */
static const char *openblas_core_warning(void)
{
    static const char *old_cores[] = { "Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Sandybridge",
                                       "Katmai", "Coppermine", "Northwood", "Banias", "Opteron", "Barcelona" };
    const char *core = openblas_get_corename();
    if (!core || !__builtin_cpu_supports("avx2"))
        return NULL;
    for (size_t i = 0; i < sizeof old_cores / sizeof old_cores[0]; i++)
        if (!strcasecmp(core, old_cores[i]))
            return "OpenBLAS runs pre-AVX2 kernels on an AVX2 CPU (it did not recognize the model); "
                   "set OPENBLAS_CORETYPE (Haswell, SkylakeX, Zen) and run again";
    return NULL;
}

static int cpu_enumerate(hb_instance *out, int max, char *reason, size_t reasonlen)
{
    if (max < 1 || !out) {
        snprintf(reason, reasonlen, "no room for an instance");
        return 0;
    }
    cpu_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(reason, reasonlen, "out of memory");
        return 0;
    }
    ctx->threads = hb_cpu_bind_threads();
    /* from which sizes threads pay (elementwise, sgemm, sgemv): measured now, on the bound threads */
    ctx->calibrated = hb_cpu_kernel_calibrate(&ctx->cal) == HB_OK;
    /* the library loaded at run time (not the header's OPENBLAS_VERSION): its first two words,
     * "OpenBLAS 0.3.21" */
    char cfg[64];
    snprintf(cfg, sizeof cfg, "%s", openblas_get_config());
    trim(cfg);
    char *sp = strchr(cfg, ' ');
    if (sp && (sp = strchr(sp + 1, ' ')))
        *sp = 0;
    snprintf(out[0].name, sizeof out[0].name, "cpu");
    snprintf(out[0].description, sizeof out[0].description, "%s, %d cores / %s (%s)", hb_cpu_model(),
             ctx->threads, cfg, openblas_get_corename());
    const char *warn = openblas_core_warning();
    if (warn) {
        size_t dl = strlen(out[0].description);
        snprintf(out[0].description + dl, sizeof out[0].description - dl, " [WARNING: pre-AVX2 OpenBLAS kernels; set OPENBLAS_CORETYPE]");
        fprintf(stderr, "hybench: cpu: WARNING: %s\n", warn);
    }
    out[0].host_memory = 1;
    out[0].ops = &hb_cpu_ops;
    out[0].ctx = ctx;
    return 1;
}

static void cpu_close(hb_instance *inst)
{
    if (!inst || !inst->ctx)
        return;
    cpu_ctx *ctx = inst->ctx;
    hb_cpu_kernel_release();
    gemm_release(); /* oneDNN's cached primitives (cpu_dnnl_gemm.c, cpu_dnnl.c), then its engine */
    conv_release();
    dnnl_engine_release();
    free(ctx);
    inst->ctx = NULL;
}

static hb_status cpu_supports(hb_instance *inst, const hb_case *c, char *reason, size_t reasonlen)
{
    (void)inst;
    if (hb_dtype_is_quant(c->dtype)) {
        if (c->route != HB_ROUTE_PAGEABLE) {
            snprintf(reason, reasonlen, "host-memory backend: no transfer routes");
            return HB_ESKIP;
        }
        return c->op == HB_OP_DEQUANTIZE ? hb_cpu_dequant_check(c, reason, reasonlen) : hb_cpu_qmatmul_check(c, reason, reasonlen);
    }
    if (c->dtype != HB_F32) {
        snprintf(reason, reasonlen, "cpu backend computes in f32 (and matmul with quantized weights) only");
        return HB_ESKIP;
    }
    if (c->route != HB_ROUTE_PAGEABLE) {
        snprintf(reason, reasonlen, "host-memory backend: no transfer routes");
        return HB_ESKIP;
    }
    return hb_cpu_kernel_check(c, reason, reasonlen);
}

static hb_status cpu_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out)
{
    cpu_ctx *ctx = inst->ctx;
    return hb_host_buf_alloc(ctx ? &ctx->allocated : NULL, bytes, route, out);
}

static void cpu_buf_free(hb_instance *inst, hb_buf *b)
{
    cpu_ctx *ctx = inst->ctx;
    hb_host_buf_free(ctx ? &ctx->allocated : NULL, b);
}

static hb_status cpu_run(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    (void)inst;
    if (hb_dtype_is_quant(c->dtype) && c->op == HB_OP_DEQUANTIZE && c->route == HB_ROUTE_PAGEABLE) {
        /* blocks in, f32 out (cpu_dequant.c) */
        const size_t wb = hb_case_input_bytes(c, 0);
        if (wb == 0 || !in[0] || !in[0]->host || in[0]->bytes < wb || !out || !out->host || out->bytes < (size_t)c->shape.n * sizeof(float))
            return HB_EINVAL;
        return hb_cpu_dequant_run(c, in[0]->host, out->host);
    }
    if (hb_dtype_is_quant(c->dtype) && c->op == HB_OP_MATMUL && c->route == HB_ROUTE_PAGEABLE) {
        /* A f32, W its blocks, C f32 (cpu_qmatmul.c) */
        const int64_t na = hb_op_input_elems(c->op, &c->shape, 0), no = hb_op_output_elems(c->op, &c->shape);
        const size_t wb = hb_case_input_bytes(c, 1);
        if (na <= 0 || no <= 0 || wb == 0 || !in[0] || !in[1] || !out || !in[0]->host || !in[1]->host || !out->host ||
            in[0]->bytes < (size_t)na * sizeof(float) || in[1]->bytes < wb || out->bytes < (size_t)no * sizeof(float))
            return HB_EINVAL;
        return hb_cpu_qmatmul_run(c, in[0]->host, in[1]->host, out->host, -1);
    }
    if (c->dtype != HB_F32 || c->route != HB_ROUTE_PAGEABLE)
        return HB_ESKIP;
    if ((unsigned)c->op >= HB_OP_COUNT || !out || !out->host)
        return HB_EINVAL;
    const int nin = hb_op_get(c->op)->ninputs;
    const float *fin[HB_MAX_INPUTS] = { NULL, NULL, NULL };
    for (int i = 0; i < nin; i++) {
        int64_t n = hb_op_input_elems(c->op, &c->shape, i);
        if (n <= 0 || !in[i] || !in[i]->host || in[i]->bytes < (size_t)n * sizeof(float))
            return HB_EINVAL;
        fin[i] = in[i]->host;
    }
    int64_t no = hb_op_output_elems(c->op, &c->shape);
    if (no <= 0 || out->bytes < (size_t)no * sizeof(float))
        return HB_EINVAL;
    return hb_cpu_kernel_run(c, fin, out->host);
}

static int cpu_ceilings(hb_instance *inst, hb_ceiling *out, int max)
{
    (void)inst;
    return hb_cpu_ceilings(out, max);
}

static void cpu_mem_info(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b)
{
    cpu_ctx *ctx = inst->ctx;
    if (allocated)
        *allocated = ctx ? ctx->allocated : -1;
    if (free_b)
        *free_b = -1;
    if (total_b)
        *total_b = -1;
}

static hb_status cpu_case_info(hb_instance *inst, const hb_case *c, char *buf, size_t len)
{
    cpu_ctx *ctx = inst->ctx;
    if (hb_dtype_is_quant(c->dtype)) { /* the fused kernels, on the whole team (cpu_qmatmul.c); dequantize (cpu_dequant.c) */
        snprintf(buf, len, "{\"impl\":\"%s\",\"threads\":%d}", c->op == HB_OP_DEQUANTIZE ? "own-dequant-omp" : hb_cpu_qmatmul_impl(c),
                 ctx ? ctx->threads : 0);
        return HB_OK;
    }
    json_t *o = json_pack("{s:s, s:i}", "impl", hb_cpu_kernel_impl(c), "threads", ctx ? hb_cpu_kernel_threads(c) : 0);
    /* conv2d: how the shape's path (oneDNN or the own im2col + sgemm) was chosen */
    if (o && c->op == HB_OP_CONV2D && conv_note(c))
        json_object_set_new(o, "conv_choice", json_string(conv_note(c)));
    /* matmul/bmm: how the shape's path (OpenBLAS or oneDNN) was chosen */
    if (o && (c->op == HB_OP_MATMUL || c->op == HB_OP_BMM) && gemm_note(c))
        json_object_set_new(o, "gemm_choice", json_string(gemm_note(c)));
    char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!txt)
        return HB_ENOMEM;
    snprintf(buf, len, "%s", txt);
    free(txt);
    return HB_OK;
}

/* impl_of (backend.h): the path without the per-shape timed choice (hb_cpu_kernel_path); the
 * quantized cases as case_info names them */
static const char *cpu_impl_of(hb_instance *inst, const hb_case *c)
{
    (void)inst;
    if (hb_dtype_is_quant(c->dtype))
        return c->op == HB_OP_DEQUANTIZE ? "own-dequant-omp" : hb_cpu_qmatmul_impl(c);
    return hb_cpu_kernel_path(c);
}

static hb_status cpu_describe(hb_instance *inst, char *buf, size_t len)
{
    cpu_ctx *ctx = inst->ctx;
    static const char *par[] = { "sequential", "pthreads", "openmp" };
    int pi = openblas_get_parallel();
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:I, s:s}",
                          "cpu_model", hb_cpu_model(),
                          "openblas_config", openblas_get_config(),
                          "openblas_corename", openblas_get_corename(),
                          "openblas_threads", openblas_get_num_threads(),
                          "omp_threads", ctx ? ctx->threads : omp_get_max_threads(),
                          "hwloc_cores", hb_cpu_ncores(),
                          "llc_bytes", (json_int_t)hb_cpu_llc_bytes(),
                          "openblas_parallel", (pi >= 0 && pi <= 2) ? par[pi] : "unknown");
    if (o && ctx && ctx->calibrated) {
        /* thread thresholds measured at open (hb_cpu_kernel_calibrate) */
        json_t *cal = json_pack("{s:s, s:i, s:[I,I], s:f, s:f}", "how",
                                "best of 7 per thread count (1, 2, 4, ..., all; sgemm also rows split over "
                                "OpenMP threads), in cache, measured when the backend opened",
                                "threads", ctx->cal.threads, "ew_par_min_elems", (json_int_t)ctx->cal.ew_par_min[0],
                                (json_int_t)ctx->cal.ew_par_min[1], "gemm_par_min_flops", ctx->cal.gemm_par_flops,
                                "gemv_par_min_flops", ctx->cal.gemv_par_flops);
        if (cal && ctx->cal.ew_threads[0][0] > 0) {
            /* the choice per size: elementwise threads for n = 4096 << j; sgemm plans for n^3
             * (negative: rows split over that many OpenMP threads), sgemv threads for 1 x n x n */
            json_t *ew = json_array(), *gm = json_array(), *gv = json_array();
            for (int cls = 0; cls < 2; cls++) {
                json_t *row = json_array();
                for (int j = 0; j < HB_CPU_CAL_EW; j++)
                    json_array_append_new(row, json_integer(ctx->cal.ew_threads[cls][j]));
                json_array_append_new(ew, row);
            }
            for (int j = 0; j < HB_CPU_CAL_GEMM; j++)
                json_array_append_new(gm, json_integer(ctx->cal.gemm_plan[j]));
            for (int j = 0; j < HB_CPU_CAL_GEMV; j++)
                json_array_append_new(gv, json_integer(ctx->cal.gemv_plan[j]));
            json_object_set_new(cal, "ew_threads", ew);
            json_object_set_new(cal, "ew_sizes", json_string("4096 << j"));
            json_object_set_new(cal, "gemm_plan", gm);
            json_object_set_new(cal, "gemm_sizes", json_pack("[i,i,i,i,i,i,i,i,i]", 16, 24, 32, 48, 64, 96, 128, 192, 256));
            json_object_set_new(cal, "gemv_threads", gv);
            json_object_set_new(cal, "gemv_sizes", json_pack("[i,i,i,i,i]", 128, 256, 512, 1024, 2048));
        }
        if (cal)
            json_object_set_new(o, "thread_thresholds", cal);
    }
    char dv[96];
    if (o)
        json_object_set_new(o, "onednn_version", json_string(conv_dnnl_version(dv, sizeof dv)));
    if (o && openblas_core_warning())
        json_object_set_new(o, "warning", json_string(openblas_core_warning()));
    char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!txt)
        return HB_ENOMEM;
    if (strlen(txt) >= len) {
        free(txt);
        return HB_EINVAL;
    }
    snprintf(buf, len, "%s", txt);
    free(txt);
    return HB_OK;
}

/* Evict the caches before a cold compute (cpu_sys.c, shared with cpu-ref). */
static void cpu_flush_cache(hb_instance *inst)
{
    (void)inst;
    hb_host_flush_cache();
}

const hb_backend_ops hb_cpu_ops = {
    .abi = HB_BACKEND_ABI,
    .type = "cpu",
    .enumerate = cpu_enumerate,
    .configure = hb_cpu_set_cfg,
    .close = cpu_close,
    .supports = cpu_supports,
    .buf_alloc = cpu_buf_alloc,
    .buf_free = cpu_buf_free,
    .upload = hb_host_noop,
    .download = hb_host_noop,
    .run = cpu_run,
    .ceilings = cpu_ceilings,
    .mem_info = cpu_mem_info,
    .case_info = cpu_case_info,
    .impl_of = cpu_impl_of,
    .describe = cpu_describe,
    .flush_cache = cpu_flush_cache,
};
