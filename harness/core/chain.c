/*
 * chain.c - the decoder-layer chain (core/hybench.h, the HB_OP_CHAIN row): its tensors, its steps and
 * their shapes, and the tensor-parallel split of the layer over ranks. Its cost, the sum of its steps',
 * is the op table's (ops.c: hb_chain_flops, hb_chain_bytes); this file calls nothing of ops.c.
 *
 * The tensor-parallel layer is Megatron-LM's (Shoeybi et al. 2019, "Megatron-LM", sec. 3, fig. 3):
 * the q, k, v projections and the gate/up projections split by columns (rank r holds query heads
 * [r*32/R, (r+1)*32/R) and key/value heads [r*4/R, (r+1)*4/R), and intermediate columns
 * [r*5632/R, (r+1)*5632/R)), the out- and down-projections by rows, one all_reduce after each of
 * them; the norms and residual adds are replicated. With the real head layout (attention layout
 * bshd: q [T, heads, 64], k and v [T, kv_heads, 64]) a column block of the projections is exactly a
 * block of heads, so each rank's attention is the layer's attention restricted to its heads.
 */
#include "core/hybench.h"
#include "core/opdesc.h"
#include "core/quant.h"
#include <stdio.h>
#include <string.h>

/* The layer's sizes (hb_chain_dims_of: the shape's, TinyLlama's by default). */
#define DIMS(s)                                                                                        \
    const hb_chain_dims d_ = hb_chain_dims_of(s);                                                      \
    const int64_t HID = d_.hidden, INTER = d_.inter, HEADS = d_.heads, KVH = d_.kv_heads, HD = d_.head_dim, \
                  KVD = KVH * HD;                                                                      \
    (void)HEADS; (void)KVH; (void)HD; (void)KVD; (void)INTER

const hb_chain_step hb_chain_steps[HB_CHAIN_NSTEPS] = {
    {HB_OP_RMSNORM, {HB_CT_X, HB_CT_G1, -1}, HB_CT_XN},  {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WQ, -1}, HB_CT_Q},
    {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WK, -1}, HB_CT_K},   {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WV, -1}, HB_CT_V},
    {HB_OP_ATTENTION, {HB_CT_Q, HB_CT_K, HB_CT_V}, HB_CT_A}, {HB_OP_MATMUL, {HB_CT_A, HB_CT_WO, -1}, HB_CT_O},
    {HB_OP_ADD, {HB_CT_X, HB_CT_O, -1}, HB_CT_H},        {HB_OP_RMSNORM, {HB_CT_H, HB_CT_G2, -1}, HB_CT_HN},
    {HB_OP_MATMUL, {HB_CT_HN, HB_CT_WG, -1}, HB_CT_GT},  {HB_OP_MATMUL, {HB_CT_HN, HB_CT_WU, -1}, HB_CT_UP},
    {HB_OP_SILU, {HB_CT_GT, -1, -1}, HB_CT_SG},      {HB_OP_MUL, {HB_CT_SG, HB_CT_UP, -1}, HB_CT_M},
    {HB_OP_MATMUL, {HB_CT_M, HB_CT_WD, -1}, HB_CT_D},    {HB_OP_ADD, {HB_CT_H, HB_CT_D, -1}, HB_CT_Y},
};

/* Over several ranks: the partial out- and down-projections summed by an all_reduce each. */
static const hb_chain_step tp_steps[HB_CHAIN_MAXSTEPS] = {
    {HB_OP_RMSNORM, {HB_CT_X, HB_CT_G1, -1}, HB_CT_XN},  {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WQ, -1}, HB_CT_Q},
    {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WK, -1}, HB_CT_K},   {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WV, -1}, HB_CT_V},
    {HB_OP_ATTENTION, {HB_CT_Q, HB_CT_K, HB_CT_V}, HB_CT_A}, {HB_OP_MATMUL, {HB_CT_A, HB_CT_WO, -1}, HB_CT_O},
    {HB_OP_ALL_REDUCE, {HB_CT_O, -1, -1}, HB_CT_OR},
    {HB_OP_ADD, {HB_CT_X, HB_CT_OR, -1}, HB_CT_H},       {HB_OP_RMSNORM, {HB_CT_H, HB_CT_G2, -1}, HB_CT_HN},
    {HB_OP_MATMUL, {HB_CT_HN, HB_CT_WG, -1}, HB_CT_GT},  {HB_OP_MATMUL, {HB_CT_HN, HB_CT_WU, -1}, HB_CT_UP},
    {HB_OP_SILU, {HB_CT_GT, -1, -1}, HB_CT_SG},      {HB_OP_MUL, {HB_CT_SG, HB_CT_UP, -1}, HB_CT_M},
    {HB_OP_MATMUL, {HB_CT_M, HB_CT_WD, -1}, HB_CT_D},
    {HB_OP_ALL_REDUCE, {HB_CT_D, -1, -1}, HB_CT_DR},
    {HB_OP_ADD, {HB_CT_H, HB_CT_DR, -1}, HB_CT_Y},
};

