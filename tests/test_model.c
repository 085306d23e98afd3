/*
 * test_model.c - a llama GGUF file's layer as the decoder-layer chain: workload/model.c (its sizes, its
 * tensors checked, its chain items) and measure/model_layer.c (its weights read into the chain).
 *  - files written here with the GGUF writer: a small llama layer (heads 4, kv_heads 2, head_dim 64:
 *    hidden 256, inter 512) in Q4_K_M's mix (q4_k, attn_v and ffn_down q6_k), in q8_0 and in f16;
 *    random blocks (hb_quant_fill_random) and random norm weights;
 *  - hb_model_inspect reads the sizes and each tensor's format; hb_model_items gives a decode and a
 *    prefill chain with those sizes, the file's dtype and the "gguf:PATH:blk.N" source;
 *  - hb_model_layer_load: every projection's f64 values equal the dequantization of the file's
 *    blocks (q types, in W[n,k]) or the f16 values transposed to B[k,n] (f16), the blocks kept as
 *    they are in the file; output arrays poisoned with NaN first;
 *  - refusals, each naming the file: another architecture, a missing tensor, a tensor of another
 *    shape, a layer past the last, projections mixing quantized and float ones.
 * `test_model --write PATH [q4_k_m|q8_0|f16] [tinyllama]` writes such a file and exits (the
 * end-to-end check tests/check_model.sh runs `hybench verify --model PATH` on it); `tinyllama`: the
 * TinyLlama-1.1B layer's sizes (hidden 2048, 32 heads, 4 kv heads, inter 5632).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/convert.h"
#include "core/quant.h"
#include "measure/model_layer.h"
#include "workload/gguf.h"
#include "workload/model.h"

typedef struct spec { int64_t heads, kv_heads, head_dim, inter; int layers; const char *fmt; const char *arch; int skip_t, bad_t; } spec;

static void *blobs[32];
static int nblobs;

/* ggml type of chain tensor t in format fmt */
static uint32_t gtype(int t, const char *fmt)
{
    if (t == HB_CT_G1 || t == HB_CT_G2) return HB_GGUF_F32;
    if (!strcmp(fmt, "f16")) return HB_GGUF_F16;
    if (!strcmp(fmt, "q8_0")) return HB_GGUF_Q8_0;
    if (!strcmp(fmt, "mixed")) return t == HB_CT_WQ ? HB_GGUF_F16 : HB_GGUF_Q4_K;
    return (t == HB_CT_WV || t == HB_CT_WD) ? HB_GGUF_Q6_K : HB_GGUF_Q4_K; /* q4_k_m */
}
static hb_dtype dtype_of(uint32_t g)
{
    switch (g) {
    case HB_GGUF_Q8_0: return HB_Q8_0;
    case HB_GGUF_Q4_K: return HB_Q4_K;
    case HB_GGUF_Q6_K: return HB_Q6_K;
    case HB_GGUF_F16: return HB_F16;
    default: return HB_F32;
    }
}

