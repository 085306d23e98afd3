/*
 * model.h - a llama-architecture GGUF file as the decoder-layer chain's cases (docs/quantized.md,
 * "Real model files"): `hybench run --model FILE.gguf [--layer N]`. model.c reads the file's metadata
 * (llama.embedding_length, llama.feed_forward_length, llama.attention.head_count and head_count_kv,
 * llama.block_count) and checks that layer N has the nine tensors of a llama layer with the shapes
 * those sizes give (ggml's names and order of dims: blk.N.attn_norm.weight [hidden], attn_q
 * [hidden, hidden], attn_k and attn_v [hidden, kv_heads * head_dim], attn_output [hidden, hidden],
 * ffn_norm [hidden], ffn_gate and ffn_up [hidden, inter], ffn_down [inter, hidden]; ne0 first, so
 * each projection is W[n, k] with k = ne0, as the quantized dtypes store it). measure/model_layer.c
 * loads the tensors themselves into the chain.
 */
#ifndef HB_WORKLOAD_MODEL_H
#define HB_WORKLOAD_MODEL_H
#include <stddef.h>
#include "core/hybench.h"
#include "workload/item.h"

/* What a layer of a llama GGUF file is made of. */
typedef struct hb_model_info {
    int layer, nlayers;
    int64_t hidden, inter, heads, kv_heads, head_dim;
    /* the chain's dtype: the projections' base format (attn_q's) when every projection is quantized in
     * a format hybench computes (q8_0, q4_k, q5_k, q6_k); f32 when every projection is f32, f16 or bf16
     * (widened exactly to f32, the chain's f32) */
    hb_dtype dtype;
    int wtype[HB_CT_COUNT]; /* per chain tensor (HB_CT_*): its dtype as the file stores it (a norm: f32, f16 or bf16); -1 for none */
} hb_model_info;

/* The GGUF name of chain input tensor t (HB_CT_G1 ... HB_CT_WD) of layer into buf (size len):
 * "blk.N.attn_q.weight"; NULL for a tensor no file holds (x, the KV cache, intermediates). */
const char *hb_model_tensor_name(int t, int layer, char *buf, size_t len);
/* The nine chain tensors (HB_CT_*) a llama layer holds, in the file's usual order. */
#define HB_MODEL_NTENSORS 9
extern const int hb_model_tensors[HB_MODEL_NTENSORS];

/* Read and check layer `layer` of the llama GGUF file at path into *mi. HB_OK; HB_EINVAL with err
 * (size errlen) "PATH: ..." (offset N where the reader gives one) for a file that is not GGUF, not
 * llama, lacks a size key or a tensor, has a tensor of another shape, or projections in a format
 * hybench does not compute (named) or mixing quantized and float ones; HB_EDEVICE when it cannot be
 * read. */
hb_status hb_model_inspect(const char *path, int layer, hb_model_info *mi, char *err, size_t errlen);

/* Push the chain items of layer `layer` of path onto items: decode (seq 1, kv_seq 512) and prefill
 * (seq 512), with the file's sizes (shape heads, kv_heads, head_dim, inter: printed only where they
 * differ from TinyLlama's), dtype mask the file's dtype, source "gguf:PATH:blk.N" (measure/chain.c
 * loads the weights of a case whose source says so), names "<file stem>.blk<N>.decode"/".prefill", the
 * decode one in the quick list. Errors as hb_model_inspect, and HB_ENOMEM. */
hb_status hb_model_items(const char *path, int layer, hb_item_list *items, char *err, size_t errlen);
#endif
