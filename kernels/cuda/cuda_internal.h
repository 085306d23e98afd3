/*
 * cuda_internal.h - private to the CUDA backend plugin (the .cu files of kernels/cuda): the instance context,
 * the checking macros, the launchers of the plugin's own kernels, and what the files that make up the
 * backend's hooks share (cuda_backend.cu with the ops table, cuda_buffers.cu, cuda_conv_pool.cu,
 * cuda_ceilings.cu, cuda_info.cu).
 *
 * Every CUDA runtime, cuBLAS and cuDNN call goes through HBC_RT / HBC_BLAS / HBC_DNN, which log
 * "hb_cuda: <call text> failed: <error> (file:line)" to stderr and map the error to an hb_status:
 * out of memory (cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED, CUDNN_STATUS_ALLOC_FAILED)
 * -> HB_ENOMEM, anything else -> HB_EDEVICE. A sticky CUDA error (illegal address, launch failure,
 * ...) poisons the CUDA context: the instance remembers it and every later hook returns HB_EDEVICE
 * (the driver restarts the backend's child process).
 *
 * The plugin is self-contained: it calls no harness function, so it loads with RTLD_NOW into any
 * process (the hybench binary, the cmocka test, tools/cuda_selftest) whether or not that process
 * exports the harness symbols.
 */
#ifndef HB_CUDA_INTERNAL_H
#define HB_CUDA_INTERNAL_H

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <stdint.h>
#include <stddef.h>

#include "core/backend.h"
#include "cuda/cuda_algocache.h"
#include "cuda/cuda_config.h"

/* Storage element kinds on the device (tf32 stores f32). */
enum hbc_elem { HBC_F32 = 0, HBC_F16 = 1, HBC_BF16 = 2 };
static inline hbc_elem hbc_elem_of(hb_dtype d)
{
    return d == HB_F16 ? HBC_F16 : d == HB_BF16 ? HBC_BF16 : HBC_F32;
}
static inline size_t hbc_esize(hb_dtype d) { return (d == HB_F16 || d == HB_BF16) ? 2 : 4; }

struct hbc_conv_graph; /* a cuDNN graph-API convolution with its autotuned plan (cuda_conv.cpp) */

/* One cached conv2d implementation choice (per shape and dtype, chosen once by timing, see
 * conv_choose in cuda_conv_pool.cu). Times are device ms, launch-gated events, best of 3. */
struct hbc_conv_choice {
    hb_shape shape;
    hb_dtype dtype;
    int mapped;                /* 1: chosen on mapped host memory (route mapped), 0: device memory */
    int valid;
    int nhwc;                  /* 1: the other-layout pipeline: transform the case's tensors into the other
                                  layout (NCHW case: NHWC; layout=nhwc case: NCHW), convolve, transform back */
    int graph;                 /* 1: the graph-API plan g, 0: the legacy algorithm algo/math */
    int gemm;                  /* 1: the 1x1 convolution as one cuBLAS gemm (cuda_conv_gemm.cu), in the case's layout */
    cudnnConvolutionFwdAlgo_t algo;
    cudnnMathType_t math;
    size_t ws_bytes;
    hbc_conv_graph *g;         /* owned; freed when the slot is reused or the instance closes */
    char name[112];            /* the chosen algorithm or engine */
    /* what was timed: the fastest legacy algorithm and graph engine in each layout (convolution alone,
     * no transforms) and the other-layout pipeline (nhwc_pipe_ms); 0 = not available */
    float legacy_nchw_ms, graph_nchw_ms, legacy_nhwc_ms, graph_nhwc_ms, nhwc_pipe_ms, chosen_ms;
    float gemm_ms;             /* the cuBLAS gemm candidate, case's layout (1x1 stride-1 shapes only) */
    int graph_nchw_n, graph_nhwc_n; /* engines timed */
    /* the algorithm-choice cache (HB_ALGO_CACHE, cuda_choice_cache.cpp): HBC_CACHE_OFF/MISS/HIT; on a
     * hit the times above are the original choice's, read from the entry, and cache_check_ms is the
     * chosen candidate timed in this process (the check that it runs); cache_note: why an entry was
     * refused or not stored, or why the cache does not apply ("" when none) */
    int cache;
    float cache_check_ms;
    char cache_note[160];
};
#define HBC_CONV_CACHE 64

struct hbc_nvml; /* NVML loaded with dlopen, see cuda_info.cu */

