/* q5_selection.c - Q5: which device each op and size should run on, measured, against the plan's selector rules (report/common.h). */
#include "report/common.h"
#include "report/across.h"
#include "analysis/routing.h"

/* ---------------------------------------------------------------- Q5 device selection ---- */

typedef struct q5e {
    const char *op, *family, *shape;
    double size;
    double flops;
    double *t;            /* per device (rp->ndevs): best total over routes, DNAN when none */
    const char **route;   /* per device */
} q5e;

static int cmp_q5e(const void *x, const void *y, void *arg)
{
    const ctx *c = arg;
    const q5e *a = x, *b = y;
    int ra = op_rank(c, a->op), rb = op_rank(c, b->op);
    if (ra != rb) return ra - rb;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    return strcmp(a->shape, b->shape);
}

/* The plan's choice for entry e among the run's candidates: returns the device index (or -1) and
 * describes the rule and whether a fallback was taken. */
static int plan_choice(const ctx *c, int run, const q5e *e, const int *cand, char *rule, size_t rlen, int *fell_back)
{
    const hb_report *rp = c->rp;
    int want_gpu;
    double bytes = e->size * hb_report_plan.tensor_elem_bytes;
    if (!strcmp(e->family, "matmul")) {
        want_gpu = e->size > hb_report_plan.matmul_gpu_above_elems;
        snprintf(rule, rlen, want_gpu ? "matmul > %g elements -> GPU" : "matmul <= %g elements -> CPU", hb_report_plan.matmul_gpu_above_elems);
    } else if (bytes < hb_report_plan.cpu_below_bytes) {
        want_gpu = 0;
        snprintf(rule, rlen, "< %s -> CPU", hb_report_fmt("%g MB", hb_report_plan.cpu_below_bytes / 1e6));
    } else if (bytes < hb_report_plan.ane_below_bytes) {
        want_gpu = 1;
        snprintf(rule, rlen, "%g-%g MB -> Neural Engine (unavailable) -> best GPU", hb_report_plan.cpu_below_bytes / 1e6, hb_report_plan.ane_below_bytes / 1e6);
    } else {
        want_gpu = 1;
        snprintf(rule, rlen, "> %g MB -> best GPU", hb_report_plan.ane_below_bytes / 1e6);
    }
    /* chain: CUDA -> OpenCL -> CPU (GPU wanted) or CPU; first device of the type with an ok result */
    static const char *const gpu_chain[] = { "cuda", "opencl", "cpu" };
    static const char *const cpu_chain[] = { "cpu" };
    const char *const *chain = want_gpu ? gpu_chain : cpu_chain;
    int nch = want_gpu ? 3 : 1;
    *fell_back = 0;
    for (int k = 0; k < nch; k++) {
        for (int d = 0; d < rp->ndevs; d++) {
            if (!cand[d] || rp->devs[d].run != run || strcmp(rp->devs[d].type, chain[k])) continue;
            if (isfinite(e->t[d])) {
                *fell_back = k > 0;
                return d;
            }
        }
    }
    return -1;
}

