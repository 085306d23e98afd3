/*
 * hb_convert.cl - device-side conversion for mode `convert-device` (ocl_convert.c): f64 tensors
 * uploaded as they are and converted on the device into the compute storage type, and back.
 * f64 -> f32 rounds to nearest even (as a C cast); f64 -> f16 goes through f32 (as harness/core/convert.h)
 * with round-to-nearest-even stores. Built only for devices with cl_khr_fp64 (HB_HALF is 0 here;
 * the f16 side uses the core vload_half/vstore_half). One element per work-item, global ceil(n/256)*256.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void hb_cvt_f64_f32(__global const double *src, __global float *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n) dst[i] = (float)src[i];
}
__kernel void hb_cvt_f64_f16(__global const double *src, __global half *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n) vstore_half_rte((float)src[i], i, dst);
}
__kernel void hb_cvt_f32_f64(__global const float *src, __global double *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n) dst[i] = (double)src[i];
}
__kernel void hb_cvt_f16_f64(__global const half *src, __global double *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n) dst[i] = (double)vload_half(i, src);
}
