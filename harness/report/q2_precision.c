/* q2_precision.c - Q2: what lower precision (tf32, f16, bf16) gains over f32 in throughput, and what f32 keeps of it (report/common.h). */
#include "report/common.h"
#include "report/across.h"

/* ---------------------------------------------------------------- Q2 lower precision ---- */

/* The share of the f32 peak an f32 case must reach to count as compute-bound as measured (below it,
 * launch overhead, memory or synchronisation set its time, and a faster dtype cannot show). */
#define Q2_MIN_PEAK_SHARE 0.25

/* 1 when f32 case a is compute-bound as measured on its device: its arithmetic intensity
 * (flops / bytes) is above the roofline's ridge point (f32 peak / copy bandwidth, both measured in
 * the same run) and its compute phase reaches Q2_MIN_PEAK_SHARE of the f32 peak. 0 otherwise, and
 * when the device has no such ceilings. */
static int measured_compute_bound(const ctx *c, const hb_rrow *a)
{
    const hb_rdev *dv = row_dev(c, a);
    if (!dv->rec) return 0;
    const hb_run *r = &c->rp->runs[dv->run].r;
    double pk = hb_run_ceiling(r, dv->backend, "peak_gflops_f32"), bw = hb_run_ceiling(r, dv->backend, "copy_gbps");
    double ai = a->flops / a->bytes, g = isfinite(a->gflops) ? a->gflops : a->flops / a->t[HB_PH_COMPUTE] / 1e9;
    if (!(pk > 0) || !(bw > 0) || !(ai > 0) || !(g > 0)) return 0;
    return ai > pk / bw && g >= Q2_MIN_PEAK_SHARE * pk;
}

