/*
 * clockprobe.h - the host CPU's effective clock (clockprobe.c), included by measure.h.
 *
 * Units: every frequency is in GHz (1e9 cycles per second of CLOCK_MONOTONIC). NAN means "no
 * reading": never 0, never a made-up value.
 *
 * Method: a dependent chain of 64-bit `imul reg, reg` (the multiplier in a register, odd, so the
 * product never collapses to 0 or a constant) timed with hb_now(): 3 cycles per imul on Intel
 * P-cores since Nehalem and on AMD Zen 1-5 (Agner Fog, "Instruction tables", www.agner.org/optimize;
 * uops.info, IMUL_R64_R64 latency), so GHz = 3 * imuls / seconds / 1e9. Best (fastest) of 3 chains
 * of PROBE_IMULS (clockprobe.c) per CPU. Where perf_event_open gives PERF_COUNT_HW_CPU_CYCLES
 * (user-only, the calling thread), the cycles counted over the same chain give a second estimate
 * that does not depend on the latency table; in most VMs that counter is absent and it is skipped.
 *
 * Physical range [HB_CLOCK_GHZ_MIN, HB_CLOCK_GHZ_MAX] = [0.2, 7.0] GHz: no shipping x86 or Arm
 * server/desktop core runs above ~6.2 GHz (Intel Core i9-14900KS, 6.2 GHz maximum turbo, 2024) and
 * none below a few hundred MHz (lowest P-states of Intel/AMD/Arm server parts are 0.4-1.0 GHz). A
 * chain that reads outside it did not measure the clock (a core that runs the chain faster than its
 * assumed latency, or a thread preempted for most of every try): the reading is NAN and the CPU is
 * reported invalid, never recorded as a clock.
 */
#ifndef HB_CLOCKPROBE_H
#define HB_CLOCKPROBE_H
#include "results/results.h"

#define HB_CLOCK_GHZ_MIN 0.2
#define HB_CLOCK_GHZ_MAX 7.0

/* 1 when ghz is a physically possible core clock (finite and within [HB_CLOCK_GHZ_MIN,
 * HB_CLOCK_GHZ_MAX]), else 0. */
int hb_clock_ghz_valid(double ghz);

/* The host CPU's effective clock from the imul chain, run on each online CPU in turn (up to 64;
 * the caller's affinity mask is restored): *ghz_min is the slowest CPU, *ghz_max the fastest, over
 * the CPUs whose reading is valid. Returns the number of valid CPUs; 0 (both NAN) when affinity
 * cannot be read, the architecture has no probe, or no CPU read a valid clock. No kernel files are
 * read. Takes ~0.1-0.2 ms per CPU. Called before and after the sampling of every case group by hb_measure_group (sample.c). */
int hb_clock_probe(double *ghz_min, double *ghz_max);

typedef struct hb_clock_reading {
    double ghz_min, ghz_max; /* imul chain: slowest / fastest valid CPU (NAN when none) */
    double kernel_ghz;       /* kernel's current frequency, highest over the probed CPUs: cpufreq
                              * scaling_cur_freq, else "cpu MHz" of /proc/cpuinfo; NAN when neither */
    double kernel_max_ghz;   /* cpufreq cpuinfo_max_freq, highest over the probed CPUs; NAN without cpufreq */
    double perf_ghz;         /* user-mode PERF_COUNT_HW_CPU_CYCLES / seconds over the same chain, fastest
                              * CPU; NAN when the counter cannot be opened (most VMs) or reads out of range */
    double perf_cycles_per_imul; /* counted cycles per imul (3.0 expected); NAN without the counter */
    int ncpus;               /* CPUs probed */
    int nvalid;              /* CPUs whose chain read a valid clock */
    int valid;               /* 1 when every probed CPU read a valid clock (and at least one was probed) */
    char kernel_src[24];     /* "cpufreq", "/proc/cpuinfo" or "none" */
    char why[96];            /* "" when valid; else what was rejected and why */
} hb_clock_reading;

/* hb_clock_probe plus the kernel's and the cycle counter's view, for the same CPUs. Fills *r
 * completely (NANs where unknown) and returns r->nvalid. Reads sysfs per CPU, or /proc/cpuinfo once
 * (that can take milliseconds on large hosts): meant for a run-start self-check, not per case. */
int hb_clock_probe_ex(hb_clock_reading *r);

/* The kernel's view of one CPU's clock in GHz: /sys/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq
 * (kHz), else "cpu MHz" of processor N in /proc/cpuinfo (in a VM usually the nominal TSC frequency,
 * not the core's turbo clock). *max_ghz (may be NULL) gets cpuinfo_max_freq, NAN when absent.
 * Returns NAN when neither source exists for that CPU. */
double hb_kernel_cpu_ghz(int cpu, double *max_ghz);

/* Run-start self-check, for the meta record's host_clock (results/record.h hb_rec_host_clock, whose
 * members must be absent on entry): probes the clock (hb_clock_probe_ex, the reading kept in *r, which
 * h->kernel_source points into) and puts, in this order: probe_ghz (the fastest CPU), probe_ghz_min,
 * kernel_ghz, kernel_max_ghz, kernel_source, perf_ghz, perf_cycles_per_imul, method ("imul chain"),
 * cpus, valid, agrees_within_15pct, why (written into why[0..whylen), which h->why points to). GHz;
 * NaN (written null) where unknown. agrees_within_15pct: the fastest CPU's probe is within 15% of the
 * kernel's current or maximum frequency. r and why must outlive h's use. HB_OK or HB_ENOMEM. */
hb_status hb_clock_selfcheck(hb_rec_host_clock *h, hb_clock_reading *r, char *why, size_t whylen);
#endif
