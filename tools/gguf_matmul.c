/*
 * gguf_matmul.c - hybench's quantized matmul on a GGUF weight/input pair, for the output check against
 * ggml (docs/ggml.md, "Output agreement"): reads FILE.gguf's tensors "w" (a weight in q8_0, q4_k, q5_k or
 * q6_k, ne [k, n]: W[n,k] as the q dtypes take it, core/quant.h) and "x" (f32, ne [k, m]: A[m,k]), runs
 * C = A W^T on one of hybench's backends through the backend interface (core/backend.h; a plugin such as
 * opencl or cuda loaded as `hybench run` loads it, measure/registry.h), its first instance, exactly as
 * a `hybench run` case would, and writes OUT.gguf with "y" (f32, ne [n, m]: C[m,n]), which
 * `ggml_mm --compare OUT.gguf GGML_OUT.gguf` measures against ggml's own product of the same file.
 *
 * usage: gguf_matmul FILE.gguf OUT.gguf [BACKEND]     (cpu, cpu-ref, opencl, cuda; default cpu)
 * Exit 0; 2 on bad usage or an unknown backend; 4 when FILE.gguf is unreadable or lacks a fitting w/x pair (the message names
 * the file and what is wrong); 8 when the backend is unavailable (no device, no plugin), refuses or fails
 * the case (its reason printed). Built by `make build/gguf_matmul` (not part of hybench;
 * tests/check_ggml_agree.sh runs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/backend.h"
#include "core/quant.h"
#include "measure/registry.h"
#include "workload/gguf.h"

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) { fprintf(stderr, "usage: gguf_matmul FILE.gguf OUT.gguf [cpu|cpu-ref|opencl|cuda]\n"); return 2; }
    const char *which = argc == 4 ? argv[3] : "cpu";
    const hb_backend_entry *be = hb_backend_find(which);
    if (!be) { fprintf(stderr, "gguf_matmul: backend \"%s\": unknown (cpu, cpu-ref, opencl, cuda)\n", which); return 2; }
    char err[512];
    hb_gguf *g = NULL;
    if (hb_gguf_open(argv[1], &g, err, sizeof err) != HB_OK) { fprintf(stderr, "gguf_matmul: %s\n", err); return 4; }
    const hb_gguf_tensor *w = hb_gguf_find_tensor(g, "w"), *x = hb_gguf_find_tensor(g, "x");
    if (!w || !x || !hb_dtype_is_quant((hb_dtype)w->dtype) || x->dtype != HB_F32 || w->n_dims != 2 || w->ne[0] != x->ne[0] ||
        x->ne[2] != 1 || x->ne[3] != 1) {
        fprintf(stderr, "gguf_matmul: %s: wants \"w\" (q8_0, q4_k, q5_k or q6_k, ne [k, n]) and \"x\" (f32, ne [k, m]) of one k\n",
                argv[1]);
        hb_gguf_close(g);
        return 4;
    }
    hb_case c;
    memset(&c, 0, sizeof c);
    c.op = HB_OP_MATMUL;
    c.dtype = (hb_dtype)w->dtype;
    c.mode = HB_MODE_F32;
    c.route = HB_ROUTE_PAGEABLE;
    c.shape.k = w->ne[0];
    c.shape.n = w->ne[1];
    c.shape.m = x->ne[1];
    enum { MAXI = 16 };
    hb_instance insts[MAXI];
    char why[256] = "";
    int rc = 8;
    const int ninst = hb_backend_open(be, insts, MAXI, why, sizeof why);
    if (ninst < 1) { fprintf(stderr, "gguf_matmul: %s: %s\n", which, why); hb_gguf_close(g); return 8; }
    hb_instance inst = insts[0];
    const hb_backend_ops *ops = inst.ops;
    hb_buf a = {0}, b = {0}, y = {0};
    const size_t ybytes = (size_t)(c.shape.m * c.shape.n) * 4;
    hb_status st = ops->supports(&inst, &c, why, sizeof why);
    if (st == HB_OK) st = ops->buf_alloc(&inst, x->bytes, c.route, &a);
    if (st == HB_OK) st = ops->buf_alloc(&inst, w->bytes, c.route, &b);
    if (st == HB_OK) st = ops->buf_alloc(&inst, ybytes, c.route, &y);
    if (st == HB_OK) {
        a.dtype = HB_F32;
        b.dtype = c.dtype;
        y.dtype = HB_F32;
        memcpy(a.host, x->data, x->bytes);
        memcpy(b.host, w->data, w->bytes);
        hb_buf *in[2] = {&a, &b};
        st = ops->upload(&inst, &a);
        if (st == HB_OK) st = ops->upload(&inst, &b);
        if (st == HB_OK) st = ops->run(&inst, &c, (hb_buf *const *)in, &y);
        if (st == HB_OK) st = ops->download(&inst, &y);
    }
    if (st != HB_OK) {
        fprintf(stderr, "gguf_matmul: %s on %s: %s%s%s\n", hb_dtype_name(c.dtype), which, hb_status_name(st), why[0] ? ": " : "", why);
    } else {
        hb_gguf_writer *out = NULL;
        const int64_t ne[2] = {c.shape.n, c.shape.m};
        if (hb_gguf_writer_new(3, 0, &out) == HB_OK && hb_gguf_add_tensor(out, "y", 2, ne, HB_GGUF_F32, y.host, ybytes) == HB_OK &&
            hb_gguf_write(out, argv[2], err, sizeof err) == HB_OK) {
            printf("gguf_matmul: %s m=%lld n=%lld k=%lld on %s -> %s\n", hb_dtype_name(c.dtype), (long long)c.shape.m,
                   (long long)c.shape.n, (long long)c.shape.k, which, argv[2]);
            rc = 0;
        } else {
            fprintf(stderr, "gguf_matmul: %s\n", err);
            rc = 7;
        }
        hb_gguf_writer_free(out);
    }
    if (y.host) ops->buf_free(&inst, &y);
    if (b.host) ops->buf_free(&inst, &b);
    if (a.host) ops->buf_free(&inst, &a);
    insts[0] = inst;
    for (int i = 0; i < ninst; i++) insts[i].ops->close(&insts[i]);
    hb_gguf_close(g);
    return rc;
}
