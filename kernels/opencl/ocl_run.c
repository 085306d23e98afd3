/*
 * ocl_run.c - the run hook of the OpenCL backend: one dispatch per op of hybench.h, on the device
 * buffers of hb_buf.dev, in the storage variant of the case's dtype (f32, or f16 with f32
 * arithmetic). Every enqueue is checked; the hook finishes the queue before it returns (blocking).
 *
 * Layouts and semantics are those of hybench.h's header comment. Defaults, element counts and the
 * computability check come from core/opdesc.h (header-only: the plugin links no harness symbol, and
 * tests/test_opencl.c, whose binary exports none, loads it too), the same code hb_op_input_elems and
 * hb_op_output_elems run. The elementwise ops dispatch through ocl_ew_table (op -> .cl kernel).
 */
#include "opencl/ocl.h"
#include "core/opdesc.h"
#include "core/quant.h"

#include <math.h>
#include <string.h>

#define DEV(b) (((ocl_buf *)(b)->priv)->dev)

/* Output spatial size (hybench.h, core/opdesc.h). */
static int64_t oh_of(const hb_shape *s) { return hb_out_dim_(s->h, s->ph, s->dh, s->kh, s->sh); }
static int64_t ow_of(const hb_shape *s) { return hb_out_dim_(s->w, s->pw, s->dw, s->kw, s->sw); }

/* The elementwise kernel table: op -> kernel of hb_elementwise.cl (HB_EW1 for one input, HB_EW2 for
 * two: the op's row in HB_OP_LIST gives the count). A new elementwise op is one row here and one
 * kernel line there. */
static const struct { hb_op op; const char *kernel; } ocl_ew_table[] = {
    {HB_OP_ADD, "hb_add"}, {HB_OP_MUL, "hb_mul"}, {HB_OP_RELU, "hb_relu"}, {HB_OP_GELU, "hb_gelu"}, {HB_OP_SILU, "hb_silu"},
    {HB_OP_SIGMOID, "hb_sigmoid"},
};
const char *ocl_ew_kernel(hb_op op)
{
    for (size_t i = 0; i < sizeof ocl_ew_table / sizeof ocl_ew_table[0]; i++)
        if (ocl_ew_table[i].op == op) return ocl_ew_table[i].kernel;
    return NULL;
}

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static hb_status st_of(cl_int e) { return e == CL_SUCCESS ? HB_OK : ocl_status(e); }

/* A kernel or, on failure, the status (program build failure -> HB_EDEVICE). */
#define GET_KERNEL(k, prog, name)                                     \
    do {                                                              \
        cl_int e_;                                                    \
        k = ocl_kernel(c, prog, var, name, &e_);                      \
        if (!k) return e_ == CL_SUCCESS ? HB_EDEVICE : (ocl_status(e_) == HB_OK ? HB_EDEVICE : ocl_status(e_)); \
    } while (0)

static hb_status run_elementwise(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const char *name = ocl_ew_kernel(cs->op);
    if (!name) return HB_ESKIP;
    cl_kernel k;
    GET_KERNEL(k, OCL_P_ELEMENTWISE, name);
    cl_ulong n = (cl_ulong)cs->shape.n;
    cl_mem a = DEV(in[0]), y = DEV(out);
    cl_int e;
    if (hb_op_row(cs->op)->ninputs > 1) {
        cl_mem b = DEV(in[1]);
        e = ocl_set_args(k, 4, OCL_ARG(a), OCL_ARG(b), OCL_ARG(y), OCL_ARG(n));
    } else {
        e = ocl_set_args(k, 3, OCL_ARG(a), OCL_ARG(y), OCL_ARG(n));
    }
    if (e != CL_SUCCESS) return st_of(e);
    const size_t ewv = c->cpu_style ? 16 : 4;  /* elements per work-item (EWV in hb_elementwise.cl) */
    size_t l = c->cpu_style ? 64 : 256, g = round_up(((size_t)n + ewv - 1) / ewv, l);
    return st_of(ocl_launch(c, k, 1, &g, &l));
}

