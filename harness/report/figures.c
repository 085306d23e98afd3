/* figures.c - the report's figures beside the questions (report/common.h): a roofline per device,
 * model totals from the weighted workload cases, and per-op time and throughput plots. */
#include "report/common.h"

/* ---------------------------------------------------------------- rooflines ---- */

hb_status hb_report_rooflines(ctx *c)
{
    hb_report *rp = c->rp;
    hb_doc_h(rp, 2, "roofline", "Rooflines");
    hb_doc_p(rp, "Every status-ok case of mode f32 (or the backend's only mode) as a point: arithmetic intensity = flops / bytes (bytes at the compute dtype's size), compute-phase GFLOP/s. Ceilings are this run's own probes: copy bandwidth (slope) and peak GFLOP/s per dtype (flat).");
    json_t *ids = plot_ids_new(), *jr = json_array();
    json_object_set_new(rp->summary, "roofline", jr);
    size_t above_all = 0, above_cache = 0;
    json_t *rows = hb_doc_table(rp, "Median fraction of the measured ceiling per backend and family (the case record's fraction: compute-phase throughput / ceiling; cases in brackets)",
                                0, NFAM + 1, "backend", family_order[0], family_order[1], family_order[2], family_order[3], family_order[4],
                                family_order[5], family_order[6]);
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        int has_f32 = 0, any = 0;
        for (size_t i = 0; i < rp->nrows; i++) {
            const hb_rrow *w = &rp->rows[i];
            if (w->dev != d || !w->ok) continue;
            any = 1;
            if (!strcmp(w->mode, "f32")) has_f32 = 1;
        }
        if (!any) continue;
        double bw = dv->rec ? hb_run_ceiling(&rp->runs[dv->run].r, dv->backend, "copy_gbps") : DNAN;
        static const char *const dts[] = { "f32", "tf32", "f16", "bf16" };
        double pk[4];
        for (int k = 0; k < 4; k++) pk[k] = dv->rec ? hb_run_ceiling(&rp->runs[dv->run].r, dv->backend, F("peak_gflops_%s", dts[k])) : DNAN;
        FILE *dat;
        hb_plot *p = hb_report_plot_begin(rp, F("roofline_%s", dv->id), "roofline", F("Roofline of %s (ceilings measured in the same run)", dv->id), 900, 480, &dat);
        if (!p) { json_decref(ids); return HB_EDEVICE; }
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set title '%s'\nset logscale xy 10\nset xlabel 'arithmetic intensity (FLOP/byte)'\nset ylabel 'GFLOP/s (compute phase)'\nset samples 400\n",
                     hb_report_gp_str(p->title));
        double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
        int nser = 0;
        char plots[8192];
        size_t po = 0;
        plots[0] = 0;
        groups fam = { 0 };
        /* the device's last-level cache: the GPU's L2 (backend info), else the host's L3 (meta) */
        double llc = dv->rec ? dv->rec->info.l2_bytes : DNAN;
        const char *llc_name = "L2";
        if (!(llc > 0) || dv->host_memory) {
            const hb_rec_meta *m = rp->runs[dv->run].r.meta_rec;
            llc = m ? m->cpu.l3_bytes : DNAN;
            llc_name = "L3";
        }
        for (int fi = 0; fi <= NFAM; fi++) {
            for (int k = 0; k < 4; k++) {
                int first = 1;
                for (size_t i = 0; i < rp->nrows; i++) {
                    const hb_rrow *w = &rp->rows[i];
                    if (w->dev != d || !w->ok || (has_f32 && strcmp(w->mode, "f32")) || fam_rank(w->family) != fi || strcmp(w->dtype, dts[k])) continue;
                    double ai = w->flops / w->bytes, g = isfinite(w->gflops) ? w->gflops : w->flops / w->t[HB_PH_COMPUTE] / 1e9;
                    if (!(ai > 0) || !(g > 0) || !isfinite(ai) || !isfinite(g)) continue;
                    if (first) {
                        if (nser) fprintf(dat, "\n\n");
                        fprintf(dat, "# %s %s: intensity gflops op size\n", fi < NFAM ? family_order[fi] : "other", dts[k]);
                        po += (size_t)snprintf(plots + po, po < sizeof plots ? sizeof plots - po : 0, ", \\\n     '%s.dat' index %d using 1:2 with points lt %d pt %d title '%s'",
                                               p->id, nser, fi % 10 + 1, 7 + 2 * k, hb_report_gp_str(F("%s%s%s", fi < NFAM ? family_order[fi] : "other", k ? " " : "", k ? dts[k] : "")));
                        nser++;
                        first = 0;
                    }
                    fprintf(dat, "%.6g %.6g %s %.17g\n", ai, g, w->op, w->size);
                    if (ai < xmin) xmin = ai;
                    if (ai > xmax) xmax = ai;
                    if (g < ymin) ymin = g;
                    if (g > ymax) ymax = g;
                    char key[256];
                    snprintf(key, sizeof key, "%s", w->family);
                    grp *gg = grp_get(&fam, key, json_pack("{s:s}", "family", w->family));
                    double fr = w->rec->fraction;
                    if (gg && !isnan(fr)) {
                        vec_push(&gg->v[0], fr);
                        /* above the ceiling: v[1] counts them, v[2] those whose bytes fit in the
                         * device's last-level cache (whose bandwidth exceeds the DRAM copy ceiling) */
                        if (fr > 1) {
                            vec_push(&gg->v[1], fr);
                            if (llc > 0 && w->bytes <= llc) vec_push(&gg->v[2], fr);
                        }
                    }
                }
            }
        }
        fclose(dat);
        const char *cell[NFAM];
        for (int fi = 0; fi < NFAM; fi++) cell[fi] = "";
        for (size_t i = 0; i < fam.n; i++) {
            size_t cnt = fam.g[i].v[0].n;
            double m = vec_median(&fam.g[i].v[0]);
            json_array_append_new(jr, json_pack("{s:s,s:s,s:I,s:o}", "device", dv->id, "family", gattr(&fam.g[i], "family"), "n", (json_int_t)cnt, "median_fraction", hb_json_num(m)));
            int fi = fam_rank(gattr(&fam.g[i], "family"));
            size_t nabove = fam.g[i].v[1].n, incache = fam.g[i].v[2].n;
            if (fi < NFAM) cell[fi] = nabove ? F("%s (%zu; %zu above 100%%, %zu of them fit in the %s cache)", hb_report_fmt_pct(100.0 * m), cnt, nabove, incache, llc_name)
                                             : F("%s (%zu)", hb_report_fmt_pct(100.0 * m), cnt);
            above_all += nabove;
            above_cache += incache;
        }
        hb_doc_row(rows, NFAM + 1, dv->id, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6]);
        groups_free(&fam);
        if (!nser) { /* nothing to draw: drop the plot */
            char path[4200];
            snprintf(path, sizeof path, "%s/%s.dat", rp->outdir, p->id);
            remove(path);
            hb_sb_free(&body);
            rp->nplots--;
            continue;
        }
        double top = ymax;
        for (int k = 0; k < 4; k++) if (pk[k] > top) top = pk[k];
        hb_sb_printf(&body, "set xrange [%g:%g]\nset yrange [%g:%g]\nBW = %.6g\nroof(x, p) = (BW > 0 && x * BW < p) ? x * BW : p\n",
                     xmin / 3, xmax * 3, ymin / 3, top * 3, isfinite(bw) ? bw : 0.0);
        hb_sb_printf(&body, "plot ");
        int nl = 0;
        for (int k = 0; k < 4; k++) {
            if (!isfinite(pk[k])) continue;
            hb_sb_printf(&body, "%sroof(x, %.6g) with lines lc rgb hb_c_ceiling lw 1.5 dt %d title '%s'", nl ? ", \\\n     " : "", pk[k], k + 1,
                         hb_report_gp_str(F("%s peak %.4g GFLOP/s%s", dts[k], pk[k], isfinite(bw) && k == 0 ? F(", copy %.4g GB/s", bw) : "")));
            nl++;
        }
        if (!nl && isfinite(bw)) { hb_sb_printf(&body, "x * BW with lines lc rgb hb_c_ceiling lw 1.5 title '%s'", hb_report_gp_str(F("copy %.4g GB/s", bw))); nl++; }
        hb_sb_printf(&body, "%s%s\n", nl ? "" : "NaN notitle", plots);
        hb_status st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) { json_decref(ids); return st; }
        plot_id_add(ids, p);
        json_array_append_new(jr, json_pack("{s:s,s:s,s:o,s:o}", "device", dv->id, "plot", p->id, "copy_gbps", hb_json_num(bw), "peak_gflops_f32", hb_json_num(pk[0])));
        if (!isfinite(bw) && !isfinite(pk[0])) hb_doc_note(rp, "%s: no ceilings in its backend record; its roofline has points only.", dv->id);
    }
    if (above_all)
        hb_doc_note(rp, "%zu case%s reach%s above 100%% of the copy ceiling: that ceiling is the DRAM bandwidth of a STREAM copy larger than "
                    "every cache, and %zu of them move no more bytes than the device's last-level cache holds, so they run from cache at "
                    "that level's higher bandwidth (the rest: a kernel that reads its inputs from cache more than once, or a smaller-than-"
                    "counted working set). Such a fraction is not an impossible efficiency; a per-level ceiling would place it.",
                    above_all, above_all == 1 ? "" : "s", above_all == 1 ? "es" : "", above_cache);
    hb_doc_plots(rp, ids);
    return HB_OK;
}

