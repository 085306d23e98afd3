/*
 * cuda_backend.cu - the CUDA backend plugin (build/hb_cuda.so): exports `hb_cuda_ops` (type "cuda")
 * with C linkage. One instance per GPU ("cuda:0", ...), each with its own stream; every hook that
 * enqueues work synchronizes that stream before it returns (BabelStream convention), and device
 * time is taken with CUDA events on the same stream (timer_begin / timer_end).
 *
 * Ops: matmul and bmm through cuBLAS (cublasGemmEx / cublasGemmStridedBatchedEx; f32 with
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
#include "cuda/hb_cuda.h"
#include "cuda/cuda_collective.h"
#include "core/launch.h"

#include <time.h>
#include <algorithm>
#include <cublasLt.h>
#include <dlfcn.h>
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

/* ------------------------------------------------------------------ NVML via dlopen */

typedef int nvml_ret; /* nvmlReturn_t; NVML_SUCCESS = 0 */
enum { NVML_CLOCK_SM_ = 1 }; /* nvmlClockType_t NVML_CLOCK_SM (nvml.h) */

struct hbc_nvml {
    void *lib;
    nvml_ret (*shutdown)(void);
    nvml_ret (*clock)(void *, int, unsigned *);
    nvml_ret (*max_clock)(void *, int, unsigned *);
    void *dev;
    char driver[80];
};

static hbc_nvml *nvml_open(int dev)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    typedef nvml_ret (*init_t)(void);
    typedef nvml_ret (*bypci_t)(const char *, void **);
    typedef nvml_ret (*drv_t)(char *, unsigned);
    init_t init = (init_t)dlsym(lib, "nvmlInit_v2");
    bypci_t bypci = (bypci_t)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    drv_t drv = (drv_t)dlsym(lib, "nvmlSystemGetDriverVersion");
    hbc_nvml *n = (hbc_nvml *)calloc(1, sizeof *n);
    if (!n) { dlclose(lib); return nullptr; }
    n->lib = lib;
    n->shutdown = (nvml_ret(*)(void))dlsym(lib, "nvmlShutdown");
    n->clock = (nvml_ret(*)(void *, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    n->max_clock = (nvml_ret(*)(void *, int, unsigned *))dlsym(lib, "nvmlDeviceGetMaxClockInfo");
    char bus[32];
    if (!init || !bypci || !n->clock || !n->max_clock || init() != 0 || cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess ||
        bypci(bus, &n->dev) != 0) {
        (void)cudaGetLastError();
        if (n->shutdown && init) n->shutdown();
        dlclose(lib);
        free(n);
        return nullptr;
    }
    if (drv && drv(n->driver, sizeof n->driver) != 0) n->driver[0] = 0;
    return n;
}

static void nvml_close(hbc_nvml *n)
{
    if (!n) return;
    if (n->shutdown) n->shutdown();
    dlclose(n->lib);
    free(n);
}

/* ------------------------------------------------------------------ helpers */

static hbc_ctx *ctx_of(hb_instance *inst) { return inst ? (hbc_ctx *)inst->ctx : nullptr; }

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
static hb_status ensure_ready(hbc_ctx *c)
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
    const char *g = getenv("HB_CUDA_GATE");
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

static hb_status enter(hb_instance *inst, hbc_ctx **out)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c) return HB_EINVAL;
    *out = c;
    return ensure_ready(c);
}

static hb_status sync(hbc_ctx *c) { return HBC_RT(c, cudaStreamSynchronize(c->stream)); }

/* Device timing (timer_begin/timer_end): timer_begin only arms the timer; each hook that enqueues
 * work records ev_begin right before its first enqueue and ev_end right after its last one, before it
 * synchronizes. The events thus bracket the device work of the phase and not the host's
 * synchronization wake-up, which the driver's host clock still measures. */
static hb_status tmark_begin(hbc_ctx *c)
{
    if (!c->tarmed || c->tstarted) return HB_OK;
    c->tstarted = 1;
    return HBC_RT(c, cudaEventRecord(c->ev_begin, c->stream));
}
/* run()'s variant: the launch gate first (see cuda_internal.h), then the start event. */
static hb_status tmark_begin_gated(hbc_ctx *c)
{
    if (!c->tarmed || c->tstarted) return HB_OK;
    HBC_TRY(hbc_gate_launch(c));
    return tmark_begin(c);
}
static hb_status tmark_end(hbc_ctx *c)
{
    if (!c->tarmed || !c->tstarted) return HB_OK;
    return HBC_RT(c, cudaEventRecord(c->ev_end, c->stream));
}

static int64_t def1(int64_t v, int64_t d) { return v > 0 ? v : d; }

/* Shape parameters with the defaults of hybench.h (kernels/cpu_ref/kshape.h does the same). */
struct conv_p {
    int64_t b, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, oh, ow;
};
static bool conv_params(const hb_shape *s, bool pool, conv_p *p)
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

/* Element counts of the op's inputs (i < 3) and output (i = -1); -1 for an unusable shape. */
static int64_t op_elems(hb_op op, const hb_shape *s, int i)
{
    switch (op) {
    case HB_OP_ADD: case HB_OP_MUL: case HB_OP_RELU: case HB_OP_GELU: case HB_OP_SILU:
        return s->n;
    case HB_OP_MATMUL:
        return i == 0 ? s->m * s->k : i == 1 ? s->k * s->n : s->m * s->n;
    case HB_OP_BMM: {
        int64_t b = def1(s->batch, 1);
        return b * (i == 0 ? s->m * s->k : i == 1 ? s->k * s->n : s->m * s->n);
    }
    case HB_OP_CONV2D: case HB_OP_MAXPOOL: case HB_OP_AVGPOOL: {
        conv_p p;
        bool pool = op != HB_OP_CONV2D;
        if (!conv_params(s, pool, &p)) return -1;
        if (i == 0) return p.b * p.c * p.h * p.w;
        if (i == 1) return pool ? -1 : p.oc * (p.c / p.g) * p.kh * p.kw;
        return p.b * p.oc * p.oh * p.ow;
    }
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX:
        return i == 0 ? s->rows * s->cols : s->rows;
    case HB_OP_SUM_ALL:
        return i == 0 ? s->n : 1;
    case HB_OP_RMSNORM:
        return i == 1 ? s->cols : s->rows * s->cols;
    case HB_OP_ATTENTION: {
        attn_p a;
        if (!attn_params(s, &a)) return -1;
        if (i == 1 || i == 2) return a.b * a.kvh * a.kvs * a.d;
        return a.b * a.heads * a.seq * a.d;
    }
    case HB_OP_ALL_REDUCE: case HB_OP_BROADCAST: return s->n; /* collectives: core/hybench.h */
    case HB_OP_ALL_GATHER: return i == 0 ? s->n : s->n * s->ranks;
    case HB_OP_REDUCE_SCATTER: return i == 0 ? s->n * s->ranks : s->n;
    default:
        return -1;
    }
}
static int op_ninputs(hb_op op)
{
    switch (op) {
    case HB_OP_ADD: case HB_OP_MUL: case HB_OP_MATMUL: case HB_OP_BMM: case HB_OP_CONV2D: case HB_OP_RMSNORM: return 2;
    case HB_OP_ATTENTION: return 3;
    default: return 1;
    }
}

static const char *json_escape(const char *s, char *buf, size_t len)
{
    size_t j = 0;
    for (; *s && j + 7 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { buf[j++] = '\\'; buf[j++] = (char)ch; }
        else if (ch < 0x20) j += (size_t)snprintf(buf + j, len - j, "\\u%04x", ch);
        else buf[j++] = (char)ch;
    }
    buf[j] = 0;
    return buf;
}

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

static void conv_choice_clear(hbc_conv_choice *ch);

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
    if (c) c->hint_dtype = cs->dtype;
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

/* ------------------------------------------------------------------ buffers */

struct hbc_bufpriv { size_t dev_bytes; };

