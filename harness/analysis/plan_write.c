/* plan_write.c - a model's plans as Markdown tables and as JSON (plan_costs.h; docs/plans.md). */
#include "analysis/plan_costs.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *fmt_s(double s, char *b, size_t n)
{
    if (!isfinite(s)) snprintf(b, n, "-");
    else if (s < 1e-3) snprintf(b, n, "%.1f us", s * 1e6);
    else if (s < 1) snprintf(b, n, "%.3f ms", s * 1e3);
    else snprintf(b, n, "%.3f s", s);
    return b;
}

static const char *fmt_bytes(double v, char *b, size_t n)
{
    if (v >= 1048576) snprintf(b, n, "%.2f MiB", v / 1048576);
    else if (v >= 1024) snprintf(b, n, "%.1f KiB", v / 1024);
    else snprintf(b, n, "%.0f B", v);
    return b;
}

/* The name of memory m: "host", else the backend that owns it. */
static const char *mem_name(const hb_plan_costs *c, int m)
{
    if (m == 0) return "host";
    for (int d = 0; d < c->ndev; d++) if (c->dev[d].mem == m) return c->dev[d].id;
    return "?";
}

static const char *cost_modes(const hb_plan_costs *c, int d)
{
    int res = 0, f32 = 0;
    for (int i = 0; i < c->model->n; i++) {
        const char *m = c->cost_mode[(size_t)i * (size_t)c->ndev + (size_t)d];
        if (m && !strcmp(m, "resident")) res++;
        else if (m) f32++;
    }
    return res && f32 ? "resident, else f32" : res ? "resident" : "f32";
}

void hb_plan_write_head(FILE *f, const hb_plan_costs *c, const char *path, int gpu, int ane, int cpu)
{
    const hb_model *m = c->model;
    fprintf(f, "# Plans for %s\n\n%s: %d ops, %s.\nResults: %s\n\n", m->name, m->what, m->n,
            m->cyclic ? "a repeated unit (its input comes from the unit before it and its output goes to the next: it starts and ends in one memory)"
                      : "a whole network (its input in host memory, its output copied back there)",
            path);
    fprintf(f, "Backends:");
    for (int d = 0; d < c->ndev; d++)
        fprintf(f, "%s %s (%s memory; op cost: compute median, mode %s)", d ? "," : "", c->dev[d].id, c->dev[d].host_memory ? "host" : "own",
                cost_modes(c, d));
    fprintf(f, ".\nWeights (and a decode layer's KV cache) are placed once on the device of the op that uses them; "
               "what crosses between memories per step is activations.\n");
    fprintf(f, "Seed heuristic (select_optimal_device): matmul > 10000 elements -> GPU = %s; conv2d and activations -> Neural Engine, "
               "unavailable off Apple hardware: stand-in %s; everything else -> CPU = %s.\n",
            c->dev[gpu].id, c->dev[ane].id, c->dev[cpu].id);
}

