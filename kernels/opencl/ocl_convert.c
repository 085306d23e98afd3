/*
 * ocl_convert.c - mode `convert-device` (backend.h f64_copy_in .. f64_copy_out): the f64 host tensor
 * crosses to the device as f64 (8 bytes/element) into the instance scratch buffer, and a kernel of
 * hb_convert.cl converts it there into the buffer's storage type; the reverse for outputs. Each
 * piece is blocking and enqueues its command with an event slot of the timer (ocl_launch.c), so the
 * driver's timer_begin/timer_end around a piece read that command's device span.
 */
#include "opencl/ocl.h"

#include <string.h>

/* Storage variant of b for n elements: 0 f32, 1 f16, -1 mismatch. */
static int var_of(const hb_buf *b, size_t n)
{
    if (n == 0 || !b || !b->priv) return -1;
    if (b->bytes == 4 * n) return 0;
    if (b->bytes == 2 * n) return 1;
    return -1;
}

/* The checks every piece makes and the scratch of n f64: NULL with *st set (HB_ESKIP without fp64,
 * HB_EINVAL for a buffer of another size or a NULL host pointer, the scratch's error). */
static cl_mem piece(hb_instance *inst, hb_buf *b, const void *host, int need_host, size_t n, int *var, hb_status *st)
{
    ocl_ctx *c = inst->ctx;
    if (!c->fp64) { *st = HB_ESKIP; return NULL; }
    *var = var_of(b, n);
    if (*var < 0 || (need_host && !host)) { *st = HB_EINVAL; return NULL; }
    if ((*st = ocl_buf_to_device(c, b)) != HB_OK) return NULL;
    return ocl_scratch(c, OCL_SCRATCH_OP, n * sizeof(double), st);
}

static hb_status convert(ocl_ctx *c, const char *name, cl_mem src, cl_mem dst, size_t n)
{
    cl_int e;
    cl_kernel k = ocl_kernel(c, OCL_P_CONVERT, 0, name, &e);
    if (!k) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
    cl_ulong nn = n;
    e = ocl_set_args(k, 3, OCL_ARG(src), OCL_ARG(dst), OCL_ARG(nn));
    if (e != CL_SUCCESS) return ocl_status(e);
    size_t l = 256, g = (n + l - 1) / l * l;
    e = ocl_launch(c, k, 1, &g, &l);
    if (e == CL_SUCCESS) e = OCL_CHECK(clFinish(c->q));
    return ocl_status(e);
}

hb_status ocl_f64_copy_in(hb_instance *inst, hb_buf *b, const double *src, size_t n)
{
    ocl_ctx *c = inst->ctx;
    hb_status st;
    int var;
    cl_mem s = piece(inst, b, src, 1, n, &var, &st);
    if (!s) return st;
    cl_event *ev = ocl_ev_slot(c);
    cl_int e = OCL_CHECK(clEnqueueWriteBuffer(c->q, s, CL_TRUE, 0, n * sizeof(double), src, 0, NULL, ev));
    ocl_ev_done(c, ev, e);
    return ocl_status(e);
}

hb_status ocl_f64_convert_in(hb_instance *inst, hb_buf *b, size_t n)
{
    hb_status st;
    int var;
    cl_mem s = piece(inst, b, NULL, 0, n, &var, &st);
    if (!s) return st;
    return convert(inst->ctx, var ? "hb_cvt_f64_f16" : "hb_cvt_f64_f32", s, ((ocl_buf *)b->priv)->dev, n);
}

hb_status ocl_f64_convert_out(hb_instance *inst, hb_buf *b, size_t n)
{
    hb_status st;
    int var;
    cl_mem s = piece(inst, b, NULL, 0, n, &var, &st);
    if (!s) return st;
    return convert(inst->ctx, var ? "hb_cvt_f16_f64" : "hb_cvt_f32_f64", ((ocl_buf *)b->priv)->dev, s, n);
}

hb_status ocl_f64_copy_out(hb_instance *inst, hb_buf *b, double *dst, size_t n)
{
    ocl_ctx *c = inst->ctx;
    hb_status st;
    int var;
    cl_mem s = piece(inst, b, dst, 1, n, &var, &st);
    if (!s) return st;
    cl_event *ev = ocl_ev_slot(c);
    cl_int e = OCL_CHECK(clEnqueueReadBuffer(c->q, s, CL_TRUE, 0, n * sizeof(double), dst, 0, NULL, ev));
    ocl_ev_done(c, ev, e);
    return ocl_status(e);
}