static hb_status cuda_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!out || bytes == 0) return HB_EINVAL;
    memset(out, 0, sizeof *out);
    out->bytes = bytes;
    out->route = route;
    const size_t rounded = (bytes + 63) / 64 * 64;
    hb_status st;
    switch (route) {
    case HB_ROUTE_PAGEABLE:
        out->host = aligned_alloc(64, rounded);
        if (!out->host) return HB_ENOMEM;
        st = HBC_RT(c, cudaMalloc(&out->dev, rounded));
        if (st != HB_OK) { free(out->host); out->host = nullptr; return st; }
        c->dev_bytes += (int64_t)rounded;
        return HB_OK;
    case HB_ROUTE_PINNED:
        HBC_TRY(HBC_RT(c, cudaHostAlloc(&out->host, rounded, cudaHostAllocDefault)));
        c->pinned_bytes += (int64_t)rounded;
        st = HBC_RT(c, cudaMalloc(&out->dev, rounded));
        if (st != HB_OK) { cudaFreeHost(out->host); c->pinned_bytes -= (int64_t)rounded; out->host = nullptr; return st; }
        c->dev_bytes += (int64_t)rounded;
        return HB_OK;
    case HB_ROUTE_MAPPED:
        HBC_TRY(HBC_RT(c, cudaHostAlloc(&out->host, rounded, cudaHostAllocMapped)));
        c->pinned_bytes += (int64_t)rounded;
        st = HBC_RT(c, cudaHostGetDevicePointer(&out->dev, out->host, 0));
        if (st != HB_OK) { cudaFreeHost(out->host); c->pinned_bytes -= (int64_t)rounded; out->host = nullptr; return st; }
        return HB_OK;
    default:
        return HB_EINVAL;
    }
}

static void cuda_buf_free(hb_instance *inst, hb_buf *b)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c || !b) return;
    cudaSetDevice(c->dev);
    const size_t rounded = (b->bytes + 63) / 64 * 64;
    switch (b->route) {
    case HB_ROUTE_PAGEABLE:
        free(b->host);
        if (b->dev) { cudaFree(b->dev); c->dev_bytes -= (int64_t)rounded; }
        break;
    case HB_ROUTE_PINNED:
        if (b->host) { cudaFreeHost(b->host); c->pinned_bytes -= (int64_t)rounded; }
        if (b->dev) { cudaFree(b->dev); c->dev_bytes -= (int64_t)rounded; }
        break;
    case HB_ROUTE_MAPPED:
        if (b->host) { cudaFreeHost(b->host); c->pinned_bytes -= (int64_t)rounded; }
        break;
    default:
        break;
    }
    if (!c->sticky) (void)cudaGetLastError();
    memset(b, 0, sizeof *b);
}

static hb_status cuda_upload(hb_instance *inst, hb_buf *b)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b || !b->host || !b->dev) return HB_EINVAL;
    if (b->route == HB_ROUTE_MAPPED) return HB_OK;
    HBC_TRY(tmark_begin(c));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice, c->stream)));
    HBC_TRY(tmark_end(c));
    return sync(c);
}

static hb_status cuda_download(hb_instance *inst, hb_buf *b)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b || !b->host || !b->dev) return HB_EINVAL;
    if (b->route == HB_ROUTE_MAPPED) return sync(c); /* kernels wrote host memory directly */
    HBC_TRY(tmark_begin(c));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(b->host, b->dev, b->bytes, cudaMemcpyDeviceToHost, c->stream)));
    HBC_TRY(tmark_end(c));
    return sync(c);
}

/* ------------------------------------------------------------------ cuBLAS */

static const char *blas_compute_name(hb_dtype d)
{
    return d == HB_TF32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F";
}

/* C[m,n] = A[m,k] B[k,n], row-major, batch matrices at strides m*k, k*n, m*n. Row-major C = A B is
 * column-major C^T = B^T A^T, so cuBLAS gets (n, m, k) with B first. */
static hb_status gemm(hbc_ctx *c, hb_dtype dt, const void *A, const void *B, void *C, int64_t m, int64_t n, int64_t k,
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

/* ------------------------------------------------------------------ cuDNN */

static cudnnDataType_t dnn_type(hb_dtype d)
{
    return d == HB_F16 ? CUDNN_DATA_HALF : d == HB_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

static const char *conv_algo_name(cudnnConvolutionFwdAlgo_t a)
{
    switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
    }
}
static const char *math_name(cudnnMathType_t m)
{
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
    default: return "?";
    }
}

/* The descriptors of one convolution; destroyed by conv_desc_free. */
struct conv_desc {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t cv;
};
static void conv_desc_free(conv_desc *d)
{
    if (d->x) cudnnDestroyTensorDescriptor(d->x);
    if (d->y) cudnnDestroyTensorDescriptor(d->y);
    if (d->w) cudnnDestroyFilterDescriptor(d->w);
    if (d->cv) cudnnDestroyConvolutionDescriptor(d->cv);
    memset(d, 0, sizeof *d);
}

/* f32: FMA math only (no TF32 behind the user's back); tf32: cuDNN's default math, which on
 * compute capability >= 8.0 permits TF32 tensor cores for f32 data (cuDNN API, cudnnMathType_t);
 * f16/bf16: tensor-op math, f32 accumulation (compute type FLOAT). */
static cudnnMathType_t conv_math(hb_dtype d)
{
    return d == HB_F32 ? CUDNN_FMA_MATH : d == HB_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
}

/* Descriptors in layout fmt (NCHW: hybench's own; NHWC: the tensor cores' native layout, used with
 * transforms on both sides when that is faster). Filters: NCHW = OIHW (KCRS), NHWC = KRSC. */
