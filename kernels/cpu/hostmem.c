/*
 * hostmem.c - 64-byte aligned host buffers zeroed by first touch from the OpenMP threads.
 */
#include "cpu/hostmem.h"
#include "cpu/cpu_priv.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define HOSTMEM_PAR_MIN ((size_t)256 << 10)

void *hb_host_alloc(size_t bytes)
{
    size_t b = bytes ? (bytes + 63) / 64 * 64 : 64;
    if (b < bytes) /* overflow */
        return NULL;
    char *p = aligned_alloc(64, b);
    if (!p)
        return NULL;
    if (b < HOSTMEM_PAR_MIN || omp_in_parallel()) {
        memset(p, 0, b);
        return p;
    }
#pragma omp parallel
    {
        size_t T = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        size_t lo = (size_t)((unsigned __int128)b * t / T) / 64 * 64;
        size_t hi = t + 1 == T ? b : (size_t)((unsigned __int128)b * (t + 1) / T) / 64 * 64;
        if (hi > lo)
            memset(p + lo, 0, hi - lo);
    }
    return p;
}

hb_status hb_host_buf_alloc(int64_t *allocated, size_t bytes, hb_route route, hb_buf *out)
{
    memset(out, 0, sizeof *out);
    void *p = hb_host_alloc(bytes);
    if (!p)
        return HB_ENOMEM;
    out->host = out->dev = p;
    out->bytes = bytes;
    out->route = route;
    if (allocated)
        *allocated += (int64_t)bytes;
    return HB_OK;
}

void hb_host_buf_free(int64_t *allocated, hb_buf *b)
{
    if (!b || !b->host)
        return;
    if (allocated)
        *allocated -= (int64_t)b->bytes;
    free(b->host);
    memset(b, 0, sizeof *b);
}

hb_status hb_host_noop(hb_instance *inst, hb_buf *b)
{
    (void)inst;
    (void)b;
    return HB_OK;
}

/* One flush buffer per process (each backend type runs in its own child process), allocated on the
 * first cold compute and kept: twice the last-level cache, at least 64 MiB. */
static char *g_flush;
static size_t g_flush_bytes;
static char g_flush_sink;

void hb_host_flush_cache(void)
{
    if (!g_flush) {
        size_t b = 2 * hb_cpu_llc_bytes();
        if (b < ((size_t)64 << 20))
            b = (size_t)64 << 20;
        g_flush = hb_host_alloc(b);
        if (!g_flush)
            return;
        g_flush_bytes = b;
    }
    char *f = g_flush;
    const int64_t n = (int64_t)g_flush_bytes;
    char acc = 0;
#pragma omp parallel for schedule(static) reduction(^ : acc)
    for (int64_t i = 0; i < n; i += 64) {
        f[i] = (char)(f[i] + 1);
        acc ^= f[i];
    }
    __atomic_store_n(&g_flush_sink, acc, __ATOMIC_RELAXED); /* keep the reads */
}