/* ---------------------------------------------------------------- model totals ---- */

hb_status hb_report_models(ctx *c)
{
    hb_report *rp = c->rp;
    static const char *const modes[] = { "convert", "f32", "resident", "convert-device" };
    json_t *jm = json_array();
    json_object_set_new(rp->summary, "models", jm);
    /* layers of each model per run: distinct op|shape|name */
    json_t *layers = json_object();
    char key[1024];
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!*w->model) continue;
        snprintf(key, sizeof key, "%d|%s", w->run, w->model);
        json_t *l = json_object_get(layers, key);
        if (!l) { l = json_object(); json_object_set_new(layers, key, l); }
        snprintf(key, sizeof key, "%s|%s|%s", w->op, w->shape, w->name);
        json_object_set_new(l, key, json_true());
    }
    if (!json_object_size(layers)) { json_decref(layers); return HB_OK; }
    hb_doc_h(rp, 2, "models", "Model totals");
    hb_doc_p(rp, "For cases that belong to a model (the workload's model field), the per-layer median end-to-end time x the layer's weight (its repeat count), summed per backend, mode, dtype and route. A total is complete only when every layer of the model ran with status ok; an incomplete one says how many layers it has.");
    groups g = { 0 };
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!*w->model) continue;
        snprintf(key, sizeof key, "%d|%s|%s|%s|%s", w->dev, w->model, w->dtype, w->route, w->mode);
        grp *gg = grp_get(&g, key, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:i}", "device", row_dev(c, w)->id, "model", w->model, "mode", w->mode,
                                             "dtype", w->dtype, "route", w->route, "run", w->run, "dev", w->dev));
        if (!gg) continue;
        if (w->ok) vec_push(&gg->v[0], w->t[HB_PH_TOTAL] * w->weight);
    }
    /* one row per model, backend, dtype, route; one column per mode */
    groups piv = { 0 };
    for (size_t i = 0; i < g.n; i++) {
        grp *gg = &g.g[i];
        double sum = 0;
        for (size_t k = 0; k < gg->v[0].n; k++) sum += gg->v[0].v[k];
        snprintf(key, sizeof key, "%d|%s", (int)json_integer_value(json_object_get(gg->attrs, "run")), gattr(gg, "model"));
        size_t nl = json_object_size(json_object_get(layers, key));
        int complete = gg->v[0].n == nl;
        double t = gg->v[0].n ? sum : DNAN;
        json_array_append_new(jm, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:I,s:I,s:b}", "model", gattr(gg, "model"), "device", gattr(gg, "device"),
            "mode", gattr(gg, "mode"), "dtype", gattr(gg, "dtype"), "route", gattr(gg, "route"), "time_s", hb_json_num(t),
            "layers_ok", (json_int_t)gg->v[0].n, "layers", (json_int_t)nl, "complete", complete));
        snprintf(key, sizeof key, "%s|%s|%s|%s", gattr(gg, "model"), gattr(gg, "device"), gattr(gg, "dtype"), gattr(gg, "route"));
        grp *pv = grp_get(&piv, key, json_pack("{s:s,s:s,s:s,s:s,s:i,s:o}", "model", gattr(gg, "model"), "device", gattr(gg, "device"),
                                               "dtype", gattr(gg, "dtype"), "route", gattr(gg, "route"),
                                               "dev", (int)json_integer_value(json_object_get(gg->attrs, "dev")), "cells", json_object()));
        if (!pv) continue;
        json_object_set_new(json_object_get(pv->attrs, "cells"), gattr(gg, "mode"),
                            json_string(complete ? hb_report_fmt_time(t) : F("%s (%zu of %zu layers)", hb_report_fmt_time(t), gg->v[0].n, nl)));
        for (int m = 0; m < 4; m++)
            if (!strcmp(gattr(gg, "mode"), modes[m]) && complete) vec_push(&pv->v[m], t);
    }
    for (int pass = 0; pass < 2; pass++) {
        json_t *rows = hb_doc_table(rp, pass ? "Every dtype and route" : "Model time per pass, dtype f32, route pageable (sum of layer medians x weight)",
                                    pass, 8, "model", "backend", "dtype", "route", modes[0], modes[1], modes[2], modes[3]);
        for (size_t i = 0; i < piv.n; i++) {
            grp *pv = &piv.g[i];
            int main_row = !strcmp(gattr(pv, "dtype"), "f32") && !strcmp(gattr(pv, "route"), "pageable");
            if (pass == 0 && !main_row) continue;
            json_t *cells = json_object_get(pv->attrs, "cells");
            const char *cv[4];
            for (int m = 0; m < 4; m++) cv[m] = json_string_value(json_object_get(cells, modes[m])) ? json_string_value(json_object_get(cells, modes[m])) : "";
            hb_doc_row(rows, 8, gattr(pv, "model"), gattr(pv, "device"), gattr(pv, "dtype"), gattr(pv, "route"), cv[0], cv[1], cv[2], cv[3]);
        }
    }
    /* plot per model: clustered bars, backend x mode (f32, pageable, complete totals only) */
    json_t *ids = plot_ids_new();
    const char *k;
    json_t *lv;
    hb_status st = HB_OK;
    json_t *done = json_object();
    json_object_foreach(layers, k, lv) {
        const char *model = strchr(k, '|') + 1;
        if (json_object_get(done, model)) continue;
        json_object_set_new(done, model, json_true());
        int hasm[4] = { 0, 0, 0, 0 }, nrow = 0;
        for (size_t i = 0; i < piv.n; i++) {
            grp *pv = &piv.g[i];
            if (strcmp(gattr(pv, "model"), model) || strcmp(gattr(pv, "dtype"), "f32") || strcmp(gattr(pv, "route"), "pageable")) continue;
            int any = 0;
            for (int m = 0; m < 4; m++) if (pv->v[m].n) { hasm[m] = 1; any = 1; }
            nrow += any;
        }
        if (!nrow) continue;
        FILE *dat;
        hb_plot *p = hb_report_plot_begin(rp, F("model_%s", model), "models", F("Model total of %s per backend and mode (dtype f32, route pageable)", model), 900, 400, &dat);
        if (!p) { st = HB_EDEVICE; break; }
        fprintf(dat, "# backend, then seconds per model pass for:");
        for (int m = 0; m < 4; m++) if (hasm[m]) fprintf(dat, " %s", modes[m]);
        fprintf(dat, " (NaN = not measured or incomplete)\n");
        for (size_t i = 0; i < piv.n; i++) {
            grp *pv = &piv.g[i];
            if (strcmp(gattr(pv, "model"), model) || strcmp(gattr(pv, "dtype"), "f32") || strcmp(gattr(pv, "route"), "pageable")) continue;
            int any = 0;
            for (int m = 0; m < 4; m++) any |= pv->v[m].n > 0;
            if (!any) continue;
            fprintf(dat, "\"%s\"", gattr(pv, "device"));
            for (int m = 0; m < 4; m++) if (hasm[m]) fprintf(dat, " %.6g", pv->v[m].n ? pv->v[m].v[0] : DNAN);
            fprintf(dat, "\n");
        }
        fclose(dat);
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
                     "set logscale y 10\nset format y '%%.0s%%cs'\nset ylabel 'time per model pass'\nset grid noxtics\nset xtics scale 0\nplot ",
                     hb_report_gp_str(p->title));
        for (int m = 0, col = 2; m < 4; m++) {
            if (!hasm[m]) continue;
            hb_sb_printf(&body, "%s%s using %d%s title '%s' lt %d", col > 2 ? ", " : "", col == 2 ? F("'%s.dat'", p->id) : "''", col,
                         col == 2 ? ":xtic(1)" : "", modes[m], m + 1);
            col++;
        }
        hb_sb_printf(&body, "\n");
        st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) break;
        plot_id_add(ids, p);
    }
    json_decref(done);
    hb_doc_plots(rp, ids);
    groups_free(&piv);
    groups_free(&g);
    json_decref(layers);
    return st;
}

