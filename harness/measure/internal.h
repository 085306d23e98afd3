/*
 * internal.h - what the files of measure/ share and nothing above them uses: the per-case
 * measurement (sample.c) with its reference cache and the instance's ceilings, the chain's
 * measurement (chain.c), the merge of a multi-pass run's files (merge.c), and the child process of
 * one backend type (child.c), which the parent (runner.c) starts. child.c drives the measurement;
 * runner.c drives the children and the merge.
 */
#ifndef HB_MEASURE_INTERNAL_H
#define HB_MEASURE_INTERNAL_H
#include <jansson.h>
#include "measure/measure.h"
#include "measure/registry.h"
#include "measure/prepare.h"
#include "core/convert.h"
#include "measure/verify.h"

/* The reference cache: inputs and reference output of the last workload item seen. */
typedef struct hb_ref_cache {
    int item;
    int nin;
    double *in[HB_MAX_INPUTS];
    double *out;
    int64_t row_step;
    int cstate;         /* hb_refc_state (refcache.h): how out was obtained (read from the on-disk
                         * cache or computed); kept while the item's cases reuse it */
    hb_dtype wq;        /* a quantized matmul's weight format (core/quant.h), else HB_F32: the
                         * item's cases of another format need other inputs and another reference */
    void *qw;           /* that weight's blocks (qw_bytes, hb_case_input_bytes); in[1] holds their
                         * exact dequantization; NULL for dense cases */
    size_t qw_bytes;
} hb_ref_cache;

void hb_ref_cache_free(hb_ref_cache *r);
/* The reference of case c (workload item `item`; refcache.c) into r, unless r holds that item's
 * already (for c's weight format): its inputs drawn from o->seed on streams item * 8 + i (a
 * quantized matmul's weight: random blocks from hb_quant_fill_random on stream item * 8 + 1, scale
 * HB_QUANT_FILL_SCALE, kept in r->qw, with in[1] their dequantization), and its output read from the
 * on-disk cache (o->ref_cache, measure/refcache.h) when a sound entry is there, else computed with
 * cpu_ref (and stored when hb_refcache_worth); r->cstate says which. An unsound entry is named on
 * stderr and replaced. HB_OK, HB_ENOMEM, or hb_ref_compute's error (r then empty). */
hb_status hb_ref_cache_get(hb_ref_cache *r, const hb_case *c, int item, const hb_options *o);
/* How many references this process has obtained (read from the on-disk cache or computed) in
 * hb_ref_cache_get: a served round (measure/serve.h) obtains none. */
long hb_ref_gets(void);
/* The random quantized weights' scale: weights in about [-1/16, 1/16] against activations in [-1, 1],
 * so that a product over k = 2048..14336 is O(1) (sqrt(k) / 16 x E|a| E|w| terms' spread). */
#define HB_QUANT_FILL_SCALE (1.0 / 16)

/* Measured ceilings of the current instance. */
typedef struct hb_ceiling_set { hb_ceiling v[HB_MAX_CEILINGS]; int n; } hb_ceiling_set;

/* ---- one case's data path (sample.c) and the facts of its record (sample_facts.c) ---- */
typedef struct run_ctx {
    hb_instance *inst;
    const hb_case *c;
    const hb_options *o;
    int nin;
    hb_elem el;                 /* device storage element type */
    size_t nel[HB_MAX_INPUTS], nout;
    hb_buf in[HB_MAX_INPUTS], out;
    int nbuf_in, have_out;
    double *h64[HB_MAX_INPUTS], *o64;   /* convert mode: the f64 host tensors (the inputs are the
                                           reference cache's, read-only, shared by the group's modes) */
    float *h32[HB_MAX_INPUTS], *o32;    /* f32 mode when the device dtype is not f32 */
    int device;                 /* 1 when the backend has its own memory */
    int borrowed;               /* in[] and out are the group's buffers, owned by another variant
                                 * (hb_measure_group: one set per group); not freed here */
    long long host_bytes, staging_bytes, device_bytes;
    hb_prep_state prep;         /* the hot rule's state (prepare.h) */
#ifdef HB_PLANT
    double plant_compute;       /* make PLANT=1 only: the last call's compute phase without its planted delay */
    hb_case plant_case;         /* HB_PLANT_WORK=1: the planted sub-problem (plant.h hb_plant_sub_shape) */
    int plant_sub;              /* 0 not chosen yet, 1 plant_case runs before each call, -1 none (the spin) */
#endif
} run_ctx;

