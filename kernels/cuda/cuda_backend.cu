/*
 * cuda_backend.cu - the CUDA backend plugin (build/hb_cuda.so): exports `hb_cuda_ops` (type "cuda")
 * with C linkage. One instance per GPU ("cuda:0", ...), each with its own stream; every hook that
 * enqueues work synchronizes that stream before it returns (BabelStream convention), and device
 * time is taken with CUDA events on the same stream (timer_begin / timer_end).
 *
 * This file: the error checks, the instance's context and its readiness, the shape parameters,
 * enumerate/close, supports, run with its cuBLAS matrix products, the timers, the cache flush and the
 * ops table. The other hooks: the buffers, routes and transfers (cuda_buffers.cu), conv2d and pooling
 * (cuda_conv_pool.cu), the ceilings (cuda_ceilings.cu), describe, case_info and mem_info with NVML
 * (cuda_info.cu), collectives (cuda_collective.cu).
 *
 * Ops: matmul with quantized weights (q8_0, q4_k, q5_k, q6_k) through cuda_qmatmul.cu; matmul and bmm through cuBLAS (cublasGemmEx / cublasGemmStridedBatchedEx; f32 with
 * CUBLAS_COMPUTE_32F, tf32 with CUBLAS_COMPUTE_32F_FAST_TF32, f16/bf16 storage with f32
 * accumulation); conv2d through cuDNN's legacy API (algorithm chosen once per shape and dtype with
 * cudnnFindConvolutionForwardAlgorithmEx, FMA math for f32, tensor-op math for tf32/f16/bf16,
 * workspace allocated and accounted); pooling through cudnnPoolingForward (own kernel where cuDNN
 * cannot: dilation, a window wholly in the padding); elementwise, reductions, rmsnorm and attention
 * are the plugin's own kernels (cuda_kernels.cu, cuda_attention.cu).
 *
 * Routes (hb_buf.route): pageable = malloc'd host memory + cudaMalloc, copied with
 * cudaMemcpyAsync on the stream then synchronized; pinned = cudaHostAlloc staging + cudaMalloc,
 * same copies (DMA); mapped = cudaHostAlloc(cudaHostAllocMapped), buf->dev is the device alias from
 * cudaHostGetDevicePointer and upload/download copy nothing.
 *
 * Without a GPU or driver, enumerate returns 0 with cudaGetErrorString's text: nothing aborts.
 * NVML (SM clocks for case_info) is loaded with dlopen("libnvidia-ml.so.1") when present, so the
 * plugin does not need the driver's library at link or load time.
 */
#include "cuda/cuda_internal.h"
#include "cuda/cuda_collective.h"
#include "core/launch.h"
#include "core/opdesc.h"
#include "core/quant.h"

#include <time.h>
#include <cublasLt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
extern const hb_backend_ops hb_cuda_ops; /* defined at the end of this file */
}

/* ------------------------------------------------------------------ checking */

static bool rt_is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
        return true;
    default:
        return false;
    }
}

hb_status hbc_rt_check(hbc_ctx *c, cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess) return HB_OK;
    fprintf(stderr, "hb_cuda: %s failed: %s (%s) at %s:%d\n", what, cudaGetErrorString(e), cudaGetErrorName(e), file,
            line);
    if (rt_is_sticky(e) && c) c->sticky = 1;
    if (!rt_is_sticky(e)) (void)cudaGetLastError(); /* clear a non-sticky error so the run goes on */
    return e == cudaErrorMemoryAllocation ? HB_ENOMEM : HB_EDEVICE;
}

hb_status hbc_blas_check(hbc_ctx *c, cublasStatus_t e, const char *what, const char *file, int line)
{
    (void)c;
    if (e == CUBLAS_STATUS_SUCCESS) return HB_OK;
    fprintf(stderr, "hb_cuda: %s failed: %s (%s) at %s:%d\n", what, cublasGetStatusString(e), cublasGetStatusName(e),
            file, line);
    if (e == CUBLAS_STATUS_NOT_SUPPORTED) return HB_ESKIP;
    return e == CUBLAS_STATUS_ALLOC_FAILED ? HB_ENOMEM : HB_EDEVICE;
}

hb_status hbc_dnn_check(hbc_ctx *c, cudnnStatus_t e, const char *what, const char *file, int line)
{
    (void)c;
    if (e == CUDNN_STATUS_SUCCESS) return HB_OK;
    fprintf(stderr, "hb_cuda: %s failed: %s at %s:%d\n", what, cudnnGetErrorString(e), file, line);
    if (e == CUDNN_STATUS_ALLOC_FAILED) return HB_ENOMEM;
    if (e == CUDNN_STATUS_NOT_SUPPORTED) return HB_ESKIP;
    return HB_EDEVICE;
}

