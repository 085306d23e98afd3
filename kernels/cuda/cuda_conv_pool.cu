/*
 * cuda_conv_pool.cu - conv2d and pooling of the CUDA backend through cuDNN (run_conv, run_pool,
 * called by cuda_backend.cu's run). conv2d is chosen once per (shape, dtype, memory) by measurement
 * (conv_choose) among cuDNN's legacy algorithms (cudnnFindConvolutionForwardAlgorithmEx), the graph
 * API's engines (cuda_conv.cpp) and the pipeline through the other layout (transforms with
 * cudnnTransformTensor or cuda_transpose.cu), kept across processes by the algorithm-choice cache
 * when HB_ALGO_CACHE is set (conv_choose: a later process builds only the recorded candidate);
 * pooling runs cudnnPoolingForward, or the own kernel (cuda_kernels.cu) where cuDNN cannot.
 */
#include "cuda/cuda_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
    const char *e = hbc_cfg()->cuda_conv_own_transpose;
    const int64_t lim = (int64_t)65535 * 32;
    return e && *e == '1' && p.b <= 65535 && p.c <= lim && p.oc <= lim && p.h * p.w <= lim && p.oh * p.ow <= lim;
}
void conv_choice_clear(hbc_conv_choice *ch)
{
    if (ch->g) hbc_conv_graph_free(ch->g);
    memset(ch, 0, sizeof *ch);
}

/* The pointwise gemm is a candidate of this shape's choice: a 1x1 stride-1 shape, unless
 * HB_CUDA_CONV_GEMM=0 (read per choice; part of the cache key, so that an entry chosen with it is not
 * read back without it). */
static bool gemm_timed(const conv_p &p)
{
    const char *ge = hbc_cfg()->cuda_conv_gemm;
    return !(ge && !strcmp(ge, "0")) && hbc_conv_gemm_fits(p);
}

static size_t conv_ws_cap(hbc_ctx *c)
{
    (void)c;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) { (void)cudaGetLastError(); return 0; }
    size_t cap = (size_t)1 << 30;
    return cap < free_b / 4 ? cap : free_b / 4;
}

/* The choice by measurement (once per shape, dtype and memory: conv_choose): on the mapped route the operands are host
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
 *   gemm         a pointwise convolution (1x1, stride 1, no padding) as one cuBLAS gemm on the case's
 *                tensors (cuda_conv_gemm.cu; HB_CUDA_CONV_GEMM=0 leaves it out).
 * Kept: the fastest of legacy native, graph native, the pipeline and the gemm (whole pipelines that
 * take the case's tensors). All the times go to case_info (stored by layout: *_nchw_ms, *_nhwc_ms), so the gap
 * to the exhaustive best is in every record. HB_CUDA_CONV_NCHW_ONLY=1 skips the other layout for an
 * NCHW case, HB_CUDA_CONV_NATIVE_ONLY=1 for any case; HB_CUDA_CONV_API=legacy or =graph keeps one API. */