/* Write a llama file of one or more layers per sp to path. 0 or -1. */
static int write_file(const char *path, const spec *sp)
{
    hb_gguf_writer *w = NULL;
    if (hb_gguf_writer_new(3, 0, &w) != HB_OK) return -1;
    const int64_t H = sp->heads * sp->head_dim, KV = sp->kv_heads * sp->head_dim, I = sp->inter;
    hb_gguf_add_str(w, "general.architecture", sp->arch);
    hb_gguf_add_u32(w, "llama.embedding_length", (uint32_t)H);
    hb_gguf_add_u32(w, "llama.feed_forward_length", (uint32_t)I);
    hb_gguf_add_u32(w, "llama.attention.head_count", (uint32_t)sp->heads);
    hb_gguf_add_u32(w, "llama.attention.head_count_kv", (uint32_t)sp->kv_heads);
    hb_gguf_add_u32(w, "llama.block_count", (uint32_t)sp->layers);
    nblobs = 0;
    for (int l = 0; l < sp->layers; l++)
        for (int i = 0; i < HB_MODEL_NTENSORS; i++) {
            const int t = hb_model_tensors[i];
            if (t == sp->skip_t) continue;
            int64_t ne[2] = {H, 1};
            if (t == HB_CT_WQ || t == HB_CT_WO) ne[1] = H;
            else if (t == HB_CT_WK || t == HB_CT_WV) ne[1] = KV;
            else if (t == HB_CT_WG || t == HB_CT_WU) ne[1] = I;
            else if (t == HB_CT_WD) { ne[0] = I; ne[1] = H; }
            if (t == sp->bad_t) ne[1] += 1;
            const uint32_t g = gtype(t, sp->fmt);
            const hb_dtype d = dtype_of(g);
            const int64_t n = ne[0] * ne[1];
            size_t bytes = hb_dtype_is_quant(d) ? hb_quant_bytes(d, n) : (size_t)n * (g == HB_GGUF_F16 ? 2 : 4);
            void *p = malloc(bytes);
            if (!p) return -1;
            blobs[nblobs++ % 32] = p;
            if (hb_dtype_is_quant(d)) {
                hb_quant_fill_random(d, p, n, 7, (unsigned long long)(100 * l + t), 1.0 / 64);
            } else {
                float *f = malloc((size_t)n * sizeof(float));
                if (!f) return -1;
                for (int64_t j = 0; j < n; j++) f[j] = (float)(((j * 7919 + t * 31 + l) % 2001) - 1000) / 64000.0f;
                if (g == HB_GGUF_F16) hb_convert(p, HB_ELEM_F16, f, HB_ELEM_F32, (size_t)n);
                else memcpy(p, f, bytes);
                free(f);
            }
            char name[80];
            hb_model_tensor_name(t, l, name, sizeof name);
            if (hb_gguf_add_tensor(w, name, t == HB_CT_G1 || t == HB_CT_G2 ? 1 : 2, ne, g, p, bytes) != HB_OK) return -1;
        }
    char err[256];
    hb_status st = hb_gguf_write(w, path, err, sizeof err);
    hb_gguf_writer_free(w);
    for (int i = 0; i < nblobs && i < 32; i++) free(blobs[i]);
    if (st != HB_OK) fprintf(stderr, "%s\n", err);
    return st == HB_OK ? 0 : -1;
}

static char dir[256];
static const spec small = {4, 2, 64, 512, 2, "q4_k_m", "llama", -1, -1};