/* Set up case c's data path on inst into x (context.c): its buffers (allocated, or, when group is not
 * NULL, that variant's, which must be the same op, shape, dtype and route: one set for the modes of a
 * group, x->borrowed), the mode's host tensors from rc's f64 inputs (convert modes read rc's inputs in
 * place: rc must outlive x; a quantized weight's blocks copied from rc->qw), and the memory figures
 * (host, staging, device bytes). HB_OK; HB_ENOMEM (host memory short, refused before touching it when
 * it cannot fit: reason says how much), HB_EINVAL (a quantized case without its blocks) or the
 * backend's buf_alloc error, reason (rlen bytes) saying which. hb_ctx_free frees what x owns. */
hb_status hb_ctx_init(run_ctx *x, hb_instance *inst, const hb_case *c, const hb_options *o, const hb_ref_cache *rc,
                      char *reason, size_t rlen, const run_ctx *group);
void hb_ctx_free(run_ctx *x);
/* Move x's data path to new memory (a served round, measure/serve.h: sample.c hb_group_sample): a
 * new set-up of the same case as hb_ctx_init makes (its own buffers, or group's when group is not
 * NULL; new host tensors, inputs written again from rc; a convert mode's f64 inputs stay rc's own,
 * shared by the item's groups), carrying over the state kept between calls
 * (the hot rule's, the plant's). *old receives the former data path, to be freed with hb_ctx_free by
 * the caller once no variant computes on its buffers. A resident case's inputs are not placed on the
 * device here (the caller does, as at set-up). HB_OK, or hb_ctx_init's error with reason: x is then
 * as it was and *old zeroed (nothing to free). */
hb_status hb_ctx_move(run_ctx *x, run_ctx *old, const hb_ref_cache *rc, const run_ctx *group, char *reason, size_t rlen);
/* One call of case x->c through its mode's data path (call.c): a one-step graph on the executor
 * (exec.h), which places its inputs, runs and times it (the device clock where the backend has
 * timers and the phase touches the device, else the host clock) and fetches its output; the compute
 * starts hot or cold by prepare.h's rule, whose runs are timed by no phase. ph[HB_PH_COUNT] receives
 * each phase in seconds (record.h's order), *host_compute the host's time of the compute phase.
 * HB_OK or the first error of a conversion, transfer or run (the phases then undefined). */
hb_status hb_case_call(run_ctx *x, double ph[HB_PH_COUNT], double *host_compute);
/* A resident case's inputs placed on its device once, before sampling (converted to the device
 * dtype first), untimed, on the executor; other modes and host-memory backends: nothing to place.
 * HB_OK or the placement's error. */
hb_status hb_case_place_resident(run_ctx *x);
double ceiling_get(const hb_ceiling_set *cl, const char *name);
/* The relative L2 error of x's output against the reference (ref: x->nout doubles, NaN where
 * subsampled away), under verify.h's rule with HB_VERIFY_SUBSAMPLED: *nonfinite counts the output's
 * non-finite elements (the result is then INFINITY), *verified_fraction the share compared. Reads the
 * output from where the mode leaves it (f64 tensor, f32 tensor or buffer). */
double hb_case_rel_error(run_ctx *x, const double *ref, long long *nonfinite, double *verified_fraction);
json_t *samples_json(const double *s, size_t n);
/* A loop's stop decision, agreed across the ranks of a collective case (backend.h coll_vote): every
 * rank's process then makes the same number of calls. Other cases: stop as given. */
