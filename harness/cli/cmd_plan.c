/*
 * cmd_plan.c - `hybench plan RESULTS.jsonl --model M`: a model's device plans with their predicted
 * times under the costs a results file measured (analysis/plan.h, plan_costs.h; docs/plans.md):
 * every single-device plan, the seed's heuristic, the greedy plan of the routing table, and the
 * optimal plan, per transfer route. `--workload` prints the workload file that measures what the
 * model's plans need.
 */
#include "analysis/plan_costs.h"
#include "cli/commands.h"
#include "core/models.h"
#include "core/stats.h"
#include "measure/replay.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void plan_usage(FILE *f)
{
    fputs("usage: hybench plan RESULTS.jsonl --model M [--json] [--backend LIST] [--route LIST] [--ane-standin B]\n"
          "       hybench plan --model M --workload\n"
          "  The model's device plans, each op's device and the predicted time (docs/plans.md):\n"
          "  every single-device plan, the seed's heuristic (select_optimal_device), the greedy plan\n"
          "  (each op on the backend routing.json names) and the optimal plan (dynamic programming over\n"
          "  the ops; the state is where each live tensor is, so residual branches are costed), per\n"
          "  transfer route. An op costs its compute median (mode resident, else f32): weights stay on\n"
          "  their device; the activations that move between memories cost the route's measured copies.\n"
          "  --model M          tinyllama-decode, tinyllama-prefill512, resnet50-block, resnet50-mb1,\n"
          "                     resnet50-mb64\n"
          "  --json             one JSON document (each plan's per-op device, predicted time, bytes crossing)\n"
          "  --backend LIST     plan over these backends (ids or types; default: every available backend\n"
          "                     of the file with an ok case, except the reference cpu-ref)\n"
          "  --route LIST       pageable,pinned,mapped (default: each route every device measured)\n"
          "  --ane-standin B    the backend standing in for the Neural Engine in the seed's heuristic\n"
          "                     (default: the GPU rule's backend, cuda, else opencl, else cpu)\n"
          "  --replay           run every plan end to end in this process on the devices it names (measure/replay.h):\n"
          "                     weights placed once, the real copies between devices on each route, sampled\n"
          "                     to a CI like a case, the output verified against the f64 reference; writes\n"
          "                     plan records (docs/results-schema.md) to --out and a table to stdout\n"
          "  --mode LIST        replay modes: f32, convert (default f32,convert)\n"
          "  --out FILE         replay results file (default results/<date>-replay-<model>-<host>.jsonl);\n"
          "                     an existing file is refused without --force\n"
          "  --budget S, --ci-target F, --min-samples N, --max-samples N, --seed N, --cold: sampling, as run's\n"
          "  --workload         print a workload file (docs/workloads.md) with every case the model's\n"
          "                     plans need, for `hybench run --mode f32,resident`; no results file\n"
          "  Exit status: 0 written; 2 usage, an unknown model or an unreadable results file;\n"
          "  6 --backend names no available backend of the file; 7 the output cannot be written;\n"
          "  9 the results file lacks an op, shape, backend or transfer route a plan needs (named);\n"
          "  --replay: 5 a plan's output was wrong; 8 a plan failed; 6 a backend of the file is not available here.\n",
          f);
}

/* The model's cases as a workload file: one section per distinct op and shape. */
static int print_workload(const hb_model *m)
{
    printf("# The cases `hybench plan --model %s` needs: %s.\n# Run with `hybench run --mode f32,resident --dtype f32 FILE` "
           "(f32 gives the routing table's times and the copies' latency, resident the ops' costs on devices).\n",
           m->name, m->what);
    int k = 0;
    for (int i = 0; i < m->n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = m->nodes[j].c.op == m->nodes[i].c.op && !memcmp(&m->nodes[j].c.shape, &m->nodes[i].c.shape, sizeof m->nodes[i].c.shape);
        if (seen) continue;
        char sh[256];
        printf("\n[%s.%d]\n# %s\nop = %s\nshape = %s\n", m->name, k++, m->nodes[i].label, hb_op_get(m->nodes[i].c.op)->name,
               hb_shape_format(m->nodes[i].c.op, &m->nodes[i].c.shape, sh, sizeof sh));
    }
    return ferror(stdout) ? HB_EXIT_IO : HB_EXIT_OK;
}

/* What --replay needs beyond the plans. */
typedef struct replay_args {
    int on;
    unsigned modes;     /* bit per hb_mode: f32, convert */
    const char *out;
    int force;
    hb_options o;       /* sampling */
    FILE *f;            /* the results file */
    hb_instance inst[HB_PLAN_MAXDEV];
    int nfail, nwrong, nplans;
    double t0;          /* hb_now() when the results file was opened: the end record's elapsed_s */
    json_t *table;      /* rows printed at the end */
} replay_args;