hb_status hb_report_q5(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    json_t *q = json_object(), *jm = json_array();
    json_object_set_new(rp->summary, "q5", q);
    json_object_set_new(q, "definition", json_string("per run (machine): mode f32, dtype f32, status ok; each backend at its fastest route; best = lowest median total; cpu-ref (the reference) is not a candidate; plan heuristic evaluated on the same entries; loss_pct = 100 * (sum t_heuristic / sum t_best - 1)"));
    json_object_set_new(q, "machines", jm);
    rp->routing = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "schema", 1, "tool", "hybench", "report", rp->name,
                            "mode", "f32", "dtype", "f32", "size", "elements of the largest tensor (the case record's size)",
                            "rule", "for an op, use the range whose [size_min, size_max) holds the size; size_max null = no upper bound",
                            "machines", json_array());
    hb_doc_h(rp, 2, "q5", "Q5 Device selection: measured best against the plan's heuristics");
    hb_doc_p(rp, "Per machine, for each op and shape in mode f32 with dtype f32: every backend at its fastest route, status ok only (a wrong case never counts), end-to-end median time including transfers. cpu-ref is the verification reference, not a candidate. The plan: tensors under %g MB to the CPU; %g-%g MB to the Neural Engine (unavailable off Apple hardware, so its fallback, the best GPU); above that the best GPU; matmul over %g elements to the GPU; fallback chains CUDA -> OpenCL -> CPU and OpenCL -> CPU. A tensor's size is its largest tensor at %g bytes per element.",
             hb_report_plan.cpu_below_bytes / 1e6, hb_report_plan.cpu_below_bytes / 1e6, hb_report_plan.ane_below_bytes / 1e6, hb_report_plan.matmul_gpu_above_elems, hb_report_plan.tensor_elem_bytes);
    int *cand = calloc((size_t)rp->ndevs + 1, sizeof *cand);
    if (!cand) return HB_ENOMEM;
    char text[2000] = "";
    size_t to = 0;
    hb_across a_loss, a_pick; /* per run: the heuristics' loss, the share of entries where they pick the fastest */
    hb_across_init(&a_loss, HB_ACROSS_TOL_PCT);
    hb_across_init(&a_pick, HB_ACROSS_TOL_PCT);
    json_t *drows = json_array();
    double all_h = 0, all_b = 0;
    int all_n = 0, all_match = 0, any_multi = 0;
    json_t *ids = plot_ids_new();
    for (int run = 0; run < rp->nruns; run++) {
        int ncand = 0;
        for (int d = 0; d < rp->ndevs; d++) {
            cand[d] = 0;
            if (rp->devs[d].run != run || rp->devs[d].is_reference) continue;
            for (size_t i = 0; i < rp->nrows; i++) {
                const hb_rrow *w = &rp->rows[i];
                if (w->dev == d && hb_routing_counts(w->mode, w->dtype, w->ok, w->family, 0)) { cand[d] = 1; break; }
            }
            ncand += cand[d];
        }
        json_t *mach = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "run", rp->runs[run].label, "host", rp->runs[run].host,
                                 "run_id", rp->runs[run].run_id, "commit", rp->runs[run].commit, "candidates", json_array(),
                                 "entries", json_array(), "per_op", json_array(), "crossovers", json_array(), "routing", json_object());
        json_array_append_new(jm, mach);
        for (int d = 0; d < rp->ndevs; d++)
            if (cand[d]) json_array_append_new(json_object_get(mach, "candidates"), json_string(rp->devs[d].id));
        if (!ncand) continue;
        if (ncand > 1) any_multi = 1;
        /* entries: op|shape */
        json_t *map = json_object();
        q5e *es = calloc(rp->nrows + 1, sizeof *es);
        size_t ne = 0;
        double *tbuf = malloc((rp->nrows + 1) * (size_t)rp->ndevs * sizeof *tbuf);
        const char **rbuf = calloc((rp->nrows + 1) * (size_t)rp->ndevs, sizeof *rbuf);
        if (!map || !es || !tbuf || !rbuf) { json_decref(map); free(es); free(tbuf); free(rbuf); free(cand); json_decref(drows); hb_across_free(&a_loss); hb_across_free(&a_pick); return HB_ENOMEM; }
        char key[1024];
        for (size_t i = 0; i < rp->nrows; i++) {
            const hb_rrow *w = &rp->rows[i];
            if (!cand[w->dev] || !hb_routing_counts(w->mode, w->dtype, w->ok, w->family, rp->devs[w->dev].is_reference)) continue;
            snprintf(key, sizeof key, "%s|%s", w->op, w->shape);
            json_t *ix = json_object_get(map, key);
            q5e *e;
            if (!ix) {
                e = &es[ne];
                e->op = w->op; e->family = w->family; e->shape = w->shape; e->size = w->size; e->flops = w->flops;
                e->t = tbuf + ne * (size_t)rp->ndevs;
                e->route = rbuf + ne * (size_t)rp->ndevs;
                for (int d = 0; d < rp->ndevs; d++) e->t[d] = DNAN;
                json_object_set_new(map, key, json_integer((json_int_t)ne));
                ne++;
            } else {
                e = &es[json_integer_value(ix)];
            }
            if (!(e->t[w->dev] <= w->t[HB_PH_TOTAL])) { e->t[w->dev] = w->t[HB_PH_TOTAL]; e->route[w->dev] = w->route; }
        }
        json_decref(map);
        qsort_r(es, ne, sizeof *es, cmp_q5e, c);
        json_t *jent = json_object_get(mach, "entries"), *jper = json_object_get(mach, "per_op"), *jx = json_object_get(mach, "crossovers");
        json_t *jrt = json_object_get(mach, "routing");
        json_t *rows_e = NULL;
        /* per op */
        json_t *rows_op = hb_doc_table(rp, F("Fastest backend per op and size on %s, and the plan's heuristics", rp->runs[run].label), 0, 7,
                                       "op", "fastest (sizes)", "crossovers", "shapes", "heuristic = best", "heuristic time / best", "fallbacks taken");
        json_t *machine_routing = json_object();
        double run_h = 0, run_b = 0;
        int run_match = 0, run_n = 0;
        size_t i = 0;
        while (i < ne) {
            size_t j = i;
            while (j < ne && !strcmp(es[j].op, es[i].op)) j++;
            double sh = 0, sb = 0, worst = 1;
            int nmatch = 0, ncount = 0, nfb = 0;
            int prev_best = -1;
            double prev_size = DNAN;
            char fastest[600] = "", cross[600] = "";
            size_t fo = 0, co = 0;
            json_t *ranges = json_array();
            json_t *cur = NULL;
            for (size_t k = i; k < j; k++) {
                q5e *e = &es[k];
                int best = hb_routing_best(e->t, cand, rp->ndevs);
                if (best < 0) continue;
                char rule[160];
                int fb = 0;
                int h = plan_choice(c, run, e, cand, rule, sizeof rule, &fb);
                json_t *times = json_object();
                for (int d = 0; d < rp->ndevs; d++) if (cand[d] && isfinite(e->t[d])) json_object_set_new(times, rp->devs[d].id, json_real(e->t[d]));
                double th = h >= 0 ? e->t[h] : DNAN;
                json_array_append_new(jent, json_pack("{s:s,s:s,s:s,s:o,s:o,s:s,s:s,s:o,s:s,s:s,s:o,s:b,s:o}", "op", e->op, "family", e->family, "shape", e->shape,
                    "size", hb_json_num(e->size), "times_s", times, "best", rp->devs[best].id, "best_route", e->route[best] ? e->route[best] : "",
                    "best_s", hb_json_num(e->t[best]), "heuristic", h >= 0 ? rp->devs[h].id : "", "heuristic_rule", rule, "heuristic_s", hb_json_num(th),
                    "fallback", fb, "heuristic_loss_pct", hb_json_num(h >= 0 ? 100.0 * (th / e->t[best] - 1.0) : DNAN)));
                if (h >= 0) {
                    sh += th; sb += e->t[best]; ncount++;
                    if (h == best) nmatch++;
                    if (th / e->t[best] > worst) worst = th / e->t[best];
                    nfb += fb;
                }
                if (!rows_e) rows_e = json_array();
                json_t *er = json_array();
                json_array_append_new(er, json_string(e->op));
                json_array_append_new(er, json_string(e->shape));
                json_array_append_new(er, json_string(hb_report_fmt_count(e->size)));
                char tl[600] = "";
                size_t tlo = 0;
                for (int d = 0; d < rp->ndevs; d++)
                    if (cand[d] && tlo < sizeof tl - 1)
                        tlo += (size_t)snprintf(tl + tlo, sizeof tl - tlo, "%s%s %s", tlo ? ", " : "", rp->devs[d].id, hb_report_fmt_time(e->t[d]));
                json_array_append_new(er, json_string(tl));
                json_array_append_new(er, json_string(F("%s (%s)", rp->devs[best].id, e->route[best] ? e->route[best] : "")));
                json_array_append_new(er, json_string(h >= 0 ? F("%s: %s", rule, rp->devs[h].id) : F("%s: no result", rule)));
                json_array_append_new(er, json_string(h >= 0 ? (h == best ? "[good] best" : tone_cell("warn", F("+%s", hb_report_fmt_pct(100.0 * (th / e->t[best] - 1.0))))) : "n/a"));
                json_array_append_new(rows_e, er);
                /* ranges. Cases of the same size whose fastest backends differ (two shapes with one
                 * largest tensor, say) cannot be told apart by a size rule: the range keeps the backend
                 * that won first at that size and lists the others under "same_size_other_best". */
                if (best != prev_best && prev_best >= 0 && e->size == prev_size) {
                    json_t *o = json_object_get(cur, "same_size_other_best");
                    if (!o) json_object_set_new(cur, "same_size_other_best", o = json_array());
                    json_array_append_new(o, json_pack("{s:s,s:s,s:s}", "shape", e->shape, "backend", rp->devs[best].backend, "route",
                                                       e->route[best] ? e->route[best] : ""));
                } else if (best != prev_best) {
                    if (prev_best >= 0) {
                        double boundary = sqrt(prev_size * e->size);
                        json_object_set_new(cur, "size_max", json_real(boundary));
                        json_array_append_new(jx, json_pack("{s:s,s:s,s:s,s:o,s:o,s:o}", "op", e->op, "from", rp->devs[prev_best].id, "to", rp->devs[best].id,
                                                            "below_size", hb_json_num(prev_size), "above_size", hb_json_num(e->size), "at_size", hb_json_num(boundary)));
                        if (co < sizeof cross - 1)
                            co += (size_t)snprintf(cross + co, sizeof cross - co, "%s%s -> %s between %s and %s", co ? "; " : "", rp->devs[prev_best].id,
                                                   rp->devs[best].id, hb_report_fmt_count(prev_size), hb_report_fmt_count(e->size));
                    }
                    cur = json_pack("{s:o,s:n,s:s,s:s,s:o,s:o}", "size_min", prev_best >= 0 ? json_real(sqrt(prev_size * e->size)) : json_real(0),
                                    "size_max", "backend", rp->devs[best].backend, "route", e->route[best] ? e->route[best] : "",
                                    "measured_min", hb_json_num(e->size), "measured_max", hb_json_num(e->size));
                    json_array_append_new(ranges, cur);
                    prev_best = best;
                } else {
                    json_object_set_new(cur, "measured_max", hb_json_num(e->size));
                }
                prev_size = e->size;
            }
            /* the fastest column: each range as backend (min-max) */
            size_t ri;
            json_t *r;
            json_array_foreach(ranges, ri, r) {
                double a = json_number_value(json_object_get(r, "measured_min")), b = json_number_value(json_object_get(r, "measured_max"));
                if (fo < sizeof fastest - 1)
                    fo += (size_t)snprintf(fastest + fo, sizeof fastest - fo, "%s%s (%s%s%s)", fo ? ", " : "", json_string_value(json_object_get(r, "backend")),
                                           hb_report_fmt_count(a), a != b ? "-" : "", a != b ? hb_report_fmt_count(b) : "");
            }
            json_object_set_new(machine_routing, es[i].op, json_deep_copy(ranges));
            json_object_set_new(jrt, es[i].op, ranges);
            double loss = sb > 0 ? 100.0 * (sh / sb - 1.0) : DNAN;
            json_array_append_new(jper, json_pack("{s:s,s:i,s:i,s:i,s:o,s:o,s:o,s:o}", "op", es[i].op, "n", (int)(j - i), "heuristic_matches", nmatch,
                                                  "fallbacks", nfb, "heuristic_total_s", hb_json_num(sh), "best_total_s", hb_json_num(sb), "loss_pct", hb_json_num(loss),
                                                  "worst_ratio", hb_json_num(ncount ? worst : DNAN)));
            hb_doc_row(rows_op, 7, es[i].op, fastest, *cross ? cross : "none", F("%d", ncount), F("%d of %d", nmatch, ncount),
                       !ncount ? "n/a" : nmatch == ncount ? "[good] none: always the fastest"
                                                         : tone_cell(loss < 1 ? "good" : "warn", F("+%s (worst case x%.3g)", hb_report_fmt_pct(loss), worst)),
                       F("%d", nfb));
            run_h += sh;
            run_b += sb;
            run_match += nmatch;
            run_n += ncount;
            all_match += nmatch;
            all_n += ncount;
            i = j;
        }
        all_h += run_h;
        all_b += run_b;
        json_object_set_new(mach, "loss_pct", hb_json_num(run_b > 0 ? 100.0 * (run_h / run_b - 1.0) : DNAN));
        json_array_append_new(json_object_get(rp->routing, "machines"),
                              json_pack("{s:s,s:s,s:s,s:s,s:O,s:o}", "run", rp->runs[run].label, "host", rp->runs[run].host, "run_id", rp->runs[run].run_id,
                                        "commit", rp->runs[run].commit, "backends", json_object_get(mach, "candidates"), "ops", machine_routing));
        if (rows_e) {
            json_t *tr = hb_doc_table(rp, F("Every op and shape on %s (mode f32, dtype f32)", rp->runs[run].label), 1, 7,
                                      "op", "shape", "size", "time per backend", "fastest (route)", "plan heuristic", "heuristic vs best");
            json_array_extend(tr, rows_e);
            json_decref(rows_e);
        }
        {
            double rl = run_b > 0 ? 100.0 * (run_h / run_b - 1.0) : DNAN;
            hb_across_run(&a_loss, rp, run, rl, "no entry");
            hb_across_run(&a_pick, rp, run, run_n ? 100.0 * run_match / run_n : DNAN, "no entry");
            hb_doc_row(drows, 4, rp->runs[run].label, F("%d", ncand), F("%d of %d", run_match, run_n), F("+%s", hb_report_fmt_pct(rl)));
            if (to < sizeof text - 1)
                to += (size_t)snprintf(text + to, sizeof text - to, "%s%s: %d backend%s compared.", to ? " " : "", rp->runs[run].label, ncand,
                                       ncand > 1 ? "s" : "");
        }
        /* plots: per family, time / best vs size per device */
        if (ncand > 1) {
            for (int fi = 0; fi < NFAM - 1; fi++) {
                FILE *dat = NULL;
                hb_plot *p = NULL;
                hb_sb body = { 0 };
                int nser = 0;
                for (int d = 0; d < rp->ndevs; d++) {
                    if (!cand[d]) continue;
                    int first = 1;
                    for (size_t k = 0; k < ne; k++) {
                        q5e *e = &es[k];
                        if (strcmp(e->family, family_order[fi]) || !isfinite(e->t[d])) continue;
                        double best = INFINITY;
                        for (int dd = 0; dd < rp->ndevs; dd++) if (cand[dd] && isfinite(e->t[dd]) && e->t[dd] < best) best = e->t[dd];
                        if (!p) {
                            p = hb_report_plot_begin(rp, F("q5_%s_%s", rp->runs[run].label, family_order[fi]), "q5",
                                                     F("Q5: time relative to the fastest backend, %s on %s (1 = fastest)", family_order[fi], rp->runs[run].label), 900, 420, &dat);
                            if (!p) { free(es); free(tbuf); free(rbuf); free(cand); json_decref(ids); json_decref(drows); hb_across_free(&a_loss); hb_across_free(&a_pick); return HB_EDEVICE; }
                            hb_sb_printf(&body, "set title '%s'\n", hb_report_gp_str(p->title));
                            gp_size_axis(&body);
                            hb_sb_printf(&body, "set logscale y 10\nset ylabel 'time / fastest time'\nset yrange [0.9:*]\n"
                                         "set label 1 'fastest' at graph 0.01, first 1 offset 0,0.6 font ',11' tc rgb '#555555'\nplot 1 with lines lc rgb hb_c_ceiling dt 2 notitle");
                        }
                        if (first) {
                            if (nser) fprintf(dat, "\n\n");
                            fprintf(dat, "# %s: size time_over_best op\n", rp->devs[d].id);
                            hb_sb_printf(&body, ", \\\n     '%s.dat' index %d using 1:2 with points lt %d title '%s'", p->id, nser, d % 10 + 1, hb_report_gp_str(rp->devs[d].id));
                            nser++;
                            first = 0;
                        }
                        fprintf(dat, "%.17g %.6g %s\n", e->size, e->t[d] / best, e->op);
                    }
                }
                if (p) {
                    hb_sb_printf(&body, "\n");
                    fclose(dat);
                    hb_status st = hb_report_plot_script(rp, p, body.s);
                    if (st != HB_OK) { hb_sb_free(&body); free(es); free(tbuf); free(rbuf); free(cand); json_decref(ids); json_decref(drows); hb_across_free(&a_loss); hb_across_free(&a_pick); return st; }
                    plot_id_add(ids, p);
                }
                hb_sb_free(&body);
            }
        }
        free(es);
        free(tbuf);
        free(rbuf);
    }
    hb_doc_plots(rp, ids);
    /* what is missing */
    json_t *miss = json_array();
    json_object_set_new(q, "missing", miss);
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->available) continue;
        const char *which = !strcmp(dv->type, "cuda") ? "a run on a machine with an NVIDIA GPU (the GPU reference run, results/h100-reference.jsonl)" :
                            !strcmp(dv->type, "opencl") ? "a run with an OpenCL platform installed (e.g. pocl, or a GPU driver)" :
                            (!strcmp(dv->type, "metal") || !strcmp(dv->type, "coreml")) ? "only a run on Apple silicon; none of this project's machines can answer, so the plan's Neural Engine rule is mapped to its fallback" :
                            "a run where this backend is available";
        json_array_append_new(miss, json_pack("{s:s,s:s,s:s}", "backend", dv->id, "reason", dv->reason, "which_run", which));
        hb_doc_note(rp, "%s has no results (%s): %s would answer for it.", dv->id, *dv->reason ? dv->reason : "unavailable", which);
    }
    for (int d = 0; d < rp->ndevs; d++)
        if (!rp->devs[d].host_memory && rp->devs[d].available && rp->devs[d].is_cpu_device && !strcmp(rp->devs[d].type, "opencl"))
            hb_doc_note(rp, "%s runs on the CPU (%s): where the plan says GPU, the OpenCL link of its chain is this CPU device.", rp->devs[d].id, rp->devs[d].description);
    double loss = all_b > 0 ? 100.0 * (all_h / all_b - 1.0) : DNAN;
    json_object_set_new(q, "loss_pct", hb_json_num(loss));
    json_object_set_new(q, "heuristic_matches", json_integer(all_match));
    json_object_set_new(q, "entries", json_integer(all_n));
    json_object_set_new(q, "answered", json_boolean(any_multi));
    json_object_set_new(q, "routing_file", json_string("routing.json"));
    hb_doc_p(rp, "The measured routing table is written as routing.json (per machine, per op: size ranges -> backend and route) for a hybrid executor to load.");
    if (!all_n) {
        card_add(cards, 5, "Device selection", "unanswered", "none", "No mode-f32, dtype-f32 case with status ok on a routing candidate; a default `hybench run` would answer.");
    } else if (!any_multi) {
        card_add(cards, 5, "Device selection", "partial: one backend", "warn",
                 F("Only one routing candidate ran per machine, so the best is trivially it. %.200s A run with OpenCL or CUDA results would answer.", text));
    } else {
        char phrase[2][700];
        card_add(cards, 5, "Device selection", F("plan heuristics +%s time", hb_report_fmt_pct(loss)), loss < 1 ? "good" : "info",
                 F("The plan's heuristics against the fastest backend per case: extra time in total %.300s; cases where they pick the fastest %.300s.",
                   hb_across_text(&a_loss, hb_report_fmt_pct, phrase[0], sizeof phrase[0]),
                   hb_across_text(&a_pick, hb_report_fmt_pct, phrase[1], sizeof phrase[1])));
        hb_across_card(cards, "heuristic loss", &a_loss);
        hb_across_card(cards, "heuristic picks the fastest", &a_pick);
        json_t *crows = hb_across_card_table(cards, "per run", 4, "run", "backends compared", "heuristic picks the fastest", "heuristic vs best, in total");
        json_array_extend(crows, drows);
    }
    json_decref(drows);
    hb_across_free(&a_loss);
    hb_across_free(&a_pick);
    free(cand);
    return HB_OK;
}

