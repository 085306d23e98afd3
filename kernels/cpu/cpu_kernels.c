/*
 * cpu_kernels.c - the f32 kernels of the "cpu" backend (cpu_priv.h): the dispatch (check, impl, threads,
 * run). The kernels themselves: cpu_ew.c (elementwise, reductions), cpu_gemm.c (matmul, bmm), cpu_conv.c
 * (pooling, conv2d), cpu_attn.c (attention), cpu_calibrate.c, cpu_blas.c (OpenBLAS threading),
 * cpu_scratch.c (per-thread scratch). What each does:
 *
 * matmul/bmm:  OpenBLAS cblas_sgemm, row-major; cblas_sgemv when m or n is 1. A product below the
 *              thread threshold measured when the backend opens (hb_cpu_kernel_calibrate: one
 *              thread against all, sgemm n = 16..256, sgemv n = 128..2048) runs on one thread.
 *              bmm runs one single-threaded sgemm per OpenMP thread (parallel over the batch) when
 *              one matrix is below that threshold or there are at least as many matrices as threads
 *              (each at most 256^3); otherwise one after the other with OpenBLAS's own threads.
 *              (OpenBLAS 0.3.21 has no sgemm_batch.)
 *              Or oneDNN (dnnl_sgemm, or its matmul primitive, batched for bmm: cpu_dnnl_gemm.c), where a
 *              timed probe at the shape's first call found it faster; impl then reads "onednn-...".
 * conv2d:      lowered onto sgemm per image and group: y[b][g] (ocg x oh*ow) = W[g] (ocg x cg*kh*kw)
 *              x col (cg*kh*kw x oh*ow), col built by im2col; a 1x1 stride-1 unpadded convolution
 *              uses the input plane as col directly. The columns are cut into L2-sized blocks (or
 *              several small images are put side by side in one block), output channels into
 *              blocks when there is too little work otherwise; each (block, group, channel block)
 *              is one im2col + one single-threaded sgemm, spread over the OpenMP threads
 *              (conv_plan_make). Running OpenBLAS's threaded sgemm per image after a parallel
 *              im2col instead was 40x slower on 16 cores (the two thread pools fight).
 *              layout=nhwc: one sgemm per block of output pixels (batch merged) and group against the
 *              OHWI weights, after an NHWC im2col (none for 1x1 stride 1), output written in place
 *              (k_conv2d_nhwc).
 *              Or oneDNN's convolution (cpu_dnnl.c), where a timed probe at the shape's first call
 *              found it faster than the above; impl then reads "onednn:<oneDNN's impl name>".
 * attention:   fused and tiled (flash-attention style): per (batch, kv head, block of query rows
 *              of its query heads) one pass over the keys the causal mask lets the block see, in
 *              blocks, with an online softmax (running max and sum, the accumulator rescaled);
 *              S = Q K^T and P V by a register-blocked vector micro-kernel, exp by SLEEF's vector
 *              exp2f; items over the OpenMP threads (attn_body.h's header comment); 16 wide where
 *              the CPU has AVX-512F, chosen per call whatever -march the build used, else 8
 *              (cpu_attn.c).
 * elementwise, pooling, reductions: plain loops vectorized by the compiler (-O3 -march=native,
 *              `omp simd`) and split over threads with a static schedule; the elementwise ops are
 *              the rows of cpu_ew.c's kernel table (op, calibration class, SLEEF function, own
 *              loop). gelu and silu (and every row with a SLEEF function) use SLEEF's
 *              vector exp2f (3.5 ULP, ew_sleef; 16 wide from ew_avx512.c where the CPU has AVX-512,
 *              chosen at run time, else 8 wide where built for AVX2) where built with SLEEF (else a vectorizable Cephes expf
 *              polynomial, relative error ~1e-7) in the identities 0.5 x (1 + tanh(u)) =
 *              x / (1 + exp(-2u)) and silu(x) = x / (1 + exp(-x)). Elementwise ops run on one
 *              thread below the size measured at open (relu timed for the memory-bound rows,
 *              silu for the transcendental ones: 4 Ki..1 Mi elements, one thread against all).
 *              Sums accumulate blocks of 1024 elements in 64 f32 lanes and the block sums in f64.
 *
 * OpenBLAS threading: sgemm called from inside an OpenMP parallel region runs single-threaded (the
 * OpenMP build does so itself; a pthread build gets openblas_set_num_threads(1), restored after),
 * so BLAS never oversubscribes the cores the OpenMP threads hold; matmul and large bmm call the
 * threaded sgemm outside any region.
 *
 * Large outputs of elementwise ops (working set from the last-level cache or 32 MiB on, cpu_ew.c
 * ew_stream) and of rmsnorm (output from the last-level cache on; HB_CPU_NT_MIN for both) are
 * written with streaming stores. Scratch memory (im2col blocks, score tiles, pooling rows) is kept
 * per thread between calls and freed by hb_cpu_kernel_release. Environment knobs for measurements:
 * HB_CPU_NT_MIN (bytes or "off"; read once), HB_CPU_COL_KIB (im2col block KiB, default 512; read
 * once), HB_CPU_ATTN_TQ and HB_CPU_ATTN_TK (query rows per attention item and keys per block,
 * default 64 and 64; read per call), HB_CPU_ISA
 * (avx2: gelu/silu's 8-wide loop on an AVX-512 CPU; read once), HB_CPU_CONV (own, onednn, onednn-plain,
 * onednn-wany, onednn-any: conv2d's path forced instead of probed, cpu_dnnl.c; read per call),
 * HB_CPU_GEMM (openblas, onednn, onednn-sgemm, onednn-matmul: matmul/bmm's path, cpu_dnnl_gemm.c; read
 * per call), HB_CPU_ATTN_ISA (avx2: attention's 8-wide kernel on an AVX-512 CPU, cpu_attn.c; read per
 * call; when unset, HB_CPU_ISA=avx2 does the same for attention).
 */
