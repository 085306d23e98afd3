/* cmd_baseline.c - `hybench baseline set|show`: options and help; the work is analysis/baseline.c. */
#include "analysis/baseline.h"
#include "cli/commands.h"
#include <stdio.h>
#include <string.h>

static void baseline_usage(FILE *f)
{
    fputs("usage: hybench baseline set RESULTS [--dir DIR] [--force]\n"
          "       hybench baseline show [--dir DIR] [--host HOST | RESULTS]\n"
          "set: promote RESULTS to the baseline of its machine (meta.host): DIR/<host>.jsonl plus\n"
          "     DIR/<host>.json with provenance. Refused for a run cut short or with wrong/crashed\n"
          "     cases unless --force. Default DIR: results/baselines.\n"
          "show: print the baseline of HOST (or of RESULTS's host); with neither, list every baseline\n"
          "     in DIR. Exit status 2 when there is none.\n"
          "compare against it with: hybench compare --baseline-dir DIR CURRENT\n", f);
}

int hb_cmd_baseline(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        baseline_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? HB_EXIT_USAGE : HB_EXIT_OK;
    }
    const char *sub = argv[1], *dir = "results/baselines", *host = NULL, *file = NULL;
    int force = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--force")) force = 1;
        else if (!strcmp(a, "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(a, "--host") && i + 1 < argc) host = argv[++i];
        else if (a[0] == '-') { fprintf(stderr, "hybench baseline: unknown option %s\n", a); baseline_usage(stderr); return HB_EXIT_USAGE; }
        else if (!file) file = a;
        else { baseline_usage(stderr); return HB_EXIT_USAGE; }
    }
    if (!strcmp(sub, "set")) {
        if (!file) { baseline_usage(stderr); return HB_EXIT_USAGE; }
        return hb_baseline_set(file, dir, force);
    }
    if (!strcmp(sub, "show")) return hb_baseline_show(dir, host, file);
    fprintf(stderr, "hybench baseline: unknown subcommand %s\n", sub);
    baseline_usage(stderr);
    return HB_EXIT_USAGE;
}

