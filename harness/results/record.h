/*
 * record.h - the records of a results file as C structs (docs/results-schema.md): one struct per
 * record type, filled once by results/ (record.c, from the JSON read.c has validated) and read by
 * analysis/ and report/, which never look a JSON key up in a record.
 *
 * Absent values, one rule for every struct below:
 *   - a number is NaN when the record lacks it or holds null (JSON has no NaN: hybench writes a
 *     non-finite figure as null);
 *   - a string is NULL when absent or not a string;
 *   - a boolean or small enum is -1 when absent (else 0 or 1), where the difference matters to a
 *     reader; a flag that can only be present or absent is a `has_` member (0/1);
 *   - an array is a pointer and a count: count 0 (pointer NULL) when absent.
 * Ownership: every pointer in a struct (strings, arrays) is owned by the hb_run it was loaded into
 * (results.h) or, for hb_rec_case_parse and friends, by the parsed JSON record and the struct's own
 * arrays (freed by the matching _free). Strings are borrowed from the JSON record and live as long
 * as the record does (hb_rec_meta's *_text members are its own copies). Writing: results/write.c
 * writes case, plan, end, backend and meta records from their structs (hb_rec_case_json,
 * hb_rec_plan_json, hb_rec_end_json, hb_end_record, hb_rec_backend_json, hb_rec_meta_json; through the
 * field tables of record_fields.c and the codec of record_codec.c: a struct read and written back is
 * the same JSON), a mode_check record (hb_rec_mode_check_json) and a shape (hb_rec_shape_json);
 * measure/ and cli/ fill the structs member by member (HB_REC_SET) where they measure. A case record's
 * base fields are still built as JSON (write.c hb_case_record) and parsed once into the struct.
 * Errors: parsing a validated record cannot fail except for memory (HB_ENOMEM, results.h).
 * Units: seconds for times, bytes, elements, GFLOP/s and GB/s, as the schema says per field.
 */
#ifndef HB_RECORD_H
#define HB_RECORD_H
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "core/hybench.h"

/* ---- what a struct says beyond its values: its keys, their order and their JSON form ----
 * A record (and each object inside it) names its members in an order, each value in a JSON form (an
 * integer or a real, a number or null). hb_rec_keys keeps that for one object, so that a record is
 * written back exactly as it was read, or in the order measure/ filled it:
 *   - e[0..n-1]: the members present, in order: `field` is the member's row in the object's field
 *     table (hb_rec_table, record_fields.c), or -1 for a key no row names; `form` is the JSON type
 *     the value was read as (json_type + 1), 0 for a member set by hb_rec_put (written as its row's
 *     kind says); `more` >= 0 when the value is kept as read (more[more]: a key no row names, or a
 *     value the row's writer would not write back alike, such as a string where a number is due):
 *     the struct's member still holds what a reader sees (NaN, NULL, -1), the writer writes the JSON.
 *   - more[].key and .value are borrowed from the parsed record.
 * e and more are owned by the struct (freed by its _free). */
typedef struct hb_rec_entry { short field; unsigned char form; int more; } hb_rec_entry;
typedef struct hb_rec_more { const char *key; json_t *value; } hb_rec_more;
typedef struct hb_rec_keys {
    hb_rec_entry *e;
    hb_rec_more *more;
    unsigned short n, cap, nmore, capmore;
} hb_rec_keys;

/* ---- the phases of a case record, in schema order (names: hb_phase_names, write.c) ---- */
enum { HB_PH_CONVERT_IN, HB_PH_H2D, HB_PH_COMPUTE, HB_PH_D2H, HB_PH_CONVERT_OUT, HB_PH_TOTAL, HB_PH_COUNT };
extern const char *const hb_phase_names[HB_PH_COUNT];

/* ---- parts ---- */

/* A stats object (write.c hb_stats_json): every member NaN when absent or null; seconds for a phase. */
typedef struct hb_rec_stats {
    double n, min, max, mean, median, p10, p90, mad, stddev, cv, ci_lo, ci_hi;
    hb_rec_keys keys;
} hb_rec_stats;

