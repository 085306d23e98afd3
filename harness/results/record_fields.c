/*
 * record_fields.c - the field tables of the case, plan, end, backend and meta records and of their parts
 * (record.h, hb_rec_table): each JSON key of such a record, its kind and its member, written once here. record_codec.c reads and
 * writes any struct through these rows; record.c and write.c name the tables, nobody else spells a
 * case, plan, end, backend or meta record's keys. The keys and their units are docs/results-schema.md's.
 */
#include "results/results.h"
#include <stddef.h>

#define ROW(T, key, kind, m) {key, HB_RK_##kind, offsetof(T, m), NULL, 0}
#define SUB(T, key, kind, m, sub) {key, HB_RK_##kind, offsetof(T, m), &sub, 0}
#define ARR(T, key, m, nm, sub) {key, HB_RK_ARR, offsetof(T, m), &sub, offsetof(T, nm)}
#define TABLE(name, T, keysm, rows) \
    const hb_rec_table name = {rows, (int)(sizeof rows / sizeof rows[0]), offsetof(T, keysm), sizeof(T)}

/* a stats object (write.c hb_stats_json's members), its struct at member `s` of T */
#define STATS_ROWS(T, s)                                                                                        \
    ROW(T, "n", INT, s.n), ROW(T, "min", REAL, s.min), ROW(T, "max", REAL, s.max), ROW(T, "mean", REAL, s.mean),   \
    ROW(T, "median", REAL, s.median), ROW(T, "p10", REAL, s.p10), ROW(T, "p90", REAL, s.p90),                       \
    ROW(T, "mad", REAL, s.mad), ROW(T, "stddev", REAL, s.stddev), ROW(T, "cv", REAL, s.cv),                         \
    ROW(T, "ci_lo", REAL, s.ci_lo), ROW(T, "ci_hi", REAL, s.ci_hi)

typedef struct { hb_rec_stats s; } stats_box; /* so that STATS_ROWS can name s.n */
static const hb_rec_field stats_rows[] = {STATS_ROWS(stats_box, s)};
TABLE(hb_rec_stats_table, hb_rec_stats, keys, stats_rows);

static const hb_rec_field layer_rows[] = {STATS_ROWS(hb_rec_layer, st), ROW(hb_rec_layer, "enqueue_s", REAL, enqueue_s),
                                          ROW(hb_rec_layer, "unavailable", STR, unavailable)};
TABLE(hb_rec_layer_table, hb_rec_layer, keys, layer_rows);

static const hb_rec_field mem_rows[] = {
    ROW(hb_rec_mem, "host_bytes", INT, host_bytes), ROW(hb_rec_mem, "staging_bytes", INT, staging_bytes),
    ROW(hb_rec_mem, "device_bytes", INT, device_bytes), ROW(hb_rec_mem, "peak_rss_bytes", INT, peak_rss_bytes),
    ROW(hb_rec_mem, "device_free_bytes", INT, device_free_bytes),
    ROW(hb_rec_mem, "device_total_bytes", INT, device_total_bytes)};
TABLE(hb_rec_mem_table, hb_rec_mem, keys, mem_rows);

static const hb_rec_field rank_rows[] = {
    ROW(hb_rec_rank, "rank", INT, rank), ROW(hb_rec_rank, "backend", STR, backend), ROW(hb_rec_rank, "status", STR, status),
    ROW(hb_rec_rank, "reason", STR, reason), ROW(hb_rec_rank, "time_s", REAL, time_s),
    ROW(hb_rec_rank, "busbw_gbps", REAL, busbw_gbps), ROW(hb_rec_rank, "rel_err", REAL_INF, rel_err),
    ROW(hb_rec_rank, "steps_s", REAL, steps_s), ROW(hb_rec_rank, "allreduce_s", REAL, allreduce_s),
    ROW(hb_rec_rank, "allreduce_share", REAL, allreduce_share), ROW(hb_rec_rank, "graph_s", REAL, graph_s)};
TABLE(hb_rec_rank_table, hb_rec_rank, keys, rank_rows);

