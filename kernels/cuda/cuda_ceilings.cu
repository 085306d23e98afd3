/*
 * cuda_ceilings.cu - the CUDA backend's ceilings hook (cuda_ceilings): device memory bandwidth (own
 * copy and triad kernels), the cuBLAS GEMM peak per dtype, host<->device bandwidth per route, and the
 * peer-to-peer bandwidth between GPUs (cuda_collective.cu). Times are CUDA events on the instance's
 * stream, best of several runs after a warm-up.
 */
#include "cuda/cuda_internal.h"
#include "cuda/cuda_collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ ceilings */

static hb_status ev_time(hbc_ctx *c, double *sec)
{
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_b, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_b)));
    float ms = 0.0f;
    HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&ms, c->ev_a, c->ev_b)));
    *sec = (double)ms * 1e-3;
    return HB_OK;
}

static void add_ceiling(hb_ceiling *out, int max, int *n, const char *name, double value, const char *unit,
                        const char *how)
{
    if (*n >= max || !(value > 0.0)) return;
    hb_ceiling *x = &out[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->value = value;
    snprintf(x->unit, sizeof x->unit, "%s", unit);
    snprintf(x->how, sizeof x->how, "%s", how);
}

/* copy_gbps: own 16-byte copy kernel over 1 GiB -> 1 GiB, bytes read + written, best of 10.
 * triad_gbps: a = b + 3c on 3 x 256 MiB f32, best of 10. */
static void ceil_memory(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = nullptr, *b = nullptr;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(stderr, "hb_cuda: ceilings: cannot allocate 2 GiB for the copy probe\n");
    } else if (hbc_fill_random(c, HBC_F32, b, (int64_t)(bytes / 4), 7) == HB_OK) {
        double best = 1e30, t;
        for (int r = 0; r < 11; r++) {
            if (HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)) != HB_OK || hbc_copy(c, a, b, bytes) != HB_OK ||
                ev_time(c, &t) != HB_OK) { best = 1e30; break; }
            if (r > 0 && t < best) best = t; /* first run is a warm-up */
        }
        add_ceiling(out, max, n, "copy_gbps", 2.0 * (double)bytes / best * 1e-9, "GB/s",
                    "own 16-byte copy kernel, 1 GiB -> 1 GiB, read+write bytes, best of 10");
        const int64_t tn = (int64_t)(256 << 20) / 4;
        float *ta = (float *)a, *tb = (float *)b, *tc = (float *)b + tn;
        best = 1e30;
        for (int r = 0; r < 11; r++) {
            if (HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)) != HB_OK || hbc_triad(c, ta, tb, tc, tn) != HB_OK ||
                ev_time(c, &t) != HB_OK) { best = 1e30; break; }
            if (r > 0 && t < best) best = t;
        }
        add_ceiling(out, max, n, "triad_gbps", 3.0 * (double)tn * 4.0 / best * 1e-9, "GB/s",
                    "own triad kernel a=b+3c, 3 x 256 MiB f32, best of 10");
    }
    if (a) cudaFree(a);
    if (b) cudaFree(b);
}

/* peak_gflops_<dtype>: cuBLAS 8192^3 with the same call as the matmul op, random inputs, best of 5. */
static void ceil_gemm(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    const int64_t N = 8192;
    const hb_dtype dts[4] = {HB_F32, HB_TF32, HB_F16, HB_BF16};
    const char *names[4] = {"peak_gflops_f32", "peak_gflops_tf32", "peak_gflops_f16", "peak_gflops_bf16"};
    void *A = nullptr, *B = nullptr, *C = nullptr;
    const size_t bytes = (size_t)(N * N * 4);
    if (cudaMalloc(&A, bytes) != cudaSuccess || cudaMalloc(&B, bytes) != cudaSuccess || cudaMalloc(&C, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(stderr, "hb_cuda: ceilings: cannot allocate the 8192^3 GEMM probe\n");
    } else {
        for (int i = 0; i < 4; i++) {
            const hbc_elem e = hbc_elem_of(dts[i]);
            if (hbc_fill_random(c, e, A, N * N, 11) != HB_OK || hbc_fill_random(c, e, B, N * N, 12) != HB_OK) break;
            double best = 1e30, t;
            for (int r = 0; r < 6; r++) {
                if (HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)) != HB_OK ||
                    gemm(c, dts[i], A, B, C, N, N, N, 1) != HB_OK || ev_time(c, &t) != HB_OK) { best = 1e30; break; }
                if (r > 0 && t < best) best = t;
            }
            char how[96];
            snprintf(how, sizeof how, "cuBLAS GemmEx 8192^3 %s, best of 5", blas_compute_name(dts[i]));
            add_ceiling(out, max, n, names[i], 2.0 * (double)(N * N * N) / best * 1e-9, "GFLOP/s", how);
        }
    }
    if (A) cudaFree(A);
    if (B) cudaFree(B);
    if (C) cudaFree(C);
}