struct hbc_ctx {
    int dev;
    cudaDeviceProp prop;
    int sm_clock_khz, mem_clock_khz, l2_bytes;
    int ready;                 /* stream, events and library handles created (lazily) */
    int tarmed, tstarted;      /* timer_begin armed the timer; a hook recorded ev_begin since */
    int tend_pending;          /* run_async enqueued last: timer_end records ev_end (no event per op) */
    int *gate_h, *gate_d;      /* launch gate flag: mapped host memory and its device alias */
    int gate_on, gate_held;    /* gate enabled (HB_CUDA_GATE != 0); a gate kernel is waiting now */
    int sticky;                /* a sticky CUDA error happened: every hook returns HB_EDEVICE */
    double plant_s;            /* planted delay for the next run (plant_delay; < 0: no delay kernel) */
    double plant_hz;           /* the SM clock the delay kernel counts, measured (0: not yet) */
    cudaStream_t stream;
    cudaEvent_t ev_begin, ev_end, ev_a, ev_b, ev_c;
    cublasHandle_t blas;
    cudnnHandle_t dnn;
    void *blas_ws; size_t blas_ws_bytes;       /* cuBLAS workspace (cublasSetWorkspace) */
    void *dnn_ws; size_t dnn_ws_bytes;         /* cuDNN workspace, grown on demand */
    void *scratch; size_t scratch_bytes;       /* reductions' partials, f64 staging, grown on demand */
    void *flush_buf; size_t flush_bytes;       /* 2 x L2, written by flush_cache */
    void *conv_tmp; size_t conv_tmp_bytes;     /* NHWC copies of x, w, y for the NHWC conv path */
    void *qw16; size_t qw16_bytes;             /* quantized matmul, m > 8: W dequantized to f16 [n,k] */
    void *qa16; size_t qa16_bytes;             /* ... and A rounded to f16 [m,k] (cuda_qmatmul.cu) */
    int64_t dev_bytes;                         /* device bytes allocated by this instance now */
    int64_t pinned_bytes;                      /* page-locked host bytes allocated now */
    struct hbc_conv_choice conv[HBC_CONV_CACHE];
    int nconv;
    const struct hbc_conv_choice *last_conv;   /* the conv choice the last run used (case_info) */
    /* Facts about the last run, for case_info. */
    char last_impl[64];
    char last_algo[512];
    char last_qimpl[64];       /* quantized matmul's kernel (case_info "qmatmul_impl"); "" for other ops */
    void *sdpa;                /* cuDNN SDPA graph cache (cuda_sdpa.cpp), freed by hbc_sdpa_free */
    size_t last_ws;
    /* the last run's one-off choice and the algorithm-choice cache (case_info's "algo_cache"):
     * HBC_CACHE_NONE when the case made no choice, else OFF/MISS/HIT with the check time of a hit and
     * the note (hbc_conv_choice's fields of the same names) */
    int last_cache;
    float last_cache_check_ms;
    char last_cache_note[160];
    /* host seconds from run() entry until its device work was all enqueued (the host timer's share
     * that the launch-gated device timer excludes), for the last enqueue_n (at most HBC_ENQ_KEEP)
     * runs since the last case_info, which reports their median: a case's first run also chooses
     * its algorithm (cudnnFind...), hundreds of times a normal call, and must not weigh in */
#define HBC_ENQ_KEEP 512
    double enqueue_s[HBC_ENQ_KEEP];
    long enqueue_n;
    struct hbc_nvml *nvml;
};

/* ---- checking ---- */
hb_status hbc_rt_check(hbc_ctx *c, cudaError_t e, const char *what, const char *file, int line);
hb_status hbc_blas_check(hbc_ctx *c, cublasStatus_t e, const char *what, const char *file, int line);
hb_status hbc_dnn_check(hbc_ctx *c, cudnnStatus_t e, const char *what, const char *file, int line);
#define HBC_RT(c, call) hbc_rt_check((c), (call), #call, __FILE__, __LINE__)
#define HBC_BLAS(c, call) hbc_blas_check((c), (call), #call, __FILE__, __LINE__)
#define HBC_DNN(c, call) hbc_dnn_check((c), (call), #call, __FILE__, __LINE__)
/* Check the last kernel launch (cudaGetLastError). */
#define HBC_LAUNCHED(c, name) hbc_rt_check((c), cudaGetLastError(), name " launch", __FILE__, __LINE__)
#define HBC_TRY(expr)                                                                              \
    do {                                                                                           \
        hb_status hbc_st_ = (expr);                                                                \
        if (hbc_st_ != HB_OK) return hbc_st_;                                                      \
    } while (0)

