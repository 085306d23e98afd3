/* q4_transfers.c - Q4: the share of host-device transfers and which route (pageable, pinned, mapped) serves each size (report/common.h). */
#include "report/common.h"
#include "report/across.h"

/* ---------------------------------------------------------------- Q4 transfers ---- */

/* "+12%", "-3.0%": a change, signed */
static const char *fmt_signed_pct(double p)
{
    if (!isfinite(p)) return "n/a";
    return F(fabs(p) < 10 ? "%+.1f%%" : "%+.0f%%", p);
}

/* v, or 0 when it is not finite (a figure the summary holds as null, read back as 0) */
static double nz(double v) { return isfinite(v) ? v : 0; }

hb_status hb_report_q4(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    json_t *q = json_object(), *jshare = json_array(), *jroute = json_array(), *jres = json_array(), *jce = json_array();
    json_object_set_new(rp->summary, "q4", q);
    json_object_set_new(q, "definition", json_string("transfer_share_pct = 100 * (h2d + d2h) / total (phase medians, status ok, backends with their own memory); route saving_pct = 100 * (1 - total(route) / total(pageable)), transfer_saving_pct the same on h2d + d2h; resident_saving_pct = 100 * (1 - total(resident) / total(f32)) for the chain"));
    json_object_set_new(q, "share", jshare);
    json_object_set_new(q, "routes", jroute);
    json_object_set_new(q, "resident", jres);
    json_object_set_new(q, "ceilings", jce);
    hb_doc_h(rp, 2, "q4", "Q4 Transfers: share of h2d/d2h and what pinned and mapped save");
    hb_doc_p(rp, "Transfer share = (h2d + d2h) / total from phase medians, for backends with their own memory (host-memory backends report 0). Route savings match each pinned or mapped case with its pageable twin (same backend, op, shape, mode, dtype).");
    int ndm = 0;
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (!dv->available || dv->host_memory) continue;
        int rows_d = 0;
        for (size_t i = 0; i < rp->nrows && !rows_d; i++) if (rp->rows[i].dev == d && rp->rows[i].ok) rows_d = 1;
        if (rows_d) ndm++;
    }
    json_object_set_new(q, "answered", json_boolean(ndm > 0));
    if (!ndm) {
        hb_doc_note(rp, "Unanswered: no backend with its own memory (OpenCL, CUDA) has status-ok cases in these results. A run with the OpenCL or CUDA backend (e.g. the GPU reference run, results/h100-reference.jsonl) would answer.");
        card_add(cards, 4, "Transfers", "unanswered", "none", "Only host-memory backends ran (h2d/d2h are 0); an OpenCL or CUDA run (the GPU reference run) would answer.");
        return HB_OK;
    }
    groups share = { 0 }, route = { 0 };
    char key[512];
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        const hb_rdev *dv = row_dev(c, w);
        if (!w->ok || dv->host_memory || !dv->available) continue;
        double s = 100.0 * xfer(w) / w->t[HB_PH_TOTAL];
        snprintf(key, sizeof key, "%d|%s|%s", w->dev, w->route, w->mode);
        grp *g = grp_get(&share, key, json_pack("{s:s,s:s,s:s,s:i}", "device", dv->id, "route", w->route, "mode", w->mode, "dev", w->dev));
        if (g) vec_push(&g->v[0], s);
    }
    json_t *rows = hb_doc_table(rp, "Transfer share of end-to-end time per backend, route and mode (median over cases; min-max in brackets)", 0, 5,
                                "backend", "route", "mode", "cases", "h2d+d2h share of total");
    for (size_t i = 0; i < share.n; i++) {
        grp *g = &share.g[i];
        double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]), m = vec_median(&g->v[0]);
        json_array_append_new(jshare, json_pack("{s:s,s:s,s:s,s:I,s:o,s:o,s:o}", "device", gattr(g, "device"), "route", gattr(g, "route"),
            "mode", gattr(g, "mode"), "n", (json_int_t)g->v[0].n, "median_share_pct", hb_json_num(m), "min_share_pct", hb_json_num(lo), "max_share_pct", hb_json_num(hi)));
        hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "route"), gattr(g, "mode"), F("%zu", g->v[0].n),
                   F("%s (%s to %s)", hb_report_fmt_pct(m), hb_report_fmt_pct(lo), hb_report_fmt_pct(hi)));
    }
    static const char *const alt[] = { "pinned", "mapped" };
    for (int r = 0; r < 2; r++) {
        rpair *pr;
        size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_MODE | K_DTYPE | K_NAME, K_ROUTE, "pageable", alt[r], NULL, NULL, &pr);
        if (!pr) { groups_free(&share); return HB_ENOMEM; }
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (row_dev(c, b)->host_memory) continue;
            snprintf(key, sizeof key, "%d|%s", b->dev, alt[r]);
            grp *g = grp_get(&route, key, json_pack("{s:s,s:s}", "device", row_dev(c, b)->id, "route", alt[r]));
            if (!g) continue;
            vec_push(&g->v[0], 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]));
            if (xfer(a) > 0) vec_push(&g->v[1], 100.0 * (1.0 - xfer(b) / xfer(a)));
            /* what the route costs in compute: a mapped (zero-copy) kernel reads host memory over the
             * bus, so its transfer time is 0 by construction and the cost moves into compute */
            if (a->t[HB_PH_COMPUTE] > 0 && b->t[HB_PH_COMPUTE] > 0)
                vec_push(&g->v[2], 100.0 * (b->t[HB_PH_COMPUTE] / a->t[HB_PH_COMPUTE] - 1.0));
        }
        free(pr);
    }
    if (route.n) {
        rows = hb_doc_table(rp, "What pinned and mapped save over pageable (median over matched cases; mapped is zero-copy: it has no "
                            "transfer phase, so its transfer saving is 100% by construction and its cost shows in compute time)", 0, 6,
                            "backend", "route", "cases", "end-to-end saving", "transfer-time saving", "compute time change");
        for (size_t i = 0; i < route.n; i++) {
            grp *g = &route.g[i];
            size_t cnt = g->v[0].n;
            double ms = vec_median(&g->v[0]), mt = vec_median(&g->v[1]), mc = vec_median(&g->v[2]);
            json_array_append_new(jroute, json_pack("{s:s,s:s,s:I,s:o,s:o,s:o}", "device", gattr(g, "device"), "route", gattr(g, "route"),
                "n", (json_int_t)cnt, "median_saving_pct", hb_json_num(ms), "median_transfer_saving_pct", hb_json_num(mt),
                "median_compute_change_pct", hb_json_num(mc)));
            hb_doc_row(rows, 6, gattr(g, "device"), gattr(g, "route"), F("%zu", cnt), hb_report_fmt_pct(ms),
                       !strcmp(gattr(g, "route"), "mapped") ? F("%s (no copy: by construction)", hb_report_fmt_pct(mt)) : hb_report_fmt_pct(mt),
                       isfinite(mc) ? F("%+.0f%%", mc) : "n/a");
        }
    } else {
        hb_doc_note(rp, "No pinned or mapped case has a pageable twin with status ok: the route comparison needs a run with routes pageable, pinned and mapped.");
    }
    /* resident chain */
    rpair *pr;
    size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "f32", "resident", NULL, NULL, &pr);
    if (!pr) { groups_free(&share); groups_free(&route); return HB_ENOMEM; }
    sort_pairs(c, pr, n);
    /* the chain rows' savings per device, for the card below (a saving that is not finite counts 0,
     * as its null in the summary read) */
    struct chsav { int dev; double s; } *chs = malloc((n + 1) * sizeof *chs);
    size_t nchs = 0;
    if (!chs) { free(pr); groups_free(&share); groups_free(&route); return HB_ENOMEM; }
    /* three views: the chain rows, medians per backend and class, every case (collapsed) */
    groups resg = { 0 };
    json_t *rows_chain = NULL, *rows_all = NULL;
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        if (row_dev(c, b)->host_memory) continue;
        double s = 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]);
        if (!strcmp(b->family, "chain")) chs[nchs++] = (struct chsav){b->dev, isfinite(s) ? s : 0};
        json_array_append_new(jres, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "device", row_dev(c, b)->id, "op", b->op, "family", b->family, "name", b->name,
            "shape", b->shape, "route", b->route, "total_f32_s", hb_json_num(a->t[HB_PH_TOTAL]), "total_resident_s", hb_json_num(b->t[HB_PH_TOTAL]),
            "saving_pct", hb_json_num(s), "transfer_share_f32_pct", hb_json_num(100.0 * xfer(a) / a->t[HB_PH_TOTAL])));
        if (!rows_all) rows_all = json_array();
        json_t *r = json_array();
        double slo, shi;
        saving_ci(a, b, &slo, &shi);
        const char *cells[] = { row_dev(c, b)->id, b->op, *b->name ? b->name : b->shape, b->route, fmt_time_ci(a),
                                fmt_time_ci(b), F("%s [%.0f%%, %.0f%%]", hb_report_fmt_pct(s), slo, shi) };
        for (int k = 0; k < 7; k++) json_array_append_new(r, json_string(cells[k]));
        if (!strcmp(b->family, "chain")) {
            if (!rows_chain) rows_chain = hb_doc_table(rp, "Transformer block: resident (tensors stay on the device) against f32 (every op crosses)", 0, 7,
                                                       "backend", "chain", "name", "route", "f32", "resident", "saving");
            json_array_append(rows_chain, r);
        }
        json_array_append_new(rows_all, r);
        snprintf(key, sizeof key, "%d|%s|%s", b->dev, class_of(b), b->route);
        grp *g = grp_get(&resg, key, json_pack("{s:s,s:s,s:s}", "device", row_dev(c, b)->id, "class", class_of(b), "route", b->route));
        if (g) vec_push(&g->v[0], s);
    }
    if (resg.n) {
        rows = hb_doc_table(rp, "Resident against f32 per backend, op class and route (median over cases)", 0, 5, "backend", "class", "route", "cases", "resident saves");
        for (size_t i = 0; i < resg.n; i++) {
            grp *g = &resg.g[i];
            size_t cnt = g->v[0].n;
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "class"), gattr(g, "route"), F("%zu", cnt), hb_report_fmt_pct(vec_median(&g->v[0])));
        }
    }
    if (rows_all) {
        rows = hb_doc_table(rp, "Resident against f32, every matched case", 1, 7, "backend", "op", "name/shape", "route", "f32", "resident", "saving");
        json_array_extend(rows, rows_all);
        json_decref(rows_all);
    }
    groups_free(&resg);
    free(pr);
    /* ceilings */
    rows = NULL;
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->host_memory || !dv->rec) continue;
        for (size_t i = 0; i < dv->rec->nceilings; i++) {
            const hb_rec_ceiling *ce = &dv->rec->ceilings[i];
            const char *nm = ce->name;
            if (!nm || (strncmp(nm, "h2d_gbps_", 9) && strncmp(nm, "d2h_gbps_", 9))) continue;
            if (!rows) rows = hb_doc_table(rp, "Measured transfer ceilings (this run's probes)", 0, 4, "backend", "ceiling", "GB/s", "how");
            double v = isnan(ce->value) ? 0 : ce->value; /* null: 0, as json_number_value read it */
            json_array_append_new(jce, json_pack("{s:s,s:s,s:o}", "device", dv->id, "name", nm, "gbps", hb_json_num(v)));
            const char *how = ce->how;
            hb_doc_row(rows, 4, dv->id, nm, hb_report_fmt_num(v), how ? how : "");
        }
    }
    for (int d = 0; d < rp->ndevs; d++)
        if (!rp->devs[d].host_memory && rp->devs[d].available && rp->devs[d].is_cpu_device)
            hb_doc_note(rp, "%s is a CPU device (%s): its h2d/d2h are copies within host memory, not transfers over a bus.", rp->devs[d].id,
                        rp->devs[d].description);
    /* plot per device: share vs size, one series per route (mode f32, dtype f32) */
    json_t *ids = plot_ids_new();
    size_t *ix = malloc((rp->nrows + 1) * sizeof *ix);
    if (!ix) { free(chs); groups_free(&share); groups_free(&route); return HB_ENOMEM; }
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->host_memory || !dv->available) continue;
        static const char *const routes[] = { "pageable", "pinned", "mapped" };
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb body = { 0 };
        int nser = 0;
        for (int r = 0; r < 3; r++) {
            size_t m = 0;
            for (size_t i = 0; i < rp->nrows; i++) {
                const hb_rrow *w = &rp->rows[i];
                if (w->dev == d && w->ok && !strcmp(w->route, routes[r]) && !strcmp(w->mode, "f32") && !strcmp(w->dtype, "f32") &&
                    strcmp(w->family, "chain")) ix[m++] = i;
            }
            if (!m) continue;
            qsort_r(ix, m, sizeof *ix, cmp_rowix, c);
            if (!p) {
                p = hb_report_plot_begin(rp, F("q4_share_%s", dv->id), "q4", F("Q4: h2d+d2h share of end-to-end time on %s (mode f32)", dv->id), 900, 420, &dat);
                if (!p) { free(ix); free(chs); groups_free(&share); groups_free(&route); return HB_EDEVICE; }
                hb_sb_printf(&body, "set title '%s'\n", hb_report_gp_str(p->title));
                gp_size_axis(&body);
                hb_sb_printf(&body, "set ylabel 'h2d + d2h, %% of total'\nset yrange [0:100]\nplot ");
            }
            if (nser) { fprintf(dat, "\n\n"); hb_sb_printf(&body, ", \\\n     "); }
            fprintf(dat, "# route %s: size share_pct op\n", routes[r]);
            for (size_t k = 0; k < m; k++) {
                const hb_rrow *w = &rp->rows[ix[k]];
                fprintf(dat, "%.17g %.5g %s\n", w->size, 100.0 * xfer(w) / w->t[HB_PH_TOTAL], w->op);
            }
            hb_sb_printf(&body, "'%s.dat' index %d using 1:2 with points lt %d title '%s'", p->id, nser, r + 1, routes[r]);
            nser++;
        }
        if (p) {
            hb_sb_printf(&body, "\n");
            fclose(dat);
            hb_status st = hb_report_plot_script(rp, p, body.s);
            if (st != HB_OK) { hb_sb_free(&body); free(ix); free(chs); groups_free(&share); groups_free(&route); return st; }
            plot_id_add(ids, p);
        }
        hb_sb_free(&body);
    }
    free(ix);
    hb_doc_plots(rp, ids);
    /* card: one finding per figure across the devices with their own memory (report/across.h) */
    hb_across ax[5];
    for (int k = 0; k < 5; k++) hb_across_init(&ax[k], HB_ACROSS_TOL_PCT);
    json_t *drows = json_array();
    int any_mapped = 0;
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->host_memory || !dv->available) continue;
        double sh = DNAN, pin = DNAN, res = DNAN, mapc = DNAN, mape = DNAN;
        /* the medians of the tables above (vec_median again: the vectors are sorted, the medians the
         * same; one that is not finite counts 0, as its null in the summary read) */
        for (size_t i = 0; i < share.n; i++) {
            grp *g = &share.g[i];
            if (!strcmp(gattr(g, "device"), dv->id) && !strcmp(gattr(g, "route"), "pageable") && !strcmp(gattr(g, "mode"), "f32"))
                sh = nz(vec_median(&g->v[0]));
        }
        for (size_t i = 0; i < route.n; i++) {
            grp *g = &route.g[i];
            if (strcmp(gattr(g, "device"), dv->id)) continue;
            double v = nz(vec_median(&g->v[1]));
            if (!strcmp(gattr(g, "route"), "pinned")) pin = v;
            else {
                mapc = nz(vec_median(&g->v[2]));
                mape = nz(vec_median(&g->v[0]));
            }
        }
        vec rv = { 0 };
        for (size_t i = 0; i < nchs; i++)
            if (chs[i].dev == d) vec_push(&rv, chs[i].s);
        res = vec_median(&rv);
        free(rv.v);
        any_mapped |= isfinite(mapc) || isfinite(mape);
        hb_across_dev(&ax[0], rp, d, sh, "no f32 pageable case");
        hb_across_dev(&ax[1], rp, d, pin, "no pinned case with a pageable twin");
        hb_across_dev(&ax[2], rp, d, mapc, "no mapped case with a pageable twin");
        hb_across_dev(&ax[3], rp, d, mape, "no mapped case with a pageable twin");
        hb_across_dev(&ax[4], rp, d, res, "no resident layer case");
        json_t *r = json_array();
        const char *cells[] = { dv->id, hb_report_fmt_pct(sh), hb_report_fmt_pct(pin), isfinite(mapc) ? F("%+.0f%%", mapc) : "n/a",
                                hb_report_fmt_pct(mape), hb_report_fmt_pct(res) };
        for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) json_array_append_new(r, json_string(cells[k]));
        json_array_append_new(drows, r);
    }
    card_add(cards, 4, "Transfers", "measured (no plan figure)", "info", "");
    static const char *const what[] = { "h2d+d2h share of f32-mode time (pageable)", "transfer time pinned saves",
                                        "mapped (zero-copy: no copies) compute time change", "mapped end-to-end saving",
                                        "resident transformer layer end-to-end saving" };
    char text[2000], phrase[700];
    size_t o = 0;
    for (int k = 0; k < 5; k++) { /* a figure no device has is still said once: "n/a on 8 GPUs in 2 runs (why)" */
        if (k == 3 && !any_mapped) continue; /* mapped's n/a said once, with its compute change */
        hb_across_text(&ax[k], k == 2 ? fmt_signed_pct : hb_report_fmt_pct, phrase, sizeof phrase);
        if (o < sizeof text - 1) o += (size_t)snprintf(text + o, sizeof text - o, "%s%s: %s", o ? "; " : "", what[k], phrase);
        hb_across_card(cards, what[k], &ax[k]);
    }
    if (o < sizeof text - 1) snprintf(text + o, sizeof text - o, ".");
    json_object_set_new(json_array_get(cards, json_array_size(cards) - 1), "text", json_string(text));
    json_t *crows = hb_across_card_table(cards, "per device", 6, "backend", "h2d+d2h share (pageable, f32)", "pinned: transfer saving",
                                         "mapped: compute change", "mapped: end-to-end saving", "resident layer: saving");
    json_array_extend(crows, drows);
    json_decref(drows);
    for (int k = 0; k < 5; k++) hb_across_free(&ax[k]);
    free(chs);
    groups_free(&share);
    groups_free(&route);
    return HB_OK;
}

