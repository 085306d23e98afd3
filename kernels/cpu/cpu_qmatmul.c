/*
 * cpu_qmatmul.c - the cpu backend's matmul with quantized weights (cpu_priv.h hb_cpu_qmatmul_*):
 * C[m,n] = A[m,k] x W^T, A and C f32 row-major, W[n,k] in Q8_0, Q4_K, Q5_K or Q6_K blocks along k
 * (core/quant.h, ggml's layout), fused: the weights are never dequantized to memory.
 *
 * One call: (1) A's rows quantized to 8-bit blocks in the shared scratch (cpu_qmm.h: per 32 elements
 * for Q8_0, per 256 with per-16/32 sums for the K formats), rows cut into runs of blocks split over the
 * OpenMP team (at decode one row is the whole work); (2) the
 * products by integer dot products per block (cpu_qmm.h says how), in the same parallel region:
 *   decode (m <= 4): W's rows split into one contiguous range per thread, each row read once and
 *     multiplied with every row of A (memory-bound: the weights stream through once);
 *   prefill (m > 4): W's rows in tiles of QMM_TILE, tiles split statically over the threads; within a
 *     tile, A's rows four at a time against each of the tile's rows (the tile stays in L2, the four
 *     activation rows in L1/L2, and each weight block is unpacked once per four rows).
 * The micro-kernels: AVX2 (qmm_avx2.c, chosen at run time from cpuid) or the portable scalar ones
 * below (same integer sums, another f32 summation order). HB_CPU_QMM_ISA=scalar forces the scalar
 * ones (read once per process); impl names which ran ("own-q4_k-avx2", "own-q4_k-scalar").
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/convert.h"
#include "core/quant.h"
#include "cpu/cpu_priv.h"
#include "cpu/cpu_qmm.h"

/* weight rows per prefill tile: 16 rows of k = 14336 in Q8_0 are 244 KB, in L2 */
#define QMM_TILE 16
/* rows of A per micro-kernel call (the kernels' R) */
#define QMM_R 4

/* ---- A's quantization (cpu_qmm.h): d = amax / 127, q = nearest (even on ties) of x / d ---- */
static float block_scale(const float *x, int n, float *id)
{
    /* fmaxf over |x| (a NaN skipped) as an integer max of the magnitudes' bits, whose order is the floats'
     * order for non-negative floats: a reduction the compiler vectorizes (a float max it does not) */
    uint32_t ub = 0;
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        u &= 0x7fffffffu;
        u = u > 0x7f800000u ? 0 : u; /* NaN */
        ub = u > ub ? u : ub;
    }
    float amax;
    memcpy(&amax, &ub, sizeof amax);
    *id = amax > 0.0f ? 127.0f / amax : 0.0f;
    return amax / 127.0f;
}

static void quant_row_k(const float *x, qmm_a8k *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += HB_QK_K, y++) {
        float id;
        y->d = block_scale(x, HB_QK_K, &id);
        for (int i = 0; i < HB_QK_K; i++) y->q[i] = qmm_round(x[i] * id); /* |x id| <= 127 */
        for (int g = 0; g < HB_QK_K / 16; g++) {
            int s = 0;
            for (int i = 0; i < 16; i++) s += y->q[16 * g + i];
            y->bs16[g] = (int16_t)s;
        }
        for (int g = 0; g < HB_QK_K / 32; g++) y->bs32[g] = (int16_t)(y->bs16[2 * g] + y->bs16[2 * g + 1]);
        memset(y->pad, 0, sizeof y->pad);
    }
}

static void quant_row_8_0(const float *x, qmm_a8_0 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += HB_QK8_0, y++) {
        float id;
        y->d = block_scale(x, HB_QK8_0, &id);
        for (int i = 0; i < HB_QK8_0; i++) y->q[i] = qmm_round(x[i] * id);
    }
}

/* ---- the scalar micro-kernels (cpu_qmm.h's qmm_kern) ---- */
/* A K-format block as w_e = D sc[g] q[e] - DM mn[g], g = e / 16 (cpu_qmm.h). */
typedef struct kblock {
    uint8_t q[HB_QK_K];
    int32_t sc[16], mn[16];
    float D, DM;
} kblock;

static void decode_k4(const hb_block_q4_k *b, const uint8_t *qh, kblock *o)
{
    o->D = hb_f16_to_f32(b->d);
    o->DM = hb_f16_to_f32(b->dmin);
    for (int s = 0; s < 8; s++) {
        uint8_t sc, mn;
        hb_k4_scale_min(s, b->scales, &sc, &mn);
        o->sc[2 * s] = o->sc[2 * s + 1] = sc;
        o->mn[2 * s] = o->mn[2 * s + 1] = mn;
    }
    for (int j = 0; j < 4; j++)
        for (int l = 0; l < 32; l++) {
            const uint8_t v = b->qs[32 * j + l];
            o->q[64 * j + l] = (uint8_t)((v & 0xF) | (qh ? ((qh[l] >> (2 * j)) & 1) << 4 : 0));
            o->q[64 * j + 32 + l] = (uint8_t)((v >> 4) | (qh ? ((qh[l] >> (2 * j + 1)) & 1) << 4 : 0));
        }
}