/* Launch gate (nvbench's "blocking kernel"): while the device timer is armed, run() first enqueues
 * hbc_gate_kernel, which spins until the host sets *gate_h (or 100 ms pass), then the start event and
 * the op's kernels, then releases the gate. The events then bracket the device execution of the
 * op's kernels, not the host's launch overhead (cuDNN/cuBLAS host work, launch latency), which the
 * driver's host clock around run() still measures. Any call that may synchronize (allocation,
 * cudaFree, cuDNN's find) must release the gate first: hbc_grow does. */
hb_status hbc_gate_launch(hbc_ctx *c);
void hbc_gate_release(hbc_ctx *c);

/* Planted slowdowns (cuda_plant.cu; the plant_delay hook, for the merge gate's tests only).
 * hbc_plant_set: the next run's delay kernel, spinning `seconds` (0..1; 0: an empty kernel); measures
 * the SM clock it counts on first use (outside any timed region). HB_EINVAL for seconds out of range.
 * hbc_plant_enqueue: launches that kernel on c->stream (inside the op's events) and clears it. */
hb_status hbc_plant_set(hbc_ctx *c, double seconds);
hb_status hbc_plant_enqueue(hbc_ctx *c);

/* Device time of one call of fn (which enqueues on c->stream and must not synchronize), in ms: one
 * untimed call, then 3 timed calls, each bracketed by CUDA events behind the launch gate (so the
 * host's launch and library overhead is excluded, as in run()), the best kept. Used by the one-off
 * implementation choices (conv2d algorithms and engines, attention cuDNN vs own kernel). */
template <typename F> hb_status hbc_time_best(hbc_ctx *c, F fn, float *ms)
{
    HBC_TRY(fn());
    float best = 1e30f;
    for (int r = 0; r < 3; r++) {
        hb_status st = hbc_gate_launch(c);
        if (st == HB_OK) st = hbc_rt_check(c, cudaEventRecord(c->ev_a, c->stream), "cudaEventRecord", __FILE__, __LINE__);
        if (st == HB_OK) st = fn();
        if (st == HB_OK) st = hbc_rt_check(c, cudaEventRecord(c->ev_b, c->stream), "cudaEventRecord", __FILE__, __LINE__);
        hbc_gate_release(c);
        HBC_TRY(st);
        HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_b)));
        float t = 0.0f;
        HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&t, c->ev_a, c->ev_b)));
        if (t < best) best = t;
    }
    *ms = best;
    return HB_OK;
}

/* Grow-only device allocation of *p to at least bytes (accounted in c->dev_bytes). */
hb_status hbc_grow(hbc_ctx *c, void **p, size_t *have, size_t bytes);

/* ---- the hooks' shared helpers (cuda_backend.cu) ---- */
/* inst's context (owned by the instance), or NULL for a NULL instance or one without a context. */
hbc_ctx *ctx_of(hb_instance *inst);
/* Make c ready on its first use: select its device, create the stream, the events, the cuBLAS handle
 * with its 32 MiB workspace, the cuDNN handle, NVML (nvml_open) and the launch gate. HB_OK; HB_EDEVICE
 * after a sticky error; else the status of the call that failed (HB_ENOMEM, HB_EDEVICE). */
hb_status ensure_ready(hbc_ctx *c);
/* Every hook's entry: *out = inst's context, made ready (ensure_ready). HB_EINVAL without a context. */
hb_status enter(hb_instance *inst, hbc_ctx **out);
/* Wait for c->stream (cudaStreamSynchronize); HBC_RT's status when that fails. */
hb_status sync(hbc_ctx *c);
/* The device timer's marks (timer_begin arms it, timer_end reads it): tmark_begin records ev_begin on
 * c->stream before a hook's first enqueue, once per armed timer; tmark_begin_gated launches the gate
 * first (run()'s variant, see the launch gate above); tmark_end records ev_end after the hook's last
 * enqueue. HB_OK and nothing recorded while the timer is not armed. run_async records no end mark:
 * timer_end records ev_end once behind the ops it left enqueued (tend_pending), so that a timed
 * segment of ops enqueued back to back (a chain's layer as one stream) carries no event record per op,
 * which an executor's segment does not have either: on the H200 host (2026-11-26) the TinyLlama
 * decode layer took 149 us as a chain case with an event after each of its 14 ops against 118 us
 * replayed without events (measure/replay.c), both host-bound. */
