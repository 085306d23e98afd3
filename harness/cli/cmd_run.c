/*
 * cmd_run.c - `hybench run` and `hybench verify`: the options and their help, the workloads loaded
 * and expanded into cases (or listed with --dry-run), the results file opened with its meta record,
 * the run measured (measure/runner.c), and the exit status from what it found.
 */
#include "cli/commands.h"
#include "measure/measure.h"
#include "measure/registry.h"
#include "workload/benchdnn.h"
#include "workload/workload.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f, const char *cmd)
{
    fprintf(f,
        "usage: hybench %s [options] [WORKLOAD.ini ...]\n"
        "  Runs every case of the workloads (default: workloads/default.ini workloads/tinyllama.ini\n"
        "  workloads/resnet50.ini) on every available backend, in modes convert and f32 (and resident on\n"
        "  device backends), verifies each result against cpu-ref and appends one record per case to\n"
        "  results/<run-id>.jsonl (docs/results-schema.md).\n"
        "options:\n"
        "  --backend LIST     backends or instances (cpu-ref,cpu,opencl,opencl:0:0,cuda,cuda:0)\n"
        "  --op LIST          ops or families (add,matmul,conv2d,pooling,attention,...)\n"
        "  --mode LIST        convert,f32,resident,convert-device   --route LIST  pageable,pinned,mapped\n"
        "  --dtype LIST       f32,tf32,f16,bf16 (unsupported ones are recorded as skipped)\n"
        "  --filter TEXT      only cases whose name or key contains TEXT\n"
        "  --quick            the quick subset of the workloads (budget 0.2 s, routes pageable+mapped,\n"
        "                     cpu-ref timed up to 0.25 GFLOP, unless given explicitly)\n"
        "  --batch KIND:FILE  a oneDNN benchdnn problem list (conv:, pool:, matmul:); repeatable\n"
        "  --budget SECONDS   sampling budget per case (default 0.5; verify: unused)\n"
        "  --ci-target FRAC   stop sampling when the median's 95%% CI half-width is within FRAC (default 0.02)\n"
        "  --min-samples N    (default 5)   --max-samples N (default 300), per window\n"
        "  --repetitions R    sample each case in R windows (budget split), keep the window with the\n"
        "                     lowest median (default 1; 3 with --quick --passes 1)\n"
        "  --passes P         run the whole case list P times, each pass in new processes (budget\n"
        "                     split); per case the worst status wins, else the pass with the lowest\n"
        "                     median is kept and every pass's median recorded (default 1; 3 with\n"
        "                     --quick). Between-process noise (thread placement, host state on a\n"
        "                     shared VM) is what makes two runs differ; passes sample it\n"
        "  --cold             evict the caches (host LLC or device L2) right before every timed compute;\n"
        "                     default (hot): untimed runs of the op until its time settles first\n"
        "  --ref-max-gflop G  do not time cpu-ref above G GFLOP per call (default 2)\n"
        "  --case-timeout S   kill a case after S seconds: timed_out (default 600)\n"
        "  --seed N           input seed (default 42)\n"
        "  --out FILE         results file (default results/<run-id>.jsonl)\n"
        "  --dry-run          print the parsed cases with shapes and FLOP counts, run nothing\n"
        "exit status: 0 ok, 2 usage, 4 bad workload, 5 a case failed verification, 6 unknown/unavailable\n"
        "backend, 7 cannot write results, 8 cases failed/crashed/timed out, 130 interrupted (SIGINT/SIGTERM:\n"
        "what was measured is written)\n", cmd);
}

static unsigned parse_mask(const char *arg, int (*parse)(const char *), const char *what, int *bad)
{
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int v = parse(tok);
        if (v < 0) { fprintf(stderr, "hybench: unknown %s \"%s\" (option --%s)\n", what, tok, what); *bad = 1; return 0; }
        m |= 1u << v;
    }
    return m;
}

static const char *const default_workloads[] = {"workloads/default.ini", "workloads/tinyllama.ini", "workloads/resnet50.ini"};