/* ------------------------------------------------------------------ helpers */

hbc_ctx *ctx_of(hb_instance *inst) { return inst ? (hbc_ctx *)inst->ctx : nullptr; }

hb_status hbc_grow(hbc_ctx *c, void **p, size_t *have, size_t bytes)
{
    if (bytes <= *have && *p) return HB_OK;
    hbc_gate_release(c); /* what follows may synchronize */
    if (*p) {
        HBC_TRY(HBC_RT(c, cudaStreamSynchronize(c->stream)));
        HBC_TRY(HBC_RT(c, cudaFree(*p)));
        c->dev_bytes -= (int64_t)*have;
        *p = nullptr;
        *have = 0;
    }
    size_t want = bytes < 256 ? 256 : bytes;
    HBC_TRY(HBC_RT(c, cudaMalloc(p, want)));
    *have = want;
    c->dev_bytes += (int64_t)want;
    return HB_OK;
}

static void dev_free(hbc_ctx *c, void **p, size_t *have)
{
    if (*p) {
        cudaFree(*p);
        c->dev_bytes -= (int64_t)*have;
    }
    *p = nullptr;
    *have = 0;
}

/* Create the stream, events and library handles on first use (not in enumerate, so `hybench list`
 * stays quick and a failure here is a failed case, not a missing backend). */
hb_status ensure_ready(hbc_ctx *c)
{
    if (c->sticky) return HB_EDEVICE;
    HBC_TRY(HBC_RT(c, cudaSetDevice(c->dev)));
    if (c->ready) return HB_OK;
    HBC_TRY(HBC_RT(c, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)));
    HBC_TRY(HBC_RT(c, cudaEventCreate(&c->ev_begin)));
    HBC_TRY(HBC_RT(c, cudaEventCreate(&c->ev_end)));
    HBC_TRY(HBC_RT(c, cudaEventCreate(&c->ev_a)));
    HBC_TRY(HBC_RT(c, cudaEventCreate(&c->ev_b)));
    HBC_TRY(HBC_RT(c, cudaEventCreate(&c->ev_c)));
    HBC_TRY(HBC_BLAS(c, cublasCreate(&c->blas)));
    HBC_TRY(HBC_BLAS(c, cublasSetStream(c->blas, c->stream)));
    HBC_TRY(HBC_BLAS(c, cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH)));
    /* cuBLAS recommends a 32 MiB workspace on Hopper (cuBLAS docs, cublasSetWorkspace). */
    HBC_TRY(hbc_grow(c, &c->blas_ws, &c->blas_ws_bytes, (size_t)32 << 20));
    HBC_TRY(HBC_BLAS(c, cublasSetWorkspace(c->blas, c->blas_ws, c->blas_ws_bytes)));
    HBC_TRY(HBC_DNN(c, cudnnCreate(&c->dnn)));
    HBC_TRY(HBC_DNN(c, cudnnSetStream(c->dnn, c->stream)));
    c->nvml = nvml_open(c->dev);
    const char *g = hbc_cfg()->cuda_gate;
    c->gate_on = !(g && !strcmp(g, "0"));
    if (c->gate_on) {
        if (cudaHostAlloc((void **)&c->gate_h, 64, cudaHostAllocMapped) != cudaSuccess ||
            cudaHostGetDevicePointer((void **)&c->gate_d, c->gate_h, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            fprintf(stderr, "hb_cuda: no mapped memory for the launch gate: device timing includes launch overhead\n");
            if (c->gate_h) cudaFreeHost(c->gate_h);
            c->gate_h = c->gate_d = nullptr;
            c->gate_on = 0;
        } else {
            *c->gate_h = 1;
        }
    }
    c->ready = 1;
    return HB_OK;
}

hb_status enter(hb_instance *inst, hbc_ctx **out)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c) return HB_EINVAL;
    *out = c;
    return ensure_ready(c);
}

hb_status sync(hbc_ctx *c) { return HBC_RT(c, cudaStreamSynchronize(c->stream)); }

/* Device timing (timer_begin/timer_end): timer_begin only arms the timer; each hook that enqueues
 * work records ev_begin right before its first enqueue and ev_end right after its last one, before it
 * synchronizes. The events thus bracket the device work of the phase and not the host's
 * synchronization wake-up, which the driver's host clock still measures. */
