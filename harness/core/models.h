/*
 * models.h - the models a plan covers (`hybench plan`, analysis/plan.h), each a graph of ops in the
 * order an executor runs them, with its residual edges (models.c; docs/plans.md):
 *   tinyllama-decode      one TinyLlama-1.1B decoder layer, 1 token against a 512-position KV cache
 *   tinyllama-prefill512  the same layer over a 512-token prompt
 *                         (both: the chain of ops.c, hb_chain_steps / hb_chain_step_case, step by step)
 *   resnet50-block        one identity bottleneck block of ResNet-50 (res2b: 256 -> 64 -> 64 -> 256
 *                         channels at 56x56, batch 1), its input added back after the third conv
 *   resnet50-mb1          the whole ResNet-50 at batch 1: stem, 16 bottleneck blocks (the first of
 *   resnet50-mb64         each stage with its 1x1 projection shortcut), global average pool, fc 1000;
 *                         and at batch 64
 * A node's activation inputs name the node that produced them (or the model's input); weights (and
 * the KV cache of a decode layer's attention) are not edges: they live on the device of the node that
 * uses them, placed once before the timed steps (weight_bytes says how much).
 */
#ifndef HB_MODELS_H
#define HB_MODELS_H
#include <stddef.h>
#include "core/hybench.h"

#define HB_MODEL_INPUT (-1) /* an input edge from the model's input tensor */
#define HB_MODEL_NONE (-2)  /* no activation input in this slot */

typedef struct hb_model_node {
    hb_case c;                 /* op and shape (dtype f32): the measured case this step is costed by */
    int in[HB_MAX_INPUTS];     /* activation inputs: the producing node's index, HB_MODEL_INPUT or HB_MODEL_NONE;
                                  a node index is always below this node's (topological order) */
    int slot[HB_MAX_INPUTS];   /* what the case's input j reads (j < the op's ninputs): the edge in[slot[j]], or -1:
                                  a tensor kept on the node's device (a weight, a norm's gain, the KV cache). An edge
                                  that no slot reads still crosses to the node (decode attention's new k and v,
                                  appended to the cache it keeps); the replay (measure/replay.h) copies it */
    double out_bytes;          /* bytes of its output tensor (f32) */
    double weight_bytes;       /* bytes kept on its device (weights, the KV cache), never moved per step */
    char label[40];            /* "q_proj", "res3a.conv_a" */
} hb_model_node;

typedef struct hb_model {
    char name[48];
    const char *what;          /* one line: what the model is (static) */
    int cyclic;                /* 1: a repeated unit (a layer, a block): its output is the next unit's input,
                                  so it starts and ends on the same device; 0: a whole network, whose input
                                  comes from host memory and whose output returns there */
    double in_bytes;           /* bytes of the model's input tensor */
    int has_whole;             /* 1: `whole` is a case that measures the model end to end on one backend */
    hb_case whole;             /* the decoder layer's chain case (op chain, seq, kv_seq) */
    int n;                     /* nodes */
    hb_model_node *nodes;      /* owned: hb_model_free */
} hb_model;

/* The names hb_model_build knows, NULL-terminated. */
extern const char *const hb_model_names[];

/* Build model `name` into *m. Returns HB_OK, HB_EINVAL for an unknown name (err, size errlen, says so
 * and lists the known names) or HB_ENOMEM. */
hb_status hb_model_build(const char *name, hb_model *m, char *err, size_t errlen);
void hb_model_free(hb_model *m);

#endif
