/* cmd_merge_ranks.c - `hybench merge-ranks -o OUT RANKFILE...`: the results files of the ranks of
 * one launch (mpirun, srun, each rank with its own --out) merged into one results file
 * (results/ranks.h; docs/collectives.md, "Launching"). */
#include "cli/commands.h"
#include "results/ranks.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void merge_usage(FILE *f)
{
    fputs("usage: hybench merge-ranks -o OUT [--force] RANKFILE...   (options before or after the files)\n"
          "  Merges the results files of the ranks of one multi-process launch (each rank's run with its own\n"
          "  --out, e.g. under mpirun or srun) into one results file that report, compare and csv read.\n"
          "  Each file's rank is its meta.launch.rank; every rank of the launch must be given once, from\n"
          "  runs with the same options and command line (apart from --out). A collective case becomes one\n"
          "  record with every rank's time, status and busbw (collective.per_rank; time_s the mean over the\n"
          "  ranks, time_max_s the slowest; the worst status wins); other cases are kept per backend\n"
          "  instance, and a duplicate of a lower rank's record on the same instance name (cpu on every\n"
          "  rank) is dropped and counted in meta.ranks.duplicates_dropped. `hybench run --ranks N` does\n"
          "  this itself (docs/collectives.md, docs/results-schema.md).\n"
          "  -o, --out FILE   the merged results file (required)\n"
          "  --force          replace FILE when it exists (never done without it)\n"
          "  Exit status: 0 written, 2 usage or bad input (a file missing, unreadable or breaking the schema\n"
          "  (file:line: field: reason), a rank missing or given twice, files of different launches or case\n"
          "  lists), 7 the output cannot be written (no partial OUT is left behind).\n", f);
}

int hb_cmd_merge_ranks(int argc, char **argv)
{
    enum { O_FORCE = 256 };
    static const struct option lo[] = {{"out", required_argument, NULL, 'o'}, {"force", no_argument, NULL, O_FORCE},
                                       {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *out = NULL;
    int force = 0, ch;
    optind = 0; /* GNU: full re-initialisation, so that a second call (tests) parses afresh */
    while ((ch = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        if (ch == 'o') out = optarg;
        else if (ch == O_FORCE) force = 1;
        else if (ch == 'h') { merge_usage(stdout); return HB_EXIT_OK; }
        else { merge_usage(stderr); return HB_EXIT_USAGE; }
    }
    if (!out || !*out) {
        fprintf(stderr, "hybench merge-ranks: -o OUT is required (the merged results file)\n");
        merge_usage(stderr);
        return HB_EXIT_USAGE;
    }
    int n = argc - optind;
    if (n < 1) {
        fprintf(stderr, "hybench merge-ranks: no rank file given\n");
        merge_usage(stderr);
        return HB_EXIT_USAGE;
    }
    struct stat sb;
    if (!force && stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        fprintf(stderr, "hybench merge-ranks: %s exists (%lld bytes); --force replaces it, or choose another -o\n", out,
                (long long)sb.st_size);
        return HB_EXIT_USAGE;
    }
    hb_ranks_summary s;
    char err[1600];
    hb_status st = hb_ranks_merge((const char *const *)(argv + optind), n, out, NULL, &s, err, sizeof err);
    if (st != HB_OK) {
        fprintf(stderr, "hybench merge-ranks: %s\n", err);
        return st == HB_EINVAL ? HB_EXIT_USAGE : HB_EXIT_IO;
    }
    fprintf(stderr, "hybench merge-ranks: %d ranks, %zu cases: %d ok, %d wrong, %d failed, %d skipped, %d crashed, "
                    "%d no_resource, %d timed_out; %zu rank-cases missing, %zu duplicate case records and %zu backend "
                    "records dropped (meta.ranks)%s\n",
            s.nranks, s.cases, s.counts[HB_OK], s.counts[HB_EWRONG], s.counts[HB_EDEVICE] + s.counts[HB_EINVAL],
            s.counts[HB_ESKIP], s.counts[HB_ECRASH], s.counts[HB_ENOMEM], s.counts[HB_ETIMEOUT], s.missing, s.dup_cases,
            s.dup_backends, s.incomplete ? "; some rank files have no end record (meta.ranks.incomplete)" : "");
    printf("%s\n", out);
    return HB_EXIT_OK;
}
