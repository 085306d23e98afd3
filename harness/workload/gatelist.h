/*
 * gatelist.h - the merge gate's case list (`hybench gate-list`, docs/compare.md "The gate list"): the
 * rule that keeps, from a list of candidate cases, the cheapest case of every kernel path, and the
 * writer of the kept cases as a workload file (docs/workloads.md) that every hybench since the INI
 * format reads. Pure: the candidates (which backend runs which case with which implementation) are
 * found by measure/kernel_paths.h; tests/test_gatelist.c feeds synthetic ones.
 *
 * The rule. A kernel path is one (op, backend instance, dtype, mode, implementation), the
 * implementation as the backend names it before a run (core/backend.h impl_of: the record's `impl`,
 * with the paths a kernel takes by size named too: "+nt" streaming stores, pooling "+windows" and
 * "+global", the row-split "-rows" plans). A route path is one (backend instance, mode, route): the
 * transfer code of a route (pageable, pinned, mapped) is the backend's, the same for every op, so each
 * route is covered once per backend and mode, not once per op. Per path the candidate of least cost is kept,
 * cost = FLOPs + bytes moved of one call (hb_op_flops + hb_case_bytes: one unit per FLOP and per
 * byte); ties go to the candidate listed first. With a floor (min_cost > 0: the instruction gate,
 * whose smallest calls vary by tens of instructions between processes) the cheapest case of cost at
 * least min_cost is kept, and where a path has none, its costliest. With a cut (max_cost > 0: the instruction gate, whose
 * calls run 20-100x slower under callgrind) a path whose cheapest candidate costs more is not kept and
 * is reported as over the cut. The list's size is the number of paths, whatever the number of
 * candidates: a nightly sweep of thousands of cases adds no case to the gate unless it adds a path.
 */
#ifndef HB_GATELIST_H
#define HB_GATELIST_H
#include <stdio.h>
#include "core/hybench.h"

/* One candidate: case c as backend instance `backend` runs it. */
typedef struct hb_gate_cand {
    hb_case c;          /* op, normalized shape, dtype, mode, route (a host-memory backend's: pageable), name */
    char backend[48];   /* instance name: "cpu-ref", "cpu", "opencl:0:0" */
    char impl[64];      /* the implementation's name (impl_of); "unnamed" where the backend cannot tell before a run */
} hb_gate_cand;

/* The two kinds of path. */
enum { HB_GATE_KERNEL = 0, HB_GATE_ROUTE = 1 };

/* One path and the candidate the rule keeps for it. */
typedef struct hb_gate_path {
    int kind;           /* HB_GATE_KERNEL or HB_GATE_ROUTE */
    size_t cand;        /* index of the cheapest candidate of the path (the first listed among equals) */
    size_t ncands;      /* candidates of the path */
    double cost;        /* that candidate's hb_gate_cost */
    int over_cut;       /* 1: cost above the cut; the path is not in the list */
} hb_gate_path;

/* Cost of one call of c: hb_op_flops + hb_case_bytes (FLOPs and bytes, one unit each). */
double hb_gate_cost(const hb_case *c);

/* The rule over v[0..n): every distinct kernel path (op, backend, dtype, mode, impl), then every
 * distinct route path (backend, mode, route), each in order of its first candidate, with its
 * cheapest candidate (min_cost > 0: its cheapest of cost >= min_cost, else its costliest); max_cost >
 * 0 marks paths whose kept candidate costs more as over_cut. *paths (malloc'd, caller frees; NULL
 * when n == 0) and *npaths. HB_OK, HB_ENOMEM. */
hb_status hb_gate_select(const hb_gate_cand *v, size_t n, double min_cost, double max_cost, hb_gate_path **paths, size_t *npaths);

/* Write the kept cases (paths not over the cut) as a workload file to f: one section per distinct
 * (op, shape, dtype, route), its `modes` the kept modes of that case, `quick = all` (so that `run
 * --quick` keeps them), preceded by a comment naming the paths it covers; the paths over the cut
 * are listed in comments at the end. header: comment lines written first (each line prefixed "# "),
 * may be NULL. Returns the number of sections written, -1 when f fails or memory runs out. */
long hb_gate_list_write(FILE *f, const hb_gate_cand *v, const hb_gate_path *p, size_t np, const char *header);
/* Write the kept paths' case keys to f, one a line as results records spell them
 * ("op|shape|backend|mode|route|dtype", hb_case_key; `run --cases-from` reads them): a section of the
 * list runs on every backend, in the union of its paths' modes, and the keys keep each backend to the
 * cases of its own paths. Returns the number written, -1 when f fails. */
long hb_gate_keys_write(FILE *f, const hb_gate_cand *v, const hb_gate_path *p, size_t np);
#endif
