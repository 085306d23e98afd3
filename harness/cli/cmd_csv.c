/* cmd_csv.c - `hybench csv RESULTS.jsonl [-o FILE]`: the run as CSV (results/csv.c), streamed. */
#include "cli/commands.h"
#include "results/results.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hb_cmd_csv(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout, "usage: hybench csv RESULTS.jsonl [-o FILE]\n  One CSV row per case (docs/results-schema.md, CSV export).\n"
                "  Exit status: 0 written, 2 usage or a results file that breaks the schema (file:line: field: reason),\n"
                "  7 the output cannot be written (the file is removed).\n");
        return argc < 2 ? HB_EXIT_USAGE : HB_EXIT_OK;
    }
    const char *out = NULL;
    if (argc == 4 && !strcmp(argv[2], "-o")) out = argv[3];
    else if (argc != 2) { fprintf(stderr, "usage: hybench csv RESULTS.jsonl [-o FILE]\n"); return HB_EXIT_USAGE; }
    if (out && !strcmp(out, "-")) out = NULL;
    char err[512];
    /* validate the whole file before creating the output: a refused file leaves nothing behind */
    if (hb_results_stream(argv[1], HB_LOAD_STRICT, NULL, NULL, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench csv: %s\n", err);
        return HB_EXIT_USAGE;
    }
    FILE *f = stdout;
    if (out && !(f = fopen(out, "w"))) {
        fprintf(stderr, "hybench csv: cannot write %s: %s\n", out, strerror(errno));
        return HB_EXIT_IO;
    }
    /* only a regular file is removed after a failure (never /dev/full, a FIFO or a terminal) */
    struct stat sb;
    int regular = out && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    hb_status st = hb_csv_stream(argv[1], f, err, sizeof err);
    int werr = 0;
    errno = 0;
    if (fflush(f) != 0 || ferror(f)) werr = errno ? errno : EIO;
    if (f != stdout && fclose(f) != 0 && !werr) werr = errno ? errno : EIO;
    if (st != HB_OK || werr) {
        if (werr) fprintf(stderr, "hybench csv: cannot write %s: %s\n", out ? out : "standard output", strerror(werr));
        else fprintf(stderr, "hybench csv: %s\n", err);
        if (regular) unlink(out);
        return werr || st != HB_EINVAL ? HB_EXIT_IO : HB_EXIT_USAGE;
    }
    return HB_EXIT_OK;
}
