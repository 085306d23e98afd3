/*
 * kernel_paths.h - every case of a case list as each available backend instance would run it, with
 * the implementation it names before a run (core/backend.h impl_of): the candidates of the gate
 * list's rule (workload/gatelist.h; `hybench gate-list`, docs/compare.md "The gate list"). Nothing is
 * measured, no buffer allocated: the backends are opened in this process as `hybench list` opens them.
 */
#ifndef HB_KERNEL_PATHS_H
#define HB_KERNEL_PATHS_H
#include "measure/measure.h"
#include "workload/gatelist.h"

/* The candidates of cases l (expanded with options o; o->backends selects instances as `run --backend`
 * does, NULL: every available one): per instance and case, those the instance would run, as a run
 * decides before any measurement: not refused for the class of the case (hb_case_refusal), not the
 * item's skip, not a quantized dtype's impossible mode (hb_quant_case_skip), supported (the supports
 * hook; the chain is the driver's and always listed), and on cpu-ref not above o->ref_max_gflop. A
 * host-memory backend's case is listed at route pageable (its one route, as its records key it). impl:
 * impl_of's name, "chain" for the decoder-layer chain (run op by op by the driver), "unnamed" when
 * the backend has no impl_of or it answers NULL. *out (malloc'd, caller frees) and *n; *ninst the
 * instances opened (may be NULL). HB_OK; HB_ENOMEM; HB_EINVAL with the reason in err when no
 * instance is available. */
hb_status hb_kernel_paths(const hb_case_list *l, const hb_options *o, hb_gate_cand **out, size_t *n, int *ninst, char *err,
                          size_t errlen);
#endif
