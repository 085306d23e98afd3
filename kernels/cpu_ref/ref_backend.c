/*
 * ref_backend.c - the "cpu-ref" backend: the f64 reference (ref.c) behind the backend interface,
 * so that the driver can time it and run it through the same code path as every other backend.
 *
 * One instance, "cpu-ref". Host memory: buffers are 64-byte aligned host memory with dev == host,
 * upload/download do nothing. run converts the f32 inputs to f64 temporaries (hb_convert), calls
 * hb_ref_compute with row_step 1 (every output element) and rounds the result to f32 into the
 * output buffer; the temporaries are allocated and freed inside run, so the timing includes them.
 * Supports compute dtype f32 and, for matmul, the quantized dtypes (q8_0, q4_k, q5_k, q6_k: input 1
 * holds the weight's blocks, W[n,k], dequantized into the f64 temporary by hb_quant_dequantize_f64,
 * then C = A x W^T in f64; core/quant.h), route pageable only; everything else is HB_ESKIP.
 * No ceilings hook: the host ceilings belong to the "cpu" backend.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/convert.h"
#include "core/quant.h"
#include "cpu/cpu.h"
#include "cpu/hostmem.h"
#include "cpu_ref/kshape.h"
#include "cpu_ref/ref.h"

/* The f64 copies of a case's operands (inputs, then the output) live as long as the case's buffers:
 * allocated at the first call, grown when a call needs more, freed with the case's last buffer.
 * Allocating them in every call put fresh-page faults (mmap'd blocks) inside the timed compute: in a
 * --quick pass of cpu-ref on the 2-core VM, page clearing and faults were 22% of perf's samples, and
 * the pass's system time fell from 30 s to 9 s with the copies kept. */
typedef struct ref_ctx {
    int64_t allocated; /* bytes currently allocated through buf_alloc */
    double *scratch[HB_MAX_INPUTS + 1]; /* slot i's array: base[i] + ref_slot_offset(i) */
    void *base[HB_MAX_INPUTS + 1];      /* what aligned_alloc returned (freed) */
    size_t cap[HB_MAX_INPUTS + 1];      /* elements */
} ref_ctx;

/* Where slot i starts within its page: 4096-byte aligned plus i x 1088 bytes (17 cache lines), so
 * that every process places the arrays alike. malloc put them wherever the heap happened to be
 * (16-byte aligned, and from mmap or the heap by size and by glibc's moving mmap threshold): the
 * f64 matmul 128^3 of `--quick` then ran in 177-184 us in some processes and 221-244 us in others
 * (8 processes on the 2-core VM; vector loads split across cache lines and the arrays' 4 KiB
 * aliasing change with the offsets). The stagger keeps the operands' loads and the output's stores
 * at different offsets within a page (4K aliasing: a load that matches an earlier store's low 12
 * address bits waits for it). */
static size_t ref_slot_offset(int i) { return (size_t)i * 1088u % 4096u; }

static void scratch_release(ref_ctx *ctx)
{
    for (int i = 0; i <= HB_MAX_INPUTS; i++) {
        free(ctx->base[i]);
        ctx->base[i] = NULL;
        ctx->scratch[i] = NULL;
        ctx->cap[i] = 0;
    }
}

/* slot i's scratch of at least n doubles, or NULL (out of memory or an n beyond size_t) */
static double *scratch_get(ref_ctx *ctx, int i, size_t n)
{
    if (ctx->cap[i] < n) {
        free(ctx->base[i]);
        ctx->base[i] = NULL;
        ctx->scratch[i] = NULL;
        ctx->cap[i] = 0;
        if (n > (SIZE_MAX - 8192) / sizeof(double))
            return NULL;
        const size_t bytes = (n * sizeof(double) + ref_slot_offset(i) + 4095) / 4096 * 4096;
        ctx->base[i] = aligned_alloc(4096, bytes);
        if (ctx->base[i]) {
            ctx->scratch[i] = (double *)((char *)ctx->base[i] + ref_slot_offset(i));
            ctx->cap[i] = n;
        }
    }
    return ctx->scratch[i];
}

