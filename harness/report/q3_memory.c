/* q3_memory.c - Q3: the memory each mode needs (host, staging, device, peak RSS) and what f32 saves (report/common.h). */
#include "report/common.h"
#include "report/across.h"

/* ---------------------------------------------------------------- Q3 memory ---- */

hb_status hb_report_q3(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    rpair *pr;
    size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert", "f32", NULL, NULL, &pr);
    if (!pr) return HB_ENOMEM;
    sort_pairs(c, pr, n);
    json_t *q = json_object(), *jp = json_array(), *jc = json_array(), *jch = json_array();
    json_object_set_new(rp->summary, "q3", q);
    json_object_set_new(q, "definition", json_string("saving_pct = 100 * (1 - mem(f32) / mem(convert)), mem = mem.host_bytes + mem.device_bytes (harness accounting of the case's allocations), status-ok cases matched as in q1"));
    json_object_set_new(q, "pairs", jp);
    json_object_set_new(q, "by_class", jc);
    json_object_set_new(q, "chain", jch);
    hb_doc_h(rp, 2, "q3", "Q3 Memory: peak memory of f32 against convert");
    hb_doc_p(rp, "Peak memory of a case = host bytes + device bytes the harness allocated for it (its own accounting, by mode). Saving = 1 - f32 / convert. The plan targeted a %g-%g%% reduction. The process peak RSS (getrusage) is a high-water mark over the whole run, so it is shown for the chain only, as context.",
             hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct);
    groups bycls = { 0 }, byop = { 0 };
    int *has = calloc((size_t)rp->ndevs + 1, sizeof *has);
    if (!has) { free(pr); return HB_ENOMEM; }
    char key[512];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        double ma = mem_of(a), mb = mem_of(b);
        if (!(ma > 0) || !isfinite(mb)) continue;
        double s = 100.0 * (1.0 - mb / ma);
        used++;
        has[b->dev] = 1;
        json_array_append_new(jp, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:s,s:s}", "device", row_dev(c, b)->id, "op", b->op,
            "shape", b->shape, "route", b->route, "dtype", b->dtype, "class", class_of(b), "name", b->name, "size", hb_json_num(b->size),
            "mem_convert_bytes", hb_json_num(ma), "mem_f32_bytes", hb_json_num(mb), "saving_pct", hb_json_num(s), "key_convert", rkey(a), "key_f32", rkey(b)));
        snprintf(key, sizeof key, "%d|%s", b->dev, class_of(b));
        grp *g = grp_get(&bycls, key, json_pack("{s:s,s:s}", "device", row_dev(c, b)->id, "class", class_of(b)));
        if (g) vec_push(&g->v[0], s);
        snprintf(key, sizeof key, "%d|%s", b->dev, b->op);
        g = grp_get(&byop, key, json_pack("{s:s,s:s,s:i}", "device", row_dev(c, b)->id, "op", b->op, "dev", b->dev));
        if (g) { vec_push(&g->v[0], s); vec_push(&g->v[1], ma); vec_push(&g->v[2], mb); }
    }
    if (used) {
        json_t *rows = hb_doc_table(rp, "Peak-memory saving per backend and op class (median; min-max in brackets)", 0, 4,
                                    "backend", "class", "median saving", "verdict");
        for (size_t i = 0; i < bycls.n; i++) {
            grp *g = &bycls.g[i];
            double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]), m = vec_median(&g->v[0]);
            const char *tone, *v = verdict_q3(m, &tone);
            json_array_append_new(jc, json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:s,s:s}", "device", gattr(g, "device"), "class", gattr(g, "class"),
                "n", (json_int_t)g->v[0].n, "median_saving_pct", hb_json_num(m), "min_saving_pct", hb_json_num(lo), "max_saving_pct", hb_json_num(hi), "verdict", v, "tone", tone));
            hb_doc_row(rows, 4, gattr(g, "device"), gattr(g, "class"),
                       F("%s (%s to %s)", hb_report_fmt_pct(m), hb_report_fmt_pct(lo), hb_report_fmt_pct(hi)), tone_cell(tone, v));
        }
        /* chain, with resident where present */
        int any = 0;
        for (size_t i = 0; i < n; i++) if (!strcmp(rp->rows[pr[i].b].family, "chain")) any = 1;
        if (any) {
            rows = hb_doc_table(rp, "Transformer block (chain): peak memory per mode", 0, 8, "backend", "name", "route", "convert", "f32", "resident", "saving f32", "peak RSS after convert / f32");
            for (size_t i = 0; i < n; i++) {
                const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
                if (strcmp(b->family, "chain")) continue;
                double ma = mem_of(a), mb = mem_of(b), mr = DNAN;
                for (size_t k = 0; k < rp->nrows; k++) {
                    const hb_rrow *r = &rp->rows[k];
                    if (r->ok && r->dev == b->dev && !strcmp(r->mode, "resident") && !strcmp(r->op, b->op) && !strcmp(r->shape, b->shape) &&
                        !strcmp(r->route, b->route) && !strcmp(r->dtype, b->dtype) && !strcmp(r->name, b->name)) { mr = mem_of(r); break; }
                }
                double s = ma > 0 ? 100.0 * (1.0 - mb / ma) : DNAN;
                const char *tone, *v = verdict_q3(s, &tone);
                json_array_append_new(jch, json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:s}", "device", row_dev(c, b)->id, "name", b->name, "route", b->route,
                    "mem_convert_bytes", hb_json_num(ma), "mem_f32_bytes", hb_json_num(mb), "mem_resident_bytes", hb_json_num(mr), "saving_pct", hb_json_num(s),
                    "rss_convert_bytes", hb_json_num(a->rss), "rss_f32_bytes", hb_json_num(b->rss), "verdict", v, "tone", tone));
                hb_doc_row(rows, 8, row_dev(c, b)->id, *b->name ? b->name : b->shape, b->route, hb_report_fmt_bytes(ma), hb_report_fmt_bytes(mb),
                           hb_report_fmt_bytes(mr), tone_cell(tone, F("%s, %s", hb_report_fmt_pct(s), v)),
                           F("%s / %s", hb_report_fmt_bytes(a->rss), hb_report_fmt_bytes(b->rss)));
            }
        }
        rows = hb_doc_table(rp, "Per backend and op (median over shapes; bytes at the largest shape)", 1, 5, "backend", "op", "median saving", "convert bytes", "f32 bytes");
        for (size_t i = 0; i < byop.n; i++) {
            grp *g = &byop.g[i];
            double mxa = vec_max(&g->v[1]), mxb = vec_max(&g->v[2]);
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "op"), hb_report_fmt_pct(vec_median(&g->v[0])), hb_report_fmt_bytes(mxa), hb_report_fmt_bytes(mxb));
        }
        /* plot: clustered bars, op x device */
        FILE *dat;
        int ndv = 0, devs[64];
        for (int d = 0; d < rp->ndevs && ndv < 64; d++) if (has[d]) devs[ndv++] = d;
        hb_plot *p = hb_report_plot_begin(rp, "q3_memory", "q3", "Q3: peak-memory saving of f32 over convert per op (median over shapes)", 900, 420, &dat);
        if (!p) { free(has); free(pr); return HB_EDEVICE; }
        fprintf(dat, "# op");
        for (int k = 0; k < ndv; k++) fprintf(dat, " %s", rp->devs[devs[k]].id);
        fprintf(dat, " (saving percent; NaN = not measured)\n");
        for (int o = 0; o < c->nops; o++) {
            char line[2048];
            int off = snprintf(line, sizeof line, "\"%s\"", c->ops[o]), anyv = 0;
            for (int k = 0; k < ndv; k++) {
                snprintf(key, sizeof key, "%d|%s", devs[k], c->ops[o]);
                double v = grp_median(&byop, key);
                if (isfinite(v)) anyv = 1;
                off += snprintf(line + off, sizeof line - (size_t)off, " %.5g", v);
            }
            if (anyv) fprintf(dat, "%s\n", line);
        }
        fclose(dat);
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
                     "set xtics rotate by 30 right scale 0\nset ylabel 'peak-memory saving (%%)'\nset yrange [0:100]\nset grid noxtics\n"
                     "set object 1 rect from graph 0, first %g to graph 1, first %g fc rgb hb_c_band_ok fs solid 1.0 noborder behind\n"
                     "set label 1 'plan target %g-%g%%' at graph 0.01, first %g offset 0,0.6 font ',11' tc rgb '#555555'\nplot ",
                     hb_report_gp_str(p->title), hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct, hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct, hb_report_plan.mem_hi_pct);
        for (int k = 0; k < ndv; k++)
            hb_sb_printf(&body, "%s%s using %d%s title '%s' lt %d", k ? ", " : "", k ? "''" : F("'%s.dat'", p->id), k + 2, k ? "" : ":xtic(1)",
                         hb_report_gp_str(rp->devs[devs[k]].id), devs[k] % 10 + 1);
        hb_sb_printf(&body, "\n");
        hb_status st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) { free(has); free(pr); return st; }
        json_t *ids = plot_ids_new();
        plot_id_add(ids, p);
        hb_doc_plots(rp, ids);
    }
    /* card: chain saving per device if present, else median of all */
    json_object_set_new(q, "answered", json_boolean(used > 0));
    json_t *cv = json_array();
    json_object_set_new(q, "verdicts", cv);
    if (!used) {
        hb_doc_note(rp, "Unanswered: no convert/f32 pair with mem.host_bytes/device_bytes; a `hybench run` with modes convert and f32 would answer.");
        card_add(cards, 3, "Memory", "unanswered", "none", "No convert/f32 pair with memory accounting in these results.");
    } else {
        const char *badge = NULL, *btone = "none";
        char badge_buf[200]; /* the first verdict, copied: F's rotating buffers are reused by the cells below */
        int mixed = 0, any_layer = 0, any_ops_only = 0;
        hb_across a_layer, a_ops;
        hb_across_init(&a_layer, HB_ACROSS_TOL_PCT);
        hb_across_init(&a_ops, HB_ACROSS_TOL_PCT);
        json_t *drows = json_array();
        for (int d = 0; d < rp->ndevs; d++) {
            if (!card_device(c, d, has)) continue;
            vec all = { 0 }, ch = { 0 };
            for (size_t i = 0; i < n; i++) {
                const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
                if (b->dev != d || !(mem_of(a) > 0)) continue;
                vec_push(strcmp(b->family, "chain") ? &all : &ch, 100.0 * (1.0 - mem_of(b) / mem_of(a)));
            }
            int use_chain = ch.n > 0;
            double mch = vec_median(&ch), mall = vec_median(&all), m = use_chain ? mch : mall;
            const char *tone, *v = verdict_q3(m, &tone);
            json_array_append_new(cv, json_pack("{s:s,s:s,s:o,s:s,s:s}", "device", rp->devs[d].id, "basis", use_chain ? "chain" : "all ops",
                                                "median_saving_pct", hb_json_num(m), "verdict", v, "tone", tone));
            if (!badge) { snprintf(badge_buf, sizeof badge_buf, "%s", v); badge = badge_buf; btone = tone; }
            else if (strcmp(badge, v)) mixed = 1;
            any_layer |= use_chain;
            any_ops_only |= !use_chain;
            hb_across_dev(&a_layer, rp, d, mch, "no layer case");
            hb_across_dev(&a_ops, rp, d, mall, "no op case");
            json_t *r = json_array();
            const char *cells[] = { rp->devs[d].id, use_chain ? "transformer layer" : "median over ops", hb_report_fmt_pct(m), tone_cell(tone, v),
                                    hb_report_fmt_pct(mch), hb_report_fmt_pct(mall) };
            for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) json_array_append_new(r, json_string(cells[k]));
            json_array_append_new(drows, r);
            free(all.v);
            free(ch.v);
        }
        card_add(cards, 3, "Memory", mixed ? "differs by backend" : badge, mixed ? "warn" : btone, "");
        char text[1500], phrase[700];
        size_t o = (size_t)snprintf(text, sizeof text, "How much less peak memory f32 needs than convert:");
        if (any_layer) {
            o += (size_t)snprintf(text + o, sizeof text - o, " transformer layer: %s", hb_across_text(&a_layer, hb_report_fmt_pct, phrase, sizeof phrase));
            hb_across_card(cards, "transformer layer", &a_layer);
        }
        if (any_ops_only && o < sizeof text - 1) {
            o += (size_t)snprintf(text + o, sizeof text - o, "%s median over ops: %s", any_layer ? ";" : "",
                                  hb_across_text(&a_ops, hb_report_fmt_pct, phrase, sizeof phrase));
            hb_across_card(cards, "median over ops", &a_ops);
        }
        if (o < sizeof text - 1) snprintf(text + o, sizeof text - o, ".");
        json_object_set_new(json_array_get(cards, json_array_size(cards) - 1), "text", json_string(text));
        json_t *rows = hb_across_card_table(cards, "per device", 6, "backend", "verdict on", "saving", "verdict", "transformer layer", "median over ops");
        json_array_extend(rows, drows);
        json_decref(drows);
        hb_across_free(&a_layer);
        hb_across_free(&a_ops);
    }
    groups_free(&bycls);
    groups_free(&byop);
    free(has);
    free(pr);
    return HB_OK;
}