hb_status tmark_begin(hbc_ctx *c)
{
    if (!c->tarmed || c->tstarted) return HB_OK;
    c->tstarted = 1;
    return HBC_RT(c, cudaEventRecord(c->ev_begin, c->stream));
}
/* run()'s variant: the launch gate first (see cuda_internal.h), then the start event. */
hb_status tmark_begin_gated(hbc_ctx *c)
{
    if (!c->tarmed || c->tstarted) return HB_OK;
    HBC_TRY(hbc_gate_launch(c));
    return tmark_begin(c);
}
hb_status tmark_end(hbc_ctx *c)
{
    if (!c->tarmed || !c->tstarted) return HB_OK;
    c->tend_pending = 0;
    return HBC_RT(c, cudaEventRecord(c->ev_end, c->stream));
}

static int64_t def1(int64_t v, int64_t d) { return v > 0 ? v : d; }

/* Shape parameters with the defaults of hybench.h (kernels/cpu_ref/kshape.h does the same). */
bool conv_params(const hb_shape *s, bool pool, conv_p *p)
{
    p->b = def1(s->batch, 1); p->c = s->c; p->h = s->h; p->w = def1(s->w, s->h);
    p->kh = s->kh; p->kw = def1(s->kw, s->kh);
    p->sh = def1(s->sh, 1); p->sw = def1(s->sw, p->sh);
    p->ph = s->ph; p->pw = s->pw;
    p->dh = def1(s->dh, 1); p->dw = def1(s->dw, p->dh);
    p->oc = pool ? p->c : s->oc; p->g = pool ? 1 : def1(s->g, 1);
    if (p->c <= 0 || p->h <= 0 || p->w <= 0 || p->kh <= 0 || p->kw <= 0 || p->oc <= 0 || p->ph < 0 || p->pw < 0) return false;
    if (p->c % p->g || p->oc % p->g) return false;
    int64_t nh = p->h + 2 * p->ph - p->dh * (p->kh - 1) - 1, nw = p->w + 2 * p->pw - p->dw * (p->kw - 1) - 1;
    if (nh < 0 || nw < 0) return false;
    p->oh = nh / p->sh + 1; p->ow = nw / p->sw + 1;
    return true;
}

struct attn_p {
    int64_t b, heads, kvh, seq, kvs, d;
    int causal;
};
static bool attn_params(const hb_shape *s, attn_p *a)
{
    a->b = def1(s->batch, 1); a->heads = s->heads; a->kvh = def1(s->kv_heads, s->heads);
    a->seq = s->seq; a->kvs = def1(s->kv_seq, s->seq); a->d = s->head_dim; a->causal = s->causal != 0;
    return a->heads > 0 && a->seq > 0 && a->d > 0 && a->kvh > 0 && a->heads % a->kvh == 0;
}

/* Element counts of the op's inputs (i < 3) and output (i = -1) with the defaults of hybench.h applied;
 * -1 for an unusable shape. core/opdesc.h (header-only: the plugin links no harness symbol) is the
 * code hb_op_input_elems and hb_op_output_elems run. */
static int64_t op_elems(hb_op op, const hb_shape *s0, int i)
{
    hb_shape s = *s0;
    hb_shape_defaults(op, &s);
    if (!hb_shape_computable(op, &s)) return -1;
    return hb_op_elems(op, &s, i);
}
static int op_ninputs(hb_op op) { return hb_op_row(op) ? hb_op_row(op)->ninputs : 0; }

/* ------------------------------------------------------------------ enumerate / close */

static int cuda_enumerate(hb_instance *out, int max, char *reason, size_t reasonlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(reason, reasonlen, "CUDA runtime: cudaGetDeviceCount failed: %s (%s)%s", cudaGetErrorString(e),
                 cudaGetErrorName(e),
                 e == cudaErrorInsufficientDriver ? ": no NVIDIA driver (libcuda.so.1) here, or one older than the runtime"
                 : e == cudaErrorNoDevice ? ": no NVIDIA GPU visible" : "");
        (void)cudaGetLastError();
        return 0;
    }
    if (n <= 0) {
        snprintf(reason, reasonlen, "CUDA runtime: no CUDA device found");
        return 0;
    }
    int k = 0;
    /* several ranks (core/launch.h): this process opens only the GPU its rank drives (local rank mod
     * the visible GPUs), so that no rank measures ceilings or cases on another rank's GPU, and every
     * rank's case list is the same (one instance each) */
    int d0 = 0, d1 = n;
    if (hb_launch_ranks() > 1) { d0 = hb_launch_local_rank() % n; d1 = d0 + 1; }
    for (int d = d0; d < d1 && k < max; d++) {
        hbc_ctx *c = (hbc_ctx *)calloc(1, sizeof *c);
        if (!c) break;
        c->dev = d;
        c->plant_s = -1; /* no planted delay kernel unless plant_delay asks for one */
        e = cudaGetDeviceProperties(&c->prop, d);
        if (e != cudaSuccess) {
            snprintf(reason, reasonlen, "cudaGetDeviceProperties(%d) failed: %s", d, cudaGetErrorString(e));
            (void)cudaGetLastError();
            free(c);
            continue;
        }
        cudaDeviceGetAttribute(&c->sm_clock_khz, cudaDevAttrClockRate, d);
        cudaDeviceGetAttribute(&c->mem_clock_khz, cudaDevAttrMemoryClockRate, d);
        cudaDeviceGetAttribute(&c->l2_bytes, cudaDevAttrL2CacheSize, d);
        (void)cudaGetLastError();
        hb_instance *inst = &out[k++];
        snprintf(inst->name, sizeof inst->name, "cuda:%d", d);
        snprintf(inst->description, sizeof inst->description, "%s (sm_%d%d, %d SMs, %.1f GiB)", c->prop.name,
                 c->prop.major, c->prop.minor, c->prop.multiProcessorCount,
                 (double)c->prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
        inst->host_memory = 0;
        inst->ops = &hb_cuda_ops;
        inst->ctx = c;
    }
    if (k == 0 && !reason[0]) snprintf(reason, reasonlen, "CUDA runtime: no usable CUDA device");
    return k;
}