static int ref_enumerate(hb_instance *out, int max, char *reason, size_t reasonlen)
{
    if (max < 1 || !out) {
        snprintf(reason, reasonlen, "no room for an instance");
        return 0;
    }
    ref_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(reason, reasonlen, "out of memory");
        return 0;
    }
    snprintf(out[0].name, sizeof out[0].name, "cpu-ref");
    snprintf(out[0].description, sizeof out[0].description,
             "f64 reference, plain C loops, OpenMP %d threads", omp_get_max_threads());
    out[0].host_memory = 1;
    out[0].ops = &hb_cpu_ref_ops;
    out[0].ctx = ctx;
    return 1;
}

static void ref_close(hb_instance *inst)
{
    if (inst) {
        if (inst->ctx) scratch_release(inst->ctx);
        free(inst->ctx);
        inst->ctx = NULL;
    }
}

/* Shape check shared with run: 0 when the reference can compute this shape. */
static int ref_shape_ok(const hb_case *c)
{
    const hb_shape *s = &c->shape;
    hbk_conv p;
    hbk_attn a;
    switch (c->op) {
    case HB_OP_CONV2D: return hbk_conv_params(s, 0, &p) == 0;
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL: return hbk_conv_params(s, 1, &p) == 0;
    case HB_OP_ATTENTION: return hbk_attn_params(s, &a) == 0;
    case HB_OP_CHAIN: return 0; /* never a backend case: the driver runs its ops one by one */
    case HB_OP_ALL_REDUCE: case HB_OP_ALL_GATHER: case HB_OP_REDUCE_SCATTER: case HB_OP_BROADCAST:
        return 0; /* collectives need a communicator: the cuda backend's (NCCL) */
    default: return (unsigned)c->op < HB_OP_COUNT;
    }
}

static hb_status ref_supports(hb_instance *inst, const hb_case *c, char *reason, size_t reasonlen)
{
    (void)inst;
    if (hb_dtype_is_quant(c->dtype) && c->op != HB_OP_MATMUL && c->op != HB_OP_DEQUANTIZE) {
        snprintf(reason, reasonlen, "cpu-ref computes quantized weights for matmul and dequantize only");
        return HB_ESKIP;
    }
    if (!hb_quant_blocks_whole(c, reason, reasonlen)) return HB_ESKIP;
    if (c->op == HB_OP_DEQUANTIZE && !hb_dtype_is_quant(c->dtype)) {
        snprintf(reason, reasonlen, "dequantize takes a quantized dtype");
        return HB_ESKIP;
    }
    if (c->dtype != HB_F32 && !hb_dtype_is_quant(c->dtype)) {
        snprintf(reason, reasonlen, "cpu-ref computes f32 cases (and matmul with quantized weights) only (in f64)");
        return HB_ESKIP;
    }
    if (c->route != HB_ROUTE_PAGEABLE) {
        snprintf(reason, reasonlen, "host-memory backend: no transfer routes");
        return HB_ESKIP;
    }
    if (hb_op_is_collective(c->op)) {
        snprintf(reason, reasonlen, "collectives need a communicator across devices: the cuda backend's (NCCL); "
                 "cpu-ref computes their reference only");
        return HB_ESKIP;
    }
    if (!ref_shape_ok(c)) {
        snprintf(reason, reasonlen, "shape not computable (sizes, groups or heads inconsistent)");
        return HB_ESKIP;
    }
    return HB_OK;
}

static hb_status ref_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out)
{
    ref_ctx *ctx = inst->ctx;
    return hb_host_buf_alloc(ctx ? &ctx->allocated : NULL, bytes, route, out);
}

static void ref_buf_free(hb_instance *inst, hb_buf *b)
{
    ref_ctx *ctx = inst->ctx;
    hb_host_buf_free(ctx ? &ctx->allocated : NULL, b);
    if (ctx && ctx->allocated <= 0) scratch_release(ctx); /* the case's last buffer */
}

