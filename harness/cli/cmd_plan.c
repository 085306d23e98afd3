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
#include <getopt.h>
#include <stdio.h>
#include <string.h>

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
          "  --workload         print a workload file (docs/workloads.md) with every case the model's\n"
          "                     plans need, for `hybench run --mode f32,resident`; no results file\n"
          "  Exit status: 0 written; 2 usage, an unknown model or an unreadable results file;\n"
          "  6 --backend names no available backend of the file; 7 the output cannot be written;\n"
          "  9 the results file lacks an op, shape, backend or transfer route a plan needs (named).\n",
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

int hb_cmd_plan(int argc, char **argv)
{
    static const struct option lo[] = {{"model", required_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
                                       {"backend", required_argument, NULL, 'b'}, {"route", required_argument, NULL, 'r'},
                                       {"ane-standin", required_argument, NULL, 'a'}, {"workload", no_argument, NULL, 'w'},
                                       {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *model = NULL, *backends = NULL, *routes = NULL, *ane = NULL;
    int json = 0, workload = 0, ch;
    optind = 0; /* GNU: full re-initialisation */
    while ((ch = getopt_long(argc, argv, "m:jb:r:a:wh", lo, NULL)) != -1) {
        switch (ch) {
        case 'm': model = optarg; break;
        case 'j': json = 1; break;
        case 'b': backends = optarg; break;
        case 'r': routes = optarg; break;
        case 'a': ane = optarg; break;
        case 'w': workload = 1; break;
        case 'h': plan_usage(stdout); return HB_EXIT_OK;
        default: plan_usage(stderr); return HB_EXIT_USAGE;
        }
    }
    if (!model) { fprintf(stderr, "hybench plan: --model is required\n"); plan_usage(stderr); return HB_EXIT_USAGE; }
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
        hb_plan_named_free(p, np);
    }
    if (doc && rc == HB_EXIT_OK) {
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
    }
    json_decref(doc);
    if (fflush(stdout) || ferror(stdout)) { fprintf(stderr, "hybench plan: cannot write the output\n"); rc = HB_EXIT_IO; }
done:
    hb_plan_costs_free(&c);
    hb_run_free(&r);
    hb_model_free(&m);
    return rc;
}
