/* cmd_trend.c - `hybench trend`: each machine's nightly history from the store (results/store.h),
 * steps and drifts over the whole series (analysis/changepoint.h), a page of plots per machine
 * (analysis/trend.c). docs/history.md. */
#include "analysis/trend.h"
#include "cli/commands.h"
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *hb_history_default_store(void); /* cmd_history.c */

static void trend_usage(FILE *f)
{
    fputs("usage: hybench trend [--store URL] [--machine FP] [--last N] [--metric total|compute] [--alpha Q]\n"
          "                     [--alpha-trend Q]\n"
          "                     [--min-change PCT] [--min-nights N] [--labelled N] [--out DIR] [--no-plot]\n"
          "       hybench trend --add RESULTS... [--store URL]\n"
          "Steps and drifts in each case's nightly series, per machine (fingerprint of CPU, GPU, driver and\n"
          "library versions; never the host name): the night each change began and its size. Writes\n"
          "OUT/<machine>/changes.md, index.html and one plot per op and backend (time normalised to each\n"
          "case's first night, the changed cases labelled).\n"
          "  --store URL       SQLite file or postgresql:// URL (default $HB_STORE, else results/history.db)\n"
          "  --machine FP      only this machine (default: every machine in the store)\n"
          "  --last N          only the last N nights (default: all)\n"
          "  --metric M        the time each night's series is made of: total (the case's measured\n"
          "                    end-to-end median, every phase; the default) or compute (the compute\n"
          "                    phase's median alone, which transfers and conversions do not move)\n"
          "  --alpha Q         significance of Pettitt's step test (default 0.001)\n"
          "  --alpha-trend Q   significance of the Mann-Kendall drift test (default 0.005)\n"
          "  --min-change PCT  smallest change reported, e.g. 2 or 2% (default 2%)\n"
          "  --min-nights N    nights needed on each side of a step (default 3)\n"
          "  --labelled N      changed cases drawn per plot, largest first (default 8)\n"
          "  --out DIR         default reports/trend\n"
          "  --no-plot         write changes.md and the page's tables only, without running gnuplot\n"
          "                    (faster; for a machine without gnuplot or a check in CI)\n"
          "  --add RESULTS...  import results files into the store (as `hybench history import`) and exit\n"
          "Exit status: 0 ok (changes are reported, not an error); 2 bad usage or no runs; 7 the store\n"
          "cannot be read or an output cannot be written.\n", f);
}