/* An array of numbers (samples in seconds, pass medians): v[0..n-1]; a JSON null in the array
 * (a pass without a median) reads as NaN. NULL and 0 when absent. */
typedef struct hb_rec_nums { double *v; size_t n; int present; } hb_rec_nums;
/* An array of strings (a run's workloads): v[0..n-1] borrowed from the record (or from whoever filled
 * the struct), the array v owned by the struct; NULL and 0 when absent. */
typedef struct hb_rec_strs { const char **v; size_t n; int present; } hb_rec_strs;

/* A case's shape object: values in hb_shape's layout, has.<field> 1 for a field the record names
 * (a field it lacks is 0 in both). hb_rec_shape_get gives NaN for an absent field. */
#define HB_REC_SHAPE_MAXF 48
typedef struct hb_rec_shape {
    hb_shape v, has;
    int present;                        /* the record has a shape object */
    signed char order[HB_REC_SHAPE_MAXF]; /* the fields it names, as indices of hb_shape_fields, in its order */
    int norder;
} hb_rec_shape;
/* The value of shape field `field` (a member of hb_shape, e.g. offsetof(hb_shape, n)), NaN when the
 * record lacks it. Use the macro: HB_REC_SHAPE(&c->shape, n). */
double hb_rec_shape_get(const hb_rec_shape *s, size_t offset);
#define HB_REC_SHAPE(s, field) hb_rec_shape_get((s), offsetof(hb_shape, field))

/* The case's mem object (harness accounting, bytes; NaN when absent). */
typedef struct hb_rec_mem {
    double host_bytes, device_bytes, staging_bytes, peak_rss_bytes, device_free_bytes, device_total_bytes;
    hb_rec_keys keys;
} hb_rec_mem;

/* A chain case's layer run as one stream (`layer`) or one CUDA graph (`graph`): its stats (members of
 * the object itself) and the host's median enqueue time, seconds; `unavailable`: why a graph could not
 * be captured (the object's only member then). present 0 when the record has no such object. */
typedef struct hb_rec_layer { int present; hb_rec_stats st; double enqueue_s; const char *unavailable; hb_rec_keys keys; } hb_rec_layer;

/* One rank of a merged multi-rank record (collective.per_rank, tensor_parallel.per_rank). */
typedef struct hb_rec_rank {
    double rank;            /* NaN when absent */
    const char *backend, *status, *reason;
    double time_s, busbw_gbps, rel_err, allreduce_s, allreduce_share, steps_s, graph_s;
    hb_rec_keys keys;
} hb_rec_rank;

/* collective (docs/collectives.md): nccl-tests' figures. present 0 without the object. */
typedef struct hb_rec_collective {
    int present;
    double size_bytes, time_s, algbw_gbps, busbw_gbps, busbw_factor, ranks;
    const char *path;       /* "nccl", "host", "peer" */
    int in_place;           /* -1 absent */
    hb_rec_rank *per_rank; size_t nper_rank;
    double time_max_s, time_ranks; /* a merged multi-rank record: the slowest rank's time, how many ranks timed */
    hb_rec_keys keys;
} hb_rec_collective;

/* tensor_parallel (chain cases with a `ranks` shape field). present 0 without the object. */
typedef struct hb_rec_tp {
    int present;
    double ranks, rank, time_s, steps_s, allreduce_s, allreduce_share, graph_s;
    hb_rec_rank *per_rank; size_t nper_rank;
    double time_max_s, time_ranks;
    hb_rec_keys keys;
} hb_rec_tp;

/* energy (`run --energy`, docs/energy.md). present 0 without the object. */
typedef struct hb_rec_energy {
    int present;
    const char *source, *reason;
    int available;          /* -1 absent */
    double window_s, min_window_s, calls, counter_updates, joules, power_w, j_per_op, s_per_op, idle_power_w, j_per_op_net,
        gflop_per_j, gb_per_j;
    double batch;           /* calls per timed batch of the window */
    hb_rec_keys keys;
} hb_rec_energy;

