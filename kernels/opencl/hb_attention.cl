/*
 * hb_attention.cl - fused attention o = softmax(q k^T * scale + mask) v, built once per head
 * dimension (the host passes -DHD=<head_dim>). Layouts (hybench.h): q,o[batch,heads,seq,HD],
 * k,v[batch,kv_heads,kv_seq,HD]; query head h reads kv head h / (heads/kv_heads) (grouped-query
 * attention); causal: query i sees keys j <= i + (kv_seq - seq).
 *
 * One work-item per query row, keys in blocks of HB_BK = 16 with the online softmax of Milakov &
 * Gimelshein 2018 (running max m, running sum l, output accumulator rescaled by exp(m_old - m_new)
 * once per block), as FlashAttention does per tile; the 16 probabilities of a block come from one
 * float16 exp. q, the accumulator and the dot products use
 * VW-wide float vectors (VW the largest of 16, 8, 4, 1 dividing HD).
 * Launch: global (ceil(seq/L)*L, batch*heads), local (L, 1).
 */
#ifndef HD
#error "HD (head dimension) must be defined by the host"
#endif
#define HB_BK 16
#if HD % 16 == 0
#define VW 16
#define FV float16
#define LDV(i, p) LD16((i), (p))
#define HSUMV(v) hb_hsum16(v)
#elif HD % 8 == 0
#define VW 8
#define FV float8
#define LDV(i, p) LD8((i), (p))
#define HSUMV(v) hb_hsum16((float16)((v), (float8)0.0f))
#elif HD % 4 == 0
#define VW 4
#define FV float4
#define LDV(i, p) LD4((i), (p))
#define HSUMV(v) ((v).x + (v).y + (v).z + (v).w)
#else
#define VW 1
#define FV float
#define LDV(i, p) LD1((i), (p))
#define HSUMV(v) (v)
#endif
#define NV (HD / VW)

__kernel void hb_attention(__global const TS *q, __global const TS *k, __global const TS *v,
                           __global TS *o, int heads, int kv_heads, int seq, int kv_seq, int causal,
                           float scale)
{
    const int i = (int)get_global_id(0), bh = (int)get_global_id(1);
    if (i >= seq) return;
    const int b = bh / heads, h = bh % heads, kvh = h / (heads / kv_heads);
    __global const TS *qp = q + ((size_t)bh * seq + i) * HD;
    __global const TS *kp = k + (size_t)(b * kv_heads + kvh) * (size_t)kv_seq * HD;
    __global const TS *vp = v + (size_t)(b * kv_heads + kvh) * (size_t)kv_seq * HD;
    const int jend = causal ? min(kv_seq, i + (kv_seq - seq) + 1) : kv_seq;
    FV qv[NV], acc[NV];
    for (int d = 0; d < NV; d++) { qv[d] = LDV(d, qp) * scale; acc[d] = 0.0f; }
    float m = -INFINITY, l = 0.0f;
    for (int j0 = 0; j0 < jend; j0 += HB_BK) {
        const int nb = min(HB_BK, jend - j0);
        /* the block's 16 scores as one float16 (keys past jend: -inf, so exp gives 0), then one
         * vector exp for the 16 probabilities */
        float s[HB_BK];
        for (int jj = 0; jj < HB_BK; jj++) {
            float sc = -INFINITY;
            if (jj < nb) {
                __global const TS *kr = kp + (size_t)(j0 + jj) * HD;
                FV t = 0.0f;
                for (int d = 0; d < NV; d++) t = fma(qv[d], LDV(d, kr), t);
                sc = HSUMV(t);
            }
            s[jj] = sc;
        }
        const float16 sv = vload16(0, s);
        const float mn = fmax(m, hb_hmax16(sv));
        const float corr = exp(m - mn);
        const float16 pv = exp(sv - mn);
        float p[HB_BK];
        vstore16(pv, 0, p);
        l = l * corr + hb_hsum16(pv);
        for (int d = 0; d < NV; d++) acc[d] *= corr;
        m = mn;
        for (int jj = 0; jj < nb; jj++) {
            __global const TS *vr = vp + (size_t)(j0 + jj) * HD;
            for (int d = 0; d < NV; d++) acc[d] = fma((FV)p[jj], LDV(d, vr), acc[d]);
        }
    }
    __global TS *op = o + ((size_t)bh * seq + i) * HD;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;  /* no visible key (causal, kv_seq < seq): 0, as cpu-ref */
    for (int d = 0; d < NV; d++) {
#if VW == 1
        ST1(acc[d] * inv, d, op);
#elif VW == 4
        ST4(acc[d] * inv, d, op);
#elif VW == 8
        ST8(acc[d] * inv, d, op);
#else
        ST16(acc[d] * inv, d, op);
#endif
    }
}