static const hb_rec_field collective_rows[] = {
    ROW(hb_rec_collective, "size_bytes", COUNT, size_bytes), ROW(hb_rec_collective, "time_s", REAL, time_s),
    ROW(hb_rec_collective, "algbw_gbps", REAL, algbw_gbps), ROW(hb_rec_collective, "busbw_gbps", REAL, busbw_gbps),
    ROW(hb_rec_collective, "busbw_factor", REAL, busbw_factor), ROW(hb_rec_collective, "ranks", INT, ranks),
    ROW(hb_rec_collective, "path", STR, path), ROW(hb_rec_collective, "in_place", BOOL, in_place),
    ARR(hb_rec_collective, "per_rank", per_rank, nper_rank, hb_rec_rank_table),
    ROW(hb_rec_collective, "time_max_s", REAL, time_max_s), ROW(hb_rec_collective, "time_ranks", INT, time_ranks)};
TABLE(hb_rec_collective_table, hb_rec_collective, keys, collective_rows);

static const hb_rec_field tp_rows[] = {
    ROW(hb_rec_tp, "ranks", INT, ranks), ROW(hb_rec_tp, "rank", INT, rank), ROW(hb_rec_tp, "time_s", REAL, time_s),
    ROW(hb_rec_tp, "steps_s", REAL, steps_s), ROW(hb_rec_tp, "allreduce_s", REAL, allreduce_s),
    ROW(hb_rec_tp, "allreduce_share", REAL, allreduce_share), ROW(hb_rec_tp, "graph_s", REAL, graph_s),
    ARR(hb_rec_tp, "per_rank", per_rank, nper_rank, hb_rec_rank_table), ROW(hb_rec_tp, "time_max_s", REAL, time_max_s),
    ROW(hb_rec_tp, "time_ranks", INT, time_ranks)};
TABLE(hb_rec_tp_table, hb_rec_tp, keys, tp_rows);

static const hb_rec_field energy_rows[] = {
    ROW(hb_rec_energy, "source", STR, source), ROW(hb_rec_energy, "available", BOOL, available),
    ROW(hb_rec_energy, "reason", STR, reason), ROW(hb_rec_energy, "window_s", REAL, window_s),
    ROW(hb_rec_energy, "min_window_s", REAL, min_window_s), ROW(hb_rec_energy, "calls", INT, calls),
    ROW(hb_rec_energy, "counter_updates", INT, counter_updates), ROW(hb_rec_energy, "joules", REAL, joules),
    ROW(hb_rec_energy, "power_w", REAL, power_w), ROW(hb_rec_energy, "j_per_op", REAL, j_per_op),
    ROW(hb_rec_energy, "s_per_op", REAL, s_per_op), ROW(hb_rec_energy, "idle_power_w", REAL, idle_power_w),
    ROW(hb_rec_energy, "j_per_op_net", REAL, j_per_op_net), ROW(hb_rec_energy, "gflop_per_j", REAL, gflop_per_j),
    ROW(hb_rec_energy, "gb_per_j", REAL, gb_per_j), ROW(hb_rec_energy, "batch", INT, batch)};
TABLE(hb_rec_energy_table, hb_rec_energy, keys, energy_rows);

static const hb_rec_field wall_rows[] = {ROW(hb_rec_wall, "setup", REAL, setup), ROW(hb_rec_wall, "sampling", REAL, sampling),
                                         ROW(hb_rec_wall, "reference", REAL, reference)};
TABLE(hb_rec_wall_table, hb_rec_wall, keys, wall_rows);

static const hb_rec_field clock_rows[] = {ROW(hb_rec_clock, "min", REAL, min), ROW(hb_rec_clock, "max", REAL, max),
                                          ROW(hb_rec_clock, "before", NUMS, before), ROW(hb_rec_clock, "after", NUMS, after)};
TABLE(hb_rec_clock_table, hb_rec_clock, keys, clock_rows);

static const hb_rec_field timer_rows[] = {
    ROW(hb_rec_timer, "host_s", REAL, host_s), ROW(hb_rec_timer, "device_s", REAL, device_s),
    ROW(hb_rec_timer, "diff", REAL, diff), ROW(hb_rec_timer, "agree", BOOL, agree),
    ROW(hb_rec_timer, "host_enqueue_s", REAL, host_enqueue_s), ROW(hb_rec_timer, "why", STR, why),
    ROW(hb_rec_timer, "explained", BOOL, explained)};
TABLE(hb_rec_timer_table, hb_rec_timer, keys, timer_rows);