/* wall_s: the host's wall seconds a case spent setting up, sampling and computing its reference. */
typedef struct hb_rec_wall { double setup, sampling, reference; hb_rec_keys keys; } hb_rec_wall;

/* host_clock_ghz: the host clock probed before and after the case (GHz; before/after: [min, max]). */
typedef struct hb_rec_clock { double min, max; hb_rec_nums before, after; hb_rec_keys keys; } hb_rec_clock;

/* timer_agreement (measure/sample_facts.c): the device timer's median against the host clock's. */
typedef struct hb_rec_timer {
    double host_s, device_s, diff, host_enqueue_s;
    int agree, explained;   /* -1 absent */
    const char *why;
    hb_rec_keys keys;
} hb_rec_timer;

/* instructions (`run --instructions`): callgrind's counts per timed call; events: every event's
 * count per call as JSON (borrowed). */
typedef struct hb_rec_instr { const char *tool; double calls, per_call; json_t *events; hb_rec_keys keys; } hb_rec_instr;

/* model_file (chain cases of `run --model`): the GGUF file, the layer read, the file's layer count,
 * the weights' stored types by tensor name as JSON (borrowed). */
typedef struct hb_rec_model_file { const char *path; double layer, layers; json_t *weights; hb_rec_keys keys; } hb_rec_model_file;

/* steps_impl[]: the implementation each step of a chain ran. */
typedef struct hb_rec_step_impl { const char *op, *impl; hb_rec_keys keys; } hb_rec_step_impl;

/* served (`hybench serve`, measure/serve.c): the round and what the serving child set up in it. */
typedef struct hb_rec_served {
    double round, setups, references, setups_in_round, references_in_round, setup_s;
    double placements;      /* the group buffers' placements so far (1 at set-up, one more per move) */
    int prepared_per_round; /* -1 absent */
    const char *why;
    hb_rec_keys keys;
} hb_rec_served;

/* The members of `extra` (the backend's case_info hook) that hybench's readers use. */
typedef struct hb_rec_extra {
    double conv_exhaustive_best_ms;   /* extra.conv_choice.exhaustive_best_ms (cuda conv2d) */
    const char *impl;                 /* extra.impl */
} hb_rec_extra;

/* ---- type "case" (and "pass_case", which results/ never hands on) ---- */
typedef struct hb_rec_case {
    const char *type;                              /* "case" (or what a record built by hand says) */
    /* identity (strings; NULL when absent: only a non-strict read lets one be absent) */
    const char *key, *backend, *op, *family, *shape_str, *name, *source, *model;
    const char *dtype, *mode, *route, *status, *reason, *bound, *ceiling, *impl;
    hb_rec_shape shape;
    double size, flops, bytes, weight;             /* elements, FLOPs per call, bytes per call, repeat weight */
    double gflops, gbps, gflops_total, gbps_total; /* from the compute / total medians */
    double fraction, ceiling_value;                /* compute throughput / ceiling; the ceiling's value */
    double rel_err, tolerance, verified_fraction, ci_target, warmup_runs, settle_runs, steps;
    double weight_bytes;                           /* a model layer's weights as stored (chain cases of --model) */
    int ci_met;                                    /* -1 absent */
    hb_rec_stats phase[HB_PH_COUNT];               /* phases.<hb_phase_names[i]>; all NaN when absent */
    int has_phase[HB_PH_COUNT];
    hb_rec_nums samples[HB_PH_COUNT];              /* samples.<phase> (total and compute are written) */
    hb_rec_nums pass_medians[HB_PH_COUNT];         /* pass_medians.<phase> */
    double interleaved_with;                       /* NaN absent; an integer when present */
    int has_interleaved_with;                      /* 1 when interleaved_with is an integer */
    long long best_pass;                           /* -1 absent */
    int has_best_pass;                             /* best_pass present at all (any JSON type) */
    int best_pass_is_int;
    double passes;                                 /* NaN absent */
    double instructions_per_call;                  /* instructions.per_call; NaN absent or null */
    int has_instructions_per_call;                 /* instructions.per_call present (any JSON type) */
    hb_rec_mem mem;
    hb_rec_layer layer, graph;
    hb_rec_collective collective;
    hb_rec_tp tp;
    hb_rec_energy energy;
    hb_rec_extra extra;
    /* the rest of what a case record can say (docs/results-schema.md); the members above marked as
     * read views (has_*, present, extra, instructions_per_call) are set when a record is parsed */
    json_t *extra_json;                            /* extra: the backend's case_info, as JSON (borrowed) */
    double schema, pass, ab_rounds;                /* schema version; pass_case's pass; ab's rounds merged */
    double repetitions, best_window;               /* --repetitions: the windows, the one kept */
    hb_rec_nums window_medians;                    /* each window's total median, seconds */
    const char *reference_cache;                   /* "read", "computed", ... (refcache.h) */
    int timer_disagreement;                        /* -1 absent */
    hb_rec_stats host_compute;                     /* the host clock's stats of the compute phase */
    hb_rec_wall wall;
    hb_rec_clock clock;
    hb_rec_timer timer;
    hb_rec_instr instructions;
    hb_rec_model_file model_file;
    hb_rec_step_impl *steps_impl; size_t nsteps_impl;
    hb_rec_served served;
    hb_rec_keys keys, phases_keys, samples_keys, pass_medians_keys; /* the record's, phases', samples', pass_medians' */
} hb_rec_case;

