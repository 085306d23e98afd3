/*
 * hybrid_plans.c - the report's "Hybrid plans" section (docs/report.md, docs/plans.md "Replay"): the
 * plan records of `hybench plan RESULTS --model M --replay` (results/results.h hb_run.plans, written by
 * measure/replay.c). Per model and machine: each replayed plan's measured time with its 95% CI, the
 * predicted time against it (the cost model's error), the ops that run away from the plan's first
 * device, the bytes that cross per step, the output's error against the f64 reference; and one
 * sentence: does the best hybrid plan beat the best single device (mode f32, the lowest measured
 * median over routes), by how much, and how far the seed heuristic is from the optimal plan.
 * routing.json gets "plans": the optimal plan per model and machine, its devices per op and its
 * measured time. Emits nothing when no input has a plan record.
 */
#include "report/common.h"
#include "analysis/plan_costs.h"

static const char *S(const char *s) { return s ? s : ""; }

/* The ops of plan record rec that run on another device than its first op, "label@device, ...";
 * "none (one device)" when every op runs on one. Into buf. */
static const char *moved_ops(const hb_rec_plan *rec, char *buf, size_t len)
{
    const char *first = rec->nsteps ? S(rec->steps[0].device) : "";
    size_t o = 0, nm = 0;
    buf[0] = 0;
    for (size_t i = 0; i < rec->nsteps; i++) {
        const hb_rec_plan_step *s = &rec->steps[i];
        if (!strcmp(S(s->device), first)) continue;
        if (nm++ < 8 && o < len) o += (size_t)snprintf(buf + o, len - o, "%s%s@%s", nm > 1 ? ", " : "", S(s->label), S(s->device));
    }
    if (!nm) snprintf(buf, len, "none (all on %s)", first);
    else if (nm > 8 && o < len) snprintf(buf + o, len - o, " ... (%zu ops off %s)", nm, first);
    return buf;
}

static double median_of(const hb_rec_plan *rec, double *lo, double *hi)
{
    const hb_rec_stats *t = &rec->phase[HB_PH_TOTAL];
    if (lo) *lo = t->ci_lo;
    if (hi) *hi = t->ci_hi;
    return t->median;
}

