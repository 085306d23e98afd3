/* cmd_gbench.c - `hybench gbench`: a results file as Google Benchmark JSON (results/gbench.c). */
#include "cli/commands.h"
#include "results/results.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void gbench_usage(FILE *f)
{
    fputs("usage: hybench gbench RESULTS.jsonl [-o FILE] [--metric total|compute] [--aggregates-only] [--errors]\n"
          "Write RESULTS as Google Benchmark JSON (stdout by default), for Google Benchmark's\n"
          "tools/compare.py, github-action-benchmark (tool: googlecpp) and bencher (cpp_google).\n"
          "Each ok case is a benchmark named after its key; each sample one repetition (iterations 1,\n"
          "times in ns; cpu_time = real_time since hybench measures wall/device time), followed by the\n"
          "mean, median, stddev and cv aggregates. --aggregates-only keeps only those (use it for\n"
          "github-action-benchmark). --errors also lists cases that are not ok, with error_occurred.\n"
          "Exit status: 0 written, 2 usage or a results file that breaks the schema (file:line: field:\n"
          "reason), 7 the output cannot be written (no partial FILE is left behind).\n", f);
}

int hb_cmd_gbench(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *metric = "total";
    int agg = 0, errors = 0, ch;
    enum { OPT_METRIC = 256, OPT_AGG, OPT_ERRORS };
    static const struct option lo[] = {
        {"out", required_argument, NULL, 'o'}, {"metric", required_argument, NULL, OPT_METRIC},
        {"aggregates-only", no_argument, NULL, OPT_AGG}, {"errors", no_argument, NULL, OPT_ERRORS},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    optind = 0; /* GNU: full re-initialisation */
    while ((ch = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case OPT_METRIC: metric = optarg; break;
        case OPT_AGG: agg = 1; break;
        case OPT_ERRORS: errors = 1; break;
        case 'h': gbench_usage(stdout); return HB_EXIT_OK;
        default: gbench_usage(stderr); return HB_EXIT_USAGE;
        }
    }
    if (argc - optind > 1) { fprintf(stderr, "hybench gbench: one results file only\n"); gbench_usage(stderr); return HB_EXIT_USAGE; }
    if (optind < argc) in = argv[optind];
    if (!in || (strcmp(metric, "total") && strcmp(metric, "compute"))) { gbench_usage(stderr); return HB_EXIT_USAGE; }
    if (out && !strcmp(out, "-")) out = NULL;
    char err[512], werr[600];
    if (out) {
        /* one pass into OUT.tmp.XXXXXX, renamed over OUT when complete: a refused input or a failed
         * write leaves no OUT behind (and an existing OUT untouched) */
        hb_outfile of;
        if (hb_outfile_open(&of, out, werr, sizeof werr) != HB_OK) {
            fprintf(stderr, "hybench gbench: %s\n", werr);
            return HB_EXIT_IO;
        }
        hb_status st = hb_gbench_stream(in, of.f, metric, agg, errors, err, sizeof err);
        if (hb_outfile_close(&of, st == HB_OK, werr, sizeof werr) != HB_OK) {
            fprintf(stderr, "hybench gbench: %s\n", werr);
            return HB_EXIT_IO;
        }
        if (st != HB_OK) {
            fprintf(stderr, "hybench gbench: %s\n", err);
            return st == HB_ENOMEM ? HB_EXIT_IO : HB_EXIT_USAGE;
        }
        return HB_EXIT_OK;
    }
    /* standard output: the whole file is validated first, so that a refused input writes nothing */
    if (hb_results_stream(in, HB_LOAD_STRICT, NULL, NULL, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench gbench: %s\n", err);
        return HB_EXIT_USAGE;
    }
    hb_status st = hb_gbench_stream(in, stdout, metric, agg, errors, err, sizeof err);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "hybench gbench: cannot write standard output: %s\n", strerror(errno ? errno : EIO));
        return HB_EXIT_IO;
    }
    if (st != HB_OK) {
        fprintf(stderr, "hybench gbench: %s\n", err);
        return st == HB_ENOMEM ? HB_EXIT_IO : HB_EXIT_USAGE;
    }
    return HB_EXIT_OK;
}
