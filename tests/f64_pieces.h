/*
 * f64_pieces.h - mode convert-device's four backend hooks (core/backend.h f64_copy_in .. f64_copy_out)
 * for the plugin tests, which link no harness layer above kernels: each piece run between the
 * backend's timer_begin and timer_end, as the driver's executor runs it (measure/exec.c), so that a
 * test checks both the values and that every piece's device work joins the timer.
 */
#ifndef HB_TEST_F64_PIECES_H
#define HB_TEST_F64_PIECES_H

#include "core/backend.h"

/* One piece (0 copy in, 1 convert in, 2 convert out, 3 copy out) of n elements of b; *s gets the
 * device seconds timer_end read (untouched where the hook failed). Returns the hook's status, else
 * timer_begin's or timer_end's. */
static inline hb_status f64_piece_timed(hb_instance *inst, int which, hb_buf *b, const double *src, double *dst, size_t n,
                                        double *s)
{
    const hb_backend_ops *o = inst->ops;
    hb_status st = o->timer_begin(inst);
    if (st != HB_OK) return st;
    st = which == 0   ? o->f64_copy_in(inst, b, src, n)
         : which == 1 ? o->f64_convert_in(inst, b, n)
         : which == 2 ? o->f64_convert_out(inst, b, n)
                      : o->f64_copy_out(inst, b, dst, n);
    double t = -1;
    hb_status s2 = o->timer_end(inst, &t);
    if (st != HB_OK) return st;
    if (s2 == HB_OK) *s = t;
    return s2;
}

/* The f64 host tensor src[0..n) into b (copy, then conversion): *copy_s and *convert_s their device
 * seconds. HB_OK or the first piece's error. */
static inline hb_status f64_in_timed(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *convert_s)
{
    hb_status st = f64_piece_timed(inst, 0, b, src, NULL, n, copy_s);
    return st != HB_OK ? st : f64_piece_timed(inst, 1, b, NULL, NULL, n, convert_s);
}

/* b's n elements into the host's dst[0..n) as f64 (conversion, then copy). */
static inline hb_status f64_out_timed(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *convert_s)
{
    hb_status st = f64_piece_timed(inst, 2, b, NULL, NULL, n, convert_s);
    return st != HB_OK ? st : f64_piece_timed(inst, 3, b, NULL, dst, n, copy_s);
}

#endif
