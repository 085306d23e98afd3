/*
 * ref.c - the f64 reference of every op (ref.h). Plain C loops, no BLAS, every sum accumulated in
 * double. The expensive ops (matmul, bmm, conv2d, attention) are split over OpenMP threads by
 * output row/plane so that verifying a large GPU case takes seconds; each output element is still
 * computed by one thread in a fixed order, so the result does not depend on the thread count.
 *
 * Formulas (hybench.h):
 *   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (tanh form, Hendrycks & Gimpel)
 *   silu(x) = x / (1 + exp(-x))
 *   sigmoid(x) = 1 / (1 + exp(-x))
 *   rmsnorm: y = x / sqrt(mean(x^2) + 1e-5) * g
 *   avgpool divides by the number of in-bounds taps (padding excluded);
 *   attention: o = softmax(q k^T / sqrt(head_dim) + mask) v with GQA and end-aligned causal mask.
 * Cases hybench.h leaves undefined get a finite value, the same in both CPU backends: a pooling
 * window that lies wholly in the padding gives 0, and a causal query row that sees no key (kv_seq
 * < seq) gives 0.
 */
#include "cpu_ref/ref.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/opdesc.h"
#include "cpu_ref/kshape.h"

/* Parallelize the expensive loops only when the work is worth a fork (f64 multiply-adds). */
#define REF_PAR_MIN_WORK 100000.0

static void fill_nan(double *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = NAN;
}

/* C[m, n] = A[m, k] x W^T with W[n, k] row-major (a quantized matmul's weight layout, core/quant.h;
 * W holds its exact dequantized values), every m-th row multiple of step computed, the others NAN. */
static void ref_gemm_nt(const double *A, const double *W, double *C, int64_t m, int64_t n, int64_t k, int64_t step)
{
    int par = (double)m * (double)n * (double)k > REF_PAR_MIN_WORK;
#pragma omp parallel for schedule(dynamic, 1) if (par)
    for (int64_t i = 0; i < m; i++) {
        double *c = C + i * n;
        if (i % step) {
            fill_nan(c, n);
            continue;
        }
        const double *a = A + i * k;
        for (int64_t j = 0; j < n; j++) {
            const double *w = W + j * k;
            double acc = 0.0;
            for (int64_t kk = 0; kk < k; kk++)
                acc += a[kk] * w[kk];
            c[j] = acc;
        }
    }
}

/* C[rows, n] = A[rows, k] x B[k, n] for one matrix; global row index of row 0 is r0. */
static void ref_gemm(const double *A, const double *B, double *C, int64_t rows, int64_t n, int64_t k,
                     int64_t r0, int64_t step)
{
    int par = (double)rows * (double)n * (double)k > REF_PAR_MIN_WORK;
#pragma omp parallel for schedule(dynamic, 1) if (par)
    for (int64_t i = 0; i < rows; i++) {
        double *c = C + i * n;
        if ((r0 + i) % step) {
            fill_nan(c, n);
            continue;
        }
        for (int64_t j = 0; j < n; j++)
            c[j] = 0.0;
        const double *a = A + i * k;
        for (int64_t kk = 0; kk < k; kk++) {
            const double av = a[kk];
            const double *b = B + kk * n;
            for (int64_t j = 0; j < n; j++)
                c[j] += av * b[j];
        }
    }
}

