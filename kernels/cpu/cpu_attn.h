/*
 * cpu_attn.h - private to the cpu backend's attention (cpu_attn.c, attn_avx512.c, attn_body.h): the
 * strided view the fused kernel computes on, its two compiled widths and the run-time choice between
 * them. The op and the kernel are described in cpu_attn.c and attn_body.h.
 */
#ifndef HB_CPU_ATTN_H
#define HB_CPU_ATTN_H
#include <stdint.h>

#include "core/hybench.h"
#include "cpu_ref/kshape.h"

/* Element strides of one tensor: per batch, per head, per sequence position (head_dim: stride 1). */
typedef struct attn_strides {
    int64_t b, h, s;
} attn_strides;

/* The tensors of one call (f32, caller-owned, never kept): q [b][heads][seq][d], k and v
 * [b][kv_heads][kv_seq][d], o like q, each addressed through its strides (elements), so that another
 * layout (bshd: [b][seq][heads][d]) is the same kernel with other strides. */
typedef struct attn_io {
    const float *q, *k, *v;
    float *o;
    attn_strides qs, ks, vs, os;
} attn_io;

/* The fused kernel (attn_body.h) compiled at 8 floats per vector (cpu_attn.c, the build's -march) and
 * at 16 (attn_avx512.c, -mavx512f -mfma on every x86-64 build). Same contract: o written for every
 * row of a (a from hbk_attn_params), HB_OK; HB_ENOMEM when a thread's workspace (cpu_scratch.c)
 * cannot be had (o then partly written). attn_run_avx512 may be called only when
 * attn_avx512_built is 1 and the CPU has AVX-512F (attn_width() == 16); otherwise it is a stub that
 * returns HB_EINVAL. */
hb_status attn_run_w8(const hbk_attn *a, const attn_io *io);
hb_status attn_run_avx512(const hbk_attn *a, const attn_io *io);
extern const int attn_avx512_built; /* 1 where attn_avx512.c was compiled with AVX-512F and FMA */
extern const int attn_avx512_sleef; /* 1 where that body's exp2 is SLEEF's (HB_HAVE_SLEEF) */

/* The width choice, a pure function so that tests can drive every input: 16 when the CPU has
 * AVX-512F (cpu_avx512: cpuid and the OS's saved ZMM state, __builtin_cpu_supports) and the 16-wide
 * body is built (built), unless force is "avx2" (then 8); else 8. force: the value of
 * HB_CPU_ATTN_ISA (or, when that is unset, HB_CPU_ISA), NULL when neither is set; any value other
 * than "avx2" is the automatic choice. */
int attn_pick_width(int cpu_avx512, int built, const char *force);
#endif
