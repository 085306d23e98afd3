/*
 * cpu_probe.c - the timing rounds behind the cpu backend's per-shape choices by measurement (cpu_dnnl.c:
 * conv2d, oneDNN or the own path; cpu_dnnl_gemm.c: matmul and bmm, OpenBLAS or oneDNN), so that each
 * chooser times its candidates the same way. Declared in cpu_priv.h.
 */
#include <time.h>

#include "cpu/cpu_priv.h"

double probe_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

hb_status probe_best_of(int slots, probe_run_fn run, void *ctx, double *best)
{
    if (slots < 1 || slots > PROBE_MAX_SLOTS || !run || !best)
        return HB_EINVAL;
    double warm[PROBE_MAX_SLOTS], wbest = 1e30;
    int live[PROBE_MAX_SLOTS];
    hb_status st = HB_OK;
    for (int k = 0; k < slots; k++)
        best[k] = 1e30, warm[k] = 0;
    /* round -1, untimed for the choice: first runs (page faults, JIT); a slot over 0.25 s and 4x
     * slower than the fastest there is not timed further (its best-of stays that first time): on a
     * shared machine one run can lose 10-40 ms to other processes, which must not drop a candidate */
    for (int k = 0; k < slots && st == HB_OK; k++) {
        const double t = probe_now();
        st = run(ctx, k);
        warm[k] = probe_now() - t;
        wbest = warm[k] < wbest ? warm[k] : wbest;
    }
    for (int k = 0; k < slots; k++) {
        live[k] = warm[k] <= 0.25 || warm[k] <= 4 * wbest;
        if (!live[k])
            best[k] = warm[k];
    }
    const double t0 = probe_now();
    for (int r = 0; r < PROBE_MAX_ROUNDS && st == HB_OK; r++) { /* timed rounds; the order rotates each round */
        for (int i = 0; i < slots && st == HB_OK; i++) {
            const int k = (i + r) % slots;
            if (!live[k])
                continue;
            const double t = probe_now();
            st = run(ctx, k);
            const double dt = probe_now() - t;
            if (dt < best[k])
                best[k] = dt;
        }
        const double el = probe_now() - t0;
        if ((r >= 2 && el > PROBE_ROUNDS_S) || el > PROBE_LONG_S)
            break;
    }
    return st;
}
