/* cmd_csv.c - `hybench csv RESULTS.jsonl [-o FILE]`: the run as CSV (results/csv.c), streamed. */
#include "cli/commands.h"
#include "results/results.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

int hb_cmd_csv(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout, "usage: hybench csv RESULTS.jsonl [-o FILE]\n  One CSV row per case (docs/results-schema.md, CSV export).\n"
                "  Exit status: 0 written, 2 usage or a results file that breaks the schema (file:line: field: reason),\n"
                "  7 the output cannot be written (no partial FILE is left behind).\n");
        return argc < 2 ? HB_EXIT_USAGE : HB_EXIT_OK;
    }
    const char *out = NULL;
    if (argc == 4 && !strcmp(argv[2], "-o")) out = argv[3];
    else if (argc != 2) { fprintf(stderr, "usage: hybench csv RESULTS.jsonl [-o FILE]\n"); return HB_EXIT_USAGE; }
    if (out && !strcmp(out, "-")) out = NULL;
    char err[512], werr[600];
    if (out) {
        /* one pass into OUT.tmp.XXXXXX, renamed over OUT when complete: a refused input or a failed
         * write leaves no OUT behind (and an existing OUT untouched) */
        hb_outfile of;
        if (hb_outfile_open(&of, out, werr, sizeof werr) != HB_OK) {
            fprintf(stderr, "hybench csv: %s\n", werr);
            return HB_EXIT_IO;
        }
        hb_status st = hb_csv_stream(argv[1], of.f, err, sizeof err);
        if (hb_outfile_close(&of, st == HB_OK, werr, sizeof werr) != HB_OK) {
            fprintf(stderr, "hybench csv: %s\n", werr);
            return HB_EXIT_IO;
        }
        if (st != HB_OK) {
            fprintf(stderr, "hybench csv: %s\n", err);
            return st == HB_ENOMEM ? HB_EXIT_IO : HB_EXIT_USAGE;
        }
        return HB_EXIT_OK;
    }
    /* standard output: the whole file is validated first, so that a refused input writes nothing */
    if (hb_results_stream(argv[1], HB_LOAD_STRICT, NULL, NULL, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench csv: %s\n", err);
        return HB_EXIT_USAGE;
    }
    hb_status st = hb_csv_stream(argv[1], stdout, err, sizeof err);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "hybench csv: cannot write standard output: %s\n", strerror(errno ? errno : EIO));
        return HB_EXIT_IO;
    }
    if (st != HB_OK) {
        fprintf(stderr, "hybench csv: %s\n", err);
        return st == HB_ENOMEM ? HB_EXIT_IO : HB_EXIT_USAGE;
    }
    return HB_EXIT_OK;
}
