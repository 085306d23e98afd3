/* cmd_publish.c - `hybench publish`: a static, browsable site of the nightly history (report/site.h)
 * from the history store (results/store.h), with each machine's steps and drifts (analysis/trend.h).
 * docs/history.md, "The site". */
#include "cli/commands.h"
#include "cli/templates.h"
#include "report/site.h"
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *hb_history_default_store(void); /* cmd_history.c */

static void publish_usage(FILE *f)
{
    fputs("usage: hybench publish [--store URL] [--out DIR] [--reports DIR] [--link-reports] [--machine FP]\n"
          "                       [--last N] [--metric total|compute] [--alpha Q] [--alpha-trend Q]\n"
          "                       [--min-change PCT] [--min-nights N]\n"
          "A static site of the nightly history that opens from file:// with no network: DIR/index.html lists\n"
          "every machine (fingerprint, host, CPU, devices) with its last night (date, run id, commit, cases)\n"
          "and the steps and drifts found; a page per machine lists them, each linking to its night's report\n"
          "and naming its commit, and every case in a table filterable by op, shape, backend, dtype, mode and\n"
          "route; a page per case draws its history: the median per night with its 95% CI band (zoom by drag,\n"
          "hover for the commit and run id, click a point to open that night's report). Steps and drifts are\n"
          "`hybench trend`'s (same tests and options). The graphs use dygraphs, copied into DIR/lib/ from the\n"
          "Debian package libjs-dygraphs.\n"
          "  --store URL       SQLite file or postgresql:// URL (default $HB_STORE, else results/history.db)\n"
          "  --out DIR         the site's folder (default reports/history-site); updated in place\n"
          "  --reports DIR     where the nights' reports are: DIR/<run-id>/index.html (default reports); each\n"
          "                    one found is copied into the site as runs/<run-id>/ (once; again when newer)\n"
          "  --link-reports    symbolic links to the reports instead of copies (a site served where it is made)\n"
          "  --machine FP      only this machine (default: every machine in the store)\n"
          "  --last N          only the last N nights (default: all)\n"
          "  --metric M        total (default) or compute\n"
          "  --alpha Q, --alpha-trend Q, --min-change PCT, --min-nights N   as for hybench trend\n"
          "Exit status: 0 ok (steps and drifts are reported, not an error); 2 bad usage, no such store or no runs\n"
          "in it; 7 the store cannot be read or the site cannot be written (the file named); 10 the package\n"
          "libjs-dygraphs is not installed (its file named).\n", f);
}

