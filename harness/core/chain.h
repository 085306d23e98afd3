/*
 * chain.h - the transformer-block chain: one TinyLlama-1.1B decoder layer (hidden 2048, intermediate
 * 5632, 32 query heads, 4 key/value heads, head dim 64) run op by op on one backend:
 *   xn = rmsnorm(x, g1); q = xn Wq; k = xn Wk; v = xn Wv; a = attention(q, k|Kcache, v|Vcache, causal);
 *   h = x + a Wo; hn = rmsnorm(h, g2); y = h + (silu(hn Wg) * (hn Wu)) Wd
 * with T = seq tokens. kv_seq > seq (decode) reads a key/value cache of kv_seq positions, which is an
 * input of the chain; kv_seq == seq (prefill) uses the projected k and v. Buffers are reinterpreted
 * without transposes ([T, heads*64] is read as [1, heads, T, 64]): the cost is the real layer's, the
 * values are a fixed permutation of it, and the reference does the same.
 * Modes: convert = f64 host tensors converted at every op boundary (weights too: a library storing
 * f64 converts each operand per call); f32 = f32 host tensors, H2D/D2H at every op boundary;
 * resident = weights and KV cache live on the device (uploaded once, before timing); per call the
 * layer's input is uploaded once and its output downloaded once.
 */
/* Defined in ops.c (the chain is a row of the op table: its cost is its steps' sum). */
#ifndef HB_CHAIN_H
#define HB_CHAIN_H
#include <stddef.h>
#include "core/hybench.h"

/* Tensors of the layer; the first HB_CHAIN_NINPUTS are its inputs (weights, x, the KV cache). */
enum { HB_CT_X, HB_CT_G1, HB_CT_G2, HB_CT_WQ, HB_CT_WK, HB_CT_WV, HB_CT_WO, HB_CT_WG, HB_CT_WU, HB_CT_WD, HB_CT_KC, HB_CT_VC,
       HB_CT_XN, HB_CT_Q, HB_CT_K, HB_CT_V, HB_CT_A, HB_CT_O, HB_CT_H, HB_CT_HN, HB_CT_GT, HB_CT_UP, HB_CT_SG, HB_CT_M, HB_CT_D,
       HB_CT_Y, HB_CT_COUNT };
#define HB_CHAIN_NINPUTS (HB_CT_VC + 1)

/* The layer's steps in order: op, input tensors (-1: none), output tensor. */
typedef struct hb_chain_step { hb_op op; int in[3]; int out; } hb_chain_step;
#define HB_CHAIN_NSTEPS 14
extern const hb_chain_step hb_chain_steps[HB_CHAIN_NSTEPS];

/* Elements of tensor t (HB_CT_*) for chain shape s (0 for the KV cache in prefill). */
size_t hb_chain_tensor_elems(int t, const hb_shape *s);
/* The case of step i of chain case `chain`, and its real input tensors in[] (the attention step
 * reads the cache in decode). */
hb_case hb_chain_step_case(const hb_case *chain, int i, int in[3]);

/* FLOPs and minimal bytes (every weight and activation read once, each output written once) of the
 * chain with shape s (seq, kv_seq) at elem_size bytes per element. */
double hb_chain_flops(const hb_shape *s);
double hb_chain_bytes(const hb_shape *s, size_t elem_size);
#endif