hb_status hb_report_plans(ctx *c)
{
    hb_report *rp = c->rp;
    size_t nplans = 0;
    for (int r = 0; r < rp->nruns; r++) nplans += rp->runs[r].r.nplan_recs;
    if (!nplans) return HB_OK;
    hb_doc_h(rp, 2, "hybrid-plans", "Hybrid plans: a model run end to end on the devices a plan picks");
    hb_doc_p(rp, "Each plan of `hybench plan` (every single device, the seed's heuristic, the greedy plan of routing.json, the optimal plan "
                 "of the cost model) replayed end to end in one process holding every device it names (`hybench plan --replay`, "
                 "docs/plans.md): weights placed once on their op's device, the activations copied between devices on the route, "
                 "sampled to a 95%% CI like a case and the output verified against the f64 reference. Measured: the median time of the "
                 "whole model and its CI; predicted: the cost model's sum of per-op times and copies; error: predicted / measured - 1. "
                 "Bytes crossing: the activations the plan copies per step. Every figure is measured in the run that replayed it; the "
                 "predictions come from the results file named in each record (costs_from).");
    json_t *rows = hb_doc_table(rp, "Replayed plans (model, machine, route, mode)", 0, 11, "model", "machine", "plan", "route", "mode",
                                "measured [95% CI]", "predicted (error)", "measured - predicted, by cause", "ops off the first device", "bytes crossing", "rel. error");
    json_t *summary = json_array(), *routing = json_object();
    for (int r = 0; r < rp->nruns; r++) {
        const hb_rec_plan *plans = rp->runs[r].r.plan_recs;
        size_t nplan = rp->runs[r].r.nplan_recs;
        const char *mach = rp->runs[r].label;
        /* the models of this run, in first-seen order: each plan whose model no earlier plan has */
        for (size_t mi = 0; mi < nplan; mi++) {
            const char *model = S(plans[mi].model);
            int seen = 0;
            for (size_t k = 0; k < mi && !seen; k++) seen = !strcmp(S(plans[k].model), model);
            if (seen) continue;
            const hb_rec_plan *best_single = NULL, *best_hybrid = NULL, *seed = NULL, *opt = NULL;
            for (size_t i = 0; i < nplan; i++) {
                const hb_rec_plan *rec = &plans[i];
                if (strcmp(S(rec->model), model)) continue;
                double lo, hi, med = median_of(rec, &lo, &hi), pr = rec->predicted_s, re = rec->rel_err;
                int ok = !strcmp(S(rec->status), "ok") && med > 0, f32 = !strcmp(S(rec->mode), "f32");
                char mv[400];
                const char *tcell = ok ? F("%s [%s, %s]", hb_report_fmt_time(med), hb_report_fmt_time(lo), hb_report_fmt_time(hi))
                                       : tone_cell("bad", F("%s: %s", S(rec->status), S(rec->reason)));
                const char *pcell = !(pr > 0) ? "-"
                                    : ok && f32 ? F("%s (%+.0f%%)", hb_report_fmt_time(pr), 100 * (pr / med - 1))
                                                : F("%s (f32 model)", hb_report_fmt_time(pr));
                char split[200];
                hb_doc_row(rows, 11, model, mach, S(rec->plan), S(rec->route), S(rec->mode), tcell, pcell,
                           F("%s", hb_plan_error_split_str(rec, split, sizeof split)), moved_ops(rec, mv, sizeof mv),
                           F("%.0f B", rec->bytes_crossing), re >= 0 ? F("%.1e", re) : "-");
                if (!ok || !f32) continue;
                const char *kind = S(rec->kind);
                const hb_rec_plan **slot = !strcmp(kind, "single") ? &best_single : !strcmp(kind, "heuristic") ? &seed : !strcmp(kind, "optimal") ? &opt : NULL;
                if (slot && (!*slot || med < median_of(*slot, NULL, NULL))) *slot = rec;
                if (strcmp(kind, "single") && rec->device_changes > 0 && (!best_hybrid || med < median_of(best_hybrid, NULL, NULL)))
                    best_hybrid = rec;
            }
            /* the verdict, mode f32 */
            char v[900];
            size_t o = (size_t)snprintf(v, sizeof v, "%s on %s: ", model, mach);
            double ts = best_single ? median_of(best_single, NULL, NULL) : DNAN, th = best_hybrid ? median_of(best_hybrid, NULL, NULL) : DNAN;
            if (!best_single) o += (size_t)snprintf(v + o, sizeof v - o, "no single-device plan replayed ok in mode f32.");
            else if (!best_hybrid)
                o += (size_t)snprintf(v + o, sizeof v - o, "no plan that uses two devices was replayed (the optimal plan stays on one device); "
                                      "the best single device is %s (%s, route %s).", S(best_single->plan), hb_report_fmt_time(ts),
                                      S(best_single->route));
            else {
                double hlo, hhi, slo, shi;
                median_of(best_hybrid, &hlo, &hhi);
                median_of(best_single, &slo, &shi);
                int apart = th < ts ? hhi < slo : shi < hlo;
                o += (size_t)snprintf(v + o, sizeof v - o, "the best hybrid plan (%s, route %s, %s) %s the best single device (%s, %s) by %.1f%%%s.",
                                      S(best_hybrid->plan), S(best_hybrid->route), hb_report_fmt_time(th), th < ts ? "beats" : "loses to",
                                      S(best_single->plan), hb_report_fmt_time(ts), th < ts ? 100 * (ts / th - 1) : 100 * (th / ts - 1),
                                      apart ? " (the CIs do not overlap)" : " (the CIs overlap: no difference shown)");
            }
            if (seed && opt && o < sizeof v) {
                double tsd = median_of(seed, NULL, NULL), top = median_of(opt, NULL, NULL);
                snprintf(v + o, sizeof v - o, " The seed heuristic takes %s, %+.1f%% against the optimal plan's %s.", hb_report_fmt_time(tsd),
                         100 * (tsd / top - 1), hb_report_fmt_time(top));
            }
            hb_doc_p(rp, "%s", v);
            json_array_append_new(summary, json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "model", model, "machine", mach, "verdict", v,
                                                     "best_single_s", isfinite(ts) ? json_real(ts) : json_null(), "best_hybrid_s",
                                                     isfinite(th) ? json_real(th) : json_null(), "seed_s",
                                                     seed ? json_real(median_of(seed, NULL, NULL)) : json_null(), "optimal_s",
                                                     opt ? json_real(median_of(opt, NULL, NULL)) : json_null()));
            if (opt) {
                json_t *devs = json_array();
                for (size_t k = 0; k < opt->nsteps; k++)
                    json_array_append_new(devs, json_pack("{s:s,s:s}", "op", S(opt->steps[k].label), "device", S(opt->steps[k].device)));
                json_t *entry = json_pack("{s:s,s:s,s:s,s:f,s:f,s:o}", "machine", mach, "route", S(opt->route), "starts_in", S(opt->starts_in),
                                          "measured_s", median_of(opt, NULL, NULL), "predicted_s", opt->predicted_s, "ops", devs);
                json_t *per = json_object_get(routing, model);
                if (!per) json_object_set_new(routing, model, per = json_array());
                json_array_append_new(per, entry);
            }
        }
    }
    if (rp->routing) json_object_set(rp->routing, "plans", routing);
    json_object_set_new(rp->summary, "hybrid_plans", json_pack("{s:o,s:o}", "verdicts", summary, "optimal", routing));
    return HB_OK;
}
