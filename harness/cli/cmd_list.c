/* cmd_list.c - `hybench list [-v]`: every backend type of the registry (measure/registry.h), its
 * devices or why it is unavailable. */
#include "cli/commands.h"
#include "measure/registry.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

int hb_cmd_list(int argc, char **argv)
{
    static const struct option lo[] = {
        {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int verbose = 0, ch;
    optind = 0; /* GNU: full re-initialisation */
    while ((ch = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
        if (ch == 'v') verbose = 1;
        else if (ch == 'h') {
            printf("usage: hybench list [-v]\n  Lists every backend type with its availability; available ones with each device\n"
                   "  instance; unavailable ones with the reason. -v adds each instance's facts (JSON).\n");
            return HB_EXIT_OK;
        } else return HB_EXIT_USAGE;
    }
    if (optind < argc) { fprintf(stderr, "hybench list: unexpected argument %s\n", argv[optind]); return HB_EXIT_USAGE; }
    printf("%-12s %-10s %s\n", "BACKEND", "STATUS", "DEVICE / REASON");
    for (int i = 0; i < hb_nbackends; i++) {
        hb_instance inst[16];
        char reason[512];
        int n = hb_backend_open(&hb_backends[i], inst, 16, reason, sizeof reason);
        if (n == 0) { printf("%-12s %-10s %s\n", hb_backends[i].type, "unavailable", reason); continue; }
        for (int j = 0; j < n; j++) {
            printf("%-12s %-10s %s\n", inst[j].name, "available", inst[j].description);
            if (inst[j].ops->describe) {
                char buf[4096];
                if (inst[j].ops->describe(&inst[j], buf, sizeof buf) == HB_OK && (verbose || strlen(buf) < 400))
                    printf("%-12s %-10s %s\n", "", "", buf);
            }
            inst[j].ops->close(&inst[j]);
        }
    }
    return HB_EXIT_OK;
}
