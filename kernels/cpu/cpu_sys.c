/*
 * cpu_sys.c - host topology (hwloc), thread binding and the host ceilings (cpu.h, cpu_priv.h).
 *
 * Ceilings (hb_cpu_ceilings):
 *   copy_gbps  STREAM "Copy"  c[i] = a[i]            bytes = 2 * 8 * N (read a, write c)
 *   triad_gbps STREAM "Triad" a[i] = b[i] + s * c[i] bytes = 3 * 8 * N
 *   (McCalpin's STREAM convention: no write-allocate traffic counted.) N doubles per array, each
 *   array at least 4x the last-level cache reported by hwloc (64 MiB minimum), first-touched by the
 *   threads with the static schedule the kernels use; the best of HB_STREAM_REPS repetitions after
 *   one untimed warm-up (STREAM: drop the first), results validated after timing. Each kernel runs
 *   with ordinary stores and with streaming stores (AVX/AVX-512 builds); the faster counts, and
 *   `how` says which, so the ceiling is what a copy can reach here, not what one compiler emits.
 *   peak_gflops_f32: OpenBLAS cblas_sgemm, n x n x n with n = 1024 (4096 on 16 or more cores),
 *   2 n^3 flops per call, best of 2 x HB_SGEMM_REPS after one warm-up call.
 *   peak_gflops_f32_1core: the same at n = 512 on one thread (what more threads must beat).
 *   peak_gflops_f32_1core_n128: one thread at n = 128, best of HB_SGEMM_SMALL_REPS calls: the single-core
 *   ceiling of a 128^3 product (matmul 128^3, bmm 16x128^3), which at n = 512 was 10% above what one
 *   core reaches at 128 (the Xeon host: 101 against 91 GFLOP/s).
 *   copy_gbps_ws_<N>MiB: STREAM Copy on a working set of N MiB (in + out), N = 1, 2, 4, ... up to twice
 *   the last-level cache (hb_cpu_copy_sweep), passes repeated inside one parallel region
 *   (cache_copy_gbps). copy_gbps itself is the DRAM figure.
 */
#include <hwloc.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "cpu/cpu.h"
#include "cpu/cpu_priv.h"
#include "cpu/hostmem.h"

#define HB_STREAM_REPS 10
#define HB_SGEMM_REPS 5

static hwloc_topology_t g_topo;
static int g_bound_threads;
static pid_t g_bound_pid;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The process's topology, loaded on first use (plain memory: still valid in a forked child).
 * NULL when hwloc fails; callers fall back to OpenMP's processor count. */
static hwloc_topology_t topo(void)
{
    if (g_topo)
        return g_topo;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return NULL;
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    g_topo = t;
    return g_topo;
}

/* The cores this process may run on: those whose cpuset meets the process's CPU binding when first
 * asked (so `taskset`/cgroup limits are honoured), computed once, before any thread is bound. */
#define MAX_CORES 4096
static hwloc_obj_t g_cores[MAX_CORES];
static int g_ncores = -1;

static void find_cores(void)
{
    if (g_ncores >= 0)
        return;
    g_ncores = 0;
    hwloc_topology_t t = topo();
    if (!t)
        return;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    int have = allowed && hwloc_get_cpubind(t, allowed, HWLOC_CPUBIND_PROCESS) == 0 &&
               !hwloc_bitmap_iszero(allowed);
    int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    for (int i = 0; i < n && g_ncores < MAX_CORES; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)i);
        if (c && c->cpuset && (!have || hwloc_bitmap_intersects(c->cpuset, allowed)))
            g_cores[g_ncores++] = c;
    }
    hwloc_bitmap_free(allowed);
}

int hb_cpu_ncores(void)
{
    find_cores();
    int n = g_ncores;
    if (n <= 0)
        n = omp_get_num_procs();
    return n > 0 ? n : 1;
}

size_t hb_cpu_llc_bytes(void)
{
    hwloc_topology_t t = topo();
    if (!t)
        return 0;
    static const hwloc_obj_type_t levels[] = { HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE,
                                               HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE };
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        int n = hwloc_get_nbobjs_by_type(t, levels[l]);
        if (n <= 0)
            continue;
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(t, levels[l], (unsigned)i);
            if (o && o->attr)
                total += (size_t)o->attr->cache.size;
        }
        if (total)
            return total;
    }
    return 0;
}

const char *hb_cpu_model(void)
{
    hwloc_topology_t t = topo();
    if (t) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
        const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
        if (!m)
            m = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "CPUModel");
        if (m)
            return m;
    }
    return "unknown CPU";
}

