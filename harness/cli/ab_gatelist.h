/*
 * ab_gatelist.h - the case list of `hybench ab` when none is named: the gate list (`hybench gate-list`,
 * docs/compare.md "The gate list"), drawn up by the CUR build in the environment of the gate's runs.
 * cmd_ab.c's.
 */
#ifndef HB_AB_GATELIST_H
#define HB_AB_GATELIST_H
#include "cli/ab_builds.h"

/* Draw up the gate list: `exe[1] gate-list --out DIR/gate-list.ini --keys DIR/gate-list.keys
 * [--instructions] [the filters among fwd[nfwd]: --backend --op --dtype --mode --route]` (its candidates
 * every case of the workloads, quick or not, whatever --quick says about the runs)
 * (with instr 1 the files are DIR/gate-list-instructions.*), its stderr to the .log beside them, run
 * with the threads of the gate's runs (no->threads: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS; the cpu
 * backend's plans depend on them; 1 under callgrind), pinned as they are (no->pin: on one CPU the cpu
 * backend skips its timed thread calibration, which decides the -rows plans) and, for the instruction gate, the environment
 * of the runs under callgrind (hb_ab_vg_env: AVX2 dispatch, fixed matmul and conv2d paths), so that
 * the paths named are those the gate's runs take. extra[*nextra] (at most 3, malloc'd, the caller's)
 * gets the run arguments that select it: the list, and `--cases-from KEYS` where both builds take
 * that option (each backend then runs only its own paths' cases; otherwise every backend runs every
 * section, said on stderr). Returns 0, or -1 (the reason printed: CUR has no gate-list, or it
 * failed; its log named). */
int hb_ab_gate_list(const char *const exe[2], char **fwd, int nfwd, int instr, const hb_ab_noise *no, const char *dir,
                    char **extra, int *nextra);
#endif
