/* cmd_csv.c - `hybench csv RESULTS.jsonl [-o FILE]`: the run as CSV (results/csv.c), streamed. */
#include "cli/commands.h"
#include "results/results.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void csv_usage(FILE *f)
{
    fputs("usage: hybench csv [-o FILE] RESULTS.jsonl   (options before or after the file)\n"
          "  One CSV row per case (docs/results-schema.md, CSV export): run id, date, commit, machine\n"
          "  fingerprint, host, device; op, backend, mode, route, dtype, one column per shape axis;\n"
          "  samples, median, noise (robust CV %), the CI of the median and whether it met the target.\n"
          "  -o, --out FILE   write FILE ('-' is stdout, the default)\n"
          "  Exit status: 0 written, 2 usage or a results file that breaks the schema (file:line: field: reason),\n"
          "  7 the output cannot be written (no partial FILE is left behind).\n", f);
}

int hb_cmd_csv(int argc, char **argv)
{
    static const struct option lo[] = {
        {"out", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *out = NULL;
    int ch;
    optind = 0; /* GNU: full re-initialisation, so that a second call (tests) parses afresh */
    while ((ch = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        if (ch == 'o') out = optarg;
        else if (ch == 'h') { csv_usage(stdout); return HB_EXIT_OK; }
        else { csv_usage(stderr); return HB_EXIT_USAGE; }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "hybench csv: %s\n", argc - optind < 1 ? "no results file given" : "one results file only");
        csv_usage(stderr);
        return HB_EXIT_USAGE;
    }
    const char *in = argv[optind];
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
        hb_status st = hb_csv_stream(in, of.f, err, sizeof err);
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
    if (hb_results_stream(in, HB_LOAD_STRICT, NULL, NULL, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench csv: %s\n", err);
        return HB_EXIT_USAGE;
    }
    hb_status st = hb_csv_stream(in, stdout, err, sizeof err);
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
