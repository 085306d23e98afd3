/*
 * ew_avx512.c - the AVX-512 body of the cpu backend's SLEEF elementwise ops (gelu, silu, ...), built into every x86-64
 * build and chosen at run time (hb_cpu_ew_isa), so that a binary built for AVX2 (the GPU machine's
 * x86-64-v3 bundle, or a user's -march of an older CPU) still runs the 16-wide loop on a CPU that
 * has AVX-512. The Makefile compiles this file alone with -mavx512f -mfma; nothing here runs unless
 * cpuid says AVX-512F (and the OS saves the ZMM state: __builtin_cpu_supports checks both).
 */
#include "cpu/cpu_priv.h"

#include <stdlib.h>
#include <string.h>

#if defined(HB_HAVE_SLEEF) && defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>
#include <sleef.h>

int64_t hb_cpu_ew_sleef_avx512(int fn, const float *restrict a, float *restrict o, int64_t i, int64_t n, int nt)
{
    const __m512 one = _mm512_set1_ps(1.0f), ml = _mm512_set1_ps(-HB_EW_L2E);
    const __m512 k0 = _mm512_set1_ps(HB_EW_GELU_K0), k1 = _mm512_set1_ps(HB_EW_GELU_K1);
    /* o = NUM / (1 + exp2(Y)) (cpu_priv.h HB_EW_FN_*) */
#define EW_LOOP(STORE, Y, NUM)                                                                    \
    for (; i + 16 <= n; i += 16) {                                                                \
        const __m512 x = _mm512_loadu_ps(a + i);                                                  \
        STORE(o + i, _mm512_div_ps(NUM, _mm512_add_ps(one, Sleef_exp2f16_u35(Y))));               \
    }
#define EW_SLEEF_LOOP(STORE)                                                                      \
    switch (fn) {                                                                                 \
    case HB_EW_FN_GELU: EW_LOOP(STORE, _mm512_mul_ps(x, _mm512_fmadd_ps(k1, _mm512_mul_ps(x, x), k0)), x) break; \
    case HB_EW_FN_SIGMOID: EW_LOOP(STORE, _mm512_mul_ps(ml, x), one) break;                     \
    default: EW_LOOP(STORE, _mm512_mul_ps(ml, x), x) break;                                       \
    }
    if (nt) {
        EW_SLEEF_LOOP(_mm512_stream_ps)
    } else {
        EW_SLEEF_LOOP(_mm512_storeu_ps)
    }
#undef EW_SLEEF_LOOP
#undef EW_LOOP
    return i;
}
#define HAVE_AVX512_BODY 1
#else
int64_t hb_cpu_ew_sleef_avx512(int fn, const float *restrict a, float *restrict o, int64_t i, int64_t n, int nt)
{
    (void)fn, (void)a, (void)o, (void)n, (void)nt;
    return i; /* never chosen: hb_cpu_ew_isa() does not return 512 in this build */
}
#define HAVE_AVX512_BODY 0
#endif

int hb_cpu_ew_isa(void)
{
    static int cached; /* isa + 1; 0 = not decided yet */
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v - 1;
    int isa = 0;
#if defined(HB_HAVE_SLEEF) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (HAVE_AVX512_BODY && __builtin_cpu_supports("avx512f"))
        isa = 512;
#if defined(__AVX2__) && defined(__FMA__)
    else
        isa = 256;
#endif
    const char *e = hb_cpu_cfg()->cpu_isa;
    if (e && !strcmp(e, "avx2") && isa == 512) {
#if defined(__AVX2__) && defined(__FMA__)
        isa = 256;
#else
        isa = 0;
#endif
    }
#endif
    __atomic_store_n(&cached, isa + 1, __ATOMIC_RELAXED);
    return isa;
}
