/*
 * hostmem.h - private to the CPU backends: host buffers placed by first touch.
 */
#ifndef HB_HOSTMEM_H
#define HB_HOSTMEM_H
#include <stddef.h>
#include <stdint.h>
#include "core/backend.h"

/* Allocate `bytes` (0 allowed; rounded up to a multiple of 64) of 64-byte aligned host memory and
 * zero it from the OpenMP threads with the static partition hb_convert uses (thread t of T touches
 * bytes [B*t/T, B*(t+1)/T), boundaries rounded down to 64 bytes), so that on a NUMA host each page
 * lands on the node of the thread that later converts and computes on it (Linux first-touch
 * policy). Buffers under 256 KiB are zeroed by the calling thread.
 * Returns the pointer (caller owns it; release with free()) or NULL when memory is short. */
void *hb_host_alloc(size_t bytes);

/* Buffer hooks shared by the host-memory backends (cpu-ref, cpu): buf->host == buf->dev from
 * hb_host_alloc; *allocated (may be NULL) tracks the bytes held, for mem_info. HB_ENOMEM when memory
 * is short. hb_host_buf_free releases and zeroes *b. hb_host_noop is upload/download: the data
 * already is where the compute reads it. */
hb_status hb_host_buf_alloc(int64_t *allocated, size_t bytes, hb_route route, hb_buf *out);
void hb_host_buf_free(int64_t *allocated, hb_buf *b);
hb_status hb_host_noop(hb_instance *inst, hb_buf *b);
#endif
