/*
 * qmm_avx2.c - the AVX2 micro-kernels of the cpu backend's quantized matmul (cpu_qmm.h): one weight
 * row against 1..4 rows of A's 8-bit activation blocks, for Q8_0, Q4_K, Q5_K and Q6_K. Compiled with
 * target("avx2,fma,f16c") attributes in every x86-64 build (whatever -march), chosen at run time from
 * cpuid (qmm_avx2_usable), as gelu/silu's AVX-512 loop is; valgrind (the merge gate) runs them.
 *
 * Per weight block the quants are unpacked once into 32-byte vectors of unsigned bytes (Q8_0: their
 * absolute values, A's signs moved onto A), then for each A row: _mm256_maddubs_epi16 (u8 x s8 pairs
 * to s16; no saturation: 2 x 63 x 127 < 2^15) and _mm256_madd_epi16 against the group's scale (s16
 * pairs to s32), summed in int32 over the block, then scaled into an f32 accumulator with one FMA per
 * row and block. The mins (K formats: DM mn_g bsum_g, cpu_qmm.h) come from A's per-16/32 sums, one
 * madd per row and block. The unpacking is shared by the R rows: prefill's R = 4 costs a quarter of
 * the unpacking per product that decode's R = 1 does.
 */
#include "cpu/cpu_qmm.h"
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

#define QT __attribute__((target("avx2,fma,f16c")))
#define QTI QT static inline __attribute__((always_inline))

QTI float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

QTI float f16(uint16_t h) { return _cvtsh_ss(h); }

/* The 8 scales and 8 mins of a Q4_K/Q5_K block (hb_k4_scale_min, core/quant.h) four bytes at a time:
 * words w0, w1, w2 = bytes 0-3, 4-7, 8-11; j < 4: sc = w0's byte j & 63, mn = w1's byte j & 63;
 * j >= 4: sc = low nibble of w2's byte j-4 | (top 2 bits of w0's byte j-4) << 4, mn = high nibble of
 * w2's byte j-4 | (top 2 bits of w1's byte j-4) << 4. */
static inline void k4_unpack(const uint8_t *s, uint8_t sc[8], uint8_t mn[8])
{
    uint32_t w0, w1, w2;
    memcpy(&w0, s, 4);
    memcpy(&w1, s + 4, 4);
    memcpy(&w2, s + 8, 4);
    const uint32_t sc_lo = w0 & 0x3f3f3f3fu, mn_lo = w1 & 0x3f3f3f3fu;
    const uint32_t sc_hi = (w2 & 0x0f0f0f0fu) | ((w0 >> 2) & 0x30303030u);
    const uint32_t mn_hi = ((w2 >> 4) & 0x0f0f0f0fu) | ((w1 >> 2) & 0x30303030u);
    memcpy(sc, &sc_lo, 4);
    memcpy(sc + 4, &sc_hi, 4);
    memcpy(mn, &mn_lo, 4);
    memcpy(mn + 4, &mn_hi, 4);
}

#define A8K(a, astride, r, b) ((const qmm_a8k *)((a) + (size_t)(r) * (astride)) + (b))

