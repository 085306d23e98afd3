/* cmd_csv.c - `hybench csv RESULTS.jsonl [-o FILE]`: the run as CSV (results/csv.c). */
#include "cli/commands.h"
#include "results/results.h"
#include <stdio.h>
#include <string.h>

int hb_cmd_csv(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout, "usage: hybench csv RESULTS.jsonl [-o FILE]\n  One CSV row per case (docs/results-schema.md, CSV export).\n");
        return argc < 2 ? HB_EXIT_USAGE : HB_EXIT_OK;
    }
    FILE *f = stdout;
    if (argc >= 4 && !strcmp(argv[2], "-o")) {
        f = fopen(argv[3], "w");
        if (!f) { fprintf(stderr, "hybench csv: cannot write %s\n", argv[3]); return HB_EXIT_IO; }
    }
    hb_run r;
    char err[512];
    if (hb_run_load(argv[1], &r, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench csv: %s\n", err); return HB_EXIT_USAGE; }
    hb_csv_write(f, &r);
    hb_run_free(&r);
    if (f != stdout) fclose(f);
    return HB_EXIT_OK;
}