/* h2d/d2h per route on 256 MiB, best of 5: pageable (malloc'd, cudaMemcpyAsync + sync), pinned
 * (cudaHostAlloc), mapped (a kernel reading / writing mapped host memory through its device alias). */
static void ceil_transfers(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    const size_t bytes = (size_t)256 << 20;
    void *dev = nullptr, *pin = nullptr, *map = nullptr, *mapd = nullptr, *page = nullptr;
    uint32_t *sink = nullptr;
    if (cudaMalloc(&dev, bytes) != cudaSuccess || cudaMalloc((void **)&sink, 16) != cudaSuccess) {
        (void)cudaGetLastError();
        goto done;
    }
    page = aligned_alloc(64, bytes);
    if (page) memset(page, 1, bytes);
    if (cudaHostAlloc(&pin, bytes, cudaHostAllocDefault) != cudaSuccess) { (void)cudaGetLastError(); pin = nullptr; }
    if (cudaHostAlloc(&map, bytes, cudaHostAllocMapped) != cudaSuccess || cudaHostGetDevicePointer(&mapd, map, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        if (map) cudaFreeHost(map);
        map = nullptr;
    }
    for (int route = 0; route < 3; route++) {
        void *host = route == 0 ? page : route == 1 ? pin : map;
        if (!host) continue;
        if (route != 0) memset(host, 1, bytes);
        for (int dir = 0; dir < 2; dir++) {
            double best = 1e30, t;
            for (int r = 0; r < 6; r++) {
                hb_status st = HBC_RT(c, cudaEventRecord(c->ev_a, c->stream));
                if (st == HB_OK) {
                    if (route == 2) st = dir == 0 ? hbc_read_probe(c, mapd, bytes, sink) : hbc_write_probe(c, mapd, bytes);
                    else if (dir == 0) st = HBC_RT(c, cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c->stream));
                    else st = HBC_RT(c, cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, c->stream));
                }
                if (st != HB_OK || ev_time(c, &t) != HB_OK) { best = 1e30; break; }
                if (r > 0 && t < best) best = t;
            }
            char name[40], how[96];
            const char *rn = route == 0 ? "pageable" : route == 1 ? "pinned" : "mapped";
            snprintf(name, sizeof name, "%s_gbps_%s", dir == 0 ? "h2d" : "d2h", rn);
            snprintf(how, sizeof how, "%s 256 MiB, best of 5",
                     route == 2 ? (dir == 0 ? "kernel reading mapped host memory" : "kernel writing mapped host memory")
                                : (route == 0 ? "cudaMemcpyAsync from/to malloc'd memory" : "cudaMemcpyAsync from/to cudaHostAlloc memory"));
            add_ceiling(out, max, n, name, (double)bytes / best * 1e-9, "GB/s", how);
        }
    }
done:
    if (dev) cudaFree(dev);
    if (sink) cudaFree(sink);
    if (pin) cudaFreeHost(pin);
    if (map) cudaFreeHost(map);
    free(page);
}

int cuda_ceilings(hb_instance *inst, hb_ceiling *out, int max)
{
    hbc_ctx *c;
    if (enter(inst, &c) != HB_OK) return 0;
    int n = 0;
    ceil_memory(c, out, max, &n);
    if (!c->sticky) ceil_gemm(c, out, max, &n);
    if (!c->sticky) ceil_transfers(c, out, max, &n);
    if (!c->sticky) hbc_coll_ceilings(c, out, max, &n); /* peer-to-peer per GPU pair */
    if (!c->sticky) (void)cudaStreamSynchronize(c->stream);
    return n;
}
