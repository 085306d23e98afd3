/* chain.c - the decoder-layer chain as data (core/chain.h): its tensors, its steps, their cases, and the
 * FLOPs and bytes of the whole layer. measure/chain.c runs it. */
#include "core/chain.h"
#include <string.h>

enum { HID = 2048, INTER = 5632, HEADS = 32, KVH = 4, HD = 64, KVD = KVH * HD };

const hb_chain_step hb_chain_steps[HB_CHAIN_NSTEPS] = {
    {HB_OP_RMSNORM, {HB_CT_X, HB_CT_G1, -1}, HB_CT_XN},  {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WQ, -1}, HB_CT_Q},
    {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WK, -1}, HB_CT_K},   {HB_OP_MATMUL, {HB_CT_XN, HB_CT_WV, -1}, HB_CT_V},
    {HB_OP_ATTENTION, {HB_CT_Q, HB_CT_K, HB_CT_V}, HB_CT_A}, {HB_OP_MATMUL, {HB_CT_A, HB_CT_WO, -1}, HB_CT_O},
    {HB_OP_ADD, {HB_CT_X, HB_CT_O, -1}, HB_CT_H},        {HB_OP_RMSNORM, {HB_CT_H, HB_CT_G2, -1}, HB_CT_HN},
    {HB_OP_MATMUL, {HB_CT_HN, HB_CT_WG, -1}, HB_CT_GT},  {HB_OP_MATMUL, {HB_CT_HN, HB_CT_WU, -1}, HB_CT_UP},
    {HB_OP_SILU, {HB_CT_GT, -1, -1}, HB_CT_SG},      {HB_OP_MUL, {HB_CT_SG, HB_CT_UP, -1}, HB_CT_M},
    {HB_OP_MATMUL, {HB_CT_M, HB_CT_WD, -1}, HB_CT_D},    {HB_OP_ADD, {HB_CT_H, HB_CT_D, -1}, HB_CT_Y},
};

static int decode(const hb_shape *s) { return s->kv_seq > s->seq; }

size_t hb_chain_tensor_elems(int t, const hb_shape *s)
{
    size_t T = (size_t)s->seq, KV = (size_t)s->kv_seq;
    switch (t) {
    case HB_CT_X: case HB_CT_XN: case HB_CT_Q: case HB_CT_A: case HB_CT_O: case HB_CT_H: case HB_CT_HN: case HB_CT_D: case HB_CT_Y: return T * HID;
    case HB_CT_G1: case HB_CT_G2: return HID;
    case HB_CT_WQ: case HB_CT_WO: return (size_t)HID * HID;
    case HB_CT_WK: case HB_CT_WV: return (size_t)HID * KVD;
    case HB_CT_WG: case HB_CT_WU: return (size_t)HID * INTER;
    case HB_CT_WD: return (size_t)INTER * HID;
    case HB_CT_KC: case HB_CT_VC: return decode(s) ? KV * KVD : 0;
    case HB_CT_K: case HB_CT_V: return T * KVD;
    case HB_CT_GT: case HB_CT_UP: case HB_CT_SG: case HB_CT_M: return T * INTER;
    default: return 0;
    }
}

hb_case hb_chain_step_case(const hb_case *chain, int i, int in[3])
{
    const hb_chain_step *st = &hb_chain_steps[i];
    hb_case c = *chain;
    memset(&c.shape, 0, sizeof c.shape);
    c.op = st->op;
    int64_t T = chain->shape.seq;
    memcpy(in, st->in, sizeof st->in);
    switch (st->op) {
    case HB_OP_RMSNORM: c.shape.rows = T; c.shape.cols = HID; break;
    case HB_OP_ADD: c.shape.n = T * HID; break;
    case HB_OP_SILU: case HB_OP_MUL: c.shape.n = T * INTER; break;
    case HB_OP_MATMUL:
        c.shape.m = T;
        c.shape.k = st->out == HB_CT_D ? INTER : HID;
        c.shape.n = (st->out == HB_CT_K || st->out == HB_CT_V) ? KVD : (st->out == HB_CT_GT || st->out == HB_CT_UP) ? INTER : HID;
        break;
    case HB_OP_ATTENTION:
        c.shape.batch = 1; c.shape.heads = HEADS; c.shape.kv_heads = KVH; c.shape.seq = T;
        c.shape.kv_seq = chain->shape.kv_seq; c.shape.head_dim = HD; c.shape.causal = 1;
        if (decode(&chain->shape)) { in[1] = HB_CT_KC; in[2] = HB_CT_VC; }
        break;
    default: break;
    }
    char err[128];
    hb_shape_normalize(c.op, &c.shape, err, sizeof err);
    return c;
}

double hb_chain_flops(const hb_shape *s)
{
    hb_case ch = {.op = HB_OP_CHAIN, .shape = *s};
    double f = 0;
    int in[3];
    for (int i = 0; i < HB_CHAIN_NSTEPS; i++) {
        hb_case c = hb_chain_step_case(&ch, i, in);
        f += hb_op_flops(c.op, &c.shape);
    }
    return f;
}

double hb_chain_bytes(const hb_shape *s, size_t elem_size)
{
    hb_case ch = {.op = HB_OP_CHAIN, .shape = *s};
    double b = 0;
    int in[3];
    for (int i = 0; i < HB_CHAIN_NSTEPS; i++) {
        hb_case c = hb_chain_step_case(&ch, i, in);
        b += hb_op_bytes(c.op, &c.shape, elem_size);
    }
    return b;
}

