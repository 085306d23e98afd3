/*
 * model_layer.c - a GGUF file's layer into the chain's tensors (model_layer.h).
 */
#include "measure/model_layer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/convert.h"
#include "core/quant.h"
#include "workload/gguf.h"

int hb_model_case(const hb_case *c, char *path, size_t plen, int *layer)
{
    if (c->op != HB_OP_CHAIN || strncmp(c->source, "gguf:", 5)) return 0;
    const char *b = strstr(c->source, ":blk."), *nx;
    while (b && (nx = strstr(b + 1, ":blk.")) != NULL) b = nx; /* the last one: a path may hold ":blk." */
    if (!b || b == c->source + 4) return 0;
    char *end = NULL;
    long l = strtol(b + 5, &end, 10);
    if (!end || *end || l < 0 || l > 1 << 20) return 0;
    snprintf(path, plen, "%.*s", (int)(b - (c->source + 5)), c->source + 5);
    *layer = (int)l;
    return 1;
}

const hb_model_info *hb_model_case_info(const hb_case *c, char *err, size_t errlen)
{
    static struct { char path[200]; int layer, ok; hb_model_info mi; } last = {.layer = -1};
    char path[200];
    int layer;
    if (!hb_model_case(c, path, sizeof path, &layer)) { snprintf(err, errlen, "not a model file's case"); return NULL; }
    if (last.ok && last.layer == layer && !strcmp(last.path, path)) return &last.mi;
    last.ok = 0;
    if (hb_model_inspect(path, layer, &last.mi, err, errlen) != HB_OK) return NULL;
    snprintf(last.path, sizeof last.path, "%s", path);
    last.layer = layer;
    last.ok = 1;
    return &last.mi;
}

/* n values of dtype d (f32, f16, bf16) at p widened to f64 */
static void widen(double *out, const void *p, hb_dtype d, size_t n)
{
    hb_convert(out, HB_ELEM_F64, p, d == HB_F16 ? HB_ELEM_F16 : d == HB_BF16 ? HB_ELEM_BF16 : HB_ELEM_F32, n);
}

hb_status hb_model_layer_load(const hb_case *c, double *t[HB_CT_COUNT], unsigned char *q[HB_CT_COUNT], char *err, size_t errlen)
{
    char path[200];
    int layer;
    if (!hb_model_case(c, path, sizeof path, &layer)) { snprintf(err, errlen, "not a model file's case"); return HB_EINVAL; }
    hb_gguf *g = NULL;
    hb_status st = hb_gguf_open(path, &g, err, errlen);
    if (st != HB_OK) return st;
    for (int i = 0; i < HB_MODEL_NTENSORS && st == HB_OK; i++) {
        const int k = hb_model_tensors[i];
        char name[80];
        const hb_gguf_tensor *x = NULL;
        hb_model_tensor_name(k, layer, name, sizeof name);
        st = hb_gguf_get_tensor(g, name, -1, &x, err, errlen);
        if (st != HB_OK) { if (st == HB_ESKIP) st = HB_EINVAL; break; }
        const size_t n = hb_chain_tensor_elems(k, &c->shape);
        if ((uint64_t)x->ne[0] * (uint64_t)x->ne[1] != n || !t[k]) {
            snprintf(err, errlen, "%s: tensor %s has %lld x %lld values, the case's layer wants %zu", path, name, (long long)x->ne[0],
                     (long long)x->ne[1], n);
            st = HB_EINVAL;
            break;
        }
        const hb_dtype d = (hb_dtype)x->dtype;
        if (hb_dtype_is_quant(d)) {
            q[k] = malloc(x->bytes);
            if (!q[k]) { st = HB_ENOMEM; snprintf(err, errlen, "out of memory for %s", name); break; }
            memcpy(q[k], x->data, x->bytes);
            st = hb_quant_dequantize_f64(d, q[k], t[k], (int64_t)n);
            if (st != HB_OK) snprintf(err, errlen, "%s: tensor %s: cannot dequantize", path, name);
        } else if (k == HB_CT_G1 || k == HB_CT_G2) {
            widen(t[k], x->data, d, n);
        } else {
            /* the file's W[n,k] (ne0 = k contiguous) to the chain's dense B[k,n] */
            double *w = malloc(n * sizeof(double));
            if (!w) { st = HB_ENOMEM; snprintf(err, errlen, "out of memory for %s", name); break; }
            widen(w, x->data, d, n);
            const int64_t K = x->ne[0], N = x->ne[1];
            for (int64_t r = 0; r < N; r++)
                for (int64_t col = 0; col < K; col++) t[k][col * N + r] = w[r * K + col];
            free(w);
        }
    }
    hb_gguf_close(g);
    return st;
}