/* Open the results file and write its meta and backend records. */
static int replay_begin(replay_args *ra, const hb_plan_costs *c, const char *costs, char **argv, int argc)
{
    char host[64] = "host", ts[32], path[512], err[512];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++) if (*p == '.' || *p == '/') { *p = 0; break; }
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
    char run_id[160];
    snprintf(run_id, sizeof run_id, "%s-replay-%s-%s", ts, c->model->name, host);
    if (ra->out) snprintf(path, sizeof path, "%s", ra->out);
    else { mkdir("results", 0755); snprintf(path, sizeof path, "results/%s.jsonl", run_id); }
    if (hb_replay_open(c, ra->inst, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench plan --replay: %s\n", err); return HB_EXIT_NO_BACKEND; }
    if (!(ra->f = fopen(path, ra->force ? "w" : "wx"))) {
        fprintf(stderr, "hybench plan --replay: cannot write %s: %s\n", path, errno == EEXIST ? "it exists (--force replaces it)" : strerror(errno));
        hb_replay_close(c, ra->inst);
        return HB_EXIT_IO;
    }
    size_t jl = 16;
    for (int i = 0; i < argc; i++) jl += strlen(argv[i]) + 1;
    char *joined = calloc(jl + 8, 1);
    if (joined) {
        strcpy(joined, "hybench");
        for (int i = 0; i < argc; i++) { strcat(joined, " "); strcat(joined, argv[i]); }
    }
    ra->o.argv_joined = joined;
    char *wl[1] = {(char *)costs};
    hb_meta mi;
    json_t *meta = NULL;
    if (hb_meta_fill(&mi, &ra->o, run_id, wl, 1) == HB_OK) {
        if (HB_REC_SET(hb_rec_meta, &mi.rec, replay_of, costs) == HB_OK) meta = hb_rec_meta_json(&mi.rec);
        hb_meta_release(&mi);
    }
    if (meta) {
        json_dumpf(meta, ra->f, JSON_COMPACT);
        fputc('\n', ra->f);
    } else fprintf(stderr, "hybench plan --replay: %s: no meta record (out of memory)\n", path);
    json_decref(meta);
    free(joined);
    ra->o.argv_joined = NULL;
    for (int d = 0; d < c->ndev; d++) {
        json_t *b = hb_backend_record(&ra->inst[d], NULL, 0); /* as a run writes it: one machine, one fingerprint */
        if (!b) continue;
        json_dumpf(b, ra->f, JSON_COMPACT);
        fputc('\n', ra->f);
        json_decref(b);
    }
    fprintf(stderr, "hybench plan --replay: writing %s\n", path);
    ra->table = json_array();
    ra->t0 = hb_now();
    return HB_EXIT_OK;
}

/* Replay every plan of one route in every mode asked (the plans of a mode together, in rounds:
 * measure/replay.h hb_replay_plans); records to the file, rows to the table. */
static void replay_route(replay_args *ra, const hb_plan_costs *c, int rt, const hb_plan_named *p, int np, const char *costs)
{
    static const hb_mode modes[] = {HB_MODE_F32, HB_MODE_CONVERT};
    json_t **recs = calloc((size_t)(np > 0 ? np : 1), sizeof *recs);
    hb_status *sts = calloc((size_t)(np > 0 ? np : 1), sizeof *sts);
    if (!recs || !sts) { free(recs); free(sts); ra->nfail += np; return; }
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
        if (!(ra->modes & (1u << modes[mi]))) continue;
        hb_replay_plans(c, p, np, rt, modes[mi], ra->inst, &ra->o, costs, recs, sts);
        for (int k = 0; k < np; k++) {
            json_t *rec = recs[k];
            hb_status st = sts[k];
            if (!rec) { ra->nfail++; continue; }
            /* the record read into its struct, its schema set, written from the struct (results/) */
            hb_rec_plan pr_rec;
            json_t *out = NULL;
            if (hb_rec_plan_parse(rec, &pr_rec) == HB_OK &&
                (HB_REC_SET(hb_rec_plan, &pr_rec, schema, HB_SCHEMA_VERSION) || !(out = hb_rec_plan_json(&pr_rec))))
                hb_rec_plan_free(&pr_rec);
            json_decref(rec);
            if (!(rec = out)) { ra->nfail++; continue; } /* out of memory */
            json_dumpf(rec, ra->f, JSON_COMPACT);
            fputc('\n', ra->f);
            fflush(ra->f);
            ra->nplans++;
            if (st == HB_EWRONG) ra->nwrong++;
            else if (st != HB_OK) ra->nfail++;
            fprintf(stderr, "  %-24s %-8s %-7s %s", p[k].name, rt < 0 ? "none" : hb_route_name(rt), hb_mode_name(modes[mi]), hb_status_name(st));
            /* a phases.total that is no number printed 0, as json_real_value read it */
            double tm = pr_rec.phase[HB_PH_TOTAL].median;
            if (pr_rec.has_phase[HB_PH_TOTAL]) fprintf(stderr, "  %.4g ms (predicted %.4g ms)", (isnan(tm) ? 0 : tm) * 1e3, p[k].res.total_s * 1e3);
            else fprintf(stderr, "  %s", pr_rec.reason);
            hb_rec_plan_free(&pr_rec);
            fputc('\n', stderr);
            json_array_append_new(ra->table, rec);
        }
    }
    free(recs);
    free(sts);
}

