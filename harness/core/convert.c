/*
 * convert.c - host element type conversion (convert.h).
 *
 * Each (dst, src) pair has one serial kernel: a plain loop the compiler vectorizes at -O3
 * -march=native (f64<->f32, bf16 integer rounding), or F16C/AVX-512 intrinsics for half where the
 * build target has them (_mm256_cvtps_ph/_mm256_cvtph_ps, _mm512_cvtps_ph/_mm512_cvtph_ps), with a
 * portable bit-twiddling fallback. Arrays of HB_CONVERT_PAR_MIN elements or more are split over the
 * OpenMP threads: thread t of T takes the contiguous element range [n*t/T, n*(t+1)/T) rounded down
 * to a multiple of 16 elements (64 bytes of f32), i.e. the static schedule that the cpu backend's
 * first-touch of its buffers uses (kernels/cpu/cpu_backend.c), so on a NUMA host every thread
 * converts memory on its own node.
 *
 * Large outputs (HB_CONVERT_NT_MIN bytes of destination or more) are written with non-temporal
 * (streaming) stores where the target has AVX: the destination is not read into the cache first
 * (no write-allocate), which for f64->f32 cuts the traffic from 8+4+4 to 8+4 bytes per element.
 * f64<->f32 stream from registers; the half-precision pairs convert a 2 Ki-element block into an
 * L1-resident buffer and stream that out.
 * Measured on the 2-core EPYC (Zen 4) development VM, f64->f32 of 32 Mi elements (256 MiB in,
 * 128 MiB out): see the report; the threshold keeps cache-resident outputs on ordinary stores,
 * where streaming them would evict the result the next op is about to read.
 */
#include "core/convert.h"
#include "core/config.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__F16C__) || defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

/* Below this many elements, convert on the calling thread (convert.h: 64 Ki). */
#define HB_CONVERT_PAR_MIN ((size_t)64 * 1024)
/* Destination size from which streaming stores are used: 8 MiB, a quarter of the 32 MiB L3 of
 * the development host and more than any per-core L2; outputs this large do not stay cached for
 * the next op anyway. Overridable at run time with HB_CONVERT_NT_MIN (bytes; 0 = always,
 * "off" = never) for measurements. */
#define HB_CONVERT_NT_MIN_DEFAULT ((size_t)8 << 20)

typedef uint32_t hb_u32_alias __attribute__((may_alias));
typedef uint16_t hb_u16_alias __attribute__((may_alias));

size_t hb_elem_size(hb_elem e)
{
    switch (e) {
    case HB_ELEM_F64: return 8;
    case HB_ELEM_F32: return 4;
    case HB_ELEM_F16:
    case HB_ELEM_BF16: return 2;
    }
    return 0;
}

hb_elem hb_elem_of_dtype(hb_dtype d)
{
    switch (d) {
    case HB_F16: return HB_ELEM_F16;
    case HB_BF16: return HB_ELEM_BF16;
    case HB_F32:
    case HB_TF32:
    default: return HB_ELEM_F32;
    }
}

/* ---------------------------------------------------------------- scalar helpers ---- */

/* IEEE binary32 -> binary16, round to nearest even, NaN stays NaN (quiet bit set, top payload bits
 * kept: what vcvtps2ph does), overflow to +-inf. Method: the normal range re-biases the exponent
 * and rounds with the +0xfff+lsb trick; the subnormal range lets the FPU round by adding 0.5f,
 * whose ulp (2^-24) is the half subnormal step (as in Maratyszcza's FP16 library). */
uint16_t hb_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
    if (ax >= 0x477ff000u) /* >= 65520 = halfway between 65504 and 2^16: rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: half subnormal or zero */
        float af;
        memcpy(&af, &ax, 4);
        af += 0.5f;
        uint32_t r;
        memcpy(&r, &af, 4);
        return (uint16_t)(sign | (r - 0x3f000000u));
    }
    uint32_t odd = (ax >> 13) & 1u;
    ax += 0xc8000fffu + odd; /* exponent bias 127 -> 15 (-112 << 23), round half to even */
    return (uint16_t)(sign | (ax >> 13));
}