static void cuda_close(hb_instance *inst)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c) return;
    cudaSetDevice(c->dev);
    if (c->ready) {
        if (!c->sticky) cudaStreamSynchronize(c->stream);
        dev_free(c, &c->blas_ws, &c->blas_ws_bytes);
        dev_free(c, &c->dnn_ws, &c->dnn_ws_bytes);
        dev_free(c, &c->scratch, &c->scratch_bytes);
        dev_free(c, &c->flush_buf, &c->flush_bytes);
        dev_free(c, &c->conv_tmp, &c->conv_tmp_bytes);
        dev_free(c, &c->qw16, &c->qw16_bytes);
        dev_free(c, &c->qa16, &c->qa16_bytes);
        hbc_sdpa_free(c);
        for (int i = 0; i < HBC_CONV_CACHE; i++) conv_choice_clear(&c->conv[i]);
        if (c->blas) cublasDestroy(c->blas);
        if (c->dnn) cudnnDestroy(c->dnn);
        cudaEventDestroy(c->ev_begin); cudaEventDestroy(c->ev_end);
        cudaEventDestroy(c->ev_a); cudaEventDestroy(c->ev_b); cudaEventDestroy(c->ev_c);
        cudaStreamDestroy(c->stream);
        if (c->gate_h) cudaFreeHost(c->gate_h);
        nvml_close(c->nvml);
    }
    free(c);
    inst->ctx = nullptr;
}

/* ------------------------------------------------------------------ impl_of */

/* impl_of (backend.h): the implementation case cs will run, as case_info's "impl" will
 * name it, where it is decided before the run: "own-kernel" (elementwise, reductions, rmsnorm,
 * dequantize), "cublas" (matmul, bmm), hbc_qmatmul_impl, hbc_pool_impl, hbc_coll_impl, and attention
 * in f32 (hbc_attn_kernel_for). NULL where a run times candidates first (conv2d: cuDNN engines or a
 * cuBLAS gemm; attention in f16/bf16: cuDNN's SDPA or the own kernel) or for an op cuda does not run. */
static const char *cuda_impl_of(hb_instance *inst, const hb_case *cs)
{
    const hbc_ctx *c = ctx_of(inst);
    if (!c || !cs) return nullptr;
    const hb_op op = cs->op;
    if (hbc_is_coll(op)) return hbc_coll_impl(cs);
    if (op == HB_OP_DEQUANTIZE || hb_op_is_ew(op)) return "own-kernel";
    switch (op) {
    case HB_OP_MATMUL: return hb_dtype_is_quant(cs->dtype) ? hbc_qmatmul_impl(cs->shape.m) : "cublas";
    case HB_OP_BMM: return "cublas";
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX: case HB_OP_SUM_ALL: case HB_OP_RMSNORM: return "own-kernel";
    case HB_OP_MAXPOOL: case HB_OP_AVGPOOL: return hbc_pool_impl(cs);
    case HB_OP_ATTENTION: {
        attn_p a;
        if (cs->dtype != HB_F32 || !attn_params(&cs->shape, &a)) return nullptr; /* f16/bf16: cuDNN or own, timed */
        return hbc_attn_kernel_name(hbc_attn_kernel_for(c, cs->dtype, a.d, a.seq));
    }
    default: return nullptr; /* conv2d: a timed choice; others: not run by cuda */
    }
}