int agreed(run_ctx *x, int stop);
/* --energy: the energy window of case c after its sampling (t_compute: its median compute time);
 * fills the record's "energy" object into e (energy.h hb_energy_fill, then batch); the caller puts
 * e in the record. HB_OK or HB_ENOMEM. */
hb_status measure_energy(run_ctx *x, hb_rec_energy *e, double t_compute);

/* Measure the n cases[0..n-1] of workload item `item` (skip: the item's skip reason, or empty) on
 * inst together, 1 <= n <= HB_MAX_GROUP: the same op, shape, dtype and route in different modes (the
 * runner forms such groups; n = 1 measures one case alone). They compute on one set of buffers (the
 * first mode's; docs/measurement.md, "One set of buffers"), each mode's last output checked right
 * after its last sample. Each is set up, verified on a poisoned
 * output and warmed; then their samples are taken in turns (the order
 * rotating every round), so that drift on a shared machine reaches every mode alike and the
 * mode-invariance check (analysis/modecheck.h) compares like with like. A variant that does not fit
 * in memory beside the others is measured alone afterwards. recs[k] gets case k's new record (the
 * caller owns it), st_out[k] its status. Returns 0, or -1 when memory for the group itself is short
 * (no record is then made). The records carry "interleaved_with": the number of other modes. */
#define HB_MAX_GROUP 8
int hb_measure_group(hb_instance *inst, const hb_case *cases, int n, int item, const char *skip, const hb_options *o,
                     hb_ref_cache *rc, const hb_ceiling_set *cl, json_t **recs, hb_status *st_out);

/* The same in steps, for a process that serves rounds (`run --serve-rounds`, measure/serve.c):
 * hb_group_prepare does steps 0-2 (skips, the chain's modes, the reference, set-up, verification,
 * warm-up) once and returns the group (NULL: out of memory); the group copies cases[] but borrows
 * inst, rc (its reference, which must stay the group's item's until hb_group_free: the last sample's
 * output of every round is checked against it) and skip. hb_group_sample takes one round of samples
 * (step 3) and makes each variant's record of that round (steps 4-5) into recs[k] (new, the caller's;
 * NULL for a variant hb_group_deferred names: out of memory beside the others, to be measured alone
 * with hb_measure_group) with st_out[k]; 0, or -1 out of memory. A variant that ended in set-up (or
 * a chain's mode, measured whole in set-up) gets the same record every round. hb_group_free frees it.
 * hb_group_prepares: how many variants this process has set up (every hb_measure_group and
 * hb_group_prepare counts), so that a served round that repeats set-up shows in its records. */
/* The checks case c passes before its first call on inst, in this order: the workload item's skip
 * (skip; NULL or "" for none), the quantized block rule (core/ops.c hb_quant_case_skip), the backend's
 * supports() (not for a chain: chain.c checks each step), cpu-ref's size limit (o->ref_max_gflop
 * GFLOP per call; not with --verify). HB_OK when the case runs; else HB_ESKIP with why in
 * reason[0..len). One statement for the run (sample.c, before set-up) and the gate list
 * (kernel_paths.c), so that a gate list holds exactly the cases a run measures. */
hb_status hb_case_precheck(hb_instance *inst, const hb_case *c, const char *skip, const hb_options *o, char *reason, size_t len);

typedef struct hb_group hb_group;
hb_group *hb_group_prepare(hb_instance *inst, const hb_case *cases, int n, int item, const char *skip, const hb_options *o,
                           hb_ref_cache *rc, const hb_ceiling_set *cl);
int hb_group_sample(hb_group *g, const hb_options *o, const hb_ceiling_set *cl, json_t **recs, hb_status *st_out);
int hb_group_deferred(const hb_group *g, int k);
/* How many placements the group's buffers have had: 1 after hb_group_prepare, one more for every
 * round after the first (hb_group_sample moves them to new memory first: sample.c group_move). */
int hb_group_placements(const hb_group *g);
void hb_group_free(hb_group *g);
long hb_group_prepares(void);

