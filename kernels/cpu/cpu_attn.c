/*
 * cpu_attn.c - the cpu backend's attention: per (batch, head, block of query rows) sgemm, masked
 * softmax, sgemm. Split out of cpu_kernels.c; its header comment describes the method.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include <cblas.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* ------------------------------------------------------------------ attention -------- */

/* One work item of k_attention: query rows q0..q0+nq of head bh, on the calling thread, S its
 * nq x kv_seq score scratch. */
static void attn_item(const hbk_attn *a, const float *q, const float *k, const float *v, float *o, float *S,
                      int64_t bh, int64_t q0, int64_t nq, float scale)
{
    const int64_t bi = bh / a->heads, h = bh % a->heads;
    const int64_t kvoff = (bi * a->kvh + h / a->rep) * a->kvs * a->d;
    const float *qb = q + (bh * a->seq + q0) * a->d;
    float *ob = o + (bh * a->seq + q0) * a->d;
    const int64_t nk = hbk_attn_keys(a, q0 + nq - 1); /* the most any row of the block sees */
    if (nk == 0) {
        memset(ob, 0, (size_t)(nq * a->d) * sizeof(float));
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)a->d, scale, qb,
                (int)a->d, k + kvoff, (int)a->d, 0.0f, S, (int)nk);
    for (int64_t i = 0; i < nq; i++) {
        float *srow = S + i * nk;
        const int64_t ni = hbk_attn_keys(a, q0 + i);
        if (ni == 0) {
            memset(srow, 0, (size_t)nk * sizeof(float));
            continue;
        }
        const float mx = max_f32(srow, ni);
        float den = 0.0f;
#pragma omp simd reduction(+ : den)
        for (int64_t j = 0; j < ni; j++) {
            const float e = fexp(srow[j] - mx);
            srow[j] = e;
            den += e;
        }
        const float inv = 1.0f / den;
#pragma omp simd
        for (int64_t j = 0; j < ni; j++)
            srow[j] *= inv;
        for (int64_t j = ni; j < nk; j++)
            srow[j] = 0.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)a->d, (int)nk, 1.0f, S,
                (int)nk, v + kvoff, (int)a->d, 0.0f, ob, (int)a->d);
}

hb_status k_attention(const hbk_attn *a, const float *q, const float *k, const float *v, float *o)
{
    const int T = omp_get_max_threads();
    const int64_t heads_total = a->b * a->heads;
    /* query rows per block: 128 (HB_CPU_ATTN_TQ overrides it for measurements) */
    const char *etq = getenv("HB_CPU_ATTN_TQ");
    int64_t tq = etq && atoll(etq) >= 16 ? atoll(etq) : 128;
    while (tq > 16 && heads_total * ((a->seq + tq - 1) / tq) < 4 * T)
        tq /= 2;
    if (tq > a->seq)
        tq = a->seq;
    const int64_t nblk = (a->seq + tq - 1) / tq, items = heads_total * nblk;
    const float scale = (float)(1.0 / sqrt((double)a->d));
    /* Items of equal work (no causal mask, or one block per head: decode) go to the threads in a
     * fixed static split, so that every call reads a head's K and V on the core that read them the
     * call before (the hot rule's settle runs then leave them in that core's L2 in every mode); a
     * causal prefill's blocks differ in work (later blocks see more keys) and are handed out
     * dynamically. */
    const int uniform = !a->causal || nblk == 1;
    int failed = 0;
    blas_serial_begin();
#pragma omp parallel if (items > 1)
    {
        float *S = scratch(omp_get_thread_num(), (size_t)(tq * (a->kvs > 0 ? a->kvs : 1)));
        if (!S) {
#pragma omp atomic write
            failed = 1;
        }
        if (uniform) {
#pragma omp for schedule(static)
            for (int64_t it = 0; it < items; it++)
                if (S) {
                    const int64_t q0 = it % nblk * tq;
                    attn_item(a, q, k, v, o, S, it / nblk, q0, a->seq - q0 < tq ? a->seq - q0 : tq, scale);
                }
        } else {
#pragma omp for schedule(dynamic, 1)
            for (int64_t it = 0; it < items; it++)
                if (S) {
                    const int64_t q0 = it % nblk * tq;
                    attn_item(a, q, k, v, o, S, it / nblk, q0, a->seq - q0 < tq ? a->seq - q0 : tq, scale);
                }
        }
    }
    blas_serial_end(T);
    return failed ? HB_ENOMEM : HB_OK;
}
