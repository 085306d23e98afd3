/*
 * hb_probe.cl - kernels of the ceiling probes (ocl_ceilings.c): a copy kernel for the device memory
 * bandwidth (BabelStream "Copy": bytes read + written) and long chains of independent FMAs for the
 * peak FLOP rate (each fma counts 2 FLOPs). Always f32 storage (HB_HALF is 0 for this program).
 */

/* dst[i] = src[i], four elements per work-item. Launch: global n/4 (n a multiple of 4). */
__kernel void hb_copy(__global const float4 *src, __global float4 *dst)
{
    const size_t i = get_global_id(0);
    dst[i] = src[i];
}

/* 8 independent chains of float8 FMAs, iters iterations each: 2 * 8 * 8 * iters FLOPs per
 * work-item. The result is stored so the compiler cannot drop the chains. */
#define HB_FMA8(T, x) x##0 = fma(x##0, b, c); x##1 = fma(x##1, b, c); x##2 = fma(x##2, b, c); \
    x##3 = fma(x##3, b, c); x##4 = fma(x##4, b, c); x##5 = fma(x##5, b, c);                   \
    x##6 = fma(x##6, b, c); x##7 = fma(x##7, b, c);
__kernel void hb_peak_f32(__global float *out, int iters, float b, float c)
{
    const size_t gid = get_global_id(0);
    float8 s = (float8)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f) * (float)(gid & 7) * 1e-3f;
    float8 a0 = s, a1 = s + 0.1f, a2 = s + 0.2f, a3 = s + 0.3f, a4 = s + 0.4f, a5 = s + 0.5f,
           a6 = s + 0.6f, a7 = s + 0.7f;
    for (int it = 0; it < iters; it++) { HB_FMA8(float8, a) }
    float8 r = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    out[gid] = r.s0 + r.s1 + r.s2 + r.s3 + r.s4 + r.s5 + r.s6 + r.s7;
}

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
/* The same in half arithmetic (device has cl_khr_fp16): 2 * 8 * 8 * iters FLOPs per work-item. */
__kernel void hb_peak_f16(__global float *out, int iters, float bf, float cf)
{
    const size_t gid = get_global_id(0);
    const half b = (half)bf, c = (half)cf;
    half8 s = (half8)((half)(gid & 7)) * (half)0.001f;
    half8 a0 = s, a1 = s + (half)0.1f, a2 = s + (half)0.2f, a3 = s + (half)0.3f, a4 = s + (half)0.4f,
          a5 = s + (half)0.5f, a6 = s + (half)0.6f, a7 = s + (half)0.7f;
    for (int it = 0; it < iters; it++) { HB_FMA8(half8, a) }
    half8 r = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    out[gid] = (float)(r.s0 + r.s1 + r.s2 + r.s3 + r.s4 + r.s5 + r.s6 + r.s7);
}
#endif
