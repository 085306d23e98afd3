/*
 * replay.h - a device plan of a model run end to end (replay.c; docs/plans.md, "Replay"): the chain
 * case (measure/chain.c) generalised to several backends in one process. `hybench plan RESULTS
 * --model M --replay` (cli/cmd_plan.c) uses it.
 *
 * One replay is one plan (analysis/plan_costs.h: hb_plan_named, a device per op of the model) on one
 * route in one mode, on the backend instances that the plan's cost table names, all open in this
 * process:
 *   - set-up, untimed: every weight (and the decode attention's KV cache) allocated on the device of
 *     the op that reads it through that instance's buf_alloc on the route, filled and uploaded once;
 *     the model's input placed in the memory the plan starts in (a repeated unit: the plan's
 *     start_mem; a whole network: host memory); the f64 reference of the whole model computed
 *     (kernels/cpu_ref hb_ref_compute over the graph, the same inputs and weights);
 *   - one call, timed (host clock): the ops in model order, each on its device; before an op, every
 *     activation it reads (and every edge into it: decode's new k and v) that is not yet in its
 *     device's memory is copied there on the route - device -> host by download, host -> device by
 *     upload, device -> device through host memory (download, a host memcpy when the two backends'
 *     host views differ, upload); at the end the output goes back to the start's memory (repeated
 *     unit) or host memory (whole network). Mode f32: tensors stay f32 and stay where they were made
 *     until an op elsewhere needs them. Mode convert: the host holds every activation in f64 between
 *     ops; each op's activation inputs are converted to f32 and (on a device) uploaded before it and
 *     its output downloaded and converted back after it (the executor that converts at every op
 *     boundary; weights stay f32 on their device);
 *   - before each op's timed run the hot rule (measure/prepare.h, as chain.c): its preparation is
 *     subtracted from the call's total;
 *   - one verified call on poisoned activations (relative L2 error of the output against the
 *     reference, tolerance HB_REPLAY_TOL), the warm-up (below), then calls until the total median's 95%
 *     CI half-width is within o->ci_target of the median after o->min_samples, o->max_samples calls,
 *     or 4 x o->budget_s spent (chain.c's rule);
 *   - mode f32, after sampling: the in-sequence pass, HB_REPLAY_SEQ_CALLS more calls in which every op
 *     runs blocking with no hot rule, each timed alone (the device timer on a device, the host clock
 *     in host memory); per op the median is the record's steps[].in_sequence_s, and error_split
 *     divides measured - predicted into ops in sequence - ops alone (the start state the model's order
 *     leaves: caches, clocks), copies measured - predicted, and the rest (launch gaps, synchronisation,
 *     host overhead between ops). These calls are not samples. Where the prediction misses
 *     by more than HB_REPLAY_CAUSE_PCT, "error_cause" names the largest of the three terms;
 *   - a plan whose ops all run on one device with its own memory, a device timer and run_async (mode
 *     f32, hot) is enqueued as the chain's layer is, by the same call (exec.h hb_exec_enqueue: every
 *     op with run_async, the device timer around them, its end the one wait; the model's input placed
 *     and the first op's start state prepared before it) and its record adds the phase
 *     "device": the device's seconds from the first op's start to the last op's end, the clock and
 *     the span of the chain's layer figure it is set beside;
 *   - warm-up: whole calls under the hot rule (prepare.h hb_settle) before the first sample.
 */
#ifndef HB_REPLAY_H
#define HB_REPLAY_H
#include <jansson.h>
#include "analysis/plan_costs.h"
#include "measure/measure.h"

#define HB_REPLAY_SEQ_CALLS 5 /* calls of the in-sequence pass; the median of 5 per op is enough to
                                * name the cause of an error of 10% or more */
#define HB_REPLAY_CAUSE_PCT 10 /* a replay whose measured median differs from its prediction by more than
                                * this (percent of the measured) names the split's largest term in its
                                * record ("error_cause"; docs/results-schema.md) */
