/*
 * ab_gatelist.h - the case list of `hybench ab` when none is named: the gate list (`hybench gate-list`,
 * docs/compare.md "The gate list"), drawn up by the CUR build in the environment of the gate's runs.
 * cmd_ab.c's.
 */
#ifndef HB_AB_GATELIST_H
#define HB_AB_GATELIST_H
#include "cli/ab_builds.h"

/* Write the gate list to path: `exe gate-list --out path [--instructions] [the filters among fwd:
 * --backend --op --dtype --mode --route, and --quick]`, its stderr to log, run with the threads of the
 * gate's runs (no->threads: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS; the cpu backend's plans depend on
 * them) and, for the instruction gate (instr 1), the environment of the runs under callgrind
 * (hb_ab_vg_env: AVX2 dispatch, fixed matmul and conv2d paths), so that the paths named are the
 * ones the gate's runs take. Returns 0, or -1 (the reason printed: the build has no gate-list, or it
 * failed; its log named). */
int hb_ab_gate_list(const char *exe, char **fwd, int nfwd, int instr, const hb_ab_noise *no, const char *path, const char *log);
#endif
