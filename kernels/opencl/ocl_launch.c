/*
 * ocl_launch.c - what every OpenCL op file uses to put work on the queue (opencl/ocl.h): kernel
 * arguments and launches, the events the device-event timer collects (timer_begin/timer_end: max(END)
 * - min(START) over them, CL_PROFILING_COMMAND_*), and per-instance scratch memory. Below
 * ocl_backend.c, ocl_run.c, ocl_matmul.c, ocl_convert.c and ocl_ceilings.c, which all call it.
 */
#include "opencl/ocl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>

#define CTX(inst) ((ocl_ctx *)(inst)->ctx)

/* ---- events ---- */

cl_event *ocl_ev_slot(ocl_ctx *c)
{
    if (!c->timing) return NULL;
    if (c->nev == c->evcap) {
        int cap = c->evcap ? 2 * c->evcap : 64;
        cl_event *v = realloc(c->ev, sizeof *v * (size_t)cap);
        if (!v) return NULL;  /* out of host memory: this command goes untimed (logged below) */
        c->ev = v;
        c->evcap = cap;
    }
    cl_event *s = &c->ev[c->nev++];
    *s = NULL;
    return s;
}

void ocl_ev_done(ocl_ctx *c, cl_event *slot, cl_int err)
{
    if (slot && err != CL_SUCCESS && slot == &c->ev[c->nev - 1]) {
        *slot = NULL;
        c->nev--;
    }
}

void ocl_ev_release_all(ocl_ctx *c)
{
    for (int i = 0; i < c->nev; i++)
        if (c->ev[i]) clReleaseEvent(c->ev[i]);
    c->nev = 0;
}

cl_int ocl_set_args(cl_kernel k, int nargs, ...)
{
    va_list ap;
    va_start(ap, nargs);
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < nargs; i++) {
        size_t sz = va_arg(ap, size_t);
        const void *p = va_arg(ap, const void *);
        cl_int r = clSetKernelArg(k, (cl_uint)i, sz, p);
        if (r != CL_SUCCESS && e == CL_SUCCESS) {
            e = r;
            fprintf(stderr, "hybench opencl: clSetKernelArg(arg %d, size %zu) failed: %s (%d)\n", i, sz, ocl_errname(r), (int)r);
        }
    }
    va_end(ap);
    return e;
}

cl_int ocl_launch(ocl_ctx *c, cl_kernel k, cl_uint dims, const size_t *gws, const size_t *lws)
{
    cl_event *ev = ocl_ev_slot(c);
    cl_int e = OCL_CHECK(clEnqueueNDRangeKernel(c->q, k, dims, NULL, gws, lws, 0, NULL, ev));
    ocl_ev_done(c, ev, e);
    return e;
}

hb_status ocl_timer_begin(hb_instance *inst)
{
    ocl_ctx *c = CTX(inst);
    ocl_ev_release_all(c);
    c->timing = 1;
    return HB_OK;
}

hb_status ocl_timer_end(hb_instance *inst, double *seconds)
{
    ocl_ctx *c = CTX(inst);
    *seconds = 0;
    cl_int e = OCL_CHECK(clFinish(c->q));
    c->timing = 0;
    cl_ulong t0 = ULONG_MAX, t1 = 0;
    int n = 0;
    for (int i = 0; i < c->nev && e == CL_SUCCESS; i++) {
        if (!c->ev[i]) continue;
        cl_ulong s, en;
        e = OCL_CHECK(clGetEventProfilingInfo(c->ev[i], CL_PROFILING_COMMAND_START, sizeof s, &s, NULL));
        if (e == CL_SUCCESS) e = OCL_CHECK(clGetEventProfilingInfo(c->ev[i], CL_PROFILING_COMMAND_END, sizeof en, &en, NULL));
        if (e != CL_SUCCESS) break;
        if (s < t0) t0 = s;
        if (en > t1) t1 = en;
        n++;
    }
    ocl_ev_release_all(c);
    if (e != CL_SUCCESS) return ocl_status(e);
    if (n > 0 && t1 > t0) *seconds = (double)(t1 - t0) * 1e-9;
    return HB_OK;
}

/* ---- scratch ---- */

cl_mem ocl_scratch(ocl_ctx *c, int slot, size_t bytes, hb_status *st)
{
    *st = HB_OK;
    if (slot < 0 || slot >= OCL_SCRATCH_COUNT) { *st = HB_EINVAL; return NULL; }
    if (bytes == 0) bytes = 64;
    if (c->scratch[slot] && c->scratch_bytes[slot] >= bytes) return c->scratch[slot];
    if (c->scratch[slot]) {
        clReleaseMemObject(c->scratch[slot]);
        c->dev_allocated -= (int64_t)c->scratch_bytes[slot];
        c->scratch[slot] = NULL;
        c->scratch_bytes[slot] = 0;
    }
    if (bytes > c->max_alloc) { *st = HB_ENOMEM; return NULL; }
    cl_int e;
    c->scratch[slot] = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (OCL_CHECK(e)) { c->scratch[slot] = NULL; *st = ocl_status(e); return NULL; }
    c->scratch_bytes[slot] = bytes;
    c->dev_allocated += (int64_t)bytes;
    return c->scratch[slot];
}
