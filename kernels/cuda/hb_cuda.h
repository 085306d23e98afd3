/*
 * hb_cuda.h - public extras of the CUDA backend plugin (build/hb_cuda.so) beyond hb_cuda_ops.
 *
 * The plugin is loaded with dlopen by harness/measure/registry.c; these functions are exported with C
 * linkage so the driver can look them up with dlsym(handle, "hb_cuda_upload_f64_convert") and use
 * them for the "convert-device" variant of `convert` mode (upload f64, convert on the GPU), which is
 * measured beside the host conversion because it is a real design option for a library that stores
 * f64 tensors: it moves twice the bytes over the bus but spends no host time converting.
 *
 * Typedefs of the function types are given so the caller can cast dlsym's result.
 */
#ifndef HB_CUDA_H
#define HB_CUDA_H
#include <stddef.h>
#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy n f64 values from host memory host_f64 into a device scratch buffer (grown on demand,
 * owned by the instance, counted in mem_info's allocated bytes), then convert them on the GPU into
 * dst->dev in `dtype` (f32/tf32 -> f32 round to nearest; f16/bf16 round to nearest even).
 * dst must come from this instance's buf_alloc and hold n * hb_dtype_size(dtype) bytes; for the
 * mapped route the converted values are written through the device alias into host memory.
 * Blocking: done when it returns. host_f64 stays owned by the caller; if it is page-locked the copy
 * is a DMA, else the CUDA driver stages it (as cudaMemcpy does for pageable memory).
 * Returns HB_OK; HB_EINVAL (NULL pointer, n == 0, dst too small); HB_ENOMEM (scratch allocation
 * failed); HB_EDEVICE (a CUDA call failed, or the instance had a sticky error earlier). */
hb_status hb_cuda_upload_f64_convert(hb_instance *inst, hb_buf *dst, hb_dtype dtype, const double *host_f64,
                                     size_t n);
typedef hb_status (*hb_cuda_upload_f64_convert_fn)(hb_instance *, hb_buf *, hb_dtype, const double *, size_t);

/* The reverse: convert src->dev (n values of `dtype`) to f64 on the GPU into device scratch, then
 * copy the n f64 values to host_f64 (caller-owned, n * 8 bytes). Same errors as above. */
hb_status hb_cuda_download_convert_f64(hb_instance *inst, hb_buf *src, hb_dtype dtype, double *host_f64, size_t n);
typedef hb_status (*hb_cuda_download_convert_f64_fn)(hb_instance *, hb_buf *, hb_dtype, double *, size_t);

#ifdef __cplusplus
}
#endif
#endif