static const hb_rec_field instr_rows[] = {ROW(hb_rec_instr, "tool", STR, tool), ROW(hb_rec_instr, "calls", INT, calls),
                                          ROW(hb_rec_instr, "per_call", REAL, per_call),
                                          ROW(hb_rec_instr, "events", JSON, events)};
TABLE(hb_rec_instr_table, hb_rec_instr, keys, instr_rows);

static const hb_rec_field model_file_rows[] = {
    ROW(hb_rec_model_file, "path", STR, path), ROW(hb_rec_model_file, "layer", INT, layer),
    ROW(hb_rec_model_file, "layers", INT, layers), ROW(hb_rec_model_file, "weights", JSON, weights)};
TABLE(hb_rec_model_file_table, hb_rec_model_file, keys, model_file_rows);

static const hb_rec_field step_impl_rows[] = {ROW(hb_rec_step_impl, "op", STR, op), ROW(hb_rec_step_impl, "impl", STR, impl)};
TABLE(hb_rec_step_impl_table, hb_rec_step_impl, keys, step_impl_rows);

static const hb_rec_field served_rows[] = {
    ROW(hb_rec_served, "round", INT, round), ROW(hb_rec_served, "prepared_per_round", BOOL, prepared_per_round),
    ROW(hb_rec_served, "setups", INT, setups), ROW(hb_rec_served, "references", INT, references),
    ROW(hb_rec_served, "setups_in_round", INT, setups_in_round),
    ROW(hb_rec_served, "references_in_round", INT, references_in_round), ROW(hb_rec_served, "setup_s", REAL, setup_s),
    ROW(hb_rec_served, "placements", INT, placements), ROW(hb_rec_served, "why", STR, why)};
TABLE(hb_rec_served_table, hb_rec_served, keys, served_rows);

/* phases, samples and pass_medians: objects by phase name whose members are the case struct's arrays */
#define PHASE_ROWS(kind, m, sub)                                                                                     \
    SUB(hb_rec_case, "convert_in", kind, m[HB_PH_CONVERT_IN], sub), SUB(hb_rec_case, "h2d", kind, m[HB_PH_H2D], sub), \
    SUB(hb_rec_case, "compute", kind, m[HB_PH_COMPUTE], sub), SUB(hb_rec_case, "d2h", kind, m[HB_PH_D2H], sub),       \
    SUB(hb_rec_case, "convert_out", kind, m[HB_PH_CONVERT_OUT], sub), SUB(hb_rec_case, "total", kind, m[HB_PH_TOTAL], sub)
static const hb_rec_field phases_rows[] = {PHASE_ROWS(OBJ, phase, hb_rec_stats_table)};
static TABLE(phases_table, hb_rec_case, phases_keys, phases_rows);
static const hb_rec_table no_sub = {NULL, 0, 0, 0};
static const hb_rec_field samples_rows[] = {PHASE_ROWS(NUMS, samples, no_sub)};
static TABLE(samples_table, hb_rec_case, samples_keys, samples_rows);
static const hb_rec_field pass_medians_rows[] = {PHASE_ROWS(NUMS, pass_medians, no_sub)};
static TABLE(pass_medians_table, hb_rec_case, pass_medians_keys, pass_medians_rows);

