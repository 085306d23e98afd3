/*
 * models.c - the model graphs of models.h: the TinyLlama decoder layer from the chain's own step table
 * (ops.c), and ResNet-50 from one table of its stages. Each node is the op and shape of a case that a
 * results file measures; its inputs are the nodes whose outputs it reads.
 */
#include "core/models.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hb_model_names[] = {"tinyllama-decode", "tinyllama-prefill512", "resnet50-block", "resnet50-mb1", "resnet50-mb64", NULL};

#define MAX_NODES 160

/* Append a node: op on shape s (normalized here), activation inputs a and b (HB_MODEL_NONE: none).
 * Returns its index, or -1 when the shape is refused or the model is full (a bug in the tables). */
static int add_node(hb_model *m, hb_op op, hb_shape s, int a, int b, double weight_bytes, const char *fmt, ...)
{
    char err[128];
    if (m->n >= MAX_NODES || hb_shape_normalize(op, &s, err, sizeof err) != HB_OK) return -1;
    hb_model_node *nd = &m->nodes[m->n];
    memset(nd, 0, sizeof *nd);
    nd->c.op = op;
    nd->c.shape = s;
    nd->c.dtype = HB_F32;
    nd->c.weight = 1;
    nd->in[0] = a;
    nd->in[1] = b;
    nd->in[2] = HB_MODEL_NONE;
    for (int j = 0; j < HB_MAX_INPUTS; j++) nd->slot[j] = j < 2 && nd->in[j] != HB_MODEL_NONE ? j : -1;
    nd->out_bytes = (double)hb_op_output_elems(op, &s) * 4.0;
    nd->weight_bytes = weight_bytes;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(nd->label, sizeof nd->label, fmt, ap);
    va_end(ap);
    return m->n++;
}

/* ---- TinyLlama: the chain's steps, each on its own device ---- */

static const char *const llama_labels[HB_CHAIN_NSTEPS] = {"rmsnorm1", "q_proj",  "k_proj", "v_proj", "attention", "o_proj", "residual1",
                                                          "rmsnorm2", "gate_proj", "up_proj", "silu", "mul", "down_proj", "residual2"};

static int build_llama(hb_model *m, int64_t seq, int64_t kv_seq)
{
    hb_case chain = {.op = HB_OP_CHAIN, .dtype = HB_F32};
    chain.shape.seq = seq;
    chain.shape.kv_seq = kv_seq;
    int producer[HB_CT_COUNT];
    for (int t = 0; t < HB_CT_COUNT; t++) producer[t] = HB_MODEL_NONE;
    producer[HB_CT_X] = HB_MODEL_INPUT;
    m->in_bytes = (double)hb_chain_tensor_elems(HB_CT_X, &chain.shape) * 4.0;
    m->has_whole = 1;
    m->whole = chain;
    for (int i = 0; i < HB_CHAIN_NSTEPS; i++) {
        const hb_chain_step *st = &hb_chain_steps[i];
        int in[3];
        hb_case c = hb_chain_step_case(&chain, i, in);
        /* Edges: the step table's activation inputs. In decode the step's case reads the KV cache
         * (in[] names HB_CT_KC/VC), which stays with the attention like a weight; the new token's k
         * and v (the step table's inputs) still cross to it, to be appended to that cache. */
        double wbytes = 0;
        int k = 0, edges[3] = {HB_MODEL_NONE, HB_MODEL_NONE, HB_MODEL_NONE}, slot[3] = {-1, -1, -1};
        for (int j = 0; j < 3; j++) {
            int t = st->in[j];
            if (t < 0) continue;
            if (t != HB_CT_X && t < HB_CHAIN_NINPUTS) wbytes += (double)hb_chain_tensor_elems(t, &chain.shape) * 4.0;
            else {
                if (in[j] == t) slot[j] = k; /* else the case reads the KV cache in this slot */
                edges[k++] = producer[t];
            }
            if (in[j] != t && in[j] >= 0) wbytes += (double)hb_chain_tensor_elems(in[j], &chain.shape) * 4.0;
        }
        if (m->n >= MAX_NODES) return -1;
        hb_model_node *nd = &m->nodes[m->n];
        memset(nd, 0, sizeof *nd);
        nd->c = c;
        nd->c.weight = 1;
        memcpy(nd->in, edges, sizeof edges);
        memcpy(nd->slot, slot, sizeof slot);
        nd->out_bytes = (double)hb_chain_tensor_elems(st->out, &chain.shape) * 4.0;
        nd->weight_bytes = wbytes;
        snprintf(nd->label, sizeof nd->label, "%s", llama_labels[i]);
        producer[st->out] = m->n++;
    }
    return 0;
}