static hb_status conv_desc_make(hbc_ctx *c, const conv_p &p, hb_dtype dt, cudnnTensorFormat_t fmt, conv_desc *d)
{
    memset(d, 0, sizeof *d);
    const cudnnDataType_t t = dnn_type(dt);
    hb_status st;
#define HBC_DD(call)                                                                                                   \
    if ((st = HBC_DNN(c, call)) != HB_OK) { conv_desc_free(d); return st; }
    HBC_DD(cudnnCreateTensorDescriptor(&d->x));
    HBC_DD(cudnnCreateTensorDescriptor(&d->y));
    HBC_DD(cudnnCreateFilterDescriptor(&d->w));
    HBC_DD(cudnnCreateConvolutionDescriptor(&d->cv));
    HBC_DD(cudnnSetTensor4dDescriptor(d->x, fmt, t, (int)p.b, (int)p.c, (int)p.h, (int)p.w));
    HBC_DD(cudnnSetFilter4dDescriptor(d->w, t, fmt, (int)p.oc, (int)(p.c / p.g), (int)p.kh, (int)p.kw));
    HBC_DD(cudnnSetConvolution2dDescriptor(d->cv, (int)p.ph, (int)p.pw, (int)p.sh, (int)p.sw, (int)p.dh, (int)p.dw,
                                           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    HBC_DD(cudnnSetConvolutionGroupCount(d->cv, (int)p.g));
    HBC_DD(cudnnSetConvolutionMathType(d->cv, conv_math(dt)));
    int n, ch, h, w;
    HBC_DD(cudnnGetConvolution2dForwardOutputDim(d->cv, d->x, d->w, &n, &ch, &h, &w));
    if (n != p.b || ch != p.oc || h != p.oh || w != p.ow) {
        fprintf(stderr, "hb_cuda: cuDNN output dims %dx%dx%dx%d differ from hybench's\n", n, ch, h, w);
        conv_desc_free(d);
        return HB_EDEVICE;
    }
    HBC_DD(cudnnSetTensor4dDescriptor(d->y, fmt, t, n, ch, h, w));
#undef HBC_DD
    return HB_OK;
}

static bool shape_eq(const hb_shape *a, const hb_shape *b) { return memcmp(a, b, sizeof *a) == 0; }

/* The other-layout path: plain 4-d tensor descriptors of x, w (as [oc, c/g, kh, kw]) and y in the
 * case's layout (s: NCHW/KCRS, or NHWC/KRSC for layout=nhwc) and in the other one (t), for
 * cudnnTransformTensor, the convolution descriptors of the other layout, and the three copies in the
 * other layout in c->conv_tmp. */
struct conv_nhwc {
    conv_desc d;                                 /* the other layout's convolution descriptors */
    cudnnTensorDescriptor_t xs, ws, ys, xt, wt, yt; /* s: the case's layouts, t: the other layout's */
    void *xb, *wb, *yb;
};
static void conv_nhwc_free(conv_nhwc *n)
{
    conv_desc_free(&n->d);
    cudnnTensorDescriptor_t *all[6] = {&n->xs, &n->ws, &n->ys, &n->xt, &n->wt, &n->yt};
    for (int i = 0; i < 6; i++)
        if (*all[i]) { cudnnDestroyTensorDescriptor(*all[i]); *all[i] = nullptr; }
}
static size_t al256(size_t x) { return (x + 255) / 256 * 256; }
/* native_nhwc: the case's tensors are NHWC (layout=nhwc); the copies are then NCHW. */
static hb_status conv_nhwc_make(hbc_ctx *c, const conv_p &p, hb_dtype dt, bool native_nhwc, conv_nhwc *n)
{
    memset(n, 0, sizeof *n);
    const cudnnTensorFormat_t fs = native_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                              ft = native_nhwc ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    HBC_TRY(conv_desc_make(c, p, dt, ft, &n->d));
    const cudnnDataType_t t = dnn_type(dt);
    const int dims[3][4] = {{(int)p.b, (int)p.c, (int)p.h, (int)p.w},
                            {(int)p.oc, (int)(p.c / p.g), (int)p.kh, (int)p.kw},
                            {(int)p.b, (int)p.oc, (int)p.oh, (int)p.ow}};
    cudnnTensorDescriptor_t *src[3] = {&n->xs, &n->ws, &n->ys}, *dst[3] = {&n->xt, &n->wt, &n->yt};
    size_t bytes[3];
    hb_status st = HB_OK;
    for (int i = 0; i < 3 && st == HB_OK; i++) {
        st = HBC_DNN(c, cudnnCreateTensorDescriptor(src[i]));
        if (st == HB_OK) st = HBC_DNN(c, cudnnCreateTensorDescriptor(dst[i]));
        if (st == HB_OK) st = HBC_DNN(c, cudnnSetTensor4dDescriptor(*src[i], fs, t, dims[i][0], dims[i][1], dims[i][2], dims[i][3]));
        if (st == HB_OK) st = HBC_DNN(c, cudnnSetTensor4dDescriptor(*dst[i], ft, t, dims[i][0], dims[i][1], dims[i][2], dims[i][3]));
        bytes[i] = al256((size_t)dims[i][0] * dims[i][1] * dims[i][2] * dims[i][3] * hbc_esize(dt));
    }
    if (st == HB_OK) st = hbc_grow(c, &c->conv_tmp, &c->conv_tmp_bytes, bytes[0] + bytes[1] + bytes[2]);
    if (st != HB_OK) { conv_nhwc_free(n); return st; }
    n->xb = c->conv_tmp;
    n->wb = (char *)c->conv_tmp + bytes[0];
    n->yb = (char *)c->conv_tmp + bytes[0] + bytes[1];
    return HB_OK;
}
/* Fastest algorithm for descriptors d on these buffers with cudnnFindConvolutionForwardAlgorithmEx
 * (every algorithm timed once; a temporary workspace of up to 1 GiB or a quarter of free memory).
 * f32 keeps FMA-math results only (no TF32 behind the user's back). */
static hb_status conv_find(hbc_ctx *c, hb_dtype dt, const conv_desc &d, const void *x, const void *w, void *y,
                           cudnnConvolutionFwdAlgoPerf_t *best)
{
    size_t free_b = 0, total_b = 0;
    HBC_TRY(HBC_RT(c, cudaMemGetInfo(&free_b, &total_b)));
    size_t ws_cap = (size_t)1 << 30;
    if (ws_cap > free_b / 4) ws_cap = free_b / 4;
    void *ws = nullptr;
    if (cudaMalloc(&ws, ws_cap) != cudaSuccess) {
        (void)cudaGetLastError();
        ws = nullptr;
        ws_cap = 0;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    hb_status st = HBC_DNN(c, cudnnFindConvolutionForwardAlgorithmEx(c->dnn, d.x, x, d.w, w, d.cv, d.y, y,
                                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf, ws,
                                                                     ws_cap));
    if (ws) cudaFree(ws);
    if (st != HB_OK) return st;
    for (int i = 0; i < got; i++) /* sorted by time */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= ws_cap &&
            (dt != HB_F32 || perf[i].mathType == CUDNN_FMA_MATH)) {
            *best = perf[i];
            return HB_OK;
        }
    return HB_ESKIP;
}

static hb_status conv_exec(hbc_ctx *c, const conv_desc &d, cudnnConvolutionFwdAlgo_t algo, cudnnMathType_t math,
                           size_t ws_bytes, const void *x, const void *w, void *y)
{
    const float one = 1.0f, zero = 0.0f;
    if (ws_bytes) HBC_TRY(hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, ws_bytes));
    HBC_TRY(HBC_DNN(c, cudnnSetConvolutionMathType(d.cv, math)));
    return HBC_DNN(c, cudnnConvolutionForward(c->dnn, &one, d.x, x, d.w, w, d.cv, algo, c->dnn_ws, ws_bytes, &zero, d.y, y));
}

/* Run the choice's convolution on x, w, y in the choice's layout (no transforms). */
static hb_status conv_exec_choice(hbc_ctx *c, const hbc_conv_choice &ch, const conv_desc &d, const void *x,
                                  const void *w, void *y)
{
    if (ch.graph) return hbc_conv_graph_exec(c, ch.g, x, w, y);
    return conv_exec(c, d, ch.algo, ch.math, ch.ws_bytes, x, w, y);
}

/* cuda_transpose.cu: src [nb][rows][cols] -> dst [nb][cols][rows] (esize 2 or 4 bytes), enqueued;
 * HB_ESKIP when its grid limits do not fit. */
hb_status hbc_transpose_batched(hbc_ctx *c, size_t esize, const void *src, void *dst, int64_t nb, int64_t rows,
                                int64_t cols);

/* The other-layout pipeline on the case's buffers: x, w -> copies in the other layout, convolve
 * there, y back into the case's layout (NCHW case: NCHW->NHWC->NCHW; layout=nhwc case:
 * NHWC->NCHW->NHWC). x and y go through the own batched transpose when own_tr (cuda_transpose.cu),
 * else cudnnTransformTensor; the filter (small) always through cuDNN. */
static hb_status conv_exec_nhwc(hbc_ctx *c, const conv_nhwc &n, const hbc_conv_choice &ch, const void *x,
                                const void *w, void *y, const conv_p &p, bool own_tr, bool native_nhwc)
{
    const float one = 1.0f, zero = 0.0f;
    const size_t es = hbc_esize(ch.dtype);
    const int64_t hw = p.h * p.w, ohw = p.oh * p.ow;
    if (own_tr) HBC_TRY(hbc_transpose_batched(c, es, x, n.xb, p.b, native_nhwc ? hw : p.c, native_nhwc ? p.c : hw));
    else HBC_TRY(HBC_DNN(c, cudnnTransformTensor(c->dnn, &one, n.xs, x, &zero, n.xt, n.xb)));
    HBC_TRY(HBC_DNN(c, cudnnTransformTensor(c->dnn, &one, n.ws, w, &zero, n.wt, n.wb)));
    HBC_TRY(conv_exec_choice(c, ch, n.d, n.xb, n.wb, n.yb));
    if (own_tr) return hbc_transpose_batched(c, es, n.yb, y, p.b, native_nhwc ? p.oc : ohw, native_nhwc ? ohw : p.oc);
    return HBC_DNN(c, cudnnTransformTensor(c->dnn, &one, n.yt, n.yb, &zero, n.ys, y));
}
/* The own transpose is opt-in (HB_CUDA_CONV_OWN_TRANSPOSE=1): measured on the H100 it was no faster
 * than cudnnTransformTensor (f16 b64 c64 56x56 3x3 pipeline 0.112 vs 0.105 ms; batch 1 c128 28x28
 * 0.0168 vs 0.0174 ms), see NOTES.md. Grid limits of cuda_transpose.cu: 65535 tiles of 32 rows. */
static bool own_tr_fits(const conv_p &p)
{
    const char *e = getenv("HB_CUDA_CONV_OWN_TRANSPOSE");
    const int64_t lim = (int64_t)65535 * 32;
    return e && *e == '1' && p.b <= 65535 && p.c <= lim && p.oc <= lim && p.h * p.w <= lim && p.oh * p.ow <= lim;
}
static void conv_choice_clear(hbc_conv_choice *ch)
{
    if (ch->g) hbc_conv_graph_free(ch->g);
    memset(ch, 0, sizeof *ch);
}

static size_t conv_ws_cap(hbc_ctx *c)
{
    (void)c;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) { (void)cudaGetLastError(); return 0; }
    size_t cap = (size_t)1 << 30;
    return cap < free_b / 4 ? cap : free_b / 4;
}

