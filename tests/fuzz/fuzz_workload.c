/*
 * fuzz_workload.c - libFuzzer target for the workload parser (harness/workload/workload.c,
 * hb_workload_load): the input is a workload INI file (docs/workloads.md). Every input must either
 * load or be refused with HB_EINVAL/HB_EDEVICE and a message; nothing may crash, leak or hit
 * undefined behaviour. `batch =` lines may name the benchdnn lists shipped in workloads/benchdnn/
 * (found beside the fuzzer's executable, build/fuzz/, as hb_benchdnn_find says).
 */
#include "fuzz_util.h"
#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write_file("w.ini", data, size);
    hb_item_list items = { 0 };
    char err[1024] = "";
    hb_status st = hb_workload_load(path, &items, err, sizeof err);
    if (st == HB_OK) {
        /* what `hybench run --dry-run` prints of each item: its flop count and shape string */
        static FILE *devnull;
        if (!devnull && !(devnull = fopen("/dev/null", "w"))) abort();
        for (size_t i = 0; i < items.n; i++) hb_item_print(devnull, &items.v[i]);
    } else {
        if (items.n != 0) { fprintf(stderr, "error %d but %zu items appended\n", (int)st, items.n); abort(); }
        if (!err[0]) { fprintf(stderr, "error %d without a message\n", (int)st); abort(); }
    }
    hb_item_list_free(&items);
    return 0;
}
