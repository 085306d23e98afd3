/*
 * ocl_ceilings.c - the ceilings of one OpenCL device, measured with OpenCL profiling events in the
 * same run as the cases (DESIGN.md "Measurement"):
 *   copy_gbps          hb_copy over two buffers of max(4 x the device's global cache, 64 MiB) each
 *                      (capped by the allocation limits), bytes read + written (BabelStream "Copy"),
 *                      best of 10 after a warm-up.
 *   copy_gbps_llc      on a CPU device: the same with two buffers of a quarter of the global cache
 *                      each (the set stays in the host's last-level cache; one launch per pass).
 *   peak_gflops_f32    hb_peak_f32: 8 independent float8 FMA chains per work-item (an fma = 2 FLOPs),
 *                      enough work-items to fill every compute unit, best of 5 runs of >= ~20 ms.
 *   peak_gflops_f16    the same in half arithmetic, when the device reports cl_khr_fp16.
 *   h2d_gbps_<route>, d2h_gbps_<route>  upload/download hooks of this backend on a 64 MiB buffer
 *                      per route (pageable, pinned, mapped), best of 5, bytes / event time.
 * Values are GB/s (1e9 bytes/s) and GFLOP/s (1e9 FLOP/s).
 */
#include "opencl/ocl.h"

#include <math.h>
#include <string.h>
#include <time.h>