static hb_status ref_run(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    ref_ctx *ctx = inst->ctx;
    const int qi = hb_quant_input(c->op, c->dtype);
    if ((c->dtype != HB_F32 && qi < 0) || (c->op == HB_OP_DEQUANTIZE && qi < 0) || c->route != HB_ROUTE_PAGEABLE)
        return HB_ESKIP;
    if ((unsigned)c->op >= HB_OP_COUNT || !ref_shape_ok(c) || !out)
        return HB_EINVAL;
    const int nin = hb_op_get(c->op)->ninputs;
    double *din[HB_MAX_INPUTS] = { NULL, NULL, NULL };
    double *dout = NULL;
    hb_status st = HB_OK;
    for (int i = 0; i < nin; i++) {
        int64_t n = hb_op_input_elems(c->op, &c->shape, i);
        const size_t need = hb_case_input_bytes(c, i); /* a quantized weight: its blocks */
        if (n <= 0 || need == 0 || !in[i] || in[i]->bytes < need) {
            st = HB_EINVAL;
            goto done;
        }
        din[i] = ctx ? scratch_get(ctx, i, (size_t)n) : NULL;
        if (!din[i]) {
            st = HB_ENOMEM;
            goto done;
        }
        if (i == qi)
            st = hb_quant_dequantize_f64(c->dtype, in[i]->host, din[i], n);
        else
            hb_convert(din[i], HB_ELEM_F64, in[i]->host, HB_ELEM_F32, (size_t)n);
        if (st != HB_OK)
            goto done;
    }
    int64_t no = hb_op_output_elems(c->op, &c->shape);
    if (no <= 0 || out->bytes < (size_t)no * sizeof(float)) {
        st = HB_EINVAL;
        goto done;
    }
    dout = ctx ? scratch_get(ctx, HB_MAX_INPUTS, (size_t)no) : NULL;
    if (!dout) {
        st = HB_ENOMEM;
        goto done;
    }
    st = hb_ref_compute(c, (const double *const *)din, dout, 1);
    if (st == HB_OK)
        hb_convert(out->host, HB_ELEM_F32, dout, HB_ELEM_F64, (size_t)no);
done:
    return st;
}

static void ref_mem_info(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b)
{
    ref_ctx *ctx = inst->ctx;
    if (allocated)
        *allocated = ctx ? ctx->allocated : -1;
    if (free_b)
        *free_b = -1;
    if (total_b)
        *total_b = -1;
}

/* impl for the record (lifted by the driver): the f64 reference loops (ref.c) */
static hb_status ref_case_info(hb_instance *inst, const hb_case *c, char *buf, size_t len)
{
    (void)inst;
    (void)c;
    snprintf(buf, len, "{\"impl\":\"cpu-ref\"}");
    return HB_OK;
}

/* impl_of (backend.h): the one implementation, as ref_case_info names it */
static const char *ref_impl_of(hb_instance *inst, const hb_case *c)
{
    (void)inst;
    (void)c;
    return "cpu-ref";
}

static hb_status ref_describe(hb_instance *inst, char *buf, size_t len)
{
    (void)inst;
    snprintf(buf, len, "{\"impl\":\"plain C loops, f64 accumulation\",\"omp_threads\":%d}",
             omp_get_max_threads());
    return HB_OK;
}

/* Cold compute: the host caches are evicted as for the cpu backend (cpu_sys.c). */
static void ref_flush_cache(hb_instance *inst)
{
    (void)inst;
    hb_host_flush_cache();
}

const hb_backend_ops hb_cpu_ref_ops = {
    .abi = HB_BACKEND_ABI,
    .type = "cpu-ref",
    .enumerate = ref_enumerate,
    .close = ref_close,
    .supports = ref_supports,
    .buf_alloc = ref_buf_alloc,
    .buf_free = ref_buf_free,
    .upload = hb_host_noop,
    .download = hb_host_noop,
    .run = ref_run,
    .mem_info = ref_mem_info,
    .describe = ref_describe,
    .case_info = ref_case_info,
    .impl_of = ref_impl_of,
    .flush_cache = ref_flush_cache,
};