hb_status tmark_begin(hbc_ctx *c);
/* cuda_graph.cu: the backend's graph_capture, graph_launch and graph_free hooks (core/backend.h). */
extern "C" hb_status hbc_graph_capture(hb_instance *inst, int begin, void **graph);
extern "C" hb_status hbc_graph_launch(hb_instance *inst, void *graph);
extern "C" void hbc_graph_free(hb_instance *inst, void *graph);
hb_status tmark_begin_gated(hbc_ctx *c);
hb_status tmark_end(hbc_ctx *c);
/* The parameters of a conv2d or pooling shape, hybench.h's defaults applied (kernels/cpu_ref/kshape.h
 * does the same): batch, channels, input h x w, output channels, window, stride, padding, dilation,
 * groups and the output's oh x ow. */
struct conv_p {
    int64_t b, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, oh, ow;
};
/* Fill *p from s (pool: a pooling window, oc = c and one group). false for a shape that cannot be
 * computed: a non-positive size, negative padding, groups that do not divide the channels, a window
 * larger than the padded input. */
/* The implementation a pooling case takes (case_info's "impl"): "own-kernel" where cuDNN pooling
 * cannot express it (dilation, padding >= window, more than INT_MAX planes), else "cudnn-pool" (which
 * falls back to the own kernel at run time if cuDNN refuses the combination). NULL for a shape
 * conv_params refuses. */
const char *hbc_pool_impl(const hb_case *cs);
bool conv_params(const hb_shape *s, bool pool, conv_p *p);
/* The cuBLAS compute type used for dtype d, by name ("CUBLAS_COMPUTE_32F_FAST_TF32" for tf32, else
 * "CUBLAS_COMPUTE_32F"): for case_info and the ceilings' "how". */
const char *blas_compute_name(hb_dtype d);
/* Enqueue C[m,n] = A[m,k] B[k,n] on c->stream (device pointers, row-major, dt storage with f32
 * accumulation; batch > 1: that many matrices each, at strides m*k, k*n, m*n) through cublasGemmEx or
 * cublasGemmStridedBatchedEx; no synchronization. Dimensions must fit an int (supports checks).
 * Sets c->last_impl and c->last_algo. HB_ESKIP when cuBLAS does not support it, else as HBC_BLAS. */
hb_status gemm(hbc_ctx *c, hb_dtype dt, const void *A, const void *B, void *C, int64_t m, int64_t n, int64_t k,
               int64_t batch);

/* ---- buffers and transfers (cuda_buffers.cu): the hooks of core/backend.h ---- */
/* buf_alloc: bytes (> 0, rounded up to 64 for the allocation) for route: pageable = aligned_alloc +
 * cudaMalloc, pinned = cudaHostAlloc + cudaMalloc, mapped = cudaHostAllocMapped with its device alias
 * in out->dev; counted in c->dev_bytes / c->pinned_bytes. The instance owns it until cuda_buf_free.
 * HB_EINVAL (bytes 0, out NULL, unknown route), HB_ENOMEM, HB_EDEVICE. */
hb_status cuda_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out);
/* buf_free: frees what cuda_buf_alloc made and zeroes *b; NULL instance or buffer: nothing. */
void cuda_buf_free(hb_instance *inst, hb_buf *b);
/* upload/download: the whole buffer host -> device / device -> host on c->stream, synchronized before
 * they return (the mapped route copies nothing: download only waits for the stream); inside the
 * device timer's marks. HB_EINVAL for a buffer without host or device memory. */
hb_status cuda_upload(hb_instance *inst, hb_buf *b);
hb_status cuda_download(hb_instance *inst, hb_buf *b);
/* upload_f64/download_f64 (convert-device): n f64 values copied to device scratch and converted on
 * the GPU into b's dtype (f32, or f16/bf16 from b->dtype), or the reverse; blocking. *copy_s and
 * *conv_s (may be NULL) get the device seconds of the copy and of the conversion. HB_EINVAL for a
 * NULL or too small buffer or n == 0; HB_ENOMEM / HB_EDEVICE. */
hb_status cuda_upload_f64(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *conv_s);
hb_status cuda_download_f64(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *conv_s);