/* Measure chain case c on inst with options o; ceilings cl[0..ncl-1]. Returns a new "case" record;
 * *st gets the case status (ok, skipped when a step is unsupported, no_resource, failed, wrong). */
json_t *hb_chain_measure(hb_instance *inst, const hb_case *c, const hb_options *o, const hb_ceiling *cl, int ncl,
                         hb_status *st);

/* Measure the chain cases cases[0..n-1] (one chain shape in several modes, on inst) together: each is
 * set up, verified and warmed, then they take their timed calls in turns, the order rotating every
 * round, as hb_measure_group does for ops (measured one after the other, the decode chain's
 * convert/f32 compute ratio on the H200 host read 1.05 in one run and 1.20 in the next, the f32
 * mode itself moving 26% between the runs). Each mode keeps its own buffers, budget and CI target.
 * recs[k] gets case k's new record (the caller owns it), st_out[k] its status as hb_chain_measure's;
 * records of more than one mode carry "interleaved_with". */
void hb_chain_measure_group(hb_instance *inst, const hb_case *cases, int n, const hb_options *o, const hb_ceiling *cl,
                            int ncl, json_t **recs, hb_status *st_out);

/* A chain case as one participant of another measurement's rounds (measure/rounds.h; replay.c samples
 * a model's chain case in the rounds of its plans). hb_chain_part_open sets c up on inst and verifies
 * it as hb_chain_measure does (NULL only when out of memory); hb_chain_part_sample takes one timed
 * call (the layer op by op, then as one stream and one graph where the case has them) and answers
 * HB_ROUND_MORE while its own rule (CI target after min_samples; 4 x budget_s) wants calls,
 * HB_ROUND_ENOUGH once it is met (it takes calls while the others sample, up to max_samples), and
 * HB_ROUND_DONE at max_samples, after a failure, or when set-up failed (then it calls nothing);
 * hb_chain_part_close returns its "case" record (as hb_chain_measure's; "interleaved_with": others
 * when others > 0), *st its status, and frees p. The part keeps the pointer c: *c must live until
 * hb_chain_part_close. */
typedef struct hb_chain_part hb_chain_part;
hb_chain_part *hb_chain_part_open(hb_instance *inst, const hb_case *c, const hb_options *o);
int hb_chain_part_sample(void *p);
json_t *hb_chain_part_close(hb_chain_part *p, int others, hb_status *st);

/* The chain case of model m (m->whole) on inst, as replay.c samples it beside the plans
 * (replay_chain.c): dtype f32, resident on a device with its own memory, else f32; route rt (pageable
 * on a host-memory backend, which has no transfer routes); named and sourced after the model. */
struct hb_model;
hb_case hb_replay_chain_case(const struct hb_model *m, const hb_instance *inst, hb_route rt);
/* What plan record prec keeps of the chain case record crec sampled in its rounds: a new object
 * ("chain_in_rounds", docs/results-schema.md; replay_chain.c). */
json_t *hb_replay_chain_summary(json_t *crec, json_t *prec);

/* Merge pass `pass` (2..P, 1-based) of a multi-pass run into the results file `path` (merge.c): its
 * pass_case / pass_backend records folded into the case and backend records of the passes before,
 * the merged file written to path.tmp (path's real name), locked, synced and renamed over path; *fd
 * (the old file's descriptor, closed) then names the new file. counts[] gets the merged statuses,
 * *ncases the case records written. Returns 0, or HB_EXIT_IO with err saying which file could not
 * be written and why (the results file is then unchanged: it keeps every record). */
int hb_merge_file(const char *path, int *fd, int pass, int counts[HB_STATUS_COUNT], size_t *ncases, char *err,
                  size_t errlen);
/* ---- the child process of one backend type (child.c), started by the parent (runner.c) ---- */
/* Instances of one backend type that a run opens at most. */
#define MAX_INST 16

