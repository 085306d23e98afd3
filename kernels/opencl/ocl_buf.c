/*
 * ocl_buf.c - the OpenCL backend's buffers and transfer routes (ocl.h): ocl_buf_alloc/ocl_buf_free,
 * ocl_upload/ocl_download (the backend's upload and download hooks) and ocl_buf_to_device, which the
 * conversion and run paths call before a kernel reads a buffer.
 *
 * Routes (hb_buf.host is what the driver reads and writes; hb_buf.dev is the cl_mem kernels use):
 *   pageable  host: aligned_alloc(64); dev: clCreateBuffer. upload/download: blocking
 *             clEnqueueWriteBuffer/ReadBuffer from/to the ordinary host memory.
 *   pinned    host: a CL_MEM_ALLOC_HOST_PTR staging buffer, mapped once for the buffer's life (the
 *             pinned-memory pattern of NVIDIA's OpenCL best-practices guide); dev: clCreateBuffer.
 *             upload/download: blocking Write/ReadBuffer between the two.
 *   mapped    host: aligned_alloc(4096) (size rounded up to 4096); dev: CL_MEM_USE_HOST_PTR over it.
 *             The buffer is mapped while the host owns it: upload = clEnqueueUnmapMemObject,
 *             download = clEnqueueMapBuffer(READ|WRITE), which returns the same pointer (OpenCL 1.2
 *             sec. 5.4.2: the pointer is derived from host_ptr). On a device that shares host memory
 *             (CL_DEVICE_HOST_UNIFIED_MEMORY, or a CPU device such as PoCL) neither copies: zero-copy.
 */
#include "opencl/ocl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CTX(inst) ((ocl_ctx *)(inst)->ctx)

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

void ocl_buf_free(hb_instance *inst, hb_buf *b)
{
    ocl_ctx *c = CTX(inst);
    ocl_buf *p = b ? b->priv : NULL;
    if (!p) return;
    if (p->pinned) {
        if (b->host) OCL_CHECK(clEnqueueUnmapMemObject(c->q, p->pinned, b->host, 0, NULL, NULL));
        clFinish(c->q);
        clReleaseMemObject(p->pinned);
    }
    if (p->dev) {
        if (b->route == HB_ROUTE_MAPPED && p->host_owns) {
            OCL_CHECK(clEnqueueUnmapMemObject(c->q, p->dev, b->host, 0, NULL, NULL));
            clFinish(c->q);
        }
        clReleaseMemObject(p->dev);
    }
    c->dev_allocated -= (int64_t)p->dev_bytes;
    free(p->host_alloc);
    free(p);
    memset(b, 0, sizeof *b);
}

hb_status ocl_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out)
{
    ocl_ctx *c = CTX(inst);
    memset(out, 0, sizeof *out);
    if (bytes == 0 || (unsigned)route >= HB_ROUTE_COUNT) return HB_EINVAL;
    if (bytes > c->max_alloc) return HB_ENOMEM;
    ocl_buf *p = calloc(1, sizeof *p);
    if (!p) return HB_ENOMEM;
    out->priv = p;
    out->bytes = bytes;
    out->route = route;
    cl_int e = CL_SUCCESS;
    hb_status st = HB_OK;
    switch (route) {
    case HB_ROUTE_PAGEABLE:
        p->host_alloc = aligned_alloc(64, round_up(bytes, 64));
        if (!p->host_alloc) { st = HB_ENOMEM; goto fail; }
        out->host = p->host_alloc;
        p->dev = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
        if (OCL_CHECK(e)) goto fail_cl;
        p->dev_bytes = bytes;
        break;
    case HB_ROUTE_PINNED: {
        p->pinned = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &e);
        if (OCL_CHECK(e)) { p->pinned = NULL; goto fail_cl; }
        void *h = clEnqueueMapBuffer(c->q, p->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e);
        if (OCL_CHECK(e)) goto fail_cl;
        out->host = h;
        if ((uintptr_t)h % 64) {
            fprintf(stderr, "hybench opencl: pinned staging pointer %p is not 64-byte aligned\n", h);
            st = HB_EDEVICE;
            goto fail;
        }
        p->dev = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
        if (OCL_CHECK(e)) { p->dev = NULL; goto fail_cl; }
        p->dev_bytes = bytes;
        break;
    }
    case HB_ROUTE_MAPPED: {
        p->host_alloc = aligned_alloc(4096, round_up(bytes, 4096));
        if (!p->host_alloc) { st = HB_ENOMEM; goto fail; }
        p->dev = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, p->host_alloc, &e);
        if (OCL_CHECK(e)) { p->dev = NULL; goto fail_cl; }
        void *h = clEnqueueMapBuffer(c->q, p->dev, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e);
        if (OCL_CHECK(e)) goto fail_cl;
        p->host_owns = 1;
        out->host = h;
        if (h != p->host_alloc) {
            fprintf(stderr, "hybench opencl: mapping a CL_MEM_USE_HOST_PTR buffer returned %p, not its host_ptr %p\n", h, p->host_alloc);
            st = HB_EDEVICE;
            goto fail;
        }
        break;
    }
    default: st = HB_EINVAL; goto fail;
    }
    c->dev_allocated += (int64_t)p->dev_bytes;
    return HB_OK;