static int g_bind_gen;            /* bumped by each binding of the team */
static _Thread_local int t_bind_gen; /* the binding this thread took part in (0: none, a thread libgomp
                                      * started since) */

/* One OpenMP thread per usable core; thread t is bound to the cpuset of core t (all its hardware threads)
 * with hwloc_set_cpubind(HWLOC_CPUBIND_THREAD) from inside a parallel region. libgomp keeps the same
 * OS threads for later parallel regions of the same size, so the binding holds for the kernels.
 * OpenBLAS gets the same thread count; its pool is started before the binding so that its threads keep
 * the whole process cpuset. Done once per process (again in a forked child). */
int hb_cpu_bind_threads(void)
{
    pid_t pid = getpid();
    if (g_bound_threads > 0 && g_bound_pid == pid)
        return g_bound_threads;
    hwloc_topology_t t = topo();
    int n = hb_cpu_ncores();
    omp_set_dynamic(0);
    omp_set_num_threads(n);
    /* Start OpenBLAS's thread pool now, from this still-unbound thread: after fork() OpenBLAS
     * recreates its pthreads lazily from the calling thread, and threads created after the binding
     * below would inherit core 0's cpuset and all run on one core (measured: sgemm at half speed). */
    openblas_set_num_threads(n);
    {
        enum { W = 256 };
        float *w = calloc(3 * (size_t)W * W, sizeof *w);
        if (w) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, W, W, W, 1.0f, w, W, w + W * W, W, 0.0f,
                        w + 2 * W * W, W);
            free(w);
        }
    }
    if (t && g_ncores == n) {
        const int gen = ++g_bind_gen;
#pragma omp parallel num_threads(n)
        {
            hwloc_obj_t core = g_cores[omp_get_thread_num()];
            if (hwloc_set_cpubind(t, core->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
#pragma omp critical
                fprintf(stderr, "hybench cpu: binding thread %d to core failed (continuing unbound)\n",
                        omp_get_thread_num());
            }
            t_bind_gen = gen;
        }
    }
    openblas_set_num_threads(n);
    omp_set_num_threads(n); /* an OpenMP-built OpenBLAS sets the OpenMP count itself: restore ours */
    g_bound_threads = n;
    g_bound_pid = pid;
    return n;
}

int hb_cpu_rebind_team(void)
{
    hwloc_topology_t t = g_topo;
    const int n = g_bound_threads, gen = g_bind_gen;
    int rebound = 0;
    if (!t || n <= 0 || gen <= 0 || g_bound_pid != getpid() || g_ncores != n || omp_get_max_threads() != n)
        return 0;
#pragma omp parallel num_threads(n) reduction(+ : rebound)
    if (t_bind_gen != gen) { /* started after the binding: it has the master's one-core cpuset */
        hwloc_set_cpubind(t, g_cores[omp_get_thread_num()]->cpuset, HWLOC_CPUBIND_THREAD);
        t_bind_gen = gen;
        rebound++;
    }
    return rebound;
}

static void set_ceiling(hb_ceiling *c, const char *name, double v, const char *unit, const char *how)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->value = v;
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    snprintf(c->how, sizeof c->how, "%s", how);
}

/* STREAM kernels with ordinary stores (as compiled) and with streaming (non-temporal) stores; the
 * ceiling is the faster of the two, i.e. the best a copy/triad achieves on this host. Per thread the
 * static partition of hb_host_alloc's first touch, rounded to 8 doubles (64 bytes). */
static void part(int64_t n, int64_t *lo, int64_t *hi)
{
    int64_t T = omp_get_num_threads(), t = omp_get_thread_num();
    *lo = n * t / T / 8 * 8;
    *hi = t + 1 == T ? n : n * (t + 1) / T / 8 * 8;
}

static void stream_copy(double *restrict c, const double *restrict a, int64_t n, int nt)
{
#pragma omp parallel
    {
        int64_t lo, hi, i;
        part(n, &lo, &hi);
        i = lo;
#if defined(__AVX512F__)
        if (nt) {
            for (; i + 8 <= hi; i += 8)
                _mm512_stream_pd(c + i, _mm512_load_pd(a + i));
            _mm_sfence();
        }
#elif defined(__AVX__)
        if (nt) {
            for (; i + 4 <= hi; i += 4)
                _mm256_stream_pd(c + i, _mm256_load_pd(a + i));
            _mm_sfence();
        }
#endif
        for (; i < hi; i++)
            c[i] = a[i];
    }
}