/* ---- type "meta" (measure/meta.c hb_meta_fill fills it; docs/results-schema.md) ---- */
/* cpu: hwloc's topology of the host; counts, cache sizes in bytes (the first cache of each level). */
typedef struct hb_rec_meta_cpu {
    const char *model;
    double sockets, cores, pus, numa_nodes, l1d_bytes, l2_bytes, l3_bytes;
    hb_rec_keys keys;
} hb_rec_meta_cpu;
typedef struct hb_rec_meta_openblas { const char *config, *corename; hb_rec_keys keys; } hb_rec_meta_openblas;
/* threads: the process's thread runtime (meta.c hb_meta_fill): OpenMP's settings, the BLAS build's
 * threading model and whether it shares hybench's OpenMP pool (one_runtime, -1 absent), thread counts,
 * and the OPENBLAS_* / OMP_* / GOMP_* / GOTO_* / KMP_* environment by name (env, JSON, borrowed). */
typedef struct hb_rec_meta_threads {
    const char *runtime, *blas_threading, *omp_proc_bind;
    int one_runtime;
    double omp_max_threads, omp_num_procs, blas_threads;
    json_t *env;
    hb_rec_keys keys;
} hb_rec_meta_threads;
/* options: the run's measuring options (hb_options; seconds, fractions, counts; quick, verify_only,
 * cold -1 absent); cases_from: the run measured only the keys listed in that file (hybench ab's later
 * rounds); instructions: callgrind's calls per case; ref_cache, algo_cache: the caches' folders. */
typedef struct hb_rec_meta_options {
    double budget_s, ci_target, min_samples, max_samples, passes, repetitions, instructions;
    int quick, verify_only, cold;
    hb_rec_strs workloads;
    long long seed;
    const char *cases_from, *ref_cache, *algo_cache;
    hb_rec_keys keys;
} hb_rec_meta_options;
/* launch: this process's place in a multi-process launch (core/launch.h). */
typedef struct hb_rec_meta_launch { double rank, ranks, local_rank; hb_rec_keys keys; } hb_rec_meta_launch;
/* clock: the timer (CLOCK_MONOTONIC), its resolution and the overhead of one reading, ns. */
typedef struct hb_rec_meta_clock { const char *name; double resolution_ns, overhead_ns; hb_rec_keys keys; } hb_rec_meta_clock;
/* host_clock: the run-start clock self-check (measure/clockprobe.h hb_clock_selfcheck), GHz; valid and
 * agrees_within_15pct -1 absent. */
