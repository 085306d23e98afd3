/*
 * attn_body.h - the cpu backend's fused, tiled attention kernel (flash-attention style, one pass over
 * the keys per block of query rows with an online softmax; Dao et al. 2022, "FlashAttention",
 * Alg. 1), written once and compiled at two vector widths: the includer defines ATTN_VW (floats per
 * vector: 8 or 16) and ATTN_RUN (the name of the entry point this inclusion defines, with the
 * contract of attn_run_w8 in cpu_attn.h). cpu_attn.c includes it at 8 with the build's flags,
 * attn_avx512.c at 16 with -mavx512f -mfma (Makefile), and cpu_attn.c chooses between them per call
 * (attn_pick_width). Everything else here is static: each inclusion is its own copy.
 *
 * The op and layouts: cpu_attn.c. The kernel reads q, k, v and writes o through element strides per
 * batch, per head and per sequence position (attn_io, cpu_attn.h); head_dim is contiguous.
 *
 * Work item: one batch, one kv head g, nh of its query heads and bq query positions; its R = nh * nq
 * rows (row r: head g*rep + h0 + r / nq, position q0 + r % nq) share g's keys, so GQA's query heads
 * that read one kv head are one matrix (decode: the rep heads of a group are the rows). Per item:
 *   Qt [d][Rp]   the rows' queries, transposed and multiplied by log2(e) / sqrt(d) (scores in log2
 *                units, so that exp(s - m) is exp2(s2 - m2): SLEEF's exp2f, as cpu_ew.c uses);
 *   for each block of bk keys (only up to the last key a row of the item sees: causal blocks past
 *   the diagonal are skipped):
 *     St [bk][Rp] = K_blk Qt      (keys as rows: broadcast k[j][t], vectors of Qt[t][rows]; K is read
 *                                  in place, no transpose; the queries are transposed once per item)
 *     mask (blocks crossing a row's last visible key): St = -1e30 where key j >= keys(row)
 *     online softmax, vectorised over rows: m' = max(m, max_j St), alpha = exp2(m - m'),
 *       P = exp2(St - m'), l = alpha l + sum_j P, O *= alpha (per row)
 *     O [R][dp] += P V_blk        (broadcast P[j][r], vectors of v[j][cols]; V in place when d is a
 *                                  multiple of VW, else copied into a zero-padded block)
 *   o[row] = O[row] / l[row]
 * Both products run one register-blocked micro-kernel (mk): MR = 6 rows by NR = 2 vectors of
 * columns (1 vector for a last tile of VW or fewer: decode's 8 GQA rows), accumulated in registers
 * over the inner dimension (the classic 6x16 sgemm kernel at 8 wide, 6x32 at 16). Rows (R) and
 * head_dim are padded to a multiple of VW (Rp, dp; padding rows are zero queries whose results are
 * dropped). m starts at -1e30 (finite: no inf - inf), so masked scores give exp2(-1e30 - m) = 0 once
 * a row has seen a visible key; every causal row with keys sees key 0 in the first block.
 * Why not sgemm on the tiles: OpenBLAS 0.3.21 sgemm of 64x64x64 ran at 55 GFLOP/s on one core of the
 * development host (AMD EPYC, AVX2; 88 at 512^3), while this whole kernel, softmax included, ran at
 * 55-59 GFLOP/s at seq 128 (32 heads, d 64) on that core; the previous kernel (sgemm per block of
 * 128 query rows over all keys, then softmax, then sgemm) was 1.2x-9x slower (commit message).
 * Workspace per thread (floats, cpu_scratch.c): d Rp + bk Rp + R dp + bk dp + 4 Rp, about 50 KiB at
 * the defaults and d = 64.
 *
 * Vectors are GCC vector extensions of VW floats (the includer's file is compiled with
 * -ffp-contract=fast so that a*b + c are FMAs: Makefile). exp2: SLEEF's Sleef_exp2f16_u35 (16 wide,
 * compiled with AVX-512F) or Sleef_exp2f8_u35 per 8 lanes (3.5 ULP) where built with SLEEF on x86
 * with AVX2+FMA, else hybench's own fexp (cpu_priv.h) lane by lane. A 16-wide inclusion without
 * AVX-512 (tests/test_cpu_attn_isa.c) runs on two 8-wide halves: the 16-wide tiling checked on an
 * AVX2 machine.
 *
 * Threads: items over the OpenMP team; equal items (no causal mask, or one query block: decode) in a
 * static split, head-major, so that a thread reads the same heads' K and V on every call; causal
 * prefill items (later blocks see more keys) dynamically, the largest first. An item keeps at least
 * VW rows where it can (fewer are padded to VW: decode with one row per item computed 8 or 16 rows
 * for 1); when that leaves fewer than two items per thread and the items are equal, the keys are
 * split too (flash-decoding, Dao et al. 2023): each split's item writes its rows' running max,
 * sum and unnormalised O to a shared buffer (cpu_scratch.c), and a second pass merges the splits
 * (o = sum_s 2^(m_s - M) O_s / sum_s 2^(m_s - M) l_s). Decode (kv 512, 4 kv heads, 32 query heads)
 * had run as 32 one-row items, each padded to a vector of rows (176 us on a 32-thread Xeon); on a
 * 16-core Xeon it took 123 us unsplit (HB_CPU_ATTN_NOSPLIT=1) and 43 us split (docs/pytorch.md).
 * Knobs for measurements,
 * read per call: HB_CPU_ATTN_TQ (rows per item, default 64), HB_CPU_ATTN_TK (keys per block,
 * default 64).
 */
