/* main.c - `hybench` command-line entry: dispatches the subcommand (commands.h). */
#include "cli/commands.h"
#include "core/config.h"
#include "core/hybench.h"
#include <stdio.h>
#include <string.h>

static const struct { const char *name; int (*fn)(int, char **); const char *help; } cmds[] = {
    {"run", hb_cmd_run, "run workloads on backends, write results/<run-id>.jsonl"},
    {"verify", hb_cmd_verify, "check every case once against cpu-ref (no timing)"},
    {"list", hb_cmd_list, "list backends, their devices, or why they are unavailable"},
    {"report", hb_cmd_report, "render reports/<name>/ (HTML, Markdown, SVG) from results files"},
    {"compare", hb_cmd_compare, "regression gate: compare two results files (exit 1 on regression, 11 inconclusive)"},
    {"ab", hb_cmd_ab, "merge gate: run two builds interleaved in rounds, paired per-round verdicts"},
    {"gate-list", hb_cmd_gate_list, "the merge gate's case list: the cheapest case of every kernel path (op, backend, dtype, mode, impl)"},
    {"trend", hb_cmd_trend, "steps and drifts in each case's nightly history, with plots"},
    {"history", hb_cmd_history, "history import|export|list|machines|where: the store of nightly runs"},
    {"publish", hb_cmd_publish, "a static site of the nightly history: machines, steps and drifts, case graphs"},
    {"baseline", hb_cmd_baseline, "baseline set|show: the stored baseline of this machine"},
    {"csv", hb_cmd_csv, "export a results file as CSV"},
    {"gbench", hb_cmd_gbench, "export a results file as Google Benchmark JSON"},
    {"merge-ranks", hb_cmd_merge_ranks, "merge the results files of a multi-rank launch into one"},
    {"plan", hb_cmd_plan, "a model's device plans (single, seed heuristic, greedy, optimal) under measured costs"},
    {"roofline", hb_cmd_roofline, "each case family's fraction of its measured ceiling, against a goal"},
    {"targets", hb_cmd_roofline, "the former name of `roofline`"},
};

static void usage(FILE *f)
{
    fprintf(f, "hybench %s - which device, which precision, which data path?\n\nusage: hybench COMMAND [options]\n\n", HB_VERSION);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) fprintf(f, "  %-11s %s\n", cmds[i].name, cmds[i].help);
    fprintf(f, "\n`hybench COMMAND --help` for each command's options.\n");
}

int main(int argc, char **argv)
{
    /* the command-line boundary: the one place the environment is read into the run's configuration
     * (core/config.h, docs/environment.md); commands add their options to it */
    hb_config_from_env(hb_config_boundary());
    if (argc < 2) { usage(stderr); return HB_EXIT_USAGE; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) { usage(stdout); return HB_EXIT_OK; }
    if (!strcmp(argv[1], "--version")) { printf("hybench %s (results schema %d)\n", HB_VERSION, HB_SCHEMA_VERSION); return 0; }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "hybench: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return HB_EXIT_USAGE;
}