static hb_status run_conv2d(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const hb_shape *s = &cs->shape;
    const int G = (int)s->g, cg = (int)(s->c / s->g), ocg = (int)(s->oc / s->g);
    const int oh = (int)oh_of(s), ow = (int)ow_of(s);
    const size_t P = (size_t)oh * (size_t)ow, Kd = (size_t)cg * (size_t)(s->kh * s->kw);
    const size_t es = var ? 2 : 4;
    cl_mem X = DEV(in[0]), W = DEV(in[1]), Y = DEV(out);
    const int pointwise = s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->ph == 0 && s->pw == 0;
    if (Kd > (size_t)INT32_MAX || P > (size_t)INT32_MAX) return HB_ESKIP;
    if (pointwise) {  /* the input itself is the column matrix: B = x[b, g*cg.., :] (cg x P) */
        for (int g = 0; g < G; g++) {
            hb_status st = ocl_gemm(c, var, ocg, (int)P, cg, W, (size_t)g * ocg * Kd, (int)Kd, 0, X, (size_t)g * cg * P,
                                    (int)P, (size_t)s->c * P, Y, (size_t)g * ocg * P, (int)P, (size_t)s->oc * P, (int)s->batch);
            if (st != HB_OK) return st;
        }
        return HB_OK;
    }
    cl_kernel k;
    GET_KERNEL(k, OCL_P_CONV_POOL, "hb_im2col");
    /* images per im2col chunk: keep the column buffer within 64 MiB (at least one image) */
    size_t per_img = Kd * P * es, limit = (size_t)64 << 20;
    if (limit > c->max_alloc) limit = (size_t)c->max_alloc;
    size_t nb = per_img >= limit ? 1 : limit / per_img;
    if (nb > (size_t)s->batch) nb = (size_t)s->batch;
    hb_status st;
    cl_mem col = ocl_scratch(c, OCL_SCRATCH_OP, nb * per_img, &st);
    if (!col) return st;
    int C = (int)s->c, H = (int)s->h, Wd = (int)s->w, kh = (int)s->kh, kw = (int)s->kw, sh = (int)s->sh,
        sw = (int)s->sw, ph = (int)s->ph, pw = (int)s->pw, dh = (int)s->dh, dw = (int)s->dw;
    for (int g = 0; g < G; g++) {
        for (int b0 = 0; b0 < (int)s->batch; b0 += (int)nb) {
            int nbi = (int)s->batch - b0 < (int)nb ? (int)s->batch - b0 : (int)nb;
            cl_int e = ocl_set_args(k, 18, OCL_ARG(X), OCL_ARG(col), OCL_ARG(b0), OCL_ARG(g), OCL_ARG(C),
                                    OCL_ARG(H), OCL_ARG(Wd), OCL_ARG(cg), OCL_ARG(kh), OCL_ARG(kw),
                                    OCL_ARG(sh), OCL_ARG(sw), OCL_ARG(ph), OCL_ARG(pw), OCL_ARG(dh),
                                    OCL_ARG(dw), OCL_ARG(oh), OCL_ARG(ow));
            if (e != CL_SUCCESS) return st_of(e);
            size_t gws[3] = {round_up(P, 64), Kd, (size_t)nbi}, lws[3] = {64, 1, 1};
            if ((e = ocl_launch(c, k, 3, gws, lws)) != CL_SUCCESS) return st_of(e);
            st = ocl_gemm(c, var, ocg, (int)P, (int)Kd, W, (size_t)g * ocg * Kd, (int)Kd, 0, col, 0, (int)P, Kd * P, Y,
                          (size_t)b0 * s->oc * P + (size_t)g * ocg * P, (int)P, (size_t)s->oc * P, nbi);
            if (st != HB_OK) return st;
        }
    }
    return HB_OK;
}

