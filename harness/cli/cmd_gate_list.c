/*
 * cmd_gate_list.c - `hybench gate-list`: the merge gate's case list (docs/compare.md "The gate list").
 * The candidates (the workloads' cases, quick and not) as every available backend would run them, with
 * the implementation each names before a run (measure/kernel_paths.h), through the rule that keeps the
 * cheapest case of every kernel path (workload/gatelist.h), written as a workload file. Nothing is
 * measured: on the 2-vCPU VM it takes a few seconds, most of them opening the OpenCL device.
 */
#include "cli/commands.h"
#include "measure/kernel_paths.h"
#include "workload/gatelist.h"
#include "workload/workload.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The instruction gate's cut (--instructions): a path whose cheapest case costs more than this many
 * FLOPs + bytes per call is left out. Under callgrind a case runs its verification, warm-up and
 * --instr-calls calls 20-100x slower than natively, and FLOPs + bytes predict that time only roughly:
 * with a cut of 1.1e8 (2026-11-28, this VM) one build's round took 11 minutes, 547 s of it in the 17
 * cases above 1e7 (gelu, silu and sigmoid at 4 Mi elements 55-74 s each, bmm 16x128^3 51-54 s,
 * conv2d 1x1 64x56x56 18-21 s); the 91 cases below took 46 s. So 1e7: matmul 64^3 (5.7e5) and the
 * sgemv of 256x2048 (3.2e6) are in, the streaming-store (+nt) paths, which begin at a working set of
 * 32 MiB, are left to the time gate. */
#define GATE_INSTR_MAX_COST 1e7
/* The instruction gate's floor (--instructions): per path the cheapest case of at least this cost (else
 * the costliest). In an A/A gate of the list without a floor (2026-11-28, this VM) the count of one
 * process's timed call differed from another's by 2-85 instructions whatever the case's size (rmsnorm
 * 1x2048 on cpu: 4930-5017 per call in f32 mode, 11246-11333 in convert; a spread of 1.8%, over the 1%
 * threshold: the gate was inconclusive); at 1e6 a call runs about 1e5 instructions or more, so such a
 * shift is under 0.1%. */
#define GATE_INSTR_MIN_COST 1e6
/* cpu-ref is not timed above 0.05 GFLOP per call in a --quick run (cmd_run.c), the gate's runs */
#define GATE_REF_MAX_GFLOP 0.05

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hybench gate-list [options] [WORKLOAD.ini ...]\n"
        "  The merge gate's case list: from the candidate cases (the workloads' cases, quick and not; default:\n"
        "  the files `hybench run` reads), as every available backend would run them, keeps per kernel path\n"
        "  (op, backend instance, dtype, mode, implementation: the name the backend gives before a run) and\n"
        "  per route path (backend instance, mode, route) the cheapest case (FLOPs + bytes of one call),\n"
        "  and writes them as a workload file. Nothing is measured. `hybench ab` and tools/gate.sh run this list by default (docs/compare.md).\n"
        "options:\n"
        "  --out FILE         write the list there (default: stdout)\n"
        "  --keys FILE        and its cases' keys per backend there (`run --cases-from FILE`): a section\n"
        "                     runs on every backend; the keys keep each backend to its own paths' cases\n"
        "  --instructions     the instruction gate's list: backends cpu-ref,cpu unless --backend, per path the\n"
        "                     cheapest case of cost at least %.3g (else the costliest: the smallest calls' counts\n"
        "                     vary by tens of instructions), and only paths whose case costs at most %.3g\n"
        "                     (callgrind runs 20-100x slower)\n"
        "  --min-cost X       per path the cheapest case of at least X FLOPs + bytes (else the costliest)\n"
        "  --max-cost X       leave out paths whose kept case costs more than X FLOPs + bytes\n"
        "  --paths            print every path instead of the list (TSV: op backend dtype mode route impl\n"
        "                     candidates cost kept|over-cut shape; a kernel path's route and a route\n"
        "                     path's op, dtype and impl are \"*\", its op \"route\")\n"
        "  --quick            candidates: the quick subset only, at its routes (pageable, mapped), as `run --quick`\n"
        "  --backend LIST  --op LIST  --dtype LIST  --mode LIST  --route LIST   as `hybench run`\n"
        "exit status: 0, 2 usage, 4 bad workload, 6 no backend available, 7 the list cannot be written\n",
        GATE_INSTR_MIN_COST, GATE_INSTR_MAX_COST);
}

