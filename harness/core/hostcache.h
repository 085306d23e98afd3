/*
 * hostcache.h - write back and evict a host memory range from every CPU cache (docs/measurement.md,
 * "Hot and cold", the mapped route).
 *
 * On the mapped (zero-copy) route a device reads its operands from host memory over the bus during
 * the compute, and each read is answered by whichever agent holds the line: the memory controller,
 * or a CPU cache that holds it (a snoop hit; for a line the CPU has modified, the owning core must
 * supply it). A device read leaves the CPU's copy in its state, so whatever the mode's host work
 * left in the caches lasts through every untimed settle run and the timed compute. hybench gives
 * the device operands of every mode the same start: no line of them in any CPU cache, the data in
 * memory.
 */
#ifndef HB_HOSTCACHE_H
#define HB_HOSTCACHE_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Write back (where modified) and invalidate, in every cache of the coherence domain, each cache
 * line that overlaps [p, p + bytes); p needs no alignment, bytes may be 0 (nothing is done). The
 * data is unchanged. Ordered before the caller's later loads and stores (a fence ends it), so a
 * device access started after the return finds the lines in memory.
 * x86-64: CLFLUSHOPT where CPUID.(EAX=7,ECX=0):EBX[23] says the CPU has it, else CLFLUSH; then
 * SFENCE / MFENCE (Intel SDM vol. 2A, CLFLUSHOPT: "ordered with respect to ... SFENCE").
 * AArch64: DC CIVAC per line (line size from CTR_EL0.DminLine), then DSB ISH (Arm ARM, D7.5.9;
 * Linux lets EL0 issue it). Elsewhere: nothing (hb_host_evict_method says "none").
 * Cost: about one cache line per few nanoseconds per thread; the caller pays it outside any timed
 * phase. */
void hb_host_evict(const void *p, size_t bytes);

/* The instruction hb_host_evict uses on this CPU: "clflushopt", "clflush", "dc civac" or "none"
 * (a static string). */
const char *hb_host_evict_method(void);

#ifdef __cplusplus
}
#endif
#endif
