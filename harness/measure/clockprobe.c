/*
 * clockprobe.c - the host CPU's effective clock, measured per case beside the samples.
 *
 * Why: on a shared virtual machine the host moves vCPUs between cores and frequency states; this
 * machine's vCPUs switch between ~2.0 and ~3.7 GHz for tens of seconds at a time, and every case
 * timed in the slow state reads 25-40% slower. A GPU run records the SM clock per case (NVML) and
 * flags throttled samples; this is the CPU counterpart, so that `hybench compare` can tell a machine
 * in another clock state from a slower build.
 *
 * How: a chain of dependent 64-bit `imul reg, reg` with an odd multiplier held in a register (so
 * nothing is constant-folded and the product never becomes 0): 3 cycles latency per imul on Intel
 * P-cores since Nehalem (Core 2 Merom/Penryn: 5) and on AMD Zen 1 to Zen 5 (Agner Fog, "Instruction
 * tables", www.agner.org/optimize; uops.info, IMUL_R64_R64), so 3 * imuls / seconds = cycles/second.
 * Best of 3 chains of PROBE_IMULS imuls (96k cycles: ~25-50 us at 4-2 GHz) on every online CPU in
 * turn (the calling thread moves with sched_setaffinity and returns to its own mask).
 * The old probe timed `add $1, reg` chains as 1 cycle each; recent Intel cores (Golden Cove and
 * later, e.g. Sapphire Rapids) execute such add-immediate chains faster than one per cycle, and it
 * read 9.5-10.7 GHz on a 2.1 GHz Xeon. A multiply has no such shortcut.
 * Cores with a slower imul (Atom-class E-cores, AMD before Zen: 4-6 cycles) read low, never high;
 * where the cycle counter is readable, perf_cycles_per_imul shows it.
 *
 * Checks: a reading outside [0.2, 7.0] GHz (clockprobe.h says where the bounds come from) is not a
 * clock: it is NAN and the CPU is reported invalid. hb_clock_probe_ex adds the kernel's frequency
 * (cpufreq, else /proc/cpuinfo) and PERF_COUNT_HW_CPU_CYCLES (user-only, this thread) over the same
 * chain; hb_clock_selfcheck compares them once per run for the meta record.
 *
 * AArch64: a dependent `mul` chain runs, but its latency differs between cores (2 to 4 cycles in
 * the Arm Cortex/Neoverse software optimization guides), so the chain gives a clock only through the
 * cycle counter (perf); without it the probe returns NAN there, as on other architectures.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "measure/measure.h"
#include "core/stats.h"

enum { PROBE_IMULS = 32000, PROBE_TRIES = 3, PROBE_MAX_CPUS = 64 };
#define IMUL_LATENCY 3.0 /* cycles, x86-64 (see the top of this file) */

int hb_clock_ghz_valid(double ghz)
{
    return isfinite(ghz) && ghz >= HB_CLOCK_GHZ_MIN && ghz <= HB_CLOCK_GHZ_MAX;
}

/* User-mode core cycles of this thread, following it across CPUs; -1 when unavailable. */
static int perf_cycles_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) return -1; /* ENOENT/EOPNOTSUPP in most VMs, EACCES with perf_event_paranoid > 2 */
    uint64_t v;
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) {
        close(fd);
        return -1;
    }
    return fd;
}

static uint64_t perf_read(int fd)
{
    uint64_t v = 0;
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) return 0;
    return v;
}

/* One dependent chain of PROBE_IMULS multiplies; returns the product so that it is used. */
static uint64_t imul_chain(uint64_t x, uint64_t m)
{
    for (int i = 0; i < PROBE_IMULS; i += 8) {
#if defined(__x86_64__)
        __asm__ volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                         "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
                         : "+r"(x) : "r"(m) : "cc");
#elif defined(__aarch64__)
        __asm__ volatile("mul %0, %0, %1\n\tmul %0, %0, %1\n\tmul %0, %0, %1\n\tmul %0, %0, %1\n\t"
                         "mul %0, %0, %1\n\tmul %0, %0, %1\n\tmul %0, %0, %1\n\tmul %0, %0, %1"
                         : "+r"(x) : "r"(m));
#else
        x *= m;
#endif
    }
    return x;
}

/* One CPU: *chain_ghz from the latency table (NAN off x86-64), *perf_ghz and *cpi from the cycle
 * counter when fd >= 0 (else NAN). Best of PROBE_TRIES. */
