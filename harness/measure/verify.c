/*
 * verify.c - the output check shared by single ops, chains and plan replays (verify.h): poison,
 * and the relative L2 error under one rule for non-finite values.
 */
#include "measure/verify.h"
#include "measure/exec.h"
#include <math.h>
#include <stdint.h>

/* elements converted to f64 per block: 16 KiB of stack */
#define BLOCK 2048

double hb_verify_rel_error(const void *out, hb_elem el, const double *ref, size_t n, int flags, hb_verify *v)
{
    double buf[BLOCK];
    const size_t es = hb_elem_size(el);
    double num = 0, den = 0;
    long long bad = 0, skipped = 0, compared = 0, unusable = 0;
    for (size_t b = 0; b < n; b += BLOCK) {
        size_t m = n - b < BLOCK ? n - b : BLOCK;
        const double *o = buf;
        if (el == HB_ELEM_F64) o = (const double *)out + b;
        else hb_convert(buf, HB_ELEM_F64, (const char *)out + b * es, el, m);
        for (size_t i = 0; i < m; i++) {
            double r = ref[b + i];
            if (!isfinite(o[i])) { bad++; continue; }                                    /* rule 1 */
            if (isnan(r) && (flags & HB_VERIFY_SUBSAMPLED)) { skipped++; continue; }     /* rule 2 */
            if (!isfinite(r)) { unusable++; continue; }
            double d = o[i] - r;                                                         /* rule 3 */
            num += d * d;
            den += r * r;
            compared++;
        }
    }
    double rel = bad ? (double)INFINITY : unusable ? (double)NAN : den > 0 ? sqrt(num / den) : sqrt(num);
    if (v) {
        v->rel = rel;
        v->nonfinite = bad;
        v->skipped = skipped;
        v->compared = compared;
        v->fraction = n ? (double)compared / (double)n : 0;
    }
    return rel;
}

void hb_verify_poison(void *p, hb_elem el, size_t n)
{
    if (!p) return;
    switch (el) {
    case HB_ELEM_F64: for (size_t i = 0; i < n; i++) ((double *)p)[i] = NAN; break;
    case HB_ELEM_F32: for (size_t i = 0; i < n; i++) ((float *)p)[i] = NAN; break;
    case HB_ELEM_F16: for (size_t i = 0; i < n; i++) ((uint16_t *)p)[i] = 0x7E00; break;
    case HB_ELEM_BF16: for (size_t i = 0; i < n; i++) ((uint16_t *)p)[i] = 0x7FC0; break;
    }
}

hb_status hb_verify_poison_buf(hb_instance *inst, hb_buf *b, hb_elem el, size_t n, int upload)
{
    hb_verify_poison(b->host, el, n);
    return upload ? hb_exec_setup_place(inst, b) : HB_OK;
}