#include <limits.h>
#include <omp.h>
#include <stdio.h>

#include "cpu/cpu_priv.h"
#include "core/opdesc.h"
#include "cpu_ref/kshape.h"

static inline int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* ------------------------------------------------------------------ dispatch --------- */

hb_status hb_cpu_kernel_check(const hb_case *c, char *reason, size_t reasonlen)
{
    const hb_shape *s = &c->shape;
    hbk_conv p;
    hbk_attn a;
    const char *why = NULL;
    if (hb_op_is_ew(c->op)) /* the elementwise ops: a row of cpu_ew.c's kernel table each */
        why = !ew_supported(c->op) ? "no cpu kernel for this elementwise op" : s->n <= 0 ? "n must be positive" : NULL;
    else switch (c->op) {
    case HB_OP_SUM_ALL:
        if (s->n <= 0)
            why = "n must be positive";
        break;
    case HB_OP_MATMUL:
    case HB_OP_BMM:
        if (s->m <= 0 || s->n <= 0 || s->k <= 0)
            why = "m, n, k must be positive";
        else if (!fits_int(s->m * s->k) || !fits_int(s->k * s->n) || !fits_int(s->m * s->n))
            why = "matrix larger than the BLAS 32-bit integer range";
        break;
    case HB_OP_CONV2D:
        if (hbk_conv_params(s, 0, &p))
            why = "conv2d shape not computable (sizes, groups, or empty output)";
        else if (!fits_int(p.oh * p.ow * p.c * p.kh * p.kw) || !fits_int(p.oc * p.cg * p.kh * p.kw) ||
                 !fits_int(p.oc * p.oh * p.ow))
            why = "conv2d lowering larger than the BLAS 32-bit integer range";
        break;
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL:
        if (hbk_conv_params(s, 1, &p))
            why = "pooling shape not computable (sizes or empty output)";
        break;
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX: case HB_OP_RMSNORM:
        if (s->rows <= 0 || s->cols <= 0)
            why = "rows and cols must be positive";
        break;
    case HB_OP_ATTENTION:
        if (hbk_attn_params(s, &a))
            why = "attention shape not computable (heads must be a multiple of kv_heads)";
        else if (a.kvs > ((int64_t)1 << 24))
            why = "attention kv_seq over 2^24 (the cpu kernel's causal mask compares key indices as floats)";
        break;
    case HB_OP_CHAIN:
        why = "chain is run op by op by the driver";
        break;
    case HB_OP_ALL_REDUCE: case HB_OP_ALL_GATHER: case HB_OP_REDUCE_SCATTER: case HB_OP_BROADCAST:
        why = "collectives run on the cuda backend (NCCL); the CPU's share is its host-staged path";
        break;
    default:
        why = "unknown op";
    }
    if (why) {
        if (reason && reasonlen)
            snprintf(reason, reasonlen, "%s", why);
        return HB_ESKIP;
    }
    return HB_OK;
}

