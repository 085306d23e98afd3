/*
 * prepare.h - the state a timed compute phase starts from, the same in every mode (docs/measurement.md,
 * "Hot and cold").
 *
 * The questions hybench answers are differences between modes (convert, f32, convert-device,
 * resident), so a compute phase must not inherit a cache or thread state from the phases a mode runs
 * before it. Before each timed compute the driver and the chain runner call hb_compute_prepare:
 *   hot (the default): the op runs once, untimed, on the same operands, so the timed run is the second
 *     of two back-to-back runs: its operands are in the caches as far as they fit and its thread pool
 *     is awake, whatever the mode did before (a conversion over f64 data, an H2D copy, nothing).
 *   cold (--cold): the backend evicts its caches (flush_cache: host LLC for cpu-ref and cpu, device
 *     L2 / global cache for cuda and opencl), so the timed run reads its operands from memory.
 * The preparation is outside every phase and is subtracted from the measured total.
 */
#ifndef HB_PREPARE_H
#define HB_PREPARE_H
#include "backend.h"

/* Bring the start state of the next run of case c on inst (operands in[0..ninputs-1], out; device
 * buffers as for ops->run) to the rule above; cold selects --cold. *spent_s receives the wall seconds
 * the preparation took (the caller subtracts them from its measured total). Returns HB_OK, or the
 * error of the untimed run (the caller reports it as it would a timed run's). A backend without a
 * flush_cache hook runs cold cases warm; hb_compute_cold_supported says so beforehand. */
hb_status hb_compute_prepare(hb_instance *inst, int cold, const hb_case *c, hb_buf *const *in, hb_buf *out,
                             double *spent_s);
/* 1 if inst can start a compute cold (it has a flush_cache hook), else 0. */
int hb_compute_cold_supported(const hb_instance *inst);
#endif
