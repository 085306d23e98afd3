/*
 * cpu_dequant.c - op dequantize on the cpu backend: a weight's blocks (q8_0, q4_k, q5_k, q6_k) to f32,
 * each value as the format defines it (core/quant.c's hb_quant_dequantize, the one definition), the
 * blocks split over the OpenMP team in contiguous ranges. The one-time cost of running a quantized
 * model's weights in f32 (docs/quantized.md): scalar code, no SIMD of its own.
 */
#include "cpu/cpu_priv.h"
#include <stdio.h>
#include "core/quant.h"
#include <omp.h>

hb_status hb_cpu_dequant_check(const hb_case *c, char *reason, size_t reasonlen)
{
    const int be = hb_quant_block_elems(c->dtype);
    if (be <= 0) { snprintf(reason, reasonlen, "dequantize takes a quantized dtype"); return HB_ESKIP; }
    if (!hb_quant_blocks_whole(c, reason, reasonlen)) return HB_ESKIP;
    return HB_OK;
}

hb_status hb_cpu_dequant_run(const hb_case *c, const void *blocks, float *out)
{
    const int be = hb_quant_block_elems(c->dtype), bb = hb_quant_block_bytes(c->dtype);
    if (be <= 0 || c->shape.n % be) return HB_EINVAL;
    const int64_t nb = c->shape.n / be;
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t b0 = nb * t / nt, b1 = nb * (t + 1) / nt;
        if (b1 > b0)
            bad |= hb_quant_dequantize(c->dtype, (const unsigned char *)blocks + b0 * bb, out + b0 * be, (b1 - b0) * be) != HB_OK;
    }
    return bad ? HB_EINVAL : HB_OK;
}