/* conv2d layout=nhwc (hybench.h): the output is y[b*oh*ow, oc] row-major, a GEMM per group with the
 * pixels as rows: Y[:, g*ocg..] = col (pixels x Kd, NHWC im2col, hb_im2col_nhwc; for a 1x1 stride-1
 * unpadded convolution x itself with lda = c) x W_g^T. The op scratch holds the columns (chunks of
 * pixels that keep it within 64 MiB) and after them W^T (Kd x oc, written by hb_wtrans at the start
 * of the call: part of the timed compute; a framework would keep it so). */
static hb_status run_conv2d_nhwc(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const hb_shape *s = &cs->shape;
    const int G = (int)s->g, cg = (int)(s->c / s->g), ocg = (int)(s->oc / s->g), OC = (int)s->oc;
    const int oh = (int)oh_of(s), ow = (int)ow_of(s);
    const size_t Ptot = (size_t)s->batch * (size_t)oh * (size_t)ow, Kd = (size_t)cg * (size_t)(s->kh * s->kw);
    const size_t es = var ? 2 : 4;
    cl_mem X = DEV(in[0]), W = DEV(in[1]), Y = DEV(out);
    const int pointwise = s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->ph == 0 && s->pw == 0;
    if (Kd > (size_t)INT32_MAX || Ptot > (size_t)INT32_MAX || (size_t)OC * Kd > (size_t)INT32_MAX) return HB_ESKIP;
    const size_t wt_elems = (size_t)OC * Kd;
    size_t limit = (size_t)64 << 20;
    if (limit > c->max_alloc) limit = (size_t)c->max_alloc;
    size_t nq = pointwise ? 0 : (limit > wt_elems * es ? (limit - wt_elems * es) / (Kd * es) : 1);
    if (!pointwise && nq < 1) nq = 1;
    if (nq > Ptot) nq = Ptot;
    const size_t col_elems = (nq * Kd + 63) / 64 * 64; /* W^T after the columns, 64-element aligned */
    if (col_elems > (size_t)INT32_MAX) return HB_ESKIP;
    hb_status st;
    cl_mem sc = ocl_scratch(c, OCL_SCRATCH_OP, (col_elems + wt_elems) * es, &st);
    if (!sc) return st;
    cl_kernel kt, k;
    GET_KERNEL(kt, OCL_P_CONV_POOL, "hb_wtrans");
    int wo = (int)col_elems, iKd = (int)Kd;
    cl_int e = ocl_set_args(kt, 5, OCL_ARG(W), OCL_ARG(sc), OCL_ARG(wo), OCL_ARG(OC), OCL_ARG(iKd));
    if (e != CL_SUCCESS) return st_of(e);
    size_t gt[2] = {round_up((size_t)OC, 64), Kd}, lt[2] = {64, 1};
    if ((e = ocl_launch(c, kt, 2, gt, lt)) != CL_SUCCESS) return st_of(e);
    if (pointwise) { /* A = x rows (pixels x c), group g's channels at column offset g*cg */
        for (int g = 0; g < G; g++) {
            st = ocl_gemm(c, var, (int)Ptot, ocg, cg, X, (size_t)g * cg, (int)s->c, 0, sc, col_elems + (size_t)g * ocg, OC, 0,
                          Y, (size_t)g * ocg, OC, 0, 1);
            if (st != HB_OK) return st;
        }
        return HB_OK;
    }
    GET_KERNEL(k, OCL_P_CONV_POOL, "hb_im2col_nhwc");
    int C = (int)s->c, H = (int)s->h, Wd = (int)s->w, kh = (int)s->kh, kw = (int)s->kw, sh = (int)s->sh,
        sw = (int)s->sw, ph = (int)s->ph, pw = (int)s->pw, dh = (int)s->dh, dw = (int)s->dw;
    for (size_t q0 = 0; q0 < Ptot; q0 += nq) {
        const int n = Ptot - q0 < nq ? (int)(Ptot - q0) : (int)nq, iq0 = (int)q0;
        for (int g = 0; g < G; g++) {
            e = ocl_set_args(k, 18, OCL_ARG(X), OCL_ARG(sc), OCL_ARG(iq0), OCL_ARG(g), OCL_ARG(C), OCL_ARG(H),
                             OCL_ARG(Wd), OCL_ARG(cg), OCL_ARG(kh), OCL_ARG(kw), OCL_ARG(sh), OCL_ARG(sw),
                             OCL_ARG(ph), OCL_ARG(pw), OCL_ARG(dh), OCL_ARG(dw), OCL_ARG(oh), OCL_ARG(ow));
            if (e != CL_SUCCESS) return st_of(e);
            size_t gws[2] = {round_up(Kd, 64), (size_t)n}, lws[2] = {64, 1};
            if ((e = ocl_launch(c, k, 2, gws, lws)) != CL_SUCCESS) return st_of(e);
            st = ocl_gemm(c, var, n, ocg, iKd, sc, 0, iKd, 0, sc, col_elems + (size_t)g * ocg, OC, 0, Y,
                          q0 * (size_t)OC + (size_t)g * ocg, OC, 0, 1);
            if (st != HB_OK) return st;
        }
    }
    return HB_OK;
}