static hb_status ref_conv2d(const hbk_conv *p, const double *x, const double *wt, double *y, int64_t step)
{
    const int64_t planes = p->b * p->oc, ohw = p->oh * p->ow;
    int par = (double)planes * (double)ohw * (double)(p->cg * p->kh * p->kw) > REF_PAR_MIN_WORK;
#pragma omp parallel for schedule(dynamic, 1) if (par)
    for (int64_t pl = 0; pl < planes; pl++) {
        double *out = y + pl * ohw;
        if (pl % step) {
            fill_nan(out, ohw);
            continue;
        }
        const int64_t bi = pl / p->oc, o = pl % p->oc, grp = o / p->ocg;
        for (int64_t i = 0; i < ohw; i++)
            out[i] = 0.0;
        for (int64_t ci = 0; ci < p->cg; ci++) {
            const double *xp = x + ((bi * p->c) + grp * p->cg + ci) * p->h * p->w;
            const double *wp = wt + (o * p->cg + ci) * p->kh * p->kw;
            for (int64_t ky = 0; ky < p->kh; ky++) {
                for (int64_t kx = 0; kx < p->kw; kx++) {
                    const double wv = wp[ky * p->kw + kx];
                    for (int64_t oy = 0; oy < p->oh; oy++) {
                        const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
                        if (iy < 0 || iy >= p->h)
                            continue;
                        const double *xr = xp + iy * p->w;
                        double *orow = out + oy * p->ow;
                        for (int64_t ox = 0; ox < p->ow; ox++) {
                            const int64_t ix = ox * p->sw - p->pw + kx * p->dw;
                            if (ix >= 0 && ix < p->w)
                                orow[ox] += wv * xr[ix];
                        }
                    }
                }
            }
        }
    }
    return HB_OK;
}

/* conv2d in layout=nhwc (hybench.h): x [b,h,w,c], w [oc,kh,kw,c/g] (OHWI), y [b,oh,ow,oc]. One "row"
 * (the unit of step) is one output pixel's oc values. */
static hb_status ref_conv2d_nhwc(const hbk_conv *p, const double *x, const double *wt, double *y, int64_t step)
{
    const int64_t pix = p->b * p->oh * p->ow;
    int par = (double)pix * (double)p->oc * (double)(p->cg * p->kh * p->kw) > REF_PAR_MIN_WORK;
#pragma omp parallel for schedule(dynamic, 16) if (par)
    for (int64_t q = 0; q < pix; q++) {
        double *out = y + q * p->oc;
        if (q % step) {
            fill_nan(out, p->oc);
            continue;
        }
        const int64_t bi = q / (p->oh * p->ow), oy = q / p->ow % p->oh, ox = q % p->ow;
        for (int64_t o = 0; o < p->oc; o++) {
            const int64_t grp = o / p->ocg;
            double acc = 0.0;
            for (int64_t ky = 0; ky < p->kh; ky++) {
                const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
                if (iy < 0 || iy >= p->h)
                    continue;
                for (int64_t kx = 0; kx < p->kw; kx++) {
                    const int64_t ix = ox * p->sw - p->pw + kx * p->dw;
                    if (ix < 0 || ix >= p->w)
                        continue;
                    const double *xp = x + ((bi * p->h + iy) * p->w + ix) * p->c + grp * p->cg;
                    const double *wp = wt + ((o * p->kh + ky) * p->kw + kx) * p->cg;
                    for (int64_t ci = 0; ci < p->cg; ci++)
                        acc += wp[ci] * xp[ci];
                }
            }
            out[o] = acc;
        }
    }
    return HB_OK;
}

static void ref_pool(const hbk_conv *p, int is_max, const double *x, double *y)
{
    const int64_t planes = p->b * p->c;
#pragma omp parallel for schedule(static) if (planes * p->oh * p->ow * p->kh * p->kw > 1000000)
    for (int64_t pl = 0; pl < planes; pl++) {
        const double *xp = x + pl * p->h * p->w;
        double *out = y + pl * p->oh * p->ow;
        for (int64_t oy = 0; oy < p->oh; oy++) {
            for (int64_t ox = 0; ox < p->ow; ox++) {
                double acc = is_max ? -HUGE_VAL : 0.0;
                int64_t cnt = 0;
                for (int64_t ky = 0; ky < p->kh; ky++) {
                    const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
                    if (iy < 0 || iy >= p->h)
                        continue;
                    for (int64_t kx = 0; kx < p->kw; kx++) {
                        const int64_t ix = ox * p->sw - p->pw + kx * p->dw;
                        if (ix < 0 || ix >= p->w)
                            continue;
                        const double v = xp[iy * p->w + ix];
                        if (is_max)
                            acc = v > acc ? v : acc;
                        else
                            acc += v;
                        cnt++;
                    }
                }
                out[oy * p->ow + ox] = cnt == 0 ? 0.0 : (is_max ? acc : acc / (double)cnt);
            }
        }
    }
}

