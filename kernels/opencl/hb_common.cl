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
/* Alignment. OpenCL 1.2 (6.12.7) requires vload_halfN/vstore_halfN only to be 2-byte aligned, but
 * PoCL 3.1's x86 kernel libraries built for F16C (avx_f16c, avx2, avx512) implement N = 4 with an
 * access declared 8-byte aligned and N = 8, 16 with accesses declared 16-byte aligned. Where LLVM
 * does not fold such a load into vcvtph2ps (e.g. fmax on float16 for -mcpu=haswell) it emits
 * vmovdqa, which faults on a row that starts at an odd element (hb_red_max, f16, cols = 70001).
 * So in every kernel LD4/ST4 addresses are multiples of 8 bytes and LD8/ST8/LD16/ST16 addresses
 * multiples of 16 bytes (HB_ALIGNED(p, 16) tests it): rows that may start anywhere are peeled to
 * alignment, or go through LDV16/STV16, which take the built-in when the loop-invariant flag va is
 * 1 and else assemble the vector from vload_half2/vstore_half2_rte (2-byte accesses in every PoCL
 * library; slower, but correct). */
#define HB_ALIGNED(p, a) ((((size_t)(p)) & ((a) - 1)) == 0)
inline float16 hb_ldu16(const __global half *p)
{
    return (float16)(vload_half2(0, p), vload_half2(1, p), vload_half2(2, p), vload_half2(3, p),
                     vload_half2(4, p), vload_half2(5, p), vload_half2(6, p), vload_half2(7, p));
}
inline void hb_stu16(float16 v, __global half *p)
{
    vstore_half2_rte(v.s01, 0, p); vstore_half2_rte(v.s23, 1, p); vstore_half2_rte(v.s45, 2, p);
    vstore_half2_rte(v.s67, 3, p); vstore_half2_rte(v.s89, 4, p); vstore_half2_rte(v.sab, 5, p);
    vstore_half2_rte(v.scd, 6, p); vstore_half2_rte(v.sef, 7, p);
}
#define LDV16(va, i, p) ((va) ? LD16((i), (p)) : hb_ldu16((p) + 16 * (size_t)(i)))
#define STV16(va, v, i, p) ((va) ? ST16((v), (i), (p)) : hb_stu16((v), (p) + 16 * (size_t)(i)))
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
#define HB_ALIGNED(p, a) 1               /* f32 vloadN/vstoreN need only 4-byte alignment */
#define LDV16(va, i, p) LD16((i), (p))
#define STV16(va, v, i, p) ST16((v), (i), (p))
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
