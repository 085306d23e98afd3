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
#ifndef HB_CHAIN_H
#define HB_CHAIN_H
#include "core/hybench.h"

/* FLOPs and minimal bytes (every weight and activation read once, each output written once) of the
 * chain with shape s (seq, kv_seq) at elem_size bytes per element. */
double hb_chain_flops(const hb_shape *s);
double hb_chain_bytes(const hb_shape *s, size_t elem_size);
#endif
