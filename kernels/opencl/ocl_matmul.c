/*
 * ocl_matmul.c - GEMM for matmul, bmm and conv2d (im2col): CLBlast (github.com/CNugteren/CLBlast,
 * Debian libclblast-dev) when compiled in and chosen, else the own kernels of hb_matmul.cl.
 *
 * Choice (ocl_gemm_choose, once per instance): HB_OPENCL_MATMUL=clblast|tiled forces one;
 * HB_OPENCL_NO_CLBLAST=1 forces tiled; otherwise ("auto") CLBlast on GPU/accelerator devices and
 * the own register-blocked kernel on CPU devices. Reason for the CPU exception: CLBlast's kernels
 * are local-memory GPU kernels tuned per GPU; on PoCL (CPU) its untuned defaults reached
 * 18-23 GFLOP/s at n = 1024-2048 against 135-200 GFLOP/s for hb_mm_cpu (measured on the 2-core
 * AMD EPYC (Zen 4) development VM, PoCL 3.1, CLBlast 1.5.3). f16 storage always takes the own
 * kernel (f32 accumulation), since CLBlast's HGEMM accumulates in half precision.
 *
 * Timing: CLBlast may enqueue several kernels (pad/transpose + gemm) but returns the event of the
 * last one only, so a marker is enqueued first; the timer spans marker start .. gemm end.
 */
#include "opencl/ocl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<clblast_c.h>)
#include <clblast_c.h>
#define HB_HAVE_CLBLAST 1
#endif
#endif
#ifndef HB_HAVE_CLBLAST
#define HB_HAVE_CLBLAST 0
#endif

int ocl_have_clblast(void) { return HB_HAVE_CLBLAST; }

void ocl_gemm_choose(ocl_ctx *c)
{
    const char *m = ocl_cfg()->opencl_matmul;
    const char *no = ocl_cfg()->opencl_no_clblast;
    if (no && !strcmp(no, "1")) {
        c->mm_impl = OCL_MM_TILED;
        snprintf(c->mm_why, sizeof c->mm_why, "HB_OPENCL_NO_CLBLAST=1");
    } else if (m && !strcmp(m, "tiled")) {
        c->mm_impl = OCL_MM_TILED;
        snprintf(c->mm_why, sizeof c->mm_why, "HB_OPENCL_MATMUL=tiled");
    } else if (!HB_HAVE_CLBLAST) {
        c->mm_impl = OCL_MM_TILED;
        snprintf(c->mm_why, sizeof c->mm_why, "CLBlast not available at build time");
    } else if (m && !strcmp(m, "clblast")) {
        c->mm_impl = OCL_MM_CLBLAST;
        snprintf(c->mm_why, sizeof c->mm_why, "HB_OPENCL_MATMUL=clblast");
    } else if (c->is_cpu) {
        c->mm_impl = OCL_MM_TILED;
        snprintf(c->mm_why, sizeof c->mm_why, "auto: CPU device, own register-blocked kernel (CLBlast is GPU-tuned)");
    } else {
        c->mm_impl = OCL_MM_CLBLAST;
        snprintf(c->mm_why, sizeof c->mm_why, "auto: CLBlast on a %s device", (c->type & CL_DEVICE_TYPE_GPU) ? "GPU" : "non-CPU");
    }
}

const char *ocl_gemm_impl_name(const ocl_ctx *c, int var)
{
    return (c->mm_impl == OCL_MM_CLBLAST && var == 0) ? "clblast" : "tiled";
}

const char *ocl_gemm_kernel_name(const ocl_ctx *c, int var)
{
    if (c->mm_impl == OCL_MM_CLBLAST && var == 0) return "CLBlastSgemm";
    return c->cpu_style ? "hb_mm_cpu (8x32 register block, k-blocks of 512; hb_gemv_part/final for m = 1)" : "hb_mm_local (16x16 local-memory tiles)";
}