/* ---- conv2d and pooling through cuDNN (cuda_conv_pool.cu) ---- */
/* y = conv2d(x, w) of case cs (device pointers, the case's layout: NCHW, or NHWC for layout=nhwc),
 * enqueued on c->stream after its set-up, which marks the timer's start (gated) only when done. The
 * implementation is chosen once per (shape, dtype, mapped or not) by timing and cached in c->conv.
 * Sets c->last_impl, last_algo, last_ws and last_conv. HB_EINVAL for a shape conv_params refuses,
 * HB_ESKIP when cuDNN offers nothing that works, HB_ENOMEM / HB_EDEVICE. */
hb_status run_conv(hbc_ctx *c, const hb_case *cs, const void *x, const void *w, void *y);
/* A pointwise conv2d (1x1 window, stride 1, no padding or dilation, one group; the output as large as
 * the input) whose dimensions fit cuBLAS's ints: hbc_conv_gemm computes it. */
bool hbc_conv_gemm_fits(const conv_p &p);
/* Enqueue y = conv2d(x, w) of such a p on c->stream as one cuBLAS gemm (cuda_conv_gemm.cu has the
 * mapping): nhwc: x [b,h,w,c], w KRSC [oc,1,1,c], y [b,h,w,oc]; else NCHW x [b,c,h,w], w KCRS
 * [oc,c,1,1], y [b,oc,h,w]; device pointers, dt storage (tf32: f32 data, TF32 tensor cores), f32
 * accumulation; no synchronization, no timer marks. HB_ESKIP when !hbc_conv_gemm_fits(p), else
 * cuBLAS's status through HBC_BLAS. */
hb_status hbc_conv_gemm(hbc_ctx *c, hb_dtype dt, const conv_p &p, bool nhwc, const void *x, const void *w, void *y);
/* y = max or average pooling of x (case cs, NCHW device buffers) through cudnnPoolingForward, or the
 * own kernel (hbc_pool) where cuDNN cannot (dilation, a window wholly in the padding); marks the
 * timer's start (gated). Sets c->last_impl and last_algo. HB_EINVAL for an unusable shape. */
hb_status run_pool(hbc_ctx *c, const hb_case *cs, const void *x, void *y);
/* Free a cached conv2d choice's graph plan and zero the slot (cache reuse, cuda_close). */
void conv_choice_clear(hbc_conv_choice *ch);

/* ---- ceilings (cuda_ceilings.cu) ---- */
/* The ceilings hook: copy_gbps and triad_gbps (own kernels, 1 GiB), peak_gflops_<dtype> (cuBLAS
 * 8192^3), h2d/d2h_gbps_<route> (256 MiB) and the peer-to-peer ceilings of hbc_coll_ceilings, into
 * out[0..max-1] (a probe whose memory cannot be allocated is left out). Returns how many; 0 when the
 * instance cannot be made ready. Takes seconds and up to 2 GiB of device memory, freed. */
int cuda_ceilings(hb_instance *inst, hb_ceiling *out, int max);

/* ---- NVML and the info hooks (cuda_info.cu) ---- */
/* NVML for device dev (dlopen "libnvidia-ml.so.1", nvmlInit, the handle by PCI bus id): a new
 * handle (nvml_close frees it), or NULL where NVML or the device cannot be had (not an error). */
hbc_nvml *nvml_open(int dev);
/* Shut NVML down and free n; NULL: nothing. */
void nvml_close(hbc_nvml *n);
/* mem_info: the bytes this instance allocated on the device, and the device's free and total bytes;
 * -1 where unknown (no context, sticky error, cudaMemGetInfo failed). */
void cuda_mem_info(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b);
/* case_info: the facts of the last run as a JSON object text in buf[len] (impl, algo, workspace, the
 * conv2d choice's times, the median host enqueue time since the last call, collective facts, SM
 * clocks). HB_EINVAL without a context or when buf is too small. */
hb_status cuda_case_info(hb_instance *inst, const hb_case *cs, char *buf, size_t len);
/* describe: the instance's facts as a JSON object text in buf[len] (device, versions, PCI id, NCCL);
 * makes the instance ready first ("error" says so when that fails). HB_EINVAL without a context. */
hb_status cuda_describe(hb_instance *inst, char *buf, size_t len);

/* ---- kernels (cuda_kernels.cu); all enqueue on c->stream, none synchronizes ---- */
/* out[i] = op(a[i], b[i]) for n elements of storage e, by cuda_kernels.cu's elementwise kernel table;
 * b unused for the one-input ops. Math in f32. HB_ESKIP for an op without a row, HB_EINVAL for n <= 0. */