static hb_status conv_choose_timed(hbc_ctx *c, const hb_case *cs, const conv_p &p, const conv_desc &d, const void *x,
                                   const void *w, void *y, size_t cap, bool force_other, hbc_conv_choice *out)
{
    const bool native_nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
    const char *api = hbc_cfg()->cuda_conv_api;
    const bool use_legacy = !(api && !strcmp(api, "graph")), use_graph = !(api && !strcmp(api, "legacy"));
    const int64_t dims[16] = {p.b, p.c, p.h, p.w, p.oc, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw, p.g, p.oh, p.ow};
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
    if (!hbc_cfg()->cuda_conv_native_only && (native_nhwc || !hbc_cfg()->cuda_conv_nchw_only)) {
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
    /* a pointwise convolution as one cuBLAS gemm, on the case's tensors (gemm_timed; =force: taken
     * wherever it runs, for tests, like the other FORCE knobs never kept) */
    float gm = 0;
    const char *ge = hbc_cfg()->cuda_conv_gemm;
    const bool force_gemm = ge && !strcmp(ge, "force");
    if (gemm_timed(p) && !force_other &&
        hbc_time_best(c, [&]() { return hbc_conv_gemm(c, cs->dtype, p, native_nhwc, x, w, y); }, &gm) == HB_OK) {
        if (gm < best || force_gemm) {
            best = gm;
            conv_choice_clear(&ch);
            ch.shape = cs->shape; ch.dtype = cs->dtype; ch.mapped = cs->route == HB_ROUTE_MAPPED;
            ch.gemm = 1;
            snprintf(ch.name, sizeof ch.name, "cublasGemm%sEx %s", native_nhwc ? "" : "StridedBatched", blas_compute_name(cs->dtype));
        }
    } else {
        gm = 0;
        (void)cudaGetLastError();
    }
    if (c->sticky) { conv_choice_clear(&ch); return HB_EDEVICE; }
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
    ch.gemm_ms = gm;
    ch.chosen_ms = best;
    ch.valid = force_other || force_gemm ? 0 : 1;
    *out = ch;
    return HB_OK;
}

/* ---- the choice through the algorithm-choice cache (HB_ALGO_CACHE; cuda_choice_cache.cpp) ---- */

static const char *dtype_key(hb_dtype d)
{
    return d == HB_F32 ? "f32" : d == HB_TF32 ? "tf32" : d == HB_F16 ? "f16" : d == HB_BF16 ? "bf16" : "?";
}

/* The key of case cs's conv2d choice into key[len]: hbc_cache_key_prefix, then every input of
 * conv_choose_timed: the shape with hybench's defaults applied (p), dtype, the case's layout, mapped or
 * device memory, the workspace cap and the knobs that change what is timed. false when it does not fit. */
static bool conv_cache_key(hbc_ctx *c, const hb_case *cs, const conv_p &p, size_t cap, char *key, size_t len)
{
    char pre[700];
    if (!hbc_cache_key_prefix(c, "conv2d", pre, sizeof pre)) return false;
    const char *api = hbc_cfg()->cuda_conv_api, *rtc = hbc_cfg()->cuda_conv_rtc;
    const char *apis = api && !strcmp(api, "graph") ? "graph" : api && !strcmp(api, "legacy") ? "legacy" : "both";
    const int k = snprintf(key, len,
                           "%s;b=%lld;c=%lld;hw=%lldx%lld;oc=%lld;k=%lldx%lld;s=%lldx%lld;p=%lldx%lld;d=%lldx%lld;g=%lld;"
                           "out=%lldx%lld;dtype=%s;layout=%s;mapped=%d;ws_cap=%zu;api=%s;rtc=%d;native_only=%d;nchw_only=%d;own_tr=%d;gemm=%d",
                           pre, (long long)p.b, (long long)p.c, (long long)p.h, (long long)p.w, (long long)p.oc, (long long)p.kh,
                           (long long)p.kw, (long long)p.sh, (long long)p.sw, (long long)p.ph, (long long)p.pw, (long long)p.dh,
                           (long long)p.dw, (long long)p.g, (long long)p.oh, (long long)p.ow, dtype_key(cs->dtype),
                           cs->shape.layout == HB_LAYOUT_NHWC ? "nhwc" : "nchw", cs->route == HB_ROUTE_MAPPED ? 1 : 0, cap, apis,
                           rtc && *rtc == '1' ? 1 : 0, hbc_cfg()->cuda_conv_native_only ? 1 : 0,
                           hbc_cfg()->cuda_conv_nchw_only ? 1 : 0, own_tr_fits(p) ? 1 : 0, gemm_timed(p) ? 1 : 0);
    return k > 0 && (size_t)k < len;
}

/* The fields of choice ch (the entry's value): pipe (1: the other-layout pipeline), api (legacy or
 * graph), algo and math (cudnnConvolutionFwdAlgo_t, cudnnMathType_t) or plan (the graph's plan index),
 * name (the algorithm "ALGO/MATH" or the engine's name), ws, and the choice's times. Stored when every
 * field is allowed; else ch->cache_note says it was not. */
static void conv_to_cache(const char *key, hbc_conv_choice *ch)
{
    hbac_entry e;
    int bad = hbac_init(&e, key);
    if (!bad) {
        bad |= hbac_set_i64(&e, "pipe", ch->nhwc ? 1 : 0);
        bad |= hbac_set(&e, "api", ch->gemm ? "cublas" : ch->graph ? "graph" : "legacy");
        if (ch->gemm) {
            bad |= hbac_set(&e, "name", ch->name);
        } else if (ch->graph) {
            bad |= hbac_set_i64(&e, "plan", hbc_conv_graph_plan(ch->g));
            bad |= hbac_set(&e, "name", hbc_conv_graph_name(ch->g));
        } else {
            bad |= hbac_set_i64(&e, "algo", (int64_t)ch->algo);
            bad |= hbac_set_i64(&e, "math", (int64_t)ch->math);
            bad |= hbac_set(&e, "name", ch->name);
        }
        bad |= hbac_set_i64(&e, "ws", (int64_t)ch->ws_bytes);
        bad |= hbac_set_f(&e, "chosen_ms", ch->chosen_ms);
        bad |= hbac_set_f(&e, "legacy_nchw_ms", ch->legacy_nchw_ms);
        bad |= hbac_set_f(&e, "graph_nchw_ms", ch->graph_nchw_ms);
        bad |= hbac_set_f(&e, "legacy_nhwc_ms", ch->legacy_nhwc_ms);
        bad |= hbac_set_f(&e, "graph_nhwc_ms", ch->graph_nhwc_ms);
        bad |= hbac_set_f(&e, "pipe_ms", ch->nhwc_pipe_ms);
        bad |= hbac_set_f(&e, "gemm_ms", ch->gemm_ms);
        bad |= hbac_set_i64(&e, "graph_nchw_n", ch->graph_nchw_n);
        bad |= hbac_set_i64(&e, "graph_nhwc_n", ch->graph_nhwc_n);
    }
    if (bad) {
        const size_t j = strlen(ch->cache_note);
        snprintf(ch->cache_note + j, sizeof ch->cache_note - j, "%snot stored: a field the entry format refuses", j ? "; " : "");
        return;
    }
    hbc_cache_store(&e, ch->cache_note, sizeof ch->cache_note);
}

/* Rebuild the choice a sound entry e of this case's key recorded, without timing the candidates: the
 * legacy algorithm (its name checked against the enums, its workspace asked of cuDNN) or the graph
 * built at the recorded plan index only (hbc_conv_graph_build_at checks the engine's name), in the
 * layout recorded; then run as the case will run it (hbc_time_best: the check, its time kept in
 * cache_check_ms). HB_OK with *ch filled (owns its graph; cache HIT, the times the entry's); HB_ESKIP
 * with why[wl] when a field is missing or out of range or anything disagrees (the caller then chooses
 * afresh and overwrites the entry); HB_EDEVICE after a sticky error. */
static hb_status conv_from_cache(hbc_ctx *c, const hb_case *cs, const conv_p &p, const conv_desc &d, const void *x,
                                 const void *w, void *y, size_t cap, const hbac_entry &e, hbc_conv_choice *ch, char *why,
                                 size_t wl)
{
    memset(ch, 0, sizeof *ch);
    const bool native_nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
    int64_t pipe = 0, algo = 0, math = 0, plan = -1, gn1 = 0, gn2 = 0;
    double f[6];
    const char *api = hbac_get(&e, "api"), *name = hbac_get(&e, "name");
    static const char *const fn[7] = {"chosen_ms", "legacy_nchw_ms", "graph_nchw_ms", "legacy_nhwc_ms", "graph_nhwc_ms", "pipe_ms", "gemm_ms"};
    bool ok = api && name && (!strcmp(api, "graph") || !strcmp(api, "legacy") || !strcmp(api, "cublas")) &&
              !hbac_get_i64(&e, "pipe", 0, 1, &pipe) && !hbac_get_i64(&e, "graph_nchw_n", 0, 1 << 20, &gn1) &&
              !hbac_get_i64(&e, "graph_nhwc_n", 0, 1 << 20, &gn2);
    for (int i = 0; i < 7 && ok; i++) ok = !hbac_get_f(&e, fn[i], &f[i]) && f[i] >= 0 && f[i] < 1e9;
    const bool graph = ok && !strcmp(api, "graph"), gemm = ok && !strcmp(api, "cublas");
    if (ok && graph) ok = !hbac_get_i64(&e, "plan", 0, 1 << 20, &plan);
    if (ok && gemm) ok = pipe == 0 && hbc_conv_gemm_fits(p);
    if (ok && !graph && !gemm)
        ok = !hbac_get_i64(&e, "algo", 0, CUDNN_CONVOLUTION_FWD_ALGO_COUNT - 1, &algo) && !hbac_get_i64(&e, "math", 0, 255, &math) &&
             (math == CUDNN_DEFAULT_MATH || math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
              math == CUDNN_FMA_MATH);
    if (!ok) { snprintf(why, wl, "a field is missing or out of range"); return HB_ESKIP; }
    ch->shape = cs->shape;
    ch->dtype = cs->dtype;
    ch->mapped = cs->route == HB_ROUTE_MAPPED;
    ch->nhwc = (int)pipe;
    ch->graph = graph ? 1 : 0;
    conv_nhwc n;
    memset(&n, 0, sizeof n);
    if (pipe && conv_nhwc_make(c, p, cs->dtype, native_nhwc, &n) != HB_OK) {
        if (c->sticky) return HB_EDEVICE;
        snprintf(why, wl, "the other layout's descriptors or copies could not be made");
        return HB_ESKIP;
    }
    ch->gemm = gemm ? 1 : 0;
    hb_status st = HB_OK;
    if (gemm) {
        /* nothing to build: cuBLAS chooses its kernel per call; the check below runs it */
    } else if (graph) {
        const int64_t dims[16] = {p.b, p.c, p.h, p.w, p.oc, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw, p.g, p.oh, p.ow};
        const int layout = pipe ? (native_nhwc ? 0 : 1) : (native_nhwc ? 1 : 0);
        st = hbc_conv_graph_build_at(c, cs->dtype, layout, dims, cap, plan, name, &ch->g, why, wl);
        if (st == HB_OK) ch->ws_bytes = hbc_conv_graph_ws(ch->g);
    } else {
        ch->algo = (cudnnConvolutionFwdAlgo_t)algo;
        ch->math = (cudnnMathType_t)math;
        char nm[112];
        snprintf(nm, sizeof nm, "%s/%s", conv_algo_name(ch->algo), math_name(ch->math));
        const conv_desc &dd = pipe ? n.d : d;
        size_t wsb = 0;
        if (strcmp(nm, name)) { snprintf(why, wl, "algorithm %s is named %s now", name, nm); st = HB_ESKIP; }
        else if (cudnnSetConvolutionMathType(dd.cv, ch->math) != CUDNN_STATUS_SUCCESS ||
                 cudnnGetConvolutionForwardWorkspaceSize(c->dnn, dd.x, dd.w, dd.cv, dd.y, ch->algo, &wsb) != CUDNN_STATUS_SUCCESS) {
            snprintf(why, wl, "cuDNN does not offer %s for this shape now", name);
            st = HB_ESKIP;
        } else if (wsb > cap) {
            snprintf(why, wl, "%s needs %zu workspace bytes, over the cap %zu", name, wsb, cap);
            st = HB_ESKIP;
        }
        ch->ws_bytes = wsb;
    }
    if (st == HB_OK) snprintf(ch->name, sizeof ch->name, "%s", name);
    /* the check: the candidate run as the case will run it */
    float t = 0;
    if (st == HB_OK && ch->ws_bytes) st = hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, ch->ws_bytes);
    if (st == HB_OK && gemm)
        st = hbc_time_best(c, [&]() { return hbc_conv_gemm(c, cs->dtype, p, native_nhwc, x, w, y); }, &t);
    else if (st == HB_OK && pipe)
        st = hbc_time_best(c, [&]() { return conv_exec_nhwc(c, n, *ch, x, w, y, p, own_tr_fits(p), native_nhwc); }, &t);
    else if (st == HB_OK)
        st = hbc_time_best(c, [&]() { return conv_exec_choice(c, *ch, d, x, w, y); }, &t);
    if (pipe) conv_nhwc_free(&n);
    if (c->sticky) { conv_choice_clear(ch); return HB_EDEVICE; }
    if (st != HB_OK) {
        (void)cudaGetLastError();
        if (!why[0]) snprintf(why, wl, "the recorded candidate %s failed to run", name);
        conv_choice_clear(ch);
        return HB_ESKIP;
    }
    ch->chosen_ms = (float)f[0];
    ch->legacy_nchw_ms = (float)f[1]; ch->graph_nchw_ms = (float)f[2];
    ch->legacy_nhwc_ms = (float)f[3]; ch->graph_nhwc_ms = (float)f[4];
    ch->nhwc_pipe_ms = (float)f[5];
    ch->gemm_ms = (float)f[6];
    ch->graph_nchw_n = (int)gn1; ch->graph_nhwc_n = (int)gn2;
    ch->cache = HBC_CACHE_HIT;
    ch->cache_check_ms = t;
    ch->valid = 1;
    return HB_OK;
}

