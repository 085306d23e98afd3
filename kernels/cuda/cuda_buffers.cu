/*
 * cuda_buffers.cu - the CUDA backend's buffers and transfers: buf_alloc/buf_free for the three
 * routes (pageable: malloc'd host memory + cudaMalloc; pinned: cudaHostAlloc + cudaMalloc; mapped:
 * cudaHostAllocMapped, the device alias of the host memory), upload/download (cudaMemcpyAsync on the
 * instance's stream, then synchronized; nothing to copy on the mapped route), and convert-device's
 * upload_f64/download_f64 with the exported helpers of hb_cuda.h (f64 copied, converted on the GPU).
 */
#include "cuda/cuda_internal.h"
#include "cuda/hb_cuda.h"

#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ buffers */

struct hbc_bufpriv { size_t dev_bytes; };

hb_status cuda_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!out || bytes == 0) return HB_EINVAL;
    memset(out, 0, sizeof *out);
    out->bytes = bytes;
    out->route = route;
    const size_t rounded = (bytes + 63) / 64 * 64;
    hb_status st;
    switch (route) {
    case HB_ROUTE_PAGEABLE:
        out->host = aligned_alloc(64, rounded);
        if (!out->host) return HB_ENOMEM;
        st = HBC_RT(c, cudaMalloc(&out->dev, rounded));
        if (st != HB_OK) { free(out->host); out->host = nullptr; return st; }
        c->dev_bytes += (int64_t)rounded;
        return HB_OK;
    case HB_ROUTE_PINNED:
        HBC_TRY(HBC_RT(c, cudaHostAlloc(&out->host, rounded, cudaHostAllocDefault)));
        c->pinned_bytes += (int64_t)rounded;
        st = HBC_RT(c, cudaMalloc(&out->dev, rounded));
        if (st != HB_OK) { cudaFreeHost(out->host); c->pinned_bytes -= (int64_t)rounded; out->host = nullptr; return st; }
        c->dev_bytes += (int64_t)rounded;
        return HB_OK;
    case HB_ROUTE_MAPPED:
        HBC_TRY(HBC_RT(c, cudaHostAlloc(&out->host, rounded, cudaHostAllocMapped)));
        c->pinned_bytes += (int64_t)rounded;
        st = HBC_RT(c, cudaHostGetDevicePointer(&out->dev, out->host, 0));
        if (st != HB_OK) { cudaFreeHost(out->host); c->pinned_bytes -= (int64_t)rounded; out->host = nullptr; return st; }
        return HB_OK;
    default:
        return HB_EINVAL;
    }
}

void cuda_buf_free(hb_instance *inst, hb_buf *b)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c || !b) return;
    cudaSetDevice(c->dev);
    const size_t rounded = (b->bytes + 63) / 64 * 64;
    switch (b->route) {
    case HB_ROUTE_PAGEABLE:
        free(b->host);
        if (b->dev) { cudaFree(b->dev); c->dev_bytes -= (int64_t)rounded; }
        break;
    case HB_ROUTE_PINNED:
        if (b->host) { cudaFreeHost(b->host); c->pinned_bytes -= (int64_t)rounded; }
        if (b->dev) { cudaFree(b->dev); c->dev_bytes -= (int64_t)rounded; }
        break;
    case HB_ROUTE_MAPPED:
        if (b->host) { cudaFreeHost(b->host); c->pinned_bytes -= (int64_t)rounded; }
        break;
    default:
        break;
    }
    if (!c->sticky) (void)cudaGetLastError();
    memset(b, 0, sizeof *b);
}

hb_status cuda_upload(hb_instance *inst, hb_buf *b)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b || !b->host || !b->dev) return HB_EINVAL;
    if (b->route == HB_ROUTE_MAPPED) return HB_OK;
    HBC_TRY(tmark_begin(c));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice, c->stream)));
    HBC_TRY(tmark_end(c));
    return sync(c);
}

hb_status cuda_download(hb_instance *inst, hb_buf *b)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b || !b->host || !b->dev) return HB_EINVAL;
    if (b->route == HB_ROUTE_MAPPED) return sync(c); /* kernels wrote host memory directly */
    HBC_TRY(tmark_begin(c));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(b->host, b->dev, b->bytes, cudaMemcpyDeviceToHost, c->stream)));
    HBC_TRY(tmark_end(c));
    return sync(c);
}

