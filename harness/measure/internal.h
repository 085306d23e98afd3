/*
 * internal.h - what the files of measure/ share and nothing above them uses: the per-case
 * measurement (sample.c) with its reference cache and the instance's ceilings, the chain's
 * measurement (chain.c), and the merge of a multi-pass run's files (merge.c). runner.c drives them.
 */
#ifndef HB_MEASURE_INTERNAL_H
#define HB_MEASURE_INTERNAL_H
#include <jansson.h>
#include "measure/measure.h"

/* The reference cache: inputs and reference output of the last workload item seen. */
typedef struct hb_ref_cache {
    int item;
    int nin;
    double *in[HB_MAX_INPUTS];
    double *out;
    int64_t row_step;
} hb_ref_cache;

void hb_ref_cache_free(hb_ref_cache *r);

/* Measured ceilings of the current instance. */
typedef struct hb_ceiling_set { hb_ceiling v[HB_MAX_CEILINGS]; int n; } hb_ceiling_set;

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

/* Merge pass `pass` (2..P, 1-based) of a multi-pass run into the results file `path` (merge.c): its
 * pass_case / pass_backend records folded into the case and backend records of the passes before,
 * the merged file written to path.tmp (path's real name), locked, synced and renamed over path; *fd
 * (the old file's descriptor, closed) then names the new file. counts[] gets the merged statuses,
 * *ncases the case records written. Returns 0, or HB_EXIT_IO with err saying which file could not
 * be written and why (the results file is then unchanged: it keeps every record). */
int hb_merge_file(const char *path, int *fd, int pass, int counts[HB_STATUS_COUNT], size_t *ncases, char *err,
                  size_t errlen);
#endif
