/*
 * ab_instr_run.h - `hybench ab --instructions`: the merge gate on the deterministic measure (docs/
 * compare.md, "Instruction counts"): each build's case list run under valgrind's callgrind, counting
 * the instructions of a fixed number of timed calls per case (`run --instructions`), and every case
 * judged on its count (analysis/ab_instr.h). cmd_ab.c's.
 */
#ifndef HB_AB_INSTR_RUN_H
#define HB_AB_INSTR_RUN_H
#include "cli/ab_builds.h"
#include "analysis/ab_instr.h"
#include "analysis/compare.h"
#include <stdio.h>

/* The environment of the runs under callgrind ("VAR=VALUE", hb_ab_nvg_env of them; hb_ab_instructions
 * says which and why): the gate list of an instruction gate is drawn up in it too (ab_gatelist.c). */
extern char *const hb_ab_vg_env[];
extern const int hb_ab_nvg_env;

typedef struct hb_ab_instr_opts {
    int rounds;        /* rounds under callgrind (each runs both builds once; default 2) */
    int calls;         /* timed calls counted per case (default 3) */
    double threshold;  /* a case is flagged above 1 + threshold (fraction; default 0.01) */
    int cache_sim;     /* 1: callgrind --cache-sim=yes (simulated cache misses per call as well) */
    const char *markdown; /* the table's file, "-" or NULL: stdout (unless quiet) */
    int quiet;
} hb_ab_instr_opts;

/* Run the instruction gate: exe[0] BASE, exe[1] CUR (absolute paths), fwd[nfwd] their run options
 * and workloads (borrowed), no their noise controls (threads forced to 1, the wrap set here),
 * cur_env[ncur] set in CUR's runs only, dir the gate's folder (exists). First one native run of BASE
 * (--min-samples 1 --max-samples 1) measures the ceilings and fills dir/refcache, so the runs under
 * callgrind reuse both; then o->rounds rounds of BASE and CUR under `valgrind --tool=callgrind
 * --collect-atstart=no --trace-children=yes` with OPENBLAS_CORETYPE=Haswell, HB_CPU_ISA=avx2,
 * OMP_WAIT_POLICY=passive, DNNL_MAX_CPU_ISA=AVX2, HB_CPU_GEMM=openblas, HB_CPU_CONV=own and, unless the run options name a backend, --backend cpu-ref,cpu.
 * Writes dir/rounds/{base,cur}-iNN.jsonl, their logs, and the table (Markdown). Returns the exit
 * status: 0 pass, 1 a case's count rose beyond the threshold, 2 a build's run failed (its log
 * named), 10 valgrind is not installed, 11 inconclusive (a case counted on one side only, or whose
 * repeat spread reaches the threshold, or no case counted at all), 7 the table cannot be written. */
/* keep, nkeep (may be NULL): the decided cases handed to the caller (malloc'd, free it; NULL, 0 when
 * none were decided) for a verdict over both measures (cmd_ab.c, --with-time). */
int hb_ab_instructions(const char *const exe[2], char **fwd, int nfwd, const hb_ab_noise *no, char **cur_env, int ncur,
                       const char *dir, const hb_ab_instr_opts *o, hb_instr_case **keep, size_t *nkeep);

/* The section "Measures" of a gate over both measures (--instructions --with-time), Markdown to f:
 * how many cases each measure flagged, and one row per case flagged by either, with its time verdict
 * (res, by key), its instruction verdict (ic[n]) and "time", "instructions" or "both". A case only
 * one measure judged (a device case has no count) says "not judged" for the other. */
void hb_ab_write_measures(FILE *f, const hb_cmp_result *res, const hb_instr_case *ic, size_t n);
#endif