float hb_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu;
    uint32_t m = h & 0x3ffu;
    uint32_t r;
    if (e == 0) {
        float v = (float)m * 0x1p-24f; /* exact: m < 2^10 */
        memcpy(&r, &v, 4);
        r |= sign;
    } else if (e == 31) { /* inf, or NaN made quiet (as vcvtph2ps does) */
        r = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
    } else {
        r = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &r, 4);
    return f;
}

/* binary32 -> bfloat16 (upper 16 bits), round to nearest even; NaN kept NaN with the quiet bit. */
uint16_t hb_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float hb_bf16_to_f32(uint16_t h)
{
    uint32_t r = (uint32_t)h << 16;
    float f;
    memcpy(&f, &r, 4);
    return f;
}

/* ---------------------------------------------------------------- serial kernels ---- */
/* Each converts n elements; `nt` asks for streaming stores (ignored where not implemented). */
typedef void (*conv_fn)(void *dst, const void *src, size_t n, int nt);

static void k_copy(void *dst, const void *src, size_t n, int nt)
{
    (void)nt;
    memcpy(dst, src, n);   /* n is bytes for k_copy (see hb_convert) */
}

static void k_f64_f32(void *dst, const void *src, size_t n, int nt)
{
    float *restrict d = dst;
    const double *restrict s = src;
    size_t i = 0;
#if defined(__AVX512F__)
    if (nt) {
        for (; i < n && ((uintptr_t)(d + i) & 63u); i++)
            d[i] = (float)s[i];
        for (; i + 16 <= n; i += 16) {
            __m256 lo = _mm512_cvtpd_ps(_mm512_loadu_pd(s + i));
            __m256 hi = _mm512_cvtpd_ps(_mm512_loadu_pd(s + i + 8));
            __m512 v = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
            _mm512_stream_ps(d + i, v);
        }
        _mm_sfence();
    }
#elif defined(__AVX__)
    if (nt) {
        for (; i < n && ((uintptr_t)(d + i) & 31u); i++)
            d[i] = (float)s[i];
        for (; i + 8 <= n; i += 8) {
            __m128 lo = _mm256_cvtpd_ps(_mm256_loadu_pd(s + i));
            __m128 hi = _mm256_cvtpd_ps(_mm256_loadu_pd(s + i + 4));
            _mm256_stream_ps(d + i, _mm256_set_m128(hi, lo));
        }
        _mm_sfence();
    }
#else
    (void)nt;
#endif
    for (; i < n; i++)
        d[i] = (float)s[i];
}

static void k_f32_f64(void *dst, const void *src, size_t n, int nt)
{
    double *restrict d = dst;
    const float *restrict s = src;
    size_t i = 0;
#if defined(__AVX512F__)
    if (nt) {
        for (; i < n && ((uintptr_t)(d + i) & 63u); i++)
            d[i] = (double)s[i];
        for (; i + 8 <= n; i += 8)
            _mm512_stream_pd(d + i, _mm512_cvtps_pd(_mm256_loadu_ps(s + i)));
        _mm_sfence();
    }
#elif defined(__AVX__)
    if (nt) {
        for (; i < n && ((uintptr_t)(d + i) & 31u); i++)
            d[i] = (double)s[i];
        for (; i + 4 <= n; i += 4)
            _mm256_stream_pd(d + i, _mm256_cvtps_pd(_mm_loadu_ps(s + i)));
        _mm_sfence();
    }
#else
    (void)nt;
#endif
    for (; i < n; i++)
        d[i] = (double)s[i];
}

/* f32 -> f16 on a block, vectorized where F16C/AVX-512 exist. */
static void f32_to_f16_block(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(d + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#endif
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++)
        d[i] = hb_f32_to_f16(s[i]);
}

