/*
 * cmd_ab.c - `hybench ab BASE CUR [run options] [WORKLOAD.ini ...]`: the merge gate that runs two
 * builds interleaved (docs/compare.md "hybench ab"). Rounds: each runs the case list once under
 * each build: by default one served run per build for the whole gate (`EXE run --serve-rounds N`,
 * measure/serve.h: every case set up once, a round costs only its samples; docs/compare.md "Served
 * rounds", with --serve), else (the default, an older build) `EXE run --passes 1 ...`, a fresh process tree per build
 * and round; the two in an
 * ABBA order whose first letter is drawn per pair of rounds; from round 2 on (after the first run
 * measured the ceilings) both runs of a round start at once and take turns case group by case group
 * (hb_ab_run_lockstep in ab_builds.c, measure/lockstep.h), one thread each, pinned to one CPU by default; the decision
 * (analysis/ab.c) after every round from --min-rounds on, stopping when every case is decided, at
 * --rounds, or when the next round would pass --time-budget. Writes compare's Markdown / JSON / JUnit and exit codes, both
 * builds' merged results files and every round's file.
 */
#include "analysis/ab.h"
#include "cli/ab_account.h"
#include "cli/ab_builds.h"
#include "cli/ab_gatelist.h"
#include "cli/ab_instr_run.h"
#include "cli/ab_usage.h"
#include "measure/lockstep.h"
#include "measure/serve.h"
#include "cli/commands.h"
#include "core/rstats.h"
#include "core/stats.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AB_MAX_ROUNDS 64

typedef struct side_t {
    const char *name;        /* "base" / "cur" */
    char exe[4096];
    hb_run run[AB_MAX_ROUNDS];
    char *path[AB_MAX_ROUNDS];
    double secs[AB_MAX_ROUNDS];
    int has_ceilf;           /* its `run` takes --ceilings-from (an older build may not) */
} side_t;

static FILE *open_out(const char *p) { return strcmp(p, "-") ? fopen(p, "w") : stdout; }
static int close_out(FILE *f) { return f == stdout ? fflush(f) : fclose(f); }

static const char *const slim_keep[] = {"type", "key", "backend", "op", "shape_str", "mode", "route", "dtype", "status",
                                        "samples", "phases", "reason", NULL};

/* Load round file path into r (options lo) and refuse it, by name, when it cannot be compared
 * (hb_run_check_comparable: no meta record, a newer schema, no case records). Returns HB_EXIT_OK,
 * HB_EXIT_USAGE (unreadable or malformed) or HB_EXIT_INCOMPARABLE, the reason printed; r is left
 * loaded either way (hb_run_free). */