/* Choose once per (shape, dtype, memory), by measurement: on the mapped route the operands are host
 * memory read over the bus, where the best engine is another one (the H100 reference run took the
 * device-memory choice there and computed 1x1 tf32 conv 1.6x slower than the run before). The case's
 * layout ("native": NCHW, or NHWC for layout=nhwc) and the other one are both timed
 * (hbc_time_best: launch-gated events, best of 3, on the case's own buffers):
 *   legacy native  the fastest algorithm of cudnnFindConvolutionForwardAlgorithmEx on the case's
 *                tensors (every algorithm; cuDNN transforms internally where an algorithm needs it);
 *   graph native every engine of the v9 graph API (heuristics A + fallback) on the case's strides;
 *   legacy other, graph other  the same on copies in the other layout, convolution alone (for an
 *                NCHW case: what a framework with channels-last tensors pays, the exhaustive NHWC
 *                reference; for an NHWC case: the NCHW engines);
 *   pipeline     the faster other-layout candidate inside the transforms into the other layout and
 *                back (NCHW case: NCHW->NHWC->NCHW; NHWC case: NHWC->NCHW->NHWC).
 * Kept: the fastest of legacy native, graph native and the pipeline (whole pipelines that take the
 * case's tensors). All the times go to case_info (stored by layout: *_nchw_ms, *_nhwc_ms), so the gap
 * to the exhaustive best is in every record. HB_CUDA_CONV_NCHW_ONLY=1 skips the other layout for an
 * NCHW case, HB_CUDA_CONV_NATIVE_ONLY=1 for any case; HB_CUDA_CONV_API=legacy or =graph keeps one API. */