json_t *hb_plan_json_head(const hb_plan_costs *c, const char *path, int gpu, int ane, int cpu)
{
    const hb_model *m = c->model;
    json_t *backends = json_array(), *ops = json_array();
    for (int d = 0; d < c->ndev; d++)
        json_array_append_new(backends, json_pack("{s:s,s:s,s:s,s:s}", "id", c->dev[d].id, "type", c->dev[d].type, "memory", mem_name(c, c->dev[d].mem),
                                                  "cost_mode", cost_modes(c, d)));
    for (int i = 0; i < m->n; i++) {
        const hb_model_node *nd = &m->nodes[i];
        char sh[256];
        json_t *cost = json_object(), *mode = json_object(), *rank = json_object(), *in = json_array();
        for (int d = 0; d < c->ndev; d++) {
            size_t x = (size_t)i * (size_t)c->ndev + (size_t)d;
            json_object_set_new(cost, c->dev[d].id, hb_json_num(c->cost[x]));
            json_object_set_new(mode, c->dev[d].id, c->cost_mode[x] ? json_string(c->cost_mode[x]) : json_null());
            json_object_set_new(rank, c->dev[d].id, hb_json_num(c->rank[x]));
        }
        for (int k = 0; k < HB_MAX_INPUTS; k++)
            if (nd->in[k] != HB_MODEL_NONE) json_array_append_new(in, json_string(nd->in[k] == HB_MODEL_INPUT ? "input" : m->nodes[nd->in[k]].label));
        json_array_append_new(ops, json_pack("{s:s,s:s,s:s,s:o,s:f,s:f,s:o,s:o,s:o}", "label", nd->label, "op", hb_op_get(nd->c.op)->name, "shape",
                                             hb_shape_format(nd->c.op, &nd->c.shape, sh, sizeof sh), "inputs", in, "out_bytes", nd->out_bytes,
                                             "weight_bytes", nd->weight_bytes, "cost_s", cost, "cost_mode", mode, "routing_s", rank));
    }
    return json_pack("{s:i,s:s,s:s,s:s,s:b,s:f,s:o,s:o,s:{s:s,s:s,s:s,s:s}}", "schema", 1, "model", m->name, "what", m->what, "results", path,
                     "cyclic", m->cyclic, "input_bytes", m->in_bytes, "backends", backends, "ops", ops, "seed", "rule",
                     "select_optimal_device: matmul > 10000 elements -> GPU; conv2d, activations -> Neural Engine; else CPU", "gpu", c->dev[gpu].id,
                     "neural_engine_standin", c->dev[ane].id, "cpu", c->dev[cpu].id);
}

/* The best single-device plan (lowest finite total), -1 when none. */
static int best_single(const hb_plan_named *p, int n)
{
    int b = -1;
    for (int k = 0; k < n; k++)
        if (!strcmp(p[k].kind, "single") && isfinite(p[k].res.total_s) && (b < 0 || p[k].res.total_s < p[b].res.total_s)) b = k;
    return b;
}

static const hb_plan_named *find_kind(const hb_plan_named *p, int n, const char *kind)
{
    for (int k = 0; k < n; k++) if (!strcmp(p[k].kind, kind)) return &p[k];
    return NULL;
}