static void decode_block(hb_dtype d, const uint8_t *p, kblock *o)
{
    if (d == HB_Q4_K) {
        hb_block_q4_k b;
        memcpy(&b, p, sizeof b);
        decode_k4(&b, NULL, o);
    } else if (d == HB_Q5_K) {
        hb_block_q5_k b5;
        hb_block_q4_k b;
        memcpy(&b5, p, sizeof b5);
        b.d = b5.d;
        b.dmin = b5.dmin;
        memcpy(b.scales, b5.scales, sizeof b.scales);
        memcpy(b.qs, b5.qs, sizeof b.qs);
        decode_k4(&b, b5.qh, o);
    } else { /* Q6_K: D = DM = d, mn = 32 sc */
        hb_block_q6_k b;
        memcpy(&b, p, sizeof b);
        o->D = o->DM = hb_f16_to_f32(b.d);
        for (int g = 0; g < 16; g++) {
            o->sc[g] = b.scales[g];
            o->mn[g] = 32 * b.scales[g];
        }
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = b.ql + 64 * h, *qh = b.qh + 32 * h;
            uint8_t *q = o->q + 128 * h;
            for (int l = 0; l < 32; l++) {
                q[l] = (uint8_t)((ql[l] & 0xF) | ((qh[l] & 3) << 4));
                q[l + 32] = (uint8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
                q[l + 64] = (uint8_t)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                q[l + 96] = (uint8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
            }
        }
    }
}

static void scalar_k(hb_dtype d, const uint8_t *w, const uint8_t *a, size_t as, int R, int64_t nb, float *out, int64_t ldc)
{
    const size_t bb = (size_t)hb_quant_block_bytes(d);
    float acc[QMM_R] = {0};
    kblock kb;
    for (int64_t b = 0; b < nb; b++) {
        decode_block(d, w + (size_t)b * bb, &kb);
        for (int r = 0; r < R; r++) {
            const qmm_a8k *ab = (const qmm_a8k *)(a + (size_t)r * as) + b;
            int64_t isum = 0, imin = 0;
            for (int g = 0; g < 16; g++) {
                int32_t s = 0;
                for (int i = 16 * g; i < 16 * g + 16; i++) s += (int32_t)kb.q[i] * ab->q[i];
                isum += (int64_t)kb.sc[g] * s;
                imin += (int64_t)kb.mn[g] * ab->bs16[g];
            }
            acc[r] += ab->d * (kb.D * (float)isum - kb.DM * (float)imin);
        }
    }
    for (int r = 0; r < R; r++) out[(int64_t)r * ldc] = acc[r];
}

static void scalar_q4k(const uint8_t *w, const uint8_t *a, size_t as, int R, int64_t nb, float *out, int64_t ldc)
{
    scalar_k(HB_Q4_K, w, a, as, R, nb, out, ldc);
}
static void scalar_q5k(const uint8_t *w, const uint8_t *a, size_t as, int R, int64_t nb, float *out, int64_t ldc)
{
    scalar_k(HB_Q5_K, w, a, as, R, nb, out, ldc);
}
static void scalar_q6k(const uint8_t *w, const uint8_t *a, size_t as, int R, int64_t nb, float *out, int64_t ldc)
{
    scalar_k(HB_Q6_K, w, a, as, R, nb, out, ldc);
}
static void scalar_q80(const uint8_t *w, const uint8_t *a, size_t as, int R, int64_t nb, float *out, int64_t ldc)
{
    float acc[QMM_R] = {0};
    for (int64_t b = 0; b < nb; b++) {
        hb_block_q8_0 x;
        memcpy(&x, w + (size_t)b * sizeof x, sizeof x);
        const float dw = hb_f16_to_f32(x.d);
        for (int r = 0; r < R; r++) {
            const qmm_a8_0 *ab = (const qmm_a8_0 *)(a + (size_t)r * as) + b;
            int32_t s = 0;
            for (int i = 0; i < HB_QK8_0; i++) s += (int32_t)x.qs[i] * ab->q[i];
            acc[r] += dw * ab->d * (float)s;
        }
    }
    for (int r = 0; r < R; r++) out[(int64_t)r * ldc] = acc[r];
}

static qmm_kern scalar_kernel(hb_dtype d)
{
    switch (d) {
    case HB_Q8_0: return scalar_q80;
    case HB_Q4_K: return scalar_q4k;
    case HB_Q5_K: return scalar_q5k;
    case HB_Q6_K: return scalar_q6k;
    default: return NULL;
    }
}

/* ---- dispatch ---- */
int hb_cpu_qmatmul_isa(void)
{
    static int isa = -1;
    if (isa < 0) {
        const char *e = getenv("HB_CPU_QMM_ISA");
        isa = (e && !strcmp(e, "scalar")) || !qmm_avx2_usable() ? 0 : 256;
    }
    return isa;
}

hb_status hb_cpu_qmatmul_check(const hb_case *c, char *reason, size_t reasonlen)
{
    const hb_shape *s = &c->shape;
    const char *q = hb_dtype_name(c->dtype);
    if (!hb_dtype_is_quant(c->dtype)) {
        snprintf(reason, reasonlen, "not a quantized dtype");
        return HB_ESKIP;
    }
    if (c->op != HB_OP_MATMUL) {
        snprintf(reason, reasonlen, "cpu computes %s weights for matmul only", q);
        return HB_ESKIP;
    }
    if (!hb_quant_blocks_whole(c, reason, reasonlen)) return HB_ESKIP;
    if (s->m <= 0 || s->n <= 0) {
        snprintf(reason, reasonlen, "%s matmul needs positive m and n", q);
        return HB_ESKIP;
    }
    /* A's quantized blocks (at most 320 bytes per 256 elements) must be addressable */
    if ((double)s->m * (double)s->k * 1.25 > 1e15 || (double)s->n * (double)s->k > 1e15) {
        snprintf(reason, reasonlen, "%s matmul too large for the host", q);
        return HB_ESKIP;
    }
    return HB_OK;
}

const char *hb_cpu_qmatmul_impl(const hb_case *c)
{
    static const char *names[2][4] = {{"own-q8_0-scalar", "own-q4_k-scalar", "own-q5_k-scalar", "own-q6_k-scalar"},
                                      {"own-q8_0-avx2", "own-q4_k-avx2", "own-q5_k-avx2", "own-q6_k-avx2"}};
    if (!hb_dtype_is_quant(c->dtype)) return "none";
    return names[hb_cpu_qmatmul_isa() == 256][c->dtype - HB_Q8_0];
}

hb_status hb_cpu_qmatmul_run(const hb_case *c, const float *A, const void *W, float *C, int isa)
{
    char why[160];
    if (!A || !W || !C || hb_cpu_qmatmul_check(c, why, sizeof why) != HB_OK) return HB_EINVAL;
    if (isa < 0) isa = hb_cpu_qmatmul_isa();
    if (isa == 256 && !qmm_avx2_usable()) return HB_EINVAL;
    const hb_dtype d = c->dtype;
    const qmm_kern kern = isa == 256 ? qmm_avx2_kernel(d) : scalar_kernel(d);
    if (!kern) return HB_EINVAL;
    const int64_t m = c->shape.m, n = c->shape.n, k = c->shape.k;
    const int kfmt = d != HB_Q8_0;
    const int64_t nb = k / hb_quant_block_elems(d);
    const size_t ab = kfmt ? sizeof(qmm_a8k) : sizeof(qmm_a8_0);
    const size_t astride = (size_t)nb * ab, wrow = hb_quant_bytes(d, k);
    uint8_t *aq = (uint8_t *)scratch_shared(((size_t)m * astride + sizeof(float) - 1) / sizeof(float));
    if (!aq) return HB_ENOMEM;
    const uint8_t *wb = W;
    const int decode = m <= QMM_R;
    const int64_t tile = decode ? 1 : QMM_TILE, ntiles = (n + tile - 1) / tile;
    /* the whole team in one region (cpu_priv.h hb_cpu_rebind_team says why a smaller one costs) */
#pragma omp parallel
    {
        /* A's rows split into pieces of whole blocks (blocks are independent), enough pieces for the whole
         * team: at decode (m = 1) one thread quantizing the row alone kept the others waiting (k = 14336:
         * 17 us of a 240 us call on 32 cores) */
        const int64_t nt = omp_get_num_threads(), per = m >= nt ? 1 : (nt + m - 1) / m, cb = (nb + per - 1) / per;
#pragma omp for schedule(static)
        for (int64_t u = 0; u < m * per; u++) {
            const int64_t i = u / per, b0 = u % per * cb, b1 = b0 + cb < nb ? b0 + cb : nb;
            if (b0 >= b1) continue;
            if (kfmt) quant_row_k(A + i * k + b0 * HB_QK_K, (qmm_a8k *)(aq + (size_t)i * astride) + b0, b1 - b0);
            else quant_row_8_0(A + i * k + b0 * HB_QK8_0, (qmm_a8_0 *)(aq + (size_t)i * astride) + b0, b1 - b0);
        }
        /* static: one contiguous range of weight rows (decode) or tiles (prefill) per thread */
#pragma omp for schedule(static)
        for (int64_t t = 0; t < ntiles; t++) {
            const int64_t j0 = t * tile, j1 = j0 + tile < n ? j0 + tile : n;
            for (int64_t i0 = 0; i0 < m; i0 += QMM_R) {
                const int R = (int)(m - i0 < QMM_R ? m - i0 : QMM_R);
                const uint8_t *ar = aq + (size_t)i0 * astride;
                for (int64_t j = j0; j < j1; j++) kern(wb + (size_t)j * wrow, ar, astride, R, nb, C + i0 * n + j, n);
            }
        }
    }
    return HB_OK;
}