static int decode(const hb_shape *s) { return s->kv_seq > s->seq; }
static size_t nranks(const hb_shape *s) { return s->ranks > 0 ? (size_t)s->ranks : 1; }

int hb_chain_nsteps(const hb_shape *s) { return s->ranks > 1 ? HB_CHAIN_MAXSTEPS : HB_CHAIN_NSTEPS; }

const hb_chain_step *hb_chain_step_at(const hb_shape *s, int i)
{
    if (i < 0 || i >= hb_chain_nsteps(s)) return NULL;
    return s->ranks > 1 ? &tp_steps[i] : &hb_chain_steps[i];
}

size_t hb_chain_tensor_elems(int t, const hb_shape *s)
{
    DIMS(s);
    size_t T = (size_t)s->seq, KV = (size_t)s->kv_seq, R = nranks(s);
    switch (t) {
    case HB_CT_X: case HB_CT_XN: case HB_CT_O: case HB_CT_H: case HB_CT_HN: case HB_CT_D: case HB_CT_Y: return T * HID;
    case HB_CT_OR: case HB_CT_DR: return s->ranks > 1 ? T * HID : 0;
    case HB_CT_Q: case HB_CT_A: return T * HID / R;
    case HB_CT_G1: case HB_CT_G2: return HID;
    case HB_CT_WQ: case HB_CT_WO: return (size_t)HID * HID / R;
    case HB_CT_WK: case HB_CT_WV: return (size_t)HID * KVD / R;
    case HB_CT_WG: case HB_CT_WU: return (size_t)HID * INTER / R;
    case HB_CT_WD: return (size_t)INTER * HID / R;
    case HB_CT_KC: case HB_CT_VC: return decode(s) ? KV * KVD / R : 0;
    case HB_CT_K: case HB_CT_V: return T * KVD / R;
    case HB_CT_GT: case HB_CT_UP: case HB_CT_SG: case HB_CT_M: return T * INTER / R;
    default: return 0;
    }
}

int hb_chain_shard(int t, const hb_shape *s, hb_chain_block *b)
{
    DIMS(s);
    int64_t T = s->seq, KV = s->kv_seq, R = (int64_t)nranks(s), r = s->ranks > 0 ? s->rank : 0;
    int64_t rows = 0, cols = 0;
    int bycols = 0, byrows = 0;
    switch (t) {
    case HB_CT_X: rows = T; cols = HID; break;
    case HB_CT_G1: case HB_CT_G2: rows = 1; cols = HID; break;
    case HB_CT_WQ: rows = HID; cols = HID; bycols = 1; break;
    case HB_CT_WK: case HB_CT_WV: rows = HID; cols = KVD; bycols = 1; break;
    case HB_CT_WO: rows = HID; cols = HID; byrows = 1; break;
    case HB_CT_WG: case HB_CT_WU: rows = HID; cols = INTER; bycols = 1; break;
    case HB_CT_WD: rows = INTER; cols = HID; byrows = 1; break;
    case HB_CT_KC: case HB_CT_VC:
        if (!decode(s)) return -1;
        rows = KV; cols = KVD; bycols = 1; /* bshd: [kv_seq, kv_heads * 64], a column block is a block of heads */
        break;
    default: return -1;
    }
    b->full_rows = rows; b->full_cols = cols;
    b->r0 = byrows ? r * (rows / R) : 0; b->rows = byrows ? rows / R : rows;
    b->c0 = bycols ? r * (cols / R) : 0; b->cols = bycols ? cols / R : cols;
    return 0;
}

int hb_chain_qshard(int t, const hb_shape *s, hb_dtype wd, const void *whole, void *dst, char *why, size_t whylen)
{
    hb_chain_block b;
    const int be = hb_quant_block_elems(wd);
    if (t < HB_CT_WQ || t > HB_CT_WD || be <= 0 || hb_chain_shard(t, s, &b) != 0) {
        snprintf(why, whylen, "tensor %d: no quantized shard", t);
        return -1;
    }
    if (b.r0 % be || b.rows % be) {
        snprintf(why, whylen, "over %lld ranks a rank's share of k (%lld of %lld) in tensor %d is no whole number of its format's blocks (%d)",
                 (long long)s->ranks, (long long)b.rows, (long long)b.full_rows, t, be);
        return -1;
    }
    if (!whole || !dst) return 0;
    const size_t full = hb_quant_bytes(wd, b.full_rows), part = hb_quant_bytes(wd, b.rows), off = hb_quant_bytes(wd, b.r0);
    for (int64_t j = 0; j < b.cols; j++) /* W's rows n = c0 .. c0 + cols */
        memcpy((unsigned char *)dst + (size_t)j * part, (const unsigned char *)whole + (size_t)(b.c0 + j) * full + off, part);
    return 0;
}