int hb_cmd_publish(int argc, char **argv)
{
    hb_site_opts o = { .out = "reports/history-site", .reports = "reports", .metric = "total" };
    hb_cp_defaults(&o.cp);
    const char *url = hb_history_default_store(), *machine = NULL;
    double last = 0, v;
    enum { O_MINCHG = 256, O_MINN, O_ATREND, O_REPORTS, O_LINK };
    static const struct option lo[] = {
        { "store", required_argument, 0, 's' }, { "out", required_argument, 0, 'o' },
        { "reports", required_argument, 0, O_REPORTS }, { "link-reports", no_argument, 0, O_LINK },
        { "machine", required_argument, 0, 'm' }, { "last", required_argument, 0, 'n' },
        { "metric", required_argument, 0, 'M' }, { "alpha", required_argument, 0, 'a' },
        { "alpha-trend", required_argument, 0, O_ATREND }, { "min-change", required_argument, 0, O_MINCHG },
        { "min-nights", required_argument, 0, O_MINN }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "s:o:m:n:M:a:h", lo, NULL)) != -1) {
        switch (c) {
        case 's': url = optarg; break;
        case 'o': o.out = optarg; break;
        case 'm': machine = optarg; break;
        case O_REPORTS: o.reports = optarg; break;
        case O_LINK: o.link_reports = 1; break;
        case 'n': if (hb_cli_parse_num("publish", "--last", optarg, 2, 1e9, &last)) return HB_EXIT_USAGE; break;
        case 'M':
            if (strcmp(optarg, "total") && strcmp(optarg, "compute")) {
                fprintf(stderr, "hybench publish: --metric %s: total or compute\n", optarg);
                return HB_EXIT_USAGE;
            }
            o.metric = optarg;
            break;
        case 'a': if (hb_cli_parse_num("publish", "--alpha", optarg, 1e-12, 0.5, &o.cp.alpha)) return HB_EXIT_USAGE; break;
        case O_ATREND: if (hb_cli_parse_num("publish", "--alpha-trend", optarg, 1e-12, 0.5, &o.cp.alpha_trend)) return HB_EXIT_USAGE; break;
        case O_MINCHG: if (hb_cli_parse_num("publish", "--min-change", optarg, 0, 1000, &v)) return HB_EXIT_USAGE; o.cp.min_change = v / 100; break;
        case O_MINN: if (hb_cli_parse_num("publish", "--min-nights", optarg, 1, 1000, &v)) return HB_EXIT_USAGE; o.cp.min_seg = (size_t)v; break;
        case 'h': publish_usage(stdout); return HB_EXIT_OK;
        default:
            fprintf(stderr, "hybench publish: %s: %s\n", argv[optind - 1] ? argv[optind - 1] : "?",
                    optopt && strchr("somnMa", optopt) ? "needs a value" : "unknown option");
            publish_usage(stderr);
            return HB_EXIT_USAGE;
        }
    }
    if (optind < argc) { fprintf(stderr, "hybench publish: unexpected argument %s\n", argv[optind]); return HB_EXIT_USAGE; }
    if (!*o.out) { fprintf(stderr, "hybench publish: --out '': want a folder\n"); return HB_EXIT_USAGE; }
    char name[1024], err[2048], tpl[PATH_MAX];
    hb_store_safe_name(url, name, sizeof name);
    /* publishing reads a store; it never creates one (hb_store_open would make an empty SQLite file) */
    struct stat st;
    if (!hb_store_is_postgres(url) && stat(url, &st) != 0) {
        fprintf(stderr, "hybench publish: --store %s: no such store (import nightly runs first: hybench history import "
                        "RESULTS, or ./run_all.sh --nightly)\n", name);
        return HB_EXIT_USAGE;
    }
    const char *lib = getenv("HB_DYGRAPHS_DIR");
    o.lib_dir = lib && *lib ? lib : HB_SITE_DYGRAPHS_DIR;
    (void)hb_find_templates(NULL, "site.js", tpl, sizeof tpl); /* a folder without them: site_files.c names it */
    o.tpl_dir = tpl;
    int rc = hb_site_prepare(&o, err, sizeof err);
    if (rc) { fprintf(stderr, "hybench publish: %s\n", err); return rc; }

    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench publish: %s\n", err); return HB_EXIT_IO; }
    char **fps = NULL, **descs = NULL;
    size_t nm = 0, ns = 0;
    if (hb_store_machines(s, &fps, &descs, &nm, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench publish: %s\n", err);
        hb_store_close(s);
        return HB_EXIT_IO;
    }
    hb_site_machine *sm = calloc(nm ? nm : 1, sizeof *sm);
    if (!sm) rc = HB_EXIT_IO;
    for (size_t i = 0; sm && i < nm && rc != HB_EXIT_IO; i++) {
        if (machine && strcmp(machine, fps[i])) continue;
        if (!hb_site_run_id_ok(fps[i])) { /* it names a folder of the site: a plain name only */
            fprintf(stderr, "hybench publish: machine fingerprint %.40s is not a plain file name; skipped\n", fps[i]);
            continue;
        }
        hb_series x;
        hb_series_ci ci;
        hb_status hs = hb_store_series(s, fps[i], o.metric, (size_t)last, &x, err, sizeof err);
        if (hs == HB_EINVAL) { fprintf(stderr, "hybench publish: %s\n", err); continue; }
        if (hs) { fprintf(stderr, "hybench publish: %s\n", err); rc = HB_EXIT_IO; break; }
        if (hb_store_series_ci(s, fps[i], o.metric, &x, &ci, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench publish: %s\n", err);
            hb_series_free(&x);
            rc = HB_EXIT_IO;
            break;
        }
        json_t *meta = NULL, *backends = NULL;
        hb_store_run_records(s, x.runs[x.nruns - 1].run_id, &meta, &backends, err, sizeof err);
        char mname[768];
        hb_site_machine_name(meta, backends, x.runs[x.nruns - 1].host, mname, sizeof mname);
        json_decref(meta);
        json_decref(backends);
        hb_trend_change *chg = NULL;
        size_t n = 0;
        if (hb_trend_analyze(&x, &o.cp, &chg, &n) != HB_OK) { fprintf(stderr, "hybench publish: out of memory\n"); rc = HB_EXIT_IO; }
        else {
            int r = hb_site_write_machine(&o, &x, &ci, chg, n, fps[i], mname, descs[i], &sm[ns], err, sizeof err);
            if (r) { fprintf(stderr, "hybench publish: %s\n", err); rc = r; }
            else {
                printf("hybench publish: machine %s: %zu nights, %zu cases, %zu steps and %zu drifts -> %s/m/%s/index.html\n",
                       fps[i], sm[ns].nights, sm[ns].ncases, sm[ns].steps, sm[ns].drifts, o.out, fps[i]);
                ns++;
            }
        }
        free(chg);
        hb_series_ci_free(&ci);
        hb_series_free(&x);
    }
    for (size_t i = 0; i < nm; i++) { free(fps[i]); free(descs[i]); }
    free(fps);
    free(descs);
    hb_store_close(s);
    if (!rc && !ns) {
        fprintf(stderr, "hybench publish: no runs%s%s in %s (import some: hybench history import RESULTS)\n",
                machine ? " of machine " : "", machine ? machine : "", name);
        rc = HB_EXIT_USAGE;
    }
    if (!rc) {
        rc = hb_site_write_index(&o, sm, ns, name, err, sizeof err);
        if (rc) fprintf(stderr, "hybench publish: %s\n", err);
        else printf("hybench publish: %zu machine%s -> %s/index.html\n", ns, ns == 1 ? "" : "s", o.out);
    }
    free(sm);
    return rc;
}
