/*
 * fuzz_results.c - libFuzzer target for the results reader (harness/results/read.c, hb_run_load)
 * and the exports built straight on it: the CSV writer (csv.c) and the Google Benchmark JSON
 * builder (gbench.c), as `hybench csv` and `hybench gbench` run them. The input is a results file
 * (JSON lines, docs/results-schema.md). It must load or be refused with a message; nothing may
 * crash, leak or hit undefined behaviour.
 */
#include <math.h>
#include "fuzz_util.h"
#include "results/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write_file("r.jsonl", data, size);
    hb_run r;
    char err[1024] = "";
    hb_status st = hb_run_load(path, &r, err, sizeof err);
    if (st != HB_OK) {
        if (!err[0]) { fprintf(stderr, "error %d without a message\n", (int)st); abort(); }
        hb_run_free(&r);
        return 0;
    }
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w"))) abort();
    (void)hb_run_meta(&r, "host");
    (void)hb_run_cpu_model(&r);
    size_t i;
    json_t *c;
    json_array_foreach(r.cases, i, c) {
        (void)hb_rec_str(c, "backend");
        (void)hb_case_phase(c, "total", "median");
        const char *b = hb_rec_str(c, "backend");
        if (b) (void)hb_run_ceiling(&r, b, "flops");
    }
    hb_csv_write(devnull, &r);
    for (int agg = 0; agg < 2; agg++) {
        json_t *g = hb_gbench_build(&r, agg ? "compute" : "total", agg, !agg);
        if (g) {
            char *s = json_dumps(g, JSON_COMPACT);
            free(s);
            json_decref(g);
        }
    }
    hb_run_free(&r);
    return 0;
}