static hb_status conv_choose(hbc_ctx *c, const hb_case *cs, const conv_p &p, const conv_desc &d, const void *x,
                             const void *w, void *y, hbc_conv_choice **out)
{
    const bool native_nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
    /* tests: HB_CUDA_CONV_FORCE_NHWC=1 (NCHW cases) or HB_CUDA_CONV_FORCE_OTHER=1 (any case) take the
     * other-layout pipeline whenever it runs, chosen afresh and never cached, so that its transforms
     * are checked against the reference too */
    const bool force_other = (!native_nhwc && getenv("HB_CUDA_CONV_FORCE_NHWC")) || getenv("HB_CUDA_CONV_FORCE_OTHER");
    for (int i = 0; i < c->nconv && i < HBC_CONV_CACHE && !force_other; i++)
        if (c->conv[i].valid && c->conv[i].dtype == cs->dtype && c->conv[i].mapped == (cs->route == HB_ROUTE_MAPPED) &&
            shape_eq(&c->conv[i].shape, &cs->shape)) {
            *out = &c->conv[i];
            return HB_OK;
        }
    const char *api = getenv("HB_CUDA_CONV_API");
    const bool use_legacy = !(api && !strcmp(api, "graph")), use_graph = !(api && !strcmp(api, "legacy"));
    const int64_t dims[16] = {p.b, p.c, p.h, p.w, p.oc, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw, p.g, p.oh, p.ow};
    const size_t cap = conv_ws_cap(c);
    char why[200];
    hbc_conv_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.shape = cs->shape;
    ch.dtype = cs->dtype;
    ch.mapped = cs->route == HB_ROUTE_MAPPED;
    float best = 1e30f;
    float leg_nat = 0, gr_nat = 0, leg_oth = 0, gr_oth = 0, pipe = 0;
    int gr_nat_n = 0, gr_oth_n = 0;
    /* legacy, case's layout */
    cudnnConvolutionFwdAlgoPerf_t b1;
    if (use_legacy && conv_find(c, cs->dtype, d, x, w, y, &b1) == HB_OK) {
        hbc_conv_choice t = ch;
        t.algo = b1.algo; t.math = b1.mathType; t.ws_bytes = b1.memory;
        if (t.ws_bytes) HBC_TRY(hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, t.ws_bytes));
        if (hbc_time_best(c, [&]() { return conv_exec_choice(c, t, d, x, w, y); }, &leg_nat) == HB_OK) {
            best = leg_nat;
            ch.algo = t.algo; ch.math = t.math; ch.ws_bytes = t.ws_bytes;
            snprintf(ch.name, sizeof ch.name, "%s/%s", conv_algo_name(t.algo), math_name(t.math));
        } else {
            leg_nat = 0;
        }
    }
    if (c->sticky) return HB_EDEVICE;
    /* graph, case's layout */
    hbc_conv_graph *gn = nullptr;
    if (use_graph && hbc_conv_graph_tune(c, cs->dtype, native_nhwc ? 1 : 0, dims, x, w, y, cap, &gn, &gr_nat, &gr_nat_n, why,
                                         sizeof why) == HB_OK) {
        if (gr_nat < best) {
            best = gr_nat;
            ch.graph = 1; ch.g = gn; gn = nullptr; ch.ws_bytes = hbc_conv_graph_ws(ch.g);
            snprintf(ch.name, sizeof ch.name, "%s", hbc_conv_graph_name(ch.g));
        }
    } else if (use_graph) {
        fprintf(stderr, "hb_cuda: conv graph %s: %s\n", native_nhwc ? "NHWC" : "NCHW", why);
    }
    if (gn) hbc_conv_graph_free(gn);
    if (c->sticky) { conv_choice_clear(&ch); return HB_EDEVICE; }
    /* the other layout: the convolution alone in both APIs, then the faster inside the transform pipeline */
    if (!getenv("HB_CUDA_CONV_NATIVE_ONLY") && (native_nhwc || !getenv("HB_CUDA_CONV_NCHW_ONLY"))) {
        conv_nhwc n;
        if (conv_nhwc_make(c, p, cs->dtype, native_nhwc, &n) == HB_OK) {
            const float one = 1.0f, zero = 0.0f;
            hb_status st = HBC_DNN(c, cudnnTransformTensor(c->dnn, &one, n.xs, x, &zero, n.xt, n.xb));
            if (st == HB_OK) st = HBC_DNN(c, cudnnTransformTensor(c->dnn, &one, n.ws, w, &zero, n.wt, n.wb));
            hbc_conv_choice h = ch;
            h.g = nullptr; h.graph = 0;
            float hbest = 1e30f;
            cudnnConvolutionFwdAlgoPerf_t b2;
            if (st == HB_OK && use_legacy && conv_find(c, cs->dtype, n.d, n.xb, n.wb, n.yb, &b2) == HB_OK) {
                hbc_conv_choice t = h;
                t.algo = b2.algo; t.math = b2.mathType; t.ws_bytes = b2.memory;
                if ((!t.ws_bytes || hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, t.ws_bytes) == HB_OK) &&
                    hbc_time_best(c, [&]() { return conv_exec_choice(c, t, n.d, n.xb, n.wb, n.yb); }, &leg_oth) == HB_OK) {
                    hbest = leg_oth;
                    h.algo = t.algo; h.math = t.math; h.ws_bytes = t.ws_bytes;
                    snprintf(h.name, sizeof h.name, "%s/%s", conv_algo_name(t.algo), math_name(t.math));
                } else {
                    leg_oth = 0;
                }
            }
            hbc_conv_graph *gh = nullptr;
            if (st == HB_OK && use_graph && !c->sticky &&
                hbc_conv_graph_tune(c, cs->dtype, native_nhwc ? 0 : 1, dims, n.xb, n.wb, n.yb, cap, &gh, &gr_oth, &gr_oth_n,
                                    why, sizeof why) == HB_OK) {
                if (gr_oth < hbest) {
                    hbest = gr_oth;
                    h.graph = 1; h.g = gh; gh = nullptr; h.ws_bytes = hbc_conv_graph_ws(h.g);
                    snprintf(h.name, sizeof h.name, "%s", hbc_conv_graph_name(h.g));
                }
            }
            if (gh) hbc_conv_graph_free(gh);
            if (hbest < 1e30f && !c->sticky &&
                (!h.ws_bytes || hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, h.ws_bytes) == HB_OK) &&
                hbc_time_best(c, [&]() { return conv_exec_nhwc(c, n, h, x, w, y, p, own_tr_fits(p), native_nhwc); }, &pipe) == HB_OK &&
                (pipe < best || force_other)) {
                best = pipe;
                if (ch.g) hbc_conv_graph_free(ch.g);
                ch = h;
                ch.nhwc = 1;
            } else {
                if (h.g) hbc_conv_graph_free(h.g);
                if (hbest >= 1e30f || c->sticky) pipe = 0;
            }
            conv_nhwc_free(&n);
        }
        if (c->sticky) { conv_choice_clear(&ch); return HB_EDEVICE; }
    }
    if (best >= 1e30f) {
        fprintf(stderr, "hb_cuda: cuDNN offered no working forward convolution for this shape\n");
        conv_choice_clear(&ch);
        return HB_ESKIP;
    }
    /* the times by layout (hbc_conv_choice: *_nchw, *_nhwc; nhwc_pipe_ms is the other-layout pipeline) */
    ch.legacy_nchw_ms = native_nhwc ? leg_oth : leg_nat; ch.graph_nchw_ms = native_nhwc ? gr_oth : gr_nat;
    ch.legacy_nhwc_ms = native_nhwc ? leg_nat : leg_oth; ch.graph_nhwc_ms = native_nhwc ? gr_nat : gr_oth;
    ch.graph_nchw_n = native_nhwc ? gr_oth_n : gr_nat_n; ch.graph_nhwc_n = native_nhwc ? gr_nat_n : gr_oth_n;
    ch.nhwc_pipe_ms = pipe;
    ch.chosen_ms = best;
    ch.valid = force_other ? 0 : 1;
    /* append; when full, overwrite round-robin */
    hbc_conv_choice *slot = &c->conv[c->nconv < HBC_CONV_CACHE ? c->nconv : c->nconv % HBC_CONV_CACHE];
    c->nconv++;
    conv_choice_clear(slot);
    *slot = ch;
    *out = slot;
    return HB_OK;
}
static hb_status run_conv(hbc_ctx *c, const hb_case *cs, const void *x, const void *w, void *y)
{
    conv_p p;
    if (!conv_params(&cs->shape, false, &p)) return HB_EINVAL;
    const bool native_nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
    conv_desc d;
    HBC_TRY(conv_desc_make(c, p, cs->dtype, native_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, &d));
    hbc_conv_choice *ch = nullptr;
    hb_status st = conv_choose(c, cs, p, d, x, w, y, &ch);
    if (st == HB_OK && ch->ws_bytes) st = hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, ch->ws_bytes);
    if (st == HB_OK && !ch->nhwc) {
        st = tmark_begin_gated(c);
        if (st == HB_OK) st = conv_exec_choice(c, *ch, d, x, w, y);
    }
    if (st == HB_OK && ch->nhwc) {
        conv_nhwc n;
        st = conv_nhwc_make(c, p, cs->dtype, native_nhwc, &n);
        if (st == HB_OK) {
            st = tmark_begin_gated(c);
            if (st == HB_OK) st = conv_exec_nhwc(c, n, *ch, x, w, y, p, own_tr_fits(p), native_nhwc);
            conv_nhwc_free(&n);
        }
    }
    if (st == HB_OK) {
        snprintf(c->last_impl, sizeof c->last_impl, "cudnn-conv:%.50s", ch->name);
        const char *tr = own_tr_fits(p) ? "own transpose kernel" : "cudnnTransformTensor";
        if (!ch->nhwc)
            snprintf(c->last_algo, sizeof c->last_algo, "%s, on the case's %s tensors (no transforms)",
                     ch->graph ? "graph API engine" : "legacy API algorithm", native_nhwc ? "NHWC" : "NCHW");
        else
            snprintf(c->last_algo, sizeof c->last_algo, "%s, %s convolution inside %s transforms (%s)",
                     ch->graph ? "graph API engine" : "legacy API algorithm", native_nhwc ? "NCHW" : "NHWC",
                     native_nhwc ? "NHWC->NCHW->NHWC" : "NCHW->NHWC->NCHW", tr);
        c->last_ws = ch->ws_bytes + (ch->nhwc ? c->conv_tmp_bytes : 0);
        c->last_conv = ch;
    }
    conv_desc_free(&d);
    return st;
}
static hb_status run_pool(hbc_ctx *c, const hb_case *cs, const void *x, void *y)
{
    conv_p p;
    if (!conv_params(&cs->shape, true, &p)) return HB_EINVAL;
    const bool is_max = cs->op == HB_OP_MAXPOOL;
    const hbc_elem e = hbc_elem_of(cs->dtype);
    c->last_ws = 0;
    c->last_algo[0] = 0;
    /* cuDNN pooling has no dilation and needs padding < window (else a window may lie wholly in the
     * padding, which hybench defines as 0): own kernel there. */
    if (p.dh != 1 || p.dw != 1 || p.ph >= p.kh || p.pw >= p.kw || p.b * p.c > INT_MAX) {
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_pool_kernel");
        HBC_TRY(tmark_begin_gated(c));
        return hbc_pool(c, is_max, e, x, y, p.b, p.c, p.h, p.w, p.oh, p.ow, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw);
    }
    cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
    cudnnPoolingDescriptor_t pd = nullptr;
    const cudnnDataType_t t = dnn_type(cs->dtype);
    hb_status st = HBC_DNN(c, cudnnCreateTensorDescriptor(&xd));
    if (st == HB_OK) st = HBC_DNN(c, cudnnCreateTensorDescriptor(&yd));
    if (st == HB_OK) st = HBC_DNN(c, cudnnCreatePoolingDescriptor(&pd));
    if (st == HB_OK)
        st = HBC_DNN(c, cudnnSetPooling2dDescriptor(pd, is_max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                                    CUDNN_PROPAGATE_NAN, (int)p.kh, (int)p.kw, (int)p.ph, (int)p.pw,
                                                    (int)p.sh, (int)p.sw));
    if (st == HB_OK) st = HBC_DNN(c, cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, t, (int)p.b, (int)p.c, (int)p.h, (int)p.w));
    int n = 0, ch = 0, h = 0, w = 0;
    if (st == HB_OK) st = HBC_DNN(c, cudnnGetPooling2dForwardOutputDim(pd, xd, &n, &ch, &h, &w));
    if (st == HB_OK && (n != p.b || ch != p.c || h != p.oh || w != p.ow)) st = HB_ESKIP;
    if (st == HB_OK) st = HBC_DNN(c, cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, t, n, ch, h, w));
    if (st == HB_OK) st = tmark_begin_gated(c);
    if (st == HB_OK) {
        const float alpha = 1.0f, beta = 0.0f;
        st = HBC_DNN(c, cudnnPoolingForward(c->dnn, pd, &alpha, xd, x, &beta, yd, y));
        snprintf(c->last_impl, sizeof c->last_impl, "cudnn-pool");
        snprintf(c->last_algo, sizeof c->last_algo, "cudnnPoolingForward");
    }
    if (xd) cudnnDestroyTensorDescriptor(xd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (pd) cudnnDestroyPoolingDescriptor(pd);
    if (st == HB_ESKIP) { /* cuDNN refused this combination: own kernel */
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_pool_kernel");
        HBC_TRY(tmark_begin_gated(c));
        return hbc_pool(c, is_max, e, x, y, p.b, p.c, p.h, p.w, p.oh, p.ow, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw);
    }
    return st;
}

