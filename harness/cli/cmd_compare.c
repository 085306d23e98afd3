/* cmd_compare.c - `hybench compare`: options and help, the two runs loaded (or the baseline of the
 * current run's machine), the comparison (analysis/compare.c) written in the asked formats, and the
 * gate's exit status. */
#include "analysis/baseline.h"
#include "analysis/compare.h"
#include "cli/commands.h"
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* the command                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void compare_usage(FILE *f)
{
    fputs("usage: hybench compare [options] BASELINE CURRENT\n"
          "       hybench compare [options] --baseline-dir DIR CURRENT\n"
          "Decide whether CURRENT (a results .jsonl) is slower than BASELINE, case by case.\n"
          "Exit status: 0 pass, 1 regression or a case that became wrong/crashed/lost/missing,\n"
          "             2 usage or unreadable input, 3 incomparable: another machine (fingerprint; the\n"
          "             host name does not count) or schema (--cross-machine compares anyway), or a file\n"
          "             without case records, without a meta record or of a newer schema than this\n"
          "             hybench knows (never compared), 11 inconclusive: no case fails, but some are\n"
          "             undecided or have too few samples (named, with the smallest detectable change).\n"
          "  --baseline-dir DIR   use the baseline of CURRENT's machine in DIR (DIR/<fingerprint>.jsonl,\n"
          "                       or a former DIR/<host>.jsonl: hybench baseline set); BASELINE may also\n"
          "                       be such a directory\n"
          "  --metric total|compute   samples to compare (default total: end-to-end time per call)\n"
          "  --threshold PCT      minimum slowdown that counts (default 5%); repeat SCOPE=PCT for some cases:\n"
          "                       a backend type or instance, an op, or BACKEND/OP, e.g. --threshold 5%\n"
          "                       --threshold cuda=3% --threshold dequantize=8% (the most specific wins)\n"
          "  --alpha Q            false discovery rate, Benjamini-Hochberg (default 0.05)\n"
          "  --confidence C       bootstrap CI level (default 0.95)\n"
          "  --bootstrap N        bootstrap resamples (default 2000)\n"
          "  --seed S             bootstrap seed (default fixed; results are deterministic)\n"
          "  --rule ci|point      ci (default): the CI must lie beyond 1+threshold; point: the ratio\n"
          "  --min-delta SECONDS  never flag a change smaller than this absolute time (default 0)\n"
          "  --min-samples N      fewer samples on a side: not compared (default 3)\n"
          "  --allow-missing      cases absent from CURRENT do not fail the gate\n"
          "  --cross-machine      compare runs of different machines (fingerprints) or schemas, with a\n"
          "                       warning (--force: its former name)\n"
          "  --markdown FILE      Markdown report (default: stdout); --json FILE; --junit FILE\n"
          "                       ('-' is stdout)\n"
          "  --max-rows N         rows per Markdown table (default 50)\n"
          "  --noise-scale K      raise each backend's threshold to exp(K*s)-1, s = the robust spread\n"
          "                       of log(ratio) over that backend's cases (between-run noise; default\n"
          "                       0 = off; 3 to 5 for a shared machine). Reported in every output.\n"
          "  --quiet              no Markdown on stdout when no --markdown is given\n", f);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static FILE *open_out(const char *path)
{
    if (!strcmp(path, "-")) return stdout;
    return fopen(path, "w");
}

static int close_out(FILE *f)
{
    if (f == stdout) return fflush(f);
    return fclose(f);
}

int hb_cmd_compare(int argc, char **argv)
{
    hb_cmp_options o;
    hb_cmp_options_default(&o);
    const char *pos[2] = { NULL, NULL };
    int npos = 0, quiet = 0;
    const char *bdir = NULL, *md = NULL, *js = NULL, *ju = NULL;
    char err[512];
    enum { O_BDIR = 256, O_METRIC, O_THRESH, O_ALPHA, O_CONF, O_BOOT, O_SEED, O_MINDELTA, O_MINSAMP,
           O_MAXROWS, O_NOISE, O_RULE, O_MD, O_JSON, O_JUNIT, O_ALLOWMISS, O_FORCE, O_CROSS };
    static const struct option lo[] = {
        {"baseline-dir", required_argument, NULL, O_BDIR}, {"metric", required_argument, NULL, O_METRIC},
        {"threshold", required_argument, NULL, O_THRESH}, {"alpha", required_argument, NULL, O_ALPHA},
        {"confidence", required_argument, NULL, O_CONF}, {"bootstrap", required_argument, NULL, O_BOOT},
        {"seed", required_argument, NULL, O_SEED}, {"min-delta", required_argument, NULL, O_MINDELTA},
        {"min-samples", required_argument, NULL, O_MINSAMP}, {"max-rows", required_argument, NULL, O_MAXROWS},
        {"noise-scale", required_argument, NULL, O_NOISE}, {"rule", required_argument, NULL, O_RULE},
        {"markdown", required_argument, NULL, O_MD}, {"json", required_argument, NULL, O_JSON},
        {"junit", required_argument, NULL, O_JUNIT}, {"allow-missing", no_argument, NULL, O_ALLOWMISS},
        {"force", no_argument, NULL, O_FORCE}, {"cross-machine", no_argument, NULL, O_CROSS},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int ch, li = -1;
    optind = 0; /* GNU: full re-initialisation; options may come before or after the files */
    while ((ch = getopt_long(argc, argv, "qh", lo, &li)) != -1) {
        const char *v = optarg;
        char *end = NULL;
        int numchk = 0;
        switch (ch) {
        case 'h': compare_usage(stdout); return HB_EXIT_OK;
        case 'q': quiet = 1; break;
        case O_BDIR: bdir = v; break;
        case O_METRIC:
            if (strcmp(v, "total") && strcmp(v, "compute")) {
                fprintf(stderr, "hybench compare: --metric must be total or compute\n");
                return HB_EXIT_USAGE;
            }
            o.metric = v;
            break;
        case O_THRESH:
            if (hb_cmp_parse_threshold(&o, v, err, sizeof err) != HB_OK) {
                fprintf(stderr, "hybench compare: %s\n", err);
                return HB_EXIT_USAGE;
            }
            break;
        case O_ALPHA: o.alpha = strtod(v, &end), numchk = 1; break;
        case O_CONF: o.confidence = strtod(v, &end), numchk = 1; break;
        case O_BOOT: o.resamples = (int)strtol(v, &end, 10), numchk = 1; break;
        case O_SEED: o.seed = strtoull(v, &end, 0), numchk = 1; break;
        case O_MINDELTA: o.min_delta = strtod(v, &end), numchk = 1; break;
        case O_MINSAMP: o.min_samples = (size_t)strtoul(v, &end, 10), numchk = 1; break;
        case O_MAXROWS: o.max_rows = (int)strtol(v, &end, 10), numchk = 1; break;
        case O_NOISE: o.noise_k = strtod(v, &end), numchk = 1; break;
        case O_RULE:
            if (!strcmp(v, "ci")) o.rule_point = 0;
            else if (!strcmp(v, "point")) o.rule_point = 1;
            else { fprintf(stderr, "hybench compare: --rule must be ci or point\n"); return HB_EXIT_USAGE; }
            break;
        case O_MD: md = v; break;
        case O_JSON: js = v; break;
        case O_JUNIT: ju = v; break;
        case O_ALLOWMISS: o.allow_missing = 1; break;
        case O_FORCE: case O_CROSS: o.cross_machine = 1; break;
        default: compare_usage(stderr); return HB_EXIT_USAGE;
        }
        if (numchk && (end == v || *end || v[0] == '-')) {
            fprintf(stderr, "hybench compare: --%s: not a valid non-negative number: %s\n", lo[li].name, v);
            return HB_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (npos == 2) { fprintf(stderr, "hybench compare: too many files\n"); return HB_EXIT_USAGE; }
        pos[npos++] = argv[i];
    }
    if (npos == 2 && is_dir(pos[0]) && !bdir) { bdir = pos[0]; pos[0] = pos[1]; npos = 1; }
    if (!((npos == 2 && !bdir) || (npos == 1 && bdir))) {
        compare_usage(stderr);
        return HB_EXIT_USAGE;
    }
    if (o.max_rows < 1) o.max_rows = 1;
    hb_run base, cur;
    /* Only the fields compare reads are kept (a large file takes memory for its samples of one
     * metric, not for every record whole). A file without a meta record, of a newer schema or without
     * case records is read and refused by name below (exit 3, whatever --force says); another machine
     * is reported as incomparable (exit 3; --force compares anyway). The current run must carry the
     * raw samples of every ok case: without them no verdict could fail the gate. */
    static const char *const keep[] = {"key", "backend", "op", "shape_str", "mode", "route", "dtype",
                                       "status", "reason", "samples", "pass_medians", "phases", NULL};
    hb_load_opts lo_cur = {HB_LOAD_STRICT | HB_LOAD_ANY_SCHEMA | HB_LOAD_NO_META | HB_LOAD_NEED_SAMPLES, o.metric, keep};
    hb_load_opts lo_base = {HB_LOAD_STRICT | HB_LOAD_ANY_SCHEMA | HB_LOAD_NO_META, o.metric, keep};
    const char *cur_path = pos[npos - 1];
    char bpath[4096], bjson[4096], err2[512];
    const char *base_path = pos[0];
    if (!bdir) {
        /* two independent files: parse them in parallel (jansson values are per-thread here;
         * seeding its hash function first makes that safe) */
        hb_status s1 = HB_OK, s2 = HB_OK;
        json_object_seed(0);
        #pragma omp parallel sections num_threads(2)
        {
            #pragma omp section
            s1 = hb_run_load_opts(cur_path, &lo_cur, &cur, err, sizeof err);
            #pragma omp section
            s2 = hb_run_load_opts(base_path, &lo_base, &base, err2, sizeof err2);
        }
        if (s1 != HB_OK || s2 != HB_OK) {
            if (s1 != HB_OK) fprintf(stderr, "hybench compare: %s\n", err);
            if (s2 != HB_OK) fprintf(stderr, "hybench compare: %s\n", err2);
            hb_run_free(&cur);
            hb_run_free(&base);
            return HB_EXIT_USAGE;
        }
    } else if (hb_run_load_opts(cur_path, &lo_cur, &cur, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench compare: %s\n", err);
        return HB_EXIT_USAGE;
    }
    /* nothing is compared silently: each file has a meta record, a schema this hybench knows and cases */
    int refused = 0;
    if (!bdir && hb_run_check_comparable(&base, base_path, err2, sizeof err2) != HB_OK) {
        fprintf(stderr, "hybench compare: incomparable: %s\n", err2);
        refused = 1;
    }
    if (hb_run_check_comparable(&cur, cur_path, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench compare: incomparable: %s\n", err);
        refused = 1;
    }
    if (refused) {
        if (!bdir) hb_run_free(&base);
        hb_run_free(&cur);
        return HB_EXIT_INCOMPARABLE;
    }
    if (bdir) {
        char fp[17];
        if (hb_baseline_find(bdir, &cur, bpath, bjson, sizeof bpath, fp, NULL)) {
            fprintf(stderr, "hybench compare: no baseline for machine %s (the fingerprint of %s) in %s: no %s (set one "
                            "with: hybench baseline set RESULTS --dir %s)\n", fp, cur_path, bdir, bpath, bdir);
            hb_run_free(&cur);
            return HB_EXIT_USAGE;
        }
        base_path = bpath;
        if (hb_run_load_opts(base_path, &lo_base, &base, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench compare: no usable baseline for machine %s: %s (set one with: "
                            "hybench baseline set RESULTS --dir %s)\n", fp, err, bdir);
            hb_run_free(&cur);
            return HB_EXIT_USAGE;
        }
        if (hb_run_check_comparable(&base, base_path, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench compare: incomparable: the baseline of machine %s: %s\n", fp, err);
            hb_run_free(&base);
            hb_run_free(&cur);
            return HB_EXIT_INCOMPARABLE;
        }
    }
    int rc = HB_EXIT_OK;
    char why[3072], note[512];
    if (hb_cmp_comparable(&base, &cur, why, sizeof why, note, sizeof note) != HB_CMP_COMPARABLE) {
        if (!o.cross_machine) {
            fprintf(stderr, "hybench compare: incomparable: %s (use --cross-machine to compare anyway)\n", why);
            hb_run_free(&base);
            hb_run_free(&cur);
            return HB_EXIT_INCOMPARABLE;
        }
        fprintf(stderr, "hybench compare: warning: %s (compared anyway: --cross-machine)\n", why);
    } else if (note[0]) fprintf(stderr, "hybench compare: note: %s\n", note);
    if (!cur.end) fprintf(stderr, "hybench compare: warning: %s has no end record (the run was cut short)\n", cur_path);
    hb_cmp_result res;
    hb_status st = hb_compare_runs(&base, &cur, &o, &res, err, sizeof err);
    if (st != HB_OK) {
        fprintf(stderr, "hybench compare: %s\n", err);
        hb_run_free(&base);
        hb_run_free(&cur);
        return HB_EXIT_USAGE;
    }
    int io_fail = 0;
    if (md || !quiet) {
        FILE *f = md ? open_out(md) : stdout;
        if (!f || hb_cmp_write_markdown(f, &res, &base, &cur, &o) != HB_OK || close_out(f)) {
            fprintf(stderr, "hybench compare: cannot write %s\n", md ? md : "stdout");
            io_fail = 1;
        }
    }
    if (js) {
        json_t *j = hb_cmp_to_json(&res, &base, &cur, &o);
        int bad = !j;
        if (j) {
            if (!strcmp(js, "-")) bad = json_dumpf(j, stdout, JSON_INDENT(1)) != 0 || fputc('\n', stdout) == EOF;
            else bad = json_dump_file(j, js, JSON_INDENT(1)) != 0;
        }
        json_decref(j);
        if (bad) { fprintf(stderr, "hybench compare: cannot write %s\n", js); io_fail = 1; }
    }
    if (ju) {
        FILE *f = open_out(ju);
        if (!f || hb_cmp_write_junit(f, &res, &base, &cur, &o) != HB_OK || close_out(f)) {
            fprintf(stderr, "hybench compare: cannot write %s\n", ju);
            io_fail = 1;
        }
    }
    fprintf(stderr, "hybench compare: %s: %zu matched, %zu regressions, %zu improvements, %d gate failures, %zu undecided "
                    "(%.2f s)\n", res.outcome == HB_CMP_FAIL ? "FAIL" : res.outcome == HB_CMP_INCONCLUSIVE ? "INCONCLUSIVE" : "pass",
            res.matched, res.count[HB_CMP_REGRESSION], res.count[HB_CMP_IMPROVEMENT], res.fails, res.undecided, res.elapsed_s);
    rc = res.outcome == HB_CMP_FAIL ? HB_EXIT_REGRESSION : res.outcome == HB_CMP_INCONCLUSIVE ? HB_EXIT_INCONCLUSIVE : HB_EXIT_OK;
    if (io_fail && rc != HB_EXIT_REGRESSION) rc = HB_EXIT_IO;
    hb_cmp_result_free(&res);
    hb_run_free(&base);
    hb_run_free(&cur);
    return rc;
}