static void stream_triad(double *restrict a, const double *restrict b, const double *restrict c, double s,
                         int64_t n, int nt)
{
#pragma omp parallel
    {
        int64_t lo, hi, i;
        part(n, &lo, &hi);
        i = lo;
#if defined(__AVX512F__)
        if (nt) {
            const __m512d vs = _mm512_set1_pd(s);
            for (; i + 8 <= hi; i += 8)
                _mm512_stream_pd(a + i, _mm512_add_pd(_mm512_load_pd(b + i), _mm512_mul_pd(vs, _mm512_load_pd(c + i))));
            _mm_sfence();
        }
#elif defined(__AVX__)
        if (nt) {
            const __m256d vs = _mm256_set1_pd(s);
            for (; i + 4 <= hi; i += 4)
                _mm256_stream_pd(a + i, _mm256_add_pd(_mm256_load_pd(b + i), _mm256_mul_pd(vs, _mm256_load_pd(c + i))));
            _mm_sfence();
        }
#endif
        for (; i < hi; i++)
            a[i] = b[i] + s * c[i];
    }
}

#if defined(__AVX__)
#define STREAM_VARIANTS 2
#else
#define STREAM_VARIANTS 1
#endif

/* STREAM copy and triad; returns 0 and fills the two rates (and whether streaming stores won),
 * or -1 (allocation failed / validation failed). */
static int stream_probe(double *copy_gbps, double *triad_gbps, size_t *array_bytes, int *copy_nt, int *triad_nt)
{
    size_t llc = hb_cpu_llc_bytes();
    size_t bytes = 4 * llc;
    if (bytes < ((size_t)64 << 20))
        bytes = (size_t)64 << 20;
    const int64_t n = (int64_t)(bytes / sizeof(double));
    *array_bytes = (size_t)n * sizeof(double);
    double *a = hb_host_alloc((size_t)n * sizeof(double));
    double *b = hb_host_alloc((size_t)n * sizeof(double));
    double *c = hb_host_alloc((size_t)n * sizeof(double));
    int rc = -1;
    if (!a || !b || !c)
        goto out;
    const double s = 0.5;
#pragma omp parallel
    {
        int64_t lo, hi;
        part(n, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.0;
        }
    }
    double best_copy[2] = { HUGE_VAL, HUGE_VAL }, best_triad[2] = { HUGE_VAL, HUGE_VAL };
    double ea = 1.0, eb = 2.0, ec = 0.0; /* expected values, for validation */
    for (int r = 0; r <= HB_STREAM_REPS; r++) {
        for (int v = 0; v < STREAM_VARIANTS; v++) {
            double t0 = now_s();
            stream_copy(c, a, n, v);
            double t1 = now_s();
            stream_triad(a, b, c, s, n, v);
            double t2 = now_s();
            ec = ea;
            ea = eb + s * ec;
            if (r > 0) { /* the first repetition is a warm-up */
                best_copy[v] = t1 - t0 < best_copy[v] ? t1 - t0 : best_copy[v];
                best_triad[v] = t2 - t1 < best_triad[v] ? t2 - t1 : best_triad[v];
            }
        }
    }
    for (int64_t i = 0; i < n; i += n / 97 + 1) {
        if (fabs(a[i] - ea) > 1e-12 * ea || fabs(c[i] - ec) > 1e-12 * ec || b[i] != eb) {
            fprintf(stderr, "hybench cpu: STREAM validation failed at %lld\n", (long long)i);
            goto out;
        }
    }
    *copy_nt = best_copy[1] < best_copy[0];
    *triad_nt = best_triad[1] < best_triad[0];
    *copy_gbps = 2.0 * 8.0 * (double)n / best_copy[*copy_nt] * 1e-9;
    *triad_gbps = 3.0 * 8.0 * (double)n / best_triad[*triad_nt] * 1e-9;
    rc = 0;
out:
    free(a);
    free(b);
    free(c);
    return rc;
}

/* STREAM Copy c[i] = a[i] over a working set of ws bytes (both arrays together) that stays in one
 * cache level: each thread copies its own static part, `passes` times over inside one parallel
 * region (a fork/join per pass would cost as much as an L2-sized pass), timed from the barrier
 * before the first pass to the barrier after the last. Ordinary stores (streaming stores would
 * leave the cache). Bytes counted as STREAM does: 2 x 8 per element and pass. Best of
 * HB_STREAM_REPS after one warm-up; result validated. Returns GB/s, or -1. */
