/*
 * hostmem.c - 64-byte aligned host buffers zeroed by first touch from the OpenMP threads.
 */
#include "cpu/hostmem.h"

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

