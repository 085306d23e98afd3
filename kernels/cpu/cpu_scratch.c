/*
 * cpu_scratch.c - the cpu kernels' per-thread scratch memory (cpu_priv.h), kept between calls and
 * freed by hb_cpu_kernel_release. Split out of cpu_kernels.c.
 */
#include <stdlib.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* Per-thread scratch (im2col blocks, attention scores, pooling rows), kept between calls so that
 * a timed call does not page-fault fresh memory; grown on demand, released by
 * hb_cpu_kernel_release (the backend's close). Slot t belongs to OpenMP thread t of the team. */
#define SCRATCH_SLOTS 1024
float *g_scratch[SCRATCH_SLOTS];
static size_t g_scratch_cap[SCRATCH_SLOTS];

float *scratch(int slot, size_t floats)
{
    if (slot < 0 || slot >= SCRATCH_SLOTS)
        return NULL;
    if (g_scratch_cap[slot] >= floats && g_scratch[slot])
        return g_scratch[slot];
    size_t cap = floats < 4096 ? 4096 : floats + floats / 4;
    float *p = aligned_alloc(64, (cap * sizeof(float) + 63) / 64 * 64);
    if (!p)
        return NULL;
    free(g_scratch[slot]);
    g_scratch[slot] = p;
    g_scratch_cap[slot] = cap;
    return p;
}

/* One buffer the whole team shares (attention's partial results across key splits), kept and grown
 * like the per-thread slots; call it outside a parallel region. */
static float *g_shared;
static size_t g_shared_cap;

float *scratch_shared(size_t floats)
{
    if (g_shared_cap >= floats && g_shared)
        return g_shared;
    size_t cap = floats < 4096 ? 4096 : floats + floats / 4;
    float *p = aligned_alloc(64, (cap * sizeof(float) + 63) / 64 * 64);
    if (!p)
        return NULL;
    free(g_shared);
    g_shared = p;
    g_shared_cap = cap;
    return p;
}

void hb_cpu_kernel_release(void)
{
    free(g_shared);
    g_shared = NULL;
    g_shared_cap = 0;
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        free(g_scratch[i]);
        g_scratch[i] = NULL;
        g_scratch_cap[i] = 0;
    }
}
