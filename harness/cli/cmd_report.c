/* cmd_report.c - `hybench report`: options and help, template lookup, the pipeline of report/report.h
 * (load, analyze, plots, render, summary.json and routing.json), and the exit status. */
#include "cli/commands.h"
#include "cli/templates.h"
#include "report/report.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hybench report RESULTS.jsonl [MORE.jsonl ...] [options]\n"
            "Turn one or several results files into reports/<name>/: index.html (self-contained),\n"
            "report.md, summary.json (every computed answer), routing.json, and per plot the\n"
            "gnuplot script, its data, the SVG and the PNG.\n"
            "  --out DIR         output directory (default: reports/<name>)\n"
            "  --name NAME       report name (default: the run id of the first file)\n"
            "  --jobs N          gnuplot processes in parallel (default: online CPUs, at most 8)\n"
            "  --templates DIR   directory with style.gp and style.css (default: $HB_REPORT_TEMPLATES,\n"
            "                    else templates/ of the executable's source tree, else ./templates)\n"
            "  --svg-only        draw SVG only, no PNG (faster)\n"
            "  -q, --quiet       print nothing on success\n"
            "  -h, --help        this text\n"
            "Exit status: 0 report written; %d bad arguments or unreadable/malformed results;\n"
            "%d a file could not be written or a plot could not be drawn (the rest is still written).\n",
            HB_EXIT_USAGE, HB_EXIT_IO);
}