/* ------------------------------------------------------------------ supports */

static hb_status cuda_supports(hb_instance *inst, const hb_case *cs, char *reason, size_t reasonlen)
{
    hbc_ctx *c = ctx_of(inst);
    const hb_op op = cs->op;
    if ((int)op < 0 || op >= HB_OP_COUNT) { snprintf(reason, reasonlen, "unknown op"); return HB_ESKIP; }
    if ((int)cs->dtype < 0 || cs->dtype >= HB_DTYPE_COUNT || (int)cs->route < 0 || cs->route >= HB_ROUTE_COUNT ||
        (int)cs->mode < 0 || cs->mode >= HB_MODE_COUNT) {
        snprintf(reason, reasonlen, "unknown dtype, route or mode");
        return HB_ESKIP;
    }
    if (op == HB_OP_DEQUANTIZE && hb_quant_block_elems(cs->dtype) <= 0) {
        snprintf(reason, reasonlen, "dequantize takes a quantized dtype");
        return HB_ESKIP;
    }
    if (hb_quant_block_elems(cs->dtype) > 0) { /* quantized weights: matmul and dequantize (cuda_qmatmul.cu) */
        const hb_shape *s = &cs->shape;
        if (op != HB_OP_MATMUL && op != HB_OP_DEQUANTIZE) { snprintf(reason, reasonlen, "quantized weights: matmul and dequantize only"); return HB_ESKIP; }
        if (cs->mode == HB_MODE_CONVERT || cs->mode == HB_MODE_CONVERT_DEVICE) {
            snprintf(reason, reasonlen, "quantized weights: no f64 form of the blocks (modes f32 and resident only)");
            return HB_ESKIP;
        }
        if (!hb_quant_blocks_whole(cs, reason, reasonlen)) return HB_ESKIP;
        if (op == HB_OP_DEQUANTIZE) {
            if (s->n > INT_MAX) {
                snprintf(reason, reasonlen, "dequantize: n must be in 1..INT_MAX");
                return HB_ESKIP;
            }
            if (c && cs->route == HB_ROUTE_MAPPED && !c->prop.canMapHostMemory) { snprintf(reason, reasonlen, "device cannot map host memory"); return HB_ESKIP; }
            return HB_OK;
        }
        if (s->m <= 0 || s->n <= 0 || s->k <= 0 || s->m > INT_MAX || s->n > INT_MAX || s->k > INT_MAX) {
            snprintf(reason, reasonlen, "quantized matmul: m, n, k must be in 1..INT_MAX");
            return HB_ESKIP;
        }
        if (c && cs->route == HB_ROUTE_MAPPED && !c->prop.canMapHostMemory) { snprintf(reason, reasonlen, "device cannot map host memory"); return HB_ESKIP; }
        return HB_OK;
    }
    if (hbc_is_coll(op)) return hbc_coll_supports(c, cs, reason, reasonlen); /* cuda_collective.cu */
    const bool matrix = op == HB_OP_MATMUL || op == HB_OP_BMM || op == HB_OP_CONV2D;
    if (cs->dtype == HB_TF32 && !matrix) {
        snprintf(reason, reasonlen, "tf32 is a tensor-core mode of matrix products: offered for matmul, bmm and conv2d only");
        return HB_ESKIP;
    }
    if (c) {
        const int cc = c->prop.major * 10 + c->prop.minor;
        if (cs->dtype == HB_TF32 && cc < 80) { snprintf(reason, reasonlen, "tf32 needs compute capability 8.0 (have %d.%d)", c->prop.major, c->prop.minor); return HB_ESKIP; }
        if (cs->dtype == HB_BF16 && cc < 80) { snprintf(reason, reasonlen, "bf16 needs compute capability 8.0 (have %d.%d)", c->prop.major, c->prop.minor); return HB_ESKIP; }
        if (cs->dtype == HB_F16 && cc < 53) { snprintf(reason, reasonlen, "f16 needs compute capability 5.3"); return HB_ESKIP; }
        if (cs->route == HB_ROUTE_MAPPED && !c->prop.canMapHostMemory) { snprintf(reason, reasonlen, "device cannot map host memory"); return HB_ESKIP; }
    }
    if (hb_op_is_ew(op) && !hbc_ew_supported(op)) {
        snprintf(reason, reasonlen, "no CUDA kernel for this elementwise op");
        return HB_ESKIP;
    }
    const hb_shape *s = &cs->shape;
    for (int i = -1; i < op_ninputs(op); i++) {
        if (op_elems(op, s, i) <= 0) {
            snprintf(reason, reasonlen, "shape not computable by this backend (non-positive sizes or bad groups)");
            return HB_ESKIP;
        }
    }
    if (op == HB_OP_MATMUL || op == HB_OP_BMM) {
        if (s->m > INT_MAX || s->n > INT_MAX || s->k > INT_MAX || def1(s->batch, 1) > INT_MAX) {
            snprintf(reason, reasonlen, "cuBLAS takes int dimensions"); return HB_ESKIP;
        }
    }
    if (op == HB_OP_ATTENTION) {
        attn_p a;
        attn_params(s, &a);
        if (a.d > 256) { snprintf(reason, reasonlen, "attention kernels take head_dim <= 256 (have %lld)", (long long)a.d); return HB_ESKIP; }
        if (a.heads > 65535 || a.b > 65535 || a.seq > INT_MAX / 2 || a.kvs > INT_MAX / 2) {
            snprintf(reason, reasonlen, "attention grid limits exceeded"); return HB_ESKIP;
        }
    }
    if (op == HB_OP_CONV2D || op == HB_OP_MAXPOOL || op == HB_OP_AVGPOOL) {
        conv_p p;
        conv_params(s, op != HB_OP_CONV2D, &p);
        if (p.b > INT_MAX || p.c > INT_MAX || p.h > INT_MAX || p.w > INT_MAX || p.oc > INT_MAX) {
            snprintf(reason, reasonlen, "cuDNN takes int dimensions"); return HB_ESKIP;
        }
    }
    if ((op == HB_OP_SUM || op == HB_OP_MEAN || op == HB_OP_MAX || op == HB_OP_RMSNORM) && s->rows > INT_MAX) {
        snprintf(reason, reasonlen, "rows > INT_MAX"); return HB_ESKIP;
    }
    return HB_OK;
}