static int load_round(const char *path, const hb_load_opts *lo, hb_run *r)
{
    char err[1024];
    if (hb_run_load_opts(path, lo, r, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench ab: %s\n", err);
        return HB_EXIT_USAGE;
    }
    if (hb_run_check_comparable(r, path, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench ab: incomparable: %s\n", err);
        return HB_EXIT_INCOMPARABLE;
    }
    return HB_EXIT_OK;
}

/* Refuse round file r when its machine fingerprint (or schema) differs from first's (base round 1):
 * exit 3 with both fingerprints and what differs, unless cross (--cross-machine: a warning, once). A
 * host name that differs alone is a note. Returns HB_EXIT_OK or HB_EXIT_INCOMPARABLE. */
static int check_machine(const hb_run *first, const hb_run *r, int cross)
{
    static int warned;
    char why[3072], note[512];
    if (first == r) return HB_EXIT_OK;
    if (hb_cmp_comparable(first, r, why, sizeof why, note, sizeof note) != HB_CMP_COMPARABLE) {
        if (!cross) {
            fprintf(stderr, "hybench ab: incomparable: %s (use --cross-machine to gate anyway)\n", why);
            return HB_EXIT_INCOMPARABLE;
        }
        if (!warned++) fprintf(stderr, "hybench ab: warning: %s (gated anyway: --cross-machine, or both builds ran here)\n", why);
    } else if (note[0] && !warned++) fprintf(stderr, "hybench ab: note: %s\n", note);
    return HB_EXIT_OK;
}

/* The gate's verdicts over the first `rounds` rounds of both sides (hb_ab_decide); an error is
 * printed. */
static hb_status decide(const side_t *sides, int rounds, const hb_ab_options *ao, hb_cmp_result *res, size_t *undecided)
{
    const hb_run *rb[AB_MAX_ROUNDS], *rcur[AB_MAX_ROUNDS];
    for (int i = 0; i < rounds; i++) { rb[i] = &sides[0].run[i]; rcur[i] = &sides[1].run[i]; }
    char err[512];
    hb_status st = hb_ab_decide(rb, rcur, rounds, ao, res, undecided, err, sizeof err);
    if (st != HB_OK) fprintf(stderr, "hybench ab: %s\n", err);
    return st;
}

/* The cases a later round still runs (--cases-from), written to path one key per line: the undecided
 * ones (tested, neither flagged as a regression nor cleared: ci_hi <= 1 + t, the data exclude a
 * regression beyond the threshold) and those with too few rounds yet. Decided cases stop: a cleared
 * one can only end "unchanged" or "improvement", a flagged one already fails the gate, and one decided
 * by its status (wrong, crashed, missing, skipped, ...) fails or passes whatever its speed; the rounds
 * go to the cases that need them. (A flagged case that stops keeps its flag: in the 99 decisions
 * after each round of eight A/A gates, GAP1-GAP5, GA6, AAD1-AAD2, no case was ever flagged.)
 * Returns the number written, -1 when path cannot be written. */
static long write_open_cases(const hb_cmp_result *res, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    long n = 0;
    fprintf(f, "# hybench ab: the cases not yet decided (written for the next round's --cases-from)\n");
    for (size_t i = 0; i < res->n; i++) {
        const hb_cmp_case *c = &res->cases[i];
        if (c->key[0] == '(') continue; /* a whole-run case */
        if (hb_cmp_case_undecided(c)) { fprintf(f, "%s\n", c->key); n++; } /* insufficient ones too */
    }
    return fclose(f) ? -1 : n;
}

int hb_cmd_ab(int argc, char **argv)
{
    hb_ab_options ao;
    hb_ab_options_default(&ao);
    hb_cmp_options *o = &ao.cmp;
    o->tool = "hybench ab";
    hb_ab_noise no = {.threads = 1}; /* one thread, pinned to one CPU (below): the measured noise is lowest */
    int pin_set = 0;
    int no_share_ceil = 0, ncur_env = 0, lockstep = 1, duet = 0, prune = 1, subset_from = 6;
    const char *redecide = NULL, *refcache = NULL, *algocache = NULL;
    int no_refcache = 0, no_algocache = 0, cross_machine = 0;
    char *cur_env[16];
    int max_rounds = AB_MAX_ROUNDS, quiet = 0, has_passes = 0, has_reps = 0, order_seed_set = 0;
    double budget = 840;
    unsigned long long order_seed = 0;
    const char *outdir = NULL, *md = NULL, *js = NULL, *ju = NULL;
    char *fwd[AB_MAX_FWD];
    int nfwd = 0;
    char err[1024];
    enum { O_ROUNDS = 256, O_MINR, O_TB, O_THR, O_ALPHA, O_CONF, O_BOOT, O_RULE, O_METRIC, O_MIND, O_ALLOWM, O_MAXR,
           O_OUTD, O_MD, O_JS, O_JU, O_QUIET, O_OSEED, O_ASLR, O_THREADS, O_PIN, O_HUGE, O_HELP, O_CEILEACH, O_CURENV, O_NONORM, O_REDECIDE, O_RSTAT, O_NOLOCK, O_DUET, O_NOPRUNE, O_SUBFROM, O_REFC, O_NOREFC,
           O_ALGOC, O_NOALGOC, O_CROSS, O_INSTR, O_IROUNDS, O_ICALLS, O_ITHR, O_CACHESIM, O_WTIME, O_NOSERVE, O_SERVE, O_NOGL, O_FWD0 = 512, O_FWD1 = 1024 };
    /* forwarded run options: O_FWD0 + i without a value, O_FWD1 + i with one */
    static const char *const fwd0[] = {"quick", "cold"};
    static const char *const fwd1[] = {"backend", "op", "mode", "route", "dtype", "filter", "batch", "budget", "ci-target",
                                       "min-samples", "max-samples", "ref-max-gflop", "case-timeout", "repetitions", "seed",
                                       "passes", "cases-from"};
    struct option lo[72] = {
        {"rounds", 1, 0, O_ROUNDS}, {"min-rounds", 1, 0, O_MINR}, {"time-budget", 1, 0, O_TB}, {"threshold", 1, 0, O_THR},
        {"alpha", 1, 0, O_ALPHA}, {"confidence", 1, 0, O_CONF}, {"bootstrap", 1, 0, O_BOOT}, {"rule", 1, 0, O_RULE},
        {"metric", 1, 0, O_METRIC}, {"min-delta", 1, 0, O_MIND}, {"allow-missing", 0, 0, O_ALLOWM},
        {"max-rows", 1, 0, O_MAXR}, {"out-dir", 1, 0, O_OUTD}, {"markdown", 1, 0, O_MD}, {"json", 1, 0, O_JS},
        {"junit", 1, 0, O_JU}, {"quiet", 0, 0, O_QUIET}, {"order-seed", 1, 0, O_OSEED}, {"aslr", 0, 0, O_ASLR},
        {"threads", 1, 0, O_THREADS}, {"pin", 1, 0, O_PIN}, {"hugepages", 0, 0, O_HUGE}, {"help", 0, 0, O_HELP},
        {"ceilings-each-round", 0, 0, O_CEILEACH}, {"cur-env", 1, 0, O_CURENV},
        {"no-normalize", 0, 0, O_NONORM}, {"redecide", 1, 0, O_REDECIDE},
        {"round-stat", 1, 0, O_RSTAT}, {"no-lockstep", 0, 0, O_NOLOCK}, {"duet", 0, 0, O_DUET},
        {"no-prune", 0, 0, O_NOPRUNE}, {"subset-from", 1, 0, O_SUBFROM}, {"ref-cache", 1, 0, O_REFC},
        {"no-ref-cache", 0, 0, O_NOREFC}, {"algo-cache", 1, 0, O_ALGOC}, {"no-algo-cache", 0, 0, O_NOALGOC},
        {"cross-machine", 0, 0, O_CROSS}, {"instructions", 0, 0, O_INSTR}, {"instr-rounds", 1, 0, O_IROUNDS},
        {"instr-calls", 1, 0, O_ICALLS}, {"instr-threshold", 1, 0, O_ITHR}, {"cache-sim", 0, 0, O_CACHESIM}, {"with-time", 0, 0, O_WTIME},
        {"no-serve", 0, 0, O_NOSERVE}, {"serve", 0, 0, O_SERVE}, {"no-gate-list", 0, 0, O_NOGL}};
    /* per-round processes by default: a served run keeps one process per build for the whole gate, and
     * its process-level luck (buffer addresses, page placement) then holds in every round as a bias
     * (docs/compare.md "Served rounds", measured) */
    int nlo = 46, no_serve = 1, gate_list = 1;
    hb_ab_instr_opts io = {.rounds = 2, .calls = 3, .threshold = 0.01};
    int instructions = 0, with_time = 0, irc = HB_EXIT_OK;
    hb_instr_case *icases = NULL;
    size_t nicases = 0;
    for (size_t i = 0; i < sizeof fwd0 / sizeof *fwd0; i++) lo[nlo++] = (struct option){fwd0[i], 0, 0, O_FWD0 + (int)i};
    for (size_t i = 0; i < sizeof fwd1 / sizeof *fwd1; i++) lo[nlo++] = (struct option){fwd1[i], 1, 0, O_FWD1 + (int)i};
    lo[nlo] = (struct option){0, 0, 0, 0};
    char *pos[70];
    int npos = 0, ch, bad = 0;
    optind = 1;
    char *end;
    while ((ch = getopt_long(argc, argv, "-h", lo, NULL)) != -1) {
        if (ch == 1) { /* a positional argument, in order ("-" at the start of optstring) */
            if (npos < 70) pos[npos++] = optarg;
            else { fprintf(stderr, "hybench ab: too many arguments\n"); bad = 1; }
            continue;
        }
        if (ch >= O_FWD0 && ch < O_FWD1) {
            if (nfwd < AB_MAX_FWD - 1) { fwd[nfwd] = malloc(strlen(fwd0[ch - O_FWD0]) + 3); sprintf(fwd[nfwd++], "--%s", fwd0[ch - O_FWD0]); }
            continue;
        }
        if (ch >= O_FWD1) {
            const char *nm = fwd1[ch - O_FWD1];
            if (!strcmp(nm, "passes")) { has_passes = 1; if (strcmp(optarg, "1")) { fprintf(stderr, "hybench ab: --passes: a round is one pass (--passes 1); ask for more --rounds\n"); bad = 1; } continue; }
            if (!strcmp(nm, "repetitions")) has_reps = 1;
            if (nfwd < AB_MAX_FWD - 2) { fwd[nfwd] = malloc(strlen(nm) + 3); sprintf(fwd[nfwd++], "--%s", nm); fwd[nfwd++] = strdup(optarg); }
            continue;
        }
        switch (ch) {
        case O_ROUNDS: max_rounds = (int)strtol(optarg, &end, 10); if (*end || max_rounds < 2 || max_rounds > AB_MAX_ROUNDS) { fprintf(stderr, "hybench ab: --rounds wants 2..%d\n", AB_MAX_ROUNDS); bad = 1; } break;
        case O_MINR: ao.min_rounds = (int)strtol(optarg, &end, 10); if (*end || ao.min_rounds < 2 || ao.min_rounds > AB_MAX_ROUNDS) { fprintf(stderr, "hybench ab: --min-rounds wants 2..%d\n", AB_MAX_ROUNDS); bad = 1; } break;
        case O_TB: budget = strtod(optarg, &end); if (*end || !(budget > 0)) { fprintf(stderr, "hybench ab: --time-budget wants seconds > 0\n"); bad = 1; } break;
        case O_THR: if (hb_cmp_parse_threshold(o, optarg, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench ab: %s\n", err); bad = 1; } break;
        case O_ALPHA: o->alpha = strtod(optarg, &end); if (*end || !(o->alpha > 0 && o->alpha < 1)) { fprintf(stderr, "hybench ab: --alpha wants (0,1)\n"); bad = 1; } break;
        case O_CONF: o->confidence = strtod(optarg, &end); if (*end || !(o->confidence > 0 && o->confidence < 1)) { fprintf(stderr, "hybench ab: --confidence wants (0,1)\n"); bad = 1; } break;
        case O_BOOT: o->resamples = (int)strtol(optarg, &end, 10); if (*end || o->resamples < 100 || o->resamples > 1000000) { fprintf(stderr, "hybench ab: --bootstrap wants 100..1000000\n"); bad = 1; } break;
        case O_RULE: if (!strcmp(optarg, "point")) o->rule_point = 1; else if (!strcmp(optarg, "ci")) o->rule_point = 0; else { fprintf(stderr, "hybench ab: --rule point|ci\n"); bad = 1; } break;
        case O_METRIC: if (strcmp(optarg, "total") && strcmp(optarg, "compute")) { fprintf(stderr, "hybench ab: --metric total|compute\n"); bad = 1; } else o->metric = optarg; break;
        case O_MIND: o->min_delta = strtod(optarg, &end); if (*end || !(o->min_delta >= 0)) { fprintf(stderr, "hybench ab: --min-delta wants seconds >= 0\n"); bad = 1; } break;
        case O_ALLOWM: o->allow_missing = 1; break;
        case O_MAXR: o->max_rows = (int)strtol(optarg, &end, 10); if (*end || o->max_rows < 1) { fprintf(stderr, "hybench ab: --max-rows wants >= 1\n"); bad = 1; } break;
        case O_OUTD: outdir = optarg; break;
        case O_MD: md = optarg; break;
        case O_JS: js = optarg; break;
        case O_JU: ju = optarg; break;
        case O_QUIET: quiet = 1; break;
        case O_OSEED: order_seed = strtoull(optarg, &end, 10); order_seed_set = 1; if (*end || !*optarg) { fprintf(stderr, "hybench ab: --order-seed wants an integer\n"); bad = 1; } break;
        case O_ASLR: no.aslr = 1; break;
        case O_THREADS: no.threads = (int)strtol(optarg, &end, 10); if (*end || no.threads < 0 || no.threads > 1024) { fprintf(stderr, "hybench ab: --threads wants 0 (inherit) or 1..1024\n"); bad = 1; } break;
        case O_PIN:
            if (!strcmp(optarg, "all")) { no.have_pin = 0; pin_set = 1; break; }
            if (hb_ab_parse_cpulist(optarg, &no.pin)) { fprintf(stderr, "hybench ab: --pin wants a CPU list such as 0-1, or all, not \"%s\"\n", optarg); bad = 1; }
            no.have_pin = 1; pin_set = 1; break;
        case O_HUGE: no.hugepages = 1; break;
        case O_CEILEACH: no_share_ceil = 1; break;
        case O_NOLOCK: lockstep = 0; break;
        case O_DUET: duet = 1; break;
        case O_NOSERVE: no_serve = 1; break;
        case O_SERVE: no_serve = 0; break;
        case O_NOGL: gate_list = 0; break;
        case O_NOPRUNE: prune = 0; break;
        case O_REFC: refcache = optarg; if (!*optarg) { fprintf(stderr, "hybench ab: --ref-cache wants a directory\n"); bad = 1; } break;
        case O_NOREFC: no_refcache = 1; break;
        case O_ALGOC: algocache = optarg; if (!*optarg) { fprintf(stderr, "hybench ab: --algo-cache wants a directory\n"); bad = 1; } break;
        case O_NOALGOC: no_algocache = 1; break;
        case O_CROSS: cross_machine = 1; break;
        case O_INSTR: instructions = 1; break;
        case O_WTIME: with_time = 1; break;
        case O_CACHESIM: io.cache_sim = 1; break;
        case O_IROUNDS: io.rounds = (int)strtol(optarg, &end, 10); if (*end || io.rounds < 1 || io.rounds > 16) { fprintf(stderr, "hybench ab: --instr-rounds wants 1..16\n"); bad = 1; } break;
        case O_ICALLS: io.calls = (int)strtol(optarg, &end, 10); if (*end || io.calls < 1 || io.calls > 1000) { fprintf(stderr, "hybench ab: --instr-calls wants 1..1000\n"); bad = 1; } break;
        case O_ITHR: {
            io.threshold = strtod(optarg, &end);
            if (*end == '%' && !end[1]) io.threshold /= 100, end++;
            if (*end || !(io.threshold > 0 && io.threshold < 1)) { fprintf(stderr, "hybench ab: --instr-threshold wants a fraction in (0, 1) or a percentage, e.g. 1%%\n"); bad = 1; }
            break;
        }
        case O_SUBFROM: subset_from = (int)strtol(optarg, &end, 10); if (*end || subset_from < 2 || subset_from > AB_MAX_ROUNDS) { fprintf(stderr, "hybench ab: --subset-from wants 2..%d\n", AB_MAX_ROUNDS); bad = 1; } break;
        case O_NONORM: ao.normalize = 0; break;
        case O_REDECIDE: redecide = optarg; break;
        case O_RSTAT:
            if (!strcmp(optarg, "median")) ao.round_quantile = 0.5;
            else if (!strcmp(optarg, "min")) ao.round_quantile = 0;
            else if (!strcmp(optarg, "p10")) ao.round_quantile = 0.1;
            else { fprintf(stderr, "hybench ab: --round-stat median|p10|min\n"); bad = 1; }
            break;
        case O_CURENV:
            if (!strchr(optarg, '=') || optarg[0] == '=' || ncur_env == 16) { fprintf(stderr, "hybench ab: --cur-env wants VAR=VALUE (at most 16)\n"); bad = 1; }
            else cur_env[ncur_env++] = optarg;
            break;
        case O_HELP: case 'h': hb_ab_usage(stdout); return HB_EXIT_OK;
        default: hb_ab_usage(stderr); return HB_EXIT_USAGE;
        }
    }
    (void)has_passes;
    if (npos < 2 && !redecide) { if (!bad) fprintf(stderr, "hybench ab: need BASE and CUR (two hybench executables or build trees)\n"); bad = 1; }
    if (with_time && !instructions) { fprintf(stderr, "hybench ab: --with-time goes with --instructions\n"); bad = 1; }
    if (instructions && redecide) { fprintf(stderr, "hybench ab: --instructions runs its own rounds: not with --redecide\n"); bad = 1; }
    if (redecide && !outdir) outdir = redecide;
    if (ao.min_rounds > max_rounds) ao.min_rounds = max_rounds;
    if (!pin_set) { /* default: the last CPU this process may run on, the others left to the controller and the OS */
        cpu_set_t mine;
        if (sched_getaffinity(0, sizeof mine, &mine) == 0)
            for (int c = CPU_SETSIZE - 1; c >= 0; c--)
                if (CPU_ISSET(c, &mine)) { CPU_ZERO(&no.pin); CPU_SET(c, &no.pin); no.have_pin = 1; break; }
    }
    /* --duet: two CPUs, one per build (which build gets which follows the round order, ABBA); the
     * first two of --pin, else the last two this process may use */
    int duet_cpu[2] = {-1, -1};
    if (duet) {
        cpu_set_t from;
        if (pin_set && no.have_pin) from = no.pin;
        else if (sched_getaffinity(0, sizeof from, &from)) CPU_ZERO(&from);
        int k = 0;
        if (pin_set && no.have_pin) {
            for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
                if (CPU_ISSET(c, &from)) duet_cpu[k++] = c;
        } else {
            for (int c = CPU_SETSIZE - 1; c >= 0 && k < 2; c--)
                if (CPU_ISSET(c, &from)) duet_cpu[1 - k++] = c;
        }
        if (k < 2) { fprintf(stderr, "hybench ab: --duet needs two CPUs (--pin with two, or two this process may use)\n"); bad = 1; }
        if (!lockstep) { fprintf(stderr, "hybench ab: --duet runs the builds in lockstep; it cannot go with --no-lockstep\n"); bad = 1; }
    }
    static side_t sides[2];
    memset(sides, 0, sizeof sides);
    sides[0].name = "base";
    sides[1].name = "cur";
    for (int s = 0; s < 2 && !bad && !redecide; s++)
        if (hb_ab_resolve_exe(pos[s], sides[s].exe, sizeof sides[s].exe)) {
            fprintf(stderr, "hybench ab: %s \"%s\" is neither a hybench executable nor a build tree with build/hybench\n",
                    s ? "CUR" : "BASE", pos[s]);
            bad = 1;
        }
    if (bad) return HB_EXIT_USAGE;
    /* one pass per round, one window per case unless asked otherwise; workload files last */
    fwd[nfwd++] = strdup("--passes");
    fwd[nfwd++] = strdup("1");
    if (!has_reps) { fwd[nfwd++] = strdup("--repetitions"); fwd[nfwd++] = strdup("1"); }
    for (int i = redecide ? 0 : 2; i < npos && nfwd < AB_MAX_FWD - 1; i++) fwd[nfwd++] = strdup(pos[i]);
    /* output folder */
    char host[64] = "host", dir[1024], ts[32], pair[96];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++) if (*p == '.' || *p == '/') { *p = 0; break; }
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
    if (!order_seed_set) order_seed = (unsigned long long)now ^ ((unsigned long long)getpid() << 32);
    snprintf(pair, sizeof pair, "%s-%s-%d-%llx", ts, host, (int)getpid(), order_seed & 0xffffffULL);
    if (outdir) snprintf(dir, sizeof dir, "%s", outdir);
    else { mkdir("results", 0755); snprintf(dir, sizeof dir, "results/ab-%s-%s", ts, host); }
    char rdir[1100];
    snprintf(rdir, sizeof rdir, "%s/rounds", dir);
    if ((mkdir(dir, 0755) && errno != EEXIST) || (mkdir(rdir, 0755) && errno != EEXIST)) {
        fprintf(stderr, "hybench ab: cannot create %s: %s\n", rdir, strerror(errno));
        return HB_EXIT_IO;
    }
    /* the case list when no workload file is named: the gate list, one case per kernel path, drawn up by
     * CUR (cli/ab_gatelist.h; the instruction gate's with its cost cut); --no-gate-list: the list `run` reads */
    const char *const exe[2] = {sides[0].exe, sides[1].exe};
    char *iextra[3], *textra[3];
    int nie = 0, nte = 0;
    if (!redecide && npos == 2 && gate_list) {
        if (instructions && hb_ab_gate_list(exe, fwd, nfwd, 1, &no, dir, iextra, &nie)) return HB_EXIT_USAGE;
        if ((!instructions || with_time) && hb_ab_gate_list(exe, fwd, nfwd, 0, &no, dir, textra, &nte)) return HB_EXIT_USAGE;
    }
    if (instructions && !redecide) {
        for (int k = 0; k < nie; k++) fwd[nfwd + k] = iextra[k]; /* the instruction rounds' list (nfwd + nie below) */
        const int ni = nfwd + nie;
        io.markdown = md;
        io.quiet = quiet;
        if (!with_time) {
            if (js || ju) fprintf(stderr, "hybench ab: --instructions writes Markdown only: --json and --junit are not written\n");
            return hb_ab_instructions(exe, fwd, ni, &no, cur_env, ncur_env, dir, &io, NULL, NULL);
        }
        char imd[1200]; /* both measures: the instruction table beside the time gate's outputs */
        snprintf(imd, sizeof imd, "%s/instructions.md", dir);
        io.markdown = imd;
        irc = hb_ab_instructions(exe, fwd, ni, &no, cur_env, ncur_env, dir, &io, &icases, &nicases);
        if (irc != HB_EXIT_OK && irc != HB_EXIT_REGRESSION && irc != HB_EXIT_INCONCLUSIVE) return irc;
    }
    for (int k = 0; k < nte; k++) fwd[nfwd++] = textra[k];
    fprintf(stderr, "hybench ab: BASE %s\nhybench ab: CUR  %s\nhybench ab: rounds in %s (order seed %llu, ASLR %s%s%s)\n",
            sides[0].exe, sides[1].exe, rdir, order_seed, no.aslr ? "on" : "off", no.hugepages ? ", huge pages" : "",
            no.have_pin ? ", pinned" : "");
    hb_rng rng;
    hb_rng_seed(&rng, order_seed);
    double t_start = hb_now(), t_decide = 0;
    int rounds = 0, rc = HB_EXIT_OK, first_cur = 0;
    hb_cmp_result res = {0};
    int have_res = 0;
    /* served rounds (measure/serve.h): one run per build, every case set up once */
    int serve = 0, serve_started = 0;
    hb_ab_served sv;
    char servecf[1300] = "";
    double serve_setup[2] = {0, 0};
    int serve_cur_first = 0; /* served: the current build set its cases up first (turn by turn) */
    char order[AB_MAX_ROUNDS + 1] = {0};
    size_t undecided = 0;
    const char *stop_why = "the round limit (--rounds)";
    /* a round file without a meta record, of a newer schema or without cases is read and refused by
     * name (load_round: exit 3) */
    hb_load_opts lopt = {.flags = HB_LOAD_NO_META | HB_LOAD_ANY_SCHEMA, .metric = o->metric, .keep = slim_keep};
    char ceilf[1200];
    int have_ceil = 0, have_ceil_plan = !no_share_ceil, lockstep_rounds = 0;
    static long sides_steps[AB_MAX_ROUNDS][2];
    /* the references' on-disk cache: HB_REF_CACHE=DIR in both builds' runs (measure/refcache.h), then
     * each side's --cur-env (which may override it) */
    char refc_env[1300] = "";
    char *side_env[2][18];
    int nside_env[2] = {0, 0};
    if (!no_refcache) {
        if (refcache) snprintf(refc_env, sizeof refc_env, "HB_REF_CACHE=%s", refcache);
        else snprintf(refc_env, sizeof refc_env, "HB_REF_CACHE=%s/refcache", dir);
        side_env[0][nside_env[0]++] = refc_env;
        side_env[1][nside_env[1]++] = refc_env;
    }
    /* the CUDA plugin's algorithm-choice cache: HB_ALGO_CACHE=DIR in both builds' runs, one directory for
     * both, so that a conv2d or attention case runs the same engine in every process of the gate (the
     * key holds a hash of the choice's code: builds whose choice code differs keep apart); emptied with
     * --no-algo-cache, so that one in the caller's environment does not apply either */
    char algoc_env[1300] = "HB_ALGO_CACHE=";
    if (!no_algocache) {
        if (algocache) snprintf(algoc_env, sizeof algoc_env, "HB_ALGO_CACHE=%s", algocache);
        else snprintf(algoc_env, sizeof algoc_env, "HB_ALGO_CACHE=%s/algocache", dir);
    }
    side_env[0][nside_env[0]++] = algoc_env;
    side_env[1][nside_env[1]++] = algoc_env;
    const char *algoc_dir = algoc_env + strlen("HB_ALGO_CACHE=");
    for (int i = 0; i < ncur_env; i++) side_env[1][nside_env[1]++] = cur_env[i];
    if (!redecide && refc_env[0]) fprintf(stderr, "hybench ab: f64 references cached in %s (--no-ref-cache: off)\n", refc_env + 13);
    if (!redecide && algoc_dir[0]) fprintf(stderr, "hybench ab: CUDA algorithm choices cached in %s (--no-algo-cache: off)\n", algoc_dir);
    snprintf(ceilf, sizeof ceilf, "%s/ceilings.jsonl", dir);
    for (int s = 0; s < 2 && !redecide; s++) sides[s].has_ceilf = hb_ab_exe_has_option(sides[s].exe, "--ceilings-from");
    /* later rounds run only the cases still open (write_open_cases), where both builds take --cases-from */
    int can_prune = prune && !redecide && hb_ab_exe_has_option(sides[0].exe, "--cases-from") && hb_ab_exe_has_option(sides[1].exe, "--cases-from");
    if (prune && !redecide && !can_prune)
        fprintf(stderr, "hybench ab: a build has no `run --cases-from`: every round runs every case\n");
    if (!redecide) {
        int has[2] = {0, 0};
        for (int s = 0; s < 2 && !no_serve && lockstep && !duet; s++) has[s] = hb_ab_exe_has_option(sides[s].exe, "--serve-rounds");
        if (no_serve) { /* the default: said only where verbose output is wanted (stderr lists the rounds anyway) */ }
        else if (!lockstep || duet)
            fprintf(stderr, "hybench ab: served rounds take turns in lockstep: with %s every round starts both runs afresh, set-up included\n",
                    duet ? "--duet" : "--no-lockstep");
        else if (!has[0] || !has[1])
            fprintf(stderr, "hybench ab: the %s build has no `run --serve-rounds`: every round starts both runs afresh, set-up "
                    "included (the older way)\n", !has[0] ? "base" : "current");
        else serve = 1;
    }
    int nfwd_all = nfwd, pruned_from = 0;
    char casesf[1300] = "";
    static long open_cases[AB_MAX_ROUNDS + 1]; /* cases subset round r + 1 ran; -1: every case */
    double last_round_s = 0;
    if (redecide) { /* the rounds of an earlier run, as far as both builds have them */
        char rd[1300];
        snprintf(rd, sizeof rd, "%s/rounds", redecide);
        for (int r = 0; r < AB_MAX_ROUNDS; r++) {
            char pb[1400], pc[1400];
            snprintf(pb, sizeof pb, "%s/base-r%02d.jsonl", rd, r + 1);
            snprintf(pc, sizeof pc, "%s/cur-r%02d.jsonl", rd, r + 1);
            if (access(pb, R_OK) || access(pc, R_OK)) break;
            sides[0].path[r] = strdup(pb);
            sides[1].path[r] = strdup(pc);
            if ((rc = load_round(pb, &lopt, &sides[0].run[r])) != HB_EXIT_OK ||
                (rc = load_round(pc, &lopt, &sides[1].run[r])) != HB_EXIT_OK ||
                (rc = check_machine(&sides[0].run[0], &sides[0].run[r], cross_machine)) != HB_EXIT_OK ||
                (rc = check_machine(&sides[0].run[0], &sides[1].run[r], cross_machine)) != HB_EXIT_OK)
                goto done;
            order[r] = '?';
            rounds = r + 1;
        }
        { /* the order and the lockstep rounds the earlier gate recorded (its base.jsonl's meta.ab) */
            char mp[1300];
            snprintf(mp, sizeof mp, "%s/base.jsonl", redecide);
            FILE *mf = fopen(mp, "r");
            char *line = NULL;
            size_t cap = 0;
            json_t *mj = mf && getline(&line, &cap, mf) > 0 ? json_loads(line, 0, NULL) : NULL;
            hb_rec_meta m;
            if (mj && hb_rec_meta_parse(mj, &m) == HB_OK) { /* its struct (results/record.h hb_rec_ab) */
                const hb_rec_ab *ab = &m.ab;
                if (ab->order && strlen(ab->order) >= (size_t)rounds) memcpy(order, ab->order, (size_t)rounds);
                if (isfinite(ab->lockstep_rounds)) lockstep_rounds = (int)ab->lockstep_rounds;
                if (isfinite(ab->subset_from_round)) pruned_from = (int)ab->subset_from_round;
                for (int r = 0; r < rounds && r < (int)ab->subset_cases.n; r++)
                    open_cases[r] = isfinite(ab->subset_cases.v[r]) ? (long)ab->subset_cases.v[r] : -1;
                hb_rec_meta_free(&m);
            }
            json_decref(mj);
            free(line);
            if (mf) fclose(mf);
        }
        stop_why = "re-decided from earlier rounds (--redecide)";
        snprintf(sides[0].exe, sizeof sides[0].exe, "(rounds of %s)", redecide);
        snprintf(sides[1].exe, sizeof sides[1].exe, "(rounds of %s)", redecide);
        max_rounds = 0;
    }
    if (serve) { /* both runs started once; each sets every case up, one after the other */
        hb_ab_build sb[2];
        char sp[2][1300], sl[2][1300];
        hb_ab_noise sn[2] = {no, no};
        snprintf(servecf, sizeof servecf, "%s/cases-open.txt", rdir);
        for (int s = 0; s < 2; s++) {
            snprintf(sp[s], sizeof sp[s], "%s/%s.jsonl", rdir, sides[s].name);
            snprintf(sl[s], sizeof sl[s], "%s/%s-served.log", rdir, sides[s].name);
            sb[s] = (hb_ab_build){sides[s].exe, NULL, sp[s], sl[s], side_env[s], nside_env[s]};
        }
        hb_ab_serve_start(&sv, sb, fwd, nfwd, sn, max_rounds, servecf);
        serve_started = 1;
        char mark[2];
        long st[2];
        /* who sets up first is drawn as a round's order is: a process-wide difference that follows the
         * order of set-up (on 2x H200, a served A/A read every CUR kernel 1-6% slower with base always
         * first: docs/compare.md "Served rounds") then falls on either build */
        serve_cur_first = (int)(hb_rng_next(&rng) >> 63);
        hb_ab_serve_step(&sv, serve_cur_first, HB_LOCKSTEP_GO, mark, serve_setup, st);
        for (int s = 0; s < 2; s++)
            if (mark[s] != HB_LOCKSTEP_PREPARED) {
                fprintf(stderr, "hybench ab: the %s build could not set its cases up: see %s\n", sides[s].name, sl[s]);
                rc = HB_EXIT_USAGE;
                goto done;
            }
        fprintf(stderr, "hybench ab: served rounds: each build set every case up once (base %.1f s, cur %.1f s); a round "
                "now costs only its samples\n", serve_setup[0], serve_setup[1]);
    }
    for (int r = 0; r < max_rounds; r++) {
        /* the next round is taken to last as long as the last one (later rounds run fewer cases) */
        if (r > 0 && hb_now() - t_start + last_round_s > budget) { stop_why = "the time budget (--time-budget)"; break; }
        double t_round = hb_now();
        for (int i = nfwd_all; i < nfwd; i++) free(fwd[i]);
        nfwd = nfwd_all;
        if (casesf[0] && nfwd < AB_MAX_FWD - 2) { fwd[nfwd++] = strdup("--cases-from"); fwd[nfwd++] = strdup(casesf); }
        /* ABBA: the first build of each pair of rounds drawn at random, the second round reversed */
        if (r % 2 == 0) first_cur = (int)(hb_rng_next(&rng) >> 63);
        else first_cur = !first_cur;
        order[r] = first_cur ? 'C' : 'B';
        /* lockstep (the default) from the round that reuses the first run's ceilings on: the two
         * builds take turns case group by case group (hb_ab_run_lockstep); the first round, which measures
         * the ceilings, runs them one after the other */
        int ls_round = lockstep && (r > 0 || !have_ceil_plan);
        hb_ab_noise nos[2] = {no, no};
        if (duet) /* base on the first CPU when base leads the round: each build on each CPU alike */
            for (int s2 = 0; s2 < 2; s2++) {
                CPU_ZERO(&nos[s2].pin);
                CPU_SET(duet_cpu[s2 == 0 ? first_cur : !first_cur], &nos[s2].pin);
                nos[s2].have_pin = 1;
            }
        char path[2][1300], log[2][1300];
        int xs[2] = {0, 0};
        hb_ab_build ba[2];
        for (int s = 0; s < 2; s++) {
            snprintf(path[s], sizeof path[s], "%s/%s-r%02d.jsonl", rdir, sides[s].name, r + 1);
            snprintf(log[s], sizeof log[s], "%s/%s-r%02d.log", rdir, sides[s].name, r + 1);
            ba[s] = (hb_ab_build){sides[s].exe, have_ceil && sides[s].has_ceilf ? ceilf : NULL, path[s], log[s],
                                 side_env[s], nside_env[s]};
        }
        if (serve) {
            char mark[2];
            double secs[2];
            hb_ab_serve_step(&sv, first_cur, casesf[0] ? HB_LOCKSTEP_CASES : HB_LOCKSTEP_GO, mark, secs, sides_steps[r]);
            int xe[2] = {0, 0};
            if (mark[0] != HB_LOCKSTEP_ROUND || mark[1] != HB_LOCKSTEP_ROUND) { hb_ab_serve_end(&sv, xe); serve_started = 0; }
            for (int s = 0; s < 2; s++) {
                sides[s].secs[r] = secs[s];
                xs[s] = mark[s] == HB_LOCKSTEP_ROUND ? 0 : xe[s] ? xe[s] : -1;
            }
            fprintf(stderr, "hybench ab: round %d (served, %s first): base %.1f s, %ld turns; cur %.1f s, %ld turns\n", r + 1,
                    first_cur ? "cur" : "base", secs[0], sides_steps[r][0], secs[1], sides_steps[r][1]);
            lockstep_rounds++;
        } else if (ls_round) {
            double secs[2];
            hb_ab_run_lockstep(ba, fwd, nfwd, nos, first_cur, duet, xs, secs, sides_steps[r]);
            for (int s = 0; s < 2; s++) sides[s].secs[r] = secs[s];
            if (duet)
                fprintf(stderr, "hybench ab: round %d (duet, base on CPU %d, cur on CPU %d): base exit %d, cur exit %d, %.1f s, %ld steps\n",
                        r + 1, duet_cpu[first_cur], duet_cpu[!first_cur], xs[0], xs[1], secs[0] > secs[1] ? secs[0] : secs[1],
                        sides_steps[r][0]);
            else
                fprintf(stderr, "hybench ab: round %d (lockstep, %s first): base exit %d, %.1f s, %ld turns; cur exit %d, %.1f s, %ld turns\n",
                        r + 1, first_cur ? "cur" : "base", xs[0], secs[0], sides_steps[r][0], xs[1], secs[1], sides_steps[r][1]);
            lockstep_rounds++;
        }
        for (int k = 0; k < 2; k++) {
            int s = k == 0 ? first_cur : !first_cur;
            side_t *sd = &sides[s];
            int x = xs[s];
            if (!ls_round && !serve) {
                ba[s].ceilf = have_ceil && sd->has_ceilf ? ceilf : NULL;
                x = hb_ab_run_build(sd->exe, fwd, nfwd, ba[s].ceilf, path[s], log[s], &nos[s], ba[s].env, ba[s].nenv, &sd->secs[r]);
                fprintf(stderr, "hybench ab: round %d %s: exit %d, %.1f s\n", r + 1, sd->name, x, sd->secs[r]);
            }
            /* ok, wrong (5) and failed/crashed (8) runs have records: their cases decide; others do not */
            if (x != 0 && x != HB_EXIT_WRONG && x != HB_EXIT_FAILED) {
                fprintf(stderr, "hybench ab: the %s build could not run the case list (exit %d): see %s\n", sd->name, x, log[s]);
                rc = HB_EXIT_USAGE;
                goto done;
            }
            sd->path[r] = strdup(path[s]);
            if (!have_ceil && !no_share_ceil) have_ceil = hb_ab_copy_ceilings(path[s], ceilf) == 0;
            if ((rc = load_round(path[s], &lopt, &sd->run[r])) != HB_EXIT_OK) goto done;
        }
        /* against base round 1, which the first round always loads. Both builds ran here, taking turns,
         * so a fingerprint that differs (a build that enables another backend, or links another
         * library version) is said, not refused: --cross-machine is implied for a live gate. */
        for (int s = 0; s < 2; s++)
            if ((rc = check_machine(&sides[0].run[0], &sides[s].run[r], 1)) != HB_EXIT_OK) goto done;
        rounds = r + 1;
        last_round_s = hb_now() - t_round;
        /* decide from --subset-from (the next round's subset) or --min-rounds (the early stop) on */
        if (rounds >= ao.min_rounds || (can_prune && rounds >= subset_from)) {
            double t0 = hb_now();
            if (have_res) hb_cmp_result_free(&res);
            if (decide(sides, rounds, &ao, &res, &undecided) != HB_OK) {
                rc = HB_EXIT_USAGE;
                goto done;
            }
            have_res = 1;
            t_decide += hb_now() - t0;
            fprintf(stderr, "hybench ab: after %d rounds: %d gate failures, %zu cases undecided\n", rounds, res.fails,
                    undecided);
            if (undecided == 0 && rounds >= ao.min_rounds) { stop_why = "every case decided"; break; }
            if (can_prune && rounds >= subset_from && rounds < max_rounds) {
                snprintf(casesf, sizeof casesf, "%s/cases-r%02d.txt", rdir, rounds + 1);
                long k = write_open_cases(&res, casesf);
                if (k == 0) { /* every case decided before --min-rounds: full rounds until the early stop may come */
                    unlink(casesf);
                    casesf[0] = 0;
                    open_cases[rounds] = -1;
                } else if (k < 0) {
                    fprintf(stderr, "hybench ab: cannot write %s: %s; every round runs every case\n", casesf, strerror(errno));
                    casesf[0] = 0;
                    can_prune = 0;
                } else {
                    if (!pruned_from) pruned_from = rounds + 1;
                    open_cases[rounds] = k;
                    if (serve && write_open_cases(&res, servecf) != k) {
                        fprintf(stderr, "hybench ab: cannot write %s: every round runs every case\n", servecf);
                        casesf[0] = 0;
                        can_prune = 0;
                    }
                    fprintf(stderr, "hybench ab: round %d runs the %ld cases still open (%s)\n", rounds + 1, k, casesf);
                }
            }
        }
    }
    if (serve_started) { int xe[2]; hb_ab_serve_end(&sv, xe); serve_started = 0; }
    if (!have_res && rounds >= 1) {
        if (decide(sides, rounds, &ao, &res, &undecided) != HB_OK) {
            rc = HB_EXIT_USAGE;
            goto done;
        }
        have_res = 1;
    }
    if (!have_res) { fprintf(stderr, "hybench ab: no round completed\n"); rc = HB_EXIT_USAGE; goto done; }
    {
        double total = hb_now() - t_start, run_s[2] = {0, 0};
        for (int s = 0; s < 2; s++)
            for (int r = 0; r < rounds; r++) run_s[s] += sides[s].secs[r];
        /* the gate as it ended (ab_account.h): the merged files' meta, the JSON verdict, the method */
        const char *const exes[2] = {sides[0].exe, sides[1].exe};
        hb_ab_account acc = {
            .rounds = rounds, .order = order, .stop_why = stop_why, .total_s = total, .run_s = {run_s[0], run_s[1]},
            .decide_s = t_decide, .undecided = undecided, .tested = res.tested, .lockstep_rounds = lockstep_rounds,
            .served = serve, .serve_setup_s = {serve_setup[0], serve_setup[1]}, .serve_cur_first = serve_cur_first,
            .duet = duet, .duet_cpu = {duet_cpu[0], duet_cpu[1]},
            .ref_cache = refc_env[0] ? refc_env + strlen("HB_REF_CACHE=") : NULL, .algo_cache = algoc_dir[0] ? algoc_dir : NULL,
            .subset_from = pruned_from, .open_cases = open_cases, .round_s = {sides[0].secs, sides[1].secs},
            .steps = (const long (*)[2])sides_steps, .noise = &no};
        /* both builds' results files */
        hb_run merged[2] = {{0}, {0}};
        char mpath[2][1200];
        for (int s = 0; s < 2; s++) {
            snprintf(mpath[s], sizeof mpath[s], "%s/%s.jsonl", dir, sides[s].name);
            int fd = open(mpath[s], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
            /* how the pair ran, in the merged file's meta record (results/record.h hb_rec_ab) */
            hb_rec_ab ab;
            hb_rec_clear(&hb_rec_ab_table, &ab);
            hb_status ast = hb_ab_pair_fill(&ab, &acc, pair, s, exes, (long long)order_seed);
            const hb_run *rr[AB_MAX_ROUNDS];
            for (int r = 0; r < rounds; r++) rr[r] = &sides[s].run[r];
            hb_status wst = ast ? ast : fd < 0 ? HB_EDEVICE
                                               : hb_ab_write_merged(fd, rr, (const char *const *)sides[s].path, rounds, &res, s,
                                                                    o->metric, &ab);
            hb_rec_release(&hb_rec_ab_table, &ab);
            if (wst != HB_OK || close(fd)) {
                fprintf(stderr, "hybench ab: cannot write %s\n", mpath[s]);
                rc = HB_EXIT_IO;
                goto done;
            }
            hb_load_opts mo = {.flags = 0, .metric = o->metric, .keep = slim_keep};
            if (hb_run_load_opts(mpath[s], &mo, &merged[s], err, sizeof err) != HB_OK) {
                fprintf(stderr, "hybench ab: %s\n", err);
                rc = HB_EXIT_IO;
                goto done;
            }
        }
        char method[4096];
        hb_ab_method_text(method, sizeof method, &acc, &ao, o);
        o->method_md = method;
        int io_fail = 0;
        if (md || !quiet) {
            FILE *f = md ? open_out(md) : stdout;
            if (!f || hb_cmp_write_markdown(f, &res, &merged[0], &merged[1], o) != HB_OK || close_out(f)) {
                fprintf(stderr, "hybench ab: cannot write %s\n", md ? md : "stdout");
                io_fail = 1;
            }
        }
        if (js) {
            /* the gate's own figures beside compare's (results/record.h hb_rec_ab_summary) */
            hb_rec_ab_summary sm;
            hb_rec_clear(&hb_rec_ab_summary_table, &sm);
            json_t *j = hb_ab_summary_fill(&sm, &acc) ? NULL : hb_ab_verdict_json(&res, &merged[0], &merged[1], o, &sm);
            hb_rec_release(&hb_rec_ab_summary_table, &sm);
            int b = !j || (strcmp(js, "-") ? json_dump_file(j, js, JSON_INDENT(1)) != 0
                                           : (json_dumpf(j, stdout, JSON_INDENT(1)) != 0 || fputc('\n', stdout) == EOF));
            json_decref(j);
            if (b) { fprintf(stderr, "hybench ab: cannot write %s\n", js); io_fail = 1; }
        }
        if (ju) {
            FILE *f = open_out(ju);
            if (!f || hb_cmp_write_junit(f, &res, &merged[0], &merged[1], o) != HB_OK || close_out(f)) {
                fprintf(stderr, "hybench ab: cannot write %s\n", ju);
                io_fail = 1;
            }
        }
        fprintf(stderr, "hybench ab: %s: %d rounds (%s), %zu matched, %zu regressions, %zu improvements, %d gate failures, "
                        "%zu undecided; %.0f s (base runs %.0f s, current runs %.0f s, decisions %.1f s); %s %s\n",
                res.outcome == HB_CMP_FAIL ? "FAIL" : res.outcome == HB_CMP_INCONCLUSIVE ? "INCONCLUSIVE" : "pass", rounds,
                stop_why, res.matched, res.count[HB_CMP_REGRESSION], res.count[HB_CMP_IMPROVEMENT], res.fails, res.undecided,
                total, run_s[0], run_s[1], t_decide, mpath[0], mpath[1]);
        rc = res.outcome == HB_CMP_FAIL ? HB_EXIT_REGRESSION : res.outcome == HB_CMP_INCONCLUSIVE ? HB_EXIT_INCONCLUSIVE : HB_EXIT_OK;
        if (with_time) { /* both measures: which flagged each case, and one verdict (the worse) */
            FILE *f = md || !quiet ? (md && strcmp(md, "-") ? fopen(md, "a") : stdout) : NULL;
            if (f) hb_ab_write_measures(f, &res, icases, nicases);
            if (f && f != stdout && fclose(f)) io_fail = 1;
            if (rc == HB_EXIT_REGRESSION || irc == HB_EXIT_REGRESSION) rc = HB_EXIT_REGRESSION;
            else if (rc == HB_EXIT_INCONCLUSIVE || irc == HB_EXIT_INCONCLUSIVE) rc = HB_EXIT_INCONCLUSIVE;
        }
        if (io_fail && rc != HB_EXIT_REGRESSION) rc = HB_EXIT_IO;
        hb_run_free(&merged[0]);
        hb_run_free(&merged[1]);
    }
done:
    if (serve_started) { int xe[2]; hb_ab_serve_end(&sv, xe); }
    free(icases);
    if (have_res) hb_cmp_result_free(&res);
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < AB_MAX_ROUNDS; r++) { hb_run_free(&sides[s].run[r]); free(sides[s].path[r]); }
    for (int i = 0; i < nfwd; i++) free(fwd[i]);
    return rc;
}