static int mkdir_p(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
    struct stat st;
    return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static hb_status write_json(const char *dir, const char *name, json_t *j, char *err, size_t errlen)
{
    char p[4200];
    if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p ||
        json_dump_file(j, p, JSON_INDENT(1)) != 0) {
        if (snprintf(err, errlen, "%s/%s: cannot write", dir, name) < 0) err[0] = 0;
        return HB_EDEVICE;
    }
    return HB_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int hb_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "out", required_argument, NULL, 'o' },
        { "name", required_argument, NULL, 'n' },
        { "jobs", required_argument, NULL, 'j' },
        { "templates", required_argument, NULL, 't' },
        { "svg-only", no_argument, NULL, 's' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *out = NULL, *name = NULL, *tpl = NULL;
    int jobs = 0, quiet = 0, svg_only = 0;
    optind = 0; /* glibc: full re-initialisation, so the command can run twice in one process */
    int ch;
    while ((ch = getopt_long(argc, argv, "o:n:j:t:sqh", opts, NULL)) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'n': name = optarg; break;
        case 'j': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 256) { fprintf(stderr, "hybench report: --jobs wants 1..256, got '%s'\n", optarg); return HB_EXIT_USAGE; }
            jobs = (int)v;
            break;
        }
        case 't': tpl = optarg; break;
        case 's': svg_only = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return HB_EXIT_OK;
        default: usage(stderr); return HB_EXIT_USAGE;
        }
    }
    /* GNU getopt_long moved the files (non-options) behind the options */
    char **files = argv + optind;
    int nfiles = argc - optind;
    if (nfiles == 0) {
        fprintf(stderr, "hybench report: no results file given\n");
        usage(stderr);
        return HB_EXIT_USAGE;
    }
    double t0 = now_s();
    hb_report rp;
    memset(&rp, 0, sizeof rp);
    rp.svg_only = svg_only;
    char err[1024] = "";
    int rc = HB_EXIT_OK;
    if (hb_find_templates(tpl, "style.gp", rp.tpl_dir, sizeof rp.tpl_dir) != 0) {
        fprintf(stderr, "hybench report: cannot find style.gp in %s (give --templates DIR or set HB_REPORT_TEMPLATES)\n",
                tpl ? tpl : "$HB_REPORT_TEMPLATES, <exe>/../templates, <exe>/../../templates or ./templates");
        return HB_EXIT_USAGE;
    }
    /* every file against the schema with the commands' rules first (file:line: field: reason) */
    for (int i = 0; i < nfiles; i++)
        if (hb_results_stream(files[i], HB_LOAD_STRICT, NULL, NULL, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench report: %s\n", err);
            hb_report_free(&rp);
            return HB_EXIT_USAGE;
        }
    hb_status st = hb_report_load(&rp, files, nfiles, err, sizeof err);
    if (st != HB_OK) {
        fprintf(stderr, "hybench report: %s\n", st == HB_ENOMEM ? "out of memory" : err);
        hb_report_free(&rp);
        return st == HB_ENOMEM ? HB_EXIT_IO : HB_EXIT_USAGE;
    }
    if (name) snprintf(rp.name, sizeof rp.name, "%s", name);
    else if (strcmp(rp.runs[0].run_id, "?")) snprintf(rp.name, sizeof rp.name, "%s", rp.runs[0].run_id);
    else {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", rp.runs[0].r.path);
        char *b = basename(tmp), *dot = strrchr(b, '.');
        if (dot && dot != b) *dot = 0;
        snprintf(rp.name, sizeof rp.name, "%s", b);
    }
    for (char *p = rp.name; *p; p++) if (*p == '/' || *p == ' ') *p = '_';
    if (out) snprintf(rp.outdir, sizeof rp.outdir, "%s", out);
    else snprintf(rp.outdir, sizeof rp.outdir, "reports/%s", rp.name);
    if (mkdir_p(rp.outdir) != 0) {
        fprintf(stderr, "hybench report: cannot create %s: %s\n", rp.outdir, strerror(errno));
        hb_report_free(&rp);
        return HB_EXIT_IO;
    }
    double tl = now_s();
    st = hb_report_analyze(&rp);
    if (st != HB_OK) {
        fprintf(stderr, "hybench report: analysis failed: %s\n", st == HB_ENOMEM ? "out of memory" : "cannot write plot files");
        hb_report_free(&rp);
        return HB_EXIT_IO;
    }
    double t1 = now_s();
    if (jobs <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n < 1 ? 1 : (n > 8 ? 8 : (int)n);
    }
    st = hb_report_plots_run(&rp, jobs);
    if (st != HB_OK) {
        fprintf(stderr, "hybench report: gnuplot could not run (%s); the pages are written without plots\n",
                st == HB_ENOMEM ? "out of memory" : "is gnuplot installed? apt-get install gnuplot-nox");
        rc = HB_EXIT_IO;
    }
    int failed = 0;
    json_t *plots = json_array();
    for (int i = 0; i < rp.nplots; i++) {
        hb_plot *p = &rp.plots[i];
        if (!p->ok) {
            failed++;
            if (st == HB_OK) fprintf(stderr, "hybench report: plot %s not drawn: %s\n", p->id, p->err);
        }
        json_array_append_new(plots, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b}", "id", p->id, "title", p->title, "section", p->section,
                                               "svg", hb_report_fmt("%s.svg", p->id), "png", rp.svg_only ? "" : hb_report_fmt("%s.png", p->id),
                                               "script", hb_report_fmt("%s.gp", p->id), "data", hb_report_fmt("%s.dat", p->id), "ok", p->ok));
    }
    json_object_set_new(rp.summary, "plots", plots);
    if (failed) rc = HB_EXIT_IO;
    double t2 = now_s();
    st = hb_report_render(&rp, err, sizeof err);
    if (st == HB_OK) st = write_json(rp.outdir, "summary.json", rp.summary, err, sizeof err);
    if (st == HB_OK) st = write_json(rp.outdir, "routing.json", rp.routing ? rp.routing : json_object(), err, sizeof err);
    if (st != HB_OK) {
        fprintf(stderr, "hybench report: %s\n", err);
        rc = HB_EXIT_IO;
    }
    double t3 = now_s();
    if (!quiet)
        printf("hybench report: %s/index.html (%zu cases from %d file%s, %d plots%s; load %.2f s, analysis %.2f s, gnuplot %.2f s, pages %.2f s)\n",
               rp.outdir, rp.nrows, rp.nruns, rp.nruns > 1 ? "s" : "", rp.nplots, failed ? ", some not drawn" : "",
               tl - t0, t1 - tl, t2 - t1, t3 - t2);
    hb_report_free(&rp);
    return rc;
}