/* The table of the replays, the end record, the file closed. Returns the exit status. */
static int replay_end(replay_args *ra, const hb_plan_costs *c)
{
    printf("\n## Replayed (%s, this process, every figure measured in this run)\n\n", c->model->name);
    printf("| plan | route | mode | measured (95%% CI) | predicted | predicted vs measured | measured - predicted, by cause | bytes crossing | chain case | rel. error | status |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    size_t i;
    json_t *rec;
    json_array_foreach(ra->table, i, rec) {
        hb_rec_plan pl;
        if (hb_rec_plan_parse(rec, &pl) != HB_OK) { printf("| (out of memory) |\n"); continue; }
        const hb_rec_stats *tot = &pl.phase[HB_PH_TOTAL];
        double med = tot->median, lo = tot->ci_lo, hi = tot->ci_hi, pr = pl.predicted_s;
        double ch = pl.chain_case_s;
        printf("| %s | %s | %s | ", pl.plan, pl.route, pl.mode);
        if (med > 0) printf("%.4g ms [%.4g, %.4g] | ", med * 1e3, lo * 1e3, hi * 1e3);
        else printf("- | ");
        printf("%.4g ms | ", pr * 1e3);
        if (med > 0 && !strcmp(pl.mode, "f32")) printf("%+.1f%% | ", (pr / med - 1) * 100);
        else printf("- | ");
        char split[200];
        printf("%s | ", hb_plan_error_split_str(&pl, split, sizeof split));
        printf("%.0f B | ", pl.bytes_crossing);
        /* the chain case sampled in the same rounds (measure/replay.c; its layer where compared so,
         * docs/results-schema.md "chain_in_rounds"), else the costs file's */
        json_t *cr = json_object_get(rec, "chain_in_rounds");
        const char *cmp = json_string_value(json_object_get(cr, "compared"));
        json_t *cs = json_object_get(cr, cmp && !strncmp(cmp, "phases.device", 13) ? "layer" : "total");
        const double cmed = json_number_value(json_object_get(cs, "median"));
        if (cmed > 0)
            printf("%.4g ms [%.4g, %.4g] same rounds, replay/chain %.3f | ", cmed * 1e3, json_number_value(json_object_get(cs, "ci_lo")) * 1e3,
                   json_number_value(json_object_get(cs, "ci_hi")) * 1e3, json_number_value(json_object_get(cr, "replay_over_chain")));
        else if (ch > 0) printf("%.4g ms | ", ch * 1e3);
        else printf("- | ");
        double re = pl.rel_err;
        if (re >= 0) printf("%.2g | ", re);
        else printf("- | ");
        const char *why = pl.reason;
        printf("%s%s%s |\n", pl.status, why ? ": " : "", why ? why : "");
        hb_rec_plan_free(&pl);
    }

    /* the end record: no cases, the plans replayed (its struct written by results/) */
    hb_rec_end er;
    memset(&er, 0, sizeof er);
    hb_rec_clear(&hb_rec_end_table, &er);
    const int none[HB_STATUS_COUNT] = {0}; /* a replay's records are plans, not cases */
    hb_status es = hb_end_fill(&er, 0, none, hb_now() - ra->t0, 1, 0);
#define SET(m, x) (es = es ? es : HB_REC_SET(hb_rec_end, &er, m, x))
    SET(schema, HB_SCHEMA_VERSION);
    SET(plans, ra->nplans);
#undef SET
    json_t *e = es ? NULL : hb_rec_end_json(&er);
    hb_rec_end_free(&er);
    if (e) {
        json_dumpf(e, ra->f, JSON_COMPACT);
        fputc('\n', ra->f);
        json_decref(e);
    } else fprintf(stderr, "hybench plan --replay: out of memory writing the end record\n");
    json_decref(ra->table);
    int bad = fclose(ra->f) != 0;
    hb_replay_close(c, ra->inst);
    if (bad) { fprintf(stderr, "hybench plan --replay: cannot write the results file\n"); return HB_EXIT_IO; }
    return ra->nwrong ? HB_EXIT_WRONG : ra->nfail ? HB_EXIT_FAILED : HB_EXIT_OK;
}

int hb_cmd_plan(int argc, char **argv)
{
    static const struct option lo[] = {{"model", required_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
                                       {"backend", required_argument, NULL, 'b'}, {"route", required_argument, NULL, 'r'},
                                       {"ane-standin", required_argument, NULL, 'a'}, {"workload", no_argument, NULL, 'w'},
                                       {"replay", no_argument, NULL, 'R'}, {"mode", required_argument, NULL, 'M'},
                                       {"out", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'F'},
                                       {"budget", required_argument, NULL, 'B'}, {"ci-target", required_argument, NULL, 'C'},
                                       {"min-samples", required_argument, NULL, 'n'}, {"max-samples", required_argument, NULL, 'N'},
                                       {"seed", required_argument, NULL, 'S'}, {"cold", no_argument, NULL, 'c'},
                                       {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    replay_args ra;
    memset(&ra, 0, sizeof ra);
    ra.modes = (1u << HB_MODE_F32) | (1u << HB_MODE_CONVERT);
    ra.o = (hb_options){.budget_s = 0.5, .ci_target = 0.02, .min_samples = 5, .max_samples = 300, .seed = 42, .repetitions = 1, .passes = 1};
    char *end;
    const char *model = NULL, *backends = NULL, *routes = NULL, *ane = NULL;
    int json = 0, workload = 0, ch;
    optind = 0; /* GNU: full re-initialisation */
    while ((ch = getopt_long(argc, argv, "m:jb:r:a:whRM:o:FB:C:n:N:S:c", lo, NULL)) != -1) {
        switch (ch) {
        case 'm': model = optarg; break;
        case 'j': json = 1; break;
        case 'b': backends = optarg; break;
        case 'r': routes = optarg; break;
        case 'a': ane = optarg; break;
        case 'w': workload = 1; break;
        case 'R': ra.on = 1; break;
        case 'o': ra.out = optarg; break;
        case 'F': ra.force = 1; break;
        case 'c': ra.o.cold = 1; break;
        case 'M': {
            char tmp[128];
            snprintf(tmp, sizeof tmp, "%s", optarg);
            ra.modes = 0;
            for (char *t = strtok(tmp, ","); t; t = strtok(NULL, ","))
                if (!strcmp(t, "f32")) ra.modes |= 1u << HB_MODE_F32;
                else if (!strcmp(t, "convert")) ra.modes |= 1u << HB_MODE_CONVERT;
                else { fprintf(stderr, "hybench plan: --mode %s: a plan is replayed in f32 or convert\n", t); return HB_EXIT_USAGE; }
            break;
        }
        case 'B': case 'C': {
            double v = strtod(optarg, &end);
            if (*end || !(v > 0)) { fprintf(stderr, "hybench plan: --%s %s: a positive number\n", ch == 'B' ? "budget" : "ci-target", optarg); return HB_EXIT_USAGE; }
            if (ch == 'B') ra.o.budget_s = v; else ra.o.ci_target = v;
            break;
        }
        case 'n': case 'N': case 'S': {
            long long v = strtoll(optarg, &end, 10);
            if (*end || v < (ch == 'S' ? 0 : 1) || v > 100000) { fprintf(stderr, "hybench plan: %s: a count\n", optarg); return HB_EXIT_USAGE; }
            if (ch == 'n') ra.o.min_samples = (int)v; else if (ch == 'N') ra.o.max_samples = (int)v; else ra.o.seed = (unsigned long long)v;
            break;
        }
        case 'h': plan_usage(stdout); return HB_EXIT_OK;
        default: plan_usage(stderr); return HB_EXIT_USAGE;
        }
    }
    if (!model) { fprintf(stderr, "hybench plan: --model is required\n"); plan_usage(stderr); return HB_EXIT_USAGE; }
    if (ra.o.max_samples < ra.o.min_samples) ra.o.max_samples = ra.o.min_samples;
    if (ra.on && (json || workload)) { fprintf(stderr, "hybench plan: --replay writes a results file and a table; not with --json or --workload\n"); return HB_EXIT_USAGE; }
    if (!ra.modes) { fprintf(stderr, "hybench plan: --mode: no mode\n"); return HB_EXIT_USAGE; }
    if (routes) {
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s", routes);
        for (char *t = strtok(tmp, ","); t; t = strtok(NULL, ","))
            if (hb_route_parse(t) < 0) { fprintf(stderr, "hybench plan: --route %s: unknown route (pageable, pinned, mapped)\n", t); return HB_EXIT_USAGE; }
    }
    char err[4096];
    hb_model m;
    hb_status st = hb_model_build(model, &m, err, sizeof err);
    if (st != HB_OK) { fprintf(stderr, "hybench plan: %s\n", err); return st == HB_ENOMEM ? HB_EXIT_FAILED : HB_EXIT_USAGE; }
    if (workload) {
        int rc = print_workload(&m);
        hb_model_free(&m);
        return rc;
    }
    if (argc - optind != 1) {
        fprintf(stderr, "hybench plan: %s\n", argc - optind < 1 ? "no results file given" : "one results file only");
        hb_model_free(&m);
        return HB_EXIT_USAGE;
    }
    const char *path = argv[optind];
    hb_run r;
    hb_load_opts lopt = {HB_LOAD_STRICT, NULL, NULL};
    if (hb_run_load_opts(path, &lopt, &r, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench plan: %s\n", err);
        hb_model_free(&m);
        return HB_EXIT_USAGE;
    }
    hb_plan_costs c;
    hb_plan_costs_why why;
    int rc = HB_EXIT_OK;
    st = hb_plan_costs_build(&r, &m, backends, routes, &c, &why, err, sizeof err);
    if (st != HB_OK) {
        if (st == HB_EINVAL && why == HB_PLAN_COSTS_MISSING)
            fprintf(stderr, "hybench plan: %s\n  (`hybench plan --model %s --workload` prints a workload file with every case the model needs)\n", err,
                    m.name);
        else fprintf(stderr, "hybench plan: %s\n", err);
        rc = st == HB_ENOMEM ? HB_EXIT_FAILED : why == HB_PLAN_COSTS_MISSING ? HB_EXIT_INCOMPLETE : backends ? HB_EXIT_NO_BACKEND : HB_EXIT_USAGE;
        hb_run_free(&r);
        hb_model_free(&m);
        return rc;
    }
    int gpu, anes, cpu;
    if (hb_plan_seed_devices(&c, ane, &gpu, &anes, &cpu, &why, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench plan: %s\n", err);
        rc = why == HB_PLAN_COSTS_MISSING ? HB_EXIT_INCOMPLETE : HB_EXIT_USAGE;
        goto done;
    }
    if (ra.on) hb_replay_wait_policy(&c, argc, argv); /* may re-execute this command (OpenMP's wait policy) */
    if (ra.on && (rc = replay_begin(&ra, &c, path, argv, argc)) != HB_EXIT_OK) goto done;
    json_t *doc = json ? hb_plan_json_head(&c, path, gpu, anes, cpu) : NULL, *jroutes = json_array();
    if (doc) json_object_set_new(doc, "routes", jroutes);
    else {
        json_decref(jroutes);
        jroutes = NULL;
        hb_plan_write_head(stdout, &c, path, gpu, anes, cpu);
    }
    for (int rt = c.nmem > 1 ? 0 : -1; rt < (c.nmem > 1 ? HB_ROUTE_COUNT : 0); rt++) {
        if (rt >= 0 && !c.route_ok[rt]) continue;
        hb_plan_named *p;
        int np;
        st = hb_plan_costs_plans(&c, rt, ane, &p, &np, &why, err, sizeof err);
        if (st != HB_OK) {
            fprintf(stderr, "hybench plan: %s\n", err);
            rc = st == HB_ENOMEM ? HB_EXIT_FAILED : HB_EXIT_USAGE;
            break;
        }
        if (doc) json_array_append_new(jroutes, hb_plan_json_route(&c, rt, p, np));
        else hb_plan_write_route(stdout, &c, rt, p, np);
        if (ra.on) replay_route(&ra, &c, rt, p, np, path);
        hb_plan_named_free(p, np);
    }
    if (doc && rc == HB_EXIT_OK) {
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
    }
    json_decref(doc);
    if (ra.on) {
        int rr = replay_end(&ra, &c);
        if (rc == HB_EXIT_OK) rc = rr;
    }
    if (fflush(stdout) || ferror(stdout)) { fprintf(stderr, "hybench plan: cannot write the output\n"); rc = HB_EXIT_IO; }
done:
    hb_plan_costs_free(&c);
    hb_run_free(&r);
    hb_model_free(&m);
    return rc;
}