#if !defined(ATTN_VW) || !defined(ATTN_RUN)
#error "attn_body.h: define ATTN_VW (8 or 16) and ATTN_RUN (the entry point's name) first"
#endif
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu_priv.h" /* hb_cpu_cfg: the tiling settings */

#if defined(HB_HAVE_SLEEF) && (defined(__x86_64__) || defined(__i386__)) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#include <sleef.h>
#define ATTN_SLEEF 1
#else
#define ATTN_SLEEF 0
#endif

#if defined(__SSE__)
#include <immintrin.h>
#endif
#include "cpu/cpu_attn.h"
#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

#define VW ATTN_VW

#define MR 6          /* micro-kernel rows */
#define NR (2 * VW)   /* micro-kernel columns: two vectors */
#define ATTN_NEG (-1e30f) /* masked score and the running max's start (log2 units) */

typedef float vf __attribute__((vector_size(VW * 4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));

static inline vf vld(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void vst(float *p, vf v) { memcpy(p, &v, sizeof v); }
/* broadcast x to every lane. With the lane-by-lane loop alone GCC 12 builds a vector of 8 from
 * vmovss, three vinsertps and a vinsertf128 (six instructions where one vbroadcastss does), inside the
 * micro-kernel's inner loop: perf on the development host's EPYC (one thread, b1 h32 s512 d64) showed
 * the two products' loops spending most of their cycles on those inserts, and the kernel ran at 20
 * GFLOP/s against the core's 77. The intrinsics give one broadcast (from memory where x was loaded);
 * the loop stays for builds without AVX or SSE. */
static inline vf vset(float x)
{
#if VW == 16 && defined(__AVX512F__)
    return (vf)_mm512_set1_ps(x);
#elif VW % 8 == 0 && defined(__AVX__)
    union { vf v; __m256 h[VW / 8]; } u;
    for (int i = 0; i < VW / 8; i++) u.h[i] = _mm256_set1_ps(x);
    return u.v;
#elif VW % 4 == 0 && defined(__SSE__)
    union { vf v; __m128 h[VW / 4]; } u;
    for (int i = 0; i < VW / 4; i++) u.h[i] = _mm_set1_ps(x);
    return u.v;
#else
    vf r;
    for (int i = 0; i < VW; i++) r[i] = x;
    return r;
#endif
}
static inline vf vsel(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); } /* m ? a : b */
static inline vf vmax(vf a, vf b) { return vsel(a > b, a, b); }

/* 2^x per lane. SLEEF gives 0 below -150 (the masked -1e30 included). */
static inline vf vexp2(vf x)
{
#if ATTN_SLEEF && VW == 16 && defined(__AVX512F__)
    return (vf)Sleef_exp2f16_u35((__m512)x);
#elif ATTN_SLEEF && VW % 8 == 0
    union { vf v; __m256 h[VW / 8]; } u = { x };
    for (int i = 0; i < VW / 8; i++)
        u.h[i] = Sleef_exp2f8_u35(u.h[i]);
    return u.v;
#else
    vf r;
    for (int i = 0; i < VW; i++)
        r[i] = x[i] < -126.0f ? 0.0f : fexp(x[i] * 0.69314718055994531f);
    return r;
#endif
}

/* ------------------------------------------------------------------ micro-kernel ----- */

/* C[0..mr) x [0..nv*VW) (+)= sum over p < kc of A(i, p) B[p][0..nv*VW), A(i, p) = A[i * ars + p * acs]
 * (broadcast), B rows ldb apart, nv * VW contiguous floats each; C rows ldc apart. acc = 0
 * overwrites C. Inlined with constant mr, nv, ars or acs, so that the accumulators are registers
 * (mr * nv vectors). */
static inline __attribute__((always_inline)) void mk(const int mr, const int nv, int64_t kc, const float *A,
                                                     int64_t ars, int64_t acs, const float *B, int64_t ldb,
                                                     float *C, int64_t ldc, int acc)
{
    vf c0[MR], c1[MR];
    const float *ar[MR];
    for (int i = 0; i < mr; i++) {
        ar[i] = A + i * ars;
        c0[i] = acc ? vld(C + i * ldc) : vset(0.0f);
        if (nv == 2)
            c1[i] = acc ? vld(C + i * ldc + VW) : vset(0.0f);
    }
    for (int64_t p = 0; p < kc; p++) {
        const vf b0 = vld(B + p * ldb), b1 = nv == 2 ? vld(B + p * ldb + VW) : b0;
        for (int i = 0; i < mr; i++) {
            const vf x = vset(ar[i][p * acs]);
            c0[i] += x * b0;
            if (nv == 2)
                c1[i] += x * b1;
        }
    }
    for (int i = 0; i < mr; i++) {
        vst(C + i * ldc, c0[i]);
        if (nv == 2)
            vst(C + i * ldc + VW, c1[i]);
    }
}

/* mk with mr (1..MR) and nv (1, 2) as constants: 12 specialised bodies. */
#define MK_CASES(ACC, ARS, ACS)                                                                   \
    switch (mr * 2 + nv - 1) {                                                                    \
    case 12: mk(6, 1, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                              \
    case 13: mk(6, 2, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                              \
    case 10: mk(5, 1, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                              \
    case 11: mk(5, 2, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                              \
    case 8: mk(4, 1, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    case 9: mk(4, 2, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    case 6: mk(3, 1, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    case 7: mk(3, 2, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    case 4: mk(2, 1, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    case 5: mk(2, 2, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    case 2: mk(1, 1, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                               \
    default: mk(1, 2, kc, A, ARS, ACS, B, ldb, C, ldc, ACC); break;                              \
    }

/* St tile (keys as mr rows, nv vectors of query columns) = K rows (A, ars apart, kc = d long) times
 * Qt columns (B, ldb apart per t). */
static void mk_qk(int mr, int nv, int64_t kc, const float *A, int64_t ars, const float *B, int64_t ldb, float *C,
                  int64_t ldc)
{
    MK_CASES(0, ars, 1)
}

/* O tile (mr rows, nv vectors of head_dim) += P (A: St columns, acs apart per key; kc keys) times
 * V rows (B, ldb apart). */
static void mk_pv(int mr, int nv, int64_t kc, const float *A, int64_t acs, const float *B, int64_t ldb, float *C,
                  int64_t ldc)
{
    MK_CASES(1, 1, acs)
}

/* ------------------------------------------------------------------ the fused kernel -- */

/* How the work is cut: see the header comment. */
typedef struct attn_plan {
    int64_t bq, nh, bk;    /* query positions, query heads per item; keys per block */
    int64_t nqb, nhs;      /* query blocks per head, head slices per kv head (rep / nh) */
    int64_t items;         /* work items: (batch, kv head, head slice, query block) x key splits */
    int64_t nks, ksl;      /* key splits (1: none) and keys per split (a multiple of bk) */
    int64_t Rp, dp;        /* rows nh * bq and head_dim rounded up to VW */
    int uniform;           /* every item has the same work: static schedule */
    size_t ws_floats;      /* per-thread workspace */
} attn_plan;

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* A tiling setting's text e (core/config.h; NULL: unset) as an integer: dflt below lo. */
static int64_t cfg_int(const char *e, int64_t dflt, int64_t lo)
{
    int64_t v = e ? atoll(e) : 0;
    return v >= lo ? v : dflt;
}

static void attn_plan_make(const hbk_attn *a, int T, attn_plan *pl)
{
    const int64_t tq = cfg_int(hb_cpu_cfg()->cpu_attn_tq, 64, 1);
    pl->bk = round_up(cfg_int(hb_cpu_cfg()->cpu_attn_tk, 64, 1), MR);
    pl->bq = a->seq < tq ? a->seq : tq;
    pl->nh = 1; /* the largest divisor of rep with nh * bq <= tq */
    for (int64_t n = a->rep; n >= 1; n--)
        if (a->rep % n == 0 && n * pl->bq <= tq) {
            pl->nh = n;
            break;
        }
    /* enough items for the team: fewer heads per item first, then fewer positions (>= 16), while an
     * item keeps a vector of rows (VW) where it has one; then, for equal items, split the keys */
    for (;;) {
        pl->nqb = (a->seq + pl->bq - 1) / pl->bq;
        pl->nhs = a->rep / pl->nh;
        pl->items = a->b * a->kvh * pl->nhs * pl->nqb;
        if (pl->items >= 2 * (int64_t)T)
            break;
        int64_t n = pl->nh - 1;
        while (n > 1 && a->rep % n)
            n--;
        if (pl->nh > 1 && n * pl->bq >= VW) {
            pl->nh = n;
        } else if (pl->bq > 16) {
            pl->bq = (pl->bq + 1) / 2;
        } else {
            break;
        }
    }
    const int64_t R = pl->nh * pl->bq;
    pl->Rp = round_up(R, VW);
    pl->dp = round_up(a->d, VW);
    pl->uniform = !a->causal || pl->nqb == 1;
    pl->nks = 1;
    pl->ksl = round_up(a->kvs, pl->bk);
    const int64_t kblocks = (a->kvs + pl->bk - 1) / pl->bk;
    if (pl->uniform && pl->items < 2 * (int64_t)T && kblocks > 1 && !cfg_int(hb_cpu_cfg()->cpu_attn_nosplit, 0, 1)) {
        int64_t want = (2 * (int64_t)T + pl->items - 1) / pl->items;
        if (want > kblocks)
            want = kblocks;
        pl->ksl = (kblocks + want - 1) / want * pl->bk;
        pl->nks = (a->kvs + pl->ksl - 1) / pl->ksl;
        pl->items *= pl->nks;
    }
    /* Qt d*Rp, St bk*Rp, O R*dp, Vp bk*dp, m/l/lim/alpha 4*Rp; each rounded to 16 floats (64 B) */
    pl->ws_floats = (size_t)(round_up(a->d * pl->Rp, 16) + round_up(pl->bk * pl->Rp, 16) +
                             round_up(R * pl->dp, 16) + round_up(pl->bk * pl->dp, 16) + 4 * pl->Rp);
}

/* One item: batch bi, kv head g, head slice hs (heads g*rep + hs*nh ..), query block qb, keys
 * [k0, k1); ws its thread's workspace (pl->ws_floats). part NULL: the rows' outputs to o; else each
 * row r's running max, sum and unnormalised O (d + 2 floats) to part + r * (d + 2), merged later. */
static void attn_item(const hbk_attn *a, const attn_io *io, const attn_plan *pl, float *ws, int64_t bi,
                      int64_t g, int64_t hs, int64_t qb, int64_t k0, int64_t k1, float *part)
{
    const int64_t d = a->d, Rp = pl->Rp, dp = pl->dp, bk = pl->bk;
    const int64_t q0 = qb * pl->bq, nq = a->seq - q0 < pl->bq ? a->seq - q0 : pl->bq;
    const int64_t R = pl->nh * nq, h0 = g * a->rep + hs * pl->nh;
    float *Qt = ws, *St = Qt + round_up(d * Rp, 16), *O = St + round_up(bk * Rp, 16);
    float *Vp = O + round_up(pl->nh * pl->bq * dp, 16), *m = Vp + round_up(bk * dp, 16);
    float *l = m + Rp, *limf = l + Rp, *alpha = limf + Rp;
    const float c = (float)(1.4426950408889634 / sqrt((double)d)); /* log2(e) / sqrt(d) */
    const float *kb = io->k + bi * io->ks.b + g * io->ks.h, *vb = io->v + bi * io->vs.b + g * io->vs.h;

    /* rows: keys visible, queries transposed and scaled; padding rows see every key, query 0 */
    int64_t maxlim = 0, minlim = a->kvs;
    for (int64_t r = 0; r < Rp; r++) {
        float *qt = Qt + r;
        if (r < R) {
            const int64_t h = h0 + r / nq, i = q0 + r % nq;
            const int64_t lim = hbk_attn_keys(a, i);
            const float *qr = io->q + bi * io->qs.b + h * io->qs.h + i * io->qs.s;
            for (int64_t t = 0; t < d; t++)
                qt[t * Rp] = qr[t] * c;
            limf[r] = (float)lim;
            maxlim = lim > maxlim ? lim : maxlim;
            minlim = lim < minlim ? lim : minlim;
        } else {
            for (int64_t t = 0; t < d; t++)
                qt[t * Rp] = 0.0f;
            limf[r] = (float)a->kvs;
        }
        m[r] = ATTN_NEG;
        l[r] = 0.0f;
    }
    memset(O, 0, (size_t)(R * dp) * sizeof(float));
    const int vdirect = d % VW == 0;

    const int64_t kend = maxlim < k1 ? maxlim : k1;
    for (int64_t j0 = k0; j0 < kend; j0 += bk) {
        const int64_t nb = kend - j0 < bk ? kend - j0 : bk;
        /* St = K_blk Qt */
        for (int64_t jj = 0; jj < nb; jj += MR) {
            const int mr = (int)(nb - jj < MR ? nb - jj : MR);
            const float *kr = kb + (j0 + jj) * io->ks.s;
            for (int64_t c0 = 0; c0 < Rp; c0 += NR)
                mk_qk(mr, Rp - c0 >= NR ? 2 : 1, d, kr, io->ks.s, Qt + c0, Rp, St + jj * Rp + c0, Rp);
        }
        /* the mask, where the block passes some row's last visible key (keys as float: exact to 2^24) */
        if (j0 + nb > minlim)
            for (int64_t jj = 0; jj < nb; jj++) {
                const vf jv = vset((float)(j0 + jj)), neg = vset(ATTN_NEG);
                float *srow = St + jj * Rp;
                for (int64_t c0 = 0; c0 < Rp; c0 += VW)
                    vst(srow + c0, vsel(jv < vld(limf + c0), vld(srow + c0), neg));
            }
        /* online softmax over the block, VW rows at a time */
        int rescale = 0;
        for (int64_t c0 = 0; c0 < Rp; c0 += VW) {
            vf mx = vld(m + c0);
            for (int64_t jj = 0; jj < nb; jj++)
                mx = vmax(mx, vld(St + jj * Rp + c0));
            const vf al = vexp2(vld(m + c0) - mx);
            vf sum = vset(0.0f);
            for (int64_t jj = 0; jj < nb; jj++) {
                const vf p = vexp2(vld(St + jj * Rp + c0) - mx);
                vst(St + jj * Rp + c0, p);
                sum += p;
            }
            vst(l + c0, vld(l + c0) * al + sum);
            vst(m + c0, mx);
            vst(alpha + c0, al);
            for (int i = 0; i < VW; i++)
                rescale |= al[i] != 1.0f;
        }
        if (rescale && j0 > k0)
            for (int64_t r = 0; r < R; r++)
                if (alpha[r] != 1.0f) {
                    const vf al = vset(alpha[r]);
                    for (int64_t t = 0; t < dp; t += VW)
                        vst(O + r * dp + t, vld(O + r * dp + t) * al);
                }
        /* O += P V_blk */
        const float *vblk = vb + j0 * io->vs.s;
        int64_t ldv = io->vs.s;
        if (!vdirect) {
            for (int64_t jj = 0; jj < nb; jj++) {
                memcpy(Vp + jj * dp, vblk + jj * io->vs.s, (size_t)d * sizeof(float));
                memset(Vp + jj * dp + d, 0, (size_t)(dp - d) * sizeof(float));
            }
            vblk = Vp;
            ldv = dp;
        }
        for (int64_t r0 = 0; r0 < R; r0 += MR) {
            const int mr = (int)(R - r0 < MR ? R - r0 : MR);
            for (int64_t c0 = 0; c0 < dp; c0 += NR)
                mk_pv(mr, dp - c0 >= NR ? 2 : 1, nb, St + r0, Rp, vblk + c0, ldv, O + r0 * dp + c0, dp);
        }
    }
    if (part) {
        for (int64_t r = 0; r < R; r++) {
            float *pr = part + r * (d + 2);
            pr[0] = m[r];
            pr[1] = limf[r] > (float)k0 ? l[r] : 0.0f; /* a row with no key in [k0, k1) weighs nothing */
            memcpy(pr + 2, O + r * dp, (size_t)d * sizeof(float));
        }
        return;
    }
    /* o = O / l; a row that sees no key is 0 */
    for (int64_t r = 0; r < R; r++) {
        const int64_t h = h0 + r / nq, i = q0 + r % nq;
        float *orow = io->o + bi * io->os.b + h * io->os.h + i * io->os.s;
        const float inv = limf[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        for (int64_t t = 0; t < d; t++)
            orow[t] = O[r * dp + t] * inv;
    }
}

/* The fused kernel over strides io (the header comment); HB_ENOMEM when a workspace fails. */
hb_status ATTN_RUN(const hbk_attn *a, const attn_io *io)
{
    const int T = omp_get_max_threads();
    attn_plan pl;
    attn_plan_make(a, T, &pl);
    const int64_t per_b = a->kvh * pl.nhs, heads_items = a->b * per_b; /* (batch, kv head, slice) */
    const int64_t Rm = pl.nh * pl.bq, pstride = Rm * (a->d + 2); /* a split item's partial rows */
    float *part = NULL;
    if (pl.nks > 1 && !(part = scratch_shared((size_t)(pl.items * pstride))))
        return HB_ENOMEM;
    int failed = 0;
#pragma omp parallel if (pl.items > 1)
    {
        float *ws = scratch(omp_get_thread_num(), pl.ws_floats);
        if (!ws) {
#pragma omp atomic write
            failed = 1;
        }
        if (pl.uniform) {
            /* head-major: a thread's items are whole heads (and neighbouring key splits) where possible */
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; it++)
                if (ws) {
                    const int64_t base = it / pl.nks, sp = it % pl.nks, hi = base / pl.nqb, qb = base % pl.nqb;
                    attn_item(a, io, &pl, ws, hi / per_b, hi % per_b / pl.nhs, hi % pl.nhs, qb, sp * pl.ksl,
                              (sp + 1) * pl.ksl, part ? part + it * pstride : NULL);
                }
        } else {
            /* block-major, the last (most keys) first */
#pragma omp for schedule(dynamic, 1)
            for (int64_t it = 0; it < pl.items; it++)
                if (ws) {
                    const int64_t qb = pl.nqb - 1 - it / heads_items, hi = it % heads_items;
                    attn_item(a, io, &pl, ws, hi / per_b, hi % per_b / pl.nhs, hi % pl.nhs, qb, 0, a->kvs, NULL);
                }
        }
        /* the key splits merged: per (item without its split, row) */
        if (part) {
            const int64_t nbase = pl.items / pl.nks, d = a->d;
#pragma omp for schedule(static)
            for (int64_t x = 0; x < nbase * Rm; x++) {
                const int64_t base = x / Rm, r = x % Rm, hi = base / pl.nqb, qb = base % pl.nqb;
                const int64_t bi = hi / per_b, g = hi % per_b / pl.nhs, hs = hi % pl.nhs;
                const int64_t q0 = qb * pl.bq, nq = a->seq - q0 < pl.bq ? a->seq - q0 : pl.bq;
                if (r >= pl.nh * nq)
                    continue;
                const int64_t h = g * a->rep + hs * pl.nh + r / nq, i = q0 + r % nq;
                float *orow = io->o + bi * io->os.b + h * io->os.h + i * io->os.s;
                float M = ATTN_NEG, L = 0.0f;
                for (int64_t sp = 0; sp < pl.nks; sp++) {
                    const float *pr = part + (base * pl.nks + sp) * pstride + r * (d + 2);
                    if (pr[1] > 0.0f && pr[0] > M)
                        M = pr[0];
                }
                for (int64_t t = 0; t < d; t++)
                    orow[t] = 0.0f;
                for (int64_t sp = 0; sp < pl.nks; sp++) {
                    const float *pr = part + (base * pl.nks + sp) * pstride + r * (d + 2);
                    if (!(pr[1] > 0.0f))
                        continue;
                    const float w = exp2f(pr[0] - M);
                    L += w * pr[1];
                    for (int64_t t = 0; t < d; t++)
                        orow[t] += w * pr[2 + t];
                }
                const float inv = L > 0.0f ? 1.0f / L : 0.0f; /* a row that sees no key is 0 */
                for (int64_t t = 0; t < d; t++)
                    orow[t] *= inv;
            }
        }
    }
    return failed ? HB_ENOMEM : HB_OK;
}