/* timed: 1 names the shape's timed choice of oneDNN where one was made */
static const char *kernel_impl(const hb_case *c, int timed)
{
    hbk_conv p;
    const hb_shape *s = &c->shape;
    if (hb_op_is_ew(c->op))
        return ew_impl_n(c->op, s->n);
    switch (c->op) {
    case HB_OP_MATMUL:
        if (timed && gemm_impl(c)) /* oneDNN, where the shape's probe found it faster (cpu_dnnl_gemm.c) */
            return gemm_impl(c);
        if (s->m == 1 || s->n == 1) /* split: blocks of rows over the threads (gemv_split_run) */
            return plan_threads(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k) >= 2 &&
                           gemm_plan_for(s->m, s->n, s->k) <= -2
                       ? "openblas-sgemv-rows" : "openblas-sgemv";
        /* rows split over OpenMP threads, one single-threaded sgemm each (gemm_plan_run) */
        return gemm_plan_for(s->m, s->n, s->k) <= -2 && split_threads(gemm_plan_for(s->m, s->n, s->k), s->m) >= 2
                   ? "openblas-sgemm-rows" : "openblas-sgemm";
    case HB_OP_BMM:
        if (timed && gemm_impl(c))
            return gemm_impl(c);
        if (bmm_plan(s->batch > 0 ? s->batch : 1, s->m, s->n, s->k) == 1)
            return s->m == 1 || s->n == 1 ? "openblas-sgemv-batch" : "openblas-sgemm-batch";
        return s->m == 1 || s->n == 1 ? "openblas-sgemv" : "openblas-sgemm";
    case HB_OP_CONV2D:
        if (timed && conv_impl(c))
            return conv_impl(c);
        if (hbk_conv_params(&c->shape, 0, &p) == 0 && p.nhwc)
            return conv_is_direct(&p) && p.g == 1 ? "openblas-sgemm-nhwc-1x1" : "openblas-sgemm-nhwc-im2col";
        if (hbk_conv_params(&c->shape, 0, &p) == 0 && conv_is_direct(&p))
            return "openblas-sgemm-1x1";
        return "openblas-sgemm-im2col";
    case HB_OP_ATTENTION: return attn_impl();
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL:
        return hbk_conv_params(&c->shape, 1, &p) == 0 ? pool_impl(&p) : "own-omp";
    case HB_OP_RMSNORM:
        return rows_stream(c->op, s->rows, s->cols) ? "own-omp+nt" : "own-omp";
    default: return "own-omp";
    }
}

const char *hb_cpu_kernel_impl(const hb_case *c) { return kernel_impl(c, 1); }
const char *hb_cpu_kernel_path(const hb_case *c) { return kernel_impl(c, 0); }

int hb_cpu_kernel_threads(const hb_case *c)
{
    const int T = omp_get_max_threads();
    const hb_shape *s = &c->shape;
    if (hb_op_is_ew(c->op))
        return ew_threads(c->op, s->n);
    switch (c->op) {
    case HB_OP_MATMUL:
        if (gemm_impl(c)) /* oneDNN: the team (it may use fewer inside) */
            return T;
        return plan_threads(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k);
    case HB_OP_BMM: {
        if (gemm_impl(c))
            return T;
        const int64_t b = s->batch > 0 ? s->batch : 1;
        const int plan = bmm_plan(b, s->m, s->n, s->k);
        return plan == 0 ? 1 : plan == 1 ? (b < T ? (int)b : T) : plan_threads(gemm_plan_for(s->m, s->n, s->k), s->m, s->n, s->k);
    }
    default:
        return T;
    }
}

hb_status hb_cpu_kernel_run(const hb_case *c, const float *const *in, float *out)
{
    if (!c || !in || !out)
        return HB_EINVAL;
    if (hb_cpu_kernel_check(c, NULL, 0) != HB_OK)
        return HB_EINVAL;
    const hb_shape *s = &c->shape;
    if (hb_op_is_ew(c->op)) { /* cpu_ew.c's kernel table */
        k_elementwise(c->op, in[0], hb_op_get(c->op)->ninputs > 1 ? in[1] : NULL, out, s->n);
        return HB_OK;
    }
    switch (c->op) {
    case HB_OP_MATMUL:
    case HB_OP_BMM: /* OpenBLAS or oneDNN, chosen per shape (cpu_dnnl_gemm.c) */
        return gemm_run(c, in[0], in[1], out);
    case HB_OP_CONV2D: {
        hbk_conv p;
        hbk_conv_params(s, 0, &p);
        return conv_run(c, &p, in[0], in[1], out);
    }
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL: {
        hbk_conv p;
        hbk_conv_params(s, 1, &p);
        return k_pool(&p, c->op == HB_OP_MAXPOOL, in[0], out);
    }
    case HB_OP_SUM:
    case HB_OP_MEAN:
    case HB_OP_MAX:
        k_rows(c->op, in[0], NULL, out, s->rows, s->cols);
        return HB_OK;
    case HB_OP_RMSNORM:
        k_rows(c->op, in[0], in[1], out, s->rows, s->cols);
        return HB_OK;
    case HB_OP_SUM_ALL:
        k_sum_all(in[0], out, s->n);
        return HB_OK;
    case HB_OP_ATTENTION: {
        hbk_attn a;
        hbk_attn_params(s, &a);
        return k_attention(&a, in[0], in[1], in[2], out);
    }
    default:
        return HB_EINVAL;
    }
}
