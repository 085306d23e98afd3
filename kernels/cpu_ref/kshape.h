/*
 * kshape.h - private to the CPU backends (cpu_ref, cpu): the shape parameters an op's kernel reads,
 * with defaults applied to fields left at 0 that cannot be 0 (batch, strides, dilations, groups 1;
 * kv_heads = heads, kv_seq = seq; w = h, kw = kh, sw = sh, dw = dh; paddings are taken as given) so that a shape that skipped hb_shape_normalize still
 * computes what hybench.h defines, and checked so that no kernel indexes out of bounds.
 * Layouts and the output-size formula are those of hybench.h.
 */
#ifndef HB_KSHAPE_H
#define HB_KSHAPE_H
#include <stdint.h>
#include "core/hybench.h"

/* conv2d and pooling. For pooling oc = c and g = c (each plane on its own). */
typedef struct hbk_conv {
    int64_t b, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, oh, ow;
    int64_t cg, ocg; /* input and output channels per group */
    int nhwc;        /* conv2d layout=nhwc: x [b,h,w,c], w [oc,kh,kw,c/g] (OHWI), y [b,oh,ow,oc]; 0: NCHW/OIHW */
} hbk_conv;

typedef struct hbk_attn {
    int64_t b, heads, kvh, seq, kvs, d, causal;
    int64_t rep;     /* heads / kv_heads: query heads per kv head */
    int64_t off;     /* kv_seq - seq: query i sees keys j <= i + off when causal */
    int bshd;        /* layout=bshd: q, o [b, seq, heads, d], k, v [b, kv_seq, kv_heads, d] (else [b, h, s, d]) */
} hbk_attn;

static inline int64_t hbk_def(int64_t v, int64_t dflt) { return v > 0 ? v : dflt; }

/* Output size of one spatial axis (hybench.h): (in + 2p - d(k-1) - 1) / s + 1; <= 0 if empty. */
static inline int64_t hbk_out_dim(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    int64_t num = in + 2 * p - d * (k - 1) - 1;
    return num < 0 ? 0 : num / s + 1;
}

/* Fill p from s for conv2d (pool = 0) or max/avg pooling (pool = 1). Returns 0, or -1 when the
 * shape cannot be computed (non-positive sizes, channels not divisible by groups, empty output). */
static inline int hbk_conv_params(const hb_shape *s, int pool, hbk_conv *p)
{
    p->b = hbk_def(s->batch, 1);
    p->c = s->c; p->h = s->h; p->w = hbk_def(s->w, s->h);
    p->kh = s->kh; p->kw = hbk_def(s->kw, s->kh);
    p->sh = hbk_def(s->sh, 1); p->sw = hbk_def(s->sw, p->sh);
    p->ph = s->ph; p->pw = s->pw; /* 0 is a valid padding: never defaulted */
    p->dh = hbk_def(s->dh, 1); p->dw = hbk_def(s->dw, p->dh);
    if (pool) {
        p->oc = p->c; p->g = p->c;
        p->nhwc = 0;
        if (s->layout != HB_LAYOUT_NCHW) return -1; /* pooling is NCHW only (hybench.h) */
    } else {
        p->oc = s->oc; p->g = hbk_def(s->g, 1);
        if (s->layout != HB_LAYOUT_NCHW && s->layout != HB_LAYOUT_NHWC) return -1;
        p->nhwc = s->layout == HB_LAYOUT_NHWC;
    }
    if (p->c <= 0 || p->h <= 0 || p->w <= 0 || p->kh <= 0 || p->kw <= 0 || p->oc <= 0 ||
        p->ph < 0 || p->pw < 0)
        return -1;
    if (p->c % p->g || p->oc % p->g)
        return -1;
    p->cg = p->c / p->g; p->ocg = p->oc / p->g;
    p->oh = hbk_out_dim(p->h, p->kh, p->sh, p->ph, p->dh);
    p->ow = hbk_out_dim(p->w, p->kw, p->sw, p->pw, p->dw);
    return (p->oh > 0 && p->ow > 0) ? 0 : -1;
}

static inline int hbk_attn_params(const hb_shape *s, hbk_attn *a)
{
    a->b = hbk_def(s->batch, 1);
    a->heads = s->heads; a->kvh = hbk_def(s->kv_heads, s->heads);
    a->seq = s->seq; a->kvs = hbk_def(s->kv_seq, s->seq);
    a->d = s->head_dim; a->causal = s->causal != 0;
    a->bshd = s->layout == HB_LAYOUT_BSHD;
    if (a->heads <= 0 || a->seq <= 0 || a->d <= 0 || a->heads % a->kvh)
        return -1;
    a->rep = a->heads / a->kvh;
    a->off = a->kvs - a->seq;
    return 0;
}

/* Element offset of query/output row i of head h in batch b, and of key/value row j of kv head g. */
static inline int64_t hbk_attn_qrow(const hbk_attn *a, int64_t b, int64_t h, int64_t i)
{
    return a->bshd ? ((b * a->seq + i) * a->heads + h) * a->d : ((b * a->heads + h) * a->seq + i) * a->d;
}
static inline int64_t hbk_attn_kvrow(const hbk_attn *a, int64_t b, int64_t g, int64_t j)
{
    return a->bshd ? ((b * a->kvs + j) * a->kvh + g) * a->d : ((b * a->kvh + g) * a->kvs + j) * a->d;
}

/* Keys visible to query row i: [0, hbk_attn_keys(a, i)). May be 0 (causal with kv_seq < seq):
 * such a row's output is defined as 0 by both CPU backends. */
static inline int64_t hbk_attn_keys(const hbk_attn *a, int64_t i)
{
    if (!a->causal)
        return a->kvs;
    int64_t lim = i + a->off + 1;
    return lim < 0 ? 0 : (lim > a->kvs ? a->kvs : lim);
}
#endif
