/*
 * cmd_roofline.c - `hybench roofline RESULTS.jsonl [...]` (alias `targets`, its former name): for each
 * case family of analysis/roofline.c, the best matching ok case's fraction of the ceiling measured in
 * the same run, against the family's goal, as a Markdown table; exit 1 when a measured family misses
 * its goal.
 */
#include "analysis/roofline.h"
#include "cli/commands.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int hb_cmd_roofline(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int ch, help = 0;
    optind = 0; /* GNU: full re-initialisation */
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (ch == 'h') help = 1;
        else return HB_EXIT_USAGE;
    }
    if (help || optind >= argc) {
        fprintf(help ? stdout : stderr,
                "usage: hybench roofline RESULTS.jsonl [...]\n"
                "  Each case family's fraction of the ceiling measured in the same run (copy bandwidth,\n"
                "  sgemm peak, transfer routes), best matching case first, against the family's goal\n"
                "  (Markdown table). A family of a backend the file measured but with no ok case of its\n"
                "  own reads NOT MEASURED (not a failure); other backends' families are left out.\n"
                "  Exit 0 when every measured family reaches its goal, 1 otherwise.\n"
                "  `hybench targets` is the same command under its former name.\n");
        return help ? HB_EXIT_OK : HB_EXIT_USAGE;
    }
    int fails = 0, above = 0;
    printf("| case family | best matching case | figure | ceiling | fraction | goal | verdict |\n|---|---|---|---|---|---|---|\n");
    for (int a = optind; a < argc; a++) {
        hb_run r;
        char err[512];
        hb_load_opts lo = {HB_LOAD_STRICT, NULL, NULL};
        if (hb_run_load_opts(argv[a], &lo, &r, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench %s: %s\n", argv[0], err); return HB_EXIT_USAGE; }
        for (int i = 0; i < hb_roof_ngoals; i++) {
            const hb_roof_goal *t = &hb_roof_goals[i];
            double ratio, fig = NAN, cv = NAN;
            char which[400] = "";
            if (!hb_roof_eval(&r, t, &ratio, &fig, &cv, which, sizeof which)) {
                /* a family of a backend this file measured, with no matching ok case, is named (an
                 * interrupted run, a narrower --op); another backend's families are left out */
                int has_backend = 0;
                for (size_t k = 0; k < r.ncase_recs; k++) {
                    const char *b = r.case_recs[k].backend;
                    if (b && !strncmp(b, t->backend, strlen(t->backend))) { has_backend = 1; break; }
                }
                if (has_backend) printf("| %s | no ok case of this family in %s | - | - | - | %s %.4g | NOT MEASURED |\n", t->what, argv[a],
                                        hb_roof_lower_better(t) ? "<=" : ">=", t->need);
                continue;
            }
            int lower = hb_roof_lower_better(t);
            int pass = lower ? ratio <= t->need : ratio >= t->need;
            if (!lower && ratio > 1 && t->m != HB_ROOF_TFLOPS && t->m != HB_ROOF_COMPUTE_US_MAX && !hb_roof_worst_case(t)) above++;
            if (hb_roof_worst_case(t)) { /* held by its worst case: say so in the case column */
                char w2[sizeof which];
                snprintf(w2, sizeof w2, "worst: %s", which);
                snprintf(which, sizeof which, "%s", w2);
            }
            fails += !pass;
            if (t->m == HB_ROOF_TFLOPS || t->m == HB_ROOF_COMPUTE_US_MAX)
                printf("| %s | %s | %.4g | - | - | %s %.4g | %s |\n", t->what, which, fig,
                       lower ? "<=" : ">=", t->need, pass ? "PASS" : "FAIL");
            else
                printf("| %s | %s | %.4g | %.4g | %.1f%% | %s %.0f%% | %s |\n", t->what, which, fig, cv,
                       100 * ratio, lower ? "<=" : ">=", 100 * t->need, pass ? "PASS" : "FAIL");
        }
        hb_run_free(&r);
    }
    if (above)
        printf("\n%d fraction%s above 100%%: not an efficiency beyond the hardware. A bandwidth ceiling is a STREAM copy larger than "
               "every cache (DRAM), and a case whose data fit in a cache runs at that level's higher bandwidth; a compute ceiling is "
               "one sgemm probe, which reads low when the machine was loaded while it ran (the run's meta.load_avg records the load).\n",
               above, above == 1 ? " is" : "s are");
    return fails ? 1 : HB_EXIT_OK;
}
