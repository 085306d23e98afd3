/*
 * serve.h - a run that sets every case up once and then measures them in rounds (`hybench run
 * --serve-rounds N`; the merge gate's served rounds, docs/compare.md "Served rounds").
 *
 * A plain run pays, per case, its buffers, inputs, reference, verification and warm-up before its
 * samples: on the 2-vCPU VM a gate round of the quick list spent 24.7 s of set-up beside 21.6 s of
 * sampling, in every round, because each round started the builds afresh. A served run starts one
 * process per backend type (as a run does), each of which sets up every case it runs once (prepared
 * groups: measure/internal.h hb_group_prepare) and keeps them; the run then asks them for rounds, one
 * after the other backend by backend, and each round takes only samples, its last output checked as
 * in a plain run, and writes a results file of its own that reads as a plain `run --passes 1`'s
 * (meta, backend, case, mode_check and end records; each case record's "served" says its round and
 * that no set-up ran in it). Chains and collectives over several ranks are measured whole, set-up
 * included, in every round, and say so (served.prepared_per_round, served.why).
 * Under `hybench ab` (HB_LOCKSTEP, lockstep.h) the run takes turns with the other build before each
 * case group, marks the end of set-up and of each round, and the controller says after each round
 * whether another comes and which cases it runs.
 */
#ifndef HB_SERVE_H
#define HB_SERVE_H
#include "measure/measure.h"
#include <stddef.h>

/* Round r's (1-based) results file of a served run whose --out is path: path with its ".jsonl"
 * replaced by "-rNN.jsonl" (NN two digits or more), or "-rNN.jsonl" appended when it has none; into
 * buf (size len). Returns buf. */
char *hb_serve_round_path(const char *path, int r, char *buf, size_t len);

/* Serve up to o->serve_rounds rounds of cases (every selected backend) as above: round r's records in
 * hb_serve_round_path(path, r), which must not exist unless force (then replaced); each starting with
 * the meta record (meta.c hb_meta_fill) with "serve": {round, rounds, setup_s}.
 * The case time limit holds in set-up and in every round: a backend process that dies or passes it
 * has that case recorded crashed / timed_out in the round (set-up: every round) and serves no more
 * (its later cases are missing from later rounds, said on stderr). SIGINT/SIGTERM end it after the
 * case in flight. Returns 0 or HB_EXIT_IO / HB_EXIT_USAGE (a round file exists without force), the
 * message printed; *t gets the totals over every round (t->passes: the rounds served). */
int hb_measure_serve(const hb_options *o, const hb_case_list *cases, const char *path, const char *run_id, char **workloads,
                     int nworkloads, int force, const char *cmd, hb_run_totals *t);
#endif
