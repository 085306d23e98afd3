/*
 * ranks.h - one results file from the files of a multi-rank run (docs/collectives.md, "Launching";
 * docs/results-schema.md, meta "ranks"). Each rank process of a launch (`hybench run --ranks N`,
 * mpirun, srun) writes its own results file; hb_ranks_merge reads them (every record validated as
 * the commands read them) and writes one file that `hybench report`, `compare` and `csv` read.
 *
 * Which file is which rank: its meta record's "launch" object ({rank, ranks, local_rank}, written
 * by every run from core/launch.h). The files must be one launch's: every rank 0..ranks-1 once, the
 * same launch.ranks, the same run options (meta "options" without "out") and the same command line
 * apart from --out and --force (the same case list). Anything else is refused naming the file.
 *
 * Case records are matched across ranks by their identity without the backend's instance index:
 * op, shape (without the "rank" field, which is the process's own), backend type (the name before
 * ':', "cuda" of "cuda:1"), mode, route, dtype, and the occurrence of that identity in the file (a
 * case listed twice is two records). This assumes each rank runs a collective on one instance of a
 * backend type (in a launch the CUDA backend of rank r exposes the GPU it drives only).
 *   - A collective case over several ranks (op all_reduce, all_gather, reduce_scatter or broadcast
 *     with shape.ranks or collective.ranks > 1) becomes ONE record, rank 0's (the lowest rank's that
 *     has it), with collective.per_rank [{rank, backend, status, reason?, time_s, busbw_gbps,
 *     rel_err}] for every rank (status "missing" where the rank's file lacks the case);
 *     collective.time_s the mean over the ranks that measured a time (nccl-tests' default, -a 1),
 *     collective.time_max_s their maximum, collective.time_ranks their count, algbw_gbps = size_bytes
 *     / time_s, busbw_gbps = algbw_gbps x busbw_factor; the record's gbps (= algbw), gflops and
 *     fraction follow the mean time; status the worst over the ranks (ok < skipped < no_resource <
 *     failed, invalid, missing < timed_out < crashed < wrong; missing is written "failed"), reason
 *     "rank R: <that rank's reason>" of the first rank with that status; rel_err the largest.
 *   - The tensor-parallel decoder layer over several ranks (op chain with shape.ranks > 1,
 *     measure/chain.c) is folded the same way through its "tensor_parallel" object: per_rank [{rank,
 *     backend, status, reason?, time_s, steps_s, allreduce_s, rel_err}], time_s the ranks' mean layer
 *     time, time_max_s, time_ranks, steps_s the mean of the step-by-step times, allreduce_s the mean
 *     all_reduce part of them and allreduce_share = allreduce_s / steps_s (no algbw or busbw).
 *   - Any other case record is kept from every rank whose backend instance name differs (cuda:1's
 *     matmul measured another GPU); a record whose identity and backend name a lower rank already
 *     gave (the host backends, "cpu" on every rank) is dropped and counted in meta
 *     ranks.duplicates_dropped. A rank whose file lacks a case that another rank ran on its own
 *     device (a per-rank device backend: its instance names differ between ranks, cuda:0 / cuda:1)
 *     gets a record of its instance for it: status "failed", reason "missing: ..." (its instance
 *     name taken from its backend or case records; none known: nothing to mark).
 *   - Backend records: every rank's, one per instance name (the lowest rank's); mode_check records:
 *     per backend name, the lowest rank's that has any. One end record: the counts recomputed from
 *     the merged case records, elapsed_s the largest, interrupted when any rank's was,
 *     end.backends[name].cases recounted, mode_invariance's per-backend summaries united and its
 *     overall summary summed from them.
 *   - Meta: rank 0's (the lowest rank's that wrote one), plus "ranks": {n, files (basenames in rank
 *     order), merged: true, duplicates_dropped: {cases, backends, mode_checks, why}, missing_cases
 *     (rank-case pairs absent from a rank's file), incomplete (ranks whose file has no end record: the
 *     rank was killed or cut short), absent (ranks that wrote no file, launcher only)}.
 */
#ifndef HB_RANKS_H
#define HB_RANKS_H
#include <stddef.h>
#include "core/hybench.h"

/* Options of hb_ranks_merge. */
typedef struct hb_ranks_opts {
    /* The launcher (`hybench run --ranks N`): files[r] is rank r's file, and a file that does not exist
     * or is empty (the rank died before its meta record) counts as a rank that ran no case: every
     * case of the others is "missing" on it. Without it (hybench merge-ranks) the files may come in
     * any order and each must be a readable results file. */
    int absent_ok;
} hb_ranks_opts;

/* What a merge wrote (for the caller's summary line). */
typedef struct hb_ranks_summary {
    int nranks;                      /* ranks merged (n) */
    size_t cases;                    /* case records written */
    int counts[HB_STATUS_COUNT];     /* of them, per status */
    size_t missing;                  /* rank-case pairs absent from a rank's file */
    size_t dup_cases, dup_backends;  /* records dropped as duplicates of a lower rank's */
    int incomplete;                  /* ranks whose file has no end record (absent ones included) */
} hb_ranks_summary;

/* Merge the n rank files files[0..n-1] (paths, borrowed; n >= 1) into out_path (see the header
 * comment for the rules), written whole or not at all (hb_outfile: OUT.tmp.XXXXXX renamed over
 * out_path; an existing out_path is replaced: the caller decides whether it may be). o may be NULL
 * (no absent files allowed); sum may be NULL, else filled. Returns HB_OK; HB_EINVAL for bad input
 * with the reason in err (size errlen), naming the file (and "file:line" where the reader says so):
 * a missing, unreadable or corrupt file, a file without meta.launch, a rank given twice, a rank
 * missing, files of different launches (launch.ranks), options or command lines, an already merged
 * file; HB_EDEVICE when out_path cannot be written ("cannot write OUT: <strerror>"); HB_ENOMEM. */
hb_status hb_ranks_merge(const char *const *files, int n, const char *out_path, const hb_ranks_opts *o,
                         hb_ranks_summary *sum, char *err, size_t errlen);
#endif