static hb_status ref_attention(const hbk_attn *a, const double *q, const double *k, const double *v,
                               double *o, int64_t step)
{
    const int64_t rows = a->b * a->heads * a->seq;
    const double scale = 1.0 / sqrt((double)a->d);
    int failed = 0;
    int par = (double)rows * (double)a->kvs * (double)a->d > REF_PAR_MIN_WORK;
#pragma omp parallel if (par)
    {
        double *s = malloc((size_t)(a->kvs > 0 ? a->kvs : 1) * sizeof *s);
        if (!s) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 16)
        for (int64_t r = 0; r < rows; r++) {
            const int64_t bi = r / (a->heads * a->seq), h = (r / a->seq) % a->heads, i = r % a->seq;
            double *orow = o + hbk_attn_qrow(a, bi, h, i);
            if (r % step || !s) {
                fill_nan(orow, a->d);
                continue;
            }
            const int64_t g = h / a->rep, ks = hbk_attn_kvrow(a, 0, 0, 1); /* ks: elements from one key row to the next */
            const double *qr = q + hbk_attn_qrow(a, bi, h, i), *kb = k + hbk_attn_kvrow(a, bi, g, 0), *vb = v + hbk_attn_kvrow(a, bi, g, 0);
            const int64_t nk = hbk_attn_keys(a, i);
            for (int64_t t = 0; t < a->d; t++)
                orow[t] = 0.0;
            if (nk == 0)
                continue;
            double mx = -HUGE_VAL;
            for (int64_t j = 0; j < nk; j++) {
                double dot = 0.0;
                for (int64_t t = 0; t < a->d; t++)
                    dot += qr[t] * kb[j * ks + t];
                s[j] = dot * scale;
                mx = s[j] > mx ? s[j] : mx;
            }
            double den = 0.0;
            for (int64_t j = 0; j < nk; j++) {
                s[j] = exp(s[j] - mx);
                den += s[j];
            }
            for (int64_t j = 0; j < nk; j++) {
                const double pj = s[j] / den;
                for (int64_t t = 0; t < a->d; t++)
                    orow[t] += pj * vb[j * ks + t];
            }
        }
        free(s);
    }
    return failed ? HB_ENOMEM : HB_OK;
}

/* The elementwise ops (shape kind HB_SK_EW: every tensor [n]), one row each: out = f(x, y), y the
 * second input of the two-input ops (ignored by the others). A new elementwise op is its f, its EW_LOOP
 * line and its row below. */
static double ew_add(double x, double y) { return x + y; }
static double ew_mul(double x, double y) { return x * y; }
static double ew_relu(double x, double y) { (void)y; return x > 0.0 ? x : 0.0; }
static double ew_gelu(double x, double y)
{
    (void)y;
    const double c = sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}
static double ew_silu(double x, double y) { (void)y; return x / (1.0 + exp(-x)); }
static double ew_sigmoid(double x, double y) { (void)y; return 1.0 / (1.0 + exp(-x)); }
static double ew_ident(double x, double y) { (void)y; return x; }

/* Each row's loop is a function of its own with the row's f inlined: called through a pointer per
 * element, add and mul were not vectorized and ran 2-3x slower than before the table (mul n=262144 f32:
 * 0.17 -> 0.49 ms per call, hybench ab of the two builds on the VM, every round). y is x for the
 * one-input ops (f ignores it), so the loop has no branch. */
#define EW_LOOP(name)                                                                                   \
    static void loop_##name(int64_t n, const double *restrict x, const double *restrict y, double *restrict out) \
    {                                                                                                   \
        for (int64_t i = 0; i < n; i++)                                                                 \
            out[i] = ew_##name(x[i], y[i]);                                                             \
    }
EW_LOOP(add)
EW_LOOP(mul)
EW_LOOP(relu)
EW_LOOP(gelu)
EW_LOOP(silu)
EW_LOOP(sigmoid)
EW_LOOP(ident)