/* Choose once per (shape, dtype, memory) and keep the choice in c->conv: the one in c->conv when there,
 * else, with HB_ALGO_CACHE on, the entry of this case's key (conv_from_cache), else by timing
 * (conv_choose_timed), whose result is then stored as the key's entry (conv_to_cache). The test knobs
 * HB_CUDA_CONV_FORCE_NHWC / _FORCE_OTHER choose afresh every time and never touch the cache. */
static hb_status conv_choose(hbc_ctx *c, const hb_case *cs, const conv_p &p, const conv_desc &d, const void *x,
                             const void *w, void *y, hbc_conv_choice **out)
{
    const bool native_nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
    /* tests: HB_CUDA_CONV_FORCE_NHWC=1 (NCHW cases) or HB_CUDA_CONV_FORCE_OTHER=1 (any case) take the
     * other-layout pipeline whenever it runs, chosen afresh and never cached, so that its transforms
     * are checked against the reference too */
    const bool force_other = (!native_nhwc && hbc_cfg()->cuda_conv_force_nhwc) || hbc_cfg()->cuda_conv_force_other;
    const char *ge = hbc_cfg()->cuda_conv_gemm;
    const bool fresh = force_other || (ge && !strcmp(ge, "force"));
    for (int i = 0; i < c->nconv && i < HBC_CONV_CACHE && !fresh; i++)
        if (c->conv[i].valid && c->conv[i].dtype == cs->dtype && c->conv[i].mapped == (cs->route == HB_ROUTE_MAPPED) &&
            shape_eq(&c->conv[i].shape, &cs->shape)) {
            *out = &c->conv[i];
            return HB_OK;
        }
    const size_t cap = conv_ws_cap(c);
    hbc_conv_choice ch;
    memset(&ch, 0, sizeof ch);
    char key[HBAC_KEY_MAX] = "", note[sizeof ch.cache_note] = "";
    int state = HBC_CACHE_OFF;
    bool hit = false;
    if (hbac_dir() && fresh) {
        snprintf(note, sizeof note, "HB_CUDA_CONV_FORCE_NHWC/_OTHER or HB_CUDA_CONV_GEMM=force: chosen afresh, never cached");
    } else if (hbac_dir()) {
        state = HBC_CACHE_MISS;
        if (!conv_cache_key(c, cs, p, cap, key, sizeof key)) {
            state = HBC_CACHE_OFF;
            snprintf(note, sizeof note, "the key does not fit: not cached");
        } else {
            hbac_entry *e = (hbac_entry *)malloc(sizeof *e);
            if (e && hbc_cache_load(key, e, note, sizeof note) == HBAC_HIT) {
                char why[200] = "";
                hb_status st = conv_from_cache(c, cs, p, d, x, w, y, cap, *e, &ch, why, sizeof why);
                if (st == HB_OK) hit = true;
                else if (st != HB_ESKIP) { free(e); return st; }
                else {
                    hbc_cache_clean(why);
                    fprintf(stderr, "hb_cuda: algo cache: conv2d entry not usable (%s): chosen afresh and replaced\n", why);
                    snprintf(note, sizeof note, "entry not usable (%s): chosen afresh", why);
                }
            }
            free(e);
        }
    }
    if (!hit) {
        HBC_TRY(conv_choose_timed(c, cs, p, d, x, w, y, cap, force_other, &ch));
        ch.cache = state;
        snprintf(ch.cache_note, sizeof ch.cache_note, "%s", note);
        if (state == HBC_CACHE_MISS) conv_to_cache(key, &ch);
    }
    /* append; when full, overwrite round-robin */
    hbc_conv_choice *slot = &c->conv[c->nconv < HBC_CONV_CACHE ? c->nconv : c->nconv % HBC_CONV_CACHE];
    c->nconv++;
    conv_choice_clear(slot);
    *slot = ch;
    *out = slot;
    return HB_OK;
}
hb_status run_conv(hbc_ctx *c, const hb_case *cs, const void *x, const void *w, void *y)
{
    conv_p p;
    if (!conv_params(&cs->shape, false, &p)) return HB_EINVAL;
    const bool native_nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
    conv_desc d;
    HBC_TRY(conv_desc_make(c, p, cs->dtype, native_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, &d));
    hbc_conv_choice *ch = nullptr;
    hb_status st = conv_choose(c, cs, p, d, x, w, y, &ch);
    if (st == HB_OK && ch->ws_bytes) st = hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, ch->ws_bytes);
    if (st == HB_OK && ch->gemm) {
        st = tmark_begin_gated(c);
        if (st == HB_OK) st = hbc_conv_gemm(c, cs->dtype, p, native_nhwc, x, w, y);
    } else if (st == HB_OK && !ch->nhwc) {
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
        snprintf(c->last_impl, sizeof c->last_impl, "%s:%.50s", ch->gemm ? "cublas-1x1" : "cudnn-conv", ch->name);
        const char *tr = own_tr_fits(p) ? "own transpose kernel" : "cudnnTransformTensor";
        if (ch->gemm)
            snprintf(c->last_algo, sizeof c->last_algo, "pointwise convolution as one cuBLAS gemm on the case's %s tensors, %s",
                     native_nhwc ? "NHWC" : "NCHW",
                     ch->valid ? "faster than every cuDNN candidate timed" : "forced (HB_CUDA_CONV_GEMM=force)");
        else if (!ch->nhwc)
            snprintf(c->last_algo, sizeof c->last_algo, "%s, on the case's %s tensors (no transforms)",
                     ch->graph ? "graph API engine" : "legacy API algorithm", native_nhwc ? "NHWC" : "NCHW");
        else
            snprintf(c->last_algo, sizeof c->last_algo, "%s, %s convolution inside %s transforms (%s)",
                     ch->graph ? "graph API engine" : "legacy API algorithm", native_nhwc ? "NCHW" : "NHWC",
                     native_nhwc ? "NHWC->NCHW->NHWC" : "NCHW->NHWC->NCHW", tr);
        c->last_ws = ch->ws_bytes + (ch->nhwc ? c->conv_tmp_bytes : 0);
        c->last_conv = ch;
        c->last_cache = ch->cache;
        c->last_cache_check_ms = ch->cache_check_ms;
        snprintf(c->last_cache_note, sizeof c->last_cache_note, "%s", ch->cache_note);
    }
    conv_desc_free(&d);
    return st;
}

const char *hbc_pool_impl(const hb_case *cs)
{
    conv_p p;
    if (!conv_params(&cs->shape, true, &p)) return nullptr;
    /* cuDNN pooling has no dilation and needs padding < window (else a window may lie wholly in the
     * padding, which hybench defines as 0): own kernel there */
    return p.dh != 1 || p.dw != 1 || p.ph >= p.kh || p.pw >= p.kw || p.b * p.c > INT_MAX ? "own-kernel" : "cudnn-pool";
}

hb_status run_pool(hbc_ctx *c, const hb_case *cs, const void *x, void *y)
{
    conv_p p;
    if (!conv_params(&cs->shape, true, &p)) return HB_EINVAL;
    const bool is_max = cs->op == HB_OP_MAXPOOL;
    const hbc_elem e = hbc_elem_of(cs->dtype);
    c->last_ws = 0;
    c->last_algo[0] = 0;
    const char *own = hbc_pool_impl(cs);
    if (own && !strcmp(own, "own-kernel")) {
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