fail_cl:
    st = ocl_status(e);
fail:
    c->dev_allocated += (int64_t)p->dev_bytes;  /* ocl_buf_free subtracts it */
    ocl_buf_free(inst, out);
    return st;
}

/* Blocking wait after a transfer command; returns the status. */
static hb_status finish(ocl_ctx *c, cl_int e)
{
    if (e == CL_SUCCESS) e = OCL_CHECK(clFinish(c->q));
    return ocl_status(e);
}

static hb_status map_for_host(ocl_ctx *c, hb_buf *b)
{
    ocl_buf *p = b->priv;
    cl_int e;
    cl_event *ev = ocl_ev_slot(c);
    void *h = clEnqueueMapBuffer(c->q, p->dev, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, b->bytes, 0, NULL, ev, &e);
    ocl_ev_done(c, ev, e);
    if (OCL_CHECK(e)) return ocl_status(e);
    p->host_owns = 1;
    if (h != b->host) {
        fprintf(stderr, "hybench opencl: re-mapping returned %p, not the buffer's host pointer %p\n", h, b->host);
        return HB_EDEVICE;
    }
    return HB_OK;
}

hb_status ocl_buf_to_device(ocl_ctx *c, hb_buf *b)
{
    ocl_buf *p = b->priv;
    if (!p) return HB_EINVAL;
    if (b->route != HB_ROUTE_MAPPED || !p->host_owns) return HB_OK;
    cl_event *ev = ocl_ev_slot(c);
    cl_int e = OCL_CHECK(clEnqueueUnmapMemObject(c->q, p->dev, b->host, 0, NULL, ev));
    ocl_ev_done(c, ev, e);
    if (e == CL_SUCCESS) p->host_owns = 0;
    return finish(c, e);
}

hb_status ocl_upload(hb_instance *inst, hb_buf *b)
{
    ocl_ctx *c = CTX(inst);
    ocl_buf *p = b->priv;
    if (!p) return HB_EINVAL;
    if (b->route == HB_ROUTE_MAPPED) return ocl_buf_to_device(c, b);
    cl_event *ev = ocl_ev_slot(c);
    cl_int e = OCL_CHECK(clEnqueueWriteBuffer(c->q, p->dev, CL_TRUE, 0, b->bytes, b->host, 0, NULL, ev));
    ocl_ev_done(c, ev, e);
    return finish(c, e);
}

hb_status ocl_download(hb_instance *inst, hb_buf *b)
{
    ocl_ctx *c = CTX(inst);
    ocl_buf *p = b->priv;
    if (!p) return HB_EINVAL;
    if (b->route == HB_ROUTE_MAPPED) {
        if (p->host_owns) return HB_OK;
        hb_status st = map_for_host(c, b);
        return st != HB_OK ? st : finish(c, CL_SUCCESS);
    }
    cl_event *ev = ocl_ev_slot(c);
    cl_int e = OCL_CHECK(clEnqueueReadBuffer(c->q, p->dev, CL_TRUE, 0, b->bytes, b->host, 0, NULL, ev));
    ocl_ev_done(c, ev, e);
    return finish(c, e);
}