static double cache_copy_gbps(size_t ws)
{
    const int64_t n = (int64_t)(ws / 2 / sizeof(double)) / 64 * 64;
    if (n < 1024)
        return -1;
    double *a = hb_host_alloc((size_t)n * sizeof(double));
    double *c = hb_host_alloc((size_t)n * sizeof(double));
    double best = HUGE_VAL;
    /* about 256 MiB moved per timing: milliseconds, far above the clock's resolution */
    int passes = (int)(((size_t)256 << 20) / (2 * (size_t)n * sizeof(double)));
    if (passes < 1)
        passes = 1;
    if (!a || !c)
        goto out;
#pragma omp parallel
    {
        int64_t lo, hi;
        part(n, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            a[i] = (double)(i & 1023);
            c[i] = 0.0;
        }
    }
    for (int r = 0; r <= HB_STREAM_REPS; r++) {
        double t0 = 0.0, t1 = 0.0;
#pragma omp parallel
        {
            int64_t lo, hi;
            part(n, &lo, &hi);
#pragma omp barrier
#pragma omp master
            t0 = now_s();
            for (int p = 0; p < passes; p++) {
#pragma omp simd
                for (int64_t i = lo; i < hi; i++)
                    c[i] = a[i];
                __asm__ volatile("" ::: "memory"); /* each pass is a pass */
            }
#pragma omp barrier
#pragma omp master
            t1 = now_s();
        }
        if (r > 0 && t1 - t0 < best)
            best = t1 - t0;
    }
    for (int64_t i = 0; i < n; i += n / 97 + 1)
        if (c[i] != (double)(i & 1023)) {
            fprintf(stderr, "hybench cpu: cache copy validation failed at %lld\n", (long long)i);
            best = HUGE_VAL;
            break;
        }
out:
    free(a);
    free(c);
    return isfinite(best) && best > 0 ? 2.0 * 8.0 * (double)n * passes / best * 1e-9 : -1;
}

int hb_cpu_copy_sweep(size_t *sizes, int max)
{
    size_t top = 2 * hb_cpu_llc_bytes();
    if (top < ((size_t)8 << 20))
        top = (size_t)8 << 20;
    int n = 0;
    for (size_t ws = (size_t)1 << 20; ws <= top && n < max && n < HB_COPY_SWEEP; ws *= 2) sizes[n++] = ws;
    return n;
}

/* Single-core sgemm sizes probed on their own (peak_gflops_f32_1core_n<N>): the sizes of the
 * single-core goals (analysis/roofline.c: matmul 128^3, bmm 16x128^3). */
#define HB_SGEMM_SMALL_N 128
#define HB_SGEMM_SMALL_REPS 200 /* 42 us a call at 100 GFLOP/s: 8 ms in all */

/* sgemm n^3 GFLOP/s, best of `reps` calls after one warm-up: on all threads, or one (one_core).
 * n <= 0: the default size (1024; 4096 on 16 or more cores; 512 on one core). */
static int sgemm_probe(double *gflops, int *size, int one_core, int n, int reps)
{
    /* n = 1024 below 16 cores (was 2048: 86 ms a call on 2 cores, preempted on a loaded host, where
     * it read 31-41 GFLOP/s while 128^3 ran at 190) */
    if (n <= 0)
        n = one_core ? 512 : hb_cpu_ncores() >= 16 ? 4096 : 1024;
    /* one core, n = 512: 2.7 ms a call at 100 GFLOP/s: short enough that one of the 10 runs is not
     * preempted on a loaded host (n = 1024, best of 5, read half of what 64^3 reached there) */
    int T = 0;
    *size = n;
    size_t nn = (size_t)n * (size_t)n;
    float *A = hb_host_alloc(nn * sizeof(float));
    float *B = hb_host_alloc(nn * sizeof(float));
    float *C = hb_host_alloc(nn * sizeof(float));
    int rc = -1;
    if (!A || !B || !C)
        goto out;
    unsigned st = 12345u;
    for (size_t i = 0; i < nn; i++) {
        st = st * 1664525u + 1013904223u;
        A[i] = (float)(st >> 8) * 0x1p-24f - 0.5f;
        st = st * 1664525u + 1013904223u;
        B[i] = (float)(st >> 8) * 0x1p-24f - 0.5f;
    }
    double best = HUGE_VAL;
    /* one core: OpenBLAS (OpenMP build) at one thread, restored after (cpu_priv.h) */
    if (one_core)
        T = hb_cpu_blas_one_thread();
    for (int r = 0; r <= reps; r++) {
        double t0 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        double t = now_s() - t0;
        if (r > 0 && t < best)
            best = t;
    }
    if (one_core)
        hb_cpu_blas_restore(T);
    /* validate one element against a double dot product */
    double ref = 0.0;
    for (int k = 0; k < n; k++)
        ref += (double)A[(size_t)7 * n + k] * (double)B[(size_t)k * n + 11];
    if (fabs((double)C[(size_t)7 * n + 11] - ref) > 1e-3 * (1.0 + fabs(ref))) {
        fprintf(stderr, "hybench cpu: sgemm probe validation failed\n");
        goto out;
    }
    *gflops = 2.0 * (double)n * (double)n * (double)n / best * 1e-9;
    rc = 0;
out:
    free(A);
    free(B);
    free(C);
    return rc;
}