static int run_common(int argc, char **argv, int verify)
{
    hb_options o = {.repetitions = 1, .passes = 1, .budget_s = 0.5, .ci_target = 0.02, .min_samples = 5, .max_samples = 300, .ref_max_gflop = 2,
                    .case_timeout_s = 600, .seed = 42, .verify_only = verify};
    const char *cmd = verify ? "verify" : "run";
    const char *batches[32];
    int nbatches = 0, bad = 0;
    enum { O_BACKEND = 256, O_OP, O_MODE, O_ROUTE, O_DTYPE, O_FILTER, O_QUICK, O_BATCH, O_BUDGET, O_CI, O_MINS, O_MAXS,
           O_COLD, O_REFMAX, O_TMO, O_REPS, O_PASSES, O_SEED, O_OUT, O_DRY, O_HELP };
    static const struct option lo[] = {
        {"backend", 1, 0, O_BACKEND}, {"op", 1, 0, O_OP}, {"mode", 1, 0, O_MODE}, {"route", 1, 0, O_ROUTE},
        {"dtype", 1, 0, O_DTYPE}, {"filter", 1, 0, O_FILTER}, {"quick", 0, 0, O_QUICK}, {"batch", 1, 0, O_BATCH},
        {"budget", 1, 0, O_BUDGET}, {"ci-target", 1, 0, O_CI}, {"min-samples", 1, 0, O_MINS},
        {"max-samples", 1, 0, O_MAXS}, {"cold", 0, 0, O_COLD}, {"ref-max-gflop", 1, 0, O_REFMAX},
        {"case-timeout", 1, 0, O_TMO}, {"repetitions", 1, 0, O_REPS}, {"passes", 1, 0, O_PASSES}, {"seed", 1, 0, O_SEED}, {"out", 1, 0, O_OUT}, {"dry-run", 0, 0, O_DRY},
        {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    /* join argv for the metadata */
    size_t jl = 16;
    for (int i = 0; i < argc; i++) jl += strlen(argv[i]) + 1;
    o.argv_joined = calloc(1, jl + 16);
    strcat(o.argv_joined, "hybench");
    o.argc = argc;
    o.argv = argv;
    for (int i = 0; i < argc; i++) { strcat(o.argv_joined, " "); strcat(o.argv_joined, argv[i]); }
    optind = 1;
    int ch;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_BACKEND: o.backends = optarg; break;
        case O_OP:
            o.ops = optarg;
            for (char *p = strdup(optarg), *tok = strtok(p, ","), *keep = p; tok || (free(keep), 0); tok = strtok(NULL, ",")) {
                int fam = 0;
                for (int f = 0; f < HB_FAM_COUNT; f++) fam |= !strcmp(tok, hb_family_name(f));
                if (hb_op_parse(tok) < 0 && !fam) { fprintf(stderr, "hybench %s: unknown op \"%s\" (option --op)\n", cmd, tok); bad = 1; }
            }
            break;
        case O_MODE: o.mode_mask = parse_mask(optarg, hb_mode_parse, "mode", &bad); break;
        case O_ROUTE: o.route_mask = parse_mask(optarg, hb_route_parse, "route", &bad); break;
        case O_DTYPE: o.dtype_mask = parse_mask(optarg, hb_dtype_parse, "dtype", &bad); break;
        case O_FILTER: o.filter = optarg; break;
        case O_QUICK: o.quick = 1; break;
        case O_BATCH: if (nbatches < 32) batches[nbatches++] = optarg; break;
        case O_BUDGET: o.budget_s = strtod(optarg, &end); if (*end || o.budget_s <= 0 || o.budget_s > 3600) { fprintf(stderr, "hybench: --budget wants seconds in (0, 3600]\n"); bad = 1; } break;
        case O_CI: o.ci_target = strtod(optarg, &end); if (*end || o.ci_target <= 0 || o.ci_target >= 1) { fprintf(stderr, "hybench: --ci-target wants a fraction in (0, 1)\n"); bad = 1; } break;
        case O_MINS: o.min_samples = (int)strtol(optarg, &end, 10); if (*end || o.min_samples < 1 || o.min_samples > 100000) { fprintf(stderr, "hybench: bad --min-samples\n"); bad = 1; } break;
        case O_MAXS: o.max_samples = (int)strtol(optarg, &end, 10); if (*end || o.max_samples < 1 || o.max_samples > 100000) { fprintf(stderr, "hybench: bad --max-samples\n"); bad = 1; } break;
        case O_COLD: o.cold = 1; break;
        case O_REFMAX: o.ref_max_gflop = strtod(optarg, &end); if (*end || o.ref_max_gflop < 0) { fprintf(stderr, "hybench: bad --ref-max-gflop\n"); bad = 1; } break;
        case O_TMO: o.case_timeout_s = strtod(optarg, &end); if (*end || o.case_timeout_s <= 0) { fprintf(stderr, "hybench: bad --case-timeout\n"); bad = 1; } break;
        case O_REPS: o.repetitions = (int)strtol(optarg, &end, 10); if (*end || o.repetitions < 1 || o.repetitions > HB_MAX_REPETITIONS) { fprintf(stderr, "hybench: --repetitions wants 1..%d\n", HB_MAX_REPETITIONS); bad = 1; } break;
        case O_PASSES: o.passes = (int)strtol(optarg, &end, 10); if (*end || o.passes < 1 || o.passes > HB_MAX_PASSES) { fprintf(stderr, "hybench: --passes wants 1..%d\n", HB_MAX_PASSES); bad = 1; } break;
        case O_SEED: o.seed = strtoull(optarg, &end, 10); if (*end) { fprintf(stderr, "hybench: bad --seed\n"); bad = 1; } break;
        case O_OUT: o.out = optarg; break;
        case O_DRY: o.dry_run = 1; break;
        case O_HELP: case 'h': usage(stdout, cmd); return HB_EXIT_OK;
        default: usage(stderr, cmd); return HB_EXIT_USAGE;
        }
    }
    if (o.quick) {
        /* --quick: a smaller per-case budget, cpu-ref timed only on small cases, and the pinned route
         * left out by default (pageable and zero-copy mapped remain), unless the options say otherwise */
        int has_budget = 0, has_ref = 0, has_reps = 0, has_passes = 0;
        for (int i = 1; i < argc; i++) {
            has_budget |= !strncmp(argv[i], "--budget", 8);
            has_ref |= !strncmp(argv[i], "--ref-max-gflop", 15);
            has_reps |= !strncmp(argv[i], "--repetitions", 13);
            has_passes |= !strncmp(argv[i], "--passes", 8);
        }
        if (!has_budget) o.budget_s = 0.2;
        /* quick runs gate merges: three passes over the case list in new processes, the best pass
         * kept per case (merge_passes); with --passes 1, three windows within the process instead */
        if (!has_passes) o.passes = 3;
        if (!has_reps) o.repetitions = o.passes > 1 ? 1 : 3;
        if (!has_ref) o.ref_max_gflop = 0.25;
        if (!o.route_mask) o.quick_routes = (1u << HB_ROUTE_PAGEABLE) | (1u << HB_ROUTE_MAPPED);
    }
    if (o.max_samples < o.min_samples) o.max_samples = o.min_samples;
    if (bad) return HB_EXIT_USAGE;
    /* backends named must exist */
    if (o.backends) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", o.backends);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
            if (!hb_backend_find(tok)) {
                fprintf(stderr, "hybench %s: unknown backend \"%s\" (option --backend); `hybench list` shows them\n", cmd, tok);
                return HB_EXIT_NO_BACKEND;
            }
    }
    /* workloads: every file parsed before anything runs */
    hb_item_list items = {0};
    char err[1024];
    char *wl[64];
    int nwl = 0;
    for (int i = optind; i < argc && nwl < 64; i++) wl[nwl++] = argv[i];
    if (nwl == 0 && nbatches == 0)
        for (size_t i = 0; i < sizeof default_workloads / sizeof default_workloads[0]; i++) wl[nwl++] = (char *)default_workloads[i];
    for (int i = 0; i < nwl; i++)
        if (hb_workload_load(wl[i], &items, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench %s: %s\n", cmd, err);
            return HB_EXIT_BAD_WORKLOAD;
        }
    for (int i = 0; i < nbatches; i++)
        if (hb_batch_load(batches[i], &items, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench %s: %s\n", cmd, err);
            return HB_EXIT_BAD_WORKLOAD;
        }
    hb_case_list cases = {0};
    cases.items = &items;
    if (hb_cases_expand(&items, &o, &cases)) { fprintf(stderr, "hybench: out of memory\n"); return HB_EXIT_IO; }
    if (o.dry_run) {
        for (size_t i = 0; i < items.n; i++) {
            const hb_item *it = &items.v[i];
            const hb_op_info *info = hb_op_get(it->c.op);
            if (o.ops && !hb_list_has(o.ops, info->name) && !hb_list_has(o.ops, hb_family_name(info->family))) continue;
            if (o.quick && !it->c.quick) continue;
            hb_item_print(stdout, it);
        }
        printf("%zu workload entries, %zu cases per backend before per-backend filtering\n", items.n, cases.n);
        return HB_EXIT_OK;
    }
    if (cases.n == 0) { fprintf(stderr, "hybench %s: no case selected (check --op, --filter, --quick)\n", cmd); return HB_EXIT_USAGE; }
    {   /* a backend process re-executed by the run (measure.h): measure its part and leave */
        int crc = hb_measure_child_from_env(&o, &cases);
        if (crc >= 0) return crc;
    }
    /* results file */
    char run_id[128], host[64] = "host", path[512];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++) if (*p == '.' || *p == '/') { *p = 0; break; }
    time_t now = time(NULL);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
    snprintf(run_id, sizeof run_id, "%s%s-%s", ts, verify ? "-verify" : "", host);
    if (o.out) snprintf(path, sizeof path, "%s", o.out);
    else { mkdir("results", 0755); snprintf(path, sizeof path, "results/%s.jsonl", run_id); }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) { fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, path, strerror(errno)); return HB_EXIT_IO; }
    if (hb_record_write(fd, hb_meta_record(&o, run_id, wl, nwl)) != HB_OK) { fprintf(stderr, "hybench: write failed\n"); return HB_EXIT_IO; }
    hb_run_totals t;
    int rc = hb_measure_run(&o, &cases, fd, path, cmd, &t);
    close(fd);
    fprintf(stderr, "hybench %s: %zu cases in %.1f s: %d ok, %d wrong, %d failed, %d skipped, %d crashed, %d no_resource, %d timed_out\n",
            cmd, t.cases, t.elapsed_s, t.counts[HB_OK], t.counts[HB_EWRONG], t.counts[HB_EDEVICE] + t.counts[HB_EINVAL],
            t.counts[HB_ESKIP], t.counts[HB_ECRASH], t.counts[HB_ENOMEM], t.counts[HB_ETIMEOUT]);
    printf("%s\n", path);
    hb_item_list_free(&items);
    hb_case_list_free(&cases);
    if (rc) return rc;
    if (t.interrupted) return HB_EXIT_INTERRUPTED;
    if (t.unavailable_named) {
        fprintf(stderr, "hybench %s: a backend named by --backend is unavailable here (reason above)\n", cmd);
        return HB_EXIT_NO_BACKEND;
    }
    if (t.counts[HB_EWRONG]) return HB_EXIT_WRONG;
    if (t.counts[HB_EDEVICE] + t.counts[HB_EINVAL] + t.counts[HB_ECRASH] + t.counts[HB_ETIMEOUT]) return HB_EXIT_FAILED;
    return HB_EXIT_OK;
}

int hb_cmd_run(int argc, char **argv) { return run_common(argc, argv, 0); }
int hb_cmd_verify(int argc, char **argv) { return run_common(argc, argv, 1); }