#define C hb_rec_case
static const hb_rec_field case_rows[] = {
    ROW(C, "type", STR, type), ROW(C, "key", STR, key), ROW(C, "backend", STR, backend), ROW(C, "op", STR, op),
    ROW(C, "family", STR, family), ROW(C, "shape", SHAPE, shape), ROW(C, "shape_str", STR, shape_str),
    ROW(C, "size", COUNT, size), ROW(C, "name", STR, name), ROW(C, "source", STR, source), ROW(C, "model", STR, model),
    ROW(C, "weight", REAL, weight), ROW(C, "dtype", STR, dtype), ROW(C, "mode", STR, mode), ROW(C, "route", STR, route),
    ROW(C, "flops", COUNT, flops), ROW(C, "bytes", COUNT, bytes), ROW(C, "bound", STR, bound),
    ROW(C, "pass", INT, pass), ROW(C, "ci_target", REAL, ci_target), ROW(C, "warmup_runs", INT, warmup_runs),
    SUB(C, "wall_s", OBJ, wall, hb_rec_wall_table), ROW(C, "reference_cache", STR, reference_cache),
    ROW(C, "settle_runs", REAL, settle_runs), ROW(C, "interleaved_with", INT, interleaved_with),
    ROW(C, "repetitions", INT, repetitions), ROW(C, "window_medians", NUMS, window_medians),
    ROW(C, "best_window", INT, best_window),
    SUB(C, "phases", GROUP, phases_keys, phases_table), SUB(C, "samples", GROUP, samples_keys, samples_table),
    SUB(C, "host_compute", OBJ, host_compute, hb_rec_stats_table), ROW(C, "ci_met", BOOL, ci_met),
    SUB(C, "host_clock_ghz", OBJ, clock, hb_rec_clock_table), ROW(C, "gflops", REAL, gflops), ROW(C, "gbps", REAL, gbps),
    ROW(C, "gflops_total", REAL, gflops_total), ROW(C, "gbps_total", REAL, gbps_total),
    SUB(C, "collective", OBJ, collective, hb_rec_collective_table), ROW(C, "ceiling", STR, ceiling),
    ROW(C, "ceiling_value", REAL, ceiling_value), ROW(C, "fraction", REAL, fraction),
    ROW(C, "rel_err", REAL_INF, rel_err), ROW(C, "tolerance", REAL, tolerance),
    ROW(C, "verified_fraction", REAL, verified_fraction), ROW(C, "steps", INT, steps),
    ROW(C, "weight_bytes", COUNT, weight_bytes), SUB(C, "model_file", OBJ, model_file, hb_rec_model_file_table),
    ARR(C, "steps_impl", steps_impl, nsteps_impl, hb_rec_step_impl_table), ROW(C, "extra", JSON, extra_json),
    ROW(C, "impl", STR, impl), ROW(C, "timer_disagreement", BOOL, timer_disagreement),
    SUB(C, "timer_agreement", OBJ, timer, hb_rec_timer_table), SUB(C, "layer", OBJ, layer, hb_rec_layer_table),
    SUB(C, "graph", OBJ, graph, hb_rec_layer_table), SUB(C, "tensor_parallel", OBJ, tp, hb_rec_tp_table),
    SUB(C, "energy", OBJ, energy, hb_rec_energy_table), SUB(C, "instructions", OBJ, instructions, hb_rec_instr_table),
    SUB(C, "mem", OBJ, mem, hb_rec_mem_table), SUB(C, "served", OBJ, served, hb_rec_served_table),
    ROW(C, "status", STR, status), ROW(C, "reason", STR, reason), ROW(C, "passes", INT, passes),
    SUB(C, "pass_medians", GROUP, pass_medians_keys, pass_medians_table), ROW(C, "best_pass", I64, best_pass),
    ROW(C, "ab_rounds", INT, ab_rounds), ROW(C, "schema", INT, schema)};
#undef C
TABLE(hb_rec_case_table, hb_rec_case, keys, case_rows);

/* ---- the plan record (measure/replay.c, docs/plans.md) ---- */
#define PS hb_rec_plan_step
static const hb_rec_field plan_step_rows[] = {
    ROW(PS, "label", STR, label), ROW(PS, "device", STR, device), ROW(PS, "bytes_in", COUNT, bytes_in),
    ROW(PS, "predicted_compute_s", REAL, predicted_compute_s), ROW(PS, "predicted_transfer_s", REAL, predicted_transfer_s),
    ROW(PS, "compute_s", REAL, compute_s), ROW(PS, "transfer_s", REAL, transfer_s),
    ROW(PS, "in_sequence_s", REAL, in_sequence_s)};
#undef PS
TABLE(hb_rec_plan_step_table, hb_rec_plan_step, keys, plan_step_rows);

static const hb_rec_field plan_device_rows[] = {ROW(hb_rec_plan_device, "id", STR, id),
                                                ROW(hb_rec_plan_device, "description", STR, description)};
TABLE(hb_rec_plan_device_table, hb_rec_plan_device, keys, plan_device_rows);

#define P hb_rec_plan
static const hb_rec_field plan_phases_rows[] = {
    SUB(P, "total", OBJ, phase[HB_PH_TOTAL], hb_rec_stats_table), SUB(P, "compute", OBJ, phase[HB_PH_COMPUTE], hb_rec_stats_table),
    SUB(P, "h2d", OBJ, phase[HB_PH_H2D], hb_rec_stats_table), SUB(P, "d2h", OBJ, phase[HB_PH_D2H], hb_rec_stats_table),
    SUB(P, "convert_in", OBJ, phase[HB_PH_CONVERT_IN], hb_rec_stats_table),
    SUB(P, "convert_out", OBJ, phase[HB_PH_CONVERT_OUT], hb_rec_stats_table),
    SUB(P, "host_copy", OBJ, host_copy, hb_rec_stats_table), SUB(P, "convert", OBJ, convert, hb_rec_stats_table),
    SUB(P, "device", OBJ, device, hb_rec_stats_table)};