static hb_status run_pool(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const hb_shape *s = &cs->shape;
    cl_kernel k;
    GET_KERNEL(k, OCL_P_CONV_POOL, cs->op == HB_OP_MAXPOOL ? "hb_maxpool" : "hb_avgpool");
    int H = (int)s->h, W = (int)s->w, kh = (int)s->kh, kw = (int)s->kw, sh = (int)s->sh, sw = (int)s->sw,
        ph = (int)s->ph, pw = (int)s->pw, oh = (int)oh_of(s), ow = (int)ow_of(s);
    cl_mem x = DEV(in[0]), y = DEV(out);
    cl_int e = ocl_set_args(k, 12, OCL_ARG(x), OCL_ARG(y), OCL_ARG(H), OCL_ARG(W), OCL_ARG(kh),
                            OCL_ARG(kw), OCL_ARG(sh), OCL_ARG(sw), OCL_ARG(ph), OCL_ARG(pw),
                            OCL_ARG(oh), OCL_ARG(ow));
    if (e != CL_SUCCESS) return st_of(e);
    size_t l0 = 1;
    while (l0 < 64 && l0 < (size_t)ow) l0 *= 2;
    size_t l[3] = {l0, 1, 1}, g[3] = {round_up((size_t)ow, l0), (size_t)oh, (size_t)(s->batch * s->c)};
    return st_of(ocl_launch(c, k, 3, g, l));
}