#if HB_HAVE_CLBLAST
static hb_status clblast_status(CLBlastStatusCode s, const char *what)
{
    if (s == CLBlastSuccess) return HB_OK;
    fprintf(stderr, "hybench opencl: %s failed: CLBlast status %d%s%s\n", what, (int)s,
            s > -1000 ? " = " : "", s > -1000 ? ocl_errname((cl_int)s) : "");
    if (s > -1000) return ocl_status((cl_int)s);  /* an OpenCL error passed through */
    return HB_EDEVICE;
}
#endif

/* CPU style, M == 1: hb_gemv_part over runs of kr rows of B (about 8 runs per compute unit, at
 * least 32 rows each), partial rows in the scratch buffer, then hb_gemv_final. */
static hb_status gemv_cpu(ocl_ctx *c, int var, int N, int K, cl_mem A, size_t a_off, size_t a_stride,
                          cl_mem B, size_t b_off, int ldb, size_t b_stride, cl_mem C, size_t c_off, size_t c_stride,
                          int batch)
{
    int want = 8 * (int)c->cus;
    int kr = (K + want - 1) / want;
    if (kr < 32) kr = 32;
    int nkb = (K + kr - 1) / kr;
    hb_status st;
    cl_mem part = ocl_scratch(c, OCL_SCRATCH_GEMM, (size_t)batch * (size_t)nkb * (size_t)N * sizeof(float), &st);
    if (!part) return st;
    cl_int e;
    cl_kernel kp = ocl_kernel(c, OCL_P_MATMUL, var, "hb_gemv_part", &e);
    if (!kp) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
    cl_kernel kf = ocl_kernel(c, OCL_P_MATMUL, var, "hb_gemv_final", &e);
    if (!kf) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
    cl_ulong ao = a_off, as = a_stride, bo = b_off, bs = b_stride, co = c_off, cs = c_stride;
    e = ocl_set_args(kp, 12, OCL_ARG(A), OCL_ARG(ao), OCL_ARG(as), OCL_ARG(B), OCL_ARG(bo),
                     OCL_ARG(ldb), OCL_ARG(bs), OCL_ARG(part), OCL_ARG(N), OCL_ARG(K),
                     OCL_ARG(kr), OCL_ARG(nkb));
    if (e != CL_SUCCESS) return ocl_status(e);
    size_t g[2] = {(size_t)nkb, (size_t)batch}, l[2] = {1, 1};
    if ((e = ocl_launch(c, kp, 2, g, l)) != CL_SUCCESS) return ocl_status(e);
    e = ocl_set_args(kf, 6, OCL_ARG(part), OCL_ARG(C), OCL_ARG(co), OCL_ARG(cs), OCL_ARG(N), OCL_ARG(nkb));
    if (e != CL_SUCCESS) return ocl_status(e);
    size_t gf[2] = {((size_t)N + 63) / 64 * 64, (size_t)batch}, lf[2] = {64, 1};
    return ocl_status(ocl_launch(c, kf, 2, gf, lf));
}

hb_status ocl_gemm(ocl_ctx *c, int var, int M, int N, int K,
                   cl_mem A, size_t a_off, int lda, size_t a_stride,
                   cl_mem B, size_t b_off, int ldb, size_t b_stride,
                   cl_mem C, size_t c_off, int ldc, size_t c_stride, int batch)
{
    if (M <= 0 || N <= 0 || K <= 0 || batch <= 0) return HB_EINVAL;
#if HB_HAVE_CLBLAST
    if (c->mm_impl == OCL_MM_CLBLAST && var == 0) {
        cl_event *mk = ocl_ev_slot(c);
        cl_int e = OCL_CHECK(clEnqueueMarkerWithWaitList(c->q, 0, NULL, mk));
        ocl_ev_done(c, mk, e);
        if (e != CL_SUCCESS) return ocl_status(e);
        cl_event *ev = ocl_ev_slot(c);
        CLBlastStatusCode s;
        if (batch == 1)
            s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)M, (size_t)N, (size_t)K,
                             1.0f, A, a_off, (size_t)lda, B, b_off, (size_t)ldb, 0.0f, C, c_off, (size_t)ldc, &c->q, ev);
        else
            s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)M,
                                           (size_t)N, (size_t)K, 1.0f, A, a_off, (size_t)lda, a_stride, B, b_off,
                                           (size_t)ldb, b_stride, 0.0f, C, c_off, (size_t)ldc, c_stride, (size_t)batch,
                                           &c->q, ev);
        ocl_ev_done(c, ev, s == CLBlastSuccess ? CL_SUCCESS : CL_INVALID_OPERATION);
        return clblast_status(s, batch == 1 ? "CLBlastSgemm" : "CLBlastSgemmStridedBatched");
    }