/* llama.cpp's mixes (src/llama-quant.cpp, llama_tensor_get_type): Q4_K_M and Q5_K_M store attn_v and
 * ffn_down in Q6_K in the layers its use_more_bits(i, n) picks (the first eighth, the last eighth and
 * every third between: layer 0 among them), the other projections in the base format; the chain is
 * such a layer. Q8_0 and Q6_K files hold every projection in their one format. */
hb_dtype hb_chain_weight_dtype(int t, hb_dtype d)
{
    if (!hb_dtype_is_quant(d)) return d;
    if (t < HB_CT_WQ || t > HB_CT_WD) return HB_F32;
    if ((d == HB_Q4_K || d == HB_Q5_K) && (t == HB_CT_WV || t == HB_CT_WD)) return HB_Q6_K;
    return d;
}

size_t hb_chain_tensor_bytes(int t, const hb_shape *s, hb_dtype wd)
{
    const size_t n = hb_chain_tensor_elems(t, s);
    return hb_dtype_is_quant(wd) ? hb_quant_bytes(wd, (int64_t)n) : n * hb_dtype_size(wd);
}

double hb_chain_weight_bytes(const hb_shape *s, hb_dtype d)
{
    double b = 0;
    for (int t = HB_CT_WQ; t <= HB_CT_WD; t++) b += (double)hb_chain_tensor_bytes(t, s, hb_chain_weight_dtype(t, d));
    return b;
}

hb_case hb_chain_step_case(const hb_case *chain, int i, int in[3])
{
    const hb_shape *cs = &chain->shape;
    const hb_chain_step *st = hb_chain_step_at(cs, i);
    hb_case c = *chain;
    memset(&c.shape, 0, sizeof c.shape);
    if (!st) { in[0] = in[1] = in[2] = -1; return c; }
    DIMS(cs);
    c.op = st->op;
    const int64_t T = cs->seq, R = (int64_t)nranks(cs);
    memcpy(in, st->in, sizeof st->in);
    switch (st->op) {
    case HB_OP_RMSNORM: c.shape.rows = T; c.shape.cols = HID; break;
    case HB_OP_ADD: c.shape.n = T * HID; break;
    case HB_OP_SILU: case HB_OP_MUL: c.shape.n = T * INTER / R; break;
    case HB_OP_MATMUL:
        c.shape.m = T;
        switch (st->out) {
        case HB_CT_Q: c.shape.k = HID; c.shape.n = HID / R; break;
        case HB_CT_K: case HB_CT_V: c.shape.k = HID; c.shape.n = KVD / R; break;
        case HB_CT_O: c.shape.k = HID / R; c.shape.n = HID; break;
        case HB_CT_GT: case HB_CT_UP: c.shape.k = HID; c.shape.n = INTER / R; break;
        default: c.shape.k = INTER / R; c.shape.n = HID; break; /* HB_CT_D */
        }
        break;
    case HB_OP_ATTENTION:
        c.shape.batch = 1; c.shape.heads = HEADS / R; c.shape.kv_heads = KVH / R; c.shape.seq = T;
        c.shape.kv_seq = cs->kv_seq; c.shape.head_dim = HD; c.shape.causal = 1;
        if (cs->ranks > 0) c.shape.layout = HB_LAYOUT_BSHD;
        if (decode(cs)) { in[1] = HB_CT_KC; in[2] = HB_CT_VC; }
        break;
    case HB_OP_ALL_REDUCE:
        c.shape.n = T * HID; c.shape.ranks = R; c.shape.rank = cs->rank; c.shape.in_chain = 1;
        break;
    default: break;
    }
    /* a quantized layer: each projection in its weight's format, every other step in f32 */
    if (hb_dtype_is_quant(chain->dtype)) c.dtype = st->op == HB_OP_MATMUL ? hb_chain_weight_dtype(in[1], chain->dtype) : HB_F32;
    /* every field a step's op reads is set above (no default left for hb_shape_normalize to fill; it is not
     * called: it would take an all_reduce's ranks and rank from this process's launch) */
    return c;
}
