/*
 * cmd_run.c - `hybench run` and `hybench verify`: the options and their help, the workloads loaded
 * and expanded into cases (or listed with --dry-run), the results file opened with its meta record,
 * the run measured (measure/runner.c), and the exit status from what it found.
 */
#include "cli/commands.h"
#include "cli/launch_ranks.h"
#include "core/launch.h"
#include "measure/lockstep.h"
#include "measure/measure.h"
#include "measure/registry.h"
#include "measure/serve.h"
#include "workload/benchdnn.h"
#include "workload/model.h"
#include "workload/workload.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
        "  --dtype LIST       f32,tf32,f16,bf16,q8_0,q4_k,q5_k,q6_k (unsupported ones are recorded as skipped;\n"
        "                     the q types: matmul with quantized weights, docs/quantized.md)\n"
        "  --filter TEXT      only cases whose name or key contains TEXT\n"
        "  --model FILE.gguf  also run layer --layer N (default 0) of a llama GGUF file as the decoder-layer\n"
        "                     chain, decode and prefill, with its real sizes and weights (q8_0/q4_k/q5_k/q6_k\n"
        "                     projections, or f32/f16/bf16 run in f32; docs/quantized.md); alone: only those\n"
        "  --quick            the quick subset of the workloads (budget 0.2 s, routes pageable+mapped,\n"
        "                     cpu-ref timed up to 0.05 GFLOP, unless given explicitly)\n"
        "  --batch KIND:FILE  a oneDNN benchdnn problem list (conv:, pool:, matmul:); repeatable\n"
        "  --budget SECONDS   sampling budget per case (default 0.5; the modes of a case measured\n"
        "                     together share the sum of theirs; verify: unused)\n"
        "  --ci-target FRAC   stop sampling when the median's 95%% CI half-width is within FRAC (default 0.02)\n"
        "  --min-samples N    (default 5)   --max-samples N (default 300), per window\n"
        "  --repetitions R    sample each case in R windows (budget split), keep the window with the\n"
        "                     lowest median (default 1; 3 with --quick --passes 1)\n"
        "  --passes P         run the whole case list P times, each pass in new processes (budget\n"
        "                     split); per case the worst status wins, else the pass with the lowest\n"
        "                     median is kept and every pass's median recorded (default 1; 2 with\n"
        "                     --quick). Between-process noise (thread placement, host state on a\n"
        "                     shared VM) is what makes two runs differ; passes sample it\n"
        "  --cold             evict the caches (host LLC or device L2) right before every timed compute;\n"
        "                     default (hot): untimed runs of the op until its time settles first\n"
        "  --no-interleave    measure each mode of a case alone; by default the modes of one case\n"
        "                     (same op, shape, dtype, route) take their samples in turns, so that\n"
        "                     drift on a shared machine does not read as a difference between modes\n"
        "  --ref-max-gflop G  do not time cpu-ref above G GFLOP per call (default 2; 0.05 with --quick)\n"
        "  --energy[=SECONDS] after sampling, run each case for an energy window of at least SECONDS\n"
        "                     (default 1; 0.2..600) and record J/op, W, GFLOP/J, GB/J from the device's\n"
        "                     energy counter (NVML on cuda, RAPL on the CPU; docs/energy.md)\n"
        "  --case-timeout S   kill a case after S seconds: timed_out (default 600)\n"
        "  --seed N           input seed (default 42)\n"
        "  --out FILE         results file (default results/<run-id>.jsonl)\n"
        "  --ranks N          one process per rank, N of them (1..1024; default 1): each with HB_RANK,\n"
        "                     HB_NRANKS, HB_LOCAL_RANK and a rendezvous folder set, writing FILE without\n"
        "                     .jsonl + .ranks/rank<r>.jsonl (ranks 1.. log to rank<r>.log there); their\n"
        "                     files merged into FILE (collectives: one record with every rank's figures;\n"
        "                     docs/collectives.md). Ignored inside a launch (mpirun, srun, HB_RANK set)\n"
        "  --instructions N   count the instructions of N timed calls per case with callgrind, after its\n"
        "                     warm-up (record \"instructions\"; 1..1000); the run must be under valgrind\n"
        "                     --tool=callgrind --collect-atstart=no --trace-children=yes\n"
        "                     --callgrind-out-file=DIR/cg.%%p, with --callgrind-dir DIR (docs/compare.md)\n"
        "  --callgrind-dir DIR  where that valgrind writes its dumps (needed with --instructions)\n"
        "  --cases-from FILE  only the case keys listed in FILE, one per line as results records spell\n"
        "                     them (hybench ab's later rounds: the cases still undecided)\n"
        "  --ceilings-from F  reuse the ceilings of results file F (same backend instances, this machine)\n"
        "                     instead of measuring them (hybench ab's rounds: measured once)\n"
        "  --ref-cache DIR    keep the f64 references in DIR (created when missing) and read them back in\n"
        "                     later processes: each one checked (key, checksum), a bad one recomputed; the\n"
        "                     records say \"reference_cache\" (docs/measurement.md). Default: HB_REF_CACHE,\n"
        "                     else off (hybench ab's rounds turn it on)\n"
        "  --algo-cache DIR   keep the CUDA plugin's one-off algorithm choices (conv2d engines, attention's\n"
        "                     cuDNN plan or own kernel) in DIR and reuse them in later processes: each\n"
        "                     one checked, a bad one chosen afresh; the records say \"algo_cache\"\n"
        "                     (docs/backends.md). Sets HB_ALGO_CACHE for the run's processes. Default:\n"
        "                     HB_ALGO_CACHE, else off (hybench ab's rounds turn it on)\n"
        "  --serve-rounds N   set every case up once (buffers, inputs, reference, verification, warm-up),\n"
        "                     then measure them in up to N rounds (1..1000), round r's records in FILE\n"
        "                     with -rNN before .jsonl, each read as a --passes 1 run's; under hybench ab's\n"
        "                     lockstep the gate says when to stop (measure/serve.h, docs/compare.md)\n"
        "  --serve-cases F    with --serve-rounds: a round the gate asks for runs only the keys of F\n"
        "  --force            replace FILE when it is an existing results file (never done without it)\n"
        "  --dry-run          print the parsed cases with shapes and FLOP counts, run nothing\n"
        "  Every option is checked: a value out of its range (NaN, inf, an empty list) is refused (exit 2).\n"
        "  The results file is locked for the run: a second run on it refuses (exit 7); an existing one is\n"
        "  refused without --force (exit 2). Every case reaches it as it is measured, in every pass.\n"
        "exit status: 0 ok, 2 usage (or --out exists without --force), 4 bad workload, 5 a case failed\n"
        "verification, 6 unknown/unavailable backend, 7 cannot write results (disk full: the file and the\n"
        "error are named; or --out locked by another run), 8 cases failed/crashed/timed out, 130 interrupted\n"
        "(SIGINT/SIGTERM: what was measured is written)\n", cmd);
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

