/*
 * fuzz_benchdnn.c - libFuzzer target for the benchdnn list parser (harness/workload/benchdnn.c,
 * hb_benchdnn_load and the descriptor parser hb_benchdnn_parse under it). The first byte of the
 * input picks the list's kind ('c' conv, 'p' pool, 'm' matmul, anything else: byte % 3) and, in
 * its top bit, a --mb=3 override; the rest is the list file. Every input must load or be refused
 * with a message; nothing may crash, leak or hit undefined behaviour.
 */
#include "fuzz_util.h"
#include "workload/benchdnn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    hb_batch_kind k = data[0] == 'c' ? HB_BATCH_CONV : data[0] == 'p' ? HB_BATCH_POOL
                    : data[0] == 'm' ? HB_BATCH_MATMUL : (hb_batch_kind)(data[0] % 3);
    hb_batch_opts opts = { .mb = (data[0] & 0x80) ? 3 : 0 };
    const char *path = fz_write_file("list", data + 1, size - 1);
    hb_item_list items = { 0 };
    char err[1024] = "";
    hb_status st = hb_benchdnn_load(k, path, &opts, &items, err, sizeof err);
    if (st == HB_OK) {
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