static void file_path(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s.gguf", dir, name); }

static void test_inspect_and_items(void **state)
{
    (void)state;
    const char *fmts[] = {"q4_k_m", "q8_0", "f16"};
    for (int f = 0; f < 3; f++) {
        spec sp = small;
        sp.fmt = fmts[f];
        char p[300];
        file_path(p, sizeof p, fmts[f]);
        assert_int_equal(write_file(p, &sp), 0);
        hb_model_info mi;
        char err[512];
        assert_int_equal(hb_model_inspect(p, 1, &mi, err, sizeof err), HB_OK);
        assert_int_equal(mi.hidden, 256);
        assert_int_equal(mi.inter, 512);
        assert_int_equal(mi.heads, 4);
        assert_int_equal(mi.kv_heads, 2);
        assert_int_equal(mi.head_dim, 64);
        assert_int_equal(mi.nlayers, 2);
        assert_int_equal(mi.dtype, f == 0 ? HB_Q4_K : f == 1 ? HB_Q8_0 : HB_F32);
        if (f == 0) {
            assert_int_equal(mi.wtype[HB_CT_WQ], HB_Q4_K);
            assert_int_equal(mi.wtype[HB_CT_WV], HB_Q6_K);
            assert_int_equal(mi.wtype[HB_CT_WD], HB_Q6_K);
            assert_int_equal(mi.wtype[HB_CT_G1], HB_F32);
        }
        hb_item_list items = {0};
        assert_int_equal(hb_model_items(p, 1, &items, err, sizeof err), HB_OK);
        assert_int_equal(items.n, 2);
        for (size_t i = 0; i < 2; i++) {
            const hb_case *c = &items.v[i].c;
            assert_int_equal(c->op, HB_OP_CHAIN);
            assert_int_equal(c->shape.heads, 4);
            assert_int_equal(c->shape.kv_heads, 2);
            assert_int_equal(c->shape.inter, 512);
            assert_int_equal(c->shape.seq, i == 0 ? 1 : 512);
            assert_int_equal(items.v[i].dtype_mask, 1u << mi.dtype);
            char mp[300];
            int ml = -1;
            assert_int_equal(hb_model_case(c, mp, sizeof mp, &ml), 1);
            assert_string_equal(mp, p);
            assert_int_equal(ml, 1);
        }
        hb_item_list_free(&items);
    }
}

static void test_layer_load(void **state)
{
    (void)state;
    const char *fmts[] = {"q4_k_m", "f16"};
    for (int f = 0; f < 2; f++) {
        spec sp = small;
        sp.fmt = fmts[f];
        char p[300], err[512];
        file_path(p, sizeof p, fmts[f]);
        assert_int_equal(write_file(p, &sp), 0);
        hb_item_list items = {0};
        assert_int_equal(hb_model_items(p, 0, &items, err, sizeof err), HB_OK);
        hb_case c = items.v[0].c;
        c.dtype = f == 0 ? HB_Q4_K : HB_F32;
        double *t[HB_CT_COUNT] = {0};
        unsigned char *q[HB_CT_COUNT] = {0};
        for (int k = 0; k < HB_CT_COUNT; k++) {
            size_t n = hb_chain_tensor_elems(k, &c.shape);
            if (!n) continue;
            t[k] = malloc(n * sizeof(double));
            assert_non_null(t[k]);
            for (size_t j = 0; j < n; j++) t[k][j] = NAN;
        }
        assert_int_equal(hb_model_layer_load(&c, t, q, err, sizeof err), HB_OK);
        hb_gguf *g = NULL;
        assert_int_equal(hb_gguf_open(p, &g, err, sizeof err), HB_OK);
        for (int k = HB_CT_G1; k <= HB_CT_WD; k++) {
            char name[80];
            const hb_gguf_tensor *x = hb_gguf_find_tensor(g, hb_model_tensor_name(k, 0, name, sizeof name));
            assert_non_null(x);
            const size_t n = hb_chain_tensor_elems(k, &c.shape);
            double *want = malloc(n * sizeof(double));
            assert_non_null(want);
            const hb_dtype d = (hb_dtype)x->dtype;
            if (hb_dtype_is_quant(d)) {
                assert_non_null(q[k]);
                assert_memory_equal(q[k], x->data, x->bytes);
                assert_int_equal(hb_quant_dequantize_f64(d, x->data, want, (int64_t)n), HB_OK);
            } else {
                double *w = malloc(n * sizeof(double));
                assert_non_null(w);
                hb_convert(w, HB_ELEM_F64, x->data, d == HB_F16 ? HB_ELEM_F16 : HB_ELEM_F32, n);
                if (k == HB_CT_G1 || k == HB_CT_G2) memcpy(want, w, n * sizeof(double));
                else /* W[n,k] to B[k,n] */
                    for (int64_t r = 0; r < x->ne[1]; r++)
                        for (int64_t col = 0; col < x->ne[0]; col++) want[col * x->ne[1] + r] = w[r * x->ne[0] + col];
                free(w);
            }
            for (size_t j = 0; j < n; j++)
                if (t[k][j] != want[j]) fail_msg("%s element %zu: %g, wanted %g", name, j, t[k][j], want[j]);
            free(want);
        }
        hb_gguf_close(g);
        for (int k = 0; k < HB_CT_COUNT; k++) { free(t[k]); free(q[k]); }
        hb_item_list_free(&items);
    }
}

static void refused(const spec *sp, int layer, const char *needle)
{
    char p[300], err[512] = "";
    file_path(p, sizeof p, "bad");
    assert_int_equal(write_file(p, sp), 0);
    hb_model_info mi;
    assert_int_equal(hb_model_inspect(p, layer, &mi, err, sizeof err), HB_EINVAL);
    if (!strstr(err, p) || !strstr(err, needle)) fail_msg("error \"%s\" lacks the file or \"%s\"", err, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    spec sp = small;
    sp.arch = "gpt2";
    refused(&sp, 0, "architecture");
    sp = small;
    sp.skip_t = HB_CT_WU;
    refused(&sp, 0, "blk.0.ffn_up.weight");
    sp = small;
    sp.bad_t = HB_CT_WK;
    refused(&sp, 0, "blk.0.attn_k.weight");
    refused(&small, 2, "--layer 2");
    sp = small;
    sp.fmt = "mixed";
    refused(&sp, 0, "mixes");
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hb_test_model_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}
static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"q4_k_m", "q8_0", "f16", "bad"};
    char p[300];
    for (size_t i = 0; i < 4; i++) { file_path(p, sizeof p, names[i]); unlink(p); }
    rmdir(dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--write")) {
        spec sp = small;
        sp.layers = 1;
        if (argc >= 4) sp.fmt = argv[3];
        if (argc >= 5 && !strcmp(argv[4], "tinyllama")) { sp.heads = 32; sp.kv_heads = 4; sp.head_dim = 64; sp.inter = 5632; }
        return write_file(argv[2], &sp) ? 1 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inspect_and_items),
        cmocka_unit_test(test_layer_load),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