hb_status hbc_elementwise(hbc_ctx *c, hb_op op, hbc_elem e, const void *a, const void *b, void *out, int64_t n);
/* true when the elementwise kernel table has a row for op (supports asks it). */
bool hbc_ew_supported(hb_op op);
/* y[r] = sum/mean/max of x[r, 0..cols-1] for r < rows (f32 accumulation, pairwise by tree).
 * op: HB_OP_SUM, HB_OP_MEAN, HB_OP_MAX. Uses c->scratch for split rows. */
hb_status hbc_reduce_rows(hbc_ctx *c, hb_op op, hbc_elem e, const void *x, void *y, int64_t rows, int64_t cols);
/* y = x / sqrt(mean(x^2) + 1e-5) * g per row of x[rows, cols]. */
hb_status hbc_rmsnorm(hbc_ctx *c, hbc_elem e, const void *x, const void *g, void *y, int64_t rows, int64_t cols);
/* Own pooling kernel (used where cuDNN refuses: a window wholly in the padding gives 0). */
hb_status hbc_pool(hbc_ctx *c, int is_max, hbc_elem e, const void *x, void *y, int64_t b, int64_t ch, int64_t h,
                   int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                   int64_t pw, int64_t dh, int64_t dw);
/* Element conversions: f64 -> e and e -> f64, n elements. */
hb_status hbc_from_f64(hbc_ctx *c, hbc_elem e, const double *src, void *dst, int64_t n);
hb_status hbc_to_f64(hbc_ctx *c, hbc_elem e, const void *src, double *dst, int64_t n);
/* Fill n elements with deterministic pseudo-random values in [-1, 1) (never all zeros). */
hb_status hbc_fill_random(hbc_ctx *c, hbc_elem e, void *dst, int64_t n, uint64_t seed);
/* Bandwidth probes: dst[i] = src[i] (16-byte vectors; bytes multiple of 16); a = b + 3 c (f32). */
hb_status hbc_copy(hbc_ctx *c, void *dst, const void *src, size_t bytes);
hb_status hbc_triad(hbc_ctx *c, float *a, const float *b, const float *cc, int64_t n);
/* Read every 16-byte word of src (bytes multiple of 16) and write one word of its xor to *sink. */
hb_status hbc_read_probe(hbc_ctx *c, const void *src, size_t bytes, uint32_t *sink);
/* Write a pattern to every 16-byte word of dst. */
hb_status hbc_write_probe(hbc_ctx *c, void *dst, size_t bytes);

/* ---- matmul with quantized weights (cuda_qmatmul.cu) ---- */
/* The largest m that takes the gemv kernels; larger m dequantizes W to f16 and calls cuBLAS. */
#define HBC_QGEMV_MAX_M 8
/* Enqueue C[m,n] = A[m,k] x W^T on c->stream for quantized dtype dt (HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K):
 * A, C f32 row-major device pointers, W the n rows of k / block GGUF blocks each (core/quant.h's
 * layout, hb_quant_bytes(dt, n k) bytes); k a multiple of the format's block, m, n, k <= INT_MAX. No
 * synchronization. m <= HBC_QGEMV_MAX_M: the own gemv kernel (f32 throughout); else W dequantized into
 * c->qw16 and A rounded into c->qa16 (f16, grown on demand) and cublasGemmEx with f32 accumulation.
 * Sets c->last_impl, last_algo, last_qimpl. HB_EINVAL for another dtype or a bad shape; else the
 * launch's or cuBLAS's status (HBC_LAUNCHED, HBC_BLAS), HB_ENOMEM for the scratch. */
hb_status hbc_qmatmul(hbc_ctx *c, hb_dtype dt, const void *A, const void *W, void *C, int64_t m, int64_t n, int64_t k);
/* Op dequantize (cuda_qmatmul.cu): the n weights (a whole number of blocks of dt) at W to f32 Y[n] on
 * c->stream, each value as core/quant.h defines it. HB_OK (launched), HB_EINVAL, or the launch's error. */
hb_status hbc_dequant(hbc_ctx *c, hb_dtype dt, const void *W, void *Y, int64_t n);

/* The implementation a quantized matmul of m rows takes (case_info's "impl"): "own-kernel" (the gemv
 * kernels, m <= HBC_QGEMV_MAX_M) or "own-dequant+cublas". One statement for the run and impl_of. */
const char *hbc_qmatmul_impl(int64_t m);