/* ---- ResNet-50 (the Caffe layout of benchdnn's conv_shapes_resnet_50: the stride of a stage's first
 * block sits on its 1x1 conv_a and on the projection shortcut) ---- */

static int conv(hb_model *m, int x, int64_t batch, int64_t c, int64_t h, int64_t oc, int64_t k, int64_t stride, int64_t pad, const char *label)
{
    hb_shape s = {0};
    s.batch = batch; s.c = c; s.h = h; s.w = h; s.oc = oc; s.kh = k; s.kw = k; s.sh = stride; s.sw = stride; s.ph = pad; s.pw = pad;
    return add_node(m, HB_OP_CONV2D, s, x, HB_MODEL_NONE, (double)(oc * c * k * k) * 4.0, "%s", label);
}

static int eltwise(hb_model *m, hb_op op, int a, int b, int64_t n, const char *label)
{
    hb_shape s = {0};
    s.n = n;
    return add_node(m, op, s, a, b, 0, "%s", label);
}

/* One bottleneck block reading x (cin channels, h x h): conv_a 1x1 (stride) - relu - conv_b 3x3 -
 * relu - conv_c 1x1 to cout, plus the shortcut (x itself, or a 1x1 projection of x with the stride
 * when proj), added, then relu. Returns the block's output node, or -1. */
static int bottleneck(hb_model *m, int x, int64_t batch, int64_t cin, int64_t mid, int64_t cout, int64_t h, int64_t stride, int proj, const char *name)
{
    char l[40];
    int64_t ho = h / stride;
    int skip = x;
    if (proj) {
        snprintf(l, sizeof l, "%s.proj", name);
        if ((skip = conv(m, x, batch, cin, h, cout, 1, stride, 0, l)) < 0) return -1;
    }
    snprintf(l, sizeof l, "%s.conv_a", name);
    int a = conv(m, x, batch, cin, h, mid, 1, stride, 0, l);
    snprintf(l, sizeof l, "%s.relu_a", name);
    int ra = a < 0 ? -1 : eltwise(m, HB_OP_RELU, a, HB_MODEL_NONE, batch * mid * ho * ho, l);
    snprintf(l, sizeof l, "%s.conv_b", name);
    int b = ra < 0 ? -1 : conv(m, ra, batch, mid, ho, mid, 3, 1, 1, l);
    snprintf(l, sizeof l, "%s.relu_b", name);
    int rb = b < 0 ? -1 : eltwise(m, HB_OP_RELU, b, HB_MODEL_NONE, batch * mid * ho * ho, l);
    snprintf(l, sizeof l, "%s.conv_c", name);
    int c = rb < 0 ? -1 : conv(m, rb, batch, mid, ho, cout, 1, 1, 0, l);
    snprintf(l, sizeof l, "%s.add", name);
    int s = c < 0 ? -1 : eltwise(m, HB_OP_ADD, c, skip, batch * cout * ho * ho, l);
    snprintf(l, sizeof l, "%s.relu", name);
    return s < 0 ? -1 : eltwise(m, HB_OP_RELU, s, HB_MODEL_NONE, batch * cout * ho * ho, l);
}

/* The stages: blocks, bottleneck width, output channels, input size, stride of the first block. */
static const struct { const char *name; int blocks; int64_t mid, cout, h, stride; } resnet_stages[] = {
    {"res2", 3, 64, 256, 56, 1}, {"res3", 4, 128, 512, 56, 2}, {"res4", 6, 256, 1024, 28, 2}, {"res5", 3, 512, 2048, 14, 2}};

