/*
 * ocl_convert.c - mode `convert-device` (backend.h upload_f64/download_f64): the f64 host tensor
 * crosses to the device as f64 (8 bytes/element) into the instance scratch buffer, and a kernel of
 * hb_convert.cl converts it there into the buffer's storage type; the reverse for outputs. The
 * copy and the conversion are timed separately with their own profiling events (and also join the
 * timer's list when a timer_begin is open).
 */
#include "opencl/ocl.h"

#include <string.h>

void ocl_ev_keep(ocl_ctx *c, cl_event e)
{
    if (!e) return;
    cl_event *slot = ocl_ev_slot(c);
    if (slot) *slot = e;
    else clReleaseEvent(e);
}

static hb_status ev_span(cl_event e, double *s)
{
    cl_ulong a = 0, b = 0;
    cl_int err = OCL_CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
    if (err == CL_SUCCESS) err = OCL_CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
    if (err != CL_SUCCESS) return ocl_status(err);
    *s = b > a ? (double)(b - a) * 1e-9 : 0;
    return HB_OK;
}

/* Storage variant of b for n elements: 0 f32, 1 f16, -1 mismatch. */
static int var_of(const hb_buf *b, size_t n)
{
    if (n == 0 || !b || !b->priv) return -1;
    if (b->bytes == 4 * n) return 0;
    if (b->bytes == 2 * n) return 1;
    return -1;
}

static hb_status convert(ocl_ctx *c, const char *name, cl_mem src, cl_mem dst, size_t n, double *convert_s)
{
    cl_int e;
    cl_kernel k = ocl_kernel(c, OCL_P_CONVERT, 0, name, &e);
    if (!k) return ocl_status(e) == HB_OK ? HB_EDEVICE : ocl_status(e);
    cl_ulong nn = n;
    e = ocl_set_args(k, 3, OCL_ARG(src), OCL_ARG(dst), OCL_ARG(nn));
    if (e != CL_SUCCESS) return ocl_status(e);
    size_t l = 256, g = (n + l - 1) / l * l;
    cl_event ev = NULL;
    e = OCL_CHECK(clEnqueueNDRangeKernel(c->q, k, 1, NULL, &g, &l, 0, NULL, &ev));
    if (e == CL_SUCCESS) e = OCL_CHECK(clWaitForEvents(1, &ev));
    hb_status st = ocl_status(e);
    if (st == HB_OK) st = ev_span(ev, convert_s);
    if (ev) ocl_ev_keep(c, ev);
    return st;
}

hb_status ocl_upload_f64(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *convert_s)
{
    ocl_ctx *c = inst->ctx;
    *copy_s = *convert_s = 0;
    if (!c->fp64) return HB_ESKIP;
    int var = var_of(b, n);
    if (var < 0 || !src) return HB_EINVAL;
    hb_status st = ocl_buf_to_device(c, b);
    if (st != HB_OK) return st;
    cl_mem s = ocl_scratch(c, OCL_SCRATCH_OP, n * sizeof(double), &st);
    if (!s) return st;
    cl_event ev = NULL;
    cl_int e = OCL_CHECK(clEnqueueWriteBuffer(c->q, s, CL_TRUE, 0, n * sizeof(double), src, 0, NULL, &ev));
    st = ocl_status(e);
    if (st == HB_OK) st = ev_span(ev, copy_s);
    if (ev) ocl_ev_keep(c, ev);
    if (st != HB_OK) return st;
    return convert(c, var ? "hb_cvt_f64_f16" : "hb_cvt_f64_f32", s, ((ocl_buf *)b->priv)->dev, n, convert_s);
}

hb_status ocl_download_f64(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *convert_s)
{
    ocl_ctx *c = inst->ctx;
    *copy_s = *convert_s = 0;
    if (!c->fp64) return HB_ESKIP;
    int var = var_of(b, n);
    if (var < 0 || !dst) return HB_EINVAL;
    hb_status st = ocl_buf_to_device(c, b);
    if (st != HB_OK) return st;
    cl_mem s = ocl_scratch(c, OCL_SCRATCH_OP, n * sizeof(double), &st);
    if (!s) return st;
    st = convert(c, var ? "hb_cvt_f16_f64" : "hb_cvt_f32_f64", ((ocl_buf *)b->priv)->dev, s, n, convert_s);
    if (st != HB_OK) return st;
    cl_event ev = NULL;
    cl_int e = OCL_CHECK(clEnqueueReadBuffer(c->q, s, CL_TRUE, 0, n * sizeof(double), dst, 0, NULL, &ev));
    st = ocl_status(e);
    if (st == HB_OK) st = ev_span(ev, copy_s);
    if (ev) ocl_ev_keep(c, ev);
    return st;
}