/* ---------------------------------------------------------------- per-op plots ---- */

/* The implementation a row ran (its record's impl, else extra.impl; NULL for records written before
 * the field existed). */
static const char *row_impl(const hb_rrow *w)
{
    return w->rec->impl ? w->rec->impl : w->rec->extra.impl;
}

/* Best implementation per backend for one plotted series: ix[0..n) are one device's and mode's rows
 * sorted by size; where several rows have the same shape (one per implementation) only the fastest
 * (lowest median total) stays. Writes into label " [impl, impl...]" naming the implementations of
 * the rows kept (at most three, then "..."), or "" when no row names one. Returns the new n. */
static size_t best_impl_rows(const hb_report *rp, size_t *ix, size_t n, char *label, size_t ll)
{
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const hb_rrow *w = &rp->rows[ix[k]];
        size_t j = m;
        while (j > 0 && rp->rows[ix[j - 1]].size == w->size && strcmp(rp->rows[ix[j - 1]].shape, w->shape))
            j--;
        if (j > 0 && rp->rows[ix[j - 1]].size == w->size && !strcmp(rp->rows[ix[j - 1]].shape, w->shape)) {
            if (w->t[HB_PH_TOTAL] < rp->rows[ix[j - 1]].t[HB_PH_TOTAL]) ix[j - 1] = ix[k];
            continue;
        }
        ix[m++] = ix[k];
    }
    const char *seen[3];
    int ns = 0, more = 0;
    for (size_t k = 0; k < m; k++) {
        const char *im = row_impl(&rp->rows[ix[k]]);
        if (!im) continue;
        int dup = 0;
        for (int i = 0; i < ns; i++) dup |= !strcmp(seen[i], im);
        if (dup) continue;
        if (ns < 3) seen[ns++] = im;
        else more = 1;
    }
    label[0] = 0;
    for (int i = 0; i < ns; i++) {
        size_t l = strlen(label);
        snprintf(label + l, ll - l, "%s%s", i ? ", " : " [", seen[i]);
    }
    if (ns) {
        size_t l = strlen(label);
        snprintf(label + l, ll - l, "%s]", more ? ", ..." : "");
    }
    return m;
}