static TABLE(plan_phases_table, hb_rec_plan, phases_keys, plan_phases_rows);
static const hb_rec_field plan_samples_rows[] = {ROW(P, "total", NUMS, samples_total), ROW(P, "device", NUMS, samples_device)};
static TABLE(plan_samples_table, hb_rec_plan, samples_keys, plan_samples_rows);
static const hb_rec_field omp_wait_rows[] = {ROW(P, "OMP_WAIT_POLICY", STR, omp_wait.policy),
                                             ROW(P, "GOMP_SPINCOUNT", STR, omp_wait.spincount)};
static TABLE(omp_wait_table, hb_rec_plan, omp_wait.keys, omp_wait_rows);
static const hb_rec_field predicted_rows[] = {ROW(P, "compute_s", REAL, predicted.compute_s),
                                              ROW(P, "transfer_s", REAL, predicted.transfer_s),
                                              ROW(P, "end_transfer_s", REAL, predicted.end_transfer_s)};
static TABLE(predicted_table, hb_rec_plan, predicted.keys, predicted_rows);
static const hb_rec_field error_split_rows[] = {
    ROW(P, "measured_s", REAL, error_split.measured_s), ROW(P, "predicted_s", REAL, error_split.predicted_s),
    ROW(P, "ops_alone_s", REAL, error_split.ops_alone_s), ROW(P, "ops_in_sequence_s", REAL, error_split.ops_in_sequence_s),
    ROW(P, "copies_predicted_s", REAL, error_split.copies_predicted_s),
    ROW(P, "copies_measured_s", REAL, error_split.copies_measured_s), ROW(P, "rest_s", REAL, error_split.rest_s),
    ROW(P, "in_sequence_calls", INT, error_split.in_sequence_calls)};
static TABLE(error_split_table, hb_rec_plan, error_split.keys, error_split_rows);
static const hb_rec_field error_cause_rows[] = {ROW(P, "term", STR, error_cause.term),
                                                ROW(P, "seconds", REAL, error_cause.seconds),
                                                ROW(P, "share_of_error", REAL, error_cause.share_of_error)};
static TABLE(error_cause_table, hb_rec_plan, error_cause.keys, error_cause_rows);
static const hb_rec_field plan_rows[] = {
    ROW(P, "type", STR, type), ROW(P, "model", STR, model), ROW(P, "what", STR, what), ROW(P, "plan", STR, plan),
    ROW(P, "kind", STR, kind), ROW(P, "route", STR, route), ROW(P, "mode", STR, mode),
    SUB(P, "omp_wait", GROUP, omp_wait.keys, omp_wait_table),
    ARR(P, "devices", devices, ndevices, hb_rec_plan_device_table), ROW(P, "weight_bytes", JSON, weight_bytes),
    ROW(P, "starts_in", STR, starts_in), ROW(P, "predicted_s", REAL, predicted_s),
    SUB(P, "predicted", GROUP, predicted.keys, predicted_table), ROW(P, "bytes_crossing", COUNT, bytes_crossing),
    ROW(P, "copies", INT, copies), ROW(P, "device_changes", INT, device_changes), ROW(P, "chain_case_s", REAL, chain_case_s),
    ARR(P, "steps", steps, nsteps, hb_rec_plan_step_table), SUB(P, "phases", GROUP, phases_keys, plan_phases_table),
    ROW(P, "launch_bound", BOOL, launch_bound), SUB(P, "samples", GROUP, samples_keys, plan_samples_table),
    ROW(P, "ci_met", BOOL, ci_met), ROW(P, "ci_target", REAL, ci_target), ROW(P, "error_pct", REAL, error_pct),
    SUB(P, "error_split", GROUP, error_split.keys, error_split_table),
    SUB(P, "error_cause", GROUP, error_cause.keys, error_cause_table), ROW(P, "settle_runs", REAL, settle_runs),
    SUB(P, "wall_s", OBJ, wall, hb_rec_wall_table), ROW(P, "rel_err", REAL, rel_err), ROW(P, "tolerance", REAL, tolerance),
    SUB(P, "mem", OBJ, mem, hb_rec_mem_table), ROW(P, "status", STR, status), ROW(P, "reason", STR, reason),
    ROW(P, "costs_from", STR, costs_from), ROW(P, "interleaved_with", INT, interleaved_with),
    ROW(P, "chain_in_rounds", JSON, chain_in_rounds), ROW(P, "schema", INT, schema)};