static hb_status run_reduce(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const hb_shape *s = &cs->shape;
    int rows = cs->op == HB_OP_SUM_ALL ? 1 : (int)s->rows;
    int cols = cs->op == HB_OP_SUM_ALL ? (int)s->n : (int)s->cols;
    int fin = cs->op == HB_OP_MEAN ? 2 : cs->op == HB_OP_MAX ? 3 : 1;
    cl_kernel kp, kf = NULL;
    GET_KERNEL(kp, OCL_P_REDUCE, cs->op == HB_OP_MAX ? "hb_red_max" : "hb_red_sum");
    /* Split rows into chunks so that there is enough parallel work: CPU style wants >= 8 work-items
     * per compute unit of >= 16 Ki elements each; GPU style >= 4 work-groups of 256 per compute unit
     * with >= 2 Ki elements each. */
    size_t want = c->cpu_style ? 8u * c->cus : 4u * c->cus;
    size_t min_chunk = c->cpu_style ? 16384 : 2048;
    size_t nchunk = 1;
    if ((size_t)rows < want) {
        nchunk = (want + (size_t)rows - 1) / (size_t)rows;
        size_t most = ((size_t)cols + min_chunk - 1) / min_chunk;
        if (nchunk > most) nchunk = most;
        if (nchunk < 1) nchunk = 1;
    }
    int chunk = (int)round_up(((size_t)cols + nchunk - 1) / nchunk, 16);
    nchunk = ((size_t)cols + (size_t)chunk - 1) / (size_t)chunk;
    int nch = (int)nchunk;
    cl_mem x = DEV(in[0]), y = DEV(out), part = NULL;
    hb_status st;
    if (nch > 1) {
        part = ocl_scratch(c, OCL_SCRATCH_OP, (size_t)rows * nchunk * sizeof(float), &st);
        if (!part) return st;
        GET_KERNEL(kf, OCL_P_REDUCE, "hb_red_final");
    }
    int pfin = nch > 1 ? 0 : fin;
    cl_int e = ocl_set_args(kp, 8, OCL_ARG(x), OCL_ARG(part), OCL_ARG(y), OCL_ARG(rows), OCL_ARG(cols),
                            OCL_ARG(chunk), OCL_ARG(nch), OCL_ARG(pfin));
    if (e != CL_SUCCESS) return st_of(e);
    if (c->cpu_style) {
        /* rows per work-group: up to 64 (fewer, larger groups cost less scheduling in PoCL) while
         * keeping >= 4 groups per compute unit */
        size_t l1 = 1;
        while (l1 < 64 && (size_t)rows >= 2 * l1 * 4 * c->cus) l1 *= 2;
        size_t l[2] = {1, l1}, g[2] = {nchunk, round_up((size_t)rows, l1)};
        e = ocl_launch(c, kp, 2, g, l);
    } else {
        size_t l[2] = {256, 1}, g[2] = {nchunk * 256, (size_t)rows};
        e = ocl_launch(c, kp, 2, g, l);
    }
    if (e != CL_SUCCESS || nch == 1) return st_of(e);
    e = ocl_set_args(kf, 6, OCL_ARG(part), OCL_ARG(y), OCL_ARG(rows), OCL_ARG(nch), OCL_ARG(cols),
                     OCL_ARG(fin));
    if (e != CL_SUCCESS) return st_of(e);
    size_t l = 64, g = round_up((size_t)rows, l);
    return st_of(ocl_launch(c, kf, 1, &g, &l));
}

static hb_status run_rmsnorm(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    cl_kernel k;
    GET_KERNEL(k, OCL_P_REDUCE, "hb_rmsnorm");
    int rows = (int)cs->shape.rows, cols = (int)cs->shape.cols;
    cl_mem x = DEV(in[0]), g = DEV(in[1]), y = DEV(out);
    cl_int e = ocl_set_args(k, 5, OCL_ARG(x), OCL_ARG(g), OCL_ARG(y), OCL_ARG(rows), OCL_ARG(cols));
    if (e != CL_SUCCESS) return st_of(e);
    if (c->cpu_style) {
        size_t l = 1;
        while (l < 64 && (size_t)rows >= 2 * l * 4 * c->cus) l *= 2;
        size_t gw = round_up((size_t)rows, l);
        return st_of(ocl_launch(c, k, 1, &gw, &l));
    }
    size_t l[2] = {256, 1}, gw[2] = {256, (size_t)rows};
    return st_of(ocl_launch(c, k, 2, gw, l));
}

const char *ocl_qmm_kernel(hb_dtype d)
{
    switch (d) {
    case HB_Q8_0: return "hb_qmm_q8_0";
    case HB_Q4_K: return "hb_qmm_q4_k";
    case HB_Q5_K: return "hb_qmm_q5_k";
    case HB_Q6_K: return "hb_qmm_q6_k";
    default: return NULL;
    }
}