int hb_cli_parse_num(const char *cmd, const char *opt, const char *v, double lo, double hi, double *out)
{
    char *e;
    double x = strtod(v, &e);
    if (e == v || (*e && strcmp(e, "%")) || !isfinite(x) || x < lo || x > hi) {
        fprintf(stderr, "hybench %s: %s %s: want a number in [%g, %g]\n", cmd, opt, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int hb_cmd_trend(int argc, char **argv)
{
    hb_trend_opts t = { .metric = "total", .out = "reports/trend", .plot = 1, .labelled = 8 };
    hb_cp_defaults(&t.cp);
    const char *url = hb_history_default_store(), *machine = NULL;
    double last = 0, v;
    int add = 0;
    enum { O_MINCHG = 256, O_MINN, O_LAB, O_NOPLOT, O_ADD, O_ATREND };
    static const struct option lo[] = {
        { "store", required_argument, 0, 's' }, { "machine", required_argument, 0, 'm' },
        { "last", required_argument, 0, 'n' }, { "metric", required_argument, 0, 'M' },
        { "alpha", required_argument, 0, 'a' }, { "alpha-trend", required_argument, 0, O_ATREND },
        { "min-change", required_argument, 0, O_MINCHG },
        { "min-nights", required_argument, 0, O_MINN }, { "labelled", required_argument, 0, O_LAB },
        { "out", required_argument, 0, 'o' }, { "no-plot", no_argument, 0, O_NOPLOT },
        { "add", no_argument, 0, O_ADD }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "s:m:n:M:a:o:h", lo, NULL)) != -1) {
        switch (c) {
        case 's': url = optarg; break;
        case 'm': machine = optarg; break;
        case 'o': t.out = optarg; break;
        case 'n': if (hb_cli_parse_num("trend", "--last", optarg, 2, 1e9, &last)) return HB_EXIT_USAGE; break;
        case 'M':
            if (strcmp(optarg, "total") && strcmp(optarg, "compute")) {
                fprintf(stderr, "hybench trend: --metric %s: total or compute\n", optarg);
                return HB_EXIT_USAGE;
            }
            t.metric = optarg;
            break;
        case 'a': if (hb_cli_parse_num("trend", "--alpha", optarg, 1e-12, 0.5, &t.cp.alpha)) return HB_EXIT_USAGE; break;
        case O_ATREND: if (hb_cli_parse_num("trend", "--alpha-trend", optarg, 1e-12, 0.5, &t.cp.alpha_trend)) return HB_EXIT_USAGE; break;
        case O_MINCHG: if (hb_cli_parse_num("trend", "--min-change", optarg, 0, 1000, &v)) return HB_EXIT_USAGE; t.cp.min_change = v / 100; break;
        case O_MINN: if (hb_cli_parse_num("trend", "--min-nights", optarg, 1, 1000, &v)) return HB_EXIT_USAGE; t.cp.min_seg = (size_t)v; break;
        case O_LAB: if (hb_cli_parse_num("trend", "--labelled", optarg, 1, 100, &v)) return HB_EXIT_USAGE; t.labelled = (size_t)v; break;
        case O_NOPLOT: t.plot = 0; break;
        case O_ADD: add = 1; break;
        case 'h': trend_usage(stdout); return HB_EXIT_OK;
        default:
            fprintf(stderr, "hybench trend: %s: %s\n", argv[optind - 1] ? argv[optind - 1] : "?",
                    optopt && strchr("smnMao", optopt) ? "needs a value" : "unknown option");
            trend_usage(stderr);
            return HB_EXIT_USAGE;
        }
    }
    if (add) {
        if (optind >= argc) { fprintf(stderr, "hybench trend: --add needs RESULTS files\n"); return HB_EXIT_USAGE; }
        int n = argc - optind + 4;
        char **a = calloc((size_t)n + 1, sizeof *a);
        if (!a) return HB_EXIT_IO;
        int k = 0;
        a[k++] = "history";
        a[k++] = "import";
        a[k++] = "--store";
        a[k++] = (char *)url;
        for (int i = optind; i < argc; i++) a[k++] = argv[i];
        int rc = hb_cmd_history(k, a);
        free(a);
        return rc;
    }
    if (optind < argc) { fprintf(stderr, "hybench trend: unexpected argument %s (did you mean --add?)\n", argv[optind]); return HB_EXIT_USAGE; }
    char err[1024];
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench trend: %s\n", err); return HB_EXIT_IO; }
    char **fps = NULL, **descs = NULL;
    size_t nm = 0;
    int rc = HB_EXIT_OK, any = 0;
    if (hb_store_machines(s, &fps, &descs, &nm, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench trend: %s\n", err);
        hb_store_close(s);
        return HB_EXIT_IO;
    }
    for (size_t i = 0; i < nm; i++) {
        if (machine && strcmp(machine, fps[i])) continue;
        hb_series x;
        hb_status st = hb_store_series(s, fps[i], t.metric, (size_t)last, &x, err, sizeof err);
        if (st == HB_EINVAL) { fprintf(stderr, "hybench trend: %s\n", err); continue; }
        if (st) { fprintf(stderr, "hybench trend: %s\n", err); rc = HB_EXIT_IO; continue; }
        any = 1;
        hb_trend_change *chg = NULL;
        size_t n = 0;
        if (hb_trend_analyze(&x, &t.cp, &chg, &n) != HB_OK) { fprintf(stderr, "hybench trend: out of memory\n"); rc = HB_EXIT_IO; }
        else {
            int r = hb_trend_write(&x, fps[i], descs[i], chg, n, &t);
            if (r && !rc) rc = r;
        }
        free(chg);
        hb_series_free(&x);
    }
    for (size_t i = 0; i < nm; i++) { free(fps[i]); free(descs[i]); }
    free(fps);
    free(descs);
    hb_store_close(s);
    if (!any) {
        char name[1024];
        fprintf(stderr, "hybench trend: no runs%s%s in %s (import some: hybench history import RESULTS)\n",
                machine ? " of machine " : "", machine ? machine : "", hb_store_safe_name(url, name, sizeof name));
        return rc ? rc : HB_EXIT_USAGE;
    }
    return rc;
}