typedef struct hb_rec_host_clock {
    double probe_ghz, probe_ghz_min, kernel_ghz, kernel_max_ghz, perf_ghz, perf_cycles_per_imul, cpus;
    const char *kernel_source, *method, *why;
    int valid, agrees_within_15pct;
    hb_rec_keys keys;
} hb_rec_host_clock;
/* serve: a served round's file (`run --serve-rounds`, measure/serve.c): its round, the rounds asked
 * for, the set-up's seconds. */
typedef struct hb_rec_meta_serve { double round, rounds, setup_s; hb_rec_keys keys; } hb_rec_meta_serve;
/* ab: how a `hybench ab` pair ran, in the meta record of each build's merged file (cli/cmd_ab.c fills
 * it; docs/compare.md "Outputs"): the pair id, this file's role ("base", "cur") and the other build's
 * program, rounds, the per-round order ("B" base first, "C" current first), this build's program, the
 * order's seed, the noise settings (aslr, pinned, hugepages: -1 absent; threads: 0 inherited), the
 * caches' folders (NULL: none, written null), the lockstep rounds, the round from which later rounds
 * ran only the undecided cases (NaN: none, written null) with each round's case count (subset_cases,
 * integers, NaN written null: a round that ran every case), the two CPUs of a duet run (duet_cpus) and
 * each round's turns this build held (turns). */
typedef struct hb_rec_ab {
    const char *pair, *role, *other, *order, *exe, *ref_cache, *algo_cache;
    double rounds, threads, lockstep_rounds, subset_from_round;
    long long order_seed;
    int aslr, pinned, hugepages;
    hb_rec_nums subset_cases, duet_cpus, turns;
    hb_rec_keys keys;
} hb_rec_ab;
/* The "ab" object of `hybench ab --json` (the gate's verdict file beside compare's members; cli/cmd_ab.c
 * fills it, analysis/ab.c hb_ab_verdict_json writes it; docs/compare.md "Outputs"): rounds, order (as
 * above), why the gate stopped (stopped_at), seconds in all (elapsed_s), each build's run time and the
 * decisions' (base_runs_s, cur_runs_s, decide_s), cases undecided, lockstep rounds, served (-1
 * absent), a served gate's set-up seconds per build (serve_setup_s, absent unless served) and which
 * build set up first (serve_setup_first: "base", "cur"; NULL written null), duet, the caches' folders,
 * subset_from_round and subset_cases as in hb_rec_ab, and each round's seconds per build
 * (round_seconds[]). */
typedef struct hb_rec_ab_round { double base_s, cur_s; hb_rec_keys keys; } hb_rec_ab_round;
typedef struct hb_rec_ab_summary {
    const char *order, *stopped_at, *serve_setup_first, *ref_cache, *algo_cache;
    double rounds, elapsed_s, base_runs_s, cur_runs_s, decide_s, undecided, lockstep_rounds, subset_from_round;
    int served, duet;
    struct { double base, cur; hb_rec_keys keys; } serve_setup_s;
    hb_rec_nums subset_cases;
    hb_rec_ab_round *round_seconds; size_t nround_seconds;
    hb_rec_keys keys;
} hb_rec_ab_summary;
typedef struct hb_rec_meta {
    const char *type;                 /* "meta" */
    const char *run_id, *tool, *tool_version, *date, *command_line, *git_commit, *host, *os, *compiler, *cflags;
    const char *replay_of;            /* `plan --replay`: the costs file replayed */
    hb_rec_meta_cpu cpu;
    double memory_bytes;
    hb_rec_nums load_avg;             /* 1, 5, 15 minutes */
    hb_rec_meta_openblas openblas;
    hb_rec_meta_threads threads;
    hb_rec_meta_options options;
    hb_rec_meta_launch launch;
    hb_rec_meta_clock clock;
    hb_rec_host_clock host_clock;
    hb_rec_meta_serve serve;
    hb_rec_ab ab;                     /* `hybench ab`'s merged file: the pair and how it ran */
    json_t *ranks;                    /* a merged multi-rank file: its ranks (results/ranks.h), JSON (borrowed) */
    long long schema;                 /* -1 when the record has no integer "schema" */
    hb_rec_keys keys;
    /* read views, set by hb_rec_meta_parse */
    int has_schema;                   /* "schema" present (any type) */
    int has_cpu;                      /* the record has a cpu object */
    double ranks_n;                   /* ranks.n of a merged multi-rank file; NaN absent */
    /* For display (the report's metadata table): these members of the record as compact JSON, keys
     * sorted, reals to 6 digits; owned (freed by hb_rec_meta_free); NULL when absent. */
    char *openblas_text, *options_text, *clock_text;
} hb_rec_meta;