/* Q4_K and Q5_K (q5 = 1: the fifth bit from qh); R rows of A. */
QTI void k45_rows(const uint8_t *wp, const uint8_t *a, size_t as, const int R, int64_t nb, float *out, int64_t ldc,
                  const int q5)
{
    __m256 acc[4];
    for (int r = 0; r < 4; r++) acc[r] = _mm256_setzero_ps();
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    const size_t bb = q5 ? sizeof(hb_block_q5_k) : sizeof(hb_block_q4_k);
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *x = wp + (size_t)b * bb;
        uint16_t dh, dmh;
        memcpy(&dh, x, 2);
        memcpy(&dmh, x + 2, 2);
        const float D = f16(dh), DM = f16(dmh);
        uint8_t sc[8], mn[8];
        k4_unpack(x + 4, sc, mn);
        const uint8_t *qs = q5 ? x + 4 + HB_K_SCALE_SIZE + HB_QK_K / 8 : x + 4 + HB_K_SCALE_SIZE;
        __m256i H = q5 ? _mm256_loadu_si256((const __m256i *)(x + 4 + HB_K_SCALE_SIZE)) : _mm256_setzero_si256();
        const __m128i mn16 = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)mn));
        __m256i ia[4];
        for (int r = 0; r < 4; r++) ia[r] = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            /* elements 64j..64j+31 (sub-block 2j, the low nibbles) and 64j+32..64j+63 (2j+1, the high) */
            const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
            __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if (q5) { /* bit 2j of qh[l] is element l's fifth bit, bit 2j+1 element 32+l's */
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(H, one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(H, 1), one), 4));
                H = _mm256_srli_epi16(H, 2);
            }
            const __m256i s0 = _mm256_set1_epi16(sc[2 * j]), s1 = _mm256_set1_epi16(sc[2 * j + 1]);
            for (int r = 0; r < R; r++) {
                const int8_t *aq = A8K(a, as, r, b)->q + 64 * j;
                const __m256i p0 = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)aq));
                const __m256i p1 = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(aq + 32)));
                ia[r] = _mm256_add_epi32(ia[r], _mm256_add_epi32(_mm256_madd_epi16(p0, s0), _mm256_madd_epi16(p1, s1)));
            }
        }
        for (int r = 0; r < R; r++) {
            const qmm_a8k *ab = A8K(a, as, r, b);
            const __m128i m = _mm_madd_epi16(mn16, _mm_loadu_si128((const __m128i *)ab->bs32));
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(D * ab->d), _mm256_cvtepi32_ps(ia[r]), acc[r]);
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(-DM * ab->d), _mm256_cvtepi32_ps(_mm256_zextsi128_si256(m)), acc[r]);
        }
    }
    for (int r = 0; r < R; r++) out[(int64_t)r * ldc] = hsum8(acc[r]);
}

/* Q6_K: per half h (128 elements) ql[64h..64h+63], qh[32h..32h+31]; vector t (the half's elements
 * 32t..32t+31, l = 0..31) takes a nibble of ql and 2 bits of qh:
 *   t=0: ql[l] & 15 | (qh[l] & 3) << 4       t=1: ql[32+l] & 15 | (qh[l] >> 2 & 3) << 4
 *   t=2: ql[l] >> 4 | (qh[l] >> 4 & 3) << 4  t=3: ql[32+l] >> 4 | (qh[l] >> 6 & 3) << 4
 * (core/quant.c deq_q6_k); groups 2t and 2t+1 of the half are its low and high 16 elements. */
QTI void q6k_rows(const uint8_t *wp, const uint8_t *a, size_t as, const int R, int64_t nb, float *out, int64_t ldc,
                  const int unused)
{
    (void)unused;
    __m256 acc[4];
    for (int r = 0; r < 4; r++) acc[r] = _mm256_setzero_ps();
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    /* a 16-bit lane pair (2t, 2t+1) of 8 scales: lane 2t in the low 128 bits, lane 2t+1 in the high */
    const __m256i shuf[4] = {
        _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3),
        _mm256_setr_epi8(4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7),
        _mm256_setr_epi8(8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11,
                         10, 11, 10, 11),
        _mm256_setr_epi8(12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14, 15,
                         14, 15, 14, 15, 14, 15, 14, 15)};
    for (int64_t b = 0; b < nb; b++) {
        const hb_block_q6_k *x = (const hb_block_q6_k *)(wp + (size_t)b * sizeof(hb_block_q6_k));
        uint16_t dh;
        memcpy(&dh, &x->d, 2);
        const float D = f16(dh);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)x->scales));
        __m256i ia[4];
        for (int r = 0; r < 4; r++) ia[r] = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i L0 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h));
            const __m256i L1 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h + 32));
            const __m256i Hb = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * h));
            const __m256i S = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(x->scales + 8 * h))));
            for (int t = 0; t < 4; t++) {
                __m256i q;
                /* the 16-bit shifts carry bits across bytes only into positions the masks clear */
                switch (t) {
                case 0: q = _mm256_or_si256(_mm256_and_si256(L0, m4), _mm256_and_si256(_mm256_slli_epi16(Hb, 4), m30)); break;
                case 1: q = _mm256_or_si256(_mm256_and_si256(L1, m4), _mm256_and_si256(_mm256_slli_epi16(Hb, 2), m30)); break;
                case 2: q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(L0, 4), m4), _mm256_and_si256(Hb, m30)); break;
                default: q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(L1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(Hb, 2), m30)); break;
                }
                const __m256i st = _mm256_shuffle_epi8(S, shuf[t]);
                for (int r = 0; r < R; r++) {
                    const int8_t *aq = A8K(a, as, r, b)->q + 128 * h + 32 * t;
                    const __m256i p = _mm256_maddubs_epi16(q, _mm256_loadu_si256((const __m256i *)aq));
                    ia[r] = _mm256_add_epi32(ia[r], _mm256_madd_epi16(p, st));
                }
            }
        }
        for (int r = 0; r < R; r++) {
            const qmm_a8k *ab = A8K(a, as, r, b);
            const __m256i m = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)ab->bs16));
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(D * ab->d), _mm256_cvtepi32_ps(ia[r]), acc[r]);
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(-32.0f * D * ab->d), _mm256_cvtepi32_ps(m), acc[r]);
        }
    }
    for (int r = 0; r < R; r++) out[(int64_t)r * ldc] = hsum8(acc[r]);
}

