/*
 * clockprobe.c - the host CPU's effective clock, measured per case beside the samples.
 *
 * Why: on a shared virtual machine the host moves vCPUs between cores and frequency states; this
 * machine's vCPUs switch between ~2.0 and ~3.7 GHz for tens of seconds at a time, and every case
 * timed in the slow state reads 25-40% slower. A GPU run records the SM clock per case (NVML) and
 * flags throttled samples; this is the CPU counterpart, so that `hybench compare` can tell a machine
 * in another clock state from a slower build.
 *
 * How: a chain of dependent 64-bit register adds (latency 1 cycle on every x86-64 core since the
 * P6, and on AArch64 cores: Agner Fog, "Instruction tables"; Arm Software Optimization Guides), so
 * adds / seconds = cycles / second. Best of 3 chains of 100000 adds (~30-50 us each) on every
 * online CPU in turn (the calling thread moves with sched_setaffinity and returns to its own mask).
 */
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "driver.h"
#include "stats.h"

enum { PROBE_ADDS = 100000, PROBE_TRIES = 3, PROBE_MAX_CPUS = 64 };

static double chain_ghz(void)
{
    double best = INFINITY;
    for (int t = 0; t < PROBE_TRIES; t++) {
        uint64_t x = 0;
        double t0 = hb_now();
        for (int i = 0; i < PROBE_ADDS; i += 4) {
#if defined(__x86_64__)
            __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
#elif defined(__aarch64__)
            __asm__ volatile("add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1" : "+r"(x));
#else
            return NAN;
#endif
        }
        double dt = hb_now() - t0;
        if (x != (uint64_t)PROBE_ADDS) return NAN;
        if (dt > 0 && dt < best) best = dt;
    }
    return isfinite(best) ? PROBE_ADDS / best / 1e9 : (double)NAN;
}

int hb_clock_probe(double *ghz_min, double *ghz_max)
{
    *ghz_min = NAN;
    *ghz_max = NAN;
    cpu_set_t own;
    if (sched_getaffinity(0, sizeof own, &own) != 0) return 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) ncpu = 1;
    if (ncpu > PROBE_MAX_CPUS) ncpu = PROBE_MAX_CPUS;
    int n = 0;
    double lo = INFINITY, hi = 0;
    for (long c = 0; c < ncpu; c++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET((int)c, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) continue; /* not allowed to run there */
        double g = chain_ghz();
        if (!isfinite(g)) continue;
        if (g < lo) lo = g;
        if (g > hi) hi = g;
        n++;
    }
    sched_setaffinity(0, sizeof own, &own);
    if (n == 0) return 0;
    *ghz_min = lo;
    *ghz_max = hi;
    return n;
}
