/*
 * cpu_attn.c - the cpu backend's attention: the op's layouts mapped onto the fused kernel's strides
 * (k_attention), and the choice, per call, of the kernel's vector width (attn_body.h, compiled here
 * at 8 floats and in attn_avx512.c at 16).
 *
 * The op (core/hybench.h): o = softmax(q k^T / sqrt(d) + mask) v, q and o [batch, heads, seq, d],
 * k and v [batch, kv_heads, kv_seq, d] (or layout=bshd: q, o [batch, seq, heads, d], k, v
 * [batch, kv_seq, kv_heads, d]), query head h reading kv head h / (heads / kv_heads) (GQA),
 * causal: query i sees keys j <= i + (kv_seq - seq) (hbk_attn_keys), a row that sees no key is 0.
 * f32, caller-owned, dense.
 *
 * Width: 16 (attn_run_avx512, built with -mavx512f -mfma into every x86-64 build) where the CPU has
 * AVX-512F with the OS saving its state (__builtin_cpu_supports, decided once per process), else 8
 * (attn_run_w8, this file, the build's -march); HB_CPU_ATTN_ISA=avx2 (read per call; when unset,
 * HB_CPU_ISA=avx2 does the same) asks for 8, so tests and users can run both where the CPU allows
 * (measured: attn_pick_width). The case's impl names the width
 * that ran (attn_impl): own-flash[-sleef]-avx512 (16), own-flash[-sleef]-avx2 (8 on an AVX2 build),
 * own-flash[-sleef] (8 on another build); "-sleef" where exp2 is SLEEF's.
 */
#include <stdlib.h>
#include <string.h>

#define ATTN_VW 8
#define ATTN_RUN attn_run_w8
#include "cpu/attn_body.h"

static int cpu_has_avx512f(void)
{
#if defined(__x86_64__) || defined(__i386__)
    static int v = -1; /* decided once: cpuid does not change under a process */
    int r = __atomic_load_n(&v, __ATOMIC_RELAXED);
    if (r < 0) {
        __builtin_cpu_init();
        r = __builtin_cpu_supports("avx512f") ? 1 : 0;
        __atomic_store_n(&v, r, __ATOMIC_RELAXED);
    }
    return r;
#else
    return 0;
#endif
}

int attn_pick_width(int cpu_avx512, int built, const char *force)
{
    /* 16 wide where the CPU has it. On the H100 machine's 16-core Xeon (AVX-512, 2026-11-27, same call)
     * the 16-wide body ran b1 h32 s128..2048 d64 in 0.49-0.59x the 8-wide body's time (decode 0.97x);
     * an earlier measurement that had it slower was of a build whose broadcasts were lane-by-lane
     * inserts (attn_body.h vset), worse at 16 lanes than at 8 */
    return cpu_avx512 && built && !(force && !strcmp(force, "avx2")) ? 16 : 8;
}

/* The force knob: HB_CPU_ATTN_ISA, else HB_CPU_ISA, else NULL (read per call). */
static const char *attn_force(void)
{
    const char *e = hb_cpu_cfg()->cpu_attn_isa;
    return e && *e ? e : hb_cpu_cfg()->cpu_isa;
}

int attn_width(void)
{
    return attn_pick_width(cpu_has_avx512f(), attn_avx512_built, attn_force());
}

const char *attn_impl(void)
{
    if (attn_width() == 16)
        return attn_avx512_sleef ? "own-flash-sleef-avx512" : "own-flash-avx512";
#if defined(__AVX2__)
    return ATTN_SLEEF ? "own-flash-sleef-avx2" : "own-flash-avx2";
#else
    return ATTN_SLEEF ? "own-flash-sleef" : "own-flash";
#endif
}

hb_status k_attention(const hbk_attn *a, const float *q, const float *k, const float *v, float *o)
{
    /* the op's layouts (kshape.h): q, o [b, heads, seq, d] and k, v [b, kv_heads, kv_seq, d]; or bshd:
     * q, o [b, seq, heads, d] and k, v [b, kv_seq, kv_heads, d]. Strides per batch, head, position. */
    const int64_t qb = a->heads * a->seq * a->d, kb = a->kvh * a->kvs * a->d;
    const int64_t qh = a->bshd ? a->d : a->seq * a->d, qp = a->bshd ? a->heads * a->d : a->d;
    const int64_t kh = a->bshd ? a->d : a->kvs * a->d, kp = a->bshd ? a->kvh * a->d : a->d;
    const attn_io io = {
        .q = q, .k = k, .v = v, .o = o,
        .qs = { qb, qh, qp },
        .os = { qb, qh, qp },
        .ks = { kb, kh, kp },
        .vs = { kb, kh, kp },
    };
    return attn_width() == 16 ? attn_run_avx512(a, &io) : attn_run_w8(a, &io);
}