/* A list option (--backend, --op, --mode, --route, --dtype): refused when empty or when it has an
 * empty element ("add,,mul", "add,"), naming the option. 1 when acceptable. */
static int nonempty_list(const char *arg, const char *opt)
{
    size_t n = strlen(arg);
    if (!n || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,") || n >= 256) {
        fprintf(stderr, "hybench: --%s wants a comma list of names, not \"%s\"%s\n", opt, arg,
                n >= 256 ? " (too long)" : "");
        return 0;
    }
    return 1;
}

/* A real option: a finite number in the range (lo or [lo, hi] or hi), every character parsed.
 * Refused (NaN, inf, empty, trailing text, out of range) with the option and its range named. */
static int num_opt(const char *arg, const char *opt, int lo_incl, double lo, double hi, int hi_incl, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(arg, &end);
    int ok = end != arg && !*end && errno != ERANGE && isfinite(x) && (lo_incl ? x >= lo : x > lo) &&
             (hi_incl ? x <= hi : x < hi);
    if (!ok) {
        fprintf(stderr, "hybench: --%s wants a number in %c%g, %g%c, not \"%s\"\n", opt, lo_incl ? '[' : '(', lo, hi,
                hi_incl ? ']' : ')', arg);
        return 0;
    }
    *out = x;
    return 1;
}

