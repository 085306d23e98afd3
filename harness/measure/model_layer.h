/*
 * model_layer.h - the weights of a llama layer read from a GGUF file into the decoder-layer chain
 * (measure/chain.c): a chain case whose source is "gguf:PATH:blk.N" (workload/model.h, `hybench run
 * --model`) runs layer N of PATH's real weights; x and the KV cache stay random, as in the synthetic layer.
 */
#ifndef HB_MEASURE_MODEL_LAYER_H
#define HB_MEASURE_MODEL_LAYER_H
#include <stddef.h>
#include "core/hybench.h"
#include "workload/model.h"

/* 1 when chain case c comes from a model file: its source "gguf:PATH:blk.N" split into path (size plen)
 * and *layer; 0 otherwise (the synthetic layer). */
int hb_model_case(const hb_case *c, char *path, size_t plen, int *layer);

/* The file's layer facts for chain case c (hb_model_inspect, kept for the last file and layer read by
 * this process); NULL when c is no model case or the file cannot be read (err, size errlen, says why). */
const hb_model_info *hb_model_case_info(const hb_case *c, char *err, size_t errlen);

/* Read the nine tensors of c's layer into the chain's f64 tensors t[] (allocated by the caller,
 * hb_chain_tensor_elems(t, &c->shape) doubles each; ranks absent): a quantized projection is kept as
 * its blocks in *q[t] (malloc'd here, the caller frees) and dequantized into t[t] in its W[n,k] layout;
 * a float projection (f32, f16, bf16) is widened into t[t] transposed to the chain's dense B[k,n]
 * layout; a norm weight is widened. HB_OK; HB_EINVAL or HB_EDEVICE with err (size errlen) naming the
 * file and tensor; HB_ENOMEM. */
hb_status hb_model_layer_load(const hb_case *c, double *t[HB_CT_COUNT], unsigned char *q[HB_CT_COUNT], char *err, size_t errlen);
#endif
