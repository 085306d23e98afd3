/*
 * model.c - a llama layer of a GGUF file as chain cases (model.h): its sizes from the metadata, its
 * nine tensors checked by name, type and shape.
 */
#include "workload/model.h"
#include <stdio.h>
#include <string.h>
#include "core/opdesc.h"
#include "workload/gguf.h"

const char *hb_model_tensor_name(int t, int layer, char *buf, size_t len)
{
    const char *n = NULL;
    switch (t) {
    case HB_CT_G1: n = "attn_norm"; break;
    case HB_CT_WQ: n = "attn_q"; break;
    case HB_CT_WK: n = "attn_k"; break;
    case HB_CT_WV: n = "attn_v"; break;
    case HB_CT_WO: n = "attn_output"; break;
    case HB_CT_G2: n = "ffn_norm"; break;
    case HB_CT_WG: n = "ffn_gate"; break;
    case HB_CT_WU: n = "ffn_up"; break;
    case HB_CT_WD: n = "ffn_down"; break;
    default: return NULL;
    }
    snprintf(buf, len, "blk.%d.%s.weight", layer, n);
    return buf;
}

const int hb_model_tensors[HB_MODEL_NTENSORS] = {HB_CT_G1, HB_CT_WQ, HB_CT_WK, HB_CT_WV, HB_CT_WO,
                                                  HB_CT_G2, HB_CT_WG, HB_CT_WU, HB_CT_WD};

static hb_status u64_key(const hb_gguf *g, const char *key, int64_t *out, char *err, size_t errlen)
{
    uint64_t v = 0;
    hb_status st = hb_gguf_get_u64(g, key, &v, err, errlen);
    if (st != HB_OK) return st;
    if (v == 0 || v > (1u << 20)) {
        snprintf(err, errlen, "%s: %s = %llu is no layer size hybench runs (1 .. 2^20)", hb_gguf_path(g), key, (unsigned long long)v);
        return HB_EINVAL;
    }
    *out = (int64_t)v;
    return HB_OK;
}

hb_status hb_model_inspect(const char *path, int layer, hb_model_info *mi, char *err, size_t errlen)
{
    hb_gguf *g = NULL;
    memset(mi, 0, sizeof *mi);
    for (int t = 0; t < HB_CT_COUNT; t++) mi->wtype[t] = -1;
    hb_status st = hb_gguf_open(path, &g, err, errlen);
    if (st != HB_OK) return st;
    const char *arch = NULL;
    size_t alen = 0;
    int64_t nl = 0;
    st = hb_gguf_get_str(g, "general.architecture", &arch, &alen, err, errlen);
    if (st == HB_OK && !(alen == 5 && !memcmp(arch, "llama", 5))) {
        snprintf(err, errlen, "%s: general.architecture is \"%.*s\": the chain is a llama layer (architecture llama)", path,
                 (int)(alen > 40 ? 40 : alen), arch);
        st = HB_EINVAL;
    }
    if (st == HB_OK) st = u64_key(g, "llama.embedding_length", &mi->hidden, err, errlen);
    if (st == HB_OK) st = u64_key(g, "llama.feed_forward_length", &mi->inter, err, errlen);
    if (st == HB_OK) st = u64_key(g, "llama.attention.head_count", &mi->heads, err, errlen);
    if (st == HB_OK) st = u64_key(g, "llama.attention.head_count_kv", &mi->kv_heads, err, errlen);
    if (st == HB_OK) st = u64_key(g, "llama.block_count", &nl, err, errlen);
    if (st == HB_OK && (mi->hidden % mi->heads || mi->heads % mi->kv_heads)) {
        snprintf(err, errlen, "%s: embedding_length %lld, head_count %lld, head_count_kv %lld: heads must divide the width and "
                 "kv heads the heads", path, (long long)mi->hidden, (long long)mi->heads, (long long)mi->kv_heads);
        st = HB_EINVAL;
    }
    if (st == HB_OK && (layer < 0 || layer >= nl)) {
        snprintf(err, errlen, "%s: --layer %d: the file has layers 0 .. %lld", path, layer, (long long)nl - 1);
        st = HB_EINVAL;
    }
    if (st != HB_OK) { hb_gguf_close(g); return st; }
    mi->layer = layer;
    mi->nlayers = (int)nl;
    mi->head_dim = mi->hidden / mi->heads;
    const int64_t H = mi->hidden, KV = mi->kv_heads * mi->head_dim, I = mi->inter;
    int nquant = 0, nfloat = 0;
    for (int i = 0; i < HB_MODEL_NTENSORS && st == HB_OK; i++) {
        const int t = hb_model_tensors[i];
        char name[80];
        const hb_gguf_tensor *x = NULL;
        hb_model_tensor_name(t, layer, name, sizeof name);
        st = hb_gguf_get_tensor(g, name, -1, &x, err, errlen);
        if (st == HB_ESKIP) st = HB_EINVAL; /* a format hybench does not compute: the file cannot run */
        if (st != HB_OK) break;
        const int norm = t == HB_CT_G1 || t == HB_CT_G2;
        int64_t ne0 = H, ne1 = 1;
        if (t == HB_CT_WQ || t == HB_CT_WO) ne1 = H;
        else if (t == HB_CT_WK || t == HB_CT_WV) ne1 = KV;
        else if (t == HB_CT_WG || t == HB_CT_WU) ne1 = I;
        else if (t == HB_CT_WD) { ne0 = I; ne1 = H; }
        if (x->ne[0] != ne0 || x->ne[1] != ne1 || x->ne[2] != 1 || x->ne[3] != 1) {
            snprintf(err, errlen, "%s: offset %llu: tensor %s is [%lld, %lld, %lld, %lld], the layer's sizes want [%lld, %lld]", path,
                     (unsigned long long)x->info_offset, name, (long long)x->ne[0], (long long)x->ne[1], (long long)x->ne[2],
                     (long long)x->ne[3], (long long)ne0, (long long)ne1);
            st = HB_EINVAL;
            break;
        }
        const hb_dtype d = (hb_dtype)x->dtype;
        if (norm && (d != HB_F32 && d != HB_F16 && d != HB_BF16)) {
            snprintf(err, errlen, "%s: offset %llu: norm weight %s is %s; hybench reads norms in f32, f16 or bf16", path,
                     (unsigned long long)x->info_offset, name, hb_dtype_name(d));
            st = HB_EINVAL;
            break;
        }
        mi->wtype[t] = (int)d;
        if (!norm) {
            if (hb_dtype_is_quant(d)) nquant++;
            else nfloat++;
        }
    }
    if (st == HB_OK && nquant && nfloat) {
        snprintf(err, errlen, "%s: layer %d mixes quantized and float projections; hybench runs a layer quantized or in f32", path, layer);
        st = HB_EINVAL;
    }
    if (st == HB_OK) mi->dtype = nquant ? (hb_dtype)mi->wtype[HB_CT_WQ] : HB_F32;
    hb_gguf_close(g);
    return st;
}

