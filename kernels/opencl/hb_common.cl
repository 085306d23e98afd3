/*
 * hb_common.cl - prepended by the OpenCL backend (ocl_program.c) to every other .cl file of this
 * directory before it is built. Not a program of its own.
 *
 * Build-time macros set by the host (ocl_program.c):
 *   HB_HALF       0: tensors are f32 in memory; 1: tensors are f16 (IEEE binary16) in memory.
 *                 Arithmetic is always f32 (loads widen with vload_half*, stores round to nearest
 *                 even with vstore_half*_rte); both are core OpenCL 1.2, so the f16 storage path
 *                 builds on any device. The host only runs it where cl_khr_fp16 is reported (or
 *                 under HB_OPENCL_FORCE_F16=1 for tests).
 *   HB_CPU_STYLE  1: kernels for CPU devices (PoCL): one work-item walks a contiguous run of memory
 *                 with wide vector types; 0: GPU style (work-group cooperation, coalesced access).
 * Element indices are size_t; shape dimensions are int (every dimension < 2^31, checked by the host).
 */
#ifndef HB_HALF
#define HB_HALF 0
#endif
#ifndef HB_CPU_STYLE
#define HB_CPU_STYLE 1
#endif

#if HB_HALF
typedef half TS;                         /* storage type */
#define LD1(i, p) vload_half((i), (p))
#define ST1(v, i, p) vstore_half_rte((v), (i), (p))
#define LD4(i, p) vload_half4((i), (p))
#define ST4(v, i, p) vstore_half4_rte((v), (i), (p))
#define LD8(i, p) vload_half8((i), (p))
#define ST8(v, i, p) vstore_half8_rte((v), (i), (p))
#define LD16(i, p) vload_half16((i), (p))
#define ST16(v, i, p) vstore_half16_rte((v), (i), (p))
#else
typedef float TS;
#define LD1(i, p) ((p)[i])
#define ST1(v, i, p) ((p)[i] = (v))
#define LD4(i, p) vload4((i), (p))
#define ST4(v, i, p) vstore4((v), (i), (p))
#define LD8(i, p) vload8((i), (p))
#define ST8(v, i, p) vstore8((v), (i), (p))
#define LD16(i, p) vload16((i), (p))
#define ST16(v, i, p) vstore16((v), (i), (p))
#endif

/* Horizontal sum and max of a float16. */
inline float hb_hsum16(float16 v)
{
    float8 a = v.lo + v.hi;
    float4 b = a.lo + a.hi;
    float2 c = b.lo + b.hi;
    return c.x + c.y;
}
inline float hb_hmax16(float16 v)
{
    float8 a = fmax(v.lo, v.hi);
    float4 b = fmax(a.lo, a.hi);
    float2 c = fmax(b.lo, b.hi);
    return fmax(c.x, c.y);
}