/* ------------------------------------------------------------------ cuBLAS */

const char *blas_compute_name(hb_dtype d)
{
    return d == HB_TF32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F";
}

/* C[m,n] = A[m,k] B[k,n], row-major, batch matrices at strides m*k, k*n, m*n. Row-major C = A B is
 * column-major C^T = B^T A^T, so cuBLAS gets (n, m, k) with B first. */
hb_status gemm(hbc_ctx *c, hb_dtype dt, const void *A, const void *B, void *C, int64_t m, int64_t n, int64_t k,
                      int64_t batch)
{
    const cudaDataType t = dt == HB_F16 ? CUDA_R_16F : dt == HB_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct = dt == HB_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float alpha = 1.0f, beta = 0.0f;
    if (batch <= 1) {
        snprintf(c->last_impl, sizeof c->last_impl, "cublas");
        snprintf(c->last_algo, sizeof c->last_algo, "cublasGemmEx %s", blas_compute_name(dt));
        return HBC_BLAS(c, cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha, B, t, (int)n,
                                        A, t, (int)k, &beta, C, t, (int)n, ct, CUBLAS_GEMM_DEFAULT));
    }
    snprintf(c->last_impl, sizeof c->last_impl, "cublas");
    snprintf(c->last_algo, sizeof c->last_algo, "cublasGemmStridedBatchedEx %s", blas_compute_name(dt));
    return HBC_BLAS(c, cublasGemmStridedBatchedEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha, B,
                                                  t, (int)n, (long long)k * n, A, t, (int)k, (long long)m * k, &beta,
                                                  C, t, (int)n, (long long)m * n, (int)batch, ct, CUBLAS_GEMM_DEFAULT));
}

/* ------------------------------------------------------------------ run */