/* Op dequantize (hb_qmatmul.cl's hb_dq_*): a work-item per group of 32 weights. */
static hb_status run_dequant(ocl_ctx *c, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const int var = 0;
    cl_kernel k;
    static const char *const names[] = {"hb_dq_q8_0", "hb_dq_q4_k", "hb_dq_q5_k", "hb_dq_q6_k"};
    const int f = cs->dtype == HB_Q8_0 ? 0 : cs->dtype == HB_Q4_K ? 1 : cs->dtype == HB_Q5_K ? 2 : 3;
    GET_KERNEL(k, OCL_P_QMATMUL, names[f]);
    cl_mem w = DEV(in[0]), y = DEV(out);
    int ng = (int)(cs->shape.n / 32);
    cl_int e = ocl_set_args(k, 3, OCL_ARG(w), OCL_ARG(y), OCL_ARG(ng));
    if (e != CL_SUCCESS) return st_of(e);
    size_t l = 64, g = round_up((size_t)ng, l);
    return st_of(ocl_launch(c, k, 1, &g, &l));
}

/* C[m,n] = A[m,k] x W^T with W in quantized blocks (hb_qmatmul.cl): work-item (j, t) computes C[4 t ..
 * 4 t + 3, j]; work-groups of 8 rows of W. */
static hb_status run_qmatmul(ocl_ctx *c, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const int var = 0;
    cl_kernel k;
    GET_KERNEL(k, OCL_P_QMATMUL, ocl_qmm_kernel(cs->dtype));
    cl_mem a = DEV(in[0]), w = DEV(in[1]), y = DEV(out);
    int m = (int)cs->shape.m, n = (int)cs->shape.n, kk = (int)cs->shape.k;
    cl_int e = ocl_set_args(k, 6, OCL_ARG(a), OCL_ARG(w), OCL_ARG(y), OCL_ARG(m), OCL_ARG(n), OCL_ARG(kk));
    if (e != CL_SUCCESS) return st_of(e);
    size_t l[2] = {8, 1}, g[2] = {round_up((size_t)n, 8), ((size_t)m + 3) / 4};
    return st_of(ocl_launch(c, k, 2, g, l));
}

static hb_status run_attention(ocl_ctx *c, int var, const hb_case *cs, hb_buf *const *in, hb_buf *out)
{
    const hb_shape *s = &cs->shape;
    cl_int e;
    cl_kernel k = ocl_attention_kernel(c, (int)s->head_dim, var, &e);
    if (!k) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
    cl_mem q = DEV(in[0]), kk = DEV(in[1]), v = DEV(in[2]), o = DEV(out);
    int heads = (int)s->heads, kvh = (int)s->kv_heads, seq = (int)s->seq, kvs = (int)s->kv_seq, causal = (int)s->causal;
    float scale = (float)(1.0 / sqrt((double)s->head_dim));
    e = ocl_set_args(k, 10, OCL_ARG(q), OCL_ARG(kk), OCL_ARG(v), OCL_ARG(o), OCL_ARG(heads),
                     OCL_ARG(kvh), OCL_ARG(seq), OCL_ARG(kvs), OCL_ARG(causal), OCL_ARG(scale));
    if (e != CL_SUCCESS) return st_of(e);
    size_t l[2] = {seq >= 16 ? 16 : 1, 1}, g[2] = {round_up((size_t)seq, l[0]), (size_t)s->batch * (size_t)heads};
    return st_of(ocl_launch(c, k, 2, g, l));
}