/* ---- type "backend" ---- */
/* A member that is a string or an integer: kind 0 absent, 1 a string (s), 2 an integer (n), 3 another
 * JSON type. */
typedef struct hb_rec_ver { int kind; const char *s; long long n; } hb_rec_ver;
/* A ceiling (backend.h hb_ceiling): its value in unit, how it was measured; passes: the passes whose
 * best it is (a merged multi-pass run's). */
typedef struct hb_rec_ceiling { const char *name, *unit, *how; double value, passes; hb_rec_keys keys; } hb_rec_ceiling;
typedef struct hb_rec_backend {
    const char *type;                 /* "backend" (or "pass_backend") */
    const char *backend, *reason, *description;
    int available;                    /* -1 absent (a reader treats absent as available) */
    int host_memory;                  /* 1 only when true (the parse's read view; -1 absent in a struct being filled) */
    struct {                          /* read views of info_json, set by hb_rec_backend_parse */
        const char *name, *device_type, *platform, *driver_version, *nvml_driver_version, *runtime_version;
        double l2_bytes;
        hb_rec_ver cublas_version, cudnn_version, nccl_version; /* a string or a packed integer (MMmmpp) */
    } info;
    json_t *info_json;                /* info: the backend's describe hook, as JSON (borrowed) */
    struct { const char *policy, *spincount; hb_rec_keys keys; } omp_wait; /* OMP_WAIT_POLICY, GOMP_SPINCOUNT */
    hb_rec_ceiling *ceilings; size_t nceilings;
    double pass, schema;              /* pass_backend's pass; the schema version */
    hb_rec_keys keys;
} hb_rec_backend;

/* ---- type "end" ---- */
typedef struct hb_rec_end {
    double cases, ok, wrong, failed, skipped, crashed, no_resource, elapsed_s, passes;
    int interrupted;                  /* -1 absent */
    const char *type;                 /* "end" */
    double timed_out, plans, serve_round, schema; /* plans: `plan --replay`'s; serve_round: `hybench serve`'s round */
    json_t *backends;                 /* per backend type: cases measured, or why none (runner.c), as JSON (borrowed) */
    json_t *mode_invariance;          /* the mode check's summary (analysis/modecheck.h), as JSON (borrowed) */
    hb_rec_keys keys;
} hb_rec_end;