/* One progress line a child writes to its parent (child.c's say calls), parsed once for both readers
 * (runner.c for a plain run, serve.c for a served one). kind: 'K' host ceilings (text: a JSON array),
 * 'W' a results file write failed (err), 'T' an instance begins (inst, n cases, name), 'C' its ceilings
 * are measured (inst), 'U' the backend is unavailable (text: why), 'N' an instance has no case (inst,
 * name, which may hold ':' as in opencl:0:0; text: "<name>: none of the requested cases: <why>"), 'G' the mode group of the case in flight
 * ends at case c with gn cases (inst, c, gn), 'B' case c begins (inst, c), 'S' case c is set up (served
 * run), 'E' case c ended (inst, c, name: its status, rel: its relative error, -1 when absent), 'P' every
 * case set up (served), 'D' a served round done. */
typedef struct hb_child_msg {
    char kind;
    int inst, gn, err;
    size_t c, n;
    double rel;
    char name[256];
    const char *text; /* into the line (its newline removed) */
} hb_child_msg;
/* Parse line (modified: its newline is cut) into *m. Returns m->kind, or 0 for a line of no known form
 * (ignored by both readers). */
char hb_child_msg_parse(char *line, hb_child_msg *m);

/* What the parent hands the child it starts (forked, or re-executed with HB_CHILD). */
typedef struct child_args {
    const hb_backend_entry *entry;
    const hb_options *o;
    const hb_case_list *cases;
    int fd;            /* results file */
    int pipe_w;        /* progress to the parent */
    int start_inst, start_case;
    int write_backend_records;
    int pass;          /* 1-based; records of a pass after the first are written as pass_* records */
    int nogroup_until; /* cases up to this index are measured one by one (the retry after a group died) */
    int ctl_r;         /* -1; a served run's (measure/serve.h) control pipe: the child sets up every case,
                        * says "P", then serves the rounds the parent asks for on it (child_serve) */
    const char *host_ceilings; /* the host ceilings an earlier child of this pass measured (JSON array,
                                * host_ceilings_send), or NULL; the parent's, read after fork */
} child_args;

/* Append the record rec (consumed, may be NULL: ENOMEM) to the results file fd as one write; in pass
 * > 1 a "case" or "backend" record is written as "pass_case" / "pass_backend" with "pass": pass, for
 * merge.c. Returns 0, or the errno of the failed write (EIO when it set none): the file is then cut
 * back to its previous end, so no partial line is left. */
int put_record(int fd, json_t *rec, int pass);

/* In the forked child: re-execute hybench (/proc/self/exe, the same arguments, HB_CHILD describing
 * *a) when this backend type wants another OpenMP wait policy than the inherited one (opencl:
 * GOMP_SPINCOUNT=1000). Does not return when the exec succeeds; returns when the type keeps the
 * inherited policy, or when the exec could not be made (the child then measures in this process). */
void child_reexec(const child_args *a);

/* The child's work: open a->entry's instances, and from instance a->start_inst, case a->start_case
 * on, measure the ceilings and cases of each selected instance, writing the records to a->fd and
 * its progress lines to a->pipe_w. Returns the process's exit status: 0, or HB_EXIT_IO after a
 * failed write (reported on the pipe as "W errno"). */
int child_main(const child_args *a);

/* A served run's child (a->ctl_r >= 0; called by child_main with its open instances inst[0..n)): sets
 * up every case once (prepared groups, hb_group_prepare; chains and collectives over several ranks,
 * which are measured whole, are set up in every round instead and their records say so), says "P",
 * then for each control line "R ROUND PATH" (every case) or "C ROUND PATH" (only the keys of
 * o->serve_cases, read again) appends that round's backend and case records to PATH (its progress
 * lines "B"/"G"/"E" as child_main's) and says "D ROUND"; "Q" or end of file ends it. Each case record
 * carries "served" (docs/results-schema.md). Returns the process's exit status (0, or HB_EXIT_IO). */
int child_serve(const child_args *a, hb_instance *inst, int n);
#endif