static double host_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void put(hb_ceiling *out, int *n, int max, const char *name, double v, const char *unit, const char *how)
{
    if (*n >= max || !isfinite(v) || v <= 0) return;
    hb_ceiling *c = &out[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->value = v;
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    snprintf(c->how, sizeof c->how, "%s", how);
}

/* Time one launch of k with the instance's event timer; seconds or -1 on error. */
static double timed_launch(hb_instance *inst, cl_kernel k, size_t g, size_t l)
{
    ocl_ctx *c = inst->ctx;
    double t = -1;
    if (ocl_timer_begin(inst) != HB_OK) return -1;
    cl_int e = ocl_launch(c, k, 1, &g, l ? &l : NULL);
    if (ocl_timer_end(inst, &t) != HB_OK || e != CL_SUCCESS) return -1;
    return t;
}

/* Copy bandwidth over two buffers of `bytes0` each (0: the DRAM set, max(4 x the global cache,
 * 64 MiB)). */
static double copy_probe(hb_instance *inst, size_t bytes0, char *how, size_t howlen)
{
    ocl_ctx *c = inst->ctx;
    size_t bytes = c->cache_bytes ? 4 * (size_t)c->cache_bytes : 0;
    if (bytes < ((size_t)64 << 20)) bytes = (size_t)64 << 20;
    if (bytes0) bytes = bytes0;
    if (bytes > c->max_alloc) bytes = (size_t)c->max_alloc;
    if (bytes > c->gmem / 4) bytes = (size_t)(c->gmem / 4);
    bytes &= ~(size_t)4095;
    cl_int e;
    cl_kernel k = ocl_kernel(c, OCL_P_PROBE, 0, "hb_copy", &e);
    if (!k || bytes == 0) return -1;
    cl_mem a = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (OCL_CHECK(e)) return -1;
    cl_mem b = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (OCL_CHECK(e)) { clReleaseMemObject(a); return -1; }
    double best = -1;
    float one = 1.0f;
    e = OCL_CHECK(clEnqueueFillBuffer(c->q, a, &one, sizeof one, 0, bytes, 0, NULL, NULL));
    if (e == CL_SUCCESS) e = OCL_CHECK(clEnqueueFillBuffer(c->q, b, &one, sizeof one, 0, bytes, 0, NULL, NULL));
    if (e == CL_SUCCESS) e = ocl_set_args(k, 2, OCL_ARG(a), OCL_ARG(b));
    size_t g = bytes / 16, l = 256;
    for (int r = 0; r < 11 && e == CL_SUCCESS; r++) {
        double t = timed_launch(inst, k, g, l);
        if (t <= 0) { best = -1; break; }
        if (r > 0 && (best < 0 || t < best)) best = t;
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    snprintf(how, howlen, "copy kernel, 2 x %zu MiB, read+written bytes, best of 10, OpenCL events", bytes >> 20);
    return best > 0 ? 2.0 * (double)bytes / best / 1e9 : -1;
}

static double peak_probe(hb_instance *inst, const char *kname, char *how, size_t howlen)
{
    ocl_ctx *c = inst->ctx;
    cl_int e;
    cl_kernel k = ocl_kernel(c, OCL_P_PROBE, 0, kname, &e);
    if (!k) return -1;
    size_t l = 64, g = (size_t)c->cus * (c->is_cpu ? 64 : 2048);
    cl_mem out = clCreateBuffer(c->ctx, CL_MEM_WRITE_ONLY, g * sizeof(float), NULL, &e);
    if (OCL_CHECK(e)) return -1;
    float b = 0.999f, cc = 0.001f;
    int iters = 256;
    double best = -1;
    e = ocl_set_args(k, 4, OCL_ARG(out), OCL_ARG(iters), OCL_ARG(b), OCL_ARG(cc));
    /* grow iters until one launch takes >= 20 ms, then keep the best of 5 */
    for (int r = 0; r < 40 && e == CL_SUCCESS; r++) {
        double t = timed_launch(inst, k, g, l);
        if (t <= 0) break;
        if (t < 0.02 && iters < (1 << 24)) {
            iters *= t < 0.002 ? 8 : 2;
            e = clSetKernelArg(k, 1, sizeof iters, &iters);
            best = -1;
            r = 0;
            continue;
        }
        double rate = (double)g * (double)iters * 128.0 / t;
        if (rate > best) best = rate;
        if (r >= 5) break;
    }
    clReleaseMemObject(out);
    snprintf(how, howlen, "%s: 8 float8 FMA chains x %d iters x %zu work-items, best of 5, events", kname, iters, g);
    return best > 0 ? best / 1e9 : -1;
}

/* Upload and download bandwidth of one route with this backend's own hooks. */
static void route_probe(hb_instance *inst, hb_route r, double *h2d, double *d2h, int *zero_copy_cmds)
{
    ocl_ctx *c = inst->ctx;
    size_t bytes = (size_t)64 << 20;
    if (bytes > c->max_alloc) bytes = (size_t)c->max_alloc & ~(size_t)4095;
    *h2d = *d2h = -1;
    *zero_copy_cmds = 0;
    hb_buf b;
    if (ocl_buf_alloc(inst, bytes, r, &b) != HB_OK) return;
    memset(b.host, 1, bytes);
    double bu = -1, bd = -1;
    for (int i = 0; i < 6; i++) {
        double tu, td, h0 = host_now();
        if (ocl_timer_begin(inst) != HB_OK || ocl_upload(inst, &b) != HB_OK || ocl_timer_end(inst, &tu) != HB_OK) break;
        double h1 = host_now();
        if (ocl_timer_begin(inst) != HB_OK || ocl_download(inst, &b) != HB_OK || ocl_timer_end(inst, &td) != HB_OK) break;
        double h2 = host_now();
        if (tu <= 0) tu = h1 - h0;  /* nothing enqueued: fall back to the host clock */
        if (td <= 0) td = h2 - h1;
        if (i == 0) continue;       /* warm-up */
        if (bu < 0 || tu < bu) bu = tu;
        if (bd < 0 || td < bd) bd = td;
    }
    ocl_buf_free(inst, &b);
    if (bu > 0) *h2d = (double)bytes / bu / 1e9;
    if (bd > 0) *d2h = (double)bytes / bd / 1e9;
    *zero_copy_cmds = r == HB_ROUTE_MAPPED && (c->unified || c->is_cpu);
}

int ocl_ceilings(hb_instance *inst, hb_ceiling *out, int max)
{
    ocl_ctx *c = inst->ctx;
    int n = 0;
    char how[96];
    double v = copy_probe(inst, 0, how, sizeof how);
    put(out, &n, max, "copy_gbps", v, "GB/s", how);
    /* a CPU device (PoCL): the copy with both buffers in its global cache (the host's last level),
     * a quarter of it each, so that cache-resident cases are held to the cache's bandwidth */
    if (c->is_cpu && c->cache_bytes >= ((cl_ulong)1 << 20)) {
        size_t half = (size_t)(c->cache_bytes / 4) & ~(size_t)4095;
        v = copy_probe(inst, half, how, sizeof how);
        snprintf(how + strlen(how), sizeof how - strlen(how), " (in cache)");
        put(out, &n, max, "copy_gbps_llc", v, "GB/s", how);
    }
    v = peak_probe(inst, "hb_peak_f32", how, sizeof how);
    put(out, &n, max, "peak_gflops_f32", v, "GFLOP/s", how);
    if (c->fp16) {
        v = peak_probe(inst, "hb_peak_f16", how, sizeof how);
        put(out, &n, max, "peak_gflops_f16", v, "GFLOP/s", how);
    }
    static const char *const rn[HB_ROUTE_COUNT] = {"pageable", "pinned", "mapped"};
    static const char *const rhow[HB_ROUTE_COUNT] = {
        "clEnqueueWrite/ReadBuffer from malloc'd memory, 64 MiB, best of 5, events",
        "Write/ReadBuffer from a mapped CL_MEM_ALLOC_HOST_PTR buffer, 64 MiB, best of 5",
        "unmap/map of a CL_MEM_USE_HOST_PTR buffer, 64 MiB, best of 5, events"};
    for (int r = 0; r < HB_ROUTE_COUNT; r++) {
        double h2d, d2h;
        int zc;
        route_probe(inst, (hb_route)r, &h2d, &d2h, &zc);
        char name[40], h[96];
        snprintf(h, sizeof h, "%s%s", zc ? "zero-copy: " : "", rhow[r]);
        snprintf(name, sizeof name, "h2d_gbps_%s", rn[r]);
        put(out, &n, max, name, h2d, "GB/s", h);
        snprintf(name, sizeof name, "d2h_gbps_%s", rn[r]);
        put(out, &n, max, name, d2h, "GB/s", h);
    }
    return n;
}