static double host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* run (wait: synchronize at the end) and run_async (no wait: the op stays enqueued on c->stream). */
static hb_status run_op(hb_instance *inst, const hb_case *cs, hb_buf *const *in, hb_buf *out, bool wait)
{
    const double t_enter = host_now();
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    char why[160];
    hb_status sup = cuda_supports(inst, cs, why, sizeof why);
    if (sup != HB_OK) return sup;
    const hb_op op = cs->op;
    const size_t es = hbc_esize(cs->dtype);
    const int nin = op_ninputs(op);
    if (!out || !out->dev) return HB_EINVAL;
    const bool quant = hb_quant_block_elems(cs->dtype) > 0;
    for (int i = 0; i < nin; i++) {
        /* a quantized case's weights (hb_quant_input: matmul's input 1, dequantize's input 0) are its blocks */
        const size_t need = quant && i == hb_quant_input(op, cs->dtype) ? hb_quant_bytes(cs->dtype, op_elems(op, &cs->shape, i))
                                                                        : (size_t)op_elems(op, &cs->shape, i) * es;
        if (!in || !in[i] || !in[i]->dev || in[i]->bytes < need) return HB_EINVAL;
    }
    if (out->bytes < (size_t)op_elems(op, &cs->shape, -1) * es) return HB_EINVAL;
    const hbc_elem e = hbc_elem_of(cs->dtype);
    const hb_shape *s = &cs->shape;
    c->last_algo[0] = 0;
    c->last_qimpl[0] = 0;
    c->last_ws = 0;
    c->last_conv = nullptr;
    c->last_cache = HBC_CACHE_NONE;
    c->last_cache_check_ms = 0;
    c->last_cache_note[0] = 0;
    hb_status st;
    /* conv2d, pooling, attention and collectives mark the timer's start themselves, after their host-side setup */
    if (op != HB_OP_CONV2D && op != HB_OP_MAXPOOL && op != HB_OP_AVGPOOL && op != HB_OP_ATTENTION && !hbc_is_coll(op))
        HBC_TRY(tmark_begin_gated(c));
    if (op == HB_OP_DEQUANTIZE) {
        st = hbc_dequant(c, cs->dtype, in[0]->dev, out->dev, s->n);
    } else if (hb_op_is_ew(op)) { /* the elementwise ops: cuda_kernels.cu's kernel table */
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_elementwise_vec16");
        st = hbc_elementwise(c, op, e, in[0]->dev, nin > 1 ? in[1]->dev : nullptr, out->dev, s->n);
    } else switch (op) {
    case HB_OP_MATMUL:
        st = quant ? hbc_qmatmul(c, cs->dtype, in[0]->dev, in[1]->dev, out->dev, s->m, s->n, s->k)
                   : gemm(c, cs->dtype, in[0]->dev, in[1]->dev, out->dev, s->m, s->n, s->k, 1);
        break;
    case HB_OP_BMM:
        st = gemm(c, cs->dtype, in[0]->dev, in[1]->dev, out->dev, s->m, s->n, s->k, def1(s->batch, 1));
        break;
    case HB_OP_CONV2D:
        st = run_conv(c, cs, in[0]->dev, in[1]->dev, out->dev);
        break;
    case HB_OP_MAXPOOL: case HB_OP_AVGPOOL:
        st = run_pool(c, cs, in[0]->dev, out->dev);
        break;
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX:
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_reduce_rows");
        st = hbc_reduce_rows(c, op, e, in[0]->dev, out->dev, s->rows, s->cols);
        break;
    case HB_OP_SUM_ALL:
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_reduce_rows");
        st = hbc_reduce_rows(c, HB_OP_SUM, e, in[0]->dev, out->dev, 1, s->n);
        break;
    case HB_OP_RMSNORM:
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_rmsnorm");
        st = hbc_rmsnorm(c, e, in[0]->dev, in[1]->dev, out->dev, s->rows, s->cols);
        break;
    case HB_OP_ALL_REDUCE: case HB_OP_ALL_GATHER: case HB_OP_REDUCE_SCATTER: case HB_OP_BROADCAST:
        /* cuda_collective.cu; marks its own start. Not gated on the mapped route: NCCL's one-rank copy
         * between host-mapped buffers did not run behind the gate kernel, which then spun to its 100 ms
         * timeout in every sample (H100 reference 2026-11-26: all_reduce n=16Mi mapped, host clock
         * 103-106 ms against 3-6 ms of events); ungated, the events include the launch latency, a few
         * microseconds of these millisecond cases. */
        st = hbc_coll_run(c, cs, in[0]->dev, out->dev, cs->route == HB_ROUTE_MAPPED ? tmark_begin : tmark_begin_gated);
        break;
    case HB_OP_ATTENTION: {
        attn_p a;
        if (!attn_params(s, &a)) return HB_EINVAL;
        hbc_attn_plan plan;
        st = hbc_attn_prepare(c, cs->dtype, in[0]->dev, in[1]->dev, in[2]->dev, out->dev, a.b, a.heads, a.kvh, a.seq,
                              a.kvs, a.d, a.causal, s->layout == HB_LAYOUT_BSHD, &plan);
        if (st == HB_OK) st = tmark_begin_gated(c);
        if (st == HB_OK)
            st = hbc_attn_exec(c, &plan, cs->dtype, in[0]->dev, in[1]->dev, in[2]->dev, out->dev, a.b, a.heads, a.kvh,
                               a.seq, a.kvs, a.d, a.causal, s->layout == HB_LAYOUT_BSHD);
        break;
    }
    default:
        return HB_ESKIP;
    }
    /* a planted delay (plant_delay, make PLANT=1 drivers only) goes behind the op, inside its events */
    if (st == HB_OK && c->plant_s >= 0) st = hbc_plant_enqueue(c);
    /* run: ev_end before the wait; run_async: left to timer_end (tend_pending, see tmark_end) */
    hb_status st2 = HB_OK;
    if (st == HB_OK && wait) st2 = tmark_end(c);
    else if (st == HB_OK && c->tarmed && c->tstarted) c->tend_pending = 1;
    c->enqueue_s[c->enqueue_n++ % HBC_ENQ_KEEP] = host_now() - t_enter;
    hbc_gate_release(c);
    if (st != HB_OK || st2 != HB_OK) {
        if (!c->sticky) (void)cudaStreamSynchronize(c->stream);
        return st != HB_OK ? st : st2;
    }
    return wait ? sync(c) : HB_OK;
}