static void probe_here(int fd, double *chain_ghz, double *perf_ghz, double *cpi)
{
    static volatile uint64_t mult = 0x9E3779B97F4A7C15ULL; /* odd: the product stays odd, never 0 */
    uint64_t m = mult, sink = 1;
    double best = INFINITY, pbest = 0, cbest = INFINITY;
    for (int t = 0; t < PROBE_TRIES; t++) {
        uint64_t c0 = fd >= 0 ? perf_read(fd) : 0;
        double t0 = hb_now();
        sink = imul_chain(sink | 1, m);
        double dt = hb_now() - t0;
        uint64_t c1 = fd >= 0 ? perf_read(fd) : 0;
        if (!(dt > 0)) continue;
        if (dt < best) best = dt;
        if (fd >= 0 && c1 > c0) {
            double cyc = (double)(c1 - c0);
            if (cyc / dt > pbest) pbest = cyc / dt; /* preemption only lowers it */
            if (cyc < cbest) cbest = cyc;
        }
    }
    __asm__ volatile("" : : "r"(sink)); /* the product is used */
#if defined(__x86_64__)
    *chain_ghz = isfinite(best) ? IMUL_LATENCY * PROBE_IMULS / best / 1e9 : (double)NAN;
#else
    *chain_ghz = NAN;
#endif
    *perf_ghz = pbest > 0 ? pbest / 1e9 : (double)NAN;
    *cpi = isfinite(cbest) ? cbest / PROBE_IMULS : (double)NAN;
}

static int read_khz(int cpu, const char *file, double *ghz)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/%s", cpu, file);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    double khz = 0;
    int ok = fscanf(f, "%lf", &khz) == 1 && khz > 0;
    fclose(f);
    if (ok) *ghz = khz / 1e6;
    return ok;
}

/* "cpu MHz" of every processor in /proc/cpuinfo, in GHz, into ghz[0..n) (NAN where missing). */
static int cpuinfo_ghz(double *ghz, int n)
{
    for (int i = 0; i < n; i++) ghz[i] = NAN;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[512];
    int cpu = -1, found = 0;
    while (fgets(line, sizeof line, f)) {
        int p;
        double mhz;
        if (sscanf(line, "processor : %d", &p) == 1) cpu = p;
        else if (sscanf(line, "cpu MHz : %lf", &mhz) == 1 && cpu >= 0 && cpu < n && mhz > 0) {
            ghz[cpu] = mhz / 1e3;
            found++;
        }
    }
    fclose(f);
    return found;
}

double hb_kernel_cpu_ghz(int cpu, double *max_ghz)
{
    double cur = NAN, mx = NAN;
    if (cpu < 0) return NAN;
    read_khz(cpu, "cpuinfo_max_freq", &mx);
    if (max_ghz) *max_ghz = mx;
    if (read_khz(cpu, "scaling_cur_freq", &cur)) return cur;
    double all[PROBE_MAX_CPUS];
    if (cpu >= PROBE_MAX_CPUS || !cpuinfo_ghz(all, PROBE_MAX_CPUS)) return NAN;
    return all[cpu];
}

static int probe_all(hb_clock_reading *r, int with_extras)
{
    memset(r, 0, sizeof *r);
    r->ghz_min = r->ghz_max = r->kernel_ghz = r->kernel_max_ghz = r->perf_ghz = r->perf_cycles_per_imul = NAN;
    snprintf(r->kernel_src, sizeof r->kernel_src, "none");
    cpu_set_t own;
    if (sched_getaffinity(0, sizeof own, &own) != 0) {
        snprintf(r->why, sizeof r->why, "sched_getaffinity: %s", strerror(errno));
        return 0;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) ncpu = 1;
    if (ncpu > PROBE_MAX_CPUS) ncpu = PROBE_MAX_CPUS;
    int fd = with_extras ? perf_cycles_open() : -1;
    double lo = INFINITY, hi = 0, phi = 0, cpi_lo = INFINITY;
    int probed[PROBE_MAX_CPUS] = {0};
#if defined(__x86_64__)
    const char *what = "imul chain read";
#else
    const char *what = "perf cycles (no mul latency table here) read";
#endif
    for (long c = 0; c < ncpu; c++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET((int)c, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) continue; /* not allowed to run there */
        double g, pg, cpi;
        probe_here(fd, &g, &pg, &cpi);
        probed[c] = 1;
        r->ncpus++;
#if !defined(__x86_64__)
        g = pg; /* no latency table off x86-64: the cycle counter is the only clock */
#endif
        if (!hb_clock_ghz_valid(g)) {
            if (!r->why[0])
                snprintf(r->why, sizeof r->why, "cpu %ld: %s %.3g GHz, outside [%.1f, %.1f] GHz: not a clock", c, what, g,
                         HB_CLOCK_GHZ_MIN, HB_CLOCK_GHZ_MAX);
            continue;
        }
        r->nvalid++;
        if (g < lo) lo = g;
        if (g > hi) hi = g;
        if (hb_clock_ghz_valid(pg) && pg > phi) phi = pg;
        if (isfinite(cpi) && cpi < cpi_lo) cpi_lo = cpi;
    }
    sched_setaffinity(0, sizeof own, &own);
    if (fd >= 0) close(fd);
    if (r->nvalid > 0) {
        r->ghz_min = lo;
        r->ghz_max = hi;
    }
    if (phi > 0) r->perf_ghz = phi;
    if (isfinite(cpi_lo)) r->perf_cycles_per_imul = cpi_lo;
    r->valid = r->ncpus > 0 && r->nvalid == r->ncpus;
    if (r->ncpus == 0 && !r->why[0]) snprintf(r->why, sizeof r->why, "no CPU could be probed (affinity refused)");
    if (with_extras) {
        double kcur = 0, kmax = 0, all[PROBE_MAX_CPUS];
        int have_all = -1;
        for (int c = 0; c < ncpu; c++) {
            if (!probed[c]) continue;
            double cur = NAN, mx = NAN;
            if (read_khz(c, "scaling_cur_freq", &cur)) snprintf(r->kernel_src, sizeof r->kernel_src, "cpufreq");
            else { /* /proc/cpuinfo parsed once for all CPUs */
                if (have_all < 0) have_all = cpuinfo_ghz(all, PROBE_MAX_CPUS) > 0;
                if (have_all) cur = all[c];
                if (isfinite(cur) && strcmp(r->kernel_src, "cpufreq") != 0)
                    snprintf(r->kernel_src, sizeof r->kernel_src, "/proc/cpuinfo");
            }
            read_khz(c, "cpuinfo_max_freq", &mx);
            if (isfinite(cur) && cur > kcur) kcur = cur;
            if (isfinite(mx) && mx > kmax) kmax = mx;
        }
        if (kcur > 0) r->kernel_ghz = kcur;
        if (kmax > 0) r->kernel_max_ghz = kmax;
    }
    return r->nvalid;
}

