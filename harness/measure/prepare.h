/*
 * prepare.h - the state a timed compute phase starts from, the same in every mode (docs/measurement.md,
 * "Hot and cold").
 *
 * The questions hybench answers are differences between modes (convert, f32, convert-device,
 * resident), so a compute phase must not inherit a cache or thread state from the phases a mode runs
 * before it. Before each timed compute the driver and the chain runner call hb_compute_prepare:
 *   hot (the default): the op's steady state. The op runs, untimed, on the same operands until a run
 *     takes no more than HB_SETTLE_TOL over the fastest warm run of the case so far, or is within
 *     HB_SETTLE_FAR of it and not HB_SETTLE_TOL faster than the run before it (the runs stopped
 *     getting faster: on a noisy machine
 *     the fastest warm run is an outlier that later runs seldom match, and runs past the plateau only
 *     cost time: in a --quick run on the 2-vCPU VM they were 2.5x the timed time); at most
 *     HB_SETTLE_MAX runs and HB_SETTLE_MAX_S seconds per call. A run's time is the device timer's
 *     where the backend has one (timer_begin/timer_end), else the host clock's. One
 *     run is not always enough: after a conversion has streamed f64 data through the caches, a
 *     victim L3 with insertion-priority replacement (AMD Zen) takes several passes over a 16 MiB
 *     operand before it holds it again (measured on a 2-vCPU EPYC VM: max over 4096x1024 computed
 *     3.9x slower after convert than in f32 with no warm run, 2.5x after one, 1.1x after five).
 *     On the mapped route of a device backend the device reads the operands from host memory (and
 *     writes the result there) during the compute, so the host caches are part of its start state:
 *     before each timed run, in every mode, every line of the operands and the result is written
 *     back and evicted from the CPU caches (core/hostcache.h), whatever the mode's host work left
 *     in them (convert has just written the operands, f32 not). The modes of a group compute on
 *     one set of buffers (sample.c hb_measure_group), so they start from the same addresses too.
 *   cold (--cold): the backend evicts its caches (flush_cache: host LLC for cpu-ref and cpu, device
 *     L2 / global cache for cuda and opencl), so the timed run reads its operands from memory; on
 *     the mapped route the host lines of the operands and the result are evicted first, as hot.
 * The preparation belongs to no phase and is subtracted from the measured total.
 */
#ifndef HB_PREPARE_H
#define HB_PREPARE_H
#include "core/backend.h"
#include "analysis/modecheck.h"

#define HB_SETTLE_TOL HB_MC_TOL /* the mode-invariance tolerance (5%, modecheck.h) */
#define HB_SETTLE_FAR HB_MC_FAR /* a run further over the fastest warm run is never settled: the mode
                                 * check's "far" bound (20%, modecheck.h) */
#define HB_SETTLE_MAX 8
#define HB_SETTLE_MAX_S 0.25 /* and at most this long (seconds) per call, past its first run: ops of
                              * tens of milliseconds stream their operands whatever the cache held */

/* Per case (per chain step) state of the hot rule: zero-initialize before the case's first call. */
typedef struct hb_prep_state {
    double best_s;      /* host seconds of the case's fastest warm run so far; 0 before the first */
    long runs, calls;   /* untimed runs and preparations so far (their ratio is recorded) */
    double *shared_best; /* when set, the fastest warm run is this one, shared by the modes of one case
                          * measured together (sample.c hb_measure_group): the same op on the same
                          * shape, so the steady state one mode reached is the target of every mode */
} hb_prep_state;

/* Bring the start state of the next run of case c on inst (operands in[0..ninputs-1], out; device
 * buffers as for ops->run) to the rule above; cold selects --cold; ps is the case's state (updated).
 * *spent_s receives the wall seconds the preparation took (the caller subtracts them from its
 * measured total). Returns HB_OK, or the error of an untimed run (the caller reports it as it would a
 * timed run's). A backend without a flush_cache hook runs cold cases warm. */
hb_status hb_compute_prepare(hb_instance *inst, int cold, const hb_case *c, hb_buf *const *in, hb_buf *out,
                             hb_prep_state *ps, double *spent_s);
/* The hot rule's loop over any unit of work (hb_compute_prepare's over one op; a plan replay's over
 * its whole call): run(ctx, &t) runs it once, untimed for the caller, and gives its time t (seconds,
 * on the clock that times the unit), until the rule above calls it settled against ps (updated:
 * best_s or shared_best, runs), HB_SETTLE_MAX runs, or HB_SETTLE_MAX_S past t0 (hb_now() when the
 * preparation began). vote (may be NULL) agrees each stop decision with other processes (a
 * collective's ranks) and returns the agreed one. Returns HB_OK or the first run's error. */
hb_status hb_settle(hb_status (*run)(void *ctx, double *t_s), int (*vote)(void *ctx, int stop), void *ctx, hb_prep_state *ps,
                    double t0);
#endif