/* ---- attention (cuda_attention.cu) ---- */
/* The own attention kernel that hbc_attention runs for dtype dt, head_dim hd and seq query rows on
 * c's device: the fused flash kernel (3xTF32 tensor cores for f32 from sm_80 unless
 * HB_CUDA_ATTN_F32=simt; mma.sync for f16/bf16; FFMA tiles for f32 before sm_80) where hd is 64 or
 * 128 and seq >= 16 (and HB_CUDA_ATTN is not "split"), else the split-KV kernel. */
enum hbc_attn_kernel { HBC_ATTN_SPLIT, HBC_ATTN_FLASH, HBC_ATTN_FLASH_3XTF32 };
hbc_attn_kernel hbc_attn_kernel_for(const hbc_ctx *c, hb_dtype dt, int64_t hd, int64_t seq);
/* Its name in case_info's "impl": "own-split-kv", "own-flash", "own-flash-3xtf32". */
const char *hbc_attn_kernel_name(hbc_attn_kernel k);
/* o = softmax(q k^T / sqrt(d) + mask) v, layouts of hybench.h (GQA, end-aligned causal mask; a
 * query row that sees no key gives 0); bshd != 0: attention's layout=bshd (q, o [b, s, h, d], k, v
 * [b, kvs, kvh, d]), else the default [b, h, s, d]. Picks the fused flash kernel (mma.sync for f16/bf16, FFMA
 * register tiles for f32) when head_dim is 64 or 128, else a warp-per-row online-softmax kernel.
 * Writes "own-flash" or "own-split-kv" into c->last_impl and the kernel's name into c->last_algo.
 * HB_ESKIP for tf32 (not offered for attention). */
hb_status hbc_attention(hbc_ctx *c, hb_dtype d, const void *q, const void *k, const void *v, void *o, int64_t batch,
                        int64_t heads, int64_t kvh, int64_t seq, int64_t kvs, int64_t hd, int causal, int bshd);

/* ---- conv2d through the cuDNN graph API (cuda_conv.cpp) ---- */
/* Build the forward convolution graph for dims = {b, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g,
 * oh, ow} (hybench's conv2d, kernels/cpu_ref/kshape.h) in layout nhwc (0: NCHW/KCRS strides, 1:
 * NHWC/KRSC), dtype dt, then time every engine configuration of heuristics A + fallback that builds
 * and needs at most ws_cap workspace bytes on x, w, y (device buffers in that layout; y is
 * overwritten) and keep the fastest: *out (caller owns; hbc_conv_graph_free), *ms its time,
 * *tried the engines timed. HB_ESKIP with why when cuDNN offers nothing runnable (or the plugin
 * was built without the frontend headers); HB_ENOMEM / HB_EDEVICE from the workspace or a sticky
 * error. Grows c->dnn_ws; never called behind the launch gate. */
hb_status hbc_conv_graph_tune(hbc_ctx *c, hb_dtype dt, int nhwc, const int64_t dims[16], const void *x, const void *w,
                              void *y, size_t ws_cap, hbc_conv_graph **out, float *ms, int *tried, char *why,
                              size_t whylen);
/* Enqueue the tuned plan on x, w, y (layout as tuned); c->dnn_ws must hold hbc_conv_graph_ws(p). */
hb_status hbc_conv_graph_exec(hbc_ctx *c, const hbc_conv_graph *p, const void *x, const void *w, void *y);
size_t hbc_conv_graph_ws(const hbc_conv_graph *p);
const char *hbc_conv_graph_name(const hbc_conv_graph *p);
void hbc_conv_graph_free(hbc_conv_graph *p);

/* Build only plan `index` of the graph hbc_conv_graph_tune would build for the same arguments (a
 * choice read from the algorithm-choice cache): the same graph and deselections, then the engine at
 * index checked to be `name` (as hbc_conv_graph_name gives it) before build_plan_at_index builds it.
 * Nothing is timed or run. *out (caller owns; hbc_conv_graph_free) on HB_OK; HB_ESKIP with why when
 * the index is out of range, the name differs, the build fails or its workspace passes ws_cap (the
 * caller then chooses afresh); HB_EDEVICE after a sticky error. */
hb_status hbc_conv_graph_build_at(hbc_ctx *c, hb_dtype dt, int nhwc, const int64_t dims[16], size_t ws_cap, int64_t index,
                                  const char *name, hbc_conv_graph **out, char *why, size_t whylen);