int hb_clock_probe(double *ghz_min, double *ghz_max)
{
    hb_clock_reading r;
    int n = probe_all(&r, 0);
    *ghz_min = r.ghz_min;
    *ghz_max = r.ghz_max;
    return n;
}

int hb_clock_probe_ex(hb_clock_reading *r)
{
    return probe_all(r, 1);
}

static int within(double a, double b, double tol)
{
    return isfinite(a) && isfinite(b) && b > 0 && fabs(a / b - 1) <= tol;
}

hb_status hb_clock_selfcheck(hb_rec_host_clock *h, hb_clock_reading *rp, char *why, size_t whylen)
{
    hb_clock_reading r;
    hb_clock_probe_ex(&r);
    *rp = r;
    double p = r.ghz_max;
    int agree = r.valid && (within(p, r.kernel_ghz, 0.15) || within(p, r.kernel_max_ghz, 0.15));
    size_t o = 0;
    if (whylen) why[0] = 0;
#define ADD(...) (o += (size_t)snprintf(why + o, o < whylen ? whylen - o : 0, __VA_ARGS__))
    if (!r.valid) ADD("invalid: %s", r.why);
    else if (!isfinite(r.kernel_ghz) && !isfinite(r.kernel_max_ghz)) ADD("the kernel reports no CPU frequency");
    else if (agree)
        ADD("probe %.2f GHz agrees with %s %.2f GHz%s", p, r.kernel_src,
            within(p, r.kernel_ghz, 0.15) ? r.kernel_ghz : r.kernel_max_ghz,
            within(p, r.kernel_ghz, 0.15) ? "" : " (max)");
    else if (!strcmp(r.kernel_src, "/proc/cpuinfo"))
        ADD("probe %.2f GHz vs /proc/cpuinfo %.2f GHz (%+.0f%%), no cpufreq: in a VM 'cpu MHz' is usually the nominal "
            "TSC frequency while the core runs at its turbo clock",
            p, r.kernel_ghz, 100 * (p / r.kernel_ghz - 1));
    else
        ADD("probe %.2f GHz vs cpufreq cur %.2f / max %.2f GHz: scaling_cur_freq is a sample, not the clock over the chain",
            p, r.kernel_ghz, r.kernel_max_ghz);
    if (r.valid && isfinite(r.perf_ghz))
        ADD("; perf cycles %.2f GHz (%.2f cycles/imul)", r.perf_ghz, r.perf_cycles_per_imul);
    else if (r.valid)
        ADD("; perf cycle counter not readable");
#undef ADD
    /* the struct's members, each put in the meta record's order (docs/results-schema.md) */
    hb_status st = HB_OK;
#define SET(m, v) (st = st ? st : HB_REC_SET(hb_rec_host_clock, h, m, v))
    SET(probe_ghz, r.ghz_max);
    SET(probe_ghz_min, r.ghz_min);
    SET(kernel_ghz, r.kernel_ghz);
    SET(kernel_max_ghz, r.kernel_max_ghz);
    SET(kernel_source, rp->kernel_src);
    SET(perf_ghz, r.perf_ghz);
    SET(perf_cycles_per_imul, r.perf_cycles_per_imul);
    SET(method, "imul chain");
    SET(cpus, (double)r.ncpus);
    SET(valid, r.valid ? 1 : 0);
    SET(agrees_within_15pct, agree);
    SET(why, why);
#undef SET
    return st;
}
