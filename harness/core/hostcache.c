/*
 * hostcache.c - write back and evict a host memory range from the CPU caches (hostcache.h).
 */
#include "core/hostcache.h"
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

#define HB_LINE 64 /* x86 cache line (CPUID.1:EBX[15:8] * 8 is 64 on every x86-64 CPU shipped) */

static int have_clflushopt(void)
{
    static int known = -1;
    if (known < 0) {
        unsigned a, b, c, d;
        known = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) ? 1 : 0;
    }
    return known;
}

__attribute__((target("clflushopt"))) static void evict_opt(uintptr_t a, uintptr_t end)
{
    for (; a < end; a += HB_LINE) _mm_clflushopt((void *)a);
    _mm_sfence();
}

static void evict_plain(uintptr_t a, uintptr_t end)
{
    for (; a < end; a += HB_LINE) _mm_clflush((void *)a);
    _mm_mfence();
}

void hb_host_evict(const void *p, size_t bytes)
{
    if (!p || !bytes) return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(HB_LINE - 1), end = (uintptr_t)p + bytes;
    if (have_clflushopt()) evict_opt(a, end);
    else evict_plain(a, end);
}

const char *hb_host_evict_method(void) { return have_clflushopt() ? "clflushopt" : "clflush"; }

#elif defined(__aarch64__)

static uintptr_t line_bytes(void)
{
    uint64_t ctr;
    __asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
    return (uintptr_t)4 << ((ctr >> 16) & 0xf); /* DminLine: log2 of the line in 4-byte words */
}

void hb_host_evict(const void *p, size_t bytes)
{
    if (!p || !bytes) return;
    uintptr_t line = line_bytes();
    uintptr_t a = (uintptr_t)p & ~(line - 1), end = (uintptr_t)p + bytes;
    for (; a < end; a += line) __asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
    __asm__ volatile("dsb ish" : : : "memory");
}

const char *hb_host_evict_method(void) { return "dc civac"; }

#else

void hb_host_evict(const void *p, size_t bytes) { (void)p; (void)bytes; }
const char *hb_host_evict_method(void) { return "none"; }

#endif