/* The plan index of p among the graph's engine configurations (-1 for NULL). */
int64_t hbc_conv_graph_plan(const hbc_conv_graph *p);

/* ---- the algorithm-choice cache's CUDA side (cuda_choice_cache.cpp; the files: cuda_algocache.h) ---- */
/* How a case's one-off implementation choice was obtained (case_info's "algo_cache"). */
enum { HBC_CACHE_NONE = 0, /* the case makes no choice: no field */
       HBC_CACHE_OFF,      /* HB_ALGO_CACHE unset, or a choice the cache never keeps: timed here */
       HBC_CACHE_MISS,     /* no sound entry: timed here, and the entry written */
       HBC_CACHE_HIT };    /* read from a sound entry and checked: only the chosen candidate built */
/* "off", "miss", "hit"; NULL for HBC_CACHE_NONE or anything else. */
const char *hbc_cache_state_name(int s);
/* Replace every byte of s outside 0x20..0x7e, and '"' and '\\', by '?' (for keys, values, JSON). */
void hbc_cache_clean(char *s);
/* The start of every key of instance c into buf (size len): "hbac1;dev=<name>;cc=<major.minor>;sms=;
 * mem_mib=;driver=;runtime=;cudnn=;cublas=;fe=;code=<the Makefile's hash of op's choice sources>;
 * op=<op>" (op "conv2d" or "attention"). false when it does not fit. c must be ready. */
bool hbc_cache_key_prefix(hbc_ctx *c, const char *op, char *buf, size_t len);
/* Look key up in HB_ALGO_CACHE's directory: HBAC_HIT with *e; HBAC_MISS (cache off, no entry, another
 * key); HBAC_CORRUPT (named on stderr, and note[len] says so; the caller chooses afresh and stores). */
int hbc_cache_load(const char *key, hbac_entry *e, char *note, size_t len);
/* Store e in HB_ALGO_CACHE's directory (nothing when off); a failure is printed once per process and
 * appended to note[len]. */
void hbc_cache_store(const hbac_entry *e, char *note, size_t len);

/* ---- attention through cuDNN's fused SDPA (cuda_sdpa.cpp) ---- */
/* The implementation chosen for one attention case: cudnn != NULL runs cuDNN's SDPA graph (cached in
 * c->sdpa, workspace ws bytes already in c->dnn_ws), else the own kernel; note says why (both times
 * of the first-run choice, or why cuDNN was not used). */
struct hbc_attn_plan {
    void *cudnn;
    size_t ws;
    char note[224];
    int cache;               /* HBC_CACHE_NONE (no choice: f32, HB_CUDA_ATTN=own|split, cuDNN refused), else
                                how the choice was obtained: OFF / MISS / HIT (hbc_ctx's last_cache) */
    float cache_check_ms;    /* a hit: the chosen implementation timed in this process (the check) */
    char cache_note[160];
};
/* Host-side set-up of an attention case, before the launch gate (it may build a cuDNN graph, grow
 * the workspace and, on a shape's first run, time cuDNN against the own kernel on these buffers,
 * which overwrites o). Layouts and arguments as hbc_attention. Returns HB_OK with *plan filled
 * (cuDNN refusing the shape is not an error: plan->cudnn == NULL and the reason in plan->note);
 * HB_ENOMEM / HB_EDEVICE from the workspace or the timing runs. Knob: HB_CUDA_ATTN=cudnn|own|split. */
hb_status hbc_attn_prepare(hbc_ctx *c, hb_dtype dt, const void *q, const void *k, const void *v, void *o, int64_t batch,
                           int64_t heads, int64_t kvh, int64_t seq, int64_t kvs, int64_t hd, int causal, int bshd,
                           hbc_attn_plan *plan);
/* Enqueue the attention as planned (no synchronization); sets c->last_impl ("cudnn-sdpa",
 * "own-flash", "own-split-kv"), c->last_algo (engine or kernel, plus plan->note) and c->last_ws. */
hb_status hbc_attn_exec(hbc_ctx *c, const hbc_attn_plan *plan, hb_dtype dt, const void *q, const void *k, const void *v,
                        void *o, int64_t batch, int64_t heads, int64_t kvh, int64_t seq, int64_t kvs, int64_t hd,
                        int causal, int bshd);
/* Free the SDPA graph cache (at close; the workspace is the instance's dnn_ws). */
void hbc_sdpa_free(hbc_ctx *c);

#endif