int hb_cpu_ceilings(hb_ceiling *out, int max)
{
    int k = 0;
    int threads = omp_get_max_threads();
    double copy, triad, gf;
    size_t ab;
    int cnt, tnt;
    char how[96];
    if (max <= 0 || !out)
        return 0;
    if (stream_probe(&copy, &triad, &ab, &cnt, &tnt) == 0) {
        snprintf(how, sizeof how, "STREAM copy, 2 x %zu MiB f64, %d threads, best of %d, %s stores",
                 ab >> 20, threads, HB_STREAM_REPS, cnt ? "streaming" : "ordinary");
        set_ceiling(&out[k++], "copy_gbps", copy, "GB/s", how);
        if (k < max) {
            snprintf(how, sizeof how, "STREAM triad, 3 x %zu MiB f64, %d threads, best of %d, %s stores",
                     ab >> 20, threads, HB_STREAM_REPS, tnt ? "streaming" : "ordinary");
            set_ceiling(&out[k++], "triad_gbps", triad, "GB/s", how);
        }
    }
    int n;
    if (k < max && sgemm_probe(&gf, &n, 0, 0, 2 * HB_SGEMM_REPS) == 0) {
        snprintf(how, sizeof how, "OpenBLAS sgemm n=%d, %d threads, best of %d", n,
                 openblas_get_num_threads(), 2 * HB_SGEMM_REPS);
        set_ceiling(&out[k++], "peak_gflops_f32", gf, "GFLOP/s", how);
    }
    if (k < max && sgemm_probe(&gf, &n, 1, 0, 2 * HB_SGEMM_REPS) == 0) {
        snprintf(how, sizeof how, "OpenBLAS sgemm n=%d, 1 thread, best of %d", n, 2 * HB_SGEMM_REPS);
        set_ceiling(&out[k++], "peak_gflops_f32_1core", gf, "GFLOP/s", how);
    }
    if (k < max && sgemm_probe(&gf, &n, 1, HB_SGEMM_SMALL_N, HB_SGEMM_SMALL_REPS) == 0) {
        char name[sizeof out[0].name];
        snprintf(name, sizeof name, "peak_gflops_f32_1core_n%d", n % 100000);
        snprintf(how, sizeof how, "OpenBLAS sgemm n=%d, 1 thread, best of %d", n, HB_SGEMM_SMALL_REPS);
        set_ceiling(&out[k++], name, gf, "GFLOP/s", how);
    }
    /* Copy bandwidth against working-set size (hb_cpu_copy_sweep): STREAM copy at every power of two
     * from 1 MiB to twice the LLC, copy_gbps_ws_<N>MiB. A case that fits a cache is held to the probe
     * at its own working set (analysis/roofline.c hb_roof_cache_level): a set as large as a whole level
     * does not run at that level's rate (relu n=4Mi, 32 MiB in and out on 16 cores of 2 MiB L2 each,
     * ran at 193 GB/s against 596 GB/s for a 16 MiB set and 190 GB/s for half the LLC), and one probe
     * per level left it at 32% of a ceiling it cannot reach. The sweep replaced those probes
     * (copy_gbps_l2 at half of every core's L2, copy_gbps_llc at half the LLC: both sizes are sweep
     * points on the machines measured, 1 and 16 MiB). */
    size_t ws[HB_COPY_SWEEP];
    int nsw = hb_cpu_copy_sweep(ws, HB_COPY_SWEEP);
    double g;
    for (int i = 0; i < nsw && k < max; i++) {
        if ((g = cache_copy_gbps(ws[i])) <= 0)
            continue;
        char name[sizeof out[0].name];
        snprintf(name, sizeof name, "copy_gbps_ws_%zuMiB", ws[i] >> 20);
        snprintf(how, sizeof how, "STREAM copy, %zu MiB set (in + out), %d threads, best of %d", ws[i] >> 20, threads,
                 HB_STREAM_REPS);
        set_ceiling(&out[k++], name, g, "GB/s", how);
    }
    return k;
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
