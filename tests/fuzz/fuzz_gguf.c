/*
 * fuzz_gguf.c - libFuzzer target for the GGUF reader (harness/workload/gguf.c, hb_gguf_open and its
 * accessors) and writer (gguf_write.c). The input is a GGUF file. Every input must open or be refused
 * with "PATH: offset N: reason" and no handle; nothing may crash, leak or hit undefined behaviour.
 * An opened file is walked whole: every key found again by name, every value read through the
 * converters and hb_gguf_array_elem down to the innermost element, every tensor found again by name,
 * inside the file, aligned, its bytes read (the quantized ones dequantized); then its tensors are
 * written again with the writer (same alignment) and the new file must open with the same tensors.
 */
#include "fuzz_util.h"
#include <math.h>
#include "core/quant.h"
#include "workload/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned sink;

static void walk(const hb_gguf_value *v, int depth)
{
    uint64_t u;
    int64_t s;
    double f;
    int b;
    if (depth > HB_GGUF_MAX_NEST + 1) abort();
    sink += (unsigned)hb_gguf_value_u64(v, &u) + (unsigned)hb_gguf_value_i64(v, &s) + (unsigned)hb_gguf_value_f64(v, &f) +
            (unsigned)hb_gguf_value_bool(v, &b);
    if (v->type == HB_GGUF_V_STRING && v->n) sink += v->p[0] + v->p[v->n - 1];
    if (v->type != HB_GGUF_V_ARRAY) return;
    /* at most 64 elements per array: the walk of a deeply nested one is quadratic */
    for (uint64_t i = 0; i < v->n && i < 64; i++) {
        hb_gguf_value e;
        if (hb_gguf_array_elem(v, i, &e) != HB_OK || e.type != v->elem_type) abort();
        walk(&e, depth + 1);
    }
    hb_gguf_value e;
    if (hb_gguf_array_elem(v, v->n, &e) != HB_EINVAL) abort();
}

static void check_tensors(const hb_gguf *g, size_t file_size)
{
    for (size_t i = 0; i < hb_gguf_n_tensors(g); i++) {
        const hb_gguf_tensor *t = hb_gguf_tensor_at(g, i);
        if (hb_gguf_find_tensor(g, t->name) != t) abort();
        if (t->file_offset % hb_gguf_alignment(g) || t->file_offset > file_size || t->bytes > file_size - t->file_offset) abort();
        const uint8_t *p = t->data;
        sink += p[0] + p[t->bytes - 1];
        if (t->dtype >= 0 && hb_dtype_is_quant((hb_dtype)t->dtype)) {
            const int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
            if (n <= 4096) {
                static float y[4096];
                if (hb_quant_dequantize((hb_dtype)t->dtype, t->data, y, n) != HB_OK) abort();
            }
        }
    }
}

static void rewrite(const hb_gguf *g)
{
    hb_gguf_writer *w;
    const uint32_t a = hb_gguf_alignment(g);
    if (hb_gguf_writer_new(3, a == HB_GGUF_DEFAULT_ALIGNMENT ? 0 : a, &w) != HB_OK) abort();
    const size_t n = hb_gguf_n_tensors(g);
    for (size_t i = 0; i < n; i++) {
        const hb_gguf_tensor *t = hb_gguf_tensor_at(g, i);
        if (strlen(t->name) >= HB_GGUF_MAX_NAME) { hb_gguf_writer_free(w); return; } /* 64 bytes: read, not written */
        if (hb_gguf_add_tensor(w, t->name, t->n_dims, t->ne, t->ggml_type, t->data, t->bytes) != HB_OK) abort();
    }
    char err[1024], out[600];
    snprintf(out, sizeof out, "%s/rewritten.gguf", fz_tmpdir());
    if (hb_gguf_write(w, out, err, sizeof err) != HB_OK) { fprintf(stderr, "%s\n", err); abort(); }
    hb_gguf_writer_free(w);
    hb_gguf *h;
    if (hb_gguf_open(out, &h, err, sizeof err) == HB_OK) {
        if (hb_gguf_n_tensors(h) != n) abort();
        for (size_t i = 0; i < n; i++) {
            const hb_gguf_tensor *x = hb_gguf_tensor_at(g, i), *y = hb_gguf_tensor_at(h, i);
            if (strcmp(x->name, y->name) || x->ggml_type != y->ggml_type || x->bytes != y->bytes || x->n_dims != y->n_dims ||
                memcmp(x->ne, y->ne, sizeof x->ne) || memcmp(x->data, y->data, x->bytes))
                abort();
        }
        hb_gguf_close(h);
    } else {
        fprintf(stderr, "the rewritten file does not open: %s\n", err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write_file("in.gguf", data, size);
    char err[1024] = "";
    hb_gguf *g = (hb_gguf *)0x1;
    const hb_status st = hb_gguf_open(path, &g, err, sizeof err);
    if (st != HB_OK) {
        if (g) { fprintf(stderr, "error %d with a handle\n", (int)st); abort(); }
        if (strncmp(err, path, strlen(path)) || !strstr(err, ": offset ")) { fprintf(stderr, "error %d, message \"%s\"\n", (int)st, err); abort(); }
        return 0;
    }
    for (size_t i = 0; i < hb_gguf_n_kv(g); i++) {
        const char *k = hb_gguf_kv_key(g, i);
        if (hb_gguf_find_kv(g, k) != hb_gguf_kv_value(g, i)) abort();
        walk(hb_gguf_kv_value(g, i), 0);
    }
    check_tensors(g, size);
    rewrite(g);
    hb_gguf_close(g);
    return 0;
}