/* ------------------------------------------------------------------ run */

static double host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static hb_status cuda_run(hb_instance *inst, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const double t_enter = host_now();
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    char why[160];
    hb_status sup = cuda_supports(inst, cs, why, sizeof why);
    if (sup != HB_OK) return sup;
    const hb_op op = cs->op;
    c->hint_dtype = cs->dtype;
    const size_t es = hbc_esize(cs->dtype);
    const int nin = op_ninputs(op);
    if (!out || !out->dev) return HB_EINVAL;
    for (int i = 0; i < nin; i++)
        if (!in || !in[i] || !in[i]->dev || in[i]->bytes < (size_t)op_elems(op, &cs->shape, i) * es) return HB_EINVAL;
    if (out->bytes < (size_t)op_elems(op, &cs->shape, -1) * es) return HB_EINVAL;
    const hbc_elem e = hbc_elem_of(cs->dtype);
    const hb_shape *s = &cs->shape;
    c->last_algo[0] = 0;
    c->last_ws = 0;
    c->last_conv = nullptr;
    hb_status st;
    /* conv2d, pooling, attention and collectives mark the timer's start themselves, after their host-side setup */
    if (op != HB_OP_CONV2D && op != HB_OP_MAXPOOL && op != HB_OP_AVGPOOL && op != HB_OP_ATTENTION && !hbc_is_coll(op))
        HBC_TRY(tmark_begin_gated(c));
    switch (op) {
    case HB_OP_ADD: case HB_OP_MUL: case HB_OP_RELU: case HB_OP_GELU: case HB_OP_SILU:
        snprintf(c->last_impl, sizeof c->last_impl, "own-kernel");
        snprintf(c->last_algo, sizeof c->last_algo, "own_elementwise_vec16");
        st = hbc_elementwise(c, op, e, in[0]->dev, nin > 1 ? in[1]->dev : nullptr, out->dev, s->n);
        break;
    case HB_OP_MATMUL:
        st = gemm(c, cs->dtype, in[0]->dev, in[1]->dev, out->dev, s->m, s->n, s->k, 1);
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
                              a.kvs, a.d, a.causal, &plan);
        if (st == HB_OK) st = tmark_begin_gated(c);
        if (st == HB_OK)
            st = hbc_attn_exec(c, &plan, cs->dtype, in[0]->dev, in[1]->dev, in[2]->dev, out->dev, a.b, a.heads, a.kvh,
                               a.seq, a.kvs, a.d, a.causal);
        break;
    }
    default:
        return HB_ESKIP;
    }
    hb_status st2 = st == HB_OK ? tmark_end(c) : HB_OK;
    c->enqueue_s[c->enqueue_n++ % HBC_ENQ_KEEP] = host_now() - t_enter;
    hbc_gate_release(c);
    if (st != HB_OK || st2 != HB_OK) {
        if (!c->sticky) (void)cudaStreamSynchronize(c->stream);
        return st != HB_OK ? st : st2;
    }
    return sync(c);
}

/* ------------------------------------------------------------------ timers */

static hb_status cuda_timer_begin(hb_instance *inst)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    c->tarmed = 1;
    c->tstarted = 0;
    return HB_OK;
}

/* Elapsed device time between the first enqueue and the end of the last one since timer_begin;
 * 0 when no hook enqueued device work in between (a mapped-route upload, say). */
static hb_status cuda_timer_end(hb_instance *inst, double *seconds)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    const int started = c->tarmed && c->tstarted;
    c->tarmed = c->tstarted = 0;
    if (seconds) *seconds = 0.0;
    if (!started) return HB_OK;
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_end)));
    float ms = 0.0f;
    HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&ms, c->ev_begin, c->ev_end)));
    if (seconds) *seconds = (double)ms * 1e-3;
    return HB_OK;
}

/* ------------------------------------------------------------------ ceilings */

static hb_status ev_time(hbc_ctx *c, double *sec)
{
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_b, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_b)));
    float ms = 0.0f;
    HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&ms, c->ev_a, c->ev_b)));
    *sec = (double)ms * 1e-3;
    return HB_OK;
}

static void add_ceiling(hb_ceiling *out, int max, int *n, const char *name, double value, const char *unit,
                        const char *how)
{
    if (*n >= max || !(value > 0.0)) return;
    hb_ceiling *x = &out[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->value = value;
    snprintf(x->unit, sizeof x->unit, "%s", unit);
    snprintf(x->how, sizeof x->how, "%s", how);
}

/* copy_gbps: own 16-byte copy kernel over 1 GiB -> 1 GiB, bytes read + written, best of 10.
 * triad_gbps: a = b + 3c on 3 x 256 MiB f32, best of 10. */
static void ceil_memory(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = nullptr, *b = nullptr;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(stderr, "hb_cuda: ceilings: cannot allocate 2 GiB for the copy probe\n");
    } else if (hbc_fill_random(c, HBC_F32, b, (int64_t)(bytes / 4), 7) == HB_OK) {
        double best = 1e30, t;
        for (int r = 0; r < 11; r++) {
            if (HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)) != HB_OK || hbc_copy(c, a, b, bytes) != HB_OK ||
                ev_time(c, &t) != HB_OK) { best = 1e30; break; }
            if (r > 0 && t < best) best = t; /* first run is a warm-up */
        }
        add_ceiling(out, max, n, "copy_gbps", 2.0 * (double)bytes / best * 1e-9, "GB/s",
                    "own 16-byte copy kernel, 1 GiB -> 1 GiB, read+write bytes, best of 10");
        const int64_t tn = (int64_t)(256 << 20) / 4;
        float *ta = (float *)a, *tb = (float *)b, *tc = (float *)b + tn;
        best = 1e30;
        for (int r = 0; r < 11; r++) {
            if (HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)) != HB_OK || hbc_triad(c, ta, tb, tc, tn) != HB_OK ||
                ev_time(c, &t) != HB_OK) { best = 1e30; break; }
            if (r > 0 && t < best) best = t;
        }
        add_ceiling(out, max, n, "triad_gbps", 3.0 * (double)tn * 4.0 / best * 1e-9, "GB/s",
                    "own triad kernel a=b+3c, 3 x 256 MiB f32, best of 10");
    }
    if (a) cudaFree(a);
    if (b) cudaFree(b);
}