void hb_plan_write_route(FILE *f, const hb_plan_costs *c, int route, const hb_plan_named *p, int n)
{
    char a[32], b[32], e[32], g[32];
    const hb_model *m = c->model;
    if (route < 0) fprintf(f, "\n## Route: none (every backend computes in host memory: nothing is copied)\n\n");
    else {
        fprintf(f, "\n## Route: %s\n\n", hb_route_name((hb_route)route));
        for (int s = 1; s < c->nmem; s++) {
            const hb_plan_link *l = &c->link[route][s];
            fprintf(f, "- %s: h2d %.3g GB/s + %s per copy, d2h %.3g GB/s + %s per copy (latency %s)\n", mem_name(c, s), l->h2d_bw / 1e9,
                    fmt_s(l->h2d_lat_s, a, sizeof a), l->d2h_bw / 1e9, fmt_s(l->d2h_lat_s, b, sizeof b),
                    c->lat_cases[route][s] ? "from this route's small mode-f32 cases" : "unknown: no small mode-f32 case on this route, bandwidth only");
        }
        fprintf(f, "\n");
    }
    const hb_plan_named *opt = find_kind(p, n, "optimal");
    int bs = best_single(p, n);
    fprintf(f, "| plan | predicted | compute | copies (time) | bytes crossing | starts in | vs optimal | vs best single |\n|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < n; k++) {
        const hb_plan_result *r = &p[k].res;
        char vo[32] = "-", vb[32] = "-";
        if (isfinite(r->total_s) && opt) snprintf(vo, sizeof vo, "%+.1f%%", 100 * (r->total_s / opt->res.total_s - 1));
        if (isfinite(r->total_s) && bs >= 0) snprintf(vb, sizeof vb, "%+.1f%%", 100 * (r->total_s / p[bs].res.total_s - 1));
        fprintf(f, "| %s | %s | %s | %d (%s) | %s | %s | %s | %s |\n", p[k].name, fmt_s(r->total_s, a, sizeof a), fmt_s(r->compute_s, b, sizeof b), r->ncopies,
                fmt_s(r->xfer_s, e, sizeof e), fmt_bytes(r->xfer_bytes, g, sizeof g), mem_name(c, r->start_mem), vo, vb);
    }
    const hb_plan_named *heur = find_kind(p, n, "heuristic");
    int said = 0; /* the single-device plans against the model measured end to end (the chain case) */
    for (int d = 0; d < c->ndev; d++)
        if (isfinite(c->whole_s[d]) && isfinite(p[d].res.total_s))
            fprintf(f, "%s- %s: predicted %s; the chain case (the whole layer, one backend) measured %s: prediction %+.1f%%\n",
                    said++ ? "" : "\nSingle-device plans against the chain case of the same layer:\n", c->dev[d].id, fmt_s(p[d].res.total_s, a, sizeof a),
                    fmt_s(c->whole_s[d], b, sizeof b), 100 * (p[d].res.total_s / c->whole_s[d] - 1));
    if (opt && bs >= 0) {
        double gain = 100 * (1 - opt->res.total_s / p[bs].res.total_s);
        if (gain > 1e-6)
            fprintf(f, "\nPredicted: the optimal plan beats the best single device (%s) by %.1f%% (%s against %s)", p[bs].name, gain,
                    fmt_s(opt->res.total_s, a, sizeof a), fmt_s(p[bs].res.total_s, b, sizeof b));
        else
            fprintf(f, "\nPredicted: no plan beats the best single device (%s, %s): the optimal plan runs on it alone", p[bs].name,
                    fmt_s(p[bs].res.total_s, b, sizeof b));
        if (heur) fprintf(f, "; the seed heuristic takes %+.1f%% against the optimum.\n", 100 * (heur->res.total_s / opt->res.total_s - 1));
        else fprintf(f, ".\n");
    }
    /* per op: each plan's device; the optimal plan's copies in */
    fprintf(f, "\n| # | op | shape |");
    for (int d = 0; d < c->ndev; d++) fprintf(f, " %s |", c->dev[d].id);
    for (int k = c->ndev; k < n; k++) fprintf(f, " %s |", p[k].name);
    fprintf(f, " optimal: copied in |\n|---|---|---|");
    for (int k = 0; k < n; k++) fprintf(f, "---|");
    fprintf(f, "---|\n");
    for (int i = 0; i < m->n; i++) {
        char sh[256];
        fprintf(f, "| %d | %s | %s %s |", i, m->nodes[i].label, hb_op_get(m->nodes[i].c.op)->name, hb_shape_format(m->nodes[i].c.op, &m->nodes[i].c.shape, sh, sizeof sh));
        for (int d = 0; d < c->ndev; d++) {
            size_t x = (size_t)i * (size_t)c->ndev + (size_t)d;
            fprintf(f, " %s%s |", fmt_s(c->cost[x], a, sizeof a), c->cost_mode[x] && strcmp(c->cost_mode[x], "resident") && !c->dev[d].host_memory ? " (f32)" : "");
        }
        for (int k = c->ndev; k < n; k++) fprintf(f, " %s |", c->dev[p[k].dev[i]].id);
        const hb_plan_step *st = opt ? &opt->res.steps[i] : NULL;
        if (st && st->xfer_bytes > 0) fprintf(f, " %s, %s |\n", fmt_bytes(st->xfer_bytes, g, sizeof g), fmt_s(st->xfer_s, e, sizeof e));
        else fprintf(f, " - |\n");
    }
    if (opt && opt->res.end_xfer_bytes > 0)
        fprintf(f, "\nThe optimal plan's output is copied back to %s at the end: %s, %s.\n", mem_name(c, opt->res.start_mem),
                fmt_bytes(opt->res.end_xfer_bytes, g, sizeof g), fmt_s(opt->res.end_xfer_s, e, sizeof e));
    for (int k = 0; k < n; k++)
        if (!strcmp(p[k].kind, "greedy"))
            for (int i = 0; i < m->n; i++)
                if (p[k].why[i]) fprintf(f, "\nGreedy, op %s: %s.\n", m->nodes[i].label, p[k].why[i]);
}

