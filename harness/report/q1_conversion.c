/* q1_conversion.c - Q1: what converting f64 host data around every op costs, against f32 and resident data, per device and op (report/common.h). */
#include "report/common.h"
#include "report/across.h"

/* ---------------------------------------------------------------- Q1 conversion cost ---- */

/* the saving cell of a pair whose compute moved between modes: marked, no saving shown */
static const char *moved_cell(double ratio) { return F("[bad] compute moved (convert/f32 %.3fx): left out", ratio); }

/* A chain record is a decode layer when its shape's seq is 1 (one new token over the KV cache);
 * a record without seq (older files) when its name does not say "prefill". */
static int chain_is_decode(const hb_rrow *r)
{
    double seq = HB_REC_SHAPE(&r->rec->shape, seq);
    if (!isnan(seq)) return seq == 1;
    return !(r->name && strstr(r->name, "prefill"));
}

hb_status hb_report_q1(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    rpair *pr;
    size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert", "f32", NULL, NULL, &pr);
    if (!pr) return HB_ENOMEM;
    sort_pairs(c, pr, n);
    /* the mode-invariance check (mode_invariance.c): a pair where either case's compute moved
     * between modes beyond its noise is marked and left out of every savings figure */
    hb_report_mc minv;
    if (hb_report_mc_compute(rp, &minv) != HB_OK) { free(pr); return HB_ENOMEM; }
    unsigned char *mvd = calloc(n + 1, 1);
    if (!mvd) { hb_report_mc_free(&minv); free(pr); return HB_ENOMEM; }
    size_t nmoved = 0;
    for (size_t i = 0; i < n; i++) nmoved += mvd[i] = minv.moved[pr[i].a] || minv.moved[pr[i].b];
    json_t *q = json_object(), *jp = json_array();
    json_object_set_new(rp->summary, "q1", q);
    json_object_set_new(q, "definition", json_string("saving_pct = 100 * (1 - total_f32 / total_convert), phase medians of status-ok cases matched by device, op, shape, route, dtype and name; pairs with compute_moved (the compute phase moved between modes beyond its noise, mode_invariance) are left out of by_class, chain verdicts, convert_device and verdicts"));
    json_object_set_new(q, "moved_left_out", json_integer((json_int_t)nmoved));
    json_object_set_new(q, "pairs", jp);
    groups bycls = { 0 }, byfam = { 0 };
    int *has = calloc((size_t)rp->ndevs + 1, sizeof *has);
    if (!has) { free(pr); return HB_ENOMEM; }
    char key[512];
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        double ta = a->t[HB_PH_TOTAL], tb = b->t[HB_PH_TOTAL];
        double s = 100.0 * (1.0 - tb / ta);
        double cs = 100.0 * conv_time(a) / ta, xs = 100.0 * xfer(a) / ta, ks = 100.0 * a->t[HB_PH_COMPUTE] / ta;
        json_t *pc = json_object(), *pf = json_object();
        for (int k = 0; k < HB_PH_COUNT; k++) {
            json_object_set_new(pc, hb_phase_names[k], hb_json_num(a->t[k]));
            json_object_set_new(pf, hb_phase_names[k], hb_json_num(b->t[k]));
        }
        json_array_append_new(jp, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:o}",
            "device", row_dev(c, b)->id, "op", b->op, "family", b->family, "class", class_of(b), "shape", b->shape,
            "size", hb_json_num(b->size), "route", b->route, "dtype", b->dtype, "name", b->name,
            "key_convert", rkey(a), "key_f32", rkey(b),
            "total_convert_s", hb_json_num(ta), "total_f32_s", hb_json_num(tb), "saving_pct", hb_json_num(s),
            "convert_share_pct", hb_json_num(cs), "transfer_share_pct", hb_json_num(xs), "compute_share_pct", hb_json_num(ks),
            "phases_convert", pc, "phases_f32", pf, "compute_moved", mvd[i], "compute_ratio", hb_json_num(minv.ratio[pr[i].a])));
        if (mvd[i]) continue;
        has[b->dev] = 1;
        snprintf(key, sizeof key, "%d|%s", b->dev, class_of(b));
        grp *g = grp_get(&bycls, key, json_pack("{s:s,s:s}", "device", row_dev(c, b)->id, "class", class_of(b)));
        if (g) { vec_push(&g->v[0], s); vec_push(&g->v[1], cs); vec_push(&g->v[2], xs); }
        snprintf(key, sizeof key, "%d|%s", b->dev, b->op);
        g = grp_get(&byfam, key, json_pack("{s:s,s:s,s:s}", "device", row_dev(c, b)->id, "op", b->op, "family", b->family));
        if (g) vec_push(&g->v[0], s);
    }

    hb_doc_h(rp, 2, "q1", "Q1 Conversion cost: what f32 saves over convert");
    hb_doc_p(rp, "Saving = 1 - total(f32) / total(convert), from the median end-to-end time of each case, matched by backend, op, shape, route and dtype; only cases with status ok count. The plan expected %g-%g%% and set %g-%g%% as success. Conversion share = (convert_in + convert_out) / total of the convert case.",
             hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct, hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct);
    if (nmoved)
        hb_doc_p(rp, "%zu of the %zu matched cases are left out of every saving below: their compute phase, which conversion does not touch, moved between convert and f32 beyond its noise (see Mode invariance below), so their difference is a measurement artifact, not a saving. The tables mark them \"compute moved\".",
                 nmoved, n);
    json_t *jc = json_array();
    json_object_set_new(q, "by_class", jc);
    json_t *rows = hb_doc_table(rp, "Saving per backend and op class (median over every matched case; min-max in brackets)", 0, 6,
                                "backend", "class", "cases", "median saving", "conversion share of convert time", "verdict");
    for (size_t i = 0; i < bycls.n; i++) {
        grp *g = &bycls.g[i];
        size_t cnt = g->v[0].n;
        double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]);
        double m = vec_median(&g->v[0]), cs = vec_median(&g->v[1]), xs = vec_median(&g->v[2]);
        const char *tone, *v = verdict_q1(m, &tone);
        json_array_append_new(jc, json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:s,s:s}", "device", gattr(g, "device"), "class", gattr(g, "class"),
            "n", (json_int_t)cnt, "median_saving_pct", hb_json_num(m), "min_saving_pct", hb_json_num(lo), "max_saving_pct", hb_json_num(hi),
            "median_convert_share_pct", hb_json_num(cs), "median_transfer_share_pct", hb_json_num(xs), "verdict", v, "tone", tone));
        hb_doc_row(rows, 6, gattr(g, "device"), gattr(g, "class"), F("%zu", cnt),
                   F("%s (%s to %s)", hb_report_fmt_pct(m), hb_report_fmt_pct(lo), hb_report_fmt_pct(hi)),
                   hb_report_fmt_pct(cs), tone_cell(tone, v));
    }
    /* chain: the model-level answer */
    json_t *jch = json_array();
    json_object_set_new(q, "chain", jch);
    int nchain = 0;
    for (size_t i = 0; i < n; i++) if (!strcmp(rp->rows[pr[i].b].family, "chain")) nchain++;
    if (nchain) {
        rows = hb_doc_table(rp, "Transformer block (chain) per backend: the model-level answer", 0, 8,
                            "backend", "chain", "name", "route", "convert", "f32", "saving", "verdict");
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (strcmp(b->family, "chain")) continue;
            double s = 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]);
            const char *tone, *v = verdict_q1(s, &tone);
            if (mvd[i]) { v = "left out: compute moved between modes"; tone = "none"; }
            json_array_append_new(jch, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:s,s:s,s:b}", "device", row_dev(c, b)->id, "op", b->op,
                "name", b->name, "route", b->route, "dtype", b->dtype, "total_convert_s", hb_json_num(a->t[HB_PH_TOTAL]),
                "total_f32_s", hb_json_num(b->t[HB_PH_TOTAL]), "saving_pct", hb_json_num(s), "verdict", v, "tone", tone, "compute_moved", mvd[i]));
            double slo, shi;
            saving_ci(a, b, &slo, &shi);
            hb_doc_row(rows, 8, row_dev(c, b)->id, b->op, *b->name ? b->name : b->shape, b->route, fmt_time_ci(a), fmt_time_ci(b),
                       mvd[i] ? moved_cell(minv.ratio[pr[i].a]) : F("%s [%.0f%%, %.0f%%]", hb_report_fmt_pct(s), slo, shi),
                       mvd[i] ? "" : tone_cell(tone, v));
        }
    } else {
        hb_doc_note(rp, "No transformer-block chain (family \"chain\") has both a convert and an f32 case with status ok in these results, so the model-level answer is missing; a default `hybench run` (which includes the TinyLlama transformer-block chain of workloads/tinyllama.ini) would answer it.");
    }
    /* convert-device (f64 uploaded, converted on the device): a design option beside convert */
    {
        rpair *pc, *pf;
        size_t nc = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert", "convert-device", NULL, NULL, &pc);
        size_t nf = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert-device", "f32", NULL, NULL, &pf);
        json_t *jcd = json_array();
        json_object_set_new(q, "convert_device", jcd);
        if (pc && pf && (nc || nf)) {
            groups gd = { 0 };
            for (int w = 0; w < 2; w++) {
                rpair *v = w ? pf : pc;
                size_t nv = w ? nf : nc;
                for (size_t i = 0; i < nv; i++) {
                    const hb_rrow *a = &rp->rows[v[i].a], *b = &rp->rows[v[i].b];
                    if (minv.moved[v[i].a] || minv.moved[v[i].b]) continue;
                    snprintf(key, sizeof key, "%d|%s", b->dev, class_of(b));
                    grp *g = grp_get(&gd, key, json_pack("{s:s,s:s}", "device", row_dev(c, b)->id, "class", class_of(b)));
                    if (g) vec_push(&g->v[w], 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]));
                }
            }
            rows = hb_doc_table(rp, "convert-device (f64 uploaded, converted on the device) against convert and f32 (medians)", 0, 5,
                                "backend", "class", "cases", "convert-device saves over convert", "f32 saves over convert-device");
            for (size_t i = 0; i < gd.n; i++) {
                grp *g = &gd.g[i];
                size_t cnt = g->v[0].n > g->v[1].n ? g->v[0].n : g->v[1].n;
                double m0 = vec_median(&g->v[0]), m1 = vec_median(&g->v[1]);
                json_array_append_new(jcd, json_pack("{s:s,s:s,s:I,s:o,s:o}", "device", gattr(g, "device"), "class", gattr(g, "class"),
                    "n", (json_int_t)cnt, "convert_device_over_convert_pct", hb_json_num(m0), "f32_over_convert_device_pct", hb_json_num(m1)));
                hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "class"), F("%zu", cnt), hb_report_fmt_pct(m0), hb_report_fmt_pct(m1));
            }
            groups_free(&gd);
        }
        free(pc);
        free(pf);
    }
    rows = hb_doc_table(rp, "Saving per backend and op (median over sizes, routes and dtypes)", 1, 6,
                        "backend", "op", "cases", "median saving", "min", "max");
    for (size_t i = 0; i < byfam.n; i++) {
        grp *g = &byfam.g[i];
        double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]);
        size_t cnt = g->v[0].n;
        hb_doc_row(rows, 6, gattr(g, "device"), gattr(g, "op"), F("%zu", cnt), hb_report_fmt_pct(vec_median(&g->v[0])),
                   hb_report_fmt_pct(lo), hb_report_fmt_pct(hi));
    }
    rows = hb_doc_table(rp, "Every matched case (totals: median [95% CI], \u2020 = CI target missed; saving [the interval the two CIs allow]; phase medians of the convert case)", 1, 12, "backend", "op", "shape", "route", "dtype",
                        "convert total", "f32 total", "saving", "convert_in", "h2d", "compute", "d2h+convert_out");
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        double slo, shi;
        saving_ci(a, b, &slo, &shi);
        hb_doc_row(rows, 12, row_dev(c, b)->id, b->op, b->shape, b->route, b->dtype, fmt_time_ci(a), fmt_time_ci(b),
                   mvd[i] ? moved_cell(minv.ratio[pr[i].a])
                          : F("%s [%.0f%%, %.0f%%]", hb_report_fmt_pct(100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL])), slo, shi),
                   hb_report_fmt_time(a->t[HB_PH_CONVERT_IN]), hb_report_fmt_time(a->t[HB_PH_H2D]),
                   hb_report_fmt_time(a->t[HB_PH_COMPUTE]),
                   F("%s + %s", hb_report_fmt_time(a->t[HB_PH_D2H]), hb_report_fmt_time(a->t[HB_PH_CONVERT_OUT])));
    }

    /* plots: saving vs size per family (dtype f32, route pageable), series per device x op */
    json_t *ids = plot_ids_new();
    hb_status st = HB_OK;
    for (int fi = 0; fi < NFAM - 1 && n; fi++) {
        const char *fam = family_order[fi];
        int nser = 0;
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb body = { 0 };
        int curdev = -1;
        const char *curop = NULL;
        const hb_rrow *prevb = NULL;
        double smin = INFINITY, smax = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (mvd[i] || strcmp(b->family, fam) || strcmp(b->dtype, "f32") || strcmp(b->route, "pageable")) continue;
            if (!p) {
                p = hb_report_plot_begin(rp, F("q1_saving_%s", fam), "q1", F("Q1: end-to-end saving of f32 over convert, %s", fam), 900, 430, &dat);
                if (!p) { st = HB_EDEVICE; break; }
                hb_sb_printf(&body, "set title '%s'\n", hb_report_gp_str(p->title));
                gp_size_axis(&body);
                hb_sb_printf(&body, "set ylabel 'saving of f32 over convert (%%)'\nset yrange [-100<*:100]\n"
                             "set object 1 rect from graph 0, first %g to graph 1, first %g fc rgb hb_c_band fs solid 1.0 noborder behind\n"
                             "set object 2 rect from graph 0, first %g to graph 1, first %g fc rgb hb_c_band_ok fs solid 1.0 noborder behind\n"
                             "set label 1 'plan %g-%g%%, success %g-%g%%' at graph 0.01, first %g offset 0,0.6 font ',11' tc rgb '#555555'\n"
                             "plot ", hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct, hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct,
                             hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct, hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct, hb_report_plan.conv_hi_pct);
            }
            if (b->dev != curdev || strcmp(b->op, curop)) {
                if (nser) { fprintf(dat, "\n\n"); hb_sb_printf(&body, ", \\\n     "); }
                curdev = b->dev;
                curop = b->op;
                prevb = NULL;
                fprintf(dat, "# %s %s: size saving_pct lo hi (interval from the two CIs; a blank line ends a sweep)\n", row_dev(c, b)->id, b->op);
                int opi = 0;
                for (int k = 0; k < c->nops; k++) if (!strcmp(c->ops[k], b->op)) opi = k;
                int devi = b->dev;
                hb_sb_printf(&body, "'%s.dat' index %d using 1:2:3:4 with yerrorlines lt %d dt %d title '%s'", p->id, nser,
                             opi % 10 + 1, devi % 5 + 1, hb_report_gp_str(F("%s %s", row_dev(c, b)->id, b->op)));
                nser++;
            }
            double slo, shi;
            saving_ci(a, b, &slo, &shi);
            if (series_break(prevb, b)) fprintf(dat, "\n");
            prevb = b;
            if (b->size < smin) smin = b->size;
            if (b->size > smax) smax = b->size;
            fprintf(dat, "%.17g %.6g %.6g %.6g\n", b->size, 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]), slo, shi);
        }
        if (p) {
            hb_sb_printf(&body, "\n");
            fclose(dat);
            if (!(smax > smin)) {
                plot_drop(rp, p); /* one size: not a sweep (the tables above hold its savings) */
                hb_doc_note(rp, "Q1 %s: every matched case has one size (%s); no plot against size.", fam, hb_report_fmt_count(smin));
            } else {
                if (hb_report_plot_script(rp, p, body.s) != HB_OK) st = HB_EDEVICE;
                plot_id_add(ids, p);
            }
        }
        hb_sb_free(&body);
    }
    /* stacked phase bars per device: per op the smallest and largest size, convert and f32 bars,
     * each phase as % of the convert case's total */
    for (int d = 0; d < rp->ndevs && n; d++) {
        if (!has[d]) continue;
        FILE *dat = NULL;
        hb_plot *p = NULL;
        int nbars = 0;
        double barmax = 0;
        size_t i = 0;
        hb_sb body = { 0 };
        /* pairs are sorted by device, op, size: walk op by op */
        while (i < n) {
            const hb_rrow *b0 = &rp->rows[pr[i].b];
            size_t j = i, first = (size_t)-1, last = (size_t)-1;
            while (j < n && rp->rows[pr[j].b].dev == b0->dev && !strcmp(rp->rows[pr[j].b].op, b0->op)) {
                const hb_rrow *bj = &rp->rows[pr[j].b];
                if (!mvd[j] && !strcmp(bj->dtype, "f32") && !strcmp(bj->route, "pageable")) {
                    if (first == (size_t)-1) first = j;
                    last = j;
                }
                j++;
            }
            if (b0->dev == d && first != (size_t)-1) {
                if (!p) {
                    p = hb_report_plot_begin(rp, F("q1_phases_%s", rp->devs[d].id), "q1",
                                             F("Q1: phase breakdown on %s, convert (C) and f32 (F), %% of the convert total", rp->devs[d].id), 900, 460, &dat);
                    if (!p) { st = HB_EDEVICE; break; }
                    fprintf(dat, "# label convert_in h2d compute d2h convert_out other (percent of the convert case's total;\n"
                                 "# other = the case's total minus its phases: time outside the timed phases)\n");
                }
                size_t pick[2] = { first, last };
                for (int k = 0; k < (last == first ? 1 : 2); k++) {
                    const hb_rrow *a = &rp->rows[pr[pick[k]].a], *b = &rp->rows[pr[pick[k]].b];
                    double ta = a->t[HB_PH_TOTAL];
                    for (int m = 0; m < 2; m++) {
                        const hb_rrow *w = m ? b : a;
                        double v[6], sum = 0;
                        for (int ph = 0; ph < 5; ph++) { v[ph] = isfinite(w->t[ph]) ? 100.0 * w->t[ph] / ta : 0; sum += v[ph]; }
                        v[5] = 100.0 * w->t[HB_PH_TOTAL] / ta - sum;
                        if (v[5] < 0) v[5] = 0;
                        if (sum + v[5] > barmax) barmax = sum + v[5];
                        fprintf(dat, "\"%s %s %s\" %.5g %.5g %.5g %.5g %.5g %.5g\n", b->op, hb_report_fmt_count(b->size), m ? "F" : "C",
                                v[0], v[1], v[2], v[3], v[4], v[5]);
                        nbars++;
                    }
                    fprintf(dat, "\"\" 0 0 0 0 0 0\n");
                    nbars++;
                }
            }
            i = j;
        }
        if (p) {
            fclose(dat);
            int w = 140 + 14 * nbars;
            p->width = w < 900 ? 900 : (w > 2400 ? 2400 : w);
            hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram rowstacked\n"
                         "set boxwidth 0.85\nset xtics rotate by 60 right scale 0 font ',10'\nset ylabel '%% of the convert case total'\n"
                         "set yrange [0:*<150]\nset ytics 25\nset grid noxtics\nset key outside right top\n%s"
                         "plot '%s.dat' using 2:xtic(1) title 'convert_in' lc rgb hb_c_convert_in, \\\n"
                         "     '' using 3 title 'h2d' lc rgb hb_c_h2d, '' using 4 title 'compute' lc rgb hb_c_compute, \\\n"
                         "     '' using 5 title 'd2h' lc rgb hb_c_d2h, '' using 6 title 'convert_out' lc rgb hb_c_convert_out, \\\n"
                         "     '' using 7 title 'other' lc rgb hb_c_other\n",
                         hb_report_gp_str(p->title),
                         barmax > 150 ? "set label 1 'bars above 150% are cut (f32 slower than convert: noise or a real slowdown; see the table)' at graph 0.01, graph 1.03 font ',11' tc rgb '#555555'\n" : "",
                         p->id);
            if (hb_report_plot_script(rp, p, body.s) != HB_OK) st = HB_EDEVICE;
            plot_id_add(ids, p);
        }
        hb_sb_free(&body);
    }
    hb_doc_plots(rp, ids);
    hb_report_mc_doc(rp, &minv, q);

    /* the card: chain medians per device if any, else every pair; plus the class medians */
    json_t *cv = json_array();
    json_object_set_new(q, "verdicts", cv);
    const char *badge = NULL, *btone = "none";
    char badge_buf[200]; /* the first verdict, copied: F's rotating buffers are reused by the cells below */
    int mixed = 0;
    /* one finding per figure across the devices (report/across.h), the per-device lines in a table */
    hb_across a_dec, a_pre, a_all, a_mem, a_cmp;
    hb_across_init(&a_dec, HB_ACROSS_TOL_PCT);
    hb_across_init(&a_pre, HB_ACROSS_TOL_PCT);
    hb_across_init(&a_all, HB_ACROSS_TOL_PCT);
    hb_across_init(&a_mem, HB_ACROSS_TOL_PCT);
    hb_across_init(&a_cmp, HB_ACROSS_TOL_PCT);
    json_t *drows = json_array();
    int any_dec = 0, any_pre = 0;
    for (int d = 0; d < rp->ndevs; d++) {
        if (!card_device(c, d, has)) continue;
        /* the chain's decode (seq=1) and prefill layers apart: their savings differ by 4x or more
         * (H100 host cpu: 83% and 19%), so one median over both is whichever the pairs left out
         * happened to favour (the kept reference's card read 83% and, one run later, 51%) */
        vec all = { 0 }, ch = { 0 }, chd = { 0 }, chp = { 0 };
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (b->dev != d || mvd[i]) continue;
            double s = 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]);
            if (strcmp(b->family, "chain")) { vec_push(&all, s); continue; }
            vec_push(&ch, s);
            vec_push(chain_is_decode(b) ? &chd : &chp, s);
        }
        int use_chain = ch.n > 0;
        double md = chd.n ? vec_median(&chd) : DNAN, mp = chp.n ? vec_median(&chp) : DNAN, mall = vec_median(&all);
        any_dec |= chd.n > 0;
        any_pre |= chp.n > 0;
        /* the verdict goes on the layer that converts the larger share (the question is whether
         * conversion costs more than the plan's figure anywhere) */
        double m = !use_chain ? mall : !chd.n ? mp : !chp.n ? md : (md > mp ? md : mp);
        const char *tone, *v = verdict_q1(m, &tone);
        json_array_append_new(cv, json_pack("{s:s,s:s,s:o,s:o,s:o,s:s,s:s}", "device", rp->devs[d].id, "basis",
                                            use_chain ? "chain" : "all ops", "median_saving_pct", hb_json_num(m),
                                            "decode_saving_pct", hb_json_num(md), "prefill_saving_pct", hb_json_num(mp), "verdict", v,
                                            "tone", tone));
        if (!badge) { snprintf(badge_buf, sizeof badge_buf, "%s", v); badge = badge_buf; btone = tone; }
        else if (strcmp(badge, v)) mixed = 1;
        /* class medians */
        double mm = DNAN, mc = DNAN, csm = DNAN;
        for (size_t g = 0; g < bycls.n; g++) {
            if (strcmp(gattr(&bycls.g[g], "device"), rp->devs[d].id)) continue;
            /* the class medians of the by_class rows above (vec_median again: the vector is sorted, the
             * median the same; a median that is not finite counts 0, as its null in the summary read) */
            double med = vec_median(&bycls.g[g].v[0]);
            if (!isfinite(med)) med = 0;
            if (!strcmp(gattr(&bycls.g[g], "class"), "memory")) {
                mm = med;
                csm = vec_median(&bycls.g[g].v[1]);
                if (!isfinite(csm)) csm = 0;
            }
            if (!strcmp(gattr(&bycls.g[g], "class"), "compute")) mc = med;
        }
        hb_across_dev(&a_dec, rp, d, md, "no decode layer case");
        hb_across_dev(&a_pre, rp, d, mp, "no prefill layer case");
        hb_across_dev(&a_all, rp, d, mall, "no op case");
        hb_across_dev(&a_mem, rp, d, mm, "no memory-bound case");
        hb_across_dev(&a_cmp, rp, d, mc, "no compute-bound case");
        json_t *r = json_array();
        const char *cells[] = { rp->devs[d].id, use_chain ? "transformer layer" : "median over ops", hb_report_fmt_pct(m), tone_cell(tone, v),
                                hb_report_fmt_pct(md), hb_report_fmt_pct(mp), hb_report_fmt_pct(mm), hb_report_fmt_pct(csm), hb_report_fmt_pct(mc) };
        for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) json_array_append_new(r, json_string(cells[k]));
        json_array_append_new(drows, r);
        free(all.v);
        free(ch.v);
        free(chd.v);
        free(chp.v);
    }
    char text[2048], phrase[700];
    size_t tl = (size_t)snprintf(text, sizeof text, "What f32 saves over convert, end to end:");
    struct { hb_across *a; const char *what; int on; } parts[] = {
        { &a_dec, "transformer layer decode", any_dec }, { &a_pre, "layer prefill", any_pre }, { &a_all, "median over ops", !any_dec && !any_pre },
        { &a_mem, "memory-bound ops", 1 }, { &a_cmp, "compute-bound ops", 1 },
    };
    if (n) card_add(cards, 1, "Conversion cost", mixed ? "differs by backend" : badge, mixed ? "warn" : btone, "");
    for (size_t k = 0, np = 0; k < sizeof parts / sizeof parts[0]; k++) {
        if (!parts[k].on || !parts[k].a->n) continue;
        if (tl < sizeof text - 1)
            tl += (size_t)snprintf(text + tl, sizeof text - tl, "%s %s: %s", np++ ? ";" : "", parts[k].what,
                                   hb_across_text(parts[k].a, hb_report_fmt_pct, phrase, sizeof phrase));
        if (n) hb_across_card(cards, parts[k].what, parts[k].a);
    }
    if (tl < sizeof text - 1) tl += (size_t)snprintf(text + tl, sizeof text - tl, ".");
    if (nmoved && tl < sizeof text - 1)
        tl += (size_t)snprintf(text + tl, sizeof text - tl, " %zu case%s left out: compute moved between modes.", nmoved, nmoved == 1 ? "" : "s");
    if (n) {
        json_object_set_new(json_array_get(cards, json_array_size(cards) - 1), "text", json_string(text));
        json_t *crows = hb_across_card_table(cards, "per device", 9, "backend", "verdict on", "saving", "verdict", "layer decode", "layer prefill",
                                            "memory-bound ops", "their conversion share", "compute-bound ops");
        json_array_extend(crows, drows);
    }
    json_decref(drows);
    hb_across_free(&a_dec);
    hb_across_free(&a_pre);
    hb_across_free(&a_all);
    hb_across_free(&a_mem);
    hb_across_free(&a_cmp);
    json_object_set_new(q, "answered", json_boolean(n > 0));
    if (!n) {
        card_add(cards, 1, "Conversion cost", "unanswered", "none",
                 "No case has both a convert and an f32 result with status ok; a `hybench run` with modes convert and f32 (the default) would answer.");
        hb_doc_note(rp, "Unanswered: no matched convert/f32 pair with status ok.");
    }
    groups_free(&bycls);
    groups_free(&byfam);
    free(has);
    free(pr);
    free(mvd);
    hb_report_mc_free(&minv);
    return st;
}