/* peak_gflops_<dtype>: cuBLAS 8192^3 with the same call as the matmul op, random inputs, best of 5. */
static void ceil_gemm(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    const int64_t N = 8192;
    const hb_dtype dts[4] = {HB_F32, HB_TF32, HB_F16, HB_BF16};
    const char *names[4] = {"peak_gflops_f32", "peak_gflops_tf32", "peak_gflops_f16", "peak_gflops_bf16"};
    void *A = nullptr, *B = nullptr, *C = nullptr;
    const size_t bytes = (size_t)(N * N * 4);
    if (cudaMalloc(&A, bytes) != cudaSuccess || cudaMalloc(&B, bytes) != cudaSuccess || cudaMalloc(&C, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(stderr, "hb_cuda: ceilings: cannot allocate the 8192^3 GEMM probe\n");
    } else {
        for (int i = 0; i < 4; i++) {
            const hbc_elem e = hbc_elem_of(dts[i]);
            if (hbc_fill_random(c, e, A, N * N, 11) != HB_OK || hbc_fill_random(c, e, B, N * N, 12) != HB_OK) break;
            double best = 1e30, t;
            for (int r = 0; r < 6; r++) {
                if (HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)) != HB_OK ||
                    gemm(c, dts[i], A, B, C, N, N, N, 1) != HB_OK || ev_time(c, &t) != HB_OK) { best = 1e30; break; }
                if (r > 0 && t < best) best = t;
            }
            char how[96];
            snprintf(how, sizeof how, "cuBLAS GemmEx 8192^3 %s, best of 5", blas_compute_name(dts[i]));
            add_ceiling(out, max, n, names[i], 2.0 * (double)(N * N * N) / best * 1e-9, "GFLOP/s", how);
        }
    }
    if (A) cudaFree(A);
    if (B) cudaFree(B);
    if (C) cudaFree(C);
}

/* h2d/d2h per route on 256 MiB, best of 5: pageable (malloc'd, cudaMemcpyAsync + sync), pinned
 * (cudaHostAlloc), mapped (a kernel reading / writing mapped host memory through its device alias). */
static void ceil_transfers(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    const size_t bytes = (size_t)256 << 20;
    void *dev = nullptr, *pin = nullptr, *map = nullptr, *mapd = nullptr, *page = nullptr;
    uint32_t *sink = nullptr;
    if (cudaMalloc(&dev, bytes) != cudaSuccess || cudaMalloc((void **)&sink, 16) != cudaSuccess) {
        (void)cudaGetLastError();
        goto done;
    }
    page = aligned_alloc(64, bytes);
    if (page) memset(page, 1, bytes);
    if (cudaHostAlloc(&pin, bytes, cudaHostAllocDefault) != cudaSuccess) { (void)cudaGetLastError(); pin = nullptr; }
    if (cudaHostAlloc(&map, bytes, cudaHostAllocMapped) != cudaSuccess || cudaHostGetDevicePointer(&mapd, map, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        if (map) cudaFreeHost(map);
        map = nullptr;
    }
    for (int route = 0; route < 3; route++) {
        void *host = route == 0 ? page : route == 1 ? pin : map;
        if (!host) continue;
        if (route != 0) memset(host, 1, bytes);
        for (int dir = 0; dir < 2; dir++) {
            double best = 1e30, t;
            for (int r = 0; r < 6; r++) {
                hb_status st = HBC_RT(c, cudaEventRecord(c->ev_a, c->stream));
                if (st == HB_OK) {
                    if (route == 2) st = dir == 0 ? hbc_read_probe(c, mapd, bytes, sink) : hbc_write_probe(c, mapd, bytes);
                    else if (dir == 0) st = HBC_RT(c, cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c->stream));
                    else st = HBC_RT(c, cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, c->stream));
                }
                if (st != HB_OK || ev_time(c, &t) != HB_OK) { best = 1e30; break; }
                if (r > 0 && t < best) best = t;
            }
            char name[40], how[96];
            const char *rn = route == 0 ? "pageable" : route == 1 ? "pinned" : "mapped";
            snprintf(name, sizeof name, "%s_gbps_%s", dir == 0 ? "h2d" : "d2h", rn);
            snprintf(how, sizeof how, "%s 256 MiB, best of 5",
                     route == 2 ? (dir == 0 ? "kernel reading mapped host memory" : "kernel writing mapped host memory")
                                : (route == 0 ? "cudaMemcpyAsync from/to malloc'd memory" : "cudaMemcpyAsync from/to cudaHostAlloc memory"));
            add_ceiling(out, max, n, name, (double)bytes / best * 1e-9, "GB/s", how);
        }
    }
done:
    if (dev) cudaFree(dev);
    if (sink) cudaFree(sink);
    if (pin) cudaFreeHost(pin);
    if (map) cudaFreeHost(map);
    free(page);
}

static int cuda_ceilings(hb_instance *inst, hb_ceiling *out, int max)
{
    hbc_ctx *c;
    if (enter(inst, &c) != HB_OK) return 0;
    int n = 0;
    ceil_memory(c, out, max, &n);
    if (!c->sticky) ceil_gemm(c, out, max, &n);
    if (!c->sticky) ceil_transfers(c, out, max, &n);
    if (!c->sticky) hbc_coll_ceilings(c, out, max, &n); /* peer-to-peer per GPU pair */
    if (!c->sticky) (void)cudaStreamSynchronize(c->stream);
    return n;
}

/* ------------------------------------------------------------------ info hooks */

static void cuda_mem_info(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b)
{
    hbc_ctx *c = ctx_of(inst);
    if (allocated) *allocated = c ? c->dev_bytes : -1;
    if (free_b) *free_b = -1;
    if (total_b) *total_b = -1;
    if (!c || c->sticky) return;
    size_t f = 0, t = 0;
    cudaSetDevice(c->dev);
    if (cudaMemGetInfo(&f, &t) == cudaSuccess) {
        if (free_b) *free_b = (int64_t)f;
        if (total_b) *total_b = (int64_t)t;
    } else {
        (void)cudaGetLastError();
    }
}

static hb_status cuda_case_info(hb_instance *inst, const hb_case *cs, char *buf, size_t len)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c || !buf || len < 3) return HB_EINVAL;
    size_t j = (size_t)snprintf(buf, len, "{\"impl\":\"%s\"", c->last_impl);
    if (c->last_algo[0] && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"algo\":\"%s\"", c->last_algo);
    if (cs && (cs->op == HB_OP_CONV2D || cs->op == HB_OP_ATTENTION) && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"workspace_bytes\":%zu", c->last_ws);
    if (cs && cs->op == HB_OP_CONV2D && c->last_conv && j < len) {
        /* the one-off choice's timings (ms, launch-gated events, best of 3; 0 = not available) and
         * the ratio of the exhaustive best to the chosen pipeline (>= 1: at least as fast as the
         * fastest cuDNN algorithm or engine found for this shape). The exhaustive best is taken in
         * either layout for an NCHW case (hybench's own layout, which a framework may transpose away
         * from) and in its own layout for a layout=nhwc case (what a channels-last framework runs);
         * exhaustive_best_either_ms is the best of all four in both. other_layout_pipeline_ms: the
         * convolution in the other layout inside the transforms there and back. */
        const hbc_conv_choice *v = c->last_conv;
        const bool nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
        float ex = 0, ex_all = 0;
        const float cand[4] = {v->legacy_nchw_ms, v->graph_nchw_ms, v->legacy_nhwc_ms, v->graph_nhwc_ms};
        for (int i = 0; i < 4; i++) {
            if (cand[i] > 0 && (ex_all == 0 || cand[i] < ex_all)) ex_all = cand[i];
            if (cand[i] > 0 && (!nhwc || i >= 2) && (ex == 0 || cand[i] < ex)) ex = cand[i];
        }
        j += (size_t)snprintf(buf + j, len - j,
                              ",\"conv_choice\":{\"layout\":\"%s\",\"chosen_ms\":%.5g,\"legacy_nchw_ms\":%.5g,\"graph_nchw_ms\":%.5g,"
                              "\"graph_nchw_engines\":%d,\"legacy_nhwc_ms\":%.5g,\"graph_nhwc_ms\":%.5g,"
                              "\"graph_nhwc_engines\":%d,\"%s\":%.5g,\"exhaustive_best_ms\":%.5g,"
                              "\"exhaustive_best_layout\":\"%s\",\"exhaustive_best_either_ms\":%.5g,"
                              "\"exhaustive_best_over_chosen\":%.4g}",
                              nhwc ? "nhwc" : "nchw", (double)v->chosen_ms, (double)v->legacy_nchw_ms, (double)v->graph_nchw_ms,
                              v->graph_nchw_n, (double)v->legacy_nhwc_ms, (double)v->graph_nhwc_ms, v->graph_nhwc_n,
                              nhwc ? "nchw_pipeline_ms" : "nhwc_pipeline_ms", (double)v->nhwc_pipe_ms, (double)ex,
                              nhwc ? "nhwc" : "either", (double)ex_all,
                              v->chosen_ms > 0 ? (double)(ex / v->chosen_ms) : 0.0);
    }
    if (c->gate_on && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"device_timer\":\"events, launch-gated\"");
    if (c->enqueue_n > 0 && j < len) {
        const size_t n = (size_t)(c->enqueue_n < HBC_ENQ_KEEP ? c->enqueue_n : HBC_ENQ_KEEP);
        std::sort(c->enqueue_s, c->enqueue_s + n);
        const double med = n % 2 ? c->enqueue_s[n / 2] : 0.5 * (c->enqueue_s[n / 2 - 1] + c->enqueue_s[n / 2]);
        j += (size_t)snprintf(buf + j, len - j, ",\"host_enqueue_s\":%.9g", med);
    }
    c->enqueue_n = 0;
    if (cs) hbc_coll_case_info(cs, buf, len, &j);
    if (c->nvml && j < len) {
        unsigned sm = 0, smax = 0;
        if (c->nvml->clock(c->nvml->dev, NVML_CLOCK_SM_, &sm) == 0 && c->nvml->max_clock(c->nvml->dev, NVML_CLOCK_SM_, &smax) == 0)
            j += (size_t)snprintf(buf + j, len - j, ",\"sm_clock_mhz\":%u,\"sm_clock_max_mhz\":%u,\"throttled\":%s", sm, smax,
                                  (double)sm < 0.9 * (double)smax ? "true" : "false");
    }
    if (j + 2 > len) return HB_EINVAL;
    snprintf(buf + j, len - j, "}");
    return HB_OK;
}