/* ---- type "plan" (a device plan replayed end to end, measure/replay.h) ---- */
typedef struct hb_rec_plan_step {
    const char *label, *device;
    double bytes_in, predicted_compute_s, predicted_transfer_s, compute_s, transfer_s, in_sequence_s;
    hb_rec_keys keys;
} hb_rec_plan_step;
/* devices[]: a device the plan uses, its id and the backend's description of it. */
typedef struct hb_rec_plan_device { const char *id, *description; hb_rec_keys keys; } hb_rec_plan_device;
typedef struct hb_rec_plan {
    const char *type;                 /* "plan" */
    const char *model, *what, *plan, *kind, *route, *mode, *status, *reason, *starts_in, *costs_from;
    double predicted_s, bytes_crossing, copies, device_changes, chain_case_s, rel_err, tolerance, ci_target, error_pct;
    int ci_met, launch_bound;         /* -1 absent */
    hb_rec_stats phase[HB_PH_COUNT];  /* phases.<name> as for a case (host_copy, convert, device below) */
    int has_phase[HB_PH_COUNT];       /* read view, set by hb_rec_plan_parse */
    hb_rec_stats host_copy, device, convert;
    int has_device;                   /* read view */
    struct { double measured_s, predicted_s, ops_alone_s, ops_in_sequence_s, copies_predicted_s, copies_measured_s,
             rest_s, in_sequence_calls; int present; hb_rec_keys keys; } error_split;
    struct { const char *term; double seconds, share_of_error; int present; hb_rec_keys keys; } error_cause;
    hb_rec_plan_step *steps; size_t nsteps;
    /* the rest of what a plan record says (docs/plans.md) */
    struct { const char *policy, *spincount; hb_rec_keys keys; } omp_wait; /* OMP_WAIT_POLICY, GOMP_SPINCOUNT */
    hb_rec_plan_device *devices; size_t ndevices;
    json_t *weight_bytes;             /* bytes of weights per device id, as JSON (borrowed) */
    struct { double compute_s, transfer_s, end_transfer_s; hb_rec_keys keys; } predicted;
    hb_rec_nums samples_total, samples_device; /* samples.total, samples.device (seconds) */
    double settle_runs, interleaved_with, schema;
    hb_rec_wall wall;
    hb_rec_mem mem;
    json_t *chain_in_rounds;          /* the model's chain case beside the replays (replay_chain.c), as JSON (borrowed) */
    hb_rec_keys keys, phases_keys, samples_keys;
} hb_rec_plan;

/* ---- type "mode_check" (analysis/modecheck.h builds it, results/write.c writes it) ---- */
typedef struct hb_rec_mode_check {
    const char *backend, *op, *shape_str, *name, *dtype, *route, *mode, *ref_mode, *verdict;
    const hb_rec_shape *shape;        /* the case record's shape (written as null when NULL or absent) */
    double ratio, ci_lo, ci_hi;       /* ci written only when has_ci (else null) */
    int has_ci;
    double ref_median, median;        /* seconds */
    long long n, ref_n;
    int paired_passes, paired_rounds; /* 0: absent (paired_passes wins when both are set) */
} hb_rec_mode_check;

/* ---- a baseline's provenance, DIR/<fingerprint>.json (analysis/baseline.h writes it) ---- */
typedef struct hb_rec_baseline {
    const char *fingerprint, *host, *cpu_model, *run_id, *date, *git_commit, *source, *set_at, *set_by;
    long long cases, ok, wrong, crashed;  /* 0 when absent or not integers */
    int complete;                         /* 1 only when true */
} hb_rec_baseline;

/* The index of phase name `name` in hb_phase_names, or -1. */
int hb_rec_phase_index(const char *name);

/* ---- field tables: each JSON object of a record as rows {key, kind, where in the struct} ----
 * record_fields.c holds the tables (the one place a case record's keys are spelled), record_codec.c
 * reads, writes, clears and frees any struct through its table. Kinds and how each is written:
 *   STR      const char *: a string, null when NULL
 *   REAL     double: a real, null when not finite
 *   REAL_INF double: a real, the string "inf" when not finite (rel_err)
 *   INT      double holding an integer: an integer, null when not finite (a real read here is kept as read)
 *   COUNT    double: an integer when integral and within 2^53, else a real (hb_json_count)
 *   I64      long long: an integer
 *   BOOL     int: true or false (-1 absent)
 *   NUMS     hb_rec_nums: an array of reals (null for a non-finite one)
 *   INTS     hb_rec_nums: an array of integers (null for a non-finite one)
 *   STRS     hb_rec_strs: an array of strings
 *   SHAPE    hb_rec_shape: an object of integers in its order (hb_rec_shape_json)
 *   JSON     json_t *: the JSON as it is (borrowed)
 *   OBJ      a struct of table `sub` at `off`: an object
 *   GROUP    an object whose members live in this same struct: table `sub` (offsets from this
 *            struct; its keys at `off`)
 *   ARR      an array of structs of table `sub`: pointer at `off`, size_t count at `aux`
 * A value read in another JSON form is written back in that form where the value allows (an integer
 * where the kind writes a real); see hb_rec_keys. */