static void f16_to_f32_block(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(d + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(s + i))));
#endif
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s + i))));
#endif
    for (; i < n; i++)
        d[i] = hb_f16_to_f32(s[i]);
}

/* Branch-free bf16 rounding on 32-bit patterns: the compiler vectorizes this loop. */
static void f32_to_bf16_block(uint16_t *restrict d, const float *restrict s, size_t n)
{
    const hb_u32_alias *restrict x = (const hb_u32_alias *)(const void *)s;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = x[i];
        uint32_t r = (v + 0x7fffu + ((v >> 16) & 1u)) >> 16;
        uint32_t q = (v >> 16) | 0x40u;
        d[i] = (uint16_t)(((v & 0x7fffffffu) > 0x7f800000u) ? q : r);
    }
}

static void bf16_to_f32_block(float *restrict d, const uint16_t *restrict s, size_t n)
{
    hb_u32_alias *restrict x = (hb_u32_alias *)(void *)d;
    for (size_t i = 0; i < n; i++)
        x[i] = (uint32_t)s[i] << 16;
}

static void k_f32_f16(void *dst, const void *src, size_t n, int nt)
{
    (void)nt;
    f32_to_f16_block(dst, src, n);
}
static void k_f16_f32(void *dst, const void *src, size_t n, int nt)
{
    (void)nt;
    f16_to_f32_block(dst, src, n);
}
static void k_f32_bf16(void *dst, const void *src, size_t n, int nt)
{
    (void)nt;
    f32_to_bf16_block(dst, src, n);
}
static void k_bf16_f32(void *dst, const void *src, size_t n, int nt)
{
    (void)nt;
    bf16_to_f32_block(dst, src, n);
}

/* Two-step conversions go through an f32 block on the stack (L1-resident), 1 Ki elements at a time. */
/* Pairs without a direct kernel go through f32 in L1-sized blocks: src -> f32 -> dst. */
#define TMP_BLOCK 1024
static void via_f32(conv_fn to32, size_t ss, conv_fn from32, size_t ds, void *dst, const void *src, size_t n)
{
    float tmp[TMP_BLOCK];
    for (size_t i = 0; i < n; i += TMP_BLOCK) {
        size_t b = n - i < TMP_BLOCK ? n - i : TMP_BLOCK;
        to32(tmp, (const char *)src + i * ss, b, 0);
        from32((char *)dst + i * ds, tmp, b, 0);
    }
}
#define VIA_F32(name, to32, ss, from32, ds)                                   \
    static void name(void *dst, const void *src, size_t n, int nt)            \
    {                                                                         \
        (void)nt;                                                             \
        via_f32(to32, ss, from32, ds, dst, src, n);                           \
    }
VIA_F32(k_f64_f16, k_f64_f32, 8, k_f32_f16, 2)
VIA_F32(k_f16_f64, k_f16_f32, 2, k_f32_f64, 8)
VIA_F32(k_f64_bf16, k_f64_f32, 8, k_f32_bf16, 2)
VIA_F32(k_bf16_f64, k_bf16_f32, 2, k_f32_f64, 8)
VIA_F32(k_f16_bf16, k_f16_f32, 2, k_f32_bf16, 2)
VIA_F32(k_bf16_f16, k_bf16_f32, 2, k_f32_f16, 2)

/* Streaming-store wrapper for kernels without their own: blocks of NT_BLOCK elements are converted
 * into an L1-resident buffer, then copied to dst with streaming stores (64-byte aligned body). */
#define NT_BLOCK 2048
static void stream_copy_bytes(char *restrict dst, const char *restrict src, size_t bytes)
{
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i < bytes && ((uintptr_t)(dst + i) & 63u); i++)
        dst[i] = src[i];
    for (; i + 64 <= bytes; i += 64)
        _mm512_stream_si512((void *)(dst + i), _mm512_loadu_si512((const void *)(src + i)));