/* An integer option in [lo, hi]; refused (empty, trailing text, overflow, out of range) naming it. */
static int int_opt(const char *arg, const char *opt, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(arg, &end, 10);
    if (end == arg || *end || errno == ERANGE || x < lo || x > hi) {
        fprintf(stderr, "hybench: --%s wants an integer in [%ld, %ld], not \"%s\"\n", opt, lo, hi, arg);
        return 0;
    }
    *out = (int)x;
    return 1;
}

const char *const hb_default_workloads[] = {"workloads/default.ini", "workloads/tinyllama.ini", "workloads/resnet50.ini",
                                             "workloads/collectives.ini", NULL};

/* The run after its owned memory is set up by run_common (which frees it on every return path:
 * the joined command line, the workload items and the cases). */
static int run_main(int argc, char **argv, int verify, char **joined, hb_item_list *itemsp, hb_case_list *casesp)
{
    hb_options o = {.repetitions = 1, .passes = 1, .budget_s = 0.5, .ci_target = 0.02, .min_samples = 5, .max_samples = 300, .ref_max_gflop = 2,
                    .case_timeout_s = 600, .seed = 42, .verify_only = verify};
    const char *cmd = verify ? "verify" : "run";
    const char *batches[32];
    int nbatches = 0, bad = 0, force = 0;
    int has_budget = 0, has_ref = 0, has_reps = 0, has_passes = 0, has_maxs = 0, nranks = 1;
    enum { O_BACKEND = 256, O_OP, O_MODE, O_ROUTE, O_DTYPE, O_FILTER, O_QUICK, O_BATCH, O_BUDGET, O_CI, O_MINS, O_MAXS,
           O_COLD, O_NOIL, O_REFMAX, O_TMO, O_REPS, O_PASSES, O_SEED, O_OUT, O_DRY, O_FORCE, O_HELP,
           O_ENERGY, O_CEILF, O_CASESF, O_RANKS, O_REFCACHE, O_ALGOCACHE, O_INSTR, O_CGDIR, O_MODEL, O_LAYER, O_SERVE, O_SERVEC };
    static const struct option lo[] = {
        {"backend", 1, 0, O_BACKEND}, {"op", 1, 0, O_OP}, {"mode", 1, 0, O_MODE}, {"route", 1, 0, O_ROUTE},
        {"dtype", 1, 0, O_DTYPE}, {"filter", 1, 0, O_FILTER}, {"quick", 0, 0, O_QUICK}, {"batch", 1, 0, O_BATCH},
        {"budget", 1, 0, O_BUDGET}, {"ci-target", 1, 0, O_CI}, {"min-samples", 1, 0, O_MINS},
        {"max-samples", 1, 0, O_MAXS}, {"cold", 0, 0, O_COLD}, {"no-interleave", 0, 0, O_NOIL}, {"ref-max-gflop", 1, 0, O_REFMAX},
        {"case-timeout", 1, 0, O_TMO}, {"repetitions", 1, 0, O_REPS}, {"passes", 1, 0, O_PASSES}, {"seed", 1, 0, O_SEED}, {"out", 1, 0, O_OUT}, {"dry-run", 0, 0, O_DRY}, {"force", 0, 0, O_FORCE},
        {"help", 0, 0, O_HELP}, {"energy", 2, 0, O_ENERGY}, {"ceilings-from", 1, 0, O_CEILF},
        {"cases-from", 1, 0, O_CASESF}, {"ranks", 1, 0, O_RANKS},
        {"ref-cache", 1, 0, O_REFCACHE}, {"algo-cache", 1, 0, O_ALGOCACHE}, {"instructions", 1, 0, O_INSTR},
        {"callgrind-dir", 1, 0, O_CGDIR}, {"model", 1, 0, O_MODEL}, {"layer", 1, 0, O_LAYER},
        {"serve-rounds", 1, 0, O_SERVE}, {"serve-cases", 1, 0, O_SERVEC}, {0, 0, 0, 0}};
    const char *model = NULL;
    int layer = 0, has_layer = 0;
    /* join argv for the metadata */
    size_t jl = 16;
    for (int i = 0; i < argc; i++) jl += strlen(argv[i]) + 1;
    *joined = o.argv_joined = calloc(1, jl + 16);
    if (!o.argv_joined) { fprintf(stderr, "hybench: out of memory\n"); return HB_EXIT_IO; }
    strcat(o.argv_joined, "hybench");
    o.argc = argc;
    o.argv = argv;
    for (int i = 0; i < argc; i++) { strcat(o.argv_joined, " "); strcat(o.argv_joined, argv[i]); }
    optind = 1;
    int ch;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_BACKEND: o.backends = optarg; bad |= !nonempty_list(optarg, "backend"); break;
        case O_OP:
            o.ops = optarg;
            if (!nonempty_list(optarg, "op")) { bad = 1; break; }
            for (char *p = strdup(optarg), *tok = strtok(p, ","), *keep = p; tok || (free(keep), 0); tok = strtok(NULL, ",")) {
                int fam = 0;
                for (int f = 0; f < HB_FAM_COUNT; f++) fam |= !strcmp(tok, hb_family_name(f));
                if (hb_op_parse(tok) < 0 && !fam) { fprintf(stderr, "hybench %s: unknown op \"%s\" (option --op)\n", cmd, tok); bad = 1; }
            }
            break;
        case O_MODE: if (!nonempty_list(optarg, "mode")) bad = 1; else o.mode_mask = parse_mask(optarg, hb_mode_parse, "mode", &bad); break;
        case O_ROUTE: if (!nonempty_list(optarg, "route")) bad = 1; else o.route_mask = parse_mask(optarg, hb_route_parse, "route", &bad); break;
        case O_DTYPE: if (!nonempty_list(optarg, "dtype")) bad = 1; else o.dtype_mask = parse_mask(optarg, hb_dtype_parse, "dtype", &bad); break;
        case O_FILTER: o.filter = optarg; if (!*optarg) { fprintf(stderr, "hybench: --filter wants a non-empty text\n"); bad = 1; } break;
        case O_QUICK: o.quick = 1; break;
        case O_MODEL: model = optarg; if (!*optarg) { fprintf(stderr, "hybench: --model wants a GGUF file\n"); bad = 1; } break;
        case O_LAYER: bad |= !int_opt(optarg, "layer", 0, 1 << 20, &layer); has_layer = 1; break;
        case O_BATCH:
            if (nbatches < 32) batches[nbatches++] = optarg;
            else { fprintf(stderr, "hybench: at most 32 --batch options\n"); bad = 1; }
            break;
        case O_BUDGET: bad |= !num_opt(optarg, "budget", 0, 0, 3600, 1, &o.budget_s); has_budget = 1; break;
        case O_CI: bad |= !num_opt(optarg, "ci-target", 0, 0, 1, 0, &o.ci_target); break;
        case O_MINS: bad |= !int_opt(optarg, "min-samples", 1, 100000, &o.min_samples); break;
        case O_MAXS: bad |= !int_opt(optarg, "max-samples", 1, 100000, &o.max_samples); has_maxs = 1; break;
        case O_COLD: o.cold = 1; break;
        case O_NOIL: o.no_interleave = 1; break;
        case O_REFMAX: bad |= !num_opt(optarg, "ref-max-gflop", 1, 0, 1e9, 1, &o.ref_max_gflop); has_ref = 1; break;
        case O_TMO: bad |= !num_opt(optarg, "case-timeout", 0, 0, 1e6, 1, &o.case_timeout_s); break;
        case O_ENERGY:
            o.energy_min_s = 1.0;
            if (optarg) bad |= !num_opt(optarg, "energy", 1, 0.2, 600, 1, &o.energy_min_s);
            break;
        case O_REPS: bad |= !int_opt(optarg, "repetitions", 1, HB_MAX_REPETITIONS, &o.repetitions); has_reps = 1; break;
        case O_PASSES: bad |= !int_opt(optarg, "passes", 1, HB_MAX_PASSES, &o.passes); has_passes = 1; break;
        case O_SEED: {
            errno = 0;
            o.seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno == ERANGE || optarg[strspn(optarg, " \t")] == '-') {
                fprintf(stderr, "hybench: --seed wants an unsigned integer below 2^64, not \"%s\"\n", optarg);
                bad = 1;
            }
            break;
        }
        case O_OUT: o.out = optarg; if (!*optarg) { fprintf(stderr, "hybench: --out wants a file name\n"); bad = 1; } break;
        case O_FORCE: force = 1; break;
        case O_CEILF:
            o.ceilings_from = optarg;
            if (access(optarg, R_OK)) { fprintf(stderr, "hybench: --ceilings-from %s: %s\n", optarg, strerror(errno)); bad = 1; }
            break;
        case O_CASESF:
            o.cases_from = optarg;
            if (access(optarg, R_OK)) { fprintf(stderr, "hybench: --cases-from %s: %s\n", optarg, strerror(errno)); bad = 1; }
            break;
        case O_REFCACHE:
            o.ref_cache = optarg;
            if (!*optarg) { fprintf(stderr, "hybench: --ref-cache wants a directory\n"); bad = 1; }
            break;
        case O_ALGOCACHE:
            o.algo_cache = optarg;
            if (!*optarg) { fprintf(stderr, "hybench: --algo-cache wants a directory\n"); bad = 1; }
            break;
        case O_INSTR: bad |= !int_opt(optarg, "instructions", 1, 1000, &o.instr_calls); break;
        case O_CGDIR:
            o.callgrind_dir = optarg;
            if (access(optarg, W_OK)) { fprintf(stderr, "hybench: --callgrind-dir %s: %s\n", optarg, strerror(errno)); bad = 1; }
            break;
        case O_SERVE: bad |= !int_opt(optarg, "serve-rounds", 1, 1000, &o.serve_rounds); break;
        case O_SERVEC: o.serve_cases = optarg; if (!*optarg) { fprintf(stderr, "hybench: --serve-cases wants a file\n"); bad = 1; } break;
        case O_DRY: o.dry_run = 1; break;
        case O_RANKS: bad |= !int_opt(optarg, "ranks", 1, 1024, &nranks); break;
        case O_HELP: case 'h': usage(stdout, cmd); return HB_EXIT_OK;
        default: usage(stderr, cmd); return HB_EXIT_USAGE;
        }
    }
    if (!o.ref_cache && getenv("HB_REF_CACHE") && *getenv("HB_REF_CACHE")) o.ref_cache = getenv("HB_REF_CACHE");
    if (!o.algo_cache && getenv("HB_ALGO_CACHE") && *getenv("HB_ALGO_CACHE")) o.algo_cache = getenv("HB_ALGO_CACHE");
    /* the run's settings (core/config.h) that come from options: the backends read them there, in this
     * process and in every backend process forked from it (a re-executed one and each rank parse the
     * same options again) */
    hb_config_boundary()->algo_cache = o.algo_cache;
    hb_config_boundary()->case_timeout_s = o.case_timeout_s;
    if (o.quick) {
        /* --quick: a smaller per-case budget, cpu-ref timed only on small cases, and the pinned route
         * left out by default (pageable and zero-copy mapped remain), unless the options say otherwise */
        if (!has_budget) o.budget_s = 0.2;
        /* two passes over the case list in new processes, the best pass kept per case (merge_passes),
         * every pass's median recorded; with --passes 1, three windows within the process instead.
         * Two, not three: the quick list took 195 s in three passes on the 2-vCPU VM (122 s in two),
         * over the 3 minutes it is for; merges are gated by `hybench ab`'s interleaved rounds */
        if (!has_passes) o.passes = o.serve_rounds ? 1 : 2;
        if (!has_reps) o.repetitions = o.passes > 1 ? 1 : 3;
        if (!has_ref) o.ref_max_gflop = 0.05; /* the plain-C loops: bmm 16x128^3 (0.067 GFLOP) took 60-150 ms a call */
        if (!o.route_mask) o.quick_routes = (1u << HB_ROUTE_PAGEABLE) | (1u << HB_ROUTE_MAPPED);
    }
    if (o.max_samples < o.min_samples) {
        if (has_maxs) {
            fprintf(stderr, "hybench: --min-samples %d is above --max-samples %d\n", o.min_samples, o.max_samples);
            bad = 1;
        } else o.max_samples = o.min_samples; /* only --min-samples given: the default maximum follows it */
    }
    if (!bad && nranks > 1 && hb_ranks_in_launch() && nranks != hb_launch_ranks()) {
        fprintf(stderr, "hybench %s: --ranks %d, but this process is already rank %d of a %d-process launch (HB_RANK, "
                "mpirun or srun): give --ranks only to start the ranks\n", cmd, nranks, hb_launch_rank(), hb_launch_ranks());
        bad = 1;
    }
    if (o.instr_calls && !o.callgrind_dir) {
        fprintf(stderr, "hybench %s: --instructions needs --callgrind-dir DIR (valgrind's --callgrind-out-file=DIR/cg.%%p)\n", cmd);
        bad = 1;
    }
    if (o.serve_rounds && (verify || o.passes > 1 || nranks > 1 || o.energy_min_s > 0)) {
        fprintf(stderr, "hybench %s: --serve-rounds measures rounds of one pass in one set of processes: not with %s\n", cmd,
                verify ? "verify" : o.passes > 1 ? "--passes above 1" : nranks > 1 ? "--ranks" : "--energy");
        bad = 1;
    }
    if (o.serve_cases && !o.serve_rounds) { fprintf(stderr, "hybench %s: --serve-cases goes with --serve-rounds\n", cmd); bad = 1; }
    if (has_layer && !model) { fprintf(stderr, "hybench %s: --layer needs --model FILE.gguf\n", cmd); bad = 1; }
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
    char err[1024];
    char *wl[64];
    int nwl = 0;
    if (argc - optind > 64) { fprintf(stderr, "hybench %s: at most 64 workload files\n", cmd); return HB_EXIT_USAGE; }
    for (int i = optind; i < argc; i++) wl[nwl++] = argv[i];
    if (nwl == 0 && nbatches == 0 && !model)
        for (size_t i = 0; hb_default_workloads[i]; i++) wl[nwl++] = (char *)hb_default_workloads[i];
    for (int i = 0; i < nwl; i++)
        if (hb_workload_load(wl[i], itemsp, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench %s: %s\n", cmd, err);
            return HB_EXIT_BAD_WORKLOAD;
        }
    for (int i = 0; i < nbatches; i++)
        if (hb_batch_load(batches[i], itemsp, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench %s: %s\n", cmd, err);
            return HB_EXIT_BAD_WORKLOAD;
        }
    /* a model file's layer: its decode and prefill chains (workload/model.h) */
    if (model && hb_model_items(model, layer, itemsp, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench %s: --model: %s\n", cmd, err);
        return HB_EXIT_BAD_WORKLOAD;
    }
    casesp->items = itemsp;
    if (hb_cases_expand(itemsp, &o, casesp)) { fprintf(stderr, "hybench: out of memory\n"); return HB_EXIT_IO; }
    if (o.cases_from && hb_cases_keys_load(o.cases_from, casesp, err, sizeof err)) {
        fprintf(stderr, "hybench %s: %s\n", cmd, err);
        return HB_EXIT_USAGE;
    }
    if (o.dry_run) {
        for (size_t i = 0; i < itemsp->n; i++) {
            const hb_item *it = &itemsp->v[i];
            const hb_op_info *info = hb_op_get(it->c.op);
            if (o.ops && !hb_list_has(o.ops, info->name) && !hb_list_has(o.ops, hb_family_name(info->family))) continue;
            if (o.quick && !it->c.quick) continue;
            hb_item_print(stdout, it);
        }
        printf("%zu workload entries, %zu cases per backend before per-backend filtering\n", itemsp->n, casesp->n);
        return HB_EXIT_OK;
    }
    if (casesp->n == 0) { fprintf(stderr, "hybench %s: no case selected (check --op, --filter, --quick)\n", cmd); return HB_EXIT_USAGE; }
    {   /* a backend process re-executed by the run (measure.h): measure its part and leave */
        int crc = hb_measure_child_from_env(&o, casesp);
        if (crc >= 0) return crc;
    }
    /* under `hybench ab`'s lockstep rounds: wait for the turn before any work (lockstep.h) */
    hb_lockstep_begin();
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
    if (o.serve_rounds) { /* one results file per round (measure/serve.h) */
        hb_run_totals st = {0};
        int src = hb_measure_serve(&o, casesp, path, run_id, wl, nwl, force, cmd, &st);
        fprintf(stderr, "hybench %s: %d rounds served, %zu case records in %.1f s\n", cmd, st.passes, st.cases, st.elapsed_s);
        if (src) return src;
        if (st.interrupted) return HB_EXIT_INTERRUPTED;
        if (st.counts[HB_EWRONG]) return HB_EXIT_WRONG;
        if (st.counts[HB_EDEVICE] + st.counts[HB_EINVAL] + st.counts[HB_ECRASH] + st.counts[HB_ETIMEOUT]) return HB_EXIT_FAILED;
        return HB_EXIT_OK;
    }
    /* the results file: locked for the run (a second run on it refuses), never truncated without
     * --force, and a run of several passes rewrites it (merge, rename): it must be a regular file */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) { fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, path, strerror(errno)); return HB_EXIT_IO; }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
        fprintf(stderr, "hybench %s: %s is in use: another hybench run holds its lock; choose another --out\n", cmd, path);
        close(fd);
        return HB_EXIT_IO;
    }
    struct stat fst;
    if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_size > 0) {
        if (!force) {
            fprintf(stderr, "hybench %s: %s exists (%lld bytes); --force replaces it, or choose another --out\n", cmd, path,
                    (long long)fst.st_size);
            close(fd);
            return HB_EXIT_USAGE;
        }
        if (ftruncate(fd, 0) < 0) {
            fprintf(stderr, "hybench %s: cannot truncate %s: %s\n", cmd, path, strerror(errno));
            close(fd);
            return HB_EXIT_IO;
        }
    }
    if (!S_ISREG(fst.st_mode) && o.passes > 1 && !verify) {
        fprintf(stderr, "hybench %s: --out %s is not a regular file; a run of several passes (--passes %d) rewrites its "
                "results file: give a file or --passes 1\n", cmd, path, o.passes);
        close(fd);
        return HB_EXIT_USAGE;
    }
    if (nranks > 1 && !hb_ranks_in_launch()) {
        /* --ranks N: N processes, one per rank, their files merged into this one (launch_ranks.h) */
        int lrc = hb_ranks_launch(nranks, argc, argv, lo, cmd, path);
        close(fd);
        return lrc;
    }
    errno = 0;
    hb_meta meta;
    hb_status mst = hb_meta_fill(&meta, &o, run_id, wl, nwl);
    if (mst == HB_OK) {
        mst = hb_record_write(fd, hb_rec_meta_json(&meta.rec));
        hb_meta_release(&meta);
    }
    if (mst != HB_OK) {
        fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, path, mst == HB_ENOMEM ? "out of memory" : strerror(errno ? errno : EIO));
        close(fd);
        return HB_EXIT_IO;
    }
    hb_run_totals t = {0};
    int rc = hb_measure_run(&o, casesp, &fd, path, cmd, &t);
    close(fd);
    fprintf(stderr, "hybench %s: %zu cases in %.1f s: %d ok, %d wrong, %d failed, %d skipped, %d crashed, %d no_resource, %d timed_out\n",
            cmd, t.cases, t.elapsed_s, t.counts[HB_OK], t.counts[HB_EWRONG], t.counts[HB_EDEVICE] + t.counts[HB_EINVAL],
            t.counts[HB_ESKIP], t.counts[HB_ECRASH], t.counts[HB_ENOMEM], t.counts[HB_ETIMEOUT]);
    printf("%s\n", path);
    if (rc) return rc;
    if (t.interrupted) return HB_EXIT_INTERRUPTED;
    if (t.unavailable_named) {
        fprintf(stderr, "hybench %s: a backend named by --backend is unavailable here (reason above)\n", cmd);
        return HB_EXIT_NO_BACKEND;
    }
    if (t.counts[HB_EWRONG]) return HB_EXIT_WRONG;
    if (t.counts[HB_EDEVICE] + t.counts[HB_EINVAL] + t.counts[HB_ECRASH] + t.counts[HB_ETIMEOUT] || t.child_failures)
        return HB_EXIT_FAILED;
    return HB_EXIT_OK;
}

static int run_common(int argc, char **argv, int verify)
{
    char *joined = NULL;
    hb_item_list items = {0};
    hb_case_list cases = {0};
    int rc = run_main(argc, argv, verify, &joined, &items, &cases);
    hb_case_list_free(&cases);
    hb_item_list_free(&items);
    free(joined);
    return rc;
}

int hb_cmd_run(int argc, char **argv) { return run_common(argc, argv, 0); }
int hb_cmd_verify(int argc, char **argv) { return run_common(argc, argv, 1); }