typedef enum {
    HB_RK_STR, HB_RK_REAL, HB_RK_REAL_INF, HB_RK_INT, HB_RK_COUNT, HB_RK_I64, HB_RK_BOOL, HB_RK_NUMS, HB_RK_INTS, HB_RK_STRS,
    HB_RK_SHAPE,
    HB_RK_JSON, HB_RK_OBJ, HB_RK_GROUP, HB_RK_ARR
} hb_rec_kind;
typedef struct hb_rec_table hb_rec_table;
typedef struct hb_rec_field {
    const char *key;
    hb_rec_kind kind;
    size_t off;
    const hb_rec_table *sub;
    size_t aux;
} hb_rec_field;
struct hb_rec_table {
    const hb_rec_field *f;
    int n;
    size_t keys;  /* offset of the object's hb_rec_keys in its struct */
    size_t size;  /* sizeof the struct (an ARR's element) */
};
extern const hb_rec_table hb_rec_case_table, hb_rec_stats_table, hb_rec_mem_table, hb_rec_energy_table,
    hb_rec_collective_table, hb_rec_tp_table, hb_rec_rank_table, hb_rec_wall_table, hb_rec_clock_table,
    hb_rec_timer_table, hb_rec_instr_table, hb_rec_model_file_table, hb_rec_served_table, hb_rec_layer_table,
    hb_rec_step_impl_table, hb_rec_plan_table, hb_rec_plan_step_table, hb_rec_plan_device_table, hb_rec_end_table,
    hb_rec_backend_table, hb_rec_ceiling_table, hb_rec_meta_table, hb_rec_host_clock_table, hb_rec_ab_table,
    hb_rec_ab_summary_table, hb_rec_ab_round_table;

/* Generic over a table (record_codec.c); base points at a struct of table t.
 * hb_rec_clear: every member absent (NaN, NULL, -1, empty), keys empty; frees nothing (use on a
 *   struct that holds no allocation, e.g. fresh).
 * hb_rec_decode: the object o read into the struct (cleared first; o borrowed, strings and JSON
 *   members point into it); HB_OK or HB_ENOMEM (the struct then freed). A non-object o leaves it
 *   cleared.
 * hb_rec_encode: the struct as a new JSON object (caller owns), members in its keys' order; NULL
 *   when out of memory.
 * hb_rec_release: frees what the struct owns (keys, arrays) and clears it.
 * hb_rec_put: marks the member at offset `off` of the struct (a row of t, or of a GROUP inside it)
 *   present: appended after the members already there (the GROUP first marked in t, if new), or,
 *   when already there, kept in place and written from the struct from now on. Set the member's
 *   value, then put it (HB_REC_SET does both). An OBJ or ARR member's own members are put in its
 *   struct. HB_OK or HB_ENOMEM; HB_EINVAL when no row sits at `off` (a programming error). */
void hb_rec_clear(const hb_rec_table *t, void *base);
hb_status hb_rec_decode(const hb_rec_table *t, void *base, json_t *o);
json_t *hb_rec_encode(const hb_rec_table *t, const void *base);
void hb_rec_release(const hb_rec_table *t, void *base);
hb_status hb_rec_put(const hb_rec_table *t, void *base, size_t off);
/* Removes member `off` (a row of t or of a GROUP in it) from the struct's keys: not written any more;
 * a scalar member reads absent again. HB_OK (also when it was absent) or HB_EINVAL (no such row). */
hb_status hb_rec_remove(const hb_rec_table *t, void *base, size_t off);
/* The entry of member `off` (a row of t or of a GROUP in it) in the struct's keys (its JSON form:
 * entry->form), NULL when the member is absent. Borrowed from the struct. */
const hb_rec_entry *hb_rec_entry_at(const hb_rec_table *t, const void *base, size_t off);
/* Sets member `m` of *(s) (a struct of type T, table T##_table) to v and puts it. */
#define HB_REC_SET(T, s, m, v) ((s)->m = (v), hb_rec_put(&T##_table, (s), offsetof(T, m)))

#endif
