/*
 * convert.h - host-side element type conversion, vectorized (SIMD via the compiler, F16C for half)
 * and multi-threaded (OpenMP) for large arrays so that it runs at memory bandwidth.
 * f64->f32 rounds to nearest even (C cast); f32->f16 and f32->bf16 round to nearest even;
 * f64->f16/bf16 goes through f32.
 */
#ifndef HB_CONVERT_H
#define HB_CONVERT_H
#include <stddef.h>
#include <stdint.h>
#include "core/hybench.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Host element types. */
typedef enum hb_elem { HB_ELEM_F64, HB_ELEM_F32, HB_ELEM_F16, HB_ELEM_BF16 } hb_elem;
size_t hb_elem_size(hb_elem e);
/* Storage element type on the device for a compute dtype (tf32 stores f32). */
hb_elem hb_elem_of_dtype(hb_dtype d);

/* dst[i] = (dst type) src[i] for i < n. dst and src must not overlap. Any pair of types; same type
 * copies. Arrays below 64 Ki elements run on the calling thread only. */
void hb_convert(void *dst, hb_elem dst_t, const void *src, hb_elem src_t, size_t n);

/* Scalar helpers (round to nearest even). */
uint16_t hb_f32_to_f16(float f);
float hb_f16_to_f32(uint16_t h);
uint16_t hb_f32_to_bf16(float f);
float hb_bf16_to_f32(uint16_t h);
#ifdef __cplusplus
}
#endif
#endif