hb_status hb_report_per_op(ctx *c)
{
    hb_report *rp = c->rp;
    static const char *const modes[] = { "convert", "f32", "resident", "convert-device" };
    hb_doc_h(rp, 2, "ops", "Time and throughput against size, per op");
    hb_doc_p(rp, "Median end-to-end time and the end-to-end throughput (GFLOP/s for compute-bound ops, GB/s for memory-bound ops) of every status-ok case with dtype f32, route pageable (a backend without pageable results shows its first route). Colour: backend; line style: mode (solid f32, dashed convert, dotted resident, dash-dot convert-device). Where a backend ran a shape with several implementations only the fastest is drawn; the legend names the implementations drawn (record field impl).");
    json_t *ids = plot_ids_new();
    size_t *ix = malloc((rp->nrows + 1) * sizeof *ix);
    if (!ix) { json_decref(ids); return HB_ENOMEM; }
    for (int o = 0; o < c->nops; o++) {
        const char *op = c->ops[o];
        const char *bound = "";
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb ser = { 0 };
        int nser = 0;
        double smin = INFINITY, smax = -INFINITY;
        for (int d = 0; d < rp->ndevs; d++) {
            /* route: pageable if the device has it for this op, else the first seen */
            const char *route = NULL;
            for (size_t i = 0; i < rp->nrows; i++) {
                const hb_rrow *w = &rp->rows[i];
                if (w->dev != d || !w->ok || strcmp(w->op, op) || strcmp(w->dtype, "f32")) continue;
                if (!route || !strcmp(w->route, "pageable")) route = w->route;
            }
            if (!route) continue;
            for (int m = 0; m < 4; m++) {
                size_t n = 0;
                for (size_t i = 0; i < rp->nrows; i++) {
                    const hb_rrow *w = &rp->rows[i];
                    if (w->dev == d && w->ok && !strcmp(w->op, op) && !strcmp(w->dtype, "f32") && !strcmp(w->route, route) && !strcmp(w->mode, modes[m]))
                        ix[n++] = i;
                }
                if (!n) continue;
                qsort_r(ix, n, sizeof *ix, cmp_rowix, c);
                char impl[160];
                n = best_impl_rows(rp, ix, n, impl, sizeof impl);
                if (!p) {
                    p = hb_report_plot_begin(rp, F("op_%s", op), "ops", F("%s: time and throughput against size", op), 1240, 440, &dat);
                    if (!p) { free(ix); json_decref(ids); return HB_EDEVICE; }
                    bound = rp->rows[ix[0]].bound;
                }
                if (nser) fprintf(dat, "\n\n");
                fprintf(dat, "# %s %s (%s): size total_s ci_lo ci_hi throughput thr_lo thr_hi shape (a blank line ends a sweep)\n",
                        rp->devs[d].id, modes[m], route);
                const hb_rrow *prev = NULL;
                for (size_t k = 0; k < n; k++) {
                    const hb_rrow *w = &rp->rows[ix[k]];
                    double thr = !strcmp(bound, "memory") ? (isfinite(w->gbps_total) ? w->gbps_total : w->bytes / w->t[HB_PH_TOTAL] / 1e9)
                                                          : (isfinite(w->gflops_total) ? w->gflops_total : w->flops / w->t[HB_PH_TOTAL] / 1e9);
                    double lo, hi;
                    ci_or_median(w, &lo, &hi);
                    if (series_break(prev, w)) fprintf(dat, "\n");
                    prev = w;
                    if (w->size < smin) smin = w->size;
                    if (w->size > smax) smax = w->size;
                    /* throughput is work / time: its interval is the time's, inverted */
                    fprintf(dat, "%.17g %.6g %.6g %.6g %.6g %.6g %.6g \"%s\"\n", w->size, w->t[HB_PH_TOTAL], lo, hi, thr,
                            thr * w->t[HB_PH_TOTAL] / hi, thr * w->t[HB_PH_TOTAL] / lo, w->shape);
                }
                static const int dts[] = { 2, 1, 3, 4 }, pts[] = { 6, 7, 4, 8 };
                hb_sb_printf(&ser, "%s'%s.dat' index %d using 1:%%d with yerrorlines lt %d dt %d pt %d %%s '%s'", nser ? ", \\\n     " : "", p->id, nser,
                             d % 10 + 1, dts[m], pts[m], hb_report_gp_str(F("%s %s%s%s", rp->devs[d].id, modes[m], strcmp(route, "pageable") ? F(" (%s)", route) : "", impl)));
                nser++;
            }
        }
        if (!p) { hb_sb_free(&ser); continue; }
        fclose(dat);
        if (!(smax > smin)) {
            /* one size only: not a sweep; its figures are in the tables above */
            plot_drop(rp, p);
            hb_doc_note(rp, "%s: every case has one size (%s); no plot against size.", op, hb_report_fmt_count(smin));
            hb_sb_free(&ser);
            continue;
        }
        /* the series list is used twice (time panel, throughput panel): %d is the column, %s title/notitle */
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set multiplot title '%s'\n", hb_report_gp_str(p->title));
        gp_size_axis(&body);
        hb_sb_printf(&body, "set logscale y 10\nset lmargin at screen 0.07\nset rmargin at screen 0.41\nset tmargin at screen 0.88\nset bmargin at screen 0.14\n"
                     "set ylabel 'median end-to-end time (s)'\nset format y '%%.0s%%cs'\nunset key\nplot ");
        /* expand the series template for column 2 (no titles) */
        for (const char *s = ser.s; *s; s++) {
            if (s[0] == '%' && s[1] == 'd') { hb_sb_printf(&body, "2:3:4"); s++; }
            else if (s[0] == '%' && s[1] == 's') { hb_sb_printf(&body, "title"); s++; }
            else hb_sb_printf(&body, "%c", *s);
        }
        hb_sb_printf(&body, "\nset lmargin at screen 0.50\nset rmargin at screen 0.80\nset ylabel '%s'\nset format y '%%g'\n"
                     "set key at screen 0.81, screen 0.88 left top\nplot ", !strcmp(bound, "memory") ? "end-to-end GB/s" : "end-to-end GFLOP/s");
        for (const char *s = ser.s; *s; s++) {
            if (s[0] == '%' && s[1] == 'd') { hb_sb_printf(&body, "5:6:7"); s++; }
            else if (s[0] == '%' && s[1] == 's') { hb_sb_printf(&body, "title"); s++; }
            else hb_sb_printf(&body, "%c", *s);
        }
        hb_sb_printf(&body, "\nunset multiplot\n");
        hb_sb_free(&ser);
        hb_status st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) { free(ix); json_decref(ids); return st; }
        plot_id_add(ids, p);
    }
    free(ix);
    hb_doc_plots(rp, ids);
    return HB_OK;
}