hb_status ocl_run(hb_instance *inst, const hb_case *cs0, hb_buf *const *in, hb_buf *out)
{
    ocl_ctx *c = inst->ctx;
    const hb_op_info *info = hb_op_row(cs0->op);
    if (!info || info->kind == HB_SK_CHAIN || info->family == HB_FAM_COLLECTIVE) return HB_ESKIP;
    if (info->kind == HB_SK_EW && !ocl_ew_kernel(cs0->op) && cs0->op != HB_OP_DEQUANTIZE) return HB_ESKIP;
    const int ni = info->ninputs;
    hb_case cl = *cs0;
    /* the defaults hb_shape_normalize fills (an unnormalized shape still computes what hybench.h
     * defines, as kernels/cpu_ref does), then what the kernels divide by or index with */
    hb_shape_defaults(cl.op, &cl.shape);
    cl.shape.causal = cl.shape.causal != 0;
    if (!hb_shape_computable(cl.op, &cl.shape)) return HB_EINVAL;
    const hb_case *cs = &cl;
    const hb_shape *s = &cl.shape;
    const int quant = hb_quant_block_elems(cs->dtype) > 0;
    const int qi = hb_quant_input(cs->op, cs->dtype); /* the input in blocks */
    if (quant && (qi < 0 || !hb_quant_blocks_whole(cs, NULL, 0))) return HB_ESKIP;
    if (!quant && cs->op == HB_OP_DEQUANTIZE) return HB_ESKIP;
    if (!quant && cs->dtype != HB_F32 && !(cs->dtype == HB_F16 && c->f16_ok)) return HB_ESKIP;
    const int var = cs->dtype == HB_F16;
    const size_t es = var ? 2 : 4;
    /* buffers must exist and be large enough for the shape (a quantized case's input 1: its blocks) */
    if (!out || !out->priv || out->bytes < (size_t)hb_op_elems(cs->op, s, -1) * es) return HB_EINVAL;
    for (int i = 0; i < ni; i++)
        if (!in || !in[i] || !in[i]->priv ||
            in[i]->bytes < (i == qi ? hb_quant_bytes(cs->dtype, hb_op_elems(cs->op, s, i)) : (size_t)hb_op_elems(cs->op, s, i) * es))
            return HB_EINVAL;
    /* the device must own every buffer (mapped route: unmap what the host holds) */
    for (int i = 0; i < ni; i++) {
        hb_status st = ocl_buf_to_device(c, in[i]);
        if (st != HB_OK) return st;
    }
    hb_status st = ocl_buf_to_device(c, out);
    if (st != HB_OK) return st;

    if (cs->op == HB_OP_DEQUANTIZE) st = run_dequant(c, cs, in, out);
    else if (info->kind == HB_SK_EW) st = run_elementwise(c, var, cs, in, out);
    else switch (cs->op) {
    case HB_OP_MATMUL:
        if (quant) { st = run_qmatmul(c, cs, in, out); break; }
        st = ocl_gemm(c, var, (int)s->m, (int)s->n, (int)s->k, DEV(in[0]), 0, (int)s->k, 0, DEV(in[1]), 0, (int)s->n, 0,
                      DEV(out), 0, (int)s->n, 0, 1);
        break;
    case HB_OP_BMM:
        st = ocl_gemm(c, var, (int)s->m, (int)s->n, (int)s->k, DEV(in[0]), 0, (int)s->k, (size_t)(s->m * s->k), DEV(in[1]), 0,
                      (int)s->n, (size_t)(s->k * s->n), DEV(out), 0, (int)s->n, (size_t)(s->m * s->n), (int)s->batch);
        break;
    case HB_OP_CONV2D:
        st = cs->shape.layout == HB_LAYOUT_NHWC ? run_conv2d_nhwc(c, var, cs, in, out) : run_conv2d(c, var, cs, in, out);
        break;
    case HB_OP_MAXPOOL: case HB_OP_AVGPOOL: st = run_pool(c, var, cs, in, out); break;
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX: case HB_OP_SUM_ALL: st = run_reduce(c, var, cs, in, out); break;
    case HB_OP_RMSNORM: st = run_rmsnorm(c, var, cs, in, out); break;
    case HB_OP_ATTENTION: st = run_attention(c, var, cs, in, out); break;
    default: return HB_ESKIP;
    }
    cl_int e = OCL_CHECK(clFinish(c->q));
    if (st == HB_OK && e != CL_SUCCESS) st = ocl_status(e);
    return st;
}
