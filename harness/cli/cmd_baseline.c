/* cmd_baseline.c - `hybench baseline set|show`: options and help; the work is analysis/baseline.c. */
#include "analysis/baseline.h"
#include "cli/commands.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void baseline_usage(FILE *f)
{
    fputs("usage: hybench baseline set RESULTS [--dir DIR] [--force]\n"
          "       hybench baseline show [--dir DIR] [--host HOST | RESULTS]\n"
          "set: promote RESULTS to the baseline of its machine, named by its fingerprint (never by\n"
          "     host name): DIR/<fingerprint>.jsonl plus DIR/<fingerprint>.json with provenance\n"
          "     (host, fingerprint and its text, run, commit). Refused for a run cut short or with wrong/crashed\n"
          "     cases unless --force (exit 2); a file without case records, without a meta record or\n"
          "     of a newer schema than this hybench knows is never set (exit 3, the file named).\n"
          "     Default DIR: results/baselines.\n"
          "show: print the baseline of RESULTS's machine (or a former DIR/<host>.jsonl of its host, with\n"
          "     a notice), or those set from runs of HOST; with neither, list every baseline in DIR.\n"
          "     Exit status 2 when there is none.\n"
          "compare against it with: hybench compare --baseline-dir DIR CURRENT\n", f);
}

int hb_cmd_baseline(int argc, char **argv)
{
    static const struct option lo[] = {
        {"force", no_argument, NULL, 'f'}, {"dir", required_argument, NULL, 'd'},
        {"host", required_argument, NULL, 'H'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *sub = NULL, *dir = "results/baselines", *host = NULL, *file = NULL;
    int force = 0, ch;
    optind = 0; /* GNU: full re-initialisation; options may come before or after the words */
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case 'f': force = 1; break;
        case 'd': dir = optarg; break;
        case 'H': host = optarg; break;
        case 'h': baseline_usage(stdout); return HB_EXIT_OK;
        default: baseline_usage(stderr); return HB_EXIT_USAGE;
        }
    }
    if (optind < argc) sub = argv[optind++];
    if (optind < argc) file = argv[optind++];
    if (!sub || optind < argc) { baseline_usage(stderr); return HB_EXIT_USAGE; }
    if (!strcmp(sub, "set")) {
        if (!file) { baseline_usage(stderr); return HB_EXIT_USAGE; }
        return hb_baseline_set(file, dir, force);
    }
    if (!strcmp(sub, "show")) return hb_baseline_show(dir, host, file);
    fprintf(stderr, "hybench baseline: unknown subcommand %s\n", sub);
    baseline_usage(stderr);
    return HB_EXIT_USAGE;
}