#define HB_REPLAY_TOL 1e-3 /* relative L2 error of the model's output, f32 against f64: the chain case's
                            * tolerance (14 ops, reductions up to 5632 long), used for every model */

/* The backend instances of cost table c, opened in this process: inst[d] for c->dev[d] (the
 * instance whose name equals c->dev[d].id; every instance of a type is opened and the others closed).
 * Returns HB_OK, or HB_ESKIP with err naming the backend that is not available here and why. On
 * error nothing stays open. */
hb_status hb_replay_open(const hb_plan_costs *c, hb_instance inst[HB_PLAN_MAXDEV], char *err, size_t errlen);
void hb_replay_close(const hb_plan_costs *c, hb_instance inst[HB_PLAN_MAXDEV]);

/* The OpenMP wait policy of the replaying process (measure/child.c, wait_policy_for: a run measures
 * opencl in its own process under GOMP_SPINCOUNT=1000, since libgomp's default spinning after each
 * parallel region holds the cores PoCL's threads compute on). One process holds every device of a
 * plan, so when c names an opencl backend and the user set neither OMP_WAIT_POLICY nor
 * GOMP_SPINCOUNT, this re-executes hybench (/proc/self/exe, argv[0..argc-1] after "hybench") with
 * GOMP_SPINCOUNT=1000 (libgomp reads it when it loads) and HB_REPLAY_REEXEC set, and does not return;
 * it returns when nothing is to be done, in the re-executed process, or when the exec failed (the
 * replay then runs under the inherited policy). Call it before anything touches OpenMP. The records
 * carry the policy they ran under ("omp_wait"). */
void hb_replay_wait_policy(const hb_plan_costs *c, int argc, char **argv);

/* Replay plan p of c's model on route (hb_route; -1: no device has its own memory, buffers are
 * allocated pageable) in mode (HB_MODE_F32 or HB_MODE_CONVERT) on inst (hb_replay_open), sampling
 * by o (min_samples, max_samples, ci_target, budget_s, cold, seed). costs_from: the results file
 * the plan was made from (recorded). Returns a new "plan" record (docs/results-schema.md) whatever
 * happened: status ok, or failed / no_resource / wrong with "reason"; *st gets the status. NULL
 * only when out of memory for the record itself. */
json_t *hb_replay_plan(const hb_plan_costs *c, const hb_plan_named *p, int route, hb_mode mode, hb_instance inst[HB_PLAN_MAXDEV],
                       const hb_options *o, const char *costs_from, hb_status *st);

/* Replay the np plans p[0..np-1] together, as hb_replay_plan replays one: each is set up, verified
 * and warmed (all held at once), then they take their sampled calls in rounds (measure/rounds.h: a
 * fresh order every round), each until its own stop rule; then each its in-sequence pass and record. The host's
 * launch rate drifts by 20% and more over seconds on the GPU hosts (the decode layer replayed at
 * 110 us and 130 us in two processes 16 s apart, 2x H200 host), so plans sampled one after the other
 * are compared across that drift; in rounds they meet it alike (as hb_measure_group does for modes).
 * In mode f32, for a model with a chain case (hb_model.has_whole: the decoder layers), that chain case
 * (measure/chain.c, hb_chain_part_*: resident on a device with its own memory, f32 on a host-memory
 * backend, on route) on each device that one of the plans runs alone joins the same rounds
 * (measure/rounds.h) as a participant that takes a call every round while a plan run alone on its
 * device still samples (and while its own rule wants more), so that the replay and the chain meet the
 * host's drift alike; each
 * plan run alone on that device gets the chain's figures and the ratio of the two ("chain_in_rounds",
 * docs/results-schema.md). recs[k] gets plan k's record (NULL when out of memory) with
 * "interleaved_with": the other participants (np - 1 plus the chains), st[k] its status. */
void hb_replay_plans(const hb_plan_costs *c, const hb_plan_named *p, int np, int route, hb_mode mode, hb_instance inst[HB_PLAN_MAXDEV],
                     const hb_options *o, const char *costs_from, json_t **recs, hb_status *st);

#endif