#undef P
TABLE(hb_rec_plan_table, hb_rec_plan, keys, plan_rows);

/* ---- the end record (measure/runner.c, measure/serve.c, cli/cmd_plan.c) ---- */
#define E hb_rec_end
static const hb_rec_field end_rows[] = {
    ROW(E, "type", STR, type), ROW(E, "schema", INT, schema), ROW(E, "cases", INT, cases), ROW(E, "ok", INT, ok),
    ROW(E, "wrong", INT, wrong), ROW(E, "failed", INT, failed), ROW(E, "skipped", INT, skipped),
    ROW(E, "crashed", INT, crashed), ROW(E, "no_resource", INT, no_resource), ROW(E, "timed_out", INT, timed_out),
    ROW(E, "elapsed_s", REAL, elapsed_s), ROW(E, "passes", INT, passes), ROW(E, "interrupted", BOOL, interrupted),
    ROW(E, "plans", INT, plans), ROW(E, "serve_round", INT, serve_round), ROW(E, "backends", JSON, backends),
    ROW(E, "mode_invariance", JSON, mode_invariance)};
#undef E
TABLE(hb_rec_end_table, hb_rec_end, keys, end_rows);

/* ---- the backend record (measure/meta.c hb_backend_record) ---- */
static const hb_rec_field ceiling_rows[] = {
    ROW(hb_rec_ceiling, "name", STR, name), ROW(hb_rec_ceiling, "value", REAL, value), ROW(hb_rec_ceiling, "unit", STR, unit),
    ROW(hb_rec_ceiling, "how", STR, how), ROW(hb_rec_ceiling, "passes", INT, passes)};
TABLE(hb_rec_ceiling_table, hb_rec_ceiling, keys, ceiling_rows);
#define B hb_rec_backend
static const hb_rec_field backend_omp_rows[] = {ROW(B, "OMP_WAIT_POLICY", STR, omp_wait.policy),
                                                ROW(B, "GOMP_SPINCOUNT", STR, omp_wait.spincount)};
static TABLE(backend_omp_table, hb_rec_backend, omp_wait.keys, backend_omp_rows);
static const hb_rec_field backend_rows[] = {
    ROW(B, "type", STR, type), ROW(B, "backend", STR, backend), ROW(B, "available", BOOL, available),
    ROW(B, "description", STR, description), ROW(B, "reason", STR, reason), ROW(B, "host_memory", BOOL, host_memory),
    SUB(B, "omp_wait", GROUP, omp_wait.keys, backend_omp_table), ROW(B, "info", JSON, info_json),
    ARR(B, "ceilings", ceilings, nceilings, hb_rec_ceiling_table), ROW(B, "pass", INT, pass), ROW(B, "schema", INT, schema)};
#undef B
TABLE(hb_rec_backend_table, hb_rec_backend, keys, backend_rows);

/* ---- the meta record (measure/meta.c hb_meta_fill, docs/results-schema.md) ----
 * Its objects are GROUPs of hb_rec_meta (their members named from the meta struct, as
 * HB_REC_SET(hb_rec_meta, m, cpu.model, ...) puts them), except host_clock, which clockprobe.c fills
 * on its own. */
#define M hb_rec_meta
static const hb_rec_field meta_cpu_rows[] = {
    ROW(M, "model", STR, cpu.model), ROW(M, "sockets", INT, cpu.sockets), ROW(M, "cores", INT, cpu.cores),
    ROW(M, "pus", INT, cpu.pus), ROW(M, "numa_nodes", INT, cpu.numa_nodes), ROW(M, "l1d_bytes", COUNT, cpu.l1d_bytes),
    ROW(M, "l2_bytes", COUNT, cpu.l2_bytes), ROW(M, "l3_bytes", COUNT, cpu.l3_bytes)};