typedef void ew_loop_fn(int64_t n, const double *restrict x, const double *restrict y, double *restrict out);
static const struct { hb_op op; ew_loop_fn *loop; } ew_rows[] = {
    {HB_OP_ADD, loop_add}, {HB_OP_MUL, loop_mul}, {HB_OP_RELU, loop_relu}, {HB_OP_GELU, loop_gelu},
    {HB_OP_SILU, loop_silu}, {HB_OP_SIGMOID, loop_sigmoid},
    {HB_OP_DEQUANTIZE, loop_ident}, /* its f64 input is the blocks' exact values (core/quant.c) */
};

/* out[i] = f(x[i], y[i]) over n elements, the row of op; HB_EINVAL for an op without a row. */
static hb_status ref_elementwise(const hb_case *c, const double *const *in, double *out)
{
    const int64_t n = c->shape.n;
    const double *x = in[0], *y = hb_op_get(c->op)->ninputs > 1 ? in[1] : in[0];
    if (n <= 0)
        return HB_EINVAL;
    for (size_t r = 0; r < sizeof ew_rows / sizeof ew_rows[0]; r++) {
        if (ew_rows[r].op == c->op) {
            ew_rows[r].loop(n, x, y, out);
            return HB_OK;
        }
    }
    return HB_EINVAL;
}

/* Collectives (layouts in core/hybench.h): every rank holds the same input x (drawn from the run's
 * seed), so rank q's contribution is x and the reduction is the sum over q = 0..ranks-1 of x, added
 * rank by rank in f64 as NCCL adds them. all_gather: block q of the output is rank q's x. */
static hb_status ref_collective(hb_op op, const hb_shape *s, const double *x, double *out)
{
    const int64_t n = s->n, r = s->ranks > 0 ? s->ranks : 1;
    if (n <= 0 || s->rank < 0 || s->rank >= r)
        return HB_EINVAL;
    switch (op) {
    case HB_OP_ALL_REDUCE:
    case HB_OP_REDUCE_SCATTER: {
        const double *src = op == HB_OP_REDUCE_SCATTER ? x + s->rank * n : x;
        for (int64_t i = 0; i < n; i++) {
            double acc = 0.0;
            for (int64_t q = 0; q < r; q++)
                acc += src[i];
            out[i] = acc;
        }
        return HB_OK;
    }
    case HB_OP_ALL_GATHER:
        for (int64_t q = 0; q < r; q++)
            memcpy(out + q * n, x, (size_t)n * sizeof *out);
        return HB_OK;
    case HB_OP_BROADCAST:
        memcpy(out, x, (size_t)n * sizeof *out);
        return HB_OK;
    default:
        return HB_EINVAL;
    }
}