static hb_status cuda_run(hb_instance *inst, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    return run_op(inst, cs, in, out, true);
}

static hb_status cuda_run_async(hb_instance *inst, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    return run_op(inst, cs, in, out, false);
}

/* ------------------------------------------------------------------ timers */

static hb_status cuda_timer_begin(hb_instance *inst)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    c->tarmed = 1;
    c->tstarted = 0;
    c->tend_pending = 0;
    return HB_OK;
}

/* Elapsed device time between the first enqueue and the end of the last one since timer_begin;
 * 0 when no hook enqueued device work in between (a mapped-route upload, say). */
static hb_status cuda_timer_end(hb_instance *inst, double *seconds)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    const int started = c->tarmed && c->tstarted;
    if (started && c->tend_pending) HBC_TRY(tmark_end(c)); /* behind the ops run_async left enqueued */
    c->tarmed = c->tstarted = c->tend_pending = 0;
    if (seconds) *seconds = 0.0;
    if (!started) return HB_OK;
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_end)));
    float ms = 0.0f;
    HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&ms, c->ev_begin, c->ev_end)));
    if (seconds) *seconds = (double)ms * 1e-3;
    return HB_OK;
}

static hb_status cuda_plant_delay(hb_instance *inst, double seconds)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    return hbc_plant_set(c, seconds);
}

/* Write a buffer of twice the L2 size so the next sample starts with a cold L2 (nvbench habit). */
static void cuda_flush_cache(hb_instance *inst)
{
    hbc_ctx *c;
    if (enter(inst, &c) != HB_OK) return;
    size_t want = (size_t)(c->l2_bytes > 0 ? c->l2_bytes : (64 << 20)) * 2;
    if (hbc_grow(c, &c->flush_buf, &c->flush_bytes, want) != HB_OK) return;
    if (HBC_RT(c, cudaMemsetAsync(c->flush_buf, c->nconv & 0xff, want, c->stream)) != HB_OK) return;
    (void)sync(c);
}

/* ------------------------------------------------------------------ settings (core/config.h) */

static const hb_config g_unset_cfg = {};
static const hb_config *g_cfg = &g_unset_cfg;

extern "C" const hb_config *hbc_cfg(void) { return g_cfg; }

static void cuda_configure(const hb_config *cfg) { g_cfg = cfg ? cfg : &g_unset_cfg; }

/* ------------------------------------------------------------------ the ops table */

extern "C" {
extern const hb_backend_ops hb_cuda_ops;
const hb_backend_ops hb_cuda_ops = {
    HB_BACKEND_ABI,     /* abi */
    "cuda",             /* type */
    cuda_enumerate,     /* enumerate */
    cuda_close,         /* close */
    cuda_supports,      /* supports */
    cuda_buf_alloc,     /* buf_alloc */
    cuda_buf_free,      /* buf_free */
    cuda_upload,        /* upload */
    cuda_download,      /* download */
    cuda_run,           /* run */
    cuda_timer_begin,   /* timer_begin */
    cuda_timer_end,     /* timer_end */
    cuda_ceilings,      /* ceilings */
    cuda_mem_info,      /* mem_info */
    cuda_case_info,     /* case_info */
    cuda_describe,      /* describe */
    cuda_flush_cache,   /* flush_cache */
    cuda_upload_f64,    /* upload_f64 (convert-device) */
    cuda_download_f64,  /* download_f64 */
    hbc_energy_read,    /* energy_read (cuda_energy.cu) */
    hbc_coll_vote,      /* coll_vote (cuda_collective.cu) */
    cuda_run_async,     /* run_async */
    cuda_plant_delay,   /* plant_delay (cuda_plant.cu; merge-gate tests only) */
    hbc_graph_capture,  /* graph_capture (cuda_graph.cu) */
    hbc_graph_launch,   /* graph_launch */
    hbc_graph_free,     /* graph_free */
    cuda_configure,     /* configure */
    cuda_impl_of,       /* impl_of */
};
}