json_t *hb_plan_json_route(const hb_plan_costs *c, int route, const hb_plan_named *p, int n)
{
    const hb_model *m = c->model;
    json_t *links = json_object(), *plans = json_array();
    for (int s = 1; route >= 0 && s < c->nmem; s++) {
        const hb_plan_link *l = &c->link[route][s];
        json_object_set_new(links, mem_name(c, s), json_pack("{s:f,s:f,s:f,s:f,s:i}", "h2d_gbps", l->h2d_bw / 1e9, "h2d_latency_s", l->h2d_lat_s, "d2h_gbps",
                                                             l->d2h_bw / 1e9, "d2h_latency_s", l->d2h_lat_s, "latency_cases", c->lat_cases[route][s]));
    }
    const hb_plan_named *opt = find_kind(p, n, "optimal");
    int bs = best_single(p, n);
    for (int k = 0; k < n; k++) {
        const hb_plan_result *r = &p[k].res;
        json_t *steps = json_array();
        for (int i = 0; i < m->n; i++) {
            const hb_plan_step *st = &r->steps[i];
            json_t *s = json_pack("{s:s,s:s,s:o,s:o,s:f}", "label", m->nodes[i].label, "device", c->dev[p[k].dev[i]].id, "compute_s", hb_json_num(st->compute_s),
                                  "transfer_s", hb_json_num(st->xfer_s), "bytes_in", st->xfer_bytes);
            if (p[k].why[i]) json_object_set_new(s, "why", json_string(p[k].why[i]));
            json_array_append_new(steps, s);
        }
        json_array_append_new(plans, json_pack("{s:s,s:s,s:o,s:o,s:o,s:f,s:i,s:s,s:o,s:f,s:o,s:o,s:o}", "name", p[k].name, "kind", p[k].kind, "predicted_s",
                                               hb_json_num(r->total_s), "compute_s", hb_json_num(r->compute_s), "transfer_s", hb_json_num(r->xfer_s),
                                               "bytes_crossing", r->xfer_bytes, "copies", r->ncopies, "starts_in", mem_name(c, r->start_mem),
                                               "end_transfer_s", hb_json_num(r->end_xfer_s), "end_bytes", r->end_xfer_bytes,
                                               "vs_optimal_pct", hb_json_num(opt ? 100 * (r->total_s / opt->res.total_s - 1) : (double)NAN),
                                               "vs_best_single_pct", hb_json_num(bs >= 0 ? 100 * (r->total_s / p[bs].res.total_s - 1) : (double)NAN), "steps", steps));
        if (!strcmp(p[k].kind, "single") && isfinite(c->whole_s[p[k].dev[0]]))
            json_object_set_new(json_array_get(plans, json_array_size(plans) - 1), "chain_case_s", json_real(c->whole_s[p[k].dev[0]]));
    }
    return json_pack("{s:s,s:o,s:s?,s:o}", "route", route < 0 ? "none" : hb_route_name((hb_route)route), "links", links, "best_single",
                     bs >= 0 ? p[bs].name : NULL, "plans", plans);
}

const char *hb_plan_error_split_str(const hb_rec_plan *rec, char *buf, size_t len)
{
    double m = rec->error_split.measured_s, pr = rec->error_split.predicted_s, al = rec->error_split.ops_alone_s,
           sq = rec->error_split.ops_in_sequence_s, cp = rec->error_split.copies_predicted_s,
           cm = rec->error_split.copies_measured_s, rest = rec->error_split.rest_s;
    if (!isfinite(m) || !isfinite(pr) || !isfinite(al) || !isfinite(sq) || !isfinite(cp) || !isfinite(cm) || !isfinite(rest)) {
        snprintf(buf, len, "-");
        return buf;
    }
    char a[32], b[32], c[32], d[32];
    snprintf(buf, len, "ops in sequence %s%s, copies %s%s, launches and syncs %s%s (of %s%s)", sq >= al ? "+" : "-", fmt_s(fabs(sq - al), a, sizeof a),
             cm >= cp ? "+" : "-", fmt_s(fabs(cm - cp), b, sizeof b), rest >= 0 ? "+" : "-", fmt_s(fabs(rest), c, sizeof c), m >= pr ? "+" : "-",
             fmt_s(fabs(m - pr), d, sizeof d));
    return buf;
}
