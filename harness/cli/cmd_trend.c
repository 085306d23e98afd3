/* cmd_trend.c - `hybench trend`: options and help, --add (append a run to the history index), or
 * the plots of every host's history (analysis/trend.c). */
#include "analysis/baseline.h"
#include "analysis/trend.h"
#include "cli/commands.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void trend_usage(FILE *f)
{
    fputs("usage: hybench trend [--history DIR] [--index FILE] [--out DIR] [--host HOST] [--last N]\n"
          "                     [--metric total|compute] [--threshold PCT|BACKEND=PCT]... [--alpha Q]\n"
          "                     [--template FILE] [--no-plot]\n"
          "       hybench trend --add RESULTS [--index FILE]\n"
          "Plot each case's median over the nightly history (results/history/index.jsonl), one SVG per\n"
          "op and backend with a line per case, marking the steps between consecutive runs that\n"
          "`hybench compare` would call regressions (red) or improvements (green). Writes\n"
          "OUT/<host>/<op>__<backend>.svg and .dat, and OUT/<host>/index.html.\n"
          "  --add RESULTS   append RESULTS (a results .jsonl) to the index and exit\n"
          "  defaults: --history results/history, --index HISTORY/index.jsonl, --out reports/trend,\n"
          "            --last 30, every host in the index, --template reports/trend.gp\n", f);
}

int hb_cmd_trend(int argc, char **argv)
{
    hb_trend_opts t;
    hb_cmp_options_default(&t.cmp);
    t.cmp.ci_for_all = 0;
    t.out = "reports/trend";
    t.tmpl = NULL;
    t.last = 30;
    t.plot = 1;
    const char *history = "results/history", *index = NULL, *host = NULL, *add = NULL;
    char err[512];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { trend_usage(stdout); return HB_EXIT_OK; }
        else if (!strcmp(a, "--no-plot")) { t.plot = 0; continue; }
        if (!v) { fprintf(stderr, "hybench trend: %s needs a value\n", a); trend_usage(stderr); return HB_EXIT_USAGE; }
        i++;
        if (!strcmp(a, "--history")) history = v;
        else if (!strcmp(a, "--index")) index = v;
        else if (!strcmp(a, "--out")) t.out = v;
        else if (!strcmp(a, "--host")) host = v;
        else if (!strcmp(a, "--last")) t.last = atoi(v);
        else if (!strcmp(a, "--template")) t.tmpl = v;
        else if (!strcmp(a, "--add")) add = v;
        else if (!strcmp(a, "--alpha")) t.cmp.alpha = strtod(v, NULL);
        else if (!strcmp(a, "--metric")) {
            if (strcmp(v, "total") && strcmp(v, "compute")) { fprintf(stderr, "hybench trend: --metric total|compute\n"); return HB_EXIT_USAGE; }
            t.cmp.metric = v;
        } else if (!strcmp(a, "--threshold")) {
            if (hb_cmp_parse_threshold(&t.cmp, v, err, sizeof err) != HB_OK) {
                fprintf(stderr, "hybench trend: %s\n", err);
                return HB_EXIT_USAGE;
            }
        } else { fprintf(stderr, "hybench trend: unknown option %s\n", a); trend_usage(stderr); return HB_EXIT_USAGE; }
    }
    char ibuf[PATH_MAX];
    if (!index) { snprintf(ibuf, sizeof ibuf, "%s/index.jsonl", history); index = ibuf; }
    if (add) {
        if (hb_history_append(index, add, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench trend: %s\n", err);
            return HB_EXIT_USAGE;
        }
        printf("hybench trend: %s added to %s\n", add, index);
        return HB_EXIT_OK;
    }
    if (t.last < 2) t.last = 2;
    size_t n;
    hb_hist_entry *h = hb_trend_read_index(index, &n, err, sizeof err);
    if (!h) { fprintf(stderr, "hybench trend: %s\n", err); return HB_EXIT_USAGE; }
    int rc = HB_EXIT_OK, any = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(h[j].host, h[i].host)) j++;
        if (!host || !strcmp(host, h[i].host)) {
            size_t first = j - i > (size_t)t.last ? j - (size_t)t.last : i;
            int r = hb_trend_host(h + first, j - first, &t);
            if (r && !rc) rc = r;
            any = 1;
        }
        i = j;
    }
    free(h);
    if (!any) {
        fprintf(stderr, "hybench trend: no runs%s%s in %s\n", host ? " of host " : "", host ? host : "", index);
        return HB_EXIT_USAGE;
    }
    return rc;
}