#elif defined(__AVX__)
    for (; i < bytes && ((uintptr_t)(dst + i) & 31u); i++)
        dst[i] = src[i];
    for (; i + 32 <= bytes; i += 32)
        _mm256_stream_si256((__m256i *)(void *)(dst + i), _mm256_loadu_si256((const __m256i *)(const void *)(src + i)));
#endif
    for (; i < bytes; i++)
        dst[i] = src[i];
}

static void convert_nt_blocked(conv_fn fn, void *dst, size_t ds, const void *src, size_t ss, size_t n)
{
    _Alignas(64) char tmp[NT_BLOCK * 8];
    for (size_t i = 0; i < n; i += NT_BLOCK) {
        size_t b = n - i < NT_BLOCK ? n - i : NT_BLOCK;
        fn(tmp, (const char *)src + i * ss, b, 0);
        stream_copy_bytes((char *)dst + i * ds, tmp, b * ds);
    }
#if defined(__AVX__)
    _mm_sfence();
#endif
}

/* [dst][src], order of hb_elem: F64, F32, F16, BF16. The diagonal is a byte copy. */
static const conv_fn conv_table[4][4] = {
    /* dst F64  */ { k_copy, k_f32_f64, k_f16_f64, k_bf16_f64 },
    /* dst F32  */ { k_f64_f32, k_copy, k_f16_f32, k_bf16_f32 },
    /* dst F16  */ { k_f64_f16, k_f32_f16, k_copy, k_bf16_f16 },
    /* dst BF16 */ { k_f64_bf16, k_f32_bf16, k_f16_bf16, k_copy },
};

static size_t nt_min_bytes(void)
{
    static size_t cached; /* 0 = not read yet; stored +1 */
    size_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v - 1;
    size_t r = HB_CONVERT_NT_MIN_DEFAULT;
    const char *e = hb_config_get()->convert_nt_min;
    if (e && *e) {
        if (strcmp(e, "off") == 0)
            r = (size_t)-2;
        else
            r = (size_t)strtoull(e, NULL, 10);
    }
    __atomic_store_n(&cached, r + 1, __ATOMIC_RELAXED);
    return r;
}

void hb_convert(void *dst, hb_elem dst_t, const void *src, hb_elem src_t, size_t n)
{
    if (n == 0 || !dst || !src || (unsigned)dst_t > HB_ELEM_BF16 || (unsigned)src_t > HB_ELEM_BF16)
        return;
    conv_fn fn = conv_table[dst_t][src_t];
    size_t ds = hb_elem_size(dst_t), ss = hb_elem_size(src_t);
    size_t unit = 1; /* k_copy counts bytes */
    if (dst_t == src_t) {
        unit = ds;
        ds = ss = 1;
    }
    int nt = n * unit * ds >= nt_min_bytes();
    /* kernels with streaming stores of their own: f64<->f32 and copies (memcpy streams large
     * copies itself); the others stream through an L1 block */
    const int own_nt = fn == k_f64_f32 || fn == k_f32_f64 || fn == k_copy;
#if defined(__AVX__)
    const int blocked = nt && !own_nt;
#else
    const int blocked = 0;
#endif
    if (n < HB_CONVERT_PAR_MIN || omp_in_parallel()) {
        if (blocked)
            convert_nt_blocked(fn, dst, ds, src, ss, n);
        else
            fn(dst, src, n * unit, nt);
        return;
    }
    const size_t total = n * unit;
    const size_t align = 16 * unit; /* 16 elements */
#pragma omp parallel
    {
        size_t T = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        size_t lo = (size_t)((unsigned __int128)total * t / T) / align * align;
        size_t hi = t + 1 == T ? total : (size_t)((unsigned __int128)total * (t + 1) / T) / align * align;
        if (hi > lo) {
            if (blocked)
                convert_nt_blocked(fn, (char *)dst + lo * ds, ds, (const char *)src + lo * ss, ss, hi - lo);
            else
                fn((char *)dst + lo * ds, (const char *)src + lo * ss, hi - lo, nt);
        }
    }
}