/* ------------------------------------------------------------------ convert-device */

static hb_status ev_ms(hbc_ctx *c, cudaEvent_t a, cudaEvent_t b, double *sec)
{
    float ms = 0.0f;
    HBC_TRY(HBC_RT(c, cudaEventElapsedTime(&ms, a, b)));
    if (sec) *sec = (double)ms * 1e-3;
    return HB_OK;
}

/* f64 host -> device scratch (copy), then scratch -> dst->dev in dt (kernel); device times of each. */
static hb_status f64_up(hbc_ctx *c, hb_buf *dst, hb_dtype dt, const double *src, size_t n, double *copy_s, double *conv_s)
{
    if (!dst || !dst->dev || !src || n == 0 || dst->bytes < n * hbc_esize(dt)) return HB_EINVAL;
    HBC_TRY(hbc_grow(c, &c->scratch, &c->scratch_bytes, n * sizeof(double)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(c->scratch, src, n * sizeof(double), cudaMemcpyHostToDevice, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_b, c->stream)));
    HBC_TRY(hbc_from_f64(c, hbc_elem_of(dt), (const double *)c->scratch, dst->dev, (int64_t)n));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_c, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_c)));
    HBC_TRY(ev_ms(c, c->ev_a, c->ev_b, copy_s));
    return ev_ms(c, c->ev_b, c->ev_c, conv_s);
}

static hb_status f64_down(hbc_ctx *c, hb_buf *src, hb_dtype dt, double *dst, size_t n, double *copy_s, double *conv_s)
{
    if (!src || !src->dev || !dst || n == 0 || src->bytes < n * hbc_esize(dt)) return HB_EINVAL;
    HBC_TRY(hbc_grow(c, &c->scratch, &c->scratch_bytes, n * sizeof(double)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_a, c->stream)));
    HBC_TRY(hbc_to_f64(c, hbc_elem_of(dt), src->dev, (double *)c->scratch, (int64_t)n));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_b, c->stream)));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(dst, c->scratch, n * sizeof(double), cudaMemcpyDeviceToHost, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_c, c->stream)));
    HBC_TRY(HBC_RT(c, cudaEventSynchronize(c->ev_c)));
    HBC_TRY(ev_ms(c, c->ev_a, c->ev_b, conv_s));
    return ev_ms(c, c->ev_b, c->ev_c, copy_s);
}

/* The buffer's element type: hb_buf.dtype, set by the driver after buf_alloc. */
static hb_dtype buf_dtype(const hbc_ctx *c, const hb_buf *b, size_t n)
{
    (void)c;
    if (n == 0 || b->bytes / n >= 4) return HB_F32;
    return b->dtype == HB_BF16 ? HB_BF16 : HB_F16;
}

hb_status cuda_upload_f64(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *conv_s)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b) return HB_EINVAL;
    return f64_up(c, b, buf_dtype(c, b, n), src, n, copy_s, conv_s);
}

hb_status cuda_download_f64(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *conv_s)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!b) return HB_EINVAL;
    return f64_down(c, b, buf_dtype(c, b, n), dst, n, copy_s, conv_s);
}

extern "C" hb_status hb_cuda_upload_f64_convert(hb_instance *inst, hb_buf *dst, hb_dtype dtype, const double *host_f64,
                                                size_t n)
{
    hbc_ctx *c;
    if (!inst || (int)dtype < 0 || dtype >= HB_DTYPE_COUNT) return HB_EINVAL;
    HBC_TRY(enter(inst, &c));
    return f64_up(c, dst, dtype, host_f64, n, nullptr, nullptr);
}

extern "C" hb_status hb_cuda_download_convert_f64(hb_instance *inst, hb_buf *src, hb_dtype dtype, double *host_f64,
                                                  size_t n)
{
    hbc_ctx *c;
    if (!inst || (int)dtype < 0 || dtype >= HB_DTYPE_COUNT) return HB_EINVAL;
    HBC_TRY(enter(inst, &c));
    return f64_down(c, src, dtype, host_f64, n, nullptr, nullptr);
}
