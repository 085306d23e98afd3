/*
 * attn_avx512.c - the cpu backend's fused attention (attn_body.h) at 16 floats per vector, built into
 * every x86-64 build with -mavx512f -mfma (Makefile, AVX512_FLAGS) and chosen per call by cpu_attn.c
 * (attn_width) where the CPU has AVX-512F, whatever -march the rest of the build used (as
 * ew_avx512.c does for gelu and silu). Nothing here runs on a CPU without AVX-512F. Without those
 * flags (another architecture) attn_run_avx512 is a stub that is never chosen (attn_avx512_built 0).
 */
#include "cpu/cpu_attn.h"

#if defined(__AVX512F__) && defined(__FMA__)
#define ATTN_VW 16
#define ATTN_RUN attn_run_avx512
#include "cpu/attn_body.h"
const int attn_avx512_built = 1;
const int attn_avx512_sleef = ATTN_SLEEF;
#else
hb_status attn_run_avx512(const hbk_attn *a, const attn_io *io)
{
    (void)a, (void)io;
    return HB_EINVAL; /* never chosen: attn_avx512_built is 0 */
}
const int attn_avx512_built = 0;
const int attn_avx512_sleef = 0;
#endif
