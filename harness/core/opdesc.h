/*
 * opdesc.h - the op descriptor's computed facts: the table built from HB_OP_LIST (core/hybench.h),
 * each shape kind's defaults, element counts per operand, units of work and reduction length.
 * Header-only (static inline), as core/launch.h is, because the plugins (hb_opencl.so, hb_cuda.so)
 * link no harness symbol: they are also dlopen'ed by test binaries that export none
 * (tests/test_opencl.c), so a function in ops.c would not resolve there. The harness (core/ops.c,
 * workload/workload.c) and the plugins include this one copy; nothing else restates a size.
 *
 * Shapes are those of hybench.h's header comment; every count is an element count (not bytes).
 * No function here allocates, keeps state (but the constant table) or reports errors other than by
 * its return value.
 */
#ifndef HB_OPDESC_H
#define HB_OPDESC_H
#include "core/hybench.h"
#include "core/launch.h"

/* The row of op, or NULL for a value outside the enum. The table is HB_OP_LIST, written once. */
static inline const hb_op_info *hb_op_row(hb_op op)
{
    static const hb_op_info rows[HB_OP_COUNT] = {
#define HB_X(e, n, f, ni, b, k, a, fl, su) {n, f, ni, b, k, a, fl, su},
        HB_OP_LIST(HB_X)
#undef HB_X
    };
    return (unsigned)op < HB_OP_COUNT ? &rows[op] : (const hb_op_info *)0;
}
/* Shape kind of op; HB_SK_COUNT for an unknown op. */
static inline hb_shape_kind hb_op_kind(hb_op op)
{
    const hb_op_info *r = hb_op_row(op);
    return r ? r->kind : HB_SK_COUNT;
}
/* 1 for the ops whose every tensor is [n] (HB_SK_EW): the elementwise kernel tables' ops. */
static inline int hb_op_is_ew(hb_op op) { return hb_op_kind(op) == HB_SK_EW; }

/* A chain's layer sizes (shape fields heads, kv_heads, head_dim, inter; 0: TinyLlama-1.1B's 32, 4, 64
 * and 5632), hidden = heads * head_dim (the llama layer: the attention's width is the model's). */
typedef struct hb_chain_dims { int64_t heads, kv_heads, head_dim, inter, hidden; } hb_chain_dims;
static inline hb_chain_dims hb_chain_dims_of(const hb_shape *s)
{
    hb_chain_dims d;
    d.heads = s->heads ? s->heads : 32;
    d.kv_heads = s->kv_heads ? s->kv_heads : 4;
    d.head_dim = s->head_dim ? s->head_dim : 64;
    d.inter = s->inter ? s->inter : 5632;
    d.hidden = d.heads * d.head_dim;
    return d;
}