static TABLE(meta_cpu_table, hb_rec_meta, cpu.keys, meta_cpu_rows);
static const hb_rec_field meta_openblas_rows[] = {ROW(M, "config", STR, openblas.config),
                                                  ROW(M, "corename", STR, openblas.corename)};
static TABLE(meta_openblas_table, hb_rec_meta, openblas.keys, meta_openblas_rows);
static const hb_rec_field meta_threads_rows[] = {
    ROW(M, "runtime", STR, threads.runtime), ROW(M, "blas_threading", STR, threads.blas_threading),
    ROW(M, "one_runtime", BOOL, threads.one_runtime), ROW(M, "omp_max_threads", INT, threads.omp_max_threads),
    ROW(M, "omp_num_procs", INT, threads.omp_num_procs), ROW(M, "omp_proc_bind", STR, threads.omp_proc_bind),
    ROW(M, "blas_threads", INT, threads.blas_threads), ROW(M, "env", JSON, threads.env)};
static TABLE(meta_threads_table, hb_rec_meta, threads.keys, meta_threads_rows);
static const hb_rec_field meta_options_rows[] = {
    ROW(M, "budget_s", REAL, options.budget_s), ROW(M, "ci_target", REAL, options.ci_target),
    ROW(M, "min_samples", INT, options.min_samples), ROW(M, "max_samples", INT, options.max_samples),
    ROW(M, "quick", BOOL, options.quick), ROW(M, "verify_only", BOOL, options.verify_only),
    ROW(M, "cold", BOOL, options.cold), ROW(M, "workloads", STRS, options.workloads), ROW(M, "seed", I64, options.seed),
    ROW(M, "passes", INT, options.passes), ROW(M, "repetitions", INT, options.repetitions),
    ROW(M, "cases_from", STR, options.cases_from), ROW(M, "instructions", INT, options.instructions),
    ROW(M, "ref_cache", STR, options.ref_cache), ROW(M, "algo_cache", STR, options.algo_cache)};
static TABLE(meta_options_table, hb_rec_meta, options.keys, meta_options_rows);
static const hb_rec_field meta_launch_rows[] = {ROW(M, "rank", INT, launch.rank), ROW(M, "ranks", INT, launch.ranks),
                                                ROW(M, "local_rank", INT, launch.local_rank)};
static TABLE(meta_launch_table, hb_rec_meta, launch.keys, meta_launch_rows);
static const hb_rec_field meta_clock_rows[] = {ROW(M, "name", STR, clock.name),
                                               ROW(M, "resolution_ns", REAL, clock.resolution_ns),
                                               ROW(M, "overhead_ns", REAL, clock.overhead_ns)};
static TABLE(meta_clock_table, hb_rec_meta, clock.keys, meta_clock_rows);
static const hb_rec_field meta_serve_rows[] = {ROW(M, "round", INT, serve.round), ROW(M, "rounds", INT, serve.rounds),
                                               ROW(M, "setup_s", REAL, serve.setup_s)};
static TABLE(meta_serve_table, hb_rec_meta, serve.keys, meta_serve_rows);
#undef M
#define HC hb_rec_host_clock
static const hb_rec_field host_clock_rows[] = {
    ROW(HC, "probe_ghz", REAL, probe_ghz), ROW(HC, "probe_ghz_min", REAL, probe_ghz_min),
    ROW(HC, "kernel_ghz", REAL, kernel_ghz), ROW(HC, "kernel_max_ghz", REAL, kernel_max_ghz),
    ROW(HC, "kernel_source", STR, kernel_source), ROW(HC, "perf_ghz", REAL, perf_ghz),
    ROW(HC, "perf_cycles_per_imul", REAL, perf_cycles_per_imul), ROW(HC, "method", STR, method),
    ROW(HC, "cpus", INT, cpus), ROW(HC, "valid", BOOL, valid), ROW(HC, "agrees_within_15pct", BOOL, agrees_within_15pct),
    ROW(HC, "why", STR, why)};