hb_status hb_model_items(const char *path, int layer, hb_item_list *items, char *err, size_t errlen)
{
    hb_model_info mi;
    hb_status st = hb_model_inspect(path, layer, &mi, err, errlen);
    if (st != HB_OK) return st;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int stem = (int)strcspn(base, ".");
    for (int k = 0; k < 2; k++) {
        hb_item it;
        memset(&it, 0, sizeof it);
        it.c.op = HB_OP_CHAIN;
        it.c.shape.seq = k == 0 ? 1 : 512;
        it.c.shape.kv_seq = 512;
        /* the sizes, where they are not TinyLlama's (hb_chain_dims_of's defaults): the keys of a
         * TinyLlama file's layer are the synthetic layer's */
        const hb_shape none = {0};
        const hb_chain_dims d0 = hb_chain_dims_of(&none);
        if (mi.heads != d0.heads) it.c.shape.heads = mi.heads;
        if (mi.kv_heads != d0.kv_heads) it.c.shape.kv_heads = mi.kv_heads;
        if (mi.head_dim != d0.head_dim) it.c.shape.head_dim = mi.head_dim;
        if (mi.inter != d0.inter) it.c.shape.inter = mi.inter;
        char why[256];
        hb_shape_defaults(HB_OP_CHAIN, &it.c.shape);
        if ((st = hb_shape_normalize(HB_OP_CHAIN, &it.c.shape, why, sizeof why)) != HB_OK) {
            snprintf(err, errlen, "%s: layer %d: %s", path, layer, why);
            return st;
        }
        it.c.dtype = mi.dtype;
        it.c.weight = 1;
        it.c.quick = k == 0;
        snprintf(it.c.source, sizeof it.c.source, "gguf:%.140s:blk.%d", path, layer);
        snprintf(it.c.name, sizeof it.c.name, "%.*s.blk%d.%s", stem > 60 ? 60 : stem, base, layer, k == 0 ? "decode" : "prefill");
        it.dtype_mask = 1u << mi.dtype;
        if ((st = hb_item_list_push(items, &it)) != HB_OK) { snprintf(err, errlen, "out of memory"); return st; }
    }
    return HB_OK;
}