static unsigned mask_of(const char *arg, int (*parse)(const char *), const char *opt, int *bad)
{
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int v = parse(t);
        if (v < 0) { fprintf(stderr, "hybench gate-list: unknown value \"%s\" (option --%s)\n", t, opt); *bad = 1; return 0; }
        m |= 1u << v;
    }
    if (!m) { fprintf(stderr, "hybench gate-list: --%s wants a comma list\n", opt); *bad = 1; }
    return m;
}

int hb_cmd_gate_list(int argc, char **argv)
{
    hb_options o = {.ref_max_gflop = GATE_REF_MAX_GFLOP};
    const char *out = NULL, *keys = NULL;
    int instr = 0, paths_only = 0, bad = 0, ch;
    double max_cost = 0, min_cost = 0;
    enum { O_OUT = 256, O_KEYS, O_INSTR, O_MAXC, O_MINC, O_PATHS, O_QUICK, O_BACKEND, O_OP, O_DTYPE, O_MODE, O_ROUTE, O_HELP };
    static const struct option lo[] = {
        {"out", 1, 0, O_OUT}, {"keys", 1, 0, O_KEYS}, {"instructions", 0, 0, O_INSTR}, {"max-cost", 1, 0, O_MAXC}, {"min-cost", 1, 0, O_MINC}, {"paths", 0, 0, O_PATHS}, {"quick", 0, 0, O_QUICK},
        {"backend", 1, 0, O_BACKEND}, {"op", 1, 0, O_OP}, {"dtype", 1, 0, O_DTYPE}, {"mode", 1, 0, O_MODE},
        {"route", 1, 0, O_ROUTE}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    optind = 1;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_OUT: out = optarg; break;
        case O_KEYS: keys = optarg; break;
        case O_INSTR: instr = 1; break;
        case O_MAXC: max_cost = strtod(optarg, &end); if (*end || !(max_cost > 0)) { fprintf(stderr, "hybench gate-list: --max-cost wants a number > 0\n"); bad = 1; } break;
        case O_MINC: min_cost = strtod(optarg, &end); if (*end || !(min_cost > 0)) { fprintf(stderr, "hybench gate-list: --min-cost wants a number > 0\n"); bad = 1; } break;
        case O_PATHS: paths_only = 1; break;
        case O_QUICK: o.quick = 1; o.quick_routes = (1u << HB_ROUTE_PAGEABLE) | (1u << HB_ROUTE_MAPPED); break;
        case O_BACKEND: o.backends = optarg; break;
        case O_OP:
            o.ops = optarg;
            for (char *p = strdup(optarg), *save = NULL, *t = strtok_r(p, ",", &save), *keep = p; t || (free(keep), 0); t = strtok_r(NULL, ",", &save)) {
                int fam = 0;
                for (int f = 0; f < HB_FAM_COUNT; f++) fam |= !strcmp(t, hb_family_name(f));
                if (hb_op_parse(t) < 0 && !fam) { fprintf(stderr, "hybench gate-list: unknown op \"%s\" (option --op)\n", t); bad = 1; }
            }
            break;
        case O_DTYPE: o.dtype_mask = mask_of(optarg, hb_dtype_parse, "dtype", &bad); break;
        case O_MODE: o.mode_mask = mask_of(optarg, hb_mode_parse, "mode", &bad); break;
        case O_ROUTE: o.route_mask = mask_of(optarg, hb_route_parse, "route", &bad); break;
        case O_HELP: case 'h': usage(stdout); return HB_EXIT_OK;
        default: usage(stderr); return HB_EXIT_USAGE;
        }
    }
    if (bad) return HB_EXIT_USAGE;
    if (instr && !o.backends) o.backends = "cpu-ref,cpu";
    if (instr && max_cost == 0) max_cost = GATE_INSTR_MAX_COST;
    if (instr && min_cost == 0) min_cost = GATE_INSTR_MIN_COST;
    const char *wl[64];
    int nwl = 0;
    if (argc - optind > 64) { fprintf(stderr, "hybench gate-list: at most 64 workload files\n"); return HB_EXIT_USAGE; }
    for (int i = optind; i < argc; i++) wl[nwl++] = argv[i];
    if (!nwl) for (int i = 0; hb_default_workloads[i]; i++) wl[nwl++] = hb_default_workloads[i];
    hb_item_list items = {0};
    hb_case_list cases = {0};
    hb_gate_cand *cand = NULL;
    hb_gate_path *paths = NULL;
    size_t ncand = 0, npaths = 0;
    int ninst = 0, rc = HB_EXIT_OK;
    char err[1024];
    for (int i = 0; i < nwl; i++)
        if (hb_workload_load(wl[i], &items, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench gate-list: %s\n", err);
            rc = HB_EXIT_BAD_WORKLOAD;
            goto done;
        }
    cases.items = &items;
    if (hb_cases_expand(&items, &o, &cases)) { fprintf(stderr, "hybench gate-list: out of memory\n"); rc = HB_EXIT_IO; goto done; }
    hb_status st = hb_kernel_paths(&cases, &o, &cand, &ncand, &ninst, err, sizeof err);
    if (st != HB_OK) { fprintf(stderr, "hybench gate-list: %s\n", err); rc = st == HB_ENOMEM ? HB_EXIT_IO : HB_EXIT_NO_BACKEND; goto done; }
    if (hb_gate_select(cand, ncand, min_cost, max_cost, &paths, &npaths) != HB_OK) { fprintf(stderr, "hybench gate-list: out of memory\n"); rc = HB_EXIT_IO; goto done; }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) { fprintf(stderr, "hybench gate-list: cannot write %s\n", out); rc = HB_EXIT_IO; goto done; }
    size_t kept = 0;
    for (size_t k = 0; k < npaths; k++) kept += !paths[k].over_cut;
    long sections = 0;
    if (paths_only) {
        for (size_t k = 0; k < npaths; k++) {
            const hb_gate_cand *w = &cand[paths[k].cand];
            char shape[256];
            const int rt = paths[k].kind == HB_GATE_ROUTE;
            fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%zu\t%.6g\t%s\t%s\n", rt ? "route" : hb_op_get(w->c.op)->name, w->backend,
                    rt ? "*" : hb_dtype_name(w->c.dtype), hb_mode_name(w->c.mode), rt ? hb_route_name(w->c.route) : "*",
                    rt ? "*" : w->impl, paths[k].ncands, paths[k].cost,
                    paths[k].over_cut ? "over-cut" : "kept", hb_shape_format(w->c.op, &w->c.shape, shape, sizeof shape));
        }
    } else {
        char host[64] = "host", hdr[2048], files[1024] = "";
        gethostname(host, sizeof host);
        host[sizeof host - 1] = 0;
        for (int i = 0; i < nwl; i++) snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s", i ? " " : "", wl[i]);
        char cut[160] = "";
        if (min_cost > 0) snprintf(cut, sizeof cut, "; the cheapest of cost at least %.3g, else the costliest", min_cost);
        if (max_cost > 0)
            snprintf(cut + strlen(cut), sizeof cut - strlen(cut), "; %zu whose case costs more than %.3g left out (the cut)",
                     npaths - kept, max_cost);
        snprintf(hdr, sizeof hdr,
                 "The merge gate's case list, written by `hybench gate-list` (hybench %s) on %s: do not edit.\n"
                 "Rule (docs/compare.md \"The gate list\"): from the candidates (%s: %zu cases on %d backend instance(s),\n"
                 "%zu backend cases), per kernel path (op, backend, dtype, mode, implementation as the backend names\n"
                 "it before a run) and per route path (backend, mode, route) the case of least FLOPs + bytes\n"
                 "per call: %zu paths%s.",
                 HB_VERSION, host, files, cases.n, ninst, ncand, npaths, cut);
        sections = hb_gate_list_write(f, cand, paths, npaths, hdr);
    }
    if ((out && fclose(f)) || (!out && fflush(f)) || sections < 0) { fprintf(stderr, "hybench gate-list: cannot write %s\n", out ? out : "stdout"); rc = HB_EXIT_IO; goto done; }
    if (keys) {
        FILE *kf = fopen(keys, "w");
        long nk = kf ? hb_gate_keys_write(kf, cand, paths, npaths) : -1;
        if (!kf || fclose(kf) || nk < 0) { fprintf(stderr, "hybench gate-list: cannot write %s\n", keys); rc = HB_EXIT_IO; goto done; }
    }
    fprintf(stderr, "hybench gate-list: %zu candidate cases on %d instance(s): %zu paths, %zu kept (%zu over the cut), %ld cases in the list%s%s\n",
            ncand, ninst, npaths, kept, npaths - kept, sections, out ? " -> " : "", out ? out : "");
done:
    free(paths);
    free(cand);
    hb_case_list_free(&cases);
    hb_item_list_free(&items);
    return rc;
}