static int build_resnet(hb_model *m, int64_t batch)
{
    m->in_bytes = (double)(batch * 3 * 224 * 224) * 4.0;
    int x = conv(m, HB_MODEL_INPUT, batch, 3, 224, 64, 7, 2, 3, "conv1");
    x = x < 0 ? -1 : eltwise(m, HB_OP_RELU, x, HB_MODEL_NONE, batch * 64 * 112 * 112, "conv1.relu");
    if (x < 0) return -1;
    hb_shape p = {0};
    p.batch = batch; p.c = 64; p.h = 112; p.w = 112; p.kh = 3; p.kw = 3; p.sh = 2; p.sw = 2; p.ph = 1; p.pw = 1;
    if ((x = add_node(m, HB_OP_MAXPOOL, p, x, HB_MODEL_NONE, 0, "pool1")) < 0) return -1;
    int64_t cin = 64;
    for (size_t s = 0; s < sizeof resnet_stages / sizeof resnet_stages[0]; s++) {
        int64_t h = resnet_stages[s].h;
        for (int b = 0; b < resnet_stages[s].blocks; b++) {
            char name[16];
            snprintf(name, sizeof name, "%s%c", resnet_stages[s].name, 'a' + b);
            int64_t stride = b ? 1 : resnet_stages[s].stride;
            if ((x = bottleneck(m, x, batch, cin, resnet_stages[s].mid, resnet_stages[s].cout, h, stride, b == 0, name)) < 0) return -1;
            h /= stride;
            cin = resnet_stages[s].cout;
        }
    }
    hb_shape a = {0};
    a.batch = batch; a.c = 2048; a.h = 7; a.w = 7; a.kh = 7; a.kw = 7; a.sh = 1; a.sw = 1;
    if ((x = add_node(m, HB_OP_AVGPOOL, a, x, HB_MODEL_NONE, 0, "pool5")) < 0) return -1;
    hb_shape f = {0};
    f.m = batch; f.k = 2048; f.n = 1000;
    return add_node(m, HB_OP_MATMUL, f, x, HB_MODEL_NONE, 2048.0 * 1000 * 4, "fc1000") < 0 ? -1 : 0;
}

hb_status hb_model_build(const char *name, hb_model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    int which = -1;
    for (int i = 0; hb_model_names[i]; i++)
        if (name && !strcmp(name, hb_model_names[i])) which = i;
    if (which < 0) {
        size_t o = (size_t)snprintf(err, errlen, "unknown model '%s' (known:", name ? name : "");
        for (int i = 0; hb_model_names[i] && o < errlen; i++) o += (size_t)snprintf(err + o, errlen - o, " %s", hb_model_names[i]);
        if (o < errlen) snprintf(err + o, errlen - o, ")");
        return HB_EINVAL;
    }
    if (!(m->nodes = calloc(MAX_NODES, sizeof *m->nodes))) return HB_ENOMEM;
    snprintf(m->name, sizeof m->name, "%s", name);
    int rc;
    switch (which) {
    case 0:
        m->what = "one TinyLlama-1.1B decoder layer, decode: 1 token against a 512-position KV cache";
        m->cyclic = 1;
        rc = build_llama(m, 1, 512);
        break;
    case 1:
        m->what = "one TinyLlama-1.1B decoder layer, prefill: 512 tokens";
        m->cyclic = 1;
        rc = build_llama(m, 512, 512);
        break;
    case 2:
        m->what = "one ResNet-50 identity bottleneck block (res2b: 256 -> 64 -> 64 -> 256 channels, 56x56), batch 1";
        m->cyclic = 1;
        m->in_bytes = 256.0 * 56 * 56 * 4;
        rc = bottleneck(m, HB_MODEL_INPUT, 1, 256, 64, 256, 56, 1, 0, "res2b") < 0 ? -1 : 0;
        break;
    case 3:
        m->what = "ResNet-50, batch 1: stem, 16 bottleneck blocks, average pool, fc 1000";
        rc = build_resnet(m, 1);
        break;
    default:
        m->what = "ResNet-50, batch 64: stem, 16 bottleneck blocks, average pool, fc 1000";
        rc = build_resnet(m, 64);
        break;
    }
    if (rc < 0) {
        snprintf(err, errlen, "model %s: a node's shape was refused (a bug in models.c)", name);
        hb_model_free(m);
        return HB_EINVAL;
    }
    return HB_OK;
}

void hb_model_free(hb_model *m)
{
    free(m->nodes);
    m->nodes = NULL;
    m->n = 0;
}