#undef HC
TABLE(hb_rec_host_clock_table, hb_rec_host_clock, keys, host_clock_rows);
#define A hb_rec_ab
static const hb_rec_field ab_rows[] = {
    ROW(A, "pair", STR, pair), ROW(A, "role", STR, role), ROW(A, "other", STR, other), ROW(A, "rounds", INT, rounds),
    ROW(A, "order", STR, order), ROW(A, "exe", STR, exe), ROW(A, "order_seed", I64, order_seed), ROW(A, "aslr", BOOL, aslr),
    ROW(A, "threads", INT, threads), ROW(A, "pinned", BOOL, pinned), ROW(A, "hugepages", BOOL, hugepages),
    ROW(A, "ref_cache", STR, ref_cache), ROW(A, "algo_cache", STR, algo_cache),
    ROW(A, "lockstep_rounds", INT, lockstep_rounds), ROW(A, "subset_from_round", INT, subset_from_round),
    ROW(A, "subset_cases", INTS, subset_cases), ROW(A, "duet_cpus", INTS, duet_cpus), ROW(A, "turns", INTS, turns)};
#undef A
TABLE(hb_rec_ab_table, hb_rec_ab, keys, ab_rows);
static const hb_rec_field ab_round_rows[] = {ROW(hb_rec_ab_round, "base_s", REAL, base_s),
                                             ROW(hb_rec_ab_round, "cur_s", REAL, cur_s)};
TABLE(hb_rec_ab_round_table, hb_rec_ab_round, keys, ab_round_rows);
#define S hb_rec_ab_summary
static const hb_rec_field ab_setup_rows[] = {ROW(S, "base", REAL, serve_setup_s.base), ROW(S, "cur", REAL, serve_setup_s.cur)};
static TABLE(ab_setup_table, hb_rec_ab_summary, serve_setup_s.keys, ab_setup_rows);
static const hb_rec_field ab_summary_rows[] = {
    ROW(S, "rounds", INT, rounds), ROW(S, "order", STR, order), ROW(S, "stopped_at", STR, stopped_at),
    ROW(S, "elapsed_s", REAL, elapsed_s), ROW(S, "base_runs_s", REAL, base_runs_s), ROW(S, "cur_runs_s", REAL, cur_runs_s),
    ROW(S, "decide_s", REAL, decide_s), ROW(S, "undecided", INT, undecided), ROW(S, "lockstep_rounds", INT, lockstep_rounds),
    ROW(S, "served", BOOL, served), SUB(S, "serve_setup_s", GROUP, serve_setup_s.keys, ab_setup_table),
    ROW(S, "serve_setup_first", STR, serve_setup_first), ROW(S, "duet", BOOL, duet), ROW(S, "ref_cache", STR, ref_cache),
    ROW(S, "algo_cache", STR, algo_cache), ROW(S, "subset_from_round", INT, subset_from_round),
    ROW(S, "subset_cases", INTS, subset_cases), ARR(S, "round_seconds", round_seconds, nround_seconds, hb_rec_ab_round_table)};
#undef S
TABLE(hb_rec_ab_summary_table, hb_rec_ab_summary, keys, ab_summary_rows);
#define M hb_rec_meta
static const hb_rec_field meta_rows[] = {
    ROW(M, "type", STR, type), ROW(M, "run_id", STR, run_id), ROW(M, "tool", STR, tool),
    ROW(M, "tool_version", STR, tool_version), ROW(M, "date", STR, date), ROW(M, "command_line", STR, command_line),
    ROW(M, "git_commit", STR, git_commit), ROW(M, "host", STR, host), SUB(M, "cpu", GROUP, cpu.keys, meta_cpu_table),
    ROW(M, "memory_bytes", COUNT, memory_bytes), ROW(M, "os", STR, os), ROW(M, "load_avg", NUMS, load_avg),
    ROW(M, "compiler", STR, compiler), ROW(M, "cflags", STR, cflags),
    SUB(M, "openblas", GROUP, openblas.keys, meta_openblas_table), SUB(M, "threads", GROUP, threads.keys, meta_threads_table),
    SUB(M, "options", GROUP, options.keys, meta_options_table), SUB(M, "launch", GROUP, launch.keys, meta_launch_table),
    SUB(M, "clock", GROUP, clock.keys, meta_clock_table), SUB(M, "host_clock", OBJ, host_clock, hb_rec_host_clock_table),
    SUB(M, "serve", GROUP, serve.keys, meta_serve_table), ROW(M, "replay_of", STR, replay_of), SUB(M, "ab", OBJ, ab, hb_rec_ab_table),
    ROW(M, "ranks", JSON, ranks), ROW(M, "schema", I64, schema)};
#undef M
TABLE(hb_rec_meta_table, hb_rec_meta, keys, meta_rows);