#endif
    cl_int e;
    cl_ulong ao = a_off, as = a_stride, bo = b_off, bs = b_stride, co = c_off, cs = c_stride;
    if (!c->cpu_style) {
        cl_kernel k = ocl_kernel(c, OCL_P_MATMUL, var, "hb_mm_local", &e);
        if (!k) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
        e = ocl_set_args(k, 15, OCL_ARG(A), OCL_ARG(ao), OCL_ARG(lda), OCL_ARG(as),
                         OCL_ARG(B), OCL_ARG(bo), OCL_ARG(ldb), OCL_ARG(bs),
                         OCL_ARG(C), OCL_ARG(co), OCL_ARG(ldc), OCL_ARG(cs),
                         OCL_ARG(M), OCL_ARG(N), OCL_ARG(K));
        if (e != CL_SUCCESS) return ocl_status(e);
        size_t g[3] = {((size_t)N + 15) / 16 * 16, ((size_t)M + 15) / 16 * 16, (size_t)batch}, l[3] = {16, 16, 1};
        return ocl_status(ocl_launch(c, k, 3, g, l));
    }
    if (M == 1) return gemv_cpu(c, var, N, K, A, a_off, a_stride, B, b_off, ldb, b_stride, C, c_off, c_stride, batch);
    /* CPU style: 8 x 32 blocks, K in blocks of 512 accumulated in C (f32 storage only: an f16 C
     * would round the partial sums) */
    const int rm = 8, cw = 32;
    const int kb = var == 0 && K > 768 ? 512 : K;
    cl_kernel k = ocl_kernel(c, OCL_P_MATMUL, var, "hb_mm_cpu", &e);
    if (!k) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
    e = ocl_set_args(k, 15, OCL_ARG(A), OCL_ARG(ao), OCL_ARG(lda), OCL_ARG(as),
                     OCL_ARG(B), OCL_ARG(bo), OCL_ARG(ldb), OCL_ARG(bs),
                     OCL_ARG(C), OCL_ARG(co), OCL_ARG(ldc), OCL_ARG(cs),
                     OCL_ARG(M), OCL_ARG(N), OCL_ARG(K));
    if (e == CL_SUCCESS) e = OCL_CHECK(clSetKernelArg(k, 16, sizeof kb, &kb));  /* args 15, 17: k0, acc_in */
    if (e != CL_SUCCESS) return ocl_status(e);
    size_t g[3] = {((size_t)M + rm - 1) / rm, ((size_t)N + cw - 1) / cw, (size_t)batch}, l[3] = {1, 1, 1};
    for (int k0 = 0; k0 < K && e == CL_SUCCESS; k0 += kb) {
        int acc = k0 > 0;
        e = clSetKernelArg(k, 15, sizeof k0, &k0);
        if (e == CL_SUCCESS) e = clSetKernelArg(k, 17, sizeof acc, &acc);
        if (OCL_CHECK(e) == CL_SUCCESS) e = ocl_launch(c, k, 3, g, l);
    }
    return ocl_status(e);
}