static hb_status cuda_describe(hb_instance *inst, char *buf, size_t len)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c || !buf) return HB_EINVAL;
    int drv = 0, rt = 0, blas = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    const char *ready_err = nullptr;
    if (ensure_ready(c) != HB_OK) ready_err = "library handles could not be created";
    if (c->blas) cublasGetVersion(c->blas, &blas);
    char name[512];
    json_escape(c->prop.name, name, sizeof name);
    snprintf(buf, len,
             "{\"name\":\"%s\",\"compute_capability\":\"%d.%d\",\"sm_count\":%d,\"memory_bytes\":%zu,"
             "\"l2_bytes\":%d,\"sm_clock_max_mhz\":%d,\"mem_clock_max_mhz\":%d,\"memory_bus_bits\":%d,"
             "\"shared_mem_per_block_optin\":%zu,\"driver_version\":\"%d.%d\",\"nvml_driver_version\":\"%s\","
             "\"runtime_version\":\"%d.%d\",\"cublas_version\":%d,\"cudnn_version\":%zu,\"cudnn_version_built\":%d,"
             "\"pci_bus_id\":\"%04x:%02x:%02x\",\"can_map_host_memory\":%s%s%s%s}",
             name, c->prop.major, c->prop.minor, c->prop.multiProcessorCount, c->prop.totalGlobalMem, c->l2_bytes,
             c->sm_clock_khz / 1000, c->mem_clock_khz / 1000, c->prop.memoryBusWidth, c->prop.sharedMemPerBlockOptin,
             drv / 1000, (drv % 1000) / 10, c->nvml ? c->nvml->driver : "", rt / 1000, (rt % 1000) / 10, blas,
             cudnnGetVersion(), CUDNN_VERSION, c->prop.pciDomainID, c->prop.pciBusID, c->prop.pciDeviceID,
             c->prop.canMapHostMemory ? "true" : "false", ready_err ? ",\"error\":\"" : "", ready_err ? ready_err : "",
             ready_err ? "\"" : "");
    hbc_coll_describe(c, buf, len); /* NCCL version, launch, topology */
    return HB_OK;
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

/* ------------------------------------------------------------------ convert-device */

static hb_status ev_ms(hbc_ctx *c, cudaEvent_t a, cudaEvent_t b, double *sec)
{
    float ms = 0.0f;
    HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&ms, a, b)));
    if (sec) *sec = (double)ms * 1e-3;
    return HB_OK;
}

/* f64 host -> device scratch (copy), then scratch -> dst->dev in dt (kernel); device times of each. */
static hb_status f64_up(hbc_ctx *c, hb_buf *dst, hb_dtype dt, const double *src, size_t n, double *copy_s, double *conv_s)
{
    if (!dst || !dst->dev || !src || n == 0 || dst->bytes < n * hbc_esize(dt)) return HB_EINVAL;
    HBC_TRY(hbc_grow(c, &c->scratch, &c->scratch_bytes, n * sizeof(double)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(c->scratch, src, n * sizeof(double), cudaMemcpyHostToDevice, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_b, c->stream)));
    HBC_TRY(hbc_from_f64(c, hbc_elem_of(dt), (const double *)c->scratch, dst->dev, (int64_t)n));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_c, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_c)));
    HBC_TRY(ev_ms(c, c->ev_a, c->ev_b, copy_s));
    return ev_ms(c, c->ev_b, c->ev_c, conv_s);
}

static hb_status f64_down(hbc_ctx *c, hb_buf *src, hb_dtype dt, double *dst, size_t n, double *copy_s, double *conv_s)
{
    if (!src || !src->dev || !dst || n == 0 || src->bytes < n * hbc_esize(dt)) return HB_EINVAL;
    HBC_TRY(hbc_grow(c, &c->scratch, &c->scratch_bytes, n * sizeof(double)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)));
    HBC_TRY(hbc_to_f64(c, hbc_elem_of(dt), src->dev, (double *)c->scratch, (int64_t)n));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_b, c->stream)));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(dst, c->scratch, n * sizeof(double), cudaMemcpyDeviceToHost, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_c, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_c)));
    HBC_TRY(ev_ms(c, c->ev_a, c->ev_b, conv_s));
    return ev_ms(c, c->ev_b, c->ev_c, copy_s);
}

/* The buffer's element type: hb_buf.dtype, set by the driver after buf_alloc. */
static hb_dtype buf_dtype(const hbc_ctx *c, const hb_buf *b, size_t n)
{
    (void)c;
    if (n == 0 || b->bytes / n >= 4) return HB_F32;
    return b->dtype == HB_BF16 ? HB_BF16 : HB_F16;
}

static hb_status cuda_upload_f64(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *conv_s)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b) return HB_EINVAL;
    return f64_up(c, b, buf_dtype(c, b, n), src, n, copy_s, conv_s);
}

static hb_status cuda_download_f64(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *conv_s)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b) return HB_EINVAL;
    return f64_down(c, b, buf_dtype(c, b, n), dst, n, copy_s, conv_s);
}

extern "C" hb_status hb_cuda_upload_f64_convert(hb_instance *inst, hb_buf *dst, hb_dtype dtype, const double *host_f64,
                                                size_t n)
{
    hbc_ctx *c;
    if (!inst || (int)dtype < 0 || dtype >= HB_DTYPE_COUNT) return HB_EINVAL;
    HBC_TRY(enter(inst, &c));
    return f64_up(c, dst, dtype, host_f64, n, nullptr, nullptr);
}

extern "C" hb_status hb_cuda_download_convert_f64(hb_instance *inst, hb_buf *src, hb_dtype dtype, double *host_f64,
                                                  size_t n)
{
    hbc_ctx *c;
    if (!inst || (int)dtype < 0 || dtype >= HB_DTYPE_COUNT) return HB_EINVAL;
    HBC_TRY(enter(inst, &c));
    return f64_down(c, src, dtype, host_f64, n, nullptr, nullptr);
}

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
};
}
