/*
 * energy.h - energy per op (docs/energy.md): a window of back-to-back calls of one case bracketed by
 * readings of an energy counter, the counter's idle power, and the case record's "energy" object.
 *
 * Sources: the backend's energy_read hook (cuda: NVML's total-energy counter, mJ, updated about every
 * 100 ms on an H100), else for host-memory backends the CPU package counters of RAPL
 * (/sys/class/powercap/intel-rapl:N/energy_uj, summed over packages, wrap-around corrected).
 *
 * The window (hb_energy_window): calls run back to back; the window opens at the first change of the
 * counter seen after a call and closes at the first change seen after at least min_s seconds and 3
 * calls, so both edges sit on counter updates and a coarse counter (NVML) adds no quantization error
 * beyond one call at each edge. J/op = (E1 - E0) / calls in the window; average power = (E1 - E0) /
 * (t1 - t0). Idle power is measured once per process (hb_energy_idle: the same edges with no calls
 * for at least min_s) and reported beside: j_per_op includes it; j_per_op_net = (E1 - E0 - P_idle *
 * (t1 - t0)) / calls removes it.
 */
#ifndef HB_MEASURE_ENERGY_H
#define HB_MEASURE_ENERGY_H
#include <jansson.h>
#include <stddef.h>
#include "core/backend.h"
#include "results/record.h"

/* An energy counter: the instance's hook, or RAPL's files under root (normally /sys/class/powercap). */
typedef struct hb_energy_src {
    hb_instance *inst;          /* read through inst->ops->energy_read when set */
    char name[32];              /* "nvml_total_energy", "rapl_package" */
    int nrapl;                  /* RAPL package domains found */
    char rapl[8][256];          /* their energy_uj files */
    double rapl_max_j[8];       /* their max_energy_range_uj in joules (wrap-around) */
    double rapl_last_j[8], rapl_acc_j[8];
    int available;
    char reason[200];           /* why not available */
} hb_energy_src;

/* Open the counter for inst: its energy_read hook when it has one (available when a first read
 * succeeds), else, for host-memory instances, RAPL package domains under rapl_root (NULL:
 * "/sys/class/powercap"). Never fails: src->available = 0 with src->reason saying why. */
void hb_energy_open(hb_energy_src *src, hb_instance *inst, const char *rapl_root);
/* Read the cumulative energy in joules (RAPL: accumulated across wrap-arounds since open). HB_OK, or
 * HB_EDEVICE with the reason in src->reason. */
hb_status hb_energy_read(hb_energy_src *src, double *joules);

/* One energy window's outcome. */
typedef struct hb_energy_result {
    double joules;              /* E1 - E0 */
    double seconds;             /* t1 - t0 (host monotonic clock) */
    long calls;                 /* call()s completed inside the window (the caller scales when one call() runs several ops) */
    int updates;                /* counter changes seen inside the window (a counter period ~ seconds/updates) */
} hb_energy_result;

/* Run call(arg) back to back until a window as described above is closed, min_s seconds at least and
 * 3 calls at least. vote(varg, stop), when non-NULL, agrees each stop decision across processes
 * (collectives: the backend's coll_vote) and returns the decision to follow. A call's failure stops
 * the window and is returned. The counter must change within 2 s of a call (else HB_EDEVICE:
 * "counter does not update"). */
hb_status hb_energy_window(hb_energy_src *src, hb_status (*call)(void *), void *arg, int (*vote)(void *, int),
                           void *varg, double min_s, hb_energy_result *r);
/* Idle power in watts: the same edges with no calls for at least min_s. NaN when unreadable. */
double hb_energy_idle(hb_energy_src *src, double min_s);

/* The case record's "energy" object filled into e (results/record.h hb_rec_energy, absent members on
 * entry; each member put, in this order): source, available, and for an unavailable counter (or r
 * NULL) the reason; else window_s, min_window_s, calls, counter_updates, joules, power_w, j_per_op,
 * s_per_op, idle_power_w (null when idle_w is NaN), j_per_op_net (only beside a finite idle_w), and
 * gflop_per_j / gb_per_j from flops and bytes of one call (0: omitted). A figure that cannot be
 * computed (no calls, no time) is written as null. Strings point into src (kept until written).
 * HB_OK or HB_ENOMEM. */
hb_status hb_energy_fill(hb_rec_energy *e, const hb_energy_src *src, const hb_energy_result *r, double min_s, double idle_w,
                         double flops, double bytes);
#endif