hb_status hb_report_q2(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    static const char *const lows[] = { "tf32", "f16", "bf16" };
    json_t *q = json_object(), *jp = json_array(), *js = json_array();
    json_object_set_new(rp->summary, "q2", q);
    json_object_set_new(q, "definition", json_string("ratio_pct = 100 * compute_median(low dtype) / compute_median(f32) = f32 GFLOP/s as a share of the low dtype's, status-ok cases matched by device, op, shape, mode, route and name"));
    json_object_set_new(q, "pairs", jp);
    json_object_set_new(q, "by_device", js);
    hb_doc_h(rp, 2, "q2", "Q2 Lower precision: f32 throughput as a share of f16, bf16, tf32");
    hb_doc_p(rp, "Share = f32 compute-phase GFLOP/s / the other dtype's, for the same case (so = compute time of the other dtype / compute time of f32). The plan assumed f32 keeps at least %g%% of f16 speed (it measured %g-%g%% on the Neural Engine).",
             hb_report_plan.f32_of_f16_min_pct, hb_report_plan.ane_f32_of_f16_lo_pct, hb_report_plan.ane_f32_of_f16_hi_pct);
    groups bydev = { 0 }, byop = { 0 };
    size_t total = 0;
    char key[512];
    for (size_t li = 0; li < 3; li++) {
        rpair *pr;
        size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_MODE | K_ROUTE | K_NAME, K_DTYPE, "f32", lows[li], NULL, NULL, &pr);
        if (!pr) return HB_ENOMEM;
        sort_pairs(c, pr, n);
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            double ca = a->t[HB_PH_COMPUTE], cb = b->t[HB_PH_COMPUTE];
            if (!(ca > 0) || !(cb > 0)) continue;
            double r = 100.0 * cb / ca;
            total++;
            json_array_append_new(jp, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "device", row_dev(c, b)->id,
                "op", b->op, "shape", b->shape, "mode", b->mode, "route", b->route, "dtype", lows[li], "class", class_of(b),
                "size", hb_json_num(b->size), "compute_f32_s", hb_json_num(ca), "compute_low_s", hb_json_num(cb), "gflops_f32", hb_json_num(a->gflops),
                "ratio_pct", hb_json_num(r), "compute_bound_measured", json_boolean(measured_compute_bound(c, a))));
            snprintf(key, sizeof key, "%d|%s", b->dev, lows[li]);
            grp *g = grp_get(&bydev, key, json_pack("{s:s,s:s,s:i}", "device", row_dev(c, b)->id, "dtype", lows[li], "dev", b->dev));
            int is_cb = measured_compute_bound(c, a);
            if (g) { vec_push(is_cb ? &g->v[0] : &g->v[1], r); vec_push(&g->v[2], r); }
            snprintf(key, sizeof key, "%d|%s|%s", b->dev, b->op, lows[li]);
            g = grp_get(&byop, key, json_pack("{s:s,s:s,s:s,s:i}", "device", row_dev(c, b)->id, "op", b->op, "dtype", lows[li], "dev", b->dev));
            if (g) vec_push(&g->v[0], r);
        }
        free(pr);
    }
    if (total) {
        json_t *rows = hb_doc_table(rp, F("f32 as a share of each lower-precision dtype, per backend (median over cases). Compute-bound as measured: "
                                          "arithmetic intensity above the ridge point (f32 peak / copy bandwidth of this run) and f32 compute at >= %.0f%% "
                                          "of the f32 peak; the other cases are set by overhead or memory, where a faster dtype cannot show, "
                                          "so they do not enter the verdict", 100 * Q2_MIN_PEAK_SHARE), 0, 7,
                                    "backend", "vs dtype", "compute-bound cases (measured)", "their share", "other cases", "their share", "verdict (compute-bound)");
        for (size_t i = 0; i < bydev.n; i++) {
            grp *g = &bydev.g[i];
            size_t cnt = g->v[2].n, ncb = g->v[0].n, noth = g->v[1].n;
            double mc = vec_median(&g->v[0]), mm = vec_median(&g->v[1]);
            const char *tone = "none", *v = ncb ? verdict_q2(mc, &tone) : "no compute-bound case: not answered";
            json_array_append_new(js, json_pack("{s:s,s:s,s:I,s:I,s:o,s:o,s:s,s:s}", "device", gattr(g, "device"), "dtype", gattr(g, "dtype"),
                "n", (json_int_t)cnt, "n_compute_bound", (json_int_t)ncb, "median_compute_bound_pct", hb_json_num(mc),
                "median_other_pct", hb_json_num(mm), "verdict", v, "tone", tone));
            hb_doc_row(rows, 7, gattr(g, "device"), gattr(g, "dtype"), F("%zu", ncb), hb_report_fmt_pct(mc), F("%zu", noth), hb_report_fmt_pct(mm),
                       tone_cell(tone, v));
        }
        rows = hb_doc_table(rp, "Per backend, op and dtype (median over shapes)", 1, 5, "backend", "op", "vs dtype", "f32 share", "cases");
        for (size_t i = 0; i < byop.n; i++) {
            grp *g = &byop.g[i];
            size_t cnt = g->v[0].n;
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "op"), gattr(g, "dtype"), hb_report_fmt_pct(vec_median(&g->v[0])), F("%zu", cnt));
        }
        /* plot per device: clustered bars, one cluster per op, one bar per low dtype */
        json_t *ids = plot_ids_new();
        for (int d = 0; d < rp->ndevs; d++) {
            int any = 0;
            for (size_t i = 0; i < byop.n; i++) if (json_integer_value(json_object_get(byop.g[i].attrs, "dev")) == d) any = 1;
            if (!any) continue;
            FILE *dat;
            hb_plot *p = hb_report_plot_begin(rp, F("q2_%s", rp->devs[d].id), "q2", F("Q2: f32 compute throughput as %% of tf32, f16, bf16 on %s", rp->devs[d].id), 900, 420, &dat);
            if (!p) return HB_EDEVICE;
            /* only the dtypes this device has: gnuplot refuses a histogram column without points */
            int haslow[3] = { 0, 0, 0 };
            for (size_t i = 0; i < byop.n; i++)
                if (json_integer_value(json_object_get(byop.g[i].attrs, "dev")) == d)
                    for (int l = 0; l < 3; l++) if (!strcmp(gattr(&byop.g[i], "dtype"), lows[l])) haslow[l] = 1;
            fprintf(dat, "# op, then f32 throughput as percent of:");
            for (int l = 0; l < 3; l++) if (haslow[l]) fprintf(dat, " %s", lows[l]);
            fprintf(dat, " (NaN = not measured)\n");
            for (int o = 0; o < c->nops; o++) {
                char line[512];
                int off = snprintf(line, sizeof line, "\"%s\"", c->ops[o]), anyv = 0;
                for (int l = 0; l < 3; l++) {
                    if (!haslow[l]) continue;
                    snprintf(key, sizeof key, "%d|%s|%s", d, c->ops[o], lows[l]);
                    double v = grp_median(&byop, key);
                    if (isfinite(v)) anyv = 1;
                    off += snprintf(line + off, sizeof line - (size_t)off, " %.5g", v);
                }
                if (anyv) fprintf(dat, "%s\n", line);
            }
            fclose(dat);
            hb_sb body = { 0 };
            hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram clustered gap 1\n"
                         "set boxwidth 0.9\nset xtics rotate by 30 right scale 0\nset ylabel 'f32 throughput, %% of the other dtype'\n"
                         "set yrange [0:*]\nset grid noxtics\nplot ", hb_report_gp_str(p->title));
            for (int l = 0, col = 2; l < 3; l++) {
                if (!haslow[l]) continue;
                hb_sb_printf(&body, "%s using %d%s title 'vs %s' lt %d, ", col == 2 ? F("'%s.dat'", p->id) : "''", col,
                             col == 2 ? ":xtic(1)" : "", lows[l], l + 1);
                col++;
            }
            hb_sb_printf(&body, "%g with lines dt 2 lw 1.5 lc rgb hb_c_ceiling title 'plan: %g%%'\n", hb_report_plan.f32_of_f16_min_pct, hb_report_plan.f32_of_f16_min_pct);
            hb_status st = hb_report_plot_script(rp, p, body.s);
            hb_sb_free(&body);
            if (st != HB_OK) return st;
            plot_id_add(ids, p);
        }
        hb_doc_plots(rp, ids);
    }
    /* which devices could answer but have no low-precision case */
    json_t *missing = json_array();
    json_object_set_new(q, "missing", missing);
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (!dv->available) continue;
        int anyd = 0;
        for (size_t i = 0; i < bydev.n; i++) if (json_integer_value(json_object_get(bydev.g[i].attrs, "dev")) == d) anyd = 1;
        if (!anyd) json_array_append_new(missing, json_string(dv->id));
    }
    json_object_set_new(q, "answered", json_boolean(total > 0));
    const char *which = "The GPU reference run (results/h100-reference.jsonl: cuda:0 with tf32, f16 and bf16 cases) would answer; on this kind of machine an OpenCL GPU with cl_khr_fp16 would answer for f16.";
    if (!total) {
        hb_doc_note(rp, "Unanswered: no case in these results has a compute dtype other than f32 with a matching f32 case (status ok). %s", which);
        card_add(cards, 2, "Lower precision", "unanswered", "none",
                 "No f16, bf16 or tf32 results in these files. The GPU reference run (results/h100-reference.jsonl) would answer.");
    } else {
        if (json_array_size(missing)) {
            char lst[600] = "";
            size_t o = 0;
            size_t i;
            json_t *m;
            json_array_foreach(missing, i, m) o += (size_t)snprintf(lst + o, o < sizeof lst ? sizeof lst - o : 0, "%s%s", i ? ", " : "", json_string_value(m));
            hb_doc_note(rp, "No lower-precision cases for: %s (the backend lacks them or they were not in the workload).", lst);
        }
        size_t i;
        json_t *t;
        const char *badge = NULL, *btone = "none";
        int mixed = 0;
        json_array_foreach(js, i, t) {
            const char *v = json_string_value(json_object_get(t, "verdict"));
            if (!badge) { badge = v; btone = json_string_value(json_object_get(t, "tone")); }
            else if (strcmp(badge, v)) mixed = 1;
        }
        /* one finding per dtype across the devices: the median share over compute-bound cases */
        char text[2000], phrase[700];
        size_t o = (size_t)snprintf(text, sizeof text, "f32 throughput as a share of the lower precision's, compute-bound cases:");
        static const int order[] = { 1, 2, 0 }; /* f16, bf16, tf32 */
        int *has = calloc((size_t)rp->ndevs + 1, sizeof *has);
        if (!has) { groups_free(&bydev); groups_free(&byop); return HB_ENOMEM; }
        for (size_t g = 0; g < bydev.n; g++) has[json_integer_value(json_object_get(bydev.g[g].attrs, "dev"))] = 1;
        int nparts = 0;
        card_add(cards, 2, "Lower precision", mixed ? "differs by backend/dtype" : badge, mixed ? "warn" : btone, ""); /* text below */
        for (int k = 0; k < 3; k++) {
            const char *low = lows[order[k]];
            int any = 0;
            for (size_t g = 0; g < bydev.n; g++) if (!strcmp(gattr(&bydev.g[g], "dtype"), low)) any = 1;
            if (!any) continue;
            hb_across a;
            hb_across_init(&a, HB_ACROSS_TOL_PCT);
            for (int d = 0; d < rp->ndevs; d++) {
                if (!card_device(c, d, has)) continue;
                snprintf(key, sizeof key, "%d|%s", d, low);
                grp *g = grp_find(&bydev, key);
                if (!g) { hb_across_dev(&a, rp, d, DNAN, F("no %s case", low)); continue; }
                hb_across_dev(&a, rp, d, g->v[0].n ? vec_median(&g->v[0]) : DNAN, "no compute-bound case");
            }
            if (o < sizeof text - 1)
                o += (size_t)snprintf(text + o, sizeof text - o, "%s of %s: %s", nparts++ ? ";" : "", low, hb_across_text(&a, hb_report_fmt_pct, phrase, sizeof phrase));
            hb_across_card(cards, low, &a);
            hb_across_free(&a);
        }
        if (json_array_size(missing)) {
            hb_across a;
            hb_across_init(&a, HB_ACROSS_TOL_PCT);
            json_array_foreach(missing, i, t)
                for (int d = 0; d < rp->ndevs; d++)
                    if (!strcmp(rp->devs[d].id, json_string_value(t)) && !rp->devs[d].is_reference) hb_across_dev(&a, rp, d, DNAN, "no lower-precision case");
            if (a.n && o < sizeof text - 1) o += (size_t)snprintf(text + o, sizeof text - o, "; %s", hb_across_text(&a, hb_report_fmt_pct, phrase, sizeof phrase));
            hb_across_free(&a);
        }
        if (o < sizeof text - 1) snprintf(text + o, sizeof text - o, ".");
        json_object_set_new(json_array_get(cards, json_array_size(cards) - 1), "text", json_string(text));
        json_t *rows = hb_across_card_table(cards, "per device and dtype", 7, "backend", "vs dtype", "compute-bound cases", "f32 share",
                                            "other cases", "their share", "verdict (compute-bound)");
        json_array_foreach(js, i, t)
            hb_doc_row(rows, 7, json_string_value(json_object_get(t, "device")), json_string_value(json_object_get(t, "dtype")),
                       F("%lld", (long long)json_integer_value(json_object_get(t, "n_compute_bound"))),
                       hb_report_fmt_pct(json_number_value(json_object_get(t, "median_compute_bound_pct"))),
                       F("%lld", (long long)(json_integer_value(json_object_get(t, "n")) - json_integer_value(json_object_get(t, "n_compute_bound")))),
                       hb_report_fmt_pct(json_number_value(json_object_get(t, "median_other_pct"))),
                       tone_cell(json_string_value(json_object_get(t, "tone")), json_string_value(json_object_get(t, "verdict"))));
        free(has);
    }
    groups_free(&bydev);
    groups_free(&byop);
    return HB_OK;
}

