/* cmd_gbench.c - `hybench gbench`: a results file as Google Benchmark JSON (results/gbench.c). */
#include "cli/commands.h"
#include "results/results.h"
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
          "github-action-benchmark). --errors also lists cases that are not ok, with error_occurred.\n", f);
}

int hb_cmd_gbench(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *metric = "total";
    int agg = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { gbench_usage(stdout); return HB_EXIT_OK; }
        else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && i + 1 < argc) out = argv[++i];
        else if (!strncmp(a, "--out=", 6)) out = a + 6;
        else if (!strcmp(a, "--metric") && i + 1 < argc) metric = argv[++i];
        else if (!strncmp(a, "--metric=", 9)) metric = a + 9;
        else if (!strcmp(a, "--aggregates-only")) agg = 1;
        else if (!strcmp(a, "--errors")) errors = 1;
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "hybench gbench: unknown option %s\n", a); gbench_usage(stderr); return HB_EXIT_USAGE; }
        else if (!in) in = a;
        else { gbench_usage(stderr); return HB_EXIT_USAGE; }
    }
    if (!in || (strcmp(metric, "total") && strcmp(metric, "compute"))) { gbench_usage(stderr); return HB_EXIT_USAGE; }
    hb_run r;
    char err[512];
    if (hb_run_load(in, &r, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench gbench: %s\n", err);
        return HB_EXIT_USAGE;
    }
    json_t *doc = hb_gbench_build(&r, metric, agg, errors);
    hb_run_free(&r);
    if (!doc) { fprintf(stderr, "hybench gbench: out of memory\n"); return HB_EXIT_IO; }
    int bad;
    if (!out || !strcmp(out, "-")) bad = json_dumpf(doc, stdout, JSON_INDENT(2)) != 0 || fputc('\n', stdout) == EOF;
    else bad = json_dump_file(doc, out, JSON_INDENT(2)) != 0;
    json_decref(doc);
    if (bad) { fprintf(stderr, "hybench gbench: cannot write %s\n", out ? out : "stdout"); return HB_EXIT_IO; }
    return HB_EXIT_OK;
}