/* Checked products: a negative factor gives -1, an overflow INT64_MAX (refused later as absurd). */
static inline int64_t hb_smul_(int64_t a, int64_t b)
{
    if (a < 0 || b < 0) return -1;
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
static inline int64_t hb_smul4_(int64_t a, int64_t b, int64_t c, int64_t d) { return hb_smul_(hb_smul_(hb_smul_(a, b), c), d); }

/* (in + 2*pad - dil*(k-1) - 1) / stride + 1 with every step checked; -1 on overflow, a non-positive
 * stride or k < 1; 0 when the dilated kernel exceeds the padded input. */
static inline int64_t hb_out_dim_(int64_t in, int64_t pad, int64_t dil, int64_t k, int64_t stride)
{
    int64_t p2, span, t;
    if (stride <= 0 || k < 1) return -1;
    if (__builtin_mul_overflow(pad, (int64_t)2, &p2) || __builtin_mul_overflow(dil, k - 1, &span) ||
        __builtin_add_overflow(in, p2, &t) || __builtin_sub_overflow(t, span, &t) || __builtin_sub_overflow(t, (int64_t)1, &t))
        return -1;
    if (t < 0) return 0;
    return t / stride + 1;
}

/* Fill the defaults of op's kind into the fields of s left at 0 (batch 1, w = h, kw = kh, strides and
 * dilations 1, groups 1, square padding for square kernels, kv_heads = heads, kv_seq = seq, a
 * collective's ranks = the launch's). Checks nothing: hb_shape_normalize (core/ops.c) checks and
 * explains; a plugin that must run an unnormalized shape calls this, then hb_op_elems. */
static inline void hb_shape_defaults(hb_op op, hb_shape *s)
{
#define HB_DEF_(f, v) do { if (s->f == 0) s->f = (v); } while (0)
    switch (hb_op_kind(op)) {
    case HB_SK_BMM: HB_DEF_(batch, 1); break;
    case HB_SK_CONV2D: case HB_SK_POOL:
        HB_DEF_(batch, 1); HB_DEF_(w, s->h); HB_DEF_(kw, s->kh);
        HB_DEF_(sh, 1); HB_DEF_(sw, s->sh); HB_DEF_(dh, 1); HB_DEF_(dw, s->dh); HB_DEF_(g, 1);
        if (s->pw == 0 && s->ph && s->kw == s->kh) s->pw = s->ph; /* square kernels pad square */
        if (hb_op_kind(op) == HB_SK_POOL) s->oc = 0;
        break;
    case HB_SK_ATTENTION: HB_DEF_(batch, 1); HB_DEF_(kv_heads, s->heads); HB_DEF_(kv_seq, s->seq); break;
    case HB_SK_CHAIN: HB_DEF_(kv_seq, s->seq); HB_DEF_(batch, 1); break;
    case HB_SK_COLL: case HB_SK_GATHER: case HB_SK_SCATTER: HB_DEF_(ranks, hb_launch_ranks()); break;
    default: break;
    }
#undef HB_DEF_
}

/* Elements of input i (0 .. ninputs-1) or, for i < 0, of the output of op on the (normalized, or
 * hb_shape_defaults'ed) shape s. Overflow saturates at INT64_MAX, a negative field gives -1; 0 for an
 * unknown op or an input the op does not have. */
static inline int64_t hb_op_elems(hb_op op, const hb_shape *s, int i)
{
    const int64_t ranks = s->ranks > 0 ? s->ranks : 1, g = s->g > 0 ? s->g : 1;
    const hb_op_info *r = hb_op_row(op);
    if (!r || i >= r->ninputs) return 0;
    switch (r->kind) {
    case HB_SK_EW: return s->n;
    case HB_SK_MATMUL: return i == 0 ? hb_smul_(s->m, s->k) : i == 1 ? hb_smul_(s->k, s->n) : hb_smul_(s->m, s->n);
    case HB_SK_BMM: {
        const int64_t b = s->batch > 0 ? s->batch : 1;
        return hb_smul_(b, i == 0 ? hb_smul_(s->m, s->k) : i == 1 ? hb_smul_(s->k, s->n) : hb_smul_(s->m, s->n));
    }
    case HB_SK_CONV2D: case HB_SK_POOL: {
        const int64_t ch = r->kind == HB_SK_CONV2D ? s->oc : s->c;
        if (i == 0) return hb_smul4_(s->batch, s->c, s->h, s->w);
        if (i == 1) return hb_smul4_(s->oc, s->c / g, s->kh, s->kw);
        return hb_smul4_(s->batch, ch, hb_out_dim_(s->h, s->ph, s->dh, s->kh, s->sh), hb_out_dim_(s->w, s->pw, s->dw, s->kw, s->sw));
    }
    case HB_SK_ROWS: return i < 0 ? s->rows : hb_smul_(s->rows, s->cols);
    case HB_SK_ALL: return i < 0 ? 1 : s->n;
    case HB_SK_NORM: return i == 1 ? s->cols : hb_smul_(s->rows, s->cols);
    case HB_SK_ATTENTION:
        return i <= 0 ? hb_smul4_(s->batch, s->heads, s->seq, s->head_dim) : hb_smul4_(s->batch, s->kv_heads, s->kv_seq, s->head_dim);
    case HB_SK_CHAIN: return i < 0 ? hb_smul_(s->seq, hb_chain_dims_of(s).hidden) : 0;
    case HB_SK_COLL: return s->n;
    case HB_SK_GATHER: return i < 0 ? hb_smul_(s->n, ranks) : s->n;
    case HB_SK_SCATTER: return i < 0 ? s->n : hb_smul_(s->n, ranks);
    default: return 0;
    }
}

/* 1 when s (after hb_shape_defaults) can be computed for op: every tensor has > 0 elements and the
 * divisibility rules hold (conv2d groups divide c and oc; kv_heads divides heads). 0 otherwise. The
 * plugins' size check; hb_shape_normalize says why a shape is refused. */
static inline int hb_shape_computable(hb_op op, const hb_shape *s)
{
    const hb_op_info *r = hb_op_row(op);
    if (!r || r->kind == HB_SK_CHAIN) return 0;
    if (r->kind == HB_SK_CONV2D && (s->g <= 0 || s->c % s->g || s->oc % s->g)) return 0;
    if (r->kind == HB_SK_ATTENTION && (s->kv_heads <= 0 || s->heads % s->kv_heads)) return 0;
    for (int i = -1; i < r->ninputs; i++)
        if (hb_op_elems(op, s, i) <= 0) return 0;
    return 1;
}

#endif