hb_status hb_ref_compute(const hb_case *c, const double *const *in, double *out, int64_t row_step)
{
    if (!c || !in || !out)
        return HB_EINVAL;
    const hb_shape *s = &c->shape;
    const int64_t step = row_step < 1 ? 1 : row_step;
    if (hb_op_is_ew(c->op))
        return ref_elementwise(c, in, out);
    switch (c->op) {
    case HB_OP_MATMUL:
        if (s->m <= 0 || s->n <= 0 || s->k <= 0)
            return HB_EINVAL;
        if (hb_dtype_is_quant(c->dtype)) /* in[1]: the weights W[n,k] dequantized (ref.h) */
            ref_gemm_nt(in[0], in[1], out, s->m, s->n, s->k, step);
        else
            ref_gemm(in[0], in[1], out, s->m, s->n, s->k, 0, step);
        return HB_OK;
    case HB_OP_BMM: {
        const int64_t b = hbk_def(s->batch, 1);
        if (s->m <= 0 || s->n <= 0 || s->k <= 0)
            return HB_EINVAL;
        for (int64_t bi = 0; bi < b; bi++)
            ref_gemm(in[0] + bi * s->m * s->k, in[1] + bi * s->k * s->n, out + bi * s->m * s->n,
                     s->m, s->n, s->k, bi * s->m, step);
        return HB_OK;
    }
    case HB_OP_CONV2D: {
        hbk_conv p;
        if (hbk_conv_params(s, 0, &p))
            return HB_EINVAL;
        return p.nhwc ? ref_conv2d_nhwc(&p, in[0], in[1], out, step) : ref_conv2d(&p, in[0], in[1], out, step);
    }
    case HB_OP_MAXPOOL:
    case HB_OP_AVGPOOL: {
        hbk_conv p;
        if (hbk_conv_params(s, 1, &p))
            return HB_EINVAL;
        ref_pool(&p, c->op == HB_OP_MAXPOOL, in[0], out);
        return HB_OK;
    }
    case HB_OP_SUM:
    case HB_OP_MEAN:
    case HB_OP_MAX:
    case HB_OP_RMSNORM: {
        const int64_t rows = s->rows, cols = s->cols;
        if (rows <= 0 || cols <= 0)
            return HB_EINVAL;
        for (int64_t r = 0; r < rows; r++) {
            const double *x = in[0] + r * cols;
            if (c->op == HB_OP_MAX) {
                double m = x[0];
                for (int64_t j = 1; j < cols; j++)
                    m = x[j] > m ? x[j] : m;
                out[r] = m;
                continue;
            }
            double acc = 0.0;
            if (c->op == HB_OP_RMSNORM) {
                for (int64_t j = 0; j < cols; j++)
                    acc += x[j] * x[j];
                const double inv = 1.0 / sqrt(acc / (double)cols + 1e-5);
                for (int64_t j = 0; j < cols; j++)
                    out[r * cols + j] = x[j] * inv * in[1][j];
                continue;
            }
            for (int64_t j = 0; j < cols; j++)
                acc += x[j];
            out[r] = c->op == HB_OP_MEAN ? acc / (double)cols : acc;
        }
        return HB_OK;
    }
    case HB_OP_ALL_REDUCE:
    case HB_OP_ALL_GATHER:
    case HB_OP_REDUCE_SCATTER:
    case HB_OP_BROADCAST:
        return ref_collective(c->op, s, in[0], out);
    case HB_OP_SUM_ALL: {
        if (s->n <= 0)
            return HB_EINVAL;
        double acc = 0.0;
        for (int64_t i = 0; i < s->n; i++)
            acc += in[0][i];
        out[0] = acc;
        return HB_OK;
    }
    case HB_OP_ATTENTION: {
        hbk_attn a;
        if (hbk_attn_params(s, &a))
            return HB_EINVAL;
        return ref_attention(&a, in[0], in[1], in[2], out, step);
    }
    default:
        return HB_EINVAL;
    }
}

/* The reference's own cost (f64 flops, multiply-add = 2) and its number of subsampling rows. */
static void ref_cost(const hb_case *c, double *flops, int64_t *rows)
{
    const hb_shape *s = &c->shape;
    *flops = 0.0;
    *rows = 1;
    switch (c->op) {
    case HB_OP_MATMUL:
        *flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
        *rows = s->m;
        break;
    case HB_OP_BMM:
        *rows = hbk_def(s->batch, 1) * s->m;
        *flops = 2.0 * (double)*rows * (double)s->n * (double)s->k;
        break;
    case HB_OP_CONV2D: {
        hbk_conv p;
        if (hbk_conv_params(s, 0, &p))
            return;
        *flops = 2.0 * (double)(p.b * p.oc) * (double)(p.oh * p.ow) * (double)(p.cg * p.kh * p.kw);
        *rows = p.nhwc ? p.b * p.oh * p.ow : p.b * p.oc; /* the unit of ref_conv2d(_nhwc)'s step */
        break;
    }
    case HB_OP_ATTENTION: {
        hbk_attn a;
        if (hbk_attn_params(s, &a))
            return;
        *rows = a.b * a.heads * a.seq;
        double keys = 0.0; /* visible keys summed over one head's query rows */
        for (int64_t i = 0; i < a.seq; i++)
            keys += (double)hbk_attn_keys(&a, i);
        *flops = (double)(a.b * a.heads) * keys * (4.0 * (double)a.d + 3.0);
        break;
    }
    default:
        break;
    }
}

int64_t hb_ref_row_step(const hb_case *c, double max_flops)
{
    if (!c || !(max_flops > 0.0))
        return 1;
    double flops;
    int64_t rows;
    ref_cost(c, &flops, &rows);
    if (flops <= max_flops || rows <= 1)
        return 1;
    double st = ceil(flops / max_flops);
    return st >= (double)rows ? rows : (int64_t)st;
}