/* Q8_0: |w| (unsigned) times A's quants carrying w's signs (_mm256_sign_epi8: a zero weight zeroes). */
QTI void q80_rows(const uint8_t *wp, const uint8_t *a, size_t as, const int R, int64_t nb, float *out, int64_t ldc,
                  const int unused)
{
    (void)unused;
    __m256 acc[4];
    for (int r = 0; r < 4; r++) acc[r] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *x = wp + (size_t)b * sizeof(hb_block_q8_0);
        uint16_t dh;
        memcpy(&dh, x, 2);
        const float dw = f16(dh);
        const __m256i w = _mm256_loadu_si256((const __m256i *)(x + 2)), aw = _mm256_abs_epi8(w);
        for (int r = 0; r < R; r++) {
            const qmm_a8_0 *ab = (const qmm_a8_0 *)(a + (size_t)r * as) + b;
            const __m256i sa = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)ab->q), w);
            const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sa), ones);
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * ab->d), _mm256_cvtepi32_ps(s), acc[r]);
        }
    }
    for (int r = 0; r < R; r++) out[(int64_t)r * ldc] = hsum8(acc[r]);
}

/* One function per format, R dispatched to a copy of the body with R constant (loops unrolled). */
#define QMM_ENTRY(name, body, q5)                                                                       \
    QT static void name(const uint8_t *w, const uint8_t *a, size_t as, int R, int64_t nb, float *out, int64_t ldc) \
    {                                                                                                    \
        switch (R) {                                                                                     \
        case 1: body(w, a, as, 1, nb, out, ldc, q5); break;                                      \
        case 2: body(w, a, as, 2, nb, out, ldc, q5); break;                                      \
        case 3: body(w, a, as, 3, nb, out, ldc, q5); break;                                      \
        default: body(w, a, as, 4, nb, out, ldc, q5); break;                                     \
        }                                                                                                \
    }
QMM_ENTRY(kern_q4k, k45_rows, 0)
QMM_ENTRY(kern_q5k, k45_rows, 1)
QMM_ENTRY(kern_q6k, q6k_rows, 0)
QMM_ENTRY(kern_q80, q80_rows, 0)

qmm_kern qmm_avx2_kernel(hb_dtype d)
{
    switch (d) {
    case HB_Q8_0: return kern_q80;
    case HB_Q4_K: return kern_q4k;
    case HB_Q5_K: return kern_q5k;
    case HB_Q6_K: return kern_q6k;
    default: return NULL;
    }
}

int qmm_avx2_usable(void)
{
    static int known = -1;
    if (known < 0) {
        /* f16c from cpuid leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c" */
        unsigned a = 0, b = 0, c = 0, d = 0;
        const int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    }
    return known;
}
#else
qmm_kern qmm_avx2_kernel(hb_dtype d) { (void)d; return NULL; }
int qmm_avx2_usable(void) { return 0; }
#endif
